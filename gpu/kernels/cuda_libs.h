/* Inside the CUDA module: cuBLAS, cuBLASLt and cuDNN, opened with dlopen the first time a product
 * or a convolution needs them, and reached through tables of their functions.
 *
 * Why not link them: the module is loaded by every process that makes tfdev's default factory
 * registry (TFDEV_BACKENDS defaults to cuda), GPU or not, and linking the libraries made each such
 * process map them at once: 0.1 s and 217 MB resident on a machine with the toolkit and no GPU,
 * paid by every CPU-only user and every test. Now a process pays for them only when a GPU runs a
 * MatMul or a convolution, and a machine with the driver but without cuDNN still runs everything
 * else on its GPU (convolutions then say which library is missing).
 *
 * Global state: one table per library, filled once (pthread_once) and never changed after, as the
 * loaded backend modules are (ARCHITECTURE.md's table of process-wide state). */
#ifndef TFDEV_GPU_KERNELS_CUDA_LIBS_H
#define TFDEV_GPU_KERNELS_CUDA_LIBS_H

#include <cublasLt.h>
#include <cublas_v2.h>
#include <stddef.h>

#ifdef TFDEV_HAVE_CUDNN
#include <cudnn.h>
#endif

/* The functions tfdev calls, by the names the headers give them (cuBLAS's are macros for their _v2
 * symbols: the table's fields and the symbols looked up follow the macros, so `B->cublasCreate(...)`
 * calls cublasCreate_v2). */
#define TFD_CUBLAS_FUNCTIONS(X)                                                                     \
  X(cublasCreate) X(cublasDestroy) X(cublasSetStream) X(cublasGetStatusString)                      \
  X(cublasGemmStridedBatchedEx_64) X(cublasGemmBatchedEx_64)
#define TFD_CUBLASLT_FUNCTIONS(X)                                                                   \
  X(cublasLtCreate) X(cublasLtDestroy) X(cublasLtMatmul) X(cublasLtMatmulAlgoGetHeuristic)           \
  X(cublasLtMatmulDescCreate) X(cublasLtMatmulDescDestroy) X(cublasLtMatmulDescSetAttribute)         \
  X(cublasLtMatmulPreferenceCreate) X(cublasLtMatmulPreferenceDestroy)                              \
  X(cublasLtMatmulPreferenceSetAttribute) X(cublasLtMatrixLayoutCreate) X(cublasLtMatrixLayoutDestroy) \
  X(cublasLtMatrixLayoutSetAttribute)
#define TFD_CUDNN_FUNCTIONS(X)                                                                      \
  X(cudnnCreate) X(cudnnDestroy) X(cudnnSetStream) X(cudnnGetErrorString)                           \
  X(cudnnCreateTensorDescriptor) X(cudnnDestroyTensorDescriptor) X(cudnnSetTensor4dDescriptor)      \
  X(cudnnCreateFilterDescriptor) X(cudnnDestroyFilterDescriptor) X(cudnnSetFilter4dDescriptor)      \
  X(cudnnCreateConvolutionDescriptor) X(cudnnDestroyConvolutionDescriptor)                         \
  X(cudnnSetConvolution2dDescriptor) X(cudnnSetConvolutionGroupCount) X(cudnnSetConvolutionMathType) \
  X(cudnnGetConvolution2dForwardOutputDim) X(cudnnGetConvolutionForwardAlgorithm_v7)               \
  X(cudnnGetConvolutionForwardWorkspaceSize) X(cudnnConvolutionForward)                            \
  X(cudnnGetConvolutionBackwardDataAlgorithm_v7) X(cudnnGetConvolutionBackwardDataWorkspaceSize)   \
  X(cudnnConvolutionBackwardData)

#define TFD_CUDA_LIB_FIELD(f) __typeof__(f) *f;

/* cuBLAS and cuBLASLt together: every product needs both. */
typedef struct tfd_cuda_blas {
  TFD_CUBLAS_FUNCTIONS(TFD_CUDA_LIB_FIELD)
  TFD_CUBLASLT_FUNCTIONS(TFD_CUDA_LIB_FIELD)
} tfd_cuda_blas;

/* The loaded tables, or NULL with the reason (the library or symbol that could not be found, and
 * dlerror's text) written to why (cap bytes). Loaded once per process; later calls answer the same. */
const tfd_cuda_blas *tfd_cuda_blas_load(char *why, size_t cap);

#ifdef TFDEV_HAVE_CUDNN
typedef struct tfd_cuda_dnn {
  TFD_CUDNN_FUNCTIONS(TFD_CUDA_LIB_FIELD)
} tfd_cuda_dnn;
const tfd_cuda_dnn *tfd_cuda_dnn_load(char *why, size_t cap);
#endif

#endif
