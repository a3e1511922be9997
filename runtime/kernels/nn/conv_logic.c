/* conv_logic.h: the convolutions' and pools' attributes, checks and shapes, for their CPU and device
 * kernels. */
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "../../core/checked.h"
#include "../../core/status_internal.h"
#include "conv_logic.h"
#include "../math/cwise_logic.h"
#include "../kernel_shared.h"

/* TensorFlow's _FusedConv2D fusions: [BiasAdd], [BiasAdd, Add], [FusedBatchNorm], each optionally
 * followed by an activation or Prelu. The inputs after the filter: bias; bias and the addend;
 * scale, offset, mean and variance; then Prelu's alpha, always last (TensorFlow.js's converter
 * writes [BiasAdd, Prelu]; tfdev's remapper adds [BiasAdd, Add, Prelu] for residual blocks). */
tfd_code tfd_conv_parse_fused(const tfd_node_def *node, const char *op, int num_inputs, tfd_conv_fusion *p,
                              tfd_status *st) {
  const tfd_attr_value *v = tfd_node_def_attr(node, "fused_ops");
  size_t len = v && v->type == TFD_ATTR_LIST_STRING ? v->list_len : 0, i = 0;
  bool ok = len >= 1 && len <= 3;
  *p = (tfd_conv_fusion){0};
  if (ok && strcmp(v->list_s[0], "BiasAdd") == 0) {
    p->bias = true;
    i = 1;
    if (i < len && strcmp(v->list_s[i], "Add") == 0) p->add = true, i++;
  } else if (ok && strcmp(v->list_s[0], "FusedBatchNorm") == 0) {
    p->batch_norm = true;
    p->epsilon = tfd_attr_float(node, "epsilon", 0.0001);
    i = 1;
  } else {
    ok = false;
  }
  if (ok && i < len) {
    if (strcmp(v->list_s[i], "Prelu") == 0) p->prelu = true;
    else ok = (p->act = tfd_activation_of_op(v->list_s[i])) != TFD_ACT_NONE;
    i++;
  }
  ok = ok && i == len;
  int want = 2 + (p->bias ? 1 : 0) + (p->add ? 1 : 0) + (p->batch_norm ? 4 : 0) + (p->prelu ? 1 : 0);
  char list[256] = "";
  for (size_t k = 0; k < len; k++) {
    strncat(list, k ? "," : "", sizeof list - strlen(list) - 1);
    strncat(list, v->list_s[k], sizeof list - strlen(list) - 1);
  }
  if (ok && num_inputs != want)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): fused_ops [%s] take %d inputs, got %d",
                           tfd_node_def_name(node), op, list, want, num_inputs);
  if (ok) return TFD_OK;
  return tfd_status_setf(st, TFD_UNIMPLEMENTED, "node '%s' (%s): Fusion is not implemented: [%s]",
                         tfd_node_def_name(node), op, list);
}

/* ---- attributes ---- */
tfd_conv_kind tfd_conv_kind_of(const char *op) {
  return strstr(op, "DepthwiseConv2dNative") ? TFD_CONV_DEPTHWISE /* and its fused forms */
         : strcmp(op, "MaxPool") == 0        ? TFD_CONV_MAXPOOL
         : strcmp(op, "AvgPool") == 0        ? TFD_CONV_AVGPOOL
                                             : TFD_CONV_2D;
}

bool tfd_conv_op_fused(const char *op) { return strncmp(op, "_Fused", 6) == 0 || strncmp(op, "Fused", 5) == 0; }

tfd_code tfd_conv_attrs_read(const tfd_node_def *node, const char *op, int num_inputs, tfd_conv_attrs *a,
                             tfd_status *st) {
  const char *name = tfd_node_def_name(node);
  *a = (tfd_conv_attrs){.kind = tfd_conv_kind_of(op), .fused = tfd_conv_op_fused(op)};
  bool pool = a->kind == TFD_CONV_MAXPOOL || a->kind == TFD_CONV_AVGPOOL;
  if (tfd_window_attrs_read(node, op, !pool, &a->win, st) != TFD_OK) return tfd_status_code(st);
  if (pool) {
    if (!tfd_spatial_attr(node, "ksize", 0, a->ksize) || a->ksize[0] < 1 || a->ksize[0] > INT32_MAX ||
        a->ksize[1] > INT32_MAX)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): ksize must be 4 values [1, h, w, 1]", name, op);
    return TFD_OK;
  }
  if (a->fused && tfd_conv_parse_fused(node, op, num_inputs, &a->f, st) != TFD_OK) return tfd_status_code(st);
  if (a->kind == TFD_CONV_DEPTHWISE && (a->f.batch_norm || a->f.add)) /* TensorFlow fuses only BiasAdd and activations */
    return tfd_status_setf(st, TFD_UNIMPLEMENTED, "node '%s' (%s): Fusion is not implemented: only BiasAdd and an activation",
                           name, op);
  a->alpha = tfd_attr_float(node, "leakyrelu_alpha", 0.2);
  return TFD_OK;
}

