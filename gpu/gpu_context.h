/* Inside the CUDA backend module: a GPU's context (gpu_context.c), the part of a BaseGPUDevice that
 * the device's memory needs as much as the device does: the CUDA device id, the stream groups and
 * the event manager. Tensors keep their allocator alive and may outlive the device that made them,
 * so the context is reference-counted and owned by the devices and the BFC allocator; the last of
 * them to go frees it. Also here: that allocator, whose device_memory copies run on the streams
 * (allocator_internal.h's to_host and from_host), and the one context and allocator per GPU that
 * the devices of all live sessions share. */
#ifndef TFDEV_GPU_GPU_CONTEXT_H
#define TFDEV_GPU_GPU_CONTEXT_H

#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "../runtime/core/refcount.h"
#include "event_mgr.h"
#include "tfdev/allocator.h"
#include "tfdev/options.h"

/* One stream group, as BaseGPUDevice's: kernels on compute, copies each way on their own stream so
 * they overlap with compute, ordered against it by events. */
enum { TFD_GPU_COMPUTE, TFD_GPU_HOST_TO_DEVICE, TFD_GPU_DEVICE_TO_HOST, TFD_GPU_DEVICE_TO_DEVICE, TFD_GPU_NUM_STREAMS };

typedef struct tfd_gpu_ctx {
  tfd_refcount refs;
  int cuda_id;
  char *name; /* the device's full name, for error messages (owned: the device may be gone) */
  int num_groups; /* gpu.max_streams; nodes use group 0, as TensorFlow's do */
  cudaStream_t streams[TFD_GPU_MAX_STREAMS][TFD_GPU_NUM_STREAMS];
  tfd_event_mgr *events; /* releases host references once a stream passes them */
  /* Events for ordering one stream after another, reused: creating one per copy costs more than
   * the copy for small tensors. */
  pthread_mutex_t pool_mu;
  cudaEvent_t *pool;
  size_t num_pool, cap_pool;
  /* The CUDA kernels' state for this device (gpu/kernels/state.c: library handles bound to the
   * compute stream, algorithm caches), set once when the device is made and freed with the context,
   * after the event manager has drained and before the streams go; NULL in a build without them. */
  void *kernels;
  void (*kernels_free)(void *kernels);
} tfd_gpu_ctx;

/* A context for CUDA device cuda_id with num_groups (1..TFD_GPU_MAX_STREAMS) stream groups; name is
 * copied. The caller owns the one reference returned. NULL with INTERNAL (naming the device and the
 * CUDA error) or RESOURCE_EXHAUSTED. */
tfd_gpu_ctx *tfd_gpu_ctx_new(const char *name, int cuda_id, int num_groups, tfd_status *status);
tfd_gpu_ctx *tfd_gpu_ctx_ref(tfd_gpu_ctx *c);
/* Drops a reference; the last one waits for the event manager's queued callbacks, then destroys the
 * streams and events. Never called from an event manager callback (they release host tensors only). */
void tfd_gpu_ctx_unref(tfd_gpu_ctx *c);
/* Waits for every stream of every group (Device::Sync), not for the whole CUDA device. */
tfd_code tfd_gpu_ctx_sync(tfd_gpu_ctx *c, tfd_status *status);

/* ---- step graphs (CUDA graphs; device_math.h's capture entries) ----
 * A capture belongs to the thread that begins it: while it lasts, the CUDA kernels that thread
 * queues on c go to a stream of the capture's own (tfd_gpu_ctx_stream) and are recorded, not run;
 * device memory of c that thread frees is kept for the graph until tfd_gpu_graph_free; and its
 * copies of c's memory to the host fail. Other threads use c as usual. */

/* The stream the calling thread queues c's kernels on: its capture stream while it captures on c,
 * else the compute stream of group 0, where nodes run. */
cudaStream_t tfd_gpu_ctx_stream(tfd_gpu_ctx *c);
/* Whether the calling thread is capturing on c. */
bool tfd_gpu_ctx_capturing(const tfd_gpu_ctx *c);
/* Starts the calling thread's capture on c. FAILED_PRECONDITION when it captures already,
 * RESOURCE_EXHAUSTED, INTERNAL naming the CUDA call that failed. */
tfd_code tfd_gpu_capture_begin(tfd_gpu_ctx *c, tfd_status *status);
/* Ends it: with abandon false, *graph is the executable graph (the caller's, for tfd_gpu_graph_free)
 * or the call fails with INTERNAL naming the CUDA call (a kernel that could not be recorded); on
 * failure or abandon *graph is NULL and the memory kept goes back to the allocator. */
tfd_code tfd_gpu_capture_end(tfd_gpu_ctx *c, bool abandon, void **graph, tfd_status *status);
/* Queues the graph on the compute stream of group 0, ordered with the nodes' kernels and copies. */
tfd_code tfd_gpu_graph_launch(tfd_gpu_ctx *c, void *graph, tfd_status *status);
/* Frees the graph and gives back the memory it kept: new work on it is queued on the compute
 * stream, after the graph's launches. */
void tfd_gpu_graph_free(tfd_gpu_ctx *c, void *graph);

/* Bytes of cuda_id's memory parked for the next allocator (region_cache.h): in use as far as
 * cudaMemGetInfo can tell, yet the next allocator's to take. */
size_t tfd_gpu_parked_bytes(int cuda_id);

/* The most CUDA devices the module uses. */
#define TFD_GPU_MAX_DEVICES 64

/* ---- the GPU state sessions share ----
 * One context and one BFC allocator per CUDA device for every device on it while any exists, as
 * TensorFlow keeps one allocator and one stream group per GPU for the process (GPUProcessState,
 * StreamGroupFactory): sessions running at once share the GPU's memory and order their work on one
 * compute stream, rather than each reserving what was free when it started. The first device to ask
 * makes them with its name, num_groups, *memory_limit and *allow_growth, and runs attach (NULL: none)
 * once on the new context (the CUDA kernels' state); a later one gets them as they are, and
 * *memory_limit and *allow_growth are set to what they were made with. *ctx is a new reference
 * (tfd_gpu_ctx_unref); *allocator is borrowed until the caller's tfd_gpu_shared_release.
 * INVALID_ARGUMENT for a cuda_id outside [0, TFD_GPU_MAX_DEVICES); the errors of making them. */
tfd_code tfd_gpu_shared_acquire(int cuda_id, const char *name, int num_groups, int64_t *memory_limit, bool *allow_growth,
                                tfd_code (*attach)(tfd_gpu_ctx *c, tfd_status *status), tfd_gpu_ctx **ctx,
                                tfd_allocator **allocator, tfd_status *status);
/* Ends one acquire's use; the last one drops the shared allocator (its regions parked for the next,
 * region_cache.h) and context references. */
void tfd_gpu_shared_release(int cuda_id);

/* The device's memory: TensorFlow's BFC allocator over cudaMalloc regions of c's device, carrying
 * c (its own reference, dropped when the allocator goes) and the copies below as device_memory.
 * memory_limit and allow_growth as tfd_bfc_options'. Caller owns the reference returned; NULL with
 * status set on failure. */
tfd_allocator *tfd_gpu_bfc_allocator_new(tfd_gpu_ctx *c, const char *name, int64_t memory_limit, bool allow_growth,
                                         tfd_status *status);

#endif
