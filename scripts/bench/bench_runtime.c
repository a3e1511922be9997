/* tfdev runtime benchmarks: each figure beside a floor (the same work in hand-written C on the
 * library underneath: OpenBLAS, STREAM-style loops at -O3, plain C dispatch) measured in the same
 * run, interleaved rep by rep, and, for the MLP, beside peers (ONNX Runtime, PyTorch eager and
 * jit) measured by their own processes with the same warm-up and median-of-reps method and
 * collected by scripts/bench/run. Medians throughout.
 *
 *   build/bin/tfdev_bench [--quick] [--mlp-configs "B:T:WARM:REPS ..."] [--peers DIR]
 *
 * --peers DIR reads DIR/peers.txt, lines of
 *   peer <impl> mlp b<B> t<T> <median microseconds> [<cores: CPU time / wall time>]
 *   skip <impl> <reason>        info <impl> <text>
 * and the peers' outputs DIR/<impl>_b<B>.f32, which are checked against tfdev's output. */
#include <cblas.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "floor.h"
#include "timing.h"
#include "tfdev/tfdev.h"

char *openblas_get_corename(void);
int openblas_get_num_threads(void);
void openblas_set_num_threads(int n);

static bool quick;
static char cpu_model[128] = "unknown";
static int blas_threads_at_start;
static bool checks_failed;

static void die(tfd_status *st, const char *what) {
  fprintf(stderr, "%s: %s: %s\n", what, tfd_code_name(tfd_status_code(st)), tfd_status_message(st));
  exit(1);
}

/* "model name" from /proc/cpuinfo, with the family and model numbers (a VM's name can be generic). */
static void read_cpu_model(void) {
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return;
  char line[256], name[128] = "", family[16] = "", model[16] = "";
  while (fgets(line, sizeof line, f) && !(name[0] && family[0] && model[0])) {
    char *v = strchr(line, ':');
    if (!v) continue;
    v++;
    while (*v == ' ' || *v == '\t') v++;
    v[strcspn(v, "\n")] = 0;
    if (strncmp(line, "model name", 10) == 0) snprintf(name, sizeof name, "%s", v);
    else if (strncmp(line, "cpu family", 10) == 0) snprintf(family, sizeof family, "%s", v);
    else if (strncmp(line, "model\t", 6) == 0) snprintf(model, sizeof model, "%s", v);
  }
  fclose(f);
  /* Truncation is fine here (a long model name loses its tail); the check says so to the compiler. */
  if (name[0] && snprintf(cpu_model, sizeof cpu_model, "%s (family %s model %s)", name, family, model) < 0)
    cpu_model[0] = 0;
}

/* Every table opens with its title and the machine it ran on. */
static void table_title(const char *title, const char *threads) {
  const char *env = getenv("OPENBLAS_CORETYPE");
  printf("\n%s\n", title);
  printf("  CPU: %s, %d cores | OpenBLAS core: %s | OPENBLAS_CORETYPE=%s\n  threads: %s\n", cpu_model,
         tfd_env_num_cores(), openblas_get_corename(), env ? env : "(unset)", threads);
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
  printf("| %-50s | %12.3f | %12.3f | %6.3f | %-14s | %-4s |\n", name, ours, base, ratio, target,
         kind == NONE ? "" : met ? "yes" : "NO");
}

static void header(const char *unit, const char *base) {
  printf("  (%s; ratio = tfdev / %s)\n", unit, base);
  printf("| %-50s | %12s | %12s | %6s | %-14s | %-4s |\n", "benchmark", "tfdev", base, "ratio", "target", "met");
  printf("|%s|%s|%s|%s|%s|%s|\n", "----------------------------------------------------", "--------------",
         "--------------", "--------", "----------------", "------");
}

