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
  int64_t timeout_ms;           /* 0: the session's operation_timeout_ms; < 0: none */
  bool trace;                   /* collect per-node step stats */
  bool output_partition_graphs; /* return the partition graph defs */
  bool cost_graph;              /* return the cost graph of the nodes run (needs a cost model) */
} tfd_run_options;

/* The session factory registry: "DIRECT_SESSION" is built in. Returns the
 * names registered (NULL-terminated, static). */
const char *const *tfd_session_factory_names(void);

/* A new DirectSession. Devices come from `registry` (NULL: the built-in one)
 * through AddDevices with these options; host_ctx is passed to factories.
 * The caller frees the session with tfd_session_free. */
tfd_session *tfd_session_new(const tfd_session_options *options, const tfd_factory_registry *registry, void *host_ctx,
                             tfd_status *status);
/* Like tfd_session_new, choosing the factory by name ("DIRECT_SESSION" or
 * "" for the default); NOT_FOUND for an unknown name. */
tfd_session *tfd_session_new_named(const char *factory, const tfd_session_options *options,
                                   const tfd_factory_registry *registry, void *host_ctx, tfd_status *status);
/* Closes (if open) and frees. */
void tfd_session_free(tfd_session *s);

/* Create: the first graph (ALREADY_EXISTS if there is one: use Extend).
 * The graph is validated now; errors name the node. */
tfd_code tfd_session_create(tfd_session *s, const tfd_graph_def *graph, tfd_status *status);
/* Extend: adds nodes to the graph. Stateful nodes keep their devices. */
tfd_code tfd_session_extend(tfd_session *s, const tfd_graph_def *graph, tfd_status *status);

/* Run: feeds by name ("x" or "x:1"), fetches by name, target nodes by name.
 * outputs[i] receives a new reference for fetch i. meta may be NULL. */
tfd_code tfd_session_run(tfd_session *s, const tfd_run_options *options, const char *const *feed_names,
                         tfd_tensor *const *feed_values, int num_feeds, const char *const *fetch_names, int num_fetches,
                         const char *const *targets, int num_targets, tfd_tensor **outputs, tfd_run_metadata *meta,
                         tfd_status *status);

/* MakeCallable: resolves feeds, fetches and targets once; calls skip every
 * lookup. Returns a handle >= 0 (-1 on error). Handles are unique across
 * sessions and never reused: one from another session, or one released, is
 * INVALID_ARGUMENT and says which. Releasing a callable while another thread
 * runs it is safe: that run finishes with what it holds. */
int64_t tfd_session_make_callable(tfd_session *s, const char *const *feed_names, int num_feeds,
                                  const char *const *fetch_names, int num_fetches, const char *const *targets,
                                  int num_targets, tfd_status *status);
/* RunCallable: feed_values in the callable's feed order. */
tfd_code tfd_session_run_callable(tfd_session *s, int64_t handle, const tfd_run_options *options,
                                  tfd_tensor *const *feed_values, tfd_tensor **outputs, tfd_run_metadata *meta,
                                  tfd_status *status);
tfd_code tfd_session_release_callable(tfd_session *s, int64_t handle, tfd_status *status);

/* Partial runs (PRunSetup / PRun): declare feeds, fetches and targets once,
 * then feed some inputs and fetch some outputs per call, in any order the
 * data allows. Each input and output may be listed once (INVALID_ARGUMENT
 * otherwise). A fetch that needs a feed not yet given is INVALID_ARGUMENT
 * and changes nothing. The run finishes, as TensorFlow's PendingDone, when
 * every input has been fed and every output fetched: that call waits for the
 * targets (up to the session's operation_timeout_ms, then DEADLINE_EXCEEDED)
 * and the handle goes. Otherwise the state stays until prun_close (or the
 * session closes). A call on a run that an earlier call's error aborted
 * fails with that error. A call that fails hands out no outputs (all NULL).
 * Returns a handle >= 0 (-1 on error); handles are unique across sessions.
 * Closing a handle while another thread is inside prun with it wakes that
 * thread with CANCELLED. */
int64_t tfd_session_prun_setup(tfd_session *s, const char *const *inputs, int num_inputs, const char *const *outputs,
                               int num_outputs, const char *const *targets, int num_targets, tfd_status *status);
tfd_code tfd_session_prun(tfd_session *s, int64_t handle, const char *const *feed_names,
                          tfd_tensor *const *feed_values, int num_feeds, const char *const *fetch_names,
                          int num_fetches, tfd_tensor **outputs, tfd_status *status);
