/* Counting and normalisation ops, as TensorFlow's CPU kernels compute them and with their error texts:
 * Bincount and DenseBincount (bins of int values, weighted or counted, DenseBincount per row of a
 * matrix and optionally binary), LRN (local response normalisation across the depth of NHWC input)
 * and EuclideanNorm (the square root of the sum of squares over axes, a reduction like Sum). */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/half.h"
#include "../kernel.h"
#include "../kernel_shared.h"
#include "reduce_logic.h"
#include "../array/scatter_logic.h"

/* Element i of a numeric buffer as double, and stored back (the bins' sums are made in double,
 * which holds every int32 sum exactly and int64 ones below 2^53). */
static double load(const void *p, tfd_dtype dt, int64_t i) {
  switch (dt) {
    case TFD_FLOAT32:
      return ((const float *)p)[i];
    case TFD_FLOAT64:
      return ((const double *)p)[i];
    case TFD_INT32:
      return ((const int32_t *)p)[i];
    case TFD_INT64:
      return (double)((const int64_t *)p)[i];
    case TFD_UINT8:
      return ((const uint8_t *)p)[i];
    case TFD_FLOAT16:
      return tfd_half_to_float(((const uint16_t *)p)[i]);
    default:
      return 0;
  }
}

static void store(void *p, tfd_dtype dt, int64_t i, double v) {
  switch (dt) {
    case TFD_FLOAT32:
      ((float *)p)[i] = (float)v;
      break;
    case TFD_FLOAT64:
      ((double *)p)[i] = v;
      break;
    case TFD_INT32:
      ((int32_t *)p)[i] = (int32_t)v;
      break;
    case TFD_INT64:
      ((int64_t *)p)[i] = (int64_t)v;
      break;
    case TFD_UINT8:
      ((uint8_t *)p)[i] = (uint8_t)v;
      break;
    case TFD_FLOAT16:
      ((uint16_t *)p)[i] = tfd_float_to_half((float)v);
      break;
    default:
      break;
  }
}

/* ---- Bincount (arr int32, size int32 scalar, weights), DenseBincount (input [N] or [B, N], size,
 * weights; binary_output in k->keep_dims) ---- */
/* scatter_logic.h */
bool tfd_bincount_plan(tfd_kernel_context *c, const tfd_kernel *k, const tfd_tensor *arr, const tfd_tensor *size_t_,
                       const tfd_tensor *w, tfd_scatter_plan *p) {
  memset(p, 0, sizeof *p);
  bool dense = k->code == 1;
  char a[TFD_MAX_DIMS * 21 + 3], b[TFD_MAX_DIMS * 21 + 3];
  int nd = tfd_tensor_ndims(arr);
  if (dense && nd > 2) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Shape must be at most rank 2 but is rank %d", nd);
    return false;
  }
  if (tfd_tensor_ndims(size_t_) != 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Shape must be rank 0 but is rank %d", tfd_tensor_ndims(size_t_));
    return false;
  }
  if (!tfd_kernel_check_index(c, k, arr, dense ? "input" : "arr") || !tfd_kernel_check_index(c, k, size_t_, "size"))
    return false;
  if (tfd_tensor_dtype(size_t_) != tfd_tensor_dtype(arr)) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "size is %s but %s is %s", tfd_dtype_name(tfd_tensor_dtype(size_t_)),
                    dense ? "input" : "arr", tfd_dtype_name(tfd_tensor_dtype(arr)));
    return false;
  }
  int64_t size = tfd_tensor_get_index(size_t_, 0);
  if (size < 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "size (%lld) must be non-negative", (long long)size);
    return false;
  }
  bool weighted = tfd_tensor_numel(w) > 0;
  bool same = tfd_tensor_ndims(w) == nd;
  for (int d = 0; same && d < nd; d++) same = tfd_tensor_dim(w, d) == tfd_tensor_dim(arr, d);
  if (weighted && !same) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "If weights are passed, they must have the same shape (%s) as arr (%s)",
                    tfd_tensor_shape_text(a, sizeof a, w, 0), tfd_tensor_shape_text(b, sizeof b, arr, 0));
    return false;
  }
  int64_t n = tfd_tensor_numel(arr);
  for (int64_t i = 0; i < n; i++)
    if (tfd_tensor_get_index(arr, i) < 0) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Input arr must be non-negative!");
      return false;
    }
  bool rows2 = dense && nd == 2;
  int64_t rows = rows2 ? tfd_tensor_dim(arr, 0) : 1, cols = rows2 ? tfd_tensor_dim(arr, 1) : n;
  p->nd = rows2 ? 2 : 1;
  p->dims[0] = rows2 ? rows : size;
  p->dims[1] = size;
  p->slice = 1;
  if (n > 0 && (!(p->slots = malloc((size_t)n * sizeof *p->slots)) || !(p->from = malloc((size_t)n * sizeof *p->from)))) {
    tfd_scatter_plan_free(p);
    tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory");
    return false;
  }
  for (int64_t r = 0; r < rows; r++)
    for (int64_t j = 0; j < cols; j++) {
      int64_t i = r * cols + j, v = tfd_tensor_get_index(arr, i);
      if (v >= size) continue; /* values past the last bin are dropped */
      p->slots[p->n] = r * size + v;
      p->from[p->n++] = i;
    }
  return true;
}

