/* Device kernels of the ops that rearrange data (k_basic.c, k_shape.c, k_gather.c, Pad of k_conv.c,
 * MirrorPad of k_image.c): Transpose, ConcatV2, Pack, Unpack, Slice, StridedSlice, Split, SplitV,
 * Tile, Pad, PadV2, MirrorPad, GatherV2, GatherNd, Range, Fill, ZerosLike, OnesLike, with the CPU
 * kernels' checks and messages; ExpandDims and Squeeze make views of their input's buffer, Shape is
 * computed on the host. Shape-like inputs (perms, axes, sizes, paddings) are read on the host: int32
 * ones are there already, int64 ones are copied out. Elements move by size, so every dtype but
 * int32 (which lives on the host, and runs the CPU kernel there) stays on the device. Indices that
 * live on the host are checked there as the CPU kernel checks them, then copied in; int64 indices,
 * in device memory, are not (an index out of range gathers zeros, as on TensorFlow's GPUs). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/checked.h"
#include "device_kernel.h"
#include "device_math_elem.h"
#include "kernel_shared.h"

enum {
  S_TRANSPOSE,
  S_CONCAT,
  S_PACK,
  S_UNPACK,
  S_SLICE,
  S_STRIDED_SLICE,
  S_SPLIT,
  S_SPLIT_V,
  S_TILE,
  S_PAD,
  S_PAD_V2,
  S_MIRROR_REFLECT,
  S_MIRROR_SYMMETRIC,
  S_GATHER,
  S_GATHER_ND,
  S_RANGE,
  S_FILL,
  S_ZEROS_LIKE,
  S_ONES_LIKE,
  S_EXPAND_DIMS,
  S_SQUEEZE,
  S_SHAPE,
};

static const struct {
  const char *name;
  int op;
  tfd_kernel_setup_fn cpu;
} ops[] = {
    {"Transpose", S_TRANSPOSE, tfd_setup_basic},   {"ConcatV2", S_CONCAT, tfd_setup_basic},
    {"Pack", S_PACK, tfd_setup_shape},             {"Unpack", S_UNPACK, tfd_setup_shape},
    {"Slice", S_SLICE, tfd_setup_shape},           {"StridedSlice", S_STRIDED_SLICE, tfd_setup_shape},
    {"Split", S_SPLIT, tfd_setup_shape},           {"SplitV", S_SPLIT_V, tfd_setup_shape},
    {"Tile", S_TILE, tfd_setup_shape},             {"Pad", S_PAD, tfd_setup_conv},
    {"PadV2", S_PAD_V2, tfd_setup_conv},           {"MirrorPad", S_MIRROR_REFLECT, tfd_setup_image},
    {"GatherV2", S_GATHER, tfd_setup_gather},      {"GatherNd", S_GATHER_ND, tfd_setup_gather},
    {"Range", S_RANGE, tfd_setup_shape},           {"Fill", S_FILL, tfd_setup_basic},
    {"ZerosLike", S_ZEROS_LIKE, tfd_setup_basic},  {"OnesLike", S_ONES_LIKE, tfd_setup_basic},
    {"ExpandDims", S_EXPAND_DIMS, tfd_setup_shape}, {"Squeeze", S_SQUEEZE, tfd_setup_shape},
    {"Shape", S_SHAPE, tfd_setup_basic},
};

static int64_t span(const tfd_tensor *t, int from, int to) {
  int64_t n = 1;
  for (int d = from; d < to; d++) n *= tfd_tensor_dim(t, d);
  return n;
}

static void dims_of(const tfd_tensor *t, int64_t *dims) {
  for (int d = 0; d < tfd_tensor_ndims(t); d++) dims[d] = tfd_tensor_dim(t, d);
}

/* y (operand 1, at y_off with y_strides) from x (operand 0, at x_off with x_strides) over dims[nd]. */
static bool copy(tfd_kernel *k, tfd_kernel_ctx *c, const tfd_device_math *m, size_t es, const void *x, void *y, int nd,
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
static bool copy_rows(tfd_kernel *k, tfd_kernel_ctx *c, const tfd_device_math *m, size_t es, const void *x, void *y,
                      int64_t rows, int64_t len, int64_t x_row, int64_t x_off, int64_t y_row, int64_t y_off) {
  int64_t dims[2] = {rows, len}, xs[2] = {x_row, 1}, ys[2] = {y_row, 1};
  return copy(k, c, m, es, x, y, 2, dims, xs, x_off, ys, y_off);
}

static void finish(tfd_kernel_ctx *c, tfd_tensor *out, bool ok) {
  if (ok) c->outputs[0] = out;
  else tfd_tensor_unref(out);
}

/* ---- Transpose ---- */
static void k_transpose(tfd_kernel *k, tfd_kernel_ctx *c, const tfd_device_math *m) {
  tfd_tensor *in = c->inputs[0], *perm = c->inputs[1];
  int nd = tfd_tensor_ndims(in);
  if (!tfd_kernel_check_index(c, k, perm, "perm")) return;
  if (tfd_tensor_ndims(perm) != 1 || tfd_tensor_numel(perm) != nd) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "perm has %lld entries for a tensor of rank %d",
                    (long long)tfd_tensor_numel(perm), nd);
    return;
  }
  tfd_tensor *ph = tfd_dk_host_input(c, k, 1);
  if (!ph) return;
  int64_t p[TFD_MAX_DIMS], dims[TFD_MAX_DIMS], in_dims[TFD_MAX_DIMS], in_strides[TFD_MAX_DIMS], xs[TFD_MAX_DIMS],
      ys[TFD_MAX_DIMS];
  bool seen[TFD_MAX_DIMS] = {0};
  for (int i = 0; i < nd; i++) {
    p[i] = tfd_tensor_get_index(ph, i);
    if (p[i] < 0 || p[i] >= nd || seen[p[i]]) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "perm is not a permutation of 0..%d", nd - 1);
      tfd_tensor_unref(ph);
      return;
    }
    seen[p[i]] = true;
    dims[i] = tfd_tensor_dim(in, (int)p[i]);
  }
  tfd_tensor_unref(ph);
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

