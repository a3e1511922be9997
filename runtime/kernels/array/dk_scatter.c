/* Device kernels of ScatterNd, TensorScatterUpdate, LowerBound, UpperBound (k_scatter.c), SparseToDense, Where
 * (k_where.c), the sparse segment reductions (k_sparse_segment.c) and Bincount (k_count_norm.c): the indices are
 * checked on the host and turned into output rows by scatter_logic.h's plan, as the CPU kernels do, and those
 * rows go to the device for the math's scatter_rows: ScatterNd sums its updates into zeros (float32, float64,
 * int64; other dtypes run the CPU kernel on the host), TensorScatterUpdate writes them over a copy of
 * its tensor (any dtype by size; int32 lives on the host). Repeated indices end as on TensorFlow's
 * GPUs: sums in any order, one write winning. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/tensor_internal.h"
#include "../device_kernel.h"
#include "../device_math_elem.h"
#include "../kernel_shared.h"
#include "scatter_logic.h"

/* The plan's rows in device memory; NULL with the error reported. */
static tfd_tensor *device_slots(tfd_kernel_context *c, const tfd_kernel *k, const tfd_scatter_plan *p) {
  return tfd_dk_int64s_to_device(c, k, p->slots, p->n);
}

static void k_scatter(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_device_math *m = tfd_dk_math(k, c);
  if (!m) return;
  bool add = k->dk_op == 0;
  tfd_scatter_plan p;
  if (!(add ? tfd_scatter_nd_plan(c, k, &p) : tfd_tensor_scatter_plan(c, k, &p))) return;
  tfd_tensor *upd = c->inputs[add ? 1 : 2];
  tfd_dtype dt = tfd_tensor_dtype(upd);
  size_t es = tfd_dtype_size(dt);
  tfd_tensor *out = tfd_dk_alloc(c, k, dt, p.dims, p.nd), *slots = NULL;
  int64_t total = out ? tfd_tensor_numel(out) : 0;
  tfd_status st = TFD_STATUS_INIT;
  bool ok = out != NULL;
  if (ok && total > 0) {
    unsigned char zero[16] = {0};
    ok = add ? tfd_dk_ok(k, c, m->fill(c->device, es, zero, tfd_tensor_data(out), total, &st), &st)
             : tfd_dk_copy_flat(k, c, m, es, tfd_tensor_const_data(c->inputs[0]), 1, tfd_tensor_data(out), total);
  }
  if (ok && p.n > 0 && (ok = (slots = device_slots(c, k, &p)) != NULL))
    ok = tfd_dk_ok(k, c, m->scatter_rows(c->device, add, dt, es, tfd_tensor_const_data(upd), tfd_tensor_const_data(slots), p.n,
                                         p.slice, tfd_tensor_data(out), &st), &st);
  tfd_tensor_unref(slots);
  tfd_scatter_plan_free(&p);
  if (ok) c->outputs[0] = out;
  else tfd_tensor_unref(out);
}

/* ---- SparseToDense: the default everywhere (a stride-0 copy of the scalar), then the values (a
 * scalar one spread over n rows first) scattered to their offsets ---- */
static void k_sparse_to_dense(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_device_math *m = tfd_dk_math(k, c);
  if (!m) return;
  tfd_scatter_plan p;
  if (!tfd_sparse_to_dense_plan(c, k, &p)) return;
  tfd_tensor *vals = c->inputs[2], *spread = NULL, *slots = NULL;
  tfd_dtype dt = tfd_tensor_dtype(vals);
  size_t es = tfd_dtype_size(dt);
  tfd_tensor *out = tfd_dk_alloc(c, k, dt, p.dims, p.nd);
  int64_t total = out ? tfd_tensor_numel(out) : 0;
  tfd_status st = TFD_STATUS_INIT;
  bool ok = out != NULL;
  ok = ok && tfd_dk_copy_flat(k, c, m, es, tfd_tensor_const_data(c->inputs[3]), 0, tfd_tensor_data(out), total);
  const void *x = tfd_tensor_const_data(vals);
  if (ok && p.n > 0 && tfd_tensor_ndims(vals) == 0) {
    ok = (spread = tfd_dk_alloc_device(c, k, dt, &p.n, 1)) != NULL &&
         tfd_dk_copy_flat(k, c, m, es, x, 0, tfd_tensor_data(spread), p.n);
    if (ok) x = tfd_tensor_const_data(spread);
  }
  if (ok && p.n > 0 && total > 0 && (ok = (slots = device_slots(c, k, &p)) != NULL))
    ok = tfd_dk_ok(k, c, m->scatter_rows(c->device, false, dt, es, x, tfd_tensor_const_data(slots), p.n, 1,
                                         tfd_tensor_data(out), &st), &st);
  tfd_tensor_unref(spread);
  tfd_tensor_unref(slots);
  tfd_scatter_plan_free(&p);
  if (ok) c->outputs[0] = out;
  else tfd_tensor_unref(out);
}

