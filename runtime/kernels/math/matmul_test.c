/* MatMul through the C API: intra_op_threads bounds how many threads a product runs on (OpenBLAS
 * and oneDNN paths), and the optimiser's _FusedMatMul gives the unfused values. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/testing/harness.h"

/* ---- per-thread CPU time, from /proc/self/task/<tid>/schedstat (nanoseconds on a CPU) ---- */
#define MAX_TASKS 256

typedef struct cpu_times {
  int n;
  long tid[MAX_TASKS];
  unsigned long long ns[MAX_TASKS];
} cpu_times;

static void read_cpu_times(cpu_times *t) {
  t->n = 0;
  DIR *d = opendir("/proc/self/task");
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d)) && t->n < MAX_TASKS) {
    if (e->d_name[0] == '.') continue;
    char path[300];
    snprintf(path, sizeof path, "/proc/self/task/%s/schedstat", e->d_name);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    unsigned long long ns = 0;
    if (fscanf(f, "%llu", &ns) == 1) {
      t->tid[t->n] = strtol(e->d_name, NULL, 10);
      t->ns[t->n++] = ns;
    }
    fclose(f);
  }
  closedir(d);
}

/* Threads that ran at least a fifth of the busiest thread's time between a and b. */
static int busy_threads(const cpu_times *a, const cpu_times *b) {
  unsigned long long delta[MAX_TASKS], most = 0;
  for (int i = 0; i < b->n; i++) {
    delta[i] = b->ns[i];
    for (int j = 0; j < a->n; j++)
      if (a->tid[j] == b->tid[i]) delta[i] = b->ns[i] - a->ns[j];
    if (delta[i] > most) most = delta[i];
  }
  int busy = 0;
  for (int i = 0; i < b->n; i++) {
    busy += most > 0 && delta[i] * 5 >= most;
    if (getenv("TFDEV_TEST_VERBOSE")) {
      char path[64], comm[32] = "";
      snprintf(path, sizeof path, "/proc/self/task/%ld/comm", b->tid[i]);
      FILE *f = fopen(path, "r");
      if (f && fgets(comm, sizeof comm, f)) comm[strcspn(comm, "\n")] = 0;
      if (f) fclose(f);
      fprintf(stderr, "  thread %ld (%s): %.3f ms\n", b->tid[i], comm, (double)delta[i] / 1e6);
    }
  }
  return busy;
}

/* Waits (up to two seconds) until no thread runs: OpenBLAS's server threads spin for about
 * 0.1 s after they start or last worked, and that would count as a thread the product used. */
static void wait_until_quiet(void) {
  for (int i = 0; i < 40; i++) {
    cpu_times a, b;
    read_cpu_times(&a);
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL);
    read_cpu_times(&b);
    unsigned long long most = 0;
    for (int x = 0; x < b.n; x++)
      for (int y = 0; y < a.n; y++)
        if (a.tid[y] == b.tid[x] && b.ns[x] - a.ns[y] > most) most = b.ns[x] - a.ns[y];
    if (most < 1000 * 1000) return; /* under 1 ms of CPU in 50 ms */
  }
}

static tfd_tensor *filled(int64_t rows, int64_t cols, unsigned seed) {
  int64_t dims[2] = {rows, cols};
  tfd_tensor *t = NULL;
  tfd_tensor_new(NULL, TFD_FLOAT32, dims, 2, &t, NULL);
  float *p = tfd_tensor_data(t);
  for (int64_t i = 0; i < rows * cols; i++) {
    seed = seed * 1103515245u + 12345u;
    p[i] = (float)((seed >> 9) % 2001) / 1000.0f - 1.0f;
  }
  return t;
}

static tfd_node_def *node(tfd_graph_def *g, const char *name, const char *op, const char *in0, const char *in1) {
  tfd_node_def *n = tfd_graph_def_add_node(g, name, op, NULL);
  if (in0) tfd_node_def_add_input(n, in0, NULL);
  if (in1) tfd_node_def_add_input(n, in1, NULL);
  return n;
}

