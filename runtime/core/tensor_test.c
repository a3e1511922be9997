/* Unit tests for tensors and the CPU allocator. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/core/variant.h"
#include "runtime/testing/harness.h"

static void test_dtypes(void) {
  CHECK_STR(tfd_dtype_name(TFD_FLOAT32), "float32");
  CHECK_INT(tfd_dtype_from_name("int64"), TFD_INT64);
  CHECK_INT(tfd_dtype_from_name("float16"), TFD_FLOAT16);
  CHECK_INT(tfd_dtype_from_name("uint8"), TFD_UINT8);
  CHECK_INT(tfd_dtype_from_name("bfloat16"), 0);
  CHECK_INT(tfd_dtype_size(TFD_FLOAT16), 2);
  CHECK_INT(tfd_dtype_from_name("DT_FLOAT"), TFD_FLOAT32);
  CHECK_INT(tfd_dtype_from_name("DT_INT64"), TFD_INT64);
  CHECK_INT(tfd_dtype_from_name("DT_HALF"), TFD_FLOAT16);
  CHECK_INT(tfd_dtype_from_name("DT_STRING"), TFD_STRING);
  CHECK_INT(tfd_dtype_from_name("string"), TFD_STRING);
  CHECK_INT(tfd_dtype_size(TFD_STRING), sizeof(void *));
  CHECK_INT(tfd_dtype_size(TFD_FLOAT64), 8);
  CHECK_INT(tfd_dtype_size(TFD_BOOL), 1);
  CHECK_INT(tfd_dtype_from_name("complex64"), TFD_COMPLEX64);
  CHECK_INT(tfd_dtype_from_name("DT_COMPLEX64"), TFD_COMPLEX64);
  CHECK_STR(tfd_dtype_name(TFD_COMPLEX64), "complex64");
  CHECK_INT(tfd_dtype_size(TFD_COMPLEX64), 8);
  CHECK_INT(tfd_dtype_from_name("complex128"), 0);
}

static void test_tensor_shape_and_alignment(void) {
  tfd_status *st = tfd_status_new();
  int64_t dims[] = {2, 3, 4};
  tfd_tensor *t = NULL;
  tfd_tensor_new(NULL, TFD_FLOAT32, dims, 3, &t, st);
  CHECK(t != NULL);
  CHECK_INT(tfd_tensor_numel(t), 24);
  CHECK_INT(tfd_tensor_byte_size(t), 96);
  CHECK_INT(tfd_tensor_ndims(t), 3);
  CHECK_INT(tfd_tensor_dim(t, 2), 4);
  CHECK_INT(tfd_tensor_dim(t, 3), -1);
  CHECK_INT((uintptr_t)tfd_tensor_data(t) % TFD_TENSOR_ALIGNMENT, 0);
  tfd_tensor_unref(t);
  tfd_tensor *s = NULL;
  tfd_tensor_new(NULL, TFD_INT64, NULL, 0, &s, st);
  CHECK_INT(tfd_tensor_numel(s), 1);
  tfd_tensor_unref(s);
  int64_t empty[] = {0, 5};
  tfd_tensor *e = NULL;
  tfd_tensor_new(NULL, TFD_INT32, empty, 2, &e, st);
  CHECK_INT(tfd_tensor_numel(e), 0);
  tfd_tensor_unref(e);
  tfd_status_free(st);
}

static void test_tensor_errors(void) {
  tfd_status *st = tfd_status_new();
  int64_t neg[] = {2, -1};
  CHECK(tfd_tensor_new(NULL, TFD_FLOAT32, neg, 2, &(tfd_tensor *){NULL}, st) != TFD_OK);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "dimension 1 is negative");
  int64_t dims[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  CHECK(tfd_tensor_new(NULL, TFD_FLOAT32, dims, 9, &(tfd_tensor *){NULL}, st) != TFD_OK);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "rank 9");
  CHECK(tfd_tensor_new(NULL, (tfd_dtype)42, dims, 1, &(tfd_tensor *){NULL}, st) != TFD_OK);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "invalid dtype 42");
  int64_t huge[] = {INT64_MAX / 2, 16};
  CHECK(tfd_tensor_new(NULL, TFD_FLOAT32, huge, 2, &(tfd_tensor *){NULL}, st) != TFD_OK);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "too large");
  float data[3] = {1, 2, 3};
  int64_t three[] = {3};
  CHECK(tfd_tensor_from_bytes(NULL, TFD_FLOAT32, three, 1, data, 8, &(tfd_tensor *){NULL}, st) != TFD_OK);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "8 bytes given");
  tfd_status_free(st);
}

static void test_tensor_views_share_buffer(void) {
  int64_t dims[] = {2, 3};
  int32_t data[] = {1, 2, 3, 4, 5, 6};
  tfd_tensor *t = NULL;
  tfd_tensor_from_bytes(NULL, TFD_INT32, dims, 2, data, sizeof data, &t, NULL);
  tfd_status *st = tfd_status_new();
  tfd_tensor *row = NULL;
  tfd_tensor_slice(t, 1, &row, st);
  CHECK_INT(tfd_tensor_ndims(row), 1);
  CHECK_INT(tfd_tensor_dim(row, 0), 3);
  CHECK_INT(((int32_t *)tfd_tensor_data(row))[0], 4);
  CHECK_INT(tfd_tensor_buffer_refcount(t), 2);
  ((int32_t *)tfd_tensor_data(row))[2] = 60;
  tfd_tensor_unref(t); /* the view keeps the buffer alive */
  CHECK_INT(((int32_t *)tfd_tensor_data(row))[2], 60);
  CHECK(tfd_tensor_slice(row, 3, &(tfd_tensor *){NULL}, st) != TFD_OK);
  CHECK_STATUS(st, TFD_OUT_OF_RANGE, "index 3 is out of range");
  tfd_tensor *x = NULL;
  tfd_tensor_slice(row, 0, &x, st);
  CHECK(tfd_tensor_slice(x, 0, &(tfd_tensor *){NULL}, st) != TFD_OK);
  CHECK_STATUS(st, TFD_OUT_OF_RANGE, "scalar");
  tfd_tensor_unref(x);
  tfd_tensor_unref(row);
  tfd_status_free(st);
}

