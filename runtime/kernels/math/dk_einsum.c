/* Device kernel of Einsum: k_einsum.c's algorithm (einsum_logic.h) over the device's memory. An
 * operand's reduction or layout change is the math's copy_walk (a strided gather into the layout,
 * repeated labels being one stride that walks the diagonal), followed by a reduce over the summed
 * labels when there are any; the contraction is one batched matmul with the broadcast batches as
 * offsets; the result's permutation into the output is a copy_walk read in the output's order.
 * float32 and float64; other dtypes, and outputs that repeat a label (whose off-diagonal zeros the
 * walk cannot write), run the CPU kernel on host copies. */
#include <stdlib.h>
#include <string.h>

#include "../device_kernel.h"
#include "einsum_logic.h"

typedef struct dev_exec {
  tfd_einsum_exec ex;
  const tfd_device_math *m;
  tfd_tensor *temps[6];
  int ntemps;
} dev_exec;

static void *dev_temp(tfd_einsum_exec *ex, size_t bytes) {
  dev_exec *e = (dev_exec *)ex;
  int64_t n = (int64_t)bytes;
  tfd_tensor *t = e->ntemps < 6 ? tfd_dk_alloc_device(ex->c, ex->k, TFD_UINT8, &n, 1) : NULL;
  if (!t) {
    if (e->ntemps >= 6) tfd_kernel_fail(ex->c, ex->k, TFD_INTERNAL, "Einsum: too many temporaries");
    return NULL;
  }
  e->temps[e->ntemps++] = t;
  return tfd_tensor_data(t);
}

static tfd_tensor *dev_output(tfd_einsum_exec *ex, tfd_dtype dt, const int64_t *dims, int nd) {
  return tfd_dk_alloc(ex->c, ex->k, dt, dims, nd);
}

static bool dev_copy_walk(tfd_einsum_exec *ex, size_t es, int nd, const int64_t *dims, const int64_t *strides,
                          const void *src, void *dst) {
  dev_exec *e = (dev_exec *)ex;
  if (nd > TFD_MAX_DIMS) {
    tfd_kernel_fail(ex->c, ex->k, TFD_UNIMPLEMENTED, "Einsum on %s: a layout change over %d dimensions (at most %d)",
                    e->m->name, nd, TFD_MAX_DIMS);
    return false;
  }
  int64_t st[2][TFD_MAX_DIMS];
  for (int d = 0; d < nd; d++) st[0][d] = strides[d];
  tfd_dk_strides(nd, dims, st[1]);
  tfd_dm_walk w;
  if (tfd_dk_walk(&w, nd, dims, 2, st, NULL) == 0) return true;
  tfd_status s = TFD_STATUS_INIT;
  return tfd_dk_ok(ex->k, ex->c, e->m->copy_walk(ex->c->device, es, src, dst, &w, &s), &s);
}

static bool dev_walk(tfd_einsum_exec *ex, tfd_dtype dt, const tfd_einsum_walk *w, const void *src, void *dst, bool dense) {
  dev_exec *e = (dev_exec *)ex;
  size_t es = tfd_dtype_size(dt);
  int64_t dims[TFD_EINSUM_MAX_AXES], strides[TFD_EINSUM_MAX_AXES], keep = 1, sum = 1;
  int nd = 0;
  if (!dense) { /* the output's order: the keep dimensions sorted by their output stride, largest first */
    bool used[TFD_EINSUM_MAX_AXES] = {false};
    for (int a = 0; a < w->nk; a++) {
      int best = -1;
      for (int j = 0; j < w->nk; j++)
        if (!used[j] && (best < 0 || w->kdst[j] > w->kdst[best])) best = j;
      used[best] = true;
      dims[nd] = w->ksize[best], strides[nd++] = w->ksrc[best];
    }
    return dev_copy_walk(ex, es, nd, dims, strides, src, dst);
  }
  for (int j = 0; j < w->nk; j++) dims[nd] = w->ksize[j], strides[nd++] = w->ksrc[j], keep *= w->ksize[j];
  if (w->ns == 0) return dev_copy_walk(ex, es, nd, dims, strides, src, dst);
  /* summed labels: gather [keep..., sum...] densely, then sum the trailing block */
  for (int j = 0; j < w->ns; j++) dims[nd] = w->ssize[j], strides[nd++] = w->ssrc[j], sum *= w->ssize[j];
  void *t = dev_temp(ex, (size_t)(keep * sum > 0 ? keep * sum : 1) * es);
  if (!t || !dev_copy_walk(ex, es, nd, dims, strides, src, t)) return false;
  tfd_status s = TFD_STATUS_INIT;
  return tfd_dk_ok(ex->k, ex->c, e->m->reduce(ex->c->device, TFD_DM_SUM, dt, t, keep, sum, 1, dst, &s), &s);
}

