/* ImageProjectiveTransformV3 (TensorFlow's image_ops.h ProjectiveGenerator, CPU): output pixel (x, y)
 * of image b reads the input at ((a0 x + a1 y + a2) / k, (b0 x + b1 y + b2) / k), k = c0 x + c1 y + 1,
 * from transform row b (or the only row); fill_mode maps coordinates outside the image (CONSTANT keeps
 * them, so they read fill_value; REFLECT, WRAP, NEAREST fold them back), then the value is the nearest
 * pixel or the bilinear blend of four, each outside pixel reading fill_value. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../../core/half.h"
#include "../device_math_elem.h"
#include "image_logic.h"
#include "../kernel.h"

static inline double get(const void *p, tfd_dtype dt, int64_t i) {
  switch (dt) {
  case TFD_FLOAT32: return ((const float *)p)[i];
  case TFD_FLOAT64: return ((const double *)p)[i];
  case TFD_INT32: return ((const int32_t *)p)[i];
  case TFD_INT64: return (double)((const int64_t *)p)[i];
  case TFD_UINT8: return ((const uint8_t *)p)[i];
  default: return tfd_half_to_float(((const uint16_t *)p)[i]);
  }
}

/* T(v): the kernel's static_cast from float (integers truncate). */
static inline void put(void *p, tfd_dtype dt, int64_t i, float v) {
  switch (dt) {
  case TFD_FLOAT32: ((float *)p)[i] = v; break;
  case TFD_FLOAT64: ((double *)p)[i] = v; break;
  case TFD_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
  case TFD_INT64: ((int64_t *)p)[i] = (int64_t)v; break;
  case TFD_UINT8: ((uint8_t *)p)[i] = (uint8_t)(int64_t)v; break;
  default: ((uint16_t *)p)[i] = tfd_float_to_half(v); break;
  }
}

typedef struct sampler {
  const char *in;
  tfd_dtype dt;
  size_t es;
  int64_t H, W, C;
  const char *fill; /* fill_value as one element of dt */
} sampler;

/* read_with_fill_value: the element at (b, y, x, ch), or fill_value outside the image. */
static inline const char *at(const sampler *s, int64_t b, int64_t y, int64_t x, int64_t ch) {
  if (y < 0 || y >= s->H || x < 0 || x >= s->W) return s->fill;
  return s->in + (size_t)(((b * s->H + y) * s->W + x) * s->C + ch) * s->es;
}

/* image_logic.h */
bool tfd_image_transform_check(tfd_kernel_context *c, const tfd_kernel *k, const tfd_tensor *images, const tfd_tensor *tr,
                               const tfd_tensor *shape, const tfd_tensor *fillv, int64_t *oh, int64_t *ow) {
  if (tfd_tensor_ndims(images) != 4) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Input images must have rank 4");
    return false;
  }
  int64_t n = tfd_tensor_dim(images, 0);
  if (tfd_tensor_ndims(tr) != 2 || (tfd_tensor_dim(tr, 0) != n && tfd_tensor_dim(tr, 0) != 1) || tfd_tensor_dim(tr, 1) != 8) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Input transform should be num_images x 8 or 1 x 8");
    return false;
  }
  if (tfd_tensor_ndims(shape) != 1) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "output shape must be 1-dimensional");
    return false;
  }
  if (tfd_tensor_numel(shape) != 2) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "output shape must have two elements");
    return false;
  }
  const int32_t *os = tfd_tensor_const_data(shape);
  if (os[0] <= 0 || os[1] <= 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "output dimensions must be positive");
    return false;
  }
  if (tfd_tensor_ndims(fillv) != 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "fill_value must be a scalar");
    return false;
  }
  *oh = os[0], *ow = os[1];
  return true;
}

