/* Allocators: the shared base and the CPU allocator with statistics and a memory limit. */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "allocator_internal.h"
#include "api_args.h"
#include "status_internal.h"

bool tfd_allocator_init(tfd_allocator *a, const tfd_allocator_ops *ops, const char *name) {
  a->ops = ops;
  a->device_memory = NULL;
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
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_allocator_allocate", "a", a)) return NULL;
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
 *
 * Freed blocks are kept for reuse, so a warm session neither calls malloc
 * nor faults in fresh pages. Every block is 64-byte aligned and its real
 * size follows from the size it was asked for: small blocks (up to
 * SMALL_CLASSES * 64 bytes) are rounded up to a multiple of 64 (a size
 * class), larger ones keep their exact size. Small blocks go first to the
 * freeing thread's own cache for this allocator (no lock, no atomic
 * read-modify-write), then to the allocator's shared cache (a mutex), which
 * also keeps large blocks by exact size.
 *
 * A thread's caches live in thread-local storage, one slot per allocator
 * (TC_SLOTS of them; a thread that uses more allocators at once uses the
 * shared cache for the others). A slot is tied to its allocator under one
 * mutex (the registry of thread caches) on the cold paths only: a thread's
 * first allocation from an allocator, the thread's exit (a pthread key
 * destructor frees what its slots hold) and the allocator's destruction
 * (which frees what every thread's slot for it holds). The owning thread
 * reads a slot's owner without the lock: a slot changes owner only while
 * its thread is not using the old owner (it is being destroyed) or by the
 * thread itself. */
typedef struct free_list {
  size_t size; /* 0: empty slot */
  void *head;  /* blocks chained through their first word */
} free_list;

#define CACHE_ALIGNMENT 64 /* every block is this aligned, so any cached block serves any request */
#define UNLIMITED_CACHE_CAP ((int64_t)256 << 20)
#define SMALL_CLASSES 32                      /* blocks of up to 2 KiB come in 64-byte size classes */
#define SMALL_MAX ((size_t)SMALL_CLASSES * 64)
#define TC_SLOTS 8                            /* allocators a thread caches for at once */
#define TC_MAX_BLOCKS 64                      /* per size class in one thread's slot */
#define TC_MAX_BYTES ((int64_t)512 << 10)     /* block bytes in one thread's slot */

/* Bytes in use and live blocks share one atomic, so a block costs one
 * atomic operation to take and one to give back: at most 1 TiB in use and
 * 8M blocks live at once per allocator. Live blocks hold one reference to
 * the allocator between them (taken by the first, given back by the last),
 * so tensors keep their allocator alive without a reference each. */
#define USAGE_BITS 40
#define USAGE_BLOCK ((int64_t)1 << USAGE_BITS)
#define USAGE_BYTES_MAX (USAGE_BLOCK - 1)
#define USAGE_BLOCKS_MAX (((int64_t)1 << (63 - USAGE_BITS)) - 1)

typedef struct cpu_allocator cpu_allocator;

/* A cached block: its first words say what follows and what it counted. */
typedef struct cached_block {
  struct cached_block *next;
  size_t counted; /* the size its last allocation was counted as */
} cached_block;

typedef struct tc_bin {
  cached_block *head;
  int count;
} tc_bin;

typedef struct tc_slot {
  _Atomic(cpu_allocator *) owner; /* NULL: free; changed under registry_mu */
  struct tc_slot *prev, *next;    /* the owner's slots, under registry_mu */
  int64_t block_bytes;            /* real bytes of the blocks held (owner thread only) */
  atomic_int_least64_t counted;   /* bytes_cached's share: written by the owner thread, read by get_stats */
  atomic_int_least64_t allocs;    /* num_allocs's share, likewise */
  struct thread_caches *home;     /* the thread's caches this slot is in */
  tc_bin bins[SMALL_CLASSES + 1]; /* by class; [0] unused */
} tc_slot;

typedef struct thread_caches {
  tc_slot slots[TC_SLOTS];
  atomic_int used; /* slots tied to an allocator; changed under registry_mu */
  int last;        /* the slot that served last: looked at first */
  bool registered; /* the exit destructor is armed */
} thread_caches;

static _Thread_local thread_caches tls_caches;

/* The registry of thread caches: which slots each allocator has, and the
 * key whose destructor empties a thread's slots when it exits. */
static pthread_mutex_t registry_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t registry_once = PTHREAD_ONCE_INIT;
static pthread_key_t registry_key;
static bool registry_key_ok;

struct cpu_allocator {
  tfd_allocator base;
  atomic_int_least64_t limit; /* 0: none; may change (tfd_cpu_allocator_set_limit) */
  atomic_int_least64_t usage; /* bytes in use (low USAGE_BITS bits) and live blocks (above) */
  atomic_int_least64_t peak, num_allocs, largest, refused;
  int64_t cache_cap;
  int64_t tc_cap; /* block bytes one thread's slot may hold; 0: no thread caches */
  pthread_mutex_t cache_mu;
  free_list *lists; /* open addressing by size */
  size_t num_lists, cap_lists;
  atomic_int_least64_t cached;       /* counted bytes in the shared cache; written under cache_mu */
  atomic_int_least64_t cached_block; /* real bytes in the shared cache; written under cache_mu */
  tc_slot *slots;                    /* threads' slots for this allocator, under registry_mu */
  tfd_host_allocator host;           /* a host's allocate/deallocate (host.allocate set): no caching */
};

static void atomic_max64(atomic_int_least64_t *a, int64_t v) {
  int64_t cur = atomic_load_explicit(a, memory_order_relaxed);
  while (cur < v && !atomic_compare_exchange_weak_explicit(a, &cur, v, memory_order_relaxed, memory_order_relaxed)) {
  }
}

/* The real size of a block asked for with `size` bytes. */
static size_t block_size(size_t size) {
  if (size > SMALL_MAX) return size;
  return size ? (size + 63) / 64 * 64 : 64;
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

/* The shared cache: blocks by real size, under cache_mu. */
static void *shared_take(cpu_allocator *a, size_t bsize) {
  if (atomic_load_explicit(&a->cached_block, memory_order_relaxed) == 0) return NULL; /* nothing to look for */
  pthread_mutex_lock(&a->cache_mu);
  free_list *l = find_list(a, bsize, false);
  cached_block *p = l ? l->head : NULL;
  if (p) {
    l->head = p->next;
    atomic_store_explicit(&a->cached, atomic_load_explicit(&a->cached, memory_order_relaxed) - (int64_t)p->counted,
                          memory_order_relaxed);
    atomic_store_explicit(&a->cached_block,
                          atomic_load_explicit(&a->cached_block, memory_order_relaxed) - (int64_t)bsize,
                          memory_order_relaxed);
  }
  pthread_mutex_unlock(&a->cache_mu);
  return p;
}

static bool shared_put(cpu_allocator *a, void *block, size_t bsize, size_t counted) {
  pthread_mutex_lock(&a->cache_mu);
  bool kept = false;
  int64_t held = atomic_load_explicit(&a->cached_block, memory_order_relaxed);
  if (held + (int64_t)bsize <= a->cache_cap) {
    free_list *l = find_list(a, bsize, true);
    if (l) {
      cached_block *p = block;
      p->next = l->head;
      p->counted = counted;
      l->head = p;
      atomic_store_explicit(&a->cached, atomic_load_explicit(&a->cached, memory_order_relaxed) + (int64_t)counted,
                            memory_order_relaxed);
      atomic_store_explicit(&a->cached_block, held + (int64_t)bsize, memory_order_relaxed);
      kept = true;
    }
  }
  pthread_mutex_unlock(&a->cache_mu);
  return kept;
}

/* ---- thread caches ---- */
/* Frees what a slot holds and folds its counts into its allocator. Under registry_mu. */
static void slot_flush(tc_slot *s, cpu_allocator *a) {
  for (int c = 1; c <= SMALL_CLASSES; c++) {
    cached_block *p = s->bins[c].head;
    while (p) {
      cached_block *next = p->next;
      free(p);
      p = next;
    }
    s->bins[c].head = NULL;
    s->bins[c].count = 0;
  }
  s->block_bytes = 0;
  atomic_store_explicit(&s->counted, 0, memory_order_relaxed);
  atomic_fetch_add_explicit(&a->num_allocs, atomic_exchange_explicit(&s->allocs, 0, memory_order_relaxed),
                            memory_order_relaxed);
}

/* Unties a slot from its allocator, emptied. Under registry_mu. */
static void slot_release(tc_slot *s, cpu_allocator *a) {
  slot_flush(s, a);
  if (s->prev) s->prev->next = s->next;
  else a->slots = s->next;
  if (s->next) s->next->prev = s->prev;
  s->prev = s->next = NULL;
  atomic_store_explicit(&s->owner, NULL, memory_order_release);
  atomic_fetch_sub_explicit(&s->home->used, 1, memory_order_relaxed);
}

/* A thread's exit: empties every slot it holds. */
static void thread_caches_exit(void *arg) {
  thread_caches *tc = arg;
  pthread_mutex_lock(&registry_mu);
  for (int i = 0; i < TC_SLOTS; i++) {
    cpu_allocator *a = atomic_load_explicit(&tc->slots[i].owner, memory_order_relaxed);
    if (a) slot_release(&tc->slots[i], a);
  }
  tc->registered = false;
  pthread_mutex_unlock(&registry_mu);
}

static void registry_init(void) {
  registry_key_ok = pthread_key_create(&registry_key, thread_caches_exit) == 0;
}

/* This thread's slot for a; with create, ties a free one to it (NULL when none is free). */
static tc_slot *my_slot(cpu_allocator *a, bool create) {
  thread_caches *tc = &tls_caches;
  tc_slot *s = &tc->slots[tc->last];
  if (atomic_load_explicit(&s->owner, memory_order_acquire) == a) return s;
  for (int i = 0; i < TC_SLOTS; i++)
    if (atomic_load_explicit(&tc->slots[i].owner, memory_order_acquire) == a) {
      tc->last = i;
      return &tc->slots[i];
    }
  /* Every slot taken: this allocator uses the shared cache here, without asking each time. */
  if (!create || a->tc_cap == 0 || atomic_load_explicit(&tc->used, memory_order_relaxed) == TC_SLOTS) return NULL;
  pthread_once(&registry_once, registry_init);
  if (!registry_key_ok) return NULL;
  s = NULL;
  pthread_mutex_lock(&registry_mu);
  if (!tc->registered) tc->registered = pthread_setspecific(registry_key, tc) == 0;
  for (int i = 0; tc->registered && i < TC_SLOTS; i++)
    if (!atomic_load_explicit(&tc->slots[i].owner, memory_order_relaxed)) {
      s = &tc->slots[i];
      tc->last = i;
      s->home = tc;
      atomic_fetch_add_explicit(&tc->used, 1, memory_order_relaxed);
      s->prev = NULL;
      s->next = a->slots;
      if (a->slots) a->slots->prev = s;
      a->slots = s;
      atomic_store_explicit(&s->owner, a, memory_order_release);
      break;
    }
  pthread_mutex_unlock(&registry_mu);
  return s;
}

static void *slot_take(tc_slot *s, size_t bsize) {
  tc_bin *b = &s->bins[bsize / 64];
  cached_block *p = b->head;
  if (!p) return NULL;
  b->head = p->next;
  b->count--;
  s->block_bytes -= (int64_t)bsize;
  atomic_store_explicit(&s->counted, atomic_load_explicit(&s->counted, memory_order_relaxed) - (int64_t)p->counted,
                        memory_order_relaxed);
  return p;
}

static bool slot_put(cpu_allocator *a, tc_slot *s, void *block, size_t bsize, size_t counted) {
  tc_bin *b = &s->bins[bsize / 64];
  if (b->count >= TC_MAX_BLOCKS || s->block_bytes + (int64_t)bsize > a->tc_cap) return false;
  cached_block *p = block;
  p->next = b->head;
  p->counted = counted;
  b->head = p;
  b->count++;
  s->block_bytes += (int64_t)bsize;
  atomic_store_explicit(&s->counted, atomic_load_explicit(&s->counted, memory_order_relaxed) + (int64_t)counted,
                        memory_order_relaxed);
  return true;
}

/* ---- allocation ---- */
static void cpu_trim(tfd_allocator *base) {
  cpu_allocator *a = (cpu_allocator *)base;
  tc_slot *s = my_slot(a, false);
  if (s) {
    pthread_mutex_lock(&registry_mu);
    slot_flush(s, a);
    pthread_mutex_unlock(&registry_mu);
  }
  pthread_mutex_lock(&a->cache_mu);
  for (size_t i = 0; i < a->cap_lists; i++) {
    while (a->lists[i].head) {
      cached_block *p = a->lists[i].head;
      a->lists[i].head = p->next;
      free(p);
    }
  }
  atomic_store_explicit(&a->cached, 0, memory_order_relaxed);
  atomic_store_explicit(&a->cached_block, 0, memory_order_relaxed);
  pthread_mutex_unlock(&a->cache_mu);
}

/* A block of `total` bytes (at least) of which `counted` count in the
 * statistics and against the limit; `alignment` above 64 bypasses the
 * caches. A block (`block`) also counts as live (see USAGE_BITS). */
static void *cpu_alloc_block(cpu_allocator *a, size_t alignment, size_t total, size_t counted, bool block,
                             tfd_status *status) {
  if (total > (size_t)USAGE_BYTES_MAX) {
    tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "allocator '%s': cannot allocate %zu bytes", a->base.name, counted);
    return NULL;
  }
  int64_t want = (int64_t)counted, delta = want + (block ? USAGE_BLOCK : 0);
  int64_t cur = atomic_load_explicit(&a->usage, memory_order_relaxed);
  int64_t limit = atomic_load_explicit(&a->limit, memory_order_relaxed);
  for (;;) {
    int64_t bytes = cur & USAGE_BYTES_MAX;
    if (limit > 0 && want > limit - bytes) {
      atomic_fetch_add_explicit(&a->refused, 1, memory_order_relaxed);
      tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED,
                      "OOM when allocating %" PRId64 " bytes on allocator '%s': %" PRId64
                      " bytes in use, limit %" PRId64 " bytes",
                      want, a->base.name, bytes, limit);
      return NULL;
    }
    if (want > USAGE_BYTES_MAX - bytes || (block && (cur >> USAGE_BITS) == USAGE_BLOCKS_MAX)) {
      tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED,
                      "allocator '%s': cannot allocate %" PRId64 " bytes with %" PRId64 " bytes in %" PRId64
                      " blocks in use",
                      a->base.name, want, bytes, cur >> USAGE_BITS);
      return NULL;
    }
    if (atomic_compare_exchange_weak_explicit(&a->usage, &cur, cur + delta, memory_order_relaxed,
                                              memory_order_relaxed))
      break;
  }
  if (block && (cur >> USAGE_BITS) == 0) tfd_allocator_ref(&a->base); /* the first live block */
  size_t bsize = block_size(total);
  void *p = NULL;
  tc_slot *s = NULL;
  if (a->host.allocate) {
    p = a->host.allocate(a->host.ctx, alignment > CACHE_ALIGNMENT ? alignment : CACHE_ALIGNMENT, bsize);
  } else if (alignment <= CACHE_ALIGNMENT) {
    if (bsize <= SMALL_MAX && (s = my_slot(a, true)) != NULL) p = slot_take(s, bsize);
    if (!p) p = shared_take(a, bsize);
  }
  if (!p && (a->host.allocate || posix_memalign(&p, alignment > CACHE_ALIGNMENT ? alignment : CACHE_ALIGNMENT, bsize) != 0)) {
    p = NULL;
    /* Undone; when that leaves no live block, their reference goes (the caller holds one of its own). */
    if ((atomic_fetch_sub_explicit(&a->usage, delta, memory_order_acq_rel) >> USAGE_BITS) == 1 && block)
      tfd_allocator_unref(&a->base);
    tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "allocator '%s': the system refused %" PRId64 " bytes",
                    a->base.name, want);
    return NULL;
  }
  atomic_max64(&a->peak, (cur & USAGE_BYTES_MAX) + want);
  atomic_max64(&a->largest, want);
  if (s) atomic_store_explicit(&s->allocs, atomic_load_explicit(&s->allocs, memory_order_relaxed) + 1, memory_order_relaxed);
  else atomic_fetch_add_explicit(&a->num_allocs, 1, memory_order_relaxed);
  return p;
}

