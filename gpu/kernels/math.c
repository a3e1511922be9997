/* The CUDA device math (device_math.h's tfd_device_math), the table GPU devices carry: the host side
 * of each entry, which checks what it is given (dtypes it does not take are UNIMPLEMENTED, sizes that
 * describe nothing INVALID_ARGUMENT), queues nothing for 0 elements, takes any workspace from the
 * device's allocator and calls the launcher of its .cu file on the device's compute stream. Products
 * and convolutions are matmul.c (cuBLASLt, cuBLAS) and conv.c (cuDNN). */
#include <stdlib.h>
#include <string.h>

#include "../../runtime/kernels/device_math_elem.h"
#include "cuda_kernels.h"

/* Runs `launch` (a cudaError_t expression) and turns its failure into the call's status. */
#define LAUNCH(c, what, launch, st)                         \
  do {                                                      \
    cudaError_t err_ = (launch);                            \
    if (err_ != cudaSuccess) return tfd_cuda_fail((c), (what), err_, (st)); \
  } while (0)

static bool is_float(tfd_dtype dt) { return dt == TFD_FLOAT32 || dt == TFD_FLOAT64; }
static bool is_number(tfd_dtype dt) { return is_float(dt) || dt == TFD_INT32 || dt == TFD_INT64; }
static bool is_index(tfd_dtype dt) { return dt == TFD_INT32 || dt == TFD_INT64; }

static bool walk_ok(const tfd_dm_walk *w) {
  if (!w || w->nd < 0 || w->nd > TFD_MAX_DIMS) return false;
  for (int d = 0; d < w->nd; d++)
    if (w->dims[d] < 0) return false;
  return true;
}

static tfd_code bad_walk(struct tfd_device *d, const char *entry, tfd_status *st) {
  return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "%s: cuda %s: walk of bad rank or a negative dimension",
                         d && d->name ? d->name : "GPU", entry);
}

/* ---- elementwise ---- */
static tfd_code cuda_unary(struct tfd_device *d, tfd_dm_unary op, tfd_dtype dt, const void *x, void *y, int64_t n,
                           float alpha, tfd_status *st) {
  bool ok = (int)op >= 0 && op < TFD_DM_UNARY_COUNT &&
            (op == TFD_DM_LOGICAL_NOT ? dt == TFD_BOOL
                                      : is_float(dt) || (is_index(dt) && (op == TFD_DM_NEG || op == TFD_DM_ABS ||
                                                                          op == TFD_DM_SQUARE || op == TFD_DM_SIGN ||
                                                                          op == TFD_DM_ROUND)));
  if (!ok) return tfd_cuda_unimplemented(d, "unary", dt, st);
  if (n <= 0) return TFD_OK;
  tfd_cuda_call c;
  if (tfd_cuda_begin(d, "unary", dt, n, &c, st) != TFD_OK) return TFD_INTERNAL;
  LAUNCH(&c, "unary kernel launch", tfd_cuda_unary(&c.l, op, dt, x, y, n, alpha), st);
  return TFD_OK;
}

static tfd_code cuda_binary(struct tfd_device *d, tfd_dm_binary op, tfd_dtype dt, const void *a, const void *b,
                            void *y, const tfd_dm_walk *w, tfd_status *st) {
  bool logic = op == TFD_DM_LOGICAL_AND || op == TFD_DM_LOGICAL_OR;
  bool ok = (int)op >= 0 && op < TFD_DM_BINARY_COUNT &&
            (dt == TFD_BOOL ? logic || op == TFD_DM_EQUAL || op == TFD_DM_NOT_EQUAL : is_number(dt) && !logic);
  if (!ok) return tfd_cuda_unimplemented(d, "binary", dt, st);
  if (!walk_ok(w)) return bad_walk(d, "binary", st);
  int64_t n = tfd_dm_walk_count(w);
  if (n <= 0) return TFD_OK;
  tfd_cuda_call c;
  if (tfd_cuda_begin(d, "binary", dt, n, &c, st) != TFD_OK) return TFD_INTERNAL;
  LAUNCH(&c, "binary kernel launch", tfd_cuda_binary(&c.l, op, dt, a, b, y, w, n), st);
  return TFD_OK;
}

