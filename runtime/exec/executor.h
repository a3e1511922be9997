/* The executor: runs one partition's graph on its device, step after step.
 *
 * Built once per partition (kernels created, inputs laid out in one flat
 * slot array, pending counts precomputed); each step copies the pending
 * counts, starts the nodes with no inputs, and lets each finished node make
 * its consumers ready. Ready nodes beyond the first go to the inter-op pool;
 * the first continues inline on the same thread, so a chain runs without a
 * thread hop. The first error stops the step (its message names the node)
 * and aborts the rendezvous so other partitions stop too.
 *
 * Per node a step does what the graph's shape allows it to skip: a node
 * whose inputs all come from one producer becomes ready without a pending
 * counter, an output's reference moves to its last consumer, and a node
 * that makes one successor ready hands its count on. A finished step's
 * memory is kept for the executor's next step. */
#ifndef TFDEV_RUNTIME_EXECUTOR_H
#define TFDEV_RUNTIME_EXECUTOR_H

#include <pthread.h>

#include "../core/status_internal.h"
#include "../graph/graph.h"
#include "../kernels/kernel.h"
#include "../framework/cancellation.h"
#include "../framework/rendezvous.h"

typedef struct tfd_executor tfd_executor;

/* One output of a node in one step: what TensorFlow's cost model keeps per output (CostGraphDef's
 * output_info): its size, dtype and shape, and the input whose buffer it is (-1: its own). */
typedef struct tfd_output_stats {
  int64_t bytes;
  int alias_input_slot;
  tfd_dtype dtype;
  tfd_shape shape;
} tfd_output_stats;

/* Per-node timings of one step (NodeExecStats). */
typedef struct tfd_node_stats {
  int64_t all_start_micros; /* wall clock, microseconds since the epoch */
  int64_t all_end_rel_micros;
  int64_t output_bytes;
  int64_t allocator_bytes_in_use; /* the device allocator's bytes in use when the node finished */
  int thread_id; /* 0: the thread that started the step; k: inter-op worker k-1 */
  bool ran;
  /* Memory (AllocatorMemoryUsed): the node's kernel allocated through a tracking allocator
   * (core/tracking_allocator.h) around its device's; these are its figures when the node finished.
   * The tracker itself stays referenced here (NULL when it could not be made) so its allocation
   * records can be read when the step ends; whoever frees the stats unrefs it. */
  int64_t total_bytes, peak_bytes, live_bytes;
  struct tfd_allocator *tracker;
  int num_outputs;
  tfd_output_stats outputs[TFD_MAX_OP_OUTPUTS];
  /* A node run more than once in a step (in a loop, once per iteration) has one entry per run: the
   * later ones, each allocated, chained here in the order they started. Whoever frees the stats frees
   * the chain (tfd_node_stats_free_chain). */
  struct tfd_node_stats *next;
} tfd_node_stats;

/* Frees the entries chained after ns (unreffing their trackers), leaving ns alone. */
void tfd_node_stats_free_chain(tfd_node_stats *ns);

/* Fills ns once node gn has run (started at `start`, on thread_id): its times, its outputs' sizes,
 * dtypes and shapes and which of its inputs (as the kernel saw them) each aliases, the allocator's
 * bytes in use and the tracker's figures. Borrows everything. */
void tfd_node_stats_record(tfd_node_stats *ns, const tfd_gnode *gn, tfd_tensor *const *outputs,
                           tfd_tensor *const *inputs, int num_inputs, const struct tfd_allocator *allocator,
                           int64_t start, int thread_id);

/* The reporting half of tfd_node_check_outputs, for a node that failed its check: runs the sync and
 * sets *st (which is OK on entry) on the first problem. */
void tfd_node_check_outputs_slow(tfd_device *sync_device, const tfd_gnode *gn, tfd_tensor *const *outputs,
                                 int num_outputs, bool missing_is_dead, tfd_status *st);
