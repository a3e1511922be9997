/* Scatters, searches and uniques, as TensorFlow's CPU kernels compute them and with their error texts:
 * ScatterNd (zeros with updates summed in at indices), TensorScatterUpdate (a copy with updates
 * written, the last write winning), BatchMatMul (BatchMatMulV2's arithmetic once the legacy op's
 * equal-batch rule holds), LowerBound and UpperBound (a binary search per row), Unique and UniqueV2
 * (first-occurrence order; V2 finds unique slices along an axis) and ListDiff. Slices are moved with
 * memcpy; sums and comparisons go by dtype. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/checked.h"
#include "../../core/half.h"
#include "../../core/tstring.h"
#include "../kernel.h"
#include "../kernel_shared.h"
#include "../math/matmul_logic.h"
#include "scatter_logic.h"

#define TEXT_CAP TFD_SHAPE_TEXT_CAP

static const char *dims_text(char *buf, size_t cap, const int64_t *dims, int nd) {
  size_t at = (size_t)snprintf(buf, cap, "[");
  for (int d = 0; d < nd && at < cap; d++)
    at += (size_t)snprintf(buf + at, cap - at, "%s%lld", d ? "," : "", (long long)dims[d]);
  if (at < cap) snprintf(buf + at, cap - at, "]");
  return buf;
}

static void oom(tfd_kernel_context *c, const tfd_kernel *k) { tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory"); }

/* ---- ScatterNd, TensorScatterUpdate ---- */
/* dst[i] += src[i] for n elements of dt (ScatterNd's summing of repeated indices). */
static void add_into(void *dst, const void *src, int64_t n, tfd_dtype dt) {
  switch (dt) {
#define ADD_CASE(D, T)                                                    \
  case D:                                                                 \
    for (int64_t i = 0; i < n; i++) ((T *)dst)[i] += ((const T *)src)[i]; \
    break;
    ADD_CASE(TFD_FLOAT32, float)
    ADD_CASE(TFD_FLOAT64, double)
    ADD_CASE(TFD_INT32, int32_t)
    ADD_CASE(TFD_INT64, int64_t)
    ADD_CASE(TFD_UINT8, uint8_t)
#undef ADD_CASE
    case TFD_FLOAT16:
      for (int64_t i = 0; i < n; i++)
        ((uint16_t *)dst)[i] =
            tfd_float_to_half(tfd_half_to_float(((uint16_t *)dst)[i]) + tfd_half_to_float(((const uint16_t *)src)[i]));
      break;
    default:
      break; /* the op's type list holds no other dtype */
  }
}

/* TensorFlow's checks on indices and updates against the output's shape (dims, nd), in its order;
 * tensor_scatter picks TensorScatterOp's texts over ScatterNdOp's. On success *ixd is the index
 * depth, *slice the elements per update and *n the number of updates. */
