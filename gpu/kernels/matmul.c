/* MatMul, BatchMatMulV2 and _FusedMatMul on CUDA GPUs (device_math.h's matmul entry).
 *
 * Row-major C = op(A) op(B) is the column-major product C^T = op(B)^T op(A)^T, so the libraries get
 * B where they expect A and the sizes swapped; C^T's rows are C's columns, which is where a
 * per-column bias goes, as cuBLASLt's bias epilogue (one value per row of D) wants.
 *
 * Batches whose operands sit at evenly spaced offsets (plain batches, and broadcasts of one matrix,
 * spacing 0) are one strided cuBLASLt call, with bias and Relu in its epilogue; cuBLASLt's choice of
 * algorithm is asked once per shape, alignment and epilogue and kept in the device's cache. The
 * other activations run as a kernel after it. When cuBLASLt offers no algorithm the product is a
 * strided cublasGemmStridedBatchedEx; batches at uneven offsets (BatchMatMulV2 broadcasting batch
 * dimensions) are one cublasGemmBatchedEx over pointer arrays copied to the device. Both then take
 * bias and activation from a kernel. float32 computes in float32 (no TF32), as the CPU does. */
#include <cublasLt.h>
#include <cublas_v2.h>
#include <stdlib.h>
#include <string.h>

#include "../../runtime/core/log.h"
#include "cuda_kernels.h"
#include "cuda_libs.h"

/* cuBLAS and cuBLASLt, opened by ensure_handles before any other call of this file reaches them. */
#define CUBLAS tfd_cuda_blas_load(NULL, 0)

/* The most workspace cuBLASLt may ask for. */
#define LT_WORKSPACE_LIMIT ((uint64_t)32 << 20)
/* Shapes whose cuBLASLt choice a device keeps. */
#define MATMUL_CACHE_ENTRIES 256

enum { KEY_MATMUL = 1 };

typedef struct lt_choice {
  int found; /* 0: cuBLASLt has no algorithm for this problem */
  cublasLtMatmulAlgo_t algo;
  size_t workspace;
} lt_choice;

void tfd_cuda_matmul_release(tfd_cuda_kernels *k) {
  if (k->lt) CUBLAS->cublasLtDestroy((cublasLtHandle_t)k->lt); /* handles exist only once the libraries loaded */
  if (k->blas) CUBLAS->cublasDestroy((cublasHandle_t)k->blas);
  tfd_algo_cache_free(k->matmul_algos);
  k->lt = k->blas = NULL;
  k->matmul_algos = NULL;
}

static tfd_code blas_failed(const tfd_cuda_call *c, const char *what, cublasStatus_t s, tfd_status *st) {
  return tfd_cuda_failf(c, TFD_INTERNAL, st, "%s failed: %s", what, CUBLAS->cublasGetStatusString(s));
}

/* With blas_mu held: the handles and the cache, made on first use. */
static tfd_code ensure_handles(const tfd_cuda_call *c, tfd_status *st) {
  tfd_cuda_kernels *k = c->k;
  cublasStatus_t s;
  char why[512];
  if (!tfd_cuda_blas_load(why, sizeof why))
    return tfd_cuda_failf(c, TFD_FAILED_PRECONDITION, st, "products on a GPU need cuBLAS: %s", why);
  if (!k->blas) {
    cublasHandle_t h = NULL;
    if ((s = CUBLAS->cublasCreate(&h)) != CUBLAS_STATUS_SUCCESS) return blas_failed(c, "cublasCreate", s, st);
    if ((s = CUBLAS->cublasSetStream(h, c->l.stream)) != CUBLAS_STATUS_SUCCESS) {
      CUBLAS->cublasDestroy(h);
      return blas_failed(c, "cublasSetStream", s, st);
    }
    k->blas = h;
  }
  if (!k->lt) {
    cublasLtHandle_t h = NULL;
    if ((s = CUBLAS->cublasLtCreate(&h)) != CUBLAS_STATUS_SUCCESS) return blas_failed(c, "cublasLtCreate", s, st);
    k->lt = h;
  }
  if (!k->matmul_algos && !(k->matmul_algos = tfd_algo_cache_new(MATMUL_CACHE_ENTRIES, sizeof(lt_choice))))
    return tfd_cuda_failf(c, TFD_RESOURCE_EXHAUSTED, st, "out of memory for the cuBLASLt algorithm cache");
  /* The call's stream, every call: it is a capture stream while this thread records a CUDA graph. */
  if ((s = CUBLAS->cublasSetStream((cublasHandle_t)k->blas, c->l.stream)) != CUBLAS_STATUS_SUCCESS)
    return blas_failed(c, "cublasSetStream", s, st);
  return TFD_OK;
}

