/* One step of a bundle (feeds checked, every partition started, the result gathered) and the blocking
 * run that waits for it: what Run, RunAsync, callables and partial runs all start from.
 *
 * A step starts partition 0 on the caller's thread and the others on the session's inter-op pool
 * (all on the caller's thread for a synchronous session or an inter_op_thread_pool of -1); the first
 * error aborts the step's rendezvous so the other partitions stop too. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/status_internal.h"
#include "../kernels/kernel.h"
#include "session_args.h"
#include "session_internal.h"

static void part_done(void *arg, const tfd_status *st) {
  step *x = arg;
  if (x->solo && pthread_equal(pthread_self(), x->caller)) {
    /* Still inside tfd_executor_run_async on the caller's thread (it runs no executor code once it
     * waits), with no other partition: nothing else touches x. */
    if (st && st->code != TFD_OK) tfd_status_setf(&x->status, st->code, "%s", tfd_status_message(st));
    x->remaining = 0;
    x->done_inline = true;
    return;
  }
  pthread_mutex_lock(&x->mu);
  if (st && st->code != TFD_OK && x->status.code == TFD_OK)
    tfd_status_setf(&x->status, st->code, "%s", tfd_status_message(st));
  bool last = --x->remaining == 0;
  /* Read before unlocking: a blocking caller may return, and its step go, as soon as we do. */
  void (*on_done)(step *) = x->on_done;
  if (last && !on_done) pthread_cond_broadcast(&x->cv);
  pthread_mutex_unlock(&x->mu);
  if (last && on_done) on_done(x);
}

void tfd_ds_start_part(void *part) {
  part_start *p = part;
  tfd_executor_run_async(p->e, &p->args, p->done, p->arg);
}

static void abort_rendezvous(void *arg, tfd_code code, const char *message) { tfd_rendezvous_abort(arg, code, message); }
static void release_rendezvous(void *arg) { tfd_rendezvous_unref(arg); }

tfd_code tfd_ds_register_abort(tfd_cancellation *c, tfd_rendezvous *r, int64_t *token, tfd_status *st) {
  *token = tfd_cancellation_register(c, abort_rendezvous, release_rendezvous, tfd_rendezvous_ref(r));
  if (*token >= 0) return TFD_OK;
  tfd_rendezvous_unref(r); /* the registration kept nothing */
  if (*token == TFD_CANCEL_NO_MEMORY)
    return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory making the step cancellable");
  const char *why = NULL; /* cancelled already: the step starts aborted */
  tfd_code code = tfd_cancellation_reason(c, &why);
  tfd_rendezvous_abort(r, code, why);
  return TFD_OK;
}

/* A step that waits on nothing ends by itself: its timeout has nothing to stop. */
static void nothing_to_stop(void *arg, tfd_code code, const char *message) { (void)arg, (void)code, (void)message; }

static tfd_code check_feeds(const bundle *b, tfd_tensor *const *feeds, tfd_status *st) {
  for (int k = 0; k < b->num_feeds; k++) {
    tfd_tensor *t = feeds[k];
    if (!t) return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "feed '%s' has no value", b->feed_names[k]);
    if (tfd_tensor_dtype(t) != b->feed_types[k])
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "feed '%s' expects %s, got %s %s tensor", b->feed_names[k],
                             tfd_dtype_name(b->feed_types[k]), tfd_article(tfd_dtype_name(tfd_tensor_dtype(t))),
                             tfd_dtype_name(tfd_tensor_dtype(t)));
    const tfd_shape *want = &b->feed_shapes[k];
    bool ok = want->ndims < 0 || want->ndims == tfd_tensor_ndims(t);
    for (int i = 0; ok && want->ndims >= 0 && i < want->ndims; i++)
      ok = want->dims[i] < 0 || want->dims[i] == tfd_tensor_dim(t, i);
    if (!ok) {
      char ws[128], gs[128];
      tfd_shape got;
      tfd_shape_of_tensor(t, &got);
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "Cannot feed value of shape %s for tensor '%s', which has shape %s",
                             tfd_shape_string(&got, gs, sizeof gs), b->feed_names[k], tfd_shape_string(want, ws, sizeof ws));
    }
  }
  return TFD_OK;
}

