/* Device kernels of the ops that rearrange data (k_basic.c, k_shape.c, k_gather.c, Pad of k_conv.c,
 * MirrorPad of k_image.c): Transpose, ConcatV2, Concat, Pack, Unpack, Slice, StridedSlice, Split, SplitV,
 * Tile, Pad, PadV2, MirrorPad, GatherV2, Gather, GatherNd, Range, Fill, ZerosLike, OnesLike, BroadcastTo,
 * DepthToSpace, SpaceToDepth (k_depth_space.c), OneHot and LinSpace (k_array.c), with the checks
 * and shapes of shape_logic.h and gather_logic.h, which the CPU kernels call too; ExpandDims and Squeeze make views of their input's buffer, Shape is
 * computed on the host. Shape-like inputs (perms, axes, sizes, paddings) are read on the host: int32
 * ones are there already, int64 ones are copied out. Elements move by size, so every dtype but
 * int32 (which lives on the host, and runs the CPU kernel there) stays on the device. Indices that
 * live on the host are checked there as the CPU kernel checks them, then copied in; int64 indices,
 * in device memory, are not (an index out of range gathers zeros, as on TensorFlow's GPUs). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/tensor_internal.h"
#include "../device_kernel.h"
#include "../device_math_elem.h"
#include "gather_logic.h"
#include "../image/image_logic.h"
#include "space_batch_logic.h"
#include "../kernel_shared.h"
#include "shape_logic.h"

enum {
  S_TRANSPOSE,
  S_CONCAT,
  S_CONCAT_V1, /* Concat: the axis first */
  S_PACK,
  S_UNPACK,
  S_SLICE,
  S_STRIDED_SLICE,
  S_SPLIT,
  S_SPLIT_V,
  S_TILE,
  S_PAD,
  S_PAD_V2,
  S_MIRROR_PAD,
  S_GATHER,
  S_GATHER_V1, /* Gather: GatherV2 along axis 0 (k->value, a host scalar 0, from tfd_setup_gather) */
  S_GATHER_ND,
  S_RANGE,
  S_FILL,
  S_ZEROS_LIKE,
  S_ONES_LIKE,
  S_EXPAND_DIMS,
  S_SQUEEZE,
  S_SHAPE,
  S_BROADCAST_TO,
  S_DEPTH_TO_SPACE,
  S_SPACE_TO_DEPTH,
  S_SPACE_BATCH, /* SpaceToBatchND, BatchToSpaceND (tfd_setup_space_batch's keep_dims: to batch) */
  S_REVERSE,     /* ReverseV2, Reverse (tfd_setup_array's keep_dims: a bool per dimension) */
  S_BAND_PART,
  S_ONE_HOT,
  S_LIN_SPACE,
};

static const struct {
  const char *name;
  int op;
  tfd_kernel_setup_fn cpu;
} ops[] = {
    {"Transpose", S_TRANSPOSE, tfd_setup_basic},   {"ConcatV2", S_CONCAT, tfd_setup_basic},
    {"Concat", S_CONCAT_V1, tfd_setup_basic},
    {"Pack", S_PACK, tfd_setup_shape},             {"Unpack", S_UNPACK, tfd_setup_shape},
    {"Slice", S_SLICE, tfd_setup_shape},           {"StridedSlice", S_STRIDED_SLICE, tfd_setup_shape},
    {"Split", S_SPLIT, tfd_setup_shape},           {"SplitV", S_SPLIT_V, tfd_setup_shape},
    {"Tile", S_TILE, tfd_setup_shape},             {"Pad", S_PAD, tfd_setup_conv},
    {"PadV2", S_PAD_V2, tfd_setup_conv},           {"MirrorPad", S_MIRROR_PAD, tfd_setup_image},
    {"GatherV2", S_GATHER, tfd_setup_gather},
    {"Gather", S_GATHER_V1, tfd_setup_gather},      {"GatherNd", S_GATHER_ND, tfd_setup_gather},
    {"Range", S_RANGE, tfd_setup_shape},           {"Fill", S_FILL, tfd_setup_basic},
    {"ZerosLike", S_ZEROS_LIKE, tfd_setup_basic},  {"OnesLike", S_ONES_LIKE, tfd_setup_basic},
    {"ExpandDims", S_EXPAND_DIMS, tfd_setup_shape}, {"Squeeze", S_SQUEEZE, tfd_setup_shape},
    {"Shape", S_SHAPE, tfd_setup_basic},           {"BroadcastTo", S_BROADCAST_TO, tfd_setup_basic},
    {"DepthToSpace", S_DEPTH_TO_SPACE, tfd_setup_depth_space}, {"SpaceToDepth", S_SPACE_TO_DEPTH, tfd_setup_depth_space},
    {"SpaceToBatchND", S_SPACE_BATCH, tfd_setup_space_batch}, {"BatchToSpaceND", S_SPACE_BATCH, tfd_setup_space_batch},
    {"ReverseV2", S_REVERSE, tfd_setup_array}, {"Reverse", S_REVERSE, tfd_setup_array},
    {"MatrixBandPart", S_BAND_PART, tfd_setup_array},
    {"OneHot", S_ONE_HOT, tfd_setup_array},
    {"LinSpace", S_LIN_SPACE, tfd_setup_array},
};

static void dims_of(const tfd_tensor *t, int64_t *dims) {
  for (int d = 0; d < tfd_tensor_ndims(t); d++) dims[d] = tfd_tensor_dim(t, d);
}

/* y (operand 1, at y_off with y_strides) from x (operand 0, at x_off with x_strides) over dims[nd]. */
static bool copy(tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m, size_t es, const void *x, void *y, int nd,
                 const int64_t *dims, const int64_t *x_strides, int64_t x_off, const int64_t *y_strides, int64_t y_off) {
  int64_t strides[2][TFD_MAX_DIMS], offsets[2] = {x_off, y_off};
  for (int d = 0; d < nd; d++) strides[0][d] = x_strides[d], strides[1][d] = y_strides[d];
  tfd_dm_walk w;
  if (tfd_dk_walk(&w, nd, dims, 2, strides, offsets) == 0) return true;
  tfd_status st = TFD_STATUS_INIT;
  return tfd_dk_ok(k, c, m->copy_walk(c->device, es, x, y, &w, &st), &st);
}

