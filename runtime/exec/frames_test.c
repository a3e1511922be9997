/* Unit tests for the frame-aware executor: while loops (counting, nested, parallel iterations, loop
 * invariants, TensorLists), conditionals and dead tensors, timeouts, step stats and malformed loops. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/exec/executor.h"
#include "runtime/testing/graph_builder.h"
#include "runtime/testing/harness.h"

static void set_str(tfd_node_def *n, const char *attr, const char *v) {
  tfd_attr_value a = {.type = TFD_ATTR_STRING, .s = v};
  tfd_node_def_set_attr(n, attr, &a, NULL);
}

static void set_int(tfd_node_def *n, const char *attr, int64_t v) {
  tfd_attr_value a = {.type = TFD_ATTR_INT, .i = v};
  tfd_node_def_set_attr(n, attr, &a, NULL);
}

static void set_bool(tfd_node_def *n, const char *attr, bool v) {
  tfd_attr_value a = {.type = TFD_ATTR_BOOL, .b = v};
  tfd_node_def_set_attr(n, attr, &a, NULL);
}

static void i32(tfd_graph_def *g, const char *name, int32_t v) { tg_const(g, name, TFD_INT32, NULL, 0, &v); }

static tfd_node_def *enter(tfd_graph_def *g, const char *name, const char *in, const char *frame, bool constant,
                           int parallel) {
  tfd_node_def *n = tg_node(g, name, "Enter", in, NULL, NULL);
  set_str(n, "frame_name", frame);
  set_bool(n, "is_constant", constant);
  set_int(n, "parallel_iterations", parallel);
  return n;
}

static void fetch(tfd_graph_def *g, const char *name, const char *in, int index) {
  set_int(tg_node(g, name, "_Fetch", in, NULL, NULL), "index", index);
}

/* i = start; while (i < limit) i = i + step; in frame `frame`, reading start, limit and step (nodes
 * of the enclosing frame) and naming its nodes "<p>_..."; its result is "<p>_exit". */
static void counting_loop(tfd_graph_def *g, const char *p, const char *frame, const char *start, const char *limit,
                          const char *step, int parallel) {
  char a[64], b[64], c[64];
#define N(x) (snprintf(a, sizeof a, "%s_%s", p, x), a)
#define M(x) (snprintf(b, sizeof b, "%s_%s", p, x), b)
#define O(x) (snprintf(c, sizeof c, "%s_%s", p, x), c)
  enter(g, N("enter"), start, frame, false, parallel);
  enter(g, N("limit"), limit, frame, true, parallel);
  enter(g, N("step"), step, frame, true, parallel);
  tg_node(g, N("merge"), "Merge", M("enter"), O("next"), NULL);
  tg_node(g, N("less"), "Less", M("merge"), O("limit"), NULL);
  tg_node(g, N("cond"), "LoopCond", M("less"), NULL, NULL);
  tg_node(g, N("switch"), "Switch", M("merge"), O("cond"), NULL);
  snprintf(b, sizeof b, "%s_switch:1", p);
  tg_node(g, N("body"), "Identity", b, NULL, NULL);
  tg_node(g, N("add"), "AddV2", M("body"), O("step"), NULL);
  tg_node(g, N("next"), "NextIteration", M("add"), NULL, NULL);
  tg_node(g, N("exit"), "Exit", M("switch"), NULL, NULL);
#undef N
#undef M
#undef O
}

typedef struct env {
  tfd_status *st;
  tfd_device *dev;
  tfd_threadpool *pool;
} env;

static env env_new(void) {
  env e = {tfd_status_new(), NULL, NULL};
  tfd_cpu_device_config cfg = {.name = "/job:f/replica:0/task:0/device:CPU:0", .num_threads = 2, .own_threadpool = true};
  tfd_cpu_device_new(&cfg, &e.dev, e.st);
  tfd_threadpool_new("inter", 3, &e.pool, e.st);
  return e;
}

static void env_free(env *e) {
  tfd_threadpool_free(e->pool);
  tfd_device_unref(e->dev);
  tfd_status_free(e->st);
}

