/* tfdev sessions: TensorFlow's DirectSession.
 *
 * A session owns its devices (made through a factory registry), a graph
 * (Create, then Extend), an inter-op thread pool, and a cache of executors
 * keyed by the feeds, fetches and targets of a run. Run prunes the graph to
 * what the fetches and targets need, places each node on a device (the
 * node's requested device, else the highest-priority device type with a
 * kernel), partitions it by device with Send/Recv pairs, and runs one
 * executor per partition in parallel. Runs may be issued from several
 * threads at once. */
#ifndef TFDEV_SESSION_H
#define TFDEV_SESSION_H

#include "tfdev/export.h"

#include <stdbool.h>
#include <stdint.h>

#include "tfdev/device_factory.h"
#include "tfdev/device_mgr.h"
#include "tfdev/graph_def.h"
#include "tfdev/options.h"
#include "tfdev/status.h"
#include "tfdev/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tfd_session tfd_session;
typedef struct tfd_run_metadata tfd_run_metadata;

typedef struct tfd_run_options {
  int64_t timeout_ms;           /* 0: the session's operation_timeout_ms; < 0: none. A step not done this
                                 * long after it starts ends DEADLINE_EXCEEDED, computing or waiting:
                                 * docs/reference.md, "What a timeout bounds" */
  bool trace;                   /* collect per-node step stats */
  bool output_partition_graphs; /* return the partition graph defs */
  bool cost_graph;              /* return the cost graph of the nodes run (needs a cost model) */
  int inter_op_thread_pool;     /* k: the session's k-th inter-op pool (session_inter_op_thread_pool; 0 when
                                 * none is listed); -1: every node on the calling thread; any other value
                                 * is INVALID_ARGUMENT "Invalid inter_op_thread_pool: N" */
  /* Traces the run (as trace) and keeps each node's allocation records (when each allocation and
   * deallocation through the node's tracking allocator happened, until the step ends). */
  bool trace_allocations;
} tfd_run_options;

/* The session factory registry: "DIRECT_SESSION" is built in. Returns the
 * names registered (NULL-terminated, static). */
TFD_API const char *const *tfd_session_factory_names(void);

/* A new DirectSession. Devices come from `registry` (NULL: the built-in one)
 * through AddDevices with these options; host_ctx is passed to factories.
 * *out: the session, which the caller frees with tfd_session_free; NULL on failure. */
TFD_API tfd_code tfd_session_new(const tfd_session_options *options, const tfd_factory_registry *registry, void *host_ctx,
                                     tfd_session **out, tfd_status *status);
/* Like tfd_session_new, choosing the factory by name ("DIRECT_SESSION" or
 * "" for the default); NOT_FOUND for an unknown name. */
TFD_API tfd_code tfd_session_new_named(const char *factory, const tfd_session_options *options,
                                           const tfd_factory_registry *registry, void *host_ctx, tfd_session **out, tfd_status *status);
/* Closes (if open) and frees. */
TFD_API void tfd_session_free(tfd_session *s);

/* Create: the first graph (ALREADY_EXISTS if there is one: use Extend).
 * The graph is validated now; errors name the node. */
TFD_API tfd_code tfd_session_create(tfd_session *s, const tfd_graph_def *graph, tfd_status *status);
/* Extend: adds nodes to the graph. Stateful nodes keep their devices. */
TFD_API tfd_code tfd_session_extend(tfd_session *s, const tfd_graph_def *graph, tfd_status *status);

/* Run: feeds by name ("x" or "x:1"), fetches by name, target nodes by name.
 * outputs[i] receives a new reference for fetch i. meta may be NULL; options
 * may be NULL (the defaults). A negative count, a NULL array with a non-zero
 * count or a NULL name or feed value is INVALID_ARGUMENT naming it, as every
 * function here does (tfdev/status.h). */
TFD_API tfd_code tfd_session_run(tfd_session *s, const tfd_run_options *options, const char *const *feed_names,
                                 tfd_tensor *const *feed_values, int num_feeds, const char *const *fetch_names, int num_fetches,
                                 const char *const *targets, int num_targets, tfd_tensor **outputs, tfd_run_metadata *meta,
                                 tfd_status *status);

/* MakeCallable: resolves feeds, fetches and targets once; calls skip every
 * lookup. Returns a handle >= 0 (-1 on error). Handles are unique across
 * sessions and never reused: one from another session, or one released, is
 * INVALID_ARGUMENT and says which. Releasing a callable while another thread
 * runs it is safe: that run finishes with what it holds. */
