/* The GPU section of scripts/bench/run (tfdev_gpu_bench, built only with the CUDA backend):
 *  1. host <-> device copy bandwidth through tfd_tensor_copy_to (what _Recv, _Feed/_Fetch and the
 *     data-movement kernels use) with pinned and with pageable host tensors, beside cudaMemcpy
 *     called directly on buffers of the same kind, 4 KiB to 64 MiB, medians; the ratio's target
 *     is >= 0.9 of direct. copy_to makes its destination tensor each time (as the runtime does), so
 *     its column includes that allocation; the direct column reuses one buffer, except into pageable
 *     memory, where it too copies into fresh memory (time_d2h says why).
 *  2. the median time of one session step of a tiny graph that goes CPU -> GPU -> CPU (Const on
 *     the CPU, Identity on GPU:0, Square on the CPU), beside the same graph on the CPU alone.
 *  3. with the CUDA kernels (TFDEV_BENCH_KERNELS): the kernels against the libraries underneath,
 *     each through a session step and through its device-math entry called directly (the
 *     entry's own cost, whatever the runtime adds): MatMul 4096x4096 float32 against cublasSgemm
 *     (target >= 0.95), AddV2 of 64M floats against a cudaMemcpy device-to-device copy of the same
 *     bytes (bandwidth counts bytes read and written; target >= 0.85), and a chain of 1,000 tiny
 *     GPU ops, its per-node cost with step graphs (gpu.graphs) off (target <= 3 us) and on (<= 1 us),
 *     beside floors (gpu_floor.cu): the same negation as a kernel of its own launched straight, and
 *     those launches replayed as one CUDA graph.
 *     Medians; a session row that cannot run (no GPU kernel registered for the op in this build)
 *     says why instead of a number.
 * Without a GPU it prints one SKIP line naming why and exits 0.
 *   tfdev_gpu_bench [--quick] */
#include <cuda_runtime_api.h>
#ifdef TFDEV_BENCH_KERNELS
#include <cublas_v2.h>
#endif
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/core/tensor_internal.h"
#include "runtime/device/device_internal.h"
#include "runtime/kernels/device_math.h"
#include "runtime/testing/graph_builder.h"
#ifdef TFDEV_BENCH_KERNELS
#include "scripts/bench/gpu_floor.h"
#endif
#include "scripts/bench/timing.h"
#include "tfdev/tfdev.h"

#define KIB ((size_t)1 << 10)
#define MIB ((size_t)1 << 20)

static bool quick;
/* Running over the null CUDA runtime (gpu/null_cudart.c, LD_LIBRARY_PATH=build/null_cudart): no
 * kernel runs, so the figures are tfdev's host work alone and no target is judged. */
static bool null_runtime;

/* Repetitions for a copy of n bytes: enough for a stable median, bounded in time. */
static int reps_for(size_t n) {
  int r = n <= MIB ? 201 : n <= 16 * MIB ? 51 : 11;
  return quick ? (r / 4 < 5 ? 5 : r / 4) : r;
}

static double gbps(size_t n, double seconds) { return (double)n / seconds / 1e9; }

typedef struct copy_row {
  double tfdev_s, direct_s; /* medians */
} copy_row;

/* Host to device: tfd_tensor_copy_to into the GPU's memory, then the device drained (both columns
 * wait for the device the same way, so both measure the whole copy). */
static copy_row time_h2d(tfd_allocator *dev, tfd_allocator *host, size_t n, void *direct_src, void *direct_dst) {
  int reps = reps_for(n);
  double *t = malloc(sizeof(double) * (size_t)reps), *u = malloc(sizeof(double) * (size_t)reps);
  int64_t dims[] = {(int64_t)n};
  copy_row r = {-1, -1};
  tfd_tensor *h = NULL;
  tfd_tensor_new(host, TFD_UINT8, dims, 1, &h, NULL);
  if (!h) goto out;
  memset(tfd_tensor_data(h), 7, n);
  for (int i = -3; i < reps; i++) { /* three warm-up rounds */
    double t0 = now();
    tfd_tensor *d = tfd_tensor_copy_to(h, dev, NULL);
    cudaDeviceSynchronize();
    double t1 = now();
    if (!d) break;
    tfd_tensor_unref(d);
    cudaMemcpy(direct_dst, direct_src, n, cudaMemcpyHostToDevice);
    cudaDeviceSynchronize();
    double t2 = now();
    if (i >= 0) t[i] = t1 - t0, u[i] = t2 - t1;
    if (i == reps - 1) r = (copy_row){median(t, reps), median(u, reps)};
  }
  tfd_tensor_unref(h);
out:
  free(t);
  free(u);
  return r;
}

