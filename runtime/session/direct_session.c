/* DirectSession's life: making a session (its devices and inter-op pool), Create and Extend, close
 * and reset, the calls-in-flight accounting every public call goes through, and the handle tables
 * callables and partial runs are published in.
 *
 * The rest of the session is in files named for what they do: executor_cache.c (signatures,
 * pruning, placement, partitioning, one executor per partition), step.c (one step, the blocking
 * run), session_run.c (Run), run_async.c (tfd_run handles), callable.c, partial_run.c, cost_model.c and
 * run_metadata.c; session_internal.h holds what they share. Step ids come from one process-wide
 * counter, so they are unique across sessions. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/log.h"
#include "../device/runtime_internal.h"
#include "../framework/graph_def_internal.h"
#include "../graph/placer.h"
#include "../graph/subgraph.h"
#include "session_args.h"
#include "session_internal.h"

/* The process-wide counters DESIGN.md allows: step ids and session handles. */
static atomic_int_least64_t step_id_counter = 1;
static atomic_int_least64_t session_counter = 0;

/* The inter-op pool shared by sessions that do not ask for their own. */
static pthread_mutex_t shared_pool_mu = PTHREAD_MUTEX_INITIALIZER;
static tfd_threadpool *shared_pool;
static int shared_pool_users;

int64_t tfd_ds_next_step_id(void) { return atomic_fetch_add(&step_id_counter, 1); }

/* ---- handle tables (callers hold exec_mu) ---- */
int tfd_ds_handle_find(const handle_table *t, int64_t h) {
  int lo = 0, hi = t->n - 1;
  while (lo <= hi) {
    int mid = lo + (hi - lo) / 2;
    if (t->keys[mid] == h) return mid;
    if (t->keys[mid] < h) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/* A new handle for obj, or -1 when out of memory or serials. */
int64_t tfd_ds_handle_add(handle_table *t, int64_t session_id, void *obj, void (*release)(void *obj)) {
  if (t->last_serial == UINT32_MAX) return -1;
  t->release = release;
  if (t->n == t->cap) {
    int cap = t->cap ? t->cap * 2 : 8;
    int64_t *keys = realloc(t->keys, (size_t)cap * sizeof *keys);
    if (keys) t->keys = keys;
    void **objs = keys ? realloc(t->objs, (size_t)cap * sizeof *objs) : NULL;
    if (!objs) return -1;
    t->objs = objs;
    t->cap = cap;
  }
  int64_t h = (session_id << 32) | (int64_t)++t->last_serial;
  t->keys[t->n] = h;
  t->objs[t->n++] = obj;
  return h;
}

/* Takes obj out of the table; NULL when h is not there. */
void *tfd_ds_handle_remove(handle_table *t, int64_t h) {
  int i = tfd_ds_handle_find(t, h);
  if (i < 0) return NULL;
  void *obj = t->objs[i];
  memmove(&t->keys[i], &t->keys[i + 1], (size_t)(t->n - i - 1) * sizeof *t->keys);
  memmove(&t->objs[i], &t->objs[i + 1], (size_t)(t->n - i - 1) * sizeof *t->objs);
  t->n--;
  return obj;
}

void tfd_ds_handle_table_free(handle_table *t) {
  for (int i = 0; i < t->n; i++) t->release(t->objs[i]);
  free(t->keys);
  free(t->objs);
  *t = (handle_table){0};
}

/* The error for a handle the table does not hold: someone else's, or gone. */
tfd_code tfd_ds_unknown_handle(const tfd_session *s, int64_t h, const char *what, const char *setup, tfd_status *st) {
  if (h >= 0 && (h >> 32) != s->id)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "%s handle %lld belongs to another session", what, (long long)h);
  return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "No such %s handle: %lld (never made here, or already %s)", what,
                         (long long)h, setup);
}

