/* Math ops, as TensorFlow's core/ops/math_ops.cc defines them: elementwise arithmetic and functions, comparisons,
 * logic, casts, matrix products, reductions, scans, counts, Einsum and complex numbers. Their definitions and shape
 * functions. */
#include <stdio.h>
#include <string.h>

#include "../framework/einsum_spec.h"
#include "common_shape_fns.h"

static tfd_code infer_binary(tfd_infer_ctx *c, tfd_status *st) {
  if (tfd_infer_same_types(c, 0, 1, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  c->out_types[0] = c->in_types[0];
  if (tfd_broadcast_shapes(&c->in_shapes[0], &c->in_shapes[1], &c->out_shapes[0], st) != TFD_OK)
    return tfd_status_prefixf(st, "node '%s' (%s): ", node_name(c), tfd_node_def_op(c->node));
  return TFD_OK;
}

/* BatchMatMulV2: x [..., M, K] (adj_x: [..., K, M]), y [..., K, N] (adj_y: [..., N, K]); batch
 * dimensions broadcast. */
static tfd_code infer_batch_matmul(tfd_infer_ctx *c, tfd_status *st) {
  if (tfd_infer_same_types(c, 0, 1, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  const tfd_shape *a = &c->in_shapes[0], *b = &c->in_shapes[1];
  c->out_types[0] = c->in_types[0];
  for (int i = 0; i < 2; i++)
    if (c->in_shapes[i].ndims >= 0 && c->in_shapes[i].ndims < 2) {
      char s[96];
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): input %d must have rank >= 2, got shape %s",
                             node_name(c), tfd_node_def_op(c->node), i,
                             tfd_shape_string(&c->in_shapes[i], s, sizeof s));
    }
  if (a->ndims < 0 || b->ndims < 0) {
    unknown(&c->out_shapes[0]);
    return TFD_OK;
  }
  bool adj_x = attr(c, "adj_x")->b, adj_y = attr(c, "adj_y")->b;
  int64_t ka = a->dims[a->ndims - (adj_x ? 2 : 1)], kb = b->dims[b->ndims - (adj_y ? 1 : 2)];
  if (ka >= 0 && kb >= 0 && ka != kb) {
    char sa[96], sb[96];
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): Matrix size-incompatible: In[0]: %s, In[1]: %s",
                           node_name(c), tfd_node_def_op(c->node), tfd_shape_string(a, sa, sizeof sa),
                           tfd_shape_string(b, sb, sizeof sb));
  }
  tfd_shape ba = *a, bb = *b;
  ba.ndims -= 2;
  bb.ndims -= 2;
  tfd_shape *o = &c->out_shapes[0];
  if (tfd_broadcast_shapes(&ba, &bb, o, st) != TFD_OK)
    return tfd_status_prefixf(st, "node '%s' (%s): batch dimensions do not broadcast: ", node_name(c),
                              tfd_node_def_op(c->node));
  if (o->ndims + 2 > TFD_MAX_DIMS)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): the output has more than %d dimensions",
                           node_name(c), tfd_node_def_op(c->node), TFD_MAX_DIMS);
  o->dims[o->ndims++] = a->dims[a->ndims - (adj_x ? 1 : 2)];
  o->dims[o->ndims++] = b->dims[b->ndims - (adj_y ? 2 : 1)];
  return TFD_OK;
}

static const tfd_attr_def attrs_batch_matmul[] = {{"T", TFD_ATTR_TYPE, false, 0, 0, NULL},
                                                  {"adj_x", TFD_ATTR_BOOL, false, 0, 0, NULL},
                                                  {"adj_y", TFD_ATTR_BOOL, false, 0, 0, NULL},
                                                  {NULL, 0, false, 0, 0, NULL}};

static const tfd_attr_def attrs_range[] = {{"Tidx", TFD_ATTR_TYPE, false, 0, 0, NULL}, END};

static const tfd_attr_def attrs_arg_max[] = {A_T,
                                             {"Tidx", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL},
                                             {"output_type", TFD_ATTR_TYPE, false, TFD_INT64, 0, NULL},
                                             END};

/* IsFinite, IsInf, IsNan: bool, shaped like x. */
static tfd_code infer_float_predicate(tfd_infer_ctx *c, tfd_status *st) {
  (void)st;
  c->out_types[0] = TFD_BOOL;
  c->out_shapes[0] = c->in_shapes[0];
  return TFD_OK;
}

/* ClipByValue: t and both bounds of one dtype, the output shaped like t (TensorFlow's UnchangedShape:
 * the kernel checks the bounds' shapes). */