static bool scatter_check(tfd_kernel_context *c, const tfd_kernel *k, const tfd_tensor *ix, const tfd_tensor *upd,
                          const int64_t *dims, int nd, bool tensor_scatter, const tfd_tensor *shape_in, int64_t *ixd,
                          int64_t *slice, int64_t *n) {
  char a[TEXT_CAP], b[TEXT_CAP];
  int ri = tfd_tensor_ndims(ix), ru = tfd_tensor_ndims(upd);
  if (ri < 1) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Indices shape must have rank at least one. Found:%s",
                    tfd_tensor_shape_text(a, sizeof a, ix, 0));
    return false;
  }
  if (ru < 1) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Updates shape must have rank at least one. Found:%s",
                    tfd_tensor_shape_text(a, sizeof a, upd, 0));
    return false;
  }
  int64_t out_n = 1;
  for (int d = 0; d < nd; d++)
    if (!tfd_checked_mul(out_n, dims[d], &out_n)) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "shape %s has more elements than int64 can count",
                      dims_text(a, sizeof a, dims, nd));
      return false;
    }
  int64_t ni = tfd_tensor_numel(ix), nu = tfd_tensor_numel(upd);
  if (!((ni == 0 && nu == 0) || (out_n != 0 && ni != 0 && nu != 0))) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Indices and updates specified for empty output shape");
    return false;
  }
  int outer = ri - 1;
  for (int d = 0; d < outer; d++)
    if (d >= ru || tfd_tensor_dim(ix, d) != tfd_tensor_dim(upd, d)) {
      tfd_tensor_shape_text(a, sizeof a, ix, 0), tfd_tensor_shape_text(b, sizeof b, upd, 0);
      if (tensor_scatter)
        tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                        "Outer dimensions of indices and update must match. Indices shape: %s, updates shape:%s", a, b);
      else
        tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                        "Dimensions [0,%d) of indices[shape=%s] must match dimensions [0,%d) of updates[shape=%s]", outer, a,
                        outer, b);
      return false;
    }
  int64_t depth = tfd_tensor_dim(ix, outer);
  bool inner_ok = (int64_t)ru - outer == (int64_t)nd - depth;
  for (int i = 0; inner_ok && i + outer < ru; i++) inner_ok = tfd_tensor_dim(upd, i + outer) == dims[depth + i];
  if (!inner_ok) {
    dims_text(a, sizeof a, dims, nd), tfd_tensor_shape_text(b, sizeof b, upd, 0);
    if (!tensor_scatter)
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                      "Dimensions [%lld,%d) of input[shape=%s] must match dimensions [%d,%d) of updates[shape=%s]",
                      (long long)depth, nd, a, outer, ru, b);
    else if ((int64_t)ru - outer != (int64_t)nd - depth)
      tfd_kernel_fail(
          c, k, TFD_INVALID_ARGUMENT,
          "Inner dimensions of output shape must match inner dimensions of updates shape. Output: %s updates: %s", a, b);
    else
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                      "The inner %lld dimensions of output.shape=%s must match the inner %d dimensions of updates.shape=%s",
                      (long long)(nd - depth), a, ru - outer, b);
    return false;
  }
  if (shape_in && tfd_tensor_ndims(shape_in) != 1) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Shape must be a vector");
    return false;
  }
  /* DoScatterNd's own checks (PrepareAndValidateInputs). */
  if (nd < 1) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Output must be at least 1-D, got shape: %s",
                    dims_text(a, sizeof a, dims, nd));
    return false;
  }
  if (tfd_tensor_dim(upd, 0) != tfd_tensor_dim(ix, 0)) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                    "Dimensions [0,1) of indices[shape=%s] = %lld must match dimensions [0,1) of updates[shape=%s] = %lld",
                    tfd_tensor_shape_text(a, sizeof a, ix, 0), (long long)tfd_tensor_dim(ix, 0),
                    tfd_tensor_shape_text(b, sizeof b, upd, 0), (long long)tfd_tensor_dim(upd, 0));
    return false;
  }
  if (ri == 1 && depth > 0) { /* one index of rank 1: its batch dimension is the index itself */
    char p[TEXT_CAP];
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                    "Must have updates.shape = indices.shape[:batch_dim] + params_shape[slice_dim:], got updates.shape: "
                    "%s, indices.shape: %s, params_shape: %s, slice_dim: 1, and batch_dim: 1",
                    tfd_tensor_shape_text(b, sizeof b, upd, 0), tfd_tensor_shape_text(a, sizeof a, ix, 0),
                    dims_text(p, sizeof p, dims, nd));
    return false;
  }
  *ixd = depth;
  *slice = 1;
  for (int d = (int)(depth < nd ? depth : nd); d < nd; d++) *slice *= dims[d];
  *n = depth > 0 ? ni / depth : 0;
  if (out_n > 0 && (depth < 1 || depth > 7)) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                    "Only indices.shape[-1] values between 1 and 5 are currently supported.  Requested rank: %lld",
                    (long long)depth);
    return false;
  }
  return true;
}

/* The slot (row of the [out_n / slice, slice] view) of every update, into slots[n]; false with
 * TensorFlow's text for the first index outside dims. */
