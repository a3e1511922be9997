/* Partial runs (PRunSetup/PRun): executors started at setup, fed and fetched across several calls
 * through client-keyed _Recv and _Send nodes, with TensorFlow's checks that a fetch's feeds came
 * first. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../graph/subgraph.h"
#include "session_args.h"
#include "session_internal.h"

/*
 * The executors start at setup and wait, on client-keyed _Recv nodes, for
 * feeds; fetches arrive through client-keyed _Send nodes. A live partial
 * run counts as a call in flight, so close() waits for its executors.
 *
 * A run is shared by reference: the session's handle table, each prun call
 * using it, and its running executors hold one each, so closing a handle
 * while another thread feeds or fetches through it wakes that thread with
 * CANCELLED and frees nothing it still uses. */
enum { PRUN_OPEN, PRUN_FINISHED, PRUN_CLOSED };

struct partial_run {
  tfd_refcount refs;
  tfd_session *s;
  bundle *b;
  pthread_mutex_t mu; /* one prun at a time per handle */
  atomic_int state;   /* PRUN_OPEN, then PRUN_FINISHED or PRUN_CLOSED (out of the table) */
  tfd_rendezvous *rendezvous;
  tfd_cancellation *cancel;
  int64_t abort_token; /* the rendezvous' abort, holding its own reference to it (cancellation.h) */
  active_step link;    /* in the session's active list while the executors run */
  pthread_mutex_t bar_mu;
  pthread_cond_t bar_cv;
  int remaining; /* partitions still running */
  tfd_status status;
  bool *fed, *fetched;
  part_start *starts; /* by partition: how each starts on the inter-op pool */
  int inputs_left, outputs_left;
  /* While a call that fetches runs, its deadline (0 between calls): the executors stop there, even
   * when the work the call's feeds set going runs inside the call (no inter-op pool). */
  tfd_deadline deadline;
};

static void prun_unref(partial_run *r) {
  if (!r || !tfd_refcount_dec(&r->refs)) return;
  if (r->abort_token >= 0) tfd_cancellation_deregister(r->cancel, r->abort_token);
  tfd_cancellation_unref(r->cancel);
  tfd_rendezvous_unref(r->rendezvous);
  tfd_status_clear(&r->status);
  pthread_mutex_destroy(&r->mu);
  pthread_mutex_destroy(&r->bar_mu);
  pthread_cond_destroy(&r->bar_cv);
  free(r->fed);
  free(r->fetched);
  free(r->starts);
  free(r);
}

/* How the session's handle table drops its reference. */
static void release_prun(void *r) { prun_unref(r); }

static tfd_code drop_prun(tfd_session *s, int64_t handle, partial_run *r, const char *cancel_why, tfd_status *st);

static void partial_part_done(void *arg, const tfd_status *st) {
  partial_run *r = arg;
  pthread_mutex_lock(&r->bar_mu);
  if (st && st->code != TFD_OK && r->status.code == TFD_OK) tfd_status_setf(&r->status, st->code, "%s", tfd_status_message(st));
  bool last = --r->remaining == 0;
  if (last) pthread_cond_broadcast(&r->bar_cv);
  tfd_session *s = r->s;
  pthread_mutex_unlock(&r->bar_mu);
  if (last) {
    tfd_ds_remove_active(s, &r->link);
    prun_unref(r); /* the executors' reference */
    tfd_ds_leave(s);      /* the run's own hold on the session */
  }
}

/* Names listed twice in a setup would make two sends or recvs of one key. */
static tfd_code check_distinct(char **names, int n, const char *what, tfd_status *st) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < i; j++)
      if (strcmp(names[i], names[j]) == 0)
        return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "partial_run_setup lists %s '%s' twice", what, names[i]);
  return TFD_OK;
}