/* ---- ConcatV2, Pack ---- */
static void k_concat(tfd_kernel *k, tfd_kernel_ctx *c, const tfd_device_math *m) {
  int n = c->num_inputs - 1;
  tfd_tensor *first = c->inputs[0], *axis_t = c->inputs[n];
  int rank = tfd_tensor_ndims(first);
  if (!tfd_kernel_check_index(c, k, axis_t, "axis")) return;
  if (tfd_tensor_ndims(axis_t) != 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "axis must be a scalar, got a tensor of rank %d with %lld elements",
                    tfd_tensor_ndims(axis_t), (long long)tfd_tensor_numel(axis_t));
    return;
  }
  tfd_tensor *ah = tfd_dk_host_input(c, k, n);
  if (!ah) return;
  int64_t axis = tfd_tensor_get_index(ah, 0);
  tfd_tensor_unref(ah);
  if (axis < -rank || axis >= rank) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "axis %lld is out of range for rank %d", (long long)axis, rank);
    return;
  }
  if (axis < 0) axis += rank;
  int64_t dims[TFD_MAX_DIMS];
  dims_of(first, dims);
  dims[axis] = 0;
  for (int i = 0; i < n; i++) {
    tfd_tensor *t = c->inputs[i];
    bool ok = tfd_tensor_ndims(t) == rank && tfd_tensor_dtype(t) == tfd_tensor_dtype(first);
    for (int d = 0; ok && d < rank; d++) ok = d == axis || tfd_tensor_dim(t, d) == tfd_tensor_dim(first, d);
    if (!ok) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "value %d does not match the shape of value 0 outside axis %lld", i,
                      (long long)axis);
      return;
    }
    if (!tfd_checked_add(dims[axis], tfd_tensor_dim(t, (int)axis), &dims[axis])) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "the output's size along axis %lld overflows", (long long)axis);
      return;
    }
  }
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

static void k_pack(tfd_kernel *k, tfd_kernel_ctx *c, const tfd_device_math *m) {
  int n = c->num_inputs;
  tfd_tensor *first = c->inputs[0];
  int nd = tfd_tensor_ndims(first);
  int64_t axis = k->index, dims[TFD_MAX_DIMS];
  if (nd >= TFD_MAX_DIMS || axis < -(nd + 1) || axis > nd) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "axis %lld is out of range [%d, %d) (or the result has more than %d dimensions)",
                    (long long)axis, -(nd + 1), nd + 1, TFD_MAX_DIMS);
    return;
  }
  if (axis < 0) axis += nd + 1;
  for (int i = 1; i < n; i++) {
    bool ok = tfd_tensor_ndims(c->inputs[i]) == nd && tfd_tensor_dtype(c->inputs[i]) == tfd_tensor_dtype(first);
    for (int d = 0; ok && d < nd; d++) ok = tfd_tensor_dim(c->inputs[i], d) == tfd_tensor_dim(first, d);
    if (!ok) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Shapes and dtypes of all inputs must match: values[%d] differs from values[0]", i);
      return;
    }
  }
  for (int d = 0, s = 0; d <= nd; d++) dims[d] = d == axis ? n : tfd_tensor_dim(first, s++);
  tfd_tensor *out = tfd_dk_alloc(c, k, tfd_tensor_dtype(first), dims, nd + 1);
  if (!out) return;
  bool ok = true;
  if (tfd_tensor_numel(out) > 0) {
    int64_t outer = span(first, 0, (int)axis), block = span(first, (int)axis, nd);
    size_t es = tfd_dtype_size(tfd_tensor_dtype(first));
    for (int i = 0; i < n && ok; i++)
      ok = copy_rows(k, c, m, es, tfd_tensor_const_data(c->inputs[i]), tfd_tensor_data(out), outer, block, block, 0,
                     n * block, i * block);
  }
  finish(c, out, ok);
}

