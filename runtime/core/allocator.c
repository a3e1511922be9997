/* Allocators: the shared base and the CPU allocator with statistics and a memory limit. */
#include <inttypes.h>
#include <pthread.h>
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

void tfd_allocator_get_stats(const tfd_allocator *a, tfd_allocator_stats *out) {
  memset(out, 0, sizeof *out);
  a->ops->get_stats(a, out);
}

void tfd_allocator_trim(tfd_allocator *a) {
  if (a->ops->trim) a->ops->trim(a);
}

const char *tfd_allocator_name(const tfd_allocator *a) { return a->name; }

/* ---- CPU allocator ----
 * Statistics are atomics so kernels on many threads allocate without a
 * lock; the limit is enforced by reserving bytes with a CAS before asking
 * for memory, so two racing allocations can never both pass the limit.
 * Freed blocks go to a cache keyed by exact size (a step allocates the same
 * sizes every time), so a warm session reuses memory whose pages are
 * already touched instead of faulting in fresh ones. */
typedef struct free_list {
  size_t size; /* 0: empty slot */
  void *head;  /* blocks chained through their first word */
} free_list;

typedef struct cpu_allocator {
  tfd_allocator base;
  atomic_int_least64_t limit; /* 0: none; may change (tfd_cpu_allocator_set_limit) */
  atomic_int_least64_t in_use, peak, num_allocs, largest, refused;
  pthread_mutex_t cache_mu;
  free_list *lists; /* open addressing by size */
  size_t num_lists, cap_lists;
  int64_t cached, cache_cap;
} cpu_allocator;

#define CACHE_ALIGNMENT 64 /* every block is this aligned, so any cached block serves any request */
#define UNLIMITED_CACHE_CAP ((int64_t)256 << 20)

static void atomic_max64(atomic_int_least64_t *a, int64_t v) {
  int64_t cur = atomic_load_explicit(a, memory_order_relaxed);
  while (cur < v && !atomic_compare_exchange_weak_explicit(a, &cur, v, memory_order_relaxed, memory_order_relaxed)) {
  }
}

static free_list *find_list(cpu_allocator *a, size_t size, bool create) {
  if (a->cap_lists == 0 || (create && (a->num_lists + 1) * 2 > a->cap_lists)) {
    if (!create) return NULL;
    size_t cap = a->cap_lists ? a->cap_lists * 2 : 32;
    free_list *lists = calloc(cap, sizeof *lists);
    if (!lists) return NULL;
    for (size_t i = 0; i < a->cap_lists; i++) {
      if (!a->lists[i].size) continue;
      size_t j = (a->lists[i].size / 64) & (cap - 1);
      while (lists[j].size) j = (j + 1) & (cap - 1);
      lists[j] = a->lists[i];
    }
    free(a->lists);
    a->lists = lists;
    a->cap_lists = cap;
  }
  for (size_t i = (size / 64) & (a->cap_lists - 1);; i = (i + 1) & (a->cap_lists - 1)) {
    if (a->lists[i].size == size) return &a->lists[i];
    if (!a->lists[i].size) {
      if (!create) return NULL;
      a->lists[i].size = size;
      a->num_lists++;
      return &a->lists[i];
    }
  }
}

static void *cache_take(cpu_allocator *a, size_t size) {
  pthread_mutex_lock(&a->cache_mu);
  free_list *l = find_list(a, size, false);
  void *p = l ? l->head : NULL;
  if (p) {
    l->head = *(void **)p;
    a->cached -= (int64_t)size;
  }
  pthread_mutex_unlock(&a->cache_mu);
  return p;
}

static bool cache_put(cpu_allocator *a, void *p, size_t size) {
  if (size < sizeof(void *)) return false;
  pthread_mutex_lock(&a->cache_mu);
  bool kept = false;
  if (a->cached + (int64_t)size <= a->cache_cap) {
    free_list *l = find_list(a, size, true);
    if (l) {
      *(void **)p = l->head;
      l->head = p;
      a->cached += (int64_t)size;
      kept = true;
    }
  }
  pthread_mutex_unlock(&a->cache_mu);
  return kept;
}

