/* Kernels that pick elements by index or by value: GatherV2 (with batch_dims), GatherNd, ArgMax, ArgMin, TopKV2. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/checked.h"
#include "../core/status_internal.h"
#include "kernel.h"
#include "kernel_shared.h"

const char *tfd_index_coords(const tfd_tensor *t, int64_t i, int upto, char *buf, size_t cap) {
  int64_t c[TFD_MAX_DIMS];
  for (int d = upto - 1; d >= 0; d--) {
    int64_t dim = tfd_tensor_dim(t, d);
    c[d] = dim ? i % dim : 0;
    i = dim ? i / dim : 0;
  }
  size_t n = 0;
  buf[0] = 0;
  for (int d = 0; d < upto && n < cap; d++) n += (size_t)snprintf(buf + n, cap - n, "%s%lld", d ? "," : "", (long long)c[d]);
  return buf;
}

static int64_t span(const tfd_tensor *t, int from, int to) {
  int64_t n = 1;
  for (int d = from; d < to; d++) n *= tfd_tensor_dim(t, d);
  return n;
}

/* GatherV2: params.shape[:axis] + indices.shape[batch_dims:] + params.shape[axis + 1:]. The first
 * batch_dims dimensions of params and indices go together (TensorFlow's batched gather): batch b
 * picks along params' axis with indices[b, ...] only. */
static void k_gather(tfd_kernel *k, tfd_kernel_ctx *c) {
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
  int64_t axis = tfd_tensor_get_index(axis_t, 0), b = k->index;
  if (axis < -pr || axis >= pr) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Expected axis in the range [%d, %d), but got %lld", -pr, pr, (long long)axis);
    return;
  }
  if (axis < 0) axis += pr;
  if (b != 0) { /* TensorFlow's GatherOp checks, in its order and words */
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
  for (int64_t i = 0; i < nidx; i++) {
    int64_t v = tfd_tensor_get_index(ix, i);
    if (v < 0 || v >= limit) {
      char buf[128];
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "indices[%s] = %lld is not in [0, %lld)", tfd_index_coords(ix, i, ir, buf, sizeof buf),
                      (long long)v, (long long)limit);
      return;
    }
  }
  int nd = 0;
  for (int d = 0; d < axis; d++) dims[nd++] = tfd_tensor_dim(p, d);
  for (int d = (int)b; d < ir; d++) dims[nd++] = tfd_tensor_dim(ix, d);
  for (int d = (int)axis + 1; d < pr; d++) dims[nd++] = tfd_tensor_dim(p, d);
  tfd_tensor *out = tfd_kernel_alloc(c, k, tfd_tensor_dtype(p), dims, nd);
  if (!out) return;
  c->outputs[0] = out;
  if (tfd_tensor_numel(out) == 0) return; /* also covers an empty params: no index then is valid unless none */
  int64_t batches = span(p, 0, (int)b), outer = span(p, (int)b, (int)axis), per = span(ix, (int)b, ir);
  int64_t inner = span(p, (int)axis + 1, pr) * (int64_t)tfd_dtype_size(tfd_tensor_dtype(p));
  const char *src = tfd_tensor_const_data(p);
  char *dst = tfd_tensor_data(out);
  for (int64_t bb = 0; bb < batches; bb++)
    for (int64_t r = 0; r < outer; r++)
      for (int64_t i = 0; i < per; i++, dst += inner)
        memcpy(dst, src + ((bb * outer + r) * limit + tfd_tensor_get_index(ix, bb * per + i)) * inner, (size_t)inner);
}

