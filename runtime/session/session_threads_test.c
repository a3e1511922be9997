/* Inter-op pools: session_inter_op_thread_pool (pools by index, shared by global name within a
 * runtime) and the run option inter_op_thread_pool, with TensorFlow's codes and texts
 * (DirectSessionTest.MultipleThreadPools / SessionPoolOptions / RunOptionsInterOpThreadPool). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/session/session_internal.h"
#include "runtime/testing/graph_builder.h"
#include "runtime/testing/harness.h"

/* y = -(x * x) on one CPU. */
static tfd_graph_def *graph(void) {
  tfd_graph_def *g = tfd_graph_def_new();
  tg_set_type(tg_node(g, "x", "Placeholder", NULL, NULL, NULL), "dtype", TFD_FLOAT32);
  tg_node(g, "sq", "Square", "x", NULL, NULL);
  tg_node(g, "y", "Neg", "sq", NULL, NULL);
  return g;
}

/* Runs y with x = 3 on run option pool; its code (st set), checking -9 on success. */
static tfd_code run_on(tfd_session *s, int pool, tfd_status *st) {
  float v = 3;
  tfd_tensor *x = tg_vec(&v, 1);
  const char *feed = "x", *fetch = "y";
  tfd_tensor *out = NULL;
  tfd_run_options ro = {.inter_op_thread_pool = pool};
  tfd_code code = tfd_session_run(s, &ro, &feed, &x, 1, &fetch, 1, NULL, 0, &out, NULL, st);
  if (code == TFD_OK) {
    CHECK(out && *(const float *)tfd_tensor_const_data(out) == -9.0f);
    tfd_tensor_unref(out);
  }
  tfd_tensor_unref(x);
  return code;
}

/* DirectSessionTest.RunOptionsInterOpThreadPool-like: -1 runs on the caller's thread, k on pool k, anything else
 * is "Invalid inter_op_thread_pool: N" (TensorFlow's RunInternal text), and a refused run leaves the session
 * working. */
