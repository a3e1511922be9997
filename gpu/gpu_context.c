/* A GPU's context (see gpu_context.h): streams, event manager and the event pool, shared by the GPU
 * device and its BFC allocator; and that allocator's region provider (cudaMalloc/cudaFree) and
 * device-memory copies (TensorFlow's GPUDeviceContext::CopyDeviceTensorToCPU/CopyCPUTensorToDevice
 * reduced to bytes). Copies use stream group 0, where nodes run.
 *
 * Ordering, as TensorFlow's: a copy stream first waits for an event recorded on compute, so a copy
 * out sees the kernels queued before it and a copy in does not overwrite memory that queued kernels
 * still read (the BFC allocator reuses freed memory at once, ordered only by the compute stream);
 * compute then waits for the copy in, so later kernels see its bytes. Nothing waits for the whole
 * device: to_host waits for an event recorded after its copy, from_host not at all (the event manager
 * releases the host source once the host-to-device stream has passed the copy). */
#include "gpu_context.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../runtime/core/allocator_internal.h"
#include "../runtime/core/status_internal.h"
#include "bfc_allocator.h"
#include "region_cache.h"

/* ---- CUDA calls in sequence: the first failure stops the rest and is remembered ---- */
typedef struct cuda_steps {
  cudaError_t err;
  const char *what; /* the call that failed */
} cuda_steps;

/* Runs `call` only while every earlier step succeeded. */
#define STEP(s, name, call)        \
  do {                             \
    if ((s)->err == cudaSuccess) { \
      (s)->what = (name);          \
      (s)->err = (call);           \
    }                              \
  } while (0)

static tfd_code cuda_failed(const tfd_gpu_ctx *c, const cuda_steps *s, const char *doing, size_t bytes,
                            tfd_status *st) {
  (void)cudaGetLastError(); /* clear a non-sticky error so later calls start clean */
  return tfd_status_setf(st, TFD_INTERNAL, "%s: %s (%zu bytes): %s failed: %s", c->name, doing, bytes, s->what,
                         cudaGetErrorString(s->err));
}

/* ---- the event pool (call with c's device current) ---- */
static cudaError_t event_get(tfd_gpu_ctx *c, cudaEvent_t *out) {
  pthread_mutex_lock(&c->pool_mu);
  *out = c->num_pool ? c->pool[--c->num_pool] : NULL;
  pthread_mutex_unlock(&c->pool_mu);
  return *out ? cudaSuccess : cudaEventCreateWithFlags(out, cudaEventDisableTiming);
}

/* An event may go back as soon as the waits on it are queued: a wait uses the record made before
 * it, whatever is recorded later. */
static void event_put(tfd_gpu_ctx *c, cudaEvent_t e) {
  if (!e) return;
  pthread_mutex_lock(&c->pool_mu);
  if (c->num_pool == c->cap_pool) {
    size_t cap = c->cap_pool ? 2 * c->cap_pool : 16;
    cudaEvent_t *grown = realloc(c->pool, cap * sizeof *grown);
    if (grown) c->pool = grown, c->cap_pool = cap;
  }
  bool kept = c->num_pool < c->cap_pool;
  if (kept) c->pool[c->num_pool++] = e;
  pthread_mutex_unlock(&c->pool_mu);
  if (!kept) cudaEventDestroy(e);
}

/* ---- the event manager's provider: CUDA events without timing, on this device ---- */
static void *em_create(void *ctx) {
  tfd_gpu_ctx *c = ctx;
  cudaEvent_t e = NULL;
  if (cudaSetDevice(c->cuda_id) != cudaSuccess || cudaEventCreateWithFlags(&e, cudaEventDisableTiming) != cudaSuccess) {
    (void)cudaGetLastError();
    return NULL;
  }
  return (void *)e;
}

static tfd_code em_record(void *ctx, void *event, void *stream, tfd_status *st) {
  tfd_gpu_ctx *c = ctx;
  cuda_steps s = {cudaSuccess, NULL};
  STEP(&s, "cudaSetDevice", cudaSetDevice(c->cuda_id));
  STEP(&s, "cudaEventRecord", cudaEventRecord((cudaEvent_t)event, (cudaStream_t)stream));
  if (s.err == cudaSuccess) return TFD_OK;
  (void)cudaGetLastError();
  return tfd_status_setf(st, TFD_INTERNAL, "%s: %s failed: %s", c->name, s.what, cudaGetErrorString(s.err));
}

