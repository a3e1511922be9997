/* Dilation2D and MaxPoolWithArgmax (NHWC), as TensorFlow's CPU kernels (dilation_ops.cc,
 * maxpooling_op.cc): their attribute checks and error texts, windows by TensorFlow's rule
 * (window.h's tfd_window_size_tf), every real number dtype tfdev holds.
 *
 * Dilation2D, grayscale morphological dilation: out[b, y, x, c] = max over the filter taps (i, j)
 * whose input pixel (y*sy - pad_top + i*ry, x*sx - pad_left + j*rx) is inside the image of
 * input + filter[i, j, c], starting from the dtype's lowest value (a window wholly in the padding
 * gives it; NaN never wins). Sums are the dtype's own: integers wrap around, float16 rounds.
 *
 * MaxPoolWithArgmax: the window's maximum and where it is, as the flat index
 * ((b * height + y) * width + x) * channels + c, b only with include_batch_in_index. As
 * TensorFlow's SpatialMaxPoolWithArgMaxHelper, the first in-bounds element of a window is taken and
 * replaced only by a strictly greater one (ties: the first in row-major order; NaN only when
 * first). TensorFlow registers the CPU kernel for Targmax int64 alone; int32 has no kernel here
 * either. Direct loops, output rows shared over the intra-op pool. */
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/half.h"
#include "dilation_logic.h"
#include "../kernel.h"
#include "window.h"

typedef struct dil_params {
  int64_t ksize[2], stride[2], rate[2];
  bool same, with_batch;
} dil_params;

typedef struct djob {
  tfd_dtype dt;
  const void *x, *f;
  void *y;
  int64_t *arg;
  int64_t n, h, w, c, kh, kw, oh, ow, pad_t, pad_l;
  const dil_params *p;
} djob;

static void free_state(tfd_kernel *k) { free(k->state); }
static void k_dilation(tfd_kernel *k, tfd_kernel_context *c);
static void k_argmax(tfd_kernel *k, tfd_kernel_context *c);

static const tfd_attr_value *list_attr(const tfd_node_def *node, const char *name) {
  const tfd_attr_value *v = tfd_node_def_attr(node, name);
  return v && v->type == TFD_ATTR_LIST_INT ? v : NULL;
}

