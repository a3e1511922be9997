/* Unit tests for the executor on its own: one partition run inline, on a pool, and many steps at once. */
#include <stdatomic.h>
#include <stdlib.h>

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
  tfd_device *dev = tfd_cpu_device_new(&cfg, st);
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
  tfd_threadpool *pool = tfd_threadpool_new("inter", 2, st);
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

static const tfd_test tests[] = {
    {"executor on its own", test_executor_alone},
};
TFD_TEST_MAIN(tests)
