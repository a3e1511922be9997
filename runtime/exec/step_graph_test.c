/* Step graphs (step_graph.c) on the fake GPU, whose device math records what a capturing thread asks
 * for and runs it again on each launch, as CUDA graphs do (ctest runs this with TFDEV_BACKENDS=fakegpu):
 * the first step of a signature runs node by node, the second is captured, the rest replay, each with
 * its own feeds (from host memory or the device's) and the right results; a new shape is a new signature, and four are kept (the least
 * recently used replaced); a node that reads device memory on the host makes the capture fail and
 * the steps run node by node, still right; stateful partitions and int32 feeds never use graphs;
 * steps on two threads at once stay right. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "runtime/core/log.h"
#include "runtime/core/tensor_internal.h"
#include "runtime/exec/executor.h"
#include "runtime/kernels/device_math.h"
#include "runtime/kernels/kernel.h"
#include "runtime/testing/graph_builder.h"
#include "runtime/testing/harness.h"

static tfd_device *find_gpu(tfd_session *s) {
  tfd_device_mgr *m = tfd_session_device_mgr(s);
  for (size_t i = 0; m && i < tfd_device_mgr_size(m); i++)
    if (strcmp(tfd_device_type(tfd_device_mgr_get(m, i)), "GPU") == 0) return tfd_device_mgr_get(m, i);
  return NULL;
}

static void set_int(tfd_node_def *n, const char *attr, int64_t v) {
  tfd_attr_value a = {.type = TFD_ATTR_INT, .i = v};
  tfd_node_def_set_attr(n, attr, &a, NULL);
}

/* y = neg(x) + exp(neg(x)), then y @ w (w = [[1, 2], [3, 4]]) when matmul: a partition as a session
 * makes it (_Feed and _Fetch on the device), x of dtype dt. */
static tfd_graph *partition(tfd_dtype dt, bool matmul, bool stateful, bool host_read) {
  tfd_graph_def *g = tfd_graph_def_new();
  tfd_node_def *f = tg_node(g, "feed", "_Feed", NULL, NULL, NULL);
  set_int(f, "index", 0);
  tg_set_type(f, "dtype", dt);
  tg_node(g, "neg", "Neg", "feed", NULL, NULL);
  const char *last = "neg";
  if (dt == TFD_FLOAT32) {
    tg_node(g, "exp", "Exp", "neg", NULL, NULL);
    tg_node(g, "y", "AddV2", "neg", "exp", NULL);
    last = "y";
  }
  if (matmul) {
    float w[] = {1, 2, 3, 4};
    int64_t d[] = {2, 2};
    tg_set_tensor(tg_node(g, "w", "Const", NULL, NULL, NULL), "value", tg_f32(w, d, 2));
    tg_node(g, "mm", "MatMul", last, "w", NULL);
    last = "mm";
  }
  if (host_read) { /* Reshape to a shape held in int64: device memory, which Reshape reads on the host */
    int64_t shape[] = {-1}, d1[] = {1};
    tg_set_tensor(tg_node(g, "shape", "Const", NULL, NULL, NULL), "value",
                  tfd_test_tensor(TFD_INT64, d1, 1, shape, sizeof shape, NULL));
    tg_node(g, "flat", "Reshape", last, "shape", NULL);
    last = "flat";
  }
  if (stateful) {
    int32_t shape[] = {2};
    int64_t d1[] = {1};
    tg_set_tensor(tg_node(g, "rshape", "Const", NULL, NULL, NULL), "value",
                  tfd_test_tensor(TFD_INT32, d1, 1, shape, sizeof shape, NULL));
    tg_set_type(tg_node(g, "rand", "RandomUniform", "rshape", NULL, NULL), "dtype", TFD_FLOAT32);
    tfd_node_def *rf = tg_node(g, "rfetch", "_Fetch", "rand", NULL, NULL);
    set_int(rf, "index", 1);
    tg_set_type(rf, "T", TFD_FLOAT32);
  }
  tfd_node_def *out = tg_node(g, "fetch", "_Fetch", last, NULL, NULL);
  set_int(out, "index", 0);
  tg_set_type(out, "T", dt);
  tfd_graph *graph = tfd_graph_build(g, NULL);
  tfd_graph_def_free(g);
  return graph;
}

