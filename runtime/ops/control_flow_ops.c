/* Control-flow ops, as TensorFlow's core/ops/control_flow_ops.cc and no_op.cc defines them: frames, Switch and Merge,
 * NoOp and ControlTrigger; the executor gives them their meaning (runtime/exec/frames.c). Their definitions and shape
 * functions. */
#include "common_shape_fns.h"

/* control flow (TensorFlow's control_flow_ops.cc):
 * Enter, Exit, NextIteration and LoopCond pass their input on; Switch sends it to one of two outputs;
 * Merge forwards the first of its inputs to arrive. The executor gives them their meaning (frames,
 * iterations, dead tensors: runtime/exec/frames.c). */
static tfd_code infer_enter(tfd_infer_ctx *c, tfd_status *st) {
  const tfd_attr_value *f = attr(c, "frame_name");
  if (!f || f->type != TFD_ATTR_STRING || !f->s || !*f->s)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "The Enter node '%s' must have a frame name.", node_name(c));
  const tfd_attr_value *p = attr(c, "parallel_iterations");
  if (p && p->i < 1)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (Enter): parallel_iterations must be positive, got %lld", node_name(c),
                           (long long)p->i);
  return tfd_infer_same(c, st);
}

static tfd_code infer_loop_cond(tfd_infer_ctx *c, tfd_status *st) {
  if (tfd_infer_need_bool(c, 0, "input", st) != TFD_OK || tfd_infer_need_rank(c, 0, 0, "input", st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  c->out_types[0] = TFD_BOOL;
  c->out_shapes[0].ndims = 0;
  return TFD_OK;
}

static tfd_code infer_switch(tfd_infer_ctx *c, tfd_status *st) {
  if (tfd_infer_need_bool(c, 1, "pred", st) != TFD_OK || tfd_infer_need_rank(c, 1, 0, "pred", st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  for (int o = 0; o < 2; o++) {
    c->out_types[o] = c->in_types[0];
    c->out_shapes[o] = c->in_shapes[0];
  }
  return TFD_OK;
}

/* Merge: every input of dtype T (an input whose dtype is 0 is a loop's NextIteration, not inferred
 * yet: graph.c checks it once it is). The shape is TensorFlow's MergeShape: the inputs' shape where
 * all have one rank, sizes they disagree on unknown; an unknown rank anywhere makes it unknown. */
static tfd_code infer_merge(tfd_infer_ctx *c, tfd_status *st) {
  const tfd_attr_value *n = attr(c, "N");
  if (n && (n->type != TFD_ATTR_INT || n->i != c->num_inputs))
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (Merge): N is %lld but the node has %d inputs",
                           node_name(c), n->type == TFD_ATTR_INT ? (long long)n->i : -1LL, c->num_inputs);
  tfd_dtype t = attr(c, "T") ? attr(c, "T")->dtype : 0;
  for (int i = 0; i < c->num_inputs; i++) {
    if (!t) t = c->in_types[i];
    if (c->in_types[i] && c->in_types[i] != t)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (Merge): input %d is %s but T is %s", node_name(c), i,
                             tfd_dtype_name(c->in_types[i]), tfd_dtype_name(t));
  }
  c->out_types[0] = t;
  c->out_types[1] = TFD_INT32;
  c->out_shapes[1].ndims = 0;
  tfd_shape s = c->in_shapes[0];
  for (int i = 1; i < c->num_inputs && s.ndims >= 0; i++) {
    const tfd_shape *o = &c->in_shapes[i];
    if (o->ndims != s.ndims) {
      s.ndims = -1;
      break;
    }
    for (int d = 0; d < s.ndims; d++)
      if (s.dims[d] != o->dims[d]) s.dims[d] = -1;
  }
  c->out_shapes[0] = s;
  return TFD_OK;
}

static const tfd_attr_def attrs_enter[] = {A_T,
                                           {"frame_name", TFD_ATTR_STRING, true, 0, 0, NULL},
                                           {"is_constant", TFD_ATTR_BOOL, false, 0, 0, NULL},
                                           {"parallel_iterations", TFD_ATTR_INT, false, 10, 0, NULL},
                                           END};

static const tfd_attr_def attrs_merge[] = {A_T, {"N", TFD_ATTR_INT, false, 0, 0, NULL}, END};

/* One row per op: clang-format would give each field a line. */
/* clang-format off */
static const tfd_op_def control_flow_ops[] = {
    {.name = "NoOp", .cheap = true, .attrs = tfd_attrs_none, .infer = tfd_infer_none},
    {.name = "Enter", .min_inputs = 1, .max_inputs = 1, .num_outputs = 1, .cheap = true, .type_attr = "T",
     .allowed_types = TFD_TYPES_ANY_AND_VARIANT, .attrs = attrs_enter, .infer = infer_enter},
    {.name = "Exit", .min_inputs = 1, .max_inputs = 1, .num_outputs = 1, .cheap = true, .type_attr = "T",
     .allowed_types = TFD_TYPES_ANY_AND_VARIANT, .attrs = tfd_attrs_t, .infer = tfd_infer_same},
    {.name = "NextIteration", .min_inputs = 1, .max_inputs = 1, .num_outputs = 1, .cheap = true, .type_attr = "T",
     .allowed_types = TFD_TYPES_ANY_AND_VARIANT, .attrs = tfd_attrs_t, .infer = tfd_infer_same},
    {.name = "LoopCond", .min_inputs = 1, .max_inputs = 1, .num_outputs = 1, .cheap = true, .attrs = tfd_attrs_none,
     .infer = infer_loop_cond},
    {.name = "Switch", .min_inputs = 2, .max_inputs = 2, .num_outputs = 2, .cheap = true, .type_attr = "T",
     .allowed_types = TFD_TYPES_ANY_AND_VARIANT, .attrs = tfd_attrs_t, .infer = infer_switch},
    {.name = "Merge", .min_inputs = 1, .max_inputs = -1, .num_outputs = 2, .cheap = true, .type_attr = "T",
     .allowed_types = TFD_TYPES_ANY_AND_VARIANT, .attrs = attrs_merge, .infer = infer_merge},
    {.name = "ControlTrigger", .cheap = true, .attrs = tfd_attrs_none, .infer = tfd_infer_none},
};
/* clang-format on */

const tfd_op_family tfd_control_flow_ops = {"control_flow", control_flow_ops,
                                            (int)(sizeof control_flow_ops / sizeof control_flow_ops[0])};
