/* Ragged ops, as TensorFlow's core/ops/ragged_*_ops.cc defines them: RaggedRange, RaggedGather and
 * RaggedTensorToTensor. Their definitions and shape functions. */
#include "common_shape_fns.h"

/* RaggedRange: rt_nested_splits [nrows + 1] of Tsplits (nrows the length of whichever input is a
 * vector, 1 when all are scalars), rt_dense_values [?] of T. */
static tfd_code infer_ragged_range(tfd_infer_ctx *c, tfd_status *st) {
  static const char *const names[3] = {"starts", "limits", "deltas"};
  int64_t nrows = 1;
  for (int i = 0; i < 3; i++) {
    if (i > 0 && tfd_infer_same_types(c, 0, i, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
    const tfd_shape *s = &c->in_shapes[i];
    if (s->ndims > 1)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                             "node '%s' (RaggedRange): %s must be a scalar or vector, got rank %d", node_name(c),
                             names[i], s->ndims);
    if (s->ndims < 0 || (s->ndims == 1 && s->dims[0] < 0))
      nrows = -1;
    else if (s->ndims == 1 && nrows >= 0)
      nrows = s->dims[0];
  }
  const tfd_attr_value *sp = attr(c, "Tsplits");
  c->out_types[0] = sp && sp->type == TFD_ATTR_TYPE ? sp->dtype : TFD_INT64;
  if (c->out_types[0] != TFD_INT32 && c->out_types[0] != TFD_INT64)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (RaggedRange): Tsplits must be int32 or int64, got %s",
                           node_name(c), tfd_dtype_name(c->out_types[0]));
  c->out_shapes[0] = (tfd_shape){.ndims = 1, .dims = {nrows < 0 ? -1 : nrows + 1}};
  c->out_types[1] = c->in_types[0];
  c->out_shapes[1] = (tfd_shape){.ndims = 1, .dims = {-1}};
  return TFD_OK;
}

/* RaggedTensorToTensor: T's dtype; the shape input's value when constant (sizes of -1 unknown), else
 * unknown. row_partition_types must name one tensor each. */
