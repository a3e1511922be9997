/* The algorithm cache (algo_cache.h): entries in one array, chained by hash from a bucket table twice
 * the capacity, and kept in a doubly linked list by use so the least recently used is evicted in O(1). */
#include "algo_cache.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

void tfd_algo_key_init(tfd_algo_key *k, int64_t kind) {
  memset(k, 0, sizeof *k);
  k->w[0] = kind;
  k->n = 1;
}

bool tfd_algo_key_add(tfd_algo_key *k, int64_t v) {
  if (k->n < 0) return false;
  if (k->n >= TFD_ALGO_KEY_WORDS) {
    k->n = -1;
    return false;
  }
  k->w[k->n++] = v;
  return true;
}

typedef struct entry {
  tfd_algo_key key;
  uint64_t hash;
  int chain;            /* next entry in the same bucket, -1 at the end */
  int newer, older;     /* the use list, -1 at the ends */
  unsigned char *value; /* points into the cache's value array */
} entry;

struct tfd_algo_cache {
  pthread_mutex_t mu;
  size_t capacity, value_bytes, nbuckets, size;
  entry *entries;
  unsigned char *values;
  int *buckets;        /* first entry of each chain, -1 when empty */
  int newest, oldest;  /* ends of the use list */
  tfd_algo_cache_stats stats;
};

static uint64_t key_hash(const tfd_algo_key *k) {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ (uint64_t)k->n;
  for (int i = 0; i < k->n; i++) {
    h ^= (uint64_t)k->w[i];
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 31;
  }
  return h;
}

static bool key_equal(const tfd_algo_key *a, const tfd_algo_key *b) {
  return a->n == b->n && memcmp(a->w, b->w, (size_t)a->n * sizeof a->w[0]) == 0;
}

tfd_algo_cache *tfd_algo_cache_new(size_t capacity, size_t value_bytes) {
  if (capacity < 1) capacity = 1;
  if (capacity > (1u << 20)) capacity = 1u << 20; /* int indices */
  tfd_algo_cache *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  pthread_mutex_init(&c->mu, NULL);
  c->capacity = capacity;
  c->value_bytes = value_bytes;
  c->nbuckets = 2 * capacity;
  c->entries = calloc(capacity, sizeof *c->entries);
  c->values = calloc(capacity, value_bytes ? value_bytes : 1);
  c->buckets = malloc(c->nbuckets * sizeof *c->buckets);
  if (!c->entries || !c->values || !c->buckets) {
    tfd_algo_cache_free(c);
    return NULL;
  }
  for (size_t i = 0; i < c->nbuckets; i++) c->buckets[i] = -1;
  for (size_t i = 0; i < capacity; i++) c->entries[i].value = c->values + i * value_bytes;
  c->newest = c->oldest = -1;
  return c;
}

void tfd_algo_cache_free(tfd_algo_cache *c) {
  if (!c) return;
  pthread_mutex_destroy(&c->mu);
  free(c->entries);
  free(c->values);
  free(c->buckets);
  free(c);
}

/* ---- the use list ---- */
static void unlink_use(tfd_algo_cache *c, int i) {
  entry *e = &c->entries[i];
  if (e->newer >= 0) c->entries[e->newer].older = e->older;
  else c->newest = e->older;
  if (e->older >= 0) c->entries[e->older].newer = e->newer;
  else c->oldest = e->newer;
  e->newer = e->older = -1;
}

static void push_newest(tfd_algo_cache *c, int i) {
  entry *e = &c->entries[i];
  e->newer = -1;
  e->older = c->newest;
  if (c->newest >= 0) c->entries[c->newest].newer = i;
  c->newest = i;
  if (c->oldest < 0) c->oldest = i;
}

/* ---- chains ---- */
static int find(tfd_algo_cache *c, const tfd_algo_key *k, uint64_t h) {
  for (int i = c->buckets[h % c->nbuckets]; i >= 0; i = c->entries[i].chain)
    if (c->entries[i].hash == h && key_equal(&c->entries[i].key, k)) return i;
  return -1;
}

static void unlink_chain(tfd_algo_cache *c, int i) {
  int *at = &c->buckets[c->entries[i].hash % c->nbuckets];
  while (*at != i) at = &c->entries[*at].chain;
  *at = c->entries[i].chain;
}

bool tfd_algo_cache_get(tfd_algo_cache *c, const tfd_algo_key *k, void *value) {
  if (k->n < 0) return false;
  uint64_t h = key_hash(k);
  pthread_mutex_lock(&c->mu);
  int i = find(c, k, h);
  if (i >= 0) {
    memcpy(value, c->entries[i].value, c->value_bytes);
    unlink_use(c, i);
    push_newest(c, i);
    c->stats.hits++;
  } else {
    c->stats.misses++;
  }
  pthread_mutex_unlock(&c->mu);
  return i >= 0;
}

void tfd_algo_cache_put(tfd_algo_cache *c, const tfd_algo_key *k, const void *value) {
  if (k->n < 0) return;
  uint64_t h = key_hash(k);
  pthread_mutex_lock(&c->mu);
  int i = find(c, k, h);
  if (i >= 0) {
    unlink_use(c, i);
  } else if (c->size < c->capacity) {
    i = (int)c->size++;
  } else {
    i = c->oldest;
    unlink_use(c, i);
    unlink_chain(c, i);
    c->stats.evictions++;
  }
  if (find(c, k, h) != i) { /* a new entry: chain it */
    entry *e = &c->entries[i];
    e->key = *k;
    e->hash = h;
    int *head = &c->buckets[h % c->nbuckets];
    e->chain = *head;
    *head = i;
  }
  memcpy(c->entries[i].value, value, c->value_bytes);
  push_newest(c, i);
  pthread_mutex_unlock(&c->mu);
}

void tfd_algo_cache_get_stats(tfd_algo_cache *c, tfd_algo_cache_stats *out) {
  pthread_mutex_lock(&c->mu);
  *out = c->stats;
  out->size = (int64_t)c->size;
  pthread_mutex_unlock(&c->mu);
}