static tfd_code cuda_select(struct tfd_device *d, size_t eb, const void *cond, const void *a, const void *b, void *y,
                            const tfd_dm_walk *w, tfd_status *st) {
  if (!walk_ok(w)) return bad_walk(d, "select", st);
  int64_t n = tfd_dm_walk_count(w);
  if (n <= 0 || eb == 0) return TFD_OK;
  tfd_cuda_call c;
  if (tfd_cuda_begin(d, "select", TFD_BOOL, n, &c, st) != TFD_OK) return TFD_INTERNAL;
  LAUNCH(&c, "select kernel launch", tfd_cuda_select(&c.l, eb, cond, a, b, y, w, n), st);
  return TFD_OK;
}

static bool castable(tfd_dtype dt) { return tfd_cuda_dtype_size(dt) > 0; }

static tfd_code cuda_cast(struct tfd_device *d, tfd_dtype from, tfd_dtype to, const void *x, void *y, int64_t n,
                          tfd_status *st) {
  if (!castable(from)) return tfd_cuda_unimplemented(d, "cast", from, st);
  if (!castable(to)) return tfd_cuda_unimplemented(d, "cast", to, st);
  if (n <= 0) return TFD_OK;
  tfd_cuda_call c;
  if (tfd_cuda_begin(d, "cast", to, n, &c, st) != TFD_OK) return TFD_INTERNAL;
  if (from == to) {
    if (x != y)
      LAUNCH(&c, "cudaMemcpyAsync", cudaMemcpyAsync(y, x, (size_t)n * tfd_cuda_dtype_size(to), cudaMemcpyDeviceToDevice,
                                                    c.l.stream), st);
    return TFD_OK;
  }
  LAUNCH(&c, "cast kernel launch", tfd_cuda_cast(&c.l, from, to, x, y, n), st);
  return TFD_OK;
}

static tfd_code cuda_add_n(struct tfd_device *d, tfd_dtype dt, const void *const *in, int n, void *y, int64_t count,
                           tfd_status *st) {
  if (!is_number(dt)) return tfd_cuda_unimplemented(d, "add_n", dt, st);
  if (count <= 0) return TFD_OK;
  tfd_cuda_call c;
  if (tfd_cuda_begin(d, "add_n", dt, count, &c, st) != TFD_OK) return TFD_INTERNAL;
  size_t bytes = (size_t)count * tfd_cuda_dtype_size(dt);
  if (n <= 0) {
    LAUNCH(&c, "cudaMemsetAsync", cudaMemsetAsync(y, 0, bytes, c.l.stream), st);
    return TFD_OK;
  }
  /* Past the first launch's 16 inputs y holds a partial sum: an input that is y itself must then be
   * read from elsewhere, so the sum goes to a workspace first. */
  bool alias = false;
  for (int j = 16; j < n; j++) alias = alias || in[j] == y;
  void *out = alias ? tfd_cuda_workspace(&c, bytes, st) : y;
  if (!out) return TFD_RESOURCE_EXHAUSTED;
  cudaError_t err = tfd_cuda_add_n(&c.l, dt, in, n, out, count);
  if (err == cudaSuccess && alias) err = cudaMemcpyAsync(y, out, bytes, cudaMemcpyDeviceToDevice, c.l.stream);
  if (alias) tfd_cuda_workspace_free(&c, out, bytes);
  if (err != cudaSuccess) return tfd_cuda_fail(&c, "add_n kernel launch", err, st);
  return TFD_OK;
}

/* ---- data movement ---- */
static tfd_code cuda_copy_walk(struct tfd_device *d, size_t eb, const void *x, void *y, const tfd_dm_walk *w,
                               tfd_status *st) {
  if (!walk_ok(w)) return bad_walk(d, "copy_walk", st);
  int64_t n = tfd_dm_walk_count(w);
  if (n <= 0 || eb == 0) return TFD_OK;
  tfd_cuda_call c;
  if (tfd_cuda_begin(d, "copy_walk", TFD_UINT8, n, &c, st) != TFD_OK) return TFD_INTERNAL;
  LAUNCH(&c, "copy kernel launch", tfd_cuda_copy_walk(&c.l, eb, x, y, w, n), st);
  return TFD_OK;
}

static tfd_code cuda_fill(struct tfd_device *d, size_t eb, const void *value, void *y, int64_t n, tfd_status *st) {
  if (eb == 0 || eb > 16)
    return tfd_status_setf(st, TFD_UNIMPLEMENTED, "%s: cuda fill: elements of %zu bytes", d && d->name ? d->name : "GPU",
                           eb);
  if (n <= 0) return TFD_OK;
  tfd_cuda_call c;
  if (tfd_cuda_begin(d, "fill", TFD_UINT8, n, &c, st) != TFD_OK) return TFD_INTERNAL;
  LAUNCH(&c, "fill kernel launch", tfd_cuda_fill(&c.l, eb, value, y, n), st);
  return TFD_OK;
}

