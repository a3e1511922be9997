// Image kernels of the CUDA device math (device_math.h): MaxPool/AvgPool and the resizes, one
// thread per output element, channels fastest so neighbouring threads read neighbouring memory.
// Windows and source coordinates come from index_math.h, the CPU kernels' formulas (k_conv.c,
// k_conv_generic.c, k_image.c): MaxPool starts from the dtype's lowest value and never takes a NaN,
// AvgPool divides by the in-image count; resizes compute coordinates in float.
#include <float.h>

#include "../../runtime/core/half.h"
#include "common.cuh"

namespace tfd_cuda {
namespace {

// Element types as pooled: loaded to and stored from a compute type C.
template <typename T> struct pool_io {
  typedef T C;
  static __device__ __forceinline__ C load(T v) { return v; }
  static __device__ __forceinline__ T store(C v) { return v; }
};
struct half_bits {
  uint16_t bits;
};
template <> struct pool_io<half_bits> {
  typedef float C;
  static __device__ __forceinline__ float load(half_bits v) { return tfd_half_to_float(v.bits); }
  static __device__ __forceinline__ half_bits store(float v) {
    half_bits h = {tfd_float_to_half(v)};
    return h;
  }
};

// MaxPool's start: the dtype's lowest value (half's is -65504, as k_conv_generic.c's).
template <typename T> __device__ __forceinline__ typename pool_io<T>::C lowest();
template <> __device__ __forceinline__ float lowest<float>() { return -FLT_MAX; }
template <> __device__ __forceinline__ double lowest<double>() { return -DBL_MAX; }
template <> __device__ __forceinline__ float lowest<half_bits>() { return -65504.0f; }
template <> __device__ __forceinline__ int32_t lowest<int32_t>() { return INT32_MIN; }
template <> __device__ __forceinline__ int64_t lowest<int64_t>() { return INT64_MIN; }
template <> __device__ __forceinline__ uint8_t lowest<uint8_t>() { return 0; }

template <typename T>
__global__ void __launch_bounds__(TFD_CUDA_THREADS) pool_kernel(const T *x, T *y, tfd_dm_pool p, int64_t total) {
  typedef typename pool_io<T>::C C;
  for (int64_t i = first_index(); i < total; i += grid_step()) {
    int64_t ch = i % p.c, r = i / p.c, ox = r % p.ow;
    r /= p.ow;
    int64_t oy = r % p.oh, b = r / p.oh, y0, y1, x0, x1;
    tfd_window(oy, p.stride[0], p.pad_before[0], p.kh, p.h, &y0, &y1);
    tfd_window(ox, p.stride[1], p.pad_before[1], p.kw, p.w, &x0, &x1);
    C acc = p.max ? lowest<T>() : (C)0;
    for (int64_t iy = y0; iy < y1; iy++)
      for (int64_t ix = x0; ix < x1; ix++) {
        C v = pool_io<T>::load(x[((b * p.h + iy) * p.w + ix) * p.c + ch]);
        acc = p.max ? (v > acc ? v : acc) : acc + v;
      }
    if (!p.max) {
      int64_t count = (y1 - y0) * (x1 - x0);
      acc = count > 0 ? acc / (C)count : (C)0;
    }
    y[i] = pool_io<T>::store(acc);
  }
}

template <typename T> cudaError_t launch_pool(const tfd_cuda_launch *l, const tfd_dm_pool *p) {
  int64_t total = p->n * p->oh * p->ow * p->c;
  pool_kernel<T><<<grid_for(l, total), TFD_CUDA_THREADS, 0, l->stream>>>((const T *)p->x, (T *)p->y, *p, total);
  return cudaGetLastError();
}

// Element i of a real-typed image as float, as TensorFlow's ResizeBilinear reads it (k_image.c's load_float).
__device__ __forceinline__ float load_float(const void *x, tfd_dtype dt, int64_t i) {
  switch (dt) {
    case TFD_FLOAT64: return (float)((const double *)x)[i];
    case TFD_INT32: return (float)((const int32_t *)x)[i];
    case TFD_INT64: return (float)((const int64_t *)x)[i];
    case TFD_UINT8: return (float)((const uint8_t *)x)[i];
    case TFD_FLOAT16: return tfd_half_to_float(((const uint16_t *)x)[i]);
    default: return ((const float *)x)[i];
  }
}

__global__ void __launch_bounds__(TFD_CUDA_THREADS) bilinear_kernel(tfd_dm_resize p, float sy, float sx,
                                                                    int64_t total) {
  float *y = (float *)p.y;
  for (int64_t i = first_index(); i < total; i += grid_step()) {
    int64_t ch = i % p.c, r = i / p.c, ox = r % p.ow;
    r /= p.ow;
    int64_t oy = r % p.oh, b = r / p.oh, ylo, yhi, xlo, xhi;
    float fy, fx;
    tfd_dm_bilinear_index(oy, p.h, sy, p.half_pixel_centers, &ylo, &yhi, &fy);
    tfd_dm_bilinear_index(ox, p.w, sx, p.half_pixel_centers, &xlo, &xhi, &fx);
    int64_t top = (b * p.h + ylo) * p.w, bot = (b * p.h + yhi) * p.w;
    float tl = load_float(p.x, p.in_dtype, (top + xlo) * p.c + ch), tr = load_float(p.x, p.in_dtype, (top + xhi) * p.c + ch);
    float bl = load_float(p.x, p.in_dtype, (bot + xlo) * p.c + ch), br = load_float(p.x, p.in_dtype, (bot + xhi) * p.c + ch);
    y[i] = tfd_dm_lerp2(tl, tr, bl, br, fx, fy);
  }
}

template <typename W>
__global__ void __launch_bounds__(TFD_CUDA_THREADS) nearest_kernel(const W *x, W *y, tfd_dm_resize p, float sy,
                                                                   float sx, int64_t total) {
  for (int64_t i = first_index(); i < total; i += grid_step()) {
    int64_t ch = i % p.c, r = i / p.c, ox = r % p.ow;
    r /= p.ow;
    int64_t oy = r % p.oh, b = r / p.oh;
    int64_t iy = tfd_dm_nearest_index(oy, p.h, sy, p.align_corners, p.half_pixel_centers);
    int64_t ix = tfd_dm_nearest_index(ox, p.w, sx, p.align_corners, p.half_pixel_centers);
    y[i] = x[((b * p.h + iy) * p.w + ix) * p.c + ch];
  }
}

template <typename W>
cudaError_t launch_nearest(const tfd_cuda_launch *l, const tfd_dm_resize *p, float sy, float sx, int64_t total) {
  nearest_kernel<W><<<grid_for(l, total), TFD_CUDA_THREADS, 0, l->stream>>>((const W *)p->x, (W *)p->y, *p, sy, sx,
                                                                             total);
  return cudaGetLastError();
}

// Dilation2D (filter) and MaxPoolWithArgmax (argmax): one thread per output element, k_dilation.c's loop.
template <typename T>
__device__ inline T window_add(T a, T b) {
  return a + b;
}
template <>
__device__ inline int64_t window_add<int64_t>(int64_t a, int64_t b) {
  return (int64_t)((unsigned long long)a + (unsigned long long)b); // wraps as the CPU's
}

template <typename T>
__global__ void __launch_bounds__(TFD_CUDA_THREADS) window_max_kernel(tfd_dm_window_max p, T lowest, int64_t total) {
  const T *x = (const T *)p.x, *f = (const T *)p.filter;
  for (int64_t i = first_index(); i < total; i += grid_step()) {
    int64_t ch = i % p.c, r = i / p.c, ox = r % p.ow;
    r /= p.ow;
    int64_t oy = r % p.oh, b = r / p.oh, where = -1;
    T best = lowest;
    for (int64_t ti = 0; ti < p.kh; ti++) {
      int64_t iy = oy * p.stride[0] - p.pad_before[0] + ti * p.rate[0];
      if (iy < 0 || iy >= p.h) continue;
      for (int64_t tj = 0; tj < p.kw; tj++) {
        int64_t ix = ox * p.stride[1] - p.pad_before[1] + tj * p.rate[1];
        if (ix < 0 || ix >= p.w) continue;
        int64_t flat = ((b * p.h + iy) * p.w + ix) * p.c + ch;
        T v = x[flat];
        if (f) {
          v = window_add<T>(v, f[(ti * p.kw + tj) * p.c + ch]);
          if (v > best) best = v;
        } else if (where < 0 || v > best) {
          best = v;
          where = p.with_batch ? flat : flat - b * p.h * p.w * p.c;
        }
      }
    }
    ((T *)p.y)[i] = best;
    if (p.argmax) p.argmax[i] = where;
  }
}

// CropAndResize: one thread per output element, k_crop_and_resize.c's float arithmetic.
template <typename T>
__global__ void __launch_bounds__(TFD_CUDA_THREADS) crop_kernel(tfd_dm_crop p, int64_t total) {
  const T *img = (const T *)p.image;
  const int64_t H = p.h, W = p.w, ch = p.crop_h, cw = p.crop_w, depth = p.depth;
  for (int64_t i = first_index(); i < total; i += grid_step()) {
    int64_t dd = i % depth, r = i / depth, x = r % cw;
    r /= cw;
    int64_t y = r % ch, b = r / ch;
    const float y1 = p.boxes[b * 4], x1 = p.boxes[b * 4 + 1], y2 = p.boxes[b * 4 + 2], x2 = p.boxes[b * 4 + 3];
    const int64_t base = (int64_t)p.box_ind[b] * H * W * depth;
    const float hs = ch > 1 ? __fdiv_rn(__fmul_rn(y2 - y1, (float)(H - 1)), (float)(ch - 1)) : 0;
    const float ws = cw > 1 ? __fdiv_rn(__fmul_rn(x2 - x1, (float)(W - 1)), (float)(cw - 1)) : 0;
    const float in_y = ch > 1 ? __fadd_rn(__fmul_rn(y1, (float)(H - 1)), __fmul_rn((float)y, hs))
                              : __fmul_rn(__fmul_rn(0.5f, y1 + y2), (float)(H - 1));
    const float in_x = cw > 1 ? __fadd_rn(__fmul_rn(x1, (float)(W - 1)), __fmul_rn((float)x, ws))
                              : __fmul_rn(__fmul_rn(0.5f, x1 + x2), (float)(W - 1));
    float v = p.extrapolation;
    if (!(in_y < 0 || in_y > (float)(H - 1) || in_x < 0 || in_x > (float)(W - 1))) {
      if (p.nearest) {
        v = (float)img[base + ((int64_t)roundf(in_y) * W + (int64_t)roundf(in_x)) * depth + dd];
      } else {
        const int64_t top = (int64_t)floorf(in_y), bottom = (int64_t)ceilf(in_y);
        const int64_t left = (int64_t)floorf(in_x), right = (int64_t)ceilf(in_x);
        const float y_lerp = in_y - (float)top, x_lerp = in_x - (float)left;
        const float tl = (float)img[base + (top * W + left) * depth + dd], tr = (float)img[base + (top * W + right) * depth + dd];
        const float bl = (float)img[base + (bottom * W + left) * depth + dd],
                    br = (float)img[base + (bottom * W + right) * depth + dd];
        const float t = __fadd_rn(tl, __fmul_rn(tr - tl, x_lerp)), bo = __fadd_rn(bl, __fmul_rn(br - bl, x_lerp));
        v = __fadd_rn(t, __fmul_rn(bo - t, y_lerp));
      }
    }
    p.y[i] = v;
  }
}

template <typename T>
cudaError_t launch_crop(const tfd_cuda_launch *l, const tfd_dm_crop *p, int64_t total) {
  crop_kernel<T><<<grid_for(l, total), TFD_CUDA_THREADS, 0, l->stream>>>(*p, total);
  return cudaGetLastError();
}

// ImageProjectiveTransformV3: one thread per output element, device_math_elem.h's coordinates.
template <typename T>
__global__ void __launch_bounds__(TFD_CUDA_THREADS) transform_kernel(tfd_dm_transform p, int64_t total) {
  const T *img = (const T *)p.images, fill = (T)p.fill;
  for (int64_t i = first_index(); i < total; i += grid_step()) {
    int64_t ch = i % p.c, r = i / p.c, x = r % p.ow;
    r /= p.ow;
    int64_t y = r % p.oh, b = r / p.oh;
    float t[8], in_x = 0, in_y = 0;
    for (int q = 0; q < 8; q++) t[q] = p.transforms[(p.one_transform ? 0 : 8 * b) + q];
    bool ok = tfd_dm_transform_point(t, x, y, p.mode, p.h, p.w, &in_x, &in_y);
    T out = fill;
    if (ok && !p.bilinear) {
      int64_t ry = tfd_dm_transform_index(in_y, true), rx = tfd_dm_transform_index(in_x, true);
      if (ry >= 0 && ry < p.h && rx >= 0 && rx < p.w) out = img[((b * p.h + ry) * p.w + rx) * p.c + ch];
    } else if (ok) {
      const float y0 = floorf(in_y), x0 = floorf(in_x), y1 = y0 + 1, x1 = x0 + 1;
      int64_t iy0 = tfd_dm_transform_index(in_y, false), ix0 = tfd_dm_transform_index(in_x, false);
      bool far = iy0 == -2 || ix0 == -2;
      int64_t ys[2] = {far ? -2 : iy0, far ? -2 : iy0 + 1}, xs[2] = {far ? -2 : ix0, far ? -2 : ix0 + 1};
      float v[2][2];
      for (int a = 0; a < 2; a++)
        for (int e = 0; e < 2; e++) {
          bool in = ys[a] >= 0 && ys[a] < p.h && xs[e] >= 0 && xs[e] < p.w;
          v[a][e] = (float)(in ? img[((b * p.h + ys[a]) * p.w + xs[e]) * p.c + ch] : fill);
        }
      const float vf = __fadd_rn(__fmul_rn(x1 - in_x, v[0][0]), __fmul_rn(in_x - x0, v[0][1]));
      const float vc = __fadd_rn(__fmul_rn(x1 - in_x, v[1][0]), __fmul_rn(in_x - x0, v[1][1]));
      out = (T)__fadd_rn(__fmul_rn(y1 - in_y, vf), __fmul_rn(in_y - y0, vc));
    }
    ((T *)p.y)[i] = out;
  }
}

template <typename T>
cudaError_t launch_transform(const tfd_cuda_launch *l, const tfd_dm_transform *p, int64_t total) {
  transform_kernel<T><<<grid_for(l, total), TFD_CUDA_THREADS, 0, l->stream>>>(*p, total);
  return cudaGetLastError();
}

template <typename T>
cudaError_t launch_window_max(const tfd_cuda_launch *l, const tfd_dm_window_max *p, T lowest, int64_t total) {
  window_max_kernel<T><<<grid_for(l, total), TFD_CUDA_THREADS, 0, l->stream>>>(*p, lowest, total);
  return cudaGetLastError();
}

}  // namespace
}  // namespace tfd_cuda