static void release_pool(tfd_session *s) {
  for (int i = 0; s->pools && i < s->num_pools; i++) {
    tfd_threadpool *pool = s->pools[i].pool;
    if (!pool) continue;
    if (s->pools[i].owner == POOL_OWNED) {
      tfd_threadpool_free(pool);
    } else if (s->pools[i].owner == POOL_SHARED_DEFAULT) {
      tfd_threadpool *dead = NULL;
      pthread_mutex_lock(&shared_pool_mu);
      if (--shared_pool_users == 0) {
        dead = shared_pool;
        shared_pool = NULL;
      }
      pthread_mutex_unlock(&shared_pool_mu);
      tfd_threadpool_free(dead);
    } /* borrowed: the runtime frees it, and the registry copy's runtime reference keeps it till then */
  }
  free(s->pools);
  s->pools = NULL;
  s->inter_pool = NULL;
}

/* The session's inter-op pools (DirectSession's thread_pools_): those session_inter_op_thread_pool
 * lists, else one, its own (use_per_session_threads) or the process's default. A runtime over a
 * host's scheduler lends its pool for every one: tfdev then starts no thread. */
static tfd_code make_pools(tfd_session *s, tfd_runtime *rt, tfd_status *st) {
  int threads = tfd_session_options_inter_op_threads(s->options);
  int listed = tfd_session_options_num_inter_op_pools(s->options);
  s->num_pools = listed > 0 ? listed : 1;
  if (!(s->pools = calloc((size_t)s->num_pools, sizeof *s->pools)))
    return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory creating a session");
  if (threads < 0) return TFD_OK; /* TensorFlow's synchronous session: every node on the calling thread */
  for (int i = 0; i < s->num_pools; i++) {
    session_pool *p = &s->pools[i];
    int asked = 0;
    const char *name = "";
    if (listed > 0) tfd_session_options_inter_op_pool(s->options, i, &asked, &name);
    int make = asked > 0 ? asked : threads; /* 0: the default, as TensorFlow's NumInterOpThreads */
    if (tfd_runtime_pool(rt)) {
      p->owner = POOL_BORROWED;
      p->pool = tfd_runtime_pool(rt);
    } else if (listed > 0 && *name && rt) {
      p->owner = POOL_BORROWED;
      if (!(p->pool = tfd_runtime_named_pool(rt, name, asked, make, st))) return tfd_status_code(st);
    } else if (listed > 0 || tfd_session_options_use_per_session_threads(s->options)) {
      p->owner = POOL_OWNED;
      if (tfd_threadpool_new("tfdev_inter", make, &p->pool, st) != TFD_OK) return tfd_status_code(st);
    } else {
      p->owner = POOL_SHARED_DEFAULT;
      pthread_mutex_lock(&shared_pool_mu);
      if (!shared_pool) tfd_threadpool_new("tfdev_inter", threads, &shared_pool, st);
      if (shared_pool) shared_pool_users++;
      p->pool = shared_pool;
      pthread_mutex_unlock(&shared_pool_mu);
      if (!p->pool) return tfd_status_code(st);
    }
  }
  s->inter_pool = s->pools[0].pool;
  return TFD_OK;
}

void tfd_ds_destroy(tfd_session *s) {
  for (int i = 0; i < s->num_bundles; i++) tfd_ds_bundle_free(s->bundles[i]);
  free(s->bundles);
  tfd_ds_handle_table_free(&s->callables);
  tfd_strmap_free(&s->cache);
  tfd_strmap_free(&s->stateful);
  tfd_strmap_free(&s->whole);
  tfd_strmap_free(&s->placements);
  tfd_graph_free(s->graph);
  tfd_graph_def_free(s->def);
  for (int d = 0; s->devices && d < s->num_devices; d++) /* no devices: their array could not be made */
    tfd_op_segment_remove_hold(tfd_device_op_segment(s->devices[d]), s->handle);
  release_pool(s);
  tfd_device_mgr_free(s->mgr);
  free(s->devices);
  tfd_device_list_free(s->device_list);
  tfd_factory_registry_free(s->registry);
  tfd_session_options_free(s->options);
  /* close() waited for every run's executors: only the table's references are left. */
  tfd_ds_handle_table_free(&s->pruns);
  tfd_session_state_free(s->state);
  tfd_ds_costs_free(s);
  pthread_mutex_destroy(&s->cost_mu);
  pthread_mutex_destroy(&s->graph_mu);
  pthread_mutex_destroy(&s->exec_mu);
  pthread_mutex_destroy(&s->life_mu);
  pthread_cond_destroy(&s->life_cv);
  free(s);
}

