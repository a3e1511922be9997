// The kernels products and convolutions need beside cuBLASLt and cuDNN: bias and activation after a
// product whose epilogue the library cannot fuse, _FusedConv2D's epilogue, TensorFlow's HWIO filter
// into cuDNN's layout, the explicit zero padding of asymmetric SAME convolutions and its crop, and
// a direct convolution (plain loops) for shapes cuDNN refuses. Activations are device_math_elem.h's.
#include "common.cuh"

namespace tfd_cuda {
namespace {

template <typename T>
__global__ void __launch_bounds__(TFD_CUDA_THREADS) bias_act_kernel(T *y, const T *bias, int64_t n, int64_t count,
                                                                    int op, float alpha) {
  for (int64_t i = first_index(); i < count; i += grid_step()) {
    T v = y[i];
    if (bias) v = binary(TFD_DM_ADD, v, bias[i % n]);
    y[i] = activate(op, v, alpha);
  }
}

template <typename T>
__global__ void __launch_bounds__(TFD_CUDA_THREADS) conv_epilogue_kernel(tfd_cuda_epilogue e, int op) {
  const T *conv = (const T *)e.conv, *bias = (const T *)e.bias, *scale = (const T *)e.scale,
          *shift = (const T *)e.shift, *addend = (const T *)e.addend, *prelu = (const T *)e.prelu;
  T *y = (T *)e.y;
  for (int64_t i = first_index(); i < e.count; i += grid_step()) {
    int64_t ch = i % e.o;
    T v = conv[i];
    if (bias) v = binary(TFD_DM_ADD, v, bias[ch]); /* k_conv.c's order, should both be given */
    if (scale) v = binary(TFD_DM_MUL, v, scale[ch]);
    if (shift) v = binary(TFD_DM_ADD, v, shift[ch]);
    if (addend) v = binary(TFD_DM_ADD, v, addend[i]);
    y[i] = prelu ? binary(TFD_DM_PRELU, v, prelu[i % e.prelu_n]) : activate(op, v, e.alpha);
  }
}

template <typename T>
__global__ void __launch_bounds__(TFD_CUDA_THREADS) filter_kernel(const T *hwio, int64_t kh, int64_t kw, int64_t c,
                                                                  int64_t o, int64_t cg, bool depthwise, T *ohwi,
                                                                  int64_t total) {
  for (int64_t t = first_index(); t < total; t += grid_step()) {
    int64_t ci = t % cg, r = t / cg, x = r % kw;
    r /= kw;
    int64_t y = r % kh, oc = r / kh;
    ohwi[t] = hwio[tfd_hwio_index(oc, y, x, ci, kw, c, o, depthwise)];
  }
}

template <typename W>
__global__ void __launch_bounds__(TFD_CUDA_THREADS) pad_kernel(const W *x, int64_t h, int64_t w, int64_t c,
                                                               int64_t top, int64_t left, int64_t hp, int64_t wp,
                                                               W *xp, int64_t total) {
  for (int64_t t = first_index(); t < total; t += grid_step()) {
    int64_t ch = t % c, r = t / c, px = r % wp;
    r /= wp;
    int64_t py = r % hp, b = r / hp, iy = py - top, ix = px - left;
    W v;
    if (iy >= 0 && iy < h && ix >= 0 && ix < w) v = x[((b * h + iy) * w + ix) * c + ch];
    else memset(&v, 0, sizeof v);
    xp[t] = v;
  }
}

template <typename W>
__global__ void __launch_bounds__(TFD_CUDA_THREADS) crop_kernel(const W *xp, int64_t hp, int64_t wp, int64_t c,
                                                                int64_t top, int64_t left, int64_t h, int64_t w, W *y,
                                                                int64_t total) {
  for (int64_t t = first_index(); t < total; t += grid_step()) {
    int64_t ch = t % c, r = t / c, ix = r % w;
    r /= w;
    int64_t iy = r % h, b = r / h;
    y[t] = xp[((b * hp + iy + top) * wp + ix + left) * c + ch];
  }
}

// Forward: one thread per output element (b, oy, ox, oc).
template <typename T>
__global__ void __launch_bounds__(TFD_CUDA_THREADS) conv_forward_direct(tfd_dm_conv p, int64_t total) {
  const T *x = (const T *)p.x, *f = (const T *)p.filter;
  T *y = (T *)p.y;
  int64_t m = p.depthwise && p.c ? p.o / p.c : 0;
  for (int64_t t = first_index(); t < total; t += grid_step()) {
    int64_t oc = t % p.o, r = t / p.o, ox = r % p.ow;
    r /= p.ow;
    int64_t oy = r % p.oh, b = r / p.oh;
    T acc = 0;
    for (int64_t ky = 0; ky < p.kh; ky++) {
      int64_t iy = oy * p.stride[0] - p.pad_before[0] + ky * p.dilation[0];
      if (iy < 0 || iy >= p.h) continue;
      for (int64_t kx = 0; kx < p.kw; kx++) {
        int64_t ix = ox * p.stride[1] - p.pad_before[1] + kx * p.dilation[1];
        if (ix < 0 || ix >= p.w) continue;
        const T *px = x + ((b * p.h + iy) * p.w + ix) * p.c;
        const T *pf = f + (ky * p.kw + kx) * p.c * (p.depthwise ? m : p.o);
        if (p.depthwise) {
          int64_t ic = oc / m;
          acc += px[ic] * pf[ic * m + oc % m];
        } else {
          for (int64_t ic = 0; ic < p.c; ic++) acc += px[ic] * pf[ic * p.o + oc];
        }
      }
    }
    y[t] = acc;
  }
}

// Conv2DBackpropInput: one thread per input-gradient element (b, iy, ix, ic); p.x is out_backprop.
template <typename T>
__global__ void __launch_bounds__(TFD_CUDA_THREADS) conv_backprop_direct(tfd_dm_conv p, int64_t total) {
  const T *dy = (const T *)p.x, *f = (const T *)p.filter;
  T *dx = (T *)p.y;
  int64_t m = p.depthwise && p.c ? p.o / p.c : 0;
  for (int64_t t = first_index(); t < total; t += grid_step()) {
    int64_t ic = t % p.c, r = t / p.c, ix = r % p.w;
    r /= p.w;
    int64_t iy = r % p.h, b = r / p.h;
    T acc = 0;
    for (int64_t ky = 0; ky < p.kh; ky++) {
      int64_t sy = iy + p.pad_before[0] - ky * p.dilation[0];
      if (sy < 0 || sy % p.stride[0] != 0 || sy / p.stride[0] >= p.oh) continue;
      int64_t oy = sy / p.stride[0];
      for (int64_t kx = 0; kx < p.kw; kx++) {
        int64_t sx = ix + p.pad_before[1] - kx * p.dilation[1];
        if (sx < 0 || sx % p.stride[1] != 0 || sx / p.stride[1] >= p.ow) continue;
        int64_t ox = sx / p.stride[1];
        const T *pg = dy + ((b * p.oh + oy) * p.ow + ox) * p.o;
        const T *pf = f + (ky * p.kw + kx) * p.c * (p.depthwise ? m : p.o);
        if (p.depthwise) {
          for (int64_t q = 0; q < m; q++) acc += pg[ic * m + q] * pf[ic * m + q];
        } else {
          for (int64_t oc = 0; oc < p.o; oc++) acc += pg[oc] * pf[ic * p.o + oc];
        }
      }
    }
    dx[t] = acc;
  }
}

template <typename W>
cudaError_t launch_pad(const tfd_cuda_launch *l, const void *x, int64_t n, int64_t h, int64_t w, int64_t c,
                       int64_t top, int64_t bottom, int64_t left, int64_t right, void *xp) {
  int64_t hp = h + top + bottom, wp = w + left + right, total = n * hp * wp * c;
  if (total <= 0) return cudaSuccess;
  pad_kernel<W><<<grid_for(l, total), TFD_CUDA_THREADS, 0, l->stream>>>((const W *)x, h, w, c, top, left, hp, wp,
                                                                        (W *)xp, total);
  return cudaGetLastError();
}

template <typename W>
cudaError_t launch_crop(const tfd_cuda_launch *l, const void *xp, int64_t n, int64_t hp, int64_t wp, int64_t c,
                        int64_t top, int64_t left, int64_t h, int64_t w, void *y) {
  int64_t total = n * h * w * c;
  if (total <= 0) return cudaSuccess;
  crop_kernel<W><<<grid_for(l, total), TFD_CUDA_THREADS, 0, l->stream>>>((const W *)xp, hp, wp, c, top, left, h, w,
                                                                         (W *)y, total);
  return cudaGetLastError();
}

}  // namespace
}  // namespace tfd_cuda

