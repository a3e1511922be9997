// Data-movement kernels of the CUDA device math (device_math.h): strided copies (copy_walk), fill,
// range, tile, mirror_pad, gather and gather_nd. Elements move as unsigned words of their size;
// gathers move rows in the widest word that the row size and both pointers allow. A contiguous
// copy is cudaMemcpyAsync on the compute stream.
#include "common.cuh"

namespace tfd_cuda {
namespace {

// ---- copy_walk ----
template <typename W>
__global__ void __launch_bounds__(TFD_CUDA_THREADS) copy_linear(const W *x, W *y, int64_t sx, int64_t sy, int64_t n) {
  for (int64_t i = first_index(); i < n; i += grid_step()) y[i * sy] = x[i * sx];
}

template <typename W, typename I>
__global__ void __launch_bounds__(TFD_CUDA_THREADS) copy_walk_kernel(const W *x, W *y, tfd_dm_walk w, int64_t n) {
  for (int64_t i = first_index(); i < n; i += grid_step()) {
    I r = (I)i;
    int64_t ox = w.offsets[0], oy = w.offsets[1];
    for (int d = w.nd - 1; d >= 0; d--) {
      I dim = (I)w.dims[d], q = r % dim;
      r /= dim;
      ox += (int64_t)q * w.strides[0][d];
      oy += (int64_t)q * w.strides[1][d];
    }
    y[oy] = x[ox];
  }
}

// Elements of any size, byte by byte (sizes with no word).
__global__ void __launch_bounds__(TFD_CUDA_THREADS) copy_walk_bytes(const uint8_t *x, uint8_t *y, int64_t eb,
                                                                    tfd_dm_walk w, int64_t n) {
  for (int64_t i = first_index(); i < n; i += grid_step()) {
    int64_t off[2];
    tfd_walk_offsets(&w, 2, i, off);
    for (int64_t k = 0; k < eb; k++) y[off[1] * eb + k] = x[off[0] * eb + k];
  }
}

template <typename W>
cudaError_t launch_copy(const tfd_cuda_launch *l, const void *x, void *y, const tfd_dm_walk *w, int64_t n) {
  if (w->nd <= 1) {
    int64_t sx = w->nd ? w->strides[0][0] : 0, sy = w->nd ? w->strides[1][0] : 0;
    copy_linear<W><<<grid_for(l, n), TFD_CUDA_THREADS, 0, l->stream>>>((const W *)x + w->offsets[0],
                                                                       (W *)y + w->offsets[1], sx, sy, n);
  } else if (n <= INT32_MAX) {
    copy_walk_kernel<W, uint32_t><<<grid_for(l, n), TFD_CUDA_THREADS, 0, l->stream>>>((const W *)x, (W *)y, *w, n);
  } else {
    copy_walk_kernel<W, uint64_t><<<grid_for(l, n), TFD_CUDA_THREADS, 0, l->stream>>>((const W *)x, (W *)y, *w, n);
  }
  return cudaGetLastError();
}

// ---- fill ----
template <typename W> __global__ void __launch_bounds__(TFD_CUDA_THREADS) fill_kernel(W *y, W v, int64_t n) {
  for (int64_t i = first_index(); i < n; i += grid_step()) y[i] = v;
}

struct fill_bytes_args {
  uint8_t v[16];
};
__global__ void __launch_bounds__(TFD_CUDA_THREADS) fill_bytes(uint8_t *y, fill_bytes_args v, int64_t eb, int64_t n) {
  for (int64_t i = first_index(); i < n; i += grid_step())
    for (int64_t k = 0; k < eb; k++) y[i * eb + k] = v.v[k];
}

template <typename W> cudaError_t launch_fill(const tfd_cuda_launch *l, const void *value, void *y, int64_t n) {
  W v;
  memcpy(&v, value, sizeof v);
  fill_kernel<W><<<grid_for(l, n), TFD_CUDA_THREADS, 0, l->stream>>>((W *)y, v, n);
  return cudaGetLastError();
}

// ---- range ----
template <typename T>
__global__ void __launch_bounds__(TFD_CUDA_THREADS) range_float(T *y, double start, double delta, int64_t n) {
  for (int64_t i = first_index(); i < n; i += grid_step()) y[i] = (T)(start + (double)i * delta);
}

template <typename T>
__global__ void __launch_bounds__(TFD_CUDA_THREADS) range_int(T *y, int64_t start, int64_t delta, int64_t n) {
  for (int64_t i = first_index(); i < n; i += grid_step())
    y[i] = (T)(int64_t)((uint64_t)start + (uint64_t)i * (uint64_t)delta); // wraps as the CPU kernel's does
}

// ---- tile and mirror_pad: output coordinates decomposed by out_dims ----
struct shape_args {
  int nd;
  int64_t in_dims[TFD_MAX_DIMS], out_dims[TFD_MAX_DIMS], in_strides[TFD_MAX_DIMS], before[TFD_MAX_DIMS];
  bool symmetric;
};

template <typename W>
__global__ void __launch_bounds__(TFD_CUDA_THREADS) tile_kernel(const W *x, W *y, shape_args a, int64_t n) {
  for (int64_t i = first_index(); i < n; i += grid_step()) {
    int64_t r = i, off = 0;
    for (int d = a.nd - 1; d >= 0; d--) {
      int64_t q = r % a.out_dims[d];
      r /= a.out_dims[d];
      off += (q % a.in_dims[d]) * a.in_strides[d];
    }
    y[i] = x[off];
  }
}

template <typename W>
__global__ void __launch_bounds__(TFD_CUDA_THREADS) mirror_kernel(const W *x, W *y, shape_args a, int64_t n) {
  for (int64_t i = first_index(); i < n; i += grid_step()) {
    int64_t r = i, off = 0;
    for (int d = a.nd - 1; d >= 0; d--) {
      int64_t q = r % a.out_dims[d];
      r /= a.out_dims[d];
      off += tfd_mirror_index(q - a.before[d], a.in_dims[d], a.symmetric) * a.in_strides[d];
    }
    y[i] = x[off];
  }
}

template <typename W>
cudaError_t launch_shape(const tfd_cuda_launch *l, bool mirror, const void *x, void *y, const shape_args &a,
                         int64_t n) {
  if (mirror)
    mirror_kernel<W><<<grid_for(l, n), TFD_CUDA_THREADS, 0, l->stream>>>((const W *)x, (W *)y, a, n);
  else
    tile_kernel<W><<<grid_for(l, n), TFD_CUDA_THREADS, 0, l->stream>>>((const W *)x, (W *)y, a, n);
  return cudaGetLastError();
}

cudaError_t shape_by_size(const tfd_cuda_launch *l, bool mirror, size_t eb, const void *x, void *y,
                          const shape_args &a, int64_t n) {
  switch (eb) {
    case 1: return launch_shape<uint8_t>(l, mirror, x, y, a, n);
    case 2: return launch_shape<uint16_t>(l, mirror, x, y, a, n);
    case 4: return launch_shape<uint32_t>(l, mirror, x, y, a, n);
    case 8: return launch_shape<uint64_t>(l, mirror, x, y, a, n);
    case 16: return launch_shape<u128>(l, mirror, x, y, a, n);
    default: return cudaErrorInvalidValue; // checked by the caller
  }
}

// ---- gather / gather_nd: rows of `units` words W; an index out of range makes a row of zeros ----
template <typename IDX> __device__ __forceinline__ int64_t load_index(const IDX *idx, int64_t i) { return (int64_t)idx[i]; }

template <typename W, typename IDX, typename I>
__global__ void __launch_bounds__(TFD_CUDA_THREADS)
    gather_kernel(const W *x, const IDX *idx, W *y, int64_t outer, int64_t limit, int64_t per, int64_t units,
                  int64_t total) {
  for (int64_t t = first_index(); t < total; t += grid_step()) {
    I row = (I)t / (I)units, u = (I)t % (I)units;
    I i = row % (I)per, rest = row / (I)per;
    I r = rest % (I)outer, batch = rest / (I)outer;
    int64_t k = load_index(idx, (int64_t)batch * per + (int64_t)i);
    W v;
    if (k >= 0 && k < limit) {
      v = x[(((int64_t)batch * outer + (int64_t)r) * limit + k) * units + (int64_t)u];
    } else {
      memset(&v, 0, sizeof v);
    }
    y[t] = v;
  }
}

struct gather_nd_args {
  int depth;
  int64_t dims[TFD_MAX_DIMS], strides[TFD_MAX_DIMS]; // the indexed dimensions, strides in slices
};

template <typename W, typename IDX>
__global__ void __launch_bounds__(TFD_CUDA_THREADS)
    gather_nd_kernel(const W *x, const IDX *idx, W *y, gather_nd_args a, int64_t units, int64_t total) {
  for (int64_t t = first_index(); t < total; t += grid_step()) {
    int64_t row = t / units, u = t % units, slice = 0;
    bool inside = true;
    for (int j = 0; j < a.depth; j++) {
      int64_t k = load_index(idx, row * a.depth + j);
      inside = inside && k >= 0 && k < a.dims[j];
      slice += k * a.strides[j];
    }
    W v;
    if (inside) {
      v = x[slice * units + u];
    } else {
      memset(&v, 0, sizeof v);
    }
    y[t] = v;
  }
}

// The widest word (16 down to 1 bytes) dividing the row size and both addresses.
size_t row_word(size_t bytes, const void *x, const void *y) {
  uintptr_t a = (uintptr_t)x | (uintptr_t)y | (uintptr_t)bytes;
  for (size_t w = 16; w > 1; w /= 2)
    if (a % w == 0) return w;
  return 1;
}

template <typename W, typename IDX>
cudaError_t launch_gather(const tfd_cuda_launch *l, const void *x, const void *idx, int64_t batches, int64_t outer,
                          int64_t limit, int64_t per, size_t inner_bytes, void *y) {
  int64_t units = (int64_t)(inner_bytes / sizeof(W)), total = batches * outer * per * units;
  if (total <= 0) return cudaSuccess;
  if (total <= INT32_MAX)
    gather_kernel<W, IDX, uint32_t><<<grid_for(l, total), TFD_CUDA_THREADS, 0, l->stream>>>(
        (const W *)x, (const IDX *)idx, (W *)y, outer, limit, per, units, total);
  else
    gather_kernel<W, IDX, uint64_t><<<grid_for(l, total), TFD_CUDA_THREADS, 0, l->stream>>>(
        (const W *)x, (const IDX *)idx, (W *)y, outer, limit, per, units, total);
  return cudaGetLastError();
}

template <typename IDX>
cudaError_t gather_by_word(const tfd_cuda_launch *l, const void *x, const void *idx, int64_t batches, int64_t outer,
                           int64_t limit, int64_t per, size_t inner_bytes, void *y) {
  switch (row_word(inner_bytes, x, y)) {
    case 16: return launch_gather<u128, IDX>(l, x, idx, batches, outer, limit, per, inner_bytes, y);
    case 8: return launch_gather<uint64_t, IDX>(l, x, idx, batches, outer, limit, per, inner_bytes, y);
    case 4: return launch_gather<uint32_t, IDX>(l, x, idx, batches, outer, limit, per, inner_bytes, y);
    case 2: return launch_gather<uint16_t, IDX>(l, x, idx, batches, outer, limit, per, inner_bytes, y);
    default: return launch_gather<uint8_t, IDX>(l, x, idx, batches, outer, limit, per, inner_bytes, y);
  }
}

template <typename W, typename IDX>
cudaError_t launch_gather_nd(const tfd_cuda_launch *l, const void *x, const void *idx, const gather_nd_args &a,
                             int64_t count, size_t slice_bytes, void *y) {
  int64_t units = (int64_t)(slice_bytes / sizeof(W)), total = count * units;
  gather_nd_kernel<W, IDX><<<grid_for(l, total), TFD_CUDA_THREADS, 0, l->stream>>>((const W *)x, (const IDX *)idx,
                                                                                   (W *)y, a, units, total);
  return cudaGetLastError();
}

template <typename IDX>
cudaError_t gather_nd_by_word(const tfd_cuda_launch *l, const void *x, const void *idx, const gather_nd_args &a,
                              int64_t count, size_t slice_bytes, void *y) {
  switch (row_word(slice_bytes, x, y)) {
    case 16: return launch_gather_nd<u128, IDX>(l, x, idx, a, count, slice_bytes, y);
    case 8: return launch_gather_nd<uint64_t, IDX>(l, x, idx, a, count, slice_bytes, y);
    case 4: return launch_gather_nd<uint32_t, IDX>(l, x, idx, a, count, slice_bytes, y);
    case 2: return launch_gather_nd<uint16_t, IDX>(l, x, idx, a, count, slice_bytes, y);
    default: return launch_gather_nd<uint8_t, IDX>(l, x, idx, a, count, slice_bytes, y);
  }
}

}  // namespace
}  // namespace tfd_cuda

