/* Device kernels of the reductions (k_reduce.c) and of the index-picking reductions of k_gather.c:
 * Sum, Mean, Max, Min, Prod over any axes with keep_dims, All, Any and EuclideanNorm composed around
 * them, Cumsum and Cumprod (the scan entry), ArgMax, ArgMin and TopKV2, with the checks
 * and shapes of reduce_logic.h, which the CPU kernels call too. Reduced axes are merged into one middle axis of [outer, n, inner];
 * reduced axes that are not adjacent are first brought together by a transposing copy. int32 runs
 * the CPU kernel on the host; int32 results of device data (ArgMax's output_type int32, TopKV2's
 * indices) are made in device memory and copied to the host, where that dtype lives. */
#include <string.h>

#include "../device_kernel.h"
#include "../kernel_shared.h"
#include "reduce_logic.h"
#include "../array/shape_logic.h"

enum { R_SUM, R_MEAN, R_MAX, R_MIN, R_PROD, R_ARG_MAX, R_ARG_MIN, R_TOP_K, R_ALL, R_ANY, R_EUCLIDEAN_NORM, R_CUMSUM, R_CUMPROD };

static const struct {
  const char *name;
  int dm; /* tfd_dm_reduce for the reductions */
} ops[] = {{"Sum", TFD_DM_SUM}, {"Mean", TFD_DM_MEAN}, {"Max", TFD_DM_MAX}, {"Min", TFD_DM_MIN},
           {"Prod", TFD_DM_PROD}, {"ArgMax", 0},      {"ArgMin", 0},      {"TopKV2", 0},
           {"All", 0},            {"Any", 0},         {"EuclideanNorm", 0},
           {"Cumsum", 0},         {"Cumprod", 0}};

/* A result the math wrote into device memory, moved to where its dtype lives (int32: the host). */
static tfd_tensor *home(tfd_kernel_context *c, const tfd_kernel *k, tfd_tensor *t) {
  if (tfd_dk_lives_on_device(c->device, tfd_tensor_dtype(t))) return t;
  tfd_tensor *h = tfd_dk_to_home(c, k, t);
  tfd_tensor_unref(t);
  return h;
}

/* x [outer, n, inner] reduced over the middle axis into y, by op; int64 Mean as a Sum divided by n. */
static bool reduce3(tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m, int op, tfd_dtype dt, const void *x,
                    int64_t outer, int64_t n, int64_t inner, tfd_tensor *y) {
  tfd_status st = TFD_STATUS_INIT;
  if (op == TFD_DM_MEAN && n == 0) op = TFD_DM_SUM; /* an empty mean is 0 in the CPU kernel (0 / 0 is not taken) */
  bool int_mean = op == TFD_DM_MEAN && dt == TFD_INT64;
  if (!tfd_dk_ok(k, c, m->reduce(c->device, int_mean ? TFD_DM_SUM : op, dt, x, outer, n, inner, tfd_tensor_data(y), &st),
                 &st))
    return false;
  if (!int_mean) return true;
  tfd_tensor *count = tfd_dk_scalar(c, k, m, TFD_INT64, &n);
  if (!count) return false;
  bool ok = tfd_dk_binary_flat(k, c, m, TFD_DM_DIV, TFD_INT64, tfd_tensor_const_data(y), tfd_tensor_const_data(count), true,
                               tfd_tensor_data(y), outer * inner);
  tfd_tensor_unref(count);
  return ok;
}

/* Reduces x (of in's dims, dtype dt, in device memory) over the axes marked in reduce into out by op.
 * The input's dimensions, size-1 ones dropped (they change nothing), neighbours of the same kind
 * (reduced or kept) merged: [K] R [K] is one call; anything else is transposed first. */
