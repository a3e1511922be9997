/* Image and normalisation ops, NHWC, float32: FusedBatchNorm and FusedBatchNormV3 (inference),
 * ResizeBilinear and ResizeNearestNeighbor (images of any real dtype tfdev holds: float32, float64,
 * int32, int64, uint8, float16; ResizeBilinear reads them as float and makes float32, nearest keeps
 * the dtype), Conv2DBackpropInput (TensorFlow's transposed convolution), and MirrorPad (any dtype).
 *
 * FusedBatchNorm(V3) with is_training false: y = (x - mean) * scale / sqrt(variance + epsilon) +
 * offset over the channel (last) dimension. batch_mean and batch_variance pass the given mean and
 * variance through, as TensorFlow's inference kernel does; the reserve spaces (which only the
 * training gradient reads) hold them too, and V3's reserve_space_3 is empty. Training is refused.
 *
 * Resizes compute source coordinates as TensorFlow does (image_resizer_state.h), in float:
 * scale = align_corners && out > 1 ? (in - 1) / (out - 1) : in / out. Bilinear: source
 * (x + 0.5) * scale - 0.5 with half_pixel_centers, else x * scale; lower index max(floor, 0),
 * upper min(ceil, in - 1), weight source - floor. Nearest: (x + 0.5) * scale with
 * half_pixel_centers, else x * scale; round with align_corners, else floor; clamped to
 * [0, in - 1]. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/half.h"
#include "../../core/status_internal.h"
#include "../device_math_elem.h"
#include "../nn/conv_logic.h"
#include "image_logic.h"
#include "../kernel.h"
#include "../array/shape_logic.h"

#include <cblas.h>

/* ---- FusedBatchNorm, FusedBatchNormV3 ---- */
static void k_batch_norm(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_image_attrs *p = k->state;
  tfd_tensor *x = c->inputs[0];
  if (!tfd_batch_norm_check(c, k)) return;
  int64_t depth = tfd_tensor_dim(x, 3);
  tfd_tensor *y = tfd_kernel_alloc_like(c, k, TFD_FLOAT32, x);
  if (!y) return;
  c->outputs[0] = y;
  for (int o = 1; o < c->num_outputs; o++) {
    int64_t dims[1];
    int from = tfd_batch_norm_passthrough(o, depth, dims);
    tfd_tensor *t = tfd_kernel_alloc(c, k, TFD_FLOAT32, dims, 1);
    if (!t) return;
    c->outputs[o] = t;
    if (from >= 0 && depth > 0)
      memcpy(tfd_tensor_data(t), tfd_tensor_const_data(c->inputs[from]), (size_t)depth * sizeof(float));
  }
  if (depth == 0) return;
  const float *scale = tfd_tensor_const_data(c->inputs[1]), *offset = tfd_tensor_const_data(c->inputs[2]),
              *mean = tfd_tensor_const_data(c->inputs[3]), *var = tfd_tensor_const_data(c->inputs[4]);
  /* In TensorFlow's order: y = (x - mean) * (rsqrt(variance + epsilon) * scale) + offset. */
  float *factor = malloc((size_t)depth * sizeof(float));
  if (!factor) {
    tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory");
    return;
  }
  for (int64_t ch = 0; ch < depth; ch++) factor[ch] = tfd_dm_batch_norm_factor(scale[ch], var[ch], p->epsilon);
  const float *in = tfd_tensor_const_data(x);
  float *out = tfd_tensor_data(y);
  int64_t n = tfd_tensor_numel(x);
  for (int64_t i = 0; i < n; i += depth)
    for (int64_t ch = 0; ch < depth; ch++) out[i + ch] = (in[i + ch] - mean[ch]) * factor[ch] + offset[ch];
  free(factor);
}

/* ---- ResizeBilinear, ResizeNearestNeighbor: the coordinates are device_math_elem.h's, which the
 * device kernels share ---- */
typedef struct lerp_index {
  int64_t lo, hi;
  float frac;
} lerp_index;

static void bilinear_indices(int64_t in, int64_t out, float scale, bool half_pixel, lerp_index *ix) {
  for (int64_t i = 0; i < out; i++) tfd_dm_bilinear_index(i, in, scale, half_pixel, &ix[i].lo, &ix[i].hi, &ix[i].frac);
}

static int64_t nearest_index(int64_t i, int64_t in, float scale, const tfd_image_attrs *p) {
  return tfd_dm_nearest_index(i, in, scale, p->align_corners, p->half_pixel_centers);
}

/* Element i of a real-typed buffer as float, as TensorFlow's ResizeBilinear reads it (static_cast<float>). */
static inline float load_float(const void *p, tfd_dtype dt, int64_t i) {
  switch (dt) {
    case TFD_FLOAT64: return (float)((const double *)p)[i];
    case TFD_INT32: return (float)((const int32_t *)p)[i];
    case TFD_INT64: return (float)((const int64_t *)p)[i];
    case TFD_UINT8: return (float)((const uint8_t *)p)[i];
    case TFD_FLOAT16: return tfd_half_to_float(((const uint16_t *)p)[i]);
    default: return ((const float *)p)[i];
  }
}

