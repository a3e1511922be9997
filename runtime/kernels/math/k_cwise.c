/* Elementwise kernels: unary math, binary arithmetic with numpy broadcasting, BiasAdd and Softmax.
 * Large tensors are split over the device's intra-op pool. */
#include <math.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "../../core/status_internal.h"
#include "../nn/activation.h"
#include "cwise_logic.h"
#include "../kernel.h"
#include "../vector_clones.h"

enum { B_ADD, B_SUB, B_MUL, B_DIV, B_MAX, B_MIN, B_COUNT };
enum { U_NEG, U_ABS, U_SQUARE, U_RELU, U_RELU6, U_EXP, U_LOG, U_SQRT, U_SIGMOID, U_TANH, U_ELU, U_LEAKY_RELU, U_COUNT };

/* A strided row: o[i] = f(a[i*sa], b[i*sb]) for i < n. */
typedef void (*binary_row)(void *o, const void *a, int64_t sa, const void *b, int64_t sb, int64_t n);
typedef void (*unary_row)(void *o, const void *a, int64_t n);

#define ADD(x, y) ((x) + (y))
#define SUB(x, y) ((x) - (y))
#define MUL(x, y) ((x) * (y))
#define DIV(x, y) ((x) / (y))
#define MAX(x, y) ((x) > (y) ? (x) : (y))
#define MIN(x, y) ((x) < (y) ? (x) : (y))
/* Floats: a NaN on either side is the result, as TensorFlow's Maximum and Minimum give it
 * (scalar_max_op<T, T, Eigen::PropagateNaN>); a NaN on the right falls through the compare. */
#define FMAX(x, y) ((x) > (y) || (x) != (x) ? (x) : (y))
#define FMIN(x, y) ((x) < (y) || (x) != (x) ? (x) : (y))

/* The contiguous case gets its own loop so the compiler vectorises it. */
#define BINARY_ROW(NAME, T, F)                                                                         \
  TFD_VECTOR_CLONES static void NAME(void *o_, const void *a_, int64_t sa, const void *b_, int64_t sb, \
                                     int64_t n) {                                                     \
    T *restrict o = o_;                                                                                \
    const T *restrict a = a_, *restrict b = b_;                                                        \
    if (sa == 1 && sb == 1)                                                                            \
      for (int64_t i = 0; i < n; i++) o[i] = F(a[i], b[i]);                                            \
    else if (sa == 1 && sb == 0)                                                                       \
      for (int64_t i = 0; i < n; i++) o[i] = F(a[i], b[0]);                                            \
    else                                                                                               \
      for (int64_t i = 0; i < n; i++) o[i] = F(a[i * sa], b[i * sb]);                                 \
  }

