/* Callables (MakeCallable/RunCallable/ReleaseCallable): a signature resolved once to a bundle and
 * the maps from call order to bundle order, so each call skips the lookups. A callable made with
 * options (CallableOptions) may also wire tensors together (tensor_connection, part of its bundle's
 * signature) and carry run options that its calls use when given none. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "session_args.h"
#include "session_internal.h"

static void callable_unref(callable *c) {
  if (!c || !tfd_refcount_dec(&c->refs)) return;
  free(c->feed_map);
  free(c->fetch_map);
  free(c);
}

/* How the handle table and an asynchronous run drop the reference they hold. */
static void release_callable(void *c) { callable_unref(c); }

/* The from (which 0) or to (1) names of the connections, canonical; NULL with st set on error. */
static char **connection_names(const tfd_tensor_connection *conns, int n, int which, tfd_status *st) {
  const char **raw = calloc((size_t)n + 1, sizeof *raw);
  if (!raw) {
    tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
    return NULL;
  }
  for (int k = 0; k < n; k++) raw[k] = which ? conns[k].to_tensor : conns[k].from_tensor;
  char **out = tfd_ds_canonical_names(raw, n, true, st);
  free((void *)raw);
  return out;
}

static int64_t make_callable_impl(tfd_session *s, const char *const *feed_names, int nf,
                                  const char *const *fetch_names, int nfe, const char *const *targets, int nt,
                                  const tfd_tensor_connection *conns, int nconn, const tfd_run_options *ro,
                                  tfd_status *st) {
  if (nfe == 0 && nt == 0) {
    tfd_status_setf(st, TFD_INVALID_ARGUMENT, "Must specify at least one target to fetch or execute.");
    return -1;
  }
  if (nf < 0 || nfe < 0 || nt < 0 || nconn < 0 || (nconn > 0 && !conns)) {
    tfd_status_setf(st, TFD_INVALID_ARGUMENT, "callable options: negative counts, or connections missing");
    return -1;
  }
  char **feeds = tfd_ds_canonical_names(feed_names, nf, true, st);
  char **fetches = feeds ? tfd_ds_canonical_names(fetch_names, nfe, true, st) : NULL;
  char **tgts = fetches ? tfd_ds_canonical_names(targets, nt, false, st) : NULL;
  char **from = tgts ? connection_names(conns, nconn, 0, st) : NULL;
  char **to = from ? connection_names(conns, nconn, 1, st) : NULL;
  callable *c = calloc(1, sizeof *c);
  int64_t handle = -1;
  bundle *b = to && c ? tfd_ds_get_bundle_connected(s, feeds, nf, fetches, nfe, tgts, nt, false, from, to, nconn, st) : NULL;
  if (b) {
    tfd_refcount_init(&c->refs); /* the table's */
    if (ro) {
      c->has_run_options = true;
      c->run_options = *ro;
    }
    c->b = b;
    c->num_feeds = nf;
    c->num_fetches = nfe;
    c->feed_map = malloc(((size_t)nf + 1) * sizeof(int));
    c->fetch_map = malloc(((size_t)nfe + 1) * sizeof(int));
    if (c->feed_map && c->fetch_map && tfd_ds_map_names(&b->feed_index, feeds, nf, c->feed_map, "feed", st) == TFD_OK &&
        tfd_ds_map_names(&b->fetch_index, fetches, nfe, c->fetch_map, "fetch", st) == TFD_OK) {
      pthread_mutex_lock(&s->exec_mu);
      handle = tfd_ds_handle_add(&s->callables, s->id, c, release_callable);
      pthread_mutex_unlock(&s->exec_mu);
    }
  } else if (!c) {
    tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
  }
  if (handle < 0) {
    if (c) {
      free(c->feed_map);
      free(c->fetch_map);
      free(c);
    }
    if (tfd_status_code(st) == TFD_OK) tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
  }
  tfd_ds_free_names(feeds, nf);
  tfd_ds_free_names(fetches, nfe);
  tfd_ds_free_names(tgts, nt);
  tfd_ds_free_names(from, nconn);
  tfd_ds_free_names(to, nconn);
  return handle;
}