static void step_free_parts(step *x) {
  for (int p = 0; x->stats && p < x->b->num_parts; p++) {
    int n = x->stats[p] ? tfd_executor_graph(x->b->execs[p])->n : 0;
    for (int i = 0; i < n; i++) {
      tfd_node_stats_free_chain(&x->stats[p][i]); /* the runs after the first, of a node in a loop */
      tfd_allocator_unref(x->stats[p][i].tracker); /* tensors it made keep it */
    }
    free(x->stats[p]);
  }
  free(x->stats);
  x->stats = NULL;
  if (x->fetches != x->small_fetches) free(x->fetches);
  x->fetches = NULL;
  if (x->starts != x->small_starts) free(x->starts);
  x->starts = NULL;
  tfd_rendezvous_unref(x->rendezvous);
  x->rendezvous = NULL;
}

/* Checks the feeds and starts the step; on_done NULL: a blocking step, whose caller waits on x->cv and
 * then calls step_finish. cancel, when given, is a reference the step takes (an asynchronous run's,
 * which it must have); else the step makes one if it may wait. On error nothing has started and
 * nothing is left to free. An asynchronous
 * step may end (on_done called) before this returns: x is not touched after the last partition starts. */
tfd_code tfd_ds_step_start(step *x, tfd_session *s, bundle *b, const tfd_run_options *ro, tfd_tensor *const *feeds,
                           void (*on_done)(step *), tfd_cancellation *cancel, tfd_status *st) {
  int pool = ro ? ro->inter_op_thread_pool : 0;
  if (pool < -1 || pool >= s->num_pools) { /* TensorFlow's RunInternal check, and its text */
    tfd_cancellation_unref(cancel);
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "Invalid inter_op_thread_pool: %d", pool);
  }
  if (check_feeds(b, feeds, st) != TFD_OK) {
    tfd_cancellation_unref(cancel);
    return tfd_status_code(st);
  }
  bool async = on_done != NULL;
  x->s = s;
  x->b = b;
  x->trace = ro && (ro->trace || ro->trace_allocations);
  x->want_costs = ro && ro->cost_graph;
  x->partition_graphs = ro && ro->output_partition_graphs;
  x->allocation_records = ro && ro->trace_allocations;
  /* TensorFlow's build_cost_model_after: a bundle's first N steps are not recorded. */
  x->record_costs = atomic_fetch_add(&b->runs, 1) >= tfd_session_options_build_cost_model_after(s->options);
  bool collect = x->trace || x->want_costs || (x->record_costs && tfd_session_options_build_cost_model(s->options));
  /* What a step needs beyond its executors is made only when it can be used: a rendezvous
   * when partitions or kernels exchange tensors, a cancellation (which close() and a
   * timeout use to stop it) when a kernel may wait, or the step is asynchronous (its
   * handle can cancel it). A blocking step of neither ends by itself. */
  bool need_rendezvous = b->num_parts > 1, may_wait = false;
  for (int p = 0; p < b->num_parts; p++) {
    need_rendezvous |= tfd_executor_uses_rendezvous(b->execs[p]);
    may_wait |= tfd_executor_may_wait(b->execs[p]);
  }
  x->stats = NULL;
  x->fetches = b->num_fetches <= STEP_SMALL ? x->small_fetches : malloc((size_t)b->num_fetches * sizeof *x->fetches);
  if (x->fetches) memset(x->fetches, 0, (size_t)b->num_fetches * sizeof *x->fetches);
  x->starts = b->num_parts <= STEP_SMALL ? x->small_starts : malloc((size_t)b->num_parts * sizeof *x->starts);
  x->remaining = b->num_parts;
  x->status = (tfd_status)TFD_STATUS_INIT;
  x->rendezvous = need_rendezvous ? tfd_rendezvous_new() : NULL;
  x->caller = pthread_self();
  x->solo = !async && b->num_parts == 1;
  x->done_inline = x->timed_out = false;
  x->on_done = on_done;
  if (collect && (x->stats = calloc((size_t)b->num_parts, sizeof *x->stats)))
    for (int p = 0; p < b->num_parts; p++)
      x->stats[p] = calloc((size_t)tfd_executor_graph(b->execs[p])->n + 1, sizeof **x->stats);
  x->cancel = cancel ? cancel : may_wait ? tfd_cancellation_new() : NULL;
  x->abort_token = -1;
  tfd_code made = !x->fetches || (need_rendezvous && !x->rendezvous) || (collect && !x->stats) ||
                          (async && !x->cancel) || (async && !x->starts)
                      ? tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory starting a run")
                      : TFD_OK;
  /* Cancelling the step (timeout, close, tfd_run_cancel) aborts its rendezvous and wakes blocked kernels. */
  if (made == TFD_OK && x->cancel && x->rendezvous)
    made = tfd_ds_register_abort(x->cancel, x->rendezvous, &x->abort_token, st);
  if (made != TFD_OK) {
    step_free_parts(x);
    tfd_cancellation_unref(x->cancel);
    return made;
  }
  pthread_mutex_init(&x->mu, NULL);
  pthread_cond_init(&x->cv, NULL);
  x->has_queue = false;
  for (int p = 0; p < b->num_parts; p++) x->has_queue |= tfd_executor_needs_caller(b->execs[p]);
  if (x->has_queue)
    tfd_caller_queue_init(&x->queue, x->queue_mu ? x->queue_mu : &x->mu, x->queue_cv ? x->queue_cv : &x->cv);
  x->link.queue = x->has_queue ? &x->queue : NULL;
  if (x->cancel) tfd_ds_add_active(s, &x->link, x->cancel);
  x->step_id = tfd_ds_next_step_id();
  if (b->num_parts == 0) {
    if (on_done) on_done(x);
    return TFD_OK;
  }
  /* Blocking: partitions 1..n start on the pool, partition 0 on this thread; all run at once.
   * Asynchronous: every partition starts on the pool, so this call returns at once. A synchronous
   * session or run (inter_op_thread_pool -1) has no thread but this one: it runs them all here, one
   * after another (a partition waiting on a _Recv returns, and the _Send that feeds it carries it
   * on), so an asynchronous step of one ends before the call returns unless a kernel waits. */
  tfd_threadpool *runner = pool < 0 ? NULL : s->pools[pool].pool;
  int first_pooled = async ? 0 : 1;
  for (int p = b->num_parts - 1; p >= 0; p--) {
    tfd_executor_args args = {x->step_id, x->rendezvous, feeds, b->num_feeds, x->fetches, b->num_fetches,
                              runner, x->stats ? x->stats[p] : NULL, x->cancel, s->state,
                              x->has_queue ? &x->queue : NULL, x->caller, !async, x->allocation_records,
                              tfd_ds_run_timeout(s, ro), NULL, NULL};
    /* A partition on a device with device math (a GPU) mostly queues work on its streams and waits on
     * _Recv without holding a thread: a blocking run starts it here too, sparing the step a pool
     * thread's wakeup (several microseconds) on its critical path. */
    tfd_device *pd = tfd_executor_device(b->execs[p]);
    bool here = !async && pd && pd->math;
    if (p >= first_pooled && x->starts && runner && !here) {
      x->starts[p] = (part_start){b->execs[p], args, part_done, x};
      if (tfd_threadpool_schedule(runner, tfd_ds_start_part, &x->starts[p], NULL) == TFD_OK) continue;
    }
    tfd_executor_run_async(b->execs[p], &args, part_done, x);
  }
  return TFD_OK;
}

