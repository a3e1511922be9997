/* Asynchronous runs (tfd_session_run_async and tfd_session_run_callable_async): a tfd_run handle
 * the caller waits on, polls, cancels or frees, finished by the last partition to end. */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#include "session_args.h"
#include "session_internal.h"

/*
 * A tfd_run is shared by the caller's handle, its step while the step runs,
 * and the registration of fail_queued_kernels on its cancellation until that
 * registration ends (three references). The step holds the session as a call in flight
 * (inflight) until it has ended and done has returned, so close() cancels
 * it through the active list and waits for it; after that the run touches
 * the session no more, and its handle outlives the session safely. */
static void release_feeds(tfd_run *r) {
  for (int k = 0; r->feeds && k < r->num_feeds; k++) tfd_tensor_unref(r->feeds[k]);
  free(r->feeds);
  r->feeds = NULL;
}

static void run_unref(tfd_run *r) {
  if (!r || !tfd_refcount_dec(&r->refs)) return;
  release_feeds(r);
  for (int i = 0; r->outputs && i < r->num_outputs; i++) tfd_tensor_unref(r->outputs[i]);
  free(r->outputs);
  free(r->outs);
  if (r->keeper) r->release_keeper(r->keeper);
  else free(r->fetch_map);
  tfd_cancellation_unref(r->cancel);
  tfd_status_clear(&r->status);
  pthread_mutex_destroy(&r->mu);
  pthread_cond_destroy(&r->cv);
  free(r);
}

/* Cancelling the run closes its caller queue: the kernels waiting there, and any posted later, fail
 * unrun, since whoever would run them (a waiter on the run) may never come (a run cancelled and freed,
 * a Lua future collected) and the step could not end. The registration holds a reference to the run
 * (release_run): the callback may run after the step has ended. */
static void fail_queued_kernels(void *arg, tfd_code code, const char *message) {
  (void)code;
  (void)message;
  tfd_run *r = arg;
  /* Set by step_start before anyone could cancel: the caller has no handle until it returns, and
   * close() finds the step only once it is in the active list. */
  if (!r->x.has_queue) return;
  pthread_mutex_lock(&r->mu);
  caller_item *items = tfd_caller_queue_close_locked(&r->x.queue);
  pthread_mutex_unlock(&r->mu);
  tfd_caller_queue_cancel_items(items);
}

static void release_run(void *arg) { run_unref(arg); }

/* on_done of an asynchronous step: the last partition has ended (or none ran). */
static void run_step_done(step *x) {
  tfd_run *r = (tfd_run *)((char *)x - offsetof(tfd_run, x));
  tfd_session *s = r->s;
  /* Its release drops the registration's reference now, or once the callback, if running, returns. */
  tfd_cancellation_deregister(r->cancel, r->queue_token);
  tfd_code code = tfd_ds_step_finish(x, r->outs, r->meta, r->timeout_ms, &r->status);
  if (code == TFD_OK) {
    for (int i = 0; i < r->num_outputs; i++) r->outputs[i] = tfd_tensor_ref(r->outs[r->fetch_map[i]]);
    for (int k = 0; k < x->b->num_fetches; k++) tfd_tensor_unref(r->outs[k]);
  }
  release_feeds(r); /* before done: its inputs are free to be written from now on */
  pthread_mutex_lock(&r->mu);
  r->completer = pthread_self();
  r->completing = true;
  pthread_mutex_unlock(&r->mu);
  if (r->done) r->done(r->done_arg, &r->status);
  pthread_mutex_lock(&r->mu);
  r->completing = false;
  r->ended = true;
  pthread_cond_broadcast(&r->cv);
  pthread_mutex_unlock(&r->mu);
  tfd_ds_leave(s); /* the last touch of the session: close() may free it from here on */
  run_unref(r); /* the step's reference */
}

/* Starts bundle b asynchronously with feeds in bundle order (borrowed; referenced here). fetch_map is
 * taken (freed on failure too) unless keeper (a callable), whose reference is taken either way and
 * dropped by release_keeper, owns it. */
