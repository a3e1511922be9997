/* Every public function that reports through a status refuses a caller's mistake in its arguments
 * with INVALID_ARGUMENT naming the function and the argument, before it allocates or touches
 * anything: negative counts, NULL arrays with a non-zero count, NULL items of name and tensor
 * arrays, NULL required pointers (handles, names, out-parameters). Before issue 25 many of these
 * crashed (tfd_session_run with NULL fetch names, tfd_session_extend(s, NULL) read through NULL) or
 * answered RESOURCE_EXHAUSTED (a negative count became a huge allocation).
 *
 * TFDEV_API_ARGS_FORK=1 runs each case in a child process, so that against a runtime that crashes
 * on some of them every case still reports (the line of a crash is printed). */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/testing/harness.h"
#include "tfdev/custom_op.h"
#include "tfdev/ops.h"

static tfd_status *st;
static int fork_mode;

#define CASE(...)                                                                            \
  do {                                                                                       \
    if (!fork_mode) {                                                                        \
      __VA_ARGS__;                                                                           \
      break;                                                                                 \
    }                                                                                        \
    fflush(NULL);                                                                            \
    int before_ = tfd_test_failed_checks;                                                    \
    pid_t p_ = fork();                                                                       \
    if (p_ == 0) {                                                                           \
      alarm(10);                                                                             \
      __VA_ARGS__;                                                                           \
      fflush(NULL);                                                                          \
      _exit(tfd_test_failed_checks != before_);                                              \
    }                                                                                        \
    int ws_ = 0;                                                                             \
    waitpid(p_, &ws_, 0);                                                                    \
    if (WIFSIGNALED(ws_)) {                                                                  \
      fprintf(stderr, "%s:%d: crashed with signal %d\n", __FILE__, __LINE__, WTERMSIG(ws_)); \
      tfd_test_failed_checks++;                                                              \
    } else if (WEXITSTATUS(ws_)) {                                                           \
      tfd_test_failed_checks++;                                                              \
    }                                                                                        \
  } while (0)

/* The status says INVALID_ARGUMENT with `fragment` in its message. */
#define SAYS(fragment)                                                 \
  do {                                                                 \
    CHECK_STR(tfd_code_name(tfd_status_code(st)), "INVALID_ARGUMENT"); \
    CHECK_CONTAINS(tfd_status_message(st), fragment);                  \
    tfd_status_reset(st);                                              \
  } while (0)

/* A call returning a tfd_code. */
#define BAD(fragment, ...)                            \
  CASE({                                              \
    tfd_status_reset(st);                             \
    tfd_code c_ = (__VA_ARGS__);                      \
    CHECK_STR(tfd_code_name(c_), "INVALID_ARGUMENT"); \
    SAYS(fragment);                                   \
  })
/* A call returning a pointer, NULL on error. */
#define BAD_NULL(fragment, ...)   \
  CASE({                          \
    tfd_status_reset(st);         \
    CHECK((__VA_ARGS__) == NULL); \
    SAYS(fragment);               \
  })
/* A call returning a handle, -1 on error. */
#define BAD_NEG(fragment, ...) \
  CASE({                       \
    tfd_status_reset(st);      \
    CHECK((__VA_ARGS__) < 0);  \
    SAYS(fragment);            \
  })

/* x: Placeholder float32, y = Identity(x), in a session. */
static tfd_graph_def *small_graph(void) {
  tfd_graph_def *g = tfd_graph_def_new();
  tfd_node_def *x = tfd_graph_def_add_node(g, "x", "Placeholder", NULL);
  tfd_attr_value f32 = {.type = TFD_ATTR_TYPE, .dtype = TFD_FLOAT32};
  tfd_node_def_set_attr(x, "dtype", &f32, NULL);
  tfd_node_def *y = tfd_graph_def_add_node(g, "y", "Identity", NULL);
  tfd_node_def_add_input(y, "x", NULL);
  tfd_node_def_set_attr(y, "T", &f32, NULL);
  return g;
}

static tfd_session *session_with_graph(void) {
  tfd_session *s = NULL;
  tfd_session_new(NULL, NULL, NULL, &s, st);
  CHECK(s != NULL);
  tfd_graph_def *g = small_graph();
  CHECK_INT(tfd_session_create(s, g, st), TFD_OK);
  tfd_graph_def_free(g);
  return s;
}

static tfd_tensor *scalar(float v) { return tfd_test_tensor(TFD_FLOAT32, NULL, 0, &v, sizeof v, NULL); }