static bool reduce_axes(tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m, int op, tfd_dtype dt,
                        const tfd_tensor *in, const void *x, const bool *reduce, tfd_tensor *out) {
  int nd = tfd_tensor_ndims(in);
  int64_t gsize[TFD_MAX_DIMS];
  bool gred[TFD_MAX_DIMS];
  int ng = 0, nred = 0;
  for (int d = 0; d < nd; d++) {
    int64_t size = tfd_tensor_dim(in, d);
    if (size == 1) continue;
    if (ng > 0 && gred[ng - 1] == reduce[d]) {
      gsize[ng - 1] *= size;
      continue;
    }
    gsize[ng] = size;
    gred[ng] = reduce[d];
    nred += reduce[d];
    ng++;
  }
  int64_t outer = 1, n = 1, inner = 1;
  tfd_tensor *moved = NULL;
  if (nred <= 1) {
    bool seen = false;
    for (int g = 0; g < ng; g++) {
      if (gred[g]) n = gsize[g], seen = true;
      else if (seen) inner *= gsize[g];
      else outer *= gsize[g];
    }
  } else { /* kept dimensions first, then the reduced ones, each in their order */
    int64_t dims[TFD_MAX_DIMS], strides[2][TFD_MAX_DIMS], istr[TFD_MAX_DIMS], idims[TFD_MAX_DIMS];
    for (int d = 0; d < nd; d++) idims[d] = tfd_tensor_dim(in, d);
    tfd_dk_strides(nd, idims, istr);
    int p = 0;
    for (int pass = 0; pass < 2; pass++)
      for (int d = 0; d < nd; d++)
        if (reduce[d] == (pass == 1)) {
          dims[p] = idims[d];
          strides[0][p++] = istr[d];
          if (pass == 0) outer *= idims[d];
          else n *= idims[d];
        }
    tfd_dk_strides(nd, dims, strides[1]);
    moved = tfd_dk_alloc_device(c, k, dt, dims, nd);
    tfd_dm_walk w;
    tfd_status st = TFD_STATUS_INIT;
    if (!moved || (tfd_dk_walk(&w, nd, dims, 2, strides, NULL) > 0 &&
                   !tfd_dk_ok(k, c, m->copy_walk(c->device, tfd_dtype_size(dt), x, tfd_tensor_data(moved), &w, &st), &st))) {
      tfd_tensor_unref(moved);
      return false;
    }
    x = tfd_tensor_const_data(moved);
  }
  bool ok = reduce3(k, c, m, op, dt, x, outer, n, inner, out);
  tfd_tensor_unref(moved);
  return ok;
}

static void k_reduce(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_device_math *m = tfd_dk_math(k, c);
  if (!m) return;
  tfd_tensor *in = c->inputs[0];
  int op = ops[k->dk_op].dm, ond;
  bool reduce[TFD_MAX_DIMS];
  int64_t odims[TFD_MAX_DIMS], count;
  if (!tfd_reduce_shape(c, k, false, reduce, odims, &ond, &count)) return;
  tfd_dtype dt = tfd_tensor_dtype(in);
  if (!tfd_dk_arith_dtype(dt)) {
    tfd_kernel_fail(c, k, TFD_UNIMPLEMENTED, "no kernel for dtype %s", tfd_dtype_name(dt));
    return;
  }
  tfd_tensor *out = tfd_dk_alloc(c, k, dt, odims, ond);
  if (!out) return;
  if (tfd_tensor_numel(out) == 0) {
    c->outputs[0] = out;
    return;
  }
  unsigned char identity[16];
  if (count == 0 && (op == TFD_DM_MAX || op == TFD_DM_MIN) && tfd_reduce_identity(dt, op == TFD_DM_MAX, identity)) {
    tfd_status st = TFD_STATUS_INIT; /* Max/Min of nothing: the identity everywhere */
    if (tfd_dk_ok(k, c, m->fill(c->device, tfd_dtype_size(dt), identity, tfd_tensor_data(out), tfd_tensor_numel(out), &st), &st))
      c->outputs[0] = out;
    else
      tfd_tensor_unref(out);
    return;
  }
  if (reduce_axes(k, c, m, op, dt, in, tfd_tensor_const_data(in), reduce, out)) c->outputs[0] = out;
  else tfd_tensor_unref(out);
}

/* ---- All, Any (bool), EuclideanNorm (float32, float64): composed around a reduction ----
 * All and Any are Min and Max of the input cast to int64, cast back to bool (an empty axis gives
 * true and false, as TensorFlow's reducers start); EuclideanNorm is the square root of the Sum of the
 * squares. */
