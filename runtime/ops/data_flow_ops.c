/* Data-flow ops, as TensorFlow's core/ops/data_flow_ops.cc defines them: FIFO queues and TensorFlow 1's TensorArrays.
 * Their definitions and shape functions. */
#include <string.h>

#include "common_shape_fns.h"

static tfd_code infer_queue(tfd_infer_ctx *c, tfd_status *st) {
  const tfd_attr_value *t = attr(c, "component_types");
  if (t->list_len < 1 || t->list_len > TFD_MAX_QUEUE_COMPONENTS)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s': component_types must list 1 to %d dtypes",
                           node_name(c), TFD_MAX_QUEUE_COMPONENTS);
  return tfd_infer_var_handle(c, st);
}

static tfd_code infer_enqueue(tfd_infer_ctx *c, tfd_status *st) {
  if (tfd_infer_need_resource(c, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  const tfd_attr_value *t = attr(c, "Tcomponents");
  if (t && t->type == TFD_ATTR_LIST_TYPE) {
    if ((int)t->list_len != c->num_inputs - 1)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): Tcomponents lists %d dtypes for %d components",
                             node_name(c), tfd_node_def_op(c->node), (int)t->list_len, c->num_inputs - 1);
    for (int i = 1; i < c->num_inputs; i++)
      if (t->list_type[i - 1] != c->in_types[i])
        return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): component %d is %s but Tcomponents says %s",
                               node_name(c), tfd_node_def_op(c->node), i - 1, tfd_dtype_name(c->in_types[i]),
                               tfd_dtype_name(t->list_type[i - 1]));
  }
  return TFD_OK;
}

