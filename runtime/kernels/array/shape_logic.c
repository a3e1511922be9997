/* shape_logic.h: the checks and output shapes of the data-movement ops, for their CPU and device
 * kernels. */
#include <math.h>
#include <stdlib.h>

#include "../../core/tensor_internal.h"
#include "../../core/checked.h"
#include "../../core/status_internal.h"
#include "../kernel_shared.h"
#include "shape_logic.h"

/* ---- Transpose, ConcatV2, Pack, Unpack ---- */
bool tfd_transpose_shape(tfd_kernel_context *c, const tfd_kernel *k, int64_t *perm, int64_t *dims) {
  tfd_tensor *in = c->inputs[0], *p = c->inputs[1];
  int nd = tfd_tensor_ndims(in);
  if (!tfd_kernel_check_index(c, k, p, "perm")) return false;
  if (tfd_tensor_ndims(p) != 1 || tfd_tensor_numel(p) != nd) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "perm has %lld entries for a tensor of rank %d", (long long)tfd_tensor_numel(p),
                    nd);
    return false;
  }
  tfd_tensor *ph = tfd_kernel_host_input(c, k, 1);
  if (!ph) return false;
  bool seen[TFD_MAX_DIMS] = {0}, ok = true;
  for (int i = 0; i < nd && ok; i++) {
    perm[i] = tfd_tensor_get_index(ph, i);
    if (perm[i] < 0 || perm[i] >= nd || seen[perm[i]]) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "perm is not a permutation of 0..%d", nd - 1);
      ok = false;
    } else {
      seen[perm[i]] = true;
      dims[i] = tfd_tensor_dim(in, (int)perm[i]);
    }
  }
  tfd_tensor_unref(ph);
  return ok;
}

bool tfd_concat_shape(tfd_kernel_context *c, const tfd_kernel *k, int64_t *axis_out, int64_t *dims) {
  int n = c->num_inputs - 1;
  tfd_tensor *first = c->inputs[0], *axis_t = c->inputs[n];
  int rank = tfd_tensor_ndims(first);
  if (!tfd_kernel_check_index(c, k, axis_t, "axis")) return false;
  if (tfd_tensor_ndims(axis_t) != 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "axis must be a scalar, got a tensor of rank %d with %lld elements",
                    tfd_tensor_ndims(axis_t), (long long)tfd_tensor_numel(axis_t));
    return false;
  }
  tfd_tensor *ah = tfd_kernel_host_input(c, k, n);
  if (!ah) return false;
  int64_t axis = tfd_tensor_get_index(ah, 0);
  tfd_tensor_unref(ah);
  if (axis < -rank || axis >= rank) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "axis %lld is out of range for rank %d", (long long)axis, rank);
    return false;
  }
  if (axis < 0) axis += rank;
  for (int d = 0; d < rank; d++) dims[d] = tfd_tensor_dim(first, d);
  dims[axis] = 0;
  for (int i = 0; i < n; i++) {
    tfd_tensor *t = c->inputs[i];
    bool ok = tfd_tensor_ndims(t) == rank && tfd_tensor_dtype(t) == tfd_tensor_dtype(first);
    for (int d = 0; ok && d < rank; d++) ok = d == axis || tfd_tensor_dim(t, d) == tfd_tensor_dim(first, d);
    if (!ok) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "value %d does not match the shape of value 0 outside axis %lld", i,
                      (long long)axis);
      return false;
    }
    if (!tfd_checked_add(dims[axis], tfd_tensor_dim(t, (int)axis), &dims[axis])) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "the output's size along axis %lld overflows", (long long)axis);
      return false;
    }
  }
  *axis_out = axis;
  return true;
}

bool tfd_pack_shape(tfd_kernel_context *c, const tfd_kernel *k, int64_t *axis_out, int64_t *dims) {
  int n = c->num_inputs;
  tfd_tensor *first = c->inputs[0];
  int nd = tfd_tensor_ndims(first);
  int64_t axis = k->index;
  if (nd >= TFD_MAX_DIMS || axis < -(nd + 1) || axis > nd) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "axis %lld is out of range [%d, %d) (or the result has more than %d dimensions)",
                    (long long)axis, -(nd + 1), nd + 1, TFD_MAX_DIMS);
    return false;
  }
  if (axis < 0) axis += nd + 1;
  for (int i = 1; i < n; i++) {
    bool ok = tfd_tensor_ndims(c->inputs[i]) == nd && tfd_tensor_dtype(c->inputs[i]) == tfd_tensor_dtype(first);
    for (int d = 0; ok && d < nd; d++) ok = tfd_tensor_dim(c->inputs[i], d) == tfd_tensor_dim(first, d);
    if (!ok) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Shapes and dtypes of all inputs must match: values[%d] differs from values[0]", i);
      return false;
    }
  }
  for (int d = 0, s = 0; d <= nd; d++) dims[d] = d == axis ? n : tfd_tensor_dim(first, s++);
  *axis_out = axis;
  return true;
}