tfd_run *tfd_ds_start_async(tfd_session *s, bundle *b, void *keeper, void (*release_keeper)(void *), int *fetch_map,
                            int num_outputs,
                            const tfd_run_options *ro, tfd_tensor *const *feeds, tfd_run_metadata *meta,
                            tfd_run_done_fn done, void *done_arg, tfd_status *st) {
  tfd_run *r = calloc(1, sizeof *r);
  if (r) {
    r->keeper = keeper;
    r->release_keeper = release_keeper;
    r->fetch_map = fetch_map;
    r->num_outputs = num_outputs;
    r->feeds = calloc((size_t)b->num_feeds + 1, sizeof *r->feeds);
    r->outs = calloc((size_t)b->num_fetches + 1, sizeof *r->outs);
    r->outputs = calloc((size_t)num_outputs + 1, sizeof *r->outputs);
  }
  if (!r || !r->feeds || !r->outs || !r->outputs) {
    if (r) {
      free(r->feeds);
      free(r->outs);
      free(r->outputs);
      free(r);
    }
    if (keeper) release_keeper(keeper);
    else free(fetch_map);
    tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory starting a run");
    return NULL;
  }
  tfd_refcount_init(&r->refs); /* the caller's */
  pthread_mutex_init(&r->mu, NULL);
  pthread_cond_init(&r->cv, NULL);
  r->status = (tfd_status)TFD_STATUS_INIT;
  r->s = s;
  r->meta = meta;
  r->done = done;
  r->done_arg = done_arg;
  r->timeout_ms = tfd_ds_run_timeout(s, ro);
  if (r->timeout_ms > 0) r->deadline = tfd_deadline_after_ms(r->timeout_ms);
  for (int k = 0; k < b->num_feeds; k++) r->feeds[k] = feeds[k] ? tfd_tensor_ref(feeds[k]) : NULL;
  r->num_feeds = b->num_feeds;
  /* The step's reference and its hold on the session come first: it may end before step_start returns. */
  tfd_refcount_inc(&r->refs);
  tfd_ds_hold(s);
  r->cancel = tfd_cancellation_new();
  r->queue_token = TFD_CANCEL_NO_MEMORY;
  if (r->cancel) {
    tfd_refcount_inc(&r->refs); /* the registration's, dropped by its release */
    r->queue_token = tfd_cancellation_register(r->cancel, fail_queued_kernels, release_run, r);
    if (r->queue_token < 0) tfd_refcount_dec(&r->refs); /* refused: no release will run (never the last) */
  }
  r->x.queue_mu = &r->mu; /* caller-thread kernels are run by whoever waits on or polls the run */
  r->x.queue_cv = &r->cv;
  tfd_code started =
      r->queue_token >= 0
          ? tfd_ds_step_start(&r->x, s, b, ro, r->feeds, run_step_done, tfd_cancellation_ref(r->cancel), st)
          : tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory starting a run");
  if (started != TFD_OK) {
    if (r->queue_token >= 0) tfd_cancellation_deregister(r->cancel, r->queue_token); /* nobody has cancelled it */
    tfd_ds_leave(s);
    tfd_refcount_dec(&r->refs); /* the step's: it never started */
    run_unref(r);
    return NULL;
  }
  return r;
}

