/* The BFC allocator's bookkeeping (TensorFlow's BFCAllocator in C): regions from a provider,
 * chunks carved from them, size bins for best fit, and coalescing on free. See bfc_allocator.h. */
#include "gpu/bfc_allocator.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/core/allocator_internal.h"

#define MIN_ALLOC ((size_t)256) /* TensorFlow's kMinAllocationSize: also every pointer's alignment */
#define NUM_BINS 21             /* bin i holds [256 << i, 256 << (i + 1)); the last one everything above */
#define GROWTH_FIRST_REGION ((size_t)2 << 20)
/* A chunk this much larger than the request is split even when the rest is under half of it,
 * so a huge free chunk is never given whole to a merely large request. */
#define MAX_INTERNAL_FRAGMENTATION ((size_t)128 << 20)

typedef struct region region;

/* Chunks tile their region. A free chunk is in exactly one bin (a treap ordered by size,
 * then address); a chunk in use is in the pointer map instead. */
typedef struct chunk {
  char *ptr;
  size_t size;
  size_t requested;          /* what the caller asked for; meaningful while in use */
  int64_t allocation_id;     /* -1: free */
  struct chunk *prev, *next; /* neighbours in the region; also the spare list's link */
  region *region;
  struct chunk *left, *right; /* treap children while in a bin */
  uint64_t priority;          /* treap heap key: a hash of ptr, so the shape is random but repeatable */
  int bin;                    /* -1 while in use */
} chunk;

struct region {
  char *base;
  size_t size;
  chunk *first;
};

typedef struct bfc_allocator {
  tfd_allocator base;
  tfd_bfc_region_provider provider;
  size_t memory_limit;
  bool (*hold)(void *hold_ctx, tfd_allocator *a, void *ptr, size_t size); /* tfd_bfc_options' */
  void *hold_ctx;
  /* mutable: the const entry points (stats, check) still have to lock */
  pthread_mutex_t mu;

  size_t curr_region_bytes; /* the size the next region is asked for (before capping) */
  bool started_backpedal;   /* the one retry with smaller regions has happened */
  region **regions;         /* by base address, for bad-free reports and the checker */
  size_t num_regions, cap_regions;
  size_t reserved; /* sum of region sizes */

  chunk *bins[NUM_BINS];
  /* Chunks in use by pointer: open addressing with linear probing, at most half full. A
   * hash table rather than TensorFlow's per-region handle array (an 8-byte slot per 256 bytes
   * of region) because that costs 128 MiB of host memory per 4 GiB of device memory. */
  chunk **map;
  size_t map_cap, map_used;
  chunk *spare; /* chunk structs to reuse, linked through next */

  int64_t next_allocation_id;
  int64_t num_allocs, bytes_in_use, peak, largest, refused, bad_frees;
} bfc_allocator;

static size_t round_bytes(size_t n) { return (n + MIN_ALLOC - 1) & ~(MIN_ALLOC - 1); }

static int bin_for_size(size_t size) {
  size_t v = (size < MIN_ALLOC ? MIN_ALLOC : size) >> 8;
  int b = 63 - __builtin_clzll((unsigned long long)v);
  return b < NUM_BINS - 1 ? b : NUM_BINS - 1;
}

