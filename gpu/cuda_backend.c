/* The CUDA backend module (libtfdev_cuda.so): TensorFlow's GPUDeviceFactory ("GPU", priority 210)
 * and GPUCompatibleCPUDeviceFactory ("CPU", 70), registered whenever the module loads, as
 * TensorFlow's CUDA builds register them. With no driver or no device the GPU factory makes no
 * device and the CPU one hands out ordinary pageable memory, each saying so in one info line.
 *
 * The module is loaded by runtime/device/backend.c; it reaches the runtime only through the host
 * table (runtime/device/backend_shim.c). Its GPU devices have device memory (BFC over cudaMalloc) that
 * the runtime moves bytes in and out of through the allocator's copies (gpu_context.c), stream
 * groups, and their attributes as TensorFlow gives them. Built with TFDEV_CUDA_KERNELS, their
 * arithmetic is the CUDA device math (gpu/kernels/), under the runtime's device kernels; without it
 * they run only the ops that move data. */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../runtime/core/status_internal.h"
#include "../runtime/device/backend_shim.h"
#include "../runtime/device/visible_devices.h"
#include "cuda_backend.h"
#include "gpu_context.h"
#ifdef TFDEV_CUDA_KERNELS
#include "kernels/cuda_kernels.h"
#endif

#define EXPORT __attribute__((visibility("default")))

/* What init found, once per process (the module is loaded once): the probe's answer. */
static int num_physical;

/* cudaGetDeviceCount fails, leaving its output unwritten, on a machine with the toolkit but no
 * driver: start from 0, and say which of "no NVIDIA driver" and "no CUDA device" it was. */
static int cuda_init(const tfd_backend_host *host, char *why, size_t cap) {
  tfd_backend_shim_init(host);
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    const char *what = err == cudaErrorInsufficientDriver ? "no NVIDIA driver"
                       : err == cudaErrorNoDevice        ? "no CUDA device"
                                                         : "CUDA unavailable";
    snprintf(why, cap, "%s (cudaGetDeviceCount: %s)", what, cudaGetErrorString(err));
    (void)cudaGetLastError(); /* clear the error so later calls start clean */
    n = 0;
  } else if (n == 0) {
    snprintf(why, cap, "no CUDA device");
  }
  num_physical = n < TFD_GPU_MAX_DEVICES ? n : TFD_GPU_MAX_DEVICES;
  return num_physical;
}

/* ---- GPU devices (tfd_gpu_device, cuda_backend.h) ---- */
typedef tfd_gpu_device gpu_device;

/* Device::Sync: waits for the device's own streams (what its nodes and copies were queued on), not
 * for everything on the CUDA device. The executor calls it after each node under sync_every_op. */
static tfd_code gpu_sync(tfd_device *d, tfd_status *st) { return tfd_gpu_ctx_sync(((gpu_device *)d)->ctx, st); }

static tfd_allocator *gpu_get_allocator(tfd_device *d, tfd_alloc_attrs attrs) {
  gpu_device *g = (gpu_device *)d;
  return attrs.on_host ? g->host : g->allocator;
}

static void gpu_destroy(tfd_device *d) {
  gpu_device *g = (gpu_device *)d;
  if (g->allocator) tfd_gpu_shared_release(g->ctx->cuda_id); /* the last device on the GPU drops it */
  if (g->host) tfd_allocator_unref(g->host);
  tfd_gpu_ctx_unref(g->ctx); /* freed here unless tensors or other sessions still hold it */
  tfd_device_fini(d);
  free(g);
}

static const tfd_device_ops gpu_device_ops = {NULL, NULL, gpu_sync, gpu_get_allocator, NULL, gpu_destroy};
static tfd_device_ops gpu_ops; /* gpu_device_ops with the host's defaults filled in at registration */

/* TensorFlow's locality: the device's NUMA node + 1 (0 when unknown is reported as node 0). */
static int32_t bus_id_of(const char *pci) {
  char path[256], buf[32];
  snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/numa_node", pci);
  FILE *f = fopen(path, "r");
  int node = 0;
  if (f) {
    if (fgets(buf, sizeof buf, f)) node = atoi(buf);
    fclose(f);
  }
  return node < 0 ? 1 : node + 1;
}

