/* Checks of a public function's arguments (api_args.h): one wording for every entry point, so a
 * caller's mistake reads the same wherever it is made. */
#include "api_args.h"

#include "status_internal.h"

tfd_code tfd_arg_required(tfd_status *st, const char *fn, const char *arg, const void *p) {
  return p ? TFD_OK : tfd_status_setf(st, TFD_INVALID_ARGUMENT, "%s: %s is NULL", fn, arg);
}

tfd_code tfd_arg_count(tfd_status *st, const char *fn, const char *count_name, int64_t n) {
  return n >= 0 ? TFD_OK : tfd_status_setf(st, TFD_INVALID_ARGUMENT, "%s: %s is %lld", fn, count_name, (long long)n);
}

tfd_code tfd_arg_array(tfd_status *st, const char *fn, const char *array, const void *items, const char *count_name,
                       int64_t n) {
  if (n < 0) return tfd_arg_count(st, fn, count_name, n);
  if (n > 0 && !items)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "%s: %s is NULL but %s is %lld", fn, array, count_name, (long long)n);
  return TFD_OK;
}

tfd_code tfd_arg_items(tfd_status *st, const char *fn, const char *array, const void *const *items,
                       const char *count_name, int64_t n) {
  if (tfd_arg_array(st, fn, array, items, count_name, n) != TFD_OK) return TFD_INVALID_ARGUMENT;
  for (int64_t i = 0; i < n; i++)
    if (!items[i]) return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "%s: %s[%lld] is NULL", fn, array, (long long)i);
  return TFD_OK;
}