TFD_API int64_t tfd_session_make_callable(tfd_session *s, const char *const *feed_names, int num_feeds,
                                          const char *const *fetch_names, int num_fetches, const char *const *targets,
                                          int num_targets, tfd_status *status);
/* RunCallable: feed_values in the callable's feed order (as many as it has feeds; NULL when it has
 * none), outputs with room for its fetches. */
TFD_API tfd_code tfd_session_run_callable(tfd_session *s, int64_t handle, const tfd_run_options *options,
                                          tfd_tensor *const *feed_values, tfd_tensor **outputs, tfd_run_metadata *meta,
                                          tfd_status *status);
TFD_API tfd_code tfd_session_release_callable(tfd_session *s, int64_t handle, tfd_status *status);

/* ---- asynchronous runs ----
 * tfd_session_run_async and tfd_session_run_callable_async start the run
 * their blocking twins would make and return at once, so a frame loop can
 * start a step, keep rendering, and pick the result up frames later. They
 * take the same arguments plus `done`, and return a run handle that the
 * caller frees with tfd_run_free.
 *
 * - Errors found before the step starts (unknown names, a feed of the wrong
 *   dtype or shape, a released callable, a closed session) return NULL with
 *   status set, exactly as the blocking run reports them; done is then not
 *   called. Otherwise the step runs on the session's inter-op pool and the
 *   run ends with the code and message the blocking run would have
 *   returned. A synchronous session (inter_op_threads < 0), or a run with
 *   options->inter_op_thread_pool = -1, has no thread but the caller's: the
 *   step runs inside the call, which returns once it has ended or a kernel
 *   waits (a dequeue from an empty queue, which then goes on on the thread
 *   that wakes it).
 * - The name arrays are read during the call only. Each feed tensor is
 *   referenced until the step ends, so the caller may drop its own at once
 *   (tfd_tensor_copy_from refuses to write it meanwhile). `meta`, when not
 *   NULL, must stay valid until the run has ended; it is filled before done
 *   is called.
 * - done (may be NULL) is called exactly once, when the step has ended, on
 *   an inter-op pool thread (or on the caller's thread if the step ends
 *   before the call returns), with the run's result; status is borrowed for
 *   the call. It may start other runs and may call tfd_run_free on its own
 *   run, but must not close or free the session (that waits for the run,
 *   which waits for done). tfd_run_wait returns true only after done has
 *   returned.
 * - The run's timeout (options->timeout_ms, else the session's
 *   operation_timeout_ms) ends it DEADLINE_EXCEEDED ("Timed out waiting for
 *   the step (N ms)") as it ends a blocking run: a step that computes stops
 *   itself near its deadline, waited for or not; one blocked in a kernel
 *   that waits (a dequeue) is cancelled when tfd_run_wait or tfd_run_ready
 *   is called after the deadline (tfdev starts no thread to watch deadlines).
 * - Closing or freeing the session cancels the runs in flight (they end
 *   CANCELLED, "Session has been closed.") and waits for them, done
 *   included; their run handles stay valid until tfd_run_free. */
typedef struct tfd_run tfd_run;
typedef void (*tfd_run_done_fn)(void *arg, const tfd_status *status);

/* *out: a new run handle, which the caller frees with tfd_run_free; NULL with status set (see above). */
TFD_API tfd_code tfd_session_run_async(tfd_session *s, const tfd_run_options *options, const char *const *feed_names,
                                       tfd_tensor *const *feed_values, int num_feeds, const char *const *fetch_names,
                                       int num_fetches, const char *const *targets, int num_targets, tfd_run_metadata *meta,
                                       tfd_run_done_fn done, void *done_arg, tfd_run **out, tfd_status *status);
TFD_API tfd_code tfd_session_run_callable_async(tfd_session *s, int64_t handle, const tfd_run_options *options,
                                                tfd_tensor *const *feed_values, tfd_run_metadata *meta, tfd_run_done_fn done,
                                                void *done_arg, tfd_run **out, tfd_status *status);
