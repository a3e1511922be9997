/* Executor: precompiled partitions, per-step pending counts, inline chains and pool fan-out. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../core/status_internal.h"
#include "../core/tensor_internal.h"
#include "../core/tracking_allocator.h"
#include "../framework/cancellation.h"
#include "executor.h"

#include "../framework/caller_queue.h"
#include "../graph/control_flow.h"
#include "frames.h"
#include "step_graph.h"

/* A successor: a node that waits for this one, and how many of its inputs
 * (data and control) this node satisfies. When that is all of them the
 * successor is ready as soon as this node is done, with no counter to touch. */
typedef struct succ {
  int dst;
  int count;
  bool whole;
} succ;

typedef struct item {
  tfd_kernel *kernel;
  bool owned; /* false: held by the device's OpSegment */
  bool is_async;
  bool cheap;
  int input_start, num_inputs, num_outputs;
  int initial_pending;
  int out_start;  /* e->out_ofs[out_start + o] .. [out_start + o + 1]: output o's consumer slots in e->out_slots */
  int succ_start; /* e->succs[succ_start ..] */
  int num_succs;
  bool seeded;      /* a Const whose value is in its consumers' slots from the step's start: never run */
  bool kept_inputs; /* some input slot is seeded: it keeps its value when the node is done */
} item;

typedef struct step step;

struct tfd_executor {
  tfd_graph *graph;
  tfd_device *device; /* referenced */
  item *items;
  int total_inputs;
  int *roots;
  int num_roots;
  int *out_ofs;   /* see item.out_start */
  int *out_slots; /* slot indices of consumers, by producer and output */
  succ *succs;
  int *counted;   /* nodes whose pending count is kept (some producer satisfies only part of it) */
  int num_counted;
  bool *kept;          /* by input slot: seeded with a Const's value (NULL: none is) */
  int *seeded_slots;   /* those slots, and the value each holds (the Const kernel's; each slot of a */
  tfd_tensor **seeds;  /* step holds a reference of its own) */
  int num_seeded_slots;
  int *seeded_nodes;   /* the seeded Consts, for the step stats of traced steps */
  int num_seeded_nodes;
  bool has_async;      /* some kernel may wait (queues, _Recv) */
  bool has_rendezvous; /* some kernel uses the step's rendezvous (_Send, _Recv) */
  bool needs_caller;   /* some kernel runs on the thread that started the step */
  bool sync_every_op;  /* the device's debugging switch: wait for it after every node */
  _Atomic(step *) spare; /* a finished step's memory, for the next one */
  tfd_frames *frames;    /* control flow: every step runs on the frame-aware path instead */
  tfd_step_graph *step_graph; /* replays the partition as one graph (step_graph.h), or NULL */
};

typedef struct kernel_maker {
  tfd_kernel_init init;
} kernel_maker;

static tfd_op_kernel *make_shared_kernel(void *arg, tfd_status *st) {
  tfd_kernel *k = tfd_kernel_create(&((kernel_maker *)arg)->init, st);
  return k ? &k->base : NULL;
}

static void step_free(step *s);

void tfd_executor_free(tfd_executor *e) {
  if (!e) return;
  if (e->items)
    for (int i = 0; i < e->graph->n; i++)
      if (e->items[i].owned && e->items[i].kernel) e->items[i].kernel->base.ops->destroy(&e->items[i].kernel->base);
  step_free(atomic_load(&e->spare));
  tfd_step_graph_free(e->step_graph);
  tfd_frames_free(e->frames);
  free(e->items);
  free(e->roots);
  free(e->out_ofs);
  free(e->out_slots);
  free(e->succs);
  free(e->counted);
  free(e->kept);
  free(e->seeded_slots);
  free(e->seeds);
  free(e->seeded_nodes);
  tfd_graph_free(e->graph);
  tfd_device_unref(e->device);
  free(e);
}

const tfd_graph *tfd_executor_graph(const tfd_executor *e) { return e->graph; }
tfd_device *tfd_executor_device(const tfd_executor *e) { return e->device; }
bool tfd_executor_may_wait(const tfd_executor *e) { return e->has_async || e->frames; }
bool tfd_executor_uses_rendezvous(const tfd_executor *e) { return e->has_rendezvous; }
bool tfd_executor_needs_caller(const tfd_executor *e) { return e->needs_caller; }

