/* CropAndResize (TensorFlow's crop_and_resize_op.cc, CPU): each box [y1, x1, y2, x2] (normalised,
 * may be flipped or reach outside the image) of image box_ind[b] is sampled on a crop_h x crop_w grid,
 * bilinearly or at the nearest pixel, into a float32 [n, crop_h, crop_w, depth]; a sample outside the
 * image is extrapolation_value. The sampling is TensorFlow's, in float arithmetic:
 *   in_y = crop_h > 1 ? y1 * (H - 1) + y * (y2 - y1) * (H - 1) / (crop_h - 1) : 0.5 * (y1 + y2) * (H - 1). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../../core/half.h"
#include "image_logic.h"
#include "../kernel.h"

/* Image element i as float (the kernel's static_cast<float>). */
static inline float pixel(const void *img, tfd_dtype dt, int64_t i) {
  switch (dt) {
  case TFD_FLOAT32: return ((const float *)img)[i];
  case TFD_FLOAT64: return (float)((const double *)img)[i];
  case TFD_INT32: return (float)((const int32_t *)img)[i];
  case TFD_INT64: return (float)((const int64_t *)img)[i];
  case TFD_UINT8: return (float)((const uint8_t *)img)[i];
  default: return tfd_half_to_float(((const uint16_t *)img)[i]);
  }
}

/* A float as TensorFlow's StrCat writes it: "nan" for any NaN. */
static const char *fmt_float(float v, char *buf, size_t cap) {
  if (isnan(v)) snprintf(buf, cap, "nan");
  else snprintf(buf, cap, "%g", (double)v);
  return buf;
}

static void shape_string(const tfd_tensor *t, char *buf, size_t cap) {
  size_t n = (size_t)snprintf(buf, cap, "[");
  for (int d = 0; d < tfd_tensor_ndims(t) && n < cap; d++)
    n += (size_t)snprintf(buf + n, cap - n, "%s%lld", d ? "," : "", (long long)tfd_tensor_dim(t, d));
  if (n < cap) snprintf(buf + n, cap - n, "]");
}

/* image_logic.h */
bool tfd_crop_and_resize_check(tfd_kernel_context *c, const tfd_kernel *k, const tfd_tensor *image, const tfd_tensor *boxes,
                               const tfd_tensor *box_ind, const tfd_tensor *crop, tfd_crop_geometry *g) {
  char sh[160];
  if (tfd_tensor_ndims(image) != 4) {
    shape_string(image, sh, sizeof sh);
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "input image must be 4-D%s", sh);
    return false;
  }
  int64_t batch = tfd_tensor_dim(image, 0), H = tfd_tensor_dim(image, 1), W = tfd_tensor_dim(image, 2),
          depth = tfd_tensor_dim(image, 3);
  if (H <= 0 || W <= 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "image dimensions must be positive");
    return false;
  }
  int64_t n = 0;
  const float *bx = tfd_tensor_const_data(boxes);
  if (!(tfd_tensor_numel(boxes) == 0 && tfd_tensor_numel(box_ind) == 0)) {
    if (tfd_tensor_ndims(boxes) != 2) {
      shape_string(boxes, sh, sizeof sh);
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "boxes must be 2-D%s", sh);
      return false;
    }
    n = tfd_tensor_dim(boxes, 0);
    if (tfd_tensor_dim(boxes, 1) != 4) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "boxes must have 4 columns");
      return false;
    }
    for (int64_t i = 0; i < n; i++)
      for (int j = 0; j < 4; j++)
        if (!isfinite(bx[i * 4 + j])) {
          char v[4][32];
          tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "boxes values must be finite, received boxes[%lld]: %s, %s, %s, %s",
                          (long long)i, fmt_float(bx[i * 4], v[0], 32), fmt_float(bx[i * 4 + 1], v[1], 32),
                          fmt_float(bx[i * 4 + 2], v[2], 32), fmt_float(bx[i * 4 + 3], v[3], 32));
          return false;
        }
    if (tfd_tensor_ndims(box_ind) != 1) {
      shape_string(box_ind, sh, sizeof sh);
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "box_index must be 1-D%s", sh);
      return false;
    }
    if (tfd_tensor_dim(box_ind, 0) != n) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "box_index has incompatible shape");
      return false;
    }
  }
  if (tfd_tensor_ndims(crop) != 1) {
    shape_string(crop, sh, sizeof sh);
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "crop_size must be 1-D%s", sh);
    return false;
  }
  if (tfd_tensor_dim(crop, 0) != 2) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "crop_size must have two elements");
    return false;
  }
  const int32_t *cs = tfd_tensor_const_data(crop);
  int64_t ch = cs[0], cw = cs[1];
  if (ch <= 0 || cw <= 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "crop dimensions must be positive");
    return false;
  }
  const int32_t *bi = tfd_tensor_const_data(box_ind);
  for (int64_t b = 0; b < n; b++)
    if (bi[b] < 0 || bi[b] >= batch) {
      tfd_kernel_fail(c, k, TFD_OUT_OF_RANGE, "box_index has values outside [0, batch_size)");
      return false;
    }
  *g = (tfd_crop_geometry){n, batch, H, W, depth, ch, cw};
  return true;
}

