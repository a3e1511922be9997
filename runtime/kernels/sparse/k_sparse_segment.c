/* SparseSegmentSum, SparseSegmentMean, SparseSegmentSqrtN and their WithNumSegments forms, as
 * TensorFlow's CPU kernel (SparseSegmentReductionOpBase): row i of the output reduces the rows
 * data[indices[j]] of every j with segment_ids[j] == i. The segment ids must be sorted; the output
 * has last id + 1 rows (num_segments with the WithNumSegments forms), and a segment no id names is
 * 0. The checks run in TensorFlow's order, so the first fault found is the one TensorFlow reports. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../kernel.h"
#include "../kernel_shared.h"
#include "../array/scatter_logic.h"

enum { SEG_SUM, SEG_MEAN, SEG_SQRTN };

typedef struct {
  const char *data;
  char *out;
  int64_t cols;
  const tfd_tensor *ix;
} seg_args;

/* Reduces the rows ix[start, start + num) (checked by the plan) into output row `row`. Sums run in T
 * as TensorFlow's do (integers wrap, so they add as unsigned); Mean and SqrtN scale by 1/n below 10
 * rows and divide from 10 on, as TensorFlow's ReduceImpl does, so the last bits agree. */
#define SEG_REDUCE(NAME, T, ACC)                                                                          \
  static void NAME(const seg_args *a, int64_t row, int64_t start, int64_t num, int kind) {             \
    const T *in = (const T *)a->data;                                                                   \
    T *o = (T *)a->out + row * a->cols;                                                                 \
    for (int64_t j = 0; j < num; j++) {                                                                 \
      const T *src = in + tfd_tensor_get_index(a->ix, start + j) * a->cols;                             \
      if (j == 0) memcpy(o, src, (size_t)a->cols * sizeof(T));                                          \
      else                                                                                              \
        for (int64_t k = 0; k < a->cols; k++) o[k] = (T)((ACC)o[k] + (ACC)src[k]);                     \
    }                                                                                                   \
    if (kind != SEG_SUM && num > 1) {                                                                   \
      T n = kind == SEG_MEAN ? (T)num : (T)sqrt((double)num);                                           \
      if (num < 10) {                                                                                   \
        T scale = (T)1 / n;                                                                             \
        for (int64_t k = 0; k < a->cols; k++) o[k] = o[k] * scale;                                      \
      } else                                                                                            \
        for (int64_t k = 0; k < a->cols; k++) o[k] = o[k] / n;                                          \
    }                                                                                                   \
  }
SEG_REDUCE(reduce_f32, float, float)
SEG_REDUCE(reduce_f64, double, double)
SEG_REDUCE(reduce_i32, int32_t, uint32_t)
SEG_REDUCE(reduce_i64, int64_t, uint64_t)
SEG_REDUCE(reduce_u8, uint8_t, uint8_t)

/* scatter_logic.h. Every check in TensorFlow's order: the inputs' shapes, then segment by segment its
 * id (sorted, in range) and its indices (in data's rows). */
