/* tfdev device sets: the devices a graph may use, looked up by name or spec.
 *
 * TensorFlow's DeviceSet: devices in insertion order, a name map holding
 * both the full and the legacy name of each, and a client device. The set
 * holds a reference on each device. */
#ifndef TFDEV_DEVICE_SET_H
#define TFDEV_DEVICE_SET_H

#include "tfdev/export.h"

#include <stddef.h>

#include "tfdev/device.h"
#include "tfdev/device_factory.h"
#include "tfdev/device_name.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tfd_device_set tfd_device_set;

/* An empty set, or NULL when out of memory; the caller frees it with tfd_device_set_free. */
TFD_API tfd_device_set *tfd_device_set_new(void);
TFD_API void tfd_device_set_free(tfd_device_set *s);
/* AddDevice. ALREADY_EXISTS when a device of the same name is present. */
TFD_API tfd_code tfd_device_set_add(tfd_device_set *s, tfd_device *d, tfd_status *status);
TFD_API size_t tfd_device_set_size(const tfd_device_set *s);
/* Borrowed; NULL when out of range. */
TFD_API tfd_device *tfd_device_set_get(const tfd_device_set *s, size_t i);
/* FindDeviceByName (full or legacy name); borrowed, NULL if absent. */
TFD_API tfd_device *tfd_device_set_find_by_name(const tfd_device_set *s, const char *name);
/* FindMatchingDevices: fills out[0..cap) with the devices `spec` matches
 * (borrowed), returns how many match (may exceed cap). */
TFD_API size_t tfd_device_set_find_matching(const tfd_device_set *s, const tfd_parsed_name *spec, tfd_device **out,
                                            size_t cap);
/* PrioritizedDeviceTypeList: the distinct device types, by the registry's
 * priority (highest first), then by name. Fills out[0..cap) with type
 * strings borrowed from the set's devices; returns the number of types. */
TFD_API size_t tfd_device_set_prioritized_types(const tfd_device_set *s, const tfd_factory_registry *registry,
                                                const char **out, size_t cap);
/* The client device (borrowed), NULL until set. */
TFD_API tfd_device *tfd_device_set_client_device(const tfd_device_set *s);
/* Sets the client device; it must be in the set (NOT_FOUND otherwise). */
TFD_API tfd_code tfd_device_set_set_client_device(tfd_device_set *s, tfd_device *d, tfd_status *status);

#ifdef __cplusplus
}
#endif
#endif