/* Device to host: tfd_tensor_copy_to returns once the host tensor holds the bytes. Into pageable
 * memory both columns copy into memory fresh from the system, as copy_to's new tensor is: past
 * glibc's mmap threshold (32 MiB at most) that memory is mapped anew each time, and its first touch
 * by the copy costs more than the copy (64 MiB: 42 ms against 4.8 ms on an H200 machine). */
static copy_row time_d2h(tfd_allocator *dev, tfd_allocator *host, size_t n, void *direct_src, void *direct_dst) {
  int reps = reps_for(n);
  double *t = malloc(sizeof(double) * (size_t)reps), *u = malloc(sizeof(double) * (size_t)reps);
  int64_t dims[] = {(int64_t)n};
  copy_row r = {-1, -1};
  tfd_tensor *d = NULL;
  tfd_tensor_new(dev, TFD_UINT8, dims, 1, &d, NULL);
  if (!d) goto out;
  cudaMemset(tfd_tensor_data(d), 3, n);
  cudaDeviceSynchronize();
  for (int i = -3; i < reps; i++) {
    double t0 = now();
    tfd_tensor *h = tfd_tensor_copy_to(d, host, NULL);
    double t1 = now();
    if (!h) break;
    tfd_tensor_unref(h);
    double t2 = now();
    if (host) {
      cudaMemcpy(direct_dst, direct_src, n, cudaMemcpyDeviceToHost);
    } else { /* a fresh pageable tensor is fresh system memory: the direct copy gets fresh memory too */
      void *fresh = aligned_alloc(64, (n + 63) / 64 * 64);
      cudaMemcpy(fresh ? fresh : direct_dst, direct_src, n, cudaMemcpyDeviceToHost);
      free(fresh);
    }
    double t3 = now();
    if (i >= 0) t[i] = t1 - t0, u[i] = t3 - t2;
    if (i == reps - 1) r = (copy_row){median(t, reps), median(u, reps)};
  }
  tfd_tensor_unref(d);
out:
  free(t);
  free(u);
  return r;
}

static void print_row(const char *dir, const char *mem, size_t n, copy_row r) {
  if (r.tfdev_s < 0) {
    printf("%-4s %-8s %8zu B   FAILED: a tensor of this size could not be made or copied\n", dir, mem, n);
    return;
  }
  double ratio = r.tfdev_s > 0 ? r.direct_s / r.tfdev_s : 0;
  char size[32];
  if (n >= MIB) snprintf(size, sizeof size, "%zu MiB", n / MIB);
  else snprintf(size, sizeof size, "%zu KiB", n / KIB);
  printf("%-4s %-8s %8s   %9.2f GB/s %9.2f us   %9.2f GB/s %9.2f us   %5.2f%s\n", dir, mem, size, gbps(n, r.tfdev_s),
         r.tfdev_s * 1e6, gbps(n, r.direct_s), r.direct_s * 1e6, ratio, ratio >= 0.9 ? "" : "  (below 0.9)");
}

static int bench_copies(tfd_device *cpu, tfd_device *gpu) {
  tfd_allocator *dev = tfd_device_get_allocator(gpu), *pinned = tfd_device_get_allocator(cpu);
  /* Up to 64 MiB: past that a copy's bandwidth no longer changes, and the pinned tensors come from
   * the CPU device's memory, bounded at 256 MiB (TFD_CPU_DEFAULT_MEMORY_LIMIT). */
  size_t max = 64 * MIB;
  void *dbuf = NULL, *pinned_buf = NULL, *pageable_buf = malloc(max);
  if (cudaMalloc(&dbuf, max) != cudaSuccess || cudaHostAlloc(&pinned_buf, max, cudaHostAllocPortable) != cudaSuccess ||
      !pageable_buf) {
    printf("SKIP GPU copies: cannot allocate 64 MiB buffers for the direct copies (%s)\n",
           cudaGetErrorString(cudaGetLastError()));
    cudaFree(dbuf);
    cudaFreeHost(pinned_buf);
    free(pageable_buf);
    return 0;
  }
  memset(pinned_buf, 1, max);
  memset(pageable_buf, 1, max);
  printf("GPU copies: tfd_tensor_copy_to against cudaMemcpy, medians (ratio = direct time / tfdev time; target >= 0.9)\n");
  printf("%-4s %-8s %8s   %25s   %25s   %5s\n", "dir", "host", "size", "tfd_tensor_copy_to", "cudaMemcpy", "ratio");
  for (int dir = 0; dir < 2; dir++)
    for (int mem = 0; mem < 2; mem++)
      for (size_t n = 4 * KIB; n <= max; n *= 4) {
        tfd_allocator *host = mem == 0 ? pinned : NULL; /* NULL: system (pageable) memory */
        void *hbuf = mem == 0 ? pinned_buf : pageable_buf;
        copy_row r = dir == 0 ? time_h2d(dev, host, n, hbuf, dbuf) : time_d2h(dev, host, n, dbuf, hbuf);
        print_row(dir == 0 ? "h2d" : "d2h", mem == 0 ? "pinned" : "pageable", n, r);
      }
  cudaFree(dbuf);
  cudaFreeHost(pinned_buf);
  free(pageable_buf);
  return 0;
}

