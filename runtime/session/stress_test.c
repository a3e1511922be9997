/* Stress: 8 host threads x N iterations of mixed runs, callables, partial runs and resets on one session.
 * N is 1,000 (TFDEV_STRESS_ITERS overrides: CI's sanitizer builds use fewer). Every result is checked. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "runtime/testing/graph_builder.h"
#include "runtime/testing/harness.h"

enum { THREADS = 8 };

static int iterations(void) {
  const char *env = getenv("TFDEV_STRESS_ITERS");
  int n = env ? atoi(env) : 1000;
  return n > 0 ? n : 1000;
}

static void set_str(tfd_node_def *n, const char *attr, const char *s) {
  tfd_attr_value v = {.type = TFD_ATTR_STRING, .s = s};
  tfd_node_def_set_attr(n, attr, &v, NULL);
}

/* a, b -> c = a * b, d = c + a (on CPU:1), and per thread t a variable v<t> in container c<t>. */
static tfd_graph_def *graph(void) {
  tfd_graph_def *g = tfd_graph_def_new();
  tg_set_type(tg_node(g, "a", "Placeholder", NULL, NULL, NULL), "dtype", TFD_FLOAT32);
  tg_set_type(tg_node(g, "b", "Placeholder", NULL, NULL, NULL), "dtype", TFD_FLOAT32);
  tg_node(g, "c", "Mul", "a", "b", NULL);
  tfd_node_def_set_device(tg_node(g, "d", "AddV2", "c", "a", NULL), "/device:CPU:1", NULL);
  for (int t = 0; t < THREADS; t++) {
    char v[16], c[16], init[32], inc[32], read[32];
    snprintf(v, sizeof v, "v%d", t);
    snprintf(c, sizeof c, "c%d", t);
    snprintf(init, sizeof init, "v%d/init", t);
    snprintf(inc, sizeof inc, "v%d/inc", t);
    snprintf(read, sizeof read, "v%d/read", t);
    tfd_node_def *h = tg_node(g, v, "VarHandleOp", NULL, NULL, NULL);
    tg_set_type(h, "dtype", TFD_FLOAT32);
    set_str(h, "container", c);
    tg_set_type(tg_node(g, init, "AssignVariableOp", v, "a", NULL), "dtype", TFD_FLOAT32);
    tg_set_type(tg_node(g, inc, "AssignAddVariableOp", v, "b", NULL), "dtype", TFD_FLOAT32);
    tg_set_type(tg_node(g, read, "ReadVariableOp", v, NULL, NULL), "dtype", TFD_FLOAT32);
  }
  return g;
}

typedef struct worker {
  tfd_session *s;
  int id, iters, bad, runs;
  int64_t callable;
  char last_error[256];
} worker;

static void note_error(worker *w, tfd_status *st, const char *what) {
  w->bad++;
  snprintf(w->last_error, sizeof w->last_error, "%s: %s: %s", what, tfd_code_name(tfd_status_code(st)),
           tfd_status_message(st));
  tfd_status_reset(st);
}

static float value(tfd_tensor *t) { return *(const float *)tfd_tensor_const_data(t); }