tfd_code tfd_dk_setup_sparse_to_dense(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  return tfd_dk_setup_either(k, init, tfd_setup_sparse_to_dense, tfd_dk_lives_on_device(init->device, k->T), k_sparse_to_dense,
                             st);
}

/* ---- Where: a compaction by the same scatter. Element i is true when x[i] != 0 (cast to bool, so
 * NaN is true and -0 false, as the CPU kernel's test); the true ones are numbered by an exclusive
 * Cumsum of the flags, the false ones sent to one spare row past the count; each element's
 * coordinates (iota div stride mod dim, per axis) are scattered to its row, and the rows before the
 * spare one are the output, in row-major order as TensorFlow's. The count goes to the host once. ---- */
typedef struct where_temps {
  tfd_tensor *flag, *flag64, *slot, *coords, *col, *iota, *rows, *sum, *host_sum, *scalar[3];
} where_temps;

static void where_free(where_temps *t) {
  tfd_tensor *all[] = {t->flag, t->flag64, t->slot, t->coords, t->col, t->iota, t->rows, t->sum, t->host_sum,
                       t->scalar[0], t->scalar[1], t->scalar[2]};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) tfd_tensor_unref(all[i]);
}

static void k_where(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_device_math *m = tfd_dk_math(k, c);
  if (!m) return;
  const tfd_tensor *in = c->inputs[0];
  tfd_dtype dt = tfd_tensor_dtype(in);
  int nd = tfd_tensor_ndims(in);
  int64_t n = tfd_tensor_numel(in), count = 0, one = 1, dims[TFD_MAX_DIMS];
  for (int d = 0; d < nd; d++) dims[d] = tfd_tensor_dim(in, d);
  where_temps t = {0};
  tfd_status st = TFD_STATUS_INIT;
  bool ok = true;
  if (n > 0) { /* the flags, as bool and int64, and their count on the host */
    t.flag = dt == TFD_BOOL ? tfd_tensor_ref((tfd_tensor *)in) : tfd_dk_alloc_device(c, k, TFD_BOOL, &n, 1);
    ok = t.flag && (dt == TFD_BOOL || tfd_dk_ok(k, c, m->cast(c->device, dt, TFD_BOOL, tfd_tensor_const_data(in),
                                                               tfd_tensor_data(t.flag), n, &st), &st));
    ok = ok && (t.flag64 = tfd_dk_alloc_device(c, k, TFD_INT64, &n, 1)) &&
         tfd_dk_ok(k, c, m->cast(c->device, TFD_BOOL, TFD_INT64, tfd_tensor_const_data(t.flag), tfd_tensor_data(t.flag64), n,
                                 &st), &st);
    ok = ok && (t.sum = tfd_dk_alloc_device(c, k, TFD_INT64, &one, 1)) &&
         tfd_dk_ok(k, c, m->reduce(c->device, TFD_DM_SUM, TFD_INT64, tfd_tensor_const_data(t.flag64), 1, n, 1,
                                   tfd_tensor_data(t.sum), &st), &st);
    /* host memory: where int32 lives */
    ok = ok && (t.host_sum = tfd_dk_move(c, k, t.sum, tfd_kernel_memory_for(c->device, TFD_INT32)));
    if (ok) count = *(const int64_t *)tfd_tensor_const_data(t.host_sum);
  }
  int64_t odims[2] = {count, nd};
  tfd_tensor *out = ok ? tfd_dk_alloc(c, k, TFD_INT64, odims, 2) : NULL;
  ok = out != NULL;
  if (ok && count > 0 && nd > 0) {
    /* rows: the exclusive Cumsum of the flags where true, count where false */
    t.scalar[0] = tfd_dk_scalar(c, k, m, TFD_INT64, &count);
    ok = t.scalar[0] && (t.rows = tfd_dk_alloc_device(c, k, TFD_INT64, &n, 1)) &&
         (t.slot = tfd_dk_alloc_device(c, k, TFD_INT64, &n, 1)) &&
         tfd_dk_ok(k, c, m->scan(c->device, false, true, false, TFD_INT64, tfd_tensor_const_data(t.flag64), 1, n, 1,
                                 tfd_tensor_data(t.rows), &st), &st);
    if (ok) {
      int64_t strides[3][TFD_MAX_DIMS] = {{1}, {1}, {0}};
      tfd_dm_walk w;
      tfd_dk_walk(&w, 1, &n, 3, strides, NULL);
      ok = tfd_dk_ok(k, c, m->select(c->device, 8, tfd_tensor_const_data(t.flag), tfd_tensor_const_data(t.rows),
                                     tfd_tensor_const_data(t.scalar[0]), tfd_tensor_data(t.slot), &w, &st), &st);
    }
    /* coordinates [n, nd]: column d is (i / stride_d) mod dims[d] */
    int64_t cdims[2] = {n, nd};
    ok = ok && (t.coords = tfd_dk_alloc_device(c, k, TFD_INT64, cdims, 2)) && (t.iota = tfd_dk_alloc_device(c, k, TFD_INT64, &n, 1)) &&
         (t.col = tfd_dk_alloc_device(c, k, TFD_INT64, &n, 1)) &&
         tfd_dk_ok(k, c, m->range(c->device, TFD_INT64, 0, 1, tfd_tensor_data(t.iota), n, &st), &st);
    int64_t stride = 1;
    for (int d = nd - 1; d >= 0 && ok; d--) {
      const void *src = tfd_tensor_const_data(t.iota);
      tfd_tensor_unref(t.scalar[1]), tfd_tensor_unref(t.scalar[2]);
      t.scalar[1] = tfd_dk_scalar(c, k, m, TFD_INT64, &stride);
      t.scalar[2] = t.scalar[1] ? tfd_dk_scalar(c, k, m, TFD_INT64, &dims[d]) : NULL;
      ok = t.scalar[2] != NULL;
      if (ok && stride > 1) {
        ok = tfd_dk_binary_flat(k, c, m, TFD_DM_FLOOR_DIV, TFD_INT64, src, tfd_tensor_const_data(t.scalar[1]), true,
                                tfd_tensor_data(t.col), n);
        src = tfd_tensor_const_data(t.col);
      }
      if (ok && d > 0) {
        ok = tfd_dk_binary_flat(k, c, m, TFD_DM_FLOOR_MOD, TFD_INT64, src, tfd_tensor_const_data(t.scalar[2]), true,
                                tfd_tensor_data(t.col), n);
        src = tfd_tensor_const_data(t.col);
      }
      int64_t strides[2][TFD_MAX_DIMS] = {{1}, {nd}}, offsets[2] = {0, d};
      tfd_dm_walk w;
      tfd_dk_walk(&w, 1, &n, 2, strides, offsets);
      ok = ok && tfd_dk_ok(k, c, m->copy_walk(c->device, 8, src, tfd_tensor_data(t.coords), &w, &st), &st);
      stride *= dims[d];
    }
    /* scattered into count + 1 rows (the last one takes the false elements), the first count kept */
    int64_t fdims[2] = {count + 1, nd};
    tfd_tensor *full = ok ? tfd_dk_alloc_device(c, k, TFD_INT64, fdims, 2) : NULL;
    ok = full && tfd_dk_ok(k, c, m->scatter_rows(c->device, false, TFD_INT64, 8, tfd_tensor_const_data(t.coords),
                                                 tfd_tensor_const_data(t.slot), n, nd, tfd_tensor_data(full), &st), &st);
    ok = ok && tfd_dk_copy_flat(k, c, m, 8, tfd_tensor_const_data(full), 1, tfd_tensor_data(out), count * nd);
    tfd_tensor_unref(full);
  }
  where_free(&t);
  if (ok) c->outputs[0] = out;
  else tfd_tensor_unref(out);
}

