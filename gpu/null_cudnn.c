/* A null cuDNN: a libcudnn.so.9 with the 22 functions gpu/kernels/conv.c opens (cuda_libs.h's
 * TFD_CUDNN_FUNCTIONS), for the null CUDA runtime's machine (gpu/null_cudart.c says why). Its
 * descriptors keep what they are told, so output sizes come out as cuDNN computes them; its
 * algorithm ranking, workspace sizes and refusals are set by the test (tfd_null_cudnn_set), and a
 * convolution computes nothing: it is counted. So null_cudart_test checks conv.c's own logic on a
 * machine without a GPU: descriptors made right, the ranking tried in order with FFT and Winograd
 * left out, a refusal moving to the next algorithm, the choice asked once per shape and cached, the
 * workspace taken from the BFC allocator, and no descriptor left behind.
 *
 * Thread-safe: the settings and counters are atomics. Never installed. */
#include <cudnn.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct cudnnContext {
  cudaStream_t stream;
};
struct cudnnTensorStruct {
  int n, c, h, w;
};
struct cudnnFilterStruct {
  int k, c, h, w;
};
struct cudnnConvolutionStruct {
  int pad_h, pad_w, u, v, dil_h, dil_w, groups;
};

#define MAX_RANK 8
/* What the test set: the ranking both *_v7 calls return (default: implicit precomputed GEMM, then
 * implicit GEMM), the workspace each algorithm asks for (default none), and the algorithms whose
 * convolution call answers CUDNN_STATUS_NOT_SUPPORTED (a bit each). */
static atomic_int rank_len = 2, ranking[MAX_RANK] = {CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM,
                                                     CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM};
static atomic_ullong workspace_bytes, refused_algos;
/* What happened. */
static atomic_ullong searches, forwards, backward_datas, handles, live_descriptors;
static atomic_llong last_algo = -1;

/* Sets `what` for the calls after it: "workspace" (bytes every algorithm asks for), "refuse" (a
 * bitmask of algorithms whose convolution is NOT_SUPPORTED), "rank" (how many of `algos` the
 * ranking holds, at most 8; algos read only then). Reached through dlsym or by linking this library. */
void tfd_null_cudnn_set(const char *what, long long value, const int *algos) {
  if (!strcmp(what, "workspace")) atomic_store(&workspace_bytes, (unsigned long long)value);
  if (!strcmp(what, "refuse")) atomic_store(&refused_algos, (unsigned long long)value);
  if (!strcmp(what, "rank")) {
    int n = value < 0 ? 0 : value > MAX_RANK ? MAX_RANK : (int)value;
    for (int i = 0; i < n; i++) atomic_store(&ranking[i], algos[i]);
    atomic_store(&rank_len, n);
  }
}

/* How many of `what` so far: "searches" (either *_v7 ranking), "forward" and "backward_data"
 * (convolutions), "handles" (cudnnCreate), "live_descriptors" (made and not destroyed), or
 * "last_algo" (the algorithm of the last convolution, -1 before one). 0 for another name. */
long long tfd_null_cudnn_count(const char *what) {
  if (!strcmp(what, "searches")) return (long long)atomic_load(&searches);
  if (!strcmp(what, "forward")) return (long long)atomic_load(&forwards);
  if (!strcmp(what, "backward_data")) return (long long)atomic_load(&backward_datas);
  if (!strcmp(what, "handles")) return (long long)atomic_load(&handles);
  if (!strcmp(what, "live_descriptors")) return (long long)atomic_load(&live_descriptors);
  if (!strcmp(what, "last_algo")) return atomic_load(&last_algo);
  return 0;
}

const char *cudnnGetErrorString(cudnnStatus_t s) {
  return s == CUDNN_STATUS_SUCCESS ? "CUDNN_STATUS_SUCCESS" : "null cuDNN: not supported";
}

