/* How a convolution of device_math.h (tfd_dm_conv) is put to cuDNN, decided on the host before any
 * descriptor is made, in plain C so the CPU suite tests it (conv_plan_test.c):
 * - cuDNN pads symmetrically. TensorFlow's SAME padding often is not (a 3x3 stride-2 window on an
 *   even image pads 0 before and 1 after), so, as TensorFlow does for cuDNN, the smaller of the two
 *   goes to cuDNN and the rest is explicit: the input is copied into a zero-padded buffer (forward),
 *   or the input gradient is computed into such a buffer and cropped (backprop_input).
 * - cuDNN's dimensions are ints and its tensors are safest under 2^31 elements: the batch is cut
 *   into chunks of images that fit; a single image that does not fit goes to the direct kernel.
 * - depthwise filters [kh, kw, c, m] are a grouped convolution, c groups of one input channel. */
#ifndef TFDEV_GPU_KERNELS_CONV_PLAN_H
#define TFDEV_GPU_KERNELS_CONV_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../runtime/kernels/device_math.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Elements a cuDNN tensor of one call may hold. */
#define TFD_CONV_MAX_ELEMS ((int64_t)INT32_MAX)

typedef struct tfd_conv_plan {
  int64_t groups;          /* c for depthwise, else 1 */
  int64_t cg;              /* input channels per group */
  int64_t pad[2];          /* symmetric padding cuDNN applies (height, width) */
  int64_t extra_before[2]; /* zero rows/columns added explicitly before the image */
  int64_t extra_after[2];  /* ... and after it */
  bool explicit_pad;       /* any extra: the padded buffer is needed */
  int64_t hp, wp;          /* the image cuDNN sees: h + extras, w + extras */
  int64_t chunk_n;         /* images per cuDNN call (>= 1) */
  bool use_cudnn;          /* false: one image is beyond cuDNN's ints (the direct kernel runs instead) */
  bool empty_sum;          /* no input channel or tap: the convolution is 0 everywhere before its epilogue */
  int64_t filter_elems;    /* the transformed filter, [o, kh, kw, cg] */
} tfd_conv_plan;

/* Fills *plan for p. False, with why (cap bytes) saying what is inconsistent, when p's sizes do not
 * describe a convolution: a negative size or padding, a zero stride or dilation, an output size other
 * than floor((h + pad_before + pad_after - ((kh - 1) * dilation + 1)) / stride) + 1 (per dimension),
 * or a depthwise o that is not a multiple of c. */
bool tfd_conv_plan_make(const tfd_dm_conv *p, tfd_conv_plan *plan, char *why, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