/* Builds g into an executor (NULL: the build failed, status set). */
static tfd_executor *build(env *e, tfd_graph_def *g) {
  tfd_graph *graph = tfd_graph_build(g, e->st);
  return graph ? tfd_executor_new(graph, e->dev, NULL, e->st) : NULL;
}

static tfd_code run(env *e, tfd_executor *x, bool pool, tfd_tensor **fetches, int n, tfd_node_stats *stats) {
  tfd_executor_args args = {.fetches = fetches, .num_fetches = n, .runner = pool ? e->pool : NULL, .stats = stats};
  return tfd_executor_run(x, &args, 0, NULL, e->st);
}

static int32_t int_of(const tfd_tensor *t) { return t ? *(const int32_t *)tfd_tensor_const_data(t) : -999; }

static void test_counting_loop(void) {
  env e = env_new();
  for (int parallel = 1; parallel <= 10; parallel += 9) {
    tfd_graph_def *g = tfd_graph_def_new();
    i32(g, "zero", 0);
    i32(g, "ten", 10);
    i32(g, "one", 1);
    counting_loop(g, "l", "count", "zero", "ten", "one", parallel);
    fetch(g, "_f", "l_exit", 0);
    tfd_executor *x = build(&e, g);
    CHECK(x != NULL);
    CHECK(tfd_executor_may_wait(x)); /* a loop is stopped by cancelling it */
    for (int pool = 0; x && pool < 2; pool++) {
      tfd_tensor *out = NULL;
      CHECK_INT(run(&e, x, pool, &out, 1, NULL), TFD_OK);
      CHECK_INT(int_of(out), 10);
      tfd_tensor_unref(out);
    }
    tfd_executor_free(x);
    tfd_graph_def_free(g);
  }
  env_free(&e);
}

/* A loop whose body is never entered runs its condition once and exits with its input. */
static void test_zero_iterations(void) {
  env e = env_new();
  tfd_graph_def *g = tfd_graph_def_new();
  i32(g, "start", 7);
  i32(g, "limit", 3);
  i32(g, "one", 1);
  counting_loop(g, "l", "never", "start", "limit", "one", 10);
  fetch(g, "_f", "l_exit", 0);
  tfd_executor *x = build(&e, g);
  tfd_node_stats stats[64] = {0};
  tfd_tensor *out = NULL;
  CHECK_INT(run(&e, x, false, &out, 1, stats), TFD_OK);
  CHECK_INT(int_of(out), 7);
  const tfd_graph *graph = tfd_executor_graph(x);
  CHECK(!stats[tfd_graph_find(graph, "l_add")].ran); /* dead: the body never ran */
  CHECK(stats[tfd_graph_find(graph, "l_less")].ran);
  for (int i = 0; i < graph->n; i++) {
    tfd_node_stats_free_chain(&stats[i]);
    tfd_allocator_unref(stats[i].tracker);
  }
  tfd_tensor_unref(out);
  tfd_executor_free(x);
  tfd_graph_def_free(g);
  env_free(&e);
}

/* Outer i < 3 (step 1), inner j < 4 counting how often the inner body runs in total: an Enter of the
 * outer frame's value feeds the inner loop each outer iteration, and the inner loop's Exit goes back
 * to the outer iteration that started it. */