static int em_query(void *ctx, void *event) {
  (void)ctx;
  cudaError_t err = cudaEventQuery((cudaEvent_t)event);
  if (err == cudaSuccess) return 1;
  if (err == cudaErrorNotReady) return 0;
  (void)cudaGetLastError();
  return -1;
}

static void em_destroy(void *ctx, void *event) {
  (void)ctx;
  cudaEventDestroy((cudaEvent_t)event);
}

/* ---- the context ---- */
static void ctx_destroy(tfd_gpu_ctx *c) {
  tfd_event_mgr_free(c->events); /* first: waits for the callbacks still queued on the streams */
  cudaSetDevice(c->cuda_id);
  if (c->kernels_free) c->kernels_free(c->kernels); /* its handles use the streams: before they go */
  for (int g = 0; g < TFD_GPU_MAX_STREAMS; g++)
    for (int i = 0; i < TFD_GPU_NUM_STREAMS; i++)
      if (c->streams[g][i]) cudaStreamDestroy(c->streams[g][i]);
  for (size_t i = 0; i < c->num_pool; i++) cudaEventDestroy(c->pool[i]);
  free(c->pool);
  pthread_mutex_destroy(&c->pool_mu);
  free(c->name);
  free(c);
}

tfd_gpu_ctx *tfd_gpu_ctx_new(const char *name, int cuda_id, int num_groups, tfd_status *st) {
  tfd_gpu_ctx *c = calloc(1, sizeof *c);
  char *copy = strdup(name);
  if (!c || !copy) {
    free(c);
    free(copy);
    tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory creating %s", name);
    return NULL;
  }
  tfd_refcount_init(&c->refs);
  pthread_mutex_init(&c->pool_mu, NULL);
  c->name = copy;
  c->cuda_id = cuda_id;
  c->num_groups = num_groups < 1 ? 1 : num_groups > TFD_GPU_MAX_STREAMS ? TFD_GPU_MAX_STREAMS : num_groups;
  cuda_steps s = {cudaSuccess, NULL};
  STEP(&s, "cudaSetDevice", cudaSetDevice(cuda_id));
  /* Non-blocking: the legacy default stream, which other code in the process may use, must not
   * serialise with ours. */
  for (int g = 0; g < c->num_groups; g++)
    for (int i = 0; i < TFD_GPU_NUM_STREAMS; i++)
      STEP(&s, "cudaStreamCreateWithFlags", cudaStreamCreateWithFlags(&c->streams[g][i], cudaStreamNonBlocking));
  if (s.err != cudaSuccess) {
    (void)cudaGetLastError();
    tfd_status_setf(st, TFD_INTERNAL, "%s: %s failed: %s", name, s.what, cudaGetErrorString(s.err));
    ctx_destroy(c);
    return NULL;
  }
  tfd_event_provider events = {c, em_create, em_record, em_query, em_destroy};
  if (!(c->events = tfd_event_mgr_new(&events, 10, st))) {
    ctx_destroy(c);
    return NULL;
  }
  return c;
}

tfd_gpu_ctx *tfd_gpu_ctx_ref(tfd_gpu_ctx *c) {
  tfd_refcount_inc(&c->refs);
  return c;
}

void tfd_gpu_ctx_unref(tfd_gpu_ctx *c) {
  if (c && tfd_refcount_dec(&c->refs)) ctx_destroy(c);
}

tfd_code tfd_gpu_ctx_sync(tfd_gpu_ctx *c, tfd_status *st) {
  cuda_steps s = {cudaSuccess, NULL};
  STEP(&s, "cudaSetDevice", cudaSetDevice(c->cuda_id));
  for (int g = 0; g < c->num_groups; g++)
    for (int i = 0; i < TFD_GPU_NUM_STREAMS; i++) STEP(&s, "cudaStreamSynchronize", cudaStreamSynchronize(c->streams[g][i]));
  if (s.err == cudaSuccess) return TFD_OK;
  (void)cudaGetLastError();
  return tfd_status_setf(st, TFD_INTERNAL, "%s: sync failed: %s: %s", c->name, s.what, cudaGetErrorString(s.err));
}

/* ---- the BFC allocator's regions: device memory from cudaMalloc (256-byte aligned, as it requires) ---- */
/* Regions the allocators of a closed session gave back, for the next session's (region_cache.h): the
 * module's one piece of process-wide state besides its backend table, as TensorFlow's GPUProcessState
 * is its. Made on first use. */
