/* The session factory's Reset (DirectSessionFactory::Reset, TensorFlow's
 * DirectSessionMinusAXTest/SessionFactory Reset tests) and Finalize (DirectSessionTest.FinalizeMakeCallable,
 * FinalizeRun, FinalizeExtend-like): codes and texts as TensorFlow's. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/session/session_internal.h"
#include "runtime/testing/graph_builder.h"
#include "runtime/testing/harness.h"

/* y = -(x * x); z = x + x. */
static tfd_graph_def *graph(void) {
  tfd_graph_def *g = tfd_graph_def_new();
  tg_set_type(tg_node(g, "x", "Placeholder", NULL, NULL, NULL), "dtype", TFD_FLOAT32);
  tg_node(g, "sq", "Square", "x", NULL, NULL);
  tg_node(g, "y", "Neg", "sq", NULL, NULL);
  tg_node(g, "z", "AddV2", "x", "x", NULL);
  return g;
}

static tfd_code run(tfd_session *s, const char *fetch, tfd_status *st) {
  float v = 3;
  tfd_tensor *x = tg_vec(&v, 1);
  const char *feed = "x";
  tfd_tensor *out = NULL;
  tfd_code code = tfd_session_run(s, NULL, &feed, &x, 1, &fetch, 1, NULL, 0, &out, NULL, st);
  tfd_tensor_unref(out);
  tfd_tensor_unref(x);
  return code;
}

/* A tensor resource named `name` in `container` of the session's first device. */
static void put(tfd_session *s, const char *container, const char *name) {
  tfd_device *d = tfd_device_mgr_get(tfd_session_device_mgr(s), 0);
  int64_t one = 1;
  float v = 1;
  tfd_tensor *t = NULL;
  tfd_tensor_from_bytes(NULL, TFD_FLOAT32, &one, 1, &v, sizeof v, &t, NULL);
  tfd_resource *r = NULL;
  tfd_tensor_resource_new(t, &r, NULL);
  CHECK_INT(tfd_resource_mgr_create(tfd_device_resource_manager(d), container, name, r, NULL), TFD_OK);
  tfd_resource_unref(r);
  tfd_tensor_unref(t);
}

static bool has(tfd_device *d, const char *container, const char *name) {
  tfd_resource_mgr *rm = tfd_device_resource_manager(d);
  tfd_resource *r = tfd_resource_mgr_lookup(rm, container, "Tensor", name, NULL);
  tfd_resource_unref(r);
  return r != NULL;
}

/* Reset clears the named containers of every session the factory made, then closes them: their later calls
 * are CANCELLED "Session has been closed."; sessions of another runtime are untouched. */
