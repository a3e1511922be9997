/* tfdev status: TensorFlow's error codes and a message naming what went wrong.
 *
 * Every fallible tfdev call returns a tfd_code and, when given a non-NULL
 * tfd_status*, also stores the code and a message there. Passing NULL for the
 * status is always allowed; the code alone is then returned.
 *
 * Arguments: a function that takes a tfd_status* refuses a caller's mistake
 * in its arguments with INVALID_ARGUMENT, before it allocates or changes
 * anything, and the message names the function and the argument
 * ("tfd_session_run: num_fetches is -1", "tfd_session_extend: graph is NULL",
 * "tfd_session_run: fetch_names[1] is NULL"): a NULL handle, name or
 * out-parameter it needs, a negative count, a NULL array with a non-zero
 * count, a NULL item of an array of names or tensors. Functions without a
 * status (getters, queries, tfd_X_data) take valid, non-NULL handles unless
 * their comment says otherwise; every tfd_X_free and tfd_X_unref accepts
 * NULL and does nothing. */
#ifndef TFDEV_STATUS_H
#define TFDEV_STATUS_H

#include "tfdev/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Same numbering as tensorflow::error::Code. */
typedef enum tfd_code {
  TFD_OK = 0,
  TFD_CANCELLED = 1,
  TFD_UNKNOWN = 2,
  TFD_INVALID_ARGUMENT = 3,
  TFD_DEADLINE_EXCEEDED = 4,
  TFD_NOT_FOUND = 5,
  TFD_ALREADY_EXISTS = 6,
  TFD_PERMISSION_DENIED = 7,
  TFD_RESOURCE_EXHAUSTED = 8,
  TFD_FAILED_PRECONDITION = 9,
  TFD_ABORTED = 10,
  TFD_OUT_OF_RANGE = 11,
  TFD_UNIMPLEMENTED = 12,
  TFD_INTERNAL = 13,
  TFD_UNAVAILABLE = 14,
  TFD_DATA_LOSS = 15,
  TFD_UNAUTHENTICATED = 16
} tfd_code;

#define TFD_CODE_COUNT 17

typedef struct tfd_status tfd_status;

/* Returns a new status holding TFD_OK, or NULL when out of memory.
 * The caller frees it with tfd_status_free. */
TFD_API tfd_status *tfd_status_new(void);
TFD_API void tfd_status_free(tfd_status *s);

TFD_API tfd_code tfd_status_code(const tfd_status *s);
/* The message; "" when the status is OK. Owned by the status, valid until
 * the status is next set, reset or freed. */
TFD_API const char *tfd_status_message(const tfd_status *s);
TFD_API void tfd_status_reset(tfd_status *s);

/* Sets code and printf-style message; returns code so callers can write
 * `return tfd_status_setf(st, TFD_NOT_FOUND, "...")`. s may be NULL; a NULL
 * fmt sets the code with an empty message. */
TFD_API tfd_code tfd_status_setf(tfd_status *s, tfd_code code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Prefixes the current message with context ("while adding devices: ...").
 * No effect on an OK or NULL status, or a NULL fmt. Returns the status's code. */
TFD_API tfd_code tfd_status_prefixf(tfd_status *s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* "OK", "INVALID_ARGUMENT", ... (static strings); "UNKNOWN" for values out of range. */
TFD_API const char *tfd_code_name(tfd_code code);
/* Inverse of tfd_code_name; returns -1 for an unknown name. */
TFD_API int tfd_code_from_name(const char *name);

#ifdef __cplusplus
}
#endif
#endif