static tfd_code cuda_range(struct tfd_device *d, tfd_dtype dt, double start, double delta, void *y, int64_t n,
                           tfd_status *st) {
  if (!is_number(dt)) return tfd_cuda_unimplemented(d, "range", dt, st);
  if (n <= 0) return TFD_OK;
  tfd_cuda_call c;
  if (tfd_cuda_begin(d, "range", dt, n, &c, st) != TFD_OK) return TFD_INTERNAL;
  LAUNCH(&c, "range kernel launch", tfd_cuda_range(&c.l, dt, start, delta, y, n), st);
  return TFD_OK;
}

static bool word_size(size_t eb) { return eb == 1 || eb == 2 || eb == 4 || eb == 8 || eb == 16; }

/* The element count of dims[0..nd) (0 when any is 0), or -1 when a size is negative. */
static int64_t count_of(const int64_t *dims, int nd) {
  int64_t n = 1;
  for (int i = 0; i < nd; i++) {
    if (dims[i] < 0) return -1;
    n *= dims[i];
  }
  return n;
}

static tfd_code cuda_tile(struct tfd_device *d, size_t eb, const void *x, const int64_t *in_dims,
                          const int64_t *out_dims, int nd, void *y, tfd_status *st) {
  if (!word_size(eb))
    return tfd_status_setf(st, TFD_UNIMPLEMENTED, "%s: cuda tile: elements of %zu bytes", d && d->name ? d->name : "GPU", eb);
  if (nd < 0 || nd > TFD_MAX_DIMS) return bad_walk(d, "tile", st);
  int64_t n = count_of(out_dims, nd), in = count_of(in_dims, nd);
  if (n < 0 || in < 0 || (n > 0 && in == 0))
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "%s: cuda tile: an empty or negative input dimension for a non-empty output",
                           d && d->name ? d->name : "GPU");
  if (n == 0) return TFD_OK;
  tfd_cuda_call c;
  if (tfd_cuda_begin(d, "tile", TFD_UINT8, n, &c, st) != TFD_OK) return TFD_INTERNAL;
  if (nd == 0) {
    LAUNCH(&c, "cudaMemcpyAsync", cudaMemcpyAsync(y, x, eb, cudaMemcpyDeviceToDevice, c.l.stream), st);
    return TFD_OK;
  }
  LAUNCH(&c, "tile kernel launch", tfd_cuda_tile(&c.l, eb, x, in_dims, out_dims, nd, y, n), st);
  return TFD_OK;
}

static tfd_code cuda_mirror_pad(struct tfd_device *d, size_t eb, const void *x, const int64_t *in_dims, int nd,
                                const int64_t *before, bool symmetric, void *y, const int64_t *out_dims,
                                tfd_status *st) {
  if (!word_size(eb))
    return tfd_status_setf(st, TFD_UNIMPLEMENTED, "%s: cuda mirror_pad: elements of %zu bytes",
                           d && d->name ? d->name : "GPU", eb);
  if (nd < 0 || nd > TFD_MAX_DIMS) return bad_walk(d, "mirror_pad", st);
  int64_t n = count_of(out_dims, nd), in = count_of(in_dims, nd);
  bool reach = true; /* every reflection lands inside the input */
  for (int i = 0; i < nd && n > 0; i++) {
    int64_t most = symmetric ? in_dims[i] : in_dims[i] - 1, after = out_dims[i] - in_dims[i] - before[i];
    reach = reach && before[i] >= 0 && after >= 0 && before[i] <= most && after <= most;
  }
  if (n < 0 || in < 0 || (n > 0 && (in == 0 || !reach)))
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "%s: cuda mirror_pad: paddings beyond what %s can reflect",
                           d && d->name ? d->name : "GPU", symmetric ? "SYMMETRIC" : "REFLECT");
  if (n == 0) return TFD_OK;
  tfd_cuda_call c;
  if (tfd_cuda_begin(d, "mirror_pad", TFD_UINT8, n, &c, st) != TFD_OK) return TFD_INTERNAL;
  if (nd == 0) {
    LAUNCH(&c, "cudaMemcpyAsync", cudaMemcpyAsync(y, x, eb, cudaMemcpyDeviceToDevice, c.l.stream), st);
    return TFD_OK;
  }
  LAUNCH(&c, "mirror_pad kernel launch", tfd_cuda_mirror_pad(&c.l, eb, x, in_dims, nd, before, symmetric, y, out_dims, n),
         st);
  return TFD_OK;
}