static void k_reduce_composed(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_device_math *m = tfd_dk_math(k, c);
  if (!m) return;
  tfd_tensor *in = c->inputs[0];
  int ond;
  bool reduce[TFD_MAX_DIMS], norm = k->dk_op == R_EUCLIDEAN_NORM;
  int64_t odims[TFD_MAX_DIMS], count;
  if (!tfd_reduce_shape(c, k, false, reduce, odims, &ond, &count)) return;
  tfd_dtype dt = tfd_tensor_dtype(in), work = norm ? dt : TFD_INT64;
  tfd_tensor *out = tfd_dk_alloc(c, k, norm ? dt : TFD_BOOL, odims, ond);
  if (!out) return;
  int64_t n_in = tfd_tensor_numel(in), n_out = tfd_tensor_numel(out);
  tfd_status st = TFD_STATUS_INIT;
  if (n_out == 0 || (count == 0 && !norm)) { /* nothing to reduce: All's true, Any's false */
    unsigned char v = k->dk_op == R_ALL;
    if (n_out == 0 || tfd_dk_ok(k, c, m->fill(c->device, 1, &v, tfd_tensor_data(out), n_out, &st), &st))
      c->outputs[0] = out;
    else
      tfd_tensor_unref(out);
    return;
  }
  int64_t in_dims[TFD_MAX_DIMS];
  for (int d = 0; d < tfd_tensor_ndims(in); d++) in_dims[d] = tfd_tensor_dim(in, d);
  tfd_tensor *pre = tfd_dk_alloc_device(c, k, work, in_dims, tfd_tensor_ndims(in));
  tfd_tensor *red = pre && !norm ? tfd_dk_alloc_device(c, k, work, odims, ond) : NULL;
  bool ok = pre && (norm || red);
  if (ok && n_in > 0)
    ok = tfd_dk_ok(k, c, norm ? m->unary(c->device, TFD_DM_SQUARE, dt, tfd_tensor_const_data(in), tfd_tensor_data(pre), n_in, 0, &st)
                              : m->cast(c->device, TFD_BOOL, TFD_INT64, tfd_tensor_const_data(in), tfd_tensor_data(pre), n_in, &st),
                   &st);
  int op = norm ? TFD_DM_SUM : k->dk_op == R_ALL ? TFD_DM_MIN : TFD_DM_MAX;
  ok = ok && reduce_axes(k, c, m, op, work, in, tfd_tensor_const_data(pre), reduce, norm ? out : red);
  if (ok)
    ok = tfd_dk_ok(k, c, norm ? m->unary(c->device, TFD_DM_SQRT, dt, tfd_tensor_const_data(out), tfd_tensor_data(out), n_out, 0, &st)
                              : m->cast(c->device, TFD_INT64, TFD_BOOL, tfd_tensor_const_data(red), tfd_tensor_data(out), n_out, &st),
                   &st);
  tfd_tensor_unref(pre);
  tfd_tensor_unref(red);
  if (ok) c->outputs[0] = out;
  else tfd_tensor_unref(out);
}

/* ---- Cumsum, Cumprod (exclusive and reverse in k->ta and k->tb, as tfd_setup_array keeps them) ---- */
static void k_scan(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_device_math *m = tfd_dk_math(k, c);
  if (!m) return;
  tfd_tensor *in = c->inputs[0];
  int64_t axis, dims[TFD_MAX_DIMS];
  if (!tfd_scan_axis(c, k, &axis)) return;
  int nd = tfd_tensor_ndims(in);
  for (int d = 0; d < nd; d++) dims[d] = tfd_tensor_dim(in, d);
  tfd_dtype dt = tfd_tensor_dtype(in);
  tfd_tensor *out = tfd_dk_alloc(c, k, dt, dims, nd);
  if (!out) return;
  tfd_status st = TFD_STATUS_INIT;
  if (tfd_tensor_numel(in) > 0 &&
      !tfd_dk_ok(k, c, m->scan(c->device, k->dk_op == R_CUMPROD, k->ta, k->tb, dt, tfd_tensor_const_data(in),
                               tfd_dims_product(in, 0, (int)axis), dims[axis], tfd_dims_product(in, (int)axis + 1, nd),
                               tfd_tensor_data(out), &st), &st)) {
    tfd_tensor_unref(out);
    return;
  }
  c->outputs[0] = out;
}

/* ---- ArgMax, ArgMin ---- */
static void k_arg(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_device_math *m = tfd_dk_math(k, c);
  if (!m) return;
  tfd_tensor *in = c->inputs[0];
  int nd = tfd_tensor_ndims(in);
  int64_t axis, dims[TFD_MAX_DIMS];
  if (!tfd_arg_shape(c, k, &axis, dims)) return;
  int64_t count = tfd_tensor_dim(in, (int)axis);
  tfd_tensor *out = tfd_dk_alloc_device(c, k, k->dst, dims, nd - 1);
  if (!out) return;
  if (tfd_tensor_numel(out) == 0) {
    c->outputs[0] = home(c, k, out);
    return;
  }
  if (!tfd_arg_check_count(c, k, axis)) {
    tfd_tensor_unref(out);
    return;
  }
  tfd_dtype dt = tfd_tensor_dtype(in);
  if (!tfd_dk_arith_dtype(dt)) {
    tfd_tensor_unref(out);
    tfd_kernel_fail(c, k, TFD_UNIMPLEMENTED, "no kernel for dtype %s", tfd_dtype_name(dt));
    return;
  }
  tfd_status st = TFD_STATUS_INIT;
  if (!tfd_dk_ok(k, c, m->arg_reduce(c->device, k->dk_op == R_ARG_MIN, dt, tfd_tensor_const_data(in),
                                     tfd_dims_product(in, 0, (int)axis), count, tfd_dims_product(in, (int)axis + 1, nd), k->dst,
                                     tfd_tensor_data(out), &st), &st)) {
    tfd_tensor_unref(out);
    return;
  }
  c->outputs[0] = home(c, k, out);
}