/* Whether the run has ended (a poll: tfd_run_wait(run, 0, NULL)); true for a NULL run. */
TFD_API bool tfd_run_ready(tfd_run *run);
/* Waits up to timeout_ms (< 0: until it ends; 0: not at all) for the run to
 * end. True once it has: status (may be NULL) then holds the run's result,
 * OK or the blocking run's error. False while it is still running; status
 * is left alone. A NULL run has nothing to wait for: true, with
 * INVALID_ARGUMENT in status. */
TFD_API bool tfd_run_wait(tfd_run *run, int64_t timeout_ms, tfd_status *status);
/* The number of outputs the run makes (its fetches). run must not be NULL. */
TFD_API int tfd_run_num_outputs(const tfd_run *run);
/* Hands the outputs of a run that ended well to the caller: outputs[i]
 * receives the reference for fetch i (outputs has room for
 * tfd_run_num_outputs; it may be NULL when that is 0). The run's error if it failed;
 * FAILED_PRECONDITION while it is still running, or when the outputs were
 * already taken. */
TFD_API tfd_code tfd_run_take_outputs(tfd_run *run, tfd_tensor **outputs, tfd_status *status);
/* Cancels the step if it is still running: blocked kernels wake and the run
 * ends CANCELLED ("Run was cancelled."), as a timeout ends it. A step that
 * only computes stops before its next node (a kernel already running
 * finishes, unless the run has a timeout, under which long products and
 * convolutions stop between parts). Kernels waiting to run on the caller's
 * thread (on_caller_thread) fail unrun. After the run has ended it changes
 * nothing. */
TFD_API void tfd_run_cancel(tfd_run *run);
/* Frees the handle: a run still going is cancelled and waited for (done
 * included), except when called from the run's own done callback. Outputs
 * not taken are released. NULL is harmless. */
TFD_API void tfd_run_free(tfd_run *run);

/* Partial runs (PRunSetup / PRun): declare feeds, fetches and targets once,
 * then feed some inputs and fetch some outputs per call, in any order the
 * data allows. Each input and output may be listed once (INVALID_ARGUMENT
 * otherwise). A fetch that needs a feed not yet given is INVALID_ARGUMENT
 * and changes nothing. The run finishes, as TensorFlow's PendingDone, when
 * every input has been fed and every output fetched: that call waits for the
 * targets (up to the session's operation_timeout_ms, then DEADLINE_EXCEEDED)
 * and the handle goes. Otherwise the state stays until prun_close (or the
 * session closes). A call that fetches gets the session's
 * operation_timeout_ms from its start: the executors stop there, even when
 * the work its feeds set going runs on the calling thread, and the call ends
 * DEADLINE_EXCEEDED ("Timed out waiting for a partial run fetch (N ms)"),
 * which aborts the run. A call on a run that an earlier call's error aborted
 * fails with that error. A call that fails hands out no outputs (all NULL).
 * Returns a handle >= 0 (-1 on error); handles are unique across sessions.
 * Closing a handle while another thread is inside prun with it wakes that
 * thread with CANCELLED. */
TFD_API int64_t tfd_session_prun_setup(tfd_session *s, const char *const *inputs, int num_inputs, const char *const *outputs,
                                       int num_outputs, const char *const *targets, int num_targets, tfd_status *status);
TFD_API tfd_code tfd_session_prun(tfd_session *s, int64_t handle, const char *const *feed_names,
                                  tfd_tensor *const *feed_values, int num_feeds, const char *const *fetch_names,
                                  int num_fetches, tfd_tensor **outputs, tfd_status *status);
/* Cancels the run if it is still going and drops its state. */
TFD_API tfd_code tfd_session_prun_close(tfd_session *s, int64_t handle, tfd_status *status);

/* The session's devices (borrowed; valid while the session lives). s must not be NULL. */
TFD_API tfd_device_mgr *tfd_session_device_mgr(tfd_session *s);
/* The device each node of the last-built graph was placed on: fills
 * device name for `node` into out (TFD_DEVICE_NAME_MAX bytes); NOT_FOUND
 * when the node has not been placed yet. */
TFD_API tfd_code tfd_session_node_device(tfd_session *s, const char *node, char *out, tfd_status *status);
/* The dtype of a tensor of the session's graph ("x" or "x:1"). */
TFD_API tfd_code tfd_session_tensor_dtype(tfd_session *s, const char *tensor, tfd_dtype *out, tfd_status *status);
/* Number of executor sets built so far (one per distinct run signature). s must not be NULL. */
TFD_API int tfd_session_num_executors_built(const tfd_session *s);
/* Reset: clears the named resource containers on every device (each
 * device's default container when n is 0); the next run sees fresh state. */
