/* DirectSession: graph management, the executor cache, and running partitions in parallel, blocking
 * or asynchronously (tfd_run handles), and partial runs.
 *
 * A run's signature (feeds, fetches, targets) picks a set of executors from
 * the cache: first by the names in the order given (fast path), then by the
 * sorted names, and only then are new ones built: rewrite for feeds and
 * fetches, prune, place, partition, and compile one executor per partition.
 * Step ids come from one process-wide counter, so they are unique across
 * sessions. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../core/log.h"
#include "../core/refcount.h"
#include "../core/status_internal.h"
#include "../core/strmap.h"
#include "../exec/caller_queue.h"
#include "../exec/cancellation.h"
#include "../exec/executor.h"
#include "../device/runtime_internal.h"
#include "../exec/session_state.h"
#include "../graph/graph_def_internal.h"
#include "../graph/placer.h"
#include "../graph/subgraph.h"
#include "graph_optimizer.h"
#include "tfdev/session.h"

/* The process-wide counters DESIGN.md allows: step ids and session handles. */
static atomic_int_least64_t step_id_counter = 1;
static atomic_int_least64_t session_counter = 0;

/* The inter-op pool shared by sessions that do not ask for their own. */
static pthread_mutex_t shared_pool_mu = PTHREAD_MUTEX_INITIALIZER;
static tfd_threadpool *shared_pool;
static int shared_pool_users;

typedef struct bundle {
  int num_parts;
  tfd_executor **execs;
  tfd_graph_def **part_defs; /* for run metadata */
  int num_feeds, num_fetches;
  char **feed_names, **fetch_names; /* canonical "node:i" */
  tfd_dtype *feed_types;
  tfd_shape *feed_shapes;
  tfd_strmap feed_index;  /* name -> k + 1 */
  tfd_strmap fetch_index; /* name -> k + 1 */
  tfd_graph *client;      /* partial runs: the placed run graph, for CheckFetch */
} bundle;

/* A callable is shared by the session's table and each call running it, so
 * releasing it while another thread runs it frees nothing under that run. */
typedef struct callable {
  tfd_refcount refs;
  bundle *b; /* owned by the session */
  int num_feeds, num_fetches;
  int *feed_map;  /* call order -> bundle order */
  int *fetch_map; /* call order -> bundle order */
} callable;

/* Callables and partial runs by handle. A handle is the session's id in the
 * high 32 bits and a per-session serial below, never reused: a handle from
 * another session, or one already released, is recognised as such. Serials
 * only grow, so appending keeps the table sorted for binary search. */
typedef struct handle_table {
  int64_t *keys;
  void **objs;
  int n, cap;
  uint32_t last_serial;
} handle_table;

struct tfd_session {
  tfd_session_options *options;
  tfd_factory_registry *registry;
  tfd_device_list *device_list;
  tfd_device **devices;
  int num_devices;
  tfd_device_mgr *mgr;
  char handle[32];
  tfd_threadpool *inter_pool; /* NULL: a synchronous session (inter_op_threads < 0) */
  bool owns_pool;
  bool pool_from_runtime;       /* the runtime's pool over its host's scheduler: borrowed */
  const tfd_host_logger *logger; /* the runtime's, or NULL: where placement's lines go */
  pthread_mutex_t graph_mu;
  tfd_graph_def *def;
  tfd_graph *graph;
  tfd_strmap stateful;   /* stateful node -> device index + 1; never moves */
  tfd_strmap placements; /* node -> device index + 1, from the latest build */
  pthread_mutex_t exec_mu;
  tfd_strmap cache; /* signature -> bundle* (several keys may share one) */
  bundle **bundles;
  int num_bundles;
  handle_table callables; /* callable*, each holding one reference for the table */
  /* Lifetime: calls in flight and the cancellations of running steps, so
   * close() can cancel them and wait until nothing touches the session. */
  pthread_mutex_t life_mu;
  pthread_cond_t life_cv;
  bool closed;
  int inflight;
  tfd_cancellation **active;
  int num_active, cap_active;
  tfd_session_state *state; /* tensors kept by handle between runs */
  pthread_mutex_t cost_mu;
  tfd_strmap costs; /* "device\x1fnode" -> cost_item* */
  handle_table pruns; /* partial_run*, each holding one reference for the table */
  int64_t id;         /* process-wide serial: the high half of every handle */
};

const char *const *tfd_session_factory_names(void) {
  static const char *const names[] = {"DIRECT_SESSION", NULL};
  return names;
}

/* ---- handle tables (callers hold exec_mu) ---- */
static int handle_find(const handle_table *t, int64_t h) {
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
static int64_t handle_add(handle_table *t, int64_t session_id, void *obj) {
  if (t->last_serial == UINT32_MAX) return -1;
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
static void *handle_remove(handle_table *t, int64_t h) {
  int i = handle_find(t, h);
  if (i < 0) return NULL;
  void *obj = t->objs[i];
  memmove(&t->keys[i], &t->keys[i + 1], (size_t)(t->n - i - 1) * sizeof *t->keys);
  memmove(&t->objs[i], &t->objs[i + 1], (size_t)(t->n - i - 1) * sizeof *t->objs);
  t->n--;
  return obj;
}

static void handle_table_free(handle_table *t) {
  free(t->keys);
  free(t->objs);
  *t = (handle_table){0};
}

/* The error for a handle the table does not hold: someone else's, or gone. */
static tfd_code unknown_handle(const tfd_session *s, int64_t h, const char *what, const char *setup, tfd_status *st) {
  if (h >= 0 && (h >> 32) != s->id)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "%s handle %lld belongs to another session", what, (long long)h);
  return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "No such %s handle: %lld (never made here, or already %s)", what,
                         (long long)h, setup);
}

static void callable_unref(callable *c) {
  if (!c || !tfd_refcount_dec(&c->refs)) return;
  free(c->feed_map);
  free(c->fetch_map);
  free(c);
}

/* ---- lifecycle ---- */
static void bundle_free(bundle *b) {
  if (!b) return;
  for (int p = 0; p < b->num_parts; p++) {
    tfd_executor_free(b->execs[p]);
    tfd_graph_def_free(b->part_defs[p]);
  }
  free(b->execs);
  free(b->part_defs);
  for (int k = 0; k < b->num_feeds; k++) free(b->feed_names[k]);
  for (int k = 0; k < b->num_fetches; k++) free(b->fetch_names[k]);
  free(b->feed_names);
  free(b->fetch_names);
  free(b->feed_types);
  free(b->feed_shapes);
  tfd_strmap_free(&b->feed_index);
  tfd_strmap_free(&b->fetch_index);
  tfd_graph_free(b->client);
  free(b);
}

static void release_pool(tfd_session *s) {
  if (!s->inter_pool) return;
  if (s->pool_from_runtime) {
    /* the registry copy's runtime reference keeps it; nothing of ours to free */
  } else if (s->owns_pool) {
    tfd_threadpool_free(s->inter_pool);
  } else {
    tfd_threadpool *dead = NULL;
    pthread_mutex_lock(&shared_pool_mu);
    if (--shared_pool_users == 0) {
      dead = shared_pool;
      shared_pool = NULL;
    }
    pthread_mutex_unlock(&shared_pool_mu);
    tfd_threadpool_free(dead);
  }
  s->inter_pool = NULL;
}

typedef struct partial_run partial_run;
static void prun_unref(partial_run *r);
static tfd_code drop_prun(tfd_session *s, int64_t handle, partial_run *r, const char *cancel_why, tfd_status *st);

/* One node's entry in the cost model. */
typedef struct cost_item {
  char *device, *node;
  const char *op; /* static, from the op registry */
  int64_t runs, total_micros, max_micros, output_bytes;
} cost_item;

void tfd_session_free(tfd_session *s) {
  if (!s) return;
  tfd_session_close(s, NULL);
  for (int i = 0; i < s->num_bundles; i++) bundle_free(s->bundles[i]);
  free(s->bundles);
  for (int i = 0; i < s->callables.n; i++) callable_unref(s->callables.objs[i]);
  handle_table_free(&s->callables);
  tfd_strmap_free(&s->cache);
  tfd_strmap_free(&s->stateful);
  tfd_strmap_free(&s->placements);
  tfd_graph_free(s->graph);
  tfd_graph_def_free(s->def);
  for (int d = 0; d < s->num_devices; d++) tfd_op_segment_remove_hold(tfd_device_op_segment(s->devices[d]), s->handle);
  release_pool(s);
  tfd_device_mgr_free(s->mgr);
  free(s->devices);
  tfd_device_list_free(s->device_list);
  tfd_factory_registry_free(s->registry);
  tfd_session_options_free(s->options);
  /* close() waited for every run's executors: only the table's references are left. */
  for (int i = 0; i < s->pruns.n; i++) prun_unref(s->pruns.objs[i]);
  handle_table_free(&s->pruns);
  tfd_session_state_free(s->state);
  size_t it = 0;
  const char *ck;
  void *cv;
  while (tfd_strmap_next(&s->costs, &it, &ck, &cv)) {
    cost_item *c = cv;
    free(c->device);
    free(c->node);
    free(c);
  }
  tfd_strmap_free(&s->costs);
  pthread_mutex_destroy(&s->cost_mu);
  free(s->active);
  pthread_mutex_destroy(&s->graph_mu);
  pthread_mutex_destroy(&s->exec_mu);
  pthread_mutex_destroy(&s->life_mu);
  pthread_cond_destroy(&s->life_cv);
  free(s);
}

tfd_session *tfd_session_new(const tfd_session_options *options, const tfd_factory_registry *registry, void *host_ctx,
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
  if (!(s->mgr = tfd_device_mgr_new(s->devices, (size_t)s->num_devices, st))) goto fail;
  for (int d = 0; d < s->num_devices; d++)
    if (tfd_op_segment_add_hold(tfd_device_op_segment(s->devices[d]), s->handle, st) != TFD_OK) {
      for (int e = 0; e < d; e++) tfd_op_segment_remove_hold(tfd_device_op_segment(s->devices[e]), s->handle);
      s->num_devices = 0; /* nothing to release in free */
      goto fail;
    }
  int threads = tfd_session_options_inter_op_threads(s->options);
  tfd_runtime *rt = tfd_factory_registry_runtime(s->registry);
  s->logger = tfd_runtime_logger(rt);
  if (threads < 0) { /* TensorFlow's synchronous session: every node on the calling thread */
    return s;
  } else if (tfd_runtime_pool(rt)) {
    s->pool_from_runtime = true;
    s->inter_pool = tfd_runtime_pool(rt);
  } else if (tfd_session_options_use_per_session_threads(s->options)) {
    s->owns_pool = true;
    s->inter_pool = tfd_threadpool_new("tfdev_inter", threads, st);
  } else {
    pthread_mutex_lock(&shared_pool_mu);
    if (!shared_pool) shared_pool = tfd_threadpool_new("tfdev_inter", threads, st);
    if (shared_pool) shared_pool_users++;
    s->inter_pool = shared_pool;
    pthread_mutex_unlock(&shared_pool_mu);
  }
  if (!s->inter_pool) goto fail;
  return s;
fail:
  tfd_session_free(s);
  return NULL;
}

tfd_session *tfd_runtime_session_new(tfd_runtime *rt, const tfd_session_options *options, void *host_ctx,
                                     tfd_status *st) {
  if (!rt) {
    tfd_status_setf(st, TFD_INVALID_ARGUMENT, "tfd_runtime_session_new needs a runtime");
    return NULL;
  }
  return tfd_session_new(options, tfd_runtime_registry(rt), host_ctx, st);
}

