/* Kernels that move, shape or make tensors: Const, Placeholder(WithDefault), Identity, NoOp, feeds and
 * fetches, Reshape, Transpose, Cast, Fill, ZerosLike, OnesLike, Shape, Size, ConcatV2,
 * BroadcastTo. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/tensor_internal.h"
#include "../../core/checked.h"
#include "../../core/status_internal.h"
#include "../../core/half.h"
#include "../device_math_elem.h"
#include "../kernel.h"
#include "../kernel_shared.h"
#include "shape_logic.h"

static void k_const(tfd_kernel *k, tfd_kernel_context *c) { c->outputs[0] = tfd_tensor_ref(k->value); }

static void k_placeholder(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "You must feed a value for placeholder tensor '%s' with dtype %s", k->name,
                  tfd_dtype_name(k->dst));
}

static void k_identity(tfd_kernel *k, tfd_kernel_context *c) {
  (void)k;
  c->outputs[0] = tfd_tensor_ref(c->inputs[0]);
}

static void k_noop(tfd_kernel *k, tfd_kernel_context *c) { (void)k, (void)c; }

static void k_feed(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *t = k->index < c->num_feeds ? c->feeds[k->index] : NULL;
  if (!t) {
    tfd_kernel_fail(c, k, TFD_INTERNAL, "feed %d was not supplied", (int)k->index);
    return;
  }
  if (tfd_tensor_dtype(t) != k->dst) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "fed %s %s tensor where %s is expected",
                    tfd_article(tfd_dtype_name(tfd_tensor_dtype(t))), tfd_dtype_name(tfd_tensor_dtype(t)),
                    tfd_dtype_name(k->dst));
    return;
  }
  c->outputs[0] = tfd_tensor_ref(t);
}

static void k_fetch(tfd_kernel *k, tfd_kernel_context *c) {
  if (k->index < c->num_fetches) {
    tfd_tensor_unref(c->fetches[k->index]);
    c->fetches[k->index] = tfd_tensor_ref(c->inputs[0]);
  }
}

static void k_reshape(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *in = c->inputs[0], *shape = c->inputs[1];
  if (!tfd_kernel_check_index(c, k, shape, "shape")) return;
  if (tfd_tensor_ndims(shape) != 1 || tfd_tensor_numel(shape) > TFD_MAX_DIMS) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "shape must be a vector of at most %d sizes", TFD_MAX_DIMS);
    return;
  }
  int nd = (int)tfd_tensor_numel(shape), unknown_at = -1;
  int64_t dims[TFD_MAX_DIMS], known = 1;
  for (int i = 0; i < nd; i++) {
    dims[i] = tfd_tensor_get_index(shape, i);
    if (dims[i] == -1 && unknown_at < 0) unknown_at = i;
    else if (dims[i] < 0) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "size %lld at %d is not allowed", (long long)dims[i], i);
      return;
    } else if (!tfd_checked_mul(known, dims[i], &known)) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "the shape's element count overflows");
      return;
    }
  }
  int64_t n = tfd_tensor_numel(in);
  if (unknown_at >= 0) {
    if (known == 0 || n % known) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "cannot infer -1 for %lld elements", (long long)n);
      return;
    }
    dims[unknown_at] = n / known;
  }
  tfd_status tmp = TFD_STATUS_INIT;
  c->outputs[0] = tfd_tensor_make_reshape(in, dims, nd, &tmp);
  if (!c->outputs[0]) {
    tfd_kernel_fail(c, k, tfd_status_code(&tmp), "Input to reshape is a tensor with %lld values: %s", (long long)n,
                    tfd_status_message(&tmp));
    tfd_status_clear(&tmp);
  }
}

static void k_transpose(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *in = c->inputs[0];
  int nd = tfd_tensor_ndims(in);
  int64_t p[TFD_MAX_DIMS], dims[TFD_MAX_DIMS], in_strides[TFD_MAX_DIMS];
  if (!tfd_transpose_shape(c, k, p, dims)) return;
  tfd_tensor *out = tfd_kernel_alloc(c, k, tfd_tensor_dtype(in), dims, nd);
  if (!out) return;
  c->outputs[0] = out;
  if (tfd_tensor_numel(out) == 0) return; /* dims may be huge around a 0: no strides to compute */
  int64_t s = 1;
  for (int i = nd - 1; i >= 0; i--) {
    in_strides[i] = s;
    s *= tfd_tensor_dim(in, i);
  }
  size_t es = tfd_dtype_size(tfd_tensor_dtype(in));
  const char *src = tfd_tensor_const_data(in);
  char *dst = tfd_tensor_data(out);
  int64_t idx[TFD_MAX_DIMS] = {0}, n = tfd_tensor_numel(out);
  for (int64_t o = 0; o < n; o++) {
    int64_t off = 0;
    for (int i = 0; i < nd; i++) off += idx[i] * in_strides[p[i]];
    memcpy(dst + o * (int64_t)es, src + off * (int64_t)es, es);
    for (int i = nd - 1; i >= 0; i--) {
      if (++idx[i] < dims[i]) break;
      idx[i] = 0;
    }
  }
}