static void test_run_option_range(void) {
  tfd_status *st = tfd_status_new();
  tfd_graph_def *g = graph();
  tfd_session *s = NULL;
  tfd_session_new(NULL, NULL, NULL, &s, st);
  CHECK_INT(tfd_session_create(s, g, st), TFD_OK);
  CHECK_INT(run_on(s, 0, st), TFD_OK);
  CHECK_INT(run_on(s, -1, st), TFD_OK);
  CHECK_INT(run_on(s, 1, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "Invalid inter_op_thread_pool: 1");
  CHECK_INT(run_on(s, -2, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "Invalid inter_op_thread_pool: -2");
  CHECK_INT(run_on(s, 0, st), TFD_OK);
  tfd_session_free(s);

  /* Three pools listed: 0..2 run, 3 does not; the asynchronous path checks the same. */
  tfd_session_options *o = tfd_session_options_new();
  CHECK_INT(tfd_session_options_add_inter_op_pool(o, 1, NULL, st), TFD_OK);
  CHECK_INT(tfd_session_options_add_inter_op_pool(o, 2, "", st), TFD_OK);
  CHECK_INT(tfd_session_options_add_inter_op_pool(o, 0, NULL, st), TFD_OK); /* 0: the default */
  CHECK_INT(tfd_session_options_num_inter_op_pools(o), 3);
  tfd_session_new(o, NULL, NULL, &s, st);
  CHECK(s != NULL);
  CHECK_INT(tfd_session_create(s, g, st), TFD_OK);
  CHECK_INT(s->num_pools, 3);
  CHECK(s->pools[0].pool != s->pools[1].pool && s->pools[1].pool != s->pools[2].pool);
  for (int k = -1; k < 3; k++) CHECK_INT(run_on(s, k, st), TFD_OK);
  CHECK_INT(run_on(s, 3, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "Invalid inter_op_thread_pool: 3");
  const char *fetch = "y", *feed = "x";
  int64_t one = 1;
  float v = 3;
  tfd_tensor *x = NULL;
  tfd_tensor_from_bytes(NULL, TFD_FLOAT32, &one, 1, &v, sizeof v, &x, NULL);
  tfd_run_options ro = {.inter_op_thread_pool = 7};
  CHECK(tfd_session_run_async(s, &ro, &feed, &x, 1, &fetch, 1, NULL, 0, NULL, NULL, NULL, &(tfd_run *){NULL}, st) != TFD_OK);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "Invalid inter_op_thread_pool: 7");
  /* A callable takes the run's options per call. */
  int64_t h = tfd_session_make_callable(s, &feed, 1, &fetch, 1, NULL, 0, st);
  CHECK(h >= 0);
  tfd_tensor *out = NULL;
  ro.inter_op_thread_pool = 2;
  CHECK_INT(tfd_session_run_callable(s, h, &ro, &x, &out, NULL, st), TFD_OK);
  tfd_tensor_unref(out);
  out = NULL;
  ro.inter_op_thread_pool = 3;
  CHECK_INT(tfd_session_run_callable(s, h, &ro, &x, &out, NULL, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "Invalid inter_op_thread_pool: 3");
  tfd_tensor_unref(x);
  tfd_session_free(s);

  /* A synchronous session (inter_op_threads -1) with pools listed starts no thread, yet knows their count. */
  tfd_session_options_set_inter_op_threads(o, -1);
  tfd_session_new(o, NULL, NULL, &s, st);
  CHECK_INT(tfd_session_create(s, g, st), TFD_OK);
  CHECK(s->pools[0].pool == NULL && s->pools[2].pool == NULL);
  CHECK_INT(run_on(s, 2, st), TFD_OK);
  CHECK_INT(run_on(s, 3, st), TFD_INVALID_ARGUMENT);
  tfd_session_free(s);
  tfd_session_options_free(o);
  tfd_graph_def_free(g);
  tfd_status_free(st);
}

/* The options refuse what TensorFlow's proto could not mean, and copies keep the list. */
static void test_options(void) {
  tfd_status *st = tfd_status_new();
  tfd_session_options *o = tfd_session_options_new();
  CHECK_INT(tfd_session_options_add_inter_op_pool(o, -1, "a", st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "session_inter_op_thread_pool[0].num_threads must be in [0, 1024]");
  CHECK_INT(tfd_session_options_add_inter_op_pool(o, TFD_MAX_THREADS + 1, NULL, st), TFD_INVALID_ARGUMENT);
  CHECK_INT(tfd_session_options_num_inter_op_pools(o), 0);
  CHECK_INT(tfd_session_options_add_inter_op_pool(o, 3, "shared", st), TFD_OK);
  tfd_session_options *c = tfd_session_options_copy(o);
  int n = -1;
  const char *name = NULL;
  CHECK(tfd_session_options_inter_op_pool(c, 0, &n, &name));
  CHECK_INT(n, 3);
  CHECK_STR(name, "shared");
  CHECK(!tfd_session_options_inter_op_pool(c, 1, &n, &name));
  tfd_session_options_clear_inter_op_pools(c);
  CHECK_INT(tfd_session_options_num_inter_op_pools(c), 0);
  for (int i = 1; i < TFD_MAX_INTER_OP_POOLS; i++) CHECK_INT(tfd_session_options_add_inter_op_pool(o, 1, NULL, st), TFD_OK);
  CHECK_INT(tfd_session_options_add_inter_op_pool(o, 1, NULL, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "at most 64 pools");
  tfd_session_options_free(c);
  tfd_session_options_free(o);
  tfd_status_free(st);
}

/* DirectSessionTest.SessionPoolOptions-like: sessions of one runtime naming the same global pool share it; a
 * different num_threads for that name is TensorFlow's "Pool NAME configured previously with num_threads=";
 * another runtime, or no runtime, has pools of its own. */
static void test_global_names(void) {
  tfd_status *st = tfd_status_new();
  tfd_graph_def *g = graph();
  tfd_runtime *rt = NULL;
  tfd_runtime_new(NULL, &rt, st);
  tfd_runtime *rt2 = NULL;
  tfd_runtime_new(NULL, &rt2, st);
  tfd_session_options *o = tfd_session_options_new();
  tfd_session_options_add_inter_op_pool(o, 2, "large", st);
  tfd_session_options_add_inter_op_pool(o, 1, NULL, st);
  tfd_session *a = NULL;
  tfd_runtime_session_new(rt, o, NULL, &a, st);
  tfd_session *b = NULL;
  tfd_runtime_session_new(rt, o, NULL, &b, st);
  tfd_session *other = NULL;
  tfd_runtime_session_new(rt2, o, NULL, &other, st);
  tfd_session *none = NULL;
  tfd_session_new(o, NULL, NULL, &none, st);
  CHECK(a && b && other && none);
  CHECK(a->pools[0].pool == b->pools[0].pool);
  CHECK(a->pools[1].pool != b->pools[1].pool); /* no name: each session's own */
  CHECK(other->pools[0].pool != a->pools[0].pool);
  CHECK(none->pools[0].pool != a->pools[0].pool && none->pools[0].owner == POOL_OWNED);
  CHECK_INT(tfd_session_create(a, g, st), TFD_OK);
  CHECK_INT(tfd_session_create(b, g, st), TFD_OK);
  CHECK_INT(run_on(a, 0, st), TFD_OK);
  tfd_session_free(a); /* the shared pool stays for b */
  CHECK_INT(run_on(b, 0, st), TFD_OK);
  CHECK_INT(run_on(b, 1, st), TFD_OK);

  tfd_session_options *o3 = tfd_session_options_new();
  tfd_session_options_add_inter_op_pool(o3, 3, "large", st);
  CHECK(tfd_runtime_session_new(rt, o3, NULL, &(tfd_session *){NULL}, st) != TFD_OK);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "Pool large configured previously with num_threads=2; cannot re-configure with num_threads=3");
  tfd_session_free(b);
  tfd_session_free(other);
  tfd_session_free(none);
  tfd_session_options_free(o3);
  tfd_session_options_free(o);
  tfd_runtime_unref(rt);
  tfd_runtime_unref(rt2);
  tfd_graph_def_free(g);
  tfd_status_free(st);
}

static const tfd_test tests[] = {
    {"run option inter_op_thread_pool", test_run_option_range},
    {"session_inter_op_thread_pool options", test_options},
    {"pools shared by global name", test_global_names},
};
TFD_TEST_MAIN(tests)
