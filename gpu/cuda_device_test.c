/* The GPU suite's C part (scripts/test --gpu; ctest label "gpu"): the CUDA backend on a machine
 * with a GPU. Exits 77 (ctest: skipped) with a SKIP line naming the reason when there is none.
 * Factories 210 and 70; device attributes; device memory written and read back at sizes up to
 * 256 MiB; the limit; pinned CPU memory; the event manager on a real stream for 10,000 steps;
 * the device-memory copies (tfd_tensor_copy_to) round-tripping every dtype from 0 bytes to 64 MiB
 * with pinned and pageable host tensors; device memory outliving its device; a CPU -> GPU -> CPU
 * session graph against the CPU-only run, with and without sync_every_op; 10,000 such steps with
 * no growth in host memory in use; a random workload on the GPU's BFC allocator. */
#include <cuda_runtime_api.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu/bfc_allocator.h"
#include "gpu/event_mgr.h"
#include "runtime/core/tensor_internal.h"
#include "runtime/device/device_internal.h"
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

/* ---- helpers: one GPU device (with the GPU-compatible CPU device before it) ---- */
typedef struct gpu_devices {
  tfd_factory_registry *r;
  tfd_device_list *l;
  tfd_device *cpu, *gpu;
} gpu_devices;

static bool open_gpu(gpu_devices *g, tfd_session_options *o) {
  memset(g, 0, sizeof *g);
  g->r = tfd_factory_registry_new();
  CHECK_INT(tfd_backend_register_factories("cuda", g->r, NULL), TFD_OK);
  g->l = tfd_device_list_new();
  tfd_session_options *own = o ? NULL : tfd_session_options_new();
  if (own) tfd_session_options_set_device_count(own, "GPU", 1, NULL);
  CHECK_INT(tfd_factory_registry_add_devices(g->r, o ? o : own, TFD_LOCAL_NAME_PREFIX, NULL, g->l, NULL), TFD_OK);
  tfd_session_options_free(own);
  if (tfd_device_list_size(g->l) < 2) return false;
  g->cpu = tfd_device_list_get(g->l, 0);
  g->gpu = tfd_device_list_get(g->l, 1);
  return true;
}

static void close_gpu(gpu_devices *g) {
  if (g->l) tfd_device_list_free(g->l);
  if (g->r) tfd_factory_registry_free(g->r);
}

static tfd_allocator *on_host_allocator(tfd_device *d) {
  return d->ops->get_allocator(d, (tfd_alloc_attrs){.on_host = true});
}

static int64_t in_use(tfd_allocator *a) {
  tfd_allocator_stats s;
  tfd_allocator_get_stats(a, &s);
  return s.bytes_in_use;
}

/* Host references are released by the event manager's thread once a stream passes them: wait (up
 * to 5 s) for `a` to come back down to `want` bytes in use. */
static int64_t settle(tfd_allocator *a, int64_t want) {
  for (int i = 0; i < 5000 && in_use(a) > want; i++) nanosleep(&(struct timespec){0, 1000000}, NULL);
  return in_use(a);
}

/* The bytes in use once no release is pending: unchanged over 20 ms (up to 5 s). */
static int64_t quiet(tfd_allocator *a) {
  int64_t prev = in_use(a);
  for (int i = 0; i < 250; i++) {
    nanosleep(&(struct timespec){0, 20000000}, NULL);
    int64_t now = in_use(a);
    if (now == prev) break;
    prev = now;
  }
  return prev;
}

static void fill(unsigned char *p, size_t n, tfd_dtype dt, unsigned seed) {
  for (size_t k = 0; k < n; k++) p[k] = dt == TFD_BOOL ? (unsigned char)((k * 7 + seed) & 1) : (unsigned char)(k * 131 + seed);
}

