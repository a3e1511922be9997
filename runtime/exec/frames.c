/* The frame-aware executor: TensorFlow's while loops and conditionals (frames, iterations, dead
 * tensors), as TensorFlow's executor and PropagatorState run them.
 *
 * A step runs each node once per (frame instance, iteration) it becomes ready in. Each frame
 * instance (the root, or one per Enter frame name, parent instance and parent iteration) keeps up to
 * parallel_iterations + 1 iterations, each with its own pending counts, dead counts and input slots.
 * Enter moves a value into its child frame's iteration 0 (a constant Enter into every iteration);
 * NextIteration into the next iteration, deferred while parallel_iterations are running; Exit back
 * to the parent frame's iteration. A dead input makes a node dead: it does not run and its outputs
 * and control edges are dead, except that a Merge fires on its first live input (dead only when all
 * are), _Send and _Recv run dead to carry the deadness across devices, and a dead NextIteration ends
 * its loop's deadness. An iteration is done when nothing of it runs or waits and the one before it
 * is done; a frame when its Enters have all arrived and its iterations are done, and then the dead
 * Exits of its last iteration make their consumers dead in the parent.
 *
 * One mutex per step guards every frame and iteration: kernels run outside it, propagation inside.
 * A node's input slots are written only before it is ready and read only by it, so a running kernel
 * reads them unlocked. Cancellation and the step's timeout are polled between nodes, which is what
 * stops a loop that never ends. */
#include "frames.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/status_internal.h"
#include "../core/tracking_allocator.h"
#include "../framework/caller_queue.h"
#include "../graph/control_flow.h"

enum kind { K_NORMAL, K_ENTER, K_EXIT, K_NEXT, K_MERGE, K_SWITCH, K_TRANSFER, K_TRIGGER };

typedef struct fedge {
  int dst;
  int slot;       /* dst's input slot in its frame's layout; -1 for a control edge */
  int src_output; /* -1 for a control edge */
} fedge;

typedef struct fnode {
  tfd_kernel *kernel;
  enum kind kind;
  bool is_async, cheap, constant_enter, recv; /* recv: may produce no output (a dead _Recv) */
  int frame;       /* the static frame it runs in */
  int enter_frame; /* Enter: the static frame it feeds */
  int pending_id;  /* its index in its frame's per-node arrays */
  int input_start; /* its first input slot in its frame's layout */
  int num_inputs, num_outputs;
  int initial_pending;
  int edge_start, num_edges;
} fnode;

typedef struct sframe {
  int num_nodes, total_inputs, num_enters, parallel_iterations;
  int *initial_pending; /* by pending_id */
} sframe;

struct tfd_frames {
  const tfd_graph *graph;
  tfd_device *device;
  bool sync_every_op;
  fnode *nodes;
  fedge *edges;
  sframe *frames;
  int num_frames;
  int *roots;
  int num_roots;
};

/* ---- a step's state ---- */
typedef struct frame_inst frame_inst;

typedef struct iteration {
  int64_t num;
  int outstanding_ops;    /* its nodes ready or running */
  int outstanding_frames; /* child frames started in it and not done */
  int *pending, *dead;    /* by pending_id */
  tfd_tensor **slots;     /* by input slot; NULL: empty or dead */
  frame_inst **children;
  int num_children, cap_children;
} iteration;

typedef struct deferred {
  int node;
  tfd_tensor *value; /* NULL: dead */
} deferred;

typedef struct dlist {
  deferred *v;
  int n, cap;
} dlist;

struct frame_inst {
  int sframe;
  frame_inst *parent;
  iteration *parent_iter;
  int64_t iteration_count; /* the newest iteration started */
  int num_outstanding_iterations, max_parallel, num_pending_inputs;
  iteration **iters; /* ring of max_parallel + 1, by iteration number */
  dlist next_roots;  /* NextIteration values waiting for a free iteration */
  dlist invariants;  /* constant Enter values, given to every iteration */
  int *dead_exits;   /* Exits of the newest iteration that ran dead */
  int num_dead_exits, cap_dead_exits;
  frame_inst *prev, *next; /* the step's list of live frames */
};

typedef struct tagged {
  int node;
  frame_inst *frame;
  iteration *iter;
  bool dead;
} tagged;

/* A list of tagged nodes; the first few live in the list itself, so propagating a node's outputs
 * (most make one or two nodes ready) allocates nothing. Made by TVEC, freed by tvec_free. */
#define TVEC_SMALL 8
typedef struct tvec {
  tagged *v;
  int n, cap;
  bool oom;
  tagged small[TVEC_SMALL];
} tvec;
#define TVEC(name) tvec name = {.cap = TVEC_SMALL}; name.v = name.small

typedef struct fstep {
  tfd_frames *f;
  tfd_executor_args args;
  tfd_executor_done done;
  void *done_arg;
  tfd_kernel_context ctx;
  pthread_mutex_t mu;
  int outstanding; /* tagged nodes ready or running, under mu */
  frame_inst *root;
  frame_inst *frames; /* every live frame instance, under mu */
  atomic_bool failed;
  atomic_uint polls;
  tfd_deadline deadline; /* the step's own, from args.timeout_ms */
  tfd_status status;
} fstep;

