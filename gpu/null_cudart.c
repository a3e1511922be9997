/* A null CUDA runtime: a libcudart.so.13 with the 40 functions that libtfdev_cuda.so and
 * tfdev_gpu_bench import (symbol version libcudart.so.13: null_cudart.map). It reports one GPU,
 * keeps "device" memory in host memory, copies with memcpy (from pinned memory to the device only at
 * the next call that synchronises, as a GPU's copy engine would), and runs no kernel: a launch returns
 * at once, so a kernel's output holds whatever the memory held. Found before the real one
 * (LD_LIBRARY_PATH=build/null_cudart), it lets a machine without a GPU run the CUDA backend's host
 * side for real, for two uses:
 *   - null_cudart_test: the backend's host code (contexts, streams, events, the BFC allocator over
 *     cudaMalloc, copies, step-graph capture and replay, parked regions) under CI and the sanitizers,
 *     with the calls it makes counted (tfd_null_cudart_count);
 *   - tfdev_gpu_bench under it: tfdev's own host cost per node and per step, with the CUDA driver's
 *     share taken out (docs/gpu.md, "GPU benchmarks").
 * The real cuBLAS and cuDNN do not load against it (symbols they need are missing); the null ones
 * beside it (null_cublas.c, null_cudnn.c) do. Never installed.
 *
 * Thread-safe: the state is atomic counters, the launch configuration, which nvcc's stubs push and
 * pop on one thread, kept per thread as in the real runtime, the list of live allocations that
 * cudaPointerGetAttributes answers from, and the copies waiting, each list under its mutex. */
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* What the one GPU reports; allocations are mapped without backing (MAP_NORESERVE). */
#define NULL_GPU_BYTES (4ull << 30)

static _Thread_local cudaError_t last_error = cudaSuccess;
static _Thread_local struct {
  dim3 grid, block;
  size_t shared;
  void *stream;
} pushed;
static atomic_ullong launches, graph_launches, captures, mallocs, event_records;
static atomic_ullong device_bytes; /* cudaMalloc'd and not freed: the GPU's memory in use */

/* How many of `what` this process made so far: "launches" (kernels), "graph_launches", "captures"
 * (cudaStreamBeginCapture), "mallocs" (cudaMalloc) or "event_records" (cudaEventRecord); 0 for
 * another name. Reached through dlsym, as a test that links no CUDA finds it. */
unsigned long long tfd_null_cudart_count(const char *what) {
  if (!strcmp(what, "launches")) return atomic_load(&launches);
  if (!strcmp(what, "graph_launches")) return atomic_load(&graph_launches);
  if (!strcmp(what, "captures")) return atomic_load(&captures);
  if (!strcmp(what, "mallocs")) return atomic_load(&mallocs);
  if (!strcmp(what, "event_records")) return atomic_load(&event_records);
  return 0;
}

static cudaError_t ok(void) { return cudaSuccess; }
static void flush_copies(void); /* the copies from pinned memory still waiting (below) */

/* ---- the registration calls nvcc's host stubs make ---- */
void **__cudaRegisterFatBinary(void *fat) {
  static void *handle;
  handle = fat;
  return &handle;
}
void __cudaRegisterFatBinaryEnd(void **h) { (void)h; }
void __cudaUnregisterFatBinary(void **h) { (void)h; }
void __cudaRegisterFunction(void **h, const char *host_fun, char *device_fun, const char *device_name, int limit,
                            uint3 *tid, uint3 *bid, dim3 *bdim, dim3 *gdim, int *wsize) {
  (void)h, (void)host_fun, (void)device_fun, (void)device_name, (void)limit, (void)tid, (void)bid, (void)bdim,
      (void)gdim, (void)wsize;
}
unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shared, void *stream) {
  pushed.grid = grid, pushed.block = block, pushed.shared = shared, pushed.stream = stream;
  return 0;
}
cudaError_t __cudaPopCallConfiguration(dim3 *grid, dim3 *block, size_t *shared, void *stream) {
  *grid = pushed.grid, *block = pushed.block, *shared = pushed.shared, *(void **)stream = pushed.stream;
  return cudaSuccess;
}
cudaError_t __cudaGetKernel(cudaKernel_t *k, const void *fun) {
  *k = (cudaKernel_t)fun;
  return cudaSuccess;
}
cudaError_t __cudaLaunchKernel(cudaKernel_t k, dim3 grid, dim3 block, void **args, size_t shared, cudaStream_t s) {
  (void)k, (void)grid, (void)block, (void)args, (void)shared, (void)s;
  atomic_fetch_add_explicit(&launches, 1, memory_order_relaxed);
  return cudaSuccess;
}