static void cpu_free_block(cpu_allocator *a, void *p, size_t total, size_t counted, bool block) {
  size_t bsize = block_size(total);
  if (a->host.allocate) {
    a->host.deallocate(a->host.ctx, p, bsize);
  } else {
    tc_slot *s = bsize <= SMALL_MAX ? my_slot(a, true) : NULL;
    if (!(s && slot_put(a, s, p, bsize, counted)) && !shared_put(a, p, bsize, counted)) free(p);
  }
  /* Counted out only once the block is put away, and with release: whoever frees the last live
   * block, and with it the allocator, empties every thread's slot (cpu_destroy), and must see what
   * this thread put in its own. The last live block gives back their reference; a may be gone after
   * this. */
  int64_t old = atomic_fetch_sub_explicit(&a->usage, (int64_t)counted + (block ? USAGE_BLOCK : 0),
                                          memory_order_acq_rel);
  if (block && (old >> USAGE_BITS) == 1) tfd_allocator_unref(&a->base);
}

static void *cpu_allocate(tfd_allocator *base, size_t alignment, size_t size, tfd_status *status) {
  if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0) {
    tfd_status_setf(status, TFD_INVALID_ARGUMENT, "allocator '%s': alignment %zu is not a power of two >= %zu",
                    base->name, alignment, sizeof(void *));
    return NULL;
  }
  return cpu_alloc_block((cpu_allocator *)base, alignment, size, size, false, status);
}

