/* MatMul on OpenBLAS: sgemm/dgemm, and sgemv/dgemv when the left side has one row
 * (sgemm with one row can be several times slower than sgemv). */
#include <cblas.h>
#include <stdint.h>
#include <string.h>

#include "kernel.h"

static void k_matmul(tfd_kernel *k, tfd_kernel_ctx *c) {
  tfd_tensor *a = c->inputs[0], *b = c->inputs[1];
  if (tfd_tensor_ndims(a) != 2 || tfd_tensor_ndims(b) != 2) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "In[0] and In[1] must be matrices, got ranks %d and %d",
                    tfd_tensor_ndims(a), tfd_tensor_ndims(b));
    return;
  }
  int64_t ar = tfd_tensor_dim(a, 0), ac = tfd_tensor_dim(a, 1), br = tfd_tensor_dim(b, 0), bc = tfd_tensor_dim(b, 1);
  int64_t m = k->ta ? ac : ar, ka = k->ta ? ar : ac, kb = k->tb ? bc : br, n = k->tb ? br : bc;
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
  int64_t dims[2] = {m, n};
  tfd_tensor *out = tfd_kernel_alloc(c, k, tfd_tensor_dtype(a), dims, 2);
  if (!out) return;
  c->outputs[0] = out;
  if (m == 0 || n == 0) return;
  bool f32 = tfd_tensor_dtype(a) == TFD_FLOAT32;
  if (ka == 0) {
    memset(tfd_tensor_data(out), 0, tfd_tensor_byte_size(out));
    return;
  }
  const void *A = tfd_tensor_const_data(a), *B = tfd_tensor_const_data(b);
  void *C = tfd_tensor_data(out);
  if (m == 1) {
    /* y[n] = op(B)^T x: B is stored br x bc, row-major. */
    enum CBLAS_TRANSPOSE t = k->tb ? CblasNoTrans : CblasTrans;
    int inc_x = k->ta ? (int)ac : 1; /* a transposed with one column: x is strided */
    if (f32) cblas_sgemv(CblasRowMajor, t, (int)br, (int)bc, 1.0f, B, (int)bc, A, inc_x, 0.0f, C, 1);
    else cblas_dgemv(CblasRowMajor, t, (int)br, (int)bc, 1.0, B, (int)bc, A, inc_x, 0.0, C, 1);
    return;
  }
  enum CBLAS_TRANSPOSE ta = k->ta ? CblasTrans : CblasNoTrans, tb = k->tb ? CblasTrans : CblasNoTrans;
  if (f32)
    cblas_sgemm(CblasRowMajor, ta, tb, (int)m, (int)n, (int)ka, 1.0f, A, (int)ac, B, (int)bc, 0.0f, C, (int)n);
  else
    cblas_dgemm(CblasRowMajor, ta, tb, (int)m, (int)n, (int)ka, 1.0, A, (int)ac, B, (int)bc, 0.0, C, (int)n);
}

tfd_code tfd_setup_matmul(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  (void)st;
  k->ta = tfd_attr_bool(init->node, "transpose_a", false);
  k->tb = tfd_attr_bool(init->node, "transpose_b", false);
  k->compute = k_matmul;
  return TFD_OK;
}
