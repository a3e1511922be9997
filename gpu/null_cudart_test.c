/* The CUDA backend's host side, run for real on a machine without a GPU: this test links the null
 * CUDA runtime (gpu/null_cudart.c), which reports one GPU, copies with memcpy, runs no kernel and
 * counts the calls that matter here. So CI and the
 * sanitizers cover what otherwise runs only in the GPU suite: the backend's devices and contexts,
 * its BFC allocator over cudaMalloc, copies both ways, events, step-graph capture and replay, and
 * regions parked for the next session. Kernels compute nothing under it, so values are checked
 * only where data moves without a kernel. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/core/log.h"
#include "runtime/device/device_internal.h"
#include "runtime/testing/graph_builder.h"
#include "runtime/testing/harness.h"

#ifdef TFDEV_CUDA_KERNELS
#include <cublasLt.h>
#ifdef TFDEV_NULL_CUDNN
#include <cudnn.h>
#endif
#endif

/* gpu/null_cudart.c: this test links the null runtime, so the backend module's libcudart.so.13 is
 * the one already loaded. */
unsigned long long tfd_null_cudart_count(const char *what);
void tfd_null_cudart_hold_copies(int on);
#ifdef TFDEV_CUDA_KERNELS
/* gpu/null_cublas.c and gpu/null_cudnn.c, linked too, so the module's dlopen by soname finds them. */
long long tfd_null_cublas_count(const char *what);
long long tfd_null_cublaslt_count(const char *what);
void tfd_null_cublaslt_set(const char *what, long long value);
#ifdef TFDEV_NULL_CUDNN
long long tfd_null_cudnn_count(const char *what);
void tfd_null_cudnn_set(const char *what, long long value, const int *algos);
#endif
#endif

