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
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../core/checked.h"
#include "../core/half.h"
#include "../core/status_internal.h"
#include "device_math_elem.h"
#include "kernel.h"
#include "window.h"

#include <cblas.h>

enum { OP_BATCH_NORM, OP_RESIZE_BILINEAR, OP_RESIZE_NEAREST, OP_MIRROR_PAD, OP_CONV_BACKPROP_INPUT };

typedef struct image_params {
  int op;
  float epsilon;
  bool align_corners, half_pixel_centers;
  bool symmetric; /* MirrorPad: SYMMETRIC (else REFLECT) */
  tfd_window_attrs win; /* Conv2DBackpropInput */
} image_params;

static bool check_rank4_float(tfd_kernel_ctx *c, const tfd_kernel *k, const tfd_tensor *t, const char *what) {
  if (tfd_tensor_dtype(t) == TFD_FLOAT32 && tfd_tensor_ndims(t) == 4) return true;
  tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "%s must be a float32 tensor of rank 4 (NHWC), got %s of rank %d", what,
                  tfd_dtype_name(tfd_tensor_dtype(t)), tfd_tensor_ndims(t));
  return false;
}

/* ---- FusedBatchNorm, FusedBatchNormV3 ---- */
static void k_batch_norm(tfd_kernel *k, tfd_kernel_ctx *c) {
  const image_params *p = k->state;
  static const char *const what[] = {"x", "scale", "offset", "mean", "variance"};
  tfd_tensor *x = c->inputs[0];
  if (!check_rank4_float(c, k, x, "x")) return;
  int64_t depth = tfd_tensor_dim(x, 3);
  for (int i = 1; i < 5; i++) {
    const tfd_tensor *t = c->inputs[i];
    if (tfd_tensor_dtype(t) != TFD_FLOAT32 || tfd_tensor_ndims(t) != 1 || tfd_tensor_dim(t, 0) != depth) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "%s must be a float32 vector of %lld elements (x's depth)", what[i],
                      (long long)depth);
      return;
    }
  }
  tfd_tensor *y = tfd_kernel_alloc_like(c, k, TFD_FLOAT32, x);
  if (!y) return;
  c->outputs[0] = y;
  for (int o = 1; o < c->num_outputs; o++) {
    int64_t dims[1] = {o == 5 ? 0 : depth};
    tfd_tensor *t = tfd_kernel_alloc(c, k, TFD_FLOAT32, dims, 1);
    if (!t) return;
    c->outputs[o] = t;
    if (o < 5 && depth > 0)
      memcpy(tfd_tensor_data(t), tfd_tensor_const_data(c->inputs[o % 2 ? 3 : 4]), (size_t)depth * sizeof(float));
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

static int64_t nearest_index(int64_t i, int64_t in, float scale, const image_params *p) {
  return tfd_dm_nearest_index(i, in, scale, p->align_corners, p->half_pixel_centers);
}

/* The images' dtypes both resizes take (TensorFlow's real number types that tfdev holds). */
#define RESIZE_TYPES                                                                                           \
  ((1u << TFD_FLOAT32) | (1u << TFD_FLOAT64) | (1u << TFD_INT32) | (1u << TFD_INT64) | (1u << TFD_UINT8) | \
   (1u << TFD_FLOAT16))

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

static void k_resize(tfd_kernel *k, tfd_kernel_ctx *c) {
  const image_params *p = k->state;
  tfd_tensor *x = c->inputs[0], *size = c->inputs[1];
  tfd_dtype dt = tfd_tensor_dtype(x);
  if (tfd_tensor_ndims(x) != 4 || (unsigned)dt >= 32 || !(RESIZE_TYPES & (1u << dt))) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                    "images must be a float32, float64, int32, int64, uint8 or float16 tensor of rank 4 (NHWC), got %s of rank %d",
                    tfd_dtype_name(dt), tfd_tensor_ndims(x));
    return;
  }
  if (tfd_tensor_dtype(size) != TFD_INT32 || tfd_tensor_ndims(size) != 1 || tfd_tensor_dim(size, 0) != 2) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "size must be an int32 vector of 2 elements");
    return;
  }
  int64_t n = tfd_tensor_dim(x, 0), h = tfd_tensor_dim(x, 1), w = tfd_tensor_dim(x, 2), ch = tfd_tensor_dim(x, 3);
  int64_t oh = tfd_tensor_get_index(size, 0), ow = tfd_tensor_get_index(size, 1);
  if (oh <= 0 || ow <= 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "size must be positive, got [%lld, %lld]", (long long)oh, (long long)ow);
    return;
  }
  int64_t total;
  if (!tfd_checked_mul(n, oh, &total) || !tfd_checked_mul(total, ow, &total) || !tfd_checked_mul(total, ch, &total) ||
      total > INT64_MAX / 8) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "the output's size overflows");
    return;
  }
  if ((h == 0 || w == 0) && total > 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "cannot resize an empty image of size [%lld, %lld]", (long long)h,
                    (long long)w);
    return;
  }
  int64_t dims[4] = {n, oh, ow, ch};
  /* ResizeBilinear always makes float32, as TensorFlow's does; ResizeNearestNeighbor keeps the dtype. */
  tfd_tensor *y = tfd_kernel_alloc(c, k, p->op == OP_RESIZE_NEAREST ? dt : TFD_FLOAT32, dims, 4);
  if (!y) return;
  c->outputs[0] = y;
  if (total == 0) return;
  float sy = tfd_dm_resize_scale(h, oh, p->align_corners), sx = tfd_dm_resize_scale(w, ow, p->align_corners);
  if (p->op == OP_RESIZE_NEAREST) {
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
static void k_mirror_pad(tfd_kernel *k, tfd_kernel_ctx *c) {
  const image_params *p = k->state;
  tfd_tensor *x = c->inputs[0], *pads = c->inputs[1];
  int nd = tfd_tensor_ndims(x);
  if (!tfd_kernel_check_index(c, k, pads, "paddings")) return;
  if (tfd_tensor_ndims(pads) != 2 || tfd_tensor_dim(pads, 0) != nd || tfd_tensor_dim(pads, 1) != 2) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "paddings must be a matrix of shape [%d, 2] (the input's rank)", nd);
    return;
  }
  int64_t before[TFD_MAX_DIMS], in_dims[TFD_MAX_DIMS], dims[TFD_MAX_DIMS];
  for (int d = 0; d < nd; d++) {
    int64_t lo = tfd_tensor_get_index(pads, 2 * d), hi = tfd_tensor_get_index(pads, 2 * d + 1);
    in_dims[d] = tfd_tensor_dim(x, d);
    int64_t most = p->symmetric ? in_dims[d] : in_dims[d] - 1;
    if (lo < 0 || hi < 0 || lo > most || hi > most) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                      "paddings [%lld, %lld] in dimension %d must be between 0 and %lld (%s, dimension of size %lld)",
                      (long long)lo, (long long)hi, d, (long long)(most < 0 ? 0 : most),
                      p->symmetric ? "SYMMETRIC" : "REFLECT", (long long)in_dims[d]);
      return;
    }
    before[d] = lo;
    dims[d] = in_dims[d] + lo + hi; /* at most three times a real tensor's dimension */
  }
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
static void k_conv_backprop_input(tfd_kernel *k, tfd_kernel_ctx *c) {
  const image_params *p = k->state;
  tfd_tensor *sizes = c->inputs[0], *f = c->inputs[1], *dy = c->inputs[2];
  if (tfd_tensor_dtype(sizes) != TFD_INT32 || tfd_tensor_ndims(sizes) != 1 || tfd_tensor_dim(sizes, 0) != 4) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "input_sizes must be an int32 vector of 4 sizes");
    return;
  }
  if (!check_rank4_float(c, k, f, "filter") || !check_rank4_float(c, k, dy, "out_backprop")) return;
  int64_t n = tfd_tensor_get_index(sizes, 0), h = tfd_tensor_get_index(sizes, 1), w = tfd_tensor_get_index(sizes, 2),
          ci = tfd_tensor_get_index(sizes, 3);
  int64_t kh = tfd_tensor_dim(f, 0), kw = tfd_tensor_dim(f, 1), co = tfd_tensor_dim(f, 3);
  if (n < 0 || h < 0 || w < 0 || ci < 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "input_sizes must not be negative");
    return;
  }
  if (tfd_tensor_dim(f, 2) != ci || tfd_tensor_dim(dy, 3) != co || tfd_tensor_dim(dy, 0) != n) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                    "shapes do not agree: input_sizes [%lld,%lld,%lld,%lld], filter [%lld,%lld,%lld,%lld], out_backprop "
                    "[%lld,%lld,%lld,%lld]",
                    (long long)n, (long long)h, (long long)w, (long long)ci, (long long)kh, (long long)kw,
                    (long long)tfd_tensor_dim(f, 2), (long long)co, (long long)tfd_tensor_dim(dy, 0),
                    (long long)tfd_tensor_dim(dy, 1), (long long)tfd_tensor_dim(dy, 2), (long long)tfd_tensor_dim(dy, 3));
    return;
  }
  int64_t oh = -1, ow = -1, pad_t = 0, pad_l = 0;
  if (!tfd_window_size(&p->win, 0, h, kh, &oh, &pad_t) ||
      !tfd_window_size(&p->win, 1, w, kw, &ow, &pad_l) ||
      oh != tfd_tensor_dim(dy, 1) || ow != tfd_tensor_dim(dy, 2)) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                    "out_backprop is [%lld,%lld] spatially but the forward convolution of input_sizes gives [%lld,%lld]",
                    (long long)tfd_tensor_dim(dy, 1), (long long)tfd_tensor_dim(dy, 2), (long long)oh, (long long)ow);
    return;
  }
  int64_t dims[4] = {n, h, w, ci};
  tfd_tensor *dx = tfd_kernel_alloc(c, k, TFD_FLOAT32, dims, 4); /* checks the element count */
  if (!dx) return;
  c->outputs[0] = dx;
  float *out = tfd_tensor_data(dx);
  int64_t total = tfd_tensor_numel(dx);
  if (total > 0) memset(out, 0, (size_t)total * sizeof(float));
  int64_t kcols = kh * kw * ci; /* the filter's elements over co: fits */
  if (total == 0 || oh == 0 || ow == 0 || kcols == 0 || co == 0) return;
  if (ow > INT_MAX || kcols > INT_MAX || co > INT_MAX || (uint64_t)ow * (uint64_t)kcols > SIZE_MAX / sizeof(float)) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "the sizes are too large");
    return;
  }
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
static tfd_code setup_conv_backprop(image_params *p, const tfd_node_def *node, const char *name, const char *op,
                                    tfd_status *st) {
  (void)name;
  return tfd_window_attrs_read(node, op, true, &p->win, st);
}

