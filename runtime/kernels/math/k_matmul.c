/* MatMul and _FusedMatMul (MatMul + BiasAdd + an activation, TensorFlow's remapper output).
 *
 * Where the work runs, and why:
 * - A float32 product whose weights (input 1) the graph optimiser marked constant
 *   (`_tfd_weights_constant`), too large to stay in L2, with A not transposed, at least 8 rows and
 *   one intra-op thread, runs on tfdev's own AVX-512 GEMM (gemm_avx512.c) where the CPU has
 *   AVX-512: the weights are packed once per kernel into its panels (use_own_gemm says when, with
 *   the measurements).
 * - Other float32 products with constant weights and at least TFD_DNNL_MIN_ROWS rows go to
 *   oneDNN when it is built in: the weights are reordered once into the primitive's own blocked
 *   layout and kept by the kernel (one executor's kernel: once per executor, not once per run),
 *   and bias and activation run in the primitive's epilogue. Measured on Sapphire Rapids, the
 *   MLP 784-512-512-10 layers: 1.2-1.4x faster than cblas_sgemm at 64 and 256 rows.
 * - Everything else is OpenBLAS, with its thread count set to the device's intra-op threads. A
 *   one-row product is sgemv (sgemm with one row is several times slower); it stays on OpenBLAS
 *   even with constant weights because oneDNN's one-row matmul measured 10% slower there.
 * - The fused epilogue of the OpenBLAS path writes the bias into the output first and lets the
 *   BLAS accumulate onto it (beta = 1), then applies the activation in one pass. */
#include <cblas.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../core/status_internal.h"
#include "../nn/activation.h"
#include "dnnl_matmul.h"
#include "gemm_avx512.h"
#include "../kernel.h"
#include "matmul_logic.h"

void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);

/* Weights packed for the AVX-512 GEMM, shared by the runs using them: a run holds a reference
 * while it computes, so that another step repacking (a new weight buffer) never frees them under
 * it. */
typedef struct packed_weights {
  atomic_int refs;
  const float *B; /* the buffer and shape they were packed from */
  int64_t k, n;
  tfd_gemm_packed *gemm;
} packed_weights;

/* What a MatMul node computes beyond the product. */
typedef struct matmul_attrs {
  bool fused;    /* _FusedMatMul: input 2 is the bias */
  tfd_activation act;
  double alpha; /* LeakyRelu's slope */
  bool weights_constant;
  tfd_dnnl_matmul *dnnl; /* packed-weight primitives, when oneDNN takes this node */
  bool own_gemm;         /* float32, constant weights, A not transposed, and the CPU has AVX-512 */
  int64_t own_gemm_min_bytes; /* the smallest weights the AVX-512 GEMM takes (use_own_gemm) */
  pthread_mutex_t packed_mu; /* guards `packed` (taken and replaced; the packing runs under it) */
  packed_weights *packed;    /* NULL until the first run that uses the AVX-512 GEMM */
} matmul_attrs;

static void packed_release(packed_weights *pw) {
  if (pw && atomic_fetch_sub(&pw->refs, 1) == 1) {
    tfd_gemm_packed_free(pw->gemm);
    free(pw);
  }
}

/* The weights in B (k x n, or n x k with transpose_b) packed, with a reference the caller
 * releases; packed on the first run and again when the buffer or the shape changes. NULL when
 * memory runs out (the caller takes another path). */
static packed_weights *packed_acquire(matmul_attrs *attrs, const float *B, int64_t k, int64_t n, bool tb) {
  pthread_mutex_lock(&attrs->packed_mu);
  packed_weights *pw = attrs->packed;
  if (!pw || pw->B != B || pw->k != k || pw->n != n) {
    packed_weights *fresh = malloc(sizeof *fresh);
    tfd_gemm_packed *gemm = fresh ? tfd_gemm_pack(B, k, n, tb) : NULL;
    if (gemm) {
      atomic_init(&fresh->refs, 1);
      fresh->B = B, fresh->k = k, fresh->n = n, fresh->gemm = gemm;
      packed_release(attrs->packed);
      attrs->packed = pw = fresh;
    } else {
      free(fresh);
      pw = NULL;
    }
  }
  if (pw) atomic_fetch_add(&pw->refs, 1);
  pthread_mutex_unlock(&attrs->packed_mu);
  return pw;
}

