/* The graph optimisation pass the session runs on each partition after placement, before its
 * executor is made: TensorFlow Grappler's constant folding and remapper, reduced to what tfdev's
 * kernels gain from.
 *
 * 1. Constant folding. A node whose data inputs all come from Consts, with no control inputs, is
 *    computed once on the partition's CPU device and becomes a Const of the same name. Stateful
 *    ops (variables, queues, random ops) and the session's own feed/fetch/send/receive nodes
 *    never fold; nor does a result above 10 MiB (Grappler's limit), nor a node whose kernel
 *    fails (the run then reports it as it would have). Consts left with no consumer go.
 * 2. Remapping. _FusedConv2D[BiasAdd] -> AddV2 (the other operand of the same shape, up to unknown dims) [->
 *    activation] becomes _FusedConv2D[BiasAdd, Add(, activation)], as Grappler's remapper writes
 *    it for residual blocks. MatMul -> BiasAdd [-> Relu | Relu6 | Elu | LeakyRelu | Tanh | Sigmoid] becomes
 *    one _FusedMatMul, written as TensorFlow's remapper writes it: the last node's name and
 *    device, inputs (a, b, bias) then every control input of the fused nodes, attrs T,
 *    transpose_a, transpose_b, num_args = 1, fused_ops = {"BiasAdd"[, activation]}, epsilon = 0
 *    and, for LeakyRelu, leakyrelu_alpha. Conv2D and DepthwiseConv2dNative (float32, NHWC) ->
 *    BiasAdd [-> activation] become _FusedConv2D and _FusedDepthwiseConv2dNative the same way, with
 *    the convolution's attrs: graphs written unfused (TensorFlow 1's, and the layers models tfdev
 *    converts) run as the converter's fused ones do. A node whose output anything else reads (another
 *    consumer, a fetch, a send to another partition) is not absorbed: a fed intermediate is
 *    already a feed node in the partition, so it never matches.
 * 3. Every MatMul, _FusedMatMul and convolution whose weights (filter) come straight from a Const
 *    is marked with TFD_WEIGHTS_CONSTANT_ATTR, so its kernel packs them once. */
#include "graph_optimizer.h"

#include <stdlib.h>
#include <string.h>

#include "../core/status_internal.h"
#include "../graph/graph.h"
#include "../framework/graph_def_internal.h"
#include "../kernels/nn/activation.h"
#include "tfdev/session.h"

/* Grappler's kMaxConstantSize. */
#define MAX_FOLDED_BYTES ((size_t)10 << 20)
/* Nodes with more inputs than this are left alone (a ConcatV2 of many constants). */
#define MAX_FOLD_INPUTS 64

/* Control flow is the executor's to run (an Enter of a Const is no constant: it belongs to a loop),
 * and a variant (a TensorList) made once would be shared by every step. */
static bool never_folds(const tfd_gnode *n) {
  static const char *const kept[] = {"Const", "Placeholder", "PlaceholderWithDefault", "Enter", "Exit", "NextIteration",
                                     "Switch", "Merge", "LoopCond", "ControlTrigger"};
  if (n->op->stateful || n->op->runtime_only || n->num_outputs != 1 || n->num_control > 0) return true;
  for (size_t k = 0; k < sizeof kept / sizeof kept[0]; k++)
    if (strcmp(n->op->name, kept[k]) == 0) return true;
  if (n->out_types[0] == TFD_VARIANT) return true;
  for (int i = 0; i < n->num_inputs; i++)
    if (n->in_types[i] == TFD_VARIANT) return true;
  return false;
}

static tfd_tensor *const_value(const tfd_gnode *n) {
  if (strcmp(n->op->name, "Const") != 0 || n->num_control > 0) return NULL;
  const tfd_attr_value *v = tfd_node_def_attr(n->def, "value");
  return v && v->type == TFD_ATTR_TENSOR ? v->tensor : NULL;
}

