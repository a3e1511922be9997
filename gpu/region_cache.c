/* Device memory regions parked between allocators of one GPU (see region_cache.h). */
#include "region_cache.h"

void tfd_region_cache_init(tfd_region_cache *c) {
  pthread_mutex_init(&c->mu, NULL);
  for (int i = 0; i < TFD_REGION_CACHE_SLOTS; i++) c->slot[i].device = -1, c->slot[i].ptr = NULL, c->slot[i].bytes = 0;
}

/* The slot of device, or -1. Called with c->mu held. */
static int find(const tfd_region_cache *c, int device) {
  for (int i = 0; i < TFD_REGION_CACHE_SLOTS; i++)
    if (c->slot[i].device == device) return i;
  return -1;
}

static void *clear(tfd_region_cache *c, int i, size_t *out_bytes) {
  void *p = c->slot[i].ptr;
  if (out_bytes) *out_bytes = c->slot[i].bytes;
  c->slot[i].device = -1, c->slot[i].ptr = NULL, c->slot[i].bytes = 0;
  return p;
}

void *tfd_region_cache_take(tfd_region_cache *c, int device, size_t bytes) {
  void *p = NULL;
  pthread_mutex_lock(&c->mu);
  int i = find(c, device);
  if (i >= 0 && bytes > 0 && c->slot[i].bytes >= bytes && c->slot[i].bytes - bytes <= bytes / 8) p = clear(c, i, NULL);
  pthread_mutex_unlock(&c->mu);
  return p;
}

void *tfd_region_cache_park(tfd_region_cache *c, int device, void *ptr, size_t bytes, size_t *out_bytes) {
  if (out_bytes) *out_bytes = bytes;
  if (!ptr || device < 0 || bytes < TFD_REGION_CACHE_MIN_BYTES) return ptr;
  void *displaced = ptr;
  pthread_mutex_lock(&c->mu);
  int i = find(c, device);
  if (i < 0) {
    i = find(c, -1); /* an empty slot */
    if (i >= 0) c->slot[i].device = device, c->slot[i].ptr = ptr, c->slot[i].bytes = bytes, displaced = NULL;
  } else if (bytes > c->slot[i].bytes) {
    displaced = clear(c, i, out_bytes);
    c->slot[i].device = device, c->slot[i].ptr = ptr, c->slot[i].bytes = bytes;
  }
  pthread_mutex_unlock(&c->mu);
  return displaced;
}

void *tfd_region_cache_evict(tfd_region_cache *c, int device, size_t *out_bytes) {
  if (out_bytes) *out_bytes = 0;
  pthread_mutex_lock(&c->mu);
  int i = find(c, device);
  void *p = i >= 0 ? clear(c, i, out_bytes) : NULL;
  pthread_mutex_unlock(&c->mu);
  return p;
}

size_t tfd_region_cache_bytes(tfd_region_cache *c, int device) {
  pthread_mutex_lock(&c->mu);
  int i = find(c, device);
  size_t n = i >= 0 ? c->slot[i].bytes : 0;
  pthread_mutex_unlock(&c->mu);
  return n;
}
