/* Unit tests for the executor on its own: one partition run inline, on a pool, and many steps at once. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/exec/executor.h"
#include "runtime/testing/graph_builder.h"
#include "runtime/testing/harness.h"

static void done_count(void *arg, const tfd_status *st) {
  (void)st;
  atomic_fetch_add((atomic_int *)arg, 1);
}

static void test_executor_alone(void) {
  tfd_status *st = tfd_status_new();
  tfd_cpu_device_config cfg = {.name = "/job:e/replica:0/task:0/device:CPU:0", .num_threads = 2, .own_threadpool = true};
  tfd_device *dev = NULL;
  tfd_cpu_device_new(&cfg, &dev, st);
  tfd_graph_def *d = tfd_graph_def_new();
  int64_t one = 1;
  float v = 3;
  tg_const(d, "a", TFD_FLOAT32, &one, 1, &v);
  /* A diamond: a -> (neg, square) -> add -> _Fetch. */
  tg_node(d, "neg", "Neg", "a", NULL, NULL);
  tg_node(d, "sq", "Square", "a", NULL, NULL);
  tg_node(d, "sum", "Add", "neg", "sq", NULL);
  tfd_attr_value idx = {.type = TFD_ATTR_INT, .i = 0};
  tfd_node_def_set_attr(tg_node(d, "_f", "_Fetch", "sum", NULL, NULL), "index", &idx, st);
  tfd_executor *e = tfd_executor_new(tfd_graph_build(d, st), dev, NULL, st);
  CHECK(e != NULL);
  tfd_threadpool *pool = NULL;
  tfd_threadpool_new("inter", 2, &pool, st);
  for (int runner = 0; runner < 2; runner++) {
    tfd_tensor *out = NULL;
    tfd_executor_args args = {.fetches = &out, .num_fetches = 1, .runner = runner ? pool : NULL};
    CHECK_INT(tfd_executor_run(e, &args, 0, NULL, st), TFD_OK);
    CHECK(out && *(const float *)tfd_tensor_const_data(out) == 6.0f);
    tfd_tensor_unref(out);
  }
  /* Many steps in flight at once on one executor. */
  atomic_int done = 0;
  tfd_tensor *outs[50] = {0};
  for (int i = 0; i < 50; i++) {
    tfd_executor_args args = {.step_id = i, .fetches = &outs[i], .num_fetches = 1, .runner = pool};
    tfd_executor_run_async(e, &args, done_count, &done);
  }
  tfd_threadpool_free(pool); /* drains every scheduled node */
  CHECK_INT(atomic_load(&done), 50);
  for (int i = 0; i < 50; i++) {
    CHECK(outs[i] && *(const float *)tfd_tensor_const_data(outs[i]) == 6.0f);
    tfd_tensor_unref(outs[i]);
  }
  tfd_executor_free(e);
  tfd_graph_def_free(d);
  tfd_device_unref(dev);
  tfd_status_free(st);
}

static float f32_of(const tfd_tensor *t) { return t ? *(const float *)tfd_tensor_const_data(t) : -999.0f; }

static void fetch_node(tfd_graph_def *d, const char *name, const char *in, int index) {
  tfd_attr_value idx = {.type = TFD_ATTR_INT, .i = index};
  tfd_node_def_set_attr(tg_node(d, name, "_Fetch", in, NULL, NULL), "index", &idx, NULL);
}

/* Consts sit in their consumers' input slots from a step's start (seed_constants): consumers that
 * forward a private input must not write into them, a node reading one twice, a fetched Const, one
 * with a control input (which runs) or a control output all behave as when they ran, failed steps
 * leave them in place for the next, and traced steps still report them. */