static bool scatter_slots(tfd_kernel_context *c, const tfd_kernel *k, const tfd_tensor *ix, const int64_t *dims, int nd,
                          int64_t depth, int64_t n, int64_t *slots) {
  for (int64_t u = 0; u < n; u++) {
    int64_t slot = 0;
    for (int64_t d = 0; d < depth; d++) {
      int64_t v = tfd_tensor_get_index(ix, u * depth + d);
      if (v < 0 || v >= dims[d]) {
        char where[TEXT_CAP], at[TEXT_CAP * 2], sh[TEXT_CAP];
        int outer = tfd_tensor_ndims(ix) - 1;
        where[0] = '\0';
        if (outer == 1)
          snprintf(where, sizeof where, "[%lld]", (long long)u);
        else if (outer > 1) {
          char co[TEXT_CAP];
          snprintf(where, sizeof where, "[%s]", tfd_index_coords(ix, u, outer, co, sizeof co));
        }
        size_t len = 0;
        for (int64_t e = 0; e < depth && len < sizeof at; e++)
          len += (size_t)snprintf(at + len, sizeof at - len, "%s%lld", e ? ", " : "",
                                  (long long)tfd_tensor_get_index(ix, u * depth + e));
        tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "indices%s = [%s] does not index into shape %s", where, at,
                        dims_text(sh, sizeof sh, dims, nd));
        return false;
      }
      slot = slot * dims[d] + v;
    }
    slots[u] = slot;
  }
  return true;
}

void tfd_scatter_plan_free(tfd_scatter_plan *p) {
  free(p->slots);
  free(p->from);
  p->slots = p->from = NULL;
}

bool tfd_scatter_nd_plan(tfd_kernel_context *c, const tfd_kernel *k, tfd_scatter_plan *p) {
  memset(p, 0, sizeof *p);
  tfd_tensor *upd = c->inputs[1];
  if (!tfd_kernel_check_index(c, k, c->inputs[0], "indices") || !tfd_kernel_check_index(c, k, c->inputs[2], "shape")) return false;
  if (tfd_tensor_numel(c->inputs[2]) > TFD_MAX_DIMS) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "shape must have at most %d sizes, got %lld", TFD_MAX_DIMS,
                    (long long)tfd_tensor_numel(c->inputs[2]));
    return false;
  }
  tfd_tensor *ix = tfd_kernel_host_input(c, k, 0), *sh = ix ? tfd_kernel_host_input(c, k, 2) : NULL;
  bool ok = sh != NULL;
  p->nd = ok ? (int)tfd_tensor_numel(sh) : 0;
  for (int d = 0; ok && d < p->nd; d++) {
    p->dims[d] = tfd_tensor_get_index(sh, d);
    if (p->dims[d] < 0) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Dimension %lld must be >= 0", (long long)p->dims[d]);
      ok = false;
    }
  }
  int64_t depth = 0, total = 1;
  ok = ok && scatter_check(c, k, ix, upd, p->dims, p->nd, false, sh, &depth, &p->slice, &p->n);
  for (int d = 0; ok && d < p->nd; d++) total *= p->dims[d];
  if (ok && total > 0 && p->n > 0) {
    if (!(p->slots = malloc((size_t)p->n * sizeof *p->slots))) {
      oom(c, k);
      ok = false;
    } else {
      ok = scatter_slots(c, k, ix, p->dims, p->nd, depth, p->n, p->slots);
    }
  }
  if (!ok || total == 0) p->n = 0;
  if (!ok) tfd_scatter_plan_free(p);
  tfd_tensor_unref(ix);
  tfd_tensor_unref(sh);
  return ok;
}