static uint64_t mix64(uint64_t x) { /* splitmix64's finaliser */
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

static void human_bytes(int64_t n, char *buf, size_t len) {
  static const char units[] = "KMGTPE";
  if (n < 1024) {
    snprintf(buf, len, "%" PRId64 "B", n);
    return;
  }
  double v = (double)n / 1024;
  int u = 0;
  while (v >= 1024 && units[u + 1]) {
    v /= 1024;
    u++;
  }
  snprintf(buf, len, "%.2f%ciB", v, units[u]);
}

/* ---- chunk structs ---- */
static chunk *chunk_get(bfc_allocator *a) {
  chunk *c = a->spare;
  if (c) a->spare = c->next;
  else if (!(c = malloc(sizeof *c))) return NULL;
  memset(c, 0, sizeof *c);
  c->allocation_id = -1;
  c->bin = -1;
  return c;
}

static void chunk_put(bfc_allocator *a, chunk *c) {
  c->next = a->spare;
  a->spare = c;
}

/* ---- bins: one treap each ---- */
static bool key_less(const chunk *x, const chunk *y) {
  return x->size < y->size || (x->size == y->size && (uintptr_t)x->ptr < (uintptr_t)y->ptr);
}

static chunk *treap_insert(chunk *root, chunk *c) {
  if (!root) return c;
  if (key_less(c, root)) {
    root->left = treap_insert(root->left, c);
    if (root->left->priority > root->priority) {
      chunk *l = root->left;
      root->left = l->right;
      l->right = root;
      return l;
    }
  } else {
    root->right = treap_insert(root->right, c);
    if (root->right->priority > root->priority) {
      chunk *r = root->right;
      root->right = r->left;
      r->left = root;
      return r;
    }
  }
  return root;
}

static chunk *treap_join(chunk *l, chunk *r) {
  if (!l) return r;
  if (!r) return l;
  if (l->priority > r->priority) {
    l->right = treap_join(l->right, r);
    return l;
  }
  r->left = treap_join(l, r->left);
  return r;
}

static chunk *treap_erase(chunk *root, chunk *c) {
  if (!root) return NULL;
  if (root == c) return treap_join(c->left, c->right);
  if (key_less(c, root)) root->left = treap_erase(root->left, c);
  else root->right = treap_erase(root->right, c);
  return root;
}

/* A chunk's key (size, address) must not change while it is in a bin. */
static void bin_insert(bfc_allocator *a, chunk *c) {
  c->bin = bin_for_size(c->size);
  c->left = c->right = NULL;
  c->priority = mix64((uint64_t)(uintptr_t)c->ptr);
  a->bins[c->bin] = treap_insert(a->bins[c->bin], c);
}

static void bin_remove(bfc_allocator *a, chunk *c) {
  a->bins[c->bin] = treap_erase(a->bins[c->bin], c);
  c->bin = -1;
  c->left = c->right = NULL;
}

/* The smallest free chunk of at least `rounded` bytes, lowest address on ties. Bins hold
 * disjoint size ranges in order, so the first bin with a fit has the best one. */
static chunk *find_fit(const bfc_allocator *a, size_t rounded) {
  for (int b = bin_for_size(rounded); b < NUM_BINS; b++) {
    chunk *best = NULL;
    for (chunk *n = a->bins[b]; n;) {
      if (n->size >= rounded) {
        best = n;
        n = n->left;
      } else {
        n = n->right;
      }
    }
    if (best) return best;
  }
  return NULL;
}

static size_t largest_free(const bfc_allocator *a) {
  for (int b = NUM_BINS - 1; b >= 0; b--) {
    chunk *n = a->bins[b];
    if (!n) continue;
    while (n->right) n = n->right;
    return n->size;
  }
  return 0;
}

/* ---- pointer map ---- */
static size_t map_home(const bfc_allocator *a, const void *p) {
  return (size_t)(mix64((uint64_t)(uintptr_t)p >> 8) & (a->map_cap - 1));
}

static size_t map_find(const bfc_allocator *a, const void *p) {
  if (!a->map_cap) return SIZE_MAX;
  for (size_t i = map_home(a, p);; i = (i + 1) & (a->map_cap - 1)) {
    if (!a->map[i]) return SIZE_MAX;
    if (a->map[i]->ptr == p) return i;
  }
}

static void map_put(bfc_allocator *a, chunk *c) {
  size_t i = map_home(a, c->ptr);
  while (a->map[i]) i = (i + 1) & (a->map_cap - 1);
  a->map[i] = c;
  a->map_used++;
}

/* Room for one more entry, so that an allocation never fails after it has taken its chunk. */
static bool map_reserve(bfc_allocator *a) {
  if ((a->map_used + 1) * 2 <= a->map_cap) return true;
  size_t old_cap = a->map_cap, cap = old_cap ? old_cap * 2 : 64;
  chunk **old = a->map, **map = calloc(cap, sizeof *map);
  if (!map) return false;
  a->map = map;
  a->map_cap = cap;
  a->map_used = 0;
  for (size_t i = 0; i < old_cap; i++)
    if (old[i]) map_put(a, old[i]);
  free(old);
  return true;
}

/* Deletion by backward shift: later entries of the probe run move up, so no tombstones. */
static void map_erase(bfc_allocator *a, size_t i) {
  size_t mask = a->map_cap - 1;
  for (size_t j = (i + 1) & mask; a->map[j]; j = (j + 1) & mask) {
    size_t k = map_home(a, a->map[j]->ptr);
    /* Entry j may fill the hole at i when its home is not cyclically in (i, j]. */
    bool stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
    if (!stays) {
      a->map[i] = a->map[j];
      i = j;
    }
  }
  a->map[i] = NULL;
  a->map_used--;
}

/* ---- regions ---- */
/* The region holding p, or NULL. */
static region *region_for(const bfc_allocator *a, const void *p) {
  size_t lo = 0, hi = a->num_regions;
  uintptr_t x = (uintptr_t)p;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    region *r = a->regions[mid];
    if (x < (uintptr_t)r->base) hi = mid;
    else if (x >= (uintptr_t)r->base + r->size) lo = mid + 1;
    else return r;
  }
  return NULL;
}