bool tfd_unpack_axis(tfd_kernel_context *c, const tfd_kernel *k, int64_t *axis_out) {
  tfd_tensor *in = c->inputs[0];
  int nd = tfd_tensor_ndims(in), n = c->num_outputs;
  int64_t axis = k->index;
  if (axis < -nd || axis >= nd) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "axis %lld is out of range [%d, %d)", (long long)axis, -nd, nd);
    return false;
  }
  if (axis < 0) axis += nd;
  if (tfd_tensor_dim(in, (int)axis) != n) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Input shape axis %lld must equal %d, got %lld", (long long)axis, n,
                    (long long)tfd_tensor_dim(in, (int)axis));
    return false;
  }
  *axis_out = axis;
  return true;
}

/* ---- Split, SplitV ---- */
bool tfd_split_sizes(tfd_kernel_context *c, const tfd_kernel *k, int64_t *axis, int64_t *sizes) {
  tfd_tensor *in = c->inputs[1];
  int n = c->num_outputs;
  if (!tfd_kernel_read_axis(c, k, 0, tfd_tensor_ndims(in), "split_dim", axis)) return false;
  int64_t dim = tfd_tensor_dim(in, (int)*axis);
  if (dim % n != 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                    "Number of ways to split should evenly divide the split dimension, but got split_dim %lld (size = "
                    "%lld) and num_split %d",
                    (long long)*axis, (long long)dim, n);
    return false;
  }
  for (int i = 0; i < n; i++) sizes[i] = dim / n;
  return true;
}

bool tfd_split_v_sizes(tfd_kernel_context *c, const tfd_kernel *k, int64_t *axis, int64_t *sizes) {
  tfd_tensor *in = c->inputs[0], *st = c->inputs[1];
  int64_t total = 0;
  int n = c->num_outputs, unknown_at = -1;
  if (!tfd_kernel_read_axis(c, k, 2, tfd_tensor_ndims(in), "split_dim", axis)) return false;
  if (!tfd_kernel_check_index(c, k, st, "size_splits")) return false;
  if (tfd_tensor_ndims(st) != 1 || tfd_tensor_numel(st) != n) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "size_splits must be a vector of num_split = %d sizes, got %lld", n,
                    (long long)tfd_tensor_numel(st));
    return false;
  }
  tfd_tensor *sh = tfd_kernel_host_input(c, k, 1);
  if (!sh) return false;
  int64_t dim = tfd_tensor_dim(in, (int)*axis);
  bool ok = true;
  for (int i = 0; i < n && ok; i++) {
    sizes[i] = tfd_tensor_get_index(sh, i);
    if (sizes[i] == -1 && unknown_at < 0) {
      unknown_at = i;
    } else if (sizes[i] < 0 || !tfd_checked_add(total, sizes[i], &total)) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "size_splits[%d] = %lld is not allowed (only one -1, others >= 0)", i,
                      (long long)sizes[i]);
      ok = false;
    }
  }
  tfd_tensor_unref(sh);
  if (!ok) return false;
  if ((unknown_at < 0 && total != dim) || (unknown_at >= 0 && total > dim)) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                    "Determined shape must either match input shape along split_dim exactly if fully specified, or be "
                    "less than the size of the input along split_dim if not fully specified.  Got: %lld",
                    (long long)total);
    return false;
  }
  if (unknown_at >= 0) sizes[unknown_at] = dim - total;
  return true;
}

