/* TensorFlow's TrackingAllocator: a wrapper around a device's allocator that one node's kernel
 * allocates through while a step is traced, so the node's step stats can say how many bytes it
 * allocated (total), the most it held at once (peak) and what it still held when it finished (live),
 * and optionally when each allocation and deallocation happened (allocation records). */
#ifndef TFDEV_RUNTIME_TRACKING_ALLOCATOR_H
#define TFDEV_RUNTIME_TRACKING_ALLOCATOR_H

#include <stdbool.h>
#include <stdint.h>

#include "tfdev/allocator.h"

/* One allocation (bytes > 0) or deallocation (bytes < 0), as AllocationRecord. */
typedef struct tfd_alloc_record {
  int64_t micros; /* wall clock, microseconds since the epoch */
  int64_t bytes;
} tfd_alloc_record;

/* A new tracker around `inner` (which it references). Its name, statistics and limit are inner's;
 * allocations are counted and, when `records`, time-stamped. Buffers it hands out are returned through
 * it, so every tensor made through it holds a reference: the caller owns one reference and drops it
 * with tfd_allocator_unref once it has read what it wants. NULL when out of memory. */
tfd_allocator *tfd_tracking_allocator_new(tfd_allocator *inner, bool records);
/* Whether a is a tracker (so the functions below apply). */
bool tfd_allocator_is_tracking(const tfd_allocator *a);
/* total bytes allocated through it, the highest bytes held at once, the bytes held now. */
void tfd_tracking_allocator_sizes(tfd_allocator *a, int64_t *total, int64_t *peak, int64_t *live);
/* A copy of the records so far (malloc'ed, the caller frees; NULL when none or out of memory); *n is
 * how many. */
tfd_alloc_record *tfd_tracking_allocator_records(tfd_allocator *a, int *n);

#endif
