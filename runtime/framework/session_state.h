/* Session state: tensors a session keeps between runs, by handle (GetSessionHandle and friends).
 * Handles are int64 (they came before tfdev's string dtype; TensorFlow's are strings), unique within
 * the session. Thread-safe. */
#ifndef TFDEV_RUNTIME_SESSION_STATE_H
#define TFDEV_RUNTIME_SESSION_STATE_H

#include <stdint.h>

#include "tfdev/status.h"
#include "tfdev/tensor.h"

typedef struct tfd_session_state tfd_session_state;

tfd_session_state *tfd_session_state_new(void);
void tfd_session_state_free(tfd_session_state *s);
/* Keeps a reference to t; returns its handle (> 0), or -1 when out of memory. */
int64_t tfd_session_state_add(tfd_session_state *s, tfd_tensor *t);
/* A new reference to the tensor, or NULL with NOT_FOUND. */
tfd_tensor *tfd_session_state_get(tfd_session_state *s, int64_t handle, tfd_status *status);
tfd_code tfd_session_state_delete(tfd_session_state *s, int64_t handle, tfd_status *status);
int64_t tfd_session_state_size(tfd_session_state *s);

#endif
