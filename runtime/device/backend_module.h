/* The interface between libtfdev and a device backend module (libtfdev_<name>.so, e.g. gpu/'s CUDA
 * backend), in the manner of ONNX Runtime's OrtApi and ggml's backend registry.
 *
 * A module exports one function, tfd_backend_module_entry, returning its tfd_backend_module. It
 * links no part of libtfdev: every runtime function it calls comes through the tfd_backend_host
 * table the loader hands it, so the module works the same whichever copy of the runtime loaded it
 * (the shared library, the tfdev executable, a host that links tfdev statically). It is built from
 * this source tree and shares its struct layouts (a device embeds tfd_device first, an allocator
 * tfd_allocator), which TFD_BACKEND_ABI versions: the loader refuses a module of another ABI. */
#ifndef TFDEV_RUNTIME_BACKEND_MODULE_H
#define TFDEV_RUNTIME_BACKEND_MODULE_H

#include <stdarg.h>
#include <stddef.h>

#include "../core/log.h"
#include "device_internal.h"
#include "tfdev/device_factory.h"

#define TFD_BACKEND_ABI 6
#define TFD_BACKEND_ENTRY "tfd_backend_module_entry"

/* What a module may call in the runtime that loaded it. */
typedef struct tfd_backend_host {
  int abi;
  /* status and log */
  tfd_code (*status_setv)(tfd_status *status, tfd_code code, const char *fmt, va_list ap);
  void (*log)(tfd_log_level level, const char *msg);
  bool (*log_enabled)(tfd_log_level level);
  /* devices (device_internal.h) */
  tfd_code (*device_init)(tfd_device *d, const tfd_device_ops *ops, const char *name, const char *device_type,
                          int64_t memory_limit, int32_t bus_id, const char *physical_device_desc, tfd_status *status);
  void (*device_fini)(tfd_device *d);
  void (*device_default_compute)(tfd_device *d, tfd_op_kernel *k, tfd_kernel_context *ctx);
  void (*device_default_compute_async)(tfd_device *d, tfd_op_kernel *k, tfd_kernel_context *ctx, tfd_done_fn done,
                                       void *arg);
  tfd_code (*device_default_fill_context_map)(tfd_device *d, const struct tfd_graph *g, void **map, tfd_status *status);
  tfd_code (*cpu_device_new)(const tfd_cpu_device_config *config, tfd_device **out, tfd_status *status);
  tfd_code (*cpu_devices_create)(const tfd_session_options *options, const char *name_prefix,
                                 tfd_allocator *(*make_allocator)(void *arg, const char *name), void *arg,
                                 tfd_device_list *out, tfd_status *status);
  void (*device_unref)(tfd_device *d);
  tfd_code (*device_list_push)(tfd_device_list *l, tfd_device *d, tfd_status *status);
  /* factories */
  tfd_code (*device_factory_new)(const tfd_device_factory_ops *ops, void *self, tfd_device_factory **out,
                                 tfd_status *status);
  void (*device_factory_unref)(tfd_device_factory *f);
  tfd_code (*factory_registry_register)(tfd_factory_registry *r, const char *device_type, tfd_device_factory *f,
                                        int priority, tfd_status *status);
  /* session options */
  int (*options_device_count)(const tfd_session_options *o, const char *type, int dflt);
  const char *(*options_visible_devices)(const tfd_session_options *o);
  double (*options_gpu_memory_fraction)(const tfd_session_options *o);
  bool (*options_gpu_allow_growth)(const tfd_session_options *o);
  bool (*options_gpu_sync_every_op)(const tfd_session_options *o);
  int (*options_gpu_max_streams)(const tfd_session_options *o);
  int (*options_intra_op_threads)(const tfd_session_options *o);
  bool (*options_use_global_threadpool)(const tfd_session_options *o);
  tfd_code (*parse_visible_devices)(const char *list, int num_physical, int *ids, int *num_ids, tfd_status *status);
  /* allocators (allocator_internal.h) */
  bool (*allocator_init)(tfd_allocator *a, const tfd_allocator_ops *ops, const char *name);
  void (*allocator_fini)(tfd_allocator *a);
  tfd_allocator *(*cpu_allocator_new)(const char *name, int64_t bytes_limit);
  void (*allocator_unref)(tfd_allocator *a);
  /* scratch memory a module's kernels take from a device's allocator (workspaces) */
  void *(*allocator_allocate)(tfd_allocator *a, size_t alignment, size_t size, tfd_status *status);
  void (*allocator_deallocate)(tfd_allocator *a, void *ptr, size_t size);
} tfd_backend_host;

/* What a module may call to register kernels (runtime/kernels/kernel.h). The kernel registry sits
 * above the device layer, so it hands this over itself, when it first looks for a kernel that its
 * tables lack (tfd_backend_register_kernels below), rather than through the host table. */
typedef struct tfd_backend_kernel_api {
  /* The ops that only move data, for a device type whose memory the host cannot touch. */
  tfd_code (*register_data_movement)(const char *device_type, tfd_status *status);
  /* The device kernels (kernels/device_math.h): every op they cover, for a device type whose devices
   * carry a tfd_device_math (tfd_device.math). Registers the data-movement kernels too. */
  tfd_code (*register_device_kernels)(const char *device_type, tfd_status *status);
} tfd_backend_kernel_api;

/* What a module offers. */
typedef struct tfd_backend_module {
  int abi; /* TFD_BACKEND_ABI */
  const char *name; /* "cuda": the module is libtfdev_cuda.so */
  /* Called once, first: remembers the host table, looks for hardware. Returns the number of devices
   * it can drive (0 is not an error), with the reason written to why (why_cap bytes) when 0. */
  int (*init)(const tfd_backend_host *host, char *why, size_t why_cap);
  /* Registers the module's device factories into r (a registry of the host's). */
  tfd_code (*register_factories)(tfd_factory_registry *r, tfd_status *status);
  /* Registers the module's kernels; called once, after init, and again after a call that ran out of
   * memory (registering a kernel a second time with the same setup changes nothing). May be NULL. */
  tfd_code (*register_kernels)(const tfd_backend_kernel_api *api, tfd_status *status);
} tfd_backend_module;

typedef const tfd_backend_module *(*tfd_backend_module_entry_fn)(void);

/* The host table of this copy of the runtime (device/backend.c). */
const tfd_backend_host *tfd_backend_host_table(void);
/* Lets every loaded module that has not yet done so register its kernels through api (the kernel
 * registry calls this when a lookup misses, and before placement). A module that fails is logged and
 * not asked again, except when it ran out of memory: it is asked again next time, and the call
 * returns RESOURCE_EXHAUSTED. */
tfd_code tfd_backend_register_kernels(const tfd_backend_kernel_api *api, tfd_status *status);

#endif