static void set_dtype(tfd_node_def *n) {
  tfd_attr_value v = {.type = TFD_ATTR_TYPE, .dtype = TFD_FLOAT32};
  tfd_node_def_set_attr(n, "dtype", &v, NULL);
}

static void set_value(tfd_node_def *n, tfd_tensor *t) {
  tfd_attr_value v = {.type = TFD_ATTR_TENSOR, .tensor = t};
  tfd_node_def_set_attr(n, "value", &v, NULL);
  tfd_tensor_unref(t);
}

/* x @ w, with w a Const (oneDNN's packed path when built in) or a placeholder (OpenBLAS). */
static tfd_graph_def *product_graph(int64_t n, bool const_weights) {
  tfd_graph_def *g = tfd_graph_def_new();
  set_dtype(node(g, "x", "Placeholder", NULL, NULL));
  if (const_weights) set_value(node(g, "w", "Const", NULL, NULL), filled(n, n, 3));
  else set_dtype(node(g, "w", "Placeholder", NULL, NULL));
  node(g, "y", "MatMul", "x", "w");
  return g;
}

static int threads_used(int intra, bool const_weights) {
  int64_t n = getenv("TFDEV_UNDER_VALGRIND") ? 192 : 512;
  int reps = getenv("TFDEV_UNDER_VALGRIND") ? 2 : 8;
  tfd_status *st = tfd_status_new();
  tfd_session_options *o = tfd_session_options_new();
  tfd_session_options_set_intra_op_threads(o, intra);
  tfd_session_options_set_inter_op_threads(o, 1);
  tfd_session_options_set_use_global_threadpool(o, false);
  tfd_session_options_set_use_per_session_threads(o, true);
  tfd_session *s = NULL;
  tfd_session_new(o, NULL, NULL, &s, st);
  tfd_graph_def *g = product_graph(n, const_weights);
  CHECK_INT(tfd_session_create(s, g, st), TFD_OK);
  tfd_tensor *in[2] = {filled(n, n, 1), filled(n, n, 2)};
  const char *feeds[] = {"x", "w"}, *fetch[] = {"y"};
  int nf = const_weights ? 1 : 2;
  tfd_tensor *out = NULL;
  CHECK_INT(tfd_session_run(s, NULL, feeds, in, nf, fetch, 1, NULL, 0, &out, NULL, st), TFD_OK); /* warm */
  tfd_tensor_unref(out);
  cpu_times before, after;
  wait_until_quiet();
  read_cpu_times(&before);
  for (int r = 0; r < reps; r++) {
    out = NULL;
    CHECK_INT(tfd_session_run(s, NULL, feeds, in, nf, fetch, 1, NULL, 0, &out, NULL, st), TFD_OK);
    tfd_tensor_unref(out);
  }
  read_cpu_times(&after);
  int busy = busy_threads(&before, &after); /* while the session's threads still exist */
  CHECK_STR(tfd_status_message(st), "");
  tfd_tensor_unref(in[0]);
  tfd_tensor_unref(in[1]);
  tfd_graph_def_free(g);
  tfd_session_close(s, NULL);
  tfd_session_free(s);
  tfd_session_options_free(o);
  tfd_status_free(st);
  return busy;
}

static void test_intra_op_threads_bound_matmul(void) {
  cpu_times probe;
  read_cpu_times(&probe);
  if (probe.n == 0) {
    printf("SKIP test_intra_op_threads_bound_matmul: /proc/self/task/*/schedstat is not readable here\n");
    return;
  }
  /* One intra-op thread: the product runs on one thread, whichever library computes it. */
  CHECK_INT(threads_used(1, false), 1);
  CHECK_INT(threads_used(1, true), 1);
  /* Two: the caller and a helper work at once. The helper is whichever of the pool's two threads
   * takes the task, so from run to run up to three threads may share the work. */
  int two = threads_used(2, false);
  CHECK(two >= 2 && two <= 3);
  two = threads_used(2, true);
  CHECK(two >= 2 && two <= 3);
}

