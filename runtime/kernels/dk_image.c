/* Device kernels of the image and normalisation ops (k_image.c): FusedBatchNorm and
 * FusedBatchNormV3 (inference), ResizeBilinear and ResizeNearestNeighbor (align_corners,
 * half_pixel_centers; the coordinates are device_math_elem.h's, which the CPU kernel uses too) and
 * Conv2DBackpropInput, with the CPU kernels' checks and messages. Images whose dtype lives on the
 * host (int32) run the CPU kernel there. */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../core/checked.h"
#include "device_kernel.h"
#include "window.h"

enum { I_BATCH_NORM, I_RESIZE_BILINEAR, I_RESIZE_NEAREST, I_CONV_BACKPROP_INPUT };

typedef struct image_params {
  int op;
  float epsilon;
  bool align_corners, half_pixel_centers;
  tfd_window_attrs win;
} image_params;

static bool check_rank4_float(tfd_kernel_ctx *c, const tfd_kernel *k, const tfd_tensor *t, const char *what) {
  if (tfd_tensor_dtype(t) == TFD_FLOAT32 && tfd_tensor_ndims(t) == 4) return true;
  tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "%s must be a float32 tensor of rank 4 (NHWC), got %s of rank %d", what,
                  tfd_dtype_name(tfd_tensor_dtype(t)), tfd_tensor_ndims(t));
  return false;
}

/* ---- FusedBatchNorm, FusedBatchNormV3 ---- */
static void k_batch_norm(tfd_kernel *k, tfd_kernel_ctx *c, const tfd_device_math *m, const image_params *p) {
  static const char *const what[] = {"x", "scale", "offset", "mean", "variance"};
  tfd_tensor *x = c->inputs[0], *outs[TFD_MAX_OP_OUTPUTS] = {0};
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
  int64_t xd[4] = {tfd_tensor_dim(x, 0), tfd_tensor_dim(x, 1), tfd_tensor_dim(x, 2), depth};
  bool ok = (outs[0] = tfd_dk_alloc(c, k, TFD_FLOAT32, xd, 4)) != NULL;
  tfd_status st = TFD_STATUS_INIT;
  /* batch_mean and batch_variance pass the given ones through, as do the reserve spaces; V3's last
   * reserve space is empty. */
  for (int o = 1; ok && o < c->num_outputs; o++) {
    int64_t dims[1] = {o == 5 ? 0 : depth};
    ok = (outs[o] = tfd_dk_alloc(c, k, TFD_FLOAT32, dims, 1)) != NULL;
    if (ok && o < 5 && depth > 0) {
      int64_t strides[2][TFD_MAX_DIMS] = {{1}, {1}};
      tfd_dm_walk w;
      tfd_dk_walk(&w, 1, &depth, 2, strides, NULL);
      ok = tfd_dk_ok(k, c, m->copy_walk(c->device, sizeof(float), tfd_tensor_const_data(c->inputs[o % 2 ? 3 : 4]),
                                        tfd_tensor_data(outs[o]), &w, &st), &st);
    }
  }
  int64_t rows = depth ? tfd_tensor_numel(x) / depth : 0;
  if (ok && rows > 0)
    ok = tfd_dk_ok(k, c, m->batch_norm(c->device, TFD_FLOAT32, tfd_tensor_const_data(x), tfd_tensor_const_data(c->inputs[1]),
                                       tfd_tensor_const_data(c->inputs[2]), tfd_tensor_const_data(c->inputs[3]),
                                       tfd_tensor_const_data(c->inputs[4]), p->epsilon, rows, depth,
                                       tfd_tensor_data(outs[0]), &st), &st);
  for (int o = 0; o < c->num_outputs; o++) {
    if (ok) c->outputs[o] = outs[o];
    else tfd_tensor_unref(outs[o]);
  }
}

/* ---- ResizeBilinear, ResizeNearestNeighbor ---- */
#define RESIZE_TYPES                                                                                           \
  ((1u << TFD_FLOAT32) | (1u << TFD_FLOAT64) | (1u << TFD_INT32) | (1u << TFD_INT64) | (1u << TFD_UINT8) | \
   (1u << TFD_FLOAT16))

static void k_resize(tfd_kernel *k, tfd_kernel_ctx *c, const tfd_device_math *m, const image_params *p) {
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
  tfd_tensor *sh = tfd_dk_host_input(c, k, 1);
  if (!sh) return;
  int64_t n = tfd_tensor_dim(x, 0), h = tfd_tensor_dim(x, 1), w = tfd_tensor_dim(x, 2), ch = tfd_tensor_dim(x, 3);
  int64_t oh = tfd_tensor_get_index(sh, 0), ow = tfd_tensor_get_index(sh, 1);
  tfd_tensor_unref(sh);
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
  bool bilinear = p->op == I_RESIZE_BILINEAR;
  tfd_dtype out_dt = bilinear ? TFD_FLOAT32 : dt;
  tfd_tensor *y = tfd_dk_alloc(c, k, out_dt, dims, 4);
  if (!y) return;
  bool ok = true;
  if (total > 0) {
    tfd_dm_resize q = {dt, out_dt, bilinear, p->align_corners, p->half_pixel_centers, tfd_tensor_const_data(x),
                       tfd_tensor_data(y), n, h, w, ch, oh, ow};
    tfd_status st = TFD_STATUS_INIT;
    ok = tfd_dk_ok(k, c, m->resize(c->device, &q, &st), &st);
  }
  if (ok) c->outputs[0] = y;
  else tfd_tensor_unref(y);
}