/* The callable, with a reference for the caller (callable_unref). */
static callable *find_callable(tfd_session *s, int64_t handle, tfd_status *st) {
  pthread_mutex_lock(&s->exec_mu);
  int i = tfd_ds_handle_find(&s->callables, handle);
  callable *c = i >= 0 ? s->callables.objs[i] : NULL;
  if (c) tfd_refcount_inc(&c->refs);
  pthread_mutex_unlock(&s->exec_mu);
  if (!c) tfd_ds_unknown_handle(s, handle, "callable", "released", st);
  return c;
}

static tfd_code run_callable_impl(tfd_session *s, int64_t handle, const tfd_run_options *ro,
                                  tfd_tensor *const *feed_values, tfd_tensor **outputs, tfd_run_metadata *meta,
                                  async_req *async, tfd_status *st) {
  callable *c = find_callable(s, handle, st);
  if (!c) return TFD_INVALID_ARGUMENT;
  const char *fn = async ? "tfd_session_run_callable_async" : "tfd_session_run_callable";
  tfd_code bad = c->num_feeds > 0 && !feed_values
                     ? tfd_status_setf(st, TFD_INVALID_ARGUMENT, "%s: feed_values is NULL but the callable has %d feed%s", fn,
                                       c->num_feeds, c->num_feeds == 1 ? "" : "s")
                     : TFD_OK;
  for (int i = 0; bad == TFD_OK && i < c->num_feeds; i++)
    if (!feed_values[i]) bad = tfd_status_setf(st, TFD_INVALID_ARGUMENT, "%s: feed_values[%d] is NULL", fn, i);
  if (bad == TFD_OK && !async && c->num_fetches > 0 && !outputs)
    bad = tfd_status_setf(st, TFD_INVALID_ARGUMENT, "%s: outputs is NULL but the callable has %d fetch%s", fn, c->num_fetches,
                          c->num_fetches == 1 ? "" : "es");
  if (bad != TFD_OK) {
    callable_unref(c);
    return bad;
  }
  if (!ro && c->has_run_options) ro = &c->run_options;
  enum { SMALL = 16 };
  tfd_tensor *small_in[SMALL], *small_out[SMALL];
  tfd_tensor **ordered = c->b->num_feeds <= SMALL ? small_in : calloc((size_t)c->b->num_feeds, sizeof *ordered);
  tfd_tensor **outs = c->b->num_fetches <= SMALL ? small_out : calloc((size_t)c->b->num_fetches, sizeof *outs);
  tfd_code code = TFD_OK;
  if (!ordered || !outs) code = tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
  if (code == TFD_OK) for (int i = 0; i < c->num_feeds; i++) ordered[c->feed_map[i]] = feed_values[i];
  if (code == TFD_OK && async) {
    tfd_refcount_inc(&c->refs); /* the run's */
    async->run = tfd_ds_start_async(s, c->b, c, release_callable, c->fetch_map, c->num_fetches, ro, ordered, meta, async->done, async->arg, st);
    code = async->run ? TFD_OK : tfd_status_code(st);
  } else if (code == TFD_OK) {
    code = tfd_ds_run_bundle(s, c->b, ro, ordered, outs, meta, st);
    if (code == TFD_OK) {
      for (int i = 0; i < c->num_fetches; i++) outputs[i] = tfd_tensor_ref(outs[c->fetch_map[i]]);
      for (int k = 0; k < c->b->num_fetches; k++) tfd_tensor_unref(outs[k]);
    }
  }
  if (ordered != small_in) free(ordered);
  if (outs != small_out) free(outs);
  callable_unref(c);
  return code;
}

tfd_code tfd_session_release_callable(tfd_session *s, int64_t handle, tfd_status *st) {
  tfd_status_reset(st);
  if (tfd_arg_required(st, "tfd_session_release_callable", "s", s)) return TFD_INVALID_ARGUMENT;
  pthread_mutex_lock(&s->exec_mu);
  callable *c = tfd_ds_handle_remove(&s->callables, handle);
  pthread_mutex_unlock(&s->exec_mu);
  if (!c) return tfd_ds_unknown_handle(s, handle, "callable", "released", st);
  callable_unref(c); /* runs in flight keep theirs */
  return TFD_OK;
}

