/* tfdev runtime benchmarks: each figure beside the same work done directly on the library
 * underneath (OpenBLAS, memcpy, plain C), measured in the same run. Medians throughout.
 *
 *   build/bin/tfdev_bench [--quick]
 */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "tfdev/tfdev.h"

char *openblas_get_corename(void);
int openblas_get_num_threads(void);
void openblas_set_num_threads(int n);

static bool quick;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void die(tfd_status *st, const char *what) {
  fprintf(stderr, "%s: %s: %s\n", what, tfd_code_name(tfd_status_code(st)), tfd_status_message(st));
  exit(1);
}

/* What a row must meet: the ratio (tfdev / baseline, as printed) at most or
 * at least a bound, tfdev's own figure at most a bound, or nothing. */
typedef enum { NONE, RATIO_AT_MOST, RATIO_AT_LEAST, VALUE_AT_MOST } target_kind;

static void row(const char *name, double ours, double base, target_kind kind, double bound) {
  double ratio = ours / base;
  char target[32] = "";
  bool met = true;
  switch (kind) {
    case RATIO_AT_MOST: snprintf(target, sizeof target, "ratio <= %.3g", bound); met = ratio <= bound; break;
    case RATIO_AT_LEAST: snprintf(target, sizeof target, "ratio >= %.3g", bound); met = ratio >= bound; break;
    case VALUE_AT_MOST: snprintf(target, sizeof target, "tfdev <= %.3g", bound); met = ours <= bound; break;
    case NONE: break;
  }
  printf("| %-44s | %12.3f | %12.3f | %6.3f | %-14s | %-4s |\n", name, ours, base, ratio, target,
         kind == NONE ? "" : met ? "yes" : "NO");
}

static void header(const char *title, const char *unit) {
  printf("\n%s (%s; ratio = tfdev / baseline)\n", title, unit);
  printf("| %-44s | %12s | %12s | %6s | %-14s | %-4s |\n", "benchmark", "tfdev", "baseline", "ratio", "target", "met");
  printf("|%s|%s|%s|%s|%s|%s|\n", "----------------------------------------------", "--------------",
         "--------------", "--------", "----------------", "------");
}

static tfd_tensor *random_tensor(const int64_t *dims, int nd, unsigned seed) {
  tfd_tensor *t = tfd_tensor_new(NULL, TFD_FLOAT32, dims, nd, NULL);
  float *p = tfd_tensor_data(t);
  for (int64_t i = 0; i < tfd_tensor_numel(t); i++) {
    seed = seed * 1103515245u + 12345u;
    p[i] = (float)((seed >> 8) & 0xffff) / 65536.0f - 0.5f;
  }
  return t;
}

/* ---- graph building helpers ---- */
static tfd_node_def *add(tfd_graph_def *g, const char *name, const char *op, const char *in0, const char *in1) {
  tfd_node_def *n = tfd_graph_def_add_node(g, name, op, NULL);
  if (in0) tfd_node_def_add_input(n, in0, NULL);
  if (in1) tfd_node_def_add_input(n, in1, NULL);
  return n;
}

static void placeholder(tfd_graph_def *g, const char *name) {
  tfd_attr_value dt = {.type = TFD_ATTR_TYPE, .dtype = TFD_FLOAT32};
  tfd_node_def_set_attr(add(g, name, "Placeholder", NULL, NULL), "dtype", &dt, NULL);
}

static void constant(tfd_graph_def *g, const char *name, tfd_tensor *t) {
  tfd_attr_value v = {.type = TFD_ATTR_TENSOR, .tensor = t};
  tfd_node_def_set_attr(add(g, name, "Const", NULL, NULL), "value", &v, NULL);
}

static tfd_session *session(int intra, int inter, tfd_graph_def *g) {
  tfd_status *st = tfd_status_new();
  tfd_session_options *o = tfd_session_options_new();
  tfd_session_options_set_intra_op_threads(o, intra);
  tfd_session_options_set_inter_op_threads(o, inter);
  tfd_session_options_set_use_global_threadpool(o, false);
  tfd_session_options_set_use_per_session_threads(o, true);
  tfd_session *s = tfd_session_new(o, NULL, NULL, st);
  if (!s || tfd_session_create(s, g, st) != TFD_OK) die(st, "session");
  tfd_session_options_free(o);
  tfd_status_free(st);
  return s;
}