static void cpu_trim(tfd_allocator *base) {
  cpu_allocator *a = (cpu_allocator *)base;
  pthread_mutex_lock(&a->cache_mu);
  for (size_t i = 0; i < a->cap_lists; i++) {
    while (a->lists[i].head) {
      void *p = a->lists[i].head;
      a->lists[i].head = *(void **)p;
      free(p);
    }
  }
  a->cached = 0;
  pthread_mutex_unlock(&a->cache_mu);
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
  int64_t limit = atomic_load_explicit(&a->limit, memory_order_relaxed);
  for (;;) {
    if (limit > 0 && want > limit - cur) {
      atomic_fetch_add_explicit(&a->refused, 1, memory_order_relaxed);
      tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED,
                      "OOM when allocating %" PRId64 " bytes on allocator '%s': %" PRId64
                      " bytes in use, limit %" PRId64 " bytes",
                      want, base->name, cur, limit);
      return NULL;
    }
    if (atomic_compare_exchange_weak_explicit(&a->in_use, &cur, cur + want, memory_order_relaxed,
                                              memory_order_relaxed))
      break;
  }
  void *p = alignment <= CACHE_ALIGNMENT ? cache_take(a, size) : NULL;
  /* posix_memalign(0) may return NULL legitimately; always ask for a byte. */
  if (!p && posix_memalign(&p, alignment > CACHE_ALIGNMENT ? alignment : CACHE_ALIGNMENT, size ? size : 1) != 0) {
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
  atomic_fetch_sub_explicit(&a->in_use, (int64_t)size, memory_order_relaxed);
  if (!cache_put(a, ptr, size)) free(ptr);
}

static void cpu_get_stats(const tfd_allocator *base, tfd_allocator_stats *out) {
  cpu_allocator *a = (cpu_allocator *)base;
  out->num_allocs = atomic_load(&a->num_allocs);
  out->bytes_in_use = atomic_load(&a->in_use);
  out->peak_bytes_in_use = atomic_load(&a->peak);
  out->largest_alloc_size = atomic_load(&a->largest);
  out->bytes_limit = atomic_load(&a->limit);
  out->num_refused = atomic_load(&a->refused);
  pthread_mutex_lock(&a->cache_mu);
  out->bytes_cached = a->cached;
  pthread_mutex_unlock(&a->cache_mu);
}

static void cpu_destroy(tfd_allocator *base) {
  cpu_allocator *a = (cpu_allocator *)base;
  cpu_trim(base);
  free(a->lists);
  pthread_mutex_destroy(&a->cache_mu);
  tfd_allocator_fini(base);
  free(base);
}

static const tfd_allocator_ops cpu_allocator_ops = {cpu_allocate, cpu_deallocate, cpu_get_stats, cpu_destroy,
                                                    cpu_trim};

tfd_allocator *tfd_cpu_allocator_new_cached(const char *name, int64_t bytes_limit, int64_t cache_bytes) {
  cpu_allocator *a = calloc(1, sizeof *a);
  if (!a) return NULL;
  if (!tfd_allocator_init(&a->base, &cpu_allocator_ops, name ? name : "cpu")) {
    free(a);
    return NULL;
  }
  atomic_init(&a->limit, bytes_limit > 0 ? bytes_limit : 0);
  a->cache_cap = cache_bytes > 0 ? cache_bytes : 0;
  pthread_mutex_init(&a->cache_mu, NULL);
  return &a->base;
}

tfd_allocator *tfd_cpu_allocator_new(const char *name, int64_t bytes_limit) {
  return tfd_cpu_allocator_new_cached(name, bytes_limit, bytes_limit > 0 ? bytes_limit : UNLIMITED_CACHE_CAP);
}

tfd_code tfd_cpu_allocator_set_limit(tfd_allocator *base, int64_t bytes_limit, tfd_status *status) {
  if (!base || base->ops != &cpu_allocator_ops)
    return tfd_status_setf(status, TFD_INVALID_ARGUMENT, "allocator '%s' is not a CPU allocator",
                           base ? base->name : "(null)");
  if (bytes_limit < 0)
    return tfd_status_setf(status, TFD_INVALID_ARGUMENT, "allocator '%s': a limit must be >= 0 (0: none), got %" PRId64,
                           base->name, bytes_limit);
  atomic_store(&((cpu_allocator *)base)->limit, bytes_limit);
  return TFD_OK;
}