/* The alignment (a power of two, at most 256) that every matrix of a strided batch keeps. */
static uint32_t alignment(const void *p, int64_t stride_bytes) {
  uint64_t bits = (uint64_t)(uintptr_t)p | (uint64_t)stride_bytes | 256u;
  return (uint32_t)(bits & (~bits + 1));
}

/* The offsets of a batch as base + b * stride (stride >= 0); false when they are not evenly spaced. */
static bool evenly_spaced(const int64_t *off, int64_t batch, int64_t dense, int64_t *base, int64_t *stride) {
  if (!off) {
    *base = 0;
    *stride = dense;
    return true;
  }
  *base = off[0];
  *stride = batch > 1 ? off[1] - off[0] : 0;
  if (*stride < 0) return false;
  for (int64_t b = 2; b < batch; b++)
    if (off[b] != off[0] + b * *stride) return false;
  return true;
}

/* The column-major problem the libraries see (see the top of this file). */
typedef struct gemm {
  cudaDataType_t type;
  cublasComputeType_t compute;
  size_t eb;
  cublasOperation_t op_a, op_b;    /* of the library's A (our B) and B (our A) */
  int64_t m, n, k;                 /* library sizes: m = our n, n = our m */
  int64_t lda, ldb, ldc;
  int64_t a_rows, a_cols, b_rows, b_cols; /* stored shapes (before op) */
  const char *a, *b;               /* library A (our B) and B (our A) */
  char *c;
} gemm;

static gemm make_gemm(const tfd_dm_matmul *p) {
  gemm g;
  bool f64 = p->dtype == TFD_FLOAT64;
  g.type = f64 ? CUDA_R_64F : CUDA_R_32F;
  g.compute = f64 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F;
  g.eb = f64 ? 8 : 4;
  g.m = p->n;
  g.n = p->m;
  g.k = p->k;
  g.op_a = p->transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  g.op_b = p->transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  g.lda = p->transpose_b ? p->k : p->n;
  g.ldb = p->transpose_a ? p->m : p->k;
  g.ldc = p->n;
  g.a_rows = p->transpose_b ? p->k : p->n;
  g.a_cols = p->transpose_b ? p->n : p->k;
  g.b_rows = p->transpose_a ? p->m : p->k;
  g.b_cols = p->transpose_a ? p->k : p->m;
  g.a = p->b;
  g.b = p->a;
  g.c = p->c;
  return g;
}

static const double one_d = 1.0, zero_d = 0.0;
static const float one_f = 1.0f, zero_f = 0.0f;

/* ---- cuBLASLt: one strided batch of `count` matrices (count <= INT32_MAX), a and b the library's
 * A and B (our B and A) at strides sa and sb, bias and Relu in the epilogue ----
 * *done false (and OK) when cuBLASLt has no algorithm for it: the caller falls back to cuBLAS. */