/* ---- Slice, StridedSlice ---- */
bool tfd_slice_shape(tfd_kernel_context *c, const tfd_kernel *k, int64_t *begin, int64_t *dims) {
  tfd_tensor *in = c->inputs[0], *begin_t = c->inputs[1], *size_t_ = c->inputs[2];
  int nd = tfd_tensor_ndims(in);
  if (!tfd_kernel_check_index(c, k, begin_t, "begin") || !tfd_kernel_check_index(c, k, size_t_, "size")) return false;
  if (tfd_tensor_ndims(begin_t) != 1 || tfd_tensor_numel(begin_t) != nd || tfd_tensor_ndims(size_t_) != 1 ||
      tfd_tensor_numel(size_t_) != nd) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Expected begin and size arguments to be 1-D tensors of size %d", nd);
    return false;
  }
  tfd_tensor *bh = tfd_kernel_host_input(c, k, 1), *sh = bh ? tfd_kernel_host_input(c, k, 2) : NULL;
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
  }
  tfd_tensor_unref(bh);
  tfd_tensor_unref(sh);
  return ok;
}

bool tfd_strided_slice_shape(tfd_kernel_context *c, const tfd_kernel *k, tfd_strided_slice_plan *p) {
  if (!tfd_kernel_check_index(c, k, c->inputs[1], "begin") || !tfd_kernel_check_index(c, k, c->inputs[2], "end") ||
      !tfd_kernel_check_index(c, k, c->inputs[3], "strides"))
    return false;
  tfd_tensor *h[3] = {0};
  bool ok = true;
  for (int i = 0; i < 3 && ok; i++) ok = (h[i] = tfd_kernel_host_input(c, k, i + 1)) != NULL;
  tfd_shape shape;
  tfd_status tmp = TFD_STATUS_INIT;
  tfd_shape_of_tensor(c->inputs[0], &shape);
  if (ok && tfd_strided_slice_plan_make(&shape, h[0], h[1], h[2], k->state, p, &tmp) != TFD_OK) {
    tfd_kernel_fail(c, k, tfd_status_code(&tmp), "%s", tfd_status_message(&tmp));
    tfd_status_clear(&tmp);
    ok = false;
  }
  for (int i = 0; i < 3; i++) tfd_tensor_unref(h[i]);
  return ok;
}

void tfd_strided_slice_output(tfd_kernel_context *c, const tfd_kernel *k, tfd_tensor *strided,
                              const tfd_strided_slice_plan *p) {
  tfd_status tmp = TFD_STATUS_INIT;
  c->outputs[0] = tfd_tensor_make_reshape(strided, p->final.dims, p->final.ndims, &tmp);
  tfd_tensor_unref(strided);
  if (!c->outputs[0]) {
    tfd_kernel_fail(c, k, tfd_status_code(&tmp), "%s", tfd_status_message(&tmp));
    tfd_status_clear(&tmp);
  }
}

/* ---- Tile ---- */
bool tfd_tile_shape(tfd_kernel_context *c, const tfd_kernel *k, int64_t *dims) {
  tfd_tensor *in = c->inputs[0], *m = c->inputs[1];
  int nd = tfd_tensor_ndims(in);
  if (!tfd_kernel_check_index(c, k, m, "multiples")) return false;
  if (tfd_tensor_ndims(m) != 1 || tfd_tensor_numel(m) != nd) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Expected multiples argument to be a vector of length %d but got length %lld",
                    nd, (long long)tfd_tensor_numel(m));
    return false;
  }
  tfd_tensor *mh = tfd_kernel_host_input(c, k, 1);
  if (!mh) return false;
  bool ok = true;
  for (int d = 0; d < nd && ok; d++) {
    int64_t r = tfd_tensor_get_index(mh, d);
    if (r < 0) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Expected multiples[%d] >= 0, but got %lld", d, (long long)r);
      ok = false;
    } else if (!tfd_checked_mul(tfd_tensor_dim(in, d), r, &dims[d])) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "the output's size along dimension %d overflows", d);
      ok = false;
    }
  }
  tfd_tensor_unref(mh);
  return ok;
}

/* ---- Pad, PadV2, MirrorPad ---- */
/* The [rank, 2] paddings of input 1, read on the host into lo and hi. */
static bool read_paddings(tfd_kernel_context *c, const tfd_kernel *k, int nd, int64_t *lo, int64_t *hi) {
  tfd_tensor *pads = c->inputs[1];
  if (!tfd_kernel_check_index(c, k, pads, "paddings")) return false;
  if (tfd_tensor_ndims(pads) != 2 || tfd_tensor_dim(pads, 0) != nd || tfd_tensor_dim(pads, 1) != 2) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "paddings must be a matrix of shape [%d, 2] (the input's rank)", nd);
    return false;
  }
  tfd_tensor *ph = tfd_kernel_host_input(c, k, 1);
  if (!ph) return false;
  for (int d = 0; d < nd; d++) lo[d] = tfd_tensor_get_index(ph, 2 * d), hi[d] = tfd_tensor_get_index(ph, 2 * d + 1);
  tfd_tensor_unref(ph);
  return true;
}

