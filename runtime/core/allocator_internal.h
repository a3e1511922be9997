/* The allocator base struct: subtypes (CPU here, GPU in gpu/) embed it first. */
#ifndef TFDEV_RUNTIME_ALLOCATOR_INTERNAL_H
#define TFDEV_RUNTIME_ALLOCATOR_INTERNAL_H

#include "refcount.h"
#include "tfdev/allocator.h"

struct tfd_allocator {
  const tfd_allocator_ops *ops;
  tfd_refcount refs;
  char *name;
};

/* Initialises the base of a subtype; copies name. Returns false on OOM. */
bool tfd_allocator_init(tfd_allocator *a, const tfd_allocator_ops *ops, const char *name);
/* Frees what tfd_allocator_init allocated (for subtypes' destroy). */
void tfd_allocator_fini(tfd_allocator *a);

/* Blocks: one allocation holding `header` bytes (a multiple of 64) and then
 * `size` bytes, 64-byte aligned, of which the statistics and the limit see
 * only size, exactly as tfd_allocator_allocate(a, 64, size) would: a tensor
 * keeps its header beside its data in one block. Only allocators for which
 * tfd_allocator_has_blocks is true (the CPU allocator) make them; a block is
 * returned with the header and size it was made with. Live blocks keep the
 * allocator alive: the block's owner needs no reference of its own, and the
 * allocator may be gone once the last block is returned. */
bool tfd_allocator_has_blocks(const tfd_allocator *a);
void *tfd_allocator_allocate_block(tfd_allocator *a, size_t header, size_t size, tfd_status *status);
void tfd_allocator_deallocate_block(tfd_allocator *a, void *block, size_t header, size_t size);

#endif
