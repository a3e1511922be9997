/* Sparse ops, as TensorFlow's core/ops/sparse_ops.cc and math_ops.cc defines them: SparseToDense, sparse segment
 * reductions, SparseFillEmptyRows and SparseReshape. Their definitions and shape functions. */
#include "common_shape_fns.h"

/* SparseToDense: output_shape's value when known, of sparse_values' dtype; the kernel checks the indices. */
static tfd_code infer_sparse_to_dense(tfd_infer_ctx *c, tfd_status *st) {
  if (tfd_infer_need_index(c, 0, "sparse_indices", st) != TFD_OK ||
      tfd_infer_need_index(c, 1, "output_shape", st) != TFD_OK || tfd_infer_same_types(c, 0, 1, st) != TFD_OK ||
      tfd_infer_same_types(c, 2, 3, st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  c->out_types[0] = c->in_types[2];
  return tfd_infer_shape_from_sizes(c, 1, &c->out_shapes[0], st);
}

static const tfd_attr_def attrs_sparse_to_dense[] = {
    A_T, {"Tindices", TFD_ATTR_TYPE, false, 0, 0, NULL}, {"validate_indices", TFD_ATTR_BOOL, false, 1, 0, NULL}, END};

/* SparseSegmentSum/Mean/SqrtN(WithNumSegments): TensorFlow's SparseSegmentReductionShapeFn, data's
 * shape with its first dimension unknown (num_segments' value, when known, for the WithNumSegments
 * forms); indices and segment_ids are vectors of one length. */
static tfd_code infer_sparse_segment(tfd_infer_ctx *c, tfd_status *st) {
  if (tfd_infer_need_index(c, 1, "indices", st) != TFD_OK || tfd_infer_need_index(c, 2, "segment_ids", st) != TFD_OK ||
      tfd_infer_need_rank(c, 1, 1, "indices", st) != TFD_OK ||
      tfd_infer_need_rank(c, 2, 1, "segment_ids", st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  const tfd_shape *d = &c->in_shapes[0], *ix = &c->in_shapes[1], *seg = &c->in_shapes[2];
  if (ix->ndims == 1 && seg->ndims == 1 && ix->dims[0] >= 0 && seg->dims[0] >= 0 && ix->dims[0] != seg->dims[0])
    return tfd_status_setf(
        st, TFD_INVALID_ARGUMENT,
        "node '%s' (%s): Dimensions must be equal, but are %lld and %lld for indices and segment_ids", node_name(c),
        tfd_node_def_op(c->node), (long long)ix->dims[0], (long long)seg->dims[0]);
  if (d->ndims == 0)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): Shape must be at least rank 1 but is rank 0",
                           node_name(c), tfd_node_def_op(c->node));
  c->out_types[0] = c->in_types[0];
  c->out_shapes[0] = *d;
  if (d->ndims < 0) return TFD_OK;
  c->out_shapes[0].dims[0] = -1;
  if (c->num_inputs == 4) {
    if (tfd_infer_need_index(c, 3, "num_segments", st) != TFD_OK ||
        tfd_infer_need_rank(c, 3, 0, "num_segments", st) != TFD_OK)
      return TFD_INVALID_ARGUMENT;
    const tfd_tensor *ns = c->in_values ? c->in_values[3] : NULL;
    if (ns && tfd_tensor_numel(ns) == 1 && tfd_tensor_get_index(ns, 0) >= 0)
      c->out_shapes[0].dims[0] = tfd_tensor_get_index(ns, 0);
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
      tfd_infer_same_types(c, 1, 3, st) != TFD_OK || tfd_infer_need_rank(c, 0, 2, "indices", st) != TFD_OK ||
      tfd_infer_need_rank(c, 1, 1, "values", st) != TFD_OK ||
      tfd_infer_need_rank(c, 2, 1, "dense_shape", st) != TFD_OK ||
      tfd_infer_need_rank(c, 3, 0, "default_value", st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  const tfd_shape *ix = &c->in_shapes[0];
  int64_t n = ix->ndims == 2 ? ix->dims[0] : -1, r = ix->ndims == 2 ? ix->dims[1] : -1;
  int64_t nv = vector_len(&c->in_shapes[1]), rs = vector_len(&c->in_shapes[2]);
  if (n >= 0 && nv >= 0 && n != nv)
    return tfd_status_setf(
        st, TFD_INVALID_ARGUMENT,
        "node '%s' (SparseFillEmptyRows): Dimensions must be equal, but are %lld and %lld for indices and values",
        node_name(c), (long long)n, (long long)nv);
  if (r >= 0 && rs >= 0 && r != rs)
    return tfd_status_setf(
        st, TFD_INVALID_ARGUMENT,
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
      need_int64(c, 2, "new_shape", st) != TFD_OK || tfd_infer_need_rank(c, 0, 2, "input_indices", st) != TFD_OK ||
      tfd_infer_need_rank(c, 1, 1, "input_shape", st) != TFD_OK ||
      tfd_infer_need_rank(c, 2, 1, "new_shape", st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  const tfd_shape *ix = &c->in_shapes[0];
  c->out_types[0] = c->out_types[1] = TFD_INT64;
  c->out_shapes[0] = (tfd_shape){.ndims = 2, .dims = {ix->ndims == 2 ? ix->dims[0] : -1, vector_len(&c->in_shapes[2])}};
  c->out_shapes[1] = (tfd_shape){.ndims = 1, .dims = {vector_len(&c->in_shapes[2])}};
  return TFD_OK;
}

static const tfd_attr_def attrs_sparse_segment[] = {
    A_T, {"Tidx", TFD_ATTR_TYPE, false, 0, 0, NULL}, {"Tsegmentids", TFD_ATTR_TYPE, false, 0, 0, NULL}, END};

static const tfd_attr_def attrs_sparse_segment_n[] = {A_T,
                                                      {"Tidx", TFD_ATTR_TYPE, false, 0, 0, NULL},
                                                      {"Tnumsegments", TFD_ATTR_TYPE, false, 0, 0, NULL},
                                                      {"Tsegmentids", TFD_ATTR_TYPE, false, 0, 0, NULL},
                                                      END};

/* One row per op: clang-format would give each field a line. */
/* clang-format off */
static const tfd_op_def sparse_ops[] = {
    {.name = "SparseToDense", .min_inputs = 4, .max_inputs = 4, .num_outputs = 1, .type_attr = "T", .type_input = 2,
     .allowed_types = ALL, .attrs = attrs_sparse_to_dense, .infer = infer_sparse_to_dense},
    {.name = "SparseSegmentSum", .min_inputs = 3, .max_inputs = 3, .num_outputs = 1, .type_attr = "T",
     .allowed_types = NUM | U8, .attrs = attrs_sparse_segment, .infer = infer_sparse_segment},
    {.name = "SparseSegmentMean", .min_inputs = 3, .max_inputs = 3, .num_outputs = 1, .type_attr = "T",
     .allowed_types = FLT, .attrs = attrs_sparse_segment, .infer = infer_sparse_segment},
    {.name = "SparseSegmentSqrtN", .min_inputs = 3, .max_inputs = 3, .num_outputs = 1, .type_attr = "T",
     .allowed_types = FLT, .attrs = attrs_sparse_segment, .infer = infer_sparse_segment},
    {.name = "SparseSegmentSumWithNumSegments", .min_inputs = 4, .max_inputs = 4, .num_outputs = 1, .type_attr = "T",
     .allowed_types = NUM | U8, .attrs = attrs_sparse_segment_n, .infer = infer_sparse_segment},
    {.name = "SparseSegmentMeanWithNumSegments", .min_inputs = 4, .max_inputs = 4, .num_outputs = 1, .type_attr = "T",
     .allowed_types = FLT, .attrs = attrs_sparse_segment_n, .infer = infer_sparse_segment},
    {.name = "SparseSegmentSqrtNWithNumSegments", .min_inputs = 4, .max_inputs = 4, .num_outputs = 1, .type_attr = "T",
     .allowed_types = FLT, .attrs = attrs_sparse_segment_n, .infer = infer_sparse_segment},
    {.name = "SparseFillEmptyRows", .min_inputs = 4, .max_inputs = 4, .num_outputs = 4, .type_attr = "T",
     .type_input = 1, .allowed_types = ALL, .attrs = tfd_attrs_t, .infer = infer_fill_empty_rows},
    {.name = "SparseReshape", .min_inputs = 3, .max_inputs = 3, .num_outputs = 2, .attrs = tfd_attrs_none,
     .infer = infer_sparse_reshape},
};
/* clang-format on */

const tfd_op_family tfd_sparse_ops = {"sparse", sparse_ops, (int)(sizeof sparse_ops / sizeof sparse_ops[0])};
