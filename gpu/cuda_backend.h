/* Inside the CUDA backend module: what its files share. */
#ifndef TFDEV_GPU_CUDA_BACKEND_H
#define TFDEV_GPU_CUDA_BACKEND_H

#include <stdint.h>

#include "../runtime/device/device_internal.h"
#include "gpu_context.h"
#include "tfdev/allocator.h"

/* BaseGPUDevice: its context (CUDA id, stream groups, event manager; gpu_context.c) is shared with
 * its BFC allocator, which tensors keep alive after the device is gone. The CUDA kernels
 * (gpu/kernels/) reach the context and the allocator from the tfd_device their entries are given. */
typedef struct tfd_gpu_device {
  tfd_device base;
  tfd_gpu_ctx *ctx;         /* one reference; shared with the other live sessions' devices on the GPU */
  tfd_allocator *allocator; /* device memory: the GPU's shared BFC allocator (tfd_gpu_shared_acquire) */
  tfd_allocator *host;      /* pinned host memory, for AllocatorAttributes.on_host */
} tfd_gpu_device;

/* Pinned host memory: a BFC allocator over cudaHostAlloc regions grown as needed, limited to
 * bytes_limit (0: TensorFlow's default, 64 GiB). NULL when out of memory.
 * Caller owns one reference. */
tfd_allocator *tfd_cuda_host_allocator_new(const char *name, int64_t bytes_limit);

#endif
