/* Elementwise math, comparisons and logic with TensorFlow's semantics.
 *
 * Unary: Selu, Softplus, Rsqrt, Reciprocal, Floor, Ceil, Sin, Cos (float),
 * LogicalNot (bool).
 * Binary with numpy broadcasting: Pow, SquaredDifference, FloorDiv, FloorMod
 * (numbers), Atan2 (float); Equal, NotEqual, Less, LessEqual, Greater, GreaterEqual (bool
 * out); LogicalAnd, LogicalOr (bool). Select (TF1: condition scalar, same
 * shape, or a vector along the first dimension) and SelectV2 (3-way
 * broadcasting). AddN (N inputs of one shape).
 *
 * Every op runs through one broadcasting engine: the output's dimensions of
 * size 1 are dropped and adjacent dimensions every input walks contiguously
 * (or not at all) are merged, so same-shape and scalar cases become one
 * strided row, and the rest rows of the last merged dimension; large outputs
 * are split over the intra-op pool. Integer arithmetic wraps (done in
 * unsigned); integer FloorDiv/FloorMod by zero and integer Pow to a negative
 * power are refused before any work, as TensorFlow refuses them. */
#include <math.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "../../core/status_internal.h"
#include "../../core/tstring.h"
#include "cwise_logic.h"
#include "../kernel.h"
#include "../vector_clones.h"

enum {
  L_SELU,
  L_SOFTPLUS,
  L_RSQRT,
  L_RECIPROCAL,
  L_FLOOR,
  L_CEIL,
  L_SIN,
  L_COS,
  L_LOGICAL_NOT, /* the last unary op */
  L_POW,
  L_SQUARED_DIFFERENCE,
  L_FLOOR_DIV,
  L_FLOOR_MOD,
  L_ATAN2,
  L_EQUAL,
  L_NOT_EQUAL,
  L_LESS,
  L_LESS_EQUAL,
  L_GREATER,
  L_GREATER_EQUAL,
  L_LOGICAL_AND,
  L_LOGICAL_OR,
  L_SELECT,
  L_SELECT_V2,
  L_ADD_N,
  L_COUNT
};

static const char *const op_names[L_COUNT] = {
    [L_SELU] = "Selu",           [L_SOFTPLUS] = "Softplus",
    [L_RSQRT] = "Rsqrt",         [L_RECIPROCAL] = "Reciprocal",
    [L_FLOOR] = "Floor",         [L_CEIL] = "Ceil",
    [L_SIN] = "Sin",             [L_COS] = "Cos",
    [L_LOGICAL_NOT] = "LogicalNot", [L_POW] = "Pow",
    [L_SQUARED_DIFFERENCE] = "SquaredDifference", [L_FLOOR_DIV] = "FloorDiv",
    [L_FLOOR_MOD] = "FloorMod",  [L_ATAN2] = "Atan2",       [L_EQUAL] = "Equal",
    [L_NOT_EQUAL] = "NotEqual",  [L_LESS] = "Less",
    [L_LESS_EQUAL] = "LessEqual", [L_GREATER] = "Greater",
    [L_GREATER_EQUAL] = "GreaterEqual", [L_LOGICAL_AND] = "LogicalAnd",
    [L_LOGICAL_OR] = "LogicalOr", [L_SELECT] = "Select",
    [L_SELECT_V2] = "SelectV2",  [L_ADD_N] = "AddN"};

typedef tfd_cwise_row_fn row_fn;

/* ---- unary rows ---- */
/* Rows that vectorise at AVX2 width (floor, ceil, sqrt and division inline there) are cloned per CPU. */
#define UNARY_ROW(NAME, T, TO, EXPR) TFD_UNARY_ROW(, NAME, T, TO, EXPR)

/* TensorFlow's Selu constants; scale * alpha as TensorFlow spells it. */
#define SELU_SCALE 1.0507009873554804934193349852946
#define SELU_SCALE_ALPHA 1.7580993408473768599402175208123

