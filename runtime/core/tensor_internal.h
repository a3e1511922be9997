/* Tensor operations for the runtime only. */
#ifndef TFDEV_RUNTIME_TENSOR_INTERNAL_H
#define TFDEV_RUNTIME_TENSOR_INTERNAL_H

#include <stdbool.h>

#include "tfdev/tensor.h"

/* Takes n more references at once (n >= 0): an executor handing one output to many consumers. */
/* tfd_tensor_new, tfd_tensor_from_bytes, tfd_tensor_slice and tfd_tensor_reshape for the runtime's own
 * callers (kernels, readers): the handle returned (a new reference, the caller's), NULL with status set. */
tfd_tensor *tfd_tensor_make(tfd_allocator *allocator, tfd_dtype dtype, const int64_t *dims, int ndims, tfd_status *status);
tfd_tensor *tfd_tensor_make_from_bytes(tfd_allocator *allocator, tfd_dtype dtype, const int64_t *dims, int ndims,
                                       const void *data, size_t nbytes, tfd_status *status);
tfd_tensor *tfd_tensor_make_slice(tfd_tensor *t, int64_t index, tfd_status *status);
tfd_tensor *tfd_tensor_make_reshape(tfd_tensor *t, const int64_t *dims, int ndims, tfd_status *status);
void tfd_tensor_ref_n(tfd_tensor *t, int n);

/* Whether t is the only reference to itself and its buffer is shared with no view: a holder of
 * that reference may write the elements in place without anyone seeing it. */
bool tfd_tensor_is_exclusive(const tfd_tensor *t);

/* t in the memory `allocator` hands out (NULL: system memory): t itself, as a new reference, when
 * it is already there (host memory counts as one place, whichever allocator made it; device memory
 * as one place per allocator), else a new tensor from allocator holding a copy, moved by the device
 * memory's ops (allocator_internal.h). A host-to-device copy may still be in flight on return: the
 * device orders its later work after it. NULL with status set when allocation or a copy fails. */
tfd_tensor *tfd_tensor_copy_to(tfd_tensor *t, tfd_allocator *allocator, tfd_status *status);

/* Whether t's buffer is host memory (made by no allocator, or by one without device memory ops). */
bool tfd_tensor_in_host_memory(const tfd_tensor *t);

/* Copies the bytes of src, in host memory, into dst's buffer (an existing tensor of the same byte
 * size), wherever dst lives: into device memory through its ops, which hold a reference to src until
 * the bytes have moved (a copy may still be in flight on return: the device orders its later work
 * after it, and orders the copy after the work already queued on dst). FAILED_PRECONDITION when src
 * is not in host memory or the sizes differ. */
tfd_code tfd_tensor_copy_host_into(tfd_tensor *src, tfd_tensor *dst, tfd_status *status);

/* Marks fresh variant or string tensor t (from tfd_kernel_alloc) as borrowing its elements: a kernel
 * that moves elements copies their references in as bytes without taking them, and if the tensor
 * goes before tfd_tensor_adopt_elements, it drops none. No-op for other dtypes. */
void tfd_tensor_borrow_elements(tfd_tensor *t);
/* Takes a reference for each element of a borrowing tensor, which from then on owns them as any
 * other; no-op for a tensor that is not borrowing. Called when the kernel that filled t returns. */
void tfd_tensor_adopt_elements(tfd_tensor *t);

#endif