tfd_session *tfd_session_new_named(const char *factory, const tfd_session_options *options,
                                   const tfd_factory_registry *registry, void *host_ctx, tfd_status *st) {
  if (factory && *factory && strcmp(factory, "DIRECT_SESSION") != 0) {
    tfd_status_setf(st, TFD_NOT_FOUND, "no session factory named '%s' (registered: DIRECT_SESSION)", factory);
    return NULL;
  }
  return tfd_session_new(options, registry, host_ctx, st);
}

/* Every public call runs between enter and leave; close waits for them. */
static tfd_code enter(tfd_session *s, tfd_status *st) {
  pthread_mutex_lock(&s->life_mu);
  bool closed = s->closed;
  if (!closed) s->inflight++;
  pthread_mutex_unlock(&s->life_mu);
  return closed ? tfd_status_setf(st, TFD_CANCELLED, "Session has been closed.") : TFD_OK;
}

static void leave(tfd_session *s) {
  pthread_mutex_lock(&s->life_mu);
  if (--s->inflight == 0) pthread_cond_broadcast(&s->life_cv);
  pthread_mutex_unlock(&s->life_mu);
}

/* DirectSession::CheckGraphCreated: method ("Run()", "PRunSetup()", "MakeCallable()") needs a graph. */
static tfd_code check_graph_created(tfd_session *s, const char *method, tfd_status *st) {
  pthread_mutex_lock(&s->graph_mu);
  bool created = s->graph != NULL;
  pthread_mutex_unlock(&s->graph_mu);
  return created ? TFD_OK
                 : tfd_status_setf(st, TFD_INVALID_ARGUMENT, "Session was not created with a graph before %s!", method);
}

/* Steps register their cancellation while they run. */
static bool add_active(tfd_session *s, tfd_cancellation *c) {
  pthread_mutex_lock(&s->life_mu);
  if (s->num_active == s->cap_active) {
    int cap = s->cap_active ? s->cap_active * 2 : 8;
    tfd_cancellation **a = realloc(s->active, (size_t)cap * sizeof *a);
    if (!a) {
      pthread_mutex_unlock(&s->life_mu);
      return false;
    }
    s->active = a;
    s->cap_active = cap;
  }
  s->active[s->num_active++] = c;
  bool closed = s->closed;
  pthread_mutex_unlock(&s->life_mu);
  if (closed) tfd_cancellation_cancel(c, TFD_CANCELLED, "Session has been closed.");
  return true;
}

static void remove_active(tfd_session *s, tfd_cancellation *c) {
  pthread_mutex_lock(&s->life_mu);
  for (int i = 0; i < s->num_active; i++)
    if (s->active[i] == c) {
      s->active[i] = s->active[--s->num_active];
      break;
    }
  pthread_mutex_unlock(&s->life_mu);
}

tfd_code tfd_session_close(tfd_session *s, tfd_status *st) {
  (void)st;
  pthread_mutex_lock(&s->life_mu);
  s->closed = true;
  int n = s->num_active;
  tfd_cancellation **running = n ? malloc((size_t)n * sizeof *running) : NULL;
  for (int i = 0; running && i < n; i++) running[i] = tfd_cancellation_ref(s->active[i]);
  pthread_mutex_unlock(&s->life_mu);
  /* Cancel in-flight steps (blocked kernels wake with CANCELLED), then wait for every call to leave. */
  for (int i = 0; running && i < n; i++) {
    tfd_cancellation_cancel(running[i], TFD_CANCELLED, "Session has been closed.");
    tfd_cancellation_unref(running[i]);
  }
  free(running);
  pthread_mutex_lock(&s->life_mu);
  while (s->inflight > 0) pthread_cond_wait(&s->life_cv, &s->life_mu);
  pthread_mutex_unlock(&s->life_mu);
  return TFD_OK;
}