/* Runs the step feeding x (n floats, values v) and fetching `fetch`; the output or NULL. */
static tfd_tensor *step(tfd_session *s, const float *v, int64_t n, const char *fetch, tfd_status *st) {
  tfd_tensor *x = NULL;
  tfd_tensor_from_bytes(NULL, TFD_FLOAT32, &n, 1, v, (size_t)n * sizeof *v, &x, NULL);
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

/* One case's status, graph (owned) and GPU session (step graphs on or off; NULL with the status
 * set when it could not be made), freed together by gpu_case_end. */
typedef struct gpu_case {
  tfd_status *st;
  tfd_graph_def *g;
  tfd_session *s;
} gpu_case;

static gpu_case gpu_case_new(tfd_graph_def *g, bool graphs) {
  gpu_case t = {tfd_status_new(), g, NULL};
  t.s = tg_gpu_session(g, graphs, t.st);
  return t;
}

static void gpu_case_end(gpu_case *t) {
  if (t->s) tfd_session_free(t->s);
  tfd_graph_def_free(t->g);
  tfd_status_free(t->st);
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
  tfd_session *s = NULL;
  tfd_session_new(o, NULL, NULL, &s, st);
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
  gpu_case t = gpu_case_new(round_trip_graph(), false);
  tfd_status *st = t.st;
  tfd_session *s = t.s;
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
  gpu_case_end(&t);
}

/* a's bytes in use once they are `want`, or what they are after 2 s of waiting for that: the event
 * manager's thread releases sources a little after their copies are done. */
static int64_t bytes_in_use_settled(tfd_allocator *a, int64_t want) {
  tfd_allocator_stats now;
  for (int waited_ms = 0;; waited_ms++) {
    tfd_allocator_get_stats(a, &now);
    if (now.bytes_in_use == want || waited_ms == 2000) return now.bytes_in_use;
    nanosleep(&(struct timespec){0, 1000000}, NULL);
  }
}

/* A pinned source stays allocated until its copy is done: the null runtime holds copies from pinned
 * memory undone (its events not ready) while the test looks at the CPU device's pinned allocator. */
static void test_pinned_source_kept_until_copied(void) {
  tfd_graph_def *g = tfd_graph_def_new();
  tg_set_type(tg_node(g, "x", "Placeholder", NULL, NULL, NULL), "dtype", TFD_FLOAT32);
  tg_node(g, "sq", "Square", "x", NULL, "/device:CPU:0");
  tg_node(g, "on_gpu", "Identity", "sq", NULL, "/device:GPU:0");
  gpu_case t = gpu_case_new(g, false);
  tfd_status *st = t.st;
  CHECK_STATUS(st, TFD_OK, "");
  tfd_device_mgr *m = t.s ? tfd_session_device_mgr(t.s) : NULL;
  tfd_allocator *pinned = m ? tfd_device_get_allocator(tfd_device_mgr_get(m, 0)) : NULL;
  CHECK(pinned != NULL);
  if (!pinned) {
    gpu_case_end(&t);
    return;
  }
  float v[256] = {0};
  int64_t n = 256;
  tfd_tensor *x = NULL;
  tfd_tensor_from_bytes(NULL, TFD_FLOAT32, &n, 1, v, sizeof v, &x, NULL);
  const char *feed = "x", *target = "on_gpu";
  for (int i = 0; i < 3; i++) /* warm: kernels made, blocks cached */
    tfd_session_run(t.s, NULL, &feed, &x, 1, NULL, 0, &target, 1, NULL, NULL, st);
  CHECK_STATUS(st, TFD_OK, "");
  int64_t before = bytes_in_use_settled(pinned, 0); /* the warm steps' sources let go */
  tfd_null_cudart_hold_copies(1);
  tfd_session_run(t.s, NULL, &feed, &x, 1, NULL, 0, &target, 1, NULL, NULL, st);
  CHECK_STATUS(st, TFD_OK, "");
  tfd_allocator_stats held;
  tfd_allocator_get_stats(pinned, &held);
  tfd_null_cudart_hold_copies(0);
  CHECK(held.bytes_in_use >= before + (int64_t)sizeof v); /* Square's output, kept */
  CHECK_INT(bytes_in_use_settled(pinned, before), before); /* and let go once its copy is done */
  tfd_tensor_unref(x);
  gpu_case_end(&t);
}

/* A tensor fetched from the GPU is copied into the GPU's pinned host memory (no staging, blocks
 * reused), and keeps that memory's allocator alive after its session is gone. */
static void test_fetched_into_pinned_memory(void) {
  gpu_case t = gpu_case_new(round_trip_graph(), false);
  tfd_status *st = t.st;
  CHECK_STATUS(st, TFD_OK, "");
  tfd_device_mgr *m = t.s ? tfd_session_device_mgr(t.s) : NULL;
  tfd_device *gpu = m && tfd_device_mgr_size(m) == 2 ? tfd_device_mgr_get(m, 1) : NULL;
  tfd_allocator *pinned = gpu ? gpu->ops->get_allocator(gpu, (tfd_alloc_attrs){.on_host = true}) : NULL;
  CHECK(pinned != NULL);
  if (!pinned) {
    gpu_case_end(&t);
    return;
  }
  CHECK_STR(tfd_allocator_name(pinned), "gpu_host_0");
  tfd_allocator_stats before, held;
  tfd_allocator_get_stats(pinned, &before);
  float v[256];
  for (int i = 0; i < 256; i++) v[i] = (float)i;
  tfd_tensor *out = step(t.s, v, 256, "on_gpu", st);
  CHECK_STATUS(st, TFD_OK, "");
  tfd_allocator_get_stats(pinned, &held);
  CHECK(held.bytes_in_use >= before.bytes_in_use + (int64_t)sizeof v);
  tfd_session_free(t.s);
  t.s = NULL;
  const float *p = out ? tfd_tensor_const_data(out) : NULL;
  CHECK(p && p[0] == 0 && p[255] == 255);
  tfd_tensor_unref(out);
  gpu_case_end(&t);
}

/* A copy to the GPU from pageable memory (a fed tensor's, malloc'd) lets its source go when
 * cudaMemcpyAsync returns, which has staged it by then; a copy from pinned memory (a CPU node's
 * output: with a GPU present the CPU device's memory is pinned) is read later by the copy engine,
 * so the source is released by the event manager once the stream has passed it, one event more. */
static void test_copy_sources_released(void) {
  tfd_graph_def *g = tfd_graph_def_new();
  tg_set_type(tg_node(g, "x", "Placeholder", NULL, NULL, NULL), "dtype", TFD_FLOAT32);
  tg_node(g, "fed_to_gpu", "Identity", "x", NULL, "/device:GPU:0");
  tg_node(g, "on_cpu", "Square", "x", NULL, "/device:CPU:0");
  tg_node(g, "computed_to_gpu", "Identity", "on_cpu", NULL, "/device:GPU:0");
  gpu_case t = gpu_case_new(g, false);
  tfd_status *st = t.st;
  tfd_session *s = t.s;
  CHECK_STATUS(st, TFD_OK, "");
  unsigned long long records[2] = {0, 0};
  const char *fetches[2] = {"fed_to_gpu", "computed_to_gpu"};
  for (int f = 0; s && f < 2; f++) {
    run_steps(s, 2, (float[]){1}, 1, fetches[f], st); /* warm */
    unsigned long long before = tfd_null_cudart_count("event_records");
    for (int i = 0; i < 10; i++) {
      float v[] = {(float)i, -2};
      tfd_tensor *out = step(s, v, 2, fetches[f], st);
      const float *p = out ? tfd_tensor_const_data(out) : NULL;
      CHECK(p && p[0] == (f ? (float)(i * i) : (float)i) && p[1] == (f ? 4 : -2));
      tfd_tensor_unref(out);
    }
    records[f] = tfd_null_cudart_count("event_records") - before;
  }
  CHECK_STATUS(st, TFD_OK, "");
  CHECK(records[0] > 0);
  CHECK_INT((int64_t)(records[1] - records[0]), 10); /* one per step: the pinned source's callback */
  gpu_case_end(&t);
}

#ifdef TFDEV_CUDA_KERNELS
#define CHAIN 50

/* `count` steps feeding x as zeros of shape dims (nd of them), outputs dropped. */
static void run_shaped(tfd_session *s, int count, const int64_t *dims, int nd, const char *fetch, tfd_status *st) {
  int64_t n = 1;
  for (int i = 0; i < nd; i++) n *= dims[i];
  float *v = calloc((size_t)n, sizeof *v);
  tfd_tensor *x = NULL;
  tfd_tensor_from_bytes(NULL, TFD_FLOAT32, dims, nd, v, (size_t)n * sizeof *v, &x, NULL);
  const char *feed = "x";
  for (int i = 0; s && i < count; i++) {
    tfd_tensor *out = NULL;
    if (tfd_session_run(s, NULL, &feed, &x, 1, &fetch, 1, NULL, 0, &out, NULL, st) == TFD_OK) tfd_tensor_unref(out);
  }
  tfd_tensor_unref(x);
  free(v);
}


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
  gpu_case t = gpu_case_new(neg_chain(), false);
  tfd_status *st = t.st;
  tfd_session *s = t.s;
  CHECK_STATUS(st, TFD_OK, "");
  float v[16] = {0};
  run_steps(s, 1, v, 16, "last", st); /* warm-up */
  unsigned long long before = tfd_null_cudart_count("launches"), graphs = tfd_null_cudart_count("graph_launches");
  run_steps(s, 10, v, 16, "last", st);
  CHECK_STATUS(st, TFD_OK, "");
  CHECK_INT((int64_t)(tfd_null_cudart_count("launches") - before), 10 * CHAIN);
  CHECK_INT((int64_t)(tfd_null_cudart_count("graph_launches") - graphs), 0);
  gpu_case_end(&t);
}

