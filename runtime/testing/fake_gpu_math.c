/* The fake GPU's tfd_device_math (fake_gpu_backend.c's devices carry it): every entry of
 * kernels/device_math.h in plain C loops over the fake's "device memory", which holds every byte
 * inverted, with the per-element code of kernels/device_math_elem.h that the CPU kernels and the
 * CUDA kernels share. Values are un-inverted as they are read and inverted as they are written, so a
 * device kernel that hands the math a host pointer, or reads a result without a copy, gets wrong
 * numbers. Work runs at once, which is one order the contract allows ("queued, in submission
 * order"). Compiled into the module, which links no libtfdev: it uses only inline headers, libc, libm
 * and the shim's tfd_status_setf. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/dtype_name.h"
#include "../core/half.h"
#include "../core/status_internal.h"
#include "../kernels/device_math_elem.h"
#include "../kernels/array/topk_order.h"
#include "fake_gpu_math.h"

/* ---- inverted memory ---- */
static void invert(void *dst, const void *src, size_t bytes) {
  unsigned char *d = dst;
  const unsigned char *s = src;
  for (size_t i = 0; i < bytes; i++) d[i] = (unsigned char)~s[i];
}

/* Element i (es bytes) of device array p into v, and back. */
static inline void ld(void *v, const void *p, int64_t i, size_t es) { invert(v, (const char *)p + (size_t)i * es, es); }
static inline void st(void *p, int64_t i, const void *v, size_t es) { invert((char *)p + (size_t)i * es, v, es); }

static float ldf(const void *p, int64_t i) {
  float v;
  ld(&v, p, i, sizeof v);
  return v;
}
static double ldd(const void *p, int64_t i) {
  double v;
  ld(&v, p, i, sizeof v);
  return v;
}
static void stf(void *p, int64_t i, float v) { st(p, i, &v, sizeof v); }
static void std_(void *p, int64_t i, double v) { st(p, i, &v, sizeof v); }

/* n bytes of device memory as a host buffer the caller frees; NULL, reported, when memory runs out. */
static void *fetch(const void *dev, size_t bytes, tfd_status *status) {
  void *h = malloc(bytes ? bytes : 1);
  if (!h) {
    tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "fakegpu: out of memory staging %zu bytes", bytes);
    return NULL;
  }
  if (dev && bytes) invert(h, dev, bytes);
  return h;
}

static size_t esize(tfd_dtype dt) {
  switch (dt) {
    case TFD_FLOAT64:
    case TFD_INT64:
    case TFD_COMPLEX64: return 8;
    case TFD_BOOL:
    case TFD_UINT8: return 1;
    case TFD_FLOAT16: return 2;
    default: return 4;
  }
}

static const char *dname(tfd_dtype dt) {
  const char *name = tfd_dtype_name_inline(dt);
  return name ? name : "an unknown dtype";
}

static tfd_code unimplemented(tfd_status *status, const char *entry, tfd_dtype dt) {
  return tfd_status_setf(status, TFD_UNIMPLEMENTED, "fakegpu: %s does not take %s", entry, dname(dt));
}

/* ---- elementwise ---- */
static tfd_code run_unary(struct tfd_device *d, tfd_dm_unary op, tfd_dtype dt, const void *x, void *y, int64_t n, float alpha,
                         tfd_status *status) {
  (void)d;
  if (op == TFD_DM_LOGICAL_NOT && dt != TFD_BOOL) return unimplemented(status, "unary LOGICAL_NOT", dt);
  bool int_op = op == TFD_DM_NEG || op == TFD_DM_ABS || op == TFD_DM_SQUARE || op == TFD_DM_SIGN || op == TFD_DM_ROUND;
  for (int64_t i = 0; i < n; i++) {
    switch (dt) {
      case TFD_FLOAT32: stf(y, i, tfd_dm_unary_f32(op, ldf(x, i), alpha)); break;
      case TFD_FLOAT64: std_(y, i, tfd_dm_unary_f64(op, ldd(x, i), alpha)); break;
      case TFD_INT64:
      case TFD_INT32: {
        if (!int_op) return unimplemented(status, "unary", dt);
        if (dt == TFD_INT64) {
          int64_t v;
          ld(&v, x, i, 8);
          v = tfd_dm_unary_i64(op, v);
          st(y, i, &v, 8);
        } else {
          int32_t v;
          ld(&v, x, i, 4);
          v = tfd_dm_unary_i32(op, v);
          st(y, i, &v, 4);
        }
        break;
      }
      case TFD_BOOL: {
        unsigned char v;
        ld(&v, x, i, 1);
        v = (unsigned char)(v == 0);
        st(y, i, &v, 1);
        break;
      }
      default: return unimplemented(status, "unary", dt);
    }
  }
  return TFD_OK;
}

static tfd_code run_binary(struct tfd_device *d, tfd_dm_binary op, tfd_dtype dt, const void *a, const void *b, void *y,
                          const tfd_dm_walk *w, tfd_status *status) {
  (void)d;
  bool out_bool = tfd_dm_is_comparison(op);
  if (dt == TFD_BOOL && op != TFD_DM_EQUAL && op != TFD_DM_NOT_EQUAL && op != TFD_DM_LOGICAL_AND &&
      op != TFD_DM_LOGICAL_OR)
    return unimplemented(status, "binary", dt);
  if (dt != TFD_FLOAT32 && dt != TFD_FLOAT64 && dt != TFD_INT32 && dt != TFD_INT64 && dt != TFD_BOOL)
    return unimplemented(status, "binary", dt);
  int64_t n = tfd_dm_walk_count(w);
  for (int64_t i = 0; i < n; i++) {
    int64_t ia = tfd_dm_walk_offset(w, 0, i), ib = tfd_dm_walk_offset(w, 1, i);
    unsigned char r = 0;
    switch (dt) {
      case TFD_FLOAT32: {
        float va = ldf(a, ia), vb = ldf(b, ib);
        if (out_bool) r = TFD_DM_COMPARE(op, va, vb);
        else stf(y, i, tfd_dm_binary_f32(op, va, vb));
        break;
      }
      case TFD_FLOAT64: {
        double va = ldd(a, ia), vb = ldd(b, ib);
        if (out_bool) r = TFD_DM_COMPARE(op, va, vb);
        else std_(y, i, tfd_dm_binary_f64(op, va, vb));
        break;
      }
      case TFD_INT32: {
        int32_t va, vb;
        ld(&va, a, ia, 4);
        ld(&vb, b, ib, 4);
        if (out_bool) r = TFD_DM_COMPARE(op, va, vb);
        else {
          int32_t v = tfd_dm_binary_i32(op, va, vb);
          st(y, i, &v, 4);
        }
        break;
      }
      case TFD_INT64: {
        int64_t va, vb;
        ld(&va, a, ia, 8);
        ld(&vb, b, ib, 8);
        if (out_bool) r = TFD_DM_COMPARE(op, va, vb);
        else {
          int64_t v = tfd_dm_binary_i64(op, va, vb);
          st(y, i, &v, 8);
        }
        break;
      }
      default: {
        unsigned char va, vb;
        ld(&va, a, ia, 1);
        ld(&vb, b, ib, 1);
        r = TFD_DM_COMPARE(op, va, vb);
        break;
      }
    }
    if (out_bool) st(y, i, &r, 1);
  }
  return TFD_OK;
}

static tfd_code run_select(struct tfd_device *d, size_t es, const void *cond, const void *a, const void *b, void *y,
                          const tfd_dm_walk *w, tfd_status *status) {
  (void)d, (void)status;
  int64_t n = tfd_dm_walk_count(w);
  unsigned char v[16];
  for (int64_t i = 0; i < n; i++) {
    unsigned char c;
    ld(&c, cond, tfd_dm_walk_offset(w, 0, i), 1);
    if (c) ld(v, a, tfd_dm_walk_offset(w, 1, i), es);
    else ld(v, b, tfd_dm_walk_offset(w, 2, i), es);
    st(y, i, v, es);
  }
  return TFD_OK;
}

static tfd_code run_cast(struct tfd_device *d, tfd_dtype from, tfd_dtype to, const void *x, void *y, int64_t n,
                        tfd_status *status) {
  (void)d;
  void *in = fetch(x, (size_t)n * esize(from), status), *out = in ? fetch(NULL, (size_t)n * esize(to), status) : NULL;
  if (!out) {
    free(in);
    return TFD_RESOURCE_EXHAUSTED;
  }
  for (int64_t i = 0; i < n; i++) tfd_dm_put(out, to, i, in, from, i);
  invert(y, out, (size_t)n * esize(to));
  free(in);
  free(out);
  return TFD_OK;
}

/* AddN in the CPU kernel's order: x0 + x1, then each further input added on. */
static tfd_code run_add_n(struct tfd_device *d, tfd_dtype dt, const void *const *inputs, int n, void *y, int64_t count,
                         tfd_status *status) {
  (void)d;
  if (dt != TFD_FLOAT32 && dt != TFD_FLOAT64 && dt != TFD_INT32 && dt != TFD_INT64) return unimplemented(status, "add_n", dt);
  for (int64_t i = 0; i < count; i++) {
    if (dt == TFD_FLOAT32) {
      float s = ldf(inputs[0], i);
      for (int q = 1; q < n; q++) s += ldf(inputs[q], i);
      stf(y, i, s);
    } else if (dt == TFD_FLOAT64) {
      double s = ldd(inputs[0], i);
      for (int q = 1; q < n; q++) s += ldd(inputs[q], i);
      std_(y, i, s);
    } else {
      size_t es = esize(dt);
      int64_t s = 0;
      for (int q = 0; q < n; q++) {
        int64_t v = 0;
        if (es == 8) ld(&v, inputs[q], i, 8);
        else {
          int32_t v32;
          ld(&v32, inputs[q], i, 4);
          v = v32;
        }
        s = (int64_t)((uint64_t)s + (uint64_t)v);
      }
      if (es == 8) st(y, i, &s, 8);
      else {
        int32_t v32 = (int32_t)(uint32_t)(uint64_t)s;
        st(y, i, &v32, 4);
      }
    }
  }
  return TFD_OK;
}