/* ---- Unpack, Split, SplitV: num_outputs pieces of `in` along axis, sized by sizes[] ---- */
static void split_into(tfd_kernel *k, tfd_kernel_ctx *c, const tfd_device_math *m, tfd_tensor *in, int64_t axis,
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
    int64_t outer = span(in, 0, (int)axis), inner = span(in, (int)axis + 1, nd), row = tfd_tensor_dim(in, (int)axis) * inner;
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

static void k_unpack(tfd_kernel *k, tfd_kernel_ctx *c, const tfd_device_math *m) {
  tfd_tensor *in = c->inputs[0];
  int nd = tfd_tensor_ndims(in), n = c->num_outputs;
  int64_t axis = k->index, sizes[TFD_MAX_OP_OUTPUTS];
  if (axis < -nd || axis >= nd) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "axis %lld is out of range [%d, %d)", (long long)axis, -nd, nd);
    return;
  }
  if (axis < 0) axis += nd;
  if (tfd_tensor_dim(in, (int)axis) != n) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Input shape axis %lld must equal %d, got %lld", (long long)axis, n,
                    (long long)tfd_tensor_dim(in, (int)axis));
    return;
  }
  for (int i = 0; i < n; i++) sizes[i] = 1;
  split_into(k, c, m, in, axis, sizes, true);
}

static void k_split(tfd_kernel *k, tfd_kernel_ctx *c, const tfd_device_math *m) {
  tfd_tensor *in = c->inputs[1];
  int64_t axis, sizes[TFD_MAX_OP_OUTPUTS];
  int n = c->num_outputs;
  if (!tfd_kernel_check_index(c, k, c->inputs[0], "split_dim")) return;
  tfd_tensor *ah = tfd_dk_host_input(c, k, 0);
  bool ok = ah && tfd_kernel_read_axis(c, k, ah, tfd_tensor_ndims(in), "split_dim", &axis);
  tfd_tensor_unref(ah);
  if (!ok) return;
  int64_t dim = tfd_tensor_dim(in, (int)axis);
  if (dim % n != 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                    "Number of ways to split should evenly divide the split dimension, but got split_dim %lld (size = "
                    "%lld) and num_split %d",
                    (long long)axis, (long long)dim, n);
    return;
  }
  for (int i = 0; i < n; i++) sizes[i] = dim / n;
  split_into(k, c, m, in, axis, sizes, false);
}

static void k_split_v(tfd_kernel *k, tfd_kernel_ctx *c, const tfd_device_math *m) {
  tfd_tensor *in = c->inputs[0];
  int64_t axis, sizes[TFD_MAX_OP_OUTPUTS], total = 0;
  int n = c->num_outputs, unknown_at = -1;
  if (!tfd_kernel_check_index(c, k, c->inputs[2], "split_dim")) return;
  tfd_tensor *ah = tfd_dk_host_input(c, k, 2);
  bool ok = ah && tfd_kernel_read_axis(c, k, ah, tfd_tensor_ndims(in), "split_dim", &axis);
  tfd_tensor_unref(ah);
  if (!ok) return;
  tfd_tensor *st = c->inputs[1];
  if (!tfd_kernel_check_index(c, k, st, "size_splits")) return;
  if (tfd_tensor_ndims(st) != 1 || tfd_tensor_numel(st) != n) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "size_splits must be a vector of num_split = %d sizes, got %lld", n,
                    (long long)tfd_tensor_numel(st));
    return;
  }
  tfd_tensor *sh = tfd_dk_host_input(c, k, 1);
  if (!sh) return;
  int64_t dim = tfd_tensor_dim(in, (int)axis);
  for (int i = 0; i < n; i++) {
    sizes[i] = tfd_tensor_get_index(sh, i);
    if (sizes[i] == -1 && unknown_at < 0) {
      unknown_at = i;
    } else if (sizes[i] < 0 || !tfd_checked_add(total, sizes[i], &total)) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "size_splits[%d] = %lld is not allowed (only one -1, others >= 0)", i,
                      (long long)sizes[i]);
      tfd_tensor_unref(sh);
      return;
    }
  }
  tfd_tensor_unref(sh);
  if ((unknown_at < 0 && total != dim) || (unknown_at >= 0 && total > dim)) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                    "Determined shape must either match input shape along split_dim exactly if fully specified, or be "
                    "less than the size of the input along split_dim if not fully specified.  Got: %lld",
                    (long long)total);
    return;
  }
  if (unknown_at >= 0) sizes[unknown_at] = dim - total;
  split_into(k, c, m, in, axis, sizes, false);
}

