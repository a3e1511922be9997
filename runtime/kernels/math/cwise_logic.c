/* cwise_logic.h: the elementwise ops' checks and output shapes, for their CPU and device kernels. */
#include "../../core/status_internal.h"
#include "cwise_logic.h"

bool tfd_cwise_same_dtypes(tfd_kernel_context *c, const tfd_kernel *k, int first, int count) {
  tfd_dtype dt = tfd_tensor_dtype(c->inputs[first]);
  for (int i = first + 1; i < first + count; i++)
    if (tfd_tensor_dtype(c->inputs[i]) != dt) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "input %d is %s but input %d is %s", first, tfd_dtype_name(dt), i,
                      tfd_dtype_name(tfd_tensor_dtype(c->inputs[i])));
      return false;
    }
  return true;
}

bool tfd_cwise_need_bool(tfd_kernel_context *c, const tfd_kernel *k, int i, const char *what) {
  if (tfd_tensor_dtype(c->inputs[i]) == TFD_BOOL) return true;
  tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "%s (input %d) must be bool, got %s", what, i,
                  tfd_dtype_name(tfd_tensor_dtype(c->inputs[i])));
  return false;
}

bool tfd_cwise_broadcast(tfd_kernel_context *c, const tfd_kernel *k, const tfd_shape *a, const tfd_shape *b, tfd_shape *out) {
  tfd_status tmp = TFD_STATUS_INIT;
  if (tfd_broadcast_shapes(a, b, out, &tmp) == TFD_OK) return true;
  tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "%s", tfd_status_message(&tmp));
  tfd_status_clear(&tmp);
  return false;
}

bool tfd_compare_broadcast(tfd_kernel_context *c, const tfd_kernel *k, bool lenient, const tfd_shape *a, const tfd_shape *b,
                           tfd_shape *out, bool *all_differ) {
  *all_differ = false;
  if (!lenient) return tfd_cwise_broadcast(c, k, a, b, out);
  tfd_status tmp = TFD_STATUS_INIT;
  if (tfd_broadcast_shapes(a, b, out, &tmp) != TFD_OK) *all_differ = true;
  tfd_status_clear(&tmp);
  return true;
}

bool tfd_select_check(tfd_kernel_context *c, const tfd_kernel *k, bool v2, tfd_shape *s, tfd_shape *out) {
  if (!tfd_cwise_need_bool(c, k, 0, "condition") || !tfd_cwise_same_dtypes(c, k, 1, 2)) return false;
  tfd_dtype dt = tfd_tensor_dtype(c->inputs[1]);
  size_t es = tfd_dtype_size(dt);
  if ((es != 1 && es != 4 && es != 8) || dt == TFD_RESOURCE) { /* elements are picked whole, by size */
    tfd_kernel_fail(c, k, TFD_UNIMPLEMENTED, "no kernel for dtype %s", tfd_dtype_name(dt));
    return false;
  }
  for (int i = 0; i < 3; i++) tfd_shape_of_tensor(c->inputs[i], &s[i]);
  if (v2) {
    tfd_shape te;
    return tfd_cwise_broadcast(c, k, &s[1], &s[2], &te) && tfd_cwise_broadcast(c, k, &s[0], &te, out);
  }
  char b1[96], b2[96];
  if (!tfd_shape_equal(&s[1], &s[2])) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "'then' and 'else' must have the same shape, got %s and %s",
                    tfd_shape_string(&s[1], b1, sizeof b1), tfd_shape_string(&s[2], b2, sizeof b2));
    return false;
  }
  bool cond_same = tfd_shape_equal(&s[0], &s[1]);
  if (!cond_same && s[0].ndims == 1 && s[1].ndims > 1 && s[0].dims[0] == s[1].dims[0]) {
    /* A vector picks whole slices along the first dimension: broadcast it as [n, 1, ...]. */
    s[0].ndims = s[1].ndims;
    for (int d = 1; d < s[0].ndims; d++) s[0].dims[d] = 1;
  } else if (!cond_same && s[0].ndims != 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                    "condition must be a scalar, a vector as long as the first dimension of 'then', or shaped "
                    "like 'then'; got %s for 'then' of %s",
                    tfd_shape_string(&s[0], b1, sizeof b1), tfd_shape_string(&s[1], b2, sizeof b2));
    return false;
  }
  *out = s[1];
  return true;
}

