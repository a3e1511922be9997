/* Array ops, as TensorFlow's core/ops/array_ops.cc defines them: constants, placeholders, identities, shapes, reshapes,
 * slicing, gathering, padding, scatters. Their definitions and shape functions. */
#include <stdint.h>
#include <string.h>

#include "../core/checked.h"
#include "common_shape_fns.h"

static tfd_code infer_const(tfd_infer_ctx *c, tfd_status *st) {
  const tfd_attr_value *v = attr(c, "value");
  if (!v || v->type != TFD_ATTR_TENSOR || !v->tensor)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s': Const needs a tensor attr 'value'", node_name(c));
  const tfd_attr_value *dt = attr(c, "dtype");
  if (dt && dt->dtype != tfd_tensor_dtype(v->tensor))
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s': dtype %s does not match value of type %s",
                           node_name(c), tfd_dtype_name(dt->dtype), tfd_dtype_name(tfd_tensor_dtype(v->tensor)));
  c->out_types[0] = tfd_tensor_dtype(v->tensor);
  tfd_shape_of_tensor(v->tensor, &c->out_shapes[0]);
  return TFD_OK;
}

static tfd_code infer_placeholder_with_default(tfd_infer_ctx *c, tfd_status *st) {
  if (c->in_types[0] != attr(c, "dtype")->dtype)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s': default is %s but dtype is %s", node_name(c),
                           tfd_dtype_name(c->in_types[0]), tfd_dtype_name(attr(c, "dtype")->dtype));
  c->out_types[0] = c->in_types[0];
  const tfd_attr_value *s = attr(c, "shape");
  c->out_shapes[0] = s && s->type == TFD_ATTR_SHAPE && s->shape.ndims >= 0 ? s->shape : c->in_shapes[0];
  return TFD_OK;
}

/* MirrorPad: Pad's shapes; mode REFLECT or SYMMETRIC. */
static tfd_code infer_pad(tfd_infer_ctx *c, tfd_status *st);

static tfd_code infer_mirror_pad(tfd_infer_ctx *c, tfd_status *st) {
  const char *mode = attr(c, "mode")->s;
  if (strcmp(mode, "REFLECT") != 0 && strcmp(mode, "SYMMETRIC") != 0)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (MirrorPad): mode must be REFLECT or SYMMETRIC, got '%s'", node_name(c), mode);
  return infer_pad(c, st);
}

static const tfd_attr_def attrs_mirror_pad[] = {{"T", TFD_ATTR_TYPE, false, 0, 0, NULL},
                                                {"Tpaddings", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL},
                                                {"mode", TFD_ATTR_STRING, true, 0, 0, NULL},
                                                {NULL, 0, false, 0, 0, NULL}};

static tfd_code infer_pad(tfd_infer_ctx *c, tfd_status *st) {
  if (tfd_infer_need_index(c, 1, "paddings", st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  c->out_types[0] = c->in_types[0];
  const tfd_shape *x = &c->in_shapes[0];
  const tfd_tensor *pads = c->in_values ? c->in_values[1] : NULL;
  tfd_shape *o = &c->out_shapes[0];
  *o = *x;
  if (x->ndims < 0) return TFD_OK;
  if (c->in_shapes[1].ndims >= 0 &&
      (c->in_shapes[1].ndims != 2 || (c->in_shapes[1].dims[0] >= 0 && c->in_shapes[1].dims[0] != x->ndims) ||
       (c->in_shapes[1].dims[1] >= 0 && c->in_shapes[1].dims[1] != 2)))
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): paddings must have shape [%d, 2]", node_name(c),
                           tfd_node_def_op(c->node), x->ndims);
  for (int d = 0; d < x->ndims; d++) {
    if (!pads || tfd_tensor_numel(pads) != 2 * x->ndims) {
      o->dims[d] = -1;
      continue;
    }
    int64_t lo = tfd_tensor_get_index(pads, 2 * d), hi = tfd_tensor_get_index(pads, 2 * d + 1);
    if (lo < 0 || hi < 0)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): paddings must not be negative", node_name(c),
                             tfd_node_def_op(c->node));
    o->dims[d] = x->dims[d] < 0 || lo > INT64_MAX / 4 || hi > INT64_MAX / 4 || x->dims[d] > INT64_MAX / 2
                     ? -1
                     : x->dims[d] + lo + hi;
  }
  return TFD_OK;
}

static const tfd_attr_def attrs_expand_dims[] = {A_T, {"Tdim", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL}, END};

static const tfd_attr_def attrs_squeeze[] = {A_T, {"squeeze_dims", TFD_ATTR_LIST_INT, false, 0, 0, NULL}, END};

static const tfd_attr_def attrs_pack[] = {
    A_T, {"N", TFD_ATTR_INT, false, 0, 0, NULL}, {"axis", TFD_ATTR_INT, false, 0, 0, NULL}, END};

static const tfd_attr_def attrs_unpack[] = {
    A_T, {"num", TFD_ATTR_INT, true, 0, 0, NULL}, {"axis", TFD_ATTR_INT, false, 0, 0, NULL}, END};

static const tfd_attr_def attrs_slice[] = {A_T, {"Index", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL}, END};

static const tfd_attr_def attrs_strided_slice[] = {A_T,
                                                   {"Index", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL},
                                                   {"begin_mask", TFD_ATTR_INT, false, 0, 0, NULL},
                                                   {"end_mask", TFD_ATTR_INT, false, 0, 0, NULL},
                                                   {"ellipsis_mask", TFD_ATTR_INT, false, 0, 0, NULL},
                                                   {"new_axis_mask", TFD_ATTR_INT, false, 0, 0, NULL},
                                                   {"shrink_axis_mask", TFD_ATTR_INT, false, 0, 0, NULL},
                                                   END};

static const tfd_attr_def attrs_gather[] = {{"Tparams", TFD_ATTR_TYPE, false, 0, 0, NULL},
                                            {"Tindices", TFD_ATTR_TYPE, false, 0, 0, NULL},
                                            {"Taxis", TFD_ATTR_TYPE, false, 0, 0, NULL},
                                            {"batch_dims", TFD_ATTR_INT, false, 0, 0, NULL},
                                            END};

static const tfd_attr_def attrs_gather_nd[] = {
    {"Tparams", TFD_ATTR_TYPE, false, 0, 0, NULL}, {"Tindices", TFD_ATTR_TYPE, false, 0, 0, NULL}, END};

static const tfd_attr_def attrs_tile[] = {A_T, {"Tmultiples", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL}, END};

static const tfd_attr_def attrs_broadcast_to[] = {A_T, {"Tidx", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL}, END};

static const tfd_attr_def attrs_split[] = {A_T, {"num_split", TFD_ATTR_INT, true, 0, 0, NULL}, END};

static const tfd_attr_def attrs_split_v[] = {
    A_T, {"num_split", TFD_ATTR_INT, true, 0, 0, NULL}, {"Tlen", TFD_ATTR_TYPE, false, TFD_INT64, 0, NULL}, END};