/* ---- data movement: device bytes move as they are (both sides inverted) ---- */
static tfd_code run_copy_walk(struct tfd_device *d, size_t es, const void *x, void *y, const tfd_dm_walk *w, tfd_status *status) {
  (void)d, (void)status;
  int64_t n = tfd_dm_walk_count(w);
  for (int64_t i = 0; i < n; i++)
    memcpy((char *)y + (size_t)tfd_dm_walk_offset(w, 1, i) * es, (const char *)x + (size_t)tfd_dm_walk_offset(w, 0, i) * es,
           es);
  return TFD_OK;
}

static tfd_code run_fill(struct tfd_device *d, size_t es, const void *value, void *y, int64_t n, tfd_status *status) {
  (void)d, (void)status;
  for (int64_t i = 0; i < n; i++) st(y, i, value, es);
  return TFD_OK;
}

static tfd_code run_range(struct tfd_device *d, tfd_dtype dt, double start, double delta, void *y, int64_t n,
                         tfd_status *status) {
  (void)d;
  for (int64_t i = 0; i < n; i++) {
    if (dt == TFD_FLOAT32) stf(y, i, (float)(start + (double)i * delta));
    else if (dt == TFD_FLOAT64) std_(y, i, start + (double)i * delta);
    else if (dt == TFD_INT64) {
      int64_t v = (int64_t)((uint64_t)(int64_t)start + (uint64_t)i * (uint64_t)(int64_t)delta);
      st(y, i, &v, 8);
    } else {
      return unimplemented(status, "range", dt);
    }
  }
  return TFD_OK;
}

static tfd_code run_tile(struct tfd_device *d, size_t es, const void *x, const int64_t *in_dims, const int64_t *out_dims, int nd,
                        void *y, tfd_status *status) {
  (void)d, (void)status;
  int64_t total = 1, istr[TFD_MAX_DIMS], s = 1;
  for (int k = 0; k < nd; k++) total *= out_dims[k];
  for (int k = nd - 1; k >= 0; k--) {
    istr[k] = s;
    s *= in_dims[k];
  }
  for (int64_t o = 0; o < total; o++) {
    int64_t rem = o, off = 0;
    for (int k = nd - 1; k >= 0; k--) {
      int64_t idx = rem % out_dims[k];
      rem /= out_dims[k];
      off += idx % in_dims[k] * istr[k];
    }
    memcpy((char *)y + (size_t)o * es, (const char *)x + (size_t)off * es, es);
  }
  return TFD_OK;
}

static tfd_code run_mirror_pad(struct tfd_device *d, size_t es, const void *x, const int64_t *in_dims, int nd,
                              const int64_t *before, bool symmetric, void *y, const int64_t *out_dims, tfd_status *status) {
  (void)d, (void)status;
  int64_t total = 1;
  for (int k = 0; k < nd; k++) total *= out_dims[k];
  for (int64_t o = 0; o < total; o++) {
    int64_t rem = o, idx[TFD_MAX_DIMS], src = 0;
    for (int k = nd - 1; k >= 0; k--) {
      idx[k] = rem % out_dims[k];
      rem /= out_dims[k];
    }
    for (int k = 0; k < nd; k++) {
      int64_t j = idx[k] - before[k], n = in_dims[k];
      if (j < 0) j = symmetric ? -j - 1 : -j;
      else if (j >= n) j = symmetric ? 2 * n - 1 - j : 2 * n - 2 - j;
      src = src * n + j;
    }
    memcpy((char *)y + (size_t)o * es, (const char *)x + (size_t)src * es, es);
  }
  return TFD_OK;
}

static int64_t ld_index(const void *idx, tfd_dtype dt, int64_t i) {
  if (dt == TFD_INT32) {
    int32_t v;
    ld(&v, idx, i, 4);
    return v;
  }
  int64_t v;
  ld(&v, idx, i, 8);
  return v;
}

/* A row of zeros, as device memory holds them. */
static void zero_row(void *dst, size_t bytes) { memset(dst, 0xff, bytes); }

static tfd_code run_gather(struct tfd_device *d, const void *x, const void *idx, tfd_dtype idx_dtype, int64_t batches,
                          int64_t outer, int64_t limit, int64_t per, size_t inner_bytes, void *y, tfd_status *status) {
  (void)d;
  if (idx_dtype != TFD_INT32 && idx_dtype != TFD_INT64) return unimplemented(status, "gather indices", idx_dtype);
  char *dst = y;
  for (int64_t b = 0; b < batches; b++)
    for (int64_t r = 0; r < outer; r++)
      for (int64_t i = 0; i < per; i++, dst += inner_bytes) {
        int64_t v = ld_index(idx, idx_dtype, b * per + i);
        if (v < 0 || v >= limit) zero_row(dst, inner_bytes);
        else memcpy(dst, (const char *)x + (size_t)((b * outer + r) * limit + v) * inner_bytes, inner_bytes);
      }
  return TFD_OK;
}

static tfd_code run_gather_nd(struct tfd_device *d, const void *x, const int64_t *x_dims, int nd, const void *idx,
                             tfd_dtype idx_dtype, int64_t count, int depth, size_t slice_bytes, void *y, tfd_status *status) {
  (void)d, (void)nd;
  if (idx_dtype != TFD_INT32 && idx_dtype != TFD_INT64) return unimplemented(status, "gather_nd indices", idx_dtype);
  char *dst = y;
  for (int64_t i = 0; i < count; i++, dst += slice_bytes) {
    int64_t off = 0;
    bool inside = true;
    for (int j = 0; j < depth; j++) {
      int64_t v = ld_index(idx, idx_dtype, i * depth + j);
      inside = inside && v >= 0 && v < x_dims[j];
      off = off * x_dims[j] + v;
    }
    if (inside) memcpy(dst, (const char *)x + (size_t)off * slice_bytes, slice_bytes);
    else zero_row(dst, slice_bytes);
  }
  return TFD_OK;
}

/* ---- reductions ---- */
static double ld_real(const void *p, tfd_dtype dt, int64_t i) { return dt == TFD_FLOAT32 ? ldf(p, i) : ldd(p, i); }

static int64_t ld_int(const void *p, tfd_dtype dt, int64_t i) {
  if (dt == TFD_INT32) {
    int32_t v;
    ld(&v, p, i, 4);
    return v;
  }
  int64_t v;
  ld(&v, p, i, 8);
  return v;
}

/* In submission order, so repeated rows end as the CPU kernels leave them (the last update wins, or
 * the sums in order). */
static tfd_code run_scatter_rows(struct tfd_device *d, bool add, tfd_dtype dt, size_t es, const void *x, const int64_t *slots,
                                 int64_t n, int64_t row, void *y, tfd_status *status) {
  (void)d;
  if (es > 16) return unimplemented(status, "scatter_rows", dt);
  if (add && dt != TFD_FLOAT32 && dt != TFD_FLOAT64 && dt != TFD_INT64) return unimplemented(status, "scatter_rows (add)", dt);
  for (int64_t u = 0; u < n; u++) {
    int64_t slot;
    ld(&slot, slots, u, sizeof slot);
    for (int64_t e = 0; e < row; e++) {
      int64_t from = u * row + e, to = slot * row + e;
      if (!add) {
        unsigned char v[16];
        ld(v, x, from, es);
        st(y, to, v, es);
      } else if (dt == TFD_INT64) {
        int64_t a, b;
        ld(&a, y, to, 8), ld(&b, x, from, 8);
        a = (int64_t)((uint64_t)a + (uint64_t)b);
        st(y, to, &a, 8);
      } else if (dt == TFD_FLOAT64) {
        std_(y, to, ldd(y, to) + ldd(x, from));
      } else {
        stf(y, to, ldf(y, to) + ldf(x, from));
      }
    }
  }
  return TFD_OK;
}

/* Device memory holds elements inverted: read and written through ld and st. */
#define FAKE_SCAN(T, ACC)                                                      \
  do {                                                                         \
    for (int64_t o = 0; o < outer; o++)                                        \
      for (int64_t q = 0; q < inner; q++) {                                    \
        ACC acc = prod ? (ACC)1 : (ACC)0;                                      \
        for (int64_t j0 = 0; j0 < n; j0++) {                                   \
          int64_t j = reverse ? n - 1 - j0 : j0, at = (o * n + j) * inner + q; \
          T xv, out;                                                           \
          ld(&xv, x, at, sizeof xv);                                           \
          out = (T)acc;                                                        \
          acc = prod ? (ACC)(acc * (ACC)xv) : (ACC)(acc + (ACC)xv);            \
          if (!exclusive) out = (T)acc;                                        \
          st(y, at, &out, sizeof out);                                         \
        }                                                                      \
      }                                                                        \
  } while (0)

static tfd_code run_scan(struct tfd_device *d, bool prod, bool exclusive, bool reverse, tfd_dtype dt, const void *x,
                         int64_t outer, int64_t n, int64_t inner, void *y, tfd_status *status) {
  (void)d;
  if (dt == TFD_FLOAT32) FAKE_SCAN(float, float);
  else if (dt == TFD_FLOAT64) FAKE_SCAN(double, double);
  else if (dt == TFD_INT64) FAKE_SCAN(int64_t, uint64_t); /* wraps */
  else return unimplemented(status, "scan", dt);
  return TFD_OK;
}