static tfd_code lt_matmul(const tfd_cuda_call *c, const tfd_dm_matmul *p, const gemm *g, const char *a, const char *b,
                          char *out, int64_t sa, int64_t sb, int64_t count, bool *done, tfd_status *st) {
  *done = false;
  cublasLtHandle_t lt = (cublasLtHandle_t)c->k->lt;
  cublasLtEpilogue_t epi = p->bias ? (p->act == TFD_ACT_RELU ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS)
                                   : (p->act == TFD_ACT_RELU ? CUBLASLT_EPILOGUE_RELU : CUBLASLT_EPILOGUE_DEFAULT);
  int64_t sc = g->m * g->n;
  uint32_t align_a = alignment(a, sa * (int64_t)g->eb), align_b = alignment(b, sb * (int64_t)g->eb),
           align_c = alignment(out, sc * (int64_t)g->eb);
  cublasLtMatmulDesc_t desc = NULL;
  cublasLtMatrixLayout_t la = NULL, lb = NULL, lc = NULL;
  cublasLtMatmulPreference_t pref = NULL;
  cublasStatus_t s;
  const char *what = "cublasLtMatmulDescCreate";
  int32_t batch = (int32_t)count;
  uint64_t ws_limit = LT_WORKSPACE_LIMIT;
  lt_choice choice;
  memset(&choice, 0, sizeof choice);
  void *ws = NULL;
  tfd_code code = TFD_OK;
#define LT(call, name)                         \
  if (s == CUBLAS_STATUS_SUCCESS) {            \
    what = (name);                             \
    s = (call);                                \
  }
  s = CUBLAS_STATUS_SUCCESS;
  LT(CUBLAS->cublasLtMatmulDescCreate(&desc, g->compute, g->type), "cublasLtMatmulDescCreate");
  LT(CUBLAS->cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &g->op_a, sizeof g->op_a),
     "cublasLtMatmulDescSetAttribute(TRANSA)");
  LT(CUBLAS->cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &g->op_b, sizeof g->op_b),
     "cublasLtMatmulDescSetAttribute(TRANSB)");
  LT(CUBLAS->cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi),
     "cublasLtMatmulDescSetAttribute(EPILOGUE)");
  if (p->bias)
    LT(CUBLAS->cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &p->bias, sizeof p->bias),
       "cublasLtMatmulDescSetAttribute(BIAS_POINTER)");
  LT(CUBLAS->cublasLtMatrixLayoutCreate(&la, g->type, (uint64_t)g->a_rows, (uint64_t)g->a_cols, g->lda), "cublasLtMatrixLayoutCreate(A)");
  LT(CUBLAS->cublasLtMatrixLayoutCreate(&lb, g->type, (uint64_t)g->b_rows, (uint64_t)g->b_cols, g->ldb), "cublasLtMatrixLayoutCreate(B)");
  LT(CUBLAS->cublasLtMatrixLayoutCreate(&lc, g->type, (uint64_t)g->m, (uint64_t)g->n, g->ldc), "cublasLtMatrixLayoutCreate(C)");
  if (count > 1) {
    LT(CUBLAS->cublasLtMatrixLayoutSetAttribute(la, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof batch), "cublasLtMatrixLayoutSetAttribute(A batch)");
    LT(CUBLAS->cublasLtMatrixLayoutSetAttribute(la, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &sa, sizeof sa), "cublasLtMatrixLayoutSetAttribute(A stride)");
    LT(CUBLAS->cublasLtMatrixLayoutSetAttribute(lb, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof batch), "cublasLtMatrixLayoutSetAttribute(B batch)");
    LT(CUBLAS->cublasLtMatrixLayoutSetAttribute(lb, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &sb, sizeof sb), "cublasLtMatrixLayoutSetAttribute(B stride)");
    LT(CUBLAS->cublasLtMatrixLayoutSetAttribute(lc, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof batch), "cublasLtMatrixLayoutSetAttribute(C batch)");
    LT(CUBLAS->cublasLtMatrixLayoutSetAttribute(lc, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &sc, sizeof sc), "cublasLtMatrixLayoutSetAttribute(C stride)");
  }
  if (s != CUBLAS_STATUS_SUCCESS) {
    code = blas_failed(c, what, s, st);
    goto out;
  }
  tfd_algo_key key;
  tfd_algo_key_init(&key, KEY_MATMUL);
  int64_t words[] = {p->dtype, g->m, g->n, g->k, count, g->op_a, g->op_b, sa, sb, epi, align_a, align_b, align_c,
                     p->bias ? (int64_t)alignment(p->bias, 0) : 0};
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) tfd_algo_key_add(&key, words[i]);
  if (!tfd_algo_cache_get(c->k->matmul_algos, &key, &choice)) {
    cublasLtMatmulHeuristicResult_t result;
    int returned = 0;
    memset(&result, 0, sizeof result);
    LT(CUBLAS->cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
    LT(CUBLAS->cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_limit, sizeof ws_limit),
       "cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)");
    LT(CUBLAS->cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &align_a, sizeof align_a),
       "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT_A)");
    LT(CUBLAS->cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &align_b, sizeof align_b),
       "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT_B)");
    LT(CUBLAS->cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &align_c, sizeof align_c),
       "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT_C)");
    LT(CUBLAS->cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &align_c, sizeof align_c),
       "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT_D)");
    if (s != CUBLAS_STATUS_SUCCESS) {
      code = blas_failed(c, what, s, st);
      goto out;
    }
    s = CUBLAS->cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, lc, lc, pref, 1, &result, &returned);
    /* No algorithm is an answer (the fallback runs), not a failure: remember it too. */
    choice.found = s == CUBLAS_STATUS_SUCCESS && returned > 0 && result.state == CUBLAS_STATUS_SUCCESS;
    if (choice.found) {
      choice.algo = result.algo;
      choice.workspace = result.workspaceSize;
    }
    if (!choice.found)
      tfd_log(TFD_LOG_DEBUG, "%s: matmul %s [%lld x %lld x %lld] batch %lld: no cuBLASLt algorithm (%s); cuBLAS runs it",
              c->ctx->name, tfd_cuda_dtype_name(p->dtype), (long long)p->m, (long long)p->k, (long long)p->n,
              (long long)count, CUBLAS->cublasGetStatusString(s));
    s = CUBLAS_STATUS_SUCCESS;
    tfd_algo_cache_put(c->k->matmul_algos, &key, &choice);
  }
  if (!choice.found) goto out;
  if (choice.workspace && !(ws = tfd_cuda_workspace(c, choice.workspace, st))) {
    code = TFD_RESOURCE_EXHAUSTED;
    goto out;
  }
  bool f64 = p->dtype == TFD_FLOAT64;
  s = CUBLAS->cublasLtMatmul(lt, desc, f64 ? (const void *)&one_d : (const void *)&one_f, a, la, b, lb,
                     f64 ? (const void *)&zero_d : (const void *)&zero_f, out, lc, out, lc, &choice.algo, ws,
                     choice.workspace, c->l.stream);
  tfd_cuda_workspace_free(c, ws, choice.workspace);
  if (s == CUBLAS_STATUS_NOT_SUPPORTED) { /* refused at run time after all: cuBLAS from now on */
    choice.found = 0;
    tfd_algo_cache_put(c->k->matmul_algos, &key, &choice);
  } else if (s != CUBLAS_STATUS_SUCCESS) {
    code = blas_failed(c, "cublasLtMatmul", s, st);
  } else {
    *done = true;
  }