static void k_gather_nd(tfd_kernel *k, tfd_kernel_ctx *c) {
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
  int64_t dims[TFD_MAX_DIMS];
  int nd = 0;
  for (int d = 0; d < ir - 1; d++) dims[nd++] = tfd_tensor_dim(ix, d);
  for (int d = (int)depth; d < pr; d++) dims[nd++] = tfd_tensor_dim(p, d);
  int64_t nidx = depth ? tfd_tensor_numel(ix) / depth : 0; /* depth 0: worked out from the output below */
  /* Check every index before allocating. */
  for (int64_t i = 0; depth && i < nidx; i++) {
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
  tfd_tensor *out = tfd_kernel_alloc(c, k, tfd_tensor_dtype(p), dims, nd);
  if (!out) return;
  c->outputs[0] = out;
  if (tfd_tensor_numel(out) == 0) return;
  int64_t slice_n = span(p, (int)depth, pr), slice = slice_n * (int64_t)tfd_dtype_size(tfd_tensor_dtype(p));
  if (!depth) nidx = tfd_tensor_numel(out) / slice_n;
  const char *src = tfd_tensor_const_data(p);
  char *dst = tfd_tensor_data(out);
  for (int64_t i = 0; i < nidx; i++, dst += slice) {
    int64_t off = 0;
    for (int64_t j = 0; j < depth; j++) off = off * tfd_tensor_dim(p, (int)j) + tfd_tensor_get_index(ix, i * depth + j);
    memcpy(dst, src + off * slice, (size_t)slice);
  }
}

/* ArgMax / ArgMin: first index of the extreme along axis (strict comparison keeps the first on ties; NaN never wins
 * over an earlier number). */
#define ARG_EXTREME(T)                                                                     \
  do {                                                                                     \
    const T *x = tfd_tensor_const_data(in);                                                \
    for (int64_t o = 0; o < outer; o++)                                                    \
      for (int64_t q = 0; q < inner; q++) {                                                \
        const T *row = x + o * count * inner + q;                                          \
        int64_t best = 0;                                                                  \
        for (int64_t i = 1; i < count; i++)                                                \
          if (k->code ? row[i * inner] < row[best * inner] : row[i * inner] > row[best * inner]) best = i; \
        if (k->dst == TFD_INT32) ((int32_t *)tfd_tensor_data(out))[o * inner + q] = (int32_t)best; \
        else ((int64_t *)tfd_tensor_data(out))[o * inner + q] = best;                      \
      }                                                                                    \
  } while (0)

static void k_arg(tfd_kernel *k, tfd_kernel_ctx *c) {
  tfd_tensor *in = c->inputs[0], *axis_t = c->inputs[1];
  int nd = tfd_tensor_ndims(in);
  if (!tfd_kernel_check_index(c, k, axis_t, "dimension")) return;
  if (tfd_tensor_numel(axis_t) != 1 || tfd_tensor_ndims(axis_t) > 1) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "dimension must be a scalar");
    return;
  }
  int64_t axis = tfd_tensor_get_index(axis_t, 0), dims[TFD_MAX_DIMS];
  if (axis < -nd || axis >= nd) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Expected dimension in the range [%d, %d), but got %lld", -nd, nd, (long long)axis);
    return;
  }
  if (axis < 0) axis += nd;
  int64_t count = tfd_tensor_dim(in, (int)axis);
  int ond = 0;
  for (int d = 0; d < nd; d++)
    if (d != axis) dims[ond++] = tfd_tensor_dim(in, d);
  tfd_tensor *out = tfd_kernel_alloc(c, k, k->dst, dims, ond);
  if (!out) return;
  if (tfd_tensor_numel(out) == 0) {
    c->outputs[0] = out;
    return;
  }
  if (count == 0) {
    tfd_tensor_unref(out);
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Reduction axis %lld is empty in shape of rank %d", (long long)axis, nd);
    return;
  }
  if (k->dst == TFD_INT32 && count > INT32_MAX) {
    tfd_tensor_unref(out);
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "dimension %lld has %lld elements: too many for int32 indices",
                    (long long)axis, (long long)count);
    return;
  }
  int64_t outer = span(in, 0, (int)axis), inner = span(in, (int)axis + 1, nd);
  switch (tfd_tensor_dtype(in)) {
    case TFD_FLOAT32: ARG_EXTREME(float); break;
    case TFD_FLOAT64: ARG_EXTREME(double); break;
    case TFD_INT32: ARG_EXTREME(int32_t); break;
    case TFD_INT64: ARG_EXTREME(int64_t); break;
    default:
      tfd_tensor_unref(out);
      tfd_kernel_fail(c, k, TFD_UNIMPLEMENTED, "no kernel for dtype %s", tfd_dtype_name(tfd_tensor_dtype(in)));
      return;
  }
  c->outputs[0] = out;
}

/* TopKV2: entries sort by value, larger first, then by index, smaller first (TensorFlow's order on ties). Floats
 * compare by f, integers by i (the other field is 0), so one comparator serves every dtype; NaN counts as largest. */
typedef struct topk_item {
  double f;
  int64_t i, idx;
} topk_item;