/* LowerBound/UpperBound: the CPU kernel's binary search over inverted memory. */
#define FAKE_SEARCH(T)                                                      \
  do {                                                                      \
    for (int64_t r = 0; r < rows; r++)                                      \
      for (int64_t j = 0; j < m; j++) {                                     \
        T x, e;                                                             \
        ld(&x, values, r * m + j, sizeof x);                                \
        int64_t lo = 0, hi = n;                                             \
        while (lo < hi) {                                                   \
          int64_t mid = lo + (hi - lo) / 2;                                 \
          ld(&e, sorted, r * n + mid, sizeof e);                            \
          if (upper ? !(x < e) : e < x) lo = mid + 1;                       \
          else hi = mid;                                                    \
        }                                                                   \
        if (out64) st(y, r * m + j, &lo, sizeof lo);                        \
        else {                                                              \
          int32_t v = (int32_t)lo;                                          \
          st(y, r * m + j, &v, sizeof v);                                   \
        }                                                                   \
      }                                                                     \
  } while (0)

static tfd_code run_search_sorted(struct tfd_device *d, bool upper, tfd_dtype dt, const void *sorted, const void *values,
                                  int64_t rows, int64_t n, int64_t m, tfd_dtype out_dt, void *y, tfd_status *status) {
  (void)d;
  bool out64 = out_dt == TFD_INT64;
  if (out_dt != TFD_INT32 && out_dt != TFD_INT64) return unimplemented(status, "search_sorted (output)", out_dt);
  if (dt == TFD_FLOAT32) FAKE_SEARCH(float);
  else if (dt == TFD_FLOAT64) FAKE_SEARCH(double);
  else if (dt == TFD_INT64) FAKE_SEARCH(int64_t);
  else return unimplemented(status, "search_sorted", dt);
  return TFD_OK;
}

/* Multinomial: k_random_ext.c's loop over inverted memory. */
static tfd_code run_multinomial(struct tfd_device *d, tfd_dtype dt, const void *logits, int64_t rows, int64_t classes,
                                int64_t samples, uint64_t seed, uint64_t base, tfd_dtype out_dt, void *y, tfd_status *status) {
  (void)d;
  if ((dt != TFD_FLOAT32 && dt != TFD_FLOAT64) || (out_dt != TFD_INT32 && out_dt != TFD_INT64))
    return unimplemented(status, "multinomial", dt);
  double *cdf = malloc((size_t)(classes > 0 ? classes : 1) * sizeof *cdf);
  if (!cdf) return tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "fakegpu: out of memory");
  for (int64_t r = 0; r < rows; r++) {
    double mx = -INFINITY, run = 0;
    for (int64_t j = 0; j < classes; j++) {
      double v = dt == TFD_FLOAT32 ? ldf(logits, r * classes + j) : ldd(logits, r * classes + j);
      if (isfinite(v) && v > mx) mx = v;
    }
    for (int64_t j = 0; j < classes; j++) {
      double v = dt == TFD_FLOAT32 ? ldf(logits, r * classes + j) : ldd(logits, r * classes + j);
      if (isfinite(v)) run += exp(v - mx);
      cdf[j] = run;
    }
    for (int64_t s = 0; s < samples; s++) {
      double u = tfd_dm_unit(tfd_dm_element_seed(seed, base, r * samples + s), 0) * run;
      int64_t pick = classes - 1;
      for (int64_t j = 0; j < classes; j++)
        if (cdf[j] > u) {
          pick = j;
          break;
        }
      if (out_dt == TFD_INT64) st(y, r * samples + s, &pick, sizeof pick);
      else {
        int32_t v = (int32_t)pick;
        st(y, r * samples + s, &v, sizeof v);
      }
    }
  }
  free(cdf);
  return TFD_OK;
}

static tfd_code run_reduce(struct tfd_device *d, tfd_dm_reduce op, tfd_dtype dt, const void *x, int64_t outer, int64_t n,
                          int64_t inner, void *y, tfd_status *status) {
  (void)d;
  bool real = dt == TFD_FLOAT32 || dt == TFD_FLOAT64;
  if (!real && dt != TFD_INT32 && dt != TFD_INT64) return unimplemented(status, "reduce", dt);
  if (!real && op == TFD_DM_MEAN) return unimplemented(status, "reduce MEAN", dt);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t q = 0; q < inner; q++) {
      int64_t base = o * n * inner + q;
      if (real) { /* in double, as the CPU kernel's rows */
        double acc = n == 0 ? (op == TFD_DM_MAX ? -INFINITY : op == TFD_DM_MIN ? INFINITY : tfd_dm_reduce_identity(op))
                     : op == TFD_DM_MAX || op == TFD_DM_MIN ? ld_real(x, dt, base)
                                                            : tfd_dm_reduce_identity(op);
        for (int64_t i = 0; i < n; i++) acc = tfd_dm_reduce_f(op, acc, ld_real(x, dt, base + i * inner));
        if (op == TFD_DM_MEAN) acc /= (double)n;
        if (dt == TFD_FLOAT32) stf(y, o * inner + q, (float)acc);
        else std_(y, o * inner + q, acc);
      } else {
        int64_t acc = n == 0 ? (op == TFD_DM_MAX ? INT64_MIN : op == TFD_DM_MIN ? INT64_MAX : op == TFD_DM_PROD)
                      : op == TFD_DM_MAX || op == TFD_DM_MIN ? ld_int(x, dt, base)
                                                             : op == TFD_DM_PROD;
        for (int64_t i = 0; i < n; i++) acc = tfd_dm_reduce_i(op, acc, ld_int(x, dt, base + i * inner));
        if (dt == TFD_INT64) st(y, o * inner + q, &acc, 8);
        else {
          int32_t v = (int32_t)(uint32_t)(uint64_t)acc;
          st(y, o * inner + q, &v, 4);
        }
      }
    }
  return TFD_OK;
}

/* The first index of the extreme (a strict comparison keeps the first on ties; NaN never wins). */
static tfd_code run_arg_reduce(struct tfd_device *d, bool is_min, tfd_dtype dt, const void *x, int64_t outer, int64_t n,
                              int64_t inner, tfd_dtype out_dtype, void *y, tfd_status *status) {
  (void)d;
  bool real = dt == TFD_FLOAT32 || dt == TFD_FLOAT64;
  if (!real && dt != TFD_INT32 && dt != TFD_INT64) return unimplemented(status, "arg_reduce", dt);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t q = 0; q < inner; q++) {
      int64_t base = o * n * inner + q, best = 0;
      for (int64_t i = 1; i < n; i++) {
        bool better;
        if (real) {
          double v = ld_real(x, dt, base + i * inner), b = ld_real(x, dt, base + best * inner);
          better = is_min ? v < b : v > b;
        } else {
          int64_t v = ld_int(x, dt, base + i * inner), b = ld_int(x, dt, base + best * inner);
          better = is_min ? v < b : v > b;
        }
        if (better) best = i;
      }
      if (out_dtype == TFD_INT32) {
        int32_t v = (int32_t)best;
        st(y, o * inner + q, &v, 4);
      } else {
        st(y, o * inner + q, &best, 8);
      }
    }
  return TFD_OK;
}

static tfd_code run_softmax(struct tfd_device *d, tfd_dtype dt, const void *x, int64_t rows, int64_t cols, bool log_, void *y,
                           tfd_status *status) {
  (void)d;
  if (dt != TFD_FLOAT32 && dt != TFD_FLOAT64) return unimplemented(status, "softmax", dt);
  for (int64_t r = 0; r < rows; r++) {
    int64_t base = r * cols;
    if (dt == TFD_FLOAT32) { /* in float, as the CPU kernel */
      float m = ldf(x, base), s = 0;
      for (int64_t i = 1; i < cols; i++) m = ldf(x, base + i) > m ? ldf(x, base + i) : m;
      for (int64_t i = 0; i < cols; i++) s += expf(ldf(x, base + i) - m);
      for (int64_t i = 0; i < cols; i++)
        stf(y, base + i, log_ ? ldf(x, base + i) - m - logf(s) : expf(ldf(x, base + i) - m) / s);
    } else {
      double m = ldd(x, base), s = 0;
      for (int64_t i = 1; i < cols; i++) m = ldd(x, base + i) > m ? ldd(x, base + i) : m;
      for (int64_t i = 0; i < cols; i++) s += exp(ldd(x, base + i) - m);
      for (int64_t i = 0; i < cols; i++)
        std_(y, base + i, log_ ? ldd(x, base + i) - m - log(s) : exp(ldd(x, base + i) - m) / s);
    }
  }
  return TFD_OK;
}

static tfd_code run_top_k(struct tfd_device *d, tfd_dtype dt, const void *x, int64_t rows, int64_t cols, int64_t k,
                         void *values, tfd_dtype idx_dtype, void *indices, tfd_status *status) {
  (void)d;
  bool real = dt == TFD_FLOAT32 || dt == TFD_FLOAT64;
  if (!real && dt != TFD_INT32 && dt != TFD_INT64) return unimplemented(status, "top_k", dt);
  tfd_topk_item *items = malloc((size_t)(cols ? cols : 1) * sizeof *items);
  if (!items) return tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "fakegpu: out of memory sorting %lld entries",
                                     (long long)cols);
  size_t es = esize(dt);
  for (int64_t r = 0; r < rows; r++) {
    for (int64_t j = 0; j < cols; j++) {
      items[j].idx = j;
      items[j].f = real ? ld_real(x, dt, r * cols + j) : 0;
      items[j].i = real ? 0 : ld_int(x, dt, r * cols + j);
    }
    qsort(items, (size_t)cols, sizeof *items, tfd_topk_cmp);
    for (int64_t j = 0; j < k; j++) {
      memcpy((char *)values + (size_t)(r * k + j) * es, (const char *)x + (size_t)(r * cols + items[j].idx) * es, es);
      if (idx_dtype == TFD_INT32) {
        int32_t v = (int32_t)items[j].idx;
        st(indices, r * k + j, &v, 4);
      } else {
        st(indices, r * k + j, &items[j].idx, 8);
      }
    }
  }
  free(items);
  return TFD_OK;
}

