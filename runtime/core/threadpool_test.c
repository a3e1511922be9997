/* Unit tests for the thread pool: scheduling, parallel-for coverage, nesting, shutdown. */
#include <stdatomic.h>
#include <stdlib.h>

#include "runtime/testing/harness.h"

typedef struct counter {
  atomic_int n;
  tfd_threadpool *pool;
  atomic_int in_pool;
} counter;

static void bump(void *arg) {
  counter *c = arg;
  if (tfd_threadpool_current_thread_id(c->pool) >= 0) atomic_fetch_add(&c->in_pool, 1);
  atomic_fetch_add(&c->n, 1);
}

static void test_schedule_runs_everything_before_free(void) {
  counter c = {0};
  tfd_threadpool_new("t", 3, &c.pool, NULL);
  CHECK_INT(tfd_threadpool_num_threads(c.pool), 3);
  CHECK_INT(tfd_threadpool_current_thread_id(c.pool), -1);
  for (int i = 0; i < 500; i++) CHECK_INT(tfd_threadpool_schedule(c.pool, bump, &c, NULL), TFD_OK);
  tfd_threadpool_free(c.pool); /* drains the queue */
  CHECK_INT(atomic_load(&c.n), 500);
  CHECK_INT(atomic_load(&c.in_pool), 500);
}

static void test_default_size_is_core_count(void) {
  tfd_threadpool *p = NULL;
  tfd_threadpool_new("t", 0, &p, NULL);
  CHECK_INT(tfd_threadpool_num_threads(p), tfd_env_num_cores());
  CHECK(tfd_env_num_cores() >= 1);
  tfd_threadpool_free(p);
}

typedef struct cover {
  unsigned char *hits;
  atomic_int shards;
} cover;

static void mark(int64_t b, int64_t e, void *arg) {
  cover *c = arg;
  atomic_fetch_add(&c->shards, 1);
  for (int64_t i = b; i < e; i++) c->hits[i]++;
}

static void test_parallel_for_covers_range_once(void) {
  tfd_threadpool *p = NULL;
  tfd_threadpool_new("t", 2, &p, NULL);
  int64_t sizes[] = {1, 7, 1000, 100003};
  for (int s = 0; s < 4; s++) {
    cover c = {calloc((size_t)sizes[s], 1), 0};
    tfd_threadpool_parallel_for(p, sizes[s], 1000, mark, &c);
    int64_t bad = 0;
    for (int64_t i = 0; i < sizes[s]; i++) bad += c.hits[i] != 1;
    CHECK_INT(bad, 0);
    if (sizes[s] >= 1000) CHECK(atomic_load(&c.shards) > 1); /* large work is split */
    free(c.hits);
  }
  /* Cheap work runs inline as one shard. */
  cover small = {calloc(100, 1), 0};
  tfd_threadpool_parallel_for(p, 100, 1, mark, &small);
  CHECK_INT(atomic_load(&small.shards), 1);
  free(small.hits);
  /* No pool: inline. */
  cover none = {calloc(50, 1), 0};
  tfd_threadpool_parallel_for(NULL, 50, 1000000, mark, &none);
  CHECK_INT(atomic_load(&none.shards), 1);
  CHECK_INT(none.hits[49], 1);
  free(none.hits);
  tfd_threadpool_free(p);
}

typedef struct nested {
  tfd_threadpool *pool;
  atomic_long sum;
} nested;

static void inner(int64_t b, int64_t e, void *arg) {
  nested *n = arg;
  atomic_fetch_add(&n->sum, (long)(e - b));
}

static void outer(int64_t b, int64_t e, void *arg) {
  nested *n = arg;
  for (int64_t i = b; i < e; i++) tfd_threadpool_parallel_for(n->pool, 10000, 100, inner, n);
}

static void test_nested_parallel_for_does_not_deadlock(void) {
  nested n = {NULL, 0};
  CHECK_INT(tfd_threadpool_new("t", 2, &n.pool, NULL), TFD_OK);
  tfd_threadpool_parallel_for(n.pool, 16, 1000000, outer, &n);
  CHECK_INT(atomic_load(&n.sum), 16 * 10000);
  tfd_threadpool_free(n.pool);
}

static const tfd_test tests[] = {
    {"schedule runs everything before free", test_schedule_runs_everything_before_free},
    {"default size is the core count", test_default_size_is_core_count},
    {"parallel-for covers the range once", test_parallel_for_covers_range_once},
    {"nested parallel-for does not deadlock", test_nested_parallel_for_does_not_deadlock},
};
TFD_TEST_MAIN(tests)
