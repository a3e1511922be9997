/* LocalDevice: gives a device its intra-op pool, the process-wide one or its own.
 *
 * The process-wide pool is the one piece of global state DESIGN.md allows
 * here (TensorFlow's global EigenThreadPoolInfo). Unlike TensorFlow's it is
 * reference-counted: created with the first device that asks and joined
 * when the last one goes, so no threads outlive the devices. */
#include <pthread.h>
#include <stdlib.h>

#include "../core/status_internal.h"
#include "device_internal.h"
#include "runtime_internal.h"

static pthread_mutex_t global_pool_mu = PTHREAD_MUTEX_INITIALIZER;
static tfd_threadpool *global_pool;
static int global_pool_users;

static void *free_pool_thread(void *pool) {
  tfd_threadpool_free(pool);
  return NULL;
}

/* A pool cannot join itself: when its own worker lets it go, a detached
 * helper thread does the joining. */
static void free_pool(tfd_threadpool *pool) {
  pthread_t t;
  if (tfd_threadpool_current_thread_id(pool) >= 0 && pthread_create(&t, NULL, free_pool_thread, pool) == 0) {
    pthread_detach(t);
    return;
  }
  tfd_threadpool_free(pool);
}

tfd_code tfd_local_device_init_pool(tfd_local_device *d, tfd_runtime *rt, int num_threads, bool own_pool,
                                    tfd_status *status) {
  tfd_threadpool *pool;
  if (tfd_runtime_pool(rt)) { /* the host's job system: no thread of ours */
    pool = tfd_runtime_pool(rt);
    d->runtime = tfd_runtime_ref(rt);
  } else if (own_pool) {
    tfd_code made = tfd_threadpool_new("tfdev_intra", num_threads, &d->owned_pool, status);
    if (made != TFD_OK) return made;
    pool = d->owned_pool;
  } else {
    pthread_mutex_lock(&global_pool_mu);
    if (!global_pool) tfd_threadpool_new("tfdev_intra", num_threads, &global_pool, status);
    pool = global_pool;
    if (pool) global_pool_users++;
    pthread_mutex_unlock(&global_pool_mu);
    if (!pool) return tfd_status_code(status);
  }
  d->base.cpu_worker_threads.workers = pool;
  d->base.cpu_worker_threads.num_threads = tfd_threadpool_num_threads(pool);
  return TFD_OK;
}

void tfd_local_device_fini_pool(tfd_local_device *d) {
  tfd_threadpool *pool = d->base.cpu_worker_threads.workers;
  if (!pool) return;
  d->base.cpu_worker_threads.workers = NULL;
  if (d->runtime) {
    tfd_runtime_unref(d->runtime);
    d->runtime = NULL;
    return;
  }
  if (d->owned_pool) {
    d->owned_pool = NULL;
    free_pool(pool);
    return;
  }
  tfd_threadpool *dead = NULL;
  pthread_mutex_lock(&global_pool_mu);
  if (--global_pool_users == 0) {
    dead = global_pool;
    global_pool = NULL;
  }
  pthread_mutex_unlock(&global_pool_mu);
  if (dead) free_pool(dead);
}
