/* The argument checks and shapes of the products, which their CPU kernels (k_matmul.c, k_batch.c)
 * and device kernels (dk_matmul.c) share: MatMul and _FusedMatMul (its fused_ops and bias), and
 * BatchMatMulV2's numpy-style broadcast of the batch dimensions. False (or an error code) with the
 * error reported against the node. */
#ifndef TFDEV_RUNTIME_MATMUL_LOGIC_H
#define TFDEV_RUNTIME_MATMUL_LOGIC_H

#include "../nn/activation.h"
#include "../kernel.h"

/* _FusedMatMul's fused_ops: BiasAdd, then at most one activation (*act); else UNIMPLEMENTED
 * "Fusion is not implemented" naming the node and the list. */
tfd_code tfd_matmul_parse_fused(const tfd_node_def *node, tfd_activation *act, tfd_status *status);

/* MatMul (a, b; k->ta, k->tb transpose them) and _FusedMatMul (a, b, bias: `fused`): op(a) [m, k]
 * times op(b) [k, n], each dimension within int32, the bias a vector of n of a's dtype. */
typedef struct tfd_matmul_shape {
  int64_t m, n, k;
  int64_t a_cols, b_cols; /* a's and b's row strides, as stored */
} tfd_matmul_shape;
bool tfd_matmul_check(tfd_kernel_context *c, const tfd_kernel *k, bool fused, tfd_matmul_shape *s);

/* BatchMatMulV2 (x [..., m, k], y [..., k, n]; adj_x and adj_y in k->ta and k->tb), float32 or
 * float64 alike: the output's dims, [batch..., m, n], and each operand's element stride per output
 * batch dimension (0 where it broadcasts). */
typedef struct tfd_batch_matmul_shape {
  int nb; /* batch dimensions */
  int64_t m, n, k;
  int64_t dims[TFD_MAX_DIMS];
  int64_t x_strides[TFD_MAX_DIMS], y_strides[TFD_MAX_DIMS];
} tfd_batch_matmul_shape;
bool tfd_batch_matmul_check(tfd_kernel_context *c, const tfd_kernel *k, tfd_batch_matmul_shape *s);
/* BatchMatMul (TensorFlow 1's op) before BatchMatMulV2's checks: equal ranks of at least 2 and equal
 * batch dimensions, no broadcasting; false after failing the kernel with TensorFlow's texts. */
bool tfd_batch_matmul_v1_check(tfd_kernel_context *c, const tfd_kernel *k);

/* Where output batch i (row-major over s->dims[:nb]) reads x and y, in elements. Inline: the CPU
 * kernel asks once per product, between BLAS calls. */
static inline void tfd_batch_matmul_offsets(const tfd_batch_matmul_shape *s, int64_t i, int64_t *x_off, int64_t *y_off) {
  int64_t ox = 0, oy = 0, rem = i;
  for (int d = s->nb - 1; d >= 0; d--) {
    int64_t idx = rem % s->dims[d];
    rem /= s->dims[d];
    ox += idx * s->x_strides[d];
    oy += idx * s->y_strides[d];
  }
  *x_off = ox;
  *y_off = oy;
}

/* C [m, n] = op(A) op(B) for int32 or int64 (dt), as TensorFlow's Eigen kernels compute them:
 * wrapping on overflow. A is [m, k] in rows lda apart ([k, m] when ta), B [k, n] in rows ldb apart
 * ([n, k] when tb), C dense. A plain loop: integer products in models are small (shapes, indices). */
void tfd_int_matmul(tfd_dtype dt, const void *A, int64_t lda, bool ta, const void *B, int64_t ldb, bool tb, void *C,
                    int64_t m, int64_t n, int64_t k);

#endif
