/* Device kernels of SparseFillEmptyRows and SparseReshape (k_sparse_fill.c is the reference for both).
 *
 * SparseFillEmptyRows composes TensorFlow's GPU algorithm from the math's entries: each entry's row
 * (column 0 of its index) is counted per row by a summing scatter; a row with no entry is empty and
 * gets one; an exclusive Cumsum of the rows' sizes places the rows. Entries keep their order within a
 * row (the CPU's loop goes through them in order) whatever the input's order: a stable sort by row
 * (top_k of the negated rows: ties to the lower position) numbers them, and entry j's place is its
 * rank plus the empty rows before its row. Entries and the empty rows' (row, 0, ...) with the default
 * value are scattered into one spare row past the end, which the outputs leave off. Two numbers go to
 * the host: the smallest and largest row (out of range: the CPU kernel runs, for its error text) and
 * the output's length. Malformed shapes, empty inputs and values in host memory run the CPU kernel on
 * the host. */
#include <string.h>

#include "../../core/tensor_internal.h"
#include "../device_kernel.h"
#include "../kernel_shared.h"

/* ---- SparseFillEmptyRows ---- */
enum { F_ROW, F_MINMAX, F_HOST_MINMAX, F_ONES, F_COUNT, F_FILL, F_SIZE, F_START, F_TOTAL, F_HOST_TOTAL, F_NEG, F_SORTED,
       F_PERM, F_EMPTY_BEFORE, F_EB_SORTED, F_POS, F_IX_FULL, F_VALS_FULL, F_SLOT, F_ROW_IDS, F_EMPTY_IX, F_DEFAULTS,
       F_ZERO, F_MINUS_ONE, F_TOTAL_SCALAR, F_TEMPS };

/* Whether the inputs are what the device path takes: the CPU kernel's shapes and dtypes, entries,
 * rows, and values in the device's memory. Anything else (errors included) runs the CPU kernel. */
static bool fill_on_device(tfd_kernel *k, tfd_kernel_context *c, int64_t *rows) {
  tfd_tensor *ix = c->inputs[0], *vals = c->inputs[1], *shape = c->inputs[2], *def = c->inputs[3];
  if (tfd_tensor_dtype(ix) != TFD_INT64 || tfd_tensor_dtype(shape) != TFD_INT64 || tfd_tensor_ndims(ix) != 2 ||
      tfd_tensor_ndims(vals) != 1 || tfd_tensor_ndims(shape) != 1 || tfd_tensor_ndims(def) != 0 ||
      tfd_tensor_numel(shape) == 0 || tfd_tensor_dtype(def) != tfd_tensor_dtype(vals) ||
      tfd_tensor_dim(ix, 0) != tfd_tensor_dim(vals, 0) || tfd_tensor_dim(ix, 0) == 0 || tfd_tensor_dim(ix, 1) == 0 ||
      !tfd_dk_lives_on_device(c->device, tfd_tensor_dtype(vals)) || tfd_tensor_dtype(vals) == TFD_STRING)
    return false;
  tfd_tensor *h = tfd_kernel_host_input(c, k, 2);
  if (!h) return false;
  *rows = ((const int64_t *)tfd_tensor_const_data(h))[0];
  tfd_tensor_unref(h);
  return *rows > 0;
}

static void k_fill_empty_rows(tfd_kernel *k, tfd_kernel_context *c) {
  int64_t rows = 0;
  if (!fill_on_device(k, c, &rows)) {
    if (tfd_status_code(c->status) == TFD_OK) tfd_dk_run_on_host(k, c);
    return;
  }
  const tfd_device_math *m = tfd_dk_math(k, c);
  if (!m) return;
  tfd_tensor *ix = c->inputs[0], *vals = c->inputs[1], *def = c->inputs[3], *t[F_TEMPS] = {0};
  tfd_dtype dt = tfd_tensor_dtype(vals);
  size_t es = tfd_dtype_size(dt);
  int64_t n = tfd_tensor_dim(ix, 0), rank = tfd_tensor_dim(ix, 1), two = 2, one = 1, zero = 0, minus_one = -1;
  tfd_status st = TFD_STATUS_INIT;
#define D(name, type, ...) (t[name] = tfd_dk_alloc_device(c, k, type, (int64_t[]){__VA_ARGS__}, \
                                                        (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t))))
