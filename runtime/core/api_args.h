/* Checks of a public function's arguments, made at its entry before anything is allocated: a
 * negative count, a NULL array with a non-zero count, a NULL element of an array of names or
 * tensors, a NULL required pointer. Each returns TFD_OK, or INVALID_ARGUMENT with the status set to
 * "<function>: <what is wrong with which argument>" ("tfd_session_run: num_fetches is -1"), so a
 * caller chains them with || and returns on the first that fails. */
#ifndef TFDEV_RUNTIME_API_ARGS_H
#define TFDEV_RUNTIME_API_ARGS_H

#include <stdint.h>

#include "tfdev/status.h"

/* `arg` must not be NULL: "fn: arg is NULL". */
tfd_code tfd_arg_required(tfd_status *status, const char *fn, const char *arg, const void *p);
/* A count must not be negative: "fn: count is -1". */
tfd_code tfd_arg_count(tfd_status *status, const char *fn, const char *count_name, int64_t n);
/* An array of n items: n >= 0, and the array not NULL when n > 0 ("fn: array is NULL but count
 * is 2"). */
tfd_code tfd_arg_array(tfd_status *status, const char *fn, const char *array, const void *items, const char *count_name,
                       int64_t n);
/* tfd_arg_array, and every item not NULL ("fn: array[1] is NULL"): names, tensors, devices. */
tfd_code tfd_arg_items(tfd_status *status, const char *fn, const char *array, const void *const *items,
                       const char *count_name, int64_t n);
/* An array of names or handles as tfd_arg_items takes it. */
#define TFD_ARG_ITEMS(a) ((const void *const *)(a))

#endif