out:
#undef LT
  if (pref) CUBLAS->cublasLtMatmulPreferenceDestroy(pref);
  if (lc) CUBLAS->cublasLtMatrixLayoutDestroy(lc);
  if (lb) CUBLAS->cublasLtMatrixLayoutDestroy(lb);
  if (la) CUBLAS->cublasLtMatrixLayoutDestroy(la);
  if (desc) CUBLAS->cublasLtMatmulDescDestroy(desc);
  return code;
}

/* ---- cuBLAS: strided, or over pointer arrays ---- */
static tfd_code strided_gemm(const tfd_cuda_call *c, const tfd_dm_matmul *p, const gemm *g, int64_t base_a,
                             int64_t base_b, int64_t sa, int64_t sb, tfd_status *st) {
  bool f64 = p->dtype == TFD_FLOAT64;
  cublasStatus_t s = CUBLAS->cublasGemmStridedBatchedEx_64(
      (cublasHandle_t)c->k->blas, g->op_a, g->op_b, g->m, g->n, g->k, f64 ? (const void *)&one_d : (const void *)&one_f,
      g->a + base_b * (int64_t)g->eb, g->type, g->lda, sb, g->b + base_a * (int64_t)g->eb, g->type, g->ldb, sa,
      f64 ? (const void *)&zero_d : (const void *)&zero_f, g->c, g->type, g->ldc, g->m * g->n, p->batch, g->compute,
      CUBLAS_GEMM_DEFAULT);
  return s == CUBLAS_STATUS_SUCCESS ? TFD_OK : blas_failed(c, "cublasGemmStridedBatchedEx", s, st);
}

static tfd_code batched_gemm(const tfd_cuda_call *c, const tfd_dm_matmul *p, const gemm *g, tfd_status *st) {
  int64_t batch = p->batch;
  size_t bytes = (size_t)batch * 3 * sizeof(void *);
  const void **host = malloc(bytes);
  if (!host) return tfd_cuda_failf(c, TFD_RESOURCE_EXHAUSTED, st, "out of memory for %lld pointers", (long long)batch * 3);
  for (int64_t b = 0; b < batch; b++) {
    int64_t oa = p->a_offsets ? p->a_offsets[b] : b * p->m * p->k, ob = p->b_offsets ? p->b_offsets[b] : b * p->k * p->n;
    host[b] = g->a + ob * (int64_t)g->eb;             /* library A: our B */
    host[batch + b] = g->b + oa * (int64_t)g->eb;     /* library B: our A */
    host[2 * batch + b] = g->c + b * g->m * g->n * (int64_t)g->eb;
  }
  void **dev = tfd_cuda_workspace(c, bytes, st);
  if (!dev) {
    free(host);
    return TFD_RESOURCE_EXHAUSTED;
  }
  cudaError_t err;
  if (tfd_gpu_ctx_capturing(c->ctx)) {
    /* Recorded, the copy would read `host` on every launch, long after it is freed: copy now, outside
     * the graph, once the work compute queued on dev's memory before it came back is done. The
     * capture keeps dev for the graph when it is freed below. */
    err = cudaStreamSynchronize(c->ctx->streams[0][TFD_GPU_COMPUTE]);
    if (err == cudaSuccess) err = cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice);
  } else {
    /* From pageable memory cudaMemcpyAsync returns once the bytes are staged: host may go at once. */
    err = cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, c->l.stream);
  }
  free(host);
  tfd_code code = TFD_OK;
  if (err != cudaSuccess) {
    code = tfd_cuda_fail(c, "cudaMemcpyAsync (pointer arrays)", err, st);
  } else {
    bool f64 = p->dtype == TFD_FLOAT64;
    cublasStatus_t s = CUBLAS->cublasGemmBatchedEx_64(
        (cublasHandle_t)c->k->blas, g->op_a, g->op_b, g->m, g->n, g->k, f64 ? (const void *)&one_d : (const void *)&one_f,
        (const void *const *)dev, g->type, g->lda, (const void *const *)(dev + batch), g->type, g->ldb,
        f64 ? (const void *)&zero_d : (const void *)&zero_f, dev + 2 * batch, g->type, g->ldc, batch, g->compute,
        CUBLAS_GEMM_DEFAULT);
    if (s != CUBLAS_STATUS_SUCCESS) code = blas_failed(c, "cublasGemmBatchedEx", s, st);
  }
  tfd_cuda_workspace_free(c, dev, bytes);
  return code;
}