tfd_session *tfd_ds_new(const tfd_session_options *options, const tfd_factory_registry *registry, void *host_ctx,
                        tfd_status *st) {
  tfd_session *s = calloc(1, sizeof *s);
  if (!s) {
    tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory creating a session");
    return NULL;
  }
  pthread_mutex_init(&s->graph_mu, NULL);
  pthread_mutex_init(&s->exec_mu, NULL);
  pthread_mutex_init(&s->life_mu, NULL);
  pthread_cond_init(&s->life_cv, NULL);
  s->active.prev = s->active.next = &s->active;
  atomic_init(&s->inflight, 1); /* the open session's own count, which close() drops */
  pthread_mutex_init(&s->cost_mu, NULL);
  /* Handles keep the id in their high 32 bits: wrap well before 2^31 sessions. */
  int64_t serial = atomic_fetch_add(&session_counter, 1);
  s->id = serial % 0x7fffffff + 1;
  snprintf(s->handle, sizeof s->handle, "direct%lld", (long long)serial);
  s->options = options ? tfd_session_options_copy(options) : tfd_session_options_new();
  if (!registry) registry = tfd_factory_registry_default();
  /* Our own copy: the caller's registry may change or go while we live. */
  s->registry = registry ? tfd_factory_registry_copy(registry) : NULL;
  s->device_list = tfd_device_list_new();
  s->state = tfd_session_state_new();
  if (!s->options || !s->registry || !s->device_list || !s->state) {
    tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory creating a session");
    goto fail;
  }
  if (tfd_factory_registry_add_devices(s->registry, s->options, TFD_LOCAL_NAME_PREFIX, host_ctx, s->device_list, st) !=
      TFD_OK)
    goto fail;
  s->num_devices = (int)tfd_device_list_size(s->device_list);
  s->devices = malloc((size_t)s->num_devices * sizeof *s->devices);
  if (!s->devices) {
    tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory creating a session");
    goto fail;
  }
  for (int d = 0; d < s->num_devices; d++) s->devices[d] = tfd_device_list_get(s->device_list, (size_t)d);
  if (tfd_device_mgr_new(s->devices, (size_t)s->num_devices, &s->mgr, st) != TFD_OK) goto fail;
  for (int d = 0; d < s->num_devices; d++)
    if (tfd_op_segment_add_hold(tfd_device_op_segment(s->devices[d]), s->handle, st) != TFD_OK) {
      for (int e = 0; e < d; e++) tfd_op_segment_remove_hold(tfd_device_op_segment(s->devices[e]), s->handle);
      s->num_devices = 0; /* nothing to release in free */
      goto fail;
    }
  tfd_runtime *rt = tfd_factory_registry_runtime(s->registry);
  s->logger = tfd_runtime_logger(rt);
  if (make_pools(s, rt, st) != TFD_OK) goto fail;
  return s;
fail:
  tfd_session_close(s, NULL);
  tfd_ds_destroy(s);
  return NULL;
}

