/* Kernels that reshape, cut, join and repeat tensors with TensorFlow's semantics: ExpandDims, Squeeze, Pack,
 * Unpack, Slice, StridedSlice, Tile, Range, Split, SplitV. All copy elements as bytes, so they take any dtype. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/checked.h"
#include "../core/status_internal.h"
#include "kernel.h"
#include "kernel_shared.h"

bool tfd_kernel_read_axis(tfd_kernel_ctx *c, const tfd_kernel *k, const tfd_tensor *t, int rank, const char *what,
                          int64_t *axis) {
  if (!tfd_kernel_check_index(c, k, t, what)) return false;
  if (tfd_tensor_numel(t) != 1 || tfd_tensor_ndims(t) > 1) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "%s must be a scalar, got a tensor of rank %d with %lld elements", what,
                    tfd_tensor_ndims(t), (long long)tfd_tensor_numel(t));
    return false;
  }
  int64_t a = tfd_tensor_get_index(t, 0);
  if (a < -rank || a >= rank) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "%s %lld is out of range [%d, %d)", what, (long long)a, -rank, rank);
    return false;
  }
  *axis = a < 0 ? a + rank : a;
  return true;
}

/* A view of `in` with new dims (same elements), as the kernel's output. */
static void reshaped(tfd_kernel_ctx *c, const tfd_kernel *k, tfd_tensor *in, const int64_t *dims, int nd) {
  tfd_status tmp = TFD_STATUS_INIT;
  c->outputs[0] = tfd_tensor_reshape(in, dims, nd, &tmp);
  if (!c->outputs[0]) {
    tfd_kernel_fail(c, k, tfd_status_code(&tmp), "%s", tfd_status_message(&tmp));
    tfd_status_clear(&tmp);
  }
}

/* Product of dims [from, to) of t; only called on non-empty tensors, whose sub-products cannot overflow. */
static int64_t span(const tfd_tensor *t, int from, int to) {
  int64_t n = 1;
  for (int d = from; d < to; d++) n *= tfd_tensor_dim(t, d);
  return n;
}

/* Copies out[i...] = in[begin + i * stride] per dimension (strides may be negative); out has the same rank. */
static void strided_copy(const tfd_tensor *in, tfd_tensor *out, const int64_t *begin, const int64_t *stride) {
  int nd = tfd_tensor_ndims(out);
  int64_t n = tfd_tensor_numel(out);
  if (n == 0) return;
  int64_t es = (int64_t)tfd_dtype_size(tfd_tensor_dtype(in)), istr[TFD_MAX_DIMS], s = 1;
  for (int d = nd - 1; d >= 0; d--) {
    istr[d] = s;
    s *= tfd_tensor_dim(in, d);
  }
  const char *src = tfd_tensor_const_data(in);
  char *dst = tfd_tensor_data(out);
  if (nd == 0) {
    memcpy(dst, src, (size_t)es);
    return;
  }
  /* Runs along the last dimension are contiguous when its stride is 1. */
  int64_t run = tfd_tensor_dim(out, nd - 1), last_stride = stride[nd - 1];
  int64_t idx[TFD_MAX_DIMS] = {0};
  for (int64_t o = 0; o < n; o += run) {
    int64_t off = 0;
    for (int d = 0; d < nd - 1; d++) off += (begin[d] + idx[d] * stride[d]) * istr[d];
    off += begin[nd - 1];
    if (last_stride == 1) {
      memcpy(dst + o * es, src + off * es, (size_t)(run * es));
    } else {
      for (int64_t j = 0; j < run; j++) memcpy(dst + (o + j) * es, src + (off + j * last_stride) * es, (size_t)es);
    }
    for (int d = nd - 2; d >= 0; d--) {
      if (++idx[d] < tfd_tensor_dim(out, d)) break;
      idx[d] = 0;
    }
  }
}

static void k_expand_dims(tfd_kernel *k, tfd_kernel_ctx *c) {
  tfd_tensor *in = c->inputs[0];
  int nd = tfd_tensor_ndims(in);
  int64_t axis, dims[TFD_MAX_DIMS];
  if (nd >= TFD_MAX_DIMS) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "the result would have more than %d dimensions", TFD_MAX_DIMS);
    return;
  }
  if (!tfd_kernel_read_axis(c, k, c->inputs[1], nd + 1, "axis", &axis)) return;
  for (int d = 0, s = 0; d <= nd; d++) dims[d] = d == axis ? 1 : tfd_tensor_dim(in, s++);
  reshaped(c, k, in, dims, nd + 1);
}

typedef struct axes_list {
  int n;
  int64_t axes[];
} axes_list;

