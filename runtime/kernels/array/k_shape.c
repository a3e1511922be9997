/* Kernels that reshape, cut, join and repeat tensors with TensorFlow's semantics: ExpandDims, Squeeze, Pack,
 * Unpack, Slice, StridedSlice, Tile, Range, Split, SplitV. All copy elements as bytes, so they take any dtype. */
#include <stdlib.h>
#include <string.h>

#include "../../core/tensor_internal.h"
#include "../../core/status_internal.h"
#include "../kernel.h"
#include "../kernel_shared.h"
#include "shape_logic.h"

/* A view of `in` with new dims (same elements), as the kernel's output. */
static void reshaped(tfd_kernel_context *c, const tfd_kernel *k, tfd_tensor *in, const int64_t *dims, int nd) {
  tfd_status tmp = TFD_STATUS_INIT;
  c->outputs[0] = tfd_tensor_make_reshape(in, dims, nd, &tmp);
  if (!c->outputs[0]) {
    tfd_kernel_fail(c, k, tfd_status_code(&tmp), "%s", tfd_status_message(&tmp));
    tfd_status_clear(&tmp);
  }
}

/* Copies out[i...] = in[begin + i * stride] per dimension (strides may be negative); out has the same rank. */
static void strided_copy(const tfd_tensor *in, tfd_tensor *out, const int64_t *begin, const int64_t *stride) {
  int nd = tfd_tensor_ndims(out);
  int64_t n = tfd_tensor_numel(out);
  if (n == 0) return;
  int64_t es = (int64_t)tfd_dtype_size(tfd_tensor_dtype(in)), istr[TFD_MAX_DIMS], s = 1;
  for (int d = nd - 1; d >= 0; d--) {
    istr[d] = s;
    s *= tfd_tensor_dim(in, d);
  }
  const char *src = tfd_tensor_const_data(in);
  char *dst = tfd_tensor_data(out);
  if (nd == 0) {
    memcpy(dst, src, (size_t)es);
    return;
  }
  /* Runs along the last dimension are contiguous when its stride is 1. */
  int64_t run = tfd_tensor_dim(out, nd - 1), last_stride = stride[nd - 1];
  int64_t idx[TFD_MAX_DIMS] = {0};
  for (int64_t o = 0; o < n; o += run) {
    int64_t off = 0;
    for (int d = 0; d < nd - 1; d++) off += (begin[d] + idx[d] * stride[d]) * istr[d];
    off += begin[nd - 1];
    if (last_stride == 1) {
      memcpy(dst + o * es, src + off * es, (size_t)(run * es));
    } else {
      for (int64_t j = 0; j < run; j++) memcpy(dst + (o + j) * es, src + (off + j * last_stride) * es, (size_t)es);
    }
    for (int d = nd - 2; d >= 0; d--) {
      if (++idx[d] < tfd_tensor_dim(out, d)) break;
      idx[d] = 0;
    }
  }
}

static void k_expand_dims(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *in = c->inputs[0];
  int nd = tfd_tensor_ndims(in);
  int64_t axis, dims[TFD_MAX_DIMS];
  if (nd >= TFD_MAX_DIMS) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "the result would have more than %d dimensions", TFD_MAX_DIMS);
    return;
  }
  if (!tfd_kernel_read_axis(c, k, 1, nd + 1, "axis", &axis)) return;
  for (int d = 0, s = 0; d <= nd; d++) dims[d] = d == axis ? 1 : tfd_tensor_dim(in, s++);
  reshaped(c, k, in, dims, nd + 1);
}

typedef struct axes_list {
  int n;
  int64_t axes[];
} axes_list;

static void k_squeeze(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *in = c->inputs[0];
  const axes_list *l = k->state;
  int nd = tfd_tensor_ndims(in), ond = 0;
  bool drop[TFD_MAX_DIMS] = {0};
  int64_t dims[TFD_MAX_DIMS];
  for (int i = 0; l && i < l->n; i++) {
    int64_t a = l->axes[i];
    if (a < -nd || a >= nd) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Tried to squeeze dim index %lld for tensor with %d dimensions",
                      (long long)a, nd);
      return;
    }
    if (a < 0) a += nd;
    if (tfd_tensor_dim(in, (int)a) != 1) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Can not squeeze dim[%lld], expected a dimension of 1, got %lld",
                      (long long)a, (long long)tfd_tensor_dim(in, (int)a));
      return;
    }
    drop[a] = true;
  }
  for (int d = 0; d < nd; d++) {
    if (!l && tfd_tensor_dim(in, d) == 1) drop[d] = true;
    if (!drop[d]) dims[ond++] = tfd_tensor_dim(in, d);
  }
  reshaped(c, k, in, dims, ond);
}

