/* TensorFlow's EventMgr for tfdev's GPU devices: run host-side callbacks (releasing the references
 * that keep a copy's or a kernel's tensors alive) once a stream has passed the point where they
 * were queued, without ever blocking the thread that queued them.
 *
 * The bookkeeping is plain C over an abstract event provider, so it is unit-tested on the CPU
 * (gpu/event_mgr_test.c) with events a test completes by hand; the CUDA module's provider uses
 * cudaEventRecord and cudaEventQuery. One polling thread per manager checks in-flight events in the
 * order they were recorded and runs the callbacks of those that completed, outside its lock. */
#ifndef TFDEV_GPU_EVENT_MGR_H
#define TFDEV_GPU_EVENT_MGR_H

#include <stddef.h>
#include <stdint.h>

#include "tfdev/status.h"

typedef struct tfd_event_provider {
  void *ctx;
  /* A new event, or NULL (out of resources). */
  void *(*create)(void *ctx);
  /* Records `event` on `stream`: it completes when the work queued on the stream so far has. */
  tfd_code (*record)(void *ctx, void *event, void *stream, tfd_status *status);
  /* 1: completed; 0: not yet; -1: the stream failed (the event will never complete). */
  int (*query)(void *ctx, void *event);
  void (*destroy)(void *ctx, void *event);
} tfd_event_provider;

typedef struct tfd_event_mgr tfd_event_mgr;

/* A manager polling every poll_us microseconds while events are in flight (sleeping otherwise).
 * The provider is copied; its ctx must outlive the manager. NULL with the status set on failure.
 * The caller frees it with tfd_event_mgr_free. */
tfd_event_mgr *tfd_event_mgr_new(const tfd_event_provider *provider, int poll_us, tfd_status *status);
/* ThenExecute: fn(arg) runs, on the polling thread, once `stream` has finished everything queued on
 * it before this call. When the event cannot be created or recorded, fn does not run and the error
 * is returned: the caller still owns what fn would have released. */
tfd_code tfd_event_mgr_then_execute(tfd_event_mgr *m, void *stream, void (*fn)(void *arg), void *arg,
                                    tfd_status *status);
/* Callbacks queued and not run yet. */
size_t tfd_event_mgr_pending(tfd_event_mgr *m);
/* Events whose stream failed: their callbacks ran anyway (the references must still be released). */
int64_t tfd_event_mgr_failures(tfd_event_mgr *m);
/* Waits until every queued callback has run, then stops the thread and frees the events and m. */
void tfd_event_mgr_free(tfd_event_mgr *m);

#endif
