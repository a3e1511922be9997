/* tfdev tensors: a dtype, a shape and a reference-counted, 64-byte aligned buffer.
 *
 * Tensors are shared objects: every function that returns a tfd_tensor*
 * hands the caller one reference, released with tfd_tensor_unref. Views made
 * by tfd_tensor_slice share the buffer of the tensor they come from. */
#ifndef TFDEV_TENSOR_H
#define TFDEV_TENSOR_H

#include <stddef.h>
#include <stdint.h>

#include "tfdev/allocator.h"
#include "tfdev/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Same numbering as tensorflow::DataType for the types tfdev supports. */
typedef enum tfd_dtype {
  TFD_FLOAT32 = 1,
  TFD_FLOAT64 = 2,
  TFD_INT32 = 3,
  TFD_UINT8 = 4,
  TFD_INT64 = 9,
  TFD_BOOL = 10,
  TFD_FLOAT16 = 19, /* TensorFlow's DT_HALF: stored as IEEE half, computed in float32 */
  TFD_RESOURCE = 20 /* a handle to a resource (a variable): container and name */
} tfd_dtype;

/* The element of a TFD_RESOURCE tensor. */
typedef struct tfd_resource_handle {
  char container[64];
  char name[128];
} tfd_resource_handle;

/* Highest rank a tensor may have. */
#define TFD_MAX_DIMS 8
/* Alignment of every tensor buffer, in bytes. */
#define TFD_TENSOR_ALIGNMENT 64

/* "float32", ...; NULL for a value that is not a tfd_dtype. */
const char *tfd_dtype_name(tfd_dtype dt);
/* Parses "float32" etc., and TensorFlow's names ("DT_FLOAT", "DT_INT64", ...);
 * returns 0 for an unknown name. */
tfd_dtype tfd_dtype_from_name(const char *name);
/* Bytes per element; 0 for a value that is not a tfd_dtype. */
size_t tfd_dtype_size(tfd_dtype dt);

typedef struct tfd_tensor tfd_tensor;

/* A new tensor with uninitialised contents (resource tensors are zeroed:
 * empty container and name). The buffer comes from `allocator` (the tensor
 * keeps a reference on it), or from the system when allocator is NULL.
 * Fails with INVALID_ARGUMENT for a bad dtype, rank or negative dimension,
 * or a shape whose element count or byte size does not fit in int64, and
 * RESOURCE_EXHAUSTED when the allocator (or the system) refuses. Returns
 * NULL on error. */
tfd_tensor *tfd_tensor_new(tfd_allocator *allocator, tfd_dtype dtype, const int64_t *dims, int ndims,
                           tfd_status *status);
/* Like tfd_tensor_new, then copies `nbytes` bytes from `data`; nbytes must be
 * exactly the tensor's byte size (INVALID_ARGUMENT otherwise). Bool bytes are
 * normalised to 0/1; resource handles must have NUL-terminated container and
 * name fields (INVALID_ARGUMENT naming the handle otherwise). */
tfd_tensor *tfd_tensor_from_bytes(tfd_allocator *allocator, tfd_dtype dtype, const int64_t *dims, int ndims,
                                  const void *data, size_t nbytes, tfd_status *status);
/* A view of element `index` along the first dimension (rank decreases by
 * one), sharing t's buffer. OUT_OF_RANGE for a bad index or a scalar. */
tfd_tensor *tfd_tensor_slice(tfd_tensor *t, int64_t index, tfd_status *status);

/* A tensor of another shape with the same dtype and element count, sharing
 * t's buffer. INVALID_ARGUMENT when the element counts differ. */
tfd_tensor *tfd_tensor_reshape(tfd_tensor *t, const int64_t *dims, int ndims, tfd_status *status);

tfd_tensor *tfd_tensor_ref(tfd_tensor *t);
void tfd_tensor_unref(tfd_tensor *t);

tfd_dtype tfd_tensor_dtype(const tfd_tensor *t);
int tfd_tensor_ndims(const tfd_tensor *t);
/* Dimension i (0-based); -1 when i is out of range. */
int64_t tfd_tensor_dim(const tfd_tensor *t, int i);
int64_t tfd_tensor_numel(const tfd_tensor *t);
size_t tfd_tensor_byte_size(const tfd_tensor *t);
/* The tensor's elements, owned by the tensor. */
void *tfd_tensor_data(tfd_tensor *t);
const void *tfd_tensor_const_data(const tfd_tensor *t);
/* Number of tensors sharing this tensor's buffer (1 when unshared). */
int tfd_tensor_buffer_refcount(const tfd_tensor *t);

#ifdef __cplusplus
}
#endif
#endif