/* Median seconds per call of a callable over `reps` timed runs (after `warm`). */
static double time_callable(tfd_session *s, int64_t h, tfd_tensor **feeds, int nfetch, int warm, int reps) {
  tfd_status *st = tfd_status_new();
  tfd_tensor *out[4];
  double *t = malloc((size_t)reps * sizeof *t);
  for (int i = 0; i < warm + reps; i++) {
    double t0 = now();
    if (tfd_session_run_callable(s, h, NULL, feeds, out, NULL, st) != TFD_OK) die(st, "run");
    if (i >= warm) t[i - warm] = now() - t0;
    for (int k = 0; k < nfetch; k++) tfd_tensor_unref(out[k]);
  }
  double m = median(t, reps);
  free(t);
  tfd_status_free(st);
  return m;
}

static int64_t callable(tfd_session *s, const char **feeds, int nf, const char *fetch) {
  tfd_status *st = tfd_status_new();
  int64_t h = tfd_session_make_callable(s, feeds, nf, &fetch, 1, NULL, 0, st);
  if (h < 0) die(st, "make_callable");
  tfd_status_free(st);
  return h;
}

/* ---- executor overhead ---- */
static tfd_graph_def *chain(int n) {
  tfd_graph_def *g = tfd_graph_def_new();
  int64_t one = 1;
  tfd_tensor *c = random_tensor(&one, 1, 1);
  constant(g, "n0", c);
  tfd_tensor_unref(c);
  char name[32], prev[32] = "n0";
  for (int i = 1; i <= n; i++) {
    snprintf(name, sizeof name, "n%d", i);
    add(g, name, "Identity", prev, NULL);
    strcpy(prev, name);
  }
  return g;
}

typedef struct fake_kernel {
  void (*fn)(struct fake_kernel *, tfd_tensor **, tfd_tensor **);
} fake_kernel;
static void fake_identity(fake_kernel *k, tfd_tensor **in, tfd_tensor **out) {
  (void)k;
  *out = tfd_tensor_ref(*in);
}

static void bench_executor(void) {
  header("Executor overhead: a chain of 1,000 Identity nodes, one thread", "microseconds");
  int reps = quick ? 50 : 300;
  tfd_graph_def *g1 = chain(1), *g1000 = chain(1000);
  tfd_session *s1 = session(1, 1, g1), *s1000 = session(1, 1, g1000);
  int64_t h1 = callable(s1, NULL, 0, "n1"), h1000 = callable(s1000, NULL, 0, "n1000");
  double t1 = time_callable(s1, h1, NULL, 1, 20, reps), t1000 = time_callable(s1000, h1000, NULL, 1, 20, reps);
  /* Baseline: the same dispatch done in plain C, an indirect call and a tensor reference per node. */
  int64_t one = 1;
  tfd_tensor *x = random_tensor(&one, 1, 2);
  fake_kernel k = {fake_identity};
  double *bt = malloc((size_t)reps * sizeof *bt);
  for (int r = 0; r < reps; r++) {
    double t0 = now();
    tfd_tensor *cur = tfd_tensor_ref(x);
    for (int i = 0; i < 1000; i++) {
      tfd_tensor *next;
      k.fn(&k, &cur, &next);
      tfd_tensor_unref(cur);
      cur = next;
    }
    tfd_tensor_unref(cur);
    bt[r] = now() - t0;
  }
  double base = median(bt, reps);
  double per_node = (t1000 - t1) / 999 * 1e6;
  row("per node (run of 1000 minus run of 1) / 999", per_node, base / 1000 * 1e6, VALUE_AT_MOST, 0.5);
  row("whole run of 1,000 nodes", t1000 * 1e6, base * 1e6, NONE, 0);
  row("fixed cost of a callable run (1 node)", t1 * 1e6, base / 1000 * 1e6, NONE, 0);
  free(bt);
  tfd_tensor_unref(x);
  tfd_session_free(s1);
  tfd_session_free(s1000);
  tfd_graph_def_free(g1);
  tfd_graph_def_free(g1000);
}