static tfd_code run_batch_norm(struct tfd_device *d, tfd_dtype dt, const void *x, const void *scale, const void *offset,
                              const void *mean, const void *variance, float epsilon, int64_t rows, int64_t c, void *y,
                              tfd_status *status) {
  (void)d;
  if (dt != TFD_FLOAT32) return unimplemented(status, "batch_norm", dt);
  for (int64_t r = 0; r < rows; r++)
    for (int64_t ch = 0; ch < c; ch++) {
      float factor = tfd_dm_batch_norm_factor(ldf(scale, ch), ldf(variance, ch), epsilon);
      stf(y, r * c + ch, (ldf(x, r * c + ch) - ldf(mean, ch)) * factor + ldf(offset, ch));
    }
  return TFD_OK;
}

/* ---- products, convolutions, images ---- */
/* The elements an operand read at per-batch offsets spans. */
static int64_t extent(const int64_t *offsets, int64_t batch, int64_t mat) {
  if (!offsets) return batch * mat;
  int64_t most = 0;
  for (int64_t b = 0; b < batch; b++) most = offsets[b] > most ? offsets[b] : most;
  return most + mat;
}

static tfd_code run_matmul(struct tfd_device *d, const tfd_dm_matmul *p, tfd_status *status) {
  (void)d;
  if (p->dtype != TFD_FLOAT32 && p->dtype != TFD_FLOAT64) return unimplemented(status, "matmul", p->dtype);
  bool f32 = p->dtype == TFD_FLOAT32;
  size_t es = esize(p->dtype);
  int64_t m = p->m, n = p->n, k = p->k;
  /* Host copies as doubles: the operands' whole spans, then the products. */
  int64_t na = extent(p->a_offsets, p->batch, m * k), nb = extent(p->b_offsets, p->batch, k * n);
  char *A = fetch(p->a, (size_t)na * es, status), *B = A ? fetch(p->b, (size_t)nb * es, status) : NULL;
  char *bias = B && p->bias ? fetch(p->bias, (size_t)n * es, status) : NULL;
  if (!B || (p->bias && !bias)) {
    free(A), free(B), free(bias);
    return TFD_RESOURCE_EXHAUSTED;
  }
#define AT(buf, i) (f32 ? (double)((const float *)(const void *)(buf))[i] : ((const double *)(const void *)(buf))[i])
  for (int64_t b = 0; b < p->batch; b++) {
    int64_t ao = p->a_offsets ? p->a_offsets[b] : b * m * k, bo = p->b_offsets ? p->b_offsets[b] : b * k * n;
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) {
        double acc = bias ? AT(bias, j) : 0;
        for (int64_t q = 0; q < k; q++)
          acc += AT(A, ao + (p->transpose_a ? q * m + i : i * k + q)) * AT(B, bo + (p->transpose_b ? j * k + q : q * n + j));
        int64_t at = (b * m + i) * n + j;
        if (f32) stf(p->c, at, tfd_dm_activation_f32(p->act, (float)acc, p->alpha));
        else std_(p->c, at, tfd_dm_activation_f64(p->act, acc, p->alpha));
      }
  }
#undef AT
  free(A), free(B), free(bias);
  return TFD_OK;
}

static tfd_code run_conv2d(struct tfd_device *d, const tfd_dm_conv *p, tfd_status *status) {
  (void)d;
  if (p->dtype != TFD_FLOAT32 && p->dtype != TFD_FLOAT64) return unimplemented(status, "conv2d", p->dtype);
  bool f32 = p->dtype == TFD_FLOAT32;
  size_t es = esize(p->dtype);
  /* forward: x [n, h, w, c] -> y [n, oh, ow, o]; backprop_input: x = dy [n, oh, ow, o] -> y = dx [n, h, w, c] */
  int64_t nx = p->backprop_input ? p->n * p->oh * p->ow * p->o : p->n * p->h * p->w * p->c;
  int64_t ny = p->backprop_input ? p->n * p->h * p->w * p->c : p->n * p->oh * p->ow * p->o;
  int64_t nf = p->depthwise ? p->kh * p->kw * p->o : p->kh * p->kw * p->c * p->o;
  char *x = fetch(p->x, (size_t)nx * es, status), *f = x ? fetch(p->filter, (size_t)nf * es, status) : NULL;
  /* The epilogue's operands are read before y is written: the addend may be y itself. */
  char *bias = NULL, *scale = NULL, *shift = NULL, *addend = NULL, *prelu = NULL;
  bool ok = f != NULL;
  if (ok && !p->backprop_input) {
    if (p->bias) ok = (bias = fetch(p->bias, (size_t)p->o * es, status)) != NULL;
    if (ok && p->scale) ok = (scale = fetch(p->scale, (size_t)p->o * es, status)) != NULL;
    if (ok && p->shift) ok = (shift = fetch(p->shift, (size_t)p->o * es, status)) != NULL;
    if (ok && p->addend) ok = (addend = fetch(p->addend, (size_t)ny * es, status)) != NULL;
    if (ok && p->prelu) ok = (prelu = fetch(p->prelu, (size_t)p->prelu_n * es, status)) != NULL;
  }
  if (!ok) {
    free(x), free(f), free(bias), free(scale), free(shift), free(addend), free(prelu);
    return TFD_RESOURCE_EXHAUSTED;
  }
#define AT(buf, i) (f32 ? (double)((const float *)(const void *)(buf))[i] : ((const double *)(const void *)(buf))[i])
  int64_t mult = p->depthwise && p->c ? p->o / p->c : 1;
  if (p->backprop_input) {
    for (int64_t b = 0; b < p->n; b++)
      for (int64_t iy = 0; iy < p->h; iy++)
        for (int64_t ix = 0; ix < p->w; ix++)
          for (int64_t ci = 0; ci < p->c; ci++) {
            double acc = 0;
            for (int64_t ky = 0; ky < p->kh; ky++) {
              int64_t ty = iy + p->pad_before[0] - ky * p->dilation[0];
              if (ty < 0 || ty % p->stride[0] || ty / p->stride[0] >= p->oh) continue;
              for (int64_t kx = 0; kx < p->kw; kx++) {
                int64_t tx = ix + p->pad_before[1] - kx * p->dilation[1];
                if (tx < 0 || tx % p->stride[1] || tx / p->stride[1] >= p->ow) continue;
                int64_t oy = ty / p->stride[0], ox = tx / p->stride[1];
                for (int64_t co = 0; co < p->o; co++)
                  acc += AT(x, ((b * p->oh + oy) * p->ow + ox) * p->o + co) * AT(f, ((ky * p->kw + kx) * p->c + ci) * p->o + co);
              }
            }
            int64_t at = ((b * p->h + iy) * p->w + ix) * p->c + ci;
            if (f32) stf(p->y, at, (float)acc);
            else std_(p->y, at, acc);
          }
  } else {
    for (int64_t b = 0; b < p->n; b++)
      for (int64_t oy = 0; oy < p->oh; oy++)
        for (int64_t ox = 0; ox < p->ow; ox++)
          for (int64_t oc = 0; oc < p->o; oc++) {
            double acc = 0;
            for (int64_t ky = 0; ky < p->kh; ky++) {
              int64_t iy = oy * p->stride[0] + ky * p->dilation[0] - p->pad_before[0];
              if (iy < 0 || iy >= p->h) continue;
              for (int64_t kx = 0; kx < p->kw; kx++) {
                int64_t ix = ox * p->stride[1] + kx * p->dilation[1] - p->pad_before[1];
                if (ix < 0 || ix >= p->w) continue;
                int64_t in = ((b * p->h + iy) * p->w + ix) * p->c, tap = (ky * p->kw + kx) * p->o;
                if (p->depthwise) acc += AT(x, in + oc / mult) * AT(f, tap + oc);
                else
                  for (int64_t ci = 0; ci < p->c; ci++) acc += AT(x, in + ci) * AT(f, tap * p->c + ci * p->o + oc);
              }
            }
            int64_t at = ((b * p->oh + oy) * p->ow + ox) * p->o + oc;
            if (f32) { /* the epilogue in float, in k_conv.c's order */
              float v = (float)acc;
              if (bias) v += ((const float *)(void *)bias)[oc];
              if (scale) v = v * ((const float *)(void *)scale)[oc] + ((const float *)(void *)shift)[oc];
              if (addend) v += ((const float *)(void *)addend)[at];
              if (prelu) v = tfd_dm_binary_f32(TFD_DM_PRELU, v, ((const float *)(void *)prelu)[at % p->prelu_n]);
              else v = tfd_dm_activation_f32(p->act, v, p->alpha);
              stf(p->y, at, v);
            } else {
              double v = acc + (bias ? AT(bias, oc) : 0);
              std_(p->y, at, tfd_dm_activation_f64(p->act, v, p->alpha));
            }
          }
  }
#undef AT
  free(x), free(f), free(bias), free(scale), free(shift), free(addend), free(prelu);
  return TFD_OK;
}

static tfd_code run_pool(struct tfd_device *d, const tfd_dm_pool *p, tfd_status *status) {
  (void)d;
  if (p->dtype != TFD_FLOAT32 && p->dtype != TFD_FLOAT64) return unimplemented(status, "pool", p->dtype);
  bool f32 = p->dtype == TFD_FLOAT32;
  for (int64_t b = 0; b < p->n; b++)
    for (int64_t oy = 0; oy < p->oh; oy++) {
      int64_t y0 = oy * p->stride[0] - p->pad_before[0], y1 = y0 + p->kh;
      y0 = y0 < 0 ? 0 : y0, y1 = y1 > p->h ? p->h : y1;
      for (int64_t ox = 0; ox < p->ow; ox++) {
        int64_t x0 = ox * p->stride[1] - p->pad_before[1], x1 = x0 + p->kw;
        x0 = x0 < 0 ? 0 : x0, x1 = x1 > p->w ? p->w : x1;
        int64_t count = (y1 - y0) * (x1 - x0);
        for (int64_t ch = 0; ch < p->c; ch++) {
          int64_t at = ((b * p->oh + oy) * p->ow + ox) * p->c + ch;
          if (f32) { /* in float, as the CPU kernel, from its starting value */
            float acc = p->max ? -FLT_MAX : 0;
            for (int64_t iy = y0; iy < y1; iy++)
              for (int64_t ix = x0; ix < x1; ix++) {
                float v = ldf(p->x, ((b * p->h + iy) * p->w + ix) * p->c + ch);
                acc = p->max ? (v > acc ? v : acc) : acc + v;
              }
            stf(p->y, at, p->max ? acc : count > 0 ? acc / (float)count : 0);
          } else {
            double acc = p->max ? -DBL_MAX : 0;
            for (int64_t iy = y0; iy < y1; iy++)
              for (int64_t ix = x0; ix < x1; ix++) {
                double v = ldd(p->x, ((b * p->h + iy) * p->w + ix) * p->c + ch);
                acc = p->max ? (v > acc ? v : acc) : acc + v;
              }
            std_(p->y, at, p->max ? acc : count > 0 ? acc / (double)count : 0);
          }
        }
      }
    }
  return TFD_OK;
}

