/* Inside the CUDA module: what the C files of the CUDA device math share (state.c, math.c,
 * matmul.c, conv.c): the per-device state the kernels keep in their GPU's context, how an entry of
 * device_math.h finds its stream from the tfd_device it is given, errors, and workspaces. */
#ifndef TFDEV_GPU_KERNELS_CUDA_KERNELS_H
#define TFDEV_GPU_KERNELS_CUDA_KERNELS_H

#include <pthread.h>

#include "../../runtime/core/status_internal.h"
#include "../../runtime/kernels/device_math.h"
#include "../cuda_backend.h"
#include "../gpu_context.h"
#include "algo_cache.h"
#include "launch.h"

/* The device math of CUDA GPUs (every entry of device_math.h), which their devices carry. */
extern const tfd_device_math tfd_cuda_device_math;
/* Its name, "cuda" (state.c), by which tfd_cuda_begin knows a device of this backend. */
extern const char tfd_cuda_math_name[];

/* One per GPU context (tfd_gpu_ctx.kernels). The library handles are made on first use (cuDNN's
 * takes seconds to load) and bound to the compute stream of group 0, where nodes run; a mutex per
 * library serialises their calls, since a handle must not be used by two threads at once (cuDNN)
 * or have its settings change under another (cuBLAS), and guards the algorithm caches' first fill. */
typedef struct tfd_cuda_kernels {
  int cuda_id;
  int64_t sm_count;
  pthread_mutex_t blas_mu;
  void *blas, *lt;             /* cublasHandle_t, cublasLtHandle_t */
  tfd_algo_cache *matmul_algos; /* cuBLASLt's choice per product shape (matmul.c) */
  pthread_mutex_t dnn_mu;
  void *dnn;                  /* cudnnHandle_t */
  tfd_algo_cache *conv_algos; /* cuDNN's choice per convolution shape (conv.c) */
} tfd_cuda_kernels;

/* Makes c's kernel state (tfd_gpu_ctx.kernels and kernels_free); called once, when the device is
 * made. INTERNAL naming the device when CUDA cannot say how many SMs it has; RESOURCE_EXHAUSTED. */
tfd_code tfd_cuda_kernels_attach(tfd_gpu_ctx *c, tfd_status *status);

/* One call of an entry. */
typedef struct tfd_cuda_call {
  tfd_gpu_device *g;
  tfd_gpu_ctx *ctx;
  tfd_cuda_kernels *k;
  tfd_cuda_launch l;
  const char *entry; /* "unary", "matmul", ... */
  tfd_dtype dtype;   /* for messages */
  int64_t count;     /* elements, for messages */
} tfd_cuda_call;

/* Starts a call on device d: d must be a GPU device of this module; its CUDA device is made current
 * on this thread. INTERNAL naming the device otherwise. */
tfd_code tfd_cuda_begin(struct tfd_device *d, const char *entry, tfd_dtype dtype, int64_t count, tfd_cuda_call *c,
                        tfd_status *status);
/* INTERNAL: "<device>: <entry> (<dtype>, <count> elements): <what> failed: <CUDA's text>", and the
 * thread's last CUDA error cleared so later calls start clean. */
tfd_code tfd_cuda_fail(const tfd_cuda_call *c, const char *what, cudaError_t err, tfd_status *status);
/* Any other failure of the call: "<device>: <entry> (<dtype>, <count> elements): " and the message. */
tfd_code tfd_cuda_failf(const tfd_cuda_call *c, tfd_code code, tfd_status *status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* UNIMPLEMENTED naming the entry and the dtype it does not take. */
tfd_code tfd_cuda_unimplemented(struct tfd_device *d, const char *entry, tfd_dtype dtype, tfd_status *status);

/* Scratch device memory of the call's device (its BFC allocator), 256-byte aligned; bytes 0 gives
 * NULL with no error. Freed with tfd_cuda_workspace_free as soon as the work using it is queued:
 * the allocator hands memory out again in the compute stream's order, after that work. NULL with
 * RESOURCE_EXHAUSTED naming the entry on failure. */
void *tfd_cuda_workspace(const tfd_cuda_call *c, size_t bytes, tfd_status *status);
void tfd_cuda_workspace_free(const tfd_cuda_call *c, void *p, size_t bytes);

/* ---- the library entries (matmul.c, conv.c) ---- */
tfd_code tfd_cuda_matmul(struct tfd_device *d, const tfd_dm_matmul *p, tfd_status *status);
tfd_code tfd_cuda_conv2d(struct tfd_device *d, const tfd_dm_conv *p, tfd_status *status);
/* Frees a constant filter conv2d kept in a kernel's slot (device_math.h's release_packed). */
void tfd_cuda_conv_release_packed(struct tfd_device *d, void *packed);
/* Frees what matmul.c and conv.c keep in k (with k's device current). */
void tfd_cuda_matmul_release(tfd_cuda_kernels *k);
void tfd_cuda_conv_release(tfd_cuda_kernels *k);

#endif
