/* Step cancellation: a locked list of callbacks run once when the step is cancelled. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../core/refcount.h"
#include "../core/status_internal.h"
#include "cancellation.h"

typedef struct entry {
  int64_t token;
  tfd_cancel_fn fn;
  void *arg;
} entry;

struct tfd_cancellation {
  tfd_refcount refs;
  pthread_mutex_t mu;
  bool cancelled;
  tfd_status reason;
  entry *entries;
  size_t n, cap;
  int64_t next_token;
};

tfd_cancellation *tfd_cancellation_new(void) {
  tfd_cancellation *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  tfd_refcount_init(&c->refs);
  pthread_mutex_init(&c->mu, NULL);
  return c;
}

tfd_cancellation *tfd_cancellation_ref(tfd_cancellation *c) {
  if (c) tfd_refcount_inc(&c->refs);
  return c;
}

void tfd_cancellation_unref(tfd_cancellation *c) {
  if (!c || !tfd_refcount_dec(&c->refs)) return;
  tfd_status_clear(&c->reason);
  free(c->entries);
  pthread_mutex_destroy(&c->mu);
  free(c);
}

bool tfd_cancellation_is_cancelled(tfd_cancellation *c) {
  pthread_mutex_lock(&c->mu);
  bool v = c->cancelled;
  pthread_mutex_unlock(&c->mu);
  return v;
}

tfd_code tfd_cancellation_reason(tfd_cancellation *c, const char **message) {
  pthread_mutex_lock(&c->mu);
  tfd_code code = c->cancelled ? c->reason.code : TFD_OK;
  if (message) *message = tfd_status_message(&c->reason);
  pthread_mutex_unlock(&c->mu);
  return code;
}

int64_t tfd_cancellation_register(tfd_cancellation *c, tfd_cancel_fn fn, void *arg) {
  pthread_mutex_lock(&c->mu);
  int64_t token = -1;
  if (!c->cancelled) {
    if (c->n == c->cap) {
      size_t cap = c->cap ? c->cap * 2 : 8;
      entry *e = realloc(c->entries, cap * sizeof *e);
      if (e) {
        c->entries = e;
        c->cap = cap;
      }
    }
    if (c->n < c->cap) {
      token = c->next_token++;
      c->entries[c->n++] = (entry){token, fn, arg};
    }
  }
  pthread_mutex_unlock(&c->mu);
  return token;
}

bool tfd_cancellation_deregister(tfd_cancellation *c, int64_t token) {
  pthread_mutex_lock(&c->mu);
  bool removed = false;
  for (size_t i = 0; i < c->n; i++) {
    if (c->entries[i].token == token) {
      c->entries[i] = c->entries[--c->n];
      removed = true;
      break;
    }
  }
  pthread_mutex_unlock(&c->mu);
  return removed;
}

void tfd_cancellation_cancel(tfd_cancellation *c, tfd_code code, const char *message) {
  pthread_mutex_lock(&c->mu);
  if (c->cancelled) {
    pthread_mutex_unlock(&c->mu);
    return;
  }
  c->cancelled = true;
  tfd_status_setf(&c->reason, code, "%s", message);
  entry *run = c->entries;
  size_t n = c->n;
  c->entries = NULL;
  c->n = c->cap = 0;
  const char *msg = tfd_status_message(&c->reason);
  pthread_mutex_unlock(&c->mu);
  for (size_t i = 0; i < n; i++) run[i].fn(run[i].arg, code, msg); /* reason is fixed from now on */
  free(run);
}