/* Cancels the run if it is still going and drops its state. */
tfd_code tfd_session_prun_close(tfd_session *s, int64_t handle, tfd_status *status);

/* The session's devices (borrowed; valid while the session lives). */
tfd_device_mgr *tfd_session_device_mgr(tfd_session *s);
/* The device each node of the last-built graph was placed on: fills
 * device name for `node` into out (TFD_DEVICE_NAME_MAX bytes); NOT_FOUND
 * when the node has not been placed yet. */
tfd_code tfd_session_node_device(tfd_session *s, const char *node, char *out, tfd_status *status);
/* The dtype of a tensor of the session's graph ("x" or "x:1"). */
tfd_code tfd_session_tensor_dtype(tfd_session *s, const char *tensor, tfd_dtype *out, tfd_status *status);
/* Number of executor sets built so far (one per distinct run signature). */
int tfd_session_num_executors_built(const tfd_session *s);
/* Reset: clears the named resource containers on every device (each
 * device's default container when n is 0); the next run sees fresh state. */
tfd_code tfd_session_reset(tfd_session *s, const char *const *containers, int n, tfd_status *status);
/* Close: cancels steps in flight that can wait (queue ops, transfers between
 * partitions: they end with CANCELLED; a step whose kernels cannot wait runs
 * to its end), waits for every call in progress to return; later calls fail
 * with CANCELLED. Closing twice is harmless. */
tfd_code tfd_session_close(tfd_session *s, tfd_status *status);

/* Eager execution: runs one op on device d, outside any session. `node`
 * gives the op and its attributes (its inputs and device are ignored; T is
 * inferred from the inputs). outputs needs room for 4 tensors; each gets a
 * new reference and *num_outputs says how many (an op with more outputs,
 * like FusedBatchNormV3, is refused: UNIMPLEMENTED). Errors name the op.
 * options may be NULL; its timeout_ms > 0 bounds an op that blocks (a
 * dequeue from an empty queue): it is cancelled with DEADLINE_EXCEEDED. */
tfd_code tfd_device_run_op(tfd_device *d, const tfd_node_def *node, tfd_tensor *const *inputs, int num_inputs,
                           const tfd_run_options *options, tfd_tensor **outputs, int *num_outputs, tfd_status *status);

/* ---- cost models ----
 * Per (device, node): how often it ran, its average and largest compute
 * time, and its last output size, over the runs that collected timings
 * (traced runs, or every run with the build_cost_model option). */
typedef struct tfd_cost_entry {
  const char *device, *node, *op; /* borrowed from the session */
  int64_t runs;
  double avg_compute_micros;
  int64_t max_compute_micros;
  int64_t output_bytes;
} tfd_cost_entry;

/* Fills up to cap entries (sorted by device, then node); returns how many there are. */
int tfd_session_export_cost_models(tfd_session *s, tfd_cost_entry *out, int cap);

/* ---- run metadata ---- */
tfd_run_metadata *tfd_run_metadata_new(void);
void tfd_run_metadata_free(tfd_run_metadata *m);
/* The step id of the run (unique across all sessions of the process). */
int64_t tfd_run_metadata_step_id(const tfd_run_metadata *m);
/* Step stats: one entry per executed node, grouped by device. */
int tfd_run_metadata_num_devices(const tfd_run_metadata *m);
const char *tfd_run_metadata_device(const tfd_run_metadata *m, int d);
int tfd_run_metadata_num_nodes(const tfd_run_metadata *m, int d);
typedef struct tfd_node_exec_stats {
  const char *node_name; /* borrowed from the metadata */
  const char *op;
  int64_t all_start_micros;
  int64_t all_end_rel_micros;
  int64_t output_bytes;
  int64_t allocator_bytes_in_use; /* memory: the device allocator after the node */
  const char *allocator_name;
  int thread_id;
} tfd_node_exec_stats;
void tfd_run_metadata_node(const tfd_run_metadata *m, int d, int i, tfd_node_exec_stats *out);
/* Cost graph (when the run asked for it): entries like the cost model's,
 * for the nodes of this run. */
int tfd_run_metadata_num_cost_nodes(const tfd_run_metadata *m);
void tfd_run_metadata_cost_node(const tfd_run_metadata *m, int i, tfd_cost_entry *out);
/* Partition graphs (when output_partition_graphs); borrowed. */
int tfd_run_metadata_num_partition_graphs(const tfd_run_metadata *m);
const tfd_graph_def *tfd_run_metadata_partition_graph(const tfd_run_metadata *m, int i);

#ifdef __cplusplus
}
#endif
#endif