/* Lays out, for every node, where its outputs go and which nodes it makes ready. */
static bool build_edges(tfd_executor *e) {
  tfd_graph *g = e->graph;
  size_t nofs = 1, nslots = 0, nsuccs = 0;
  for (int i = 0; i < g->n; i++) {
    nofs += (size_t)g->nodes[i].num_outputs + 1;
    nsuccs += (size_t)g->nodes[i].num_out_edges;
    for (int k = 0; k < g->nodes[i].num_out_edges; k++)
      if (g->nodes[i].out_edges[k].dst_input >= 0) nslots++;
  }
  e->out_ofs = malloc(nofs * sizeof *e->out_ofs);
  e->out_slots = malloc((nslots ? nslots : 1) * sizeof *e->out_slots);
  e->succs = malloc((nsuccs ? nsuccs : 1) * sizeof *e->succs);
  e->counted = malloc((g->n ? (size_t)g->n : 1) * sizeof *e->counted);
  int *last = malloc((g->n ? (size_t)g->n : 1) * sizeof *last); /* dst -> its succ index for the current node */
  bool *counted = calloc(g->n ? (size_t)g->n : 1, sizeof *counted);
  if (!e->out_ofs || !e->out_slots || !e->succs || !e->counted || !last || !counted) {
    free(last);
    free(counted);
    return false;
  }
  for (int i = 0; i < g->n; i++) last[i] = -1;
  int ofs = 0, slot = 0, nsucc = 0;
  for (int i = 0; i < g->n; i++) {
    tfd_gnode *gn = &g->nodes[i];
    item *it = &e->items[i];
    it->out_start = ofs;
    for (int o = 0; o < gn->num_outputs; o++) {
      e->out_ofs[ofs++] = slot;
      for (int k = 0; k < gn->num_out_edges; k++) {
        tfd_out_edge *oe = &gn->out_edges[k];
        if (oe->dst_input >= 0 && oe->src_output == o) e->out_slots[slot++] = e->items[oe->dst].input_start + oe->dst_input;
      }
    }
    e->out_ofs[ofs++] = slot;
    it->succ_start = nsucc;
    for (int k = 0; k < gn->num_out_edges; k++) {
      int dst = gn->out_edges[k].dst;
      if (last[dst] < 0) {
        last[dst] = nsucc;
        e->succs[nsucc++] = (succ){dst, 0, false};
      }
      e->succs[last[dst]].count++;
    }
    it->num_succs = nsucc - it->succ_start;
    for (int k = it->succ_start; k < nsucc; k++) {
      succ *sc = &e->succs[k];
      last[sc->dst] = -1;
      sc->whole = sc->count == e->items[sc->dst].initial_pending;
      if (!sc->whole && !counted[sc->dst] && !it->seeded) { /* a seeded Const's successors are never counted */
        counted[sc->dst] = true;
        e->counted[e->num_counted++] = sc->dst;
      }
    }
  }
  free(last);
  free(counted);
  return true;
}

/* A Const with no control inputs outputs the same tensor every step, so it need not run: each step's
 * memory holds its value in the consumers' input slots from the start, and the consumers wait for
 * one input fewer. Half the nodes of a typical model are Consts (a weight and a bias per layer), and
 * each one run costs about as much as a small kernel (a step's bookkeeping, the output check). A
 * traced step still reports each one (see record_seeded). */
static bool seed_constants(tfd_executor *e) {
  tfd_graph *g = e->graph;
  int nslots = 0, nnodes = 0;
  for (int i = 0; i < g->n; i++) {
    tfd_gnode *gn = &g->nodes[i];
    tfd_kernel *k = e->items[i].kernel;
    if (!k->constant || gn->num_control > 0 || gn->num_outputs != 1 || !k->value ||
        tfd_tensor_dtype(k->value) != gn->out_types[0])
      continue; /* a wrong dtype runs, and fails the step as any kernel's wrong output does */
    e->items[i].seeded = true;
    nnodes++;
    for (int j = 0; j < gn->num_out_edges; j++) {
      tfd_out_edge *oe = &gn->out_edges[j];
      e->items[oe->dst].initial_pending--;
      if (oe->dst_input >= 0) nslots++;
    }
  }
  if (nnodes == 0) return true;
  e->kept = calloc(e->total_inputs ? (size_t)e->total_inputs : 1, sizeof *e->kept);
  e->seeded_slots = malloc((nslots ? (size_t)nslots : 1) * sizeof *e->seeded_slots);
  e->seeds = malloc((nslots ? (size_t)nslots : 1) * sizeof *e->seeds);
  e->seeded_nodes = malloc((size_t)nnodes * sizeof *e->seeded_nodes);
  if (!e->kept || !e->seeded_slots || !e->seeds || !e->seeded_nodes) return false;
  for (int i = 0; i < g->n; i++) {
    if (!e->items[i].seeded) continue;
    e->seeded_nodes[e->num_seeded_nodes++] = i;
    tfd_gnode *gn = &g->nodes[i];
    for (int j = 0; j < gn->num_out_edges; j++) {
      tfd_out_edge *oe = &gn->out_edges[j];
      if (oe->dst_input < 0) continue;
      int slot = e->items[oe->dst].input_start + oe->dst_input;
      e->kept[slot] = true;
      e->items[oe->dst].kept_inputs = true;
      e->seeded_slots[e->num_seeded_slots] = slot;
      e->seeds[e->num_seeded_slots++] = e->items[i].kernel->value;
    }
  }
  return true;
}

