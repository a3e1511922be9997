/* Kernels that pick elements by index or by value: GatherV2 (with batch_dims), GatherNd, ArgMax, ArgMin, TopKV2. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/tensor_internal.h"
#include "../../core/status_internal.h"
#include "gather_logic.h"
#include "../kernel.h"
#include "../kernel_shared.h"
#include "../math/reduce_logic.h"
#include "topk_order.h"

/* Copies n rows of `bytes` each, row i from base + idx[i] * bytes, idx int32 or int64 (checked already).
 * Rows of a common small size are copied by fixed-size memcpys the compiler turns into a few vector
 * moves: a gather of 256-byte rows otherwise spends as long in memcpy's size dispatch as in moving. */
#define GATHER_ROWS(IDX_T, SIZE)                                                                   \
  for (int64_t i = 0; i < n; i++, dst += (SIZE)) {                                                 \
    if ((SIZE) <= 1024 && i + 16 < n)                                                              \
      for (size_t at = 0; at < (size_t)(SIZE); at += 64)                                           \
        __builtin_prefetch(base + ((const IDX_T *)idx)[i + 16] * (SIZE) + at);                     \
    memcpy(dst, base + ((const IDX_T *)idx)[i] * (SIZE), (SIZE));                                  \
  }
#define GATHER_SIZES(IDX_T)                       \
  switch (bytes) {                                \
    case 4: GATHER_ROWS(IDX_T, 4); break;         \
    case 8: GATHER_ROWS(IDX_T, 8); break;         \
    case 16: GATHER_ROWS(IDX_T, 16); break;       \
    case 32: GATHER_ROWS(IDX_T, 32); break;       \
    case 64: GATHER_ROWS(IDX_T, 64); break;       \
    case 128: GATHER_ROWS(IDX_T, 128); break;     \
    case 256: GATHER_ROWS(IDX_T, 256); break;     \
    case 512: GATHER_ROWS(IDX_T, 512); break;     \
    default: GATHER_ROWS(IDX_T, (size_t)bytes);   \
  }
static char *gather_rows(char *dst, const char *base, const void *idx, bool i64, int64_t n, int64_t bytes) {
  if (i64) GATHER_SIZES(int64_t) else GATHER_SIZES(int32_t)
  return dst;
}

/* GatherV2: params.shape[:axis] + indices.shape[batch_dims:] + params.shape[axis + 1:]. The first
 * batch_dims dimensions of params and indices go together (TensorFlow's batched gather): batch b
 * picks along params' axis with indices[b, ...] only. */
static void k_gather(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *p = c->inputs[0], *ix = c->inputs[1];
  int pr = tfd_tensor_ndims(p), ir = tfd_tensor_ndims(ix);
  tfd_gather_shape g;
  if (!tfd_gather_check(c, k, &g)) return;
  int64_t axis = g.axis, b = g.batch_dims, limit = g.limit;
  tfd_tensor *out = tfd_kernel_alloc(c, k, tfd_tensor_dtype(p), g.dims, g.nd);
  if (!out) return;
  c->outputs[0] = out;
  if (tfd_tensor_numel(out) == 0) return; /* also covers an empty params: no index then is valid unless none */
  int64_t batches = tfd_dims_product(p, 0, (int)b), outer = tfd_dims_product(p, (int)b, (int)axis),
          per = tfd_dims_product(ix, (int)b, ir);
  int64_t inner = tfd_dims_product(p, (int)axis + 1, pr) * (int64_t)tfd_dtype_size(tfd_tensor_dtype(p));
  const char *src = tfd_tensor_const_data(p);
  char *dst = tfd_tensor_data(out);
  bool i64 = tfd_tensor_dtype(ix) == TFD_INT64;
  const char *idx = tfd_tensor_const_data(ix);
  size_t isz = i64 ? 8 : 4;
  for (int64_t bb = 0; bb < batches; bb++)
    for (int64_t r = 0; r < outer; r++)
      dst = gather_rows(dst, src + (bb * outer + r) * limit * inner, idx + (size_t)(bb * per) * isz, i64, per, inner);
}

