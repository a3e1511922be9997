/* TFD_HD marks a function that runs on both sides of a CUDA build: compiled by nvcc it is a
 * __host__ __device__ function, by a C compiler a plain one. Headers of per-element code shared by
 * the CPU, the test suite's fake GPU and the CUDA kernels (half.h, kernels/device_math_elem.h) use it. */
#ifndef TFDEV_RUNTIME_HD_H
#define TFDEV_RUNTIME_HD_H

#ifdef __CUDACC__
#define TFD_HD __host__ __device__
#else
#define TFD_HD
#endif

#endif