tfd_executor *tfd_executor_new(tfd_graph *g, tfd_device *device, const char *session_handle, tfd_status *st) {
  return tfd_executor_new_with(g, device, session_handle, g && tfd_graph_has_control_flow(g), st);
}

void tfd_node_stats_free_chain(tfd_node_stats *ns) {
  for (tfd_node_stats *x = ns->next, *next; x; x = next) {
    next = x->next;
    tfd_allocator_unref(x->tracker);
    free(x);
  }
  ns->next = NULL;
}

tfd_executor *tfd_executor_new_with(tfd_graph *g, tfd_device *device, const char *session_handle, bool frames,
                                    tfd_status *st) {
  tfd_executor *e = calloc(1, sizeof *e);
  if (!e) {
    tfd_graph_free(g);
    tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory creating an executor");
    return NULL;
  }
  e->graph = g;
  e->device = tfd_device_ref(device);
  for (const tfd_device *d = device; d; d = tfd_device_underlying(d)) e->sync_every_op |= d->sync_every_op;
  atomic_init(&e->spare, NULL);
  e->items = calloc(g->n ? (size_t)g->n : 1, sizeof *e->items);
  e->roots = calloc(g->n ? (size_t)g->n : 1, sizeof *e->roots);
  if (!e->items || !e->roots) {
    tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory creating an executor");
    tfd_executor_free(e);
    return NULL;
  }
  for (int i = 0; i < g->n; i++) {
    tfd_gnode *n = &g->nodes[i];
    item *it = &e->items[i];
    kernel_maker mk = {{n->def, n->op, device, n->num_inputs, n->in_types, n->out_types, n->num_outputs}};
    if (n->op->stateful && session_handle) {
      tfd_op_kernel *k = NULL;
      if (tfd_op_segment_find_or_create(tfd_device_op_segment(device), session_handle, tfd_gnode_name(n),
                                        make_shared_kernel, &mk, &k, st) != TFD_OK) {
        tfd_executor_free(e);
        return NULL;
      }
      it->kernel = (tfd_kernel *)k;
    } else {
      it->kernel = tfd_kernel_create(&mk.init, st);
      it->owned = true;
      if (!it->kernel) {
        tfd_executor_free(e);
        return NULL;
      }
    }
    it->is_async = it->kernel->compute_async != NULL;
    it->cheap = tfd_executor_node_cheap(n, device);
    it->input_start = e->total_inputs;
    it->num_inputs = n->num_inputs;
    it->num_outputs = n->num_outputs;
    it->initial_pending = n->num_inputs + n->num_control;
    e->total_inputs += n->num_inputs;
    e->has_async |= it->is_async;
    e->has_rendezvous |= strcmp(n->op->name, "_Send") == 0 || strcmp(n->op->name, "_Recv") == 0;
    e->needs_caller |= it->kernel->on_caller_thread;
  }
  /* Debugging with sync_every_op runs every node as written, so that a fault is blamed on the first. */
  if (!frames && !e->sync_every_op && !seed_constants(e)) {
    tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory creating an executor");
    tfd_executor_free(e);
    return NULL;
  }
  for (int i = 0; i < g->n; i++)
    if (e->items[i].initial_pending == 0 && !e->items[i].seeded) e->roots[e->num_roots++] = i;
  if (!build_edges(e)) {
    tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory creating an executor");
    tfd_executor_free(e);
    return NULL;
  }
  if (frames) {
    tfd_kernel **kernels = malloc((g->n ? (size_t)g->n : 1) * sizeof *kernels);
    for (int i = 0; kernels && i < g->n; i++) kernels[i] = e->items[i].kernel;
    e->frames = kernels ? tfd_frames_new(g, kernels, device, e->sync_every_op, st) : NULL;
    if (!kernels) tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory creating an executor");
    free(kernels);
    if (!e->frames) {
      tfd_executor_free(e);
      return NULL;
    }
  }
  return e;
}

