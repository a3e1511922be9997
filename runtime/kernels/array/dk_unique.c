/* Device kernels of Unique and UniqueV2 over a vector (k_scatter.c's k_unique is the reference), and
 * of the ops whose work is a sequential walk over small inputs, run on the host beside a GPU:
 * ListDiff (TensorFlow's GPU kernel keeps every argument in host memory too) and NonMaxSuppression
 * V2-V5 (a greedy loop, each step depending on the last: on a device it would be one launch and one
 * synchronisation per kept box, where the host's loop over a few thousand boxes takes microseconds).
 *
 * Unique sorts, as TensorFlow's GPU kernel does, instead of hashing: the values sorted with their
 * positions (top_k over the whole row: descending, ties to the lower position, so a value's first
 * occurrence leads its run); a run starts where a value differs from the one before (NaN differs
 * from everything, so each NaN is its own unique, as the CPU's ==); runs are numbered by a Cumsum;
 * each run's first position is scattered to its number; the runs are ranked by first position (a
 * second sort) because TensorFlow orders y by first occurrence; idx is each element's run's rank,
 * scattered back to the element's position; y gathers x at the ranked first positions. The number of
 * uniques, y's length, is read on the host once. Slices along an axis of a higher-rank tensor, empty
 * inputs and dtypes the sort lacks run the CPU kernel on the host. */
#include <limits.h>
#include <string.h>

#include "../device_kernel.h"
#include "../kernel_shared.h"

enum { U_SORTED, U_POS, U_FLAG, U_FLAG64, U_RUN, U_SLOT, U_FIRST, U_NEG_FIRST, U_SORTED_FIRST, U_BY_FIRST, U_IOTA, U_RANK, U_PER_ELEM,
       U_IDX64, U_SCALAR_U, U_SCALAR_M1, U_SCALAR_1, U_LAST, U_HOST_LAST, U_TEMPS };

static void temps_free(tfd_tensor **t) {
  for (int i = 0; i < U_TEMPS; i++) tfd_tensor_unref(t[i]);
}

/* Whether this Unique runs on the device: a non-empty vector, found unique along axis 0 (UniqueV2's
 * axis empty, 0 or -1), of a dtype the sort takes. Anything else, and every error, is the CPU's. */
static bool on_device(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_tensor *x = c->inputs[0];
  int64_t n = tfd_tensor_ndims(x) == 1 ? tfd_tensor_dim(x, 0) : 0;
  if (n == 0 || !tfd_dk_arith_dtype(tfd_tensor_dtype(x)) || (k->dst == TFD_INT32 && n > INT_MAX)) return false;
  if (k->code != 1 || tfd_tensor_numel(c->inputs[1]) == 0) return true;
  tfd_dtype at = tfd_tensor_dtype(c->inputs[1]);
  if (tfd_tensor_numel(c->inputs[1]) != 1 || (at != TFD_INT32 && at != TFD_INT64)) return false;
  tfd_tensor *a = tfd_kernel_host_input(c, k, 1);
  if (!a) return false;
  int64_t axis = tfd_tensor_get_index(a, 0);
  tfd_tensor_unref(a);
  return axis == 0 || axis == -1;
}