/* Step graphs on: the chain is recorded once and then replayed, one graph launch per step and no
 * kernel launch; a new input shape records once more, and the first shape's graph is kept. */
static void test_step_graph_replay(void) {
  gpu_case t = gpu_case_new(neg_chain(), true);
  tfd_status *st = t.st;
  tfd_session *s = t.s;
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
  gpu_case_end(&t);
}

/* ---- products through the null cuBLASLt and cuBLAS (gpu/kernels/matmul.c) ----
 * Each case uses sizes of its own: the device's algorithm cache outlives sessions. */

/* x [?, k] fed -> MatMul by a constant [k, n] -> BiasAdd -> act, on GPU:0 (the optimizer makes it
 * one _FusedMatMul); the last node is named "y". */
static tfd_graph_def *dense_graph(int64_t k, int64_t n, const char *act) {
  tfd_graph_def *g = tfd_graph_def_new();
  tg_set_type(tg_node(g, "x", "Placeholder", NULL, NULL, "/device:GPU:0"), "dtype", TFD_FLOAT32);
  float *w = calloc((size_t)(k * n), sizeof *w), *b = calloc((size_t)n, sizeof *b);
  int64_t wd[2] = {k, n};
  tg_const(g, "w", TFD_FLOAT32, wd, 2, w);
  tg_const(g, "b", TFD_FLOAT32, &n, 1, b);
  free(w);
  free(b);
  tg_node(g, "mm", "MatMul", "x", "w", "/device:GPU:0");
  tg_node(g, act ? "ba" : "y", "BiasAdd", "mm", "b", "/device:GPU:0");
  if (act) tg_node(g, "y", act, "ba", NULL, "/device:GPU:0");
  return g;
}

