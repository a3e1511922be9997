/* BatchMatMulV2, float32 and float64 (int32 and int64 by tfd_int_matmul): x [..., M, K] times y [..., K, N] (adj_x and adj_y take
 * the other two dimensions transposed), batch dimensions broadcast numpy-style; one
 * cblas_sgemm/cblas_dgemm per output matrix. */
#include <cblas.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/status_internal.h"
#include "../kernel.h"
#include "matmul_logic.h"

void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);

void tfd_batch_matmul_compute(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *x = c->inputs[0], *y = c->inputs[1];
  tfd_dtype dt = tfd_tensor_dtype(x);
  bool adj_x = k->ta, adj_y = k->tb;
  tfd_batch_matmul_shape s;
  if (!tfd_batch_matmul_check(c, k, &s)) return;
  int nb = s.nb;
  int64_t m = s.m, n = s.n, kx = s.k, *dims = s.dims;
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
    int64_t offx, offy;
    tfd_batch_matmul_offsets(&s, i, &offx, &offy);
    if (dt == TFD_INT32 || dt == TFD_INT64)
      tfd_int_matmul(dt, a + offx * (int64_t)es, lda, adj_x, b + offy * (int64_t)es, ldb, adj_y, o + i * mat_o * (int64_t)es, M, N,
                     K);
    else if (dt == TFD_FLOAT32)
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
  k->compute = tfd_batch_matmul_compute;
  return TFD_OK;
}
