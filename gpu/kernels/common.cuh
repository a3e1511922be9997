// What the CUDA module's kernel files share (C++, nvcc only): grid-stride loops with 64-bit indices,
// element types by size, the launch of a grid-stride kernel, and the per-element math of
// device_math_elem.h under one overloaded name per dtype so templates can call it.
#ifndef TFDEV_GPU_KERNELS_COMMON_CUH
#define TFDEV_GPU_KERNELS_COMMON_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "../../runtime/kernels/device_math_elem.h"
#include "index_math.h"
#include "launch.h"

namespace tfd_cuda {

// The first index of this thread and the step of a grid-stride loop, 64-bit throughout: counts may
// pass 2^31.
__device__ __forceinline__ int64_t first_index() { return (int64_t)blockIdx.x * blockDim.x + threadIdx.x; }
__device__ __forceinline__ int64_t grid_step() { return (int64_t)gridDim.x * blockDim.x; }

// A grid for `work` items, `per_thread` each per pass, TFD_CUDA_THREADS threads a block.
inline dim3 grid_for(const tfd_cuda_launch *l, int64_t work, int64_t per_thread = 1) {
  return dim3((unsigned)tfd_cuda_blocks(work, (int64_t)TFD_CUDA_THREADS * per_thread, l->max_blocks));
}

// Elements moved as unsigned integers of their size (select, copies, gathers); 16 bytes as two words.
struct alignas(16) u128 {
  uint64_t lo, hi;
};
template <int N> struct word;
template <> struct word<1> { typedef uint8_t type; };
template <> struct word<2> { typedef uint16_t type; };
template <> struct word<4> { typedef uint32_t type; };
template <> struct word<8> { typedef uint64_t type; };
template <> struct word<16> { typedef u128 type; };

// ---- device_math_elem.h by dtype ----
__device__ __forceinline__ float unary(int op, float x, float alpha) { return tfd_dm_unary_f32(op, x, alpha); }
__device__ __forceinline__ double unary(int op, double x, float alpha) { return tfd_dm_unary_f64(op, x, (double)alpha); }
__device__ __forceinline__ int32_t unary(int op, int32_t x, float) { return tfd_dm_unary_i32(op, x); }
__device__ __forceinline__ int64_t unary(int op, int64_t x, float) { return tfd_dm_unary_i64(op, x); }
__device__ __forceinline__ uint8_t unary(int, uint8_t x, float) { return (uint8_t)(x == 0); } // LogicalNot

__device__ __forceinline__ float binary(int op, float a, float b) { return tfd_dm_binary_f32(op, a, b); }
__device__ __forceinline__ double binary(int op, double a, double b) { return tfd_dm_binary_f64(op, a, b); }
__device__ __forceinline__ int32_t binary(int op, int32_t a, int32_t b) { return tfd_dm_binary_i32(op, a, b); }
__device__ __forceinline__ int64_t binary(int op, int64_t a, int64_t b) { return tfd_dm_binary_i64(op, a, b); }

// An activation of tfd_activation as the unary op it is.
__host__ __device__ __forceinline__ int act_op(tfd_activation act) {
  switch (act) {
    case TFD_ACT_RELU: return TFD_DM_RELU;
    case TFD_ACT_RELU6: return TFD_DM_RELU6;
    case TFD_ACT_ELU: return TFD_DM_ELU;
    case TFD_ACT_LEAKY_RELU: return TFD_DM_LEAKY_RELU;
    case TFD_ACT_TANH: return TFD_DM_TANH;
    case TFD_ACT_SIGMOID: return TFD_DM_SIGMOID;
    default: return -1;
  }
}

template <typename T> __device__ __forceinline__ T activate(int op, T v, float alpha) {
  return op < 0 ? v : unary(op, v, alpha);
}

template <typename T> __device__ __forceinline__ bool is_nan(T v) { return v != v; }

}  // namespace tfd_cuda

#endif