static void test_session_run(void) {
  tfd_session *s = session_with_graph();
  tfd_tensor *x = scalar(2), *out[2] = {NULL, NULL};
  const char *feeds[] = {"x"}, *fetches[] = {"y"}, *null_name[] = {NULL};
  tfd_tensor *null_tensor[] = {NULL};
  /* the cases: negative counts, NULL arrays with counts */
  BAD("tfd_session_run: num_fetches is -1", tfd_session_run(s, NULL, feeds, &x, 1, fetches, -1, NULL, 0, out, NULL, st));
  BAD("tfd_session_run: num_feeds is -1", tfd_session_run(s, NULL, feeds, &x, -1, fetches, 1, NULL, 0, out, NULL, st));
  BAD("tfd_session_run: num_targets is -2", tfd_session_run(s, NULL, NULL, NULL, 0, fetches, 1, NULL, -2, out, NULL, st));
  BAD("tfd_session_run: fetch_names is NULL but num_fetches is 1",
      tfd_session_run(s, NULL, feeds, &x, 1, NULL, 1, NULL, 0, out, NULL, st));
  BAD("tfd_session_run: feed_names is NULL but num_feeds is 1",
      tfd_session_run(s, NULL, NULL, &x, 1, fetches, 1, NULL, 0, out, NULL, st));
  BAD("tfd_session_run: feed_values is NULL but num_feeds is 1",
      tfd_session_run(s, NULL, feeds, NULL, 1, fetches, 1, NULL, 0, out, NULL, st));
  BAD("tfd_session_run: targets is NULL but num_targets is 1",
      tfd_session_run(s, NULL, feeds, &x, 1, fetches, 1, NULL, 1, out, NULL, st));
  BAD("tfd_session_run: outputs is NULL but num_fetches is 1",
      tfd_session_run(s, NULL, feeds, &x, 1, fetches, 1, NULL, 0, NULL, NULL, st));
  BAD("tfd_session_run: fetch_names[0] is NULL",
      tfd_session_run(s, NULL, feeds, &x, 1, null_name, 1, NULL, 0, out, NULL, st));
  BAD("tfd_session_run: feed_names[0] is NULL",
      tfd_session_run(s, NULL, null_name, &x, 1, fetches, 1, NULL, 0, out, NULL, st));
  BAD("tfd_session_run: feed_values[0] is NULL",
      tfd_session_run(s, NULL, feeds, null_tensor, 1, fetches, 1, NULL, 0, out, NULL, st));
  BAD("tfd_session_run: targets[0] is NULL",
      tfd_session_run(s, NULL, feeds, &x, 1, fetches, 1, null_name, 1, out, NULL, st));
  BAD("tfd_session_run: s is NULL", tfd_session_run(NULL, NULL, feeds, &x, 1, fetches, 1, NULL, 0, out, NULL, st));
  CHECK(out[0] == NULL);
  /* async: the same, NULL returned */
  BAD("tfd_session_run_async: num_fetches is -1",
           tfd_session_run_async(s, NULL, feeds, &x, 1, fetches, -1, NULL, 0, NULL, NULL, NULL, &(tfd_run *){NULL}, st));
  BAD("tfd_session_run_async: fetch_names is NULL but num_fetches is 3",
           tfd_session_run_async(s, NULL, feeds, &x, 1, NULL, 3, NULL, 0, NULL, NULL, NULL, &(tfd_run *){NULL}, st));
  BAD("tfd_session_run_async: feed_values[0] is NULL",
           tfd_session_run_async(s, NULL, feeds, null_tensor, 1, fetches, 1, NULL, 0, NULL, NULL, NULL, &(tfd_run *){NULL}, st));
  BAD("tfd_session_run_async: targets[0] is NULL",
           tfd_session_run_async(s, NULL, feeds, &x, 1, fetches, 1, null_name, 1, NULL, NULL, NULL, &(tfd_run *){NULL}, st));
  BAD("tfd_session_run_async: s is NULL",
           tfd_session_run_async(NULL, NULL, feeds, &x, 1, fetches, 1, NULL, 0, NULL, NULL, NULL, &(tfd_run *){NULL}, st));
  /* runs: NULL run handles, and outputs */
  CASE({
    tfd_status_reset(st);
    CHECK(tfd_run_wait(NULL, -1, st));
    SAYS("tfd_run_wait: run is NULL");
  });
  BAD("tfd_run_take_outputs: run is NULL", tfd_run_take_outputs(NULL, out, st));
  { /* not in a child: the run needs the inter-op pool's threads */
    tfd_run *r = NULL;
    tfd_session_run_async(s, NULL, feeds, &x, 1, fetches, 1, NULL, 0, NULL, NULL, NULL, &r, st);
    CHECK(r && tfd_run_wait(r, -1, st));
    tfd_status_reset(st);
    CHECK_INT(tfd_run_take_outputs(r, NULL, st), TFD_INVALID_ARGUMENT);
    SAYS("tfd_run_take_outputs: outputs is NULL but the run has 1 output");
    CHECK_INT(tfd_run_take_outputs(r, out, st), TFD_OK); /* the refusal took nothing */
    tfd_tensor_unref(out[0]);
    out[0] = NULL;
    tfd_run_free(r);
  }
  /* and the session still runs */
  CHECK_INT(tfd_session_run(s, NULL, feeds, &x, 1, fetches, 1, NULL, 0, out, NULL, st), TFD_OK);
  CHECK(out[0] && ((const float *)tfd_tensor_const_data(out[0]))[0] == 2.0f);
  tfd_tensor_unref(out[0]);
  tfd_tensor_unref(x);
  tfd_session_free(s);
}

static void test_session_graph_and_queries(void) {
  tfd_session *s = NULL;
  tfd_session_new(NULL, NULL, NULL, &s, st);
  tfd_graph_def *g = small_graph();
  BAD("tfd_session_create: graph is NULL", tfd_session_create(s, NULL, st));
  BAD("tfd_session_create: s is NULL", tfd_session_create(NULL, g, st));
  CHECK_INT(tfd_session_create(s, g, st), TFD_OK);
  BAD("tfd_session_extend: graph is NULL", tfd_session_extend(s, NULL, st)); /* the case */
  BAD("tfd_session_extend: s is NULL", tfd_session_extend(NULL, g, st));
  char dev[TFD_DEVICE_NAME_MAX];
  tfd_dtype dt;
  BAD("tfd_session_node_device: s is NULL", tfd_session_node_device(NULL, "x", dev, st));
  BAD("tfd_session_node_device: node is NULL", tfd_session_node_device(s, NULL, dev, st));
  BAD("tfd_session_node_device: out is NULL", tfd_session_node_device(s, "x", NULL, st));
  BAD("tfd_session_tensor_dtype: s is NULL", tfd_session_tensor_dtype(NULL, "x", &dt, st));
  BAD("tfd_session_tensor_dtype: tensor is NULL", tfd_session_tensor_dtype(s, NULL, &dt, st));
  BAD("tfd_session_tensor_dtype: out is NULL", tfd_session_tensor_dtype(s, "x", NULL, st));
  const char *none[] = {NULL};
  BAD("tfd_session_reset: n is -1", tfd_session_reset(s, NULL, -1, st));
  BAD("tfd_session_reset: containers is NULL but n is 2", tfd_session_reset(s, NULL, 2, st));
  BAD("tfd_session_reset: containers[0] is NULL", tfd_session_reset(s, none, 1, st));
  BAD("tfd_session_reset: s is NULL", tfd_session_reset(NULL, NULL, 0, st));
  BAD("tfd_session_finalize: s is NULL", tfd_session_finalize(NULL, st));
  BAD("tfd_session_close: s is NULL", tfd_session_close(NULL, st));
  BAD("tfd_session_factory_reset: n is -1", tfd_session_factory_reset(NULL, NULL, NULL, -1, st));
  BAD("tfd_session_factory_reset: containers is NULL but n is 1", tfd_session_factory_reset(NULL, NULL, NULL, 1, st));
  BAD("tfd_session_factory_reset: containers[0] is NULL", tfd_session_factory_reset(NULL, NULL, none, 1, st));
  tfd_runtime *rt = NULL;
  tfd_runtime_new(NULL, &rt, st);
  BAD("tfd_runtime_session_factory_reset: n is -1", tfd_runtime_session_factory_reset(rt, NULL, NULL, -1, st));
  BAD("tfd_runtime_session_factory_reset: containers[0] is NULL", tfd_runtime_session_factory_reset(rt, NULL, none, 1, st));
  BAD("tfd_runtime_session_factory_reset", tfd_runtime_session_factory_reset(NULL, NULL, NULL, 0, st));
  BAD("tfd_runtime_session_new", tfd_runtime_session_new(NULL, NULL, NULL, &(tfd_session *){NULL}, st));
  tfd_runtime_unref(rt);
  CHECK_INT(tfd_session_close(s, st), TFD_OK);
  tfd_graph_def_free(g);
  tfd_session_free(s);
}