static tfd_code cuda_gather(struct tfd_device *d, const void *x, const void *idx, tfd_dtype idx_dtype, int64_t batches,
                            int64_t outer, int64_t limit, int64_t per, size_t inner_bytes, void *y, tfd_status *st) {
  if (!is_index(idx_dtype)) return tfd_cuda_unimplemented(d, "gather (indices)", idx_dtype, st);
  if (batches < 0 || outer < 0 || limit < 0 || per < 0)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "%s: cuda gather: negative size", d && d->name ? d->name : "GPU");
  int64_t rows = batches * outer * per;
  if (rows == 0 || inner_bytes == 0) return TFD_OK;
  tfd_cuda_call c;
  if (tfd_cuda_begin(d, "gather", idx_dtype, rows, &c, st) != TFD_OK) return TFD_INTERNAL;
  LAUNCH(&c, "gather kernel launch", tfd_cuda_gather(&c.l, x, idx, idx_dtype, batches, outer, limit, per, inner_bytes, y),
         st);
  return TFD_OK;
}

static tfd_code cuda_gather_nd(struct tfd_device *d, const void *x, const int64_t *x_dims, int nd, const void *idx,
                               tfd_dtype idx_dtype, int64_t count, int depth, size_t slice_bytes, void *y,
                               tfd_status *st) {
  if (!is_index(idx_dtype)) return tfd_cuda_unimplemented(d, "gather_nd (indices)", idx_dtype, st);
  if (nd < 0 || nd > TFD_MAX_DIMS || depth < 0 || depth > nd || count < 0)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "%s: cuda gather_nd: index depth %d for params of rank %d",
                           d && d->name ? d->name : "GPU", depth, nd);
  if (count == 0 || slice_bytes == 0) return TFD_OK;
  tfd_cuda_call c;
  if (tfd_cuda_begin(d, "gather_nd", idx_dtype, count, &c, st) != TFD_OK) return TFD_INTERNAL;
  LAUNCH(&c, "gather_nd kernel launch",
         tfd_cuda_gather_nd(&c.l, x, x_dims, nd, idx, idx_dtype, count, depth, slice_bytes, y), st);
  return TFD_OK;
}

/* ---- reductions ---- */
static tfd_code bad_sizes(struct tfd_device *d, const char *entry, tfd_status *st) {
  return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "%s: cuda %s: negative size", d && d->name ? d->name : "GPU", entry);
}

static tfd_code cuda_scatter_rows(struct tfd_device *d, bool add, tfd_dtype dt, size_t es, const void *x,
                                  const int64_t *slots, int64_t n, int64_t row, void *y, tfd_status *st) {
  if (add ? dt != TFD_FLOAT32 && dt != TFD_FLOAT64 && dt != TFD_INT64 : es == 16 || !word_size(es))
    return tfd_cuda_unimplemented(d, add ? "scatter_rows (add)" : "scatter_rows", dt, st);
  if (n < 0 || row < 0) return bad_sizes(d, "scatter_rows", st);
  if (n == 0 || row == 0) return TFD_OK;
  tfd_cuda_call c;
  if (tfd_cuda_begin(d, "scatter_rows", dt, n * row, &c, st) != TFD_OK) return TFD_INTERNAL;
  LAUNCH(&c, "scatter_rows kernel launch", tfd_cuda_scatter_rows(&c.l, add, dt, es, x, slots, n, row, y), st);
  return TFD_OK;
}

static tfd_code cuda_multinomial(struct tfd_device *d, tfd_dtype dt, const void *logits, int64_t rows, int64_t classes,
                                 int64_t samples, uint64_t seed, uint64_t base, tfd_dtype out_dt, void *y, tfd_status *st) {
  if (!is_float(dt)) return tfd_cuda_unimplemented(d, "multinomial", dt, st);
  if (out_dt != TFD_INT32 && out_dt != TFD_INT64) return tfd_cuda_unimplemented(d, "multinomial (output)", out_dt, st);
  if (rows < 0 || classes <= 0 || samples < 0) return bad_sizes(d, "multinomial", st);
  if (rows == 0 || samples == 0) return TFD_OK;
  tfd_cuda_call c;
  if (tfd_cuda_begin(d, "multinomial", dt, rows * samples, &c, st) != TFD_OK) return TFD_INTERNAL;
  LAUNCH(&c, "multinomial kernel launch", tfd_cuda_multinomial(&c.l, dt, logits, rows, classes, samples, seed, base, out_dt, y),
         st);
  return TFD_OK;
}

