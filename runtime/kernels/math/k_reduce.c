/* Reductions over axes: Sum, Mean, Max, Min, Prod, with keep_dims. */
#include <stdlib.h>
#include <string.h>

#include "../kernel.h"
#include "reduce_logic.h"

enum { R_SUM, R_MEAN, R_MAX, R_MIN, R_PROD };

/* a + b that wraps for integers (as TensorFlow's sums do) instead of being
 * undefined; plain addition for floating point. */
#define RADD(a, b)                                                           \
  _Generic((a), int32_t: (int32_t)((uint32_t)(a) + (uint32_t)(b)),          \
           int64_t: (int64_t)((uint64_t)(a) + (uint64_t)(b)), default: (a) + (b))
/* a * b, wrapping for integers likewise. */
#define RMUL(a, b)                                                           \
  _Generic((a), int32_t: (int32_t)((uint32_t)(a) * (uint32_t)(b)),          \
           int64_t: (int64_t)((uint64_t)(a) * (uint64_t)(b)), default: (a) * (b))
/* acc combined with x by the reduction `code`: Max and Min keep acc on ties and NaN comparisons. */
#define RCOMBINE(code, acc, x)                                                                         \
  ((code) == R_MAX ? ((x) > (acc) ? (x) : (acc)) : (code) == R_MIN ? ((x) < (acc) ? (x) : (acc))     \
   : (code) == R_PROD ? RMUL(acc, x) : RADD(acc, x))

/* Reduces a tensor viewed as [outer, reduced, inner] after the reduced axes
 * are made contiguous: kept dims are split around one block of reduced ones
 * when the reduced axes are contiguous; otherwise we walk every element. */