static void test_callables_and_partial_runs(void) {
  tfd_session *s = session_with_graph();
  const char *feeds[] = {"x"}, *fetches[] = {"y"}, *null_name[] = {NULL};
  tfd_tensor *x = scalar(3), *null_tensor[] = {NULL}, *out[1] = {NULL};
  BAD_NEG("tfd_session_make_callable: num_feeds is -1", tfd_session_make_callable(s, feeds, -1, fetches, 1, NULL, 0, st));
  BAD_NEG("tfd_session_make_callable: fetch_names is NULL but num_fetches is 1",
          tfd_session_make_callable(s, feeds, 1, NULL, 1, NULL, 0, st));
  BAD_NEG("tfd_session_make_callable: targets[0] is NULL",
          tfd_session_make_callable(s, feeds, 1, fetches, 1, null_name, 1, st));
  BAD_NEG("tfd_session_make_callable: s is NULL", tfd_session_make_callable(NULL, feeds, 1, fetches, 1, NULL, 0, st));
  tfd_callable_options o = {.feeds = feeds, .num_feeds = 1, .fetches = fetches, .num_fetches = -1};
  BAD_NEG("tfd_session_make_callable_with_options: options->num_fetches is -1",
          tfd_session_make_callable_with_options(s, &o, st));
  o.num_fetches = 1;
  o.num_tensor_connections = 1;
  BAD_NEG(
      "tfd_session_make_callable_with_options: options->tensor_connections is NULL but options->num_tensor_connections is 1",
      tfd_session_make_callable_with_options(s, &o, st));
  tfd_tensor_connection conn = {"x:0", NULL};
  o.tensor_connections = &conn;
  BAD_NEG("tfd_session_make_callable_with_options: options->tensor_connections[0].to_tensor is NULL",
          tfd_session_make_callable_with_options(s, &o, st));
  o.num_tensor_connections = 0;
  o.feeds = null_name;
  BAD_NEG("tfd_session_make_callable_with_options: options->feeds[0] is NULL",
          tfd_session_make_callable_with_options(s, &o, st));
  BAD_NEG("tfd_session_make_callable_with_options: options is NULL", tfd_session_make_callable_with_options(s, NULL, st));
  BAD_NEG("tfd_session_make_callable_with_options: s is NULL", tfd_session_make_callable_with_options(NULL, &o, st));
  int64_t h = tfd_session_make_callable(s, feeds, 1, fetches, 1, NULL, 0, st);
  CHECK(h >= 0);
  BAD("tfd_session_run_callable: feed_values is NULL but the callable has 1 feed",
      tfd_session_run_callable(s, h, NULL, NULL, out, NULL, st));
  BAD("tfd_session_run_callable: feed_values[0] is NULL", tfd_session_run_callable(s, h, NULL, null_tensor, out, NULL, st));
  BAD("tfd_session_run_callable: outputs is NULL but the callable has 1 fetch",
      tfd_session_run_callable(s, h, NULL, &x, NULL, NULL, st));
  BAD("tfd_session_run_callable: s is NULL", tfd_session_run_callable(NULL, h, NULL, &x, out, NULL, st));
  BAD("tfd_session_run_callable_async: feed_values[0] is NULL",
           tfd_session_run_callable_async(s, h, NULL, null_tensor, NULL, NULL, NULL, &(tfd_run *){NULL}, st));
  BAD("tfd_session_run_callable_async: s is NULL",
           tfd_session_run_callable_async(NULL, h, NULL, &x, NULL, NULL, NULL, &(tfd_run *){NULL}, st));
  BAD("tfd_session_release_callable: s is NULL", tfd_session_release_callable(NULL, h, st));
  CHECK_INT(tfd_session_run_callable(s, h, NULL, &x, out, NULL, st), TFD_OK);
  tfd_tensor_unref(out[0]);
  out[0] = NULL;
  CHECK_INT(tfd_session_release_callable(s, h, st), TFD_OK);
  /* partial runs */
  BAD_NEG("tfd_session_prun_setup: num_inputs is -1", tfd_session_prun_setup(s, feeds, -1, fetches, 1, NULL, 0, st));
  BAD_NEG("tfd_session_prun_setup: outputs is NULL but num_outputs is 2",
          tfd_session_prun_setup(s, feeds, 1, NULL, 2, NULL, 0, st));
  BAD_NEG("tfd_session_prun_setup: inputs[0] is NULL", tfd_session_prun_setup(s, null_name, 1, fetches, 1, NULL, 0, st));
  BAD_NEG("tfd_session_prun_setup: s is NULL", tfd_session_prun_setup(NULL, feeds, 1, fetches, 1, NULL, 0, st));
  int64_t p = tfd_session_prun_setup(s, feeds, 1, fetches, 1, NULL, 0, st);
  CHECK(p >= 0);
  BAD("tfd_session_prun: num_fetches is -1", tfd_session_prun(s, p, feeds, &x, 1, fetches, -1, out, st));
  BAD("tfd_session_prun: outputs is NULL but num_fetches is 1", tfd_session_prun(s, p, feeds, &x, 1, fetches, 1, NULL, st));
  BAD("tfd_session_prun: feed_values[0] is NULL", tfd_session_prun(s, p, feeds, null_tensor, 1, fetches, 1, out, st));
  BAD("tfd_session_prun: fetch_names[0] is NULL", tfd_session_prun(s, p, feeds, &x, 1, null_name, 1, out, st));
  BAD("tfd_session_prun: s is NULL", tfd_session_prun(NULL, p, feeds, &x, 1, fetches, 1, out, st));
  BAD("tfd_session_prun_close: s is NULL", tfd_session_prun_close(NULL, p, st));
  CHECK_INT(tfd_session_prun(s, p, feeds, &x, 1, fetches, 1, out, st), TFD_OK); /* the refusals left it usable */
  CHECK(out[0] && ((const float *)tfd_tensor_const_data(out[0]))[0] == 3.0f);
  tfd_tensor_unref(out[0]);
  tfd_tensor_unref(x);
  tfd_session_free(s);
}

