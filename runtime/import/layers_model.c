/* TensorFlow.js layers models (a Keras topology: model.to_json() in modelTopology) turned into a
 * GraphDef at load, so that a layers model runs as the graph TensorFlow.js would build from it.
 *
 * Each layer call becomes a few nodes named under the layer ("dense/MatMul", "dense/BiasAdd") and an
 * Identity named after the layer (a second call of a shared layer: "<layer>_<k>"), which later layers
 * read and the signature names. A weight becomes a Const named as the weights manifest names it
 * ("<layer>/<weight>", e.g. "dense/kernel") with no value yet: the manifest's reader fills it, as it
 * fills a graph model's. Inference semantics are Keras's: dropout and noise layers pass their input
 * through, batch normalisation uses the moving statistics. Recurrent layers are loops built by
 * layers_recurrent.c; the helpers both use are in layers_build.c. What is not here (channels_first,
 * ConvLSTM2D, ...) is UNIMPLEMENTED naming the layer and what it asked for. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layers_internal.h"
#include "layers_model.h"

/* Conv2D / DepthwiseConv2D / SeparableConv2D / Conv1D and the pools: strides, padding, dilations. */
typedef struct window {
  int64_t k[2], s[2], d[2];
  const char *padding;
} window;

static bool window_of(lctx *c, const call *l, int n, bool pool, window *w) {
  const cJSON *cfg = l->cfg;
  const char *fmt = lm_str(cfg, "data_format", "channels_last");
  if (strcmp(fmt, "channels_last") != 0) return lm_unsupported(c, l, "data_format channels_first") != NULL;
  w->k[1] = w->s[1] = w->d[1] = 1;
  if (!lm_ints(lm_get2(cfg, pool ? "pool_size" : "kernel_size", "poolSize"), n, w->k)) w->k[0] = w->k[1] = pool ? 2 : 1;
  if (!lm_ints(lm_get(cfg, "strides"), n, w->s)) memcpy(w->s, pool ? w->k : (int64_t[2]){1, 1}, sizeof w->s);
  if (!lm_ints(lm_get(cfg, "dilation_rate"), n, w->d)) w->d[0] = w->d[1] = 1;
  const char *pad = lm_str(cfg, "padding", "valid");
  if (strcmp(pad, "valid") != 0 && strcmp(pad, "same") != 0)
    return lm_unsupported(c, l, "padding other than valid and same") != NULL;
  w->padding = strcmp(pad, "same") == 0 ? "SAME" : "VALID";
  return true;
}

static bool conv_attrs(lctx *c, tfd_node_def *n, const window *w, bool pool) {
  int64_t strides[4] = {1, w->s[0], w->s[1], 1}, dil[4] = {1, w->d[0], w->d[1], 1}, ksize[4] = {1, w->k[0], w->k[1], 1};
  return lm_set_ints(c, n, "strides", strides, 4) &&
         lm_set(c, n, "padding", (tfd_attr_value){.type = TFD_ATTR_STRING, .s = (char *)w->padding}) &&
         (pool ? lm_set_ints(c, n, "ksize", ksize, 4) : lm_set_ints(c, n, "dilations", dil, 4));
}

/* x -> op(x, filter) with the window's attrs; x consumed. */
static char *conv_node(lctx *c, const call *l, const char *op, char *x, const char *filter, const window *w) {
  char *out = x ? lm_fresh(c, l->prefix, op) : NULL;
  tfd_node_def *n = out ? lm_node(c, out, op, x, filter) : NULL;
  if (!n || !conv_attrs(c, n, w, filter == NULL)) free(out), out = NULL;
  free(x);
  return out;
}

static char *bias_act(lctx *c, const call *l, char *y) {
  if (y && lm_flag(l->cfg, "use_bias", true)) {
    char *b = lm_weight(c, l->layer, "bias");
    y = b ? lm_then(c, l->prefix, "BiasAdd", y, b) : (free(y), NULL);
    free(b);
  }
  return lm_activation(c, l->prefix, y, lm_str(l->cfg, "activation", "linear"));
}

/* Conv1D and the 1D pools run as their 2D forms on [N, 1, W, C]. */
static char *expand(lctx *c, const call *l, const char *x, int axis) {
  char *a = lm_int_const(c, l->prefix, (int64_t[]){axis}, 1, NULL, 0);
  char *y = a ? lm_op2(c, l->prefix, "ExpandDims", x, a) : NULL;
  free(a);
  return y;
}
static char *squeeze(lctx *c, const call *l, char *x, int axis) {
  char *y = x ? lm_fresh(c, l->prefix, "Squeeze") : NULL;
  tfd_node_def *n = y ? lm_node(c, y, "Squeeze", x, NULL) : NULL;
  if (!n || !lm_set_ints(c, n, "squeeze_dims", (int64_t[]){axis}, 1)) free(y), y = NULL;
  free(x);
  return y;
}

static char *conv_layer(lctx *c, const call *l) {
  bool one_d = strstr(l->cls, "1D") != NULL, depthwise = strcmp(l->cls, "DepthwiseConv2D") == 0;
  bool separable = strncmp(l->cls, "SeparableConv", 13) == 0;
  window w;
  if (!window_of(c, l, one_d ? 1 : 2, false, &w)) return NULL;
  if (lm_num(l->cfg, "groups", 1) != 1) return lm_unsupported(c, l, "groups other than 1");
  if (one_d) { /* [k] -> [1, k] windows on [N, 1, W, C] */
    w.k[1] = w.k[0], w.s[1] = w.s[0], w.d[1] = w.d[0];
    w.k[0] = w.s[0] = w.d[0] = 1;
  }
  char *x = one_d ? expand(c, l, l->in[0], 1) : tfd_format("%s", l->in[0]);
  char *k = lm_weight(c, l->layer, depthwise || separable ? "depthwise_kernel" : "kernel");
  if (one_d && k) {
    char *k2 = expand(c, l, k, 0);
    free(k), k = k2;
  }
  char *y = k ? conv_node(c, l, depthwise || separable ? "DepthwiseConv2dNative" : "Conv2D", x, k, &w) : (free(x), NULL);
  free(k);
  if (y && separable) {
    char *p = lm_weight(c, l->layer, "pointwise_kernel");
    window one = {{1, 1}, {1, 1}, {1, 1}, "VALID"};
    y = p ? conv_node(c, l, "Conv2D", y, p, &one) : (free(y), NULL);
    free(p);
  }
  if (one_d) y = squeeze(c, l, y, 1);
  return bias_act(c, l, y);
}

static char *pool_layer(lctx *c, const call *l) {
  bool one_d = strstr(l->cls, "1D") != NULL, max = strncmp(l->cls, "Max", 3) == 0;
  window w;
  if (!window_of(c, l, one_d ? 1 : 2, true, &w)) return NULL;
  if (one_d) w.k[1] = w.k[0], w.s[1] = w.s[0], w.k[0] = w.s[0] = 1;
  char *x = one_d ? expand(c, l, l->in[0], 1) : tfd_format("%s", l->in[0]);
  char *y = conv_node(c, l, max ? "MaxPool" : "AvgPool", x, NULL, &w);
  return one_d ? squeeze(c, l, y, 1) : y;
}

/* Conv3D and the 3D pools (channels_last: NDHWC), as Conv3D / MaxPool3D / AvgPool3D. */
static char *layer_3d(lctx *c, const call *l, bool conv) {
  const cJSON *cfg = l->cfg;
  if (strcmp(lm_str(cfg, "data_format", "channels_last"), "channels_last") != 0)
    return lm_unsupported(c, l, "data_format channels_first");
  int64_t k[3], st[3], d[3];
  bool pool = !conv, max = strncmp(l->cls, "Max", 3) == 0;
  if (!lm_ints(lm_get2(cfg, pool ? "pool_size" : "kernel_size", "poolSize"), 3, k)) k[0] = k[1] = k[2] = pool ? 2 : 1;
  if (!lm_ints(lm_get(cfg, "strides"), 3, st)) memcpy(st, pool ? k : (int64_t[3]){1, 1, 1}, sizeof st);
  if (!lm_ints(lm_get(cfg, "dilation_rate"), 3, d)) d[0] = d[1] = d[2] = 1;
  const char *pad = lm_str(cfg, "padding", "valid");
  if (strcmp(pad, "valid") != 0 && strcmp(pad, "same") != 0) return lm_unsupported(c, l, "padding other than valid and same");
  if (conv && lm_num(cfg, "groups", 1) != 1) return lm_unsupported(c, l, "groups other than 1");
  char *kern = conv ? lm_weight(c, l->layer, "kernel") : NULL;
  const char *op = conv ? "Conv3D" : max ? "MaxPool3D" : "AvgPool3D";
  char *y = !conv || kern ? lm_op2(c, l->prefix, op, l->in[0], kern) : NULL;
  tfd_node_def *n = y ? tfd_graph_def_find(c->g, y) : NULL;
  int64_t strides[5] = {1, st[0], st[1], st[2], 1}, win[5] = {1, k[0], k[1], k[2], 1}, dil[5] = {1, d[0], d[1], d[2], 1};
  bool ok = n && lm_set_ints(c, n, "strides", strides, 5) &&
            lm_set(c, n, "padding", (tfd_attr_value){.type = TFD_ATTR_STRING, .s = strcmp(pad, "same") == 0 ? "SAME" : "VALID"}) &&
            (conv ? lm_set_ints(c, n, "dilations", dil, 5) : lm_set_ints(c, n, "ksize", win, 5));
  free(kern);
  if (!ok) free(y), y = NULL;
  return conv ? bias_act(c, l, y) : y;
}