bool tfd_tensor_scatter_plan(tfd_kernel_context *c, const tfd_kernel *k, tfd_scatter_plan *p) {
  memset(p, 0, sizeof *p);
  tfd_tensor *in = c->inputs[0], *upd = c->inputs[2];
  if (!tfd_kernel_check_index(c, k, c->inputs[1], "indices")) return false;
  if (tfd_tensor_dtype(in) != tfd_tensor_dtype(upd)) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "tensor is %s but updates is %s", tfd_dtype_name(tfd_tensor_dtype(in)),
                    tfd_dtype_name(tfd_tensor_dtype(upd)));
    return false;
  }
  p->nd = tfd_tensor_ndims(in);
  for (int d = 0; d < p->nd; d++) p->dims[d] = tfd_tensor_dim(in, d);
  tfd_tensor *ix = tfd_kernel_host_input(c, k, 1);
  if (!ix) return false;
  int64_t depth;
  bool ok = scatter_check(c, k, ix, upd, p->dims, p->nd, true, NULL, &depth, &p->slice, &p->n);
  if (ok && tfd_tensor_numel(in) > 0 && p->n > 0) {
    if (!(p->slots = malloc((size_t)p->n * sizeof *p->slots))) {
      oom(c, k);
      ok = false;
    } else {
      ok = scatter_slots(c, k, ix, p->dims, p->nd, depth, p->n, p->slots);
    }
  }
  if (!ok || tfd_tensor_numel(in) == 0) p->n = 0;
  if (!ok) tfd_scatter_plan_free(p);
  tfd_tensor_unref(ix);
  return ok;
}

static void k_scatter_nd(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_scatter_plan p;
  if (!tfd_scatter_nd_plan(c, k, &p)) return;
  tfd_tensor *upd = c->inputs[1];
  tfd_dtype dt = tfd_tensor_dtype(upd);
  tfd_tensor *out = tfd_kernel_alloc(c, k, dt, p.dims, p.nd);
  int64_t total = out ? tfd_tensor_numel(out) : 0, n = p.n, slice = p.slice;
  uint8_t *seen = out && n > 0 ? calloc((size_t)(total / slice), 1) : NULL;
  if (!out || (n > 0 && !seen)) {
    if (out) oom(c, k);
    tfd_tensor_unref(out);
    tfd_scatter_plan_free(&p);
    return;
  }
  size_t es = tfd_dtype_size(dt), row = (size_t)slice * es;
  char *o = tfd_tensor_data(out);
  if (n == 0) {
    if (total) memset(o, 0, (size_t)total * es);
  } else {
    const char *src = tfd_tensor_const_data(upd);
    /* The first update of a slot is copied, later ones added; slots no update names stay zero. */
    for (int64_t u = 0; u < n; u++) {
      if (!seen[p.slots[u]])
        memcpy(o + (size_t)p.slots[u] * row, src + (size_t)u * row, row);
      else
        add_into(o + (size_t)p.slots[u] * row, src + (size_t)u * row, slice, dt);
      seen[p.slots[u]] = 1;
    }
    for (int64_t s = 0; s < total / slice; s++)
      if (!seen[s]) memset(o + (size_t)s * row, 0, row);
  }
  c->outputs[0] = out;
  free(seen);
  tfd_scatter_plan_free(&p);
}

static void k_tensor_scatter_update(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_scatter_plan p;
  if (!tfd_tensor_scatter_plan(c, k, &p)) return;
  tfd_tensor *in = c->inputs[0], *upd = c->inputs[2];
  tfd_dtype dt = tfd_tensor_dtype(in);
  tfd_tensor *out = tfd_kernel_forward_or_alloc(c, k, 0, dt, p.dims, p.nd);
  if (!out) {
    tfd_scatter_plan_free(&p);
    return;
  }
  int64_t n = p.n, slice = p.slice;
  size_t es = tfd_dtype_size(dt), row = (size_t)slice * es;
  char *o = tfd_tensor_data(out);
  const char *src = tfd_tensor_const_data(upd), *base = tfd_tensor_const_data(in);
  int64_t rows = slice > 0 ? tfd_tensor_numel(in) / slice : 0;
  /* Not in place, with rows of 32 bytes or more: each output row is written once, from the update that
   * lands there last or from the tensor, instead of copying the tensor and then overwriting rows. */
  int64_t *from = o != base && rows > 0 && row >= 32 ? malloc((size_t)rows * sizeof *from) : NULL;
  if (from) {
    for (int64_t r = 0; r < rows; r++) from[r] = -1;
    for (int64_t u = 0; u < n; u++) from[p.slots[u]] = u;
    for (int64_t r = 0; r < rows; r++)
      memcpy(o + (size_t)r * row, from[r] >= 0 ? src + (size_t)from[r] * row : base + (size_t)r * row, row);
    free(from);
  } else if (tfd_tensor_numel(in) > 0) {
    if (o != base) memcpy(o, base, (size_t)tfd_tensor_numel(in) * es);
    for (int64_t u = 0; u < n; u++) memcpy(o + (size_t)p.slots[u] * row, src + (size_t)u * row, row);
  }
  c->outputs[0] = out;
  tfd_scatter_plan_free(&p);
}