static void test_bool_bytes_normalised(void) {
  unsigned char raw[] = {0, 7, 1, 255};
  int64_t dims[] = {4};
  tfd_tensor *t = NULL;
  tfd_tensor_from_bytes(NULL, TFD_BOOL, dims, 1, raw, 4, &t, NULL);
  const unsigned char *p = tfd_tensor_const_data(t);
  CHECK(p[0] == 0 && p[1] == 1 && p[2] == 1 && p[3] == 1);
  tfd_tensor_unref(t);
}

static void test_allocator_stats_and_limit(void) {
  tfd_status *st = tfd_status_new();
  tfd_allocator *a = tfd_cpu_allocator_new("test_cpu", 1000);
  CHECK_STR(tfd_allocator_name(a), "test_cpu");
  int64_t d600[] = {150}, d300[] = {75};
  tfd_tensor *t1 = NULL;
  tfd_tensor_new(a, TFD_FLOAT32, d600, 1, &t1, st); /* 600 bytes */
  tfd_tensor *t2 = NULL;
  tfd_tensor_new(a, TFD_FLOAT32, d300, 1, &t2, st); /* 300 bytes */
  CHECK(t1 && t2);
  CHECK_INT((uintptr_t)tfd_tensor_data(t2) % 64, 0);
  tfd_allocator_stats s;
  tfd_allocator_get_stats(a, &s);
  CHECK_INT(s.bytes_in_use, 900);
  CHECK_INT(s.num_allocs, 2);
  CHECK_INT(s.largest_alloc_size, 600);
  CHECK_INT(s.bytes_limit, 1000);
  tfd_tensor *t3 = NULL;
  tfd_tensor_new(a, TFD_FLOAT32, d300, 1, &t3, st);
  CHECK(t3 == NULL);
  CHECK_STATUS(st, TFD_RESOURCE_EXHAUSTED, "OOM when allocating 300 bytes on allocator 'test_cpu'");
  tfd_tensor_unref(t1);
  tfd_allocator_get_stats(a, &s);
  CHECK_INT(s.bytes_in_use, 300);
  CHECK_INT(s.peak_bytes_in_use, 900);
  CHECK_INT(s.num_refused, 1);
  tfd_tensor_new(a, TFD_FLOAT32, d300, 1, &t3, st);
  CHECK(t3 != NULL);
  /* Freed blocks are cached by size and handed back for the same size. */
  CHECK_INT(s.bytes_cached, 600);
  tfd_allocator_get_stats(a, &s);
  tfd_tensor *again = NULL;
  tfd_tensor_new(a, TFD_FLOAT32, d300, 1, &again, st);
  tfd_allocator_get_stats(a, &s);
  CHECK_INT(s.bytes_cached, 600); /* 300-byte request: the 600-byte block stays */
  tfd_tensor_unref(again);
  tfd_allocator_trim(a);
  tfd_allocator_get_stats(a, &s);
  CHECK_INT(s.bytes_cached, 0);
  tfd_allocator_unref(a); /* tensors keep the allocator alive */
  tfd_tensor_unref(t2);
  tfd_tensor_unref(t3);
  tfd_status_free(st);
}