#define REDUCE(T, ACC)                                                                          \
  do {                                                                                          \
    const T *x = tfd_tensor_const_data(in);                                                     \
    T *y = tfd_tensor_data(out);                                                                \
    int64_t n_out = tfd_tensor_numel(out);                                                      \
    ACC *acc = calloc((size_t)(n_out ? n_out : 1), sizeof *acc);                                \
    bool *seen = calloc((size_t)(n_out ? n_out : 1), 1);                                        \
    if (!acc || !seen) {                                                                        \
      free(acc);                                                                                \
      free(seen);                                                                               \
      tfd_tensor_unref(out); /* not handed out yet: ours to drop */                             \
      tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory");                           \
      return;                                                                                   \
    }                                                                                           \
    int64_t idx[TFD_MAX_DIMS] = {0};                                                            \
    for (int64_t i = 0, n = tfd_tensor_numel(in); i < n; i++) {                                 \
      int64_t o = 0;                                                                            \
      for (int d = 0; d < nd; d++) o += reduce[d] ? 0 : idx[d] * ostride[d];                    \
      if (k->code == R_MAX || k->code == R_MIN || k->code == R_PROD) {                          \
        acc[o] = seen[o] ? RCOMBINE(k->code, acc[o], (ACC)x[i]) : (ACC)x[i];                    \
        seen[o] = true;                                                                         \
      } else {                                                                                  \
        acc[o] = RADD(acc[o], x[i]);                                                            \
      }                                                                                         \
      for (int d = nd - 1; d >= 0; d--) {                                                       \
        if (++idx[d] < tfd_tensor_dim(in, d)) break;                                            \
        idx[d] = 0;                                                                             \
      }                                                                                         \
    }                                                                                           \
    for (int64_t o = 0; o < n_out; o++)                                                         \
      y[o] = (T)(k->code == R_PROD && !seen[o] ? 1 : k->code == R_MEAN && count ? acc[o] / (ACC)count : acc[o]); \
    free(acc);                                                                                  \
    free(seen);                                                                                 \
  } while (0)

/* ---- contiguous layouts, sharded ---- */
typedef struct reduce_job {
  const void *x;
  void *y;
  int64_t rows, count; /* trailing: rows x count; leading: count x rows (columns) */
  int code;
  tfd_dtype dt;
  bool trailing;
  double *partial;     /* per-shard partial results (one row), when splitting inside a row */
  int64_t shard_len;
} reduce_job;

#define ACC_ROW(T, ACC)                                                         \
  do {                                                                          \
    const T *x = (const T *)j->x + r * j->count;                                \
    ACC acc = j->code == R_MAX || j->code == R_MIN ? (ACC)x[0] : j->code == R_PROD ? 1 : 0; \
    for (int64_t i = 0; i < j->count; i++) acc = RCOMBINE(j->code, acc, (ACC)x[i]); \
    if (j->code == R_MEAN) acc /= (ACC)j->count;                                \
    ((T *)j->y)[r] = (T)acc;                                                    \
  } while (0)

static void reduce_rows(int64_t b, int64_t e, void *arg) {
  reduce_job *j = arg;
  for (int64_t r = b; r < e; r++) {
    switch (j->dt) {
      case TFD_FLOAT32: ACC_ROW(float, double); break;
      case TFD_FLOAT64: ACC_ROW(double, double); break;
      case TFD_INT32: ACC_ROW(int32_t, int64_t); break;
      default: ACC_ROW(int64_t, int64_t); break;
    }
  }
}

#define ACC_COLS(T, ACC)                                                                        \
  do {                                                                                          \
    const T *x = j->x;                                                                          \
    T *y = j->y;                                                                                \
    for (int64_t c0 = b; c0 < e; c0++) y[c0] = x[c0]; /* row 0 starts every reduction */      \
    for (int64_t i = 1; i < j->count; i++) {                                                    \
      const T *row_ = x + i * j->rows;                                                          \
      for (int64_t c0 = b; c0 < e; c0++)                                                        \
        y[c0] = (T)RCOMBINE(j->code, y[c0], row_[c0]);                                         \
    }                                                                                           \
    if (j->code == R_MEAN)                                                                      \
      for (int64_t c0 = b; c0 < e; c0++) y[c0] = (T)((ACC)y[c0] / (ACC)j->count);               \
  } while (0)

static void reduce_cols(int64_t b, int64_t e, void *arg) {
  reduce_job *j = arg;
  switch (j->dt) {
    case TFD_FLOAT32: ACC_COLS(float, double); break;
    case TFD_FLOAT64: ACC_COLS(double, double); break;
    case TFD_INT32: ACC_COLS(int32_t, int64_t); break;
    default: ACC_COLS(int64_t, int64_t); break;
  }
}

/* One row split in shards: each shard writes its partial into partial[shard]. */
#define ACC_PART(T)                                                                              \
  do {                                                                                           \
    const T *x = j->x;                                                                           \
    for (int64_t s = b; s < e; s++) {                                                            \
      int64_t lo = s * j->shard_len, hi = lo + j->shard_len < j->count ? lo + j->shard_len : j->count; \
      double acc = j->code == R_MAX || j->code == R_MIN ? (double)x[lo] : j->code == R_PROD ? 1 : 0; \
      for (int64_t i = lo; i < hi; i++) acc = RCOMBINE(j->code, acc, (double)x[i]);             \
      j->partial[s] = acc;                                                                       \
    }                                                                                            \
  } while (0)

static void reduce_parts(int64_t b, int64_t e, void *arg) {
  reduce_job *j = arg;
  switch (j->dt) {
    case TFD_FLOAT32: ACC_PART(float); break;
    case TFD_FLOAT64: ACC_PART(double); break;
    case TFD_INT32: ACC_PART(int32_t); break;
    default: ACC_PART(int64_t); break;
  }
}

/* Sharded reductions for contiguous layouts; false when it cannot help (then the generic path runs). */
static bool fast_reduce(tfd_kernel *k, tfd_kernel_context *c, tfd_tensor *in, tfd_tensor *out, int64_t count,
                        bool trailing) {
  tfd_dtype dt = tfd_tensor_dtype(in);
  if (dt != TFD_FLOAT32 && dt != TFD_FLOAT64 && dt != TFD_INT32 && dt != TFD_INT64) return false;
  int64_t rows = tfd_tensor_numel(out);
  reduce_job j = {tfd_tensor_const_data(in), tfd_tensor_data(out), rows, count, k->code, dt, trailing, NULL, 0};
  int64_t n = tfd_tensor_numel(in);
  tfd_threadpool *pool = n >= TFD_PARALLEL_MIN_ELEMENTS ? c->intra_pool : NULL;
  int threads = tfd_threadpool_num_threads(pool);
  if (!trailing) {
    tfd_threadpool_parallel_for(pool, rows, count, reduce_cols, &j);
    return true;
  }
  if (rows >= 2 * threads || !pool || (dt != TFD_FLOAT32 && dt != TFD_FLOAT64)) {
    tfd_threadpool_parallel_for(pool, rows, count, reduce_rows, &j);
    return true;
  }
  /* Few long rows (a full reduction): split each row into shards. Integer
   * sums stay on the exact path above; float partials combine in double. */
  int64_t shards = 4 * (int64_t)threads;
  double partial[64];
  if (shards > 64) shards = 64;
  j.partial = partial;
  j.shard_len = (count + shards - 1) / shards;
  for (int64_t r = 0; r < rows; r++) {
    reduce_job rj = j;
    rj.x = (const char *)j.x + r * count * (int64_t)tfd_dtype_size(dt);
    int64_t used = (count + j.shard_len - 1) / j.shard_len;
    tfd_threadpool_parallel_for(pool, used, j.shard_len, reduce_parts, &rj);
    double acc = k->code == R_MAX || k->code == R_MIN ? partial[0] : k->code == R_PROD ? 1 : 0;
    for (int64_t s = 0; s < used; s++) acc = RCOMBINE(k->code, acc, partial[s]);
    if (k->code == R_MEAN) acc /= (double)count;
    if (dt == TFD_FLOAT32) ((float *)j.y)[r] = (float)acc;
    else ((double *)j.y)[r] = acc;
  }
  return true;
}

static void k_reduce(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *in = c->inputs[0];
  int nd = tfd_tensor_ndims(in), ond;
  bool reduce[TFD_MAX_DIMS];
  int64_t odims[TFD_MAX_DIMS], count;
  if (!tfd_reduce_shape(c, k, false, reduce, odims, &ond, &count)) return;
  tfd_tensor *out = tfd_kernel_alloc(c, k, tfd_tensor_dtype(in), odims, ond);
  if (!out) return;
  if (tfd_tensor_numel(out) == 0) { /* nothing to compute; sizes around a 0 may be huge */
    c->outputs[0] = out;
    return;
  }
  unsigned char identity[16];
  if (count == 0 && (k->code == R_MAX || k->code == R_MIN) &&
      tfd_reduce_identity(tfd_tensor_dtype(in), k->code == R_MAX, identity)) { /* Max/Min of nothing */
    size_t es = tfd_dtype_size(tfd_tensor_dtype(in));
    char *y = tfd_tensor_data(out);
    for (int64_t i = 0; i < tfd_tensor_numel(out); i++) memcpy(y + (size_t)i * es, identity, es);
    c->outputs[0] = out;
    return;
  }
  /* Strides into the output for each input dim (kept dims only). */
  int64_t ostride[TFD_MAX_DIMS], s = 1;
  for (int d = nd - 1; d >= 0; d--) {
    if (reduce[d]) {
      ostride[d] = 0;
    } else {
      ostride[d] = s;
      s *= tfd_tensor_dim(in, d);
    }
  }
  /* Trailing axes reduced (rows of a matrix, or everything): contiguous rows.
   * Leading axes reduced: contiguous columns. Both split over the pool. */
  int first_reduced = nd, last_kept = -1;
  for (int d = 0; d < nd; d++) {
    if (reduce[d] && first_reduced == nd) first_reduced = d;
    if (!reduce[d]) last_kept = d;
  }
  bool trailing = last_kept < first_reduced, leading = true;
  for (int d = 0; d < nd; d++)
    if (reduce[d] && d > 0 && !reduce[d - 1]) leading = false;
  if (tfd_tensor_numel(in) > 0 && (trailing || leading) && fast_reduce(k, c, in, out, count, trailing)) {
    c->outputs[0] = out;
    return;
  }
  switch (tfd_tensor_dtype(in)) {
    case TFD_FLOAT32: REDUCE(float, double); break;
    case TFD_FLOAT64: REDUCE(double, double); break;
    case TFD_INT32: REDUCE(int32_t, int64_t); break;
    case TFD_INT64: REDUCE(int64_t, int64_t); break;
    default:
      tfd_tensor_unref(out);
      tfd_kernel_fail(c, k, TFD_UNIMPLEMENTED, "no kernel for dtype %s", tfd_dtype_name(tfd_tensor_dtype(in)));
      return;
  }
  c->outputs[0] = out;
}

tfd_code tfd_setup_reduce(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  (void)st;
  const char *op = init->op->name;
  k->code = strcmp(op, "Sum") == 0    ? R_SUM
            : strcmp(op, "Mean") == 0 ? R_MEAN
            : strcmp(op, "Min") == 0  ? R_MIN
            : strcmp(op, "Prod") == 0 ? R_PROD
                                      : R_MAX;
  k->keep_dims = tfd_attr_bool(init->node, "keep_dims", false);
  k->compute = k_reduce;
  return TFD_OK;
}
