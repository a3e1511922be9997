/* The argument checks the session's public entry points share (session_args.h). */
#include "session_args.h"

tfd_code tfd_ds_check_run_args(const char *fn, const char *const *feed_names, tfd_tensor *const *feed_values, int nf,
                               const char *const *fetch_names, int nfe, const char *const *targets, int nt, tfd_status *st) {
  if (tfd_arg_items(st, fn, "feed_names", TFD_ARG_ITEMS(feed_names), "num_feeds", nf) ||
      tfd_arg_items(st, fn, "feed_values", TFD_ARG_ITEMS(feed_values), "num_feeds", nf) ||
      tfd_arg_items(st, fn, "fetch_names", TFD_ARG_ITEMS(fetch_names), "num_fetches", nfe) ||
      tfd_arg_items(st, fn, "targets", TFD_ARG_ITEMS(targets), "num_targets", nt))
    return TFD_INVALID_ARGUMENT;
  return TFD_OK;
}
