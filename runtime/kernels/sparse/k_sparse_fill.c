/* SparseFillEmptyRows and SparseReshape, as TensorFlow's CPU kernels (sparse_fill_empty_rows_op.cc,
 * reshape_util.cc): both read a SparseTensor as int64 indices [N, R] and an int64 dense shape.
 * SparseFillEmptyRows gives every row of the dense shape's first dimension at least one entry (the
 * default value at column 0 of an empty row), keeping each row's entries in their order, and says
 * which rows were empty and where each input entry went; SparseReshape moves each index to its place
 * in a new dense shape, one -1 in which stands for what the rest leaves. Errors are TensorFlow's texts
 * in TensorFlow's order. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/checked.h"
#include "../kernel.h"
#include "../kernel_shared.h"

/* Whether input i is int64 (the op's signature says so; a fed tensor could still be another). */
static bool need_int64(tfd_kernel_context *c, const tfd_kernel *k, int i, const char *what) {
  tfd_dtype dt = tfd_tensor_dtype(c->inputs[i]);
  if (dt == TFD_INT64) return true;
  tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "%s must be int64, got %s", what, tfd_dtype_name(dt));
  return false;
}

/* A dense shape's element count, with TensorShape's texts for a negative size or an overflow. */
static bool dense_count(tfd_kernel_context *c, const tfd_kernel *k, const int64_t *dims, int64_t nd, int64_t *count) {
  int64_t n = 1;
  for (int64_t d = 0; d < nd; d++)
    if (dims[d] < 0) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Expected shape dimensions to be non-negative, got %lld",
                      (long long)dims[d]);
      return false;
    }
  for (int64_t d = 0; d < nd; d++)
    if (!tfd_checked_mul(n, dims[d], &n)) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Encountered overflow when multiplying %lld with %lld, result: -1",
                      (long long)n, (long long)dims[d]);
      return false;
    }
  *count = n;
  return true;
}

/* ---- SparseFillEmptyRows ---- */

static void k_fill_empty_rows(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *ix = c->inputs[0], *vals = c->inputs[1], *shape = c->inputs[2], *def = c->inputs[3];
  char text[TFD_SHAPE_TEXT_CAP];
  if (!need_int64(c, k, 0, "indices") || !need_int64(c, k, 2, "dense_shape")) return;
  if (tfd_tensor_ndims(shape) != 1) {
    tfd_tensor_shape_text(text, sizeof text, shape, 0);
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "dense_shape must be a vector, saw: %s", text);
    return;
  }
  if (tfd_tensor_ndims(ix) != 2) {
    tfd_tensor_shape_text(text, sizeof text, ix, 0);
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "indices must be a matrix, saw: %s", text);
    return;
  }
  if (tfd_tensor_ndims(vals) != 1) {
    tfd_tensor_shape_text(text, sizeof text, vals, 0);
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "values must be a vector, saw: %s", text);
    return;
  }
  int64_t n = tfd_tensor_dim(ix, 0), rank = tfd_tensor_dim(ix, 1);
  if (n != tfd_tensor_dim(vals, 0)) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                    "The length of `values` (%lld) must match the first dimension of `indices` (%lld).",
                    (long long)tfd_tensor_dim(vals, 0), (long long)n);
    return;
  }
  if (tfd_tensor_ndims(def) != 0) {
    tfd_tensor_shape_text(text, sizeof text, def, 0);
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "default_value must be a scalar, saw: %s", text);
    return;
  }
  if (tfd_tensor_numel(shape) == 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Dense shape cannot be empty.");
    return;
  }
  if (tfd_tensor_dtype(def) != tfd_tensor_dtype(vals)) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "default_value is %s but values is %s",
                    tfd_dtype_name(tfd_tensor_dtype(def)), tfd_dtype_name(tfd_tensor_dtype(vals)));
    return;
  }
  /* TensorFlow reads column 0 of every index without asking whether there is one. */
  if (rank == 0 && n > 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "indices has no columns but %lld entries", (long long)n);
    return;
  }
  const int64_t *in_ix = tfd_tensor_const_data(ix);
  int64_t rows = ((const int64_t *)tfd_tensor_const_data(shape))[0];
  if (rows < 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Expected shape dimensions to be non-negative, got %lld", (long long)rows);
    return;
  }
  tfd_dtype dt = tfd_tensor_dtype(vals);
  size_t esz = tfd_dtype_size(dt);
  tfd_tensor *empty_rows = tfd_kernel_alloc(c, k, TFD_BOOL, &rows, 1);
  tfd_tensor *reverse = empty_rows ? tfd_kernel_alloc(c, k, TFD_INT64, &n, 1) : NULL;
  tfd_tensor *out_ix = NULL, *out_vals = NULL;
  int64_t *offset = NULL, *filled = NULL;
  if (!reverse) goto fail;
  if (rows == 0) {
    if (n != 0) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                      "Received SparseTensor with dense_shape[0] = 0 but indices.shape[0] = %lld", (long long)n);
      goto fail;
    }
    int64_t d0[2] = {0, rank}, z = 0;
    out_ix = tfd_kernel_alloc(c, k, TFD_INT64, d0, 2);
    out_vals = out_ix ? tfd_kernel_alloc(c, k, dt, &z, 1) : NULL;
    if (!out_vals) goto fail;
    goto done;
  }
  /* offset[r]: entries of rows 0..r once every row has at least one (TensorFlow's csr_offset). */
  offset = calloc((size_t)rows, sizeof *offset);
  filled = calloc((size_t)rows, sizeof *filled);
  if (!offset || !filled) {
    tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory for %lld rows", (long long)rows);
    goto fail;
  }
  bool ordered = true, all_full = true;
  int64_t last_row = 0;
  for (int64_t i = 0; i < n; i++) {
    int64_t row = in_ix[i * rank];
    if (row < 0 || row >= rows) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "indices(%lld, 0) is invalid: %lld >= %lld", (long long)i,
                      (long long)row, (long long)rows);
      goto fail;
    }
    offset[row]++;
    ordered = ordered && row >= last_row;
    last_row = row;
  }
  bool *empty = tfd_tensor_data(empty_rows);
  for (int64_t r = 0; r < rows; r++) {
    empty[r] = offset[r] == 0;
    all_full = all_full && !empty[r];
    if (offset[r] == 0) offset[r] = 1;
    if (r > 0) offset[r] += offset[r - 1];
  }
  int64_t *rev = tfd_tensor_data(reverse);
  if (all_full && ordered) { /* nothing moves: the inputs are the outputs */
    out_ix = tfd_tensor_ref(ix);
    out_vals = tfd_tensor_ref(vals);
    for (int64_t i = 0; i < n; i++) rev[i] = i;
    goto done;
  }
  int64_t full = offset[rows - 1], d2[2] = {full, rank};
  out_ix = tfd_kernel_alloc(c, k, TFD_INT64, d2, 2);
  out_vals = out_ix ? tfd_kernel_alloc(c, k, dt, &full, 1) : NULL;
  if (!out_vals) goto fail;
  int64_t *oix = tfd_tensor_data(out_ix);
  char *ov = tfd_tensor_data(out_vals);
  const char *iv = tfd_tensor_const_data(vals);
  for (int64_t i = 0; i < n; i++) {
    int64_t row = in_ix[i * rank], at = (row == 0 ? 0 : offset[row - 1]) + filled[row]++;
    memcpy(oix + at * rank, in_ix + i * rank, (size_t)rank * sizeof *oix);
    memcpy(ov + (size_t)at * esz, iv + (size_t)i * esz, esz);
    rev[i] = at;
  }
  for (int64_t r = 0; r < rows; r++)
    if (filled[r] == 0) {
      int64_t at = r == 0 ? 0 : offset[r - 1];
      oix[at * rank] = r;
      for (int64_t col = 1; col < rank; col++) oix[at * rank + col] = 0;
      memcpy(ov + (size_t)at * esz, tfd_tensor_const_data(def), esz);
    }
