/* Step cancellation: a locked list of callbacks run once when the step is cancelled, each holding
 * its argument until its release (cancellation.h says why). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../core/refcount.h"
#include "../core/status_internal.h"
#include "cancellation.h"

typedef struct entry {
  int64_t token;
  tfd_cancel_fn fn;
  tfd_cancel_release_fn release;
  void *arg;
} entry;

/* A step registers its rendezvous' abort and a kernel or two that wait: room for them inline, so a
 * step can always be made cancellable, whatever memory is left. */
enum { INLINE_ENTRIES = 4 };

struct tfd_cancellation {
  tfd_refcount refs;
  pthread_mutex_t mu;
  bool cancelled;
  tfd_status reason;
  entry *entries; /* inline_entries, or the heap once more are registered */
  size_t n, cap;
  int64_t next_token;
  entry inline_entries[INLINE_ENTRIES];
};

tfd_cancellation *tfd_cancellation_new(void) {
  tfd_cancellation *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  tfd_refcount_init(&c->refs);
  pthread_mutex_init(&c->mu, NULL);
  c->entries = c->inline_entries;
  c->cap = INLINE_ENTRIES;
  return c;
}

tfd_cancellation *tfd_cancellation_ref(tfd_cancellation *c) {
  if (c) tfd_refcount_inc(&c->refs);
  return c;
}

static void release_all(entry *e, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (e[i].release) e[i].release(e[i].arg);
}

void tfd_cancellation_unref(tfd_cancellation *c) {
  if (!c || !tfd_refcount_dec(&c->refs)) return;
  release_all(c->entries, c->n); /* registered and never run nor deregistered */
  tfd_status_clear(&c->reason);
  if (c->entries != c->inline_entries) free(c->entries);
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

/* Room for one more entry (under mu). */
static bool grow_locked(tfd_cancellation *c) {
  if (c->n < c->cap) return true;
  size_t cap = c->cap * 2;
  entry *e = c->entries == c->inline_entries ? malloc(cap * sizeof *e) : realloc(c->entries, cap * sizeof *e);
  if (!e) return false;
  if (c->entries == c->inline_entries) memcpy(e, c->inline_entries, c->n * sizeof *e);
  c->entries = e;
  c->cap = cap;
  return true;
}

int64_t tfd_cancellation_register(tfd_cancellation *c, tfd_cancel_fn fn, tfd_cancel_release_fn release, void *arg) {
  pthread_mutex_lock(&c->mu);
  int64_t token = c->cancelled ? TFD_CANCEL_ALREADY : !grow_locked(c) ? TFD_CANCEL_NO_MEMORY : c->next_token++;
  if (token >= 0) c->entries[c->n++] = (entry){token, fn, release, arg};
  pthread_mutex_unlock(&c->mu);
  return token;
}

bool tfd_cancellation_deregister(tfd_cancellation *c, int64_t token) {
  pthread_mutex_lock(&c->mu);
  entry removed = {0};
  bool found = false;
  for (size_t i = 0; i < c->n && !found; i++) {
    if (c->entries[i].token != token) continue;
    removed = c->entries[i];
    c->entries[i] = c->entries[--c->n];
    found = true;
  }
  pthread_mutex_unlock(&c->mu);
  if (found && removed.release) removed.release(removed.arg);
  return found;
}

void tfd_cancellation_cancel(tfd_cancellation *c, tfd_code code, const char *message) {
  pthread_mutex_lock(&c->mu);
  if (c->cancelled) {
    pthread_mutex_unlock(&c->mu);
    return;
  }
  c->cancelled = true;
  tfd_status_setf(&c->reason, code, "%s", message);
  /* The list is taken whole: a deregistration from now on finds nothing and leaves the entry's
   * release to us. Inline entries are copied out, as the struct's room is the list's. */
  entry local[INLINE_ENTRIES], *run = c->entries;
  size_t n = c->n;
  if (run == c->inline_entries) {
    memcpy(local, run, n * sizeof *run);
    run = local;
  }
  c->entries = c->inline_entries;
  c->n = 0;
  c->cap = INLINE_ENTRIES;
  const char *msg = tfd_status_message(&c->reason);
  pthread_mutex_unlock(&c->mu);
  for (size_t i = 0; i < n; i++) { /* reason is fixed from now on */
    run[i].fn(run[i].arg, code, msg);
    if (run[i].release) run[i].release(run[i].arg);
  }
  if (run != local) free(run);
}