/* Rows of a block copy: rows x len elements, from x at x_off in rows x_row apart, into y at y_off in
 * rows y_row apart (concatenations, stacks and their inverses). */
static bool copy_rows(tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m, size_t es, const void *x, void *y,
                      int64_t rows, int64_t len, int64_t x_row, int64_t x_off, int64_t y_row, int64_t y_off) {
  int64_t dims[2] = {rows, len}, xs[2] = {x_row, 1}, ys[2] = {y_row, 1};
  return copy(k, c, m, es, x, y, 2, dims, xs, x_off, ys, y_off);
}

static void finish(tfd_kernel_context *c, tfd_tensor *out, bool ok) {
  if (ok) c->outputs[0] = out;
  else tfd_tensor_unref(out);
}

/* ---- Transpose ---- */
static void k_transpose(tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m) {
  tfd_tensor *in = c->inputs[0];
  int nd = tfd_tensor_ndims(in);
  int64_t p[TFD_MAX_DIMS], dims[TFD_MAX_DIMS], in_dims[TFD_MAX_DIMS], in_strides[TFD_MAX_DIMS], xs[TFD_MAX_DIMS],
      ys[TFD_MAX_DIMS];
  if (!tfd_transpose_shape(c, k, p, dims)) return;
  tfd_tensor *out = tfd_dk_alloc(c, k, tfd_tensor_dtype(in), dims, nd);
  if (!out) return;
  if (tfd_tensor_numel(out) == 0) {
    c->outputs[0] = out;
    return;
  }
  dims_of(in, in_dims);
  tfd_dk_strides(nd, in_dims, in_strides);
  tfd_dk_strides(nd, dims, ys);
  for (int i = 0; i < nd; i++) xs[i] = in_strides[p[i]];
  finish(c, out, copy(k, c, m, tfd_dtype_size(tfd_tensor_dtype(in)), tfd_tensor_const_data(in), tfd_tensor_data(out), nd,
                      dims, xs, 0, ys, 0));
}

/* ---- BroadcastTo: a walk reading the input with stride 0 where it repeats ---- */
static void k_broadcast_to(tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m) {
  tfd_tensor *in = c->inputs[0];
  int nd;
  int64_t dims[TFD_MAX_DIMS], xs[TFD_MAX_DIMS], ys[TFD_MAX_DIMS];
  if (!tfd_broadcast_to_shape(c, k, dims, &nd, xs)) return;
  tfd_tensor *out = tfd_dk_alloc(c, k, tfd_tensor_dtype(in), dims, nd);
  if (!out) return;
  tfd_dk_strides(nd, dims, ys);
  finish(c, out, tfd_tensor_numel(out) == 0 || copy(k, c, m, tfd_dtype_size(tfd_tensor_dtype(in)), tfd_tensor_const_data(in),
                                                    tfd_tensor_data(out), nd, dims, xs, 0, ys, 0));
}

/* ---- DepthToSpace, SpaceToDepth: one transposing walk over [N, H, b, W, b, C'] (space side) ---- */
static void k_depth_space(tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m) {
  tfd_tensor *in = c->inputs[0];
  int64_t d[4], o[4], b = k->code;
  bool to_space = k->dk_op == S_DEPTH_TO_SPACE;
  if (!tfd_depth_space_shape(c, k, to_space, b, d, o)) return;
  tfd_tensor *out = tfd_dk_alloc(c, k, tfd_tensor_dtype(in), o, 4);
  if (!out) return;
  /* The space side as [N, H', b, W', b, C'] (H' = small height, C' = small depth), row-major; the depth
   * side holds the same elements at ((n H' + h) W' + w) C + (i b + j) C' + c. */
  const int64_t *space = to_space ? o : d, *depth = to_space ? d : o;
  int64_t hs = depth[1], ws = depth[2], cs = space[3], C = depth[3];
  int64_t dims[6] = {d[0], hs, b, ws, b, cs};
  int64_t space_strides[6] = {hs * b * ws * b * cs, b * ws * b * cs, ws * b * cs, b * cs, cs, 1};
  int64_t depth_strides[6] = {hs * ws * C, ws * C, b * cs, C, cs, 1};
  finish(c, out, tfd_tensor_numel(out) == 0 ||
                     copy(k, c, m, tfd_dtype_size(tfd_tensor_dtype(in)), tfd_tensor_const_data(in), tfd_tensor_data(out), 6,
                          dims, to_space ? depth_strides : space_strides, 0, to_space ? space_strides : depth_strides, 0));
}

/* copy over up to 2 * TFD_MAX_DIMS + 2 dimensions: those of size 1 dropped, and leading ones walked
 * on the host while more than a walk holds remain (only for inputs of near the highest rank). */
#define BIG_DIMS (2 * TFD_MAX_DIMS + 2)
static bool copy_big(tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m, size_t es, const void *x, void *y, int nd,
                     const int64_t *dims, const int64_t *xs, int64_t x_off, const int64_t *ys, int64_t y_off) {
  int64_t d2[BIG_DIMS], x2[BIG_DIMS], y2[BIG_DIMS];
  int n = 0;
  for (int d = 0; d < nd; d++) {
    if (dims[d] == 0) return true;
    if (dims[d] == 1) continue;
    d2[n] = dims[d], x2[n] = xs[d], y2[n] = ys[d];
    n++;
  }
  if (n <= TFD_MAX_DIMS) return copy(k, c, m, es, x, y, n, d2, x2, x_off, y2, y_off);
  for (int64_t i = 0; i < d2[0]; i++)
    if (!copy_big(k, c, m, es, x, y, n - 1, d2 + 1, x2 + 1, x_off + i * x2[0], y2 + 1, y_off + i * y2[0])) return false;
  return true;
}

/* ---- SpaceToBatchND, BatchToSpaceND: one transposing walk over the grid side seen as
 * [offset_1..offset_M, batch, x_1..x_M, depth] (k_space_batch.c's terms), against a space side of
 * whole blocks: a zero-padded copy of the input (SpaceToBatchND) or an uncropped output
 * (BatchToSpaceND), itself the input or output where there is no padding or cropping ---- */
