/* The parked device-memory regions (region_cache.c) on the CPU, with fake addresses: what is parked,
 * what a later request may take, displacement by a larger region, eviction, small regions and full
 * slots left to the caller, and threads parking and taking at once. */
#include <pthread.h>
#include <stdint.h>

#include "gpu/region_cache.h"
#include "runtime/testing/harness.h"

#define MIB ((size_t)1 << 20)
#define GIB ((size_t)1 << 30)
static void *addr(uintptr_t a) { return (void *)(a << 20); }

static void test_park_and_take(void) {
  tfd_region_cache c;
  tfd_region_cache_init(&c);
  size_t n = 0;
  CHECK(tfd_region_cache_park(&c, 0, addr(1), 100 * GIB, &n) == NULL); /* parked: nothing to free */
  CHECK_INT(tfd_region_cache_bytes(&c, 0), 100 * GIB);
  CHECK_INT(tfd_region_cache_bytes(&c, 1), 0);
  CHECK(tfd_region_cache_take(&c, 1, 100 * GIB) == NULL);         /* another GPU's */
  CHECK(tfd_region_cache_take(&c, 0, 100 * GIB + 1) == NULL);     /* too small for the request */
  CHECK(tfd_region_cache_take(&c, 0, 2 * MIB) == NULL);           /* far too large for it */
  CHECK(tfd_region_cache_take(&c, 0, 88 * GIB) == NULL);          /* more than an eighth over */
  CHECK(tfd_region_cache_take(&c, 0, 0) == NULL);
  CHECK(tfd_region_cache_take(&c, 0, 90 * GIB) == addr(1));       /* within an eighth: taken */
  CHECK_INT(tfd_region_cache_bytes(&c, 0), 0);
  CHECK(tfd_region_cache_take(&c, 0, 90 * GIB) == NULL);          /* once */
  CHECK(tfd_region_cache_park(&c, 0, addr(2), 100 * GIB, NULL) == NULL);
  CHECK(tfd_region_cache_take(&c, 0, 100 * GIB) == addr(2));      /* exactly its size */
}

static void test_small_regions_and_displacement(void) {
  tfd_region_cache c;
  tfd_region_cache_init(&c);
  size_t n = 0;
  CHECK(tfd_region_cache_park(&c, 0, addr(1), 2 * MIB, &n) == addr(1)); /* allow_growth's: the caller frees it */
  CHECK_INT(n, 2 * MIB);
  CHECK(tfd_region_cache_park(&c, 0, NULL, GIB, &n) == NULL);
  CHECK_INT(tfd_region_cache_bytes(&c, 0), 0);
  CHECK(tfd_region_cache_park(&c, -1, addr(9), GIB, &n) == addr(9));
  CHECK(tfd_region_cache_park(&c, 0, addr(2), GIB, &n) == NULL);
  CHECK(tfd_region_cache_park(&c, 0, addr(3), GIB / 2, &n) == addr(3)); /* smaller than what is parked */
  CHECK_INT(n, GIB / 2);
  CHECK(tfd_region_cache_park(&c, 0, addr(4), 2 * GIB, &n) == addr(2)); /* larger: the old one goes */
  CHECK_INT(n, GIB);
  CHECK_INT(tfd_region_cache_bytes(&c, 0), 2 * GIB);
  CHECK(tfd_region_cache_evict(&c, 0, &n) == addr(4));
  CHECK_INT(n, 2 * GIB);
  CHECK(tfd_region_cache_evict(&c, 0, &n) == NULL);
  CHECK_INT(n, 0);
}

static void test_one_slot_per_gpu(void) {
  tfd_region_cache c;
  tfd_region_cache_init(&c);
  for (int d = 0; d < TFD_REGION_CACHE_SLOTS; d++) CHECK(tfd_region_cache_park(&c, d, addr(100 + (uintptr_t)d), GIB, NULL) == NULL);
  CHECK(tfd_region_cache_park(&c, TFD_REGION_CACHE_SLOTS, addr(7), GIB, NULL) == addr(7)); /* no slot left */
  for (int d = 0; d < TFD_REGION_CACHE_SLOTS; d++) CHECK(tfd_region_cache_take(&c, d, GIB) == addr(100 + (uintptr_t)d));
  CHECK(tfd_region_cache_park(&c, TFD_REGION_CACHE_SLOTS, addr(7), GIB, NULL) == NULL); /* slots free again */
}

/* Four threads park and take regions of their own GPU 20,000 times: each gets back exactly its own. */
typedef struct churn_arg {
  tfd_region_cache *c;
  int d;
} churn_arg;

static void *churn(void *arg) {
  tfd_region_cache *c = ((churn_arg *)arg)->c;
  int d = ((churn_arg *)arg)->d;
  long bad = 0;
  for (int i = 0; i < 20000; i++) {
    void *mine = addr((uintptr_t)(d * 100000 + i + 1));
    if (tfd_region_cache_park(c, d, mine, GIB, NULL) != NULL) bad++;
    if (tfd_region_cache_take(c, d, GIB) != mine) bad++;
  }
  return (void *)bad;
}

static void test_threads(void) {
  tfd_region_cache c;
  tfd_region_cache_init(&c);
  churn_arg args[4];
  pthread_t t[4];
  for (int i = 0; i < 4; i++) {
    args[i].c = &c, args[i].d = i;
    CHECK_INT(pthread_create(&t[i], NULL, churn, &args[i]), 0);
  }
  for (int i = 0; i < 4; i++) {
    void *bad = NULL;
    pthread_join(t[i], &bad);
    CHECK_INT((long)bad, 0);
  }
  for (int i = 0; i < 4; i++) CHECK_INT(tfd_region_cache_bytes(&c, i), 0);
}

static const tfd_test tests[] = {
    {"park and take: within an eighth of the request, once", test_park_and_take},
    {"small regions, displacement by a larger one, eviction", test_small_regions_and_displacement},
    {"one slot per GPU", test_one_slot_per_gpu},
    {"threads", test_threads},
};

TFD_TEST_MAIN(tests)
