/* Cancellation of a step: blocking kernels register a callback; a timeout or a closing session cancels.
 *
 * Cancelling runs every registered callback once, outside the lock, with the
 * reason (CANCELLED or DEADLINE_EXCEEDED). A callback registered after the
 * step was cancelled is refused so the kernel can fail at once. Thread-safe;
 * reference-counted because kernels may hold it past their step's end. */
#ifndef TFDEV_RUNTIME_CANCELLATION_H
#define TFDEV_RUNTIME_CANCELLATION_H

#include <stdbool.h>
#include <stdint.h>

#include "tfdev/status.h"

typedef struct tfd_cancellation tfd_cancellation;
typedef void (*tfd_cancel_fn)(void *arg, tfd_code code, const char *message);

tfd_cancellation *tfd_cancellation_new(void);
tfd_cancellation *tfd_cancellation_ref(tfd_cancellation *c);
void tfd_cancellation_unref(tfd_cancellation *c);
bool tfd_cancellation_is_cancelled(tfd_cancellation *c);
/* The reason, once cancelled (TFD_OK before); message borrowed. */
tfd_code tfd_cancellation_reason(tfd_cancellation *c, const char **message);
/* A token >= 0, or -1 when already cancelled (fn is then not kept). */
int64_t tfd_cancellation_register(tfd_cancellation *c, tfd_cancel_fn fn, void *arg);
/* True when the callback was removed before it ran; false when it has run
 * or is running (the caller must then let it finish its work). */
bool tfd_cancellation_deregister(tfd_cancellation *c, int64_t token);
/* Cancels (the first reason wins) and runs the callbacks. */
void tfd_cancellation_cancel(tfd_cancellation *c, tfd_code code, const char *message);

#endif
