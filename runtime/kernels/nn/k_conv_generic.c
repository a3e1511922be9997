/* Conv2D, DepthwiseConv2dNative, MaxPool and AvgPool on the dtypes other than float32 (see
 * conv_generic.h): plain loops over NHWC images and HWIO filters, output rows shared over the
 * intra-op pool. Windows follow TensorFlow's rules through window.h, as k_conv.c's float32 kernels
 * do: convolutions skip the padding (zeros), dilations spread the filter taps, a depthwise filter
 * [kh, kw, c, m] makes c * m channels (channel ch * m + q from input channel ch); MaxPool starts
 * from the dtype's lowest value and AvgPool divides by the number of in-bounds elements. */
#include <float.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/checked.h"
#include "../../core/half.h"
#include "conv_generic.h"
#include "conv_logic.h"

#define BIT(dt) (1u << (dt))

static const uint32_t takes[] = {
    [TFD_CONV_GENERIC_CONV2D] = BIT(TFD_FLOAT64) | BIT(TFD_INT32) | BIT(TFD_FLOAT16),
    [TFD_CONV_GENERIC_DEPTHWISE] = BIT(TFD_FLOAT64) | BIT(TFD_FLOAT16),
    [TFD_CONV_GENERIC_MAXPOOL] = BIT(TFD_FLOAT64) | BIT(TFD_INT32) | BIT(TFD_INT64) | BIT(TFD_UINT8) | BIT(TFD_FLOAT16),
    [TFD_CONV_GENERIC_AVGPOOL] = BIT(TFD_FLOAT64) | BIT(TFD_FLOAT16),
};

typedef struct gjob {
  tfd_conv_generic_op op;
  tfd_dtype dt;
  const void *x, *f;
  void *y;
  int64_t n, h, w, c, kh, kw, o, oh, ow, pad_t, pad_l, sh, sw, dh, dw;
  atomic_bool failed; /* out of memory for a shard's accumulators */
} gjob;

/* ---- element access: load into the type computed in, store back rounded ---- */
static inline double ld_f64(const double *p, int64_t i) { return p[i]; }
static inline double st_f64(double v) { return v; }
static inline float ld_f16(const uint16_t *p, int64_t i) { return tfd_half_to_float(p[i]); }
static inline uint16_t st_f16(float v) { return tfd_float_to_half(v); }
static inline uint32_t ld_i32(const int32_t *p, int64_t i) { return (uint32_t)p[i]; } /* modulo 2^32: defined */
static inline int32_t st_i32(uint32_t v) {
  /* Back to int32 without the implementation-defined conversion of values above INT32_MAX. */
  return v <= (uint32_t)INT32_MAX ? (int32_t)v : (int32_t)(v - 2147483648u) - INT32_MAX - 1;
}

/* The first filter tap at or past the input's start: taps sit at base + tap * dilation. */
static inline int64_t first_tap(int64_t base, int64_t dilation) { return base < 0 ? (-base + dilation - 1) / dilation : 0; }

