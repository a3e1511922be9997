/* Inside the CUDA backend module: what its files share. */
#ifndef TFDEV_GPU_CUDA_BACKEND_H
#define TFDEV_GPU_CUDA_BACKEND_H

#include <stdint.h>

#include "tfdev/allocator.h"

/* Pinned host memory: a BFC allocator over cudaHostAlloc regions grown as needed, limited to
 * bytes_limit (0: TensorFlow's default, 64 GiB). NULL when out of memory.
 * Caller owns one reference. */
tfd_allocator *tfd_cuda_host_allocator_new(const char *name, int64_t bytes_limit);

#endif
