/* Conv3D's and the 3-D pools' checks and volume sizes, which their CPU kernels (k_conv3d.c, where these
 * are implemented) and device kernels (dk_conv3d.c) share: TensorFlow's texts, one copy. */
#ifndef TFDEV_RUNTIME_CONV3D_LOGIC_H
#define TFDEV_RUNTIME_CONV3D_LOGIC_H

#include <stdbool.h>
#include <stdint.h>

#include "../kernel.h"

/* NDHWC volumes: planes, rows, columns in [3] arrays. */
typedef struct tfd_conv3d_dims {
  bool max; /* MaxPool3D (else AvgPool3D; unused for Conv3D) */
  int64_t n, c, o; /* batch, input channels, output channels (Conv3D) */
  int64_t in[3], k[3], out[3], pad[3], stride[3]; /* pad: before, TensorFlow's SAME split */
} tfd_conv3d_dims;

/* MaxPool3D/AvgPool3D (x) and Conv3D (x, filter): false after failing the kernel. */
bool tfd_pool3d_shape(tfd_kernel_context *c, tfd_kernel *k, tfd_conv3d_dims *s);
bool tfd_conv3d_shape(tfd_kernel_context *c, tfd_kernel *k, tfd_conv3d_dims *s);
/* Conv3D's checks once its output is known not to be empty (dilations, channel match). */
bool tfd_conv3d_ready(tfd_kernel_context *c, tfd_kernel *k);

#endif