static tfd_device *gpu_device_new(void *arg, const char *name, int tf_id, int cuda_id, const tfd_session_options *o,
                                  tfd_status *st) {
  (void)arg;
  struct cudaDeviceProp prop;
  size_t free_bytes = 0, total = 0;
  cudaError_t err = cudaGetDeviceProperties(&prop, cuda_id);
  if (err == cudaSuccess) err = cudaSetDevice(cuda_id);
  if (err == cudaSuccess) err = cudaMemGetInfo(&free_bytes, &total);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    tfd_status_setf(st, TFD_INTERNAL, "GPU %d (CUDA device %d): %s", tf_id, cuda_id, cudaGetErrorString(err));
    return NULL;
  }
  /* per_process_gpu_memory_fraction of the total; by default what is free less a reserve for the
   * system (TensorFlow keeps some hundreds of MiB back). Only the first session on the GPU sets it:
   * while one lives, later ones share its allocator (gpu_context.h). */
  double fraction = tfd_session_options_gpu_memory_fraction(o);
  int64_t reserve = (int64_t)free_bytes / 20 < ((int64_t)256 << 20) ? (int64_t)free_bytes / 20 : ((int64_t)256 << 20);
  /* Memory a closed session's allocator parked counts as free: the new allocator will take it. */
  int64_t parked = (int64_t)tfd_gpu_parked_bytes(cuda_id);
  int64_t limit = fraction > 0 ? (int64_t)(fraction * (double)total) : (int64_t)free_bytes + parked - reserve;
  /* What is free moves by a few MiB between sessions (the driver's own use): a default limit just
   * past the parked region takes the region's size, so the region is reused, not freed and made
   * again (region_cache_take gives a region only to a request it covers). */
  if (fraction <= 0 && parked > 0 && limit > parked && limit - parked <= parked / 16) limit = parked;
  char pci[32], desc[512];
  snprintf(pci, sizeof pci, "%04x:%02x:%02x.0", prop.pciDomainID, prop.pciBusID, prop.pciDeviceID);
  snprintf(desc, sizeof desc, "device: %d, name: %s, pci bus id: %s, compute capability: %d.%d", cuda_id, prop.name, pci,
           prop.major, prop.minor);
  /* The GPU's context and its memory through TensorFlow's BFC allocator (the limit reserved on the
   * first allocation, or, under allow_growth, regions from 2 MiB doubling as needed): the ones the
   * sessions alive on this GPU share, made now if this is the first. */
  bool growth = tfd_session_options_gpu_allow_growth(o);
  int64_t asked = limit;
  bool asked_growth = growth;
  tfd_gpu_ctx *ctx = NULL;
  tfd_allocator *allocator = NULL;
#ifdef TFDEV_CUDA_KERNELS
  tfd_code (*attach)(tfd_gpu_ctx *, tfd_status *) = tfd_cuda_kernels_attach;
#else
  tfd_code (*attach)(tfd_gpu_ctx *, tfd_status *) = NULL;
#endif
  if (tfd_gpu_shared_acquire(cuda_id, name, tfd_session_options_gpu_max_streams(o), &limit, &growth, attach, &ctx,
                             &allocator, st) != TFD_OK)
    return NULL;
  if ((fraction > 0 && limit != asked) || growth != asked_growth)
    tfd_log(TFD_LOG_WARNING,
            "%s: gpu.memory_fraction %g and allow_growth %s not applied: another session holds this GPU's memory, "
            "shared (limit %lld bytes, allow_growth %s)",
            name, fraction, asked_growth ? "true" : "false", (long long)limit, growth ? "true" : "false");
  gpu_device *g = calloc(1, sizeof *g);
  if (!g) {
    tfd_gpu_shared_release(cuda_id);
    tfd_gpu_ctx_unref(ctx);
    tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory creating %s", name);
    return NULL;
  }
  g->ctx = ctx;
  g->allocator = allocator;
  if (tfd_device_init(&g->base, &gpu_ops, name, "GPU", limit, bus_id_of(pci), desc, st) != TFD_OK) {
    tfd_gpu_shared_release(cuda_id);
    tfd_gpu_ctx_unref(ctx);
    free(g);
    return NULL;
  }
  g->base.sync_every_op = tfd_session_options_gpu_sync_every_op(o);
#ifdef TFDEV_CUDA_KERNELS
  g->base.math = &tfd_cuda_device_math;