tfd_code tfd_dk_setup_where(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  return tfd_dk_setup_either(k, init, tfd_setup_where, tfd_dk_lives_on_device(init->device, k->T), k_where, st);
}

/* ---- SparseSegmentSum/Mean/SqrtN(WithNumSegments): the plan (k_sparse_segment.c's checks, on host
 * copies of the indices and ids), the data rows gathered in index order, summed into zeros at their
 * segments' rows by scatter_rows, and Mean and SqrtN's rows divided by their count or its root. The
 * sums run in any order on a real GPU, as TensorFlow's GPU kernel's atomic adds do. ---- */
static void k_sparse_segment(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_device_math *m = tfd_dk_math(k, c);
  if (!m) return;
  tfd_tensor *data = c->inputs[0], *host[3] = {NULL, NULL, NULL}, *idx = NULL, *rows = NULL, *slots = NULL,
             *div = NULL, *hdiv = NULL;
  bool with_num = k->keep_dims, ok = true;
  for (int i = 0; ok && i < (with_num ? 3 : 2); i++) ok = (host[i] = tfd_kernel_host_input(c, k, i + 1)) != NULL;
  tfd_scatter_plan p = {0};
  ok = ok && tfd_sparse_segment_plan(c, k, data, host[0], host[1], host[2], &p);
  tfd_dtype dt = tfd_tensor_dtype(data);
  size_t es = tfd_dtype_size(dt);
  tfd_tensor *out = ok ? tfd_dk_alloc(c, k, dt, p.dims, p.nd) : NULL;
  int64_t total = out ? tfd_tensor_numel(out) : 0, gdims[2] = {p.n, p.slice};
  tfd_status st = TFD_STATUS_INIT;
  ok = out != NULL;
  unsigned char zero[16] = {0};
  if (ok && total > 0) ok = tfd_dk_ok(k, c, m->fill(c->device, es, zero, tfd_tensor_data(out), total, &st), &st);
  if (ok && p.n > 0 && p.slice > 0) {
    ok = (idx = tfd_dk_to_device(c, k, host[0])) && (rows = tfd_dk_alloc_device(c, k, dt, gdims, 2)) &&
         tfd_dk_ok(k, c, m->gather(c->device, tfd_tensor_const_data(data), tfd_tensor_const_data(idx),
                                   tfd_tensor_dtype(idx), 1, 1, tfd_tensor_dim(data, 0), p.n, (size_t)p.slice * es,
                                   tfd_tensor_data(rows), &st), &st);
    ok = ok && (slots = device_slots(c, k, &p)) &&
         tfd_dk_ok(k, c, m->scatter_rows(c->device, true, dt, es, tfd_tensor_const_data(rows), tfd_tensor_const_data(slots),
                                         p.n, p.slice, tfd_tensor_data(out), &st), &st);
  }
  if (ok && (k->code & 3) != 0 && p.n > 0 && total > 0) { /* Mean, SqrtN: each row over its count (1 when empty) */
    ok = (hdiv = tfd_tensor_make(NULL, dt, p.dims, p.nd, NULL)) != NULL;
    if (!ok) tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory");
    int64_t segs = total / p.slice, *count = ok ? calloc((size_t)segs, sizeof *count) : NULL;
    if (ok && !count) {
      tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory");
      ok = false;
    }
    for (int64_t j = 0; ok && j < p.n; j++) count[p.slots[j]]++;
    for (int64_t r = 0; ok && r < segs; r++) {
      double n = count[r] > 1 ? (k->code & 3) == 1 ? (double)count[r] : sqrt((double)count[r]) : 1.0;
      for (int64_t e = r * p.slice; e < (r + 1) * p.slice; e++) {
        if (dt == TFD_FLOAT32) ((float *)tfd_tensor_data(hdiv))[e] = (float)n;
        else ((double *)tfd_tensor_data(hdiv))[e] = n;
      }
    }
    free(count);
    ok = ok && (div = tfd_dk_to_device(c, k, hdiv)) &&
         tfd_dk_binary_flat(k, c, m, TFD_DM_DIV, dt, tfd_tensor_const_data(out), tfd_tensor_const_data(div), false,
                            tfd_tensor_data(out), total);
  }
  for (int i = 0; i < 3; i++) tfd_tensor_unref(host[i]);
  tfd_tensor_unref(idx), tfd_tensor_unref(rows), tfd_tensor_unref(slots), tfd_tensor_unref(div), tfd_tensor_unref(hdiv);
  tfd_scatter_plan_free(&p);
  if (ok) c->outputs[0] = out;
  else tfd_tensor_unref(out);
}