/* Dilation2D and MaxPoolWithArgmax: k_dilation.c's loops over inverted memory. */
#define FAKE_WINDOW_MAX(T, LOWEST, ADD)                                                                   \
  do {                                                                                                  \
    for (int64_t b = 0; b < p->n; b++)                                                                  \
      for (int64_t oy = 0; oy < p->oh; oy++)                                                            \
        for (int64_t ox = 0; ox < p->ow; ox++)                                                          \
          for (int64_t ch = 0; ch < p->c; ch++) {                                                       \
            T best = LOWEST, v, tap;                                                                    \
            int64_t where = -1, at = ((b * p->oh + oy) * p->ow + ox) * p->c + ch;                       \
            for (int64_t i = 0; i < p->kh; i++) {                                                       \
              int64_t iy = oy * p->stride[0] - p->pad_before[0] + i * p->rate[0];                       \
              if (iy < 0 || iy >= p->h) continue;                                                       \
              for (int64_t j = 0; j < p->kw; j++) {                                                     \
                int64_t ix = ox * p->stride[1] - p->pad_before[1] + j * p->rate[1];                     \
                if (ix < 0 || ix >= p->w) continue;                                                     \
                int64_t flat = ((b * p->h + iy) * p->w + ix) * p->c + ch;                               \
                ld(&v, p->x, flat, sizeof v);                                                           \
                if (p->filter) {                                                                        \
                  ld(&tap, p->filter, (i * p->kw + j) * p->c + ch, sizeof tap);                         \
                  v = ADD(v, tap);                                                                      \
                  if (v > best) best = v;                                                               \
                } else if (where < 0 || v > best) {                                                     \
                  best = v;                                                                             \
                  where = p->with_batch ? flat : flat - b * p->h * p->w * p->c;                         \
                }                                                                                       \
              }                                                                                         \
            }                                                                                           \
            st(p->y, at, &best, sizeof best);                                                           \
            if (p->argmax) st(p->argmax, at, &where, sizeof where);                                     \
          }                                                                                             \
  } while (0)
#define PLAIN_ADD(a, b) ((a) + (b))
#define WRAP_ADD(a, b) ((int64_t)((uint64_t)(a) + (uint64_t)(b)))

static tfd_code run_window_max(struct tfd_device *d, const tfd_dm_window_max *p, tfd_status *status) {
  (void)d;
  if (p->dtype == TFD_FLOAT32) FAKE_WINDOW_MAX(float, -FLT_MAX, PLAIN_ADD);
  else if (p->dtype == TFD_FLOAT64) FAKE_WINDOW_MAX(double, -DBL_MAX, PLAIN_ADD);
  else if (p->dtype == TFD_INT64) FAKE_WINDOW_MAX(int64_t, INT64_MIN, WRAP_ADD);
  else return unimplemented(status, "window_max", p->dtype);
  return TFD_OK;
}

/* CropAndResize: k_crop_and_resize.c's loop over inverted memory. */
static float crop_pixel(const tfd_dm_crop *p, int64_t i) {
  if (p->dtype == TFD_FLOAT32) return ldf(p->image, i);
  if (p->dtype == TFD_FLOAT64) return (float)ldd(p->image, i);
  int64_t v;
  ld(&v, p->image, i, sizeof v);
  return (float)v;
}

static tfd_code run_crop_and_resize(struct tfd_device *d, const tfd_dm_crop *p, tfd_status *status) {
  (void)d;
  if (p->dtype != TFD_FLOAT32 && p->dtype != TFD_FLOAT64 && p->dtype != TFD_INT64)
    return unimplemented(status, "crop_and_resize", p->dtype);
  const int64_t H = p->h, W = p->w, ch = p->crop_h, cw = p->crop_w, depth = p->depth;
  for (int64_t b = 0; b < p->n; b++) {
    const float y1 = ldf(p->boxes, b * 4), x1 = ldf(p->boxes, b * 4 + 1), y2 = ldf(p->boxes, b * 4 + 2),
                x2 = ldf(p->boxes, b * 4 + 3);
    int32_t bi;
    ld(&bi, p->box_ind, b, sizeof bi);
    const int64_t base = bi * H * W * depth;
    const float hs = ch > 1 ? (y2 - y1) * (float)(H - 1) / (float)(ch - 1) : 0;
    const float ws = cw > 1 ? (x2 - x1) * (float)(W - 1) / (float)(cw - 1) : 0;
    for (int64_t y = 0; y < ch; y++) {
      const float in_y = ch > 1 ? y1 * (float)(H - 1) + (float)y * hs : 0.5f * (y1 + y2) * (float)(H - 1);
      const int64_t top = (int64_t)floorf(in_y), bottom = (int64_t)ceilf(in_y), near_y = (int64_t)roundf(in_y);
      const float y_lerp = in_y - (float)top;
      for (int64_t x = 0; x < cw; x++) {
        const float in_x = cw > 1 ? x1 * (float)(W - 1) + (float)x * ws : 0.5f * (x1 + x2) * (float)(W - 1);
        const int64_t at = ((b * ch + y) * cw + x) * depth;
        bool outside = in_y < 0 || in_y > (float)(H - 1) || in_x < 0 || in_x > (float)(W - 1);
        const int64_t left = (int64_t)floorf(in_x), right = (int64_t)ceilf(in_x);
        const float x_lerp = in_x - (float)left;
        for (int64_t dd = 0; dd < depth; dd++) {
          float v = p->extrapolation;
          if (!outside && p->nearest) {
            v = crop_pixel(p, base + (near_y * W + (int64_t)roundf(in_x)) * depth + dd);
          } else if (!outside) {
            const float top_left = crop_pixel(p, base + (top * W + left) * depth + dd),
                        top_right = crop_pixel(p, base + (top * W + right) * depth + dd),
                        bottom_left = crop_pixel(p, base + (bottom * W + left) * depth + dd),
                        bottom_right = crop_pixel(p, base + (bottom * W + right) * depth + dd);
            const float t = top_left + (top_right - top_left) * x_lerp;
            const float bo = bottom_left + (bottom_right - bottom_left) * x_lerp;
            v = t + (bo - t) * y_lerp;
          }
          stf(p->y, at + dd, v);
        }
      }
    }
  }
  return TFD_OK;
}

/* ImageProjectiveTransformV3: k_image_transform.c's loop over inverted memory. */
#define FAKE_TRANSFORM(T)                                                                                  \
  do {                                                                                                   \
    const T fill = (T)p->fill;                                                                           \
    for (int64_t b = 0; b < p->n; b++)                                                                   \
      for (int64_t y = 0; y < p->oh; y++)                                                                \
        for (int64_t x = 0; x < p->ow; x++) {                                                            \
          float t[8], in_x = 0, in_y = 0;                                                                \
          for (int q = 0; q < 8; q++) t[q] = ldf(p->transforms, (p->one_transform ? 0 : 8 * b) + q);    \
          bool ok = tfd_dm_transform_point(t, x, y, p->mode, p->h, p->w, &in_x, &in_y);                 \
          for (int64_t ch = 0; ch < p->c; ch++) {                                                        \
            T out = fill;                                                                                \
            if (ok && !p->bilinear) {                                                                    \
              int64_t ry = tfd_dm_transform_index(in_y, true), rx = tfd_dm_transform_index(in_x, true);  \
              if (ry >= 0 && ry < p->h && rx >= 0 && rx < p->w)                                          \
                ld(&out, p->images, ((b * p->h + ry) * p->w + rx) * p->c + ch, sizeof out);              \
            } else if (ok) {                                                                             \
              const float y0 = floorf(in_y), x0 = floorf(in_x), y1 = y0 + 1, x1 = x0 + 1;                 \
              int64_t iy0 = tfd_dm_transform_index(in_y, false), ix0 = tfd_dm_transform_index(in_x, false); \
              bool far = iy0 == -2 || ix0 == -2;                                                         \
              int64_t ys[2] = {far ? -2 : iy0, far ? -2 : iy0 + 1}, xs[2] = {far ? -2 : ix0, far ? -2 : ix0 + 1}; \
              float v[2][2];                                                                             \
              for (int a = 0; a < 2; a++)                                                                \
                for (int e = 0; e < 2; e++) {                                                            \
                  T px = fill;                                                                           \
                  if (ys[a] >= 0 && ys[a] < p->h && xs[e] >= 0 && xs[e] < p->w)                          \
                    ld(&px, p->images, ((b * p->h + ys[a]) * p->w + xs[e]) * p->c + ch, sizeof px);      \
                  v[a][e] = (float)px;                                                                   \
                }                                                                                        \
              const float vf = (x1 - in_x) * v[0][0] + (in_x - x0) * v[0][1];                             \
              const float vc = (x1 - in_x) * v[1][0] + (in_x - x0) * v[1][1];                             \
              out = (T)((y1 - in_y) * vf + (in_y - y0) * vc);                                            \
            }                                                                                            \
            st(p->y, ((b * p->oh + y) * p->ow + x) * p->c + ch, &out, sizeof out);                       \
          }                                                                                              \
        }                                                                                                \
  } while (0)

