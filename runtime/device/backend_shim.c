/* The runtime functions a backend module calls, forwarded to the host table of whichever runtime
 * loaded it (see backend_module.h). Compiled into each module (gpu/'s CUDA one, the test suite's
 * fake GPU), never into libtfdev: the module's sources are written as runtime code is, calling
 * tfd_status_setf or tfd_device_init, and these definitions, hidden inside the module, route each
 * call to the loading runtime, so the module links no copy of libtfdev. */
#include <stdarg.h>
#include <stdio.h>

#include "../core/allocator_internal.h"
#include "../core/status_internal.h"
#include "backend_shim.h"
#include "visible_devices.h"

static const tfd_backend_host *host;

void tfd_backend_shim_init(const tfd_backend_host *h) { host = h; }

tfd_code tfd_backend_gpu_devices_create(const tfd_session_options *o, const char *prefix, int num_physical,
                                        tfd_backend_gpu_new_fn make, void *arg, tfd_device_list *out,
                                        tfd_status *st) {
  int ids[64], n = 0;
  if (num_physical > 64) num_physical = 64;
  if (tfd_parse_visible_devices(tfd_session_options_visible_devices(o), num_physical, ids, &n, st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  int want = tfd_session_options_device_count(o, "GPU", n);
  if (want < n) n = want;
  for (int i = 0; i < n; i++) {
    char name[160];
    snprintf(name, sizeof name, "%s/device:GPU:%d", prefix, i);
    tfd_device *d = make(arg, name, i, ids[i], o, st);
    if (!d) return tfd_status_code(st) != TFD_OK ? tfd_status_code(st) : TFD_INTERNAL;
    tfd_code code = tfd_device_list_push(out, d, st);
    tfd_device_unref(d);
    if (code != TFD_OK) return code;
  }
  return TFD_OK;
}

tfd_code tfd_status_setf(tfd_status *s, tfd_code code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tfd_code c = host->status_setv(s, code, fmt, ap);
  va_end(ap);
  return c;
}

bool tfd_log_enabled(tfd_log_level level) { return host->log_enabled(level); }

void tfd_log(tfd_log_level level, const char *fmt, ...) {
  if (!host->log_enabled(level)) return;
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  host->log(level, msg);
}

tfd_code tfd_device_init(tfd_device *d, const tfd_device_ops *ops, const char *name, const char *device_type,
                         int64_t memory_limit, int32_t bus_id, const char *physical_device_desc, tfd_status *status) {
  return host->device_init(d, ops, name, device_type, memory_limit, bus_id, physical_device_desc, status);
}
void tfd_device_fini(tfd_device *d) { host->device_fini(d); }
void tfd_device_default_compute(tfd_device *d, tfd_op_kernel *k, tfd_kernel_context *ctx) {
  host->device_default_compute(d, k, ctx);
}
void tfd_device_default_compute_async(tfd_device *d, tfd_op_kernel *k, tfd_kernel_context *ctx, tfd_done_fn done,
                                      void *arg) {
  host->device_default_compute_async(d, k, ctx, done, arg);
}
tfd_code tfd_device_default_fill_context_map(tfd_device *d, const struct tfd_graph *g, void **map, tfd_status *status) {
  return host->device_default_fill_context_map(d, g, map, status);
}
tfd_code tfd_cpu_device_new(const tfd_cpu_device_config *config, tfd_device **out, tfd_status *status) {
  return host->cpu_device_new(config, out, status);
}
tfd_code tfd_cpu_devices_create(const tfd_session_options *options, const char *name_prefix,
                                tfd_allocator *(*make_allocator)(void *arg, const char *name), void *arg,
                                tfd_device_list *out, tfd_status *status) {
  return host->cpu_devices_create(options, name_prefix, make_allocator, arg, out, status);
}
void tfd_device_unref(tfd_device *d) { host->device_unref(d); }
tfd_code tfd_device_list_push(tfd_device_list *l, tfd_device *d, tfd_status *status) {
  return host->device_list_push(l, d, status);
}
tfd_code tfd_device_factory_new(const tfd_device_factory_ops *ops, void *self, tfd_device_factory **out,
                                tfd_status *status) {
  return host->device_factory_new(ops, self, out, status);
}
void tfd_device_factory_unref(tfd_device_factory *f) { host->device_factory_unref(f); }
tfd_code tfd_factory_registry_register(tfd_factory_registry *r, const char *device_type, tfd_device_factory *f,
                                       int priority, tfd_status *status) {
  return host->factory_registry_register(r, device_type, f, priority, status);
}
int tfd_session_options_device_count(const tfd_session_options *o, const char *type, int dflt) {
  return host->options_device_count(o, type, dflt);
}
const char *tfd_session_options_visible_devices(const tfd_session_options *o) { return host->options_visible_devices(o); }
double tfd_session_options_gpu_memory_fraction(const tfd_session_options *o) {
  return host->options_gpu_memory_fraction(o);
}
bool tfd_session_options_gpu_allow_growth(const tfd_session_options *o) { return host->options_gpu_allow_growth(o); }
bool tfd_session_options_gpu_sync_every_op(const tfd_session_options *o) { return host->options_gpu_sync_every_op(o); }
int tfd_session_options_gpu_max_streams(const tfd_session_options *o) { return host->options_gpu_max_streams(o); }

int tfd_session_options_intra_op_threads(const tfd_session_options *o) { return host->options_intra_op_threads(o); }
bool tfd_session_options_use_global_threadpool(const tfd_session_options *o) {
  return host->options_use_global_threadpool(o);
}
tfd_code tfd_parse_visible_devices(const char *list, int num_physical, int *ids, int *num_ids, tfd_status *status) {
  return host->parse_visible_devices(list, num_physical, ids, num_ids, status);
}
bool tfd_allocator_init(tfd_allocator *a, const tfd_allocator_ops *ops, const char *name) {
  return host->allocator_init(a, ops, name);
}
void tfd_allocator_fini(tfd_allocator *a) { host->allocator_fini(a); }
tfd_allocator *tfd_cpu_allocator_new(const char *name, int64_t bytes_limit) { return host->cpu_allocator_new(name, bytes_limit); }
void tfd_allocator_unref(tfd_allocator *a) { host->allocator_unref(a); }
void *tfd_allocator_allocate(tfd_allocator *a, size_t alignment, size_t size, tfd_status *status) {
  return host->allocator_allocate(a, alignment, size, status);
}
void tfd_allocator_deallocate(tfd_allocator *a, void *ptr, size_t size) { host->allocator_deallocate(a, ptr, size); }
tfd_code tfd_status_code(const tfd_status *s) { return s ? s->code : TFD_OK; }
