/* Device kernels of the image and normalisation ops (k_image.c): FusedBatchNorm, V2 and
 * V3 (inference), ResizeBilinear and ResizeNearestNeighbor (align_corners,
 * half_pixel_centers; the coordinates are device_math_elem.h's, which the CPU kernel uses too) and
 * Conv2DBackpropInput, with the attributes, checks and shapes of image_logic.h and conv_logic.h,
 * which the CPU kernels call too; CropAndResize (k_crop_and_resize.c) and ImageProjectiveTransformV3
 * (k_image_transform.c). Images whose dtype lives on
 * the host (int32), or that the math does not take (uint8, float16), run the CPU kernel there. */
#include "../nn/conv_logic.h"
#include "../device_kernel.h"
#include "image_logic.h"
#include "../kernel_shared.h"

/* ---- FusedBatchNorm, FusedBatchNormV3 ---- */
static void k_batch_norm(tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m, const tfd_image_attrs *p) {
  tfd_tensor *x = c->inputs[0], *outs[TFD_MAX_OP_OUTPUTS] = {0};
  if (!tfd_batch_norm_check(c, k)) return;
  int64_t depth = tfd_tensor_dim(x, 3);
  int64_t xd[4] = {tfd_tensor_dim(x, 0), tfd_tensor_dim(x, 1), tfd_tensor_dim(x, 2), depth};
  bool ok = (outs[0] = tfd_dk_alloc(c, k, TFD_FLOAT32, xd, 4)) != NULL;
  tfd_status st = TFD_STATUS_INIT;
  for (int o = 1; ok && o < c->num_outputs; o++) {
    int64_t dims[1];
    int from = tfd_batch_norm_passthrough(o, depth, dims);
    ok = (outs[o] = tfd_dk_alloc(c, k, TFD_FLOAT32, dims, 1)) != NULL;
    if (ok && from >= 0 && depth > 0) {
      int64_t strides[2][TFD_MAX_DIMS] = {{1}, {1}};
      tfd_dm_walk w;
      tfd_dk_walk(&w, 1, &depth, 2, strides, NULL);
      ok = tfd_dk_ok(k, c, m->copy_walk(c->device, sizeof(float), tfd_tensor_const_data(c->inputs[from]),
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
static void k_resize(tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m, const tfd_image_attrs *p) {
  tfd_tensor *x = c->inputs[0];
  tfd_dtype dt = tfd_tensor_dtype(x);
  tfd_resize_shape r;
  if (!tfd_resize_check(c, k, p, &r)) return;
  int64_t dims[4] = {r.n, r.oh, r.ow, r.ch};
  tfd_tensor *y = tfd_dk_alloc(c, k, r.out_dtype, dims, 4);
  if (!y) return;
  bool ok = true;
  if (r.total > 0) {
    tfd_dm_resize q = {dt, r.out_dtype, p->op == TFD_IMAGE_RESIZE_BILINEAR, p->align_corners, p->half_pixel_centers, tfd_tensor_const_data(x),
                       tfd_tensor_data(y), r.n, r.h, r.w, r.ch, r.oh, r.ow};
    tfd_status st = TFD_STATUS_INIT;
    ok = tfd_dk_ok(k, c, m->resize(c->device, &q, &st), &st);
  }
  if (ok) c->outputs[0] = y;
  else tfd_tensor_unref(y);
}

/* ---- Conv2DBackpropInput: the gradient of a convolution with respect to its input ---- */
static void k_conv_backprop_input(tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m, const tfd_image_attrs *p) {
  tfd_tensor *f = c->inputs[1], *dy = c->inputs[2];
  tfd_conv_dims g;
  if (!tfd_conv_backprop_input_shape(c, k, &p->win, &g)) return;
  int64_t dims[4] = {g.n, g.h, g.w, g.c};
  tfd_tensor *dx = tfd_dk_alloc(c, k, TFD_FLOAT32, dims, 4);
  if (!dx) return;
  if (!tfd_conv_backprop_input_fits(c, k, &g)) {
    tfd_tensor_unref(dx);
    return;
  }
  int64_t total = tfd_tensor_numel(dx);
  bool ok = true;
  if (total > 0) { /* every element is written: zeros where no output position reads it */
    tfd_dm_conv q = {TFD_FLOAT32, tfd_tensor_const_data(dy), tfd_tensor_const_data(f), tfd_tensor_data(dx), g.n, g.h, g.w,
                     g.c, g.kh, g.kw, g.o, g.oh, g.ow, {p->win.stride[0], p->win.stride[1]},
                     {p->win.dilation[0], p->win.dilation[1]}, {g.pad_t, g.pad_l},
                     {tfd_window_pad_after(&p->win, 0, g.h, g.kh, g.oh, g.pad_t),
                      tfd_window_pad_after(&p->win, 1, g.w, g.kw, g.ow, g.pad_l)},
                     false, true, NULL, NULL, NULL, NULL, NULL, 0, TFD_ACT_NONE, 0, NULL};
    tfd_status st = TFD_STATUS_INIT;
    ok = tfd_dk_ok(k, c, m->conv2d(c->device, &q, &st), &st);
  }
  if (ok) c->outputs[0] = dx;
  else tfd_tensor_unref(dx);
}

static void compute(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_image_attrs *p = k->state; /* tfd_setup_image's */
  const tfd_device_math *m = tfd_dk_math(k, c);
  if (!m) return;
  switch (p->op) {
    case TFD_IMAGE_BATCH_NORM: k_batch_norm(k, c, m, p); break;
    case TFD_IMAGE_CONV_BACKPROP_INPUT: k_conv_backprop_input(k, c, m, p); break;
    default: k_resize(k, c, m, p); break;
  }
}

tfd_code tfd_dk_setup_image(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  if (!tfd_dk_lives_on_device(init->device, k->T)) return tfd_dk_setup_on_host(k, init, tfd_setup_image, st);
  /* The CPU setup reads and checks the attributes (image_logic.h), and keeps them in k->state. */
  if (tfd_setup_image(k, init, st) != TFD_OK) return tfd_status_code(st);
  k->compute = compute;
  return TFD_OK;
}

/* ---- CropAndResize: the CPU kernel's checks on host copies of the boxes (image_logic.h), the box
 * indices copied in, then the math's crop_and_resize into a float32 output. ---- */
static void k_crop_and_resize(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_device_math *m = tfd_dk_math(k, c);
  if (!m) return;
  tfd_tensor *image = c->inputs[0], *boxes = tfd_kernel_host_input(c, k, 1), *ind = NULL, *dev_ind = NULL, *crop = NULL;
  tfd_tensor *y = NULL;
  tfd_crop_geometry g;
  bool ok = boxes && (ind = tfd_kernel_host_input(c, k, 2)) && (crop = tfd_kernel_host_input(c, k, 3)) &&
            tfd_crop_and_resize_check(c, k, image, boxes, ind, crop, &g);
  int64_t dims[4] = {ok ? g.n : 0, ok ? g.crop_h : 0, ok ? g.crop_w : 0, ok ? g.depth : 0};
  ok = ok && (y = tfd_dk_alloc(c, k, TFD_FLOAT32, dims, 4)) != NULL;
  tfd_status st = TFD_STATUS_INIT;
  if (ok && tfd_tensor_numel(y) > 0) {
    ok = (dev_ind = tfd_dk_to_device(c, k, ind)) != NULL;
    tfd_dm_crop q = {.dtype = tfd_tensor_dtype(image), .image = tfd_tensor_const_data(image),
                     .boxes = tfd_tensor_const_data(c->inputs[1]), .box_ind = ok ? tfd_tensor_const_data(dev_ind) : NULL,
                     .y = tfd_tensor_data(y), .n = g.n, .h = g.h, .w = g.w, .depth = g.depth, .crop_h = g.crop_h,
                     .crop_w = g.crop_w, .nearest = k->code == 1, .extrapolation = (float)k->alpha};
    ok = ok && tfd_dk_ok(k, c, m->crop_and_resize(c->device, &q, &st), &st);
  }
  tfd_tensor_unref(boxes), tfd_tensor_unref(ind), tfd_tensor_unref(crop), tfd_tensor_unref(dev_ind);
  if (ok) c->outputs[0] = y;
  else tfd_tensor_unref(y);
}

tfd_code tfd_dk_setup_crop_and_resize(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  return tfd_dk_setup_either(k, init, tfd_setup_crop_and_resize, tfd_dk_arith_dtype(k->T), k_crop_and_resize, st);
}

/* ---- ImageProjectiveTransformV3: the CPU kernel's checks (image_logic.h) on host copies of the
 * output shape and fill value, then the math's image_transform. ---- */
static void k_image_transform(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_device_math *m = tfd_dk_math(k, c);
  if (!m) return;
  tfd_tensor *images = c->inputs[0], *tr = c->inputs[1], *shape = tfd_kernel_host_input(c, k, 2), *fill = NULL, *y = NULL;
  int64_t oh = 0, ow = 0;
  bool ok = shape && (fill = tfd_kernel_host_input(c, k, 3)) &&
            tfd_image_transform_check(c, k, images, tr, shape, fill, &oh, &ow);
  int64_t dims[4] = {ok ? tfd_tensor_dim(images, 0) : 0, oh, ow, ok ? tfd_tensor_dim(images, 3) : 0};
  ok = ok && (y = tfd_dk_alloc(c, k, tfd_tensor_dtype(images), dims, 4)) != NULL;
  tfd_status st = TFD_STATUS_INIT;
  if (ok && tfd_tensor_numel(y) > 0) {
    tfd_dm_transform q = {.dtype = tfd_tensor_dtype(images), .images = tfd_tensor_const_data(images),
                          .transforms = tfd_tensor_const_data(tr), .one_transform = tfd_tensor_dim(tr, 0) == 1,
                          .y = tfd_tensor_data(y), .n = dims[0], .h = tfd_tensor_dim(images, 1),
                          .w = tfd_tensor_dim(images, 2), .c = dims[3], .oh = oh, .ow = ow, .bilinear = k->code == 1,
                          .mode = (int)k->index, .fill = *(const float *)tfd_tensor_const_data(fill)};
    ok = tfd_dk_ok(k, c, m->image_transform(c->device, &q, &st), &st);
  }
  tfd_tensor_unref(shape), tfd_tensor_unref(fill);
  if (ok) c->outputs[0] = y;
  else tfd_tensor_unref(y);
}

tfd_code tfd_dk_setup_image_transform(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  return tfd_dk_setup_either(k, init, tfd_setup_image_transform, tfd_dk_arith_dtype(k->T), k_image_transform, st);
}