typedef enum extend_result {
  EXTEND_OK,
  EXTEND_LIMIT,
  EXTEND_REFUSED,
  EXTEND_HOST_OOM,
  EXTEND_MISALIGNED
} extend_result;

/* TensorFlow's Extend: a new region big enough for `rounded`, as one free chunk. Host
 * bookkeeping is made before the provider is asked, so a region is never held without it.
 * *asked is the last size the provider was asked for. */
static extend_result extend(bfc_allocator *a, size_t rounded, size_t *asked) {
  *asked = 0;
  size_t available = (a->memory_limit - a->reserved) & ~(MIN_ALLOC - 1);
  if (rounded > available) return EXTEND_LIMIT;
  bool increased = false;
  while (rounded > a->curr_region_bytes) {
    a->curr_region_bytes *= 2; /* cannot overflow: curr < rounded <= memory_limit < 2^63 */
    increased = true;
  }
  if (a->num_regions == a->cap_regions) {
    size_t cap = a->cap_regions ? a->cap_regions * 2 : 8;
    region **rs = realloc(a->regions, cap * sizeof *rs);
    if (!rs) return EXTEND_HOST_OOM;
    a->regions = rs;
    a->cap_regions = cap;
  }
  region *r = malloc(sizeof *r);
  chunk *c = chunk_get(a);
  if (!r || !c) {
    free(r);
    if (c) chunk_put(a, c);
    return EXTEND_HOST_OOM;
  }
  size_t bytes = a->curr_region_bytes < available ? a->curr_region_bytes : available;
  void *mem = a->provider.alloc(a->provider.ctx, *asked = bytes);
  if (!mem && !a->started_backpedal) {
    /* As TensorFlow, only once: a device that refused a big region will likely refuse the
     * next, and each refused cudaMalloc costs time. The step is at least 256 bytes, since
     * 90% of a small size rounds back up to itself (an endless loop in TensorFlow). */
    a->started_backpedal = true;
    while (!mem) {
      size_t next = round_bytes(bytes - bytes / 10);
      bytes = next < bytes ? next : bytes - MIN_ALLOC;
      if (bytes < rounded) break;
      mem = a->provider.alloc(a->provider.ctx, *asked = bytes);
    }
  }
  if (!mem || (uintptr_t)mem % MIN_ALLOC) {
    if (mem) a->provider.free(a->provider.ctx, mem, bytes);
    free(r);
    chunk_put(a, c);
    return mem ? EXTEND_MISALIGNED : EXTEND_REFUSED;
  }
  if (!increased) a->curr_region_bytes *= 2;
  /* No region is ever larger than the limit; capping only keeps repeated doubling from overflowing. */
  if (a->curr_region_bytes > a->memory_limit) a->curr_region_bytes = round_bytes(a->memory_limit);

  r->base = mem;
  r->size = bytes;
  r->first = c;
  size_t at = a->num_regions;
  while (at > 0 && (uintptr_t)a->regions[at - 1]->base > (uintptr_t)mem) at--;
  memmove(&a->regions[at + 1], &a->regions[at], (a->num_regions - at) * sizeof *a->regions);
  a->regions[at] = r;
  a->num_regions++;
  a->reserved += bytes;
  c->ptr = mem;
  c->size = bytes;
  c->region = r;
  bin_insert(a, c);
  return EXTEND_OK;
}