int64_t tfd_session_make_callable(tfd_session *s, const char *const *feed_names, int nf,
                                  const char *const *fetch_names, int nfe, const char *const *targets, int nt,
                                  tfd_status *st) {
  tfd_status_reset(st);
  static const char fn[] = "tfd_session_make_callable";
  if (tfd_arg_required(st, fn, "s", s) || tfd_ds_check_run_args(fn, feed_names, NULL, 0, fetch_names, nfe, targets, nt, st) ||
      tfd_arg_items(st, fn, "feed_names", TFD_ARG_ITEMS(feed_names), "num_feeds", nf))
    return -1;
  if (tfd_ds_enter(s, st) != TFD_OK) return -1;
  int64_t h = tfd_ds_check_graph_created(s, "MakeCallable()", st) == TFD_OK
                  ? make_callable_impl(s, feed_names, nf, fetch_names, nfe, targets, nt, NULL, 0, NULL, st)
                  : -1;
  tfd_ds_leave(s);
  return h;
}

tfd_code tfd_session_run_callable(tfd_session *s, int64_t handle, const tfd_run_options *ro,
                                  tfd_tensor *const *feed_values, tfd_tensor **outputs, tfd_run_metadata *meta,
                                  tfd_status *st) {
  tfd_status_reset(st);
  if (tfd_arg_required(st, "tfd_session_run_callable", "s", s)) return TFD_INVALID_ARGUMENT;
  if (tfd_ds_enter(s, st) != TFD_OK) return TFD_CANCELLED;
  tfd_code code = run_callable_impl(s, handle, ro, feed_values, outputs, meta, NULL, st);
  tfd_ds_leave(s);
  return code;
}

static tfd_run *run_callable_async(tfd_session *s, int64_t handle, const tfd_run_options *ro,
                                        tfd_tensor *const *feed_values, tfd_run_metadata *meta, tfd_run_done_fn done,
                                        void *done_arg, tfd_status *st) {
  tfd_status_reset(st);
  if (tfd_arg_required(st, "tfd_session_run_callable_async", "s", s)) return NULL;
  if (tfd_ds_enter(s, st) != TFD_OK) return NULL;
  async_req a = {done, done_arg, NULL};
  run_callable_impl(s, handle, ro, feed_values, NULL, meta, &a, st);
  tfd_ds_leave(s); /* a run that started holds the session until it ends */
  return a.run;
}

tfd_code tfd_session_run_callable_async(tfd_session *s, int64_t handle, const tfd_run_options *options,
                                        tfd_tensor *const *feed_values, tfd_run_metadata *meta, tfd_run_done_fn done,
                                        void *done_arg, tfd_run **out, tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_session_run_callable_async", "out", out)) return TFD_INVALID_ARGUMENT;
  tfd_status local = TFD_STATUS_INIT;
  *out = run_callable_async(s, handle, options, feed_values, meta, done, done_arg, &local);
  return tfd_status_move(status, &local);
}

int64_t tfd_session_make_callable_with_options(tfd_session *s, const tfd_callable_options *o, tfd_status *st) {
  tfd_status_reset(st);
  static const char fn[] = "tfd_session_make_callable_with_options";
  if (tfd_arg_required(st, fn, "s", s) || tfd_arg_required(st, fn, "options", o) ||
      tfd_arg_items(st, fn, "options->feeds", TFD_ARG_ITEMS(o->feeds), "options->num_feeds", o->num_feeds) ||
      tfd_arg_items(st, fn, "options->fetches", TFD_ARG_ITEMS(o->fetches), "options->num_fetches", o->num_fetches) ||
      tfd_arg_items(st, fn, "options->targets", TFD_ARG_ITEMS(o->targets), "options->num_targets", o->num_targets) ||
      tfd_arg_array(st, fn, "options->tensor_connections", o->tensor_connections, "options->num_tensor_connections",
                    o->num_tensor_connections))
    return -1;
  for (int i = 0; i < o->num_tensor_connections; i++)
    if (!o->tensor_connections[i].from_tensor || !o->tensor_connections[i].to_tensor) {
      tfd_status_setf(st, TFD_INVALID_ARGUMENT, "%s: options->tensor_connections[%d].%s is NULL", fn, i,
                      o->tensor_connections[i].from_tensor ? "to_tensor" : "from_tensor");
      return -1;
    }
  if (tfd_ds_enter(s, st) != TFD_OK) return -1;
  int64_t h = tfd_ds_check_graph_created(s, "MakeCallable()", st) == TFD_OK
                  ? make_callable_impl(s, o->feeds, o->num_feeds, o->fetches, o->num_fetches, o->targets, o->num_targets,
                                       o->tensor_connections, o->num_tensor_connections, o->run_options, st)
                  : -1;
  tfd_ds_leave(s);
  return h;
}