/* What the partition computes, on the host, for x[n] (rows of 2 when matmul). */
static void expected(const float *x, int64_t n, bool matmul, float *y) {
  float t[64];
  for (int64_t i = 0; i < n; i++) t[i] = -x[i] + expf(-x[i]);
  for (int64_t i = 0; i < n; i++) y[i] = t[i];
  if (matmul)
    for (int64_t r = 0; r < n / 2; r++) y[2 * r] = t[2 * r] + 3 * t[2 * r + 1], y[2 * r + 1] = 2 * t[2 * r] + 4 * t[2 * r + 1];
}

/* One step with x = seed-dependent values of n floats, fed from host memory or, given feed_memory,
 * from a copy there; checks the fetch; false on any mismatch. */
static bool step_fed(tfd_executor *e, int seed, int64_t rows, bool matmul, tfd_allocator *feed_memory, tfd_status *st) {
  float xv[64], want[64];
  int64_t n = rows * 2, dims[] = {rows, 2};
  for (int64_t i = 0; i < n; i++) xv[i] = (float)((seed * 7 + i * 3) % 11) / 4.0f - 1.0f;
  expected(xv, n, matmul, want);
  tfd_tensor *x = tg_f32(xv, dims, 2), *fetches[2] = {NULL, NULL};
  if (feed_memory) {
    tfd_tensor *on_device = tfd_tensor_copy_to(x, feed_memory, st);
    tfd_tensor_unref(x);
    if (!(x = on_device)) return false;
  }
  tfd_executor_args args = {.step_id = seed, .feeds = &x, .num_feeds = 1, .fetches = fetches, .num_fetches = 2};
  bool ok = tfd_executor_run(e, &args, 0, NULL, st) == TFD_OK && fetches[0] && tfd_tensor_numel(fetches[0]) == n;
  for (int64_t i = 0; ok && i < n; i++) ok = fabsf(((const float *)tfd_tensor_const_data(fetches[0]))[i] - want[i]) < 1e-5f;
  if (!ok) fprintf(stderr, "step %d: %s\n", seed, tfd_status_message(st));
  tfd_tensor_unref(x);
  tfd_tensor_unref(fetches[0]);
  tfd_tensor_unref(fetches[1]);
  tfd_status_reset(st);
  return ok;
}

static bool step(tfd_executor *e, int seed, int64_t rows, bool matmul, tfd_status *st) {
  return step_fed(e, seed, rows, matmul, NULL, st);
}

static void counts(tfd_executor *e, int64_t want_captured, int64_t want_replayed) {
  int64_t c, r;
  tfd_executor_step_graph_counts(e, &c, &r);
  CHECK_INT(c, want_captured);
  CHECK_INT(r, want_replayed);
}

typedef struct env {
  tfd_status *st;
  tfd_session *s;
  tfd_device *gpu;
} env;

static bool env_open(env *v) {
  v->st = tfd_status_new();
  tfd_session_new(NULL, NULL, NULL, &v->s, v->st);
  v->gpu = v->s ? find_gpu(v->s) : NULL;
  CHECK(v->gpu && v->gpu->math && v->gpu->math->capture_begin);
  return v->gpu && v->gpu->math && v->gpu->math->capture_begin;
}

static void env_close(env *v) {
  tfd_session_free(v->s);
  tfd_status_free(v->st);
}

static tfd_executor *executor(env *v, tfd_graph *g) {
  CHECK(g != NULL);
  tfd_executor *e = g ? tfd_executor_new(g, v->gpu, NULL, v->st) : NULL;
  CHECK(e != NULL);
  if (e) tfd_executor_use_step_graphs(e);
  return e;
}