static tfd_region_cache parked;
static pthread_once_t parked_once = PTHREAD_ONCE_INIT;
static void parked_init(void) { tfd_region_cache_init(&parked); }
static tfd_region_cache *parked_regions(void) {
  pthread_once(&parked_once, parked_init);
  return &parked;
}

size_t tfd_gpu_parked_bytes(int cuda_id) { return tfd_region_cache_bytes(parked_regions(), cuda_id); }

static void *region_alloc(void *ctx, size_t bytes) {
  tfd_gpu_ctx *c = ctx;
  void *p = tfd_region_cache_take(parked_regions(), c->cuda_id, bytes);
  if (p) return p;
  if (cudaSetDevice(c->cuda_id) != cudaSuccess) {
    (void)cudaGetLastError();
    return NULL;
  }
  if (cudaMalloc(&p, bytes) == cudaSuccess) return p;
  (void)cudaGetLastError();
  void *old = tfd_region_cache_evict(parked_regions(), c->cuda_id, NULL); /* memory ran short: what is parked goes first */
  if (!old) return NULL;
  cudaFree(old);
  p = NULL;
  if (cudaMalloc(&p, bytes) == cudaSuccess) return p;
  (void)cudaGetLastError();
  return NULL;
}

static void region_free(void *ctx, void *ptr, size_t bytes) {
  tfd_gpu_ctx *c = ctx;
  cudaSetDevice(c->cuda_id);
  /* Whatever still reads or writes the region finishes before another context's allocator may hand
   * it out, as cudaFree would wait for it. */
  if (bytes >= TFD_REGION_CACHE_MIN_BYTES && cudaDeviceSynchronize() == cudaSuccess)
    ptr = tfd_region_cache_park(parked_regions(), c->cuda_id, ptr, bytes, NULL);
  (void)cudaGetLastError();
  if (ptr) cudaFree(ptr); /* what was not parked, or what it displaced */
}

static void region_release(void *ctx) { tfd_gpu_ctx_unref(ctx); }

/* ---- device-memory copies (allocator_internal.h) ---- */
static tfd_code gpu_to_host(tfd_allocator *a, void *dst, const void *src, size_t bytes, tfd_status *st) {
  tfd_gpu_ctx *c = tfd_bfc_allocator_context(a);
  if (bytes == 0) return TFD_OK;
  if (tfd_gpu_ctx_capturing(c))
    return tfd_status_setf(st, TFD_FAILED_PRECONDITION,
                           "%s: cannot copy %zu bytes to the host while this thread records a CUDA graph: they are "
                           "not computed until the graph is launched",
                           c->name, bytes);
  cudaStream_t compute = c->streams[0][TFD_GPU_COMPUTE], d2h = c->streams[0][TFD_GPU_DEVICE_TO_HOST];
  cudaEvent_t ready = NULL, done = NULL;
  cuda_steps s = {cudaSuccess, NULL};
  STEP(&s, "cudaSetDevice", cudaSetDevice(c->cuda_id));
  STEP(&s, "cudaEventCreate", event_get(c, &ready));
  STEP(&s, "cudaEventCreate", event_get(c, &done));
  STEP(&s, "cudaEventRecord", cudaEventRecord(ready, compute)); /* after the kernels that wrote src */
  STEP(&s, "cudaStreamWaitEvent", cudaStreamWaitEvent(d2h, ready, 0));
  STEP(&s, "cudaMemcpyAsync", cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, d2h));
  bool queued = s.err == cudaSuccess;
  STEP(&s, "cudaEventRecord", cudaEventRecord(done, d2h));
  STEP(&s, "cudaEventSynchronize", cudaEventSynchronize(done)); /* this copy only, not the device */
  /* The caller frees or reads dst once we return: a copy that was queued must not still be running. */
  if (s.err != cudaSuccess && queued) (void)cudaStreamSynchronize(d2h);
  event_put(c, ready);
  event_put(c, done);
  return s.err == cudaSuccess ? TFD_OK : cuda_failed(c, &s, "copying device to host", bytes, st);
}

/* True when src is ordinary pageable memory. cudaMemcpyAsync from such memory returns only once it
 * has copied src into the driver's staging buffers (CUDA's "API synchronization behavior"), so src
 * is free to go when the call returns. Pinned memory (the GPU-compatible CPU device's, or a host's
 * cudaHostAlloc) and managed memory are read by the copy engine later, after the call. Asking the
 * driver costs far less than the event manager's round trip, which wakes its thread: several
 * microseconds a step on a virtual machine, for every feed a frame loop copies in. */