static tfd_code infer_clip(tfd_infer_ctx *c, tfd_status *st) {
  if (tfd_infer_same_types(c, 0, 1, st) != TFD_OK || tfd_infer_same_types(c, 0, 2, st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  return tfd_infer_same(c, st);
}

static tfd_code infer_range(tfd_infer_ctx *c, tfd_status *st) {
  for (int i = 0; i < 3; i++) {
    if (tfd_infer_same_types(c, 0, i, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
    if (c->in_shapes[i].ndims > 0)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (Range): %s must be a scalar", node_name(c),
                             i == 0   ? "start"
                             : i == 1 ? "limit"
                                      : "delta");
  }
  c->out_types[0] = c->in_types[0];
  c->out_shapes[0].ndims = 1;
  c->out_shapes[0].dims[0] = -1; /* the kernel checks the values */
  return TFD_OK;
}

static tfd_code infer_arg_max(tfd_infer_ctx *c, tfd_status *st) {
  tfd_dtype out = attr(c, "output_type")->dtype;
  if (!(TFD_TYPES_INDEX & (1u << out)))
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): output_type must be int32 or int64, got %s",
                           node_name(c), op_name(c), tfd_dtype_name(out));
  const tfd_shape *in = &c->in_shapes[0];
  bool known;
  int64_t axis = 0;
  if (tfd_infer_const_axis(c, 1, in->ndims, &known, &axis, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  c->out_types[0] = out;
  tfd_shape *o = &c->out_shapes[0];
  unknown(o);
  if (!known) return TFD_OK;
  o->ndims = 0;
  for (int d = 0; d < in->ndims; d++)
    if (d != axis) o->dims[o->ndims++] = in->dims[d];
  return TFD_OK;
}

static tfd_code infer_reduce(tfd_infer_ctx *c, tfd_status *st) {
  if (tfd_infer_need_index(c, 1, "reduction indices", st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  if (c->in_shapes[1].ndims > 1)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): reduction indices must be a scalar or a vector",
                           node_name(c), tfd_node_def_op(c->node));
  const tfd_shape *in = &c->in_shapes[0];
  c->out_types[0] = c->in_types[0];
  const tfd_tensor *axes = c->in_values[1];
  bool keep = attr(c, "keep_dims")->b;
  if (!axes || in->ndims < 0) {
    unknown(&c->out_shapes[0]);
    return TFD_OK;
  }
  bool reduce[TFD_MAX_DIMS] = {0};
  for (int64_t i = 0; i < tfd_tensor_numel(axes); i++) {
    int64_t ax = tfd_tensor_get_index(axes, i);
    if (ax < -in->ndims || ax >= in->ndims)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): axis %lld is out of range for rank %d",
                             node_name(c), tfd_node_def_op(c->node), (long long)ax, in->ndims);
    reduce[ax < 0 ? ax + in->ndims : ax] = true;
  }
  tfd_shape *o = &c->out_shapes[0];
  o->ndims = 0;
  for (int i = 0; i < in->ndims; i++) {
    if (!reduce[i])
      o->dims[o->ndims++] = in->dims[i];
    else if (keep)
      o->dims[o->ndims++] = 1;
  }
  return TFD_OK;
}

static tfd_code infer_cast(tfd_infer_ctx *c, tfd_status *st) {
  tfd_dtype dst = attr(c, "DstT")->dtype;
  if (!((TFD_TYPES_ALL | TFD_TYPES_COMPLEX) & (1u << dst)))
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (Cast): DstT=%s is not allowed (Cast makes numbers, complex64 or bool)",
                           node_name(c), tfd_dtype_name(dst));
  c->out_types[0] = dst;
  c->out_shapes[0] = c->in_shapes[0];
  return TFD_OK;
}

/* Two shapes that must be equal, unknown parts filled from either; false when they differ. */
static bool merge_shapes(const tfd_shape *a, const tfd_shape *b, tfd_shape *out) {
  if (a->ndims < 0 || b->ndims < 0) {
    *out = a->ndims < 0 ? *b : *a;
    return true;
  }
  if (a->ndims != b->ndims) return false;
  *out = *a;
  for (int d = 0; d < a->ndims; d++) {
    if (a->dims[d] >= 0 && b->dims[d] >= 0 && a->dims[d] != b->dims[d]) return false;
    if (a->dims[d] < 0) out->dims[d] = b->dims[d];
  }
  return true;
}

static tfd_code shapes_differ(tfd_infer_ctx *c, const char *what, int a, int b, tfd_status *st) {
  char sa[96], sb[96];
  return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                         "node '%s' (%s): %s: input %d has shape %s but input %d has shape %s", node_name(c),
                         tfd_node_def_op(c->node), what, a, tfd_shape_string(&c->in_shapes[a], sa, sizeof sa), b,
                         tfd_shape_string(&c->in_shapes[b], sb, sizeof sb));
}

/* Equal ... GreaterEqual: broadcasting, bool out. Equal/NotEqual with
 * incompatible_shape_error=false give a scalar for incompatible shapes. */