static void test_nested_loops(void) {
  env e = env_new();
  tfd_graph_def *g = tfd_graph_def_new();
  i32(g, "zero", 0);
  i32(g, "three", 3);
  i32(g, "four", 4);
  i32(g, "one", 1);
  /* outer: (i, total) */
  enter(g, "o_i", "zero", "outer", false, 4);
  enter(g, "o_total", "zero", "outer", false, 4);
  enter(g, "o_limit", "three", "outer", true, 4);
  enter(g, "o_one", "one", "outer", true, 4);
  enter(g, "o_four", "four", "outer", true, 4);
  tg_node(g, "o_mi", "Merge", "o_i", "o_ni", NULL);
  tg_node(g, "o_mt", "Merge", "o_total", "o_nt", NULL);
  tg_node(g, "o_less", "Less", "o_mi", "o_limit", NULL);
  tg_node(g, "o_cond", "LoopCond", "o_less", NULL, NULL);
  tg_node(g, "o_si", "Switch", "o_mi", "o_cond", NULL);
  tg_node(g, "o_st", "Switch", "o_mt", "o_cond", NULL);
  tg_node(g, "o_bi", "Identity", "o_si:1", NULL, NULL);
  tg_node(g, "o_bt", "Identity", "o_st:1", NULL, NULL);
  tg_node(g, "o_inc", "AddV2", "o_bi", "o_one", NULL);
  /* inner: j from 0 to 4 adding one to a total that starts at the outer total */
  i32(g, "o_zero", 0);
  tfd_node_def_add_input(tfd_graph_def_find(g, "o_zero"), "^o_bi", NULL); /* a constant of the outer body */
  enter(g, "i_j", "o_zero", "inner", false, 2);
  enter(g, "i_t", "o_bt", "inner", false, 2);
  enter(g, "i_limit", "o_four", "inner", true, 2);
  enter(g, "i_one", "o_one", "inner", true, 2);
  tg_node(g, "i_mj", "Merge", "i_j", "i_nj", NULL);
  tg_node(g, "i_mt", "Merge", "i_t", "i_nt", NULL);
  tg_node(g, "i_less", "Less", "i_mj", "i_limit", NULL);
  tg_node(g, "i_cond", "LoopCond", "i_less", NULL, NULL);
  tg_node(g, "i_sj", "Switch", "i_mj", "i_cond", NULL);
  tg_node(g, "i_st", "Switch", "i_mt", "i_cond", NULL);
  tg_node(g, "i_addj", "AddV2", "i_sj:1", "i_one", NULL);
  tg_node(g, "i_addt", "AddV2", "i_st:1", "i_one", NULL);
  tg_node(g, "i_nj", "NextIteration", "i_addj", NULL, NULL);
  tg_node(g, "i_nt", "NextIteration", "i_addt", NULL, NULL);
  tg_node(g, "i_exit", "Exit", "i_st", NULL, NULL);
  tg_node(g, "i_exitj", "Exit", "i_sj", NULL, NULL); /* unused: its consumer-less value is dropped */
  tg_node(g, "o_ni", "NextIteration", "o_inc", NULL, NULL);
  tg_node(g, "o_nt", "NextIteration", "i_exit", NULL, NULL);
  tg_node(g, "o_exit_i", "Exit", "o_si", NULL, NULL);
  tg_node(g, "o_exit_t", "Exit", "o_st", NULL, NULL);
  fetch(g, "_f0", "o_exit_i", 0);
  fetch(g, "_f1", "o_exit_t", 1);
  tfd_executor *x = build(&e, g);
  CHECK(x != NULL);
  for (int pool = 0; x && pool < 2; pool++) {
    tfd_tensor *out[2] = {0};
    CHECK_INT(run(&e, x, pool, out, 2, NULL), TFD_OK);
    CHECK_INT(int_of(out[0]), 3);
    CHECK_INT(int_of(out[1]), 12);
    tfd_tensor_unref(out[0]);
    tfd_tensor_unref(out[1]);
  }
  tfd_executor_free(x);
  tfd_graph_def_free(g);
  env_free(&e);
}