static bool staged_on_return(const void *src) {
  struct cudaPointerAttributes attr;
  if (cudaPointerGetAttributes(&attr, src) != cudaSuccess) {
    (void)cudaGetLastError();
    return false; /* unknown: treat it as pinned */
  }
  return attr.type == cudaMemoryTypeUnregistered;
}

static tfd_code gpu_from_host(tfd_allocator *a, void *dst, const void *src, size_t bytes, void (*release)(void *),
                              void *release_arg, tfd_status *st) {
  tfd_gpu_ctx *c = tfd_bfc_allocator_context(a);
  if (bytes == 0) {
    release(release_arg);
    return TFD_OK;
  }
  cudaStream_t compute = c->streams[0][TFD_GPU_COMPUTE], h2d = c->streams[0][TFD_GPU_HOST_TO_DEVICE];
  cudaEvent_t reuse = NULL, copied = NULL;
  cuda_steps s = {cudaSuccess, NULL};
  STEP(&s, "cudaSetDevice", cudaSetDevice(c->cuda_id));
  STEP(&s, "cudaEventCreate", event_get(c, &reuse));
  STEP(&s, "cudaEventCreate", event_get(c, &copied));
  /* dst may be memory that kernels queued on compute still read (the allocator reuses it at once). */
  STEP(&s, "cudaEventRecord", cudaEventRecord(reuse, compute));
  STEP(&s, "cudaStreamWaitEvent", cudaStreamWaitEvent(h2d, reuse, 0));
  STEP(&s, "cudaMemcpyAsync", cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, h2d));
  bool queued = s.err == cudaSuccess;
  STEP(&s, "cudaEventRecord", cudaEventRecord(copied, h2d));
  STEP(&s, "cudaStreamWaitEvent", cudaStreamWaitEvent(compute, copied, 0)); /* later kernels see the bytes */
  event_put(c, reuse);
  event_put(c, copied);
  if (s.err != cudaSuccess) {
    if (queued) (void)cudaStreamSynchronize(h2d); /* src is read until the copy ends */
    release(release_arg);
    return cuda_failed(c, &s, "copying host to device", bytes, st);
  }
  if (staged_on_return(src)) {
    release(release_arg);
    return TFD_OK;
  }
  /* Pinned src stays the device's until the host-to-device stream has passed the copy. */
  if (tfd_event_mgr_then_execute(c->events, h2d, release, release_arg, NULL) == TFD_OK) return TFD_OK;
  /* The event manager could not take the callback (no event to be had): wait for the copy here
   * instead, slower but never wrong. */
  STEP(&s, "cudaStreamSynchronize", cudaStreamSynchronize(h2d));
  release(release_arg);
  return s.err == cudaSuccess ? TFD_OK : cuda_failed(c, &s, "copying host to device", bytes, st);
}

static const tfd_device_memory_ops gpu_memory_ops = {gpu_to_host, gpu_from_host};

/* ---- step graphs ----
 * The capture stream is the capture's own, not compute: compute must stay free for the copies
 * (gpu_from_host makes compute wait for them) and for other threads' nodes. Capture is relaxed:
 * growing the BFC allocator (cudaMalloc) while recording must not invalidate the capture, and the
 * calls that would be unsafe (copies out, which synchronise) are refused here instead. */
typedef struct kept_chunk {
  tfd_allocator *a;
  void *ptr;
  size_t size;
} kept_chunk;

typedef struct gpu_graph {
  cudaGraphExec_t exec;
  kept_chunk *kept; /* memory the graph writes on every launch, back to the allocator with it */
  size_t num_kept, cap_kept;
} gpu_graph;

typedef struct gpu_capture {
  tfd_gpu_ctx *ctx;
  cudaStream_t stream;
  gpu_graph *graph; /* its kept list fills while recording */
  bool failed;      /* a chunk could not be kept: it went back, so the graph must not run */
} gpu_capture;

/* Per thread, as CUDA's stream capture: the calling thread's capture, or NULL. */
static _Thread_local gpu_capture *capturing;

bool tfd_gpu_ctx_capturing(const tfd_gpu_ctx *c) { return capturing && capturing->ctx == c; }

cudaStream_t tfd_gpu_ctx_stream(tfd_gpu_ctx *c) {
  return tfd_gpu_ctx_capturing(c) ? capturing->stream : c->streams[0][TFD_GPU_COMPUTE];
}