static void k_pack(tfd_kernel *k, tfd_kernel_context *c) {
  int n = c->num_inputs;
  tfd_tensor *first = c->inputs[0];
  int nd = tfd_tensor_ndims(first);
  int64_t axis, dims[TFD_MAX_DIMS];
  if (!tfd_pack_shape(c, k, &axis, dims)) return;
  tfd_tensor *out = tfd_kernel_alloc(c, k, tfd_tensor_dtype(first), dims, nd + 1);
  if (!out) return;
  c->outputs[0] = out;
  if (tfd_tensor_numel(out) == 0) return;
  int64_t outer = tfd_dims_product(first, 0, (int)axis),
          block = tfd_dims_product(first, (int)axis, nd) * (int64_t)tfd_dtype_size(tfd_tensor_dtype(first));
  char *dst = tfd_tensor_data(out);
  for (int64_t r = 0; r < outer; r++)
    for (int i = 0; i < n; i++, dst += block)
      memcpy(dst, (const char *)tfd_tensor_const_data(c->inputs[i]) + r * block, (size_t)block);
}

static void k_unpack(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *in = c->inputs[0];
  int nd = tfd_tensor_ndims(in), n = c->num_outputs;
  int64_t axis, dims[TFD_MAX_DIMS];
  if (!tfd_unpack_axis(c, k, &axis)) return;
  for (int d = 0, o = 0; d < nd; d++)
    if (d != axis) dims[o++] = tfd_tensor_dim(in, d);
  tfd_tensor *outs[TFD_MAX_OP_OUTPUTS];
  for (int i = 0; i < n; i++) {
    outs[i] = tfd_kernel_alloc(c, k, tfd_tensor_dtype(in), dims, nd - 1);
    if (!outs[i]) {
      while (i--) tfd_tensor_unref(outs[i]);
      return;
    }
  }
  if (tfd_tensor_numel(in) > 0) {
    int64_t outer = tfd_dims_product(in, 0, (int)axis),
            block = tfd_dims_product(in, (int)axis + 1, nd) * (int64_t)tfd_dtype_size(tfd_tensor_dtype(in));
    const char *src = tfd_tensor_const_data(in);
    for (int64_t r = 0; r < outer; r++)
      for (int i = 0; i < n; i++, src += block) memcpy((char *)tfd_tensor_data(outs[i]) + r * block, src, (size_t)block);
  }
  for (int i = 0; i < n; i++) c->outputs[i] = outs[i];
}

static void k_slice(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *in = c->inputs[0];
  int nd = tfd_tensor_ndims(in);
  int64_t begin[TFD_MAX_DIMS], dims[TFD_MAX_DIMS], one[TFD_MAX_DIMS];
  if (!tfd_slice_shape(c, k, begin, dims)) return;
  for (int d = 0; d < nd; d++) one[d] = 1;
  tfd_tensor *out = tfd_kernel_alloc(c, k, tfd_tensor_dtype(in), dims, nd);
  if (!out) return;
  strided_copy(in, out, begin, one);
  c->outputs[0] = out;
}

/* ---- StridedSlice: the plan is shared with shape inference (op_registry.c) ---- */
static void k_strided_slice(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *in = c->inputs[0];
  tfd_strided_slice_plan p;
  if (!tfd_strided_slice_shape(c, k, &p)) return;
  tfd_tensor *out = tfd_kernel_alloc(c, k, tfd_tensor_dtype(in), p.dims, p.ndims);
  if (!out) return;
  strided_copy(in, out, p.begin, p.stride);
  tfd_strided_slice_output(c, k, out, &p);
}

static void k_tile(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *in = c->inputs[0];
  int nd = tfd_tensor_ndims(in);
  int64_t dims[TFD_MAX_DIMS];
  if (!tfd_tile_shape(c, k, dims)) return;
  tfd_tensor *out = tfd_kernel_alloc(c, k, tfd_tensor_dtype(in), dims, nd);
  if (!out) return;
  c->outputs[0] = out;
  int64_t n = tfd_tensor_numel(out);
  if (n == 0) return;
  int64_t es = (int64_t)tfd_dtype_size(tfd_tensor_dtype(in)), istr[TFD_MAX_DIMS], s = 1, idx[TFD_MAX_DIMS] = {0};
  for (int d = nd - 1; d >= 0; d--) {
    istr[d] = s;
    s *= tfd_tensor_dim(in, d);
  }
  const char *src = tfd_tensor_const_data(in);
  char *dst = tfd_tensor_data(out);
  for (int64_t o = 0; o < n; o++) {
    int64_t off = 0;
    for (int d = 0; d < nd; d++) off += idx[d] % tfd_tensor_dim(in, d) * istr[d];
    memcpy(dst + o * es, src + off * es, (size_t)es);
    for (int d = nd - 1; d >= 0; d--) {
      if (++idx[d] < dims[d]) break;
      idx[d] = 0;
    }
  }
}