static tfd_code infer_dequeue(tfd_infer_ctx *c, tfd_status *st) {
  if (tfd_infer_need_resource(c, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  const tfd_attr_value *t = attr(c, "component_types");
  for (int i = 0; i < c->num_outputs; i++) {
    c->out_types[i] = t->list_type[i];
    unknown(&c->out_shapes[i]);
  }
  return TFD_OK;
}

static tfd_code infer_queue_size(tfd_infer_ctx *c, tfd_status *st) {
  if (tfd_infer_need_resource(c, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  c->out_types[0] = TFD_INT32;
  c->out_shapes[0].ndims = 0;
  return TFD_OK;
}

static tfd_code infer_queue_close(tfd_infer_ctx *c, tfd_status *st) { return tfd_infer_need_resource(c, st); }

/* TensorArray V3 (TensorFlow 1's data_flow_ops.cc; k_tensor_array.c):
 * A handle is a resource scalar; the float "flow" scalars only order the ops on one array. */
static tfd_code need_ta_inputs(tfd_infer_ctx *c, int flow, tfd_status *st) {
  if (c->in_types[0] != TFD_RESOURCE)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (%s): input 0 must be a TensorArray handle (resource), got %s", node_name(c),
                           op_name(c), tfd_dtype_name(c->in_types[0]));
  if (flow >= 0 && c->in_types[flow] != TFD_FLOAT32)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): flow_in (input %d) must be float32, got %s",
                           node_name(c), op_name(c), flow, tfd_dtype_name(c->in_types[flow]));
  return tfd_infer_need_rank(c, 0, 0, "the TensorArray handle", st);
}

static void scalar_out(tfd_infer_ctx *c, int i, tfd_dtype dt) {
  c->out_types[i] = dt;
  c->out_shapes[i].ndims = 0;
}

static tfd_code infer_tensor_array(tfd_infer_ctx *c, tfd_status *st) {
  const char *op = op_name(c) + strlen("TensorArray");
  const tfd_attr_value *dt = attr(c, "dtype");
  if (strcmp(op, "V3") == 0) {
    if (tfd_infer_need_int32(c, 0, "size", st) != TFD_OK || tfd_infer_need_rank(c, 0, 0, "size", st) != TFD_OK)
      return TFD_INVALID_ARGUMENT;
    scalar_out(c, 0, TFD_RESOURCE);
    scalar_out(c, 1, TFD_FLOAT32);
    return TFD_OK;
  }
  bool write = strcmp(op, "WriteV3") == 0, read = strcmp(op, "ReadV3") == 0, gather = strcmp(op, "GatherV3") == 0;
  bool scatter = strcmp(op, "ScatterV3") == 0, split = strcmp(op, "SplitV3") == 0, concat = strcmp(op, "ConcatV3") == 0;
  int flow = write || scatter || split ? 3 : read || gather ? 2 : strcmp(op, "CloseV3") == 0 ? -1 : 1;
  if (need_ta_inputs(c, flow, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  if ((write || read || gather || scatter) &&
      tfd_infer_need_int32(c, 1, write || read ? "index" : "indices", st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  if (split && c->in_types[2] != TFD_INT64)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): lengths (input 2) must be int64, got %s",
                           node_name(c), op_name(c), tfd_dtype_name(c->in_types[2]));
  if (write || scatter || split) {
    scalar_out(c, 0, TFD_FLOAT32);
  } else if (read || gather || concat) {
    c->out_types[0] = dt ? dt->dtype : 0;
    unknown(&c->out_shapes[0]);
    const tfd_attr_value *es = attr(c, "element_shape");
    if (gather && es && es->type == TFD_ATTR_SHAPE && es->shape.ndims >= 0 && es->shape.ndims < TFD_MAX_DIMS) {
      tfd_shape *o = &c->out_shapes[0];
      o->ndims = es->shape.ndims + 1;
      o->dims[0] = c->in_shapes[1].ndims == 1 ? c->in_shapes[1].dims[0] : -1;
      for (int d = 0; d < es->shape.ndims; d++) o->dims[d + 1] = es->shape.dims[d];
    }
    if (concat) {
      c->out_types[1] = TFD_INT64;
      c->out_shapes[1].ndims = 1;
      c->out_shapes[1].dims[0] = -1;
    }
  } else if (strcmp(op, "SizeV3") == 0) {
    scalar_out(c, 0, TFD_INT32);
  }
  return TFD_OK;
}

static const tfd_attr_def attrs_ta_v3[] = {{"dtype", TFD_ATTR_TYPE, true, 0, 0, NULL},
                                           {"element_shape", TFD_ATTR_SHAPE, false, 0, 0, NULL},
                                           {"dynamic_size", TFD_ATTR_BOOL, false, 0, 0, NULL},
                                           {"clear_after_read", TFD_ATTR_BOOL, false, 1, 0, NULL},
                                           {"identical_element_shapes", TFD_ATTR_BOOL, false, 0, 0, NULL},
                                           {"tensor_array_name", TFD_ATTR_STRING, false, 0, 0, ""},
                                           END};

static const tfd_attr_def attrs_ta_read[] = {{"dtype", TFD_ATTR_TYPE, true, 0, 0, NULL}, END};

static const tfd_attr_def attrs_ta_gather[] = {
    {"dtype", TFD_ATTR_TYPE, true, 0, 0, NULL}, {"element_shape", TFD_ATTR_SHAPE, false, 0, 0, NULL}, END};

static const tfd_attr_def attrs_ta_concat[] = {
    {"dtype", TFD_ATTR_TYPE, true, 0, 0, NULL}, {"element_shape_except0", TFD_ATTR_SHAPE, false, 0, 0, NULL}, END};

static const tfd_attr_def attrs_queue[] = {{"component_types", TFD_ATTR_LIST_TYPE, true, 0, 0, NULL},
                                           {"capacity", TFD_ATTR_INT, false, -1, 0, NULL},
                                           {"container", TFD_ATTR_STRING, false, 0, 0, ""},
                                           {"shared_name", TFD_ATTR_STRING, false, 0, 0, ""},
                                           END};

static const tfd_attr_def attrs_enqueue[] = {{"Tcomponents", TFD_ATTR_LIST_TYPE, false, 0, 0, NULL}, END};

static const tfd_attr_def attrs_dequeue[] = {{"component_types", TFD_ATTR_LIST_TYPE, true, 0, 0, NULL}, END};

static const tfd_attr_def attrs_queue_close[] = {{"cancel_pending_enqueues", TFD_ATTR_BOOL, false, 0, 0, NULL}, END};

/* One row per op: clang-format would give each field a line. */
/* clang-format off */
static const tfd_op_def data_flow_ops[] = {
    {.name = "FIFOQueueV2", .num_outputs = 1, .stateful = true, .cheap = true, .attrs = attrs_queue,
     .infer = infer_queue},
    {.name = "QueueEnqueueV2", .min_inputs = 2, .max_inputs = -1, .stateful = true, .cheap = true,
     .attrs = attrs_enqueue, .infer = infer_enqueue},
    {.name = "QueueDequeueV2", .min_inputs = 1, .max_inputs = 1, .num_outputs = TFD_OUTPUTS_PER_COMPONENT,
     .stateful = true, .cheap = true, .attrs = attrs_dequeue, .infer = infer_dequeue},
    {.name = "QueueSizeV2", .min_inputs = 1, .max_inputs = 1, .num_outputs = 1, .cheap = true, .attrs = tfd_attrs_none,
     .infer = infer_queue_size},
    {.name = "QueueCloseV2", .min_inputs = 1, .max_inputs = 1, .stateful = true, .cheap = true,
     .attrs = attrs_queue_close, .infer = infer_queue_close},
    {.name = "TensorArrayV3", .min_inputs = 1, .max_inputs = 1, .num_outputs = 2, .stateful = true,
     .attrs = attrs_ta_v3, .infer = infer_tensor_array},
    {.name = "TensorArrayWriteV3", .min_inputs = 4, .max_inputs = 4, .num_outputs = 1, .stateful = true,
     .type_attr = "T", .type_input = 2, .allowed_types = ALL, .attrs = tfd_attrs_t, .infer = infer_tensor_array},
    {.name = "TensorArrayReadV3", .min_inputs = 3, .max_inputs = 3, .num_outputs = 1, .stateful = true,
     .attrs = attrs_ta_read, .infer = infer_tensor_array},
    {.name = "TensorArrayGatherV3", .min_inputs = 3, .max_inputs = 3, .num_outputs = 1, .stateful = true,
     .attrs = attrs_ta_gather, .infer = infer_tensor_array},
    {.name = "TensorArrayScatterV3", .min_inputs = 4, .max_inputs = 4, .num_outputs = 1, .stateful = true,
     .type_attr = "T", .type_input = 2, .allowed_types = ALL, .attrs = tfd_attrs_t, .infer = infer_tensor_array},
    {.name = "TensorArraySizeV3", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .stateful = true,
     .attrs = tfd_attrs_none, .infer = infer_tensor_array},
    {.name = "TensorArrayCloseV3", .min_inputs = 1, .max_inputs = 1, .stateful = true, .attrs = tfd_attrs_none,
     .infer = infer_tensor_array},
    {.name = "TensorArrayConcatV3", .min_inputs = 2, .max_inputs = 2, .num_outputs = 2, .stateful = true,
     .attrs = attrs_ta_concat, .infer = infer_tensor_array},
    {.name = "TensorArraySplitV3", .min_inputs = 4, .max_inputs = 4, .num_outputs = 1, .stateful = true,
     .type_attr = "T", .type_input = 1, .allowed_types = ALL, .attrs = tfd_attrs_t, .infer = infer_tensor_array},
};
/* clang-format on */

const tfd_op_family tfd_data_flow_ops = {"data_flow", data_flow_ops,
                                         (int)(sizeof data_flow_ops / sizeof data_flow_ops[0])};