static void test_eager(void) {
  tfd_session *s = session_with_graph();
  tfd_device *d = tfd_device_mgr_get(tfd_session_device_mgr(s), 0);
  tfd_graph_def *g = small_graph();
  tfd_node_def *id = tfd_graph_def_find(g, "y");
  tfd_tensor *x = scalar(1), *out[4], *null_tensor[] = {NULL};
  int n = 0;
  BAD("tfd_device_run_op: d is NULL", tfd_device_run_op(NULL, id, &x, 1, NULL, out, &n, st));
  BAD("tfd_device_run_op: node is NULL", tfd_device_run_op(d, NULL, &x, 1, NULL, out, &n, st));
  BAD("tfd_device_run_op: num_inputs is -1", tfd_device_run_op(d, id, &x, -1, NULL, out, &n, st));
  BAD("tfd_device_run_op: inputs is NULL but num_inputs is 1", tfd_device_run_op(d, id, NULL, 1, NULL, out, &n, st));
  BAD("tfd_device_run_op: inputs[0] is NULL", tfd_device_run_op(d, id, null_tensor, 1, NULL, out, &n, st));
  BAD("tfd_device_run_op: outputs is NULL", tfd_device_run_op(d, id, &x, 1, NULL, NULL, &n, st));
  BAD("tfd_device_run_op: num_outputs is NULL", tfd_device_run_op(d, id, &x, 1, NULL, out, NULL, st));
  CHECK_INT(tfd_device_run_op(d, id, &x, 1, NULL, out, &n, st), TFD_OK);
  CHECK_INT(n, 1);
  tfd_tensor_unref(out[0]);
  tfd_tensor_unref(x);
  tfd_graph_def_free(g);
  tfd_session_free(s);
}

static void test_tensors_and_allocators(void) {
  int64_t dims[1] = {2};
  float v[2] = {1, 2};
  BAD("tfd_tensor_new: ndims is -1", tfd_tensor_new(NULL, TFD_FLOAT32, dims, -1, &(tfd_tensor *){NULL}, st));
  BAD("tfd_tensor_new: dims is NULL but ndims is 1", tfd_tensor_new(NULL, TFD_FLOAT32, NULL, 1, &(tfd_tensor *){NULL}, st));
  BAD_NULL("tfd_tensor_from_bytes: data is NULL but nbytes is 8",
           tfd_test_tensor(TFD_FLOAT32, dims, 1, NULL, 8, st));
  BAD_NULL("tfd_tensor_from_bytes: dims is NULL but ndims is 1",
           tfd_test_tensor(TFD_FLOAT32, NULL, 1, v, 8, st));
  BAD("tfd_tensor_slice: t is NULL", tfd_tensor_slice(NULL, 0, &(tfd_tensor *){NULL}, st));
  tfd_tensor *t = NULL;
  tfd_tensor_from_bytes(NULL, TFD_FLOAT32, dims, 1, v, sizeof v, &t, st);
  CHECK(t != NULL);
  BAD("tfd_tensor_reshape: t is NULL", tfd_tensor_reshape(NULL, dims, 1, &(tfd_tensor *){NULL}, st));
  BAD("tfd_tensor_reshape: ndims is -1", tfd_tensor_reshape(t, dims, -1, &(tfd_tensor *){NULL}, st));
  BAD("tfd_tensor_reshape: dims is NULL but ndims is 1", tfd_tensor_reshape(t, NULL, 1, &(tfd_tensor *){NULL}, st));
  BAD("tfd_tensor_copy_from: t is NULL", tfd_tensor_copy_from(NULL, t, st));
  BAD("tfd_tensor_copy_from: src is NULL", tfd_tensor_copy_from(t, NULL, st));
  BAD("tfd_tensor_copy_from_bytes: t is NULL", tfd_tensor_copy_from_bytes(NULL, v, sizeof v, st));
  BAD("tfd_tensor_copy_from_bytes: data is NULL but nbytes is 8", tfd_tensor_copy_from_bytes(t, NULL, 8, st));
  BAD("tfd_tensor_fill: t is NULL", tfd_tensor_fill(NULL, v, st));
  BAD("tfd_tensor_fill: element is NULL", tfd_tensor_fill(t, NULL, st));
  tfd_tensor_unref(t);
  BAD("tfd_cpu_allocator_set_limit: a is NULL", tfd_cpu_allocator_set_limit(NULL, 0, st));
  BAD_NULL("tfd_allocator_allocate: a is NULL", tfd_allocator_allocate(NULL, 64, 8, st));
  tfd_allocator *a = tfd_cpu_allocator_new("args", 0);
  BAD_NULL("allocator 'args': alignment 3 is not a power of two",
           tfd_allocator_allocate(a, 3, 8, st)); /* each allocator's own check */
  tfd_allocator_unref(a);
  BAD("tfd_resource_new: type_name is NULL", tfd_resource_new(NULL, NULL, NULL, &(tfd_resource *){NULL}, st));
  BAD("tfd_tensor_resource_new: t is NULL", tfd_tensor_resource_new(NULL, &(tfd_resource *){NULL}, st));
}

