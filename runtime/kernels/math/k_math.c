/* Elementwise math with TensorFlow's semantics (issue 26's math family).
 *
 * Unary (float): Acos, Acosh, Asin, Asinh, Atan, Atanh, Cosh, Sinh, Tan, Erf, Expm1, Log1p.
 * Unary (numbers): Round (half to even; integers pass through), Sign (NaN stays NaN).
 * Predicates, bool out (float): IsFinite, IsInf, IsNan.
 * Binary with numpy broadcasting: Div (integers truncate, as C does), DivNoNan (0 where the divisor
 * is 0), Mod (the truncated remainder: C's % and fmod), BitwiseAnd (integers).
 * ClipByValue (bounds each a scalar or shaped like t) and LogSoftmax (last axis).
 *
 * Everything but LogSoftmax runs through k_logic.c's broadcasting engine (tfd_cwise_run_rows), so the
 * rows here are tight loops over contiguous data whenever the shapes allow. Integer Div and Mod by
 * zero are refused before any work, as TensorFlow refuses them; MIN / -1 wraps (TensorFlow computes
 * it as -MIN / 1). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../../core/status_internal.h"
#include "../nn/activation.h"
#include "cwise_logic.h"
#include "../kernel.h"
#include "../vector_clones.h"

enum {
  M_ACOS,
  M_ACOSH,
  M_ASIN,
  M_ASINH,
  M_ATAN,
  M_ATANH,
  M_COSH,
  M_SINH,
  M_TAN,
  M_ERF,
  M_EXPM1,
  M_LOG1P,
  M_ROUND,
  M_SIGN,
  M_IS_FINITE,
  M_IS_INF,
  M_IS_NAN, /* the last unary ops: bool out */
  M_DIV,
  M_DIV_NO_NAN,
  M_MOD,
  M_BITWISE_AND,
  M_CLIP,
  M_LOG_SOFTMAX,
  M_COUNT
};

static const char *const op_names[M_COUNT] = {[M_ACOS] = "Acos",
                                              [M_ACOSH] = "Acosh",
                                              [M_ASIN] = "Asin",
                                              [M_ASINH] = "Asinh",
                                              [M_ATAN] = "Atan",
                                              [M_ATANH] = "Atanh",
                                              [M_COSH] = "Cosh",
                                              [M_SINH] = "Sinh",
                                              [M_TAN] = "Tan",
                                              [M_ERF] = "Erf",
                                              [M_EXPM1] = "Expm1",
                                              [M_LOG1P] = "Log1p",
                                              [M_ROUND] = "Round",
                                              [M_SIGN] = "Sign",
                                              [M_IS_FINITE] = "IsFinite",
                                              [M_IS_INF] = "IsInf",
                                              [M_IS_NAN] = "IsNan",
                                              [M_DIV] = "Div",
                                              [M_DIV_NO_NAN] = "DivNoNan",
                                              [M_MOD] = "Mod",
                                              [M_BITWISE_AND] = "BitwiseAnd",
                                              [M_CLIP] = "ClipByValue",
                                              [M_LOG_SOFTMAX] = "LogSoftmax"};

/* ---- unary rows (the output is shaped like the input, so always contiguous) ---- */
#define UNARY_ROW(ATTR, NAME, T, TO, EXPR) TFD_UNARY_ROW(ATTR, NAME, T, TO, EXPR)
/* libm calls: nothing for the vector clones to gain. */
#define LIBM_ROWS(NAME, F) UNARY_ROW(, NAME##_f32, float, float, F##f(x)) UNARY_ROW(, NAME##_f64, double, double, F(x))

