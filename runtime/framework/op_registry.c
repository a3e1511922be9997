/* The built-in ops: signatures, attribute defaults and shape/dtype inference. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/api_args.h"
#include "../core/checked.h"
#include "../core/status_internal.h"
#include "einsum_spec.h"
#include "op_registry.h"
#include "tfdev/custom_op.h"

/* ---- shape helpers ---- */
bool tfd_shape_is_known(const tfd_shape *s) {
  if (s->ndims < 0) return false;
  for (int i = 0; i < s->ndims; i++)
    if (s->dims[i] < 0) return false;
  return true;
}

int64_t tfd_shape_numel(const tfd_shape *s) {
  if (!tfd_shape_is_known(s)) return -1;
  int64_t n = 1;
  for (int i = 0; i < s->ndims; i++)
    if (!tfd_checked_mul(n, s->dims[i], &n)) return -1; /* no tensor can have this shape */
  return n;
}

bool tfd_shape_equal(const tfd_shape *a, const tfd_shape *b) {
  if (a->ndims != b->ndims) return false;
  for (int d = 0; d < a->ndims; d++)
    if (a->dims[d] != b->dims[d]) return false;
  return true;
}

void tfd_shape_of_tensor(const tfd_tensor *t, tfd_shape *out) {
  out->ndims = tfd_tensor_ndims(t);
  for (int i = 0; i < out->ndims; i++) out->dims[i] = tfd_tensor_dim(t, i);
}

const char *tfd_shape_string(const tfd_shape *s, char *buf, size_t cap) {
  if (s->ndims < 0) {
    snprintf(buf, cap, "<unknown>");
    return buf;
  }
  size_t n = (size_t)snprintf(buf, cap, "[");
  for (int i = 0; i < s->ndims && n < cap; i++) {
    if (s->dims[i] < 0) n += (size_t)snprintf(buf + n, cap - n, "%s?", i ? "," : "");
    else n += (size_t)snprintf(buf + n, cap - n, "%s%lld", i ? "," : "", (long long)s->dims[i]);
  }
  if (n < cap) snprintf(buf + n, cap - n, "]");
  return buf;
}

tfd_code tfd_broadcast_shapes(const tfd_shape *a, const tfd_shape *b, tfd_shape *out, tfd_status *status) {
  if (a->ndims < 0 || b->ndims < 0) {
    out->ndims = -1;
    return TFD_OK;
  }
  int n = a->ndims > b->ndims ? a->ndims : b->ndims;
  out->ndims = n;
  for (int i = 0; i < n; i++) {
    int ia = a->ndims - n + i, ib = b->ndims - n + i;
    int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
    if (da == 1) out->dims[i] = db;
    else if (db == 1) out->dims[i] = da;
    else if (da < 0 || db < 0) out->dims[i] = da < 0 ? db : da; /* unknown: trust the known one */
    else if (da == db) out->dims[i] = da;
    else {
      char sa[96], sb[96];
      return tfd_status_setf(status, TFD_INVALID_ARGUMENT, "Incompatible shapes: %s vs. %s",
                             tfd_shape_string(a, sa, sizeof sa), tfd_shape_string(b, sb, sizeof sb));
    }
  }
  return TFD_OK;
}

int64_t tfd_tensor_get_index(const tfd_tensor *t, int64_t i) {
  const void *d = tfd_tensor_const_data(t);
  switch (tfd_tensor_dtype(t)) {
    case TFD_INT64: return ((const int64_t *)d)[i];
    case TFD_INT32: return ((const int32_t *)d)[i];
    default: return 0; /* inference and kernels refuse non-index dtypes before reading */
  }
}

static const tfd_attr_value *attr(const tfd_infer_ctx *c, const char *name) { return tfd_node_def_attr(c->node, name); }
static const char *node_name(const tfd_infer_ctx *c) { return tfd_node_def_name(c->node); }

static void unknown(tfd_shape *s) { s->ndims = -1; }

/* ---- inference functions ---- */
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

static tfd_code infer_placeholder(tfd_infer_ctx *c, tfd_status *st) {
  (void)st;
  c->out_types[0] = attr(c, "dtype")->dtype;
  const tfd_attr_value *s = attr(c, "shape");
  if (s && s->type == TFD_ATTR_SHAPE) c->out_shapes[0] = s->shape;
  else unknown(&c->out_shapes[0]);
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

static tfd_code infer_same(tfd_infer_ctx *c, tfd_status *st) {
  (void)st;
  c->out_types[0] = c->in_types[0];
  c->out_shapes[0] = c->in_shapes[0];
  return TFD_OK;
}

static tfd_code infer_none(tfd_infer_ctx *c, tfd_status *st) {
  (void)c, (void)st;
  return TFD_OK;
}

/* Input `i` holds sizes, axes or a permutation: it must be int32 or int64. */
static tfd_code need_index(tfd_infer_ctx *c, int i, const char *what, tfd_status *st) {
  if (TFD_TYPES_INDEX & (1u << c->in_types[i])) return TFD_OK;
  return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): %s (input %d) must be int32 or int64, got %s",
                         node_name(c), tfd_node_def_op(c->node), what, i, tfd_dtype_name(c->in_types[i]));
}

/* Input `i` must have rank `rank` where its rank is known. */
static tfd_code need_rank(tfd_infer_ctx *c, int i, int rank, const char *what, tfd_status *st) {
  int have = c->in_shapes[i].ndims;
  if (have < 0 || have == rank) return TFD_OK;
  return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): %s (input %d) must have rank %d, got rank %d",
                         node_name(c), tfd_node_def_op(c->node), what, i, rank, have);
}

static tfd_code same_types(tfd_infer_ctx *c, int a, int b, tfd_status *st) {
  if (c->in_types[a] == c->in_types[b]) return TFD_OK;
  return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): input %d is %s but input %d is %s", node_name(c),
                         tfd_node_def_op(c->node), a, tfd_dtype_name(c->in_types[a]), b, tfd_dtype_name(c->in_types[b]));
}

static tfd_code infer_binary(tfd_infer_ctx *c, tfd_status *st) {
  if (same_types(c, 0, 1, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  c->out_types[0] = c->in_types[0];
  if (tfd_broadcast_shapes(&c->in_shapes[0], &c->in_shapes[1], &c->out_shapes[0], st) != TFD_OK)
    return tfd_status_prefixf(st, "node '%s' (%s): ", node_name(c), tfd_node_def_op(c->node));
  return TFD_OK;
}

static tfd_code infer_softmax(tfd_infer_ctx *c, tfd_status *st) {
  if (c->in_shapes[0].ndims == 0)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s': Softmax needs a tensor of rank >= 1", node_name(c));
  return infer_same(c, st);
}

static tfd_code infer_matmul(tfd_infer_ctx *c, tfd_status *st) {
  if (same_types(c, 0, 1, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
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
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (%s): Matrix size-incompatible: In[0]: %s, In[1]: %s", node_name(c),
                           op, tfd_shape_string(a, sa, sizeof sa), tfd_shape_string(b, sb, sizeof sb));
  }
  return TFD_OK;
}

/* _FusedMatMul (TensorFlow's remapper output): a MatMul whose num_args extra
 * inputs feed the fused_ops; the kernel decides which fusions it implements. */
static tfd_code infer_fused_matmul(tfd_infer_ctx *c, tfd_status *st) {
  int64_t num_args = attr(c, "num_args")->i;
  if (num_args != c->num_inputs - 2)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (_FusedMatMul): num_args is %lld but the node has %d extra inputs",
                           node_name(c), (long long)num_args, c->num_inputs - 2);
  for (int i = 2; i < c->num_inputs; i++)
    if (same_types(c, 0, i, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  if (infer_matmul(c, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  int64_t n = c->out_shapes[0].dims[1];
  for (int i = 2; i < c->num_inputs; i++) {
    const tfd_shape *b = &c->in_shapes[i];
    if (b->ndims >= 0 && b->ndims != 1)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (_FusedMatMul): input %d (a fused argument) must be 1-D",
                             node_name(c), i);
    if (b->ndims == 1 && b->dims[0] >= 0 && n >= 0 && b->dims[0] != n)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                             "node '%s' (_FusedMatMul): bias has %lld elements but the product has %lld columns",
                             node_name(c), (long long)b->dims[0], (long long)n);
  }
  return TFD_OK;
}

/* ---- convolutions and pooling (NHWC) ---- */
/* Attr [1, h, w, 1] list `name` into out (default dflt when absent); false when malformed. */
bool tfd_spatial_attr(const tfd_node_def *node, const char *name, int64_t dflt, int64_t out[2]) {
  const tfd_attr_value *v = tfd_node_def_attr(node, name);
  if (!v || v->type != TFD_ATTR_LIST_INT || v->list_len == 0) {
    out[0] = out[1] = dflt;
    return true;
  }
  if (v->list_len != 4 || v->list_i[0] != 1 || v->list_i[3] != 1 || v->list_i[1] < 1 || v->list_i[2] < 1) return false;
  out[0] = v->list_i[1];
  out[1] = v->list_i[2];
  return true;
}

/* One output size by TensorFlow's window rule; -1 when the input is unknown. */
static int64_t window_out(int64_t in, int64_t k, int64_t stride, int64_t dilation, const char *padding, int64_t explicit_total) {
  if (in < 0 || k < 0) return -1;
  int64_t span = (k - 1) * dilation + 1;
  if (strcmp(padding, "SAME") == 0) return (in + stride - 1) / stride;
  int64_t padded = in + (strcmp(padding, "EXPLICIT") == 0 ? explicit_total : 0);
  return padded >= span ? (padded - span) / stride + 1 : 0;
}

static tfd_code infer_window(tfd_infer_ctx *c, tfd_status *st) {
  const char *op = tfd_node_def_op(c->node);
  bool pool = strcmp(op, "MaxPool") == 0 || strcmp(op, "AvgPool") == 0;
  bool depthwise = strstr(op, "DepthwiseConv2dNative") != NULL; /* and _FusedDepthwiseConv2dNative */
  const tfd_shape *x = &c->in_shapes[0], *f = pool ? NULL : &c->in_shapes[1];
  for (int i = 0; i < (pool ? 1 : 2); i++) {
    if (!pool && c->in_types[i] != c->in_types[0]) return same_types(c, 0, i, st);
    if (c->in_shapes[i].ndims >= 0 && c->in_shapes[i].ndims != 4) {
      char s[96];
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): %s must have rank 4, got shape %s", node_name(c),
                             op, i ? "filter" : "input", tfd_shape_string(&c->in_shapes[i], s, sizeof s));
    }
  }
  int64_t stride[2], dilation[2], k[2] = {-1, -1};
  const char *padding = attr(c, "padding") && attr(c, "padding")->type == TFD_ATTR_STRING ? attr(c, "padding")->s : "";
  if (strcmp(padding, "SAME") && strcmp(padding, "VALID") && strcmp(padding, "EXPLICIT"))
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): padding must be SAME, VALID or EXPLICIT, got '%s'",
                           node_name(c), op, padding);
  if (!tfd_spatial_attr(c->node, "strides", 1, stride) || (!pool && !tfd_spatial_attr(c->node, "dilations", 1, dilation)))
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (%s): strides and dilations must be 4 values [1, h, w, 1] with h, w >= 1",
                           node_name(c), op);
  if (pool) {
    dilation[0] = dilation[1] = 1;
    if (!tfd_spatial_attr(c->node, "ksize", 0, k) || k[0] < 1)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): ksize must be 4 values [1, h, w, 1]",
                             node_name(c), op);
  } else if (f->ndims == 4) {
    k[0] = f->dims[0];
    k[1] = f->dims[1];
    if (x->ndims == 4 && x->dims[3] >= 0 && f->dims[2] >= 0 && x->dims[3] != f->dims[2])
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                             "node '%s' (%s): input depth %lld does not match the filter's in_channels %lld",
                             node_name(c), op, (long long)x->dims[3], (long long)f->dims[2]);
  }
  int64_t ex[2] = {0, 0};
  const tfd_attr_value *e = attr(c, "explicit_paddings");
  if (strcmp(padding, "EXPLICIT") == 0) {
    if (!e || e->list_len != 8)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): EXPLICIT padding needs 8 explicit_paddings",
                             node_name(c), op);
    ex[0] = e->list_i[2] + e->list_i[3];
    ex[1] = e->list_i[4] + e->list_i[5];
  }
  c->out_types[0] = c->in_types[0];
  tfd_shape *o = &c->out_shapes[0];
  o->ndims = 4;
  bool known = x->ndims == 4;
  o->dims[0] = known ? x->dims[0] : -1;
  for (int d = 0; d < 2; d++) o->dims[1 + d] = known ? window_out(x->dims[1 + d], k[d], stride[d], dilation[d], padding, ex[d]) : -1;
  if (pool) o->dims[3] = known ? x->dims[3] : -1;
  else if (depthwise) o->dims[3] = known && f->ndims == 4 && x->dims[3] >= 0 && f->dims[3] >= 0 ? x->dims[3] * f->dims[3] : -1;
  else o->dims[3] = f->ndims == 4 ? f->dims[3] : -1;
  return TFD_OK;
}

/* ---- images, normalisation, batched products ---- */
/* FusedBatchNorm, FusedBatchNormV3 (inference, NHWC): y like x; batch_mean, batch_variance and the
 * reserve spaces are [C] float32 (V3's reserve_space_3 is empty). */
static tfd_code infer_fused_batch_norm(tfd_infer_ctx *c, tfd_status *st) {
  const char *op = tfd_node_def_op(c->node);
  if (attr(c, "is_training")->b)
    return tfd_status_setf(st, TFD_UNIMPLEMENTED, "node '%s' (%s): is_training=true is not supported (inference only)",
                           node_name(c), op);
  const char *fmt = attr(c, "data_format")->s;
  if (strcmp(fmt, "NHWC") != 0)
    return tfd_status_setf(st, TFD_UNIMPLEMENTED, "node '%s' (%s): data_format %s is not supported (NHWC only)",
                           node_name(c), op, fmt);
  const tfd_attr_value *u = attr(c, "U");
  if (u && u->dtype != TFD_FLOAT32)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): U must be float32, got %s", node_name(c), op,
                           tfd_dtype_name(u->dtype));
  static const char *const what[] = {"x", "scale", "offset", "mean", "variance"};
  if (need_rank(c, 0, 4, "x", st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  int64_t depth = c->in_shapes[0].ndims == 4 ? c->in_shapes[0].dims[3] : -1;
  for (int i = 1; i < 5; i++) {
    if (c->in_types[i] != TFD_FLOAT32)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): %s (input %d) must be float32, got %s",
                             node_name(c), op, what[i], i, tfd_dtype_name(c->in_types[i]));
    if (need_rank(c, i, 1, what[i], st) != TFD_OK) return TFD_INVALID_ARGUMENT;
    const tfd_shape *s = &c->in_shapes[i];
    if (s->ndims == 1 && s->dims[0] >= 0 && depth >= 0 && s->dims[0] != depth)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): %s must have %lld elements (x's depth), got %lld",
                             node_name(c), op, what[i], (long long)depth, (long long)s->dims[0]);
    if (depth < 0 && s->ndims == 1) depth = s->dims[0];
  }
  c->out_types[0] = c->in_types[0];
  c->out_shapes[0] = c->in_shapes[0];
  for (int o = 1; o < c->num_outputs; o++) {
    c->out_types[o] = TFD_FLOAT32;
    c->out_shapes[o].ndims = 1;
    c->out_shapes[o].dims[0] = o == 5 ? 0 : depth;
  }
  return TFD_OK;
}

/* ResizeBilinear, ResizeNearestNeighbor: images [N, H, W, C] and size, int32 [2] > 0. */
static tfd_code infer_resize(tfd_infer_ctx *c, tfd_status *st) {
  const char *op = tfd_node_def_op(c->node);
  if (attr(c, "align_corners")->b && attr(c, "half_pixel_centers")->b)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (%s): If half_pixel_centers is True, align_corners must be False.", node_name(c), op);
  if (need_rank(c, 0, 4, "images", st) != TFD_OK || need_rank(c, 1, 1, "size", st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  if (c->in_types[1] != TFD_INT32 || (c->in_shapes[1].ndims == 1 && c->in_shapes[1].dims[0] >= 0 && c->in_shapes[1].dims[0] != 2))
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): size (input 1) must be an int32 vector of 2 elements",
                           node_name(c), op);
  const tfd_shape *x = &c->in_shapes[0];
  const tfd_tensor *size = c->in_values ? c->in_values[1] : NULL;
  tfd_shape *o = &c->out_shapes[0];
  o->ndims = 4;
  for (int d = 0; d < 4; d++) o->dims[d] = x->ndims == 4 && (d == 0 || d == 3) ? x->dims[d] : -1;
  if (size && tfd_tensor_numel(size) == 2) {
    for (int d = 0; d < 2; d++) {
      o->dims[1 + d] = tfd_tensor_get_index(size, d);
      if (o->dims[1 + d] <= 0)
        return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): size must be positive, got [%lld, %lld]",
                               node_name(c), op, (long long)tfd_tensor_get_index(size, 0),
                               (long long)tfd_tensor_get_index(size, 1));
    }
  }
  c->out_types[0] = strcmp(op, "ResizeBilinear") == 0 ? TFD_FLOAT32 : c->in_types[0];
  return TFD_OK;
}

/* BatchMatMulV2: x [..., M, K] (adj_x: [..., K, M]), y [..., K, N] (adj_y: [..., N, K]); batch
 * dimensions broadcast. */
static tfd_code infer_batch_matmul(tfd_infer_ctx *c, tfd_status *st) {
  if (same_types(c, 0, 1, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  const tfd_shape *a = &c->in_shapes[0], *b = &c->in_shapes[1];
  c->out_types[0] = c->in_types[0];
  for (int i = 0; i < 2; i++)
    if (c->in_shapes[i].ndims >= 0 && c->in_shapes[i].ndims < 2) {
      char s[96];
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): input %d must have rank >= 2, got shape %s",
                             node_name(c), tfd_node_def_op(c->node), i, tfd_shape_string(&c->in_shapes[i], s, sizeof s));
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
                           node_name(c), tfd_node_def_op(c->node), tfd_shape_string(a, sa, sizeof sa), tfd_shape_string(b, sb, sizeof sb));
  }
  tfd_shape ba = *a, bb = *b;
  ba.ndims -= 2;
  bb.ndims -= 2;
  tfd_shape *o = &c->out_shapes[0];
  if (tfd_broadcast_shapes(&ba, &bb, o, st) != TFD_OK)
    return tfd_status_prefixf(st, "node '%s' (%s): batch dimensions do not broadcast: ", node_name(c), tfd_node_def_op(c->node));
  if (o->ndims + 2 > TFD_MAX_DIMS)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): the output has more than %d dimensions",
                           node_name(c), tfd_node_def_op(c->node), TFD_MAX_DIMS);
  o->dims[o->ndims++] = a->dims[a->ndims - (adj_x ? 1 : 2)];
  o->dims[o->ndims++] = b->dims[b->ndims - (adj_y ? 2 : 1)];
  return TFD_OK;
}

static const tfd_attr_def attrs_batch_norm[] = {{"T", TFD_ATTR_TYPE, false, 0, 0, NULL},
                                                {"U", TFD_ATTR_TYPE, false, TFD_FLOAT32, 0, NULL},
                                                {"epsilon", TFD_ATTR_FLOAT, false, 0, 0.0001, NULL},
                                                {"exponential_avg_factor", TFD_ATTR_FLOAT, false, 0, 1.0, NULL},
                                                {"data_format", TFD_ATTR_STRING, false, 0, 0, "NHWC"},
                                                {"is_training", TFD_ATTR_BOOL, false, 1, 0, NULL},
                                                {NULL, 0, false, 0, 0, NULL}};
static const tfd_attr_def attrs_batch_norm_v1[] = {{"T", TFD_ATTR_TYPE, false, 0, 0, NULL},
                                                   {"epsilon", TFD_ATTR_FLOAT, false, 0, 0.0001, NULL},
                                                   {"exponential_avg_factor", TFD_ATTR_FLOAT, false, 0, 1.0, NULL},
                                                   {"data_format", TFD_ATTR_STRING, false, 0, 0, "NHWC"},
                                                   {"is_training", TFD_ATTR_BOOL, false, 1, 0, NULL},
                                                   {NULL, 0, false, 0, 0, NULL}};
static const tfd_attr_def attrs_resize[] = {{"T", TFD_ATTR_TYPE, false, 0, 0, NULL},
                                            {"align_corners", TFD_ATTR_BOOL, false, 0, 0, NULL},
                                            {"half_pixel_centers", TFD_ATTR_BOOL, false, 0, 0, NULL},
                                            {NULL, 0, false, 0, 0, NULL}};
static const tfd_attr_def attrs_batch_matmul[] = {{"T", TFD_ATTR_TYPE, false, 0, 0, NULL},
                                                  {"adj_x", TFD_ATTR_BOOL, false, 0, 0, NULL},
                                                  {"adj_y", TFD_ATTR_BOOL, false, 0, 0, NULL},
                                                  {NULL, 0, false, 0, 0, NULL}};

/* Conv2DBackpropInput (NHWC): the gradient of Conv2D with respect to its input, shaped by
 * input_sizes (int32 [4]); filter [kh, kw, in_c, out_c], out_backprop [N, oh, ow, out_c]. */
static tfd_code infer_conv_backprop_input(tfd_infer_ctx *c, tfd_status *st) {
  const char *op = "Conv2DBackpropInput";
  if (same_types(c, 1, 2, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  if (c->in_types[0] != TFD_INT32 || need_rank(c, 0, 1, "input_sizes", st) != TFD_OK ||
      (c->in_shapes[0].ndims == 1 && c->in_shapes[0].dims[0] >= 0 && c->in_shapes[0].dims[0] != 4))
    return tfd_status_code(st) != TFD_OK ? TFD_INVALID_ARGUMENT
                                         : tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                                                           "node '%s' (%s): input_sizes (input 0) must be an int32 vector of 4 sizes",
                                                           node_name(c), op);
  if (need_rank(c, 1, 4, "filter", st) != TFD_OK || need_rank(c, 2, 4, "out_backprop", st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  const char *fmt = attr(c, "data_format")->s;
  if (strcmp(fmt, "NHWC") != 0)
    return tfd_status_setf(st, TFD_UNIMPLEMENTED, "node '%s' (%s): data_format %s is not supported (NHWC only)",
                           node_name(c), op, fmt);
  const tfd_shape *f = &c->in_shapes[1], *dy = &c->in_shapes[2];
  if (f->ndims == 4 && dy->ndims == 4 && f->dims[3] >= 0 && dy->dims[3] >= 0 && f->dims[3] != dy->dims[3])
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (%s): out_backprop depth %lld does not match the filter's out_channels %lld",
                           node_name(c), op, (long long)dy->dims[3], (long long)f->dims[3]);
  c->out_types[0] = c->in_types[1];
  tfd_shape *o = &c->out_shapes[0];
  o->ndims = 4;
  const tfd_tensor *sizes = c->in_values ? c->in_values[0] : NULL;
  for (int d = 0; d < 4; d++) {
    o->dims[d] = sizes && tfd_tensor_numel(sizes) == 4 ? tfd_tensor_get_index(sizes, d) : -1;
    if (sizes && o->dims[d] < 0)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): input_sizes must not be negative", node_name(c), op);
  }
  if (o->dims[3] >= 0 && f->ndims == 4 && f->dims[2] >= 0 && o->dims[3] != f->dims[2])
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (%s): input depth %lld does not match the filter's in_channels %lld", node_name(c),
                           op, (long long)o->dims[3], (long long)f->dims[2]);
  return TFD_OK;
}

/* MirrorPad: Pad's shapes; mode REFLECT or SYMMETRIC. */
static tfd_code infer_pad(tfd_infer_ctx *c, tfd_status *st);
static tfd_code infer_mirror_pad(tfd_infer_ctx *c, tfd_status *st) {
  const char *mode = attr(c, "mode")->s;
  if (strcmp(mode, "REFLECT") != 0 && strcmp(mode, "SYMMETRIC") != 0)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (MirrorPad): mode must be REFLECT or SYMMETRIC, got '%s'",
                           node_name(c), mode);
  return infer_pad(c, st);
}

static const tfd_attr_def attrs_mirror_pad[] = {{"T", TFD_ATTR_TYPE, false, 0, 0, NULL},
                                                {"Tpaddings", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL},
                                                {"mode", TFD_ATTR_STRING, true, 0, 0, NULL},
                                                {NULL, 0, false, 0, 0, NULL}};
static const tfd_attr_def attrs_conv_backprop[] = {{"T", TFD_ATTR_TYPE, false, 0, 0, NULL},
                                                   {"padding", TFD_ATTR_STRING, true, 0, 0, NULL},
                                                   {"strides", TFD_ATTR_LIST_INT, false, 0, 0, NULL},
                                                   {"explicit_paddings", TFD_ATTR_LIST_INT, false, 0, 0, NULL},
                                                   {"data_format", TFD_ATTR_STRING, false, 0, 0, "NHWC"},
                                                   {"dilations", TFD_ATTR_LIST_INT, false, 0, 0, NULL},
                                                   {"use_cudnn_on_gpu", TFD_ATTR_BOOL, false, 1, 0, NULL},
                                                   {NULL, 0, false, 0, 0, NULL}};