/* ---- setup (all) ---- */
static void image_cleanup(tfd_kernel *k) {
  free(k->state);
  k->state = NULL;
}

tfd_code tfd_setup_image(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  const tfd_node_def *node = init->node;
  const char *op = init->op->name, *name = tfd_node_def_name(node);
  image_params *p = calloc(1, sizeof *p);
  if (!p) return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
  k->state = p;
  k->cleanup = image_cleanup;
  if (strncmp(op, "FusedBatchNorm", 14) == 0) {
    p->op = OP_BATCH_NORM;
    if (tfd_attr_bool(node, "is_training", true))
      return tfd_status_setf(st, TFD_UNIMPLEMENTED, "node '%s' (%s): is_training=true is not supported (inference only)",
                             name, op);
    const char *fmt = tfd_attr_string(node, "data_format", "NHWC");
    if (strcmp(fmt, "NHWC") != 0)
      return tfd_status_setf(st, TFD_UNIMPLEMENTED, "node '%s' (%s): data_format %s is not supported (NHWC only)", name,
                             op, fmt);
    p->epsilon = (float)tfd_attr_float(node, "epsilon", 0.0001);
    k->compute = k_batch_norm;
    return TFD_OK;
  }
  if (strcmp(op, "MirrorPad") == 0) {
    p->op = OP_MIRROR_PAD;
    const char *mode = tfd_attr_string(node, "mode", "");
    if (strcmp(mode, "REFLECT") != 0 && strcmp(mode, "SYMMETRIC") != 0)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): mode must be REFLECT or SYMMETRIC, got '%s'", name,
                             op, mode);
    p->symmetric = strcmp(mode, "SYMMETRIC") == 0;
    k->compute = k_mirror_pad;
    return TFD_OK;
  }
  if (strcmp(op, "Conv2DBackpropInput") == 0) {
    p->op = OP_CONV_BACKPROP_INPUT;
    k->compute = k_conv_backprop_input;
    return setup_conv_backprop(p, node, name, op, st);
  }
  p->op = strcmp(op, "ResizeBilinear") == 0 ? OP_RESIZE_BILINEAR : OP_RESIZE_NEAREST;
  p->align_corners = tfd_attr_bool(node, "align_corners", false);
  p->half_pixel_centers = tfd_attr_bool(node, "half_pixel_centers", false);
  if (p->align_corners && p->half_pixel_centers)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (%s): If half_pixel_centers is True, align_corners must be False.", name, op);
  k->compute = k_resize;
  return TFD_OK;
}
