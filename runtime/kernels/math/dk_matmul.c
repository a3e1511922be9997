/* Device kernels of the products (k_matmul.c, k_batch.c): MatMul, _FusedMatMul (bias and an
 * activation in the product's epilogue) and BatchMatMulV2 (and TensorFlow 1's BatchMatMul), whose
 * broadcast batch dimensions become per-batch offsets into the operands; the checks and shapes are matmul_logic.h's, as the CPU
 * kernels'. */
#include <stdlib.h>
#include <string.h>

#include "../device_kernel.h"
#include "matmul_logic.h"

typedef struct matmul_params {
  bool fused, batch, v1; /* v1: BatchMatMul, TensorFlow 1's, whose batch dims must be equal */
  tfd_activation act;
  double alpha; /* LeakyRelu's slope */
} matmul_params;

static void k_matmul(tfd_kernel *k, tfd_kernel_context *c) {
  const matmul_params *p = k->dk_params;
  const tfd_device_math *m = tfd_dk_math(k, c);
  if (!m) return;
  tfd_tensor *a = c->inputs[0], *b = c->inputs[1];
  tfd_matmul_shape s;
  if (!tfd_matmul_check(c, k, p->fused, &s)) return;
  int64_t rows = s.m, n = s.n, ka = s.k;
  tfd_tensor *bias = p->fused ? c->inputs[2] : NULL;
  int64_t dims[2] = {rows, n};
  tfd_tensor *out = tfd_dk_alloc(c, k, tfd_tensor_dtype(a), dims, 2);
  if (!out) return;
  if (rows > 0 && n > 0) {
    /* float64 LeakyRelu takes its slope as a double, which the math's epilogue (a float) cannot. */
    bool leaky64 = p->fused && p->act == TFD_ACT_LEAKY_RELU && tfd_tensor_dtype(a) == TFD_FLOAT64;
    tfd_dm_matmul q = {tfd_tensor_dtype(a), tfd_tensor_const_data(a), tfd_tensor_const_data(b), tfd_tensor_data(out),
                       rows, n, ka, 1, k->ta, k->tb, NULL, NULL, bias ? tfd_tensor_const_data(bias) : NULL,
                       p->fused && !leaky64 ? p->act : TFD_ACT_NONE, (float)p->alpha};
    tfd_status st = TFD_STATUS_INIT;
    if (!tfd_dk_ok(k, c, m->matmul(c->device, &q, &st), &st) ||
        (leaky64 && !tfd_dk_leaky_relu_f64(k, c, m, out, out, p->alpha))) {
      tfd_tensor_unref(out);
      return;
    }
  }
  c->outputs[0] = out;
}

static void k_batch_matmul(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_device_math *m = tfd_dk_math(k, c);
  if (!m) return;
  tfd_tensor *x = c->inputs[0], *y = c->inputs[1];
  tfd_dtype dt = tfd_tensor_dtype(x);
  tfd_batch_matmul_shape s;
  if (((matmul_params *)k->dk_params)->v1 && !tfd_batch_matmul_v1_check(c, k)) return;
  if (!tfd_batch_matmul_check(c, k, &s)) return;
  int nb = s.nb;
  int64_t rows = s.m, n = s.n, kx = s.k, *dims = s.dims;
  tfd_tensor *out = tfd_dk_alloc(c, k, dt, dims, nb + 2);
  if (!out) return;
  int64_t batches = 1;
  for (int d = 0; d < nb; d++) batches *= dims[d];
  if (rows * n == 0 || batches == 0) {
    c->outputs[0] = out;
    return;
  }
  /* Broadcast batches read their operands at offsets, which the math takes per batch. */
  int64_t *off = malloc((size_t)batches * 2 * sizeof *off);
  if (!off) {
    tfd_tensor_unref(out);
    tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory for %lld batch offsets", (long long)batches);
    return;
  }
  for (int64_t i = 0; i < batches; i++) tfd_batch_matmul_offsets(&s, i, &off[i], &off[batches + i]);
  tfd_dm_matmul q = {dt, tfd_tensor_const_data(x), tfd_tensor_const_data(y), tfd_tensor_data(out), rows, n, kx, batches,
                     k->ta, k->tb, off, off + batches, NULL, TFD_ACT_NONE, 0};
  tfd_status st = TFD_STATUS_INIT;
  bool ok = tfd_dk_ok(k, c, m->matmul(c->device, &q, &st), &st);
  free(off);
  if (ok) c->outputs[0] = out;
  else tfd_tensor_unref(out);
}

tfd_code tfd_dk_setup_matmul(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  const char *op = init->op->name;
  matmul_params *p = calloc(1, sizeof *p);
  if (!p) return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
  k->dk_params = p;
  p->v1 = strcmp(op, "BatchMatMul") == 0;
  p->batch = p->v1 || strcmp(op, "BatchMatMulV2") == 0;
  if (p->batch) { /* the CPU setup reads adj_x and adj_y into k->ta and k->tb, and keeps nothing else */
    if (tfd_setup_batch_matmul(k, init, st) != TFD_OK) return tfd_status_code(st);
    k->compute = k_batch_matmul;
    return TFD_OK;
  }
  k->ta = tfd_attr_bool(init->node, "transpose_a", false);
  k->tb = tfd_attr_bool(init->node, "transpose_b", false);
  p->fused = strcmp(op, "_FusedMatMul") == 0;
  p->alpha = tfd_attr_float(init->node, "leakyrelu_alpha", 0.2);
  if (p->fused && tfd_matmul_parse_fused(init->node, &p->act, st) != TFD_OK) return tfd_status_code(st);
  k->compute = k_matmul;
  return TFD_OK;
}
