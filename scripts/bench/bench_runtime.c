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

/* ---- interleaved comparison ----
 * tfdev and the baseline alternate rep by rep (which goes first alternates
 * too), so drift in a shared, noisy machine lands on both alike. */
typedef void (*work_fn)(void *ctx);

typedef struct run_ctx {
  tfd_session *s;
  int64_t handle;
  tfd_tensor **feeds;
  tfd_status *st;
} run_ctx;

static void run_once(void *p) {
  run_ctx *c = p;
  tfd_tensor *out;
  if (tfd_session_run_callable(c->s, c->handle, NULL, c->feeds, &out, NULL, c->st) != TFD_OK) die(c->st, "run");
  tfd_tensor_unref(out);
}

static void compare(work_fn ours, void *oc, work_fn base, void *bc, int warm, int reps, double *t_ours,
                    double *t_base) {
  for (int i = 0; i < warm; i++) {
    ours(oc);
    base(bc);
  }
  double *to = malloc((size_t)reps * sizeof *to), *tb = malloc((size_t)reps * sizeof *tb);
  for (int r = 0; r < reps; r++) {
    for (int k = 0; k < 2; k++) {
      bool do_ours = (r + k) % 2 == 0;
      double t0 = now();
      if (do_ours) ours(oc);
      else base(bc);
      (do_ours ? to : tb)[r] = now() - t0;
    }
  }
  *t_ours = median(to, reps);
  *t_base = median(tb, reps);
  free(to);
  free(tb);
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

/* Baseline for a chain: the dispatch done in plain C, an indirect call and a tensor reference per node. */
typedef struct fake_kernel {
  void (*fn)(struct fake_kernel *, tfd_tensor **, tfd_tensor **);
} fake_kernel;

static void fake_identity(fake_kernel *k, tfd_tensor **in, tfd_tensor **out) {
  (void)k;
  *out = tfd_tensor_ref(*in);
}

typedef struct chain_ctx {
  fake_kernel k;
  tfd_tensor *x;
  int n;
} chain_ctx;

static void chain_direct(void *p) {
  chain_ctx *c = p;
  tfd_tensor *cur = tfd_tensor_ref(c->x);
  for (int i = 0; i < c->n; i++) {
    tfd_tensor *next;
    c->k.fn(&c->k, &cur, &next);
    tfd_tensor_unref(cur);
    cur = next;
  }
  tfd_tensor_unref(cur);
}

static void bench_executor(void) {
  header("Executor overhead: a chain of 1,000 Identity nodes, one thread", "microseconds");
  int reps = quick ? 51 : 301;
  tfd_graph_def *g1 = chain(1), *g1000 = chain(1000);
  tfd_session *s1 = session(1, 1, g1), *s1000 = session(1, 1, g1000);
  tfd_status *st = tfd_status_new();
  run_ctx r1 = {s1, callable(s1, NULL, 0, "n1"), NULL, st}, r1000 = {s1000, callable(s1000, NULL, 0, "n1000"), NULL, st};
  int64_t one = 1;
  chain_ctx c1 = {{fake_identity}, random_tensor(&one, 1, 2), 1}, c1000 = {{fake_identity}, c1.x, 1000};
  double t1, b1, t1000, b1000;
  compare(run_once, &r1, chain_direct, &c1, 20, reps, &t1, &b1);
  compare(run_once, &r1000, chain_direct, &c1000, 20, reps, &t1000, &b1000);
  row("per node (run of 1000 minus run of 1) / 999", (t1000 - t1) / 999 * 1e6, (b1000 - b1) / 999 * 1e6,
      VALUE_AT_MOST, 0.5);
  row("whole run of 1,000 nodes", t1000 * 1e6, b1000 * 1e6, NONE, 0);
  row("fixed cost of a callable run (1 node)", t1 * 1e6, b1 * 1e6, NONE, 0);
  tfd_tensor_unref(c1.x);
  tfd_status_free(st);
  tfd_session_free(s1);
  tfd_session_free(s1000);
  tfd_graph_def_free(g1);
  tfd_graph_def_free(g1000);
}

/* ---- MatMul ---- */
typedef struct gemm_ctx {
  int m, n, k;
  const float *a, *b;
  float *c;
} gemm_ctx;

static void sgemm_direct(void *p) {
  gemm_ctx *g = p;
  if (g->m == 1)
    cblas_sgemv(CblasRowMajor, CblasTrans, g->k, g->n, 1.0f, g->b, g->n, g->a, 1, 0.0f, g->c, 1);
  else
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, g->m, g->n, g->k, 1.0f, g->a, g->k, g->b, g->n, 0.0f, g->c,
                g->n);
}

