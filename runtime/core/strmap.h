/* A string-keyed hash map (open addressing) for the runtime's name tables.
 * Keys are copied and owned by the map; values are borrowed pointers. */
#ifndef TFDEV_RUNTIME_STRMAP_H
#define TFDEV_RUNTIME_STRMAP_H

#include <stdbool.h>
#include <stddef.h>

typedef struct tfd_strmap_slot {
  char *key; /* NULL: empty; TOMBSTONE: deleted */
  void *value;
} tfd_strmap_slot;

typedef struct tfd_strmap {
  tfd_strmap_slot *slots;
  size_t cap, size, used; /* used counts live and deleted slots */
} tfd_strmap;

#define TFD_STRMAP_INIT {NULL, 0, 0, 0}

void tfd_strmap_free(tfd_strmap *m);
/* The value under key, or NULL. */
void *tfd_strmap_get(const tfd_strmap *m, const char *key);
/* Inserts or replaces. Returns false when out of memory (map unchanged). */
bool tfd_strmap_put(tfd_strmap *m, const char *key, void *value);
/* Removes key; returns its value, or NULL if absent. */
void *tfd_strmap_remove(tfd_strmap *m, const char *key);
/* Iteration: for (size_t i = 0; tfd_strmap_next(m, &i, &k, &v);) ... */
bool tfd_strmap_next(const tfd_strmap *m, size_t *iter, const char **key, void **value);

#endif