/* ---- one step ----
 * A step's memory (pending counts, input slots, tasks) is one block that
 * the executor keeps for its next step when this one is over. Each node
 * made ready adds one to `outstanding` and each finished node takes one
 * away: a node that makes exactly one successor ready hands its own count
 * on, with no atomic operation, so a chain runs without touching it.
 *
 * Until a step hands a node to the pool (or starts an async kernel, whose
 * completion may come on any thread) it runs on one thread alone, and its
 * counters are updated with plain loads and stores; `shared` is set before
 * the first hand-off, which publishes them, and from then on every update
 * is an atomic read-modify-write. */
typedef struct task {
  step *s;
  int node;
} task;

struct step {
  tfd_executor *e;
  tfd_executor_args args;
  tfd_executor_done done;
  void *done_arg;
  tfd_kernel_context ctx; /* what every node's context shares */
  atomic_int *pending;
  tfd_tensor **slots;
  task *tasks;
  atomic_int outstanding;
  atomic_bool shared; /* another thread may run nodes of this step */
  atomic_bool failed;
  bool watch; /* a deadline (ctx.deadline) or a cancellation to look at between nodes */
  tfd_deadline deadline; /* the step's own, from args.timeout_ms */
  pthread_mutex_t mu;
  tfd_status status; /* the first error */
};

/* An async kernel's context must outlive the call that started it. */
typedef struct async_call {
  step *s;
  int node;
  tfd_kernel_context ctx;
  tfd_status status;
  tfd_tensor *outputs[TFD_MAX_OP_OUTPUTS];
} async_call;

static void process(step *s, int node);

/* Adds d to a counter of s; returns the value it had. */
static int counter_add(step *s, atomic_int *c, int d) {
  if (atomic_load_explicit(&s->shared, memory_order_relaxed)) return atomic_fetch_add(c, d);
  int v = atomic_load_explicit(c, memory_order_relaxed);
  atomic_store_explicit(c, v + d, memory_order_relaxed);
  return v;
}

static void step_free(step *s) {
  if (!s) return;
  for (int i = 0; i < s->e->num_seeded_slots; i++) tfd_tensor_unref(s->slots[s->e->seeded_slots[i]]);
  pthread_mutex_destroy(&s->mu);
  free(s);
}

/* Records the step's first error (later ones are dropped) and stops it; true for the first. */
static bool fail(step *s, tfd_status *st) {
  pthread_mutex_lock(&s->mu);
  bool first = s->status.code == TFD_OK;
  if (first) tfd_status_move(&s->status, st);
  pthread_mutex_unlock(&s->mu);
  if (first) {
    atomic_store(&s->failed, true);
    if (s->args.rendezvous) tfd_rendezvous_abort(s->args.rendezvous, s->status.code, tfd_status_message(&s->status));
  }
  tfd_status_clear(st);
  return first;
}

/* The deadline has passed: the step fails with its timeout, and its cancellation (when it has one)
 * is cancelled with it, which wakes this step's blocked kernels and is what a waiter reports. */
static void time_out(step *s) {
  tfd_status st = TFD_STATUS_INIT;
  tfd_kernel_timeout_status(&s->ctx, &st);
  char msg[200];
  snprintf(msg, sizeof msg, "%s", tfd_status_message(&st));
  if (fail(s, &st) && s->args.cancellation) tfd_cancellation_cancel(s->args.cancellation, TFD_DEADLINE_EXCEEDED, msg);
}

/* Between nodes of a watched step: a passed deadline or a cancellation stops it. A step of cheap
 * nodes never waits for anything a caller's timeout could wake, and an expensive node may run for
 * long: this is what ends such a step near its deadline. */
static void check_stop(step *s) {
  if (atomic_load_explicit(&s->failed, memory_order_relaxed)) return;
  int64_t deadline = tfd_kernel_deadline(&s->ctx);
  if (deadline && tfd_kernel_clock_micros() >= deadline) {
    time_out(s);
    return;
  }
  const char *why = NULL;
  tfd_code code = s->args.cancellation ? tfd_cancellation_reason(s->args.cancellation, &why) : TFD_OK;
  if (code != TFD_OK) {
    tfd_status st = TFD_STATUS_INIT;
    tfd_status_setf(&st, code, "%s", why);
    fail(s, &st);
  }
}

