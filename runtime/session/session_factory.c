/* The session factory (TensorFlow's DirectSessionFactory): tfd_session_new and tfd_session_free (a
 * DirectSession made by direct_session.c, recorded here), the record of the sessions it made, one per
 * runtime, and its Reset, which clears containers in every one of them and closes them.
 *
 * A runtime keeps its factory in its opaque slot (runtime/device/runtime.c); sessions made without a
 * runtime are recorded in the process's default factory, as TensorFlow registers one
 * DirectSessionFactory per process. Reset works from a list of session ids taken under the lock and
 * pins each session while it resets and closes it, so a session its owner frees meanwhile is waited
 * for, never touched after it is gone. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../device/runtime_internal.h"
#include "session_args.h"
#include "session_internal.h"

struct session_factory {
  pthread_mutex_t mu;
  pthread_cond_t cv; /* a pin dropped */
  tfd_session **sessions;
  int n, cap;
};

/* The factory of sessions made without a runtime: process-wide, as TensorFlow's. */
static session_factory default_factory = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, 0, 0};

static void *factory_new(void) {
  session_factory *f = calloc(1, sizeof *f);
  if (!f) return NULL;
  pthread_mutex_init(&f->mu, NULL);
  pthread_cond_init(&f->cv, NULL);
  return f;
}

static void factory_free(void *arg) {
  session_factory *f = arg;
  free(f->sessions); /* empty: every session holds the runtime, so none is left when it goes */
  pthread_mutex_destroy(&f->mu);
  pthread_cond_destroy(&f->cv);
  free(f);
}

static session_factory *factory_of(tfd_runtime *rt) {
  return rt ? tfd_runtime_session_factory(rt, factory_new, factory_free) : &default_factory;
}

/* Records s in its runtime's factory (rt NULL: the process's default one). */
static tfd_code factory_add(tfd_session *s, tfd_runtime *rt, tfd_status *st) {
  session_factory *f = factory_of(rt);
  if (!f) return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory creating a session");
  pthread_mutex_lock(&f->mu);
  if (f->n == f->cap) {
    int cap = f->cap ? f->cap * 2 : 8;
    tfd_session **grown = realloc(f->sessions, (size_t)cap * sizeof *grown);
    if (!grown) {
      pthread_mutex_unlock(&f->mu);
      return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory creating a session");
    }
    f->sessions = grown;
    f->cap = cap;
  }
  f->sessions[f->n++] = s;
  s->factory = f;
  pthread_mutex_unlock(&f->mu);
  return TFD_OK;
}

/* Takes s out of its factory, waiting while a factory Reset uses it. */
static void factory_remove(tfd_session *s) {
  session_factory *f = s->factory;
  if (!f) return;
  pthread_mutex_lock(&f->mu);
  while (s->factory_pins > 0) pthread_cond_wait(&f->cv, &f->mu); /* a Reset is closing it */
  for (int i = 0; i < f->n; i++)
    if (f->sessions[i] == s) {
      f->sessions[i] = f->sessions[--f->n];
      break;
    }
  pthread_mutex_unlock(&f->mu);
  s->factory = NULL;
}

/* DirectSessionFactory::NewSession: a DirectSession, recorded so that a factory Reset reaches it. */
static tfd_session *new_session(const tfd_session_options *options, const tfd_factory_registry *registry, void *host_ctx,
                             tfd_status *st) {
  tfd_status_reset(st);
  tfd_session *s = tfd_ds_new(options, registry, host_ctx, st);
  if (s && factory_add(s, tfd_factory_registry_runtime(s->registry), st) != TFD_OK) {
    tfd_session_close(s, NULL);
    tfd_ds_destroy(s);
    return NULL;
  }
  return s;
}

tfd_code tfd_session_new(const tfd_session_options *options, const tfd_factory_registry *registry, void *host_ctx,
                         tfd_session **out, tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_session_new", "out", out)) return TFD_INVALID_ARGUMENT;
  tfd_status local = TFD_STATUS_INIT;
  *out = new_session(options, registry, host_ctx, &local);
  return tfd_status_move(status, &local);
}

void tfd_session_free(tfd_session *s) {
  if (!s) return;
  tfd_session_close(s, NULL);
  factory_remove(s); /* after close: a factory Reset closing it too is waited for */
  tfd_ds_destroy(s);
}

static tfd_session *runtime_session(tfd_runtime *rt, const tfd_session_options *options, void *host_ctx,
                                     tfd_status *st) {
  tfd_status_reset(st);
  if (!rt) {
    tfd_status_setf(st, TFD_INVALID_ARGUMENT, "tfd_runtime_session_new needs a runtime");
    return NULL;
  }
  return new_session(options, tfd_runtime_registry(rt), host_ctx, st);
}

tfd_code tfd_runtime_session_new(tfd_runtime *rt, const tfd_session_options *options, void *host_ctx, tfd_session **out,
                                 tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_runtime_session_new", "out", out)) return TFD_INVALID_ARGUMENT;
  tfd_status local = TFD_STATUS_INIT;
  *out = runtime_session(rt, options, host_ctx, &local);
  return tfd_status_move(status, &local);
}