/* ---- one step of a tiny CPU -> GPU -> CPU graph ---- */
static tfd_node_def *node(tfd_graph_def *g, const char *name, const char *op, const char *in, const char *device) {
  tfd_node_def *n = tfd_graph_def_add_node(g, name, op, NULL);
  if (in) tfd_node_def_add_input(n, in, NULL);
  if (device) tfd_node_def_set_device(n, device, NULL);
  return n;
}

static double step_median(bool with_gpu, int steps, tfd_status *st) {
  tfd_graph_def *g = tfd_graph_def_new();
  float c[16];
  for (int i = 0; i < 16; i++) c[i] = (float)i;
  int64_t dims[] = {4, 4};
  tfd_tensor *v = NULL;
  tfd_tensor_from_bytes(NULL, TFD_FLOAT32, dims, 2, c, sizeof c, &v, NULL);
  tfd_attr_value a = {.type = TFD_ATTR_TENSOR, .tensor = v};
  tfd_node_def_set_attr(node(g, "c", "Const", NULL, with_gpu ? "/device:CPU:0" : NULL), "value", &a, NULL);
  tfd_tensor_unref(v);
  node(g, "id", "Identity", "c", with_gpu ? "/device:GPU:0" : NULL);
  node(g, "sq", "Square", "id", with_gpu ? "/device:CPU:0" : NULL);
  tfd_session_options *o = tfd_session_options_new();
  tfd_session_options_set_device_count(o, "GPU", with_gpu ? 1 : 0, NULL);
  tfd_session *s = NULL;
  tfd_session_new(o, NULL, NULL, &s, st);
  double result = -1;
  if (s && tfd_session_create(s, g, st) == TFD_OK) {
    double *t = malloc(sizeof(double) * (size_t)steps);
    const char *fetch[] = {"sq"};
    int done = 0;
    for (int i = -50; i < steps; i++) {
      tfd_tensor *out = NULL;
      double t0 = now();
      if (tfd_session_run(s, NULL, NULL, NULL, 0, fetch, 1, NULL, 0, &out, NULL, st) != TFD_OK) break;
      double t1 = now();
      tfd_tensor_unref(out);
      if (i >= 0) t[done++] = t1 - t0;
    }
    if (done == steps) result = median(t, steps);
    free(t);
  }
  if (s) tfd_session_free(s);
  tfd_session_options_free(o);
  tfd_graph_def_free(g);
  return result;
}

static int bench_step(void) {
  tfd_status *st = tfd_status_new();
  int steps = quick ? 500 : 2000, rc = 0;
  double gpu = step_median(true, steps, st);
  if (gpu < 0) {
    printf("GPU step: FAILED: %s\n", tfd_status_message(st));
    rc = 1;
  } else {
    double cpu = step_median(false, steps, st);
    printf("GPU step: one session step CPU -> GPU:0 -> CPU (Const 4x4 on CPU, Identity on GPU, Square on CPU), "
           "median of %d: %.1f us (the same graph on the CPU alone: %.1f us)\n",
           steps, gpu * 1e6, cpu * 1e6);
  }
  tfd_status_free(st);
  return rc;
}

#ifdef TFDEV_BENCH_KERNELS
/* ---- the CUDA kernels against the libraries underneath ----
 * Device-math rows call the entries on a device of their own (allow_growth, so cuBLAS keeps memory
 * of its own), freed before the session rows make theirs: a GPU device's allocator otherwise takes
 * all free memory at its first allocation and the sessions' devices would find none. */
typedef enum target_kind { AT_LEAST, AT_MOST } target_kind;

typedef struct kernel_row {
  char name[96];
  double tfdev_s, floor_s, shown; /* shown: the ratio (AT_LEAST) or tfdev's value in us (AT_MOST) */
  target_kind kind;
  double bound;
  char why[400]; /* non-empty: not run, and why */
} kernel_row;

enum { MATMUL_SESSION, MATMUL_ENTRY, ADD_SESSION, ADD_ENTRY, CHAIN_SESSION, CHAIN_ENTRY, CHAIN_GRAPH, NUM_ROWS };
static kernel_row rows[NUM_ROWS];
static double copy_bandwidth; /* cudaMemcpy D2D, bytes read and written per second */
static double chain_step_s, chain_base_s, graph_step_s, graph_base_s; /* graphs off, on */
static double launch_floor_s = -1, graph_floor_s = -1; /* gpu_floor.cu's kernel per launch, per graph node */