/* Output rows [r0, r1) (a row: one image's output row) of a convolution; acc holds j->o sums. */
#define DEFINE_CONV(SUFFIX, T, ACC)                                                                 \
  static void conv_##SUFFIX(const gjob *j, int64_t r0, int64_t r1, ACC *acc) {                      \
    const T *x = j->x, *f = j->f;                                                                   \
    T *y = j->y;                                                                                    \
    bool depthwise = j->op == TFD_CONV_GENERIC_DEPTHWISE;                                           \
    int64_t m = depthwise && j->c > 0 ? j->o / j->c : 0; /* channel multiplier */                   \
    for (int64_t r = r0; r < r1; r++) {                                                             \
      int64_t b = r / j->oh, oy = r % j->oh;                                                        \
      for (int64_t ox = 0; ox < j->ow; ox++) {                                                      \
        for (int64_t q = 0; q < j->o; q++) acc[q] = 0;                                              \
        int64_t by = oy * j->sh - j->pad_t, bx = ox * j->sw - j->pad_l;                             \
        for (int64_t ky = first_tap(by, j->dh); ky < j->kh; ky++) {                                 \
          int64_t iy = by + ky * j->dh;                                                             \
          if (iy >= j->h) break;                                                                    \
          for (int64_t kx = first_tap(bx, j->dw); kx < j->kw; kx++) {                               \
            int64_t ix = bx + kx * j->dw;                                                           \
            if (ix >= j->w) break;                                                                  \
            const T *in = x + ((b * j->h + iy) * j->w + ix) * j->c;                                 \
            if (depthwise) {                                                                        \
              const T *tap = f + (ky * j->kw + kx) * j->o; /* [c, m] */                             \
              for (int64_t ch = 0; ch < j->c; ch++) {                                               \
                ACC v = ld_##SUFFIX(in, ch);                                                        \
                for (int64_t q = 0; q < m; q++) acc[ch * m + q] += v * ld_##SUFFIX(tap, ch * m + q); \
              }                                                                                     \
            } else {                                                                                \
              const T *tap = f + (ky * j->kw + kx) * j->c * j->o; /* [c, o] */                      \
              for (int64_t ch = 0; ch < j->c; ch++) {                                               \
                ACC v = ld_##SUFFIX(in, ch);                                                        \
                const T *row = tap + ch * j->o;                                                     \
                for (int64_t q = 0; q < j->o; q++) acc[q] += v * ld_##SUFFIX(row, q);               \
              }                                                                                     \
            }                                                                                       \
          }                                                                                         \
        }                                                                                           \
        T *out = y + ((b * j->oh + oy) * j->ow + ox) * j->o;                                        \
        for (int64_t q = 0; q < j->o; q++) out[q] = st_##SUFFIX(acc[q]);                            \
      }                                                                                             \
    }                                                                                               \
  }

DEFINE_CONV(f64, double, double)
DEFINE_CONV(f16, uint16_t, float)
DEFINE_CONV(i32, int32_t, uint32_t)

static void conv_range(int64_t b, int64_t e, void *arg) {
  gjob *j = arg;
  size_t es = j->dt == TFD_FLOAT64 ? sizeof(double) : sizeof(float); /* float and uint32_t alike */
  void *acc = malloc((size_t)j->o * es + 1);
  if (!acc) {
    atomic_store(&j->failed, true);
    return;
  }
  switch (j->dt) {
    case TFD_FLOAT64: conv_f64(j, b, e, acc); break;
    case TFD_FLOAT16: conv_f16(j, b, e, acc); break;
    case TFD_INT32: conv_i32(j, b, e, acc); break;
    default: break; /* refused before */
  }
  free(acc);
}

/* ---- pooling: one channel at a time over the window's in-bounds rectangle ---- */
/* The in-bounds window of output pixel (oy, ox): rows [y0, y1), columns [x0, x1). */
static void pool_window(const gjob *j, int64_t oy, int64_t ox, int64_t *y0, int64_t *y1, int64_t *x0, int64_t *x1) {
  *y0 = oy * j->sh - j->pad_t, *y1 = *y0 + j->kh;
  *x0 = ox * j->sw - j->pad_l, *x1 = *x0 + j->kw;
  if (*y0 < 0) *y0 = 0;
  if (*y1 > j->h) *y1 = j->h;
  if (*x0 < 0) *x0 = 0;
  if (*x1 > j->w) *x1 = j->w;
}

