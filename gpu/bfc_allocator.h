/* The BFC ("best-fit with coalescing") allocator that GPU devices allocate from, as
 * TensorFlow's BFCAllocator: device memory is reserved from a region provider in a few
 * large regions and carved into chunks here, because cudaMalloc/cudaFree are slow and
 * synchronise the device. Only the bookkeeping lives here, in plain C over an abstract
 * provider, so that machines without a GPU test it with host memory.
 *
 * It is a tfd_allocator: tfd_allocator_allocate, _deallocate, _get_stats, _trim and
 * _unref work on it. It is thread-safe (one mutex; the provider is called under it).
 *
 * Behaviour, as TensorFlow's:
 * - Requests are rounded up to a multiple of 256 bytes; every pointer returned is 256-byte
 *   aligned. An alignment above 256 is INVALID_ARGUMENT (as is one that is not a power of
 *   two of at least sizeof(void *)).
 * - A request for 0 bytes returns a unique 256-byte chunk (TensorFlow returns NULL, but
 *   tfdev's tensors treat NULL as failure and may hold 0 elements); it counts as 256 bytes.
 * - Nothing is reserved at creation: the first region is reserved by the first allocation.
 *   Without allow_growth that region is the whole memory_limit (rounded down to 256 bytes);
 *   with allow_growth it is min(memory_limit, 2 MiB), and each later region is double the
 *   last (at least the request), capped by what is left under memory_limit. When the
 *   provider refuses a region, the allocator asks again in 90% steps down to the request's
 *   size, once in its life (TensorFlow's backpedal; later refusals fail the allocation).
 * - Free chunks are binned by size and the smallest that fits (lowest address on ties) is
 *   used, split when the rest is worth keeping (at least half the chunk, or 128 MiB).
 *   Freed chunks merge with free neighbours in their region. Regions never merge.
 * - Regions go back to the provider when the allocator is destroyed, and by
 *   tfd_allocator_trim for regions with nothing allocated in them.
 * - Statistics count chunk sizes, as TensorFlow does: a chunk not worth splitting counts
 *   whole (tfd_bfc_allocator_allocated_size says how much). bytes_cached is what the
 *   regions hold that is not in use; num_refused counts RESOURCE_EXHAUSTED refusals.
 * - Freeing a pointer the allocator did not hand out (or already took back) is reported
 *   on stderr, counted in tfd_bfc_stats.num_bad_frees and otherwise ignored.
 *
 * Device memory: the allocator hands out addresses it never dereferences, so it serves memory
 * the host cannot touch. With tfd_bfc_options.device_memory set it says so to the runtime
 * (the allocator's device_memory, runtime/core/allocator_internal.h), and those copies find
 * the device they belong to through tfd_bfc_allocator_context. Because tensors keep their
 * allocator alive, and may outlive the device that made them, the allocator can own the
 * provider's context (tfd_bfc_region_provider.release) rather than borrow it. */
#ifndef TFDEV_GPU_BFC_ALLOCATOR_H
#define TFDEV_GPU_BFC_ALLOCATOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tfdev/allocator.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tfd_device_memory_ops; /* runtime/core/allocator_internal.h */

/* Where regions come from (cudaMalloc/cudaFree on a GPU, aligned_alloc in tests).
 * alloc returns `bytes` bytes aligned to at least 256 bytes, or NULL when it cannot (the
 * allocator may then ask for less). free takes back a region alloc returned, with the size
 * it was asked for. ctx is passed to both. Both are called with the allocator's mutex held,
 * so they must not call back into the allocator.
 *
 * Who owns ctx: without release, the caller, who keeps it alive until the allocator is
 * destroyed. With release, the allocator, once tfd_bfc_allocator_new has succeeded: it calls
 * release(ctx) exactly once, when it is destroyed, after the last region has gone back
 * through free (on failure the caller still owns ctx). That is how a GPU's context lives
 * as long as the last tensor in its memory, which may be longer than the device. */
typedef struct tfd_bfc_region_provider {
  void *(*alloc)(void *ctx, size_t bytes);
  void (*free)(void *ctx, void *ptr, size_t bytes);
  void *ctx;
  void (*release)(void *ctx); /* may be NULL */
} tfd_bfc_region_provider;

