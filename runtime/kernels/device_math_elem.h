/* The per-element arithmetic behind the device math (device_math.h), written once for every side that
 * runs it: the CPU kernels (Cast, the random ops), the test suite's fake GPU (plain C loops) and the
 * CUDA kernels (gpu/kernels/, where TFD_HD makes each function __host__ __device__). So what CI checks
 * on the fake GPU against the CPU kernels is the very code a GPU runs, and a GPU result that differs
 * from the CPU's points at the launch, not the formula.
 *
 * Semantics follow the CPU kernels (k_cwise.c, k_logic.c, k_math.c, activation.c, k_basic.c, k_random.c),
 * which follow TensorFlow's: integer arithmetic wraps (done in unsigned), Relu of NaN is 0, Softplus
 * uses TensorFlow's thresholds, Cast truncates toward zero and saturates from floats. The CPU kernels
 * vectorise their own rows; element for element they compute what these functions compute, up to
 * the last bit of transcendental functions (libm here, CUDA's there). */
#ifndef TFDEV_RUNTIME_DEVICE_MATH_ELEM_H
#define TFDEV_RUNTIME_DEVICE_MATH_ELEM_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "../core/half.h"
#include "../core/hd.h"
#include "device_math.h"

/* ---- walks ---- */
/* Operand op's element offset for linear output index i of w (w->dims all >= 1). */
static inline TFD_HD int64_t tfd_dm_walk_offset(const tfd_dm_walk *w, int op, int64_t i) {
  int64_t off = w->offsets[op];
  for (int d = w->nd - 1; d >= 0; d--) {
    int64_t q = i % w->dims[d];
    i /= w->dims[d];
    off += q * w->strides[op][d];
  }
  return off;
}

/* Elements w covers. */
static inline TFD_HD int64_t tfd_dm_walk_count(const tfd_dm_walk *w) {
  int64_t n = 1;
  for (int d = 0; d < w->nd; d++) n *= w->dims[d];
  return n;
}

/* ---- unary ---- */
#define TFD_DM_SELU_SCALE 1.0507009873554804934193349852946
#define TFD_DM_SELU_SCALE_ALPHA 1.7580993408473768599402175208123
/* Softplus thresholds: log(epsilon) + 2 of each type, as TensorFlow's. */
#define TFD_DM_SOFTPLUS_F32 (-13.942385152878742f)
#define TFD_DM_SOFTPLUS_F64 (-34.04365338911715)

