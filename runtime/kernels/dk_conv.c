/* Device kernels of the convolutions and pools (k_conv.c, k_conv_generic.c): Conv2D, _FusedConv2D
 * with every fusion the CPU kernel takes ([BiasAdd], [BiasAdd, Add], [FusedBatchNorm], each with an
 * activation or Prelu, alpha last), DepthwiseConv2dNative and its fused forms, MaxPool and AvgPool,
 * NHWC with TensorFlow's windows (window.h), and the CPU kernels' checks and messages. A fused batch
 * norm's per-channel scale and shift are made on the device from its inputs (scale / sqrt(variance +
 * epsilon), offset - mean * that), as the CPU kernel makes them; an addend that only broadcasts
 * against the output is added after the convolution, as the CPU kernel does. float32 and float64 run
 * on the device; int32 and float16 run the CPU kernel on the host. */
#include <stdlib.h>
#include <string.h>

#include "../core/checked.h"
#include "device_kernel.h"
#include "kernel_shared.h"
#include "window.h"

enum { C_CONV, C_DEPTHWISE, C_MAXPOOL, C_AVGPOOL };

typedef struct conv_params {
  int op;
  bool fused;
  tfd_window_attrs win;
  int64_t ksize[2];
  tfd_conv_fusion f;
  float alpha;
} conv_params;

/* A convolution's geometry and operands, filled as the checks pass. */
typedef struct conv_call {
  int64_t n, h, w, c, kh, kw, o, oh, ow, pad_t, pad_l;
} conv_call;

static bool check_nhwc(tfd_kernel_ctx *c, tfd_kernel *k, const tfd_tensor *x, const char *what) {
  if (tfd_tensor_ndims(x) == 4 && tfd_tensor_dtype(x) == TFD_FLOAT32) return true;
  tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "%s must be a float32 tensor of rank 4 (NHWC), got %s of rank %d", what,
                  tfd_dtype_name(tfd_tensor_dtype(x)), tfd_tensor_ndims(x));
  return false;
}

/* k_conv_generic.c's checks, for the plain ops on dtypes other than float32 (float64 here). */
static bool check_generic(tfd_kernel_ctx *c, tfd_kernel *k, const tfd_tensor *x, const tfd_tensor *f) {
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
  if (dt != TFD_FLOAT64) {
    tfd_kernel_fail(c, k, TFD_UNIMPLEMENTED, "no kernel for dtype %s", tfd_dtype_name(dt));
    return false;
  }
  return true;
}

static bool spatial_out(tfd_kernel_ctx *c, tfd_kernel *k, const conv_params *p, conv_call *j) {
  if (tfd_window_size(&p->win, 0, j->h, j->kh, &j->oh, &j->pad_t) &&
      tfd_window_size(&p->win, 1, j->w, j->kw, &j->ow, &j->pad_l))
    return true;
  tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "a %lldx%lld window cannot slide over a %lldx%lld input (window sizes start at 1)",
                  (long long)j->kh, (long long)j->kw, (long long)j->h, (long long)j->w);
  return false;
}

/* y = op(a, b) over n contiguous elements with b one value (stride 0) or n values. */
static bool binary_flat(tfd_kernel *k, tfd_kernel_ctx *c, const tfd_device_math *m, int op, const void *a, const void *b,
                        bool b_scalar, void *y, int64_t n) {
  int64_t strides[2][TFD_MAX_DIMS] = {{1}, {b_scalar ? 0 : 1}};
  tfd_dm_walk w;
  if (tfd_dk_walk(&w, 1, &n, 2, strides, NULL) == 0) return true;
  tfd_status st = TFD_STATUS_INIT;
  return tfd_dk_ok(k, c, m->binary(c->device, op, TFD_FLOAT32, a, b, y, &w, &st), &st);
}

/* The fused batch norm as one multiply and one add per channel: bn [2, o] = scale / sqrt(variance +
 * epsilon), then offset - mean * that (k_conv.c's fused_args, in the same float operations). */