/* MatMul + BiasAdd + Relu: one cuBLASLt call with bias and Relu in its epilogue and no kernel after
 * it; cuBLASLt's heuristic asked once per shape, its descriptors all freed. */
static void test_matmul_epilogue(void) {
  gpu_case t = gpu_case_new(dense_graph(7, 5, "Relu"), false);
  tfd_status *st = t.st;
  tfd_session *s = t.s;
  CHECK_STATUS(st, TFD_OK, "");
  int64_t dims[2] = {3, 7};
  long long descs = tfd_null_cublaslt_count("live_descriptors");
  run_shaped(s, 1, dims, 2, "y", st); /* constants placed, handles made, the heuristic asked */
  CHECK_STATUS(st, TFD_OK, "");
  long long heuristics = tfd_null_cublaslt_count("heuristics"), matmuls = tfd_null_cublaslt_count("matmuls");
  unsigned long long launches = tfd_null_cudart_count("launches");
  long long strided = tfd_null_cublas_count("strided");
  run_shaped(s, 10, dims, 2, "y", st);
  CHECK_STATUS(st, TFD_OK, "");
  CHECK_INT(tfd_null_cublaslt_count("heuristics") - heuristics, 0);
  CHECK_INT(tfd_null_cublaslt_count("matmuls") - matmuls, 10);
  CHECK_INT(tfd_null_cublaslt_count("last_epilogue"), CUBLASLT_EPILOGUE_RELU_BIAS);
  CHECK_INT((int64_t)(tfd_null_cudart_count("launches") - launches), 0); /* nothing after the product */
  CHECK_INT(tfd_null_cublas_count("strided") - strided, 0);
  CHECK_INT(tfd_null_cublaslt_count("live_descriptors"), descs);
  /* Another batch is another shape: asked once more. */
  dims[0] = 4;
  run_shaped(s, 3, dims, 2, "y", st);
  CHECK_STATUS(st, TFD_OK, "");
  CHECK_INT(tfd_null_cublaslt_count("heuristics") - heuristics, 1);
  CHECK_INT(tfd_null_cublaslt_count("matmuls") - matmuls, 13);
  gpu_case_end(&t);
}

/* An activation cuBLASLt's epilogue lacks (Tanh): the bias in the epilogue, one kernel after it. */
static void test_matmul_activation_kernel(void) {
  gpu_case t = gpu_case_new(dense_graph(9, 6, "Tanh"), false);
  tfd_status *st = t.st;
  tfd_session *s = t.s;
  int64_t dims[2] = {2, 9};
  run_shaped(s, 1, dims, 2, "y", st);
  CHECK_STATUS(st, TFD_OK, "");
  unsigned long long launches = tfd_null_cudart_count("launches");
  long long matmuls = tfd_null_cublaslt_count("matmuls");
  run_shaped(s, 5, dims, 2, "y", st);
  CHECK_STATUS(st, TFD_OK, "");
  CHECK_INT(tfd_null_cublaslt_count("matmuls") - matmuls, 5);
  CHECK_INT(tfd_null_cublaslt_count("last_epilogue"), CUBLASLT_EPILOGUE_BIAS);
  CHECK_INT((int64_t)(tfd_null_cudart_count("launches") - launches), 5);
  gpu_case_end(&t);
}

/* cuBLASLt offering no algorithm: that answer is cached too (asked once), and cuBLAS runs the
 * product with the bias and Relu in a kernel after it. */
static void test_matmul_without_lt_algorithm(void) {
  gpu_case t = gpu_case_new(dense_graph(11, 3, "Relu"), false);
  tfd_status *st = t.st;
  tfd_session *s = t.s;
  int64_t dims[2] = {2, 11};
  tfd_null_cublaslt_set("offers", 0);
  long long heuristics = tfd_null_cublaslt_count("heuristics"), matmuls = tfd_null_cublaslt_count("matmuls");
  long long strided = tfd_null_cublas_count("strided");
  run_shaped(s, 1, dims, 2, "y", st);
  unsigned long long launches = tfd_null_cudart_count("launches");
  run_shaped(s, 6, dims, 2, "y", st);
  tfd_null_cublaslt_set("offers", 1);
  CHECK_STATUS(st, TFD_OK, "");
  CHECK_INT(tfd_null_cublaslt_count("heuristics") - heuristics, 1);
  CHECK_INT(tfd_null_cublaslt_count("matmuls") - matmuls, 0);
  CHECK_INT(tfd_null_cublas_count("strided") - strided, 7);
  CHECK_INT((int64_t)(tfd_null_cudart_count("launches") - launches), 6); /* bias and Relu */
  gpu_case_end(&t);
}