static tfd_code infer_compare(tfd_infer_ctx *c, tfd_status *st) {
  if (tfd_infer_same_types(c, 0, 1, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  c->out_types[0] = TFD_BOOL;
  const tfd_attr_value *strict = attr(c, "incompatible_shape_error");
  if (strict && strict->type == TFD_ATTR_BOOL && !strict->b) {
    tfd_status tmp = TFD_STATUS_INIT;
    if (tfd_broadcast_shapes(&c->in_shapes[0], &c->in_shapes[1], &c->out_shapes[0], &tmp) != TFD_OK) {
      tfd_status_clear(&tmp);
      c->out_shapes[0].ndims = 0;
      return TFD_OK;
    }
    /* Unknown dimensions may still turn out incompatible: the rank alone is certain only when all is known. */
    if (!tfd_shape_is_known(&c->in_shapes[0]) || !tfd_shape_is_known(&c->in_shapes[1])) unknown(&c->out_shapes[0]);
    return TFD_OK;
  }
  if (tfd_broadcast_shapes(&c->in_shapes[0], &c->in_shapes[1], &c->out_shapes[0], st) != TFD_OK)
    return tfd_status_prefixf(st, "node '%s' (%s): ", node_name(c), tfd_node_def_op(c->node));
  return TFD_OK;
}

/* LogicalNot, LogicalAnd, LogicalOr: bool in, bool out, broadcasting. */
static tfd_code infer_logical(tfd_infer_ctx *c, tfd_status *st) {
  for (int i = 0; i < c->num_inputs; i++)
    if (tfd_infer_need_bool(c, i, "operand", st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  c->out_types[0] = TFD_BOOL;
  if (c->num_inputs == 1) {
    c->out_shapes[0] = c->in_shapes[0];
    return TFD_OK;
  }
  if (tfd_broadcast_shapes(&c->in_shapes[0], &c->in_shapes[1], &c->out_shapes[0], st) != TFD_OK)
    return tfd_status_prefixf(st, "node '%s' (%s): ", node_name(c), tfd_node_def_op(c->node));
  return TFD_OK;
}

/* Select (TF1): 'then' and 'else' of one shape; the condition a scalar, of
 * that shape, or a vector as long as its first dimension. */
static tfd_code infer_select(tfd_infer_ctx *c, tfd_status *st) {
  if (tfd_infer_need_bool(c, 0, "condition", st) != TFD_OK || tfd_infer_same_types(c, 1, 2, st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  c->out_types[0] = c->in_types[1];
  tfd_shape te;
  if (!merge_shapes(&c->in_shapes[1], &c->in_shapes[2], &te))
    return shapes_differ(c, "'then' and 'else' must have the same shape", 1, 2, st);
  c->out_shapes[0] = te;
  const tfd_shape *cond = &c->in_shapes[0];
  tfd_shape merged;
  if (cond->ndims <= 0 || te.ndims < 0 || merge_shapes(cond, &te, &merged)) {
    if (cond->ndims > 0 && te.ndims >= 0) c->out_shapes[0] = merged;
    return TFD_OK;
  }
  if (cond->ndims == 1 && te.ndims > 1 && (cond->dims[0] < 0 || te.dims[0] < 0 || cond->dims[0] == te.dims[0])) {
    if (c->out_shapes[0].dims[0] < 0) c->out_shapes[0].dims[0] = cond->dims[0];
    return TFD_OK;
  }
  char sa[96], sb[96];
  return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                         "node '%s' (Select): condition must be a scalar, a vector as long as the first dimension of "
                         "'then', or shaped like 'then'; got %s for 'then' of %s",
                         node_name(c), tfd_shape_string(cond, sa, sizeof sa), tfd_shape_string(&te, sb, sizeof sb));
}

/* SelectV2: condition, 'then' and 'else' broadcast together. */
static tfd_code infer_select_v2(tfd_infer_ctx *c, tfd_status *st) {
  if (tfd_infer_need_bool(c, 0, "condition", st) != TFD_OK || tfd_infer_same_types(c, 1, 2, st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  c->out_types[0] = c->in_types[1];
  tfd_shape te;
  if (tfd_broadcast_shapes(&c->in_shapes[1], &c->in_shapes[2], &te, st) != TFD_OK ||
      tfd_broadcast_shapes(&c->in_shapes[0], &te, &c->out_shapes[0], st) != TFD_OK)
    return tfd_status_prefixf(st, "node '%s' (SelectV2): ", node_name(c));
  return TFD_OK;
}

/* AddN: N inputs of one dtype and shape. (N is not in the attr table: the
 * registry's default for an absent N counts ConcatV2's values, one fewer
 * than AddN's; a given N is checked here.) */
static tfd_code infer_add_n(tfd_infer_ctx *c, tfd_status *st) {
  const tfd_attr_value *n = attr(c, "N");
  if (n && (n->type != TFD_ATTR_INT || n->i != c->num_inputs))
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (AddN): N is %lld but the node has %d inputs",
                           node_name(c), n->type == TFD_ATTR_INT ? (long long)n->i : -1LL, c->num_inputs);
  tfd_shape s = c->in_shapes[0];
  for (int i = 1; i < c->num_inputs; i++) {
    if (tfd_infer_same_types(c, 0, i, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
    tfd_shape m;
    if (!merge_shapes(&s, &c->in_shapes[i], &m)) return shapes_differ(c, "inputs must have the same shape", i, 0, st);
    s = m;
  }
  c->out_types[0] = c->in_types[0];
  c->out_shapes[0] = s;
  return TFD_OK;
}

static const tfd_attr_def attrs_equal[] = {{"T", TFD_ATTR_TYPE, false, 0, 0, NULL},
                                           {"incompatible_shape_error", TFD_ATTR_BOOL, false, 1, 0, NULL},
                                           {NULL, 0, false, 0, 0, NULL}};

/* BatchMatMul (the legacy op): BatchMatMulV2's shapes without broadcasting: both inputs have the
 * same rank and the same batch dimensions. */
static tfd_code infer_batch_matmul_v1(tfd_infer_ctx *c, tfd_status *st) {
  const tfd_shape *a = &c->in_shapes[0], *b = &c->in_shapes[1];
  char sa[96], sb[96];
  if (a->ndims >= 0 && b->ndims >= 0) {
    if (a->ndims != b->ndims)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                             "node '%s' (BatchMatMul): In[0] and In[1] has different ndims: %s vs. %s", node_name(c),
                             tfd_shape_string(a, sa, sizeof sa), tfd_shape_string(b, sb, sizeof sb));
    for (int d = 0; d < a->ndims - 2; d++)
      if (a->dims[d] >= 0 && b->dims[d] >= 0 && a->dims[d] != b->dims[d])
        return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                               "node '%s' (BatchMatMul): In[0].dim(%d) and In[1].dim(%d) must be the same: %s vs %s",
                               node_name(c), d, d, tfd_shape_string(a, sa, sizeof sa),
                               tfd_shape_string(b, sb, sizeof sb));
  }
  return infer_batch_matmul(c, st);
}

/* Bincount (arr, size, weights): [size] of weights' dtype. DenseBincount: [size] for a vector input,
 * [rows, size] for a matrix. */
static tfd_code infer_bincount(tfd_infer_ctx *c, tfd_status *st) {
  bool dense = strcmp(op_name(c), "DenseBincount") == 0;
  if (tfd_infer_need_index(c, 0, dense ? "input" : "arr", st) != TFD_OK ||
      tfd_infer_need_index(c, 1, "size", st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  if (c->in_shapes[1].ndims > 0)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): Shape must be rank 0 but is rank %d",
                           node_name(c), op_name(c), c->in_shapes[1].ndims);
  if (dense && c->in_shapes[0].ndims > 2)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (DenseBincount): Shape must be at most rank 2 but is rank %d", node_name(c),
                           c->in_shapes[0].ndims);
  if (!dense && (c->in_types[0] != TFD_INT32 || c->in_types[1] != TFD_INT32))
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (Bincount): arr and size must be int32, got %s and %s",
                           node_name(c), tfd_dtype_name(c->in_types[0]), tfd_dtype_name(c->in_types[1]));
  if (dense && tfd_infer_same_types(c, 0, 1, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  c->out_types[0] = c->in_types[2];
  const tfd_tensor *size = c->in_values ? c->in_values[1] : NULL;
  int64_t n = size && tfd_tensor_numel(size) == 1 ? tfd_tensor_get_index(size, 0) : -1;
  if (size && n < 0)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): size (%lld) must be non-negative", node_name(c),
                           op_name(c), (long long)n);
  tfd_shape *o = &c->out_shapes[0];
  if (dense && c->in_shapes[0].ndims < 0) {
    unknown(o);
    return TFD_OK;
  }
  o->ndims = 0;
  if (dense && c->in_shapes[0].ndims == 2) o->dims[o->ndims++] = c->in_shapes[0].dims[0];
  o->dims[o->ndims++] = n;
  return TFD_OK;
}

static tfd_code infer_lin_space(tfd_infer_ctx *c, tfd_status *st) {
  if (tfd_infer_same_types(c, 0, 1, st) != TFD_OK || tfd_infer_need_index(c, 2, "num", st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  c->out_types[0] = c->in_types[0];
  const tfd_tensor *n = c->in_values ? c->in_values[2] : NULL;
  c->out_shapes[0].ndims = 1;
  c->out_shapes[0].dims[0] =
      n && tfd_tensor_ndims(n) == 0 && tfd_tensor_get_index(n, 0) > 0 ? tfd_tensor_get_index(n, 0) : -1;
  return TFD_OK;
}

static tfd_code infer_all_any(tfd_infer_ctx *c, tfd_status *st) {
  if (c->in_types[0] != TFD_BOOL)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): input must be bool, got %s", node_name(c),
                           tfd_node_def_op(c->node), tfd_dtype_name(c->in_types[0]));
  return infer_reduce(c, st);
}

static const tfd_attr_def attrs_matmul[] = {
    A_T, {"transpose_a", TFD_ATTR_BOOL, false, 0, 0, NULL}, {"transpose_b", TFD_ATTR_BOOL, false, 0, 0, NULL}, END};

static const tfd_attr_def attrs_reduce[] = {
    A_T, {"Tidx", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL}, {"keep_dims", TFD_ATTR_BOOL, false, 0, 0, NULL}, END};

static const tfd_attr_def attrs_cast[] = {{"SrcT", TFD_ATTR_TYPE, false, 0, 0, NULL},
                                          {"DstT", TFD_ATTR_TYPE, true, 0, 0, NULL},
                                          {"Truncate", TFD_ATTR_BOOL, false, 0, 0, NULL},
                                          END};

static const tfd_attr_def attrs_lin_space[] = {A_T, {"Tidx", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL}, END};

static const tfd_attr_def attrs_scan[] = {A_T,
                                          {"Tidx", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL},
                                          {"exclusive", TFD_ATTR_BOOL, false, 0, 0, NULL},
                                          {"reverse", TFD_ATTR_BOOL, false, 0, 0, NULL},
                                          END};

static const tfd_attr_def attrs_all_any[] = {
    {"Tidx", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL}, {"keep_dims", TFD_ATTR_BOOL, false, 0, 0, NULL}, END};

static const tfd_attr_def attrs_dense_bincount[] = {
    {"Tidx", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL}, A_T, {"binary_output", TFD_ATTR_BOOL, false, 0, 0, NULL}, END};

/* issue 26, image/einsum family: Einsum, CropAndResize, ImageProjectiveTransformV3, IdentityN,
 * ShapeN, Print, FakeQuantWithMinMaxArgs/Vars (kernels in k_einsum.c, k_crop_and_resize.c,
 * k_image_transform.c, k_identity_n.c) ---- */
/* Einsum: TensorFlow's EinsumShape: the equation's form, each input's rank against its subscript, the
 * labels' sizes merged, the ellipsis dimensions broadcast; the kernel repeats the checks on values. */
static tfd_code infer_einsum(tfd_infer_ctx *c, tfd_status *st) {
  const char *eq = attr(c, "equation")->s, *op = "Einsum";
  char err[320];
  tfd_einsum_spec sp;
  if (!tfd_einsum_parse(eq, &sp, err, sizeof err))
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): %s", node_name(c), op, err);
  if (c->num_inputs != sp.num_inputs)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): Expected %d inputs for equation %s but got: %d",
                           node_name(c), op, sp.num_inputs, eq, c->num_inputs);
  if (c->num_inputs == 2 && tfd_infer_same_types(c, 0, 1, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  c->out_types[0] = c->in_types[0];
  int64_t label_dim[TFD_EINSUM_MAX_LABELS];
  for (int l = 0; l < TFD_EINSUM_MAX_LABELS; l++) label_dim[l] = -2; /* -2: not seen, -1: unknown */
  tfd_shape bcast[2];
  bool bcast_known = true;
  for (int i = 0; i < sp.num_inputs; i++) {
    const tfd_shape *in = &c->in_shapes[i];
    int named = sp.num_labels[i];
    bcast[i].ndims = 0;
    if (in->ndims < 0) {
      if (sp.ellipsis[i] >= 0) bcast_known = false;
      continue;
    }
    if (sp.ellipsis[i] >= 0 ? in->ndims < named : in->ndims != named)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                             "node '%s' (%s): Shape must be rank %s%d but is rank %d for %dth input and equation: %s",
                             node_name(c), op, sp.ellipsis[i] >= 0 ? "at least " : "", named, in->ndims, i, eq);
    int nb = in->ndims - named;
    if (sp.ellipsis[i] >= 0) {
      bcast[i].ndims = nb;
      for (int d = 0; d < nb; d++) bcast[i].dims[d] = in->dims[sp.ellipsis[i] + d];
    }
    for (int j = 0; j < named; j++) {
      int axis = sp.ellipsis[i] >= 0 && j >= sp.ellipsis[i] ? j + nb : j;
      int l = sp.labels[i][j];
      int64_t d = in->dims[axis];
      if (label_dim[l] == -2 || label_dim[l] == -1)
        label_dim[l] = d;
      else if (d >= 0 && d != label_dim[l])
        return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                               "node '%s' (%s): Dimensions must be equal, but are %lld and %lld for label '%c' of "
                               "equation %s",
                               node_name(c), op, (long long)label_dim[l], (long long)d, sp.chars[l], eq);
    }
  }
  tfd_shape ob = {0};
  if (bcast_known) {
    ob = bcast[0];
    if (sp.num_inputs == 2 && tfd_broadcast_shapes(&bcast[0], &bcast[1], &ob, st) != TFD_OK) {
      char why[256];
      snprintf(why, sizeof why, "%s", tfd_status_message(st));
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): %s", node_name(c), op, why);
    }
  }
  if (sp.out_ellipsis < 0 && bcast_known && ob.ndims > 0)
    return tfd_status_setf(
        st, TFD_INVALID_ARGUMENT,
        "node '%s' (%s): Shape must be at most rank 0 but is rank %d for einsum equation '%s' without "
        "ellipsis (...) in the output subscripts where input(s) have non-empty broadcasting shape",
        node_name(c), op, ob.ndims, eq);
  for (int j = 0; j < sp.num_out; j++)
    if (label_dim[sp.out[j]] == -2 && sp.num_inputs > 0) {
      bool seen = false;
      for (int i = 0; i < sp.num_inputs; i++)
        for (int k = 0; k < sp.num_labels[i]; k++) seen |= sp.labels[i][k] == sp.out[j];
      if (!seen)
        return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                               "node '%s' (%s): Einsum output subscripts for equation '%s' has label '%c' which is not "
                               "present in the input subscripts",
                               node_name(c), op, eq, sp.chars[sp.out[j]]);
    }
  if (sp.out_ellipsis >= 0 && !bcast_known) {
    unknown(&c->out_shapes[0]);
    return TFD_OK;
  }
  tfd_shape *o = &c->out_shapes[0];
  int nb = sp.out_ellipsis >= 0 ? ob.ndims : 0;
  if (sp.num_out + nb > TFD_MAX_DIMS)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): output rank %d exceeds %d", node_name(c), op,
                           sp.num_out + nb, TFD_MAX_DIMS);
  o->ndims = sp.num_out + nb;
  for (int j = 0, a = 0; j < sp.num_out; j++) {
    if (j == sp.out_ellipsis)
      for (int d = 0; d < nb; d++) o->dims[a++] = ob.dims[d];
    o->dims[a++] = label_dim[sp.out[j]] < 0 ? -1 : label_dim[sp.out[j]];
  }
  if (sp.out_ellipsis == sp.num_out)
    for (int d = 0; d < nb; d++) o->dims[sp.num_out + d] = ob.dims[d];
  return TFD_OK;
}

