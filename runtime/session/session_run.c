/* Run and RunAsync: feed, fetch and target names resolved through the executor cache, then the bundle
 * run blocking (step.c) or started asynchronously (run_async.c). */
#include <stdlib.h>

#include "session_args.h"
#include "session_internal.h"

/* Run and RunAsync: names resolved once, then the bundle run blocking, or started (async). */
static tfd_code run_impl(tfd_session *s, const tfd_run_options *ro, const char *const *feed_names,
                         tfd_tensor *const *feed_values, int nf, const char *const *fetch_names, int nfe,
                         const char *const *targets, int nt, tfd_tensor **outputs, tfd_run_metadata *meta,
                         async_req *async, tfd_status *st) {
  if (nfe == 0 && nt == 0) return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "Must specify at least one target to fetch or execute.");
  char **feeds = tfd_ds_canonical_names(feed_names, nf, true, st);
  char **fetches = feeds ? tfd_ds_canonical_names(fetch_names, nfe, true, st) : NULL;
  char **tgts = fetches ? tfd_ds_canonical_names(targets, nt, false, st) : NULL;
  int *feed_map = malloc(((size_t)nf + 1) * sizeof *feed_map), *fetch_map = malloc(((size_t)nfe + 1) * sizeof *fetch_map);
  tfd_tensor **ordered = calloc((size_t)nf + 1, sizeof *ordered), **outs = calloc((size_t)nfe + 1, sizeof *outs);
  tfd_code code = tgts ? TFD_OK : tfd_status_code(st);
  if (code == TFD_OK && (!feed_map || !fetch_map || !ordered || !outs))
    code = tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
  bundle *b = code == TFD_OK ? tfd_ds_get_bundle(s, feeds, nf, fetches, nfe, tgts, nt, false, st) : NULL;
  if (code == TFD_OK && !b) code = tfd_status_code(st);
  if (code == TFD_OK) code = tfd_ds_map_names(&b->feed_index, feeds, nf, feed_map, "feed", st);
  if (code == TFD_OK) code = tfd_ds_map_names(&b->fetch_index, fetches, nfe, fetch_map, "fetch", st);
  if (code == TFD_OK) for (int i = 0; i < nf; i++) ordered[feed_map[i]] = feed_values[i];
  if (code == TFD_OK && async) {
    async->run = tfd_ds_start_async(s, b, NULL, NULL, fetch_map, nfe, ro, ordered, meta, async->done, async->arg, st);
    fetch_map = NULL; /* the run's now, or freed */
    code = async->run ? TFD_OK : tfd_status_code(st);
  } else if (code == TFD_OK) {
    code = tfd_ds_run_bundle(s, b, ro, ordered, outs, meta, st);
    if (code == TFD_OK)
      for (int i = 0; i < nfe; i++) outputs[i] = tfd_tensor_ref(outs[fetch_map[i]]);
    for (int k = 0; code == TFD_OK && k < b->num_fetches; k++) tfd_tensor_unref(outs[k]);
  }
  tfd_ds_free_names(feeds, nf);
  tfd_ds_free_names(fetches, nfe);
  tfd_ds_free_names(tgts, nt);
  free(feed_map);
  free(fetch_map);
  free(ordered);
  free(outs);
  return code;
}

/* ---- public entry points: each runs between enter and leave ---- */
tfd_code tfd_session_run(tfd_session *s, const tfd_run_options *ro, const char *const *feed_names,
                         tfd_tensor *const *feed_values, int nf, const char *const *fetch_names, int nfe,
                         const char *const *targets, int nt, tfd_tensor **outputs, tfd_run_metadata *meta,
                         tfd_status *st) {
  tfd_status_reset(st);
  static const char fn[] = "tfd_session_run";
  if (tfd_arg_required(st, fn, "s", s) || tfd_ds_check_run_args(fn, feed_names, feed_values, nf, fetch_names, nfe, targets, nt, st) ||
      tfd_arg_array(st, fn, "outputs", outputs, "num_fetches", nfe))
    return TFD_INVALID_ARGUMENT;
  if (tfd_ds_enter(s, st) != TFD_OK) return TFD_CANCELLED;
  tfd_code code = tfd_ds_check_graph_created(s, "Run()", st);
  if (code == TFD_OK)
    code = run_impl(s, ro, feed_names, feed_values, nf, fetch_names, nfe, targets, nt, outputs, meta, NULL, st);
  tfd_ds_leave(s);
  return code;
}

static tfd_run *run_async(tfd_session *s, const tfd_run_options *ro, const char *const *feed_names,
                               tfd_tensor *const *feed_values, int nf, const char *const *fetch_names, int nfe,
                               const char *const *targets, int nt, tfd_run_metadata *meta, tfd_run_done_fn done,
                               void *done_arg, tfd_status *st) {
  tfd_status_reset(st);
  static const char fn[] = "tfd_session_run_async";
  if (tfd_arg_required(st, fn, "s", s) || tfd_ds_check_run_args(fn, feed_names, feed_values, nf, fetch_names, nfe, targets, nt, st))
    return NULL;
  if (tfd_ds_enter(s, st) != TFD_OK) return NULL;
  async_req a = {done, done_arg, NULL};
  if (tfd_ds_check_graph_created(s, "Run()", st) == TFD_OK)
    run_impl(s, ro, feed_names, feed_values, nf, fetch_names, nfe, targets, nt, NULL, meta, &a, st);
  tfd_ds_leave(s); /* a run that started holds the session until it ends */
  return a.run;
}

tfd_code tfd_session_run_async(tfd_session *s, const tfd_run_options *options, const char *const *feed_names,
                               tfd_tensor *const *feed_values, int num_feeds, const char *const *fetch_names,
                               int num_fetches, const char *const *targets, int num_targets, tfd_run_metadata *meta,
                               tfd_run_done_fn done, void *done_arg, tfd_run **out, tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_session_run_async", "out", out)) return TFD_INVALID_ARGUMENT;
  tfd_status local = TFD_STATUS_INIT;
  *out = run_async(s, options, feed_names, feed_values, num_feeds, fetch_names, num_fetches, targets, num_targets, meta, done, done_arg, &local);
  return tfd_status_move(status, &local);
}