static void test_graph_defs(void) {
  tfd_graph_def *g = tfd_graph_def_new();
  tfd_attr_value f32 = {.type = TFD_ATTR_TYPE, .dtype = TFD_FLOAT32};
  BAD_NULL("tfd_graph_def_add_node: g is NULL", tfd_graph_def_add_node(NULL, "a", "NoOp", st));
  BAD_NULL("tfd_graph_def_add_node: name is NULL", tfd_graph_def_add_node(g, NULL, "NoOp", st));
  BAD_NULL("tfd_graph_def_add_node: op is NULL", tfd_graph_def_add_node(g, "a", NULL, st));
  CHECK_INT((int)tfd_graph_def_num_nodes(g), 0);
  tfd_node_def *n = tfd_graph_def_add_node(g, "a", "NoOp", st);
  BAD("tfd_node_def_add_input: n is NULL", tfd_node_def_add_input(NULL, "b", st));
  BAD("tfd_node_def_add_input: input is NULL", tfd_node_def_add_input(n, NULL, st));
  BAD("tfd_node_def_set_device: n is NULL", tfd_node_def_set_device(NULL, "", st));
  BAD("tfd_node_def_set_attr: n is NULL", tfd_node_def_set_attr(NULL, "T", &f32, st));
  BAD("tfd_graph_def_add_signature: g is NULL", tfd_graph_def_add_signature(NULL, false, "k", "a:0", TFD_FLOAT32, NULL, st));
  BAD("tfd_graph_def_parse: data is NULL but size is 4", tfd_graph_def_parse(NULL, 4, &(tfd_graph_def *){NULL}, st));
  void *bytes = NULL;
  size_t size = 0;
  BAD("tfd_graph_def_serialize: g is NULL", tfd_graph_def_serialize(NULL, &bytes, &size, st));
  BAD("tfd_graph_def_serialize: data is NULL", tfd_graph_def_serialize(g, NULL, &size, st));
  BAD("tfd_graph_def_serialize: size is NULL", tfd_graph_def_serialize(g, &bytes, NULL, st));
  char node[16];
  int index = 0;
  BAD("tfd_parse_input: input is NULL", tfd_parse_input(NULL, node, sizeof node, &index, st));
  BAD("tfd_parse_input: node is NULL but node_cap is 16", tfd_parse_input("a:1", NULL, sizeof node, &index, st));
  BAD("tfd_parse_input: index is NULL", tfd_parse_input("a:1", node, sizeof node, NULL, st));
  tfd_graph_def_free(g);
  /* ops */
  tfd_graph_def *h = small_graph();
  tfd_node_def *y = tfd_graph_def_find(h, "y");
  tfd_dtype in_t = TFD_FLOAT32, out_t[2];
  tfd_shape in_s = {.ndims = 0}, out_s[2];
  int nout = 0;
  BAD("tfd_ops_infer: node is NULL", tfd_ops_infer(NULL, 1, &in_t, &in_s, NULL, 2, &nout, out_t, out_s, st));
  BAD("tfd_ops_infer: num_inputs is -1", tfd_ops_infer(y, -1, &in_t, &in_s, NULL, 2, &nout, out_t, out_s, st));
  BAD("tfd_ops_infer: in_types is NULL but num_inputs is 1",
      tfd_ops_infer(y, 1, NULL, &in_s, NULL, 2, &nout, out_t, out_s, st));
  BAD("tfd_ops_infer: in_shapes is NULL but num_inputs is 1",
      tfd_ops_infer(y, 1, &in_t, NULL, NULL, 2, &nout, out_t, out_s, st));
  BAD("tfd_ops_infer: cap is -1", tfd_ops_infer(y, 1, &in_t, &in_s, NULL, -1, &nout, out_t, out_s, st));
  BAD("tfd_ops_infer: out_types is NULL but cap is 2", tfd_ops_infer(y, 1, &in_t, &in_s, NULL, 2, &nout, NULL, out_s, st));
  BAD("tfd_ops_infer: out_shapes is NULL but cap is 2", tfd_ops_infer(y, 1, &in_t, &in_s, NULL, 2, &nout, out_t, NULL, st));
  BAD("tfd_ops_infer: num_outputs is NULL", tfd_ops_infer(y, 1, &in_t, &in_s, NULL, 2, NULL, out_t, out_s, st));
  CHECK_INT(tfd_ops_infer(y, 1, &in_t, &in_s, NULL, 2, &nout, out_t, out_s, st), TFD_OK);
  CHECK_INT(nout, 1);
  tfd_graph_def_free(h);
}

