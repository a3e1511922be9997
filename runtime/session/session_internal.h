/* DirectSession's internals, shared by the files that make it up (runtime/session/): the session
 * object, the executor bundles its cache holds, callables and handle tables, one step of a bundle,
 * asynchronous runs and run metadata. Nothing outside runtime/session/ includes this. */
#ifndef TFDEV_RUNTIME_SESSION_INTERNAL_H
#define TFDEV_RUNTIME_SESSION_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "../core/refcount.h"
#include "../core/status_internal.h"
#include "../core/strmap.h"
#include "../exec/executor.h"
#include "../framework/caller_queue.h"
#include "../framework/cancellation.h"
#include "../framework/session_state.h"
#include "tfdev/runtime.h"
#include "tfdev/session.h"

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
  atomic_llong runs;      /* steps started, for build_cost_model_after (TensorFlow's step_count) */
  bool control_flow;      /* the run's graph has control flow: a fetch may be dead */
  bool step_resources;    /* it makes per-step resources (TensorArrays): removed when each step ends */
} bundle;

/* A callable is shared by the session's table and each call running it, so
 * releasing it while another thread runs it frees nothing under that run. */
typedef struct callable {
  tfd_refcount refs;
  bundle *b; /* owned by the session */
  int num_feeds, num_fetches;
  int *feed_map;  /* call order -> bundle order */
  int *fetch_map; /* call order -> bundle order */
  bool has_run_options; /* CallableOptions.run_options: used by calls given none */
  tfd_run_options run_options;
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
  /* Drops the table's reference to an entry (when the table is freed). Every entry of a table is one
   * kind, released by the one function its adds give: the table knows nothing of what it holds. */
  void (*release)(void *obj);
} handle_table;

typedef struct session_factory session_factory;

/* A running step's (or partial run's) place in its session's list of what close() must cancel:
 * linked in place, so that making a step cancellable never needs memory. */
typedef struct active_step {
  tfd_cancellation *cancel;
  tfd_caller_queue *queue; /* the step's, when kernels run on its caller's thread: close() empties it */
  struct active_step *prev, *next;
} active_step;

/* One of a session's inter-op pools, and who frees it. */
typedef enum { POOL_OWNED, POOL_BORROWED, POOL_SHARED_DEFAULT } pool_owner;
typedef struct session_pool {
  tfd_threadpool *pool;
  pool_owner owner; /* BORROWED: the runtime's (its host's scheduler, or a pool shared by global name) */
} session_pool;

struct tfd_session {
  tfd_session_options *options;
  tfd_factory_registry *registry;
  tfd_device_list *device_list;
  tfd_device **devices;
  int num_devices;
  tfd_device_mgr *mgr;
  char handle[32];
  /* The inter-op pools runs pick from (session_inter_op_thread_pool; one when none is listed). A
   * synchronous session (inter_op_threads < 0) makes none: every entry is NULL. */
  session_pool *pools;
  int num_pools;
  tfd_threadpool *inter_pool; /* pools[0]'s: what partial runs use */
  const tfd_host_logger *logger; /* the runtime's, or NULL: where placement's lines go */
  pthread_mutex_t graph_mu;
  tfd_graph_def *def;
  tfd_graph *graph;
  tfd_strmap stateful;   /* stateful node -> device index + 1; never moves */
  /* Unless place_pruned_graph: every node -> device index + 1, as the whole graph was placed at
   * the latest Create or Extend. Runs keep these, as TensorFlow's runs prune a placed graph. */
  tfd_strmap whole;
  tfd_strmap placements; /* node -> device index + 1, from the latest build */
  pthread_mutex_t exec_mu;
  tfd_strmap cache; /* signature -> bundle* (several keys may share one) */
  bundle **bundles;
  int num_bundles;
  handle_table callables; /* callable*, each holding one reference for the table */
  /* Lifetime: calls in flight and the cancellations of running steps, so
   * close() can cancel them and wait until nothing touches the session. inflight
   * counts the calls plus one for the open session (see tfd_ds_leave): while the
   * session is open a call enters and leaves with one atomic operation each;
   * life_mu guards the active list, close()'s wait and the last call's leave. */
  pthread_mutex_t life_mu;
  pthread_cond_t life_cv;
  atomic_bool closed;
  atomic_int inflight;
  active_step active; /* the list's head: cancellations of running steps and partial runs */
  tfd_session_state *state; /* tensors kept by handle between runs */
  pthread_mutex_t cost_mu;
  tfd_strmap costs; /* "device\x1fnode" -> cost_item* */
  handle_table pruns; /* partial_run*, each holding one reference for the table */
  int64_t id;         /* process-wide serial: the high half of every handle */
  session_factory *factory; /* the factory that recorded it (session_factory.c); NULL once removed */
  int factory_pins;         /* a factory Reset is using it: its free waits (guarded by the factory's lock) */
  bool finalized;           /* Finalize: no new executors, no Extend (guarded by graph_mu) */
};