static void set_row(int r, const char *name, double tfdev_s, double floor_s, double shown, target_kind kind,
                    double bound, const char *why) {
  kernel_row *k = &rows[r];
  snprintf(k->name, sizeof k->name, "%s", name);
  k->tfdev_s = tfdev_s, k->floor_s = floor_s, k->shown = shown, k->kind = kind, k->bound = bound;
  snprintf(k->why, sizeof k->why, "%s", why ? why : "");
}

static void print_kernel_row(const kernel_row *k) {
  char t[32], f[32], r[32], target[32];
  snprintf(target, sizeof target, k->kind == AT_LEAST ? "ratio >= %.2f" : "<= %.3g us", k->bound);
  if (k->why[0]) {
    printf("| %-60s | %12s | %12s | %8s | %-14s | %-4s |  %s\n", k->name, "not run", "-", "-", target, "-", k->why);
    return;
  }
  snprintf(t, sizeof t, "%.1f us", k->tfdev_s * 1e6);
  if (k->floor_s > 0) snprintf(f, sizeof f, "%.1f us", k->floor_s * 1e6);
  else snprintf(f, sizeof f, "-");
  snprintf(r, sizeof r, k->kind == AT_LEAST ? "%.3f" : "%.2f us", k->shown);
  bool met = k->kind == AT_LEAST ? k->shown >= k->bound : k->shown <= k->bound;
  printf("| %-60s | %12s | %12s | %8s | %-14s | %-4s |\n", k->name, t, f, r, target,
         null_runtime ? "-" : met ? "yes" : "NO");
}

static int kernel_reps(int full) { return quick ? (full / 4 < 5 ? 5 : full / 4) : full; }

/* ---- device-math entries, called directly ---- */
static void *dev_alloc(tfd_device *gpu, size_t bytes, float value) {
  void *p = tfd_allocator_allocate(tfd_device_get_allocator(gpu), 256, bytes, NULL);
  if (!p) return NULL;
  size_t n = bytes / sizeof(float);
  float *h = malloc(bytes);
  for (size_t i = 0; i < n; i++) h[i] = value + (float)(i % 7) * 0.125f;
  cudaMemcpy(p, h, bytes, cudaMemcpyHostToDevice);
  cudaDeviceSynchronize();
  free(h);
  return p;
}

static double matmul_floor_s = -1;

static void entry_matmul(tfd_device *gpu) {
  const int64_t n = 4096;
  size_t bytes = (size_t)(n * n) * sizeof(float);
  int reps = kernel_reps(21);
  tfd_status *st = tfd_status_new();
  const char *name = "MatMul 4096x4096 float32, device-math entry vs cublasSgemm";
  void *a = dev_alloc(gpu, bytes, 1), *b = dev_alloc(gpu, bytes, 2), *c = dev_alloc(gpu, bytes, 0);
  if (!a || !b || !c) {
    set_row(MATMUL_ENTRY, name, 0, 0, 0, AT_LEAST, 0.95, "cannot allocate three 64 MiB buffers");
  } else {
    /* cublasSgemm, the floor: the same product, default (FP32) math, on the default stream */
    cublasHandle_t h = NULL;
    double *t = malloc(sizeof(double) * (size_t)reps);
    if (cublasCreate(&h) == CUBLAS_STATUS_SUCCESS) {
      const float one = 1, zero = 0;
      for (int i = -3; i < reps; i++) {
        double t0 = now();
        cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)n, (int)n, &one, b, (int)n, a, (int)n, &zero, c, (int)n);
        cudaDeviceSynchronize();
        if (i >= 0) t[i] = now() - t0;
      }
      matmul_floor_s = median(t, reps);
      cublasDestroy(h);
    }
    tfd_dm_matmul p = {.dtype = TFD_FLOAT32, .a = a, .b = b, .c = c, .m = n, .n = n, .k = n, .batch = 1};
    int i;
    for (i = -3; i < reps; i++) {
      double t0 = now();
      if (gpu->math->matmul(gpu, &p, st) != TFD_OK) break;
      cudaDeviceSynchronize();
      if (i >= 0) t[i] = now() - t0;
    }
    if (i < reps) set_row(MATMUL_ENTRY, name, 0, 0, 0, AT_LEAST, 0.95, tfd_status_message(st));
    else if (matmul_floor_s < 0) set_row(MATMUL_ENTRY, name, 0, 0, 0, AT_LEAST, 0.95, "cublasCreate failed");
    else {
      double e = median(t, reps);
      set_row(MATMUL_ENTRY, name, e, matmul_floor_s, matmul_floor_s / e, AT_LEAST, 0.95, NULL);
    }
    free(t);
  }
  tfd_allocator *da = tfd_device_get_allocator(gpu);
  if (a) tfd_allocator_deallocate(da, a, bytes);
  if (b) tfd_allocator_deallocate(da, b, bytes);
  if (c) tfd_allocator_deallocate(da, c, bytes);
  tfd_status_free(st);
}