/* ---- the device-memory copies ---- */
static void test_copies_round_trip(void) {
  gpu_devices g;
  if (!open_gpu(&g, NULL)) goto out;
  tfd_allocator *dev = tfd_device_get_allocator(g.gpu), *pinned = tfd_device_get_allocator(g.cpu);
  /* dev is the module's BFC allocator, made by its own copy of bfc_allocator.c: this test's copy
   * cannot tell it apart (tfd_is_bfc_allocator compares its own ops table), so the device memory is
   * checked by reading it back below. The largest copy stays under the CPU device's 256 MiB
   * (TFD_CPU_DEFAULT_MEMORY_LIMIT), which bounds its pinned memory as it does its pageable. */
  static const tfd_dtype dtypes[] = {TFD_FLOAT32, TFD_FLOAT64, TFD_INT32, TFD_INT64, TFD_BOOL, TFD_UINT8, TFD_FLOAT16};
  static const size_t sizes[] = {0, 8, 4096, ((size_t)1 << 20) + 8, (size_t)64 << 20};
  int64_t pinned_before = in_use(pinned);
  tfd_status *st = tfd_status_new();
  for (size_t di = 0; di < sizeof dtypes / sizeof dtypes[0]; di++)
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
      for (int kind = 0; kind < 2; kind++) { /* 0: pinned host tensors, 1: pageable (system memory) */
        tfd_dtype dt = dtypes[di];
        size_t bytes = sizes[si];
        int64_t dims[] = {(int64_t)(bytes / tfd_dtype_size(dt))};
        tfd_allocator *host = kind == 0 ? pinned : NULL;
        unsigned seed = (unsigned)(di * 31 + si * 7 + (size_t)kind);
        unsigned char *want = malloc(bytes ? bytes : 1);
        fill(want, bytes, dt, seed);
        tfd_tensor *h = NULL;
        tfd_tensor_new(host, dt, dims, 1, &h, st);
        CHECK(h != NULL);
        if (!h) {
          free(want);
          continue;
        }
        if (bytes) memcpy(tfd_tensor_data(h), want, bytes);
        tfd_tensor *d = tfd_tensor_copy_to(h, dev, st);
        tfd_tensor_unref(h); /* the copy may be in flight: the device keeps its own reference */
        CHECK_STR(tfd_status_message(st), "");
        CHECK(d && !tfd_tensor_on_host(d));
        if (!d) {
          free(want);
          continue;
        }
        if (bytes && bytes <= ((size_t)1 << 20) + 8) { /* the bytes really are in device memory */
          unsigned char *direct = malloc(bytes);
          CHECK_INT(tfd_device_sync(g.gpu, st), TFD_OK);
          CHECK(cudaMemcpy(direct, tfd_tensor_const_data(d), bytes, cudaMemcpyDeviceToHost) == cudaSuccess);
          CHECK(memcmp(direct, want, bytes) == 0);
          free(direct);
        }
        tfd_tensor *back = tfd_tensor_copy_to(d, host, st);
        CHECK(back && tfd_tensor_on_host(back));
        if (back) {
          CHECK_INT(tfd_tensor_dtype(back), dt);
          CHECK_INT(tfd_tensor_byte_size(back), bytes);
          if (bytes && memcmp(tfd_tensor_const_data(back), want, bytes) != 0) {
            fprintf(stderr, "round trip differs: %s, %zu bytes, %s\n", tfd_dtype_name(dt), bytes,
                    kind ? "pageable" : "pinned");
            tfd_test_failed_checks++;
          }
        }
        tfd_tensor *same = tfd_tensor_copy_to(d, dev, st); /* already there: the same tensor */
        CHECK(same == d);
        tfd_tensor_unref(same);
        tfd_tensor_unref(back);
        tfd_tensor_unref(d);
        free(want);
      }
  CHECK_INT(settle(pinned, pinned_before), pinned_before);
  CHECK_INT(in_use(dev), 0);
  tfd_status_free(st);
out:
  close_gpu(&g);
}

/* Tensors keep their allocator, and so the GPU's context, alive after the device is gone. */
static void test_memory_outlives_device(void) {
  gpu_devices g;
  if (!open_gpu(&g, NULL)) {
    close_gpu(&g);
    return;
  }
  float v[256];
  for (int i = 0; i < 256; i++) v[i] = (float)i * 0.5f;
  int64_t dims[] = {256};
  tfd_tensor *h = NULL;
  tfd_tensor_from_bytes(NULL, TFD_FLOAT32, dims, 1, v, sizeof v, &h, NULL);
  tfd_tensor *d = tfd_tensor_copy_to(h, tfd_device_get_allocator(g.gpu), NULL);
  tfd_tensor_unref(h);
  CHECK(d != NULL);
  close_gpu(&g); /* the device goes; d's memory, its allocator and their context stay */
  if (!d) return;
  tfd_tensor *back = tfd_tensor_copy_to(d, NULL, NULL);
  CHECK(back && memcmp(tfd_tensor_const_data(back), v, sizeof v) == 0);
  tfd_tensor_unref(back);
  tfd_tensor_unref(d); /* the last reference: regions, streams and events go now */
}