typedef struct task {
  fstep *s;
  tagged t;
} task;

static bool vpush(tvec *v, tagged t) {
  if (v->n == v->cap) {
    int cap = v->cap * 2;
    tagged *g = v->v == v->small ? malloc((size_t)cap * sizeof *g) : realloc(v->v, (size_t)cap * sizeof *g);
    if (!g) {
      v->oom = true;
      return false;
    }
    if (v->v == v->small) memcpy(g, v->small, sizeof v->small);
    v->v = g;
    v->cap = cap;
  }
  v->v[v->n++] = t;
  return true;
}

static void tvec_free(tvec *v) {
  if (v->v != v->small) free(v->v);
}

static bool dpush(dlist *l, int node, tfd_tensor *value) {
  if (l->n == l->cap) {
    int cap = l->cap ? l->cap * 2 : 4;
    deferred *g = realloc(l->v, (size_t)cap * sizeof *g);
    if (!g) return false;
    l->v = g;
    l->cap = cap;
  }
  l->v[l->n++] = (deferred){node, value};
  return true;
}

static void dclear(dlist *l) {
  for (int i = 0; i < l->n; i++) tfd_tensor_unref(l->v[i].value);
  l->n = 0;
}

/* ---- building ---- */
void tfd_frames_free(tfd_frames *f) {
  if (!f) return;
  for (int i = 0; f->frames && i < f->num_frames; i++) free(f->frames[i].initial_pending);
  free(f->frames);
  free(f->nodes);
  free(f->edges);
  free(f->roots);
  free(f);
}

static bool op_is(const tfd_gnode *n, const char *op) { return strcmp(n->op->name, op) == 0; }

tfd_frames *tfd_frames_new(const tfd_graph *g, tfd_kernel *const *kernels, tfd_device *device, bool sync_every_op,
                           tfd_status *st) {
  tfd_control_flow cf;
  if (tfd_control_flow_build(g, &cf, st) != TFD_OK) {
    tfd_control_flow_free(&cf);
    return NULL;
  }
  tfd_frames *f = calloc(1, sizeof *f);
  size_t n = g->n ? (size_t)g->n : 1, ne = 1;
  for (int i = 0; i < g->n; i++) ne += (size_t)g->nodes[i].num_out_edges;
  if (f) {
    f->graph = g;
    f->device = device;
    f->sync_every_op = sync_every_op;
    f->num_frames = cf.num_frames;
    f->nodes = calloc(n, sizeof *f->nodes);
    f->edges = calloc(ne, sizeof *f->edges);
    f->frames = calloc((size_t)cf.num_frames, sizeof *f->frames);
    f->roots = calloc(n, sizeof *f->roots);
  }
  if (!f || !f->nodes || !f->edges || !f->frames || !f->roots) goto oom;
  for (int i = 0; i < g->n; i++) {
    const tfd_gnode *gn = &g->nodes[i];
    fnode *fn = &f->nodes[i];
    sframe *sf = &f->frames[cf.frame_of[i]];
    fn->kernel = kernels[i];
    fn->is_async = kernels[i]->compute_async != NULL;
    fn->cheap = tfd_executor_node_cheap(gn, device);
    fn->kind = op_is(gn, "Enter")           ? K_ENTER
               : op_is(gn, "Exit")          ? K_EXIT
               : op_is(gn, "NextIteration") ? K_NEXT
               : op_is(gn, "Merge")         ? K_MERGE
               : op_is(gn, "Switch")        ? K_SWITCH
               : op_is(gn, "ControlTrigger") ? K_TRIGGER
               : op_is(gn, "_Send") || op_is(gn, "_Recv") ? K_TRANSFER
                                                          : K_NORMAL;
    fn->recv = op_is(gn, "_Recv");
    fn->constant_enter = fn->kind == K_ENTER && tfd_attr_bool(gn->def, "is_constant", false);
    fn->frame = cf.frame_of[i];
    fn->enter_frame = cf.enter_frame[i];
    fn->pending_id = sf->num_nodes++;
    fn->input_start = sf->total_inputs;
    sf->total_inputs += gn->num_inputs;
    fn->num_inputs = gn->num_inputs;
    fn->num_outputs = gn->num_outputs;
    /* A Merge waits for its control inputs (2 each) and, in bit 0, for a live data input. */
    fn->initial_pending = fn->kind == K_MERGE ? 1 + 2 * gn->num_control : gn->num_inputs + gn->num_control;
    if (gn->num_inputs + gn->num_control == 0) f->roots[f->num_roots++] = i;
  }
  for (int fr = 0; fr < cf.num_frames; fr++) {
    sframe *sf = &f->frames[fr];
    sf->num_enters = cf.frames[fr].num_enters;
    sf->parallel_iterations = cf.frames[fr].parallel_iterations;
    if (!(sf->initial_pending = calloc(sf->num_nodes ? (size_t)sf->num_nodes : 1, sizeof *sf->initial_pending))) goto oom;
  }
  int e = 0;
  for (int i = 0; i < g->n; i++) {
    const tfd_gnode *gn = &g->nodes[i];
    fnode *fn = &f->nodes[i];
    f->frames[fn->frame].initial_pending[fn->pending_id] = fn->initial_pending;
    fn->edge_start = e;
    for (int k = 0; k < gn->num_out_edges; k++) {
      const tfd_out_edge *oe = &gn->out_edges[k];
      int slot = oe->dst_input >= 0 ? f->nodes[oe->dst].input_start + oe->dst_input : -1;
      f->edges[e++] = (fedge){oe->dst, slot, oe->src_output};
    }
    fn->num_edges = e - fn->edge_start;
  }
  tfd_control_flow_free(&cf);
  return f;
oom:
  tfd_control_flow_free(&cf);
  tfd_frames_free(f);
  tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory creating an executor");
  return NULL;
}