/* Every public call runs between enter and leave; close waits for them. */
/* inflight counts the calls in flight plus one for the session while it is open, so that while it
 * is open no call can be the last: leaving is then one compare-and-swap that never lets the count
 * reach 0. Only after close() has dropped the session's own count can a call be the last one out,
 * and that call decrements under life_mu, where close() waits: close() cannot see 0 (and free the
 * session) before the last call has stopped touching it. enter counts the call and then reads
 * closed; close() sets closed and then drops its count (both sequentially consistent): either
 * close() waits for the call, or the call sees close(). */
tfd_code tfd_ds_enter(tfd_session *s, tfd_status *st) {
  atomic_fetch_add(&s->inflight, 1);
  if (!atomic_load(&s->closed)) return TFD_OK;
  tfd_ds_leave(s);
  return tfd_status_setf(st, TFD_CANCELLED, "Session has been closed.");
}

void tfd_ds_hold(tfd_session *s) { atomic_fetch_add(&s->inflight, 1); }

void tfd_ds_leave(tfd_session *s) {
  int v = atomic_load(&s->inflight);
  while (v > 1)
    if (atomic_compare_exchange_weak(&s->inflight, &v, v - 1)) return;
  pthread_mutex_lock(&s->life_mu);
  if (atomic_fetch_sub(&s->inflight, 1) == 1) pthread_cond_broadcast(&s->life_cv);
  pthread_mutex_unlock(&s->life_mu);
}

/* DirectSession::CheckGraphCreated: method ("Run()", "PRunSetup()", "MakeCallable()") needs a graph. */
tfd_code tfd_ds_check_graph_created(tfd_session *s, const char *method, tfd_status *st) {
  pthread_mutex_lock(&s->graph_mu);
  bool created = s->graph != NULL;
  pthread_mutex_unlock(&s->graph_mu);
  return created ? TFD_OK
                 : tfd_status_setf(st, TFD_INVALID_ARGUMENT, "Session was not created with a graph before %s!", method);
}

/* Steps register their cancellation while they run. */
void tfd_ds_add_active(tfd_session *s, active_step *a, tfd_cancellation *c) {
  a->cancel = c;
  pthread_mutex_lock(&s->life_mu);
  a->prev = &s->active;
  a->next = s->active.next;
  s->active.next->prev = a;
  s->active.next = a;
  bool closed = atomic_load(&s->closed);
  pthread_mutex_unlock(&s->life_mu);
  if (closed) tfd_cancellation_cancel(c, TFD_CANCELLED, "Session has been closed.");
}

void tfd_ds_remove_active(tfd_session *s, active_step *a) {
  pthread_mutex_lock(&s->life_mu);
  a->prev->next = a->next;
  a->next->prev = a->prev;
  a->prev = a->next = a;
  pthread_mutex_unlock(&s->life_mu);
}

/* A step in the active list not cancelled yet, with a reference the caller drops; NULL when none is
 * left. Cancelling happens outside life_mu (the callbacks may end the step, which takes it), one step
 * at a time, so close() needs no memory however many steps run. */
static tfd_cancellation *next_to_cancel(tfd_session *s) {
  tfd_cancellation *c = NULL;
  pthread_mutex_lock(&s->life_mu);
  for (active_step *a = s->active.next; a != &s->active && !c; a = a->next)
    if (!tfd_cancellation_is_cancelled(a->cancel)) c = tfd_cancellation_ref(a->cancel);
  pthread_mutex_unlock(&s->life_mu);
  return c;
}

/* The waiting items of a step's caller queue not closed yet, the queue closed (under life_mu, so the
 * step is still there; the items keep it from ending until their cancels run); NULL when every
 * queue is closed or empty. */
static caller_item *next_queue_to_close(tfd_session *s) {
  caller_item *items = NULL;
  pthread_mutex_lock(&s->life_mu);
  for (active_step *a = s->active.next; a != &s->active && !items; a = a->next) {
    if (!a->queue) continue;
    pthread_mutex_lock(a->queue->mu);
    if (!a->queue->closed) items = tfd_caller_queue_close_locked(a->queue);
    pthread_mutex_unlock(a->queue->mu);
  }
  pthread_mutex_unlock(&s->life_mu);
  return items;
}