/* ---- devices ---- */
cudaError_t cudaGetDeviceCount(int *n) {
  *n = 1;
  return cudaSuccess;
}
cudaError_t cudaSetDevice(int id) { return id == 0 ? ok() : (last_error = cudaErrorInvalidDevice); }
cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int id) {
  if (id != 0) return last_error = cudaErrorInvalidDevice;
  memset(p, 0, sizeof *p);
  snprintf(p->name, sizeof p->name, "null CUDA runtime (no GPU, no kernels)");
  p->totalGlobalMem = NULL_GPU_BYTES;
  p->major = 9;
  p->multiProcessorCount = 132;
  return cudaSuccess;
}
cudaError_t cudaDeviceGetAttribute(int *v, enum cudaDeviceAttr a, int id) {
  if (id != 0) return last_error = cudaErrorInvalidDevice;
  *v = a == cudaDevAttrMultiProcessorCount ? 132 : 0;
  return cudaSuccess;
}
cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total) {
  unsigned long long used = atomic_load(&device_bytes);
  *total = NULL_GPU_BYTES;
  *free_bytes = used < NULL_GPU_BYTES ? NULL_GPU_BYTES - used : 0;
  return cudaSuccess;
}
cudaError_t cudaDeviceSynchronize(void) {
  flush_copies();
  return cudaSuccess;
}
cudaError_t cudaGetLastError(void) {
  cudaError_t e = last_error;
  last_error = cudaSuccess;
  return e;
}
const char *cudaGetErrorString(cudaError_t e) { return e == cudaSuccess ? "no error" : "null CUDA runtime error"; }

/* ---- memory: mmap'd so that a BFC region the size of the "GPU" costs only what is touched ---- */
/* The mapping's length sits in a page before the pointer handed out, which is page-aligned (cudaMalloc
 * promises 256 bytes). */
#define HEADER 4096
static cudaError_t map(void **p, size_t bytes) {
  void *m = mmap(NULL, bytes + HEADER, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) return last_error = cudaErrorMemoryAllocation;
  *(size_t *)m = bytes + HEADER;
  *p = (char *)m + HEADER;
  return cudaSuccess;
}
static cudaError_t unmap(void *p) {
  if (!p) return cudaSuccess;
  char *m = (char *)p - HEADER;
  munmap(m, *(size_t *)m);
  return cudaSuccess;
}
/* The live cudaMalloc and cudaHostAlloc allocations, for cudaPointerGetAttributes: any other
 * address is pageable host memory, as malloc's is to the real runtime. */
typedef struct allocation {
  char *base;
  size_t bytes;
  enum cudaMemoryType type;
  struct allocation *next;
} allocation;
static pthread_mutex_t allocations_mu = PTHREAD_MUTEX_INITIALIZER;
static allocation *allocations;