/* Where a float32 product with constant weights runs on one intra-op thread: tfdev's AVX-512 GEMM
 * or oneDNN 2.6's packed matmul. Measured on a Sapphire Rapids class Xeon (2 MB L2 a core), one
 * thread, the two alternating in one process so that each finds the other's weights gone:
 * - Weights that cannot stay in L2 (the MLP's 784x512 and 512x512 layers: 2.6 MB of weights in
 *   all) come from L3 on every run; this GEMM prefetches the next B panel while it computes and
 *   oneDNN waits for them: [64,784]x[784,512] 293 vs 316 us (175 vs 163 GFLOPS), [64,512]x[512,512]
 *   191 vs 201, [64,2048]x[2048,2048] 3086 vs 3501. At 256 rows the two tie (774 vs 778 us on
 *   [256,512]x[512,512], 1210 vs 1191 on [256,784]x[784,512]).
 * - Weights that fit in half the L2 stay there between runs, and there oneDNN's kernel, which reads
 *   A in place where this one packs it, is 4-8% faster ([64,512]x[512,128] 47 vs 50 us,
 *   [256,512]x[512,256] 380 vs 397): those stay on oneDNN.
 * - Under 8 rows both stream the weights and oneDNN is up to 10% faster ([4,2048]x[2048,2048]
 *   601 vs 661 us); from 8 rows this GEMM is ([8,784]x[784,512] 60 vs 73 us).
 * With more threads oneDNN splits the work (this GEMM runs on the calling thread only), and one row
 * stays on OpenBLAS's sgemv (see TFD_DNNL_MIN_ROWS). */
#define OWN_GEMM_MIN_ROWS 8

static bool use_own_gemm(const matmul_attrs *attrs, bool ta, int64_t m, int64_t n, int64_t k, int threads) {
  return attrs->own_gemm && !ta && threads <= 1 && m >= OWN_GEMM_MIN_ROWS &&
         k * n * (int64_t)sizeof(float) >= attrs->own_gemm_min_bytes;
}

/* Half the L2 of a core (sysconf; 1 MiB when it does not say): weights at least this large are
 * taken to come from L3 run to run. */
static int64_t big_weights_bytes(void) {
  long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  return l2 > 0 ? l2 / 2 : 1 << 20;
}

/* The product in one OpenBLAS call. */
typedef struct gemm_job {
  const matmul_attrs *attrs;
  bool f32, ta, tb;
  int64_t m, n, k, lda, ldb;
  const void *A, *B, *bias;
  void *C;
} gemm_job;

/* OpenBLAS's thread count is process-wide; tfdev sets it to the device's intra-op thread count
 * before each product (a load and, only when it differs, a store), so that intra_op_threads bounds
 * OpenBLAS as it bounds tfdev's pool. Splitting products over tfdev's own pool with OpenBLAS kept
 * single-threaded was measured too: OpenBLAS's threads then spin beside the pool's after any
 * other OpenBLAS user in the process, and small products ran serially. Sessions with different
 * intra_op_threads running products at the same moment can see the other's count. */
static void set_blas_threads(int threads) {
  if (openblas_get_num_threads() != threads) openblas_set_num_threads(threads);
}

static void blas_matmul(const gemm_job *j, int threads) {
  size_t es = j->f32 ? sizeof(float) : sizeof(double);
  bool fused = j->attrs->fused;
  char *C = j->C;
  /* The bias goes in first and the product accumulates onto it (beta = 1). */
  if (fused)
    for (int64_t r = 0; r < j->m; r++) memcpy(C + (size_t)(r * j->n) * es, j->bias, (size_t)j->n * es);
  if (j->k == 0) {
    if (!fused) memset(C, 0, (size_t)(j->m * j->n) * es);
  } else {
    set_blas_threads(threads);
    if (j->m == 1) {
      /* y = op(B)^T x; B is stored br x bc. */
      enum CBLAS_TRANSPOSE t = j->tb ? CblasNoTrans : CblasTrans;
      int br = (int)(j->tb ? j->n : j->k), bc = (int)(j->tb ? j->k : j->n);
      int inc_x = j->ta ? (int)j->lda : 1; /* a transposed with one column: x is strided */
      if (j->f32)
        cblas_sgemv(CblasRowMajor, t, br, bc, 1.0f, j->B, (int)j->ldb, j->A, inc_x, fused ? 1.0f : 0.0f, j->C, 1);
      else
        cblas_dgemv(CblasRowMajor, t, br, bc, 1.0, j->B, (int)j->ldb, j->A, inc_x, fused ? 1.0 : 0.0, j->C, 1);
    } else {
      enum CBLAS_TRANSPOSE ta = j->ta ? CblasTrans : CblasNoTrans, tb = j->tb ? CblasTrans : CblasNoTrans;
      if (j->f32)
        cblas_sgemm(CblasRowMajor, ta, tb, (int)j->m, (int)j->n, (int)j->k, 1.0f, j->A, (int)j->lda, j->B,
                    (int)j->ldb, fused ? 1.0f : 0.0f, j->C, (int)j->n);
      else
        cblas_dgemm(CblasRowMajor, ta, tb, (int)j->m, (int)j->n, (int)j->k, 1.0, j->A, (int)j->lda, j->B,
                    (int)j->ldb, fused ? 1.0 : 0.0, j->C, (int)j->n);
    }
  }
  if (!j->attrs->act) return;
  if (j->f32) tfd_activation_f32(j->attrs->act, j->C, j->C, j->m * j->n, (float)j->attrs->alpha);
  else tfd_activation_f64(j->attrs->act, j->C, j->C, j->m * j->n, j->attrs->alpha);
}