/* The result of an ended step: its code (status set), and on success its fetches (bundle order, one
 * reference each) in outputs and meta filled. Releases everything step_start made. */
tfd_code tfd_ds_step_finish(step *x, tfd_tensor **outputs, tfd_run_metadata *meta, int64_t timeout, tfd_status *st) {
  tfd_session *s = x->s;
  bundle *b = x->b;
  if (x->cancel) tfd_ds_remove_active(s, &x->link);
  tfd_code code;
  const char *why = NULL;
  if (x->cancel && tfd_cancellation_reason(x->cancel, &why) != TFD_OK) {
    /* A cancelled step reports why it was cancelled, not what the kernels saw. */
    code = tfd_status_setf(st, tfd_cancellation_reason(x->cancel, NULL), "%s", why);
    tfd_status_clear(&x->status);
  } else if (x->timed_out && !x->cancel) {
    code = tfd_status_setf(st, TFD_DEADLINE_EXCEEDED, "Timed out waiting for the step (%lld ms)", (long long)timeout);
    tfd_status_clear(&x->status);
  } else if (x->status.code != TFD_OK && x->rendezvous && tfd_rendezvous_status(x->rendezvous, st) != TFD_OK) {
    /* The first kernel to fail aborted the rendezvous with its own error; other partitions then fail
     * in their _Recv nodes, and may report first: the abort is the error the user caused. */
    code = tfd_status_code(st);
    tfd_status_clear(&x->status);
  } else {
    code = tfd_status_move(st, &x->status);
  }
  /* Whether it ran or not, the abort holds its own reference to the rendezvous: freeing ours below
   * cannot pull it from under a cancel that is aborting it right now, on this thread or another. */
  if (x->cancel && x->abort_token >= 0) tfd_cancellation_deregister(x->cancel, x->abort_token);
  tfd_cancellation_unref(x->cancel);
  x->cancel = NULL;
  if (code == TFD_OK) {
    for (int k = 0; k < b->num_fetches; k++)
      if (!x->fetches[k]) {
        /* TensorFlow's text for a fetch whose tensor is dead (its _Retval never ran), naming the fetch. */
        code = b->control_flow
                   ? tfd_status_setf(st, TFD_INTERNAL,
                                     "Retval[%d] does not have value: fetch '%s' is dead (it depends on the output of "
                                     "a Switch that was not taken)",
                                     k, b->fetch_names[k])
                   : tfd_status_setf(st, TFD_INTERNAL, "fetch '%s' was not produced", b->fetch_names[k]);
        break;
      }
  }
  for (int k = 0; k < b->num_fetches; k++) {
    if (code == TFD_OK) outputs[k] = x->fetches[k];
    else tfd_tensor_unref(x->fetches[k]);
  }
  if (code == TFD_OK && x->stats && x->record_costs) tfd_ds_record_costs(s, b, x->stats);
  if (code == TFD_OK && meta) {
    tfd_ds_fill_metadata(meta, b, x->trace ? x->stats : NULL, x->partition_graphs);
    if (x->want_costs) tfd_ds_fill_cost_graph(s, meta, b);
    meta->step_id = x->step_id;
  }
  if (b->step_resources) { /* TensorFlow's ScopedStepContainer: the step's TensorArrays go with it */
    char container[64];
    tfd_step_container(x->step_id, container, sizeof container);
    for (int p = 0; p < b->num_parts; p++)
      tfd_resource_mgr_cleanup(tfd_device_resource_manager(tfd_executor_device(b->execs[p])), container, NULL);
  }
  step_free_parts(x);
  pthread_mutex_destroy(&x->mu);
  pthread_cond_destroy(&x->cv);
  return code;
}