/* Cast's element rules (tfd_dm_put) live in device_math_elem.h, shared with the device kernels. */

static void k_cast(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *in = c->inputs[0];
  tfd_dtype st = tfd_tensor_dtype(in);
  if (st == k->dst) {
    c->outputs[0] = tfd_tensor_ref(in);
    return;
  }
  tfd_tensor *out = tfd_kernel_alloc_like(c, k, k->dst, in);
  if (!out) return;
  const void *s = tfd_tensor_const_data(in);
  void *d = tfd_tensor_data(out);
  for (int64_t i = 0, n = tfd_tensor_numel(in); i < n; i++) tfd_dm_put(d, k->dst, i, s, st, i);
  c->outputs[0] = out;
}

/* Fills every element of t with element 0 of v (same dtype). */
static void fill_with(tfd_tensor *t, const void *v) {
  size_t es = tfd_dtype_size(tfd_tensor_dtype(t));
  char *d = tfd_tensor_data(t);
  for (int64_t i = 0, n = tfd_tensor_numel(t); i < n; i++) memcpy(d + i * (int64_t)es, v, es);
}

static void k_fill(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *value = c->inputs[1];
  int64_t dims[TFD_MAX_DIMS];
  int nd;
  if (!tfd_fill_shape(c, k, dims, &nd)) return;
  tfd_tensor *out = tfd_kernel_alloc(c, k, tfd_tensor_dtype(value), dims, nd);
  if (!out) return;
  fill_with(out, tfd_tensor_const_data(value));
  c->outputs[0] = out;
}

static void k_zeros_ones(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *in = c->inputs[0];
  tfd_dtype dt = tfd_tensor_dtype(in);
  tfd_tensor *out = tfd_kernel_alloc_like(c, k, dt, in);
  if (!out) return;
  if (k->code == 0) {
    memset(tfd_tensor_data(out), 0, tfd_tensor_byte_size(out));
  } else {
    int64_t one_i = 1;
    unsigned char one[8];
    tfd_dm_put(one, dt, 0, &one_i, TFD_INT64, 0);
    fill_with(out, one);
  }
  c->outputs[0] = out;
}

static void k_shape(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *in = c->inputs[0];
  int64_t nd = tfd_tensor_ndims(in);
  tfd_tensor *out = tfd_kernel_alloc(c, k, k->dst, &nd, 1);
  if (!out) return;
  for (int i = 0; i < nd; i++) {
    int64_t d = tfd_tensor_dim(in, i);
    tfd_dm_put(tfd_tensor_data(out), k->dst, i, &d, TFD_INT64, 0);
  }
  c->outputs[0] = out;
}

/* Size: the number of elements, as a scalar of out_type; int32 refuses what it cannot hold, as
 * TensorFlow's SizeOp does. */
static void k_size(tfd_kernel *k, tfd_kernel_context *c) {
  int64_t n = tfd_tensor_numel(c->inputs[0]);
  if (k->dst == TFD_INT32 && n > INT32_MAX) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Number of elements was larger than representable by 32-bit output type");
    return;
  }
  tfd_tensor *out = tfd_kernel_alloc(c, k, k->dst, NULL, 0);
  if (!out) return;
  tfd_dm_put(tfd_tensor_data(out), k->dst, 0, &n, TFD_INT64, 0);
  c->outputs[0] = out;
}

/* "[2,3]": a shape as TensorFlow's TensorShape::DebugString writes it. */
/* BroadcastTo: the input repeated along the dimensions where it has size 1 (or none, aligned from the
 * right) to the shape asked for. The last dimension is copied as a run when the input has it in
 * full, else one element repeated. */
static void k_broadcast_to(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *in = c->inputs[0];
  int nd;
  int64_t dims[TFD_MAX_DIMS], strides[TFD_MAX_DIMS];
  if (!tfd_broadcast_to_shape(c, k, dims, &nd, strides)) return;
  tfd_tensor *out = tfd_kernel_alloc(c, k, tfd_tensor_dtype(in), dims, nd);
  if (!out) return;
  c->outputs[0] = out;
  int64_t total = tfd_tensor_numel(out);
  if (total == 0) return;
  size_t esz = tfd_dtype_size(tfd_tensor_dtype(in));
  const char *src = tfd_tensor_const_data(in);
  char *dst = tfd_tensor_data(out);
  if (nd == 0) {
    memcpy(dst, src, esz);
    return;
  }
  int64_t last = dims[nd - 1], rows = total / last, idx[TFD_MAX_DIMS] = {0};
  for (int64_t r = 0; r < rows; r++) {
    int64_t off = 0;
    for (int i = 0; i < nd - 1; i++) off += idx[i] * strides[i];
    const char *from = src + (size_t)off * esz;
    if (strides[nd - 1]) {
      memcpy(dst, from, (size_t)last * esz);
    } else {
      for (int64_t e = 0; e < last; e++) memcpy(dst + (size_t)e * esz, from, esz);
    }
    dst += (size_t)last * esz;
    for (int i = nd - 2; i >= 0 && ++idx[i] == dims[i]; i--) idx[i] = 0;
  }
}