UNARY_ROW(selu_f32, float, float, x < 0.0f ? (float)SELU_SCALE_ALPHA * expm1f(x) : (float)SELU_SCALE * x)
UNARY_ROW(selu_f64, double, double, x < 0.0 ? SELU_SCALE_ALPHA * expm1(x) : SELU_SCALE * x)
/* Softplus as TensorFlow computes it: x above -threshold, exp(x) below
 * threshold, log1p(exp(x)) between, threshold = log(epsilon) + 2; so no
 * overflow for large x and no loss for very negative x. */
#define SOFTPLUS_F32_T (-13.942385152878742f) /* log(FLT_EPSILON) + 2 */
#define SOFTPLUS_F64_T (-34.04365338911715)   /* log(DBL_EPSILON) + 2 */
UNARY_ROW(softplus_f32, float, float,
          x > -SOFTPLUS_F32_T ? x : (x < SOFTPLUS_F32_T ? expf(x) : log1pf(expf(x))))
UNARY_ROW(softplus_f64, double, double,
          x > -SOFTPLUS_F64_T ? x : (x < SOFTPLUS_F64_T ? exp(x) : log1p(exp(x))))
TFD_UNARY_ROW(TFD_VECTOR_CLONES, rsqrt_f32, float, float, 1.0f / sqrtf(x))
TFD_UNARY_ROW(TFD_VECTOR_CLONES, rsqrt_f64, double, double, 1.0 / sqrt(x))
TFD_UNARY_ROW(TFD_VECTOR_CLONES, reciprocal_f32, float, float, 1.0f / x)
TFD_UNARY_ROW(TFD_VECTOR_CLONES, reciprocal_f64, double, double, 1.0 / x)
TFD_UNARY_ROW(TFD_VECTOR_CLONES, floor_f32, float, float, floorf(x))
TFD_UNARY_ROW(TFD_VECTOR_CLONES, floor_f64, double, double, floor(x))
TFD_UNARY_ROW(TFD_VECTOR_CLONES, ceil_f32, float, float, ceilf(x))
TFD_UNARY_ROW(TFD_VECTOR_CLONES, ceil_f64, double, double, ceil(x))
UNARY_ROW(sin_f32, float, float, sinf(x))
UNARY_ROW(sin_f64, double, double, sin(x))
UNARY_ROW(cos_f32, float, float, cosf(x))
UNARY_ROW(cos_f64, double, double, cos(x))
UNARY_ROW(logical_not, unsigned char, unsigned char, (unsigned char)(x == 0))

/* ---- binary rows ---- */
/* The contiguous and one-side-broadcast cases get their own loops so the compiler vectorises them. */
#define BINARY_ROW(NAME, T, TO, F) TFD_BINARY_ROW(, NAME, T, TO, F)

/* Wrapping integer arithmetic: unsigned, so overflow is defined. */
#define WSUB32(x, y) ((int32_t)((uint32_t)(x) - (uint32_t)(y)))
#define WMUL32(x, y) ((int32_t)((uint32_t)(x) * (uint32_t)(y)))
#define WADD32(x, y) ((int32_t)((uint32_t)(x) + (uint32_t)(y)))
#define WSUB64(x, y) ((int64_t)((uint64_t)(x) - (uint64_t)(y)))
#define WMUL64(x, y) ((int64_t)((uint64_t)(x) * (uint64_t)(y)))
#define WADD64(x, y) ((int64_t)((uint64_t)(x) + (uint64_t)(y)))

static inline float sqdiff_f32(float x, float y) { return (x - y) * (x - y); }
static inline double sqdiff_f64(double x, double y) { return (x - y) * (x - y); }
static inline int32_t sqdiff_i32(int32_t x, int32_t y) { return WMUL32(WSUB32(x, y), WSUB32(x, y)); }
static inline int64_t sqdiff_i64(int64_t x, int64_t y) { return WMUL64(WSUB64(x, y), WSUB64(x, y)); }

