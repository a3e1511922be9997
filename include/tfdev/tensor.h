/* tfdev tensors: a dtype, a shape and a reference-counted, 64-byte aligned buffer.
 *
 * Tensors are shared objects: every function that returns a tfd_tensor*
 * hands the caller one reference, released with tfd_tensor_unref. Views made
 * by tfd_tensor_slice share the buffer of the tensor they come from. */
#ifndef TFDEV_TENSOR_H
#define TFDEV_TENSOR_H

#include "tfdev/export.h"

#include <stddef.h>
#include <stdbool.h>
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
  /* TensorFlow's DT_COMPLEX64: a float32 real part then a float32 imaginary part, the layout of C's
   * float complex and of numpy's complex64 */
  /* TensorFlow's DT_STRING: each element is a byte string of any length (embedded zeros kept). The
   * elements are references to immutable strings the tensor owns: read them with tfd_tensor_string_at
   * and write them with tfd_tensor_set_string, never through tfd_tensor_data. Such tensors live in
   * host memory. */
  TFD_STRING = 7,
  TFD_COMPLEX64 = 8,
  TFD_INT64 = 9,
  TFD_BOOL = 10,
  TFD_FLOAT16 = 19, /* TensorFlow's DT_HALF: stored as IEEE half, computed in float32 */
  TFD_RESOURCE = 20, /* a handle to a resource (a variable): container and name */
  /* TensorFlow's DT_VARIANT: each element is a reference to a runtime object (a TensorList). Such
   * tensors live in host memory and are only made and read by kernels: they cannot be made from or
   * read as bytes, nor written in place. */
  TFD_VARIANT = 21
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

/* "float32", ... (a static string); NULL for a value that is not a tfd_dtype. */
TFD_API const char *tfd_dtype_name(tfd_dtype dt);
/* Parses "float32" etc., and TensorFlow's names ("DT_FLOAT", "DT_INT64", ...);
 * returns 0 for an unknown name. */
TFD_API tfd_dtype tfd_dtype_from_name(const char *name);
/* Bytes per element; 0 for a value that is not a tfd_dtype. A string element is a reference
 * (sizeof(void *)): its bytes are counted apart. */
TFD_API size_t tfd_dtype_size(tfd_dtype dt);

typedef struct tfd_tensor tfd_tensor;

/* A new tensor with uninitialised contents (resource tensors are zeroed:
 * empty container and name; string tensors hold empty strings). The buffer comes from `allocator` (the tensor
 * keeps a reference on it), or from the system when allocator is NULL.
 * Fails with INVALID_ARGUMENT for a bad dtype, rank or negative dimension,
 * or a shape whose element count or byte size does not fit in int64, and
 * RESOURCE_EXHAUSTED when the allocator (or the system) refuses. *out: the
 * tensor (the caller's reference), NULL on error. */
TFD_API tfd_code tfd_tensor_new(tfd_allocator *allocator, tfd_dtype dtype, const int64_t *dims, int ndims,
                                   tfd_tensor **out, tfd_status *status);
/* Like tfd_tensor_new, then copies `nbytes` bytes from `data`; nbytes must be
 * exactly the tensor's byte size (INVALID_ARGUMENT otherwise). Bool bytes are
 * normalised to 0/1; resource handles must have NUL-terminated container and
 * name fields (INVALID_ARGUMENT naming the handle otherwise). String and
 * variant tensors cannot be made from bytes (INVALID_ARGUMENT). */
TFD_API tfd_code tfd_tensor_from_bytes(tfd_allocator *allocator, tfd_dtype dtype, const int64_t *dims, int ndims,
                                          const void *data, size_t nbytes, tfd_tensor **out, tfd_status *status);
/* A view of element `index` along the first dimension (rank decreases by
 * one), sharing t's buffer. OUT_OF_RANGE for a bad index or a scalar. */
TFD_API tfd_code tfd_tensor_slice(tfd_tensor *t, int64_t index, tfd_tensor **out, tfd_status *status);

/* A tensor of another shape with the same dtype and element count, sharing
 * t's buffer: a new reference the caller gives back with tfd_tensor_unref.
 * INVALID_ARGUMENT when the element counts differ. */
TFD_API tfd_code tfd_tensor_reshape(tfd_tensor *t, const int64_t *dims, int ndims, tfd_tensor **out, tfd_status *status);

