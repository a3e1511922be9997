/* Session options: the configuration factories and sessions read. */
#include <stdlib.h>
#include <string.h>

#include "api_args.h"
#include "options_internal.h"
#include "status_internal.h"
#include "tfdev/options.h"
#include "tfdev/threadpool.h"

typedef struct device_count {
  char *type;
  int n;
} device_count;

typedef struct inter_pool {
  int num_threads;
  char *global_name; /* "" when the pool is the session's own */
} inter_pool;

struct tfd_session_options {
  device_count *counts;
  size_t num_counts;
  int intra_op_threads;
  int inter_op_threads;
  bool use_global_threadpool;
  bool allow_soft_placement, log_device_placement, use_per_session_threads, build_cost_model;
  int64_t build_cost_model_after; /* GraphOptions.build_cost_model_after: runs of a bundle not recorded */
  bool skip_graph_optimization; /* stored inverted so that a zeroed struct optimises */
  int64_t operation_timeout_ms;
  char *visible_devices; /* NULL: all */
  double gpu_memory_fraction;
  bool gpu_allow_growth;
  bool gpu_sync_every_op;
  bool gpu_graphs_off; /* stored inverted so that a zeroed struct replays graphs */
  int gpu_max_streams; /* 0: 1 */
  tfd_runtime *runtime; /* borrowed (options_internal.h) */
  bool place_pruned_graph;
  inter_pool *pools; /* session_inter_op_thread_pool */
  int num_pools;
};

tfd_session_options *tfd_session_options_new(void) {
  tfd_session_options *o = calloc(1, sizeof *o);
  if (o) o->use_global_threadpool = true;
  return o;
}

void tfd_session_options_free(tfd_session_options *o) {
  if (!o) return;
  for (size_t i = 0; i < o->num_counts; i++) free(o->counts[i].type);
  free(o->counts);
  free(o->visible_devices);
  tfd_session_options_clear_inter_op_pools(o);
  free(o);
}

tfd_session_options *tfd_session_options_copy(const tfd_session_options *src) {
  tfd_session_options *o = tfd_session_options_new();
  if (!o) return NULL;
  *o = *src;
  o->counts = NULL;
  o->num_counts = 0;
  o->visible_devices = NULL;
  o->pools = NULL;
  o->num_pools = 0;
  for (int i = 0; i < src->num_pools; i++)
    if (tfd_session_options_add_inter_op_pool(o, src->pools[i].num_threads, src->pools[i].global_name, NULL) != TFD_OK) {
      tfd_session_options_free(o);
      return NULL;
    }
  if (src->visible_devices && tfd_session_options_set_visible_devices(o, src->visible_devices, NULL) != TFD_OK) {
    tfd_session_options_free(o);
    return NULL;
  }
  for (size_t i = 0; i < src->num_counts; i++) {
    if (tfd_session_options_set_device_count(o, src->counts[i].type, src->counts[i].n, NULL) != TFD_OK) {
      tfd_session_options_free(o);
      return NULL;
    }
  }
  return o;
}

tfd_code tfd_session_options_set_device_count(tfd_session_options *o, const char *type, int n, tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_session_options_set_device_count", "o", o) ||
      tfd_arg_required(status, "tfd_session_options_set_device_count", "type", type))
    return TFD_INVALID_ARGUMENT;
  if (!*type) return tfd_status_setf(status, TFD_INVALID_ARGUMENT, "device_count: empty device type");
  if (n < 0)
    return tfd_status_setf(status, TFD_INVALID_ARGUMENT, "device_count.%s must not be negative (got %d)", type, n);
  for (size_t i = 0; i < o->num_counts; i++) {
    if (strcmp(o->counts[i].type, type) == 0) {
      o->counts[i].n = n;
      return TFD_OK;
    }
  }
  device_count *c = realloc(o->counts, (o->num_counts + 1) * sizeof *c);
  if (!c) return tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "out of memory setting device_count");
  o->counts = c;
  char *t = strdup(type);
  if (!t) return tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "out of memory setting device_count");
  o->counts[o->num_counts++] = (device_count){t, n};
  return TFD_OK;
}

