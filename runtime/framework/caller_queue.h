/* The caller queue: work a step hands to the thread that started it (kernels that must run there,
 * as Lua kernels must), run by that thread while it waits for the step or polls it.
 *
 * The queue shares the waiter's mutex and condition variable: posting appends under the mutex and
 * wakes the waiter, which drains between its waits. Embedded in the step that owns it. A queue can
 * be closed (a closing session does so for steps nobody may wait for): what waits is handed back
 * and each item's cancel runs instead of its work, and later posts are refused. */
#ifndef TFDEV_RUNTIME_CALLER_QUEUE_H
#define TFDEV_RUNTIME_CALLER_QUEUE_H

#include <pthread.h>
#include <stdbool.h>

#include "tfdev/status.h"

typedef struct caller_item caller_item;

typedef struct tfd_caller_queue {
  pthread_mutex_t *mu; /* the waiter's: borrowed */
  pthread_cond_t *cv;
  caller_item *head, *tail;
  bool closed;
} tfd_caller_queue;

void tfd_caller_queue_init(tfd_caller_queue *q, pthread_mutex_t *mu, pthread_cond_t *cv);
/* Queues fn(arg) for the waiter and wakes it; cancel(arg) runs instead if the queue is closed with
 * it waiting. CANCELLED when the queue is closed, RESOURCE_EXHAUSTED when out of memory: nothing is
 * queued then, and neither function will run. */
tfd_code tfd_caller_queue_post(tfd_caller_queue *q, void (*fn)(void *), void (*cancel)(void *), void *arg);
/* With q->mu held: whether work waits. */
bool tfd_caller_queue_pending_locked(const tfd_caller_queue *q);
/* With q->mu held: runs what waits, in order, with the mutex released while it runs; returns with it
 * held again. */
void tfd_caller_queue_drain_locked(tfd_caller_queue *q);
/* With q->mu held: closes the queue and returns what waited, for tfd_caller_queue_cancel_items. */
caller_item *tfd_caller_queue_close_locked(tfd_caller_queue *q);
/* Runs the cancel of each item (with no lock held: it may end the step) and frees them. */
void tfd_caller_queue_cancel_items(caller_item *items);

#endif