/* Another reference to t (NULL stays NULL); each is given back with tfd_tensor_unref. */
TFD_API tfd_tensor *tfd_tensor_ref(tfd_tensor *t);
TFD_API void tfd_tensor_unref(tfd_tensor *t);

TFD_API tfd_dtype tfd_tensor_dtype(const tfd_tensor *t);
TFD_API int tfd_tensor_ndims(const tfd_tensor *t);
/* Dimension i (0-based); -1 when i is out of range. */
TFD_API int64_t tfd_tensor_dim(const tfd_tensor *t, int i);
TFD_API int64_t tfd_tensor_numel(const tfd_tensor *t);
TFD_API size_t tfd_tensor_byte_size(const tfd_tensor *t);
/* Whether the host can read and write the elements: false for a tensor in a GPU's memory, whose
 * data pointer is a device address. Tensors a session fetches, and those tfd_device_run_op returns,
 * are always on the host. */
TFD_API bool tfd_tensor_on_host(const tfd_tensor *t);
/* The tensor's elements, owned by the tensor (a device address when not on the host). A variant
 * or string tensor's elements are references the runtime keeps: callers may not write them. */
TFD_API void *tfd_tensor_data(tfd_tensor *t);
TFD_API const void *tfd_tensor_const_data(const tfd_tensor *t);
/* Number of tensors sharing this tensor's buffer (1 when unshared). */
TFD_API int tfd_tensor_buffer_refcount(const tfd_tensor *t);

/* ---- string tensors ----
 * Element i of a string tensor t: its bytes, borrowed from t (valid while the caller holds t and
 * nobody sets the element), with a NUL after the *len bytes for convenience (the string itself may
 * hold zeros). The empty string for an element never set. NULL when t is not a string tensor, i is
 * outside [0, numel) or t is NULL; *len is 0 then. len may be NULL. */
TFD_API const char *tfd_tensor_string_at(const tfd_tensor *t, int64_t i, size_t *len);
/* Sets element i of string tensor t to a copy of the len bytes at `bytes` (NULL when len is 0),
 * under the in-place writing rules below: a tensor fresh from tfd_tensor_new may be filled this way.
 * INVALID_ARGUMENT for a tensor that is not string or an index outside [0, numel),
 * RESOURCE_EXHAUSTED when the copy cannot be allocated (the element is then unchanged). */
TFD_API tfd_code tfd_tensor_set_string(tfd_tensor *t, int64_t i, const void *bytes, size_t len, tfd_status *status);
/* Bytes held by the strings of t's elements (each counted once per element, even when elements
 * share one string), beside tfd_tensor_byte_size's table of references; 0 for other dtypes. */
TFD_API size_t tfd_tensor_string_bytes(const tfd_tensor *t);

/* ---- writing a tensor in place ----
 * So a loop that feeds the same inputs step after step need not allocate:
 * write new values into the tensor it fed last time. Only the holder of the
 * sole reference to a tensor whose buffer nobody else shares (no view, no
 * run in flight that was fed it, no output that aliases it) may write it;
 * otherwise the call is FAILED_PRECONDITION and t is unchanged, so a
 * running step never sees its input change under it. Tensors outside host
 * memory and resource tensors are refused (FAILED_PRECONDITION and
 * INVALID_ARGUMENT). */

/* Copies src's elements into t: same dtype and element count (the shapes
 * may differ), else INVALID_ARGUMENT naming both. src == t is a no-op.
 * String elements are shared with src, not copied (they are immutable). */
TFD_API tfd_code tfd_tensor_copy_from(tfd_tensor *t, const tfd_tensor *src, tfd_status *status);
/* Copies nbytes bytes (exactly t's byte size, else INVALID_ARGUMENT) into
 * t's elements; bool bytes are normalised to 0/1. String tensors are refused
 * (INVALID_ARGUMENT): set their elements with tfd_tensor_set_string. */
TFD_API tfd_code tfd_tensor_copy_from_bytes(tfd_tensor *t, const void *data, size_t nbytes, tfd_status *status);
/* Sets every element of t to *element, one value of t's dtype
 * (tfd_dtype_size(dtype) bytes at element). String tensors are refused
 * (INVALID_ARGUMENT). */
TFD_API tfd_code tfd_tensor_fill(tfd_tensor *t, const void *element, tfd_status *status);

#ifdef __cplusplus
}
#endif
#endif