/* Float unary ops; S is libm's suffix for T (f for float, nothing for double), TH Softplus' threshold. */
#define TFD_DM_FLOAT_UNARY(NAME, T, S, TH)                                                      \
  static inline TFD_HD T NAME(int op, T x, T alpha) {                                           \
    switch (op) {                                                                               \
      case TFD_DM_NEG: return -x;                                                               \
      case TFD_DM_ABS: return fabs##S(x);                                                       \
      case TFD_DM_SQUARE: return x * x;                                                         \
      case TFD_DM_EXP: return exp##S(x);                                                        \
      case TFD_DM_LOG: return log##S(x);                                                        \
      case TFD_DM_SQRT: return sqrt##S(x);                                                      \
      case TFD_DM_RSQRT: return (T)1 / sqrt##S(x);                                              \
      case TFD_DM_RECIPROCAL: return (T)1 / x;                                                  \
      case TFD_DM_RELU: return x < 0 ? (T)0 : x;                                                \
      case TFD_DM_RELU6: return x < 0 ? (T)0 : (x > 6 ? (T)6 : x);                              \
      case TFD_DM_ELU: return x < 0 ? expm1##S(x) : x;                                          \
      case TFD_DM_SELU: return x < 0 ? (T)TFD_DM_SELU_SCALE_ALPHA * expm1##S(x) : (T)TFD_DM_SELU_SCALE * x; \
      case TFD_DM_SOFTPLUS: return x > -(TH) ? x : (x < (TH) ? exp##S(x) : log1p##S(exp##S(x))); \
      case TFD_DM_LEAKY_RELU: return x > 0 ? x : alpha * x;                                     \
      case TFD_DM_SIGMOID: return (T)1 / ((T)1 + exp##S(-x));                                   \
      case TFD_DM_TANH: return tanh##S(x);                                                      \
      case TFD_DM_FLOOR: return floor##S(x);                                                    \
      case TFD_DM_CEIL: return ceil##S(x);                                                      \
      case TFD_DM_SIN: return sin##S(x);                                                        \
      case TFD_DM_COS: return cos##S(x);                                                        \
      case TFD_DM_ACOS: return acos##S(x);                                                      \
      case TFD_DM_ACOSH: return acosh##S(x);                                                    \
      case TFD_DM_ASIN: return asin##S(x);                                                      \
      case TFD_DM_ASINH: return asinh##S(x);                                                    \
      case TFD_DM_ATAN: return atan##S(x);                                                      \
      case TFD_DM_ATANH: return atanh##S(x);                                                    \
      case TFD_DM_COSH: return cosh##S(x);                                                      \
      case TFD_DM_SINH: return sinh##S(x);                                                      \
      case TFD_DM_TAN: return tan##S(x);                                                        \
      case TFD_DM_ERF: return erf##S(x);                                                        \
      case TFD_DM_EXPM1: return expm1##S(x);                                                    \
      case TFD_DM_LOG1P: return log1p##S(x);                                                    \
      case TFD_DM_ROUND: return rint##S(x); /* the default rounding mode: half to even */      \
      case TFD_DM_SIGN: return x != x ? x : x < 0 ? (T)-1 : x > 0 ? (T)1 : (T)0;                \
      default: return x;                                                                        \
    }                                                                                           \
  }
TFD_DM_FLOAT_UNARY(tfd_dm_unary_f32, float, f, TFD_DM_SOFTPLUS_F32)
TFD_DM_FLOAT_UNARY(tfd_dm_unary_f64, double, , TFD_DM_SOFTPLUS_F64)

/* NEG, ABS, SQUARE, SIGN and ROUND (the value itself) on integers, wrapping (Abs of the lowest value is
 * itself, as in TensorFlow). */
static inline TFD_HD int64_t tfd_dm_unary_i64(int op, int64_t x) {
  uint64_t u = (uint64_t)x;
  switch (op) {
    case TFD_DM_NEG: return (int64_t)(0 - u);
    case TFD_DM_ABS: return x < 0 ? (int64_t)(0 - u) : x;
    case TFD_DM_SQUARE: return (int64_t)(u * u);
    case TFD_DM_SIGN: return (int64_t)((x > 0) - (x < 0));
    default: return x;
  }
}
static inline TFD_HD int32_t tfd_dm_unary_i32(int op, int32_t x) {
  uint32_t u = (uint32_t)x;
  switch (op) {
    case TFD_DM_NEG: return (int32_t)(0 - u);
    case TFD_DM_ABS: return x < 0 ? (int32_t)(0 - u) : x;
    case TFD_DM_SQUARE: return (int32_t)(u * u);
    case TFD_DM_SIGN: return (int32_t)((x > 0) - (x < 0));
    default: return x;
  }
}

/* The activations of fused epilogues (activation.h's tfd_activation), as activation.c computes them
 * (LeakyRelu there is relu(x) + alpha * min(x, 0): the same value but for the sign of a zero). */
static inline TFD_HD float tfd_dm_activation_f32(int act, float x, float alpha) {
  switch (act) {
    case TFD_ACT_RELU: return tfd_dm_unary_f32(TFD_DM_RELU, x, alpha);
    case TFD_ACT_RELU6: return tfd_dm_unary_f32(TFD_DM_RELU6, x, alpha);
    case TFD_ACT_ELU: return tfd_dm_unary_f32(TFD_DM_ELU, x, alpha);
    case TFD_ACT_LEAKY_RELU: return tfd_dm_unary_f32(TFD_DM_LEAKY_RELU, x, alpha);
    case TFD_ACT_TANH: return tfd_dm_unary_f32(TFD_DM_TANH, x, alpha);
    case TFD_ACT_SIGMOID: return tfd_dm_unary_f32(TFD_DM_SIGMOID, x, alpha);
    default: return x;
  }
}
static inline TFD_HD double tfd_dm_activation_f64(int act, double x, double alpha) {
  switch (act) {
    case TFD_ACT_RELU: return tfd_dm_unary_f64(TFD_DM_RELU, x, alpha);
    case TFD_ACT_RELU6: return tfd_dm_unary_f64(TFD_DM_RELU6, x, alpha);
    case TFD_ACT_ELU: return tfd_dm_unary_f64(TFD_DM_ELU, x, alpha);
    case TFD_ACT_LEAKY_RELU: return tfd_dm_unary_f64(TFD_DM_LEAKY_RELU, x, alpha);
    case TFD_ACT_TANH: return tfd_dm_unary_f64(TFD_DM_TANH, x, alpha);
    case TFD_ACT_SIGMOID: return tfd_dm_unary_f64(TFD_DM_SIGMOID, x, alpha);
    default: return x;
  }
}

/* ---- binary ---- */
/* Floats. MAXIMUM and MINIMUM give a NaN on either side, as TensorFlow's do (Eigen::PropagateNaN). */
#define TFD_DM_FLOAT_BINARY(NAME, T, FLOOR, FMOD, POW, ATAN2)             \
  static inline TFD_HD T NAME(int op, T a, T b) {                         \
    switch (op) {                                                         \
      case TFD_DM_ADD: return a + b;                                      \
      case TFD_DM_SUB: return a - b;                                      \
      case TFD_DM_MUL: return a * b;                                      \
      case TFD_DM_DIV: return a / b;                                      \
      case TFD_DM_MAXIMUM: return a > b || a != a ? a : b;                \
      case TFD_DM_MINIMUM: return a < b || a != a ? a : b;                \
      case TFD_DM_POW: return POW(a, b);                                  \
      case TFD_DM_SQUARED_DIFFERENCE: return (a - b) * (a - b);           \
      case TFD_DM_FLOOR_DIV: return FLOOR(a / b);                         \
      case TFD_DM_FLOOR_MOD: {                                            \
        T r = FMOD(a, b);                                                 \
        return (r != 0 && ((b < 0) != (r < 0))) ? r + b : r;              \
      }                                                                   \
      case TFD_DM_PRELU: return a > 0 ? a : b * a;                        \
      case TFD_DM_DIV_NO_NAN: return b == 0 ? (T)0 : a / b;               \
      case TFD_DM_MOD: return FMOD(a, b);                                 \
      case TFD_DM_CLIP_MIN: return b < a ? b : a;                         \
      case TFD_DM_CLIP_MAX: return a < b ? b : a;                         \
      case TFD_DM_ATAN2: return ATAN2(a, b);                              \
      default: return a;                                                  \
    }                                                                     \
  }
TFD_DM_FLOAT_BINARY(tfd_dm_binary_f32, float, floorf, fmodf, powf, atan2f)
TFD_DM_FLOAT_BINARY(tfd_dm_binary_f64, double, floor, fmod, pow, atan2)

/* Integers, wrapping; division and FLOOR_DIV/FLOOR_MOD/MOD by 0 give 0 (refused on the host first),
 * by -1 a wrapping negation (MIN / -1 overflows in C); POW by squaring, a negative exponent 0. */
#define TFD_DM_INT_BINARY(NAME, T, U)                                          \
  static inline TFD_HD T NAME(int op, T a, T b) {                              \
    U ua = (U)a, ub = (U)b;                                                    \
    switch (op) {                                                              \
      case TFD_DM_ADD: return (T)(ua + ub);                                    \
      case TFD_DM_SUB: return (T)(ua - ub);                                    \
      case TFD_DM_MUL: return (T)(ua * ub);                                    \
      case TFD_DM_DIV: return b == 0 ? 0 : b == -1 ? (T)(0 - ua) : a / b;      \
      case TFD_DM_MAXIMUM: return a > b ? a : b;                               \
      case TFD_DM_MINIMUM: return a < b ? a : b;                               \
      case TFD_DM_POW: {                                                       \
        if (b < 0) return 0;                                                   \
        U r = 1, base = ua;                                                    \
        for (U e = (U)b; e; e >>= 1) {                                         \
          if (e & 1u) r *= base;                                               \
          base *= base;                                                        \
        }                                                                      \
        return (T)r;                                                           \
      }                                                                        \
      case TFD_DM_SQUARED_DIFFERENCE: return (T)((ua - ub) * (ua - ub));       \
      case TFD_DM_FLOOR_DIV: {                                                 \
        if (b == 0) return 0;                                                  \
        if (b == -1) return (T)(0 - ua);                                       \
        T q = a / b, r = a % b;                                                \
        return (r != 0 && ((r < 0) != (b < 0))) ? q - 1 : q;                   \
      }                                                                        \
      case TFD_DM_FLOOR_MOD: {                                                 \
        if (b == 0 || b == -1) return 0;                                       \
        T r = a % b;                                                           \
        return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;                   \
      }                                                                        \
      case TFD_DM_MOD: return b == 0 || b == -1 ? 0 : a % b;                   \
      case TFD_DM_BITWISE_AND: return (T)(ua & ub);                            \
      case TFD_DM_CLIP_MIN: return b < a ? b : a;                              \
      case TFD_DM_CLIP_MAX: return a < b ? b : a;                              \
      default: return a;                                                       \
    }                                                                          \
  }
TFD_DM_INT_BINARY(tfd_dm_binary_i32, int32_t, uint32_t)
TFD_DM_INT_BINARY(tfd_dm_binary_i64, int64_t, uint64_t)

/* Comparisons of any ordered type (and bool for EQUAL/NOT_EQUAL); logic on bools (non-zero true). */
#define TFD_DM_COMPARE(op, a, b)                                  \
  ((unsigned char)((op) == TFD_DM_EQUAL           ? (a) == (b)    \
                   : (op) == TFD_DM_NOT_EQUAL     ? (a) != (b)    \
                   : (op) == TFD_DM_LESS          ? (a) < (b)     \
                   : (op) == TFD_DM_LESS_EQUAL    ? (a) <= (b)    \
                   : (op) == TFD_DM_GREATER       ? (a) > (b)     \
                   : (op) == TFD_DM_GREATER_EQUAL ? (a) >= (b)    \
                   : (op) == TFD_DM_LOGICAL_AND   ? ((a) != 0) & ((b) != 0) \
                                                  : ((a) != 0) | ((b) != 0)))

static inline TFD_HD bool tfd_dm_is_comparison(int op) { return op >= TFD_DM_EQUAL; }

/* ---- reductions (k_reduce.c's rules) ---- */
/* acc combined with x: MAX and MIN keep acc on ties and on NaN comparisons; SUM and MEAN add, PROD
 * multiplies (floats accumulate in double, integers in int64, wrapping). A reduction starts from
 * its first element (MAX, MIN) or from tfd_dm_reduce_identity (SUM, MEAN: 0, PROD: 1). */
static inline TFD_HD double tfd_dm_reduce_f(int op, double acc, double x) {
  switch (op) {
    case TFD_DM_MAX: return x > acc ? x : acc;
    case TFD_DM_MIN: return x < acc ? x : acc;
    case TFD_DM_PROD: return acc * x;
    default: return acc + x;
  }
}
static inline TFD_HD int64_t tfd_dm_reduce_i(int op, int64_t acc, int64_t x) {
  switch (op) {
    case TFD_DM_MAX: return x > acc ? x : acc;
    case TFD_DM_MIN: return x < acc ? x : acc;
    case TFD_DM_PROD: return (int64_t)((uint64_t)acc * (uint64_t)x);
    default: return (int64_t)((uint64_t)acc + (uint64_t)x);
  }
}
static inline TFD_HD double tfd_dm_reduce_identity(int op) { return op == TFD_DM_PROD ? 1.0 : 0.0; }

/* ---- resizes (TensorFlow's image_resizer_state.h, computed in float as k_image.c does) ---- */
/* Source pixels per output pixel along one dimension. */
static inline TFD_HD float tfd_dm_resize_scale(int64_t in, int64_t out, bool align_corners) {
  return align_corners && out > 1 ? (float)(in - 1) / (float)(out - 1) : (float)in / (float)out;
}
/* Bilinear: output index i reads source rows *lo and *hi (clamped to [0, in - 1]) with weight
 * *frac on *hi. */
static inline TFD_HD void tfd_dm_bilinear_index(int64_t i, int64_t in, float scale, bool half_pixel, int64_t *lo,
                                                int64_t *hi, float *frac) {
  float src = half_pixel ? ((float)i + 0.5f) * scale - 0.5f : (float)i * scale;
  float fl = floorf(src);
  int64_t l = (int64_t)fl, h = (int64_t)ceilf(src);
  *lo = l > 0 ? l : 0;
  *hi = h < in - 1 ? h : in - 1;
  *frac = src - fl;
}
/* Nearest neighbour: the source index of output index i, clamped to [0, in - 1]. */
static inline TFD_HD int64_t tfd_dm_nearest_index(int64_t i, int64_t in, float scale, bool align_corners,
                                                  bool half_pixel) {
  float src = half_pixel ? ((float)i + 0.5f) * scale : (float)i * scale;
  int64_t v = (int64_t)(align_corners ? roundf(src) : floorf(src));
  if (v > in - 1) v = in - 1;
  return v < 0 ? 0 : v;
}
/* One bilinear output value from the four source values. */
static inline TFD_HD float tfd_dm_lerp2(float tl, float tr, float bl, float br, float fx, float fy) {
  float t = tl + (tr - tl) * fx, d = bl + (br - bl) * fx;
  return t + (d - t) * fy;
}

/* ---- FusedBatchNorm (inference), in TensorFlow's order (k_image.c):
 * y = (x - mean) * (rsqrt(variance + epsilon) * scale) + offset ---- */
static inline TFD_HD float tfd_dm_batch_norm_factor(float scale, float variance, float epsilon) {
  return 1.0f / sqrtf(variance + epsilon) * scale;
}

/* ---- ImageProjectiveTransformV3: TensorFlow's ProjectiveGenerator (image_ops.h) ---- */
enum { TFD_DM_FILL_CONSTANT, TFD_DM_FILL_REFLECT, TFD_DM_FILL_WRAP, TFD_DM_FILL_NEAREST };

static inline TFD_HD float tfd_dm_clampf(float v, float lo, float hi) { return v < lo ? lo : v > hi ? hi : v; }

/* MapCoordinate<mode>: TensorFlow's arithmetic, int64 and float mixed as there. */
static inline TFD_HD float tfd_dm_map_coord(int mode, float c, int64_t len) {
  if (mode == TFD_DM_FILL_CONSTANT) return c;
  if (mode == TFD_DM_FILL_NEAREST) return tfd_dm_clampf(c, 0.0f, (float)(len - 1));
  float in = c;
  if (mode == TFD_DM_FILL_REFLECT) {
    if (in < 0) {
      if (len <= 1) in = 0;
      else {
        const int64_t sz2 = 2 * len;
        if (in < (float)sz2) in = (float)(sz2 * (int64_t)(-in / (float)sz2)) + in;
        in = in < (float)-len ? in + (float)sz2 : -in - 1;
      }
    } else if (in > (float)(len - 1)) {
      if (len <= 1) in = 0;
      else {
        const int64_t sz2 = 2 * len;
        in -= (float)(sz2 * (int64_t)(in / (float)sz2));
        if (in >= (float)len) in = (float)sz2 - in - 1;
      }
    }
  } else { /* WRAP */
    if (in < 0) {
      if (len <= 1) in = 0;
      else {
        const int64_t sz = len - 1;
        in += (float)(len * ((int64_t)(-in / (float)sz) + 1));
      }
    } else if (in > (float)(len - 1)) {
      if (len <= 1) in = 0;
      else {
        const int64_t sz = len - 1;
        in -= (float)(len * (int64_t)(in / (float)sz));
      }
    }
  }
  return tfd_dm_clampf(in, 0.0f, (float)(len - 1));
}

/* Where output pixel (x, y) reads under transform t[8], mapped by fill mode `mode` into an h x w
 * image; false when the projection's denominator is 0 (the pixel is fill_value). */
static inline TFD_HD bool tfd_dm_transform_point(const float *t, int64_t x, int64_t y, int mode, int64_t h, int64_t w,
                                                 float *in_x, float *in_y) {
  const float fx = (float)x, fy = (float)y;
  const float proj = t[6] * fx + t[7] * fy + 1.f;
  if (proj == 0) return false;
  *in_x = tfd_dm_map_coord(mode, (t[0] * fx + t[1] * fy + t[2]) / proj, w);
  *in_y = tfd_dm_map_coord(mode, (t[3] * fx + t[4] * fy + t[5]) / proj, h);
  return true;
}

/* DenseIndex(std::round(v)) for the nearest pixel, and floor(v) for bilinear: a coordinate too far
 * out for int64 becomes -2, which reads fill_value either way. */
static inline TFD_HD int64_t tfd_dm_transform_index(float v, bool round) {
  float r = round ? roundf(v) : floorf(v);
  return fabsf(r) < 9e18f ? (int64_t)r : -2;
}

/* ---- Cast ---- */
/* Element i of any numeric or bool array as a double; of a complex64 one, its real part. */
static inline TFD_HD double tfd_dm_get_f(const void *d, tfd_dtype dt, int64_t i) {
  switch (dt) {
    case TFD_FLOAT32: return ((const float *)d)[i];
    case TFD_FLOAT64: return ((const double *)d)[i];
    case TFD_INT32: return ((const int32_t *)d)[i];
    case TFD_INT64: return (double)((const int64_t *)d)[i];
    case TFD_BOOL: return ((const unsigned char *)d)[i];
    case TFD_UINT8: return ((const uint8_t *)d)[i];
    case TFD_FLOAT16: return tfd_half_to_float(((const uint16_t *)d)[i]);
    case TFD_COMPLEX64: return ((const float *)d)[2 * i];
    default: return 0;
  }
}

/* Float to integer: C truncation toward zero, as TensorFlow's Cast, made total: NaN is 0 and values
 * beyond the range saturate (C leaves both undefined). */
static inline TFD_HD int64_t tfd_dm_float_to_i64(double v) {
  if (v != v) return 0;
  if (v >= 9223372036854775808.0) return INT64_MAX;
  if (v < -9223372036854775808.0) return INT64_MIN;
  return (int64_t)v;
}

static inline TFD_HD int64_t tfd_dm_get_i(const void *d, tfd_dtype dt, int64_t i) {
  switch (dt) {
    case TFD_INT32: return ((const int32_t *)d)[i];
    case TFD_INT64: return ((const int64_t *)d)[i];
    case TFD_BOOL: return ((const unsigned char *)d)[i];
    case TFD_UINT8: return ((const uint8_t *)d)[i];
    default: return tfd_dm_float_to_i64(tfd_dm_get_f(d, dt, i));
  }
}

/* dst[i] = (dt) src[j] (src of dtype st), TensorFlow's Cast: to int32 from floats saturates, from
 * int64 wraps modulo 2^32; to uint8 integers wrap modulo 256 and floats saturate; to bool x != 0;
 * to float16 rounds to nearest even. From complex64 to a real type the imaginary part is dropped (to
 * bool both parts count); to complex64 a real value gets imaginary part 0. */
static inline TFD_HD void tfd_dm_put(void *dst, tfd_dtype dt, int64_t i, const void *src, tfd_dtype st, int64_t j) {
  switch (dt) {
    case TFD_FLOAT32: ((float *)dst)[i] = (float)tfd_dm_get_f(src, st, j); break;
    case TFD_FLOAT64: ((double *)dst)[i] = tfd_dm_get_f(src, st, j); break;
    case TFD_INT32: {
      int64_t v = tfd_dm_get_i(src, st, j);
      ((int32_t *)dst)[i] = st == TFD_INT64 ? (int32_t)(uint32_t)(uint64_t)v
                                            : (v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : (int32_t)v);
      break;
    }
    case TFD_INT64: ((int64_t *)dst)[i] = tfd_dm_get_i(src, st, j); break;
    case TFD_BOOL:
      ((unsigned char *)dst)[i] =
          tfd_dm_get_f(src, st, j) != 0 || (st == TFD_COMPLEX64 && ((const float *)src)[2 * j + 1] != 0);
      break;
    case TFD_COMPLEX64:
      ((float *)dst)[2 * i] = (float)tfd_dm_get_f(src, st, j);
      ((float *)dst)[2 * i + 1] = st == TFD_COMPLEX64 ? ((const float *)src)[2 * j + 1] : 0.0f;
      break;
    case TFD_UINT8: {
      int64_t v = tfd_dm_get_i(src, st, j);
      bool from_float = st == TFD_FLOAT32 || st == TFD_FLOAT64 || st == TFD_FLOAT16;
      ((uint8_t *)dst)[i] = from_float ? (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v) : (uint8_t)(uint64_t)v;
      break;
    }
    case TFD_FLOAT16: ((uint16_t *)dst)[i] = tfd_float_to_half((float)tfd_dm_get_f(src, st, j)); break;
    default: break;
  }
}

/* ---- random numbers: counter-based, so every device and thread split draws the same ---- */
static inline TFD_HD uint64_t tfd_dm_mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* [0, 1) from 53 bits of draw number `counter` of stream `seed`. */
static inline TFD_HD double tfd_dm_unit(uint64_t seed, uint64_t counter) {
  return (double)(tfd_dm_mix(seed ^ tfd_dm_mix(counter)) >> 11) * (1.0 / 9007199254740992.0);
}

/* Element i of a draw starting at `counter`: uniform in [0, 1), or standard normal by Box-Muller
 * on draws counter + 2i and counter + 2i + 1. */
static inline TFD_HD double tfd_dm_random(bool normal, uint64_t seed, uint64_t counter, uint64_t i) {
  if (!normal) return tfd_dm_unit(seed, counter + i);
  double u1 = tfd_dm_unit(seed, counter + 2 * i), u2 = tfd_dm_unit(seed, counter + 2 * i + 1);
  return sqrt(-2.0 * log(1.0 - u1)) * cos(6.283185307179586 * u2);
}

/* TruncatedNormal and RandomUniformInt (k_random_ext.c) give each element its own sub-stream of the
 * node's seed, so that redrawing one (TruncatedNormal's rejections) moves no other. */
static inline TFD_HD uint64_t tfd_dm_element_seed(uint64_t seed, uint64_t base, int64_t i) {
  return tfd_dm_mix(seed ^ tfd_dm_mix(base + (uint64_t)i));
}

/* Element i of a TruncatedNormal draw: standard normals whose magnitude reaches 2 are dropped and
 * drawn again, as TensorFlow does, each try a Box-Muller pair of the element's stream; the bound on
 * tries only guards a stream that never lands inside (probability 0.0455 per try). float32 keeps the
 * bound after rounding. */
static inline TFD_HD double tfd_dm_truncated_normal(uint64_t seed, uint64_t base, int64_t i, bool f32) {
  uint64_t s = tfd_dm_element_seed(seed, base, i);
  double v = 0;
  for (uint64_t t = 0; t < 1000; t++) {
    v = tfd_dm_random(true, s, 0, t);
    if (fabs(v) < 2.0) break;
    v = 0;
  }
  if (f32) {
    float f = (float)v;
    if (fabsf(f) >= 2.0f) f = copysignf(1.9999999f, f);
    v = f;
  }
  return v;
}

/* Element i of a RandomUniformInt draw in [lo, lo + range). */
static inline TFD_HD int64_t tfd_dm_uniform_int(uint64_t seed, uint64_t base, int64_t i, int64_t lo, uint64_t range) {
  return (int64_t)((uint64_t)lo + tfd_dm_mix(tfd_dm_element_seed(seed, base, i)) % range);
}

/* A float32 uniform keeps [0, 1) after rounding. */
static inline TFD_HD float tfd_dm_uniform_f32(double v) {
  float f = (float)v;
  return f >= 1.0f ? 0.99999994f : f;
}

#endif