using namespace tfd_cuda;

extern "C" cudaError_t tfd_cuda_crop_and_resize(const tfd_cuda_launch *l, const tfd_dm_crop *p) {
  int64_t total = p->n * p->crop_h * p->crop_w * p->depth;
  switch (p->dtype) {
    case TFD_FLOAT32: return launch_crop<float>(l, p, total);
    case TFD_FLOAT64: return launch_crop<double>(l, p, total);
    case TFD_INT64: return launch_crop<int64_t>(l, p, total);
    default: return cudaErrorInvalidValue;
  }
}

extern "C" cudaError_t tfd_cuda_image_transform(const tfd_cuda_launch *l, const tfd_dm_transform *p) {
  int64_t total = p->n * p->oh * p->ow * p->c;
  switch (p->dtype) {
    case TFD_FLOAT32: return launch_transform<float>(l, p, total);
    case TFD_FLOAT64: return launch_transform<double>(l, p, total);
    case TFD_INT64: return launch_transform<int64_t>(l, p, total);
    default: return cudaErrorInvalidValue;
  }
}

extern "C" cudaError_t tfd_cuda_window_max(const tfd_cuda_launch *l, const tfd_dm_window_max *p) {
  int64_t total = p->n * p->oh * p->ow * p->c;
  switch (p->dtype) {
    case TFD_FLOAT32: return launch_window_max<float>(l, p, -3.402823466e+38f, total);
    case TFD_FLOAT64: return launch_window_max<double>(l, p, -1.7976931348623157e+308, total);
    case TFD_INT64: return launch_window_max<int64_t>(l, p, (int64_t)(-9223372036854775807LL - 1), total);
    default: return cudaErrorInvalidValue;
  }
}

