/* The CUDA kernels' algorithm cache (algo_cache.c) on the CPU: hits and misses, keys that differ in
 * any word or in length, replacement, least-recently-used eviction, overflowing keys, and eight
 * threads hammering one small cache. */
#include <pthread.h>
#include <stdlib.h>

#include "gpu/kernels/algo_cache.h"
#include "runtime/testing/harness.h"

typedef struct value {
  int64_t algo, workspace;
} value;

static tfd_algo_key key_of(int64_t kind, int64_t a, int64_t b) {
  tfd_algo_key k;
  tfd_algo_key_init(&k, kind);
  tfd_algo_key_add(&k, a);
  tfd_algo_key_add(&k, b);
  return k;
}

static void test_hits_and_misses(void) {
  tfd_algo_cache *c = tfd_algo_cache_new(8, sizeof(value));
  CHECK(c != NULL);
  value v = {0, 0}, got;
  tfd_algo_key k = key_of(1, 64, 3);
  CHECK(!tfd_algo_cache_get(c, &k, &got));
  v.algo = 7, v.workspace = 4096;
  tfd_algo_cache_put(c, &k, &v);
  memset(&got, 0, sizeof got);
  CHECK(tfd_algo_cache_get(c, &k, &got));
  CHECK_INT(got.algo, 7);
  CHECK_INT(got.workspace, 4096);
  /* any word, the kind, or the length makes another key */
  tfd_algo_key other = key_of(1, 64, 4);
  CHECK(!tfd_algo_cache_get(c, &other, &got));
  other = key_of(2, 64, 3);
  CHECK(!tfd_algo_cache_get(c, &other, &got));
  tfd_algo_key longer = key_of(1, 64, 3);
  tfd_algo_key_add(&longer, 0); /* a trailing zero is still a word */
  CHECK(!tfd_algo_cache_get(c, &longer, &got));
  /* replacing a value keeps one entry */
  v.algo = 9;
  tfd_algo_cache_put(c, &k, &v);
  CHECK(tfd_algo_cache_get(c, &k, &got));
  CHECK_INT(got.algo, 9);
  tfd_algo_cache_stats s;
  tfd_algo_cache_get_stats(c, &s);
  CHECK_INT(s.size, 1);
  CHECK_INT(s.hits, 2);
  CHECK_INT(s.misses, 4);
  CHECK_INT(s.evictions, 0);
  tfd_algo_cache_free(c);
}

static void test_eviction_is_least_recently_used(void) {
  tfd_algo_cache *c = tfd_algo_cache_new(4, sizeof(value));
  value v, got;
  for (int64_t i = 0; i < 4; i++) {
    tfd_algo_key k = key_of(1, i, 0);
    v.algo = i, v.workspace = 0;
    tfd_algo_cache_put(c, &k, &v);
  }
  tfd_algo_key k0 = key_of(1, 0, 0), k1 = key_of(1, 1, 0), k4 = key_of(1, 4, 0), k5 = key_of(1, 5, 0);
  CHECK(tfd_algo_cache_get(c, &k0, &got)); /* 0 is now the newest; 1 the oldest */
  v.algo = 4;
  tfd_algo_cache_put(c, &k4, &v);
  CHECK(!tfd_algo_cache_get(c, &k1, &got));
  CHECK(tfd_algo_cache_get(c, &k0, &got) && got.algo == 0);
  CHECK(tfd_algo_cache_get(c, &k4, &got) && got.algo == 4);
  /* order now (oldest first): 2, 3, 0, 4 */
  v.algo = 5;
  tfd_algo_cache_put(c, &k5, &v);
  tfd_algo_key k2 = key_of(1, 2, 0), k3 = key_of(1, 3, 0);
  CHECK(!tfd_algo_cache_get(c, &k2, &got));
  CHECK(tfd_algo_cache_get(c, &k3, &got) && got.algo == 3);
  tfd_algo_cache_stats s;
  tfd_algo_cache_get_stats(c, &s);
  CHECK_INT(s.size, 4);
  CHECK_INT(s.evictions, 2);
  /* a long run of new keys through a small table keeps every lookup consistent */
  for (int64_t i = 100; i < 1100; i++) {
    tfd_algo_key k = key_of(3, i, i * 7);
    v.algo = i;
    tfd_algo_cache_put(c, &k, &v);
    CHECK(tfd_algo_cache_get(c, &k, &got) && got.algo == i);
    tfd_algo_key old = key_of(3, i - 4, (i - 4) * 7);
    CHECK(!tfd_algo_cache_get(c, &old, &got));
  }
  tfd_algo_cache_get_stats(c, &s);
  CHECK_INT(s.size, 4);
  tfd_algo_cache_free(c);
}

