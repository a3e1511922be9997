/* Activation rows for float32 and float64 (see activation.h).
 *
 * Relu is max(x, 0) and Relu6 min(max(x, 0), 6), written as selects the
 * compiler turns into maxps/minps with the input as the right operand, so a
 * NaN input stays NaN, as TensorFlow's propagate it (relu_op_functor.h:
 * cwiseMax<Eigen::PropagateNaN>). LeakyRelu and Prelu are x > 0 ? x : alpha * x
 * and Elu select(x < 0, expm1(x), x), TensorFlow's definitions. */
#include "activation.h"
#include "../vector_clones.h"

#include <math.h>
#include <string.h>

tfd_activation tfd_activation_of_op(const char *op) {
  static const char *const names[TFD_ACT_COUNT] = {"", "Relu", "Relu6", "Elu", "LeakyRelu", "Tanh", "Sigmoid"};
  for (int i = 1; i < TFD_ACT_COUNT; i++)
    if (op && strcmp(op, names[i]) == 0) return (tfd_activation)i;
  return TFD_ACT_NONE;
}

/* Each activation gets an in-place loop and a copying loop, both with
 * restrict pointers: a single loop called with o == a would break restrict's
 * promise, and without restrict the compiler adds an overlap check that
 * sends the in-place call (the fused epilogue's) down the scalar path. */
#define ROWS(NAME, T, EXPR)                                                              \
  TFD_VECTOR_CLONES static void NAME##_inplace(T *restrict x, int64_t n, T alpha) {      \
    (void)alpha;                                                                         \
    for (int64_t i = 0; i < n; i++) {                                                    \
      T v = x[i];                                                                        \
      x[i] = (EXPR);                                                                     \
    }                                                                                    \
  }                                                                                      \
  TFD_VECTOR_CLONES static void NAME##_copy(T *restrict o, const T *restrict a, int64_t n, T alpha) { \
    (void)alpha;                                                                         \
    for (int64_t i = 0; i < n; i++) {                                                    \
      T v = a[i];                                                                        \
      o[i] = (EXPR);                                                                     \
    }                                                                                    \
  }

#define RELU(T, v) ((v) < (T)0 ? (T)0 : (v))
/* x > 0 ? x : a * x as two selects against 0 and an unconditional multiply-add: a select with a
 * multiply in one arm is not if-converted (the multiply might trap), so it would not vectorise.
 * Only the sign of a zero differs (+0 for -0). */
#define PRELU(T, v, a) (RELU(T, v) + (a) * ((v) > (T)0 ? (T)0 : (v)))

