/* Step graphs: recording a partition once and replaying it (see step_graph.h). */
#include "step_graph.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../core/log.h"
#include "../core/status_internal.h"
#include "../core/tensor_internal.h"
#include "../kernels/device_math.h"
#include "executor.h"

enum { SIG_NONE, SIG_SEEN, SIG_READY, SIG_FAILED };

struct tfd_step_graph {
  const tfd_graph *g;
  tfd_kernel **kernels; /* per node, borrowed */
  tfd_device *d;
  const tfd_device_math *m;
  int *feeds, num_feeds;     /* _Feed nodes */
  int *fetches, num_fetches; /* _Fetch nodes */
  int *region, num_region;   /* every other node, in topological order */
  pthread_mutex_t mu;        /* one step through the graph at a time */
  /* The signature last seen (the fed tensors' dtypes and shapes, per _Feed node) and where it stands. */
  int state;
  tfd_dtype *sig_types;
  tfd_shape *sig_shapes;
  /* SIG_READY: the graph, the tensors its feeds are copied into (per _Feed node) and the tensors its
   * _Fetch nodes read (per _Fetch node); all owned. */
  void *graph;
  tfd_tensor **kept_feeds, **kept_fetches;
  atomic_int_least64_t captured, replayed;
};

static bool is_op(const tfd_graph *g, int node, const char *op) { return strcmp(g->nodes[node].op->name, op) == 0; }

tfd_step_graph *tfd_step_graph_new(const tfd_graph *g, tfd_kernel *const *kernels, tfd_device *d) {
  const tfd_device_math *m = d ? d->math : NULL;
  if (!m || !m->capture_begin || !m->capture_end || !m->graph_launch || !m->graph_free || !m->copy_walk) return NULL;
  for (int i = 0; i < g->n; i++) {
    const tfd_gnode *n = &g->nodes[i];
    const char *why = n->op->stateful                 ? "is stateful"
                      : kernels[i]->compute_async     ? "runs asynchronously"
                      : is_op(g, i, "_Send") || is_op(g, i, "_Recv") ? "moves tensors between partitions"
                      : is_op(g, i, "Enter")          ? "starts a loop"
                      : kernels[i]->on_caller_thread  ? "runs on the caller's thread"
                                                      : NULL;
    for (int o = 0; !why && o < n->num_outputs; o++)
      if (n->out_types[o] == TFD_RESOURCE || n->out_types[o] == TFD_VARIANT) why = "outputs a resource or variant";
    if (why) { /* a debug line says why a GPU partition runs node by node */
      tfd_log(TFD_LOG_DEBUG, "%s: no step graph for this partition: node '%s' (%s) %s", tfd_device_name(d),
              tfd_node_def_name(n->def), n->op->name, why);
      return NULL;
    }
  }
  tfd_step_graph *sg = calloc(1, sizeof *sg);
  size_t n = g->n ? (size_t)g->n : 1;
  if (!sg) return NULL;
  sg->g = g;
  sg->d = d;
  sg->m = m;
  sg->kernels = malloc(n * sizeof *sg->kernels);
  sg->feeds = malloc(n * sizeof *sg->feeds);
  sg->fetches = malloc(n * sizeof *sg->fetches);
  sg->region = malloc(n * sizeof *sg->region);
  sg->sig_types = calloc(n, sizeof *sg->sig_types);
  sg->sig_shapes = calloc(n, sizeof *sg->sig_shapes);
  sg->kept_feeds = calloc(n, sizeof *sg->kept_feeds);
  sg->kept_fetches = calloc(n, sizeof *sg->kept_fetches);
  pthread_mutex_init(&sg->mu, NULL);
  if (!sg->kernels || !sg->feeds || !sg->fetches || !sg->region || !sg->sig_types || !sg->sig_shapes ||
      !sg->kept_feeds || !sg->kept_fetches) {
    tfd_step_graph_free(sg);
    return NULL;
  }
  memcpy(sg->kernels, kernels, (size_t)g->n * sizeof *kernels);
  for (int t = 0; t < g->n; t++) {
    int i = g->topo[t];
    if (is_op(g, i, "_Feed")) sg->feeds[sg->num_feeds++] = i;
    else if (is_op(g, i, "_Fetch")) sg->fetches[sg->num_fetches++] = i;
    else sg->region[sg->num_region++] = i;
  }
  if (sg->num_region == 0) { /* nothing to record */
    tfd_step_graph_free(sg);
    return NULL;
  }
  return sg;
}

static void forget_graph(tfd_step_graph *sg) {
  if (sg->graph) sg->m->graph_free(sg->d, sg->graph);
  sg->graph = NULL;
  for (int i = 0; i < sg->num_feeds; i++) tfd_tensor_unref(sg->kept_feeds[i]), sg->kept_feeds[i] = NULL;
  for (int i = 0; i < sg->num_fetches; i++) tfd_tensor_unref(sg->kept_fetches[i]), sg->kept_fetches[i] = NULL;
}