/* ---- frames and iterations (all under the step's mutex) ---- */
static iteration *iteration_new(const tfd_frames *f, int sframe_id, int64_t num) {
  const sframe *sf = &f->frames[sframe_id];
  size_t nn = (size_t)sf->num_nodes, ni = (size_t)sf->total_inputs;
  iteration *it = calloc(1, sizeof *it + nn * 2 * sizeof(int) + ni * sizeof(tfd_tensor *));
  if (!it) return NULL;
  it->num = num;
  it->slots = (tfd_tensor **)(it + 1);
  it->pending = (int *)(it->slots + ni);
  it->dead = it->pending + nn;
  if (nn) memcpy(it->pending, sf->initial_pending, nn * sizeof(int));
  return it;
}

static void iteration_free(const tfd_frames *f, int sframe_id, iteration *it) {
  if (!it) return;
  for (int i = 0; i < f->frames[sframe_id].total_inputs; i++) tfd_tensor_unref(it->slots[i]);
  free(it->children);
  free(it);
}

static iteration *get_iteration(const frame_inst *fr, int64_t num) {
  return fr->iters[num % (fr->max_parallel + 1)];
}

static void set_iteration(frame_inst *fr, int64_t num, iteration *it) { fr->iters[num % (fr->max_parallel + 1)] = it; }

static frame_inst *frame_new(fstep *s, int sframe_id, frame_inst *parent, iteration *parent_iter) {
  const sframe *sf = &s->f->frames[sframe_id];
  frame_inst *fr = calloc(1, sizeof *fr);
  if (!fr) return NULL;
  fr->sframe = sframe_id;
  fr->parent = parent;
  fr->parent_iter = parent_iter;
  fr->max_parallel = parent ? sf->parallel_iterations : 1;
  fr->num_pending_inputs = parent ? sf->num_enters : 0;
  fr->num_outstanding_iterations = 1;
  fr->iters = calloc((size_t)fr->max_parallel + 1, sizeof *fr->iters);
  iteration *it0 = fr->iters ? iteration_new(s->f, sframe_id, 0) : NULL;
  if (!it0) {
    free(fr->iters);
    free(fr);
    return NULL;
  }
  fr->iters[0] = it0;
  fr->next = s->frames;
  if (s->frames) s->frames->prev = fr;
  s->frames = fr;
  return fr;
}

static void frame_free(fstep *s, frame_inst *fr) {
  if (fr->prev) fr->prev->next = fr->next;
  else s->frames = fr->next;
  if (fr->next) fr->next->prev = fr->prev;
  for (int i = 0; i <= fr->max_parallel; i++) iteration_free(s->f, fr->sframe, fr->iters[i]);
  free(fr->iters);
  dclear(&fr->next_roots);
  dclear(&fr->invariants);
  free(fr->next_roots.v);
  free(fr->invariants.v);
  free(fr->dead_exits);
  free(fr);
}

static void fail_locked(fstep *s, tfd_code code, const char *msg) {
  if (s->status.code == TFD_OK) tfd_status_setf(&s->status, code, "%s", msg);
  atomic_store(&s->failed, true);
}

/* Only a malformed loop gets here: an Exit fed from inside its loop (not from the loop's Switch)
 * fires in every iteration, each time into the same parent iteration, so its consumer would get a
 * second value for an input it already has. TensorFlow overwrites the input and runs on; the step
 * fails here instead, naming both ends, and the first value stays with its slot's owner. */
static void fail_second_value(fstep *s, int src, int dst, int input) {
  const tfd_graph *g = s->f->graph;
  const tfd_gnode *from = &g->nodes[src];
  char what[32] = "a control edge";
  if (input >= 0) snprintf(what, sizeof what, "input %d", input);
  char *msg = tfd_format("node '%s' (%s) fired more than once into one iteration of its consumer '%s' (%s): a "
                         "loop's Exit must be fed from the loop's Switch, so that it fires once, when the loop ends",
                         tfd_node_def_name(from->def), from->op->name, tfd_node_def_name(g->nodes[dst].def), what);
  fail_locked(s, TFD_INVALID_ARGUMENT, msg ? msg : "a loop's Exit fired more than once into one iteration");
  free(msg);
}