/* The BFC allocator's hold hook: frees by the capturing thread wait for the graph's end. */
static bool hold_for_graph(void *ctx, tfd_allocator *a, void *ptr, size_t size) {
  if (!tfd_gpu_ctx_capturing(ctx)) return false;
  gpu_graph *g = capturing->graph;
  if (g->num_kept == g->cap_kept) {
    size_t cap = g->cap_kept ? 2 * g->cap_kept : 64;
    kept_chunk *grown = realloc(g->kept, cap * sizeof *grown);
    if (!grown) { /* nothing has run yet: the chunk may go back now if the graph never runs */
      capturing->failed = true;
      return false;
    }
    g->kept = grown, g->cap_kept = cap;
  }
  g->kept[g->num_kept++] = (kept_chunk){a, ptr, size};
  return true;
}

static void graph_release(gpu_graph *g) {
  if (!g) return;
  if (g->exec) cudaGraphExecDestroy(g->exec);
  for (size_t i = 0; i < g->num_kept; i++) tfd_bfc_allocator_release(g->kept[i].a, g->kept[i].ptr, g->kept[i].size);
  free(g->kept);
  free(g);
}

tfd_code tfd_gpu_capture_begin(tfd_gpu_ctx *c, tfd_status *st) {
  if (capturing)
    return tfd_status_setf(st, TFD_FAILED_PRECONDITION, "%s: this thread is recording a CUDA graph already", c->name);
  gpu_capture *cap = calloc(1, sizeof *cap);
  gpu_graph *g = calloc(1, sizeof *g);
  if (!cap || !g) {
    free(cap);
    free(g);
    return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "%s: out of memory starting a CUDA graph", c->name);
  }
  cap->ctx = c;
  cap->graph = g;
  cuda_steps s = {cudaSuccess, NULL};
  STEP(&s, "cudaSetDevice", cudaSetDevice(c->cuda_id));
  STEP(&s, "cudaStreamCreateWithFlags", cudaStreamCreateWithFlags(&cap->stream, cudaStreamNonBlocking));
  STEP(&s, "cudaStreamBeginCapture", cudaStreamBeginCapture(cap->stream, cudaStreamCaptureModeRelaxed));
  if (s.err != cudaSuccess) {
    if (cap->stream) cudaStreamDestroy(cap->stream);
    free(cap);
    free(g);
    return cuda_failed(c, &s, "starting a CUDA graph", 0, st);
  }
  capturing = cap;
  return TFD_OK;
}

tfd_code tfd_gpu_capture_end(tfd_gpu_ctx *c, bool abandon, void **graph, tfd_status *st) {
  *graph = NULL;
  gpu_capture *cap = capturing;
  if (!tfd_gpu_ctx_capturing(c))
    return tfd_status_setf(st, TFD_FAILED_PRECONDITION, "%s: this thread is not recording a CUDA graph", c->name);
  capturing = NULL; /* from here frees go back to the allocator at once */
  cudaGraph_t recorded = NULL;
  cuda_steps s = {cudaSuccess, NULL};
  STEP(&s, "cudaSetDevice", cudaSetDevice(c->cuda_id));
  /* Always ended, even when abandoned: a stream left capturing refuses all later work. */
  STEP(&s, "cudaStreamEndCapture", cudaStreamEndCapture(cap->stream, &recorded));
  if (!abandon && !cap->failed) STEP(&s, "cudaGraphInstantiate", cudaGraphInstantiate(&cap->graph->exec, recorded, 0));
  if (recorded) cudaGraphDestroy(recorded);
  cudaStreamDestroy(cap->stream);
  gpu_graph *g = cap->graph;
  bool failed = cap->failed;
  free(cap);
  if (abandon || failed || s.err != cudaSuccess) {
    if (g->exec) cudaGraphExecDestroy(g->exec), g->exec = NULL;
    graph_release(g);
    if (abandon) {
      (void)cudaGetLastError();
      return TFD_OK;
    }
    if (failed)
      return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "%s: out of memory keeping a CUDA graph's buffers", c->name);
    return cuda_failed(c, &s, "recording a CUDA graph", 0, st);
  }
  *graph = g;
  return TFD_OK;
}

tfd_code tfd_gpu_graph_launch(tfd_gpu_ctx *c, void *graph, tfd_status *st) {
  gpu_graph *g = graph;
  cuda_steps s = {cudaSuccess, NULL};
  STEP(&s, "cudaSetDevice", cudaSetDevice(c->cuda_id));
  STEP(&s, "cudaGraphLaunch", cudaGraphLaunch(g->exec, c->streams[0][TFD_GPU_COMPUTE]));
  return s.err == cudaSuccess ? TFD_OK : cuda_failed(c, &s, "launching a CUDA graph", 0, st);
}