void tfd_step_graph_free(tfd_step_graph *sg) {
  if (!sg) return;
  if (sg->kept_feeds && sg->kept_fetches) forget_graph(sg);
  pthread_mutex_destroy(&sg->mu);
  free(sg->kernels);
  free(sg->feeds);
  free(sg->fetches);
  free(sg->region);
  free(sg->sig_types);
  free(sg->sig_shapes);
  free(sg->kept_feeds);
  free(sg->kept_fetches);
  free(sg);
}

void tfd_step_graph_counts(const tfd_step_graph *sg, int64_t *captured, int64_t *replayed) {
  *captured = sg ? atomic_load(&sg->captured) : 0;
  *replayed = sg ? atomic_load(&sg->replayed) : 0;
}

/* Whether the fed tensors match the signature last seen; records them as the new one when not. false
 * also when a feed is missing or lives in host memory on the device (the caller then runs as usual). */
static bool same_signature(tfd_step_graph *sg, const tfd_executor_args *args, bool *usable) {
  bool same = sg->state != SIG_NONE;
  *usable = true;
  for (int f = 0; f < sg->num_feeds; f++) {
    int64_t idx = sg->kernels[sg->feeds[f]]->index;
    const tfd_tensor *t = idx >= 0 && idx < args->num_feeds ? args->feeds[idx] : NULL;
    if (!t || tfd_kernel_memory_for(sg->d, tfd_tensor_dtype(t)) != tfd_device_get_allocator(sg->d)) {
      *usable = false;
      return false;
    }
    tfd_shape s;
    tfd_shape_of_tensor(t, &s);
    if (same && (sg->sig_types[f] != tfd_tensor_dtype(t) || !tfd_shape_equal(&sg->sig_shapes[f], &s))) same = false;
    sg->sig_types[f] = tfd_tensor_dtype(t);
    sg->sig_shapes[f] = s;
  }
  return same;
}

/* One step's nodes run one after another on this thread: each node's outputs, kept until released. */
typedef struct run {
  tfd_step_graph *sg;
  tfd_kernel_ctx base;
  tfd_tensor **out;  /* per node: TFD_MAX_OP_OUTPUTS entries, from out_start */
  int *out_start;
} run;

static bool run_init(run *r, tfd_step_graph *sg, const tfd_executor_args *args) {
  const tfd_graph *g = sg->g;
  r->sg = sg;
  r->out_start = malloc(((size_t)g->n + 1) * sizeof *r->out_start);
  int total = 0;
  for (int i = 0; r->out_start && i < g->n; i++) r->out_start[i] = total, total += g->nodes[i].num_outputs;
  r->out = r->out_start ? calloc((size_t)total + 1, sizeof *r->out) : NULL;
  r->base = tfd_executor_step_ctx(sg->d, args);
  r->base.owns_inputs = false; /* outputs are kept until the end: nothing may be written in place */
  if (!r->out) {
    free(r->out_start);
    return false;
  }
  return true;
}

static void run_release(run *r) {
  const tfd_graph *g = r->sg->g;
  for (int i = 0; i < g->n; i++)
    for (int o = 0; o < g->nodes[i].num_outputs; o++) {
      tfd_tensor_unref(r->out[r->out_start[i] + o]);
      r->out[r->out_start[i] + o] = NULL;
    }
}

static void run_free(run *r) {
  run_release(r);
  free(r->out);
  free(r->out_start);
}

/* Runs node i with its inputs from earlier nodes' outputs (or, for a _Fetch in a replay, `fetch_in`). */
static tfd_code run_node(run *r, int i, tfd_tensor *fetch_in, tfd_status *st) {
  const tfd_gnode *n = &r->sg->g->nodes[i];
  tfd_kernel *k = r->sg->kernels[i];
  tfd_tensor *in[TFD_MAX_OP_OUTPUTS + 16], **inputs = in, **heap = NULL;
  if (n->num_inputs > (int)(sizeof in / sizeof in[0])) {
    if (!(heap = malloc((size_t)n->num_inputs * sizeof *heap)))
      return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory running node '%s'", tfd_gnode_name(n));
    inputs = heap;
  }
  for (int j = 0; j < n->num_inputs; j++)
    inputs[j] = fetch_in ? fetch_in : r->out[r->out_start[n->inputs[j].node] + n->inputs[j].index];
  tfd_kernel_ctx c = r->base;
  c.inputs = inputs;
  c.num_inputs = n->num_inputs;
  c.outputs = &r->out[r->out_start[i]];
  c.num_outputs = n->num_outputs;
  c.status = st;
  k->compute(k, &c);
  free(heap);
  tfd_node_check_outputs(NULL, n, c.outputs, n->num_outputs, false, st);
  return st->code;
}

static tfd_code run_feeds(run *r, tfd_status *st) {
  for (int f = 0; f < r->sg->num_feeds; f++)
    if (run_node(r, r->sg->feeds[f], NULL, st) != TFD_OK) return st->code;
  return TFD_OK;
}