/* Integer powers by squaring, wrapping; negative exponents are refused before the rows run (0 here). */
static inline int32_t pow_i32(int32_t x, int32_t y) {
  uint32_t r = 1, b = (uint32_t)x;
  if (y < 0) return 0;
  for (uint32_t e = (uint32_t)y; e; e >>= 1) {
    if (e & 1u) r *= b;
    b *= b;
  }
  return (int32_t)r;
}
static inline int64_t pow_i64(int64_t x, int64_t y) {
  uint64_t r = 1, b = (uint64_t)x;
  if (y < 0) return 0;
  for (uint64_t e = (uint64_t)y; e; e >>= 1) {
    if (e & 1u) r *= b;
    b *= b;
  }
  return (int64_t)r;
}
static inline float pow_f32(float x, float y) { return powf(x, y); }
static inline double pow_f64(double x, double y) { return pow(x, y); }

/* Floor division and modulus. Integers: C truncates, so step down when the
 * remainder is nonzero and the signs differ; y == -1 is done as a wrapping
 * negation (MIN / -1 overflows in C); y == 0 is refused before the rows run. */
#define INT_FLOOR(T, S, WSUB)                                                      \
  static inline T floordiv_##S(T x, T y) {                                         \
    if (y == 0) return 0;                                                          \
    if (y == -1) return WSUB(0, x);                                                \
    T q = x / y, r = x % y;                                                        \
    return (r != 0 && ((r < 0) != (y < 0))) ? q - 1 : q;                           \
  }                                                                                \
  static inline T floormod_##S(T x, T y) {                                         \
    if (y == 0 || y == -1) return 0;                                               \
    T r = x % y;                                                                   \
    return (r != 0 && ((r < 0) != (y < 0))) ? r + y : r;                           \
  }
INT_FLOOR(int32_t, i32, WSUB32)
INT_FLOOR(int64_t, i64, WSUB64)
static inline float floordiv_f32(float x, float y) { return floorf(x / y); }
static inline double floordiv_f64(double x, double y) { return floor(x / y); }
static inline float floormod_f32(float x, float y) {
  float r = fmodf(x, y);
  return (r != 0 && ((y < 0) != (r < 0))) ? r + y : r;
}
static inline double floormod_f64(double x, double y) {
  double r = fmod(x, y);
  return (r != 0 && ((y < 0) != (r < 0))) ? r + y : r;
}

#define EQ(x, y) ((unsigned char)((x) == (y)))
#define NE(x, y) ((unsigned char)((x) != (y)))
#define LT(x, y) ((unsigned char)((x) < (y)))
#define LE(x, y) ((unsigned char)((x) <= (y)))
#define GT(x, y) ((unsigned char)((x) > (y)))
#define GE(x, y) ((unsigned char)((x) >= (y)))
#define AND(x, y) ((unsigned char)(((x) != 0) & ((y) != 0)))
#define OR(x, y) ((unsigned char)(((x) != 0) | ((y) != 0)))