static void k_gather_nd(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *p = c->inputs[0], *ix = c->inputs[1];
  int pr = tfd_tensor_ndims(p), nd;
  int64_t depth, dims[TFD_MAX_DIMS];
  if (!tfd_gather_nd_check(c, k, &depth, dims, &nd)) return;
  int64_t nidx = depth ? tfd_tensor_numel(ix) / depth : 0; /* depth 0: worked out from the output below */
  tfd_tensor *out = tfd_kernel_alloc(c, k, tfd_tensor_dtype(p), dims, nd);
  if (!out) return;
  c->outputs[0] = out;
  if (tfd_tensor_numel(out) == 0) return;
  int64_t slice_n = tfd_dims_product(p, (int)depth, pr), slice = slice_n * (int64_t)tfd_dtype_size(tfd_tensor_dtype(p));
  if (!depth) nidx = tfd_tensor_numel(out) / slice_n;
  const char *src = tfd_tensor_const_data(p);
  char *dst = tfd_tensor_data(out);
  if (depth == 1) { /* indices [..., 1]: a gather along axis 0 */
    gather_rows(dst, src, tfd_tensor_const_data(ix), tfd_tensor_dtype(ix) == TFD_INT64, nidx, slice);
    return;
  }
  int64_t pdims[TFD_MAX_DIMS];
  for (int64_t j = 0; j < depth; j++) pdims[j] = tfd_tensor_dim(p, (int)j);
  for (int64_t i = 0; i < nidx; i++, dst += slice) {
    int64_t off = 0;
    for (int64_t j = 0; j < depth; j++) off = off * pdims[j] + tfd_tensor_get_index(ix, i * depth + j);
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

static void k_arg(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *in = c->inputs[0];
  int nd = tfd_tensor_ndims(in);
  int64_t axis, dims[TFD_MAX_DIMS];
  if (!tfd_arg_shape(c, k, &axis, dims)) return;
  int64_t count = tfd_tensor_dim(in, (int)axis);
  tfd_tensor *out = tfd_kernel_alloc(c, k, k->dst, dims, nd - 1);
  if (!out) return;
  if (tfd_tensor_numel(out) == 0) {
    c->outputs[0] = out;
    return;
  }
  if (!tfd_arg_check_count(c, k, axis)) {
    tfd_tensor_unref(out);
    return;
  }
  int64_t outer = tfd_dims_product(in, 0, (int)axis), inner = tfd_dims_product(in, (int)axis + 1, nd);
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

/* TopKV2: each row sorted in topk_order.h's order, the first k kept. */
static void k_top_k(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *in = c->inputs[0];
  int nd = tfd_tensor_ndims(in);
  int64_t kk, dims[TFD_MAX_DIMS];
  if (!tfd_top_k_shape(c, k, &kk, dims)) return;
  int64_t n = tfd_tensor_dim(in, nd - 1);
  tfd_dtype dt = tfd_tensor_dtype(in);
  tfd_tensor *vals = tfd_kernel_alloc(c, k, dt, dims, nd);
  if (!vals) return;
  tfd_tensor *idxs = tfd_kernel_alloc(c, k, k->dst, dims, nd);
  if (!idxs) {
    tfd_tensor_unref(vals);
    return;
  }
  int64_t rows = tfd_tensor_numel(vals) == 0 ? 0 : tfd_tensor_numel(in) / n;
  tfd_topk_item *items = rows ? malloc((size_t)n * sizeof *items) : NULL;
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
      tfd_topk_item *it = &items[j];
      it->idx = j;
      it->f = dt == TFD_FLOAT32 ? ((const float *)x)[at] : dt == TFD_FLOAT64 ? ((const double *)x)[at] : 0;
      it->i = dt == TFD_INT32 ? ((const int32_t *)x)[at] : dt == TFD_INT64 ? ((const int64_t *)x)[at] : 0;
    }
    qsort(items, (size_t)n, sizeof *items, tfd_topk_cmp);
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

/* Gather, TensorFlow 1's form (params, indices): GatherV2 along axis 0 (k->value, a scalar 0). */
static void k_gather_v1(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *in[3] = {c->inputs[0], c->inputs[1], k->value};
  tfd_kernel_context v2 = *c;
  v2.inputs = in;
  v2.num_inputs = 3;
  k_gather(k, &v2);
}

tfd_code tfd_setup_gather(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  const char *op = init->op->name;
  const tfd_node_def *n = init->node;
  if (strcmp(op, "GatherV2") == 0) {
    k->index = tfd_attr_int(n, "batch_dims", 0);
    k->compute = k_gather;
  } else if (strcmp(op, "Gather") == 0) {
    int32_t zero = 0;
    if (!(k->value = tfd_tensor_make_from_bytes(NULL, TFD_INT32, NULL, 0, &zero, sizeof zero, st))) return tfd_status_code(st);
    k->index = 0;
    k->compute = k_gather_v1;
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