void tfd_gpu_graph_free(tfd_gpu_ctx *c, void *graph) {
  if (!graph) return;
  (void)cudaSetDevice(c->cuda_id);
  graph_release(graph);
}

tfd_allocator *tfd_gpu_bfc_allocator_new(tfd_gpu_ctx *c, const char *name, int64_t memory_limit, bool allow_growth,
                                         tfd_status *st) {
  /* The allocator owns a reference to c (released after its last region goes back), so device memory
   * outliving the device still has its CUDA id, streams and event manager. */
  tfd_bfc_region_provider regions = {region_alloc, region_free, tfd_gpu_ctx_ref(c), region_release};
  tfd_bfc_options options = {.memory_limit = memory_limit,
                             .allow_growth = allow_growth,
                             .device_memory = &gpu_memory_ops,
                             .hold = hold_for_graph,
                             .hold_ctx = c};
  tfd_allocator *a = tfd_bfc_allocator_new(name, &regions, &options, st);
  if (!a) tfd_gpu_ctx_unref(c); /* on failure the reference stayed ours */
  return a;
}

/* ---- the GPU state sessions share (gpu_context.h): with the parked regions, the module's
 * process-wide state, as TensorFlow's GPUProcessState is its ---- */
typedef struct shared_gpu {
  tfd_gpu_ctx *ctx;         /* one reference, while users > 0 */
  tfd_allocator *allocator; /* one reference, while users > 0 */
  int64_t memory_limit;
  bool allow_growth;
  int users; /* devices that acquired it and have not released it */
} shared_gpu;
static pthread_mutex_t shared_mu = PTHREAD_MUTEX_INITIALIZER;
static shared_gpu shared_gpus[TFD_GPU_MAX_DEVICES];

tfd_code tfd_gpu_shared_acquire(int cuda_id, const char *name, int num_groups, int64_t *memory_limit, bool *allow_growth,
                                tfd_code (*attach)(tfd_gpu_ctx *c, tfd_status *st), tfd_gpu_ctx **ctx,
                                tfd_allocator **allocator, tfd_status *st) {
  *ctx = NULL;
  *allocator = NULL;
  if (cuda_id < 0 || cuda_id >= TFD_GPU_MAX_DEVICES)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "%s: CUDA device %d is past the %d the module uses", name, cuda_id,
                           TFD_GPU_MAX_DEVICES);
  /* Held while making them: two sessions starting at once must not each make their own. */
  pthread_mutex_lock(&shared_mu);
  shared_gpu *g = &shared_gpus[cuda_id];
  if (g->users == 0) {
    char alloc_name[64];
    snprintf(alloc_name, sizeof alloc_name, "GPU_%d_bfc", cuda_id);
    tfd_gpu_ctx *c = tfd_gpu_ctx_new(name, cuda_id, num_groups, st);
    tfd_allocator *a = NULL;
    if (c && (!attach || attach(c, st) == TFD_OK))
      a = tfd_gpu_bfc_allocator_new(c, alloc_name, *memory_limit, *allow_growth, st);
    if (!a) {
      pthread_mutex_unlock(&shared_mu);
      tfd_gpu_ctx_unref(c);
      return tfd_status_code(st);
    }
    *g = (shared_gpu){c, a, *memory_limit, *allow_growth, 0};
  }
  g->users++;
  *ctx = tfd_gpu_ctx_ref(g->ctx);
  *allocator = g->allocator;
  *memory_limit = g->memory_limit;
  *allow_growth = g->allow_growth;
  pthread_mutex_unlock(&shared_mu);
  return TFD_OK;
}

void tfd_gpu_shared_release(int cuda_id) {
  if (cuda_id < 0 || cuda_id >= TFD_GPU_MAX_DEVICES) return;
  pthread_mutex_lock(&shared_mu);
  shared_gpu *g = &shared_gpus[cuda_id], last = {0};
  if (g->users > 0 && --g->users == 0) {
    last = *g;
    *g = (shared_gpu){0};
  }
  pthread_mutex_unlock(&shared_mu);
  /* Outside the lock: freeing the allocator synchronises the device to park its regions. */
  if (last.allocator) tfd_allocator_unref(last.allocator);
  tfd_gpu_ctx_unref(last.ctx);
}