#define ACTIVATIONS(T, S, EXP, EXPM1, TANH)                                              \
  ROWS(relu_##S, T, RELU(T, v))                                                          \
  ROWS(relu6_##S, T, RELU(T, v) > (T)6 ? (T)6 : RELU(T, v))                              \
  ROWS(leaky_##S, T, PRELU(T, v, alpha))                                           \
  ROWS(elu_##S, T, v < (T)0 ? EXPM1(v) : v)                                              \
  ROWS(tanh_##S, T, TANH(v))                                                             \
  ROWS(sigmoid_##S, T, (T)1 / ((T)1 + EXP(-v)))                                          \
  typedef void (*inplace_##S)(T *restrict, int64_t, T);                                  \
  typedef void (*copy_##S)(T *restrict, const T *restrict, int64_t, T);                  \
  void tfd_activation_##S(tfd_activation act, T *o, const T *a, int64_t n, T alpha) {    \
    static const inplace_##S in_place[TFD_ACT_COUNT] = {NULL,         relu_##S##_inplace,  \
                                                        relu6_##S##_inplace, elu_##S##_inplace, \
                                                        leaky_##S##_inplace, tanh_##S##_inplace, \
                                                        sigmoid_##S##_inplace};          \
    static const copy_##S copying[TFD_ACT_COUNT] = {NULL,       relu_##S##_copy,         \
                                                    relu6_##S##_copy, elu_##S##_copy,    \
                                                    leaky_##S##_copy, tanh_##S##_copy,   \
                                                    sigmoid_##S##_copy};                 \
    if ((int)act <= TFD_ACT_NONE || act >= TFD_ACT_COUNT) {                              \
      if (o != a) memcpy(o, a, (size_t)n * sizeof(T));                                   \
    } else if (o == a) {                                                                 \
      in_place[act](o, n, alpha);                                                        \
    } else {                                                                             \
      copying[act](o, a, n, alpha);                                                      \
    }                                                                                    \
  }

ACTIVATIONS(float, f32, expf, expm1f, tanhf)
ACTIVATIONS(double, f64, exp, expm1, tanh)

TFD_VECTOR_CLONES static void prelu_inplace(float *restrict x, const float *restrict alpha, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    float v = x[i];
    x[i] = PRELU(float, v, alpha[i]);
  }
}

TFD_VECTOR_CLONES static void prelu_copy(float *restrict o, const float *restrict a, const float *restrict alpha, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    float v = a[i];
    o[i] = PRELU(float, v, alpha[i]);
  }
}

static void prelu_row(float *o, const float *a, const float *alpha, int64_t n) {
  if (o == a) prelu_inplace(o, alpha, n);
  else prelu_copy(o, a, alpha, n);
}

/* A short period (one alpha per channel) is laid out again, repeated, in a tile of whole periods, so
 * the rows the loops see are long enough to vectorise. */
#define PRELU_TILE 2048

void tfd_prelu_f32(float *o, const float *a, const float *alpha, int64_t period, int64_t phase, int64_t n) {
  if (period >= PRELU_TILE / 2) {
    for (int64_t i = 0; i < n;) {
      int64_t len = period - phase < n - i ? period - phase : n - i;
      prelu_row(o + i, a + i, alpha + phase, len);
      i += len;
      phase = 0;
    }
    return;
  }
  float tile[PRELU_TILE];
  int64_t len = PRELU_TILE / period * period;
  if (len > n) len = n;
  for (int64_t k = 0, p = phase; k < len; k++, p = p + 1 == period ? 0 : p + 1) tile[k] = alpha[p];
  for (int64_t i = 0; i < n; i += len) prelu_row(o + i, a + i, tile, len < n - i ? len : n - i);
}

TFD_VECTOR_CLONES static void exp_rows(float *restrict o, const float *restrict a, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    float x = a[i];
    float v = x > 88.7228391117f ? 88.7228391117f : x;
    v = v < -87.3365447506f ? -87.3365447506f : v;
    v = x != x ? 0.0f : v; /* NaN lanes compute exp(0) (the integer conversion below is defined) and are put back last */
    float t = v * 1.44269504088896341f + 12582912.0f; /* round to nearest by the 1.5 * 2^23 shift */
    float nf = t - 12582912.0f;                       /* n in [-126, 128] */
    float r = v - nf * 0.693359375f - nf * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    int32_t ni = (int32_t)nf, half = ni / 2; /* 2^n as two normal factors: n reaches -126 and 128 */
    int32_t b1 = (half + 127) * (1 << 23), b2 = (ni - half + 127) * (1 << 23);
    float s1, s2;
    memcpy(&s1, &b1, sizeof s1);
    memcpy(&s2, &b2, sizeof s2);
    float y = p * s1 * s2;
    y = x < -87.3365447506f ? 0.0f : y;
    y = x > 88.7228391117f ? INFINITY : y;
    o[i] = x != x ? x : y;
  }
}

void tfd_exp_f32(float *o, const float *a, int64_t n) {
  if (o == a) {
    /* In place: one block at a time through a buffer, so both loops keep restrict pointers. */
    float buf[1024];
    for (int64_t i = 0; i < n; i += 1024) {
      int64_t len = n - i < 1024 ? n - i : 1024;
      exp_rows(buf, a + i, len);
      memcpy(o + i, buf, (size_t)len * sizeof *o);
    }
    return;
  }
  exp_rows(o, a, n);
}
