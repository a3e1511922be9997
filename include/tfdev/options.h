/* tfdev session options: what factories and sessions are configured with.
 *
 * The C form of TensorFlow's SessionOptions/ConfigProto, reduced to the
 * fields tfdev honours. Opaque; create with tfd_session_options_new, free
 * with tfd_session_options_free. */
#ifndef TFDEV_OPTIONS_H
#define TFDEV_OPTIONS_H

#include "tfdev/export.h"

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#include "tfdev/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tfd_session_options tfd_session_options;

/* Defaults: no device counts (one device per factory type), intra/inter-op
 * threads 0 (one per core), the process-wide intra-op pool. The caller frees
 * the options with tfd_session_options_free (NULL when out of memory). */
TFD_API tfd_session_options *tfd_session_options_new(void);
/* A deep copy, or NULL when out of memory. Caller frees it. */
TFD_API tfd_session_options *tfd_session_options_copy(const tfd_session_options *o);
TFD_API void tfd_session_options_free(tfd_session_options *o);

/* device_count[type] = n (n >= 0); INVALID_ARGUMENT for a negative n or an
 * empty type. */
TFD_API tfd_code tfd_session_options_set_device_count(tfd_session_options *o, const char *type, int n, tfd_status *status);
/* device_count[type], or `dflt` when the type has no entry. */
TFD_API int tfd_session_options_device_count(const tfd_session_options *o, const char *type, int dflt);
TFD_API size_t tfd_session_options_num_device_counts(const tfd_session_options *o);
/* Entry i of device_count (insertion order); the type string is borrowed. */
TFD_API void tfd_session_options_device_count_at(const tfd_session_options *o, size_t i, const char **type, int *n);

/* Threads for each intra-op pool; 0 means one per core. */
TFD_API void tfd_session_options_set_intra_op_threads(tfd_session_options *o, int n);
TFD_API int tfd_session_options_intra_op_threads(const tfd_session_options *o);
/* Threads for the inter-op pool; 0 means one per core; -1 (any negative) makes TensorFlow's
 * synchronous session: every node runs on the thread that called run. */
TFD_API void tfd_session_options_set_inter_op_threads(tfd_session_options *o, int n);
TFD_API int tfd_session_options_inter_op_threads(const tfd_session_options *o);
/* LocalDevice::use_global_threadpool: when true (the default) CPU devices
 * share one process-wide intra-op pool; when false each owns its own. */
TFD_API void tfd_session_options_set_use_global_threadpool(tfd_session_options *o, bool on);
TFD_API bool tfd_session_options_use_global_threadpool(const tfd_session_options *o);

/* Placement: fall back to another device when a requested one cannot run a
 * node (allow_soft_placement); print each node's device (log_device_placement). */
TFD_API void tfd_session_options_set_allow_soft_placement(tfd_session_options *o, bool on);
TFD_API bool tfd_session_options_allow_soft_placement(const tfd_session_options *o);
TFD_API void tfd_session_options_set_log_device_placement(tfd_session_options *o, bool on);
TFD_API bool tfd_session_options_log_device_placement(const tfd_session_options *o);
/* Deadline for every run in milliseconds (a run's own timeout_ms overrides it); 0: none. A step
 * not done this long after it starts ends DEADLINE_EXCEEDED, computing or waiting; a partial run's
 * calls that fetch each get this long. */
TFD_API void tfd_session_options_set_operation_timeout_ms(tfd_session_options *o, int64_t ms);
TFD_API int64_t tfd_session_options_operation_timeout_ms(const tfd_session_options *o);
/* Collect per-node timings on every run into the session's cost model
 * (without it, only traced runs feed the model). */
TFD_API void tfd_session_options_set_build_cost_model(tfd_session_options *o, bool on);
TFD_API bool tfd_session_options_build_cost_model(const tfd_session_options *o);
/* TensorFlow's GraphOptions.build_cost_model_after: the first n runs of each
 * run signature (executor bundle) are not recorded into the cost model,
 * traced or not (default 0). INVALID_ARGUMENT for n < 0. */
TFD_API tfd_code tfd_session_options_set_build_cost_model_after(tfd_session_options *o, int64_t n, tfd_status *status);
TFD_API int64_t tfd_session_options_build_cost_model_after(const tfd_session_options *o);
/* The graph optimisation pass on each partition (default on): constant
 * folding, and MatMul + BiasAdd [+ activation] fused into _FusedMatMul with
 * weights packed once (TensorFlow Grappler's constant folding and remapper).
 * Off: partitions run as placed, as run metadata's partition graphs show. */
/* TensorFlow's place_pruned_graph: place only what each run needs, at that run. Off (the default),
 * the whole graph is placed when it is created or extended, so a node pinned to a device the session
 * lacks fails there. */