static void region_remove(bfc_allocator *a, size_t i) {
  region *r = a->regions[i];
  a->provider.free(a->provider.ctx, r->base, r->size);
  a->reserved -= r->size;
  memmove(&a->regions[i], &a->regions[i + 1], (a->num_regions - i - 1) * sizeof *a->regions);
  a->num_regions--;
  free(r);
}

/* ---- allocation ---- */
/* Cuts c (free, out of its bin) to `rounded` bytes; the rest becomes a free chunk. Without
 * host memory for the rest's struct, c is used whole: wasteful, never wrong. */
static void split(bfc_allocator *a, chunk *c, size_t rounded) {
  chunk *n = chunk_get(a);
  if (!n) return;
  n->ptr = c->ptr + rounded;
  n->size = c->size - rounded;
  n->region = c->region;
  n->prev = c;
  n->next = c->next;
  if (c->next) c->next->prev = n;
  c->next = n;
  c->size = rounded;
  bin_insert(a, n); /* its right neighbour is in use: c was free and coalesced */
}

static void *refuse(bfc_allocator *a, size_t size, size_t rounded, extend_result why, size_t asked,
                    tfd_status *status) {
  a->refused++;
  char want[32], used[32], limit[32], res[32], big[32], reason[96];
  human_bytes((int64_t)(size > (size_t)INT64_MAX ? (size_t)INT64_MAX : size), want, sizeof want);
  human_bytes(a->bytes_in_use, used, sizeof used);
  human_bytes((int64_t)a->memory_limit, limit, sizeof limit);
  human_bytes((int64_t)a->reserved, res, sizeof res);
  human_bytes((int64_t)largest_free(a), big, sizeof big);
  switch (why) {
  case EXTEND_REFUSED: snprintf(reason, sizeof reason, "the region provider refused %zu bytes", asked); break;
  case EXTEND_HOST_OOM: snprintf(reason, sizeof reason, "out of host memory for the bookkeeping"); break;
  default: snprintf(reason, sizeof reason, "no room under the limit for another region"); break;
  }
  tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED,
                  "Allocator (%s) ran out of memory trying to allocate %s (%zu bytes, rounded to %zu); %s in use of "
                  "%s limit, %s reserved in %zu region%s, largest free block %s; %s",
                  a->base.name, want, size, rounded, used, limit, res, a->num_regions, a->num_regions == 1 ? "" : "s",
                  big, reason);
  return NULL;
}

