/* The device struct and vtable: subtypes (thread-pool CPU, renamed, GPU) embed tfd_device first. */
#ifndef TFDEV_RUNTIME_DEVICE_INTERNAL_H
#define TFDEV_RUNTIME_DEVICE_INTERNAL_H

#include "../core/refcount.h"
#include "op_kernel.h"
#include "op_segment.h"
#include "tfdev/device.h"
#include "tfdev/device_factory.h"

struct tfd_graph; /* runtime/graph */

/* AllocatorAttributes, reduced to what tfdev distinguishes. */
typedef struct tfd_alloc_attrs {
  bool on_host; /* memory the host can touch (pinned, for GPU devices) */
} tfd_alloc_attrs;

/* DeviceBase::CpuWorkerThreads. */
typedef struct tfd_cpu_worker_threads {
  int num_threads;
  tfd_threadpool *workers; /* borrowed from the device's LocalDevice part */
} tfd_cpu_worker_threads;

/* DeviceBase::GpuDeviceInfo; NULL on CPU devices. Filled by gpu/. */
typedef struct tfd_gpu_device_info tfd_gpu_device_info;

typedef struct tfd_device_ops {
  void (*compute)(tfd_device *d, tfd_op_kernel *k, tfd_kernel_context *ctx);
  void (*compute_async)(tfd_device *d, tfd_op_kernel *k, tfd_kernel_context *ctx, tfd_done_fn done, void *arg);
  tfd_code (*sync)(tfd_device *d, tfd_status *status);
  tfd_allocator *(*get_allocator)(tfd_device *d, tfd_alloc_attrs attrs);
  /* Gives each node of a graph a device context; CPU devices need none. */
  tfd_code (*fill_context_map)(tfd_device *d, const struct tfd_graph *g, void **context_map, tfd_status *status);
  /* Frees the subtype; must end with tfd_device_fini and free. */
  void (*destroy)(tfd_device *d);
} tfd_device_ops;

struct tfd_device {
  const tfd_device_ops *ops;
  tfd_refcount refs;
  /* DeviceAttributes */
  char *name, *device_type, *physical_device_desc;
  int64_t memory_limit;
  int32_t bus_id;
  uint64_t incarnation;
  tfd_parsed_name parsed_name;
  /* Device */
  tfd_resource_mgr *rmgr; /* owned unless owns_rmgr is false (renamed devices) */
  bool owns_rmgr;
  tfd_op_segment op_seg;
  /* DeviceBase */
  tfd_cpu_worker_threads cpu_worker_threads;
  tfd_gpu_device_info *gpu_device_info;
  /* BaseGPUDevice's sync_every_op: executors wait for the device after each of its nodes, so an
   * asynchronous failure names the node that caused it (debugging; set by the device's maker). */
  bool sync_every_op;
  /* A device whose memory the host cannot touch: the arithmetic its device kernels call
   * (kernels/device_math.h), set by its backend; NULL for CPU devices and devices that only move data. */
  const struct tfd_device_math *math;
};

/* Fills the base: parses `name` (must be complete), copies the strings,
 * draws an incarnation, and makes a resource manager whose default
 * container is the job name. */
tfd_code tfd_device_init(tfd_device *d, const tfd_device_ops *ops, const char *name, const char *device_type,
                         int64_t memory_limit, int32_t bus_id, const char *physical_device_desc,
                         tfd_status *status);
void tfd_device_fini(tfd_device *d);

/* Device::Compute / ComputeAsync through the vtable. */
void tfd_device_compute(tfd_device *d, tfd_op_kernel *k, tfd_kernel_context *ctx);
void tfd_device_compute_async(tfd_device *d, tfd_op_kernel *k, tfd_kernel_context *ctx, tfd_done_fn done,
                              void *arg);
/* Default vtable entries, for subtypes to reuse. */
void tfd_device_default_compute(tfd_device *d, tfd_op_kernel *k, tfd_kernel_context *ctx);
void tfd_device_default_compute_async(tfd_device *d, tfd_op_kernel *k, tfd_kernel_context *ctx, tfd_done_fn done,
                                      void *arg);
tfd_code tfd_device_default_fill_context_map(tfd_device *d, const struct tfd_graph *g, void **map,
                                             tfd_status *status);
tfd_op_segment *tfd_device_op_segment(tfd_device *d);
/* A random 64-bit number below 2^63 that is never 0. */
uint64_t tfd_new_incarnation(void);

/* ThreadPoolDeviceFactory's CreateDevices: device_count["CPU"] (default 1) CPU devices named
 * prefix/device:CPU:i, with the session's intra-op threads, the total of owned pools bounded. Each
 * device's memory comes from make_allocator(arg, name) (a new reference the device takes), or,
 * when make_allocator is NULL, a CPU allocator of the default limit. */
tfd_code tfd_cpu_devices_create(const tfd_session_options *options, const char *name_prefix,
                                tfd_allocator *(*make_allocator)(void *arg, const char *name), void *arg,
                                tfd_device_list *out, tfd_status *status);

/* ---- LocalDevice: the global-or-owned intra-op pool ---- */
typedef struct tfd_local_device {
  tfd_device base;
  tfd_threadpool *owned_pool; /* NULL when using the process-wide pool */
  struct tfd_runtime *runtime; /* referenced when its host scheduler is the pool */
} tfd_local_device;

/* Attaches an intra-op pool: the runtime's pool over its host's scheduler when rt has one (the
 * device keeps rt alive), else a new one of num_threads (<= 0: per core) when own_pool, else the
 * process-wide pool (created on first use with num_threads, shared afterwards whatever later
 * callers ask). */
tfd_code tfd_local_device_init_pool(tfd_local_device *d, struct tfd_runtime *rt, int num_threads, bool own_pool,
                                    tfd_status *status);
void tfd_local_device_fini_pool(tfd_local_device *d);

/* A registry others copy while factories are added to it (the built-in one, builtin_factories.c): copies
 * and register_shared take its lock. */
tfd_factory_registry *tfd_factory_registry_new_shared(void);
tfd_code tfd_factory_registry_register_shared(tfd_factory_registry *r, const char *device_type, tfd_device_factory *f,
                                              int priority, tfd_status *status);

#endif
