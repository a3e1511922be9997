/* Device kernels of the products (k_matmul.c, k_batch.c): MatMul, _FusedMatMul (bias and an
 * activation in the product's epilogue) and BatchMatMulV2, whose broadcast batch dimensions become
 * per-batch offsets into the operands; the CPU kernels' checks and messages. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "../core/checked.h"
#include "device_kernel.h"
#include "kernel_shared.h"

typedef struct matmul_params {
  bool fused, batch;
  tfd_activation act;
  double alpha; /* LeakyRelu's slope */
} matmul_params;

static void k_matmul(tfd_kernel *k, tfd_kernel_ctx *c) {
  const matmul_params *p = k->dk_params;
  const tfd_device_math *m = tfd_dk_math(k, c);
  if (!m) return;
  tfd_tensor *a = c->inputs[0], *b = c->inputs[1];
  if (tfd_tensor_ndims(a) != 2 || tfd_tensor_ndims(b) != 2) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "In[0] and In[1] must be matrices, got ranks %d and %d",
                    tfd_tensor_ndims(a), tfd_tensor_ndims(b));
    return;
  }
  int64_t ar = tfd_tensor_dim(a, 0), ac = tfd_tensor_dim(a, 1), br = tfd_tensor_dim(b, 0), bc = tfd_tensor_dim(b, 1);
  int64_t rows = k->ta ? ac : ar, ka = k->ta ? ar : ac, kb = k->tb ? bc : br, n = k->tb ? br : bc;
  if (ka != kb) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Matrix size-incompatible: In[0]: [%lld,%lld], In[1]: [%lld,%lld]",
                    (long long)ar, (long long)ac, (long long)br, (long long)bc);
    return;
  }
  if (ar > INT32_MAX || ac > INT32_MAX || br > INT32_MAX || bc > INT32_MAX) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "MatMul supports dimensions up to 2^31-1, got [%lld,%lld] x [%lld,%lld]",
                    (long long)ar, (long long)ac, (long long)br, (long long)bc);
    return;
  }
  tfd_tensor *bias = NULL;
  if (p->fused) {
    bias = c->inputs[2];
    if (tfd_tensor_dtype(bias) != tfd_tensor_dtype(a) || tfd_tensor_ndims(bias) != 1 || tfd_tensor_dim(bias, 0) != n) {
      tfd_shape s;
      char buf[96];
      tfd_shape_of_tensor(bias, &s);
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "bias must be a %s vector of %lld elements (the product's columns), got %s %s",
                      tfd_dtype_name(tfd_tensor_dtype(a)), (long long)n, tfd_dtype_name(tfd_tensor_dtype(bias)),
                      tfd_shape_string(&s, buf, sizeof buf));
      return;
    }
  }
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

static void k_batch_matmul(tfd_kernel *k, tfd_kernel_ctx *c) {
  const tfd_device_math *m = tfd_dk_math(k, c);
  if (!m) return;
  tfd_tensor *x = c->inputs[0], *y = c->inputs[1];
  tfd_dtype dt = tfd_tensor_dtype(x);
  if (dt != tfd_tensor_dtype(y) || (dt != TFD_FLOAT32 && dt != TFD_FLOAT64)) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "x and y must both be float32 or both float64, got %s and %s",
                    tfd_dtype_name(dt), tfd_dtype_name(tfd_tensor_dtype(y)));
    return;
  }
  int rx = tfd_tensor_ndims(x), ry = tfd_tensor_ndims(y);
  if (rx < 2 || ry < 2) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "x and y must have rank >= 2, got ranks %d and %d", rx, ry);
    return;
  }
  bool adj_x = k->ta, adj_y = k->tb;
  int64_t rows = tfd_tensor_dim(x, rx - (adj_x ? 1 : 2)), kx = tfd_tensor_dim(x, rx - (adj_x ? 2 : 1));
  int64_t ky = tfd_tensor_dim(y, ry - (adj_y ? 1 : 2)), n = tfd_tensor_dim(y, ry - (adj_y ? 2 : 1));
  if (kx != ky) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Matrix size-incompatible: x's inner dimension is %lld, y's is %lld",
                    (long long)kx, (long long)ky);
    return;
  }
  if (rows > INT_MAX || n > INT_MAX || kx > INT_MAX) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "matrix dimensions above %d are not supported", INT_MAX);
    return;
  }
  int nb = (rx > ry ? rx : ry) - 2;
  if (nb + 2 > TFD_MAX_DIMS) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "the output would have more than %d dimensions", TFD_MAX_DIMS);
    return;
  }
  int64_t dims[TFD_MAX_DIMS], sx[TFD_MAX_DIMS], sy[TFD_MAX_DIMS];
  int64_t stride_x = rows * kx, stride_y = kx * n;
  for (int d = nb - 1; d >= 0; d--) {
    int ix = d - (nb - (rx - 2)), iy = d - (nb - (ry - 2));
    int64_t dx = ix >= 0 ? tfd_tensor_dim(x, ix) : 1, dy = iy >= 0 ? tfd_tensor_dim(y, iy) : 1;
    if (dx != dy && dx != 1 && dy != 1) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "batch dimensions do not broadcast: %lld vs. %lld in dimension %d",
                      (long long)dx, (long long)dy, d);
      return;
    }
    dims[d] = dx == 1 ? dy : dx;
    sx[d] = dx == 1 ? 0 : stride_x;
    sy[d] = dy == 1 ? 0 : stride_y;
    if (!tfd_checked_mul(stride_x, dx, &stride_x) || !tfd_checked_mul(stride_y, dy, &stride_y)) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "the inputs' sizes overflow");
      return;
    }
  }
  dims[nb] = rows;
  dims[nb + 1] = n;
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
  for (int64_t i = 0; i < batches; i++) {
    int64_t ox = 0, oy = 0, rem = i;
    for (int d = nb - 1; d >= 0; d--) {
      int64_t idx = rem % dims[d];
      rem /= dims[d];
      ox += idx * sx[d];
      oy += idx * sy[d];
    }
    off[i] = ox;
    off[batches + i] = oy;
  }
  tfd_dm_matmul q = {dt, tfd_tensor_const_data(x), tfd_tensor_const_data(y), tfd_tensor_data(out), rows, n, kx, batches,
                     adj_x, adj_y, off, off + batches, NULL, TFD_ACT_NONE, 0};
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
  p->batch = strcmp(op, "BatchMatMulV2") == 0;
  if (p->batch) {
    k->ta = tfd_attr_bool(init->node, "adj_x", false);
    k->tb = tfd_attr_bool(init->node, "adj_y", false);
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