/* ---- BatchMatMul: the legacy op, without broadcasting ---- */
static void k_batch_matmul_v1(tfd_kernel *k, tfd_kernel_context *c) {
  if (tfd_batch_matmul_v1_check(c, k)) tfd_batch_matmul_compute(k, c);
}

/* ---- LowerBound, UpperBound ---- */
/* scatter_logic.h */
bool tfd_search_sorted_check(tfd_kernel_context *c, const tfd_kernel *k) {
  tfd_tensor *s = c->inputs[0], *v = c->inputs[1];
  if (tfd_tensor_ndims(s) != 2) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "sorted input argument must be a matrix");
    return false;
  }
  if (tfd_tensor_ndims(v) != 2) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "values argument must be a matrix");
    return false;
  }
  if (tfd_tensor_dim(s, 0) != tfd_tensor_dim(v, 0)) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Leading dim_size of both tensors must match.");
    return false;
  }
  if (tfd_tensor_numel(v) >= INT_MAX) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "values tensor size must less than INT_MAX");
    return false;
  }
  if (k->dst == TFD_INT32 && tfd_tensor_dim(s, 1) >= INT_MAX) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "trailing dim_size must less than INT_MAX for int32 output type, was %lld",
                    (long long)tfd_tensor_dim(s, 1));
    return false;
  }
  return true;
}

static void k_search_sorted(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *s = c->inputs[0], *v = c->inputs[1];
  if (!tfd_search_sorted_check(c, k)) return;
  int64_t rows = tfd_tensor_dim(s, 0), len = tfd_tensor_dim(s, 1), m = tfd_tensor_dim(v, 1);
  tfd_tensor *out = tfd_kernel_alloc_like(c, k, k->dst, v);
  if (!out) return;
  bool upper = k->code == 1, i64 = k->dst == TFD_INT64;
  void *o = tfd_tensor_data(out);
  const void *sv = tfd_tensor_const_data(s), *vv = tfd_tensor_const_data(v);
  /* lower: the first position whose element is not less than the value; upper: the first greater. */
#define SEARCH(T, LOAD)                           \
  for (int64_t r = 0; r < rows; r++)              \
    for (int64_t j = 0; j < m; j++) {             \
      T x = LOAD((const T *)vv, r * m + j);       \
      int64_t lo = 0, hi = len;                   \
      while (lo < hi) {                           \
        int64_t mid = lo + (hi - lo) / 2;         \
        T e = LOAD((const T *)sv, r * len + mid); \
        if (upper ? !(x < e) : e < x)             \
          lo = mid + 1;                           \
        else                                      \
          hi = mid;                               \
      }                                           \
      if (i64)                                    \
        ((int64_t *)o)[r * m + j] = lo;           \
      else                                        \
        ((int32_t *)o)[r * m + j] = (int32_t)lo;  \
    }
#define PLAIN(p, i) (p)[i]
#define HALF(p, i) tfd_half_to_float(((const uint16_t *)(p))[i])
  switch (tfd_tensor_dtype(s)) {
    case TFD_FLOAT32:
      SEARCH(float, PLAIN) break;
    case TFD_FLOAT64:
      SEARCH(double, PLAIN) break;
    case TFD_INT32:
      SEARCH(int32_t, PLAIN) break;
    case TFD_INT64:
      SEARCH(int64_t, PLAIN) break;
    case TFD_UINT8:
      SEARCH(uint8_t, PLAIN) break;
    case TFD_FLOAT16:
      SEARCH(float, HALF) break;
    default:
      tfd_tensor_unref(out);
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "%s inputs are not supported", tfd_dtype_name(tfd_tensor_dtype(s)));
      return;
  }
