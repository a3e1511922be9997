// Reductions of the CUDA device math (device_math.h): reduce, arg_reduce, softmax, top_k and
// batch_norm.
//
// reduce and arg_reduce tile x [outer, n, inner] as launch_config.h's plan says: blocks of bx * by
// threads, bx neighbouring inner positions and by threads along n, each thread folding its strided
// share of the axis, then a shared-memory tree over by. When too few tiles would keep the device
// busy and n is long, a first pass writes partial results per chunk of n and a second folds them.
// float32 sums, means and products accumulate in double, as the CPU kernel does.
//
// NaN, as the CPU kernels' sequential loops: Max/Min keep the first element when it is NaN and
// otherwise never take a NaN; ArgMax/ArgMin likewise (index 0 for a NaN first element). A tree
// cannot follow "first" directly, so the tree skips NaN and the final step checks element 0.
#include <float.h>

#include "common.cuh"

namespace tfd_cuda {
namespace {

// ---- fold arithmetic: accumulator type A of element type T ----
template <typename T> struct acc_type { typedef T type; };
template <> struct acc_type<float> { typedef double type; };

template <typename A> __device__ __forceinline__ A identity(int op);
template <> __device__ __forceinline__ double identity<double>(int op) {
  return op == TFD_DM_MAX ? -HUGE_VAL : op == TFD_DM_MIN ? HUGE_VAL : op == TFD_DM_PROD ? 1.0 : 0.0;
}
template <> __device__ __forceinline__ int32_t identity<int32_t>(int op) {
  return op == TFD_DM_MAX ? INT32_MIN : op == TFD_DM_MIN ? INT32_MAX : op == TFD_DM_PROD ? 1 : 0;
}
template <> __device__ __forceinline__ int64_t identity<int64_t>(int op) {
  return op == TFD_DM_MAX ? INT64_MIN : op == TFD_DM_MIN ? INT64_MAX : op == TFD_DM_PROD ? 1 : 0;
}

// acc folded with x by op (MEAN folds as SUM); Max/Min ignore a NaN x, which the identity start keeps
// out of every accumulator.
template <typename A> __device__ __forceinline__ A fold(int op, A acc, A x) {
  switch (op) {
    case TFD_DM_PROD: return binary(TFD_DM_MUL, acc, x);
    case TFD_DM_MAX: return binary(TFD_DM_MAXIMUM, x, acc);
    case TFD_DM_MIN: return binary(TFD_DM_MINIMUM, x, acc);
    default: return binary(TFD_DM_ADD, acc, x);
  }
}

template <typename T> struct is_float_type { static const bool value = false; };
template <> struct is_float_type<float> { static const bool value = true; };
template <> struct is_float_type<double> { static const bool value = true; };

// What the final pass needs of the original problem.
template <typename T> struct final_args {
  const T *x0; // the input, for the NaN-first rule
  int64_t n0;  // the reduced axis' length, for MEAN and that rule
  int op;      // the requested op (MEAN, not the SUM it folds as)
};

struct tile_args {
  int64_t outer, n, inner, qblocks, chunks, chunk, tiles;
};

// One pass. In: element type read (T, or A when folding partials); Out: T (final) or A (partials
// [outer, chunks, inner]).
template <typename T, typename In, typename A, typename Out, bool FINAL>
__global__ void __launch_bounds__(TFD_CUDA_THREADS)
    reduce_tile(const In *x, Out *y, tile_args t, int fold_op, final_args<T> f) {
  __shared__ A part[TFD_CUDA_THREADS];
  const int bx = blockDim.x, by = blockDim.y, tx = threadIdx.x, ty = threadIdx.y;
  for (int64_t tile = blockIdx.x; tile < t.tiles; tile += gridDim.x) {
    int64_t g = tile % t.chunks, rest = tile / t.chunks, qb = rest % t.qblocks, o = rest / t.qblocks;
    int64_t q = qb * bx + tx;
    A acc = identity<A>(fold_op);
    if (q < t.inner) {
      int64_t lo = g * t.chunk, hi = lo + t.chunk < t.n ? lo + t.chunk : t.n;
      const In *col = x + o * t.n * t.inner + q;
      for (int64_t i = lo + ty; i < hi; i += by) acc = fold<A>(fold_op, acc, (A)col[i * t.inner]);
    }
    part[ty * bx + tx] = acc;
    __syncthreads();
    for (int s = by / 2; s > 0; s /= 2) {
      if (ty < s) part[ty * bx + tx] = fold<A>(fold_op, part[ty * bx + tx], part[(ty + s) * bx + tx]);
      __syncthreads();
    }
    if (ty == 0 && q < t.inner) {
      A r = part[tx];
      if (FINAL) {
        T v;
        if (f.op == TFD_DM_MEAN) r = r / (A)f.n0;
        v = (T)r;
        if (is_float_type<T>::value && (f.op == TFD_DM_MAX || f.op == TFD_DM_MIN) && f.n0 > 0) {
          T first = f.x0[o * f.n0 * t.inner + q];
          if (is_nan(first)) v = first;
        }
        y[o * t.inner + q] = (Out)v;
      } else {
        y[(o * t.chunks + g) * t.inner + q] = (Out)r;
      }
    }
    __syncthreads(); // the next tile reuses part
  }
}

tile_args make_tile_args(const tfd_reduce_plan &p, int64_t outer, int64_t n, int64_t inner) {
  tile_args t = {outer, n, inner, p.qblocks, p.chunks, p.chunk, p.tiles};
  return t;
}

int64_t target_blocks(const tfd_cuda_launch *l) { return l->max_blocks / 2 > 0 ? l->max_blocks / 2 : 1; }

template <typename T>
cudaError_t launch_reduce(const tfd_cuda_launch *l, int op, const T *x, int64_t outer, int64_t n, int64_t inner, T *y,
                          void *workspace) {
  typedef typename acc_type<T>::type A;
  int fold_op = op == TFD_DM_MEAN ? TFD_DM_SUM : op;
  final_args<T> f = {x, n, op};
  tfd_reduce_plan p = tfd_reduce_plan_make(outer, n, inner, target_blocks(l), 1);
  dim3 block(p.bx, p.by);
  if (p.chunks == 1) {
    reduce_tile<T, T, A, T, true><<<(unsigned)tfd_cuda_blocks(p.tiles, 1, l->max_blocks), block, 0, l->stream>>>(
        x, y, make_tile_args(p, outer, n, inner), fold_op, f);
    return cudaGetLastError();
  }
  A *partial = (A *)workspace;
  reduce_tile<T, T, A, A, false><<<(unsigned)tfd_cuda_blocks(p.tiles, 1, l->max_blocks), block, 0, l->stream>>>(
      x, partial, make_tile_args(p, outer, n, inner), fold_op, f);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) return err;
  tfd_reduce_plan p2 = tfd_reduce_plan_make(outer, p.chunks, inner, target_blocks(l), 0);
  reduce_tile<T, A, A, T, true><<<(unsigned)tfd_cuda_blocks(p2.tiles, 1, l->max_blocks), dim3(p2.bx, p2.by), 0,
                                  l->stream>>>(partial, y, make_tile_args(p2, outer, p.chunks, inner), fold_op, f);
  return cudaGetLastError();
}

template <typename T> size_t reduce_workspace(const tfd_cuda_launch *l, int64_t outer, int64_t n, int64_t inner) {
  tfd_reduce_plan p = tfd_reduce_plan_make(outer, n, inner, target_blocks(l), 1);
  return (size_t)tfd_reduce_plan_workspace(&p, outer, inner, (int64_t)sizeof(typename acc_type<T>::type));
}

// ---- ArgMax / ArgMin: (value, index) pairs, index -1 for none ----
__device__ __forceinline__ bool beats(bool is_min, float v, int64_t i, float bv, int64_t bi) {
  return tfd_arg_beats(is_min, v, i, bv, bi);
}
__device__ __forceinline__ bool beats(bool is_min, double v, int64_t i, double bv, int64_t bi) {
  return tfd_arg_beats(is_min, v, i, bv, bi);
}
__device__ __forceinline__ bool beats(bool is_min, int32_t v, int64_t i, int32_t bv, int64_t bi) {
  return tfd_arg_beats_i(is_min, v, i, bv, bi);
}
__device__ __forceinline__ bool beats(bool is_min, int64_t v, int64_t i, int64_t bv, int64_t bi) {
  return tfd_arg_beats_i(is_min, v, i, bv, bi);
}

// PARTIAL: x/xi are partial pairs [outer, n, inner] from a first pass; else x is the input.
template <typename T, bool PARTIAL, bool FINAL>
__global__ void __launch_bounds__(TFD_CUDA_THREADS)
    arg_tile(const T *x, const int64_t *xi, T *pv, int64_t *pi, void *y, bool out64, tile_args t, bool is_min,
             const T *x0, int64_t n0) {
  __shared__ T val[TFD_CUDA_THREADS];
  __shared__ int64_t idx[TFD_CUDA_THREADS];
  const int bx = blockDim.x, by = blockDim.y, tx = threadIdx.x, ty = threadIdx.y;
  for (int64_t tile = blockIdx.x; tile < t.tiles; tile += gridDim.x) {
    int64_t g = tile % t.chunks, rest = tile / t.chunks, qb = rest % t.qblocks, o = rest / t.qblocks;
    int64_t q = qb * bx + tx;
    T bv = T();
    int64_t bi = -1;
    if (q < t.inner) {
      int64_t lo = g * t.chunk, hi = lo + t.chunk < t.n ? lo + t.chunk : t.n;
      for (int64_t i = lo + ty; i < hi; i += by) {
        int64_t at = (o * t.n + i) * t.inner + q;
        T v = x[at];
        int64_t vi = PARTIAL ? xi[at] : i;
        if (vi >= 0 && !is_nan(v) && beats(is_min, v, vi, bv, bi)) bv = v, bi = vi;
      }
    }
    val[ty * bx + tx] = bv;
    idx[ty * bx + tx] = bi;
    __syncthreads();
    for (int s = by / 2; s > 0; s /= 2) {
      if (ty < s) {
        int a = ty * bx + tx, b = (ty + s) * bx + tx;
        if (idx[b] >= 0 && beats(is_min, val[b], idx[b], val[a], idx[a])) val[a] = val[b], idx[a] = idx[b];
      }
      __syncthreads();
    }
    if (ty == 0 && q < t.inner) {
      if (FINAL) {
        int64_t r = idx[tx] < 0 ? 0 : idx[tx];
        if (is_nan(x0[o * n0 * t.inner + q])) r = 0; // n0 >= 1: the CPU keeps a NaN first element
        if (out64) ((int64_t *)y)[o * t.inner + q] = r;
        else ((int32_t *)y)[o * t.inner + q] = (int32_t)r;
      } else {
        pv[(o * t.chunks + g) * t.inner + q] = val[tx];
        pi[(o * t.chunks + g) * t.inner + q] = idx[tx];
      }
    }
    __syncthreads();
  }
}

// The partial pairs of a split arg reduction: values, then (8-byte aligned) indices.
template <typename T> size_t arg_values_bytes(int64_t count) { return ((size_t)count * sizeof(T) + 7) / 8 * 8; }

template <typename T>
cudaError_t launch_arg(const tfd_cuda_launch *l, bool is_min, const T *x, int64_t outer, int64_t n, int64_t inner,
                       bool out64, void *y, void *workspace) {
  tfd_reduce_plan p = tfd_reduce_plan_make(outer, n, inner, target_blocks(l), 1);
  if (p.chunks == 1) {
    arg_tile<T, false, true><<<(unsigned)tfd_cuda_blocks(p.tiles, 1, l->max_blocks), dim3(p.bx, p.by), 0,
                               l->stream>>>(x, NULL, NULL, NULL, y, out64, make_tile_args(p, outer, n, inner), is_min,
                                            x, n);
    return cudaGetLastError();
  }
  int64_t count = outer * p.chunks * inner;
  T *pv = (T *)workspace;
  int64_t *pi = (int64_t *)((char *)workspace + arg_values_bytes<T>(count));
  arg_tile<T, false, false><<<(unsigned)tfd_cuda_blocks(p.tiles, 1, l->max_blocks), dim3(p.bx, p.by), 0,
                              l->stream>>>(x, NULL, pv, pi, NULL, out64, make_tile_args(p, outer, n, inner), is_min,
                                           x, n);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) return err;
  tfd_reduce_plan p2 = tfd_reduce_plan_make(outer, p.chunks, inner, target_blocks(l), 0);
  arg_tile<T, true, true><<<(unsigned)tfd_cuda_blocks(p2.tiles, 1, l->max_blocks), dim3(p2.bx, p2.by), 0,
                            l->stream>>>(pv, pi, NULL, NULL, y, out64, make_tile_args(p2, outer, p.chunks, inner),
                                         is_min, x, n);
  return cudaGetLastError();
}

