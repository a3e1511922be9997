/* SparseToDense (sparse_indices, output_shape, sparse_values, default_value), as TensorFlow's CPU
 * kernel: a dense tensor of output_shape holding default_value, with sparse_values[i] (or the one
 * scalar value) at row i of sparse_indices ([N, R], [N] or a scalar index). With validate_indices
 * (the default) the indices must be in bounds, sorted in row-major order and unique, and the first
 * index at fault is named with TensorFlow's text; without it, a later repeat overwrites an earlier
 * one and only an index out of bounds is refused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kernel.h"
#include "../kernel_shared.h"
#include "../array/scatter_logic.h"
#include "../array/shape_logic.h"

/* The checks TensorFlow makes before it allocates; *n and *r: the number of indices and their rank. */
static bool check_inputs(tfd_kernel *k, tfd_kernel_context *c, int64_t *n, int64_t *r) {
  tfd_tensor *ix = c->inputs[0], *shape = c->inputs[1], *vals = c->inputs[2], *def = c->inputs[3];
  char text[TFD_SHAPE_TEXT_CAP];
  if (!tfd_kernel_check_index(c, k, ix, "sparse_indices") || !tfd_kernel_check_index(c, k, shape, "output_shape"))
    return false;
  if (tfd_tensor_ndims(ix) > 2) {
    tfd_tensor_shape_text(text, sizeof text, ix, 0);
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "sparse_indices should be a scalar, vector, or matrix, got shape %s", text);
    return false;
  }
  *n = tfd_tensor_ndims(ix) > 0 ? tfd_tensor_dim(ix, 0) : 1;
  *r = tfd_tensor_ndims(ix) > 1 ? tfd_tensor_dim(ix, 1) : 1;
  if (tfd_tensor_ndims(shape) != 1) {
    tfd_tensor_shape_text(text, sizeof text, shape, 0);
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "output_shape should be a vector, got shape %s", text);
    return false;
  }
  if (tfd_tensor_numel(shape) != *r) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "output_shape has incorrect number of elements: %lld should be: %lld",
                    (long long)tfd_tensor_numel(shape), (long long)*r);
    return false;
  }
  if (!(tfd_tensor_ndims(vals) == 0 || (tfd_tensor_ndims(vals) == 1 && tfd_tensor_numel(vals) == *n))) {
    tfd_tensor_shape_text(text, sizeof text, vals, 0);
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "sparse_values has incorrect shape %s, should be [] or [%lld]", text,
                    (long long)*n);
    return false;
  }
  if (tfd_tensor_ndims(def) != 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "default_value should be a scalar.");
    return false;
  }
  if (tfd_tensor_dtype(def) != tfd_tensor_dtype(vals)) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "default_value is %s but sparse_values is %s",
                    tfd_dtype_name(tfd_tensor_dtype(def)), tfd_dtype_name(tfd_tensor_dtype(vals)));
    return false;
  }
  return true;
}

/* Index i's coordinates in at[]; -1 where it is in bounds and ordered (validate: TensorFlow's
 * SparseTensor::IndicesValid texts), else an error was reported. Returns its row-major offset. */
static int64_t locate(tfd_kernel *k, tfd_kernel_context *c, const tfd_tensor *ix, int64_t i, int r, const int64_t *dims,
                      bool validate, int64_t *prev, int64_t *at) {
  char a[TFD_SHAPE_TEXT_CAP], b[TFD_SHAPE_TEXT_CAP];
  int64_t offset = 0;
  bool out = false;
  for (int d = 0; d < r; d++) {
    at[d] = tfd_tensor_get_index(ix, i * r + d);
    out |= at[d] < 0 || at[d] >= dims[d];
    offset = offset * dims[d] + at[d];
  }
  if (out) {
    tfd_shape_text(a, sizeof a, at, r);
    tfd_shape_text(b, sizeof b, dims, r);
    if (validate)
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "indices[%lld] = %s is out of bounds: need 0 <= index < %s", (long long)i,
                      a, b);
    else
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Indices are not valid (out of bounds).  Shape: %s", b);
    return -1;
  }
  if (validate && i > 0) {
    int order = 0;
    for (int d = 0; d < r && order == 0; d++) order = at[d] < prev[d] ? -1 : at[d] > prev[d];
    if (order <= 0) {
      tfd_shape_text(a, sizeof a, at, r);
      if (order < 0)
        tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                        "indices[%lld] = %s is out of order. Many sparse ops require sorted indices.\n"
                        "    Use `tf.sparse.reorder` to create a correctly ordered copy.\n\n",
                        (long long)i, a);
      else
        tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "indices[%lld] = %s is repeated", (long long)i, a);
      return -1;
    }
  }
  memcpy(prev, at, (size_t)r * sizeof *at);
  return offset;
}

bool tfd_sparse_to_dense_plan(tfd_kernel_context *c, tfd_kernel *k, tfd_scatter_plan *p) {
  memset(p, 0, sizeof *p);
  int64_t n, r;
  if (!check_inputs(k, c, &n, &r) || !tfd_shape_input(c, k, 1, p->dims, &p->nd)) return false;
  tfd_tensor *ix = tfd_kernel_host_input(c, k, 0);
  if (!ix) return false;
  p->slice = 1;
  p->slots = malloc((size_t)(n > 0 ? n : 1) * sizeof *p->slots);
  bool ok = p->slots != NULL, validate = k->keep_dims;
  if (!ok) tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory for %lld indices", (long long)n);
  int64_t prev[TFD_MAX_DIMS], at[TFD_MAX_DIMS];
  for (int64_t i = 0; ok && i < n; i++) ok = (p->slots[i] = locate(k, c, ix, i, (int)r, p->dims, validate, prev, at)) >= 0;
  tfd_tensor_unref(ix);
  if (!ok) {
    tfd_scatter_plan_free(p);
    return false;
  }
  p->n = n;
  return true;
}

static void k_sparse_to_dense(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_scatter_plan p;
  if (!tfd_sparse_to_dense_plan(c, k, &p)) return;
  tfd_tensor *vals = c->inputs[2];
  tfd_dtype dt = tfd_tensor_dtype(vals);
  tfd_tensor *o = tfd_kernel_alloc(c, k, dt, p.dims, p.nd);
  if (!o) {
    tfd_scatter_plan_free(&p);
    return;
  }
  size_t esz = tfd_dtype_size(dt);
  int64_t total = tfd_tensor_numel(o);
  char *dst = tfd_tensor_data(o);
  const char *src = tfd_tensor_const_data(vals), *def = tfd_tensor_const_data(c->inputs[3]);
  if (total > 0) { /* the default by doubling copies */
    memcpy(dst, def, esz);
    for (int64_t have = 1; have < total; have *= 2)
      memcpy(dst + (size_t)have * esz, dst, (size_t)(have * 2 <= total ? have : total - have) * esz);
  }
  bool scalar = tfd_tensor_ndims(vals) == 0;
  for (int64_t i = 0; i < p.n; i++) memcpy(dst + (size_t)p.slots[i] * esz, src + (scalar ? 0 : (size_t)i * esz), esz);
  tfd_scatter_plan_free(&p);
  c->outputs[0] = o;
}

tfd_code tfd_setup_sparse_to_dense(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  (void)st;
  k->keep_dims = tfd_attr_bool(init->node, "validate_indices", true);
  k->compute = k_sparse_to_dense;
  return TFD_OK;
}
