/* The device base: attributes, parsed name, resource manager, op segment and the vtable calls. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "../core/api_args.h"
#include "../core/status_internal.h"
#include "device_internal.h"

uint64_t tfd_new_incarnation(void) {
  for (;;) {
    uint64_t x = 0;
    if (getrandom(&x, sizeof x, 0) != (ssize_t)sizeof x) {
      /* No kernel entropy: mix the clock and a stack address (splitmix64). */
      struct timespec ts;
      clock_gettime(CLOCK_MONOTONIC, &ts);
      x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)(uintptr_t)&ts;
      x += 0x9e3779b97f4a7c15ull;
      x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
      x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
      x ^= x >> 31;
    }
    x >>= 1; /* below 2^63, so it is a positive Lua integer */
    if (x != 0) return x;
  }
}

tfd_code tfd_device_init(tfd_device *d, const tfd_device_ops *ops, const char *name, const char *device_type,
                         int64_t memory_limit, int32_t bus_id, const char *physical_device_desc,
                         tfd_status *status) {
  memset(d, 0, sizeof *d);
  if (!name || !*name) return tfd_status_setf(status, TFD_INVALID_ARGUMENT, "a device needs a name");
  if (tfd_device_name_parse(name, &d->parsed_name, status) != TFD_OK) return TFD_INVALID_ARGUMENT;
  if (!tfd_device_name_is_complete(&d->parsed_name))
    return tfd_status_setf(status, TFD_INVALID_ARGUMENT,
                           "device name '%s' is not complete: it needs /job:, /replica:, /task: and /device:TYPE:ID",
                           name);
  if (strcmp(d->parsed_name.type, device_type) != 0)
    return tfd_status_setf(status, TFD_INVALID_ARGUMENT, "device name '%s' does not name a %s device", name,
                           device_type);
  d->ops = ops;
  tfd_refcount_init(&d->refs);
  tfd_op_segment_init(&d->op_seg);
  /* Store the canonical full spelling whatever spelling came in. */
  char full[TFD_DEVICE_NAME_MAX];
  tfd_device_name_full(&d->parsed_name, full, NULL);
  d->name = strdup(full);
  d->device_type = strdup(device_type);
  d->physical_device_desc = strdup(physical_device_desc ? physical_device_desc : "");
  d->rmgr = tfd_resource_mgr_new(d->parsed_name.job);
  d->owns_rmgr = true;
  if (!d->name || !d->device_type || !d->physical_device_desc || !d->rmgr) {
    tfd_device_fini(d);
    return tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "out of memory creating device '%s'", name);
  }
  d->memory_limit = memory_limit;
  d->bus_id = bus_id;
  d->incarnation = tfd_new_incarnation();
  return TFD_OK;
}

void tfd_device_fini(tfd_device *d) {
  if (d->ops) tfd_op_segment_fini(&d->op_seg);
  if (d->owns_rmgr) tfd_resource_mgr_free(d->rmgr);
  free(d->name);
  free(d->device_type);
  free(d->physical_device_desc);
}

tfd_device *tfd_device_ref(tfd_device *d) {
  if (d) tfd_refcount_inc(&d->refs);
  return d;
}

void tfd_device_unref(tfd_device *d) {
  if (d && tfd_refcount_dec(&d->refs)) d->ops->destroy(d);
}

const char *tfd_device_name(const tfd_device *d) { return d->name; }
const char *tfd_device_type(const tfd_device *d) { return d->device_type; }
const tfd_parsed_name *tfd_device_parsed_name(const tfd_device *d) { return &d->parsed_name; }

void tfd_device_get_attributes(const tfd_device *d, tfd_device_attributes *out) {
  out->name = d->name;
  out->device_type = d->device_type;
  out->memory_limit = d->memory_limit;
  out->bus_id = d->bus_id;
  out->incarnation = d->incarnation;
  out->physical_device_desc = d->physical_device_desc;
}

tfd_code tfd_device_sync(tfd_device *d, tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_device_sync", "d", d)) return TFD_INVALID_ARGUMENT;
  return d->ops->sync(d, status);
}

tfd_allocator *tfd_device_get_allocator(tfd_device *d) {
  return d->ops->get_allocator(d, (tfd_alloc_attrs){.on_host = false});
}

tfd_resource_mgr *tfd_device_resource_manager(tfd_device *d) { return d->rmgr; }
tfd_threadpool *tfd_device_threadpool(tfd_device *d) { return d->cpu_worker_threads.workers; }
int tfd_device_num_threads(const tfd_device *d) { return d->cpu_worker_threads.num_threads; }
tfd_op_segment *tfd_device_op_segment(tfd_device *d) { return &d->op_seg; }

void tfd_device_compute(tfd_device *d, tfd_op_kernel *k, tfd_kernel_context *ctx) { d->ops->compute(d, k, ctx); }

void tfd_device_compute_async(tfd_device *d, tfd_op_kernel *k, tfd_kernel_context *ctx, tfd_done_fn done,
                              void *arg) {
  d->ops->compute_async(d, k, ctx, done, arg);
}

void tfd_device_default_compute(tfd_device *d, tfd_op_kernel *k, tfd_kernel_context *ctx) {
  (void)d;
  k->ops->compute(k, ctx);
}

void tfd_device_default_compute_async(tfd_device *d, tfd_op_kernel *k, tfd_kernel_context *ctx, tfd_done_fn done,
                                      void *arg) {
  (void)d;
  if (k->ops->compute_async) {
    k->ops->compute_async(k, ctx, done, arg);
  } else {
    k->ops->compute(k, ctx);
    done(arg);
  }
}

tfd_code tfd_device_default_fill_context_map(tfd_device *d, const struct tfd_graph *g, void **map,
                                             tfd_status *status) {
  (void)d, (void)g, (void)map, (void)status;
  return TFD_OK;
}

/* Text-format DeviceAttributes, as ProtoDebugString prints them. */
char *tfd_device_debug_string(const tfd_device *d) {
  const char *fmt =
      "name: \"%s\"\n"
      "device_type: \"%s\"\n"
      "memory_limit: %" PRId64 "\n"
      "locality {\n%s}\n"
      "incarnation: %" PRIu64 "\n"
      "%s%s%s";
  char bus[32] = "";
  if (d->bus_id) snprintf(bus, sizeof bus, "  bus_id: %d\n", (int)d->bus_id);
  const char *desc = d->physical_device_desc;
  const char *pre = *desc ? "physical_device_desc: \"" : "", *post = *desc ? "\"\n" : "";
  int n = snprintf(NULL, 0, fmt, d->name, d->device_type, d->memory_limit, bus, d->incarnation, pre, desc, post);
  char *s = malloc((size_t)n + 1);
  if (s) snprintf(s, (size_t)n + 1, fmt, d->name, d->device_type, d->memory_limit, bus, d->incarnation, pre, desc, post);
  return s;
}