#define MATH_ROWS(T, S)                                      \
  BINARY_ROW(pow_row_##S, T, T, pow_##S)                     \
  BINARY_ROW(sqdiff_row_##S, T, T, sqdiff_##S)               \
  BINARY_ROW(floordiv_row_##S, T, T, floordiv_##S)           \
  BINARY_ROW(floormod_row_##S, T, T, floormod_##S)           \
  BINARY_ROW(eq_##S, T, unsigned char, EQ)                   \
  BINARY_ROW(ne_##S, T, unsigned char, NE)                   \
  BINARY_ROW(lt_##S, T, unsigned char, LT)                   \
  BINARY_ROW(le_##S, T, unsigned char, LE)                   \
  BINARY_ROW(gt_##S, T, unsigned char, GT)                   \
  BINARY_ROW(ge_##S, T, unsigned char, GE)

MATH_ROWS(float, f32)
MATH_ROWS(double, f64)
BINARY_ROW(atan2_row_f32, float, float, atan2f)
BINARY_ROW(atan2_row_f64, double, double, atan2)
MATH_ROWS(int32_t, i32)
MATH_ROWS(int64_t, i64)
/* Strings compare by their bytes (an element is a reference: tstring.h). */
#define STR_EQ(x, y) ((unsigned char)tfd_tstring_equal(x, y))
#define STR_NE(x, y) ((unsigned char)!tfd_tstring_equal(x, y))
typedef const tfd_variant *str_ref;
BINARY_ROW(eq_s, str_ref, unsigned char, STR_EQ)
BINARY_ROW(ne_s, str_ref, unsigned char, STR_NE)
BINARY_ROW(eq_b, unsigned char, unsigned char, EQ)
BINARY_ROW(ne_b, unsigned char, unsigned char, NE)
BINARY_ROW(and_b, unsigned char, unsigned char, AND)
BINARY_ROW(or_b, unsigned char, unsigned char, OR)

/* ---- select rows: bits copied by element size, through a mask (no branch, so they vectorise) ---- */
#define PICK(T, c, x, y) (((x) & ((T)0 - (T)((c) != 0))) | ((y) & ~((T)0 - (T)((c) != 0))))
#define SELECT_ROW(NAME, T)                                                         \
  static void NAME(void *o_, const void *const *in, const int64_t *s, int64_t n) {  \
    T *restrict o = o_;                                                             \
    const unsigned char *restrict c = in[0];                                        \
    const T *restrict x = in[1], *restrict y = in[2];                               \
    int64_t sc = s[0], sx = s[1], sy = s[2];                                        \
    if (sc == 1 && sx == 1 && sy == 1)                                              \
      for (int64_t i = 0; i < n; i++) o[i] = PICK(T, c[i], x[i], y[i]);            \
    else if (sc == 0)                                                               \
      for (int64_t i = 0; i < n; i++) o[i] = PICK(T, c[0], x[i * sx], y[i * sy]);  \
    else                                                                            \
      for (int64_t i = 0; i < n; i++) o[i] = PICK(T, c[i * sc], x[i * sx], y[i * sy]); \
  }
SELECT_ROW(select_1, uint8_t)
SELECT_ROW(select_4, uint32_t)
SELECT_ROW(select_8, uint64_t)

static int type_index(tfd_dtype dt) {
  switch (dt) {
    case TFD_FLOAT32: return 0;
    case TFD_FLOAT64: return 1;
    case TFD_INT32: return 2;
    case TFD_INT64: return 3;
    case TFD_BOOL: return 4;
    case TFD_STRING: return 5;
    default: return -1;
  }
}

/* The row for op on inputs of dtype dt; NULL when there is none. */
static row_fn row_for(int op, tfd_dtype dt) {
  /* columns: float32, float64, int32, int64, bool, string */
  static const row_fn rows[L_COUNT][6] = {
      [L_SELU] = {selu_f32, selu_f64},
      [L_SOFTPLUS] = {softplus_f32, softplus_f64},
      [L_RSQRT] = {rsqrt_f32, rsqrt_f64},
      [L_RECIPROCAL] = {reciprocal_f32, reciprocal_f64},
      [L_FLOOR] = {floor_f32, floor_f64},
      [L_CEIL] = {ceil_f32, ceil_f64},
      [L_SIN] = {sin_f32, sin_f64},
      [L_COS] = {cos_f32, cos_f64},
      [L_LOGICAL_NOT] = {NULL, NULL, NULL, NULL, logical_not},
      [L_POW] = {pow_row_f32, pow_row_f64, pow_row_i32, pow_row_i64},
      [L_SQUARED_DIFFERENCE] = {sqdiff_row_f32, sqdiff_row_f64, sqdiff_row_i32, sqdiff_row_i64},
      [L_FLOOR_DIV] = {floordiv_row_f32, floordiv_row_f64, floordiv_row_i32, floordiv_row_i64},
      [L_FLOOR_MOD] = {floormod_row_f32, floormod_row_f64, floormod_row_i32, floormod_row_i64},
      [L_ATAN2] = {atan2_row_f32, atan2_row_f64},
      [L_EQUAL] = {eq_f32, eq_f64, eq_i32, eq_i64, eq_b, eq_s},
      [L_NOT_EQUAL] = {ne_f32, ne_f64, ne_i32, ne_i64, ne_b, ne_s},
      [L_LESS] = {lt_f32, lt_f64, lt_i32, lt_i64},
      [L_LESS_EQUAL] = {le_f32, le_f64, le_i32, le_i64},
      [L_GREATER] = {gt_f32, gt_f64, gt_i32, gt_i64},
      [L_GREATER_EQUAL] = {ge_f32, ge_f64, ge_i32, ge_i64},
      [L_LOGICAL_AND] = {NULL, NULL, NULL, NULL, and_b},
      [L_LOGICAL_OR] = {NULL, NULL, NULL, NULL, or_b},
  };
  int t = type_index(dt);
  return t < 0 || op < 0 || op >= L_COUNT ? NULL : rows[op][t];
}

/* ---- the broadcasting engine ---- */
#define MAX_IN 3

typedef struct bcast_job {
  row_fn fn;
  int nin;
  char *o;
  size_t os;
  const char *in[MAX_IN];
  size_t is[MAX_IN];
  int nd;                              /* merged rank, >= 1 */
  int64_t dims[TFD_MAX_DIMS];
  int64_t st[MAX_IN][TFD_MAX_DIMS];    /* element strides per merged dim (0: broadcast) */
  bool stream;                         /* one flat row, far larger than the caches: see stream_row */
} bcast_job;

/* Outputs at least this large (bytes) bypass the caches, as k_cwise.c's do. */
#define STREAM_MIN_BYTES ((int64_t)8 << 20)

#if defined(__SSE2__)
/* Elements [b, e) of one flat row whose output is far larger than the caches: the row writes blocks
 * into an L1 buffer that streaming stores copy out, so that the output's lines are not first read for
 * ownership (which costs as much memory traffic as another input). */
static void stream_row(const bcast_job *j, int64_t b, int64_t e, const int64_t *s) {
  enum { BLOCK = 8192 };
  _Alignas(16) char buf[BLOCK];
  int64_t os = (int64_t)j->os, per = BLOCK / os;
  const void *p[MAX_IN];
  /* the allocator aligns the output, so this head is a whole number of elements */
  int64_t head = (int64_t)((16 - ((uintptr_t)(j->o + b * os) & 15)) & 15) / os;
  if (head > e - b) head = e - b;
  for (int k = 0; k < j->nin; k++) p[k] = j->in[k] + b * s[k] * (int64_t)j->is[k];
  if (head) j->fn(j->o + b * os, p, s, head);
  for (int64_t i = b + head; i < e; i += per) {
    int64_t n = e - i < per ? e - i : per, bytes = n * os, q = 0;
    for (int k = 0; k < j->nin; k++) p[k] = j->in[k] + i * s[k] * (int64_t)j->is[k];
    j->fn(buf, p, s, n);
    char *o = j->o + i * os;
    for (; q + 16 <= bytes; q += 16) _mm_stream_si128((__m128i *)(o + q), _mm_load_si128((const __m128i *)(buf + q)));
    memcpy(o + q, buf + q, (size_t)(bytes - q));
  }
  _mm_sfence(); /* make the stores visible before the shard reports done */
}
#endif

static void bcast_range(int64_t b, int64_t e, void *arg) {
  const bcast_job *j = arg;
  int last = j->nd - 1;
  int64_t inner = j->dims[last], s[MAX_IN];
  for (int k = 0; k < j->nin; k++) s[k] = j->st[k][last];
#if defined(__SSE2__)
  if (j->stream) {
    stream_row(j, b, e, s);
    return;
  }
#endif
  if (last == 0) { /* one strided row: [b, e) are elements */
    const void *p[MAX_IN];
    for (int k = 0; k < j->nin; k++) p[k] = j->in[k] + b * s[k] * (int64_t)j->is[k];
    j->fn(j->o + b * (int64_t)j->os, p, s, e - b);
    return;
  }
  for (int64_t r = b; r < e; r++) { /* [b, e) are rows of the last dimension */
    int64_t rem = r, off[MAX_IN] = {0};
    for (int d = last - 1; d >= 0; d--) {
      int64_t i = rem % j->dims[d];
      rem /= j->dims[d];
      for (int k = 0; k < j->nin; k++) off[k] += i * j->st[k][d];
    }
    const void *p[MAX_IN];
    for (int k = 0; k < j->nin; k++) p[k] = j->in[k] + off[k] * (int64_t)j->is[k];
    j->fn(j->o + r * inner * (int64_t)j->os, p, s, inner);
  }
}

/* cwise_logic.h; k_math.c's ops run through it too. */
void tfd_cwise_run_rows(tfd_kernel *k, tfd_kernel_context *c, row_fn fn, int nin, tfd_tensor *const *in,
                        const tfd_shape *shapes, tfd_dtype out_dt, const tfd_shape *out, int64_t cost) {
  tfd_tensor *o = tfd_kernel_alloc(c, k, out_dt, out->dims, out->ndims);
  if (!o) return;
  c->outputs[0] = o;
  int64_t n = tfd_tensor_numel(o);
  if (n == 0) return;
  bcast_job j;
  memset(&j, 0, sizeof j);
  j.fn = fn;
  j.nin = nin;
  j.o = tfd_tensor_data(o);
  j.os = tfd_dtype_size(out_dt);
  for (int q = 0; q < nin; q++) {
    j.in[q] = tfd_tensor_const_data(in[q]);
    j.is[q] = tfd_dtype_size(tfd_tensor_dtype(in[q]));
  }
  /* Output dims of size > 1, with each input's strides (0 where it broadcasts). */
  int64_t stride[MAX_IN];
  for (int q = 0; q < nin; q++) stride[q] = 1;
  int nd = 0;
  int64_t dims[TFD_MAX_DIMS], st[MAX_IN][TFD_MAX_DIMS];
  for (int d = out->ndims - 1; d >= 0; d--) {
    int64_t size = out->dims[d];
    for (int q = 0; q < nin; q++) {
      int id = d - (out->ndims - shapes[q].ndims);
      int64_t isz = id >= 0 ? shapes[q].dims[id] : 1;
      if (size != 1) st[q][nd] = isz == 1 ? 0 : stride[q];
      stride[q] *= isz;
    }
    if (size != 1) dims[nd++] = size;
  }
  /* dims/st are innermost first; merge neighbours every input walks alike. */
  int m = 0;
  if (nd == 0) {
    j.dims[0] = 1;
    for (int q = 0; q < nin; q++) j.st[q][0] = 1;
    m = 1;
  } else {
    int64_t md[TFD_MAX_DIMS], ms[MAX_IN][TFD_MAX_DIMS];
    md[0] = dims[0];
    for (int q = 0; q < nin; q++) ms[q][0] = st[q][0];
    m = 1;
    for (int d = 1; d < nd; d++) {
      bool merge = true;
      for (int q = 0; q < nin; q++)
        if (st[q][d] != ms[q][m - 1] * md[m - 1]) merge = false;
      if (merge) {
        md[m - 1] *= dims[d];
      } else {
        md[m] = dims[d];
        for (int q = 0; q < nin; q++) ms[q][m] = st[q][d];
        m++;
      }
    }
    for (int d = 0; d < m; d++) { /* back to outermost first */
      j.dims[d] = md[m - 1 - d];
      for (int q = 0; q < nin; q++) j.st[q][d] = ms[q][m - 1 - d];
    }
  }
  j.nd = m;
  j.stream = m == 1 && n * (int64_t)j.os >= STREAM_MIN_BYTES;
  if (m == 1) {
    if (n >= TFD_PARALLEL_MIN_ELEMENTS) tfd_threadpool_parallel_for(c->intra_pool, n, cost, bcast_range, &j);
    else bcast_range(0, n, &j);
  } else {
    int64_t inner = j.dims[m - 1], rows = n / inner;
    if (n >= TFD_PARALLEL_MIN_ELEMENTS) tfd_threadpool_parallel_for(c->intra_pool, rows, cost * inner, bcast_range, &j);
    else bcast_range(0, rows, &j);
  }
}

static row_fn need_row(tfd_kernel *k, tfd_kernel_context *c, tfd_dtype dt) {
  row_fn fn = row_for(k->code, dt);
  if (!fn) tfd_kernel_fail(c, k, TFD_UNIMPLEMENTED, "no kernel for dtype %s", tfd_dtype_name(dt));
  return fn;
}

/* Any zero (FloorDiv/FloorMod) or negative (Pow) element in an integer divisor or exponent. */
static bool any_int(const tfd_tensor *t, bool negative) {
  int64_t n = tfd_tensor_numel(t);
  int nz = 0;
  if (tfd_tensor_dtype(t) == TFD_INT32) {
    const int32_t *p = tfd_tensor_const_data(t);
    for (int64_t i = 0; i < n; i++) nz |= negative ? p[i] < 0 : p[i] == 0;
  } else if (tfd_tensor_dtype(t) == TFD_INT64) {
    const int64_t *p = tfd_tensor_const_data(t);
    for (int64_t i = 0; i < n; i++) nz |= negative ? p[i] < 0 : p[i] == 0;
  }
  return nz != 0;
}

static void k_unary(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *in = c->inputs[0];
  tfd_dtype dt = tfd_tensor_dtype(in);
  row_fn fn = need_row(k, c, dt);
  if (!fn) return;
  tfd_shape s;
  tfd_shape_of_tensor(in, &s);
  tfd_cwise_run_rows(k, c, fn, 1, c->inputs, &s, dt, &s, k->code == L_RECIPROCAL || k->code == L_FLOOR || k->code == L_CEIL ? 2 : 20);
}

static void k_binary(tfd_kernel *k, tfd_kernel_context *c) {
  if (!tfd_cwise_same_dtypes(c, k, 0, 2)) return;
  tfd_tensor *a = c->inputs[0], *b = c->inputs[1];
  tfd_dtype dt = tfd_tensor_dtype(a);
  row_fn fn = need_row(k, c, dt);
  if (!fn) return;
  tfd_shape s[2], out;
  tfd_shape_of_tensor(a, &s[0]);
  tfd_shape_of_tensor(b, &s[1]);
  bool is_compare = k->code >= L_EQUAL && k->code <= L_GREATER_EQUAL;
  bool is_logic = k->code == L_LOGICAL_AND || k->code == L_LOGICAL_OR;
  tfd_dtype out_dt = is_compare || is_logic ? TFD_BOOL : dt;
  bool lenient = (k->code == L_EQUAL || k->code == L_NOT_EQUAL) && !k->keep_dims, all_differ;
  if (!tfd_compare_broadcast(c, k, lenient, &s[0], &s[1], &out, &all_differ)) return;
  if (all_differ) {
    tfd_tensor *o = tfd_kernel_alloc(c, k, TFD_BOOL, NULL, 0);
    if (!o) return;
    *(unsigned char *)tfd_tensor_data(o) = k->code == L_NOT_EQUAL;
    c->outputs[0] = o;
    return;
  }
  bool is_int = dt == TFD_INT32 || dt == TFD_INT64;
  if (is_int && (k->code == L_FLOOR_DIV || k->code == L_FLOOR_MOD) && tfd_shape_numel(&out) > 0 && any_int(b, false)) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Integer division by zero");
    return;
  }
  if (is_int && k->code == L_POW && tfd_shape_numel(&out) > 0 && any_int(b, true)) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Integers to negative integer powers are not allowed");
    return;
  }
  int64_t cost = k->code == L_POW || k->code == L_ATAN2 ? 20 : k->code == L_FLOOR_DIV || k->code == L_FLOOR_MOD ? 8 : 1;
  tfd_cwise_run_rows(k, c, fn, 2, c->inputs, s, out_dt, &out, cost);
}

static row_fn select_row(tfd_dtype dt) {
  switch (tfd_dtype_size(dt)) {
    case 1: return select_1;
    case 4: return select_4;
    case 8: return select_8;
    default: return NULL;
  }
}

static void k_select(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_shape s[3], out;
  if (!tfd_select_check(c, k, k->code == L_SELECT_V2, s, &out)) return;
  tfd_dtype dt = tfd_tensor_dtype(c->inputs[1]);
  tfd_cwise_run_rows(k, c, select_row(dt), 3, c->inputs, s, dt, &out, 1);
}

/* ---- AddN ---- */
typedef struct addn_job {
  tfd_tensor *const *in;
  int n;
  void *o;
  tfd_dtype dt;
} addn_job;

#define ADDN_RANGE(T, ADD)                                                 \
  do {                                                                     \
    T *restrict o = (T *)j->o + b;                                         \
    const T *restrict x0 = (const T *)tfd_tensor_const_data(j->in[0]) + b; \
    const T *restrict x1 = (const T *)tfd_tensor_const_data(j->in[1]) + b; \
    for (int64_t i = 0; i < e - b; i++) o[i] = ADD(x0[i], x1[i]);          \
    for (int q = 2; q < j->n; q++) {                                       \
      const T *restrict x = (const T *)tfd_tensor_const_data(j->in[q]) + b; \
      for (int64_t i = 0; i < e - b; i++) o[i] = ADD(o[i], x[i]);          \
    }                                                                      \
  } while (0)
#define FADD(x, y) ((x) + (y))

static void addn_range(int64_t b, int64_t e, void *arg) {
  const addn_job *j = arg;
  switch (j->dt) {
    case TFD_FLOAT32: ADDN_RANGE(float, FADD); break;
    case TFD_FLOAT64: ADDN_RANGE(double, FADD); break;
    case TFD_INT32: ADDN_RANGE(int32_t, WADD32); break;
    case TFD_INT64: ADDN_RANGE(int64_t, WADD64); break;
    default: break;
  }
}

static void k_add_n(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *first = c->inputs[0];
  tfd_dtype dt = tfd_tensor_dtype(first);
  if (!tfd_cwise_same_dtypes(c, k, 0, c->num_inputs)) return;
  if (type_index(dt) < 0 || type_index(dt) > 3) {
    tfd_kernel_fail(c, k, TFD_UNIMPLEMENTED, "no kernel for dtype %s", tfd_dtype_name(dt));
    return;
  }
  if (!tfd_add_n_check(c, k)) return;
  tfd_tensor *o = tfd_kernel_alloc_like(c, k, dt, first);
  if (!o) return;
  c->outputs[0] = o;
  int64_t n = tfd_tensor_numel(o);
  if (n == 0) return;
  if (c->num_inputs == 1) {
    memcpy(tfd_tensor_data(o), tfd_tensor_const_data(first), (size_t)n * tfd_dtype_size(dt));
    return;
  }
  addn_job j = {c->inputs, c->num_inputs, tfd_tensor_data(o), dt};
  if (n >= TFD_PARALLEL_MIN_ELEMENTS) tfd_threadpool_parallel_for(c->intra_pool, n, c->num_inputs, addn_range, &j);
  else addn_range(0, n, &j);
}

tfd_code tfd_setup_logic(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  const char *op = init->op->name;
  for (int i = 0; i < L_COUNT; i++)
    if (strcmp(op, op_names[i]) == 0) {
      k->code = i;
      if (i <= L_LOGICAL_NOT) k->compute = k_unary;
      else if (i <= L_LOGICAL_OR) k->compute = k_binary;
      else if (i <= L_SELECT_V2) k->compute = k_select;
      else k->compute = k_add_n;
      /* Equal/NotEqual: keep_dims carries incompatible_shape_error (TensorFlow's default true). */
      k->keep_dims = tfd_attr_bool(init->node, "incompatible_shape_error", true);
      return TFD_OK;
    }
  return tfd_status_setf(st, TFD_INTERNAL, "no logic kernel for op %s", op);
}