/* ---- MatMul ---- */
static void bench_matmul(int threads) {
  char title[128];
  snprintf(title, sizeof title, "MatMul float32 vs cblas_sgemm/sgemv, %d OpenBLAS thread%s", threads,
           threads == 1 ? "" : "s");
  header(title, "milliseconds per product");
  openblas_set_num_threads(threads);
  int sizes[] = {256, 512, 1024, 2048};
  for (int si = 0; si < 4; si++) {
    int n = sizes[si];
    if (quick && n > 1024) continue;
    int reps = n >= 2048 ? 3 : n >= 1024 ? 7 : 21;
    int64_t dims[2] = {n, n};
    tfd_tensor *a = random_tensor(dims, 2, 3), *b = random_tensor(dims, 2, 4);
    tfd_graph_def *g = tfd_graph_def_new();
    placeholder(g, "a");
    placeholder(g, "b");
    add(g, "mm", "MatMul", "a", "b");
    tfd_session *s = session(threads, 1, g);
    const char *feeds[] = {"a", "b"};
    int64_t h = callable(s, feeds, 2, "mm");
    tfd_tensor *in[2] = {a, b};
    double ours = time_callable(s, h, in, 1, 2, reps);
    float *c = calloc((size_t)n * (size_t)n, sizeof *c);
    double *t = malloc((size_t)reps * sizeof *t);
    for (int r = -2; r < reps; r++) {
      double t0 = now();
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, tfd_tensor_const_data(a), n,
                  tfd_tensor_const_data(b), n, 0.0f, c, n);
      if (r >= 0) t[r] = now() - t0;
    }
    double base = median(t, reps);
    char name[64];
    snprintf(name, sizeof name, "MatMul %dx%d @ %dx%d", n, n, n, n);
    row(name, ours * 1e3, base * 1e3, RATIO_AT_MOST, 1 / 0.95); /* at least 0.95x the speed */
    free(c);
    free(t);
    tfd_session_free(s);
    tfd_graph_def_free(g);
    tfd_tensor_unref(a);
    tfd_tensor_unref(b);
  }
  int vsizes[] = {1024, 2048};
  for (int si = 0; si < 2; si++) {
    int n = vsizes[si], reps = quick ? 51 : 301;
    int64_t xd[2] = {1, n}, wd[2] = {n, n};
    tfd_tensor *x = random_tensor(xd, 2, 5), *w = random_tensor(wd, 2, 6);
    tfd_graph_def *g = tfd_graph_def_new();
    placeholder(g, "x");
    placeholder(g, "w");
    add(g, "mm", "MatMul", "x", "w");
    tfd_session *s = session(threads, 1, g);
    const char *feeds[] = {"x", "w"};
    int64_t h = callable(s, feeds, 2, "mm");
    tfd_tensor *in[2] = {x, w};
    double ours = time_callable(s, h, in, 1, 5, reps);
    float *y = calloc((size_t)n, sizeof *y);
    double *t = malloc((size_t)reps * sizeof *t);
    for (int r = -5; r < reps; r++) {
      double t0 = now();
      cblas_sgemv(CblasRowMajor, CblasTrans, n, n, 1.0f, tfd_tensor_const_data(w), n, tfd_tensor_const_data(x), 1, 0.0f,
                  y, 1);
      if (r >= 0) t[r] = now() - t0;
    }
    double base = median(t, reps);
    char name[64];
    snprintf(name, sizeof name, "MatMul 1x%d @ %dx%d (vs sgemv)", n, n, n);
    row(name, ours * 1e3, base * 1e3, RATIO_AT_MOST, 1.1);
    free(y);
    free(t);
    tfd_session_free(s);
    tfd_graph_def_free(g);
    tfd_tensor_unref(x);
    tfd_tensor_unref(w);
  }
}

/* ---- MLP 784-512-512-10 ---- */
typedef struct mlp {
  tfd_tensor *w[3], *b[3];
} mlp;

static const int mlp_sizes[4] = {784, 512, 512, 10};

static mlp make_mlp(void) {
  mlp m;
  for (int l = 0; l < 3; l++) {
    int64_t wd[2] = {mlp_sizes[l], mlp_sizes[l + 1]}, bd[1] = {mlp_sizes[l + 1]};
    m.w[l] = random_tensor(wd, 2, 10 + (unsigned)l);
    m.b[l] = random_tensor(bd, 1, 20 + (unsigned)l);
  }
  return m;
}