template <typename T> size_t arg_workspace(const tfd_cuda_launch *l, int64_t outer, int64_t n, int64_t inner) {
  tfd_reduce_plan p = tfd_reduce_plan_make(outer, n, inner, target_blocks(l), 1);
  if (p.chunks == 1) return 0;
  int64_t count = outer * p.chunks * inner;
  return arg_values_bytes<T>(count) + (size_t)count * sizeof(int64_t);
}

// ---- softmax: max, then the sum of exp(x - max), then the outputs ----
template <typename T> __device__ __forceinline__ T warp_max(T v) {
  for (int o = 16; o > 0; o /= 2) {
    T w = __shfl_xor_sync(0xffffffffu, v, o);
    v = w > v ? w : v;
  }
  return v;
}
template <typename T> __device__ __forceinline__ T warp_sum(T v) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

template <typename T>
__device__ __forceinline__ void softmax_write(const T *x, T *y, int64_t cols, int64_t first, int64_t step, T m, T s,
                                              bool log) {
  if (log) {
    T ls = unary(TFD_DM_LOG, s, 0.f);
    for (int64_t i = first; i < cols; i += step) y[i] = (x[i] - m) - ls;
  } else {
    for (int64_t i = first; i < cols; i += step) y[i] = unary(TFD_DM_EXP, x[i] - m, 0.f) / s;
  }
}