static void finish_step(step *s) {
  tfd_executor *e = s->e;
  /* A step not done by its deadline has timed out, however near it came: as a waiter would say. */
  int64_t deadline = tfd_kernel_deadline(&s->ctx);
  if (deadline && !atomic_load(&s->failed) && tfd_kernel_clock_micros() >= deadline) time_out(s);
  /* After an error, consumers that never ran still hold their inputs; else every slot was used and cleared. */
  if (atomic_load(&s->failed))
    for (int i = 0; i < e->total_inputs; i++) {
      if (e->kept && e->kept[i]) continue;
      tfd_tensor_unref(s->slots[i]);
      s->slots[i] = NULL;
    }
  tfd_executor_done done = s->done;
  void *arg = s->done_arg;
  tfd_status st = TFD_STATUS_INIT;
  tfd_status_move(&st, &s->status);
  /* Done with s before telling anyone: done may free the executor. */
  step *none = NULL;
  if (!atomic_compare_exchange_strong(&e->spare, &none, s)) step_free(s);
  done(arg, &st);
  tfd_status_clear(&st);
}

static void run_task(void *arg) {
  task *t = arg;
  process(t->s, t->node);
}

static int thread_id(step *s) {
  int id = tfd_threadpool_current_thread_id(s->args.runner);
  return id + 1;
}

/* Nodes ready to run on this thread: cheap ones always, plus one expensive
 * one to continue a chain; others go to the pool. Made with ready_stack_init:
 * entries above top are never read, and zeroing them all costs more than a
 * small step's whole dispatch. */
#define INLINE_MAX 64
typedef struct ready_stack {
  int nodes[INLINE_MAX];
  int top;
  bool has_expensive;
} ready_stack;

static void ready_stack_init(ready_stack *rs) {
  rs->top = 0;
  rs->has_expensive = false;
}

/* Runs `node`, already counted in outstanding: here when it is cheap (or
 * the first expensive one), else on the pool. */
static void dispatch(step *s, int node, ready_stack *rs) {
  bool cheap = s->e->items[node].cheap;
  tfd_threadpool *runner = s->args.runner;
  if (rs->top < INLINE_MAX && (cheap || !rs->has_expensive || !runner)) {
    if (!cheap) rs->has_expensive = true;
    rs->nodes[rs->top++] = node;
    return;
  }
  if (runner) atomic_store_explicit(&s->shared, true, memory_order_relaxed); /* published by the pool's queue */
  if (!runner || tfd_threadpool_schedule(runner, run_task, &s->tasks[node], NULL) != TFD_OK)
    process(s, node); /* the pool refused (or the stack is full): run it now, depth-first */
}

/* Records a finished node, hands its outputs on and runs or queues the
 * nodes it made ready. Touches nothing of the step after its last count is
 * handed on: the step may be over then. */
static void node_done(step *s, int node, tfd_kernel_context *ctx, tfd_status *st, int64_t start, ready_stack *rs) {
  tfd_executor *e = s->e;
  item *it = &e->items[node];
  tfd_gnode *gn = &e->graph->nodes[node];
  tfd_tensor **outputs = ctx->outputs;
  tfd_node_check_outputs(e->sync_every_op ? e->device : NULL, gn, outputs, it->num_outputs, false, st);
  if (s->args.stats)
    tfd_node_stats_record(&s->args.stats[node], gn, outputs, &s->slots[it->input_start], it->num_inputs,
                          ctx->allocator, start, thread_id(s));
  if (st->code != TFD_OK) fail(s, st);
  tfd_tensor **in = &s->slots[it->input_start];
  const bool *kept = it->kept_inputs ? &e->kept[it->input_start] : NULL;
  for (int i = 0; i < it->num_inputs; i++) {
    if (kept && kept[i]) continue;
    tfd_tensor_unref(in[i]);
    in[i] = NULL;
  }
  bool go_on = !atomic_load(&s->failed);
  /* Each output's reference goes to its last consumer; the others get new ones. */
  const int *ofs = &e->out_ofs[it->out_start];
  for (int o = 0; o < it->num_outputs; o++) {
    int a = ofs[o], b = ofs[o + 1];
    if (!go_on || a == b) {
      tfd_tensor_unref(outputs[o]);
      continue;
    }
    tfd_tensor_ref_n(outputs[o], b - a - 1);
    for (int k = a; k < b; k++) s->slots[e->out_slots[k]] = outputs[o];
  }
  /* Successors made ready are counted before any is handed out; this node's own count goes to the first. */
  enum { BATCH = 64 };
  int ready[BATCH], n = 0;
  const succ *sc = &e->succs[it->succ_start];
  for (int k = 0; go_on && k < it->num_succs; k++) {
    if (!sc[k].whole && counter_add(s, &s->pending[sc[k].dst], -sc[k].count) != sc[k].count) continue;
    if (n == BATCH) { /* many ready at once: count and hand out a batch, keeping this node's count */
      counter_add(s, &s->outstanding, BATCH);
      for (int j = 0; j < BATCH; j++) dispatch(s, ready[j], rs);
      n = 0;
    }
    ready[n++] = sc[k].dst;
  }
  if (n == 0) {
    if (counter_add(s, &s->outstanding, -1) == 1) finish_step(s);
    return;
  }
  if (n > 1) counter_add(s, &s->outstanding, n - 1);
  for (int j = 0; j < n; j++) dispatch(s, ready[j], rs);
}