tfd_code tfd_session_reset(tfd_session *s, const char *const *containers, int n, tfd_status *st) {
  if (enter(s, st) != TFD_OK) return TFD_CANCELLED;
  tfd_code code = tfd_device_mgr_clear_containers(s->mgr, containers, (size_t)n, st);
  leave(s);
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

/* TensorFlow places the whole graph when it is created (unless place_pruned_graph): a node pinned to
 * a device the session lacks fails Create, not the first Run. The placement itself is made again,
 * per pruned graph, by the runs; this one only checks, quietly (soft placement's lines come then). */
static tfd_code check_placement(tfd_session *s, const tfd_graph *g, tfd_status *st) {
  if (tfd_session_options_place_pruned_graph(s->options) || g->n == 0) return TFD_OK;
  int *device_of = malloc((size_t)g->n * sizeof *device_of);
  if (!device_of) return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
  tfd_placer_options po = {s->devices, s->num_devices, s->registry, tfd_session_options_allow_soft_placement(s->options),
                           false, &s->stateful, false};
  static const tfd_host_logger quiet = {discard_line, TFD_LOG_ERROR, NULL};
  const tfd_host_logger *outer = tfd_log_use(&quiet);
  tfd_code code = tfd_place(g, &po, device_of, st);
  tfd_log_use(outer);
  free(device_of);
  return code;
}

static tfd_code install_graph(tfd_session *s, tfd_graph_def *def, tfd_status *st) {
  if (check_user_nodes(def, st) != TFD_OK) {
    tfd_graph_def_free(def);
    return TFD_INVALID_ARGUMENT;
  }
  tfd_graph *g = tfd_graph_build(def, st);
  if (!g || check_placement(s, g, st) != TFD_OK) {
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
  if (enter(s, st) != TFD_OK) return TFD_CANCELLED;
  pthread_mutex_lock(&s->graph_mu);
  tfd_code code;
  if (s->graph) {
    code = tfd_status_setf(st, TFD_ALREADY_EXISTS, "A Graph has already been created for this session.");
  } else {
    tfd_graph_def *def = tfd_graph_def_copy(graph);
    code = def ? install_graph(s, def, st) : tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
  }
  pthread_mutex_unlock(&s->graph_mu);
  leave(s);
  return code;
}

tfd_code tfd_session_extend(tfd_session *s, const tfd_graph_def *graph, tfd_status *st) {
  if (enter(s, st) != TFD_OK) return TFD_CANCELLED;
  pthread_mutex_lock(&s->graph_mu);
  tfd_graph_def *def = s->def ? tfd_graph_def_copy(s->def) : tfd_graph_def_new();
  tfd_code code = def ? TFD_OK : tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
  for (size_t i = 0; code == TFD_OK && i < tfd_graph_def_num_nodes(graph); i++)
    code = tfd_graph_def_append_node(def, tfd_graph_def_node(graph, i), st);
  if (code == TFD_OK) code = install_graph(s, def, st); /* the old graph stays on failure */
  else tfd_graph_def_free(def);
  pthread_mutex_unlock(&s->graph_mu);
  leave(s);
  return code;
}

tfd_code tfd_session_node_device(tfd_session *s, const char *node, char *out, tfd_status *st) {
  pthread_mutex_lock(&s->graph_mu);
  intptr_t d = (intptr_t)tfd_strmap_get(&s->placements, node);
  pthread_mutex_unlock(&s->graph_mu);
  if (!d) return tfd_status_setf(st, TFD_NOT_FOUND, "node '%s' has not been placed by any run", node);
  snprintf(out, TFD_DEVICE_NAME_MAX, "%s", tfd_device_name(s->devices[d - 1]));
  return TFD_OK;
}

tfd_code tfd_session_tensor_dtype(tfd_session *s, const char *tensor, tfd_dtype *out, tfd_status *st) {
  int index;
  char *node = tfd_parse_tensor_name(tensor, &index, st);
  if (!node) return tfd_status_code(st) != TFD_OK ? tfd_status_code(st) : TFD_INVALID_ARGUMENT;
  pthread_mutex_lock(&s->graph_mu);
  int id = s->graph ? tfd_graph_find(s->graph, node) : -1;
  tfd_code code = TFD_OK;
  if (!s->graph) code = tfd_status_setf(st, TFD_INVALID_ARGUMENT, "Session was not created with a graph before Run()!");
  else if (id < 0) code = tfd_status_setf(st, TFD_NOT_FOUND, "the graph has no node named '%s'", node);
  else if (index >= s->graph->nodes[id].num_outputs)
    code = tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' has %d outputs", node,
                           s->graph->nodes[id].num_outputs);
  else *out = s->graph->nodes[id].out_types[index];
  pthread_mutex_unlock(&s->graph_mu);
  free(node);
  return code;
}

/* ---- building executors ---- */
/* Canonical tensor names ("x" -> "x:0") so "x" and "x:0" share a signature. */
static char **canonical_names(const char *const *names, int n, bool tensors, tfd_status *st) {
  char **out = calloc((size_t)n + 1, sizeof *out);
  for (int i = 0; out && i < n; i++) {
    int index = 0;
    if (!names[i]) {
      tfd_status_setf(st, TFD_INVALID_ARGUMENT, "name %d of %d is NULL", i, n);
      goto fail;
    }
    if (tensors) {
      char *node = tfd_parse_tensor_name(names[i], &index, st);
      if (!node) goto fail;
      out[i] = tfd_format("%s:%d", node, index);
      free(node);
    } else {
      out[i] = strdup(names[i][0] == '^' ? names[i] + 1 : names[i]);
    }
    if (!out[i]) goto oom;
  }
  if (!out) goto oom;
  return out;
oom:
  tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
fail:
  for (int i = 0; out && i < n; i++) free(out[i]);
  free(out);
  return NULL;
}

static void free_names(char **names, int n) {
  for (int i = 0; names && i < n; i++) free(names[i]);
  free(names);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* "a:0,b:0->c:0//t" with each list sorted or not. Caller frees. */
static char *signature(char **feeds, int nf, char **fetches, int nfe, char **targets, int nt, bool sorted,
                       bool partial) {
  char **lists[3] = {feeds, fetches, targets};
  int counts[3] = {nf, nfe, nt};
  size_t len = 32;
  for (int l = 0; l < 3; l++)
    for (int i = 0; i < counts[l]; i++) len += strlen(lists[l][i]) + 1;
  char *key = malloc(len);
  if (!key) return NULL;
  strcpy(key, partial ? "partial:" : ""); /* partial runs need their own executors */
  for (int l = 0; l < 3; l++) {
    char **names = lists[l];
    char **copy = NULL;
    if (sorted && counts[l] > 1 && (copy = malloc((size_t)counts[l] * sizeof *copy))) {
      memcpy(copy, names, (size_t)counts[l] * sizeof *copy);
      qsort(copy, (size_t)counts[l], sizeof *copy, cmp_str);
      names = copy;
    }
    for (int i = 0; i < counts[l]; i++) {
      strcat(key, names[i]);
      strcat(key, ",");
    }
    free(copy);
    strcat(key, l == 0 ? "->" : l == 1 ? "//" : "");
  }
  return key;
}

static bundle *build_bundle(tfd_session *s, char **feeds, int nf, char **fetches, int nfe, char **targets, int nt,
                            bool partial, tfd_status *st) {
  bundle *b = calloc(1, sizeof *b);
  if (!b) {
    tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
    return NULL;
  }
  b->num_feeds = nf;
  b->num_fetches = nfe;
  b->feed_names = calloc((size_t)nf + 1, sizeof(char *));
  b->fetch_names = calloc((size_t)nfe + 1, sizeof(char *));
  b->feed_types = calloc((size_t)nf + 1, sizeof(tfd_dtype));
  b->feed_shapes = calloc((size_t)nf + 1, sizeof(tfd_shape));
  b->execs = calloc((size_t)s->num_devices, sizeof(tfd_executor *));
  b->part_defs = calloc((size_t)s->num_devices, sizeof(tfd_graph_def *));
  int *device_of = NULL;
  tfd_graph *pg = NULL;
  tfd_graph_def *sub = NULL;
  if (!b->feed_names || !b->fetch_names || !b->feed_types || !b->feed_shapes || !b->execs || !b->part_defs) goto oom;
  for (int k = 0; k < nf; k++) {
    if (!(b->feed_names[k] = strdup(feeds[k])) || !tfd_strmap_put(&b->feed_index, feeds[k], (void *)(intptr_t)(k + 1)))
      goto oom;
  }
  for (int k = 0; k < nfe; k++) {
    if (!(b->fetch_names[k] = strdup(fetches[k]))) goto oom;
    if (!tfd_strmap_get(&b->fetch_index, fetches[k]) &&
        !tfd_strmap_put(&b->fetch_index, fetches[k], (void *)(intptr_t)(k + 1)))
      goto oom;
  }
  pthread_mutex_lock(&s->graph_mu);
  if (!s->graph) {
    pthread_mutex_unlock(&s->graph_mu);
    tfd_status_setf(st, TFD_INVALID_ARGUMENT, "Session was not created with a graph before Run()!");
    goto fail;
  }
  sub = tfd_subgraph_for_run(s->graph, (const char *const *)feeds, nf, (const char *const *)fetches, nfe,
                             (const char *const *)targets, nt, b->feed_types, b->feed_shapes, st);
  if (sub && partial && tfd_subgraph_for_partial_run(sub, feeds, fetches, b->feed_types, st) != TFD_OK) {
    tfd_graph_def_free(sub);
    sub = NULL;
  }
  pg = sub ? tfd_graph_build(sub, st) : NULL;
  device_of = pg ? malloc(((size_t)pg->n + 1) * sizeof *device_of) : NULL;
  tfd_code code = pg && device_of ? TFD_OK : TFD_RESOURCE_EXHAUSTED;
  if (pg && !device_of) tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
  if (code == TFD_OK) {
    tfd_placer_options po = {s->devices,
                             s->num_devices,
                             s->registry,
                             tfd_session_options_allow_soft_placement(s->options),
                             tfd_session_options_log_device_placement(s->options),
                             &s->stateful,
                             true /* pruned: Create checked the whole graph's colocations */};
    const tfd_host_logger *outer = tfd_log_use(s->logger); /* placement's lines go to the runtime's */
    code = tfd_place(pg, &po, device_of, st);
    tfd_log_use(outer);
  }
  if (code == TFD_OK) {
    for (int i = 0; i < pg->n; i++) {
      const tfd_gnode *n = &pg->nodes[i];
      tfd_strmap_put(&s->placements, tfd_gnode_name(n), (void *)(intptr_t)(device_of[i] + 1));
      if (n->op->stateful && !tfd_strmap_get(&s->stateful, tfd_gnode_name(n)))
        tfd_strmap_put(&s->stateful, tfd_gnode_name(n), (void *)(intptr_t)(device_of[i] + 1));
    }
  }
  pthread_mutex_unlock(&s->graph_mu);
  if (code != TFD_OK) goto fail;
  tfd_graph_def **parts = b->part_defs;
  if (tfd_partition(pg, device_of, s->devices, s->num_devices, parts, st) != TFD_OK) goto fail;
  /* Compact the non-empty partitions to the front, one executor each. */
  for (int d = 0; d < s->num_devices; d++) {
    if (!parts[d]) continue;
    if (tfd_session_options_optimize_graph(s->options) && tfd_optimize_partition(&parts[d], s->devices[d], st) != TFD_OK) {
      tfd_status_prefixf(st, "optimizing the partition for %s: ", tfd_device_name(s->devices[d]));
      goto fail;
    }
    tfd_graph *part = tfd_graph_build(parts[d], st);
    if (!part) {
      tfd_status_prefixf(st, "partition for %s: ", tfd_device_name(s->devices[d]));
      goto fail;
    }
    tfd_executor *e = tfd_executor_new(part, s->devices[d], s->handle, st);
    if (!e) goto fail;
    b->part_defs[b->num_parts] = parts[d];
    if (b->num_parts != d) parts[d] = NULL;
    b->execs[b->num_parts++] = e;
  }
  for (int d = b->num_parts; d < s->num_devices; d++) parts[d] = NULL;
  if (partial) {
    b->client = pg; /* CheckFetch walks it */
    pg = NULL;
  }
  tfd_graph_free(pg);
  tfd_graph_def_free(sub);
  free(device_of);
  return b;
oom:
  tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory building executors");
fail:
  /* Partition defs beyond num_parts were not handed to an executor yet. */
  for (int d = b->num_parts; d < s->num_devices && b->part_defs; d++) {
    tfd_graph_def_free(b->part_defs[d]);
    b->part_defs[d] = NULL;
  }
  tfd_graph_free(pg);
  tfd_graph_def_free(sub);
  free(device_of);
  bundle_free(b);
  return NULL;
}

/* GetOrCreateExecutors: fast key, then sorted key, then build (and remember under both). */
static bundle *get_bundle(tfd_session *s, char **feeds, int nf, char **fetches, int nfe, char **targets, int nt,
                          bool partial, tfd_status *st) {
  char *fast = signature(feeds, nf, fetches, nfe, targets, nt, false, partial);
  char *sorted = signature(feeds, nf, fetches, nfe, targets, nt, true, partial);
  bundle *b = NULL;
  if (!fast || !sorted) {
    tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
    goto done;
  }
  pthread_mutex_lock(&s->exec_mu);
  b = tfd_strmap_get(&s->cache, fast);
  if (!b && (b = tfd_strmap_get(&s->cache, sorted))) tfd_strmap_put(&s->cache, fast, b);
  pthread_mutex_unlock(&s->exec_mu);
  if (b) goto done;
  /* Build outside the cache lock: other signatures keep running meanwhile. */
  bundle *made = build_bundle(s, feeds, nf, fetches, nfe, targets, nt, partial, st);
  if (!made) goto done;
  pthread_mutex_lock(&s->exec_mu);
  b = tfd_strmap_get(&s->cache, sorted);
  bundle **grown = b ? NULL : realloc(s->bundles, ((size_t)s->num_bundles + 1) * sizeof *grown);
  if (b) {
    bundle_free(made); /* another thread built it first */
  } else if (!grown) {
    bundle_free(made);
    tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
  } else {
    s->bundles = grown;
    s->bundles[s->num_bundles++] = made;
    tfd_strmap_put(&s->cache, sorted, made);
    b = made;
  }
  if (b) tfd_strmap_put(&s->cache, fast, b);
  pthread_mutex_unlock(&s->exec_mu);
done:
  free(fast);
  free(sorted);
  return b;
}

/* ---- running ---- */
struct tfd_run_metadata {
  int64_t step_id;
  int num_devices;
  char **devices;
  int *num_nodes;
  tfd_node_exec_stats **nodes; /* strings point into names */
  char **names;                /* node and op names, owned */
  int num_names;
  int num_parts;
  tfd_graph_def **parts;
  tfd_cost_entry *costs; /* strings point into names */
  int num_costs;
};

tfd_run_metadata *tfd_run_metadata_new(void) { return calloc(1, sizeof(tfd_run_metadata)); }

static void metadata_clear(tfd_run_metadata *m) {
  for (int d = 0; d < m->num_devices; d++) {
    free(m->devices[d]);
    free(m->nodes[d]);
  }
  free(m->devices);
  free(m->num_nodes);
  free(m->nodes);
  for (int i = 0; i < m->num_names; i++) free(m->names[i]);
  free(m->names);
  for (int i = 0; i < m->num_parts; i++) tfd_graph_def_free(m->parts[i]);
  free(m->parts);
  free(m->costs);
  memset(m, 0, sizeof *m);
}

void tfd_run_metadata_free(tfd_run_metadata *m) {
  if (!m) return;
  metadata_clear(m);
  free(m);
}

int64_t tfd_run_metadata_step_id(const tfd_run_metadata *m) { return m->step_id; }
int tfd_run_metadata_num_devices(const tfd_run_metadata *m) { return m->num_devices; }
const char *tfd_run_metadata_device(const tfd_run_metadata *m, int d) { return m->devices[d]; }
int tfd_run_metadata_num_nodes(const tfd_run_metadata *m, int d) { return m->num_nodes[d]; }
void tfd_run_metadata_node(const tfd_run_metadata *m, int d, int i, tfd_node_exec_stats *out) { *out = m->nodes[d][i]; }
int tfd_run_metadata_num_partition_graphs(const tfd_run_metadata *m) { return m->num_parts; }
int tfd_run_metadata_num_cost_nodes(const tfd_run_metadata *m) { return m->num_costs; }
void tfd_run_metadata_cost_node(const tfd_run_metadata *m, int i, tfd_cost_entry *out) { *out = m->costs[i]; }
const tfd_graph_def *tfd_run_metadata_partition_graph(const tfd_run_metadata *m, int i) { return m->parts[i]; }

static const char *keep_name(tfd_run_metadata *m, const char *s) {
  char **names = realloc(m->names, ((size_t)m->num_names + 1) * sizeof *names);
  if (!names) return "";
  m->names = names;
  char *copy = strdup(s);
  if (!copy) return "";
  m->names[m->num_names++] = copy;
  return copy;
}

/* "device\x1fnode" (any length; the caller frees it), NULL when out of memory. */
static char *cost_key(const char *device, const char *node) { return tfd_format("%s\x1f%s", device, node); }

static void entry_of(const cost_item *c, tfd_cost_entry *e) {
  *e = (tfd_cost_entry){c->device, c->node, c->op, c->runs, c->runs ? (double)c->total_micros / (double)c->runs : 0,
                        c->max_micros, c->output_bytes};
}

/* Adds a run's timings to the session's cost model. */
static void record_costs(tfd_session *s, bundle *b, tfd_node_stats **stats) {
  pthread_mutex_lock(&s->cost_mu);
  for (int p = 0; p < b->num_parts; p++) {
    const tfd_graph *g = tfd_executor_graph(b->execs[p]);
    const char *dev = tfd_device_name(tfd_executor_device(b->execs[p]));
    for (int i = 0; i < g->n; i++) {
      if (!stats[p][i].ran) continue;
      char *key = cost_key(dev, tfd_gnode_name(&g->nodes[i]));
      if (!key) continue; /* out of memory: the model just misses this node */
      cost_item *c = tfd_strmap_get(&s->costs, key);
      if (!c) {
        c = calloc(1, sizeof *c);
        if (!c || !(c->device = strdup(dev)) || !(c->node = strdup(tfd_gnode_name(&g->nodes[i]))) ||
            !tfd_strmap_put(&s->costs, key, c)) {
          if (c) {
            free(c->device);
            free(c->node);
          }
          free(c);
          free(key);
          continue; /* out of memory: the model just misses this node */
        }
        c->op = g->nodes[i].op->name;
      }
      free(key);
      int64_t us = stats[p][i].all_end_rel_micros;
      c->runs++;
      c->total_micros += us;
      if (us > c->max_micros) c->max_micros = us;
      c->output_bytes = stats[p][i].output_bytes;
    }
  }
  pthread_mutex_unlock(&s->cost_mu);
}

static int cmp_entry(const void *a, const void *b) {
  const tfd_cost_entry *x = a, *y = b;
  int d = strcmp(x->device, y->device);
  return d ? d : strcmp(x->node, y->node);
}

int tfd_session_export_cost_models(tfd_session *s, tfd_cost_entry *out, int cap) {
  pthread_mutex_lock(&s->cost_mu);
  int n = (int)s->costs.size, i = 0;
  tfd_cost_entry *all = malloc(((size_t)n + 1) * sizeof *all);
  size_t it = 0;
  const char *k;
  void *v;
  while (all && tfd_strmap_next(&s->costs, &it, &k, &v)) entry_of(v, &all[i++]);
  pthread_mutex_unlock(&s->cost_mu);
  if (!all) return 0;
  qsort(all, (size_t)i, sizeof *all, cmp_entry);
  for (int j = 0; j < i && j < cap; j++) out[j] = all[j];
  free(all);
  return n;
}

/* The cost graph of a run: the model's entries for the nodes it ran. */
static void fill_cost_graph(tfd_session *s, tfd_run_metadata *m, bundle *b) {
  int total = 0;
  for (int p = 0; p < b->num_parts; p++) total += tfd_executor_graph(b->execs[p])->n;
  m->costs = calloc((size_t)total + 1, sizeof *m->costs);
  if (!m->costs) return;
  pthread_mutex_lock(&s->cost_mu);
  for (int p = 0; p < b->num_parts; p++) {
    const tfd_graph *g = tfd_executor_graph(b->execs[p]);
    const char *dev = tfd_device_name(tfd_executor_device(b->execs[p]));
    for (int i = 0; i < g->n; i++) {
      char *key = cost_key(dev, tfd_gnode_name(&g->nodes[i]));
      cost_item *c = key ? tfd_strmap_get(&s->costs, key) : NULL;
      free(key);
      if (c) entry_of(c, &m->costs[m->num_costs++]);
    }
  }
  pthread_mutex_unlock(&s->cost_mu);
  for (int i = 0; i < m->num_costs; i++) {
    m->costs[i].device = keep_name(m, m->costs[i].device);
    m->costs[i].node = keep_name(m, m->costs[i].node);
  }
}

static void fill_metadata(tfd_run_metadata *m, bundle *b, tfd_node_stats **stats, bool partition_graphs) {
  metadata_clear(m);
  if (stats) {
    m->devices = calloc((size_t)b->num_parts, sizeof *m->devices);
    m->num_nodes = calloc((size_t)b->num_parts, sizeof *m->num_nodes);
    m->nodes = calloc((size_t)b->num_parts, sizeof *m->nodes);
    if (!m->devices || !m->num_nodes || !m->nodes) return;
    m->num_devices = b->num_parts;
    for (int p = 0; p < b->num_parts; p++) {
      const tfd_graph *g = tfd_executor_graph(b->execs[p]);
      m->devices[p] = strdup(tfd_device_name(tfd_executor_device(b->execs[p])));
      m->nodes[p] = calloc((size_t)g->n + 1, sizeof **m->nodes);
      if (!m->nodes[p]) continue;
      for (int i = 0; i < g->n; i++) {
        if (!stats[p][i].ran) continue;
        tfd_node_exec_stats *ns = &m->nodes[p][m->num_nodes[p]++];
        ns->node_name = keep_name(m, tfd_gnode_name(&g->nodes[i]));
        ns->op = g->nodes[i].op->name; /* static */
        ns->all_start_micros = stats[p][i].all_start_micros;
        ns->all_end_rel_micros = stats[p][i].all_end_rel_micros;
        ns->output_bytes = stats[p][i].output_bytes;
        ns->allocator_bytes_in_use = stats[p][i].allocator_bytes_in_use;
        ns->allocator_name = m->devices[p];
        ns->thread_id = stats[p][i].thread_id;
      }
    }
  }
  if (partition_graphs && (m->parts = calloc((size_t)b->num_parts, sizeof *m->parts))) {
    for (int p = 0; p < b->num_parts; p++)
      if ((m->parts[m->num_parts] = tfd_graph_def_copy(b->part_defs[p]))) m->num_parts++;
  }
}

/* ---- one step of a bundle ----
 * What the blocking and the asynchronous runs share: step_start checks the
 * feeds and starts every partition, step_finish turns the ended step into a
 * result. The blocking run keeps its step on the stack, runs partition 0 on
 * the calling thread and waits in between (a one-partition step that ends on
 * that thread takes no lock at all); an asynchronous run keeps it in its
 * tfd_run, starts every partition on the pool, and finishes from on_done,
 * called by the last partition to end. */
typedef struct step step;

/* Starting a partition from the pool, so partitions run side by side. */
typedef struct part_start {
  tfd_executor *e;
  tfd_executor_args args;
  step *x;
} part_start;

enum { STEP_SMALL = 8 };

struct step {
  tfd_session *s;
  bundle *b;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int remaining; /* partitions still running */
  tfd_status status;
  tfd_rendezvous *rendezvous;
  tfd_cancellation *cancel; /* NULL for a blocking step that cannot wait */
  int64_t abort_token;
  bool tracked;     /* cancel is in the session's active list */
  pthread_t caller; /* blocking: runs partition 0, then waits */
  bool solo;        /* blocking with one partition */
  bool done_inline; /* it ended on the caller's thread before the wait: no wait, no lock */
  bool timed_out;   /* blocking: the deadline passed with no cancellation to say so */
  bool trace, want_costs, partition_graphs;
  int64_t step_id;
  tfd_node_stats **stats;
  tfd_tensor **fetches; /* bundle order */
  tfd_tensor *small_fetches[STEP_SMALL];
  part_start *starts;
  part_start small_starts[STEP_SMALL];
  void (*on_done)(step *); /* asynchronous: called once, by the last partition, with no lock held */
  /* Kernels that run on the caller's thread post here (when an executor has any); the waiter drains
   * it: the blocking caller between its waits on mu/cv, an asynchronous run's waiter on the run's
   * (queue_mu/queue_cv, set before step_start; NULL: the step's own). */
  tfd_caller_queue queue;
  bool has_queue;
  pthread_mutex_t *queue_mu;
  pthread_cond_t *queue_cv;
};

static void part_done(void *arg, const tfd_status *st) {
  step *x = arg;
  if (x->solo && pthread_equal(pthread_self(), x->caller)) {
    /* Still inside tfd_executor_run_async on the caller's thread (it runs no executor code once it
     * waits), with no other partition: nothing else touches x. */
    if (st && st->code != TFD_OK) tfd_status_setf(&x->status, st->code, "%s", tfd_status_message(st));
    x->remaining = 0;
    x->done_inline = true;
    return;
  }
  pthread_mutex_lock(&x->mu);
  if (st && st->code != TFD_OK && x->status.code == TFD_OK)
    tfd_status_setf(&x->status, st->code, "%s", tfd_status_message(st));
  bool last = --x->remaining == 0;
  /* Read before unlocking: a blocking caller may return, and its step go, as soon as we do. */
  void (*on_done)(step *) = x->on_done;
  if (last && !on_done) pthread_cond_broadcast(&x->cv);
  pthread_mutex_unlock(&x->mu);
  if (last && on_done) on_done(x);
}

static void start_part(void *arg) {
  part_start *p = arg;
  tfd_executor_run_async(p->e, &p->args, part_done, p->x);
}

static void abort_rendezvous(void *arg, tfd_code code, const char *message) {
  tfd_rendezvous_abort(arg, code, message);
}

/* A step that waits on nothing ends by itself: its timeout has nothing to stop. */
static void nothing_to_stop(void *arg, tfd_code code, const char *message) { (void)arg, (void)code, (void)message; }

static tfd_code check_feeds(const bundle *b, tfd_tensor *const *feeds, tfd_status *st) {
  for (int k = 0; k < b->num_feeds; k++) {
    tfd_tensor *t = feeds[k];
    if (!t) return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "feed '%s' has no value", b->feed_names[k]);
    if (tfd_tensor_dtype(t) != b->feed_types[k])
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "feed '%s' expects %s, got a %s tensor", b->feed_names[k],
                             tfd_dtype_name(b->feed_types[k]), tfd_dtype_name(tfd_tensor_dtype(t)));
    const tfd_shape *want = &b->feed_shapes[k];
    bool ok = want->ndims < 0 || want->ndims == tfd_tensor_ndims(t);
    for (int i = 0; ok && want->ndims >= 0 && i < want->ndims; i++)
      ok = want->dims[i] < 0 || want->dims[i] == tfd_tensor_dim(t, i);
    if (!ok) {
      char ws[128], gs[128];
      tfd_shape got;
      tfd_shape_of_tensor(t, &got);
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "Cannot feed value of shape %s for tensor '%s', which has shape %s",
                             tfd_shape_string(&got, gs, sizeof gs), b->feed_names[k], tfd_shape_string(want, ws, sizeof ws));
    }
  }
  return TFD_OK;
}

