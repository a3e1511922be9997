/* Device kernels of the convolutions and pools (k_conv.c, k_conv_generic.c): Conv2D, _FusedConv2D
 * with every fusion the CPU kernel takes ([BiasAdd], [BiasAdd, Add], [FusedBatchNorm], each with an
 * activation or Prelu, alpha last), DepthwiseConv2dNative and its fused forms, MaxPool and AvgPool,
 * NHWC with TensorFlow's windows (window.h); the attributes, checks and shapes are conv_logic.h's,
 * which the CPU kernels call too. A fused batch
 * norm's per-channel scale and shift are made on the device from its inputs (scale / sqrt(variance +
 * epsilon), offset - mean * that), as the CPU kernel makes them; an addend that only broadcasts
 * against the output is added after the convolution, as the CPU kernel does. float32 and float64 run
 * on the device; int32 and float16 run the CPU kernel on the host. LRN's window sum over depth runs as
 * a convolution too; Dilation2D and MaxPoolWithArgmax run the math's window_max. */
#include <stdlib.h>
#include <string.h>

#include "conv_logic.h"
#include "../math/cwise_logic.h"
#include "../device_kernel.h"
#include "dilation_logic.h"
#include "../math/reduce_logic.h"

/* The attributes (conv_logic.h), and LeakyRelu's slope as the math's epilogue takes it. For a filter
 * the optimiser marked constant, the slot where the math keeps its own layout of it
 * (tfd_dm_conv.packed_filter), and the math and device to release it through with the kernel. */
typedef struct conv_params {
  tfd_conv_attrs a;
  float alpha;
  void *packed_filter; /* NULL until the math fills it; packed_math NULL: no slot (filter not constant) */
  const tfd_device_math *packed_math;
  tfd_device *packed_device;
} conv_params;

static void conv_cleanup(tfd_kernel *k) {
  conv_params *p = k->dk_params;
  if (p && p->packed_filter) p->packed_math->release_packed(p->packed_device, p->packed_filter);
}

/* The plain ops on dtypes other than float32: k_conv_generic.c's checks, then float64 (the math's
 * other dtype) alone, as the setup sends the rest to the CPU kernel. */
static bool check_generic(tfd_kernel_context *c, tfd_kernel *k, const tfd_tensor *x, const tfd_tensor *f) {
  if (!tfd_conv_check_generic(c, k, x, f)) return false;
  if (tfd_tensor_dtype(x) == TFD_FLOAT64) return true;
  tfd_kernel_fail(c, k, TFD_UNIMPLEMENTED, "no kernel for dtype %s", tfd_dtype_name(tfd_tensor_dtype(x)));
  return false;
}

/* The fused batch norm as one multiply and one add per channel: bn [2, o] = scale / sqrt(variance +
 * epsilon), then offset - mean * that (k_conv.c's fused_args, in the same float operations). */
static tfd_tensor *batch_norm_factors(tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m, const conv_params *p,
                                      int64_t o) {
  int64_t dims[2] = {2, o};
  tfd_tensor *bn = tfd_dk_alloc_device(c, k, TFD_FLOAT32, dims, 2);
  float eps = (float)p->a.f.epsilon;
  tfd_tensor *e = bn ? tfd_dk_scalar(c, k, m, TFD_FLOAT32, &eps) : NULL;
  bool ok = e != NULL;
  if (ok && o > 0) {
    float *factor = tfd_tensor_data(bn), *shift = factor + o;
    const void *scale = tfd_tensor_const_data(c->inputs[2]), *offset = tfd_tensor_const_data(c->inputs[3]),
               *mean = tfd_tensor_const_data(c->inputs[4]), *var = tfd_tensor_const_data(c->inputs[5]);
    tfd_status st = TFD_STATUS_INIT;
    ok = tfd_dk_binary_flat(k, c, m, TFD_DM_ADD, TFD_FLOAT32, var, tfd_tensor_const_data(e), true, shift, o) &&
         tfd_dk_ok(k, c, m->unary(c->device, TFD_DM_SQRT, TFD_FLOAT32, shift, shift, o, 0, &st), &st) &&
         tfd_dk_binary_flat(k, c, m, TFD_DM_DIV, TFD_FLOAT32, scale, shift, false, factor, o) &&
         tfd_dk_binary_flat(k, c, m, TFD_DM_MUL, TFD_FLOAT32, mean, factor, false, shift, o) &&
         tfd_dk_binary_flat(k, c, m, TFD_DM_SUB, TFD_FLOAT32, offset, shift, false, shift, o);
  }
  tfd_tensor_unref(e);
  if (!ok) {
    tfd_tensor_unref(bn);
    return NULL;
  }
  return bn;
}

/* The fused inputs, checked (conv_logic.h), then pointed to in q's epilogue fields; *bn holds the
 * batch norm's factors for the call. */
