/* FIFOQueue: a resource holding tuples of tensors, and the kernels that use it.
 *
 * Dequeue (and enqueue on a full bounded queue) is asynchronous: a kernel
 * that must wait leaves a waiter on the queue and returns its thread. The
 * waiter is completed by the enqueue (or dequeue) that satisfies it, by
 * close (OUT_OF_RANGE for dequeues, CANCELLED for enqueues when asked), or
 * by the step's cancellation (CANCELLED, or DEADLINE_EXCEEDED on timeout).
 * Waiters are reference-counted: the queue's list and a registered
 * cancellation callback each hold one, so whichever side loses the race
 * never touches freed memory. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/status_internal.h"
#include "../../framework/cancellation.h"
#include "../kernel.h"

typedef struct element {
  tfd_tensor *t[TFD_MAX_OP_OUTPUTS];
} element;

typedef struct waiter waiter;

typedef struct queue {
  pthread_mutex_t mu;
  char name[160];
  int ncomp;
  tfd_dtype types[TFD_MAX_OP_OUTPUTS];
  int64_t capacity; /* < 0: unbounded */
  bool closed;
  element *items; /* ring */
  size_t head, count, cap;
  waiter *dequeuers, *enqueuers; /* FIFO lists of blocked kernels */
} queue;

struct waiter {
  atomic_int refs;
  waiter *next;
  queue *q;
  tfd_resource *res; /* keeps the queue alive */
  bool is_enqueue;
  element elem; /* the tuple to enqueue / the tuple dequeued */
  tfd_kernel *k;
  tfd_kernel_context *c;
  tfd_done_fn done;
  void *done_arg;
  tfd_cancellation *cancel;
  int64_t token;
};

static void element_clear(element *e) {
  for (int i = 0; i < TFD_MAX_OP_OUTPUTS; i++) {
    tfd_tensor_unref(e->t[i]);
    e->t[i] = NULL;
  }
}

static void queue_destroy(void *p) {
  queue *q = p;
  for (size_t i = 0; i < q->count; i++) element_clear(&q->items[(q->head + i) % q->cap]);
  free(q->items);
  pthread_mutex_destroy(&q->mu);
  free(q);
}

static void waiter_unref(waiter *w) {
  if (atomic_fetch_sub(&w->refs, 1) != 1) return;
  element_clear(&w->elem);
  tfd_resource_unref(w->res);
  tfd_cancellation_unref(w->cancel);
  free(w);
}

/* ---- the ring (callers hold q->mu) ---- */
static bool push(queue *q, element *e) {
  if (q->count == q->cap) {
    size_t cap = q->cap ? q->cap * 2 : 16;
    element *items = malloc(cap * sizeof *items);
    if (!items) return false;
    for (size_t i = 0; i < q->count; i++) items[i] = q->items[(q->head + i) % q->cap];
    free(q->items);
    q->items = items;
    q->head = 0;
    q->cap = cap;
  }
  q->items[(q->head + q->count) % q->cap] = *e;
  q->count++;
  memset(e, 0, sizeof *e); /* the queue owns the tensors now */
  return true;
}

static void pop(queue *q, element *out) {
  *out = q->items[q->head];
  q->head = (q->head + 1) % q->cap;
  q->count--;
}

static bool has_room(const queue *q) { return q->capacity < 0 || (int64_t)q->count < q->capacity; }

static void list_append(waiter **head, waiter *w) {
  while (*head) head = &(*head)->next;
  w->next = NULL;
  *head = w;
}

static bool list_remove(waiter **head, waiter *w) {
  for (; *head; head = &(*head)->next)
    if (*head == w) {
      *head = w->next;
      return true;
    }
  return false;
}

/* Completes a waiter taken off the queue's lists (outside q->mu). */
static void finish(waiter *w, tfd_code code, const char *msg) {
  /* Removed before it ran: the registration's release drops its reference; else the callback's does. */
  if (w->cancel && w->token >= 0) tfd_cancellation_deregister(w->cancel, w->token);
  if (code != TFD_OK) {
    tfd_kernel_fail(w->c, w->k, code, "%s", msg);
  } else if (!w->is_enqueue) {
    for (int i = 0; i < w->q->ncomp; i++) {
      w->c->outputs[i] = w->elem.t[i];
      w->elem.t[i] = NULL;
    }
  }
  w->done(w->done_arg);
  waiter_unref(w);
}

/* After a change, satisfy what can be: dequeuers from items, enqueuers into room.
 * Takes q->mu; completes the satisfied waiters after releasing it. */