static void entry_add(tfd_device *gpu) {
  const int64_t n = (int64_t)64 << 20;
  size_t bytes = (size_t)n * sizeof(float);
  int reps = kernel_reps(21);
  tfd_status *st = tfd_status_new();
  const char *name = "AddV2 64M float32, device-math entry vs cudaMemcpy D2D bandwidth";
  void *x = dev_alloc(gpu, bytes, 1), *y = dev_alloc(gpu, bytes, 2), *z = dev_alloc(gpu, bytes, 0);
  if (!x || !y || !z) {
    set_row(ADD_ENTRY, name, 0, 0, 0, AT_LEAST, 0.85, "cannot allocate three 256 MiB buffers");
  } else {
    /* the floor: a device-to-device copy of one operand (read once, written once) */
    double *t = malloc(sizeof(double) * (size_t)reps);
    for (int i = -3; i < reps; i++) {
      double t0 = now();
      cudaMemcpy(z, x, bytes, cudaMemcpyDeviceToDevice);
      cudaDeviceSynchronize();
      if (i >= 0) t[i] = now() - t0;
    }
    double copy_s = median(t, reps);
    copy_bandwidth = 2.0 * (double)bytes / copy_s;
    tfd_dm_walk w;
    memset(&w, 0, sizeof w);
    w.nd = 1, w.dims[0] = n, w.strides[0][0] = w.strides[1][0] = w.strides[2][0] = 1;
    int i;
    for (i = -3; i < reps; i++) {
      double t0 = now();
      if (gpu->math->binary(gpu, TFD_DM_ADD, TFD_FLOAT32, x, y, z, &w, st) != TFD_OK) break;
      cudaDeviceSynchronize();
      if (i >= 0) t[i] = now() - t0;
    }
    if (i < reps) {
      set_row(ADD_ENTRY, name, 0, 0, 0, AT_LEAST, 0.85, tfd_status_message(st));
    } else {
      double e = median(t, reps); /* AddV2 moves 3 * bytes */
      set_row(ADD_ENTRY, name, e, copy_s, 3.0 * (double)bytes / e / copy_bandwidth, AT_LEAST, 0.85, NULL);
    }
    free(t);
  }
  tfd_allocator *da = tfd_device_get_allocator(gpu);
  if (x) tfd_allocator_deallocate(da, x, bytes);
  if (y) tfd_allocator_deallocate(da, y, bytes);
  if (z) tfd_allocator_deallocate(da, z, bytes);
  tfd_status_free(st);
}

/* The entry's own cost: 1,000 queued unary calls on 16 floats, then one wait. */
static void entry_chain(tfd_device *gpu) {
  const int len = 1000;
  int reps = kernel_reps(101);
  tfd_status *st = tfd_status_new();
  const char *name = "1,000 device-math unary entries on 16 floats, per call";
  void *x = dev_alloc(gpu, 64, 1);
  double *t = malloc(sizeof(double) * (size_t)reps);
  int i = -3;
  bool ok = x != NULL;
  for (; ok && i < reps; i++) {
    double t0 = now();
    for (int k = 0; k < len && ok; k++) ok = gpu->math->unary(gpu, TFD_DM_NEG, TFD_FLOAT32, x, x, 16, 0, st) == TFD_OK;
    cudaDeviceSynchronize();
    if (ok && i >= 0) t[i] = (now() - t0) / len;
  }
  /* The floors (gpu_floor.cu): the same negation as a kernel of its own, 1,000 launches straight on
   * one stream, then one wait; and those launches captured once as a CUDA graph, replayed. */
  cudaStream_t fs = NULL;
  cudaGraphExec_t fg = NULL;
  if (ok && cudaStreamCreateWithFlags(&fs, cudaStreamNonBlocking) == cudaSuccess) {
    double *u = malloc(sizeof(double) * (size_t)reps), *v = malloc(sizeof(double) * (size_t)reps);
    bool launched = true, graphed = tfd_bench_floor_graph(x, 16, len, fs, &fg) == cudaSuccess;
    for (int j = -3; j < reps && (launched || graphed); j++) {
      double t0 = now();
      launched = launched && tfd_bench_floor_launches(x, 16, len, fs) == cudaSuccess;
      cudaStreamSynchronize(fs);
      double t1 = now();
      graphed = graphed && cudaGraphLaunch(fg, fs) == cudaSuccess;
      cudaStreamSynchronize(fs);
      double t2 = now();
      if (j >= 0) u[j] = (t1 - t0) / len, v[j] = (t2 - t1) / len;
    }
    if (launched) launch_floor_s = median(u, reps);
    if (graphed) graph_floor_s = median(v, reps);
    if (fg) cudaGraphExecDestroy(fg);
    free(u);
    free(v);
    cudaStreamDestroy(fs);
  }
  if (!ok) set_row(CHAIN_ENTRY, name, 0, 0, 0, AT_MOST, 3, x ? tfd_status_message(st) : "cannot allocate");
  else {
    double e = median(t, reps);
    set_row(CHAIN_ENTRY, name, e, launch_floor_s > 0 ? launch_floor_s : 0, e * 1e6, AT_MOST, 3, NULL);
  }
  free(t);
  if (x) tfd_allocator_deallocate(tfd_device_get_allocator(gpu), x, 64);
  tfd_status_free(st);
}