/* Makes node `src`'s outputs (NULL: dead) and control edges arrive at its consumers in (fr, it), as
 * TensorFlow's ActivateNodes: counts ready ones into `ready`, and returns how many it made ready. */
static int activate(fstep *s, frame_inst *fr, iteration *it, int src, tfd_tensor *const *outputs, bool src_dead,
                    tvec *ready) {
  const tfd_frames *f = s->f;
  const fnode *sn = &f->nodes[src];
  int activated = 0;
  for (int k = 0; k < sn->num_edges; k++) {
    const fedge *e = &f->edges[sn->edge_start + k];
    const fnode *dn = &f->nodes[e->dst];
    int pid = dn->pending_id;
    tfd_tensor *value = e->slot >= 0 && !src_dead ? outputs[e->src_output] : NULL;
    bool dst_ready, dst_dead = false;
    if (dn->kind == K_MERGE) {
      if (e->slot < 0) { /* a control input: 2 off the count */
        it->pending[pid] -= 2;
        dst_dead = it->dead[pid] == dn->num_inputs;
        dst_ready = it->pending[pid] == 0 || (it->pending[pid] == 1 && dst_dead);
      } else if (value) { /* a live input: the first one is kept and fires the Merge */
        int count = it->pending[pid];
        if (count & 1) {
          it->slots[e->slot] = tfd_tensor_ref(value);
          it->pending[pid] = count & ~1;
        }
        dst_ready = count == 1;
      } else { /* dead: the Merge is dead when all are, or when a dead Enter (a loop not taken) arrives */
        it->dead[pid]++;
        dst_dead = it->dead[pid] == dn->num_inputs || sn->kind == K_ENTER;
        dst_ready = it->pending[pid] == 1 && dst_dead;
      }
    } else {
      if (it->pending[pid] <= 0 || (e->slot >= 0 && it->slots[e->slot])) {
        fail_second_value(s, src, e->dst, e->slot - dn->input_start);
        continue;
      }
      if (e->slot >= 0) it->slots[e->slot] = tfd_tensor_ref(value);
      if (src_dead || (e->slot >= 0 && !value)) it->dead[pid]++;
      dst_ready = --it->pending[pid] == 0;
      dst_dead = it->dead[pid] > 0;
    }
    if (!dst_ready) continue;
    if (dn->kind == K_TRIGGER) dst_dead = false;
    if (vpush(ready, (tagged){e->dst, fr, it, dst_dead})) activated++;
    else fail_locked(s, TFD_RESOURCE_EXHAUSTED, "out of memory scheduling nodes");
  }
  return activated;
}

static bool cleanup_iterations(fstep *s, frame_inst *fr, iteration *it, tvec *ready);

static bool iteration_done(const frame_inst *fr, const iteration *it) {
  if (it->outstanding_ops != 0 || it->outstanding_frames != 0) return false;
  return it->num == 0 ? fr->num_pending_inputs == 0 : get_iteration(fr, it->num - 1) == NULL;
}

static bool frame_done(const frame_inst *fr) { return fr->num_pending_inputs == 0 && fr->num_outstanding_iterations == 0; }

/* Starts the next iteration of fr: the deferred NextIteration values and the loop invariants arrive
 * in it. Counts what they make ready into the iteration; the caller sees to its cleanup. */
static iteration *increment_iteration(fstep *s, frame_inst *fr, tvec *ready) {
  iteration *next = iteration_new(s->f, fr->sframe, fr->iteration_count + 1);
  if (!next) {
    fail_locked(s, TFD_RESOURCE_EXHAUSTED, "out of memory starting a loop iteration");
    return NULL;
  }
  fr->iteration_count++;
  set_iteration(fr, fr->iteration_count, next);
  fr->num_outstanding_iterations++;
  fr->num_dead_exits = 0; /* only the newest iteration's dead Exits count */
  for (int i = 0; i < fr->next_roots.n; i++) {
    deferred *d = &fr->next_roots.v[i];
    next->outstanding_ops += activate(s, fr, next, d->node, &d->value, d->value == NULL, ready);
  }
  dclear(&fr->next_roots);
  for (int i = 0; i < fr->invariants.n; i++) {
    deferred *d = &fr->invariants.v[i];
    next->outstanding_ops += activate(s, fr, next, d->node, &d->value, d->value == NULL, ready);
  }
  return next;
}

/* Deletes the done iterations of fr from `it` on, starting deferred ones; true when fr is done. The
 * root frame is never cleaned up here: the step's end frees it. */
static bool cleanup_iterations(fstep *s, frame_inst *fr, iteration *it, tvec *ready) {
  if (!fr->parent) return false;
  int64_t cur = it->num;
  while (it && cur <= fr->iteration_count && iteration_done(fr, it)) {
    iteration_free(s->f, fr->sframe, it);
    set_iteration(fr, cur, NULL);
    fr->num_outstanding_iterations--;
    cur++;
    if (fr->next_roots.n > 0) increment_iteration(s, fr, ready);
    it = cur <= fr->iteration_count ? get_iteration(fr, cur) : NULL;
  }
  return frame_done(fr);
}