int64_t tfd_ds_run_timeout(const tfd_session *s, const tfd_run_options *ro) {
  return ro && ro->timeout_ms ? ro->timeout_ms : tfd_session_options_operation_timeout_ms(s->options);
}

/* The blocking run: start, wait (cancelling at the deadline), finish. */
tfd_code tfd_ds_run_bundle(tfd_session *s, bundle *b, const tfd_run_options *ro, tfd_tensor *const *feeds,
                           tfd_tensor **outputs, tfd_run_metadata *meta, tfd_status *st) {
  step x;
  x.queue_mu = NULL;
  x.queue_cv = NULL;
  if (tfd_ds_step_start(&x, s, b, ro, feeds, NULL, NULL, st) != TFD_OK) return tfd_status_code(st);
  int64_t timeout = tfd_ds_run_timeout(s, ro);
  if (!x.done_inline) {
    pthread_mutex_lock(&x.mu);
    /* Without a cancellation (none needed, or out of memory) a timeout can still abort the rendezvous.
     * Kernels that must run here arrive through the queue, run between the waits. */
    x.timed_out = tfd_wait_or_time_out_draining(&x.mu, &x.cv, &x.remaining, timeout, "the step",
                                                x.cancel ? tfd_cancel_on_timeout
                                                : x.rendezvous ? abort_rendezvous
                                                               : nothing_to_stop,
                                                x.cancel ? (void *)x.cancel : x.rendezvous, x.has_queue ? &x.queue : NULL);
    pthread_mutex_unlock(&x.mu);
  }
  return tfd_ds_step_finish(&x, outputs, meta, timeout, st);
}

/* Maps call-order names onto a bundle's order; -1 entries are impossible after lookup. */
tfd_code tfd_ds_map_names(const tfd_strmap *index, char **names, int n, int *map, const char *what, tfd_status *st) {
  for (int i = 0; i < n; i++) {
    intptr_t k = (intptr_t)tfd_strmap_get(index, names[i]);
    if (!k) return tfd_status_setf(st, TFD_INTERNAL, "%s '%s' lost from the executor cache", what, names[i]);
    map[i] = (int)k - 1;
  }
  return TFD_OK;
}