static tfd_tensor *batch_norm_factors(tfd_kernel *k, tfd_kernel_ctx *c, const tfd_device_math *m, const conv_params *p,
                                      int64_t o) {
  int64_t dims[2] = {2, o};
  tfd_tensor *bn = tfd_dk_alloc_device(c, k, TFD_FLOAT32, dims, 2);
  float eps = (float)p->f.epsilon;
  tfd_tensor *e = bn ? tfd_dk_scalar(c, k, m, TFD_FLOAT32, &eps) : NULL;
  bool ok = e != NULL;
  if (ok && o > 0) {
    float *factor = tfd_tensor_data(bn), *shift = factor + o;
    const void *scale = tfd_tensor_const_data(c->inputs[2]), *offset = tfd_tensor_const_data(c->inputs[3]),
               *mean = tfd_tensor_const_data(c->inputs[4]), *var = tfd_tensor_const_data(c->inputs[5]);
    tfd_status st = TFD_STATUS_INIT;
    ok = binary_flat(k, c, m, TFD_DM_ADD, var, tfd_tensor_const_data(e), true, shift, o) &&
         tfd_dk_ok(k, c, m->unary(c->device, TFD_DM_SQRT, TFD_FLOAT32, shift, shift, o, 0, &st), &st) &&
         binary_flat(k, c, m, TFD_DM_DIV, scale, shift, false, factor, o) &&
         binary_flat(k, c, m, TFD_DM_MUL, mean, factor, false, shift, o) &&
         binary_flat(k, c, m, TFD_DM_SUB, offset, shift, false, shift, o);
  }
  tfd_tensor_unref(e);
  if (!ok) {
    tfd_tensor_unref(bn);
    return NULL;
  }
  return bn;
}

/* The fused inputs' checks, in k_conv.c's order (bias, batch norm, Prelu's alpha, the addend);
 * fills q's epilogue fields; *bn holds the batch norm's factors for the call. */
static bool fused_args(tfd_kernel *k, tfd_kernel_ctx *c, const tfd_device_math *m, const conv_params *p,
                       const conv_call *j, tfd_dm_conv *q, tfd_tensor **bn) {
  if (p->f.bias) {
    tfd_tensor *b = c->inputs[2];
    if (tfd_tensor_dtype(b) != TFD_FLOAT32 || tfd_tensor_numel(b) != j->o) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "bias must hold %lld float32 values, one per output channel",
                      (long long)j->o);
      return false;
    }
    q->bias = tfd_tensor_const_data(b);
  }
  if (p->f.batch_norm) {
    for (int i = 2; i < 6; i++)
      if (tfd_tensor_dtype(c->inputs[i]) != TFD_FLOAT32 || tfd_tensor_numel(c->inputs[i]) != j->o) {
        static const char *const what[] = {"", "", "scale", "offset", "mean", "variance"};
        tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "FusedBatchNorm's %s must hold %lld float32 values, one per channel",
                        what[i], (long long)j->o);
        return false;
      }
    if (!(*bn = batch_norm_factors(k, c, m, p, j->o))) return false;
    q->scale = tfd_tensor_const_data(*bn);
    q->shift = (const float *)q->scale + j->o;
  }
  if (p->f.prelu) {
    int64_t out[4] = {j->n, j->oh, j->ow, j->o};
    tfd_tensor *a = c->inputs[c->num_inputs - 1];
    if (!tfd_prelu_alpha_size(c, k, a, out, 4, &q->prelu_n)) return false;
    q->prelu = tfd_tensor_const_data(a);
  }
  if (p->f.add) {
    tfd_tensor *a = c->inputs[3];
    if (tfd_tensor_dtype(a) != TFD_FLOAT32) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "the fused Add's operand must be float32, got %s",
                      tfd_dtype_name(tfd_tensor_dtype(a)));
      return false;
    }
  }
  return true;
}

static bool run_conv(tfd_kernel *k, tfd_kernel_ctx *c, const tfd_device_math *m, const tfd_dm_conv *q) {
  if (q->n * q->oh * q->ow == 0 || q->o == 0) return true;
  tfd_status st = TFD_STATUS_INIT;
  return tfd_dk_ok(k, c, m->conv2d(c->device, q, &st), &st);
}

