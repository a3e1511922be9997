/* BatchMatMulV2, float32 and float64: x [..., M, K] times y [..., K, N] (adj_x and adj_y take
 * the other two dimensions transposed), batch dimensions broadcast numpy-style; one
 * cblas_sgemm/cblas_dgemm per output matrix. */
#include <cblas.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "../core/checked.h"
#include "../core/status_internal.h"
#include "kernel.h"

void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);

static void k_batch_matmul(tfd_kernel *k, tfd_kernel_ctx *c) {
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
  int64_t m = tfd_tensor_dim(x, rx - (adj_x ? 1 : 2)), kx = tfd_tensor_dim(x, rx - (adj_x ? 2 : 1));
  int64_t ky = tfd_tensor_dim(y, ry - (adj_y ? 1 : 2)), n = tfd_tensor_dim(y, ry - (adj_y ? 2 : 1));
  if (kx != ky) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Matrix size-incompatible: x's inner dimension is %lld, y's is %lld",
                    (long long)kx, (long long)ky);
    return;
  }
  if (m > INT_MAX || n > INT_MAX || kx > INT_MAX) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "matrix dimensions above %d are not supported", INT_MAX);
    return;
  }
  /* Broadcast batch dimensions, with each input's element stride per output batch dimension (0 where it broadcasts). */
  int nb = (rx > ry ? rx : ry) - 2;
  if (nb + 2 > TFD_MAX_DIMS) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "the output would have more than %d dimensions", TFD_MAX_DIMS);
    return;
  }
  int64_t dims[TFD_MAX_DIMS], sx[TFD_MAX_DIMS], sy[TFD_MAX_DIMS];
  int64_t mat_x = m * kx, mat_y = kx * n; /* each below INT_MAX squared */
  int64_t stride_x = mat_x, stride_y = mat_y;
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
  dims[nb] = m;
  dims[nb + 1] = n;
  tfd_tensor *out = tfd_kernel_alloc(c, k, dt, dims, nb + 2); /* checks the element count */
  if (!out) return;
  c->outputs[0] = out;
  int64_t batches = 1, mat_o = m * n; /* m * n and, when it is not 0, batches * m * n: the output's count */
  if (mat_o == 0) return;
  for (int d = 0; d < nb; d++) batches *= dims[d];
  if (batches == 0) return;
  size_t es = tfd_dtype_size(dt);
  if (kx == 0) {
    memset(tfd_tensor_data(out), 0, (size_t)(batches * mat_o) * es);
    return;
  }
  const char *a = tfd_tensor_const_data(x), *b = tfd_tensor_const_data(y);
  char *o = tfd_tensor_data(out);
  int M = (int)m, N = (int)n, K = (int)kx;
  int lda = adj_x ? M : K, ldb = adj_y ? K : N;
  enum CBLAS_TRANSPOSE ta = adj_x ? CblasTrans : CblasNoTrans, tb = adj_y ? CblasTrans : CblasNoTrans;
  /* As MatMul does (k_matmul.c): OpenBLAS gets the device's intra-op thread count. */
  int threads = c->intra_pool ? tfd_threadpool_num_threads(c->intra_pool) : 1;
  if (openblas_get_num_threads() != threads) openblas_set_num_threads(threads);
  for (int64_t i = 0; i < batches; i++) {
    int64_t offx = 0, offy = 0, rem = i;
    for (int d = nb - 1; d >= 0; d--) {
      int64_t idx = rem % dims[d];
      rem /= dims[d];
      offx += idx * sx[d];
      offy += idx * sy[d];
    }
    if (dt == TFD_FLOAT32)
      cblas_sgemm(CblasRowMajor, ta, tb, M, N, K, 1.0f, (const float *)a + offx, lda, (const float *)b + offy, ldb, 0.0f,
                  (float *)o + i * mat_o, N);
    else
      cblas_dgemm(CblasRowMajor, ta, tb, M, N, K, 1.0, (const double *)a + offx, lda, (const double *)b + offy, ldb, 0.0,
                  (double *)o + i * mat_o, N);
  }
}

tfd_code tfd_setup_batch_matmul(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  (void)st;
  k->ta = tfd_attr_bool(init->node, "adj_x", false);
  k->tb = tfd_attr_bool(init->node, "adj_y", false);
  k->compute = k_batch_matmul;
  return TFD_OK;
}