tfd_code tfd_setup_dilation(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  const tfd_node_def *node = init->node;
  bool dil = strcmp(init->op->name, "Dilation2D") == 0;
  dil_params *p = calloc(1, sizeof *p);
  if (!p) return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
  k->state = p;
  k->cleanup = free_state;
  const tfd_attr_value *s = list_attr(node, "strides"), *r = list_attr(node, "rates"), *ks = list_attr(node, "ksize");
  if (dil) {
    if (!s || s->list_len != 4)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "Sliding window stride field must specify 4 dimensions");
    if (s->list_i[0] != 1 || s->list_i[3] != 1)
      return tfd_status_setf(st, TFD_UNIMPLEMENTED, "Stride is only supported across spatial dimensions.");
    if (!r || r->list_len != 4)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "Input stride (atrous rate) field must specify 4 dimensions");
    if (r->list_i[0] != 1 || r->list_i[3] != 1)
      return tfd_status_setf(st, TFD_UNIMPLEMENTED, "Rate is only supported across spatial dimensions.");
  } else {
    tfd_dtype targ = tfd_attr_dtype(node, "Targmax", TFD_INT64);
    if (targ != TFD_INT64)
      return tfd_status_setf(st, TFD_NOT_FOUND,
                             "No registered 'MaxPoolWithArgmax' OpKernel for 'CPU' devices with Targmax %s "
                             "(TensorFlow's CPU kernel takes int64)",
                             tfd_dtype_name(targ) ? tfd_dtype_name(targ) : "unknown");
    if (!ks || ks->list_len != 4)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "Sliding window ksize field must specify 4 dimensions");
    if (!s || s->list_len != 4)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "Sliding window stride field must specify 4 dimensions");
    if (ks->list_i[0] != 1 || s->list_i[0] != 1)
      return tfd_status_setf(st, TFD_UNIMPLEMENTED, "Pooling is not yet supported on the batch dimension.");
    for (int i = 1; i < 3; i++)
      if (ks->list_i[i] < 1)
        return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "Sliding window ksize for dimension %d was zero.", i);
    /* TensorFlow's depthwise pooling (a window across channels) has no argmax kernel of its own. */
    if (ks->list_i[3] != 1 || s->list_i[3] != 1)
      return tfd_status_setf(st, TFD_UNIMPLEMENTED, "MaxPoolWithArgmax: pooling across depth is not supported "
                                                    "(ksize and strides must be 1 for the depth dimension)");
    p->with_batch = tfd_attr_bool(node, "include_batch_in_index", false);
  }
  for (int i = 0; i < 2; i++) {
    p->stride[i] = s->list_i[1 + i];
    p->rate[i] = r ? r->list_i[1 + i] : 1;
    p->ksize[i] = ks ? ks->list_i[1 + i] : 0;
    if (p->stride[i] > INT32_MAX || p->rate[i] > INT32_MAX || p->ksize[i] > INT32_MAX)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "%s: strides, rates and ksize must fit in int32", init->op->name);
    if (dil && p->rate[i] < 1)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "Dilation rate must be >= 1, but got %lld", (long long)p->rate[i]);
  }
  const char *padding = tfd_attr_string(node, "padding", "");
  p->same = strcmp(padding, "SAME") == 0;
  if (!p->same && strcmp(padding, "VALID") != 0)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "%s: padding must be SAME or VALID, got '%s'", init->op->name, padding);
  k->compute = dil ? k_dilation : k_argmax;
  return TFD_OK;
}

/* "[1,4,4]": TensorShape::DebugString, as TensorFlow's texts show shapes. */
static const char *shape_text(const tfd_tensor *t, char *buf, size_t cap) {
  size_t at = 0;
  buf[at++] = '[';
  for (int d = 0; d < tfd_tensor_ndims(t) && at < cap; d++)
    at += (size_t)snprintf(buf + at, cap - at, "%s%lld", d ? "," : "", (long long)tfd_tensor_dim(t, d));
  if (at < cap - 1) buf[at++] = ']';
  buf[at < cap ? at : cap - 1] = '\0';
  return buf;
}

/* Output size and padding of both spatial dimensions; false with the error set. */
static bool geometry(const tfd_kernel *k, tfd_kernel_context *c, djob *j, const int64_t span[2]) {
  int64_t in[2] = {j->h, j->w}, out[2], pad[2];
  for (int i = 0; i < 2; i++) {
    tfd_status *st = tfd_status_new();
    if (!st) {
      tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory");
      return false;
    }
    tfd_code code = tfd_window_size_tf(in[i], span[i], 1, j->p->stride[i], j->p->same, &out[i], &pad[i], st);
    if (code != TFD_OK) tfd_kernel_fail(c, k, code, "%s", tfd_status_message(st));
    tfd_status_free(st);
    if (code != TFD_OK) return false;
  }
  j->oh = out[0], j->ow = out[1], j->pad_t = pad[0], j->pad_l = pad[1];
  return true;
}