bool tfd_pad_shape(tfd_kernel_context *c, const tfd_kernel *k, int64_t *before, int64_t *dims) {
  tfd_tensor *x = c->inputs[0];
  int nd = tfd_tensor_ndims(x);
  int64_t after[TFD_MAX_DIMS];
  if (!read_paddings(c, k, nd, before, after)) return false;
  if (c->num_inputs > 2) {
    tfd_tensor *v = c->inputs[2];
    if (tfd_tensor_dtype(v) != tfd_tensor_dtype(x) || tfd_tensor_numel(v) != 1) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "constant_values must be a scalar of the input's dtype");
      return false;
    }
  }
  for (int d = 0; d < nd; d++) {
    int64_t lo = before[d], hi = after[d];
    if (lo < 0 || hi < 0 || !tfd_checked_add(tfd_tensor_dim(x, d), lo, &dims[d]) || !tfd_checked_add(dims[d], hi, &dims[d])) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "paddings must be non-negative and small enough, got [%lld, %lld] in dimension %d",
                      (long long)lo, (long long)hi, d);
      return false;
    }
  }
  return true;
}

bool tfd_mirror_pad_shape(tfd_kernel_context *c, const tfd_kernel *k, bool symmetric, int64_t *before, int64_t *dims) {
  tfd_tensor *x = c->inputs[0];
  int nd = tfd_tensor_ndims(x);
  int64_t after[TFD_MAX_DIMS];
  if (!read_paddings(c, k, nd, before, after)) return false;
  for (int d = 0; d < nd; d++) {
    int64_t lo = before[d], hi = after[d], in = tfd_tensor_dim(x, d);
    int64_t most = symmetric ? in : in - 1;
    if (lo < 0 || hi < 0 || lo > most || hi > most) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                      "paddings [%lld, %lld] in dimension %d must be between 0 and %lld (%s, dimension of size %lld)",
                      (long long)lo, (long long)hi, d, (long long)(most < 0 ? 0 : most), symmetric ? "SYMMETRIC" : "REFLECT",
                      (long long)in);
      return false;
    }
    dims[d] = in + lo + hi; /* at most three times a real tensor's dimension */
  }
  return true;
}