static void test_reset(void) {
  tfd_status *st = tfd_status_new();
  tfd_graph_def *g = graph();
  tfd_runtime *rt = NULL;
  tfd_runtime_new(NULL, &rt, st);
  tfd_runtime *other_rt = NULL;
  tfd_runtime_new(NULL, &other_rt, st);
  tfd_session *a = NULL;
  tfd_runtime_session_new(rt, NULL, NULL, &a, st);
  tfd_session *b = NULL;
  tfd_runtime_session_new(rt, NULL, NULL, &b, st);
  tfd_session *other = NULL;
  tfd_runtime_session_new(other_rt, NULL, NULL, &other, st);
  CHECK(a && b && other);
  CHECK_INT(tfd_session_create(a, g, st), TFD_OK);
  CHECK_INT(tfd_session_create(b, g, st), TFD_OK);
  CHECK_INT(tfd_session_create(other, g, st), TFD_OK);
  put(a, "train", "w");
  put(a, "keep", "k");
  put(other, "train", "w");
  tfd_device *da = tfd_device_mgr_get(tfd_session_device_mgr(a), 0);
  tfd_device_ref(da); /* the device outlives the session for the check */
  CHECK(has(da, "train", "w"));
  const char *containers[] = {"train"};
  CHECK_INT(tfd_runtime_session_factory_reset(rt, NULL, containers, 1, st), TFD_OK);
  CHECK(!has(da, "train", "w"));
  CHECK(has(da, "keep", "k"));
  CHECK_INT(run(a, "y", st), TFD_CANCELLED);
  CHECK_STATUS(st, TFD_CANCELLED, "Session has been closed.");
  CHECK_INT(run(b, "y", st), TFD_CANCELLED);
  CHECK_INT(tfd_session_extend(b, g, st), TFD_CANCELLED);
  CHECK(tfd_session_make_callable(b, NULL, 0, (const char *[]){"z"}, 1, NULL, 0, st) < 0);
  CHECK_STATUS(st, TFD_CANCELLED, "Session has been closed.");
  /* Another runtime's sessions run on, their containers kept. */
  CHECK_INT(run(other, "y", st), TFD_OK);
  CHECK(has(tfd_device_mgr_get(tfd_session_device_mgr(other), 0), "train", "w"));
  /* Resetting again finds only closed sessions: no error. A session made after the reset is not touched by
   * the earlier one, and is by the next. */
  CHECK_INT(tfd_runtime_session_factory_reset(rt, NULL, NULL, 0, st), TFD_OK);
  tfd_session *c = NULL;
  tfd_runtime_session_new(rt, NULL, NULL, &c, st);
  CHECK_INT(tfd_session_create(c, g, st), TFD_OK);
  CHECK_INT(run(c, "z", st), TFD_OK);
  CHECK_INT(tfd_session_factory_reset(NULL, tfd_runtime_registry(rt), NULL, 0, st), TFD_OK);
  CHECK_INT(run(c, "z", st), TFD_CANCELLED);
  CHECK_INT(tfd_runtime_session_factory_reset(NULL, NULL, NULL, 0, st), TFD_INVALID_ARGUMENT);
  CHECK_INT(tfd_runtime_session_factory_reset(rt, NULL, NULL, 2, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "tfd_runtime_session_factory_reset: containers is NULL but n is 2");
  tfd_session_free(a);
  tfd_session_free(b);
  tfd_session_free(c);
  tfd_session_free(other);
  tfd_device_unref(da);
  tfd_runtime_unref(rt);
  tfd_runtime_unref(other_rt);

  /* Sessions made without a runtime belong to the process's default factory. */
  tfd_session *d = NULL;
  tfd_session_new(NULL, NULL, NULL, &d, st);
  CHECK_INT(tfd_session_create(d, g, st), TFD_OK);
  CHECK_INT(tfd_session_factory_reset(NULL, NULL, NULL, 0, st), TFD_OK);
  CHECK_INT(run(d, "z", st), TFD_CANCELLED);
  tfd_session_free(d);
  tfd_graph_def_free(g);
  tfd_status_free(st);
}

typedef struct churn {
  tfd_runtime *rt;
  const tfd_graph_def *g;
} churn;

static void *make_and_free(void *arg) {
  churn *c = arg;
  tfd_status *st = tfd_status_new();
  for (int i = 0; i < 100; i++) {
    tfd_session *s = NULL;
    if (tfd_runtime_session_new(c->rt, NULL, NULL, &s, st) != TFD_OK) continue;
    tfd_session_create(s, c->g, st);
    run(s, "z", st); /* OK, or CANCELLED when a reset got there first */
    tfd_session_free(s);
  }
  tfd_status_free(st);
  return NULL;
}

/* Sessions made and freed on other threads while resets run: a reset never touches a freed session (the
 * sanitizer builds would see it). */
static void test_reset_races_free(void) {
  tfd_status *st = tfd_status_new();
  tfd_graph_def *g = graph();
  tfd_runtime *rt = NULL;
  tfd_runtime_new(NULL, &rt, st);
  churn c = {rt, g};
  pthread_t t[2];
  for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, make_and_free, &c);
  for (int i = 0; i < 200; i++) CHECK_INT(tfd_runtime_session_factory_reset(rt, NULL, NULL, 0, st), TFD_OK);
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  tfd_runtime_unref(rt);
  tfd_graph_def_free(g);
  tfd_status_free(st);
}