/* Changes an iteration's count of running nodes; true when that finishes fr. */
static bool adjust_outstanding(fstep *s, frame_inst *fr, iteration *it, int delta, tvec *ready) {
  it->outstanding_ops += delta;
  return it->outstanding_ops == 0 && cleanup_iterations(s, fr, it, ready);
}

/* A done frame goes: the dead Exits of its last iteration make their consumers dead in the parent
 * (a loop whose input was dead, e.g. in the branch of a conditional not taken), then its parent
 * iteration may be done too, and so on up. */
static void delete_frame(fstep *s, frame_inst *fr, tvec *ready) {
  while (fr && fr->parent) {
    frame_inst *parent = fr->parent;
    iteration *pit = fr->parent_iter;
    for (int i = 0; i < fr->num_dead_exits; i++)
      pit->outstanding_ops += activate(s, parent, pit, fr->dead_exits[i], NULL, true, ready);
    for (int i = 0; i < pit->num_children; i++)
      if (pit->children[i] == fr) {
        pit->children[i] = pit->children[--pit->num_children];
        break;
      }
    frame_free(s, fr);
    pit->outstanding_frames--;
    fr = cleanup_iterations(s, parent, pit, ready) ? parent : NULL;
  }
}

/* The child frame an Enter in (fr, it) feeds, made on its first Enter. */
static frame_inst *child_frame(fstep *s, frame_inst *fr, iteration *it, int sframe_id) {
  for (int i = 0; i < it->num_children; i++)
    if (it->children[i]->sframe == sframe_id) return it->children[i];
  if (it->num_children == it->cap_children) {
    int cap = it->cap_children ? it->cap_children * 2 : 2;
    frame_inst **g = realloc(it->children, (size_t)cap * sizeof *g);
    if (!g) return NULL;
    it->children = g;
    it->cap_children = cap;
  }
  frame_inst *child = frame_new(s, sframe_id, fr, it);
  if (!child) return NULL;
  it->children[it->num_children++] = child;
  it->outstanding_frames++;
  return child;
}

/* PropagateOutputs: where a finished node's outputs go, by kind; under the mutex. */
static void propagate(fstep *s, const tagged *t, tfd_tensor *const *outputs, tvec *ready) {
  const fnode *n = &s->f->nodes[t->node];
  frame_inst *fr = t->frame;
  iteration *it = t->iter;
  bool done = false;
  switch (n->kind) {
    case K_ENTER: {
      frame_inst *child = child_frame(s, fr, it, n->enter_frame);
      if (!child) {
        fail_locked(s, TFD_RESOURCE_EXHAUSTED, "out of memory starting a loop frame");
        return;
      }
      iteration *it0 = get_iteration(child, 0);
      child->num_pending_inputs--;
      int activated = 0;
      if (n->constant_enter) { /* a loop invariant: every iteration started, and every later one, sees it */
        tfd_tensor *v = t->dead ? NULL : outputs[0];
        if (!dpush(&child->invariants, t->node, tfd_tensor_ref(v))) {
          tfd_tensor_unref(v);
          fail_locked(s, TFD_RESOURCE_EXHAUSTED, "out of memory keeping a loop invariant");
          return;
        }
        for (int64_t i = 0; i <= child->iteration_count; i++) {
          iteration *ci = get_iteration(child, i);
          if (!ci) continue;
          int a = activate(s, child, ci, t->node, &v, t->dead, ready);
          if (ci == it0) activated = a;
          else ci->outstanding_ops += a;
        }
      } else {
        activated = activate(s, child, it0, t->node, outputs, t->dead, ready);
      }
      if (it0 && adjust_outstanding(s, child, it0, activated, ready)) delete_frame(s, child, ready);
      done = adjust_outstanding(s, fr, it, -1, ready);
      break;
    }
    case K_EXIT:
      if (t->dead) {
        if (it->num == fr->iteration_count) { /* remembered: it may be the loop's last iteration */
          if (fr->num_dead_exits == fr->cap_dead_exits) {
            int cap = fr->cap_dead_exits ? fr->cap_dead_exits * 2 : 4;
            int *g = realloc(fr->dead_exits, (size_t)cap * sizeof *g);
            if (!g) {
              fail_locked(s, TFD_RESOURCE_EXHAUSTED, "out of memory");
              return;
            }
            fr->dead_exits = g;
            fr->cap_dead_exits = cap;
          }
          fr->dead_exits[fr->num_dead_exits++] = t->node;
        }
      } else {
        fr->parent_iter->outstanding_ops += activate(s, fr->parent, fr->parent_iter, t->node, outputs, false, ready);
      }
      done = adjust_outstanding(s, fr, it, -1, ready);
      break;
    case K_NEXT:
      if (!t->dead) { /* a dead NextIteration ends its loop's deadness: nothing goes on */
        iteration *next = NULL;
        if (it->num == fr->iteration_count) {
          if (fr->num_outstanding_iterations == fr->max_parallel) {
            if (!dpush(&fr->next_roots, t->node, tfd_tensor_ref(outputs[0]))) {
              tfd_tensor_unref(outputs[0]);
              fail_locked(s, TFD_RESOURCE_EXHAUSTED, "out of memory");
              return;
            }
          } else {
            next = increment_iteration(s, fr, ready);
          }
        } else {
          next = get_iteration(fr, it->num + 1);
        }
        if (next) next->outstanding_ops += activate(s, fr, next, t->node, outputs, false, ready);
      }
      done = adjust_outstanding(s, fr, it, -1, ready);
      break;
    default: done = adjust_outstanding(s, fr, it, activate(s, fr, it, t->node, outputs, t->dead, ready) - 1, ready);
  }
  if (done) delete_frame(s, fr, ready);
}