static tfd_graph_def *mlp_graph(const mlp *m) {
  tfd_graph_def *g = tfd_graph_def_new();
  placeholder(g, "x");
  const char *in = "x";
  char names[3][5][16];
  for (int l = 0; l < 3; l++) {
    snprintf(names[l][0], 16, "w%d", l);
    snprintf(names[l][1], 16, "b%d", l);
    snprintf(names[l][2], 16, "mm%d", l);
    snprintf(names[l][3], 16, "z%d", l);
    snprintf(names[l][4], 16, "h%d", l);
    constant(g, names[l][0], m->w[l]);
    constant(g, names[l][1], m->b[l]);
    add(g, names[l][2], "MatMul", in, names[l][0]);
    add(g, names[l][3], "BiasAdd", names[l][2], names[l][1]);
    if (l < 2) {
      add(g, names[l][4], "Relu", names[l][3], NULL);
      in = names[l][4];
    }
  }
  add(g, "probs", "Softmax", "z2", NULL);
  return g;
}

/* The same network, written directly on OpenBLAS with preallocated buffers. */
static void mlp_direct(const mlp *m, const float *x, int batch, float *buf1, float *buf2, float *out) {
  const float *in = x;
  float *outs[3] = {buf1, buf2, out};
  for (int l = 0; l < 3; l++) {
    int k = mlp_sizes[l], n = mlp_sizes[l + 1];
    const float *w = tfd_tensor_const_data(m->w[l]), *b = tfd_tensor_const_data(m->b[l]);
    float *y = outs[l];
    if (batch == 1) cblas_sgemv(CblasRowMajor, CblasTrans, k, n, 1.0f, w, n, in, 1, 0.0f, y, 1);
    else cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, batch, n, k, 1.0f, in, k, w, n, 0.0f, y, n);
    for (int r = 0; r < batch; r++)
      for (int j = 0; j < n; j++) {
        float v = y[r * n + j] + b[j];
        y[r * n + j] = l < 2 && v < 0 ? 0 : v;
      }
    in = y;
  }
  for (int r = 0; r < batch; r++) {
    float *row_ = out + r * 10, mx = row_[0], sum = 0;
    for (int j = 1; j < 10; j++) mx = row_[j] > mx ? row_[j] : mx;
    for (int j = 0; j < 10; j++) sum += (row_[j] = expf(row_[j] - mx));
    for (int j = 0; j < 10; j++) row_[j] /= sum;
  }
}

static long minor_faults(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_minflt;
}

static void bench_mlp(void) {
  header("MLP 784-512-512-10 (ReLU, softmax), float32, one thread", "microseconds per batch");
  openblas_set_num_threads(1);
  mlp m = make_mlp();
  int batches[] = {1, 64};
  for (int bi = 0; bi < 2; bi++) {
    int batch = batches[bi], reps = quick ? 101 : 1001;
    int64_t xd[2] = {batch, 784};
    tfd_tensor *x = random_tensor(xd, 2, 30);
    tfd_graph_def *g = mlp_graph(&m);
    double t_first0 = now();
    tfd_session *s = session(1, 1, g);
    const char *feeds[] = {"x"};
    int64_t h = callable(s, feeds, 1, "probs");
    double first = time_callable(s, h, &x, 1, 0, 1);
    double setup_and_first = now() - t_first0;
    for (int i = 0; i < 50; i++) time_callable(s, h, &x, 1, 0, 1);
    long f0 = minor_faults();
    double ours = time_callable(s, h, &x, 1, 0, reps);
    long faults = minor_faults() - f0;
    float *b1 = calloc((size_t)batch * 512, 4), *b2 = calloc((size_t)batch * 512, 4), *o = calloc((size_t)batch * 10, 4);
    double *t = malloc((size_t)reps * sizeof *t);
    for (int r = -50; r < reps; r++) {
      double t0 = now();
      mlp_direct(&m, tfd_tensor_const_data(x), batch, b1, b2, o);
      if (r >= 0) t[r] = now() - t0;
    }
    double base = median(t, reps);
    /* The two agree: same numbers from both paths. */
    tfd_tensor *out;
    tfd_status *st = tfd_status_new();
    tfd_session_run_callable(s, h, NULL, &x, &out, NULL, st);
    double maxdiff = 0;
    for (int i = 0; i < batch * 10; i++) {
      double d = fabs(((const float *)tfd_tensor_const_data(out))[i] - o[i]);
      maxdiff = d > maxdiff ? d : maxdiff;
    }
    tfd_tensor_unref(out);
    tfd_status_free(st);
    char name[96];
    snprintf(name, sizeof name, "batch %d, steady state", batch);
    row(name, ours * 1e6, base * 1e6, RATIO_AT_MOST, batch == 1 ? 1.25 : 1.1);
    snprintf(name, sizeof name, "batch %d, first run (session + build + run)", batch);
    row(name, setup_and_first * 1e6, base * 1e6, NONE, 0);
    snprintf(name, sizeof name, "batch %d, first run alone", batch);
    row(name, first * 1e6, base * 1e6, NONE, 0);
    printf("|   batch %d: minor page faults over %d warm runs: %ld; max |tfdev - direct| = %.2g\n", batch, reps, faults,
           maxdiff);
    free(b1);
    free(b2);
    free(o);
    free(t);
    tfd_session_free(s);
    tfd_graph_def_free(g);
    tfd_tensor_unref(x);
  }
  for (int l = 0; l < 3; l++) {
    tfd_tensor_unref(m.w[l]);
    tfd_tensor_unref(m.b[l]);
  }
}