static char *global_pool(lctx *c, const call *l) {
  int64_t axes[3] = {1, 2, 3};
  int n = strstr(l->cls, "1D") ? 1 : strstr(l->cls, "3D") ? 3 : 2;
  if (strcmp(lm_str(l->cfg, "data_format", "channels_last"), "channels_last") != 0)
    return lm_unsupported(c, l, "data_format channels_first");
  char *a = lm_int_const(c, l->prefix, axes, n, (int64_t[]){n}, 1);
  char *y = a ? lm_op2(c, l->prefix, strstr(l->cls, "Max") ? "Max" : "Mean", l->in[0], a) : NULL;
  free(a);
  tfd_node_def *nd = y ? tfd_graph_def_find(c->g, y) : NULL;
  if (y && !lm_set(c, nd, "keep_dims", (tfd_attr_value){.type = TFD_ATTR_BOOL, .b = lm_flag(l->cfg, "keepdims", false)}))
    free(y), y = NULL;
  return y;
}

static char *dense_layer(lctx *c, const call *l) {
  char *k = lm_weight(c, l->layer, "kernel");
  int rank = lm_rank_of(c, l->in[0]);
  char *y = k ? lm_op2(c, l->prefix, rank > 2 ? "BatchMatMulV2" : "MatMul", l->in[0], k) : NULL;
  free(k);
  return bias_act(c, l, y);
}

/* Conv2DTranspose: Conv2DBackpropInput to Keras's output size, read from the input's shape at run time:
 * [N, H s + max(k - s, 0), ...] for valid padding, [N, H s, ...] for same (no output_padding). */
static char *conv_transpose(lctx *c, const call *l) {
  window w;
  if (!window_of(c, l, 2, false, &w)) return NULL;
  if (w.d[0] != 1 || w.d[1] != 1) return lm_unsupported(c, l, "a dilation_rate other than 1");
  const cJSON *op = lm_get(l->cfg, "output_padding");
  if (op && !cJSON_IsNull(op)) return lm_unsupported(c, l, "output_padding");
  int64_t filters = lm_int_of(lm_num(l->cfg, "filters", 0)), two = 2, one = 1;
  bool valid = strcmp(w.padding, "VALID") == 0;
  int64_t extra[2] = {valid && w.k[0] > w.s[0] ? w.k[0] - w.s[0] : 0, valid && w.k[1] > w.s[1] ? w.k[1] - w.s[1] : 0};
  char *shape = lm_op2(c, l->prefix, "Shape", l->in[0], NULL);
  char *n = shape ? lm_slice1(c, l->prefix, shape, 0, 1, false) : NULL;
  char *hw = n ? lm_slice1(c, l->prefix, shape, 1, 3, false) : NULL;
  char *s = lm_int_const(c, l->prefix, w.s, 2, &two, 1), *e = lm_int_const(c, l->prefix, extra, 2, &two, 1);
  char *f = lm_int_const(c, l->prefix, &filters, 1, &one, 1), *axis = lm_int_const(c, l->prefix, (int64_t[]){0}, 1, NULL, 0);
  char *size = hw && s && e ? lm_then(c, l->prefix, "AddV2", lm_op2(c, l->prefix, "Mul", hw, s), e) : NULL;
  char *sizes = size && f && axis ? lm_opn(c, l->prefix, "ConcatV2", 4, (const char *[]){n, size, f, axis}) : NULL;
  char *k = sizes && lm_set(c, tfd_graph_def_find(c->g, sizes), "N", (tfd_attr_value){.type = TFD_ATTR_INT, .i = 3})
                ? lm_weight(c, l->layer, "kernel")
                : NULL;
  char *y = k ? lm_opn(c, l->prefix, "Conv2DBackpropInput", 3, (const char *[]){sizes, k, l->in[0]}) : NULL;
  if (y && !conv_attrs(c, tfd_graph_def_find(c->g, y), &w, false)) free(y), y = NULL;
  free(shape), free(n), free(hw), free(s), free(e), free(f), free(axis), free(size), free(sizes), free(k);
  return bias_act(c, l, y);
}

/* x / sqrt(max(sum(x^2, axis), 1e-12)), Keras's l2_normalize; x borrowed. */
static char *l2_normalize(lctx *c, const call *l, const char *x, int64_t axis) {
  char *a = lm_int_const(c, l->prefix, &axis, 1, NULL, 0), *eps = lm_float_const(c, l->prefix, 1e-12f);
  char *ss = a && eps ? lm_then(c, l->prefix, "Sum", lm_op2(c, l->prefix, "Square", x, NULL), a) : NULL;
  bool ok = ss && lm_set(c, tfd_graph_def_find(c->g, ss), "keep_dims", (tfd_attr_value){.type = TFD_ATTR_BOOL, .b = true});
  char *inv = ok ? lm_then(c, l->prefix, "Rsqrt", lm_op2(c, l->prefix, "Maximum", ss, eps), NULL) : NULL;
  char *y = inv ? lm_op2(c, l->prefix, "Mul", x, inv) : NULL;
  free(a), free(eps), free(ss), free(inv);
  return y;
}

/* Dot: Keras's batch_dot over the given axes of two inputs of rank 2 or 3 (the batch is axis 0). */
static char *dot_layer(lctx *c, const call *l) {
  int64_t ax[2];
  if (l->n_in != 2) return lm_unsupported(c, l, "a Dot of other than two inputs");
  if (!lm_ints(lm_get(l->cfg, "axes"), 2, ax)) return lm_unsupported(c, l, "axes that are not an int or two ints");
  int ra = lm_rank_of(c, l->in[0]), rb = lm_rank_of(c, l->in[1]);
  if (ra < 2 || ra > 3 || rb != ra) return lm_unsupported(c, l, "inputs other than two of rank 2 or two of rank 3");
  for (int i = 0; i < 2; i++) {
    if (ax[i] < 0) ax[i] += ra;
    if (ax[i] < 1 || ax[i] >= ra) return lm_unsupported(c, l, "an axis outside the inputs' non-batch axes");
  }
  char *a = tfd_format("%s", l->in[0]), *b = tfd_format("%s", l->in[1]);
  if (a && b && lm_flag(l->cfg, "normalize", false)) {
    char *na = l2_normalize(c, l, a, ax[0]), *nb = l2_normalize(c, l, b, ax[1]);
    free(a), free(b);
    a = na, b = nb;
  }
  char *y = NULL;
  if (a && b && ra == 2) { /* [N, D] . [N, D] -> [N, 1] */
    char *one = lm_int_const(c, l->prefix, (int64_t[]){1}, 1, NULL, 0);
    y = one ? lm_then(c, l->prefix, "Sum", lm_op2(c, l->prefix, "Mul", a, b), one) : NULL;
    if (y && !lm_set(c, tfd_graph_def_find(c->g, y), "keep_dims", (tfd_attr_value){.type = TFD_ATTR_BOOL, .b = true}))
      free(y), y = NULL;
    free(one);
  } else if (a && b) { /* [N, T, D] x [N, D, S] with the contracted axes moved by adj_x / adj_y */
    y = lm_op2(c, l->prefix, "BatchMatMulV2", a, b);
    tfd_node_def *n = y ? tfd_graph_def_find(c->g, y) : NULL;
    if (y && (!lm_set(c, n, "adj_x", (tfd_attr_value){.type = TFD_ATTR_BOOL, .b = ax[0] == 1}) ||
              !lm_set(c, n, "adj_y", (tfd_attr_value){.type = TFD_ATTR_BOOL, .b = ax[1] == 2})))
      free(y), y = NULL;
  }
  free(a), free(b);
  return y;
}

/* Rescaling: x * scale + offset. */
static char *rescaling(lctx *c, const call *l) {
  char *k = lm_float_const(c, l->prefix, (float)lm_num(l->cfg, "scale", 1)), *o = lm_float_const(c, l->prefix, (float)lm_num(l->cfg, "offset", 0));
  char *y = k && o ? lm_then(c, l->prefix, "AddV2", lm_op2(c, l->prefix, "Mul", l->in[0], k), o) : NULL;
  free(k), free(o);
  return y;
}

/* Keras's inference formula, (x - mean) * gamma / sqrt(var + eps) + beta, written so that the graph
 * optimiser folds everything but one Mul and one AddV2 into constants. */
