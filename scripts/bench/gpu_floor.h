/* The chain rows' floors for tfdev_gpu_bench (gpu_floor.cu, built with the CUDA kernels). */
#ifndef TFDEV_BENCH_GPU_FLOOR_H
#define TFDEV_BENCH_GPU_FLOOR_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Queues count launches of a kernel negating x[0..n) (n <= 32) on s. */
cudaError_t tfd_bench_floor_launches(float *x, int n, int count, cudaStream_t s);
/* The same count launches captured from s into a graph, instantiated into *out (the caller destroys
 * it with cudaGraphExecDestroy). */
cudaError_t tfd_bench_floor_graph(float *x, int n, int count, cudaStream_t s, cudaGraphExec_t *out);

#ifdef __cplusplus
}
#endif

#endif
