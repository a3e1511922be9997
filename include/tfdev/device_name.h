/* tfdev device names: TensorFlow's DeviceNameUtils in C.
 *
 * Full names look like /job:j/replica:r/task:t/device:TYPE:i; the legacy
 * spelling /job:j/replica:r/task:t/type:i (lower-case type) and partial,
 * wildcard specs (/device:CPU:*, /cpu:0, /job:w) parse too. A parsed name
 * is a plain value: no allocation, copy it freely. */
#ifndef TFDEV_DEVICE_NAME_H
#define TFDEV_DEVICE_NAME_H

#include "tfdev/export.h"

#include <stdbool.h>
#include <stddef.h>

#include "tfdev/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Longest job or device type name, including the terminating NUL. */
#define TFD_NAME_PART_MAX 128
/* Large enough for any name these functions produce. */
#define TFD_DEVICE_NAME_MAX 512

typedef struct tfd_parsed_name {
  bool has_job, has_replica, has_task, has_type, has_id;
  char job[TFD_NAME_PART_MAX];
  int replica;
  int task;
  char type[TFD_NAME_PART_MAX];
  int id;
} tfd_parsed_name;

/* ParseFullName. "" and "/" parse to an all-wildcard name. On failure
 * returns INVALID_ARGUMENT with a message quoting the name and saying
 * what is wrong at which position. */
TFD_API tfd_code tfd_device_name_parse(const char *name, tfd_parsed_name *out, tfd_status *status);
/* ParseLocalName: "CPU:0" style. Returns false if `name` is not one. */
TFD_API bool tfd_device_name_parse_local(const char *name, tfd_parsed_name *out);

/* The writers below fill `out` (TFD_DEVICE_NAME_MAX bytes). */
/* FullName /job:j/replica:r/task:t/device:TYPE:i; INVALID_ARGUMENT unless p is complete. */
TFD_API tfd_code tfd_device_name_full(const tfd_parsed_name *p, char *out, tfd_status *status);
/* LegacyName /job:j/replica:r/task:t/type:i (type lower-cased); needs a complete p. */
TFD_API tfd_code tfd_device_name_legacy(const tfd_parsed_name *p, char *out, tfd_status *status);
/* LocalName /device:TYPE:i; needs type and id. */
TFD_API tfd_code tfd_device_name_local(const tfd_parsed_name *p, char *out, tfd_status *status);
/* LegacyLocalName TYPE:i; needs type and id. */
TFD_API tfd_code tfd_device_name_legacy_local(const tfd_parsed_name *p, char *out, tfd_status *status);
/* ParsedNameToString: the canonical spelling of any spec, wildcards
 * included ("/job:w/device:GPU:*"). Never fails. */
TFD_API void tfd_device_name_canonical(const tfd_parsed_name *p, char *out);
/* CanonicalizeDeviceName: completes `name` (full or local) with the parts
 * of the fully specified `basename`. */
TFD_API tfd_code tfd_device_name_canonicalize(const char *name, const char *basename, char *out, tfd_status *status);

/* IsSpecification: every part `spec` sets is set to the same value in `name`. */
TFD_API bool tfd_device_name_is_specification(const tfd_parsed_name *spec, const tfd_parsed_name *name);
/* IsCompleteSpecification: `name`, which must be fully specified (else INVALID_ARGUMENT naming it;
 * TensorFlow CHECK-fails there), matches every part `pattern` sets. *matches is written only on OK. */
TFD_API tfd_code tfd_device_name_is_complete_specification(const tfd_parsed_name *pattern, const tfd_parsed_name *name,
                                                           bool *matches, tfd_status *status);
/* IsFullySpecified: job, replica, task, type and id all present. */
TFD_API bool tfd_device_name_is_complete(const tfd_parsed_name *p);
/* IsSameAddressSpace: same job, replica and task, all present. */
TFD_API bool tfd_device_name_is_same_address_space(const tfd_parsed_name *a, const tfd_parsed_name *b);
/* MergeDevNames: merges `other` into `target`. Conflicting jobs, replicas
 * or tasks are INVALID_ARGUMENT; conflicting types or ids too, unless
 * allow_soft_placement, which then drops the conflicting parts from target
 * (type conflict drops type and id). target is left unchanged on error. */
TFD_API tfd_code tfd_device_name_merge(tfd_parsed_name *target, const tfd_parsed_name *other, bool allow_soft_placement,
                                       tfd_status *status);
/* SplitDeviceName: "/job:a/replica:0/task:1/device:GPU:2" -> task
 * "/job:a/replica:0/task:1" and device "GPU:2". INVALID_ARGUMENT when the
 * name does not parse or lacks a type or id. */
TFD_API tfd_code tfd_device_name_split(const char *name, char *task_out, char *device_out, tfd_status *status);

#ifdef __cplusplus
}
#endif
#endif