/* ---- Slice, StridedSlice: out[i...] = in[begin + i * stride] per dimension ---- */
static void strided(tfd_kernel *k, tfd_kernel_ctx *c, const tfd_device_math *m, tfd_tensor *in, tfd_tensor *out,
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

static void k_slice(tfd_kernel *k, tfd_kernel_ctx *c, const tfd_device_math *m) {
  tfd_tensor *in = c->inputs[0], *begin_t = c->inputs[1], *size_t_ = c->inputs[2];
  int nd = tfd_tensor_ndims(in);
  if (!tfd_kernel_check_index(c, k, begin_t, "begin") || !tfd_kernel_check_index(c, k, size_t_, "size")) return;
  if (tfd_tensor_ndims(begin_t) != 1 || tfd_tensor_numel(begin_t) != nd || tfd_tensor_ndims(size_t_) != 1 ||
      tfd_tensor_numel(size_t_) != nd) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Expected begin and size arguments to be 1-D tensors of size %d", nd);
    return;
  }
  tfd_tensor *bh = tfd_dk_host_input(c, k, 1), *sh = bh ? tfd_dk_host_input(c, k, 2) : NULL;
  int64_t begin[TFD_MAX_DIMS], dims[TFD_MAX_DIMS], one[TFD_MAX_DIMS];
  bool ok = sh != NULL;
  for (int d = 0; ok && d < nd; d++) {
    int64_t b = tfd_tensor_get_index(bh, d), s = tfd_tensor_get_index(sh, d), dim = tfd_tensor_dim(in, d);
    if (s == -1 && b >= 0 && b <= dim) s = dim - b;
    if (b < 0 || b > dim || s < 0 || s > dim - b) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                      "Expected begin[%d] in [0, %lld] and size[%d] in [0, %lld], but got %lld and %lld", d,
                      (long long)dim, d, (long long)(b >= 0 && b <= dim ? dim - b : dim), (long long)b,
                      (long long)tfd_tensor_get_index(sh, d));
      ok = false;
    }
    begin[d] = b;
    dims[d] = s;
    one[d] = 1;
  }
  tfd_tensor_unref(bh);
  tfd_tensor_unref(sh);
  if (!ok) return;
  tfd_tensor *out = tfd_dk_alloc(c, k, tfd_tensor_dtype(in), dims, nd);
  if (!out) return;
  strided(k, c, m, in, out, begin, one, &ok);
  finish(c, out, ok);
}

static void k_strided_slice(tfd_kernel *k, tfd_kernel_ctx *c, const tfd_device_math *m) {
  tfd_tensor *in = c->inputs[0], *h[3] = {0};
  if (!tfd_kernel_check_index(c, k, c->inputs[1], "begin") || !tfd_kernel_check_index(c, k, c->inputs[2], "end") ||
      !tfd_kernel_check_index(c, k, c->inputs[3], "strides"))
    return;
  bool ok = true;
  for (int i = 0; i < 3 && ok; i++) ok = (h[i] = tfd_dk_host_input(c, k, i + 1)) != NULL;
  tfd_shape shape;
  tfd_strided_slice_plan p;
  tfd_status tmp = TFD_STATUS_INIT;
  tfd_shape_of_tensor(in, &shape);
  if (ok && tfd_strided_slice_plan_make(&shape, h[0], h[1], h[2], k->state, &p, &tmp) != TFD_OK) {
    tfd_kernel_fail(c, k, tfd_status_code(&tmp), "%s", tfd_status_message(&tmp));
    tfd_status_clear(&tmp);
    ok = false;
  }
  for (int i = 0; i < 3; i++) tfd_tensor_unref(h[i]);
  if (!ok) return;
  tfd_tensor *out = tfd_dk_alloc(c, k, tfd_tensor_dtype(in), p.dims, p.ndims);
  if (!out) return;
  strided(k, c, m, in, out, p.begin, p.stride, &ok);
  if (ok) {
    c->outputs[0] = tfd_tensor_reshape(out, p.final.dims, p.final.ndims, &tmp);
    if (!c->outputs[0]) {
      tfd_kernel_fail(c, k, tfd_status_code(&tmp), "%s", tfd_status_message(&tmp));
      tfd_status_clear(&tmp);
    }
  }
  tfd_tensor_unref(out);
}