/* cublasLtMatmul refusing at run time what its heuristic offered: that step and every later one of
 * the shape go to cuBLAS, without asking cuBLASLt again. */
static void test_matmul_refused_at_run_time(void) {
  gpu_case t = gpu_case_new(dense_graph(13, 4, "Relu"), false);
  tfd_status *st = t.st;
  tfd_session *s = t.s;
  int64_t dims[2] = {2, 13};
  tfd_null_cublaslt_set("refuses", 1);
  long long heuristics = tfd_null_cublaslt_count("heuristics"), strided = tfd_null_cublas_count("strided");
  run_shaped(s, 4, dims, 2, "y", st);
  CHECK_STATUS(st, TFD_OK, "");
  tfd_null_cublaslt_set("refuses", 0); /* cuBLASLt would take it now, but the shape stays with cuBLAS */
  long long matmuls = tfd_null_cublaslt_count("matmuls");
  run_shaped(s, 3, dims, 2, "y", st);
  CHECK_STATUS(st, TFD_OK, "");
  CHECK_INT(tfd_null_cublaslt_count("heuristics") - heuristics, 1);
  CHECK_INT(tfd_null_cublaslt_count("matmuls") - matmuls, 0);
  CHECK_INT(tfd_null_cublas_count("strided") - strided, 7);
  gpu_case_end(&t);
}

/* A cuBLASLt algorithm that wants workspace gets it from the BFC allocator: after the first step no
 * cudaMalloc, however many steps run. */
static void test_matmul_workspace(void) {
  gpu_case t = gpu_case_new(dense_graph(15, 8, NULL), false);
  tfd_status *st = t.st;
  tfd_session *s = t.s;
  int64_t dims[2] = {2, 15};
  tfd_null_cublaslt_set("workspace", 1 << 20);
  run_shaped(s, 1, dims, 2, "y", st);
  unsigned long long mallocs = tfd_null_cudart_count("mallocs");
  long long matmuls = tfd_null_cublaslt_count("matmuls");
  run_shaped(s, 20, dims, 2, "y", st);
  tfd_null_cublaslt_set("workspace", 0);
  CHECK_STATUS(st, TFD_OK, ""); /* the null cuBLASLt fails a call given less than it asked for */
  CHECK_INT(tfd_null_cublaslt_count("matmuls") - matmuls, 20);
  CHECK_INT(tfd_null_cublaslt_count("last_epilogue"), CUBLASLT_EPILOGUE_BIAS);
  CHECK_INT((int64_t)(tfd_null_cudart_count("mallocs") - mallocs), 0);
  gpu_case_end(&t);
}

/* BatchMatMulV2 whose batch dimensions broadcast ([2, 1] against [1, 3]): the matrices are not
 * evenly spaced, so one cublasGemmBatchedEx over pointer arrays runs each step; a plain batch is
 * one strided cuBLASLt call of batch 6. */
static void test_batch_matmul_paths(void) {
  tfd_status *st = tfd_status_new();
  tfd_graph_def *g = tfd_graph_def_new();
  tg_set_type(tg_node(g, "x", "Placeholder", NULL, NULL, "/device:GPU:0"), "dtype", TFD_FLOAT32);
  float w[3 * 5 * 4] = {0};
  int64_t wd[4] = {1, 3, 5, 4};
  tg_const(g, "w", TFD_FLOAT32, wd, 4, w);
  tg_node(g, "y", "BatchMatMulV2", "x", "w", "/device:GPU:0");
  tfd_session *s = tg_gpu_session(g, false, st);
  CHECK_STATUS(st, TFD_OK, "");
  int64_t broadcast[4] = {2, 1, 3, 5}, plain[4] = {1, 3, 3, 5};
  long long batched = tfd_null_cublas_count("batched"), matmuls = tfd_null_cublaslt_count("matmuls");
  run_shaped(s, 4, broadcast, 4, "y", st);
  CHECK_STATUS(st, TFD_OK, "");
  CHECK_INT(tfd_null_cublas_count("batched") - batched, 4);
  CHECK_INT(tfd_null_cublaslt_count("matmuls") - matmuls, 0);
  run_shaped(s, 2, plain, 4, "y", st);
  CHECK_STATUS(st, TFD_OK, "");
  CHECK_INT(tfd_null_cublas_count("batched") - batched, 4);
  CHECK_INT(tfd_null_cublaslt_count("matmuls") - matmuls, 2);
  CHECK_INT(tfd_null_cublaslt_count("last_batch"), 3);
  if (s) tfd_session_free(s);
  tfd_graph_def_free(g);
  tfd_status_free(st);
}