tfd_code tfd_session_close(tfd_session *s, tfd_status *st) {
  tfd_status_reset(st);
  if (tfd_arg_required(st, "tfd_session_close", "s", s)) return TFD_INVALID_ARGUMENT;
  pthread_mutex_lock(&s->life_mu);
  bool first = !atomic_exchange(&s->closed, true);
  pthread_mutex_unlock(&s->life_mu);
  /* Cancel in-flight steps (blocked kernels wake with CANCELLED), then wait for every call to leave.
   * A step that starts from now on cancels itself as it joins the list (tfd_ds_add_active). */
  for (tfd_cancellation *c; (c = next_to_cancel(s));) {
    tfd_cancellation_cancel(c, TFD_CANCELLED, "Session has been closed.");
    tfd_cancellation_unref(c);
  }
  /* Kernels waiting for their step's caller thread (Lua kernels) may wait for a thread that waits for
   * this close(): they fail unrun, and their queues refuse what comes after. */
  for (caller_item *items; (items = next_queue_to_close(s));) tfd_caller_queue_cancel_items(items);
  pthread_mutex_lock(&s->life_mu);
  if (first) atomic_fetch_sub(&s->inflight, 1); /* the open session's own count */
  while (atomic_load(&s->inflight) > 0) pthread_cond_wait(&s->life_cv, &s->life_mu);
  pthread_mutex_unlock(&s->life_mu);
  return TFD_OK;
}

tfd_code tfd_session_reset(tfd_session *s, const char *const *containers, int n, tfd_status *st) {
  tfd_status_reset(st);
  if (tfd_arg_required(st, "tfd_session_reset", "s", s) ||
      tfd_arg_items(st, "tfd_session_reset", "containers", TFD_ARG_ITEMS(containers), "n", n))
    return TFD_INVALID_ARGUMENT;
  if (tfd_ds_enter(s, st) != TFD_OK) return TFD_CANCELLED;
  tfd_code code = tfd_device_mgr_clear_containers(s->mgr, containers, (size_t)n, st);
  tfd_ds_leave(s);
  return code;
}

tfd_device_mgr *tfd_session_device_mgr(tfd_session *s) { return s->mgr; }

int tfd_session_num_executors_built(const tfd_session *s) { return s->num_bundles; }

/* ---- graph ---- */
/* Names starting with '_' and the ops only the session adds (feeds, fetches, sends) belong to
 * the runtime. Other '_' ops, like _FusedMatMul, are TensorFlow's internal ops that exported
 * graphs carry; they are welcome. */
static tfd_code check_user_nodes(const tfd_graph_def *def, tfd_status *st) {
  for (size_t i = 0; i < tfd_graph_def_num_nodes(def); i++) {
    const tfd_node_def *n = tfd_graph_def_node(def, i);
    if (tfd_node_def_name(n)[0] == '_')
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node name '%s' is invalid: names starting with '_' are reserved",
                             tfd_node_def_name(n));
    const tfd_op_def *op = tfd_op_lookup(tfd_node_def_op(n));
    if (op && op->runtime_only)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s': op '%s' is internal to the runtime",
                             tfd_node_def_name(n), tfd_node_def_op(n));
  }
  return TFD_OK;
}

static void discard_line(void *ctx, tfd_log_level level, const char *line) { (void)ctx, (void)level, (void)line; }

/* TensorFlow places the whole graph when it is created or extended (unless place_pruned_graph): a
 * node pinned to a device the session lacks fails Create, not the first Run, and where a node runs
 * depends on the whole graph (its colocation partners, a generator's consumers), not on what one run
 * needs. The placement is kept in s->whole for the runs; nodes earlier runs made stateful keep their
 * devices. Quiet: soft placement's lines come with each run's placement, which reports every node. */