static tfd_session *named_session(const char *factory, const tfd_session_options *options,
                                   const tfd_factory_registry *registry, void *host_ctx, tfd_status *st) {
  tfd_status_reset(st);
  if (factory && *factory && strcmp(factory, "DIRECT_SESSION") != 0) {
    tfd_status_setf(st, TFD_NOT_FOUND, "no session factory named '%s' (registered: DIRECT_SESSION)", factory);
    return NULL;
  }
  return new_session(options, registry, host_ctx, st);
}

tfd_code tfd_session_new_named(const char *factory, const tfd_session_options *options, const tfd_factory_registry *registry,
                               void *host_ctx, tfd_session **out, tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_session_new_named", "out", out)) return TFD_INVALID_ARGUMENT;
  tfd_status local = TFD_STATUS_INIT;
  *out = named_session(factory, options, registry, host_ctx, &local);
  return tfd_status_move(status, &local);
}

const char *const *tfd_session_factory_names(void) {
  static const char *const names[] = {"DIRECT_SESSION", NULL};
  return names;
}

/* The session with this id, pinned (its owner's free waits for tfd_ds_factory_unpin), or NULL when it has
 * gone. */
static tfd_session *pin(session_factory *f, int64_t id) {
  pthread_mutex_lock(&f->mu);
  tfd_session *s = NULL;
  for (int i = 0; i < f->n && !s; i++)
    if (f->sessions[i]->id == id) s = f->sessions[i];
  if (s) s->factory_pins++;
  pthread_mutex_unlock(&f->mu);
  return s;
}

static void unpin(session_factory *f, tfd_session *s) {
  pthread_mutex_lock(&f->mu);
  if (--s->factory_pins == 0) pthread_cond_broadcast(&f->cv);
  pthread_mutex_unlock(&f->mu);
}

/* DirectSessionFactory::Reset: every session's containers cleared, then every session closed. */
static tfd_code factory_reset(session_factory *f, const char *const *containers, int n, tfd_status *st) {
  if (n < 0 || (n > 0 && !containers))
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "session factory reset: %d containers given without a list", n);
  for (int i = 0; i < n; i++)
    if (!containers[i]) return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "session factory reset: container %d is NULL", i);
  pthread_mutex_lock(&f->mu);
  int count = f->n;
  int64_t *ids = malloc(((size_t)count + 1) * sizeof *ids);
  for (int i = 0; ids && i < count; i++) ids[i] = f->sessions[i]->id;
  pthread_mutex_unlock(&f->mu);
  if (!ids) return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory resetting sessions");
  tfd_code first = TFD_OK;
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < count; i++) {
      tfd_session *s = pin(f, ids[i]);
      if (!s) continue; /* freed meanwhile */
      tfd_status one = TFD_STATUS_INIT;
      tfd_code code = pass == 0 ? tfd_session_reset(s, containers, n, &one) : tfd_session_close(s, &one);
      /* A session closed before (by its owner, or an earlier Reset) has nothing left to reset. */
      if (code != TFD_OK && code != TFD_CANCELLED && first == TFD_OK) first = tfd_status_move(st, &one);
      tfd_status_clear(&one);
      unpin(f, s);
    }
  free(ids);
  return first;
}

static bool is_direct_session(const tfd_session_options *options, tfd_status *st) {
  (void)options; /* TensorFlow's options pick a factory by target; tfdev's one factory takes every target */
  (void)st;
  return true;
}

tfd_code tfd_session_factory_reset(const tfd_session_options *options, const tfd_factory_registry *registry,
                                   const char *const *containers, int n, tfd_status *st) {
  tfd_status_reset(st);
  if (tfd_arg_items(st, "tfd_session_factory_reset", "containers", TFD_ARG_ITEMS(containers), "n", n))
    return TFD_INVALID_ARGUMENT;
  if (!is_direct_session(options, st)) return tfd_status_code(st);
  if (!registry) registry = tfd_factory_registry_default();
  session_factory *f = factory_of(registry ? tfd_factory_registry_runtime(registry) : NULL);
  return f ? factory_reset(f, containers, n, st) : tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
}

tfd_code tfd_runtime_session_factory_reset(tfd_runtime *rt, const tfd_session_options *options,
                                           const char *const *containers, int n, tfd_status *st) {
  tfd_status_reset(st);
  static const char fn[] = "tfd_runtime_session_factory_reset";
  if (tfd_arg_required(st, fn, "rt", rt) || tfd_arg_items(st, fn, "containers", TFD_ARG_ITEMS(containers), "n", n))
    return TFD_INVALID_ARGUMENT;
  if (!is_direct_session(options, st)) return tfd_status_code(st);
  session_factory *f = factory_of(rt);
  return f ? factory_reset(f, containers, n, st) : tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
}