using namespace tfd_cuda;

extern "C" cudaError_t tfd_cuda_copy_walk(const tfd_cuda_launch *l, size_t eb, const void *x, void *y,
                                          const tfd_dm_walk *w, int64_t n) {
  bool dense = w->nd == 0 || (w->nd == 1 && w->strides[0][0] == 1 && w->strides[1][0] == 1);
  if (dense)
    return cudaMemcpyAsync((char *)y + w->offsets[1] * (int64_t)eb, (const char *)x + w->offsets[0] * (int64_t)eb,
                           (size_t)n * eb, cudaMemcpyDeviceToDevice, l->stream);
  switch (eb) {
    case 1: return launch_copy<uint8_t>(l, x, y, w, n);
    case 2: return launch_copy<uint16_t>(l, x, y, w, n);
    case 4: return launch_copy<uint32_t>(l, x, y, w, n);
    case 8: return launch_copy<uint64_t>(l, x, y, w, n);
    case 16: return launch_copy<u128>(l, x, y, w, n);
    default:
      copy_walk_bytes<<<grid_for(l, n), TFD_CUDA_THREADS, 0, l->stream>>>((const uint8_t *)x, (uint8_t *)y,
                                                                          (int64_t)eb, *w, n);
      return cudaGetLastError();
  }
}