static cudaError_t map_as(void **p, size_t bytes, enum cudaMemoryType type) {
  allocation *a = malloc(sizeof *a);
  if (!a) return last_error = cudaErrorMemoryAllocation;
  cudaError_t e = map(p, bytes);
  if (e != cudaSuccess) {
    free(a);
    return e;
  }
  *a = (allocation){*p, bytes, type, NULL};
  pthread_mutex_lock(&allocations_mu);
  a->next = allocations;
  allocations = a;
  pthread_mutex_unlock(&allocations_mu);
  return cudaSuccess;
}
static cudaError_t unmap_as(void *p) {
  pthread_mutex_lock(&allocations_mu);
  for (allocation **at = &allocations; p && *at; at = &(*at)->next) {
    if ((*at)->base == p) {
      allocation *gone = *at;
      *at = gone->next;
      free(gone);
      break;
    }
  }
  pthread_mutex_unlock(&allocations_mu);
  return unmap(p);
}
/* What p points into: device memory, pinned host memory, or (anything else) pageable memory. */
static enum cudaMemoryType type_of(const void *p) {
  enum cudaMemoryType type = cudaMemoryTypeUnregistered;
  const char *c = p;
  pthread_mutex_lock(&allocations_mu);
  for (allocation *a = allocations; a; a = a->next) {
    if (c >= a->base && c < a->base + a->bytes) {
      type = a->type;
      break;
    }
  }
  pthread_mutex_unlock(&allocations_mu);
  return type;
}
cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *attr, const void *ptr) {
  memset(attr, 0, sizeof *attr);
  attr->type = type_of(ptr);
  if (attr->type != cudaMemoryTypeUnregistered) attr->devicePointer = (void *)ptr;
  if (attr->type == cudaMemoryTypeHost) attr->hostPointer = (void *)ptr;
  return cudaSuccess;
}

/* Copies from pinned memory to the device wait, as a GPU's copy engine reads pinned memory after
 * cudaMemcpyAsync has returned: they are done, in order, by the next call that waits for work or
 * moves or frees other memory. So a caller that let a pinned source go before its copy was known to
 * be done (an event passed) copies whatever the memory holds by then, here as on a GPU. Copies
 * from pageable memory are done at once: CUDA stages them before it returns. */
typedef struct pending_copy {
  void *dst;
  const void *src;
  size_t n;
  struct pending_copy *next;
} pending_copy;
static pthread_mutex_t pending_mu = PTHREAD_MUTEX_INITIALIZER;
static pending_copy *pending_head, **pending_tail = &pending_head;
static atomic_int held; /* tfd_null_cudart_hold_copies: cudaEventQuery reports pending copies unfinished */

/* While on, a copy from pinned memory stays undone and cudaEventQuery says "not ready" as long as one
 * waits, as on a GPU still busy; calls that wait (synchronise, copy other memory) still do them. Off
 * does the waiting copies. For tests of who keeps a pinned source alive until its copy is done. */
void tfd_null_cudart_hold_copies(int on) {
  atomic_store(&held, on);
  if (!on) flush_copies();
}
static bool copies_pending(void) {
  pthread_mutex_lock(&pending_mu);
  bool any = pending_head != NULL;
  pthread_mutex_unlock(&pending_mu);
  return any;
}

static void flush_copies(void) {
  pthread_mutex_lock(&pending_mu);
  while (pending_head) {
    pending_copy *c = pending_head;
    pending_head = c->next;
    memmove(c->dst, c->src, c->n);
    free(c);
  }
  pending_tail = &pending_head;
  pthread_mutex_unlock(&pending_mu);
}

static bool defer_copy(void *dst, const void *src, size_t n, enum cudaMemcpyKind k) {
  if (k != cudaMemcpyHostToDevice && k != cudaMemcpyDefault) return false;
  if (type_of(src) != cudaMemoryTypeHost || type_of(dst) != cudaMemoryTypeDevice) return false;
  pending_copy *c = malloc(sizeof *c);
  if (!c) return false; /* then at once */
  *c = (pending_copy){dst, src, n, NULL};
  pthread_mutex_lock(&pending_mu);
  *pending_tail = c;
  pending_tail = &c->next;
  pthread_mutex_unlock(&pending_mu);
  return true;
}