static void run_inline(step *s, ready_stack *rs);

static void async_done(void *arg) {
  async_call *a = arg;
  step *s = a->s;
  ready_stack rs;
  ready_stack_init(&rs);
  node_done(s, a->node, &a->ctx, &a->status, s->args.stats ? s->args.stats[a->node].all_start_micros : 0, &rs);
  tfd_status_clear(&a->status);
  free(a);
  run_inline(s, &rs);
}

static void fill_ctx(step *s, int node, tfd_kernel_context *c, tfd_tensor **outputs, tfd_status *st) {
  item *it = &s->e->items[node];
  *c = s->ctx;
  if (s->args.stats) {
    /* A traced step gives each node a tracking allocator of its own (TensorFlow's track_allocations),
     * kept in the node's stats; without one (out of memory) the node just reports no sizes. */
    tfd_node_stats *ns = &s->args.stats[node];
    if (!ns->tracker) ns->tracker = tfd_tracking_allocator_new(c->allocator, s->args.allocation_records);
    if (ns->tracker) c->allocator = ns->tracker;
  }
  c->inputs = &s->slots[it->input_start];
  c->num_inputs = it->num_inputs;
  c->outputs = outputs;
  c->num_outputs = it->num_outputs;
  c->status = st;
}

/* Runs nodes from the stack until it is empty. Each node on it is counted
 * in outstanding, so the step lives while the stack holds one. */
static void run_inline(step *s, ready_stack *rs) {
  /* A watched step looks at its deadline and cancellation before each expensive node and every 16th
   * cheap one (a clock read costs about what a cheap node does); an unwatched one never. With an
   * empty stack the step may be over (async_done after its last node): s is not read then. */
  bool watch = rs->top > 0 && s->watch;
  unsigned polls = 0;
  while (rs->top > 0) {
    int node = rs->nodes[--rs->top];
    item *it = &s->e->items[node];
    if (watch && (!it->cheap || (++polls & 15) == 0)) check_stop(s);
    if (!it->cheap) rs->has_expensive = false;
    int64_t start = s->args.stats ? tfd_now_micros() : 0;
    if (it->is_async && !atomic_load(&s->failed)) {
      async_call *a = calloc(1, sizeof *a);
      if (a) {
        a->s = s;
        a->node = node;
        fill_ctx(s, node, &a->ctx, a->outputs, &a->status);
        if (s->args.stats) s->args.stats[node].all_start_micros = start;
        it->kernel->compute_async(it->kernel, &a->ctx, async_done, a);
        continue; /* async_done carries on from there */
      }
    }
    tfd_tensor *outputs[TFD_MAX_OP_OUTPUTS];
    for (int o = 0; o < it->num_outputs; o++) outputs[o] = NULL;
    tfd_status st = TFD_STATUS_INIT;
    tfd_kernel_context ctx;
    fill_ctx(s, node, &ctx, outputs, &st);
    if (atomic_load(&s->failed)) tfd_status_setf(&st, TFD_CANCELLED, "step failed elsewhere");
    else if (it->is_async) tfd_status_setf(&st, TFD_RESOURCE_EXHAUSTED, "out of memory starting an async kernel");
    else it->kernel->compute(it->kernel, &ctx);
    node_done(s, node, &ctx, &st, start, rs);
  }
}