/* ---- inputs and geometry ---- */
bool tfd_conv_check_nhwc(tfd_kernel_context *c, const tfd_kernel *k, const tfd_tensor *t, const char *what) {
  if (tfd_tensor_ndims(t) == 4 && tfd_tensor_dtype(t) == TFD_FLOAT32) return true;
  tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "%s must be a float32 tensor of rank 4 (NHWC), got %s of rank %d", what,
                  tfd_dtype_name(tfd_tensor_dtype(t)), tfd_tensor_ndims(t));
  return false;
}

bool tfd_conv_check_generic(tfd_kernel_context *c, const tfd_kernel *k, const tfd_tensor *x, const tfd_tensor *f) {
  tfd_dtype dt = tfd_tensor_dtype(x);
  if (tfd_tensor_ndims(x) != 4) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "input must be a tensor of rank 4 (NHWC), got %s of rank %d",
                    tfd_dtype_name(dt), tfd_tensor_ndims(x));
    return false;
  }
  if (f && tfd_tensor_ndims(f) != 4) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "filter must be a tensor of rank 4 (HWIO), got %s of rank %d",
                    tfd_dtype_name(tfd_tensor_dtype(f)), tfd_tensor_ndims(f));
    return false;
  }
  if (f && tfd_tensor_dtype(f) != dt) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "filter is %s but input is %s: they must have the same dtype",
                    tfd_dtype_name(tfd_tensor_dtype(f)), tfd_dtype_name(dt));
    return false;
  }
  return true;
}

/* g's output height and width, and the padding before, for its input and window. */
static bool window(tfd_kernel_context *c, const tfd_kernel *k, const tfd_window_attrs *win, tfd_conv_dims *g) {
  if (tfd_window_size(win, 0, g->h, g->kh, &g->oh, &g->pad_t) && tfd_window_size(win, 1, g->w, g->kw, &g->ow, &g->pad_l))
    return true;
  tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "a %lldx%lld window cannot slide over a %lldx%lld input (window sizes start at 1)",
                  (long long)g->kh, (long long)g->kw, (long long)g->h, (long long)g->w);
  return false;
}

bool tfd_conv_geometry(tfd_kernel_context *c, const tfd_kernel *k, const tfd_window_attrs *win, bool depthwise,
                       tfd_conv_dims *g) {
  const tfd_tensor *x = c->inputs[0], *f = c->inputs[1];
  *g = (tfd_conv_dims){tfd_tensor_dim(x, 0), tfd_tensor_dim(x, 1), tfd_tensor_dim(x, 2), tfd_tensor_dim(x, 3),
                       tfd_tensor_dim(f, 0), tfd_tensor_dim(f, 1), depthwise ? 0 : tfd_tensor_dim(f, 3), 0, 0, 0, 0};
  if (tfd_tensor_dim(f, 2) != g->c) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "input depth %lld does not match the filter's in_channels %lld",
                    (long long)g->c, (long long)tfd_tensor_dim(f, 2));
    return false;
  }
  if (depthwise && !tfd_checked_mul(g->c, tfd_tensor_dim(f, 3), &g->o)) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "the output's depth overflows");
    return false;
  }
  return window(c, k, win, g);
}

bool tfd_pool_geometry(tfd_kernel_context *c, const tfd_kernel *k, const tfd_window_attrs *win, const int64_t ksize[2],
                       tfd_conv_dims *g) {
  const tfd_tensor *x = c->inputs[0];
  *g = (tfd_conv_dims){tfd_tensor_dim(x, 0), tfd_tensor_dim(x, 1), tfd_tensor_dim(x, 2), tfd_tensor_dim(x, 3),
                       ksize[0], ksize[1], tfd_tensor_dim(x, 3), 0, 0, 0, 0};
  return window(c, k, win, g);
}

/* ---- fused inputs ---- */
bool tfd_conv_check_fused(tfd_kernel_context *c, const tfd_kernel *k, const tfd_conv_fusion *f, const int64_t out[4],
                          int64_t *alpha_n) {
  int64_t o = out[3];
  if (f->bias) {
    tfd_tensor *b = c->inputs[2];
    if (tfd_tensor_dtype(b) != TFD_FLOAT32 || tfd_tensor_numel(b) != o) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "bias must hold %lld float32 values, one per output channel", (long long)o);
      return false;
    }
  }
  if (f->batch_norm)
    for (int i = 2; i < 6; i++)
      if (tfd_tensor_dtype(c->inputs[i]) != TFD_FLOAT32 || tfd_tensor_numel(c->inputs[i]) != o) {
        static const char *const what[] = {"", "", "scale", "offset", "mean", "variance"};
        tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "FusedBatchNorm's %s must hold %lld float32 values, one per channel",
                        what[i], (long long)o);
        return false;
      }
  if (f->prelu && !tfd_prelu_alpha_size(c, k, c->inputs[c->num_inputs - 1], out, 4, alpha_n)) return false;
  if (f->add) {
    tfd_tensor *a = c->inputs[3];
    if (tfd_tensor_dtype(a) != TFD_FLOAT32) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "the fused Add's operand must be float32, got %s",
                      tfd_dtype_name(tfd_tensor_dtype(a)));
      return false;
    }
  }
  return true;
}