static void settle(queue *q) {
  waiter *ready = NULL, **tail = &ready;
  pthread_mutex_lock(&q->mu);
  for (;;) {
    bool progress = false;
    if (q->enqueuers && has_room(q) && !q->closed) {
      waiter *w = q->enqueuers;
      if (!push(q, &w->elem)) break;
      q->enqueuers = w->next;
      *tail = w;
      tail = &w->next;
      w->next = NULL;
      progress = true;
    }
    if (q->dequeuers && q->count > 0) {
      waiter *w = q->dequeuers;
      q->dequeuers = w->next;
      pop(q, &w->elem);
      *tail = w;
      tail = &w->next;
      w->next = NULL;
      progress = true;
    }
    if (!progress) break;
  }
  /* A closed queue that cannot give a dequeuer its tuple never will. */
  waiter *starved = NULL;
  if (q->closed && q->count == 0) {
    starved = q->dequeuers;
    q->dequeuers = NULL;
  }
  pthread_mutex_unlock(&q->mu);
  while (ready) {
    waiter *w = ready;
    ready = w->next;
    finish(w, TFD_OK, NULL);
  }
  char msg[256];
  snprintf(msg, sizeof msg, "FIFOQueue '%s' is closed and has insufficient elements (requested 1, current size 0)",
           q->name);
  while (starved) {
    waiter *w = starved;
    starved = w->next;
    finish(w, TFD_OUT_OF_RANGE, msg);
  }
}

/* The step was cancelled: if the waiter is still waiting, fail it with the reason. */
static void on_cancel(void *arg, tfd_code code, const char *message) {
  waiter *w = arg;
  queue *q = w->q;
  pthread_mutex_lock(&q->mu);
  bool mine = list_remove(w->is_enqueue ? &q->enqueuers : &q->dequeuers, w);
  pthread_mutex_unlock(&q->mu);
  if (mine) {
    w->token = -1; /* we are the callback: nothing to deregister */
    finish(w, code, message);
  }
}

static void release_waiter(void *arg) { waiter_unref(arg); } /* the registration's reference */

/* ---- kernels ---- */
static queue *lookup_queue(tfd_kernel *k, tfd_kernel_context *c, tfd_resource **res) {
  *res = NULL;
  if (!tfd_kernel_check_scalar(c, k, c->inputs[0], "the queue handle")) return NULL;
  const tfd_resource_handle *h = tfd_tensor_const_data(c->inputs[0]);
  tfd_status tmp = TFD_STATUS_INIT;
  *res = tfd_resource_mgr_lookup(c->rm, h->container, "Queue", h->name, &tmp);
  if (!*res) tfd_kernel_fail(c, k, TFD_NOT_FOUND, "%s", tfd_status_message(&tmp));
  tfd_status_clear(&tmp);
  return *res ? tfd_resource_data(*res) : NULL;
}

static void k_fifo_queue(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_resource_handle h = k->handle;
  if (!h.container[0]) snprintf(h.container, sizeof h.container, "%s", tfd_resource_mgr_default_container(c->rm));
  tfd_status tmp = TFD_STATUS_INIT;
  tfd_resource *r = tfd_resource_mgr_lookup(c->rm, h.container, "Queue", h.name, &tmp);
  tfd_status_clear(&tmp);
  if (!r) {
    queue *q = calloc(1, sizeof *q);
    r = NULL;
    if (q) tfd_resource_new("Queue", q, queue_destroy, &r, &tmp);
    if (!r) {
      free(q);
      tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory creating queue '%s'", h.name);
      return;
    }
    pthread_mutex_init(&q->mu, NULL);
    snprintf(q->name, sizeof q->name, "%s", h.name);
    q->ncomp = k->ntypes;
    memcpy(q->types, k->types, sizeof q->types);
    q->capacity = k->index;
    if (tfd_resource_mgr_create(c->rm, h.container, h.name, r, &tmp) != TFD_OK) {
      tfd_resource_unref(r); /* created meanwhile by another step: use that one */
      tfd_status_clear(&tmp);
      r = tfd_resource_mgr_lookup(c->rm, h.container, "Queue", h.name, &tmp);
      tfd_status_clear(&tmp);
      if (!r) {
        tfd_kernel_fail(c, k, TFD_INTERNAL, "queue '%s' vanished", h.name);
        return;
      }
    }
  }
  tfd_resource_unref(r);
  tfd_tensor *out = tfd_kernel_alloc(c, k, TFD_RESOURCE, NULL, 0);
  if (!out) return;
  *(tfd_resource_handle *)tfd_tensor_data(out) = h;
  c->outputs[0] = out;
}

