/* Unit tests for devices: CPU device, attributes, incarnations, renaming, resources, op segment, compute. */
#include <stdlib.h>

#include "runtime/device/device_internal.h"
#include "runtime/testing/harness.h"

static tfd_device *cpu(const char *name, int threads, bool own) {
  tfd_cpu_device_config cfg = {.name = name, .num_threads = threads, .own_threadpool = own};
  tfd_status *st = tfd_status_new();
  tfd_device *d = NULL;
  tfd_cpu_device_new(&cfg, &d, st);
  CHECK_STR(tfd_status_message(st), "");
  tfd_status_free(st);
  return d;
}

static void test_cpu_device_attributes(void) {
  tfd_device *d = cpu("/job:localhost/replica:0/task:0/cpu:1", 2, true);
  tfd_device_attributes a;
  tfd_device_get_attributes(d, &a);
  CHECK_STR(a.name, "/job:localhost/replica:0/task:0/device:CPU:1"); /* stored in full spelling */
  CHECK_STR(a.device_type, "CPU");
  CHECK_INT(a.memory_limit, 256 << 20);
  CHECK_INT(a.bus_id, 0);
  CHECK(a.incarnation != 0 && a.incarnation < ((uint64_t)1 << 63));
  CHECK_CONTAINS(a.physical_device_desc, "intra-op threads: 2 (own pool)");
  CHECK_INT(tfd_device_num_threads(d), 2);
  CHECK_INT(tfd_device_parsed_name(d)->id, 1);
  CHECK_STR(tfd_resource_mgr_default_container(tfd_device_resource_manager(d)), "localhost");
  CHECK_INT(tfd_device_sync(d, NULL), TFD_OK);
  char *dbg = tfd_device_debug_string(d);
  CHECK_CONTAINS(dbg, "name: \"/job:localhost/replica:0/task:0/device:CPU:1\"\ndevice_type: \"CPU\"\n");
  CHECK_CONTAINS(dbg, "memory_limit: 268435456\nlocality {\n}\nincarnation: ");
  free(dbg);
  tfd_device_unref(d);
}

static void test_cpu_device_errors(void) {
  tfd_status *st = tfd_status_new();
  tfd_cpu_device_config cfg = {.name = "/job:a/device:CPU:0"};
  CHECK(tfd_cpu_device_new(&cfg, &(tfd_device *){NULL}, st) != TFD_OK);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "'/job:a/device:CPU:0' is not complete");
  cfg.name = "/job:a/replica:0/task:0/device:GPU:0";
  CHECK(tfd_cpu_device_new(&cfg, &(tfd_device *){NULL}, st) != TFD_OK);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "does not name a CPU device");
  cfg.name = "garbage";
  CHECK(tfd_cpu_device_new(&cfg, &(tfd_device *){NULL}, st) != TFD_OK);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "could not parse device name 'garbage'");
  cfg.name = NULL;
  CHECK(tfd_cpu_device_new(&cfg, &(tfd_device *){NULL}, st) != TFD_OK);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "needs a name");
  tfd_status_free(st);
}

static void test_memory_limit_enforced(void) {
  tfd_cpu_device_config cfg = {.name = "/job:l/replica:0/task:0/device:CPU:0", .memory_limit = 4096};
  tfd_device *d = NULL;
  tfd_cpu_device_new(&cfg, &d, NULL);
  tfd_status *st = tfd_status_new();
  int64_t dims[] = {1000};
  tfd_tensor *ok = NULL;
  tfd_tensor_new(tfd_device_get_allocator(d), TFD_FLOAT32, dims, 1, &ok, st);
  CHECK(ok != NULL);
  CHECK(tfd_tensor_new(tfd_device_get_allocator(d), TFD_FLOAT32, dims, 1, &(tfd_tensor *){NULL}, st) != TFD_OK);
  CHECK_STATUS(st, TFD_RESOURCE_EXHAUSTED, "/job:l/replica:0/task:0/device:CPU:0");
  tfd_device_unref(d); /* the tensor keeps the allocator */
  tfd_tensor_unref(ok);
  tfd_status_free(st);
}

static void test_incarnations_unique(void) {
  enum { N = 2000 };
  uint64_t *seen = malloc(N * sizeof *seen);
  for (int i = 0; i < N; i++) {
    seen[i] = tfd_new_incarnation();
    CHECK(seen[i] != 0);
  }
  int dups = 0;
  for (int i = 0; i < N; i++)
    for (int j = i + 1; j < N; j++) dups += seen[i] == seen[j];
  CHECK_INT(dups, 0);
  free(seen);
  tfd_device *a = cpu("/job:x/replica:0/task:0/device:CPU:0", 1, false);
  tfd_device *b = cpu("/job:x/replica:0/task:0/device:CPU:0", 1, false);
  tfd_device_attributes aa, ba;
  tfd_device_get_attributes(a, &aa);
  tfd_device_get_attributes(b, &ba);
  CHECK(aa.incarnation != ba.incarnation);
  tfd_device_unref(a);
  tfd_device_unref(b);
}

