/* The fake GPU's device math (fake_gpu_math.c), for fake_gpu_backend.c's devices. */
#ifndef TFDEV_RUNTIME_FAKE_GPU_MATH_H
#define TFDEV_RUNTIME_FAKE_GPU_MATH_H

#include "../kernels/device_math.h"

/* The fake's tfd_device_math: plain C loops over its inverted memory. */
const tfd_device_math *tfd_fake_gpu_math(void);

/* Step graphs: whether the calling thread is recording one, and, when it is, takes memory it frees
 * (true: kept until the graph goes, then given back through release(arg, ptr, size)). */
bool tfd_fake_gpu_capturing(void);
bool tfd_fake_gpu_keep(void (*release)(void *arg, void *ptr, size_t size), void *arg, void *ptr, size_t size);

#endif