bool tfd_sparse_segment_plan(tfd_kernel_context *c, const tfd_kernel *k, const tfd_tensor *data, const tfd_tensor *ix,
                             const tfd_tensor *seg, const tfd_tensor *ns, tfd_scatter_plan *p) {
  memset(p, 0, sizeof *p);
  bool with_num = k->keep_dims;
  char text[TFD_SHAPE_TEXT_CAP];
  int64_t rows = -1;
  if (!tfd_kernel_check_index(c, k, ix, "indices") || !tfd_kernel_check_index(c, k, seg, "segment_ids")) return false;
  if (with_num) {
    if (!tfd_kernel_check_index(c, k, ns, "num_segments")) return false;
    if (tfd_tensor_ndims(ns) != 0) {
      tfd_tensor_shape_text(text, sizeof text, ns, 0);
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "num_segments should be a scalar, not shape %s", text);
      return false;
    }
    rows = tfd_tensor_get_index(ns, 0);
    if (rows < 0) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "segment ids must be >= 0");
      return false;
    }
  }
  if (tfd_tensor_ndims(ix) != 1) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "indices should be a vector.");
    return false;
  }
  if (tfd_tensor_ndims(seg) != 1) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "segment_ids should be a vector.");
    return false;
  }
  int64_t n = tfd_tensor_numel(ix);
  if (n != tfd_tensor_numel(seg)) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "segment_ids and indices should have same size.");
    return false;
  }
  if (tfd_tensor_ndims(data) < 1) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "data must be at least rank 1, got shape []");
    return false;
  }
  /* The last id + 1 in int64 (TensorFlow's SegmentId arithmetic; an int64 id at its limit is refused
   * rather than wrapped). */
  int64_t last = n > 0 ? tfd_tensor_get_index(seg, n - 1) : -1;
  int64_t last_plus_one = last == INT64_MAX ? INT64_MAX : last + 1;
  if (with_num) {
    if (rows < last_plus_one) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "segment ids must be < num_segments");
      return false;
    }
  } else if (last == INT64_MAX) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "segment id %lld is too large", (long long)last);
    return false;
  } else {
    rows = last_plus_one;
  }
  if (rows < 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "segment ids must be >= 0");
    return false;
  }
  p->nd = tfd_tensor_ndims(data);
  for (int d = 0; d < p->nd; d++) p->dims[d] = tfd_tensor_dim(data, d);
  p->dims[0] = rows;
  p->slice = tfd_dims_product(data, 1, p->nd);
  if (n == 0) return true;
  if (rows == 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "segment ids must be >= 0");
    return false;
  }
  if (!(p->slots = malloc((size_t)n * sizeof *p->slots))) {
    tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory");
    return false;
  }
  int64_t rows_in = tfd_tensor_dim(data, 0), start = 0, end = 1, id = tfd_tensor_get_index(seg, 0);
  for (;;) {
    int64_t next = 0;
    if (end < n) {
      next = tfd_tensor_get_index(seg, end);
      if (next == id) {
        end++;
        continue;
      }
      if (id > next) {
        tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "segment ids are not increasing");
        break;
      }
    }
    if (id < 0 || id >= rows) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                      "Segment id %lld out of range [0, %lld), possibly because 'segment_ids' input is not sorted.",
                      (long long)id, (long long)rows);
      break;
    }
    for (int64_t j = start; j < end; j++) {
      int64_t r = tfd_tensor_get_index(ix, j);
      if (r < 0 || r >= rows_in) {
        tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Bad: indices[%lld] == %lld out of range [0, %lld)", (long long)j,
                        (long long)r, (long long)rows_in);
        tfd_scatter_plan_free(p);
        return false;
      }
      p->slots[j] = id;
    }
    start = end;
    end++;
    id = next;
    if (end > n) {
      p->n = n;
      return true;
    }
  }
  tfd_scatter_plan_free(p);
  return false;
}

static void k_sparse_segment(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *data = c->inputs[0];
  tfd_scatter_plan p;
  if (!tfd_sparse_segment_plan(c, k, data, c->inputs[1], c->inputs[2], k->keep_dims ? c->inputs[3] : NULL, &p)) return;
  void (*reduce)(const seg_args *, int64_t, int64_t, int64_t, int) = NULL;
  switch (tfd_tensor_dtype(data)) {
    case TFD_FLOAT32: reduce = reduce_f32; break;
    case TFD_FLOAT64: reduce = reduce_f64; break;
    case TFD_INT32: reduce = reduce_i32; break;
    case TFD_INT64: reduce = reduce_i64; break;
    case TFD_UINT8: reduce = reduce_u8; break;
    default:
      tfd_scatter_plan_free(&p);
      tfd_kernel_fail(c, k, TFD_UNIMPLEMENTED, "data of %s is not supported", tfd_dtype_name(tfd_tensor_dtype(data)));
      return;
  }
  tfd_tensor *o = tfd_kernel_alloc(c, k, tfd_tensor_dtype(data), p.dims, p.nd);
  if (o) {
    size_t bytes = (size_t)tfd_tensor_numel(o) * tfd_dtype_size(tfd_tensor_dtype(data));
    if (bytes) memset(tfd_tensor_data(o), 0, bytes); /* empty segments are 0, every dtype's zero bits */
    seg_args a = {tfd_tensor_const_data(data), tfd_tensor_data(o), p.slice, c->inputs[1]};
    for (int64_t start = 0, end; start < p.n; start = end) { /* runs of one id */
      for (end = start + 1; end < p.n && p.slots[end] == p.slots[start]; end++) {
      }
      reduce(&a, p.slots[start], start, end - start, k->code & 3);
    }
    c->outputs[0] = o;
  }
  tfd_scatter_plan_free(&p);
}

tfd_code tfd_setup_sparse_segment(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  (void)st;
  const char *op = init->op->name;
  k->code = strstr(op, "Mean") ? SEG_MEAN : strstr(op, "SqrtN") ? SEG_SQRTN : SEG_SUM;
  k->keep_dims = strstr(op, "WithNumSegments") != NULL;
  k->compute = k_sparse_segment;
  return TFD_OK;
}