static void step_free_parts(step *x) {
  for (int p = 0; x->stats && p < x->b->num_parts; p++) free(x->stats[p]);
  free(x->stats);
  x->stats = NULL;
  if (x->fetches != x->small_fetches) free(x->fetches);
  x->fetches = NULL;
  if (x->starts != x->small_starts) free(x->starts);
  x->starts = NULL;
  tfd_rendezvous_unref(x->rendezvous);
  x->rendezvous = NULL;
}

/* Checks the feeds and starts the step; on_done NULL: a blocking step, whose caller waits on x->cv and
 * then calls step_finish. cancel, when given, is a reference the step takes (an asynchronous run's,
 * which it must have); else the step makes one if it may wait. On error nothing has started and
 * nothing is left to free. An asynchronous
 * step may end (on_done called) before this returns: x is not touched after the last partition starts. */
static tfd_code step_start(step *x, tfd_session *s, bundle *b, const tfd_run_options *ro, tfd_tensor *const *feeds,
                           void (*on_done)(step *), tfd_cancellation *cancel, tfd_status *st) {
  if (check_feeds(b, feeds, st) != TFD_OK) {
    tfd_cancellation_unref(cancel);
    return tfd_status_code(st);
  }
  bool async = on_done != NULL;
  x->s = s;
  x->b = b;
  x->trace = ro && ro->trace;
  x->want_costs = ro && ro->cost_graph;
  x->partition_graphs = ro && ro->output_partition_graphs;
  bool collect = x->trace || x->want_costs || tfd_session_options_build_cost_model(s->options);
  /* What a step needs beyond its executors is made only when it can be used: a rendezvous
   * when partitions or kernels exchange tensors, a cancellation (which close() and a
   * timeout use to stop it) when a kernel may wait, or the step is asynchronous (its
   * handle can cancel it). A blocking step of neither ends by itself. */
  bool need_rendezvous = b->num_parts > 1, may_wait = false;
  for (int p = 0; p < b->num_parts; p++) {
    need_rendezvous |= tfd_executor_uses_rendezvous(b->execs[p]);
    may_wait |= tfd_executor_may_wait(b->execs[p]);
  }
  x->stats = NULL;
  x->fetches = b->num_fetches <= STEP_SMALL ? x->small_fetches : malloc((size_t)b->num_fetches * sizeof *x->fetches);
  if (x->fetches) memset(x->fetches, 0, (size_t)b->num_fetches * sizeof *x->fetches);
  x->starts = b->num_parts <= STEP_SMALL ? x->small_starts : malloc((size_t)b->num_parts * sizeof *x->starts);
  x->remaining = b->num_parts;
  x->status = (tfd_status)TFD_STATUS_INIT;
  x->rendezvous = need_rendezvous ? tfd_rendezvous_new() : NULL;
  x->caller = pthread_self();
  x->solo = !async && b->num_parts == 1;
  x->done_inline = x->timed_out = false;
  x->on_done = on_done;
  if (collect && (x->stats = calloc((size_t)b->num_parts, sizeof *x->stats)))
    for (int p = 0; p < b->num_parts; p++)
      x->stats[p] = calloc((size_t)tfd_executor_graph(b->execs[p])->n + 1, sizeof **x->stats);
  x->cancel = cancel ? cancel : may_wait ? tfd_cancellation_new() : NULL;
  if (!x->fetches || (need_rendezvous && !x->rendezvous) || (collect && !x->stats) || (async && !x->cancel) ||
      (async && !x->starts)) {
    step_free_parts(x);
    tfd_cancellation_unref(x->cancel);
    return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory starting a run");
  }
  pthread_mutex_init(&x->mu, NULL);
  pthread_cond_init(&x->cv, NULL);
  x->has_queue = false;
  for (int p = 0; p < b->num_parts; p++) x->has_queue |= tfd_executor_needs_caller(b->execs[p]);
  if (x->has_queue)
    tfd_caller_queue_init(&x->queue, x->queue_mu ? x->queue_mu : &x->mu, x->queue_cv ? x->queue_cv : &x->cv);
  /* Cancelling the step (timeout, close, tfd_run_cancel) aborts its rendezvous and wakes blocked kernels. */
  x->abort_token = x->cancel && x->rendezvous ? tfd_cancellation_register(x->cancel, abort_rendezvous, x->rendezvous) : -1;
  x->tracked = x->cancel && add_active(s, x->cancel);
  x->step_id = atomic_fetch_add(&step_id_counter, 1);
  if (b->num_parts == 0) {
    if (on_done) on_done(x);
    return TFD_OK;
  }
  /* Blocking: partitions 1..n start on the pool, partition 0 on this thread; all run at once.
   * Asynchronous: every partition starts on the pool, so this call returns at once. A synchronous
   * session or run (inter_op_thread_pool -1) has no thread but this one: it runs them all here, one
   * after another (a partition waiting on a _Recv returns, and the _Send that feeds it carries it
   * on), so an asynchronous step of one ends before the call returns unless a kernel waits. */
  tfd_threadpool *runner = ro && ro->inter_op_thread_pool < 0 ? NULL : s->inter_pool;
  int first_pooled = async ? 0 : 1;
  for (int p = b->num_parts - 1; p >= 0; p--) {
    tfd_executor_args args = {x->step_id, x->rendezvous, feeds, b->num_feeds, x->fetches, b->num_fetches,
                              runner, x->stats ? x->stats[p] : NULL, x->cancel, s->state,
                              x->has_queue ? &x->queue : NULL, x->caller, !async};
    if (p >= first_pooled && x->starts && runner) {
      x->starts[p] = (part_start){b->execs[p], args, x};
      if (tfd_threadpool_schedule(s->inter_pool, start_part, &x->starts[p], NULL) == TFD_OK) continue;
    }
    tfd_executor_run_async(b->execs[p], &args, part_done, x);
  }
  return TFD_OK;
}

