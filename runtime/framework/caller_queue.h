/* The caller queue: work a step hands to the thread that started it (kernels that must run there,
 * as Lua kernels must), run by that thread while it waits for the step or polls it.
 *
 * The queue shares the waiter's mutex and condition variable: posting appends under the mutex and
 * wakes the waiter, which drains between its waits. Embedded in the step that owns it. */
#ifndef TFDEV_RUNTIME_CALLER_QUEUE_H
#define TFDEV_RUNTIME_CALLER_QUEUE_H

#include <pthread.h>
#include <stdbool.h>

typedef struct caller_item caller_item;

typedef struct tfd_caller_queue {
  pthread_mutex_t *mu; /* the waiter's: borrowed */
  pthread_cond_t *cv;
  caller_item *head, *tail;
} tfd_caller_queue;

void tfd_caller_queue_init(tfd_caller_queue *q, pthread_mutex_t *mu, pthread_cond_t *cv);
/* Queues fn(arg) for the waiter and wakes it. False when out of memory (nothing queued). */
bool tfd_caller_queue_post(tfd_caller_queue *q, void (*fn)(void *), void *arg);
/* With q->mu held: whether work waits. */
bool tfd_caller_queue_pending_locked(const tfd_caller_queue *q);
/* With q->mu held: runs what waits, in order, with the mutex released while it runs; returns with it
 * held again. */
void tfd_caller_queue_drain_locked(tfd_caller_queue *q);

#endif