static void k_squeeze(tfd_kernel *k, tfd_kernel_ctx *c) {
  tfd_tensor *in = c->inputs[0];
  const axes_list *l = k->state;
  int nd = tfd_tensor_ndims(in), ond = 0;
  bool drop[TFD_MAX_DIMS] = {0};
  int64_t dims[TFD_MAX_DIMS];
  for (int i = 0; l && i < l->n; i++) {
    int64_t a = l->axes[i];
    if (a < -nd || a >= nd) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Tried to squeeze dim index %lld for tensor with %d dimensions",
                      (long long)a, nd);
      return;
    }
    if (a < 0) a += nd;
    if (tfd_tensor_dim(in, (int)a) != 1) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Can not squeeze dim[%lld], expected a dimension of 1, got %lld",
                      (long long)a, (long long)tfd_tensor_dim(in, (int)a));
      return;
    }
    drop[a] = true;
  }
  for (int d = 0; d < nd; d++) {
    if (!l && tfd_tensor_dim(in, d) == 1) drop[d] = true;
    if (!drop[d]) dims[ond++] = tfd_tensor_dim(in, d);
  }
  reshaped(c, k, in, dims, ond);
}

static void k_pack(tfd_kernel *k, tfd_kernel_ctx *c) {
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
  tfd_tensor *out = tfd_kernel_alloc(c, k, tfd_tensor_dtype(first), dims, nd + 1);
  if (!out) return;
  c->outputs[0] = out;
  if (tfd_tensor_numel(out) == 0) return;
  int64_t outer = span(first, 0, (int)axis), block = span(first, (int)axis, nd) * (int64_t)tfd_dtype_size(tfd_tensor_dtype(first));
  char *dst = tfd_tensor_data(out);
  for (int64_t r = 0; r < outer; r++)
    for (int i = 0; i < n; i++, dst += block)
      memcpy(dst, (const char *)tfd_tensor_const_data(c->inputs[i]) + r * block, (size_t)block);
}

static void k_unpack(tfd_kernel *k, tfd_kernel_ctx *c) {
  tfd_tensor *in = c->inputs[0];
  int nd = tfd_tensor_ndims(in), n = c->num_outputs;
  int64_t axis = k->index, dims[TFD_MAX_DIMS];
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
  for (int d = 0, o = 0; d < nd; d++)
    if (d != axis) dims[o++] = tfd_tensor_dim(in, d);
  tfd_tensor *outs[TFD_MAX_OP_OUTPUTS];
  for (int i = 0; i < n; i++) {
    outs[i] = tfd_kernel_alloc(c, k, tfd_tensor_dtype(in), dims, nd - 1);
    if (!outs[i]) {
      while (i--) tfd_tensor_unref(outs[i]);
      return;
    }
  }
  if (tfd_tensor_numel(in) > 0) {
    int64_t outer = span(in, 0, (int)axis), block = span(in, (int)axis + 1, nd) * (int64_t)tfd_dtype_size(tfd_tensor_dtype(in));
    const char *src = tfd_tensor_const_data(in);
    for (int64_t r = 0; r < outer; r++)
      for (int i = 0; i < n; i++, src += block) memcpy((char *)tfd_tensor_data(outs[i]) + r * block, src, (size_t)block);
  }
  for (int i = 0; i < n; i++) c->outputs[i] = outs[i];
}

static void k_slice(tfd_kernel *k, tfd_kernel_ctx *c) {
  tfd_tensor *in = c->inputs[0], *begin_t = c->inputs[1], *size_t_ = c->inputs[2];
  int nd = tfd_tensor_ndims(in);
  if (!tfd_kernel_check_index(c, k, begin_t, "begin") || !tfd_kernel_check_index(c, k, size_t_, "size")) return;
  if (tfd_tensor_ndims(begin_t) != 1 || tfd_tensor_numel(begin_t) != nd || tfd_tensor_ndims(size_t_) != 1 ||
      tfd_tensor_numel(size_t_) != nd) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Expected begin and size arguments to be 1-D tensors of size %d", nd);
    return;
  }
  int64_t begin[TFD_MAX_DIMS], dims[TFD_MAX_DIMS], one[TFD_MAX_DIMS];
  for (int d = 0; d < nd; d++) {
    int64_t b = tfd_tensor_get_index(begin_t, d), s = tfd_tensor_get_index(size_t_, d), dim = tfd_tensor_dim(in, d);
    if (s == -1 && b >= 0 && b <= dim) s = dim - b;
    if (b < 0 || b > dim || s < 0 || s > dim - b) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                      "Expected begin[%d] in [0, %lld] and size[%d] in [0, %lld], but got %lld and %lld", d,
                      (long long)dim, d, (long long)(b >= 0 && b <= dim ? dim - b : dim), (long long)b,
                      (long long)tfd_tensor_get_index(size_t_, d));
      return;
    }
    begin[d] = b;
    dims[d] = s;
    one[d] = 1;
  }
  tfd_tensor *out = tfd_kernel_alloc(c, k, tfd_tensor_dtype(in), dims, nd);
  if (!out) return;
  strided_copy(in, out, begin, one);
  c->outputs[0] = out;
}

