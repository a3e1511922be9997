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

#endif