/* What every executor (the fast path, frames.c, step graphs) checks once node gn's kernel has
 * returned OK in *st: with sync_device (the device under sync_every_op; NULL otherwise), that the
 * device has no asynchronous failure, which is then blamed on gn; then that each of the first
 * num_outputs outputs is there (a missing one is allowed when missing_is_dead: a branch not taken)
 * and has the dtype the graph inferred, since consumers were built for that dtype. Sets *st on the
 * first problem. Inline: every node of every step passes here, and the answer is almost always yes. */
static inline void tfd_node_check_outputs(tfd_device *sync_device, const tfd_gnode *gn, tfd_tensor *const *outputs,
                                          int num_outputs, bool missing_is_dead, tfd_status *st) {
  if (st->code != TFD_OK) return;
  bool ok = !sync_device;
  for (int o = 0; ok && o < num_outputs; o++)
    ok = outputs[o] ? tfd_tensor_dtype(outputs[o]) == gn->out_types[o] : missing_is_dead;
  if (!ok) tfd_node_check_outputs_slow(sync_device, gn, outputs, num_outputs, missing_is_dead, st);
}

typedef struct tfd_executor_args {
  int64_t step_id;
  tfd_rendezvous *rendezvous;
  tfd_tensor *const *feeds;
  int num_feeds;
  tfd_tensor **fetches;
  int num_fetches;
  tfd_threadpool *runner; /* the inter-op pool; NULL runs every node on the calling thread */
  tfd_node_stats *stats;  /* graph->n entries when tracing, else NULL */
  struct tfd_cancellation *cancellation; /* may be NULL */
  struct tfd_session_state *session_state; /* may be NULL */
  /* For kernels that run on the thread that started the step (custom_kernel.c): that thread, when
   * known, and the queue it drains while waiting (NULL: such kernels fail, naming why). */
  struct tfd_caller_queue *caller_queue;
  pthread_t caller_thread;
  bool has_caller_thread;
  bool allocation_records; /* with stats: each node's tracking allocator keeps allocation records */
  /* A step that has run this long fails with DEADLINE_EXCEEDED "Timed out waiting for <timeout_what>
   * (N ms)" (0: never), its cancellation cancelled with that reason. Both paths look at the deadline
   * and the cancellation between nodes (the fast path before each expensive node and every 16th cheap
   * one, the frame-aware path every 16th node), since a step that only computes never waits for
   * anything a caller's timeout could wake, and long kernels look between parts of their work
   * (tfd_kernel_should_stop); a step that ends after its deadline fails too, as a waiter would say. */
  int64_t timeout_ms;
  const char *timeout_what; /* NULL: "the step" */
  /* Instead of timeout_ms from the start (which is then not looked at), a deadline its owner keeps
   * and moves while the step runs: a partial run, whose executors outlive its calls, sets each
   * fetching call's for the call's length. NULL: none. */
  tfd_deadline *deadline;
} tfd_executor_args;

typedef void (*tfd_executor_done)(void *arg, const tfd_status *status);

/* Whether node n, on device d, runs inline on the thread that made it ready rather than on the pool:
 * an op registered cheap, or any kernel on a GPU, whose work is queued to the device rather than done
 * by the thread (TensorFlow's OpKernel takes no GPU kernel to be expensive). */
bool tfd_executor_node_cheap(const tfd_gnode *n, const tfd_device *d);

/* Takes ownership of g. Kernels of stateful ops are shared through the
 * device's OpSegment under session_handle (when not NULL), so every
 * executor of a session sees the same random generator. A graph with
 * control flow runs on the frame-aware path (frames.c); so does any graph
 * when `frames` is set (a partition of a graph with control flow, whose
 * _Recv may bring a dead tensor). Malformed loops are refused here. */
tfd_executor *tfd_executor_new(tfd_graph *g, tfd_device *device, const char *session_handle, tfd_status *status);
tfd_executor *tfd_executor_new_with(tfd_graph *g, tfd_device *device, const char *session_handle, bool frames,
                                    tfd_status *status);
void tfd_executor_free(tfd_executor *e);
/* Lets the executor replay its steps as one graph on a device with step graphs (step_graph.h), when
 * its partition qualifies; otherwise (or with sync_every_op, or control flow) nothing changes. */