/* MaxPool from the dtype's lowest value; as k_conv.c's float32 kernel, a NaN never replaces. */
#define DEFINE_MAXPOOL(SUFFIX, T, ACC, LOAD, STORE, LOWEST)                            \
  static void maxpool_##SUFFIX(const gjob *j, int64_t r0, int64_t r1) {                \
    const T *x = j->x;                                                                 \
    T *y = j->y;                                                                       \
    for (int64_t r = r0; r < r1; r++)                                                  \
      for (int64_t ox = 0; ox < j->ow; ox++) {                                         \
        int64_t b = r / j->oh, oy = r % j->oh, y0, y1, x0, x1;                         \
        pool_window(j, oy, ox, &y0, &y1, &x0, &x1);                                    \
        T *out = y + (r * j->ow + ox) * j->c;                                          \
        for (int64_t ch = 0; ch < j->c; ch++) {                                        \
          ACC v = LOWEST;                                                              \
          for (int64_t iy = y0; iy < y1; iy++)                                         \
            for (int64_t ix = x0; ix < x1; ix++) {                                     \
              ACC e = LOAD(x[((b * j->h + iy) * j->w + ix) * j->c + ch]);              \
              v = e > v ? e : v;                                                       \
            }                                                                          \
          out[ch] = STORE(v);                                                          \
        }                                                                              \
      }                                                                                \
  }

/* AvgPool: the sum over the in-bounds elements divided by their count. */
#define DEFINE_AVGPOOL(SUFFIX, T, ACC, LOAD, STORE)                                    \
  static void avgpool_##SUFFIX(const gjob *j, int64_t r0, int64_t r1) {                \
    const T *x = j->x;                                                                 \
    T *y = j->y;                                                                       \
    for (int64_t r = r0; r < r1; r++)                                                  \
      for (int64_t ox = 0; ox < j->ow; ox++) {                                         \
        int64_t b = r / j->oh, oy = r % j->oh, y0, y1, x0, x1;                         \
        pool_window(j, oy, ox, &y0, &y1, &x0, &x1);                                    \
        int64_t count = (y1 - y0) * (x1 - x0);                                         \
        T *out = y + (r * j->ow + ox) * j->c;                                          \
        for (int64_t ch = 0; ch < j->c; ch++) {                                        \
          ACC v = 0;                                                                   \
          for (int64_t iy = y0; iy < y1; iy++)                                         \
            for (int64_t ix = x0; ix < x1; ix++) v += LOAD(x[((b * j->h + iy) * j->w + ix) * j->c + ch]); \
          out[ch] = STORE(count > 0 ? v / (ACC)count : (ACC)0);                        \
        }                                                                              \
      }                                                                                \
  }

#define AS_IS(v) (v)
DEFINE_MAXPOOL(f64, double, double, AS_IS, AS_IS, -DBL_MAX)
DEFINE_MAXPOOL(f16, uint16_t, float, tfd_half_to_float, tfd_float_to_half, -65504.0f) /* half's lowest */
DEFINE_MAXPOOL(i32, int32_t, int32_t, AS_IS, AS_IS, INT32_MIN)
DEFINE_MAXPOOL(i64, int64_t, int64_t, AS_IS, AS_IS, INT64_MIN)
DEFINE_MAXPOOL(u8, uint8_t, uint8_t, AS_IS, AS_IS, 0)
DEFINE_AVGPOOL(f64, double, double, AS_IS, AS_IS)
DEFINE_AVGPOOL(f16, uint16_t, float, tfd_half_to_float, tfd_float_to_half)

static void pool_range(int64_t b, int64_t e, void *arg) {
  const gjob *j = arg;
  bool avg = j->op == TFD_CONV_GENERIC_AVGPOOL;
  switch (j->dt) {
    case TFD_FLOAT64: avg ? avgpool_f64(j, b, e) : maxpool_f64(j, b, e); break;
    case TFD_FLOAT16: avg ? avgpool_f16(j, b, e) : maxpool_f16(j, b, e); break;
    case TFD_INT32: maxpool_i32(j, b, e); break;
    case TFD_INT64: maxpool_i64(j, b, e); break;
    case TFD_UINT8: maxpool_u8(j, b, e); break;
    default: break; /* refused before */
  }
}

