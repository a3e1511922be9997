/* tfdev resource manager: per-device containers of named, reference-counted resources.
 *
 * TensorFlow's ResourceMgr: a resource is found by (container, type, name);
 * the empty container name means the manager's default container (the
 * device's job, "localhost" for local devices). Cleaning up a container
 * drops it and every resource in it; a resource still referenced elsewhere
 * lives on until its last reference goes. Thread-safe. */
#ifndef TFDEV_RESOURCE_MGR_H
#define TFDEV_RESOURCE_MGR_H

#include "tfdev/export.h"

#include <stddef.h>

#include "tfdev/status.h"
#include "tfdev/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tfd_resource tfd_resource;
typedef struct tfd_resource_mgr tfd_resource_mgr;

/* A resource of `type_name` (copied) holding `data`; destroy(data) runs when
 * the last reference goes (destroy may be NULL). Caller owns one reference. */
TFD_API tfd_code tfd_resource_new(const char *type_name, void *data, void (*destroy)(void *data), tfd_resource **out, tfd_status *status);
/* A resource of type "Tensor" holding a reference to t. */
TFD_API tfd_code tfd_tensor_resource_new(tfd_tensor *t, tfd_resource **out, tfd_status *status);
TFD_API tfd_resource *tfd_resource_ref(tfd_resource *r);
TFD_API void tfd_resource_unref(tfd_resource *r);
TFD_API const char *tfd_resource_type_name(const tfd_resource *r);
TFD_API void *tfd_resource_data(const tfd_resource *r);
/* The tensor of a "Tensor" resource (borrowed), NULL for other types. */
TFD_API tfd_tensor *tfd_resource_tensor(const tfd_resource *r);

/* default_container is copied; NULL or "" means "localhost". The caller frees the manager with
 * tfd_resource_mgr_free. */
TFD_API tfd_resource_mgr *tfd_resource_mgr_new(const char *default_container);
TFD_API void tfd_resource_mgr_free(tfd_resource_mgr *rm);
TFD_API const char *tfd_resource_mgr_default_container(const tfd_resource_mgr *rm);

/* Adds r under (container, type of r, name), taking a reference.
 * ALREADY_EXISTS if the slot is taken; INVALID_ARGUMENT for an empty name. */
TFD_API tfd_code tfd_resource_mgr_create(tfd_resource_mgr *rm, const char *container, const char *name, tfd_resource *r,
                                         tfd_status *status);
/* Returns a new reference, or NULL with NOT_FOUND naming container, type and name. */
TFD_API tfd_resource *tfd_resource_mgr_lookup(tfd_resource_mgr *rm, const char *container, const char *type_name,
                                              const char *name, tfd_status *status);
/* Removes one resource; NOT_FOUND if it is not there. */
TFD_API tfd_code tfd_resource_mgr_delete(tfd_resource_mgr *rm, const char *container, const char *type_name,
                                         const char *name, tfd_status *status);
/* Drops a whole container; a container that does not exist is not an error. */
TFD_API tfd_code tfd_resource_mgr_cleanup(tfd_resource_mgr *rm, const char *container, tfd_status *status);
/* Number of containers. */
TFD_API size_t tfd_resource_mgr_num_containers(tfd_resource_mgr *rm);
/* The container names, sorted, as a NULL-terminated array taken under the
 * manager's lock. One allocation: the caller frees it with free(). NULL when
 * out of memory. */
TFD_API char **tfd_resource_mgr_container_names(tfd_resource_mgr *rm);
/* Number of resources in a container (0 if absent). */
TFD_API size_t tfd_resource_mgr_container_size(tfd_resource_mgr *rm, const char *container);

#ifdef __cplusplus
}
#endif
#endif
