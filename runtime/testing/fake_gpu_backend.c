/* The test suite's fake GPU backend (libtfdev_fakegpu.so; never installed): "GPU" devices at
 * priority 210 whose memory the host must not touch, so CI, which has no GPU, runs the runtime's
 * whole device-memory path (placement, _Send/_Recv copies, feeds, fetches, eager compute, the
 * data-movement kernels, the device kernels over its math, sync_every_op) against a device that
 * behaves like one.
 *
 * Its "device memory" is host memory holding every byte inverted, moved in and out only by its
 * copy ops: any runtime path that reads or writes device memory directly, or forgets a copy,
 * yields wrong numbers instead of passing by accident. Loaded as any backend is
 * (TFDEV_BACKENDS=fakegpu). Its devices carry a tfd_device_math (fake_gpu_math.c: C loops over the
 * inverted memory with device_math_elem.h's per-element code) and the module registers the device
 * kernels, so every op that has one runs on the "GPU" and CI checks it against the CPU kernel.
 * Knobs: TFDEV_FAKE_GPUS (devices, read at load; default 1), TFDEV_FAKE_GPU_MATH=0 (read at load: no
 * math and only the data-movement kernels, a GPU as it was before device kernels, for the tests of
 * placement fallbacks) and TFDEV_FAKE_GPU_FAIL_SYNC=1 (read at each sync: sync reports a device
 * fault, for sync_every_op). */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/allocator_internal.h"
#include "../core/status_internal.h"
#include "../device/backend_shim.h"
#include "../device/visible_devices.h"
#include "fake_gpu_math.h"

#define EXPORT __attribute__((visibility("default")))
#define MAX_FAKE_GPUS 8
#define FAKE_GPU_MEMORY ((int64_t)1 << 30)

static int num_physical; /* what init found: set once, when the module loads */
static bool with_math;    /* TFDEV_FAKE_GPU_MATH is not 0: set once, when the module loads */

/* ---- the device memory: inverted bytes, with the statistics an allocator keeps ---- */
typedef struct fake_memory {
  tfd_allocator base;
  atomic_llong in_use, peak, allocs, largest;
} fake_memory;

static void invert(void *dst, const void *src, size_t bytes) {
  unsigned char *d = dst;
  const unsigned char *s = src;
  for (size_t i = 0; i < bytes; i++) d[i] = (unsigned char)~s[i];
}

static tfd_code to_host(tfd_allocator *a, void *dst, const void *src, size_t bytes, tfd_status *st) {
  if (tfd_fake_gpu_capturing()) /* as CUDA's stream capture: the bytes are not computed yet */
    return tfd_status_setf(st, TFD_FAILED_PRECONDITION, "%s: copying %zu bytes to the host while capturing a step graph",
                           a->name, bytes);
  invert(dst, src, bytes);
  return TFD_OK;
}

static tfd_code from_host(tfd_allocator *a, void *dst, const void *src, size_t bytes, void (*release)(void *),
                          void *release_arg, tfd_status *st) {
  (void)a, (void)st;
  invert(dst, src, bytes);
  release(release_arg);
  return TFD_OK;
}

static const tfd_device_memory_ops fake_copies = {to_host, from_host};

static void *fm_allocate(tfd_allocator *a, size_t alignment, size_t size, tfd_status *st) {
  fake_memory *m = (fake_memory *)a;
  size_t rounded = (size + alignment - 1) / alignment * alignment;
  void *p = aligned_alloc(alignment, rounded ? rounded : alignment);
  if (!p) {
    tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "%s: out of memory allocating %zu bytes", a->name, size);
    return NULL;
  }
  memset(p, 0x5a, rounded); /* never zeros a kernel could mistake for a result */
  long long now = atomic_fetch_add(&m->in_use, (long long)size) + (long long)size, peak = atomic_load(&m->peak);
  while (now > peak && !atomic_compare_exchange_weak(&m->peak, &peak, now)) {
  }
  long long largest = atomic_load(&m->largest);
  while ((long long)size > largest && !atomic_compare_exchange_weak(&m->largest, &largest, (long long)size)) {
  }
  atomic_fetch_add(&m->allocs, 1);
  return p;
}

static void fm_release(void *arg, void *p, size_t size) {
  atomic_fetch_sub(&((fake_memory *)arg)->in_use, (long long)size);
  free(p);
}

/* Memory freed while this thread records a step graph stays the graph's until it goes. */
static void fm_deallocate(tfd_allocator *a, void *p, size_t size) {
  if (!tfd_fake_gpu_keep(fm_release, a, p, size)) fm_release(a, p, size);
}

static void fm_get_stats(const tfd_allocator *a, tfd_allocator_stats *out) {
  fake_memory *m = (fake_memory *)a;
  *out = (tfd_allocator_stats){.num_allocs = atomic_load(&m->allocs), .bytes_in_use = atomic_load(&m->in_use),
                               .peak_bytes_in_use = atomic_load(&m->peak),
                               .largest_alloc_size = atomic_load(&m->largest), .bytes_limit = FAKE_GPU_MEMORY};
}

static void fm_destroy(tfd_allocator *a) {
  tfd_allocator_fini(a);
  free(a);
}

static const tfd_allocator_ops fake_memory_ops = {fm_allocate, fm_deallocate, fm_get_stats, fm_destroy, NULL};

