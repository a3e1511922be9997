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

template <typename T>
__global__ void __launch_bounds__(TFD_CUDA_THREADS)
    truncated_kernel(uint64_t seed, uint64_t base, T *y, int64_t n, bool f32) {
  for (int64_t i = first_index(); i < n; i += grid_step()) y[i] = (T)tfd_dm_truncated_normal(seed, base, i, f32);
}

__global__ void __launch_bounds__(TFD_CUDA_THREADS)
    uniform_int_kernel(uint64_t seed, uint64_t base, int64_t lo, uint64_t range, int64_t *y, int64_t n) {
  for (int64_t i = first_index(); i < n; i += grid_step()) y[i] = tfd_dm_uniform_int(seed, base, i, lo, range);
}

extern "C" cudaError_t tfd_cuda_random_ext(const tfd_cuda_launch *l, bool truncated, tfd_dtype dt, uint64_t seed,
                                           uint64_t base, int64_t lo, uint64_t range, void *y, int64_t n) {
  if (!truncated)
    uniform_int_kernel<<<grid_for(l, n), TFD_CUDA_THREADS, 0, l->stream>>>(seed, base, lo, range, (int64_t *)y, n);
  else if (dt == TFD_FLOAT64)
    truncated_kernel<double><<<grid_for(l, n), TFD_CUDA_THREADS, 0, l->stream>>>(seed, base, (double *)y, n, false);
  else
    truncated_kernel<float><<<grid_for(l, n), TFD_CUDA_THREADS, 0, l->stream>>>(seed, base, (float *)y, n, true);
  return cudaGetLastError();
}

extern "C" cudaError_t tfd_cuda_random(const tfd_cuda_launch *l, bool normal, tfd_dtype dt, uint64_t seed,
                                       uint64_t counter, void *y, int64_t n) {
  if (dt == TFD_FLOAT64)
    random_kernel<double><<<grid_for(l, n), TFD_CUDA_THREADS, 0, l->stream>>>(normal, seed, counter, (double *)y, n);
  else
    random_kernel<float><<<grid_for(l, n), TFD_CUDA_THREADS, 0, l->stream>>>(normal, seed, counter, (float *)y, n);
  return cudaGetLastError();
}

// Multinomial: one thread per sample, k_random_ext.c's running mass walked in the same order (so the
// same sums; CUDA's exp may differ from glibc's in a last bit, which can move a draw at a boundary).
template <typename T, typename O>
__global__ void __launch_bounds__(TFD_CUDA_THREADS)
    multinomial_kernel(const T *logits, int64_t rows, int64_t classes, int64_t samples, uint64_t seed, uint64_t base, O *y) {
  for (int64_t i = first_index(); i < rows * samples; i += grid_step()) {
    const T *row = logits + (i / samples) * classes;
    double mx = -INFINITY, run = 0;
    for (int64_t j = 0; j < classes; j++) {
      double v = (double)row[j];
      if (isfinite(v) && v > mx) mx = v;
    }
    for (int64_t j = 0; j < classes; j++) {
      double v = (double)row[j];
      if (isfinite(v)) run += exp(v - mx);
    }
    double u = tfd_dm_unit(tfd_dm_element_seed(seed, base, i), 0) * run, acc = 0;
    int64_t pick = classes - 1;
    for (int64_t j = 0; j < classes; j++) {
      double v = (double)row[j];
      if (isfinite(v)) acc += exp(v - mx);
      if (acc > u) {
        pick = j;
        break;
      }
    }
    y[i] = (O)pick;
  }
}

template <typename T>
static cudaError_t launch_multinomial(const tfd_cuda_launch *l, const void *logits, int64_t rows, int64_t classes,
                                      int64_t samples, uint64_t seed, uint64_t base, bool out64, void *y) {
  if (out64)
    multinomial_kernel<T, int64_t><<<grid_for(l, rows * samples), TFD_CUDA_THREADS, 0, l->stream>>>(
        (const T *)logits, rows, classes, samples, seed, base, (int64_t *)y);
  else
    multinomial_kernel<T, int32_t><<<grid_for(l, rows * samples), TFD_CUDA_THREADS, 0, l->stream>>>(
        (const T *)logits, rows, classes, samples, seed, base, (int32_t *)y);
  return cudaGetLastError();
}

extern "C" cudaError_t tfd_cuda_multinomial(const tfd_cuda_launch *l, tfd_dtype dt, const void *logits, int64_t rows,
                                            int64_t classes, int64_t samples, uint64_t seed, uint64_t base,
                                            tfd_dtype out_dt, void *y) {
  bool out64 = out_dt == TFD_INT64;
  switch (dt) {
    case TFD_FLOAT32: return launch_multinomial<float>(l, logits, rows, classes, samples, seed, base, out64, y);
    case TFD_FLOAT64: return launch_multinomial<double>(l, logits, rows, classes, samples, seed, base, out64, y);
    default: return cudaErrorInvalidValue;
  }
}