static void k_space_batch(tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m) {
  tfd_tensor *in = c->inputs[0];
  bool to_batch = k->keep_dims;
  tfd_space_batch_plan p;
  int nd = tfd_tensor_ndims(in);
  int64_t out_dims[TFD_MAX_DIMS];
  if (!tfd_space_batch_plan_make(k, c, to_batch, &p, out_dims)) return;
  tfd_dtype dt = tfd_tensor_dtype(in);
  size_t es = tfd_dtype_size(dt);
  tfd_tensor *out = tfd_dk_alloc(c, k, dt, out_dims, nd);
  if (!out || tfd_tensor_numel(out) == 0) {
    if (out) c->outputs[0] = out;
    return;
  }
  /* The whole-block space side [batch, grid_i * block_i..., depth] and where the real one sits in it. */
  int64_t whole[TFD_MAX_DIMS + 2], real[TFD_MAX_DIMS + 2], ws[TFD_MAX_DIMS + 2], rs[TFD_MAX_DIMS + 2], at = 0;
  bool same = true;
  whole[0] = real[0] = p.batch;
  for (int i = 0; i < p.m; i++) {
    whole[i + 1] = p.grid[i] * p.block[i];
    real[i + 1] = p.space[i];
    same = same && whole[i + 1] == real[i + 1] && p.before[i] == 0;
  }
  whole[p.m + 1] = real[p.m + 1] = p.depth;
  tfd_dk_strides(p.m + 2, whole, ws);
  tfd_dk_strides(p.m + 2, real, rs);
  for (int i = 0; i < p.m; i++) at += p.before[i] * ws[i + 1];
  tfd_tensor *tmp = NULL;
  bool ok = true;
  tfd_status st = TFD_STATUS_INIT;
  if (!same) {
    ok = (tmp = tfd_dk_alloc(c, k, dt, whole, p.m + 2)) != NULL;
    if (ok && to_batch) { /* zeros, the input inside */
      unsigned char zeros[16] = {0};
      ok = tfd_dk_ok(k, c, m->fill(c->device, es, zeros, tfd_tensor_data(tmp), tfd_tensor_numel(tmp), &st), &st) &&
           copy_big(k, c, m, es, tfd_tensor_const_data(in), tfd_tensor_data(tmp), p.m + 2, real, rs, 0, ws, at);
    }
  }
  if (ok) {
    int64_t dims[BIG_DIMS], gs[BIG_DIMS], ss[BIG_DIMS];
    int n = 0;
    for (int i = 0; i < p.m; i++) dims[n] = p.block[i], ss[n++] = ws[i + 1];
    dims[n] = p.batch, ss[n++] = ws[0];
    for (int i = 0; i < p.m; i++) dims[n] = p.grid[i], ss[n++] = p.block[i] * ws[i + 1];
    dims[n] = p.depth, ss[n++] = 1;
    tfd_dk_strides(n, dims, gs);
    const void *space_in = same ? tfd_tensor_const_data(in) : tfd_tensor_const_data(tmp);
    void *space_out = same ? tfd_tensor_data(out) : tfd_tensor_data(tmp);
    ok = to_batch ? copy_big(k, c, m, es, space_in, tfd_tensor_data(out), n, dims, ss, 0, gs, 0)
                  : copy_big(k, c, m, es, tfd_tensor_const_data(in), space_out, n, dims, gs, 0, ss, 0);
  }
  if (ok && !same && !to_batch) /* the crops */
    ok = copy_big(k, c, m, es, tfd_tensor_const_data(tmp), tfd_tensor_data(out), p.m + 2, real, ws, at, rs, 0);
  tfd_tensor_unref(tmp);
  finish(c, out, ok);
}

/* ---- ReverseV2, Reverse: a walk reading the reversed dimensions backwards ---- */
static void k_reverse(tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m) {
  tfd_tensor *in = c->inputs[0];
  int nd = tfd_tensor_ndims(in);
  if (nd == 0) { /* a scalar passes through before the axes are looked at, as on the CPU */
    c->outputs[0] = tfd_tensor_ref(in);
    return;
  }
  bool rev[TFD_MAX_DIMS];
  tfd_tensor *axes = tfd_kernel_host_input(c, k, 1);
  bool ok = axes && tfd_reverse_dims(c, k, k->keep_dims, axes, nd, rev);
  tfd_tensor_unref(axes);
  if (!ok) return;
  int64_t dims[TFD_MAX_DIMS], xs[TFD_MAX_DIMS], ys[TFD_MAX_DIMS], off = 0;
  dims_of(in, dims);
  tfd_dk_strides(nd, dims, ys);
  for (int d = 0; d < nd; d++) {
    xs[d] = rev[d] ? -ys[d] : ys[d];
    if (rev[d] && dims[d] > 0) off += (dims[d] - 1) * ys[d];
  }
  tfd_tensor *out = tfd_dk_alloc(c, k, tfd_tensor_dtype(in), dims, nd);
  if (!out) return;
  finish(c, out, tfd_tensor_numel(out) == 0 || copy(k, c, m, tfd_dtype_size(tfd_tensor_dtype(in)), tfd_tensor_const_data(in),
                                                    tfd_tensor_data(out), nd, dims, xs, off, ys, 0));
}

/* ---- MatrixBandPart: y = in band ? x : 0, the band a bool [m, n] mask made on the device from two
 * ranges (j - i >= -num_lower, j - i <= num_upper), read by a Select with stride 0 over the batch ---- */