static void k_concat(tfd_kernel *k, tfd_kernel_context *c) {
  int n = c->num_inputs - 1;
  tfd_tensor *first = c->inputs[0];
  int rank = tfd_tensor_ndims(first);
  int64_t axis, dims[TFD_MAX_DIMS];
  if (!tfd_concat_shape(c, k, &axis, dims)) return;
  tfd_tensor *out = tfd_kernel_alloc(c, k, tfd_tensor_dtype(first), dims, rank);
  if (!out) return;
  if (tfd_tensor_numel(out) == 0) { /* nothing to copy; dims around the 0 may be huge */
    c->outputs[0] = out;
    return;
  }
  /* Rows of the outer dimensions: each input contributes a contiguous block per row. */
  int64_t outer = 1, inner = (int64_t)tfd_dtype_size(tfd_tensor_dtype(first));
  for (int d = 0; d < axis; d++) outer *= dims[d];
  for (int d = (int)axis + 1; d < rank; d++) inner *= dims[d];
  char *dst = tfd_tensor_data(out);
  for (int64_t r = 0; r < outer; r++) {
    for (int i = 0; i < n; i++) {
      int64_t block = tfd_tensor_dim(c->inputs[i], (int)axis) * inner;
      memcpy(dst, (const char *)tfd_tensor_const_data(c->inputs[i]) + r * block, (size_t)block);
      dst += block;
    }
  }
  c->outputs[0] = out;
}

/* Concat, TensorFlow 1's form (concat_dim, values...): ConcatV2 over the inputs with the axis moved last. */
static void k_concat_v1(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *moved[65], **in = tfd_concat_v1_inputs(c, k, moved, 65);
  if (!in) return;
  tfd_kernel_context v2 = *c;
  v2.inputs = in;
  k_concat(k, &v2);
  if (in != moved) free(in);
}

tfd_code tfd_setup_basic(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  const char *op = init->op->name;
  const tfd_node_def *n = init->node;
  if (strcmp(op, "Const") == 0) {
    k->value = tfd_tensor_ref(tfd_node_def_attr(n, "value")->tensor);
    k->compute = k_const;
    k->constant = true;
  } else if (strcmp(op, "Placeholder") == 0) {
    k->dst = tfd_attr_dtype(n, "dtype", 0);
    k->compute = k_placeholder;
  } else if (strcmp(op, "PlaceholderWithDefault") == 0 || strcmp(op, "Identity") == 0) {
    k->compute = k_identity;
  } else if (strcmp(op, "NoOp") == 0) {
    k->compute = k_noop;
  } else if (strcmp(op, "_Feed") == 0) {
    k->index = tfd_attr_int(n, "index", 0);
    k->dst = tfd_attr_dtype(n, "dtype", 0);
    k->compute = k_feed;
  } else if (strcmp(op, "_Fetch") == 0) {
    k->index = tfd_attr_int(n, "index", 0);
    k->compute = k_fetch;
  } else if (strcmp(op, "Reshape") == 0) {
    k->compute = k_reshape;
  } else if (strcmp(op, "Transpose") == 0) {
    k->compute = k_transpose;
  } else if (strcmp(op, "Cast") == 0) {
    k->dst = tfd_attr_dtype(n, "DstT", 0);
    k->compute = k_cast;
  } else if (strcmp(op, "Fill") == 0) {
    k->compute = k_fill;
  } else if (strcmp(op, "ZerosLike") == 0 || strcmp(op, "OnesLike") == 0) {
    k->code = op[0] == 'O';
    k->compute = k_zeros_ones;
  } else if (strcmp(op, "Shape") == 0) {
    k->dst = tfd_attr_dtype(n, "out_type", TFD_INT32);
    k->compute = k_shape;
  } else if (strcmp(op, "BroadcastTo") == 0) {
    k->compute = k_broadcast_to;
  } else if (strcmp(op, "Size") == 0) {
    k->dst = tfd_attr_dtype(n, "out_type", TFD_INT32);
    k->compute = k_size;
  } else if (strcmp(op, "ConcatV2") == 0) {
    k->compute = k_concat;
  } else if (strcmp(op, "Concat") == 0) {
    k->compute = k_concat_v1;
  } else {
    return tfd_status_setf(st, TFD_INTERNAL, "no basic kernel for %s", op);
  }
  return TFD_OK;
}