/* ---- Tile ---- */
static void k_tile(tfd_kernel *k, tfd_kernel_ctx *c, const tfd_device_math *m) {
  tfd_tensor *in = c->inputs[0];
  int nd = tfd_tensor_ndims(in);
  tfd_tensor *mt = c->inputs[1];
  if (!tfd_kernel_check_index(c, k, mt, "multiples")) return;
  if (tfd_tensor_ndims(mt) != 1 || tfd_tensor_numel(mt) != nd) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Expected multiples argument to be a vector of length %d but got length %lld",
                    nd, (long long)tfd_tensor_numel(mt));
    return;
  }
  tfd_tensor *mh = tfd_dk_host_input(c, k, 1);
  if (!mh) return;
  int64_t dims[TFD_MAX_DIMS], in_dims[TFD_MAX_DIMS];
  dims_of(in, in_dims);
  for (int d = 0; d < nd; d++) {
    int64_t r = tfd_tensor_get_index(mh, d);
    if (r < 0) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Expected multiples[%d] >= 0, but got %lld", d, (long long)r);
      tfd_tensor_unref(mh);
      return;
    }
    if (!tfd_checked_mul(in_dims[d], r, &dims[d])) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "the output's size along dimension %d overflows", d);
      tfd_tensor_unref(mh);
      return;
    }
  }
  tfd_tensor_unref(mh);
  tfd_tensor *out = tfd_dk_alloc(c, k, tfd_tensor_dtype(in), dims, nd);
  if (!out) return;
  tfd_status st = TFD_STATUS_INIT;
  bool ok = tfd_tensor_numel(out) == 0 ||
            tfd_dk_ok(k, c, m->tile(c->device, tfd_dtype_size(tfd_tensor_dtype(in)), tfd_tensor_const_data(in), in_dims, dims,
                                    nd, tfd_tensor_data(out), &st), &st);
  finish(c, out, ok);
}

/* ---- Pad, PadV2, MirrorPad ---- */
/* The [rank, 2] paddings of input 1, read on the host into before/after; false (reported) when malformed. */
static bool read_paddings(tfd_kernel *k, tfd_kernel_ctx *c, int nd, int64_t *lo, int64_t *hi) {
  tfd_tensor *pads = c->inputs[1];
  if (!tfd_kernel_check_index(c, k, pads, "paddings")) return false;
  if (tfd_tensor_ndims(pads) != 2 || tfd_tensor_dim(pads, 0) != nd || tfd_tensor_dim(pads, 1) != 2) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "paddings must be a matrix of shape [%d, 2] (the input's rank)", nd);
    return false;
  }
  tfd_tensor *ph = tfd_dk_host_input(c, k, 1);
  if (!ph) return false;
  for (int d = 0; d < nd; d++) lo[d] = tfd_tensor_get_index(ph, 2 * d), hi[d] = tfd_tensor_get_index(ph, 2 * d + 1);
  tfd_tensor_unref(ph);
  return true;
}

static void k_pad(tfd_kernel *k, tfd_kernel_ctx *c, const tfd_device_math *m) {
  tfd_tensor *x = c->inputs[0];
  int nd = tfd_tensor_ndims(x);
  int64_t lo[TFD_MAX_DIMS], hi[TFD_MAX_DIMS], dims[TFD_MAX_DIMS], in_dims[TFD_MAX_DIMS];
  if (!read_paddings(k, c, nd, lo, hi)) return;
  size_t es = tfd_dtype_size(tfd_tensor_dtype(x));
  if (c->num_inputs > 2) {
    tfd_tensor *v = c->inputs[2];
    if (tfd_tensor_dtype(v) != tfd_tensor_dtype(x) || tfd_tensor_numel(v) != 1) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "constant_values must be a scalar of the input's dtype");
      return;
    }
  }
  dims_of(x, in_dims);
  for (int d = 0; d < nd; d++) {
    if (lo[d] < 0 || hi[d] < 0 || !tfd_checked_add(in_dims[d], lo[d], &dims[d]) || !tfd_checked_add(dims[d], hi[d], &dims[d])) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "paddings must be non-negative and small enough, got [%lld, %lld] in dimension %d",
                      (long long)lo[d], (long long)hi[d], d);
      return;
    }
  }
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

static void k_mirror_pad(tfd_kernel *k, tfd_kernel_ctx *c, const tfd_device_math *m) {
  tfd_tensor *x = c->inputs[0];
  int nd = tfd_tensor_ndims(x);
  bool symmetric = k->dk_op == S_MIRROR_SYMMETRIC;
  int64_t lo[TFD_MAX_DIMS], hi[TFD_MAX_DIMS], in_dims[TFD_MAX_DIMS], dims[TFD_MAX_DIMS];
  if (!read_paddings(k, c, nd, lo, hi)) return;
  for (int d = 0; d < nd; d++) {
    in_dims[d] = tfd_tensor_dim(x, d);
    int64_t most = symmetric ? in_dims[d] : in_dims[d] - 1;
    if (lo[d] < 0 || hi[d] < 0 || lo[d] > most || hi[d] > most) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                      "paddings [%lld, %lld] in dimension %d must be between 0 and %lld (%s, dimension of size %lld)",
                      (long long)lo[d], (long long)hi[d], d, (long long)(most < 0 ? 0 : most),
                      symmetric ? "SYMMETRIC" : "REFLECT", (long long)in_dims[d]);
      return;
    }
    dims[d] = in_dims[d] + lo[d] + hi[d];
  }
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
static tfd_tensor *device_indices(tfd_kernel *k, tfd_kernel_ctx *c) {
  tfd_tensor *ix = c->inputs[1];
  return tfd_tensor_on_host(ix) ? tfd_dk_to_device(c, k, ix) : tfd_tensor_ref(ix);
}