#define P(name) tfd_tensor_data(t[name])
#define CP(name) tfd_tensor_const_data(t[name])
  /* each entry's row, and the smallest and largest on the host */
  bool ok = D(F_ROW, TFD_INT64, n) && D(F_MINMAX, TFD_INT64, two) && tfd_dk_copy_flat(k, c, m, 8, tfd_tensor_const_data(ix),
                                                                                      rank, P(F_ROW), n) &&
            tfd_dk_ok(k, c, m->reduce(c->device, TFD_DM_MIN, TFD_INT64, CP(F_ROW), 1, n, 1, P(F_MINMAX), &st), &st) &&
            tfd_dk_ok(k, c, m->reduce(c->device, TFD_DM_MAX, TFD_INT64, CP(F_ROW), 1, n, 1, (int64_t *)P(F_MINMAX) + 1, &st),
                      &st) &&
            (t[F_HOST_MINMAX] = tfd_dk_move(c, k, t[F_MINMAX], NULL));
  if (ok) {
    const int64_t *mm = tfd_tensor_const_data(t[F_HOST_MINMAX]);
    if (mm[0] < 0 || mm[1] >= rows) { /* the CPU kernel names the first bad entry */
      for (int i = 0; i < F_TEMPS; i++) tfd_tensor_unref(t[i]);
      tfd_dk_run_on_host(k, c);
      return;
    }
  }
  /* per row: its entries, whether it is empty, its size in the output, where it starts; the total */
  tfd_tensor *empty = ok ? tfd_dk_alloc(c, k, TFD_BOOL, &rows, 1) : NULL;
  ok = empty && D(F_ONES, TFD_INT64, n) && D(F_COUNT, TFD_INT64, rows) && D(F_FILL, TFD_INT64, rows) &&
       D(F_SIZE, TFD_INT64, rows) && D(F_START, TFD_INT64, rows) && D(F_TOTAL, TFD_INT64, one) &&
       (t[F_ZERO] = tfd_dk_scalar(c, k, m, TFD_INT64, &zero)) &&
       (t[F_MINUS_ONE] = tfd_dk_scalar(c, k, m, TFD_INT64, &minus_one)) &&
       tfd_dk_ok(k, c, m->fill(c->device, 8, &one, P(F_ONES), n, &st), &st) &&
       tfd_dk_ok(k, c, m->fill(c->device, 8, &zero, P(F_COUNT), rows, &st), &st) &&
       tfd_dk_ok(k, c, m->scatter_rows(c->device, true, TFD_INT64, 8, CP(F_ONES), CP(F_ROW), n, 1, P(F_COUNT), &st), &st) &&
       tfd_dk_binary_flat(k, c, m, TFD_DM_EQUAL, TFD_INT64, CP(F_COUNT), CP(F_ZERO), true, tfd_tensor_data(empty), rows) &&
       tfd_dk_ok(k, c, m->cast(c->device, TFD_BOOL, TFD_INT64, tfd_tensor_const_data(empty), P(F_FILL), rows, &st), &st) &&
       tfd_dk_binary_flat(k, c, m, TFD_DM_ADD, TFD_INT64, CP(F_COUNT), CP(F_FILL), false, P(F_SIZE), rows) &&
       tfd_dk_ok(k, c, m->scan(c->device, false, true, false, TFD_INT64, CP(F_SIZE), 1, rows, 1, P(F_START), &st), &st) &&
       tfd_dk_ok(k, c, m->reduce(c->device, TFD_DM_SUM, TFD_INT64, CP(F_SIZE), 1, rows, 1, P(F_TOTAL), &st), &st) &&
       (t[F_HOST_TOTAL] = tfd_dk_move(c, k, t[F_TOTAL], NULL));
  int64_t total = ok ? *(const int64_t *)tfd_tensor_const_data(t[F_HOST_TOTAL]) : 0;
  /* entry j's place: its rank in a stable sort by row plus the empty rows before its row */
  tfd_tensor *reverse = ok ? tfd_dk_alloc(c, k, TFD_INT64, &n, 1) : NULL;
  ok = reverse && D(F_NEG, TFD_INT64, n) && D(F_SORTED, TFD_INT64, n) && D(F_PERM, TFD_INT64, n) &&
       D(F_EMPTY_BEFORE, TFD_INT64, rows) && D(F_EB_SORTED, TFD_INT64, n) && D(F_POS, TFD_INT64, n) &&
       tfd_dk_binary_flat(k, c, m, TFD_DM_MUL, TFD_INT64, CP(F_ROW), CP(F_MINUS_ONE), true, P(F_NEG), n) &&
       tfd_dk_ok(k, c, m->top_k(c->device, TFD_INT64, CP(F_NEG), 1, n, n, P(F_SORTED), TFD_INT64, P(F_PERM), &st), &st) &&
       tfd_dk_binary_flat(k, c, m, TFD_DM_MUL, TFD_INT64, CP(F_SORTED), CP(F_MINUS_ONE), true, P(F_SORTED), n) &&
       tfd_dk_ok(k, c, m->scan(c->device, false, true, false, TFD_INT64, CP(F_FILL), 1, rows, 1, P(F_EMPTY_BEFORE), &st),
                 &st) &&
       tfd_dk_ok(k, c, m->gather(c->device, CP(F_EMPTY_BEFORE), CP(F_SORTED), TFD_INT64, 1, 1, rows, n, 8, P(F_EB_SORTED), &st),
                 &st) &&
       tfd_dk_ok(k, c, m->range(c->device, TFD_INT64, 0, 1, P(F_POS), n, &st), &st) &&
       tfd_dk_binary_flat(k, c, m, TFD_DM_ADD, TFD_INT64, CP(F_POS), CP(F_EB_SORTED), false, P(F_POS), n) &&
       tfd_dk_ok(k, c, m->scatter_rows(c->device, false, TFD_INT64, 8, CP(F_POS), CP(F_PERM), n, 1, tfd_tensor_data(reverse),
                                       &st), &st);
  /* the entries, then each empty row's (row, 0, ...) and the default, into total + 1 rows */
  int64_t full = total + 1, dims2[2] = {total, rank};
  tfd_tensor *out_ix = ok ? tfd_dk_alloc(c, k, TFD_INT64, dims2, 2) : NULL;
  tfd_tensor *out_vals = out_ix ? tfd_dk_alloc(c, k, dt, &total, 1) : NULL;
  ok = out_vals && D(F_IX_FULL, TFD_INT64, full, rank) && D(F_VALS_FULL, dt, full) && D(F_SLOT, TFD_INT64, rows) &&
       D(F_ROW_IDS, TFD_INT64, rows) && D(F_EMPTY_IX, TFD_INT64, rows, rank) && D(F_DEFAULTS, dt, rows) &&
       (t[F_TOTAL_SCALAR] = tfd_dk_scalar(c, k, m, TFD_INT64, &total)) &&
       tfd_dk_ok(k, c, m->scatter_rows(c->device, false, TFD_INT64, 8, tfd_tensor_const_data(ix), tfd_tensor_const_data(reverse),
                                       n, rank, P(F_IX_FULL), &st), &st) &&
       tfd_dk_ok(k, c, m->scatter_rows(c->device, false, dt, es, tfd_tensor_const_data(vals), tfd_tensor_const_data(reverse), n,
                                       1, P(F_VALS_FULL), &st), &st);
  if (ok) {
    int64_t strides[3][TFD_MAX_DIMS] = {{1}, {1}, {0}};
    tfd_dm_walk w;
    tfd_dk_walk(&w, 1, &rows, 3, strides, NULL);
    ok = tfd_dk_ok(k, c, m->select(c->device, 8, tfd_tensor_const_data(empty), CP(F_START), CP(F_TOTAL_SCALAR), P(F_SLOT), &w,
                                   &st), &st);
  }
  ok = ok && tfd_dk_ok(k, c, m->fill(c->device, 8, &zero, P(F_EMPTY_IX), rows * rank, &st), &st) &&
       tfd_dk_ok(k, c, m->range(c->device, TFD_INT64, 0, 1, P(F_ROW_IDS), rows, &st), &st);
  if (ok) { /* column 0 of the empty rows' indices: the row */
    int64_t strides[2][TFD_MAX_DIMS] = {{1}, {rank}};
    tfd_dm_walk w;
    tfd_dk_walk(&w, 1, &rows, 2, strides, NULL);
    ok = tfd_dk_ok(k, c, m->copy_walk(c->device, 8, CP(F_ROW_IDS), P(F_EMPTY_IX), &w, &st), &st);
  }
  ok = ok && tfd_dk_copy_flat(k, c, m, es, tfd_tensor_const_data(def), 0, P(F_DEFAULTS), rows) &&
       tfd_dk_ok(k, c, m->scatter_rows(c->device, false, TFD_INT64, 8, CP(F_EMPTY_IX), CP(F_SLOT), rows, rank, P(F_IX_FULL),
                                       &st), &st) &&
       tfd_dk_ok(k, c, m->scatter_rows(c->device, false, dt, es, CP(F_DEFAULTS), CP(F_SLOT), rows, 1, P(F_VALS_FULL), &st),
                 &st) &&
       tfd_dk_copy_flat(k, c, m, 8, CP(F_IX_FULL), 1, tfd_tensor_data(out_ix), total * rank) &&
       tfd_dk_copy_flat(k, c, m, es, CP(F_VALS_FULL), 1, tfd_tensor_data(out_vals), total);