static const tfd_attr_def attrs_einsum[] = {
    {"equation", TFD_ATTR_STRING, true, 0, 0, NULL}, {"N", TFD_ATTR_INT, false, 0, 0, NULL}, A_T, END};

/* complex numbers and spectral ops: TensorFlow's pairs (float32, complex64) and (float64,
 * complex128) restricted to the first, since tfdev has no complex128 ---- */
static const tfd_attr_def attrs_complex[] = {
    {"T", TFD_ATTR_TYPE, false, TFD_FLOAT32, 0, NULL}, {"Tout", TFD_ATTR_TYPE, false, TFD_COMPLEX64, 0, NULL}, END};

static const tfd_attr_def attrs_complex_part[] = {
    {"T", TFD_ATTR_TYPE, false, TFD_COMPLEX64, 0, NULL}, {"Tout", TFD_ATTR_TYPE, false, TFD_FLOAT32, 0, NULL}, END};

/* Complex(real, imag): broadcast like a binary op, complex64 out. */
static tfd_code infer_complex(tfd_infer_ctx *c, tfd_status *st) {
  if (tfd_infer_check_partner_type(c, "Tout", TFD_COMPLEX64, st) != TFD_OK || infer_binary(c, st) != TFD_OK)
    return tfd_status_code(st);
  c->out_types[0] = TFD_COMPLEX64;
  return TFD_OK;
}

