/* Dilation2D and MaxPoolWithArgmax's checks and geometry (k_dilation.c), shared by their CPU kernels
 * and device kernels (dk_conv.c), so an error text or a window rule lives in one place. */
#ifndef TFDEV_RUNTIME_DILATION_LOGIC_H
#define TFDEV_RUNTIME_DILATION_LOGIC_H

#include <stdbool.h>
#include <stdint.h>

#include "../kernel.h"

typedef struct tfd_window_geometry {
  int64_t n, h, w, c;   /* the input, NHWC */
  int64_t kh, kw;       /* taps (the filter's, or ksize) */
  int64_t oh, ow;       /* the output's spatial size */
  int64_t pad_t, pad_l; /* padding before, TensorFlow's SAME or 0 */
  int64_t stride[2], rate[2];
  bool with_batch; /* MaxPoolWithArgmax's include_batch_in_index */
} tfd_window_geometry;

/* Dilation2D (input [N, H, W, C], filter [KH, KW, C]) and MaxPoolWithArgmax (input): TensorFlow's
 * checks, and the geometry; false, reported, when one fails. The attributes are the CPU setup's
 * (tfd_setup_dilation, in k->state). */
bool tfd_dilation_check(tfd_kernel_context *c, const tfd_kernel *k, tfd_window_geometry *g);
bool tfd_argmax_pool_check(tfd_kernel_context *c, const tfd_kernel *k, tfd_window_geometry *g);

#endif