static tfd_code cuda_search_sorted(struct tfd_device *d, bool upper, tfd_dtype dt, const void *sorted, const void *values,
                                   int64_t rows, int64_t n, int64_t m, tfd_dtype out_dt, void *y, tfd_status *st) {
  if (dt != TFD_FLOAT32 && dt != TFD_FLOAT64 && dt != TFD_INT64) return tfd_cuda_unimplemented(d, "search_sorted", dt, st);
  if (out_dt != TFD_INT32 && out_dt != TFD_INT64) return tfd_cuda_unimplemented(d, "search_sorted (output)", out_dt, st);
  if (rows < 0 || n < 0 || m < 0) return bad_sizes(d, "search_sorted", st);
  if (rows == 0 || m == 0) return TFD_OK;
  tfd_cuda_call c;
  if (tfd_cuda_begin(d, "search_sorted", dt, rows * m, &c, st) != TFD_OK) return TFD_INTERNAL;
  LAUNCH(&c, "search_sorted kernel launch", tfd_cuda_search_sorted(&c.l, upper, dt, sorted, values, rows, n, m, out_dt, y),
         st);
  return TFD_OK;
}

static tfd_code cuda_scan(struct tfd_device *d, bool prod, bool exclusive, bool reverse, tfd_dtype dt, const void *x,
                          int64_t outer, int64_t n, int64_t inner, void *y, tfd_status *st) {
  if (dt != TFD_FLOAT32 && dt != TFD_FLOAT64 && dt != TFD_INT64) return tfd_cuda_unimplemented(d, "scan", dt, st);
  if (outer < 0 || n < 0 || inner < 0) return bad_sizes(d, "scan", st);
  if (outer == 0 || n == 0 || inner == 0) return TFD_OK;
  tfd_cuda_call c;
  if (tfd_cuda_begin(d, "scan", dt, outer * n * inner, &c, st) != TFD_OK) return TFD_INTERNAL;
  LAUNCH(&c, "scan kernel launch", tfd_cuda_scan(&c.l, prod, exclusive, reverse, dt, x, outer, n, inner, y), st);
  return TFD_OK;
}

static tfd_code cuda_reduce(struct tfd_device *d, tfd_dm_reduce op, tfd_dtype dt, const void *x, int64_t outer,
                            int64_t n, int64_t inner, void *y, tfd_status *st) {
  if ((int)op < 0 || op >= TFD_DM_REDUCE_COUNT || !is_number(dt) || (op == TFD_DM_MEAN && !is_float(dt)))
    return tfd_cuda_unimplemented(d, op == TFD_DM_MEAN ? "reduce (mean)" : "reduce", dt, st);
  if (outer < 0 || n < 0 || inner < 0) return bad_sizes(d, "reduce", st);
  if (outer == 0 || inner == 0) return TFD_OK;
  tfd_cuda_call c;
  if (tfd_cuda_begin(d, "reduce", dt, outer * n * inner, &c, st) != TFD_OK) return TFD_INTERNAL;
  size_t ws = tfd_cuda_reduce_workspace(&c.l, op, dt, outer, n, inner);
  void *w = tfd_cuda_workspace(&c, ws, st);
  if (ws && !w) return TFD_RESOURCE_EXHAUSTED;
  cudaError_t err = tfd_cuda_reduce(&c.l, op, dt, x, outer, n, inner, y, w);
  tfd_cuda_workspace_free(&c, w, ws);
  return err == cudaSuccess ? TFD_OK : tfd_cuda_fail(&c, "reduce kernel launch", err, st);
}

static tfd_code cuda_arg_reduce(struct tfd_device *d, bool is_min, tfd_dtype dt, const void *x, int64_t outer,
                                int64_t n, int64_t inner, tfd_dtype out_dtype, void *y, tfd_status *st) {
  if (!is_number(dt)) return tfd_cuda_unimplemented(d, "arg_reduce", dt, st);
  if (!is_index(out_dtype)) return tfd_cuda_unimplemented(d, "arg_reduce (output)", out_dtype, st);
  if (outer < 0 || n < 0 || inner < 0) return bad_sizes(d, "arg_reduce", st);
  if (outer == 0 || inner == 0) return TFD_OK;
  if (n == 0)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "%s: cuda arg_reduce: the reduced axis is empty",
                           d && d->name ? d->name : "GPU");
  tfd_cuda_call c;
  if (tfd_cuda_begin(d, "arg_reduce", dt, outer * n * inner, &c, st) != TFD_OK) return TFD_INTERNAL;
  size_t ws = tfd_cuda_arg_reduce_workspace(&c.l, dt, outer, n, inner);
  void *w = tfd_cuda_workspace(&c, ws, st);
  if (ws && !w) return TFD_RESOURCE_EXHAUSTED;
  cudaError_t err = tfd_cuda_arg_reduce(&c.l, is_min, dt, x, outer, n, inner, out_dtype, y, w);
  tfd_cuda_workspace_free(&c, w, ws);
  return err == cudaSuccess ? TFD_OK : tfd_cuda_fail(&c, "arg_reduce kernel launch", err, st);
}

