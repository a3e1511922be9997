/* The event manager (see event_mgr.h). In-flight events form a FIFO: streams complete their work in
 * order, so the poller stops at the first pending event of the queue and callbacks run in the
 * order they were queued. Spent events go to a free list for reuse, as TensorFlow's do. */
#include "event_mgr.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "../runtime/core/log.h"
#include "../runtime/core/status_internal.h"

typedef struct in_flight {
  void *event;
  void (*fn)(void *arg);
  void *arg;
  struct in_flight *next;
} in_flight;

struct tfd_event_mgr {
  tfd_event_provider p;
  int poll_us;
  pthread_mutex_t mu;
  pthread_cond_t work;  /* the poller: events arrived, or stop */
  pthread_cond_t drained; /* free: the queue emptied */
  in_flight *head, *tail; /* recorded, callbacks not run */
  in_flight *spare;       /* list nodes for reuse */
  void **free_events;
  size_t num_free, cap_free;
  size_t pending;
  int64_t failures;
  bool stop;
  pthread_t thread;
};

/* Keeps a spent event for reuse (under mu), or destroys it when the free list cannot grow. */
static void recycle_event(tfd_event_mgr *m, void *event) {
  if (m->num_free == m->cap_free) {
    size_t cap = m->cap_free ? 2 * m->cap_free : 16;
    void **grown = realloc(m->free_events, cap * sizeof *grown);
    if (grown) m->free_events = grown, m->cap_free = cap;
  }
  if (m->num_free < m->cap_free) m->free_events[m->num_free++] = event;
  else m->p.destroy(m->p.ctx, event);
}

/* Pops the completed prefix of the queue (under mu); returns it as a list, events recycled. */
static in_flight *take_completed(tfd_event_mgr *m) {
  in_flight *done = NULL, **last = &done;
  while (m->head) {
    int q = m->p.query(m->p.ctx, m->head->event);
    if (q == 0) break;
    if (q < 0) {
      if (m->failures++ == 0) tfd_log(TFD_LOG_ERROR, "a GPU stream failed: releasing what waited on it");
    }
    in_flight *f = m->head;
    m->head = f->next;
    if (!m->head) m->tail = NULL;
    recycle_event(m, f->event);
    f->event = NULL;
    f->next = NULL;
    *last = f;
    last = &f->next;
  }
  return done;
}

static void *poll_loop(void *arg) {
  tfd_event_mgr *m = arg;
  pthread_mutex_lock(&m->mu);
  for (;;) {
    while (!m->head && !m->stop) pthread_cond_wait(&m->work, &m->mu);
    if (!m->head && m->stop) break;
    in_flight *done = take_completed(m);
    if (!done) { /* the oldest event is still pending: wait a little */
      pthread_mutex_unlock(&m->mu);
      struct timespec ts = {0, (long)m->poll_us * 1000};
      nanosleep(&ts, NULL);
      pthread_mutex_lock(&m->mu);
      continue;
    }
    pthread_mutex_unlock(&m->mu);
    size_t ran = 0;
    in_flight *last = NULL;
    for (in_flight *f = done; f; f = f->next, ran++) {
      f->fn(f->arg);
      last = f;
    }
    pthread_mutex_lock(&m->mu);
    last->next = m->spare;
    m->spare = done;
    m->pending -= ran;
    if (m->pending == 0) pthread_cond_broadcast(&m->drained);
  }
  pthread_mutex_unlock(&m->mu);
  return NULL;
}

tfd_event_mgr *tfd_event_mgr_new(const tfd_event_provider *p, int poll_us, tfd_status *st) {
  if (!p || !p->create || !p->record || !p->query || !p->destroy) {
    tfd_status_setf(st, TFD_INVALID_ARGUMENT, "an event provider needs create, record, query and destroy");
    return NULL;
  }
  tfd_event_mgr *m = calloc(1, sizeof *m);
  if (!m) {
    tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory creating an event manager");
    return NULL;
  }
  m->p = *p;
  m->poll_us = poll_us > 0 ? poll_us : 10;
  pthread_mutex_init(&m->mu, NULL);
  pthread_cond_init(&m->work, NULL);
  pthread_cond_init(&m->drained, NULL);
  if (pthread_create(&m->thread, NULL, poll_loop, m) != 0) {
    pthread_cond_destroy(&m->drained);
    pthread_cond_destroy(&m->work);
    pthread_mutex_destroy(&m->mu);
    free(m);
    tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "could not start the event manager's thread");
    return NULL;
  }
  return m;
}

tfd_code tfd_event_mgr_then_execute(tfd_event_mgr *m, void *stream, void (*fn)(void *arg), void *arg, tfd_status *st) {
  pthread_mutex_lock(&m->mu);
  void *event = m->num_free ? m->free_events[--m->num_free] : NULL;
  in_flight *f = m->spare;
  if (f) m->spare = f->next;
  pthread_mutex_unlock(&m->mu);
  if (!f) f = malloc(sizeof *f);
  if (!event && f) event = m->p.create(m->p.ctx);
  tfd_code code = !f || !event ? tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory or events queuing a callback")
                               : m->p.record(m->p.ctx, event, stream, st);
  pthread_mutex_lock(&m->mu);
  if (code != TFD_OK) {
    if (event) recycle_event(m, event);
    if (f) f->next = m->spare, m->spare = f;
    pthread_mutex_unlock(&m->mu);
    return code;
  }
  /* Recorded under the lock's order: events of one stream enter the queue in stream order. The
   * record above happened outside it, so two threads queuing on one stream must not race; each
   * device queues from its compute thread, as TensorFlow's do. */
  *f = (in_flight){event, fn, arg, NULL};
  if (m->tail) m->tail->next = f;
  else m->head = f;
  m->tail = f;
  m->pending++;
  pthread_cond_signal(&m->work);
  pthread_mutex_unlock(&m->mu);
  return TFD_OK;
}

size_t tfd_event_mgr_pending(tfd_event_mgr *m) {
  pthread_mutex_lock(&m->mu);
  size_t n = m->pending;
  pthread_mutex_unlock(&m->mu);
  return n;
}

int64_t tfd_event_mgr_failures(tfd_event_mgr *m) {
  pthread_mutex_lock(&m->mu);
  int64_t n = m->failures;
  pthread_mutex_unlock(&m->mu);
  return n;
}

void tfd_event_mgr_free(tfd_event_mgr *m) {
  if (!m) return;
  pthread_mutex_lock(&m->mu);
  while (m->pending > 0) pthread_cond_wait(&m->drained, &m->mu);
  m->stop = true;
  pthread_cond_signal(&m->work);
  pthread_mutex_unlock(&m->mu);
  pthread_join(m->thread, NULL);
  for (size_t i = 0; i < m->num_free; i++) m->p.destroy(m->p.ctx, m->free_events[i]);
  free(m->free_events);
  while (m->spare) {
    in_flight *f = m->spare;
    m->spare = f->next;
    free(f);
  }
  pthread_cond_destroy(&m->drained);
  pthread_cond_destroy(&m->work);
  pthread_mutex_destroy(&m->mu);
  free(m);
}