static void *bfc_allocate(tfd_allocator *base, size_t alignment, size_t size, tfd_status *status) {
  bfc_allocator *a = (bfc_allocator *)base;
  if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0 || alignment > MIN_ALLOC) {
    tfd_status_setf(status, TFD_INVALID_ARGUMENT,
                    "Allocator (%s): alignment %zu is not a power of two from %zu to %zu", base->name, alignment,
                    sizeof(void *), MIN_ALLOC);
    return NULL;
  }
  /* Saturating: a size that would wrap is refused by the limit like any other too large. */
  size_t rounded = !size ? MIN_ALLOC : size > SIZE_MAX - MIN_ALLOC ? SIZE_MAX & ~(MIN_ALLOC - 1) : round_bytes(size);
  pthread_mutex_lock(&a->mu);
  extend_result why = EXTEND_LIMIT;
  size_t asked = 0;
  chunk *c = NULL;
  if (!map_reserve(a)) why = EXTEND_HOST_OOM;
  else if (!(c = find_fit(a, rounded)) && (why = extend(a, rounded, &asked)) == EXTEND_OK)
    c = find_fit(a, rounded);
  if (!c) {
    if (why == EXTEND_MISALIGNED) {
      tfd_status_setf(status, TFD_INTERNAL, "Allocator (%s): the region provider returned memory not %zu-byte aligned",
                      base->name, MIN_ALLOC);
      pthread_mutex_unlock(&a->mu);
      return NULL;
    }
    refuse(a, size, rounded, why, asked, status);
    pthread_mutex_unlock(&a->mu);
    return NULL;
  }
  bin_remove(a, c);
  if (c->size >= rounded * 2 || c->size - rounded >= MAX_INTERNAL_FRAGMENTATION) split(a, c, rounded);
  c->requested = size;
  c->allocation_id = a->next_allocation_id++;
  map_put(a, c);
  a->num_allocs++;
  a->bytes_in_use += (int64_t)c->size;
  if (a->bytes_in_use > a->peak) a->peak = a->bytes_in_use;
  if ((int64_t)c->size > a->largest) a->largest = (int64_t)c->size;
  pthread_mutex_unlock(&a->mu);
  return c->ptr;
}

/* n (free, out of its bin) goes into c, its left neighbour. */
static void absorb(bfc_allocator *a, chunk *c, chunk *n) {
  c->size += n->size;
  c->next = n->next;
  if (n->next) n->next->prev = c;
  chunk_put(a, n);
}

static void release(tfd_allocator *base, void *ptr);

static void bfc_deallocate(tfd_allocator *base, void *ptr, size_t size) {
  bfc_allocator *a = (bfc_allocator *)base;
  if (a->hold && a->hold(a->hold_ctx, base, ptr, size)) return;
  release(base, ptr);
}

void tfd_bfc_allocator_release(tfd_allocator *a, void *ptr, size_t size) {
  (void)size; /* the chunk knows its size */
  release(a, ptr);
}

static void release(tfd_allocator *base, void *ptr) {
  bfc_allocator *a = (bfc_allocator *)base;
  pthread_mutex_lock(&a->mu);
  size_t i = map_find(a, ptr);
  if (i == SIZE_MAX) {
    /* A caller's bug, reported and survived: aborting would take the whole process (and its
     * other devices) down, and touching the chunks could only corrupt them. */
    a->bad_frees++;
    fprintf(stderr, "Allocator (%s): ignoring deallocation of %p: %s\n", base->name, ptr,
            region_for(a, ptr) ? "in its memory but not a chunk in use (freed twice, or not a chunk's start)"
                                       : "not from this allocator");
    pthread_mutex_unlock(&a->mu);
    return;
  }
  chunk *c = a->map[i];
  map_erase(a, i);
  a->bytes_in_use -= (int64_t)c->size;
  c->allocation_id = -1;
  c->requested = 0;
  if (c->next && c->next->allocation_id < 0) {
    bin_remove(a, c->next);
    absorb(a, c, c->next);
  }
  if (c->prev && c->prev->allocation_id < 0) {
    chunk *p = c->prev;
    bin_remove(a, p);
    absorb(a, p, c);
    c = p;
  }
  bin_insert(a, c);
  pthread_mutex_unlock(&a->mu);
}

static void bfc_get_stats(const tfd_allocator *base, tfd_allocator_stats *out) {
  bfc_allocator *a = (bfc_allocator *)base;
  pthread_mutex_lock(&a->mu);
  out->num_allocs = a->num_allocs;
  out->bytes_in_use = a->bytes_in_use;
  out->peak_bytes_in_use = a->peak;
  out->largest_alloc_size = a->largest;
  out->bytes_limit = (int64_t)a->memory_limit;
  out->num_refused = a->refused;
  out->bytes_cached = (int64_t)a->reserved - a->bytes_in_use;
  pthread_mutex_unlock(&a->mu);
}