/* Leaves a waiter on the queue (called with q->mu held; releases it), or
 * fails at once when the step is already cancelled. The cancellation
 * callback is registered before the waiter is visible, so every waiter that
 * can be cancelled holds the registration's reference from the start. */
static void wait_on(queue *q, tfd_resource *r, tfd_kernel *k, tfd_kernel_context *c, tfd_done_fn done, void *arg,
                    bool is_enqueue, element *e) {
  waiter *w = calloc(1, sizeof *w);
  if (!w) {
    pthread_mutex_unlock(&q->mu);
    if (e) element_clear(e);
    tfd_resource_unref(r);
    tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory waiting on queue '%s'", q->name);
    done(arg);
    return;
  }
  w->q = q;
  w->res = r;
  w->is_enqueue = is_enqueue;
  w->k = k;
  w->c = c;
  w->done = done;
  w->done_arg = arg;
  w->token = -1;
  if (e) {
    w->elem = *e;
    memset(e, 0, sizeof *e);
  }
  atomic_init(&w->refs, 1); /* the list's */
  if (c->cancellation) {
    w->cancel = tfd_cancellation_ref(c->cancellation);
    atomic_fetch_add(&w->refs, 1); /* the registration's */
    w->token = tfd_cancellation_register(w->cancel, on_cancel, release_waiter, w);
    if (w->token < 0) {
      pthread_mutex_unlock(&q->mu);
      const char *msg = "out of memory waiting on the queue";
      tfd_code why = w->token == TFD_CANCEL_NO_MEMORY ? TFD_RESOURCE_EXHAUSTED : tfd_cancellation_reason(w->cancel, &msg);
      atomic_fetch_sub(&w->refs, 1); /* nothing registered */
      finish(w, why, msg);
      return;
    }
  }
  list_append(is_enqueue ? &q->enqueuers : &q->dequeuers, w);
  pthread_mutex_unlock(&q->mu);
}

static void k_enqueue(tfd_kernel *k, tfd_kernel_context *c, tfd_done_fn done, void *arg) {
  tfd_resource *r;
  queue *q = lookup_queue(k, c, &r);
  if (!q) {
    done(arg);
    return;
  }
  element e = {0};
  if (c->num_inputs - 1 != q->ncomp) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "queue '%s' holds %d components, %d given", q->name, q->ncomp,
                    c->num_inputs - 1);
  } else {
    for (int i = 0; i < q->ncomp; i++) {
      if (tfd_tensor_dtype(c->inputs[i + 1]) != q->types[i]) {
        tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "component %d is %s but queue '%s' holds %s", i,
                        tfd_dtype_name(tfd_tensor_dtype(c->inputs[i + 1])), q->name, tfd_dtype_name(q->types[i]));
        break;
      }
    }
  }
  if (tfd_status_code(c->status) != TFD_OK) {
    tfd_resource_unref(r);
    done(arg);
    return;
  }
  for (int i = 0; i < q->ncomp; i++) e.t[i] = tfd_tensor_ref(c->inputs[i + 1]);
  pthread_mutex_lock(&q->mu);
  if (q->closed) {
    pthread_mutex_unlock(&q->mu);
    element_clear(&e);
    tfd_kernel_fail(c, k, TFD_CANCELLED, "FIFOQueue '%s' is closed.", q->name);
  } else if (has_room(q) && !q->enqueuers) {
    bool ok = push(q, &e);
    pthread_mutex_unlock(&q->mu);
    if (!ok) {
      element_clear(&e);
      tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory in queue '%s'", q->name);
    }
    settle(q);
  } else {
    wait_on(q, r, k, c, done, arg, true, &e); /* full: wait for room */
    return;
  }
  tfd_resource_unref(r);
  done(arg);
}

/* "float32, int32" into buf. */
static const char *types_string(char *buf, size_t cap, const tfd_dtype *types, int n) {
  buf[0] = 0;
  for (int i = 0; i < n; i++)
    snprintf(buf + strlen(buf), cap - strlen(buf), "%s%s", i ? ", " : "", tfd_dtype_name(types[i]));
  return buf;
}

