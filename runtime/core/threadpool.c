/* The intra-op thread pool: a locked task queue, workers, and a work-sharing parallel-for; or, for a
 * runtime with a host scheduler, the same interface over the host's job system (no threads of ours). */
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api_args.h"
#include "log.h"
#include "status_internal.h"
#include "threadpool_internal.h"
#include "tfdev/threadpool.h"

typedef struct task {
  tfd_task_fn fn;
  void *arg;
} task;

struct tfd_threadpool {
  char *name;
  int num_threads;
  pthread_t *threads;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  task *queue; /* ring buffer of cap slots */
  size_t cap, head, count;
  bool stopping;
  /* Hosted pools: tasks go to the host's scheduler; `count` is then the tasks handed over and not
   * yet finished, which freeing waits for. */
  bool hosted;
  tfd_host_scheduler host;
  const tfd_host_logger *logger; /* the runtime's, for lines logged by hosted tasks */
  bool free_when_idle;           /* freed from inside one of its tasks: the last task frees it */
};

typedef struct worker_start {
  tfd_threadpool *pool;
  int id;
} worker_start;

/* Which pool, and which worker of it, the current thread is. */
static _Thread_local const tfd_threadpool *current_pool;
static _Thread_local int current_id = -1;

int tfd_env_num_cores(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}

static void *worker_main(void *p) {
  worker_start start = *(worker_start *)p;
  free(p);
  tfd_threadpool *pool = start.pool;
  current_pool = pool;
  current_id = start.id;
  pthread_mutex_lock(&pool->mu);
  for (;;) {
    while (pool->count == 0 && !pool->stopping) pthread_cond_wait(&pool->cv, &pool->mu);
    if (pool->count == 0) break; /* stopping, and the queue is drained */
    task t = pool->queue[pool->head];
    pool->head = (pool->head + 1) % pool->cap;
    pool->count--;
    pthread_mutex_unlock(&pool->mu);
    t.fn(t.arg);
    pthread_mutex_lock(&pool->mu);
  }
  pthread_mutex_unlock(&pool->mu);
  return NULL;
}

static tfd_threadpool *make_threadpool(const char *name, int num_threads, tfd_status *status) {
  tfd_status_reset(status);
  if (num_threads <= 0) num_threads = tfd_env_num_cores();
  if (num_threads > TFD_MAX_THREADS) {
    tfd_status_setf(status, TFD_INVALID_ARGUMENT, "thread pool '%s' of %d threads: at most %d", name ? name : "tfdev",
                    num_threads, TFD_MAX_THREADS);
    return NULL;
  }
  tfd_threadpool *pool = calloc(1, sizeof *pool);
  if (!pool) goto oom;
  pool->name = strdup(name ? name : "tfdev");
  pool->threads = calloc((size_t)num_threads, sizeof *pool->threads);
  pool->cap = 64;
  pool->queue = malloc(pool->cap * sizeof *pool->queue);
  if (!pool->name || !pool->threads || !pool->queue) goto oom;
  pthread_mutex_init(&pool->mu, NULL);
  pthread_cond_init(&pool->cv, NULL);
  for (int i = 0; i < num_threads; i++) {
    worker_start *ws = malloc(sizeof *ws);
    if (ws) *ws = (worker_start){pool, i};
    if (!ws || pthread_create(&pool->threads[i], NULL, worker_main, ws) != 0) {
      free(ws);
      pool->num_threads = i;
      tfd_threadpool_free(pool);
      tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "thread pool '%s': could not start thread %d of %d",
                      name ? name : "tfdev", i, num_threads);
      return NULL;
    }
    char short_name[16]; /* Linux thread names are at most 15 characters */
    strncpy(short_name, pool->name, sizeof short_name - 1);
    short_name[sizeof short_name - 1] = 0;
    pthread_setname_np(pool->threads[i], short_name);
  }
  pool->num_threads = num_threads;
  return pool;
oom:
  if (pool) {
    free(pool->name);
    free(pool->threads);
    free(pool->queue);
    free(pool);
  }
  tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "out of memory creating thread pool");
  return NULL;
}

tfd_code tfd_threadpool_new(const char *name, int num_threads, tfd_threadpool **out, tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_threadpool_new", "out", out)) return TFD_INVALID_ARGUMENT;
  tfd_status local = TFD_STATUS_INIT;
  *out = make_threadpool(name, num_threads, &local);
  return tfd_status_move(status, &local);
}

typedef struct hosted_task {
  tfd_threadpool *pool;
  tfd_task_fn fn;
  void *arg;
} hosted_task;

static void destroy_hosted(tfd_threadpool *pool) {
  pthread_mutex_destroy(&pool->mu);
  pthread_cond_destroy(&pool->cv);
  free(pool->name);
  free(pool);
}