/* A fused Add whose operand only broadcasts against the convolution's output: the convolution (bias
 * or batch norm applied) into a temporary, then temporary + operand broadcast into the output, then
 * Prelu or the activation there (k_conv.c's conv_add_broadcast). */
static void conv_add_broadcast(tfd_kernel *k, tfd_kernel_ctx *c, const tfd_device_math *m, const conv_params *p,
                               tfd_dm_conv q) {
  tfd_tensor *a = c->inputs[3];
  tfd_shape sc = {.ndims = 4, .dims = {q.n, q.oh, q.ow, q.o}}, sa, so;
  tfd_shape_of_tensor(a, &sa);
  tfd_status tmp = TFD_STATUS_INIT;
  if (sa.ndims > 4 || tfd_broadcast_shapes(&sc, &sa, &so, &tmp) != TFD_OK) {
    char cs[96], as[96];
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "the fused Add's operand %s does not broadcast with the convolution's output %s",
                    tfd_shape_string(&sa, as, sizeof as), tfd_shape_string(&sc, cs, sizeof cs));
    tfd_status_clear(&tmp);
    return;
  }
  tfd_tensor *conv = tfd_dk_alloc_device(c, k, TFD_FLOAT32, sc.dims, 4);
  tfd_tensor *y = conv ? tfd_dk_alloc(c, k, TFD_FLOAT32, so.dims, 4) : NULL;
  bool ok = y != NULL;
  q.y = conv ? tfd_tensor_data(conv) : NULL;
  q.addend = NULL, q.prelu = NULL, q.act = TFD_ACT_NONE;
  ok = ok && run_conv(k, c, m, &q);
  int64_t strides[2][TFD_MAX_DIMS];
  tfd_dm_walk w;
  tfd_status st = TFD_STATUS_INIT;
  if (ok) {
    tfd_dk_broadcast_strides(&sc, &so, strides[0]);
    tfd_dk_broadcast_strides(&sa, &so, strides[1]);
    ok = tfd_dk_walk(&w, 4, so.dims, 2, strides, NULL) == 0 ||
         tfd_dk_ok(k, c, m->binary(c->device, TFD_DM_ADD, TFD_FLOAT32, tfd_tensor_const_data(conv), tfd_tensor_const_data(a),
                                   tfd_tensor_data(y), &w, &st), &st);
  }
  int64_t n = y ? tfd_tensor_numel(y) : 0, na = 0;
  if (ok && !p->f.prelu && p->f.act && n > 0) {
    tfd_dm_unary act = p->f.act == TFD_ACT_RELU         ? TFD_DM_RELU
                       : p->f.act == TFD_ACT_RELU6      ? TFD_DM_RELU6
                       : p->f.act == TFD_ACT_ELU        ? TFD_DM_ELU
                       : p->f.act == TFD_ACT_LEAKY_RELU ? TFD_DM_LEAKY_RELU
                       : p->f.act == TFD_ACT_TANH       ? TFD_DM_TANH
                                                        : TFD_DM_SIGMOID;
    ok = tfd_dk_ok(k, c, m->unary(c->device, act, TFD_FLOAT32, tfd_tensor_const_data(y), tfd_tensor_data(y), n, p->alpha, &st),
                   &st);
  } else if (ok && p->f.prelu) {
    tfd_tensor *al = c->inputs[c->num_inputs - 1];
    ok = tfd_prelu_alpha_size(c, k, al, so.dims, 4, &na);
    if (ok) {
      tfd_shape sal;
      tfd_shape_of_tensor(al, &sal);
      if (sal.ndims > 4) { /* leading 1s beyond the output's rank (checked) */
        for (int d = 0; d < 4; d++) sal.dims[d] = sal.dims[d + sal.ndims - 4];
        sal.ndims = 4;
      }
      tfd_dk_broadcast_strides(&so, &so, strides[0]);
      tfd_dk_broadcast_strides(&sal, &so, strides[1]);
      ok = tfd_dk_walk(&w, 4, so.dims, 2, strides, NULL) == 0 ||
           tfd_dk_ok(k, c, m->binary(c->device, TFD_DM_PRELU, TFD_FLOAT32, tfd_tensor_const_data(y), tfd_tensor_const_data(al),
                                     tfd_tensor_data(y), &w, &st), &st);
    }
  }
  tfd_tensor_unref(conv);
  if (ok) c->outputs[0] = y;
  else tfd_tensor_unref(y);
}

