/* Session state: a locked map from int64 handles to tensors. */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "../core/status_internal.h"
#include "../core/strmap.h"
#include "session_state.h"

struct tfd_session_state {
  pthread_mutex_t mu;
  tfd_strmap tensors; /* decimal handle -> tfd_tensor* */
  int64_t next;
};

tfd_session_state *tfd_session_state_new(void) {
  tfd_session_state *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  pthread_mutex_init(&s->mu, NULL);
  s->next = 1;
  return s;
}

void tfd_session_state_free(tfd_session_state *s) {
  if (!s) return;
  size_t it = 0;
  const char *k;
  void *v;
  while (tfd_strmap_next(&s->tensors, &it, &k, &v)) tfd_tensor_unref(v);
  tfd_strmap_free(&s->tensors);
  pthread_mutex_destroy(&s->mu);
  free(s);
}

int64_t tfd_session_state_add(tfd_session_state *s, tfd_tensor *t) {
  char key[32];
  pthread_mutex_lock(&s->mu);
  int64_t h = s->next++;
  snprintf(key, sizeof key, "%" PRId64, h);
  bool ok = tfd_strmap_put(&s->tensors, key, t);
  if (ok) tfd_tensor_ref(t);
  pthread_mutex_unlock(&s->mu);
  return ok ? h : -1;
}

static tfd_tensor *find(tfd_session_state *s, int64_t handle, bool remove, tfd_status *st) {
  char key[32];
  snprintf(key, sizeof key, "%" PRId64, handle);
  pthread_mutex_lock(&s->mu);
  tfd_tensor *t = remove ? tfd_strmap_remove(&s->tensors, key) : tfd_tensor_ref(tfd_strmap_get(&s->tensors, key));
  pthread_mutex_unlock(&s->mu);
  if (!t)
    tfd_status_setf(st, TFD_NOT_FOUND, "The tensor with handle '%" PRId64 "' is not in the session store.", handle);
  return t;
}

tfd_tensor *tfd_session_state_get(tfd_session_state *s, int64_t handle, tfd_status *st) {
  return find(s, handle, false, st);
}

tfd_code tfd_session_state_delete(tfd_session_state *s, int64_t handle, tfd_status *st) {
  tfd_tensor *t = find(s, handle, true, st);
  if (!t) return TFD_NOT_FOUND;
  tfd_tensor_unref(t);
  return TFD_OK;
}

int64_t tfd_session_state_size(tfd_session_state *s) {
  pthread_mutex_lock(&s->mu);
  int64_t n = (int64_t)s->tensors.size;
  pthread_mutex_unlock(&s->mu);
  return n;
}