/* TensorFlow's DeallocateFreeRegions: regions with nothing allocated go back to the provider. */
static void bfc_trim(tfd_allocator *base) {
  bfc_allocator *a = (bfc_allocator *)base;
  pthread_mutex_lock(&a->mu);
  for (size_t i = a->num_regions; i-- > 0;) {
    chunk *c = a->regions[i]->first;
    if (c->allocation_id >= 0 || c->next) continue;
    bin_remove(a, c);
    chunk_put(a, c);
    region_remove(a, i);
  }
  pthread_mutex_unlock(&a->mu);
}

static void bfc_destroy(tfd_allocator *base) {
  bfc_allocator *a = (bfc_allocator *)base;
  for (size_t i = 0; i < a->num_regions; i++) {
    region *r = a->regions[i];
    for (chunk *c = r->first, *next; c; c = next) {
      next = c->next;
      free(c);
    }
    a->provider.free(a->provider.ctx, r->base, r->size);
    free(r);
  }
  for (chunk *c = a->spare, *next; c; c = next) {
    next = c->next;
    free(c);
  }
  free(a->regions);
  free(a->map);
  pthread_mutex_destroy(&a->mu);
  /* Last: the regions went back through ctx above, and ctx may go with this. */
  if (a->provider.release) a->provider.release(a->provider.ctx);
  tfd_allocator_fini(base);
  free(a);
}

static const tfd_allocator_ops bfc_ops = {bfc_allocate, bfc_deallocate, bfc_get_stats, bfc_destroy, bfc_trim};

tfd_allocator *tfd_bfc_allocator_new(const char *name, const tfd_bfc_region_provider *provider,
                                     const tfd_bfc_options *options, tfd_status *status) {
  if (!name) name = "bfc";
  if (!provider || !provider->alloc || !provider->free) {
    tfd_status_setf(status, TFD_INVALID_ARGUMENT, "Allocator (%s): a region provider with alloc and free is required",
                    name);
    return NULL;
  }
  if (options && options->device_memory &&
      (!options->device_memory->to_host || !options->device_memory->from_host)) {
    tfd_status_setf(status, TFD_INVALID_ARGUMENT, "Allocator (%s): device memory copies need to_host and from_host",
                    name);
    return NULL;
  }
  if (!options || options->memory_limit <= 0) {
    tfd_status_setf(status, TFD_INVALID_ARGUMENT, "Allocator (%s): memory_limit must be > 0, got %" PRId64, name,
                    options ? options->memory_limit : 0);
    return NULL;
  }
  bfc_allocator *a = calloc(1, sizeof *a);
  if (!a || !tfd_allocator_init(&a->base, &bfc_ops, name)) {
    free(a);
    tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "Allocator (%s): out of host memory", name);
    return NULL;
  }
  a->provider = *provider;
  a->base.device_memory = options->device_memory;
  a->hold = options->hold;
  a->hold_ctx = options->hold_ctx;
  a->memory_limit = (size_t)options->memory_limit;
  size_t first = options->allow_growth && a->memory_limit > GROWTH_FIRST_REGION ? GROWTH_FIRST_REGION : a->memory_limit;
  a->curr_region_bytes = round_bytes(first);
  pthread_mutex_init(&a->mu, NULL);
  return &a->base;
}

bool tfd_is_bfc_allocator(const tfd_allocator *a) { return a && a->ops == &bfc_ops; }

void *tfd_bfc_allocator_context(const tfd_allocator *a) {
  return tfd_is_bfc_allocator(a) ? ((const bfc_allocator *)a)->provider.ctx : NULL;
}