tfd_code tfd_dk_setup_sparse_segment(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  bool sum = strstr(init->op->name, "Sum") != NULL;
  bool on_device = sum ? tfd_dk_arith_dtype(k->T) : k->T == TFD_FLOAT32 || k->T == TFD_FLOAT64;
  return tfd_dk_setup_either(k, init, tfd_setup_sparse_segment, on_device, k_sparse_segment, st);
}

/* ---- Bincount and DenseBincount: the plan's checks on host copies of arr and size, then the weights
 * of the elements that land in a bin (gathered; ones when unweighted) summed into zeros at their bins
 * by scatter_rows, or 1 written there for binary_output. The sums run in the weights' dtype (the CPU
 * kernel sums in double) and in any order on a real GPU, as TensorFlow's atomic adds do. ---- */
static void k_bincount(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_device_math *m = tfd_dk_math(k, c);
  if (!m) return;
  tfd_tensor *w = c->inputs[2], *ah = tfd_kernel_host_input(c, k, 0), *sh = ah ? tfd_kernel_host_input(c, k, 1) : NULL;
  tfd_tensor *upd = NULL, *from = NULL, *slots = NULL, *out = NULL;
  tfd_scatter_plan p = {0};
  bool ok = sh && tfd_bincount_plan(c, k, ah, sh, w, &p);
  bool binary = k->code == 1 && k->keep_dims, weighted = tfd_tensor_numel(w) > 0;
  tfd_dtype dt = tfd_tensor_dtype(w);
  size_t es = tfd_dtype_size(dt);
  ok = ok && (out = tfd_dk_alloc(c, k, dt, p.dims, p.nd)) != NULL;
  int64_t bins = out ? tfd_tensor_numel(out) : 0;
  tfd_status st = TFD_STATUS_INIT;
  unsigned char zero[16] = {0}, unit[16];
  if (ok && bins > 0) ok = tfd_dk_ok(k, c, m->fill(c->device, es, zero, tfd_tensor_data(out), bins, &st), &st);
  if (ok && p.n > 0) {
    ok = (upd = tfd_dk_alloc_device(c, k, dt, &p.n, 1)) != NULL;
    if (ok && weighted && !binary) { /* the weights of the elements p.from names, in order */
      ok = (from = tfd_dk_int64s_to_device(c, k, p.from, p.n)) &&
           tfd_dk_ok(k, c, m->gather(c->device, tfd_tensor_const_data(w), tfd_tensor_const_data(from), TFD_INT64, 1, 1,
                                     tfd_tensor_numel(w), p.n, es, tfd_tensor_data(upd), &st), &st);
    } else if (ok) { /* a count of one per element: 1 in the weights' dtype, as OnesLike makes it */
      const int64_t one = 1;
      tfd_dm_put(unit, dt, 0, &one, TFD_INT64, 0);
      ok = tfd_dk_ok(k, c, m->fill(c->device, es, unit, tfd_tensor_data(upd), p.n, &st), &st);
    }
    ok = ok && (slots = device_slots(c, k, &p)) &&
         tfd_dk_ok(k, c, m->scatter_rows(c->device, !binary, dt, es, tfd_tensor_const_data(upd),
                                         tfd_tensor_const_data(slots), p.n, 1, tfd_tensor_data(out), &st), &st);
  }
  tfd_tensor_unref(ah), tfd_tensor_unref(sh), tfd_tensor_unref(upd), tfd_tensor_unref(from), tfd_tensor_unref(slots);
  tfd_scatter_plan_free(&p);
  if (ok) c->outputs[0] = out;
  else tfd_tensor_unref(out);
}

