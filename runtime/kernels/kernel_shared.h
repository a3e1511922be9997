/* Host logic the CPU kernels and the device kernels (dk_*.c) share, so both read attributes and
 * check inputs the same way and say the same thing when they refuse: the fused_ops of
 * _FusedConv2D, _FusedDepthwiseConv2dNative and _FusedMatMul, and Prelu's alpha shapes. */
#ifndef TFDEV_RUNTIME_KERNEL_SHARED_H
#define TFDEV_RUNTIME_KERNEL_SHARED_H

#include "activation.h"
#include "kernel.h"

/* What a fused convolution applies after the convolution (k_conv.c's order): the bias or the batch
 * norm's scale and shift, the addend, then Prelu or act. */
typedef struct tfd_conv_fusion {
  bool bias, add, batch_norm, prelu;
  double epsilon; /* FusedBatchNorm's */
  tfd_activation act;
} tfd_conv_fusion;

/* The node's fused_ops ([BiasAdd], [BiasAdd, Add], [FusedBatchNorm], each optionally followed by an
 * activation or Prelu), checked against its num_inputs: UNIMPLEMENTED "Fusion is not implemented"
 * or INVALID_ARGUMENT naming the node and op. */
tfd_code tfd_conv_parse_fused(const tfd_node_def *node, const char *op, int num_inputs, tfd_conv_fusion *f,
                              tfd_status *status);

/* _FusedMatMul's fused_ops: BiasAdd, then at most one activation (*act). */
tfd_code tfd_matmul_parse_fused(const tfd_node_def *node, tfd_activation *act, tfd_status *status);

/* Prelu's alpha against an output of dims[nd]: float32, and, once its leading 1s are dropped, one
 * value or exactly the output's trailing dimensions; otherwise false with UNIMPLEMENTED (broadcasts
 * not implemented) or INVALID_ARGUMENT (shapes that do not broadcast) reported. *n is alpha's
 * element count. */
bool tfd_prelu_alpha_size(tfd_kernel_ctx *c, const tfd_kernel *k, const tfd_tensor *a, const int64_t *dims, int nd,
                          int64_t *n);

/* A scalar (or one-element) int axis input t, on the host, normalised into [0, rank); false with
 * INVALID_ARGUMENT naming `what` reported when it is not an index, not one element or out of range. */
bool tfd_kernel_read_axis(tfd_kernel_ctx *c, const tfd_kernel *k, const tfd_tensor *t, int rank, const char *what,
                          int64_t *axis);

/* "1,0": flat position i of a tensor shaped like t in its first `upto` dimensions (TensorFlow's index
 * notation in errors), written into buf. */
const char *tfd_index_coords(const tfd_tensor *t, int64_t i, int upto, char *buf, size_t cap);

/* AssignAddVariableOp's old + delta, made while the variable is locked: the CPU kernel adds on the
 * host; a device kernel puts an adder in tfd_kernel.dk_params that adds in device memory. NULL with
 * the error reported on failure. */
typedef struct tfd_variable_adder {
  tfd_tensor *(*add)(tfd_kernel *k, tfd_kernel_ctx *c, tfd_tensor *old, tfd_tensor *delta);
} tfd_variable_adder;

#endif