static tfd_code place_whole_graph(tfd_session *s, const tfd_graph *g, tfd_status *st) {
  if (tfd_session_options_place_pruned_graph(s->options)) return TFD_OK;
  int *device_of = malloc(((size_t)g->n + 1) * sizeof *device_of);
  if (!device_of) return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
  tfd_placer_options po = {s->devices, s->num_devices, s->registry, tfd_session_options_allow_soft_placement(s->options),
                           false, &s->stateful, false};
  static const tfd_host_logger quiet = {discard_line, TFD_LOG_ERROR, NULL};
  const tfd_host_logger *outer = tfd_log_use(&quiet);
  tfd_code code = tfd_place(g, &po, device_of, st);
  tfd_log_use(outer);
  tfd_strmap whole = TFD_STRMAP_INIT;
  for (int i = 0; code == TFD_OK && i < g->n; i++)
    if (!tfd_strmap_put(&whole, tfd_gnode_name(&g->nodes[i]), (void *)(intptr_t)(device_of[i] + 1)))
      code = tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
  free(device_of);
  if (code != TFD_OK) {
    tfd_strmap_free(&whole);
    return code;
  }
  tfd_strmap_free(&s->whole);
  s->whole = whole;
  return TFD_OK;
}

static tfd_code install_graph(tfd_session *s, tfd_graph_def *def, tfd_status *st) {
  if (check_user_nodes(def, st) != TFD_OK) {
    tfd_graph_def_free(def);
    return TFD_INVALID_ARGUMENT;
  }
  tfd_graph *g = tfd_graph_build(def, st);
  if (!g || place_whole_graph(s, g, st) != TFD_OK) {
    tfd_graph_free(g);
    tfd_graph_def_free(def);
    return tfd_status_code(st);
  }
  tfd_graph_free(s->graph);
  tfd_graph_def_free(s->def);
  s->graph = g;
  s->def = def;
  return TFD_OK;
}

tfd_code tfd_session_create(tfd_session *s, const tfd_graph_def *graph, tfd_status *st) {
  tfd_status_reset(st);
  if (tfd_arg_required(st, "tfd_session_create", "s", s) || tfd_arg_required(st, "tfd_session_create", "graph", graph))
    return TFD_INVALID_ARGUMENT;
  if (tfd_ds_enter(s, st) != TFD_OK) return TFD_CANCELLED;
  pthread_mutex_lock(&s->graph_mu);
  tfd_code code;
  if (s->graph) {
    code = tfd_status_setf(st, TFD_ALREADY_EXISTS, "A Graph has already been created for this session.");
  } else {
    tfd_graph_def *def = tfd_graph_def_copy(graph);
    code = def ? install_graph(s, def, st) : tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
  }
  pthread_mutex_unlock(&s->graph_mu);
  tfd_ds_leave(s);
  return code;
}

tfd_code tfd_session_extend(tfd_session *s, const tfd_graph_def *graph, tfd_status *st) {
  tfd_status_reset(st);
  if (tfd_arg_required(st, "tfd_session_extend", "s", s) || tfd_arg_required(st, "tfd_session_extend", "graph", graph))
    return TFD_INVALID_ARGUMENT;
  if (tfd_ds_enter(s, st) != TFD_OK) return TFD_CANCELLED;
  pthread_mutex_lock(&s->graph_mu);
  if (s->finalized) { /* DirectSession::ExtendLocked */
    pthread_mutex_unlock(&s->graph_mu);
    tfd_ds_leave(s);
    return tfd_status_setf(st, TFD_FAILED_PRECONDITION, "Session has been finalized.");
  }
  tfd_graph_def *def = s->def ? tfd_graph_def_copy(s->def) : tfd_graph_def_new();
  tfd_code code = def ? TFD_OK : tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
  for (size_t i = 0; code == TFD_OK && i < tfd_graph_def_num_nodes(graph); i++)
    code = tfd_graph_def_append_node(def, tfd_graph_def_node(graph, i), st);
  if (code == TFD_OK) code = install_graph(s, def, st); /* the old graph stays on failure */
  else tfd_graph_def_free(def);
  pthread_mutex_unlock(&s->graph_mu);
  tfd_ds_leave(s);
  return code;
}

