/* Runtimes (include/tfdev/runtime.h): a factory registry plus a host's hooks, shared by reference
 * count with the sessions and devices made from it.
 *
 * The runtime's own registry points back at it without a reference (the runtime owns it); the
 * copies sessions take hold one, and CPU devices made under it hold one for its pool. Factories
 * learn the runtime from the options their registry hands them (tfd_session_options_runtime). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../core/allocator_internal.h"
#include "../core/log.h"
#include "../core/refcount.h"
#include "../core/status_internal.h"
#include "../core/threadpool_internal.h"
#include "runtime_internal.h"

typedef struct named_pool {
  char *name;
  int num_threads; /* as asked for (0: the default), to refuse a different ask */
  tfd_threadpool *pool;
} named_pool;

struct tfd_runtime {
  tfd_refcount refs;
  tfd_factory_registry *registry;
  bool has_allocator, has_logger;
  tfd_host_allocator allocator;
  tfd_host_logger logger;
  tfd_threadpool *pool; /* over the host's scheduler; NULL without one */
  /* Inter-op pools sessions share by global name (session_inter_op_thread_pool), kept until the
   * runtime goes, as TensorFlow keeps its global pools for the process. */
  pthread_mutex_t named_mu;
  named_pool *named;
  int num_named;
  /* The session layer's record of the sessions made under this runtime (its DirectSessionFactory),
   * opaque here: made on first use, freed with the runtime. Guarded by named_mu. */
  void *session_factory;
  void (*session_factory_free)(void *);
};

tfd_runtime *tfd_runtime_make(const tfd_runtime_config *config, tfd_factory_registry *registry, tfd_status *st) {
  tfd_runtime_config none = {0};
  if (!config) config = &none;
  if (config->allocator && (!config->allocator->allocate || !config->allocator->deallocate)) {
    tfd_status_setf(st, TFD_INVALID_ARGUMENT, "a host allocator needs both allocate and deallocate");
    tfd_factory_registry_free(registry);
    return NULL;
  }
  if (config->logger && (!config->logger->log || config->logger->level < TFD_LOG_DEBUG ||
                         config->logger->level > TFD_LOG_ERROR)) {
    tfd_status_setf(st, TFD_INVALID_ARGUMENT, "a host logger needs a log function and a level from debug to error");
    tfd_factory_registry_free(registry);
    return NULL;
  }
  tfd_runtime *rt = calloc(1, sizeof *rt);
  if (!rt || !registry) {
    free(rt);
    tfd_factory_registry_free(registry);
    tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory creating a runtime");
    return NULL;
  }
  rt->registry = registry;
  tfd_refcount_init(&rt->refs);
  pthread_mutex_init(&rt->named_mu, NULL);
  tfd_factory_registry_set_runtime(rt->registry, rt, false, tfd_runtime_ref, tfd_runtime_unref);
  if ((rt->has_allocator = config->allocator != NULL)) rt->allocator = *config->allocator;
  if ((rt->has_logger = config->logger != NULL)) rt->logger = *config->logger;
  if (config->scheduler &&
      !(rt->pool = tfd_threadpool_new_hosted("tfdev_host", config->scheduler, tfd_runtime_logger(rt), st))) {
    tfd_factory_registry_free(rt->registry);
    pthread_mutex_destroy(&rt->named_mu);
    free(rt);
    return NULL;
  }
  return rt;
}

tfd_runtime *tfd_runtime_ref(tfd_runtime *rt) {
  if (rt) tfd_refcount_inc(&rt->refs);
  return rt;
}

void tfd_runtime_unref(tfd_runtime *rt) {
  if (!rt || !tfd_refcount_dec(&rt->refs)) return;
  tfd_threadpool_free(rt->pool);
  for (int i = 0; i < rt->num_named; i++) {
    tfd_threadpool_free(rt->named[i].pool);
    free(rt->named[i].name);
  }
  free(rt->named);
  if (rt->session_factory) rt->session_factory_free(rt->session_factory);
  pthread_mutex_destroy(&rt->named_mu);
  tfd_factory_registry_free(rt->registry);
  free(rt);
}


tfd_factory_registry *tfd_runtime_registry(tfd_runtime *rt) { return rt->registry; }
tfd_threadpool *tfd_runtime_pool(const tfd_runtime *rt) { return rt ? rt->pool : NULL; }

void *tfd_runtime_session_factory(tfd_runtime *rt, void *(*make)(void), void (*destroy)(void *)) {
  pthread_mutex_lock(&rt->named_mu);
  if (!rt->session_factory && (rt->session_factory = make())) rt->session_factory_free = destroy;
  void *f = rt->session_factory;
  pthread_mutex_unlock(&rt->named_mu);
  return f;
}

tfd_threadpool *tfd_runtime_named_pool(tfd_runtime *rt, const char *name, int num_threads, int threads, tfd_status *st) {
  pthread_mutex_lock(&rt->named_mu);
  tfd_threadpool *pool = NULL;
  int i = 0;
  while (i < rt->num_named && strcmp(rt->named[i].name, name) != 0) i++;
  if (i < rt->num_named) {
    if (rt->named[i].num_threads == num_threads) pool = rt->named[i].pool;
    else
      tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                      "Pool %s configured previously with num_threads=%d; cannot re-configure with num_threads=%d", name,
                      rt->named[i].num_threads, num_threads);
  } else {
    named_pool *grown = realloc(rt->named, ((size_t)rt->num_named + 1) * sizeof *grown);
    if (grown) rt->named = grown;
    char *copy = grown ? strdup(name) : NULL;
    pool = NULL;
    if (copy) tfd_threadpool_new("tfdev_inter", threads, &pool, st);
    if (pool) rt->named[rt->num_named++] = (named_pool){copy, num_threads, pool};
    else free(copy);
    if (!copy) tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory making inter-op pool %s", name);
  }
  pthread_mutex_unlock(&rt->named_mu);
  return pool;
}
const tfd_host_allocator *tfd_runtime_allocator(const tfd_runtime *rt) {
  return rt && rt->has_allocator ? &rt->allocator : NULL;
}
const tfd_host_logger *tfd_runtime_logger(const tfd_runtime *rt) { return rt && rt->has_logger ? &rt->logger : NULL; }

tfd_allocator *tfd_runtime_cpu_allocator_new(tfd_runtime *rt, const char *name, int64_t bytes_limit,
                                             int64_t cache_bytes) {
  const tfd_host_allocator *host = tfd_runtime_allocator(rt);
  return host ? tfd_cpu_allocator_new_hosted(name, bytes_limit, host)
              : tfd_cpu_allocator_new_cached(name, bytes_limit, cache_bytes);
}

void tfd_runtime_log(tfd_runtime *rt, tfd_log_level level, const char *message) {
  const tfd_host_logger *prev = tfd_log_use(tfd_runtime_logger(rt));
  tfd_log(level, "%s", message);
  tfd_log_use(prev);
}