static tfd_code infer_ragged_to_tensor(tfd_infer_ctx *c, tfd_status *st) {
  const tfd_attr_value *types = attr(c, "row_partition_types");
  if (!types || types->type != TFD_ATTR_LIST_STRING || types->list_len < 1)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (RaggedTensorToTensor): No row_partition_types given.",
                           node_name(c));
  if ((int)types->list_len != c->num_inputs - 3)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (RaggedTensorToTensor): %d row_partition_types but %d row_partition_tensors",
                           node_name(c), (int)types->list_len, c->num_inputs - 3);
  if (tfd_infer_need_index(c, 0, "shape", st) != TFD_OK || tfd_infer_same_types(c, 1, 2, st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  for (int i = 3; i < c->num_inputs; i++)
    if (tfd_infer_need_index(c, i, "row_partition_tensors", st) != TFD_OK ||
        tfd_infer_same_types(c, 3, i, st) != TFD_OK)
      return TFD_INVALID_ARGUMENT;
  c->out_types[0] = c->in_types[1];
  const tfd_tensor *shape = c->in_values ? c->in_values[0] : NULL;
  if (shape && tfd_tensor_ndims(shape) == 1 && tfd_tensor_numel(shape) <= TFD_MAX_DIMS) {
    tfd_shape *o = &c->out_shapes[0];
    o->ndims = (int)tfd_tensor_numel(shape);
    for (int d = 0; d < o->ndims; d++)
      o->dims[d] = tfd_tensor_get_index(shape, d) < 0 ? -1 : tfd_tensor_get_index(shape, d);
  } else {
    unknown(&c->out_shapes[0]);
  }
  return TFD_OK;
}

static const tfd_attr_def attrs_ragged_range[] = {A_T, {"Tsplits", TFD_ATTR_TYPE, false, TFD_INT64, 0, NULL}, END};

static const tfd_attr_def attrs_ragged_to_tensor[] = {A_T,
                                                      {"Tindex", TFD_ATTR_TYPE, false, 0, 0, NULL},
                                                      {"Tshape", TFD_ATTR_TYPE, false, 0, 0, NULL},
                                                      {"num_row_partition_tensors", TFD_ATTR_INT, false, 0, 0, NULL},
                                                      {"row_partition_types", TFD_ATTR_LIST_STRING, true, 0, 0, NULL},
                                                      END};

/* RaggedGather: TensorFlow's shape function. PARAMS_RAGGED_RANK splits vectors, the values (rank at
 * least 1) and indices of rank OUTPUT_RAGGED_RANK - PARAMS_RAGGED_RANK + 1; OUTPUT_RAGGED_RANK splits
 * vectors of unknown length, then the values with their first dimension unknown. */
static tfd_code infer_ragged_gather(tfd_infer_ctx *c, tfd_status *st) {
  const tfd_attr_value *p = attr(c, "PARAMS_RAGGED_RANK"), *o = attr(c, "OUTPUT_RAGGED_RANK");
  int64_t prr = p && p->type == TFD_ATTR_INT ? p->i : 0, orr = o && o->type == TFD_ATTR_INT ? o->i : -1;
  if (prr < 1 || prr != c->num_inputs - 2)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (RaggedGather): PARAMS_RAGGED_RANK is %lld but %d params_nested_splits are given",
                           node_name(c), (long long)prr, c->num_inputs - 2);
  if (orr + 1 != c->num_outputs)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (RaggedGather): OUTPUT_RAGGED_RANK %lld gives %lld outputs, not %d", node_name(c),
                           (long long)orr, (long long)orr + 1, c->num_outputs);
  int vi = (int)prr, ii = (int)prr + 1;
  for (int i = 0; i < vi; i++)
    if (tfd_infer_need_index(c, i, "params_nested_splits", st) != TFD_OK ||
        tfd_infer_same_types(c, 0, i, st) != TFD_OK ||
        tfd_infer_need_rank(c, i, 1, "params_nested_splits", st) != TFD_OK)
      return TFD_INVALID_ARGUMENT;
  if (orr - prr + 1 < 0)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (RaggedGather): OUTPUT_RAGGED_RANK %lld is less than PARAMS_RAGGED_RANK - 1",
                           node_name(c), (long long)orr);
  if (tfd_infer_need_index(c, ii, "indices", st) != TFD_OK ||
      tfd_infer_need_rank(c, ii, (int)(orr - prr + 1), "indices", st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  const tfd_shape *v = &c->in_shapes[vi];
  if (v->ndims == 0)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (RaggedGather): Shape must be at least rank 1 but is rank 0", node_name(c));
  for (int i = 0; i < (int)orr; i++) {
    c->out_types[i] = c->in_types[0];
    c->out_shapes[i] = (tfd_shape){.ndims = 1, .dims = {-1}};
  }
  c->out_types[orr] = c->in_types[vi];
  c->out_shapes[orr] = *v;
  if (v->ndims > 0) c->out_shapes[orr].dims[0] = -1;
  return TFD_OK;
}

static const tfd_attr_def attrs_ragged_gather[] = {
    {"Tvalues", TFD_ATTR_TYPE, false, 0, 0, NULL},          {"Tindices", TFD_ATTR_TYPE, false, 0, 0, NULL},
    {"Tsplits", TFD_ATTR_TYPE, false, 0, 0, NULL},          {"PARAMS_RAGGED_RANK", TFD_ATTR_INT, true, 0, 0, NULL},
    {"OUTPUT_RAGGED_RANK", TFD_ATTR_INT, true, 0, 0, NULL}, END};

/* One row per op: clang-format would give each field a line. */
/* clang-format off */
static const tfd_op_def ragged_ops[] = {
    {.name = "RaggedRange", .min_inputs = 3, .max_inputs = 3, .num_outputs = 2, .type_attr = "T", .allowed_types = NUM,
     .attrs = attrs_ragged_range, .infer = infer_ragged_range},
    {.name = "RaggedTensorToTensor", .min_inputs = 4, .max_inputs = -1, .num_outputs = 1, .type_attr = "T",
     .type_input = 1, .allowed_types = ALL, .attrs = attrs_ragged_to_tensor, .infer = infer_ragged_to_tensor},
    {.name = "RaggedGather", .min_inputs = 3, .max_inputs = -1, .num_outputs = TFD_OUTPUTS_FROM_ATTR,
     .attrs = attrs_ragged_gather, .infer = infer_ragged_gather},
};
/* clang-format on */

const tfd_op_family tfd_ragged_ops = {"ragged", ragged_ops, (int)(sizeof ragged_ops / sizeof ragged_ops[0])};