static void cpu_deallocate(tfd_allocator *base, void *ptr, size_t size) {
  cpu_free_block((cpu_allocator *)base, ptr, size, size, false);
}

static void cpu_get_stats(const tfd_allocator *base, tfd_allocator_stats *out) {
  cpu_allocator *a = (cpu_allocator *)base;
  int64_t allocs = 0, cached = 0;
  pthread_mutex_lock(&registry_mu);
  for (tc_slot *s = a->slots; s; s = s->next) {
    allocs += atomic_load_explicit(&s->allocs, memory_order_relaxed);
    cached += atomic_load_explicit(&s->counted, memory_order_relaxed);
  }
  pthread_mutex_unlock(&registry_mu);
  out->num_allocs = atomic_load(&a->num_allocs) + allocs;
  out->bytes_in_use = atomic_load(&a->usage) & USAGE_BYTES_MAX;
  out->peak_bytes_in_use = atomic_load(&a->peak);
  out->largest_alloc_size = atomic_load(&a->largest);
  out->bytes_limit = atomic_load(&a->limit);
  out->num_refused = atomic_load(&a->refused);
  out->bytes_cached = atomic_load(&a->cached) + cached;
}

static void cpu_destroy(tfd_allocator *base) {
  cpu_allocator *a = (cpu_allocator *)base;
  /* Nothing uses a any more: every thread's slot for it can be emptied. */
  pthread_mutex_lock(&registry_mu);
  while (a->slots) slot_release(a->slots, a);
  pthread_mutex_unlock(&registry_mu);
  cpu_trim(base);
  free(a->lists);
  pthread_mutex_destroy(&a->cache_mu);
  tfd_allocator_fini(base);
  free(base);
}

