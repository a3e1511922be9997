/* Executor fixed costs per node, for chains of 1,000 one-element nodes: Identity, AddV2(prev, prev) and
 * AddV2(prev, c) with c a Const, each as (run of 1001 nodes - run of 2 nodes) / 999 from interleaved medians, plus
 * the fixed cost of a callable run of a 1-node chain. A stand-alone program (not built by CMake), so
 * it can be built against any build tree for A/B comparisons in one sitting:
 *
 *   cc -O2 -std=c11 -D_GNU_SOURCE -Iinclude scripts/bench/chain_rows.c build/lib/libtfdev.a \
 *      -lopenblas -lpthread -lm -o /tmp/chain_rows && /tmp/chain_rows [reps]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tfdev/tfdev.h"

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
  fprintf(stderr, "%s: %s\n", what, tfd_status_message(st));
  exit(1);
}

static void add(tfd_graph_def *g, const char *name, const char *op, const char *in0, const char *in1) {
  tfd_node_def *n = tfd_graph_def_add_node(g, name, op, NULL);
  if (in0) tfd_node_def_add_input(n, in0, NULL);
  if (in1) tfd_node_def_add_input(n, in1, NULL);
}

typedef enum { IDENTITY, ADD_SELF, ADD_CONST } kind;

/* n0 = Const; n_i = op(n_{i-1}[, n_{i-1} or n0]) for i in 1..n. */
static tfd_graph_def *chain(int n, kind k) {
  tfd_graph_def *g = tfd_graph_def_new();
  int64_t one = 1;
  tfd_tensor *c = tfd_tensor_new(NULL, TFD_FLOAT32, &one, 1, NULL);
  *(float *)tfd_tensor_data(c) = 0.5f;
  tfd_attr_value v = {.type = TFD_ATTR_TENSOR, .tensor = c};
  add(g, "n0", "Const", NULL, NULL);
  tfd_node_def_set_attr(tfd_graph_def_node(g, 0), "value", &v, NULL);
  tfd_tensor_unref(c);
  char name[32], prev[32] = "n0";
  for (int i = 1; i <= n; i++) {
    snprintf(name, sizeof name, "n%d", i);
    if (k == IDENTITY) add(g, name, "Identity", prev, NULL);
    else add(g, name, "AddV2", prev, k == ADD_SELF ? prev : "n0");
    strcpy(prev, name);
  }
  return g;
}

typedef struct runner {
  tfd_session *s;
  int64_t h;
  tfd_status *st;
} runner;

static runner make(int n, kind k) {
  tfd_graph_def *g = chain(n, k);
  tfd_status *st = tfd_status_new();
  tfd_session_options *o = tfd_session_options_new();
  tfd_session_options_set_intra_op_threads(o, 1);
  tfd_session_options_set_inter_op_threads(o, 1);
  tfd_session_options_set_use_global_threadpool(o, false);
  tfd_session_options_set_use_per_session_threads(o, true);
  runner r = {tfd_session_new(o, NULL, NULL, st), -1, st};
  if (!r.s || tfd_session_create(r.s, g, st) != TFD_OK) die(st, "session");
  char fetch[32];
  snprintf(fetch, sizeof fetch, "n%d", n);
  const char *f = fetch;
  if ((r.h = tfd_session_make_callable(r.s, NULL, 0, &f, 1, NULL, 0, st)) < 0) die(st, "make_callable");
  tfd_session_options_free(o);
  tfd_graph_def_free(g);
  return r;
}

static double run_once(runner *r) {
  double t0 = now();
  tfd_tensor *out;
  if (tfd_session_run_callable(r->s, r->h, NULL, NULL, &out, NULL, r->st) != TFD_OK) die(r->st, "run");
  tfd_tensor_unref(out);
  return now() - t0;
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 301;
  if (reps < 1) reps = 1;
  static const char *names[] = {"Identity", "AddV2(prev, prev)", "AddV2(prev, c)"};
  printf("| %-20s | %14s | %14s | %14s |\n", "chain of 1,000", "us per node", "us per run", "us fixed (1)");
  double *a = malloc((size_t)reps * sizeof *a), *b = malloc((size_t)reps * sizeof *b);
  for (int k = 0; k < 3; k++) {
    runner r1 = make(1, (kind)k), r1000 = make(1000, (kind)k);
    for (int i = 0; i < 20; i++) run_once(&r1), run_once(&r1000);
    for (int i = 0; i < reps; i++) {
      if (i % 2) a[i] = run_once(&r1), b[i] = run_once(&r1000);
      else b[i] = run_once(&r1000), a[i] = run_once(&r1);
    }
    double m1 = median(a, reps), m1000 = median(b, reps);
    printf("| %-20s | %14.4f | %14.2f | %14.3f |\n", names[k], (m1000 - m1) / 999 * 1e6, m1000 * 1e6, m1 * 1e6);
    tfd_session_free(r1.s);
    tfd_session_free(r1000.s);
    tfd_status_free(r1.st);
    tfd_status_free(r1000.st);
  }
  free(a);
  free(b);
  return 0;
}
