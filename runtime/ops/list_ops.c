/* TensorList ops, as TensorFlow's core/ops/list_ops.cc defines them: lists of tensors held in scalar variants. Their
 * definitions and shape functions. */
#include <string.h>

#include "common_shape_fns.h"

/* TensorList (TensorFlow's list_ops.cc):
 * A list is a scalar variant; its element dtype is an attr, its element shape a shape tensor (an int
 * vector with -1 for unknown sizes, or the scalar -1 for an unknown rank). */
static tfd_code need_list(tfd_infer_ctx *c, int i, tfd_status *st) {
  if (c->in_types[i] != TFD_VARIANT)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): input %d must be a TensorList (variant), got %s",
                           node_name(c), op_name(c), i, tfd_dtype_name(c->in_types[i]));
  return tfd_infer_need_rank(c, i, 0, "the list handle", st);
}

/* element_dtype: present (or inferred from its input) and a dtype lists hold. */
static tfd_code need_element_dtype(tfd_infer_ctx *c, tfd_dtype *out, tfd_status *st) {
  const tfd_attr_value *e = attr(c, "element_dtype");
  if (!e || !e->dtype)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): missing required attr 'element_dtype'",
                           node_name(c), op_name(c));
  if (!(TFD_TYPES_ALL & (1u << e->dtype)))
    return tfd_status_setf(
        st, TFD_INVALID_ARGUMENT, "node '%s' (%s): element_dtype %s is not supported (lists hold %s)", node_name(c),
        op_name(c), tfd_dtype_name(e->dtype), "float32, float64, int32, int64, bool, uint8 and float16 tensors");
  *out = e->dtype;
  return TFD_OK;
}

/* The shape an element_shape input names, when it is a constant: TensorShapeFromTensor. */
static void element_shape_of(tfd_infer_ctx *c, int i, tfd_shape *out) {
  const tfd_tensor *v = c->in_values ? c->in_values[i] : NULL;
  unknown(out);
  if (!v || !(TFD_TYPES_INDEX & (1u << tfd_tensor_dtype(v)))) return;
  if (tfd_tensor_ndims(v) == 0) return; /* -1: unknown rank (any other scalar: the kernel refuses it) */
  if (tfd_tensor_ndims(v) != 1 || tfd_tensor_numel(v) > TFD_MAX_DIMS) return;
  out->ndims = (int)tfd_tensor_numel(v);
  for (int d = 0; d < out->ndims; d++) {
    int64_t k = tfd_tensor_get_index(v, d);
    out->dims[d] = k < 0 ? -1 : k;
  }
}