static void k_dequeue(tfd_kernel *k, tfd_kernel_context *c, tfd_done_fn done, void *arg) {
  tfd_resource *r;
  queue *q = lookup_queue(k, c, &r);
  if (!q) {
    done(arg);
    return;
  }
  bool same = q->ncomp == c->num_outputs && q->ncomp == k->ntypes;
  for (int i = 0; same && i < q->ncomp; i++) same = q->types[i] == k->types[i];
  if (!same) {
    char want[128], have[128];
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "queue '%s' holds (%s) but component_types is (%s)", q->name,
                    types_string(have, sizeof have, q->types, q->ncomp),
                    types_string(want, sizeof want, k->types, k->ntypes));
    tfd_resource_unref(r);
    done(arg);
    return;
  }
  pthread_mutex_lock(&q->mu);
  if (q->count > 0 && !q->dequeuers) {
    element e;
    pop(q, &e);
    pthread_mutex_unlock(&q->mu);
    for (int i = 0; i < q->ncomp; i++) c->outputs[i] = e.t[i];
    settle(q); /* room may let a blocked enqueue in */
  } else if (q->closed) {
    pthread_mutex_unlock(&q->mu);
    tfd_kernel_fail(c, k, TFD_OUT_OF_RANGE,
                    "FIFOQueue '%s' is closed and has insufficient elements (requested 1, current size 0)", q->name);
  } else {
    wait_on(q, r, k, c, done, arg, false, NULL);
    return;
  }
  tfd_resource_unref(r);
  done(arg);
}

static void k_size(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_resource *r;
  queue *q = lookup_queue(k, c, &r);
  if (!q) return;
  tfd_tensor *out = tfd_kernel_alloc(c, k, TFD_INT32, NULL, 0);
  if (out) {
    pthread_mutex_lock(&q->mu);
    *(int32_t *)tfd_tensor_data(out) = (int32_t)q->count;
    pthread_mutex_unlock(&q->mu);
    c->outputs[0] = out;
  }
  tfd_resource_unref(r);
}

static void k_close(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_resource *r;
  queue *q = lookup_queue(k, c, &r);
  if (!q) return;
  pthread_mutex_lock(&q->mu);
  q->closed = true;
  waiter *cancelled = k->ta ? q->enqueuers : NULL; /* cancel_pending_enqueues */
  if (k->ta) q->enqueuers = NULL;
  pthread_mutex_unlock(&q->mu);
  char msg[200];
  snprintf(msg, sizeof msg, "FIFOQueue '%s' is closed.", q->name);
  while (cancelled) {
    waiter *w = cancelled;
    cancelled = w->next;
    finish(w, TFD_CANCELLED, msg);
  }
  settle(q); /* waiting dequeuers on an empty closed queue get OUT_OF_RANGE */
  tfd_resource_unref(r);
}

static void k_sync_unused(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_kernel_fail(c, k, TFD_INTERNAL, "%s must run asynchronously", k->op->name);
}

tfd_code tfd_setup_queue(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  const char *op = init->op->name;
  const tfd_node_def *n = init->node;
  const tfd_attr_value *types = tfd_node_def_attr(n, "component_types");
  if (types && types->type == TFD_ATTR_LIST_TYPE && types->list_len <= TFD_MAX_QUEUE_COMPONENTS) {
    k->ntypes = (int)types->list_len;
    for (int i = 0; i < k->ntypes; i++) k->types[i] = types->list_type[i];
  }
  if (strcmp(op, "FIFOQueueV2") == 0) {
    k->index = tfd_attr_int(n, "capacity", -1);
    const char *container = tfd_attr_string(n, "container", ""), *name = tfd_attr_string(n, "shared_name", "");
    if (!*name) name = tfd_node_def_name(n);
    if (strlen(container) >= sizeof k->handle.container || strlen(name) >= sizeof k->handle.name)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s': container or queue name is too long",
                             tfd_node_def_name(n));
    strcpy(k->handle.container, container);
    strcpy(k->handle.name, name);
    k->compute = k_fifo_queue;
  } else if (strcmp(op, "QueueEnqueueV2") == 0) {
    k->compute = k_sync_unused;
    k->compute_async = k_enqueue;
  } else if (strcmp(op, "QueueDequeueV2") == 0) {
    k->compute = k_sync_unused;
    k->compute_async = k_dequeue;
  } else if (strcmp(op, "QueueSizeV2") == 0) {
    k->compute = k_size;
  } else {
    k->ta = tfd_attr_bool(n, "cancel_pending_enqueues", false);
    k->compute = k_close;
  }
  return TFD_OK;
}
