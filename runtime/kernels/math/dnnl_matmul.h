/* float32 matrix products on oneDNN with weights packed once (see k_matmul.c for when).
 *
 * A tfd_dnnl_matmul belongs to one MatMul kernel. It keeps, for each of the
 * last few (m, n, k) shapes and weight buffers it was run with, a oneDNN
 * matmul primitive (bias and activation in its epilogue) and the weights
 * reordered into that primitive's layout. The weights must not change while
 * their buffer is in use: the kernel only uses this for weights the graph
 * optimiser marked constant. Built without oneDNN, _new returns NULL and the
 * kernel stays on OpenBLAS. */
#ifndef TFDEV_RUNTIME_DNNL_MATMUL_H
#define TFDEV_RUNTIME_DNNL_MATMUL_H

#include <stdbool.h>
#include <stdint.h>

#include "../nn/activation.h"
#include "tfdev/status.h"

/* Products with fewer rows than this stay on OpenBLAS's sgemv (measured: a
 * one-row oneDNN matmul is slower; two rows and up it wins). */
#define TFD_DNNL_MIN_ROWS 2

typedef struct tfd_dnnl_matmul tfd_dnnl_matmul;

/* op(A)[m,k] x op(B)[k,n] (+ bias[n]) then act. NULL when oneDNN is not built
 * in or cannot make an engine; the caller frees with tfd_dnnl_matmul_free. */
tfd_dnnl_matmul *tfd_dnnl_matmul_new(bool transpose_a, bool transpose_b, bool bias, tfd_activation act, float alpha);
void tfd_dnnl_matmul_free(tfd_dnnl_matmul *p);

/* C = act(op(A) op(B) + bias) with at most `threads` threads. Thread-safe;
 * calls on one object are serialised. A is m x k (k x m transposed), B is
 * k x n (n x k transposed), both row-major. Errors are INTERNAL (oneDNN's
 * status named) or RESOURCE_EXHAUSTED. */
tfd_code tfd_dnnl_matmul_run(tfd_dnnl_matmul *p, const float *A, const float *B, const float *bias, float *C, int64_t m,
                             int64_t n, int64_t k, int threads, tfd_status *status);

#endif
