/* The attributes, argument checks and output shapes of the convolutions and pools, which their CPU
 * kernels (k_conv.c, k_conv_generic.c, Conv2DBackpropInput of k_image.c) and device kernels
 * (dk_conv.c, dk_image.c) share: Conv2D, _FusedConv2D with its fusions, DepthwiseConv2dNative and
 * its fused forms, MaxPool, AvgPool and Conv2DBackpropInput, NHWC with TensorFlow's windows
 * (window.h). False (or an error code) with the error reported against the node; the arithmetic is
 * each kernel's own. */
#ifndef TFDEV_RUNTIME_CONV_LOGIC_H
#define TFDEV_RUNTIME_CONV_LOGIC_H

#include "activation.h"
#include "../kernel.h"
#include "window.h"

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

typedef enum tfd_conv_kind { TFD_CONV_2D, TFD_CONV_DEPTHWISE, TFD_CONV_MAXPOOL, TFD_CONV_AVGPOOL } tfd_conv_kind;

/* A convolution's or pool's attributes, as its setup reads them. */
typedef struct tfd_conv_attrs {
  tfd_conv_kind kind;
  bool fused; /* _FusedConv2D, _FusedDepthwiseConv2dNative, FusedDepthwiseConv2dNative */
  tfd_window_attrs win;
  int64_t ksize[2];  /* pools: the window's height and width */
  tfd_conv_fusion f; /* fused ops: what follows the convolution */
  double alpha;      /* convolutions: LeakyRelu's slope */
} tfd_conv_attrs;

/* The kind of op (one of the above), and whether it is a fused form. */
tfd_conv_kind tfd_conv_kind_of(const char *op);
bool tfd_conv_op_fused(const char *op);
/* Reads and checks the attributes of op at node (num_inputs: the node's, which the fusion fixes);
 * errors name the node and op. */
tfd_code tfd_conv_attrs_read(const tfd_node_def *node, const char *op, int num_inputs, tfd_conv_attrs *a,
                             tfd_status *status);

/* t is a float32 tensor of rank 4 (`what` names it). */
bool tfd_conv_check_nhwc(tfd_kernel_context *c, const tfd_kernel *k, const tfd_tensor *t, const char *what);
/* The checks of the plain ops on dtypes other than float32 (k_conv_generic.c's), before the dtype
 * itself: input x of rank 4 and, unless pooling (f NULL), filter f of rank 4 and x's dtype. */
bool tfd_conv_check_generic(tfd_kernel_context *c, const tfd_kernel *k, const tfd_tensor *x, const tfd_tensor *f);

/* A convolution's geometry: input [n, h, w, c], filter [kh, kw, c, ...], output [n, oh, ow, o],
 * pad_t and pad_l the padding before the input. */
typedef struct tfd_conv_dims {
  int64_t n, h, w, c, kh, kw, o, oh, ow, pad_t, pad_l;
} tfd_conv_dims;
/* Conv2D or (`depthwise`) DepthwiseConv2dNative of input 0 (rank 4) by filter 1 (rank 4) with win. */
bool tfd_conv_geometry(tfd_kernel_context *c, const tfd_kernel *k, const tfd_window_attrs *win, bool depthwise,
                       tfd_conv_dims *g);
/* MaxPool or AvgPool of input 0 (rank 4) with a ksize window. */
bool tfd_pool_geometry(tfd_kernel_context *c, const tfd_kernel *k, const tfd_window_attrs *win, const int64_t ksize[2],
                       tfd_conv_dims *g);

/* The fused inputs of a convolution whose output is out [n, oh, ow, o], in k_conv.c's order: the
 * bias (input 2), the batch norm's scale, offset, mean and variance (inputs 2 to 5), Prelu's alpha
 * (the last input; *alpha_n its element count), the addend's dtype (input 3). */
bool tfd_conv_check_fused(tfd_kernel_context *c, const tfd_kernel *k, const tfd_conv_fusion *f, const int64_t out[4],
                          int64_t *alpha_n);
/* Whether the fused Add's operand (input 3) has the output's shape, out (the usual case). */
bool tfd_conv_addend_fits(const tfd_kernel_context *c, const int64_t out[4]);
/* One that does not: *sa its shape and *so the shape it and the convolution's output *sc broadcast
 * to (the output's then). */
bool tfd_conv_addend_broadcast(tfd_kernel_context *c, const tfd_kernel *k, const tfd_shape *sc, tfd_shape *sa, tfd_shape *so);

/* Conv2DBackpropInput (input_sizes, filter, out_backprop) with win: *g the forward convolution's
 * geometry, whose input is the output here. */
bool tfd_conv_backprop_input_shape(tfd_kernel_context *c, const tfd_kernel *k, const tfd_window_attrs *win,
                                   tfd_conv_dims *g);
/* Whether its per-row products fit the int sizes and the column buffer the kernels use (checked once
 * the output exists: g's input sizes fit then). */
bool tfd_conv_backprop_input_fits(tfd_kernel_context *c, const tfd_kernel *k, const tfd_conv_dims *g);

#endif