static tfd_tensor *random_tensor(const int64_t *dims, int nd, unsigned seed) {
  tfd_tensor *t = NULL;
  tfd_tensor_new(NULL, TFD_FLOAT32, dims, nd, &t, NULL);
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

static void placeholder_of(tfd_graph_def *g, const char *name, tfd_dtype dtype) {
  tfd_attr_value dt = {.type = TFD_ATTR_TYPE, .dtype = dtype};
  tfd_node_def_set_attr(add(g, name, "Placeholder", NULL, NULL), "dtype", &dt, NULL);
}
static void placeholder(tfd_graph_def *g, const char *name) { placeholder_of(g, name, TFD_FLOAT32); }

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
  tfd_session *s = NULL;
  tfd_session_new(o, NULL, NULL, &s, st);
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

static void settle(void) { nanosleep(&(struct timespec){0, 200 * 1000 * 1000}, NULL); }

/* Multi-threaded rows cannot alternate rep by rep: after a call, OpenBLAS's threads spin for about
 * 2^28 cycles and OpenMP's (oneDNN's) for a while too, so on a 2-core machine the next call of the
 * other side would share its cores with a spinning thread. Those rows alternate in blocks of
 * reps / 4 instead, with a pause before each block (as a process that uses only one of them has). */
static void compare_blocks(work_fn ours, void *oc, work_fn base, void *bc, int warm, int reps, int blocks,
                           double *t_ours, double *t_base) {
  double *to = malloc((size_t)reps * sizeof *to), *tb = malloc((size_t)reps * sizeof *tb);
  int per = (reps + blocks - 1) / blocks, done_o = 0, done_b = 0;
  for (int b = 0; done_o < reps || done_b < reps; b++) {
    bool do_ours = b % 2 == 0;
    work_fn fn = do_ours ? ours : base;
    void *ctx = do_ours ? oc : bc;
    int *done = do_ours ? &done_o : &done_b;
    if (*done >= reps) continue;
    if (blocks > 1) settle();
    for (int i = 0; i < (blocks > 1 ? warm / 2 + 1 : 0); i++) fn(ctx);
    for (int i = 0; i < per && *done < reps; i++) {
      double t0 = now();
      fn(ctx);
      (do_ours ? to : tb)[(*done)++] = now() - t0;
    }
  }
  *t_ours = median(to, reps);
  *t_base = median(tb, reps);
  free(to);
  free(tb);
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

/* Cores a piece of work keeps busy: process CPU time over wall time across n back-to-back calls.
 * It first waits 0.2 s so that threads still spinning after earlier work (OpenBLAS's spin for about
 * 2^28 cycles before they sleep) have gone to sleep and are not counted against this work. */
static double cores_used(work_fn fn, void *ctx, int n) {
  nanosleep(&(struct timespec){0, 200 * 1000 * 1000}, NULL);
  double c0 = cpu_now(), w0 = now();
  for (int i = 0; i < n; i++) fn(ctx);
  return (cpu_now() - c0) / (now() - w0);
}

static int64_t callable(tfd_session *s, const char **feeds, int nf, const char *fetch) {
  tfd_status *st = tfd_status_new();
  int64_t h = tfd_session_make_callable(s, feeds, nf, &fetch, 1, NULL, 0, st);
  if (h < 0) die(st, "make_callable");
  tfd_status_free(st);
  return h;
}

/* ---- executor overhead ---- */
/* n0 = Const (one float); n_i = Identity(n_{i-1}) or AddV2(n_{i-1}, n0). */
/* n0 is fed: from a Const, the optimiser would fold the whole chain into one constant. */
static tfd_graph_def *chain(int n, const char *op) {
  tfd_graph_def *g = tfd_graph_def_new();
  placeholder(g, "n0");
  bool binary = strcmp(op, "AddV2") == 0;
  char name[32], prev[32] = "n0";
  for (int i = 1; i <= n; i++) {
    snprintf(name, sizeof name, "n%d", i);
    add(g, name, op, prev, binary ? "n0" : NULL);
    strcpy(prev, name);
  }
  return g;
}

/* Baseline for a chain: the dispatch done in plain C, an indirect call per node and a tensor
 * reference (Identity) or a new one-float tensor (AddV2) per node. */
typedef struct fake_kernel {
  void (*fn)(struct fake_kernel *, tfd_tensor **, tfd_tensor **);
  tfd_tensor *c;
} fake_kernel;

static void fake_identity(fake_kernel *k, tfd_tensor **in, tfd_tensor **out) {
  (void)k;
  *out = tfd_tensor_ref(*in);
}

static void fake_add(fake_kernel *k, tfd_tensor **in, tfd_tensor **out) {
  int64_t one = 1;
  tfd_tensor_new(NULL, TFD_FLOAT32, &one, 1, out, NULL);
  *(float *)tfd_tensor_data(*out) = *(const float *)tfd_tensor_const_data(*in) + *(const float *)tfd_tensor_const_data(k->c);
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

static void bench_chain(const char *op, double per_node_bound) {
  int reps = quick ? 51 : 301;
  tfd_graph_def *g1 = chain(1, op), *g1000 = chain(1000, op);
  tfd_session *s1 = session(1, 1, g1), *s1000 = session(1, 1, g1000);
  tfd_status *st = tfd_status_new();
  static const char *feeds[] = {"n0"};
  int64_t one = 1;
  tfd_tensor *x = random_tensor(&one, 1, 2);
  tfd_tensor *in[1] = {x};
  run_ctx r1 = {s1, callable(s1, feeds, 1, "n1"), in, st}, r1000 = {s1000, callable(s1000, feeds, 1, "n1000"), in, st};
  void (*fn)(fake_kernel *, tfd_tensor **, tfd_tensor **) = strcmp(op, "AddV2") == 0 ? fake_add : fake_identity;
  chain_ctx c1 = {{fn, x}, x, 1}, c1000 = {{fn, x}, x, 1000};
  double t1, b1, t1000, b1000;
  compare(run_once, &r1, chain_direct, &c1, 20, reps, &t1, &b1);
  compare(run_once, &r1000, chain_direct, &c1000, 20, reps, &t1000, &b1000);
  char name[96];
  snprintf(name, sizeof name, "%s chain: per node, (run 1000 - run 1) / 999", op);
  row(name, (t1000 - t1) / 999 * 1e6, (b1000 - b1) / 999 * 1e6, VALUE_AT_MOST, per_node_bound);
  snprintf(name, sizeof name, "%s chain: whole run of 1,000 nodes", op);
  row(name, t1000 * 1e6, b1000 * 1e6, NONE, 0);
  snprintf(name, sizeof name, "%s chain: fixed cost of a run (1 node)", op);
  row(name, t1 * 1e6, b1 * 1e6, NONE, 0);
  tfd_tensor_unref(x);
  tfd_status_free(st);
  tfd_session_free(s1);
  tfd_session_free(s1000);
  tfd_graph_def_free(g1);
  tfd_graph_def_free(g1000);
}

static void bench_executor(void) {
  table_title("Executor overhead: chains of 1,000 one-float nodes (Identity; AddV2 of the previous node and n0)",
              "tfdev session intra_op_threads=1 inter_op_threads=1");
  header("microseconds", "C dispatch");
  bench_chain("Identity", 0.03);
  bench_chain("AddV2", 0.08);
}

/* ---- MatMul ---- */
typedef struct gemm_ctx {
  int m, n, k;
  const float *a, *b;
  float *c;
  int threads; /* OpenBLAS threads for the baseline */
} gemm_ctx;

/* OpenBLAS's thread count is process-wide and tfdev sets it to 1 for its own products (it
 * splits them over its pool), so the baselines set theirs before every call. */
static void sgemm_direct(void *p) {
  gemm_ctx *g = p;
  openblas_set_num_threads(g->threads);
  if (g->m == 1)
    cblas_sgemv(CblasRowMajor, CblasTrans, g->k, g->n, 1.0f, g->b, g->n, g->a, 1, 0.0f, g->c, 1);
  else
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, g->m, g->n, g->k, 1.0f, g->a, g->k, g->b, g->n, 0.0f, g->c,
                g->n);
}

typedef struct matmul_case {
  tfd_tensor *a, *b;
  tfd_graph_def *g;
  tfd_session *s;
  tfd_status *st;
  run_ctx rc;
  gemm_ctx gc;
} matmul_case;

static void matmul_case_init(matmul_case *c, int m, int n, int threads) {
  int64_t ad[2] = {m, n}, bd[2] = {n, n};
  c->a = random_tensor(ad, 2, 3);
  c->b = random_tensor(bd, 2, 4);
  c->g = tfd_graph_def_new();
  placeholder(c->g, "a");
  placeholder(c->g, "b");
  add(c->g, "mm", "MatMul", "a", "b");
  c->s = session(threads, 1, c->g);
  c->st = tfd_status_new();
  static const char *feeds[] = {"a", "b"};
  c->rc = (run_ctx){c->s, callable(c->s, feeds, 2, "mm"), NULL, c->st};
  c->gc = (gemm_ctx){m,           n, n, tfd_tensor_const_data(c->a), tfd_tensor_const_data(c->b),
                     calloc((size_t)m * (size_t)n, 4), threads};
}

static void matmul_case_free(matmul_case *c) {
  free(c->gc.c);
  tfd_status_free(c->st);
  tfd_session_free(c->s);
  tfd_graph_def_free(c->g);
  tfd_tensor_unref(c->a);
  tfd_tensor_unref(c->b);
}

static void bench_one_matmul(int m, int n, int threads, int reps) {
  matmul_case c;
  matmul_case_init(&c, m, n, threads);
  tfd_tensor *in[2] = {c.a, c.b};
  c.rc.feeds = in;
  double ours, base;
  /* Product by product, on two threads too: with both operands fed, tfdev's MatMul is the same
   * OpenBLAS call on the same OpenBLAS threads as the baseline (k_matmul.c keeps oneDNN and its
   * OpenMP team for constant weights), so neither side leaves spinning threads the other lacks,
   * which is what makes the MLP's two-thread rows alternate in blocks. In blocks, drift on this
   * shared machine decided these rows: 1024 read 0.67 in one run and 1.21 in the next, 512 1.07 and
   * 1x2048 1.06 in a third, every time with both sides making the same call. */
  compare(run_once, &c.rc, sgemm_direct, &c.gc, 2, reps, &ours, &base);
  char name[64];
  if (m == 1) snprintf(name, sizeof name, "MatMul 1x%d @ %dx%d (vs sgemv)", n, n, n);
  else snprintf(name, sizeof name, "MatMul %dx%d @ %dx%d", m, n, n, n);
  row(name, ours * 1e3, base * 1e3, RATIO_AT_MOST, 1.05);
  matmul_case_free(&c);
}

static void bench_matmul(int threads) {
  char title[128], th[128];
  snprintf(title, sizeof title, "MatMul float32 vs cblas_sgemm/sgemv, %d thread%s", threads, threads == 1 ? "" : "s");
  snprintf(th, sizeof th, "OpenBLAS %d (openblas_set_num_threads, process-wide), tfdev intra_op_threads=%d", threads,
           threads);
  table_title(title, th);
  header("milliseconds per product", "OpenBLAS");
  openblas_set_num_threads(threads);
  int sizes[] = {256, 512, 1024, 2048};
  for (int si = 0; si < 4; si++) {
    if (quick && sizes[si] > 1024) continue;
    bench_one_matmul(sizes[si], sizes[si], threads, sizes[si] >= 2048 ? 9 : sizes[si] >= 1024 ? 21 : 31);
  }
  bench_one_matmul(1, 1024, threads, quick ? 51 : 301);
  bench_one_matmul(1, 2048, threads, quick ? 51 : 301);
}

/* ---- does intra_op_threads = 1 keep to one core? ---- */
static void bench_cores(void) {
  char th[160];
  snprintf(th, sizeof th, "OpenBLAS left at the process default (%d; the bench does not set it here)",
           blas_threads_at_start);
  table_title("Cores a session uses: MatMul 1024x1024 @ 1024x1024, CPU time (user+sys, all threads) / wall time", th);
  printf("  (milliseconds over the timed runs; ratio = CPU / wall)\n");
  printf("| %-50s | %12s | %12s | %6s | %-14s | %-4s |\n", "benchmark", "CPU", "wall", "ratio", "target", "met");
  printf("|%s|%s|%s|%s|%s|%s|\n", "----------------------------------------------------", "--------------",
         "--------------", "--------", "----------------", "------");
  openblas_set_num_threads(blas_threads_at_start);
  for (int threads = 1; threads <= 2; threads++) {
    matmul_case c;
    matmul_case_init(&c, 1024, 1024, threads);
    tfd_tensor *in[2] = {c.a, c.b};
    c.rc.feeds = in;
    for (int i = 0; i < 2; i++) run_once(&c.rc);
    int n = quick ? 5 : 15;
    nanosleep(&(struct timespec){0, 200 * 1000 * 1000}, NULL); /* as in cores_used */
    double c0 = cpu_now(), w0 = now();
    for (int i = 0; i < n; i++) run_once(&c.rc);
    double cpu = cpu_now() - c0, wall = now() - w0;
    char name[64];
    snprintf(name, sizeof name, "session intra_op_threads=%d, %d runs", threads, n);
    row(name, cpu * 1e3, wall * 1e3, threads == 1 ? RATIO_AT_MOST : NONE, 1.15);
    matmul_case_free(&c);
  }
  if (tfd_env_num_cores() < 2) printf("|   (one core here: both rows can only show 1)\n");
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

/* The graph a user writes: MatMul, BiasAdd, Relu per layer, Softmax at the end. */
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

/* The floor: the same network on OpenBLAS (sgemv at batch 1) with preallocated buffers and the
 * -O3 branch-free bias/ReLU/softmax loops of floor.h. */
typedef struct mlp_ctx {
  const mlp *m;
  const float *x;
  int batch;
  float *buf1, *buf2, *out;
  int threads; /* OpenBLAS threads, set before every run (see sgemm_direct) */
} mlp_ctx;

static void mlp_floor(void *p) {
  mlp_ctx *c = p;
  openblas_set_num_threads(c->threads);
  const float *in = c->x;
  float *outs[3] = {c->buf1, c->buf2, c->out};
  for (int l = 0; l < 3; l++) {
    int k = mlp_sizes[l], n = mlp_sizes[l + 1];
    const float *w = tfd_tensor_const_data(c->m->w[l]), *b = tfd_tensor_const_data(c->m->b[l]);
    float *y = outs[l];
    if (c->batch == 1) cblas_sgemv(CblasRowMajor, CblasTrans, k, n, 1.0f, w, n, in, 1, 0.0f, y, 1);
    else cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, c->batch, n, k, 1.0f, in, k, w, n, 0.0f, y, n);
    if (l < 2) floor_bias_relu(y, b, c->batch, n);
    else floor_bias(y, b, c->batch, n);
    in = y;
  }
  floor_softmax(c->out, c->batch, 10);
}

static long minor_faults(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_minflt;
}

/* ---- peers (read from scripts/bench/run's collection) ---- */
enum { P_ORT, P_EAGER, P_JIT, P_ORT_API, P_COUNT };
static const char *const peer_ids[P_COUNT] = {"ort", "torch_eager", "torch_jit", "ort_api"};
static const char *const peer_names[P_COUNT] = {"ONNX Runtime", "torch eager", "torch jit", "ORT public API"};

typedef struct peer_result {
  int peer, batch, threads;
  double us, cores;
} peer_result;

static const char *peers_dir; /* NULL: tfdev_bench run alone */
static peer_result peer_results[128];
static int n_peer_results;
static char peer_skip[P_COUNT][256];
static char peer_info[16][320];
static int n_peer_info;

static int peer_index(const char *id) {
  for (int p = 0; p < P_COUNT; p++)
    if (strcmp(id, peer_ids[p]) == 0) return p;
  return -1;
}

static void read_peers(void) {
  if (!peers_dir) return;
  char path[1024];
  snprintf(path, sizeof path, "%s/peers.txt", peers_dir);
  FILE *f = fopen(path, "r");
  if (!f) {
    for (int p = 0; p < P_COUNT; p++) snprintf(peer_skip[p], sizeof peer_skip[p], "no peers.txt in %.200s", peers_dir);
    return;
  }
  char line[512];
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = 0;
    char kind[16], id[32];
    int off = 0;
    if (sscanf(line, "%15s %31s %n", kind, id, &off) < 2) continue;
    int p = peer_index(id);
    const char *rest = line + off;
    if (strcmp(kind, "peer") == 0 && p >= 0 && n_peer_results < (int)(sizeof peer_results / sizeof *peer_results)) {
      peer_result r = {p, 0, 0, 0, -1};
      if (sscanf(rest, "mlp b%d t%d %lf %lf", &r.batch, &r.threads, &r.us, &r.cores) >= 3)
        peer_results[n_peer_results++] = r;
    } else if (strcmp(kind, "skip") == 0) {
      if (p >= 0) snprintf(peer_skip[p], sizeof peer_skip[p], "%s", rest);
      if (strcmp(id, "ort") == 0) snprintf(peer_skip[P_ORT_API], sizeof peer_skip[P_ORT_API], "%s", rest);
    } else if (strcmp(kind, "info") == 0 && n_peer_info < 16) {
      snprintf(peer_info[n_peer_info++], sizeof peer_info[0], "%s: %s", id, rest);
    }
  }
  fclose(f);
}

static const peer_result *peer_find(int p, int batch, int threads) {
  for (int i = 0; i < n_peer_results; i++) {
    const peer_result *r = &peer_results[i];
    if (r->peer == p && r->batch == batch && r->threads == threads) return r;
  }
  return NULL;
}

static const char *peer_missing(int p) {
  if (peer_skip[p][0]) return peer_skip[p];
  return peers_dir ? "printed no figure for this row" : "not run (scripts/bench/run runs the peers)";
}

/* Max |peer - tfdev| over a batch's outputs, or -1 when the peer wrote none (-2: wrong size). */
static double peer_diff(int p, int batch, const float *ours, int count) {
  if (!peers_dir) return -1;
  char path[1024];
  snprintf(path, sizeof path, "%s/%s_b%d.f32", peers_dir, peer_ids[p], batch);
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  float *v = malloc((size_t)count * sizeof *v + 4);
  size_t got = fread(v, sizeof *v, (size_t)count + 1, f);
  fclose(f);
  double d = got == (size_t)count ? 0 : -2;
  for (int i = 0; d >= 0 && i < count; i++) {
    double e = fabs((double)v[i] - (double)ours[i]);
    if (!(e <= d)) d = isnan(e) ? INFINITY : e;
  }
  free(v);
  return d;
}

typedef struct mlp_config {
  int batch, threads, warm, reps;
} mlp_config;

typedef struct mlp_result {
  mlp_config cfg;
  double tfdev, floor, tfdev_cores, floor_cores, first_total, first_run;
  long faults;
  int fault_runs;
  double diff[P_COUNT + 1]; /* peers, then the floor */
} mlp_result;

static mlp_config mlp_configs[16];
static int n_mlp_configs;

static void parse_mlp_configs(const char *text) {
  n_mlp_configs = 0;
  const char *p = text;
  int used = 0;
  mlp_config c;
  while (n_mlp_configs < 16 && sscanf(p, " %d:%d:%d:%d%n", &c.batch, &c.threads, &c.warm, &c.reps, &used) == 4) {
    if (c.batch < 1 || c.threads < 1 || c.warm < 0 || c.reps < 1) break;
    mlp_configs[n_mlp_configs++] = c;
    p += used;
  }
  if (n_mlp_configs == 0) {
    fprintf(stderr, "tfdev_bench: --mlp-configs wants \"BATCH:THREADS:WARM:REPS ...\", got \"%s\"\n", text);
    exit(2);
  }
}

static void mlp_measure(const mlp *m, mlp_result *res) {
  mlp_config cfg = res->cfg;
  int batch = cfg.batch;
  openblas_set_num_threads(cfg.threads);
  int64_t xd[2] = {batch, 784};
  tfd_tensor *x = random_tensor(xd, 2, 30);
  mlp_ctx mc = {m, tfd_tensor_const_data(x), batch, calloc((size_t)batch * 512, 4), calloc((size_t)batch * 512, 4),
                calloc((size_t)batch * 10, 4), cfg.threads};
  tfd_graph_def *g = mlp_graph(m);
  tfd_status *st = tfd_status_new();
  double t0 = now();
  tfd_session *s = session(cfg.threads, 1, g);
  const char *feeds[] = {"x"};
  run_ctx rc = {s, callable(s, feeds, 1, "probs"), &x, st};
  double t1 = now();
  run_once(&rc);
  double t2 = now();
  res->first_total = (t2 - t0) * 1e6;
  res->first_run = (t2 - t1) * 1e6;
  if (cfg.threads > 1) compare_blocks(run_once, &rc, mlp_floor, &mc, cfg.warm, cfg.reps, 4, &res->tfdev, &res->floor);
  else compare(run_once, &rc, mlp_floor, &mc, cfg.warm, cfg.reps, &res->tfdev, &res->floor);
  res->tfdev *= 1e6;
  res->floor *= 1e6;
  /* Cores over back-to-back runs; page faults over warm runs (buffers must come from a cache). */
  int n = cfg.reps < 200 ? cfg.reps : 200;
  long f0 = minor_faults();
  res->tfdev_cores = cores_used(run_once, &rc, n);
  res->faults = minor_faults() - f0;
  res->fault_runs = n;
  res->floor_cores = cores_used(mlp_floor, &mc, n);
  /* The same numbers from every implementation. */
  tfd_tensor *out;
  if (tfd_session_run_callable(s, rc.handle, NULL, &x, &out, NULL, st) != TFD_OK) die(st, "run");
  mlp_floor(&mc);
  const float *ours = tfd_tensor_const_data(out);
  double d = 0;
  for (int i = 0; i < batch * 10; i++) {
    double e = fabs((double)ours[i] - (double)mc.out[i]);
    if (!(e <= d)) d = isnan(e) ? INFINITY : e;
  }
  res->diff[P_COUNT] = d;
  for (int p = 0; p < P_COUNT; p++) res->diff[p] = peer_diff(p, batch, ours, batch * 10);
  tfd_tensor_unref(out);
  free(mc.buf1);
  free(mc.buf2);
  free(mc.out);
  tfd_status_free(st);
  tfd_session_free(s);
  tfd_graph_def_free(g);
  tfd_tensor_unref(x);
}

static void cell_us(char *buf, size_t n, const peer_result *r) {
  if (r) snprintf(buf, n, "%.1f", r->us);
  else snprintf(buf, n, "SKIP");
}

static void cell_ratio(char *buf, size_t n, double ours, const peer_result *r) {
  if (r) snprintf(buf, n, "%.3f", ours / r->us);
  else snprintf(buf, n, "-");
}

static void target_row(const char *what, double ratio, bool have, const char *why, double bound) {
  char measured[48];
  if (have) snprintf(measured, sizeof measured, "%.3f", ratio);
  printf("| %-62s | %-10s | %-4s |%s%s\n", what, have ? measured : "SKIP", have ? (ratio <= bound ? "yes" : "NO") : "-",
         have ? "" : " ", have ? "" : why ? why : "");
}

/* One core's float32 FMA ceiling, measured: 12 independent chains of FMAs (enough to fill two FMA
 * pipes of 4-cycle latency), 8 wide and, where the core has AVX-512, 16 wide (Zen 4 runs those at
 * the same rate, Intel cores with two 512-bit units at twice), so a GEMM's GFLOP/s can be read as a
 * fraction of what the core can do at all. 0 off x86. */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define FMA12(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
__attribute__((target("avx2,fma"))) static double fma_chains_gflops(long iters) {
  __m256 b = _mm256_set1_ps(0.9999999f), c = _mm256_set1_ps(1e-7f);
#define FMA_INIT(i) __m256 a##i = _mm256_set1_ps((float)(i));
  FMA12(FMA_INIT)
  double t = now();
  for (long k = 0; k < iters; k++) {
#define FMA_STEP(i) a##i = _mm256_fmadd_ps(a##i, b, c);
    FMA12(FMA_STEP)
  }
  t = now() - t;
  __m256 sum = _mm256_setzero_ps();
#define FMA_SUM(i) sum = _mm256_add_ps(sum, a##i);
  FMA12(FMA_SUM)
  float lanes[8];
  _mm256_storeu_ps(lanes, sum);
  if (lanes[0] == 1234.5f) puts(""); /* keeps the chains alive */
  return (double)iters * 12 * 8 * 2 / t / 1e9;
}
__attribute__((target("avx512f"))) static double fma512_chains_gflops(long iters) {
  __m512 b = _mm512_set1_ps(0.9999999f), c = _mm512_set1_ps(1e-7f);
#define FMA512_INIT(i) __m512 a##i = _mm512_set1_ps((float)(i));
  FMA12(FMA512_INIT)
  double t = now();
  for (long k = 0; k < iters; k++) {
#define FMA512_STEP(i) a##i = _mm512_fmadd_ps(a##i, b, c);
    FMA12(FMA512_STEP)
  }
  t = now() - t;
  __m512 sum = _mm512_setzero_ps();
#define FMA512_SUM(i) sum = _mm512_add_ps(sum, a##i);
  FMA12(FMA512_SUM)
  if (_mm512_reduce_add_ps(sum) == 1234.5f) puts("");
  return (double)iters * 12 * 16 * 2 / t / 1e9;
}
static double fma_peak_gflops(void) {
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return 0;
  bool wide = __builtin_cpu_supports("avx512f");
  double best = 0;
  for (int r = 0; r < 5; r++) {
    double g = fma_chains_gflops(20000000), w = wide ? fma512_chains_gflops(10000000) : 0;
    if (g > best) best = g;
    if (w > best) best = w;
  }
  return best;
}
#else
static double fma_peak_gflops(void) { return 0; }
#endif

static void bench_mlp(void) {
  mlp m = make_mlp();
  mlp_result res[16];
  for (int i = 0; i < n_mlp_configs; i++) {
    memset(&res[i], 0, sizeof res[i]);
    res[i].cfg = mlp_configs[i];
    mlp_measure(&m, &res[i]);
  }
  for (int l = 0; l < 3; l++) {
    tfd_tensor_unref(m.w[l]);
    tfd_tensor_unref(m.b[l]);
  }

  table_title("MLP 784-512-512-10 float32: MatMul+BiasAdd+Relu, MatMul+BiasAdd+Relu, MatMul+BiasAdd, Softmax",
              "row bN tM = batch N on M threads: tfdev intra_op_threads=M inter_op_threads=1; C floor OpenBLAS M;\n"
              "    ORT intraOpNumThreads=M interOpNumThreads=1 sequential, graphOptimizationLevel 'all'; torch\n"
              "    set_num_threads(M) + OpenBLAS M. The floor calls openblas_set_num_threads(M) before each run;\n"
              "    tfdev sets OpenBLAS to M threads before each product (oneDNN: an OpenMP team of M);\n"
              "    the cores table shows what each really used");
  printf("  (microseconds per batch, median of REPS timed runs after WARM warm-up runs; tfdev and the C floor\n"
         "   alternate run by run in this process (in four blocks, with a pause before each, on two threads:\n"
         "   spinning BLAS/OpenMP threads of one would otherwise slow the other), each peer is timed the same way in its own process;\n"
         "   ratio columns = tfdev / that implementation, below 1 = tfdev faster)\n");
  printf("| %-9s | %10s | %10s | %10s | %11s | %10s | %7s | %7s | %7s | %7s | %9s |\n", "config", "tfdev", "C floor",
         "ORT", "torch eager", "torch jit", "/floor", "/ORT", "/eager", "/jit", "warm/reps");
  printf("|-----------|------------|------------|------------|-------------|------------|---------|---------|---------"
         "|---------|-----------|\n");
  for (int i = 0; i < n_mlp_configs; i++) {
    mlp_result *r = &res[i];
    const peer_result *o = peer_find(P_ORT, r->cfg.batch, r->cfg.threads),
                      *e = peer_find(P_EAGER, r->cfg.batch, r->cfg.threads),
                      *j = peer_find(P_JIT, r->cfg.batch, r->cfg.threads);
    char cfg[16], co[16], ce[16], cj[16], ro[16], re[16], rj[16], wr[24];
    snprintf(cfg, sizeof cfg, "b%d t%d", r->cfg.batch, r->cfg.threads);
    cell_us(co, sizeof co, o);
    cell_us(ce, sizeof ce, e);
    cell_us(cj, sizeof cj, j);
    cell_ratio(ro, sizeof ro, r->tfdev, o);
    cell_ratio(re, sizeof re, r->tfdev, e);
    cell_ratio(rj, sizeof rj, r->tfdev, j);
    snprintf(wr, sizeof wr, "%d/%d", r->cfg.warm, r->cfg.reps);
    printf("| %-9s | %10.1f | %10.1f | %10s | %11s | %10s | %7.3f | %7s | %7s | %7s | %9s |\n", cfg, r->tfdev, r->floor, co,
           ce, cj, r->tfdev / r->floor, ro, re, rj, wr);
  }
  for (int p = 0; p < P_ORT_API; p++) {
    bool missing = peer_skip[p][0] != 0;
    for (int i = 0; i < n_mlp_configs; i++) missing = missing || !peer_find(p, res[i].cfg.batch, res[i].cfg.threads);
    if (missing) printf("  SKIP %s: %s\n", peer_names[p], peer_missing(p));
  }

  /* The targets, against the rows above. */
  const char *no_ort = "no ONNX Runtime figure (SKIP line above)";
  printf("\nMLP targets (tfdev issue 7; measured = tfdev / other, from the table above)\n");
  printf("| %-62s | %-10s | %-4s |\n", "target", "measured", "met");
  printf("|----------------------------------------------------------------|------------|------|\n");
  for (int i = 0; i < n_mlp_configs; i++) {
    mlp_result *r = &res[i];
    const peer_result *o = peer_find(P_ORT, r->cfg.batch, r->cfg.threads);
    char what[96];
    if (r->cfg.batch == 1 && r->cfg.threads == 1) {
      target_row("b1 t1: tfdev <= 1.05 x C floor", r->tfdev / r->floor, true, "", 1.05);
      target_row("b1 t1: tfdev <= 0.85 x ONNX Runtime", o ? r->tfdev / o->us : 0, o, no_ort, 0.85);
    } else if (r->cfg.batch > 1) {
      snprintf(what, sizeof what, "b%d t%d: tfdev <= 0.9 x ONNX Runtime%s", r->cfg.batch, r->cfg.threads,
               r->cfg.threads > 1 ? " (intra-op threads on both)" : "");
      target_row(what, o ? r->tfdev / o->us : 0, o, no_ort, 0.9);
    }
  }

  /* How far a 0.9 x ORT target is from what one core can do at all. */
  double peak = fma_peak_gflops();
  if (peak > 0) {
    double flops = 0;
    for (int l = 0; l < 3; l++) flops += 2.0 * mlp_sizes[l] * mlp_sizes[l + 1];
    printf("\nMLP against one core's ceiling: float32 FMA peak %.1f GFLOP/s measured (the faster of 12 chains of\n"
           "  8-wide and of 16-wide FMAs), and what the 0.9 x ONNX Runtime target asks of it\n", peak);
    printf("| %-9s | %12s | %12s | %14s | %16s |\n", "config", "tfdev GF/s", "ORT GF/s", "ORT % of peak",
           "0.9xORT needs");
    printf("|-----------|--------------|--------------|----------------|------------------|\n");
    for (int i = 0; i < n_mlp_configs; i++) {
      mlp_result *r = &res[i];
      const peer_result *o = peer_find(P_ORT, r->cfg.batch, r->cfg.threads);
      if (r->cfg.threads != 1 || r->cfg.batch == 1 || !o) continue;
      double f = flops * r->cfg.batch / 1e3; /* f / (microseconds per batch) = GFLOP/s */
      char cfg[16], need[32];
      snprintf(cfg, sizeof cfg, "b%d t%d", r->cfg.batch, r->cfg.threads);
      snprintf(need, sizeof need, "%.0f%% of peak", 100 * f / (0.9 * o->us) / peak);
      printf("| %-9s | %12.1f | %12.1f | %13.0f%% | %16s |\n", cfg, f / r->tfdev, f / o->us, 100 * f / o->us / peak,
             need);
    }
  }

  printf("\nMLP cores used (CPU time / wall time over back-to-back runs; a tM row should use at most M)\n");
  printf("| %-9s | %7s | %7s | %7s | %11s | %9s |\n", "config", "tfdev", "C floor", "ORT", "torch eager", "torch jit");
  printf("|-----------|---------|---------|---------|-------------|-----------|\n");
  for (int i = 0; i < n_mlp_configs; i++) {
    mlp_result *r = &res[i];
    char cfg[16], c[3][16];
    snprintf(cfg, sizeof cfg, "b%d t%d", r->cfg.batch, r->cfg.threads);
    for (int p = 0; p < 3; p++) {
      const peer_result *pr = peer_find(p, r->cfg.batch, r->cfg.threads);
      if (pr && pr->cores >= 0) snprintf(c[p], sizeof c[p], "%.2f", pr->cores);
      else snprintf(c[p], sizeof c[p], pr ? "?" : "SKIP");
    }
    printf("| %-9s | %7.2f | %7.2f | %7s | %11s | %9s |\n", cfg, r->tfdev_cores, r->floor_cores, c[0], c[1], c[2]);
  }

  printf("\nMLP output check: max |other - tfdev| over the batch's softmax outputs, same weights and input (limit 1e-4)\n");
  printf("| %-9s | %10s | %10s | %11s | %10s | %-4s |\n", "config", "C floor", "ORT", "torch eager", "torch jit", "ok");
  printf("|-----------|------------|------------|-------------|------------|------|\n");
  for (int i = 0; i < n_mlp_configs; i++) {
    mlp_result *r = &res[i];
    char cfg[16], c[4][16];
    bool ok = true;
    snprintf(cfg, sizeof cfg, "b%d t%d", r->cfg.batch, r->cfg.threads);
    const int order[4] = {P_COUNT, P_ORT, P_EAGER, P_JIT};
    for (int k = 0; k < 4; k++) {
      double d = r->diff[order[k]];
      /* A peer with a figure for this row must have written its output. */
      if (d == -1 && order[k] < P_COUNT && peer_find(order[k], r->cfg.batch, r->cfg.threads)) d = -3;
      if (d == -3) snprintf(c[k], sizeof c[k], "no output");
      else if (d == -1) snprintf(c[k], sizeof c[k], "SKIP");
      else if (d == -2) snprintf(c[k], sizeof c[k], "bad size");
      else snprintf(c[k], sizeof c[k], "%.2g", d);
      if (d == -2 || d == -3 || (d >= 0 && !(d <= 1e-4))) ok = false;
    }
    if (!ok) checks_failed = true;
    printf("| %-9s | %10s | %10s | %11s | %10s | %-4s |\n", cfg, c[0], c[1], c[2], c[3], ok ? "yes" : "NO");
  }

  printf("\nMLP, informative: tfdev's first run and page faults; ORT through its public async API (microseconds)\n");
  printf("| %-9s | %26s | %24s | %22s | %19s |\n", "config", "tfdev session+callable+run", "tfdev first run alone",
         "ORT public API", "tfdev faults / runs");
  printf("|-----------|----------------------------|--------------------------|------------------------|---------------------|\n");
  for (int i = 0; i < n_mlp_configs; i++) {
    mlp_result *r = &res[i];
    char cfg[16], api[32], faults[32];
    snprintf(cfg, sizeof cfg, "b%d t%d", r->cfg.batch, r->cfg.threads);
    const peer_result *a = peer_find(P_ORT_API, r->cfg.batch, r->cfg.threads);
    cell_us(api, sizeof api, a);
    snprintf(faults, sizeof faults, "%ld / %d", r->faults, r->fault_runs);
    printf("| %-9s | %26.1f | %24.1f | %22s | %19s |\n", cfg, r->first_total, r->first_run, api, faults);
  }
  printf("  (ORT public API = `await session.run()` in node: setImmediate + a promise around the same run that the\n"
         "   ORT column times through the binding's synchronous call; page faults over warm back-to-back runs)\n");
  for (int i = 0; i < n_peer_info; i++) printf("  peer %s\n", peer_info[i]);
}

/* ---- elementwise AddV2 vs a STREAM add ---- */
/* A team of threads for the floor: the caller and n - 1 workers take 4 MiB chunks of the range in
 * turn from a shared counter, so a core the host slows down does less of the work instead of making
 * the others wait for it. */
typedef struct add_job {
  float *c;
  const float *a, *b;
  int64_t n;
  bool stream;
  atomic_llong next;
} add_job;

typedef struct team {
  int n;
  pthread_t th[8];
  pthread_barrier_t start, done;
  add_job *job;
  bool quit;
} team;

static team the_team;

enum { ADD_CHUNK = 1 << 20 }; /* floats */

static void team_part(void) {
  add_job *j = the_team.job;
  for (;;) {
    int64_t b = atomic_fetch_add(&j->next, ADD_CHUNK);
    if (b >= j->n) return;
    int64_t e = b + ADD_CHUNK < j->n ? b + ADD_CHUNK : j->n;
    if (j->stream) floor_add_stream(j->c + b, j->a + b, j->b + b, e - b);
    else floor_add_plain(j->c + b, j->a + b, j->b + b, e - b);
  }
}

static void *team_main(void *arg) {
  (void)arg;
  for (;;) {
    pthread_barrier_wait(&the_team.start);
    if (the_team.quit) return NULL;
    team_part();
    pthread_barrier_wait(&the_team.done);
  }
}

static void team_start(int n) {
  the_team.n = n;
  the_team.quit = false;
  pthread_barrier_init(&the_team.start, NULL, (unsigned)n);
  pthread_barrier_init(&the_team.done, NULL, (unsigned)n);
  for (int i = 1; i < n; i++) {
    pthread_create(&the_team.th[i], NULL, team_main, NULL);
  }
}

static void team_stop(void) {
  the_team.quit = true;
  pthread_barrier_wait(&the_team.start);
  for (int i = 1; i < the_team.n; i++) pthread_join(the_team.th[i], NULL);
  pthread_barrier_destroy(&the_team.start);
  pthread_barrier_destroy(&the_team.done);
}

static void add_floor(void *p) {
  the_team.job = p;
  atomic_store(&the_team.job->next, 0);
  if (the_team.n == 1) {
    team_part();
    return;
  }
  pthread_barrier_wait(&the_team.start);
  team_part();
  pthread_barrier_wait(&the_team.done);
}

static void bench_add(void) {
  table_title("AddV2 of 16M floats vs a STREAM-style add c[i] = a[i] + b[i] (inputs and output 64 MiB each)",
              "1 and 2: tfdev intra_op_threads=N; the C loop on N threads (the caller and N-1 pthreads taking\n"
              "    4 MiB chunks in turn)");
  header("GB/s moved: 2 reads + 1 write of 4 bytes per float", "C loop");
  int64_t n = (int64_t)1 << 24;
  int64_t dims[1] = {n};
  tfd_tensor *a = random_tensor(dims, 1, 40), *b = random_tensor(dims, 1, 41);
  size_t bytes = (size_t)n * 4;
  /* The loop's output comes from tfdev's allocator too: the same alignment as tfdev's output. */
  tfd_tensor *c_tensor = random_tensor(dims, 1, 42);
  float *c = tfd_tensor_data(c_tensor);
  for (int threads = 1; threads <= 2; threads++) {
    int reps = quick ? 11 : 31;
    tfd_graph_def *g = tfd_graph_def_new();
    placeholder(g, "a");
    placeholder(g, "b");
    add(g, "sum", "AddV2", "a", "b");
    tfd_session *s = session(threads, 1, g);
    const char *feeds[] = {"a", "b"};
    tfd_tensor *in[2] = {a, b};
    tfd_status *st = tfd_status_new();
    run_ctx rc = {s, callable(s, feeds, 2, "sum"), in, st};
    team_start(threads);
    add_job stream = {c, tfd_tensor_const_data(a), tfd_tensor_const_data(b), n, true, 0},
            plain = {c, tfd_tensor_const_data(a), tfd_tensor_const_data(b), n, false, 0};
    double ours, base, ours2, base_plain;
    compare(run_once, &rc, add_floor, &stream, 3, reps, &ours, &base);
    compare(run_once, &rc, add_floor, &plain, 3, reps, &ours2, &base_plain);
    char name[96];
    double moved = 3.0 * (double)bytes / 1e9;
    snprintf(name, sizeof name, "AddV2 16M, %d thread%s, vs streaming stores", threads, threads == 1 ? "" : "s");
    row(name, moved / ours, moved / base, RATIO_AT_LEAST, 0.95);
    snprintf(name, sizeof name, "  (informative: vs normal stores, %d thread%s)", threads, threads == 1 ? "" : "s");
    row(name, moved / ours2, moved / base_plain, NONE, 0);
    team_stop();
    tfd_status_free(st);
    tfd_session_free(s);
    tfd_graph_def_free(g);
  }
  printf("  (tfdev's AddV2 writes outputs of 8 MiB and more with streaming stores, so the target row's C loop\n"
         "   does too: the same store kind)\n");
  tfd_tensor_unref(c_tensor);
  tfd_tensor_unref(a);
  tfd_tensor_unref(b);
}

/* ---- data movement ----
 * The rearranging kernels beside memcpy of the same output bytes, the machine's copy bandwidth on one
 * thread (the floor no kernel that must read and write every byte can beat). Inputs and outputs of
 * 16 MiB, far past the caches. */
typedef struct copy_job {
  void *dst;
  const void *src;
  size_t bytes;
} copy_job;

static void copy_floor(void *p) {
  copy_job *j = p;
  memcpy(j->dst, j->src, j->bytes);
}

static tfd_tensor *int32_tensor(const int32_t *v, const int64_t *dims, int nd) {
  int64_t n = 1;
  for (int i = 0; i < nd; i++) n *= dims[i];
  tfd_tensor *made = NULL;
  tfd_tensor_from_bytes(NULL, TFD_INT32, dims, nd, v, (size_t)n * 4, &made, NULL);
  return made;
}

static void bench_one_move(const char *name, tfd_graph_def *g, tfd_tensor *x, int reps) {
  tfd_session *s = session(1, 1, g);
  const char *feeds[] = {"x"};
  tfd_tensor *in[1] = {x}, *out = NULL;
  tfd_status *st = tfd_status_new();
  run_ctx rc = {s, callable(s, feeds, 1, "y"), in, st};
  if (tfd_session_run_callable(s, rc.handle, NULL, in, &out, NULL, st) != TFD_OK) die(st, name);
  size_t bytes = tfd_tensor_byte_size(out);
  tfd_tensor_unref(out);
  void *dst = malloc(bytes), *src = malloc(bytes); /* the floor's own buffers: x may be smaller (BroadcastTo) */
  if (!dst || !src) die(st, "out of memory");
  memset(dst, 1, bytes);
  memset(src, 2, bytes);
  copy_job floor_job = {dst, src, bytes};
  double ours, base;
  compare(run_once, &rc, copy_floor, &floor_job, 3, reps, &ours, &base);
  double moved = 2.0 * (double)bytes / 1e9; /* read and write each byte once */
  row(name, moved / ours, moved / base, RATIO_AT_LEAST, 0.5);
  free(dst);
  free(src);
  tfd_status_free(st);
  tfd_session_free(s);
  tfd_graph_def_free(g);
}

/* y = op(x, consts...), x fed. */
static tfd_graph_def *move_graph(const char *op, tfd_tensor *c1, tfd_tensor *c2, const char *int_attr, int64_t value) {
  tfd_graph_def *g = tfd_graph_def_new();
  placeholder(g, "x");
  if (c1) constant(g, "c1", c1);
  if (c2) constant(g, "c2", c2);
  tfd_node_def *n = add(g, "y", op, "x", c1 ? "c1" : NULL);
  if (c2) tfd_node_def_add_input(n, "c2", NULL);
  if (int_attr) {
    tfd_attr_value v = {.type = TFD_ATTR_INT, .i = value};
    tfd_node_def_set_attr(n, int_attr, &v, NULL);
  }
  tfd_tensor_unref(c1);
  tfd_tensor_unref(c2);
  return g;
}

/* ---- the elementwise math issue 26 added, against its C floor ---- */
typedef struct math_job {
  floor_math op;
  float *y;
  const float *a, *b;
  int64_t n;
} math_job;
static void math_floor(void *arg) {
  math_job *j = arg;
  floor_math_f32(j->op, j->y, j->a, j->b, j->n);
}

static void bench_math(void) {
  table_title("Elementwise math added for TensorFlow.js's op list vs a -O3 C loop of the same libm call (1M float32)",
              "1: tfdev intra_op_threads=1 inter_op_threads=1; the C loop on the calling thread");
  header("M elements/s", "C loop");
  static const struct {
    const char *op;
    floor_math fm;
    bool binary;
  } ops[] = {{"Floor", FM_FLOOR, false}, {"Ceil", FM_CEIL, false},   {"Round", FM_ROUND, false},
             {"Sign", FM_SIGN, false},   {"Sin", FM_SIN, false},     {"Cos", FM_COS, false},
             {"Tan", FM_TAN, false},     {"Atan", FM_ATAN, false},   {"Sinh", FM_SINH, false},
             {"Erf", FM_ERF, false},     {"Expm1", FM_EXPM1, false}, {"Log1p", FM_LOG1P, false},
             {"Atan2", FM_ATAN2, true},  {"Mod", FM_MOD, true},      {"DivNoNan", FM_DIV_NO_NAN, true}};
  int reps = quick ? 11 : 31;
  int64_t dims[1] = {1 << 20};
  tfd_tensor *a = random_tensor(dims, 1, 60), *b = random_tensor(dims, 1, 61);
  float *y = malloc((size_t)dims[0] * sizeof *y);
  tfd_status *st = tfd_status_new();
  for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
    tfd_graph_def *g = tfd_graph_def_new();
    placeholder(g, "x");
    placeholder(g, "x2");
    add(g, "y", ops[i].op, "x", ops[i].binary ? "x2" : NULL);
    tfd_session *s = session(1, 1, g);
    const char *feeds[] = {"x", "x2"};
    tfd_tensor *in[2] = {a, b};
    run_ctx rc = {s, callable(s, feeds, 2, "y"), in, st};
    math_job job = {ops[i].fm, y, tfd_tensor_data(a), tfd_tensor_data(b), dims[0]};
    double ours, base;
    compare(run_once, &rc, math_floor, &job, 3, reps, &ours, &base);
    char name[64];
    snprintf(name, sizeof name, "%s [1M]%s", ops[i].op, ops[i].binary ? " with [1M]" : "");
    row(name, (double)dims[0] / 1e6 / ours, (double)dims[0] / 1e6 / base, RATIO_AT_LEAST, 0.8);
    tfd_session_free(s);
    tfd_graph_def_free(g);
  }
  free(y);
  tfd_status_free(st);
  tfd_tensor_unref(a);
  tfd_tensor_unref(b);
}

/* ---- complex64 and the Fourier transforms, against their C floors ---- */
typedef struct complex_job {
  int kind; /* 0 Complex, 1 ComplexAbs, 2 Mul, 3 FFT */
  float *y, *work;
  const float *a, *b, *tw;
  int64_t n, rows;
} complex_job;
static void complex_floor(void *arg) {
  complex_job *j = arg;
  switch (j->kind) {
    case 0: floor_complex_make(j->y, j->a, j->b, j->n); break;
    case 1: floor_complex_abs(j->y, j->a, j->n); break;
    case 2: floor_complex_mul(j->y, j->a, j->b, j->n); break;
    default: /* the kernel reads its input and writes a new output: so does the floor */
      memcpy(j->work, j->a, (size_t)(j->rows * j->n) * 2 * sizeof(float));
      floor_fft_rows(j->work, j->rows, j->n, j->tw);
  }
}

static tfd_tensor *complex_tensor(int64_t n, unsigned seed) {
  int64_t twice[1] = {2 * n}, dims[1] = {n};
  tfd_tensor *f = random_tensor(twice, 1, seed);
  tfd_tensor *c = NULL;
  tfd_tensor_from_bytes(NULL, TFD_COMPLEX64, dims, 1, tfd_tensor_data(f),
                        (size_t)n * 8, &c, NULL);
  tfd_tensor_unref(f);
  return c;
}

static void bench_complex(void) {
  table_title("complex64 and the Fourier transforms vs -O3 C loops (512K elements, 4 MiB outputs as in the table above;"
              " FFT 512 rows of 1024)",
              "1: tfdev intra_op_threads=1 inter_op_threads=1; the C loop on the calling thread");
  header("M elements/s (FFT: rows x length)", "C loop");
  int reps = quick ? 11 : 31;
  int64_t n = 1 << 19, dims[1] = {n}, fft_dims[2] = {512, 1024};
  tfd_tensor *re = random_tensor(dims, 1, 70), *im = random_tensor(dims, 1, 71);
  tfd_tensor *za = complex_tensor(n, 72), *zb = complex_tensor(n, 73);
  tfd_tensor *zf = NULL;
  tfd_tensor_reshape(za, fft_dims, 2, &zf, NULL);
  float *y = malloc((size_t)n * 2 * sizeof *y), *work = malloc((size_t)n * 2 * sizeof *work), tw[1024];
  for (int k = 0; k < 512; k++) {
    tw[2 * k] = (float)cos(-2 * M_PI * k / 1024);
    tw[2 * k + 1] = (float)sin(-2 * M_PI * k / 1024);
  }
  tfd_status *st = tfd_status_new();
  static const struct {
    const char *op, *label;
    int kind;
  } ops[] = {{"Complex", "Complex [512K] float32 with [512K]", 0},
             {"ComplexAbs", "ComplexAbs [512K] complex64", 1},
             {"Mul", "Mul [512K] complex64 with [512K]", 2},
             {"FFT", "FFT [512,1024] complex64", 3}};
  for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
    int kind = ops[i].kind;
    tfd_graph_def *g = tfd_graph_def_new();
    placeholder_of(g, "x", kind == 0 ? TFD_FLOAT32 : TFD_COMPLEX64);
    placeholder_of(g, "x2", kind == 0 ? TFD_FLOAT32 : TFD_COMPLEX64);
    add(g, "y", ops[i].op, "x", kind == 0 || kind == 2 ? "x2" : NULL);
    tfd_session *s = session(1, 1, g);
    const char *feeds[] = {"x", "x2"};
    tfd_tensor *in[2] = {kind == 0 ? re : kind == 3 ? zf : za, kind == 0 ? im : zb};
    run_ctx rc = {s, callable(s, feeds, kind == 0 || kind == 2 ? 2 : 1, "y"), in, st};
    complex_job job = {kind, y, work, tfd_tensor_data(in[0]), tfd_tensor_data(in[1]), tw, kind == 3 ? 1024 : n, 512};
    double ours, base;
    compare(run_once, &rc, complex_floor, &job, 3, reps, &ours, &base);
    row(ops[i].label, (double)n / 1e6 / ours, (double)n / 1e6 / base, kind == 3 ? NONE : RATIO_AT_LEAST, 0.8);
    tfd_session_free(s);
    tfd_graph_def_free(g);
  }
  printf("  (FFT: tfdev computes in double for every length, radix-2 here; the floor is a float radix-2 for powers\n"
         "   of two only. Peers: TensorFlow.js sums directly for other lengths; no PyTorch figure in this table)\n");
  free(y);
  free(work);
  tfd_status_free(st);
  tfd_tensor_unref(re);
  tfd_tensor_unref(im);
  tfd_tensor_unref(za);
  tfd_tensor_unref(zb);
  tfd_tensor_unref(zf);
}