static bool band_mask(tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m, int64_t rows, int64_t cols, int64_t lo,
                      int64_t hi, tfd_tensor *mask) {
  int64_t rc[2] = {rows, cols}, one_dim[1];
  tfd_tensor *ri = NULL, *rj = NULL, *d = NULL, *bound = NULL, *upper = NULL;
  tfd_status st = TFD_STATUS_INIT;
  tfd_dm_walk w;
  one_dim[0] = rows;
  bool ok = (ri = tfd_dk_alloc_device(c, k, TFD_INT64, one_dim, 1)) != NULL;
  one_dim[0] = cols;
  ok = ok && (rj = tfd_dk_alloc_device(c, k, TFD_INT64, one_dim, 1)) != NULL &&
       (d = tfd_dk_alloc_device(c, k, TFD_INT64, rc, 2)) != NULL &&
       tfd_dk_ok(k, c, m->range(c->device, TFD_INT64, 0, 1, tfd_tensor_data(ri), rows, &st), &st) &&
       tfd_dk_ok(k, c, m->range(c->device, TFD_INT64, 0, 1, tfd_tensor_data(rj), cols, &st), &st);
  if (ok) { /* d = j - i */
    int64_t strides[2][TFD_MAX_DIMS] = {{0, 1}, {1, 0}};
    tfd_dk_walk(&w, 2, rc, 2, strides, NULL);
    ok = tfd_dk_ok(k, c, m->binary(c->device, TFD_DM_SUB, TFD_INT64, tfd_tensor_const_data(rj), tfd_tensor_const_data(ri),
                                   tfd_tensor_data(d), &w, &st), &st);
  }
  int64_t n = rows * cols, strides[2][TFD_MAX_DIMS] = {{1}, {0}};
  tfd_dk_walk(&w, 1, &n, 2, strides, NULL);
  for (int side = 0; ok && side < 2; side++) {
    int64_t b = side == 0 ? -lo : hi;
    if ((side == 0 ? lo : hi) < 0) continue;
    tfd_tensor *dst = side == 0 || lo < 0 ? mask : (upper = tfd_dk_alloc_device(c, k, TFD_BOOL, rc, 2));
    ok = dst && (bound = tfd_dk_scalar(c, k, m, TFD_INT64, &b)) != NULL &&
         tfd_dk_ok(k, c, m->binary(c->device, side == 0 ? TFD_DM_GREATER_EQUAL : TFD_DM_LESS_EQUAL, TFD_INT64,
                                   tfd_tensor_const_data(d), tfd_tensor_const_data(bound), tfd_tensor_data(dst), &w, &st),
                   &st);
    tfd_tensor_unref(bound);
    bound = NULL;
  }
  if (ok && upper) {
    int64_t same[2][TFD_MAX_DIMS] = {{1}, {1}};
    tfd_dk_walk(&w, 1, &n, 2, same, NULL);
    ok = tfd_dk_ok(k, c, m->binary(c->device, TFD_DM_LOGICAL_AND, TFD_BOOL, tfd_tensor_const_data(mask),
                                   tfd_tensor_const_data(upper), tfd_tensor_data(mask), &w, &st), &st);
  }
  tfd_tensor_unref(ri);
  tfd_tensor_unref(rj);
  tfd_tensor_unref(d);
  tfd_tensor_unref(upper);
  return ok;
}

static void k_band_part(tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m) {
  tfd_tensor *in = c->inputs[0];
  tfd_tensor *lo_t = tfd_kernel_host_input(c, k, 1), *hi_t = lo_t ? tfd_kernel_host_input(c, k, 2) : NULL;
  int64_t lo = 0, hi = 0;
  bool ok = hi_t && tfd_band_part_bounds(c, k, in, lo_t, hi_t, &lo, &hi);
  tfd_tensor_unref(lo_t);
  tfd_tensor_unref(hi_t);
  if (!ok) return;
  int nd = tfd_tensor_ndims(in);
  int64_t dims[TFD_MAX_DIMS], xs[TFD_MAX_DIMS];
  dims_of(in, dims);
  tfd_dtype dt = tfd_tensor_dtype(in);
  size_t es = tfd_dtype_size(dt);
  tfd_tensor *out = tfd_dk_alloc(c, k, dt, dims, nd);
  int64_t total = out ? tfd_tensor_numel(out) : 0;
  if (!out || total == 0) {
    if (out) c->outputs[0] = out;
    return;
  }
  if (lo < 0 && hi < 0) { /* the whole matrix */
    tfd_dk_strides(nd, dims, xs);
    finish(c, out, copy(k, c, m, es, tfd_tensor_const_data(in), tfd_tensor_data(out), nd, dims, xs, 0, xs, 0));
    return;
  }
  int64_t rows = dims[nd - 2], cols = dims[nd - 1], rc[2] = {rows, cols};
  unsigned char zeros[16] = {0};
  tfd_tensor *mask = tfd_dk_alloc_device(c, k, TFD_BOOL, rc, 2), *zero = NULL;
  ok = mask && band_mask(k, c, m, rows, cols, lo, hi, mask) && (zero = tfd_dk_alloc_device(c, k, dt, NULL, 0)) != NULL;
  tfd_status st = TFD_STATUS_INIT;
  ok = ok && tfd_dk_ok(k, c, m->fill(c->device, es, zeros, tfd_tensor_data(zero), 1, &st), &st);
  if (ok) {
    int64_t wd[3] = {total / (rows * cols), rows, cols}, strides[3][TFD_MAX_DIMS] = {{0, cols, 1}, {rows * cols, cols, 1}, {0}};
    tfd_dm_walk w;
    tfd_dk_walk(&w, 3, wd, 3, strides, NULL);
    ok = tfd_dk_ok(k, c, m->select(c->device, es, tfd_tensor_const_data(mask), tfd_tensor_const_data(in),
                                   tfd_tensor_const_data(zero), tfd_tensor_data(out), &w, &st), &st);
  }
  tfd_tensor_unref(mask);
  tfd_tensor_unref(zero);
  finish(c, out, ok);
}

/* ---- ConcatV2, Pack ---- */
static void k_concat(tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m) {
  int n = c->num_inputs - 1;
  tfd_tensor *first = c->inputs[0];
  int rank = tfd_tensor_ndims(first);
  int64_t axis, dims[TFD_MAX_DIMS];
  if (!tfd_concat_shape(c, k, &axis, dims)) return;
  tfd_tensor *out = tfd_dk_alloc(c, k, tfd_tensor_dtype(first), dims, rank);
  if (!out) return;
  bool ok = true;
  if (tfd_tensor_numel(out) > 0) {
    int64_t outer = 1, inner = 1, at = 0;
    for (int d = 0; d < axis; d++) outer *= dims[d];
    for (int d = (int)axis + 1; d < rank; d++) inner *= dims[d];
    size_t es = tfd_dtype_size(tfd_tensor_dtype(first));
    for (int i = 0; i < n && ok; i++) {
      int64_t block = tfd_tensor_dim(c->inputs[i], (int)axis) * inner;
      ok = copy_rows(k, c, m, es, tfd_tensor_const_data(c->inputs[i]), tfd_tensor_data(out), outer, block, block, 0,
                     dims[axis] * inner, at);
      at += block;
    }
  }
  finish(c, out, ok);
}