static const tfd_allocator_ops cpu_allocator_ops = {cpu_allocate, cpu_deallocate, cpu_get_stats, cpu_destroy,
                                                    cpu_trim};

bool tfd_allocator_has_blocks(const tfd_allocator *a) { return a->ops == &cpu_allocator_ops; }

void *tfd_allocator_allocate_block(tfd_allocator *a, size_t header, size_t size, tfd_status *status) {
  if (size > (size_t)INT64_MAX - header) {
    tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "allocator '%s': cannot allocate %zu bytes", a->name, size);
    return NULL;
  }
  return cpu_alloc_block((cpu_allocator *)a, CACHE_ALIGNMENT, header + size, size, true, status);
}

void tfd_allocator_deallocate_block(tfd_allocator *a, void *block, size_t header, size_t size) {
  cpu_free_block((cpu_allocator *)a, block, header + size, size, true);
}

tfd_allocator *tfd_cpu_allocator_new_cached(const char *name, int64_t bytes_limit, int64_t cache_bytes) {
  cpu_allocator *a = calloc(1, sizeof *a);
  if (!a) return NULL;
  if (!tfd_allocator_init(&a->base, &cpu_allocator_ops, name ? name : "cpu")) {
    free(a);
    return NULL;
  }
  atomic_init(&a->limit, bytes_limit > 0 ? bytes_limit : 0);
  a->cache_cap = cache_bytes > 0 ? cache_bytes : 0;
  a->tc_cap = a->cache_cap < TC_MAX_BYTES ? a->cache_cap : TC_MAX_BYTES;
  pthread_mutex_init(&a->cache_mu, NULL);
  return &a->base;
}

