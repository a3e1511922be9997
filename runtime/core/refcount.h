/* Atomic reference counts shared by every reference-counted runtime object. */
#ifndef TFDEV_RUNTIME_REFCOUNT_H
#define TFDEV_RUNTIME_REFCOUNT_H

#include <stdatomic.h>
#include <stdbool.h>

typedef struct tfd_refcount {
  atomic_int n;
} tfd_refcount;

static inline void tfd_refcount_init(tfd_refcount *r) { atomic_init(&r->n, 1); }
static inline void tfd_refcount_inc(tfd_refcount *r) { atomic_fetch_add_explicit(&r->n, 1, memory_order_relaxed); }
/* True when this was the last reference: the caller then destroys the object. */
static inline bool tfd_refcount_dec(tfd_refcount *r) {
  return atomic_fetch_sub_explicit(&r->n, 1, memory_order_acq_rel) == 1;
}
static inline int tfd_refcount_get(const tfd_refcount *r) {
  return atomic_load_explicit(&((tfd_refcount *)r)->n, memory_order_acquire);
}

#endif