/* Appends a Const named like n holding t. */
static tfd_code append_const(tfd_graph_def *out, const tfd_node_def *n, tfd_tensor *t, tfd_status *st) {
  tfd_node_def *c = tfd_graph_def_add_node(out, tfd_node_def_name(n), "Const", st);
  if (!c) return TFD_RESOURCE_EXHAUSTED;
  tfd_attr_value value = {.type = TFD_ATTR_TENSOR, .tensor = t};
  tfd_attr_value dtype = {.type = TFD_ATTR_TYPE, .dtype = tfd_tensor_dtype(t)};
  if (tfd_node_def_set_device(c, tfd_node_def_device(n), st) != TFD_OK ||
      tfd_node_def_set_attr(c, "value", &value, st) != TFD_OK || tfd_node_def_set_attr(c, "dtype", &dtype, st) != TFD_OK)
    return tfd_status_code(st);
  return TFD_OK;
}

/* Computes foldable nodes in topological order; values[i] holds a reference to each
 * constant's value (Consts' own and the folded). Returns how many nodes folded. */
static int fold_values(const tfd_graph *g, tfd_device *device, tfd_tensor **values, bool *folded) {
  int count = 0;
  for (int t = 0; t < g->n; t++) {
    const tfd_gnode *n = &g->nodes[g->topo[t]];
    tfd_tensor *own = const_value(n);
    if (own) {
      values[n->id] = tfd_tensor_ref(own);
      continue;
    }
    if (never_folds(n) || n->num_inputs == 0) continue;
    /* A result known to be too big is not even computed (a Fill of constant dims, say). */
    size_t es = tfd_dtype_size(n->out_types[0]);
    if (tfd_shape_numel(&n->out_shapes[0]) > (int64_t)(MAX_FOLDED_BYTES / (es ? es : 1))) continue;
    tfd_tensor *inputs[MAX_FOLD_INPUTS];
    if (n->num_inputs > (int)(sizeof inputs / sizeof inputs[0])) continue;
    bool all_const = true;
    for (int i = 0; i < n->num_inputs && all_const; i++)
      all_const = n->inputs[i].index == 0 && (inputs[i] = values[n->inputs[i].node]) != NULL;
    if (!all_const) continue;
    tfd_tensor *outs[TFD_MAX_OP_OUTPUTS] = {0};
    int nout = 0;
    tfd_status st = TFD_STATUS_INIT;
    tfd_code code = tfd_device_run_op(device, n->def, inputs, n->num_inputs, NULL, outs, &nout, &st);
    tfd_status_clear(&st);
    if (code == TFD_OK && nout == 1 && tfd_tensor_byte_size(outs[0]) <= MAX_FOLDED_BYTES) {
      values[n->id] = outs[0];
      folded[n->id] = true;
      count++;
    } else {
      for (int i = 0; i < nout; i++) tfd_tensor_unref(outs[i]);
    }
  }
  return count;
}

static tfd_graph_def *fold_constants(const tfd_graph *g, tfd_device *device, tfd_status *st) {
  tfd_tensor **values = calloc((size_t)g->n + 1, sizeof *values);
  bool *folded = calloc((size_t)g->n + 1, sizeof *folded);
  tfd_graph_def *out = NULL;
  if (!values || !folded) {
    tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory folding constants");
    goto done;
  }
  if (fold_values(g, device, values, folded) == 0) goto done; /* nothing to do: the caller keeps its def */
  if (!(out = tfd_graph_def_new())) {
    tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory folding constants");
    goto done;
  }
  for (int i = 0; i < g->n; i++) {
    const tfd_gnode *n = &g->nodes[i];
    /* A constant (given or folded) read only by nodes that folded is no longer needed. */
    bool dead = values[i] && n->num_out_edges > 0;
    for (int e = 0; dead && e < n->num_out_edges; e++) dead = folded[n->out_edges[e].dst];
    tfd_code code = dead        ? TFD_OK
                    : folded[i] ? append_const(out, n->def, values[i], st)
                                : tfd_graph_def_append_node(out, n->def, st);
    if (code != TFD_OK) {
      tfd_graph_def_free(out);
      out = NULL;
      break;
    }
  }
done:
  for (int i = 0; values && i < g->n; i++) tfd_tensor_unref(values[i]);
  free(values);
  free(folded);
  return out;
}

/* ---- remapping ---- */
/* The node whose only consumer is data input 0 of another, or -1. */
static int sole_consumer(const tfd_gnode *n) {
  if (n->num_out_edges != 1 || n->out_edges[0].dst_input != 0 || n->out_edges[0].src_output != 0) return -1;
  return n->out_edges[0].dst;
}

static bool is_op(const tfd_gnode *n, const char *op) { return strcmp(n->op->name, op) == 0; }