static void test_allocator_alignment_checked(void) {
  tfd_status *st = tfd_status_new();
  tfd_allocator *a = tfd_cpu_allocator_new("x", 0);
  CHECK(tfd_allocator_allocate(a, 24, 10, st) == NULL);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "alignment 24");
  void *p = tfd_allocator_allocate(a, 256, 0, st);
  CHECK(p != NULL && (uintptr_t)p % 256 == 0);
  tfd_allocator_deallocate(a, p, 0);
  tfd_allocator_unref(a);
  tfd_status_free(st);
}


/* ---- thread caches: blocks a thread frees stay with it until it exits or the allocator goes ---- */
typedef struct churn {
  tfd_allocator *a;
  tfd_tensor *kept; /* one tensor left alive for the main thread to free */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int phase; /* 1: the worker has churned; 2: main let the allocator go; 3: the worker has used the new one */
  tfd_allocator *next; /* a second allocator, made after the first is gone */
  int64_t next_cached;
} churn;

static void churn_once(tfd_allocator *a, int n, tfd_tensor **kept) {
  int64_t dims[] = {3}; /* 12 bytes: a small block */
  for (int i = 0; i < n; i++) {
    tfd_tensor *t = NULL;
    tfd_tensor_new(a, TFD_FLOAT32, dims, 1, &t, NULL);
    CHECK(t != NULL);
    if (kept && i == 0) *kept = t;
    else tfd_tensor_unref(t);
  }
}

static void *churn_and_exit(void *p) {
  churn *c = p;
  churn_once(c->a, 100, &c->kept);
  return NULL;
}

static void test_allocator_thread_caches_exit(void) {
  tfd_allocator *a = tfd_cpu_allocator_new("tc", 0);
  churn c[4];
  pthread_t th[4];
  for (int i = 0; i < 4; i++) {
    c[i] = (churn){.a = a};
    pthread_create(&th[i], NULL, churn_and_exit, &c[i]);
  }
  for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
  tfd_allocator_stats s;
  tfd_allocator_get_stats(a, &s);
  CHECK_INT(s.num_allocs, 400);
  CHECK_INT(s.bytes_in_use, 4 * 12);
  CHECK_INT(s.peak_bytes_in_use >= 4 * 12 && s.peak_bytes_in_use <= 8 * 12, 1);
  CHECK_INT(s.largest_alloc_size, 12);
  CHECK_INT(s.bytes_cached, 0); /* what the workers cached went with them */
  churn_once(a, 10, NULL);      /* this thread's own cache counts */
  tfd_allocator_get_stats(a, &s);
  CHECK_INT(s.num_allocs, 410);
  CHECK_INT(s.bytes_cached, 12);
  tfd_allocator_unref(a); /* the kept tensors keep it alive */
  for (int i = 0; i < 4; i++) {
    CHECK_INT(((uintptr_t)tfd_tensor_data(c[i].kept)) % 64, 0);
    tfd_tensor_unref(c[i].kept); /* the last one frees the allocator and every cache */
  }
}

