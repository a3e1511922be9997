/* matmul_logic.h: the products' checks and shapes, for their CPU and device kernels. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/checked.h"
#include "../../core/status_internal.h"
#include "../kernel_shared.h"
#include "matmul_logic.h"

/* The fused_ops TensorFlow's _FusedMatMul kernel accepts: BiasAdd, then at most one activation. */
tfd_code tfd_matmul_parse_fused(const tfd_node_def *node, tfd_activation *act, tfd_status *st) {
  const tfd_attr_value *v = tfd_node_def_attr(node, "fused_ops");
  size_t len = v && v->type == TFD_ATTR_LIST_STRING ? v->list_len : 0;
  int64_t num_args = tfd_attr_int(node, "num_args", 0);
  bool ok = len >= 1 && len <= 2 && strcmp(v->list_s[0], "BiasAdd") == 0 && num_args == 1;
  *act = TFD_ACT_NONE;
  if (ok && len == 2) ok = (*act = tfd_activation_of_op(v->list_s[1])) != TFD_ACT_NONE;
  if (ok) return TFD_OK;
  char *list = NULL;
  size_t list_len = 0;
  FILE *f = open_memstream(&list, &list_len);
  for (size_t i = 0; f && i < len; i++) fprintf(f, "%s%s", i ? "," : "", v->list_s[i]);
  if (f) fclose(f);
  tfd_status_setf(st, TFD_UNIMPLEMENTED, "node '%s' (_FusedMatMul): Fusion is not implemented: [%s]%s",
                  tfd_node_def_name(node), list ? list : "",
                  num_args != 1 && len >= 1 ? " (BiasAdd takes num_args = 1)" : "");
  free(list);
  return TFD_UNIMPLEMENTED;
}

bool tfd_matmul_check(tfd_kernel_context *c, const tfd_kernel *k, bool fused, tfd_matmul_shape *s) {
  tfd_tensor *a = c->inputs[0], *b = c->inputs[1];
  if (tfd_tensor_ndims(a) != 2 || tfd_tensor_ndims(b) != 2) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "In[0] and In[1] must be matrices, got ranks %d and %d",
                    tfd_tensor_ndims(a), tfd_tensor_ndims(b));
    return false;
  }
  int64_t ar = tfd_tensor_dim(a, 0), ac = tfd_tensor_dim(a, 1), br = tfd_tensor_dim(b, 0), bc = tfd_tensor_dim(b, 1);
  int64_t m = k->ta ? ac : ar, ka = k->ta ? ar : ac, kb = k->tb ? bc : br, n = k->tb ? br : bc;
  if (ka != kb) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Matrix size-incompatible: In[0]: [%lld,%lld], In[1]: [%lld,%lld]",
                    (long long)ar, (long long)ac, (long long)br, (long long)bc);
    return false;
  }
  if (ar > INT32_MAX || ac > INT32_MAX || br > INT32_MAX || bc > INT32_MAX) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "MatMul supports dimensions up to 2^31-1, got [%lld,%lld] x [%lld,%lld]",
                    (long long)ar, (long long)ac, (long long)br, (long long)bc);
    return false;
  }
  if (fused) {
    tfd_tensor *bias = c->inputs[2];
    if (tfd_tensor_dtype(bias) != tfd_tensor_dtype(a) || tfd_tensor_ndims(bias) != 1 || tfd_tensor_dim(bias, 0) != n) {
      tfd_shape bs;
      char buf[96];
      tfd_shape_of_tensor(bias, &bs);
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "bias must be %s %s vector of %lld elements (the product's columns), got %s %s",
                      tfd_article(tfd_dtype_name(tfd_tensor_dtype(a))), tfd_dtype_name(tfd_tensor_dtype(a)), (long long)n, tfd_dtype_name(tfd_tensor_dtype(bias)),
                      tfd_shape_string(&bs, buf, sizeof buf));
      return false;
    }
  }
  *s = (tfd_matmul_shape){m, n, ka, ac, bc};
  return true;
}