// Rows of up to TFD_SOFTMAX_WARP_COLS columns: a warp per row, 8 rows a block.
template <typename T>
__global__ void __launch_bounds__(TFD_CUDA_THREADS) softmax_warp(const T *x, T *y, int64_t rows, int64_t cols,
                                                                 bool log) {
  const int lane = threadIdx.x % 32, warps = TFD_CUDA_THREADS / 32;
  for (int64_t r = (int64_t)blockIdx.x * warps + threadIdx.x / 32; r < rows; r += (int64_t)gridDim.x * warps) {
    const T *xr = x + r * cols;
    T m = -(T)HUGE_VAL, s = 0;
    for (int64_t i = lane; i < cols; i += 32) m = xr[i] > m ? xr[i] : m;
    m = warp_max(m);
    for (int64_t i = lane; i < cols; i += 32) s += unary(TFD_DM_EXP, xr[i] - m, 0.f);
    s = warp_sum(s);
    softmax_write(xr, y + r * cols, cols, lane, 32, m, s, log);
  }
}

// Longer rows: a block per row.
template <typename T>
__global__ void __launch_bounds__(TFD_CUDA_THREADS) softmax_block(const T *x, T *y, int64_t rows, int64_t cols,
                                                                  bool log) {
  __shared__ T part[TFD_CUDA_THREADS / 32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = TFD_CUDA_THREADS / 32;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T *xr = x + r * cols;
    T m = -(T)HUGE_VAL, s = 0;
    for (int64_t i = threadIdx.x; i < cols; i += TFD_CUDA_THREADS) m = xr[i] > m ? xr[i] : m;
    m = warp_max(m);
    if (lane == 0) part[warp] = m;
    __syncthreads();
    m = part[0];
    for (int w = 1; w < warps; w++) m = part[w] > m ? part[w] : m;
    __syncthreads(); // everyone has read part before it holds sums
    for (int64_t i = threadIdx.x; i < cols; i += TFD_CUDA_THREADS) s += unary(TFD_DM_EXP, xr[i] - m, 0.f);
    s = warp_sum(s);
    if (lane == 0) part[warp] = s;
    __syncthreads();
    s = 0;
    for (int w = 0; w < warps; w++) s += part[w];
    softmax_write(xr, y + r * cols, cols, threadIdx.x, TFD_CUDA_THREADS, m, s, log);
    __syncthreads(); // the next row reuses part
  }
}

