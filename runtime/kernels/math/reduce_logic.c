/* reduce_logic.h: the reductions' checks and output shapes, for their CPU and device kernels. */
#include <math.h>
#include <stdint.h>

#include "../../core/checked.h"
#include "../kernel_shared.h"
#include "reduce_logic.h"

bool tfd_reduce_shape(tfd_kernel_context *c, const tfd_kernel *k, bool needs_elements, bool *reduce, int64_t *odims, int *ond,
                      int64_t *count) {
  tfd_tensor *in = c->inputs[0];
  int nd = tfd_tensor_ndims(in);
  if (!tfd_kernel_check_index(c, k, c->inputs[1], "reduction indices")) return false;
  if (tfd_tensor_ndims(c->inputs[1]) > 1) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "reduction indices must be a scalar or a vector");
    return false;
  }
  tfd_tensor *axes = tfd_kernel_host_input(c, k, 1);
  if (!axes) return false;
  for (int d = 0; d < nd; d++) reduce[d] = false;
  for (int64_t i = 0; i < tfd_tensor_numel(axes); i++) {
    int64_t ax = tfd_tensor_get_index(axes, i);
    if (ax < -nd || ax >= nd) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Invalid reduction dimension %lld for input with %d dimensions",
                      (long long)ax, nd);
      tfd_tensor_unref(axes);
      return false;
    }
    reduce[ax < 0 ? ax + nd : ax] = true;
  }
  tfd_tensor_unref(axes);
  *count = 1;
  *ond = 0;
  for (int d = 0; d < nd; d++)
    if (reduce[d] && tfd_tensor_dim(in, d) == 0) *count = 0; /* an empty reduction, whatever the other sizes */
  for (int d = 0; d < nd; d++) {
    if (reduce[d]) {
      /* Cannot overflow: with count > 0 the reduced sizes multiply to at most numel(in)... unless a kept
       * dimension is 0, and then the output is empty and count is never used. */
      if (*count && !tfd_checked_mul(*count, tfd_tensor_dim(in, d), count)) *count = INT64_MAX;
      if (k->keep_dims) odims[(*ond)++] = 1;
    } else {
      odims[(*ond)++] = tfd_tensor_dim(in, d);
    }
  }
  if (needs_elements && *count == 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "%s of an empty set of elements", k->op->name);
    return false;
  }
  return true;
}

bool tfd_arg_shape(tfd_kernel_context *c, const tfd_kernel *k, int64_t *axis_out, int64_t *dims) {
  tfd_tensor *in = c->inputs[0], *axis_t = c->inputs[1];
  int nd = tfd_tensor_ndims(in);
  if (!tfd_kernel_check_index(c, k, axis_t, "dimension")) return false;
  if (tfd_tensor_numel(axis_t) != 1 || tfd_tensor_ndims(axis_t) > 1) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "dimension must be a scalar");
    return false;
  }
  tfd_tensor *ah = tfd_kernel_host_input(c, k, 1);
  if (!ah) return false;
  int64_t axis = tfd_tensor_get_index(ah, 0);
  tfd_tensor_unref(ah);
  if (axis < -nd || axis >= nd) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Expected dimension in the range [%d, %d), but got %lld", -nd, nd, (long long)axis);
    return false;
  }
  if (axis < 0) axis += nd;
  for (int d = 0, o = 0; d < nd; d++)
    if (d != axis) dims[o++] = tfd_tensor_dim(in, d);
  *axis_out = axis;
  return true;
}

bool tfd_arg_check_count(tfd_kernel_context *c, const tfd_kernel *k, int64_t axis) {
  tfd_tensor *in = c->inputs[0];
  int64_t count = tfd_tensor_dim(in, (int)axis);
  if (count == 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Reduction axis %lld is empty in shape of rank %d", (long long)axis,
                    tfd_tensor_ndims(in));
    return false;
  }
  if (k->dst == TFD_INT32 && count > INT32_MAX) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "dimension %lld has %lld elements: too many for int32 indices",
                    (long long)axis, (long long)count);
    return false;
  }
  return true;
}

bool tfd_top_k_shape(tfd_kernel_context *c, const tfd_kernel *k, int64_t *kk_out, int64_t *dims) {
  tfd_tensor *in = c->inputs[0], *kt = c->inputs[1];
  int nd = tfd_tensor_ndims(in);
  if (!tfd_kernel_check_index(c, k, kt, "k") || !tfd_kernel_check_scalar(c, k, kt, "k")) return false;
  if (nd < 1) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "input must be >= 1-D, got shape of rank 0");
    return false;
  }
  tfd_tensor *kh = tfd_kernel_host_input(c, k, 1);
  if (!kh) return false;
  int64_t kk = tfd_tensor_get_index(kh, 0), n = tfd_tensor_dim(in, nd - 1);
  tfd_tensor_unref(kh);
  if (kk < 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Need k >= 0, got %lld", (long long)kk);
    return false;
  }
  if (n < kk) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "input must have at least k columns. Had %lld, needed %lld", (long long)n,
                    (long long)kk);
    return false;
  }
  if (k->dst == TFD_INT32 && n > INT32_MAX) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "the last dimension has %lld elements: too many for int32 indices", (long long)n);
    return false;
  }
  for (int d = 0; d < nd; d++) dims[d] = tfd_tensor_dim(in, d);
  dims[nd - 1] = kk;
  *kk_out = kk;
  return true;
}

bool tfd_reduce_identity(tfd_dtype dt, bool max, void *value) {
  switch (dt) {
    case TFD_FLOAT32: *(float *)value = max ? -INFINITY : INFINITY; return true;
    case TFD_FLOAT64: *(double *)value = max ? -INFINITY : INFINITY; return true;
    case TFD_INT32: *(int32_t *)value = max ? INT32_MIN : INT32_MAX; return true;
    case TFD_INT64: *(int64_t *)value = max ? INT64_MIN : INT64_MAX; return true;
    default: return false;
  }
}