/* The _Fetch nodes, reading the kept tensors (or, when kept is NULL, their inputs' outputs). */
static tfd_code run_fetches(run *r, tfd_tensor **kept, tfd_status *st) {
  for (int f = 0; f < r->sg->num_fetches; f++)
    if (run_node(r, r->sg->fetches[f], kept ? kept[f] : NULL, st) != TFD_OK) return st->code;
  return TFD_OK;
}

/* The tensor _Fetch node f reads. */
static tfd_tensor *fetch_source(run *r, int f) {
  const tfd_gnode *n = &r->sg->g->nodes[r->sg->fetches[f]];
  return r->out[r->out_start[n->inputs[0].node] + n->inputs[0].index];
}

/* Records the region into a graph, launches it, fetches. false (nothing reported, the state FAILED):
 * recording failed, and the caller runs the step as usual. */
static bool capture(tfd_step_graph *sg, run *r, tfd_status *st) {
  tfd_status tmp = TFD_STATUS_INIT;
  if (run_feeds(r, &tmp) != TFD_OK || sg->m->capture_begin(sg->d, &tmp) != TFD_OK) goto failed;
  bool ok = true;
  for (int i = 0; ok && i < sg->num_region; i++) ok = run_node(r, sg->region[i], NULL, &tmp) == TFD_OK;
  if (ok)
    for (int f = 0; f < sg->num_feeds; f++) sg->kept_feeds[f] = tfd_tensor_ref(r->out[r->out_start[sg->feeds[f]]]);
  if (ok)
    for (int f = 0; f < sg->num_fetches; f++) sg->kept_fetches[f] = tfd_tensor_ref(fetch_source(r, f));
  /* The region's other tensors go while capturing, so the device keeps their memory for the graph. */
  run_release(r);
  tfd_status end = TFD_STATUS_INIT;
  if (sg->m->capture_end(sg->d, !ok, &sg->graph, &end) != TFD_OK || !ok || !sg->graph) {
    if (ok) tfd_status_setf(&tmp, tfd_status_code(&end), "%s", tfd_status_message(&end));
    tfd_status_clear(&end);
    forget_graph(sg);
    goto failed;
  }
  if (sg->m->graph_launch(sg->d, sg->graph, st) == TFD_OK) run_fetches(r, sg->kept_fetches, st);
  atomic_fetch_add(&sg->captured, 1);
  sg->state = SIG_READY;
  tfd_log(TFD_LOG_DEBUG, "%s: step graph: recorded %d nodes, replayed from the next step with these shapes",
          tfd_device_name(sg->d), sg->num_region);
  return true;
failed:
  tfd_log(TFD_LOG_DEBUG, "%s: step graph: not recorded, the step runs node by node: %s", tfd_device_name(sg->d),
          tfd_status_message(&tmp));
  tfd_status_clear(&tmp);
  run_release(r);
  sg->state = SIG_FAILED;
  return false;
}

/* Copies what this step feeds into the kept tensors, launches, fetches. */
static void replay(tfd_step_graph *sg, run *r, tfd_status *st) {
  if (run_feeds(r, st) != TFD_OK) return;
  for (int f = 0; f < sg->num_feeds; f++) {
    tfd_tensor *src = r->out[r->out_start[sg->feeds[f]]], *dst = sg->kept_feeds[f];
    int64_t n = (int64_t)tfd_tensor_byte_size(dst);
    if (n == 0) continue;
    tfd_dm_walk w = {.nd = 1, .dims = {n}, .strides = {{1}, {1}}};
    if (sg->m->copy_walk(sg->d, 1, tfd_tensor_const_data(src), tfd_tensor_data(dst), &w, st) != TFD_OK) return;
  }
  if (sg->m->graph_launch(sg->d, sg->graph, st) != TFD_OK) return;
  run_fetches(r, sg->kept_fetches, st);
  atomic_fetch_add(&sg->replayed, 1);
}

bool tfd_step_graph_run(tfd_step_graph *sg, const tfd_executor_args *args, tfd_status *st) {
  if (!sg || args->stats || pthread_mutex_trylock(&sg->mu) != 0) return false;
  bool usable, same = same_signature(sg, args, &usable), ran = false;
  if (!usable) {
    sg->state = SIG_NONE;
    forget_graph(sg);
    pthread_mutex_unlock(&sg->mu);
    return false;
  }
  if (!same) { /* a new signature: this step runs as usual and warms the kernels up */
    forget_graph(sg);
    sg->state = SIG_SEEN;
    pthread_mutex_unlock(&sg->mu);
    return false;
  }
  if (sg->state == SIG_FAILED) {
    pthread_mutex_unlock(&sg->mu);
    return false;
  }
  run r;
  if (!run_init(&r, sg, args)) {
    pthread_mutex_unlock(&sg->mu);
    return false;
  }
  if (sg->state == SIG_SEEN) {
    ran = capture(sg, &r, st);
  } else {
    replay(sg, &r, st);
    ran = true;
  }
  run_free(&r);
  pthread_mutex_unlock(&sg->mu);
  return ran;
}
