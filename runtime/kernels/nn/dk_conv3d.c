/* Device kernels of Conv3D, MaxPool3D and AvgPool3D (k_conv3d.c), float32 and float64, composed from
 * the math's 2-D entries with the checks and sizes of conv3d_logic.h. A 3-D pool is separable: the
 * largest element of a box is the largest over planes of each plane's window maximum, and an average
 * over the in-bounds part of a box is the average over planes of each plane's in-bounds average (the
 * in-bounds count of a box is planes x rows x columns), so a pool over rows and columns of every plane
 * is followed by a pool over planes, the rows and columns then one axis. Conv3D sums, over the filter's
 * planes kd, a 2-D convolution of the input planes that kd reads (gathered into [n x out planes, h, w,
 * c], zeros where the window hangs over the padding) with the filter's plane kd, the running sum
 * passed as the addend (float64: added after). float16 runs the CPU kernel on the host. */
#include <string.h>

#include "conv3d_logic.h"
#include "../device_kernel.h"

static bool pool2d(tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m, tfd_dm_pool q) {
  if (q.n * q.oh * q.ow * q.c == 0) return true;
  tfd_status st = TFD_STATUS_INIT;
  return tfd_dk_ok(k, c, m->pool(c->device, &q, &st), &st);
}

static void k_pool3d(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_device_math *m = tfd_dk_math(k, c);
  if (!m) return;
  tfd_conv3d_dims s;
  if (!tfd_pool3d_shape(c, k, &s)) return;
  tfd_tensor *x = c->inputs[0];
  tfd_dtype dt = tfd_tensor_dtype(x);
  int64_t dims[5] = {s.n, s.out[0], s.out[1], s.out[2], s.c}, tdims[4] = {s.n * s.in[0], s.out[1], s.out[2], s.c};
  tfd_tensor *y = tfd_dk_alloc(c, k, dt, dims, 5);
  tfd_tensor *t = y ? tfd_dk_alloc_device(c, k, dt, tdims, 4) : NULL;
  /* rows and columns of every plane: [n * planes, h, w, c] -> [n * planes, oh, ow, c] */
  tfd_dm_pool rows = {dt, s.max, tfd_tensor_const_data(x), t ? tfd_tensor_data(t) : NULL, s.n * s.in[0], s.in[1], s.in[2],
                      s.c, s.k[1], s.k[2], s.out[1], s.out[2], {s.stride[1], s.stride[2]}, {s.pad[1], s.pad[2]}};
  /* planes: [n, planes, oh * ow, c] -> [n, out planes, oh * ow, c], a window of k[0] x 1 */
  tfd_dm_pool planes = {dt, s.max, rows.y, y ? tfd_tensor_data(y) : NULL, s.n, s.in[0], s.out[1] * s.out[2], s.c,
                        s.k[0], 1, s.out[0], s.out[1] * s.out[2], {s.stride[0], 1}, {s.pad[0], 0}};
  bool ok = t && pool2d(k, c, m, rows) && pool2d(k, c, m, planes);
  tfd_tensor_unref(t);
  if (ok) c->outputs[0] = y;
  else tfd_tensor_unref(y);
}