static void bench_data_movement(void) {
  table_title("Data movement: rearranging kernels vs memcpy of the same bytes (16 MiB float32 outputs)",
              "1: tfdev intra_op_threads=1 inter_op_threads=1; memcpy on the calling thread");
  header("GB/s moved: each output byte read once and written once", "memcpy");
  int reps = quick ? 11 : 31;
  int64_t img[4] = {1, 256, 256, 64}, wide[4] = {1, 512, 512, 16};
  int64_t small[4] = {4, 256, 256, 16}, two[1] = {2}, pads[2] = {2, 2}, row_dims[2] = {1, 4096};
  int32_t block[2] = {2, 2}, zeros[4] = {0, 0, 0, 0}, target[2] = {1024, 4096};
  tfd_tensor *x = random_tensor(img, 4, 50);
  bench_one_move("DepthToSpace [1,256,256,64] block 2", move_graph("DepthToSpace", NULL, NULL, "block_size", 2), x, reps);
  bench_one_move("SpaceToDepth [1,256,256,64] block 2", move_graph("SpaceToDepth", NULL, NULL, "block_size", 2), x, reps);
  tfd_tensor_unref(x);
  x = random_tensor(wide, 4, 52);
  bench_one_move("SpaceToBatchND [1,512,512,16] block [2,2]",
                 move_graph("SpaceToBatchND", int32_tensor(block, two, 1), int32_tensor(zeros, pads, 2), NULL, 0), x, reps);
  tfd_tensor_unref(x);
  x = random_tensor(small, 4, 53);
  bench_one_move("BatchToSpaceND [4,256,256,16] block [2,2]",
                 move_graph("BatchToSpaceND", int32_tensor(block, two, 1), int32_tensor(zeros, pads, 2), NULL, 0), x, reps);
  tfd_tensor_unref(x);
  x = random_tensor(row_dims, 2, 54);
  bench_one_move("BroadcastTo [1,4096] -> [1024,4096]",
                 move_graph("BroadcastTo", int32_tensor(target, two, 1), NULL, NULL, 0), x, reps);
  tfd_tensor_unref(x);
  printf("  (BroadcastTo's floor copies 16 MiB though the op reads only 16 KiB: the write is what both must do)\n");
  /* Gathers and scatters: 65,536 rows of 64 floats, in a shuffled order. */
  int64_t rows_dims[2] = {65536, 64}, n_rows[1] = {65536}, nd_dims[2] = {65536, 1}, shape_dims[1] = {2};
  int32_t *perm = malloc(65536 * sizeof *perm), shape[2] = {65536, 64};
  for (int i = 0; i < 65536; i++) perm[i] = i;
  for (unsigned i = 65535, seed = 7; i > 0; i--) {
    seed = seed * 1103515245u + 12345u;
    unsigned j = (seed >> 8) % (i + 1);
    int32_t t = perm[i];
    perm[i] = perm[j], perm[j] = t;
  }
  x = random_tensor(rows_dims, 2, 55);
  int32_t zero = 0;
  bench_one_move("GatherV2 [65536,64] rows, shuffled, axis 0",
                 move_graph("GatherV2", int32_tensor(perm, n_rows, 1), int32_tensor(&zero, NULL, 0), NULL, 0), x, reps);
  bench_one_move("GatherNd [65536,64] by [65536,1], shuffled",
                 move_graph("GatherNd", int32_tensor(perm, nd_dims, 2), NULL, NULL, 0), x, reps);
  bench_one_move("TensorScatterUpdate [65536,64] rows, shuffled",
                 move_graph("TensorScatterUpdate", int32_tensor(perm, nd_dims, 2), tfd_tensor_ref(x), NULL, 0), x, reps);
  tfd_graph_def *g = tfd_graph_def_new(); /* ScatterNd(indices, updates = x, shape) */
  placeholder(g, "x");
  tfd_tensor *c1 = int32_tensor(perm, nd_dims, 2), *c2 = int32_tensor(shape, shape_dims, 1);
  constant(g, "c1", c1);
  constant(g, "c2", c2);
  tfd_tensor_unref(c1);
  tfd_tensor_unref(c2);
  tfd_node_def_add_input(add(g, "y", "ScatterNd", "c1", "x"), "c2", NULL);
  bench_one_move("ScatterNd [65536,64] rows, shuffled", g, x, reps);
  tfd_tensor_unref(x);
  free(perm);
}

