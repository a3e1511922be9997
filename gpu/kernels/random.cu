// RandomUniform and RandomStandardNormal on the GPU: element i is device_math_elem.h's counter-based
// draw, so the same seed and counter give the CPU kernel's numbers (k_random.c) whatever the grid.
#include "common.cuh"

namespace tfd_cuda {
namespace {

template <typename T>
__global__ void __launch_bounds__(TFD_CUDA_THREADS) random_kernel(bool normal, uint64_t seed, uint64_t counter, T *y,
                                                                  int64_t n) {
  for (int64_t i = first_index(); i < n; i += grid_step()) {
    double v = tfd_dm_random(normal, seed, counter, (uint64_t)i);
    if (sizeof(T) == sizeof(float)) y[i] = (T)(normal ? (float)v : tfd_dm_uniform_f32(v));
    else y[i] = (T)v;
  }
}

}  // namespace
}  // namespace tfd_cuda

using namespace tfd_cuda;

extern "C" cudaError_t tfd_cuda_random(const tfd_cuda_launch *l, bool normal, tfd_dtype dt, uint64_t seed,
                                       uint64_t counter, void *y, int64_t n) {
  if (dt == TFD_FLOAT64)
    random_kernel<double><<<grid_for(l, n), TFD_CUDA_THREADS, 0, l->stream>>>(normal, seed, counter, (double *)y, n);
  else
    random_kernel<float><<<grid_for(l, n), TFD_CUDA_THREADS, 0, l->stream>>>(normal, seed, counter, (float *)y, n);
  return cudaGetLastError();
}
