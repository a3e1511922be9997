/* The GPU suite's C part (scripts/test --gpu; ctest label "gpu"): the CUDA backend on a machine
 * with a GPU. Exits 77 (ctest: skipped) with a SKIP line naming the reason when there is none.
 * Factories 210 and 70; device attributes; device memory written and read back at sizes up to
 * 256 MiB; the limit; pinned CPU memory; the event manager on a real stream for 10,000 steps. */
#include <cuda_runtime_api.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/event_mgr.h"
#include "runtime/testing/harness.h"

static tfd_backend_info info;

static void test_factories_and_attributes(void) {
  tfd_factory_registry *r = tfd_factory_registry_new();
  CHECK_INT(tfd_backend_register_factories("cuda", r, NULL), TFD_OK);
  CHECK_INT(tfd_factory_registry_priority(r, "GPU"), 210);
  CHECK_INT(tfd_factory_registry_priority(r, "CPU"), 70);
  tfd_device_list *l = tfd_device_list_new();
  CHECK_INT(tfd_factory_registry_add_devices(r, NULL, TFD_LOCAL_NAME_PREFIX, NULL, l, NULL), TFD_OK);
  CHECK_INT((int)tfd_device_list_size(l), 1 + info.num_devices);
  uint64_t seen[65] = {0};
  for (size_t i = 0; i < tfd_device_list_size(l) && i < 65; i++) {
    tfd_device_attributes a;
    tfd_device_get_attributes(tfd_device_list_get(l, i), &a);
    for (size_t k = 0; k < i; k++) CHECK(seen[k] != a.incarnation);
    seen[i] = a.incarnation;
    if (i == 0) continue;
    char want[64];
    snprintf(want, sizeof want, "/device:GPU:%d", (int)i - 1);
    CHECK_CONTAINS(a.name, want);
    CHECK_STR(a.device_type, "GPU");
    CHECK_CONTAINS(a.physical_device_desc, "pci bus id: ");
    CHECK_CONTAINS(a.physical_device_desc, "compute capability: ");
    CHECK(a.memory_limit > 0 && a.bus_id >= 1);
  }
  /* the GPU-compatible CPU device's memory is pinned */
  tfd_allocator *host = tfd_device_get_allocator(tfd_device_list_get(l, 0));
  void *p = tfd_allocator_allocate(host, 64, 1 << 20, NULL);
  struct cudaPointerAttributes pa;
  CHECK(p && cudaPointerGetAttributes(&pa, p) == cudaSuccess && pa.type == cudaMemoryTypeHost);
  tfd_allocator_deallocate(host, p, 1 << 20);
  tfd_device_list_free(l);
  tfd_session_options *o = tfd_session_options_new();
  tfd_status *st = tfd_status_new();
  tfd_session_options_set_visible_devices(o, "0,0", NULL);
  l = tfd_device_list_new();
  CHECK_INT(tfd_factory_registry_add_devices(r, o, TFD_LOCAL_NAME_PREFIX, NULL, l, st), TFD_INVALID_ARGUMENT);
  CHECK_CONTAINS(tfd_status_message(st), "visible_device_list contained a duplicate entry: 0,0");
  char bad[16];
  snprintf(bad, sizeof bad, "%d", info.num_devices);
  tfd_session_options_set_visible_devices(o, bad, NULL);
  CHECK_INT(tfd_factory_registry_add_devices(r, o, TFD_LOCAL_NAME_PREFIX, NULL, l, st), TFD_INVALID_ARGUMENT);
  CHECK_CONTAINS(tfd_status_message(st), "listed an invalid Device id");
  tfd_device_list_free(l);
  tfd_status_free(st);
  tfd_session_options_free(o);
  tfd_factory_registry_free(r);
}