static tfd_code run_image_transform(struct tfd_device *d, const tfd_dm_transform *p, tfd_status *status) {
  (void)d;
  if (p->dtype == TFD_FLOAT32) FAKE_TRANSFORM(float);
  else if (p->dtype == TFD_FLOAT64) FAKE_TRANSFORM(double);
  else if (p->dtype == TFD_INT64) FAKE_TRANSFORM(int64_t);
  else return unimplemented(status, "image_transform", p->dtype);
  return TFD_OK;
}

static tfd_code run_resize(struct tfd_device *d, const tfd_dm_resize *p, tfd_status *status) {
  (void)d;
  size_t es = esize(p->in_dtype);
  if (p->bilinear ? p->out_dtype != TFD_FLOAT32 : p->out_dtype != p->in_dtype) return unimplemented(status, "resize", p->out_dtype);
  void *x = fetch(p->x, (size_t)(p->n * p->h * p->w * p->c) * es, status);
  if (!x) return TFD_RESOURCE_EXHAUSTED;
  float sy = tfd_dm_resize_scale(p->h, p->oh, p->align_corners), sx = tfd_dm_resize_scale(p->w, p->ow, p->align_corners);
  for (int64_t b = 0; b < p->n; b++)
    for (int64_t oy = 0; oy < p->oh; oy++)
      for (int64_t ox = 0; ox < p->ow; ox++) {
        int64_t at = ((b * p->oh + oy) * p->ow + ox) * p->c;
        if (!p->bilinear) {
          int64_t iy = tfd_dm_nearest_index(oy, p->h, sy, p->align_corners, p->half_pixel_centers);
          int64_t ix = tfd_dm_nearest_index(ox, p->w, sx, p->align_corners, p->half_pixel_centers);
          invert((char *)p->y + (size_t)at * es, (const char *)x + (size_t)(((b * p->h + iy) * p->w + ix) * p->c) * es,
                 (size_t)p->c * es);
          continue;
        }
        int64_t ylo, yhi, xlo, xhi;
        float fy, fx;
        tfd_dm_bilinear_index(oy, p->h, sy, p->half_pixel_centers, &ylo, &yhi, &fy);
        tfd_dm_bilinear_index(ox, p->w, sx, p->half_pixel_centers, &xlo, &xhi, &fx);
        for (int64_t q = 0; q < p->c; q++) {
          int64_t top = (b * p->h + ylo) * p->w, bot = (b * p->h + yhi) * p->w;
          float tl = (float)tfd_dm_get_f(x, p->in_dtype, (top + xlo) * p->c + q);
          float tr = (float)tfd_dm_get_f(x, p->in_dtype, (top + xhi) * p->c + q);
          float bl = (float)tfd_dm_get_f(x, p->in_dtype, (bot + xlo) * p->c + q);
          float br = (float)tfd_dm_get_f(x, p->in_dtype, (bot + xhi) * p->c + q);
          stf(p->y, at + q, tfd_dm_lerp2(tl, tr, bl, br, fx, fy));
        }
      }
  free(x);
  return TFD_OK;
}

/* ---- random numbers ---- */
static tfd_code run_random_ext(struct tfd_device *d, bool truncated, tfd_dtype dt, uint64_t seed, uint64_t base, int64_t lo,
                               uint64_t range, void *y, int64_t n, tfd_status *status) {
  (void)d;
  if (truncated ? dt != TFD_FLOAT32 && dt != TFD_FLOAT64 : dt != TFD_INT64) return unimplemented(status, "random_ext", dt);
  for (int64_t i = 0; i < n; i++) {
    if (!truncated) {
      int64_t v = tfd_dm_uniform_int(seed, base, i, lo, range);
      st(y, i, &v, 8);
    } else if (dt == TFD_FLOAT32) {
      stf(y, i, (float)tfd_dm_truncated_normal(seed, base, i, true));
    } else {
      std_(y, i, tfd_dm_truncated_normal(seed, base, i, false));
    }
  }
  return TFD_OK;
}

static tfd_code run_random(struct tfd_device *d, bool normal, tfd_dtype dt, uint64_t seed, uint64_t counter, void *y, int64_t n,
                          tfd_status *status) {
  (void)d;
  if (dt != TFD_FLOAT32 && dt != TFD_FLOAT64) return unimplemented(status, "random", dt);
  for (int64_t i = 0; i < n; i++) {
    double v = tfd_dm_random(normal, seed, counter, (uint64_t)i);
    if (dt == TFD_FLOAT32) stf(y, i, normal ? (float)v : tfd_dm_uniform_f32(v));
    else std_(y, i, v);
  }
  return TFD_OK;
}

/* ---- step graphs: what the calling thread asks for between capture_begin and capture_end is
 * recorded, with copies of the host arrays it passes, and run again by each launch; memory freed
 * meanwhile is kept (fake_gpu_backend.c asks tfd_fake_gpu_keep). As CUDA's stream capture, and so the
 * runtime's step graphs (runtime/exec/step_graph.c) are checked in CI. ---- */
typedef enum {
  C_UNARY, C_BINARY, C_SELECT, C_CAST, C_ADD_N, C_COPY_WALK, C_FILL, C_RANGE, C_TILE, C_MIRROR_PAD, C_GATHER,
  C_GATHER_ND, C_SCATTER_ROWS, C_REDUCE, C_SCAN, C_SEARCH_SORTED, C_MULTINOMIAL, C_ARG_REDUCE, C_SOFTMAX, C_TOP_K, C_BATCH_NORM, C_MATMUL, C_CONV2D, C_POOL, C_RESIZE, C_WINDOW_MAX, C_CROP, C_TRANSFORM, C_RANDOM, C_RANDOM_EXT
} call_kind;

/* One recorded call: its arguments, host arrays copied into the call (dims) or owned (own). */
typedef struct fake_call {
  call_kind kind;
  struct tfd_device *d;
  int op, nd, n_in, depth;
  bool flag;
  tfd_dtype t0, t1, t2;
  size_t es;
  int64_t i0, i1, i2, i3, i4;
  double f0, f1;
  uint64_t u0, u1;
  const void *p[6];
  void *y, *y2;
  tfd_dm_walk w;
  int64_t dims[3][TFD_MAX_DIMS];
  unsigned char value[16];
  tfd_dm_matmul mm;
  tfd_dm_conv conv;
  tfd_dm_pool pool;
  tfd_dm_resize resize;
  tfd_dm_window_max window_max;
  tfd_dm_crop crop;
  tfd_dm_transform transform;
  void *own[2];
} fake_call;

typedef struct kept_block {
  void (*release)(void *arg, void *ptr, size_t size);
  void *arg, *ptr;
  size_t size;
} kept_block;

typedef struct fake_graph {
  struct tfd_device *d;
  fake_call *calls;
  size_t num_calls, cap_calls;
  kept_block *kept;
  size_t num_kept, cap_kept;
  bool failed; /* out of memory while recording: capture_end fails */
} fake_graph;

/* The graph the calling thread records into, or NULL: per thread, as CUDA's thread-local capture
 * mode, so other threads' work on the device runs as usual. */
static _Thread_local fake_graph *recording;

bool tfd_fake_gpu_capturing(void) { return recording != NULL; }

bool tfd_fake_gpu_keep(void (*release)(void *arg, void *ptr, size_t size), void *arg, void *ptr, size_t size) {
  fake_graph *g = recording;
  if (!g) return false;
  if (g->num_kept == g->cap_kept) {
    size_t cap = g->cap_kept ? 2 * g->cap_kept : 16;
    kept_block *grown = realloc(g->kept, cap * sizeof *grown);
    if (!grown) { /* cannot keep it: free it now, and the graph cannot be trusted */
      g->failed = true;
      return false;
    }
    g->kept = grown, g->cap_kept = cap;
  }
  g->kept[g->num_kept++] = (kept_block){release, arg, ptr, size};
  return true;
}

static void graph_free(fake_graph *g) {
  if (!g) return;
  for (size_t i = 0; i < g->num_calls; i++) free(g->calls[i].own[0]), free(g->calls[i].own[1]);
  for (size_t i = 0; i < g->num_kept; i++) g->kept[i].release(g->kept[i].arg, g->kept[i].ptr, g->kept[i].size);
  free(g->calls);
  free(g->kept);
  free(g);
}

/* c recorded when the calling thread captures on c->d (true, status set when recording failed). */
static bool recorded(const fake_call *c, tfd_status *status, tfd_code *code) {
  fake_graph *g = recording;
  if (!g || g->d != c->d) return false;
  *code = TFD_OK;
  if (g->num_calls == g->cap_calls) {
    size_t cap = g->cap_calls ? 2 * g->cap_calls : 32;
    fake_call *grown = realloc(g->calls, cap * sizeof *grown);
    if (!grown) {
      g->failed = true;
      *code = tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "fakegpu: out of memory recording a step graph");
      return true;
    }
    g->calls = grown, g->cap_calls = cap;
  }
  g->calls[g->num_calls++] = *c;
  return true;
}