/* ---- sessions: Const (CPU) -> Identity, Reshape (GPU) -> Square (CPU) ---- */
static tfd_node_def *node(tfd_graph_def *g, const char *name, const char *op, const char *in0, const char *in1,
                          const char *device) {
  tfd_node_def *n = tfd_graph_def_add_node(g, name, op, NULL);
  if (in0) tfd_node_def_add_input(n, in0, NULL);
  if (in1) tfd_node_def_add_input(n, in1, NULL);
  if (device) tfd_node_def_set_device(n, device, NULL);
  return n;
}

static void set_tensor(tfd_node_def *n, tfd_tensor *t) {
  tfd_attr_value v = {.type = TFD_ATTR_TENSOR, .tensor = t};
  tfd_node_def_set_attr(n, "value", &v, NULL);
  tfd_tensor_unref(t);
}

static tfd_graph_def *cpu_gpu_cpu_graph(bool pinned) {
  const char *cpu = pinned ? "/device:CPU:0" : NULL, *gpu = pinned ? "/device:GPU:0" : NULL;
  tfd_graph_def *g = tfd_graph_def_new();
  float c[6] = {1, -2, 3.5f, 4, -5, 6};
  int64_t d23[] = {2, 3}, d2[] = {2};
  int32_t shape[] = {3, 2};
  set_tensor(node(g, "c", "Const", NULL, NULL, cpu), tfd_test_tensor(TFD_FLOAT32, d23, 2, c, sizeof c, NULL));
  set_tensor(node(g, "shape", "Const", NULL, NULL, gpu),
             tfd_test_tensor(TFD_INT32, d2, 1, shape, sizeof shape, NULL));
  node(g, "id", "Identity", "c", NULL, gpu);
  node(g, "r", "Reshape", "id", "shape", gpu);
  node(g, "sq", "Square", "r", NULL, cpu);
  return g;
}

static tfd_session *open_session(tfd_graph_def *g, bool with_gpu, bool sync_every_op, tfd_status *st) {
  tfd_session_options *o = tfd_session_options_new();
  tfd_session_options_set_device_count(o, "GPU", with_gpu ? 1 : 0, NULL);
  tfd_session_options_set_gpu_sync_every_op(o, sync_every_op);
  tfd_session *s = NULL;
  tfd_session_new(o, NULL, NULL, &s, st);
  tfd_session_options_free(o);
  CHECK(s != NULL);
  if (s && tfd_session_create(s, g, st) != TFD_OK) {
    CHECK_STR(tfd_status_message(st), "");
    tfd_session_free(s);
    return NULL;
  }
  return s;
}

static bool run_step(tfd_session *s, tfd_tensor **out, tfd_status *st) {
  const char *fetches[] = {"sq", "r"};
  tfd_code code = tfd_session_run(s, NULL, NULL, NULL, 0, fetches, 2, NULL, 0, out, NULL, st);
  if (code != TFD_OK) fprintf(stderr, "run: %s\n", tfd_status_message(st));
  return code == TFD_OK;
}

static tfd_device *session_device(tfd_session *s, const char *type) {
  tfd_device_mgr *m = tfd_session_device_mgr(s);
  for (size_t i = 0; i < tfd_device_mgr_size(m); i++) {
    tfd_device_attributes a;
    tfd_device_get_attributes(tfd_device_mgr_get(m, i), &a);
    if (strcmp(a.device_type, type) == 0) return tfd_device_mgr_get(m, i);
  }
  return NULL;
}

static void check_graph_against_cpu(bool sync_every_op) {
  tfd_status *st = tfd_status_new();
  tfd_graph_def *plain = cpu_gpu_cpu_graph(false), *pinned = cpu_gpu_cpu_graph(true);
  tfd_session *ref = open_session(plain, false, false, st), *s = open_session(pinned, true, sync_every_op, st);
  tfd_tensor *want[2] = {0}, *got[2] = {0};
  if (ref && s && run_step(ref, want, st) && run_step(s, got, st)) {
    char where[TFD_DEVICE_NAME_MAX];
    CHECK_INT(tfd_session_node_device(s, "r", where, st), TFD_OK);
    CHECK_CONTAINS(where, "/device:GPU:0");
    CHECK_INT(tfd_session_node_device(s, "sq", where, st), TFD_OK);
    CHECK_CONTAINS(where, "/device:CPU:0");
    tfd_device *gpu = session_device(s, "GPU");
    CHECK(gpu && gpu->sync_every_op == sync_every_op);
    for (int i = 0; i < 2; i++) {
      CHECK(got[i] && tfd_tensor_on_host(got[i]));
      CHECK_INT(tfd_tensor_ndims(got[i]), 2);
      CHECK_INT(tfd_tensor_dim(got[i], 0), 3);
      CHECK_INT(tfd_tensor_byte_size(got[i]), tfd_tensor_byte_size(want[i]));
      CHECK(memcmp(tfd_tensor_const_data(got[i]), tfd_tensor_const_data(want[i]), tfd_tensor_byte_size(want[i])) == 0);
    }
  }
  for (int i = 0; i < 2; i++) {
    tfd_tensor_unref(want[i]);
    tfd_tensor_unref(got[i]);
  }
  if (ref) tfd_session_free(ref);
  if (s) tfd_session_free(s);
  tfd_graph_def_free(plain);
  tfd_graph_def_free(pinned);
  tfd_status_free(st);
}