static bool fused_args(tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m, const conv_params *p,
                       const tfd_conv_dims *g, tfd_dm_conv *q, tfd_tensor **bn) {
  int64_t out[4] = {g->n, g->oh, g->ow, g->o};
  if (!tfd_conv_check_fused(c, k, &p->a.f, out, &q->prelu_n)) return false;
  if (p->a.f.bias) q->bias = tfd_tensor_const_data(c->inputs[2]);
  if (p->a.f.batch_norm) {
    if (!(*bn = batch_norm_factors(k, c, m, p, g->o))) return false;
    q->scale = tfd_tensor_const_data(*bn);
    q->shift = (const float *)q->scale + g->o;
  }
  if (p->a.f.prelu) q->prelu = tfd_tensor_const_data(c->inputs[c->num_inputs - 1]);
  return true;
}

static bool run_conv(tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m, const tfd_dm_conv *q) {
  if (q->n * q->oh * q->ow == 0 || q->o == 0) return true;
  tfd_status st = TFD_STATUS_INIT;
  return tfd_dk_ok(k, c, m->conv2d(c->device, q, &st), &st);
}

/* A fused Add whose operand only broadcasts against the convolution's output: the convolution (bias
 * or batch norm applied) into a temporary, then temporary + operand broadcast into the output, then
 * Prelu or the activation there (k_conv.c's conv_add_broadcast). */
