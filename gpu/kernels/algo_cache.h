/* A small table from a problem (every shape, stride, padding, dilation, dtype of a convolution or a
 * product) to what was picked for it (a cuDNN algorithm and its workspace, a cuBLASLt algorithm), so
 * the choice is made once per shape and device, as TensorFlow's autotune maps are. Bounded: past its
 * capacity the entry used longest ago goes. Thread-safe (one mutex): a device's kernels run on many
 * threads. Plain C, tested on the CPU (algo_cache_test.c). */
#ifndef TFDEV_GPU_KERNELS_ALGO_CACHE_H
#define TFDEV_GPU_KERNELS_ALGO_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A key is this many words; callers zero it first (tfd_algo_key_init), so unused words match. */
#define TFD_ALGO_KEY_WORDS 32

typedef struct tfd_algo_key {
  int64_t w[TFD_ALGO_KEY_WORDS];
  int n; /* words set so far (tfd_algo_key_add) */
} tfd_algo_key;

/* Starts a key for problems of `kind` (a caller's tag: forward convolution, backward data, product). */
void tfd_algo_key_init(tfd_algo_key *k, int64_t kind);
/* Appends a word; false (and the key marked unusable, so it never matches) past TFD_ALGO_KEY_WORDS. */
bool tfd_algo_key_add(tfd_algo_key *k, int64_t v);

typedef struct tfd_algo_cache tfd_algo_cache;

typedef struct tfd_algo_cache_stats {
  int64_t hits, misses, evictions;
  int64_t size;
} tfd_algo_cache_stats;

/* A table of at most `capacity` (>= 1) entries whose values are value_bytes each. NULL when out of
 * memory. The caller owns it. */
tfd_algo_cache *tfd_algo_cache_new(size_t capacity, size_t value_bytes);
void tfd_algo_cache_free(tfd_algo_cache *c);
/* Copies the value for k into value and returns true (and marks it used), or returns false (a miss). */
bool tfd_algo_cache_get(tfd_algo_cache *c, const tfd_algo_key *k, void *value);
/* Sets the value for k, replacing one there; at capacity the least recently used entry goes first. A
 * key that overflowed is not stored. */
void tfd_algo_cache_put(tfd_algo_cache *c, const tfd_algo_key *k, const void *value);
void tfd_algo_cache_get_stats(tfd_algo_cache *c, tfd_algo_cache_stats *out);

#ifdef __cplusplus
}
#endif
#endif