#endif
  char host_name[64];
  snprintf(host_name, sizeof host_name, "gpu_host_%d", tf_id);
  if (!(g->host = tfd_cuda_host_allocator_new(host_name, 0))) {
    gpu_destroy(&g->base);
    tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory creating %s", name);
    return NULL;
  }
  return &g->base;
}

/* GPUDeviceFactory::CreateDevices: device_count["GPU"] (default all) of the visible devices. */
static tfd_code gpu_factory_create(void *self, void *host_ctx, const tfd_session_options *o, const char *prefix,
                                   tfd_device_list *out, tfd_status *st) {
  (void)self, (void)host_ctx;
  if (num_physical == 0) { /* TensorFlow without a GPU platform: no devices, and nothing to check the list against */
    if (*tfd_session_options_visible_devices(o))
      tfd_log(TFD_LOG_INFO, "visible_devices '%s' ignored: no GPU", tfd_session_options_visible_devices(o));
    return TFD_OK;
  }
  return tfd_backend_gpu_devices_create(o, prefix, num_physical, gpu_device_new, NULL, out, st);
}

/* GPUCompatibleCPUDeviceFactory: ThreadPoolDeviceFactory's CPU devices, whose memory is pinned when
 * there are GPUs to copy to (ordinary memory otherwise). */
static tfd_allocator *pinned_allocator(void *arg, const char *name) {
  (void)arg;
  return tfd_cuda_host_allocator_new(name, TFD_CPU_DEFAULT_MEMORY_LIMIT);
}

static tfd_code gpu_cpu_factory_create(void *self, void *host_ctx, const tfd_session_options *o, const char *prefix,
                                       tfd_device_list *out, tfd_status *st) {
  (void)self, (void)host_ctx;
  return tfd_cpu_devices_create(o, prefix, num_physical > 0 ? pinned_allocator : NULL, NULL, out, st);
}

static const tfd_device_factory_ops gpu_factory_ops = {"GPUDeviceFactory", gpu_factory_create, NULL, NULL};
static const tfd_device_factory_ops gpu_cpu_factory_ops = {"GPUCompatibleCPUDeviceFactory", gpu_cpu_factory_create, NULL,
                                                           NULL};

static tfd_code cuda_register_factories(tfd_factory_registry *r, tfd_status *st) {
  gpu_ops = gpu_device_ops;
  gpu_ops.compute = tfd_device_default_compute;
  gpu_ops.compute_async = tfd_device_default_compute_async;
  gpu_ops.fill_context_map = tfd_device_default_fill_context_map;
  tfd_device_factory *gpu = NULL;
  tfd_device_factory_new(&gpu_factory_ops, NULL, &gpu, st);
  tfd_device_factory *cpu = NULL;
  if (gpu) tfd_device_factory_new(&gpu_cpu_factory_ops, NULL, &cpu, st);
  tfd_code code = cpu ? tfd_factory_registry_register(r, "GPU", gpu, TFD_PRIORITY_GPU, st) : TFD_RESOURCE_EXHAUSTED;
  if (code == TFD_OK) code = tfd_factory_registry_register(r, "CPU", cpu, TFD_PRIORITY_GPU_COMPATIBLE_CPU, st);
  if (gpu) tfd_device_factory_unref(gpu);
  if (cpu) tfd_device_factory_unref(cpu);
  if (code == TFD_OK)
    tfd_log(TFD_LOG_INFO, "backend cuda: %d GPU device%s; CPU devices get %s memory", num_physical,
            num_physical == 1 ? "" : "s", num_physical > 0 ? "pinned" : "ordinary pageable");
  return code;
}

/* With the CUDA kernels, the runtime's device kernels over this module's device math (which include
 * the data-movement ones); without them a GPU runs only the ops that move data. */
static tfd_code cuda_register_kernels(const tfd_backend_kernel_api *api, tfd_status *st) {
#ifdef TFDEV_CUDA_KERNELS
  return api->register_device_kernels("GPU", st);
#else
  return api->register_data_movement("GPU", st);
#endif
}

static const tfd_backend_module cuda_module = {TFD_BACKEND_ABI, "cuda", cuda_init, cuda_register_factories,
                                               cuda_register_kernels};

EXPORT const tfd_backend_module *tfd_backend_module_entry(void);
EXPORT const tfd_backend_module *tfd_backend_module_entry(void) { return &cuda_module; }