static void k_crop_and_resize(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_tensor *image = c->inputs[0], *boxes = c->inputs[1], *box_ind = c->inputs[2];
  tfd_crop_geometry g;
  if (!tfd_crop_and_resize_check(c, k, image, boxes, box_ind, c->inputs[3], &g)) return;
  int64_t n = g.n, H = g.h, W = g.w, depth = g.depth, ch = g.crop_h, cw = g.crop_w;
  const float *bx = tfd_tensor_const_data(boxes);
  const int32_t *bi = tfd_tensor_const_data(box_ind);
  int64_t dims[4] = {n, ch, cw, depth};
  tfd_tensor *out = tfd_kernel_alloc(c, k, TFD_FLOAT32, dims, 4);
  if (!out) return;
  c->outputs[0] = out;
  if (tfd_tensor_numel(out) == 0) return;
  float *o = tfd_tensor_data(out);
  const void *img = tfd_tensor_const_data(image);
  tfd_dtype dt = tfd_tensor_dtype(image);
  bool nearest = k->code == 1;
  float extrap = (float)k->alpha;
  for (int64_t b = 0; b < n; b++) {
    const float y1 = bx[b * 4], x1 = bx[b * 4 + 1], y2 = bx[b * 4 + 2], x2 = bx[b * 4 + 3];
    const int64_t base = bi[b] * H * W * depth;
    const float hs = ch > 1 ? (y2 - y1) * (float)(H - 1) / (float)(ch - 1) : 0;
    const float ws = cw > 1 ? (x2 - x1) * (float)(W - 1) / (float)(cw - 1) : 0;
    for (int64_t y = 0; y < ch; y++) {
      float *row = o + ((b * ch + y) * cw) * depth;
      const float in_y = ch > 1 ? y1 * (float)(H - 1) + (float)y * hs : 0.5f * (y1 + y2) * (float)(H - 1);
      if (in_y < 0 || in_y > (float)(H - 1)) {
        for (int64_t i = 0; i < cw * depth; i++) row[i] = extrap;
        continue;
      }
      const int64_t top = (int64_t)floorf(in_y), bottom = (int64_t)ceilf(in_y), near_y = (int64_t)roundf(in_y);
      const float y_lerp = in_y - (float)top;
      for (int64_t x = 0; x < cw; x++) {
        float *px = row + x * depth;
        const float in_x = cw > 1 ? x1 * (float)(W - 1) + (float)x * ws : 0.5f * (x1 + x2) * (float)(W - 1);
        if (in_x < 0 || in_x > (float)(W - 1)) {
          for (int64_t d = 0; d < depth; d++) px[d] = extrap;
          continue;
        }
        if (nearest) {
          const int64_t at = base + (near_y * W + (int64_t)roundf(in_x)) * depth;
          for (int64_t d = 0; d < depth; d++) px[d] = pixel(img, dt, at + d);
          continue;
        }
        const int64_t left = (int64_t)floorf(in_x), right = (int64_t)ceilf(in_x);
        const float x_lerp = in_x - (float)left;
        const int64_t tl = base + (top * W + left) * depth, tr = base + (top * W + right) * depth;
        const int64_t bl = base + (bottom * W + left) * depth, br = base + (bottom * W + right) * depth;
        for (int64_t d = 0; d < depth; d++) {
          const float top_left = pixel(img, dt, tl + d), top_right = pixel(img, dt, tr + d);
          const float bottom_left = pixel(img, dt, bl + d), bottom_right = pixel(img, dt, br + d);
          const float t = top_left + (top_right - top_left) * x_lerp;
          const float bo = bottom_left + (bottom_right - bottom_left) * x_lerp;
          px[d] = t + (bo - t) * y_lerp;
        }
      }
    }
  }
}

tfd_code tfd_setup_crop_and_resize(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  const char *method = tfd_attr_string(init->node, "method", "bilinear");
  if (strcmp(method, "bilinear") != 0 && strcmp(method, "nearest") != 0)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "method must be 'bilinear' or 'nearest'%s", method);
  k->code = strcmp(method, "nearest") == 0;
  k->alpha = tfd_attr_float(init->node, "extrapolation_value", 0.0);
  k->compute = k_crop_and_resize;
  return TFD_OK;
}
