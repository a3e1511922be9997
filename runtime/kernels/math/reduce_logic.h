/* The argument checks and output shapes of the reductions, which their CPU kernels (k_reduce.c, and
 * k_gather.c for the index-picking ones) and device kernels (dk_reduce.c) share: Sum, Mean, Max, Min
 * and Prod over axes, ArgMax and ArgMin along one, TopKV2 over the last. Axis inputs are read on the
 * host (tfd_kernel_host_input); false with the error reported against the node. */
#ifndef TFDEV_RUNTIME_REDUCE_LOGIC_H
#define TFDEV_RUNTIME_REDUCE_LOGIC_H

#include "../kernel.h"

/* Sum, Mean, Max, Min, Prod (input, reduction_indices; k->keep_dims): which of the input's
 * dimensions are reduced, the output's dims (*ond of them), and *count, the elements each output
 * element reduces (0 when a reduced dimension is; INT64_MAX past int64, which only an empty output
 * allows). `needs_elements` refuses an empty reduction, naming the op (no reduction needs it since
 * Max and Min give their identity, as TensorFlow does). */
bool tfd_reduce_shape(tfd_kernel_context *c, const tfd_kernel *k, bool needs_elements, bool *reduce, int64_t *odims, int *ond,
                      int64_t *count);

/* ArgMax, ArgMin (input, dimension): the axis normalised, and the output's dims, the input's without
 * it (rank - 1 of them). */
bool tfd_arg_shape(tfd_kernel_context *c, const tfd_kernel *k, int64_t *axis, int64_t *dims);
/* Checked once the output is known not to be empty: the axis has elements, as many as k->dst (the
 * output_type) can index. */
bool tfd_arg_check_count(tfd_kernel_context *c, const tfd_kernel *k, int64_t axis);

/* TopKV2 (input, k; index_type in k->dst): k, and the outputs' dims (the input's, the last k). */
bool tfd_top_k_shape(tfd_kernel_context *c, const tfd_kernel *k, int64_t *kk, int64_t *dims);

/* The value Max (max) or Min of no elements is, as Eigen's reducers start from it: -inf / +inf for
 * floats, the lowest / highest integer; written into value (16 bytes); false for another dtype. */
bool tfd_reduce_identity(tfd_dtype dt, bool max, void *value);

/* LRN (k_count_norm.c): the attributes its setup keeps in k->state (depth_radius in k->index), and
 * TensorFlow's check of the input's rank (false, reported, unless 4). */
typedef struct tfd_lrn_params {
  double bias, alpha, beta;
} tfd_lrn_params;
bool tfd_lrn_check(tfd_kernel_context *c, const tfd_kernel *k);

#endif