/* ---- running nodes ---- */
typedef struct async_call {
  fstep *s;
  tagged t;
  tfd_node_stats *stats;
  tfd_kernel_context ctx;
  tfd_status status;
  tfd_tensor *outputs[TFD_MAX_OP_OUTPUTS];
} async_call;

static void run_inline(fstep *s, tvec *stack);

static void frames_step_free(fstep *s) {
  while (s->frames) frame_free(s, s->frames);
  pthread_mutex_destroy(&s->mu);
  free(s);
}

static void finish_step(fstep *s) {
  /* Not done by its deadline: timed out however near it came, as the fast path and a waiter say. */
  int64_t deadline = tfd_kernel_deadline(&s->ctx);
  if (s->status.code == TFD_OK && deadline && tfd_kernel_clock_micros() >= deadline) {
    tfd_kernel_timeout_status(&s->ctx, &s->status);
    if (s->args.cancellation)
      tfd_cancellation_cancel(s->args.cancellation, TFD_DEADLINE_EXCEEDED, tfd_status_message(&s->status));
  }
  tfd_executor_done done = s->done;
  void *arg = s->done_arg;
  tfd_status st = TFD_STATUS_INIT;
  tfd_status_move(&st, &s->status);
  frames_step_free(s); /* done may free the executor */
  done(arg, &st);
  tfd_status_clear(&st);
}

/* The first error stops the step: nothing more is made ready, and other partitions are told. */
static void fail(fstep *s, tfd_status *st) {
  pthread_mutex_lock(&s->mu);
  bool first = s->status.code == TFD_OK;
  if (first) tfd_status_move(&s->status, st);
  atomic_store(&s->failed, true);
  pthread_mutex_unlock(&s->mu);
  if (first && s->args.rendezvous)
    tfd_rendezvous_abort(s->args.rendezvous, s->status.code, tfd_status_message(&s->status));
  tfd_status_clear(st);
}

/* Cancellation and the deadline, looked at every few nodes: a loop of cheap nodes never blocks, so
 * this is what ends it. A passed deadline cancels the step as the session's timeout would. */
static void poll_stop(fstep *s) {
  if ((atomic_fetch_add_explicit(&s->polls, 1, memory_order_relaxed) & 15) != 0 || atomic_load(&s->failed)) return;
  tfd_cancellation *c = s->args.cancellation;
  int64_t deadline = tfd_kernel_deadline(&s->ctx); /* the kernels' clock */
  if (deadline && tfd_kernel_clock_micros() >= deadline) {
    tfd_status st = TFD_STATUS_INIT;
    tfd_kernel_timeout_status(&s->ctx, &st);
    if (c) tfd_cancellation_cancel(c, TFD_DEADLINE_EXCEEDED, tfd_status_message(&st));
    fail(s, &st);
    return;
  }
  const char *why = NULL;
  tfd_code code = c ? tfd_cancellation_reason(c, &why) : TFD_OK;
  if (code != TFD_OK) {
    tfd_status st = TFD_STATUS_INIT;
    tfd_status_setf(&st, code, "%s", why);
    fail(s, &st);
  }
}

static void run_task(void *arg) {
  task *tk = arg;
  fstep *s = tk->s;
  TVEC(stack);
  vpush(&stack, tk->t);
  free(tk);
  run_inline(s, &stack);
  tvec_free(&stack);
}

/* Hands t (counted in s->outstanding) to the pool: false when memory or the pool refuses, and the
 * caller keeps it. */
static bool schedule_node(fstep *s, tagged t) {
  task *tk = malloc(sizeof *tk);
  if (!tk) return false;
  *tk = (task){s, t};
  if (tfd_threadpool_schedule(s->args.runner, run_task, tk, NULL) == TFD_OK) return true;
  free(tk);
  return false;
}

/* Hands ready nodes out: cheap ones and one expensive one stay on this thread's stack, the rest go
 * to the pool. Each is already counted in s->outstanding, which keeps the step alive while one is
 * left to hand out or on the stack; nothing of s is touched after the last has gone. */