/* ---- StridedSlice: the plan is shared with shape inference (op_registry.c) ---- */
static void k_strided_slice(tfd_kernel *k, tfd_kernel_ctx *c) {
  tfd_tensor *in = c->inputs[0];
  if (!tfd_kernel_check_index(c, k, c->inputs[1], "begin") || !tfd_kernel_check_index(c, k, c->inputs[2], "end") ||
      !tfd_kernel_check_index(c, k, c->inputs[3], "strides"))
    return;
  tfd_shape shape;
  tfd_strided_slice_plan p;
  tfd_status tmp = TFD_STATUS_INIT;
  tfd_shape_of_tensor(in, &shape);
  if (tfd_strided_slice_plan_make(&shape, c->inputs[1], c->inputs[2], c->inputs[3], k->state, &p, &tmp) != TFD_OK) {
    tfd_kernel_fail(c, k, tfd_status_code(&tmp), "%s", tfd_status_message(&tmp));
    tfd_status_clear(&tmp);
    return;
  }
  tfd_tensor *out = tfd_kernel_alloc(c, k, tfd_tensor_dtype(in), p.dims, p.ndims);
  if (!out) return;
  strided_copy(in, out, p.begin, p.stride);
  c->outputs[0] = tfd_tensor_reshape(out, p.final.dims, p.final.ndims, &tmp);
  tfd_tensor_unref(out);
  if (!c->outputs[0]) {
    tfd_kernel_fail(c, k, tfd_status_code(&tmp), "%s", tfd_status_message(&tmp));
    tfd_status_clear(&tmp);
  }
}

static void k_tile(tfd_kernel *k, tfd_kernel_ctx *c) {
  tfd_tensor *in = c->inputs[0], *m = c->inputs[1];
  int nd = tfd_tensor_ndims(in);
  if (!tfd_kernel_check_index(c, k, m, "multiples")) return;
  if (tfd_tensor_ndims(m) != 1 || tfd_tensor_numel(m) != nd) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Expected multiples argument to be a vector of length %d but got length %lld",
                    nd, (long long)tfd_tensor_numel(m));
    return;
  }
  int64_t dims[TFD_MAX_DIMS];
  for (int d = 0; d < nd; d++) {
    int64_t r = tfd_tensor_get_index(m, d);
    if (r < 0) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Expected multiples[%d] >= 0, but got %lld", d, (long long)r);
      return;
    }
    if (!tfd_checked_mul(tfd_tensor_dim(in, d), r, &dims[d])) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "the output's size along dimension %d overflows", d);
      return;
    }
  }
  tfd_tensor *out = tfd_kernel_alloc(c, k, tfd_tensor_dtype(in), dims, nd);
  if (!out) return;
  c->outputs[0] = out;
  int64_t n = tfd_tensor_numel(out);
  if (n == 0) return;
  int64_t es = (int64_t)tfd_dtype_size(tfd_tensor_dtype(in)), istr[TFD_MAX_DIMS], s = 1, idx[TFD_MAX_DIMS] = {0};
  for (int d = nd - 1; d >= 0; d--) {
    istr[d] = s;
    s *= tfd_tensor_dim(in, d);
  }
  const char *src = tfd_tensor_const_data(in);
  char *dst = tfd_tensor_data(out);
  for (int64_t o = 0; o < n; o++) {
    int64_t off = 0;
    for (int d = 0; d < nd; d++) off += idx[d] % tfd_tensor_dim(in, d) * istr[d];
    memcpy(dst + o * es, src + off * es, (size_t)es);
    for (int d = nd - 1; d >= 0; d--) {
      if (++idx[d] < dims[d]) break;
      idx[d] = 0;
    }
  }
}