template <typename T>
cudaError_t launch_softmax(const tfd_cuda_launch *l, const T *x, int64_t rows, int64_t cols, bool log, T *y) {
  if (cols <= TFD_SOFTMAX_WARP_COLS)
    softmax_warp<T><<<(unsigned)tfd_cuda_blocks(rows, TFD_CUDA_THREADS / 32, l->max_blocks), TFD_CUDA_THREADS, 0,
                      l->stream>>>(x, y, rows, cols, log);
  else
    softmax_block<T><<<(unsigned)tfd_cuda_blocks(rows, 1, l->max_blocks), TFD_CUDA_THREADS, 0, l->stream>>>(
        x, y, rows, cols, log);
  return cudaGetLastError();
}

// ---- TopKV2 ----
__device__ __forceinline__ bool before(float va, int64_t ia, float vb, int64_t ib) {
  return tfd_topk_before_f(va, ia, vb, ib);
}
__device__ __forceinline__ bool before(double va, int64_t ia, double vb, int64_t ib) {
  return tfd_topk_before_f(va, ia, vb, ib);
}
__device__ __forceinline__ bool before(int32_t va, int64_t ia, int32_t vb, int64_t ib) {
  return tfd_topk_before_i(va, ia, vb, ib);
}
__device__ __forceinline__ bool before(int64_t va, int64_t ia, int64_t vb, int64_t ib) {
  return tfd_topk_before_i(va, ia, vb, ib);
}
// Index -1 marks no entry (or sort padding), which comes after every entry.
template <typename T> __device__ __forceinline__ bool before_or_none(T va, int64_t ia, T vb, int64_t ib) {
  if (ia < 0) return false;
  if (ib < 0) return true;
  return before(va, ia, vb, ib);
}

__device__ __forceinline__ void put_index(void *indices, bool idx64, int64_t at, int64_t v) {
  if (idx64) ((int64_t *)indices)[at] = v;
  else ((int32_t *)indices)[at] = (int32_t)v;
}