/* ---- sessions ---- */
/* A session over a graph whose every node is on GPU:0 (no soft placement: a node without a GPU
 * kernel fails instead of quietly running on the CPU), with step graphs (gpu.graphs) on or off. */
static tfd_node_def *gpu_node(tfd_graph_def *g, const char *name, const char *op, const char *a, const char *b) {
  tfd_node_def *n = tfd_graph_def_add_node(g, name, op, NULL);
  if (a) tfd_node_def_add_input(n, a, NULL);
  if (b) tfd_node_def_add_input(n, b, NULL);
  tfd_node_def_set_device(n, "/device:GPU:0", NULL);
  return n;
}

/* A Const on GPU:0 (too large to be folded: the optimiser folds results up to 10 MiB). */
static void gpu_const(tfd_graph_def *g, const char *name, const int64_t *dims, int nd, float value) {
  tfd_tensor *t = NULL;
  tfd_tensor_new(NULL, TFD_FLOAT32, dims, nd, &t, NULL);
  float *p = tfd_tensor_data(t);
  for (int64_t i = 0, n = tfd_tensor_numel(t); i < n; i++) p[i] = value + (float)(i % 7) * 0.125f;
  tfd_attr_value a = {.type = TFD_ATTR_TENSOR, .tensor = t};
  tfd_node_def_set_attr(gpu_node(g, name, "Const", NULL, NULL), "value", &a, NULL);
  tfd_tensor_unref(t);
}

/* The median of `reps` steps running `target` (no fetch), each waited for on the device; -1 with
 * status set when the session cannot be made or a step fails. */
static double session_median(tfd_graph_def *g, const char *target, int reps, tfd_status *st) {
  tfd_session *s = tg_gpu_session(g, true, st);
  if (!s) return -1;
  double *t = malloc(sizeof(double) * (size_t)reps), result = -1;
  int done = 0;
  for (int i = -3; i < reps; i++) {
    double t0 = now();
    if (tfd_session_run(s, NULL, NULL, NULL, 0, NULL, 0, &target, 1, NULL, NULL, st) != TFD_OK) break;
    cudaDeviceSynchronize();
    if (i >= 0) t[done++] = now() - t0;
  }
  if (done == reps) result = median(t, reps);
  free(t);
  tfd_session_free(s);
  return result;
}

static void session_matmul(void) {
  const int64_t n = 4096;
  tfd_status *st = tfd_status_new();
  tfd_graph_def *g = tfd_graph_def_new();
  int64_t dims[] = {n, n};
  gpu_const(g, "a", dims, 2, 1);
  gpu_const(g, "b", dims, 2, 2);
  gpu_node(g, "mm", "MatMul", "a", "b");
  double t = session_median(g, "mm", kernel_reps(21), st);
  const char *name = "MatMul 4096x4096 float32, session step vs cublasSgemm";
  if (t < 0) set_row(MATMUL_SESSION, name, 0, 0, 0, AT_LEAST, 0.95, tfd_status_message(st));
  else if (matmul_floor_s < 0) set_row(MATMUL_SESSION, name, 0, 0, 0, AT_LEAST, 0.95, "no cublasSgemm time");
  else set_row(MATMUL_SESSION, name, t, matmul_floor_s, matmul_floor_s / t, AT_LEAST, 0.95, NULL);
  tfd_graph_def_free(g);
  tfd_status_free(st);
}

