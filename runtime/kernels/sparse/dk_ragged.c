/* Device kernels of the ragged ops (k_ragged.c is the reference). RaggedGather and RaggedTensorToTensor
 * plan on the host, as their CPU kernels (ragged_logic.h: the splits, partitions, indices and shape
 * are small and read in order), and move the values, which may be large, on the device: RaggedGather
 * gathers the planned value rows with one gather; RaggedTensorToTensor writes the default's cell
 * into every cell of the output plus one spare, scatters each value row to its cell (rows cut off go
 * to the spare) and copies all but the spare out. RaggedRange makes its values by a sequential sum
 * per row (start, start + delta, ...: the CPU's rounding), from inputs of one number a row, so it
 * runs on the host and its outputs move to the device. Values that live on the host (int32,
 * strings) run the CPU kernels there. */
#include <stdlib.h>
#include <string.h>

#include "../../core/tensor_internal.h"
#include "../device_kernel.h"
#include "../kernel_shared.h"
#include "ragged_logic.h"

/* in[i]: input i where the host can read it, but input `keep` as it is (the values: only their shape
 * is read). False with the error reported; release with unref_all. */
static bool host_inputs(tfd_kernel *k, tfd_kernel_context *c, int keep, tfd_tensor **in) {
  for (int i = 0; i < c->num_inputs; i++) {
    in[i] = i == keep ? tfd_tensor_ref(c->inputs[i]) : tfd_kernel_host_input(c, k, i);
    if (!in[i]) return false;
  }
  return true;
}

static void unref_all(tfd_tensor **in, int n) {
  for (int i = 0; i < n; i++) tfd_tensor_unref(in[i]);
}

static void k_ragged_gather(tfd_kernel *k, tfd_kernel_context *c) {
  int prr = (int)k->index;
  tfd_tensor *vals = c->inputs[prr];
  if (tfd_tensor_in_host_memory(vals)) {
    tfd_dk_run_on_host(k, c);
    return;
  }
  const tfd_device_math *m = tfd_dk_math(k, c);
  tfd_tensor *in[TFD_MAX_OP_OUTPUTS + 2] = {0}, *made[TFD_MAX_OP_OUTPUTS] = {0}, *rows_dev = NULL;
  tfd_ragged_gather_plan p = {0};
  bool ok = m && host_inputs(k, c, prr, in) && tfd_ragged_gather_plan_make(k, c, in, &p);
  tfd_dtype splits_dt = tfd_tensor_dtype(c->inputs[0]);
  tfd_status st = TFD_STATUS_INIT;
  for (int d = 0; ok && d < p.nsplits; d++) { /* made on the host, then moved where Tsplits lives */
    tfd_tensor *h = tfd_tensor_make(NULL, splits_dt, &p.nsplit[d], 1, &st);
    ok = h != NULL || tfd_dk_ok(k, c, tfd_status_code(&st), &st);
    for (int64_t i = 0; h && i < p.nsplit[d]; i++) {
      if (splits_dt == TFD_INT32) ((int32_t *)tfd_tensor_data(h))[i] = (int32_t)p.splits[d][i];
      else ((int64_t *)tfd_tensor_data(h))[i] = p.splits[d][i];
    }
    ok = ok && (made[d] = tfd_kernel_host_to_home(c, k, h)) != NULL;
  }
  /* the value rows in output order, one gather */
  int vnd = tfd_tensor_ndims(vals);
  int64_t dims[TFD_MAX_DIMS], *rows = NULL;
  for (int d = 0; d < vnd; d++) dims[d] = tfd_tensor_dim(vals, d);
  dims[0] = p.total;
  ok = ok && (made[p.nsplits] = tfd_dk_alloc(c, k, tfd_tensor_dtype(vals), dims, vnd)) != NULL;
  size_t row = ok ? (size_t)tfd_dims_product(made[p.nsplits], 1, vnd) * tfd_dtype_size(tfd_tensor_dtype(vals)) : 0;
  if (ok && p.total > 0 && row > 0) {
    rows = malloc((size_t)p.total * sizeof *rows);
    if (!rows) tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory gathering %lld rows", (long long)p.total);
    for (int64_t s = 0, at = 0; rows && s + 1 < p.nslices; s += 2)
      for (int64_t r = p.slices[s]; r < p.slices[s + 1]; r++) rows[at++] = r;
    ok = rows && (rows_dev = tfd_dk_int64s_to_device(c, k, rows, p.total)) &&
         tfd_dk_ok(k, c, m->gather(c->device, tfd_tensor_const_data(vals), tfd_tensor_const_data(rows_dev), TFD_INT64, 1, 1,
                                   tfd_tensor_dim(vals, 0), p.total, row, tfd_tensor_data(made[p.nsplits]),
                                   &st), &st);
  }
  free(rows);
  tfd_tensor_unref(rows_dev);
  for (int d = 0; d <= p.nsplits && d < TFD_MAX_OP_OUTPUTS; d++) {
    if (ok) c->outputs[d] = made[d];
    else tfd_tensor_unref(made[d]);
  }
  tfd_ragged_gather_plan_free(&p);
  unref_all(in, c->num_inputs);
}