/* The result of an ended step: its code (status set), and on success its fetches (bundle order, one
 * reference each) in outputs and meta filled. Releases everything step_start made. */
static tfd_code step_finish(step *x, tfd_tensor **outputs, tfd_run_metadata *meta, int64_t timeout, tfd_status *st) {
  tfd_session *s = x->s;
  bundle *b = x->b;
  if (x->tracked) remove_active(s, x->cancel);
  tfd_code code;
  const char *why = NULL;
  if (x->cancel && tfd_cancellation_reason(x->cancel, &why) != TFD_OK) {
    /* A cancelled step reports why it was cancelled, not what the kernels saw. */
    code = tfd_status_setf(st, tfd_cancellation_reason(x->cancel, NULL), "%s", why);
    tfd_status_clear(&x->status);
  } else if (x->timed_out && !x->cancel) {
    code = tfd_status_setf(st, TFD_DEADLINE_EXCEEDED, "Timed out waiting for the step (%lld ms)", (long long)timeout);
    tfd_status_clear(&x->status);
  } else if (x->status.code != TFD_OK && x->rendezvous && tfd_rendezvous_status(x->rendezvous, st) != TFD_OK) {
    /* The first kernel to fail aborted the rendezvous with its own error; other partitions then fail
     * in their _Recv nodes, and may report first: the abort is the error the user caused. */
    code = tfd_status_code(st);
    tfd_status_clear(&x->status);
  } else {
    code = tfd_status_move(st, &x->status);
  }
  if (x->cancel && x->abort_token >= 0) tfd_cancellation_deregister(x->cancel, x->abort_token);
  tfd_cancellation_unref(x->cancel);
  x->cancel = NULL;
  if (code == TFD_OK) {
    for (int k = 0; k < b->num_fetches; k++)
      if (!x->fetches[k]) {
        code = tfd_status_setf(st, TFD_INTERNAL, "fetch '%s' was not produced", b->fetch_names[k]);
        break;
      }
  }
  for (int k = 0; k < b->num_fetches; k++) {
    if (code == TFD_OK) outputs[k] = x->fetches[k];
    else tfd_tensor_unref(x->fetches[k]);
  }
  if (code == TFD_OK && x->stats) record_costs(s, b, x->stats);
  if (code == TFD_OK && meta) {
    fill_metadata(meta, b, x->trace ? x->stats : NULL, x->partition_graphs);
    if (x->want_costs) fill_cost_graph(s, meta, b);
    meta->step_id = x->step_id;
  }
  step_free_parts(x);
  pthread_mutex_destroy(&x->mu);
  pthread_cond_destroy(&x->cv);
  return code;
}

static int64_t run_timeout(const tfd_session *s, const tfd_run_options *ro) {
  return ro && ro->timeout_ms ? ro->timeout_ms : tfd_session_options_operation_timeout_ms(s->options);
}

/* The blocking run: start, wait (cancelling at the deadline), finish. */
static tfd_code run_bundle(tfd_session *s, bundle *b, const tfd_run_options *ro, tfd_tensor *const *feeds,
                           tfd_tensor **outputs, tfd_run_metadata *meta, tfd_status *st) {
  step x;
  x.queue_mu = NULL;
  x.queue_cv = NULL;
  if (step_start(&x, s, b, ro, feeds, NULL, NULL, st) != TFD_OK) return tfd_status_code(st);
  int64_t timeout = run_timeout(s, ro);
  if (!x.done_inline) {
    pthread_mutex_lock(&x.mu);
    /* Without a cancellation (none needed, or out of memory) a timeout can still abort the rendezvous.
     * Kernels that must run here arrive through the queue, run between the waits. */
    x.timed_out = tfd_wait_or_time_out_draining(&x.mu, &x.cv, &x.remaining, timeout, "the step",
                                                x.cancel ? tfd_cancel_on_timeout
                                                : x.rendezvous ? abort_rendezvous
                                                               : nothing_to_stop,
                                                x.cancel ? (void *)x.cancel : x.rendezvous, x.has_queue ? &x.queue : NULL);
    pthread_mutex_unlock(&x.mu);
  }
  return step_finish(&x, outputs, meta, timeout, st);
}

/* ---- asynchronous runs ----
 * A tfd_run is shared by the caller's handle and its step while the step
 * runs (two references). The step holds the session as a call in flight
 * (inflight) until it has ended and done has returned, so close() cancels
 * it through the active list and waits for it; after that the run touches
 * the session no more, and its handle outlives the session safely. */
struct tfd_run {
  tfd_refcount refs;
  step x;
  tfd_session *s;           /* used until the step ends */
  callable *c;              /* a callable's run keeps it (and its fetch map) */
  int *fetch_map;           /* call order -> bundle order: c's, or owned when c is NULL */
  int num_outputs;
  tfd_tensor **feeds;       /* bundle order, one reference each until the step ends */
  int num_feeds;
  tfd_tensor **outs;        /* bundle order, from step_finish */
  tfd_tensor **outputs;     /* call order, one reference each until taken or freed */
  bool taken;
  tfd_run_metadata *meta;   /* the caller's */
  tfd_run_done_fn done;
  void *done_arg;
  tfd_cancellation *cancel; /* our own reference: cancelling after the step is harmless */
  int64_t timeout_ms;       /* > 0: the step's deadline, checked by wait and ready */
  struct timespec deadline;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool ended;               /* the step ended and done returned */
  pthread_t completer;      /* the thread calling done, while it does */
  bool completing;
  tfd_status status;        /* the run's result, once ended */
};

static void release_feeds(tfd_run *r) {
  for (int k = 0; r->feeds && k < r->num_feeds; k++) tfd_tensor_unref(r->feeds[k]);
  free(r->feeds);
  r->feeds = NULL;
}

static void run_unref(tfd_run *r) {
  if (!r || !tfd_refcount_dec(&r->refs)) return;
  release_feeds(r);
  for (int i = 0; r->outputs && i < r->num_outputs; i++) tfd_tensor_unref(r->outputs[i]);
  free(r->outputs);
  free(r->outs);
  if (r->c) callable_unref(r->c);
  else free(r->fetch_map);
  tfd_cancellation_unref(r->cancel);
  tfd_status_clear(&r->status);
  pthread_mutex_destroy(&r->mu);
  pthread_cond_destroy(&r->cv);
  free(r);
}

/* on_done of an asynchronous step: the last partition has ended (or none ran). */
static void run_step_done(step *x) {
  tfd_run *r = (tfd_run *)((char *)x - offsetof(tfd_run, x));
  tfd_session *s = r->s;
  tfd_code code = step_finish(x, r->outs, r->meta, r->timeout_ms, &r->status);
  if (code == TFD_OK) {
    for (int i = 0; i < r->num_outputs; i++) r->outputs[i] = tfd_tensor_ref(r->outs[r->fetch_map[i]]);
    for (int k = 0; k < x->b->num_fetches; k++) tfd_tensor_unref(r->outs[k]);
  }
  release_feeds(r); /* before done: its inputs are free to be written from now on */
  pthread_mutex_lock(&r->mu);
  r->completer = pthread_self();
  r->completing = true;
  pthread_mutex_unlock(&r->mu);
  if (r->done) r->done(r->done_arg, &r->status);
  pthread_mutex_lock(&r->mu);
  r->completing = false;
  r->ended = true;
  pthread_cond_broadcast(&r->cv);
  pthread_mutex_unlock(&r->mu);
  leave(s); /* the last touch of the session: close() may free it from here on */
  run_unref(r); /* the step's reference */
}

/* Starts bundle b asynchronously with feeds in bundle order (borrowed; referenced here). fetch_map is
 * taken (freed on failure too) unless c, whose reference is taken either way, provides it. */
static tfd_run *start_async(tfd_session *s, bundle *b, callable *c, int *fetch_map, int num_outputs,
                            const tfd_run_options *ro, tfd_tensor *const *feeds, tfd_run_metadata *meta,
                            tfd_run_done_fn done, void *done_arg, tfd_status *st) {
  tfd_run *r = calloc(1, sizeof *r);
  if (r) {
    r->c = c;
    r->fetch_map = fetch_map;
    r->num_outputs = num_outputs;
    r->feeds = calloc((size_t)b->num_feeds + 1, sizeof *r->feeds);
    r->outs = calloc((size_t)b->num_fetches + 1, sizeof *r->outs);
    r->outputs = calloc((size_t)num_outputs + 1, sizeof *r->outputs);
  }
  if (!r || !r->feeds || !r->outs || !r->outputs) {
    if (r) {
      free(r->feeds);
      free(r->outs);
      free(r->outputs);
      free(r);
    }
    if (c) callable_unref(c);
    else free(fetch_map);
    tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory starting a run");
    return NULL;
  }
  tfd_refcount_init(&r->refs); /* the caller's */
  pthread_mutex_init(&r->mu, NULL);
  pthread_cond_init(&r->cv, NULL);
  r->status = (tfd_status)TFD_STATUS_INIT;
  r->s = s;
  r->meta = meta;
  r->done = done;
  r->done_arg = done_arg;
  r->timeout_ms = run_timeout(s, ro);
  if (r->timeout_ms > 0) r->deadline = tfd_deadline_after_ms(r->timeout_ms);
  for (int k = 0; k < b->num_feeds; k++) r->feeds[k] = feeds[k] ? tfd_tensor_ref(feeds[k]) : NULL;
  r->num_feeds = b->num_feeds;
  /* The step's reference and its hold on the session come first: it may end before step_start returns. */
  tfd_refcount_inc(&r->refs);
  pthread_mutex_lock(&s->life_mu);
  s->inflight++;
  pthread_mutex_unlock(&s->life_mu);
  r->cancel = tfd_cancellation_new();
  r->x.queue_mu = &r->mu; /* caller-thread kernels are run by whoever waits on or polls the run */
  r->x.queue_cv = &r->cv;
  tfd_code started = r->cancel ? step_start(&r->x, s, b, ro, r->feeds, run_step_done, tfd_cancellation_ref(r->cancel), st)
                               : tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory starting a run");
  if (started != TFD_OK) {
    leave(s);
    tfd_refcount_dec(&r->refs); /* the step's: it never started */
    run_unref(r);
    return NULL;
  }
  return r;
}