/* Concat (TF1) is ConcatV2 with its axis moved from the front to the back. */
static void k_concat_v1(tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m) {
  tfd_tensor *moved[65], **in = tfd_concat_v1_inputs(c, k, moved, 65);
  if (!in) return;
  tfd_kernel_context v2 = *c;
  v2.inputs = in;
  k_concat(k, &v2, m);
  if (in != moved) free(in);
}

static void k_pack(tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m) {
  int n = c->num_inputs;
  tfd_tensor *first = c->inputs[0];
  int nd = tfd_tensor_ndims(first);
  int64_t axis, dims[TFD_MAX_DIMS];
  if (!tfd_pack_shape(c, k, &axis, dims)) return;
  tfd_tensor *out = tfd_dk_alloc(c, k, tfd_tensor_dtype(first), dims, nd + 1);
  if (!out) return;
  bool ok = true;
  if (tfd_tensor_numel(out) > 0) {
    int64_t outer = tfd_dims_product(first, 0, (int)axis), block = tfd_dims_product(first, (int)axis, nd);
    size_t es = tfd_dtype_size(tfd_tensor_dtype(first));
    for (int i = 0; i < n && ok; i++)
      ok = copy_rows(k, c, m, es, tfd_tensor_const_data(c->inputs[i]), tfd_tensor_data(out), outer, block, block, 0,
                     n * block, i * block);
  }
  finish(c, out, ok);
}

/* ---- Unpack, Split, SplitV: num_outputs pieces of `in` along axis, sized by sizes[] ---- */
static void split_into(tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m, tfd_tensor *in, int64_t axis,
                       const int64_t *sizes, bool drop_axis) {
  int nd = tfd_tensor_ndims(in), n = c->num_outputs;
  tfd_tensor *outs[TFD_MAX_OP_OUTPUTS];
  int64_t dims[TFD_MAX_DIMS], odims[TFD_MAX_DIMS];
  dims_of(in, dims);
  for (int i = 0; i < n; i++) {
    dims[axis] = sizes[i];
    int ond = 0;
    for (int d = 0; d < nd; d++)
      if (!drop_axis || d != axis) odims[ond++] = dims[d];
    outs[i] = tfd_dk_alloc(c, k, tfd_tensor_dtype(in), odims, ond);
    if (!outs[i]) {
      while (i--) tfd_tensor_unref(outs[i]);
      return;
    }
  }
  bool ok = true;
  if (tfd_tensor_numel(in) > 0) {
    int64_t outer = tfd_dims_product(in, 0, (int)axis), inner = tfd_dims_product(in, (int)axis + 1, nd),
            row = tfd_tensor_dim(in, (int)axis) * inner;
    size_t es = tfd_dtype_size(tfd_tensor_dtype(in));
    int64_t at = 0;
    for (int i = 0; i < n && ok; i++) {
      int64_t block = sizes[i] * inner;
      ok = copy_rows(k, c, m, es, tfd_tensor_const_data(in), tfd_tensor_data(outs[i]), outer, block, row, at, block, 0);
      at += block;
    }
  }
  for (int i = 0; i < n; i++) {
    if (ok) c->outputs[i] = outs[i];
    else tfd_tensor_unref(outs[i]);
  }
}

static void k_unpack(tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m) {
  int64_t axis, sizes[TFD_MAX_OP_OUTPUTS];
  if (!tfd_unpack_axis(c, k, &axis)) return;
  for (int i = 0; i < c->num_outputs; i++) sizes[i] = 1;
  split_into(k, c, m, c->inputs[0], axis, sizes, true);
}

static void k_split(tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m) {
  int64_t axis, sizes[TFD_MAX_OP_OUTPUTS];
  if (tfd_split_sizes(c, k, &axis, sizes)) split_into(k, c, m, c->inputs[1], axis, sizes, false);
}

static void k_split_v(tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m) {
  int64_t axis, sizes[TFD_MAX_OP_OUTPUTS];
  if (tfd_split_v_sizes(c, k, &axis, sizes)) split_into(k, c, m, c->inputs[0], axis, sizes, false);
}

/* ---- Slice, StridedSlice: out[i...] = in[begin + i * stride] per dimension ---- */
static void strided(tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m, tfd_tensor *in, tfd_tensor *out,
                    const int64_t *begin, const int64_t *stride, bool *ok) {
  int nd = tfd_tensor_ndims(in);
  int64_t in_dims[TFD_MAX_DIMS], istr[TFD_MAX_DIMS], dims[TFD_MAX_DIMS], xs[TFD_MAX_DIMS], ys[TFD_MAX_DIMS], off = 0;
  dims_of(in, in_dims);
  dims_of(out, dims);
  tfd_dk_strides(nd, in_dims, istr);
  tfd_dk_strides(nd, dims, ys);
  if (tfd_tensor_numel(out) == 0) {
    *ok = true;
    return;
  }
  for (int d = 0; d < nd; d++) {
    xs[d] = stride[d] * istr[d];
    off += begin[d] * istr[d];
  }
  *ok = copy(k, c, m, tfd_dtype_size(tfd_tensor_dtype(in)), tfd_tensor_const_data(in), tfd_tensor_data(out), nd, dims, xs,
             off, ys, 0);
}

static void k_slice(tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m) {
  tfd_tensor *in = c->inputs[0];
  int nd = tfd_tensor_ndims(in);
  int64_t begin[TFD_MAX_DIMS], dims[TFD_MAX_DIMS], one[TFD_MAX_DIMS];
  if (!tfd_slice_shape(c, k, begin, dims)) return;
  for (int d = 0; d < nd; d++) one[d] = 1;
  tfd_tensor *out = tfd_dk_alloc(c, k, tfd_tensor_dtype(in), dims, nd);
  if (!out) return;
  bool ok;
  strided(k, c, m, in, out, begin, one, &ok);
  finish(c, out, ok);
}

static void k_strided_slice(tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m) {
  tfd_tensor *in = c->inputs[0];
  tfd_strided_slice_plan p;
  if (!tfd_strided_slice_shape(c, k, &p)) return;
  tfd_tensor *out = tfd_dk_alloc(c, k, tfd_tensor_dtype(in), p.dims, p.ndims);
  if (!out) return;
  bool ok;
  strided(k, c, m, in, out, p.begin, p.stride, &ok);
  if (ok) tfd_strided_slice_output(c, k, out, &p);
  else tfd_tensor_unref(out);
}