#define BINARY_TYPE(T, S)                \
  BINARY_ROW(add_##S, T, ADD)            \
  BINARY_ROW(sub_##S, T, SUB)            \
  BINARY_ROW(mul_##S, T, MUL)            \
  BINARY_ROW(max_##S, T, FMAX)           \
  BINARY_ROW(min_##S, T, FMIN)

/* Integer arithmetic wraps modulo 2^n, as TensorFlow's does on every
 * platform; done in unsigned so that overflow is defined in C. */
#define WADD32(x, y) ((int32_t)((uint32_t)(x) + (uint32_t)(y)))
#define WSUB32(x, y) ((int32_t)((uint32_t)(x) - (uint32_t)(y)))
#define WMUL32(x, y) ((int32_t)((uint32_t)(x) * (uint32_t)(y)))
#define WADD64(x, y) ((int64_t)((uint64_t)(x) + (uint64_t)(y)))
#define WSUB64(x, y) ((int64_t)((uint64_t)(x) - (uint64_t)(y)))
#define WMUL64(x, y) ((int64_t)((uint64_t)(x) * (uint64_t)(y)))

BINARY_TYPE(float, f32)
BINARY_TYPE(double, f64)
BINARY_ROW(add_i32, int32_t, WADD32)
BINARY_ROW(sub_i32, int32_t, WSUB32)
BINARY_ROW(mul_i32, int32_t, WMUL32)
BINARY_ROW(max_i32, int32_t, MAX)
BINARY_ROW(min_i32, int32_t, MIN)
BINARY_ROW(add_i64, int64_t, WADD64)
BINARY_ROW(sub_i64, int64_t, WSUB64)
BINARY_ROW(mul_i64, int64_t, WMUL64)
BINARY_ROW(max_i64, int64_t, MAX)
BINARY_ROW(min_i64, int64_t, MIN)
BINARY_ROW(div_f32, float, DIV)
BINARY_ROW(div_f64, double, DIV)

#if defined(__SSE2__)
/* Outputs far larger than the caches are written with streaming stores: a
 * normal store first reads the line it writes (read-for-ownership), so the
 * output would cost as much memory traffic as an input. */
#define STREAM_ROW(NAME, VOP, F)                                                           \
  static void NAME(float *restrict o, const float *restrict a, const float *restrict b, int64_t n) { \
    int64_t i = 0;                                                                          \
    for (; i < n && ((uintptr_t)(o + i) & 15); i++) o[i] = F(a[i], b[i]);                  \
    for (; i + 4 <= n; i += 4)                                                              \
      _mm_stream_ps(o + i, VOP(_mm_loadu_ps(a + i), _mm_loadu_ps(b + i)));                  \
    for (; i < n; i++) o[i] = F(a[i], b[i]);                                                \
    _mm_sfence(); /* make the stores visible before the shard reports done */              \
  }
STREAM_ROW(add_stream, _mm_add_ps, ADD)
STREAM_ROW(sub_stream, _mm_sub_ps, SUB)
STREAM_ROW(mul_stream, _mm_mul_ps, MUL)
STREAM_ROW(div_stream, _mm_div_ps, DIV)
/* maxps/minps give the right operand when either is NaN: a NaN on the left is put back. */
static inline __m128 max_nan_ps(__m128 a, __m128 b) {
  __m128 nan = _mm_cmpunord_ps(a, a);
  return _mm_or_ps(_mm_and_ps(nan, a), _mm_andnot_ps(nan, _mm_max_ps(a, b)));
}
static inline __m128 min_nan_ps(__m128 a, __m128 b) {
  __m128 nan = _mm_cmpunord_ps(a, a);
  return _mm_or_ps(_mm_and_ps(nan, a), _mm_andnot_ps(nan, _mm_min_ps(a, b)));
}
STREAM_ROW(max_stream, max_nan_ps, FMAX)
STREAM_ROW(min_stream, min_nan_ps, FMIN)
typedef void (*stream_row)(float *, const float *, const float *, int64_t);
static const stream_row stream_fns[B_COUNT] = {add_stream, sub_stream, mul_stream, div_stream, max_stream, min_stream};
#endif

/* float32 rows written over one operand's buffer (forwarded to the output): o = F(o, b) when the
 * forwarded operand is the left one, F(b, o) otherwise; b is a row (sb 1) or one value (sb 0). */
#define INPLACE_ROW(NAME, F)                                                                  \
  TFD_VECTOR_CLONES static void NAME(float *restrict o, const float *restrict b, int64_t sb, bool o_left, \
                                     int64_t n) {                                                     \
    float v = b[0];                                                                           \
    if (o_left && sb == 1)                                                                    \
      for (int64_t i = 0; i < n; i++) o[i] = F(o[i], b[i]);                                   \
    else if (o_left)                                                                          \
      for (int64_t i = 0; i < n; i++) o[i] = F(o[i], v);                                      \
    else if (sb == 1)                                                                         \
      for (int64_t i = 0; i < n; i++) o[i] = F(b[i], o[i]);                                   \
    else                                                                                      \
      for (int64_t i = 0; i < n; i++) o[i] = F(v, o[i]);                                      \
  }
INPLACE_ROW(add_inplace, ADD)
INPLACE_ROW(sub_inplace, SUB)
INPLACE_ROW(mul_inplace, MUL)
INPLACE_ROW(div_inplace, DIV)
INPLACE_ROW(max_inplace, FMAX)
INPLACE_ROW(min_inplace, FMIN)
typedef void (*inplace_row)(float *, const float *, int64_t, bool, int64_t);
static const inplace_row inplace_fns[B_COUNT] = {add_inplace, sub_inplace, mul_inplace,
                                                 div_inplace, max_inplace, min_inplace};

/* Outputs at least this large (bytes) bypass the caches. */
#define STREAM_MIN_BYTES ((int64_t)8 << 20)

static binary_row binary_fn(int op, tfd_dtype dt) {
  static const binary_row f32[B_COUNT] = {add_f32, sub_f32, mul_f32, div_f32, max_f32, min_f32};
  static const binary_row f64[B_COUNT] = {add_f64, sub_f64, mul_f64, div_f64, max_f64, min_f64};
  static const binary_row i32[B_COUNT] = {add_i32, sub_i32, mul_i32, NULL, max_i32, min_i32};
  static const binary_row i64[B_COUNT] = {add_i64, sub_i64, mul_i64, NULL, max_i64, min_i64};
  switch (dt) {
    case TFD_FLOAT32: return f32[op];
    case TFD_FLOAT64: return f64[op];
    case TFD_INT32: return i32[op];
    case TFD_INT64: return i64[op];
    default: return NULL;
  }
}

#define UNARY_ROW(NAME, T, EXPR)                                  \
  TFD_VECTOR_CLONES static void NAME(void *o_, const void *a_, int64_t n) { \
    T *restrict o = o_;                                          \
    const T *restrict a = a_;                                    \
    for (int64_t i = 0; i < n; i++) {                            \
      T x = a[i];                                                \
      o[i] = (EXPR);                                             \
    }                                                            \
  }

/* Float Relu, Relu6, Elu, LeakyRelu, Sigmoid and Tanh are activation.c's rows. */
UNARY_ROW(neg_f32, float, -x)
UNARY_ROW(abs_f32, float, fabsf(x))
UNARY_ROW(square_f32, float, x * x)
UNARY_ROW(neg_f64, double, -x)
UNARY_ROW(abs_f64, double, fabs(x))
UNARY_ROW(square_f64, double, x * x)
UNARY_ROW(neg_i32, int32_t, WSUB32(0, x))
UNARY_ROW(abs_i32, int32_t, x < 0 ? WSUB32(0, x) : x)
UNARY_ROW(square_i32, int32_t, WMUL32(x, x))
UNARY_ROW(relu_i32, int32_t, x > 0 ? x : 0)
UNARY_ROW(relu6_i32, int32_t, x > 0 ? (x < 6 ? x : 6) : 0)
UNARY_ROW(neg_i64, int64_t, WSUB64(0, x))
UNARY_ROW(abs_i64, int64_t, x < 0 ? WSUB64(0, x) : x)
UNARY_ROW(square_i64, int64_t, WMUL64(x, x))
UNARY_ROW(relu_i64, int64_t, x > 0 ? x : 0)
UNARY_ROW(relu6_i64, int64_t, x > 0 ? (x < 6 ? x : 6) : 0)
UNARY_ROW(exp_f32, float, expf(x))
UNARY_ROW(exp_f64, double, exp(x))
UNARY_ROW(log_f32, float, logf(x))
UNARY_ROW(log_f64, double, log(x))
UNARY_ROW(sqrt_f32, float, sqrtf(x))
UNARY_ROW(sqrt_f64, double, sqrt(x))

static unary_row unary_fn(int op, tfd_dtype dt) {
  static const unary_row f32[U_COUNT] = {neg_f32, abs_f32, square_f32, NULL, NULL, exp_f32, log_f32, sqrt_f32};
  static const unary_row f64[U_COUNT] = {neg_f64, abs_f64, square_f64, NULL, NULL, exp_f64, log_f64, sqrt_f64};
  static const unary_row i32[U_COUNT] = {neg_i32, abs_i32, square_i32, relu_i32, relu6_i32};
  static const unary_row i64[U_COUNT] = {neg_i64, abs_i64, square_i64, relu_i64, relu6_i64};
  switch (dt) {
    case TFD_FLOAT32: return f32[op];
    case TFD_FLOAT64: return f64[op];
    case TFD_INT32: return i32[op];
    case TFD_INT64: return i64[op];
    default: return NULL;
  }
}

/* ---- unary ---- */
typedef struct unary_job {
  unary_row fn;
  tfd_activation act; /* float activations: activation.c's rows instead of fn */
  double alpha;
  tfd_dtype dt;
  char *o;
  const char *a;
  size_t es;
} unary_job;

static void unary_range(int64_t b, int64_t e, void *arg) {
  unary_job *j = arg;
  char *o = j->o + b * (int64_t)j->es;
  const char *a = j->a + b * (int64_t)j->es;
  if (!j->act) j->fn(o, a, e - b);
  else if (j->dt == TFD_FLOAT32) tfd_activation_f32(j->act, (float *)o, (const float *)a, e - b, (float)j->alpha);
  else tfd_activation_f64(j->act, (double *)o, (const double *)a, e - b, j->alpha);
}

static tfd_activation float_activation(int code) {
  switch (code) {
    case U_RELU: return TFD_ACT_RELU;
    case U_RELU6: return TFD_ACT_RELU6;
    case U_ELU: return TFD_ACT_ELU;
    case U_LEAKY_RELU: return TFD_ACT_LEAKY_RELU;
    case U_SIGMOID: return TFD_ACT_SIGMOID;
    case U_TANH: return TFD_ACT_TANH;
    default: return TFD_ACT_NONE;
  }
}

static void k_unary(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *in = c->inputs[0];
  tfd_dtype dt = tfd_tensor_dtype(in);
  bool is_float = dt == TFD_FLOAT32 || dt == TFD_FLOAT64;
  tfd_activation act = is_float ? float_activation(k->code) : TFD_ACT_NONE;
  unary_row fn = act ? NULL : unary_fn(k->code, dt);
  if (!fn && !act) {
    tfd_kernel_fail(c, k, TFD_UNIMPLEMENTED, "no kernel for dtype %s", tfd_dtype_name(dt));
    return;
  }
  tfd_tensor *out = NULL;
  if (act) { /* activation rows may write over their input */
    int64_t dims[TFD_MAX_DIMS];
    for (int d = 0; d < tfd_tensor_ndims(in); d++) dims[d] = tfd_tensor_dim(in, d);
    out = tfd_kernel_forward_input(c, 0, dt, dims, tfd_tensor_ndims(in));
  }
  if (!out && !(out = tfd_kernel_alloc_like(c, k, dt, in))) return;
  unary_job j = {fn, act, k->alpha, dt, tfd_tensor_data(out), tfd_tensor_const_data(in), tfd_dtype_size(dt)};
  int64_t n = tfd_tensor_numel(in);
  if (n >= TFD_PARALLEL_MIN_ELEMENTS) tfd_threadpool_parallel_for(c->intra_pool, n, k->code >= U_EXP ? 20 : 2, unary_range, &j);
  else if (n) unary_range(0, n, &j);
  c->outputs[0] = out;
}

/* ---- binary with broadcasting ---- */
typedef struct binary_job {
  binary_row fn;
  int op;
  bool stream; /* float32, contiguous, big: streaming stores */
  int inplace; /* 1 or 2: the output is operand a's or b's buffer (float32, flat case only) */
  char *o;
  const char *a, *b;
  size_t es;
  int nd;                      /* rank of the output */
  int64_t dims[TFD_MAX_DIMS];  /* output dims */
  int64_t sa[TFD_MAX_DIMS], sb[TFD_MAX_DIMS]; /* element strides of a and b per output dim (0: broadcast) */
  int64_t inner;               /* last output dimension: one row */
} binary_job;

/* Same shapes, or one side a single element: one long strided row. */
static void binary_flat_range(int64_t b, int64_t e, void *arg) {
  binary_job *j = arg;
  int64_t es = (int64_t)j->es, sa = j->sa[0], sb = j->sb[0];
  if (j->inplace) {
    bool left = j->inplace == 1;
    int64_t so = left ? sb : sa;
    inplace_fns[j->op]((float *)j->o + b, (const float *)(left ? j->b : j->a) + b * so, so, left, e - b);
    return;
  }
#if defined(__SSE2__)
  if (j->stream) {
    stream_fns[j->op]((float *)j->o + b, (const float *)j->a + b, (const float *)j->b + b, e - b);
    return;
  }
#endif
  j->fn(j->o + b * es, j->a + b * sa * es, sa, j->b + b * sb * es, sb, e - b);
}

/* General broadcasting: rows of the last output dimension. */
static void binary_rows_range(int64_t b, int64_t e, void *arg) {
  binary_job *j = arg;
  int64_t es = (int64_t)j->es;
  for (int64_t r = b; r < e; r++) {
    int64_t rem = r, oa = 0, ob = 0;
    for (int d = j->nd - 2; d >= 0; d--) {
      int64_t i = rem % j->dims[d];
      rem /= j->dims[d];
      oa += i * j->sa[d];
      ob += i * j->sb[d];
    }
    j->fn(j->o + r * j->inner * es, j->a + oa * es, j->sa[j->nd - 1], j->b + ob * es, j->sb[j->nd - 1], j->inner);
  }
}

/* Element strides of t broadcast into an output of rank nd with dims. */
static void broadcast_strides(const tfd_tensor *t, int nd, int64_t *strides) {
  int tnd = tfd_tensor_ndims(t);
  int64_t s = 1;
  for (int d = nd - 1; d >= 0; d--) {
    int td = d - (nd - tnd);
    int64_t size = td >= 0 ? tfd_tensor_dim(t, td) : 1;
    strides[d] = size == 1 ? 0 : s;
    s *= size;
  }
}

static void run_binary(tfd_kernel *k, tfd_kernel_context *c, int op, tfd_tensor *a, tfd_tensor *b) {
  tfd_dtype dt = tfd_tensor_dtype(a);
  binary_row fn = binary_fn(op, dt);
  if (!fn) {
    tfd_kernel_fail(c, k, TFD_UNIMPLEMENTED, "no kernel for dtype %s", tfd_dtype_name(dt));
    return;
  }
  tfd_shape sa, sb, so;
  tfd_shape_of_tensor(a, &sa);
  tfd_shape_of_tensor(b, &sb);
  if (!tfd_cwise_broadcast(c, k, &sa, &sb, &so)) return;
  int64_t n = tfd_shape_numel(&so), na = tfd_tensor_numel(a), nb = tfd_tensor_numel(b);
  bool flat = (na == n || na == 1) && (nb == n || nb == 1);
  /* An operand nobody else reads becomes the output: no allocation, and its lines are in cache. */
  tfd_tensor *out = NULL;
  int inplace = 0;
  if (flat && dt == TFD_FLOAT32 && n > 0 && a == c->inputs[0] && b == c->inputs[1]) {
    if (na == n && (out = tfd_kernel_forward_input(c, 0, dt, so.dims, so.ndims))) inplace = 1;
    else if (nb == n && (out = tfd_kernel_forward_input(c, 1, dt, so.dims, so.ndims))) inplace = 2;
  }
  if (!out && !(out = tfd_kernel_alloc(c, k, dt, so.dims, so.ndims))) return;
  /* Field by field: an initialiser would zero the three stride arrays (a 264-byte rep stos, a tenth of
   * a one-element add), and each path below sets the entries it reads. */
  binary_job j;
  j.fn = fn;
  j.op = op;
  j.stream = false;
  j.inplace = inplace;
  j.o = tfd_tensor_data(out);
  j.a = tfd_tensor_const_data(a);
  j.b = tfd_tensor_const_data(b);
  j.es = tfd_dtype_size(dt);
  j.nd = so.ndims;
  j.inner = 1;
  c->outputs[0] = out;
  if (n == 0) return;
  int64_t cost = op == B_DIV ? 4 : 1;
  if (flat) {
    j.sa[0] = na == 1 && n > 1 ? 0 : 1;
    j.sb[0] = nb == 1 && n > 1 ? 0 : 1;
    j.stream = dt == TFD_FLOAT32 && !inplace && j.sa[0] == 1 && j.sb[0] == 1 && n * 4 >= STREAM_MIN_BYTES;
    if (n >= TFD_PARALLEL_MIN_ELEMENTS) tfd_threadpool_parallel_for(c->intra_pool, n, cost, binary_flat_range, &j);
    else binary_flat_range(0, n, &j);
    return;
  }
  for (int d = 0; d < so.ndims; d++) j.dims[d] = so.dims[d];
  broadcast_strides(a, so.ndims, j.sa);
  broadcast_strides(b, so.ndims, j.sb);
  j.inner = so.dims[so.ndims - 1];
  int64_t rows = n / j.inner;
  if (n >= TFD_PARALLEL_MIN_ELEMENTS) tfd_threadpool_parallel_for(c->intra_pool, rows, cost * j.inner, binary_rows_range, &j);
  else binary_rows_range(0, rows, &j);
}

static void k_binary(tfd_kernel *k, tfd_kernel_context *c) { run_binary(k, c, k->code, c->inputs[0], c->inputs[1]); }

static void k_bias_add(tfd_kernel *k, tfd_kernel_context *c) {
  if (tfd_bias_add_check(c, k)) run_binary(k, c, B_ADD, c->inputs[0], c->inputs[1]);
}

/* ---- softmax over the last dimension ---- */
typedef struct softmax_job {
  const void *in;
  void *out;
  int64_t cols;
  tfd_dtype dt;
} softmax_job;

#define SOFTMAX_ROWS(T, EXP)                                       \
  for (int64_t r = b; r < e; r++) {                                \
    const T *x = (const T *)j->in + r * j->cols;                   \
    T *y = (T *)j->out + r * j->cols;                              \
    T m = x[0];                                                    \
    for (int64_t i = 1; i < j->cols; i++) m = x[i] > m ? x[i] : m; \
    T s = 0;                                                       \
    for (int64_t i = 0; i < j->cols; i++) s += (y[i] = EXP(x[i] - m)); \
    for (int64_t i = 0; i < j->cols; i++) y[i] /= s;               \
  }

/* float32: the shifted logits of all the block's rows first, then one vectorised exp over them
 * (rows of a classifier's 10 scores are too short for a loop per row to pay), then the sums. */
static void softmax_f32(const softmax_job *j, int64_t b, int64_t e) {
  const float *x = (const float *)j->in + b * j->cols;
  float *y = (float *)j->out + b * j->cols;
  int64_t cols = j->cols, rows = e - b;
  for (int64_t r = 0; r < rows; r++) {
    const float *xr = x + r * cols;
    float *yr = y + r * cols, m = xr[0];
    for (int64_t i = 1; i < cols; i++) m = xr[i] > m ? xr[i] : m;
    for (int64_t i = 0; i < cols; i++) yr[i] = xr[i] - m;
  }
  tfd_exp_f32(y, y, rows * cols);
  for (int64_t r = 0; r < rows; r++) {
    float *yr = y + r * cols, s = 0;
    for (int64_t i = 0; i < cols; i++) s += yr[i];
    for (int64_t i = 0; i < cols; i++) yr[i] /= s;
  }
}

static void softmax_range(int64_t b, int64_t e, void *arg) {
  softmax_job *j = arg;
  if (j->dt == TFD_FLOAT32) {
    softmax_f32(j, b, e);
  } else {
    SOFTMAX_ROWS(double, exp)
  }
}

static void k_softmax(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *in = c->inputs[0];
  int nd = tfd_tensor_ndims(in);
  if (!tfd_softmax_check(c, k)) return;
  tfd_tensor *out = tfd_kernel_alloc_like(c, k, tfd_tensor_dtype(in), in);
  if (!out) return;
  softmax_job j = {tfd_tensor_const_data(in), tfd_tensor_data(out), tfd_tensor_dim(in, nd - 1), tfd_tensor_dtype(in)};
  int64_t rows = j.cols ? tfd_tensor_numel(in) / j.cols : 0;
  if (rows * j.cols >= TFD_PARALLEL_MIN_ELEMENTS) tfd_threadpool_parallel_for(c->intra_pool, rows, 20 * j.cols, softmax_range, &j);
  else softmax_range(0, rows, &j);
  c->outputs[0] = out;
}

tfd_code tfd_setup_cwise(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  static const char *const binary[] = {"Add", "Sub", "Mul", "RealDiv", "Maximum", "Minimum"};
  static const char *const unary[] = {"Neg", "Abs",  "Square",  "Relu", "Relu6", "Exp",
                                      "Log", "Sqrt", "Sigmoid", "Tanh", "Elu",   "LeakyRelu"};
  const char *op = init->op->name;
  if (init->num_inputs > 0 && init->in_types[0] == TFD_COMPLEX64) return tfd_setup_spectral(k, init, st);
  if (strcmp(op, "AddV2") == 0) op = "Add";
  for (int i = 0; i < B_COUNT; i++)
    if (strcmp(op, binary[i]) == 0) {
      k->code = i;
      k->compute = k_binary;
      return TFD_OK;
    }
  for (int i = 0; i < U_COUNT; i++)
    if (strcmp(op, unary[i]) == 0) {
      k->code = i;
      k->alpha = tfd_attr_float(init->node, "alpha", 0.2);
      k->compute = k_unary;
      return TFD_OK;
    }
  k->compute = strcmp(op, "Softmax") == 0 ? k_softmax : k_bias_add;
  return TFD_OK;
}