bool tfd_run_wait(tfd_run *r, int64_t timeout_ms, tfd_status *st) {
  struct timespec until = timeout_ms > 0 ? tfd_deadline_after_ms(timeout_ms) : (struct timespec){0, 0};
  pthread_mutex_lock(&r->mu);
  for (;;) {
    if (r->ended) break;
    if (r->x.has_queue && tfd_caller_queue_pending_locked(&r->x.queue)) { /* kernels that run here */
      tfd_caller_queue_drain_locked(&r->x.queue);
      continue;
    }
    /* The step's own deadline comes first when it is the sooner. */
    bool step_deadline = r->timeout_ms > 0 && !tfd_cancellation_is_cancelled(r->cancel) &&
                         (timeout_ms < 0 || (timeout_ms > 0 && (r->deadline.tv_sec < until.tv_sec ||
                                                                (r->deadline.tv_sec == until.tv_sec &&
                                                                 r->deadline.tv_nsec < until.tv_nsec))));
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    bool step_late = r->timeout_ms > 0 && (now.tv_sec > r->deadline.tv_sec ||
                                           (now.tv_sec == r->deadline.tv_sec && now.tv_nsec >= r->deadline.tv_nsec));
    if (step_late && !tfd_cancellation_is_cancelled(r->cancel)) {
      /* Not under mu: cancelling runs callbacks that may end the step, whose end takes mu. */
      pthread_mutex_unlock(&r->mu);
      char msg[96];
      snprintf(msg, sizeof msg, "Timed out waiting for the step (%lld ms)", (long long)r->timeout_ms);
      tfd_cancellation_cancel(r->cancel, TFD_DEADLINE_EXCEEDED, msg);
      pthread_mutex_lock(&r->mu);
      continue;
    }
    if (timeout_ms == 0) break;
    if (step_deadline) {
      pthread_cond_timedwait(&r->cv, &r->mu, &r->deadline);
    } else if (timeout_ms < 0) {
      pthread_cond_wait(&r->cv, &r->mu);
    } else if (pthread_cond_timedwait(&r->cv, &r->mu, &until) == ETIMEDOUT) {
      break;
    }
  }
  bool ended = r->ended;
  pthread_mutex_unlock(&r->mu);
  /* Once ended, status is written no more. */
  if (ended && st) tfd_status_setf(st, r->status.code, "%s", tfd_status_message(&r->status));
  return ended;
}

bool tfd_run_ready(tfd_run *r) { return tfd_run_wait(r, 0, NULL); }

int tfd_run_num_outputs(const tfd_run *r) { return r->num_outputs; }

tfd_code tfd_run_take_outputs(tfd_run *r, tfd_tensor **outputs, tfd_status *st) {
  if (!tfd_run_wait(r, 0, NULL))
    return tfd_status_setf(st, TFD_FAILED_PRECONDITION, "the run has not ended yet: wait for it first");
  if (r->status.code != TFD_OK) return tfd_status_setf(st, r->status.code, "%s", tfd_status_message(&r->status));
  pthread_mutex_lock(&r->mu);
  bool taken = r->taken;
  r->taken = true;
  pthread_mutex_unlock(&r->mu);
  if (taken) return tfd_status_setf(st, TFD_FAILED_PRECONDITION, "the outputs of this run were already taken");
  for (int i = 0; i < r->num_outputs; i++) {
    outputs[i] = r->outputs[i];
    r->outputs[i] = NULL;
  }
  return TFD_OK;
}

void tfd_run_cancel(tfd_run *r) {
  if (r) tfd_cancellation_cancel(r->cancel, TFD_CANCELLED, "Run was cancelled.");
}

void tfd_run_free(tfd_run *r) {
  if (!r) return;
  pthread_mutex_lock(&r->mu);
  bool own_done = r->completing && pthread_equal(r->completer, pthread_self());
  bool ended = r->ended;
  pthread_mutex_unlock(&r->mu);
  if (!ended && !own_done) {
    tfd_run_cancel(r);
    tfd_run_wait(r, -1, NULL);
  }
  run_unref(r);
}

/* Maps call-order names onto a bundle's order; -1 entries are impossible after lookup. */
static tfd_code map_names(const tfd_strmap *index, char **names, int n, int *map, const char *what, tfd_status *st) {
  for (int i = 0; i < n; i++) {
    intptr_t k = (intptr_t)tfd_strmap_get(index, names[i]);
    if (!k) return tfd_status_setf(st, TFD_INTERNAL, "%s '%s' lost from the executor cache", what, names[i]);
    map[i] = (int)k - 1;
  }
  return TFD_OK;
}

/* How an asynchronous call wants its run: done and its argument, and where the handle goes. NULL for a
 * blocking call. */
typedef struct async_req {
  tfd_run_done_fn done;
  void *arg;
  tfd_run *run;
} async_req;

/* Run and RunAsync: names resolved once, then the bundle run blocking, or started (async). */
static tfd_code run_impl(tfd_session *s, const tfd_run_options *ro, const char *const *feed_names,
                         tfd_tensor *const *feed_values, int nf, const char *const *fetch_names, int nfe,
                         const char *const *targets, int nt, tfd_tensor **outputs, tfd_run_metadata *meta,
                         async_req *async, tfd_status *st) {
  if (nfe == 0 && nt == 0) return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "Must specify at least one target to fetch or execute.");
  char **feeds = canonical_names(feed_names, nf, true, st);
  char **fetches = feeds ? canonical_names(fetch_names, nfe, true, st) : NULL;
  char **tgts = fetches ? canonical_names(targets, nt, false, st) : NULL;
  int *feed_map = malloc(((size_t)nf + 1) * sizeof *feed_map), *fetch_map = malloc(((size_t)nfe + 1) * sizeof *fetch_map);
  tfd_tensor **ordered = calloc((size_t)nf + 1, sizeof *ordered), **outs = calloc((size_t)nfe + 1, sizeof *outs);
  tfd_code code = tgts ? TFD_OK : tfd_status_code(st);
  if (code == TFD_OK && (!feed_map || !fetch_map || !ordered || !outs))
    code = tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
  bundle *b = code == TFD_OK ? get_bundle(s, feeds, nf, fetches, nfe, tgts, nt, false, st) : NULL;
  if (code == TFD_OK && !b) code = tfd_status_code(st);
  if (code == TFD_OK) code = map_names(&b->feed_index, feeds, nf, feed_map, "feed", st);
  if (code == TFD_OK) code = map_names(&b->fetch_index, fetches, nfe, fetch_map, "fetch", st);
  if (code == TFD_OK) for (int i = 0; i < nf; i++) ordered[feed_map[i]] = feed_values[i];
  if (code == TFD_OK && async) {
    async->run = start_async(s, b, NULL, fetch_map, nfe, ro, ordered, meta, async->done, async->arg, st);
    fetch_map = NULL; /* the run's now, or freed */
    code = async->run ? TFD_OK : tfd_status_code(st);
  } else if (code == TFD_OK) {
    code = run_bundle(s, b, ro, ordered, outs, meta, st);
    if (code == TFD_OK)
      for (int i = 0; i < nfe; i++) outputs[i] = tfd_tensor_ref(outs[fetch_map[i]]);
    for (int k = 0; code == TFD_OK && k < b->num_fetches; k++) tfd_tensor_unref(outs[k]);
  }
  free_names(feeds, nf);
  free_names(fetches, nfe);
  free_names(tgts, nt);
  free(feed_map);
  free(fetch_map);
  free(ordered);
  free(outs);
  return code;
}

static int64_t make_callable_impl(tfd_session *s, const char *const *feed_names, int nf,
                                  const char *const *fetch_names, int nfe, const char *const *targets, int nt,
                                  tfd_status *st) {
  if (nfe == 0 && nt == 0) {
    tfd_status_setf(st, TFD_INVALID_ARGUMENT, "Must specify at least one target to fetch or execute.");
    return -1;
  }
  char **feeds = canonical_names(feed_names, nf, true, st);
  char **fetches = feeds ? canonical_names(fetch_names, nfe, true, st) : NULL;
  char **tgts = fetches ? canonical_names(targets, nt, false, st) : NULL;
  callable *c = calloc(1, sizeof *c);
  int64_t handle = -1;
  bundle *b = tgts && c ? get_bundle(s, feeds, nf, fetches, nfe, tgts, nt, false, st) : NULL;
  if (b) {
    tfd_refcount_init(&c->refs); /* the table's */
    c->b = b;
    c->num_feeds = nf;
    c->num_fetches = nfe;
    c->feed_map = malloc(((size_t)nf + 1) * sizeof(int));
    c->fetch_map = malloc(((size_t)nfe + 1) * sizeof(int));
    if (c->feed_map && c->fetch_map && map_names(&b->feed_index, feeds, nf, c->feed_map, "feed", st) == TFD_OK &&
        map_names(&b->fetch_index, fetches, nfe, c->fetch_map, "fetch", st) == TFD_OK) {
      pthread_mutex_lock(&s->exec_mu);
      handle = handle_add(&s->callables, s->id, c);
      pthread_mutex_unlock(&s->exec_mu);
    }
  } else if (!c) {
    tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
  }
  if (handle < 0) {
    if (c) {
      free(c->feed_map);
      free(c->fetch_map);
      free(c);
    }
    if (tfd_status_code(st) == TFD_OK) tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
  }
  free_names(feeds, nf);
  free_names(fetches, nfe);
  free_names(tgts, nt);
  return handle;
}

/* The callable, with a reference for the caller (callable_unref). */
static callable *find_callable(tfd_session *s, int64_t handle, tfd_status *st) {
  pthread_mutex_lock(&s->exec_mu);
  int i = handle_find(&s->callables, handle);
  callable *c = i >= 0 ? s->callables.objs[i] : NULL;
  if (c) tfd_refcount_inc(&c->refs);
  pthread_mutex_unlock(&s->exec_mu);
  if (!c) unknown_handle(s, handle, "callable", "released", st);
  return c;
}