static void bench_one_matmul(int m, int n, int threads, int reps) {
  int64_t ad[2] = {m, n}, bd[2] = {n, n};
  tfd_tensor *a = random_tensor(ad, 2, 3), *b = random_tensor(bd, 2, 4);
  tfd_graph_def *g = tfd_graph_def_new();
  placeholder(g, "a");
  placeholder(g, "b");
  add(g, "mm", "MatMul", "a", "b");
  tfd_session *s = session(threads, 1, g);
  const char *feeds[] = {"a", "b"};
  tfd_tensor *in[2] = {a, b};
  tfd_status *st = tfd_status_new();
  run_ctx rc = {s, callable(s, feeds, 2, "mm"), in, st};
  gemm_ctx gc = {m, n, n, tfd_tensor_const_data(a), tfd_tensor_const_data(b), calloc((size_t)m * (size_t)n, 4)};
  double ours, base;
  compare(run_once, &rc, sgemm_direct, &gc, 2, reps, &ours, &base);
  char name[64];
  if (m == 1) snprintf(name, sizeof name, "MatMul 1x%d @ %dx%d (vs sgemv)", n, n, n);
  else snprintf(name, sizeof name, "MatMul %dx%d @ %dx%d", m, n, n, n);
  if (m == 1) row(name, ours * 1e3, base * 1e3, RATIO_AT_MOST, 1.1);
  else row(name, ours * 1e3, base * 1e3, RATIO_AT_MOST, 1 / 0.95); /* at least 0.95x the speed */
  free(gc.c);
  tfd_status_free(st);
  tfd_session_free(s);
  tfd_graph_def_free(g);
  tfd_tensor_unref(a);
  tfd_tensor_unref(b);
}

