/* Cancellation of a step: blocking kernels register a callback; a timeout or a closing session cancels.
 *
 * Cancelling runs every registered callback once, outside the lock, with the reason (CANCELLED or
 * DEADLINE_EXCEEDED). A callback registered after the step was cancelled is refused so the kernel
 * can fail at once. Thread-safe; reference-counted because kernels may hold it past their step's end.
 *
 * Ownership: a callback runs outside the lock, so it may still be running on the cancelling thread
 * while the step it belongs to ends on another, or on the same thread further down the callback's
 * own stack (aborting a rendezvous wakes a _Recv whose partition then ends the step). A callback
 * therefore holds what it touches: its registration owns `arg` until `release(arg)` is called,
 * exactly once, after the callback has run, or when it is deregistered before running, or when the
 * cancellation is freed with it still registered. Deregistering never waits, so it cannot deadlock
 * against a callback; whoever deregisters gives up its use of arg either way and must not free what
 * the registration holds. A refused registration (already cancelled, or out of memory) keeps nothing
 * and calls no release: the caller still owns arg. */
#ifndef TFDEV_RUNTIME_CANCELLATION_H
#define TFDEV_RUNTIME_CANCELLATION_H

#include <stdbool.h>
#include <stdint.h>

#include "tfdev/status.h"

typedef struct tfd_cancellation tfd_cancellation;
typedef void (*tfd_cancel_fn)(void *arg, tfd_code code, const char *message);
typedef void (*tfd_cancel_release_fn)(void *arg);

/* What tfd_cancellation_register returns instead of a token. */
enum { TFD_CANCEL_ALREADY = -1, TFD_CANCEL_NO_MEMORY = -2 };

tfd_cancellation *tfd_cancellation_new(void);
tfd_cancellation *tfd_cancellation_ref(tfd_cancellation *c);
void tfd_cancellation_unref(tfd_cancellation *c);
bool tfd_cancellation_is_cancelled(tfd_cancellation *c);
/* The reason, once cancelled (TFD_OK before); message borrowed. */
tfd_code tfd_cancellation_reason(tfd_cancellation *c, const char **message);
/* A token >= 0; TFD_CANCEL_ALREADY when already cancelled, TFD_CANCEL_NO_MEMORY when the list could
 * not grow (the first few registrations of a cancellation never allocate). release may be NULL. */
int64_t tfd_cancellation_register(tfd_cancellation *c, tfd_cancel_fn fn, tfd_cancel_release_fn release, void *arg);
/* True when the callback was removed before it ran (its release has been called); false when it
 * has run or is running (its release is called when it returns). Never waits. */
bool tfd_cancellation_deregister(tfd_cancellation *c, int64_t token);
/* Cancels (the first reason wins) and runs the callbacks, then their releases. */
void tfd_cancellation_cancel(tfd_cancellation *c, tfd_code code, const char *message);

#endif
