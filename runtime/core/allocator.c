/* Allocators: the shared base and the CPU allocator with statistics and a memory limit. */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "allocator_internal.h"
#include "status_internal.h"

bool tfd_allocator_init(tfd_allocator *a, const tfd_allocator_ops *ops, const char *name) {
  a->ops = ops;
  tfd_refcount_init(&a->refs);
  a->name = strdup(name ? name : "");
  return a->name != NULL;
}

void tfd_allocator_fini(tfd_allocator *a) { free(a->name); }

tfd_allocator *tfd_allocator_ref(tfd_allocator *a) {
  if (a) tfd_refcount_inc(&a->refs);
  return a;
}

void tfd_allocator_unref(tfd_allocator *a) {
  if (a && tfd_refcount_dec(&a->refs)) a->ops->destroy(a);
}

void *tfd_allocator_allocate(tfd_allocator *a, size_t alignment, size_t size, tfd_status *status) {
  return a->ops->allocate(a, alignment, size, status);
}

void tfd_allocator_deallocate(tfd_allocator *a, void *ptr, size_t size) {
  if (ptr) a->ops->deallocate(a, ptr, size);
}

void tfd_allocator_get_stats(const tfd_allocator *a, tfd_allocator_stats *out) { a->ops->get_stats(a, out); }

const char *tfd_allocator_name(const tfd_allocator *a) { return a->name; }

/* ---- CPU allocator ----
 * Statistics are atomics so kernels on many threads allocate without a
 * lock; the limit is enforced by reserving bytes with a CAS before asking
 * the system, so two racing allocations can never both pass the limit. */
typedef struct cpu_allocator {
  tfd_allocator base;
  int64_t limit;
  atomic_int_least64_t in_use, peak, num_allocs, largest, refused;
} cpu_allocator;

static void atomic_max64(atomic_int_least64_t *a, int64_t v) {
  int64_t cur = atomic_load_explicit(a, memory_order_relaxed);
  while (cur < v && !atomic_compare_exchange_weak_explicit(a, &cur, v, memory_order_relaxed, memory_order_relaxed)) {
  }
}

static void *cpu_allocate(tfd_allocator *base, size_t alignment, size_t size, tfd_status *status) {
  cpu_allocator *a = (cpu_allocator *)base;
  if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0) {
    tfd_status_setf(status, TFD_INVALID_ARGUMENT, "allocator '%s': alignment %zu is not a power of two >= %zu",
                    base->name, alignment, sizeof(void *));
    return NULL;
  }
  if (size > (size_t)INT64_MAX) {
    tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "allocator '%s': cannot allocate %zu bytes", base->name, size);
    return NULL;
  }
  int64_t want = (int64_t)size;
  int64_t cur = atomic_load_explicit(&a->in_use, memory_order_relaxed);
  for (;;) {
    if (a->limit > 0 && want > a->limit - cur) {
      atomic_fetch_add_explicit(&a->refused, 1, memory_order_relaxed);
      tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED,
                      "OOM when allocating %" PRId64 " bytes on allocator '%s': %" PRId64
                      " bytes in use, limit %" PRId64 " bytes",
                      want, base->name, cur, a->limit);
      return NULL;
    }
    if (atomic_compare_exchange_weak_explicit(&a->in_use, &cur, cur + want, memory_order_relaxed,
                                              memory_order_relaxed))
      break;
  }
  void *p = NULL;
  /* posix_memalign(0) may return NULL legitimately; always ask for a byte. */
  if (posix_memalign(&p, alignment, size ? size : 1) != 0) {
    atomic_fetch_sub_explicit(&a->in_use, want, memory_order_relaxed);
    tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "allocator '%s': the system refused %" PRId64 " bytes",
                    base->name, want);
    return NULL;
  }
  atomic_max64(&a->peak, cur + want);
  atomic_max64(&a->largest, want);
  atomic_fetch_add_explicit(&a->num_allocs, 1, memory_order_relaxed);
  return p;
}

static void cpu_deallocate(tfd_allocator *base, void *ptr, size_t size) {
  cpu_allocator *a = (cpu_allocator *)base;
  free(ptr);
  atomic_fetch_sub_explicit(&a->in_use, (int64_t)size, memory_order_relaxed);
}

static void cpu_get_stats(const tfd_allocator *base, tfd_allocator_stats *out) {
  cpu_allocator *a = (cpu_allocator *)base;
  out->num_allocs = atomic_load(&a->num_allocs);
  out->bytes_in_use = atomic_load(&a->in_use);
  out->peak_bytes_in_use = atomic_load(&a->peak);
  out->largest_alloc_size = atomic_load(&a->largest);
  out->bytes_limit = a->limit;
  out->num_refused = atomic_load(&a->refused);
}

static void cpu_destroy(tfd_allocator *base) {
  tfd_allocator_fini(base);
  free(base);
}

static const tfd_allocator_ops cpu_allocator_ops = {cpu_allocate, cpu_deallocate, cpu_get_stats, cpu_destroy};

tfd_allocator *tfd_cpu_allocator_new(const char *name, int64_t bytes_limit) {
  cpu_allocator *a = calloc(1, sizeof *a);
  if (!a) return NULL;
  if (!tfd_allocator_init(&a->base, &cpu_allocator_ops, name ? name : "cpu")) {
    free(a);
    return NULL;
  }
  a->limit = bytes_limit > 0 ? bytes_limit : 0;
  return &a->base;
}
