/* float32 NHWC convolutions (regular and depthwise) on oneDNN, filters packed once (see k_conv.c).
 *
 * A tfd_dnnl_conv belongs to one convolution kernel. It keeps, for the last few input shapes it
 * ran (and weight buffers, when the filter is constant), a oneDNN convolution primitive with the
 * bias, a residual addend and the activation in its epilogue and the filter reordered into the primitive's
 * layout. A filter that is not constant is reordered on every run. Built without oneDNN, _new
 * returns NULL and the kernel keeps its im2col path. */
#ifndef TFDEV_RUNTIME_DNNL_CONV_H
#define TFDEV_RUNTIME_DNNL_CONV_H

#include <stdbool.h>
#include <stdint.h>

#include "activation.h"
#include "tfdev/status.h"

typedef struct tfd_dnnl_conv tfd_dnnl_conv;

/* One run's geometry, TensorFlow's: NHWC input, HWIO filter (HW, C, multiplier for depthwise),
 * strides, dilations (1: none) and the padding before and after each spatial dimension. */
typedef struct tfd_dnnl_conv_shape {
  int64_t n, h, w, c, kh, kw, o, oh, ow;
  int64_t stride[2], dilation[2], pad_before[2], pad_after[2];
} tfd_dnnl_conv_shape;

/* depthwise: the filter is [kh, kw, c, o / c]. add: a tensor of the output's shape is added before
 * the activation (a residual connection). NULL when oneDNN is not built in; the caller frees with
 * tfd_dnnl_conv_free. */
tfd_dnnl_conv *tfd_dnnl_conv_new(bool depthwise, bool bias, tfd_activation act, float alpha, bool filter_constant,
                                 bool add);
void tfd_dnnl_conv_free(tfd_dnnl_conv *p);

/* y = act(conv(x, filter) + bias [+ addend]) with at most `threads` threads; addend may be y itself
 * (the output made in the addend's buffer). Thread-safe, calls on one object serialised. Non-OK
 * (its status set) when oneDNN cannot do it: the caller falls back. */
tfd_code tfd_dnnl_conv_run(tfd_dnnl_conv *p, const tfd_dnnl_conv_shape *s, const float *x, const float *filter,
                           const float *bias, const float *addend, float *y, int threads, tfd_status *status);

#endif