void tfd_executor_use_step_graphs(tfd_executor *e);
/* Steps recorded into a graph and replayed from one (0 and 0 without step graphs). */
void tfd_executor_step_graph_counts(const tfd_executor *e, int64_t *captured, int64_t *replayed);
/* The kernel context every node of a step on device d starts from (the fast path, frames.c and step
 * graphs): d's allocator, pools and resource manager, args' ids, rendezvous, feeds, fetches and
 * caller queue, and each input slot holding its own reference (owns_inputs). Borrows all of them. */
tfd_kernel_context tfd_executor_step_ctx(tfd_device *d, const tfd_executor_args *args);
/* The same, with the step's deadline: args' own one, else `own` (the step's memory, which must
 * outlive it) set timeout_ms from now when args has one (NULL own: no deadline then). */
tfd_kernel_context tfd_executor_step_ctx_timed(tfd_device *d, const tfd_executor_args *args, tfd_deadline *own);
const tfd_graph *tfd_executor_graph(const tfd_executor *e);
tfd_device *tfd_executor_device(const tfd_executor *e);
/* Whether a step may wait on something outside it (a queue, a _Recv), or
 * loop: only then can cancelling it or its rendezvous make it end sooner. */
bool tfd_executor_may_wait(const tfd_executor *e);
/* Whether some kernel must run on the thread that started the step: the step then needs a caller
 * queue (args.caller_queue) drained by that thread. */
bool tfd_executor_needs_caller(const tfd_executor *e);
/* Whether its kernels use the step's rendezvous (_Send, _Recv); when none
 * does, args.rendezvous may be NULL. */
bool tfd_executor_uses_rendezvous(const tfd_executor *e);

/* Starts a step; done runs exactly once, on whichever thread finishes last. */
void tfd_executor_run_async(tfd_executor *e, const tfd_executor_args *args, tfd_executor_done done, void *arg);
/* Ends a step that could not start (status says why): aborts its rendezvous, as a failed kernel would,
 * so the step's other partitions do not wait for this one's sends, then calls done. */
void tfd_executor_fail_start(const tfd_executor_args *args, const tfd_status *status, tfd_executor_done done, void *arg);
/* Runs a step and waits for it. With timeout_ms > 0 and a cancellation in
 * args, a step still running after timeout_ms is cancelled with
 * DEADLINE_EXCEEDED ("Timed out waiting for <what> (N ms)"), so blocked
 * kernels wake; a cancelled step reports why it was cancelled. */
tfd_code tfd_executor_run(tfd_executor *e, const tfd_executor_args *args, int64_t timeout_ms, const char *what,
                          tfd_status *status);

/* Microseconds since the epoch. */
int64_t tfd_now_micros(void);
/* The CLOCK_REALTIME instant ms milliseconds from now, for pthread_cond_timedwait. */
struct timespec tfd_deadline_after_ms(int64_t ms);

/* Waits on cv, holding mu (locked on entry and on return), until *pending
 * is 0. With timeout_ms > 0, work still pending at the deadline is stopped
 * by on_timeout(arg, DEADLINE_EXCEEDED, "Timed out waiting for <what>
 * (N ms)"), once, and the wait goes on until it ends. Returns true when the
 * deadline passed. */
bool tfd_wait_or_time_out(pthread_mutex_t *mu, pthread_cond_t *cv, const int *pending, int64_t timeout_ms,
                          const char *what, tfd_cancel_fn on_timeout, void *arg);
/* The same, running what kernels post to queue (whose mutex and condition variable are mu and cv)
 * between the waits. */
bool tfd_wait_or_time_out_draining(pthread_mutex_t *mu, pthread_cond_t *cv, const int *pending, int64_t timeout_ms,
                                   const char *what, tfd_cancel_fn on_timeout, void *arg, struct tfd_caller_queue *queue);
/* on_timeout for tfd_wait_or_time_out: cancels the tfd_cancellation arg. */
void tfd_cancel_on_timeout(void *cancellation, tfd_code code, const char *message);

#endif