#ifdef TFDEV_NULL_CUDNN
/* ---- convolutions through the null cuDNN (gpu/kernels/conv.c) ---- */

/* x [1, h, w, c] fed -> Conv2D by a constant 3x3 filter [3, 3, c, o], stride 1, SAME (one pixel of
 * padding each side: cuDNN takes it), named "y", on GPU:0. */
static tfd_graph_def *conv_graph(int64_t c, int64_t o) {
  tfd_graph_def *g = tfd_graph_def_new();
  tg_set_type(tg_node(g, "x", "Placeholder", NULL, NULL, "/device:GPU:0"), "dtype", TFD_FLOAT32);
  float *f = calloc((size_t)(9 * c * o), sizeof *f);
  int64_t fd[4] = {3, 3, c, o};
  tg_const(g, "f", TFD_FLOAT32, fd, 4, f);
  free(f);
  tfd_node_def *n = tg_node(g, "y", "Conv2D", "x", "f", "/device:GPU:0");
  static const int64_t strides[4] = {1, 1, 1, 1};
  tfd_attr_value sv = {.type = TFD_ATTR_LIST_INT, .list_len = 4, .list_i = strides};
  tfd_attr_value pv = {.type = TFD_ATTR_STRING, .s = "SAME"};
  tfd_node_def_set_attr(n, "strides", &sv, NULL);
  tfd_node_def_set_attr(n, "padding", &pv, NULL);
  return g;
}

/* The ranking is tried in order with FFT and Winograd left out; the first algorithm cuDNN takes is
 * kept for the shape (searched once), a refused one skipped; descriptors all freed. */
static void test_conv_algorithm_choice(void) {
  gpu_case t = gpu_case_new(conv_graph(3, 4), false);
  tfd_status *st = t.st;
  tfd_session *s = t.s;
  CHECK_STATUS(st, TFD_OK, "");
  const int rank[] = {CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD, CUDNN_CONVOLUTION_FWD_ALGO_FFT,
                      CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, CUDNN_CONVOLUTION_FWD_ALGO_GEMM};
  tfd_null_cudnn_set("rank", 4, rank);
  tfd_null_cudnn_set("refuse", 1 << CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, NULL);
  long long searches = tfd_null_cudnn_count("searches"), forwards = tfd_null_cudnn_count("forward");
  long long descs = tfd_null_cudnn_count("live_descriptors");
  int64_t dims[4] = {1, 8, 8, 3};
  run_shaped(s, 10, dims, 4, "y", st);
  CHECK_STATUS(st, TFD_OK, "");
  CHECK_INT(tfd_null_cudnn_count("searches") - searches, 1);
  CHECK_INT(tfd_null_cudnn_count("forward") - forwards, 10);
  CHECK_INT(tfd_null_cudnn_count("last_algo"), CUDNN_CONVOLUTION_FWD_ALGO_GEMM);
  CHECK_INT(tfd_null_cudnn_count("live_descriptors"), descs);
  /* Another image size: searched once more, and with nothing refused now the first acceptable one
   * (implicit GEMM) is taken. */
  tfd_null_cudnn_set("refuse", 0, NULL);
  dims[1] = 6;
  run_shaped(s, 3, dims, 4, "y", st);
  CHECK_STATUS(st, TFD_OK, "");
  CHECK_INT(tfd_null_cudnn_count("searches") - searches, 2);
  CHECK_INT(tfd_null_cudnn_count("last_algo"), CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM);
  tfd_null_cudnn_set("rank", 2, (const int[]){CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM,
                                               CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM});
  gpu_case_end(&t);
}

/* An algorithm that wants workspace gets it from the BFC allocator: no cudaMalloc after the first
 * step. */