static void k_conv(tfd_kernel *k, tfd_kernel_ctx *c) {
  const conv_params *p = k->dk_params;
  const tfd_device_math *m = tfd_dk_math(k, c);
  if (!m) return;
  tfd_tensor *x = c->inputs[0], *f = c->inputs[1];
  bool depthwise = p->op == C_DEPTHWISE;
  bool generic = !p->fused && (tfd_tensor_dtype(x) != TFD_FLOAT32 || tfd_tensor_dtype(f) != TFD_FLOAT32);
  if (generic ? !check_generic(c, k, x, f) : (!check_nhwc(c, k, x, "input") || !check_nhwc(c, k, f, "filter"))) return;
  conv_call j = {tfd_tensor_dim(x, 0), tfd_tensor_dim(x, 1), tfd_tensor_dim(x, 2), tfd_tensor_dim(x, 3),
                 tfd_tensor_dim(f, 0), tfd_tensor_dim(f, 1), tfd_tensor_dim(f, 3), 0, 0, 0, 0};
  if (tfd_tensor_dim(f, 2) != j.c) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "input depth %lld does not match the filter's in_channels %lld",
                    (long long)j.c, (long long)tfd_tensor_dim(f, 2));
    return;
  }
  if (depthwise && !tfd_checked_mul(j.c, tfd_tensor_dim(f, 3), &j.o)) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "the output's depth overflows");
    return;
  }
  if (!spatial_out(c, k, p, &j)) return;
  tfd_dm_conv q = {tfd_tensor_dtype(x), tfd_tensor_const_data(x), tfd_tensor_const_data(f), NULL, j.n, j.h, j.w, j.c,
                   j.kh, j.kw, j.o, j.oh, j.ow, {p->win.stride[0], p->win.stride[1]},
                   {p->win.dilation[0], p->win.dilation[1]}, {j.pad_t, j.pad_l},
                   {tfd_window_pad_after(&p->win, 0, j.h, j.kh, j.oh, j.pad_t),
                    tfd_window_pad_after(&p->win, 1, j.w, j.kw, j.ow, j.pad_l)},
                   depthwise, false, NULL, NULL, NULL, NULL, NULL, 0, p->f.prelu ? TFD_ACT_NONE : p->f.act, p->alpha};
  tfd_tensor *bn = NULL;
  if (!fused_args(k, c, m, p, &j, &q, &bn)) {
    tfd_tensor_unref(bn);
    return;
  }
  int64_t dims[4] = {j.n, j.oh, j.ow, j.o};
  tfd_tensor *y = NULL;
  if (p->f.add) {
    tfd_tensor *a = c->inputs[3];
    bool fits = tfd_tensor_ndims(a) == 4;
    for (int d = 0; fits && d < 4; d++) fits = tfd_tensor_dim(a, d) == dims[d];
    if (!fits) {
      conv_add_broadcast(k, c, m, p, q);
      tfd_tensor_unref(bn);
      return;
    }
    /* A residual add writes into its addend's buffer when nothing else reads it. */
    y = tfd_kernel_forward_input(c, 3, TFD_FLOAT32, dims, 4);
    q.addend = tfd_tensor_const_data(y ? y : a);
  }
  if (!y && !(y = tfd_dk_alloc(c, k, tfd_tensor_dtype(x), dims, 4))) {
    tfd_tensor_unref(bn);
    return;
  }
  q.y = tfd_tensor_data(y);
  bool ok = run_conv(k, c, m, &q);
  tfd_tensor_unref(bn);
  if (ok) c->outputs[0] = y;
  else tfd_tensor_unref(y);
}