TFD_API tfd_code tfd_session_reset(tfd_session *s, const char *const *containers, int n, tfd_status *status);
/* Close: cancels steps in flight that can wait (queue ops, transfers between
 * partitions: they end with CANCELLED; a step whose kernels cannot wait runs
 * to its end), and asynchronous runs (which end CANCELLED), waits for every
 * call in progress to return and every asynchronous run to end (its done
 * called); later calls fail with CANCELLED. Closing twice is harmless. */
TFD_API tfd_code tfd_session_close(tfd_session *s, tfd_status *status);
/* Finalize (TensorFlow's DirectSession::Finalize): the session's graph and executors are fixed from
 * now on. Later Extend, and runs, callables or partial runs whose signature needs executors not built
 * yet, are FAILED_PRECONDITION "Session has been finalized."; what was built keeps running, callables
 * made before included. Finalize before Create is FAILED_PRECONDITION "Session not yet created.", a
 * second Finalize "Session already finalized." (TensorFlow's texts); a closed session is CANCELLED. */
TFD_API tfd_code tfd_session_finalize(tfd_session *s, tfd_status *status);

/* The session factory's Reset (TensorFlow's DirectSessionFactory::Reset): every session the factory
 * made, that is every session made from `registry` (NULL: the built-in one) with tfd_session_new, or
 * from its runtime (tfd_runtime_session_factory_reset for a runtime's own sessions), has its named containers cleared (each device's
 * default container when n is 0), then is closed: its later calls are CANCELLED "Session has been
 * closed.", and its owner still frees it. options picks the factory, as TensorFlow's target does;
 * tfdev has one, DIRECT_SESSION, and options may be NULL. Sessions of other runtimes are untouched.
 * Returns the first error a reset met (a session closed meanwhile is no error). */
TFD_API tfd_code tfd_session_factory_reset(const tfd_session_options *options, const tfd_factory_registry *registry,
                                           const char *const *containers, int n, tfd_status *status);

/* Eager execution: runs one op on device d, outside any session. `node`
 * gives the op and its attributes (its inputs and device are ignored; T is
 * inferred from the inputs). outputs needs room for 4 tensors; each gets a
 * new reference and *num_outputs says how many (an op with more outputs,
 * like FusedBatchNormV3, is refused: UNIMPLEMENTED). Errors name the op.
 * options may be NULL; its timeout_ms > 0 bounds an op that blocks (a
 * dequeue from an empty queue): it is cancelled with DEADLINE_EXCEEDED. */
TFD_API tfd_code tfd_device_run_op(tfd_device *d, const tfd_node_def *node, tfd_tensor *const *inputs, int num_inputs,
                                   const tfd_run_options *options, tfd_tensor **outputs, int *num_outputs, tfd_status *status);

/* ---- cost models ----
 * Per (device, node): how often it ran, its average and largest compute
 * time, its last output size, and per output (TensorFlow's CostGraphDef
 * output_info) the largest size seen with that tensor's dtype and shape,
 * over the runs that collected timings (traced runs, or every run with the
 * build_cost_model option), except a bundle's first build_cost_model_after
 * runs. */
#define TFD_COST_MAX_OUTPUTS 32 /* the most outputs an op has (Split and Unpack up to 32) */
typedef struct tfd_output_info {
  int64_t size;         /* bytes: the largest seen */
  int alias_input_slot; /* the input whose buffer this output is (Identity, forwarded inputs), or -1 */
  tfd_dtype dtype;
  tfd_shape shape; /* of the largest */
} tfd_output_info;
typedef struct tfd_cost_entry {
  const char *device, *node, *op; /* borrowed from the session */
  int64_t runs;
  double avg_compute_micros;
  int64_t max_compute_micros;
  int64_t output_bytes;
  int num_outputs;
  tfd_output_info outputs[TFD_COST_MAX_OUTPUTS];
} tfd_cost_entry;

/* Fills up to cap entries (sorted by device, then node); returns how many there are. s must not be
 * NULL; out has room for cap entries (NULL when cap is 0; a negative cap fills none). */
TFD_API int tfd_session_export_cost_models(tfd_session *s, tfd_cost_entry *out, int cap);

/* ---- run metadata ----
 * The getters take a metadata made by tfd_run_metadata_new (not NULL), and indexes d and i within
 * the counts it reports. */