static void k_conv3d(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_device_math *m = tfd_dk_math(k, c);
  if (!m) return;
  tfd_conv3d_dims s;
  if (!tfd_conv3d_shape(c, k, &s)) return;
  tfd_tensor *x = c->inputs[0], *f = c->inputs[1];
  tfd_dtype dt = tfd_tensor_dtype(x);
  size_t es = tfd_dtype_size(dt);
  int64_t dims[5] = {s.n, s.out[0], s.out[1], s.out[2], s.o};
  tfd_tensor *y = tfd_dk_alloc(c, k, dt, dims, 5);
  if (!y) return;
  if (tfd_tensor_numel(y) == 0 || !tfd_conv3d_ready(c, k)) {
    if (tfd_tensor_numel(y) == 0) c->outputs[0] = y;
    else tfd_tensor_unref(y);
    return;
  }
  int64_t plane = s.in[1] * s.in[2] * s.c, fplane = s.k[1] * s.k[2] * s.c * s.o, total = tfd_tensor_numel(y);
  int64_t gdims[4] = {s.n * s.out[0], s.in[1], s.in[2], s.c};
  tfd_tensor *g = tfd_dk_alloc_device(c, k, dt, gdims, 4);
  /* The math's epilogue (the addend) is float32's: float64 sums each plane's product in through a
   * temporary and an Add. */
  tfd_tensor *part = g && dt == TFD_FLOAT64 ? tfd_dk_alloc_device(c, k, dt, dims, 5) : NULL;
  if (g && dt == TFD_FLOAT64 && !part) {
    tfd_tensor_unref(g);
    g = NULL;
  }
  tfd_status st = TFD_STATUS_INIT;
  unsigned char zero[16] = {0};
  bool ok = g && tfd_dk_ok(k, c, m->fill(c->device, es, zero, tfd_tensor_data(y), total, &st), &st);
  for (int64_t kd = 0; ok && kd < s.k[0]; kd++) {
    /* output planes od whose input plane od * stride + kd - pad is inside the volume */
    int64_t lo = 0, hi = s.out[0];
    while (lo < hi && lo * s.stride[0] + kd - s.pad[0] < 0) lo++;
    while (hi > lo && (hi - 1) * s.stride[0] + kd - s.pad[0] >= s.in[0]) hi--;
    if (lo == hi) continue; /* this plane of the filter reads only padding */
    if (lo > 0 || hi < s.out[0])
      ok = tfd_dk_ok(k, c, m->fill(c->device, es, zero, tfd_tensor_data(g), tfd_tensor_numel(g), &st), &st);
    int64_t wdims[3] = {s.n, hi - lo, plane};
    int64_t strides[2][TFD_MAX_DIMS] = {{s.in[0] * plane, s.stride[0] * plane, 1}, {s.out[0] * plane, plane, 1}};
    int64_t offsets[2] = {(lo * s.stride[0] + kd - s.pad[0]) * plane, lo * plane};
    tfd_dm_walk w;
    if (ok && tfd_dk_walk(&w, 3, wdims, 2, strides, offsets) > 0)
      ok = tfd_dk_ok(k, c, m->copy_walk(c->device, es, tfd_tensor_const_data(x), tfd_tensor_data(g), &w, &st), &st);
    int64_t pad_after[2];
    for (int i = 0; i < 2; i++) {
      int64_t after = (s.out[1 + i] - 1) * s.stride[1 + i] + s.k[1 + i] - s.in[1 + i] - s.pad[1 + i];
      pad_after[i] = after > 0 ? after : 0;
    }
    tfd_dm_conv q = {.dtype = dt,
                     .x = tfd_tensor_const_data(g),
                     .filter = (const char *)tfd_tensor_const_data(f) + (size_t)(kd * fplane) * es,
                     .y = part ? tfd_tensor_data(part) : tfd_tensor_data(y),
                     .n = s.n * s.out[0], .h = s.in[1], .w = s.in[2], .c = s.c,
                     .kh = s.k[1], .kw = s.k[2], .o = s.o, .oh = s.out[1], .ow = s.out[2],
                     .stride = {s.stride[1], s.stride[2]}, .dilation = {1, 1},
                     .pad_before = {s.pad[1], s.pad[2]}, .pad_after = {pad_after[0], pad_after[1]},
                     .addend = part ? NULL : tfd_tensor_const_data(y), .act = TFD_ACT_NONE};
    ok = ok && tfd_dk_ok(k, c, m->conv2d(c->device, &q, &st), &st);
    if (ok && part)
      ok = tfd_dk_binary_flat(k, c, m, TFD_DM_ADD, dt, tfd_tensor_const_data(y), tfd_tensor_const_data(part), false,
                              tfd_tensor_data(y), total);
  }
  tfd_tensor_unref(g);
  tfd_tensor_unref(part);
  if (ok) c->outputs[0] = y;
  else tfd_tensor_unref(y);
}

tfd_code tfd_dk_setup_conv3d(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  return tfd_dk_setup_either(k, init, tfd_setup_conv3d, k->T == TFD_FLOAT32 || k->T == TFD_FLOAT64,
                             strcmp(init->op->name, "Conv3D") == 0 ? k_conv3d : k_pool3d, st);
}
