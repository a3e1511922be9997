/* tfdev GPU probe: how many CUDA GPUs this process can use (0 without the CUDA backend module,
 * a driver or a device). */
#ifndef TFDEV_GPU_H
#define TFDEV_GPU_H

#include "tfdev/export.h"

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Number of CUDA GPUs; 0 on any error, with the reason written to `why`
 * (why_cap bytes; may be NULL). Never fails, never aborts. */
TFD_API int tfd_gpu_count(char *why, size_t why_cap);
/* Whether this build made the CUDA backend module (libtfdev_cuda.so); whether it loads is
 * tfd_backend_load's answer. */
TFD_API bool tfd_gpu_built_with_cuda(void);

#ifdef __cplusplus
}
#endif
#endif
