/* The checks and index arithmetic ScatterNd, TensorScatterUpdate, SparseToDense, the sparse segment reductions and Bincount share between their CPU kernels
 * (k_scatter.c, which implements these beside its other scatter checks) and their device kernels
 * (dk_scatter.c): every index checked on the host with TensorFlow's texts and turned into the row
 * ("slot") of the [numel / slice, slice] view of the output it names. */
#ifndef TFDEV_RUNTIME_SCATTER_LOGIC_H
#define TFDEV_RUNTIME_SCATTER_LOGIC_H

#include <stdbool.h>
#include <stdint.h>

#include "../kernel.h"

typedef struct tfd_scatter_plan {
  int64_t dims[TFD_MAX_DIMS]; /* the output's */
  int nd;
  int64_t slice;  /* elements per update */
  int64_t n;      /* updates (0 when the output is empty) */
  int64_t *slots; /* n output rows, malloc'd: freed by tfd_scatter_plan_free */
  int64_t *from;  /* Bincount: the element of weights each update takes (NULL otherwise; freed with slots) */
} tfd_scatter_plan;

/* ScatterNd (indices, updates, shape) and TensorScatterUpdate (tensor, indices, updates): false after
 * failing the kernel, with nothing to free; on success the caller frees the plan. */
bool tfd_scatter_nd_plan(tfd_kernel_context *c, const tfd_kernel *k, tfd_scatter_plan *p);
bool tfd_tensor_scatter_plan(tfd_kernel_context *c, const tfd_kernel *k, tfd_scatter_plan *p);
/* SparseToDense (sparse_indices, output_shape, sparse_values, default_value; validate_indices in
 * k->keep_dims), implemented in k_sparse_to_dense.c: slice 1, a slot per index (repeats allowed only
 * without validation, the later one winning). */
bool tfd_sparse_to_dense_plan(tfd_kernel_context *c, tfd_kernel *k, tfd_scatter_plan *p);
/* SparseSegmentSum/Mean/SqrtN(WithNumSegments) (data, indices, segment_ids[, num_segments];
 * WithNumSegments in k->keep_dims), implemented in k_sparse_segment.c: dims the output's, slice the
 * elements per data row, n the indices, slots[j] the (sorted) segment of index j; every index and id
 * checked in TensorFlow's order. data is read for its shape only; the others on the host. */
bool tfd_sparse_segment_plan(tfd_kernel_context *c, const tfd_kernel *k, const tfd_tensor *data, const tfd_tensor *ix,
                             const tfd_tensor *seg, const tfd_tensor *ns, tfd_scatter_plan *p);
/* Bincount (arr, size, weights) and DenseBincount (input [N] or [B, N], size, weights; k->code 1,
 * binary_output in k->keep_dims), implemented in k_count_norm.c with TensorFlow's checks: dims the
 * output's ([size] or [B, size]), slice 1, n the elements that land in a bin (values past the last
 * bin are dropped), slots[u] their bin in the flat output, from[u] their element (for the weight).
 * arr and size are read on the host; weights for its shape only. */
bool tfd_bincount_plan(tfd_kernel_context *c, const tfd_kernel *k, const tfd_tensor *arr, const tfd_tensor *size,
                       const tfd_tensor *weights, tfd_scatter_plan *p);
/* LowerBound and UpperBound (sorted_inputs [B, N], values [B, M]; out_type in k->dst), implemented in
 * k_scatter.c: TensorFlow's shape checks; false, reported, when one fails. */
bool tfd_search_sorted_check(tfd_kernel_context *c, const tfd_kernel *k);
void tfd_scatter_plan_free(tfd_scatter_plan *p);

#endif
