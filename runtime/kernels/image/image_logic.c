/* image_logic.h: the image and normalisation ops' attributes, checks and shapes, for their CPU and
 * device kernels. */
#include <string.h>

#include "../../core/checked.h"
#include "../../core/status_internal.h"
#include "../nn/conv_logic.h"
#include "image_logic.h"
#include "../kernel_shared.h"

tfd_code tfd_image_attrs_read(const tfd_node_def *node, const char *op, tfd_image_attrs *a, tfd_status *st) {
  const char *name = tfd_node_def_name(node);
  *a = (tfd_image_attrs){0};
  if (strncmp(op, "FusedBatchNorm", 14) == 0) {
    a->op = TFD_IMAGE_BATCH_NORM;
    if (tfd_attr_bool(node, "is_training", true))
      return tfd_status_setf(st, TFD_UNIMPLEMENTED, "node '%s' (%s): is_training=true is not supported (inference only)",
                             name, op);
    const char *fmt = tfd_attr_string(node, "data_format", "NHWC");
    if (strcmp(fmt, "NHWC") != 0)
      return tfd_status_setf(st, TFD_UNIMPLEMENTED, "node '%s' (%s): data_format %s is not supported (NHWC only)", name,
                             op, fmt);
    a->epsilon = (float)tfd_attr_float(node, "epsilon", 0.0001);
    return TFD_OK;
  }
  if (strcmp(op, "MirrorPad") == 0) {
    a->op = TFD_IMAGE_MIRROR_PAD;
    const char *mode = tfd_attr_string(node, "mode", "");
    if (strcmp(mode, "REFLECT") != 0 && strcmp(mode, "SYMMETRIC") != 0)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): mode must be REFLECT or SYMMETRIC, got '%s'", name,
                             op, mode);
    a->symmetric = strcmp(mode, "SYMMETRIC") == 0;
    return TFD_OK;
  }
  if (strcmp(op, "Conv2DBackpropInput") == 0) {
    a->op = TFD_IMAGE_CONV_BACKPROP_INPUT;
    return tfd_window_attrs_read(node, op, true, &a->win, st);
  }
  a->op = strcmp(op, "ResizeBilinear") == 0 ? TFD_IMAGE_RESIZE_BILINEAR : TFD_IMAGE_RESIZE_NEAREST;
  a->align_corners = tfd_attr_bool(node, "align_corners", false);
  a->half_pixel_centers = tfd_attr_bool(node, "half_pixel_centers", false);
  if (a->align_corners && a->half_pixel_centers)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (%s): If half_pixel_centers is True, align_corners must be False.", name, op);
  return TFD_OK;
}

/* ---- FusedBatchNorm ---- */
bool tfd_batch_norm_check(tfd_kernel_context *c, const tfd_kernel *k) {
  static const char *const what[] = {"x", "scale", "offset", "mean", "variance"};
  tfd_tensor *x = c->inputs[0];
  if (!tfd_conv_check_nhwc(c, k, x, "x")) return false;
  int64_t depth = tfd_tensor_dim(x, 3);
  for (int i = 1; i < 5; i++) {
    const tfd_tensor *t = c->inputs[i];
    if (tfd_tensor_dtype(t) != TFD_FLOAT32 || tfd_tensor_ndims(t) != 1 || tfd_tensor_dim(t, 0) != depth) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "%s must be a float32 vector of %lld elements (x's depth)", what[i],
                      (long long)depth);
      return false;
    }
  }
  return true;
}

int tfd_batch_norm_passthrough(int o, int64_t depth, int64_t *len) {
  *len = o == 5 ? 0 : depth;
  return o == 5 ? -1 : o % 2 ? 3 : 4;
}

/* ---- ResizeBilinear, ResizeNearestNeighbor ---- */
/* The images' dtypes both resizes take (TensorFlow's real number types that tfdev holds). */
#define RESIZE_TYPES                                                                                           \
  ((1u << TFD_FLOAT32) | (1u << TFD_FLOAT64) | (1u << TFD_INT32) | (1u << TFD_INT64) | (1u << TFD_UINT8) | \
   (1u << TFD_FLOAT16))

bool tfd_resize_check(tfd_kernel_context *c, const tfd_kernel *k, const tfd_image_attrs *a, tfd_resize_shape *r) {
  tfd_tensor *x = c->inputs[0], *size = c->inputs[1];
  tfd_dtype dt = tfd_tensor_dtype(x);
  if (tfd_tensor_ndims(x) != 4 || (unsigned)dt >= 32 || !(RESIZE_TYPES & (1u << dt))) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                    "images must be a float32, float64, int32, int64, uint8 or float16 tensor of rank 4 (NHWC), got %s of rank %d",
                    tfd_dtype_name(dt), tfd_tensor_ndims(x));
    return false;
  }
  if (tfd_tensor_dtype(size) != TFD_INT32 || tfd_tensor_ndims(size) != 1 || tfd_tensor_dim(size, 0) != 2) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "size must be an int32 vector of 2 elements");
    return false;
  }
  tfd_tensor *sh = tfd_kernel_host_input(c, k, 1);
  if (!sh) return false;
  int64_t n = tfd_tensor_dim(x, 0), h = tfd_tensor_dim(x, 1), w = tfd_tensor_dim(x, 2), ch = tfd_tensor_dim(x, 3);
  int64_t oh = tfd_tensor_get_index(sh, 0), ow = tfd_tensor_get_index(sh, 1);
  tfd_tensor_unref(sh);
  if (oh <= 0 || ow <= 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "size must be positive, got [%lld, %lld]", (long long)oh, (long long)ow);
    return false;
  }
  int64_t total;
  if (!tfd_checked_mul(n, oh, &total) || !tfd_checked_mul(total, ow, &total) || !tfd_checked_mul(total, ch, &total) ||
      total > INT64_MAX / 8) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "the output's size overflows");
    return false;
  }
  if ((h == 0 || w == 0) && total > 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "cannot resize an empty image of size [%lld, %lld]", (long long)h,
                    (long long)w);
    return false;
  }
  *r = (tfd_resize_shape){n, h, w, ch, oh, ow, total, a->op == TFD_IMAGE_RESIZE_NEAREST ? dt : TFD_FLOAT32};
  return true;
}