tfd_code tfd_cuda_matmul(struct tfd_device *d, const tfd_dm_matmul *p, tfd_status *st) {
  if (p->dtype != TFD_FLOAT32 && p->dtype != TFD_FLOAT64) return tfd_cuda_unimplemented(d, "matmul", p->dtype, st);
  if (p->m < 0 || p->n < 0 || p->k < 0 || p->batch < 0)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "%s: cuda matmul: negative size", d && d->name ? d->name : "GPU");
  int64_t count = p->batch * p->m * p->n;
  if (count == 0) return TFD_OK;
  tfd_cuda_call c;
  if (tfd_cuda_begin(d, "matmul", p->dtype, count, &c, st) != TFD_OK) return TFD_INTERNAL;
  gemm g = make_gemm(p);
  if (p->k == 0) { /* an empty sum: C is the epilogue of zeros */
    cudaError_t err = cudaMemsetAsync(p->c, 0, (size_t)count * g.eb, c.l.stream);
    if (err == cudaSuccess) err = tfd_cuda_bias_act(&c.l, p->dtype, p->c, p->bias, p->n, count, p->act, p->alpha);
    return err == cudaSuccess ? TFD_OK : tfd_cuda_fail(&c, "epilogue of an empty product", err, st);
  }
  int64_t base_a = 0, base_b = 0, sa = 0, sb = 0;
  bool strided = evenly_spaced(p->a_offsets, p->batch, p->m * p->k, &base_a, &sa) &&
                 evenly_spaced(p->b_offsets, p->batch, p->k * p->n, &base_b, &sb);
  bool fused = false; /* bias and activation done by cuBLASLt's epilogue */
  pthread_mutex_lock(&c.k->blas_mu);
  tfd_code code = ensure_handles(&c, st);
  if (code == TFD_OK && strided) {
    bool done = true;
    /* cuBLASLt counts batches in an int32: a longer batch goes in pieces. */
    for (int64_t first = 0; first < p->batch && done && code == TFD_OK; first += INT32_MAX) {
      int64_t n = p->batch - first < INT32_MAX ? p->batch - first : INT32_MAX;
      const char *a = g.a + (base_b + first * sb) * (int64_t)g.eb, *b = g.b + (base_a + first * sa) * (int64_t)g.eb;
      char *out = g.c + first * g.m * g.n * (int64_t)g.eb;
      code = lt_matmul(&c, p, &g, a, b, out, sb, sa, n, &done, st);
    }
    fused = done && code == TFD_OK;
    if (code == TFD_OK && !done) code = strided_gemm(&c, p, &g, base_a, base_b, sa, sb, st);
  } else if (code == TFD_OK) {
    code = batched_gemm(&c, p, &g, st);
  }
  pthread_mutex_unlock(&c.k->blas_mu);
  if (code != TFD_OK) return code;
  /* What the epilogue did not do: every activation but Relu, and the bias off cuBLASLt. */
  const void *bias = fused ? NULL : p->bias;
  tfd_activation act = fused && p->act == TFD_ACT_RELU ? TFD_ACT_NONE : p->act;
  cudaError_t err = tfd_cuda_bias_act(&c.l, p->dtype, p->c, bias, p->n, count, act, p->alpha);
  return err == cudaSuccess ? TFD_OK : tfd_cuda_fail(&c, "bias and activation kernel launch", err, st);
}
