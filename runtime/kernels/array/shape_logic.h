/* The argument checks and output shapes of the ops that rearrange or make data, which their CPU
 * kernels (k_basic.c, k_shape.c, Pad of k_conv.c, MirrorPad of k_image.c, k_random.c) and their
 * device kernels (dk_shape.c, dk_state.c) share: Transpose, ConcatV2, Pack, Unpack, Split, SplitV,
 * Slice, StridedSlice, Tile, Pad, PadV2, MirrorPad, Range, Fill and the random ops' shape. Each
 * function checks the op's inputs in TensorFlow's order and words, reads shape-like inputs on the
 * host (tfd_kernel_host_input), and fills what the kernel needs to move the elements; false with the
 * error reported against the node. The elements themselves are each kernel's own business. */
#ifndef TFDEV_RUNTIME_SHAPE_LOGIC_H
#define TFDEV_RUNTIME_SHAPE_LOGIC_H

#include "../kernel.h"

/* Transpose (x, perm): perm[i], the input dimension output dimension i reads, and the output's
 * dims (the input's rank of each). */
bool tfd_transpose_shape(tfd_kernel_context *c, const tfd_kernel *k, int64_t *perm, int64_t *dims);

/* ConcatV2 (values..., axis): the axis normalised into [0, rank) and the output's dims. */
bool tfd_concat_shape(tfd_kernel_context *c, const tfd_kernel *k, int64_t *axis, int64_t *dims);

/* Pack (values..., attr axis in k->index): the axis normalised into [0, rank + 1) and the output's
 * dims (rank + 1 of them). */
bool tfd_pack_shape(tfd_kernel_context *c, const tfd_kernel *k, int64_t *axis, int64_t *dims);

/* Unpack (value, attr axis in k->index, one output per element along it): the axis normalised. */
bool tfd_unpack_axis(tfd_kernel_context *c, const tfd_kernel *k, int64_t *axis);

/* Split (split_dim, value) and SplitV (value, size_splits, split_dim): the axis and each output's
 * size along it (c->num_outputs of them). */
bool tfd_split_sizes(tfd_kernel_context *c, const tfd_kernel *k, int64_t *axis, int64_t *sizes);
bool tfd_split_v_sizes(tfd_kernel_context *c, const tfd_kernel *k, int64_t *axis, int64_t *sizes);

/* Slice (x, begin, size): where the slice begins and the output's dims (size's -1 resolved). */
bool tfd_slice_shape(tfd_kernel_context *c, const tfd_kernel *k, int64_t *begin, int64_t *dims);

/* StridedSlice (x, begin, end, strides; the masks in k->state): the plan shape inference makes. */
bool tfd_strided_slice_shape(tfd_kernel_context *c, const tfd_kernel *k, tfd_strided_slice_plan *p);
/* StridedSlice's output: `strided` (p->dims, as the copy made it) viewed as p->final, which drops
 * and adds the masks' dimensions; takes over the caller's reference to `strided`. */
void tfd_strided_slice_output(tfd_kernel_context *c, const tfd_kernel *k, tfd_tensor *strided,
                              const tfd_strided_slice_plan *p);

/* Tile (x, multiples): the output's dims. */
bool tfd_tile_shape(tfd_kernel_context *c, const tfd_kernel *k, int64_t *dims);

/* Pad (x, paddings) and PadV2 (x, paddings, constant_values): the padding before each dimension and
 * the output's dims. */
bool tfd_pad_shape(tfd_kernel_context *c, const tfd_kernel *k, int64_t *before, int64_t *dims);
/* MirrorPad (x, paddings), REFLECT (pads up to size - 1) or `symmetric` (up to size). */
bool tfd_mirror_pad_shape(tfd_kernel_context *c, const tfd_kernel *k, bool symmetric, int64_t *before, int64_t *dims);

/* Range (start, limit, delta): the count of values and the bounds they are made from. */
typedef struct tfd_range {
  int64_t n;
  bool integer;                 /* int32 or int64: start, limit and delta as integers */
  int64_t start, limit, delta;  /* integer ranges */
  double fstart, fdelta;        /* every range (integers converted) */
} tfd_range;
bool tfd_range_size(tfd_kernel_context *c, const tfd_kernel *k, tfd_range *r);

/* Fill (dims, value): the output's dims, *nd of them. */
bool tfd_fill_shape(tfd_kernel_context *c, const tfd_kernel *k, int64_t *dims, int *nd);

/* A shape given as input i (a vector of at most TFD_MAX_DIMS sizes, none negative): its *nd sizes. */
bool tfd_shape_input(tfd_kernel_context *c, const tfd_kernel *k, int i, int64_t *dims, int *nd);

/* BroadcastTo (x, shape): the output's dims (*nd of them) and, per output dimension, x's element
 * stride (0 where x repeats), with TensorFlow's texts. */
bool tfd_broadcast_to_shape(tfd_kernel_context *c, const tfd_kernel *k, int64_t *dims, int *nd, int64_t *strides);
/* DepthToSpace (to_space) and SpaceToDepth of x [N, H, W, C] by block b: x's dims and the output's,
 * with TensorFlow's checks and texts. */
bool tfd_depth_space_shape(tfd_kernel_context *c, const tfd_kernel *k, bool to_space, int64_t b, int64_t *in, int64_t *out);
/* ReverseV2's axis list (int32/int64) or, with bools, Reverse's bool per dimension, read from axes (a
 * host tensor) for an input of nd >= 1 dimensions: rev[d] whether dimension d is reversed, with
 * TensorFlow's checks and texts. */
bool tfd_reverse_dims(tfd_kernel_context *c, const tfd_kernel *k, bool bools, const tfd_tensor *axes, int nd, bool *rev);
/* MatrixBandPart's checks of in and its num_lower/num_upper scalars (host tensors), with TensorFlow's
 * texts; the two bounds in *lo_out and *hi_out. */
bool tfd_band_part_bounds(tfd_kernel_context *c, const tfd_kernel *k, const tfd_tensor *in, const tfd_tensor *lo_t,
                          const tfd_tensor *hi_t, int64_t *lo_out, int64_t *hi_out);

/* RandomUniform and RandomStandardNormal (shape): the output's dims, *nd of them. */
bool tfd_random_shape(tfd_kernel_context *c, const tfd_kernel *k, int64_t *dims, int *nd);
/* Multinomial (logits [batch, classes], num_samples int32 scalar), implemented in k_random_ext.c:
 * TensorFlow's checks; *samples the count. False, reported, when one fails. */
bool tfd_multinomial_check(tfd_kernel_context *c, const tfd_kernel *k, int64_t *samples);
/* RandomUniformInt (shape, minval, maxval; Tout in k->dst): the shape and the two bounds, checked with
 * TensorFlow's texts (implemented in k_random_ext.c, beside the CPU kernel). */
bool tfd_uniform_int_args(tfd_kernel_context *c, const tfd_kernel *k, int64_t *dims, int *nd, int64_t *bound);
/* OneHot (indices, depth (int32, on the host), on_value, off_value; axis in k->index): TensorFlow's
 * checks; the output's dims (rank of indices + 1), the axis the depth goes in and the depth. */
/* Cumsum, Cumprod (x, axis: a scalar int32/int64 read on the host): TensorFlow's checks; the axis,
 * a negative one counted from the end. */
bool tfd_scan_axis(tfd_kernel_context *c, const tfd_kernel *k, int64_t *axis);
bool tfd_one_hot_shape(tfd_kernel_context *c, const tfd_kernel *k, int64_t *dims, int *axis, int64_t *depth);

#endif
