/* A null cuBLAS and cuBLASLt: the libcublas.so.13 and libcublasLt.so.13 (this file built twice,
 * NULL_CUBLAS_LT set for the second) with the functions gpu/kernels/matmul.c opens (cuda_libs.h's
 * TFD_CUBLAS_FUNCTIONS and TFD_CUBLASLT_FUNCTIONS, and the cublasSgemm tfdev_gpu_bench links), for
 * the null CUDA runtime's machine
 * (gpu/null_cudart.c says why). A product computes nothing: it is counted, with the epilogue
 * cuBLASLt was asked for. Whether cuBLASLt's heuristic offers an algorithm, the workspace it asks
 * for, and whether cublasLtMatmul refuses at run time are set by the test (tfd_null_cublas_set).
 * So null_cudart_test checks matmul.c's own logic on a machine without a GPU: bias and Relu in the
 * epilogue, the heuristic asked once per shape and cached, the fallbacks to cuBLAS, and no
 * descriptor left behind.
 *
 * Thread-safe: the settings and counters are atomics. Never installed. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#ifdef NULL_CUBLAS_LT
#include <cublasLt.h>
#else
#include <cublas_v2.h>
#endif

#ifdef NULL_CUBLAS_LT
/* What the test set: cuBLASLt's heuristic offers an algorithm (default yes) asking for this much
 * workspace (default none); cublasLtMatmul answers NOT_SUPPORTED (default no). */
static atomic_int offers = 1, refuses;
static atomic_ullong workspace_bytes;
/* What happened. */
static atomic_llong heuristics, matmuls, live_descriptors, last_epilogue = -1, last_batch = -1;

/* Sets `what` for the calls after it: "offers" (0: the heuristic returns no algorithm), "workspace"
 * (bytes the offered algorithm asks for), "refuses" (1: cublasLtMatmul answers NOT_SUPPORTED). */
void tfd_null_cublaslt_set(const char *what, long long value) {
  if (!strcmp(what, "offers")) atomic_store(&offers, value != 0);
  if (!strcmp(what, "workspace")) atomic_store(&workspace_bytes, (unsigned long long)value);
  if (!strcmp(what, "refuses")) atomic_store(&refuses, value != 0);
}

/* How many of `what` so far: "heuristics" (cublasLtMatmulAlgoGetHeuristic), "matmuls"
 * (cublasLtMatmul calls that ran), "live_descriptors" (made and not destroyed), or the last run's
 * "last_epilogue" (cublasLtEpilogue_t) and "last_batch" (-1 before one). 0 for another name. */
long long tfd_null_cublaslt_count(const char *what) {
  if (!strcmp(what, "heuristics")) return atomic_load(&heuristics);
  if (!strcmp(what, "matmuls")) return atomic_load(&matmuls);
  if (!strcmp(what, "live_descriptors")) return atomic_load(&live_descriptors);
  if (!strcmp(what, "last_epilogue")) return atomic_load(&last_epilogue);
  if (!strcmp(what, "last_batch")) return atomic_load(&last_batch);
  return 0;
}

/* The opaque descriptors are the headers' own structs of words; these words are what is kept. */
enum { DESC_EPILOGUE, DESC_BIAS };
enum { LAYOUT_BATCH };

static cublasStatus_t made(void **slot, size_t bytes) {
  if (!(*slot = calloc(1, bytes))) return CUBLAS_STATUS_ALLOC_FAILED;
  atomic_fetch_add(&live_descriptors, 1);
  return CUBLAS_STATUS_SUCCESS;
}
static cublasStatus_t destroyed(void *p) {
  if (p) atomic_fetch_sub(&live_descriptors, 1);
  free(p);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtCreate(cublasLtHandle_t *h) {
  *h = (cublasLtHandle_t)malloc(1);
  return *h ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_ALLOC_FAILED;
}
cublasStatus_t cublasLtDestroy(cublasLtHandle_t h) {
  free(h);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *d, cublasComputeType_t compute, cudaDataType_t scale) {
  (void)compute, (void)scale;
  return made((void **)d, sizeof **d);
}
cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t d) { return destroyed(d); }
cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t a,
                                              const void *buf, size_t bytes) {
  if (a == CUBLASLT_MATMUL_DESC_EPILOGUE && bytes == sizeof(cublasLtEpilogue_t))
    d->data[DESC_EPILOGUE] = (uint64_t)*(const cublasLtEpilogue_t *)buf;
  if (a == CUBLASLT_MATMUL_DESC_BIAS_POINTER) d->data[DESC_BIAS] = buf && *(void *const *)buf ? 1 : 0;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *l, cudaDataType type, uint64_t rows, uint64_t cols,
                                          int64_t ld) {
  (void)type, (void)cols;
  if ((int64_t)rows > ld) return CUBLAS_STATUS_INVALID_VALUE; /* column-major: ld at least the rows */
  cublasStatus_t s = made((void **)l, sizeof **l);
  if (s == CUBLAS_STATUS_SUCCESS) (*l)->data[LAYOUT_BATCH] = 1;
  return s;
}
cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t l) { return destroyed(l); }
cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t l, cublasLtMatrixLayoutAttribute_t a,
                                                const void *buf, size_t bytes) {
  if (a == CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT && bytes == sizeof(int32_t))
    l->data[LAYOUT_BATCH] = (uint64_t)*(const int32_t *)buf;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *p) { return made((void **)p, sizeof **p); }
cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t p) { return destroyed(p); }
cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t p, cublasLtMatmulPreferenceAttributes_t a,
                                                    const void *buf, size_t bytes) {
  (void)p, (void)a, (void)buf, (void)bytes;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t h, cublasLtMatmulDesc_t op, cublasLtMatrixLayout_t a,
                                              cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c,
                                              cublasLtMatrixLayout_t d, cublasLtMatmulPreference_t pref, int requested,
                                              cublasLtMatmulHeuristicResult_t results[], int *returned) {
  (void)h, (void)op, (void)a, (void)b, (void)c, (void)d, (void)pref;
  atomic_fetch_add(&heuristics, 1);
  *returned = 0;
  if (!atomic_load(&offers) || requested < 1) return CUBLAS_STATUS_NOT_SUPPORTED;
  memset(&results[0], 0, sizeof results[0]);
  results[0].workspaceSize = (size_t)atomic_load(&workspace_bytes);
  results[0].state = CUBLAS_STATUS_SUCCESS;
  *returned = 1;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmul(cublasLtHandle_t h, cublasLtMatmulDesc_t op, const void *alpha, const void *a,
                              cublasLtMatrixLayout_t ad, const void *b, cublasLtMatrixLayout_t bd, const void *beta,
                              const void *c, cublasLtMatrixLayout_t cd, void *d, cublasLtMatrixLayout_t dd,
                              const cublasLtMatmulAlgo_t *algo, void *ws, size_t ws_bytes, cudaStream_t s) {
  (void)h, (void)alpha, (void)a, (void)ad, (void)b, (void)bd, (void)beta, (void)c, (void)cd, (void)d, (void)algo,
      (void)s;
  if (atomic_load(&refuses)) return CUBLAS_STATUS_NOT_SUPPORTED;
  size_t need = (size_t)atomic_load(&workspace_bytes);
  if (need && (!ws || ws_bytes < need)) return CUBLAS_STATUS_INVALID_VALUE;
  atomic_fetch_add(&matmuls, 1);
  atomic_store(&last_epilogue, (long long)op->data[DESC_EPILOGUE]);
  atomic_store(&last_batch, (long long)dd->data[LAYOUT_BATCH]);
  return CUBLAS_STATUS_SUCCESS;
}

#else /* cuBLAS */
static atomic_llong strided, batched, sgemms, handles;

/* How many of `what` so far: "strided" (cublasGemmStridedBatchedEx_64), "batched"
 * (cublasGemmBatchedEx_64), "sgemm" (cublasSgemm, which tfdev_gpu_bench's floor calls) or
 * "handles" (cublasCreate). 0 for another name. */
long long tfd_null_cublas_count(const char *what) {
  if (!strcmp(what, "strided")) return atomic_load(&strided);
  if (!strcmp(what, "batched")) return atomic_load(&batched);
  if (!strcmp(what, "sgemm")) return atomic_load(&sgemms);
  if (!strcmp(what, "handles")) return atomic_load(&handles);
  return 0;
}

cublasStatus_t cublasSgemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                           const float *alpha, const float *a, int lda, const float *b, int ldb, const float *beta,
                           float *c, int ldc) {
  (void)h, (void)ta, (void)tb, (void)k, (void)alpha, (void)a, (void)lda, (void)b, (void)ldb, (void)beta, (void)c;
  if (m < 0 || n < 0 || ldc < m) return CUBLAS_STATUS_INVALID_VALUE;
  atomic_fetch_add(&sgemms, 1);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasCreate(cublasHandle_t *h) {
  if (!(*h = (cublasHandle_t)malloc(1))) return CUBLAS_STATUS_ALLOC_FAILED;
  atomic_fetch_add(&handles, 1);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasDestroy(cublasHandle_t h) {
  free(h);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetStream(cublasHandle_t h, cudaStream_t s) {
  (void)h, (void)s;
  return CUBLAS_STATUS_SUCCESS;
}
const char *cublasGetStatusString(cublasStatus_t s) {
  return s == CUBLAS_STATUS_SUCCESS ? "CUBLAS_STATUS_SUCCESS" : "null cuBLAS: not supported";
}
cublasStatus_t cublasGemmStridedBatchedEx_64(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m,
                                             int64_t n, int64_t k, const void *alpha, const void *a, cudaDataType at,
                                             int64_t lda, long long sa, const void *b, cudaDataType bt, int64_t ldb,
                                             long long sb, const void *beta, void *c, cudaDataType ct, int64_t ldc,
                                             long long sc, int64_t batch, cublasComputeType_t compute,
                                             cublasGemmAlgo_t algo) {
  (void)h, (void)ta, (void)tb, (void)k, (void)alpha, (void)a, (void)at, (void)lda, (void)sa, (void)b, (void)bt,
      (void)ldb, (void)sb, (void)beta, (void)c, (void)ct, (void)sc, (void)compute, (void)algo;
  if (m < 0 || n < 0 || batch < 0 || ldc < m) return CUBLAS_STATUS_INVALID_VALUE;
  atomic_fetch_add(&strided, 1);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasGemmBatchedEx_64(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m,
                                      int64_t n, int64_t k, const void *alpha, const void *const a[], cudaDataType at,
                                      int64_t lda, const void *const b[], cudaDataType bt, int64_t ldb,
                                      const void *beta, void *const c[], cudaDataType ct, int64_t ldc, int64_t batch,
                                      cublasComputeType_t compute, cublasGemmAlgo_t algo) {
  (void)h, (void)ta, (void)tb, (void)k, (void)alpha, (void)a, (void)at, (void)lda, (void)b, (void)bt, (void)ldb,
      (void)beta, (void)c, (void)ct, (void)compute, (void)algo;
  if (m < 0 || n < 0 || batch < 0 || ldc < m) return CUBLAS_STATUS_INVALID_VALUE;
  atomic_fetch_add(&batched, 1);
  return CUBLAS_STATUS_SUCCESS;
}
#endif