/* One node's entry in the cost model. */
typedef struct cost_item {
  char *device, *node;
  const char *op; /* static, from the op registry */
  int64_t runs, total_micros, max_micros, output_bytes;
  int num_outputs; /* -1 until the first record */
  tfd_output_info outputs[TFD_COST_MAX_OUTPUTS];
} cost_item;

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
  tfd_allocation_record **records; /* the nodes' allocation records, owned */
  int num_records;
};

/* ---- one step of a bundle ----
 * What the blocking and the asynchronous runs share: step_start checks the
 * feeds and starts every partition, step_finish turns the ended step into a
 * result. The blocking run keeps its step on the stack, runs partition 0 on
 * the calling thread and waits in between (a one-partition step that ends on
 * that thread takes no lock at all); an asynchronous run keeps it in its
 * tfd_run, starts every partition on the pool, and finishes from on_done,
 * called by the last partition to end. */
typedef struct step step;

/* Starting a partition from the pool, so partitions run side by side (tfd_ds_start_part): a step's
 * or a partial run's, each told to done(arg) when it ends. */
typedef struct part_start {
  tfd_executor *e;
  tfd_executor_args args;
  tfd_executor_done done;
  void *arg;
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
  int64_t abort_token; /* the rendezvous' abort, which holds a reference to it (cancellation.h) */
  active_step link;    /* in the session's active list while cancel is set */
  pthread_t caller; /* blocking: runs partition 0, then waits */
  bool solo;        /* blocking with one partition */
  bool done_inline; /* it ended on the caller's thread before the wait: no wait, no lock */
  bool timed_out;   /* blocking: the deadline passed with no cancellation to say so */
  bool trace, want_costs, partition_graphs;
  bool allocation_records; /* run option trace_allocations */
  bool record_costs;       /* past the bundle's build_cost_model_after runs */
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

struct tfd_run {
  tfd_refcount refs;
  step x;
  tfd_session *s;           /* used until the step ends */
  void *keeper;             /* what owns fetch_map (a callable), held until the run is freed; NULL: ours */
  void (*release_keeper)(void *keeper);
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
  int64_t queue_token;      /* fail_queued_kernels' registration on cancel */
  int64_t timeout_ms;       /* > 0: the step's deadline, checked by wait and ready */
  struct timespec deadline;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool ended;               /* the step ended and done returned */
  pthread_t completer;      /* the thread calling done, while it does */
  bool completing;
  tfd_status status;        /* the run's result, once ended */
};

/* How an asynchronous call wants its run: done and its argument, and where the handle goes. NULL for a
 * blocking call. */
typedef struct async_req {
  tfd_run_done_fn done;
  void *arg;
  tfd_run *run;
} async_req;

typedef struct partial_run partial_run;

/* ---- direct_session.c: lifecycle ---- */
/* A DirectSession (its devices and inter-op pools), not yet in any factory: session_factory.c's
 * tfd_session_new records it. NULL with st set on failure. */
tfd_session *tfd_ds_new(const tfd_session_options *options, const tfd_factory_registry *registry, void *host_ctx,
                        tfd_status *st);
/* Frees a closed session that no factory holds (tfd_session_free closes it and takes it out first). */
void tfd_ds_destroy(tfd_session *s);
/* A new step id: one process-wide counter, so ids are unique across sessions. */
int64_t tfd_ds_next_step_id(void);
/* Every public call runs between enter and leave; close waits for them. enter fails (CANCELLED) on a
 * closed session. */
tfd_code tfd_ds_enter(tfd_session *s, tfd_status *st);
void tfd_ds_leave(tfd_session *s);
/* One more hold for work that outlives the call that entered (an asynchronous or partial run), whether
 * or not the session has closed since: its own tfd_ds_leave ends it. */
void tfd_ds_hold(tfd_session *s);
/* DirectSession::CheckGraphCreated: method ("Run()", "PRunSetup()", "MakeCallable()") needs a graph. */
tfd_code tfd_ds_check_graph_created(tfd_session *s, const char *method, tfd_status *st);
/* Steps register their cancellation while they run (a, owned by the step, is linked in), so close()
 * can cancel them; a step added after close() is cancelled at once. */
void tfd_ds_add_active(tfd_session *s, active_step *a, tfd_cancellation *c);
void tfd_ds_remove_active(tfd_session *s, active_step *a);
/* Handle tables (callers hold exec_mu). */
int tfd_ds_handle_find(const handle_table *t, int64_t h);
int64_t tfd_ds_handle_add(handle_table *t, int64_t session_id, void *obj, void (*release)(void *obj));
void *tfd_ds_handle_remove(handle_table *t, int64_t h);
/* Releases every entry left (t->release) and the table's arrays. */
void tfd_ds_handle_table_free(handle_table *t);
tfd_code tfd_ds_unknown_handle(const tfd_session *s, int64_t h, const char *what, const char *setup, tfd_status *st);

/* ---- step.c ---- */
/* The pool task that starts the partition a part_start describes; the part_start must stay until then. */
void tfd_ds_start_part(void *part);

/* ---- executor_cache.c ---- */
char **tfd_ds_canonical_names(const char *const *names, int n, bool tensors, tfd_status *st);
void tfd_ds_free_names(char **names, int n);
bundle *tfd_ds_get_bundle(tfd_session *s, char **feeds, int nf, char **fetches, int nfe, char **targets, int nt,
                          bool partial, tfd_status *st);
/* The same for a callable with tensor connections (canonical names, from[i] -> to[i]); n 0 is get_bundle. */
bundle *tfd_ds_get_bundle_connected(tfd_session *s, char **feeds, int nf, char **fetches, int nfe, char **targets,
                                    int nt, bool partial, char **conn_from, char **conn_to, int nconn, tfd_status *st);
void tfd_ds_bundle_free(bundle *b);

/* ---- cost_model.c, run_metadata.c ---- */
void tfd_ds_record_costs(tfd_session *s, bundle *b, tfd_node_stats **stats);
void tfd_ds_fill_cost_graph(tfd_session *s, tfd_run_metadata *m, bundle *b);
void tfd_ds_costs_free(tfd_session *s);
void tfd_ds_fill_metadata(tfd_run_metadata *m, bundle *b, tfd_node_stats **stats, bool partition_graphs);
const char *tfd_ds_keep_name(tfd_run_metadata *m, const char *s);

/* ---- step.c: one step of a bundle, the blocking run ---- */
tfd_code tfd_ds_step_start(step *x, tfd_session *s, bundle *b, const tfd_run_options *ro, tfd_tensor *const *feeds,
                           void (*on_done)(step *), tfd_cancellation *cancel, tfd_status *st);
tfd_code tfd_ds_step_finish(step *x, tfd_tensor **outputs, tfd_run_metadata *meta, int64_t timeout, tfd_status *st);
int64_t tfd_ds_run_timeout(const tfd_session *s, const tfd_run_options *ro);
tfd_code tfd_ds_run_bundle(tfd_session *s, bundle *b, const tfd_run_options *ro, tfd_tensor *const *feeds,
                           tfd_tensor **outputs, tfd_run_metadata *meta, tfd_status *st);
/* Registers the abort of rendezvous r with cancellation c, holding a reference to r until the
 * callback has run or been deregistered. Returns the token; when c was cancelled already, r is
 * aborted at once (and -1 returned); RESOURCE_EXHAUSTED (status set) when c could not take it. */
tfd_code tfd_ds_register_abort(tfd_cancellation *c, tfd_rendezvous *r, int64_t *token, tfd_status *st);
tfd_code tfd_ds_map_names(const tfd_strmap *index, char **names, int n, int *map, const char *what, tfd_status *st);

/* ---- run_async.c ---- */
tfd_run *tfd_ds_start_async(tfd_session *s, bundle *b, void *keeper, void (*release_keeper)(void *), int *fetch_map,
                            int num_outputs,
                            const tfd_run_options *ro, tfd_tensor *const *feeds, tfd_run_metadata *meta,
                            tfd_run_done_fn done, void *done_arg, tfd_status *st);


#endif
