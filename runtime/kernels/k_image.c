/* Image and normalisation ops, NHWC, float32: FusedBatchNorm and FusedBatchNormV3 (inference),
 * ResizeBilinear and ResizeNearestNeighbor.
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

#include "../core/checked.h"
#include "../core/status_internal.h"
#include "kernel.h"

enum { OP_BATCH_NORM, OP_RESIZE_BILINEAR, OP_RESIZE_NEAREST };

typedef struct image_params {
  int op;
  float epsilon;
  bool align_corners, half_pixel_centers;
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
  /* y = x * a + b with a = scale / sqrt(variance + epsilon), b = offset - mean * a, per channel. */
  float *ab = malloc((size_t)depth * 2 * sizeof(float));
  if (!ab) {
    tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory");
    return;
  }
  for (int64_t ch = 0; ch < depth; ch++) {
    ab[ch] = scale[ch] / sqrtf(var[ch] + p->epsilon);
    ab[depth + ch] = offset[ch] - mean[ch] * ab[ch];
  }
  const float *in = tfd_tensor_const_data(x);
  float *out = tfd_tensor_data(y);
  int64_t n = tfd_tensor_numel(x);
  for (int64_t i = 0; i < n; i += depth)
    for (int64_t ch = 0; ch < depth; ch++) out[i + ch] = in[i + ch] * ab[ch] + ab[depth + ch];
  free(ab);
}

/* ---- ResizeBilinear, ResizeNearestNeighbor ---- */
static float resize_scale(int64_t in, int64_t out, bool align_corners) {
  return align_corners && out > 1 ? (float)(in - 1) / (float)(out - 1) : (float)in / (float)out;
}

typedef struct lerp_index {
  int64_t lo, hi;
  float frac;
} lerp_index;

static void bilinear_indices(int64_t in, int64_t out, float scale, bool half_pixel, lerp_index *ix) {
  for (int64_t i = 0; i < out; i++) {
    float src = half_pixel ? ((float)i + 0.5f) * scale - 0.5f : (float)i * scale;
    float fl = floorf(src);
    int64_t lo = (int64_t)fl, hi = (int64_t)ceilf(src);
    ix[i].lo = lo > 0 ? lo : 0;
    ix[i].hi = hi < in - 1 ? hi : in - 1;
    ix[i].frac = src - fl;
  }
}

static int64_t nearest_index(int64_t i, int64_t in, float scale, const image_params *p) {
  float src = p->half_pixel_centers ? ((float)i + 0.5f) * scale : (float)i * scale;
  int64_t v = (int64_t)(p->align_corners ? roundf(src) : floorf(src));
  if (v > in - 1) v = in - 1;
  return v < 0 ? 0 : v;
}

static void k_resize(tfd_kernel *k, tfd_kernel_ctx *c) {
  const image_params *p = k->state;
  tfd_tensor *x = c->inputs[0], *size = c->inputs[1];
  if (!check_rank4_float(c, k, x, "images")) return;
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
  tfd_tensor *y = tfd_kernel_alloc(c, k, TFD_FLOAT32, dims, 4);
  if (!y) return;
  c->outputs[0] = y;
  if (total == 0) return;
  const float *in = tfd_tensor_const_data(x);
  float *out = tfd_tensor_data(y);
  float sy = resize_scale(h, oh, p->align_corners), sx = resize_scale(w, ow, p->align_corners);
  if (p->op == OP_RESIZE_NEAREST) {
    for (int64_t b = 0; b < n; b++)
      for (int64_t oy = 0; oy < oh; oy++) {
        int64_t iy = nearest_index(oy, h, sy, p);
        for (int64_t ox = 0; ox < ow; ox++) {
          int64_t ixx = nearest_index(ox, w, sx, p);
          memcpy(out + ((b * oh + oy) * ow + ox) * ch, in + ((b * h + iy) * w + ixx) * ch, (size_t)ch * sizeof(float));
        }
      }
    return;
  }
  /* oh and ow are at most the output's element count, which fits in memory: the tables do too. */
  lerp_index *ys = malloc((size_t)(oh + ow) * sizeof *ys);
  if (!ys) {
    tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory");
    return;
  }
  lerp_index *xs = ys + oh;
  bilinear_indices(h, oh, sy, p->half_pixel_centers, ys);
  bilinear_indices(w, ow, sx, p->half_pixel_centers, xs);
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
          float t = tl[q] + (tr[q] - tl[q]) * fx, d = bl[q] + (br[q] - bl[q]) * fx;
          o[q] = t + (d - t) * fy;
        }
      }
    }
  free(ys);
}

/* ---- setup ---- */
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
  p->op = strcmp(op, "ResizeBilinear") == 0 ? OP_RESIZE_BILINEAR : OP_RESIZE_NEAREST;
  p->align_corners = tfd_attr_bool(node, "align_corners", false);
  p->half_pixel_centers = tfd_attr_bool(node, "half_pixel_centers", false);
  if (p->align_corners && p->half_pixel_centers)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (%s): If half_pixel_centers is True, align_corners must be False.", name, op);
  k->compute = k_resize;
  return TFD_OK;
}