static void k_resize(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_image_attrs *p = k->state;
  tfd_tensor *x = c->inputs[0];
  tfd_dtype dt = tfd_tensor_dtype(x);
  tfd_resize_shape r;
  if (!tfd_resize_check(c, k, p, &r)) return;
  int64_t n = r.n, h = r.h, w = r.w, ch = r.ch, oh = r.oh, ow = r.ow, total = r.total;
  int64_t dims[4] = {n, oh, ow, ch};
  tfd_tensor *y = tfd_kernel_alloc(c, k, r.out_dtype, dims, 4);
  if (!y) return;
  c->outputs[0] = y;
  if (total == 0) return;
  float sy = tfd_dm_resize_scale(h, oh, p->align_corners), sx = tfd_dm_resize_scale(w, ow, p->align_corners);
  if (p->op == TFD_IMAGE_RESIZE_NEAREST) {
    int64_t es = (int64_t)tfd_dtype_size(dt);
    const char *src = tfd_tensor_const_data(x);
    char *dst = tfd_tensor_data(y);
    for (int64_t b = 0; b < n; b++)
      for (int64_t oy = 0; oy < oh; oy++) {
        int64_t iy = nearest_index(oy, h, sy, p);
        for (int64_t ox = 0; ox < ow; ox++) {
          int64_t ixx = nearest_index(ox, w, sx, p);
          memcpy(dst + ((b * oh + oy) * ow + ox) * ch * es, src + ((b * h + iy) * w + ixx) * ch * es, (size_t)(ch * es));
        }
      }
    return;
  }
  const void *raw = tfd_tensor_const_data(x);
  const float *in = raw;
  float *out = tfd_tensor_data(y);
  /* oh and ow are at most the output's element count, which fits in memory: the tables do too. */
  lerp_index *ys = malloc((size_t)(oh + ow) * sizeof *ys);
  if (!ys) {
    tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory");
    return;
  }
  lerp_index *xs = ys + oh;
  bilinear_indices(h, oh, sy, p->half_pixel_centers, ys);
  bilinear_indices(w, ow, sx, p->half_pixel_centers, xs);
  if (dt != TFD_FLOAT32) { /* the same arithmetic on each value read as float */
    for (int64_t b = 0; b < n; b++)
      for (int64_t oy = 0; oy < oh; oy++) {
        int64_t top = (b * h + ys[oy].lo) * w * ch, bot = (b * h + ys[oy].hi) * w * ch;
        float fy = ys[oy].frac;
        for (int64_t ox = 0; ox < ow; ox++) {
          int64_t lo = xs[ox].lo * ch, hi = xs[ox].hi * ch;
          float fx = xs[ox].frac;
          float *o = out + ((b * oh + oy) * ow + ox) * ch;
          for (int64_t q = 0; q < ch; q++) {
            float tl = load_float(raw, dt, top + lo + q), tr = load_float(raw, dt, top + hi + q);
            float bl = load_float(raw, dt, bot + lo + q), br = load_float(raw, dt, bot + hi + q);
            o[q] = tfd_dm_lerp2(tl, tr, bl, br, fx, fy);
          }
        }
      }
    free(ys);
    return;
  }
  for (int64_t b = 0; b < n; b++)
    for (int64_t oy = 0; oy < oh; oy++) {
      const float *top = in + (b * h + ys[oy].lo) * w * ch, *bot = in + (b * h + ys[oy].hi) * w * ch;
      float fy = ys[oy].frac;
      for (int64_t ox = 0; ox < ow; ox++) {
        const float *tl = top + xs[ox].lo * ch, *tr = top + xs[ox].hi * ch;
        const float *bl = bot + xs[ox].lo * ch, *br = bot + xs[ox].hi * ch;
        float fx = xs[ox].frac;
        float *o = out + ((b * oh + oy) * ow + ox) * ch;
        for (int64_t q = 0; q < ch; q++) {
          o[q] = tfd_dm_lerp2(tl[q], tr[q], bl[q], br[q], fx, fy);
        }
      }
    }
  free(ys);
}