static void k_bincount(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *w = c->inputs[2];
  tfd_tensor *ah = tfd_kernel_host_input(c, k, 0), *sh = ah ? tfd_kernel_host_input(c, k, 1) : NULL;
  tfd_scatter_plan p;
  bool ok = sh && tfd_bincount_plan(c, k, ah, sh, w, &p);
  tfd_tensor_unref(ah);
  tfd_tensor_unref(sh);
  if (!ok) return;
  bool binary = k->code == 1 && k->keep_dims, weighted = tfd_tensor_numel(w) > 0;
  tfd_dtype dt = tfd_tensor_dtype(w);
  tfd_tensor *out = tfd_kernel_alloc(c, k, dt, p.dims, p.nd);
  int64_t bins = out ? tfd_tensor_numel(out) : 0;
  double *acc = out ? calloc((size_t)(bins > 0 ? bins : 1), sizeof *acc) : NULL;
  if (!acc) {
    if (out) {
      tfd_tensor_unref(out);
      tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory");
    }
    tfd_scatter_plan_free(&p);
    return;
  }
  const void *wv = tfd_tensor_const_data(w);
  for (int64_t u = 0; u < p.n; u++) {
    if (binary) acc[p.slots[u]] = 1;
    else acc[p.slots[u]] += weighted ? load(wv, dt, p.from[u]) : 1;
  }
  for (int64_t i = 0; i < bins; i++) store(tfd_tensor_data(out), dt, i, acc[i]);
  free(acc);
  tfd_scatter_plan_free(&p);
  c->outputs[0] = out;
}

/* ---- LRN (input [N, H, W, D]; depth_radius in k->index, bias, alpha, beta in k->state) ---- */
/* reduce_logic.h */
bool tfd_lrn_check(tfd_kernel_context *c, const tfd_kernel *k) {
  if (tfd_tensor_ndims(c->inputs[0]) == 4) return true;
  tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "in must be 4-dimensional");
  return false;
}

static void k_lrn(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *x = c->inputs[0];
  const tfd_lrn_params *p = k->state;
  if (!tfd_lrn_check(c, k)) return;
  tfd_dtype dt = tfd_tensor_dtype(x);
  tfd_tensor *y = tfd_kernel_alloc_like(c, k, dt, x);
  if (!y) return;
  int64_t depth = tfd_tensor_dim(x, 3), n = tfd_tensor_numel(x), r = k->index;
  const void *in = tfd_tensor_const_data(x);
  void *out = tfd_tensor_data(y);
  /* output = input / (bias + alpha * sqr_sum) ^ beta, sqr_sum over [d - r, d + r] of the same pixel;
   * a running window sum keeps it one pass per pixel. */
  for (int64_t at = 0; at < n; at += depth) {
    double sum = 0;
    for (int64_t d = 0; d < depth && d <= r; d++) sum += load(in, dt, at + d) * load(in, dt, at + d);
    for (int64_t d = 0; d < depth; d++) {
      double v = load(in, dt, at + d);
      store(out, dt, at + d, v / pow(p->bias + p->alpha * sum, p->beta));
      if (d + r + 1 < depth) sum += load(in, dt, at + d + r + 1) * load(in, dt, at + d + r + 1);
      if (d - r >= 0) sum -= load(in, dt, at + d - r) * load(in, dt, at + d - r);
    }
  }
  c->outputs[0] = y;
}