tfd_allocator *tfd_cpu_allocator_new_hosted(const char *name, int64_t bytes_limit, const tfd_host_allocator *host) {
  tfd_allocator *a = tfd_cpu_allocator_new_cached(name, bytes_limit, 0);
  if (a && host) ((cpu_allocator *)a)->host = *host;
  return a;
}

tfd_allocator *tfd_cpu_allocator_new(const char *name, int64_t bytes_limit) {
  return tfd_cpu_allocator_new_cached(name, bytes_limit, bytes_limit > 0 ? bytes_limit : UNLIMITED_CACHE_CAP);
}

tfd_code tfd_cpu_allocator_set_limit(tfd_allocator *base, int64_t bytes_limit, tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_cpu_allocator_set_limit", "a", base)) return TFD_INVALID_ARGUMENT;
  if (base->ops != &cpu_allocator_ops)
    return tfd_status_setf(status, TFD_INVALID_ARGUMENT, "allocator '%s' is not a CPU allocator",
                           base ? base->name : "(null)");
  if (bytes_limit < 0)
    return tfd_status_setf(status, TFD_INVALID_ARGUMENT, "allocator '%s': a limit must be >= 0 (0: none), got %" PRId64,
                           base->name, bytes_limit);
  atomic_store(&((cpu_allocator *)base)->limit, bytes_limit);
  return TFD_OK;
}