static char *batch_norm(lctx *c, const call *l) {
  const cJSON *axis = lm_get(l->cfg, "axis");
  int rank = lm_rank_of(c, l->in[0]);
  int64_t ax = -1;
  if (cJSON_IsArray(axis) && cJSON_GetArraySize(axis) == 1) axis = cJSON_GetArrayItem(axis, 0);
  if (cJSON_IsNumber(axis)) ax = lm_int_of(axis->valuedouble);
  if (ax != -1 && !(rank > 0 && ax == rank - 1)) return lm_unsupported(c, l, "a normalised axis other than the last");
  char *mean = lm_weight(c, l->layer, "moving_mean"), *var = lm_weight(c, l->layer, "moving_variance");
  char *eps = lm_float_const(c, l->prefix, (float)lm_num(l->cfg, "epsilon", 1e-3));
  char *inv = mean && var && eps ? lm_then(c, l->prefix, "Rsqrt", lm_op2(c, l->prefix, "AddV2", var, eps), NULL) : NULL;
  if (inv && lm_flag(l->cfg, "scale", true)) {
    char *gamma = lm_weight(c, l->layer, "gamma");
    inv = gamma ? lm_then(c, l->prefix, "Mul", inv, gamma) : (free(inv), NULL);
    free(gamma);
  }
  char *shift = inv ? lm_then(c, l->prefix, "Neg", lm_op2(c, l->prefix, "Mul", mean, inv), NULL) : NULL;
  if (shift && lm_flag(l->cfg, "center", true)) {
    char *beta = lm_weight(c, l->layer, "beta");
    shift = beta ? lm_then(c, l->prefix, "AddV2", shift, beta) : (free(shift), NULL);
    free(beta);
  }
  char *y = shift ? lm_then(c, l->prefix, "AddV2", lm_op2(c, l->prefix, "Mul", l->in[0], inv), shift) : NULL;
  free(mean), free(var), free(eps), free(inv), free(shift);
  return y;
}

static char *layer_norm(lctx *c, const call *l) {
  const cJSON *axis = lm_get(l->cfg, "axis");
  if (cJSON_IsArray(axis) && cJSON_GetArraySize(axis) == 1) axis = cJSON_GetArrayItem(axis, 0);
  int rank = lm_rank_of(c, l->in[0]);
  if (cJSON_IsNumber(axis) && axis->valuedouble != -1 && !(rank > 0 && axis->valuedouble == rank - 1))
    return lm_unsupported(c, l, "a normalised axis other than the last");
  char *ax = lm_int_const(c, l->prefix, (int64_t[]){-1}, 1, (int64_t[]){1}, 1);
  char *eps = lm_float_const(c, l->prefix, (float)lm_num(l->cfg, "epsilon", 1e-3));
  char *mean = ax ? lm_op2(c, l->prefix, "Mean", l->in[0], ax) : NULL;
  tfd_node_def *mn = mean ? tfd_graph_def_find(c->g, mean) : NULL;
  char *centered = mn && lm_set(c, mn, "keep_dims", (tfd_attr_value){.type = TFD_ATTR_BOOL, .b = true})
                       ? lm_op2(c, l->prefix, "Sub", l->in[0], mean)
                       : NULL;
  char *var = centered ? lm_op2(c, l->prefix, "Mul", centered, centered) : NULL;
  var = var ? lm_then(c, l->prefix, "Mean", var, ax) : NULL;
  tfd_node_def *vn = var ? tfd_graph_def_find(c->g, var) : NULL;
  char *y = vn && lm_set(c, vn, "keep_dims", (tfd_attr_value){.type = TFD_ATTR_BOOL, .b = true})
                ? lm_then(c, l->prefix, "Rsqrt", lm_op2(c, l->prefix, "AddV2", var, eps), NULL)
                : NULL;
  y = y ? lm_then(c, l->prefix, "Mul", y, centered) : NULL;
  if (y && lm_flag(l->cfg, "scale", true)) {
    char *g = lm_weight(c, l->layer, "gamma");
    y = g ? lm_then(c, l->prefix, "Mul", y, g) : (free(y), NULL);
    free(g);
  }
  if (y && lm_flag(l->cfg, "center", true)) {
    char *b = lm_weight(c, l->layer, "beta");
    y = b ? lm_then(c, l->prefix, "AddV2", y, b) : (free(y), NULL);
    free(b);
  }
  free(ax), free(eps), free(mean), free(centered), free(var);
  return y;
}

static char *merge_layer(lctx *c, const call *l) {
  const char *cls = l->cls;
  if (l->n_in < 1) return lm_unsupported(c, l, "a merge of no inputs");
  if (strcmp(cls, "Concatenate") == 0) {
    char *axis = lm_int_const(c, l->prefix, (int64_t[]){lm_int_of(lm_num(l->cfg, "axis", -1))}, 1, NULL, 0);
    char *y = axis ? lm_fresh(c, l->prefix, "ConcatV2") : NULL;
    tfd_node_def *n = y ? lm_node(c, y, "ConcatV2", NULL, NULL) : NULL;
    bool ok = n != NULL;
    for (int i = 0; ok && i < l->n_in; i++) ok = tfd_node_def_add_input(n, l->in[i], c->st) == TFD_OK;
    ok = ok && tfd_node_def_add_input(n, axis, c->st) == TFD_OK &&
         lm_set(c, n, "N", (tfd_attr_value){.type = TFD_ATTR_INT, .i = l->n_in});
    free(axis);
    if (!ok) free(y), y = NULL;
    return y;
  }
  const char *op = strcmp(cls, "Subtract") == 0   ? "Sub"
                   : strcmp(cls, "Multiply") == 0 ? "Mul"
                   : strcmp(cls, "Maximum") == 0  ? "Maximum"
                   : strcmp(cls, "Minimum") == 0  ? "Minimum"
                                                  : "AddV2"; /* Add, Average */
  if (strcmp(cls, "Subtract") == 0 && l->n_in != 2) return lm_unsupported(c, l, "Subtract of other than two inputs");
  char *y = tfd_format("%s", l->in[0]);
  for (int i = 1; y && i < l->n_in; i++) y = lm_then(c, l->prefix, op, y, l->in[i]);
  if (y && strcmp(cls, "Average") == 0) {
    char *k = lm_float_const(c, l->prefix, 1.0f / (float)l->n_in);
    y = k ? lm_then(c, l->prefix, "Mul", y, k) : (free(y), NULL);
    free(k);
  }
  return y;
}

/* Reshape to [-1] + target (Keras's target_shape leaves out the batch). */
static char *reshape_to(lctx *c, const call *l, const char *x, const int64_t *target, int n) {
  int64_t shape[TFD_MAX_DIMS + 1] = {-1};
  if (n > TFD_MAX_DIMS - 1) return lm_unsupported(c, l, "a target shape of that rank");
  for (int i = 0; i < n; i++) shape[i + 1] = target[i];
  char *s = lm_int_const(c, l->prefix, shape, n + 1, (int64_t[]){n + 1}, 1);
  char *y = s ? lm_op2(c, l->prefix, "Reshape", x, s) : NULL;
  free(s);
  return y;
}

/* Flatten: [N, ...] -> [N, -1], the batch read from the input's shape at run time. */
static char *flatten(lctx *c, const call *l) {
  char *shape = lm_op2(c, l->prefix, "Shape", l->in[0], NULL);
  char *b0 = lm_int_const(c, l->prefix, (int64_t[]){0}, 1, (int64_t[]){1}, 1);
  char *b1 = lm_int_const(c, l->prefix, (int64_t[]){1}, 1, (int64_t[]){1}, 1);
  char *batch = shape && b0 && b1 ? lm_fresh(c, l->prefix, "StridedSlice") : NULL;
  tfd_node_def *n = batch ? lm_node(c, batch, "StridedSlice", shape, b0) : NULL;
  bool ok = n && tfd_node_def_add_input(n, b1, c->st) == TFD_OK && tfd_node_def_add_input(n, b1, c->st) == TFD_OK;
  char *rest = ok ? lm_int_const(c, l->prefix, (int64_t[]){-1}, 1, (int64_t[]){1}, 1) : NULL;
  char *axis = rest ? lm_int_const(c, l->prefix, (int64_t[]){0}, 1, NULL, 0) : NULL;
  char *target = axis ? lm_fresh(c, l->prefix, "ConcatV2") : NULL;
  tfd_node_def *t = target ? lm_node(c, target, "ConcatV2", batch, rest) : NULL;
  ok = t && tfd_node_def_add_input(t, axis, c->st) == TFD_OK &&
       lm_set(c, t, "N", (tfd_attr_value){.type = TFD_ATTR_INT, .i = 2});
  char *y = ok ? lm_op2(c, l->prefix, "Reshape", l->in[0], target) : NULL;
  free(shape), free(b0), free(b1), free(batch), free(rest), free(axis), free(target);
  return y;
}