static void test_seeded_constants(void) {
  tfd_status *st = tfd_status_new();
  tfd_cpu_device_config cfg = {.name = "/job:e/replica:0/task:0/device:CPU:0", .num_threads = 2, .own_threadpool = true};
  tfd_device *dev = NULL;
  tfd_cpu_device_new(&cfg, &dev, st);
  tfd_graph_def *d = tfd_graph_def_new();
  float three = 3, ten = 10;
  tg_const(d, "a", TFD_FLOAT32, NULL, 0, &three);
  tg_node(d, "neg", "Neg", "a", NULL, NULL);      /* a one-element private input would be reused */
  tg_node(d, "twice", "AddV2", "a", "a", NULL);   /* one Const in two slots of one node */
  tfd_node_def_add_input(tg_const(d, "c", TFD_FLOAT32, NULL, 0, &ten), "^neg", NULL); /* runs: it waits for neg */
  tg_node(d, "sum", "AddV2", "neg", "c", NULL);
  tg_node(d, "after", "Identity", "sum", "^a", NULL); /* a control edge from a Const */
  fetch_node(d, "_f0", "a", 0);
  fetch_node(d, "_f1", "neg", 1);
  fetch_node(d, "_f2", "twice", 2);
  fetch_node(d, "_f3", "after", 3);
  tfd_graph *g = tfd_graph_build(d, st);
  CHECK(g != NULL);
  int a = tfd_graph_find(g, "a"), c = tfd_graph_find(g, "c"), n = g ? g->n : 0;
  tfd_executor *e = tfd_executor_new(g, dev, NULL, st);
  CHECK(e != NULL);
  tfd_threadpool *pool = NULL;
  tfd_threadpool_new("inter", 2, &pool, st);
  for (int r = 0; e && r < 6; r++) {
    tfd_tensor *out[4] = {0};
    tfd_node_stats *stats = r >= 4 ? calloc((size_t)n, sizeof *stats) : NULL;
    tfd_executor_args args = {.fetches = out, .num_fetches = 4, .runner = r & 1 ? pool : NULL, .stats = stats};
    CHECK_INT(tfd_executor_run(e, &args, 0, NULL, st), TFD_OK);
    CHECK(f32_of(out[0]) == 3.0f && f32_of(out[1]) == -3.0f && f32_of(out[2]) == 6.0f && f32_of(out[3]) == 7.0f);
    if (stats) { /* the seeded Const is reported as the Const that ran */
      CHECK(stats[a].ran && stats[a].num_outputs == 1 && stats[a].outputs[0].bytes == 4);
      CHECK(stats[a].outputs[0].dtype == TFD_FLOAT32 && stats[a].outputs[0].shape.ndims == 0);
      CHECK(stats[c].ran);
      for (int i = 0; i < n; i++) tfd_allocator_unref(stats[i].tracker);
      free(stats);
    }
    for (int i = 0; i < 4; i++) tfd_tensor_unref(out[i]);
  }
  tfd_executor_free(e);
  tfd_graph_def_free(d);

  /* Steps that fail (feed 0 missing, or of the wrong dtype) leave the Const in its slots for the next. */
  d = tfd_graph_def_new();
  tg_const(d, "a", TFD_FLOAT32, NULL, 0, &three);
  tfd_node_def *feed = tg_node(d, "p", "_Feed", NULL, NULL, NULL);
  tg_set_type(feed, "dtype", TFD_FLOAT32);
  tfd_attr_value zero = {.type = TFD_ATTR_INT, .i = 0};
  tfd_node_def_set_attr(feed, "index", &zero, NULL);
  tg_node(d, "sum", "AddV2", "p", "a", NULL);
  tg_node(d, "neg", "Neg", "a", NULL, NULL);
  fetch_node(d, "_f0", "sum", 0);
  fetch_node(d, "_f1", "neg", 1);
  e = tfd_executor_new(tfd_graph_build(d, st), dev, NULL, st);
  CHECK(e != NULL);
  int32_t wrong = 1;
  tfd_tensor *fed[2] = {tfd_test_tensor(TFD_FLOAT32, NULL, 0, &ten, 4, st),
                        tfd_test_tensor(TFD_INT32, NULL, 0, &wrong, 4, st)};
  for (int r = 0; e && r < 9; r++) {
    tfd_tensor *out[2] = {0};
    int kind = r % 3; /* 0: fed, 1: not fed, 2: int32 fed */
    tfd_executor_args args = {.feeds = kind == 1 ? NULL : &fed[kind / 2], .num_feeds = kind == 1 ? 0 : 1,
                              .fetches = out, .num_fetches = 2, .runner = r & 1 ? pool : NULL};
    tfd_code code = tfd_executor_run(e, &args, 0, NULL, st);
    if (kind == 0) {
      CHECK_INT(code, TFD_OK);
      CHECK(f32_of(out[0]) == 13.0f && f32_of(out[1]) == -3.0f);
    } else {
      CHECK_STATUS(st, kind == 1 ? TFD_INTERNAL : TFD_INVALID_ARGUMENT,
                   kind == 1 ? "feed 0 was not supplied" : "fed an int32 tensor where float32 is expected");
    }
    tfd_status_reset(st);
    for (int i = 0; i < 2; i++) tfd_tensor_unref(out[i]);
  }
  for (int i = 0; i < 2; i++) tfd_tensor_unref(fed[i]);
  tfd_executor_free(e);
  tfd_graph_def_free(d);
  tfd_threadpool_free(pool);
  tfd_device_unref(dev);
  tfd_status_free(st);
}

static const tfd_test tests[] = {
    {"executor on its own", test_executor_alone},
    {"Consts seeded into their consumers' slots", test_seeded_constants},
};
TFD_TEST_MAIN(tests)