static void wait_phase(churn *c, int phase) {
  pthread_mutex_lock(&c->mu);
  while (c->phase < phase) pthread_cond_wait(&c->cv, &c->mu);
  pthread_mutex_unlock(&c->mu);
}

static void set_phase(churn *c, int phase) {
  pthread_mutex_lock(&c->mu);
  c->phase = phase;
  pthread_cond_broadcast(&c->cv);
  pthread_mutex_unlock(&c->mu);
}

static void *churn_and_stay(void *p) {
  churn *c = p;
  churn_once(c->a, 50, NULL);
  set_phase(c, 1);
  wait_phase(c, 2);
  /* The first allocator is gone (its blocks in this thread's cache with it); the next may sit at its address. */
  churn_once(c->next, 5, NULL);
  tfd_allocator_stats s;
  tfd_allocator_get_stats(c->next, &s);
  c->next_cached = s.bytes_cached;
  set_phase(c, 3);
  return NULL;
}

static void test_allocator_destroyed_under_live_thread_caches(void) {
  churn c = {.a = tfd_cpu_allocator_new("first", 0)};
  pthread_mutex_init(&c.mu, NULL);
  pthread_cond_init(&c.cv, NULL);
  pthread_t th;
  pthread_create(&th, NULL, churn_and_stay, &c);
  wait_phase(&c, 1);
  tfd_allocator_stats s;
  tfd_allocator_get_stats(c.a, &s);
  CHECK_INT(s.bytes_cached, 12); /* in the worker's cache */
  CHECK_INT(s.num_allocs, 50);
  tfd_allocator_unref(c.a); /* frees the worker's cached block */
  c.next = tfd_cpu_allocator_new("second", 0);
  set_phase(&c, 2);
  wait_phase(&c, 3);
  CHECK_INT(c.next_cached, 12);
  pthread_join(th, NULL);
  tfd_allocator_get_stats(c.next, &s);
  CHECK_INT(s.bytes_cached, 0);
  CHECK_INT(s.num_allocs, 5);
  tfd_allocator_unref(c.next);
  pthread_mutex_destroy(&c.mu);
  pthread_cond_destroy(&c.cv);
}

static void test_allocator_more_allocators_than_thread_slots(void) {
  enum { N = 12 };
  tfd_allocator *a[N];
  for (int i = 0; i < N; i++) a[i] = tfd_cpu_allocator_new("many", 10000);
  int64_t small[] = {5}, big[] = {3000}; /* 20 bytes; 12000 bytes: over the limit */
  tfd_tensor *held[N];
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < N; i++) {
      tfd_tensor_new(a[i], TFD_FLOAT32, small, 1, &held[i], NULL);
      CHECK(held[i] != NULL);
    }
    for (int i = 0; i < N; i++) tfd_tensor_unref(held[i]);
  }
  tfd_status *st = tfd_status_new();
  for (int i = 0; i < N; i++) {
    CHECK(tfd_tensor_new(a[i], TFD_FLOAT32, big, 1, &(tfd_tensor *){NULL}, st) != TFD_OK);
    CHECK_STATUS(st, TFD_RESOURCE_EXHAUSTED, "OOM when allocating 12000 bytes");
    tfd_allocator_stats s;
    tfd_allocator_get_stats(a[i], &s);
    CHECK_INT(s.num_allocs, 3);
    CHECK_INT(s.bytes_in_use, 0);
    CHECK_INT(s.peak_bytes_in_use, 20);
    CHECK_INT(s.bytes_cached, 20);
    CHECK_INT(s.num_refused, 1);
    tfd_allocator_trim(a[i]);
    tfd_allocator_get_stats(a[i], &s);
    CHECK_INT(s.bytes_cached, 0);
    tfd_allocator_unref(a[i]);
  }
  tfd_status_free(st);
}

/* A variant whose destruction is counted. */
typedef struct counted {
  tfd_variant base;
  int *destroyed;
} counted;

