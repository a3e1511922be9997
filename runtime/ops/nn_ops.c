/* Neural-network ops, as TensorFlow's core/ops/nn_ops.cc defines them: activations, softmax, biases, convolutions,
 * pooling, batch normalisation, TopK, LRN. Their definitions and shape functions. */
#include <stdint.h>
#include <string.h>

#include "common_shape_fns.h"

static tfd_code infer_softmax(tfd_infer_ctx *c, tfd_status *st) {
  if (c->in_shapes[0].ndims == 0)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s': Softmax needs a tensor of rank >= 1", node_name(c));
  return tfd_infer_same(c, st);
}

/* _FusedMatMul (TensorFlow's remapper output): a MatMul whose num_args extra
 * inputs feed the fused_ops; the kernel decides which fusions it implements. */
static tfd_code infer_fused_matmul(tfd_infer_ctx *c, tfd_status *st) {
  int64_t num_args = attr(c, "num_args")->i;
  if (num_args != c->num_inputs - 2)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (_FusedMatMul): num_args is %lld but the node has %d extra inputs", node_name(c),
                           (long long)num_args, c->num_inputs - 2);
  for (int i = 2; i < c->num_inputs; i++)
    if (tfd_infer_same_types(c, 0, i, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  if (tfd_infer_matmul(c, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  int64_t n = c->out_shapes[0].dims[1];
  for (int i = 2; i < c->num_inputs; i++) {
    const tfd_shape *b = &c->in_shapes[i];
    if (b->ndims >= 0 && b->ndims != 1)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                             "node '%s' (_FusedMatMul): input %d (a fused argument) must be 1-D", node_name(c), i);
    if (b->ndims == 1 && b->dims[0] >= 0 && n >= 0 && b->dims[0] != n)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                             "node '%s' (_FusedMatMul): bias has %lld elements but the product has %lld columns",
                             node_name(c), (long long)b->dims[0], (long long)n);
  }
  return TFD_OK;
}

/* One output size by TensorFlow's window rule; -1 when the input is unknown. */
static int64_t window_out(int64_t in, int64_t k, int64_t stride, int64_t dilation, const char *padding,
                          int64_t explicit_total) {
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
    if (!pool && c->in_types[i] != c->in_types[0]) return tfd_infer_same_types(c, 0, i, st);
    if (c->in_shapes[i].ndims >= 0 && c->in_shapes[i].ndims != 4) {
      char s[96];
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): %s must have rank 4, got shape %s",
                             node_name(c), op, i ? "filter" : "input", tfd_shape_string(&c->in_shapes[i], s, sizeof s));
    }
  }
  int64_t stride[2], dilation[2], k[2] = {-1, -1};
  const char *padding = attr(c, "padding") && attr(c, "padding")->type == TFD_ATTR_STRING ? attr(c, "padding")->s : "";
  if (strcmp(padding, "SAME") && strcmp(padding, "VALID") && strcmp(padding, "EXPLICIT"))
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (%s): padding must be SAME, VALID or EXPLICIT, got '%s'", node_name(c), op,
                           padding);
  if (!tfd_spatial_attr(c->node, "strides", 1, stride) ||
      (!pool && !tfd_spatial_attr(c->node, "dilations", 1, dilation)))
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
  for (int d = 0; d < 2; d++)
    o->dims[1 + d] = known ? window_out(x->dims[1 + d], k[d], stride[d], dilation[d], padding, ex[d]) : -1;
  if (pool)
    o->dims[3] = known ? x->dims[3] : -1;
  else if (depthwise)
    o->dims[3] = known && f->ndims == 4 && x->dims[3] >= 0 && f->dims[3] >= 0 ? x->dims[3] * f->dims[3] : -1;
  else
    o->dims[3] = f->ndims == 4 ? f->dims[3] : -1;
  return TFD_OK;
}

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
  if (tfd_infer_need_rank(c, 0, 4, "x", st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  int64_t depth = c->in_shapes[0].ndims == 4 ? c->in_shapes[0].dims[3] : -1;
  for (int i = 1; i < 5; i++) {
    if (c->in_types[i] != TFD_FLOAT32)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): %s (input %d) must be float32, got %s",
                             node_name(c), op, what[i], i, tfd_dtype_name(c->in_types[i]));
    if (tfd_infer_need_rank(c, i, 1, what[i], st) != TFD_OK) return TFD_INVALID_ARGUMENT;
    const tfd_shape *s = &c->in_shapes[i];
    if (s->ndims == 1 && s->dims[0] >= 0 && depth >= 0 && s->dims[0] != depth)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                             "node '%s' (%s): %s must have %lld elements (x's depth), got %lld", node_name(c), op,
                             what[i], (long long)depth, (long long)s->dims[0]);
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