static tfd_code infer_pad(tfd_infer_ctx *c, tfd_status *st) {
  if (need_index(c, 1, "paddings", st) != TFD_OK) return TFD_INVALID_ARGUMENT;
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
    o->dims[d] = x->dims[d] < 0 || lo > INT64_MAX / 4 || hi > INT64_MAX / 4 || x->dims[d] > INT64_MAX / 2 ? -1 : x->dims[d] + lo + hi;
  }
  return TFD_OK;
}

/* ---- shapes, slicing, gathering ---- */
#define SH_T {"T", TFD_ATTR_TYPE, false, 0, 0, NULL}
#define SH_END {NULL, 0, false, 0, 0, NULL}
static const tfd_attr_def attrs_expand_dims[] = {SH_T, {"Tdim", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL}, SH_END};
static const tfd_attr_def attrs_squeeze[] = {SH_T, {"squeeze_dims", TFD_ATTR_LIST_INT, false, 0, 0, NULL}, SH_END};
static const tfd_attr_def attrs_pack[] = {SH_T, {"N", TFD_ATTR_INT, false, 0, 0, NULL},
                                          {"axis", TFD_ATTR_INT, false, 0, 0, NULL}, SH_END};
static const tfd_attr_def attrs_unpack[] = {SH_T, {"num", TFD_ATTR_INT, true, 0, 0, NULL},
                                            {"axis", TFD_ATTR_INT, false, 0, 0, NULL}, SH_END};
static const tfd_attr_def attrs_slice[] = {SH_T, {"Index", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL}, SH_END};
static const tfd_attr_def attrs_strided_slice[] = {SH_T,
                                                   {"Index", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL},
                                                   {"begin_mask", TFD_ATTR_INT, false, 0, 0, NULL},
                                                   {"end_mask", TFD_ATTR_INT, false, 0, 0, NULL},
                                                   {"ellipsis_mask", TFD_ATTR_INT, false, 0, 0, NULL},
                                                   {"new_axis_mask", TFD_ATTR_INT, false, 0, 0, NULL},
                                                   {"shrink_axis_mask", TFD_ATTR_INT, false, 0, 0, NULL},
                                                   SH_END};
static const tfd_attr_def attrs_gather[] = {{"Tparams", TFD_ATTR_TYPE, false, 0, 0, NULL},
                                            {"Tindices", TFD_ATTR_TYPE, false, 0, 0, NULL},
                                            {"Taxis", TFD_ATTR_TYPE, false, 0, 0, NULL},
                                            {"batch_dims", TFD_ATTR_INT, false, 0, 0, NULL}, SH_END};
static const tfd_attr_def attrs_gather_nd[] = {{"Tparams", TFD_ATTR_TYPE, false, 0, 0, NULL},
                                               {"Tindices", TFD_ATTR_TYPE, false, 0, 0, NULL}, SH_END};
static const tfd_attr_def attrs_tile[] = {SH_T, {"Tmultiples", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL}, SH_END};
static const tfd_attr_def attrs_broadcast_to[] = {SH_T, {"Tidx", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL}, SH_END};
static const tfd_attr_def attrs_range[] = {{"Tidx", TFD_ATTR_TYPE, false, 0, 0, NULL}, SH_END};
static const tfd_attr_def attrs_split[] = {SH_T, {"num_split", TFD_ATTR_INT, true, 0, 0, NULL}, SH_END};
static const tfd_attr_def attrs_split_v[] = {SH_T, {"num_split", TFD_ATTR_INT, true, 0, 0, NULL},
                                             {"Tlen", TFD_ATTR_TYPE, false, TFD_INT64, 0, NULL}, SH_END};
static const tfd_attr_def attrs_arg_max[] = {SH_T, {"Tidx", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL},
                                             {"output_type", TFD_ATTR_TYPE, false, TFD_INT64, 0, NULL}, SH_END};
static const tfd_attr_def attrs_top_k[] = {SH_T, {"sorted", TFD_ATTR_BOOL, false, 1, 0, NULL},
                                           {"Tk", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL},
                                           {"index_type", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL}, SH_END};

static const char *op_name(const tfd_infer_ctx *c) { return tfd_node_def_op(c->node); }