/* ---- per-dtype loops: T the element, W what a sum is formed in, ADD the dtype's own sum, GT order ---- */
static inline int32_t wrap_i32(uint32_t v) { return v <= (uint32_t)INT32_MAX ? (int32_t)v : (int32_t)(v - 2147483648u) - INT32_MAX - 1; }
static inline int64_t wrap_i64(uint64_t v) { return v <= (uint64_t)INT64_MAX ? (int64_t)v : (int64_t)(v - 9223372036854775808u) - INT64_MAX - 1; }
static inline float add_float(float a, float b) { return a + b; }
static inline double add_double(double a, double b) { return a + b; }
static inline int32_t add_int32_t(int32_t a, int32_t b) { return wrap_i32((uint32_t)a + (uint32_t)b); }
static inline int64_t add_int64_t(int64_t a, int64_t b) { return wrap_i64((uint64_t)a + (uint64_t)b); }
static inline uint8_t add_uint8_t(uint8_t a, uint8_t b) { return (uint8_t)(a + b); }
static inline uint16_t add_uint16_t(uint16_t a, uint16_t b) { /* float16 */
  return tfd_float_to_half(tfd_half_to_float(a) + tfd_half_to_float(b));
}
#define GT_PLAIN(a, b) ((a) > (b))
#define GT_HALF(a, b) (tfd_half_to_float(a) > tfd_half_to_float(b))

#define DEFINE_LOOPS(T, LOWEST, GT)                                                                           \
  static void dilation_##T(const djob *j, int64_t r0, int64_t r1) {                                          \
    const T *x = j->x, *f = j->f;                                                                            \
    T *y = j->y;                                                                                             \
    for (int64_t r = r0; r < r1; r++) {                                                                      \
      int64_t b = r / j->oh, oy = r % j->oh, y0 = oy * j->p->stride[0] - j->pad_t;                           \
      for (int64_t ox = 0; ox < j->ow; ox++) {                                                               \
        int64_t x0 = ox * j->p->stride[1] - j->pad_l;                                                        \
        T *out = y + (r * j->ow + ox) * j->c;                                                                \
        for (int64_t ch = 0; ch < j->c; ch++) out[ch] = LOWEST;                                              \
        for (int64_t i = 0; i < j->kh; i++) {                                                                \
          int64_t iy = y0 + i * j->p->rate[0];                                                               \
          if (iy < 0 || iy >= j->h) continue;                                                                \
          for (int64_t q = 0; q < j->kw; q++) {                                                              \
            int64_t ix = x0 + q * j->p->rate[1];                                                             \
            if (ix < 0 || ix >= j->w) continue;                                                              \
            const T *in = x + ((b * j->h + iy) * j->w + ix) * j->c, *tap = f + (i * j->kw + q) * j->c;       \
            for (int64_t ch = 0; ch < j->c; ch++) {                                                          \
              T v = add_##T(in[ch], tap[ch]);                                                                \
              if (GT(v, out[ch])) out[ch] = v;                                                               \
            }                                                                                                \
          }                                                                                                  \
        }                                                                                                    \
      }                                                                                                      \
    }                                                                                                        \
  }                                                                                                          \
  static void argmax_##T(const djob *j, int64_t r0, int64_t r1) {                                            \
    const T *x = j->x;                                                                                       \
    T *y = j->y;                                                                                             \
    for (int64_t r = r0; r < r1; r++) {                                                                      \
      int64_t b = r / j->oh, oy = r % j->oh, y0 = oy * j->p->stride[0] - j->pad_t;                           \
      int64_t ya = y0 < 0 ? 0 : y0, yb = y0 + j->kh < j->h ? y0 + j->kh : j->h;                              \
      for (int64_t ox = 0; ox < j->ow; ox++) {                                                               \
        int64_t x0 = ox * j->p->stride[1] - j->pad_l;                                                        \
        int64_t xa = x0 < 0 ? 0 : x0, xb = x0 + j->kw < j->w ? x0 + j->kw : j->w;                            \
        int64_t at = (r * j->ow + ox) * j->c;                                                                \
        for (int64_t ch = 0; ch < j->c; ch++) {                                                              \
          T best = LOWEST;                                                                                   \
          int64_t where = -1;                                                                                \
          for (int64_t iy = ya; iy < yb; iy++)                                                               \
            for (int64_t ix = xa; ix < xb; ix++) {                                                           \
              int64_t flat = ((b * j->h + iy) * j->w + ix) * j->c + ch;                                      \
              if (where < 0 || GT(x[flat], best)) {                                                          \
                best = x[flat];                                                                              \
                where = j->p->with_batch ? flat : flat - b * j->h * j->w * j->c;                             \
              }                                                                                              \
            }                                                                                                \
          y[at + ch] = best;                                                                                 \
          j->arg[at + ch] = where;                                                                           \
        }                                                                                                    \
      }                                                                                                      \
    }                                                                                                        \
  }