/* One product's operands, for rows [r0, r0 + rows) of its output. */
typedef struct matmul_run {
  matmul_attrs *attrs;
  const tfd_kernel *k;
  bool f32;
  int64_t m, n, ka, ac, bc;
  const void *A, *B, *bias;
  void *C;
  int threads;
} matmul_run;

static void matmul_rows(const matmul_run *r, int64_t r0, int64_t rows) {
  matmul_attrs *attrs = r->attrs;
  size_t es = r->f32 ? sizeof(float) : sizeof(double);
  /* Row r0 of op(A): row r0 of A, or column r0 of A stored transposed. */
  const char *A = (const char *)r->A + (size_t)(r->k->ta ? r0 : r0 * r->ac) * es;
  char *C = (char *)r->C + (size_t)(r0 * r->n) * es;
  if (r->f32 && use_own_gemm(attrs, r->k->ta, rows, r->n, r->ka, r->threads)) {
    packed_weights *pw = packed_acquire(attrs, r->B, r->ka, r->n, r->k->tb);
    if (pw) {
      tfd_gemm_run(pw->gemm, (const float *)A, r->ka, rows, r->bias, attrs->act, (float)attrs->alpha, (float *)C, r->n);
      packed_release(pw);
      return;
    }
  }
  /* oneDNN's matrices are dense: a panel of a transposed A (its columns) is not one. */
  if (attrs->dnnl && r->f32 && r->ka > 0 && rows >= TFD_DNNL_MIN_ROWS && (!r->k->ta || rows == r->m)) {
    /* A oneDNN failure (a shape its build cannot do, memory) leaves the product to OpenBLAS. */
    tfd_status st = TFD_STATUS_INIT;
    tfd_code code = tfd_dnnl_matmul_run(attrs->dnnl, (const float *)A, r->B, r->bias, (float *)C, rows, r->n, r->ka,
                                        r->threads, &st);
    tfd_status_clear(&st);
    if (code == TFD_OK) return;
  }
  gemm_job j = {attrs, r->f32, r->k->ta, r->k->tb, rows, r->n, r->ka, r->ac, r->bc, A, r->B, r->bias, C};
  blas_matmul(&j, r->threads > 0 ? r->threads : 1);
}

/* Under a deadline a large product runs in panels of output rows, and the step's deadline and
 * cancellation are looked at between panels: one 1000x1000x1000 product (2 Gflop, 10-60 ms on one
 * core) then overruns its deadline by a panel, not by itself. Panels are equal but the last, so
 * oneDNN makes at most two more primitives for a node. A panel is about this many flops (2-4 ms on
 * one core of this machine, an AMD EPYC with AVX2) where the weights are packed once (oneDNN, the
 * AVX-512 GEMM): measured on one thread, [1000,1000]x[1000,1000] took the same time in panels of
 * 2^26 flops as in one call. OpenBLAS packs B again in every call, so its panels are four times
 * larger: 2^26 cost 35% more, 2^27 30%, 2^28 10% (22 ms in one call). Without a deadline a product
 * is one call, as it always was. */
#define PANEL_FLOPS_PACKED ((int64_t)1 << 27)
#define PANEL_FLOPS_BLAS ((int64_t)1 << 28)

