/* The pinned host allocator of the CUDA backend (cudaHostAlloc): the GPU-compatible CPU device's
 * memory and a GPU device's host-side memory, so copies to and from GPUs are DMA. (A GPU device's
 * own memory comes from the BFC allocator over cudaMalloc regions, bfc_allocator.c.) It keeps the
 * statistics and the limit every tfdev allocator has; a request past the limit, or one CUDA
 * refuses, is RESOURCE_EXHAUSTED naming the allocator and the request. */
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "../runtime/core/allocator_internal.h"
#include "../runtime/core/status_internal.h"
#include "cuda_backend.h"

typedef struct cuda_allocator {
  tfd_allocator base;
  pthread_mutex_t mu;
  tfd_allocator_stats stats;
} cuda_allocator;

static void *ca_allocate(tfd_allocator *a_, size_t alignment, size_t size, tfd_status *st) {
  cuda_allocator *a = (cuda_allocator *)a_;
  if (alignment > 256) { /* CUDA allocations are 256-byte aligned */
    tfd_status_setf(st, TFD_INVALID_ARGUMENT, "%s: alignment %zu is above 256", a->base.name, alignment);
    return NULL;
  }
  pthread_mutex_lock(&a->mu);
  int64_t in_use = a->stats.bytes_in_use, limit = a->stats.bytes_limit;
  bool over = limit > 0 && in_use + (int64_t)size > limit;
  if (!over) a->stats.bytes_in_use += (int64_t)size; /* reserved before asking CUDA */
  else a->stats.num_refused++;
  pthread_mutex_unlock(&a->mu);
  if (over) {
    tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "OOM when allocating %zu bytes on %s: %lld of %lld bytes in use", size,
                    a->base.name, (long long)in_use, (long long)limit);
    return NULL;
  }
  void *p = NULL;
  cudaError_t err = cudaSuccess;
  if (size) {
    err = cudaHostAlloc(&p, size, cudaHostAllocPortable);
  } else {
    p = (void *)(uintptr_t)256; /* a unique non-NULL pointer nobody dereferences */
  }
  pthread_mutex_lock(&a->mu);
  if (err != cudaSuccess) {
    a->stats.bytes_in_use -= (int64_t)size;
    a->stats.num_refused++;
  } else {
    a->stats.num_allocs++;
    if (a->stats.bytes_in_use > a->stats.peak_bytes_in_use) a->stats.peak_bytes_in_use = a->stats.bytes_in_use;
    if ((int64_t)size > a->stats.largest_alloc_size) a->stats.largest_alloc_size = (int64_t)size;
  }
  pthread_mutex_unlock(&a->mu);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "OOM when allocating %zu bytes on %s: %s", size, a->base.name,
                    cudaGetErrorString(err));
    return NULL;
  }
  return p;
}

static void ca_deallocate(tfd_allocator *a_, void *p, size_t size) {
  cuda_allocator *a = (cuda_allocator *)a_;
  if (size) cudaFreeHost(p);
  pthread_mutex_lock(&a->mu);
  a->stats.bytes_in_use -= (int64_t)size;
  pthread_mutex_unlock(&a->mu);
}

static void ca_get_stats(const tfd_allocator *a_, tfd_allocator_stats *out) {
  cuda_allocator *a = (cuda_allocator *)a_;
  pthread_mutex_lock(&a->mu);
  *out = a->stats;
  pthread_mutex_unlock(&a->mu);
}

static void ca_destroy(tfd_allocator *a_) {
  cuda_allocator *a = (cuda_allocator *)a_;
  pthread_mutex_destroy(&a->mu);
  tfd_allocator_fini(&a->base);
  free(a);
}

static const tfd_allocator_ops cuda_allocator_ops = {ca_allocate, ca_deallocate, ca_get_stats, ca_destroy, NULL};

tfd_allocator *tfd_cuda_host_allocator_new(const char *name, int64_t bytes_limit) {
  cuda_allocator *a = calloc(1, sizeof *a);
  if (!a) return NULL;
  if (!tfd_allocator_init(&a->base, &cuda_allocator_ops, name)) {
    free(a);
    return NULL;
  }
  a->stats.bytes_limit = bytes_limit;
  pthread_mutex_init(&a->mu, NULL);
  return &a->base;
}