static tfd_allocator *fake_memory_new(const char *name) {
  fake_memory *m = calloc(1, sizeof *m);
  if (!m || !tfd_allocator_init(&m->base, &fake_memory_ops, name)) {
    free(m);
    return NULL;
  }
  m->base.device_memory = &fake_copies;
  return &m->base;
}

/* ---- devices ---- */
typedef struct fake_gpu {
  tfd_device base;
  tfd_allocator *memory; /* device memory */
  tfd_allocator *host;   /* host memory for the tensors kept there (int32, staging) */
} fake_gpu;

static tfd_code fake_sync(tfd_device *d, tfd_status *st) {
  const char *fail = getenv("TFDEV_FAKE_GPU_FAIL_SYNC"); /* read each time: a test turns it on and off */
  if (fail && strcmp(fail, "1") == 0) return tfd_status_setf(st, TFD_INTERNAL, "%s: fake device fault", d->name);
  return TFD_OK;
}

static tfd_allocator *fake_get_allocator(tfd_device *d, tfd_alloc_attrs attrs) {
  fake_gpu *g = (fake_gpu *)d;
  return attrs.on_host ? g->host : g->memory;
}

static void fake_destroy(tfd_device *d) {
  fake_gpu *g = (fake_gpu *)d;
  if (g->memory) tfd_allocator_unref(g->memory);
  if (g->host) tfd_allocator_unref(g->host);
  tfd_device_fini(d);
  free(g);
}

static tfd_device_ops fake_ops; /* filled with the host's defaults by init, once */

static tfd_device *fake_gpu_new(void *arg, const char *name, int tf_id, int id, const tfd_session_options *o,
                                tfd_status *st) {
  (void)arg;
  char desc[160], mem[64], host[64];
  snprintf(desc, sizeof desc, "device: %d, name: tfdev fake GPU, pci bus id: 0000:00:%02x.0, compute capability: 0.0",
           id, id);
  snprintf(mem, sizeof mem, "fake_GPU_%d", tf_id);
  snprintf(host, sizeof host, "fake_gpu_host_%d", tf_id);
  fake_gpu *g = calloc(1, sizeof *g);
  if (!g) {
    tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory creating %s", name);
    return NULL;
  }
  if (tfd_device_init(&g->base, &fake_ops, name, "GPU", FAKE_GPU_MEMORY, 1, desc, st) != TFD_OK) {
    free(g);
    return NULL;
  }
  g->base.sync_every_op = tfd_session_options_gpu_sync_every_op(o);
  g->base.math = with_math ? tfd_fake_gpu_math() : NULL;
  g->memory = fake_memory_new(mem);
  g->host = tfd_cpu_allocator_new(host, 0);
  if (!g->memory || !g->host) {
    fake_destroy(&g->base);
    tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory creating %s", name);
    return NULL;
  }
  return &g->base;
}

static tfd_code fake_create(void *self, void *host_ctx, const tfd_session_options *o, const char *prefix,
                            tfd_device_list *out, tfd_status *st) {
  (void)self, (void)host_ctx;
  if (num_physical == 0) return TFD_OK;
  return tfd_backend_gpu_devices_create(o, prefix, num_physical, fake_gpu_new, NULL, out, st);
}

static const tfd_device_factory_ops fake_factory_ops = {"FakeGPUDeviceFactory", fake_create, NULL, NULL};

static int fake_init(const tfd_backend_host *host, char *why, size_t cap) {
  tfd_backend_shim_init(host);
  fake_ops = (tfd_device_ops){tfd_device_default_compute, tfd_device_default_compute_async, fake_sync,
                              fake_get_allocator, tfd_device_default_fill_context_map, fake_destroy};
  const char *n = getenv("TFDEV_FAKE_GPUS");
  num_physical = n ? atoi(n) : 1;
  if (num_physical < 0) num_physical = 0;
  if (num_physical > MAX_FAKE_GPUS) num_physical = MAX_FAKE_GPUS;
  const char *math = getenv("TFDEV_FAKE_GPU_MATH");
  with_math = !(math && strcmp(math, "0") == 0);
  if (num_physical == 0) snprintf(why, cap, "no fake GPU (TFDEV_FAKE_GPUS=0)");
  return num_physical;
}

static tfd_code fake_register_factories(tfd_factory_registry *r, tfd_status *st) {
  tfd_device_factory *f = NULL;
  tfd_device_factory_new(&fake_factory_ops, NULL, &f, st);
  if (!f) return tfd_status_code(st);
  tfd_code code = tfd_factory_registry_register(r, "GPU", f, TFD_PRIORITY_GPU, st);
  tfd_device_factory_unref(f);
  return code;
}

static tfd_code fake_register_kernels(const tfd_backend_kernel_api *api, tfd_status *st) {
  return with_math ? api->register_device_kernels("GPU", st) : api->register_data_movement("GPU", st);
}

static const tfd_backend_module fake_module = {TFD_BACKEND_ABI, "fakegpu", fake_init, fake_register_factories,
                                               fake_register_kernels};

EXPORT const tfd_backend_module *tfd_backend_module_entry(void);
EXPORT const tfd_backend_module *tfd_backend_module_entry(void) { return &fake_module; }