tfd_code tfd_dk_setup_bincount(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  return tfd_dk_setup_either(k, init, tfd_setup_count_norm, tfd_dk_arith_dtype(k->T), k_bincount, st);
}

/* ---- LowerBound and UpperBound: the CPU kernel's checks, then the math's binary search per value;
 * an int32 result is made in device memory and moved to the host, where int32 lives. ---- */
static void k_search_sorted(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_device_math *m = tfd_dk_math(k, c);
  if (!m || !tfd_search_sorted_check(c, k)) return;
  tfd_tensor *s = c->inputs[0], *v = c->inputs[1];
  int64_t dims[2] = {tfd_tensor_dim(v, 0), tfd_tensor_dim(v, 1)};
  tfd_tensor *y = tfd_dk_alloc_device(c, k, k->dst, dims, 2);
  tfd_status st = TFD_STATUS_INIT;
  bool ok = y && tfd_dk_ok(k, c, m->search_sorted(c->device, k->code == 1, tfd_tensor_dtype(s), tfd_tensor_const_data(s),
                                                  tfd_tensor_const_data(v), dims[0], tfd_tensor_dim(s, 1), dims[1], k->dst,
                                                  tfd_tensor_data(y), &st), &st);
  tfd_tensor *out = ok ? tfd_dk_to_home(c, k, y) : NULL;
  tfd_tensor_unref(y);
  if (out) c->outputs[0] = out;
}

tfd_code tfd_dk_setup_search_sorted(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  return tfd_dk_setup_either(k, init, tfd_setup_scatter, tfd_dk_arith_dtype(k->T), k_search_sorted, st);
}

tfd_code tfd_dk_setup_scatter(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  bool add = strcmp(init->op->name, "ScatterNd") == 0;
  k->dk_op = add ? 0 : 1;
  bool on_device = tfd_dk_lives_on_device(init->device, k->T) && (!add || tfd_dk_arith_dtype(k->T));
  return tfd_dk_setup_either(k, init, tfd_setup_scatter, on_device, k_scatter, st);
}