static tfd_code infer_expand_dims(tfd_infer_ctx *c, tfd_status *st) {
  const tfd_shape *in = &c->in_shapes[0];
  bool known;
  int64_t axis = 0;
  c->out_types[0] = c->in_types[0];
  unknown(&c->out_shapes[0]);
  if (in->ndims >= TFD_MAX_DIMS)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (ExpandDims): the result would have more than %d dimensions", node_name(c),
                           TFD_MAX_DIMS);
  if (tfd_infer_const_axis(c, 1, in->ndims < 0 ? -1 : in->ndims + 1, &known, &axis, st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  if (!known) return TFD_OK;
  tfd_shape *o = &c->out_shapes[0];
  o->ndims = in->ndims + 1;
  for (int d = 0, s = 0; d < o->ndims; d++) o->dims[d] = d == axis ? 1 : in->dims[s++];
  return TFD_OK;
}

static tfd_code infer_squeeze(tfd_infer_ctx *c, tfd_status *st) {
  const tfd_shape *in = &c->in_shapes[0];
  const tfd_attr_value *sd = attr(c, "squeeze_dims");
  c->out_types[0] = c->in_types[0];
  tfd_shape *o = &c->out_shapes[0];
  unknown(o);
  if (in->ndims < 0) return TFD_OK;
  bool drop[TFD_MAX_DIMS] = {0};
  if (sd && sd->list_len > 0) {
    for (size_t i = 0; i < sd->list_len; i++) {
      int64_t a = sd->list_i[i];
      if (a < -in->ndims || a >= in->ndims)
        return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                               "node '%s' (Squeeze): squeeze_dims %lld is out of range [%d, %d)", node_name(c),
                               (long long)a, -in->ndims, in->ndims);
      if (a < 0) a += in->ndims;
      if (in->dims[a] >= 0 && in->dims[a] != 1)
        return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                               "node '%s' (Squeeze): Can not squeeze dim[%lld], expected a dimension of 1, got %lld",
                               node_name(c), (long long)a, (long long)in->dims[a]);
      drop[a] = true;
    }
  } else {
    for (int d = 0; d < in->ndims; d++) {
      if (in->dims[d] < 0) return TFD_OK; /* may or may not be 1 */
      drop[d] = in->dims[d] == 1;
    }
  }
  o->ndims = 0;
  for (int d = 0; d < in->ndims; d++)
    if (!drop[d]) o->dims[o->ndims++] = in->dims[d];
  return TFD_OK;
}

static tfd_code infer_pack(tfd_infer_ctx *c, tfd_status *st) {
  const tfd_attr_value *nattr = attr(c, "N");
  if (nattr && nattr->i != c->num_inputs)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (Pack): N is %lld but %d values are given",
                           node_name(c), (long long)nattr->i, c->num_inputs);
  tfd_shape s;
  unknown(&s);
  for (int i = 0; i < c->num_inputs; i++) {
    if (tfd_infer_same_types(c, 0, i, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
    const tfd_shape *x = &c->in_shapes[i];
    if (x->ndims < 0) continue;
    if (s.ndims < 0) {
      s = *x;
      continue;
    }
    bool ok = x->ndims == s.ndims;
    for (int d = 0; ok && d < s.ndims; d++) {
      if (x->dims[d] >= 0 && s.dims[d] >= 0 && x->dims[d] != s.dims[d])
        ok = false;
      else if (s.dims[d] < 0)
        s.dims[d] = x->dims[d];
    }
    if (!ok) {
      char a[96], b[96];
      return tfd_status_setf(
          st, TFD_INVALID_ARGUMENT,
          "node '%s' (Pack): Shapes of all inputs must match: values[0].shape = %s != values[%d].shape = %s",
          node_name(c), tfd_shape_string(&c->in_shapes[0], a, sizeof a), i, tfd_shape_string(x, b, sizeof b));
    }
  }
  c->out_types[0] = c->in_types[0];
  tfd_shape *o = &c->out_shapes[0];
  unknown(o);
  if (s.ndims < 0) return TFD_OK;
  int64_t axis = attr(c, "axis")->i;
  if (s.ndims >= TFD_MAX_DIMS || axis < -(s.ndims + 1) || axis > s.ndims)
    return tfd_status_setf(
        st, TFD_INVALID_ARGUMENT,
        "node '%s' (Pack): axis %lld is out of range [%d, %d) (or the result has more than %d dimensions)",
        node_name(c), (long long)axis, -(s.ndims + 1), s.ndims + 1, TFD_MAX_DIMS);
  if (axis < 0) axis += s.ndims + 1;
  o->ndims = s.ndims + 1;
  for (int d = 0, j = 0; d < o->ndims; d++) o->dims[d] = d == axis ? c->num_inputs : s.dims[j++];
  return TFD_OK;
}

static tfd_code infer_unpack(tfd_infer_ctx *c, tfd_status *st) {
  const tfd_shape *in = &c->in_shapes[0];
  int64_t axis = attr(c, "axis")->i, num = attr(c, "num")->i;
  tfd_shape o;
  unknown(&o);
  if (in->ndims >= 0) {
    if (axis < -in->ndims || axis >= in->ndims)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (Unpack): axis %lld is out of range [%d, %d)",
                             node_name(c), (long long)axis, -in->ndims, in->ndims);
    if (axis < 0) axis += in->ndims;
    if (in->dims[axis] >= 0 && in->dims[axis] != num)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                             "node '%s' (Unpack): num is %lld but dimension %lld has size %lld", node_name(c),
                             (long long)num, (long long)axis, (long long)in->dims[axis]);
    o.ndims = 0;
    for (int d = 0; d < in->ndims; d++)
      if (d != axis) o.dims[o.ndims++] = in->dims[d];
  }
  for (int i = 0; i < c->num_outputs; i++) {
    c->out_types[i] = c->in_types[0];
    c->out_shapes[i] = o;
  }
  return TFD_OK;
}

static tfd_code infer_strided_slice_shape(tfd_infer_ctx *c, tfd_status *st) {
  const tfd_tensor *b = c->in_values ? c->in_values[1] : NULL, *e = c->in_values ? c->in_values[2] : NULL,
                   *s = c->in_values ? c->in_values[3] : NULL;
  if (!b || !e || !s || c->in_shapes[0].ndims < 0) return TFD_OK; /* stays unknown */
  tfd_strided_slice_masks m;
  tfd_strided_slice_plan p;
  tfd_strided_slice_masks_of(c->node, &m);
  if (tfd_strided_slice_plan_make(&c->in_shapes[0], b, e, s, &m, &p, st) != TFD_OK)
    return tfd_status_prefixf(st, "node '%s' (StridedSlice): ", node_name(c));
  c->out_shapes[0] = p.final;
  return TFD_OK;
}

static tfd_code infer_slice(tfd_infer_ctx *c, tfd_status *st) {
  const char *op = op_name(c);
  bool strided = strcmp(op, "StridedSlice") == 0;
  for (int i = 1; i < c->num_inputs; i++) {
    static const char *const names[] = {"", "begin", "end", "strides"};
    const char *what = strided ? names[i] : i == 1 ? "begin" : "size";
    if (tfd_infer_need_index(c, i, what, st) != TFD_OK || tfd_infer_need_rank(c, i, 1, what, st) != TFD_OK)
      return TFD_INVALID_ARGUMENT;
    if (tfd_infer_same_types(c, 1, i, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  }
  c->out_types[0] = c->in_types[0];
  tfd_shape *o = &c->out_shapes[0];
  unknown(o);
  if (strided) return infer_strided_slice_shape(c, st);
  const tfd_shape *in = &c->in_shapes[0];
  const tfd_tensor *begin = c->in_values ? c->in_values[1] : NULL, *size = c->in_values ? c->in_values[2] : NULL;
  if (in->ndims < 0) return TFD_OK;
  for (int i = 1; i < 3; i++)
    if (c->in_shapes[i].ndims == 1 && c->in_shapes[i].dims[0] >= 0 && c->in_shapes[i].dims[0] != in->ndims)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (Slice): Expected %s to be a vector of length %d",
                             node_name(c), i == 1 ? "begin" : "size", in->ndims);
  if (!size) return TFD_OK;
  o->ndims = in->ndims;
  for (int d = 0; d < in->ndims; d++) {
    int64_t s = tfd_tensor_get_index(size, d), b = begin ? tfd_tensor_get_index(begin, d) : -1;
    if (s < -1)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (Slice): size[%d] = %lld must be -1 or non-negative",
                             node_name(c), d, (long long)s);
    if (s >= 0)
      o->dims[d] = s;
    else
      o->dims[d] = begin && in->dims[d] >= 0 && b >= 0 && b <= in->dims[d] ? in->dims[d] - b : -1;
  }
  return TFD_OK;
}