static tfd_code run_call(const fake_call *c, tfd_status *st) {
  switch (c->kind) {
    case C_UNARY: return run_unary(c->d, (tfd_dm_unary)c->op, c->t0, c->p[0], c->y, c->i0, (float)c->f0, st);
    case C_BINARY: return run_binary(c->d, (tfd_dm_binary)c->op, c->t0, c->p[0], c->p[1], c->y, &c->w, st);
    case C_SELECT: return run_select(c->d, c->es, c->p[0], c->p[1], c->p[2], c->y, &c->w, st);
    case C_CAST: return run_cast(c->d, c->t0, c->t1, c->p[0], c->y, c->i0, st);
    case C_ADD_N: return run_add_n(c->d, c->t0, (const void *const *)c->own[0], c->n_in, c->y, c->i0, st);
    case C_COPY_WALK: return run_copy_walk(c->d, c->es, c->p[0], c->y, &c->w, st);
    case C_FILL: return run_fill(c->d, c->es, c->value, c->y, c->i0, st);
    case C_RANGE: return run_range(c->d, c->t0, c->f0, c->f1, c->y, c->i0, st);
    case C_TILE: return run_tile(c->d, c->es, c->p[0], c->dims[0], c->dims[1], c->nd, c->y, st);
    case C_MIRROR_PAD:
      return run_mirror_pad(c->d, c->es, c->p[0], c->dims[0], c->nd, c->dims[1], c->flag, c->y, c->dims[2], st);
    case C_GATHER:
      return run_gather(c->d, c->p[0], c->p[1], c->t0, c->i0, c->i1, c->i2, c->i3, c->es, c->y, st);
    case C_GATHER_ND:
      return run_gather_nd(c->d, c->p[0], c->dims[0], c->nd, c->p[1], c->t0, c->i0, c->depth, c->es, c->y, st);
    case C_REDUCE: return run_reduce(c->d, (tfd_dm_reduce)c->op, c->t0, c->p[0], c->i0, c->i1, c->i2, c->y, st);
    case C_SCATTER_ROWS: return run_scatter_rows(c->d, c->flag, c->t0, c->es, c->p[0], c->p[1], c->i0, c->i1, c->y, st);
    case C_SCAN:
      return run_scan(c->d, c->op & 1, c->op & 2, c->op & 4, c->t0, c->p[0], c->i0, c->i1, c->i2, c->y, st);
    case C_MULTINOMIAL:
      return run_multinomial(c->d, c->t0, c->p[0], c->i0, c->i1, c->i2, c->u0, c->u1, c->t1, c->y, st);
    case C_SEARCH_SORTED:
      return run_search_sorted(c->d, c->flag, c->t0, c->p[0], c->p[1], c->i0, c->i1, c->i2, c->t1, c->y, st);
    case C_ARG_REDUCE: return run_arg_reduce(c->d, c->flag, c->t0, c->p[0], c->i0, c->i1, c->i2, c->t1, c->y, st);
    case C_SOFTMAX: return run_softmax(c->d, c->t0, c->p[0], c->i0, c->i1, c->flag, c->y, st);
    case C_TOP_K: return run_top_k(c->d, c->t0, c->p[0], c->i0, c->i1, c->i2, c->y, c->t1, c->y2, st);
    case C_BATCH_NORM:
      return run_batch_norm(c->d, c->t0, c->p[0], c->p[1], c->p[2], c->p[3], c->p[4], (float)c->f0, c->i0, c->i1, c->y, st);
    case C_MATMUL: return run_matmul(c->d, &c->mm, st);
    case C_CONV2D: return run_conv2d(c->d, &c->conv, st);
    case C_POOL: return run_pool(c->d, &c->pool, st);
    case C_RESIZE: return run_resize(c->d, &c->resize, st);
    case C_WINDOW_MAX: return run_window_max(c->d, &c->window_max, st);
    case C_CROP: return run_crop_and_resize(c->d, &c->crop, st);
    case C_TRANSFORM: return run_image_transform(c->d, &c->transform, st);
    case C_RANDOM: return run_random(c->d, c->flag, c->t0, c->u0, c->u1, c->y, c->i0, st);
    case C_RANDOM_EXT:
      return run_random_ext(c->d, c->flag, c->t0, c->u0, c->u1, c->i1, (uint64_t)c->i2, c->y, c->i0, st);
  }
  return tfd_status_setf(st, TFD_INTERNAL, "fakegpu: unknown recorded call %d", (int)c->kind);
}

/* Runs c now, or records it; host arrays the caller passed must already be in c (dims, value, own). */
static tfd_code submit(fake_call *c, tfd_status *st) {
  tfd_code code;
  if (recorded(c, st, &code)) return code;
  code = run_call(c, st);
  free(c->own[0]);
  free(c->own[1]);
  return code;
}

/* A copy of n elements of es bytes of host memory, owned by the call; false when memory runs out. */
static bool own_copy(fake_call *c, int slot, const void *src, size_t bytes, tfd_status *st) {
  if (!src) return true;
  c->own[slot] = malloc(bytes ? bytes : 1);
  if (!c->own[slot]) {
    tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "fakegpu: out of memory");
    return false;
  }
  memcpy(c->own[slot], src, bytes);
  return true;
}

