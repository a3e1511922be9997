/* The pinned host allocator of the CUDA backend: the GPU-compatible CPU device's memory and a GPU
 * device's host-side memory, so copies to and from GPUs are DMA. As TensorFlow's GpuHostAllocator
 * does, it is the BFC allocator (bfc_allocator.c) over regions from cudaHostAlloc, grown as needed:
 * pinning memory is far slower than a malloc, so a tensor must not pay for it on every allocation
 * (a per-tensor cudaHostAlloc would also put cudaFreeHost on the event manager's thread whenever a
 * copy's release dropped a host tensor). Requests past the limit, or regions CUDA refuses, are
 * RESOURCE_EXHAUSTED naming the allocator and the request. */
#include <cuda_runtime_api.h>
#include <stdint.h>

#include "../runtime/core/allocator_internal.h"
#include "../runtime/core/status_internal.h"
#include "bfc_allocator.h"
#include "cuda_backend.h"

/* TensorFlow's default bound on pinned host memory (TF_GPU_HOST_MEM_LIMIT_IN_MB): 64 GiB. */
#define DEFAULT_PINNED_LIMIT ((int64_t)64 << 30)

static void *pinned_region(void *ctx, size_t bytes) {
  (void)ctx;
  void *p = NULL;
  if (cudaHostAlloc(&p, bytes, cudaHostAllocPortable) != cudaSuccess) {
    (void)cudaGetLastError();
    return NULL;
  }
  return p;
}

static void pinned_free(void *ctx, void *p, size_t bytes) {
  (void)ctx, (void)bytes;
  cudaFreeHost(p);
}

tfd_allocator *tfd_cuda_host_allocator_new(const char *name, int64_t bytes_limit) {
  tfd_bfc_region_provider regions = {pinned_region, pinned_free, NULL, NULL};
  tfd_bfc_options options = {.memory_limit = bytes_limit > 0 ? bytes_limit : DEFAULT_PINNED_LIMIT, .allow_growth = true};
  return tfd_bfc_allocator_new(name, &regions, &options, NULL);
}