static void run_hosted(void *p) {
  hosted_task t = *(hosted_task *)p;
  free(p);
  const tfd_threadpool *prev_pool = current_pool;
  int prev_id = current_id;
  const tfd_host_logger *prev_logger = tfd_log_use(t.pool->logger);
  current_pool = t.pool;
  current_id = 0; /* one of the pool's "threads": the host does not say which */
  t.fn(t.arg);
  current_pool = prev_pool;
  current_id = prev_id;
  tfd_log_use(prev_logger);
  pthread_mutex_lock(&t.pool->mu);
  bool last = --t.pool->count == 0;
  bool destroy = last && t.pool->free_when_idle;
  if (last) pthread_cond_broadcast(&t.pool->cv);
  pthread_mutex_unlock(&t.pool->mu);
  if (destroy) destroy_hosted(t.pool);
}

tfd_threadpool *tfd_threadpool_new_hosted(const char *name, const tfd_host_scheduler *host,
                                          const tfd_host_logger *logger, tfd_status *status) {
  if (!host || !host->schedule || host->num_threads < 1 || host->num_threads > TFD_MAX_THREADS) {
    tfd_status_setf(status, TFD_INVALID_ARGUMENT, "a host scheduler needs a schedule function and 1 to %d threads, got %d",
                    TFD_MAX_THREADS, host ? host->num_threads : 0);
    return NULL;
  }
  tfd_threadpool *pool = calloc(1, sizeof *pool);
  if (!pool || !(pool->name = strdup(name ? name : "tfdev"))) {
    free(pool);
    tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "out of memory creating thread pool");
    return NULL;
  }
  pthread_mutex_init(&pool->mu, NULL);
  pthread_cond_init(&pool->cv, NULL);
  pool->hosted = true;
  pool->host = *host;
  pool->logger = logger;
  pool->num_threads = host->num_threads;
  return pool;
}

void tfd_threadpool_free(tfd_threadpool *pool) {
  if (!pool) return;
  if (pool->hosted) { /* the host's threads are not ours to join: wait for our tasks on them */
    pthread_mutex_lock(&pool->mu);
    pool->stopping = true;
    if (current_pool == pool) { /* from inside a task, which cannot wait for itself: the last task frees */
      pool->free_when_idle = true;
      pthread_mutex_unlock(&pool->mu);
      return;
    }
    while (pool->count > 0) pthread_cond_wait(&pool->cv, &pool->mu);
    pthread_mutex_unlock(&pool->mu);
    destroy_hosted(pool);
    return;
  }
  pthread_mutex_lock(&pool->mu);
  pool->stopping = true;
  pthread_cond_broadcast(&pool->cv);
  pthread_mutex_unlock(&pool->mu);
  for (int i = 0; i < pool->num_threads; i++) pthread_join(pool->threads[i], NULL);
  pthread_mutex_destroy(&pool->mu);
  pthread_cond_destroy(&pool->cv);
  free(pool->queue);
  free(pool->threads);
  free(pool->name);
  free(pool);
}

int tfd_threadpool_num_threads(const tfd_threadpool *pool) { return pool ? pool->num_threads : 0; }
const char *tfd_threadpool_name(const tfd_threadpool *pool) { return pool->name; }

int tfd_threadpool_current_thread_id(const tfd_threadpool *pool) {
  return pool && current_pool == pool ? current_id : -1;
}

static tfd_code schedule_hosted(tfd_threadpool *pool, tfd_task_fn fn, void *arg, tfd_status *status) {
  hosted_task *t = malloc(sizeof *t);
  if (!t) return tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "thread pool '%s': out of memory", pool->name);
  *t = (hosted_task){pool, fn, arg};
  pthread_mutex_lock(&pool->mu);
  bool stopping = pool->stopping;
  if (!stopping) pool->count++;
  pthread_mutex_unlock(&pool->mu);
  if (!stopping && pool->host.schedule(pool->host.ctx, run_hosted, t) == 0) return TFD_OK;
  free(t);
  if (stopping) return tfd_status_setf(status, TFD_FAILED_PRECONDITION, "thread pool '%s' is shutting down", pool->name);
  pthread_mutex_lock(&pool->mu);
  if (--pool->count == 0) pthread_cond_broadcast(&pool->cv);
  pthread_mutex_unlock(&pool->mu);
  return tfd_status_setf(status, TFD_UNAVAILABLE, "thread pool '%s': the host's scheduler refused a task", pool->name);
}