static void k_gather(tfd_kernel *k, tfd_kernel_ctx *c, const tfd_device_math *m) {
  tfd_tensor *p = c->inputs[0], *ix = c->inputs[1], *axis_t = c->inputs[2];
  int pr = tfd_tensor_ndims(p), ir = tfd_tensor_ndims(ix);
  if (!tfd_kernel_check_index(c, k, ix, "indices") || !tfd_kernel_check_index(c, k, axis_t, "axis")) return;
  if (tfd_tensor_numel(axis_t) != 1 || tfd_tensor_ndims(axis_t) > 1) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "axis must be a scalar");
    return;
  }
  if (pr == 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "params must be at least 1 dimensional");
    return;
  }
  tfd_tensor *ah = tfd_dk_host_input(c, k, 2);
  if (!ah) return;
  int64_t axis = tfd_tensor_get_index(ah, 0), b = k->index;
  tfd_tensor_unref(ah);
  if (axis < -pr || axis >= pr) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Expected axis in the range [%d, %d), but got %lld", -pr, pr, (long long)axis);
    return;
  }
  if (axis < 0) axis += pr;
  if (b != 0) {
    if (b < -ir || b > ir) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Expected batch_dims in the range [%d, %d], but got %lld", -ir, ir, (long long)b);
      return;
    }
    if (b < 0) b += ir;
    if (b >= pr) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "batch_dims (%lld) must be less than rank(params) (%d).", (long long)b, pr);
      return;
    }
    if (axis < b) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "batch_dims (%lld) must be less than or equal to axis (%lld).", (long long)b,
                      (long long)axis);
      return;
    }
    for (int d = 0; d < b; d++)
      if (tfd_tensor_dim(p, d) != tfd_tensor_dim(ix, d)) {
        tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "params.shape[%d]: %lld should be equal to indices.shape[%d]: %lld", d,
                        (long long)tfd_tensor_dim(p, d), d, (long long)tfd_tensor_dim(ix, d));
        return;
      }
  }
  if (pr - 1 + ir - b > TFD_MAX_DIMS) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "the result would have more than %d dimensions", TFD_MAX_DIMS);
    return;
  }
  int64_t limit = tfd_tensor_dim(p, (int)axis), nidx = tfd_tensor_numel(ix), dims[TFD_MAX_DIMS];
  for (int64_t i = 0; tfd_tensor_on_host(ix) && i < nidx; i++) {
    int64_t v = tfd_tensor_get_index(ix, i);
    if (v < 0 || v >= limit) {
      char buf[128];
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "indices[%s] = %lld is not in [0, %lld)",
                      tfd_index_coords(ix, i, ir, buf, sizeof buf), (long long)v, (long long)limit);
      return;
    }
  }
  int nd = 0;
  for (int d = 0; d < axis; d++) dims[nd++] = tfd_tensor_dim(p, d);
  for (int d = (int)b; d < ir; d++) dims[nd++] = tfd_tensor_dim(ix, d);
  for (int d = (int)axis + 1; d < pr; d++) dims[nd++] = tfd_tensor_dim(p, d);
  tfd_tensor *out = tfd_dk_alloc(c, k, tfd_tensor_dtype(p), dims, nd);
  if (!out) return;
  if (tfd_tensor_numel(out) == 0) {
    c->outputs[0] = out;
    return;
  }
  tfd_tensor *di = device_indices(k, c);
  tfd_status st = TFD_STATUS_INIT;
  int64_t inner = span(p, (int)axis + 1, pr) * (int64_t)tfd_dtype_size(tfd_tensor_dtype(p));
  bool ok = di && tfd_dk_ok(k, c, m->gather(c->device, tfd_tensor_const_data(p), tfd_tensor_const_data(di),
                                            tfd_tensor_dtype(di), span(p, 0, (int)b), span(p, (int)b, (int)axis), limit,
                                            span(ix, (int)b, ir), (size_t)inner, tfd_tensor_data(out), &st), &st);
  tfd_tensor_unref(di);
  finish(c, out, ok);
}