static int64_t panel_rows(int64_t m, int64_t n, int64_t k, int64_t budget) {
  int64_t per_row = 2 * n * (k > 0 ? k : 1), whole = per_row * m;
  if (per_row <= 0 || whole / m != per_row || whole <= 2 * budget) return m; /* small (or overflowing): one */
  int64_t panels = (whole + budget - 1) / budget;
  return (m + panels - 1) / panels;
}

static void k_matmul(tfd_kernel *k, tfd_kernel_context *c) {
  matmul_attrs *attrs = k->state;
  tfd_tensor *a = c->inputs[0], *b = c->inputs[1];
  tfd_matmul_shape s;
  if (!tfd_matmul_check(c, k, attrs->fused, &s)) return;
  int64_t m = s.m, n = s.n;
  tfd_tensor *bias = attrs->fused ? c->inputs[2] : NULL;
  int64_t dims[2] = {m, n};
  tfd_tensor *out = tfd_kernel_alloc(c, k, tfd_tensor_dtype(a), dims, 2);
  if (!out) return;
  c->outputs[0] = out;
  if (m == 0 || n == 0) return;
  matmul_run r = {attrs, k, tfd_tensor_dtype(a) == TFD_FLOAT32, m, n, s.k, s.a_cols, s.b_cols,
                  tfd_tensor_const_data(a), tfd_tensor_const_data(b), bias ? tfd_tensor_const_data(bias) : NULL,
                  tfd_tensor_data(out), c->intra_pool ? tfd_threadpool_num_threads(c->intra_pool) : 1};
  if (tfd_tensor_dtype(a) == TFD_INT32 || tfd_tensor_dtype(a) == TFD_INT64) {
    tfd_int_matmul(tfd_tensor_dtype(a), r.A, r.ac, k->ta, r.B, r.bc, k->tb, r.C, m, n, s.k);
    return;
  }
  int64_t per = m;
  if (tfd_kernel_deadline(c)) {
    bool packed = r.f32 && ((attrs->dnnl && !k->ta) || use_own_gemm(attrs, k->ta, m, n, s.k, r.threads));
    per = panel_rows(m, n, s.k, packed ? PANEL_FLOPS_PACKED : PANEL_FLOPS_BLAS);
  }
  if (per >= m) {
    matmul_rows(&r, 0, m);
    return;
  }
  for (int64_t r0 = 0; r0 < m; r0 += per) {
    if (tfd_kernel_should_stop(c)) {
      tfd_kernel_fail_stopped(c);
      return;
    }
    matmul_rows(&r, r0, m - r0 < per ? m - r0 : per);
  }
}

static void matmul_cleanup(tfd_kernel *k) {
  matmul_attrs *attrs = k->state;
  if (!attrs) return;
  tfd_dnnl_matmul_free(attrs->dnnl);
  packed_release(attrs->packed);
  pthread_mutex_destroy(&attrs->packed_mu);
  free(attrs);
  k->state = NULL;
}

tfd_code tfd_setup_matmul(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  matmul_attrs *attrs = calloc(1, sizeof *attrs);
  if (!attrs) return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
  pthread_mutex_init(&attrs->packed_mu, NULL);
  k->state = attrs;
  k->cleanup = matmul_cleanup;
  k->ta = tfd_attr_bool(init->node, "transpose_a", false);
  k->tb = tfd_attr_bool(init->node, "transpose_b", false);
  k->compute = k_matmul;
  attrs->fused = strcmp(init->op->name, "_FusedMatMul") == 0;
  attrs->alpha = tfd_attr_float(init->node, "leakyrelu_alpha", 0.2);
  if (attrs->fused && tfd_matmul_parse_fused(init->node, &attrs->act, st) != TFD_OK) return tfd_status_code(st);
  attrs->weights_constant = tfd_attr_bool(init->node, TFD_WEIGHTS_CONSTANT_ATTR, false);
  if (attrs->weights_constant && init->in_types && init->in_types[0] == TFD_FLOAT32) {
    attrs->dnnl = tfd_dnnl_matmul_new(k->ta, k->tb, attrs->fused, attrs->act, (float)attrs->alpha);
    attrs->own_gemm = !k->ta && tfd_gemm_available();
    attrs->own_gemm_min_bytes = big_weights_bytes();
  }
  return TFD_OK;
}