/* ---- Tile ---- */
static void k_tile(tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m) {
  tfd_tensor *in = c->inputs[0];
  int nd = tfd_tensor_ndims(in);
  int64_t dims[TFD_MAX_DIMS], in_dims[TFD_MAX_DIMS];
  if (!tfd_tile_shape(c, k, dims)) return;
  dims_of(in, in_dims);
  tfd_tensor *out = tfd_dk_alloc(c, k, tfd_tensor_dtype(in), dims, nd);
  if (!out) return;
  tfd_status st = TFD_STATUS_INIT;
  bool ok = tfd_tensor_numel(out) == 0 ||
            tfd_dk_ok(k, c, m->tile(c->device, tfd_dtype_size(tfd_tensor_dtype(in)), tfd_tensor_const_data(in), in_dims, dims,
                                    nd, tfd_tensor_data(out), &st), &st);
  finish(c, out, ok);
}

/* ---- Pad, PadV2, MirrorPad ---- */
static void k_pad(tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m) {
  tfd_tensor *x = c->inputs[0];
  int nd = tfd_tensor_ndims(x);
  int64_t lo[TFD_MAX_DIMS], dims[TFD_MAX_DIMS], in_dims[TFD_MAX_DIMS];
  if (!tfd_pad_shape(c, k, lo, dims)) return;
  size_t es = tfd_dtype_size(tfd_tensor_dtype(x));
  dims_of(x, in_dims);
  tfd_tensor *y = tfd_dk_alloc(c, k, tfd_tensor_dtype(x), dims, nd);
  if (!y) return;
  int64_t total = tfd_tensor_numel(y), xs[TFD_MAX_DIMS], ys[TFD_MAX_DIMS], off = 0;
  bool ok = true;
  tfd_status st = TFD_STATUS_INIT;
  if (total > 0 && total != tfd_tensor_numel(x)) { /* the padding: the constant, read where it is */
    if (c->num_inputs > 2) {
      int64_t zero = 0, one = 1;
      ok = copy(k, c, m, es, tfd_tensor_const_data(c->inputs[2]), tfd_tensor_data(y), 1, &total, &zero, 0, &one, 0);
    } else {
      unsigned char zeros[16] = {0};
      ok = tfd_dk_ok(k, c, m->fill(c->device, es, zeros, tfd_tensor_data(y), total, &st), &st);
    }
  }
  if (ok && total > 0) {
    tfd_dk_strides(nd, in_dims, xs);
    tfd_dk_strides(nd, dims, ys);
    for (int d = 0; d < nd; d++) off += lo[d] * ys[d];
    ok = copy(k, c, m, es, tfd_tensor_const_data(x), tfd_tensor_data(y), nd, in_dims, xs, 0, ys, off);
  }
  finish(c, y, ok);
}

static void k_mirror_pad(tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m) {
  tfd_tensor *x = c->inputs[0];
  int nd = tfd_tensor_ndims(x);
  bool symmetric = ((const tfd_image_attrs *)k->state)->symmetric; /* tfd_setup_image's */
  int64_t lo[TFD_MAX_DIMS], in_dims[TFD_MAX_DIMS], dims[TFD_MAX_DIMS];
  if (!tfd_mirror_pad_shape(c, k, symmetric, lo, dims)) return;
  dims_of(x, in_dims);
  tfd_tensor *y = tfd_dk_alloc(c, k, tfd_tensor_dtype(x), dims, nd);
  if (!y) return;
  tfd_status st = TFD_STATUS_INIT;
  bool ok = tfd_tensor_numel(y) == 0 ||
            tfd_dk_ok(k, c, m->mirror_pad(c->device, tfd_dtype_size(tfd_tensor_dtype(x)), tfd_tensor_const_data(x), in_dims,
                                          nd, lo, symmetric, tfd_tensor_data(y), dims, &st), &st);
  finish(c, y, ok);
}

/* ---- GatherV2, GatherNd ---- */
/* The indices in device memory: input 1 itself, or its host copy (int32) copied in. */
static tfd_tensor *device_indices(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *ix = c->inputs[1];
  return tfd_tensor_on_host(ix) ? tfd_dk_to_device(c, k, ix) : tfd_tensor_ref(ix);
}

static void k_gather(tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m) {
  tfd_tensor *p = c->inputs[0], *ix = c->inputs[1];
  int pr = tfd_tensor_ndims(p), ir = tfd_tensor_ndims(ix);
  tfd_gather_shape g;
  if (!tfd_gather_check(c, k, &g)) return;
  int64_t axis = g.axis, b = g.batch_dims, limit = g.limit;
  tfd_tensor *out = tfd_dk_alloc(c, k, tfd_tensor_dtype(p), g.dims, g.nd);
  if (!out) return;
  if (tfd_tensor_numel(out) == 0) {
    c->outputs[0] = out;
    return;
  }
  tfd_tensor *di = device_indices(k, c);
  tfd_status st = TFD_STATUS_INIT;
  int64_t inner = tfd_dims_product(p, (int)axis + 1, pr) * (int64_t)tfd_dtype_size(tfd_tensor_dtype(p));
  bool ok = di && tfd_dk_ok(k, c, m->gather(c->device, tfd_tensor_const_data(p), tfd_tensor_const_data(di),
                                            tfd_tensor_dtype(di), tfd_dims_product(p, 0, (int)b),
                                            tfd_dims_product(p, (int)b, (int)axis), limit, tfd_dims_product(ix, (int)b, ir),
                                            (size_t)inner, tfd_tensor_data(out), &st), &st);
  tfd_tensor_unref(di);
  finish(c, out, ok);
}

