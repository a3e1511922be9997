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

/* Signatures whose graphs a partition keeps: a frame loop that alternates between a few input
 * shapes (two batch sizes, say) replays each, where a single graph would be replaced on every
 * switch and never replayed. Bounded because each graph holds the device memory it writes. */
#define TFD_STEP_GRAPH_SIGNATURES 4

/* One signature (the fed tensors' dtypes and shapes, per _Feed node) and where it stands. SIG_READY:
 * its graph, the tensors its feeds are copied into (per _Feed node) and the tensors its _Fetch nodes
 * read (per _Fetch node); all owned. */
typedef struct sig_entry {
  int state;
  int64_t last_used; /* the step that last used it, to replace the least recently used */
  tfd_dtype *types;
  tfd_shape *shapes;
  void *graph;
  tfd_tensor **kept_feeds, **kept_fetches;
} sig_entry;

struct tfd_step_graph {
  const tfd_graph *g;
  tfd_kernel **kernels; /* per node, borrowed */
  tfd_device *d;
  const tfd_device_math *m;
  int *feeds, num_feeds;     /* _Feed nodes */
  int *fetches, num_fetches; /* _Fetch nodes */
  int *region, num_region;   /* every other node, in topological order */
  pthread_mutex_t mu;        /* one step through the graphs at a time; guards what follows */
  sig_entry sigs[TFD_STEP_GRAPH_SIGNATURES];
  tfd_dtype *cur_types; /* this step's signature, read once from its feeds by find_signature */
  tfd_shape *cur_shapes;
  int64_t steps; /* steps that reached the signature check */
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
      if (n->out_types[o] == TFD_RESOURCE || n->out_types[o] == TFD_VARIANT || n->out_types[o] == TFD_STRING)
        why = "outputs a resource, variant or string";
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
  sg->cur_types = malloc(n * sizeof *sg->cur_types);
  sg->cur_shapes = malloc(n * sizeof *sg->cur_shapes);
  bool ok = sg->kernels && sg->feeds && sg->fetches && sg->region && sg->cur_types && sg->cur_shapes;
  for (int e = 0; e < TFD_STEP_GRAPH_SIGNATURES; e++) {
    sig_entry *x = &sg->sigs[e];
    x->types = calloc(n, sizeof *x->types);
    x->shapes = calloc(n, sizeof *x->shapes);
    x->kept_feeds = calloc(n, sizeof *x->kept_feeds);
    x->kept_fetches = calloc(n, sizeof *x->kept_fetches);
    ok = ok && x->types && x->shapes && x->kept_feeds && x->kept_fetches;
  }
  pthread_mutex_init(&sg->mu, NULL);
  if (!ok) {
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

static void forget_graph(tfd_step_graph *sg, sig_entry *x) {
  if (x->graph) sg->m->graph_free(sg->d, x->graph);
  x->graph = NULL;
  for (int i = 0; x->kept_feeds && i < sg->num_feeds; i++) tfd_tensor_unref(x->kept_feeds[i]), x->kept_feeds[i] = NULL;
  for (int i = 0; x->kept_fetches && i < sg->num_fetches; i++)
    tfd_tensor_unref(x->kept_fetches[i]), x->kept_fetches[i] = NULL;
}

void tfd_step_graph_free(tfd_step_graph *sg) {
  if (!sg) return;
  for (int e = 0; e < TFD_STEP_GRAPH_SIGNATURES; e++) {
    sig_entry *x = &sg->sigs[e];
    forget_graph(sg, x);
    free(x->types);
    free(x->shapes);
    free(x->kept_feeds);
    free(x->kept_fetches);
  }
  pthread_mutex_destroy(&sg->mu);
  free(sg->kernels);
  free(sg->feeds);
  free(sg->fetches);
  free(sg->region);
  free(sg->cur_types);
  free(sg->cur_shapes);
  free(sg);
}

void tfd_step_graph_counts(const tfd_step_graph *sg, int64_t *captured, int64_t *replayed) {
  *captured = sg ? atomic_load(&sg->captured) : 0;
  *replayed = sg ? atomic_load(&sg->replayed) : 0;
}

/* The tensor fed to _Feed node f, or NULL. */
static tfd_tensor *fed(const tfd_step_graph *sg, const tfd_executor_args *args, int f) {
  int64_t idx = sg->kernels[sg->feeds[f]]->index;
  return idx >= 0 && idx < args->num_feeds ? args->feeds[idx] : NULL;
}

/* The entry of this step's signature: the one that matches the fed tensors, else a new one in the
 * place of an unused or the least recently used entry (its graph forgotten; state SIG_NONE). NULL
 * when a feed is missing or lives in host memory on the device (the caller then runs as usual). */
static sig_entry *find_signature(tfd_step_graph *sg, const tfd_executor_args *args) {
  for (int f = 0; f < sg->num_feeds; f++) {
    const tfd_tensor *t = fed(sg, args, f);
    if (!t || tfd_kernel_memory_for(sg->d, tfd_tensor_dtype(t)) != tfd_device_get_allocator(sg->d)) return NULL;
    sg->cur_types[f] = tfd_tensor_dtype(t);
    tfd_shape_of_tensor(t, &sg->cur_shapes[f]);
  }
  sig_entry *victim = &sg->sigs[0];
  for (int e = 0; e < TFD_STEP_GRAPH_SIGNATURES; e++) {
    sig_entry *x = &sg->sigs[e];
    bool same = x->state != SIG_NONE;
    for (int f = 0; same && f < sg->num_feeds; f++)
      same = x->types[f] == sg->cur_types[f] && tfd_shape_equal(&x->shapes[f], &sg->cur_shapes[f]);
    if (same) return x;
    if (victim->state != SIG_NONE && (x->state == SIG_NONE || x->last_used < victim->last_used)) victim = x;
  }
  forget_graph(sg, victim);
  victim->state = SIG_NONE;
  memcpy(victim->types, sg->cur_types, (size_t)sg->num_feeds * sizeof *victim->types);
  memcpy(victim->shapes, sg->cur_shapes, (size_t)sg->num_feeds * sizeof *victim->shapes);
  return victim;
}

/* One step's nodes run one after another on this thread: each node's outputs, kept until released. */
typedef struct run {
  tfd_step_graph *sg;
  tfd_kernel_context base;
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
  tfd_kernel_context c = r->base;
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
static bool capture(tfd_step_graph *sg, sig_entry *x, run *r, tfd_status *st) {
  tfd_status tmp = TFD_STATUS_INIT;
  if (run_feeds(r, &tmp) != TFD_OK || sg->m->capture_begin(sg->d, &tmp) != TFD_OK) goto failed;
  bool ok = true;
  for (int i = 0; ok && i < sg->num_region; i++) ok = run_node(r, sg->region[i], NULL, &tmp) == TFD_OK;
  if (ok)
    for (int f = 0; f < sg->num_feeds; f++) x->kept_feeds[f] = tfd_tensor_ref(r->out[r->out_start[sg->feeds[f]]]);
  if (ok)
    for (int f = 0; f < sg->num_fetches; f++) x->kept_fetches[f] = tfd_tensor_ref(fetch_source(r, f));
  /* The region's other tensors go while capturing, so the device keeps their memory for the graph. */
  run_release(r);
  tfd_status end = TFD_STATUS_INIT;
  if (sg->m->capture_end(sg->d, !ok, &x->graph, &end) != TFD_OK || !ok || !x->graph) {
    if (ok) tfd_status_setf(&tmp, tfd_status_code(&end), "%s", tfd_status_message(&end));
    tfd_status_clear(&end);
    forget_graph(sg, x);
    goto failed;
  }
  if (sg->m->graph_launch(sg->d, x->graph, st) == TFD_OK) run_fetches(r, x->kept_fetches, st);
  atomic_fetch_add(&sg->captured, 1);
  x->state = SIG_READY;
  tfd_log(TFD_LOG_DEBUG, "%s: step graph: recorded %d nodes, replayed from the next step with these shapes",
          tfd_device_name(sg->d), sg->num_region);
  return true;
failed:
  tfd_log(TFD_LOG_DEBUG, "%s: step graph: not recorded, the step runs node by node: %s", tfd_device_name(sg->d),
          tfd_status_message(&tmp));
  tfd_status_clear(&tmp);
  run_release(r);
  x->state = SIG_FAILED;
  return false;
}

/* Copies what this step feeds into the kept tensors, launches, fetches. A feed in host memory goes
 * straight into its kept tensor, one host-to-device copy; one already on the device runs its _Feed
 * node and a device copy. (find_signature has checked every feed's presence, dtype and shape.) */
static void replay(tfd_step_graph *sg, sig_entry *x, run *r, const tfd_executor_args *args, tfd_status *st) {
  for (int f = 0; f < sg->num_feeds; f++) {
    tfd_tensor *dst = x->kept_feeds[f], *t = fed(sg, args, f);
    int64_t n = (int64_t)tfd_tensor_byte_size(dst);
    if (n == 0) continue;
    if (tfd_tensor_in_host_memory(t)) {
      if (tfd_tensor_copy_host_into(t, dst, st) != TFD_OK) return;
      continue;
    }
    if (run_node(r, sg->feeds[f], NULL, st) != TFD_OK) return;
    tfd_tensor *src = r->out[r->out_start[sg->feeds[f]]];
    tfd_dm_walk w = {.nd = 1, .dims = {n}, .strides = {{1}, {1}}};
    if (sg->m->copy_walk(sg->d, 1, tfd_tensor_const_data(src), tfd_tensor_data(dst), &w, st) != TFD_OK) return;
  }
  if (sg->m->graph_launch(sg->d, x->graph, st) != TFD_OK) return;
  run_fetches(r, x->kept_fetches, st);
  atomic_fetch_add(&sg->replayed, 1);
}

bool tfd_step_graph_run(tfd_step_graph *sg, const tfd_executor_args *args, tfd_status *st) {
  if (!sg || args->stats || pthread_mutex_trylock(&sg->mu) != 0) return false;
  sig_entry *x = find_signature(sg, args);
  if (x) x->last_used = ++sg->steps;
  if (!x || x->state == SIG_NONE || x->state == SIG_FAILED) {
    /* A new signature runs as usual, which warms its kernels up; a failed one always does. */
    if (x && x->state == SIG_NONE) x->state = SIG_SEEN;
    pthread_mutex_unlock(&sg->mu);
    return false;
  }
  run r;
  if (!run_init(&r, sg, args)) {
    pthread_mutex_unlock(&sg->mu);
    return false;
  }
  bool ran = true;
  if (x->state == SIG_SEEN) ran = capture(sg, x, &r, st);
  else replay(sg, x, &r, args, st);
  run_free(&r);
  pthread_mutex_unlock(&sg->mu);
  return ran;
}