static int topk_cmp(const void *pa, const void *pb) {
  const topk_item *a = pa, *b = pb;
  bool an = a->f != a->f, bn = b->f != b->f;
  if (an != bn) return an ? -1 : 1;
  if (!an && a->f != b->f) return a->f > b->f ? -1 : 1;
  if (a->i != b->i) return a->i > b->i ? -1 : 1;
  return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static void k_top_k(tfd_kernel *k, tfd_kernel_ctx *c) {
  tfd_tensor *in = c->inputs[0], *kt = c->inputs[1];
  int nd = tfd_tensor_ndims(in);
  if (!tfd_kernel_check_index(c, k, kt, "k") || !tfd_kernel_check_scalar(c, k, kt, "k")) return;
  if (nd < 1) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "input must be >= 1-D, got shape of rank 0");
    return;
  }
  int64_t kk = tfd_tensor_get_index(kt, 0), n = tfd_tensor_dim(in, nd - 1), dims[TFD_MAX_DIMS];
  if (kk < 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Need k >= 0, got %lld", (long long)kk);
    return;
  }
  if (n < kk) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "input must have at least k columns. Had %lld, needed %lld", (long long)n,
                    (long long)kk);
    return;
  }
  if (k->dst == TFD_INT32 && n > INT32_MAX) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "the last dimension has %lld elements: too many for int32 indices", (long long)n);
    return;
  }
  for (int d = 0; d < nd; d++) dims[d] = tfd_tensor_dim(in, d);
  dims[nd - 1] = kk;
  tfd_dtype dt = tfd_tensor_dtype(in);
  tfd_tensor *vals = tfd_kernel_alloc(c, k, dt, dims, nd);
  if (!vals) return;
  tfd_tensor *idxs = tfd_kernel_alloc(c, k, k->dst, dims, nd);
  if (!idxs) {
    tfd_tensor_unref(vals);
    return;
  }
  int64_t rows = tfd_tensor_numel(vals) == 0 ? 0 : tfd_tensor_numel(in) / n;
  topk_item *items = rows ? malloc((size_t)n * sizeof *items) : NULL;
  if (rows && !items) {
    tfd_tensor_unref(vals);
    tfd_tensor_unref(idxs);
    tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory sorting %lld entries", (long long)n);
    return;
  }
  const void *x = tfd_tensor_const_data(in);
  size_t es = tfd_dtype_size(dt);
  for (int64_t r = 0; r < rows; r++) {
    for (int64_t j = 0; j < n; j++) {
      int64_t at = r * n + j;
      topk_item *it = &items[j];
      it->idx = j;
      it->f = dt == TFD_FLOAT32 ? ((const float *)x)[at] : dt == TFD_FLOAT64 ? ((const double *)x)[at] : 0;
      it->i = dt == TFD_INT32 ? ((const int32_t *)x)[at] : dt == TFD_INT64 ? ((const int64_t *)x)[at] : 0;
    }
    qsort(items, (size_t)n, sizeof *items, topk_cmp);
    for (int64_t j = 0; j < kk; j++) {
      memcpy((char *)tfd_tensor_data(vals) + (r * kk + j) * (int64_t)es, (const char *)x + (r * n + items[j].idx) * (int64_t)es, es);
      if (k->dst == TFD_INT32) ((int32_t *)tfd_tensor_data(idxs))[r * kk + j] = (int32_t)items[j].idx;
      else ((int64_t *)tfd_tensor_data(idxs))[r * kk + j] = items[j].idx;
    }
  }
  free(items);
  c->outputs[0] = vals;
  c->outputs[1] = idxs;
}

tfd_code tfd_setup_gather(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  const char *op = init->op->name;
  const tfd_node_def *n = init->node;
  if (strcmp(op, "GatherV2") == 0) {
    k->index = tfd_attr_int(n, "batch_dims", 0);
    k->compute = k_gather;
  } else if (strcmp(op, "GatherNd") == 0) {
    k->compute = k_gather_nd;
  } else if (strcmp(op, "ArgMax") == 0 || strcmp(op, "ArgMin") == 0) {
    k->code = strcmp(op, "ArgMin") == 0;
    k->dst = tfd_attr_dtype(n, "output_type", TFD_INT64);
    k->compute = k_arg;
  } else if (strcmp(op, "TopKV2") == 0) {
    k->dst = tfd_attr_dtype(n, "index_type", TFD_INT32);
    k->compute = k_top_k;
  } else {
    return tfd_status_setf(st, TFD_INTERNAL, "no gather kernel for %s", op);
  }
  return TFD_OK;
}
