/* Sliding windows over NHWC images, as TensorFlow defines them (kernel_shape_util.cc): the
 * padding, strides and dilations attrs of convolutions and pooling, and the output size and
 * padding they give. Shared by the convolution, pooling and transposed-convolution kernels. */
#ifndef TFDEV_RUNTIME_WINDOW_H
#define TFDEV_RUNTIME_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

#include "tfdev/graph_def.h"

enum { TFD_PAD_VALID, TFD_PAD_SAME, TFD_PAD_EXPLICIT };

typedef struct tfd_window_attrs {
  int padding;               /* TFD_PAD_* */
  int64_t stride[2];         /* height, width */
  int64_t dilation[2];       /* 1: none */
  int64_t explicit_pad[4];   /* top, bottom, left, right (EXPLICIT) */
} tfd_window_attrs;

/* Reads data_format (NHWC only: UNIMPLEMENTED otherwise), padding, explicit_paddings, strides and,
 * when `dilations`, dilations; every value is kept within int32 so sizes computed from them stay in
 * range. Errors name the node and op. */
tfd_code tfd_window_attrs_read(const tfd_node_def *node, const char *op, bool dilations, tfd_window_attrs *w,
                               tfd_status *status);

/* One spatial dimension: the output size and the padding before the input. VALID: ceil((in - span
 * + 1) / stride); SAME: ceil(in / stride), padded by max((out - 1) * stride + span - in, 0) with the
 * smaller half before; EXPLICIT: the given pads. `d` is 0 (height) or 1 (width). False when the
 * sizes would overflow. */
bool tfd_window_size(const tfd_window_attrs *w, int d, int64_t in, int64_t k, int64_t *out, int64_t *pad_before);

/* The padding after the input that makes (in + before + after - span) / stride + 1 == out. */
int64_t tfd_window_pad_after(const tfd_window_attrs *w, int d, int64_t in, int64_t k, int64_t out, int64_t before);

/* TensorFlow's GetWindowedOutputSize (kernel_shape_util.cc) for SAME or VALID, for the kernels whose
 * windows have any number of spatial dimensions (k_conv3d.c, k_dilation.c): VALID gives
 * (in - span + stride) / stride, truncated, which is 0 for a window a little past the input and an
 * INVALID_ARGUMENT "Computed output size would be negative: ..." (TensorFlow's text) past that; SAME
 * gives ceil(in / stride) and the padding before. Overflowing sizes are INVALID_ARGUMENT too. */
tfd_code tfd_window_size_tf(int64_t in, int64_t k, int64_t dilation, int64_t stride, bool same, int64_t *out,
                            int64_t *pad_before, tfd_status *status);

#endif