/* A known scalar axis (input `i`) normalised into [0, rank); *known false when it is not constant. */
static tfd_code const_axis(tfd_infer_ctx *c, int i, int rank, bool *known, int64_t *axis, tfd_status *st) {
  *known = false;
  if (need_index(c, i, "axis", st) != TFD_OK) return TFD_INVALID_ARGUMENT;
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

static tfd_code infer_expand_dims(tfd_infer_ctx *c, tfd_status *st) {
  const tfd_shape *in = &c->in_shapes[0];
  bool known;
  int64_t axis = 0;
  c->out_types[0] = c->in_types[0];
  unknown(&c->out_shapes[0]);
  if (in->ndims >= TFD_MAX_DIMS)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (ExpandDims): the result would have more than %d dimensions",
                           node_name(c), TFD_MAX_DIMS);
  if (const_axis(c, 1, in->ndims < 0 ? -1 : in->ndims + 1, &known, &axis, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
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
        return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (Squeeze): squeeze_dims %lld is out of range [%d, %d)",
                               node_name(c), (long long)a, -in->ndims, in->ndims);
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
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (Pack): N is %lld but %d values are given", node_name(c),
                           (long long)nattr->i, c->num_inputs);
  tfd_shape s;
  unknown(&s);
  for (int i = 0; i < c->num_inputs; i++) {
    if (same_types(c, 0, i, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
    const tfd_shape *x = &c->in_shapes[i];
    if (x->ndims < 0) continue;
    if (s.ndims < 0) {
      s = *x;
      continue;
    }
    bool ok = x->ndims == s.ndims;
    for (int d = 0; ok && d < s.ndims; d++) {
      if (x->dims[d] >= 0 && s.dims[d] >= 0 && x->dims[d] != s.dims[d]) ok = false;
      else if (s.dims[d] < 0) s.dims[d] = x->dims[d];
    }
    if (!ok) {
      char a[96], b[96];
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (Pack): Shapes of all inputs must match: values[0].shape = %s != values[%d].shape = %s",
                             node_name(c), tfd_shape_string(&c->in_shapes[0], a, sizeof a), i, tfd_shape_string(x, b, sizeof b));
    }
  }
  c->out_types[0] = c->in_types[0];
  tfd_shape *o = &c->out_shapes[0];
  unknown(o);
  if (s.ndims < 0) return TFD_OK;
  int64_t axis = attr(c, "axis")->i;
  if (s.ndims >= TFD_MAX_DIMS || axis < -(s.ndims + 1) || axis > s.ndims)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (Pack): axis %lld is out of range [%d, %d) (or the result has more than %d dimensions)",
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
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (Unpack): num is %lld but dimension %lld has size %lld",
                             node_name(c), (long long)num, (long long)axis, (long long)in->dims[axis]);
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

/* StridedSlice's index spec, as TensorFlow's ValidateStridedSliceOp reads it: the sparse spec (one entry per
 * begin/end/strides element, with ellipsis and new axes) made dense (one entry per input dimension), then
 * clamped per dimension. Unknown input sizes (-1) give unknown result sizes and skip the bounds checks. */
#define SS_MAX_SPARSE 32
enum { SS_NEW_AXIS = -1, SS_SHRINK = -2 };

tfd_code tfd_strided_slice_plan_make(const tfd_shape *in, const tfd_tensor *bt, const tfd_tensor *et, const tfd_tensor *st,
                                     const tfd_strided_slice_masks *masks, tfd_strided_slice_plan *p, tfd_status *status) {
  int nd = in->ndims;
  int64_t ns = tfd_tensor_numel(bt);
  tfd_dtype it = tfd_tensor_dtype(bt);
  if (!(TFD_TYPES_INDEX & (1u << it)) || tfd_tensor_ndims(bt) != 1 || tfd_tensor_ndims(et) != 1 ||
      tfd_tensor_ndims(st) != 1 || tfd_tensor_numel(et) != ns || tfd_tensor_numel(st) != ns ||
      tfd_tensor_dtype(et) != it || tfd_tensor_dtype(st) != it)
    return tfd_status_setf(status, TFD_INVALID_ARGUMENT,
                           "Expected begin, end, and strides to be 1D equal size int32 or int64 tensors of one dtype");
  if (ns >= SS_MAX_SPARSE)
    return tfd_status_setf(status, TFD_INVALID_ARGUMENT, "begin has %lld entries; at most %d are supported", (long long)ns,
                           SS_MAX_SPARSE - 1);
  uint64_t ellipsis_mask = masks->ellipsis & ((1ull << ns) - 1); /* bits past the spec mean nothing */
  if (ellipsis_mask & (ellipsis_mask - 1))
    return tfd_status_setf(status, TFD_INVALID_ARGUMENT, "Multiple ellipses in slice spec not allowed");
  int sparse = (int)ns, new_after_ellipsis = 0;
  bool seen_ellipsis = false;
  for (int i = 0; i < sparse; i++) {
    if (seen_ellipsis && (masks->new_axis >> i & 1)) new_after_ellipsis++;
    if (ellipsis_mask >> i & 1) seen_ellipsis = true;
  }
  if (!seen_ellipsis) ellipsis_mask |= 1ull << sparse++;
  int64_t dbegin[TFD_MAX_DIMS], dend[TFD_MAX_DIMS], dstride[TFD_MAX_DIMS];
  bool dbm[TFD_MAX_DIMS] = {0}, dem[TFD_MAX_DIMS] = {0}, dshrink[TFD_MAX_DIMS] = {0};
  int gather[SS_MAX_SPARSE + TFD_MAX_DIMS], ngather = 0, full = 0;
  for (int i = 0; i < sparse; i++) {
    if (ellipsis_mask >> i & 1) {
      int next = nd - (sparse - i) + 1 + new_after_ellipsis;
      if (next > nd) next = nd;
      for (; full < next; full++) {
        dbegin[full] = dend[full] = 0;
        dstride[full] = 1;
        dbm[full] = dem[full] = true;
        gather[ngather++] = full;
      }
    } else if (masks->new_axis >> i & 1) {
      gather[ngather++] = SS_NEW_AXIS;
    } else {
      if (full >= nd)
        return tfd_status_setf(status, TFD_INVALID_ARGUMENT, "Index out of range using input dim %d; input has only %d dims",
                               full, nd);
      dbegin[full] = tfd_tensor_get_index(bt, i);
      dend[full] = tfd_tensor_get_index(et, i);
      dstride[full] = tfd_tensor_get_index(st, i);
      dbm[full] = masks->begin >> i & 1;
      dem[full] = masks->end >> i & 1;
      dshrink[full] = masks->shrink >> i & 1;
      gather[ngather++] = dshrink[full] ? SS_SHRINK : full;
      full++;
    }
  }
  for (; full < nd; full++) { /* dimensions the spec leaves out are taken whole */
    dbegin[full] = dend[full] = 0;
    dstride[full] = 1;
    dbm[full] = dem[full] = true;
  }
  p->ndims = nd;
  for (int d = 0; d < nd; d++) {
    int64_t dim = in->dims[d], stride = dstride[d];
    if (stride == 0) return tfd_status_setf(status, TFD_INVALID_ARGUMENT, "strides[%d] must be non-zero", d);
    p->stride[d] = stride;
    if (dshrink[d]) {
      if (stride <= 0)
        return tfd_status_setf(status, TFD_INVALID_ARGUMENT, "only stride 1 allowed on non-range indexing.");
      int64_t b = dbegin[d] < 0 && dim >= 0 ? dim + dbegin[d] : dbegin[d];
      if (dim >= 0 && (b < 0 || b >= dim))
        return tfd_status_setf(status, TFD_INVALID_ARGUMENT, "slice index %lld of dimension %d out of bounds.",
                               (long long)dbegin[d], d);
      p->begin[d] = b;
      p->stride[d] = 1;
      p->dims[d] = 1;
      continue;
    }
    if (dim < 0) {
      p->begin[d] = 0;
      p->dims[d] = -1;
      continue;
    }
    int64_t lo = stride > 0 ? 0 : -1, hi = stride > 0 ? dim : dim - 1, be[2] = {dbegin[d], dend[d]};
    bool masked[2] = {dbm[d], dem[d]};
    for (int e = 0; e < 2; e++) {
      if (masked[e]) {
        be[e] = (stride > 0) == (e == 0) ? lo : hi;
      } else {
        int64_t x = be[e] < 0 ? (be[e] < -dim ? -1 - dim : be[e]) + dim : be[e]; /* no overflow for huge negatives */
        be[e] = x < lo ? lo : x > hi ? hi : x;
      }
    }
    p->begin[d] = be[0];
    int64_t len = be[1] - be[0]; /* both in [-1, dim]: no overflow */
    if (len == 0 || (len < 0) != (stride < 0)) p->dims[d] = 0;
    else if (stride == INT64_MIN) p->dims[d] = 1; /* |len| < |stride| */
    else p->dims[d] = len / stride + (len % stride != 0);
  }
  p->final.ndims = 0;
  for (int i = 0; i < ngather; i++) {
    if (gather[i] == SS_SHRINK) continue;
    if (p->final.ndims == TFD_MAX_DIMS)
      return tfd_status_setf(status, TFD_INVALID_ARGUMENT, "the result would have more than %d dimensions", TFD_MAX_DIMS);
    p->final.dims[p->final.ndims++] = gather[i] == SS_NEW_AXIS ? 1 : p->dims[gather[i]];
  }
  return TFD_OK;
}

void tfd_strided_slice_masks_of(const tfd_node_def *node, tfd_strided_slice_masks *m) {
  static const char *const names[5] = {"begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask"};
  uint64_t *f[5] = {&m->begin, &m->end, &m->ellipsis, &m->new_axis, &m->shrink};
  for (int i = 0; i < 5; i++) {
    const tfd_attr_value *v = tfd_node_def_attr(node, names[i]);
    *f[i] = v && v->type == TFD_ATTR_INT ? (uint64_t)v->i : 0;
  }
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
    if (need_index(c, i, what, st) != TFD_OK || need_rank(c, i, 1, what, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
    if (same_types(c, 1, i, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
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
    if (s >= 0) o->dims[d] = s;
    else o->dims[d] = begin && in->dims[d] >= 0 && b >= 0 && b <= in->dims[d] ? in->dims[d] - b : -1;
  }
  return TFD_OK;
}

/* Concat (concat_dim, values...): the values' dtype; their rank when known (the kernel checks sizes). */
static tfd_code infer_concat_v1(tfd_infer_ctx *c, tfd_status *st) {
  if (need_index(c, 0, "concat_dim", st) != TFD_OK || need_rank(c, 0, 0, "concat_dim", st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  for (int i = 2; i < c->num_inputs; i++)
    if (same_types(c, 1, i, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  c->out_types[0] = c->in_types[1];
  c->out_shapes[0] = c->in_shapes[1];
  for (int d = 0; d < c->out_shapes[0].ndims; d++) c->out_shapes[0].dims[d] = -1;
  return TFD_OK;
}

/* Gather (params, indices): indices' shape then params' after its first dimension. */
static tfd_code infer_gather_v1(tfd_infer_ctx *c, tfd_status *st) {
  if (need_index(c, 1, "indices", st) != TFD_OK) return TFD_INVALID_ARGUMENT;
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
  if (need_index(c, 1, "indices", st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  c->out_types[0] = c->in_types[0];
  tfd_shape *o = &c->out_shapes[0];
  unknown(o);
  const tfd_shape *p = &c->in_shapes[0], *ix = &c->in_shapes[1];
  if (nd) {
    if (ix->ndims == 0)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (GatherNd): indices must have rank >= 1", node_name(c));
    if (p->ndims < 0 || ix->ndims < 0 || ix->dims[ix->ndims - 1] < 0) return TFD_OK;
    int64_t depth = ix->dims[ix->ndims - 1];
    if (depth > p->ndims)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                             "node '%s' (GatherNd): index innermost dimension length must be <= params rank; saw: %lld vs. %d",
                             node_name(c), (long long)depth, p->ndims);
    if (ix->ndims - 1 + p->ndims - depth > TFD_MAX_DIMS)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (GatherNd): the result would have more than %d dimensions",
                             node_name(c), TFD_MAX_DIMS);
    o->ndims = 0;
    for (int d = 0; d < ix->ndims - 1; d++) o->dims[o->ndims++] = ix->dims[d];
    for (int d = (int)depth; d < p->ndims; d++) o->dims[o->ndims++] = p->dims[d];
    return TFD_OK;
  }
  bool known;
  int64_t axis = 0, b = attr(c, "batch_dims")->i;
  if (p->ndims == 0)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (GatherV2): params must be at least 1 dimensional", node_name(c));
  if (const_axis(c, 2, p->ndims, &known, &axis, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  if (!known || ix->ndims < 0) return TFD_OK;
  /* batch_dims: TensorFlow's GatherOp checks, with its texts. */
  if (b != 0) {
    if (b < -ix->ndims || b > ix->ndims)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (GatherV2): Expected batch_dims in the range [%d, %d], but got %lld",
                             node_name(c), -ix->ndims, ix->ndims, (long long)b);
    if (b < 0) b += ix->ndims;
    if (p->ndims >= 0 && b >= p->ndims)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (GatherV2): batch_dims (%lld) must be less than rank(params) (%d).",
                             node_name(c), (long long)b, p->ndims);
    if (axis < b)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                             "node '%s' (GatherV2): batch_dims (%lld) must be less than or equal to axis (%lld).", node_name(c),
                             (long long)b, (long long)axis);
    for (int d = 0; d < b; d++)
      if (p->dims[d] >= 0 && ix->dims[d] >= 0 && p->dims[d] != ix->dims[d])
        return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                               "node '%s' (GatherV2): params.shape[%d]: %lld should be equal to indices.shape[%d]: %lld",
                               node_name(c), d, (long long)p->dims[d], d, (long long)ix->dims[d]);
  }
  if (p->ndims - 1 + ix->ndims - b > TFD_MAX_DIMS)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (GatherV2): the result would have more than %d dimensions",
                           node_name(c), TFD_MAX_DIMS);
  o->ndims = 0;
  for (int d = 0; d < axis; d++) o->dims[o->ndims++] = p->dims[d];
  for (int d = (int)b; d < ix->ndims; d++) o->dims[o->ndims++] = ix->dims[d];
  for (int d = (int)axis + 1; d < p->ndims; d++) o->dims[o->ndims++] = p->dims[d];
  return TFD_OK;
}

static tfd_code shape_from_sizes(tfd_infer_ctx *c, int input, tfd_shape *out, tfd_status *st);

/* BroadcastTo: the shape input's value, when known; the kernel checks the input broadcasts to it. */
static tfd_code infer_broadcast_to(tfd_infer_ctx *c, tfd_status *st) {
  if (need_index(c, 1, "shape", st) != TFD_OK || need_rank(c, 1, 1, "shape", st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  c->out_types[0] = c->in_types[0];
  return shape_from_sizes(c, 1, &c->out_shapes[0], st);
}

/* SparseToDense: output_shape's value when known, of sparse_values' dtype; the kernel checks the indices. */
static tfd_code infer_sparse_to_dense(tfd_infer_ctx *c, tfd_status *st) {
  if (need_index(c, 0, "sparse_indices", st) != TFD_OK || need_index(c, 1, "output_shape", st) != TFD_OK ||
      same_types(c, 0, 1, st) != TFD_OK || same_types(c, 2, 3, st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  c->out_types[0] = c->in_types[2];
  return shape_from_sizes(c, 1, &c->out_shapes[0], st);
}

/* ---- issue 26, elementwise math (k_math.c) ---- */
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
  if (same_types(c, 0, 1, st) != TFD_OK || same_types(c, 0, 2, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  return infer_same(c, st);
}

/* LogSoftmax: TensorFlow's UnchangedShapeWithRankAtLeast(1). */
static tfd_code infer_log_softmax(tfd_infer_ctx *c, tfd_status *st) {
  if (c->in_shapes[0].ndims == 0)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (LogSoftmax): Shape must be at least rank 1 but is rank 0",
                           node_name(c));
  return infer_same(c, st);
}

static tfd_code infer_tile(tfd_infer_ctx *c, tfd_status *st) {
  if (need_index(c, 1, "multiples", st) != TFD_OK || need_rank(c, 1, 1, "multiples", st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  c->out_types[0] = c->in_types[0];
  const tfd_shape *in = &c->in_shapes[0];
  const tfd_tensor *m = c->in_values ? c->in_values[1] : NULL;
  tfd_shape *o = &c->out_shapes[0];
  *o = *in;
  if (in->ndims < 0) return TFD_OK;
  if (c->in_shapes[1].ndims == 1 && c->in_shapes[1].dims[0] >= 0 && c->in_shapes[1].dims[0] != in->ndims)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (Tile): Expected multiples argument to be a vector of length %d but got length %lld",
                           node_name(c), in->ndims, (long long)c->in_shapes[1].dims[0]);
  for (int d = 0; d < in->ndims; d++) {
    int64_t k = m ? tfd_tensor_get_index(m, d) : -1;
    if (m && k < 0)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (Tile): Expected multiples[%d] >= 0, but got %lld",
                             node_name(c), d, (long long)k);
    if (k < 0 || in->dims[d] < 0 || !tfd_checked_mul(in->dims[d], k, &o->dims[d])) o->dims[d] = -1;
  }
  return TFD_OK;
}

static tfd_code infer_range(tfd_infer_ctx *c, tfd_status *st) {
  for (int i = 0; i < 3; i++) {
    if (same_types(c, 0, i, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
    if (c->in_shapes[i].ndims > 0)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (Range): %s must be a scalar", node_name(c),
                             i == 0 ? "start" : i == 1 ? "limit" : "delta");
  }
  c->out_types[0] = c->in_types[0];
  c->out_shapes[0].ndims = 1;
  c->out_shapes[0].dims[0] = -1; /* the kernel checks the values */
  return TFD_OK;
}

static tfd_code infer_split(tfd_infer_ctx *c, tfd_status *st) {
  bool v = strcmp(op_name(c), "SplitV") == 0;
  int value = v ? 0 : 1, axis_in = v ? 2 : 0;
  const tfd_shape *in = &c->in_shapes[value];
  bool known;
  int64_t axis = 0, num = attr(c, "num_split")->i;
  if (v && (need_index(c, 1, "size_splits", st) != TFD_OK || need_rank(c, 1, 1, "size_splits", st) != TFD_OK))
    return TFD_INVALID_ARGUMENT;
  if (const_axis(c, axis_in, in->ndims, &known, &axis, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  if (!v && known && in->dims[axis] >= 0 && in->dims[axis] % num != 0)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
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

static tfd_code infer_arg_max(tfd_infer_ctx *c, tfd_status *st) {
  tfd_dtype out = attr(c, "output_type")->dtype;
  if (!(TFD_TYPES_INDEX & (1u << out)))
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): output_type must be int32 or int64, got %s",
                           node_name(c), op_name(c), tfd_dtype_name(out));
  const tfd_shape *in = &c->in_shapes[0];
  bool known;
  int64_t axis = 0;
  if (const_axis(c, 1, in->ndims, &known, &axis, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  c->out_types[0] = out;
  tfd_shape *o = &c->out_shapes[0];
  unknown(o);
  if (!known) return TFD_OK;
  o->ndims = 0;
  for (int d = 0; d < in->ndims; d++)
    if (d != axis) o->dims[o->ndims++] = in->dims[d];
  return TFD_OK;
}

static tfd_code infer_top_k(tfd_infer_ctx *c, tfd_status *st) {
  if (need_index(c, 1, "k", st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  tfd_dtype it = attr(c, "index_type")->dtype;
  if (!(TFD_TYPES_INDEX & (1u << it)))
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (TopKV2): index_type must be int32 or int64", node_name(c));
  const tfd_shape *in = &c->in_shapes[0];
  if (in->ndims == 0)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (TopKV2): input must be at least 1-D, got a scalar", node_name(c));
  if (c->in_shapes[1].ndims > 0)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (TopKV2): k must be a scalar", node_name(c));
  c->out_types[0] = c->in_types[0];
  c->out_types[1] = it;
  c->out_shapes[0] = *in;
  const tfd_tensor *k = c->in_values ? c->in_values[1] : NULL;
  if (in->ndims > 0) {
    int64_t kv = k ? tfd_tensor_get_index(k, 0) : -1, last = in->dims[in->ndims - 1];
    if (k && kv < 0)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (TopKV2): Need k >= 0, got %lld", node_name(c), (long long)kv);
    if (k && last >= 0 && last < kv)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (TopKV2): input must have at least k columns. Had %lld, needed %lld",
                             node_name(c), (long long)last, (long long)kv);
    c->out_shapes[0].dims[in->ndims - 1] = kv;
  }
  c->out_shapes[1] = c->out_shapes[0];
  return TFD_OK;
}

static tfd_code infer_bias_add(tfd_infer_ctx *c, tfd_status *st) {
  if (same_types(c, 0, 1, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  const tfd_shape *v = &c->in_shapes[0], *b = &c->in_shapes[1];
  if (b->ndims >= 0 && b->ndims != 1)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (BiasAdd): bias must be 1-D", node_name(c));
  if (v->ndims == 0)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (BiasAdd): value must have rank >= 1", node_name(c));
  if (v->ndims > 0 && b->ndims == 1 && v->dims[v->ndims - 1] >= 0 && b->dims[0] >= 0 &&
      v->dims[v->ndims - 1] != b->dims[0])
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (BiasAdd): bias has %lld elements but the last dimension of value is %lld",
                           node_name(c), (long long)b->dims[0], (long long)v->dims[v->ndims - 1]);
  c->out_types[0] = c->in_types[0];
  c->out_shapes[0] = *v;
  return TFD_OK;
}

static tfd_code infer_reduce(tfd_infer_ctx *c, tfd_status *st) {
  if (need_index(c, 1, "reduction indices", st) != TFD_OK) return TFD_INVALID_ARGUMENT;
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
    if (!reduce[i]) o->dims[o->ndims++] = in->dims[i];
    else if (keep) o->dims[o->ndims++] = 1;
  }
  return TFD_OK;
}

static tfd_code infer_reshape(tfd_infer_ctx *c, tfd_status *st) {
  if (need_index(c, 1, "shape", st) != TFD_OK || need_rank(c, 1, 1, "shape", st) != TFD_OK) return TFD_INVALID_ARGUMENT;
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
  if (need_index(c, 1, "perm", st) != TFD_OK || need_rank(c, 1, 1, "perm", st) != TFD_OK) return TFD_INVALID_ARGUMENT;
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

/* Shape from a 1-D int tensor of sizes (Fill's dims, Random*'s shape). */
static tfd_code shape_from_sizes(tfd_infer_ctx *c, int input, tfd_shape *out, tfd_status *st) {
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

static tfd_code infer_fill(tfd_infer_ctx *c, tfd_status *st) {
  if (need_index(c, 0, "dims", st) != TFD_OK || need_rank(c, 0, 1, "dims", st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  if (c->in_shapes[1].ndims > 0)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (Fill): value must be a scalar", node_name(c));
  c->out_types[0] = c->in_types[1];
  return shape_from_sizes(c, 0, &c->out_shapes[0], st);
}

static tfd_code infer_random(tfd_infer_ctx *c, tfd_status *st) {
  if (need_index(c, 0, "shape", st) != TFD_OK || need_rank(c, 0, 1, "shape", st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  c->out_types[0] = attr(c, "dtype")->dtype;
  return shape_from_sizes(c, 0, &c->out_shapes[0], st);
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
    if (i < 3) o->dims[i] = to_space ? d * b : (d % b ? -1 : d / b);
    else o->dims[i] = to_space ? (d % (b * b) ? -1 : d / (b * b)) : d * b * b;
  }
  return TFD_OK;
}

/* SpaceToBatchND / BatchToSpaceND: the input's rank; the batch and spatial sizes where block_shape and
 * the paddings (crops) are constants and valid, else unknown (the kernel says what is wrong). */
static tfd_code infer_space_batch(tfd_infer_ctx *c, tfd_status *st) {
  bool to_batch = strcmp(tfd_node_def_op(c->node), "SpaceToBatchND") == 0;
  if (need_index(c, 1, "block_shape", st) != TFD_OK || need_index(c, 2, to_batch ? "paddings" : "crops", st) != TFD_OK)
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
    known = b >= 1 && lo >= 0 && hi >= 0 && lo < INT64_MAX / 4 && hi < INT64_MAX / 4 && tfd_checked_mul(blocks, b, &blocks);
    if (!known || d < 0) o->dims[i + 1] = -1;
    else if (to_batch) o->dims[i + 1] = (d + lo + hi) % b ? -1 : (d + lo + hi) / b;
    else o->dims[i + 1] = d > INT64_MAX / b || d * b - lo - hi < 0 ? -1 : d * b - lo - hi;
  }
  if (!known) {
    for (int i = 0; i < (m >= 0 && m < in->ndims ? m + 1 : in->ndims); i++) o->dims[i] = -1;
  } else if (in->dims[0] >= 0) {
    if (to_batch) o->dims[0] = tfd_checked_mul(in->dims[0], blocks, &o->dims[0]) ? o->dims[0] : -1;
    else o->dims[0] = in->dims[0] % blocks ? -1 : in->dims[0] / blocks;
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
  if (n < 1) return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (ConcatV2): needs at least one value", node_name(c));
  for (int i = 1; i < n; i++)
    if (same_types(c, 0, i, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
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
        if (o->dims[d] < 0 || v < 0) o->dims[d] = -1;
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

/* Resource handles hold their container and name in fixed fields: say so at
 * graph build, naming the node, rather than failing at the first run. */
static tfd_code check_handle_names(tfd_infer_ctx *c, tfd_status *st) {
  const tfd_attr_value *container = attr(c, "container"), *shared = attr(c, "shared_name");
  const char *name = shared && shared->s && *shared->s ? shared->s : node_name(c);
  size_t clen = container && container->s ? strlen(container->s) : 0, nlen = strlen(name);
  tfd_resource_handle h;
  if (clen >= sizeof h.container)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): container is %zu bytes, at most %zu", node_name(c),
                           tfd_node_def_op(c->node), clen, sizeof h.container - 1);
  if (nlen >= sizeof h.name)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (%s): the resource's name is %zu bytes, at most %zu (give a shorter shared_name)",
                           node_name(c), tfd_node_def_op(c->node), nlen, sizeof h.name - 1);
  return TFD_OK;
}

static tfd_code infer_var_handle(tfd_infer_ctx *c, tfd_status *st) {
  if (check_handle_names(c, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  c->out_types[0] = TFD_RESOURCE;
  c->out_shapes[0].ndims = 0;
  return TFD_OK;
}

static tfd_code need_resource(tfd_infer_ctx *c, tfd_status *st) {
  if (c->in_types[0] != TFD_RESOURCE)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): input 0 must be a resource handle, got %s",
                           node_name(c), tfd_node_def_op(c->node), tfd_dtype_name(c->in_types[0]));
  return TFD_OK;
}

static tfd_code infer_read_variable(tfd_infer_ctx *c, tfd_status *st) {
  if (need_resource(c, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  c->out_types[0] = attr(c, "dtype")->dtype;
  unknown(&c->out_shapes[0]);
  return TFD_OK;
}

static tfd_code infer_assign_variable(tfd_infer_ctx *c, tfd_status *st) {
  if (need_resource(c, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  if (c->in_types[1] != attr(c, "dtype")->dtype)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): value is %s but the variable is %s",
                           node_name(c), tfd_node_def_op(c->node), tfd_dtype_name(c->in_types[1]),
                           tfd_dtype_name(attr(c, "dtype")->dtype));
  return TFD_OK;
}

static tfd_code infer_queue(tfd_infer_ctx *c, tfd_status *st) {
  const tfd_attr_value *t = attr(c, "component_types");
  if (t->list_len < 1 || t->list_len > TFD_MAX_QUEUE_COMPONENTS)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s': component_types must list 1 to %d dtypes",
                           node_name(c), TFD_MAX_QUEUE_COMPONENTS);
  return infer_var_handle(c, st);
}

static tfd_code infer_enqueue(tfd_infer_ctx *c, tfd_status *st) {
  if (need_resource(c, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
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
  if (need_resource(c, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  const tfd_attr_value *t = attr(c, "component_types");
  for (int i = 0; i < c->num_outputs; i++) {
    c->out_types[i] = t->list_type[i];
    unknown(&c->out_shapes[i]);
  }
  return TFD_OK;
}

static tfd_code infer_queue_size(tfd_infer_ctx *c, tfd_status *st) {
  if (need_resource(c, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  c->out_types[0] = TFD_INT32;
  c->out_shapes[0].ndims = 0;
  return TFD_OK;
}

static tfd_code infer_queue_close(tfd_infer_ctx *c, tfd_status *st) { return need_resource(c, st); }

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

static tfd_code infer_recv(tfd_infer_ctx *c, tfd_status *st) {
  (void)st;
  c->out_types[0] = attr(c, "tensor_type")->dtype;
  unknown(&c->out_shapes[0]);
  return TFD_OK;
}

/* ---- elementwise math, comparisons, logic ---- */
/* Input i must be bool. */
static tfd_code need_bool(tfd_infer_ctx *c, int i, const char *what, tfd_status *st) {
  if (c->in_types[i] == TFD_BOOL) return TFD_OK;
  return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): %s (input %d) must be bool, got %s", node_name(c),
                         tfd_node_def_op(c->node), what, i, tfd_dtype_name(c->in_types[i]));
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
  return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): %s: input %d has shape %s but input %d has shape %s",
                         node_name(c), tfd_node_def_op(c->node), what, a,
                         tfd_shape_string(&c->in_shapes[a], sa, sizeof sa), b,
                         tfd_shape_string(&c->in_shapes[b], sb, sizeof sb));
}

/* Equal ... GreaterEqual: broadcasting, bool out. Equal/NotEqual with
 * incompatible_shape_error=false give a scalar for incompatible shapes. */
static tfd_code infer_compare(tfd_infer_ctx *c, tfd_status *st) {
  if (same_types(c, 0, 1, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
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
    if (need_bool(c, i, "operand", st) != TFD_OK) return TFD_INVALID_ARGUMENT;
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
  if (need_bool(c, 0, "condition", st) != TFD_OK || same_types(c, 1, 2, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
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
  if (need_bool(c, 0, "condition", st) != TFD_OK || same_types(c, 1, 2, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
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
    if (same_types(c, 0, i, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
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


/* ---- control flow (TensorFlow's control_flow_ops.cc) ----
 * Enter, Exit, NextIteration and LoopCond pass their input on; Switch sends it to one of two outputs;
 * Merge forwards the first of its inputs to arrive. The executor gives them their meaning (frames,
 * iterations, dead tensors: runtime/exec/frames.c). */
static tfd_code infer_enter(tfd_infer_ctx *c, tfd_status *st) {
  const tfd_attr_value *f = attr(c, "frame_name");
  if (!f || f->type != TFD_ATTR_STRING || !f->s || !*f->s)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "The Enter node '%s' must have a frame name.", node_name(c));
  const tfd_attr_value *p = attr(c, "parallel_iterations");
  if (p && p->i < 1)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (Enter): parallel_iterations must be positive, got %lld",
                           node_name(c), (long long)p->i);
  return infer_same(c, st);
}

static tfd_code infer_loop_cond(tfd_infer_ctx *c, tfd_status *st) {
  if (need_bool(c, 0, "input", st) != TFD_OK || need_rank(c, 0, 0, "input", st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  c->out_types[0] = TFD_BOOL;
  c->out_shapes[0].ndims = 0;
  return TFD_OK;
}

static tfd_code infer_switch(tfd_infer_ctx *c, tfd_status *st) {
  if (need_bool(c, 1, "pred", st) != TFD_OK || need_rank(c, 1, 0, "pred", st) != TFD_OK) return TFD_INVALID_ARGUMENT;
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

/* ---- TensorList (TensorFlow's list_ops.cc) ----
 * A list is a scalar variant; its element dtype is an attr, its element shape a shape tensor (an int
 * vector with -1 for unknown sizes, or the scalar -1 for an unknown rank). */
static tfd_code need_list(tfd_infer_ctx *c, int i, tfd_status *st) {
  if (c->in_types[i] != TFD_VARIANT)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): input %d must be a TensorList (variant), got %s",
                           node_name(c), op_name(c), i, tfd_dtype_name(c->in_types[i]));
  return need_rank(c, i, 0, "the list handle", st);
}

static tfd_code need_int32(tfd_infer_ctx *c, int i, const char *what, tfd_status *st) {
  if (c->in_types[i] != TFD_INT32)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): %s (input %d) must be int32, got %s", node_name(c),
                           op_name(c), what, i, tfd_dtype_name(c->in_types[i]));
  return TFD_OK;
}

/* element_dtype: present (or inferred from its input) and a dtype lists hold. */
static tfd_code need_element_dtype(tfd_infer_ctx *c, tfd_dtype *out, tfd_status *st) {
  const tfd_attr_value *e = attr(c, "element_dtype");
  if (!e || !e->dtype)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): missing required attr 'element_dtype'",
                           node_name(c), op_name(c));
  if (!(TFD_TYPES_ALL & (1u << e->dtype)))
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): element_dtype %s is not supported (lists hold %s)",
                           node_name(c), op_name(c), tfd_dtype_name(e->dtype),
                           "float32, float64, int32, int64, bool, uint8 and float16 tensors");
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
  if (need_index(c, i, "element_shape", st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  if (c->in_shapes[i].ndims > 1)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): element_shape (input %d) must be a scalar or a "
                           "vector, got rank %d", node_name(c), op_name(c), i, c->in_shapes[i].ndims);
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
      need_int32(c, 1, strcmp(op_name(c), "EmptyTensorList") == 0 ? "max_num_elements" : "num_elements", st) != TFD_OK ||
      need_rank(c, 1, 0, "the element count", st) != TFD_OK)
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
  if (need_list(c, 0, st) != TFD_OK || need_int32(c, 1, "index", st) != TFD_OK ||
      need_rank(c, 1, 0, "index", st) != TFD_OK || need_element_dtype(c, &e, st) != TFD_OK)
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
  if (need_list(c, 0, st) != TFD_OK || need_int32(c, 1, "index", st) != TFD_OK ||
      need_rank(c, 1, 0, "index", st) != TFD_OK || need_int32(c, 2, "element_shape", st) != TFD_OK ||
      need_shape_input(c, 2, st) != TFD_OK || need_element_dtype(c, &e, st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  c->out_types[0] = e;
  element_shape_of(c, 2, &c->out_shapes[0]);
  return TFD_OK;
}

static tfd_code infer_list_pop_back(tfd_infer_ctx *c, tfd_status *st) {
  tfd_dtype e;
  if (need_list(c, 0, st) != TFD_OK || need_int32(c, 1, "element_shape", st) != TFD_OK ||
      need_shape_input(c, 1, st) != TFD_OK || need_element_dtype(c, &e, st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  list_out(c, 0);
  c->out_types[1] = e;
  element_shape_of(c, 1, &c->out_shapes[1]);
  return TFD_OK;
}

static tfd_code infer_list_stack(tfd_infer_ctx *c, tfd_status *st) {
  tfd_dtype e;
  if (need_list(c, 0, st) != TFD_OK || need_int32(c, 1, "element_shape", st) != TFD_OK ||
      need_shape_input(c, 1, st) != TFD_OK || need_element_dtype(c, &e, st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  const tfd_attr_value *n = attr(c, "num_elements");
  if (n && n->i < -1)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (TensorListStack): num_elements must be -1 or at least 0, got %lld",
                           node_name(c), (long long)n->i);
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
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (TensorListElementShape): shape_type must be int32 or int64",
                           node_name(c));
  c->out_types[0] = t->dtype;
  unknown(&c->out_shapes[0]);
  return TFD_OK;
}

/* ---- TensorList gather/scatter/split/concat/resize (issue 26, lists helper; k_tensor_list.c) ---- */
static tfd_code infer_list_gather(tfd_infer_ctx *c, tfd_status *st) {
  tfd_dtype e;
  if (need_list(c, 0, st) != TFD_OK || need_int32(c, 1, "indices", st) != TFD_OK ||
      need_int32(c, 2, "element_shape", st) != TFD_OK || need_shape_input(c, 2, st) != TFD_OK ||
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
  if (need_element_dtype(c, &e, st) != TFD_OK || need_int32(c, 1, "indices", st) != TFD_OK ||
      need_shape_input(c, 2, st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  if (c->num_inputs > 3 && (need_int32(c, 3, "num_elements", st) != TFD_OK ||
                            need_rank(c, 3, 0, "num_elements", st) != TFD_OK))
    return TFD_INVALID_ARGUMENT;
  list_out(c, 0);
  return TFD_OK;
}

static tfd_code infer_list_scatter_into(tfd_infer_ctx *c, tfd_status *st) {
  tfd_dtype e;
  if (need_list(c, 0, st) != TFD_OK || need_element_dtype(c, &e, st) != TFD_OK ||
      need_int32(c, 2, "indices", st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  list_out(c, 0);
  return TFD_OK;
}

static tfd_code infer_list_resize(tfd_infer_ctx *c, tfd_status *st) {
  if (need_list(c, 0, st) != TFD_OK || need_int32(c, 1, "size", st) != TFD_OK ||
      need_rank(c, 1, 0, "size", st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  list_out(c, 0);
  return TFD_OK;
}

static tfd_code infer_list_split(tfd_infer_ctx *c, tfd_status *st) {
  tfd_dtype e;
  if (need_element_dtype(c, &e, st) != TFD_OK || need_shape_input(c, 1, st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  if (c->in_types[2] != TFD_INT64)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): lengths (input 2) must be int64, got %s", node_name(c),
                           op_name(c), tfd_dtype_name(c->in_types[2]));
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
/* ---- end of the TensorList gather/scatter family's inference ---- */

/* ---- hash tables (issue 26, lists helper; k_lookup_table.c) ----
 * A table is a resource; keys are int32, int64 or strings and values scalars of a numeric dtype, bool
 * or string. */
#define TABLE_KEYS ((1u << TFD_INT32) | (1u << TFD_INT64) | (1u << TFD_STRING))
#define TABLE_VALUES \
  ((1u << TFD_INT32) | (1u << TFD_INT64) | (1u << TFD_FLOAT32) | (1u << TFD_FLOAT64) | (1u << TFD_BOOL) | (1u << TFD_STRING))

static tfd_code table_dtype(tfd_infer_ctx *c, const char *name, unsigned mask, tfd_dtype *out, tfd_status *st) {
  const tfd_attr_value *a = attr(c, name);
  if (!a || !a->dtype)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): missing required attr '%s'", node_name(c), op_name(c),
                           name);
  if (!(mask & (1u << a->dtype)))
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): %s %s is not supported (%s)", node_name(c), op_name(c),
                           name, tfd_dtype_name(a->dtype),
                           mask == TABLE_KEYS ? "keys are int32, int64 or string"
                                              : "values are int32, int64, float32, float64, bool or string");
  *out = a->dtype;
  return TFD_OK;
}

static tfd_code infer_hash_table(tfd_infer_ctx *c, tfd_status *st) {
  tfd_dtype kd, vd;
  if (table_dtype(c, "key_dtype", TABLE_KEYS, &kd, st) != TFD_OK || table_dtype(c, "value_dtype", TABLE_VALUES, &vd, st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  return infer_var_handle(c, st);
}

static tfd_code need_table(tfd_infer_ctx *c, tfd_status *st) {
  if (c->in_types[0] != TFD_RESOURCE)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): input 0 must be a table handle (resource), got %s",
                           node_name(c), op_name(c), tfd_dtype_name(c->in_types[0]));
  return need_rank(c, 0, 0, "the table handle", st);
}

/* The table ops whose inputs 1 and 2 are keys and values (or default_value): their type attrs, when
 * given, must be the inputs' dtypes. */
static tfd_code infer_table_kv(tfd_infer_ctx *c, tfd_status *st) {
  if (need_table(c, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  const char *op = op_name(c);
  bool init = strncmp(op, "InitializeTable", 15) == 0;
  const char *names[2] = {init ? "Tkey" : "Tin", init ? "Tval" : "Tout"};
  for (int i = 0; i < 2 && i + 1 < c->num_inputs; i++) {
    const tfd_attr_value *a = attr(c, names[i]);
    if (a && a->dtype && a->dtype != c->in_types[i + 1])
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): input %d is %s but %s is %s", node_name(c), op, i + 1,
                             tfd_dtype_name(c->in_types[i + 1]), names[i], tfd_dtype_name(a->dtype));
  }
  if (strncmp(op, "LookupTableFind", 15) == 0) {
    c->out_types[0] = c->in_types[2];
    c->out_shapes[0] = c->in_shapes[1];
  }
  return TFD_OK;
}

static tfd_code infer_table_size(tfd_infer_ctx *c, tfd_status *st) {
  if (need_table(c, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  c->out_types[0] = TFD_INT64;
  c->out_shapes[0].ndims = 0;
  return TFD_OK;
}

static tfd_code infer_table_export(tfd_infer_ctx *c, tfd_status *st) {
  tfd_dtype kd, vd;
  if (need_table(c, st) != TFD_OK || table_dtype(c, "Tkeys", TABLE_KEYS, &kd, st) != TFD_OK ||
      table_dtype(c, "Tvalues", TABLE_VALUES, &vd, st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  c->out_types[0] = kd;
  c->out_types[1] = vd;
  c->out_shapes[0].ndims = c->out_shapes[1].ndims = 1;
  c->out_shapes[0].dims[0] = c->out_shapes[1].dims[0] = -1;
  return TFD_OK;
}
/* ---- end of the hash tables' inference ---- */

/* ---- TensorArray V3 (TensorFlow 1's data_flow_ops.cc; k_tensor_array.c) ----
 * A handle is a resource scalar; the float "flow" scalars only order the ops on one array. */
static tfd_code need_ta_inputs(tfd_infer_ctx *c, int flow, tfd_status *st) {
  if (c->in_types[0] != TFD_RESOURCE)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): input 0 must be a TensorArray handle (resource), got %s",
                           node_name(c), op_name(c), tfd_dtype_name(c->in_types[0]));
  if (flow >= 0 && c->in_types[flow] != TFD_FLOAT32)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): flow_in (input %d) must be float32, got %s",
                           node_name(c), op_name(c), flow, tfd_dtype_name(c->in_types[flow]));
  return need_rank(c, 0, 0, "the TensorArray handle", st);
}

static void scalar_out(tfd_infer_ctx *c, int i, tfd_dtype dt) {
  c->out_types[i] = dt;
  c->out_shapes[i].ndims = 0;
}

static tfd_code infer_tensor_array(tfd_infer_ctx *c, tfd_status *st) {
  const char *op = op_name(c) + strlen("TensorArray");
  const tfd_attr_value *dt = attr(c, "dtype");
  if (strcmp(op, "V3") == 0) {
    if (need_int32(c, 0, "size", st) != TFD_OK || need_rank(c, 0, 0, "size", st) != TFD_OK) return TFD_INVALID_ARGUMENT;
    scalar_out(c, 0, TFD_RESOURCE);
    scalar_out(c, 1, TFD_FLOAT32);
    return TFD_OK;
  }
  bool write = strcmp(op, "WriteV3") == 0, read = strcmp(op, "ReadV3") == 0, gather = strcmp(op, "GatherV3") == 0;
  bool scatter = strcmp(op, "ScatterV3") == 0, split = strcmp(op, "SplitV3") == 0, concat = strcmp(op, "ConcatV3") == 0;
  int flow = write || scatter || split ? 3 : read || gather ? 2 : strcmp(op, "CloseV3") == 0 ? -1 : 1;
  if (need_ta_inputs(c, flow, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  if ((write || read || gather || scatter) && need_int32(c, 1, write || read ? "index" : "indices", st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  if (split && c->in_types[2] != TFD_INT64)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): lengths (input 2) must be int64, got %s", node_name(c),
                           op_name(c), tfd_dtype_name(c->in_types[2]));
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

/* ---- NonMaxSuppression V2..V5 (TensorFlow's image_ops.cc) ---- */
static tfd_code infer_nms(tfd_infer_ctx *c, tfd_status *st) {
  const char *op = op_name(c);
  int version = op[strlen(op) - 1] - '0'; /* "NonMaxSuppressionV5" -> 5 */
  if (same_types(c, 0, 1, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  const tfd_shape *boxes = &c->in_shapes[0];
  if (boxes->ndims >= 0 && boxes->ndims != 2)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): boxes must be 2-D (Shape must be rank 2 but is rank %d)",
                           node_name(c), op, boxes->ndims);
  if (boxes->ndims == 2 && boxes->dims[1] >= 0 && boxes->dims[1] != 4)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): boxes must have 4 columns (Dimension must be 4 but is %lld)",
                           node_name(c), op, (long long)boxes->dims[1]);
  if (need_rank(c, 1, 1, "scores", st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  if (boxes->ndims == 2 && boxes->dims[0] >= 0 && c->in_shapes[1].ndims == 1 && c->in_shapes[1].dims[0] >= 0 &&
      boxes->dims[0] != c->in_shapes[1].dims[0])
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (%s): scores has incompatible shape (Dimensions must be equal, but are %lld and %lld)",
                           node_name(c), op, (long long)boxes->dims[0], (long long)c->in_shapes[1].dims[0]);
  if (need_int32(c, 2, "max_output_size", st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  static const char *const names[] = {"boxes", "scores", "max_output_size", "iou_threshold", "score_threshold",
                                      "soft_nms_sigma"};
  for (int i = 2; i < c->num_inputs; i++)
    if (need_rank(c, i, 0, names[i], st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  /* Thresholds: T in V5; T_threshold (V3, V4: float32 or float16); float32 in V2. */
  for (int i = 3; i < c->num_inputs; i++) {
    tfd_dtype want = version == 5 ? c->in_types[0] : version == 2 ? TFD_FLOAT32 : attr(c, "T_threshold")->dtype;
    if (c->in_types[i] != want)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): %s (input %d) must be %s, got %s", node_name(c),
                             op, names[i], i, tfd_dtype_name(want), tfd_dtype_name(c->in_types[i]));
  }
  bool pad = version >= 4 && attr(c, "pad_to_max_output_size")->b;
  const tfd_tensor *m = c->in_values ? c->in_values[2] : NULL;
  c->out_types[0] = TFD_INT32;
  c->out_shapes[0].ndims = 1;
  c->out_shapes[0].dims[0] = pad && m && tfd_tensor_numel(m) == 1 && tfd_tensor_get_index(m, 0) >= 0 ? tfd_tensor_get_index(m, 0) : -1;
  if (version == 5) {
    c->out_types[1] = c->in_types[0];
    c->out_shapes[1] = c->out_shapes[0];
  }
  if (version >= 4) {
    c->out_types[version == 5 ? 2 : 1] = TFD_INT32;
    c->out_shapes[version == 5 ? 2 : 1].ndims = 0;
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

/* ---- scatters, searches, uniques (issue 26's scatter family; kernels in k_scatter.c) ---- */
/* ScatterNd (indices, updates, shape): shape's value when known, of updates' dtype. */
static tfd_code infer_scatter_nd(tfd_infer_ctx *c, tfd_status *st) {
  if (need_index(c, 0, "indices", st) != TFD_OK || need_index(c, 2, "shape", st) != TFD_OK ||
      same_types(c, 0, 2, st) != TFD_OK || need_rank(c, 2, 1, "shape", st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  c->out_types[0] = c->in_types[1];
  return shape_from_sizes(c, 2, &c->out_shapes[0], st);
}

/* TensorScatterUpdate (tensor, indices, updates): tensor's shape and dtype. */
static tfd_code infer_tensor_scatter(tfd_infer_ctx *c, tfd_status *st) {
  if (need_index(c, 1, "indices", st) != TFD_OK || same_types(c, 0, 2, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  c->out_types[0] = c->in_types[0];
  c->out_shapes[0] = c->in_shapes[0];
  return TFD_OK;
}

/* BatchMatMul (the legacy op): BatchMatMulV2's shapes without broadcasting: both inputs have the
 * same rank and the same batch dimensions. */
static tfd_code infer_batch_matmul_v1(tfd_infer_ctx *c, tfd_status *st) {
  const tfd_shape *a = &c->in_shapes[0], *b = &c->in_shapes[1];
  char sa[96], sb[96];
  if (a->ndims >= 0 && b->ndims >= 0) {
    if (a->ndims != b->ndims)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (BatchMatMul): In[0] and In[1] has different ndims: %s vs. %s",
                             node_name(c), tfd_shape_string(a, sa, sizeof sa), tfd_shape_string(b, sb, sizeof sb));
    for (int d = 0; d < a->ndims - 2; d++)
      if (a->dims[d] >= 0 && b->dims[d] >= 0 && a->dims[d] != b->dims[d])
        return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                               "node '%s' (BatchMatMul): In[0].dim(%d) and In[1].dim(%d) must be the same: %s vs %s",
                               node_name(c), d, d, tfd_shape_string(a, sa, sizeof sa), tfd_shape_string(b, sb, sizeof sb));
  }
  return infer_batch_matmul(c, st);
}

/* An index dtype attr (out_type, out_idx) of the node: int32 or int64. */
static tfd_code index_attr(tfd_infer_ctx *c, const char *name, tfd_dtype *out, tfd_status *st) {
  *out = attr(c, name)->dtype;
  if (TFD_TYPES_INDEX & (1u << *out)) return TFD_OK;
  return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): %s must be int32 or int64, got %s", node_name(c),
                         op_name(c), name, tfd_dtype_name(*out));
}

/* LowerBound, UpperBound (sorted_inputs [B, N], values [B, M]): out_type, values' shape. */
static tfd_code infer_search_sorted(tfd_infer_ctx *c, tfd_status *st) {
  if (same_types(c, 0, 1, st) != TFD_OK || index_attr(c, "out_type", &c->out_types[0], st) != TFD_OK)
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
  if (index_attr(c, "out_idx", &c->out_types[1], st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  c->out_types[0] = c->in_types[0];
  const tfd_shape *x = &c->in_shapes[0];
  tfd_shape *y = &c->out_shapes[0], *idx = &c->out_shapes[1];
  idx->ndims = 1;
  idx->dims[0] = -1;
  if (!v2) {
    if (need_rank(c, 0, 1, "x", st) != TFD_OK) return TFD_INVALID_ARGUMENT;
    y->ndims = 1;
    y->dims[0] = -1;
    idx->dims[0] = x->ndims == 1 ? x->dims[0] : -1;
    return TFD_OK;
  }
  if (need_index(c, 1, "axis", st) != TFD_OK) return TFD_INVALID_ARGUMENT;
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
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (UniqueV2): axis has to be between [0, %d)", node_name(c),
                           x->ndims);
  y->dims[a] = -1;
  idx->dims[0] = x->dims[a];
  return TFD_OK;
}

/* ListDiff (x [N], y [M]): out [?] of x's dtype, idx [?] of out_idx. */
static tfd_code infer_list_diff(tfd_infer_ctx *c, tfd_status *st) {
  if (same_types(c, 0, 1, st) != TFD_OK || index_attr(c, "out_idx", &c->out_types[1], st) != TFD_OK ||
      need_rank(c, 0, 1, "x", st) != TFD_OK || need_rank(c, 1, 1, "y", st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  c->out_types[0] = c->in_types[0];
  for (int o = 0; o < 2; o++) {
    c->out_shapes[o].ndims = 1;
    c->out_shapes[o].dims[0] = -1;
  }
  return TFD_OK;
}

/* Bincount (arr, size, weights): [size] of weights' dtype. DenseBincount: [size] for a vector input,
 * [rows, size] for a matrix. */
static tfd_code infer_bincount(tfd_infer_ctx *c, tfd_status *st) {
  bool dense = strcmp(op_name(c), "DenseBincount") == 0;
  if (need_index(c, 0, dense ? "input" : "arr", st) != TFD_OK || need_index(c, 1, "size", st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  if (c->in_shapes[1].ndims > 0)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): Shape must be rank 0 but is rank %d", node_name(c),
                           op_name(c), c->in_shapes[1].ndims);
  if (dense && c->in_shapes[0].ndims > 2)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (DenseBincount): Shape must be at most rank 2 but is rank %d",
                           node_name(c), c->in_shapes[0].ndims);
  if (!dense && (c->in_types[0] != TFD_INT32 || c->in_types[1] != TFD_INT32))
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (Bincount): arr and size must be int32, got %s and %s",
                           node_name(c), tfd_dtype_name(c->in_types[0]), tfd_dtype_name(c->in_types[1]));
  if (dense && same_types(c, 0, 1, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
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

/* RandomUniformInt (shape, minval, maxval): Tout, shaped by shape's value. */
static tfd_code infer_random_int(tfd_infer_ctx *c, tfd_status *st) {
  if (need_index(c, 0, "shape", st) != TFD_OK || need_rank(c, 0, 1, "shape", st) != TFD_OK ||
      index_attr(c, "Tout", &c->out_types[0], st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  for (int i = 1; i < 3; i++) {
    if (c->in_types[i] != c->out_types[0])
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (RandomUniformInt): %s is %s but Tout is %s", node_name(c),
                             i == 1 ? "minval" : "maxval", tfd_dtype_name(c->in_types[i]), tfd_dtype_name(c->out_types[0]));
    if (c->in_shapes[i].ndims > 0)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (RandomUniformInt): %s must be 0-D, got rank %d",
                             node_name(c), i == 1 ? "minval" : "maxval", c->in_shapes[i].ndims);
  }
  return shape_from_sizes(c, 0, &c->out_shapes[0], st);
}

/* Multinomial (logits [B, C], num_samples): [B, num_samples] of output_dtype. */
static tfd_code infer_multinomial(tfd_infer_ctx *c, tfd_status *st) {
  if (need_rank(c, 0, 2, "logits", st) != TFD_OK || need_rank(c, 1, 0, "num_samples", st) != TFD_OK ||
      index_attr(c, "output_dtype", &c->out_types[0], st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  if (c->in_types[1] != TFD_INT32)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (Multinomial): num_samples must be int32, got %s",
                           node_name(c), tfd_dtype_name(c->in_types[1]));
  const tfd_tensor *ns = c->in_values ? c->in_values[1] : NULL;
  tfd_shape *o = &c->out_shapes[0];
  o->ndims = 2;
  o->dims[0] = c->in_shapes[0].ndims == 2 ? c->in_shapes[0].dims[0] : -1;
  o->dims[1] = ns && tfd_tensor_numel(ns) == 1 ? tfd_tensor_get_index(ns, 0) : -1;
  if (o->dims[1] < -1) o->dims[1] = -1; /* the kernel names a negative count */
  return TFD_OK;
}

/* LRN: 4-D input, output like it. */
static tfd_code infer_lrn(tfd_infer_ctx *c, tfd_status *st) {
  if (need_rank(c, 0, 4, "input", st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  return infer_same(c, st);
}
/* ---- graph utilities and array ops (issue 26's array family; kernels in k_array.c) ---- */
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
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (EnsureShape): Shape of tensor %s %s is not compatible with expected shape %s.",
                           node_name(c), tfd_node_def_num_inputs(c->node) ? tfd_node_def_input(c->node, 0) : "",
                           tfd_shape_string(in, a, sizeof a), tfd_shape_string(want, b, sizeof b));
  }
  c->out_shapes[0] = *want;
  for (int i = 0; in->ndims >= 0 && i < want->ndims; i++)
    if (want->dims[i] < 0) c->out_shapes[0].dims[i] = in->dims[i];
  return TFD_OK;
}

/* ReverseV2, Cumsum, Cumprod: the input's shape and dtype; input 1 (the axes) must be an index. */
static tfd_code infer_same_axis(tfd_infer_ctx *c, tfd_status *st) {
  if (need_index(c, 1, "axis", st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  return infer_same(c, st);
}

static tfd_code infer_reverse(tfd_infer_ctx *c, tfd_status *st) {
  if (c->in_types[1] != TFD_BOOL)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (Reverse): dims (input 1) must be bool, got %s",
                           node_name(c), tfd_dtype_name(c->in_types[1]));
  return infer_same(c, st);
}

static tfd_code infer_one_hot(tfd_infer_ctx *c, tfd_status *st) {
  tfd_dtype ti = c->in_types[0];
  if (ti != TFD_INT32 && ti != TFD_INT64 && ti != TFD_UINT8)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (OneHot): indices must be uint8, int32 or int64, got %s",
                           node_name(c), tfd_dtype_name(ti));
  if (c->in_types[1] != TFD_INT32)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (OneHot): depth must be int32, got %s", node_name(c),
                           tfd_dtype_name(c->in_types[1]));
  if (same_types(c, 2, 3, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
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

static tfd_code infer_lin_space(tfd_infer_ctx *c, tfd_status *st) {
  if (same_types(c, 0, 1, st) != TFD_OK || need_index(c, 2, "num", st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  c->out_types[0] = c->in_types[0];
  const tfd_tensor *n = c->in_values ? c->in_values[2] : NULL;
  c->out_shapes[0].ndims = 1;
  c->out_shapes[0].dims[0] = n && tfd_tensor_ndims(n) == 0 && tfd_tensor_get_index(n, 0) > 0 ? tfd_tensor_get_index(n, 0) : -1;
  return TFD_OK;
}

static tfd_code infer_all_any(tfd_infer_ctx *c, tfd_status *st) {
  if (c->in_types[0] != TFD_BOOL)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): input must be bool, got %s", node_name(c),
                           tfd_node_def_op(c->node), tfd_dtype_name(c->in_types[0]));
  return infer_reduce(c, st);
}

static tfd_code infer_broadcast_args(tfd_infer_ctx *c, tfd_status *st) {
  if (same_types(c, 0, 1, st) != TFD_OK || need_rank(c, 0, 1, "s0", st) != TFD_OK || need_rank(c, 1, 1, "s1", st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  c->out_types[0] = c->in_types[0];
  int64_t a = c->in_shapes[0].ndims == 1 ? c->in_shapes[0].dims[0] : -1, b = c->in_shapes[1].ndims == 1 ? c->in_shapes[1].dims[0] : -1;
  c->out_shapes[0].ndims = 1;
  c->out_shapes[0].dims[0] = a < 0 || b < 0 ? -1 : a > b ? a : b;
  return TFD_OK;
}

static tfd_code infer_band_part(tfd_infer_ctx *c, tfd_status *st) {
  if (need_index(c, 1, "num_lower", st) != TFD_OK || same_types(c, 1, 2, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  if (c->in_shapes[0].ndims >= 0 && c->in_shapes[0].ndims < 2) {
    char a[256];
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (MatrixBandPart): input must be at least 2-dim, received shape: %s",
                           node_name(c), tfd_shape_string(&c->in_shapes[0], a, sizeof a));
  }
  return infer_same(c, st);
}
/* ---- end of the array family's inference ---- */

/* ---- issue 26, convolution family: Conv3D, MaxPool3D, AvgPool3D (NDHWC), MaxPoolWithArgmax, Dilation2D
 * (NHWC). Ranks with TensorFlow's shape-function text, dtypes, and the output shape where the attrs are well
 * formed and the window fits; otherwise unknown sizes, and the kernel (k_conv3d.c, k_dilation.c) reports
 * TensorFlow's kernel text. */
static int64_t conv3d_family_window(int64_t in, int64_t k, int64_t dil, int64_t stride, bool same) {
  if (in < 0 || k < 1 || stride < 1 || dil < 1 || k > INT32_MAX || dil > INT32_MAX || stride > INT32_MAX ||
      in > INT64_MAX / 4)
    return -1;
  if (same) return (in + stride - 1) / stride;
  int64_t out = (in - ((k - 1) * dil + 1) + stride) / stride;
  return out < 0 ? -1 : out;
}

static tfd_code infer_conv3d_family(tfd_infer_ctx *c, tfd_status *st) {
  const char *op = tfd_node_def_op(c->node);
  bool conv3d = strcmp(op, "Conv3D") == 0, argmax = strcmp(op, "MaxPoolWithArgmax") == 0;
  bool dil = strcmp(op, "Dilation2D") == 0, pool3d = !conv3d && !argmax && !dil;
  int rank = conv3d || pool3d ? 5 : 4, frank = conv3d ? 5 : dil ? 3 : 0;
  const tfd_shape *x = &c->in_shapes[0], *f = frank ? &c->in_shapes[1] : NULL;
  if (x->ndims >= 0 && x->ndims != rank)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): Shape must be rank %d but is rank %d for input",
                           node_name(c), op, rank, x->ndims);
  if (f && f->ndims >= 0 && f->ndims != frank)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): Shape must be rank %d but is rank %d for filter",
                           node_name(c), op, frank, f->ndims);
  if (f && same_types(c, 0, 1, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  c->out_types[0] = c->in_types[0];
  if (argmax) {
    tfd_dtype t = attr(c, "Targmax")->dtype;
    if ((unsigned)t >= 32 || !(TFD_TYPES_INDEX & (1u << t)))
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): Targmax must be int32 or int64, got %s",
                             node_name(c), op, tfd_dtype_name(t) ? tfd_dtype_name(t) : "an unknown dtype");
    c->out_types[1] = t;
  }
  const tfd_attr_value *s = attr(c, "strides"), *ks = attr(c, "ksize"), *d = attr(c, conv3d ? "dilations" : "rates");
  const tfd_attr_value *pad = attr(c, "padding");
  bool same = pad && pad->type == TFD_ATTR_STRING && strcmp(pad->s, "SAME") == 0;
  bool ok = s && s->type == TFD_ATTR_LIST_INT && s->list_len == (size_t)rank && pad && pad->type == TFD_ATTR_STRING &&
            (same || strcmp(pad->s, "VALID") == 0);
  if (conv3d) ok = ok && (!d || d->type != TFD_ATTR_LIST_INT || d->list_len == 0 || d->list_len == 5);
  if (dil) ok = ok && d && d->type == TFD_ATTR_LIST_INT && d->list_len == 4;
  if (!conv3d && !dil) ok = ok && ks && ks->type == TFD_ATTR_LIST_INT && ks->list_len == (size_t)rank;
  bool known = x->ndims == rank && (!f || f->ndims == frank);
  tfd_shape *o = &c->out_shapes[0];
  o->ndims = rank;
  for (int i = 0; i < rank; i++) o->dims[i] = -1;
  if (x->ndims == rank) o->dims[0] = x->dims[0];
  if (conv3d) o->dims[4] = f->ndims == 5 ? f->dims[4] : -1;
  else if (x->ndims == rank) o->dims[rank - 1] = x->dims[rank - 1];
  for (int i = 0; i < rank - 2 && ok && known; i++) {
    int64_t k = f ? f->dims[i] : ks->list_i[1 + i];
    int64_t rate = d && d->type == TFD_ATTR_LIST_INT && d->list_len == (size_t)rank ? d->list_i[1 + i] : 1;
    o->dims[1 + i] = conv3d_family_window(x->dims[1 + i], k, rate, s->list_i[1 + i], same);
  }
  if (argmax) c->out_shapes[1] = *o;
  return TFD_OK;
}
/* ---- end of the convolution family's inference ---- */

/* ---- the table ---- */
#define A_T {"T", TFD_ATTR_TYPE, false, 0, 0, NULL}
#define END {NULL, 0, false, 0, 0, NULL}

static const tfd_attr_def attrs_t[] = {A_T, END};
static const tfd_attr_def attrs_none[] = {END};
static const tfd_attr_def attrs_ta_v3[] = {{"dtype", TFD_ATTR_TYPE, true, 0, 0, NULL},
                                           {"element_shape", TFD_ATTR_SHAPE, false, 0, 0, NULL},
                                           {"dynamic_size", TFD_ATTR_BOOL, false, 0, 0, NULL},
                                           {"clear_after_read", TFD_ATTR_BOOL, false, 1, 0, NULL},
                                           {"identical_element_shapes", TFD_ATTR_BOOL, false, 0, 0, NULL},
                                           {"tensor_array_name", TFD_ATTR_STRING, false, 0, 0, ""},
                                           END};
static const tfd_attr_def attrs_ta_read[] = {{"dtype", TFD_ATTR_TYPE, true, 0, 0, NULL}, END};
static const tfd_attr_def attrs_ta_gather[] = {{"dtype", TFD_ATTR_TYPE, true, 0, 0, NULL},
                                               {"element_shape", TFD_ATTR_SHAPE, false, 0, 0, NULL}, END};
static const tfd_attr_def attrs_ta_concat[] = {{"dtype", TFD_ATTR_TYPE, true, 0, 0, NULL},
                                               {"element_shape_except0", TFD_ATTR_SHAPE, false, 0, 0, NULL}, END};
static const tfd_attr_def attrs_const[] = {{"value", TFD_ATTR_TENSOR, true, 0, 0, NULL},
                                           {"dtype", TFD_ATTR_TYPE, false, 0, 0, NULL}, END};
static const tfd_attr_def attrs_placeholder[] = {{"dtype", TFD_ATTR_TYPE, true, 0, 0, NULL},
                                                 {"shape", TFD_ATTR_SHAPE, false, 0, 0, NULL}, END};
static const tfd_attr_def attrs_matmul[] = {A_T, {"transpose_a", TFD_ATTR_BOOL, false, 0, 0, NULL},
                                            {"transpose_b", TFD_ATTR_BOOL, false, 0, 0, NULL}, END};
static const tfd_attr_def attrs_fused_matmul[] = {A_T,
                                                  {"transpose_a", TFD_ATTR_BOOL, false, 0, 0, NULL},
                                                  {"transpose_b", TFD_ATTR_BOOL, false, 0, 0, NULL},
                                                  {"num_args", TFD_ATTR_INT, false, 0, 0, NULL},
                                                  {"fused_ops", TFD_ATTR_LIST_STRING, false, 0, 0, NULL},
                                                  {"epsilon", TFD_ATTR_FLOAT, false, 0, 0.0001, NULL},
                                                  {"leakyrelu_alpha", TFD_ATTR_FLOAT, false, 0, 0.2, NULL},
                                                  END};
#define A_WINDOW                                                                        \
  {"padding", TFD_ATTR_STRING, true, 0, 0, NULL}, {"strides", TFD_ATTR_LIST_INT, false, 0, 0, NULL}, \
      {"explicit_paddings", TFD_ATTR_LIST_INT, false, 0, 0, NULL},                              \
      {"data_format", TFD_ATTR_STRING, false, 0, 0, "NHWC"}
static const tfd_attr_def attrs_conv[] = {A_T, A_WINDOW, {"dilations", TFD_ATTR_LIST_INT, false, 0, 0, NULL},
                                          {"use_cudnn_on_gpu", TFD_ATTR_BOOL, false, 1, 0, NULL}, END};
static const tfd_attr_def attrs_fused_conv[] = {A_T,
                                                A_WINDOW,
                                                {"dilations", TFD_ATTR_LIST_INT, false, 0, 0, NULL},
                                                {"use_cudnn_on_gpu", TFD_ATTR_BOOL, false, 1, 0, NULL},
                                                {"num_args", TFD_ATTR_INT, false, 0, 0, NULL},
                                                {"fused_ops", TFD_ATTR_LIST_STRING, false, 0, 0, NULL},
                                                {"epsilon", TFD_ATTR_FLOAT, false, 0, 0.0001, NULL},
                                                {"leakyrelu_alpha", TFD_ATTR_FLOAT, false, 0, 0.2, NULL},
                                                END};
static const tfd_attr_def attrs_depthwise[] = {A_T, A_WINDOW, {"dilations", TFD_ATTR_LIST_INT, false, 0, 0, NULL}, END};
static const tfd_attr_def attrs_pool[] = {A_T, A_WINDOW, {"ksize", TFD_ATTR_LIST_INT, true, 0, 0, NULL}, END};
static const tfd_attr_def attrs_pad[] = {A_T, {"Tpaddings", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL}, END};
static const tfd_attr_def attrs_leaky_relu[] = {A_T, {"alpha", TFD_ATTR_FLOAT, false, 0, 0.2, NULL}, END};
static const tfd_attr_def attrs_bias[] = {A_T, {"data_format", TFD_ATTR_STRING, false, 0, 0, "NHWC"}, END};
static const tfd_attr_def attrs_reduce[] = {A_T, {"Tidx", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL},
                                            {"keep_dims", TFD_ATTR_BOOL, false, 0, 0, NULL}, END};
static const tfd_attr_def attrs_reshape[] = {A_T, {"Tshape", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL}, END};
static const tfd_attr_def attrs_depth_space[] = {A_T, {"block_size", TFD_ATTR_INT, true, 0, 0, NULL},
                                                 {"data_format", TFD_ATTR_STRING, false, 0, 0, "NHWC"}, END};
static const tfd_attr_def attrs_space_to_batch[] = {A_T, {"Tblock_shape", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL},
                                                    {"Tpaddings", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL}, END};
static const tfd_attr_def attrs_batch_to_space[] = {A_T, {"Tblock_shape", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL},
                                                    {"Tcrops", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL}, END};
static const tfd_attr_def attrs_sparse_to_dense[] = {A_T, {"Tindices", TFD_ATTR_TYPE, false, 0, 0, NULL},
                                                     {"validate_indices", TFD_ATTR_BOOL, false, 1, 0, NULL}, END};
static const tfd_attr_def attrs_transpose[] = {A_T, {"Tperm", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL}, END};
static const tfd_attr_def attrs_cast[] = {{"SrcT", TFD_ATTR_TYPE, false, 0, 0, NULL},
                                          {"DstT", TFD_ATTR_TYPE, true, 0, 0, NULL},
                                          {"Truncate", TFD_ATTR_BOOL, false, 0, 0, NULL}, END};
static const tfd_attr_def attrs_fill[] = {A_T, {"index_type", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL}, END};
static const tfd_attr_def attrs_shape[] = {A_T, {"out_type", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL}, END};
static const tfd_attr_def attrs_concat[] = {A_T, {"N", TFD_ATTR_INT, false, 0, 0, NULL},
                                            {"Tidx", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL}, END};
static const tfd_attr_def attrs_concat_v1[] = {A_T, {"N", TFD_ATTR_INT, false, 0, 0, NULL}, END};
static const tfd_attr_def attrs_gather_v1[] = {{"Tparams", TFD_ATTR_TYPE, false, 0, 0, NULL},
                                               {"Tindices", TFD_ATTR_TYPE, false, 0, 0, NULL},
                                               {"validate_indices", TFD_ATTR_BOOL, false, 1, 0, NULL}, END};
static const tfd_attr_def attrs_random[] = {{"dtype", TFD_ATTR_TYPE, true, 0, 0, NULL},
                                            {"seed", TFD_ATTR_INT, false, 0, 0, NULL},
                                            {"seed2", TFD_ATTR_INT, false, 0, 0, NULL}, A_T, END};
static const tfd_attr_def attrs_var[] = {{"dtype", TFD_ATTR_TYPE, true, 0, 0, NULL},
                                         {"shape", TFD_ATTR_SHAPE, false, 0, 0, NULL},
                                         {"container", TFD_ATTR_STRING, false, 0, 0, ""},
                                         {"shared_name", TFD_ATTR_STRING, false, 0, 0, ""}, END};
static const tfd_attr_def attrs_read_var[] = {{"dtype", TFD_ATTR_TYPE, true, 0, 0, NULL}, END};
static const tfd_attr_def attrs_queue[] = {{"component_types", TFD_ATTR_LIST_TYPE, true, 0, 0, NULL},
                                           {"capacity", TFD_ATTR_INT, false, -1, 0, NULL},
                                           {"container", TFD_ATTR_STRING, false, 0, 0, ""},
                                           {"shared_name", TFD_ATTR_STRING, false, 0, 0, ""}, END};
static const tfd_attr_def attrs_enqueue[] = {{"Tcomponents", TFD_ATTR_LIST_TYPE, false, 0, 0, NULL}, END};
static const tfd_attr_def attrs_dequeue[] = {{"component_types", TFD_ATTR_LIST_TYPE, true, 0, 0, NULL}, END};
static const tfd_attr_def attrs_queue_close[] = {{"cancel_pending_enqueues", TFD_ATTR_BOOL, false, 0, 0, NULL}, END};
static const tfd_attr_def attrs_feed[] = {{"index", TFD_ATTR_INT, true, 0, 0, NULL},
                                          {"dtype", TFD_ATTR_TYPE, true, 0, 0, NULL},
                                          {"shape", TFD_ATTR_SHAPE, false, 0, 0, NULL}, END};
static const tfd_attr_def attrs_fetch[] = {{"index", TFD_ATTR_INT, true, 0, 0, NULL}, A_T, END};
static const tfd_attr_def attrs_send[] = {A_T, {"tensor_name", TFD_ATTR_STRING, true, 0, 0, NULL},
                                          {"send_device", TFD_ATTR_STRING, true, 0, 0, NULL},
                                          {"send_device_incarnation", TFD_ATTR_INT, true, 0, 0, NULL},
                                          {"recv_device", TFD_ATTR_STRING, true, 0, 0, NULL}, END};
static const tfd_attr_def attrs_recv[] = {{"tensor_type", TFD_ATTR_TYPE, true, 0, 0, NULL},
                                          {"tensor_name", TFD_ATTR_STRING, true, 0, 0, NULL},
                                          {"send_device", TFD_ATTR_STRING, true, 0, 0, NULL},
                                          {"send_device_incarnation", TFD_ATTR_INT, true, 0, 0, NULL},
                                          {"recv_device", TFD_ATTR_STRING, true, 0, 0, NULL}, END};

static const tfd_attr_def attrs_enter[] = {A_T,
                                           {"frame_name", TFD_ATTR_STRING, true, 0, 0, NULL},
                                           {"is_constant", TFD_ATTR_BOOL, false, 0, 0, NULL},
                                           {"parallel_iterations", TFD_ATTR_INT, false, 10, 0, NULL}, END};
static const tfd_attr_def attrs_merge[] = {A_T, {"N", TFD_ATTR_INT, false, 0, 0, NULL}, END};
/* shape_type is inferred by hand (the registry infers one type attr per op): an absent one stays absent. */
static const tfd_attr_def attrs_list_reserve[] = {{"element_dtype", TFD_ATTR_TYPE, true, 0, 0, NULL},
                                                  {"shape_type", TFD_ATTR_TYPE, false, 0, 0, NULL}, END};
static const tfd_attr_def attrs_list_from_tensor[] = {{"element_dtype", TFD_ATTR_TYPE, false, 0, 0, NULL},
                                                      {"shape_type", TFD_ATTR_TYPE, false, 0, 0, NULL}, END};
static const tfd_attr_def attrs_list_set_item[] = {{"element_dtype", TFD_ATTR_TYPE, false, 0, 0, NULL},
                                                   {"resize_if_index_out_of_bounds", TFD_ATTR_BOOL, false, 0, 0, NULL},
                                                   END};
static const tfd_attr_def attrs_list_element[] = {{"element_dtype", TFD_ATTR_TYPE, true, 0, 0, NULL}, END};
static const tfd_attr_def attrs_list_push_back[] = {{"element_dtype", TFD_ATTR_TYPE, false, 0, 0, NULL}, END};
static const tfd_attr_def attrs_list_stack[] = {{"element_dtype", TFD_ATTR_TYPE, true, 0, 0, NULL},
                                                {"num_elements", TFD_ATTR_INT, false, -1, 0, NULL}, END};
static const tfd_attr_def attrs_list_shape[] = {{"shape_type", TFD_ATTR_TYPE, true, 0, 0, NULL}, END};
/* TensorList gather/scatter/split/concat/resize (issue 26, lists helper) */
static const tfd_attr_def attrs_list_concat[] = {{"element_dtype", TFD_ATTR_TYPE, true, 0, 0, NULL},
                                                 {"element_shape", TFD_ATTR_SHAPE, false, 0, 0, NULL}, END};
static const tfd_attr_def attrs_list_concat_v2[] = {{"element_dtype", TFD_ATTR_TYPE, true, 0, 0, NULL},
                                                    {"shape_type", TFD_ATTR_TYPE, false, 0, 0, NULL}, END};
/* ---- end of the TensorList gather/scatter family's attrs ---- */
/* hash tables (issue 26, lists helper) */
static const tfd_attr_def attrs_hash_table[] = {{"container", TFD_ATTR_STRING, false, 0, 0, ""},
                                                {"shared_name", TFD_ATTR_STRING, false, 0, 0, ""},
                                                {"use_node_name_sharing", TFD_ATTR_BOOL, false, 0, 0, NULL},
                                                {"key_dtype", TFD_ATTR_TYPE, true, 0, 0, NULL},
                                                {"value_dtype", TFD_ATTR_TYPE, true, 0, 0, NULL}, END};
static const tfd_attr_def attrs_table_in_out[] = {{"Tin", TFD_ATTR_TYPE, false, 0, 0, NULL},
                                                  {"Tout", TFD_ATTR_TYPE, false, 0, 0, NULL}, END};
static const tfd_attr_def attrs_table_init[] = {{"Tkey", TFD_ATTR_TYPE, false, 0, 0, NULL},
                                                {"Tval", TFD_ATTR_TYPE, false, 0, 0, NULL}, END};
static const tfd_attr_def attrs_table_remove[] = {{"Tin", TFD_ATTR_TYPE, false, 0, 0, NULL}, END};
static const tfd_attr_def attrs_table_export[] = {{"Tkeys", TFD_ATTR_TYPE, true, 0, 0, NULL},
                                                  {"Tvalues", TFD_ATTR_TYPE, true, 0, 0, NULL}, END};
/* ---- end of the hash tables' attrs ---- */
static const tfd_attr_def attrs_nms_v2[] = {A_T, END};
static const tfd_attr_def attrs_nms_v3[] = {A_T, {"T_threshold", TFD_ATTR_TYPE, false, TFD_FLOAT32, 0, NULL}, END};
static const tfd_attr_def attrs_nms_v4[] = {A_T, {"T_threshold", TFD_ATTR_TYPE, false, TFD_FLOAT32, 0, NULL},
                                            {"pad_to_max_output_size", TFD_ATTR_BOOL, false, 0, 0, NULL}, END};
static const tfd_attr_def attrs_nms_v5[] = {A_T, {"pad_to_max_output_size", TFD_ATTR_BOOL, false, 0, 0, NULL}, END};
/* graph utilities and array ops (issue 26's array family) */
static const tfd_attr_def attrs_ensure_shape[] = {{"shape", TFD_ATTR_SHAPE, true, 0, 0, NULL}, A_T, END};
static const tfd_attr_def attrs_reverse_v2[] = {A_T, {"Tidx", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL}, END};
static const tfd_attr_def attrs_one_hot[] = {A_T, {"TI", TFD_ATTR_TYPE, false, TFD_INT64, 0, NULL},
                                             {"axis", TFD_ATTR_INT, false, -1, 0, NULL}, END};
static const tfd_attr_def attrs_lin_space[] = {A_T, {"Tidx", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL}, END};
static const tfd_attr_def attrs_scan[] = {A_T, {"Tidx", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL},
                                          {"exclusive", TFD_ATTR_BOOL, false, 0, 0, NULL},
                                          {"reverse", TFD_ATTR_BOOL, false, 0, 0, NULL}, END};
static const tfd_attr_def attrs_all_any[] = {{"Tidx", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL},
                                             {"keep_dims", TFD_ATTR_BOOL, false, 0, 0, NULL}, END};
static const tfd_attr_def attrs_band_part[] = {A_T, {"Tindex", TFD_ATTR_TYPE, false, TFD_INT64, 0, NULL}, END};

/* scatters, searches, uniques */
static const tfd_attr_def attrs_scatter_nd[] = {A_T, {"Tindices", TFD_ATTR_TYPE, false, 0, 0, NULL}, END};
static const tfd_attr_def attrs_search_sorted[] = {A_T, {"out_type", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL}, END};
static const tfd_attr_def attrs_unique[] = {A_T, {"out_idx", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL}, END};
static const tfd_attr_def attrs_unique_v2[] = {A_T, {"Taxis", TFD_ATTR_TYPE, false, TFD_INT64, 0, NULL},
                                               {"out_idx", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL}, END};

static const tfd_attr_def attrs_dense_bincount[] = {{"Tidx", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL}, A_T,
                                                    {"binary_output", TFD_ATTR_BOOL, false, 0, 0, NULL}, END};
static const tfd_attr_def attrs_random_int[] = {{"seed", TFD_ATTR_INT, false, 0, 0, NULL}, {"seed2", TFD_ATTR_INT, false, 0, 0, NULL},
                                                {"Tout", TFD_ATTR_TYPE, true, 0, 0, NULL}, A_T, END};
static const tfd_attr_def attrs_multinomial[] = {{"seed", TFD_ATTR_INT, false, 0, 0, NULL}, {"seed2", TFD_ATTR_INT, false, 0, 0, NULL},
                                                 A_T, {"output_dtype", TFD_ATTR_TYPE, false, TFD_INT64, 0, NULL}, END};
static const tfd_attr_def attrs_lrn[] = {A_T, {"depth_radius", TFD_ATTR_INT, false, 5, 0, NULL},
                                         {"bias", TFD_ATTR_FLOAT, false, 0, 1.0, NULL}, {"alpha", TFD_ATTR_FLOAT, false, 0, 1.0, NULL},
                                         {"beta", TFD_ATTR_FLOAT, false, 0, 0.5, NULL}, END};

/* ---- issue 26, sparse and ragged ops (k_sparse_segment.c, k_sparse_fill.c, k_ragged.c) ---- */
/* SparseSegmentSum/Mean/SqrtN(WithNumSegments): TensorFlow's SparseSegmentReductionShapeFn, data's
 * shape with its first dimension unknown (num_segments' value, when known, for the WithNumSegments
 * forms); indices and segment_ids are vectors of one length. */
static tfd_code infer_sparse_segment(tfd_infer_ctx *c, tfd_status *st) {
  if (need_index(c, 1, "indices", st) != TFD_OK || need_index(c, 2, "segment_ids", st) != TFD_OK ||
      need_rank(c, 1, 1, "indices", st) != TFD_OK || need_rank(c, 2, 1, "segment_ids", st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  const tfd_shape *d = &c->in_shapes[0], *ix = &c->in_shapes[1], *seg = &c->in_shapes[2];
  if (ix->ndims == 1 && seg->ndims == 1 && ix->dims[0] >= 0 && seg->dims[0] >= 0 && ix->dims[0] != seg->dims[0])
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (%s): Dimensions must be equal, but are %lld and %lld for indices and segment_ids",
                           node_name(c), tfd_node_def_op(c->node), (long long)ix->dims[0], (long long)seg->dims[0]);
  if (d->ndims == 0)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): Shape must be at least rank 1 but is rank 0",
                           node_name(c), tfd_node_def_op(c->node));
  c->out_types[0] = c->in_types[0];
  c->out_shapes[0] = *d;
  if (d->ndims < 0) return TFD_OK;
  c->out_shapes[0].dims[0] = -1;
  if (c->num_inputs == 4) {
    if (need_index(c, 3, "num_segments", st) != TFD_OK || need_rank(c, 3, 0, "num_segments", st) != TFD_OK)
      return TFD_INVALID_ARGUMENT;
    const tfd_tensor *ns = c->in_values ? c->in_values[3] : NULL;
    if (ns && tfd_tensor_numel(ns) == 1 && tfd_tensor_get_index(ns, 0) >= 0) c->out_shapes[0].dims[0] = tfd_tensor_get_index(ns, 0);
  }
  return TFD_OK;
}

/* Input i of an op whose signature fixes it as int64 (SparseFillEmptyRows, SparseReshape). */
static tfd_code need_int64(tfd_infer_ctx *c, int i, const char *what, tfd_status *st) {
  if (c->in_types[i] == TFD_INT64) return TFD_OK;
  return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): %s (input %d) must be int64, got %s", node_name(c),
                         tfd_node_def_op(c->node), what, i, tfd_dtype_name(c->in_types[i]));
}

/* A vector's length, -1 when unknown. */
static int64_t vector_len(const tfd_shape *s) { return s->ndims == 1 ? s->dims[0] : -1; }

/* SparseFillEmptyRows: TensorFlow's shape function. Indices [N, R] and values [N] merge N, R is
 * dense_shape's length; the outputs are [?, R], [?], [dense_shape[0]] and [N]. */
static tfd_code infer_fill_empty_rows(tfd_infer_ctx *c, tfd_status *st) {
  if (need_int64(c, 0, "indices", st) != TFD_OK || need_int64(c, 2, "dense_shape", st) != TFD_OK ||
      same_types(c, 1, 3, st) != TFD_OK || need_rank(c, 0, 2, "indices", st) != TFD_OK ||
      need_rank(c, 1, 1, "values", st) != TFD_OK || need_rank(c, 2, 1, "dense_shape", st) != TFD_OK ||
      need_rank(c, 3, 0, "default_value", st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  const tfd_shape *ix = &c->in_shapes[0];
  int64_t n = ix->ndims == 2 ? ix->dims[0] : -1, r = ix->ndims == 2 ? ix->dims[1] : -1;
  int64_t nv = vector_len(&c->in_shapes[1]), rs = vector_len(&c->in_shapes[2]);
  if (n >= 0 && nv >= 0 && n != nv)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (SparseFillEmptyRows): Dimensions must be equal, but are %lld and %lld for indices and values",
                           node_name(c), (long long)n, (long long)nv);
  if (r >= 0 && rs >= 0 && r != rs)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (SparseFillEmptyRows): Dimensions must be equal, but are %lld and %lld for indices and dense_shape",
                           node_name(c), (long long)r, (long long)rs);
  if (rs == 0)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (SparseFillEmptyRows): Dense shape cannot be empty.",
                           node_name(c));
  if (n < 0) n = nv;
  if (rs < 0) rs = r;
  const tfd_tensor *shape = c->in_values ? c->in_values[2] : NULL;
  int64_t rows = shape && tfd_tensor_numel(shape) > 0 ? tfd_tensor_get_index(shape, 0) : -1;
  c->out_types[0] = TFD_INT64;
  c->out_shapes[0] = (tfd_shape){.ndims = 2, .dims = {-1, rs}};
  c->out_types[1] = c->in_types[1];
  c->out_shapes[1] = (tfd_shape){.ndims = 1, .dims = {-1}};
  c->out_types[2] = TFD_BOOL;
  c->out_shapes[2] = (tfd_shape){.ndims = 1, .dims = {rows < 0 ? -1 : rows}};
  c->out_types[3] = TFD_INT64;
  c->out_shapes[3] = (tfd_shape){.ndims = 1, .dims = {n}};
  return TFD_OK;
}

/* SparseReshape: output_indices [N, len(new_shape)], output_shape shaped like new_shape. */
static tfd_code infer_sparse_reshape(tfd_infer_ctx *c, tfd_status *st) {
  if (need_int64(c, 0, "input_indices", st) != TFD_OK || need_int64(c, 1, "input_shape", st) != TFD_OK ||
      need_int64(c, 2, "new_shape", st) != TFD_OK || need_rank(c, 0, 2, "input_indices", st) != TFD_OK ||
      need_rank(c, 1, 1, "input_shape", st) != TFD_OK || need_rank(c, 2, 1, "new_shape", st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  const tfd_shape *ix = &c->in_shapes[0];
  c->out_types[0] = c->out_types[1] = TFD_INT64;
  c->out_shapes[0] = (tfd_shape){.ndims = 2, .dims = {ix->ndims == 2 ? ix->dims[0] : -1, vector_len(&c->in_shapes[2])}};
  c->out_shapes[1] = (tfd_shape){.ndims = 1, .dims = {vector_len(&c->in_shapes[2])}};
  return TFD_OK;
}

/* RaggedRange: rt_nested_splits [nrows + 1] of Tsplits (nrows the length of whichever input is a
 * vector, 1 when all are scalars), rt_dense_values [?] of T. */
static tfd_code infer_ragged_range(tfd_infer_ctx *c, tfd_status *st) {
  static const char *const names[3] = {"starts", "limits", "deltas"};
  int64_t nrows = 1;
  for (int i = 0; i < 3; i++) {
    if (i > 0 && same_types(c, 0, i, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
    const tfd_shape *s = &c->in_shapes[i];
    if (s->ndims > 1)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (RaggedRange): %s must be a scalar or vector, got rank %d",
                             node_name(c), names[i], s->ndims);
    if (s->ndims < 0 || (s->ndims == 1 && s->dims[0] < 0)) nrows = -1;
    else if (s->ndims == 1 && nrows >= 0) nrows = s->dims[0];
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
  if (need_index(c, 0, "shape", st) != TFD_OK || same_types(c, 1, 2, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  for (int i = 3; i < c->num_inputs; i++)
    if (need_index(c, i, "row_partition_tensors", st) != TFD_OK || same_types(c, 3, i, st) != TFD_OK)
      return TFD_INVALID_ARGUMENT;
  c->out_types[0] = c->in_types[1];
  const tfd_tensor *shape = c->in_values ? c->in_values[0] : NULL;
  if (shape && tfd_tensor_ndims(shape) == 1 && tfd_tensor_numel(shape) <= TFD_MAX_DIMS) {
    tfd_shape *o = &c->out_shapes[0];
    o->ndims = (int)tfd_tensor_numel(shape);
    for (int d = 0; d < o->ndims; d++) o->dims[d] = tfd_tensor_get_index(shape, d) < 0 ? -1 : tfd_tensor_get_index(shape, d);
  } else {
    unknown(&c->out_shapes[0]);
  }
  return TFD_OK;
}

static const tfd_attr_def attrs_ragged_range[] = {A_T, {"Tsplits", TFD_ATTR_TYPE, false, TFD_INT64, 0, NULL}, END};
static const tfd_attr_def attrs_ragged_to_tensor[] = {A_T, {"Tindex", TFD_ATTR_TYPE, false, 0, 0, NULL},
                                                      {"Tshape", TFD_ATTR_TYPE, false, 0, 0, NULL},
                                                      {"num_row_partition_tensors", TFD_ATTR_INT, false, 0, 0, NULL},
                                                      {"row_partition_types", TFD_ATTR_LIST_STRING, true, 0, 0, NULL}, END};

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
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (RaggedGather): OUTPUT_RAGGED_RANK %lld gives %lld outputs, not %d",
                           node_name(c), (long long)orr, (long long)orr + 1, c->num_outputs);
  int vi = (int)prr, ii = (int)prr + 1;
  for (int i = 0; i < vi; i++)
    if (need_index(c, i, "params_nested_splits", st) != TFD_OK || same_types(c, 0, i, st) != TFD_OK ||
        need_rank(c, i, 1, "params_nested_splits", st) != TFD_OK)
      return TFD_INVALID_ARGUMENT;
  if (orr - prr + 1 < 0)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (RaggedGather): OUTPUT_RAGGED_RANK %lld is less than PARAMS_RAGGED_RANK - 1",
                           node_name(c), (long long)orr);
  if (need_index(c, ii, "indices", st) != TFD_OK || need_rank(c, ii, (int)(orr - prr + 1), "indices", st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  const tfd_shape *v = &c->in_shapes[vi];
  if (v->ndims == 0)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (RaggedGather): Shape must be at least rank 1 but is rank 0",
                           node_name(c));
  for (int i = 0; i < (int)orr; i++) {
    c->out_types[i] = c->in_types[0];
    c->out_shapes[i] = (tfd_shape){.ndims = 1, .dims = {-1}};
  }
  c->out_types[orr] = c->in_types[vi];
  c->out_shapes[orr] = *v;
  if (v->ndims > 0) c->out_shapes[orr].dims[0] = -1;
  return TFD_OK;
}

static const tfd_attr_def attrs_ragged_gather[] = {{"Tvalues", TFD_ATTR_TYPE, false, 0, 0, NULL},
                                                   {"Tindices", TFD_ATTR_TYPE, false, 0, 0, NULL},
                                                   {"Tsplits", TFD_ATTR_TYPE, false, 0, 0, NULL},
                                                   {"PARAMS_RAGGED_RANK", TFD_ATTR_INT, true, 0, 0, NULL},
                                                   {"OUTPUT_RAGGED_RANK", TFD_ATTR_INT, true, 0, 0, NULL}, END};

static const tfd_attr_def attrs_sparse_segment[] = {A_T, {"Tidx", TFD_ATTR_TYPE, false, 0, 0, NULL},
                                                    {"Tsegmentids", TFD_ATTR_TYPE, false, 0, 0, NULL}, END};
static const tfd_attr_def attrs_sparse_segment_n[] = {A_T, {"Tidx", TFD_ATTR_TYPE, false, 0, 0, NULL},
                                                      {"Tnumsegments", TFD_ATTR_TYPE, false, 0, 0, NULL},
                                                      {"Tsegmentids", TFD_ATTR_TYPE, false, 0, 0, NULL}, END};
/* ---- end of the sparse and ragged block ---- */
/* issue 26, convolution family */
static const tfd_attr_def attrs_conv3d[] = {A_T, {"strides", TFD_ATTR_LIST_INT, true, 0, 0, NULL},
                                            {"padding", TFD_ATTR_STRING, true, 0, 0, NULL},
                                            {"data_format", TFD_ATTR_STRING, false, 0, 0, "NDHWC"},
                                            {"dilations", TFD_ATTR_LIST_INT, false, 0, 0, NULL}, END};
static const tfd_attr_def attrs_pool3d[] = {A_T, {"ksize", TFD_ATTR_LIST_INT, true, 0, 0, NULL},
                                            {"strides", TFD_ATTR_LIST_INT, true, 0, 0, NULL},
                                            {"padding", TFD_ATTR_STRING, true, 0, 0, NULL},
                                            {"data_format", TFD_ATTR_STRING, false, 0, 0, "NDHWC"}, END};
static const tfd_attr_def attrs_max_pool_argmax[] = {A_T, {"ksize", TFD_ATTR_LIST_INT, true, 0, 0, NULL},
                                                     {"strides", TFD_ATTR_LIST_INT, true, 0, 0, NULL},
                                                     {"Targmax", TFD_ATTR_TYPE, false, TFD_INT64, 0, NULL},
                                                     {"padding", TFD_ATTR_STRING, true, 0, 0, NULL},
                                                     {"include_batch_in_index", TFD_ATTR_BOOL, false, 0, 0, NULL}, END};
static const tfd_attr_def attrs_dilation2d[] = {A_T, {"strides", TFD_ATTR_LIST_INT, true, 0, 0, NULL},
                                                {"rates", TFD_ATTR_LIST_INT, true, 0, 0, NULL},
                                                {"padding", TFD_ATTR_STRING, true, 0, 0, NULL}, END};
/* ---- issue 26, image/einsum family: Einsum, CropAndResize, ImageProjectiveTransformV3, IdentityN,
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
  if (c->num_inputs == 2 && same_types(c, 0, 1, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
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
      if (label_dim[l] == -2 || label_dim[l] == -1) label_dim[l] = d;
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
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
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

/* CropAndResize: image [batch, h, w, depth], boxes [n, 4], box_ind [n], crop_size [2] -> float32
 * [n, crop_h, crop_w, depth] (TensorFlow's shape function's checks). */
static tfd_code infer_crop_and_resize(tfd_infer_ctx *c, tfd_status *st) {
  const char *op = "CropAndResize", *method = attr(c, "method")->s;
  if (strcmp(method, "bilinear") != 0 && strcmp(method, "nearest") != 0)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (%s): Value for attr 'method' of \"%s\" is not in the list of allowed values: "
                           "\"bilinear\", \"nearest\"",
                           node_name(c), op, method);
  if (need_rank(c, 0, 4, "image", st) != TFD_OK || need_rank(c, 1, 2, "boxes", st) != TFD_OK ||
      need_rank(c, 2, 1, "box_ind", st) != TFD_OK || need_rank(c, 3, 1, "crop_size", st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  if (c->in_types[1] != TFD_FLOAT32 || c->in_types[2] != TFD_INT32 || c->in_types[3] != TFD_INT32)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (%s): boxes must be float32, box_ind and crop_size int32; got %s, %s, %s", node_name(c),
                           op, tfd_dtype_name(c->in_types[1]), tfd_dtype_name(c->in_types[2]),
                           tfd_dtype_name(c->in_types[3]));
  const tfd_shape *b = &c->in_shapes[1], *bi = &c->in_shapes[2], *cs = &c->in_shapes[3];
  if (b->ndims == 2 && b->dims[1] >= 0 && b->dims[1] != 4)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): Dimension must be 4 but is %lld", node_name(c), op,
                           (long long)b->dims[1]);
  if (cs->ndims == 1 && cs->dims[0] >= 0 && cs->dims[0] != 2)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): Dimension must be 2 but is %lld", node_name(c), op,
                           (long long)cs->dims[0]);
  int64_t n = b->ndims == 2 ? b->dims[0] : -1, nb = bi->ndims == 1 ? bi->dims[0] : -1;
  if (n >= 0 && nb >= 0 && n != nb)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): Dimensions must be equal, but are %lld and %lld",
                           node_name(c), op, (long long)n, (long long)nb);
  c->out_types[0] = TFD_FLOAT32;
  tfd_shape *o = &c->out_shapes[0];
  o->ndims = 4;
  o->dims[0] = n >= 0 ? n : nb;
  o->dims[1] = o->dims[2] = -1;
  o->dims[3] = c->in_shapes[0].ndims == 4 ? c->in_shapes[0].dims[3] : -1;
  const tfd_tensor *size = c->in_values ? c->in_values[3] : NULL;
  if (size && tfd_tensor_numel(size) == 2)
    for (int i = 0; i < 2; i++) o->dims[1 + i] = ((const int32_t *)tfd_tensor_const_data(size))[i];
  for (int i = 1; i < 3; i++)
    if (o->dims[i] < -1) o->dims[i] = -1; /* the kernel reports a negative size */
  return TFD_OK;
}

/* ImageProjectiveTransformV3: images [n, h, w, c] of dtype, transforms [1 or n, 8], output_shape int32 [2],
 * fill_value a float32 scalar -> [n, out_h, out_w, c]. */
static tfd_code infer_image_transform(tfd_infer_ctx *c, tfd_status *st) {
  const char *op = "ImageProjectiveTransformV3";
  const char *interp = attr(c, "interpolation")->s, *fill = attr(c, "fill_mode")->s;
  if (strcmp(interp, "NEAREST") != 0 && strcmp(interp, "BILINEAR") != 0)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): Invalid interpolation %s. Supported types: NEAREST, BILINEAR",
                           node_name(c), op, interp);
  if (strcmp(fill, "CONSTANT") != 0 && strcmp(fill, "REFLECT") != 0 && strcmp(fill, "WRAP") != 0 &&
      strcmp(fill, "NEAREST") != 0)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (%s): Invalid mode %s. Supported types: REFLECT, WRAP, CONSTANT, NEAREST", node_name(c),
                           op, fill);
  if (need_rank(c, 0, 4, "images", st) != TFD_OK || need_rank(c, 1, 2, "transforms", st) != TFD_OK ||
      need_rank(c, 2, 1, "output_shape", st) != TFD_OK || need_rank(c, 3, 0, "fill_value", st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  if (c->in_types[1] != TFD_FLOAT32 || c->in_types[2] != TFD_INT32 || c->in_types[3] != TFD_FLOAT32)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (%s): transforms and fill_value must be float32, output_shape int32; got %s, %s, %s",
                           node_name(c), op, tfd_dtype_name(c->in_types[1]), tfd_dtype_name(c->in_types[2]),
                           tfd_dtype_name(c->in_types[3]));
  c->out_types[0] = c->in_types[0];
  tfd_shape *o = &c->out_shapes[0];
  const tfd_shape *in = &c->in_shapes[0];
  o->ndims = 4;
  o->dims[0] = in->ndims == 4 ? in->dims[0] : -1;
  o->dims[3] = in->ndims == 4 ? in->dims[3] : -1;
  o->dims[1] = o->dims[2] = -1;
  const tfd_tensor *size = c->in_values ? c->in_values[2] : NULL;
  if (size && tfd_tensor_numel(size) == 2)
    for (int i = 0; i < 2; i++) {
      int32_t v = ((const int32_t *)tfd_tensor_const_data(size))[i];
      o->dims[1 + i] = v >= 0 ? v : -1;
    }
  return TFD_OK;
}

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
    if (same_types(c, 0, i, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
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
  return infer_same(c, st);
}

/* FakeQuantWithMinMaxArgs/Vars: float32 in, float32 out of the same shape; Vars' min and max are scalars. */
static tfd_code infer_fake_quant(tfd_infer_ctx *c, tfd_status *st) {
  const char *op = tfd_node_def_op(c->node);
  for (int i = 0; i < c->num_inputs; i++)
    if (c->in_types[i] != TFD_FLOAT32)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): input %d must be float32, got %s", node_name(c),
                             op, i, tfd_dtype_name(c->in_types[i]));
  if (c->num_inputs == 3 && (need_rank(c, 1, 0, "min", st) != TFD_OK || need_rank(c, 2, 0, "max", st) != TFD_OK))
    return TFD_INVALID_ARGUMENT;
  return infer_same(c, st);
}

static const tfd_attr_def attrs_einsum[] = {{"equation", TFD_ATTR_STRING, true, 0, 0, NULL},
                                            {"N", TFD_ATTR_INT, false, 0, 0, NULL}, A_T, END};
static const tfd_attr_def attrs_crop_and_resize[] = {A_T, {"method", TFD_ATTR_STRING, false, 0, 0, "bilinear"},
                                                     {"extrapolation_value", TFD_ATTR_FLOAT, false, 0, 0, NULL}, END};
static const tfd_attr_def attrs_image_transform[] = {{"dtype", TFD_ATTR_TYPE, false, 0, 0, NULL},
                                                     {"interpolation", TFD_ATTR_STRING, true, 0, 0, NULL},
                                                     {"fill_mode", TFD_ATTR_STRING, false, 0, 0, "CONSTANT"}, END};
static const tfd_attr_def attrs_identity_n[] = {{"T", TFD_ATTR_LIST_TYPE, true, 0, 0, NULL}, END};
static const tfd_attr_def attrs_shape_n[] = {{"N", TFD_ATTR_INT, false, 0, 0, NULL}, A_T,
                                             {"out_type", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL}, END};
static const tfd_attr_def attrs_print[] = {A_T, {"U", TFD_ATTR_LIST_TYPE, false, 0, 0, NULL},
                                           {"message", TFD_ATTR_STRING, false, 0, 0, ""},
                                           {"first_n", TFD_ATTR_INT, false, -1, 0, NULL},
                                           {"summarize", TFD_ATTR_INT, false, 3, 0, NULL}, END};
static const tfd_attr_def attrs_fake_quant_args[] = {{"min", TFD_ATTR_FLOAT, false, 0, -6.0, NULL},
                                                     {"max", TFD_ATTR_FLOAT, false, 0, 6.0, NULL},
                                                     {"num_bits", TFD_ATTR_INT, false, 8, 0, NULL},
                                                     {"narrow_range", TFD_ATTR_BOOL, false, 0, 0, NULL}, END};
static const tfd_attr_def attrs_fake_quant_vars[] = {{"num_bits", TFD_ATTR_INT, false, 8, 0, NULL},
                                                     {"narrow_range", TFD_ATTR_BOOL, false, 0, 0, NULL}, END};
/* ---- end of the image/einsum family's definitions ---- */

/* ---- complex numbers and spectral ops: TensorFlow's pairs (float32, complex64) and (float64,
 * complex128) restricted to the first, since tfdev has no complex128 ---- */
static const tfd_attr_def attrs_complex[] = {{"T", TFD_ATTR_TYPE, false, TFD_FLOAT32, 0, NULL},
                                             {"Tout", TFD_ATTR_TYPE, false, TFD_COMPLEX64, 0, NULL}, END};
static const tfd_attr_def attrs_complex_part[] = {{"T", TFD_ATTR_TYPE, false, TFD_COMPLEX64, 0, NULL},
                                                  {"Tout", TFD_ATTR_TYPE, false, TFD_FLOAT32, 0, NULL}, END};
static const tfd_attr_def attrs_fft[] = {{"Tcomplex", TFD_ATTR_TYPE, false, TFD_COMPLEX64, 0, NULL}, END};
static const tfd_attr_def attrs_rfft[] = {{"Treal", TFD_ATTR_TYPE, false, TFD_FLOAT32, 0, NULL},
                                          {"Tcomplex", TFD_ATTR_TYPE, false, TFD_COMPLEX64, 0, NULL}, END};

/* The output type attr `name` must be `want`, the partner of the input's type. */
static tfd_code check_partner_type(tfd_infer_ctx *c, const char *name, tfd_dtype want, tfd_status *st) {
  tfd_dtype got = attr(c, name)->dtype;
  if (got == want) return TFD_OK;
  return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): %s=%s is not allowed with %s input (only %s)",
                         node_name(c), tfd_node_def_op(c->node), name, tfd_dtype_name(got) ? tfd_dtype_name(got) : "?",
                         tfd_dtype_name(c->in_types[0]), tfd_dtype_name(want));
}

/* Complex(real, imag): broadcast like a binary op, complex64 out. */
static tfd_code infer_complex(tfd_infer_ctx *c, tfd_status *st) {
  if (check_partner_type(c, "Tout", TFD_COMPLEX64, st) != TFD_OK || infer_binary(c, st) != TFD_OK)
    return tfd_status_code(st);
  c->out_types[0] = TFD_COMPLEX64;
  return TFD_OK;
}

/* Real, Imag, ComplexAbs: a float32 per complex64 element. */
static tfd_code infer_complex_part(tfd_infer_ctx *c, tfd_status *st) {
  if (check_partner_type(c, "Tout", TFD_FLOAT32, st) != TFD_OK) return tfd_status_code(st);
  c->out_types[0] = TFD_FLOAT32;
  c->out_shapes[0] = c->in_shapes[0];
  return TFD_OK;
}

/* FFT, IFFT (same shape), RFFT and IRFFT (the innermost dimension becomes fft_length / 2 + 1, or
 * fft_length, when fft_length is known). */
static tfd_code infer_fft(tfd_infer_ctx *c, tfd_status *st) {
  const char *op = tfd_node_def_op(c->node);
  bool real = c->num_inputs == 2, forward = op[0] == 'F' || op[0] == 'R';
  const tfd_shape *in = &c->in_shapes[0];
  if (in->ndims == 0)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): Shape must be at least rank 1 but is rank 0",
                           node_name(c), op);
  c->out_shapes[0] = *in;
  c->out_types[0] = TFD_COMPLEX64;
  if (!real) return TFD_OK;
  if (check_partner_type(c, forward ? "Tcomplex" : "Treal", forward ? TFD_COMPLEX64 : TFD_FLOAT32, st) != TFD_OK)
    return tfd_status_code(st);
  c->out_types[0] = forward ? TFD_COMPLEX64 : TFD_FLOAT32;
  const tfd_shape *len = &c->in_shapes[1];
  if (c->in_types[1] != TFD_INT32)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): fft_length must be int32, got %s", node_name(c),
                           op, tfd_dtype_name(c->in_types[1]));
  if (len->ndims >= 0 && (len->ndims != 1 || (len->dims[0] >= 0 && len->dims[0] != 1)))
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): fft_length must have shape [1]", node_name(c), op);
  const tfd_tensor *v = c->in_values ? c->in_values[1] : NULL;
  if (in->ndims > 0) {
    int64_t n = v && tfd_tensor_numel(v) == 1 ? ((const int32_t *)tfd_tensor_const_data(v))[0] : -1;
    c->out_shapes[0].dims[in->ndims - 1] = n < 0 ? -1 : forward && n ? n / 2 + 1 : n;
  }
  return TFD_OK;
}

/* ---- string ops (k_string.c): their inputs are strings whatever the attributes say ---- */
static const tfd_attr_def attrs_hash_bucket[] = {{"num_buckets", TFD_ATTR_INT, true, 0, 0, NULL}, END};
static const tfd_attr_def attrs_string_split[] = {{"skip_empty", TFD_ATTR_BOOL, false, 1, 0, NULL}, END};
static const tfd_attr_def attrs_string_ngrams[] = {{"separator", TFD_ATTR_STRING, true, 0, 0, NULL},
                                                   {"ngram_widths", TFD_ATTR_LIST_INT, true, 0, 0, NULL},
                                                   {"left_pad", TFD_ATTR_STRING, true, 0, 0, NULL},
                                                   {"right_pad", TFD_ATTR_STRING, true, 0, 0, NULL},
                                                   {"pad_width", TFD_ATTR_INT, true, 0, 0, NULL},
                                                   {"preserve_short_sequences", TFD_ATTR_BOOL, true, 0, 0, NULL},
                                                   {"Tsplits", TFD_ATTR_TYPE, false, TFD_INT64, 0, NULL}, END};
static const tfd_attr_def attrs_regex_replace[] = {{"pattern", TFD_ATTR_STRING, true, 0, 0, NULL},
                                                   {"rewrite", TFD_ATTR_STRING, true, 0, 0, NULL},
                                                   {"replace_global", TFD_ATTR_BOOL, false, 1, 0, NULL}, END};

/* Input i must be a string tensor. */
static tfd_code need_string(tfd_infer_ctx *c, int i, const char *what, tfd_status *st) {
  if (c->in_types[i] == TFD_STRING) return TFD_OK;
  return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): %s (input %d) must be string, got %s", node_name(c),
                         tfd_node_def_op(c->node), what, i, tfd_dtype_name(c->in_types[i]));
}

static tfd_code infer_string_map(tfd_infer_ctx *c, tfd_status *st) {
  if (need_string(c, 0, "input", st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  c->out_types[0] = strcmp(tfd_node_def_op(c->node), "StringToHashBucketFast") == 0 ? TFD_INT64 : TFD_STRING;
  c->out_shapes[0] = c->in_shapes[0];
  return TFD_OK;
}

static tfd_code infer_string_split(tfd_infer_ctx *c, tfd_status *st) {
  if (need_string(c, 0, "input", st) != TFD_OK || need_string(c, 1, "delimiter", st) != TFD_OK ||
      need_rank(c, 0, 1, "input", st) != TFD_OK || need_rank(c, 1, 0, "delimiter", st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  c->out_types[0] = TFD_INT64;
  c->out_types[1] = TFD_STRING;
  c->out_types[2] = TFD_INT64;
  c->out_shapes[0] = (tfd_shape){2, {-1, 2}};
  c->out_shapes[1] = (tfd_shape){1, {-1}};
  c->out_shapes[2] = (tfd_shape){1, {2}};
  return TFD_OK;
}

static tfd_code infer_string_ngrams(tfd_infer_ctx *c, tfd_status *st) {
  if (need_string(c, 0, "data", st) != TFD_OK || need_index(c, 1, "data_splits", st) != TFD_OK ||
      need_rank(c, 0, 1, "data", st) != TFD_OK || need_rank(c, 1, 1, "data_splits", st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  if (attr(c, "Tsplits")->dtype != c->in_types[1])
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (StringNGrams): Tsplits=%s but data_splits is %s",
                           node_name(c), tfd_dtype_name(attr(c, "Tsplits")->dtype), tfd_dtype_name(c->in_types[1]));
  c->out_types[0] = TFD_STRING;
  c->out_types[1] = c->in_types[1];
  c->out_shapes[0] = (tfd_shape){1, {-1}};
  c->out_shapes[1] = c->in_shapes[1];
  return TFD_OK;
}

#define NUM TFD_TYPES_NUMBER
#define FLT TFD_TYPES_FLOAT
#define ALL TFD_TYPES_ALL
/* The convolution family's dtypes, as TensorFlow's CPU kernels register them (restricted to tfdev's
 * dtypes): Conv2D half, float, double, int32; DepthwiseConv2dNative and AvgPool half, float,
 * double; MaxPool and the resizes every real number type. */
#define F16 (1u << TFD_FLOAT16)
#define CONV_T (FLT | (1u << TFD_INT32) | F16)
#define FLT16 (FLT | F16)
#define REAL (NUM | (1u << TFD_UINT8) | F16)
#define U8 (1u << TFD_UINT8)
#define C64 TFD_TYPES_COMPLEX
#define STR (1u << TFD_STRING)
#define UNARY(n, types) {n, 1, 1, 1, false, false, "T", 0, types, attrs_t, infer_same, false}
#define BINARY(n) {n, 2, 2, 1, false, false, "T", 0, NUM, attrs_t, infer_binary, false}
#define BINARY_C(n) {n, 2, 2, 1, false, false, "T", 0, NUM | C64, attrs_t, infer_binary, false}

static const tfd_op_def ops[] = {
    {"Const", 0, 0, 1, false, true, NULL, 0, 0, attrs_const, infer_const, false},
    {"Placeholder", 0, 0, 1, false, true, NULL, 0, 0, attrs_placeholder, infer_placeholder, false},
    {"PlaceholderWithDefault", 1, 1, 1, false, true, NULL, 0, 0, attrs_placeholder, infer_placeholder_with_default, false},
    {"Identity", 1, 1, 1, false, true, "T", 0, TFD_TYPES_ANY_AND_VARIANT, attrs_t, infer_same, false},
    {"NoOp", 0, 0, 0, false, true, NULL, 0, 0, attrs_none, infer_none, false},
    /* complex64 arithmetic runs in k_spectral.c */
    BINARY_C("Add"), BINARY_C("AddV2"), BINARY_C("Sub"), BINARY_C("Mul"), BINARY("Maximum"), BINARY("Minimum"),
    {"RealDiv", 2, 2, 1, false, false, "T", 0, FLT | C64, attrs_t, infer_binary, false},
    UNARY("Neg", NUM | C64), UNARY("Abs", NUM), UNARY("Square", NUM), UNARY("Exp", FLT), UNARY("Log", FLT),
    UNARY("Sqrt", FLT), UNARY("Relu", NUM), UNARY("Sigmoid", FLT), UNARY("Tanh", FLT),
    UNARY("Relu6", NUM), UNARY("Elu", FLT),
    /* elementwise math, comparisons, logic */
    UNARY("Selu", FLT), UNARY("Softplus", FLT), UNARY("Rsqrt", FLT), UNARY("Reciprocal", FLT),
    UNARY("Floor", FLT), UNARY("Ceil", FLT), UNARY("Sin", FLT), UNARY("Cos", FLT),
    BINARY("Pow"), BINARY("SquaredDifference"), BINARY("FloorDiv"), BINARY("FloorMod"),
    {"Atan2", 2, 2, 1, false, false, "T", 0, FLT, attrs_t, infer_binary, false},
    {"Equal", 2, 2, 1, false, false, "T", 0, ALL | STR, attrs_equal, infer_compare, false},
    {"NotEqual", 2, 2, 1, false, false, "T", 0, ALL | STR, attrs_equal, infer_compare, false},
    {"Less", 2, 2, 1, false, false, "T", 0, NUM, attrs_t, infer_compare, false},
    {"LessEqual", 2, 2, 1, false, false, "T", 0, NUM, attrs_t, infer_compare, false},
    {"Greater", 2, 2, 1, false, false, "T", 0, NUM, attrs_t, infer_compare, false},
    {"GreaterEqual", 2, 2, 1, false, false, "T", 0, NUM, attrs_t, infer_compare, false},
    {"LogicalAnd", 2, 2, 1, false, false, NULL, 0, 0, attrs_none, infer_logical, false},
    {"LogicalOr", 2, 2, 1, false, false, NULL, 0, 0, attrs_none, infer_logical, false},
    {"LogicalNot", 1, 1, 1, false, false, NULL, 0, 0, attrs_none, infer_logical, false},
    {"Select", 3, 3, 1, false, false, "T", 1, ALL | C64 | STR, attrs_t, infer_select, false},
    {"SelectV2", 3, 3, 1, false, false, "T", 1, ALL | C64 | STR, attrs_t, infer_select_v2, false},
    {"AddN", 1, -1, 1, false, false, "T", 0, NUM, attrs_t, infer_add_n, false},
    {"LeakyRelu", 1, 1, 1, false, false, "T", 0, FLT, attrs_leaky_relu, infer_same, false},
    {"Softmax", 1, 1, 1, false, false, "T", 0, FLT, attrs_t, infer_softmax, false},
    {"MatMul", 2, 2, 1, false, false, "T", 0, NUM, attrs_matmul, infer_matmul, false},
    {"BiasAdd", 2, 2, 1, false, false, "T", 0, NUM, attrs_bias, infer_bias_add, false},
    {"_FusedMatMul", 2, -1, 1, false, false, "T", 0, FLT, attrs_fused_matmul, infer_fused_matmul, false},
    {"Conv2D", 2, 2, 1, false, false, "T", 0, CONV_T, attrs_conv, infer_window, false},
    {"_FusedConv2D", 2, -1, 1, false, false, "T", 0, 1u << TFD_FLOAT32, attrs_fused_conv, infer_window, false},
    {"DepthwiseConv2dNative", 2, 2, 1, false, false, "T", 0, FLT16, attrs_depthwise, infer_window, false},
    {"MaxPool", 1, 1, 1, false, false, "T", 0, REAL, attrs_pool, infer_window, false},
    {"AvgPool", 1, 1, 1, false, false, "T", 0, FLT16, attrs_pool, infer_window, false},
    {"Pad", 2, 2, 1, false, false, "T", 0, 0, attrs_pad, infer_pad, false},
    {"PadV2", 3, 3, 1, false, false, "T", 0, 0, attrs_pad, infer_pad, false},
    {"Prelu", 2, 2, 1, false, false, "T", 0, 1u << TFD_FLOAT32, attrs_t, infer_same, false},
    /* images, normalisation, batched products */
    {"FusedBatchNorm", 5, 5, 5, false, false, "T", 0, 1u << TFD_FLOAT32, attrs_batch_norm_v1, infer_fused_batch_norm, false},
    {"FusedBatchNormV3", 5, 5, 6, false, false, "T", 0, 1u << TFD_FLOAT32, attrs_batch_norm, infer_fused_batch_norm, false},
    {"ResizeBilinear", 2, 2, 1, false, false, "T", 0, REAL, attrs_resize, infer_resize, false},
    {"ResizeNearestNeighbor", 2, 2, 1, false, false, "T", 0, REAL, attrs_resize, infer_resize, false},
    {"BatchMatMulV2", 2, 2, 1, false, false, "T", 0, NUM, attrs_batch_matmul, infer_batch_matmul, false},
    {"Conv2DBackpropInput", 3, 3, 1, false, false, "T", 1, 1u << TFD_FLOAT32, attrs_conv_backprop, infer_conv_backprop_input, false},
    {"MirrorPad", 2, 2, 1, false, false, "T", 0, 0, attrs_mirror_pad, infer_mirror_pad, false},
    {"_FusedDepthwiseConv2dNative", 2, -1, 1, false, false, "T", 0, 1u << TFD_FLOAT32, attrs_fused_conv, infer_window, false},
    /* The same op as TensorFlow.js's converter names it (tfjs-converter's op list has no underscore). */
    {"FusedDepthwiseConv2dNative", 2, -1, 1, false, false, "T", 0, 1u << TFD_FLOAT32, attrs_fused_conv, infer_window, false},
    {"Sum", 2, 2, 1, false, false, "T", 0, NUM, attrs_reduce, infer_reduce, false},
    {"Mean", 2, 2, 1, false, false, "T", 0, NUM, attrs_reduce, infer_reduce, false},
    {"Max", 2, 2, 1, false, false, "T", 0, NUM, attrs_reduce, infer_reduce, false},
    {"Reshape", 2, 2, 1, false, true, "T", 0, 0, attrs_reshape, infer_reshape, false},
    {"Transpose", 2, 2, 1, false, false, "T", 0, ALL | C64 | STR, attrs_transpose, infer_transpose, false},
    {"Cast", 1, 1, 1, false, false, "SrcT", 0, ALL | C64, attrs_cast, infer_cast, false},
    {"Fill", 2, 2, 1, false, false, "T", 1, ALL | C64 | STR, attrs_fill, infer_fill, false},
    {"ZerosLike", 1, 1, 1, false, false, "T", 0, ALL | C64 | STR, attrs_t, infer_same, false},
    {"OnesLike", 1, 1, 1, false, false, "T", 0, ALL | C64, attrs_t, infer_same, false},
    {"Shape", 1, 1, 1, false, true, "T", 0, 0, attrs_shape, infer_shape, false},
    {"Size", 1, 1, 1, false, true, "T", 0, 0, attrs_shape, infer_shape, false},
    {"ConcatV2", 2, -1, 1, false, false, "T", 0, 0, attrs_concat, infer_concat, false},
    {"Concat", 2, -1, 1, false, false, "T", 1, 0, attrs_concat_v1, infer_concat_v1, false},
    /* shapes, slicing, gathering */
    {"ExpandDims", 2, 2, 1, false, true, "T", 0, 0, attrs_expand_dims, infer_expand_dims, false},
    {"Squeeze", 1, 1, 1, false, true, "T", 0, 0, attrs_squeeze, infer_squeeze, false},
    {"Pack", 1, -1, 1, false, false, "T", 0, 0, attrs_pack, infer_pack, false},
    {"Unpack", 1, 1, TFD_OUTPUTS_FROM_ATTR, false, false, "T", 0, 0, attrs_unpack, infer_unpack, false},
    {"Slice", 3, 3, 1, false, false, "T", 0, 0, attrs_slice, infer_slice, false},
    {"StridedSlice", 4, 4, 1, false, false, "T", 0, 0, attrs_strided_slice, infer_slice, false},
    {"GatherV2", 3, 3, 1, false, false, "Tparams", 0, 0, attrs_gather, infer_gather, false},
    {"Gather", 2, 2, 1, false, false, "Tparams", 0, 0, attrs_gather_v1, infer_gather_v1, false},
    {"GatherNd", 2, 2, 1, false, false, "Tparams", 0, 0, attrs_gather_nd, infer_gather, false},
    {"Tile", 2, 2, 1, false, false, "T", 0, 0, attrs_tile, infer_tile, false},
    {"BroadcastTo", 2, 2, 1, false, false, "T", 0, 0, attrs_broadcast_to, infer_broadcast_to, false},
    {"DepthToSpace", 1, 1, 1, false, false, "T", 0, ALL | C64 | STR, attrs_depth_space, infer_depth_space, false},
    {"SpaceToDepth", 1, 1, 1, false, false, "T", 0, ALL | C64 | STR, attrs_depth_space, infer_depth_space, false},
    {"SpaceToBatchND", 3, 3, 1, false, false, "T", 0, ALL | C64, attrs_space_to_batch, infer_space_batch, false},
    {"SparseToDense", 4, 4, 1, false, false, "T", 2, ALL, attrs_sparse_to_dense, infer_sparse_to_dense, false},
    {"BatchToSpaceND", 3, 3, 1, false, false, "T", 0, ALL | C64, attrs_batch_to_space, infer_space_batch, false},
    {"Range", 3, 3, 1, false, false, "Tidx", 0, NUM, attrs_range, infer_range, false},
    {"Split", 2, 2, TFD_OUTPUTS_FROM_ATTR, false, false, "T", 1, 0, attrs_split, infer_split, false},
    {"SplitV", 3, 3, TFD_OUTPUTS_FROM_ATTR, false, false, "T", 0, 0, attrs_split_v, infer_split, false},
    {"ArgMax", 2, 2, 1, false, false, "T", 0, NUM, attrs_arg_max, infer_arg_max, false},
    {"ArgMin", 2, 2, 1, false, false, "T", 0, NUM, attrs_arg_max, infer_arg_max, false},
    {"Min", 2, 2, 1, false, false, "T", 0, NUM, attrs_reduce, infer_reduce, false},
    {"Prod", 2, 2, 1, false, false, "T", 0, NUM, attrs_reduce, infer_reduce, false},
    {"TopKV2", 2, 2, 2, false, false, "T", 0, NUM, attrs_top_k, infer_top_k, false},
    {"RandomUniform", 1, 1, 1, true, false, NULL, 0, 0, attrs_random, infer_random, false},
    {"RandomStandardNormal", 1, 1, 1, true, false, NULL, 0, 0, attrs_random, infer_random, false},
    {"VarHandleOp", 0, 0, 1, true, true, NULL, 0, 0, attrs_var, infer_var_handle, false},
    {"ReadVariableOp", 1, 1, 1, false, true, NULL, 0, 0, attrs_read_var, infer_read_variable, false},
    {"AssignVariableOp", 2, 2, 0, true, true, NULL, 0, 0, attrs_read_var, infer_assign_variable, false},
    {"AssignAddVariableOp", 2, 2, 0, true, false, NULL, 0, 0, attrs_read_var, infer_assign_variable, false},
    {"FIFOQueueV2", 0, 0, 1, true, true, NULL, 0, 0, attrs_queue, infer_queue, false},
    {"QueueEnqueueV2", 2, -1, 0, true, true, NULL, 0, 0, attrs_enqueue, infer_enqueue, false},
    {"QueueDequeueV2", 1, 1, -1, true, true, NULL, 0, 0, attrs_dequeue, infer_dequeue, false},
    {"QueueSizeV2", 1, 1, 1, false, true, NULL, 0, 0, attrs_none, infer_queue_size, false},
    {"QueueCloseV2", 1, 1, 0, true, true, NULL, 0, 0, attrs_queue_close, infer_queue_close, false},
    {"GetSessionHandle", 1, 1, 1, true, true, "T", 0, 0, attrs_t, infer_session_handle, false},
    {"GetSessionTensor", 1, 1, 1, true, true, NULL, 0, 0, attrs_read_var, infer_session_tensor, false},
    {"DeleteSessionTensor", 1, 1, 0, true, true, NULL, 0, 0, attrs_none, need_handle, false},
    /* control flow: frames and dead tensors are the executor's (runtime/exec/frames.c) */
    {"Enter", 1, 1, 1, false, true, "T", 0, TFD_TYPES_ANY_AND_VARIANT, attrs_enter, infer_enter, false},
    {"Exit", 1, 1, 1, false, true, "T", 0, TFD_TYPES_ANY_AND_VARIANT, attrs_t, infer_same, false},
    {"NextIteration", 1, 1, 1, false, true, "T", 0, TFD_TYPES_ANY_AND_VARIANT, attrs_t, infer_same, false},
    {"LoopCond", 1, 1, 1, false, true, NULL, 0, 0, attrs_none, infer_loop_cond, false},
    {"Switch", 2, 2, 2, false, true, "T", 0, TFD_TYPES_ANY_AND_VARIANT, attrs_t, infer_switch, false},
    {"Merge", 1, -1, 2, false, true, "T", 0, TFD_TYPES_ANY_AND_VARIANT, attrs_merge, infer_merge, false},
    {"ControlTrigger", 0, 0, 0, false, true, NULL, 0, 0, attrs_none, infer_none, false},
    /* TensorFlow 1's TensorArrays, per step (k_tensor_array.c) */
    {"TensorArrayV3", 1, 1, 2, true, false, NULL, 0, 0, attrs_ta_v3, infer_tensor_array, false},
    {"TensorArrayWriteV3", 4, 4, 1, true, false, "T", 2, ALL, attrs_t, infer_tensor_array, false},
    {"TensorArrayReadV3", 3, 3, 1, true, false, NULL, 0, 0, attrs_ta_read, infer_tensor_array, false},
    {"TensorArrayGatherV3", 3, 3, 1, true, false, NULL, 0, 0, attrs_ta_gather, infer_tensor_array, false},
    {"TensorArrayScatterV3", 4, 4, 1, true, false, "T", 2, ALL, attrs_t, infer_tensor_array, false},
    {"TensorArraySizeV3", 2, 2, 1, true, false, NULL, 0, 0, attrs_none, infer_tensor_array, false},
    {"TensorArrayCloseV3", 1, 1, 0, true, false, NULL, 0, 0, attrs_none, infer_tensor_array, false},
    {"TensorArrayConcatV3", 2, 2, 2, true, false, NULL, 0, 0, attrs_ta_concat, infer_tensor_array, false},
    {"TensorArraySplitV3", 4, 4, 1, true, false, "T", 1, ALL, attrs_t, infer_tensor_array, false},
    /* TensorList: lists of tensors in scalar variants (k_tensor_list.c) */
    {"TensorListReserve", 2, 2, 1, false, false, NULL, 0, 0, attrs_list_reserve, infer_list_reserve, false},
    {"EmptyTensorList", 2, 2, 1, false, false, NULL, 0, 0, attrs_list_reserve, infer_list_reserve, false},
    {"TensorListFromTensor", 2, 2, 1, false, false, "element_dtype", 0, TFD_TYPES_ALL, attrs_list_from_tensor,
     infer_list_from_tensor, false},
    {"TensorListSetItem", 3, 3, 1, false, false, "element_dtype", 2, TFD_TYPES_ALL, attrs_list_set_item,
     infer_list_set_item, false},
    {"TensorListPushBack", 2, 2, 1, false, false, "element_dtype", 1, TFD_TYPES_ALL, attrs_list_push_back,
     infer_list_push_back, false},
    {"TensorListGetItem", 3, 3, 1, false, false, NULL, 0, 0, attrs_list_element, infer_list_get_item, false},
    {"TensorListPopBack", 2, 2, 2, false, false, NULL, 0, 0, attrs_list_element, infer_list_pop_back, false},
    {"TensorListStack", 2, 2, 1, false, false, NULL, 0, 0, attrs_list_stack, infer_list_stack, false},
    {"TensorListLength", 1, 1, 1, false, false, NULL, 0, 0, attrs_none, infer_list_length, false},
    {"TensorListElementShape", 1, 1, 1, false, false, NULL, 0, 0, attrs_list_shape, infer_list_element_shape, false},
    /* TensorList gather/scatter/split/concat/resize (issue 26, lists helper; k_tensor_list.c) */
    {"TensorListGather", 3, 3, 1, false, false, NULL, 0, 0, attrs_list_element, infer_list_gather, false},
    {"TensorListScatter", 3, 3, 1, false, false, "element_dtype", 0, TFD_TYPES_ALL, attrs_list_from_tensor,
     infer_list_scatter, false},
    {"TensorListScatterV2", 4, 4, 1, false, false, "element_dtype", 0, TFD_TYPES_ALL, attrs_list_from_tensor,
     infer_list_scatter, false},
    {"TensorListScatterIntoExistingList", 3, 3, 1, false, false, "element_dtype", 1, TFD_TYPES_ALL, attrs_list_push_back,
     infer_list_scatter_into, false},
    {"TensorListResize", 2, 2, 1, false, false, NULL, 0, 0, attrs_none, infer_list_resize, false},
    {"TensorListSplit", 3, 3, 1, false, false, "element_dtype", 0, TFD_TYPES_ALL, attrs_list_from_tensor,
     infer_list_split, false},
    {"TensorListConcat", 1, 1, 2, false, false, NULL, 0, 0, attrs_list_concat, infer_list_concat, false},
    {"TensorListConcatV2", 3, 3, 2, false, false, NULL, 0, 0, attrs_list_concat_v2, infer_list_concat, false},
    /* ---- end of the TensorList gather/scatter rows ---- */
    /* hash tables: resources in the device's resource manager (issue 26, lists helper; k_lookup_table.c) */
    {"HashTableV2", 0, 0, 1, true, false, NULL, 0, 0, attrs_hash_table, infer_hash_table, false},
    {"MutableHashTableV2", 0, 0, 1, true, false, NULL, 0, 0, attrs_hash_table, infer_hash_table, false},
    {"InitializeTableV2", 3, 3, 0, true, false, NULL, 0, 0, attrs_table_init, infer_table_kv, false},
    {"LookupTableImportV2", 3, 3, 0, true, false, NULL, 0, 0, attrs_table_in_out, infer_table_kv, false},
    {"LookupTableInsertV2", 3, 3, 0, true, false, NULL, 0, 0, attrs_table_in_out, infer_table_kv, false},
    {"LookupTableRemoveV2", 2, 2, 0, true, false, NULL, 0, 0, attrs_table_remove, infer_table_kv, false},
    {"LookupTableFindV2", 3, 3, 1, true, false, NULL, 0, 0, attrs_table_in_out, infer_table_kv, false},
    {"LookupTableSizeV2", 1, 1, 1, true, false, NULL, 0, 0, attrs_none, infer_table_size, false},
    {"LookupTableExportV2", 1, 1, 2, true, false, NULL, 0, 0, attrs_table_export, infer_table_export, false},
    /* TensorFlow 1's names for the same tables: a string-ref handle there, the resource here */
    {"HashTable", 0, 0, 1, true, false, NULL, 0, 0, attrs_hash_table, infer_hash_table, false},
    {"MutableHashTable", 0, 0, 1, true, false, NULL, 0, 0, attrs_hash_table, infer_hash_table, false},
    {"InitializeTable", 3, 3, 0, true, false, NULL, 0, 0, attrs_table_init, infer_table_kv, false},
    {"LookupTableImport", 3, 3, 0, true, false, NULL, 0, 0, attrs_table_in_out, infer_table_kv, false},
    {"LookupTableInsert", 3, 3, 0, true, false, NULL, 0, 0, attrs_table_in_out, infer_table_kv, false},
    {"LookupTableFind", 3, 3, 1, true, false, NULL, 0, 0, attrs_table_in_out, infer_table_kv, false},
    {"LookupTableSize", 1, 1, 1, true, false, NULL, 0, 0, attrs_none, infer_table_size, false},
    {"LookupTableExport", 1, 1, 2, true, false, NULL, 0, 0, attrs_table_export, infer_table_export, false},
    /* ---- end of the hash table rows ---- */
    /* detection: non-maximum suppression (k_nms.c), Where (k_where.c) */
    {"NonMaxSuppressionV2", 4, 4, 1, false, false, "T", 0, F16 | (1u << TFD_FLOAT32), attrs_nms_v2, infer_nms, false},
    {"NonMaxSuppressionV3", 5, 5, 1, false, false, "T", 0, F16 | (1u << TFD_FLOAT32), attrs_nms_v3, infer_nms, false},
    {"NonMaxSuppressionV4", 5, 5, 2, false, false, "T", 0, F16 | (1u << TFD_FLOAT32), attrs_nms_v4, infer_nms, false},
    {"NonMaxSuppressionV5", 6, 6, 3, false, false, "T", 0, F16 | (1u << TFD_FLOAT32), attrs_nms_v5, infer_nms, false},
    {"Where", 1, 1, 1, false, false, "T", 0, ALL, attrs_t, infer_where, false},
    /* scatters, searches, uniques (k_scatter.c) */
    {"ScatterNd", 3, 3, 1, false, false, "T", 1, REAL, attrs_scatter_nd, infer_scatter_nd, false},
    {"TensorScatterUpdate", 3, 3, 1, false, false, "T", 0, ALL, attrs_scatter_nd, infer_tensor_scatter, false},
    {"BatchMatMul", 2, 2, 1, false, false, "T", 0, NUM, attrs_batch_matmul, infer_batch_matmul_v1, false},
    {"LowerBound", 2, 2, 1, false, false, "T", 0, REAL, attrs_search_sorted, infer_search_sorted, false},
    {"UpperBound", 2, 2, 1, false, false, "T", 0, REAL, attrs_search_sorted, infer_search_sorted, false},
    {"Unique", 1, 1, 2, false, false, "T", 0, ALL | STR, attrs_unique, infer_unique, false},
    {"UniqueV2", 2, 2, 2, false, false, "T", 0, ALL | STR, attrs_unique_v2, infer_unique, false},
    {"ListDiff", 2, 2, 2, false, false, "T", 0, ALL | STR, attrs_unique, infer_list_diff, false},
    {"FusedBatchNormV2", 5, 5, 5, false, false, "T", 0, 1u << TFD_FLOAT32, attrs_batch_norm, infer_fused_batch_norm, false},
    /* counts, randoms, normalisation (k_count_norm.c, k_random_ext.c) */
    {"Bincount", 3, 3, 1, false, false, "T", 2, NUM, attrs_t, infer_bincount, false},
    {"DenseBincount", 3, 3, 1, false, false, "T", 2, NUM, attrs_dense_bincount, infer_bincount, false},
    {"TruncatedNormal", 1, 1, 1, true, false, NULL, 0, 0, attrs_random, infer_random, false},
    {"RandomUniformInt", 3, 3, 1, true, false, NULL, 0, 0, attrs_random_int, infer_random_int, false},
    {"Multinomial", 2, 2, 1, true, false, "T", 0, NUM, attrs_multinomial, infer_multinomial, false},
    {"LRN", 1, 1, 1, false, false, "T", 0, F16 | (1u << TFD_FLOAT32), attrs_lrn, infer_lrn, false},
    {"EuclideanNorm", 2, 2, 1, false, false, "T", 0, NUM, attrs_reduce, infer_reduce, false},
    /* issue 26, elementwise math (k_math.c): TensorFlow's dtypes that tfdev computes */
    UNARY("Acos", FLT), UNARY("Acosh", FLT), UNARY("Asin", FLT), UNARY("Asinh", FLT), UNARY("Atan", FLT),
    UNARY("Atanh", FLT), UNARY("Cosh", FLT), UNARY("Sinh", FLT), UNARY("Tan", FLT), UNARY("Erf", FLT),
    UNARY("Expm1", FLT), UNARY("Log1p", FLT), UNARY("Round", NUM), UNARY("Sign", NUM),
    {"IsFinite", 1, 1, 1, false, false, "T", 0, FLT, attrs_t, infer_float_predicate, false},
    {"IsInf", 1, 1, 1, false, false, "T", 0, FLT, attrs_t, infer_float_predicate, false},
    {"IsNan", 1, 1, 1, false, false, "T", 0, FLT, attrs_t, infer_float_predicate, false},
    {"Div", 2, 2, 1, false, false, "T", 0, NUM | U8, attrs_t, infer_binary, false},
    {"DivNoNan", 2, 2, 1, false, false, "T", 0, FLT, attrs_t, infer_binary, false},
    {"Mod", 2, 2, 1, false, false, "T", 0, NUM, attrs_t, infer_binary, false},
    {"BitwiseAnd", 2, 2, 1, false, false, "T", 0, TFD_TYPES_INDEX | U8, attrs_t, infer_binary, false},
    {"ClipByValue", 3, 3, 1, false, false, "T", 0, NUM | U8, attrs_t, infer_clip, false},
    {"LogSoftmax", 1, 1, 1, false, false, "T", 0, FLT, attrs_t, infer_log_softmax, false},
    /* graph utilities and array ops (issue 26's array family; k_array.c) */
    {"Rank", 1, 1, 1, false, true, "T", 0, 0, attrs_t, infer_rank, false},
    {"StopGradient", 1, 1, 1, false, true, "T", 0, 0, attrs_t, infer_same, false},
    {"Snapshot", 1, 1, 1, false, true, "T", 0, 0, attrs_t, infer_same, false},
    {"EnsureShape", 1, 1, 1, false, true, "T", 0, 0, attrs_ensure_shape, infer_ensure_shape, false},
    {"ReverseV2", 2, 2, 1, false, false, "T", 0, ALL | C64 | STR, attrs_reverse_v2, infer_same_axis, false},
    {"Reverse", 2, 2, 1, false, false, "T", 0, ALL | C64 | STR, attrs_t, infer_reverse, false},
    {"OneHot", 4, 4, 1, false, false, "T", 2, ALL | C64 | STR, attrs_one_hot, infer_one_hot, false},
    {"LinSpace", 3, 3, 1, false, false, "T", 0, FLT, attrs_lin_space, infer_lin_space, false},
    {"Cumsum", 2, 2, 1, false, false, "T", 0, REAL, attrs_scan, infer_same_axis, false},
    {"Cumprod", 2, 2, 1, false, false, "T", 0, REAL, attrs_scan, infer_same_axis, false},
    {"All", 2, 2, 1, false, false, NULL, 0, 0, attrs_all_any, infer_all_any, false},
    {"Any", 2, 2, 1, false, false, NULL, 0, 0, attrs_all_any, infer_all_any, false},
    {"BroadcastArgs", 2, 2, 1, false, false, "T", 0, TFD_TYPES_INDEX, attrs_t, infer_broadcast_args, false},
    {"MatrixBandPart", 3, 3, 1, false, false, "T", 0, ALL | C64, attrs_band_part, infer_band_part, false},
    /* sparse and ragged ops (issue 26; k_sparse_segment.c, k_sparse_fill.c, k_ragged.c) */
    {"SparseSegmentSum", 3, 3, 1, false, false, "T", 0, NUM | U8, attrs_sparse_segment, infer_sparse_segment, false},
    {"SparseSegmentMean", 3, 3, 1, false, false, "T", 0, FLT, attrs_sparse_segment, infer_sparse_segment, false},
    {"SparseSegmentSqrtN", 3, 3, 1, false, false, "T", 0, FLT, attrs_sparse_segment, infer_sparse_segment, false},
    {"SparseSegmentSumWithNumSegments", 4, 4, 1, false, false, "T", 0, NUM | U8, attrs_sparse_segment_n, infer_sparse_segment, false},
    {"SparseSegmentMeanWithNumSegments", 4, 4, 1, false, false, "T", 0, FLT, attrs_sparse_segment_n, infer_sparse_segment, false},
    {"SparseSegmentSqrtNWithNumSegments", 4, 4, 1, false, false, "T", 0, FLT, attrs_sparse_segment_n, infer_sparse_segment, false},
    {"SparseFillEmptyRows", 4, 4, 4, false, false, "T", 1, ALL, attrs_t, infer_fill_empty_rows, false},
    {"SparseReshape", 3, 3, 2, false, false, NULL, 0, 0, attrs_none, infer_sparse_reshape, false},
    {"RaggedRange", 3, 3, 2, false, false, "T", 0, NUM, attrs_ragged_range, infer_ragged_range, false},
    {"RaggedTensorToTensor", 4, -1, 1, false, false, "T", 1, ALL, attrs_ragged_to_tensor, infer_ragged_to_tensor, false},
    {"RaggedGather", 3, -1, TFD_OUTPUTS_FROM_ATTR, false, false, NULL, 0, 0, attrs_ragged_gather, infer_ragged_gather, false},
    /* end of the sparse and ragged ops */
    /* issue 26, convolution family (k_conv3d.c, k_dilation.c): TensorFlow's CPU dtypes that tfdev holds */
    {"Conv3D", 2, 2, 1, false, false, "T", 0, FLT16, attrs_conv3d, infer_conv3d_family, false},
    {"MaxPool3D", 1, 1, 1, false, false, "T", 0, FLT16, attrs_pool3d, infer_conv3d_family, false},
    {"AvgPool3D", 1, 1, 1, false, false, "T", 0, FLT16, attrs_pool3d, infer_conv3d_family, false},
    {"MaxPoolWithArgmax", 1, 1, 2, false, false, "T", 0, REAL, attrs_max_pool_argmax, infer_conv3d_family, false},
    {"Dilation2D", 2, 2, 1, false, false, "T", 0, REAL, attrs_dilation2d, infer_conv3d_family, false},
    /* issue 26, image/einsum family (its definitions are in the block above the table) */
    {"Einsum", 1, 2, 1, false, false, "T", 0, NUM, attrs_einsum, infer_einsum, false},
    {"CropAndResize", 4, 4, 1, false, false, "T", 0, REAL, attrs_crop_and_resize, infer_crop_and_resize, false},
    {"ImageProjectiveTransformV3", 4, 4, 1, false, false, "dtype", 0, REAL, attrs_image_transform, infer_image_transform, false},
    {"IdentityN", 1, -1, TFD_OUTPUTS_FROM_ATTR, false, true, NULL, 0, 0, attrs_identity_n, infer_identity_n, false},
    {"ShapeN", 1, -1, TFD_OUTPUTS_FROM_ATTR, false, true, "T", 0, 0, attrs_shape_n, infer_shape_n, false},
    {"Print", 1, -1, 1, true, false, "T", 0, 0, attrs_print, infer_print, false},
    {"FakeQuantWithMinMaxArgs", 1, 1, 1, false, false, NULL, 0, 0, attrs_fake_quant_args, infer_fake_quant, false},
    {"FakeQuantWithMinMaxVars", 3, 3, 1, false, false, NULL, 0, 0, attrs_fake_quant_vars, infer_fake_quant, false},
    /* end of the image/einsum family */
    /* complex numbers and spectral ops (definitions above the table) */
    {"Complex", 2, 2, 1, false, false, "T", 0, 1u << TFD_FLOAT32, attrs_complex, infer_complex, false},
    {"Real", 1, 1, 1, false, false, "T", 0, C64, attrs_complex_part, infer_complex_part, false},
    {"Imag", 1, 1, 1, false, false, "T", 0, C64, attrs_complex_part, infer_complex_part, false},
    {"ComplexAbs", 1, 1, 1, false, false, "T", 0, C64, attrs_complex_part, infer_complex_part, false},
    {"FFT", 1, 1, 1, false, false, "Tcomplex", 0, C64, attrs_fft, infer_fft, false},
    {"IFFT", 1, 1, 1, false, false, "Tcomplex", 0, C64, attrs_fft, infer_fft, false},
    {"RFFT", 2, 2, 1, false, false, "Treal", 0, 1u << TFD_FLOAT32, attrs_rfft, infer_fft, false},
    {"IRFFT", 2, 2, 1, false, false, "Tcomplex", 0, C64, attrs_rfft, infer_fft, false},
    /* string ops (definitions above the table) */
    {"StringToHashBucketFast", 1, 1, 1, false, false, NULL, 0, 0, attrs_hash_bucket, infer_string_map, false},
    {"StringSplit", 2, 2, 3, false, false, NULL, 0, 0, attrs_string_split, infer_string_split, false},
    {"StringNGrams", 2, 2, 2, false, false, "Tsplits", 1, TFD_TYPES_INDEX, attrs_string_ngrams, infer_string_ngrams,
     false},
    {"StaticRegexReplace", 1, 1, 1, false, false, NULL, 0, 0, attrs_regex_replace, infer_string_map, false},
    /* Internal ops the session adds: feeds, fetches, and transfers between partitions. */
    {"_Feed", 0, 0, 1, false, true, NULL, 0, 0, attrs_feed, infer_placeholder, true},
    {"_Fetch", 1, 1, 0, false, true, "T", 0, TFD_TYPES_ANY_AND_VARIANT, attrs_fetch, infer_none, true},
    {"_Send", 1, 1, 0, false, true, "T", 0, TFD_TYPES_ANY_AND_VARIANT, attrs_send, infer_none, true},
    {"_Recv", 0, 0, 1, false, true, NULL, 0, 0, attrs_recv, infer_recv, true},
};

/* ---- ops registered at run time (include/tfdev/custom_op.h) ----
 * Each is a heap copy made once and kept as long as the library (registrations are permanent), so a
 * def found stays valid once the lock is dropped. */
typedef struct custom_def {
  tfd_op_def def;
  tfd_attr_def attrs[TFD_MAX_CUSTOM_ATTRS + 1]; /* ends with a NULL name */
  tfd_code (*infer)(void *user, tfd_infer_ctx *ctx, tfd_status *status);
  void *user;
} custom_def;

static pthread_mutex_t custom_mu = PTHREAD_MUTEX_INITIALIZER;
static custom_def **customs;
static int num_customs, cap_customs;

static const custom_def *find_custom(const char *name) {
  pthread_mutex_lock(&custom_mu);
  const custom_def *found = NULL;
  for (int i = 0; i < num_customs && !found; i++)
    if (strcmp(customs[i]->def.name, name) == 0) found = customs[i];
  pthread_mutex_unlock(&custom_mu);
  return found;
}

const tfd_op_def *tfd_op_lookup(const char *name) {
  if (!name) return NULL;
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (strcmp(ops[i].name, name) == 0) return &ops[i];
  const custom_def *c = find_custom(name);
  return c ? &c->def : NULL;
}

/* The inference of every custom op: outputs default to input 0's dtype and an unknown shape, then
 * the op's own function, if any, says better. */
static tfd_code infer_custom(tfd_infer_ctx *c, tfd_status *st) {
  const custom_def *d = find_custom(tfd_node_def_op(c->node));
  for (int o = 0; o < c->num_outputs; o++) {
    c->out_types[o] = c->num_inputs > 0 ? c->in_types[0] : TFD_FLOAT32;
    c->out_shapes[o].ndims = -1;
  }
  if (!d || !d->infer) return TFD_OK;
  tfd_status mine = TFD_STATUS_INIT;
  if (d->infer(d->user, c, &mine) == TFD_OK && tfd_status_code(&mine) == TFD_OK) return TFD_OK;
  tfd_code code = tfd_status_code(&mine) != TFD_OK ? tfd_status_code(&mine) : TFD_INVALID_ARGUMENT;
  tfd_status_setf(st, code, "node '%s' (%s): %s", tfd_node_def_name(c->node), d->def.name,
                  *tfd_status_message(&mine) ? tfd_status_message(&mine) : "its inference function failed");
  tfd_status_clear(&mine);
  return code;
}

static bool valid_op_name(const char *n) {
  if (!n || !((*n >= 'A' && *n <= 'Z') || (*n >= 'a' && *n <= 'z'))) return false;
  size_t len = 0;
  for (; n[len]; len++)
    if (!((n[len] >= 'A' && n[len] <= 'Z') || (n[len] >= 'a' && n[len] <= 'z') || (n[len] >= '0' && n[len] <= '9') ||
          n[len] == '_'))
      return false;
  return len < 128;
}

tfd_code tfd_custom_op_register(const tfd_custom_op *op, tfd_status *st) {
  tfd_status_reset(st);
  static const char fn[] = "tfd_custom_op_register";
  if (tfd_arg_required(st, fn, "op", op) || tfd_arg_required(st, fn, "op->name", op->name) ||
      tfd_arg_count(st, fn, "op->num_inputs", op->num_inputs) || tfd_arg_count(st, fn, "op->num_outputs", op->num_outputs) ||
      tfd_arg_array(st, fn, "op->attrs", op->attrs, "op->num_attrs", op->num_attrs))
    return TFD_INVALID_ARGUMENT;
  for (int i = 0; i < op->num_attrs; i++)
    if (!op->attrs[i].name) return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "%s: op->attrs[%d].name is NULL", fn, i);
  if (!valid_op_name(op->name))
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "a custom op needs a name of letters, digits and '_' starting with a letter, got '%s'",
                           op && op->name ? op->name : "(null)");
  _Static_assert(TFD_CUSTOM_OP_MAX_OUTPUTS <= TFD_MAX_OP_OUTPUTS, "custom ops fit a node's outputs");
  if (op->num_inputs < 0 || op->num_inputs > TFD_MAX_CUSTOM_INPUTS || op->num_outputs < 0 ||
      op->num_outputs > TFD_CUSTOM_OP_MAX_OUTPUTS)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "op %s: inputs must be 0 to %d and outputs 0 to %d, got %d and %d",
                           op->name, TFD_MAX_CUSTOM_INPUTS, TFD_CUSTOM_OP_MAX_OUTPUTS, op->num_inputs, op->num_outputs);
  if (op->num_attrs < 0 || op->num_attrs > TFD_MAX_CUSTOM_ATTRS || (op->num_attrs > 0 && !op->attrs))
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "op %s: at most %d attributes", op->name, TFD_MAX_CUSTOM_ATTRS);
  custom_def *d = calloc(1, sizeof *d);
  char *name = strdup(op->name);
  bool ok = d && name;
  for (int i = 0; ok && i < op->num_attrs; i++) {
    const tfd_custom_attr *a = &op->attrs[i];
    bool typed = a->type == TFD_ATTR_INT || a->type == TFD_ATTR_FLOAT || a->type == TFD_ATTR_BOOL ||
                 a->type == TFD_ATTR_STRING || a->type == TFD_ATTR_TYPE;
    if (!a->name || !*a->name || !typed || (a->default_value && a->default_value->type != a->type)) {
      free(name);
      for (int j = 0; j < i; j++) {
        free((char *)d->attrs[j].name);
        free((char *)d->attrs[j].dflt_s);
      }
      free(d);
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                             "op %s: attr %d ('%s') must be int, float, bool, string or type, with a default of that type",
                             op->name, i, a->name ? a->name : "");
    }
    tfd_attr_def *ad = &d->attrs[i];
    ad->name = strdup(a->name);
    ad->type = a->type;
    ad->required = !a->default_value;
    if (a->default_value) {
      const tfd_attr_value *v = a->default_value;
      ad->dflt_i = v->type == TFD_ATTR_BOOL ? v->b : v->type == TFD_ATTR_TYPE ? (int64_t)v->dtype : v->i;
      ad->dflt_f = v->f;
      if (v->type == TFD_ATTR_STRING) ad->dflt_s = strdup(v->s ? v->s : "");
      ok = v->type != TFD_ATTR_STRING || ad->dflt_s;
    }
    ok = ok && ad->name;
    /* "T" without a default is TensorFlow's type attribute: inferred from input 0. */
    if (a->type == TFD_ATTR_TYPE && !a->default_value && strcmp(a->name, "T") == 0 && op->num_inputs > 0) {
      d->def.type_attr = "T";
      ad->required = false;
    }
  }
  if (!ok) {
    if (d)
      for (int j = 0; j < op->num_attrs; j++) {
        free((char *)d->attrs[j].name);
        free((char *)d->attrs[j].dflt_s);
      }
    free(name);
    free(d);
    return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory registering op %s", op->name);
  }
  d->def.name = name;
  d->def.min_inputs = d->def.max_inputs = op->num_inputs;
  d->def.num_outputs = op->num_outputs;
  d->def.stateful = op->stateful;
  d->def.attrs = d->attrs;
  d->def.infer = infer_custom;
  d->infer = op->infer;
  d->user = op->user;
  pthread_mutex_lock(&custom_mu);
  bool taken = false;
  for (size_t i = 0; i < sizeof ops / sizeof ops[0] && !taken; i++) taken = strcmp(ops[i].name, name) == 0;
  for (int i = 0; i < num_customs && !taken; i++) taken = strcmp(customs[i]->def.name, name) == 0;
  bool grown = true;
  if (!taken && num_customs == cap_customs) {
    int cap = cap_customs ? cap_customs * 2 : 16;
    custom_def **more = realloc(customs, (size_t)cap * sizeof *more);
    if (more) {
      customs = more;
      cap_customs = cap;
    } else {
      grown = false;
    }
  }
  if (!taken && grown) customs[num_customs++] = d;
  pthread_mutex_unlock(&custom_mu);
  if (taken || !grown) {
    for (int j = 0; j < op->num_attrs; j++) {
      free((char *)d->attrs[j].name);
      free((char *)d->attrs[j].dflt_s);
    }
    free(name);
    free(d);
    return taken ? tfd_status_setf(st, TFD_ALREADY_EXISTS, "op %s is already registered", op->name)
                 : tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory registering op %s", op->name);
  }
  return TFD_OK;
}

/* When a Lua state that loaded core.so closes, Lua unloads it and libtfdev with it: what was
 * registered goes too. */
__attribute__((destructor)) static void free_customs(void) {
  for (int i = 0; i < num_customs; i++) {
    for (const tfd_attr_def *a = customs[i]->attrs; a->name; a++) {
      free((char *)a->name);
      free((char *)a->dflt_s);
    }
    free((char *)customs[i]->def.name);
    free(customs[i]);
  }
  free(customs);
  customs = NULL;
  num_customs = cap_customs = 0;
}

int tfd_infer_num_inputs(const tfd_infer_context *c) { return c->num_inputs; }
tfd_dtype tfd_infer_input_dtype(const tfd_infer_context *c, int i) {
  return i >= 0 && i < c->num_inputs ? c->in_types[i] : 0;
}
void tfd_infer_input_shape(const tfd_infer_context *c, int i, tfd_shape *out) {
  if (i >= 0 && i < c->num_inputs) *out = c->in_shapes[i];
  else out->ndims = -1;
}
const tfd_node_def *tfd_infer_node(const tfd_infer_context *c) { return c->node; }
void tfd_infer_set_output(tfd_infer_context *c, int i, tfd_dtype dtype, const tfd_shape *shape) {
  if (i < 0 || i >= c->num_outputs) return;
  c->out_types[i] = dtype;
  if (shape) c->out_shapes[i] = *shape;
  else c->out_shapes[i].ndims = -1;
}

/* Ops whose output count comes from an attr of the node (num_outputs TFD_OUTPUTS_FROM_ATTR): an int
 * (Unpack's num, ShapeN's N) or the length of a list(type) (IdentityN's T), plus `extra` (RaggedGather:
 * its OUTPUT_RAGGED_RANK splits and the values). per_input: one output per input, so a node without the
 * attr (a builder that leaves N to its default) has as many as inputs. */
static const struct {
  const char *op, *attr;
  bool list, per_input;
  int extra;
} output_count_attrs[] = {{"Unpack", "num", false, false, 0},
                          {"Split", "num_split", false, false, 0},
                          {"SplitV", "num_split", false, false, 0},
                          {"RaggedGather", "OUTPUT_RAGGED_RANK", false, false, 1},
                          {"ShapeN", "N", false, true, 0},
                          {"IdentityN", "T", true, true, 0}};

static int output_count_entry(const tfd_op_def *op) {
  for (size_t i = 0; i < sizeof output_count_attrs / sizeof output_count_attrs[0]; i++)
    if (strcmp(output_count_attrs[i].op, op->name) == 0) return (int)i;
  return -1;
}

const char *tfd_op_num_outputs_attr(const tfd_op_def *op) {
  if (op->num_outputs == TFD_OUTPUTS_PER_COMPONENT) return "component_types";
  int e = output_count_entry(op);
  return e >= 0 ? output_count_attrs[e].attr : NULL;
}

int tfd_op_num_outputs(const tfd_op_def *op, const tfd_node_def *node) {
  if (op->num_outputs >= 0) return op->num_outputs;
  if (op->num_outputs == TFD_OUTPUTS_FROM_ATTR) {
    int e = output_count_entry(op);
    const tfd_attr_value *n = e >= 0 ? tfd_node_def_attr(node, output_count_attrs[e].attr) : NULL;
    if (!n) return -1;
    int extra = output_count_attrs[e].extra;
    int64_t count = output_count_attrs[e].list ? (n->type == TFD_ATTR_LIST_TYPE ? (int64_t)n->list_len : -1)
                                               : (n->type == TFD_ATTR_INT ? n->i : -1);
    if (count < 0 || count + extra < 1 || count + extra > TFD_MAX_OP_OUTPUTS) return -1;
    return (int)(count + extra);
  }
  const tfd_attr_value *types = tfd_node_def_attr(node, "component_types");
  if (!types || types->type != TFD_ATTR_LIST_TYPE || types->list_len < 1 || types->list_len > TFD_MAX_QUEUE_COMPONENTS)
    return -1;
  return (int)types->list_len;
}

int tfd_op_count(void) {
  pthread_mutex_lock(&custom_mu);
  int n = (int)(sizeof ops / sizeof ops[0]) + num_customs;
  pthread_mutex_unlock(&custom_mu);
  return n;
}

const tfd_op_def *tfd_op_at(int i) {
  int builtin = (int)(sizeof ops / sizeof ops[0]);
  if (i < 0) return NULL;
  if (i < builtin) return &ops[i];
  pthread_mutex_lock(&custom_mu);
  const tfd_op_def *d = i - builtin < num_customs ? &customs[i - builtin]->def : NULL;
  pthread_mutex_unlock(&custom_mu);
  return d;
}

static const char *attr_type_name(tfd_attr_type t) {
  static const char *const names[] = {"", "int", "float", "bool", "string", "type", "shape", "tensor",
                                      "list(int)", "list(float)", "list(type)", "list(string)"};
  return (int)t >= 0 && t <= TFD_ATTR_LIST_STRING ? names[t] : "?";
}

tfd_code tfd_op_complete_attrs(const tfd_op_def *op, tfd_node_def *node, const tfd_dtype *in_types, int num_inputs,
                               tfd_status *st) {
  const char *name = tfd_node_def_name(node);
  for (const tfd_attr_def *a = op->attrs; a->name; a++) {
    const tfd_attr_value *v = tfd_node_def_attr(node, a->name);
    if (v) {
      bool list_want = a->type >= TFD_ATTR_LIST_INT, list_got = v->type >= TFD_ATTR_LIST_INT;
      if (v->type != a->type && list_want && list_got && v->list_len == 0) {
        /* An empty list is a value of every list type, as in TensorFlow (a binary GraphDef's empty
         * AttrValue.list says no type, and the loaders store it as list(string)): retyped, so kernels
         * read the list they expect. */
        tfd_attr_value empty = {.type = a->type};
        if (tfd_node_def_set_attr(node, a->name, &empty, st) != TFD_OK) return tfd_status_code(st);
        continue;
      }
      if (v->type != a->type)
        return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): attr '%s' must be %s %s, got %s %s", name,
                               op->name, a->name, tfd_article(attr_type_name(a->type)), attr_type_name(a->type),
                               tfd_article(attr_type_name(v->type)), attr_type_name(v->type));
      continue;
    }
    tfd_attr_value d = {0};
    d.type = a->type;
    if (op->type_attr && strcmp(a->name, op->type_attr) == 0) {
      if (op->type_input >= num_inputs) continue; /* nothing to infer it from; optional */
      d.dtype = in_types[op->type_input];
    } else if (a->required) {
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): missing required attr '%s'", name, op->name,
                             a->name);
    } else if (a->type == TFD_ATTR_SHAPE || a->type == TFD_ATTR_TENSOR || a->type >= TFD_ATTR_LIST_INT) {
      continue; /* optional, no default */
    } else {
      d.i = a->dflt_i;
      d.b = a->dflt_i != 0;
      d.f = a->dflt_f;
      d.dtype = (tfd_dtype)a->dflt_i;
      d.s = a->dflt_s ? a->dflt_s : "";
      if (a->type == TFD_ATTR_TYPE && !d.dtype) continue;
      if (strcmp(a->name, "N") == 0) /* the values (not ConcatV2's or Concat's axis) */
        d.i = strcmp(op->name, "ConcatV2") == 0 || strcmp(op->name, "Concat") == 0 ? num_inputs - 1 : num_inputs;
    }
    if (tfd_node_def_set_attr(node, a->name, &d, st) != TFD_OK) return tfd_status_code(st);
  }
  if (op->type_attr && !op->allowed_types) {
    const tfd_attr_value *t = tfd_node_def_attr(node, op->type_attr);
    if (t && t->dtype == TFD_VARIANT)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                             "node '%s' (%s): %s=variant is not supported: variant tensors (TensorList handles) "
                             "only pass through Identity, control flow and the TensorList ops",
                             name, op->name, op->type_attr);
  }
  if (op->type_attr && op->allowed_types) {
    const tfd_attr_value *t = tfd_node_def_attr(node, op->type_attr);
    if (t && !(op->allowed_types & (1u << t->dtype))) {
      char allowed[128] = "";
      for (int d = 1; d < 32; d++)
        if (op->allowed_types & (1u << d)) {
          if (*allowed) strcat(allowed, ", ");
          strcat(allowed, tfd_dtype_name((tfd_dtype)d));
        }
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): %s=%s is not allowed (allowed: %s)", name,
                             op->name, op->type_attr, tfd_dtype_name(t->dtype), allowed);
    }
  }
  /* A declared T must agree with what the input actually is. */
  if (op->type_attr && op->type_input < num_inputs) {
    const tfd_attr_value *t = tfd_node_def_attr(node, op->type_attr);
    if (t && t->dtype != in_types[op->type_input])
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): %s is %s but input %d is %s", name, op->name,
                             op->type_attr, tfd_dtype_name(t->dtype), op->type_input,
                             tfd_dtype_name(in_types[op->type_input]));
  }
  return TFD_OK;
}

tfd_code tfd_op_infer_node(const tfd_op_def *op, tfd_node_def *node, int num_inputs, const tfd_dtype *in_types,
                           const tfd_shape *in_shapes, const tfd_tensor *const *in_values, int num_outputs,
                           tfd_dtype *out_types, tfd_shape *out_shapes, tfd_status *st) {
  if (tfd_op_complete_attrs(op, node, in_types, num_inputs, st) != TFD_OK) return tfd_status_code(st);
  tfd_infer_ctx c = {node, num_inputs, in_types, in_shapes, in_values, num_outputs, out_types, out_shapes};
  if (op->infer(&c, st) != TFD_OK) return tfd_status_code(st);
  /* A fully known shape must be one a tensor can have (TensorShape's 2^63-1 element rule). */
  for (int o = 0; o < num_outputs; o++) {
    const tfd_shape *sh = &out_shapes[o];
    if (tfd_shape_is_known(sh) && tfd_shape_numel(sh) < 0) {
      char buf[256];
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                             "node '%s' (%s): output %d has shape %s: shape is too large (more than 2^63-1 elements)",
                             tfd_node_def_name(node), op->name, o, tfd_shape_string(sh, buf, sizeof buf));
    }
  }
  return TFD_OK;
}

/* ---- the public view (include/tfdev/ops.h) ---- */
#include "tfdev/ops.h"

int tfd_ops_count(void) { return tfd_op_count(); }
const char *tfd_ops_name(int i) { return tfd_op_at(i) ? tfd_op_at(i)->name : NULL; }
bool tfd_ops_exists(const char *op) { return tfd_op_lookup(op) != NULL; }
bool tfd_ops_is_stateful(const char *op) { return tfd_op_lookup(op) && tfd_op_lookup(op)->stateful; }
bool tfd_ops_user_visible(const char *op) { return tfd_op_lookup(op) && !tfd_op_lookup(op)->runtime_only; }

int tfd_ops_attr_type(const char *op, const char *attr) {
  const tfd_op_def *d = tfd_op_lookup(op);
  if (!d || !attr) return 0;
  for (const tfd_attr_def *a = d->attrs; a->name; a++)
    if (strcmp(a->name, attr) == 0) return (int)a->type;
  return 0;
}

tfd_code tfd_op_check_arity(const tfd_op_def *op, const tfd_node_def *node, int num_inputs, int *num_outputs,
                            tfd_status *st) {
  const char *name = tfd_node_def_name(node);
  if (num_inputs < op->min_inputs || (op->max_inputs >= 0 && num_inputs > op->max_inputs)) {
    if (op->min_inputs == op->max_inputs)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s) takes %d input%s, got %d", name, op->name,
                             op->min_inputs, op->min_inputs == 1 ? "" : "s", num_inputs);
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s) takes at least %d inputs, got %d", name, op->name,
                           op->min_inputs, num_inputs);
  }
  *num_outputs = tfd_op_num_outputs(op, node);
  if (*num_outputs >= 0) return TFD_OK;
  int e = op->num_outputs == TFD_OUTPUTS_FROM_ATTR ? output_count_entry(op) : -1;
  if (e >= 0 && output_count_attrs[e].per_input && !tfd_node_def_attr(node, output_count_attrs[e].attr) &&
      !output_count_attrs[e].list && num_inputs <= TFD_MAX_OP_OUTPUTS) {
    *num_outputs = num_inputs; /* the attr's default, which tfd_op_complete_attrs fills in */
    return TFD_OK;
  }
  if (e >= 0 && output_count_attrs[e].list)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (%s): attr '%s' must list 1 to %d dtypes (tfdev supports at most %d outputs)", name,
                           op->name, output_count_attrs[e].attr, TFD_MAX_OP_OUTPUTS, TFD_MAX_OP_OUTPUTS);
  if (op->num_outputs == TFD_OUTPUTS_PER_COMPONENT)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): component_types must list 1 to %d dtypes", name,
                           op->name, TFD_MAX_QUEUE_COMPONENTS);
  int extra = e >= 0 ? output_count_attrs[e].extra : 0;
  return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                         "node '%s' (%s): attr '%s' must be an int from %d to %d (tfdev supports at most %d outputs)", name,
                         op->name, tfd_op_num_outputs_attr(op), 1 - extra, TFD_MAX_OP_OUTPUTS - extra, TFD_MAX_OP_OUTPUTS);
}

/* The checks graph.c's resolve makes of one node (op known, input count, output count), then the shared
 * inference. Inputs a caller does not know the value of may be given as a NULL in_values. */
tfd_code tfd_ops_infer(tfd_node_def *node, int num_inputs, const tfd_dtype *in_types, const tfd_shape *in_shapes,
                       const tfd_tensor *const *in_values, int cap, int *num_outputs, tfd_dtype *out_types,
                       tfd_shape *out_shapes, tfd_status *st) {
  tfd_status_reset(st);
  static const char fn[] = "tfd_ops_infer";
  if (tfd_arg_required(st, fn, "num_outputs", num_outputs)) return TFD_INVALID_ARGUMENT;
  *num_outputs = 0;
  if (tfd_arg_required(st, fn, "node", node) || tfd_arg_array(st, fn, "in_types", in_types, "num_inputs", num_inputs) ||
      tfd_arg_array(st, fn, "in_shapes", in_shapes, "num_inputs", num_inputs) ||
      tfd_arg_array(st, fn, "out_types", out_types, "cap", cap) || tfd_arg_array(st, fn, "out_shapes", out_shapes, "cap", cap))
    return TFD_INVALID_ARGUMENT;
  const char *name = tfd_node_def_name(node);
  const tfd_op_def *op = tfd_op_lookup(tfd_node_def_op(node));
  if (!op) return tfd_status_setf(st, TFD_NOT_FOUND, "node '%s': op type not registered '%s'", name, tfd_node_def_op(node));
  int n;
  if (tfd_op_check_arity(op, node, num_inputs, &n, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  if (n > cap)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s) has %d outputs, room was given for %d", name,
                           op->name, n, cap);
  const tfd_tensor *none[1] = {NULL};
  const tfd_tensor **values = NULL;
  if (!in_values && num_inputs > 0) {
    values = calloc((size_t)num_inputs, sizeof *values);
    if (!values) return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "node '%s': out of memory", name);
  }
  /* Inference leaves shapes of outputs it cannot work out untouched: start them unknown. */
  for (int o = 0; o < n; o++) {
    out_types[o] = 0;
    out_shapes[o].ndims = -1;
  }
  tfd_code code = tfd_op_infer_node(op, node, num_inputs, in_types, in_shapes,
                                    in_values ? in_values : values ? (const tfd_tensor *const *)values : none, n,
                                    out_types, out_shapes, st);
  free(values);
  if (code == TFD_OK) *num_outputs = n;
  return code;
}