static void k_unique(tfd_kernel *k, tfd_kernel_context *c) {
  if (!on_device(k, c)) {
    if (tfd_status_code(c->status) == TFD_OK) tfd_dk_run_on_host(k, c);
    return;
  }
  const tfd_device_math *m = tfd_dk_math(k, c);
  if (!m) return;
  tfd_tensor *x = c->inputs[0];
  tfd_dtype dt = tfd_tensor_dtype(x);
  int64_t n = tfd_tensor_dim(x, 0), one = 1, minus_one = -1, u = 0;
  tfd_tensor *t[U_TEMPS] = {0}, *y = NULL, *idx = NULL;
  tfd_status st = TFD_STATUS_INIT;
  /* sorted values and their positions; flag[i]: a run starts at i; run[i]: its number */
  bool ok = (t[U_SORTED] = tfd_dk_alloc_device(c, k, dt, &n, 1)) && (t[U_POS] = tfd_dk_alloc_device(c, k, TFD_INT64, &n, 1)) &&
            (t[U_FLAG] = tfd_dk_alloc_device(c, k, TFD_BOOL, &n, 1)) &&
            (t[U_FLAG64] = tfd_dk_alloc_device(c, k, TFD_INT64, &n, 1)) &&
            (t[U_RUN] = tfd_dk_alloc_device(c, k, TFD_INT64, &n, 1)) &&
            (t[U_SCALAR_1] = tfd_dk_scalar(c, k, m, TFD_INT64, &one)) &&
            (t[U_SCALAR_M1] = tfd_dk_scalar(c, k, m, TFD_INT64, &minus_one));
  ok = ok && tfd_dk_ok(k, c, m->top_k(c->device, dt, tfd_tensor_const_data(x), 1, n, n, tfd_tensor_data(t[U_SORTED]),
                                      TFD_INT64, tfd_tensor_data(t[U_POS]), &st), &st);
  bool yes = true;
  ok = ok && tfd_dk_ok(k, c, m->fill(c->device, 1, &yes, tfd_tensor_data(t[U_FLAG]), 1, &st), &st);
  if (ok && n > 1) { /* flag[i] = sorted[i] != sorted[i - 1] */
    int64_t strides[2][TFD_MAX_DIMS] = {{1}, {1}}, offsets[2] = {1, 0}, rest = n - 1;
    tfd_dm_walk w;
    tfd_dk_walk(&w, 1, &rest, 2, strides, offsets);
    ok = tfd_dk_ok(k, c, m->binary(c->device, TFD_DM_NOT_EQUAL, dt, tfd_tensor_const_data(t[U_SORTED]),
                                   tfd_tensor_const_data(t[U_SORTED]), (bool *)tfd_tensor_data(t[U_FLAG]) + 1, &w, &st), &st);
  }
  ok = ok &&
       tfd_dk_ok(k, c, m->cast(c->device, TFD_BOOL, TFD_INT64, tfd_tensor_const_data(t[U_FLAG]), tfd_tensor_data(t[U_FLAG64]),
                               n, &st), &st) &&
       tfd_dk_ok(k, c, m->scan(c->device, false, false, false, TFD_INT64, tfd_tensor_const_data(t[U_FLAG64]), 1, n, 1,
                               tfd_tensor_data(t[U_RUN]), &st), &st) &&
       tfd_dk_binary_flat(k, c, m, TFD_DM_SUB, TFD_INT64, tfd_tensor_const_data(t[U_RUN]),
                          tfd_tensor_const_data(t[U_SCALAR_1]), true, tfd_tensor_data(t[U_RUN]), n);
  /* the number of runs, on the host: the last run's number plus one */
  ok = ok && (t[U_LAST] = tfd_dk_alloc_device(c, k, TFD_INT64, &one, 1)) &&
       tfd_dk_copy_flat(k, c, m, 8, (const int64_t *)tfd_tensor_const_data(t[U_RUN]) + (n - 1), 1,
                        tfd_tensor_data(t[U_LAST]), 1) &&
       (t[U_HOST_LAST] = tfd_dk_move(c, k, t[U_LAST], NULL));
  if (ok) u = *(const int64_t *)tfd_tensor_const_data(t[U_HOST_LAST]) + 1;
  /* first[r]: run r's first position (the position at its start); the other elements go to row u */
  int64_t u1 = u + 1;
  ok = ok && (t[U_SLOT] = tfd_dk_alloc_device(c, k, TFD_INT64, &n, 1)) &&
       (t[U_FIRST] = tfd_dk_alloc_device(c, k, TFD_INT64, &u1, 1)) && (t[U_SCALAR_U] = tfd_dk_scalar(c, k, m, TFD_INT64, &u));
  if (ok) {
    int64_t strides[3][TFD_MAX_DIMS] = {{1}, {1}, {0}};
    tfd_dm_walk w;
    tfd_dk_walk(&w, 1, &n, 3, strides, NULL);
    ok = tfd_dk_ok(k, c, m->select(c->device, 8, tfd_tensor_const_data(t[U_FLAG]), tfd_tensor_const_data(t[U_RUN]),
                                   tfd_tensor_const_data(t[U_SCALAR_U]), tfd_tensor_data(t[U_SLOT]), &w, &st), &st) &&
         tfd_dk_ok(k, c, m->scatter_rows(c->device, false, TFD_INT64, 8, tfd_tensor_const_data(t[U_POS]),
                                         tfd_tensor_const_data(t[U_SLOT]), n, 1, tfd_tensor_data(t[U_FIRST]), &st), &st);
  }
  /* the runs by first position: a descending sort of the negated positions; rank[run] its place */
  ok = ok && (t[U_NEG_FIRST] = tfd_dk_alloc_device(c, k, TFD_INT64, &u, 1)) &&
       (t[U_SORTED_FIRST] = tfd_dk_alloc_device(c, k, TFD_INT64, &u, 1)) &&
       (t[U_BY_FIRST] = tfd_dk_alloc_device(c, k, TFD_INT64, &u, 1)) &&
       (t[U_IOTA] = tfd_dk_alloc_device(c, k, TFD_INT64, &u, 1)) && (t[U_RANK] = tfd_dk_alloc_device(c, k, TFD_INT64, &u, 1)) &&
       tfd_dk_binary_flat(k, c, m, TFD_DM_MUL, TFD_INT64, tfd_tensor_const_data(t[U_FIRST]),
                          tfd_tensor_const_data(t[U_SCALAR_M1]), true, tfd_tensor_data(t[U_NEG_FIRST]), u) &&
       tfd_dk_ok(k, c, m->top_k(c->device, TFD_INT64, tfd_tensor_const_data(t[U_NEG_FIRST]), 1, u, u,
                                tfd_tensor_data(t[U_SORTED_FIRST]), TFD_INT64, tfd_tensor_data(t[U_BY_FIRST]), &st), &st) &&
       tfd_dk_ok(k, c, m->range(c->device, TFD_INT64, 0, 1, tfd_tensor_data(t[U_IOTA]), u, &st), &st) &&
       tfd_dk_ok(k, c, m->scatter_rows(c->device, false, TFD_INT64, 8, tfd_tensor_const_data(t[U_IOTA]),
                                       tfd_tensor_const_data(t[U_BY_FIRST]), u, 1, tfd_tensor_data(t[U_RANK]), &st), &st);
  /* idx[pos[i]] = rank[run[i]] */
  ok = ok && (t[U_PER_ELEM] = tfd_dk_alloc_device(c, k, TFD_INT64, &n, 1)) &&
       (t[U_IDX64] = tfd_dk_alloc_device(c, k, TFD_INT64, &n, 1)) &&
       tfd_dk_ok(k, c, m->gather(c->device, tfd_tensor_const_data(t[U_RANK]), tfd_tensor_const_data(t[U_RUN]), TFD_INT64, 1,
                                 1, u, n, 8, tfd_tensor_data(t[U_PER_ELEM]), &st), &st) &&
       tfd_dk_ok(k, c, m->scatter_rows(c->device, false, TFD_INT64, 8, tfd_tensor_const_data(t[U_PER_ELEM]),
                                       tfd_tensor_const_data(t[U_POS]), n, 1, tfd_tensor_data(t[U_IDX64]), &st), &st);
  if (ok && k->dst == TFD_INT32) { /* made in the device's memory, then moved to the host where int32 lives */
    tfd_tensor *i32 = tfd_dk_alloc_device(c, k, TFD_INT32, &n, 1);
    ok = i32 && tfd_dk_ok(k, c, m->cast(c->device, TFD_INT64, TFD_INT32, tfd_tensor_const_data(t[U_IDX64]),
                                        tfd_tensor_data(i32), n, &st), &st);
    idx = ok ? tfd_dk_to_home(c, k, i32) : NULL;
    tfd_tensor_unref(i32);
    ok = idx != NULL;
  } else if (ok) {
    idx = tfd_tensor_ref(t[U_IDX64]);
  }
  /* y[r] = x[first position of the run ranked r] (the sorted negated positions, negated back) */
  ok = ok && (y = tfd_dk_alloc(c, k, dt, &u, 1)) &&
       tfd_dk_binary_flat(k, c, m, TFD_DM_MUL, TFD_INT64, tfd_tensor_const_data(t[U_SORTED_FIRST]),
                          tfd_tensor_const_data(t[U_SCALAR_M1]), true, tfd_tensor_data(t[U_NEG_FIRST]), u) &&
       tfd_dk_ok(k, c, m->gather(c->device, tfd_tensor_const_data(x), tfd_tensor_const_data(t[U_NEG_FIRST]), TFD_INT64, 1, 1,
                                 n, u, tfd_dtype_size(dt), tfd_tensor_data(y), &st), &st);
  temps_free(t);
  if (ok) {
    c->outputs[0] = y;
    c->outputs[1] = idx;
  } else {
    tfd_tensor_unref(y);
    tfd_tensor_unref(idx);
  }
}

tfd_code tfd_dk_setup_unique(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  if (strcmp(init->op->name, "ListDiff") == 0) return tfd_dk_setup_on_host(k, init, tfd_setup_scatter, st);
  return tfd_dk_setup_either(k, init, tfd_setup_scatter, true, k_unique, st);
}

tfd_code tfd_dk_setup_nms(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  return tfd_dk_setup_on_host(k, init, tfd_setup_nms, st);
}