static tfd_code run_callable_impl(tfd_session *s, int64_t handle, const tfd_run_options *ro,
                                  tfd_tensor *const *feed_values, tfd_tensor **outputs, tfd_run_metadata *meta,
                                  async_req *async, tfd_status *st) {
  callable *c = find_callable(s, handle, st);
  if (!c) return TFD_INVALID_ARGUMENT;
  enum { SMALL = 16 };
  tfd_tensor *small_in[SMALL], *small_out[SMALL];
  tfd_tensor **ordered = c->b->num_feeds <= SMALL ? small_in : calloc((size_t)c->b->num_feeds, sizeof *ordered);
  tfd_tensor **outs = c->b->num_fetches <= SMALL ? small_out : calloc((size_t)c->b->num_fetches, sizeof *outs);
  tfd_code code = TFD_OK;
  if (!ordered || !outs) code = tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
  if (code == TFD_OK) for (int i = 0; i < c->num_feeds; i++) ordered[c->feed_map[i]] = feed_values[i];
  if (code == TFD_OK && async) {
    tfd_refcount_inc(&c->refs); /* the run's */
    async->run = start_async(s, c->b, c, c->fetch_map, c->num_fetches, ro, ordered, meta, async->done, async->arg, st);
    code = async->run ? TFD_OK : tfd_status_code(st);
  } else if (code == TFD_OK) {
    code = run_bundle(s, c->b, ro, ordered, outs, meta, st);
    if (code == TFD_OK) {
      for (int i = 0; i < c->num_fetches; i++) outputs[i] = tfd_tensor_ref(outs[c->fetch_map[i]]);
      for (int k = 0; k < c->b->num_fetches; k++) tfd_tensor_unref(outs[k]);
    }
  }
  if (ordered != small_in) free(ordered);
  if (outs != small_out) free(outs);
  callable_unref(c);
  return code;
}

tfd_code tfd_session_release_callable(tfd_session *s, int64_t handle, tfd_status *st) {
  pthread_mutex_lock(&s->exec_mu);
  callable *c = handle_remove(&s->callables, handle);
  pthread_mutex_unlock(&s->exec_mu);
  if (!c) return unknown_handle(s, handle, "callable", "released", st);
  callable_unref(c); /* runs in flight keep theirs */
  return TFD_OK;
}

/* ---- public entry points: each runs between enter and leave ---- */
tfd_code tfd_session_run(tfd_session *s, const tfd_run_options *ro, const char *const *feed_names,
                         tfd_tensor *const *feed_values, int nf, const char *const *fetch_names, int nfe,
                         const char *const *targets, int nt, tfd_tensor **outputs, tfd_run_metadata *meta,
                         tfd_status *st) {
  if (enter(s, st) != TFD_OK) return TFD_CANCELLED;
  tfd_code code = check_graph_created(s, "Run()", st);
  if (code == TFD_OK)
    code = run_impl(s, ro, feed_names, feed_values, nf, fetch_names, nfe, targets, nt, outputs, meta, NULL, st);
  leave(s);
  return code;
}

tfd_run *tfd_session_run_async(tfd_session *s, const tfd_run_options *ro, const char *const *feed_names,
                               tfd_tensor *const *feed_values, int nf, const char *const *fetch_names, int nfe,
                               const char *const *targets, int nt, tfd_run_metadata *meta, tfd_run_done_fn done,
                               void *done_arg, tfd_status *st) {
  if (enter(s, st) != TFD_OK) return NULL;
  async_req a = {done, done_arg, NULL};
  if (check_graph_created(s, "Run()", st) == TFD_OK)
    run_impl(s, ro, feed_names, feed_values, nf, fetch_names, nfe, targets, nt, NULL, meta, &a, st);
  leave(s); /* a run that started holds the session until it ends */
  return a.run;
}

int64_t tfd_session_make_callable(tfd_session *s, const char *const *feed_names, int nf,
                                  const char *const *fetch_names, int nfe, const char *const *targets, int nt,
                                  tfd_status *st) {
  if (enter(s, st) != TFD_OK) return -1;
  int64_t h = check_graph_created(s, "MakeCallable()", st) == TFD_OK
                  ? make_callable_impl(s, feed_names, nf, fetch_names, nfe, targets, nt, st)
                  : -1;
  leave(s);
  return h;
}

tfd_code tfd_session_run_callable(tfd_session *s, int64_t handle, const tfd_run_options *ro,
                                  tfd_tensor *const *feed_values, tfd_tensor **outputs, tfd_run_metadata *meta,
                                  tfd_status *st) {
  if (enter(s, st) != TFD_OK) return TFD_CANCELLED;
  tfd_code code = run_callable_impl(s, handle, ro, feed_values, outputs, meta, NULL, st);
  leave(s);
  return code;
}

tfd_run *tfd_session_run_callable_async(tfd_session *s, int64_t handle, const tfd_run_options *ro,
                                        tfd_tensor *const *feed_values, tfd_run_metadata *meta, tfd_run_done_fn done,
                                        void *done_arg, tfd_status *st) {
  if (enter(s, st) != TFD_OK) return NULL;
  async_req a = {done, done_arg, NULL};
  run_callable_impl(s, handle, ro, feed_values, NULL, meta, &a, st);
  leave(s); /* a run that started holds the session until it ends */
  return a.run;
}

/* ---- partial runs ----
 * The executors start at setup and wait, on client-keyed _Recv nodes, for
 * feeds; fetches arrive through client-keyed _Send nodes. A live partial
 * run counts as a call in flight, so close() waits for its executors.
 *
 * A run is shared by reference: the session's handle table, each prun call
 * using it, and its running executors hold one each, so closing a handle
 * while another thread feeds or fetches through it wakes that thread with
 * CANCELLED and frees nothing it still uses. */
enum { PRUN_OPEN, PRUN_FINISHED, PRUN_CLOSED };

struct partial_run {
  tfd_refcount refs;
  tfd_session *s;
  bundle *b;
  pthread_mutex_t mu; /* one prun at a time per handle */
  atomic_int state;   /* PRUN_OPEN, then PRUN_FINISHED or PRUN_CLOSED (out of the table) */
  tfd_rendezvous *rendezvous;
  tfd_cancellation *cancel;
  int64_t abort_token;
  pthread_mutex_t bar_mu;
  pthread_cond_t bar_cv;
  int remaining; /* partitions still running */
  tfd_status status;
  bool *fed, *fetched;
  int inputs_left, outputs_left;
};

static void prun_unref(partial_run *r) {
  if (!r || !tfd_refcount_dec(&r->refs)) return;
  if (r->abort_token >= 0) tfd_cancellation_deregister(r->cancel, r->abort_token);
  tfd_cancellation_unref(r->cancel);
  tfd_rendezvous_unref(r->rendezvous);
  tfd_status_clear(&r->status);
  pthread_mutex_destroy(&r->mu);
  pthread_mutex_destroy(&r->bar_mu);
  pthread_cond_destroy(&r->bar_cv);
  free(r->fed);
  free(r->fetched);
  free(r);
}

static void partial_part_done(void *arg, const tfd_status *st) {
  partial_run *r = arg;
  pthread_mutex_lock(&r->bar_mu);
  if (st && st->code != TFD_OK && r->status.code == TFD_OK) tfd_status_setf(&r->status, st->code, "%s", tfd_status_message(st));
  bool last = --r->remaining == 0;
  if (last) pthread_cond_broadcast(&r->bar_cv);
  tfd_session *s = r->s;
  tfd_cancellation *cancel = last ? tfd_cancellation_ref(r->cancel) : NULL;
  pthread_mutex_unlock(&r->bar_mu);
  if (last) {
    remove_active(s, cancel);
    tfd_cancellation_unref(cancel);
    prun_unref(r); /* the executors' reference */
    leave(s);      /* the run's own hold on the session */
  }
}

/* Names listed twice in a setup would make two sends or recvs of one key. */
static tfd_code check_distinct(char **names, int n, const char *what, tfd_status *st) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < i; j++)
      if (strcmp(names[i], names[j]) == 0)
        return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "partial_run_setup lists %s '%s' twice", what, names[i]);
  return TFD_OK;
}

int64_t tfd_session_prun_setup(tfd_session *s, const char *const *inputs, int ni, const char *const *outputs, int no,
                               const char *const *targets, int nt, tfd_status *st) {
  if (enter(s, st) != TFD_OK) return -1;
  if (check_graph_created(s, "PRunSetup()", st) != TFD_OK) {
    leave(s);
    return -1;
  }
  char **feeds = canonical_names(inputs, ni, true, st);
  char **fetches = feeds ? canonical_names(outputs, no, true, st) : NULL;
  char **tgts = fetches ? canonical_names(targets, nt, false, st) : NULL;
  int64_t handle = -1;
  partial_run *r = NULL;
  bundle *b = NULL;
  if (tgts && no == 0 && nt == 0)
    tfd_status_setf(st, TFD_INVALID_ARGUMENT, "Must specify at least one target to fetch or execute.");
  else if (tgts && check_distinct(feeds, ni, "input", st) == TFD_OK && check_distinct(fetches, no, "output", st) == TFD_OK)
    b = get_bundle(s, feeds, ni, fetches, no, tgts, nt, true, st);
  if (b) r = calloc(1, sizeof *r);
  if (b && r) {
    tfd_refcount_init(&r->refs); /* the table's */
    r->s = s;
    r->b = b;
    r->fed = calloc((size_t)ni + 1, sizeof *r->fed);
    r->fetched = calloc((size_t)no + 1, sizeof *r->fetched);
    r->inputs_left = ni;
    r->outputs_left = no;
    r->rendezvous = tfd_rendezvous_new();
    r->cancel = tfd_cancellation_new();
    r->abort_token = -1;
    r->status = (tfd_status)TFD_STATUS_INIT;
    pthread_mutex_init(&r->mu, NULL);
    pthread_mutex_init(&r->bar_mu, NULL);
    pthread_cond_init(&r->bar_cv, NULL);
    if (!r->fed || !r->fetched || !r->rendezvous || !r->cancel) {
      prun_unref(r);
      r = NULL;
      tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
    }
  } else if (b) {
    tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
  }
  if (r) {
    /* Everything is running before the handle is published: another thread that finds (or guesses) it can
     * close the run at once. */
    tfd_refcount_inc(&r->refs); /* the executors', dropped by the last of them */
    r->abort_token = tfd_cancellation_register(r->cancel, abort_rendezvous, r->rendezvous);
    add_active(s, r->cancel);
    pthread_mutex_lock(&s->life_mu);
    s->inflight++; /* held until the executors finish */
    pthread_mutex_unlock(&s->life_mu);
    r->remaining = b->num_parts;
    int64_t step_id = atomic_fetch_add(&step_id_counter, 1);
    for (int p = 0; p < b->num_parts; p++) {
      tfd_executor_args args = {step_id, r->rendezvous, NULL, 0, NULL, 0, s->inter_pool, NULL, r->cancel, s->state,
                                NULL, pthread_self(), false}; /* partial runs have no caller to run kernels on */
      tfd_executor_run_async(b->execs[p], &args, partial_part_done, r);
    }
    pthread_mutex_lock(&s->exec_mu);
    handle = handle_add(&s->pruns, s->id, r);
    pthread_mutex_unlock(&s->exec_mu);
    if (handle < 0) {
      drop_prun(s, handle, r, "out of memory publishing a partial run", NULL); /* stops the executors */
      prun_unref(r);
      tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
    }
  }
  free_names(feeds, ni);
  free_names(fetches, no);
  free_names(tgts, nt);
  leave(s);
  return handle;
}

/* The run, with a reference for the caller (prun_unref). */
static partial_run *find_prun(tfd_session *s, int64_t handle, tfd_status *st) {
  pthread_mutex_lock(&s->exec_mu);
  int i = handle_find(&s->pruns, handle);
  partial_run *r = i >= 0 ? s->pruns.objs[i] : NULL;
  if (r) tfd_refcount_inc(&r->refs);
  pthread_mutex_unlock(&s->exec_mu);
  if (!r) unknown_handle(s, handle, "partial run", "finished or closed: run prun_setup first", st);
  return r;
}