static void test_devices(void) {
  tfd_session *s = session_with_graph();
  tfd_device_mgr *m = tfd_session_device_mgr(s);
  tfd_device *d = tfd_device_mgr_get(m, 0), *null_dev[] = {NULL};
  BAD("tfd_cpu_device_new: config is NULL", tfd_cpu_device_new(NULL, &(tfd_device *){NULL}, st));
  BAD("tfd_renamed_device_new: underlying is NULL", tfd_renamed_device_new(NULL, "/job:a/replica:0/task:0", &(tfd_device *){NULL}, st));
  BAD("tfd_renamed_device_new: new_base is NULL", tfd_renamed_device_new(d, NULL, &(tfd_device *){NULL}, st));
  BAD("tfd_device_sync: d is NULL", tfd_device_sync(NULL, st));
  /* lists, factories, registries */
  tfd_device_list *l = tfd_device_list_new();
  BAD("tfd_device_list_push: l is NULL", tfd_device_list_push(NULL, d, st));
  BAD("tfd_device_list_push: d is NULL", tfd_device_list_push(l, NULL, st));
  BAD("tfd_device_factory_new: ops is NULL", tfd_device_factory_new(NULL, NULL, &(tfd_device_factory *){NULL}, st));
  tfd_device_factory_ops no_create = {.name = "none"};
  BAD("tfd_device_factory_new: ops->create_devices is NULL", tfd_device_factory_new(&no_create, NULL, &(tfd_device_factory *){NULL}, st));
  tfd_device_factory *f = NULL;
  tfd_threadpool_device_factory_new(&f, st);
  BAD("tfd_device_factory_create_devices: f is NULL",
      tfd_device_factory_create_devices(NULL, NULL, NULL, "/job:a/replica:0/task:0", l, st));
  BAD("tfd_device_factory_create_devices: out is NULL",
      tfd_device_factory_create_devices(f, NULL, NULL, "/job:a/replica:0/task:0", NULL, st));
  tfd_factory_registry *r = tfd_factory_registry_new();
  BAD("tfd_factory_registry_register: r is NULL", tfd_factory_registry_register(NULL, "CPU", f, 60, st));
  BAD("tfd_factory_registry_register: device_type is NULL", tfd_factory_registry_register(r, NULL, f, 60, st));
  BAD("tfd_factory_registry_register: f is NULL", tfd_factory_registry_register(r, "CPU", NULL, 60, st));
  BAD("tfd_factory_registry_register_builtin: f is NULL", tfd_factory_registry_register_builtin("ARGS_TEST", NULL, 60, st));
  BAD("tfd_factory_registry_register_builtin: device_type is NULL", tfd_factory_registry_register_builtin(NULL, f, 60, st));
  BAD("tfd_factory_registry_add_devices: r is NULL",
      tfd_factory_registry_add_devices(NULL, NULL, "/job:a/replica:0/task:0", NULL, l, st));
  BAD("tfd_factory_registry_add_devices: out is NULL",
      tfd_factory_registry_add_devices(r, NULL, "/job:a/replica:0/task:0", NULL, NULL, st));
  BAD("tfd_factory_registry_new_device: r is NULL",
           tfd_factory_registry_new_device(NULL, "CPU", NULL, "/job:a/replica:0/task:0", NULL, &(tfd_device *){NULL}, st));
  BAD("tfd_factory_registry_new_device: device_type is NULL",
           tfd_factory_registry_new_device(r, NULL, NULL, "/job:a/replica:0/task:0", NULL, &(tfd_device *){NULL}, st));
  CHECK_INT((int)tfd_device_list_size(l), 0);
  tfd_factory_registry_free(r);
  tfd_device_factory_unref(f);
  tfd_device_list_free(l);
  /* managers and sets */
  BAD("tfd_device_mgr_new: devices is NULL but n is 2", tfd_device_mgr_new(NULL, 2, &(tfd_device_mgr *){NULL}, st));
  BAD("tfd_device_mgr_new: devices[0] is NULL", tfd_device_mgr_new(null_dev, 1, &(tfd_device_mgr *){NULL}, st));
  const char *none[] = {NULL};
  BAD_NULL("tfd_device_mgr_lookup: m is NULL", tfd_device_mgr_lookup(NULL, "CPU:0", st));
  BAD_NULL("tfd_device_mgr_lookup: name is NULL", tfd_device_mgr_lookup(m, NULL, st));
  BAD("tfd_device_mgr_clear_containers: m is NULL", tfd_device_mgr_clear_containers(NULL, NULL, 0, st));
  BAD("tfd_device_mgr_clear_containers: containers is NULL but n is 2", tfd_device_mgr_clear_containers(m, NULL, 2, st));
  BAD("tfd_device_mgr_clear_containers: containers[0] is NULL", tfd_device_mgr_clear_containers(m, none, 1, st));
  tfd_device_set *set = tfd_device_set_new();
  BAD("tfd_device_set_add: s is NULL", tfd_device_set_add(NULL, d, st));
  BAD("tfd_device_set_add: d is NULL", tfd_device_set_add(set, NULL, st));
  BAD("tfd_device_set_set_client_device: s is NULL", tfd_device_set_set_client_device(NULL, d, st));
  BAD("tfd_device_set_set_client_device: d is NULL", tfd_device_set_set_client_device(set, NULL, st));
  tfd_device_set_free(set);
  /* resource managers */
  tfd_resource_mgr *rm = tfd_device_resource_manager(d);
  tfd_resource *res = NULL;
  tfd_resource_new("Thing", NULL, NULL, &res, st);
  BAD("tfd_resource_mgr_create: rm is NULL", tfd_resource_mgr_create(NULL, "", "a", res, st));
  BAD("tfd_resource_mgr_create: name is NULL", tfd_resource_mgr_create(rm, "", NULL, res, st));
  BAD("tfd_resource_mgr_create: r is NULL", tfd_resource_mgr_create(rm, "", "a", NULL, st));
  BAD_NULL("tfd_resource_mgr_lookup: rm is NULL", tfd_resource_mgr_lookup(NULL, "", "Thing", "a", st));
  BAD_NULL("tfd_resource_mgr_lookup: type_name is NULL", tfd_resource_mgr_lookup(rm, "", NULL, "a", st));
  BAD_NULL("tfd_resource_mgr_lookup: name is NULL", tfd_resource_mgr_lookup(rm, "", "Thing", NULL, st));
  BAD("tfd_resource_mgr_delete: rm is NULL", tfd_resource_mgr_delete(NULL, "", "Thing", "a", st));
  BAD("tfd_resource_mgr_delete: type_name is NULL", tfd_resource_mgr_delete(rm, "", NULL, "a", st));
  BAD("tfd_resource_mgr_delete: name is NULL", tfd_resource_mgr_delete(rm, "", "Thing", NULL, st));
  BAD("tfd_resource_mgr_cleanup: rm is NULL", tfd_resource_mgr_cleanup(NULL, "", st));
  tfd_resource_unref(res);
  tfd_session_free(s);
}