static void k_ragged_to_tensor(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *vals = c->inputs[1];
  if (tfd_tensor_in_host_memory(vals)) {
    tfd_dk_run_on_host(k, c);
    return;
  }
  const tfd_device_math *m = tfd_dk_math(k, c);
  tfd_tensor *in[TFD_MAX_DIMS + 4] = {0}, *o = NULL, *full = NULL, *cell = NULL, *slots = NULL;
  tfd_ragged_to_tensor_plan p = {0};
  bool ok = m && c->num_inputs <= TFD_MAX_DIMS + 4 && host_inputs(k, c, 1, in) &&
            tfd_ragged_to_tensor_plan_make(k, c, in, &p) &&
            (o = tfd_dk_alloc(c, k, tfd_tensor_dtype(vals), p.dims, p.nd)) != NULL;
  tfd_dtype dt = tfd_tensor_dtype(vals);
  size_t es = tfd_dtype_size(dt);
  tfd_status st = TFD_STATUS_INIT;
  if (ok && p.total > 0) {
    /* the default's cell in every cell and one spare */
    int64_t cells1 = p.cells + 1, fdims[2] = {cells1, p.cell_elems};
    tfd_tensor *h = tfd_tensor_make_from_bytes(NULL, dt, &p.cell_elems, 1, p.cell, (size_t)p.cell_elems * es, &st);
    ok = (h || tfd_dk_ok(k, c, tfd_status_code(&st), &st)) && (cell = tfd_dk_to_device(c, k, h)) &&
         (full = tfd_dk_alloc_device(c, k, dt, fdims, 2));
    tfd_tensor_unref(h);
    if (ok) {
      int64_t strides[2][TFD_MAX_DIMS] = {{0, 1}, {p.cell_elems, 1}};
      tfd_dm_walk w;
      tfd_dk_walk(&w, 2, fdims, 2, strides, NULL);
      ok = tfd_dk_ok(k, c, m->copy_walk(c->device, es, tfd_tensor_const_data(cell), tfd_tensor_data(full), &w, &st), &st);
    }
    /* each value row to its cell, the rows cut off to the spare */
    for (int64_t i = 0; ok && i < p.nindex; i++)
      if (p.index[i] < 0) p.index[i] = p.cells;
    ok = ok && (p.nindex == 0 || ((slots = tfd_dk_int64s_to_device(c, k, p.index, p.nindex)) &&
                                  tfd_dk_ok(k, c, m->scatter_rows(c->device, false, dt, es, tfd_tensor_const_data(vals),
                                                                  tfd_tensor_const_data(slots), p.nindex, p.cell_elems,
                                                                  tfd_tensor_data(full), &st), &st))) &&
         tfd_dk_copy_flat(k, c, m, es, tfd_tensor_const_data(full), 1, tfd_tensor_data(o), p.total);
  }
  tfd_tensor_unref(full);
  tfd_tensor_unref(cell);
  tfd_tensor_unref(slots);
  tfd_ragged_to_tensor_plan_free(&p);
  unref_all(in, c->num_inputs <= TFD_MAX_DIMS + 4 ? c->num_inputs : 0);
  if (ok) c->outputs[0] = o;
  else tfd_tensor_unref(o);
}

tfd_code tfd_dk_setup_ragged(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  const char *op = init->op->name;
  if (strcmp(op, "RaggedRange") == 0) return tfd_dk_setup_on_host(k, init, tfd_setup_ragged, st);
  bool gather = strcmp(op, "RaggedGather") == 0;
  return tfd_dk_setup_either(k, init, tfd_setup_ragged, true, gather ? k_ragged_gather : k_ragged_to_tensor, st);
}