LIBM_ROWS(acos, acos)
LIBM_ROWS(acosh, acosh)
LIBM_ROWS(asin, asin)
LIBM_ROWS(asinh, asinh)
LIBM_ROWS(atan, atan)
LIBM_ROWS(atanh, atanh)
LIBM_ROWS(cosh, cosh)
LIBM_ROWS(sinh, sinh)
LIBM_ROWS(tan, tan)
LIBM_ROWS(erf, erf)
LIBM_ROWS(expm1, expm1)
LIBM_ROWS(log1p, log1p)
/* rint in the default rounding mode rounds halves to even, as TensorFlow's Round does. */
UNARY_ROW(TFD_VECTOR_CLONES, round_f32, float, float, rintf(x))
UNARY_ROW(TFD_VECTOR_CLONES, round_f64, double, double, rint(x))
UNARY_ROW(TFD_VECTOR_CLONES, copy_i32, int32_t, int32_t, x)
UNARY_ROW(TFD_VECTOR_CLONES, copy_i64, int64_t, int64_t, x)
#define SIGN(T, x) ((T)(((x) > 0) - ((x) < 0)))
/* Floats as three selects, which vectorise (an int difference converted does not); -0 gives +0. */
#define FSIGN(x) ((x) != (x) ? (x) : (x) < 0 ? -1 : (x) > 0 ? 1 : 0)
UNARY_ROW(TFD_VECTOR_CLONES, sign_f32, float, float, FSIGN(x))
UNARY_ROW(TFD_VECTOR_CLONES, sign_f64, double, double, FSIGN(x))
UNARY_ROW(TFD_VECTOR_CLONES, sign_i32, int32_t, int32_t, SIGN(int32_t, x))
UNARY_ROW(TFD_VECTOR_CLONES, sign_i64, int64_t, int64_t, SIGN(int64_t, x))
#define PRED_ROWS(NAME, F)                                                                   \
  UNARY_ROW(TFD_VECTOR_CLONES, NAME##_f32, float, unsigned char, (unsigned char)(F(x) != 0)) \
  UNARY_ROW(TFD_VECTOR_CLONES, NAME##_f64, double, unsigned char, (unsigned char)(F(x) != 0))
PRED_ROWS(is_finite, isfinite)
PRED_ROWS(is_inf, isinf)
PRED_ROWS(is_nan, isnan)

/* ---- binary rows: the contiguous and one-side-broadcast cases get their own loops ---- */
#define BINARY_ROW(ATTR, NAME, T, F) TFD_BINARY_ROW(ATTR, NAME, T, T, F)

#define FDIV(x, y) ((x) / (y))
/* x / y with its bits cleared where y is 0 (+0, as TensorFlow gives): a division under a condition
 * would not vectorise, since it might trap. */
static inline float div_no_nan_1f(float x, float y) {
  float q = x / y;
  uint32_t b;
  memcpy(&b, &q, sizeof b);
  b &= (uint32_t)0 - (uint32_t)(y != 0);
  memcpy(&q, &b, sizeof q);
  return q;
}
static inline double div_no_nan_1d(double x, double y) {
  double q = x / y;
  uint64_t b;
  memcpy(&b, &q, sizeof b);
  b &= (uint64_t)0 - (uint64_t)(y != 0);
  memcpy(&q, &b, sizeof q);
  return q;
}
#define BAND(x, y) ((x) & (y))
/* Integer division and remainder truncate, as C's do. A zero divisor was refused before the rows
 * ran (harmless here); MIN / -1, which overflows in C, wraps to MIN and MIN % -1 is 0.
 * int32 goes through double, which vectorises where idiv does not: a 32-bit quotient truncated from
 * the double one is exact (a non-integer quotient is at least 1/|y| from an integer, far more than
 * the rounding error). MIN / -1 divides by 1 instead (giving MIN, the wrapped -MIN), and so does a
 * zero divisor; the selects are arithmetic so that the loop has no branch. */
static inline int32_t div_i32(int32_t x, int32_t y) {
  uint32_t one = (uint32_t)(y == 0) | ((uint32_t)(y == -1) & (uint32_t)(x == INT32_MIN));
  int32_t d = (int32_t)((uint32_t)y + one * (1u - (uint32_t)y));
  return (int32_t)((double)x / (double)d);
}
static inline int64_t div_i64(int64_t x, int64_t y) { return y == 0 ? 0 : y == -1 ? (int64_t)(0u - (uint64_t)x) : x / y; }
static inline uint8_t div_u8(uint8_t x, uint8_t y) { return y == 0 ? 0 : (uint8_t)(x / y); }
static inline int32_t mod_i32(int32_t x, int32_t y) {
  return (int32_t)((uint32_t)x - (uint32_t)div_i32(x, y) * (uint32_t)y);
}
static inline int64_t mod_i64(int64_t x, int64_t y) { return y == 0 || y == -1 ? 0 : x % y; }

BINARY_ROW(TFD_VECTOR_CLONES, div_row_f32, float, FDIV)
BINARY_ROW(TFD_VECTOR_CLONES, div_row_f64, double, FDIV)
BINARY_ROW(TFD_VECTOR_CLONES, div_row_i32, int32_t, div_i32)
BINARY_ROW(, div_row_i64, int64_t, div_i64)
BINARY_ROW(, div_row_u8, uint8_t, div_u8)
BINARY_ROW(TFD_VECTOR_CLONES, div_no_nan_f32, float, div_no_nan_1f)
BINARY_ROW(TFD_VECTOR_CLONES, div_no_nan_f64, double, div_no_nan_1d)
BINARY_ROW(, mod_row_f32, float, fmodf)
BINARY_ROW(, mod_row_f64, double, fmod)
BINARY_ROW(TFD_VECTOR_CLONES, mod_row_i32, int32_t, mod_i32)
BINARY_ROW(, mod_row_i64, int64_t, mod_i64)
BINARY_ROW(TFD_VECTOR_CLONES, band_i32, int32_t, BAND)
BINARY_ROW(TFD_VECTOR_CLONES, band_i64, int64_t, BAND)
BINARY_ROW(TFD_VECTOR_CLONES, band_u8, uint8_t, BAND)

/* ---- ClipByValue: max(min(x, hi), lo) as std::min/std::max compare, so a NaN x stays NaN ---- */
#define CLIP_ROW(NAME, T)                                                                            \
  TFD_VECTOR_CLONES static void NAME(void *o_, const void *const *in, const int64_t *s, int64_t n) { \
    T *restrict o = o_;                                                                              \
    const T *restrict x = in[0], *restrict lo = in[1], *restrict hi = in[2];                         \
    if (s[0] == 1 && s[1] == 0 && s[2] == 0) {                                                       \
      T l = lo[0], h = hi[0];                                                                        \
      for (int64_t i = 0; i < n; i++) {                                                              \
        T m = h < x[i] ? h : x[i];                                                                   \
        o[i] = m < l ? l : m;                                                                        \
      }                                                                                              \
    } else {                                                                                         \
      for (int64_t i = 0; i < n; i++) {                                                              \
        T h = hi[i * s[2]], v = x[i * s[0]], m = h < v ? h : v, l = lo[i * s[1]];                    \
        o[i] = m < l ? l : m;                                                                        \
      }                                                                                              \
    }                                                                                                \
  }
CLIP_ROW(clip_f32, float)
CLIP_ROW(clip_f64, double)
CLIP_ROW(clip_i32, int32_t)
CLIP_ROW(clip_i64, int64_t)
CLIP_ROW(clip_u8, uint8_t)

static int type_index(tfd_dtype dt) {
  switch (dt) {
    case TFD_FLOAT32:
      return 0;
    case TFD_FLOAT64:
      return 1;
    case TFD_INT32:
      return 2;
    case TFD_INT64:
      return 3;
    case TFD_UINT8:
      return 4;
    default:
      return -1;
  }
}

/* The row for op on inputs of dtype dt; NULL when there is none. */
static tfd_cwise_row_fn row_for(int op, tfd_dtype dt) {
#define F2(NAME) \
  { NAME##_f32, NAME##_f64 }
  /* columns: float32, float64, int32, int64, uint8 */
  static const tfd_cwise_row_fn rows[M_LOG_SOFTMAX][5] = {
      [M_ACOS] = F2(acos),
      [M_ACOSH] = F2(acosh),
      [M_ASIN] = F2(asin),
      [M_ASINH] = F2(asinh),
      [M_ATAN] = F2(atan),
      [M_ATANH] = F2(atanh),
      [M_COSH] = F2(cosh),
      [M_SINH] = F2(sinh),
      [M_TAN] = F2(tan),
      [M_ERF] = F2(erf),
      [M_EXPM1] = F2(expm1),
      [M_LOG1P] = F2(log1p),
      [M_ROUND] = {round_f32, round_f64, copy_i32, copy_i64},
      [M_SIGN] = {sign_f32, sign_f64, sign_i32, sign_i64},
      [M_IS_FINITE] = F2(is_finite),
      [M_IS_INF] = F2(is_inf),
      [M_IS_NAN] = F2(is_nan),
      [M_DIV] = {div_row_f32, div_row_f64, div_row_i32, div_row_i64, div_row_u8},
      [M_DIV_NO_NAN] = F2(div_no_nan),
      [M_MOD] = {mod_row_f32, mod_row_f64, mod_row_i32, mod_row_i64},
      [M_BITWISE_AND] = {NULL, NULL, band_i32, band_i64, band_u8},
      [M_CLIP] = {clip_f32, clip_f64, clip_i32, clip_i64, clip_u8},
  };
#undef F2
  int t = type_index(dt);
  return t < 0 || op < 0 || op >= M_LOG_SOFTMAX ? NULL : rows[op][t];
}

static tfd_cwise_row_fn need_row(tfd_kernel *k, tfd_kernel_context *c, tfd_dtype dt) {
  tfd_cwise_row_fn fn = row_for(k->code, dt);
  if (!fn) tfd_kernel_fail(c, k, TFD_UNIMPLEMENTED, "no kernel for dtype %s", tfd_dtype_name(dt));
  return fn;
}

static void k_unary(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *in = c->inputs[0];
  tfd_dtype dt = tfd_tensor_dtype(in);
  tfd_cwise_row_fn fn = need_row(k, c, dt);
  if (!fn) return;
  tfd_shape s;
  tfd_shape_of_tensor(in, &s);
  tfd_dtype out_dt = k->code >= M_IS_FINITE ? TFD_BOOL : dt;
  tfd_cwise_run_rows(k, c, fn, 1, c->inputs, &s, out_dt, &s, k->code < M_ROUND ? 20 : 1);
}

/* Any zero in an integer divisor. */
static bool any_zero(const tfd_tensor *t) {
  int64_t n = tfd_tensor_numel(t);
  int z = 0;
  switch (tfd_tensor_dtype(t)) {
    case TFD_INT32: {
      const int32_t *p = tfd_tensor_const_data(t);
      for (int64_t i = 0; i < n; i++) z |= p[i] == 0;
      break;
    }
    case TFD_INT64: {
      const int64_t *p = tfd_tensor_const_data(t);
      for (int64_t i = 0; i < n; i++) z |= p[i] == 0;
      break;
    }
    case TFD_UINT8: {
      const uint8_t *p = tfd_tensor_const_data(t);
      for (int64_t i = 0; i < n; i++) z |= p[i] == 0;
      break;
    }
    default:
      break;
  }
  return z != 0;
}

static void k_binary(tfd_kernel *k, tfd_kernel_context *c) {
  if (!tfd_cwise_same_dtypes(c, k, 0, 2)) return;
  tfd_tensor *b = c->inputs[1];
  tfd_dtype dt = tfd_tensor_dtype(c->inputs[0]);
  tfd_cwise_row_fn fn = need_row(k, c, dt);
  if (!fn) return;
  tfd_shape s[2], out;
  tfd_shape_of_tensor(c->inputs[0], &s[0]);
  tfd_shape_of_tensor(b, &s[1]);
  if (!tfd_cwise_broadcast(c, k, &s[0], &s[1], &out)) return;
  bool is_int = dt == TFD_INT32 || dt == TFD_INT64 || dt == TFD_UINT8;
  if (is_int && (k->code == M_DIV || k->code == M_MOD) && tfd_shape_numel(&out) > 0 && any_zero(b)) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Integer division by zero");
    return;
  }
  int64_t cost = k->code == M_BITWISE_AND ? 1 : is_int || k->code == M_MOD ? 8 : 4;
  tfd_cwise_run_rows(k, c, fn, 2, c->inputs, s, dt, &out, cost);
}

/* TensorFlow's ClipOp: each bound a scalar or shaped exactly like t (no other broadcasting). */
static void k_clip(tfd_kernel *k, tfd_kernel_context *c) {
  if (!tfd_cwise_same_dtypes(c, k, 0, 3)) return;
  tfd_dtype dt = tfd_tensor_dtype(c->inputs[0]);
  tfd_cwise_row_fn fn = need_row(k, c, dt);
  if (!fn) return;
  tfd_shape s[3];
  if (!tfd_clip_shapes(c, k, s)) return;
  tfd_cwise_run_rows(k, c, fn, 3, c->inputs, s, dt, &s[0], 1);
}

/* ---- LogSoftmax over the last dimension: x - max - log(sum(exp(x - max))) ---- */
typedef struct log_softmax_job {
  const void *in;
  void *out;
  int64_t cols;
  tfd_dtype dt;
} log_softmax_job;

/* float32: the exponentials through activation.c's vectorised exp, a block at a time. */
static void log_softmax_f32(const float *x, float *y, int64_t cols) {
  float m = x[0], s = 0, e[256];
  for (int64_t i = 1; i < cols; i++) m = x[i] > m ? x[i] : m;
  for (int64_t i = 0; i < cols; i++) y[i] = x[i] - m;
  for (int64_t b = 0; b < cols; b += 256) {
    int64_t n = cols - b < 256 ? cols - b : 256;
    tfd_exp_f32(e, y + b, n);
    for (int64_t i = 0; i < n; i++) s += e[i];
  }
  float l = logf(s);
  for (int64_t i = 0; i < cols; i++) y[i] -= l;
}

static void log_softmax_f64(const double *x, double *y, int64_t cols) {
  double m = x[0], s = 0;
  for (int64_t i = 1; i < cols; i++) m = x[i] > m ? x[i] : m;
  for (int64_t i = 0; i < cols; i++) s += exp(y[i] = x[i] - m);
  double l = log(s);
  for (int64_t i = 0; i < cols; i++) y[i] -= l;
}

static void log_softmax_range(int64_t b, int64_t e, void *arg) {
  const log_softmax_job *j = arg;
  for (int64_t r = b; r < e; r++) {
    if (j->dt == TFD_FLOAT32)
      log_softmax_f32((const float *)j->in + r * j->cols, (float *)j->out + r * j->cols, j->cols);
    else
      log_softmax_f64((const double *)j->in + r * j->cols, (double *)j->out + r * j->cols, j->cols);
  }
}

static void k_log_softmax(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *in = c->inputs[0];
  tfd_dtype dt = tfd_tensor_dtype(in);
  int nd = tfd_tensor_ndims(in);
  if (dt != TFD_FLOAT32 && dt != TFD_FLOAT64) {
    tfd_kernel_fail(c, k, TFD_UNIMPLEMENTED, "no kernel for dtype %s", tfd_dtype_name(dt));
    return;
  }
  if (nd < 1) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "logits must have >= 1 dimension, got []");
    return;
  }
  tfd_tensor *out = tfd_kernel_alloc_like(c, k, dt, in);
  if (!out) return;
  c->outputs[0] = out;
  log_softmax_job j = {tfd_tensor_const_data(in), tfd_tensor_data(out), tfd_tensor_dim(in, nd - 1), dt};
  int64_t rows = j.cols ? tfd_tensor_numel(in) / j.cols : 0;
  if (rows * j.cols >= TFD_PARALLEL_MIN_ELEMENTS)
    tfd_threadpool_parallel_for(c->intra_pool, rows, 20 * j.cols, log_softmax_range, &j);
  else
    log_softmax_range(0, rows, &j);
}

tfd_code tfd_setup_math(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  const char *op = init->op->name;
  for (int i = 0; i < M_COUNT; i++)
    if (strcmp(op, op_names[i]) == 0) {
      k->code = i;
      k->compute = i <= M_IS_NAN ? k_unary : i <= M_BITWISE_AND ? k_binary : i == M_CLIP ? k_clip : k_log_softmax;
      return TFD_OK;
    }
  return tfd_status_setf(st, TFD_INTERNAL, "no math kernel for op %s", op);
}