/* Conv2DBackpropInput (NHWC): the gradient of Conv2D with respect to its input, shaped by
 * input_sizes (int32 [4]); filter [kh, kw, in_c, out_c], out_backprop [N, oh, ow, out_c]. */
static tfd_code infer_conv_backprop_input(tfd_infer_ctx *c, tfd_status *st) {
  const char *op = "Conv2DBackpropInput";
  if (tfd_infer_same_types(c, 1, 2, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  if (c->in_types[0] != TFD_INT32 || tfd_infer_need_rank(c, 0, 1, "input_sizes", st) != TFD_OK ||
      (c->in_shapes[0].ndims == 1 && c->in_shapes[0].dims[0] >= 0 && c->in_shapes[0].dims[0] != 4))
    return tfd_status_code(st) != TFD_OK
               ? TFD_INVALID_ARGUMENT
               : tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                                 "node '%s' (%s): input_sizes (input 0) must be an int32 vector of 4 sizes",
                                 node_name(c), op);
  if (tfd_infer_need_rank(c, 1, 4, "filter", st) != TFD_OK ||
      tfd_infer_need_rank(c, 2, 4, "out_backprop", st) != TFD_OK)
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
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): input_sizes must not be negative", node_name(c),
                             op);
  }
  if (o->dims[3] >= 0 && f->ndims == 4 && f->dims[2] >= 0 && o->dims[3] != f->dims[2])
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (%s): input depth %lld does not match the filter's in_channels %lld",
                           node_name(c), op, (long long)o->dims[3], (long long)f->dims[2]);
  return TFD_OK;
}

static const tfd_attr_def attrs_conv_backprop[] = {{"T", TFD_ATTR_TYPE, false, 0, 0, NULL},
                                                   {"padding", TFD_ATTR_STRING, true, 0, 0, NULL},
                                                   {"strides", TFD_ATTR_LIST_INT, false, 0, 0, NULL},
                                                   {"explicit_paddings", TFD_ATTR_LIST_INT, false, 0, 0, NULL},
                                                   {"data_format", TFD_ATTR_STRING, false, 0, 0, "NHWC"},
                                                   {"dilations", TFD_ATTR_LIST_INT, false, 0, 0, NULL},
                                                   {"use_cudnn_on_gpu", TFD_ATTR_BOOL, false, 1, 0, NULL},
                                                   {NULL, 0, false, 0, 0, NULL}};

static const tfd_attr_def attrs_top_k[] = {A_T,
                                           {"sorted", TFD_ATTR_BOOL, false, 1, 0, NULL},
                                           {"Tk", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL},
                                           {"index_type", TFD_ATTR_TYPE, false, TFD_INT32, 0, NULL},
                                           END};

/* LogSoftmax: TensorFlow's UnchangedShapeWithRankAtLeast(1). */
static tfd_code infer_log_softmax(tfd_infer_ctx *c, tfd_status *st) {
  if (c->in_shapes[0].ndims == 0)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                           "node '%s' (LogSoftmax): Shape must be at least rank 1 but is rank 0", node_name(c));
  return tfd_infer_same(c, st);
}

static tfd_code infer_top_k(tfd_infer_ctx *c, tfd_status *st) {
  if (tfd_infer_need_index(c, 1, "k", st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  tfd_dtype it = attr(c, "index_type")->dtype;
  if (!(TFD_TYPES_INDEX & (1u << it)))
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (TopKV2): index_type must be int32 or int64",
                           node_name(c));
  const tfd_shape *in = &c->in_shapes[0];
  if (in->ndims == 0)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (TopKV2): input must be at least 1-D, got a scalar",
                           node_name(c));
  if (c->in_shapes[1].ndims > 0)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (TopKV2): k must be a scalar", node_name(c));
  c->out_types[0] = c->in_types[0];
  c->out_types[1] = it;
  c->out_shapes[0] = *in;
  const tfd_tensor *k = c->in_values ? c->in_values[1] : NULL;
  if (in->ndims > 0) {
    int64_t kv = k ? tfd_tensor_get_index(k, 0) : -1, last = in->dims[in->ndims - 1];
    if (k && kv < 0)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (TopKV2): Need k >= 0, got %lld", node_name(c),
                             (long long)kv);
    if (k && last >= 0 && last < kv)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                             "node '%s' (TopKV2): input must have at least k columns. Had %lld, needed %lld",
                             node_name(c), (long long)last, (long long)kv);
    c->out_shapes[0].dims[in->ndims - 1] = kv;
  }
  c->out_shapes[1] = c->out_shapes[0];
  return TFD_OK;
}