static void k_range(tfd_kernel *k, tfd_kernel_ctx *c) {
  const char *names[3] = {"start", "limit", "delta"};
  tfd_dtype dt = tfd_tensor_dtype(c->inputs[0]);
  for (int i = 0; i < 3; i++) {
    if (tfd_tensor_numel(c->inputs[i]) != 1 || tfd_tensor_ndims(c->inputs[i]) != 0 || tfd_tensor_dtype(c->inputs[i]) != dt) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "%s must be a scalar of the same dtype as start", names[i]);
      return;
    }
  }
  int64_t n;
  tfd_tensor *out;
  if (dt == TFD_INT32 || dt == TFD_INT64) {
    int64_t start = tfd_tensor_get_index(c->inputs[0], 0), limit = tfd_tensor_get_index(c->inputs[1], 0),
            delta = tfd_tensor_get_index(c->inputs[2], 0);
    if (delta == 0) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Requires delta != 0: %lld", (long long)delta);
      return;
    }
    if ((delta > 0 && start > limit) || (delta < 0 && start < limit)) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Requires start %s limit when delta %s 0: %lld/%lld", delta > 0 ? "<=" : ">=",
                      delta > 0 ? ">" : "<", (long long)start, (long long)limit);
      return;
    }
    /* |limit - start| and |delta| as unsigned: exact for any int64s. */
    uint64_t dist = delta > 0 ? (uint64_t)limit - (uint64_t)start : (uint64_t)start - (uint64_t)limit;
    uint64_t step = delta > 0 ? (uint64_t)delta : 0 - (uint64_t)delta;
    uint64_t count = dist / step + (dist % step != 0);
    if (count > (uint64_t)INT64_MAX) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Requires the range size to fit in int64, got %llu", (unsigned long long)count);
      return;
    }
    n = (int64_t)count;
    if (!(out = tfd_kernel_alloc(c, k, dt, &n, 1))) return;
    for (int64_t i = 0; i < n; i++) {
      int64_t v = (int64_t)((uint64_t)start + (uint64_t)i * (uint64_t)delta); /* in range by construction */
      if (dt == TFD_INT32) ((int32_t *)tfd_tensor_data(out))[i] = (int32_t)v;
      else ((int64_t *)tfd_tensor_data(out))[i] = v;
    }
  } else {
    double v[3];
    for (int i = 0; i < 3; i++)
      v[i] = dt == TFD_FLOAT32 ? ((const float *)tfd_tensor_const_data(c->inputs[i]))[0]
                               : ((const double *)tfd_tensor_const_data(c->inputs[i]))[0];
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
    /* As TensorFlow: the size and the values in the dtype's own precision, values by accumulation. */
    double size = dt == TFD_FLOAT32 ? (double)ceilf(fabsf(((float)limit - (float)start) / (float)delta))
                                    : ceil(fabs((limit - start) / delta));
    if (!(size >= 0 && size <= (double)(INT64_MAX / 16))) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Requires the range size to be finite and fit in memory, got %g", size);
      return;
    }
    n = (int64_t)size;
    if (!(out = tfd_kernel_alloc(c, k, dt, &n, 1))) return;
    float vf = (float)start;
    double vd = start;
    for (int64_t i = 0; i < n; i++) {
      if (dt == TFD_FLOAT32) ((float *)tfd_tensor_data(out))[i] = vf, vf += (float)delta;
      else ((double *)tfd_tensor_data(out))[i] = vd, vd += delta;
    }
  }
  c->outputs[0] = out;
}

/* Split and SplitV: num_outputs pieces of `in` along axis, sized by sizes[]. */
static void split_into(tfd_kernel *k, tfd_kernel_ctx *c, tfd_tensor *in, int64_t axis, const int64_t *sizes) {
  int nd = tfd_tensor_ndims(in), n = c->num_outputs;
  tfd_tensor *outs[TFD_MAX_OP_OUTPUTS];
  int64_t dims[TFD_MAX_DIMS];
  for (int d = 0; d < nd; d++) dims[d] = tfd_tensor_dim(in, d);
  for (int i = 0; i < n; i++) {
    dims[axis] = sizes[i];
    outs[i] = tfd_kernel_alloc(c, k, tfd_tensor_dtype(in), dims, nd);
    if (!outs[i]) {
      while (i--) tfd_tensor_unref(outs[i]);
      return;
    }
  }
  if (tfd_tensor_numel(in) > 0) {
    int64_t outer = span(in, 0, (int)axis), inner = span(in, (int)axis + 1, nd) * (int64_t)tfd_dtype_size(tfd_tensor_dtype(in));
    const char *src = tfd_tensor_const_data(in);
    for (int64_t r = 0; r < outer; r++)
      for (int i = 0; i < n; i++) {
        int64_t block = sizes[i] * inner;
        memcpy((char *)tfd_tensor_data(outs[i]) + r * block, src, (size_t)block);
        src += block;
      }
  }
  for (int i = 0; i < n; i++) c->outputs[i] = outs[i];
}