// k <= TFD_TOPK_SELECT_MAX: a block per row picks the k entries one by one, each the first (in
// TopKV2's order) of those after the one picked before.
template <typename T>
__global__ void __launch_bounds__(TFD_CUDA_THREADS) top_k_select(const T *x, int64_t rows, int64_t cols, int64_t k,
                                                                 T *values, void *indices, bool idx64) {
  __shared__ T val[TFD_CUDA_THREADS];
  __shared__ int64_t idx[TFD_CUDA_THREADS];
  const int tid = threadIdx.x;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T *xr = x + r * cols;
    T pv = T();
    int64_t pi = -1;
    for (int64_t out = 0; out < k; out++) {
      T bv = T();
      int64_t bi = -1;
      for (int64_t j = tid; j < cols; j += TFD_CUDA_THREADS) {
        T v = xr[j];
        bool after_prev = pi < 0 || before(pv, pi, v, j);
        if (after_prev && before_or_none(v, j, bv, bi)) bv = v, bi = j;
      }
      val[tid] = bv;
      idx[tid] = bi;
      __syncthreads();
      for (int s = TFD_CUDA_THREADS / 2; s > 0; s /= 2) {
        if (tid < s && before_or_none(val[tid + s], idx[tid + s], val[tid], idx[tid]))
          val[tid] = val[tid + s], idx[tid] = idx[tid + s];
        __syncthreads();
      }
      pv = val[0];
      pi = idx[0]; // k <= cols: always an entry
      if (tid == 0) {
        values[r * k + out] = pv;
        put_index(indices, idx64, r * k + out, pi);
      }
      __syncthreads(); // val and idx are rewritten next round
    }
  }
}

// Larger k: every row sorted whole by a bitonic network over p = 2^m >= cols slots in the workspace.
template <typename T>
__global__ void __launch_bounds__(TFD_CUDA_THREADS) sort_init(const T *x, int64_t rows, int64_t cols, int64_t p,
                                                              T *keys, int64_t *idx) {
  for (int64_t t = first_index(); t < rows * p; t += grid_step()) {
    int64_t r = t / p, j = t % p;
    keys[t] = j < cols ? x[r * cols + j] : T();
    idx[t] = j < cols ? j : -1;
  }
}

// One step of the network: slots i and i + j of each row, in order within blocks of size kk whose
// first slot has bit kk clear (reversed where it is set), as bitonic merging needs.
template <typename T>
__global__ void __launch_bounds__(TFD_CUDA_THREADS) sort_step(T *keys, int64_t *idx, int64_t rows, int64_t p,
                                                              int64_t kk, int64_t j) {
  int64_t half = p / 2;
  for (int64_t t = first_index(); t < rows * half; t += grid_step()) {
    int64_t r = t / half, s = t % half;
    int64_t i = 2 * j * (s / j) + s % j, a = r * p + i, b = a + j;
    bool forward = (i & kk) == 0;
    T ka = keys[a], kb = keys[b];
    int64_t ia = idx[a], ib = idx[b];
    bool swap = forward ? before_or_none(kb, ib, ka, ia) : before_or_none(ka, ia, kb, ib);
    if (swap) {
      keys[a] = kb, keys[b] = ka;
      idx[a] = ib, idx[b] = ia;
    }
  }
}

template <typename T>
__global__ void __launch_bounds__(TFD_CUDA_THREADS) sort_take(const T *keys, const int64_t *idx, int64_t rows,
                                                              int64_t p, int64_t k, T *values, void *indices,
                                                              bool idx64) {
  for (int64_t t = first_index(); t < rows * k; t += grid_step()) {
    int64_t r = t / k, j = t % k;
    values[t] = keys[r * p + j];
    put_index(indices, idx64, t, idx[r * p + j]);
  }
}

size_t sort_keys_bytes(size_t elem, int64_t slots) { return ((size_t)slots * elem + 255) / 256 * 256; }

template <typename T>
cudaError_t launch_top_k(const tfd_cuda_launch *l, const T *x, int64_t rows, int64_t cols, int64_t k, T *values,
                         void *indices, bool idx64, void *workspace) {
  if (k <= TFD_TOPK_SELECT_MAX) {
    top_k_select<T><<<(unsigned)tfd_cuda_blocks(rows, 1, l->max_blocks), TFD_CUDA_THREADS, 0, l->stream>>>(
        x, rows, cols, k, values, indices, idx64);
    return cudaGetLastError();
  }
  int64_t p = tfd_pow2_at_least(cols);
  T *keys = (T *)workspace;
  int64_t *idx = (int64_t *)((char *)workspace + sort_keys_bytes(sizeof(T), rows * p));
  sort_init<T><<<grid_for(l, rows * p), TFD_CUDA_THREADS, 0, l->stream>>>(x, rows, cols, p, keys, idx);
  cudaError_t err = cudaGetLastError();
  for (int64_t kk = 2; kk <= p && err == cudaSuccess; kk *= 2)
    for (int64_t j = kk / 2; j > 0 && err == cudaSuccess; j /= 2) {
      sort_step<T><<<grid_for(l, rows * (p / 2)), TFD_CUDA_THREADS, 0, l->stream>>>(keys, idx, rows, p, kk, j);
      err = cudaGetLastError();
    }
  if (err != cudaSuccess) return err;
  sort_take<T><<<grid_for(l, rows * k), TFD_CUDA_THREADS, 0, l->stream>>>(keys, idx, rows, p, k, values, indices,
                                                                          idx64);
  return cudaGetLastError();
}