static void session_add(void) {
  const int64_t n = (int64_t)64 << 20;
  tfd_status *st = tfd_status_new();
  tfd_graph_def *g = tfd_graph_def_new();
  int64_t dims[] = {n};
  gpu_const(g, "x", dims, 1, 1);
  gpu_const(g, "y", dims, 1, 2);
  gpu_node(g, "add", "AddV2", "x", "y");
  double t = session_median(g, "add", kernel_reps(21), st);
  const char *name = "AddV2 64M float32, session step vs cudaMemcpy D2D bandwidth";
  double bytes = (double)n * sizeof(float);
  if (t < 0) set_row(ADD_SESSION, name, 0, 0, 0, AT_LEAST, 0.85, tfd_status_message(st));
  else if (copy_bandwidth <= 0) set_row(ADD_SESSION, name, 0, 0, 0, AT_LEAST, 0.85, "no copy bandwidth measured");
  else set_row(ADD_SESSION, name, t, 2.0 * bytes / copy_bandwidth, 3.0 * bytes / t / copy_bandwidth, AT_LEAST, 0.85, NULL);
  tfd_graph_def_free(g);
  tfd_status_free(st);
}

/* A chain x -> Neg -> Neg -> ... (`len` nodes) on GPU:0 from a fed 16-float placeholder, the last
 * fetched: the median step. len 0 is x -> Identity, the step's fixed cost. */
static double chain_median(int len, int reps, bool graphs, tfd_status *st) {
  tfd_graph_def *g = tfd_graph_def_new();
  tfd_attr_value dt = {.type = TFD_ATTR_TYPE, .dtype = TFD_FLOAT32};
  tfd_node_def_set_attr(gpu_node(g, "x", "Placeholder", NULL, NULL), "dtype", &dt, NULL);
  char prev[32] = "x", name[32] = "x";
  for (int i = 0; i < (len ? len : 1); i++) {
    snprintf(name, sizeof name, "n%d", i);
    gpu_node(g, name, len ? "Neg" : "Identity", prev, NULL);
    snprintf(prev, sizeof prev, "%s", name);
  }
  tfd_session *s = tg_gpu_session(g, graphs, st);
  double result = -1;
  if (s) {
    int64_t dims[] = {16};
    float v[16] = {0};
    tfd_tensor *feed = NULL;
    tfd_tensor_from_bytes(NULL, TFD_FLOAT32, dims, 1, v, sizeof v, &feed,
                          NULL);
    const char *feed_name = "x", *fetch = name;
    double *t = malloc(sizeof(double) * (size_t)reps);
    int done = 0;
    for (int i = -20; i < reps; i++) {
      tfd_tensor *out = NULL;
      double t0 = now();
      if (tfd_session_run(s, NULL, &feed_name, &feed, 1, &fetch, 1, NULL, 0, &out, NULL, st) != TFD_OK) break;
      double t1 = now();
      tfd_tensor_unref(out);
      if (i >= 0) t[done++] = t1 - t0;
    }
    if (done == reps) result = median(t, reps);
    free(t);
    tfd_tensor_unref(feed);
    tfd_session_free(s);
  }
  tfd_graph_def_free(g);
  return result;
}

/* One chain row: a 1-node and a len-node chain, with step graphs on or off; the difference per node.
 * The targets: 3 us per node launched one by one, 1 us per node replayed in a CUDA graph. */
static void chain_row(int row, const char *name, int len, int reps, bool graphs, double *base_s, double *step_s,
                      tfd_status *st) {
  double bound = graphs ? 1 : 3;
  *base_s = chain_median(0, reps, graphs, st);
  *step_s = *base_s >= 0 ? chain_median(len, reps, graphs, st) : -1;
  if (*step_s < 0) {
    set_row(row, name, 0, 0, 0, AT_MOST, bound, tfd_status_message(st));
    return;
  }
  double per = (*step_s - *base_s) / len, floor_s = graphs ? graph_floor_s : launch_floor_s;
  set_row(row, name, per, floor_s > 0 ? floor_s : 0, per * 1e6, AT_MOST, bound, NULL);
}

static void session_chain(void) {
  const int len = 1000;
  int reps = kernel_reps(101);
  tfd_status *st = tfd_status_new();
  chain_row(CHAIN_SESSION, "1,000-node chain of Neg on 16 floats (session, gpu.graphs off), per node", len, reps, false,
            &chain_base_s, &chain_step_s, st);
  /* The same chain replayed as a CUDA graph (the default): the executor's host work and the 1,000
   * launches become one launch per step. */
  chain_row(CHAIN_GRAPH, "1,000-node chain, session with step graphs (CUDA-graph replay), per node", len, reps, true,
            &graph_base_s, &graph_step_s, st);
  tfd_status_free(st);
}