static tfd_code cuda_softmax(struct tfd_device *d, tfd_dtype dt, const void *x, int64_t rows, int64_t cols, bool log,
                             void *y, tfd_status *st) {
  if (!is_float(dt)) return tfd_cuda_unimplemented(d, "softmax", dt, st);
  if (rows < 0 || cols < 0) return bad_sizes(d, "softmax", st);
  if (rows == 0 || cols == 0) return TFD_OK;
  tfd_cuda_call c;
  if (tfd_cuda_begin(d, "softmax", dt, rows * cols, &c, st) != TFD_OK) return TFD_INTERNAL;
  LAUNCH(&c, "softmax kernel launch", tfd_cuda_softmax(&c.l, dt, x, rows, cols, log, y), st);
  return TFD_OK;
}

static tfd_code cuda_top_k(struct tfd_device *d, tfd_dtype dt, const void *x, int64_t rows, int64_t cols, int64_t k,
                           void *values, tfd_dtype idx_dtype, void *indices, tfd_status *st) {
  if (!is_number(dt)) return tfd_cuda_unimplemented(d, "top_k", dt, st);
  if (!is_index(idx_dtype)) return tfd_cuda_unimplemented(d, "top_k (indices)", idx_dtype, st);
  if (rows < 0 || cols < 0 || k < 0) return bad_sizes(d, "top_k", st);
  if (k > cols)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "%s: cuda top_k: k %lld of rows of %lld", d && d->name ? d->name : "GPU",
                           (long long)k, (long long)cols);
  if (rows == 0 || k == 0) return TFD_OK;
  tfd_cuda_call c;
  if (tfd_cuda_begin(d, "top_k", dt, rows * cols, &c, st) != TFD_OK) return TFD_INTERNAL;
  size_t ws = tfd_cuda_top_k_workspace(dt, rows, cols, k);
  void *w = tfd_cuda_workspace(&c, ws, st);
  if (ws && !w) return TFD_RESOURCE_EXHAUSTED;
  cudaError_t err = tfd_cuda_top_k(&c.l, dt, x, rows, cols, k, values, idx_dtype, indices, w);
  tfd_cuda_workspace_free(&c, w, ws);
  return err == cudaSuccess ? TFD_OK : tfd_cuda_fail(&c, "top_k kernel launch", err, st);
}

static tfd_code cuda_batch_norm(struct tfd_device *d, tfd_dtype dt, const void *x, const void *scale,
                                const void *offset, const void *mean, const void *variance, float epsilon,
                                int64_t rows, int64_t ch, void *y, tfd_status *st) {
  if (!is_float(dt)) return tfd_cuda_unimplemented(d, "batch_norm", dt, st);
  if (rows < 0 || ch < 0) return bad_sizes(d, "batch_norm", st);
  if (rows == 0 || ch == 0) return TFD_OK;
  tfd_cuda_call c;
  if (tfd_cuda_begin(d, "batch_norm", dt, rows * ch, &c, st) != TFD_OK) return TFD_INTERNAL;
  LAUNCH(&c, "batch_norm kernel launch",
         tfd_cuda_batch_norm(&c.l, dt, x, scale, offset, mean, variance, epsilon, rows, ch, y), st);
  return TFD_OK;
}

/* ---- images ---- */
static tfd_code cuda_pool(struct tfd_device *d, const tfd_dm_pool *p, tfd_status *st) {
  bool ok = is_float(p->dtype) || p->dtype == TFD_FLOAT16 ||
            (p->max && (p->dtype == TFD_INT32 || p->dtype == TFD_INT64 || p->dtype == TFD_UINT8));
  if (!ok) return tfd_cuda_unimplemented(d, p->max ? "pool (max)" : "pool (average)", p->dtype, st);
  if (p->n < 0 || p->h < 0 || p->w < 0 || p->c < 0 || p->oh < 0 || p->ow < 0 || p->kh < 1 || p->kw < 1 ||
      p->stride[0] < 1 || p->stride[1] < 1)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "%s: cuda pool: negative size, empty window or zero stride",
                           d && d->name ? d->name : "GPU");
  int64_t n = p->n * p->oh * p->ow * p->c;
  if (n == 0) return TFD_OK;
  tfd_cuda_call c;
  if (tfd_cuda_begin(d, "pool", p->dtype, n, &c, st) != TFD_OK) return TFD_INTERNAL;
  LAUNCH(&c, "pool kernel launch", tfd_cuda_pool(&c.l, p), st);
  return TFD_OK;
}