static void test_device_names(void) {
  tfd_parsed_name p, q;
  char out[TFD_DEVICE_NAME_MAX], out2[TFD_DEVICE_NAME_MAX];
  bool matches;
  CHECK_INT(tfd_device_name_parse("/job:a/replica:0/task:0/device:CPU:0", &p, st), TFD_OK);
  q = p;
  BAD("tfd_device_name_parse: name is NULL", tfd_device_name_parse(NULL, &p, st));
  BAD("tfd_device_name_parse: out is NULL", tfd_device_name_parse("/cpu:0", NULL, st));
  BAD("tfd_device_name_full: p is NULL", tfd_device_name_full(NULL, out, st));
  BAD("tfd_device_name_full: out is NULL", tfd_device_name_full(&p, NULL, st));
  BAD("tfd_device_name_legacy: p is NULL", tfd_device_name_legacy(NULL, out, st));
  BAD("tfd_device_name_legacy: out is NULL", tfd_device_name_legacy(&p, NULL, st));
  BAD("tfd_device_name_local: p is NULL", tfd_device_name_local(NULL, out, st));
  BAD("tfd_device_name_local: out is NULL", tfd_device_name_local(&p, NULL, st));
  BAD("tfd_device_name_legacy_local: p is NULL", tfd_device_name_legacy_local(NULL, out, st));
  BAD("tfd_device_name_legacy_local: out is NULL", tfd_device_name_legacy_local(&p, NULL, st));
  BAD("tfd_device_name_canonicalize: name is NULL",
      tfd_device_name_canonicalize(NULL, "/job:a/replica:0/task:0/device:CPU:0", out, st));
  BAD("tfd_device_name_canonicalize: basename is NULL", tfd_device_name_canonicalize("/cpu:0", NULL, out, st));
  BAD("tfd_device_name_canonicalize: out is NULL",
      tfd_device_name_canonicalize("/cpu:0", "/job:a/replica:0/task:0/device:CPU:0", NULL, st));
  BAD("tfd_device_name_is_complete_specification: pattern is NULL",
      tfd_device_name_is_complete_specification(NULL, &p, &matches, st));
  BAD("tfd_device_name_is_complete_specification: name is NULL",
      tfd_device_name_is_complete_specification(&p, NULL, &matches, st));
  BAD("tfd_device_name_is_complete_specification: matches is NULL",
      tfd_device_name_is_complete_specification(&p, &p, NULL, st));
  BAD("tfd_device_name_merge: target is NULL", tfd_device_name_merge(NULL, &p, false, st));
  BAD("tfd_device_name_merge: other is NULL", tfd_device_name_merge(&q, NULL, false, st));
  BAD("tfd_device_name_split: name is NULL", tfd_device_name_split(NULL, out, out2, st));
  BAD("tfd_device_name_split: task_out is NULL",
      tfd_device_name_split("/job:a/replica:0/task:0/device:CPU:0", NULL, out2, st));
  BAD("tfd_device_name_split: device_out is NULL",
      tfd_device_name_split("/job:a/replica:0/task:0/device:CPU:0", out, NULL, st));
}

static void noop_compute(void *user, void *state, tfd_kernel_context *ctx) { (void)user, (void)state, (void)ctx; }
static void noop_task(void *arg) { (void)arg; }

