/* The CUDA backend's host side, run for real on a machine without a GPU: this test links the null
 * CUDA runtime (gpu/null_cudart.c), which reports one GPU, copies with memcpy, runs no kernel and
 * counts the calls that matter here. So CI and the
 * sanitizers cover what otherwise runs only in the GPU suite: the backend's devices and contexts,
 * its BFC allocator over cudaMalloc, copies both ways, events, step-graph capture and replay, and
 * regions parked for the next session. Kernels compute nothing under it, so values are checked
 * only where data moves without a kernel. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "runtime/testing/graph_builder.h"
#include "runtime/testing/harness.h"

/* gpu/null_cudart.c: this test links the null runtime, so the backend module's libcudart.so.13 is
 * the one already loaded. */
unsigned long long tfd_null_cudart_count(const char *what);

/* Runs the step feeding x (n floats, values v) and fetching `fetch`; the output or NULL. */
static tfd_tensor *step(tfd_session *s, const float *v, int64_t n, const char *fetch, tfd_status *st) {
  tfd_tensor *x = tfd_tensor_from_bytes(NULL, TFD_FLOAT32, &n, 1, v, (size_t)n * sizeof *v, NULL);
  const char *feed = "x";
  tfd_tensor *out = NULL;
  if (tfd_session_run(s, NULL, &feed, &x, 1, &fetch, 1, NULL, 0, &out, NULL, st) != TFD_OK) out = NULL;
  tfd_tensor_unref(x);
  return out;
}

/* `count` such steps, their outputs dropped (the status keeps the first failure's code). */
static void run_steps(tfd_session *s, int count, const float *v, int64_t n, const char *fetch, tfd_status *st) {
  for (int i = 0; s && i < count; i++) tfd_tensor_unref(step(s, v, n, fetch, st));
}

/* The backend loads against the null runtime and makes its one GPU. */
static void test_backend_on_null_runtime(void) {
  tfd_backend_info info;
  tfd_backend_load("cuda", &info, NULL);
  CHECK(info.loaded);
  CHECK_INT(info.num_devices, 1);
  tfd_status *st = tfd_status_new();
  tfd_session_options *o = tfd_session_options_new();
  tfd_session_options_set_device_count(o, "GPU", 1, NULL);
  tfd_session *s = tfd_session_new(o, NULL, NULL, st);
  CHECK_STATUS(st, TFD_OK, "");
  tfd_device_mgr *m = s ? tfd_session_device_mgr(s) : NULL;
  CHECK_INT(m ? (int64_t)tfd_device_mgr_size(m) : 0, 2);
  if (m && tfd_device_mgr_size(m) == 2) {
    tfd_device *gpu = tfd_device_mgr_get(m, 1);
    CHECK_STR(tfd_device_name(gpu), "/job:localhost/replica:0/task:0/device:GPU:0");
    tfd_device_attributes a;
    tfd_device_get_attributes(gpu, &a);
    CHECK_CONTAINS(a.physical_device_desc, "name: null CUDA runtime"); /* not the real one */
    CHECK_CONTAINS(a.physical_device_desc, "compute capability: 9.0");
  }
  if (s) tfd_session_free(s);
  tfd_session_options_free(o);
  tfd_status_free(st);
}

/* x (fed) -> Identity on the GPU -> Square on the CPU. */
static tfd_graph_def *round_trip_graph(void) {
  tfd_graph_def *g = tfd_graph_def_new();
  tg_set_type(tg_node(g, "x", "Placeholder", NULL, NULL, NULL), "dtype", TFD_FLOAT32);
  tg_node(g, "on_gpu", "Identity", "x", NULL, "/device:GPU:0");
  tg_node(g, "sq", "Square", "on_gpu", NULL, "/device:CPU:0");
  return g;
}

/* x (CPU) -> Identity on the GPU -> Square on the CPU, and the GPU's Identity fetched itself: the
 * values go to the device and back through the backend's copies (memcpy here), events and
 * allocators, step after step. */
