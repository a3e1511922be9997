/* Device memory regions kept after their allocator is gone, for the next allocator of the same GPU.
 *
 * TensorFlow keeps a GPU's memory for the life of the process (one BFC allocator per GPU, shared by
 * every session). tfdev gives each session's GPU device an allocator of its own, with that session's
 * options, and gives its memory back when the session closes. By default an allocator reserves nearly
 * all of the GPU at its first allocation: on an H200 that cudaMalloc took 0.4 s and its cudaFree
 * 0.08 s, paid by every session. So a large region an allocator frees is parked here instead, and the
 * next allocator of that GPU asking for about as much takes it without a cudaMalloc; memory that runs
 * short first evicts what is parked. One region per GPU. Plain bookkeeping, no CUDA: the callers
 * (gpu_context.c) do the cudaMalloc and cudaFree, so the logic is tested on the CPU. */
#ifndef TFDEV_GPU_REGION_CACHE_H
#define TFDEV_GPU_REGION_CACHE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#define TFD_REGION_CACHE_SLOTS 16 /* GPUs whose regions are parked; a GPU past them parks nothing */
/* Smaller regions (allow_growth's, which start at 2 MiB) are cheap to get back: never parked. */
#define TFD_REGION_CACHE_MIN_BYTES ((size_t)64 << 20)

typedef struct tfd_region_cache {
  pthread_mutex_t mu;
  struct {
    int device; /* -1: empty */
    void *ptr;
    size_t bytes;
  } slot[TFD_REGION_CACHE_SLOTS];
} tfd_region_cache;

void tfd_region_cache_init(tfd_region_cache *c);

/* The region parked for `device` when it holds at least `bytes` and at most an eighth more (a larger
 * one would be held for nothing), taken out of the cache: the caller owns it. NULL otherwise. */
void *tfd_region_cache_take(tfd_region_cache *c, int device, size_t bytes);

/* Parks ptr (bytes long) for `device`. Returns what the caller must now free itself: NULL when ptr
 * was parked and nothing was displaced; the region it displaced (*out_bytes its size) when ptr is
 * larger than the one parked; ptr itself when it is too small to park, or not parked for want of a
 * slot or because a larger region is already parked. */
void *tfd_region_cache_park(tfd_region_cache *c, int device, void *ptr, size_t bytes, size_t *out_bytes);

/* Takes out the region parked for `device`, for the caller to free (memory ran short); NULL if none. */
void *tfd_region_cache_evict(tfd_region_cache *c, int device, size_t *out_bytes);

/* Bytes parked for `device` (0 if none): device memory that cudaMemGetInfo counts as used but that
 * the next allocator may have. */
size_t tfd_region_cache_bytes(tfd_region_cache *c, int device);

#endif