/* Concat (concat_dim, values...): the values' dtype; their rank when known (the kernel checks sizes). */
static tfd_code infer_concat_v1(tfd_infer_ctx *c, tfd_status *st) {
  if (tfd_infer_need_index(c, 0, "concat_dim", st) != TFD_OK ||
      tfd_infer_need_rank(c, 0, 0, "concat_dim", st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  for (int i = 2; i < c->num_inputs; i++)
    if (tfd_infer_same_types(c, 1, i, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  c->out_types[0] = c->in_types[1];
  c->out_shapes[0] = c->in_shapes[1];
  for (int d = 0; d < c->out_shapes[0].ndims; d++) c->out_shapes[0].dims[d] = -1;
  return TFD_OK;
}

/* Gather (params, indices): indices' shape then params' after its first dimension. */
static tfd_code infer_gather_v1(tfd_infer_ctx *c, tfd_status *st) {
  if (tfd_infer_need_index(c, 1, "indices", st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  const tfd_shape *p = &c->in_shapes[0], *ix = &c->in_shapes[1];
  tfd_shape *o = &c->out_shapes[0];
  c->out_types[0] = c->in_types[0];
  if (p->ndims == 0)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (Gather): params must be at least 1 dimensional",
                           node_name(c));
  if (p->ndims < 0 || ix->ndims < 0 || p->ndims - 1 + ix->ndims > TFD_MAX_DIMS) {
    o->ndims = -1;
    return TFD_OK;
  }
  o->ndims = ix->ndims + p->ndims - 1;
  for (int d = 0; d < ix->ndims; d++) o->dims[d] = ix->dims[d];
  for (int d = 1; d < p->ndims; d++) o->dims[ix->ndims + d - 1] = p->dims[d];
  return TFD_OK;
}

static tfd_code infer_gather(tfd_infer_ctx *c, tfd_status *st) {
  bool nd = strcmp(op_name(c), "GatherNd") == 0;
  if (tfd_infer_need_index(c, 1, "indices", st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  c->out_types[0] = c->in_types[0];
  tfd_shape *o = &c->out_shapes[0];
  unknown(o);
  const tfd_shape *p = &c->in_shapes[0], *ix = &c->in_shapes[1];
  if (nd) {
    if (ix->ndims == 0)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (GatherNd): indices must have rank >= 1",
                             node_name(c));
    if (p->ndims < 0 || ix->ndims < 0 || ix->dims[ix->ndims - 1] < 0) return TFD_OK;
    int64_t depth = ix->dims[ix->ndims - 1];
    if (depth > p->ndims)
      return tfd_status_setf(
          st, TFD_INVALID_ARGUMENT,
          "node '%s' (GatherNd): index innermost dimension length must be <= params rank; saw: %lld vs. %d",
          node_name(c), (long long)depth, p->ndims);
    if (ix->ndims - 1 + p->ndims - depth > TFD_MAX_DIMS)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                             "node '%s' (GatherNd): the result would have more than %d dimensions", node_name(c),
                             TFD_MAX_DIMS);
    o->ndims = 0;
    for (int d = 0; d < ix->ndims - 1; d++) o->dims[o->ndims++] = ix->dims[d];
    for (int d = (int)depth; d < p->ndims; d++) o->dims[o->ndims++] = p->dims[d];
    return TFD_OK;
  }
  bool known;
  int64_t axis = 0, b = attr(c, "batch_dims")->i;
  if (p->ndims == 0)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (GatherV2): params must be at least 1 dimensional",
                           node_name(c));
  if (tfd_infer_const_axis(c, 2, p->ndims, &known, &axis, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  if (!known || ix->ndims < 0) return TFD_OK;
  /* batch_dims: TensorFlow's GatherOp checks, with its texts. */
  if (b != 0) {
    if (b < -ix->ndims || b > ix->ndims)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                             "node '%s' (GatherV2): Expected batch_dims in the range [%d, %d], but got %lld",
                             node_name(c), -ix->ndims, ix->ndims, (long long)b);
    if (b < 0) b += ix->ndims;
    if (p->ndims >= 0 && b >= p->ndims)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                             "node '%s' (GatherV2): batch_dims (%lld) must be less than rank(params) (%d).",
                             node_name(c), (long long)b, p->ndims);
    if (axis < b)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                             "node '%s' (GatherV2): batch_dims (%lld) must be less than or equal to axis (%lld).",
                             node_name(c), (long long)b, (long long)axis);
    for (int d = 0; d < b; d++)
      if (p->dims[d] >= 0 && ix->dims[d] >= 0 && p->dims[d] != ix->dims[d])
        return tfd_status_setf(
            st, TFD_INVALID_ARGUMENT,
            "node '%s' (GatherV2): params.shape[%d]: %lld should be equal to indices.shape[%d]: %lld", node_name(c), d,
            (long long)p->dims[d], d, (long long)ix->dims[d]);
  }
  if (p->ndims - 1 + ix->ndims - b > TFD_MAX_DIMS)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (GatherV2): the result would have more than %d dimensions", node_name(c),
                           TFD_MAX_DIMS);
  o->ndims = 0;
  for (int d = 0; d < axis; d++) o->dims[o->ndims++] = p->dims[d];
  for (int d = (int)b; d < ix->ndims; d++) o->dims[o->ndims++] = ix->dims[d];
  for (int d = (int)axis + 1; d < p->ndims; d++) o->dims[o->ndims++] = p->dims[d];
  return TFD_OK;
}

/* BroadcastTo: the shape input's value, when known; the kernel checks the input broadcasts to it. */
static tfd_code infer_broadcast_to(tfd_infer_ctx *c, tfd_status *st) {
  if (tfd_infer_need_index(c, 1, "shape", st) != TFD_OK || tfd_infer_need_rank(c, 1, 1, "shape", st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  c->out_types[0] = c->in_types[0];
  return tfd_infer_shape_from_sizes(c, 1, &c->out_shapes[0], st);
}

static tfd_code infer_tile(tfd_infer_ctx *c, tfd_status *st) {
  if (tfd_infer_need_index(c, 1, "multiples", st) != TFD_OK || tfd_infer_need_rank(c, 1, 1, "multiples", st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  c->out_types[0] = c->in_types[0];
  const tfd_shape *in = &c->in_shapes[0];
  const tfd_tensor *m = c->in_values ? c->in_values[1] : NULL;
  tfd_shape *o = &c->out_shapes[0];
  *o = *in;
  if (in->ndims < 0) return TFD_OK;
  if (c->in_shapes[1].ndims == 1 && c->in_shapes[1].dims[0] >= 0 && c->in_shapes[1].dims[0] != in->ndims)
    return tfd_status_setf(
        st, TFD_INVALID_ARGUMENT,
        "node '%s' (Tile): Expected multiples argument to be a vector of length %d but got length %lld", node_name(c),
        in->ndims, (long long)c->in_shapes[1].dims[0]);
  for (int d = 0; d < in->ndims; d++) {
    int64_t k = m ? tfd_tensor_get_index(m, d) : -1;
    if (m && k < 0)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (Tile): Expected multiples[%d] >= 0, but got %lld",
                             node_name(c), d, (long long)k);
    if (k < 0 || in->dims[d] < 0 || !tfd_checked_mul(in->dims[d], k, &o->dims[d])) o->dims[d] = -1;
  }
  return TFD_OK;
}

static tfd_code infer_split(tfd_infer_ctx *c, tfd_status *st) {
  bool v = strcmp(op_name(c), "SplitV") == 0;
  int value = v ? 0 : 1, axis_in = v ? 2 : 0;
  const tfd_shape *in = &c->in_shapes[value];
  bool known;
  int64_t axis = 0, num = attr(c, "num_split")->i;
  if (v && (tfd_infer_need_index(c, 1, "size_splits", st) != TFD_OK ||
            tfd_infer_need_rank(c, 1, 1, "size_splits", st) != TFD_OK))
    return TFD_INVALID_ARGUMENT;
  if (tfd_infer_const_axis(c, axis_in, in->ndims, &known, &axis, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  if (!v && known && in->dims[axis] >= 0 && in->dims[axis] % num != 0)
    return tfd_status_setf(
        st, TFD_INVALID_ARGUMENT,
        "node '%s' (Split): Number of ways to split should evenly divide the split dimension, but got "
        "split_dim %lld (size = %lld) and num_split %lld",
        node_name(c), (long long)axis, (long long)in->dims[axis], (long long)num);
  for (int i = 0; i < c->num_outputs; i++) {
    c->out_types[i] = c->in_types[value];
    c->out_shapes[i] = *in;
    if (in->ndims < 0) continue;
    if (!known) {
      for (int d = 0; d < in->ndims; d++) c->out_shapes[i].dims[d] = -1;
    } else if (!v) {
      c->out_shapes[i].dims[axis] = in->dims[axis] < 0 ? -1 : in->dims[axis] / num;
    } else {
      c->out_shapes[i].dims[axis] = -1; /* the kernel checks size_splits */
    }
  }
  return TFD_OK;
}

static tfd_code infer_reshape(tfd_infer_ctx *c, tfd_status *st) {
  if (tfd_infer_need_index(c, 1, "shape", st) != TFD_OK || tfd_infer_need_rank(c, 1, 1, "shape", st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  c->out_types[0] = c->in_types[0];
  const tfd_tensor *shape = c->in_values[1];
  if (!shape) {
    unknown(&c->out_shapes[0]);
    return TFD_OK;
  }
  if (tfd_tensor_ndims(shape) != 1 || tfd_tensor_numel(shape) > TFD_MAX_DIMS)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (Reshape): shape must be a vector of at most %d sizes",
                           node_name(c), TFD_MAX_DIMS);
  tfd_shape *o = &c->out_shapes[0];
  o->ndims = (int)tfd_tensor_numel(shape);
  int unknown_at = -1;
  int64_t known = 1;
  for (int i = 0; i < o->ndims; i++) {
    o->dims[i] = tfd_tensor_get_index(shape, i);
    if (o->dims[i] == -1) {
      if (unknown_at >= 0)
        return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (Reshape): only one dimension may be -1",
                               node_name(c));
      unknown_at = i;
    } else if (o->dims[i] < 0) {
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (Reshape): size %lld is negative", node_name(c),
                             (long long)o->dims[i]);
    } else if (!tfd_checked_mul(known, o->dims[i], &known)) {
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (Reshape): the shape's element count overflows",
                             node_name(c));
    }
  }
  int64_t n = tfd_shape_numel(&c->in_shapes[0]);
  if (n >= 0) {
    if (unknown_at >= 0) {
      if (known == 0 || n % known != 0)
        return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                               "node '%s' (Reshape): cannot reshape a tensor of %lld elements into one with a -1 "
                               "dimension and %lld other elements",
                               node_name(c), (long long)n, (long long)known);
      o->dims[unknown_at] = n / known;
    } else if (known != n) {
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                             "node '%s' (Reshape): cannot reshape a tensor with %lld elements to shape with %lld "
                             "elements",
                             node_name(c), (long long)n, (long long)known);
    }
  }
  return TFD_OK;
}

static tfd_code infer_transpose(tfd_infer_ctx *c, tfd_status *st) {
  if (tfd_infer_need_index(c, 1, "perm", st) != TFD_OK || tfd_infer_need_rank(c, 1, 1, "perm", st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  c->out_types[0] = c->in_types[0];
  const tfd_tensor *perm = c->in_values[1];
  const tfd_shape *in = &c->in_shapes[0];
  if (!perm || in->ndims < 0) {
    unknown(&c->out_shapes[0]);
    return TFD_OK;
  }
  if (tfd_tensor_numel(perm) != in->ndims)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (Transpose): perm has %lld entries for rank %d",
                           node_name(c), (long long)tfd_tensor_numel(perm), in->ndims);
  bool seen[TFD_MAX_DIMS] = {0};
  c->out_shapes[0].ndims = in->ndims;
  for (int i = 0; i < in->ndims; i++) {
    int64_t p = tfd_tensor_get_index(perm, i);
    if (p < 0 || p >= in->ndims || seen[p])
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (Transpose): perm is not a permutation of 0..%d",
                             node_name(c), in->ndims - 1);
    seen[p] = true;
    c->out_shapes[0].dims[i] = in->dims[p];
  }
  return TFD_OK;
}

static tfd_code infer_fill(tfd_infer_ctx *c, tfd_status *st) {
  if (tfd_infer_need_index(c, 0, "dims", st) != TFD_OK || tfd_infer_need_rank(c, 0, 1, "dims", st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  if (c->in_shapes[1].ndims > 0)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (Fill): value must be a scalar", node_name(c));
  c->out_types[0] = c->in_types[1];
  return tfd_infer_shape_from_sizes(c, 0, &c->out_shapes[0], st);
}

/* Shape and Size: an index out_type; Shape's output is a vector of the input's rank, Size's a scalar. */
static tfd_code infer_shape(tfd_infer_ctx *c, tfd_status *st) {
  tfd_dtype out = attr(c, "out_type")->dtype;
  if (!(TFD_TYPES_INDEX & (1u << out)))
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): out_type must be int32 or int64, got %s",
                           node_name(c), tfd_node_def_op(c->node), tfd_dtype_name(out));
  c->out_types[0] = out;
  bool size = strcmp(tfd_node_def_op(c->node), "Size") == 0;
  c->out_shapes[0].ndims = size ? 0 : 1;
  if (!size) c->out_shapes[0].dims[0] = c->in_shapes[0].ndims;
  return TFD_OK;
}

/* DepthToSpace / SpaceToDepth (NHWC): the kernel checks divisibility; here only what is known. */
static tfd_code infer_depth_space(tfd_infer_ctx *c, tfd_status *st) {
  const tfd_shape *in = &c->in_shapes[0];
  int64_t b = attr(c, "block_size")->i;
  bool to_space = strcmp(tfd_node_def_op(c->node), "DepthToSpace") == 0;
  c->out_types[0] = c->in_types[0];
  if (in->ndims < 0 || b < 2) {
    unknown(&c->out_shapes[0]);
    return TFD_OK;
  }
  if (in->ndims != 4)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s': input rank should be: 4 instead of: %d", node_name(c),
                           in->ndims);
  tfd_shape *o = &c->out_shapes[0];
  *o = *in;
  for (int i = 1; i < 4; i++) {
    int64_t d = in->dims[i];
    if (d < 0) continue;
    if (i < 3)
      o->dims[i] = to_space ? d * b : (d % b ? -1 : d / b);
    else
      o->dims[i] = to_space ? (d % (b * b) ? -1 : d / (b * b)) : d * b * b;
  }
  return TFD_OK;
}

/* SpaceToBatchND / BatchToSpaceND: the input's rank; the batch and spatial sizes where block_shape and
 * the paddings (crops) are constants and valid, else unknown (the kernel says what is wrong). */
static tfd_code infer_space_batch(tfd_infer_ctx *c, tfd_status *st) {
  bool to_batch = strcmp(tfd_node_def_op(c->node), "SpaceToBatchND") == 0;
  if (tfd_infer_need_index(c, 1, "block_shape", st) != TFD_OK ||
      tfd_infer_need_index(c, 2, to_batch ? "paddings" : "crops", st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  c->out_types[0] = c->in_types[0];
  const tfd_shape *in = &c->in_shapes[0];
  tfd_shape *o = &c->out_shapes[0];
  *o = *in;
  if (in->ndims < 0) return TFD_OK;
  const tfd_tensor *bs = c->in_values ? c->in_values[1] : NULL, *pads = c->in_values ? c->in_values[2] : NULL;
  int64_t m = bs && tfd_tensor_ndims(bs) == 1 ? tfd_tensor_numel(bs) : -1, blocks = 1;
  bool known = m >= 0 && m < in->ndims && pads && tfd_tensor_numel(pads) == 2 * m;
  for (int i = 0; known && i < m; i++) {
    int64_t b = tfd_tensor_get_index(bs, i), d = in->dims[i + 1];
    int64_t lo = tfd_tensor_get_index(pads, 2 * i), hi = tfd_tensor_get_index(pads, 2 * i + 1);
    known =
        b >= 1 && lo >= 0 && hi >= 0 && lo < INT64_MAX / 4 && hi < INT64_MAX / 4 && tfd_checked_mul(blocks, b, &blocks);
    if (!known || d < 0)
      o->dims[i + 1] = -1;
    else if (to_batch)
      o->dims[i + 1] = (d + lo + hi) % b ? -1 : (d + lo + hi) / b;
    else
      o->dims[i + 1] = d > INT64_MAX / b || d * b - lo - hi < 0 ? -1 : d * b - lo - hi;
  }
  if (!known) {
    for (int i = 0; i < (m >= 0 && m < in->ndims ? m + 1 : in->ndims); i++) o->dims[i] = -1;
  } else if (in->dims[0] >= 0) {
    if (to_batch)
      o->dims[0] = tfd_checked_mul(in->dims[0], blocks, &o->dims[0]) ? o->dims[0] : -1;
    else
      o->dims[0] = in->dims[0] % blocks ? -1 : in->dims[0] / blocks;
  }
  return TFD_OK;
}

static bool axis_is_empty(const tfd_tensor *t) { return t && tfd_tensor_numel(t) != 1; }

static tfd_code infer_concat(tfd_infer_ctx *c, tfd_status *st) {
  int n = c->num_inputs - 1;
  const tfd_attr_value *nattr = attr(c, "N");
  if (nattr && nattr->i != n)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (ConcatV2): N is %lld but %d values are given",
                           node_name(c), (long long)nattr->i, n);
  if (n < 1)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (ConcatV2): needs at least one value", node_name(c));
  for (int i = 1; i < n; i++)
    if (tfd_infer_same_types(c, 0, i, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  if (!(TFD_TYPES_INDEX & (1u << c->in_types[n])))
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (ConcatV2): axis must be int32 or int64", node_name(c));
  if (c->in_shapes[n].ndims > 0 || (axis_is_empty(c->in_values[n])))
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (ConcatV2): axis must be a scalar, got shape %s",
                           node_name(c), tfd_shape_string(&c->in_shapes[n], (char[96]){0}, 96));
  c->out_types[0] = c->in_types[0];
  const tfd_tensor *axis_t = c->in_values[n];
  int rank = -1;
  for (int i = 0; i < n; i++) {
    if (c->in_shapes[i].ndims < 0) continue;
    if (rank >= 0 && c->in_shapes[i].ndims != rank)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (ConcatV2): values have ranks %d and %d",
                             node_name(c), rank, c->in_shapes[i].ndims);
    rank = c->in_shapes[i].ndims;
  }
  if (!axis_t || rank < 0) {
    unknown(&c->out_shapes[0]);
    return TFD_OK;
  }
  int64_t axis = tfd_tensor_get_index(axis_t, 0);
  if (axis < -rank || axis >= rank)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (ConcatV2): axis %lld is out of range for rank %d",
                           node_name(c), (long long)axis, rank);
  if (axis < 0) axis += rank;
  tfd_shape *o = &c->out_shapes[0];
  o->ndims = rank;
  for (int d = 0; d < rank; d++) {
    o->dims[d] = d == axis ? 0 : -1;
    for (int i = 0; i < n; i++) {
      int64_t v = c->in_shapes[i].ndims < 0 ? -1 : c->in_shapes[i].dims[d];
      if (d == axis) {
        if (o->dims[d] < 0 || v < 0)
          o->dims[d] = -1;
        else if (!tfd_checked_add(o->dims[d], v, &o->dims[d]))
          return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (ConcatV2): the size along axis %lld overflows",
                                 node_name(c), (long long)axis);
      } else if (v >= 0) {
        if (o->dims[d] >= 0 && o->dims[d] != v)
          return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                                 "node '%s' (ConcatV2): dimension %d of value %d is %lld, expected %lld", node_name(c),
                                 d, i, (long long)v, (long long)o->dims[d]);
        o->dims[d] = v;
      }
    }
  }
  return TFD_OK;
}

