/* Inside the CUDA backend module: what its files share. */
#ifndef TFDEV_GPU_CUDA_BACKEND_H
#define TFDEV_GPU_CUDA_BACKEND_H

#include <stdint.h>

#include "tfdev/allocator.h"

/* Device memory of CUDA device cuda_id, or pinned host memory for cuda_id -1, limited to bytes_limit
 * (0: none). NULL when out of memory. Caller owns one reference. */
tfd_allocator *tfd_cuda_allocator_new(const char *name, int cuda_id, int64_t bytes_limit);

#endif