/* CheckFetch: every feed the fetch depends on must be fed already (or in this call). */
static tfd_code check_fetch(partial_run *r, int fetch, const bool *fed_now, tfd_status *st) {
  const tfd_graph *g = r->b->client;
  char name[32];
  snprintf(name, sizeof name, "_fetch_%d", fetch);
  int start = tfd_graph_find(g, name);
  if (start < 0) return TFD_OK;
  bool *seen = calloc((size_t)g->n, sizeof *seen);
  int *stack = malloc((size_t)g->n * sizeof *stack), top = 0;
  tfd_code code = TFD_OK;
  if (!seen || !stack) code = tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
  if (code == TFD_OK) seen[stack[top++] = start] = true;
  while (code == TFD_OK && top > 0) {
    const tfd_gnode *n = &g->nodes[stack[--top]];
    const tfd_attr_value *idx = strncmp(tfd_gnode_name(n), "_feed_", 6) == 0 ? tfd_node_def_attr(n->def, "index") : NULL;
    if (idx && !r->fed[idx->i] && !fed_now[idx->i]) {
      code = tfd_status_setf(st, TFD_INVALID_ARGUMENT,
                             "Fetch %s can't be computed from the feeds that have been fed so far: feed %s is missing",
                             r->b->fetch_names[fetch], r->b->feed_names[idx->i]);
      break;
    }
    for (int k = 0; k < n->num_inputs; k++)
      if (!seen[n->inputs[k].node]) seen[stack[top++] = n->inputs[k].node] = true;
    for (int k = 0; k < n->num_control; k++)
      if (!seen[n->control[k]]) seen[stack[top++] = n->control[k]] = true;
  }
  free(seen);
  free(stack);
  return code;
}

typedef struct recv_wait {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int pending; /* 1 until the fetch arrives or fails */
  tfd_tensor *t;
  tfd_status status;
} recv_wait;

static void client_recv_done(void *arg, tfd_tensor *t, const tfd_status *st) {
  recv_wait *w = arg;
  pthread_mutex_lock(&w->mu);
  if (t) w->t = tfd_tensor_ref(t);
  else tfd_status_setf(&w->status, st ? st->code : TFD_ABORTED, "%s", st ? tfd_status_message(st) : "aborted");
  w->pending = 0;
  pthread_cond_signal(&w->cv);
  pthread_mutex_unlock(&w->mu);
}

/* Takes the run out of the session's table (once: later callers find
 * nothing), cancelling it first when `cancel_why` is given, then waits for
 * its executors: a finished run's targets get the session's operation
 * timeout to complete, and are cancelled with DEADLINE_EXCEEDED after it. */
static tfd_code drop_prun(tfd_session *s, int64_t handle, partial_run *r, const char *cancel_why, tfd_status *st) {
  pthread_mutex_lock(&s->exec_mu);
  bool mine = handle_remove(&s->pruns, handle) == r;
  pthread_mutex_unlock(&s->exec_mu);
  if (cancel_why) tfd_cancellation_cancel(r->cancel, TFD_CANCELLED, cancel_why);
  int64_t timeout = cancel_why ? 0 : tfd_session_options_operation_timeout_ms(s->options);
  tfd_code code = TFD_OK;
  const char *why = NULL;
  pthread_mutex_lock(&r->bar_mu);
  if (tfd_wait_or_time_out(&r->bar_mu, &r->bar_cv, &r->remaining, timeout, "the partial run's targets",
                           tfd_cancel_on_timeout, r->cancel)) {
    tfd_code reason = tfd_cancellation_reason(r->cancel, &why);
    code = tfd_status_setf(st, reason, "%s", why);
  } else if (!cancel_why && r->status.code != TFD_OK)
    code = tfd_status_setf(st, r->status.code, "%s", tfd_status_message(&r->status)); /* a target failed */
  pthread_mutex_unlock(&r->bar_mu);
  if (mine) prun_unref(r); /* the table's reference */
  return code;
}

tfd_code tfd_session_prun(tfd_session *s, int64_t handle, const char *const *feed_names, tfd_tensor *const *feed_values,
                          int nf, const char *const *fetch_names, int nfe, tfd_tensor **outputs, tfd_status *st) {
  if (enter(s, st) != TFD_OK) return TFD_CANCELLED;
  partial_run *r = find_prun(s, handle, st);
  if (!r) {
    leave(s);
    return TFD_INVALID_ARGUMENT;
  }
  pthread_mutex_lock(&r->mu);
  bundle *b = r->b;
  for (int i = 0; i < nfe; i++) outputs[i] = NULL;
  char **feeds = NULL, **fetches = NULL;
  bool *fed_now = NULL;
  int *fetch_idx = NULL;
  tfd_code code = TFD_OK;
  tfd_status aborted = TFD_STATUS_INIT;
  int state = atomic_load(&r->state);
  if (state == PRUN_CLOSED) {
    code = tfd_status_setf(st, TFD_CANCELLED, "partial run %lld was closed", (long long)handle);
  } else if (state == PRUN_FINISHED) {
    code = tfd_status_setf(st, TFD_FAILED_PRECONDITION,
                           "partial run %lld has finished: every input was fed and every output fetched",
                           (long long)handle);
  } else if (tfd_rendezvous_status(r->rendezvous, &aborted) != TFD_OK) {
    /* An earlier call's step failed (or was cancelled): say so, not what this call would have tripped on. */
    code = tfd_status_setf(st, tfd_status_code(&aborted), "partial run %lld was aborted by an earlier error: %s",
                           (long long)handle, tfd_status_message(&aborted));
  }
  tfd_status_clear(&aborted);
  if (code == TFD_OK) {
    feeds = canonical_names(feed_names, nf, true, st);
    fetches = feeds ? canonical_names(fetch_names, nfe, true, st) : NULL;
    fed_now = calloc((size_t)b->num_feeds + 1, sizeof *fed_now);
    fetch_idx = calloc((size_t)nfe + 1, sizeof *fetch_idx);
    code = fetches ? TFD_OK : tfd_status_code(st);
    if (code == TFD_OK && (!fed_now || !fetch_idx)) code = tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
  }
  /* Check everything before touching the run, so a refused call changes nothing. */
  for (int i = 0; code == TFD_OK && i < nf; i++) {
    intptr_t k = (intptr_t)tfd_strmap_get(&b->feed_index, feeds[i]);
    if (!k) code = tfd_status_setf(st, TFD_INVALID_ARGUMENT, "The feed %s was not specified in partial_run_setup.", feeds[i]);
    else if (r->fed[k - 1] || fed_now[k - 1]) code = tfd_status_setf(st, TFD_INVALID_ARGUMENT, "The feed %s has already been fed.", feeds[i]);
    else if (!feed_values[i] || tfd_tensor_dtype(feed_values[i]) != b->feed_types[k - 1])
      code = tfd_status_setf(st, TFD_INVALID_ARGUMENT, "feed '%s' expects %s, got %s", feeds[i],
                             tfd_dtype_name(b->feed_types[k - 1]),
                             feed_values[i] ? tfd_dtype_name(tfd_tensor_dtype(feed_values[i])) : "nothing");
    else fed_now[k - 1] = true;
  }
  for (int i = 0; code == TFD_OK && i < nfe; i++) {
    intptr_t k = (intptr_t)tfd_strmap_get(&b->fetch_index, fetches[i]);
    if (!k) code = tfd_status_setf(st, TFD_INVALID_ARGUMENT, "The fetch %s was not specified in partial_run_setup.", fetches[i]);
    else if (r->fetched[k - 1]) code = tfd_status_setf(st, TFD_INVALID_ARGUMENT, "The fetch %s has already been fetched.", fetches[i]);
    else {
      fetch_idx[i] = (int)k - 1;
      for (int j = 0; j < i; j++)
        if (fetch_idx[j] == fetch_idx[i]) code = tfd_status_setf(st, TFD_INVALID_ARGUMENT, "The fetch %s is requested twice.", fetches[i]);
      if (code == TFD_OK) code = check_fetch(r, fetch_idx[i], fed_now, st);
    }
  }
  for (int i = 0; code == TFD_OK && i < nf; i++) {
    int k = (int)(intptr_t)tfd_strmap_get(&b->feed_index, feeds[i]) - 1;
    char *key = tfd_rendezvous_key(TFD_CLIENT_DEVICE, 0, TFD_CLIENT_DEVICE, feeds[i]);
    code = key ? tfd_rendezvous_send(r->rendezvous, key, feed_values[i], st)
               : tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
    free(key);
    if (code == TFD_OK) {
      r->fed[k] = true;
      r->inputs_left--;
    }
  }
  int64_t timeout = tfd_session_options_operation_timeout_ms(s->options);
  for (int i = 0; code == TFD_OK && i < nfe; i++) {
    recv_wait w = {.pending = 1, .status = TFD_STATUS_INIT};
    pthread_mutex_init(&w.mu, NULL);
    pthread_cond_init(&w.cv, NULL);
    char *key = tfd_rendezvous_key(TFD_CLIENT_DEVICE, 0, TFD_CLIENT_DEVICE, fetches[i]);
    if (key) tfd_rendezvous_recv(r->rendezvous, key, client_recv_done, &w);
    else client_recv_done(&w, NULL, NULL);
    free(key);
    pthread_mutex_lock(&w.mu);
    tfd_wait_or_time_out(&w.mu, &w.cv, &w.pending, timeout, "a partial run fetch", tfd_cancel_on_timeout, r->cancel);
    pthread_mutex_unlock(&w.mu);
    if (w.t) {
      outputs[i] = w.t;
      r->fetched[fetch_idx[i]] = true;
      r->outputs_left--;
    } else {
      /* The step failed: report why it was cancelled, or the kernel's error if there is one. */
      const char *why = NULL;
      tfd_code cancelled = tfd_cancellation_reason(r->cancel, &why);
      if (cancelled != TFD_OK) code = tfd_status_setf(st, cancelled, "%s", why);
      else if (tfd_rendezvous_status(r->rendezvous, st) != TFD_OK) code = tfd_status_code(st); /* the first error */
      else code = tfd_status_move(st, &w.status);
    }
    tfd_status_clear(&w.status);
    pthread_mutex_destroy(&w.mu);
    pthread_cond_destroy(&w.cv);
  }
  /* Done, as TensorFlow's PendingDone: every input fed and every output fetched. */
  bool finished = code == TFD_OK && r->outputs_left == 0 && r->inputs_left == 0;
  if (finished) atomic_store(&r->state, PRUN_FINISHED);
  free_names(feeds, nf);
  free_names(fetches, nfe);
  free(fed_now);
  free(fetch_idx);
  pthread_mutex_unlock(&r->mu);
  if (finished) code = drop_prun(s, handle, r, NULL, st); /* the run state goes */
  if (code != TFD_OK)
    for (int i = 0; i < nfe; i++) { /* a failed call hands out nothing */
      tfd_tensor_unref(outputs[i]);
      outputs[i] = NULL;
    }
  prun_unref(r);
  leave(s);
  return code;
}

tfd_code tfd_session_prun_close(tfd_session *s, int64_t handle, tfd_status *st) {
  if (enter(s, st) != TFD_OK) return TFD_CANCELLED;
  partial_run *r = find_prun(s, handle, st);
  if (r) {
    /* Not under r->mu: a prun blocked on a fetch holds it until the cancel below wakes it. */
    atomic_store(&r->state, PRUN_CLOSED);
    drop_prun(s, handle, r, "partial run closed", NULL);
    prun_unref(r);
  }
  leave(s);
  return r ? TFD_OK : TFD_INVALID_ARGUMENT;
}