static void k_split(tfd_kernel *k, tfd_kernel_ctx *c) {
  tfd_tensor *in = c->inputs[1];
  int64_t axis, sizes[TFD_MAX_OP_OUTPUTS];
  int n = c->num_outputs;
  if (!tfd_kernel_read_axis(c, k, c->inputs[0], tfd_tensor_ndims(in), "split_dim", &axis)) return;
  int64_t dim = tfd_tensor_dim(in, (int)axis);
  if (dim % n != 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                    "Number of ways to split should evenly divide the split dimension, but got split_dim %lld (size = "
                    "%lld) and num_split %d",
                    (long long)axis, (long long)dim, n);
    return;
  }
  for (int i = 0; i < n; i++) sizes[i] = dim / n;
  split_into(k, c, in, axis, sizes);
}

static void k_split_v(tfd_kernel *k, tfd_kernel_ctx *c) {
  tfd_tensor *in = c->inputs[0], *st = c->inputs[1];
  int64_t axis, sizes[TFD_MAX_OP_OUTPUTS], total = 0;
  int n = c->num_outputs, unknown_at = -1;
  if (!tfd_kernel_read_axis(c, k, c->inputs[2], tfd_tensor_ndims(in), "split_dim", &axis)) return;
  if (!tfd_kernel_check_index(c, k, st, "size_splits")) return;
  if (tfd_tensor_ndims(st) != 1 || tfd_tensor_numel(st) != n) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "size_splits must be a vector of num_split = %d sizes, got %lld", n,
                    (long long)tfd_tensor_numel(st));
    return;
  }
  int64_t dim = tfd_tensor_dim(in, (int)axis);
  for (int i = 0; i < n; i++) {
    sizes[i] = tfd_tensor_get_index(st, i);
    if (sizes[i] == -1 && unknown_at < 0) {
      unknown_at = i;
    } else if (sizes[i] < 0 || !tfd_checked_add(total, sizes[i], &total)) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "size_splits[%d] = %lld is not allowed (only one -1, others >= 0)", i,
                      (long long)sizes[i]);
      return;
    }
  }
  if ((unknown_at < 0 && total != dim) || (unknown_at >= 0 && total > dim)) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                    "Determined shape must either match input shape along split_dim exactly if fully specified, or be "
                    "less than the size of the input along split_dim if not fully specified.  Got: %lld",
                    (long long)total);
    return;
  }
  if (unknown_at >= 0) sizes[unknown_at] = dim - total;
  split_into(k, c, in, axis, sizes);
}

static void free_state(tfd_kernel *k) { free(k->state); }

tfd_code tfd_setup_shape(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  const char *op = init->op->name;
  const tfd_node_def *n = init->node;
  if (strcmp(op, "ExpandDims") == 0) {
    k->compute = k_expand_dims;
  } else if (strcmp(op, "Squeeze") == 0) {
    const tfd_attr_value *sd = tfd_node_def_attr(n, "squeeze_dims");
    if (sd && sd->type == TFD_ATTR_LIST_INT && sd->list_len > 0) {
      if (sd->list_len > 64) return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (Squeeze): too many squeeze_dims", k->name);
      axes_list *l = malloc(sizeof *l + sd->list_len * sizeof l->axes[0]);
      if (!l) return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
      l->n = (int)sd->list_len;
      memcpy(l->axes, sd->list_i, sd->list_len * sizeof l->axes[0]);
      k->state = l;
      k->cleanup = free_state;
    }
    k->compute = k_squeeze;
  } else if (strcmp(op, "Pack") == 0 || strcmp(op, "Unpack") == 0) {
    k->index = tfd_attr_int(n, "axis", 0);
    k->compute = op[0] == 'P' ? k_pack : k_unpack;
  } else if (strcmp(op, "Slice") == 0) {
    k->compute = k_slice;
  } else if (strcmp(op, "StridedSlice") == 0) {
    tfd_strided_slice_masks *m = malloc(sizeof *m);
    if (!m) return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
    tfd_strided_slice_masks_of(n, m);
    k->state = m;
    k->cleanup = free_state;
    k->compute = k_strided_slice;
  } else if (strcmp(op, "Tile") == 0) {
    k->compute = k_tile;
  } else if (strcmp(op, "Range") == 0) {
    k->compute = k_range;
  } else if (strcmp(op, "Split") == 0) {
    k->compute = k_split;
  } else if (strcmp(op, "SplitV") == 0) {
    k->compute = k_split_v;
  } else {
    return tfd_status_setf(st, TFD_INTERNAL, "no shape kernel for %s", op);
  }
  return TFD_OK;
}