done:
  free(offset);
  free(filled);
  c->outputs[0] = out_ix;
  c->outputs[1] = out_vals;
  c->outputs[2] = empty_rows;
  c->outputs[3] = reverse;
  return;
fail:
  free(offset);
  free(filled);
  if (out_ix) tfd_tensor_unref(out_ix);
  if (out_vals) tfd_tensor_unref(out_vals);
  if (empty_rows) tfd_tensor_unref(empty_rows);
  if (reverse) tfd_tensor_unref(reverse);
}

/* ---- SparseReshape ---- */

bool tfd_sparse_reshape_plan(tfd_kernel_context *c, const tfd_kernel *k, const tfd_tensor *ix, const tfd_tensor *in_shape,
                             const tfd_tensor *new_shape, tfd_sparse_reshape *p) {
  char text[TFD_SHAPE_TEXT_CAP], text2[TFD_SHAPE_TEXT_CAP];
  if (!need_int64(c, k, 0, "input_indices") || !need_int64(c, k, 1, "input_shape") ||
      !need_int64(c, k, 2, "new_shape"))
    return false;
  if (tfd_tensor_ndims(ix) != 2) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Input must be a matrix.");
    return false;
  }
  if (tfd_tensor_ndims(in_shape) != 1) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Input shape must be a vector.");
    return false;
  }
  if (tfd_tensor_dim(ix, 1) != tfd_tensor_dim(in_shape, 0)) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Input tensor rank must match input shape length.");
    return false;
  }
  if (tfd_tensor_ndims(new_shape) != 1) {
    tfd_tensor_shape_text(text, sizeof text, new_shape, 0);
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Target shape should be a vector but received shape %s", text);
    return false;
  }
  int64_t in_rank = tfd_tensor_numel(in_shape), out_rank = tfd_tensor_numel(new_shape), nnz = tfd_tensor_dim(ix, 0);
  if (in_rank > TFD_MAX_DIMS || out_rank > TFD_MAX_DIMS) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "shapes of more than %d dimensions are not supported", TFD_MAX_DIMS);
    return false;
  }
  const int64_t *in_dims = tfd_tensor_const_data(in_shape), *want = tfd_tensor_const_data(new_shape);
  int64_t dense, product = 1, *out_dims = p->out_dims;
  if (!dense_count(c, k, in_dims, in_rank, &dense)) return false;
  int unknown = -1;
  for (int d = 0; d < (int)out_rank; d++) {
    int64_t size = want[d];
    if (size == -1) {
      if (unknown != -1) {
        tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "only one output dimension may be -1, not both %d and %d", unknown, d);
        return false;
      }
      unknown = d;
      out_dims[d] = 1;
    } else {
      if (size < 0) {
        tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "size %d must be non-negative, not %lld", d, (long long)size);
        return false;
      }
      if (!tfd_checked_mul(product, size, &product)) {
        tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Encountered overflow when multiplying %lld with %lld, result: -1",
                        (long long)product, (long long)size);
        return false;
      }
      out_dims[d] = size;
    }
  }
  tfd_shape_text(text, sizeof text, in_dims, (int)in_rank);
  if (unknown != -1) {
    if (product <= 0) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                      "reshape cannot infer the missing input size for an empty tensor unless all specified input "
                      "sizes are non-zero");
      return false;
    }
    int64_t missing = dense / product;
    if (product * missing != dense) {
      tfd_shape_text(text2, sizeof text2, out_dims, (int)out_rank);
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                      "Input to reshape is a SparseTensor with %lld dense values, but the requested shape requires a "
                      "multiple of %lld. input_shape=%s output_shape=%s",
                      (long long)dense, (long long)product, text, text2);
      return false;
    }
    out_dims[unknown] = missing;
  }
  tfd_shape_text(text2, sizeof text2, out_dims, (int)out_rank);
  int64_t out_count = unknown != -1 ? dense : product;
  if (out_count != dense) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                    "Input to reshape is a tensor with %lld dense values, but the requested shape has %lld. "
                    "input_shape=%s output_shape=%s",
                    (long long)dense, (long long)out_count, text, text2);
    return false;
  }
  p->nnz = nnz;
  p->in_rank = in_rank;
  p->out_rank = out_rank;
  p->same = in_rank == out_rank;
  for (int d = 0; p->same && d < (int)in_rank; d++) p->same = in_dims[d] == out_dims[d];
  if (!p->same && nnz > 0 && !(dense > 0 && product > 0)) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                    "Input tensor has %lld non zero elements but input shape (%s) or output shape (%s) is empty",
                    (long long)nnz, text, text2);
    return false;
  }
  /* Strides of both shapes; with entries every size is at least 1, so no stride is 0 and none overflows. */
  for (int64_t d = in_rank - 1, st = 1; d >= 0; st *= in_dims[d] ? in_dims[d] : 1, d--) p->in_stride[d] = st;
  for (int64_t d = out_rank - 1, st = 1; d >= 0; st *= out_dims[d] ? out_dims[d] : 1, d--) p->out_stride[d] = st;
  return true;
}