static void k_gather_nd(tfd_kernel *k, tfd_kernel_ctx *c, const tfd_device_math *m) {
  tfd_tensor *p = c->inputs[0], *ix = c->inputs[1];
  int pr = tfd_tensor_ndims(p), ir = tfd_tensor_ndims(ix);
  if (!tfd_kernel_check_index(c, k, ix, "indices")) return;
  if (ir == 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "indices must be at least a vector");
    return;
  }
  int64_t depth = tfd_tensor_dim(ix, ir - 1);
  if (depth > pr) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "index innermost dimension length must be <= params rank; saw: %lld vs. %d",
                    (long long)depth, pr);
    return;
  }
  if (ir - 1 + pr - depth > TFD_MAX_DIMS) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "the result would have more than %d dimensions", TFD_MAX_DIMS);
    return;
  }
  int64_t dims[TFD_MAX_DIMS], p_dims[TFD_MAX_DIMS];
  int nd = 0;
  for (int d = 0; d < ir - 1; d++) dims[nd++] = tfd_tensor_dim(ix, d);
  for (int d = (int)depth; d < pr; d++) dims[nd++] = tfd_tensor_dim(p, d);
  int64_t nidx = depth ? tfd_tensor_numel(ix) / depth : 0;
  for (int64_t i = 0; tfd_tensor_on_host(ix) && depth && i < nidx; i++) {
    for (int64_t j = 0; j < depth; j++) {
      int64_t v = tfd_tensor_get_index(ix, i * depth + j);
      if (v < 0 || v >= tfd_tensor_dim(p, (int)j)) {
        char at[128], val[256], shp[128];
        size_t n = 0;
        for (int64_t q = 0; q < depth && n < sizeof val; q++)
          n += (size_t)snprintf(val + n, sizeof val - n, "%s%lld", q ? ", " : "", (long long)tfd_tensor_get_index(ix, i * depth + q));
        tfd_shape ps;
        tfd_shape_of_tensor(p, &ps);
        tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "indices[%s] = [%s] does not index into param shape %s",
                        tfd_index_coords(ix, i, ir - 1, at, sizeof at), val, tfd_shape_string(&ps, shp, sizeof shp));
        return;
      }
    }
  }
  tfd_tensor *out = tfd_dk_alloc(c, k, tfd_tensor_dtype(p), dims, nd);
  if (!out) return;
  if (tfd_tensor_numel(out) == 0) {
    c->outputs[0] = out;
    return;
  }
  int64_t slice_n = span(p, (int)depth, pr);
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
static void k_range(tfd_kernel *k, tfd_kernel_ctx *c, const tfd_device_math *m) {
  const char *names[3] = {"start", "limit", "delta"};
  tfd_dtype dt = tfd_tensor_dtype(c->inputs[0]);
  for (int i = 0; i < 3; i++) {
    if (tfd_tensor_numel(c->inputs[i]) != 1 || tfd_tensor_ndims(c->inputs[i]) != 0 || tfd_tensor_dtype(c->inputs[i]) != dt) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "%s must be a scalar of the same dtype as start", names[i]);
      return;
    }
  }
  tfd_tensor *h[3] = {0};
  bool ok = true;
  for (int i = 0; i < 3 && ok; i++) ok = (h[i] = tfd_dk_host_input(c, k, i)) != NULL;
  double v[3] = {0};
  int64_t iv[3] = {0};
  for (int i = 0; i < 3 && ok; i++) {
    if (dt == TFD_INT64) iv[i] = tfd_tensor_get_index(h[i], 0), v[i] = (double)iv[i];
    else v[i] = dt == TFD_FLOAT32 ? ((const float *)tfd_tensor_const_data(h[i]))[0] : ((const double *)tfd_tensor_const_data(h[i]))[0];
  }
  for (int i = 0; i < 3; i++) tfd_tensor_unref(h[i]);
  if (!ok) return;
  int64_t n;
  bool exact = true; /* int64 values beyond 2^53 are made on the host: the math's range computes in double */
  if (dt == TFD_INT64) {
    int64_t start = iv[0], limit = iv[1], delta = iv[2];
    if (delta == 0) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Requires delta != 0: %lld", (long long)delta);
      return;
    }
    if ((delta > 0 && start > limit) || (delta < 0 && start < limit)) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Requires start %s limit when delta %s 0: %lld/%lld", delta > 0 ? "<=" : ">=",
                      delta > 0 ? ">" : "<", (long long)start, (long long)limit);
      return;
    }
    uint64_t dist = delta > 0 ? (uint64_t)limit - (uint64_t)start : (uint64_t)start - (uint64_t)limit;
    uint64_t step = delta > 0 ? (uint64_t)delta : 0 - (uint64_t)delta;
    uint64_t count = dist / step + (dist % step != 0);
    if (count > (uint64_t)INT64_MAX) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Requires the range size to fit in int64, got %llu", (unsigned long long)count);
      return;
    }
    n = (int64_t)count;
    const int64_t big = (int64_t)1 << 53;
    exact = start > -big && start < big && limit > -big && limit < big && delta > -big && delta < big;
  } else {
    double start = v[0], limit = v[1], delta = v[2];
    if (delta == 0) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Requires delta != 0: %g", delta);
      return;
    }
    if ((delta > 0 && start > limit) || (delta < 0 && start < limit)) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Requires start %s limit when delta %s 0: %g/%g", delta > 0 ? "<=" : ">=",
                      delta > 0 ? ">" : "<", start, limit);
      return;
    }
    double size = dt == TFD_FLOAT32 ? (double)ceilf(fabsf(((float)limit - (float)start) / (float)delta))
                                    : ceil(fabs((limit - start) / delta));
    if (!(size >= 0 && size <= (double)(INT64_MAX / 16))) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Requires the range size to be finite and fit in memory, got %g", size);
      return;
    }
    n = (int64_t)size;
  }
  tfd_tensor *out = NULL;
  if (!exact) {
    tfd_tensor *hv = tfd_tensor_new(NULL, TFD_INT64, &n, 1, NULL);
    if (!hv) {
      tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory making a range of %lld values", (long long)n);
      return;
    }
    for (int64_t i = 0; i < n; i++)
      ((int64_t *)tfd_tensor_data(hv))[i] = (int64_t)((uint64_t)iv[0] + (uint64_t)i * (uint64_t)iv[2]);
    c->outputs[0] = tfd_dk_to_home(c, k, hv);
    tfd_tensor_unref(hv);
    return;
  }
  if (!(out = tfd_dk_alloc(c, k, dt, &n, 1))) return;
  tfd_status st = TFD_STATUS_INIT;
  finish(c, out, n == 0 || tfd_dk_ok(k, c, m->range(c->device, dt, v[0], v[2], tfd_tensor_data(out), n, &st), &st));
}