/* Where (one input): the coordinates of its true (non-zero) elements, int64 [n, rank]. */
static tfd_code infer_where(tfd_infer_ctx *c, tfd_status *st) {
  (void)st;
  c->out_types[0] = TFD_INT64;
  c->out_shapes[0].ndims = 2;
  c->out_shapes[0].dims[0] = -1;
  c->out_shapes[0].dims[1] = c->in_shapes[0].ndims; /* -1 when the rank is unknown */
  return TFD_OK;
}

/* ScatterNd (indices, updates, shape): shape's value when known, of updates' dtype. */
static tfd_code infer_scatter_nd(tfd_infer_ctx *c, tfd_status *st) {
  if (tfd_infer_need_index(c, 0, "indices", st) != TFD_OK || tfd_infer_need_index(c, 2, "shape", st) != TFD_OK ||
      tfd_infer_same_types(c, 0, 2, st) != TFD_OK || tfd_infer_need_rank(c, 2, 1, "shape", st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  c->out_types[0] = c->in_types[1];
  return tfd_infer_shape_from_sizes(c, 2, &c->out_shapes[0], st);
}

/* TensorScatterUpdate (tensor, indices, updates): tensor's shape and dtype. */
static tfd_code infer_tensor_scatter(tfd_infer_ctx *c, tfd_status *st) {
  if (tfd_infer_need_index(c, 1, "indices", st) != TFD_OK || tfd_infer_same_types(c, 0, 2, st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  c->out_types[0] = c->in_types[0];
  c->out_shapes[0] = c->in_shapes[0];
  return TFD_OK;
}

/* LowerBound, UpperBound (sorted_inputs [B, N], values [B, M]): out_type, values' shape. */
static tfd_code infer_search_sorted(tfd_infer_ctx *c, tfd_status *st) {
  if (tfd_infer_same_types(c, 0, 1, st) != TFD_OK ||
      tfd_infer_index_attr(c, "out_type", &c->out_types[0], st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  for (int i = 0; i < 2; i++)
    if (c->in_shapes[i].ndims >= 0 && c->in_shapes[i].ndims < 1)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): Shape must be at least rank 1 but is rank 0",
                             node_name(c), op_name(c));
  c->out_shapes[0] = c->in_shapes[1];
  return TFD_OK;
}

/* Unique (x [N]): y [?] of x's dtype, idx [N] of out_idx. UniqueV2 (x, axis): y like x with an
 * unknown size along the axis, idx [?]. */
static tfd_code infer_unique(tfd_infer_ctx *c, tfd_status *st) {
  bool v2 = strcmp(op_name(c), "UniqueV2") == 0;
  if (tfd_infer_index_attr(c, "out_idx", &c->out_types[1], st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  c->out_types[0] = c->in_types[0];
  const tfd_shape *x = &c->in_shapes[0];
  tfd_shape *y = &c->out_shapes[0], *idx = &c->out_shapes[1];
  idx->ndims = 1;
  idx->dims[0] = -1;
  if (!v2) {
    if (tfd_infer_need_rank(c, 0, 1, "x", st) != TFD_OK) return TFD_INVALID_ARGUMENT;
    y->ndims = 1;
    y->dims[0] = -1;
    idx->dims[0] = x->ndims == 1 ? x->dims[0] : -1;
    return TFD_OK;
  }
  if (tfd_infer_need_index(c, 1, "axis", st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  *y = *x;
  const tfd_tensor *axis = c->in_values ? c->in_values[1] : NULL;
  if (x->ndims < 0) return TFD_OK;
  if (!axis || tfd_tensor_numel(axis) > 1) {
    for (int d = 0; d < y->ndims; d++) y->dims[d] = -1;
    return TFD_OK;
  }
  int64_t a = tfd_tensor_numel(axis) == 0 ? 0 : tfd_tensor_get_index(axis, 0);
  if (a < 0) a += x->ndims;
  if (a < 0 || a >= x->ndims)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (UniqueV2): axis has to be between [0, %d)",
                           node_name(c), x->ndims);
  y->dims[a] = -1;
  idx->dims[0] = x->dims[a];
  return TFD_OK;
}

/* ListDiff (x [N], y [M]): out [?] of x's dtype, idx [?] of out_idx. */
static tfd_code infer_list_diff(tfd_infer_ctx *c, tfd_status *st) {
  if (tfd_infer_same_types(c, 0, 1, st) != TFD_OK ||
      tfd_infer_index_attr(c, "out_idx", &c->out_types[1], st) != TFD_OK ||
      tfd_infer_need_rank(c, 0, 1, "x", st) != TFD_OK || tfd_infer_need_rank(c, 1, 1, "y", st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  c->out_types[0] = c->in_types[0];
  for (int o = 0; o < 2; o++) {
    c->out_shapes[o].ndims = 1;
    c->out_shapes[o].dims[0] = -1;
  }
  return TFD_OK;
}

static tfd_code infer_rank(tfd_infer_ctx *c, tfd_status *st) {
  (void)st;
  c->out_types[0] = TFD_INT32;
  c->out_shapes[0].ndims = 0;
  return TFD_OK;
}

/* EnsureShape: the input's shape refined by the expected one; refused where both are known and differ. */
static tfd_code infer_ensure_shape(tfd_infer_ctx *c, tfd_status *st) {
  const tfd_attr_value *s = attr(c, "shape");
  const tfd_shape *in = &c->in_shapes[0];
  c->out_types[0] = c->in_types[0];
  c->out_shapes[0] = *in;
  if (!s || s->type != TFD_ATTR_SHAPE || s->shape.ndims < 0) return TFD_OK;
  const tfd_shape *want = &s->shape;
  bool ok = in->ndims < 0 || in->ndims == want->ndims;
  for (int i = 0; ok && in->ndims >= 0 && i < in->ndims; i++)
    ok = in->dims[i] < 0 || want->dims[i] < 0 || in->dims[i] == want->dims[i];
  if (!ok) {
    char a[256], b[256];
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (EnsureShape): Shape of tensor %s %s is not compatible with expected shape %s.",
                           node_name(c), tfd_node_def_num_inputs(c->node) ? tfd_node_def_input(c->node, 0) : "",
                           tfd_shape_string(in, a, sizeof a), tfd_shape_string(want, b, sizeof b));
  }
  c->out_shapes[0] = *want;
  for (int i = 0; in->ndims >= 0 && i < want->ndims; i++)
    if (want->dims[i] < 0) c->out_shapes[0].dims[i] = in->dims[i];
  return TFD_OK;
}

static tfd_code infer_reverse(tfd_infer_ctx *c, tfd_status *st) {
  if (c->in_types[1] != TFD_BOOL)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (Reverse): dims (input 1) must be bool, got %s",
                           node_name(c), tfd_dtype_name(c->in_types[1]));
  return tfd_infer_same(c, st);
}

static tfd_code infer_one_hot(tfd_infer_ctx *c, tfd_status *st) {
  tfd_dtype ti = c->in_types[0];
  if (ti != TFD_INT32 && ti != TFD_INT64 && ti != TFD_UINT8)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (OneHot): indices must be uint8, int32 or int64, got %s", node_name(c),
                           tfd_dtype_name(ti));
  if (c->in_types[1] != TFD_INT32)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (OneHot): depth must be int32, got %s", node_name(c),
                           tfd_dtype_name(c->in_types[1]));
  if (tfd_infer_same_types(c, 2, 3, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  c->out_types[0] = c->in_types[2];
  const tfd_shape *in = &c->in_shapes[0];
  int64_t axis = attr(c, "axis")->i;
  if (axis < -1)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (OneHot): axis must be >= -1, got %lld", node_name(c),
                           (long long)axis);
  if (in->ndims < 0 || in->ndims + 1 > TFD_MAX_DIMS || axis > in->ndims) {
    unknown(&c->out_shapes[0]);
    return TFD_OK;
  }
  const tfd_tensor *d = c->in_values ? c->in_values[1] : NULL;
  int64_t depth = d && tfd_tensor_ndims(d) == 0 ? *(const int32_t *)tfd_tensor_const_data(d) : -1;
  int ax = axis < 0 ? in->ndims : (int)axis;
  tfd_shape *o = &c->out_shapes[0];
  o->ndims = in->ndims + 1;
  for (int i = 0, j = 0; i < o->ndims; i++) o->dims[i] = i == ax ? (depth < 0 ? -1 : depth) : in->dims[j++];
  return TFD_OK;
}

static tfd_code infer_broadcast_args(tfd_infer_ctx *c, tfd_status *st) {
  if (tfd_infer_same_types(c, 0, 1, st) != TFD_OK || tfd_infer_need_rank(c, 0, 1, "s0", st) != TFD_OK ||
      tfd_infer_need_rank(c, 1, 1, "s1", st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  c->out_types[0] = c->in_types[0];
  int64_t a = c->in_shapes[0].ndims == 1 ? c->in_shapes[0].dims[0] : -1,
          b = c->in_shapes[1].ndims == 1 ? c->in_shapes[1].dims[0] : -1;
  c->out_shapes[0].ndims = 1;
  c->out_shapes[0].dims[0] = a < 0 || b < 0 ? -1 : a > b ? a : b;
  return TFD_OK;
}

static tfd_code infer_band_part(tfd_infer_ctx *c, tfd_status *st) {
  if (tfd_infer_need_index(c, 1, "num_lower", st) != TFD_OK || tfd_infer_same_types(c, 1, 2, st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  if (c->in_shapes[0].ndims >= 0 && c->in_shapes[0].ndims < 2) {
    char a[256];
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (MatrixBandPart): input must be at least 2-dim, received shape: %s", node_name(c),
                           tfd_shape_string(&c->in_shapes[0], a, sizeof a));
  }
  return tfd_infer_same(c, st);
}

static const tfd_attr_def attrs_const[] = {
    {"value", TFD_ATTR_TENSOR, true, 0, 0, NULL}, {"dtype", TFD_ATTR_TYPE, false, 0, 0, NULL}, END};

static const tfd_attr_def attrs_placeholder[] = {
    {"dtype", TFD_ATTR_TYPE, true, 0, 0, NULL}, {"shape", TFD_ATTR_SHAPE, false, 0, 0, NULL}, END};

static const tfd_attr_def attrs_pad[] = {A_T, {"Tpaddings", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL}, END};

static const tfd_attr_def attrs_reshape[] = {A_T, {"Tshape", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL}, END};

static const tfd_attr_def attrs_depth_space[] = {
    A_T, {"block_size", TFD_ATTR_INT, true, 0, 0, NULL}, {"data_format", TFD_ATTR_STRING, false, 0, 0, "NHWC"}, END};

static const tfd_attr_def attrs_space_to_batch[] = {A_T,
                                                    {"Tblock_shape", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL},
                                                    {"Tpaddings", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL},
                                                    END};

static const tfd_attr_def attrs_batch_to_space[] = {A_T,
                                                    {"Tblock_shape", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL},
                                                    {"Tcrops", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL},
                                                    END};

static const tfd_attr_def attrs_transpose[] = {A_T, {"Tperm", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL}, END};

static const tfd_attr_def attrs_fill[] = {A_T, {"index_type", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL}, END};

static const tfd_attr_def attrs_shape[] = {A_T, {"out_type", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL}, END};

static const tfd_attr_def attrs_concat[] = {
    A_T, {"N", TFD_ATTR_INT, false, 0, 0, NULL}, {"Tidx", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL}, END};

static const tfd_attr_def attrs_concat_v1[] = {A_T, {"N", TFD_ATTR_INT, false, 0, 0, NULL}, END};

static const tfd_attr_def attrs_gather_v1[] = {{"Tparams", TFD_ATTR_TYPE, false, 0, 0, NULL},
                                               {"Tindices", TFD_ATTR_TYPE, false, 0, 0, NULL},
                                               {"validate_indices", TFD_ATTR_BOOL, false, 1, 0, NULL},
                                               END};

/* graph utilities and array ops (issue 26's array family) */
static const tfd_attr_def attrs_ensure_shape[] = {{"shape", TFD_ATTR_SHAPE, true, 0, 0, NULL}, A_T, END};

static const tfd_attr_def attrs_reverse_v2[] = {A_T, {"Tidx", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL}, END};

static const tfd_attr_def attrs_one_hot[] = {
    A_T, {"TI", TFD_ATTR_TYPE, false, TFD_INT64, 0, NULL}, {"axis", TFD_ATTR_INT, false, -1, 0, NULL}, END};

static const tfd_attr_def attrs_band_part[] = {A_T, {"Tindex", TFD_ATTR_TYPE, false, TFD_INT64, 0, NULL}, END};

/* scatters, searches, uniques */
static const tfd_attr_def attrs_scatter_nd[] = {A_T, {"Tindices", TFD_ATTR_TYPE, false, 0, 0, NULL}, END};

static const tfd_attr_def attrs_search_sorted[] = {A_T, {"out_type", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL}, END};

static const tfd_attr_def attrs_unique[] = {A_T, {"out_idx", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL}, END};

static const tfd_attr_def attrs_unique_v2[] = {A_T,
                                               {"Taxis", TFD_ATTR_TYPE, false, TFD_INT64, 0, NULL},
                                               {"out_idx", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL},
                                               END};

/* IdentityN: each input as it is; attr T lists their dtypes. */
static tfd_code infer_identity_n(tfd_infer_ctx *c, tfd_status *st) {
  const tfd_attr_value *t = attr(c, "T");
  if ((int)t->list_len != c->num_inputs)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (IdentityN): attr 'T' lists %d dtypes for %d inputs",
                           node_name(c), (int)t->list_len, c->num_inputs);
  for (int i = 0; i < c->num_inputs; i++) {
    if (t->list_type[i] != c->in_types[i])
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (IdentityN): input %d is %s but attr 'T' says %s",
                             node_name(c), i, tfd_dtype_name(c->in_types[i]), tfd_dtype_name(t->list_type[i]));
    c->out_types[i] = c->in_types[i];
    c->out_shapes[i] = c->in_shapes[i];
  }
  return TFD_OK;
}

/* ShapeN: Shape of each of N inputs of one dtype T. */
static tfd_code infer_shape_n(tfd_infer_ctx *c, tfd_status *st) {
  tfd_dtype out = attr(c, "out_type")->dtype;
  if (!(TFD_TYPES_INDEX & (1u << out)))
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (ShapeN): out_type must be int32 or int64, got %s",
                           node_name(c), tfd_dtype_name(out));
  if (attr(c, "N")->i != c->num_inputs)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (ShapeN): attr 'N' is %lld but the node has %d inputs",
                           node_name(c), (long long)attr(c, "N")->i, c->num_inputs);
  for (int i = 0; i < c->num_inputs; i++) {
    if (tfd_infer_same_types(c, 0, i, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
    c->out_types[i] = out;
    c->out_shapes[i].ndims = 1;
    c->out_shapes[i].dims[0] = c->in_shapes[i].ndims;
  }
  return TFD_OK;
}

/* Print: input 0 passes through; the data inputs are what U lists. */
static tfd_code infer_print(tfd_infer_ctx *c, tfd_status *st) {
  const tfd_attr_value *u = attr(c, "U");
  if (u && (int)u->list_len != c->num_inputs - 1)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (Print): attr 'U' lists %d dtypes for %d data inputs",
                           node_name(c), (int)u->list_len, c->num_inputs - 1);
  for (int i = 1; u && i < c->num_inputs; i++)
    if (u->list_type[i - 1] != c->in_types[i])
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (Print): input %d is %s but attr 'U' says %s",
                             node_name(c), i, tfd_dtype_name(c->in_types[i]), tfd_dtype_name(u->list_type[i - 1]));
  return tfd_infer_same(c, st);
}

/* FakeQuantWithMinMaxArgs/Vars: float32 in, float32 out of the same shape; Vars' min and max are scalars. */
static tfd_code infer_fake_quant(tfd_infer_ctx *c, tfd_status *st) {
  const char *op = tfd_node_def_op(c->node);
  for (int i = 0; i < c->num_inputs; i++)
    if (c->in_types[i] != TFD_FLOAT32)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): input %d must be float32, got %s", node_name(c),
                             op, i, tfd_dtype_name(c->in_types[i]));
  if (c->num_inputs == 3 &&
      (tfd_infer_need_rank(c, 1, 0, "min", st) != TFD_OK || tfd_infer_need_rank(c, 2, 0, "max", st) != TFD_OK))
    return TFD_INVALID_ARGUMENT;
  return tfd_infer_same(c, st);
}

static const tfd_attr_def attrs_identity_n[] = {{"T", TFD_ATTR_LIST_TYPE, true, 0, 0, NULL}, END};

static const tfd_attr_def attrs_shape_n[] = {
    {"N", TFD_ATTR_INT, false, 0, 0, NULL}, A_T, {"out_type", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL}, END};

static const tfd_attr_def attrs_print[] = {A_T,
                                           {"U", TFD_ATTR_LIST_TYPE, false, 0, 0, NULL},
                                           {"message", TFD_ATTR_STRING, false, 0, 0, ""},
                                           {"first_n", TFD_ATTR_INT, false, -1, 0, NULL},
                                           {"summarize", TFD_ATTR_INT, false, 3, 0, NULL},
                                           END};

static const tfd_attr_def attrs_fake_quant_args[] = {{"min", TFD_ATTR_FLOAT, false, 0, -6.0, NULL},
                                                     {"max", TFD_ATTR_FLOAT, false, 0, 6.0, NULL},
                                                     {"num_bits", TFD_ATTR_INT, false, 8, 0, NULL},
                                                     {"narrow_range", TFD_ATTR_BOOL, false, 0, 0, NULL},
                                                     END};

static const tfd_attr_def attrs_fake_quant_vars[] = {
    {"num_bits", TFD_ATTR_INT, false, 8, 0, NULL}, {"narrow_range", TFD_ATTR_BOOL, false, 0, 0, NULL}, END};

/* One row per op: clang-format would give each field a line. */
/* clang-format off */
static const tfd_op_def array_ops[] = {
    {.name = "Const", .num_outputs = 1, .cheap = true, .attrs = attrs_const, .infer = infer_const},
    {.name = "Placeholder", .num_outputs = 1, .cheap = true, .attrs = attrs_placeholder,
     .infer = tfd_infer_placeholder},
    {.name = "PlaceholderWithDefault", .min_inputs = 1, .max_inputs = 1, .num_outputs = 1, .cheap = true,
     .attrs = attrs_placeholder, .infer = infer_placeholder_with_default},
    {.name = "Identity", .min_inputs = 1, .max_inputs = 1, .num_outputs = 1, .cheap = true, .type_attr = "T",
     .allowed_types = TFD_TYPES_ANY_AND_VARIANT, .attrs = tfd_attrs_t, .infer = tfd_infer_same},
    {.name = "Pad", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .type_attr = "T", .attrs = attrs_pad,
     .infer = infer_pad},
    {.name = "PadV2", .min_inputs = 3, .max_inputs = 3, .num_outputs = 1, .type_attr = "T", .attrs = attrs_pad,
     .infer = infer_pad},
    {.name = "MirrorPad", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .type_attr = "T",
     .attrs = attrs_mirror_pad, .infer = infer_mirror_pad},
    {.name = "Reshape", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .cheap = true, .type_attr = "T",
     .attrs = attrs_reshape, .infer = infer_reshape},
    {.name = "Transpose", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .type_attr = "T",
     .allowed_types = ALL | C64 | STR, .attrs = attrs_transpose, .infer = infer_transpose},
    {.name = "Fill", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .type_attr = "T", .type_input = 1,
     .allowed_types = ALL | C64 | STR, .attrs = attrs_fill, .infer = infer_fill},
    {.name = "ZerosLike", .min_inputs = 1, .max_inputs = 1, .num_outputs = 1, .type_attr = "T",
     .allowed_types = ALL | C64 | STR, .attrs = tfd_attrs_t, .infer = tfd_infer_same},
    {.name = "OnesLike", .min_inputs = 1, .max_inputs = 1, .num_outputs = 1, .type_attr = "T",
     .allowed_types = ALL | C64, .attrs = tfd_attrs_t, .infer = tfd_infer_same},
    {.name = "Shape", .min_inputs = 1, .max_inputs = 1, .num_outputs = 1, .cheap = true, .type_attr = "T",
     .attrs = attrs_shape, .infer = infer_shape},
    {.name = "Size", .min_inputs = 1, .max_inputs = 1, .num_outputs = 1, .cheap = true, .type_attr = "T",
     .attrs = attrs_shape, .infer = infer_shape},
    {.name = "ConcatV2", .min_inputs = 2, .max_inputs = -1, .num_outputs = 1, .type_attr = "T", .attrs = attrs_concat,
     .infer = infer_concat},
    {.name = "Concat", .min_inputs = 2, .max_inputs = -1, .num_outputs = 1, .type_attr = "T", .type_input = 1,
     .attrs = attrs_concat_v1, .infer = infer_concat_v1},
    {.name = "ExpandDims", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .cheap = true, .type_attr = "T",
     .attrs = attrs_expand_dims, .infer = infer_expand_dims},
    {.name = "Squeeze", .min_inputs = 1, .max_inputs = 1, .num_outputs = 1, .cheap = true, .type_attr = "T",
     .attrs = attrs_squeeze, .infer = infer_squeeze},
    {.name = "Pack", .min_inputs = 1, .max_inputs = -1, .num_outputs = 1, .type_attr = "T", .attrs = attrs_pack,
     .infer = infer_pack},
    {.name = "Unpack", .min_inputs = 1, .max_inputs = 1, .num_outputs = TFD_OUTPUTS_FROM_ATTR, .type_attr = "T",
     .attrs = attrs_unpack, .infer = infer_unpack},
    {.name = "Slice", .min_inputs = 3, .max_inputs = 3, .num_outputs = 1, .type_attr = "T", .attrs = attrs_slice,
     .infer = infer_slice},
    {.name = "StridedSlice", .min_inputs = 4, .max_inputs = 4, .num_outputs = 1, .type_attr = "T",
     .attrs = attrs_strided_slice, .infer = infer_slice},
    {.name = "GatherV2", .min_inputs = 3, .max_inputs = 3, .num_outputs = 1, .type_attr = "Tparams",
     .attrs = attrs_gather, .infer = infer_gather},
    {.name = "Gather", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .type_attr = "Tparams",
     .attrs = attrs_gather_v1, .infer = infer_gather_v1},
    {.name = "GatherNd", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .type_attr = "Tparams",
     .attrs = attrs_gather_nd, .infer = infer_gather},
    {.name = "Tile", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .type_attr = "T", .attrs = attrs_tile,
     .infer = infer_tile},
    {.name = "BroadcastTo", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .type_attr = "T",
     .attrs = attrs_broadcast_to, .infer = infer_broadcast_to},
    {.name = "DepthToSpace", .min_inputs = 1, .max_inputs = 1, .num_outputs = 1, .type_attr = "T",
     .allowed_types = ALL | C64 | STR, .attrs = attrs_depth_space, .infer = infer_depth_space},
    {.name = "SpaceToDepth", .min_inputs = 1, .max_inputs = 1, .num_outputs = 1, .type_attr = "T",
     .allowed_types = ALL | C64 | STR, .attrs = attrs_depth_space, .infer = infer_depth_space},
    {.name = "SpaceToBatchND", .min_inputs = 3, .max_inputs = 3, .num_outputs = 1, .type_attr = "T",
     .allowed_types = ALL | C64, .attrs = attrs_space_to_batch, .infer = infer_space_batch},
    {.name = "BatchToSpaceND", .min_inputs = 3, .max_inputs = 3, .num_outputs = 1, .type_attr = "T",
     .allowed_types = ALL | C64, .attrs = attrs_batch_to_space, .infer = infer_space_batch},
    {.name = "Split", .min_inputs = 2, .max_inputs = 2, .num_outputs = TFD_OUTPUTS_FROM_ATTR, .type_attr = "T",
     .type_input = 1, .attrs = attrs_split, .infer = infer_split},
    {.name = "SplitV", .min_inputs = 3, .max_inputs = 3, .num_outputs = TFD_OUTPUTS_FROM_ATTR, .type_attr = "T",
     .attrs = attrs_split_v, .infer = infer_split},
    {.name = "Where", .min_inputs = 1, .max_inputs = 1, .num_outputs = 1, .type_attr = "T", .allowed_types = ALL,
     .attrs = tfd_attrs_t, .infer = infer_where},
    {.name = "ScatterNd", .min_inputs = 3, .max_inputs = 3, .num_outputs = 1, .type_attr = "T", .type_input = 1,
     .allowed_types = REAL, .attrs = attrs_scatter_nd, .infer = infer_scatter_nd},
    {.name = "TensorScatterUpdate", .min_inputs = 3, .max_inputs = 3, .num_outputs = 1, .type_attr = "T",
     .allowed_types = ALL, .attrs = attrs_scatter_nd, .infer = infer_tensor_scatter},
    {.name = "LowerBound", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .type_attr = "T", .allowed_types = REAL,
     .attrs = attrs_search_sorted, .infer = infer_search_sorted},
    {.name = "UpperBound", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .type_attr = "T", .allowed_types = REAL,
     .attrs = attrs_search_sorted, .infer = infer_search_sorted},
    {.name = "Unique", .min_inputs = 1, .max_inputs = 1, .num_outputs = 2, .type_attr = "T", .allowed_types = ALL | STR,
     .attrs = attrs_unique, .infer = infer_unique},
    {.name = "UniqueV2", .min_inputs = 2, .max_inputs = 2, .num_outputs = 2, .type_attr = "T",
     .allowed_types = ALL | STR, .attrs = attrs_unique_v2, .infer = infer_unique},
    {.name = "ListDiff", .min_inputs = 2, .max_inputs = 2, .num_outputs = 2, .type_attr = "T",
     .allowed_types = ALL | STR, .attrs = attrs_unique, .infer = infer_list_diff},
    {.name = "Rank", .min_inputs = 1, .max_inputs = 1, .num_outputs = 1, .cheap = true, .type_attr = "T",
     .attrs = tfd_attrs_t, .infer = infer_rank},
    {.name = "StopGradient", .min_inputs = 1, .max_inputs = 1, .num_outputs = 1, .cheap = true, .type_attr = "T",
     .attrs = tfd_attrs_t, .infer = tfd_infer_same},
    {.name = "Snapshot", .min_inputs = 1, .max_inputs = 1, .num_outputs = 1, .cheap = true, .type_attr = "T",
     .attrs = tfd_attrs_t, .infer = tfd_infer_same},
    {.name = "EnsureShape", .min_inputs = 1, .max_inputs = 1, .num_outputs = 1, .cheap = true, .type_attr = "T",
     .attrs = attrs_ensure_shape, .infer = infer_ensure_shape},
    {.name = "ReverseV2", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .type_attr = "T",
     .allowed_types = ALL | C64 | STR, .attrs = attrs_reverse_v2, .infer = tfd_infer_same_axis},
    {.name = "Reverse", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .type_attr = "T",
     .allowed_types = ALL | C64 | STR, .attrs = tfd_attrs_t, .infer = infer_reverse},
    {.name = "OneHot", .min_inputs = 4, .max_inputs = 4, .num_outputs = 1, .type_attr = "T", .type_input = 2,
     .allowed_types = ALL | C64 | STR, .attrs = attrs_one_hot, .infer = infer_one_hot},
    {.name = "BroadcastArgs", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .type_attr = "T",
     .allowed_types = TFD_TYPES_INDEX, .attrs = tfd_attrs_t, .infer = infer_broadcast_args},
    {.name = "MatrixBandPart", .min_inputs = 3, .max_inputs = 3, .num_outputs = 1, .type_attr = "T",
     .allowed_types = ALL | C64, .attrs = attrs_band_part, .infer = infer_band_part},
    {.name = "IdentityN", .min_inputs = 1, .max_inputs = -1, .num_outputs = TFD_OUTPUTS_FROM_ATTR, .cheap = true,
     .attrs = attrs_identity_n, .infer = infer_identity_n},
    {.name = "ShapeN", .min_inputs = 1, .max_inputs = -1, .num_outputs = TFD_OUTPUTS_FROM_ATTR, .cheap = true,
     .type_attr = "T", .attrs = attrs_shape_n, .infer = infer_shape_n},
    {.name = "Print", .min_inputs = 1, .max_inputs = -1, .num_outputs = 1, .stateful = true, .type_attr = "T",
     .attrs = attrs_print, .infer = infer_print},
    {.name = "FakeQuantWithMinMaxArgs", .min_inputs = 1, .max_inputs = 1, .num_outputs = 1,
     .attrs = attrs_fake_quant_args, .infer = infer_fake_quant},
    {.name = "FakeQuantWithMinMaxVars", .min_inputs = 3, .max_inputs = 3, .num_outputs = 1,
     .attrs = attrs_fake_quant_vars, .infer = infer_fake_quant},
};
/* clang-format on */

const tfd_op_family tfd_array_ops = {"array", array_ops, (int)(sizeof array_ops / sizeof array_ops[0])};