static void k_sparse_reshape(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *ix = c->inputs[0], *in_shape = c->inputs[1];
  tfd_sparse_reshape p;
  if (!tfd_sparse_reshape_plan(c, k, ix, in_shape, c->inputs[2], &p)) return;
  if (p.same) { /* TensorFlow hands its inputs on */
    c->outputs[0] = tfd_tensor_ref(ix);
    c->outputs[1] = tfd_tensor_ref(in_shape);
    return;
  }
  int64_t d2[2] = {p.nnz, p.out_rank};
  tfd_tensor *oshape = tfd_kernel_alloc(c, k, TFD_INT64, &p.out_rank, 1);
  tfd_tensor *oix = oshape ? tfd_kernel_alloc(c, k, TFD_INT64, d2, 2) : NULL;
  if (!oix) {
    if (oshape) tfd_tensor_unref(oshape);
    return;
  }
  if (p.out_rank) memcpy(tfd_tensor_data(oshape), p.out_dims, (size_t)p.out_rank * sizeof *p.out_dims);
  const int64_t *src = tfd_tensor_const_data(ix);
  int64_t *dst = tfd_tensor_data(oix);
  for (int64_t i = 0; i < p.nnz; i++) {
    /* TensorFlow does not check the indices against the shape; an index outside it lands where its
     * arithmetic (wrapping here, never undefined) puts it. */
    uint64_t at = 0;
    for (int64_t j = 0; j < p.in_rank; j++) at += (uint64_t)src[i * p.in_rank + j] * (uint64_t)p.in_stride[j];
    int64_t id = (int64_t)at;
    for (int64_t j = 0; j < p.out_rank; j++) {
      dst[i * p.out_rank + j] = id / p.out_stride[j];
      id %= p.out_stride[j];
    }
  }
  c->outputs[0] = oix;
  c->outputs[1] = oshape;
}

tfd_code tfd_setup_sparse_fill(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  (void)st;
  k->compute = strcmp(init->op->name, "SparseReshape") == 0 ? k_sparse_reshape : k_fill_empty_rows;
  return TFD_OK;
}