/* squares[i] = i * i for i < 5, in a TensorList written in the loop and stacked after it. */
static void test_tensor_list_loop(void) {
  env e = env_new();
  tfd_graph_def *g = tfd_graph_def_new();
  i32(g, "zero", 0);
  i32(g, "five", 5);
  i32(g, "one", 1);
  int32_t shape = -1; /* the elements' shape: unknown rank */
  tg_const(g, "shape", TFD_INT32, NULL, 0, &shape);
  tfd_node_def *r = tg_node(g, "list", "TensorListReserve", "shape", "five", NULL);
  tg_set_type(r, "element_dtype", TFD_INT32);
  enter(g, "e_i", "zero", "sq", false, 3);
  enter(g, "e_l", "list", "sq", false, 3);
  enter(g, "e_n", "five", "sq", true, 3);
  enter(g, "e_one", "one", "sq", true, 3);
  tg_node(g, "m_i", "Merge", "e_i", "n_i", NULL);
  tg_node(g, "m_l", "Merge", "e_l", "n_l", NULL);
  tg_node(g, "less", "Less", "m_i", "e_n", NULL);
  tg_node(g, "cond", "LoopCond", "less", NULL, NULL);
  tg_node(g, "s_i", "Switch", "m_i", "cond", NULL);
  tg_node(g, "s_l", "Switch", "m_l", "cond", NULL);
  tg_node(g, "b_i", "Identity", "s_i:1", NULL, NULL);
  tg_node(g, "square", "Mul", "b_i", "b_i", NULL);
  tfd_node_def *set = tg_node(g, "set", "TensorListSetItem", "s_l:1", "b_i", NULL);
  tfd_node_def_add_input(set, "square", NULL);
  tg_node(g, "inc", "AddV2", "b_i", "e_one", NULL);
  tg_node(g, "n_i", "NextIteration", "inc", NULL, NULL);
  tg_node(g, "n_l", "NextIteration", "set", NULL, NULL);
  tg_node(g, "x_l", "Exit", "s_l", NULL, NULL);
  int32_t empty[1];
  int64_t zero_len = 0;
  tg_const(g, "elem", TFD_INT32, &zero_len, 1, empty); /* scalars */
  tfd_node_def *stack = tg_node(g, "stack", "TensorListStack", "x_l", "elem", NULL);
  tg_set_type(stack, "element_dtype", TFD_INT32);
  fetch(g, "_f", "stack", 0);
  tfd_executor *x = build(&e, g);
  CHECK(x != NULL);
  for (int pool = 0; x && pool < 2; pool++) {
    tfd_tensor *out = NULL;
    CHECK_INT(run(&e, x, pool, &out, 1, NULL), TFD_OK);
    CHECK(out && tfd_tensor_ndims(out) == 1 && tfd_tensor_dim(out, 0) == 5);
    for (int i = 0; out && i < 5; i++) CHECK_INT(((const int32_t *)tfd_tensor_const_data(out))[i], i * i);
    tfd_tensor_unref(out);
  }
  tfd_executor_free(x);
  tfd_graph_def_free(g);
  env_free(&e);
}

/* y = pred ? x * 2 : x + 10 with Switch and Merge; the branch not taken is dead, and so is whatever
 * hangs off it, data or control. */
static void test_conditional_and_dead_tensors(void) {
  env e = env_new();
  for (int p = 0; p < 2; p++) {
    tfd_graph_def *g = tfd_graph_def_new();
    i32(g, "x", 5);
    i32(g, "two", 2);
    i32(g, "ten", 10);
    bool pv = p;
    tg_const(g, "pred", TFD_BOOL, NULL, 0, &pv);
    tg_node(g, "sw", "Switch", "x", "pred", NULL);
    tg_node(g, "t", "Mul", "sw:1", "two", NULL);
    tg_node(g, "f", "AddV2", "sw", "ten", NULL);
    tg_node(g, "merge", "Merge", "f", "t", NULL);
    tg_node(g, "after_t", "Neg", "t", NULL, NULL);
    i32(g, "ctl", 1);
    tfd_node_def_add_input(tfd_graph_def_find(g, "ctl"), "^t", NULL); /* dead with t */
    fetch(g, "_f0", "merge", 0);
    fetch(g, "_f1", "merge:1", 1);
    fetch(g, "_f2", "after_t", 2);
    fetch(g, "_f3", "ctl", 3);
    tfd_executor *x = build(&e, g);
    CHECK(x != NULL);
    tfd_node_stats stats[32] = {0};
    tfd_tensor *out[4] = {0};
    CHECK_INT(run(&e, x, p, out, 4, stats), TFD_OK);
    CHECK_INT(int_of(out[0]), p ? 10 : 15);
    CHECK_INT(int_of(out[1]), p ? 1 : 0); /* value_index: which input was live */
    CHECK(p ? out[2] != NULL : out[2] == NULL);  /* a dead tensor is never fetched */
    CHECK(p ? out[3] != NULL : out[3] == NULL);
    const tfd_graph *graph = tfd_executor_graph(x);
    CHECK(stats[tfd_graph_find(graph, "t")].ran == (p == 1));
    CHECK(stats[tfd_graph_find(graph, "f")].ran == (p == 0));
    for (int i = 0; i < graph->n; i++) tfd_allocator_unref(stats[i].tracker);
    for (int i = 0; i < 4; i++) tfd_tensor_unref(out[i]);
    tfd_executor_free(x);
    tfd_graph_def_free(g);
  }
  env_free(&e);
}