static void k_gather_nd(tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m) {
  tfd_tensor *p = c->inputs[0], *ix = c->inputs[1];
  int pr = tfd_tensor_ndims(p), nd;
  int64_t depth, dims[TFD_MAX_DIMS], p_dims[TFD_MAX_DIMS];
  if (!tfd_gather_nd_check(c, k, &depth, dims, &nd)) return;
  int64_t nidx = depth ? tfd_tensor_numel(ix) / depth : 0;
  tfd_tensor *out = tfd_dk_alloc(c, k, tfd_tensor_dtype(p), dims, nd);
  if (!out) return;
  if (tfd_tensor_numel(out) == 0) {
    c->outputs[0] = out;
    return;
  }
  int64_t slice_n = tfd_dims_product(p, (int)depth, pr);
  if (!depth) nidx = tfd_tensor_numel(out) / slice_n;
  dims_of(p, p_dims);
  tfd_tensor *di = device_indices(k, c);
  tfd_status st = TFD_STATUS_INIT;
  bool ok = di && tfd_dk_ok(k, c, m->gather_nd(c->device, tfd_tensor_const_data(p), p_dims, pr, tfd_tensor_const_data(di),
                                               tfd_tensor_dtype(di), nidx, (int)depth,
                                               (size_t)slice_n * tfd_dtype_size(tfd_tensor_dtype(p)), tfd_tensor_data(out),
                                               &st), &st);
  tfd_tensor_unref(di);
  finish(c, out, ok);
}

/* ---- Range (float32, float64, int64; the bounds are read on the host) ---- */
static void k_range(tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m) {
  tfd_dtype dt = tfd_tensor_dtype(c->inputs[0]);
  tfd_range r;
  if (!tfd_range_size(c, k, &r)) return;
  int64_t n = r.n;
  /* int64 values beyond 2^53 are made on the host: the math's range computes in double */
  const int64_t big = (int64_t)1 << 53;
  bool exact = !r.integer || (r.start > -big && r.start < big && r.limit > -big && r.limit < big && r.delta > -big &&
                              r.delta < big);
  tfd_tensor *out = NULL;
  if (!exact) {
    tfd_tensor *hv = tfd_tensor_make(NULL, TFD_INT64, &n, 1, NULL);
    if (!hv) {
      tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory making a range of %lld values", (long long)n);
      return;
    }
    for (int64_t i = 0; i < n; i++)
      ((int64_t *)tfd_tensor_data(hv))[i] = (int64_t)((uint64_t)r.start + (uint64_t)i * (uint64_t)r.delta);
    c->outputs[0] = tfd_dk_to_home(c, k, hv);
    tfd_tensor_unref(hv);
    return;
  }
  if (!(out = tfd_dk_alloc(c, k, dt, &n, 1))) return;
  tfd_status st = TFD_STATUS_INIT;
  finish(c, out, n == 0 || tfd_dk_ok(k, c, m->range(c->device, dt, r.fstart, r.fdelta, tfd_tensor_data(out), n, &st), &st));
}

/* ---- Fill, ZerosLike, OnesLike ---- */
static void k_fill(tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m) {
  tfd_tensor *value = c->inputs[1];
  int64_t dims[TFD_MAX_DIMS];
  int nd;
  if (!tfd_fill_shape(c, k, dims, &nd)) return;
  tfd_tensor *out = tfd_dk_alloc(c, k, tfd_tensor_dtype(value), dims, nd);
  if (!out) return;
  int64_t total = tfd_tensor_numel(out), zero = 0, one = 1;
  /* The value is in device memory: a walk that reads it with stride 0 writes it everywhere. */
  finish(c, out, copy(k, c, m, tfd_dtype_size(tfd_tensor_dtype(value)), tfd_tensor_const_data(value), tfd_tensor_data(out), 1,
                      &total, &zero, 0, &one, 0));
}

static void k_zeros_ones(tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m) {
  tfd_tensor *in = c->inputs[0];
  tfd_dtype dt = tfd_tensor_dtype(in);
  int64_t dims[TFD_MAX_DIMS];
  dims_of(in, dims);
  tfd_tensor *out = tfd_dk_alloc(c, k, dt, dims, tfd_tensor_ndims(in));
  if (!out) return;
  unsigned char value[16] = {0};
  int64_t one = 1;
  if (k->dk_op == S_ONES_LIKE) tfd_dm_put(value, dt, 0, &one, TFD_INT64, 0);
  tfd_status st = TFD_STATUS_INIT;
  int64_t n = tfd_tensor_numel(out);
  finish(c, out, n == 0 || tfd_dk_ok(k, c, m->fill(c->device, tfd_dtype_size(dt), value, tfd_tensor_data(out), n, &st), &st));
}

/* ---- OneHot: indices (as int64 in device memory) == iota(depth), walked against each other into a
 * bool mask of the output's shape, then a Select of on_value and off_value read with stride 0 (an
 * index out of [0, depth) matches nothing, so its row is all off_value, as the CPU kernel's) ---- */
