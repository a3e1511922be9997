/* The argument checks the session's public entry points share (runtime/core/api_args.h has the
 * single ones): made first, before a call enters the session or allocates. */
#ifndef TFDEV_RUNTIME_SESSION_ARGS_H
#define TFDEV_RUNTIME_SESSION_ARGS_H

#include "../core/api_args.h"
#include "tfdev/session.h"

/* A run's names and tensors: feed_names and feed_values of num_feeds items, fetch_names of
 * num_fetches, targets of num_targets; counts >= 0, arrays given when their count is not 0, no
 * NULL item. The message names fn and the argument ("tfd_session_run: fetch_names[1] is NULL"). */
tfd_code tfd_ds_check_run_args(const char *fn, const char *const *feed_names, tfd_tensor *const *feed_values, int num_feeds,
                               const char *const *fetch_names, int num_fetches, const char *const *targets, int num_targets,
                               tfd_status *status);

#endif