DEFINE_LOOPS(float, -FLT_MAX, GT_PLAIN)
DEFINE_LOOPS(double, -DBL_MAX, GT_PLAIN)
DEFINE_LOOPS(int32_t, INT32_MIN, GT_PLAIN)
DEFINE_LOOPS(int64_t, INT64_MIN, GT_PLAIN)
DEFINE_LOOPS(uint8_t, 0, GT_PLAIN)
DEFINE_LOOPS(uint16_t, 0xfbff /* -65504, float16's lowest */, GT_HALF)

#define DISPATCH(NAME)                                                             \
  static void NAME##_range(int64_t r0, int64_t r1, void *arg) {                   \
    const djob *j = arg;                                                           \
    switch (j->dt) {                                                               \
      case TFD_FLOAT32: NAME##_float(j, r0, r1); break;                            \
      case TFD_FLOAT64: NAME##_double(j, r0, r1); break;                           \
      case TFD_INT32: NAME##_int32_t(j, r0, r1); break;                            \
      case TFD_INT64: NAME##_int64_t(j, r0, r1); break;                            \
      case TFD_UINT8: NAME##_uint8_t(j, r0, r1); break;                            \
      default: NAME##_uint16_t(j, r0, r1); break; /* float16 (the op's dtypes) */ \
    }                                                                              \
  }
DISPATCH(dilation)
DISPATCH(argmax)

static int64_t row_cost(int64_t rows, int64_t a, int64_t b, int64_t c) {
  int64_t most = INT64_MAX / (rows + 1), f[3] = {a, b, c}, cost = 1;
  for (int i = 0; i < 3; i++) {
    int64_t v = f[i] > 0 ? f[i] : 1;
    if (cost > most / v) return most;
    cost *= v;
  }
  return cost;
}

/* dilation_logic.h */
bool tfd_dilation_check(tfd_kernel_context *c, const tfd_kernel *k, tfd_window_geometry *g) {
  tfd_tensor *x = c->inputs[0], *f = c->inputs[1];
  char s[160];
  if (tfd_tensor_ndims(x) != 4) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "input must be 4-dimensional%s", shape_text(x, s, sizeof s));
    return false;
  }
  if (tfd_tensor_ndims(f) != 3) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "filter must be 3-dimensional: %s", shape_text(f, s, sizeof s));
    return false;
  }
  if (tfd_tensor_dtype(f) != tfd_tensor_dtype(x)) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "filter is %s but input is %s", tfd_dtype_name(tfd_tensor_dtype(f)),
                    tfd_dtype_name(tfd_tensor_dtype(x)));
    return false;
  }
  djob j = {.dt = tfd_tensor_dtype(x), .p = k->state};
  j.n = tfd_tensor_dim(x, 0), j.h = tfd_tensor_dim(x, 1), j.w = tfd_tensor_dim(x, 2), j.c = tfd_tensor_dim(x, 3);
  j.kh = tfd_tensor_dim(f, 0), j.kw = tfd_tensor_dim(f, 1);
  if (tfd_tensor_dim(f, 2) != j.c) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "input and filter must have the same depth: %lld vs %lld", (long long)j.c,
                    (long long)tfd_tensor_dim(f, 2));
    return false;
  }
  /* The effective filter, rate - 1 gaps between taps: kh + (kh - 1) * (rate - 1), in int64. */
  int64_t span[2] = {0, 0};
  for (int i = 0; i < 2; i++) {
    int64_t kk = i ? j.kw : j.kh, gaps = kk > 0 ? kk - 1 : 0;
    if (gaps > 0 && j.p->rate[i] - 1 > (INT64_MAX / 8) / gaps) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Dilation2D: the dilated filter is too large");
      return false;
    }
    span[i] = kk + gaps * (j.p->rate[i] - 1);
  }
  if (!geometry(k, c, &j, span)) return false;
  *g = (tfd_window_geometry){j.n, j.h, j.w, j.c, j.kh, j.kw, j.oh, j.ow, j.pad_t, j.pad_l,
                             {j.p->stride[0], j.p->stride[1]}, {j.p->rate[0], j.p->rate[1]}, false};
  return true;
}