#undef SEARCH
#undef PLAIN
#undef HALF
  c->outputs[0] = out;
}

/* ---- Unique, UniqueV2, ListDiff: hashing runs of `width` elements ---- */
/* Element equality as TensorFlow's == (floats by value: -0 equals 0, NaN equals nothing). */
static bool elem_eq(const char *a, const char *b, tfd_dtype dt) {
  switch (dt) {
    case TFD_FLOAT32:
      return *(const float *)a == *(const float *)b;
    case TFD_FLOAT64:
      return *(const double *)a == *(const double *)b;
    case TFD_FLOAT16:
      return tfd_half_to_float(*(const uint16_t *)a) == tfd_half_to_float(*(const uint16_t *)b);
    case TFD_STRING: /* by their bytes (an element is a reference: tstring.h) */
      return tfd_tstring_equal(*(const tfd_variant *const *)a, *(const tfd_variant *const *)b);
    default:
      return memcmp(a, b, tfd_dtype_size(dt)) == 0;
  }
}

static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

/* A hash agreeing with elem_eq: equal floats of different bits (-0, 0) hash alike. */
static uint64_t run_hash(const char *p, int64_t width, tfd_dtype dt) {
  uint64_t h = 0x84222325cbf29ce4ull;
  size_t es = tfd_dtype_size(dt);
  for (int64_t i = 0; i < width; i++, p += es) {
    uint64_t v = 0;
    if (dt == TFD_FLOAT32) {
      float f = *(const float *)p;
      if (f != 0) memcpy(&v, &f, sizeof f);
    } else if (dt == TFD_FLOAT64) {
      double f = *(const double *)p;
      if (f != 0) memcpy(&v, &f, sizeof f);
    } else if (dt == TFD_FLOAT16) {
      float f = tfd_half_to_float(*(const uint16_t *)p);
      if (f != 0) memcpy(&v, &f, sizeof f);
    } else if (dt == TFD_STRING) {
      v = tfd_tstring_hash(*(const tfd_variant *const *)p);
    } else {
      memcpy(&v, p, es);
    }
    h = mix(h, v);
  }
  return h;
}

static bool run_eq(const char *a, const char *b, int64_t width, tfd_dtype dt) {
  size_t es = tfd_dtype_size(dt);
  for (int64_t i = 0; i < width; i++)
    if (!elem_eq(a + (size_t)i * es, b + (size_t)i * es, dt)) return false;
  return true;
}

/* An open-addressed set of runs (row i of a [n, width] buffer), by first occurrence. */
typedef struct run_set {
  int64_t *slot; /* the row stored there, or -1 */
  uint64_t mask;
  const char *rows;
  int64_t width;
  tfd_dtype dt;
} run_set;

static bool run_set_init(run_set *s, const char *rows, int64_t n, int64_t width, tfd_dtype dt) {
  uint64_t cap = 16;
  while (cap < (uint64_t)n * 2) cap *= 2;
  s->slot = malloc(cap * sizeof *s->slot);
  if (!s->slot) return false;
  memset(s->slot, 0xff, cap * sizeof *s->slot);
  s->mask = cap - 1, s->rows = rows, s->width = width, s->dt = dt;
  return true;
}

