// The floors of tfdev_gpu_bench's chain rows: the least a chain of tiny GPU ops can cost here. The
// same work as a chain node (negate 16 floats in place) as a kernel of its own, launched straight
// with <<<>>> on one stream, count times; and the same launches captured once into a CUDA graph and
// replayed. tfdev's rows go through its device math, its executor and its step graphs; these go
// through nothing but the CUDA runtime.
#include <cuda_runtime_api.h>

#include "gpu_floor.h"

__global__ void floor_neg(float *x, int n) {
  int i = (int)threadIdx.x;
  if (i < n) x[i] = -x[i];
}

extern "C" cudaError_t tfd_bench_floor_launches(float *x, int n, int count, cudaStream_t s) {
  for (int k = 0; k < count; k++) floor_neg<<<1, 32, 0, s>>>(x, n);
  return cudaGetLastError();
}

extern "C" cudaError_t tfd_bench_floor_graph(float *x, int n, int count, cudaStream_t s, cudaGraphExec_t *out) {
  cudaGraph_t g = nullptr;
  *out = nullptr;
  cudaError_t err = cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
  if (err != cudaSuccess) return err;
  for (int k = 0; k < count; k++) floor_neg<<<1, 32, 0, s>>>(x, n);
  cudaError_t launched = cudaGetLastError();
  err = cudaStreamEndCapture(s, &g);
  if (err == cudaSuccess) err = launched;
  if (err == cudaSuccess) err = cudaGraphInstantiate(out, g, 0);
  if (g) cudaGraphDestroy(g);
  return err;
}