/* y = relu(x @ w + b) with the optimiser on and off: same values, and the partition graphs
 * show _FusedMatMul (on) or the three nodes (off). */
static tfd_tensor *run_dense(bool optimize, int64_t rows, const char **last_op) {
  tfd_status *st = tfd_status_new();
  tfd_session_options *o = tfd_session_options_new();
  tfd_session_options_set_optimize_graph(o, optimize);
  CHECK(tfd_session_options_optimize_graph(o) == optimize);
  tfd_session *s = NULL;
  tfd_session_new(o, NULL, NULL, &s, st);
  tfd_graph_def *g = tfd_graph_def_new();
  set_dtype(node(g, "x", "Placeholder", NULL, NULL));
  set_value(node(g, "w", "Const", NULL, NULL), filled(64, 48, 5));
  int64_t bd[1] = {48};
  tfd_tensor *b = NULL;
  tfd_tensor_new(NULL, TFD_FLOAT32, bd, 1, &b, NULL);
  for (int i = 0; i < 48; i++) ((float *)tfd_tensor_data(b))[i] = (float)(i % 7) * 0.25f - 0.75f;
  set_value(node(g, "b", "Const", NULL, NULL), b);
  node(g, "mm", "MatMul", "x", "w");
  node(g, "ba", "BiasAdd", "mm", "b");
  node(g, "y", "Relu", "ba", NULL);
  CHECK_INT(tfd_session_create(s, g, st), TFD_OK);
  tfd_tensor *x = filled(rows, 64, 9), *y = NULL;
  const char *feeds[] = {"x"}, *fetch[] = {"y"};
  tfd_run_options ro = {0};
  ro.output_partition_graphs = true;
  tfd_run_metadata *meta = tfd_run_metadata_new();
  CHECK_INT(tfd_session_run(s, &ro, feeds, &x, 1, fetch, 1, NULL, 0, &y, meta, st), TFD_OK);
  CHECK_STR(tfd_status_message(st), "");
  CHECK_INT(tfd_run_metadata_num_partition_graphs(meta), 1);
  const tfd_node_def *n = tfd_graph_def_find(tfd_run_metadata_partition_graph(meta, 0), "y");
  static char op[32];
  snprintf(op, sizeof op, "%s", n ? tfd_node_def_op(n) : "");
  *last_op = op;
  tfd_run_metadata_free(meta);
  tfd_tensor_unref(x);
  tfd_graph_def_free(g);
  tfd_session_free(s);
  tfd_session_options_free(o);
  tfd_status_free(st);
  return y;
}

static void test_fused_matches_unfused(void) {
  for (int64_t rows = 1; rows <= 33; rows += 16) {
    const char *op;
    tfd_tensor *fused = run_dense(true, rows, &op);
    CHECK_STR(op, "_FusedMatMul");
    tfd_tensor *plain = run_dense(false, rows, &op);
    CHECK_STR(op, "Relu");
    CHECK(fused && plain);
    if (!fused || !plain) continue;
    CHECK_INT(tfd_tensor_numel(fused), rows * 48);
    const float *f = tfd_tensor_const_data(fused), *p = tfd_tensor_const_data(plain);
    int bad = 0, positive = 0;
    for (int64_t i = 0; i < rows * 48; i++) {
      float d = f[i] - p[i];
      bad += d > 1e-5f * (1 + p[i]) || -d > 1e-5f * (1 + p[i]);
      positive += p[i] > 0;
    }
    CHECK_INT(bad, 0);
    CHECK(positive > 0 && positive < rows * 48); /* the activation did something */
    tfd_tensor_unref(fused);
    tfd_tensor_unref(plain);
  }
}

static const tfd_test tests[] = {
    {"intra_op_threads_bound_matmul", test_intra_op_threads_bound_matmul},
    {"fused_matches_unfused", test_fused_matches_unfused},
};

TFD_TEST_MAIN(tests)