static void test_capture_then_replay(void) {
  env v;
  if (!env_open(&v)) return env_close(&v);
  tfd_executor *e = executor(&v, partition(TFD_FLOAT32, true, false, false));
  if (!e) return env_close(&v);
  CHECK(step(e, 1, 3, true, v.st)); /* warms the kernels up, node by node */
  counts(e, 0, 0);
  /* The step runs on the calling thread, so its debug lines land here. */
  tfd_test_lines logged = {""};
  tfd_host_logger lg = {tfd_test_keep_line, TFD_LOG_DEBUG, &logged};
  const tfd_host_logger *prev = tfd_log_use(&lg);
  CHECK(step(e, 2, 3, true, v.st)); /* recorded, then launched */
  tfd_log_use(prev);
  CHECK_CONTAINS(logged.text, "step graph: recorded ");
  counts(e, 1, 0);
  for (int i = 3; i < 9; i++) CHECK(step(e, i, 3, true, v.st)); /* replayed, each with its own feed */
  counts(e, 1, 6);
  CHECK(step(e, 9, 5, true, v.st)); /* another shape: node by node first */
  counts(e, 1, 6);
  CHECK(step(e, 10, 5, true, v.st));
  CHECK(step(e, 11, 5, true, v.st));
  counts(e, 2, 7);
  CHECK(step(e, 12, 3, true, v.st)); /* back: the first shape's graph is kept, and replayed */
  counts(e, 2, 8);
  CHECK(step(e, 13, 5, true, v.st));
  counts(e, 2, 9);
  /* Two more shapes fill the four signatures kept; a fifth replaces the least recently used (3 rows). */
  for (int64_t rows = 1; rows <= 2; rows++) CHECK(step(e, 14, rows, true, v.st) && step(e, 15, rows, true, v.st));
  counts(e, 4, 9);
  CHECK(step(e, 16, 4, true, v.st) && step(e, 17, 4, true, v.st));
  counts(e, 5, 9);
  CHECK(step(e, 18, 5, true, v.st)); /* still kept */
  counts(e, 5, 10);
  CHECK(step(e, 19, 3, true, v.st)); /* replaced: node by node, then recorded again */
  counts(e, 5, 10);
  CHECK(step(e, 20, 3, true, v.st));
  counts(e, 6, 10);
  tfd_executor_free(e);
  env_close(&v);
}

/* Replays copy a feed in host memory straight into the graph's input, and one already in the
 * device's memory through a device copy: both give each step's own results, in either order. */
static void test_feeds_from_host_and_device(void) {
  env v;
  if (!env_open(&v)) return env_close(&v);
  tfd_executor *e = executor(&v, partition(TFD_FLOAT32, true, false, false));
  if (!e) return env_close(&v);
  tfd_allocator *dev = tfd_device_get_allocator(v.gpu);
  CHECK(step_fed(e, 1, 2, true, dev, v.st) && step_fed(e, 2, 2, true, dev, v.st)); /* warmed up, recorded */
  counts(e, 1, 0);
  for (int i = 3; i < 9; i++) CHECK(step_fed(e, i, 2, true, i % 2 ? dev : NULL, v.st));
  counts(e, 1, 6);
  tfd_executor_free(e);
  env_close(&v);
}

/* A Reshape whose shape lives in device memory reads it on the host: copying device memory to the
 * host cannot be recorded, so the capture fails and every step runs node by node, still right. */
static void test_uncapturable_runs_node_by_node(void) {
  env v;
  if (!env_open(&v)) return env_close(&v);
  tfd_executor *e = executor(&v, partition(TFD_FLOAT32, true, false, true));
  if (!e) return env_close(&v);
  for (int i = 1; i < 6; i++) CHECK(step(e, i, 2, true, v.st));
  counts(e, 0, 0);
  tfd_executor_free(e);
  env_close(&v);
}

