/* tfdev thread pool: a fixed set of worker threads and a parallel-for that shards work.
 *
 * This is the intra-op pool a LocalDevice hands its kernels. A parallel-for
 * may be called from inside the pool (a kernel running on a worker): the
 * caller always works on shards itself, so nested use never deadlocks. */
#ifndef TFDEV_THREADPOOL_H
#define TFDEV_THREADPOOL_H

#include "tfdev/export.h"

#include <stdint.h>

#include "tfdev/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tfd_threadpool tfd_threadpool;

/* The most threads one pool may have, and the most a session's CPU devices
 * with pools of their own may start together: asking for more is an error,
 * not a process with a million threads. */
#define TFD_MAX_THREADS 1024

typedef void (*tfd_task_fn)(void *arg);
/* Work on [begin, end) of a parallel-for range. */
typedef void (*tfd_range_fn)(int64_t begin, int64_t end, void *arg);

/* Starts `num_threads` workers (num_threads <= 0: one per core).
 * INVALID_ARGUMENT above TFD_MAX_THREADS. `name`
 * (copied) labels the threads. *out: the pool, NULL on failure. The caller
 * frees the pool with tfd_threadpool_free. */
TFD_API tfd_code tfd_threadpool_new(const char *name, int num_threads, tfd_threadpool **out, tfd_status *status);
/* Runs every task already scheduled, then joins the workers and frees. */
TFD_API void tfd_threadpool_free(tfd_threadpool *pool);

/* The pool's thread count and name (borrowed: valid as long as the pool). */
TFD_API int tfd_threadpool_num_threads(const tfd_threadpool *pool);
TFD_API const char *tfd_threadpool_name(const tfd_threadpool *pool);
/* Index (0..n-1) of the calling thread in `pool`, or -1 if it is not one of
 * the pool's workers. */
TFD_API int tfd_threadpool_current_thread_id(const tfd_threadpool *pool);

/* Queues fn(arg) to run on a worker. Never blocks on other tasks. */
TFD_API tfd_code tfd_threadpool_schedule(tfd_threadpool *pool, tfd_task_fn fn, void *arg, tfd_status *status);

/* Calls fn over [0, total) split into contiguous shards run in parallel by
 * the caller and up to threads - 1 workers (n threads, n-way parallelism);
 * returns when every shard is done. `cost_per_unit` is a rough cost of one
 * unit in nanoseconds: small total work runs inline on the caller, large
 * work is split into at most 4 x threads shards. pool may be NULL (runs
 * inline). */
TFD_API void tfd_threadpool_parallel_for(tfd_threadpool *pool, int64_t total, int64_t cost_per_unit, tfd_range_fn fn,
                                         void *arg);

/* Number of cores this process may run on (at least 1). */
TFD_API int tfd_env_num_cores(void);

#ifdef __cplusplus
}
#endif
#endif
