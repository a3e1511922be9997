/* The C floor: the hand-written kernels tfdev_bench measures tfdev against, compiled at -O3
 * whatever the build type (the pragma below; tfdev itself builds at -O2 in RelWithDebInfo), with
 * branch-free loops the compiler vectorises (checked with objdump: ReLU is addps, cmpltps, andps).
 * Included once, by bench_runtime.c: every function here is static. */
#ifndef TFDEV_BENCH_FLOOR_H
#define TFDEV_BENCH_FLOOR_H

#include <math.h>
#include <stdint.h>

#include "runtime/kernels/vector_clones.h"
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("O3")
#endif

/* BiasAdd in place: y[r][j] += b[j] over rows x n. */
static void floor_bias(float *restrict y, const float *restrict b, int rows, int n) {
  for (int r = 0; r < rows; r++) {
    float *restrict yr = y + (int64_t)r * n;
    for (int j = 0; j < n; j++) yr[j] += b[j];
  }
}

/* BiasAdd then ReLU in place. `v > 0 ? v : 0` vectorises to a compare and a mask: no branch per
 * element. */
static void floor_bias_relu(float *restrict y, const float *restrict b, int rows, int n) {
  for (int r = 0; r < rows; r++) {
    float *restrict yr = y + (int64_t)r * n;
    for (int j = 0; j < n; j++) {
      float v = yr[j] + b[j];
      yr[j] = v > 0.0f ? v : 0.0f;
    }
  }
}

static void floor_softmax(float *y, int rows, int n) {
  for (int r = 0; r < rows; r++) {
    float *yr = y + (int64_t)r * n, mx = yr[0], sum = 0;
    for (int j = 1; j < n; j++) mx = yr[j] > mx ? yr[j] : mx;
    for (int j = 0; j < n; j++) sum += (yr[j] = expf(yr[j] - mx));
    float inv = 1.0f / sum;
    for (int j = 0; j < n; j++) yr[j] *= inv;
  }
}

/* STREAM's add, c[i] = a[i] + b[i], with normal stores. */
static void floor_add_plain(float *restrict c, const float *restrict a, const float *restrict b, int64_t n) {
  for (int64_t i = 0; i < n; i++) c[i] = a[i] + b[i];
}

/* The same with streaming (non-temporal) stores, the store kind tfdev's AddV2 uses for outputs of
 * 8 MiB and more (runtime/kernels/math/k_cwise.c). */
static void floor_add_stream(float *restrict c, const float *restrict a, const float *restrict b, int64_t n) {
#if defined(__SSE2__)
  int64_t i = 0;
  for (; i < n && ((uintptr_t)(c + i) & 15); i++) c[i] = a[i] + b[i];
  for (; i + 16 <= n; i += 16) {
    __m128 x0 = _mm_add_ps(_mm_loadu_ps(a + i), _mm_loadu_ps(b + i));
    __m128 x1 = _mm_add_ps(_mm_loadu_ps(a + i + 4), _mm_loadu_ps(b + i + 4));
    __m128 x2 = _mm_add_ps(_mm_loadu_ps(a + i + 8), _mm_loadu_ps(b + i + 8));
    __m128 x3 = _mm_add_ps(_mm_loadu_ps(a + i + 12), _mm_loadu_ps(b + i + 12));
    _mm_stream_ps(c + i, x0);
    _mm_stream_ps(c + i + 4, x1);
    _mm_stream_ps(c + i + 8, x2);
    _mm_stream_ps(c + i + 12, x3);
  }
  for (; i < n; i++) c[i] = a[i] + b[i];
  _mm_sfence();
#else
  floor_add_plain(c, a, b, n);
#endif
}

/* The elementwise math issue 26 added, one libm call (or expression) per element, as a C programmer
 * writes it: the floor of tfdev's k_math.c / k_logic.c rows. op names the function. */
typedef enum floor_math { FM_FLOOR, FM_CEIL, FM_ROUND, FM_SIGN, FM_SIN, FM_COS, FM_TAN, FM_ATAN, FM_SINH, FM_ERF,
                          FM_EXPM1, FM_LOG1P, FM_ATAN2, FM_MOD, FM_DIV_NO_NAN } floor_math;

/* Compiled for the baseline, AVX2 and AVX-512 and picked per CPU, as tfdev's rows are: a C programmer
 * targeting this machine gets floorf and ceilf as single vector instructions. */
