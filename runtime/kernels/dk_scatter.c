/* Device kernels of ScatterNd and TensorScatterUpdate (k_scatter.c): the indices are checked on the
 * host and turned into output rows by scatter_logic.h's plan, as the CPU kernels do, and those rows go
 * to the device for the math's scatter_rows: ScatterNd sums its updates into zeros (float32, float64,
 * int64; other dtypes run the CPU kernel on the host), TensorScatterUpdate writes them over a copy of
 * its tensor (any dtype by size; int32 lives on the host). Repeated indices end as on TensorFlow's
 * GPUs: sums in any order, one write winning. */
#include <string.h>

#include "device_kernel.h"
#include "scatter_logic.h"

/* The plan's rows in device memory; NULL with the error reported. */
static tfd_tensor *device_slots(tfd_kernel_ctx *c, const tfd_kernel *k, const tfd_scatter_plan *p) {
  int64_t n = p->n;
  tfd_tensor *h = tfd_tensor_new(NULL, TFD_INT64, &n, 1, NULL);
  if (!h) {
    tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory for %lld scatter rows", (long long)n);
    return NULL;
  }
  memcpy(tfd_tensor_data(h), p->slots, (size_t)n * sizeof *p->slots);
  tfd_tensor *d = tfd_dk_to_device(c, k, h);
  tfd_tensor_unref(h);
  return d;
}

static void k_scatter(tfd_kernel *k, tfd_kernel_ctx *c) {
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
    if (add) {
      unsigned char zero[16] = {0};
      ok = tfd_dk_ok(k, c, m->fill(c->device, es, zero, tfd_tensor_data(out), total, &st), &st);
    } else {
      int64_t strides[2][TFD_MAX_DIMS] = {{1}, {1}};
      tfd_dm_walk w;
      tfd_dk_walk(&w, 1, &total, 2, strides, NULL);
      ok = tfd_dk_ok(k, c, m->copy_walk(c->device, es, tfd_tensor_const_data(c->inputs[0]), tfd_tensor_data(out), &w, &st),
                     &st);
    }
  }
  if (ok && p.n > 0 && (ok = (slots = device_slots(c, k, &p)) != NULL))
    ok = tfd_dk_ok(k, c, m->scatter_rows(c->device, add, dt, es, tfd_tensor_const_data(upd), tfd_tensor_const_data(slots), p.n,
                                         p.slice, tfd_tensor_data(out), &st), &st);
  tfd_tensor_unref(slots);
  tfd_scatter_plan_free(&p);
  if (ok) c->outputs[0] = out;
  else tfd_tensor_unref(out);
}

tfd_code tfd_dk_setup_scatter(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  bool add = strcmp(init->op->name, "ScatterNd") == 0;
  k->dk_op = add ? 0 : 1;
  if (!tfd_dk_lives_on_device(init->device, k->T) || (add && !tfd_dk_arith_dtype(k->T)))
    return tfd_dk_setup_on_host(k, init, tfd_setup_scatter, st);
  if (tfd_setup_scatter(k, init, st) != TFD_OK) return tfd_status_code(st);
  k->compute = k_scatter;
  return TFD_OK;
}