static void test_session_graph(void) { check_graph_against_cpu(false); }
static void test_session_graph_sync_every_op(void) { check_graph_against_cpu(true); }

/* 10,000 steps: every host tensor a copy held is given back (the event manager releases them), so
 * host memory in use does not grow, nor does device memory. */
static void test_many_small_steps(void) {
  tfd_status *st = tfd_status_new();
  tfd_graph_def *g = cpu_gpu_cpu_graph(true);
  tfd_session *s = open_session(g, true, false, st);
  tfd_device *cpu = s ? session_device(s, "CPU") : NULL, *gpu = s ? session_device(s, "GPU") : NULL;
  CHECK(cpu && gpu);
  if (cpu && gpu) {
    tfd_allocator *host = tfd_device_get_allocator(cpu), *gpu_host = on_host_allocator(gpu),
                  *dev = tfd_device_get_allocator(gpu);
    tfd_tensor *out[2] = {0};
    bool ok = true;
    for (int i = 0; i < 100 && ok; i++) { /* warm-up: kernels made, caches filled */
      ok = run_step(s, out, st);
      tfd_tensor_unref(out[0]);
      tfd_tensor_unref(out[1]);
    }
    CHECK_INT(tfd_device_sync(gpu, st), TFD_OK);
    int64_t host0 = quiet(host), gpu_host0 = quiet(gpu_host), dev0 = in_use(dev);
    for (int i = 0; i < 10000 && ok; i++) {
      ok = run_step(s, out, st);
      if (ok && i % 1000 == 0) CHECK(((const float *)tfd_tensor_const_data(out[0]))[1] == 4.0f);
      tfd_tensor_unref(out[0]);
      tfd_tensor_unref(out[1]);
    }
    CHECK(ok);
    CHECK_INT(tfd_device_sync(gpu, st), TFD_OK);
    CHECK_INT(settle(host, host0), host0);
    CHECK_INT(settle(gpu_host, gpu_host0), gpu_host0);
    CHECK_INT(in_use(dev), dev0);
  }
  if (s) tfd_session_free(s);
  tfd_graph_def_free(g);
  tfd_status_free(st);
}

/* ---- the GPU's BFC allocator under a random workload, each block written and checked ---- */
static void *cuda_region(void *ctx, size_t bytes) {
  (void)ctx;
  void *p = NULL;
  return cudaMalloc(&p, bytes) == cudaSuccess ? p : NULL;
}
static void cuda_region_free(void *ctx, void *p, size_t bytes) {
  (void)ctx, (void)bytes;
  cudaFree(p);
}

/* 20,000 random allocations and frees on `a`, each block tagged on the device and its tag read back
 * before it is freed (no other block overlapped it). `own` says `a` came from this file's copy of
 * bfc_allocator.c, whose invariant check can then look inside it. */