/* Device memory is bounded as on a GPU: cudaMalloc past NULL_GPU_BYTES in use fails. */
cudaError_t cudaMalloc(void **p, size_t bytes) {
  atomic_fetch_add(&mallocs, 1);
  if (atomic_fetch_add(&device_bytes, bytes) + bytes > NULL_GPU_BYTES) {
    atomic_fetch_sub(&device_bytes, bytes);
    return last_error = cudaErrorMemoryAllocation;
  }
  cudaError_t e = map_as(p, bytes, cudaMemoryTypeDevice);
  if (e != cudaSuccess) atomic_fetch_sub(&device_bytes, bytes);
  return e;
}
cudaError_t cudaFree(void *p) {
  flush_copies();
  if (p) atomic_fetch_sub(&device_bytes, *(size_t *)((char *)p - HEADER) - HEADER);
  return unmap_as(p);
}
cudaError_t cudaHostAlloc(void **p, size_t bytes, unsigned flags) {
  (void)flags;
  return map_as(p, bytes, cudaMemoryTypeHost);
}
cudaError_t cudaFreeHost(void *p) {
  flush_copies();
  return unmap_as(p);
}
cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind k) {
  (void)k;
  flush_copies();
  if (n) memmove(dst, src, n);
  return cudaSuccess;
}
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, enum cudaMemcpyKind k, cudaStream_t s) {
  (void)s;
  if (n && defer_copy(dst, src, n, k)) return cudaSuccess;
  return cudaMemcpy(dst, src, n, k);
}
cudaError_t cudaMemset(void *p, int v, size_t n) {
  flush_copies();
  if (n) memset(p, v, n);
  return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t s) {
  (void)s;
  return cudaMemset(p, v, n);
}

/* ---- streams, events and graphs: handles with nothing behind them; work is done when queued ---- */
static void *handle(void) { return malloc(1); }
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags) {
  (void)flags;
  return (*s = handle()) ? cudaSuccess : (last_error = cudaErrorMemoryAllocation);
}
cudaError_t cudaStreamDestroy(cudaStream_t s) {
  free(s);
  return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t s) {
  (void)s;
  flush_copies();
  return cudaSuccess;
}
cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned flags) {
  (void)s, (void)e, (void)flags;
  return cudaSuccess;
}
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned flags) {
  (void)flags;
  return (*e = handle()) ? cudaSuccess : (last_error = cudaErrorMemoryAllocation);
}
cudaError_t cudaEventDestroy(cudaEvent_t e) {
  free(e);
  return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) {
  (void)e, (void)s;
  atomic_fetch_add_explicit(&event_records, 1, memory_order_relaxed);
  return cudaSuccess;
}
cudaError_t cudaEventQuery(cudaEvent_t e) {
  (void)e;
  if (atomic_load(&held) && copies_pending()) return cudaErrorNotReady;
  flush_copies();
  return cudaSuccess;
}
cudaError_t cudaEventSynchronize(cudaEvent_t e) {
  (void)e;
  flush_copies();
  return cudaSuccess;
}
cudaError_t cudaStreamBeginCapture(cudaStream_t s, enum cudaStreamCaptureMode m) {
  (void)s, (void)m;
  atomic_fetch_add(&captures, 1);
  return cudaSuccess;
}
cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *g) {
  (void)s;
  return (*g = handle()) ? cudaSuccess : (last_error = cudaErrorMemoryAllocation);
}
cudaError_t cudaGraphInstantiate(cudaGraphExec_t *x, cudaGraph_t g, unsigned long long flags) {
  (void)g, (void)flags;
  return (*x = handle()) ? cudaSuccess : (last_error = cudaErrorMemoryAllocation);
}
cudaError_t cudaGraphLaunch(cudaGraphExec_t x, cudaStream_t s) {
  (void)x, (void)s;
  atomic_fetch_add(&graph_launches, 1);
  return cudaSuccess;
}
cudaError_t cudaGraphDestroy(cudaGraph_t g) {
  free(g);
  return cudaSuccess;
}
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t x) {
  free(x);
  return cudaSuccess;
}