static tfd_code fg_unary(struct tfd_device *d, tfd_dm_unary op, tfd_dtype dt, const void *x, void *y, int64_t n, float alpha,
                         tfd_status *st) {
  fake_call c = {.kind = C_UNARY, .d = d, .op = op, .t0 = dt, .p = {x}, .y = y, .i0 = n, .f0 = alpha};
  return submit(&c, st);
}
static tfd_code fg_binary(struct tfd_device *d, tfd_dm_binary op, tfd_dtype dt, const void *a, const void *b, void *y,
                          const tfd_dm_walk *w, tfd_status *st) {
  fake_call c = {.kind = C_BINARY, .d = d, .op = op, .t0 = dt, .p = {a, b}, .y = y, .w = *w};
  return submit(&c, st);
}
static tfd_code fg_select(struct tfd_device *d, size_t es, const void *cond, const void *a, const void *b, void *y,
                          const tfd_dm_walk *w, tfd_status *st) {
  fake_call c = {.kind = C_SELECT, .d = d, .es = es, .p = {cond, a, b}, .y = y, .w = *w};
  return submit(&c, st);
}
static tfd_code fg_cast(struct tfd_device *d, tfd_dtype from, tfd_dtype to, const void *x, void *y, int64_t n, tfd_status *st) {
  fake_call c = {.kind = C_CAST, .d = d, .t0 = from, .t1 = to, .p = {x}, .y = y, .i0 = n};
  return submit(&c, st);
}
static tfd_code fg_add_n(struct tfd_device *d, tfd_dtype dt, const void *const *inputs, int n, void *y, int64_t count,
                         tfd_status *st) {
  fake_call c = {.kind = C_ADD_N, .d = d, .t0 = dt, .n_in = n, .y = y, .i0 = count};
  if (!own_copy(&c, 0, inputs, (size_t)n * sizeof *inputs, st)) return tfd_status_code(st);
  return submit(&c, st);
}
static tfd_code fg_copy_walk(struct tfd_device *d, size_t es, const void *x, void *y, const tfd_dm_walk *w, tfd_status *st) {
  fake_call c = {.kind = C_COPY_WALK, .d = d, .es = es, .p = {x}, .y = y, .w = *w};
  return submit(&c, st);
}
static tfd_code fg_fill(struct tfd_device *d, size_t es, const void *value, void *y, int64_t n, tfd_status *st) {
  fake_call c = {.kind = C_FILL, .d = d, .es = es, .y = y, .i0 = n};
  if (es > sizeof c.value) return tfd_status_setf(st, TFD_UNIMPLEMENTED, "fakegpu: fill of %zu-byte elements", es);
  memcpy(c.value, value, es);
  return submit(&c, st);
}
static tfd_code fg_range(struct tfd_device *d, tfd_dtype dt, double start, double delta, void *y, int64_t n, tfd_status *st) {
  fake_call c = {.kind = C_RANGE, .d = d, .t0 = dt, .f0 = start, .f1 = delta, .y = y, .i0 = n};
  return submit(&c, st);
}
static tfd_code fg_tile(struct tfd_device *d, size_t es, const void *x, const int64_t *in_dims, const int64_t *out_dims, int nd,
                        void *y, tfd_status *st) {
  fake_call c = {.kind = C_TILE, .d = d, .es = es, .p = {x}, .nd = nd, .y = y};
  memcpy(c.dims[0], in_dims, (size_t)nd * sizeof *in_dims);
  memcpy(c.dims[1], out_dims, (size_t)nd * sizeof *out_dims);
  return submit(&c, st);
}
static tfd_code fg_mirror_pad(struct tfd_device *d, size_t es, const void *x, const int64_t *in_dims, int nd,
                              const int64_t *before, bool symmetric, void *y, const int64_t *out_dims, tfd_status *st) {
  fake_call c = {.kind = C_MIRROR_PAD, .d = d, .es = es, .p = {x}, .nd = nd, .flag = symmetric, .y = y};
  memcpy(c.dims[0], in_dims, (size_t)nd * sizeof *in_dims);
  memcpy(c.dims[1], before, (size_t)nd * sizeof *before);
  memcpy(c.dims[2], out_dims, (size_t)nd * sizeof *out_dims);
  return submit(&c, st);
}
static tfd_code fg_gather(struct tfd_device *d, const void *x, const void *idx, tfd_dtype idx_dtype, int64_t batches,
                          int64_t outer, int64_t limit, int64_t per, size_t inner_bytes, void *y, tfd_status *st) {
  fake_call c = {.kind = C_GATHER, .d = d, .p = {x, idx}, .t0 = idx_dtype, .i0 = batches, .i1 = outer, .i2 = limit,
                 .i3 = per, .es = inner_bytes, .y = y};
  return submit(&c, st);
}
static tfd_code fg_gather_nd(struct tfd_device *d, const void *x, const int64_t *x_dims, int nd, const void *idx,
                             tfd_dtype idx_dtype, int64_t count, int depth, size_t slice_bytes, void *y, tfd_status *st) {
  fake_call c = {.kind = C_GATHER_ND, .d = d, .p = {x, idx}, .nd = nd, .t0 = idx_dtype, .i0 = count, .depth = depth,
                 .es = slice_bytes, .y = y};
  memcpy(c.dims[0], x_dims, (size_t)nd * sizeof *x_dims);
  return submit(&c, st);
}
static tfd_code fg_reduce(struct tfd_device *d, tfd_dm_reduce op, tfd_dtype dt, const void *x, int64_t outer, int64_t n,
                          int64_t inner, void *y, tfd_status *st) {
  fake_call c = {.kind = C_REDUCE, .d = d, .op = op, .t0 = dt, .p = {x}, .i0 = outer, .i1 = n, .i2 = inner, .y = y};
  return submit(&c, st);
}
static tfd_code fg_scatter_rows(struct tfd_device *d, bool add, tfd_dtype dt, size_t es, const void *x, const int64_t *slots,
                                int64_t n, int64_t row, void *y, tfd_status *st) {
  fake_call c = {.kind = C_SCATTER_ROWS, .d = d, .flag = add, .t0 = dt, .es = es, .p = {x, slots}, .i0 = n, .i1 = row, .y = y};
  return submit(&c, st);
}
static tfd_code fg_scan(struct tfd_device *d, bool prod, bool exclusive, bool reverse, tfd_dtype dt, const void *x,
                        int64_t outer, int64_t n, int64_t inner, void *y, tfd_status *st) {
  fake_call c = {.kind = C_SCAN, .d = d, .op = (prod ? 1 : 0) | (exclusive ? 2 : 0) | (reverse ? 4 : 0), .t0 = dt,
                 .p = {x}, .i0 = outer, .i1 = n, .i2 = inner, .y = y};
  return submit(&c, st);
}
static tfd_code fg_multinomial(struct tfd_device *d, tfd_dtype dt, const void *logits, int64_t rows, int64_t classes,
                               int64_t samples, uint64_t seed, uint64_t base, tfd_dtype out_dt, void *y, tfd_status *st) {
  fake_call c = {.kind = C_MULTINOMIAL, .d = d, .t0 = dt, .p = {logits}, .i0 = rows, .i1 = classes, .i2 = samples,
                 .u0 = seed, .u1 = base, .t1 = out_dt, .y = y};
  return submit(&c, st);
}
static tfd_code fg_search_sorted(struct tfd_device *d, bool upper, tfd_dtype dt, const void *sorted, const void *values,
                                 int64_t rows, int64_t n, int64_t m, tfd_dtype out_dt, void *y, tfd_status *st) {
  fake_call c = {.kind = C_SEARCH_SORTED, .d = d, .flag = upper, .t0 = dt, .p = {sorted, values}, .i0 = rows, .i1 = n,
                 .i2 = m, .t1 = out_dt, .y = y};
  return submit(&c, st);
}
static tfd_code fg_arg_reduce(struct tfd_device *d, bool is_min, tfd_dtype dt, const void *x, int64_t outer, int64_t n,
                              int64_t inner, tfd_dtype out_dtype, void *y, tfd_status *st) {
  fake_call c = {.kind = C_ARG_REDUCE, .d = d, .flag = is_min, .t0 = dt, .p = {x}, .i0 = outer, .i1 = n, .i2 = inner,
                 .t1 = out_dtype, .y = y};
  return submit(&c, st);
}
static tfd_code fg_softmax(struct tfd_device *d, tfd_dtype dt, const void *x, int64_t rows, int64_t cols, bool log_, void *y,
                           tfd_status *st) {
  fake_call c = {.kind = C_SOFTMAX, .d = d, .t0 = dt, .p = {x}, .i0 = rows, .i1 = cols, .flag = log_, .y = y};
  return submit(&c, st);
}
static tfd_code fg_top_k(struct tfd_device *d, tfd_dtype dt, const void *x, int64_t rows, int64_t cols, int64_t k, void *values,
                         tfd_dtype idx_dtype, void *indices, tfd_status *st) {
  fake_call c = {.kind = C_TOP_K, .d = d, .t0 = dt, .p = {x}, .i0 = rows, .i1 = cols, .i2 = k, .y = values, .t1 = idx_dtype,
                 .y2 = indices};
  return submit(&c, st);
}
static tfd_code fg_batch_norm(struct tfd_device *d, tfd_dtype dt, const void *x, const void *scale, const void *offset,
                              const void *mean, const void *variance, float epsilon, int64_t rows, int64_t ch, void *y,
                              tfd_status *st) {
  fake_call c = {.kind = C_BATCH_NORM, .d = d, .t0 = dt, .p = {x, scale, offset, mean, variance}, .f0 = epsilon,
                 .i0 = rows, .i1 = ch, .y = y};
  return submit(&c, st);
}
static tfd_code fg_matmul(struct tfd_device *d, const tfd_dm_matmul *p, tfd_status *st) {
  fake_call c = {.kind = C_MATMUL, .d = d, .mm = *p};
  size_t bytes = (size_t)(p->batch > 0 ? p->batch : 0) * sizeof(int64_t);
  if (!own_copy(&c, 0, p->a_offsets, bytes, st) || !own_copy(&c, 1, p->b_offsets, bytes, st)) {
    free(c.own[0]);
    return tfd_status_code(st);
  }
  c.mm.a_offsets = c.own[0];
  c.mm.b_offsets = c.own[1];
  return submit(&c, st);
}
static tfd_code fg_conv2d(struct tfd_device *d, const tfd_dm_conv *p, tfd_status *st) {
  fake_call c = {.kind = C_CONV2D, .d = d, .conv = *p};
  return submit(&c, st);
}
static tfd_code fg_pool(struct tfd_device *d, const tfd_dm_pool *p, tfd_status *st) {
  fake_call c = {.kind = C_POOL, .d = d, .pool = *p};
  return submit(&c, st);
}
static tfd_code fg_window_max(struct tfd_device *d, const tfd_dm_window_max *p, tfd_status *st) {
  fake_call c = {.kind = C_WINDOW_MAX, .d = d, .window_max = *p};
  return submit(&c, st);
}
static tfd_code fg_image_transform(struct tfd_device *d, const tfd_dm_transform *p, tfd_status *st) {
  fake_call c = {.kind = C_TRANSFORM, .d = d, .transform = *p};
  return submit(&c, st);
}
static tfd_code fg_crop_and_resize(struct tfd_device *d, const tfd_dm_crop *p, tfd_status *st) {
  fake_call c = {.kind = C_CROP, .d = d, .crop = *p};
  return submit(&c, st);
}
static tfd_code fg_resize(struct tfd_device *d, const tfd_dm_resize *p, tfd_status *st) {
  fake_call c = {.kind = C_RESIZE, .d = d, .resize = *p};
  return submit(&c, st);
}
static tfd_code fg_random_ext(struct tfd_device *d, bool truncated, tfd_dtype dt, uint64_t seed, uint64_t base, int64_t lo,
                              uint64_t range, void *y, int64_t n, tfd_status *st) {
  fake_call c = {.kind = C_RANDOM_EXT, .d = d, .flag = truncated, .t0 = dt, .u0 = seed, .u1 = base, .i1 = lo,
                 .i2 = (int64_t)range, .y = y, .i0 = n};
  return submit(&c, st);
}
static tfd_code fg_random(struct tfd_device *d, bool normal, tfd_dtype dt, uint64_t seed, uint64_t counter, void *y, int64_t n,
                          tfd_status *st) {
  fake_call c = {.kind = C_RANDOM, .d = d, .flag = normal, .t0 = dt, .u0 = seed, .u1 = counter, .y = y, .i0 = n};
  return submit(&c, st);
}

static tfd_code fg_capture_begin(struct tfd_device *d, tfd_status *st) {
  if (recording) return tfd_status_setf(st, TFD_FAILED_PRECONDITION, "fakegpu: this thread is capturing already");
  if (!(recording = calloc(1, sizeof *recording)))
    return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "fakegpu: out of memory starting a step graph");
  recording->d = d;
  return TFD_OK;
}

static tfd_code fg_capture_end(struct tfd_device *d, bool abandon, void **graph, tfd_status *st) {
  fake_graph *g = recording;
  *graph = NULL;
  if (!g || g->d != d) return tfd_status_setf(st, TFD_FAILED_PRECONDITION, "fakegpu: this thread is not capturing");
  recording = NULL;
  if (abandon || g->failed) {
    bool failed = g->failed;
    graph_free(g);
    return failed && !abandon ? tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "fakegpu: out of memory recording a step graph")
                              : TFD_OK;
  }
  *graph = g;
  return TFD_OK;
}

static tfd_code fg_graph_launch(struct tfd_device *d, void *graph, tfd_status *st) {
  fake_graph *g = graph;
  (void)d;
  for (size_t i = 0; i < g->num_calls; i++)
    if (run_call(&g->calls[i], st) != TFD_OK) return tfd_status_code(st);
  return TFD_OK;
}

static void fg_graph_free(struct tfd_device *d, void *graph) {
  (void)d;
  graph_free(graph);
}

static const tfd_device_math fake_math = {
    .name = "fakegpu",
    .unary = fg_unary,
    .binary = fg_binary,
    .select = fg_select,
    .cast = fg_cast,
    .add_n = fg_add_n,
    .copy_walk = fg_copy_walk,
    .fill = fg_fill,
    .range = fg_range,
    .tile = fg_tile,
    .mirror_pad = fg_mirror_pad,
    .gather = fg_gather,
    .gather_nd = fg_gather_nd,
    .reduce = fg_reduce,
    .scan = fg_scan,
    .search_sorted = fg_search_sorted,
    .multinomial = fg_multinomial,
    .scatter_rows = fg_scatter_rows,
    .arg_reduce = fg_arg_reduce,
    .softmax = fg_softmax,
    .top_k = fg_top_k,
    .batch_norm = fg_batch_norm,
    .matmul = fg_matmul,
    .conv2d = fg_conv2d,
    .pool = fg_pool,
    .resize = fg_resize,
    .window_max = fg_window_max,
    .crop_and_resize = fg_crop_and_resize,
    .image_transform = fg_image_transform,
    .random = fg_random,
    .random_ext = fg_random_ext,
    .capture_begin = fg_capture_begin,
    .capture_end = fg_capture_end,
    .graph_launch = fg_graph_launch,
    .graph_free = fg_graph_free,
};

const tfd_device_math *tfd_fake_gpu_math(void) { return &fake_math; }
