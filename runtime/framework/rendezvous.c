/* Intra-process rendezvous: a locked map of keys to either a sent tensor or a waiting receiver. */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "../core/refcount.h"
#include "../core/status_internal.h"
#include "../core/strmap.h"
#include "rendezvous.h"

typedef struct item {
  tfd_tensor *tensor; /* sent, not yet received */
  bool dead;          /* sent dead (tensor NULL) */
  tfd_recv_done done; /* waiting receiver */
  void *arg;
} item;

struct tfd_rendezvous {
  tfd_refcount refs;
  pthread_mutex_t mu;
  tfd_strmap table; /* key -> item* */
  tfd_status aborted;
};

tfd_rendezvous *tfd_rendezvous_new(void) {
  tfd_rendezvous *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  tfd_refcount_init(&r->refs);
  pthread_mutex_init(&r->mu, NULL);
  return r;
}

tfd_rendezvous *tfd_rendezvous_ref(tfd_rendezvous *r) {
  tfd_refcount_inc(&r->refs);
  return r;
}

void tfd_rendezvous_unref(tfd_rendezvous *r) {
  if (!r || !tfd_refcount_dec(&r->refs)) return;
  size_t it = 0;
  const char *k;
  void *v;
  while (tfd_strmap_next(&r->table, &it, &k, &v)) {
    item *i = v;
    tfd_tensor_unref(i->tensor);
    free(i);
  }
  tfd_strmap_free(&r->table);
  tfd_status_clear(&r->aborted);
  pthread_mutex_destroy(&r->mu);
  free(r);
}

char *tfd_rendezvous_key(const char *src, uint64_t incarnation, const char *dst, const char *tensor) {
  return tfd_format("%s;%016" PRIx64 ";%s;%s;0:0", src, incarnation, dst, tensor);
}

tfd_code tfd_rendezvous_send(tfd_rendezvous *r, const char *key, tfd_tensor *t, tfd_status *status) {
  pthread_mutex_lock(&r->mu);
  if (r->aborted.code != TFD_OK) {
    tfd_code code = tfd_status_setf(status, r->aborted.code, "%s", tfd_status_message(&r->aborted));
    pthread_mutex_unlock(&r->mu);
    return code;
  }
  item *i = tfd_strmap_get(&r->table, key);
  if (i && i->done) {
    tfd_strmap_remove(&r->table, key);
    pthread_mutex_unlock(&r->mu);
    i->done(i->arg, t, NULL); /* the receiver was waiting: hand over directly */
    free(i);
    return TFD_OK;
  }
  if (i) {
    pthread_mutex_unlock(&r->mu);
    return tfd_status_setf(status, TFD_ALREADY_EXISTS, "rendezvous key '%s' was sent twice", key);
  }
  i = calloc(1, sizeof *i);
  if (!i || !tfd_strmap_put(&r->table, key, i)) {
    free(i);
    pthread_mutex_unlock(&r->mu);
    return tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "out of memory in rendezvous");
  }
  i->tensor = tfd_tensor_ref(t);
  i->dead = !t;
  pthread_mutex_unlock(&r->mu);
  return TFD_OK;
}

void tfd_rendezvous_recv(tfd_rendezvous *r, const char *key, tfd_recv_done done, void *arg) {
  tfd_status fail = TFD_STATUS_INIT;
  pthread_mutex_lock(&r->mu);
  if (r->aborted.code != TFD_OK) {
    tfd_status_setf(&fail, r->aborted.code, "%s", tfd_status_message(&r->aborted));
    pthread_mutex_unlock(&r->mu);
    done(arg, NULL, &fail);
    tfd_status_clear(&fail);
    return;
  }
  item *i = tfd_strmap_get(&r->table, key);
  if (i && (i->tensor || i->dead)) {
    tfd_strmap_remove(&r->table, key);
    pthread_mutex_unlock(&r->mu);
    done(arg, i->tensor, NULL);
    tfd_tensor_unref(i->tensor);
    free(i);
    return;
  }
  if (!i) {
    i = calloc(1, sizeof *i);
    if (!i || !tfd_strmap_put(&r->table, key, i)) {
      free(i);
      pthread_mutex_unlock(&r->mu);
      tfd_status_setf(&fail, TFD_RESOURCE_EXHAUSTED, "out of memory in rendezvous");
      done(arg, NULL, &fail);
      tfd_status_clear(&fail);
      return;
    }
  }
  i->done = done;
  i->arg = arg;
  pthread_mutex_unlock(&r->mu);
}

tfd_code tfd_rendezvous_status(tfd_rendezvous *r, tfd_status *out) {
  pthread_mutex_lock(&r->mu);
  tfd_code code = r->aborted.code;
  if (code != TFD_OK) tfd_status_setf(out, code, "%s", tfd_status_message(&r->aborted));
  pthread_mutex_unlock(&r->mu);
  return code;
}

void tfd_rendezvous_abort(tfd_rendezvous *r, tfd_code code, const char *message) {
  pthread_mutex_lock(&r->mu);
  if (r->aborted.code != TFD_OK) {
    pthread_mutex_unlock(&r->mu);
    return;
  }
  tfd_status_setf(&r->aborted, code, "%s", message);
  /* Take the waiters out of the table, then call them outside the lock. */
  size_t n = 0, it = 0;
  const char *k;
  void *v;
  item **waiting = malloc((r->table.size + 1) * sizeof *waiting);
  tfd_strmap keep = TFD_STRMAP_INIT;
  while (tfd_strmap_next(&r->table, &it, &k, &v)) {
    item *i = v;
    if (i->done && waiting) waiting[n++] = i;
    else if (!tfd_strmap_put(&keep, k, i)) {
      tfd_tensor_unref(i->tensor);
      free(i);
    }
  }
  tfd_strmap_free(&r->table);
  r->table = keep;
  pthread_mutex_unlock(&r->mu);
  tfd_status st = TFD_STATUS_INIT;
  tfd_status_setf(&st, code, "%s", message);
  for (size_t w = 0; w < n; w++) {
    waiting[w]->done(waiting[w]->arg, NULL, &st);
    free(waiting[w]);
  }
  free(waiting);
  tfd_status_clear(&st);
}