static void k_one_hot(tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m) {
  tfd_tensor *ix = c->inputs[0], *on = c->inputs[2], *off = c->inputs[3];
  int nd = tfd_tensor_ndims(ix), out_nd = nd + 1, ax;
  int64_t dims[TFD_MAX_DIMS], depth;
  if (!tfd_one_hot_shape(c, k, dims, &ax, &depth)) return;
  tfd_dtype dt = tfd_tensor_dtype(on);
  tfd_tensor *out = tfd_dk_alloc(c, k, dt, dims, out_nd);
  if (!out) return;
  int64_t total = tfd_tensor_numel(out), n_ix = tfd_tensor_numel(ix);
  if (total == 0) {
    c->outputs[0] = out;
    return;
  }
  tfd_status st = TFD_STATUS_INIT;
  /* int32 indices live on the host: copied in, then widened with the others */
  tfd_tensor *src = tfd_dk_lives_on_device(c->device, tfd_tensor_dtype(ix)) ? tfd_tensor_ref(ix) : tfd_dk_to_device(c, k, ix);
  int64_t ix_dims[TFD_MAX_DIMS];
  dims_of(ix, ix_dims);
  tfd_tensor *wide = src ? tfd_dk_alloc_device(c, k, TFD_INT64, ix_dims, nd) : NULL;
  tfd_tensor *iota = wide ? tfd_dk_alloc_device(c, k, TFD_INT64, &depth, 1) : NULL;
  tfd_tensor *mask = iota ? tfd_dk_alloc_device(c, k, TFD_BOOL, dims, out_nd) : NULL;
  bool ok = mask != NULL;
  if (ok && n_ix > 0)
    ok = tfd_dk_ok(k, c, m->cast(c->device, tfd_tensor_dtype(src), TFD_INT64, tfd_tensor_const_data(src), tfd_tensor_data(wide),
                                 n_ix, &st), &st);
  ok = ok && tfd_dk_ok(k, c, m->range(c->device, TFD_INT64, 0, 1, tfd_tensor_data(iota), depth, &st), &st);
  int64_t ix_strides[TFD_MAX_DIMS], strides[3][TFD_MAX_DIMS], out_strides[TFD_MAX_DIMS];
  tfd_dk_strides(nd, ix_dims, ix_strides);
  tfd_dk_strides(out_nd, dims, out_strides);
  for (int d = 0, j = 0; d < out_nd; d++) {
    strides[0][d] = d == ax ? 0 : ix_strides[j++]; /* the index, the same along the depth axis */
    strides[1][d] = d == ax ? 1 : 0;               /* the position along the depth axis */
  }
  tfd_dm_walk w;
  if (ok && tfd_dk_walk(&w, out_nd, dims, 2, strides, NULL) > 0)
    ok = tfd_dk_ok(k, c, m->binary(c->device, TFD_DM_EQUAL, TFD_INT64, tfd_tensor_const_data(wide), tfd_tensor_const_data(iota),
                                   tfd_tensor_data(mask), &w, &st), &st);
  for (int d = 0; d < out_nd; d++) strides[0][d] = out_strides[d], strides[1][d] = strides[2][d] = 0;
  if (ok && tfd_dk_walk(&w, out_nd, dims, 3, strides, NULL) > 0)
    ok = tfd_dk_ok(k, c, m->select(c->device, tfd_dtype_size(dt), tfd_tensor_const_data(mask), tfd_tensor_const_data(on),
                                   tfd_tensor_const_data(off), tfd_tensor_data(out), &w, &st), &st);
  tfd_tensor_unref(src);
  tfd_tensor_unref(wide);
  tfd_tensor_unref(iota);
  tfd_tensor_unref(mask);
  finish(c, out, ok);
}

/* ---- dispatch and setup ---- */
static void compute(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_device_math *m = tfd_dk_math(k, c);
  if (!m) return;
  switch (k->dk_op) {
    case S_TRANSPOSE: k_transpose(k, c, m); break;
    case S_CONCAT: k_concat(k, c, m); break;
    case S_CONCAT_V1: k_concat_v1(k, c, m); break;
    case S_PACK: k_pack(k, c, m); break;
    case S_UNPACK: k_unpack(k, c, m); break;
    case S_SLICE: k_slice(k, c, m); break;
    case S_STRIDED_SLICE: k_strided_slice(k, c, m); break;
    case S_SPLIT: k_split(k, c, m); break;
    case S_SPLIT_V: k_split_v(k, c, m); break;
    case S_TILE: k_tile(k, c, m); break;
    case S_PAD:
    case S_PAD_V2: k_pad(k, c, m); break;
    case S_MIRROR_PAD: k_mirror_pad(k, c, m); break;
    case S_GATHER: k_gather(k, c, m); break;
    case S_GATHER_V1: {
      tfd_tensor *in[3] = {c->inputs[0], c->inputs[1], k->value};
      tfd_kernel_context v2 = *c;
      v2.inputs = in;
      v2.num_inputs = 3;
      k_gather(k, &v2, m);
      break;
    }
    case S_GATHER_ND: k_gather_nd(k, c, m); break;
    case S_RANGE: k_range(k, c, m); break;
    case S_FILL: k_fill(k, c, m); break;
    case S_BROADCAST_TO: k_broadcast_to(k, c, m); break;
    case S_DEPTH_TO_SPACE:
    case S_SPACE_TO_DEPTH: k_depth_space(k, c, m); break;
    case S_SPACE_BATCH: k_space_batch(k, c, m); break;
    case S_REVERSE: k_reverse(k, c, m); break;
    case S_BAND_PART: k_band_part(k, c, m); break;
    case S_ONE_HOT: k_one_hot(k, c, m); break;
    default: k_zeros_ones(k, c, m); break;
  }
}

tfd_code tfd_dk_setup_shape(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  const char *name = init->op->name;
  size_t i = 0;
  while (i < sizeof ops / sizeof ops[0] && strcmp(ops[i].name, name) != 0) i++;
  if (i == sizeof ops / sizeof ops[0]) return tfd_status_setf(st, TFD_INTERNAL, "no data-movement device kernel for %s", name);
  int op = ops[i].op;
  tfd_kernel_setup_fn cpu = ops[i].cpu;
  k->dk_op = op;
  if (op == S_SQUEEZE) return cpu(k, init, st);                                    /* a view */
  if (op == S_EXPAND_DIMS) return tfd_dk_setup_host_inputs(k, init, cpu, 1u << 1, st); /* a view; its axis on the host */
  /* LinSpace is made on the host from its three scalars, as TensorFlow's GPU kernel is (its start,
   * stop, num and output all in host memory): num elements of a serial formula, then one copy in */
  if (op == S_LIN_SPACE) return tfd_dk_setup_on_host(k, init, cpu, st);
  if (op == S_SHAPE) { /* made on the host from the input's dims, which never leave the device */
    tfd_code code = tfd_dk_setup_on_host(k, init, cpu, st);
    k->host_inputs = 0;
    return code;
  }
  /* Elements that live on the host (int32, handles) are moved there by the CPU kernel. */
  if (!tfd_dk_lives_on_device(init->device, k->T)) return tfd_dk_setup_on_host(k, init, cpu, st);
  if (cpu(k, init, st) != TFD_OK) return tfd_status_code(st);
  k->compute = compute;
  return TFD_OK;
}

/* Size, Rank and ShapeN read only their inputs' dims, BroadcastArgs two short shape vectors: computed
 * on the host, as TensorFlow's GPU kernels keep those in host memory, and moved where their dtypes
 * live (an int64 Size to the device's memory). */
tfd_code tfd_dk_setup_metadata(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  const char *name = init->op->name;
  bool args = strcmp(name, "BroadcastArgs") == 0;
  tfd_kernel_setup_fn cpu = strcmp(name, "Size") == 0     ? tfd_setup_basic
                            : strcmp(name, "ShapeN") == 0 ? tfd_setup_identity_n
                                                          : tfd_setup_array;
  tfd_code code = tfd_dk_setup_on_host(k, init, cpu, st);
  if (!args) k->host_inputs = 0;
  return code;
}