TFD_VECTOR_CLONES static void floor_math_f32(floor_math op, float *restrict y, const float *restrict a, const float *restrict b,
                           int64_t n) {
  switch (op) {
    case FM_FLOOR: for (int64_t i = 0; i < n; i++) y[i] = floorf(a[i]); break;
    case FM_CEIL: for (int64_t i = 0; i < n; i++) y[i] = ceilf(a[i]); break;
    case FM_ROUND: for (int64_t i = 0; i < n; i++) y[i] = rintf(a[i]); break; /* half to even */
    case FM_SIGN: for (int64_t i = 0; i < n; i++) y[i] = (float)((a[i] > 0) - (a[i] < 0)); break;
    case FM_SIN: for (int64_t i = 0; i < n; i++) y[i] = sinf(a[i]); break;
    case FM_COS: for (int64_t i = 0; i < n; i++) y[i] = cosf(a[i]); break;
    case FM_TAN: for (int64_t i = 0; i < n; i++) y[i] = tanf(a[i]); break;
    case FM_ATAN: for (int64_t i = 0; i < n; i++) y[i] = atanf(a[i]); break;
    case FM_SINH: for (int64_t i = 0; i < n; i++) y[i] = sinhf(a[i]); break;
    case FM_ERF: for (int64_t i = 0; i < n; i++) y[i] = erff(a[i]); break;
    case FM_EXPM1: for (int64_t i = 0; i < n; i++) y[i] = expm1f(a[i]); break;
    case FM_LOG1P: for (int64_t i = 0; i < n; i++) y[i] = log1pf(a[i]); break;
    case FM_ATAN2: for (int64_t i = 0; i < n; i++) y[i] = atan2f(a[i], b[i]); break;
    case FM_MOD: for (int64_t i = 0; i < n; i++) y[i] = fmodf(a[i], b[i]); break;
    case FM_DIV_NO_NAN: for (int64_t i = 0; i < n; i++) y[i] = b[i] == 0 ? 0 : a[i] / b[i]; break;
  }
}

/* complex64 elementwise, as a C programmer writes it over float pairs: the floors of k_spectral.c's
 * Complex (parts interleaved), ComplexAbs (hypotf) and complex Mul rows. */
static void floor_complex_make(float *restrict y, const float *restrict re, const float *restrict im, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    y[2 * i] = re[i];
    y[2 * i + 1] = im[i];
  }
}
static void floor_complex_abs(float *restrict y, const float *restrict z, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] = hypotf(z[2 * i], z[2 * i + 1]);
}
static void floor_complex_mul(float *restrict y, const float *restrict a, const float *restrict b, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    float ar = a[2 * i], ai = a[2 * i + 1], br = b[2 * i], bi = b[2 * i + 1];
    y[2 * i] = ar * br - ai * bi;
    y[2 * i + 1] = ar * bi + ai * br;
  }
}

/* A textbook in-place radix-2 FFT of rows of n complex floats (n a power of two), twiddles tw[k] =
 * exp(-2 pi i k / n) precomputed for k < n / 2: the floor of tfdev's FFT at power-of-two lengths. */
static void floor_fft_rows(float *x, int64_t rows, int64_t n, const float *tw) {
  for (int64_t r = 0; r < rows; r++, x += 2 * n) {
    for (int64_t i = 1, j = 0; i < n; i++) {
      int64_t bit = n >> 1;
      for (; j & bit; bit >>= 1) j ^= bit;
      j ^= bit;
      if (i < j) {
        float tr = x[2 * i], ti = x[2 * i + 1];
        x[2 * i] = x[2 * j], x[2 * i + 1] = x[2 * j + 1];
        x[2 * j] = tr, x[2 * j + 1] = ti;
      }
    }
    for (int64_t len = 2; len <= n; len <<= 1) {
      int64_t half = len >> 1, step = n / len;
      for (int64_t b = 0; b < n; b += len)
        for (int64_t k = 0; k < half; k++) {
          float wr = tw[2 * k * step], wi = tw[2 * k * step + 1];
          float *u = x + 2 * (b + k), *v = x + 2 * (b + k + half);
          float vr = v[0] * wr - v[1] * wi, vi = v[0] * wi + v[1] * wr;
          v[0] = u[0] - vr, v[1] = u[1] - vi;
          u[0] += vr, u[1] += vi;
        }
    }
  }
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif

#endif