static void test_options_ops_and_the_rest(void) {
  tfd_session_options *o = tfd_session_options_new();
  BAD("tfd_session_options_set_device_count: o is NULL", tfd_session_options_set_device_count(NULL, "CPU", 1, st));
  BAD("tfd_session_options_set_device_count: type is NULL", tfd_session_options_set_device_count(o, NULL, 1, st));
  BAD("tfd_session_options_set_build_cost_model_after: o is NULL",
      tfd_session_options_set_build_cost_model_after(NULL, 1, st));
  BAD("tfd_session_options_set_visible_devices: o is NULL", tfd_session_options_set_visible_devices(NULL, "0", st));
  BAD("tfd_session_options_set_gpu_memory_fraction: o is NULL", tfd_session_options_set_gpu_memory_fraction(NULL, 0.5, st));
  BAD("tfd_session_options_set_gpu_max_streams: o is NULL", tfd_session_options_set_gpu_max_streams(NULL, 1, st));
  BAD("tfd_session_options_add_inter_op_pool: o is NULL", tfd_session_options_add_inter_op_pool(NULL, 1, NULL, st));
  tfd_session_options_free(o);
  /* custom ops and kernels: nothing is registered by a refusal */
  BAD("tfd_custom_op_register: op is NULL", tfd_custom_op_register(NULL, st));
  tfd_custom_op op = {.name = NULL, .num_inputs = 1, .num_outputs = 1};
  BAD("tfd_custom_op_register: op->name is NULL", tfd_custom_op_register(&op, st));
  op.name = "ArgsTestOp";
  op.num_inputs = -1;
  BAD("tfd_custom_op_register: op->num_inputs is -1", tfd_custom_op_register(&op, st));
  op.num_inputs = 1;
  op.num_outputs = -1;
  BAD("tfd_custom_op_register: op->num_outputs is -1", tfd_custom_op_register(&op, st));
  op.num_outputs = 1;
  op.num_attrs = -1;
  BAD("tfd_custom_op_register: op->num_attrs is -1", tfd_custom_op_register(&op, st));
  op.num_attrs = 1;
  BAD("tfd_custom_op_register: op->attrs is NULL but op->num_attrs is 1", tfd_custom_op_register(&op, st));
  tfd_custom_attr unnamed = {.name = NULL, .type = TFD_ATTR_INT};
  op.attrs = &unnamed;
  BAD("tfd_custom_op_register: op->attrs[0].name is NULL", tfd_custom_op_register(&op, st));
  CHECK(!tfd_ops_exists("ArgsTestOp"));
  BAD("tfd_custom_kernel_register: kernel is NULL", tfd_custom_kernel_register(NULL, st));
  tfd_custom_kernel k = {.op = NULL, .device_type = "CPU", .compute = noop_compute};
  BAD("tfd_custom_kernel_register: kernel->op is NULL", tfd_custom_kernel_register(&k, st));
  k.op = "Identity";
  k.device_type = NULL;
  BAD("tfd_custom_kernel_register: kernel->device_type is NULL", tfd_custom_kernel_register(&k, st));
  CHECK_INT(tfd_kernel_context_set_output(NULL, 0, NULL), TFD_INVALID_ARGUMENT); /* no status to say it in */
  BAD("tfd_kernel_register_transfers", tfd_kernel_register_transfers(NULL, st));
  BAD("tfd_plugin_load", tfd_plugin_load(NULL, st));
  /* thread pools, backends */
  tfd_threadpool *pool = NULL;
  tfd_threadpool_new("args", 1, &pool, st);
  BAD("tfd_threadpool_schedule: pool is NULL", tfd_threadpool_schedule(NULL, noop_task, NULL, st));
  BAD("tfd_threadpool_schedule: fn is NULL", tfd_threadpool_schedule(pool, NULL, NULL, st));
  tfd_threadpool_free(pool);
  BAD("tfd_backend_load: name is NULL", tfd_backend_load(NULL, NULL, st));
  tfd_factory_registry *r = tfd_factory_registry_new();
  BAD("tfd_backend_register_factories: name is NULL", tfd_backend_register_factories(NULL, r, st));
  BAD("tfd_backend_register_factories: r is NULL", tfd_backend_register_factories("cuda", NULL, st));
  tfd_factory_registry_free(r);
}

/* Handle-making calls: a NULL out is INVALID_ARGUMENT naming it, and a call that fails leaves *out NULL
 * whatever it held (so a caller that checks the handle and one that checks the code agree). */
static void test_handle_making_calls(void) {
  static const char json[] = "{\"format\": \"graph-model\"}";
  BAD("tfd_session_new: out is NULL", tfd_session_new(NULL, NULL, NULL, NULL, st));
  BAD("tfd_session_new_named: out is NULL", tfd_session_new_named(NULL, NULL, NULL, NULL, NULL, st));
  BAD("tfd_runtime_new: out is NULL", tfd_runtime_new(NULL, NULL, st));
  BAD("tfd_runtime_session_new: out is NULL", tfd_runtime_session_new(NULL, NULL, NULL, NULL, st));
  BAD("tfd_model_load: out is NULL", tfd_model_load("x", NULL, NULL, st));
  BAD("tfd_model_new: out is NULL", tfd_model_new(NULL, NULL, NULL, st));
  BAD("tfd_graph_def_parse: out is NULL", tfd_graph_def_parse(json, sizeof json - 1, NULL, st));
  BAD("tfd_graph_def_load: out is NULL", tfd_graph_def_load("x", NULL, st));
  BAD("tfd_graph_def_parse_with_options: out is NULL", tfd_graph_def_parse_with_options(json, 1, NULL, NULL, st));
  BAD("tfd_graph_def_load_with_options: out is NULL", tfd_graph_def_load_with_options("x", NULL, NULL, st));
  BAD("tfd_threadpool_new: out is NULL", tfd_threadpool_new("p", 1, NULL, st));
  BAD("tfd_device_mgr_new: out is NULL", tfd_device_mgr_new(NULL, 0, NULL, st));
  /* A failure stores NULL over what *out held; the code comes back with no status given too. */
  tfd_threadpool *pool = (tfd_threadpool *)&pool;
  CHECK_INT(tfd_threadpool_new("big", TFD_MAX_THREADS + 1, &pool, NULL), TFD_INVALID_ARGUMENT);
  CHECK(pool == NULL);
  tfd_session *s = (tfd_session *)&s;
  CHECK_INT(tfd_session_new_named("NO_SUCH_FACTORY", NULL, NULL, NULL, &s, st), TFD_NOT_FOUND);
  CHECK(s == NULL);
  CHECK_STATUS(st, TFD_NOT_FOUND, "no session factory named 'NO_SUCH_FACTORY'");
  /* And a success leaves the status OK, whatever it held. */
  tfd_status_setf(st, TFD_INTERNAL, "stale");
  CHECK_INT(tfd_session_new_named("DIRECT_SESSION", NULL, NULL, NULL, &s, st), TFD_OK);
  CHECK(s != NULL && tfd_status_code(st) == TFD_OK);
  tfd_session_free(s);
}

static const tfd_test tests[] = {
    {"handle_making_calls", test_handle_making_calls},
    {"session_run", test_session_run},
    {"session_graph_and_queries", test_session_graph_and_queries},
    {"callables_and_partial_runs", test_callables_and_partial_runs},
    {"eager", test_eager},
    {"tensors_and_allocators", test_tensors_and_allocators},
    {"graph_defs", test_graph_defs},
    {"devices", test_devices},
    {"device_names", test_device_names},
    {"options_ops_and_the_rest", test_options_ops_and_the_rest},
};

static int run_tests(void);
int main(void) {
  fork_mode = getenv("TFDEV_API_ARGS_FORK") && atoi(getenv("TFDEV_API_ARGS_FORK"));
  st = tfd_status_new();
  int rc = run_tests();
  tfd_status_free(st);
  return rc;
}
TFD_TEST_RUN_ALL(tests, static int run_tests)
