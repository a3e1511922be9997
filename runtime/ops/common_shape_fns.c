/* The shape functions and input checks more than one op family calls (common_shape_fns.h). */
#include <string.h>

#include "common_shape_fns.h"

tfd_code tfd_infer_placeholder(tfd_infer_ctx *c, tfd_status *st) {
  (void)st;
  c->out_types[0] = attr(c, "dtype")->dtype;
  const tfd_attr_value *s = attr(c, "shape");
  if (s && s->type == TFD_ATTR_SHAPE)
    c->out_shapes[0] = s->shape;
  else
    unknown(&c->out_shapes[0]);
  return TFD_OK;
}

tfd_code tfd_infer_same(tfd_infer_ctx *c, tfd_status *st) {
  (void)st;
  c->out_types[0] = c->in_types[0];
  c->out_shapes[0] = c->in_shapes[0];
  return TFD_OK;
}

tfd_code tfd_infer_none(tfd_infer_ctx *c, tfd_status *st) {
  (void)c, (void)st;
  return TFD_OK;
}

/* Input `i` holds sizes, axes or a permutation: it must be int32 or int64. */
tfd_code tfd_infer_need_index(tfd_infer_ctx *c, int i, const char *what, tfd_status *st) {
  if (TFD_TYPES_INDEX & (1u << c->in_types[i])) return TFD_OK;
  return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): %s (input %d) must be int32 or int64, got %s",
                         node_name(c), tfd_node_def_op(c->node), what, i, tfd_dtype_name(c->in_types[i]));
}

/* Input `i` must have rank `rank` where its rank is known. */
tfd_code tfd_infer_need_rank(tfd_infer_ctx *c, int i, int rank, const char *what, tfd_status *st) {
  int have = c->in_shapes[i].ndims;
  if (have < 0 || have == rank) return TFD_OK;
  return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): %s (input %d) must have rank %d, got rank %d",
                         node_name(c), tfd_node_def_op(c->node), what, i, rank, have);
}

tfd_code tfd_infer_same_types(tfd_infer_ctx *c, int a, int b, tfd_status *st) {
  if (c->in_types[a] == c->in_types[b]) return TFD_OK;
  return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): input %d is %s but input %d is %s", node_name(c),
                         tfd_node_def_op(c->node), a, tfd_dtype_name(c->in_types[a]), b,
                         tfd_dtype_name(c->in_types[b]));
}

tfd_code tfd_infer_matmul(tfd_infer_ctx *c, tfd_status *st) {
  if (tfd_infer_same_types(c, 0, 1, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  const char *op = tfd_node_def_op(c->node);
  const tfd_shape *a = &c->in_shapes[0], *b = &c->in_shapes[1];
  c->out_types[0] = c->in_types[0];
  for (int i = 0; i < 2; i++) {
    if (c->in_shapes[i].ndims >= 0 && c->in_shapes[i].ndims != 2) {
      char s[96];
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): input %d must be a matrix, got shape %s",
                             node_name(c), op, i, tfd_shape_string(&c->in_shapes[i], s, sizeof s));
    }
  }
  bool ta = attr(c, "transpose_a")->b, tb = attr(c, "transpose_b")->b;
  c->out_shapes[0].ndims = 2;
  c->out_shapes[0].dims[0] = a->ndims == 2 ? a->dims[ta ? 1 : 0] : -1;
  c->out_shapes[0].dims[1] = b->ndims == 2 ? b->dims[tb ? 0 : 1] : -1;
  int64_t ka = a->ndims == 2 ? a->dims[ta ? 0 : 1] : -1, kb = b->ndims == 2 ? b->dims[tb ? 1 : 0] : -1;
  if (ka >= 0 && kb >= 0 && ka != kb) {
    char sa[96], sb[96];
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): Matrix size-incompatible: In[0]: %s, In[1]: %s",
                           node_name(c), op, tfd_shape_string(a, sa, sizeof sa), tfd_shape_string(b, sb, sizeof sb));
  }
  return TFD_OK;
}

/* A known scalar axis (input `i`) normalised into [0, rank); *known false when it is not constant. */
tfd_code tfd_infer_const_axis(tfd_infer_ctx *c, int i, int rank, bool *known, int64_t *axis, tfd_status *st) {
  *known = false;
  if (tfd_infer_need_index(c, i, "axis", st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  const tfd_tensor *t = c->in_values ? c->in_values[i] : NULL;
  if (c->in_shapes[i].ndims > 1 || (t && tfd_tensor_numel(t) != 1))
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): axis must be a scalar", node_name(c), op_name(c));
  if (!t || rank < 0) return TFD_OK;
  int64_t a = tfd_tensor_get_index(t, 0);
  if (a < -rank || a >= rank)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): axis %lld is out of range [%d, %d)", node_name(c),
                           op_name(c), (long long)a, -rank, rank);
  *axis = a < 0 ? a + rank : a;
  *known = true;
  return TFD_OK;
}

