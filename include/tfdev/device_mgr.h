/* tfdev device manager: fast lookup of a fixed set of devices.
 *
 * TensorFlow's DeviceMgr: each device is found by its full, legacy, local
 * (/device:CPU:0) and legacy local (CPU:0) names; per-type counts; the
 * attribute list; the mapping string; clearing resource containers on all
 * devices. Holds a reference on each device. */
#ifndef TFDEV_DEVICE_MGR_H
#define TFDEV_DEVICE_MGR_H

#include "tfdev/export.h"

#include <stddef.h>

#include "tfdev/device.h"
#include "tfdev/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tfd_device_mgr tfd_device_mgr;

/* A manager over n devices, each of which it keeps a reference to, in *out (NULL on failure); the
 * caller frees it with tfd_device_mgr_free. INVALID_ARGUMENT when two devices answer to the same name. */
TFD_API tfd_code tfd_device_mgr_new(tfd_device *const *devices, size_t n, tfd_device_mgr **out, tfd_status *status);
TFD_API void tfd_device_mgr_free(tfd_device_mgr *m);
TFD_API size_t tfd_device_mgr_size(const tfd_device_mgr *m);
/* ListDevices, by index; borrowed. */
TFD_API tfd_device *tfd_device_mgr_get(const tfd_device_mgr *m, size_t i);
/* LookupDevice by full, legacy, local or legacy local name. Borrowed; NULL
 * with INVALID_ARGUMENT ("<name> unknown device", listing the known names)
 * when there is none. */
TFD_API tfd_device *tfd_device_mgr_lookup(const tfd_device_mgr *m, const char *name, tfd_status *status);
/* NumDeviceType. */
TFD_API int tfd_device_mgr_num_device_type(const tfd_device_mgr *m, const char *type);
/* DeviceMappingString: "name -> physical_device_desc\n" for every device
 * with a description. The caller frees it with free(). */
TFD_API char *tfd_device_mgr_mapping_string(const tfd_device_mgr *m);
/* ClearContainers: cleans up each named container on every device; an empty
 * list (n == 0) means each device's default container. */
TFD_API tfd_code tfd_device_mgr_clear_containers(tfd_device_mgr *m, const char *const *containers, size_t n,
                                                 tfd_status *status);

#ifdef __cplusplus
}
#endif
#endif