using namespace tfd_cuda;

extern "C" cudaError_t tfd_cuda_bias_act(const tfd_cuda_launch *l, tfd_dtype dt, void *y, const void *bias, int64_t n,
                                         int64_t count, tfd_activation act, float alpha) {
  if (count <= 0 || (!bias && act_op(act) < 0)) return cudaSuccess;
  if (dt == TFD_FLOAT64)
    bias_act_kernel<double><<<grid_for(l, count), TFD_CUDA_THREADS, 0, l->stream>>>(
        (double *)y, (const double *)bias, n, count, act_op(act), alpha);
  else
    bias_act_kernel<float><<<grid_for(l, count), TFD_CUDA_THREADS, 0, l->stream>>>((float *)y, (const float *)bias, n,
                                                                                   count, act_op(act), alpha);
  return cudaGetLastError();
}

extern "C" cudaError_t tfd_cuda_conv_epilogue(const tfd_cuda_launch *l, const tfd_cuda_epilogue *e) {
  if (e->count <= 0) return cudaSuccess;
  if (e->dtype == TFD_FLOAT64)
    conv_epilogue_kernel<double><<<grid_for(l, e->count), TFD_CUDA_THREADS, 0, l->stream>>>(*e, act_op(e->act));
  else
    conv_epilogue_kernel<float><<<grid_for(l, e->count), TFD_CUDA_THREADS, 0, l->stream>>>(*e, act_op(e->act));
  return cudaGetLastError();
}