static tfd_code cuda_window_max(struct tfd_device *d, const tfd_dm_window_max *p, tfd_status *st) {
  if (p->dtype != TFD_FLOAT32 && p->dtype != TFD_FLOAT64 && p->dtype != TFD_INT64)
    return tfd_cuda_unimplemented(d, "window_max", p->dtype, st);
  if (p->n < 0 || p->h < 0 || p->w < 0 || p->c < 0 || p->oh < 0 || p->ow < 0 || p->kh < 0 || p->kw < 0)
    return bad_sizes(d, "window_max", st);
  int64_t n = p->n * p->oh * p->ow * p->c;
  if (n == 0) return TFD_OK;
  tfd_cuda_call c;
  if (tfd_cuda_begin(d, "window_max", p->dtype, n, &c, st) != TFD_OK) return TFD_INTERNAL;
  LAUNCH(&c, "window_max kernel launch", tfd_cuda_window_max(&c.l, p), st);
  return TFD_OK;
}

static tfd_code cuda_crop_and_resize(struct tfd_device *d, const tfd_dm_crop *p, tfd_status *st) {
  if (p->dtype != TFD_FLOAT32 && p->dtype != TFD_FLOAT64 && p->dtype != TFD_INT64)
    return tfd_cuda_unimplemented(d, "crop_and_resize", p->dtype, st);
  if (p->n < 0 || p->h <= 0 || p->w <= 0 || p->depth < 0 || p->crop_h <= 0 || p->crop_w <= 0)
    return bad_sizes(d, "crop_and_resize", st);
  int64_t n = p->n * p->crop_h * p->crop_w * p->depth;
  if (n == 0) return TFD_OK;
  tfd_cuda_call c;
  if (tfd_cuda_begin(d, "crop_and_resize", p->dtype, n, &c, st) != TFD_OK) return TFD_INTERNAL;
  LAUNCH(&c, "crop_and_resize kernel launch", tfd_cuda_crop_and_resize(&c.l, p), st);
  return TFD_OK;
}

static tfd_code cuda_image_transform(struct tfd_device *d, const tfd_dm_transform *p, tfd_status *st) {
  if (p->dtype != TFD_FLOAT32 && p->dtype != TFD_FLOAT64 && p->dtype != TFD_INT64)
    return tfd_cuda_unimplemented(d, "image_transform", p->dtype, st);
  if (p->n < 0 || p->h < 0 || p->w < 0 || p->c < 0 || p->oh <= 0 || p->ow <= 0) return bad_sizes(d, "image_transform", st);
  int64_t n = p->n * p->oh * p->ow * p->c;
  if (n == 0) return TFD_OK;
  tfd_cuda_call c;
  if (tfd_cuda_begin(d, "image_transform", p->dtype, n, &c, st) != TFD_OK) return TFD_INTERNAL;
  LAUNCH(&c, "image_transform kernel launch", tfd_cuda_image_transform(&c.l, p), st);
  return TFD_OK;
}

static tfd_code cuda_resize(struct tfd_device *d, const tfd_dm_resize *p, tfd_status *st) {
  tfd_dtype in = p->in_dtype;
  bool real = is_number(in) || in == TFD_UINT8 || in == TFD_FLOAT16;
  if (!real) return tfd_cuda_unimplemented(d, "resize", in, st);
  if (p->bilinear ? p->out_dtype != TFD_FLOAT32 : p->out_dtype != in)
    return tfd_cuda_unimplemented(d, p->bilinear ? "resize (bilinear output)" : "resize (nearest output)", p->out_dtype,
                                  st);
  if (p->n < 0 || p->h < 0 || p->w < 0 || p->c < 0 || p->oh < 0 || p->ow < 0) return bad_sizes(d, "resize", st);
  int64_t n = p->n * p->oh * p->ow * p->c;
  if (n == 0) return TFD_OK;
  if (p->h == 0 || p->w == 0)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "%s: cuda resize: an empty image to a non-empty one",
                           d && d->name ? d->name : "GPU");
  tfd_cuda_call c;
  if (tfd_cuda_begin(d, "resize", in, n, &c, st) != TFD_OK) return TFD_INTERNAL;
  LAUNCH(&c, "resize kernel launch", tfd_cuda_resize(&c.l, p), st);
  return TFD_OK;
}