/* A loop on the branch of a conditional not taken: its Enters are dead, it runs dead once, its dead
 * Exits reach the parent when the frame is done, and the Merge after it takes the other branch. */
static void test_loop_in_untaken_branch(void) {
  env e = env_new();
  tfd_graph_def *g = tfd_graph_def_new();
  i32(g, "x", 4);
  i32(g, "limit", 100);
  i32(g, "one", 1);
  bool no = false;
  tg_const(g, "pred", TFD_BOOL, NULL, 0, &no);
  tg_node(g, "sw", "Switch", "x", "pred", NULL);
  tg_node(g, "taken", "Identity", "sw", NULL, NULL);
  tg_node(g, "loop_in", "Identity", "sw:1", NULL, NULL);
  counting_loop(g, "l", "dead_loop", "loop_in", "limit", "one", 10);
  tg_node(g, "merge", "Merge", "l_exit", "taken", NULL);
  tg_node(g, "after_loop", "Neg", "l_exit", NULL, NULL);
  fetch(g, "_f0", "merge", 0);
  fetch(g, "_f1", "merge:1", 1);
  fetch(g, "_f2", "after_loop", 2);
  tfd_executor *x = build(&e, g);
  CHECK(x != NULL);
  for (int pool = 0; x && pool < 2; pool++) {
    tfd_tensor *out[3] = {0};
    CHECK_INT(run(&e, x, pool, out, 3, NULL), TFD_OK);
    CHECK_INT(int_of(out[0]), 4);
    CHECK_INT(int_of(out[1]), 1);
    CHECK(out[2] == NULL);
    for (int i = 0; i < 3; i++) tfd_tensor_unref(out[i]);
  }
  tfd_executor_free(x);
  tfd_graph_def_free(g);
  env_free(&e);
}

/* A loop that never ends is stopped by the step's timeout, inline or on the pool, with or without a
 * cancellation to stop. */
static void test_infinite_loop_times_out(void) {
  env e = env_new();
  tfd_graph_def *g = tfd_graph_def_new();
  i32(g, "zero", 0);
  i32(g, "limit", 1);
  i32(g, "none", 0); /* step 0: i stays below the limit for ever */
  counting_loop(g, "l", "forever", "zero", "limit", "none", 1);
  fetch(g, "_f", "l_exit", 0);
  tfd_executor *x = build(&e, g);
  for (int pool = 0; x && pool < 2; pool++) {
    tfd_tensor *out = NULL;
    tfd_cancellation *cancel = pool ? tfd_cancellation_new() : NULL;
    tfd_executor_args args = {.fetches = &out, .num_fetches = 1, .runner = pool ? e.pool : NULL,
                              .cancellation = cancel, .timeout_ms = 50};
    int64_t t0 = tfd_now_micros();
    CHECK_INT(tfd_executor_run(x, &args, pool ? 50 : 0, "the loop", e.st), TFD_DEADLINE_EXCEEDED);
    CHECK_CONTAINS(tfd_status_message(e.st), "(50 ms)");
    CHECK(tfd_now_micros() - t0 < 5 * 1000 * 1000);
    CHECK(out == NULL);
    tfd_status_reset(e.st);
    tfd_cancellation_unref(cancel);
  }
  tfd_executor_free(x);
  tfd_graph_def_free(g);
  env_free(&e);
}

/* Step stats: a node run in n iterations has n entries, chained. */
static void test_stats_per_iteration(void) {
  env e = env_new();
  tfd_graph_def *g = tfd_graph_def_new();
  i32(g, "zero", 0);
  i32(g, "six", 6);
  i32(g, "one", 1);
  counting_loop(g, "l", "six", "zero", "six", "one", 2);
  fetch(g, "_f", "l_exit", 0);
  tfd_executor *x = build(&e, g);
  tfd_node_stats stats[64] = {0};
  tfd_tensor *out = NULL;
  CHECK_INT(run(&e, x, true, &out, 1, stats), TFD_OK);
  const tfd_graph *graph = tfd_executor_graph(x);
  int runs = 0, merges = 0;
  for (const tfd_node_stats *s = &stats[tfd_graph_find(graph, "l_add")]; s; s = s->next) runs += s->ran;
  for (const tfd_node_stats *s = &stats[tfd_graph_find(graph, "l_merge")]; s; s = s->next) merges += s->ran;
  CHECK_INT(runs, 6);
  CHECK_INT(merges, 7); /* the condition is checked once more than the body runs */
  for (int i = 0; i < graph->n; i++) {
    tfd_node_stats_free_chain(&stats[i]);
    tfd_allocator_unref(stats[i].tracker);
  }
  tfd_tensor_unref(out);
  tfd_executor_free(x);
  tfd_graph_def_free(g);
  env_free(&e);
}