bool tfd_bfc_allocator_stats(const tfd_allocator *base, tfd_bfc_stats *out) {
  memset(out, 0, sizeof *out);
  if (!tfd_is_bfc_allocator(base)) return false;
  bfc_allocator *a = (bfc_allocator *)base;
  pthread_mutex_lock(&a->mu);
  out->bytes_reserved = (int64_t)a->reserved;
  out->num_regions = (int64_t)a->num_regions;
  out->largest_free_block = (int64_t)largest_free(a);
  out->free_bytes = (int64_t)a->reserved - a->bytes_in_use;
  out->fragmentation = out->free_bytes ? 1.0 - (double)out->largest_free_block / (double)out->free_bytes : 0.0;
  out->num_bad_frees = a->bad_frees;
  pthread_mutex_unlock(&a->mu);
  return true;
}

static size_t chunk_field(const tfd_allocator *base, const void *ptr, bool requested) {
  if (!tfd_is_bfc_allocator(base)) return 0;
  bfc_allocator *a = (bfc_allocator *)base;
  pthread_mutex_lock(&a->mu);
  size_t i = map_find(a, ptr), n = 0;
  if (i != SIZE_MAX) n = requested ? a->map[i]->requested : a->map[i]->size;
  pthread_mutex_unlock(&a->mu);
  return n;
}

size_t tfd_bfc_allocator_allocated_size(const tfd_allocator *a, const void *ptr) {
  return chunk_field(a, ptr, false);
}

size_t tfd_bfc_allocator_requested_size(const tfd_allocator *a, const void *ptr) {
  return chunk_field(a, ptr, true);
}

/* ---- the consistency checker ---- */
typedef struct check_state {
  char *why;
  size_t why_len;
  bool ok;
  size_t nodes;
} check_state;

/* Keeps the first problem: later ones are often its consequences. */
#define CHECK_FAIL(st, ...)                                                       \
  do {                                                                            \
    if ((st)->ok && (st)->why) snprintf((st)->why, (st)->why_len, __VA_ARGS__);   \
    (st)->ok = false;                                                             \
  } while (0)

/* In-order walk of bin b's treap: order, heap property, membership. *prev is the last node seen. */
static void check_treap(const bfc_allocator *a, const chunk *n, int b, const chunk **prev, check_state *st) {
  if (!n || !st->ok) return;
  if ((n->left && n->left->priority > n->priority) || (n->right && n->right->priority > n->priority))
    CHECK_FAIL(st, "bin %d: treap heap order broken at %p", b, (void *)n->ptr);
  check_treap(a, n->left, b, prev, st);
  if (!st->ok) return;
  st->nodes++;
  if (n->allocation_id >= 0) CHECK_FAIL(st, "bin %d holds chunk %p, which is in use", b, (void *)n->ptr);
  else if (n->bin != b || bin_for_size(n->size) != b)
    CHECK_FAIL(st, "chunk %p of %zu bytes is in bin %d (says %d)", (void *)n->ptr, n->size, b, n->bin);
  else if (*prev && !key_less(*prev, n)) CHECK_FAIL(st, "bin %d out of order at %p", b, (void *)n->ptr);
  else if (region_for(a, n->ptr) != n->region)
    CHECK_FAIL(st, "bin %d: chunk %p is not in its region", b, (void *)n->ptr);
  *prev = n;
  check_treap(a, n->right, b, prev, st);
}

static bool treap_has(const chunk *root, const chunk *c) {
  while (root && root != c) root = key_less(c, root) ? root->left : root->right;
  return root == c;
}