static void test_device_memory(void) {
  tfd_factory_registry *r = tfd_factory_registry_new();
  tfd_backend_register_factories("cuda", r, NULL);
  tfd_session_options *o = tfd_session_options_new();
  tfd_session_options_set_device_count(o, "GPU", 1, NULL);
  tfd_device_list *l = tfd_device_list_new();
  CHECK_INT(tfd_factory_registry_add_devices(r, o, TFD_LOCAL_NAME_PREFIX, NULL, l, NULL), TFD_OK);
  tfd_device *gpu = tfd_device_list_get(l, 1);
  tfd_allocator *a = tfd_device_get_allocator(gpu);
  size_t sizes[] = {0, 1, 255, 4096, 1 << 20, (size_t)256 << 20};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    size_t n = sizes[i];
    void *d = tfd_allocator_allocate(a, 256, n, NULL);
    CHECK(d != NULL);
    if (!d || n == 0) {
      if (d) tfd_allocator_deallocate(a, d, n);
      continue;
    }
    unsigned char *h = malloc(n), *back = malloc(n);
    for (size_t k = 0; k < n; k++) h[k] = (unsigned char)(k * 131 + i);
    CHECK(cudaMemcpy(d, h, n, cudaMemcpyHostToDevice) == cudaSuccess);
    CHECK(cudaMemcpy(back, d, n, cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(memcmp(h, back, n) == 0);
    free(h);
    free(back);
    tfd_allocator_stats s;
    tfd_allocator_get_stats(a, &s);
    CHECK(s.bytes_in_use >= (int64_t)n);
    tfd_allocator_deallocate(a, d, n);
  }
  tfd_allocator_stats s;
  tfd_allocator_get_stats(a, &s);
  CHECK_INT((int)s.bytes_in_use, 0);
  tfd_status *st = tfd_status_new();
  CHECK(tfd_allocator_allocate(a, 256, (size_t)s.bytes_limit + 1, st) == NULL);
  CHECK_INT(tfd_status_code(st), TFD_RESOURCE_EXHAUSTED);
  CHECK_CONTAINS(tfd_status_message(st), "GPU_0_bfc");
  tfd_status_free(st);
  tfd_device_list_free(l);
  tfd_session_options_free(o);
  tfd_factory_registry_free(r);
}

/* The event manager on a real stream: each step queues a memset and a callback releasing a reference. */
static void *ev_create(void *ctx) {
  (void)ctx;
  cudaEvent_t e;
  return cudaEventCreateWithFlags(&e, cudaEventDisableTiming) == cudaSuccess ? (void *)e : NULL;
}
static tfd_code ev_record(void *ctx, void *e, void *s, tfd_status *st) {
  (void)ctx;
  return cudaEventRecord((cudaEvent_t)e, (cudaStream_t)s) == cudaSuccess ? TFD_OK
                                                                          : tfd_status_setf(st, TFD_INTERNAL, "record");
}
static int ev_query(void *ctx, void *e) {
  (void)ctx;
  cudaError_t err = cudaEventQuery((cudaEvent_t)e);
  return err == cudaSuccess ? 1 : err == cudaErrorNotReady ? 0 : -1;
}
static void ev_destroy(void *ctx, void *e) {
  (void)ctx;
  cudaEventDestroy((cudaEvent_t)e);
}
static void release(void *arg) { atomic_fetch_sub((atomic_int *)arg, 1); }

static void test_event_manager_on_a_stream(void) {
  cudaStream_t s;
  CHECK(cudaSetDevice(0) == cudaSuccess && cudaStreamCreate(&s) == cudaSuccess);
  void *d = NULL;
  CHECK(cudaMalloc(&d, 1 << 16) == cudaSuccess);
  tfd_event_provider p = {NULL, ev_create, ev_record, ev_query, ev_destroy};
  tfd_event_mgr *m = tfd_event_mgr_new(&p, 10, NULL);
  atomic_int live = 0;
  for (int i = 0; i < 10000; i++) {
    cudaMemsetAsync(d, i & 0xff, 1 << 16, s);
    atomic_fetch_add(&live, 1);
    CHECK_INT(tfd_event_mgr_then_execute(m, s, release, &live, NULL), TFD_OK);
  }
  tfd_event_mgr_free(m);
  CHECK_INT(atomic_load(&live), 0);
  cudaFree(d);
  cudaStreamDestroy(s);
}

static const char *no_gpu(void) {
  static char why[600];
  tfd_backend_load("cuda", &info, NULL);
  if (info.loaded && info.num_devices > 0) return NULL;
  snprintf(why, sizeof why, "GPU suite: no GPU here (%s)", info.why ? info.why : "backend not loaded");
  return why;
}

static const tfd_test tests[] = {
    {"factories and attributes", test_factories_and_attributes},
    {"device memory", test_device_memory},
    {"event manager on a stream", test_event_manager_on_a_stream},
};

TFD_TEST_MAIN_UNLESS(tests, no_gpu)
