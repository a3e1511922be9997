/* The small pieces of host logic that kernels of many families use, CPU kernels (k_*.c) and device
 * kernels (dk_*.c) alike: reading a shape-like input's values on the host, an axis input, index
 * coordinates in error messages, sub-products of a tensor's dimensions. Each family's own checks
 * and output shapes, shared by its CPU and device kernels so that an error text or a shape rule lives
 * in one place, are in the *_logic.h headers beside this one (shape, gather, reduce, cwise, matmul,
 * conv, image), which read their inputs through tfd_kernel_host_input. */
#ifndef TFDEV_RUNTIME_KERNEL_SHARED_H
#define TFDEV_RUNTIME_KERNEL_SHARED_H

#include "kernel.h"

/* Input i where the host can read its values: a new reference to the input when it is in host
 * memory, as every input of a CPU kernel is (and a device's int32 and handles); a copy out of device
 * memory otherwise (a device kernel's int64 shapes and axes). NULL with the error reported. Defined in
 * dk_common.c beside tfd_dk_move, which it is made of, so that dk_common.c's host fallback can use it
 * without calling back into kernel_shared.c. */
tfd_tensor *tfd_kernel_host_input(tfd_kernel_context *c, const tfd_kernel *k, int i);
/* A shape as TensorFlow's TensorShape::DebugString writes it ("[2,3]", "[]"; "<unknown>" for nd < 0)
 * into buf (truncated to cap); TFD_SHAPE_TEXT_CAP holds any. The second takes a tensor's shape,
 * leaving out its first `from` dimensions. */
#define TFD_SHAPE_TEXT_CAP (TFD_MAX_DIMS * 21 + 16)
const char *tfd_shape_text(char *buf, size_t cap, const int64_t *dims, int nd);
const char *tfd_tensor_shape_text(char *buf, size_t cap, const tfd_tensor *t, int from);

/* A scalar (or one-element) int axis input i, read on the host, normalised into [0, rank); false
 * with INVALID_ARGUMENT naming `what` reported when it is not an index, not one element or out of
 * range. */
bool tfd_kernel_read_axis(tfd_kernel_context *c, const tfd_kernel *k, int i, int rank, const char *what, int64_t *axis);

/* The product of t's dimensions [from, to). Callers ask only where the product is a count of
 * elements that exist (a non-empty tensor's, or an output's once it is known to be non-empty), so it
 * cannot overflow. */
int64_t tfd_dims_product(const tfd_tensor *t, int from, int to);

/* Concat (TensorFlow 1: concat_dim, values...) runs as ConcatV2 (values..., axis): its inputs in that
 * order, in buf when cap holds them, else in an array the caller frees (NULL, reported, when out of
 * memory). The tensors are borrowed from c. */
tfd_tensor **tfd_concat_v1_inputs(tfd_kernel_context *c, const tfd_kernel *k, tfd_tensor **buf, int cap);

/* "1,0": flat position i of a tensor shaped like t in its first `upto` dimensions (TensorFlow's index
 * notation in errors), written into buf. */
const char *tfd_index_coords(const tfd_tensor *t, int64_t i, int upto, char *buf, size_t cap);

/* SparseReshape's plan (k_sparse_fill.c): TensorFlow's checks and texts on the indices' shape and on
 * host copies of input_shape and new_shape, the output's dense shape (a -1 resolved) and both shapes'
 * row-major strides. same: the shapes agree, and TensorFlow hands the inputs on. False with the error
 * reported. */
typedef struct tfd_sparse_reshape {
  int64_t nnz, in_rank, out_rank;
  int64_t out_dims[TFD_MAX_DIMS], in_stride[TFD_MAX_DIMS], out_stride[TFD_MAX_DIMS];
  bool same;
} tfd_sparse_reshape;
bool tfd_sparse_reshape_plan(tfd_kernel_context *c, const tfd_kernel *k, const tfd_tensor *ix, const tfd_tensor *in_shape,
                             const tfd_tensor *new_shape, tfd_sparse_reshape *plan);

/* AssignAddVariableOp's old + delta, made while the variable is locked: the CPU kernel adds on the
 * host; a device kernel puts an adder in tfd_kernel.dk_params that adds in device memory. NULL with
 * the error reported on failure. */
typedef struct tfd_variable_adder {
  tfd_tensor *(*add)(tfd_kernel *k, tfd_kernel_context *c, tfd_tensor *old, tfd_tensor *delta);
} tfd_variable_adder;

/* ---- where a container's elements live (TensorList, TensorArray) ----
 * On a device whose memory the host cannot touch (a GPU) the container kernels keep elements in that
 * memory: they allocate, zero and copy them with the device's math, and hand an element out in the
 * memory its dtype lives in there (one a CPU kernel set moves to the GPU when a GPU kernel reads it,
 * and back). On a CPU these are the kernel context's allocations, memset and memcpy. Handles and
 * int32 live in host memory on either. Each returns NULL or false with the error reported. */
/* Whether c's device keeps float32 outside host memory (a GPU). */
bool tfd_kernel_on_gpu(const tfd_kernel_context *c);
/* A new tensor in the memory dt lives in on c's device (the caller owns it). */
tfd_tensor *tfd_kernel_alloc_home(tfd_kernel_context *c, const tfd_kernel *k, tfd_dtype dt, const int64_t *dims, int nd);
/* t where the host can read it: a new reference, to t itself when it is in host memory. */
tfd_tensor *tfd_kernel_host_copy(tfd_kernel_context *c, const tfd_kernel *k, const tfd_tensor *t);
/* An element handed out (a new reference) in the memory its dtype lives in on c's device. */
tfd_tensor *tfd_kernel_item_home(tfd_kernel_context *c, const tfd_kernel *k, tfd_tensor *t);
/* A small output made on the host (lengths, shapes) moved to where its dtype lives; takes t's
 * reference and returns a new one. */
tfd_tensor *tfd_kernel_host_to_home(tfd_kernel_context *c, const tfd_kernel *k, tfd_tensor *t);
/* Elements [at, at + n) of dst become src's [from, from + n) (src moved to dst's memory first), or
 * zeros when src is NULL. */
bool tfd_kernel_put_elems(tfd_kernel_context *c, const tfd_kernel *k, tfd_tensor *dst, int64_t at, tfd_tensor *src,
                          int64_t from, int64_t n);

#endif