/* A new, empty metadata (NULL when out of memory), which the caller frees with tfd_run_metadata_free. */
TFD_API tfd_run_metadata *tfd_run_metadata_new(void);
TFD_API void tfd_run_metadata_free(tfd_run_metadata *m);
/* The step id of the run (unique across all sessions of the process). */
TFD_API int64_t tfd_run_metadata_step_id(const tfd_run_metadata *m);
/* Step stats: one entry per executed node, grouped by device. */
TFD_API int tfd_run_metadata_num_devices(const tfd_run_metadata *m);
TFD_API const char *tfd_run_metadata_device(const tfd_run_metadata *m, int d);
TFD_API int tfd_run_metadata_num_nodes(const tfd_run_metadata *m, int d);
/* One allocation (alloc_bytes > 0) or deallocation (< 0) of a node's, as AllocationRecord. */
typedef struct tfd_allocation_record {
  int64_t alloc_micros; /* wall clock, microseconds since the epoch */
  int64_t alloc_bytes;
} tfd_allocation_record;
typedef struct tfd_node_exec_stats {
  const char *node_name; /* borrowed from the metadata */
  const char *op;
  int64_t all_start_micros;
  int64_t all_end_rel_micros;
  int64_t output_bytes;
  int64_t allocator_bytes_in_use; /* memory: the device allocator after the node */
  const char *allocator_name;
  int thread_id;
  /* Memory (AllocatorMemoryUsed), from the tracking allocator the node's kernel allocated through:
   * bytes it allocated in all, the most it held at once, and what it still held when it finished. */
  int64_t total_bytes, peak_bytes, live_bytes;
  /* With run option trace_allocations: every allocation and deallocation through that allocator
   * until the step ended (borrowed from the metadata); else 0 and NULL. */
  int num_allocation_records;
  const tfd_allocation_record *allocation_records;
} tfd_node_exec_stats;
TFD_API void tfd_run_metadata_node(const tfd_run_metadata *m, int d, int i, tfd_node_exec_stats *out);
/* Cost graph (when the run asked for it): entries like the cost model's,
 * for the nodes of this run. */
TFD_API int tfd_run_metadata_num_cost_nodes(const tfd_run_metadata *m);
TFD_API void tfd_run_metadata_cost_node(const tfd_run_metadata *m, int i, tfd_cost_entry *out);
/* Partition graphs (when output_partition_graphs); borrowed. */
TFD_API int tfd_run_metadata_num_partition_graphs(const tfd_run_metadata *m);
TFD_API const tfd_graph_def *tfd_run_metadata_partition_graph(const tfd_run_metadata *m, int i);

/* ---- callables with options (TensorFlow's CallableOptions) ----
 * feeds, fetches and targets as tfd_session_make_callable takes them;
 * tensor_connections wire a tensor of the graph (from_tensor) to another
 * (to_tensor) inside the step: every use of to_tensor reads from_tensor
 * instead, as if it were fed with it (a fetch of to_tensor included).
 * A to_tensor also fed, or connected twice, is INVALID_ARGUMENT ('Endpoint
 * "y:0" fed more than once.'); an unknown from_tensor node or output is
 * INVALID_ARGUMENT ("Requested tensor connection from unknown node" /
 * "unknown edge"); an unknown to_tensor is NOT_FOUND ("unable to find feed
 * output"); a connection that would make a cycle is INVALID_ARGUMENT
 * ("would create a cycle"). run_options (may be NULL) are the callable's
 * own: tfd_session_run_callable and its async twin use them when called
 * with NULL options (options given to a call replace them for that call).
 * Every string and array is read during the call only. */
typedef struct tfd_tensor_connection {
  const char *from_tensor, *to_tensor;
} tfd_tensor_connection;
typedef struct tfd_callable_options {
  const char *const *feeds;
  int num_feeds;
  const char *const *fetches;
  int num_fetches;
  const char *const *targets;
  int num_targets;
  const tfd_tensor_connection *tensor_connections;
  int num_tensor_connections;
  const tfd_run_options *run_options;
} tfd_callable_options;
/* MakeCallable(CallableOptions): a handle >= 0, or -1 with status set. */
TFD_API int64_t tfd_session_make_callable_with_options(tfd_session *s, const tfd_callable_options *options,
                                                       tfd_status *status);

#ifdef __cplusplus
}
#endif
#endif
