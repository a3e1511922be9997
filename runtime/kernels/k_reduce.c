/* Reductions over axes: Sum, Mean, Max, with keep_dims. */
#include <stdlib.h>
#include <string.h>

#include "kernel.h"

enum { R_SUM, R_MEAN, R_MAX };

/* Reduces a tensor viewed as [outer, reduced, inner] after the reduced axes
 * are made contiguous: kept dims are split around one block of reduced ones
 * when the reduced axes are contiguous; otherwise we walk every element. */
#define REDUCE(T, ACC)                                                                          \
  do {                                                                                          \
    const T *x = tfd_tensor_const_data(in);                                                     \
    T *y = tfd_tensor_data(out);                                                                \
    int64_t n_out = tfd_tensor_numel(out);                                                      \
    ACC *acc = calloc((size_t)(n_out ? n_out : 1), sizeof *acc);                                \
    bool *seen = calloc((size_t)(n_out ? n_out : 1), 1);                                        \
    if (!acc || !seen) {                                                                        \
      free(acc);                                                                                \
      free(seen);                                                                               \
      tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory");                           \
      return;                                                                                   \
    }                                                                                           \
    int64_t idx[TFD_MAX_DIMS] = {0};                                                            \
    for (int64_t i = 0, n = tfd_tensor_numel(in); i < n; i++) {                                 \
      int64_t o = 0;                                                                            \
      for (int d = 0; d < nd; d++) o += reduce[d] ? 0 : idx[d] * ostride[d];                    \
      if (k->code == R_MAX) {                                                                   \
        if (!seen[o] || x[i] > acc[o]) acc[o] = x[i];                                           \
        seen[o] = true;                                                                         \
      } else {                                                                                  \
        acc[o] += x[i];                                                                         \
      }                                                                                         \
      for (int d = nd - 1; d >= 0; d--) {                                                       \
        if (++idx[d] < tfd_tensor_dim(in, d)) break;                                            \
        idx[d] = 0;                                                                             \
      }                                                                                         \
    }                                                                                           \
    for (int64_t o = 0; o < n_out; o++) y[o] = (T)(k->code == R_MEAN && count ? acc[o] / (ACC)count : acc[o]); \
    free(acc);                                                                                  \
    free(seen);                                                                                 \
  } while (0)

static void k_reduce(tfd_kernel *k, tfd_kernel_ctx *c) {
  tfd_tensor *in = c->inputs[0], *axes = c->inputs[1];
  int nd = tfd_tensor_ndims(in);
  bool reduce[TFD_MAX_DIMS] = {0};
  if (tfd_tensor_ndims(axes) > 1) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "reduction indices must be a scalar or a vector");
    return;
  }
  for (int64_t i = 0; i < tfd_tensor_numel(axes); i++) {
    int64_t ax = tfd_tensor_get_index(axes, i);
    if (ax < -nd || ax >= nd) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Invalid reduction dimension %lld for input with %d dimensions",
                      (long long)ax, nd);
      return;
    }
    reduce[ax < 0 ? ax + nd : ax] = true;
  }
  int64_t odims[TFD_MAX_DIMS], kept[TFD_MAX_DIMS], count = 1;
  int ond = 0, nkept = 0;
  for (int d = 0; d < nd; d++) {
    if (reduce[d]) {
      count *= tfd_tensor_dim(in, d);
      if (k->keep_dims) odims[ond++] = 1;
    } else {
      odims[ond++] = tfd_tensor_dim(in, d);
      kept[nkept++] = tfd_tensor_dim(in, d);
    }
  }
  if (k->code == R_MAX && count == 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Max of an empty set of elements");
    return;
  }
  tfd_tensor *out = tfd_kernel_alloc(c, k, tfd_tensor_dtype(in), odims, ond);
  if (!out) return;
  /* Strides into the output for each input dim (kept dims only). */
  int64_t ostride[TFD_MAX_DIMS], s = 1;
  for (int d = nd - 1, kd = nkept - 1; d >= 0; d--) {
    if (reduce[d]) {
      ostride[d] = 0;
    } else {
      ostride[d] = s;
      s *= kept[kd--];
    }
  }
  switch (tfd_tensor_dtype(in)) {
    case TFD_FLOAT32: REDUCE(float, double); break;
    case TFD_FLOAT64: REDUCE(double, double); break;
    case TFD_INT32: REDUCE(int32_t, int64_t); break;
    case TFD_INT64: REDUCE(int64_t, int64_t); break;
    default:
      tfd_tensor_unref(out);
      tfd_kernel_fail(c, k, TFD_UNIMPLEMENTED, "no kernel for dtype %s", tfd_dtype_name(tfd_tensor_dtype(in)));
      return;
  }
  c->outputs[0] = out;
}

tfd_code tfd_setup_reduce(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  (void)st;
  const char *op = init->op->name;
  k->code = strcmp(op, "Sum") == 0 ? R_SUM : strcmp(op, "Mean") == 0 ? R_MEAN : R_MAX;
  k->keep_dims = tfd_attr_bool(init->node, "keep_dims", false);
  k->compute = k_reduce;
  return TFD_OK;
}