bool tfd_run_wait(tfd_run *r, int64_t timeout_ms, tfd_status *st) {
  tfd_status_reset(st);
  if (tfd_arg_required(st, "tfd_run_wait", "run", r)) return true; /* nothing to wait for */
  struct timespec until = timeout_ms > 0 ? tfd_deadline_after_ms(timeout_ms) : (struct timespec){0, 0};
  pthread_mutex_lock(&r->mu);
  for (;;) {
    if (r->ended) break;
    if (r->x.has_queue && tfd_caller_queue_pending_locked(&r->x.queue)) { /* kernels that run here */
      tfd_caller_queue_drain_locked(&r->x.queue);
      continue;
    }
    /* The step's own deadline comes first when it is the sooner. */
    bool step_deadline = r->timeout_ms > 0 && !tfd_cancellation_is_cancelled(r->cancel) &&
                         (timeout_ms < 0 || (timeout_ms > 0 && (r->deadline.tv_sec < until.tv_sec ||
                                                                (r->deadline.tv_sec == until.tv_sec &&
                                                                 r->deadline.tv_nsec < until.tv_nsec))));
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    bool step_late = r->timeout_ms > 0 && (now.tv_sec > r->deadline.tv_sec ||
                                           (now.tv_sec == r->deadline.tv_sec && now.tv_nsec >= r->deadline.tv_nsec));
    if (step_late && !tfd_cancellation_is_cancelled(r->cancel)) {
      /* Not under mu: cancelling runs callbacks that may end the step, whose end takes mu. */
      pthread_mutex_unlock(&r->mu);
      char msg[96];
      snprintf(msg, sizeof msg, "Timed out waiting for the step (%lld ms)", (long long)r->timeout_ms);
      tfd_cancellation_cancel(r->cancel, TFD_DEADLINE_EXCEEDED, msg);
      pthread_mutex_lock(&r->mu);
      continue;
    }
    if (timeout_ms == 0) break;
    if (step_deadline) {
      pthread_cond_timedwait(&r->cv, &r->mu, &r->deadline);
    } else if (timeout_ms < 0) {
      pthread_cond_wait(&r->cv, &r->mu);
    } else if (pthread_cond_timedwait(&r->cv, &r->mu, &until) == ETIMEDOUT) {
      break;
    }
  }
  bool ended = r->ended;
  pthread_mutex_unlock(&r->mu);
  /* Once ended, status is written no more. */
  if (ended && st) tfd_status_setf(st, r->status.code, "%s", tfd_status_message(&r->status));
  return ended;
}

bool tfd_run_ready(tfd_run *r) { return tfd_run_wait(r, 0, NULL); }

int tfd_run_num_outputs(const tfd_run *r) { return r->num_outputs; }

tfd_code tfd_run_take_outputs(tfd_run *r, tfd_tensor **outputs, tfd_status *st) {
  tfd_status_reset(st);
  if (tfd_arg_required(st, "tfd_run_take_outputs", "run", r)) return TFD_INVALID_ARGUMENT;
  if (r->num_outputs > 0 && !outputs)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "tfd_run_take_outputs: outputs is NULL but the run has %d output%s",
                           r->num_outputs, r->num_outputs == 1 ? "" : "s");
  if (!tfd_run_wait(r, 0, NULL))
    return tfd_status_setf(st, TFD_FAILED_PRECONDITION, "the run has not ended yet: wait for it first");
  if (r->status.code != TFD_OK) return tfd_status_setf(st, r->status.code, "%s", tfd_status_message(&r->status));
  pthread_mutex_lock(&r->mu);
  bool taken = r->taken;
  r->taken = true;
  pthread_mutex_unlock(&r->mu);
  if (taken) return tfd_status_setf(st, TFD_FAILED_PRECONDITION, "the outputs of this run were already taken");
  for (int i = 0; i < r->num_outputs; i++) {
    outputs[i] = r->outputs[i];
    r->outputs[i] = NULL;
  }
  return TFD_OK;
}

void tfd_run_cancel(tfd_run *r) {
  if (r) tfd_cancellation_cancel(r->cancel, TFD_CANCELLED, "Run was cancelled.");
}

void tfd_run_free(tfd_run *r) {
  if (!r) return;
  pthread_mutex_lock(&r->mu);
  bool own_done = r->completing && pthread_equal(r->completer, pthread_self());
  bool ended = r->ended;
  pthread_mutex_unlock(&r->mu);
  if (!ended && !own_done) {
    tfd_run_cancel(r);
    tfd_run_wait(r, -1, NULL);
  }
  run_unref(r);
}