/* ---- Fill, ZerosLike, OnesLike ---- */
static void k_fill(tfd_kernel *k, tfd_kernel_ctx *c, const tfd_device_math *m) {
  tfd_tensor *dims_t = c->inputs[0], *value = c->inputs[1];
  if (!tfd_kernel_check_index(c, k, dims_t, "dims")) return;
  if (tfd_tensor_ndims(dims_t) != 1 || tfd_tensor_numel(dims_t) > TFD_MAX_DIMS || tfd_tensor_ndims(value) != 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "dims must be a vector and value a scalar");
    return;
  }
  tfd_tensor *dh = tfd_dk_host_input(c, k, 0);
  if (!dh) return;
  int64_t dims[TFD_MAX_DIMS];
  int nd = (int)tfd_tensor_numel(dh);
  for (int i = 0; i < nd; i++) dims[i] = tfd_tensor_get_index(dh, i);
  tfd_tensor_unref(dh);
  tfd_tensor *out = tfd_dk_alloc(c, k, tfd_tensor_dtype(value), dims, nd);
  if (!out) return;
  int64_t total = tfd_tensor_numel(out), zero = 0, one = 1;
  /* The value is in device memory: a walk that reads it with stride 0 writes it everywhere. */
  finish(c, out, copy(k, c, m, tfd_dtype_size(tfd_tensor_dtype(value)), tfd_tensor_const_data(value), tfd_tensor_data(out), 1,
                      &total, &zero, 0, &one, 0));
}

static void k_zeros_ones(tfd_kernel *k, tfd_kernel_ctx *c, const tfd_device_math *m) {
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

/* ---- dispatch and setup ---- */
static void compute(tfd_kernel *k, tfd_kernel_ctx *c) {
  const tfd_device_math *m = tfd_dk_math(k, c);
  if (!m) return;
  switch (k->dk_op) {
    case S_TRANSPOSE: k_transpose(k, c, m); break;
    case S_CONCAT: k_concat(k, c, m); break;
    case S_PACK: k_pack(k, c, m); break;
    case S_UNPACK: k_unpack(k, c, m); break;
    case S_SLICE: k_slice(k, c, m); break;
    case S_STRIDED_SLICE: k_strided_slice(k, c, m); break;
    case S_SPLIT: k_split(k, c, m); break;
    case S_SPLIT_V: k_split_v(k, c, m); break;
    case S_TILE: k_tile(k, c, m); break;
    case S_PAD:
    case S_PAD_V2: k_pad(k, c, m); break;
    case S_MIRROR_REFLECT:
    case S_MIRROR_SYMMETRIC: k_mirror_pad(k, c, m); break;
    case S_GATHER: k_gather(k, c, m); break;
    case S_GATHER_ND: k_gather_nd(k, c, m); break;
    case S_RANGE: k_range(k, c, m); break;
    case S_FILL: k_fill(k, c, m); break;
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
  if (op == S_SHAPE) { /* made on the host from the input's dims, which never leave the device */
    tfd_code code = tfd_dk_setup_on_host(k, init, cpu, st);
    k->host_inputs = 0;
    return code;
  }
  /* Elements that live on the host (int32, handles) are moved there by the CPU kernel. */
  if (!tfd_dk_lives_on_device(init->device, k->T)) return tfd_dk_setup_on_host(k, init, cpu, st);
  if (cpu(k, init, st) != TFD_OK) return tfd_status_code(st);
  if (op == S_MIRROR_REFLECT && strcmp(tfd_attr_string(init->node, "mode", ""), "SYMMETRIC") == 0)
    k->dk_op = S_MIRROR_SYMMETRIC;
  k->compute = compute;
  return TFD_OK;
}