extern "C" cudaError_t tfd_cuda_fill(const tfd_cuda_launch *l, size_t eb, const void *value, void *y, int64_t n) {
  const uint8_t *v = (const uint8_t *)value;
  bool same = true; // every byte alike: a memset
  for (size_t k = 1; k < eb; k++) same = same && v[k] == v[0];
  if (same) return cudaMemsetAsync(y, v[0], (size_t)n * eb, l->stream);
  switch (eb) {
    case 2: return launch_fill<uint16_t>(l, value, y, n);
    case 4: return launch_fill<uint32_t>(l, value, y, n);
    case 8: return launch_fill<uint64_t>(l, value, y, n);
    case 16: return launch_fill<u128>(l, value, y, n);
    default: {
      fill_bytes_args a;
      memset(&a, 0, sizeof a);
      memcpy(a.v, value, eb <= 16 ? eb : 16);
      fill_bytes<<<grid_for(l, n), TFD_CUDA_THREADS, 0, l->stream>>>((uint8_t *)y, a, (int64_t)eb, n);
      return cudaGetLastError();
    }
  }
}

extern "C" cudaError_t tfd_cuda_range(const tfd_cuda_launch *l, tfd_dtype dt, double start, double delta, void *y,
                                      int64_t n) {
  dim3 g = grid_for(l, n);
  switch (dt) {
    case TFD_FLOAT32: range_float<float><<<g, TFD_CUDA_THREADS, 0, l->stream>>>((float *)y, start, delta, n); break;
    case TFD_FLOAT64: range_float<double><<<g, TFD_CUDA_THREADS, 0, l->stream>>>((double *)y, start, delta, n); break;
    case TFD_INT32:
      range_int<int32_t><<<g, TFD_CUDA_THREADS, 0, l->stream>>>((int32_t *)y, tfd_dm_float_to_i64(start),
                                                                 tfd_dm_float_to_i64(delta), n);
      break;
    case TFD_INT64:
      range_int<int64_t><<<g, TFD_CUDA_THREADS, 0, l->stream>>>((int64_t *)y, tfd_dm_float_to_i64(start),
                                                                 tfd_dm_float_to_i64(delta), n);
      break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

static shape_args make_shape_args(const int64_t *in_dims, const int64_t *out_dims, int nd, const int64_t *before,
                                  bool symmetric) {
  shape_args a;
  memset(&a, 0, sizeof a);
  a.nd = nd;
  a.symmetric = symmetric;
  int64_t s = 1;
  for (int d = nd - 1; d >= 0; d--) {
    a.in_dims[d] = in_dims[d];
    a.out_dims[d] = out_dims[d];
    a.in_strides[d] = s;
    a.before[d] = before ? before[d] : 0;
    s *= in_dims[d];
  }
  return a;
}

extern "C" cudaError_t tfd_cuda_tile(const tfd_cuda_launch *l, size_t eb, const void *x, const int64_t *in_dims,
                                     const int64_t *out_dims, int nd, void *y, int64_t n) {
  return shape_by_size(l, false, eb, x, y, make_shape_args(in_dims, out_dims, nd, NULL, false), n);
}

extern "C" cudaError_t tfd_cuda_mirror_pad(const tfd_cuda_launch *l, size_t eb, const void *x, const int64_t *in_dims,
                                           int nd, const int64_t *before, bool symmetric, void *y,
                                           const int64_t *out_dims, int64_t n) {
  return shape_by_size(l, true, eb, x, y, make_shape_args(in_dims, out_dims, nd, before, symmetric), n);
}

extern "C" cudaError_t tfd_cuda_gather(const tfd_cuda_launch *l, const void *x, const void *idx, tfd_dtype idx_dtype,
                                       int64_t batches, int64_t outer, int64_t limit, int64_t per, size_t inner_bytes,
                                       void *y) {
  return idx_dtype == TFD_INT32
             ? gather_by_word<int32_t>(l, x, idx, batches, outer, limit, per, inner_bytes, y)
             : gather_by_word<int64_t>(l, x, idx, batches, outer, limit, per, inner_bytes, y);
}

extern "C" cudaError_t tfd_cuda_gather_nd(const tfd_cuda_launch *l, const void *x, const int64_t *x_dims, int nd,
                                          const void *idx, tfd_dtype idx_dtype, int64_t count, int depth,
                                          size_t slice_bytes, void *y) {
  (void)nd;
  gather_nd_args a;
  memset(&a, 0, sizeof a);
  a.depth = depth;
  int64_t s = 1;
  for (int j = depth - 1; j >= 0; j--) {
    a.dims[j] = x_dims[j];
    a.strides[j] = s;
    s *= x_dims[j];
  }
  return idx_dtype == TFD_INT32 ? gather_nd_by_word<int32_t>(l, x, idx, a, count, slice_bytes, y)
                                : gather_nd_by_word<int64_t>(l, x, idx, a, count, slice_bytes, y);
}