/* Shape from a 1-D int tensor of sizes (Fill's dims, Random*'s shape). */
tfd_code tfd_infer_shape_from_sizes(tfd_infer_ctx *c, int input, tfd_shape *out, tfd_status *st) {
  const tfd_tensor *dims = c->in_values[input];
  if (!dims) {
    unknown(out);
    return TFD_OK;
  }
  if (tfd_tensor_ndims(dims) != 1 || tfd_tensor_numel(dims) > TFD_MAX_DIMS)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s': shape must be a vector of at most %d sizes",
                           node_name(c), TFD_MAX_DIMS);
  out->ndims = (int)tfd_tensor_numel(dims);
  for (int i = 0; i < out->ndims; i++) {
    out->dims[i] = tfd_tensor_get_index(dims, i);
    if (out->dims[i] < 0)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s': size %lld is negative", node_name(c),
                             (long long)out->dims[i]);
  }
  return TFD_OK;
}

/* Resource handles hold their container and name in fixed fields: say so at
 * graph build, naming the node, rather than failing at the first run. */
tfd_code tfd_infer_check_handle_names(tfd_infer_ctx *c, tfd_status *st) {
  const tfd_attr_value *container = attr(c, "container"), *shared = attr(c, "shared_name");
  const char *name = shared && shared->s && *shared->s ? shared->s : node_name(c);
  size_t clen = container && container->s ? strlen(container->s) : 0, nlen = strlen(name);
  tfd_resource_handle h;
  if (clen >= sizeof h.container)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): container is %zu bytes, at most %zu",
                           node_name(c), tfd_node_def_op(c->node), clen, sizeof h.container - 1);
  if (nlen >= sizeof h.name)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (%s): the resource's name is %zu bytes, at most %zu (give a shorter shared_name)",
                           node_name(c), tfd_node_def_op(c->node), nlen, sizeof h.name - 1);
  return TFD_OK;
}

tfd_code tfd_infer_var_handle(tfd_infer_ctx *c, tfd_status *st) {
  if (tfd_infer_check_handle_names(c, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  c->out_types[0] = TFD_RESOURCE;
  c->out_shapes[0].ndims = 0;
  return TFD_OK;
}

tfd_code tfd_infer_need_resource(tfd_infer_ctx *c, tfd_status *st) {
  if (c->in_types[0] != TFD_RESOURCE)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): input 0 must be a resource handle, got %s",
                           node_name(c), tfd_node_def_op(c->node), tfd_dtype_name(c->in_types[0]));
  return TFD_OK;
}

/* Input i must be bool. */
tfd_code tfd_infer_need_bool(tfd_infer_ctx *c, int i, const char *what, tfd_status *st) {
  if (c->in_types[i] == TFD_BOOL) return TFD_OK;
  return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): %s (input %d) must be bool, got %s", node_name(c),
                         tfd_node_def_op(c->node), what, i, tfd_dtype_name(c->in_types[i]));
}

tfd_code tfd_infer_need_int32(tfd_infer_ctx *c, int i, const char *what, tfd_status *st) {
  if (c->in_types[i] != TFD_INT32)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): %s (input %d) must be int32, got %s",
                           node_name(c), op_name(c), what, i, tfd_dtype_name(c->in_types[i]));
  return TFD_OK;
}

/* An index dtype attr (out_type, out_idx) of the node: int32 or int64. */
tfd_code tfd_infer_index_attr(tfd_infer_ctx *c, const char *name, tfd_dtype *out, tfd_status *st) {
  *out = attr(c, name)->dtype;
  if (TFD_TYPES_INDEX & (1u << *out)) return TFD_OK;
  return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): %s must be int32 or int64, got %s", node_name(c),
                         op_name(c), name, tfd_dtype_name(*out));
}

/* ReverseV2, Cumsum, Cumprod: the input's shape and dtype; input 1 (the axes) must be an index. */
tfd_code tfd_infer_same_axis(tfd_infer_ctx *c, tfd_status *st) {
  if (tfd_infer_need_index(c, 1, "axis", st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  return tfd_infer_same(c, st);
}

const tfd_attr_def tfd_attrs_t[] = {A_T, END};

const tfd_attr_def tfd_attrs_none[] = {END};

/* The output type attr `name` must be `want`, the partner of the input's type. */
tfd_code tfd_infer_check_partner_type(tfd_infer_ctx *c, const char *name, tfd_dtype want, tfd_status *st) {
  tfd_dtype got = attr(c, name)->dtype;
  if (got == want) return TFD_OK;
  return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): %s=%s is not allowed with %s input (only %s)",
                         node_name(c), tfd_node_def_op(c->node), name, tfd_dtype_name(got) ? tfd_dtype_name(got) : "?",
                         tfd_dtype_name(c->in_types[0]), tfd_dtype_name(want));
}