/* ---- Range ---- */
bool tfd_range_size(tfd_kernel_context *c, const tfd_kernel *k, tfd_range *r) {
  const char *names[3] = {"start", "limit", "delta"};
  tfd_dtype dt = tfd_tensor_dtype(c->inputs[0]);
  for (int i = 0; i < 3; i++) {
    if (tfd_tensor_numel(c->inputs[i]) != 1 || tfd_tensor_ndims(c->inputs[i]) != 0 || tfd_tensor_dtype(c->inputs[i]) != dt) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "%s must be a scalar of the same dtype as start", names[i]);
      return false;
    }
  }
  tfd_tensor *h[3] = {0};
  bool ok = true;
  for (int i = 0; i < 3 && ok; i++) ok = (h[i] = tfd_kernel_host_input(c, k, i)) != NULL;
  double v[3] = {0};
  int64_t iv[3] = {0};
  r->integer = dt == TFD_INT32 || dt == TFD_INT64;
  for (int i = 0; i < 3 && ok; i++) {
    if (r->integer) iv[i] = tfd_tensor_get_index(h[i], 0), v[i] = (double)iv[i];
    else v[i] = dt == TFD_FLOAT32 ? ((const float *)tfd_tensor_const_data(h[i]))[0] : ((const double *)tfd_tensor_const_data(h[i]))[0];
  }
  for (int i = 0; i < 3; i++) tfd_tensor_unref(h[i]);
  if (!ok) return false;
  r->start = iv[0], r->limit = iv[1], r->delta = iv[2];
  r->fstart = v[0], r->fdelta = v[2];
  if (r->integer) {
    int64_t start = iv[0], limit = iv[1], delta = iv[2];
    if (delta == 0) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Requires delta != 0: %lld", (long long)delta);
      return false;
    }
    if ((delta > 0 && start > limit) || (delta < 0 && start < limit)) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Requires start %s limit when delta %s 0: %lld/%lld", delta > 0 ? "<=" : ">=",
                      delta > 0 ? ">" : "<", (long long)start, (long long)limit);
      return false;
    }
    /* |limit - start| and |delta| as unsigned: exact for any int64s. */
    uint64_t dist = delta > 0 ? (uint64_t)limit - (uint64_t)start : (uint64_t)start - (uint64_t)limit;
    uint64_t step = delta > 0 ? (uint64_t)delta : 0 - (uint64_t)delta;
    uint64_t count = dist / step + (dist % step != 0);
    if (count > (uint64_t)INT64_MAX) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Requires the range size to fit in int64, got %llu", (unsigned long long)count);
      return false;
    }
    r->n = (int64_t)count;
    return true;
  }
  double start = v[0], limit = v[1], delta = v[2];
  if (delta == 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Requires delta != 0: %g", delta);
    return false;
  }
  if ((delta > 0 && start > limit) || (delta < 0 && start < limit)) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Requires start %s limit when delta %s 0: %g/%g", delta > 0 ? "<=" : ">=",
                    delta > 0 ? ">" : "<", start, limit);
    return false;
  }
  /* As TensorFlow: the size in the dtype's own precision. */
  double size = dt == TFD_FLOAT32 ? (double)ceilf(fabsf(((float)limit - (float)start) / (float)delta))
                                  : ceil(fabs((limit - start) / delta));
  if (!(size >= 0 && size <= (double)(INT64_MAX / 16))) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Requires the range size to be finite and fit in memory, got %g", size);
    return false;
  }
  r->n = (int64_t)size;
  return true;
}

/* ---- shapes given as inputs: Fill, the random ops ---- */
bool tfd_fill_shape(tfd_kernel_context *c, const tfd_kernel *k, int64_t *dims, int *nd) {
  tfd_tensor *dims_t = c->inputs[0], *value = c->inputs[1];
  if (!tfd_kernel_check_index(c, k, dims_t, "dims")) return false;
  if (tfd_tensor_ndims(dims_t) != 1 || tfd_tensor_numel(dims_t) > TFD_MAX_DIMS || tfd_tensor_ndims(value) != 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "dims must be a vector and value a scalar");
    return false;
  }
  tfd_tensor *dh = tfd_kernel_host_input(c, k, 0);
  if (!dh) return false;
  *nd = (int)tfd_tensor_numel(dh);
  for (int i = 0; i < *nd; i++) dims[i] = tfd_tensor_get_index(dh, i);
  tfd_tensor_unref(dh);
  return true;
}

bool tfd_random_shape(tfd_kernel_context *c, const tfd_kernel *k, int64_t *dims, int *nd) {
  return tfd_shape_input(c, k, 0, dims, nd);
}

bool tfd_shape_input(tfd_kernel_context *c, const tfd_kernel *k, int i, int64_t *dims, int *nd) {
  tfd_tensor *shape = c->inputs[i];
  if (tfd_tensor_ndims(shape) != 1 || tfd_tensor_numel(shape) > TFD_MAX_DIMS) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "shape must be a vector of at most %d sizes", TFD_MAX_DIMS);
    return false;
  }
  tfd_tensor *sh = tfd_kernel_host_input(c, k, i);
  if (!sh) return false;
  bool ok = true;
  *nd = (int)tfd_tensor_numel(sh);
  for (int d = 0; d < *nd && ok; d++) {
    dims[d] = tfd_tensor_get_index(sh, d);
    if (dims[d] < 0) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "size %lld is negative", (long long)dims[d]);
      ok = false;
    }
  }
  tfd_tensor_unref(sh);
  return ok;
}