typedef struct tfd_bfc_options {
  int64_t memory_limit; /* bytes all regions together may hold; must be > 0 */
  bool allow_growth;    /* start with 2 MiB regions and double, rather than one region of memory_limit */
  /* NULL: the regions are host memory. Otherwise they are memory the host cannot touch, moved
   * with these copies (borrowed: they must outlive the allocator; a module's static table does),
   * which the allocator carries as its device_memory for the runtime's tfd_tensor_copy_to.
   * Both copies must have to_host and from_host set. */
  const struct tfd_device_memory_ops *device_memory;
  /* May be NULL. Asked first about every deallocation: true means the holder keeps the chunk in use
   * for now (a CUDA graph being recorded will write it on every launch) and hands it back later with
   * tfd_bfc_allocator_release. Called without the allocator's mutex; hold_ctx is borrowed. */
  bool (*hold)(void *hold_ctx, tfd_allocator *a, void *ptr, size_t size);
  void *hold_ctx;
} tfd_bfc_options;

/* BFC-specific figures, beside tfd_allocator_stats. */
typedef struct tfd_bfc_stats {
  int64_t bytes_reserved;     /* sum of the regions' sizes */
  int64_t num_regions;        /* regions held from the provider */
  int64_t largest_free_block; /* largest free chunk: the largest request that needs no new region */
  int64_t free_bytes;         /* bytes in free chunks (bytes_reserved - bytes_in_use) */
  double fragmentation;       /* 1 - largest_free_block / free_bytes; 0 when nothing is free */
  int64_t num_bad_frees;      /* deallocations of pointers not in use here, ignored */
} tfd_bfc_stats;

/* A new BFC allocator named `name` (copied; NULL: "bfc") over `provider` (copied; its ctx
 * stays the caller's) with `options` (copied). The caller owns the one reference returned
 * and lets it go with tfd_allocator_unref, which returns every region to the provider.
 * Returns NULL with INVALID_ARGUMENT (naming the allocator) for a missing provider or
 * options or memory_limit <= 0, and with RESOURCE_EXHAUSTED when the host is out of memory. */
tfd_allocator *tfd_bfc_allocator_new(const char *name, const tfd_bfc_region_provider *provider,
                                     const tfd_bfc_options *options, tfd_status *status);

/* Whether `a` is a BFC allocator (the functions below want one). */
bool tfd_is_bfc_allocator(const tfd_allocator *a);

/* Takes back a chunk a hold function kept: the deallocation it put off. */
void tfd_bfc_allocator_release(tfd_allocator *a, void *ptr, size_t size);

/* The region provider's ctx (for device-memory copies to find their device), or NULL when `a`
 * is not a BFC allocator. Borrowed: valid while `a` is. Nothing is locked: ctx never changes. */
void *tfd_bfc_allocator_context(const tfd_allocator *a);

/* Fills *out (caller's storage). Returns false, leaving *out zeroed, when `a` is not a BFC
 * allocator. */
bool tfd_bfc_allocator_stats(const tfd_allocator *a, tfd_bfc_stats *out);

/* The bytes of the chunk behind `ptr`, as counted in bytes_in_use (the request rounded up
 * to 256, or more when the chunk was not worth splitting), and the bytes it was asked for.
 * 0 when ptr is not in use here. Nothing changes hands. */
size_t tfd_bfc_allocator_allocated_size(const tfd_allocator *a, const void *ptr);
size_t tfd_bfc_allocator_requested_size(const tfd_allocator *a, const void *ptr);

/* Debugging: walks every region and checks the bookkeeping (chunks tile each region, no two
 * neighbouring chunks are free, the bins hold exactly the free chunks in order, the pointer
 * map holds exactly the chunks in use, the counters match). Returns true when all holds;
 * otherwise false with the first problem written to why (why_len bytes, caller's storage;
 * why may be NULL). Takes the mutex: slow, for tests. */
bool tfd_bfc_allocator_check(const tfd_allocator *a, char *why, size_t why_len);

#ifdef __cplusplus
}
#endif
#endif