static void test_round_trip(void) {
  tfd_status *st = tfd_status_new();
  tfd_graph_def *g = round_trip_graph();
  tfd_session *s = tg_gpu_session(g, false, st);
  CHECK_STATUS(st, TFD_OK, "");
  for (int i = 0; s && i < 20; i++) {
    float v[] = {1, -2, 3, (float)i};
    tfd_tensor *sq = step(s, v, 4, "sq", st), *back = step(s, v, 4, "on_gpu", st);
    CHECK_STATUS(st, TFD_OK, "");
    const float *p = sq ? tfd_tensor_const_data(sq) : NULL, *q = back ? tfd_tensor_const_data(back) : NULL;
    CHECK(p && p[0] == 1 && p[1] == 4 && p[2] == 9 && p[3] == (float)(i * i));
    CHECK(q && q[0] == 1 && q[1] == -2 && q[2] == 3 && q[3] == (float)i);
    tfd_tensor_unref(sq);
    tfd_tensor_unref(back);
  }
  if (s) tfd_session_free(s);
  tfd_graph_def_free(g);
  tfd_status_free(st);
}

#ifdef TFDEV_CUDA_KERNELS
#define CHAIN 50

/* x -> Neg -> ... (CHAIN nodes, the last one named "last") on GPU:0. */
static tfd_graph_def *neg_chain(void) {
  tfd_graph_def *g = tfd_graph_def_new();
  tg_set_type(tg_node(g, "x", "Placeholder", NULL, NULL, "/device:GPU:0"), "dtype", TFD_FLOAT32);
  char prev[16] = "x", name[16];
  for (int i = 0; i < CHAIN; i++) {
    if (i == CHAIN - 1) snprintf(name, sizeof name, "last");
    else snprintf(name, sizeof name, "n%d", i);
    tg_node(g, name, "Neg", prev, NULL, "/device:GPU:0");
    memcpy(prev, name, sizeof prev);
  }
  return g;
}

/* Step graphs off: every step launches one kernel per node. */
static void test_launches_per_node(void) {
  tfd_status *st = tfd_status_new();
  tfd_graph_def *g = neg_chain();
  tfd_session *s = tg_gpu_session(g, false, st);
  CHECK_STATUS(st, TFD_OK, "");
  float v[16] = {0};
  run_steps(s, 1, v, 16, "last", st); /* warm-up */
  unsigned long long before = tfd_null_cudart_count("launches"), graphs = tfd_null_cudart_count("graph_launches");
  run_steps(s, 10, v, 16, "last", st);
  CHECK_STATUS(st, TFD_OK, "");
  CHECK_INT((int64_t)(tfd_null_cudart_count("launches") - before), 10 * CHAIN);
  CHECK_INT((int64_t)(tfd_null_cudart_count("graph_launches") - graphs), 0);
  if (s) tfd_session_free(s);
  tfd_graph_def_free(g);
  tfd_status_free(st);
}

/* Step graphs on: the chain is recorded once and then replayed, one graph launch per step and no
 * kernel launch; a new input shape records once more, and the first shape's graph is kept. */
static void test_step_graph_replay(void) {
  tfd_status *st = tfd_status_new();
  tfd_graph_def *g = neg_chain();
  tfd_session *s = tg_gpu_session(g, true, st);
  CHECK_STATUS(st, TFD_OK, "");
  float v[32] = {0};
  run_steps(s, 5, v, 16, "last", st); /* recorded by now */
  CHECK_STATUS(st, TFD_OK, "");
  unsigned long long launches = tfd_null_cudart_count("launches"), graphs = tfd_null_cudart_count("graph_launches"),
                     captures = tfd_null_cudart_count("captures");
  CHECK(captures >= 1);
  run_steps(s, 10, v, 16, "last", st);
  CHECK_STATUS(st, TFD_OK, "");
  CHECK_INT((int64_t)(tfd_null_cudart_count("launches") - launches), 0);
  CHECK_INT((int64_t)(tfd_null_cudart_count("graph_launches") - graphs), 10);
  CHECK_INT((int64_t)(tfd_null_cudart_count("captures") - captures), 0);
  /* Another shape: run node by node once, recorded (its kernels launched into the capture), then
   * replayed. */
  run_steps(s, 5, v, 32, "last", st);
  CHECK_STATUS(st, TFD_OK, "");
  CHECK_INT((int64_t)(tfd_null_cudart_count("captures") - captures), 1);
  CHECK_INT((int64_t)(tfd_null_cudart_count("launches") - launches), 2 * CHAIN);
  /* Back to the first: its graph is replayed, nothing recorded. */
  graphs = tfd_null_cudart_count("graph_launches");
  run_steps(s, 3, v, 16, "last", st);
  CHECK_INT((int64_t)(tfd_null_cudart_count("captures") - captures), 1);
  CHECK_INT((int64_t)(tfd_null_cudart_count("graph_launches") - graphs), 3);
  if (s) tfd_session_free(s);
  tfd_graph_def_free(g);
  tfd_status_free(st);
}
#endif

