/* The GPU section of scripts/bench/run (tfdev_gpu_bench, built only with the CUDA backend):
 *  1. host <-> device copy bandwidth through tfd_tensor_copy_to (what _Recv, _Feed/_Fetch and the
 *     data-movement kernels use) with pinned and with pageable host tensors, beside cudaMemcpy
 *     called directly on buffers of the same kind, 4 KiB to 256 MiB, medians; the ratio's target
 *     is >= 0.9 of direct. copy_to makes its destination tensor each time (as the runtime does), so
 *     its column includes that allocation; the direct column reuses one buffer.
 *  2. the median time of one session step of a tiny graph that goes CPU -> GPU -> CPU (Const on
 *     the CPU, Identity on GPU:0, Square on the CPU), beside the same graph on the CPU alone.
 * Without a GPU it prints one SKIP line naming why and exits 0.
 *   tfdev_gpu_bench [--quick] */
#include <cuda_runtime_api.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/core/tensor_internal.h"
#include "scripts/bench/timing.h"
#include "tfdev/tfdev.h"

#define KIB ((size_t)1 << 10)
#define MIB ((size_t)1 << 20)

static bool quick;

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
  tfd_tensor *h = tfd_tensor_new(host, TFD_UINT8, dims, 1, NULL);
  memset(tfd_tensor_data(h), 7, n);
  for (int i = -3; i < reps; i++) { /* three warm-up rounds */
    double t0 = now();
    tfd_tensor *d = tfd_tensor_copy_to(h, dev, NULL);
    cudaDeviceSynchronize();
    double t1 = now();
    tfd_tensor_unref(d);
    cudaMemcpy(direct_dst, direct_src, n, cudaMemcpyHostToDevice);
    cudaDeviceSynchronize();
    double t2 = now();
    if (i >= 0) t[i] = t1 - t0, u[i] = t2 - t1;
  }
  tfd_tensor_unref(h);
  copy_row r = {median(t, reps), median(u, reps)};
  free(t);
  free(u);
  return r;
}

/* Device to host: tfd_tensor_copy_to returns once the host tensor holds the bytes. */
static copy_row time_d2h(tfd_allocator *dev, tfd_allocator *host, size_t n, void *direct_src, void *direct_dst) {
  int reps = reps_for(n);
  double *t = malloc(sizeof(double) * (size_t)reps), *u = malloc(sizeof(double) * (size_t)reps);
  int64_t dims[] = {(int64_t)n};
  tfd_tensor *d = tfd_tensor_new(dev, TFD_UINT8, dims, 1, NULL);
  cudaMemset(tfd_tensor_data(d), 3, n);
  cudaDeviceSynchronize();
  for (int i = -3; i < reps; i++) {
    double t0 = now();
    tfd_tensor *h = tfd_tensor_copy_to(d, host, NULL);
    double t1 = now();
    tfd_tensor_unref(h);
    double t2 = now();
    cudaMemcpy(direct_dst, direct_src, n, cudaMemcpyDeviceToHost);
    double t3 = now();
    if (i >= 0) t[i] = t1 - t0, u[i] = t3 - t2;
  }
  tfd_tensor_unref(d);
  copy_row r = {median(t, reps), median(u, reps)};
  free(t);
  free(u);
  return r;
}

static void print_row(const char *dir, const char *mem, size_t n, copy_row r) {
  double ratio = r.tfdev_s > 0 ? r.direct_s / r.tfdev_s : 0;
  char size[32];
  if (n >= MIB) snprintf(size, sizeof size, "%zu MiB", n / MIB);
  else snprintf(size, sizeof size, "%zu KiB", n / KIB);
  printf("%-4s %-8s %8s   %9.2f GB/s %9.2f us   %9.2f GB/s %9.2f us   %5.2f%s\n", dir, mem, size, gbps(n, r.tfdev_s),
         r.tfdev_s * 1e6, gbps(n, r.direct_s), r.direct_s * 1e6, ratio, ratio >= 0.9 ? "" : "  (below 0.9)");
}

static int bench_copies(tfd_device *cpu, tfd_device *gpu) {
  tfd_allocator *dev = tfd_device_get_allocator(gpu), *pinned = tfd_device_get_allocator(cpu);
  size_t max = 256 * MIB;
  void *dbuf = NULL, *pinned_buf = NULL, *pageable_buf = malloc(max);
  if (cudaMalloc(&dbuf, max) != cudaSuccess || cudaHostAlloc(&pinned_buf, max, cudaHostAllocPortable) != cudaSuccess ||
      !pageable_buf) {
    printf("SKIP GPU copies: cannot allocate 256 MiB buffers for the direct copies (%s)\n",
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
  tfd_tensor *v = tfd_tensor_from_bytes(NULL, TFD_FLOAT32, dims, 2, c, sizeof c, NULL);
  tfd_attr_value a = {.type = TFD_ATTR_TENSOR, .tensor = v};
  tfd_node_def_set_attr(node(g, "c", "Const", NULL, with_gpu ? "/device:CPU:0" : NULL), "value", &a, NULL);
  tfd_tensor_unref(v);
  node(g, "id", "Identity", "c", with_gpu ? "/device:GPU:0" : NULL);
  node(g, "sq", "Square", "id", with_gpu ? "/device:CPU:0" : NULL);
  tfd_session_options *o = tfd_session_options_new();
  tfd_session_options_set_device_count(o, "GPU", with_gpu ? 1 : 0, NULL);
  tfd_session *s = tfd_session_new(o, NULL, NULL, st);
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

int main(int argc, char **argv) {
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
    printf("SKIP GPU copies and steps: no GPU here (%s)\n", info.why ? info.why : "CUDA backend not loaded");
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
    rc = bench_copies(tfd_device_list_get(l, 0), tfd_device_list_get(l, 1));
  }
  tfd_device_list_free(l);
  tfd_status_free(st);
  tfd_session_options_free(o);
  tfd_factory_registry_free(r);
  if (rc == 0) rc = bench_step();
  return rc;
}