static void done_count(void *arg, const tfd_status *st) {
  (void)st;
  atomic_fetch_add((atomic_int *)arg, 1);
}

/* Many steps of one looping executor at once, on a pool. */
static void test_concurrent_steps(void) {
  env e = env_new();
  tfd_graph_def *g = tfd_graph_def_new();
  i32(g, "zero", 0);
  i32(g, "limit", 20);
  i32(g, "one", 1);
  counting_loop(g, "l", "c", "zero", "limit", "one", 4);
  fetch(g, "_f", "l_exit", 0);
  tfd_executor *x = build(&e, g);
  atomic_int done = 0;
  tfd_tensor *outs[30] = {0};
  for (int i = 0; x && i < 30; i++) {
    tfd_executor_args args = {.step_id = i, .fetches = &outs[i], .num_fetches = 1, .runner = e.pool};
    tfd_executor_run_async(x, &args, done_count, &done);
  }
  tfd_threadpool_free(e.pool); /* drains every scheduled node */
  e.pool = NULL;
  CHECK_INT(atomic_load(&done), 30);
  for (int i = 0; i < 30; i++) {
    CHECK_INT(int_of(outs[i]), 20);
    tfd_tensor_unref(outs[i]);
  }
  tfd_executor_free(x);
  tfd_graph_def_free(g);
  env_free(&e);
}

/* Malformed loops are refused when the executor is made, naming the node. */
static void test_malformed_loops(void) {
  env e = env_new();
  /* An Exit with no Enter before it. */
  tfd_graph_def *g = tfd_graph_def_new();
  i32(g, "x", 1);
  tg_node(g, "exit", "Exit", "x", NULL, NULL);
  CHECK(build(&e, g) == NULL);
  CHECK_STATUS(e.st, TFD_INVALID_ARGUMENT, "node 'exit' (Exit) is not inside a while loop");
  tfd_graph_def_free(g);
  /* A node reading both a loop's value and one from outside the loop. */
  g = tfd_graph_def_new();
  i32(g, "x", 1);
  enter(g, "in", "x", "f", false, 1);
  tg_node(g, "mix", "AddV2", "in", "x", NULL);
  CHECK(build(&e, g) == NULL);
  CHECK_STATUS(e.st, TFD_INVALID_ARGUMENT, "node 'mix' has inputs from different frames");
  tfd_graph_def_free(g);
  /* A NextIteration whose output goes anywhere but a Merge (the graph refuses it). */
  g = tfd_graph_def_new();
  i32(g, "x", 1);
  enter(g, "in", "x", "f", false, 1);
  tg_node(g, "next", "NextIteration", "in", NULL, NULL);
  tg_node(g, "use", "Neg", "next", NULL, NULL);
  CHECK(build(&e, g) == NULL);
  CHECK_STATUS(e.st, TFD_INVALID_ARGUMENT, "node 'next' (NextIteration) feeds node 'use' (Neg), which is not a Merge");
  tfd_graph_def_free(g);
  /* One frame name under two parents. */
  g = tfd_graph_def_new();
  i32(g, "x", 1);
  enter(g, "a", "x", "outer", false, 1);
  enter(g, "b", "a", "inner", false, 1);
  enter(g, "c", "x", "inner", false, 1);
  CHECK(build(&e, g) == NULL);
  CHECK_STATUS(e.st, TFD_INVALID_ARGUMENT, "Mismatched parent frames for \"inner\"");
  tfd_graph_def_free(g);
  /* Two LoopConds in one loop. */
  g = tfd_graph_def_new();
  bool t = true;
  tg_const(g, "p", TFD_BOOL, NULL, 0, &t);
  enter(g, "e", "p", "f", false, 1);
  tg_node(g, "c1", "LoopCond", "e", NULL, NULL);
  tg_node(g, "c2", "LoopCond", "e", NULL, NULL);
  CHECK(build(&e, g) == NULL);
  CHECK_STATUS(e.st, TFD_INVALID_ARGUMENT, "has more than one LoopCond node");
  tfd_graph_def_free(g);
  /* A loop back edge whose dtype is not the Merge's. */
  g = tfd_graph_def_new();
  i32(g, "x", 1);
  float one = 1;
  tg_const(g, "f1", TFD_FLOAT32, NULL, 0, &one);
  enter(g, "in", "x", "f", false, 1);
  enter(g, "fin", "f1", "f", true, 1);
  tg_node(g, "m", "Merge", "in", "next", NULL);
  tg_node(g, "next", "NextIteration", "fin", NULL, NULL);
  CHECK(build(&e, g) == NULL);
  CHECK_STATUS(e.st, TFD_INVALID_ARGUMENT, "node 'm' (Merge): input 1 is float32 (from NextIteration 'next') but T is int32");
  tfd_graph_def_free(g);
  env_free(&e);
}