/* The row equal to `run` already in the set; else -1, and with add the run (row i) is added. */
static int64_t run_set_find(run_set *s, const char *run, int64_t i, bool add) {
  size_t row = (size_t)s->width * tfd_dtype_size(s->dt);
  for (uint64_t at = run_hash(run, s->width, s->dt) & s->mask;; at = (at + 1) & s->mask) {
    int64_t r = s->slot[at];
    if (r < 0) {
      if (add) s->slot[at] = i;
      return -1;
    }
    if (run_eq(s->rows + (size_t)r * row, run, s->width, s->dt)) return r;
  }
}

static void put_index(tfd_tensor *t, int64_t i, int64_t v) {
  if (tfd_tensor_dtype(t) == TFD_INT64)
    ((int64_t *)tfd_tensor_data(t))[i] = v;
  else
    ((int32_t *)tfd_tensor_data(t))[i] = (int32_t)v;
}

static void k_unique(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *x = c->inputs[0];
  int nd = tfd_tensor_ndims(x);
  int64_t axis = 0;
  bool by_axis = false;
  if (k->code == 1) { /* UniqueV2 */
    tfd_tensor *a = c->inputs[1];
    if (tfd_tensor_numel(a) > 1) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "axis does not support input tensors larger than 1 elements");
      return;
    }
    if (tfd_tensor_numel(a) == 1) {
      if (!tfd_kernel_check_index(c, k, a, "axis")) return;
      tfd_tensor *ah = tfd_kernel_host_input(c, k, 1);
      if (!ah) return;
      axis = tfd_tensor_get_index(ah, 0);
      tfd_tensor_unref(ah);
      if (axis < 0) axis += nd;
      if (axis < 0 || axis >= nd) {
        tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "axis has to be between [0, %d)", nd);
        return;
      }
      by_axis = true;
    }
  }
  if (!by_axis && nd != 1) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "unique expects a 1D vector.");
    return;
  }
  tfd_dtype dt = tfd_tensor_dtype(x);
  size_t es = tfd_dtype_size(dt);
  /* An empty input's slices are all empty, and all equal. */
  bool none = tfd_tensor_numel(x) == 0;
  int64_t len = tfd_tensor_dim(x, (int)axis), outer = none ? 0 : tfd_dims_product(x, 0, (int)axis),
          inner = none ? 0 : tfd_dims_product(x, (int)axis + 1, nd);
  int64_t width = outer * inner; /* the elements of one slice along the axis */
  if (k->dst == TFD_INT32 && len > INT_MAX) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "unique does not support input tensors larger than 2^31 - 1 elements");
    return;
  }
  tfd_tensor *idx = tfd_kernel_alloc(c, k, k->dst, &len, 1);
  if (!idx) return;
  /* Slices gathered into rows (the input itself when the axis is outermost), then hashed. */
  const char *src = tfd_tensor_const_data(x);
  char *rows = NULL;
  int64_t *first = malloc((size_t)(len > 0 ? len : 1) * sizeof *first);
  run_set set = {0};
  bool gathered = outer > 1;
  if (gathered) rows = malloc((size_t)(len * width) * es + 1);
  if (!first || (gathered && !rows) || !run_set_init(&set, gathered ? rows : src, len, width, dt)) {
    oom(c, k);
    goto fail;
  }
  if (gathered)
    for (int64_t o = 0; o < outer; o++)
      for (int64_t j = 0; j < len; j++)
        memcpy(rows + ((size_t)j * width + (size_t)o * inner) * es, src + ((size_t)o * len + j) * inner * es,
               (size_t)inner * es);
  const char *r = gathered ? rows : src;
  int64_t uniq = 0;
  int64_t *which = malloc((size_t)(len > 0 ? len : 1) * sizeof *which); /* row -> its unique's number */
  if (!which) {
    oom(c, k);
    goto fail;
  }
  for (int64_t j = 0; j < len; j++) {
    int64_t seen = run_set_find(&set, r + (size_t)j * width * es, j, true);
    if (seen < 0) {
      first[uniq] = j;
      which[j] = uniq++;
    } else {
      which[j] = which[seen];
    }
    put_index(idx, j, which[j]);
  }
  free(which);
  int64_t ydims[TFD_MAX_DIMS];
  for (int d = 0; d < nd; d++) ydims[d] = tfd_tensor_dim(x, d);
  ydims[axis] = uniq;
  tfd_tensor *y = tfd_kernel_alloc(c, k, dt, ydims, nd);
  if (!y) goto fail;
  char *yo = tfd_tensor_data(y);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t u = 0; u < uniq; u++)
      memcpy(yo + ((size_t)o * uniq + u) * inner * es, src + ((size_t)o * len + first[u]) * inner * es, (size_t)inner * es);
  c->outputs[0] = y;
  c->outputs[1] = idx;
  free(set.slot);
  free(rows);
  free(first);
  return;
