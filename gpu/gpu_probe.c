/* GPU probe: how many CUDA GPUs this process can use, and why none when there are none.
 *
 * The full GPU backend (device, factory, streams, kernels) builds on this;
 * without CUDA (TFDEV_WITH_CUDA unset) the probe always reports zero. On a
 * machine with the toolkit but no driver, cudaGetDeviceCount fails and
 * leaves its output unwritten: start from 0 and treat any error as no GPU. */
#include <stdio.h>

#include "tfdev/gpu.h"

#ifdef TFDEV_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

int tfd_gpu_count(char *why, size_t why_cap) {
#ifdef TFDEV_WITH_CUDA
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    if (why) snprintf(why, why_cap, "cudaGetDeviceCount: %s", cudaGetErrorString(err));
    (void)cudaGetLastError(); /* clear the sticky error so later calls start clean */
    return 0;
  }
  if (why) snprintf(why, why_cap, n ? "" : "no CUDA device found");
  return n;
#else
  if (why) snprintf(why, why_cap, "built without CUDA");
  return 0;
#endif
}

bool tfd_gpu_built_with_cuda(void) {
#ifdef TFDEV_WITH_CUDA
  return true;
#else
  return false;
#endif
}