int64_t tfd_session_prun_setup(tfd_session *s, const char *const *inputs, int ni, const char *const *outputs, int no,
                               const char *const *targets, int nt, tfd_status *st) {
  tfd_status_reset(st);
  static const char fn[] = "tfd_session_prun_setup";
  if (tfd_arg_required(st, fn, "s", s) || tfd_arg_items(st, fn, "inputs", TFD_ARG_ITEMS(inputs), "num_inputs", ni) ||
      tfd_arg_items(st, fn, "outputs", TFD_ARG_ITEMS(outputs), "num_outputs", no) ||
      tfd_arg_items(st, fn, "targets", TFD_ARG_ITEMS(targets), "num_targets", nt))
    return -1;
  if (tfd_ds_enter(s, st) != TFD_OK) return -1;
  if (tfd_ds_check_graph_created(s, "PRunSetup()", st) != TFD_OK) {
    tfd_ds_leave(s);
    return -1;
  }
  char **feeds = tfd_ds_canonical_names(inputs, ni, true, st);
  char **fetches = feeds ? tfd_ds_canonical_names(outputs, no, true, st) : NULL;
  char **tgts = fetches ? tfd_ds_canonical_names(targets, nt, false, st) : NULL;
  int64_t handle = -1;
  partial_run *r = NULL;
  bundle *b = NULL;
  if (tgts && no == 0 && nt == 0)
    tfd_status_setf(st, TFD_INVALID_ARGUMENT, "Must specify at least one target to fetch or execute.");
  else if (tgts && check_distinct(feeds, ni, "input", st) == TFD_OK && check_distinct(fetches, no, "output", st) == TFD_OK)
    b = tfd_ds_get_bundle(s, feeds, ni, fetches, no, tgts, nt, true, st);
  if (b) r = calloc(1, sizeof *r);
  if (b && r) {
    tfd_refcount_init(&r->refs); /* the table's */
    r->s = s;
    r->b = b;
    r->fed = calloc((size_t)ni + 1, sizeof *r->fed);
    r->fetched = calloc((size_t)no + 1, sizeof *r->fetched);
    r->starts = calloc((size_t)b->num_parts + 1, sizeof *r->starts);
    r->inputs_left = ni;
    r->outputs_left = no;
    r->rendezvous = tfd_rendezvous_new();
    r->cancel = tfd_cancellation_new();
    atomic_init(&r->deadline.at, 0); /* a fetching call's deadline, set by the call */
    r->deadline.timeout_ms = tfd_session_options_operation_timeout_ms(s->options);
    r->deadline.what = "a partial run fetch";
    r->abort_token = -1;
    r->status = (tfd_status)TFD_STATUS_INIT;
    pthread_mutex_init(&r->mu, NULL);
    pthread_mutex_init(&r->bar_mu, NULL);
    pthread_cond_init(&r->bar_cv, NULL);
    if (!r->fed || !r->fetched || !r->starts || !r->rendezvous || !r->cancel) {
      prun_unref(r);
      r = NULL;
      tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
    }
  } else if (b) {
    tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
  }
  if (r && tfd_ds_register_abort(r->cancel, r->rendezvous, &r->abort_token, st) != TFD_OK) {
    prun_unref(r);
    r = NULL;
  }
  if (r) {
    /* Everything is running before the handle is published: another thread that finds (or guesses) it can
     * close the run at once. */
    tfd_refcount_inc(&r->refs); /* the executors', dropped by the last of them */
    r->link.queue = NULL; /* a partial run has no caller thread to run kernels on */
    tfd_ds_add_active(s, &r->link, r->cancel);
    tfd_ds_hold(s); /* held until the executors finish */
    r->remaining = b->num_parts;
    int64_t step_id = tfd_ds_next_step_id();
    for (int p = 0; p < b->num_parts; p++) {
      tfd_executor_args args = {step_id, r->rendezvous, NULL, 0, NULL, 0, s->inter_pool, NULL, r->cancel, s->state,
                                NULL, pthread_self(), false, false, /* partial runs have no caller to run kernels on */
                                0, NULL, &r->deadline};
      /* As TensorFlow's RunAsync, the step starts on the inter-op pool, not on this thread: a loop in
       * it that never ends (or runs long) must not keep prun_setup from returning. Without a pool
       * (inter_op_threads = -1) it runs here, as every step of such a session does. */
      if (s->inter_pool) {
        r->starts[p] = (part_start){b->execs[p], args, partial_part_done, r};
        if (tfd_threadpool_schedule(s->inter_pool, tfd_ds_start_part, &r->starts[p], NULL) == TFD_OK) continue;
      }
      tfd_executor_run_async(b->execs[p], &args, partial_part_done, r);
    }
    pthread_mutex_lock(&s->exec_mu);
    handle = tfd_ds_handle_add(&s->pruns, s->id, r, release_prun);
    pthread_mutex_unlock(&s->exec_mu);
    if (handle < 0) {
      drop_prun(s, handle, r, "out of memory publishing a partial run", NULL); /* stops the executors */
      prun_unref(r);
      tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
    }
  }
  tfd_ds_free_names(feeds, ni);
  tfd_ds_free_names(fetches, no);
  tfd_ds_free_names(tgts, nt);
  tfd_ds_leave(s);
  return handle;
}

