/* Unit tests for DirectSession: create, run, feeds and fetches, errors, partitioning, caching, callables. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/testing/graph_builder.h"
#include "runtime/testing/harness.h"

/* y = x @ w + b, relu */
static tfd_graph_def *mlp_graph(void) {
  tfd_graph_def *g = tfd_graph_def_new();
  tg_set_type(tg_node(g, "x", "Placeholder", NULL, NULL, NULL), "dtype", TFD_FLOAT32);
  float w[] = {1, 2, 3, 4}, b[] = {-10, 1};
  int64_t d22[] = {2, 2}, d2[] = {2};
  tg_set_tensor(tg_node(g, "w", "Const", NULL, NULL, NULL), "value", tg_f32(w, d22, 2));
  tg_set_tensor(tg_node(g, "b", "Const", NULL, NULL, NULL), "value", tg_f32(b, d2, 1));
  tg_node(g, "mm", "MatMul", "x", "w", NULL);
  tg_node(g, "add", "BiasAdd", "mm", "b", NULL);
  tg_node(g, "y", "Relu", "add", NULL, NULL);
  return g;
}

static void test_run_mlp(void) {
  tfd_status *st = tfd_status_new();
  tfd_session *s = NULL;
  tfd_session_new(NULL, NULL, NULL, &s, st);
  CHECK(s != NULL);
  tfd_graph_def *g = mlp_graph();
  CHECK_INT(tfd_session_create(s, g, st), TFD_OK);
  CHECK_STR(tfd_status_message(st), "");
  float xv[] = {1, 1, 2, 0};
  int64_t d22[] = {2, 2};
  tfd_tensor *x = tg_f32(xv, d22, 2);
  const char *feeds[] = {"x"}, *fetches[] = {"y", "mm:0"};
  tfd_tensor *out[2] = {0};
  CHECK_INT(tfd_session_run(s, NULL, feeds, &x, 1, fetches, 2, NULL, 0, out, NULL, st), TFD_OK);
  CHECK_STR(tfd_status_message(st), "");
  if (out[0]) {
    const float *y = tfd_tensor_const_data(out[0]);
    /* mm = [[4,6],[2,4]]; +b = [[-6,7],[-8,5]]; relu = [[0,7],[0,5]] */
    CHECK(y[0] == 0 && y[1] == 7 && y[2] == 0 && y[3] == 5);
    const float *mm = tfd_tensor_const_data(out[1]);
    CHECK(mm[0] == 4 && mm[1] == 6 && mm[2] == 2 && mm[3] == 4);
  }
  tfd_tensor_unref(out[0]);
  tfd_tensor_unref(out[1]);
  CHECK_INT(tfd_session_num_executors_built(s), 1);
  const char *swapped[] = {"mm", "y:0"};
  CHECK_INT(tfd_session_run(s, NULL, feeds, &x, 1, swapped, 2, NULL, 0, out, NULL, st), TFD_OK);
  CHECK_INT(tfd_session_num_executors_built(s), 1); /* same signature once sorted */
  tfd_tensor_unref(out[0]);
  tfd_tensor_unref(out[1]);
  /* Missing feed: the placeholder says so. */
  CHECK_INT(tfd_session_run(s, NULL, NULL, NULL, 0, fetches, 1, NULL, 0, out, NULL, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "You must feed a value for placeholder tensor 'x'");
  const char *bad[] = {"nope:0"};
  CHECK_INT(tfd_session_run(s, NULL, feeds, &x, 1, bad, 1, NULL, 0, out, NULL, st), TFD_NOT_FOUND);
  CHECK_STATUS(st, TFD_NOT_FOUND, "fetch 'nope:0'");
  const char *bad_index[] = {"y:3"};
  CHECK_INT(tfd_session_run(s, NULL, feeds, &x, 1, bad_index, 1, NULL, 0, out, NULL, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "has 1 output");
  tfd_tensor_unref(x);
  tfd_graph_def_free(g);
  tfd_session_free(s);
  tfd_status_free(st);
}

static void test_graph_errors(void) {
  tfd_status *st = tfd_status_new();
  tfd_session *s = NULL;
  tfd_session_new(NULL, NULL, NULL, &s, st);
  tfd_graph_def *g = tfd_graph_def_new();
  tg_node(g, "a", "Frobnicate", NULL, NULL, NULL);
  CHECK_INT(tfd_session_create(s, g, st), TFD_NOT_FOUND);
  CHECK_STATUS(st, TFD_NOT_FOUND, "node 'a': op type not registered 'Frobnicate'");
  tfd_graph_def_free(g);
  g = tfd_graph_def_new();
  tg_node(g, "a", "Identity", "b", NULL, NULL);
  tg_node(g, "b", "Identity", "a", NULL, NULL);
  CHECK_INT(tfd_session_create(s, g, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "graph has a cycle through 2 nodes: 'a', 'b'");
  tfd_graph_def_free(g);
  g = tfd_graph_def_new();
  tg_set_type(tg_node(g, "p", "Placeholder", NULL, NULL, NULL), "dtype", TFD_FLOAT32);
  tg_set_type(tg_node(g, "q", "Placeholder", NULL, NULL, NULL), "dtype", TFD_INT32);
  tg_node(g, "sum", "Add", "p", "q", NULL);
  CHECK_INT(tfd_session_create(s, g, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "node 'sum' (Add): input 0 is float32 but input 1 is int32");
  tfd_graph_def_free(g);
  g = tfd_graph_def_new();
  tg_node(g, "m", "MatMul", "x", NULL, NULL);
  tg_set_type(tg_node(g, "x", "Placeholder", NULL, NULL, NULL), "dtype", TFD_FLOAT32);
  CHECK_INT(tfd_session_create(s, g, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "node 'm' (MatMul) takes 2 inputs, got 1");
  tfd_graph_def_free(g);
  g = tfd_graph_def_new();
  tg_node(g, "dup", "NoOp", NULL, NULL, NULL);
  tg_node(g, "dup", "NoOp", NULL, NULL, NULL);
  CHECK_INT(tfd_session_create(s, g, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "duplicate node name 'dup'");
  tfd_graph_def_free(g);
  tfd_session_free(s);
  tfd_status_free(st);
}

static void test_two_cpus_partition(void) {
  tfd_status *st = tfd_status_new();
  tfd_session_options *o = tfd_session_options_new();
  tfd_session_options_set_device_count(o, "CPU", 2, st);
  tfd_session *s = NULL;
  tfd_session_new(o, NULL, NULL, &s, st);
  tfd_graph_def *g = mlp_graph();
  tfd_node_def_set_device(tfd_graph_def_find(g, "mm"), "/device:CPU:1", st);
  tfd_node_def_set_device(tfd_graph_def_find(g, "y"), "/cpu:0", st);
  tfd_node_def_add_input(tfd_graph_def_find(g, "y"), "^mm", st);
  CHECK_INT(tfd_session_create(s, g, st), TFD_OK);
  float xv[] = {1, 1, 2, 0};
  int64_t d22[] = {2, 2};
  tfd_tensor *x = tg_f32(xv, d22, 2);
  const char *feeds[] = {"x"}, *fetches[] = {"y"};
  tfd_tensor *out = NULL;
  tfd_run_options ro = {.trace = true, .output_partition_graphs = true};
  tfd_run_metadata *meta = tfd_run_metadata_new();
  CHECK_INT(tfd_session_run(s, &ro, feeds, &x, 1, fetches, 1, NULL, 0, &out, meta, st), TFD_OK);
  CHECK_STR(tfd_status_message(st), "");
  if (out) {
    const float *y = tfd_tensor_const_data(out);
    CHECK(y[0] == 0 && y[1] == 7 && y[2] == 0 && y[3] == 5);
  }
  tfd_tensor_unref(out);
  CHECK_INT(tfd_run_metadata_num_partition_graphs(meta), 2);
  CHECK_INT(tfd_run_metadata_num_devices(meta), 2);
  int sends = 0, recvs = 0;
  for (int p = 0; p < tfd_run_metadata_num_partition_graphs(meta); p++) {
    const tfd_graph_def *pg = tfd_run_metadata_partition_graph(meta, p);
    for (size_t i = 0; i < tfd_graph_def_num_nodes(pg); i++) {
      sends += strcmp(tfd_node_def_op(tfd_graph_def_node(pg, i)), "_Send") == 0;
      recvs += strcmp(tfd_node_def_op(tfd_graph_def_node(pg, i)), "_Recv") == 0;
    }
  }
  CHECK(sends >= 2 && sends == recvs);
  char dev[TFD_DEVICE_NAME_MAX];
  CHECK_INT(tfd_session_node_device(s, "mm", dev, st), TFD_OK);
  CHECK_STR(dev, "/job:localhost/replica:0/task:0/device:CPU:1");
  /* TensorFlow's TestHeuristicGeneratorFollowsSingleConsumer: the weights (a Const, no inputs, one
   * output) go where their only consumer is. */
  tfd_session_node_device(s, "w", dev, st);
  CHECK_STR(dev, "/job:localhost/replica:0/task:0/device:CPU:1");
  tfd_run_metadata_free(meta);
  tfd_tensor_unref(x);
  tfd_graph_def_free(g);
  tfd_session_free(s);
  tfd_session_options_free(o);
  tfd_status_free(st);
}

static void test_callable_and_close(void) {
  tfd_status *st = tfd_status_new();
  tfd_session *s = NULL;
  tfd_session_new(NULL, NULL, NULL, &s, st);
  tfd_graph_def *g = mlp_graph();
  tfd_session_create(s, g, st);
  const char *feeds[] = {"x"}, *fetches[] = {"y"};
  int64_t h = tfd_session_make_callable(s, feeds, 1, fetches, 1, NULL, 0, st);
  CHECK(h >= 0);
  float xv[] = {0, 1, 1, 0};
  int64_t d22[] = {2, 2};
  tfd_tensor *x = tg_f32(xv, d22, 2), *out = NULL;
  for (int i = 0; i < 50; i++) {
    CHECK_INT(tfd_session_run_callable(s, h, NULL, &x, &out, NULL, st), TFD_OK);
    tfd_tensor_unref(out);
  }
  CHECK_INT(tfd_session_num_executors_built(s), 1);
  CHECK_INT(tfd_session_release_callable(s, h, st), TFD_OK);
  CHECK_INT(tfd_session_run_callable(s, h, NULL, &x, &out, NULL, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "No such callable handle");
  tfd_session_close(s, st);
  CHECK_INT(tfd_session_run(s, NULL, feeds, &x, 1, fetches, 1, NULL, 0, &out, NULL, st), TFD_CANCELLED);
  CHECK_STATUS(st, TFD_CANCELLED, "Session has been closed.");
  tfd_tensor_unref(x);
  tfd_graph_def_free(g);
  tfd_session_free(s);
  tfd_status_free(st);
}

/* Several host threads run one two-device session at once; every result must be right. */
typedef struct runner_arg {
  tfd_session *s;
  int id, bad;
} runner_arg;

static void *runner(void *p) {
  runner_arg *a = p;
  tfd_status *st = tfd_status_new();
  int64_t d22[] = {2, 2};
  const char *feeds[] = {"x"}, *fetches[] = {"y", "mm"};
  for (int i = 0; i < 150; i++) {
    float v = (float)(a->id * 1000 + i);
    float xv[] = {v, 0, 0, 1}; /* mm = [[v, 2v], [3, 4]]; y = relu(mm + [-10, 1]) */
    tfd_tensor *x = tg_f32(xv, d22, 2), *out[2] = {0};
    if (tfd_session_run(a->s, NULL, feeds, &x, 1, fetches, 2, NULL, 0, out, NULL, st) != TFD_OK) {
      a->bad++;
    } else {
      const float *y = tfd_tensor_const_data(out[0]);
      float want0 = v - 10 > 0 ? v - 10 : 0;
      if (y[0] != want0 || y[1] != 2 * v + 1 || y[2] != 0 || y[3] != 5) a->bad++;
    }
    tfd_tensor_unref(x);
    tfd_tensor_unref(out[0]);
    tfd_tensor_unref(out[1]);
  }
  tfd_status_free(st);
  return NULL;
}

static void test_concurrent_runs(void) {
  tfd_status *st = tfd_status_new();
  tfd_session_options *o = tfd_session_options_new();
  tfd_session_options_set_device_count(o, "CPU", 2, st);
  tfd_session_options_set_inter_op_threads(o, 2);
  tfd_session *s = NULL;
  tfd_session_new(o, NULL, NULL, &s, st);
  tfd_graph_def *g = mlp_graph();
  tfd_node_def_set_device(tfd_graph_def_find(g, "mm"), "/device:CPU:1", st);
  CHECK_INT(tfd_session_create(s, g, st), TFD_OK);
  pthread_t th[4];
  runner_arg args[4];
  for (int i = 0; i < 4; i++) {
    args[i] = (runner_arg){s, i, 0};
    pthread_create(&th[i], NULL, runner, &args[i]);
  }
  int bad = 0;
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    bad += args[i].bad;
  }
  CHECK_INT(bad, 0);
  CHECK_INT(tfd_session_num_executors_built(s), 1); /* racing builders kept one */
  tfd_graph_def_free(g);
  tfd_session_free(s);
  tfd_session_options_free(o);
  tfd_status_free(st);
}

/* A dequeue blocked on an empty queue; close() from another thread cancels it. */
typedef struct blocked_arg {
  tfd_session *s;
  tfd_code code;
  char msg[256];
} blocked_arg;

static void *run_blocked(void *p) {
  blocked_arg *a = p;
  tfd_status *st = tfd_status_new();
  const char *fetch[] = {"dq"};
  tfd_tensor *out = NULL;
  a->code = tfd_session_run(a->s, NULL, NULL, NULL, 0, fetch, 1, NULL, 0, &out, NULL, st);
  snprintf(a->msg, sizeof a->msg, "%s", tfd_status_message(st));
  tfd_tensor_unref(out);
  tfd_status_free(st);
  return NULL;
}

static tfd_graph_def *queue_graph(void) {
  tfd_graph_def *g = tfd_graph_def_new();
  tfd_dtype types[] = {TFD_FLOAT32};
  tfd_attr_value ct = {.type = TFD_ATTR_LIST_TYPE, .list_len = 1, .list_type = types};
  tfd_node_def_set_attr(tg_node(g, "q", "FIFOQueueV2", NULL, NULL, NULL), "component_types", &ct, NULL);
  tfd_node_def_set_attr(tg_node(g, "dq", "QueueDequeueV2", "q", NULL, NULL), "component_types", &ct, NULL);
  return g;
}

static void test_close_cancels_blocked_dequeue(void) {
  tfd_status *st = tfd_status_new();
  tfd_session *s = NULL;
  tfd_session_new(NULL, NULL, NULL, &s, st);
  tfd_graph_def *g = queue_graph();
  CHECK_INT(tfd_session_create(s, g, st), TFD_OK);
  blocked_arg a = {s, TFD_OK, ""};
  pthread_t t;
  pthread_create(&t, NULL, run_blocked, &a);
  struct timespec nap = {0, 50 * 1000000};
  nanosleep(&nap, NULL);
  CHECK_INT(tfd_session_close(s, st), TFD_OK); /* returns once the blocked run has ended */
  pthread_join(t, NULL);
  CHECK_INT(a.code, TFD_CANCELLED);
  CHECK_CONTAINS(a.msg, "Session has been closed.");
  blocked_arg again = {s, TFD_OK, ""};
  run_blocked(&again);
  CHECK_INT(again.code, TFD_CANCELLED);
  tfd_graph_def_free(g);
  tfd_session_free(s);
  tfd_status_free(st);
}

/* Closing the queue wakes a dequeue already waiting on it with OUT_OF_RANGE. */
static void test_queue_close_wakes_blocked_dequeue(void) {
  tfd_status *st = tfd_status_new();
  tfd_session *s = NULL;
  tfd_session_new(NULL, NULL, NULL, &s, st);
  tfd_graph_def *g = queue_graph();
  tg_node(g, "close", "QueueCloseV2", "q", NULL, NULL);
  CHECK_INT(tfd_session_create(s, g, st), TFD_OK);
  blocked_arg a = {s, TFD_OK, ""};
  pthread_t t;
  pthread_create(&t, NULL, run_blocked, &a);
  struct timespec nap = {0, 50 * 1000000};
  nanosleep(&nap, NULL);
  const char *target[] = {"close"};
  CHECK_INT(tfd_session_run(s, NULL, NULL, NULL, 0, NULL, 0, target, 1, NULL, NULL, st), TFD_OK);
  pthread_join(t, NULL);
  CHECK_INT(a.code, TFD_OUT_OF_RANGE);
  CHECK_CONTAINS(a.msg, "FIFOQueue 'q' is closed and has insufficient elements");
  tfd_graph_def_free(g);
  tfd_session_free(s);
  tfd_status_free(st);
}

/* An error on one device ends the step: the other partition's _Recv is aborted, not left waiting. */
static void test_partition_error_aborts_the_other(void) {
  tfd_status *st = tfd_status_new();
  tfd_session_options *o = tfd_session_options_new();
  tfd_session_options_set_device_count(o, "CPU", 2, st);
  tfd_session *s = NULL;
  tfd_session_new(o, NULL, NULL, &s, st);
  tfd_graph_def *g = tfd_graph_def_new();
  tfd_node_def *x = tg_node(g, "x", "Placeholder", NULL, NULL, NULL);
  tg_set_type(x, "dtype", TFD_FLOAT32);
  tfd_node_def_set_device(x, "/device:CPU:1", st);
  tfd_node_def_set_device(tg_node(g, "y", "Neg", "x", NULL, NULL), "/device:CPU:0", st);
  CHECK_INT(tfd_session_create(s, g, st), TFD_OK);
  const char *fetch[] = {"y"};
  tfd_tensor *out = NULL;
  tfd_run_options ro = {.timeout_ms = 10000}; /* a hang would show as DEADLINE_EXCEEDED */
  CHECK_INT(tfd_session_run(s, &ro, NULL, NULL, 0, fetch, 1, NULL, 0, &out, NULL, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "You must feed a value for placeholder tensor 'x'");
  tfd_graph_def_free(g);
  tfd_session_free(s);
  tfd_session_options_free(o);
  tfd_status_free(st);
}

/* A wide graph on a pool of 3: x feeds 150 independent AddV2 nodes (made ready at once, more than
 * the executor hands out in one batch, most of them to the pool), summed back pairwise to one; a
 * Const feeds every node of the first level. Run many times through one callable (the step's memory
 * is reused), from two threads at once. */
typedef struct wide_arg {
  tfd_session *s;
  int64_t h;
  int bad;
} wide_arg;

static void *run_wide(void *p) {
  wide_arg *a = p;
  tfd_status *st = tfd_status_new();
  float xv = 1.0f;
  tfd_tensor *x = tg_f32(&xv, NULL, 0);
  for (int i = 0; i < 60; i++) {
    tfd_tensor *out = NULL;
    if (tfd_session_run_callable(a->s, a->h, NULL, &x, &out, NULL, st) != TFD_OK ||
        *(const float *)tfd_tensor_const_data(out) != 150 * 3.0f)
      a->bad++;
    tfd_tensor_unref(out);
  }
  tfd_tensor_unref(x);
  tfd_status_free(st);
  return NULL;
}

static void test_wide_fan_out_and_in(void) {
  enum { WIDTH = 150 };
  tfd_status *st = tfd_status_new();
  tfd_graph_def *g = tfd_graph_def_new();
  tg_set_type(tg_node(g, "x", "Placeholder", NULL, NULL, NULL), "dtype", TFD_FLOAT32);
  float one = 1.0f;
  tg_set_tensor(tg_node(g, "c", "Const", NULL, NULL, NULL), "value", tg_f32(&one, NULL, 0)); /* takes the tensor */
  char names[3 * WIDTH][32], a[32]; /* 150 + 75 + 38 + 19 + 10 + 5 + 3 + 2 + 1 names */
  int n = 0;
  for (int i = 0; i < WIDTH; i++) { /* x + x + c = 3 each */
    snprintf(names[n], sizeof names[n], "w%d", i);
    snprintf(a, sizeof a, "d%d", i);
    tg_node(g, a, "AddV2", "x", "x", NULL);
    tg_node(g, names[n++], "AddV2", a, "c", NULL);
  }
  int level = 0, first = 0;
  while (n - first > 1) { /* pairwise sums; an odd one out passes to the next level */
    int end = n;
    for (int i = first; i + 1 < end; i += 2) {
      snprintf(names[n], sizeof names[n], "s%d_%d", level, i);
      tg_node(g, names[n], "AddV2", names[i], names[i + 1], NULL);
      n++;
    }
    if ((end - first) % 2) {
      snprintf(names[n], sizeof names[n], "p%d", level);
      tg_node(g, names[n], "Identity", names[end - 1], NULL, NULL);
      n++;
    }
    first = end;
    level++;
  }
  tfd_session_options *o = tfd_session_options_new();
  tfd_session_options_set_inter_op_threads(o, 3);
  tfd_session_options_set_use_per_session_threads(o, true);
  tfd_session *s = NULL;
  tfd_session_new(o, NULL, NULL, &s, st);
  CHECK_INT(tfd_session_create(s, g, st), TFD_OK);
  const char *feed = "x", *fetch = names[n - 1];
  int64_t h = tfd_session_make_callable(s, &feed, 1, &fetch, 1, NULL, 0, st);
  CHECK(h >= 0);
  wide_arg args[2] = {{s, h, 0}, {s, h, 0}};
  pthread_t th;
  pthread_create(&th, NULL, run_wide, &args[0]);
  run_wide(&args[1]);
  pthread_join(th, NULL);
  CHECK_INT(args[0].bad + args[1].bad, 0);
  tfd_session_free(s);
  tfd_session_options_free(o);
  tfd_graph_def_free(g);
  tfd_status_free(st);
}

/* A step with no kernel that waits gets no cancellation: its timeout is told by the wait itself.
 * x feeds a short branch (run first, on this thread) and a long one (handed to the pool), so the
 * caller waits for the long one while the deadline passes. */
static void test_timeout_of_a_step_that_cannot_wait(void) {
  tfd_status *st = tfd_status_new();
  tfd_graph_def *g = tfd_graph_def_new();
  tg_set_type(tg_node(g, "x", "Placeholder", NULL, NULL, NULL), "dtype", TFD_FLOAT32);
  tg_node(g, "a", "MatMul", "x", "x", NULL);
  char prev[16] = "x", name[16];
  for (int i = 0; i < 16; i++) {
    snprintf(name, sizeof name, "b%d", i);
    tg_node(g, name, "MatMul", prev, "x", NULL);
    memcpy(prev, name, sizeof prev);
  }
  tfd_session_options *o = tfd_session_options_new();
  tfd_session_options_set_inter_op_threads(o, 2);
  tfd_session_options_set_use_per_session_threads(o, true);
  tfd_session *s = NULL;
  tfd_session_new(o, NULL, NULL, &s, st);
  CHECK_INT(tfd_session_create(s, g, st), TFD_OK);
  int64_t dims[] = {256, 256};
  tfd_tensor *x = NULL, *out[2] = {NULL, NULL};
  tfd_tensor_new(NULL, TFD_FLOAT32, dims, 2, &x, st);
  memset(tfd_tensor_data(x), 0, tfd_tensor_byte_size(x));
  const char *feed = "x", *fetches[] = {"a", "b15"};
  tfd_run_options ro = {.timeout_ms = 1}; /* sixteen 256x256 products take longer */
  CHECK_INT(tfd_session_run(s, &ro, &feed, &x, 1, fetches, 2, NULL, 0, out, NULL, st), TFD_DEADLINE_EXCEEDED);
  CHECK_STATUS(st, TFD_DEADLINE_EXCEEDED, "Timed out waiting for the step (1 ms)");
  CHECK(out[0] == NULL && out[1] == NULL);
  CHECK_INT(tfd_session_run(s, NULL, &feed, &x, 1, fetches, 2, NULL, 0, out, NULL, st), TFD_OK);
  CHECK(out[1] && ((const float *)tfd_tensor_const_data(out[1]))[0] == 0.0f);
  tfd_tensor_unref(out[0]);
  tfd_tensor_unref(out[1]);
  tfd_tensor_unref(x);
  tfd_session_free(s);
  tfd_session_options_free(o);
  tfd_graph_def_free(g);
  tfd_status_free(st);
}

static const tfd_test tests[] = {
    {"close cancels a blocked dequeue", test_close_cancels_blocked_dequeue},
    {"closing the queue wakes a blocked dequeue", test_queue_close_wakes_blocked_dequeue},
    {"an error in one partition aborts the other", test_partition_error_aborts_the_other},
    {"concurrent runs from several threads", test_concurrent_runs},
    {"run an MLP", test_run_mlp},
    {"graph errors", test_graph_errors},
    {"two CPUs: partitions with send/recv", test_two_cpus_partition},
    {"callables and close", test_callable_and_close},
    {"wide fan-out and fan-in on a pool", test_wide_fan_out_and_in},
    {"the timeout of a step that cannot wait", test_timeout_of_a_step_that_cannot_wait},
};
TFD_TEST_MAIN(tests)