typedef struct fusion {
  bool conv_add;                    /* _FusedConv2D[BiasAdd] -> AddV2 [-> activation]; else MatMul -> BiasAdd ... */
  const char *fused_op;             /* else: _FusedMatMul, _FusedConv2D or _FusedDepthwiseConv2dNative */
  int matmul, bias_add, activation; /* node ids (conv_add: the conv, the add); activation -1 when none */
  int addend;                       /* conv_add: which input of the add is the other operand */
} fusion;

static bool nhwc(const tfd_node_def *n) {
  const tfd_attr_value *v = tfd_node_def_attr(n, "data_format");
  return !v || v->type != TFD_ATTR_STRING || strcmp(v->s, "NHWC") == 0;
}

/* The fusion ending at a BiasAdd read from a MatMul or an NHWC float32 convolution, if any. */
static bool match_fusion(const tfd_graph *g, int bias_add, fusion *f) {
  const tfd_gnode *x = &g->nodes[bias_add];
  if (!is_op(x, "BiasAdd") || x->inputs[0].index != 0) return false;
  const tfd_gnode *m = &g->nodes[x->inputs[0].node];
  if (sole_consumer(m) != bias_add) return false;
  tfd_dtype t = m->out_types[0];
  const char *fused = is_op(m, "MatMul") && (t == TFD_FLOAT32 || t == TFD_FLOAT64) ? "_FusedMatMul"
                      : t != TFD_FLOAT32                                          ? NULL
                      : is_op(m, "Conv2D")                                        ? "_FusedConv2D"
                      : is_op(m, "DepthwiseConv2dNative")                         ? "_FusedDepthwiseConv2dNative"
                                                                                  : NULL;
  if (!fused || m->num_inputs != 2) return false;
  if ((fused[6] != 'M' && !nhwc(m->def)) || !nhwc(x->def)) return false;
  *f = (fusion){false, fused, m->id, bias_add, -1, 0};
  int next = sole_consumer(x);
  if (next >= 0 && tfd_activation_of_op(g->nodes[next].op->name) != TFD_ACT_NONE) f->activation = next;
  return true;
}

/* Same rank, and each dimension known and equal on both sides or unknown on both (a batch of -1
 * from a TensorFlow.js model). Unknown dimensions may still differ at run time (1 against n): the
 * fused kernel then broadcasts as AddV2 would, so the fusion never changes a result. */
static bool same_shape_up_to_unknown(const tfd_shape *a, const tfd_shape *b) {
  if (a->ndims < 0 || a->ndims != b->ndims) return false;
  for (int i = 0; i < a->ndims; i++)
    if (a->dims[i] != b->dims[i] || (a->dims[i] < 0) != (b->dims[i] < 0)) return false;
  return true;
}

/* A residual add on a convolution: _FusedConv2D[BiasAdd] read only by an AddV2 whose other operand
 * has the very same (known) shape, then optionally an activation; Grappler's remapper turns it into
 * _FusedConv2D[BiasAdd, Add(, activation)] (ContractionWithBiasAddAndAdd). tfdev also takes a
 * Prelu there: [BiasAdd, Add, Prelu], alpha after the addend. */
static bool match_conv_add(const tfd_graph *g, int add, fusion *f) {
  const tfd_gnode *x = &g->nodes[add];
  if ((!is_op(x, "AddV2") && !is_op(x, "Add")) || x->num_inputs != 2 || x->out_types[0] != TFD_FLOAT32) return false;
  for (int side = 0; side < 2; side++) {
    const tfd_gnode *conv = &g->nodes[x->inputs[side].node];
    const tfd_gnode *other = &g->nodes[x->inputs[1 - side].node];
    if (!is_op(conv, "_FusedConv2D") || x->inputs[side].index != 0 || conv == other) continue;
    const tfd_attr_value *ops = tfd_node_def_attr(conv->def, "fused_ops");
    if (!ops || ops->type != TFD_ATTR_LIST_STRING || ops->list_len != 1 || strcmp(ops->list_s[0], "BiasAdd") != 0)
      continue;
    if (conv->num_out_edges != 1 || conv->out_edges[0].dst != add || conv->out_edges[0].src_output != 0) continue;
    if (!same_shape_up_to_unknown(&conv->out_shapes[0], &x->out_shapes[0]) ||
        !same_shape_up_to_unknown(&other->out_shapes[x->inputs[1 - side].index], &x->out_shapes[0]))
      continue;
    *f = (fusion){true, "_FusedConv2D", conv->id, add, -1, 1 - side};
    int next = sole_consumer(x);
    tfd_activation act = next >= 0 ? tfd_activation_of_op(g->nodes[next].op->name) : TFD_ACT_NONE;
    /* Prelu too (MediaPipe's blocks end conv + bias + residual add -> Prelu): its alpha becomes the
     * fused node's last input, and the convolution applies it before the one store of each value. */
    if (act != TFD_ACT_NONE || (next >= 0 && is_op(&g->nodes[next], "Prelu"))) f->activation = next;
    return true;
  }
  return false;
}