#undef D
#undef P
#undef CP
  for (int i = 0; i < F_TEMPS; i++) tfd_tensor_unref(t[i]);
  if (ok) {
    c->outputs[0] = out_ix;
    c->outputs[1] = out_vals;
    c->outputs[2] = empty;
    c->outputs[3] = reverse;
  } else {
    tfd_tensor_unref(out_ix);
    tfd_tensor_unref(out_vals);
    tfd_tensor_unref(empty);
    tfd_tensor_unref(reverse);
  }
}

/* ---- SparseReshape: the plan on the host (k_sparse_fill.c's checks), then each entry's linear position
 * (the sum of its coordinates times the input's strides, wrapping as the CPU's) divided back out by the
 * output's strides, truncating as the CPU's / and %. ---- */
static void k_sparse_reshape(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_device_math *m = tfd_dk_math(k, c);
  if (!m) return;
  tfd_tensor *ix = c->inputs[0];
  tfd_tensor *in_shape = tfd_kernel_host_input(c, k, 1), *new_shape = in_shape ? tfd_kernel_host_input(c, k, 2) : NULL;
  tfd_sparse_reshape p;
  bool ok = new_shape && tfd_sparse_reshape_plan(c, k, ix, in_shape, new_shape, &p);
  tfd_tensor_unref(in_shape);
  tfd_tensor_unref(new_shape);
  if (!ok) return;
  if (p.same) { /* TensorFlow hands its inputs on */
    c->outputs[0] = tfd_tensor_ref(ix);
    c->outputs[1] = tfd_tensor_ref(c->inputs[1]);
    return;
  }
  tfd_status st = TFD_STATUS_INIT;
  tfd_tensor *host = tfd_tensor_make_from_bytes(NULL, TFD_INT64, &p.out_rank, 1, p.out_dims,
                                           (size_t)p.out_rank * sizeof *p.out_dims, &st);
  if (!host) {
    tfd_dk_ok(k, c, tfd_status_code(&st), &st);
    return;
  }
  tfd_tensor *oshape = tfd_dk_to_home(c, k, host);
  tfd_tensor_unref(host);
  int64_t d2[2] = {p.nnz, p.out_rank};
  tfd_tensor *oix = oshape ? tfd_dk_alloc(c, k, TFD_INT64, d2, 2) : NULL;
  tfd_tensor *at = oix && p.nnz ? tfd_dk_alloc_device(c, k, TFD_INT64, &p.nnz, 1) : NULL;
  tfd_tensor *tmp = at ? tfd_dk_alloc_device(c, k, TFD_INT64, &p.nnz, 1) : NULL;
  ok = oix && (p.nnz == 0 || tmp);
  const int64_t *src = tfd_tensor_const_data(ix);
  for (int64_t j = 0; ok && p.nnz && j < p.in_rank; j++) { /* at += ix[:, j] * in_stride[j] */
    tfd_tensor *s = tfd_dk_scalar(c, k, m, TFD_INT64, &p.in_stride[j]);
    int64_t strides[2][TFD_MAX_DIMS] = {{p.in_rank}, {0}}, offsets[2] = {j, 0};
    tfd_dm_walk w;
    tfd_dk_walk(&w, 1, &p.nnz, 2, strides, offsets);
    ok = s && tfd_dk_ok(k, c, m->binary(c->device, TFD_DM_MUL, TFD_INT64, src, tfd_tensor_const_data(s),
                                        tfd_tensor_data(j ? tmp : at), &w, &st), &st);
    ok = ok && (j == 0 || tfd_dk_binary_flat(k, c, m, TFD_DM_ADD, TFD_INT64, tfd_tensor_const_data(at),
                                             tfd_tensor_const_data(tmp), false, tfd_tensor_data(at), p.nnz));
    tfd_tensor_unref(s);
  }
  if (ok && p.nnz && p.in_rank == 0) { /* no coordinates: every entry is at 0 */
    int64_t zero = 0;
    ok = tfd_dk_ok(k, c, m->fill(c->device, 8, &zero, tfd_tensor_data(at), p.nnz, &st), &st);
  }
  for (int64_t j = 0; ok && p.nnz && j < p.out_rank; j++) { /* oix[:, j] = at / out_stride[j]; at %= out_stride[j] */
    tfd_tensor *s = tfd_dk_scalar(c, k, m, TFD_INT64, &p.out_stride[j]);
    ok = s && tfd_dk_binary_flat(k, c, m, TFD_DM_DIV, TFD_INT64, tfd_tensor_const_data(at), tfd_tensor_const_data(s), true,
                                 tfd_tensor_data(tmp), p.nnz);
    int64_t strides[2][TFD_MAX_DIMS] = {{1}, {p.out_rank}}, offsets[2] = {0, j};
    tfd_dm_walk w;
    tfd_dk_walk(&w, 1, &p.nnz, 2, strides, offsets);
    ok = ok && tfd_dk_ok(k, c, m->copy_walk(c->device, 8, tfd_tensor_const_data(tmp), tfd_tensor_data(oix), &w, &st), &st);
    ok = ok && tfd_dk_binary_flat(k, c, m, TFD_DM_MOD, TFD_INT64, tfd_tensor_const_data(at), tfd_tensor_const_data(s), true,
                                  tfd_tensor_data(at), p.nnz);
    tfd_tensor_unref(s);
  }
  tfd_tensor_unref(at);
  tfd_tensor_unref(tmp);
  if (ok) {
    c->outputs[0] = oix;
    c->outputs[1] = oshape;
  } else {
    tfd_tensor_unref(oix);
    tfd_tensor_unref(oshape);
  }
}

tfd_code tfd_dk_setup_sparse_fill(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  bool reshape = strcmp(init->op->name, "SparseReshape") == 0;
  return tfd_dk_setup_either(k, init, tfd_setup_sparse_fill, true, reshape ? k_sparse_reshape : k_fill_empty_rows, st);
}