static void bench_matmul(int threads) {
  char title[128];
  snprintf(title, sizeof title, "MatMul float32 vs cblas_sgemm/sgemv, %d OpenBLAS thread%s", threads,
           threads == 1 ? "" : "s");
  header(title, "milliseconds per product");
  openblas_set_num_threads(threads);
  int sizes[] = {256, 512, 1024, 2048};
  for (int si = 0; si < 4; si++) {
    if (quick && sizes[si] > 1024) continue;
    bench_one_matmul(sizes[si], sizes[si], threads, sizes[si] >= 2048 ? 5 : sizes[si] >= 1024 ? 9 : 31);
  }
  bench_one_matmul(1, 1024, threads, quick ? 51 : 301);
  bench_one_matmul(1, 2048, threads, quick ? 51 : 301);
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
typedef struct mlp_ctx {
  const mlp *m;
  const float *x;
  int batch;
  float *buf1, *buf2, *out;
} mlp_ctx;

static void mlp_direct(void *p) {
  mlp_ctx *c = p;
  const float *in = c->x;
  float *outs[3] = {c->buf1, c->buf2, c->out};
  for (int l = 0; l < 3; l++) {
    int k = mlp_sizes[l], n = mlp_sizes[l + 1];
    const float *w = tfd_tensor_const_data(c->m->w[l]), *b = tfd_tensor_const_data(c->m->b[l]);
    float *y = outs[l];
    if (c->batch == 1) cblas_sgemv(CblasRowMajor, CblasTrans, k, n, 1.0f, w, n, in, 1, 0.0f, y, 1);
    else cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, c->batch, n, k, 1.0f, in, k, w, n, 0.0f, y, n);
    for (int r = 0; r < c->batch; r++)
      for (int j = 0; j < n; j++) {
        float v = y[r * n + j] + b[j];
        y[r * n + j] = l < 2 && v < 0 ? 0 : v;
      }
    in = y;
  }
  for (int r = 0; r < c->batch; r++) {
    float *row_ = c->out + r * 10, mx = row_[0], sum = 0;
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
    mlp_ctx mc = {&m, tfd_tensor_const_data(x), batch, calloc((size_t)batch * 512, 4), calloc((size_t)batch * 512, 4),
                  calloc((size_t)batch * 10, 4)};
    tfd_graph_def *g = mlp_graph(&m);
    tfd_status *st = tfd_status_new();
    double t0 = now();
    tfd_session *s = session(1, 1, g);
    const char *feeds[] = {"x"};
    run_ctx rc = {s, callable(s, feeds, 1, "probs"), &x, st};
    double t1 = now();
    run_once(&rc);
    double t2 = now();
    double ours, base;
    compare(run_once, &rc, mlp_direct, &mc, 50, reps, &ours, &base);
    /* Page faults over warm runs: buffers must come from the allocator's cache. */
    long f0 = minor_faults();
    for (int i = 0; i < 1000; i++) run_once(&rc);
    long faults = minor_faults() - f0;
    /* The two agree: same numbers from both paths. */
    tfd_tensor *out;
    tfd_session_run_callable(s, rc.handle, NULL, &x, &out, NULL, st);
    mlp_direct(&mc);
    double maxdiff = 0;
    for (int i = 0; i < batch * 10; i++) {
      double d = fabs(((const float *)tfd_tensor_const_data(out))[i] - mc.out[i]);
      maxdiff = d > maxdiff ? d : maxdiff;
    }
    tfd_tensor_unref(out);
    char name[96];
    snprintf(name, sizeof name, "batch %d, steady state", batch);
    row(name, ours * 1e6, base * 1e6, RATIO_AT_MOST, batch == 1 ? 1.25 : 1.1);
    snprintf(name, sizeof name, "batch %d, first run (session + build + run)", batch);
    row(name, (t2 - t0) * 1e6, base * 1e6, NONE, 0);
    snprintf(name, sizeof name, "batch %d, first run alone (builds executors)", batch);
    row(name, (t2 - t1) * 1e6, base * 1e6, NONE, 0);
    printf("|   batch %d: minor page faults over 1000 warm runs: %ld; max |tfdev - direct| = %.2g\n", batch, faults,
           maxdiff);
    free(mc.buf1);
    free(mc.buf2);
    free(mc.out);
    tfd_status_free(st);
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
  size_t bytes;
  tfd_threadpool *pool;
} copy_job;

static void copy_range(int64_t b, int64_t e, void *arg) {
  copy_job *j = arg;
  memcpy(j->dst + b, j->src + b, (size_t)(e - b));
}

static void copy_all(void *p) {
  copy_job *j = p;
  tfd_threadpool_parallel_for(j->pool, (int64_t)j->bytes, 1, copy_range, j);
}

static void bench_add(void) {
  header("Add of 16M floats vs memcpy into a touched buffer (GB/s read + written; ratio of bandwidths)", "GB/s");
  int64_t n = quick ? (1 << 22) : (1 << 24);
  int64_t dims[1] = {n};
  tfd_tensor *a = random_tensor(dims, 1, 40), *b = random_tensor(dims, 1, 41);
  size_t bytes = (size_t)n * 4;
  char *src = malloc(bytes), *dst = malloc(bytes);
  memset(src, 1, bytes);
  memset(dst, 2, bytes);
  for (int threads = 1; threads <= 2; threads++) {
    int reps = quick ? 7 : 21;
    tfd_graph_def *g = tfd_graph_def_new();
    placeholder(g, "a");
    placeholder(g, "b");
    add(g, "sum", "AddV2", "a", "b");
    tfd_session *s = session(threads, 1, g);
    const char *feeds[] = {"a", "b"};
    tfd_tensor *in[2] = {a, b};
    tfd_status *st = tfd_status_new();
    run_ctx rc = {s, callable(s, feeds, 2, "sum"), in, st};
    copy_job cj = {dst, src, bytes, tfd_threadpool_new("bench", threads, NULL)};
    double ours, base;
    compare(run_once, &rc, copy_all, &cj, 3, reps, &ours, &base);
    char name[64];
    snprintf(name, sizeof name, "AddV2 %lldM floats, %d thread%s", (long long)(n >> 20), threads, threads == 1 ? "" : "s");
    /* Add moves 3n floats (two reads, one write); the copy moves 2n. */
    row(name, 3.0 * (double)bytes / ours / 1e9, 2.0 * (double)bytes / base / 1e9, RATIO_AT_LEAST, 0.8);
    tfd_threadpool_free(cj.pool);
    tfd_status_free(st);
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