static void random_workload(tfd_allocator *a, bool own) {
  enum { SLOTS = 64, STEPS = 20000 };
  struct {
    unsigned char *p;
    size_t n;
    unsigned char tag;
  } live[SLOTS] = {{0}};
  unsigned rng = 12345;
  char why[256];
  for (int step = 0; step < STEPS; step++) {
    rng = rng * 1103515245u + 12345u;
    int i = (int)((rng >> 8) % SLOTS);
    if (live[i].p) { /* its first and last bytes still hold its tag: no other block overlapped it */
      unsigned char first = 0, last = 0;
      CHECK(cudaMemcpy(&first, live[i].p, 1, cudaMemcpyDeviceToHost) == cudaSuccess);
      CHECK(cudaMemcpy(&last, live[i].p + live[i].n - 1, 1, cudaMemcpyDeviceToHost) == cudaSuccess);
      CHECK(first == live[i].tag && last == live[i].tag);
      tfd_allocator_deallocate(a, live[i].p, live[i].n);
      live[i].p = NULL;
    } else {
      rng = rng * 1103515245u + 12345u;
      size_t n = 1 + (rng >> 4) % ((rng & 1) ? 4096 : ((size_t)4 << 20));
      live[i].p = tfd_allocator_allocate(a, 256, n, NULL);
      CHECK(live[i].p != NULL && ((uintptr_t)live[i].p & 255) == 0);
      if (!live[i].p) continue;
      live[i].n = n;
      live[i].tag = (unsigned char)(step & 0xff);
      CHECK(cudaMemset(live[i].p, live[i].tag, n) == cudaSuccess);
    }
    if (own && step % 2000 == 0 && !tfd_bfc_allocator_check(a, why, sizeof why)) {
      fprintf(stderr, "BFC check: %s\n", why);
      tfd_test_failed_checks++;
    }
  }
  for (int i = 0; i < SLOTS; i++)
    if (live[i].p) tfd_allocator_deallocate(a, live[i].p, live[i].n);
  CHECK_INT(in_use(a), 0);
  if (own) {
    CHECK(tfd_bfc_allocator_check(a, why, sizeof why));
    tfd_bfc_stats bs;
    tfd_bfc_allocator_stats(a, &bs);
    CHECK_INT(bs.num_bad_frees, 0);
  }
}

static void test_allocator_random_workload(void) {
  tfd_session_options *o = tfd_session_options_new();
  tfd_session_options_set_device_count(o, "GPU", 1, NULL);
  tfd_session_options_set_gpu_allow_growth(o, true);
  gpu_devices g;
  if (!open_gpu(&g, o)) goto out;
  /* The device's own allocator: the module's copy of bfc_allocator.c, seen only through its stats. */
  random_workload(tfd_device_get_allocator(g.gpu), false);
  /* The same code (this file's copy) over cudaMalloc'd regions, with its invariants checked. */
  tfd_bfc_region_provider regions = {cuda_region, cuda_region_free, NULL, NULL};
  tfd_bfc_options opts = {.memory_limit = (int64_t)1 << 30, .allow_growth = true};
  tfd_allocator *own = tfd_bfc_allocator_new("test_gpu_bfc", &regions, &opts, NULL);
  CHECK(own != NULL);
  if (own) {
    random_workload(own, true);
    tfd_allocator_unref(own);
  }
out:
  close_gpu(&g);
  tfd_session_options_free(o);
}

/* Every stream group count the options allow makes a working device. */
static void test_max_streams(void) {
  tfd_session_options *o = tfd_session_options_new();
  tfd_session_options_set_device_count(o, "GPU", 1, NULL);
  CHECK_INT(tfd_session_options_set_gpu_max_streams(o, TFD_GPU_MAX_STREAMS, NULL), TFD_OK);
  gpu_devices g;
  if (open_gpu(&g, o)) {
    int32_t v[64];
    for (int i = 0; i < 64; i++) v[i] = i * i;
    int64_t dims[] = {64};
    tfd_tensor *d = NULL;
    tfd_tensor_from_bytes(tfd_device_get_allocator(g.gpu), TFD_INT32, dims, 1, v, sizeof v, &d, NULL);
    tfd_tensor *back = d ? tfd_tensor_copy_to(d, NULL, NULL) : NULL;
    CHECK(back && memcmp(tfd_tensor_const_data(back), v, sizeof v) == 0);
    CHECK_INT(tfd_device_sync(g.gpu, NULL), TFD_OK);
    tfd_tensor_unref(back);
    tfd_tensor_unref(d);
  }
  close_gpu(&g);
  tfd_session_options_free(o);
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
    {"copies round-trip every dtype, 0 B to 64 MiB, pinned and pageable", test_copies_round_trip},
    {"device memory outlives its device", test_memory_outlives_device},
    {"session graph CPU -> GPU -> CPU equals the CPU-only run", test_session_graph},
    {"session graph with sync_every_op", test_session_graph_sync_every_op},
    {"10,000 small steps: no growth in host memory in use", test_many_small_steps},
    {"BFC allocator on the GPU: random workload", test_allocator_random_workload},
    {"max_streams", test_max_streams},
};

TFD_TEST_MAIN_UNLESS(tests, no_gpu)