tfd_code tfd_session_options_set_visible_devices(tfd_session_options *o, const char *list, tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_session_options_set_visible_devices", "o", o)) return TFD_INVALID_ARGUMENT;
  char *copy = list && *list ? strdup(list) : NULL;
  if (list && *list && !copy) return tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "out of memory setting visible_devices");
  free(o->visible_devices);
  o->visible_devices = copy;
  return TFD_OK;
}

const char *tfd_session_options_visible_devices(const tfd_session_options *o) {
  return o && o->visible_devices ? o->visible_devices : "";
}

tfd_code tfd_session_options_set_gpu_memory_fraction(tfd_session_options *o, double fraction, tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_session_options_set_gpu_memory_fraction", "o", o)) return TFD_INVALID_ARGUMENT;
  if (!(fraction >= 0 && fraction <= 1))
    return tfd_status_setf(status, TFD_INVALID_ARGUMENT, "gpu.memory_fraction must be in [0, 1] (0: the default), got %g",
                           fraction);
  o->gpu_memory_fraction = fraction;
  return TFD_OK;
}

double tfd_session_options_gpu_memory_fraction(const tfd_session_options *o) { return o ? o->gpu_memory_fraction : 0; }
void tfd_session_options_set_gpu_allow_growth(tfd_session_options *o, bool on) { o->gpu_allow_growth = on; }
bool tfd_session_options_gpu_allow_growth(const tfd_session_options *o) { return o && o->gpu_allow_growth; }
void tfd_session_options_set_runtime(tfd_session_options *o, tfd_runtime *rt) { o->runtime = rt; }
tfd_runtime *tfd_session_options_runtime(const tfd_session_options *o) { return o ? o->runtime : NULL; }

void tfd_session_options_set_gpu_sync_every_op(tfd_session_options *o, bool on) { o->gpu_sync_every_op = on; }
bool tfd_session_options_gpu_sync_every_op(const tfd_session_options *o) { return o && o->gpu_sync_every_op; }

void tfd_session_options_set_gpu_graphs(tfd_session_options *o, bool on) { o->gpu_graphs_off = !on; }
bool tfd_session_options_gpu_graphs(const tfd_session_options *o) { return !o || !o->gpu_graphs_off; }

tfd_code tfd_session_options_set_gpu_max_streams(tfd_session_options *o, int n, tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_session_options_set_gpu_max_streams", "o", o)) return TFD_INVALID_ARGUMENT;
  if (n < 1 || n > TFD_GPU_MAX_STREAMS)
    return tfd_status_setf(status, TFD_INVALID_ARGUMENT, "gpu.max_streams must be in [1, %d], got %d", TFD_GPU_MAX_STREAMS,
                           n);
  o->gpu_max_streams = n;
  return TFD_OK;
}

int tfd_session_options_gpu_max_streams(const tfd_session_options *o) {
  return o && o->gpu_max_streams > 0 ? o->gpu_max_streams : 1;
}

int tfd_session_options_device_count(const tfd_session_options *o, const char *type, int dflt) {
  if (!o) return dflt;
  for (size_t i = 0; i < o->num_counts; i++)
    if (strcmp(o->counts[i].type, type) == 0) return o->counts[i].n;
  return dflt;
}

size_t tfd_session_options_num_device_counts(const tfd_session_options *o) { return o ? o->num_counts : 0; }

void tfd_session_options_device_count_at(const tfd_session_options *o, size_t i, const char **type, int *n) {
  *type = o->counts[i].type;
  *n = o->counts[i].n;
}

void tfd_session_options_set_intra_op_threads(tfd_session_options *o, int n) { o->intra_op_threads = n > 0 ? n : 0; }
int tfd_session_options_intra_op_threads(const tfd_session_options *o) { return o ? o->intra_op_threads : 0; }
void tfd_session_options_set_inter_op_threads(tfd_session_options *o, int n) { o->inter_op_threads = n < 0 ? -1 : n; }
int tfd_session_options_inter_op_threads(const tfd_session_options *o) { return o ? o->inter_op_threads : 0; }
void tfd_session_options_set_use_global_threadpool(tfd_session_options *o, bool on) { o->use_global_threadpool = on; }
bool tfd_session_options_use_global_threadpool(const tfd_session_options *o) {
  return o ? o->use_global_threadpool : true;
}