static void k_image_transform(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_tensor *images = c->inputs[0], *tr = c->inputs[1], *fillv = c->inputs[3];
  int64_t oh, ow;
  if (!tfd_image_transform_check(c, k, images, tr, c->inputs[2], fillv, &oh, &ow)) return;
  int64_t n = tfd_tensor_dim(images, 0);
  tfd_dtype dt = tfd_tensor_dtype(images);
  sampler s = {tfd_tensor_const_data(images), dt, tfd_dtype_size(dt), tfd_tensor_dim(images, 1),
               tfd_tensor_dim(images, 2), tfd_tensor_dim(images, 3), NULL};
  char fill[8];
  put(fill, dt, 0, *(const float *)tfd_tensor_const_data(fillv));
  s.fill = fill;
  int64_t dims[4] = {n, oh, ow, s.C};
  tfd_tensor *out = tfd_kernel_alloc(c, k, dt, dims, 4);
  if (!out) return;
  c->outputs[0] = out;
  if (tfd_tensor_numel(out) == 0) return;
  char *o = tfd_tensor_data(out);
  const float *tf = tfd_tensor_const_data(tr);
  bool bilinear = k->code == 1;
  int mode = (int)k->index;
  for (int64_t b = 0; b < n; b++) {
    const float *t = tfd_tensor_dim(tr, 0) == 1 ? tf : tf + 8 * b;
    for (int64_t y = 0; y < oh; y++)
      for (int64_t x = 0; x < ow; x++) {
        int64_t base = ((b * oh + y) * ow + x) * s.C;
        float in_x, in_y;
        if (!tfd_dm_transform_point(t, x, y, mode, s.H, s.W, &in_x, &in_y)) {
          for (int64_t ch = 0; ch < s.C; ch++) memcpy(o + (size_t)(base + ch) * s.es, fill, s.es);
          continue;
        }
        if (!bilinear) {
          int64_t ry = tfd_dm_transform_index(in_y, true), rx = tfd_dm_transform_index(in_x, true);
          for (int64_t ch = 0; ch < s.C; ch++) memcpy(o + (size_t)(base + ch) * s.es, at(&s, b, ry, rx, ch), s.es);
          continue;
        }
        const float y0 = floorf(in_y), x0 = floorf(in_x), y1 = y0 + 1, x1 = x0 + 1;
        const int64_t iy0 = tfd_dm_transform_index(in_y, false), ix0 = tfd_dm_transform_index(in_x, false);
        const bool far = iy0 == -2 || ix0 == -2;
        const int64_t iy1 = far ? -2 : iy0 + 1, ix1 = far ? -2 : ix0 + 1;
        const int64_t iy0f = far ? -2 : iy0, ix0f = far ? -2 : ix0;
        for (int64_t ch = 0; ch < s.C; ch++) {
          const float v00 = (float)get(at(&s, b, iy0f, ix0f, ch), dt, 0), v01 = (float)get(at(&s, b, iy0f, ix1, ch), dt, 0);
          const float v10 = (float)get(at(&s, b, iy1, ix0f, ch), dt, 0), v11 = (float)get(at(&s, b, iy1, ix1, ch), dt, 0);
          const float vf = (x1 - in_x) * v00 + (in_x - x0) * v01;
          const float vc = (x1 - in_x) * v10 + (in_x - x0) * v11;
          put(o, dt, base + ch, (y1 - in_y) * vf + (in_y - y0) * vc);
        }
      }
  }
}

tfd_code tfd_setup_image_transform(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  const char *interp = tfd_attr_string(init->node, "interpolation", ""), *fill = tfd_attr_string(init->node, "fill_mode", "CONSTANT");
  if (strcmp(interp, "NEAREST") == 0) k->code = 0;
  else if (strcmp(interp, "BILINEAR") == 0) k->code = 1;
  else return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "Invalid interpolation %s. Supported types: NEAREST, BILINEAR", interp);
  static const char *const modes[] = {"CONSTANT", "REFLECT", "WRAP", "NEAREST"}; /* TFD_DM_FILL_* order */
  k->index = -1;
  for (int m = 0; m < 4; m++)
    if (strcmp(fill, modes[m]) == 0) k->index = m;
  if (k->index < 0)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "Invalid mode %s. Supported types: REFLECT, WRAP, CONSTANT, NEAREST", fill);
  k->compute = k_image_transform;
  return TFD_OK;
}
