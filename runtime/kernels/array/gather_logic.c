/* gather_logic.h: GatherV2's and GatherNd's checks and output shapes, for their CPU and device
 * kernels. */
#include <stdio.h>

#include "gather_logic.h"
#include "../kernel_shared.h"

bool tfd_gather_check(tfd_kernel_context *c, const tfd_kernel *k, tfd_gather_shape *g) {
  tfd_tensor *p = c->inputs[0], *ix = c->inputs[1], *axis_t = c->inputs[2];
  int pr = tfd_tensor_ndims(p), ir = tfd_tensor_ndims(ix);
  if (!tfd_kernel_check_index(c, k, ix, "indices") || !tfd_kernel_check_index(c, k, axis_t, "axis")) return false;
  if (tfd_tensor_numel(axis_t) != 1 || tfd_tensor_ndims(axis_t) > 1) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "axis must be a scalar");
    return false;
  }
  if (pr == 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "params must be at least 1 dimensional");
    return false;
  }
  tfd_tensor *ah = tfd_kernel_host_input(c, k, 2);
  if (!ah) return false;
  int64_t axis = tfd_tensor_get_index(ah, 0), b = k->index;
  tfd_tensor_unref(ah);
  if (axis < -pr || axis >= pr) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Expected axis in the range [%d, %d), but got %lld", -pr, pr, (long long)axis);
    return false;
  }
  if (axis < 0) axis += pr;
  if (b != 0) { /* TensorFlow's GatherOp checks, in its order and words */
    if (b < -ir || b > ir) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Expected batch_dims in the range [%d, %d], but got %lld", -ir, ir, (long long)b);
      return false;
    }
    if (b < 0) b += ir;
    if (b >= pr) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "batch_dims (%lld) must be less than rank(params) (%d).", (long long)b, pr);
      return false;
    }
    if (axis < b) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "batch_dims (%lld) must be less than or equal to axis (%lld).", (long long)b,
                      (long long)axis);
      return false;
    }
    for (int d = 0; d < b; d++)
      if (tfd_tensor_dim(p, d) != tfd_tensor_dim(ix, d)) {
        tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "params.shape[%d]: %lld should be equal to indices.shape[%d]: %lld", d,
                        (long long)tfd_tensor_dim(p, d), d, (long long)tfd_tensor_dim(ix, d));
        return false;
      }
  }
  if (pr - 1 + ir - b > TFD_MAX_DIMS) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "the result would have more than %d dimensions", TFD_MAX_DIMS);
    return false;
  }
  int64_t limit = tfd_tensor_dim(p, (int)axis), nidx = tfd_tensor_numel(ix);
  for (int64_t i = 0; tfd_tensor_on_host(ix) && i < nidx; i++) {
    int64_t v = tfd_tensor_get_index(ix, i);
    if (v < 0 || v >= limit) {
      char buf[128];
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "indices[%s] = %lld is not in [0, %lld)", tfd_index_coords(ix, i, ir, buf, sizeof buf),
                      (long long)v, (long long)limit);
      return false;
    }
  }
  g->axis = axis, g->batch_dims = b, g->limit = limit, g->nd = 0;
  for (int d = 0; d < axis; d++) g->dims[g->nd++] = tfd_tensor_dim(p, d);
  for (int d = (int)b; d < ir; d++) g->dims[g->nd++] = tfd_tensor_dim(ix, d);
  for (int d = (int)axis + 1; d < pr; d++) g->dims[g->nd++] = tfd_tensor_dim(p, d);
  return true;
}

bool tfd_gather_nd_check(tfd_kernel_context *c, const tfd_kernel *k, int64_t *depth_out, int64_t *dims, int *nd) {
  tfd_tensor *p = c->inputs[0], *ix = c->inputs[1];
  int pr = tfd_tensor_ndims(p), ir = tfd_tensor_ndims(ix);
  if (!tfd_kernel_check_index(c, k, ix, "indices")) return false;
  if (ir == 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "indices must be at least a vector");
    return false;
  }
  int64_t depth = tfd_tensor_dim(ix, ir - 1);
  if (depth > pr) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "index innermost dimension length must be <= params rank; saw: %lld vs. %d",
                    (long long)depth, pr);
    return false;
  }
  if (ir - 1 + pr - depth > TFD_MAX_DIMS) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "the result would have more than %d dimensions", TFD_MAX_DIMS);
    return false;
  }
  *nd = 0;
  for (int d = 0; d < ir - 1; d++) dims[(*nd)++] = tfd_tensor_dim(ix, d);
  for (int d = (int)depth; d < pr; d++) dims[(*nd)++] = tfd_tensor_dim(p, d);
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
        return false;
      }
    }
  }
  *depth_out = depth;
  return true;
}