static void conv_add_broadcast(tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m, const conv_params *p,
                               tfd_dm_conv q) {
  tfd_tensor *a = c->inputs[3];
  tfd_shape sc = {.ndims = 4, .dims = {q.n, q.oh, q.ow, q.o}}, sa, so;
  if (!tfd_conv_addend_broadcast(c, k, &sc, &sa, &so)) return;
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
  if (ok && !p->a.f.prelu && p->a.f.act && n > 0) {
    tfd_dm_unary act = p->a.f.act == TFD_ACT_RELU         ? TFD_DM_RELU
                       : p->a.f.act == TFD_ACT_RELU6      ? TFD_DM_RELU6
                       : p->a.f.act == TFD_ACT_ELU        ? TFD_DM_ELU
                       : p->a.f.act == TFD_ACT_LEAKY_RELU ? TFD_DM_LEAKY_RELU
                       : p->a.f.act == TFD_ACT_TANH       ? TFD_DM_TANH
                                                        : TFD_DM_SIGMOID;
    ok = tfd_dk_ok(k, c, m->unary(c->device, act, TFD_FLOAT32, tfd_tensor_const_data(y), tfd_tensor_data(y), n, p->alpha, &st),
                   &st);
  } else if (ok && p->a.f.prelu) {
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

static void k_conv(tfd_kernel *k, tfd_kernel_context *c) {
  const conv_params *p = k->dk_params;
  const tfd_device_math *m = tfd_dk_math(k, c);
  if (!m) return;
  tfd_tensor *x = c->inputs[0], *f = c->inputs[1];
  bool depthwise = p->a.kind == TFD_CONV_DEPTHWISE;
  bool generic = !p->a.fused && (tfd_tensor_dtype(x) != TFD_FLOAT32 || tfd_tensor_dtype(f) != TFD_FLOAT32);
  if (generic ? !check_generic(c, k, x, f)
              : (!tfd_conv_check_nhwc(c, k, x, "input") || !tfd_conv_check_nhwc(c, k, f, "filter")))
    return;
  tfd_conv_dims j;
  if (!tfd_conv_geometry(c, k, &p->a.win, depthwise, &j)) return;
  tfd_dm_conv q = {tfd_tensor_dtype(x), tfd_tensor_const_data(x), tfd_tensor_const_data(f), NULL, j.n, j.h, j.w, j.c,
                   j.kh, j.kw, j.o, j.oh, j.ow, {p->a.win.stride[0], p->a.win.stride[1]},
                   {p->a.win.dilation[0], p->a.win.dilation[1]}, {j.pad_t, j.pad_l},
                   {tfd_window_pad_after(&p->a.win, 0, j.h, j.kh, j.oh, j.pad_t),
                    tfd_window_pad_after(&p->a.win, 1, j.w, j.kw, j.ow, j.pad_l)},
                   depthwise, false, NULL, NULL, NULL, NULL, NULL, 0, p->a.f.prelu ? TFD_ACT_NONE : p->a.f.act, p->alpha,
                   p->packed_math ? &((conv_params *)k->dk_params)->packed_filter : NULL};
  tfd_tensor *bn = NULL;
  if (!fused_args(k, c, m, p, &j, &q, &bn)) {
    tfd_tensor_unref(bn);
    return;
  }
  int64_t dims[4] = {j.n, j.oh, j.ow, j.o};
  tfd_tensor *y = NULL;
  if (p->a.f.add) {
    if (!tfd_conv_addend_fits(c, dims)) {
      conv_add_broadcast(k, c, m, p, q);
      tfd_tensor_unref(bn);
      return;
    }
    /* A residual add writes into its addend's buffer when nothing else reads it. */
    y = tfd_kernel_forward_input(c, 3, TFD_FLOAT32, dims, 4);
    q.addend = tfd_tensor_const_data(y ? y : c->inputs[3]);
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

static void k_pool(tfd_kernel *k, tfd_kernel_context *c) {
  const conv_params *p = k->dk_params;
  const tfd_device_math *m = tfd_dk_math(k, c);
  if (!m) return;
  tfd_tensor *x = c->inputs[0];
  if (tfd_tensor_dtype(x) != TFD_FLOAT32 ? !check_generic(c, k, x, NULL) : !tfd_conv_check_nhwc(c, k, x, "input")) return;
  tfd_conv_dims j;
  if (!tfd_pool_geometry(c, k, &p->a.win, p->a.ksize, &j)) return;
  int64_t dims[4] = {j.n, j.oh, j.ow, j.c};
  tfd_tensor *y = tfd_dk_alloc(c, k, tfd_tensor_dtype(x), dims, 4);
  if (!y) return;
  bool ok = true;
  if (j.n * j.oh > 0 && j.ow > 0 && j.c > 0) {
    tfd_dm_pool q = {tfd_tensor_dtype(x), p->a.kind == TFD_CONV_MAXPOOL, tfd_tensor_const_data(x), tfd_tensor_data(y), j.n,
                     j.h, j.w, j.c, j.kh, j.kw, j.oh, j.ow, {p->a.win.stride[0], p->a.win.stride[1]}, {j.pad_t, j.pad_l}};
    tfd_status st = TFD_STATUS_INIT;
    ok = tfd_dk_ok(k, c, m->pool(c->device, &q, &st), &st);
  }
  if (ok) c->outputs[0] = y;
  else tfd_tensor_unref(y);
}

/* ---- LRN: x / (bias + alpha * sum)^beta, the sum of squares over [d - r, d + r] of each pixel's
 * depth made as a convolution: the squares seen as a [1, N*H*W, D, 1] image, a [1, 2r + 1] filter of
 * ones, r zeros of padding either side; then the scalar steps, in float32 (the CPU kernel computes in
 * double, so the last bits may differ). ---- */
static void k_lrn(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_device_math *m = tfd_dk_math(k, c);
  if (!m || !tfd_lrn_check(c, k)) return;
  const tfd_lrn_params *lp = k->state;
  tfd_tensor *x = c->inputs[0], *sq = NULL, *sum = NULL, *ones = NULL, *sc[3] = {NULL};
  int64_t n = tfd_tensor_numel(x), depth = tfd_tensor_dim(x, 3), r = k->index, taps = 2 * r + 1, dims[4];
  for (int d = 0; d < 4; d++) dims[d] = tfd_tensor_dim(x, d);
  tfd_tensor *y = tfd_dk_alloc(c, k, TFD_FLOAT32, dims, 4);
  tfd_status st = TFD_STATUS_INIT;
  bool ok = y != NULL;
  if (ok && n > 0) {
    const float one = 1.0f, v[3] = {(float)lp->alpha, (float)lp->bias, (float)lp->beta};
    ok = (sq = tfd_dk_alloc_device(c, k, TFD_FLOAT32, &n, 1)) && (sum = tfd_dk_alloc_device(c, k, TFD_FLOAT32, &n, 1)) &&
         (ones = tfd_dk_alloc_device(c, k, TFD_FLOAT32, &taps, 1)) &&
         tfd_dk_ok(k, c, m->fill(c->device, sizeof one, &one, tfd_tensor_data(ones), taps, &st), &st) &&
         tfd_dk_ok(k, c, m->unary(c->device, TFD_DM_SQUARE, TFD_FLOAT32, tfd_tensor_const_data(x), tfd_tensor_data(sq), n,
                                  0.0f, &st), &st);
    for (int i = 0; ok && i < 3; i++) ok = (sc[i] = tfd_dk_scalar(c, k, m, TFD_FLOAT32, &v[i])) != NULL;
    tfd_dm_conv q = {.dtype = TFD_FLOAT32, .x = ok ? tfd_tensor_const_data(sq) : NULL,
                     .filter = ok ? tfd_tensor_const_data(ones) : NULL, .y = ok ? tfd_tensor_data(sum) : NULL,
                     .n = 1, .h = n / depth, .w = depth, .c = 1, .kh = 1, .kw = taps, .o = 1, .oh = n / depth, .ow = depth,
                     .stride = {1, 1}, .dilation = {1, 1}, .pad_before = {0, r}, .pad_after = {0, r}};
    void *s = ok ? tfd_tensor_data(sum) : NULL;
    ok = ok && run_conv(k, c, m, &q) &&
         tfd_dk_binary_flat(k, c, m, TFD_DM_MUL, TFD_FLOAT32, s, tfd_tensor_const_data(sc[0]), true, s, n) &&
         tfd_dk_binary_flat(k, c, m, TFD_DM_ADD, TFD_FLOAT32, s, tfd_tensor_const_data(sc[1]), true, s, n) &&
         tfd_dk_binary_flat(k, c, m, TFD_DM_POW, TFD_FLOAT32, s, tfd_tensor_const_data(sc[2]), true, s, n) &&
         tfd_dk_binary_flat(k, c, m, TFD_DM_DIV, TFD_FLOAT32, tfd_tensor_const_data(x), s, false, tfd_tensor_data(y), n);
  }
  tfd_tensor_unref(sq), tfd_tensor_unref(sum), tfd_tensor_unref(ones);
  for (int i = 0; i < 3; i++) tfd_tensor_unref(sc[i]);
  if (ok) c->outputs[0] = y;
  else tfd_tensor_unref(y);
}

/* ---- Dilation2D and MaxPoolWithArgmax: the CPU kernel's checks and geometry (dilation_logic.h),
 * then the math's window_max over the device tensors; int32, uint8 and float16 on host copies. ---- */
static void k_window_max(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_device_math *m = tfd_dk_math(k, c);
  bool dil = c->num_inputs == 2;
  tfd_window_geometry g;
  if (!m || !(dil ? tfd_dilation_check(c, k, &g) : tfd_argmax_pool_check(c, k, &g))) return;
  tfd_tensor *x = c->inputs[0];
  int64_t dims[4] = {g.n, g.oh, g.ow, g.c};
  tfd_tensor *y = tfd_dk_alloc(c, k, tfd_tensor_dtype(x), dims, 4), *a = NULL;
  if (!y || (!dil && !(a = tfd_dk_alloc(c, k, TFD_INT64, dims, 4)))) {
    tfd_tensor_unref(y);
    return;
  }
  tfd_dm_window_max q = {.dtype = tfd_tensor_dtype(x), .x = tfd_tensor_const_data(x),
                         .filter = dil ? tfd_tensor_const_data(c->inputs[1]) : NULL, .y = tfd_tensor_data(y),
                         .argmax = a ? tfd_tensor_data(a) : NULL, .n = g.n, .h = g.h, .w = g.w, .c = g.c, .kh = g.kh,
                         .kw = g.kw, .oh = g.oh, .ow = g.ow, .stride = {g.stride[0], g.stride[1]},
                         .rate = {g.rate[0], g.rate[1]}, .pad_before = {g.pad_t, g.pad_l}, .with_batch = g.with_batch};
  tfd_status st = TFD_STATUS_INIT;
  if (tfd_tensor_numel(y) > 0 && !tfd_dk_ok(k, c, m->window_max(c->device, &q, &st), &st)) {
    tfd_tensor_unref(y);
    tfd_tensor_unref(a);
    return;
  }
  c->outputs[0] = y;
  if (a) c->outputs[1] = a;
}

tfd_code tfd_dk_setup_window_max(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  return tfd_dk_setup_either(k, init, tfd_setup_dilation, tfd_dk_arith_dtype(k->T), k_window_max, st);
}

tfd_code tfd_dk_setup_lrn(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  return tfd_dk_setup_either(k, init, tfd_setup_count_norm, k->T == TFD_FLOAT32, k_lrn, st);
}

tfd_code tfd_dk_setup_conv(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  const char *op = init->op->name;
  tfd_conv_kind kind = tfd_conv_kind_of(op);
  /* The math convolves and pools float32 and float64; the CPU kernel takes the rest on the host. */
  if (k->T != TFD_FLOAT32 && !(k->T == TFD_FLOAT64 && !tfd_conv_op_fused(op)))
    return tfd_dk_setup_on_host(k, init, tfd_setup_conv, st);
  conv_params *p = calloc(1, sizeof *p);
  if (!p) return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
  k->dk_params = p;
  if (tfd_conv_attrs_read(init->node, op, init->num_inputs, &p->a, st) != TFD_OK) return tfd_status_code(st);
  p->alpha = (float)p->a.alpha;
  /* A kernel runs on the device it was made for: the math that fills the slot is that device's. */
  if (tfd_attr_bool(init->node, TFD_WEIGHTS_CONSTANT_ATTR, false) && init->device->math &&
      init->device->math->release_packed) {
    p->packed_math = init->device->math;
    p->packed_device = init->device;
  }
  k->compute = kind == TFD_CONV_MAXPOOL || kind == TFD_CONV_AVGPOOL ? k_pool : k_conv;
  k->cleanup = conv_cleanup;
  return TFD_OK;
}
