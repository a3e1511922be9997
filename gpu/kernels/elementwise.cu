// Elementwise kernels of the CUDA device math (device_math.h): unary, binary over strided walks
// (broadcasts, transposes, slices), select, cast and add_n. The arithmetic is device_math_elem.h's,
// the same code the CPU kernels and the fake GPU run.
//
// Walks: a walk of one dimension (what device kernels make of contiguous and broadcast operands
// after merging) is indexed by multiplication only, four elements per thread per pass with every
// load issued before any store, so enough bytes are in flight to reach memory bandwidth. Longer
// walks decompose each index by division, in 32-bit arithmetic when the count allows (64-bit
// division costs several times more on a GPU).
#include "common.cuh"

namespace tfd_cuda {
namespace {

// Operand offsets for index i of a walk of nd >= 2 dimensions, with index type I.
template <typename I, int NOPS>
__device__ __forceinline__ void walk_offsets(const tfd_dm_walk &w, int64_t i, int64_t *off) {
  I r = (I)i;
#pragma unroll
  for (int op = 0; op < NOPS; op++) off[op] = w.offsets[op];
  for (int d = w.nd - 1; d >= 0; d--) {
    I dim = (I)w.dims[d], q = r % dim;
    r /= dim;
#pragma unroll
    for (int op = 0; op < NOPS; op++) off[op] += (int64_t)q * w.strides[op][d];
  }
}

// ---- unary ----
template <typename T>
__global__ void __launch_bounds__(TFD_CUDA_THREADS) unary_kernel(int op, const T *x, T *y, int64_t n, float alpha) {
  const int64_t step = grid_step();
  int64_t i = first_index();
  for (; i + 3 * step < n; i += 4 * step) {
    T a0 = x[i], a1 = x[i + step], a2 = x[i + 2 * step], a3 = x[i + 3 * step];
    y[i] = unary(op, a0, alpha);
    y[i + step] = unary(op, a1, alpha);
    y[i + 2 * step] = unary(op, a2, alpha);
    y[i + 3 * step] = unary(op, a3, alpha);
  }
  for (; i < n; i += step) y[i] = unary(op, x[i], alpha);
}

template <typename T>
cudaError_t launch_unary(const tfd_cuda_launch *l, int op, const void *x, void *y, int64_t n, float alpha) {
  unary_kernel<T><<<grid_for(l, n, 4), TFD_CUDA_THREADS, 0, l->stream>>>(op, (const T *)x, (T *)y, n, alpha);
  return cudaGetLastError();
}

// ---- binary: R is T for arithmetic, uint8_t (bool) for comparisons and logic ----
template <typename T, typename R> struct binary_op;
template <typename T> struct binary_op<T, T> {
  static __device__ __forceinline__ T apply(int op, T a, T b) { return binary(op, a, b); }
};
template <typename T> struct binary_op<T, uint8_t> {
  static __device__ __forceinline__ uint8_t apply(int op, T a, T b) { return TFD_DM_COMPARE(op, a, b); }
};
template <> struct binary_op<uint8_t, uint8_t> { // bool operands: comparisons and logic
  static __device__ __forceinline__ uint8_t apply(int op, uint8_t a, uint8_t b) { return TFD_DM_COMPARE(op, a, b); }
};

template <typename T, typename R>
__global__ void __launch_bounds__(TFD_CUDA_THREADS)
    binary_linear(int op, const T *a, const T *b, R *y, int64_t sa, int64_t sb, int64_t n) {
  const int64_t step = grid_step();
  int64_t i = first_index();
  for (; i + 3 * step < n; i += 4 * step) {
    T a0 = a[i * sa], a1 = a[(i + step) * sa], a2 = a[(i + 2 * step) * sa], a3 = a[(i + 3 * step) * sa];
    T b0 = b[i * sb], b1 = b[(i + step) * sb], b2 = b[(i + 2 * step) * sb], b3 = b[(i + 3 * step) * sb];
    y[i] = binary_op<T, R>::apply(op, a0, b0);
    y[i + step] = binary_op<T, R>::apply(op, a1, b1);
    y[i + 2 * step] = binary_op<T, R>::apply(op, a2, b2);
    y[i + 3 * step] = binary_op<T, R>::apply(op, a3, b3);
  }
  for (; i < n; i += step) y[i] = binary_op<T, R>::apply(op, a[i * sa], b[i * sb]);
}

template <typename T, typename R, typename I>
__global__ void __launch_bounds__(TFD_CUDA_THREADS)
    binary_walk(int op, const T *a, const T *b, R *y, tfd_dm_walk w, int64_t n) {
  for (int64_t i = first_index(); i < n; i += grid_step()) {
    int64_t off[2];
    walk_offsets<I, 2>(w, i, off);
    y[i] = binary_op<T, R>::apply(op, a[off[0]], b[off[1]]);
  }
}

template <typename T, typename R>
cudaError_t launch_binary(const tfd_cuda_launch *l, int op, const void *a, const void *b, void *y,
                          const tfd_dm_walk *w, int64_t n) {
  if (w->nd <= 1) { // offsets folded into the pointers; a walk of 0 dimensions is one element
    const T *pa = (const T *)a + w->offsets[0], *pb = (const T *)b + w->offsets[1];
    int64_t sa = w->nd ? w->strides[0][0] : 0, sb = w->nd ? w->strides[1][0] : 0;
    binary_linear<T, R><<<grid_for(l, n, 4), TFD_CUDA_THREADS, 0, l->stream>>>(op, pa, pb, (R *)y, sa, sb, n);
  } else if (n <= INT32_MAX) {
    binary_walk<T, R, uint32_t><<<grid_for(l, n), TFD_CUDA_THREADS, 0, l->stream>>>(op, (const T *)a, (const T *)b,
                                                                                    (R *)y, *w, n);
  } else {
    binary_walk<T, R, uint64_t><<<grid_for(l, n), TFD_CUDA_THREADS, 0, l->stream>>>(op, (const T *)a, (const T *)b,
                                                                                    (R *)y, *w, n);
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t launch_binary_typed(const tfd_cuda_launch *l, int op, const void *a, const void *b, void *y,
                                const tfd_dm_walk *w, int64_t n) {
  return tfd_dm_is_comparison(op) ? launch_binary<T, uint8_t>(l, op, a, b, y, w, n)
                                  : launch_binary<T, T>(l, op, a, b, y, w, n);
}

// ---- select: elements moved as words of their size; other sizes byte by byte ----
template <typename W, typename I>
__global__ void __launch_bounds__(TFD_CUDA_THREADS)
    select_kernel(const uint8_t *cond, const W *a, const W *b, W *y, tfd_dm_walk w, int64_t n) {
  for (int64_t i = first_index(); i < n; i += grid_step()) {
    int64_t off[3];
    walk_offsets<I, 3>(w, i, off);
    y[i] = cond[off[0]] ? a[off[1]] : b[off[2]];
  }
}

template <typename I>
__global__ void __launch_bounds__(TFD_CUDA_THREADS) select_bytes(const uint8_t *cond, const uint8_t *a,
                                                                 const uint8_t *b, uint8_t *y, size_t eb,
                                                                 tfd_dm_walk w, int64_t n) {
  for (int64_t i = first_index(); i < n; i += grid_step()) {
    int64_t off[3];
    walk_offsets<I, 3>(w, i, off);
    const uint8_t *src = cond[off[0]] ? a + off[1] * (int64_t)eb : b + off[2] * (int64_t)eb;
    for (size_t k = 0; k < eb; k++) y[i * (int64_t)eb + (int64_t)k] = src[k];
  }
}

// Walks of 0 dimensions (one element) take the general kernel: nd 0 decomposes nothing.
template <typename W>
cudaError_t launch_select(const tfd_cuda_launch *l, const void *cond, const void *a, const void *b, void *y,
                          const tfd_dm_walk *w, int64_t n) {
  if (n <= INT32_MAX)
    select_kernel<W, uint32_t><<<grid_for(l, n), TFD_CUDA_THREADS, 0, l->stream>>>(
        (const uint8_t *)cond, (const W *)a, (const W *)b, (W *)y, *w, n);
  else
    select_kernel<W, uint64_t><<<grid_for(l, n), TFD_CUDA_THREADS, 0, l->stream>>>(
        (const uint8_t *)cond, (const W *)a, (const W *)b, (W *)y, *w, n);
  return cudaGetLastError();
}

// ---- cast: tfd_dm_put with both dtypes at run time (the branch is the same for every thread) ----
__global__ void __launch_bounds__(TFD_CUDA_THREADS) cast_kernel(tfd_dtype from, tfd_dtype to, const void *x, void *y,
                                                                int64_t n) {
  for (int64_t i = first_index(); i < n; i += grid_step()) tfd_dm_put(y, to, i, x, from, i);
}

// ---- add_n: up to ADDN_MAX inputs a launch; later launches add to what y holds ----
#define ADDN_MAX 16
template <typename T> struct addn_args {
  const T *in[ADDN_MAX];
  int n;
  bool accumulate;
};

template <typename T>
__global__ void __launch_bounds__(TFD_CUDA_THREADS) add_n_kernel(addn_args<T> a, T *y, int64_t count) {
  for (int64_t i = first_index(); i < count; i += grid_step()) {
    T acc = a.accumulate ? y[i] : a.in[0][i];
    for (int j = a.accumulate ? 0 : 1; j < a.n; j++) acc = binary(TFD_DM_ADD, acc, a.in[j][i]);
    y[i] = acc;
  }
}

template <typename T>
cudaError_t launch_add_n(const tfd_cuda_launch *l, const void *const *in, int n, void *y, int64_t count) {
  for (int first = 0; first < n; first += ADDN_MAX) {
    addn_args<T> a;
    a.n = n - first < ADDN_MAX ? n - first : ADDN_MAX;
    a.accumulate = first > 0;
    for (int j = 0; j < a.n; j++) a.in[j] = (const T *)in[first + j];
    add_n_kernel<T><<<grid_for(l, count), TFD_CUDA_THREADS, 0, l->stream>>>(a, (T *)y, count);
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) return err;
  }
  return cudaSuccess;
}

}  // namespace
}  // namespace tfd_cuda

using namespace tfd_cuda;

extern "C" cudaError_t tfd_cuda_unary(const tfd_cuda_launch *l, int op, tfd_dtype dt, const void *x, void *y,
                                      int64_t n, float alpha) {
  switch (dt) {
    case TFD_FLOAT32: return launch_unary<float>(l, op, x, y, n, alpha);
    case TFD_FLOAT64: return launch_unary<double>(l, op, x, y, n, alpha);
    case TFD_INT32: return launch_unary<int32_t>(l, op, x, y, n, alpha);
    case TFD_INT64: return launch_unary<int64_t>(l, op, x, y, n, alpha);
    case TFD_BOOL: return launch_unary<uint8_t>(l, op, x, y, n, alpha);
    default: return cudaErrorInvalidValue;
  }
}

extern "C" cudaError_t tfd_cuda_binary(const tfd_cuda_launch *l, int op, tfd_dtype dt, const void *a, const void *b,
                                       void *y, const tfd_dm_walk *w, int64_t n) {
  switch (dt) {
    case TFD_FLOAT32: return launch_binary_typed<float>(l, op, a, b, y, w, n);
    case TFD_FLOAT64: return launch_binary_typed<double>(l, op, a, b, y, w, n);
    case TFD_INT32: return launch_binary_typed<int32_t>(l, op, a, b, y, w, n);
    case TFD_INT64: return launch_binary_typed<int64_t>(l, op, a, b, y, w, n);
    case TFD_BOOL: return launch_binary<uint8_t, uint8_t>(l, op, a, b, y, w, n); // comparisons and logic only
    default: return cudaErrorInvalidValue;
  }
}

extern "C" cudaError_t tfd_cuda_select(const tfd_cuda_launch *l, size_t eb, const void *cond, const void *a,
                                       const void *b, void *y, const tfd_dm_walk *w, int64_t n) {
  switch (eb) {
    case 1: return launch_select<uint8_t>(l, cond, a, b, y, w, n);
    case 2: return launch_select<uint16_t>(l, cond, a, b, y, w, n);
    case 4: return launch_select<uint32_t>(l, cond, a, b, y, w, n);
    case 8: return launch_select<uint64_t>(l, cond, a, b, y, w, n);
    default:
      if (n <= INT32_MAX)
        select_bytes<uint32_t><<<grid_for(l, n), TFD_CUDA_THREADS, 0, l->stream>>>(
            (const uint8_t *)cond, (const uint8_t *)a, (const uint8_t *)b, (uint8_t *)y, eb, *w, n);
      else
        select_bytes<uint64_t><<<grid_for(l, n), TFD_CUDA_THREADS, 0, l->stream>>>(
            (const uint8_t *)cond, (const uint8_t *)a, (const uint8_t *)b, (uint8_t *)y, eb, *w, n);
      return cudaGetLastError();
  }
}

extern "C" cudaError_t tfd_cuda_cast(const tfd_cuda_launch *l, tfd_dtype from, tfd_dtype to, const void *x, void *y,
                                     int64_t n) {
  cast_kernel<<<grid_for(l, n), TFD_CUDA_THREADS, 0, l->stream>>>(from, to, x, y, n);
  return cudaGetLastError();
}

extern "C" cudaError_t tfd_cuda_add_n(const tfd_cuda_launch *l, tfd_dtype dt, const void *const *in, int n, void *y,
                                      int64_t count) {
  switch (dt) {
    case TFD_FLOAT32: return launch_add_n<float>(l, in, n, y, count);
    case TFD_FLOAT64: return launch_add_n<double>(l, in, n, y, count);
    case TFD_INT32: return launch_add_n<int32_t>(l, in, n, y, count);
    case TFD_INT64: return launch_add_n<int64_t>(l, in, n, y, count);
    default: return cudaErrorInvalidValue;
  }
}