static tfd_code add_inputs_of(tfd_node_def *dst, const tfd_node_def *src, bool data, tfd_status *st) {
  for (size_t i = 0; i < src->ninputs; i++)
    if ((src->inputs[i][0] == '^') != data && tfd_node_def_add_input(dst, src->inputs[i], st) != TFD_OK)
      return tfd_status_code(st);
  return TFD_OK;
}

static tfd_code set_attr(tfd_node_def *n, const char *name, tfd_attr_value v, tfd_status *st) {
  return tfd_node_def_set_attr(n, name, &v, st);
}

/* A fused LeakyRelu keeps its slope in the fused node's leakyrelu_alpha (TensorFlow's name). */
static tfd_code fused_activation_alpha(tfd_node_def *n, const tfd_node_def *a, tfd_status *st) {
  if (!a || strcmp(tfd_node_def_op(a), "LeakyRelu") != 0) return TFD_OK;
  const tfd_attr_value *alpha = tfd_node_def_attr(a, "alpha");
  return set_attr(n, "leakyrelu_alpha", (tfd_attr_value){.type = TFD_ATTR_FLOAT, .f = alpha ? alpha->f : 0.2}, st);
}

/* A convolution -> BiasAdd [-> activation] as one fused convolution: the convolution's attrs, then the
 * fusion's (num_args, fused_ops, epsilon). */
static tfd_code append_fused_conv(tfd_graph_def *out, const tfd_graph *g, const fusion *f, tfd_status *st) {
  const tfd_node_def *conv = g->nodes[f->matmul].def, *x = g->nodes[f->bias_add].def;
  const tfd_node_def *a = f->activation >= 0 ? g->nodes[f->activation].def : NULL, *last = a ? a : x;
  tfd_node_def *n = tfd_graph_def_add_node(out, tfd_node_def_name(last), f->fused_op, st);
  if (!n) return TFD_RESOURCE_EXHAUSTED;
  for (size_t k = 0; k < conv->nattrs; k++)
    if (tfd_node_def_set_attr(n, conv->attrs[k].name, &conv->attrs[k].value, st) != TFD_OK) return tfd_status_code(st);
  const char *ops[2] = {"BiasAdd", a ? tfd_node_def_op(a) : NULL};
  if (tfd_node_def_set_device(n, tfd_node_def_device(last), st) != TFD_OK ||
      tfd_node_def_add_input(n, conv->inputs[0], st) != TFD_OK || tfd_node_def_add_input(n, conv->inputs[1], st) != TFD_OK ||
      tfd_node_def_add_input(n, x->inputs[1], st) != TFD_OK || add_inputs_of(n, conv, false, st) != TFD_OK ||
      add_inputs_of(n, x, false, st) != TFD_OK || (a && add_inputs_of(n, a, false, st) != TFD_OK) ||
      set_attr(n, "T", (tfd_attr_value){.type = TFD_ATTR_TYPE, .dtype = TFD_FLOAT32}, st) ||
      set_attr(n, "num_args", (tfd_attr_value){.type = TFD_ATTR_INT, .i = 1}, st) ||
      set_attr(n, "fused_ops", (tfd_attr_value){.type = TFD_ATTR_LIST_STRING, .list_len = a ? 2 : 1, .list_s = ops}, st) ||
      set_attr(n, "epsilon", (tfd_attr_value){.type = TFD_ATTR_FLOAT, .f = 0.0}, st))
    return tfd_status_code(st);
  return fused_activation_alpha(n, a, st);
}