static void test_capacity_one_and_overflowing_keys(void) {
  tfd_algo_cache *c = tfd_algo_cache_new(0, sizeof(value)); /* at least one entry */
  value v = {1, 2}, got;
  tfd_algo_key a = key_of(1, 1, 1), b = key_of(1, 2, 2);
  tfd_algo_cache_put(c, &a, &v);
  CHECK(tfd_algo_cache_get(c, &a, &got));
  tfd_algo_cache_put(c, &b, &v);
  CHECK(!tfd_algo_cache_get(c, &a, &got));
  CHECK(tfd_algo_cache_get(c, &b, &got));
  tfd_algo_key big;
  tfd_algo_key_init(&big, 1);
  bool all = true;
  for (int i = 0; i < TFD_ALGO_KEY_WORDS + 2; i++) all = tfd_algo_key_add(&big, i) && all;
  CHECK(!all);
  tfd_algo_cache_put(c, &big, &v); /* not stored: it could collide with any truncated key */
  CHECK(!tfd_algo_cache_get(c, &big, &got));
  CHECK(tfd_algo_cache_get(c, &b, &got));
  tfd_algo_cache_free(c);
}

/* Eight threads, each with its own keys plus shared ones, through a table smaller than their keys:
 * every hit must return the value put for that key (values are derived from keys). */
typedef struct worker {
  tfd_algo_cache *c;
  int id, bad;
} worker;

static void *hammer(void *arg) {
  worker *w = arg;
  value v, got;
  unsigned r = (unsigned)w->id * 2654435761u + 1;
  for (int i = 0; i < 20000; i++) {
    r = r * 1103515245u + 12345u;
    int64_t a = (int64_t)(r >> 8) % 48, b = (r >> 4) & 1 ? w->id : -1; /* -1: shared by all threads */
    tfd_algo_key k = key_of(5, a, b);
    if (tfd_algo_cache_get(w->c, &k, &got)) {
      if (got.algo != a * 1000 + b || got.workspace != (a ^ b)) w->bad++;
    } else {
      v.algo = a * 1000 + b;
      v.workspace = a ^ b;
      tfd_algo_cache_put(w->c, &k, &v);
    }
  }
  return NULL;
}

static void test_threads(void) {
  tfd_algo_cache *c = tfd_algo_cache_new(32, sizeof(value));
  pthread_t t[8];
  worker w[8];
  for (int i = 0; i < 8; i++) {
    w[i] = (worker){c, i, 0};
    CHECK(pthread_create(&t[i], NULL, hammer, &w[i]) == 0);
  }
  for (int i = 0; i < 8; i++) {
    pthread_join(t[i], NULL);
    CHECK_INT(w[i].bad, 0);
  }
  tfd_algo_cache_stats s;
  tfd_algo_cache_get_stats(c, &s);
  CHECK_INT(s.hits + s.misses, 8 * 20000);
  CHECK(s.size <= 32);
  CHECK(s.evictions > 0);
  tfd_algo_cache_free(c);
}

static const tfd_test tests[] = {
    {"hits, misses, keys that differ, replacement", test_hits_and_misses},
    {"eviction takes the least recently used", test_eviction_is_least_recently_used},
    {"capacity one; keys past TFD_ALGO_KEY_WORDS are never stored", test_capacity_one_and_overflowing_keys},
    {"eight threads on one small cache", test_threads},
};

TFD_TEST_MAIN(tests)
