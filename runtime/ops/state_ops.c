/* State ops, as TensorFlow's core/ops/resource_variable_ops.cc and data_flow_ops.cc defines them: resource variables
 * and session handles. Their definitions and shape functions. */
#include "common_shape_fns.h"

static tfd_code infer_read_variable(tfd_infer_ctx *c, tfd_status *st) {
  if (tfd_infer_need_resource(c, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  c->out_types[0] = attr(c, "dtype")->dtype;
  unknown(&c->out_shapes[0]);
  return TFD_OK;
}

static tfd_code infer_assign_variable(tfd_infer_ctx *c, tfd_status *st) {
  if (tfd_infer_need_resource(c, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  if (c->in_types[1] != attr(c, "dtype")->dtype)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): value is %s but the variable is %s", node_name(c),
                           tfd_node_def_op(c->node), tfd_dtype_name(c->in_types[1]),
                           tfd_dtype_name(attr(c, "dtype")->dtype));
  return TFD_OK;
}

static tfd_code infer_session_handle(tfd_infer_ctx *c, tfd_status *st) {
  (void)st;
  c->out_types[0] = TFD_INT64;
  c->out_shapes[0].ndims = 0;
  return TFD_OK;
}

static tfd_code need_handle(tfd_infer_ctx *c, tfd_status *st) {
  if (c->in_types[0] != TFD_INT64)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): the handle must be int64, got %s", node_name(c),
                           tfd_node_def_op(c->node), tfd_dtype_name(c->in_types[0]));
  return TFD_OK;
}

static tfd_code infer_session_tensor(tfd_infer_ctx *c, tfd_status *st) {
  if (need_handle(c, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  c->out_types[0] = attr(c, "dtype")->dtype;
  unknown(&c->out_shapes[0]);
  return TFD_OK;
}

static const tfd_attr_def attrs_var[] = {{"dtype", TFD_ATTR_TYPE, true, 0, 0, NULL},
                                         {"shape", TFD_ATTR_SHAPE, false, 0, 0, NULL},
                                         {"container", TFD_ATTR_STRING, false, 0, 0, ""},
                                         {"shared_name", TFD_ATTR_STRING, false, 0, 0, ""},
                                         END};

static const tfd_attr_def attrs_read_var[] = {{"dtype", TFD_ATTR_TYPE, true, 0, 0, NULL}, END};

/* One row per op: clang-format would give each field a line. */
/* clang-format off */
static const tfd_op_def state_ops[] = {
    {.name = "VarHandleOp", .num_outputs = 1, .stateful = true, .cheap = true, .attrs = attrs_var,
     .infer = tfd_infer_var_handle},
    {.name = "ReadVariableOp", .min_inputs = 1, .max_inputs = 1, .num_outputs = 1, .cheap = true,
     .attrs = attrs_read_var, .infer = infer_read_variable},
    {.name = "AssignVariableOp", .min_inputs = 2, .max_inputs = 2, .stateful = true, .cheap = true,
     .attrs = attrs_read_var, .infer = infer_assign_variable},
    {.name = "AssignAddVariableOp", .min_inputs = 2, .max_inputs = 2, .stateful = true, .attrs = attrs_read_var,
     .infer = infer_assign_variable},
    {.name = "GetSessionHandle", .min_inputs = 1, .max_inputs = 1, .num_outputs = 1, .stateful = true, .cheap = true,
     .type_attr = "T", .attrs = tfd_attrs_t, .infer = infer_session_handle},
    {.name = "GetSessionTensor", .min_inputs = 1, .max_inputs = 1, .num_outputs = 1, .stateful = true, .cheap = true,
     .attrs = attrs_read_var, .infer = infer_session_tensor},
    {.name = "DeleteSessionTensor", .min_inputs = 1, .max_inputs = 1, .stateful = true, .cheap = true,
     .attrs = tfd_attrs_none, .infer = need_handle},
};
/* clang-format on */

const tfd_op_family tfd_state_ops = {"state", state_ops, (int)(sizeof state_ops / sizeof state_ops[0])};
