/* A hand-written AVX-512 float32 GEMM whose right-hand side is packed once, for MatMul on one thread.
 *
 * C[m,n] = act(A[m,k] B[k,n] + bias[n]): A row-major with row stride lda (packed per call into the
 * tile's layout), B a constant weight matrix packed once, bias and activation applied while the tile
 * is in registers. It exists for weights that come from L3 on every run (too large for L2), where it
 * prefetches what oneDNN 2.6's packed matmul waits for: on the MLP's 64-row layers 175 against 163
 * GFLOPS (numbers in gemm_avx512.c, and in k_matmul.c, which decides when it runs). It is built into
 * every x86-64 library without -march flags: the AVX-512 code is compiled per function and chosen at
 * run time; on a CPU without AVX-512F (or not x86-64) tfd_gemm_available is false, tfd_gemm_pack
 * returns NULL and callers keep their other path. */
#ifndef TFDEV_RUNTIME_GEMM_AVX512_H
#define TFDEV_RUNTIME_GEMM_AVX512_H

#include <stdbool.h>
#include <stdint.h>

#include "../nn/activation.h"

typedef struct tfd_gemm_packed tfd_gemm_packed;

/* Whether this CPU runs the kernel (AVX-512F, with the OS saving its registers; checked once). */
bool tfd_gemm_available(void);

/* B packed for tfd_gemm_run: B is k x n row-major, or with transpose_b its transpose stored n x k
 * row-major (op(B) = B^T). k, n >= 1. NULL when the kernel is not available on this CPU, a size is
 * out of range, or memory runs out. The caller frees it with tfd_gemm_packed_free; B itself is
 * not referenced after the call. */
tfd_gemm_packed *tfd_gemm_pack(const float *B, int64_t k, int64_t n, bool transpose_b);
void tfd_gemm_packed_free(tfd_gemm_packed *p);
int64_t tfd_gemm_packed_k(const tfd_gemm_packed *p);
int64_t tfd_gemm_packed_n(const tfd_gemm_packed *p);

/* C = act(A op(B) + bias) for m >= 1 rows: A is m x k with row stride lda >= k, C m x n with row
 * stride ldc >= n (columns n..ldc-1 are not touched), bias n floats or NULL (no bias), alpha
 * LeakyRelu's slope. Reads p only, so calls may share p across threads. Runs on the calling
 * thread; A's packed rows take a heap buffer of at most 64 x 400 floats (a stack buffer of 8 rows
 * when the heap has none). A NULL p or m < 1 does nothing. */
void tfd_gemm_run(const tfd_gemm_packed *p, const float *A, int64_t lda, int64_t m, const float *bias,
                  tfd_activation act, float alpha, float *C, int64_t ldc);

#endif