extern "C" cudaError_t tfd_cuda_filter_to_ohwi(const tfd_cuda_launch *l, tfd_dtype dt, const void *hwio, int64_t kh,
                                               int64_t kw, int64_t c, int64_t o, bool depthwise, void *ohwi) {
  int64_t cg = depthwise ? 1 : c, total = o * kh * kw * cg;
  if (total <= 0) return cudaSuccess;
  if (dt == TFD_FLOAT64)
    filter_kernel<double><<<grid_for(l, total), TFD_CUDA_THREADS, 0, l->stream>>>(
        (const double *)hwio, kh, kw, c, o, cg, depthwise, (double *)ohwi, total);
  else
    filter_kernel<float><<<grid_for(l, total), TFD_CUDA_THREADS, 0, l->stream>>>((const float *)hwio, kh, kw, c, o, cg,
                                                                                 depthwise, (float *)ohwi, total);
  return cudaGetLastError();
}

extern "C" cudaError_t tfd_cuda_pad_nhwc(const tfd_cuda_launch *l, size_t eb, const void *x, int64_t n, int64_t h,
                                         int64_t w, int64_t c, int64_t top, int64_t bottom, int64_t left,
                                         int64_t right, void *xp) {
  switch (eb) {
    case 2: return launch_pad<uint16_t>(l, x, n, h, w, c, top, bottom, left, right, xp);
    case 4: return launch_pad<uint32_t>(l, x, n, h, w, c, top, bottom, left, right, xp);
    case 8: return launch_pad<uint64_t>(l, x, n, h, w, c, top, bottom, left, right, xp);
    default: return cudaErrorInvalidValue;
  }
}

extern "C" cudaError_t tfd_cuda_crop_nhwc(const tfd_cuda_launch *l, size_t eb, const void *xp, int64_t n, int64_t hp,
                                          int64_t wp, int64_t c, int64_t top, int64_t left, int64_t h, int64_t w,
                                          void *y) {
  switch (eb) {
    case 2: return launch_crop<uint16_t>(l, xp, n, hp, wp, c, top, left, h, w, y);
    case 4: return launch_crop<uint32_t>(l, xp, n, hp, wp, c, top, left, h, w, y);
    case 8: return launch_crop<uint64_t>(l, xp, n, hp, wp, c, top, left, h, w, y);
    default: return cudaErrorInvalidValue;
  }
}

extern "C" cudaError_t tfd_cuda_conv_direct(const tfd_cuda_launch *l, const tfd_dm_conv *p) {
  int64_t total = p->backprop_input ? p->n * p->h * p->w * p->c : p->n * p->oh * p->ow * p->o;
  if (total <= 0) return cudaSuccess;
  bool f64 = p->dtype == TFD_FLOAT64;
  if (p->backprop_input) {
    if (f64) conv_backprop_direct<double><<<grid_for(l, total), TFD_CUDA_THREADS, 0, l->stream>>>(*p, total);
    else conv_backprop_direct<float><<<grid_for(l, total), TFD_CUDA_THREADS, 0, l->stream>>>(*p, total);
  } else {
    if (f64) conv_forward_direct<double><<<grid_for(l, total), TFD_CUDA_THREADS, 0, l->stream>>>(*p, total);
    else conv_forward_direct<float><<<grid_for(l, total), TFD_CUDA_THREADS, 0, l->stream>>>(*p, total);
  }
  return cudaGetLastError();
}