static int bench_kernels(void) {
  tfd_factory_registry *r = tfd_factory_registry_new();
  tfd_session_options *o = tfd_session_options_new();
  tfd_session_options_set_device_count(o, "GPU", 1, NULL);
  tfd_session_options_set_gpu_allow_growth(o, true);
  tfd_device_list *l = tfd_device_list_new();
  tfd_status *st = tfd_status_new();
  int rc = 0;
  if (tfd_backend_register_factories("cuda", r, st) != TFD_OK ||
      tfd_factory_registry_add_devices(r, o, TFD_LOCAL_NAME_PREFIX, NULL, l, st) != TFD_OK || tfd_device_list_size(l) < 2) {
    printf("CUDA kernels: FAILED making the devices: %s\n", tfd_status_message(st));
    rc = 1;
  } else if (!tfd_device_list_get(l, 1)->math) {
    printf("SKIP CUDA kernels: the GPU device has no device math (module built with TFDEV_CUDA_KERNELS=OFF)\n");
  } else {
    tfd_device *gpu = tfd_device_list_get(l, 1);
    entry_matmul(gpu);
    entry_add(gpu);
    entry_chain(gpu);
  }
  tfd_device_list_free(l);
  tfd_status_free(st);
  tfd_session_options_free(o);
  tfd_factory_registry_free(r);
  if (rc || !rows[MATMUL_ENTRY].name[0]) return rc;
  session_matmul();
  session_add();
  session_chain();
  printf("\nCUDA kernels against the libraries underneath, medians (ratio = floor time / tfdev time, or "
         "bandwidth over copy bandwidth; bandwidth counts bytes read and written)\n");
  printf("| %-60s | %12s | %12s | %8s | %-14s | %-4s |\n", "benchmark", "tfdev", "floor", "ratio", "target", "met");
  for (int i = 0; i < NUM_ROWS; i++) print_kernel_row(&rows[i]);
  if (copy_bandwidth > 0) printf("  (cudaMemcpy D2D: %.0f GB/s)\n", copy_bandwidth / 1e9);
  if (launch_floor_s > 0 || graph_floor_s > 0)
    printf("  (floors of the chain rows: the same negation as a kernel of its own, 1,000 launched straight on one "
           "stream: %.2f us each; captured once as a CUDA graph and replayed: %.2f us each)\n",
           launch_floor_s * 1e6, graph_floor_s * 1e6);
  if (chain_step_s >= 0)
    printf("  (chain step %.1f us, x -> Identity step %.1f us: per node is their difference / 1,000)\n",
           chain_step_s * 1e6, chain_base_s * 1e6);
  if (graph_step_s >= 0 && chain_step_s > 0)
    printf("  (with step graphs: chain step %.1f us, x -> Identity step %.1f us; whole step %.1fx faster)\n",
           graph_step_s * 1e6, graph_base_s * 1e6, chain_step_s / graph_step_s);
  return 0;
}
#endif

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0); /* rows as they come, also when a later one fails hard */
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--quick") == 0) quick = true;
    else {
      fprintf(stderr, "tfdev_gpu_bench: unknown argument %s (--quick)\n", argv[i]);
      return 2;
    }
  }
  tfd_backend_info info;
  tfd_backend_load("cuda", &info, NULL);
  if (!info.loaded || info.num_devices == 0) {
    printf("SKIP GPU copies, steps and kernels: no GPU here (%s)\n", info.why ? info.why : "CUDA backend not loaded");
    return 0;
  }
  tfd_factory_registry *r = tfd_factory_registry_new();
  tfd_session_options *o = tfd_session_options_new();
  tfd_session_options_set_device_count(o, "GPU", 1, NULL);
  tfd_device_list *l = tfd_device_list_new();
  tfd_status *st = tfd_status_new();
  int rc = 0;
  if (tfd_backend_register_factories("cuda", r, st) != TFD_OK ||
      tfd_factory_registry_add_devices(r, o, TFD_LOCAL_NAME_PREFIX, NULL, l, st) != TFD_OK ||
      tfd_device_list_size(l) < 2) {
    printf("GPU copies: FAILED making the devices: %s\n", tfd_status_message(st));
    rc = 1;
  } else {
    tfd_device_attributes a;
    tfd_device_get_attributes(tfd_device_list_get(l, 1), &a);
    printf("(GPU: %s)\n", a.physical_device_desc);
    null_runtime = strstr(a.physical_device_desc, "null CUDA runtime") != NULL;
    if (null_runtime)
      printf("(the null CUDA runtime: no kernel runs and copies are memcpy, so every figure below is tfdev's own "
             "host work and the CUDA runtime's share is left out; no target is judged)\n");
    rc = bench_copies(tfd_device_list_get(l, 0), tfd_device_list_get(l, 1));
  }
  tfd_device_list_free(l);
  tfd_status_free(st);
  tfd_session_options_free(o);
  tfd_factory_registry_free(r);
  if (rc == 0) rc = bench_step();
#ifdef TFDEV_BENCH_KERNELS
  if (rc == 0) rc = bench_kernels();
#endif
  return rc;
}
