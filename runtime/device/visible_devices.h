/* TensorFlow's visible_device_list: which physical GPUs a process uses, and in which order. */
#ifndef TFDEV_RUNTIME_VISIBLE_DEVICES_H
#define TFDEV_RUNTIME_VISIBLE_DEVICES_H

#include "tfdev/status.h"

/* Parses `list` ("0,2", white space allowed around ids; NULL or "" for all) against num_physical
 * devices into ids[0 .. *num_ids), where GPU:i is physical device ids[i]; ids holds at least
 * num_physical entries. INVALID_ARGUMENT with TensorFlow's texts, naming the entry at fault: one
 * that is not a number, an id out of range, a repeated id. */
tfd_code tfd_parse_visible_devices(const char *list, int num_physical, int *ids, int *num_ids, tfd_status *status);

#endif