cudnnStatus_t cudnnCreate(cudnnHandle_t *h) {
  if (!(*h = calloc(1, sizeof **h))) return CUDNN_STATUS_ALLOC_FAILED;
  atomic_fetch_add(&handles, 1);
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnDestroy(cudnnHandle_t h) {
  free(h);
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnSetStream(cudnnHandle_t h, cudaStream_t s) {
  h->stream = s;
  return CUDNN_STATUS_SUCCESS;
}

/* ---- descriptors: what they are set to, kept for the output size ---- */
static cudnnStatus_t made(void *p) {
  if (!p) return CUDNN_STATUS_ALLOC_FAILED;
  atomic_fetch_add(&live_descriptors, 1);
  return CUDNN_STATUS_SUCCESS;
}
static cudnnStatus_t destroyed(void *p) {
  if (p) atomic_fetch_sub(&live_descriptors, 1);
  free(p);
  return CUDNN_STATUS_SUCCESS;
}
static cudnnStatus_t check(int ok) { return ok ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_BAD_PARAM; }

cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t *d) { return made(*d = calloc(1, sizeof **d)); }
cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t d) { return destroyed(d); }
cudnnStatus_t cudnnSetTensor4dDescriptor(cudnnTensorDescriptor_t d, cudnnTensorFormat_t f, cudnnDataType_t t, int n,
                                         int c, int h, int w) {
  (void)f, (void)t;
  *d = (struct cudnnTensorStruct){n, c, h, w};
  return check(n > 0 && c > 0 && h > 0 && w > 0);
}
cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t *d) { return made(*d = calloc(1, sizeof **d)); }
cudnnStatus_t cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t d) { return destroyed(d); }
cudnnStatus_t cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t d, cudnnDataType_t t, cudnnTensorFormat_t f, int k,
                                         int c, int h, int w) {
  (void)t, (void)f;
  *d = (struct cudnnFilterStruct){k, c, h, w};
  return check(k > 0 && c > 0 && h > 0 && w > 0);
}
cudnnStatus_t cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t *d) {
  cudnnStatus_t s = made(*d = calloc(1, sizeof **d));
  if (s == CUDNN_STATUS_SUCCESS) (*d)->groups = 1;
  return s;
}
cudnnStatus_t cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t d) { return destroyed(d); }
cudnnStatus_t cudnnSetConvolution2dDescriptor(cudnnConvolutionDescriptor_t d, int pad_h, int pad_w, int u, int v,
                                              int dil_h, int dil_w, cudnnConvolutionMode_t mode, cudnnDataType_t t) {
  (void)t;
  d->pad_h = pad_h, d->pad_w = pad_w, d->u = u, d->v = v, d->dil_h = dil_h, d->dil_w = dil_w;
  return check(pad_h >= 0 && pad_w >= 0 && u > 0 && v > 0 && dil_h > 0 && dil_w > 0 && mode == CUDNN_CROSS_CORRELATION);
}
cudnnStatus_t cudnnSetConvolutionGroupCount(cudnnConvolutionDescriptor_t d, int groups) {
  d->groups = groups;
  return check(groups > 0);
}
cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t d, cudnnMathType_t m) {
  (void)d;
  return check(m == CUDNN_DEFAULT_MATH || m == CUDNN_TENSOR_OP_MATH || m == CUDNN_FMA_MATH ||
               m == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION);
}
/* As cuDNN documents it: 1 + (in + 2 pad - ((filter - 1) dilation + 1)) / stride. */
cudnnStatus_t cudnnGetConvolution2dForwardOutputDim(const cudnnConvolutionDescriptor_t conv,
                                                    const cudnnTensorDescriptor_t x, const cudnnFilterDescriptor_t w,
                                                    int *n, int *c, int *h, int *wo) {
  if (x->c != w->c * conv->groups) return CUDNN_STATUS_BAD_PARAM;
  *n = x->n;
  *c = w->k;
  *h = 1 + (x->h + 2 * conv->pad_h - ((w->h - 1) * conv->dil_h + 1)) / conv->u;
  *wo = 1 + (x->w + 2 * conv->pad_w - ((w->w - 1) * conv->dil_w + 1)) / conv->v;
  return check(*h > 0 && *wo > 0);
}

/* ---- the ranking and the convolutions ---- */
/* How many ranked algorithms a *_v7 call returns (the ranking set, at most `requested`); counted. */
static int ranked(int requested) {
  atomic_fetch_add(&searches, 1);
  int n = atomic_load(&rank_len);
  return n < requested ? n : requested;
}

cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(cudnnHandle_t h, const cudnnTensorDescriptor_t x,
                                                     const cudnnFilterDescriptor_t w,
                                                     const cudnnConvolutionDescriptor_t conv,
                                                     const cudnnTensorDescriptor_t y, const int requested,
                                                     int *returned, cudnnConvolutionFwdAlgoPerf_t *perf) {
  (void)h, (void)x, (void)w, (void)conv, (void)y;
  *returned = ranked(requested);
  for (int i = 0; i < *returned; i++)
    perf[i] = (cudnnConvolutionFwdAlgoPerf_t){.algo = (cudnnConvolutionFwdAlgo_t)atomic_load(&ranking[i]),
                                              .status = CUDNN_STATUS_SUCCESS,
                                              .memory = (size_t)atomic_load(&workspace_bytes)};
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnGetConvolutionBackwardDataAlgorithm_v7(cudnnHandle_t h, const cudnnFilterDescriptor_t w,
                                                          const cudnnTensorDescriptor_t dy,
                                                          const cudnnConvolutionDescriptor_t conv,
                                                          const cudnnTensorDescriptor_t dx, const int requested,
                                                          int *returned, cudnnConvolutionBwdDataAlgoPerf_t *perf) {
  (void)h, (void)w, (void)dy, (void)conv, (void)dx;
  *returned = ranked(requested);
  for (int i = 0; i < *returned; i++)
    perf[i] = (cudnnConvolutionBwdDataAlgoPerf_t){.algo = (cudnnConvolutionBwdDataAlgo_t)atomic_load(&ranking[i]),
                                                  .status = CUDNN_STATUS_SUCCESS,
                                                  .memory = (size_t)atomic_load(&workspace_bytes)};
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(cudnnHandle_t h, const cudnnTensorDescriptor_t x,
                                                      const cudnnFilterDescriptor_t w,
                                                      const cudnnConvolutionDescriptor_t conv,
                                                      const cudnnTensorDescriptor_t y, cudnnConvolutionFwdAlgo_t algo,
                                                      size_t *bytes) {
  (void)h, (void)x, (void)w, (void)conv, (void)y, (void)algo;
  *bytes = (size_t)atomic_load(&workspace_bytes);
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnGetConvolutionBackwardDataWorkspaceSize(cudnnHandle_t h, const cudnnFilterDescriptor_t w,
                                                           const cudnnTensorDescriptor_t dy,
                                                           const cudnnConvolutionDescriptor_t conv,
                                                           const cudnnTensorDescriptor_t dx,
                                                           cudnnConvolutionBwdDataAlgo_t algo, size_t *bytes) {
  (void)h, (void)w, (void)dy, (void)conv, (void)dx, (void)algo;
  *bytes = (size_t)atomic_load(&workspace_bytes);
  return CUDNN_STATUS_SUCCESS;
}

/* A convolution call: refused for a refused algorithm, BAD_PARAM for a workspace smaller than the
 * algorithm asked for; else counted, computing nothing. */
static cudnnStatus_t convolve(int algo, void *ws, size_t ws_bytes, atomic_ullong *counter) {
  if (algo >= 0 && algo < 64 && (atomic_load(&refused_algos) >> algo & 1)) return CUDNN_STATUS_NOT_SUPPORTED;
  size_t need = (size_t)atomic_load(&workspace_bytes);
  if (need && (!ws || ws_bytes < need)) return CUDNN_STATUS_BAD_PARAM;
  atomic_fetch_add(counter, 1);
  atomic_store(&last_algo, algo);
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t h, const void *alpha, const cudnnTensorDescriptor_t xd,
                                      const void *x, const cudnnFilterDescriptor_t wd, const void *w,
                                      const cudnnConvolutionDescriptor_t conv, cudnnConvolutionFwdAlgo_t algo, void *ws,
                                      size_t ws_bytes, const void *beta, const cudnnTensorDescriptor_t yd, void *y) {
  (void)h, (void)alpha, (void)xd, (void)x, (void)wd, (void)w, (void)conv, (void)beta, (void)yd, (void)y;
  return convolve((int)algo, ws, ws_bytes, &forwards);
}
cudnnStatus_t cudnnConvolutionBackwardData(cudnnHandle_t h, const void *alpha, const cudnnFilterDescriptor_t wd,
                                           const void *w, const cudnnTensorDescriptor_t dyd, const void *dy,
                                           const cudnnConvolutionDescriptor_t conv, cudnnConvolutionBwdDataAlgo_t algo,
                                           void *ws, size_t ws_bytes, const void *beta,
                                           const cudnnTensorDescriptor_t dxd, void *dx) {
  (void)h, (void)alpha, (void)wd, (void)w, (void)dyd, (void)dy, (void)conv, (void)beta, (void)dxd, (void)dx;
  return convolve((int)algo, ws, ws_bytes, &backward_datas);
}