/* The run, with a reference for the caller (prun_unref). */
static partial_run *find_prun(tfd_session *s, int64_t handle, tfd_status *st) {
  pthread_mutex_lock(&s->exec_mu);
  int i = tfd_ds_handle_find(&s->pruns, handle);
  partial_run *r = i >= 0 ? s->pruns.objs[i] : NULL;
  if (r) tfd_refcount_inc(&r->refs);
  pthread_mutex_unlock(&s->exec_mu);
  if (!r) tfd_ds_unknown_handle(s, handle, "partial run", "finished or closed: run prun_setup first", st);
  return r;
}

/* CheckFetch: every feed the fetch depends on must be fed already (or in this call). */
static tfd_code check_fetch(partial_run *r, int fetch, const bool *fed_now, tfd_status *st) {
  const tfd_graph *g = r->b->client;
  char name[32];
  snprintf(name, sizeof name, "_fetch_%d", fetch);
  int start = tfd_graph_find(g, name);
  if (start < 0) return TFD_OK;
  bool *seen = calloc((size_t)g->n, sizeof *seen);
  int *stack = malloc((size_t)g->n * sizeof *stack), top = 0;
  tfd_code code = TFD_OK;
  if (!seen || !stack) code = tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
  if (code == TFD_OK) seen[stack[top++] = start] = true;
  while (code == TFD_OK && top > 0) {
    const tfd_gnode *n = &g->nodes[stack[--top]];
    const tfd_attr_value *idx = strncmp(tfd_gnode_name(n), "_feed_", 6) == 0 ? tfd_node_def_attr(n->def, "index") : NULL;
    if (idx && !r->fed[idx->i] && !fed_now[idx->i]) {
      code = tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                             "Fetch %s can't be computed from the feeds that have been fed so far: feed %s is missing",
                             r->b->fetch_names[fetch], r->b->feed_names[idx->i]);
      break;
    }
    for (int k = 0; k < n->num_inputs; k++)
      if (!seen[n->inputs[k].node]) seen[stack[top++] = n->inputs[k].node] = true;
    for (int k = 0; k < n->num_control; k++)
      if (!seen[n->control[k]]) seen[stack[top++] = n->control[k]] = true;
  }
  free(seen);
  free(stack);
  return code;
}

typedef struct recv_wait {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int pending; /* 1 until the fetch arrives or fails */
  tfd_tensor *t;
  bool dead; /* the fetch's tensor is dead (a branch of a Switch not taken) */
  tfd_status status;
} recv_wait;

static void client_recv_done(void *arg, tfd_tensor *t, const tfd_status *st) {
  recv_wait *w = arg;
  pthread_mutex_lock(&w->mu);
  if (t) w->t = tfd_tensor_ref(t);
  else if (!st || st->code == TFD_OK) w->dead = true;
  else tfd_status_setf(&w->status, st->code, "%s", tfd_status_message(st));
  w->pending = 0;
  pthread_cond_signal(&w->cv);
  pthread_mutex_unlock(&w->mu);
}

/* Takes the run out of the session's table (once: later callers find
 * nothing), cancelling it first when `cancel_why` is given, then waits for
 * its executors: a finished run's targets get the session's operation
 * timeout to complete, and are cancelled with DEADLINE_EXCEEDED after it. */
static tfd_code drop_prun(tfd_session *s, int64_t handle, partial_run *r, const char *cancel_why, tfd_status *st) {
  pthread_mutex_lock(&s->exec_mu);
  bool mine = tfd_ds_handle_remove(&s->pruns, handle) == r;
  pthread_mutex_unlock(&s->exec_mu);
  if (cancel_why) tfd_cancellation_cancel(r->cancel, TFD_CANCELLED, cancel_why);
  int64_t timeout = cancel_why ? 0 : tfd_session_options_operation_timeout_ms(s->options);
  tfd_code code = TFD_OK;
  const char *why = NULL;
  pthread_mutex_lock(&r->bar_mu);
  if (tfd_wait_or_time_out(&r->bar_mu, &r->bar_cv, &r->remaining, timeout, "the partial run's targets",
                           tfd_cancel_on_timeout, r->cancel)) {
    tfd_code reason = tfd_cancellation_reason(r->cancel, &why);
    code = tfd_status_setf(st, reason, "%s", why);
  } else if (!cancel_why && r->status.code != TFD_OK)
    code = tfd_status_setf(st, r->status.code, "%s", tfd_status_message(&r->status)); /* a target failed */
  pthread_mutex_unlock(&r->bar_mu);
  if (mine) prun_unref(r); /* the table's reference */
  return code;
}