static char *pad_layer(lctx *c, const call *l, bool crop) {
  int n = strstr(l->cls, "1D") ? 1 : 2;
  int64_t p[4] = {0, 0, 0, 0};
  const cJSON *v = lm_get(l->cfg, crop ? "cropping" : "padding");
  bool ok = false;
  if (cJSON_IsNumber(v)) {
    for (int i = 0; i < 2 * n; i++) p[i] = lm_int_of(v->valuedouble);
    ok = true;
  } else if (n == 2 && cJSON_IsArray(v) && cJSON_GetArraySize(v) == 2) { /* [[t, b], [l, r]] or [h, w] */
    ok = true;
    for (int i = 0; ok && i < n; i++) {
      const cJSON *e = cJSON_GetArrayItem(v, i);
      int64_t two[2];
      ok = lm_ints(e, 2, two);
      p[2 * i] = two[0], p[2 * i + 1] = two[1];
    }
  } else if (n == 1 && lm_ints(v, 2, p)) { /* 1D: [left, right] */
    ok = true;
  }
  if (!ok) return lm_unsupported(c, l, crop ? "this cropping" : "this padding");
  if (!crop) {
    int64_t pads[8] = {0}, dims[2] = {n + 2, 2};
    for (int i = 0; i < 2 * n; i++) pads[2 + i] = p[i];
    char *k = lm_int_const(c, l->prefix, pads, 2 * (n + 2), dims, 2);
    char *y = k ? lm_op2(c, l->prefix, "Pad", l->in[0], k) : NULL;
    free(k);
    return y;
  }
  /* StridedSlice from the crop's start to its end (counted from the end: masked when 0). */
  int64_t begin[4] = {0}, end[4] = {0}, stride[4] = {1, 1, 1, 1}, end_mask = 1 | (1 << (n + 1)), dims = n + 2;
  for (int i = 0; i < n; i++) {
    begin[i + 1] = p[2 * i], end[i + 1] = -p[2 * i + 1];
    if (p[2 * i + 1] == 0) end_mask |= 1 << (i + 1);
  }
  char *b = lm_int_const(c, l->prefix, begin, n + 2, &dims, 1), *e = lm_int_const(c, l->prefix, end, n + 2, &dims, 1);
  char *s = lm_int_const(c, l->prefix, stride, n + 2, &dims, 1);
  char *y = b && e && s ? lm_fresh(c, l->prefix, "StridedSlice") : NULL;
  tfd_node_def *nd = y ? lm_node(c, y, "StridedSlice", l->in[0], b) : NULL;
  if (!nd || tfd_node_def_add_input(nd, e, c->st) != TFD_OK || tfd_node_def_add_input(nd, s, c->st) != TFD_OK ||
      !lm_set(c, nd, "begin_mask", (tfd_attr_value){.type = TFD_ATTR_INT, .i = 1 | (1 << (n + 1))}) ||
      !lm_set(c, nd, "end_mask", (tfd_attr_value){.type = TFD_ATTR_INT, .i = end_mask}))
    free(y), y = NULL;
  free(b), free(e), free(s);
  return y;
}

/* UpSampling2D: ResizeNearestNeighbor (Keras's repeat) or ResizeBilinear (half-pixel centres, as
 * tf.image.resize) to the input's size times the factors, read from its shape at run time. */
static char *upsample(lctx *c, const call *l) {
  int64_t f[2], one = 1, two = 2;
  if (!lm_ints(lm_get(l->cfg, "size"), 2, f)) f[0] = f[1] = 2;
  bool bilinear = strcmp(lm_str(l->cfg, "interpolation", "nearest"), "bilinear") == 0;
  if (!bilinear && strcmp(lm_str(l->cfg, "interpolation", "nearest"), "nearest") != 0)
    return lm_unsupported(c, l, "this interpolation");
  char *shape = lm_op2(c, l->prefix, "Shape", l->in[0], NULL);
  char *b = lm_int_const(c, l->prefix, &one, 1, &one, 1), *e = lm_int_const(c, l->prefix, (int64_t[]){3}, 1, &one, 1);
  char *s = lm_int_const(c, l->prefix, &one, 1, &one, 1), *k = lm_int_const(c, l->prefix, f, 2, &two, 1);
  char *hw = shape && b && e && s && k ? lm_fresh(c, l->prefix, "StridedSlice") : NULL;
  tfd_node_def *n = hw ? lm_node(c, hw, "StridedSlice", shape, b) : NULL;
  bool ok = n && tfd_node_def_add_input(n, e, c->st) == TFD_OK && tfd_node_def_add_input(n, s, c->st) == TFD_OK;
  char *size = ok ? lm_op2(c, l->prefix, "Mul", hw, k) : NULL;
  char *y = size ? lm_op2(c, l->prefix, bilinear ? "ResizeBilinear" : "ResizeNearestNeighbor", l->in[0], size) : NULL;
  tfd_node_def *r = y ? tfd_graph_def_find(c->g, y) : NULL;
  if (y && bilinear && !lm_set(c, r, "half_pixel_centers", (tfd_attr_value){.type = TFD_ATTR_BOOL, .b = true}))
    free(y), y = NULL;
  free(shape), free(b), free(e), free(s), free(k), free(hw), free(size);
  return y;
}

static char *relu_family(lctx *c, const call *l) {
  const char *cls = l->cls;
  char *x = tfd_format("%s", l->in[0]);
  if (strcmp(cls, "LeakyReLU") == 0) {
    double alpha = lm_num(l->cfg, "alpha", lm_num(l->cfg, "negative_slope", 0.3));
    char *y = lm_then(c, l->prefix, "LeakyRelu", x, NULL);
    if (y && !lm_set(c, tfd_graph_def_find(c->g, y), "alpha", (tfd_attr_value){.type = TFD_ATTR_FLOAT, .f = (float)alpha}))
      free(y), y = NULL;
    return y;
  }
  if (strcmp(cls, "ELU") == 0) { /* relu(x) + alpha * min(elu(x), 0) */
    double alpha = lm_num(l->cfg, "alpha", 1);
    if (alpha == 1) return lm_then(c, l->prefix, "Elu", x, NULL);
    char *zero = lm_float_const(c, l->prefix, 0), *a = lm_float_const(c, l->prefix, (float)alpha);
    char *neg = lm_then(c, l->prefix, "Mul", lm_then(c, l->prefix, "Minimum", lm_op2(c, l->prefix, "Elu", x, NULL), zero), a);
    char *y = neg ? lm_then(c, l->prefix, "AddV2", lm_op2(c, l->prefix, "Relu", x, NULL), neg) : NULL;
    free(zero), free(a), free(neg), free(x);
    return y;
  }
  if (strcmp(cls, "ThresholdedReLU") == 0) { /* x where x > theta, else 0 */
    char *theta = lm_float_const(c, l->prefix, (float)lm_num(l->cfg, "theta", 1));
    char *mask = theta ? lm_op2(c, l->prefix, "Greater", x, theta) : NULL;
    char *m = mask ? lm_fresh(c, l->prefix, "Cast") : NULL;
    tfd_node_def *n = m ? lm_node(c, m, "Cast", mask, NULL) : NULL;
    char *y = n && lm_set(c, n, "DstT", (tfd_attr_value){.type = TFD_ATTR_TYPE, .dtype = TFD_FLOAT32})
                  ? lm_op2(c, l->prefix, "Mul", x, m)
                  : NULL;
    free(theta), free(mask), free(m), free(x);
    return y;
  }
  if (strcmp(cls, "PReLU") == 0) {
    char *alpha = lm_weight(c, l->layer, "alpha");
    char *y = alpha ? lm_op2(c, l->prefix, "Prelu", x, alpha) : NULL;
    free(alpha), free(x);
    return y;
  }
  if (strcmp(cls, "Softmax") == 0) {
    const cJSON *axis = lm_get(l->cfg, "axis");
    if (cJSON_IsArray(axis) && cJSON_GetArraySize(axis) == 1) axis = cJSON_GetArrayItem(axis, 0);
    if (cJSON_IsNumber(axis) && axis->valuedouble != -1 && axis->valuedouble != lm_rank_of(c, l->in[0]) - 1) {
      free(x);
      return lm_unsupported(c, l, "softmax over an axis other than the last");
    }
    return lm_then(c, l->prefix, "Softmax", x, NULL);
  }
  /* ReLU: max_value, negative_slope, threshold */
  double max = lm_num(l->cfg, "max_value", -1), slope = lm_num(l->cfg, "negative_slope", 0),
         threshold = lm_num(l->cfg, "threshold", 0);
  if (threshold != 0) {
    free(x);
    return lm_unsupported(c, l, "a threshold other than 0");
  }
  if (slope != 0) {
    x = lm_then(c, l->prefix, "LeakyRelu", x, NULL);
    if (x && !lm_set(c, tfd_graph_def_find(c->g, x), "alpha", (tfd_attr_value){.type = TFD_ATTR_FLOAT, .f = (float)slope}))
      free(x), x = NULL;
  } else {
    x = lm_then(c, l->prefix, max == 6 ? "Relu6" : "Relu", x, NULL);
  }
  if (x && max >= 0 && !(max == 6 && slope == 0)) {
    char *m = lm_float_const(c, l->prefix, (float)max);
    x = m ? lm_then(c, l->prefix, "Minimum", x, m) : (free(x), NULL);
    free(m);
  }
  return x;
}