static tfd_code need_shape_input(tfd_infer_ctx *c, int i, tfd_status *st) {
  if (tfd_infer_need_index(c, i, "element_shape", st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  if (c->in_shapes[i].ndims > 1)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (%s): element_shape (input %d) must be a scalar or a "
                           "vector, got rank %d",
                           node_name(c), op_name(c), i, c->in_shapes[i].ndims);
  return TFD_OK;
}

static void list_out(tfd_infer_ctx *c, int o) {
  c->out_types[o] = TFD_VARIANT;
  c->out_shapes[o].ndims = 0;
}

/* TensorListReserve(element_shape, num_elements) and EmptyTensorList(element_shape, max_num_elements). */
static tfd_code infer_list_reserve(tfd_infer_ctx *c, tfd_status *st) {
  tfd_dtype e;
  if (need_element_dtype(c, &e, st) != TFD_OK || need_shape_input(c, 0, st) != TFD_OK ||
      tfd_infer_need_int32(c, 1, strcmp(op_name(c), "EmptyTensorList") == 0 ? "max_num_elements" : "num_elements",
                           st) != TFD_OK ||
      tfd_infer_need_rank(c, 1, 0, "the element count", st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  list_out(c, 0);
  return TFD_OK;
}

static tfd_code infer_list_from_tensor(tfd_infer_ctx *c, tfd_status *st) {
  tfd_dtype e;
  if (need_element_dtype(c, &e, st) != TFD_OK || need_shape_input(c, 1, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  if (c->in_shapes[0].ndims == 0)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (TensorListFromTensor): Tensor must be at least a vector, but saw shape: []",
                           node_name(c));
  list_out(c, 0);
  return TFD_OK;
}

static tfd_code infer_list_set_item(tfd_infer_ctx *c, tfd_status *st) {
  tfd_dtype e;
  if (need_list(c, 0, st) != TFD_OK || tfd_infer_need_int32(c, 1, "index", st) != TFD_OK ||
      tfd_infer_need_rank(c, 1, 0, "index", st) != TFD_OK || need_element_dtype(c, &e, st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  list_out(c, 0);
  return TFD_OK;
}

static tfd_code infer_list_push_back(tfd_infer_ctx *c, tfd_status *st) {
  tfd_dtype e;
  if (need_list(c, 0, st) != TFD_OK || need_element_dtype(c, &e, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  list_out(c, 0);
  return TFD_OK;
}

static tfd_code infer_list_get_item(tfd_infer_ctx *c, tfd_status *st) {
  tfd_dtype e;
  if (need_list(c, 0, st) != TFD_OK || tfd_infer_need_int32(c, 1, "index", st) != TFD_OK ||
      tfd_infer_need_rank(c, 1, 0, "index", st) != TFD_OK ||
      tfd_infer_need_int32(c, 2, "element_shape", st) != TFD_OK || need_shape_input(c, 2, st) != TFD_OK ||
      need_element_dtype(c, &e, st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  c->out_types[0] = e;
  element_shape_of(c, 2, &c->out_shapes[0]);
  return TFD_OK;
}

static tfd_code infer_list_pop_back(tfd_infer_ctx *c, tfd_status *st) {
  tfd_dtype e;
  if (need_list(c, 0, st) != TFD_OK || tfd_infer_need_int32(c, 1, "element_shape", st) != TFD_OK ||
      need_shape_input(c, 1, st) != TFD_OK || need_element_dtype(c, &e, st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  list_out(c, 0);
  c->out_types[1] = e;
  element_shape_of(c, 1, &c->out_shapes[1]);
  return TFD_OK;
}

static tfd_code infer_list_stack(tfd_infer_ctx *c, tfd_status *st) {
  tfd_dtype e;
  if (need_list(c, 0, st) != TFD_OK || tfd_infer_need_int32(c, 1, "element_shape", st) != TFD_OK ||
      need_shape_input(c, 1, st) != TFD_OK || need_element_dtype(c, &e, st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  const tfd_attr_value *n = attr(c, "num_elements");
  if (n && n->i < -1)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (TensorListStack): num_elements must be -1 or at least 0, got %lld", node_name(c),
                           (long long)n->i);
  c->out_types[0] = e;
  tfd_shape es;
  element_shape_of(c, 1, &es);
  tfd_shape *o = &c->out_shapes[0];
  if (es.ndims < 0 || es.ndims >= TFD_MAX_DIMS) {
    unknown(o);
    return TFD_OK;
  }
  o->ndims = es.ndims + 1;
  o->dims[0] = n ? n->i : -1;
  for (int d = 0; d < es.ndims; d++) o->dims[d + 1] = es.dims[d];
  return TFD_OK;
}

static tfd_code infer_list_length(tfd_infer_ctx *c, tfd_status *st) {
  if (need_list(c, 0, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  c->out_types[0] = TFD_INT32;
  c->out_shapes[0].ndims = 0;
  return TFD_OK;
}

static tfd_code infer_list_element_shape(tfd_infer_ctx *c, tfd_status *st) {
  if (need_list(c, 0, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  const tfd_attr_value *t = attr(c, "shape_type");
  if (!t || !(TFD_TYPES_INDEX & (1u << t->dtype)))
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (TensorListElementShape): shape_type must be int32 or int64", node_name(c));
  c->out_types[0] = t->dtype;
  unknown(&c->out_shapes[0]);
  return TFD_OK;
}

static tfd_code infer_list_gather(tfd_infer_ctx *c, tfd_status *st) {
  tfd_dtype e;
  if (need_list(c, 0, st) != TFD_OK || tfd_infer_need_int32(c, 1, "indices", st) != TFD_OK ||
      tfd_infer_need_int32(c, 2, "element_shape", st) != TFD_OK || need_shape_input(c, 2, st) != TFD_OK ||
      need_element_dtype(c, &e, st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  c->out_types[0] = e;
  tfd_shape es;
  element_shape_of(c, 2, &es);
  tfd_shape *o = &c->out_shapes[0];
  if (es.ndims < 0 || es.ndims >= TFD_MAX_DIMS) {
    unknown(o);
    return TFD_OK;
  }
  o->ndims = es.ndims + 1;
  o->dims[0] = c->in_shapes[1].ndims == 1 ? c->in_shapes[1].dims[0] : -1;
  for (int d = 0; d < es.ndims; d++) o->dims[d + 1] = es.dims[d];
  return TFD_OK;
}

/* TensorListScatter(tensor, indices, element_shape) and V2's num_elements. */
static tfd_code infer_list_scatter(tfd_infer_ctx *c, tfd_status *st) {
  tfd_dtype e;
  if (need_element_dtype(c, &e, st) != TFD_OK || tfd_infer_need_int32(c, 1, "indices", st) != TFD_OK ||
      need_shape_input(c, 2, st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  if (c->num_inputs > 3 && (tfd_infer_need_int32(c, 3, "num_elements", st) != TFD_OK ||
                            tfd_infer_need_rank(c, 3, 0, "num_elements", st) != TFD_OK))
    return TFD_INVALID_ARGUMENT;
  list_out(c, 0);
  return TFD_OK;
}

static tfd_code infer_list_scatter_into(tfd_infer_ctx *c, tfd_status *st) {
  tfd_dtype e;
  if (need_list(c, 0, st) != TFD_OK || need_element_dtype(c, &e, st) != TFD_OK ||
      tfd_infer_need_int32(c, 2, "indices", st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  list_out(c, 0);
  return TFD_OK;
}

static tfd_code infer_list_resize(tfd_infer_ctx *c, tfd_status *st) {
  if (need_list(c, 0, st) != TFD_OK || tfd_infer_need_int32(c, 1, "size", st) != TFD_OK ||
      tfd_infer_need_rank(c, 1, 0, "size", st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  list_out(c, 0);
  return TFD_OK;
}

static tfd_code infer_list_split(tfd_infer_ctx *c, tfd_status *st) {
  tfd_dtype e;
  if (need_element_dtype(c, &e, st) != TFD_OK || need_shape_input(c, 1, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  if (c->in_types[2] != TFD_INT64)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): lengths (input 2) must be int64, got %s",
                           node_name(c), op_name(c), tfd_dtype_name(c->in_types[2]));
  list_out(c, 0);
  return TFD_OK;
}

/* TensorListConcat(handle) with its element_shape attr, TensorListConcatV2(handle, element_shape, leading_dims). */
static tfd_code infer_list_concat(tfd_infer_ctx *c, tfd_status *st) {
  tfd_dtype e;
  if (need_list(c, 0, st) != TFD_OK || need_element_dtype(c, &e, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  tfd_shape es;
  unknown(&es);
  if (c->num_inputs > 1) {
    if (need_shape_input(c, 1, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
    if (c->in_types[2] != TFD_INT64)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): leading_dims (input 2) must be int64, got %s",
                             node_name(c), op_name(c), tfd_dtype_name(c->in_types[2]));
    element_shape_of(c, 1, &es);
  } else {
    const tfd_attr_value *a = attr(c, "element_shape");
    if (a && a->type == TFD_ATTR_SHAPE) es = a->shape;
  }
  c->out_types[0] = e;
  tfd_shape *o = &c->out_shapes[0];
  if (es.ndims >= 1) {
    *o = es;
    o->dims[0] = -1;
  } else {
    unknown(o);
  }
  c->out_types[1] = TFD_INT64;
  c->out_shapes[1].ndims = 1;
  c->out_shapes[1].dims[0] = -1;
  return TFD_OK;
}

/* shape_type is inferred by hand (the registry infers one type attr per op): an absent one stays absent. */
static const tfd_attr_def attrs_list_reserve[] = {
    {"element_dtype", TFD_ATTR_TYPE, true, 0, 0, NULL}, {"shape_type", TFD_ATTR_TYPE, false, 0, 0, NULL}, END};

static const tfd_attr_def attrs_list_from_tensor[] = {
    {"element_dtype", TFD_ATTR_TYPE, false, 0, 0, NULL}, {"shape_type", TFD_ATTR_TYPE, false, 0, 0, NULL}, END};

static const tfd_attr_def attrs_list_set_item[] = {{"element_dtype", TFD_ATTR_TYPE, false, 0, 0, NULL},
                                                   {"resize_if_index_out_of_bounds", TFD_ATTR_BOOL, false, 0, 0, NULL},
                                                   END};

static const tfd_attr_def attrs_list_element[] = {{"element_dtype", TFD_ATTR_TYPE, true, 0, 0, NULL}, END};

static const tfd_attr_def attrs_list_push_back[] = {{"element_dtype", TFD_ATTR_TYPE, false, 0, 0, NULL}, END};

static const tfd_attr_def attrs_list_stack[] = {
    {"element_dtype", TFD_ATTR_TYPE, true, 0, 0, NULL}, {"num_elements", TFD_ATTR_INT, false, -1, 0, NULL}, END};

static const tfd_attr_def attrs_list_shape[] = {{"shape_type", TFD_ATTR_TYPE, true, 0, 0, NULL}, END};

/* TensorList gather/scatter/split/concat/resize (issue 26, lists helper) */
static const tfd_attr_def attrs_list_concat[] = {
    {"element_dtype", TFD_ATTR_TYPE, true, 0, 0, NULL}, {"element_shape", TFD_ATTR_SHAPE, false, 0, 0, NULL}, END};

static const tfd_attr_def attrs_list_concat_v2[] = {
    {"element_dtype", TFD_ATTR_TYPE, true, 0, 0, NULL}, {"shape_type", TFD_ATTR_TYPE, false, 0, 0, NULL}, END};

/* One row per op: clang-format would give each field a line. */
/* clang-format off */
static const tfd_op_def list_ops[] = {
    {.name = "TensorListReserve", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .attrs = attrs_list_reserve,
     .infer = infer_list_reserve},
    {.name = "EmptyTensorList", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .attrs = attrs_list_reserve,
     .infer = infer_list_reserve},
    {.name = "TensorListFromTensor", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .type_attr = "element_dtype",
     .allowed_types = TFD_TYPES_ALL, .attrs = attrs_list_from_tensor, .infer = infer_list_from_tensor},
    {.name = "TensorListSetItem", .min_inputs = 3, .max_inputs = 3, .num_outputs = 1, .type_attr = "element_dtype",
     .type_input = 2, .allowed_types = TFD_TYPES_ALL, .attrs = attrs_list_set_item, .infer = infer_list_set_item},
    {.name = "TensorListPushBack", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .type_attr = "element_dtype",
     .type_input = 1, .allowed_types = TFD_TYPES_ALL, .attrs = attrs_list_push_back, .infer = infer_list_push_back},
    {.name = "TensorListGetItem", .min_inputs = 3, .max_inputs = 3, .num_outputs = 1, .attrs = attrs_list_element,
     .infer = infer_list_get_item},
    {.name = "TensorListPopBack", .min_inputs = 2, .max_inputs = 2, .num_outputs = 2, .attrs = attrs_list_element,
     .infer = infer_list_pop_back},
    {.name = "TensorListStack", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .attrs = attrs_list_stack,
     .infer = infer_list_stack},
    {.name = "TensorListLength", .min_inputs = 1, .max_inputs = 1, .num_outputs = 1, .attrs = tfd_attrs_none,
     .infer = infer_list_length},
    {.name = "TensorListElementShape", .min_inputs = 1, .max_inputs = 1, .num_outputs = 1, .attrs = attrs_list_shape,
     .infer = infer_list_element_shape},
    {.name = "TensorListGather", .min_inputs = 3, .max_inputs = 3, .num_outputs = 1, .attrs = attrs_list_element,
     .infer = infer_list_gather},
    {.name = "TensorListScatter", .min_inputs = 3, .max_inputs = 3, .num_outputs = 1, .type_attr = "element_dtype",
     .allowed_types = TFD_TYPES_ALL, .attrs = attrs_list_from_tensor, .infer = infer_list_scatter},
    {.name = "TensorListScatterV2", .min_inputs = 4, .max_inputs = 4, .num_outputs = 1, .type_attr = "element_dtype",
     .allowed_types = TFD_TYPES_ALL, .attrs = attrs_list_from_tensor, .infer = infer_list_scatter},
    {.name = "TensorListScatterIntoExistingList", .min_inputs = 3, .max_inputs = 3, .num_outputs = 1,
     .type_attr = "element_dtype", .type_input = 1, .allowed_types = TFD_TYPES_ALL, .attrs = attrs_list_push_back,
     .infer = infer_list_scatter_into},
    {.name = "TensorListResize", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .attrs = tfd_attrs_none,
     .infer = infer_list_resize},
    {.name = "TensorListSplit", .min_inputs = 3, .max_inputs = 3, .num_outputs = 1, .type_attr = "element_dtype",
     .allowed_types = TFD_TYPES_ALL, .attrs = attrs_list_from_tensor, .infer = infer_list_split},
    {.name = "TensorListConcat", .min_inputs = 1, .max_inputs = 1, .num_outputs = 2, .attrs = attrs_list_concat,
     .infer = infer_list_concat},
    {.name = "TensorListConcatV2", .min_inputs = 3, .max_inputs = 3, .num_outputs = 2, .attrs = attrs_list_concat_v2,
     .infer = infer_list_concat},
};
/* clang-format on */

const tfd_op_family tfd_list_ops = {"list", list_ops, (int)(sizeof list_ops / sizeof list_ops[0])};
