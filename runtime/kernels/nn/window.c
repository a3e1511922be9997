/* Sliding-window geometry (see window.h). */
#include "window.h"

#include <string.h>

#include "../../core/checked.h"
#include "../../core/status_internal.h"
#include "../../ops/op_registry.h"
#include "../kernel.h"

tfd_code tfd_window_attrs_read(const tfd_node_def *node, const char *op, bool dilations, tfd_window_attrs *w,
                               tfd_status *st) {
  const char *name = tfd_node_def_name(node);
  *w = (tfd_window_attrs){0};
  const char *fmt = tfd_attr_string(node, "data_format", "NHWC");
  if (strcmp(fmt, "NHWC") != 0)
    return tfd_status_setf(st, TFD_UNIMPLEMENTED, "node '%s' (%s): data_format %s is not supported (NHWC only)", name, op, fmt);
  const char *padding = tfd_attr_string(node, "padding", "VALID");
  w->padding = strcmp(padding, "SAME") == 0       ? TFD_PAD_SAME
               : strcmp(padding, "VALID") == 0    ? TFD_PAD_VALID
               : strcmp(padding, "EXPLICIT") == 0 ? TFD_PAD_EXPLICIT
                                                  : -1;
  if (w->padding < 0)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): padding must be SAME, VALID or EXPLICIT, got '%s'",
                           name, op, padding);
  if (w->padding == TFD_PAD_EXPLICIT) {
    const tfd_attr_value *e = tfd_node_def_attr(node, "explicit_paddings");
    if (!e || e->type != TFD_ATTR_LIST_INT || e->list_len != 8 || e->list_i[0] || e->list_i[1] || e->list_i[6] ||
        e->list_i[7])
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                             "node '%s' (%s): explicit_paddings must hold 8 values, zero for batch and depth", name, op);
    for (int i = 0; i < 4; i++) {
      w->explicit_pad[i] = e->list_i[2 + i];
      if (w->explicit_pad[i] < 0 || w->explicit_pad[i] > INT32_MAX)
        return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): explicit_paddings must be between 0 and %d",
                               name, op, INT32_MAX);
    }
  }
  bool ok = tfd_spatial_attr(node, "strides", 1, w->stride);
  if (dilations) ok = ok && tfd_spatial_attr(node, "dilations", 1, w->dilation);
  else w->dilation[0] = w->dilation[1] = 1;
  for (int d = 0; d < 2 && ok; d++) ok = w->stride[d] <= INT32_MAX && w->dilation[d] <= INT32_MAX;
  if (!ok)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (%s): strides and dilations must be 4 values [1, h, w, 1] with h, w >= 1", name, op);
  return TFD_OK;
}

bool tfd_window_size(const tfd_window_attrs *w, int d, int64_t in, int64_t k, int64_t *out, int64_t *pad_before) {
  int64_t span, stride = w->stride[d];
  if (in < 0 || k < 1 || !tfd_checked_mul(k - 1, w->dilation[d], &span) || span > INT64_MAX / 4 || in > INT64_MAX / 4)
    return false; /* keeps the sums below in range */
  span += 1;
  if (w->padding == TFD_PAD_SAME) {
    *out = in / stride + (in % stride != 0);
    int64_t total = (*out - 1) * stride + span - in;
    *pad_before = total > 0 ? total / 2 : 0;
    return true;
  }
  const int64_t *ex = w->explicit_pad + 2 * d;
  int64_t padded = in + (w->padding == TFD_PAD_EXPLICIT ? ex[0] + ex[1] : 0);
  *out = padded >= span ? (padded - span) / stride + 1 : 0;
  *pad_before = w->padding == TFD_PAD_EXPLICIT ? ex[0] : 0;
  return true;
}

int64_t tfd_window_pad_after(const tfd_window_attrs *w, int d, int64_t in, int64_t k, int64_t out, int64_t before) {
  if (w->padding == TFD_PAD_EXPLICIT) return w->explicit_pad[2 * d + 1];
  if (w->padding == TFD_PAD_VALID) return 0;
  int64_t after = (out - 1) * w->stride[d] + (k - 1) * w->dilation[d] + 1 - in - before;
  return after > 0 ? after : 0;
}

tfd_code tfd_window_size_tf(int64_t in, int64_t k, int64_t dilation, int64_t stride, bool same, int64_t *out,
                            int64_t *pad_before, tfd_status *st) {
  int64_t span;
  if (stride < 1) return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "Stride must be > 0, but got %lld", (long long)stride);
  if (dilation < 1)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "Dilation rate must be >= 1, but got %lld", (long long)dilation);
  if (in < 0 || k < 0 || in > INT64_MAX / 4 || stride > INT64_MAX / 4 || !tfd_checked_mul(k > 0 ? k - 1 : 0, dilation, &span) ||
      span > INT64_MAX / 4)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "window of %lld with dilation %lld over %lld is too large",
                           (long long)k, (long long)dilation, (long long)in);
  span = k > 0 ? span + 1 : 1 - dilation; /* TensorFlow's (k - 1) * dilation + 1, k == 0 included */
  if (same) {
    *out = (in + stride - 1) / stride;
    int64_t need = (*out - 1) * stride + span - in;
    *pad_before = need > 0 ? need / 2 : 0;
  } else {
    *out = (in - span + stride) / stride;
    *pad_before = 0;
  }
  if (*out < 0)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "Computed output size would be negative: %lld [input_size: %lld, effective_filter_size: %lld, "
                           "stride: %lld]",
                           (long long)*out, (long long)in, (long long)span, (long long)stride);
  return TFD_OK;
}