void tfd_session_options_set_allow_soft_placement(tfd_session_options *o, bool on) { o->allow_soft_placement = on; }
bool tfd_session_options_allow_soft_placement(const tfd_session_options *o) { return o && o->allow_soft_placement; }
void tfd_session_options_set_log_device_placement(tfd_session_options *o, bool on) { o->log_device_placement = on; }
bool tfd_session_options_log_device_placement(const tfd_session_options *o) { return o && o->log_device_placement; }
void tfd_session_options_set_operation_timeout_ms(tfd_session_options *o, int64_t ms) {
  o->operation_timeout_ms = ms > 0 ? ms : 0;
}
int64_t tfd_session_options_operation_timeout_ms(const tfd_session_options *o) { return o ? o->operation_timeout_ms : 0; }
void tfd_session_options_set_use_per_session_threads(tfd_session_options *o, bool on) {
  o->use_per_session_threads = on;
}
bool tfd_session_options_use_per_session_threads(const tfd_session_options *o) {
  return o && o->use_per_session_threads;
}
void tfd_session_options_set_build_cost_model(tfd_session_options *o, bool on) { o->build_cost_model = on; }
bool tfd_session_options_build_cost_model(const tfd_session_options *o) { return o && o->build_cost_model; }
tfd_code tfd_session_options_set_build_cost_model_after(tfd_session_options *o, int64_t n, tfd_status *st) {
  tfd_status_reset(st);
  if (tfd_arg_required(st, "tfd_session_options_set_build_cost_model_after", "o", o)) return TFD_INVALID_ARGUMENT;
  if (n < 0)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "build_cost_model_after must be >= 0, got %lld", (long long)n);
  o->build_cost_model_after = n;
  return TFD_OK;
}
int64_t tfd_session_options_build_cost_model_after(const tfd_session_options *o) { return o ? o->build_cost_model_after : 0; }
void tfd_session_options_set_place_pruned_graph(tfd_session_options *o, bool on) { o->place_pruned_graph = on; }
bool tfd_session_options_place_pruned_graph(const tfd_session_options *o) { return o && o->place_pruned_graph; }
void tfd_session_options_set_optimize_graph(tfd_session_options *o, bool on) { o->skip_graph_optimization = !on; }
bool tfd_session_options_optimize_graph(const tfd_session_options *o) { return !o || !o->skip_graph_optimization; }

tfd_code tfd_session_options_add_inter_op_pool(tfd_session_options *o, int num_threads, const char *global_name,
                                               tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_session_options_add_inter_op_pool", "o", o)) return TFD_INVALID_ARGUMENT;
  if (o->num_pools >= TFD_MAX_INTER_OP_POOLS)
    return tfd_status_setf(status, TFD_INVALID_ARGUMENT, "session_inter_op_thread_pool: at most %d pools",
                           TFD_MAX_INTER_OP_POOLS);
  if (num_threads < 0 || num_threads > TFD_MAX_THREADS)
    return tfd_status_setf(status, TFD_INVALID_ARGUMENT,
                           "session_inter_op_thread_pool[%d].num_threads must be in [0, %d] (0: the default), got %d",
                           o->num_pools, TFD_MAX_THREADS, num_threads);
  inter_pool *grown = realloc(o->pools, ((size_t)o->num_pools + 1) * sizeof *grown);
  if (!grown) return tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "out of memory adding an inter-op pool");
  o->pools = grown;
  char *name = strdup(global_name ? global_name : "");
  if (!name) return tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "out of memory adding an inter-op pool");
  o->pools[o->num_pools++] = (inter_pool){num_threads, name};
  return TFD_OK;
}

int tfd_session_options_num_inter_op_pools(const tfd_session_options *o) { return o ? o->num_pools : 0; }

bool tfd_session_options_inter_op_pool(const tfd_session_options *o, int i, int *num_threads, const char **global_name) {
  if (!o || i < 0 || i >= o->num_pools) return false;
  if (num_threads) *num_threads = o->pools[i].num_threads;
  if (global_name) *global_name = o->pools[i].global_name;
  return true;
}

void tfd_session_options_clear_inter_op_pools(tfd_session_options *o) {
  for (int i = 0; i < o->num_pools; i++) free(o->pools[i].global_name);
  free(o->pools);
  o->pools = NULL;
  o->num_pools = 0;
}