static void test_conv_workspace(void) {
  gpu_case t = gpu_case_new(conv_graph(5, 2), false);
  tfd_status *st = t.st;
  tfd_session *s = t.s;
  tfd_null_cudnn_set("workspace", 3 << 20, NULL);
  int64_t dims[4] = {1, 8, 8, 5};
  run_shaped(s, 1, dims, 4, "y", st);
  unsigned long long mallocs = tfd_null_cudart_count("mallocs");
  long long forwards = tfd_null_cudnn_count("forward");
  run_shaped(s, 20, dims, 4, "y", st);
  tfd_null_cudnn_set("workspace", 0, NULL);
  CHECK_STATUS(st, TFD_OK, ""); /* the null cuDNN fails a call given less than it asked for */
  CHECK_INT(tfd_null_cudnn_count("forward") - forwards, 20);
  CHECK_INT((int64_t)(tfd_null_cudart_count("mallocs") - mallocs), 0);
  gpu_case_end(&t);
}

/* A constant filter is rewritten into cuDNN's layout once, on the first step, and kept: later steps
 * launch no kernel at all (the convolution is cuDNN's call), with step graphs off or recording. With
 * the optimiser off nothing marks the filter constant, and every step rewrites it (one launch). */
static void test_conv_constant_filter_packed_once(void) {
  tfd_status *st = tfd_status_new();
  tfd_graph_def *g = conv_graph(7, 5);
  int64_t dims[4] = {1, 6, 6, 7};
  for (int graphs = 0; graphs < 2; graphs++) {
    tfd_session *s = tg_gpu_session(g, graphs, st);
    CHECK_STATUS(st, TFD_OK, "");
    run_shaped(s, 1, dims, 4, "y", st);
    unsigned long long launches = tfd_null_cudart_count("launches");
    long long forwards = tfd_null_cudnn_count("forward");
    run_shaped(s, 8, dims, 4, "y", st);
    CHECK_STATUS(st, TFD_OK, "");
    CHECK_INT((int64_t)(tfd_null_cudart_count("launches") - launches), 0);
    if (!graphs) CHECK_INT(tfd_null_cudnn_count("forward") - forwards, 8);
    if (s) tfd_session_free(s);
  }
  tfd_session_options *o = tfd_session_options_new();
  tfd_session_options_set_device_count(o, "GPU", 1, NULL);
  tfd_session_options_set_gpu_graphs(o, false);
  tfd_session_options_set_optimize_graph(o, false);
  tfd_session *s = NULL;
  tfd_session_new(o, NULL, NULL, &s, st);
  tfd_session_options_free(o);
  if (s && tfd_session_create(s, g, st) != TFD_OK) tfd_session_free(s), s = NULL;
  CHECK_STATUS(st, TFD_OK, "");
  run_shaped(s, 1, dims, 4, "y", st);
  unsigned long long launches = tfd_null_cudart_count("launches");
  run_shaped(s, 8, dims, 4, "y", st);
  CHECK_STATUS(st, TFD_OK, "");
  CHECK_INT((int64_t)(tfd_null_cudart_count("launches") - launches), 8);
  if (s) tfd_session_free(s);
  tfd_graph_def_free(g);
  tfd_status_free(st);
}

/* cuDNN taking no algorithm (every one refused): the direct kernel runs the shape from then on,
 * one launch a step, and cuDNN is not asked again. */
static void test_conv_direct_fallback(void) {
  gpu_case t = gpu_case_new(conv_graph(6, 3), false);
  tfd_status *st = t.st;
  tfd_session *s = t.s;
  tfd_null_cudnn_set("refuse", -1, NULL);
  int64_t dims[4] = {1, 8, 8, 6};
  long long searches = tfd_null_cudnn_count("searches"), forwards = tfd_null_cudnn_count("forward");
  run_shaped(s, 1, dims, 4, "y", st);
  tfd_null_cudnn_set("refuse", 0, NULL);
  unsigned long long launches = tfd_null_cudart_count("launches");
  run_shaped(s, 5, dims, 4, "y", st);
  CHECK_STATUS(st, TFD_OK, "");
  CHECK_INT(tfd_null_cudnn_count("searches") - searches, 1);
  CHECK_INT(tfd_null_cudnn_count("forward") - forwards, 0);
  CHECK_INT((int64_t)(tfd_null_cudart_count("launches") - launches), 5);
  gpu_case_end(&t);
}
#endif
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

/* Sessions alive at once on the GPU share its context and memory (one BFC allocator, the first
 * session's limit), as TensorFlow's sessions share its per-process GPU state: five default sessions
 * each run, where each used to reserve what was free when it started and the last ones got almost
 * nothing. A later session asking for other memory options is told they are not applied. Once all
 * are closed, the next session makes the GPU's state anew, with its own options. */
