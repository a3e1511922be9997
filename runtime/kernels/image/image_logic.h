/* The attributes, argument checks and output shapes of the image and normalisation ops, which their
 * CPU kernels (k_image.c) and device kernels (dk_image.c, MirrorPad of dk_shape.c) share:
 * FusedBatchNorm and FusedBatchNormV3 (inference), ResizeBilinear and ResizeNearestNeighbor,
 * MirrorPad's mode and Conv2DBackpropInput's window (its shapes are conv_logic.h's). False (or an
 * error code) with the error reported. */
#ifndef TFDEV_RUNTIME_IMAGE_LOGIC_H
#define TFDEV_RUNTIME_IMAGE_LOGIC_H

#include "../kernel.h"
#include "../nn/window.h"

typedef enum tfd_image_op {
  TFD_IMAGE_BATCH_NORM,
  TFD_IMAGE_RESIZE_BILINEAR,
  TFD_IMAGE_RESIZE_NEAREST,
  TFD_IMAGE_MIRROR_PAD,
  TFD_IMAGE_CONV_BACKPROP_INPUT
} tfd_image_op;

/* The op's attributes. tfd_setup_image keeps them in k->state, where the device kernels, whose
 * setups run it first, read them. */
typedef struct tfd_image_attrs {
  tfd_image_op op;
  float epsilon;                         /* FusedBatchNorm */
  bool align_corners, half_pixel_centers; /* resizes */
  bool symmetric;                        /* MirrorPad: SYMMETRIC (else REFLECT) */
  tfd_window_attrs win;                  /* Conv2DBackpropInput */
} tfd_image_attrs;
/* Reads and checks them (training, data formats, modes, flags that exclude each other); errors name
 * the node and op. */
tfd_code tfd_image_attrs_read(const tfd_node_def *node, const char *op, tfd_image_attrs *a, tfd_status *status);

/* FusedBatchNorm(V3) (x, scale, offset, mean, variance): x float32 NHWC, the others float32 vectors
 * of x's depth. */
bool tfd_batch_norm_check(tfd_kernel_context *c, const tfd_kernel *k);
/* Its outputs after y: batch_mean and batch_variance pass mean and variance through, as
 * TensorFlow's inference kernel does, and so do the first two reserve spaces; V3's third is empty.
 * The input output o copies (-1: none) and *len, output o's length. */
int tfd_batch_norm_passthrough(int o, int64_t depth, int64_t *len);

/* ResizeBilinear and ResizeNearestNeighbor (images, size; the op in `a`): images of a real dtype
 * tfdev holds, rank 4; size two positive int32s; the output [n, oh, ow, ch] (total elements) within
 * memory's counts, and its dtype: float32 from ResizeBilinear, as TensorFlow's, the images' from
 * ResizeNearestNeighbor. */
typedef struct tfd_resize_shape {
  int64_t n, h, w, ch, oh, ow, total;
  tfd_dtype out_dtype;
} tfd_resize_shape;
bool tfd_resize_check(tfd_kernel_context *c, const tfd_kernel *k, const tfd_image_attrs *a, tfd_resize_shape *r);

/* CropAndResize (k_crop_and_resize.c; method and extrapolation_value in k->code and k->alpha):
 * TensorFlow's checks of the image, boxes (read on the host: boxes_host, box_ind_host, crop_host)
 * and crop size, and the output's geometry. */
typedef struct tfd_crop_geometry {
  int64_t n, batch, h, w, depth, crop_h, crop_w;
} tfd_crop_geometry;
bool tfd_crop_and_resize_check(tfd_kernel_context *c, const tfd_kernel *k, const tfd_tensor *image, const tfd_tensor *boxes_host,
                               const tfd_tensor *box_ind_host, const tfd_tensor *crop_host, tfd_crop_geometry *g);

/* ImageProjectiveTransformV3 (k_image_transform.c; interpolation in k->code, 1 bilinear; fill mode in
 * k->index, TFD_DM_FILL_*): TensorFlow's checks of the images, transforms, output shape and fill
 * value (the last three read on the host), and the output's size. */
bool tfd_image_transform_check(tfd_kernel_context *c, const tfd_kernel *k, const tfd_tensor *images, const tfd_tensor *transforms,
                               const tfd_tensor *shape_host, const tfd_tensor *fill, int64_t *oh, int64_t *ow);

#endif
