/* tfdev device factories and their registry.
 *
 * A factory makes the devices of one type (TensorFlow's DeviceFactory); a
 * registry maps each type to the factory registered with the highest
 * priority. Registration follows TensorFlow's rules: a higher priority
 * replaces, an equal one is ALREADY_EXISTS, a lower one is ignored.
 *
 * Registries are objects, not globals: the built-in entries live in a
 * default registry built once per process; hosts and each Lua state work on
 * copies of it, so their registrations never meet. */
#ifndef TFDEV_DEVICE_FACTORY_H
#define TFDEV_DEVICE_FACTORY_H

#include "tfdev/export.h"

#include <stddef.h>

#include "tfdev/device.h"
#include "tfdev/options.h"
#include "tfdev/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The priorities TensorFlow registers with. */
#define TFD_PRIORITY_DEFAULT 50
#define TFD_PRIORITY_THREADPOOL_CPU 60
#define TFD_PRIORITY_GPU_COMPATIBLE_CPU 70
#define TFD_PRIORITY_GPU 210

/* The prefix devices of this process are named under. */
#define TFD_LOCAL_NAME_PREFIX "/job:localhost/replica:0/task:0"

/* ---- device lists: growable arrays holding one reference per device ---- */
typedef struct tfd_device_list tfd_device_list;
TFD_API tfd_device_list *tfd_device_list_new(void);
/* Releases every device reference, then the list. */
TFD_API void tfd_device_list_free(tfd_device_list *l);
TFD_API size_t tfd_device_list_size(const tfd_device_list *l);
/* Borrowed; NULL when i is out of range. */
TFD_API tfd_device *tfd_device_list_get(const tfd_device_list *l, size_t i);
/* Appends d, taking a new reference. RESOURCE_EXHAUSTED when out of memory. */
TFD_API tfd_code tfd_device_list_push(tfd_device_list *l, tfd_device *d, tfd_status *status);

/* ---- factories ---- */
typedef struct tfd_device_factory tfd_device_factory;

typedef struct tfd_device_factory_ops {
  const char *name; /* shown in listings, e.g. "ThreadPoolDeviceFactory" */
  /* CreateDevices: appends the devices it makes to `out`. `host_ctx` is
   * whatever the caller of add_devices/new_device passed, untouched (the
   * Lua bindings pass their lua_State). */
  tfd_code (*create_devices)(void *self, void *host_ctx, const tfd_session_options *options,
                             const char *name_prefix, tfd_device_list *out, tfd_status *status);
  void (*destroy)(void *self); /* may be NULL */
  /* This factory's own name, when instances differ (factories written in
   * Lua are named by their table); may be NULL: `name` is used. */
  const char *(*instance_name)(const void *self);
} tfd_device_factory_ops;

/* Wraps ops + self; the factory owns self (ops->destroy runs at the last
 * unref). `ops` must outlive the factory. Caller owns one reference. */
TFD_API tfd_code tfd_device_factory_new(const tfd_device_factory_ops *ops, void *self, tfd_device_factory **out, tfd_status *status);
TFD_API tfd_device_factory *tfd_device_factory_ref(tfd_device_factory *f);
TFD_API void tfd_device_factory_unref(tfd_device_factory *f);
TFD_API const char *tfd_device_factory_name(const tfd_device_factory *f);
/* self, if f was made with exactly these ops; NULL otherwise. */
TFD_API void *tfd_device_factory_self(const tfd_device_factory *f, const tfd_device_factory_ops *ops);
/* Calls the factory directly. */
TFD_API tfd_code tfd_device_factory_create_devices(tfd_device_factory *f, void *host_ctx, const tfd_session_options *options,
                                                   const char *name_prefix, tfd_device_list *out, tfd_status *status);
/* The built-in ThreadPoolDeviceFactory: device_count["CPU"] devices (1 if
 * unset) named prefix/device:CPU:i, 256 MiB limit each. */
TFD_API tfd_code tfd_threadpool_device_factory_new(tfd_device_factory **out, tfd_status *status);

/* ---- registries ---- */
typedef struct tfd_factory_registry tfd_factory_registry;

/* An empty registry. Caller frees it with tfd_factory_registry_free. */
TFD_API tfd_factory_registry *tfd_factory_registry_new(void);
/* The process-wide built-in registry ("CPU": ThreadPoolDeviceFactory at 60,
 * plus what backends and plug-ins add). Built once, thread-safely; not to be
 * freed. Copy it to register more. */
TFD_API const tfd_factory_registry *tfd_factory_registry_default(void);
/* Registers into the built-in registry, as tfd_factory_registry_register
 * does: for plug-ins (tfdev/custom_op.h). Runtimes, Lua states and sessions
 * made afterwards copy it; those made before keep what they copied. */
TFD_API tfd_code tfd_factory_registry_register_builtin(const char *device_type, tfd_device_factory *f, int priority,
                                                       tfd_status *status);
/* A copy sharing the factories (by reference). NULL when out of memory. */
TFD_API tfd_factory_registry *tfd_factory_registry_copy(const tfd_factory_registry *src);
TFD_API void tfd_factory_registry_free(tfd_factory_registry *r);

/* DeviceFactory::Register. Takes a reference on f when it is kept.
 * ALREADY_EXISTS for an equal priority; a lower priority is ignored (TFD_OK).
 * INVALID_ARGUMENT for an empty or malformed type name. */
TFD_API tfd_code tfd_factory_registry_register(tfd_factory_registry *r, const char *device_type, tfd_device_factory *f,
                                               int priority, tfd_status *status);
/* GetFactory: the highest-priority factory for the type, or NULL. Borrowed. */
TFD_API tfd_device_factory *tfd_factory_registry_get(const tfd_factory_registry *r, const char *device_type);
/* DevicePriority: the priority of the type's factory, -1 if none. */
TFD_API int tfd_factory_registry_priority(const tfd_factory_registry *r, const char *device_type);
/* Entries in order of priority (highest first), then type name. */
TFD_API size_t tfd_factory_registry_size(const tfd_factory_registry *r);
TFD_API void tfd_factory_registry_entry(const tfd_factory_registry *r, size_t i, const char **device_type, int *priority,
                                        tfd_device_factory **factory);

/* AddDevices: the CPU factory's devices first (NOT_FOUND if no CPU factory is
 * registered or it makes no device), then every other factory's, in entry
 * order. On error `out` is left as it was. */
TFD_API tfd_code tfd_factory_registry_add_devices(const tfd_factory_registry *r, const tfd_session_options *options,
                                                  const char *name_prefix, void *host_ctx, tfd_device_list *out,
                                                  tfd_status *status);
/* NewDevice: one device of `type` (device_count[type] forced to 1).
 * NOT_FOUND when no factory is registered for the type. Caller owns the
 * returned reference. */
TFD_API tfd_code tfd_factory_registry_new_device(const tfd_factory_registry *r, const char *device_type,
                                                    const tfd_session_options *options, const char *name_prefix,
                                                    void *host_ctx, tfd_device **out, tfd_status *status);

#ifdef __cplusplus
}
#endif
#endif