static char *reshape_family(lctx *c, const call *l, int *rank) {
  const char *cls = l->cls;
  if (strcmp(cls, "Flatten") == 0) {
    *rank = 2;
    return flatten(c, l);
  }
  if (strcmp(cls, "Reshape") == 0) {
    const cJSON *t = lm_get2(l->cfg, "target_shape", "targetShape");
    int64_t target[TFD_MAX_DIMS];
    int n = cJSON_IsArray(t) ? cJSON_GetArraySize(t) : -1;
    if (n < 0 || n >= TFD_MAX_DIMS || !lm_ints(t, n, target))
      return lm_unsupported(c, l, "a target_shape that is not a list of sizes");
    *rank = n + 1;
    return reshape_to(c, l, l->in[0], target, n);
  }
  if (strcmp(cls, "Permute") == 0) {
    const cJSON *d = lm_get(l->cfg, "dims");
    int n = cJSON_IsArray(d) ? cJSON_GetArraySize(d) : -1;
    int64_t perm[TFD_MAX_DIMS] = {0};
    if (n < 1 || n >= TFD_MAX_DIMS || !lm_ints(d, n, perm + 1)) return lm_unsupported(c, l, "dims that are not a list of axes");
    char *p = lm_int_const(c, l->prefix, perm, n + 1, (int64_t[]){n + 1}, 1);
    char *y = p ? lm_op2(c, l->prefix, "Transpose", l->in[0], p) : NULL;
    free(p);
    *rank = n + 1;
    return y;
  }
  /* RepeatVector: [N, F] -> [N, n, F] */
  char *e = expand(c, l, l->in[0], 1);
  char *m = lm_int_const(c, l->prefix, (int64_t[]){1, lm_int_of(lm_num(l->cfg, "n", 1)), 1}, 3, (int64_t[]){3}, 1);
  char *y = e && m ? lm_op2(c, l->prefix, "Tile", e, m) : NULL;
  free(e), free(m);
  *rank = 3;
  return y;
}

static char *embedding(lctx *c, const call *l) {
  char *table = lm_weight(c, l->layer, "embeddings");
  char *ids = lm_fresh(c, l->prefix, "Cast");
  tfd_node_def *n = table && ids ? lm_node(c, ids, "Cast", l->in[0], NULL) : NULL;
  char *axis = n && lm_set(c, n, "DstT", (tfd_attr_value){.type = TFD_ATTR_TYPE, .dtype = TFD_INT32})
                   ? lm_int_const(c, l->prefix, (int64_t[]){0}, 1, NULL, 0)
                   : NULL;
  char *y = axis ? lm_fresh(c, l->prefix, "GatherV2") : NULL;
  tfd_node_def *gn = y ? lm_node(c, y, "GatherV2", table, ids) : NULL;
  if (!gn || tfd_node_def_add_input(gn, axis, c->st) != TFD_OK) free(y), y = NULL;
  if (y && lm_flag(l->cfg, "mask_zero", false)) { /* id 0 is padding: the mask later layers see */
    char *zero = lm_int_const(c, l->prefix, (int64_t[]){0}, 1, NULL, 0);
    c->made_mask = zero ? lm_op2(c, l->prefix, "NotEqual", ids, zero) : NULL;
    if (!c->made_mask) free(y), y = NULL;
    free(zero);
  }
  free(table), free(ids), free(axis);
  return y;
}

/* Masking: steps whose features all equal mask_value are zeroed and masked for the layers after. */
static char *masking(lctx *c, const call *l) {
  char *mv = lm_float_const(c, l->prefix, (float)lm_num(l->cfg, "mask_value", 0));
  char *last = lm_int_const(c, l->prefix, (int64_t[]){-1}, 1, NULL, 0);
  char *keep = mv && last ? lm_then(c, l->prefix, "Any", lm_op2(c, l->prefix, "NotEqual", l->in[0], mv), last) : NULL;
  char *k = keep ? lm_then(c, l->prefix, "Cast", lm_op2(c, l->prefix, "ExpandDims", keep, last), NULL) : NULL;
  bool ok = k && lm_set(c, tfd_graph_def_find(c->g, k), "DstT", (tfd_attr_value){.type = TFD_ATTR_TYPE, .dtype = TFD_FLOAT32});
  char *y = ok ? lm_op2(c, l->prefix, "Mul", l->in[0], k) : NULL;
  if (y) c->made_mask = keep, keep = NULL;
  free(mv), free(last), free(keep), free(k);
  return y;
}

/* Whether a layer passes its input's mask on to its output, as Keras's supports_masking layers do; the
 * recurrent ones only when they return sequences. Others drop it. */