/* ---- EuclideanNorm (input, reduction_indices; keep_dims) ---- */
static void k_euclidean_norm(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *in = c->inputs[0];
  int nd = tfd_tensor_ndims(in), ond;
  bool reduce[TFD_MAX_DIMS];
  int64_t odims[TFD_MAX_DIMS], count;
  if (!tfd_reduce_shape(c, k, false, reduce, odims, &ond, &count)) return;
  tfd_dtype dt = tfd_tensor_dtype(in);
  tfd_tensor *out = tfd_kernel_alloc(c, k, dt, odims, ond);
  if (!out) return;
  int64_t on = tfd_tensor_numel(out);
  if (on == 0) {
    c->outputs[0] = out;
    return;
  }
  double *acc = calloc((size_t)on, sizeof *acc);
  if (!acc) {
    tfd_tensor_unref(out);
    tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory");
    return;
  }
  int64_t ostride[TFD_MAX_DIMS], s = 1, idx[TFD_MAX_DIMS] = {0}, o = 0;
  for (int d = nd - 1; d >= 0; d--) {
    ostride[d] = reduce[d] ? 0 : s;
    if (!reduce[d]) s *= tfd_tensor_dim(in, d);
  }
  const void *src = tfd_tensor_const_data(in);
  int64_t n = tfd_tensor_numel(in);
  for (int64_t i = 0; i < n; i++) {
    double v = load(src, dt, i);
    acc[o] += v * v;
    for (int d = nd - 1; d >= 0; d--) { /* the next element's output position, odometer-wise */
      o += ostride[d];
      if (++idx[d] < tfd_tensor_dim(in, d)) break;
      o -= ostride[d] * idx[d];
      idx[d] = 0;
    }
  }
  /* Integer outputs truncate the root, as TensorFlow's sqrt of an integer sum does. */
  bool integral = dt == TFD_INT32 || dt == TFD_INT64 || dt == TFD_UINT8;
  for (int64_t i = 0; i < on; i++) store(tfd_tensor_data(out), dt, i, integral ? floor(sqrt(acc[i])) : sqrt(acc[i]));
  free(acc);
  c->outputs[0] = out;
}

static void cleanup_state(tfd_kernel *k) {
  free(k->state);
  k->state = NULL;
}

tfd_code tfd_setup_count_norm(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  const char *op = init->op->name;
  if (strcmp(op, "Bincount") == 0 || strcmp(op, "DenseBincount") == 0) {
    k->code = op[0] == 'D';
    k->keep_dims = tfd_attr_bool(init->node, "binary_output", false);
    k->compute = k_bincount;
  } else if (strcmp(op, "EuclideanNorm") == 0) {
    k->keep_dims = tfd_attr_bool(init->node, "keep_dims", false);
    k->compute = k_euclidean_norm;
  } else {
    int64_t r = tfd_attr_int(init->node, "depth_radius", 5);
    if (r < 0 || r > INT32_MAX)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (LRN): depth_radius = %lld larger than int max",
                             tfd_node_def_name(init->node), (long long)r);
    tfd_lrn_params *p = malloc(sizeof *p);
    if (!p)
      return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "node '%s' (LRN): out of memory", tfd_node_def_name(init->node));
    p->bias = tfd_attr_float(init->node, "bias", 1.0);
    p->alpha = tfd_attr_float(init->node, "alpha", 1.0);
    p->beta = tfd_attr_float(init->node, "beta", 0.5);
    k->index = r;
    k->state = p;
    k->cleanup = cleanup_state;
    k->compute = k_lrn;
  }
  return TFD_OK;
}
