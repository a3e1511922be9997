/* Thread pools for the runtime only: the hosted kind, over a host's job system. */
#ifndef TFDEV_RUNTIME_THREADPOOL_INTERNAL_H
#define TFDEV_RUNTIME_THREADPOOL_INTERNAL_H

#include "tfdev/runtime.h"
#include "tfdev/threadpool.h"

/* A pool whose tasks are the host's jobs (include/tfdev/runtime.h's scheduler, copied): it starts no
 * thread. Its size is the scheduler's num_threads; a task runs with `logger` (borrowed; NULL: stderr)
 * as its thread's logger. tfd_threadpool_free waits for the tasks handed over. INVALID_ARGUMENT for
 * a scheduler without a function or with fewer than 1 or more than TFD_MAX_THREADS threads. */
tfd_threadpool *tfd_threadpool_new_hosted(const char *name, const tfd_host_scheduler *host,
                                          const tfd_host_logger *logger, tfd_status *status);

#endif