bool tfd_broadcast_to_shape(tfd_kernel_context *c, const tfd_kernel *k, int64_t *dims, int *nd, int64_t *strides) {
  tfd_tensor *in = c->inputs[0];
  int nin = tfd_tensor_ndims(in);
  int64_t in_dims[TFD_MAX_DIMS];
  if (!tfd_kernel_check_index(c, k, c->inputs[1], "shape") || !tfd_shape_input(c, k, 1, dims, nd)) return false;
  for (int i = 0; i < nin; i++) in_dims[i] = tfd_tensor_dim(in, i);
  if (nin > *nd) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Rank of input (%d) must be no greater than rank of output shape (%d).",
                    nin, *nd);
    return false;
  }
  int64_t stride = 1;
  for (int i = *nd - 1; i >= 0; i--) {
    int j = i - (*nd - nin);
    int64_t d = j >= 0 ? in_dims[j] : 1;
    if (d != dims[i] && d != 1) {
      char a[TFD_SHAPE_TEXT_CAP], b[TFD_SHAPE_TEXT_CAP];
      tfd_shape_text(a, sizeof a, in_dims, nin);
      tfd_shape_text(b, sizeof b, dims, *nd);
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Unable to broadcast tensor of shape %s to tensor of shape %s", a, b);
      return false;
    }
    strides[i] = d == 1 ? 0 : stride;
    stride *= d;
  }
  return true;
}

bool tfd_depth_space_shape(tfd_kernel_context *c, const tfd_kernel *k, bool to_space, int64_t b, int64_t *d, int64_t *out) {
  tfd_tensor *in = c->inputs[0];
  if (tfd_tensor_ndims(in) != 4) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "input rank should be: 4 instead of: %d", tfd_tensor_ndims(in));
    return false;
  }
  for (int i = 0; i < 4; i++) d[i] = tfd_tensor_dim(in, i);
  if (to_space && d[3] % (b * b) != 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Input depth dimension %lld should be divisible by: %lld",
                    (long long)d[3], (long long)(b * b));
    return false;
  }
  if (!to_space && (d[1] % b != 0 || d[2] % b != 0)) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Image width %lld and height %lld should be divisible by block_size: %lld",
                    (long long)d[2], (long long)d[1], (long long)b);
    return false;
  }
  out[0] = d[0];
  out[1] = to_space ? d[1] * b : d[1] / b;
  out[2] = to_space ? d[2] * b : d[2] / b;
  out[3] = to_space ? d[3] / (b * b) : d[3] * b * b;
  return true;
}

bool tfd_reverse_dims(tfd_kernel_context *c, const tfd_kernel *k, bool bools, const tfd_tensor *axes, int nd, bool *rev) {
  for (int i = 0; i < nd; i++) rev[i] = false;
  if (bools) { /* Reverse: a bool per dimension */
    if (tfd_tensor_ndims(axes) != 1) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "'dims' must be 1-dimension, not %d", tfd_tensor_ndims(axes));
      return false;
    }
    if (tfd_tensor_dtype(axes) != TFD_BOOL) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "'dims' must be bool, got %s", tfd_dtype_name(tfd_tensor_dtype(axes)));
      return false;
    }
    if (tfd_tensor_numel(axes) != nd) {
      tfd_kernel_fail(
          c, k, TFD_INVALID_ARGUMENT,
          "'dims' must have the same number of values as 'input' has dimensions. 'input' has %d'dims' has %lld values", nd,
          (long long)tfd_tensor_numel(axes));
      return false;
    }
    const uint8_t *b = tfd_tensor_const_data(axes);
    for (int i = 0; i < nd; i++) rev[i] = b[i] != 0;
  } else {
    if (!tfd_kernel_check_index(c, k, axes, "axis")) return false;
    if (tfd_tensor_ndims(axes) != 1) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "'dims' must be 1-dimension, not %d", tfd_tensor_ndims(axes));
      return false;
    }
    for (int64_t i = 0; i < tfd_tensor_numel(axes); i++) {
      int64_t a = tfd_tensor_get_index(axes, i), ca = a < 0 ? a + nd : a;
      if (ca < 0 || ca >= nd) {
        tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "'axis'[%lld] = %lld is out of valid range [0, %d)", (long long)i,
                        (long long)a, nd);
        return false;
      }
      if (rev[ca]) {
        tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "axis %lld specified more than once.", (long long)ca);
        return false;
      }
      rev[ca] = true;
    }
  }
  return true;
}