/* ---- Conv2DBackpropInput: the gradient of a convolution with respect to its input ---- */
static void k_conv_backprop_input(tfd_kernel *k, tfd_kernel_ctx *c, const tfd_device_math *m, const image_params *p) {
  tfd_tensor *sizes = c->inputs[0], *f = c->inputs[1], *dy = c->inputs[2];
  if (tfd_tensor_dtype(sizes) != TFD_INT32 || tfd_tensor_ndims(sizes) != 1 || tfd_tensor_dim(sizes, 0) != 4) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "input_sizes must be an int32 vector of 4 sizes");
    return;
  }
  if (!check_rank4_float(c, k, f, "filter") || !check_rank4_float(c, k, dy, "out_backprop")) return;
  tfd_tensor *sh = tfd_dk_host_input(c, k, 0);
  if (!sh) return;
  int64_t n = tfd_tensor_get_index(sh, 0), h = tfd_tensor_get_index(sh, 1), w = tfd_tensor_get_index(sh, 2),
          ci = tfd_tensor_get_index(sh, 3);
  tfd_tensor_unref(sh);
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
  if (!tfd_window_size(&p->win, 0, h, kh, &oh, &pad_t) || !tfd_window_size(&p->win, 1, w, kw, &ow, &pad_l) ||
      oh != tfd_tensor_dim(dy, 1) || ow != tfd_tensor_dim(dy, 2)) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                    "out_backprop is [%lld,%lld] spatially but the forward convolution of input_sizes gives [%lld,%lld]",
                    (long long)tfd_tensor_dim(dy, 1), (long long)tfd_tensor_dim(dy, 2), (long long)oh, (long long)ow);
    return;
  }
  int64_t dims[4] = {n, h, w, ci};
  tfd_tensor *dx = tfd_dk_alloc(c, k, TFD_FLOAT32, dims, 4);
  if (!dx) return;
  int64_t total = tfd_tensor_numel(dx), kcols = kh * kw * ci;
  if (total > 0 && oh > 0 && ow > 0 && kcols > 0 && co > 0 &&
      (ow > INT_MAX || kcols > INT_MAX || co > INT_MAX || (uint64_t)ow * (uint64_t)kcols > SIZE_MAX / sizeof(float))) {
    tfd_tensor_unref(dx);
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "the sizes are too large");
    return;
  }
  bool ok = true;
  if (total > 0) { /* every element is written: zeros where no output position reads it */
    tfd_dm_conv q = {TFD_FLOAT32, tfd_tensor_const_data(dy), tfd_tensor_const_data(f), tfd_tensor_data(dx), n, h, w, ci,
                     kh, kw, co, oh, ow, {p->win.stride[0], p->win.stride[1]}, {p->win.dilation[0], p->win.dilation[1]},
                     {pad_t, pad_l}, {tfd_window_pad_after(&p->win, 0, h, kh, oh, pad_t),
                                      tfd_window_pad_after(&p->win, 1, w, kw, ow, pad_l)},
                     false, true, NULL, NULL, NULL, NULL, NULL, 0, TFD_ACT_NONE, 0};
    tfd_status st = TFD_STATUS_INIT;
    ok = tfd_dk_ok(k, c, m->conv2d(c->device, &q, &st), &st);
  }
  if (ok) c->outputs[0] = dx;
  else tfd_tensor_unref(dx);
}

static void compute(tfd_kernel *k, tfd_kernel_ctx *c) {
  const image_params *p = k->dk_params;
  const tfd_device_math *m = tfd_dk_math(k, c);
  if (!m) return;
  switch (p->op) {
    case I_BATCH_NORM: k_batch_norm(k, c, m, p); break;
    case I_CONV_BACKPROP_INPUT: k_conv_backprop_input(k, c, m, p); break;
    default: k_resize(k, c, m, p); break;
  }
}

tfd_code tfd_dk_setup_image(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  const tfd_node_def *node = init->node;
  const char *op = init->op->name;
  if (!tfd_dk_lives_on_device(init->device, k->T)) return tfd_dk_setup_on_host(k, init, tfd_setup_image, st);
  /* The CPU setup checks the attributes (is_training, data_format, the resizes' flags, the window)
   * and names what it refuses; the parameters are read again here, where this file can see them. */
  if (tfd_setup_image(k, init, st) != TFD_OK) return tfd_status_code(st);
  image_params *p = calloc(1, sizeof *p);
  if (!p) return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
  k->dk_params = p;
  if (strncmp(op, "FusedBatchNorm", 14) == 0) {
    p->op = I_BATCH_NORM;
    p->epsilon = (float)tfd_attr_float(node, "epsilon", 0.0001);
  } else if (strcmp(op, "Conv2DBackpropInput") == 0) {
    p->op = I_CONV_BACKPROP_INPUT;
    if (tfd_window_attrs_read(node, op, true, &p->win, st) != TFD_OK) return tfd_status_code(st);
  } else {
    p->op = strcmp(op, "ResizeBilinear") == 0 ? I_RESIZE_BILINEAR : I_RESIZE_NEAREST;
    p->align_corners = tfd_attr_bool(node, "align_corners", false);
    p->half_pixel_centers = tfd_attr_bool(node, "half_pixel_centers", false);
  }
  k->compute = compute;
  return TFD_OK;
}
