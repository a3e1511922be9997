/* The CUDA module's link to the runtime that loaded it (see host_shim.c). */
#ifndef TFDEV_GPU_HOST_SHIM_H
#define TFDEV_GPU_HOST_SHIM_H

#include "../runtime/device/backend_module.h"

/* Called once by the module's init, before any other runtime function. */
void tfd_cuda_set_host(const tfd_backend_host *host);

#endif
