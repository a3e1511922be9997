/* tfdev runtimes: one per host (or per Lua state), owning its device factory registry and the host's
 * hooks for tensor memory, logging and threads.
 *
 * A game or engine already has a memory allocator, a log and a job system; a runtime made with
 * hooks uses them: CPU tensors come from the host's allocator, log lines go to the host's logger,
 * and the intra- and inter-op work of its sessions runs as the host's jobs, so tfdev starts no
 * thread the host did not ask for. Two runtimes in one process share nothing: each has its own
 * registry (a factory registered in one is not seen by the other), threads and log.
 *
 * Sessions of a runtime are made with tfd_runtime_session_new, or with tfd_session_new given the
 * runtime's registry (tfd_runtime_registry): both mean the same. A runtime is reference counted:
 * its sessions, and the devices they made, hold it, so tfd_runtime_unref may come first. */
#ifndef TFDEV_RUNTIME_H
#define TFDEV_RUNTIME_H

#include "tfdev/export.h"

#include <stddef.h>

#include "tfdev/device_factory.h"
#include "tfdev/options.h"
#include "tfdev/session.h"
#include "tfdev/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tfd_runtime tfd_runtime;

typedef enum tfd_log_level { TFD_LOG_DEBUG, TFD_LOG_INFO, TFD_LOG_WARNING, TFD_LOG_ERROR } tfd_log_level;

/* Memory for CPU tensors. allocate returns size bytes aligned to alignment (a power of two, at
 * least 64), or NULL when it cannot; deallocate gets back each block with the size asked for.
 * Called from any thread. tfdev keeps no cache of its own over it: the host sees every tensor's
 * buffer come and go. (Tensor headers and tfdev's own bookkeeping still use malloc.) */
typedef struct tfd_host_allocator {
  void *(*allocate)(void *ctx, size_t alignment, size_t size);
  void (*deallocate)(void *ctx, void *ptr, size_t size);
  void *ctx;
} tfd_host_allocator;

/* Log lines at or above `level` (one call per line, without a newline), from any thread. */
typedef struct tfd_host_logger {
  void (*log)(void *ctx, tfd_log_level level, const char *message);
  tfd_log_level level;
  void *ctx;
} tfd_host_logger;

/* The host's job system. schedule queues fn(arg) to run once, soon, on one of the host's threads,
 * returning 0, or nonzero when it cannot (tfdev then runs the work on the calling thread). It must
 * not call fn before it returns. num_threads (>= 1) is how many jobs tfdev may have running at once:
 * its parallel loops split work that many ways. tfdev may block inside a job waiting for other jobs
 * it scheduled, so the host must run at least two jobs at once when num_threads > 1. */
typedef struct tfd_host_scheduler {
  int (*schedule)(void *ctx, void (*fn)(void *arg), void *arg);
  int num_threads;
  void *ctx;
} tfd_host_scheduler;

/* What a runtime uses; each NULL member means tfdev's default: malloc-backed caching allocators,
 * stderr at the TFDEV_LOG level ("tfdev <level>: message"), tfdev's own thread pools. The hooks'
 * functions and contexts must stay valid until the runtime and everything made from it are gone. */
typedef struct tfd_runtime_config {
  const tfd_host_allocator *allocator;
  const tfd_host_logger *logger;
  const tfd_host_scheduler *scheduler;
} tfd_runtime_config;

/* A new runtime in *out (config NULL: all defaults; *out NULL on failure) whose registry starts as a
 * copy of the built-in one (ThreadPoolDevice at 60 and the backends' factories). The caller releases it with
 * tfd_runtime_unref. INVALID_ARGUMENT for a hook missing a function or a scheduler of fewer than one
 * thread. */
TFD_API tfd_code tfd_runtime_new(const tfd_runtime_config *config, tfd_runtime **out, tfd_status *status);
/* Releases the caller's reference (as every reference-counted kind's _unref); the runtime goes when its last
 * session and device have. NULL is harmless. */
TFD_API void tfd_runtime_unref(tfd_runtime *rt);
/* Another reference (released with tfd_runtime_unref). NULL stays NULL. */
TFD_API tfd_runtime *tfd_runtime_ref(tfd_runtime *rt);
/* The runtime's factory registry (borrowed): register a host's device factories here. */
TFD_API tfd_factory_registry *tfd_runtime_registry(tfd_runtime *rt);
/* tfd_session_new(options, tfd_runtime_registry(rt), host_ctx, status). */
TFD_API tfd_code tfd_runtime_session_new(tfd_runtime *rt, const tfd_session_options *options, void *host_ctx,
                                             tfd_session **out, tfd_status *status);
/* tfd_session_factory_reset for the sessions of rt (include/tfdev/session.h). */
TFD_API tfd_code tfd_runtime_session_factory_reset(tfd_runtime *rt, const tfd_session_options *options,
                                                   const char *const *containers, int n, tfd_status *status);
/* A new CPU allocator (the caller owns the reference) for tensors a host makes itself: over the
 * runtime's host allocator when it has one (no cache), else the system's, keeping up to cache_bytes
 * of freed blocks. bytes_limit as tfd_cpu_allocator_new's. NULL when out of memory. */
TFD_API tfd_allocator *tfd_runtime_cpu_allocator_new(tfd_runtime *rt, const char *name, int64_t bytes_limit,
                                                     int64_t cache_bytes);
/* Writes a line through the runtime's logger (its level decides). */
TFD_API void tfd_runtime_log(tfd_runtime *rt, tfd_log_level level, const char *message);

#ifdef __cplusplus
}
#endif
#endif