tfd_code tfd_session_prun(tfd_session *s, int64_t handle, const char *const *feed_names, tfd_tensor *const *feed_values,
                          int nf, const char *const *fetch_names, int nfe, tfd_tensor **outputs, tfd_status *st) {
  tfd_status_reset(st);
  static const char fn[] = "tfd_session_prun";
  if (tfd_arg_required(st, fn, "s", s) || tfd_ds_check_run_args(fn, feed_names, feed_values, nf, fetch_names, nfe, NULL, 0, st) ||
      tfd_arg_array(st, fn, "outputs", outputs, "num_fetches", nfe))
    return TFD_INVALID_ARGUMENT;
  if (tfd_ds_enter(s, st) != TFD_OK) return TFD_CANCELLED;
  partial_run *r = find_prun(s, handle, st);
  if (!r) {
    tfd_ds_leave(s);
    return TFD_INVALID_ARGUMENT;
  }
  pthread_mutex_lock(&r->mu);
  bundle *b = r->b;
  for (int i = 0; i < nfe; i++) outputs[i] = NULL;
  char **feeds = NULL, **fetches = NULL;
  bool *fed_now = NULL;
  int *fetch_idx = NULL;
  tfd_code code = TFD_OK;
  tfd_status aborted = TFD_STATUS_INIT;
  int state = atomic_load(&r->state);
  if (state == PRUN_CLOSED) {
    code = tfd_status_setf(st, TFD_CANCELLED, "partial run %lld was closed", (long long)handle);
  } else if (state == PRUN_FINISHED) {
    code = tfd_status_setf(st, TFD_FAILED_PRECONDITION,
                           "partial run %lld has finished: every input was fed and every output fetched",
                           (long long)handle);
  } else if (tfd_rendezvous_status(r->rendezvous, &aborted) != TFD_OK) {
    /* An earlier call's step failed (or was cancelled): say so, not what this call would have tripped on. */
    code = tfd_status_setf(st, tfd_status_code(&aborted), "partial run %lld was aborted by an earlier error: %s",
                           (long long)handle, tfd_status_message(&aborted));
  }
  tfd_status_clear(&aborted);
  if (code == TFD_OK) {
    feeds = tfd_ds_canonical_names(feed_names, nf, true, st);
    fetches = feeds ? tfd_ds_canonical_names(fetch_names, nfe, true, st) : NULL;
    fed_now = calloc((size_t)b->num_feeds + 1, sizeof *fed_now);
    fetch_idx = calloc((size_t)nfe + 1, sizeof *fetch_idx);
    code = fetches ? TFD_OK : tfd_status_code(st);
    if (code == TFD_OK && (!fed_now || !fetch_idx)) code = tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
  }
  /* Check everything before touching the run, so a refused call changes nothing. */
  for (int i = 0; code == TFD_OK && i < nf; i++) {
    intptr_t k = (intptr_t)tfd_strmap_get(&b->feed_index, feeds[i]);
    if (!k) code = tfd_status_setf(st, TFD_INVALID_ARGUMENT, "The feed %s was not specified in partial_run_setup.", feeds[i]);
    else if (r->fed[k - 1] || fed_now[k - 1]) code = tfd_status_setf(st, TFD_INVALID_ARGUMENT, "The feed %s has already been fed.", feeds[i]);
    else if (!feed_values[i] || tfd_tensor_dtype(feed_values[i]) != b->feed_types[k - 1])
      code = tfd_status_setf(st, TFD_INVALID_ARGUMENT, "feed '%s' expects %s, got %s", feeds[i],
                             tfd_dtype_name(b->feed_types[k - 1]),
                             feed_values[i] ? tfd_dtype_name(tfd_tensor_dtype(feed_values[i])) : "nothing");
    else fed_now[k - 1] = true;
  }
  for (int i = 0; code == TFD_OK && i < nfe; i++) {
    intptr_t k = (intptr_t)tfd_strmap_get(&b->fetch_index, fetches[i]);
    if (!k) code = tfd_status_setf(st, TFD_INVALID_ARGUMENT, "The fetch %s was not specified in partial_run_setup.", fetches[i]);
    else if (r->fetched[k - 1]) code = tfd_status_setf(st, TFD_INVALID_ARGUMENT, "The fetch %s has already been fetched.", fetches[i]);
    else {
      fetch_idx[i] = (int)k - 1;
      for (int j = 0; j < i; j++)
        if (fetch_idx[j] == fetch_idx[i]) code = tfd_status_setf(st, TFD_INVALID_ARGUMENT, "The fetch %s is requested twice.", fetches[i]);
      if (code == TFD_OK) code = check_fetch(r, fetch_idx[i], fed_now, st);
    }
  }
  int64_t timeout = tfd_session_options_operation_timeout_ms(s->options);
  if (code == TFD_OK && nfe > 0 && timeout > 0 && timeout < INT64_MAX / 2000)
    atomic_store(&r->deadline.at, tfd_kernel_clock_micros() + timeout * 1000); /* before the feeds start work */
  for (int i = 0; code == TFD_OK && i < nf; i++) {
    int k = (int)(intptr_t)tfd_strmap_get(&b->feed_index, feeds[i]) - 1;
    char *key = tfd_rendezvous_key(TFD_CLIENT_DEVICE, 0, TFD_CLIENT_DEVICE, feeds[i]);
    code = key ? tfd_rendezvous_send(r->rendezvous, key, feed_values[i], st)
               : tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
    free(key);
    if (code == TFD_OK) {
      r->fed[k] = true;
      r->inputs_left--;
    }
  }
  for (int i = 0; code == TFD_OK && i < nfe; i++) {
    recv_wait w = {.pending = 1, .status = TFD_STATUS_INIT};
    pthread_mutex_init(&w.mu, NULL);
    pthread_cond_init(&w.cv, NULL);
    char *key = tfd_rendezvous_key(TFD_CLIENT_DEVICE, 0, TFD_CLIENT_DEVICE, fetches[i]);
    if (key) {
      tfd_rendezvous_recv(r->rendezvous, key, client_recv_done, &w);
    } else {
      tfd_status oom = TFD_STATUS_INIT;
      tfd_status_setf(&oom, TFD_RESOURCE_EXHAUSTED, "out of memory");
      client_recv_done(&w, NULL, &oom);
      tfd_status_clear(&oom);
    }
    free(key);
    pthread_mutex_lock(&w.mu);
    tfd_wait_or_time_out(&w.mu, &w.cv, &w.pending, timeout, "a partial run fetch", tfd_cancel_on_timeout, r->cancel);
    pthread_mutex_unlock(&w.mu);
    if (w.dead) {
      code = tfd_status_setf(st, TFD_INTERNAL,
                             "Retval[%d] does not have value: fetch '%s' is dead (it depends on the output of a Switch "
                             "that was not taken)",
                             i, fetches[i]);
    } else if (w.t) {
      outputs[i] = w.t;
      r->fetched[fetch_idx[i]] = true;
      r->outputs_left--;
    } else {
      /* The step failed: report why it was cancelled, or the kernel's error if there is one. */
      const char *why = NULL;
      tfd_code cancelled = tfd_cancellation_reason(r->cancel, &why);
      if (cancelled != TFD_OK) code = tfd_status_setf(st, cancelled, "%s", why);
      else if (tfd_rendezvous_status(r->rendezvous, st) != TFD_OK) code = tfd_status_code(st); /* the first error */
      else code = tfd_status_move(st, &w.status);
    }
    tfd_status_clear(&w.status);
    pthread_mutex_destroy(&w.mu);
    pthread_cond_destroy(&w.cv);
  }
  /* Done, as TensorFlow's PendingDone: every input fed and every output fetched. */
  atomic_store(&r->deadline.at, 0); /* between calls the executors run on with nobody waiting */
  bool finished = code == TFD_OK && r->outputs_left == 0 && r->inputs_left == 0;
  if (finished) atomic_store(&r->state, PRUN_FINISHED);
  tfd_ds_free_names(feeds, nf);
  tfd_ds_free_names(fetches, nfe);
  free(fed_now);
  free(fetch_idx);
  pthread_mutex_unlock(&r->mu);
  if (finished) code = drop_prun(s, handle, r, NULL, st); /* the run state goes */
  if (code != TFD_OK)
    for (int i = 0; i < nfe; i++) { /* a failed call hands out nothing */
      tfd_tensor_unref(outputs[i]);
      outputs[i] = NULL;
    }
  prun_unref(r);
  tfd_ds_leave(s);
  return code;
}

tfd_code tfd_session_prun_close(tfd_session *s, int64_t handle, tfd_status *st) {
  tfd_status_reset(st);
  if (tfd_arg_required(st, "tfd_session_prun_close", "s", s)) return TFD_INVALID_ARGUMENT;
  if (tfd_ds_enter(s, st) != TFD_OK) return TFD_CANCELLED;
  partial_run *r = find_prun(s, handle, st);
  if (r) {
    /* Not under r->mu: a prun blocked on a fetch holds it until the cancel below wakes it. */
    atomic_store(&r->state, PRUN_CLOSED);
    drop_prun(s, handle, r, "partial run closed", NULL);
    prun_unref(r);
  }
  tfd_ds_leave(s);
  return r ? TFD_OK : TFD_INVALID_ARGUMENT;
}