/* ---- MirrorPad: REFLECT mirrors without the edge (pads up to size - 1), SYMMETRIC with it (up to size) ---- */
static void k_mirror_pad(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_image_attrs *p = k->state;
  tfd_tensor *x = c->inputs[0];
  int nd = tfd_tensor_ndims(x);
  int64_t before[TFD_MAX_DIMS], in_dims[TFD_MAX_DIMS], dims[TFD_MAX_DIMS];
  if (!tfd_mirror_pad_shape(c, k, p->symmetric, before, dims)) return;
  for (int d = 0; d < nd; d++) in_dims[d] = tfd_tensor_dim(x, d);
  tfd_tensor *y = tfd_kernel_alloc(c, k, tfd_tensor_dtype(x), dims, nd);
  if (!y) return;
  c->outputs[0] = y;
  int64_t total = tfd_tensor_numel(y);
  if (total == 0) return;
  size_t es = tfd_dtype_size(tfd_tensor_dtype(x));
  const char *in = tfd_tensor_const_data(x);
  char *o = tfd_tensor_data(y);
  int64_t idx[TFD_MAX_DIMS] = {0};
  for (int64_t i = 0; i < total; i++) {
    int64_t src = 0;
    for (int d = 0; d < nd; d++) {
      int64_t j = idx[d] - before[d], n = in_dims[d];
      if (j < 0) j = p->symmetric ? -j - 1 : -j;
      else if (j >= n) j = p->symmetric ? 2 * n - 1 - j : 2 * n - 2 - j;
      src = src * n + j;
    }
    memcpy(o + i * (int64_t)es, in + src * (int64_t)es, es);
    for (int d = nd - 1; d >= 0; d--) {
      if (++idx[d] < dims[d]) break;
      idx[d] = 0;
    }
  }
}

/* ---- Conv2DBackpropInput: dx[n, iy, ix, ci] = sum dy[n, oy, ox, co] * f[ky, kx, ci, co] over
 * iy = oy * stride + ky * dilation - pad_before (TensorFlow's forward window on input_sizes).
 * Per output row: cols [ow, kh * kw * ci] = dy_row [ow, co] x f^T (sgemm), then added into dx. ---- */
static void k_conv_backprop_input(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_image_attrs *p = k->state;
  tfd_tensor *f = c->inputs[1], *dy = c->inputs[2];
  tfd_conv_dims sz;
  if (!tfd_conv_backprop_input_shape(c, k, &p->win, &sz)) return;
  int64_t n = sz.n, h = sz.h, w = sz.w, ci = sz.c, kh = sz.kh, kw = sz.kw, co = sz.o, oh = sz.oh, ow = sz.ow,
          pad_t = sz.pad_t, pad_l = sz.pad_l;
  int64_t dims[4] = {n, h, w, ci};
  tfd_tensor *dx = tfd_kernel_alloc(c, k, TFD_FLOAT32, dims, 4); /* checks the element count */
  if (!dx) return;
  c->outputs[0] = dx;
  float *out = tfd_tensor_data(dx);
  int64_t total = tfd_tensor_numel(dx);
  if (total > 0) memset(out, 0, (size_t)total * sizeof(float));
  int64_t kcols = kh * kw * ci; /* the filter's elements over co: fits */
  if (total == 0 || oh == 0 || ow == 0 || kcols == 0 || co == 0 || !tfd_conv_backprop_input_fits(c, k, &sz)) return;
  float *cols = malloc((size_t)(ow * kcols) * sizeof(float));
  if (!cols) {
    tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory for a %lld x %lld column buffer", (long long)ow,
                    (long long)kcols);
    return;
  }
  const float *g = tfd_tensor_const_data(dy), *fd = tfd_tensor_const_data(f);
  for (int64_t b = 0; b < n; b++)
    for (int64_t oy = 0; oy < oh; oy++) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)ow, (int)kcols, (int)co, 1.0f, g + (b * oh + oy) * ow * co,
                  (int)co, fd, (int)co, 0.0f, cols, (int)kcols);
      for (int64_t ky = 0; ky < kh; ky++) {
        int64_t iy = oy * p->win.stride[0] + ky * p->win.dilation[0] - pad_t;
        if (iy < 0 || iy >= h) continue;
        for (int64_t ox = 0; ox < ow; ox++)
          for (int64_t kx = 0; kx < kw; kx++) {
            int64_t ix = ox * p->win.stride[1] + kx * p->win.dilation[1] - pad_l;
            if (ix < 0 || ix >= w) continue;
            const float *src = cols + ox * kcols + (ky * kw + kx) * ci;
            float *dst = out + ((b * h + iy) * w + ix) * ci;
            for (int64_t q = 0; q < ci; q++) dst[q] += src[q];
          }
      }
    }
  free(cols);
}

/* ---- setup ---- */
static void image_cleanup(tfd_kernel *k) {
  free(k->state);
  k->state = NULL;
}

tfd_code tfd_setup_image(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  tfd_image_attrs *p = calloc(1, sizeof *p);
  if (!p) return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
  k->state = p;
  k->cleanup = image_cleanup;
  if (tfd_image_attrs_read(init->node, init->op->name, p, st) != TFD_OK) return tfd_status_code(st);
  switch (p->op) {
    case TFD_IMAGE_BATCH_NORM: k->compute = k_batch_norm; break;
    case TFD_IMAGE_MIRROR_PAD: k->compute = k_mirror_pad; break;
    case TFD_IMAGE_CONV_BACKPROP_INPUT: k->compute = k_conv_backprop_input; break;
    default: k->compute = k_resize; break;
  }
  return TFD_OK;
}