static void usage(void) {
  fprintf(stderr, "usage: tfdev_bench [--quick] [--mlp-configs \"BATCH:THREADS:WARM:REPS ...\"] [--peers DIR]\n");
  exit(2);
}

int main(int argc, char **argv) {
  const char *configs = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--quick") == 0) quick = true;
    else if (strcmp(argv[i], "--mlp-configs") == 0 && i + 1 < argc) configs = argv[++i];
    else if (strcmp(argv[i], "--peers") == 0 && i + 1 < argc) peers_dir = argv[++i];
    else usage();
  }
  parse_mlp_configs(configs ? configs : quick ? "1:1:20:201 64:1:10:51 256:1:5:21 64:2:10:51"
                                              : "1:1:50:1001 64:1:20:301 256:1:10:101 64:2:20:301");
  read_cpu_model();
  read_peers();
  blas_threads_at_start = openblas_get_num_threads();
  printf("tfdev %s benchmarks%s\n", TFDEV_VERSION, quick ? " (quick)" : "");
  printf("CPU: %s, %d cores; OpenBLAS core %s, %d threads at start; OPENBLAS_CORETYPE=%s\n", cpu_model,
         tfd_env_num_cores(), openblas_get_corename(), blas_threads_at_start,
         getenv("OPENBLAS_CORETYPE") ? getenv("OPENBLAS_CORETYPE") : "(unset)");
  bench_mlp();
  bench_executor();
  bench_matmul(1);
  if (tfd_env_num_cores() > 1) bench_matmul(tfd_env_num_cores());
  bench_cores();
  bench_add();
  bench_data_movement();
  bench_math();
  bench_complex();
  if (checks_failed) {
    printf("\nFAILED: an MLP output differs from tfdev's by more than 1e-4, or a peer wrote none (table above)\n");
    return 1;
  }
  return 0;
}