bool tfd_conv_addend_fits(const tfd_kernel_context *c, const int64_t out[4]) {
  const tfd_tensor *a = c->inputs[3];
  if (tfd_tensor_ndims(a) != 4) return false;
  for (int d = 0; d < 4; d++)
    if (tfd_tensor_dim(a, d) != out[d]) return false;
  return true;
}

bool tfd_conv_addend_broadcast(tfd_kernel_context *c, const tfd_kernel *k, const tfd_shape *sc, tfd_shape *sa, tfd_shape *so) {
  tfd_shape_of_tensor(c->inputs[3], sa);
  tfd_status tmp = TFD_STATUS_INIT;
  if (sa->ndims <= 4 && tfd_broadcast_shapes(sc, sa, so, &tmp) == TFD_OK) return true;
  char cs[96], as[96];
  tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "the fused Add's operand %s does not broadcast with the convolution's output %s",
                  tfd_shape_string(sa, as, sizeof as), tfd_shape_string(sc, cs, sizeof cs));
  tfd_status_clear(&tmp);
  return false;
}

/* ---- Conv2DBackpropInput ---- */
bool tfd_conv_backprop_input_shape(tfd_kernel_context *c, const tfd_kernel *k, const tfd_window_attrs *win,
                                   tfd_conv_dims *g) {
  tfd_tensor *sizes = c->inputs[0], *f = c->inputs[1], *dy = c->inputs[2];
  if (tfd_tensor_dtype(sizes) != TFD_INT32 || tfd_tensor_ndims(sizes) != 1 || tfd_tensor_dim(sizes, 0) != 4) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "input_sizes must be an int32 vector of 4 sizes");
    return false;
  }
  if (!tfd_conv_check_nhwc(c, k, f, "filter") || !tfd_conv_check_nhwc(c, k, dy, "out_backprop")) return false;
  tfd_tensor *sh = tfd_kernel_host_input(c, k, 0);
  if (!sh) return false;
  int64_t n = tfd_tensor_get_index(sh, 0), h = tfd_tensor_get_index(sh, 1), w = tfd_tensor_get_index(sh, 2),
          ci = tfd_tensor_get_index(sh, 3);
  tfd_tensor_unref(sh);
  int64_t kh = tfd_tensor_dim(f, 0), kw = tfd_tensor_dim(f, 1), co = tfd_tensor_dim(f, 3);
  if (n < 0 || h < 0 || w < 0 || ci < 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "input_sizes must not be negative");
    return false;
  }
  if (tfd_tensor_dim(f, 2) != ci || tfd_tensor_dim(dy, 3) != co || tfd_tensor_dim(dy, 0) != n) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                    "shapes do not agree: input_sizes [%lld,%lld,%lld,%lld], filter [%lld,%lld,%lld,%lld], out_backprop "
                    "[%lld,%lld,%lld,%lld]",
                    (long long)n, (long long)h, (long long)w, (long long)ci, (long long)kh, (long long)kw,
                    (long long)tfd_tensor_dim(f, 2), (long long)co, (long long)tfd_tensor_dim(dy, 0),
                    (long long)tfd_tensor_dim(dy, 1), (long long)tfd_tensor_dim(dy, 2), (long long)tfd_tensor_dim(dy, 3));
    return false;
  }
  int64_t oh = -1, ow = -1, pad_t = 0, pad_l = 0;
  if (!tfd_window_size(win, 0, h, kh, &oh, &pad_t) || !tfd_window_size(win, 1, w, kw, &ow, &pad_l) ||
      oh != tfd_tensor_dim(dy, 1) || ow != tfd_tensor_dim(dy, 2)) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                    "out_backprop is [%lld,%lld] spatially but the forward convolution of input_sizes gives [%lld,%lld]",
                    (long long)tfd_tensor_dim(dy, 1), (long long)tfd_tensor_dim(dy, 2), (long long)oh, (long long)ow);
    return false;
  }
  *g = (tfd_conv_dims){n, h, w, ci, kh, kw, co, oh, ow, pad_t, pad_l};
  return true;
}

bool tfd_conv_backprop_input_fits(tfd_kernel_context *c, const tfd_kernel *k, const tfd_conv_dims *g) {
  if (g->n == 0 || g->h == 0 || g->w == 0 || g->c == 0 || g->oh == 0 || g->ow == 0 || g->o == 0) return true;
  int64_t kcols = g->kh * g->kw * g->c; /* the filter's elements over o, which is not 0: fits */
  if (kcols == 0 ||
      !(g->ow > INT_MAX || kcols > INT_MAX || g->o > INT_MAX || (uint64_t)g->ow * (uint64_t)kcols > SIZE_MAX / sizeof(float)))
    return true;
  tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "the sizes are too large");
  return false;
}