fail:
  free(set.slot);
  free(rows);
  free(first);
  tfd_tensor_unref(idx);
}

static void k_list_diff(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *x = c->inputs[0], *y = c->inputs[1];
  if (tfd_tensor_ndims(x) != 1) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "x should be a 1D vector.");
    return;
  }
  if (tfd_tensor_ndims(y) != 1) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "y should be a 1D vector.");
    return;
  }
  tfd_dtype dt = tfd_tensor_dtype(x);
  size_t es = tfd_dtype_size(dt);
  int64_t nx = tfd_tensor_numel(x), ny = tfd_tensor_numel(y), kept = 0;
  const char *xs = tfd_tensor_const_data(x), *ys = tfd_tensor_const_data(y);
  run_set set;
  bool *keep = malloc((size_t)(nx > 0 ? nx : 1));
  if (!keep || !run_set_init(&set, ys, ny, 1, dt)) {
    free(keep);
    oom(c, k);
    return;
  }
  for (int64_t j = 0; j < ny; j++) run_set_find(&set, ys + (size_t)j * es, j, true);
  for (int64_t i = 0; i < nx; i++) kept += keep[i] = run_set_find(&set, xs + (size_t)i * es, -1, false) < 0;
  free(set.slot);
  tfd_tensor *out = tfd_kernel_alloc(c, k, dt, &kept, 1), *idx = out ? tfd_kernel_alloc(c, k, k->dst, &kept, 1) : NULL;
  if (!idx) {
    if (out) tfd_tensor_unref(out);
    free(keep);
    return;
  }
  char *o = tfd_tensor_data(out);
  for (int64_t i = 0, at = 0; i < nx; i++)
    if (keep[i]) {
      memcpy(o + (size_t)at * es, xs + (size_t)i * es, es);
      put_index(idx, at++, i);
    }
  free(keep);
  c->outputs[0] = out;
  c->outputs[1] = idx;
}

tfd_code tfd_setup_scatter(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  const char *op = init->op->name;
  if (strcmp(op, "BatchMatMul") == 0) {
    if (tfd_setup_batch_matmul(k, init, st) != TFD_OK) return tfd_status_code(st);
    k->compute = k_batch_matmul_v1;
    return TFD_OK;
  }
  if (strcmp(op, "ScatterNd") == 0)
    k->compute = k_scatter_nd;
  else if (strcmp(op, "TensorScatterUpdate") == 0)
    k->compute = k_tensor_scatter_update;
  else if (strcmp(op, "LowerBound") == 0 || strcmp(op, "UpperBound") == 0) {
    k->compute = k_search_sorted;
    k->code = op[0] == 'U';
    k->dst = tfd_attr_dtype(init->node, "out_type", TFD_INT32);
  } else {
    k->compute = strcmp(op, "ListDiff") == 0 ? k_list_diff : k_unique;
    k->code = strcmp(op, "UniqueV2") == 0;
    k->dst = tfd_attr_dtype(init->node, "out_idx", TFD_INT32);
  }
  if ((k->compute == k_search_sorted || k->compute == k_unique || k->compute == k_list_diff) && k->dst != TFD_INT32 &&
      k->dst != TFD_INT64)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): the index output must be int32 or int64, not %s",
                           tfd_node_def_name(init->node), op, tfd_dtype_name(k->dst));
  return TFD_OK;
}
