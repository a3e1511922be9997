/* The GPU probe of the public API (tfdev/gpu.h), answered by the CUDA backend module: libtfdev
 * itself never links a CUDA library. */
#include <stdio.h>

#include "tfdev/backend.h"
#include "tfdev/gpu.h"

int tfd_gpu_count(char *why, size_t why_cap) {
  tfd_backend_info info = {0};
  tfd_backend_load("cuda", &info, NULL);
  if (why) snprintf(why, why_cap, "%s", info.num_devices > 0 || !info.why ? "" : info.why);
  return info.num_devices;
}

bool tfd_gpu_built_with_cuda(void) {
#ifdef TFDEV_WITH_CUDA
  return true;
#else
  return false;
#endif
}
