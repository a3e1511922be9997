/* Executor: precompiled partitions, per-step pending counts, inline chains and pool fan-out. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../core/status_internal.h"
#include "cancellation.h"
#include "executor.h"

typedef struct item {
  tfd_kernel *kernel;
  bool owned; /* false: held by the device's OpSegment */
  bool is_async;
  int input_start, num_inputs, num_outputs;
  int initial_pending;
} item;

struct tfd_executor {
  tfd_graph *graph;
  tfd_device *device; /* referenced */
  item *items;
  int total_inputs;
  int *roots;
  int num_roots;
};

int64_t tfd_now_micros(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

typedef struct kernel_maker {
  tfd_kernel_init init;
} kernel_maker;

static tfd_op_kernel *make_shared_kernel(void *arg, tfd_status *st) {
  tfd_kernel *k = tfd_kernel_create(&((kernel_maker *)arg)->init, st);
  return k ? &k->base : NULL;
}

void tfd_executor_free(tfd_executor *e) {
  if (!e) return;
  if (e->items)
    for (int i = 0; i < e->graph->n; i++)
      if (e->items[i].owned && e->items[i].kernel) e->items[i].kernel->base.ops->destroy(&e->items[i].kernel->base);
  free(e->items);
  free(e->roots);
  tfd_graph_free(e->graph);
  tfd_device_unref(e->device);
  free(e);
}

const tfd_graph *tfd_executor_graph(const tfd_executor *e) { return e->graph; }
tfd_device *tfd_executor_device(const tfd_executor *e) { return e->device; }

tfd_executor *tfd_executor_new(tfd_graph *g, tfd_device *device, const char *session_handle, tfd_status *st) {
  tfd_executor *e = calloc(1, sizeof *e);
  if (!e) {
    tfd_graph_free(g);
    tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory creating an executor");
    return NULL;
  }
  e->graph = g;
  e->device = tfd_device_ref(device);
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
    kernel_maker mk = {{n->def, n->op, device, n->num_inputs, n->in_types, n->out_types}};
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
    it->input_start = e->total_inputs;
    it->num_inputs = n->num_inputs;
    it->num_outputs = n->num_outputs;
    it->initial_pending = n->num_inputs + n->num_control;
    e->total_inputs += n->num_inputs;
    if (it->initial_pending == 0) e->roots[e->num_roots++] = i;
  }
  return e;
}

/* ---- one step ---- */
typedef struct step step;

typedef struct task {
  step *s;
  int node;
} task;

struct step {
  tfd_executor *e;
  tfd_executor_args args;
  tfd_executor_done done;
  void *done_arg;
  atomic_int *pending;
  tfd_tensor **slots;
  task *tasks;
  atomic_int outstanding;
  atomic_bool failed;
  pthread_mutex_t mu;
  tfd_status status; /* the first error */
};

/* An async kernel's context must outlive the call that started it. */
typedef struct async_call {
  step *s;
  int node;
  tfd_kernel_ctx ctx;
  tfd_status status;
  tfd_tensor *outputs[TFD_MAX_OP_OUTPUTS];
} async_call;

static void process(step *s, int node);
static void finish_step(step *s);

static void fail(step *s, tfd_status *st) {
  pthread_mutex_lock(&s->mu);
  bool first = s->status.code == TFD_OK;
  if (first) tfd_status_move(&s->status, st);
  pthread_mutex_unlock(&s->mu);
  if (first) {
    atomic_store(&s->failed, true);
    if (s->args.rendezvous) tfd_rendezvous_abort(s->args.rendezvous, s->status.code, tfd_status_message(&s->status));
  }
  tfd_status_clear(st);
}