bool tfd_band_part_bounds(tfd_kernel_context *c, const tfd_kernel *k, const tfd_tensor *in, const tfd_tensor *lo_t,
                          const tfd_tensor *hi_t, int64_t *lo_out, int64_t *hi_out) {
  char text[TFD_SHAPE_TEXT_CAP];
  int nd = tfd_tensor_ndims(in);
  if (nd < 2) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "input must be at least 2-dim, received shape: %s",
                    tfd_tensor_shape_text(text, sizeof text, in, 0));
    return false;
  }
  if (tfd_tensor_ndims(lo_t) != 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "num_lower must be scalar, got shape %s",
                    tfd_tensor_shape_text(text, sizeof text, lo_t, 0));
    return false;
  }
  if (tfd_tensor_ndims(hi_t) != 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "num_upper must be scalar, got shape %s",
                    tfd_tensor_shape_text(text, sizeof text, hi_t, 0));
    return false;
  }
  if (!tfd_kernel_check_index(c, k, lo_t, "num_lower") || !tfd_kernel_check_index(c, k, hi_t, "num_upper")) return false;
  int64_t m = tfd_tensor_dim(in, nd - 2), n = tfd_tensor_dim(in, nd - 1);
  int64_t lo = *lo_out = tfd_tensor_get_index(lo_t, 0), hi = *hi_out = tfd_tensor_get_index(hi_t, 0);
  if (lo > m) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                    "num_lower must be negative or less or equal to number of rows (%lld) got: %lld", (long long)m,
                    (long long)lo);
    return false;
  }
  if (hi > n) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                    "num_upper must be negative or less or equal to number of columns (%lld) got: %lld", (long long)n,
                    (long long)hi);
    return false;
  }
  return true;
}

bool tfd_one_hot_shape(tfd_kernel_context *c, const tfd_kernel *k, int64_t *dims, int *axis_out, int64_t *depth_out) {
  const tfd_tensor *ix = c->inputs[0], *depth_t = c->inputs[1], *on = c->inputs[2], *off = c->inputs[3];
  char text[TFD_SHAPE_TEXT_CAP];
  int nd = tfd_tensor_ndims(ix), out_nd = nd + 1;
  int64_t axis = k->index;
  if (tfd_tensor_ndims(depth_t) != 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "depth must be a scalar, but got: %s",
                    tfd_tensor_shape_text(text, sizeof text, depth_t, 0));
    return false;
  }
  if (tfd_tensor_ndims(on) != 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "on_value must be a scalar, but got: %s",
                    tfd_tensor_shape_text(text, sizeof text, on, 0));
    return false;
  }
  if (tfd_tensor_ndims(off) != 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "off_value must be a scalar, but got: %s",
                    tfd_tensor_shape_text(text, sizeof text, off, 0));
    return false;
  }
  if (!(axis == -1 || (axis >= 0 && axis < out_nd))) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Expected axis to be -1 or between [0, %d).  But received: %lld", out_nd,
                    (long long)axis);
    return false;
  }
  if (out_nd > TFD_MAX_DIMS) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "OneHot result would have more than %d dimensions", TFD_MAX_DIMS);
    return false;
  }
  int64_t depth = *(const int32_t *)tfd_tensor_const_data(depth_t);
  if (depth < 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "depth must be non-negative, got: %lld", (long long)depth);
    return false;
  }
  int ax = axis == -1 ? nd : (int)axis;
  for (int i = 0, j = 0; i < out_nd; i++) dims[i] = i == ax ? depth : tfd_tensor_dim(ix, j++);
  *axis_out = ax;
  *depth_out = depth;
  return true;
}

bool tfd_scan_axis(tfd_kernel_context *c, const tfd_kernel *k, int64_t *axis_out) {
  const tfd_tensor *in = c->inputs[0], *axis_t = c->inputs[1];
  char text[TFD_SHAPE_TEXT_CAP];
  if (tfd_tensor_ndims(axis_t) != 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "ScanOp: axis must be a scalar, not %s",
                    tfd_tensor_shape_text(text, sizeof text, axis_t, 0));
    return false;
  }
  if (!tfd_kernel_check_index(c, k, axis_t, "axis")) return false;
  tfd_tensor *ah = tfd_kernel_host_input(c, k, 1); /* an int64 axis is in device memory on a GPU */
  if (!ah) return false;
  int nd = tfd_tensor_ndims(in);
  int64_t axis = tfd_tensor_get_index(ah, 0);
  tfd_tensor_unref(ah);
  if (axis < 0) axis += nd; /* TensorFlow names the axis after adding the rank to a negative one */
  if (axis < 0 || axis >= nd) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "ScanOp: Expected scan axis in the range [%d, %d), but got %lld", -nd, nd,
                    (long long)axis);
    return false;
  }
  *axis_out = axis;
  return true;
}