tfd_code tfd_threadpool_schedule(tfd_threadpool *pool, tfd_task_fn fn, void *arg, tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_threadpool_schedule", "pool", pool) ||
      tfd_arg_required(status, "tfd_threadpool_schedule", "fn", (const void *)(uintptr_t)fn))
    return TFD_INVALID_ARGUMENT;
  if (pool->hosted) return schedule_hosted(pool, fn, arg, status);
  pthread_mutex_lock(&pool->mu);
  if (pool->stopping) {
    pthread_mutex_unlock(&pool->mu);
    return tfd_status_setf(status, TFD_FAILED_PRECONDITION, "thread pool '%s' is shutting down", pool->name);
  }
  if (pool->count == pool->cap) {
    size_t cap = pool->cap * 2;
    task *q = malloc(cap * sizeof *q);
    if (!q) {
      pthread_mutex_unlock(&pool->mu);
      return tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "thread pool '%s': queue full", pool->name);
    }
    for (size_t i = 0; i < pool->count; i++) q[i] = pool->queue[(pool->head + i) % pool->cap];
    free(pool->queue);
    pool->queue = q;
    pool->head = 0;
    pool->cap = cap;
  }
  pool->queue[(pool->head + pool->count) % pool->cap] = (task){fn, arg};
  pool->count++;
  pthread_cond_signal(&pool->cv);
  pthread_mutex_unlock(&pool->mu);
  return TFD_OK;
}

/* ---- parallel-for ----
 * Shards are claimed from an atomic counter by the caller and by helper
 * tasks. The caller only waits for shards somebody has claimed (and so is
 * running), never for a helper to be scheduled: a parallel-for issued from
 * a worker while every other worker is busy still finishes. The control
 * block is reference-counted because a helper may start after the caller
 * has returned; it then finds no shard left and lets go. */
typedef struct pfor {
  atomic_int refs;
  atomic_int_least64_t next_shard, done_shards;
  int64_t num_shards, block, total;
  tfd_range_fn fn;
  void *arg;
  pthread_mutex_t mu;
  pthread_cond_t cv;
} pfor;

/* Below this much work (in ns), sharding costs more than it saves. */
#define MIN_SHARD_COST_NS 10000

static void pfor_unref(pfor *p) {
  if (atomic_fetch_sub_explicit(&p->refs, 1, memory_order_acq_rel) != 1) return;
  pthread_mutex_destroy(&p->mu);
  pthread_cond_destroy(&p->cv);
  free(p);
}

static void pfor_run_shards(pfor *p) {
  for (;;) {
    int64_t s = atomic_fetch_add_explicit(&p->next_shard, 1, memory_order_relaxed);
    if (s >= p->num_shards) return;
    int64_t begin = s * p->block;
    int64_t end = begin + p->block < p->total ? begin + p->block : p->total;
    p->fn(begin, end, p->arg);
    if (atomic_fetch_add_explicit(&p->done_shards, 1, memory_order_acq_rel) + 1 == p->num_shards) {
      pthread_mutex_lock(&p->mu);
      pthread_cond_broadcast(&p->cv);
      pthread_mutex_unlock(&p->mu);
    }
  }
}

static void pfor_helper(void *arg) {
  pfor *p = arg;
  pfor_run_shards(p);
  pfor_unref(p);
}

void tfd_threadpool_parallel_for(tfd_threadpool *pool, int64_t total, int64_t cost_per_unit, tfd_range_fn fn,
                                 void *arg) {
  if (total <= 0) return;
  if (cost_per_unit < 1) cost_per_unit = 1;
  /* A pool of n threads gives n-way parallelism: the caller and n - 1 helpers,
   * so n threads never compete with the caller for n cores. */
  int64_t parallel = pool ? (int64_t)tfd_threadpool_num_threads(pool) : 1;
  int64_t max_shards = 4 * parallel;
  int64_t by_cost = total > INT64_MAX / cost_per_unit ? max_shards : total * cost_per_unit / MIN_SHARD_COST_NS;
  int64_t shards = by_cost < max_shards ? by_cost : max_shards;
  if (shards > total) shards = total;
  pfor *p = NULL;
  if (!pool || shards <= 1 || !(p = malloc(sizeof *p))) {
    fn(0, total, arg);
    return;
  }
  p->block = (total + shards - 1) / shards;
  p->num_shards = (total + p->block - 1) / p->block;
  p->total = total;
  p->fn = fn;
  p->arg = arg;
  atomic_init(&p->next_shard, 0);
  atomic_init(&p->done_shards, 0);
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->cv, NULL);
  int64_t helpers = p->num_shards - 1 < pool->num_threads - 1 ? p->num_shards - 1 : pool->num_threads - 1;
  atomic_init(&p->refs, 1 + (int)helpers);
  for (int64_t i = 0; i < helpers; i++)
    if (tfd_threadpool_schedule(pool, pfor_helper, p, NULL) != TFD_OK) pfor_unref(p); /* caller covers its shards */
  pfor_run_shards(p);
  pthread_mutex_lock(&p->mu);
  while (atomic_load_explicit(&p->done_shards, memory_order_acquire) < p->num_shards)
    pthread_cond_wait(&p->cv, &p->mu);
  pthread_mutex_unlock(&p->mu);
  pfor_unref(p);
}