/* ---- elementwise Add vs memcpy ---- */
typedef struct copy_job {
  char *dst;
  const char *src;
} copy_job;

static void copy_range(int64_t b, int64_t e, void *arg) {
  copy_job *j = arg;
  memcpy(j->dst + b, j->src + b, (size_t)(e - b));
}

static void bench_add(void) {
  header("Add of 16M floats vs memcpy (GB/s of bytes read + written; ratio = bandwidth)", "GB/s");
  int64_t n = quick ? (1 << 22) : (1 << 24);
  int64_t dims[1] = {n};
  tfd_tensor *a = random_tensor(dims, 1, 40), *b = random_tensor(dims, 1, 41);
  size_t bytes = (size_t)n * 4;
  char *src = malloc(bytes), *dst = malloc(bytes);
  memset(src, 1, bytes);
  memset(dst, 2, bytes); /* touched: no first-touch faults in the baseline */
  for (int threads = 1; threads <= 2; threads++) {
    int reps = quick ? 5 : 15;
    tfd_graph_def *g = tfd_graph_def_new();
    placeholder(g, "a");
    placeholder(g, "b");
    add(g, "sum", "AddV2", "a", "b");
    tfd_session *s = session(threads, 1, g);
    const char *feeds[] = {"a", "b"};
    int64_t h = callable(s, feeds, 2, "sum");
    tfd_tensor *in[2] = {a, b};
    double ours = time_callable(s, h, in, 1, 3, reps);
    tfd_threadpool *pool = threads > 1 ? tfd_threadpool_new("bench", threads - 1, NULL) : NULL;
    copy_job j = {dst, src};
    double *t = malloc((size_t)reps * sizeof *t);
    for (int r = -3; r < reps; r++) {
      double t0 = now();
      tfd_threadpool_parallel_for(pool, (int64_t)bytes, 1, copy_range, &j);
      if (r >= 0) t[r] = now() - t0;
    }
    double base = median(t, reps);
    char name[64];
    snprintf(name, sizeof name, "AddV2 %lldM floats, %d thread%s", (long long)(n >> 20), threads, threads == 1 ? "" : "s");
    /* Add moves 3n floats (two reads, one write); the copy moves 2n. */
    row(name, 3.0 * (double)bytes / ours / 1e9, 2.0 * (double)bytes / base / 1e9, RATIO_AT_LEAST, 0.8);
    tfd_threadpool_free(pool);
    free(t);
    tfd_session_free(s);
    tfd_graph_def_free(g);
  }
  free(src);
  free(dst);
  tfd_tensor_unref(a);
  tfd_tensor_unref(b);
}

int main(int argc, char **argv) {
  quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
  const char *env = getenv("OPENBLAS_CORETYPE");
  printf("tfdev %s benchmarks%s\n", TFDEV_VERSION, quick ? " (quick)" : "");
  printf("OpenBLAS core: %s (OPENBLAS_CORETYPE=%s), OpenBLAS threads at start: %d, cores: %d\n", openblas_get_corename(),
         env ? env : "unset", openblas_get_num_threads(), tfd_env_num_cores());
  bench_executor();
  bench_matmul(1);
  if (tfd_env_num_cores() > 1) bench_matmul(tfd_env_num_cores());
  bench_mlp();
  bench_add();
  return 0;
}