static tfd_code infer_bias_add(tfd_infer_ctx *c, tfd_status *st) {
  if (tfd_infer_same_types(c, 0, 1, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
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

/* LRN: 4-D input, output like it. */
static tfd_code infer_lrn(tfd_infer_ctx *c, tfd_status *st) {
  if (tfd_infer_need_rank(c, 0, 4, "input", st) != TFD_OK) return TFD_INVALID_ARGUMENT;
  return tfd_infer_same(c, st);
}

/* issue 26, convolution family: Conv3D, MaxPool3D, AvgPool3D (NDHWC), MaxPoolWithArgmax, Dilation2D
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
  if (f && tfd_infer_same_types(c, 0, 1, st) != TFD_OK) return TFD_INVALID_ARGUMENT;
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
  if (conv3d)
    o->dims[4] = f->ndims == 5 ? f->dims[4] : -1;
  else if (x->ndims == rank)
    o->dims[rank - 1] = x->dims[rank - 1];
  for (int i = 0; i < rank - 2 && ok && known; i++) {
    int64_t k = f ? f->dims[i] : ks->list_i[1 + i];
    int64_t rate = d && d->type == TFD_ATTR_LIST_INT && d->list_len == (size_t)rank ? d->list_i[1 + i] : 1;
    o->dims[1 + i] = conv3d_family_window(x->dims[1 + i], k, rate, s->list_i[1 + i], same);
  }
  if (argmax) c->out_shapes[1] = *o;
  return TFD_OK;
}

static const tfd_attr_def attrs_fused_matmul[] = {A_T,
                                                  {"transpose_a", TFD_ATTR_BOOL, false, 0, 0, NULL},
                                                  {"transpose_b", TFD_ATTR_BOOL, false, 0, 0, NULL},
                                                  {"num_args", TFD_ATTR_INT, false, 0, 0, NULL},
                                                  {"fused_ops", TFD_ATTR_LIST_STRING, false, 0, 0, NULL},
                                                  {"epsilon", TFD_ATTR_FLOAT, false, 0, 0.0001, NULL},
                                                  {"leakyrelu_alpha", TFD_ATTR_FLOAT, false, 0, 0.2, NULL},
                                                  END};

#define A_WINDOW                                                                                     \
  {"padding", TFD_ATTR_STRING, true, 0, 0, NULL}, {"strides", TFD_ATTR_LIST_INT, false, 0, 0, NULL}, \
      {"explicit_paddings", TFD_ATTR_LIST_INT, false, 0, 0, NULL}, {                                 \
    "data_format", TFD_ATTR_STRING, false, 0, 0, "NHWC"                                              \
  }

static const tfd_attr_def attrs_conv[] = {A_T,
                                          A_WINDOW,
                                          {"dilations", TFD_ATTR_LIST_INT, false, 0, 0, NULL},
                                          {"use_cudnn_on_gpu", TFD_ATTR_BOOL, false, 1, 0, NULL},
                                          END};

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

static const tfd_attr_def attrs_leaky_relu[] = {A_T, {"alpha", TFD_ATTR_FLOAT, false, 0, 0.2, NULL}, END};

static const tfd_attr_def attrs_bias[] = {A_T, {"data_format", TFD_ATTR_STRING, false, 0, 0, "NHWC"}, END};

static const tfd_attr_def attrs_lrn[] = {A_T,
                                         {"depth_radius", TFD_ATTR_INT, false, 5, 0, NULL},
                                         {"bias", TFD_ATTR_FLOAT, false, 0, 1.0, NULL},
                                         {"alpha", TFD_ATTR_FLOAT, false, 0, 1.0, NULL},
                                         {"beta", TFD_ATTR_FLOAT, false, 0, 0.5, NULL},
                                         END};

/* issue 26, convolution family */
static const tfd_attr_def attrs_conv3d[] = {A_T,
                                            {"strides", TFD_ATTR_LIST_INT, true, 0, 0, NULL},
                                            {"padding", TFD_ATTR_STRING, true, 0, 0, NULL},
                                            {"data_format", TFD_ATTR_STRING, false, 0, 0, "NDHWC"},
                                            {"dilations", TFD_ATTR_LIST_INT, false, 0, 0, NULL},
                                            END};

static const tfd_attr_def attrs_pool3d[] = {A_T,
                                            {"ksize", TFD_ATTR_LIST_INT, true, 0, 0, NULL},
                                            {"strides", TFD_ATTR_LIST_INT, true, 0, 0, NULL},
                                            {"padding", TFD_ATTR_STRING, true, 0, 0, NULL},
                                            {"data_format", TFD_ATTR_STRING, false, 0, 0, "NDHWC"},
                                            END};

static const tfd_attr_def attrs_max_pool_argmax[] = {A_T,
                                                     {"ksize", TFD_ATTR_LIST_INT, true, 0, 0, NULL},
                                                     {"strides", TFD_ATTR_LIST_INT, true, 0, 0, NULL},
                                                     {"Targmax", TFD_ATTR_TYPE, false, TFD_INT64, 0, NULL},
                                                     {"padding", TFD_ATTR_STRING, true, 0, 0, NULL},
                                                     {"include_batch_in_index", TFD_ATTR_BOOL, false, 0, 0, NULL},
                                                     END};

static const tfd_attr_def attrs_dilation2d[] = {A_T,
                                                {"strides", TFD_ATTR_LIST_INT, true, 0, 0, NULL},
                                                {"rates", TFD_ATTR_LIST_INT, true, 0, 0, NULL},
                                                {"padding", TFD_ATTR_STRING, true, 0, 0, NULL},
                                                END};

/* The convolution family's dtypes, as TensorFlow's CPU kernels register them (restricted to tfdev's
 * dtypes): Conv2D half, float, double, int32; DepthwiseConv2dNative and AvgPool half, float,
 * double; MaxPool and the resizes every real number type. */
#define CONV_T (FLT | (1u << TFD_INT32) | F16)

#define FLT16 (FLT | F16)

/* One row per op: clang-format would give each field a line. */
/* clang-format off */
static const tfd_op_def nn_ops[] = {
    UNARY("Relu", NUM),
    UNARY("Relu6", NUM),
    UNARY("Elu", FLT),
    UNARY("Selu", FLT),
    UNARY("Softplus", FLT),
    {.name = "LeakyRelu", .min_inputs = 1, .max_inputs = 1, .num_outputs = 1, .type_attr = "T", .allowed_types = FLT,
     .attrs = attrs_leaky_relu, .infer = tfd_infer_same},
    {.name = "Softmax", .min_inputs = 1, .max_inputs = 1, .num_outputs = 1, .type_attr = "T", .allowed_types = FLT,
     .attrs = tfd_attrs_t, .infer = infer_softmax},
    {.name = "BiasAdd", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .type_attr = "T", .allowed_types = NUM,
     .attrs = attrs_bias, .infer = infer_bias_add},
    {.name = "_FusedMatMul", .min_inputs = 2, .max_inputs = -1, .num_outputs = 1, .type_attr = "T",
     .allowed_types = FLT, .attrs = attrs_fused_matmul, .infer = infer_fused_matmul},
    {.name = "Conv2D", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .type_attr = "T", .allowed_types = CONV_T,
     .attrs = attrs_conv, .infer = infer_window},
    {.name = "_FusedConv2D", .min_inputs = 2, .max_inputs = -1, .num_outputs = 1, .type_attr = "T",
     .allowed_types = 1u << TFD_FLOAT32, .attrs = attrs_fused_conv, .infer = infer_window},
    {.name = "DepthwiseConv2dNative", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .type_attr = "T",
     .allowed_types = FLT16, .attrs = attrs_depthwise, .infer = infer_window},
    {.name = "MaxPool", .min_inputs = 1, .max_inputs = 1, .num_outputs = 1, .type_attr = "T", .allowed_types = REAL,
     .attrs = attrs_pool, .infer = infer_window},
    {.name = "AvgPool", .min_inputs = 1, .max_inputs = 1, .num_outputs = 1, .type_attr = "T", .allowed_types = FLT16,
     .attrs = attrs_pool, .infer = infer_window},
    {.name = "Prelu", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .type_attr = "T",
     .allowed_types = 1u << TFD_FLOAT32, .attrs = tfd_attrs_t, .infer = tfd_infer_same},
    {.name = "FusedBatchNorm", .min_inputs = 5, .max_inputs = 5, .num_outputs = 5, .type_attr = "T",
     .allowed_types = 1u << TFD_FLOAT32, .attrs = attrs_batch_norm_v1, .infer = infer_fused_batch_norm},
    {.name = "FusedBatchNormV3", .min_inputs = 5, .max_inputs = 5, .num_outputs = 6, .type_attr = "T",
     .allowed_types = 1u << TFD_FLOAT32, .attrs = attrs_batch_norm, .infer = infer_fused_batch_norm},
    {.name = "Conv2DBackpropInput", .min_inputs = 3, .max_inputs = 3, .num_outputs = 1, .type_attr = "T",
     .type_input = 1, .allowed_types = 1u << TFD_FLOAT32, .attrs = attrs_conv_backprop,
     .infer = infer_conv_backprop_input},
    {.name = "_FusedDepthwiseConv2dNative", .min_inputs = 2, .max_inputs = -1, .num_outputs = 1, .type_attr = "T",
     .allowed_types = 1u << TFD_FLOAT32, .attrs = attrs_fused_conv, .infer = infer_window},
    /* The same op as TensorFlow.js's converter names it (tfjs-converter's op list has no underscore). */
    {.name = "FusedDepthwiseConv2dNative", .min_inputs = 2, .max_inputs = -1, .num_outputs = 1, .type_attr = "T",
     .allowed_types = 1u << TFD_FLOAT32, .attrs = attrs_fused_conv, .infer = infer_window},
    {.name = "TopKV2", .min_inputs = 2, .max_inputs = 2, .num_outputs = 2, .type_attr = "T", .allowed_types = NUM,
     .attrs = attrs_top_k, .infer = infer_top_k},
    {.name = "FusedBatchNormV2", .min_inputs = 5, .max_inputs = 5, .num_outputs = 5, .type_attr = "T",
     .allowed_types = 1u << TFD_FLOAT32, .attrs = attrs_batch_norm, .infer = infer_fused_batch_norm},
    {.name = "LRN", .min_inputs = 1, .max_inputs = 1, .num_outputs = 1, .type_attr = "T",
     .allowed_types = F16 | (1u << TFD_FLOAT32), .attrs = attrs_lrn, .infer = infer_lrn},
    {.name = "LogSoftmax", .min_inputs = 1, .max_inputs = 1, .num_outputs = 1, .type_attr = "T", .allowed_types = FLT,
     .attrs = tfd_attrs_t, .infer = infer_log_softmax},
    {.name = "Conv3D", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .type_attr = "T", .allowed_types = FLT16,
     .attrs = attrs_conv3d, .infer = infer_conv3d_family},
    {.name = "MaxPool3D", .min_inputs = 1, .max_inputs = 1, .num_outputs = 1, .type_attr = "T", .allowed_types = FLT16,
     .attrs = attrs_pool3d, .infer = infer_conv3d_family},
    {.name = "AvgPool3D", .min_inputs = 1, .max_inputs = 1, .num_outputs = 1, .type_attr = "T", .allowed_types = FLT16,
     .attrs = attrs_pool3d, .infer = infer_conv3d_family},
    {.name = "MaxPoolWithArgmax", .min_inputs = 1, .max_inputs = 1, .num_outputs = 2, .type_attr = "T",
     .allowed_types = REAL, .attrs = attrs_max_pool_argmax, .infer = infer_conv3d_family},
    {.name = "Dilation2D", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .type_attr = "T", .allowed_types = REAL,
     .attrs = attrs_dilation2d, .infer = infer_conv3d_family},
};
/* clang-format on */

const tfd_op_family tfd_nn_ops = {"nn", nn_ops, (int)(sizeof nn_ops / sizeof nn_ops[0])};
