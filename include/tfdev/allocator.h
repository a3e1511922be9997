/* tfdev allocators: where tensor buffers come from, with statistics and a limit.
 *
 * An allocator is a vtable plus data (like ggml's buffer types), reference
 * counted because tensors outlive the device that made them. The CPU
 * allocator hands out 64-byte aligned blocks and refuses, with
 * RESOURCE_EXHAUSTED, any allocation that would take bytes_in_use past its
 * limit. */
#ifndef TFDEV_ALLOCATOR_H
#define TFDEV_ALLOCATOR_H

#include "tfdev/export.h"

#include <stddef.h>
#include <stdint.h>

#include "tfdev/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tfd_allocator tfd_allocator;

/* Mirrors tensorflow::AllocatorStats. */
typedef struct tfd_allocator_stats {
  int64_t num_allocs;         /* allocations made so far */
  int64_t bytes_in_use;       /* bytes currently allocated */
  int64_t peak_bytes_in_use;  /* highest bytes_in_use seen */
  int64_t largest_alloc_size; /* largest single allocation */
  int64_t bytes_limit;        /* the limit; 0 means none */
  int64_t num_refused;        /* allocations refused for the limit */
  int64_t bytes_cached;       /* freed blocks kept for reuse (not in use) */
} tfd_allocator_stats;

typedef struct tfd_allocator_ops {
  /* Returns NULL and fills status on failure. */
  void *(*allocate)(tfd_allocator *a, size_t alignment, size_t size, tfd_status *status);
  void (*deallocate)(tfd_allocator *a, void *ptr, size_t size);
  void (*get_stats)(const tfd_allocator *a, tfd_allocator_stats *out);
  void (*destroy)(tfd_allocator *a);
  void (*trim)(tfd_allocator *a); /* may be NULL */
} tfd_allocator_ops;

/* A new CPU allocator named `name` (copied) whose bytes in use may not
 * exceed `bytes_limit` (0: unlimited). Caller owns one reference.
 * Freed blocks are kept for the next allocation of that size (up to
 * bytes_limit of them, or 256 MiB when unlimited), so a session's steady
 * state never goes back to the system: blocks of up to 2 KiB by 64-byte
 * size class, first in a cache of the freeing thread's own (emptied when
 * the thread exits), larger ones by exact size. An allocator serves at
 * most 1 TiB and 8M tensors at once. */
TFD_API tfd_allocator *tfd_cpu_allocator_new(const char *name, int64_t bytes_limit);
/* The same with at most cache_bytes of freed blocks kept for reuse (0: none):
 * for allocations of varied sizes, such as a host's tensors. */
TFD_API tfd_allocator *tfd_cpu_allocator_new_cached(const char *name, int64_t bytes_limit, int64_t cache_bytes);
/* Changes a CPU allocator's limit (0: none); memory already in use stays,
 * later allocations obey the new limit. INVALID_ARGUMENT for another kind
 * of allocator or a negative limit. */
TFD_API tfd_code tfd_cpu_allocator_set_limit(tfd_allocator *a, int64_t bytes_limit, tfd_status *status);

/* Another reference to a (NULL stays NULL); each is given back with tfd_allocator_unref. */
TFD_API tfd_allocator *tfd_allocator_ref(tfd_allocator *a);
TFD_API void tfd_allocator_unref(tfd_allocator *a);

/* Allocates `size` bytes aligned to `alignment` (a power of two, at least
 * sizeof(void*)): the caller owns the block until it gives it back with
 * tfd_allocator_deallocate. Returns NULL and sets RESOURCE_EXHAUSTED (naming the
 * allocator, the request and the limit) when the limit would be passed. */
TFD_API void *tfd_allocator_allocate(tfd_allocator *a, size_t alignment, size_t size, tfd_status *status);
/* Returns a block; `size` must be the size it was allocated with. */
TFD_API void tfd_allocator_deallocate(tfd_allocator *a, void *ptr, size_t size);
TFD_API void tfd_allocator_get_stats(const tfd_allocator *a, tfd_allocator_stats *out);
/* Returns every cached free block to the system: the shared cache's and the
 * calling thread's (other threads' go when they exit or the allocator does). */
TFD_API void tfd_allocator_trim(tfd_allocator *a);
/* The allocator's name, owned by the allocator. */
TFD_API const char *tfd_allocator_name(const tfd_allocator *a);

#ifdef __cplusplus
}
#endif
#endif