static void dispatch(fstep *s, tvec *ready, tvec *stack) {
  /* With nothing to hand out, this thread holds no count of the step: another may end it any time. */
  if (ready->n == 0) return;
  tfd_threadpool *runner = s->args.runner;
  bool expensive = false;
  for (int i = 0; i < stack->n; i++) expensive |= !s->f->nodes[stack->v[i].node].cheap;
  for (int i = 0; i < ready->n; i++) {
    tagged t = ready->v[i];
    bool cheap = s->f->nodes[t.node].cheap;
    if (runner && !cheap && expensive && schedule_node(s, t)) continue;
    if (!cheap) expensive = true;
    if (!vpush(stack, t)) { /* out of memory: run it now, depth-first */
      TVEC(one);
      if (vpush(&one, t)) run_inline(s, &one);
      tvec_free(&one);
    }
  }
  ready->n = 0;
}

/* A finished node: its outputs checked and handed on, its inputs released, its count taken off. */
static void node_done(fstep *s, const tagged *t, tfd_kernel_context *ctx, tfd_status *st, tfd_node_stats *ns, int64_t start,
                      bool ran, tvec *stack) {
  const tfd_frames *f = s->f;
  const fnode *n = &f->nodes[t->node];
  const tfd_gnode *gn = &f->graph->nodes[t->node];
  tfd_tensor **outputs = ctx->outputs;
  /* A dead node's outputs are not checked; a Switch's branch not taken, or a dead transfer, is dead. */
  if (ran)
    tfd_node_check_outputs(f->sync_every_op ? f->device : NULL, gn, outputs, t->dead ? 0 : n->num_outputs,
                           n->kind == K_SWITCH || n->recv, st);
  if (ran && ns)
    tfd_node_stats_record(ns, &s->f->graph->nodes[t->node], ctx->outputs, ctx->inputs, ctx->num_inputs, ctx->allocator,
                          start, tfd_threadpool_current_thread_id(s->args.runner) + 1);
  if (st->code != TFD_OK) fail(s, st);
  tagged out = *t;
  /* A _Recv that received a dead tensor is dead: its control edges (a control dependency carried
   * between devices) pass the deadness on, as its data edges do. */
  if (n->recv && ran && !outputs[0]) out.dead = true;
  if (t->dead) /* a dead transfer ran for its peer's sake; what it made is dead here */
    for (int o = 0; o < n->num_outputs; o++) {
      tfd_tensor_unref(outputs[o]);
      outputs[o] = NULL;
    }
  tfd_tensor **in = &t->iter->slots[n->input_start];
  for (int i = 0; i < n->num_inputs; i++) {
    tfd_tensor_unref(in[i]);
    in[i] = NULL;
  }
  int num_outputs = n->num_outputs; /* read now: once the count is given back, s and its executor may go */
  TVEC(ready);
  pthread_mutex_lock(&s->mu);
  if (!atomic_load(&s->failed)) propagate(s, &out, outputs, &ready);
  if (ready.oom) fail_locked(s, TFD_RESOURCE_EXHAUSTED, "out of memory scheduling nodes");
  if (atomic_load(&s->failed)) ready.n = 0;
  s->outstanding += ready.n - 1;
  bool last = s->outstanding == 0;
  pthread_mutex_unlock(&s->mu);
  for (int o = 0; o < num_outputs; o++) tfd_tensor_unref(outputs[o]);
  if (last) {
    tvec_free(&ready);
    finish_step(s);
    return;
  }
  dispatch(s, &ready, stack);
  tvec_free(&ready);
}

static void fill_ctx(fstep *s, const tagged *t, tfd_kernel_context *c, tfd_tensor **outputs, tfd_status *st,
                     tfd_node_stats *ns) {
  const fnode *n = &s->f->nodes[t->node];
  *c = s->ctx;
  if (ns) {
    if (!ns->tracker) ns->tracker = tfd_tracking_allocator_new(c->allocator, s->args.allocation_records);
    if (ns->tracker) c->allocator = ns->tracker;
  }
  c->inputs = &t->iter->slots[n->input_start];
  c->num_inputs = n->num_inputs;
  c->outputs = outputs;
  c->num_outputs = n->num_outputs;
  c->status = st;
}

/* The stats entry for one run of a node: the node's own for its first run, a new one chained to it
 * for each later one (a node in a loop runs once per iteration, and TensorFlow records each run). */
static tfd_node_stats *stats_entry(fstep *s, int node) {
  if (!s->args.stats) return NULL;
  tfd_node_stats *first = &s->args.stats[node];
  pthread_mutex_lock(&s->mu);
  tfd_node_stats *ns = first;
  if (first->ran || first->tracker) { /* taken: chain a new one after the last */
    ns = calloc(1, sizeof *ns);
    if (ns) {
      tfd_node_stats *last = first;
      while (last->next) last = last->next;
      last->next = ns;
    }
  }
  if (ns) ns->ran = true; /* claimed; tfd_node_stats_record fills it in */
  pthread_mutex_unlock(&s->mu);
  return ns;
}