/* An Exit fed from the LoopCond, not the Switch, fires in every iteration into the same parent
 * iteration: its consumers would get a second value (or trigger) each time. The step fails naming
 * it, and nothing leaks (the fuzzer found the leak the overwritten input used to be). */
static void test_exit_firing_twice(void) {
  env e = env_new();
  for (int control = 0; control < 2; control++) {
    for (int limit = 0; limit <= 3; limit += 3) {
      tfd_graph_def *g = tfd_graph_def_new();
      i32(g, "zero", 0);
      i32(g, "n", limit);
      i32(g, "one", 1);
      counting_loop(g, "l", "count", "zero", "n", "one", 1);
      tg_node(g, "bad_exit", "Exit", "l_cond", NULL, NULL);
      if (control) tg_node(g, "use", "Identity", "zero", "^bad_exit", NULL);
      else tg_node(g, "use", "LogicalNot", "bad_exit", NULL, NULL);
      fetch(g, "_f", "use", 0);
      fetch(g, "_f2", "l_exit", 1);
      tfd_executor *x = build(&e, g);
      CHECK(x != NULL);
      for (int pool = 0; x && pool < 2; pool++) {
        tfd_tensor *out[2] = {NULL, NULL};
        tfd_code code = run(&e, x, pool, out, 2, NULL);
        if (limit == 0) { /* no iteration: the Exit fires once, which is fine */
          CHECK_INT(code, TFD_OK);
          CHECK_INT(int_of(out[1]), 0);
        } else {
          CHECK_STATUS(e.st, TFD_INVALID_ARGUMENT,
                       control ? "node 'bad_exit' (Exit) fired more than once into one iteration of its consumer 'use' "
                                 "(a control edge): a loop's Exit must be fed from the loop's Switch"
                               : "node 'bad_exit' (Exit) fired more than once into one iteration of its consumer 'use' "
                                 "(input 0)");
        }
        tfd_status_reset(e.st);
        for (int i = 0; i < 2; i++) tfd_tensor_unref(out[i]);
      }
      tfd_executor_free(x);
      tfd_graph_def_free(g);
    }
  }
  env_free(&e);
}

static const tfd_test tests[] = {
    {"a counting loop, inline and on a pool, parallel_iterations 1 and 10", test_counting_loop},
    {"a loop of no iterations", test_zero_iterations},
    {"nested loops", test_nested_loops},
    {"a loop filling a TensorList", test_tensor_list_loop},
    {"Switch and Merge without a loop; dead tensors", test_conditional_and_dead_tensors},
    {"a loop in the branch not taken", test_loop_in_untaken_branch},
    {"an infinite loop times out", test_infinite_loop_times_out},
    {"step stats per iteration", test_stats_per_iteration},
    {"concurrent steps of a loop", test_concurrent_steps},
    {"malformed loops", test_malformed_loops},
    {"an Exit that fires in every iteration fails the step", test_exit_firing_twice},
};
TFD_TEST_MAIN(tests)
