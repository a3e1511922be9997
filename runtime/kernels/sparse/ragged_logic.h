/* The host half of RaggedGather and RaggedTensorToTensor, which the CPU kernels (k_ragged.c) and the
 * device kernels (dk_ragged.c) share: TensorFlow's checks and texts, and where every value goes. The
 * inputs are given as an array in the op's order whose row splits, row partitions, indices and shapes
 * the host can read (a CPU kernel's own inputs; a device kernel's host copies); of the values only the
 * shape is read, and of the default value (RaggedTensorToTensor) its elements. */
#ifndef TFDEV_RUNTIME_RAGGED_LOGIC_H
#define TFDEV_RUNTIME_RAGGED_LOGIC_H

#include "../kernel.h"

/* RaggedGather: the output splits (nsplits int64 vectors) and the value rows to copy, as [start,
 * limit) pairs of rows of the values in output order (total rows in all). */
typedef struct tfd_ragged_gather_plan {
  int nsplits;
  int64_t *splits[TFD_MAX_OP_OUTPUTS], nsplit[TFD_MAX_OP_OUTPUTS];
  int64_t *slices, nslices; /* 2 * pairs entries */
  int64_t total;
} tfd_ragged_gather_plan;
/* False with the error reported (nothing to free); else the caller frees with _free. */
bool tfd_ragged_gather_plan_make(tfd_kernel *k, tfd_kernel_context *c, tfd_tensor *const *in, tfd_ragged_gather_plan *p);
void tfd_ragged_gather_plan_free(tfd_ragged_gather_plan *p);

/* RaggedTensorToTensor: the output's shape; each value row's output cell (index[i], in cells of
 * cell_elems elements; -1 where the row is cut off); one cell of the default value broadcast (cell_elems
 * elements of the values' dtype, malloc'ed). total 0: an empty output, nothing else set. */
typedef struct tfd_ragged_to_tensor_plan {
  int nd;
  int64_t dims[TFD_MAX_DIMS], total, cell_elems, cells;
  int64_t *index, nindex;
  void *cell;
} tfd_ragged_to_tensor_plan;
bool tfd_ragged_to_tensor_plan_make(tfd_kernel *k, tfd_kernel_context *c, tfd_tensor *const *in, tfd_ragged_to_tensor_plan *p);
void tfd_ragged_to_tensor_plan_free(tfd_ragged_to_tensor_plan *p);

#endif