static bool dev_copy(tfd_einsum_exec *ex, void *dst, const void *src, size_t bytes) {
  return tfd_dk_copy_flat(ex->k, ex->c, ((dev_exec *)ex)->m, 1, src, 1, dst, (int64_t)bytes);
}

static bool dev_zero(tfd_einsum_exec *ex, void *dst, size_t bytes) {
  unsigned char zero = 0;
  tfd_status s = TFD_STATUS_INIT;
  return bytes == 0 ||
         tfd_dk_ok(ex->k, ex->c, ((dev_exec *)ex)->m->fill(ex->c->device, 1, &zero, dst, (int64_t)bytes, &s), &s);
}

static bool dev_matmul(tfd_einsum_exec *ex, tfd_dtype dt, const tfd_batch_matmul_shape *sh, int64_t batches, bool ta,
                       bool tb, const void *a, const void *b, void *c) {
  int64_t *off = malloc((size_t)(2 * batches + 1) * sizeof *off);
  if (!off) {
    tfd_kernel_fail(ex->c, ex->k, TFD_RESOURCE_EXHAUSTED, "out of memory");
    return false;
  }
  for (int64_t bt = 0; bt < batches; bt++) tfd_batch_matmul_offsets(sh, bt, &off[bt], &off[batches + bt]);
  tfd_dm_matmul q = {.dtype = dt, .a = a, .b = b, .c = c, .m = sh->m, .n = sh->n, .k = sh->k, .batch = batches,
                     .transpose_a = ta, .transpose_b = tb, .a_offsets = off, .b_offsets = off + batches};
  tfd_status s = TFD_STATUS_INIT;
  bool ok = tfd_dk_ok(ex->k, ex->c, ((dev_exec *)ex)->m->matmul(ex->c->device, &q, &s), &s);
  free(off);
  return ok;
}

static void dev_release(tfd_einsum_exec *ex) {
  dev_exec *e = (dev_exec *)ex;
  for (int i = 0; i < e->ntemps; i++) tfd_tensor_unref(e->temps[i]);
  e->ntemps = 0;
}

static void k_einsum(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_device_math *m = tfd_dk_math(k, c);
  if (!m) return;
  dev_exec e = {{dev_temp, dev_output, dev_walk, dev_copy, dev_zero, dev_matmul, dev_release, k, c, NULL}, m, {NULL}, 0};
  tfd_einsum_run(k, c, &e.ex);
}

tfd_code tfd_dk_setup_einsum(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  if (tfd_setup_einsum(k, init, st) != TFD_OK) return tfd_status_code(st);
  const tfd_einsum_spec *sp = k->state;
  bool repeated = false; /* an output label twice: a diagonal to inflate */
  for (int i = 0; i < sp->num_out; i++)
    for (int j = 0; j < i; j++) repeated |= sp->out[i] == sp->out[j];
  bool on_device = (k->T == TFD_FLOAT32 || k->T == TFD_FLOAT64) && !repeated;
  if (!on_device) { /* the CPU kernel on host copies: set up again through the host path */
    if (k->cleanup) k->cleanup(k);
    k->cleanup = NULL;
    return tfd_dk_setup_on_host(k, init, tfd_setup_einsum, st);
  }
  k->compute = k_einsum;
  return TFD_OK;
}