extern "C" cudaError_t tfd_cuda_pool(const tfd_cuda_launch *l, const tfd_dm_pool *p) {
  switch (p->dtype) {
    case TFD_FLOAT32: return launch_pool<float>(l, p);
    case TFD_FLOAT64: return launch_pool<double>(l, p);
    case TFD_FLOAT16: return launch_pool<half_bits>(l, p);
    case TFD_INT32: return launch_pool<int32_t>(l, p); // MaxPool only (checked by the caller)
    case TFD_INT64: return launch_pool<int64_t>(l, p);
    case TFD_UINT8: return launch_pool<uint8_t>(l, p);
    default: return cudaErrorInvalidValue;
  }
}

extern "C" cudaError_t tfd_cuda_resize(const tfd_cuda_launch *l, const tfd_dm_resize *p) {
  int64_t total = p->n * p->oh * p->ow * p->c;
  float sy = tfd_dm_resize_scale(p->h, p->oh, p->align_corners), sx = tfd_dm_resize_scale(p->w, p->ow, p->align_corners);
  if (p->bilinear) {
    bilinear_kernel<<<grid_for(l, total), TFD_CUDA_THREADS, 0, l->stream>>>(*p, sy, sx, total);
    return cudaGetLastError();
  }
  switch (tfd_cuda_dtype_size(p->in_dtype)) {
    case 1: return launch_nearest<uint8_t>(l, p, sy, sx, total);
    case 2: return launch_nearest<uint16_t>(l, p, sy, sx, total);
    case 4: return launch_nearest<uint32_t>(l, p, sy, sx, total);
    case 8: return launch_nearest<uint64_t>(l, p, sy, sx, total);
    default: return cudaErrorInvalidValue;
  }
}