static void test_sessions_share_gpu_memory(void) {
  tfd_status *st = tfd_status_new();
  tfd_graph_def *g = round_trip_graph();
  tfd_session *s[5];
  tfd_allocator *first = NULL;
  int64_t first_limit = 0;
  float v[4] = {1, 2, 3, 4};
  for (int i = 0; i < 5; i++) {
    s[i] = tg_gpu_session(g, false, st);
    CHECK_STATUS(st, TFD_OK, "");
    run_steps(s[i], 2, v, 4, "on_gpu", st); /* its first step reserves the memory */
    CHECK_STATUS(st, TFD_OK, "");
    tfd_device *gpu = s[i] ? tfd_device_mgr_get(tfd_session_device_mgr(s[i]), 1) : NULL;
    tfd_device_attributes a = {0};
    if (gpu) tfd_device_get_attributes(gpu, &a);
    if (i == 0) first = gpu ? tfd_device_get_allocator(gpu) : NULL, first_limit = a.memory_limit;
    CHECK(gpu && tfd_device_get_allocator(gpu) == first);
    CHECK_INT(a.memory_limit, first_limit);
  }
  CHECK(first_limit > (int64_t)1 << 30); /* most of the null GPU's 4 GiB, for all five */
  tfd_session_options *o = tfd_session_options_new();
  tfd_session_options_set_device_count(o, "GPU", 1, NULL);
  tfd_session_options_set_gpu_allow_growth(o, true);
  tfd_test_lines logged = {""};
  tfd_host_logger lg = {tfd_test_keep_line, TFD_LOG_WARNING, &logged};
  const tfd_host_logger *prev = tfd_log_use(&lg);
  tfd_session *grow = NULL;
  tfd_session_new(o, NULL, NULL, &grow, st);
  tfd_log_use(prev);
  CHECK_STATUS(st, TFD_OK, "");
  CHECK_CONTAINS(logged.text, "allow_growth true not applied: another session holds this GPU's memory, shared");
  if (grow) tfd_session_free(grow);
  for (int i = 0; i < 5; i++)
    if (s[i]) tfd_session_free(s[i]);
  /* All gone: the next session's options make the GPU's state (allow_growth: a 2 MiB first region). */
  tfd_session_new(o, NULL, NULL, &grow, st);
  if (grow && tfd_session_create(grow, g, st) == TFD_OK) run_steps(grow, 1, v, 4, "on_gpu", st);
  CHECK_STATUS(st, TFD_OK, "");
  tfd_device *gpu = grow ? tfd_device_mgr_get(tfd_session_device_mgr(grow), 1) : NULL;
  tfd_allocator_stats as = {0};
  if (gpu) tfd_allocator_get_stats(tfd_device_get_allocator(gpu), &as);
  CHECK(as.bytes_in_use + as.bytes_cached > 0 && as.bytes_in_use + as.bytes_cached <= (int64_t)2 << 20); /* reserved */
  if (grow) tfd_session_free(grow);
  tfd_session_options_free(o);
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
    {"copies to the GPU release pageable sources at once", test_copy_sources_released},
    {"fetched tensors land in pinned memory", test_fetched_into_pinned_memory},
    {"a pinned source is kept until its copy is done", test_pinned_source_kept_until_copied},
#ifdef TFDEV_CUDA_KERNELS
    {"one launch per node", test_launches_per_node},
    {"step graphs replayed", test_step_graph_replay},
    {"matmul: bias and Relu in cuBLASLt's epilogue", test_matmul_epilogue},
    {"matmul: an activation after the epilogue", test_matmul_activation_kernel},
    {"matmul: no cuBLASLt algorithm", test_matmul_without_lt_algorithm},
    {"matmul: refused at run time", test_matmul_refused_at_run_time},
    {"matmul: workspace from the allocator", test_matmul_workspace},
    {"batch matmul: pointer arrays and strided", test_batch_matmul_paths},
#ifdef TFDEV_NULL_CUDNN
    {"conv: algorithm choice", test_conv_algorithm_choice},
    {"conv: workspace from the allocator", test_conv_workspace},
    {"conv: a constant filter rewritten once", test_conv_constant_filter_packed_once},
    {"conv: direct kernel when cuDNN takes none", test_conv_direct_fallback},
#endif
#endif
    {"region parked for the next session", test_region_parked_for_next_session},
    {"sessions at once share the GPU's memory", test_sessions_share_gpu_memory},
    {"threads stepping at once", test_threads_at_once},
};

TFD_TEST_MAIN(tests)
