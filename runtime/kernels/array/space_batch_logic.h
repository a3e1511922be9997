/* SpaceToBatchND's and BatchToSpaceND's checks and geometry (k_space_batch.c), shared by the CPU kernel
 * and the device kernel (dk_shape.c) so that both give one copy of each text. */
#ifndef TFDEV_RUNTIME_SPACE_BATCH_LOGIC_H
#define TFDEV_RUNTIME_SPACE_BATCH_LOGIC_H

#include <stdbool.h>
#include <stdint.h>

#include "../kernel.h"

typedef struct tfd_space_batch_plan {
  int m;                        /* block dimensions */
  int64_t batch, depth, blocks; /* space-side batch, run length, prod(block) */
  int64_t block[TFD_MAX_DIMS], before[TFD_MAX_DIMS];
  int64_t space[TFD_MAX_DIMS], grid[TFD_MAX_DIMS]; /* spatial sizes of each side (space: unpadded / cropped) */
} tfd_space_batch_plan;

/* Reads block_shape and paddings/crops (inputs 1, 2, on the host) into p, with TensorFlow's checks and
 * texts; the output's dims in out (the input's rank). False with the error reported against the node. */
bool tfd_space_batch_plan_make(tfd_kernel *k, tfd_kernel_context *c, bool to_batch, tfd_space_batch_plan *p, int64_t *out);

#endif
