/* Concurrency tests: allocator, resource manager, op segment and the shared intra-op pool under many threads.
 * Run under ThreadSanitizer by `scripts/test --sanitize=thread`. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "runtime/device/device_internal.h"
#include "runtime/testing/harness.h"

enum { THREADS = 8, ROUNDS = 300 };

typedef struct shared {
  tfd_allocator *alloc;
  tfd_resource_mgr *rm;
  tfd_device *dev;
  atomic_int refused, made, found;
} shared;

static void *allocator_worker(void *p) {
  shared *s = p;
  tfd_status *st = tfd_status_new();
  int64_t dims[] = {64}; /* 256 bytes */
  for (int i = 0; i < ROUNDS; i++) {
    tfd_tensor *t = NULL;
    tfd_tensor_new(s->alloc, TFD_FLOAT32, dims, 1, &t, st);
    if (!t) {
      atomic_fetch_add(&s->refused, 1);
      tfd_status_reset(st);
      continue;
    }
    ((float *)tfd_tensor_data(t))[i % 64] = (float)i;
    tfd_tensor_unref(t);
  }
  tfd_status_free(st);
  return NULL;
}

static void test_allocator_under_contention(void) {
  shared s = {0};
  s.alloc = tfd_cpu_allocator_new("contended", 256 * 4); /* room for 4 of 8 threads at once */
  pthread_t th[THREADS];
  for (int i = 0; i < THREADS; i++) pthread_create(&th[i], NULL, allocator_worker, &s);
  for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
  tfd_allocator_stats st;
  tfd_allocator_get_stats(s.alloc, &st);
  CHECK_INT(st.bytes_in_use, 0);
  CHECK(st.peak_bytes_in_use <= 1024); /* the limit was never passed */
  CHECK_INT(st.num_allocs + atomic_load(&s.refused), THREADS * ROUNDS);
  CHECK_INT(st.num_refused, atomic_load(&s.refused));
  tfd_allocator_unref(s.alloc);
}

static void *resource_worker(void *p) {
  shared *s = p;
  tfd_status *st = tfd_status_new();
  char name[32];
  for (int i = 0; i < ROUNDS; i++) {
    snprintf(name, sizeof name, "r%d", i % 7);
    tfd_resource *r = NULL;
    tfd_resource_new("Thing", NULL, NULL, &r, st);
    if (tfd_resource_mgr_create(s->rm, i % 2 ? "odd" : NULL, name, r, st) == TFD_OK) atomic_fetch_add(&s->made, 1);
    tfd_status_reset(st);
    tfd_resource_unref(r);
    tfd_resource *f = tfd_resource_mgr_lookup(s->rm, "odd", "Thing", name, st);
    if (f) {
      atomic_fetch_add(&s->found, 1);
      tfd_resource_unref(f);
    }
    tfd_status_reset(st);
    if (i % 50 == 0) tfd_resource_mgr_cleanup(s->rm, "odd", st);
  }
  tfd_status_free(st);
  return NULL;
}

static void test_resource_mgr_under_contention(void) {
  shared s = {0};
  s.rm = tfd_resource_mgr_new(NULL);
  pthread_t th[THREADS];
  for (int i = 0; i < THREADS; i++) pthread_create(&th[i], NULL, resource_worker, &s);
  for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
  CHECK(atomic_load(&s.made) >= 7); /* every default-container name made exactly once */
  CHECK_INT(tfd_resource_mgr_container_size(s.rm, NULL), 7);
  tfd_resource_mgr_free(s.rm);
}

typedef struct nop_kernel {
  tfd_op_kernel base;
} nop_kernel;
static void nop_compute(tfd_op_kernel *k, tfd_kernel_context *c) { (void)k, (void)c; }
static void nop_destroy(tfd_op_kernel *k) { free(k); }
static const tfd_op_kernel_ops nop_ops = {nop_compute, NULL, nop_destroy};
static tfd_op_kernel *make_nop(void *arg, tfd_status *st) {
  (void)st;
  atomic_fetch_add((atomic_int *)arg, 1);
  nop_kernel *k = malloc(sizeof *k);
  k->base.ops = &nop_ops;
  return &k->base;
}

static void *segment_worker(void *p) {
  shared *s = p;
  tfd_op_segment *seg = tfd_device_op_segment(s->dev);
  tfd_status *st = tfd_status_new();
  char node[32];
  for (int i = 0; i < ROUNDS; i++) {
    snprintf(node, sizeof node, "n%d", i % 10);
    tfd_op_kernel *k = NULL;
    if (tfd_op_segment_find_or_create(seg, "sess", node, make_nop, &s->made, &k, st) == TFD_OK)
      tfd_device_compute(s->dev, k, NULL);
    tfd_status_reset(st);
  }
  tfd_status_free(st);
  return NULL;
}

static void test_op_segment_under_contention(void) {
  shared s = {0};
  tfd_cpu_device_config cfg = {.name = "/job:c/replica:0/task:0/device:CPU:0", .num_threads = 2};
  tfd_cpu_device_new(&cfg, &s.dev, NULL);
  tfd_op_segment_add_hold(tfd_device_op_segment(s.dev), "sess", NULL);
  pthread_t th[THREADS];
  for (int i = 0; i < THREADS; i++) pthread_create(&th[i], NULL, segment_worker, &s);
  for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
  CHECK_INT(tfd_op_segment_num_kernels(tfd_device_op_segment(s.dev), "sess"), 10);
  CHECK(atomic_load(&s.made) >= 10); /* races may build a kernel twice; one is kept */
  tfd_op_segment_remove_hold(tfd_device_op_segment(s.dev), "sess");
  tfd_device_unref(s.dev);
}

typedef struct counter_arg {
  atomic_int bad, ran;
} counter_arg;

static void count_range(int64_t b, int64_t e, void *p) { atomic_fetch_add(&((counter_arg *)p)->ran, (int)(e - b)); }

/* Devices come and go on several threads; each one must get a working shared pool. */
static void *device_churn(void *p) {
  counter_arg *c = p;
  char name[64];
  for (int i = 0; i < 20; i++) {
    snprintf(name, sizeof name, "/job:c/replica:0/task:0/device:CPU:%d", i);
    tfd_cpu_device_config cfg = {.name = name, .num_threads = 2};
    tfd_device *d = NULL;
    tfd_cpu_device_new(&cfg, &d, NULL);
    if (!d || !tfd_device_threadpool(d) || tfd_device_sync(d, NULL) != TFD_OK) {
      atomic_fetch_add(&c->bad, 1);
    } else {
      tfd_threadpool_parallel_for(tfd_device_threadpool(d), 1000, 1000, count_range, c);
    }
    tfd_device_unref(d);
  }
  return NULL;
}

static void test_global_pool_churn(void) {
  counter_arg c = {0};
  pthread_t th[4];
  for (int i = 0; i < 4; i++) pthread_create(&th[i], NULL, device_churn, &c);
  for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
  CHECK_INT(atomic_load(&c.bad), 0);
  CHECK_INT(atomic_load(&c.ran), 4 * 20 * 1000);
}

static const tfd_test tests[] = {
    {"allocator under contention", test_allocator_under_contention},
    {"resource manager under contention", test_resource_mgr_under_contention},
    {"op segment under contention", test_op_segment_under_contention},
    {"global intra-op pool churn", test_global_pool_churn},
};
TFD_TEST_MAIN(tests)