static tfd_code append_fused(tfd_graph_def *out, const tfd_graph *g, const fusion *f, tfd_status *st) {
  if (strcmp(f->fused_op, "_FusedMatMul") != 0) return append_fused_conv(out, g, f, st);
  const tfd_node_def *m = g->nodes[f->matmul].def, *x = g->nodes[f->bias_add].def;
  const tfd_node_def *a = f->activation >= 0 ? g->nodes[f->activation].def : NULL, *last = a ? a : x;
  tfd_node_def *n = tfd_graph_def_add_node(out, tfd_node_def_name(last), "_FusedMatMul", st);
  if (!n) return TFD_RESOURCE_EXHAUSTED;
  const char *ops[2] = {"BiasAdd", a ? tfd_node_def_op(a) : NULL};
  const tfd_attr_value *ta = tfd_node_def_attr(m, "transpose_a"), *tb = tfd_node_def_attr(m, "transpose_b");
  if (tfd_node_def_set_device(n, tfd_node_def_device(last), st) != TFD_OK ||
      tfd_node_def_add_input(n, m->inputs[0], st) != TFD_OK || tfd_node_def_add_input(n, m->inputs[1], st) != TFD_OK ||
      tfd_node_def_add_input(n, x->inputs[1], st) != TFD_OK || add_inputs_of(n, m, false, st) != TFD_OK ||
      add_inputs_of(n, x, false, st) != TFD_OK || (a && add_inputs_of(n, a, false, st) != TFD_OK) ||
      set_attr(n, "T", (tfd_attr_value){.type = TFD_ATTR_TYPE, .dtype = g->nodes[f->matmul].out_types[0]}, st) ||
      set_attr(n, "transpose_a", (tfd_attr_value){.type = TFD_ATTR_BOOL, .b = ta && ta->b}, st) ||
      set_attr(n, "transpose_b", (tfd_attr_value){.type = TFD_ATTR_BOOL, .b = tb && tb->b}, st) ||
      set_attr(n, "num_args", (tfd_attr_value){.type = TFD_ATTR_INT, .i = 1}, st) ||
      set_attr(n, "fused_ops", (tfd_attr_value){.type = TFD_ATTR_LIST_STRING, .list_len = a ? 2 : 1, .list_s = ops}, st) ||
      set_attr(n, "epsilon", (tfd_attr_value){.type = TFD_ATTR_FLOAT, .f = 0.0}, st))
    return tfd_status_code(st);
  return fused_activation_alpha(n, a, st);
}

static tfd_code append_fused_conv_add(tfd_graph_def *out, const tfd_graph *g, const fusion *f, tfd_status *st) {
  const tfd_node_def *conv = g->nodes[f->matmul].def, *x = g->nodes[f->bias_add].def;
  const tfd_node_def *a = f->activation >= 0 ? g->nodes[f->activation].def : NULL, *last = a ? a : x;
  tfd_node_def *n = tfd_graph_def_add_node(out, tfd_node_def_name(last), "_FusedConv2D", st);
  if (!n) return TFD_RESOURCE_EXHAUSTED;
  /* The convolution's attrs (strides, padding, dilations, ...) carry over; the fusion's are rewritten. */
  for (size_t k = 0; k < conv->nattrs; k++) {
    const char *name = conv->attrs[k].name;
    if (strcmp(name, "fused_ops") == 0 || strcmp(name, "num_args") == 0) continue;
    if (tfd_node_def_set_attr(n, name, &conv->attrs[k].value, st) != TFD_OK) return tfd_status_code(st);
  }
  const char *ops[3] = {"BiasAdd", "Add", a ? tfd_node_def_op(a) : NULL};
  bool prelu = a && strcmp(tfd_node_def_op(a), "Prelu") == 0;
  if (tfd_node_def_set_device(n, tfd_node_def_device(last), st) != TFD_OK ||
      tfd_node_def_add_input(n, conv->inputs[0], st) != TFD_OK || tfd_node_def_add_input(n, conv->inputs[1], st) != TFD_OK ||
      tfd_node_def_add_input(n, conv->inputs[2], st) != TFD_OK ||
      tfd_node_def_add_input(n, x->inputs[f->addend], st) != TFD_OK ||
      (prelu && tfd_node_def_add_input(n, a->inputs[1], st) != TFD_OK) || add_inputs_of(n, conv, false, st) != TFD_OK ||
      add_inputs_of(n, x, false, st) != TFD_OK || (a && add_inputs_of(n, a, false, st) != TFD_OK) ||
      set_attr(n, "num_args", (tfd_attr_value){.type = TFD_ATTR_INT, .i = prelu ? 3 : 2}, st) ||
      set_attr(n, "fused_ops", (tfd_attr_value){.type = TFD_ATTR_LIST_STRING, .list_len = a ? 3 : 2, .list_s = ops}, st))
    return tfd_status_code(st);
  return fused_activation_alpha(n, a, st);
}