/* ---- random ---- */
static tfd_code cuda_random(struct tfd_device *d, bool normal, tfd_dtype dt, uint64_t seed, uint64_t counter, void *y,
                            int64_t n, tfd_status *st) {
  if (!is_float(dt)) return tfd_cuda_unimplemented(d, "random", dt, st);
  if (n <= 0) return TFD_OK;
  tfd_cuda_call c;
  if (tfd_cuda_begin(d, "random", dt, n, &c, st) != TFD_OK) return TFD_INTERNAL;
  LAUNCH(&c, "random kernel launch", tfd_cuda_random(&c.l, normal, dt, seed, counter, y, n), st);
  return TFD_OK;
}

static tfd_code cuda_random_ext(struct tfd_device *d, bool truncated, tfd_dtype dt, uint64_t seed, uint64_t base, int64_t lo,
                                uint64_t range, void *y, int64_t n, tfd_status *st) {
  if (truncated ? !is_float(dt) : dt != TFD_INT64) return tfd_cuda_unimplemented(d, "random_ext", dt, st);
  if (n <= 0) return TFD_OK;
  tfd_cuda_call c;
  if (tfd_cuda_begin(d, "random_ext", dt, n, &c, st) != TFD_OK) return TFD_INTERNAL;
  LAUNCH(&c, "random_ext kernel launch", tfd_cuda_random_ext(&c.l, truncated, dt, seed, base, lo, range, y, n), st);
  return TFD_OK;
}

/* ---- step graphs: CUDA graphs made by stream capture (gpu_context.c) ---- */
static tfd_code cuda_capture_begin(struct tfd_device *d, tfd_status *st) {
  tfd_cuda_call c;
  if (tfd_cuda_begin(d, "capture_begin", TFD_FLOAT32, 0, &c, st) != TFD_OK) return TFD_INTERNAL;
  return tfd_gpu_capture_begin(c.ctx, st);
}

static tfd_code cuda_capture_end(struct tfd_device *d, bool abandon, void **graph, tfd_status *st) {
  *graph = NULL;
  tfd_cuda_call c;
  if (tfd_cuda_begin(d, "capture_end", TFD_FLOAT32, 0, &c, st) != TFD_OK) return TFD_INTERNAL;
  return tfd_gpu_capture_end(c.ctx, abandon, graph, st);
}

static tfd_code cuda_graph_launch(struct tfd_device *d, void *graph, tfd_status *st) {
  tfd_cuda_call c;
  if (tfd_cuda_begin(d, "graph_launch", TFD_FLOAT32, 0, &c, st) != TFD_OK) return TFD_INTERNAL;
  return tfd_gpu_graph_launch(c.ctx, graph, st);
}

static void cuda_graph_free(struct tfd_device *d, void *graph) {
  tfd_gpu_graph_free(((tfd_gpu_device *)d)->ctx, graph);
}

const tfd_device_math tfd_cuda_device_math = {
    .name = tfd_cuda_math_name,
    .unary = cuda_unary,
    .binary = cuda_binary,
    .select = cuda_select,
    .cast = cuda_cast,
    .add_n = cuda_add_n,
    .copy_walk = cuda_copy_walk,
    .fill = cuda_fill,
    .range = cuda_range,
    .tile = cuda_tile,
    .mirror_pad = cuda_mirror_pad,
    .gather = cuda_gather,
    .gather_nd = cuda_gather_nd,
    .reduce = cuda_reduce,
    .scan = cuda_scan,
    .search_sorted = cuda_search_sorted,
    .multinomial = cuda_multinomial,
    .scatter_rows = cuda_scatter_rows,
    .arg_reduce = cuda_arg_reduce,
    .softmax = cuda_softmax,
    .top_k = cuda_top_k,
    .batch_norm = cuda_batch_norm,
    .matmul = tfd_cuda_matmul,
    .conv2d = tfd_cuda_conv2d,
    .release_packed = tfd_cuda_conv_release_packed,
    .pool = cuda_pool,
    .resize = cuda_resize,
    .window_max = cuda_window_max,
    .crop_and_resize = cuda_crop_and_resize,
    .image_transform = cuda_image_transform,
    .random = cuda_random,
    .random_ext = cuda_random_ext,
    .capture_begin = cuda_capture_begin,
    .capture_end = cuda_capture_end,
    .graph_launch = cuda_graph_launch,
    .graph_free = cuda_graph_free,
};