// ---- FusedBatchNorm (inference), in TensorFlow's order as the CPU kernel:
// y = (x - mean) * (rsqrt(variance + epsilon) * scale) + offset ----
template <typename T>
__global__ void __launch_bounds__(TFD_CUDA_THREADS) batch_norm_kernel(const T *x, const T *scale, const T *offset,
                                                                      const T *mean, const T *var, T eps, int64_t n,
                                                                      int64_t c, T *y) {
  for (int64_t i = first_index(); i < n; i += grid_step()) {
    int64_t ch = i % c;
    T factor = unary(TFD_DM_RSQRT, var[ch] + eps, 0.f) * scale[ch];
    y[i] = (x[i] - mean[ch]) * factor + offset[ch];
  }
}

}  // namespace
}  // namespace tfd_cuda

using namespace tfd_cuda;

extern "C" cudaError_t tfd_cuda_reduce(const tfd_cuda_launch *l, int op, tfd_dtype dt, const void *x, int64_t outer,
                                       int64_t n, int64_t inner, void *y, void *workspace) {
  switch (dt) {
    case TFD_FLOAT32: return launch_reduce<float>(l, op, (const float *)x, outer, n, inner, (float *)y, workspace);
    case TFD_FLOAT64: return launch_reduce<double>(l, op, (const double *)x, outer, n, inner, (double *)y, workspace);
    case TFD_INT32: return launch_reduce<int32_t>(l, op, (const int32_t *)x, outer, n, inner, (int32_t *)y, workspace);
    case TFD_INT64: return launch_reduce<int64_t>(l, op, (const int64_t *)x, outer, n, inner, (int64_t *)y, workspace);
    default: return cudaErrorInvalidValue;
  }
}

extern "C" size_t tfd_cuda_reduce_workspace(const tfd_cuda_launch *l, int op, tfd_dtype dt, int64_t outer, int64_t n,
                                            int64_t inner) {
  (void)op;
  switch (dt) {
    case TFD_FLOAT32: return reduce_workspace<float>(l, outer, n, inner);
    case TFD_FLOAT64: return reduce_workspace<double>(l, outer, n, inner);
    case TFD_INT32: return reduce_workspace<int32_t>(l, outer, n, inner);
    default: return reduce_workspace<int64_t>(l, outer, n, inner);
  }
}

// ---- scatter_rows (ScatterNd, TensorScatterUpdate) ----
template <typename T>
__global__ void __launch_bounds__(TFD_CUDA_THREADS)
    scatter_write(const T *x, const int64_t *slots, int64_t n, int64_t row, T *y) {
  for (int64_t i = first_index(); i < n * row; i += grid_step()) y[slots[i / row] * row + i % row] = x[i];
}

template <typename T>
__global__ void __launch_bounds__(TFD_CUDA_THREADS)
    scatter_add(const T *x, const int64_t *slots, int64_t n, int64_t row, T *y) {
  for (int64_t i = first_index(); i < n * row; i += grid_step()) atomicAdd(&y[slots[i / row] * row + i % row], x[i]);
}

template <typename T>
static cudaError_t launch_scatter_add(const tfd_cuda_launch *l, const void *x, const int64_t *slots, int64_t n, int64_t row,
                                      void *y) {
  scatter_add<T><<<grid_for(l, n * row), TFD_CUDA_THREADS, 0, l->stream>>>((const T *)x, slots, n, row, (T *)y);
  return cudaGetLastError();
}

template <typename T>
static cudaError_t launch_scatter_write(const tfd_cuda_launch *l, const void *x, const int64_t *slots, int64_t n, int64_t row,
                                        void *y) {
  scatter_write<T><<<grid_for(l, n * row), TFD_CUDA_THREADS, 0, l->stream>>>((const T *)x, slots, n, row, (T *)y);
  return cudaGetLastError();
}

