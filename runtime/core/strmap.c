/* String hash map: FNV-1a, linear probing, tombstones, grows at 70% load. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "strmap.h"

static char tombstone_mark;
#define TOMBSTONE (&tombstone_mark)

static uint64_t hash(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

void tfd_strmap_free(tfd_strmap *m) {
  for (size_t i = 0; i < m->cap; i++)
    if (m->slots[i].key && m->slots[i].key != TOMBSTONE) free(m->slots[i].key);
  free(m->slots);
  *m = (tfd_strmap)TFD_STRMAP_INIT;
}

/* Slot holding key, or NULL. */
static tfd_strmap_slot *find(const tfd_strmap *m, const char *key) {
  if (m->cap == 0) return NULL;
  for (size_t i = hash(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
    tfd_strmap_slot *s = &m->slots[i];
    if (!s->key) return NULL;
    if (s->key != TOMBSTONE && strcmp(s->key, key) == 0) return s;
  }
}

void *tfd_strmap_get(const tfd_strmap *m, const char *key) {
  tfd_strmap_slot *s = find(m, key);
  return s ? s->value : NULL;
}

static bool grow(tfd_strmap *m) {
  size_t cap = m->cap ? m->cap * 2 : 16;
  while (m->size * 10 >= cap * 7) cap *= 2;
  tfd_strmap_slot *slots = calloc(cap, sizeof *slots);
  if (!slots) return false;
  for (size_t i = 0; i < m->cap; i++) {
    char *k = m->slots[i].key;
    if (!k || k == TOMBSTONE) continue;
    size_t j = hash(k) & (cap - 1);
    while (slots[j].key) j = (j + 1) & (cap - 1);
    slots[j] = m->slots[i];
  }
  free(m->slots);
  m->slots = slots;
  m->cap = cap;
  m->used = m->size;
  return true;
}

bool tfd_strmap_put(tfd_strmap *m, const char *key, void *value) {
  tfd_strmap_slot *s = find(m, key);
  if (s) {
    s->value = value;
    return true;
  }
  if ((m->used + 1) * 10 >= m->cap * 7 && !grow(m)) return false;
  char *k = strdup(key);
  if (!k) return false;
  size_t i = hash(key) & (m->cap - 1);
  while (m->slots[i].key && m->slots[i].key != TOMBSTONE) i = (i + 1) & (m->cap - 1);
  if (!m->slots[i].key) m->used++;
  m->slots[i] = (tfd_strmap_slot){k, value};
  m->size++;
  return true;
}

void *tfd_strmap_remove(tfd_strmap *m, const char *key) {
  tfd_strmap_slot *s = find(m, key);
  if (!s) return NULL;
  void *v = s->value;
  free(s->key);
  s->key = TOMBSTONE;
  s->value = NULL;
  m->size--;
  return v;
}

bool tfd_strmap_next(const tfd_strmap *m, size_t *iter, const char **key, void **value) {
  for (; *iter < m->cap; (*iter)++) {
    tfd_strmap_slot *s = &m->slots[*iter];
    if (s->key && s->key != TOMBSTONE) {
      *key = s->key;
      *value = s->value;
      (*iter)++;
      return true;
    }
  }
  return false;
}