static bool passes_mask(const call *l) {
  static const char *const names[] = {"Dense", "Activation", "BatchNormalization", "LayerNormalization", "ReLU",
                                      "LeakyReLU", "ELU", "PReLU", "ThresholdedReLU", "Softmax", "Rescaling",
                                      "TimeDistributed", "Add", "Subtract", "Multiply", "Average", "Maximum",
                                      "Minimum", "Dropout", "SpatialDropout1D", "GaussianNoise", "GaussianDropout",
                                      "AlphaDropout", "ActivityRegularization", "Masking"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    if (strcmp(l->cls, names[i]) == 0) return true;
  if (lm_is_recurrent(l->cls)) {
    const cJSON *inner = lm_get(lm_get(l->cfg, "layer"), "config");
    return lm_flag(inner ? inner : l->cfg, "return_sequences", false);
  }
  return false;
}

/* Layers that pass their input through at inference. */
static bool is_identity(const char *cls) {
  static const char *const names[] = {"Dropout",       "SpatialDropout1D", "SpatialDropout2D", "SpatialDropout3D",
                                      "GaussianNoise", "GaussianDropout",  "AlphaDropout",     "ActivityRegularization"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    if (strcmp(cls, names[i]) == 0) return true;
  return false;
}

static char *call_layer(lctx *c, const call *l, int *rank);

/* TimeDistributed: the wrapped layer over [N * T, ...], reshaped back to [N, T, ...]; the wrapped layer's
 * weights are named under the wrapper, as TensorFlow.js saves them. */
static char *time_distributed(lctx *c, const call *l, int *rank) {
  const cJSON *inner = lm_get(l->cfg, "layer");
  int in_rank = lm_rank_of(c, l->in[0]);
  if (!cJSON_IsObject(lm_get(inner, "config"))) return lm_unsupported(c, l, "a wrapper without a layer config");
  if (in_rank >= 0 && in_rank < 3) return lm_unsupported(c, l, "an input of rank below 3");
  char *shape = lm_op2(c, l->prefix, "Shape", l->in[0], NULL);
  char *nt = shape ? lm_slice1(c, l->prefix, shape, 0, 2, false) : NULL;
  char *rest = nt ? lm_slice1(c, l->prefix, shape, 2, 0, false) : NULL;
  char *minus1 = rest ? lm_int_const(c, l->prefix, (int64_t[]){-1}, 1, (int64_t[]){1}, 1) : NULL;
  char *axis = minus1 ? lm_int_const(c, l->prefix, (int64_t[]){0}, 1, NULL, 0) : NULL;
  char *flat_shape = axis ? lm_opn(c, l->prefix, "ConcatV2", 3, (const char *[]){minus1, rest, axis}) : NULL;
  bool ok = flat_shape && lm_set(c, tfd_graph_def_find(c->g, flat_shape), "N", (tfd_attr_value){.type = TFD_ATTR_INT, .i = 2});
  char *flat = ok ? lm_op2(c, l->prefix, "Reshape", l->in[0], flat_shape) : NULL;
  char *y = NULL;
  if (flat) {
    lm_note_rank(c, flat, in_rank >= 0 ? in_rank - 1 : -1);
    call il = {lm_str(inner, "class_name", ""), l->layer, l->prefix, lm_get(inner, "config"), &flat, 1};
    int inner_rank = -1;
    char *yi = call_layer(c, &il, &inner_rank);
    char *ys = yi ? lm_op2(c, l->prefix, "Shape", yi, NULL) : NULL;
    char *yrest = ys ? lm_slice1(c, l->prefix, ys, 1, 0, false) : NULL;
    char *out_shape = yrest ? lm_opn(c, l->prefix, "ConcatV2", 3, (const char *[]){nt, yrest, axis}) : NULL;
    if (out_shape && lm_set(c, tfd_graph_def_find(c->g, out_shape), "N", (tfd_attr_value){.type = TFD_ATTR_INT, .i = 2}))
      y = lm_op2(c, l->prefix, "Reshape", yi, out_shape);
    *rank = inner_rank >= 0 ? inner_rank + 1 : -1;
    free(yi), free(ys), free(yrest), free(out_shape);
  }
  free(shape), free(nt), free(rest), free(minus1), free(axis), free(flat_shape), free(flat);
  return y;
}

/* The nodes of one layer call; its output (the last op's name, caller frees) and the output's rank. */
static char *call_layer(lctx *c, const call *l, int *rank) {
  const char *cls = l->cls;
  *rank = l->n_in ? lm_rank_of(c, l->in[0]) : -1;
  if (is_identity(cls)) return tfd_format("%s", l->in[0]);
  if (lm_is_recurrent(cls)) return lm_recurrent_layer(c, l, rank);
  if (strcmp(cls, "TimeDistributed") == 0) return time_distributed(c, l, rank);
  if (strcmp(cls, "Dense") == 0) return dense_layer(c, l);
  if (strcmp(cls, "Conv2DTranspose") == 0) return conv_transpose(c, l);
  if (strcmp(cls, "Conv3D") == 0) return layer_3d(c, l, true);
  if (!strcmp(cls, "MaxPooling3D") || !strcmp(cls, "AveragePooling3D") || !strcmp(cls, "MaxPool3D") ||
      !strcmp(cls, "AvgPool3D"))
    return layer_3d(c, l, false);
  if (strcmp(cls, "Rescaling") == 0) return rescaling(c, l);
  if (strcmp(cls, "Masking") == 0) return masking(c, l);
  if (strcmp(cls, "Dot") == 0) {
    int ra = lm_rank_of(c, l->in[0]);
    *rank = ra == 2 ? 2 : ra == 3 ? 3 : -1;
    return dot_layer(c, l);
  }
  if (strcmp(cls, "Activation") == 0)
    return lm_activation(c, l->prefix, tfd_format("%s", l->in[0]), lm_str(l->cfg, "activation", "linear"));
  if (!strcmp(cls, "Conv2D") || !strcmp(cls, "Conv1D") || !strcmp(cls, "DepthwiseConv2D") ||
      !strcmp(cls, "SeparableConv2D") || !strcmp(cls, "SeparableConv1D"))
    return conv_layer(c, l);
  if (!strcmp(cls, "MaxPooling2D") || !strcmp(cls, "AveragePooling2D") || !strcmp(cls, "MaxPooling1D") ||
      !strcmp(cls, "AveragePooling1D") || !strcmp(cls, "MaxPool2D") || !strcmp(cls, "AvgPool2D"))
    return pool_layer(c, l);
  if (!strncmp(cls, "GlobalAveragePooling", 20) || !strncmp(cls, "GlobalMaxPooling", 16) ||
      !strncmp(cls, "GlobalMaxPool", 13) || !strncmp(cls, "GlobalAvgPool", 13)) {
    *rank = lm_flag(l->cfg, "keepdims", false) ? *rank : 2;
    return global_pool(c, l);
  }
  if (strcmp(cls, "BatchNormalization") == 0) return batch_norm(c, l);
  if (strcmp(cls, "LayerNormalization") == 0) return layer_norm(c, l);
  if (!strcmp(cls, "Add") || !strcmp(cls, "Subtract") || !strcmp(cls, "Multiply") || !strcmp(cls, "Average") ||
      !strcmp(cls, "Maximum") || !strcmp(cls, "Minimum") || !strcmp(cls, "Concatenate"))
    return merge_layer(c, l);
  if (!strcmp(cls, "Flatten") || !strcmp(cls, "Reshape") || !strcmp(cls, "Permute") || !strcmp(cls, "RepeatVector"))
    return reshape_family(c, l, rank);
  if (!strcmp(cls, "ZeroPadding2D") || !strcmp(cls, "ZeroPadding1D")) return pad_layer(c, l, false);
  if (!strcmp(cls, "Cropping2D") || !strcmp(cls, "Cropping1D")) return pad_layer(c, l, true);
  if (strcmp(cls, "UpSampling2D") == 0) return upsample(c, l);
  if (!strcmp(cls, "ReLU") || !strcmp(cls, "LeakyReLU") || !strcmp(cls, "ELU") || !strcmp(cls, "ThresholdedReLU") ||
      !strcmp(cls, "PReLU") || !strcmp(cls, "Softmax"))
    return relu_family(c, l);
  if (strcmp(cls, "Embedding") == 0) {
    *rank = *rank >= 0 ? *rank + 1 : -1;
    return embedding(c, l);
  }
  lm_failf(c, TFD_UNIMPLEMENTED, "layer '%s': layer class '%s' is not supported", l->layer, cls);
  return NULL;
}

/* ---- the model ---- */
static char *tensor_key(const char *layer, int64_t node_index, int64_t tensor_index) {
  return tfd_format("%s\x1f%lld\x1f%lld", layer, (long long)node_index, (long long)tensor_index);
}

static tfd_code record_k(lctx *c, const char *layer, int64_t node_index, int64_t k, const char *tensor, int rank) {
  char *key = tensor_key(layer, node_index, k), *val = key ? tfd_format("%s", tensor) : NULL;
  if (key && tfd_strmap_get(&c->tensors, key)) {
    free(key), free(val);
    return lm_failf(c, TFD_INVALID_ARGUMENT, "two layers are named '%s'", layer);
  }
  bool ok = key && val && tfd_strmap_put(&c->tensors, key, val);
  free(key);
  if (!ok) {
    free(val);
    return lm_failf(c, TFD_RESOURCE_EXHAUSTED, "out of memory");
  }
  lm_note_rank(c, tensor, rank);
  return TFD_OK;
}

static tfd_code record(lctx *c, const char *layer, int64_t node_index, const char *tensor, int rank) {
  return record_k(c, layer, node_index, 0, tensor, rank);
}

static const char *lookup(lctx *c, const char *layer, int64_t node_index, int64_t tensor_index) {
  char *key = tensor_key(layer, node_index, tensor_index);
  const char *v = key ? tfd_strmap_get(&c->tensors, key) : NULL;
  free(key);
  return v;
}

static tfd_dtype layer_dtype(const cJSON *cfg) {
  const char *d = lm_str(cfg, "dtype", "float32");
  tfd_dtype dt = tfd_dtype_from_name(d);
  return dt ? dt : TFD_FLOAT32;
}

/* A Placeholder `name` for an input of cfg's batch_input_shape and dtype; in the signature as key. */
static tfd_code placeholder(lctx *c, const char *name, const cJSON *cfg) {
  const cJSON *s = lm_get2(cfg, "batch_input_shape", "batchInputShape");
  if (!s) s = lm_get(cfg, "batch_shape");
  tfd_shape shape = {.ndims = -1};
  if (cJSON_IsArray(s) && cJSON_GetArraySize(s) <= TFD_MAX_DIMS) {
    shape.ndims = cJSON_GetArraySize(s);
    for (int i = 0; i < shape.ndims; i++) {
      const cJSON *d = cJSON_GetArrayItem(s, i);
      shape.dims[i] = cJSON_IsNumber(d) ? lm_int_of(d->valuedouble) : -1;
    }
  }
  tfd_dtype dt = layer_dtype(cfg);
  tfd_node_def *n = lm_node(c, name, "Placeholder", NULL, NULL);
  if (!n || !lm_set(c, n, "dtype", (tfd_attr_value){.type = TFD_ATTR_TYPE, .dtype = dt}) ||
      !lm_set(c, n, "shape", (tfd_attr_value){.type = TFD_ATTR_SHAPE, .shape = shape}))
    return tfd_status_code(c->st);
  char *tensor = tfd_format("%s:0", name);
  tfd_code code = tensor ? tfd_graph_def_add_signature(c->g, false, name, tensor, dt, &shape, c->st)
                         : lm_failf(c, TFD_RESOURCE_EXHAUSTED, "out of memory");
  free(tensor);
  return code == TFD_OK ? record(c, name, 0, name, shape.ndims) : code;
}

static tfd_code nested_call(lctx *c, const cJSON *layer, const char *name, int64_t node_index, char **in, int n_in);

/* Runs one call of a layer over inputs; records its output as (layer, node_index). */
static tfd_code run_call(lctx *c, const cJSON *layer, const char *name, int64_t node_index, char **in, int n_in) {
  const cJSON *cfg = lm_get(layer, "config");
  const char *cls = lm_str(layer, "class_name", "");
  if (!strcmp(cls, "Sequential") || !strcmp(cls, "Model") || !strcmp(cls, "Functional"))
    return nested_call(c, layer, name, node_index, in, n_in);
  const char *sc = c->scope ? c->scope : "", *sep = c->scope ? "/" : "";
  char *prefix = node_index == 0 ? tfd_format("%s%s%s", sc, sep, name)
                                 : tfd_format("%s%s%s/call_%lld", sc, sep, name, (long long)node_index);
  if (!prefix) return lm_failf(c, TFD_RESOURCE_EXHAUSTED, "out of memory");
  call l = {cls, name, prefix, cfg, in, n_in};
  int rank = -1;
  c->made_mask = NULL;
  char *y = n_in < 1 ? (lm_failf(c, TFD_INVALID_ARGUMENT, "layer '%s' has no inputs", name), NULL) : call_layer(c, &l, &rank);
  tfd_code code = y                                  ? TFD_OK
                  : tfd_status_code(c->st) != TFD_OK ? tfd_status_code(c->st)
                                                     : lm_failf(c, TFD_RESOURCE_EXHAUSTED, "out of memory");
  if (y && !lm_node(c, prefix, "Identity", y, NULL)) code = tfd_status_code(c->st);
  if (code == TFD_OK) code = record(c, name, node_index, prefix, rank);
  for (int i = 0; i < c->n_states; i++) { /* return_state: outputs 1.. of this call */
    if (code == TFD_OK) code = record_k(c, name, node_index, i + 1, c->states[i], 2);
    free(c->states[i]);
    c->states[i] = NULL;
  }
  c->n_states = 0;
  const char *in_mask = n_in > 0 ? lm_mask_of(c, in[0]) : NULL;
  char *mask = c->made_mask ? c->made_mask : in_mask && passes_mask(&l) ? tfd_format("%s", in_mask) : NULL;
  c->made_mask = NULL;
  if (code == TFD_OK && mask && !tfd_strmap_put(&c->masks, prefix, mask))
    code = lm_failf(c, TFD_RESOURCE_EXHAUSTED, "out of memory");
  else if (code == TFD_OK)
    mask = NULL; /* the map owns it */
  free(mask);
  free(y);
  free(prefix);
  return code;
}

/* Keras 3 writes an inbound node as {"args": [...], "kwargs": {...}} with keras tensors whose
 * config.keras_history is [layer, node_index, tensor_index]; Keras 2 and TensorFlow.js as a list of
 * [layer, node_index, tensor_index, kwargs]. Collects the inputs of one inbound node; false (with
 * *ready false) when one is not made yet. */
static bool inputs_of(lctx *c, const cJSON *inbound, char **in, int *n, bool *ready) {
  if (cJSON_IsObject(inbound)) {
    const cJSON *hist = lm_get(lm_get(inbound, "config"), "keras_history");
    if (cJSON_IsArray(hist)) {
      if (*n >= 64) return false;
      const cJSON *name = cJSON_GetArrayItem(hist, 0);
      if (!cJSON_IsString(name) || cJSON_GetArraySize(hist) < 3) return false;
      const char *t = lookup(c, name->valuestring, lm_int_of(cJSON_GetArrayItem(hist, 1)->valuedouble),
                             lm_int_of(cJSON_GetArrayItem(hist, 2)->valuedouble));
      if (!t)
        *ready = false;
      else
        in[(*n)++] = (char *)t;
      return true;
    }
    const cJSON *args = lm_get(inbound, "args");
    return args ? inputs_of(c, args, in, n, ready) : true;
  }
  if (!cJSON_IsArray(inbound)) return true; /* kwargs' plain values */
  const cJSON *first = cJSON_GetArrayItem(inbound, 0);
  if (cJSON_IsString(first)) { /* [layer, node_index, tensor_index, kwargs] */
    if (*n >= 64 || cJSON_GetArraySize(inbound) < 3) return false;
    const char *t = lookup(c, first->valuestring, lm_int_of(cJSON_GetArrayItem(inbound, 1)->valuedouble),
                           lm_int_of(cJSON_GetArrayItem(inbound, 2)->valuedouble));
    if (!t)
      *ready = false;
    else
      in[(*n)++] = (char *)t;
    return true;
  }
  const cJSON *e;
  cJSON_ArrayForEach(e, inbound) if (!inputs_of(c, e, in, n, ready)) return false;
  return true;
}

/* Inside a nested model: the input layer `name` is the tensor fed for it (by its place in input_layers). */
static tfd_code bind_input(lctx *c, const char *name, const cJSON *input_layers) {
  int k = 0;
  for (const cJSON *e = cJSON_IsArray(input_layers) ? input_layers->child : NULL; e; e = e->next, k++) {
    const cJSON *n = cJSON_IsArray(e) ? cJSON_GetArrayItem(e, 0) : e;
    if (cJSON_IsString(n) && strcmp(n->valuestring, name) == 0) {
      if (k >= c->n_feed)
        return lm_failf(c, TFD_INVALID_ARGUMENT, "nested model '%s' takes input '%s' (input %d) but is given %d", c->scope,
                        name, k + 1, c->n_feed);
      return record(c, name, 0, c->feed[k], lm_rank_of(c, c->feed[k]));
    }
  }
  return lm_failf(c, TFD_INVALID_ARGUMENT, "nested model '%s': input layer '%s' is not in its input_layers", c->scope, name);
}

/* A model output: a signature entry, or inside a nested model one more of its outputs. */
static tfd_code add_output(lctx *c, const char *name, const char *t) {
  if (c->outs) {
    if (c->n_outs >= 64) return lm_failf(c, TFD_UNIMPLEMENTED, "nested model '%s': more than 64 outputs", c->scope);
    if (!(c->outs[c->n_outs] = tfd_format("%s", t))) return lm_failf(c, TFD_RESOURCE_EXHAUSTED, "out of memory");
    c->n_outs++;
    return TFD_OK;
  }
  char *tensor = tfd_format("%s:0", t);
  tfd_code code = tensor ? tfd_graph_def_add_signature(c->g, true, name, tensor, TFD_FLOAT32, NULL, c->st)
                         : lm_failf(c, TFD_RESOURCE_EXHAUSTED, "out of memory");
  free(tensor);
  return code;
}

static tfd_code add_outputs(lctx *c, const cJSON *outs, const char *last) {
  if (!cJSON_IsArray(outs)) { /* Sequential: the last layer */
    if (c->outs) return add_output(c, last, last);
    char *tensor = tfd_format("%s:0", last);
    tfd_code code = tensor ? tfd_graph_def_add_signature(c->g, true, last, tensor, TFD_FLOAT32, NULL, c->st)
                           : lm_failf(c, TFD_RESOURCE_EXHAUSTED, "out of memory");
    free(tensor);
    return code;
  }
  bool single = cJSON_IsString(cJSON_GetArrayItem(outs, 0)); /* Keras 3: one [layer, node, tensor] unwrapped */
  for (const cJSON *o = single ? outs : outs->child; o; o = single ? NULL : o->next) {
    const cJSON *name = cJSON_GetArrayItem(o, 0);
    const char *t = cJSON_IsString(name) && cJSON_GetArraySize(o) >= 3
                        ? lookup(c, name->valuestring, lm_int_of(cJSON_GetArrayItem(o, 1)->valuedouble),
                                 lm_int_of(cJSON_GetArrayItem(o, 2)->valuedouble))
                        : NULL;
    if (!t) return lm_failf(c, TFD_INVALID_ARGUMENT, "output_layers names a layer output the model does not make");
    tfd_code code = add_output(c, name->valuestring, t);
    if (code != TFD_OK) return code;
  }
  return TFD_OK;
}

static tfd_code functional(lctx *c, const cJSON *cfg) {
  const cJSON *layers = lm_get(cfg, "layers"), *layer;
  if (!cJSON_IsArray(layers)) return lm_failf(c, TFD_INVALID_ARGUMENT, "a functional model's config needs a list of layers");
  int total = cJSON_GetArraySize(layers), done = 0, *calls_done = calloc((size_t)total + 1, sizeof *calls_done);
  if (!calls_done) return lm_failf(c, TFD_RESOURCE_EXHAUSTED, "out of memory");
  tfd_code code = TFD_OK;
  /* The model's inputs first, in input_layers' order: the signature lists them so. */
  const cJSON *inputs = lm_get(cfg, "input_layers"), *e;
  const cJSON *input_list = cJSON_IsArray(inputs) ? inputs : NULL;
  cJSON_ArrayForEach(e, input_list) {
    const cJSON *want = cJSON_IsArray(e) ? cJSON_GetArrayItem(e, 0) : e;
    int i = 0;
    cJSON_ArrayForEach(layer, layers) {
      const char *name = lm_str(layer, "name", lm_str(lm_get(layer, "config"), "name", NULL));
      if (code == TFD_OK && calls_done[i] == 0 && cJSON_IsString(want) && name && !strcmp(name, want->valuestring) &&
          !strcmp(lm_str(layer, "class_name", ""), "InputLayer")) {
        code = c->feed ? bind_input(c, name, inputs) : placeholder(c, name, lm_get(layer, "config"));
        calls_done[i] = 1, done++;
      }
      i++;
    }
  }
  /* Passes over the list until nothing more can run: layers are usually in order, but need not be. */
  for (bool progress = true; progress && code == TFD_OK;) {
    progress = false;
    int i = 0;
    cJSON_ArrayForEach(layer, layers) {
      const char *name = lm_str(layer, "name", lm_str(lm_get(layer, "config"), "name", NULL));
      const cJSON *inbound = lm_get(layer, "inbound_nodes");
      int ncalls = cJSON_IsArray(inbound) ? cJSON_GetArraySize(inbound) : 0;
      if (!name) {
        code = lm_failf(c, TFD_INVALID_ARGUMENT, "layer %d has no name", i);
        break;
      }
      if (strcmp(lm_str(layer, "class_name", ""), "InputLayer") == 0) {
        if (calls_done[i] == 0) {
          code = c->feed ? bind_input(c, name, lm_get(cfg, "input_layers")) : placeholder(c, name, lm_get(layer, "config"));
          calls_done[i] = 1, done++, progress = true;
        }
      } else if (ncalls == 0) {
        if (calls_done[i] == 0) calls_done[i] = 1, done++; /* never called: not in the graph */
      } else {
        for (int k = calls_done[i]; k < ncalls && code == TFD_OK; k = calls_done[i]) {
          char *in[64];
          int n = 0;
          bool ready = true;
          if (!inputs_of(c, cJSON_GetArrayItem(inbound, k), in, &n, &ready)) {
            code = lm_failf(c, TFD_INVALID_ARGUMENT, "layer '%s': inbound node %d is malformed", name, k);
          } else if (!ready) {
            break;
          } else {
            code = run_call(c, layer, name, k, in, n);
            calls_done[i]++, progress = true;
            if (calls_done[i] == ncalls) done++;
          }
        }
      }
      if (code != TFD_OK) break;
      i++;
    }
  }
  free(calls_done);
  if (code == TFD_OK && done < total)
    code = lm_failf(c, TFD_INVALID_ARGUMENT, "%d layers never get their inputs (a cycle, or an input no layer makes)",
                 total - done);
  return code == TFD_OK ? add_outputs(c, lm_get(cfg, "output_layers"), NULL) : code;
}

static tfd_code sequential(lctx *c, const cJSON *cfg) {
  const cJSON *layers = cJSON_IsArray(cfg) ? cfg : lm_get(cfg, "layers"), *layer;
  if (!cJSON_IsArray(layers) || cJSON_GetArraySize(layers) == 0)
    return lm_failf(c, TFD_INVALID_ARGUMENT, "a Sequential model needs a list of layers");
  char *x = NULL, *last = NULL;
  tfd_code code = TFD_OK;
  cJSON_ArrayForEach(layer, layers) {
    const cJSON *lc = lm_get(layer, "config");
    const char *name = lm_str(lc, "name", NULL);
    if (!name) {
      code = lm_failf(c, TFD_INVALID_ARGUMENT, "a Sequential layer has no name");
      break;
    }
    bool input_layer = strcmp(lm_str(layer, "class_name", ""), "InputLayer") == 0;
    if (!x && c->feed) { /* nested: the input is what the outer model gives */
      if (!(x = tfd_format("%s", c->feed[0]))) {
        code = lm_failf(c, TFD_RESOURCE_EXHAUSTED, "out of memory");
        break;
      }
      if (input_layer) continue;
    }
    if (!x) { /* the input: an InputLayer, or the first layer's batch_input_shape ("<layer>_input" as Keras names it) */
      x = input_layer ? tfd_format("%s", name) : tfd_format("%s_input", name);
      if (!x || (code = placeholder(c, x, lc)) != TFD_OK) break;
      if (input_layer) continue;
    }
    char *in[1] = {x};
    if ((code = run_call(c, layer, name, 0, in, 1)) != TFD_OK) break;
    free(x);
    const char *out = lookup(c, name, 0, 0);
    x = last = out ? tfd_format("%s", out) : NULL;
    if (!x) {
      code = lm_failf(c, TFD_RESOURCE_EXHAUSTED, "out of memory");
      break;
    }
  }
  if (code == TFD_OK && !last) code = lm_failf(c, TFD_INVALID_ARGUMENT, "a Sequential model of no layers but its input");
  if (code == TFD_OK) code = add_outputs(c, NULL, last);
  free(x);
  return code;
}

static void free_maps(lctx *c) {
  const char *key;
  void *value;
  for (size_t it = 0; tfd_strmap_next(&c->tensors, &it, &key, &value);) free(value);
  for (size_t it = 0; tfd_strmap_next(&c->masks, &it, &key, &value);) free(value);
  tfd_strmap_free(&c->tensors);
  tfd_strmap_free(&c->masks);
  tfd_strmap_free(&c->ranks);
}

/* A model that was built from its inputs made its own node 0 then (every functional model, and a
 * Sequential whose first layer has an input shape): Keras and TensorFlow.js number the calls of the
 * model as a layer from 1. */
static bool built(const char *cls, const cJSON *cfg) {
  if (strcmp(cls, "Sequential") != 0) return true;
  const cJSON *layers = cJSON_IsArray(cfg) ? cfg : lm_get(cfg, "layers");
  const cJSON *first = cJSON_IsArray(layers) ? layers->child : NULL, *fc = lm_get(first, "config");
  return !strcmp(lm_str(first, "class_name", ""), "InputLayer") || lm_get(fc, "batch_input_shape") ||
         lm_get(fc, "batchInputShape") || lm_get(fc, "batch_shape") || lm_get(fc, "input_shape");
}

/* A nested model called as a layer: its layers' nodes are named under "<scope>/<model>" (weights keep their
 * own names, as TensorFlow.js saves them), its inputs are the call's, and its outputs become the layer's. */
static tfd_code nested_call(lctx *c, const cJSON *layer, const char *name, int64_t node_index, char **in, int n_in) {
  const cJSON *cfg = lm_get(layer, "config");
  const char *cls = lm_str(layer, "class_name", "");
  if (c->depth >= 8) return lm_failf(c, TFD_UNIMPLEMENTED, "layer '%s': models nested more than 8 deep", name);
  if (n_in < 1) return lm_failf(c, TFD_INVALID_ARGUMENT, "layer '%s' has no inputs", name);
  const char *sc = c->scope ? c->scope : "", *sep = c->scope ? "/" : "";
  char *scope = node_index == 0 ? tfd_format("%s%s%s", sc, sep, name)
                                : tfd_format("%s%s%s/call_%lld", sc, sep, name, (long long)node_index);
  char *outs[64];
  lctx sub = {.path = c->path, .st = c->st, .g = c->g, .unfilled = c->unfilled, .tensors = TFD_STRMAP_INIT,
              .ranks = TFD_STRMAP_INIT, .masks = TFD_STRMAP_INIT, .serial = c->serial, .scope = scope, .feed = in, .n_feed = n_in,
              .outs = outs, .depth = c->depth + 1};
  for (int k = 0; k < n_in; k++) lm_note_rank(&sub, in[k], lm_rank_of(c, in[k]));
  tfd_code code = !scope                           ? lm_failf(c, TFD_RESOURCE_EXHAUSTED, "out of memory")
                  : strcmp(cls, "Sequential") == 0 ? sequential(&sub, cfg)
                                                   : functional(&sub, cfg);
  c->serial = sub.serial;
  int64_t at = node_index + (built(cls, cfg) ? 1 : 0);
  for (int k = 0; k < sub.n_outs && code == TFD_OK; k++) code = record_k(c, name, at, k, outs[k], lm_rank_of(&sub, outs[k]));
  for (int k = 0; k < sub.n_outs; k++) free(outs[k]);
  free_maps(&sub);
  free(scope);
  return code;
}

bool tfd_layers_model_is(const cJSON *root, const cJSON *topology) {
  const cJSON *format = lm_get(root, "format");
  if (cJSON_IsString(format)) return strcmp(format->valuestring, "layers-model") == 0;
  return cJSON_IsObject(topology) && !lm_get(topology, "node") &&
         (lm_get(topology, "model_config") || lm_get(topology, "keras_version") || lm_get(topology, "class_name"));
}

tfd_code tfd_layers_model_to_graph(const cJSON *topology, tfd_graph_def *g, tfd_strmap *unfilled, const char *path,
                                   tfd_status *st) {
  lctx c = {.path = path, .st = st, .g = g, .unfilled = unfilled, .tensors = TFD_STRMAP_INIT, .ranks = TFD_STRMAP_INIT,
            .masks = TFD_STRMAP_INIT};
  const cJSON *model = lm_get(topology, "model_config") ? lm_get(topology, "model_config") : topology;
  const char *cls = lm_str(model, "class_name", "");
  const cJSON *cfg = lm_get(model, "config");
  tfd_code code;
  if (strcmp(cls, "Sequential") == 0)
    code = sequential(&c, cfg);
  else if (strcmp(cls, "Model") == 0 || strcmp(cls, "Functional") == 0)
    code = functional(&c, cfg);
  else
    code = lm_failf(&c, TFD_UNIMPLEMENTED, "a layers model of class '%s' (tfdev reads Sequential and functional models)", cls);
  free_maps(&c);
  return code;
}