/* DirectSession::Finalize: what is built keeps running; nothing new is built. TensorFlow frees its
 * execution state here; tfdev keeps the graph, which only queries (node_device, tensor_dtype) read. */
tfd_code tfd_session_finalize(tfd_session *s, tfd_status *st) {
  tfd_status_reset(st);
  if (tfd_arg_required(st, "tfd_session_finalize", "s", s)) return TFD_INVALID_ARGUMENT;
  if (tfd_ds_enter(s, st) != TFD_OK) return TFD_CANCELLED;
  pthread_mutex_lock(&s->graph_mu);
  tfd_code code = TFD_OK;
  if (s->finalized) code = tfd_status_setf(st, TFD_FAILED_PRECONDITION, "Session already finalized.");
  else if (!s->graph) code = tfd_status_setf(st, TFD_FAILED_PRECONDITION, "Session not yet created.");
  else s->finalized = true;
  pthread_mutex_unlock(&s->graph_mu);
  tfd_ds_leave(s);
  return code;
}

tfd_code tfd_session_node_device(tfd_session *s, const char *node, char *out, tfd_status *st) {
  tfd_status_reset(st);
  static const char fn[] = "tfd_session_node_device";
  if (tfd_arg_required(st, fn, "s", s) || tfd_arg_required(st, fn, "node", node) || tfd_arg_required(st, fn, "out", out))
    return TFD_INVALID_ARGUMENT;
  pthread_mutex_lock(&s->graph_mu);
  intptr_t d = (intptr_t)tfd_strmap_get(&s->placements, node);
  pthread_mutex_unlock(&s->graph_mu);
  if (!d) return tfd_status_setf(st, TFD_NOT_FOUND, "node '%s' has not been placed by any run", node);
  snprintf(out, TFD_DEVICE_NAME_MAX, "%s", tfd_device_name(s->devices[d - 1]));
  return TFD_OK;
}

tfd_code tfd_session_tensor_dtype(tfd_session *s, const char *tensor, tfd_dtype *out, tfd_status *st) {
  tfd_status_reset(st);
  static const char fn[] = "tfd_session_tensor_dtype";
  if (tfd_arg_required(st, fn, "s", s) || tfd_arg_required(st, fn, "tensor", tensor) || tfd_arg_required(st, fn, "out", out))
    return TFD_INVALID_ARGUMENT;
  if (tfd_ds_enter(s, st) != TFD_OK) return TFD_CANCELLED; /* a closed session says so first */
  int index;
  char *node = tfd_parse_tensor_name(tensor, &index, st);
  if (!node) {
    tfd_ds_leave(s);
    return tfd_status_code(st) != TFD_OK ? tfd_status_code(st) : TFD_INVALID_ARGUMENT;
  }
  pthread_mutex_lock(&s->graph_mu);
  int id = s->graph ? tfd_graph_find(s->graph, node) : -1;
  tfd_code code = TFD_OK;
  if (!s->graph) code = tfd_status_setf(st, TFD_INVALID_ARGUMENT, "Session was not created with a graph before Run()!");
  else if (id < 0) {
    char known[512];
    tfd_graph_placeholders_text(s->graph, known, sizeof known);
    code = tfd_status_setf(st, TFD_NOT_FOUND, "the graph has no node named '%s'%s", node, known);
  }
  else if (index >= s->graph->nodes[id].num_outputs)
    code = tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' has %d outputs", node,
                           s->graph->nodes[id].num_outputs);
  else *out = s->graph->nodes[id].out_types[index];
  pthread_mutex_unlock(&s->graph_mu);
  free(node);
  tfd_ds_leave(s);
  return code;
}