/* ---- TopKV2 ---- */
static void k_top_k(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_device_math *m = tfd_dk_math(k, c);
  if (!m) return;
  tfd_tensor *in = c->inputs[0];
  int nd = tfd_tensor_ndims(in);
  int64_t kk, dims[TFD_MAX_DIMS];
  if (!tfd_top_k_shape(c, k, &kk, dims)) return;
  int64_t n = tfd_tensor_dim(in, nd - 1);
  tfd_dtype dt = tfd_tensor_dtype(in);
  if (!tfd_dk_arith_dtype(dt)) {
    tfd_kernel_fail(c, k, TFD_UNIMPLEMENTED, "no kernel for dtype %s", tfd_dtype_name(dt));
    return;
  }
  tfd_tensor *vals = tfd_dk_alloc(c, k, dt, dims, nd);
  tfd_tensor *idxs = vals ? tfd_dk_alloc_device(c, k, k->dst, dims, nd) : NULL;
  if (!idxs) {
    tfd_tensor_unref(vals);
    return;
  }
  int64_t rows = tfd_tensor_numel(vals) == 0 ? 0 : tfd_tensor_numel(in) / n;
  tfd_status st = TFD_STATUS_INIT;
  if (rows > 0 && !tfd_dk_ok(k, c, m->top_k(c->device, dt, tfd_tensor_const_data(in), rows, n, kk, tfd_tensor_data(vals),
                                             k->dst, tfd_tensor_data(idxs), &st), &st)) {
    tfd_tensor_unref(vals);
    tfd_tensor_unref(idxs);
    return;
  }
  if (!(idxs = home(c, k, idxs))) {
    tfd_tensor_unref(vals);
    return;
  }
  c->outputs[0] = vals;
  c->outputs[1] = idxs;
}

tfd_code tfd_dk_setup_reduce(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  const char *name = init->op->name;
  int i = 0;
  while (i < (int)(sizeof ops / sizeof ops[0]) && strcmp(ops[i].name, name) != 0) i++;
  if (i == (int)(sizeof ops / sizeof ops[0])) return tfd_status_setf(st, TFD_INTERNAL, "no reduction device kernel for %s", name);
  k->dk_op = i;
  if (i >= R_CUMSUM) { /* the scans: int32, uint8 and float16 run the CPU kernel on the host */
    if (!tfd_dk_arith_dtype(k->T)) return tfd_dk_setup_on_host(k, init, tfd_setup_array, st);
    if (tfd_setup_array(k, init, st) != TFD_OK) return tfd_status_code(st);
    k->compute = k_scan;
    return TFD_OK;
  }
  if (i >= R_ALL) { /* T is bool for All and Any; EuclideanNorm's integers run on the host, as its CPU kernel sums them */
    tfd_kernel_setup_fn cpu = i == R_EUCLIDEAN_NORM ? tfd_setup_count_norm : tfd_setup_array;
    if (i == R_EUCLIDEAN_NORM && k->T != TFD_FLOAT32 && k->T != TFD_FLOAT64) return tfd_dk_setup_on_host(k, init, cpu, st);
    if (cpu(k, init, st) != TFD_OK) return tfd_status_code(st);
    k->compute = k_reduce_composed;
    return TFD_OK;
  }
  tfd_kernel_setup_fn cpu = i >= R_ARG_MAX ? tfd_setup_gather : tfd_setup_reduce;
  if (!tfd_dk_arith_dtype(k->T)) return tfd_dk_setup_on_host(k, init, cpu, st);
  if (cpu(k, init, st) != TFD_OK) return tfd_status_code(st);
  k->compute = i == R_TOP_K ? k_top_k : i >= R_ARG_MAX ? k_arg : k_reduce;
  return TFD_OK;
}