/* Whether node n's input 1 is output 0 of a Const without control inputs. */
static bool weights_constant(const tfd_graph *g, const tfd_gnode *n) {
  return n->num_inputs >= 2 && n->inputs[1].index == 0 && const_value(&g->nodes[n->inputs[1].node]) != NULL;
}

static tfd_code mark_weights_constant(tfd_graph_def *out, const tfd_graph *g, const tfd_gnode *n, tfd_status *st) {
  if (!weights_constant(g, n)) return TFD_OK;
  tfd_node_def *last = out->nodes[out->n - 1];
  return set_attr(last, TFD_WEIGHTS_CONSTANT_ATTR, (tfd_attr_value){.type = TFD_ATTR_BOOL, .b = true}, st);
}

static tfd_graph_def *remap(const tfd_graph *g, tfd_status *st) {
  /* role[i]: 0 copy; 1 absorbed into a later node; 2 ends a fusion (its entry in fusions). */
  int *role = calloc((size_t)g->n + 1, sizeof *role);
  fusion *fusions = calloc((size_t)g->n + 1, sizeof *fusions);
  tfd_graph_def *out = tfd_graph_def_new();
  if (!role || !fusions || !out) {
    tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory remapping the graph");
    goto fail;
  }
  for (int i = 0; i < g->n; i++) {
    fusion f;
    if (!match_fusion(g, i, &f) && !match_conv_add(g, i, &f)) continue;
    if (role[f.matmul] || role[f.bias_add]) continue; /* already part of another fusion */
    int last = f.activation >= 0 ? f.activation : f.bias_add;
    role[f.matmul] = 1;
    if (last != f.bias_add) role[f.bias_add] = 1;
    role[last] = 2;
    fusions[last] = f;
  }
  for (int i = 0; i < g->n; i++) {
    const tfd_gnode *n = &g->nodes[i];
    if (role[i] == 1) continue;
    tfd_code code = role[i] != 2             ? tfd_graph_def_append_node(out, n->def, st)
                    : fusions[i].conv_add ? append_fused_conv_add(out, g, &fusions[i], st)
                                          : append_fused(out, g, &fusions[i], st);
    if (code == TFD_OK && (role[i] == 2 || is_op(n, "MatMul") || is_op(n, "_FusedMatMul") || is_op(n, "Conv2D") ||
                           is_op(n, "_FusedConv2D") || is_op(n, "DepthwiseConv2dNative")))
      code = mark_weights_constant(out, g, role[i] == 2 ? &g->nodes[fusions[i].matmul] : n, st);
    if (code != TFD_OK) goto fail;
  }
  free(role);
  free(fusions);
  return out;
fail:
  free(role);
  free(fusions);
  tfd_graph_def_free(out);
  return NULL;
}

tfd_code tfd_optimize_partition(tfd_graph_def **def, tfd_device *device, tfd_status *st) {
  tfd_graph *g = tfd_graph_build(*def, st);
  if (!g) return tfd_status_code(st);
  if (strcmp(tfd_device_type(device), "CPU") == 0) {
    tfd_graph_def *folded = fold_constants(g, device, st);
    if (!folded && tfd_status_code(st) != TFD_OK) goto fail;
    if (folded) {
      tfd_graph_free(g);
      tfd_graph_def_free(*def);
      *def = folded;
      if (!(g = tfd_graph_build(*def, st))) return tfd_status_code(st);
    }
  }
  tfd_graph_def *remapped = remap(g, st);
  if (!remapped) goto fail;
  tfd_graph_free(g);
  tfd_graph_def_free(*def);
  *def = remapped;
  return TFD_OK;
fail:
  tfd_graph_free(g);
  return tfd_status_code(st);
}