/* A closed session's device memory is parked, and the next session on the GPU takes it without
 * calling cudaMalloc (gpu/region_cache.c). */
static void test_region_parked_for_next_session(void) {
  tfd_status *st = tfd_status_new();
  tfd_graph_def *g = round_trip_graph(); /* fetching on_gpu, so its step stays off the CPU's Square */
  float v[4] = {5, 6, 7, 8};
  tfd_session *s = tg_gpu_session(g, false, st);
  run_steps(s, 1, v, 4, "on_gpu", st);
  CHECK_STATUS(st, TFD_OK, "");
  if (s) tfd_session_free(s);
  unsigned long long mallocs = tfd_null_cudart_count("mallocs");
  for (int i = 0; i < 3; i++) {
    s = tg_gpu_session(g, false, st);
    tfd_tensor *out = s ? step(s, v, 4, "on_gpu", st) : NULL;
    CHECK_STATUS(st, TFD_OK, "");
    const float *p = out ? tfd_tensor_const_data(out) : NULL;
    CHECK(p && p[0] == 5 && p[3] == 8);
    tfd_tensor_unref(out);
    if (s) tfd_session_free(s);
  }
  CHECK_INT((int64_t)(tfd_null_cudart_count("mallocs") - mallocs), 0);
  tfd_graph_def_free(g);
  tfd_status_free(st);
}

/* Threads stepping at once, each its own session and all one shared session, over the GPU's one
 * context: its allocator, streams, event manager and parked regions under contention (the TSan run
 * of this test is what checks them). Every step's values must come back whole. */
typedef struct stepper {
  tfd_session *shared;
  int seed, bad;
} stepper;

static void *stepper_main(void *arg) {
  stepper *w = arg;
  tfd_status *st = tfd_status_new();
  tfd_graph_def *g = round_trip_graph();
  tfd_session *own = tg_gpu_session(g, false, st);
  for (int i = 0; i < 200; i++) {
    tfd_session *s = i % 2 ? w->shared : own;
    float v[] = {(float)w->seed, (float)i, -1, 2};
    tfd_tensor *sq = s ? step(s, v, 4, "sq", st) : NULL;
    const float *p = sq ? tfd_tensor_const_data(sq) : NULL;
    if (!p || p[0] != v[0] * v[0] || p[1] != v[1] * v[1] || p[2] != 1 || p[3] != 4) w->bad++;
    tfd_tensor_unref(sq);
  }
  if (own) tfd_session_free(own);
  tfd_graph_def_free(g);
  tfd_status_free(st);
  return NULL;
}

static void test_threads_at_once(void) {
  tfd_status *st = tfd_status_new();
  tfd_graph_def *g = round_trip_graph();
  tfd_session *shared = tg_gpu_session(g, false, st);
  CHECK_STATUS(st, TFD_OK, "");
  stepper w[4];
  pthread_t t[4];
  for (int i = 0; i < 4; i++) {
    w[i] = (stepper){shared, i + 1, 0};
    CHECK_INT(pthread_create(&t[i], NULL, stepper_main, &w[i]), 0);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(t[i], NULL);
    CHECK_INT(w[i].bad, 0);
  }
  if (shared) tfd_session_free(shared);
  tfd_graph_def_free(g);
  tfd_status_free(st);
}

static const tfd_test tests[] = {
    {"backend on the null runtime", test_backend_on_null_runtime},
    {"round trip CPU -> GPU -> CPU", test_round_trip},
#ifdef TFDEV_CUDA_KERNELS
    {"one launch per node", test_launches_per_node},
    {"step graphs replayed", test_step_graph_replay},
#endif
    {"region parked for the next session", test_region_parked_for_next_session},
    {"threads stepping at once", test_threads_at_once},
};

TFD_TEST_MAIN(tests)