static void finish_step(step *s) {
  /* After an error, consumers that never ran still hold their inputs. */
  for (int i = 0; i < s->e->total_inputs; i++) tfd_tensor_unref(s->slots[i]);
  s->done(s->done_arg, &s->status);
  tfd_status_clear(&s->status);
  pthread_mutex_destroy(&s->mu);
  free(s);
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
 * one to continue a chain; others go to the pool. */
#define INLINE_MAX 64
typedef struct ready_stack {
  int nodes[INLINE_MAX];
  int top;
  bool has_expensive;
} ready_stack;

/* Makes `node` runnable: here when it is cheap (or the first expensive one),
 * else on the pool. The step's outstanding count covers it from now on. */
static void make_ready(step *s, int node, ready_stack *rs) {
  atomic_fetch_add(&s->outstanding, 1);
  bool cheap = s->e->graph->nodes[node].op->cheap;
  if (rs->top < INLINE_MAX && (cheap || !rs->has_expensive || !s->args.runner)) {
    if (!cheap) rs->has_expensive = true;
    rs->nodes[rs->top++] = node;
    return;
  }
  if (!s->args.runner || tfd_threadpool_schedule(s->args.runner, run_task, &s->tasks[node], NULL) != TFD_OK)
    process(s, node); /* the pool refused (or the stack is full): run it now, depth-first */
}

/* Records a finished node and hands its outputs on. Returns false when the step is over. */
static bool node_done(step *s, int node, tfd_kernel_ctx *ctx, tfd_status *st, int64_t start, ready_stack *rs) {
  tfd_executor *e = s->e;
  item *it = &e->items[node];
  tfd_gnode *gn = &e->graph->nodes[node];
  if (st->code == TFD_OK) {
    /* Consumers were built for the inferred dtypes and read elements of that
     * size: a tensor of another dtype (a queue or session tensor shared with
     * other graphs, a variable written elsewhere) must stop here. */
    for (int o = 0; o < it->num_outputs; o++) {
      if (!ctx->outputs[o]) {
        tfd_status_setf(st, TFD_INTERNAL, "node '%s' (%s) produced no output %d", tfd_gnode_name(gn), gn->op->name, o);
        break;
      }
      if (tfd_tensor_dtype(ctx->outputs[o]) != gn->out_types[o]) {
        tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (%s): output %d is %s, but the graph expects %s",
                        tfd_gnode_name(gn), gn->op->name, o, tfd_dtype_name(tfd_tensor_dtype(ctx->outputs[o])),
                        tfd_dtype_name(gn->out_types[o]));
        break;
      }
    }
  }
  if (s->args.stats) {
    tfd_node_stats *ns = &s->args.stats[node];
    ns->all_start_micros = start;
    ns->all_end_rel_micros = tfd_now_micros() - start;
    ns->thread_id = thread_id(s);
    ns->ran = true;
    ns->output_bytes = 0;
    for (int o = 0; o < it->num_outputs; o++)
      if (ctx->outputs[o]) ns->output_bytes += (int64_t)tfd_tensor_byte_size(ctx->outputs[o]);
    tfd_allocator_stats as;
    tfd_allocator_get_stats(ctx->allocator, &as);
    ns->allocator_bytes_in_use = as.bytes_in_use;
  }
  if (st->code != TFD_OK) fail(s, st);
  for (int i = 0; i < it->num_inputs; i++) {
    tfd_tensor_unref(s->slots[it->input_start + i]);
    s->slots[it->input_start + i] = NULL;
  }
  if (!atomic_load(&s->failed)) {
    for (int k = 0; k < gn->num_out_edges; k++) {
      tfd_out_edge *oe = &gn->out_edges[k];
      if (oe->dst_input >= 0)
        s->slots[e->items[oe->dst].input_start + oe->dst_input] = tfd_tensor_ref(ctx->outputs[oe->src_output]);
      if (atomic_fetch_sub(&s->pending[oe->dst], 1) == 1) make_ready(s, oe->dst, rs);
    }
  }
  for (int o = 0; o < it->num_outputs; o++) tfd_tensor_unref(ctx->outputs[o]);
  if (atomic_fetch_sub(&s->outstanding, 1) == 1) {
    finish_step(s);
    return false;
  }
  return true;
}

static void run_inline(step *s, ready_stack *rs);

static void async_done(void *arg) {
  async_call *a = arg;
  step *s = a->s;
  ready_stack rs = {.top = 0};
  bool more = node_done(s, a->node, &a->ctx, &a->status, s->args.stats ? s->args.stats[a->node].all_start_micros : 0, &rs);
  tfd_status_clear(&a->status);
  free(a);
  if (more) run_inline(s, &rs);
}