bool tfd_add_n_check(tfd_kernel_context *c, const tfd_kernel *k) {
  tfd_tensor *first = c->inputs[0];
  for (int i = 1; i < c->num_inputs; i++) {
    tfd_tensor *t = c->inputs[i];
    bool same = tfd_tensor_ndims(t) == tfd_tensor_ndims(first);
    for (int d = 0; same && d < tfd_tensor_ndims(t); d++) same = tfd_tensor_dim(t, d) == tfd_tensor_dim(first, d);
    if (!same) {
      tfd_shape a, b;
      char sa[96], sb[96];
      tfd_shape_of_tensor(first, &a);
      tfd_shape_of_tensor(t, &b);
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "input %d has shape %s but input 0 has shape %s", i,
                      tfd_shape_string(&b, sb, sizeof sb), tfd_shape_string(&a, sa, sizeof sa));
      return false;
    }
  }
  return true;
}

bool tfd_bias_add_check(tfd_kernel_context *c, const tfd_kernel *k) {
  tfd_tensor *v = c->inputs[0], *b = c->inputs[1];
  int nd = tfd_tensor_ndims(v);
  if (tfd_tensor_ndims(b) == 1 && nd >= 1 && tfd_tensor_dim(v, nd - 1) == tfd_tensor_dim(b, 0)) return true;
  tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "bias of %lld elements does not match the last dimension of value",
                  (long long)tfd_tensor_dim(b, 0));
  return false;
}

bool tfd_softmax_check(tfd_kernel_context *c, const tfd_kernel *k) {
  if (tfd_tensor_ndims(c->inputs[0]) >= 1) return true;
  tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "logits must have rank >= 1");
  return false;
}

bool tfd_prelu_alpha_size(tfd_kernel_context *c, const tfd_kernel *k, const tfd_tensor *a, const int64_t *dims, int nd,
                          int64_t *n) {
  if (tfd_tensor_dtype(a) != TFD_FLOAT32) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Prelu's alpha must be float32, got %s", tfd_dtype_name(tfd_tensor_dtype(a)));
    return false;
  }
  int an = tfd_tensor_ndims(a), lead = 0;
  while (lead < an && tfd_tensor_dim(a, lead) == 1) lead++;
  bool ok = an - lead <= nd;
  for (int d = lead; ok && d < an; d++) ok = tfd_tensor_dim(a, d) == dims[nd - (an - d)];
  *n = tfd_tensor_numel(a);
  if (ok && *n >= 1) return true;
  char as[96], xs[96];
  tfd_shape sa, sx = {.ndims = nd}, sb;
  tfd_shape_of_tensor(a, &sa);
  for (int d = 0; d < nd; d++) sx.dims[d] = dims[d];
  tfd_shape_string(&sa, as, sizeof as);
  tfd_shape_string(&sx, xs, sizeof xs);
  tfd_status tmp = TFD_STATUS_INIT;
  bool broadcasts = *n >= 1 && tfd_broadcast_shapes(&sx, &sa, &sb, &tmp) == TFD_OK && tfd_shape_numel(&sb) == tfd_shape_numel(&sx);
  tfd_status_clear(&tmp);
  if (broadcasts)
    tfd_kernel_fail(c, k, TFD_UNIMPLEMENTED, "Prelu's alpha %s broadcasts over %s in a way not implemented: leading 1s aside, "
                    "alpha must be one value or the trailing dimensions", as, xs);
  else
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Prelu's alpha %s must broadcast over %s", as, xs);
  return false;
}

bool tfd_prelu_check(tfd_kernel_context *c, const tfd_kernel *k, int64_t *dims, int *nd, int64_t *na) {
  tfd_tensor *x = c->inputs[0];
  *nd = tfd_tensor_ndims(x);
  for (int d = 0; d < *nd; d++) dims[d] = tfd_tensor_dim(x, d);
  if (tfd_tensor_dtype(x) != TFD_FLOAT32) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "x must be float32, got %s", tfd_dtype_name(tfd_tensor_dtype(x)));
    return false;
  }
  return tfd_prelu_alpha_size(c, k, c->inputs[1], dims, *nd, na);
}

bool tfd_clip_shapes(tfd_kernel_context *c, const tfd_kernel *k, tfd_shape s[3]) {
  for (int i = 0; i < 3; i++) tfd_shape_of_tensor(c->inputs[i], &s[i]);
  bool ok = true;
  for (int i = 1; i < 3; i++) ok = ok && (s[i].ndims == 0 || tfd_shape_equal(&s[i], &s[0]));
  if (ok) return true;
  char b0[96], b1[96], b2[96];
  tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                  "clip_value_min and clip_value_max must be either of the same shape as input, or a scalar. "
                  "input shape: %sclip_value_min shape: %sclip_value_max shape: %s",
                  tfd_shape_string(&s[0], b0, sizeof b0), tfd_shape_string(&s[1], b1, sizeof b1),
                  tfd_shape_string(&s[2], b2, sizeof b2));
  return false;
}