static void counted_destroy(tfd_variant *v) {
  counted *c = (counted *)v;
  (*c->destroyed)++;
  free(c);
}

static const tfd_variant_ops counted_ops = {"counted", counted_destroy};

static tfd_variant *counted_new(int *destroyed) {
  counted *c = calloc(1, sizeof *c);
  tfd_variant_init(&c->base, &counted_ops);
  c->destroyed = destroyed;
  return &c->base;
}

/* Variant tensors hold one reference per element, dropped with their buffer (views included), are
 * zeroed when made, live on the host only and refuse bytes and in-place writes. */
static void test_variant_tensors(void) {
  tfd_status *st = tfd_status_new();
  CHECK_STR(tfd_dtype_name(TFD_VARIANT), "variant");
  CHECK_INT(tfd_dtype_from_name("DT_VARIANT"), TFD_VARIANT);
  CHECK_INT(tfd_dtype_size(TFD_VARIANT), sizeof(void *));
  int destroyed = 0;
  int64_t two = 2;
  tfd_allocator *cpu = tfd_cpu_allocator_new("variants", 0);
  for (int a = 0; a < 2; a++) {
    tfd_tensor *t = NULL;
    tfd_tensor_new(a ? cpu : NULL, TFD_VARIANT, &two, 1, &t, st);
    CHECK(t && tfd_tensor_variant_at(t, 0) == NULL && tfd_tensor_variant_at(t, 1) == NULL);
    tfd_variant *v = counted_new(&destroyed);
    tfd_tensor_set_variant_at(t, 0, tfd_variant_ref(v));
    tfd_tensor_set_variant_at(t, 1, v);
    CHECK(!tfd_variant_is_unique(v));
    tfd_tensor *view = NULL;
    tfd_tensor_slice(t, 1, &view, st);
    tfd_tensor_unref(t);
    CHECK_INT(destroyed, a); /* the view keeps the buffer, so the object */
    CHECK(tfd_tensor_variant_at(view, 0) == v);
    tfd_tensor_unref(view);
    CHECK_INT(destroyed, a + 1);
  }
  tfd_tensor *t = NULL;
  tfd_tensor_new(NULL, TFD_VARIANT, NULL, 0, &t, st);
  tfd_tensor_set_variant_at(t, 0, counted_new(&destroyed));
  tfd_tensor_set_variant_at(t, 0, counted_new(&destroyed)); /* replacing drops the old one */
  CHECK_INT(destroyed, 3);
  char bytes[8] = {0};
  CHECK(tfd_tensor_from_bytes(NULL, TFD_VARIANT, NULL, 0, bytes, sizeof bytes, &(tfd_tensor *){NULL}, st) != TFD_OK);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "variant tensors cannot be made from bytes");
  CHECK_INT(tfd_tensor_copy_from_bytes(t, bytes, sizeof bytes, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "variant tensors cannot be written in place");
  CHECK_INT(tfd_tensor_fill(t, bytes, st), TFD_INVALID_ARGUMENT);
  tfd_status_reset(st);
  tfd_tensor_unref(t);
  CHECK_INT(destroyed, 4);
  tfd_allocator_unref(cpu);
  tfd_status_free(st);
}

/* String tensors through the C API: elements set and read with their lengths (zeros kept), shared by
 * copy_from, refused as bytes, and written only by the holder of the sole reference. */