static void process(step *s, int node) {
  ready_stack rs;
  rs.top = 1;
  rs.nodes[0] = node;
  rs.has_expensive = !s->e->items[node].cheap;
  run_inline(s, &rs);
}

/* A step's memory: the executor's spare when it has one, else a new block. */
static step *new_step(tfd_executor *e) {
  step *s = atomic_exchange(&e->spare, NULL);
  if (s) {
    for (int i = 0; i < e->num_counted; i++)
      atomic_store_explicit(&s->pending[e->counted[i]], e->items[e->counted[i]].initial_pending, memory_order_relaxed);
    return s;
  }
  int n = e->graph->n;
  size_t bytes = sizeof(step) + (size_t)n * (sizeof(atomic_int) + sizeof(task)) +
                 (size_t)e->total_inputs * sizeof(tfd_tensor *);
  s = calloc(1, bytes);
  if (!s) return NULL;
  /* One block: pointer-aligned parts first, then the counters. */
  s->tasks = (task *)(s + 1);
  s->slots = (tfd_tensor **)(s->tasks + n);
  s->pending = (atomic_int *)(s->slots + e->total_inputs);
  for (int i = 0; i < n; i++) {
    atomic_init(&s->pending[i], e->items[i].initial_pending);
    s->tasks[i] = (task){s, i};
  }
  for (int i = 0; i < e->num_seeded_slots; i++) s->slots[e->seeded_slots[i]] = tfd_tensor_ref(e->seeds[i]);
  s->e = e;
  pthread_mutex_init(&s->mu, NULL);
  s->status = (tfd_status)TFD_STATUS_INIT;
  return s;
}

/* A traced step reports every node: the seeded Consts as run when the step starts, with no time. */
static void record_seeded(step *s) {
  tfd_executor *e = s->e;
  int64_t now = tfd_now_micros();
  int thread = thread_id(s);
  for (int i = 0; i < e->num_seeded_nodes; i++) {
    int node = e->seeded_nodes[i];
    tfd_tensor *value = e->items[node].kernel->value;
    tfd_node_stats_record(&s->args.stats[node], &e->graph->nodes[node], &value, NULL, 0, s->ctx.allocator, now,
                          thread);
  }
}

void tfd_executor_use_step_graphs(tfd_executor *e) {
  if (e->step_graph || e->frames || e->sync_every_op) return;
  tfd_kernel **kernels = malloc((e->graph->n ? (size_t)e->graph->n : 1) * sizeof *kernels);
  if (!kernels) return; /* out of memory: steps run node by node, as without graphs */
  for (int i = 0; i < e->graph->n; i++) kernels[i] = e->items[i].kernel;
  e->step_graph = tfd_step_graph_new(e->graph, kernels, e->device);
  free(kernels);
}

void tfd_executor_step_graph_counts(const tfd_executor *e, int64_t *captured, int64_t *replayed) {
  tfd_step_graph_counts(e->step_graph, captured, replayed);
}

void tfd_executor_run_async(tfd_executor *e, const tfd_executor_args *args, tfd_executor_done done, void *arg) {
  if (e->step_graph) {
    tfd_status st = TFD_STATUS_INIT;
    if (tfd_step_graph_run(e->step_graph, args, &st)) {
      tfd_executor_fail_start(args, &st, done, arg); /* OK: just done */
      tfd_status_clear(&st);
      return;
    }
  }
  if (e->frames) {
    tfd_frames_run_async(e->frames, args, done, arg);
    return;
  }
  step *s = new_step(e);
  if (!s) {
    tfd_status st = TFD_STATUS_INIT;
    tfd_status_setf(&st, TFD_RESOURCE_EXHAUSTED, "out of memory starting a step");
    tfd_executor_fail_start(args, &st, done, arg);
    tfd_status_clear(&st);
    return;
  }
  s->args = *args; /* s->e is set once, by new_step: a spare step is always its executor's */
  s->done = done;
  s->done_arg = arg;
  atomic_store_explicit(&s->failed, false, memory_order_relaxed);
  atomic_store_explicit(&s->shared, e->has_async, memory_order_relaxed);
  s->ctx = tfd_executor_step_ctx_timed(e->device, args, &s->deadline);
  s->watch = s->ctx.deadline || args->cancellation;
  if (args->stats) record_seeded(s);
  int num_roots = e->num_roots;
  if (num_roots == 0) {
    finish_step(s);
    return;
  }
  /* Every root is counted before the first is handed out. */
  atomic_store_explicit(&s->outstanding, num_roots, memory_order_relaxed);
  ready_stack rs;
  ready_stack_init(&rs);
  const int *roots = e->roots;
  for (int r = 0; r < num_roots; r++) dispatch(s, roots[r], &rs);
  run_inline(s, &rs);
}