bool tfd_batch_matmul_check(tfd_kernel_context *c, const tfd_kernel *k, tfd_batch_matmul_shape *s) {
  tfd_tensor *x = c->inputs[0], *y = c->inputs[1];
  tfd_dtype dt = tfd_tensor_dtype(x);
  if (dt != tfd_tensor_dtype(y) || !(TFD_TYPES_NUMBER & (1u << dt))) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                    "x and y must have one dtype of float32, float64, int32 or int64, got %s and %s", tfd_dtype_name(dt),
                    tfd_dtype_name(tfd_tensor_dtype(y)));
    return false;
  }
  int rx = tfd_tensor_ndims(x), ry = tfd_tensor_ndims(y);
  if (rx < 2 || ry < 2) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "x and y must have rank >= 2, got ranks %d and %d", rx, ry);
    return false;
  }
  bool adj_x = k->ta, adj_y = k->tb;
  int64_t m = tfd_tensor_dim(x, rx - (adj_x ? 1 : 2)), kx = tfd_tensor_dim(x, rx - (adj_x ? 2 : 1));
  int64_t ky = tfd_tensor_dim(y, ry - (adj_y ? 1 : 2)), n = tfd_tensor_dim(y, ry - (adj_y ? 2 : 1));
  if (kx != ky) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Matrix size-incompatible: x's inner dimension is %lld, y's is %lld",
                    (long long)kx, (long long)ky);
    return false;
  }
  if (m > INT_MAX || n > INT_MAX || kx > INT_MAX) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "matrix dimensions above %d are not supported", INT_MAX);
    return false;
  }
  int nb = (rx > ry ? rx : ry) - 2;
  if (nb + 2 > TFD_MAX_DIMS) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "the output would have more than %d dimensions", TFD_MAX_DIMS);
    return false;
  }
  int64_t stride_x = m * kx, stride_y = kx * n; /* each below INT_MAX squared */
  for (int d = nb - 1; d >= 0; d--) {
    int ix = d - (nb - (rx - 2)), iy = d - (nb - (ry - 2));
    int64_t dx = ix >= 0 ? tfd_tensor_dim(x, ix) : 1, dy = iy >= 0 ? tfd_tensor_dim(y, iy) : 1;
    if (dx != dy && dx != 1 && dy != 1) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "batch dimensions do not broadcast: %lld vs. %lld in dimension %d",
                      (long long)dx, (long long)dy, d);
      return false;
    }
    s->dims[d] = dx == 1 ? dy : dx;
    s->x_strides[d] = dx == 1 ? 0 : stride_x;
    s->y_strides[d] = dy == 1 ? 0 : stride_y;
    if (!tfd_checked_mul(stride_x, dx, &stride_x) || !tfd_checked_mul(stride_y, dy, &stride_y)) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "the inputs' sizes overflow");
      return false;
    }
  }
  s->dims[nb] = m;
  s->dims[nb + 1] = n;
  s->nb = nb, s->m = m, s->n = n, s->k = kx;
  return true;
}

/* Unsigned arithmetic: overflow wraps, defined in C. */
#define INT_MATMUL(T, U)                                                                                 \
  static void int_matmul_##T(const T *A, int64_t lda, bool ta, const T *B, int64_t ldb, bool tb, T *C, \
                             int64_t m, int64_t n, int64_t k) {                                          \
    for (int64_t i = 0; i < m; i++) {                                                                    \
      U *row = (U *)(C + i * n);                                                                         \
      for (int64_t j = 0; j < n; j++) row[j] = 0;                                                        \
      for (int64_t p = 0; p < k; p++) {                                                                  \
        U a = (U)(ta ? A[p * lda + i] : A[i * lda + p]);                                                 \
        for (int64_t j = 0; j < n; j++) row[j] += a * (U)(tb ? B[j * ldb + p] : B[p * ldb + j]);        \
      }                                                                                                  \
    }                                                                                                    \
  }
INT_MATMUL(int32_t, uint32_t)
INT_MATMUL(int64_t, uint64_t)

void tfd_int_matmul(tfd_dtype dt, const void *A, int64_t lda, bool ta, const void *B, int64_t ldb, bool tb, void *C,
                    int64_t m, int64_t n, int64_t k) {
  if (dt == TFD_INT32) int_matmul_int32_t(A, lda, ta, B, ldb, tb, C, m, n, k);
  else int_matmul_int64_t(A, lda, ta, B, ldb, tb, C, m, n, k);
}

bool tfd_batch_matmul_v1_check(tfd_kernel_context *c, const tfd_kernel *k) {
  tfd_tensor *x = c->inputs[0], *y = c->inputs[1];
  char a[TFD_SHAPE_TEXT_CAP], b[TFD_SHAPE_TEXT_CAP];
  int nd = tfd_tensor_ndims(x);
  if (nd != tfd_tensor_ndims(y)) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "In[0] and In[1] has different ndims: %s vs. %s",
                    tfd_tensor_shape_text(a, sizeof a, x, 0), tfd_tensor_shape_text(b, sizeof b, y, 0));
    return false;
  }
  if (nd < 2) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "In[0] and In[1] ndims must be >= 2: %d", nd);
    return false;
  }
  for (int d = 0; d < nd - 2; d++)
    if (tfd_tensor_dim(x, d) != tfd_tensor_dim(y, d)) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "In[0].dim(%d) and In[1].dim(%d) must be the same: %s vs %s", d, d,
                      tfd_tensor_shape_text(a, sizeof a, x, 0), tfd_tensor_shape_text(b, sizeof b, y, 0));
      return false;
    }
  return true;
}