static void test_string_tensors(void) {
  tfd_status *st = tfd_status_new();
  int64_t dims[] = {3};
  tfd_tensor *t = NULL;
  tfd_tensor_new(NULL, TFD_STRING, dims, 1, &t, st);
  CHECK(t != NULL);
  size_t len = 99;
  CHECK_STR(tfd_tensor_string_at(t, 1, &len), "");
  CHECK_INT(len, 0);
  CHECK_INT(tfd_tensor_set_string(t, 0, "a\0b", 3, st), TFD_OK);
  CHECK_INT(tfd_tensor_set_string(t, 2, "hello", 5, st), TFD_OK);
  CHECK_INT(tfd_tensor_set_string(t, 2, "bye", 3, st), TFD_OK); /* replacing frees the old string */
  const char *s = tfd_tensor_string_at(t, 0, &len);
  CHECK_INT(len, 3);
  CHECK(memcmp(s, "a\0b", 4) == 0); /* NUL after the bytes */
  CHECK_STR(tfd_tensor_string_at(t, 2, NULL), "bye");
  CHECK_INT(tfd_tensor_string_bytes(t), 6);
  CHECK(tfd_tensor_string_at(t, 3, &len) == NULL);
  CHECK_INT(len, 0);
  CHECK(tfd_tensor_string_at(t, -1, NULL) == NULL);
  CHECK_INT(tfd_tensor_set_string(t, 3, "x", 1, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "tfd_tensor_set_string: element 3 is outside [0, 3)");
  CHECK_INT(tfd_tensor_set_string(t, 0, NULL, 2, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "bytes is NULL but len is 2");
  /* copy_from shares the strings: the copy outlives the source */
  tfd_tensor *u = NULL;
  tfd_tensor_new(NULL, TFD_STRING, dims, 1, &u, st);
  CHECK_INT(tfd_tensor_set_string(u, 1, "old", 3, st), TFD_OK);
  CHECK_INT(tfd_tensor_copy_from(u, t, st), TFD_OK);
  tfd_tensor *shared = tfd_tensor_ref(t);
  CHECK_INT(tfd_tensor_set_string(t, 0, "x", 1, st), TFD_FAILED_PRECONDITION);
  CHECK_STATUS(st, TFD_FAILED_PRECONDITION, "cannot be written in place");
  tfd_tensor_unref(shared);
  tfd_tensor_unref(t);
  CHECK_STR(tfd_tensor_string_at(u, 2, NULL), "bye");
  CHECK_INT(tfd_tensor_string_bytes(u), 6);
  /* bytes are no way in or out */
  char bytes[24] = {0};
  CHECK(tfd_tensor_from_bytes(NULL, TFD_STRING, dims, 1, bytes, sizeof bytes, &(tfd_tensor *){NULL}, st) != TFD_OK);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "string tensors cannot be made from bytes");
  CHECK_INT(tfd_tensor_copy_from_bytes(u, bytes, sizeof bytes, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "string tensors cannot be written from bytes");
  CHECK_INT(tfd_tensor_fill(u, bytes, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "string tensors cannot be written from bytes");
  int64_t one[] = {1};
  tfd_tensor *f = NULL;
  tfd_tensor_new(NULL, TFD_FLOAT32, one, 1, &f, st);
  CHECK_INT(tfd_tensor_set_string(f, 0, "x", 1, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "the tensor is float32, not string");
  CHECK(tfd_tensor_string_at(f, 0, NULL) == NULL);
  CHECK_INT(tfd_tensor_string_bytes(f), 0);
  tfd_tensor_unref(f);
  /* a view shares the elements */
  tfd_tensor *v = NULL;
  tfd_tensor_slice(u, 2, &v, st);
  CHECK_STR(tfd_tensor_string_at(v, 0, NULL), "bye");
  tfd_tensor_unref(u);
  CHECK_STR(tfd_tensor_string_at(v, 0, NULL), "bye");
  tfd_tensor_unref(v);
  tfd_status_free(st);
}

static const tfd_test tests[] = {
    {"string tensors", test_string_tensors},
    {"dtypes", test_dtypes},
    {"variant tensors", test_variant_tensors},
    {"tensor shape and alignment", test_tensor_shape_and_alignment},
    {"tensor errors", test_tensor_errors},
    {"tensor views share the buffer", test_tensor_views_share_buffer},
    {"bool bytes normalised", test_bool_bytes_normalised},
    {"allocator stats and limit", test_allocator_stats_and_limit},
    {"allocator alignment checked", test_allocator_alignment_checked},
    {"allocator thread caches go with their threads", test_allocator_thread_caches_exit},
    {"allocator destroyed under live thread caches", test_allocator_destroyed_under_live_thread_caches},
    {"allocator: more allocators than thread slots", test_allocator_more_allocators_than_thread_slots},
};
TFD_TEST_MAIN(tests)