static void *work(void *p) {
  worker *w = p;
  tfd_status *st = tfd_status_new();
  char init[32], inc[32], read[32], container[16];
  snprintf(init, sizeof init, "v%d/init", w->id);
  snprintf(inc, sizeof inc, "v%d/inc", w->id);
  snprintf(read, sizeof read, "v%d/read", w->id);
  snprintf(container, sizeof container, "c%d", w->id);
  float expected_var = -1; /* -1: not initialised */
  for (int i = 0; i < w->iters; i++) {
    float x = (float)(w->id * 100 + i % 50), y = (float)(i % 7);
    tfd_tensor *a = tg_scalar(x), *b = tg_scalar(y), *out[2] = {0};
    const char *feeds[] = {"a", "b"};
    tfd_tensor *vals[] = {a, b};
    switch (i % 4) {
      case 0: { /* a plain run over two partitions */
        const char *fetch[] = {"d", "c"};
        if (tfd_session_run(w->s, NULL, feeds, vals, 2, fetch, 2, NULL, 0, out, NULL, st) != TFD_OK) note_error(w, st, "run");
        else if (value(out[0]) != x * y + x || value(out[1]) != x * y) w->bad++;
        break;
      }
      case 1: /* the shared callable */
        if (tfd_session_run_callable(w->s, w->callable, NULL, vals, out, NULL, st) != TFD_OK) note_error(w, st, "callable");
        else if (value(out[0]) != x * y) w->bad++;
        break;
      case 2: { /* a partial run in two calls */
        const char *outs[] = {"c"};
        int64_t h = tfd_session_prun_setup(w->s, feeds, 2, outs, 1, NULL, 0, st);
        if (h < 0) {
          note_error(w, st, "prun_setup");
          break;
        }
        if (tfd_session_prun(w->s, h, feeds, &a, 1, NULL, 0, NULL, st) != TFD_OK) note_error(w, st, "prun a");
        else if (tfd_session_prun(w->s, h, feeds + 1, &b, 1, outs, 1, out, st) != TFD_OK) note_error(w, st, "prun b");
        else if (value(out[0]) != x * y) w->bad++;
        break;
      }
      default: { /* this thread's variable: init, add, read; reset its container now and then */
        if (i % 40 == 3) {
          const char *c[] = {container};
          if (tfd_session_reset(w->s, c, 1, st) != TFD_OK) note_error(w, st, "reset");
          expected_var = -1;
        }
        const char *targets[] = {expected_var < 0 ? init : inc};
        if (tfd_session_run(w->s, NULL, feeds, vals, 2, NULL, 0, targets, 1, NULL, NULL, st) != TFD_OK) {
          note_error(w, st, "assign");
          break;
        }
        expected_var = expected_var < 0 ? x : expected_var + y;
        const char *fetch[] = {read};
        if (tfd_session_run(w->s, NULL, NULL, NULL, 0, fetch, 1, NULL, 0, out, NULL, st) != TFD_OK) note_error(w, st, "read");
        else if (value(out[0]) != expected_var) w->bad++;
      }
    }
    w->runs++;
    tfd_tensor_unref(out[0]);
    tfd_tensor_unref(out[1]);
    tfd_tensor_unref(a);
    tfd_tensor_unref(b);
  }
  tfd_status_free(st);
  return NULL;
}

static void test_stress(void) {
  tfd_status *st = tfd_status_new();
  tfd_session_options *o = tfd_session_options_new();
  tfd_session_options_set_device_count(o, "CPU", 2, st);
  tfd_session_options_set_inter_op_threads(o, 2);
  tfd_session *s = NULL;
  tfd_session_new(o, NULL, NULL, &s, st);
  tfd_graph_def *g = graph();
  CHECK_INT(tfd_session_create(s, g, st), TFD_OK);
  CHECK_STR(tfd_status_message(st), "");
  const char *feeds[] = {"a", "b"}, *fetch[] = {"c"};
  int64_t callable = tfd_session_make_callable(s, feeds, 2, fetch, 1, NULL, 0, st);
  CHECK(callable >= 0);
  worker w[THREADS];
  pthread_t th[THREADS];
  int iters = iterations();
  for (int t = 0; t < THREADS; t++) {
    w[t] = (worker){s, t, iters, 0, 0, callable, ""};
    pthread_create(&th[t], NULL, work, &w[t]);
  }
  int bad = 0, runs = 0;
  for (int t = 0; t < THREADS; t++) {
    pthread_join(th[t], NULL);
    bad += w[t].bad;
    runs += w[t].runs;
    if (w[t].bad) fprintf(stderr, "thread %d: %d bad, last error: %s\n", t, w[t].bad, w[t].last_error);
  }
  CHECK_INT(bad, 0);
  CHECK_INT(runs, THREADS * iters);
  printf("stress: %d threads x %d iterations, %d operations checked\n", THREADS, iters, runs);
  tfd_graph_def_free(g);
  tfd_session_free(s); /* ASan's leak check covers everything the runs made */
  tfd_session_options_free(o);
  tfd_status_free(st);
}

static const tfd_test tests[] = {{"8 threads of mixed runs, callables, partial runs, resets", test_stress}};
TFD_TEST_MAIN(tests)