/* A partition with a random op keeps stepping its stream: no graph for it, and a debug line says
 * which node stopped it. */
static void test_stateful_partitions_never_replay(void) {
  env v;
  if (!env_open(&v)) return env_close(&v);
  /* The executor is made on this thread, so its debug lines land here. */
  tfd_test_lines logged = {""};
  tfd_host_logger lg = {tfd_test_keep_line, TFD_LOG_DEBUG, &logged};
  const tfd_host_logger *prev = tfd_log_use(&lg);
  tfd_executor *e = executor(&v, partition(TFD_FLOAT32, false, true, false));
  tfd_log_use(prev);
  CHECK_CONTAINS(logged.text, "no step graph for this partition: node ");
  CHECK_CONTAINS(logged.text, "is stateful");
  if (!e) return env_close(&v);
  for (int i = 1; i < 5; i++) CHECK(step(e, i, 2, false, v.st));
  counts(e, 0, 0);
  tfd_executor_free(e);
  env_close(&v);
}

/* int32 feeds live in host memory, where kernels work on the host: those steps always run as usual. */
static void test_host_feeds_never_replay(void) {
  env v;
  if (!env_open(&v)) return env_close(&v);
  tfd_executor *e = executor(&v, partition(TFD_INT32, false, false, false));
  if (!e) return env_close(&v);
  for (int i = 1; i < 5; i++) {
    int32_t xv[2] = {i, -2 * i};
    int64_t d[] = {2};
    tfd_tensor *x = NULL, *fetches[2] = {NULL, NULL};
    tfd_tensor_from_bytes(NULL, TFD_INT32, d, 1, xv, sizeof xv, &x, v.st);
    tfd_executor_args args = {.feeds = &x, .num_feeds = 1, .fetches = fetches, .num_fetches = 2};
    CHECK_INT(tfd_executor_run(e, &args, 0, NULL, v.st), TFD_OK);
    CHECK(fetches[0] && ((const int32_t *)tfd_tensor_const_data(fetches[0]))[1] == 2 * i);
    tfd_tensor_unref(x);
    tfd_tensor_unref(fetches[0]);
  }
  counts(e, 0, 0);
  tfd_executor_free(e);
  env_close(&v);
}

typedef struct worker {
  tfd_executor *e;
  int first, bad;
} worker;

static void *work(void *arg) {
  worker *w = arg;
  tfd_status *st = tfd_status_new();
  for (int i = 0; i < 200; i++) w->bad += !step(w->e, w->first + i, 4, true, st);
  tfd_status_free(st);
  return NULL;
}

/* Two threads step one executor: one at a time replays, the other runs node by node meanwhile. */
static void test_concurrent_steps(void) {
  env v;
  if (!env_open(&v)) return env_close(&v);
  tfd_executor *e = executor(&v, partition(TFD_FLOAT32, true, false, false));
  if (!e) return env_close(&v);
  worker w[2] = {{e, 0, 0}, {e, 1000, 0}};
  pthread_t t[2];
  for (int i = 0; i < 2; i++) CHECK_INT(pthread_create(&t[i], NULL, work, &w[i]), 0);
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  CHECK_INT(w[0].bad + w[1].bad, 0);
  int64_t c, r;
  tfd_executor_step_graph_counts(e, &c, &r);
  CHECK(c >= 1 && r > 0);
  tfd_executor_free(e);
  env_close(&v);
}

static const tfd_test tests[] = {
    {"first step warms up, the second records, the rest replay; a new shape is a new graph", test_capture_then_replay},
    {"replays take feeds from host memory and from the device's", test_feeds_from_host_and_device},
    {"a node that reads device memory on the host: node by node, still right", test_uncapturable_runs_node_by_node},
    {"partitions with stateful ops never replay", test_stateful_partitions_never_replay},
    {"int32 feeds (host memory) never replay", test_host_feeds_never_replay},
    {"two threads stepping one executor", test_concurrent_steps},
};

TFD_TEST_MAIN(tests)