bool tfd_bfc_allocator_check(const tfd_allocator *base, char *why, size_t why_len) {
  check_state st = {why, why_len, true, 0};
  if (why && why_len) why[0] = '\0';
  if (!tfd_is_bfc_allocator(base)) {
    CHECK_FAIL(&st, "not a BFC allocator");
    return false;
  }
  bfc_allocator *a = (bfc_allocator *)base;
  pthread_mutex_lock(&a->mu);
  size_t reserved = 0, free_chunks = 0, used_chunks = 0, used_bytes = 0;
  for (size_t i = 0; i < a->num_regions && st.ok; i++) {
    const region *r = a->regions[i];
    if ((uintptr_t)r->base % MIN_ALLOC || r->size % MIN_ALLOC || !r->size)
      CHECK_FAIL(&st, "region %p of %zu bytes is not in 256-byte units", (void *)r->base, r->size);
    if (i > 0 && (uintptr_t)a->regions[i - 1]->base + a->regions[i - 1]->size > (uintptr_t)r->base)
      CHECK_FAIL(&st, "regions %p and %p overlap or are out of order", (void *)a->regions[i - 1]->base,
                 (void *)r->base);
    reserved += r->size;
    char *at = r->base;
    const chunk *prev = NULL;
    for (const chunk *c = r->first; c && st.ok; prev = c, c = c->next) {
      bool in_use = c->allocation_id >= 0;
      if (c->ptr != at || c->prev != prev || c->region != r)
        CHECK_FAIL(&st, "region %p: chunk %p does not follow its neighbour (expected %p)", (void *)r->base,
                   (void *)c->ptr, (void *)at);
      else if (!c->size || c->size % MIN_ALLOC || c->size > r->size - (size_t)(at - r->base))
        CHECK_FAIL(&st, "chunk %p has a bad size %zu", (void *)c->ptr, c->size);
      else if (!in_use && prev && prev->allocation_id < 0)
        CHECK_FAIL(&st, "free chunks %p and %p are neighbours (not coalesced)", (void *)prev->ptr, (void *)c->ptr);
      else if (!in_use && (c->bin != bin_for_size(c->size) || !treap_has(a->bins[c->bin], c)))
        CHECK_FAIL(&st, "free chunk %p of %zu bytes is not in bin %d", (void *)c->ptr, c->size, bin_for_size(c->size));
      else if (in_use && (c->bin != -1 || map_find(a, c->ptr) == SIZE_MAX || a->map[map_find(a, c->ptr)] != c))
        CHECK_FAIL(&st, "chunk %p in use is in a bin or missing from the pointer map", (void *)c->ptr);
      else if (in_use && (c->requested > c->size || c->allocation_id >= a->next_allocation_id))
        CHECK_FAIL(&st, "chunk %p in use: requested %zu of %zu bytes, id %" PRId64, (void *)c->ptr, c->requested,
                   c->size, c->allocation_id);
      at += c->size;
      if (in_use) {
        used_chunks++;
        used_bytes += c->size;
      } else {
        free_chunks++;
      }
    }
    if (st.ok && at != r->base + r->size)
      CHECK_FAIL(&st, "region %p: chunks cover %zu of %zu bytes", (void *)r->base, (size_t)(at - r->base), r->size);
  }
  for (int b = 0; b < NUM_BINS && st.ok; b++) {
    const chunk *prev = NULL;
    check_treap(a, a->bins[b], b, &prev, &st);
  }
  if (st.nodes != free_chunks) {
    CHECK_FAIL(&st, "bins hold %zu chunks, regions have %zu free", st.nodes, free_chunks);
  } else if (a->map_used != used_chunks) {
    CHECK_FAIL(&st, "pointer map holds %zu chunks, regions have %zu in use", a->map_used, used_chunks);
  } else if ((int64_t)used_bytes != a->bytes_in_use) {
    CHECK_FAIL(&st, "bytes_in_use is %" PRId64 ", chunks in use hold %zu", a->bytes_in_use, used_bytes);
  } else if (reserved != a->reserved || reserved > a->memory_limit) {
    CHECK_FAIL(&st, "regions hold %zu bytes, counted %zu, limit %zu", reserved, a->reserved, a->memory_limit);
  } else if (a->peak < a->bytes_in_use || a->largest > a->peak) {
    CHECK_FAIL(&st, "peak %" PRId64 " / largest %" PRId64 " do not bound %" PRId64 " in use", a->peak, a->largest,
               a->bytes_in_use);
  }
  pthread_mutex_unlock(&a->mu);
  return st.ok;
}