/* The CPU kernels' job from the checked geometry. */
static djob job_of(const tfd_kernel *k, tfd_dtype dt, const tfd_window_geometry *g) {
  return (djob){.dt = dt, .p = k->state, .n = g->n, .h = g->h, .w = g->w, .c = g->c, .kh = g->kh, .kw = g->kw,
                .oh = g->oh, .ow = g->ow, .pad_t = g->pad_t, .pad_l = g->pad_l};
}

static void k_dilation(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *x = c->inputs[0], *f = c->inputs[1];
  tfd_window_geometry g;
  if (!tfd_dilation_check(c, k, &g)) return;
  djob j = job_of(k, tfd_tensor_dtype(x), &g);
  int64_t dims[4] = {j.n, j.oh, j.ow, j.c};
  tfd_tensor *y = tfd_kernel_alloc(c, k, j.dt, dims, 4);
  if (!y) return;
  c->outputs[0] = y;
  if (tfd_tensor_numel(y) == 0) return;
  j.x = tfd_tensor_const_data(x), j.f = tfd_tensor_const_data(f), j.y = tfd_tensor_data(y);
  int64_t rows = j.n * j.oh;
  tfd_threadpool_parallel_for(c->intra_pool, rows, row_cost(rows, j.ow * j.c, j.kh, j.kw), dilation_range, &j);
}

/* dilation_logic.h */
bool tfd_argmax_pool_check(tfd_kernel_context *c, const tfd_kernel *k, tfd_window_geometry *g) {
  tfd_tensor *x = c->inputs[0];
  if (tfd_tensor_ndims(x) != 4) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "tensor_in must be 4-dimensional");
    return false;
  }
  const dil_params *p = k->state;
  djob j = {.dt = tfd_tensor_dtype(x), .p = p};
  j.n = tfd_tensor_dim(x, 0), j.h = tfd_tensor_dim(x, 1), j.w = tfd_tensor_dim(x, 2), j.c = tfd_tensor_dim(x, 3);
  j.kh = p->ksize[0], j.kw = p->ksize[1];
  if (!geometry(k, c, &j, p->ksize)) return false;
  *g = (tfd_window_geometry){j.n, j.h, j.w, j.c, j.kh, j.kw, j.oh, j.ow, j.pad_t, j.pad_l,
                             {p->stride[0], p->stride[1]}, {1, 1}, p->with_batch};
  return true;
}

static void k_argmax(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *x = c->inputs[0];
  tfd_window_geometry g;
  if (!tfd_argmax_pool_check(c, k, &g)) return;
  djob j = job_of(k, tfd_tensor_dtype(x), &g);
  int64_t dims[4] = {j.n, j.oh, j.ow, j.c};
  tfd_tensor *y = tfd_kernel_alloc(c, k, j.dt, dims, 4);
  if (!y) return;
  c->outputs[0] = y;
  tfd_tensor *a = tfd_kernel_alloc(c, k, TFD_INT64, dims, 4);
  if (!a) return;
  c->outputs[1] = a;
  if (tfd_tensor_numel(y) == 0) return;
  j.x = tfd_tensor_const_data(x), j.y = tfd_tensor_data(y), j.arg = tfd_tensor_data(a);
  int64_t rows = j.n * j.oh;
  tfd_threadpool_parallel_for(c->intra_pool, rows, row_cost(rows, j.ow * j.c, j.kh, j.kw), argmax_range, &j);
}
