/* tfdev devices: a vtable plus DeviceBase/Device data, shared by reference count.
 *
 * A device has attributes (name, type, memory limit, bus locality,
 * incarnation, physical description), its parsed name, a resource manager,
 * an allocator, and CPU worker threads (its intra-op pool). Constructors
 * return one reference; tfd_device_unref releases it. A device keeps alive
 * whatever it points at (pool, allocator, underlying device). */
#ifndef TFDEV_DEVICE_H
#define TFDEV_DEVICE_H

#include "tfdev/export.h"

#include <stdbool.h>
#include <stdint.h>

#include "tfdev/allocator.h"
#include "tfdev/device_name.h"
#include "tfdev/options.h"
#include "tfdev/resource_mgr.h"
#include "tfdev/status.h"
#include "tfdev/threadpool.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tfd_device tfd_device;

/* DeviceAttributes. Strings are borrowed from the device. */
typedef struct tfd_device_attributes {
  const char *name;
  const char *device_type;
  int64_t memory_limit;
  int32_t bus_id; /* locality.bus_id; 0 means no specific locality */
  uint64_t incarnation; /* unique, non-zero, below 2^63 */
  const char *physical_device_desc;
} tfd_device_attributes;

/* At most this many CPU devices per session (device_count.CPU). */
#define TFD_MAX_CPU_DEVICES 1024

/* The default memory limit of CPU devices, as in TensorFlow: 256 MiB. */
#define TFD_CPU_DEFAULT_MEMORY_LIMIT ((int64_t)256 << 20)

/* How to make a thread-pool CPU device (TensorFlow's ThreadPoolDevice). */
typedef struct tfd_cpu_device_config {
  const char *name;                 /* full device name; required */
  const char *device_type;          /* NULL: "CPU". Another name makes a CPU-backed
                                       device of that type, as XLA_CPU is in TF */
  int64_t memory_limit;             /* <= 0: TFD_CPU_DEFAULT_MEMORY_LIMIT */
  int32_t bus_id;
  const char *physical_device_desc; /* NULL: describes the CPU and threads */
  int num_threads;                  /* intra-op threads; <= 0: one per core */
  bool own_threadpool;              /* false: share the process-wide pool */
  tfd_allocator *allocator;         /* NULL: a CPU allocator of memory_limit; else the device takes a
                                       reference (the GPU-compatible CPU device's pinned memory) */
  struct tfd_runtime *runtime;      /* NULL: tfdev's defaults. Else the device takes a reference, runs
                                       kernels on the runtime's host scheduler when it has one (then
                                       num_threads and own_threadpool are ignored) and, without an
                                       allocator above, takes memory from the host's allocator */
} tfd_cpu_device_config;

/* A new thread-pool CPU device: the caller's reference, given back with tfd_device_unref. INVALID_ARGUMENT for a missing or malformed
 * name, a name that is not complete, or one whose type is not device_type. */
TFD_API tfd_code tfd_cpu_device_new(const tfd_cpu_device_config *config, tfd_device **out, tfd_status *status);
/* RenamedDevice: answers to new_base + "/device:TYPE:ID" (type and id of
 * `underlying`), shares everything else with it and keeps it alive (a reference of its own); the caller
 * owns one reference to the new device.
 * new_base must name job, replica and task (INVALID_ARGUMENT otherwise). */
TFD_API tfd_code tfd_renamed_device_new(tfd_device *underlying, const char *new_base, tfd_device **out, tfd_status *status);

/* Another reference to d (NULL stays NULL); each is given back with tfd_device_unref. */
TFD_API tfd_device *tfd_device_ref(tfd_device *d);
TFD_API void tfd_device_unref(tfd_device *d);

/* The device's full name, type and parsed name: borrowed, valid as long as d is. */
TFD_API const char *tfd_device_name(const tfd_device *d);
TFD_API const char *tfd_device_type(const tfd_device *d);
TFD_API void tfd_device_get_attributes(const tfd_device *d, tfd_device_attributes *out);
TFD_API const tfd_parsed_name *tfd_device_parsed_name(const tfd_device *d);
/* The underlying device of a renamed device, else NULL. Borrowed. */
TFD_API tfd_device *tfd_device_underlying(const tfd_device *d);

/* Waits for all work queued on the device. */
TFD_API tfd_code tfd_device_sync(tfd_device *d, tfd_status *status);
/* The allocator for tensors on this device (borrowed: ref it to keep it). */
TFD_API tfd_allocator *tfd_device_get_allocator(tfd_device *d);
/* The device's resource manager (borrowed). */
TFD_API tfd_resource_mgr *tfd_device_resource_manager(tfd_device *d);
/* The intra-op pool kernels on this device use (borrowed), and its size. */
TFD_API tfd_threadpool *tfd_device_threadpool(tfd_device *d);
TFD_API int tfd_device_num_threads(const tfd_device *d);
/* ProtoDebugString of the attributes. The caller frees it with free(). */
TFD_API char *tfd_device_debug_string(const tfd_device *d);

#ifdef __cplusplus
}
#endif
#endif
