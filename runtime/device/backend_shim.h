/* A backend module's link to the runtime that loaded it (see backend_shim.c). */
#ifndef TFDEV_RUNTIME_BACKEND_SHIM_H
#define TFDEV_RUNTIME_BACKEND_SHIM_H

#include "backend_module.h"

/* Called once by the module's init, before any other runtime function. */
void tfd_backend_shim_init(const tfd_backend_host *host);

/* What every GPU factory's CreateDevices does (TensorFlow's BaseGPUDeviceFactory): the session's
 * visible_devices picks and orders the num_physical devices (at most 64), device_count["GPU"]
 * caps them, and GPU:i is made by make(arg, name, i, physical id of GPU:i, options) and pushed
 * onto out, which then holds the only reference. make sets status when it returns NULL. */
typedef tfd_device *(*tfd_backend_gpu_new_fn)(void *arg, const char *name, int tf_id, int physical_id,
                                              const tfd_session_options *options, tfd_status *status);
tfd_code tfd_backend_gpu_devices_create(const tfd_session_options *options, const char *name_prefix,
                                        int num_physical, tfd_backend_gpu_new_fn make, void *arg,
                                        tfd_device_list *out, tfd_status *status);

#endif