typedef struct waiter {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int pending; /* 1 until the step is done */
  tfd_status status;
} waiter;

static void wake(void *arg, const tfd_status *st) {
  waiter *w = arg;
  pthread_mutex_lock(&w->mu);
  if (st && st->code != TFD_OK) tfd_status_setf(&w->status, st->code, "%s", tfd_status_message(st));
  w->pending = 0;
  pthread_cond_signal(&w->cv);
  pthread_mutex_unlock(&w->mu);
}

struct timespec tfd_deadline_after_ms(int64_t ms) {
  struct timespec d;
  clock_gettime(CLOCK_REALTIME, &d);
  d.tv_sec += (time_t)(ms / 1000);
  d.tv_nsec += (long)(ms % 1000) * 1000000;
  if (d.tv_nsec >= 1000000000) {
    d.tv_sec++;
    d.tv_nsec -= 1000000000;
  }
  return d;
}

bool tfd_wait_or_time_out(pthread_mutex_t *mu, pthread_cond_t *cv, const int *pending, int64_t timeout_ms,
                          const char *what, tfd_cancel_fn on_timeout, void *arg) {
  return tfd_wait_or_time_out_draining(mu, cv, pending, timeout_ms, what, on_timeout, arg, NULL);
}

bool tfd_wait_or_time_out_draining(pthread_mutex_t *mu, pthread_cond_t *cv, const int *pending, int64_t timeout_ms,
                                   const char *what, tfd_cancel_fn on_timeout, void *arg, tfd_caller_queue *queue) {
  /* The clock is read only when there is a deadline. */
  struct timespec deadline = {0, 0};
  if (timeout_ms > 0) deadline = tfd_deadline_after_ms(timeout_ms);
  bool timed_out = false;
  while (*pending > 0) {
    if (queue && tfd_caller_queue_pending_locked(queue)) {
      tfd_caller_queue_drain_locked(queue);
      continue;
    }
    if (timeout_ms <= 0 || timed_out) {
      pthread_cond_wait(cv, mu);
    } else if (pthread_cond_timedwait(cv, mu, &deadline) == ETIMEDOUT && *pending > 0) {
      timed_out = true;
      /* Not under mu: stopping the work runs callbacks that may finish it, and they take mu. */
      pthread_mutex_unlock(mu);
      char msg[160];
      snprintf(msg, sizeof msg, "Timed out waiting for %s (%lld ms)", what, (long long)timeout_ms);
      on_timeout(arg, TFD_DEADLINE_EXCEEDED, msg);
      pthread_mutex_lock(mu);
    }
  }
  return timed_out;
}

void tfd_cancel_on_timeout(void *cancellation, tfd_code code, const char *message) {
  tfd_cancellation_cancel(cancellation, code, message);
}

tfd_code tfd_executor_run(tfd_executor *e, const tfd_executor_args *args, int64_t timeout_ms, const char *what,
                          tfd_status *status) {
  waiter w = {.pending = 1, .status = TFD_STATUS_INIT};
  pthread_mutex_init(&w.mu, NULL);
  pthread_cond_init(&w.cv, NULL);
  tfd_cancellation *cancel = args->cancellation;
  tfd_executor_args timed = *args; /* the frame-aware path times out a loop by itself */
  if (timeout_ms > 0) {
    timed.timeout_ms = timeout_ms;
    timed.timeout_what = what;
  }
  tfd_executor_run_async(e, &timed, wake, &w);
  pthread_mutex_lock(&w.mu);
  tfd_wait_or_time_out(&w.mu, &w.cv, &w.pending, cancel ? timeout_ms : 0, what ? what : "the step",
                       tfd_cancel_on_timeout, cancel);
  pthread_mutex_unlock(&w.mu);
  pthread_mutex_destroy(&w.mu);
  pthread_cond_destroy(&w.cv);
  const char *why = NULL;
  if (cancel && tfd_cancellation_reason(cancel, &why) != TFD_OK) {
    tfd_status_clear(&w.status); /* a cancelled step reports why, not what its kernels saw */
    return tfd_status_setf(status, tfd_cancellation_reason(cancel, NULL), "%s", why);
  }
  return tfd_status_move(status, &w.status);
}
