/* The caller queue (see caller_queue.h). */
#include "caller_queue.h"

#include <stdlib.h>

struct caller_item {
  void (*fn)(void *);
  void (*cancel)(void *);
  void *arg;
  caller_item *next;
};

void tfd_caller_queue_init(tfd_caller_queue *q, pthread_mutex_t *mu, pthread_cond_t *cv) {
  *q = (tfd_caller_queue){mu, cv, NULL, NULL, false};
}

tfd_code tfd_caller_queue_post(tfd_caller_queue *q, void (*fn)(void *), void (*cancel)(void *), void *arg) {
  caller_item *it = malloc(sizeof *it);
  if (!it) return TFD_RESOURCE_EXHAUSTED;
  *it = (caller_item){fn, cancel, arg, NULL};
  pthread_mutex_lock(q->mu);
  bool closed = q->closed;
  if (!closed) {
    if (q->tail) q->tail->next = it;
    else q->head = it;
    q->tail = it;
    pthread_cond_broadcast(q->cv);
  }
  pthread_mutex_unlock(q->mu);
  if (closed) free(it);
  return closed ? TFD_CANCELLED : TFD_OK;
}

bool tfd_caller_queue_pending_locked(const tfd_caller_queue *q) { return q->head != NULL; }

void tfd_caller_queue_drain_locked(tfd_caller_queue *q) {
  while (q->head) {
    caller_item *it = q->head;
    q->head = it->next;
    if (!q->head) q->tail = NULL;
    pthread_mutex_unlock(q->mu);
    it->fn(it->arg);
    free(it);
    pthread_mutex_lock(q->mu);
  }
}

caller_item *tfd_caller_queue_close_locked(tfd_caller_queue *q) {
  caller_item *items = q->head;
  q->closed = true;
  q->head = q->tail = NULL;
  return items;
}

void tfd_caller_queue_cancel_items(caller_item *items) {
  while (items) {
    caller_item *next = items->next;
    items->cancel(items->arg);
    free(items);
    items = next;
  }
}