static void k_pool(tfd_kernel *k, tfd_kernel_ctx *c) {
  const conv_params *p = k->dk_params;
  const tfd_device_math *m = tfd_dk_math(k, c);
  if (!m) return;
  tfd_tensor *x = c->inputs[0];
  if (tfd_tensor_dtype(x) != TFD_FLOAT32 ? !check_generic(c, k, x, NULL) : !check_nhwc(c, k, x, "input")) return;
  conv_call j = {tfd_tensor_dim(x, 0), tfd_tensor_dim(x, 1), tfd_tensor_dim(x, 2), tfd_tensor_dim(x, 3),
                 p->ksize[0], p->ksize[1], tfd_tensor_dim(x, 3), 0, 0, 0, 0};
  if (!spatial_out(c, k, p, &j)) return;
  int64_t dims[4] = {j.n, j.oh, j.ow, j.c};
  tfd_tensor *y = tfd_dk_alloc(c, k, tfd_tensor_dtype(x), dims, 4);
  if (!y) return;
  bool ok = true;
  if (j.n * j.oh > 0 && j.ow > 0 && j.c > 0) {
    tfd_dm_pool q = {tfd_tensor_dtype(x), p->op == C_MAXPOOL, tfd_tensor_const_data(x), tfd_tensor_data(y), j.n, j.h, j.w,
                     j.c, j.kh, j.kw, j.oh, j.ow, {p->win.stride[0], p->win.stride[1]}, {j.pad_t, j.pad_l}};
    tfd_status st = TFD_STATUS_INIT;
    ok = tfd_dk_ok(k, c, m->pool(c->device, &q, &st), &st);
  }
  if (ok) c->outputs[0] = y;
  else tfd_tensor_unref(y);
}

tfd_code tfd_dk_setup_conv(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  const tfd_node_def *node = init->node;
  const char *op = init->op->name, *name = tfd_node_def_name(node);
  int which = strstr(op, "DepthwiseConv2dNative") ? C_DEPTHWISE
              : strcmp(op, "MaxPool") == 0         ? C_MAXPOOL
              : strcmp(op, "AvgPool") == 0         ? C_AVGPOOL
                                                   : C_CONV;
  bool fused = strncmp(op, "_Fused", 6) == 0 || strncmp(op, "Fused", 5) == 0;
  /* The math convolves and pools float32 and float64; the CPU kernel takes the rest on the host. */
  if (k->T != TFD_FLOAT32 && !(k->T == TFD_FLOAT64 && !fused)) return tfd_dk_setup_on_host(k, init, tfd_setup_conv, st);
  conv_params *p = calloc(1, sizeof *p);
  if (!p) return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
  k->dk_params = p;
  p->op = which;
  p->fused = fused;
  bool pool = which == C_MAXPOOL || which == C_AVGPOOL;
  if (tfd_window_attrs_read(node, op, !pool, &p->win, st) != TFD_OK) return tfd_status_code(st);
  if (pool) {
    if (!tfd_spatial_attr(node, "ksize", 0, p->ksize) || p->ksize[0] < 1 || p->ksize[0] > INT32_MAX ||
        p->ksize[1] > INT32_MAX)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): ksize must be 4 values [1, h, w, 1]", name, op);
    k->compute = k_pool;
    return TFD_OK;
  }
  if (fused && tfd_conv_parse_fused(node, op, init->num_inputs, &p->f, st) != TFD_OK) return tfd_status_code(st);
  if (which == C_DEPTHWISE && (p->f.batch_norm || p->f.add))
    return tfd_status_setf(st, TFD_UNIMPLEMENTED, "node '%s' (%s): Fusion is not implemented: only BiasAdd and an activation",
                           name, op);
  p->alpha = (float)tfd_attr_float(node, "leakyrelu_alpha", 0.2);
  k->compute = k_conv;
  return TFD_OK;
}
