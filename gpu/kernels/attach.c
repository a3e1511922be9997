/* The CUDA kernels' per-device state: made when a GPU context starts (tfd_cuda_kernels_attach, called
 * by the backend), freed with the context, when each family with caches (products, convolutions)
 * releases its own. The one file that knows those families, so that state.c, which they all call,
 * knows none of them. */
#include <stdlib.h>

#include "cuda_kernels.h"

static void kernels_free(void *p) {
  tfd_cuda_kernels *k = p;
  if (!k) return;
  tfd_cuda_matmul_release(k);
  tfd_cuda_conv_release(k);
  pthread_mutex_destroy(&k->blas_mu);
  pthread_mutex_destroy(&k->dnn_mu);
  free(k);
}

tfd_code tfd_cuda_kernels_attach(tfd_gpu_ctx *c, tfd_status *st) {
  int sm = 0;
  cudaError_t err = cudaDeviceGetAttribute(&sm, cudaDevAttrMultiProcessorCount, c->cuda_id);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    return tfd_status_setf(st, TFD_INTERNAL, "%s: cudaDeviceGetAttribute(MultiProcessorCount) failed: %s", c->name,
                           cudaGetErrorString(err));
  }
  tfd_cuda_kernels *k = calloc(1, sizeof *k);
  if (!k) return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "%s: out of memory for the CUDA kernels' state", c->name);
  k->cuda_id = c->cuda_id;
  k->sm_count = sm > 0 ? sm : 1;
  pthread_mutex_init(&k->blas_mu, NULL);
  pthread_mutex_init(&k->dnn_mu, NULL);
  c->kernels = k;
  c->kernels_free = kernels_free;
  return TFD_OK;
}