static void fill_ctx(step *s, int node, tfd_kernel_ctx *c, tfd_tensor **outputs, tfd_status *st) {
  tfd_executor *e = s->e;
  item *it = &e->items[node];
  tfd_device *d = e->device;
  *c = (tfd_kernel_ctx){
      .device = d,
      .allocator = tfd_device_get_allocator(d),
      .intra_pool = tfd_device_threadpool(d),
      .rm = tfd_device_resource_manager(d),
      .step_id = s->args.step_id,
      .inputs = &s->slots[it->input_start],
      .num_inputs = it->num_inputs,
      .outputs = outputs,
      .num_outputs = it->num_outputs,
      .status = st,
      .rendezvous = s->args.rendezvous,
      .cancellation = s->args.cancellation,
      .session_state = s->args.session_state,
      .feeds = s->args.feeds,
      .num_feeds = s->args.num_feeds,
      .fetches = s->args.fetches,
      .num_fetches = s->args.num_fetches,
  };
}

/* Runs nodes from the stack until it is empty (or the step is over). */
static void run_inline(step *s, ready_stack *rs) {
  while (rs->top > 0) {
    int node = rs->nodes[--rs->top];
    item *it = &s->e->items[node];
    if (!s->e->graph->nodes[node].op->cheap) rs->has_expensive = false;
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
    tfd_tensor *outputs[TFD_MAX_OP_OUTPUTS] = {0};
    tfd_status st = TFD_STATUS_INIT;
    tfd_kernel_ctx ctx;
    fill_ctx(s, node, &ctx, outputs, &st);
    if (atomic_load(&s->failed)) tfd_status_setf(&st, TFD_CANCELLED, "step failed elsewhere");
    else if (it->is_async) tfd_status_setf(&st, TFD_RESOURCE_EXHAUSTED, "out of memory starting an async kernel");
    else it->kernel->compute(it->kernel, &ctx);
    if (!node_done(s, node, &ctx, &st, start, rs)) return;
  }
}

static void process(step *s, int node) {
  ready_stack rs = {.top = 1, .nodes = {node}, .has_expensive = !s->e->graph->nodes[node].op->cheap};
  run_inline(s, &rs);
}

void tfd_executor_run_async(tfd_executor *e, const tfd_executor_args *args, tfd_executor_done done, void *arg) {
  int n = e->graph->n;
  size_t bytes = sizeof(step) + (size_t)n * (sizeof(atomic_int) + sizeof(task)) +
                 (size_t)e->total_inputs * sizeof(tfd_tensor *);
  step *s = calloc(1, bytes);
  if (!s) {
    tfd_status st = TFD_STATUS_INIT;
    tfd_status_setf(&st, TFD_RESOURCE_EXHAUSTED, "out of memory starting a step");
    done(arg, &st);
    tfd_status_clear(&st);
    return;
  }
  s->e = e;
  s->args = *args;
  s->done = done;
  s->done_arg = arg;
  /* One block: pointer-aligned parts first, then the counters. */
  s->tasks = (task *)(s + 1);
  s->slots = (tfd_tensor **)(s->tasks + n);
  s->pending = (atomic_int *)(s->slots + e->total_inputs);
  for (int i = 0; i < n; i++) {
    atomic_init(&s->pending[i], e->items[i].initial_pending);
    s->tasks[i] = (task){s, i};
  }
  pthread_mutex_init(&s->mu, NULL);
  if (e->num_roots == 0) {
    finish_step(s);
    return;
  }
  /* Hold the step open while the roots are handed out, then let go. */
  atomic_init(&s->outstanding, 1);
  ready_stack rs = {.top = 0};
  for (int r = 0; r < e->num_roots; r++) make_ready(s, e->roots[r], &rs);
  if (atomic_fetch_sub(&s->outstanding, 1) == 1) {
    finish_step(s);
    return;
  }
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
  struct timespec deadline = tfd_deadline_after_ms(timeout_ms > 0 ? timeout_ms : 0);
  bool timed_out = false;
  while (*pending > 0) {
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
  tfd_executor_run_async(e, args, wake, &w);
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