/* "float64, int32 or float16": the dtypes op takes. */
static const char *dtype_list(uint32_t mask, char *buf, size_t size) {
  static const tfd_dtype order[] = {TFD_FLOAT64, TFD_INT32, TFD_INT64, TFD_UINT8, TFD_FLOAT16};
  int total = 0, done = 0;
  for (size_t i = 0; i < sizeof order / sizeof *order; i++) total += (mask & BIT(order[i])) != 0;
  buf[0] = '\0';
  for (size_t i = 0; i < sizeof order / sizeof *order; i++) {
    if (!(mask & BIT(order[i]))) continue;
    size_t len = strlen(buf);
    snprintf(buf + len, size - len, "%s%s", done == 0 ? "" : done == total - 1 ? " or " : ", ", tfd_dtype_name(order[i]));
    done++;
  }
  return buf;
}

/* The cost of one output row for the pool's sharding (the product of the factors, all at least 1
 * here), kept small enough that rows * cost fits. */
static int64_t row_cost(int64_t rows, const int64_t *factors, int n) {
  int64_t cost = 1, most = INT64_MAX / (rows + 1);
  for (int i = 0; i < n; i++)
    if (!tfd_checked_mul(cost, factors[i] > 0 ? factors[i] : 1, &cost) || cost > most) return most;
  return cost;
}

void tfd_conv_generic_run(tfd_kernel *k, tfd_kernel_context *c, tfd_conv_generic_op op, const tfd_window_attrs *win,
                          const int64_t ksize[2]) {
  bool pool = op == TFD_CONV_GENERIC_MAXPOOL || op == TFD_CONV_GENERIC_AVGPOOL;
  tfd_tensor *x = c->inputs[0], *f = pool ? NULL : c->inputs[1];
  tfd_dtype dt = tfd_tensor_dtype(x);
  if (!tfd_conv_check_generic(c, k, x, f)) return;
  if ((unsigned)dt >= 32 || !(takes[op] & BIT(dt))) {
    char list[96];
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "input must be float32, %s; got %s", dtype_list(takes[op], list, sizeof list),
                    tfd_dtype_name(dt));
    return;
  }
  gjob *j = calloc(1, sizeof *j);
  if (!j) {
    tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory");
    return;
  }
  j->op = op, j->dt = dt;
  j->sh = win->stride[0], j->sw = win->stride[1], j->dh = win->dilation[0], j->dw = win->dilation[1];
  atomic_init(&j->failed, false);
  tfd_conv_dims g;
  bool ok = pool ? tfd_pool_geometry(c, k, win, ksize, &g)
                 : tfd_conv_geometry(c, k, win, op == TFD_CONV_GENERIC_DEPTHWISE, &g);
  if (ok) {
    j->n = g.n, j->h = g.h, j->w = g.w, j->c = g.c, j->kh = g.kh, j->kw = g.kw, j->o = g.o;
    j->oh = g.oh, j->ow = g.ow, j->pad_t = g.pad_t, j->pad_l = g.pad_l;
  }
  int64_t dims[4] = {j->n, j->oh, j->ow, j->o};
  tfd_tensor *y = ok ? tfd_kernel_alloc(c, k, dt, dims, 4) : NULL;
  if (y) {
    c->outputs[0] = y;
    j->x = tfd_tensor_const_data(x), j->f = f ? tfd_tensor_const_data(f) : NULL, j->y = tfd_tensor_data(y);
    if (tfd_tensor_numel(y) > 0 && j->c == 0) {
      /* An empty filter (its taps need not fit in memory's counts): every sum is 0, all bits clear. */
      memset(j->y, 0, (size_t)tfd_tensor_numel(y) * tfd_dtype_size(dt));
    } else if (tfd_tensor_numel(y) > 0) {
      int64_t rows = j->n * j->oh; /* at most the output's element count */
      /* per row: ow pixels, each o outputs over kh * kw taps of c products (pools: c outputs, one value a tap) */
      int64_t factors[5] = {j->ow, j->o, j->kh, j->kw, op == TFD_CONV_GENERIC_CONV2D ? j->c : 1};
      tfd_threadpool_parallel_for(c->intra_pool, rows, row_cost(rows, factors, 5), pool ? pool_range : conv_range, j);
      if (atomic_load(&j->failed)) tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory for the accumulators");
    }
  }
  free(j);
}
