/* Reference kernels, NHWC, for Conv2D, DepthwiseConv2dNative, MaxPool and AvgPool on the dtypes
 * other than float32 that TensorFlow's CPU kernels register (restricted to those tfdev holds);
 * k_conv.c keeps float32 and hands every other input dtype here. */
#ifndef TFDEV_RUNTIME_CONV_GENERIC_H
#define TFDEV_RUNTIME_CONV_GENERIC_H

#include <stdint.h>

#include "../kernel.h"
#include "window.h"

typedef enum tfd_conv_generic_op {
  TFD_CONV_GENERIC_CONV2D,    /* float64, int32 (wraps around), float16 */
  TFD_CONV_GENERIC_DEPTHWISE, /* float64, float16 */
  TFD_CONV_GENERIC_MAXPOOL,   /* float64, int32, int64, uint8, float16 */
  TFD_CONV_GENERIC_AVGPOOL    /* float64, float16 */
} tfd_conv_generic_op;

/* Runs op on c->inputs (the image, then the HWIO filter unless pooling) into c->outputs[0], with
 * win's padding, strides and dilations and, for pooling, ksize (height, width). Checks the inputs
 * first: rank 4, a filter of the input's dtype, a dtype the op takes (errors name the dtypes).
 * float16 is computed in float32 (products summed in float32, the result rounded to nearest even);
 * int32 convolutions sum in uint32, wrapping around as TensorFlow's int32 contraction does. */
void tfd_conv_generic_run(tfd_kernel *k, tfd_kernel_context *c, tfd_conv_generic_op op, const tfd_window_attrs *win,
                          const int64_t ksize[2]);

#endif
