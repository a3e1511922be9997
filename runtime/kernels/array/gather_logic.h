/* The argument checks and output shapes of GatherV2 and GatherNd, which the CPU kernel (k_gather.c)
 * and the device kernel (dk_shape.c) share. Indices that live on the host (all of a CPU kernel's,
 * a device's int32 ones) are checked against params here, each error naming the index as
 * TensorFlow does; indices in device memory are not (they gather zeros, as on TensorFlow's GPUs). */
#ifndef TFDEV_RUNTIME_GATHER_LOGIC_H
#define TFDEV_RUNTIME_GATHER_LOGIC_H

#include "../kernel.h"

/* GatherV2 (params, indices, axis; batch_dims in k->index): the output is params.shape[:axis] +
 * indices.shape[batch_dims:] + params.shape[axis + 1:]; the first batch_dims dimensions of params
 * and indices go together. */
typedef struct tfd_gather_shape {
  int64_t axis, batch_dims; /* normalised */
  int64_t limit;            /* params' size along axis */
  int nd;
  int64_t dims[TFD_MAX_DIMS]; /* the output's */
} tfd_gather_shape;
bool tfd_gather_check(tfd_kernel_context *c, const tfd_kernel *k, tfd_gather_shape *g);

/* GatherNd (params, indices): the index depth (indices' last dimension) and the output's dims,
 * indices.shape[:-1] + params.shape[depth:]. */
bool tfd_gather_nd_check(tfd_kernel_context *c, const tfd_kernel *k, int64_t *depth, int64_t *dims, int *nd);

#endif