/* Finalize: what was built runs on, callables made before included; new executors and Extend are
 * FAILED_PRECONDITION "Session has been finalized."; Finalize before Create and twice have TensorFlow's texts. */
static void test_finalize(void) {
  tfd_status *st = tfd_status_new();
  tfd_graph_def *g = graph();
  tfd_session *s = NULL;
  tfd_session_new(NULL, NULL, NULL, &s, st);
  CHECK_INT(tfd_session_finalize(s, st), TFD_FAILED_PRECONDITION);
  CHECK_STATUS(st, TFD_FAILED_PRECONDITION, "Session not yet created.");
  CHECK_INT(tfd_session_create(s, g, st), TFD_OK);
  CHECK_INT(run(s, "y", st), TFD_OK);
  const char *feed = "x", *fetch = "z";
  int64_t h = tfd_session_make_callable(s, &feed, 1, &fetch, 1, NULL, 0, st);
  CHECK(h >= 0);
  CHECK_INT(tfd_session_finalize(s, st), TFD_OK);
  CHECK_INT(tfd_session_finalize(s, st), TFD_FAILED_PRECONDITION);
  CHECK_STATUS(st, TFD_FAILED_PRECONDITION, "Session already finalized.");
  CHECK_INT(run(s, "y", st), TFD_OK); /* built before: cached */
  CHECK_INT(run(s, "z", st), TFD_OK); /* the callable's signature: built by make_callable */
  CHECK_INT(run(s, "sq", st), TFD_FAILED_PRECONDITION);
  CHECK_STATUS(st, TFD_FAILED_PRECONDITION, "Session has been finalized.");
  int64_t one = 1;
  float v = 2;
  tfd_tensor *x = NULL, *out = NULL;
  tfd_tensor_from_bytes(NULL, TFD_FLOAT32, &one, 1, &v, sizeof v, &x, NULL);
  CHECK_INT(tfd_session_run_callable(s, h, NULL, &x, &out, NULL, st), TFD_OK);
  CHECK(out && *(const float *)tfd_tensor_const_data(out) == 4.0f);
  tfd_tensor_unref(out);
  tfd_tensor_unref(x);
  const char *fetch_y = "y", *fetch_sq = "sq";
  CHECK(tfd_session_make_callable(s, &feed, 1, &fetch_sq, 1, NULL, 0, st) < 0); /* a new signature */
  CHECK_STATUS(st, TFD_FAILED_PRECONDITION, "Session has been finalized.");
  CHECK(tfd_session_prun_setup(s, &feed, 1, &fetch_y, 1, NULL, 0, st) < 0);
  CHECK_STATUS(st, TFD_FAILED_PRECONDITION, "Session has been finalized.");
  tfd_graph_def *more = tfd_graph_def_new();
  tfd_node_def *c = tfd_graph_def_add_node(more, "c", "NoOp", NULL);
  (void)c;
  CHECK_INT(tfd_session_extend(s, more, st), TFD_FAILED_PRECONDITION);
  CHECK_STATUS(st, TFD_FAILED_PRECONDITION, "Session has been finalized.");
  tfd_session_close(s, st);
  CHECK_INT(tfd_session_finalize(s, st), TFD_CANCELLED);
  tfd_session_free(s);
  tfd_graph_def_free(more);
  tfd_graph_def_free(g);
  tfd_status_free(st);
}

static const tfd_test tests[] = {
    {"factory reset", test_reset},
    {"factory reset while sessions come and go", test_reset_races_free},
    {"finalize", test_finalize},
};
TFD_TEST_MAIN(tests)