static void test_global_pool_shared_owned_pool_not(void) {
  tfd_device *a = cpu("/job:x/replica:0/task:0/device:CPU:0", 2, false);
  tfd_device *b = cpu("/job:x/replica:0/task:0/device:CPU:1", 5, false);
  tfd_device *c = cpu("/job:x/replica:0/task:0/device:CPU:2", 1, true);
  CHECK(tfd_device_threadpool(a) == tfd_device_threadpool(b));
  CHECK_INT(tfd_device_num_threads(b), 2); /* the first device sized the global pool */
  CHECK(tfd_device_threadpool(c) != tfd_device_threadpool(a));
  CHECK_INT(tfd_device_num_threads(c), 1);
  tfd_device_unref(a);
  tfd_device_unref(b);
  tfd_device_unref(c);
  tfd_device *d = cpu("/job:x/replica:0/task:0/device:CPU:0", 3, false);
  CHECK_INT(tfd_device_num_threads(d), 3); /* last user gone: a fresh global pool */
  tfd_device_unref(d);
}

static void test_renamed_device(void) {
  tfd_device *u = cpu("/job:localhost/replica:0/task:0/device:CPU:3", 1, true);
  tfd_status *st = tfd_status_new();
  tfd_device *r = NULL;
  tfd_renamed_device_new(u, "/job:worker/replica:2/task:5", &r, st);
  CHECK(r != NULL);
  tfd_device_attributes ua, ra;
  tfd_device_get_attributes(u, &ua);
  tfd_device_get_attributes(r, &ra);
  CHECK_STR(ra.name, "/job:worker/replica:2/task:5/device:CPU:3");
  CHECK_STR(ra.device_type, "CPU");
  CHECK_INT(ra.memory_limit, ua.memory_limit);
  CHECK(ra.incarnation == ua.incarnation);
  CHECK_STR(ra.physical_device_desc, ua.physical_device_desc);
  CHECK(tfd_device_underlying(r) == u);
  CHECK(tfd_device_underlying(u) == NULL);
  CHECK(tfd_device_get_allocator(r) == tfd_device_get_allocator(u));
  CHECK(tfd_device_resource_manager(r) == tfd_device_resource_manager(u));
  CHECK(tfd_device_threadpool(r) == tfd_device_threadpool(u));
  tfd_device_unref(u); /* the renamed device keeps it alive */
  CHECK_INT(tfd_device_sync(r, st), TFD_OK);
  CHECK(tfd_renamed_device_new(r, "/job:w", &(tfd_device *){NULL}, st) != TFD_OK);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "must name a job, replica and task");
  CHECK(tfd_renamed_device_new(r, "not a name", &(tfd_device *){NULL}, st) != TFD_OK);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "could not parse");
  tfd_device_unref(r);
  tfd_status_free(st);
}

static int destroyed;
static void count_destroy(void *p) {
  (void)p;
  destroyed++;
}

static void test_resource_mgr(void) {
  tfd_resource_mgr *rm = tfd_resource_mgr_new(NULL);
  tfd_status *st = tfd_status_new();
  CHECK_STR(tfd_resource_mgr_default_container(rm), "localhost");
  tfd_resource *r = NULL;
  tfd_resource_new("Queue", NULL, count_destroy, &r, st);
  CHECK_INT(tfd_resource_mgr_create(rm, "", "q", r, st), TFD_OK);
  CHECK_INT(tfd_resource_mgr_create(rm, NULL, "q", r, st), TFD_ALREADY_EXISTS);
  CHECK_STATUS(st, TFD_ALREADY_EXISTS, "localhost/q of type Queue already exists");
  CHECK_INT(tfd_resource_mgr_create(rm, "c1", "q", r, st), TFD_OK);
  CHECK_INT(tfd_resource_mgr_create(rm, "c1", "", r, st), TFD_INVALID_ARGUMENT);
  tfd_status_reset(st);
  tfd_resource_unref(r);
  CHECK_INT(destroyed, 0);
  tfd_resource *found = tfd_resource_mgr_lookup(rm, "c1", "Queue", "q", st);
  CHECK(found == r);
  tfd_resource_unref(found);
  CHECK(tfd_resource_mgr_lookup(rm, "c1", "Var", "q", st) == NULL); /* keyed by type too */
  CHECK_STATUS(st, TFD_NOT_FOUND, "resource c1/q of type Var does not exist");
  CHECK(tfd_resource_mgr_lookup(rm, "c9", "Queue", "q", st) == NULL);
  CHECK_STATUS(st, TFD_NOT_FOUND, "no such container");
  CHECK_INT(tfd_resource_mgr_num_containers(rm), 2);
  char **names = tfd_resource_mgr_container_names(rm);
  CHECK_STR(names[0], "c1");
  CHECK_STR(names[1], "localhost");
  CHECK(names[2] == NULL);
  free(names);
  CHECK_INT(tfd_resource_mgr_cleanup(rm, "c1", st), TFD_OK);
  CHECK_INT(tfd_resource_mgr_cleanup(rm, "never-made", st), TFD_OK);
  CHECK_INT(tfd_resource_mgr_num_containers(rm), 1);
  CHECK_INT(destroyed, 0); /* still in the default container */
  CHECK_INT(tfd_resource_mgr_delete(rm, NULL, "Queue", "q", st), TFD_OK);
  CHECK_INT(destroyed, 1);
  CHECK_INT(tfd_resource_mgr_delete(rm, NULL, "Queue", "q", st), TFD_NOT_FOUND);
  tfd_status_reset(st);
  int64_t dims[] = {2};
  tfd_tensor *t = NULL;
  tfd_tensor_new(NULL, TFD_INT32, dims, 1, &t, NULL);
  tfd_resource *tr = NULL;
  tfd_tensor_resource_new(t, &tr, st);
  CHECK(tfd_resource_tensor(tr) == t);
  tfd_resource_mgr_create(rm, "vars", "w", tr, st);
  tfd_resource_unref(tr);
  tfd_tensor_unref(t);
  CHECK_INT(tfd_resource_mgr_container_size(rm, "vars"), 1);
  tfd_resource_mgr_free(rm); /* frees the tensor too (ASan checks) */
  tfd_status_free(st);
}