/* Real, Imag, ComplexAbs: a float32 per complex64 element. */
static tfd_code infer_complex_part(tfd_infer_ctx *c, tfd_status *st) {
  if (tfd_infer_check_partner_type(c, "Tout", TFD_FLOAT32, st) != TFD_OK) return tfd_status_code(st);
  c->out_types[0] = TFD_FLOAT32;
  c->out_shapes[0] = c->in_shapes[0];
  return TFD_OK;
}

/* An elementwise op of two inputs that broadcast, of one dtype. */
#define BINARY_OF(n, types)                                                                                  \
  {                                                                                                          \
    .name = n, .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .type_attr = "T", .allowed_types = types, \
    .attrs = tfd_attrs_t, .infer = infer_binary                                                              \
  }
#define BINARY(n) BINARY_OF(n, NUM)

#define BINARY_C(n) BINARY_OF(n, NUM | C64)

/* One row per op: clang-format would give each field a line. */
/* clang-format off */
static const tfd_op_def math_ops[] = {
    /* complex64 arithmetic runs in k_spectral.c */
    BINARY_C("Add"),
    BINARY_C("AddV2"),
    BINARY_C("Sub"),
    BINARY_C("Mul"),
    BINARY("Maximum"),
    BINARY("Minimum"),
    {.name = "RealDiv", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .type_attr = "T",
     .allowed_types = FLT | C64, .attrs = tfd_attrs_t, .infer = infer_binary},
    UNARY("Neg", NUM | C64),
    UNARY("Abs", NUM),
    UNARY("Square", NUM),
    UNARY("Exp", FLT),
    UNARY("Log", FLT),
    UNARY("Sqrt", FLT),
    UNARY("Sigmoid", FLT),
    UNARY("Tanh", FLT),
    UNARY("Rsqrt", FLT),
    UNARY("Reciprocal", FLT),
    UNARY("Floor", FLT),
    UNARY("Ceil", FLT),
    UNARY("Sin", FLT),
    UNARY("Cos", FLT),
    BINARY("Pow"),
    BINARY("SquaredDifference"),
    BINARY("FloorDiv"),
    BINARY("FloorMod"),
    {.name = "Atan2", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .type_attr = "T", .allowed_types = FLT,
     .attrs = tfd_attrs_t, .infer = infer_binary},
    {.name = "Equal", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .type_attr = "T", .allowed_types = ALL | STR,
     .attrs = attrs_equal, .infer = infer_compare},
    {.name = "NotEqual", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .type_attr = "T",
     .allowed_types = ALL | STR, .attrs = attrs_equal, .infer = infer_compare},
    {.name = "Less", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .type_attr = "T", .allowed_types = NUM,
     .attrs = tfd_attrs_t, .infer = infer_compare},
    {.name = "LessEqual", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .type_attr = "T", .allowed_types = NUM,
     .attrs = tfd_attrs_t, .infer = infer_compare},
    {.name = "Greater", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .type_attr = "T", .allowed_types = NUM,
     .attrs = tfd_attrs_t, .infer = infer_compare},
    {.name = "GreaterEqual", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .type_attr = "T", .allowed_types = NUM,
     .attrs = tfd_attrs_t, .infer = infer_compare},
    {.name = "LogicalAnd", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .attrs = tfd_attrs_none,
     .infer = infer_logical},
    {.name = "LogicalOr", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .attrs = tfd_attrs_none,
     .infer = infer_logical},
    {.name = "LogicalNot", .min_inputs = 1, .max_inputs = 1, .num_outputs = 1, .attrs = tfd_attrs_none,
     .infer = infer_logical},
    {.name = "Select", .min_inputs = 3, .max_inputs = 3, .num_outputs = 1, .type_attr = "T", .type_input = 1,
     .allowed_types = ALL | C64 | STR, .attrs = tfd_attrs_t, .infer = infer_select},
    {.name = "SelectV2", .min_inputs = 3, .max_inputs = 3, .num_outputs = 1, .type_attr = "T", .type_input = 1,
     .allowed_types = ALL | C64 | STR, .attrs = tfd_attrs_t, .infer = infer_select_v2},
    {.name = "AddN", .min_inputs = 1, .max_inputs = -1, .num_outputs = 1, .type_attr = "T", .allowed_types = NUM,
     .attrs = tfd_attrs_t, .infer = infer_add_n},
    {.name = "MatMul", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .type_attr = "T", .allowed_types = NUM,
     .attrs = attrs_matmul, .infer = tfd_infer_matmul},
    {.name = "BatchMatMulV2", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .type_attr = "T",
     .allowed_types = NUM, .attrs = attrs_batch_matmul, .infer = infer_batch_matmul},
    {.name = "Sum", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .type_attr = "T", .allowed_types = NUM,
     .attrs = attrs_reduce, .infer = infer_reduce},
    {.name = "Mean", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .type_attr = "T", .allowed_types = NUM,
     .attrs = attrs_reduce, .infer = infer_reduce},
    {.name = "Max", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .type_attr = "T", .allowed_types = NUM,
     .attrs = attrs_reduce, .infer = infer_reduce},
    {.name = "Cast", .min_inputs = 1, .max_inputs = 1, .num_outputs = 1, .type_attr = "SrcT",
     .allowed_types = ALL | C64, .attrs = attrs_cast, .infer = infer_cast},
    {.name = "Range", .min_inputs = 3, .max_inputs = 3, .num_outputs = 1, .type_attr = "Tidx", .allowed_types = NUM,
     .attrs = attrs_range, .infer = infer_range},
    {.name = "ArgMax", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .type_attr = "T", .allowed_types = NUM,
     .attrs = attrs_arg_max, .infer = infer_arg_max},
    {.name = "ArgMin", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .type_attr = "T", .allowed_types = NUM,
     .attrs = attrs_arg_max, .infer = infer_arg_max},
    {.name = "Min", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .type_attr = "T", .allowed_types = NUM,
     .attrs = attrs_reduce, .infer = infer_reduce},
    {.name = "Prod", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .type_attr = "T", .allowed_types = NUM,
     .attrs = attrs_reduce, .infer = infer_reduce},
    {.name = "BatchMatMul", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .type_attr = "T", .allowed_types = NUM,
     .attrs = attrs_batch_matmul, .infer = infer_batch_matmul_v1},
    {.name = "Bincount", .min_inputs = 3, .max_inputs = 3, .num_outputs = 1, .type_attr = "T", .type_input = 2,
     .allowed_types = NUM, .attrs = tfd_attrs_t, .infer = infer_bincount},
    {.name = "DenseBincount", .min_inputs = 3, .max_inputs = 3, .num_outputs = 1, .type_attr = "T", .type_input = 2,
     .allowed_types = NUM, .attrs = attrs_dense_bincount, .infer = infer_bincount},
    {.name = "EuclideanNorm", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .type_attr = "T",
     .allowed_types = NUM, .attrs = attrs_reduce, .infer = infer_reduce},
    UNARY("Acos", FLT),
    UNARY("Acosh", FLT),
    UNARY("Asin", FLT),
    UNARY("Asinh", FLT),
    UNARY("Atan", FLT),
    UNARY("Atanh", FLT),
    UNARY("Cosh", FLT),
    UNARY("Sinh", FLT),
    UNARY("Tan", FLT),
    UNARY("Erf", FLT),
    UNARY("Expm1", FLT),
    UNARY("Log1p", FLT),
    UNARY("Round", NUM),
    UNARY("Sign", NUM),
    {.name = "IsFinite", .min_inputs = 1, .max_inputs = 1, .num_outputs = 1, .type_attr = "T", .allowed_types = FLT,
     .attrs = tfd_attrs_t, .infer = infer_float_predicate},
    {.name = "IsInf", .min_inputs = 1, .max_inputs = 1, .num_outputs = 1, .type_attr = "T", .allowed_types = FLT,
     .attrs = tfd_attrs_t, .infer = infer_float_predicate},
    {.name = "IsNan", .min_inputs = 1, .max_inputs = 1, .num_outputs = 1, .type_attr = "T", .allowed_types = FLT,
     .attrs = tfd_attrs_t, .infer = infer_float_predicate},
    {.name = "Div", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .type_attr = "T", .allowed_types = NUM | U8,
     .attrs = tfd_attrs_t, .infer = infer_binary},
    {.name = "DivNoNan", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .type_attr = "T", .allowed_types = FLT,
     .attrs = tfd_attrs_t, .infer = infer_binary},
    {.name = "Mod", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .type_attr = "T", .allowed_types = NUM,
     .attrs = tfd_attrs_t, .infer = infer_binary},
    {.name = "BitwiseAnd", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .type_attr = "T",
     .allowed_types = TFD_TYPES_INDEX | U8, .attrs = tfd_attrs_t, .infer = infer_binary},
    {.name = "ClipByValue", .min_inputs = 3, .max_inputs = 3, .num_outputs = 1, .type_attr = "T",
     .allowed_types = NUM | U8, .attrs = tfd_attrs_t, .infer = infer_clip},
    {.name = "LinSpace", .min_inputs = 3, .max_inputs = 3, .num_outputs = 1, .type_attr = "T", .allowed_types = FLT,
     .attrs = attrs_lin_space, .infer = infer_lin_space},
    {.name = "Cumsum", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .type_attr = "T", .allowed_types = REAL,
     .attrs = attrs_scan, .infer = tfd_infer_same_axis},
    {.name = "Cumprod", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .type_attr = "T", .allowed_types = REAL,
     .attrs = attrs_scan, .infer = tfd_infer_same_axis},
    {.name = "All", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .attrs = attrs_all_any, .infer = infer_all_any},
    {.name = "Any", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .attrs = attrs_all_any, .infer = infer_all_any},
    {.name = "Einsum", .min_inputs = 1, .max_inputs = 2, .num_outputs = 1, .type_attr = "T", .allowed_types = NUM,
     .attrs = attrs_einsum, .infer = infer_einsum},
    {.name = "Complex", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .type_attr = "T",
     .allowed_types = 1u << TFD_FLOAT32, .attrs = attrs_complex, .infer = infer_complex},
    {.name = "Real", .min_inputs = 1, .max_inputs = 1, .num_outputs = 1, .type_attr = "T", .allowed_types = C64,
     .attrs = attrs_complex_part, .infer = infer_complex_part},
    {.name = "Imag", .min_inputs = 1, .max_inputs = 1, .num_outputs = 1, .type_attr = "T", .allowed_types = C64,
     .attrs = attrs_complex_part, .infer = infer_complex_part},
    {.name = "ComplexAbs", .min_inputs = 1, .max_inputs = 1, .num_outputs = 1, .type_attr = "T", .allowed_types = C64,
     .attrs = attrs_complex_part, .infer = infer_complex_part},
};
/* clang-format on */

const tfd_op_family tfd_math_ops = {"math", math_ops, (int)(sizeof math_ops / sizeof math_ops[0])};