static void k_range(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_dtype dt = tfd_tensor_dtype(c->inputs[0]);
  tfd_range r;
  if (!tfd_range_size(c, k, &r)) return;
  int64_t n = r.n;
  tfd_tensor *out = tfd_kernel_alloc(c, k, dt, &n, 1);
  if (!out) return;
  if (r.integer) {
    for (int64_t i = 0; i < n; i++) {
      int64_t v = (int64_t)((uint64_t)r.start + (uint64_t)i * (uint64_t)r.delta); /* in range by construction */
      if (dt == TFD_INT32) ((int32_t *)tfd_tensor_data(out))[i] = (int32_t)v;
      else ((int64_t *)tfd_tensor_data(out))[i] = v;
    }
  } else {
    /* As TensorFlow: the values in the dtype's own precision, by accumulation. */
    float vf = (float)r.fstart;
    double vd = r.fstart;
    for (int64_t i = 0; i < n; i++) {
      if (dt == TFD_FLOAT32) ((float *)tfd_tensor_data(out))[i] = vf, vf += (float)r.fdelta;
      else ((double *)tfd_tensor_data(out))[i] = vd, vd += r.fdelta;
    }
  }
  c->outputs[0] = out;
}

/* Split and SplitV: num_outputs pieces of `in` along axis, sized by sizes[]. */
static void split_into(tfd_kernel *k, tfd_kernel_context *c, tfd_tensor *in, int64_t axis, const int64_t *sizes) {
  int nd = tfd_tensor_ndims(in), n = c->num_outputs;
  tfd_tensor *outs[TFD_MAX_OP_OUTPUTS];
  int64_t dims[TFD_MAX_DIMS];
  for (int d = 0; d < nd; d++) dims[d] = tfd_tensor_dim(in, d);
  for (int i = 0; i < n; i++) {
    dims[axis] = sizes[i];
    outs[i] = tfd_kernel_alloc(c, k, tfd_tensor_dtype(in), dims, nd);
    if (!outs[i]) {
      while (i--) tfd_tensor_unref(outs[i]);
      return;
    }
  }
  if (tfd_tensor_numel(in) > 0) {
    int64_t outer = tfd_dims_product(in, 0, (int)axis),
            inner = tfd_dims_product(in, (int)axis + 1, nd) * (int64_t)tfd_dtype_size(tfd_tensor_dtype(in));
    const char *src = tfd_tensor_const_data(in);
    for (int64_t r = 0; r < outer; r++)
      for (int i = 0; i < n; i++) {
        int64_t block = sizes[i] * inner;
        memcpy((char *)tfd_tensor_data(outs[i]) + r * block, src, (size_t)block);
        src += block;
      }
  }
  for (int i = 0; i < n; i++) c->outputs[i] = outs[i];
}

static void k_split(tfd_kernel *k, tfd_kernel_context *c) {
  int64_t axis, sizes[TFD_MAX_OP_OUTPUTS];
  if (tfd_split_sizes(c, k, &axis, sizes)) split_into(k, c, c->inputs[1], axis, sizes);
}

static void k_split_v(tfd_kernel *k, tfd_kernel_context *c) {
  int64_t axis, sizes[TFD_MAX_OP_OUTPUTS];
  if (tfd_split_v_sizes(c, k, &axis, sizes)) split_into(k, c, c->inputs[0], axis, sizes);
}

static void free_state(tfd_kernel *k) { free(k->state); }

tfd_code tfd_setup_shape(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  const char *op = init->op->name;
  const tfd_node_def *n = init->node;
  if (strcmp(op, "ExpandDims") == 0) {
    k->compute = k_expand_dims;
  } else if (strcmp(op, "Squeeze") == 0) {
    const tfd_attr_value *sd = tfd_node_def_attr(n, "squeeze_dims");
    if (sd && sd->type == TFD_ATTR_LIST_INT && sd->list_len > 0) {
      if (sd->list_len > 64) return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (Squeeze): too many squeeze_dims", k->name);
      axes_list *l = malloc(sizeof *l + sd->list_len * sizeof l->axes[0]);
      if (!l) return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
      l->n = (int)sd->list_len;
      memcpy(l->axes, sd->list_i, sd->list_len * sizeof l->axes[0]);
      k->state = l;
      k->cleanup = free_state;
    }
    k->compute = k_squeeze;
  } else if (strcmp(op, "Pack") == 0 || strcmp(op, "Unpack") == 0) {
    k->index = tfd_attr_int(n, "axis", 0);
    k->compute = op[0] == 'P' ? k_pack : k_unpack;
  } else if (strcmp(op, "Slice") == 0) {
    k->compute = k_slice;
  } else if (strcmp(op, "StridedSlice") == 0) {
    tfd_strided_slice_masks *m = malloc(sizeof *m);
    if (!m) return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
    tfd_strided_slice_masks_of(n, m);
    k->state = m;
    k->cleanup = free_state;
    k->compute = k_strided_slice;
  } else if (strcmp(op, "Tile") == 0) {
    k->compute = k_tile;
  } else if (strcmp(op, "Range") == 0) {
    k->compute = k_range;
  } else if (strcmp(op, "Split") == 0) {
    k->compute = k_split;
  } else if (strcmp(op, "SplitV") == 0) {
    k->compute = k_split_v;
  } else {
    return tfd_status_setf(st, TFD_INTERNAL, "no shape kernel for %s", op);
  }
  return TFD_OK;
}