/* A kernel that counts its runs, for compute and the op segment. */
typedef struct count_kernel {
  tfd_op_kernel base;
  int *runs;
  int *destroyed;
} count_kernel;

static void ck_compute(tfd_op_kernel *k, tfd_kernel_context *ctx) {
  (void)ctx;
  (*((count_kernel *)k)->runs)++;
}
static void ck_destroy(tfd_op_kernel *k) {
  (*((count_kernel *)k)->destroyed)++;
  free(k);
}
static const tfd_op_kernel_ops ck_ops = {ck_compute, NULL, ck_destroy};

typedef struct ck_args {
  int runs, destroyed, created;
} ck_args;

static tfd_op_kernel *make_ck(void *arg, tfd_status *status) {
  (void)status;
  ck_args *a = arg;
  count_kernel *k = calloc(1, sizeof *k);
  k->base.ops = &ck_ops;
  k->runs = &a->runs;
  k->destroyed = &a->destroyed;
  a->created++;
  return &k->base;
}

static void done_cb(void *arg) { (*(int *)arg)++; }

static void test_compute_and_op_segment(void) {
  tfd_device *d = cpu("/job:x/replica:0/task:0/device:CPU:0", 1, true);
  tfd_device *r = NULL;
  tfd_renamed_device_new(d, "/job:y/replica:0/task:0", &r, NULL);
  tfd_op_segment *seg = tfd_device_op_segment(d);
  tfd_status *st = tfd_status_new();
  ck_args a = {0};
  tfd_op_kernel *k = NULL;
  CHECK_INT(tfd_op_segment_find_or_create(seg, "s1", "n", make_ck, &a, &k, st), TFD_NOT_FOUND);
  CHECK_STATUS(st, TFD_NOT_FOUND, "session 's1'");
  tfd_op_segment_add_hold(seg, "s1", st);
  tfd_op_segment_add_hold(seg, "s1", st);
  CHECK_INT(tfd_op_segment_find_or_create(seg, "s1", "n", make_ck, &a, &k, st), TFD_OK);
  tfd_op_kernel *again = NULL;
  tfd_op_segment_find_or_create(seg, "s1", "n", make_ck, &a, &again, st);
  CHECK(k == again);
  CHECK_INT(a.created, 1);
  tfd_device_compute(d, k, NULL);
  tfd_device_compute(r, k, NULL); /* renamed forwards */
  int done = 0;
  tfd_device_compute_async(d, k, NULL, done_cb, &done);
  CHECK_INT(a.runs, 3);
  CHECK_INT(done, 1);
  CHECK_INT(tfd_op_segment_num_kernels(seg, "s1"), 1);
  tfd_op_segment_remove_hold(seg, "s1");
  CHECK_INT(a.destroyed, 0);
  tfd_op_segment_remove_hold(seg, "s1");
  CHECK_INT(a.destroyed, 1);
  CHECK_INT(tfd_op_segment_num_kernels(seg, "s1"), 0);
  tfd_op_segment_add_hold(seg, "s2", st);
  tfd_op_segment_find_or_create(seg, "s2", "m", make_ck, &a, &k, st);
  tfd_device_unref(r);
  tfd_device_unref(d); /* device teardown destroys held kernels */
  CHECK_INT(a.destroyed, 2);
  tfd_status_free(st);
}

static const tfd_test tests[] = {
    {"CPU device attributes", test_cpu_device_attributes},
    {"CPU device errors", test_cpu_device_errors},
    {"memory limit enforced", test_memory_limit_enforced},
    {"incarnations unique and non-zero", test_incarnations_unique},
    {"global pool shared, owned pool not", test_global_pool_shared_owned_pool_not},
    {"renamed device", test_renamed_device},
    {"resource manager", test_resource_mgr},
    {"compute and op segment", test_compute_and_op_segment},
};
TFD_TEST_MAIN(tests)