TFD_API void tfd_session_options_set_place_pruned_graph(tfd_session_options *o, bool on);
TFD_API bool tfd_session_options_place_pruned_graph(const tfd_session_options *o);
TFD_API void tfd_session_options_set_optimize_graph(tfd_session_options *o, bool on);
TFD_API bool tfd_session_options_optimize_graph(const tfd_session_options *o);
/* GPUOptions. visible_device_list: "0,2" (TensorFlow's: the visible CUDA devices, in the order
 * they become GPU:0, GPU:1, ...); NULL or "" for all. Stored as given (copied) and checked by the
 * GPU factory against the devices it finds: INVALID_ARGUMENT for a malformed list, an unknown id or
 * a repeated one, naming it. RESOURCE_EXHAUSTED when out of memory. */
TFD_API tfd_code tfd_session_options_set_visible_devices(tfd_session_options *o, const char *list, tfd_status *status);
TFD_API const char *tfd_session_options_visible_devices(const tfd_session_options *o); /* "" when unset */
/* per_process_gpu_memory_fraction: (0, 1] of each GPU's free memory reserved up front; 0 (default):
 * TensorFlow's default share. INVALID_ARGUMENT outside [0, 1]. This, allow_growth and max_streams
 * are the GPU's, as TensorFlow's per-process GPU state: sessions alive at once on a GPU share its
 * memory and streams, made with the first one's options (a later one's differing memory options are
 * logged as not applied). */
TFD_API tfd_code tfd_session_options_set_gpu_memory_fraction(tfd_session_options *o, double fraction, tfd_status *status);
TFD_API double tfd_session_options_gpu_memory_fraction(const tfd_session_options *o);
/* allow_growth: GPU memory taken in growing regions as needed instead of all up front. */
TFD_API void tfd_session_options_set_gpu_allow_growth(tfd_session_options *o, bool on);
TFD_API bool tfd_session_options_gpu_allow_growth(const tfd_session_options *o);
/* BaseGPUDevice's sync_every_op, for debugging: after each node on a GPU the executor waits for the
 * device, so an asynchronous failure is reported by the node that caused it. Off by default. */
TFD_API void tfd_session_options_set_gpu_sync_every_op(tfd_session_options *o, bool on);
TFD_API bool tfd_session_options_gpu_sync_every_op(const tfd_session_options *o);
/* Step graphs (CUDA graphs): a step whose nodes all run on one GPU, with nothing stateful, is
 * recorded once per set of fed shapes and replayed in one launch (docs/gpu.md).
 * On by default; false runs every step node by node. */
TFD_API void tfd_session_options_set_gpu_graphs(tfd_session_options *o, bool on);
TFD_API bool tfd_session_options_gpu_graphs(const tfd_session_options *o);
/* BaseGPUDevice's max_streams: stream groups (compute, host-to-device, device-to-host,
 * device-to-device) made per GPU, 1 to TFD_GPU_MAX_STREAMS; default 1. As in TensorFlow, a session's
 * nodes use the first group; the others are there for executors that assign streams. */
#define TFD_GPU_MAX_STREAMS 8
TFD_API tfd_code tfd_session_options_set_gpu_max_streams(tfd_session_options *o, int n, tfd_status *status);
TFD_API int tfd_session_options_gpu_max_streams(const tfd_session_options *o);

/* true: the session owns its inter-op pool; false (default): sessions share one. */
TFD_API void tfd_session_options_set_use_per_session_threads(tfd_session_options *o, bool on);
TFD_API bool tfd_session_options_use_per_session_threads(const tfd_session_options *o);

/* TensorFlow's session_inter_op_thread_pool: the session's inter-op pools, in order; a run picks one
 * with tfd_run_options.inter_op_thread_pool (index k, or -1 for the calling thread). num_threads 0
 * means the default (inter_op_threads, else one per core). Pools with the same non-empty
 * global_name are shared by every session of one runtime that names them (kept until the runtime
 * goes, as TensorFlow keeps its global pools), and must ask for the same num_threads
 * ("Pool NAME configured previously with num_threads=..."); a session made without a runtime
 * owns all its pools. With no pool listed, the session has one: its own (use_per_session_threads)
 * or the shared default. At most TFD_MAX_INTER_OP_POOLS pools; num_threads in [0, TFD_MAX_THREADS]
 * (INVALID_ARGUMENT otherwise). global_name may be NULL or "" (a pool of the session's own). */
#define TFD_MAX_INTER_OP_POOLS 64
TFD_API tfd_code tfd_session_options_add_inter_op_pool(tfd_session_options *o, int num_threads, const char *global_name,
                                                       tfd_status *status);
TFD_API int tfd_session_options_num_inter_op_pools(const tfd_session_options *o);
/* Pool i's settings (global_name borrowed, "" when none); false when i is out of range. */
TFD_API bool tfd_session_options_inter_op_pool(const tfd_session_options *o, int i, int *num_threads,
                                               const char **global_name);
TFD_API void tfd_session_options_clear_inter_op_pools(tfd_session_options *o);

#ifdef __cplusplus
}
#endif
#endif