static void async_done(void *arg) {
  async_call *a = arg;
  fstep *s = a->s;
  TVEC(stack);
  node_done(s, &a->t, &a->ctx, &a->status, a->stats, a->stats ? a->stats->all_start_micros : 0, true, &stack);
  tfd_status_clear(&a->status);
  free(a);
  run_inline(s, &stack);
  tvec_free(&stack);
}

/* A loop of cheap nodes runs on one thread for as long as it lasts, so every YIELD_AFTER nodes a
 * thread of the pool hands the ready ones to the back of the pool's queue: a loop that never ends
 * (until its run is cancelled) must not keep that thread from the work queued behind it, such as
 * the start of another partial run that a close is waiting for. */
#define YIELD_AFTER 1024

/* True when every node on the stack went to the pool; false leaves them where they were. */
static bool requeue(fstep *s, tvec *stack) {
  int moved = 0;
  while (moved < stack->n && schedule_node(s, stack->v[moved])) moved++;
  /* What was handed out is not this thread's any more (the step may even be over). */
  memmove(stack->v, stack->v + moved, (size_t)(stack->n - moved) * sizeof *stack->v);
  stack->n -= moved;
  return stack->n == 0;
}

static void run_inline(fstep *s, tvec *stack) {
  int ran = 0;
  while (stack->n > 0) {
    if (++ran > YIELD_AFTER && s->args.runner && tfd_threadpool_current_thread_id(s->args.runner) >= 0) {
      ran = 0;
      if (requeue(s, stack)) return;
    }
    tagged t = stack->v[--stack->n];
    const fnode *n = &s->f->nodes[t.node];
    poll_stop(s);
    bool run = !atomic_load(&s->failed) && (!t.dead || n->kind == K_TRANSFER);
    if (run && t.dead) /* a dead _Send sends its tensor as dead, whatever its data input held */
      for (int i = 0; i < n->num_inputs; i++) {
        tfd_tensor_unref(t.iter->slots[n->input_start + i]);
        t.iter->slots[n->input_start + i] = NULL;
      }
    tfd_node_stats *ns = run ? stats_entry(s, t.node) : NULL;
    int64_t start = ns ? tfd_now_micros() : 0;
    if (run && n->is_async) {
      async_call *a = calloc(1, sizeof *a);
      if (a) {
        a->s = s;
        a->t = t;
        a->stats = ns;
        fill_ctx(s, &t, &a->ctx, a->outputs, &a->status, ns);
        if (ns) ns->all_start_micros = start;
        n->kernel->compute_async(n->kernel, &a->ctx, async_done, a);
        continue; /* async_done carries on */
      }
    }
    tfd_tensor *outputs[TFD_MAX_OP_OUTPUTS];
    for (int o = 0; o < n->num_outputs; o++) outputs[o] = NULL;
    tfd_status st = TFD_STATUS_INIT;
    tfd_kernel_context ctx;
    fill_ctx(s, &t, &ctx, outputs, &st, ns);
    if (run && n->is_async) tfd_status_setf(&st, TFD_RESOURCE_EXHAUSTED, "out of memory starting an async kernel");
    else if (run) n->kernel->compute(n->kernel, &ctx);
    node_done(s, &t, &ctx, &st, ns, start, run, stack);
  }
}

void tfd_frames_run_async(tfd_frames *f, const tfd_executor_args *args, tfd_executor_done done, void *arg) {
  fstep *s = calloc(1, sizeof *s);
  if (s) {
    pthread_mutex_init(&s->mu, NULL);
    s->f = f;
    s->root = frame_new(s, 0, NULL, NULL);
  }
  if (!s || !s->root) {
    if (s) frames_step_free(s);
    tfd_status st = TFD_STATUS_INIT;
    tfd_status_setf(&st, TFD_RESOURCE_EXHAUSTED, "out of memory starting a step");
    tfd_executor_fail_start(args, &st, done, arg);
    tfd_status_clear(&st);
    return;
  }
  s->args = *args;
  s->done = done;
  s->done_arg = arg;
  s->status = (tfd_status)TFD_STATUS_INIT;
  atomic_init(&s->failed, false);
  atomic_init(&s->polls, 0);
  s->ctx = tfd_executor_step_ctx_timed(f->device, args, &s->deadline);
  if (f->num_roots == 0) {
    finish_step(s);
    return;
  }
  iteration *it0 = get_iteration(s->root, 0);
  TVEC(ready);
  TVEC(stack);
  for (int r = 0; r < f->num_roots; r++) vpush(&ready, (tagged){f->roots[r], s->root, it0, false});
  if (ready.oom) {
    tvec_free(&ready);
    tfd_status st = TFD_STATUS_INIT;
    tfd_status_setf(&st, TFD_RESOURCE_EXHAUSTED, "out of memory starting a step");
    frames_step_free(s);
    tfd_executor_fail_start(args, &st, done, arg);
    tfd_status_clear(&st);
    return;
  }
  s->outstanding = ready.n; /* every root is counted before the first is handed out */
  it0->outstanding_ops = ready.n;
  dispatch(s, &ready, &stack);
  tvec_free(&ready);
  run_inline(s, &stack);
  tvec_free(&stack);
}