extern "C" cudaError_t tfd_cuda_scatter_rows(const tfd_cuda_launch *l, bool add, tfd_dtype dt, size_t es, const void *x,
                                             const int64_t *slots, int64_t n, int64_t row, void *y) {
  if (add) {
    switch (dt) {
      case TFD_FLOAT32: return launch_scatter_add<float>(l, x, slots, n, row, y);
      case TFD_FLOAT64: return launch_scatter_add<double>(l, x, slots, n, row, y);
      case TFD_INT64: return launch_scatter_add<unsigned long long>(l, x, slots, n, row, y); // wraps as int64 adds
      default: return cudaErrorInvalidValue;
    }
  }
  switch (es) {
    case 1: return launch_scatter_write<uint8_t>(l, x, slots, n, row, y);
    case 2: return launch_scatter_write<uint16_t>(l, x, slots, n, row, y);
    case 4: return launch_scatter_write<uint32_t>(l, x, slots, n, row, y);
    case 8: return launch_scatter_write<unsigned long long>(l, x, slots, n, row, y);
    default: return cudaErrorInvalidValue;
  }
}

// ---- LowerBound, UpperBound: a binary search per value, as the CPU kernel's ----
template <typename T, typename O>
__global__ void __launch_bounds__(TFD_CUDA_THREADS)
    search_kernel(bool upper, const T *sorted, const T *values, int64_t rows, int64_t n, int64_t m, O *y) {
  for (int64_t i = first_index(); i < rows * m; i += grid_step()) {
    const T *row = sorted + (i / m) * n;
    T x = values[i];
    int64_t lo = 0, hi = n;
    while (lo < hi) {
      int64_t mid = lo + (hi - lo) / 2;
      if (upper ? !(x < row[mid]) : row[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    y[i] = (O)lo;
  }
}

template <typename T>
static cudaError_t launch_search(const tfd_cuda_launch *l, bool upper, const void *sorted, const void *values, int64_t rows,
                                 int64_t n, int64_t m, bool out64, void *y) {
  if (out64)
    search_kernel<T, int64_t><<<grid_for(l, rows * m), TFD_CUDA_THREADS, 0, l->stream>>>(
        upper, (const T *)sorted, (const T *)values, rows, n, m, (int64_t *)y);
  else
    search_kernel<T, int32_t><<<grid_for(l, rows * m), TFD_CUDA_THREADS, 0, l->stream>>>(
        upper, (const T *)sorted, (const T *)values, rows, n, m, (int32_t *)y);
  return cudaGetLastError();
}

extern "C" cudaError_t tfd_cuda_search_sorted(const tfd_cuda_launch *l, bool upper, tfd_dtype dt, const void *sorted,
                                              const void *values, int64_t rows, int64_t n, int64_t m, tfd_dtype out_dt,
                                              void *y) {
  bool out64 = out_dt == TFD_INT64;
  switch (dt) {
    case TFD_FLOAT32: return launch_search<float>(l, upper, sorted, values, rows, n, m, out64, y);
    case TFD_FLOAT64: return launch_search<double>(l, upper, sorted, values, rows, n, m, out64, y);
    case TFD_INT64: return launch_search<int64_t>(l, upper, sorted, values, rows, n, m, out64, y);
    default: return cudaErrorInvalidValue;
  }
}

// ---- scan (Cumsum, Cumprod) ----
template <typename T, typename ACC>
__global__ void __launch_bounds__(TFD_CUDA_THREADS)
    scan_kernel(const T *x, T *y, int64_t outer, int64_t n, int64_t inner, bool prod, bool exclusive, bool reverse) {
  for (int64_t col = first_index(); col < outer * inner; col += grid_step()) {
    int64_t o = col / inner, q = col % inner;
    ACC acc = prod ? (ACC)1 : (ACC)0;
    for (int64_t j0 = 0; j0 < n; j0++) {
      int64_t j = reverse ? n - 1 - j0 : j0, at = (o * n + j) * inner + q;
      ACC v = (ACC)x[at];
      if (exclusive) y[at] = (T)acc;
      acc = prod ? (ACC)(acc * v) : (ACC)(acc + v);
      if (!exclusive) y[at] = (T)acc;
    }
  }
}

template <typename T, typename ACC>
static cudaError_t launch_scan(const tfd_cuda_launch *l, const void *x, int64_t outer, int64_t n, int64_t inner, void *y,
                               bool prod, bool exclusive, bool reverse) {
  scan_kernel<T, ACC><<<grid_for(l, outer * inner), TFD_CUDA_THREADS, 0, l->stream>>>((const T *)x, (T *)y, outer, n, inner,
                                                                                       prod, exclusive, reverse);
  return cudaGetLastError();
}

extern "C" cudaError_t tfd_cuda_scan(const tfd_cuda_launch *l, bool prod, bool exclusive, bool reverse, tfd_dtype dt,
                                     const void *x, int64_t outer, int64_t n, int64_t inner, void *y) {
  switch (dt) {
    case TFD_FLOAT32: return launch_scan<float, float>(l, x, outer, n, inner, y, prod, exclusive, reverse);
    case TFD_FLOAT64: return launch_scan<double, double>(l, x, outer, n, inner, y, prod, exclusive, reverse);
    case TFD_INT64: return launch_scan<int64_t, uint64_t>(l, x, outer, n, inner, y, prod, exclusive, reverse); // wraps
    default: return cudaErrorInvalidValue;
  }
}

extern "C" cudaError_t tfd_cuda_arg_reduce(const tfd_cuda_launch *l, bool is_min, tfd_dtype dt, const void *x,
                                           int64_t outer, int64_t n, int64_t inner, tfd_dtype out_dtype, void *y,
                                           void *workspace) {
  bool out64 = out_dtype == TFD_INT64;
  switch (dt) {
    case TFD_FLOAT32: return launch_arg<float>(l, is_min, (const float *)x, outer, n, inner, out64, y, workspace);
    case TFD_FLOAT64: return launch_arg<double>(l, is_min, (const double *)x, outer, n, inner, out64, y, workspace);
    case TFD_INT32: return launch_arg<int32_t>(l, is_min, (const int32_t *)x, outer, n, inner, out64, y, workspace);
    case TFD_INT64: return launch_arg<int64_t>(l, is_min, (const int64_t *)x, outer, n, inner, out64, y, workspace);
    default: return cudaErrorInvalidValue;
  }
}

extern "C" size_t tfd_cuda_arg_reduce_workspace(const tfd_cuda_launch *l, tfd_dtype dt, int64_t outer, int64_t n,
                                                int64_t inner) {
  switch (dt) {
    case TFD_FLOAT32: return arg_workspace<float>(l, outer, n, inner);
    case TFD_FLOAT64: return arg_workspace<double>(l, outer, n, inner);
    case TFD_INT32: return arg_workspace<int32_t>(l, outer, n, inner);
    default: return arg_workspace<int64_t>(l, outer, n, inner);
  }
}

extern "C" cudaError_t tfd_cuda_softmax(const tfd_cuda_launch *l, tfd_dtype dt, const void *x, int64_t rows,
                                        int64_t cols, bool log, void *y) {
  if (dt == TFD_FLOAT64) return launch_softmax<double>(l, (const double *)x, rows, cols, log, (double *)y);
  return launch_softmax<float>(l, (const float *)x, rows, cols, log, (float *)y);
}

extern "C" size_t tfd_cuda_top_k_workspace(tfd_dtype dt, int64_t rows, int64_t cols, int64_t k) {
  if (k <= TFD_TOPK_SELECT_MAX) return 0;
  int64_t slots = rows * tfd_pow2_at_least(cols);
  size_t elem = dt == TFD_FLOAT32 || dt == TFD_INT32 ? 4 : 8;
  return sort_keys_bytes(elem, slots) + (size_t)slots * sizeof(int64_t);
}

extern "C" cudaError_t tfd_cuda_top_k(const tfd_cuda_launch *l, tfd_dtype dt, const void *x, int64_t rows,
                                      int64_t cols, int64_t k, void *values, tfd_dtype idx_dtype, void *indices,
                                      void *workspace) {
  bool idx64 = idx_dtype == TFD_INT64;
  switch (dt) {
    case TFD_FLOAT32:
      return launch_top_k<float>(l, (const float *)x, rows, cols, k, (float *)values, indices, idx64, workspace);
    case TFD_FLOAT64:
      return launch_top_k<double>(l, (const double *)x, rows, cols, k, (double *)values, indices, idx64, workspace);
    case TFD_INT32:
      return launch_top_k<int32_t>(l, (const int32_t *)x, rows, cols, k, (int32_t *)values, indices, idx64,
                                   workspace);
    case TFD_INT64:
      return launch_top_k<int64_t>(l, (const int64_t *)x, rows, cols, k, (int64_t *)values, indices, idx64,
                                   workspace);
    default: return cudaErrorInvalidValue;
  }
}

extern "C" cudaError_t tfd_cuda_batch_norm(const tfd_cuda_launch *l, tfd_dtype dt, const void *x, const void *scale,
                                           const void *offset, const void *mean, const void *variance, float epsilon,
                                           int64_t rows, int64_t c, void *y) {
  int64_t n = rows * c;
  if (dt == TFD_FLOAT64)
    batch_norm_kernel<double><<<grid_for(l, n), TFD_CUDA_THREADS, 0, l->stream>>>(
        (const double *)x, (const double *)scale, (const double *)offset, (const double *)mean,
        (const double *)variance, (double)epsilon, n, c, (double *)y);
  else
    batch_norm_kernel<float><<<grid_for(l, n), TFD_CUDA_THREADS, 0, l->stream>>>(
        (const float *)x, (const float *)scale, (const float *)offset, (const float *)mean, (const float *)variance,
        epsilon, n, c, (float *)y);
  return cudaGetLastError();
}
