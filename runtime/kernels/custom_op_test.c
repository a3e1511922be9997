/* Custom ops, kernels and plug-ins through the public API (tfdev/custom_op.h): registration rules and
 * errors, values through sessions, kernels that run on the thread that started the step, and the
 * plug-in loader (the test plug-ins are built beside this test; TFDEV_TEST_PLUGIN names them). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/testing/graph_builder.h"
#include "runtime/testing/harness.h"
#include "tfdev/custom_op.h"

static void placeholder(tfd_graph_def *g, const char *name) {
  tfd_attr_value dt = {.type = TFD_ATTR_TYPE, .dtype = TFD_FLOAT32};
  tfd_node_def_set_attr(tg_node(g, name, "Placeholder", NULL, NULL, NULL), "dtype", &dt, NULL);
}

/* Runs fetch of g with x fed; returns the fetched tensor or NULL (status in st). */
static tfd_tensor *run1(tfd_session *s, const char *fetch, const float *x, int64_t n, tfd_status *st) {
  const char *feeds[] = {"x"}, *fetches[] = {fetch};
  tfd_tensor *in = tg_vec(x, n), *out = NULL;
  tfd_session_run(s, NULL, feeds, &in, 1, fetches, 1, NULL, 0, &out, NULL, st);
  tfd_tensor_unref(in);
  return out;
}

/* ---- AddOne: y = x + 1 for any number type, in-process ---- */
static void add_one(void *user, void *state, tfd_kernel_context *c) {
  (void)user, (void)state;
  tfd_tensor *x = tfd_kernel_context_input(c, 0);
  if (tfd_tensor_dtype(x) != TFD_FLOAT32) {
    tfd_kernel_context_fail(c, TFD_UNIMPLEMENTED, "float32 only, got %s", tfd_dtype_name(tfd_tensor_dtype(x)));
    return;
  }
  int64_t n = tfd_tensor_numel(x);
  tfd_tensor *y = tfd_kernel_context_allocate_output(c, 0, TFD_FLOAT32, &n, 1);
  if (!y) return;
  for (int64_t i = 0; i < n; i++) ((float *)tfd_tensor_data(y))[i] = ((const float *)tfd_tensor_const_data(x))[i] + 1;
}

static void test_register_and_run(void) {
  tfd_status *st = tfd_status_new();
  tfd_custom_attr attrs[] = {{"T", TFD_ATTR_TYPE, NULL}};
  tfd_custom_op op = {.name = "AddOne", .num_inputs = 1, .num_outputs = 1, .attrs = attrs, .num_attrs = 1};
  CHECK_INT(tfd_custom_op_register(&op, st), TFD_OK);
  CHECK_INT(tfd_custom_op_register(&op, st), TFD_ALREADY_EXISTS);
  CHECK_STATUS(st, TFD_ALREADY_EXISTS, "op AddOne is already registered");
  tfd_custom_op builtin = {.name = "MatMul", .num_inputs = 2, .num_outputs = 1};
  CHECK_INT(tfd_custom_op_register(&builtin, st), TFD_ALREADY_EXISTS);
  tfd_status_reset(st);
  tfd_custom_op bad = {.name = "9lives", .num_inputs = 1, .num_outputs = 1};
  CHECK_INT(tfd_custom_op_register(&bad, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "starting with a letter, got '9lives'");
  bad = (tfd_custom_op){.name = "TooMany", .num_inputs = 1, .num_outputs = 33};
  CHECK_INT(tfd_custom_op_register(&bad, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "op TooMany: inputs must be 0 to 16 and outputs 0 to 32, got 1 and 33");
  CHECK(!tfd_kernel_exists("AddOne", "CPU"));
  tfd_custom_kernel k = {.op = "AddOne", .device_type = "CPU", .compute = add_one};
  CHECK_INT(tfd_custom_kernel_register(&k, st), TFD_OK);
  CHECK(tfd_kernel_exists("AddOne", "CPU"));
  CHECK(!tfd_kernel_exists("AddOne", "GPU"));
  CHECK_INT(tfd_custom_kernel_register(&k, st), TFD_ALREADY_EXISTS);
  CHECK_STATUS(st, TFD_ALREADY_EXISTS, "a CPU kernel for op AddOne is already registered at priority 0");
  k.op = "NoSuchOp";
  CHECK_INT(tfd_custom_kernel_register(&k, st), TFD_NOT_FOUND);
  CHECK_STATUS(st, TFD_NOT_FOUND, "kernel for unknown op 'NoSuchOp' (CPU)");

  tfd_graph_def *g = tfd_graph_def_new();
  placeholder(g, "x");
  tg_node(g, "y", "AddOne", "x", NULL, NULL);
  tg_node(g, "z", "AddOne", "y", NULL, NULL);
  tfd_session *s = NULL;
  tfd_session_new(NULL, NULL, NULL, &s, st);
  CHECK_INT(tfd_session_create(s, g, st), TFD_OK);
  CHECK_STR(tfd_status_message(st), "");
  float x[] = {1, 2, 3};
  tfd_tensor *z = run1(s, "z", x, 3, st);
  CHECK(z && ((const float *)tfd_tensor_const_data(z))[2] == 5);
  tfd_tensor_unref(z);
  tfd_session_free(s);
  tfd_graph_def_free(g);
  /* A kernel's failure names the node; the session stays usable. */
  g = tfd_graph_def_new();
  tfd_attr_value i32 = {.type = TFD_ATTR_TYPE, .dtype = TFD_INT32};
  tfd_node_def_set_attr(tg_node(g, "xi", "Placeholder", NULL, NULL, NULL), "dtype", &i32, NULL);
  placeholder(g, "x");
  tg_node(g, "bad", "AddOne", "xi", NULL, NULL);
  tg_node(g, "good", "AddOne", "x", NULL, NULL);
  tfd_session_new(NULL, NULL, NULL, &s, st);
  CHECK_INT(tfd_session_create(s, g, st), TFD_OK);
  const char *feeds[] = {"xi"}, *fetch[] = {"bad"};
  int32_t one = 1;
  int64_t n1 = 1;
  tfd_tensor *xi = NULL, *out = NULL;
  tfd_tensor_from_bytes(NULL, TFD_INT32, &n1, 1, &one, 4, &xi, st);
  CHECK_INT(tfd_session_run(s, NULL, feeds, &xi, 1, fetch, 1, NULL, 0, &out, NULL, st), TFD_UNIMPLEMENTED);
  CHECK_STATUS(st, TFD_UNIMPLEMENTED, "node 'bad' (AddOne): float32 only, got int32");
  tfd_tensor *good = run1(s, "good", x, 3, st);
  CHECK(good && ((const float *)tfd_tensor_const_data(good))[0] == 2);
  tfd_tensor_unref(good);
  tfd_tensor_unref(xi);
  tfd_session_free(s);
  tfd_graph_def_free(g);
  tfd_status_free(st);
}

/* ---- WhereAmI: identity that records the thread it ran on, on the caller's thread ---- */
static pthread_t ran_on;
static int ran_count;

static void where_am_i(void *user, void *state, tfd_kernel_context *c) {
  (void)user, (void)state;
  ran_on = pthread_self();
  ran_count++;
  tfd_kernel_context_set_output(c, 0, tfd_kernel_context_input(c, 0));
}

static void test_caller_thread_kernels(void) {
  tfd_status *st = tfd_status_new();
  tfd_custom_op op = {.name = "WhereAmI", .num_inputs = 1, .num_outputs = 1};
  CHECK_INT(tfd_custom_op_register(&op, st), TFD_OK);
  tfd_custom_kernel k = {.op = "WhereAmI", .device_type = "CPU", .compute = where_am_i, .on_caller_thread = true};
  CHECK_INT(tfd_custom_kernel_register(&k, st), TFD_OK);
  /* On CPU:1, a partition the inter-op pool runs: the kernel still runs on this thread. */
  tfd_graph_def *g = tfd_graph_def_new();
  placeholder(g, "x");
  tg_node(g, "sq", "Square", "x", NULL, "/device:CPU:1");
  tg_node(g, "w", "WhereAmI", "sq", NULL, "/device:CPU:1");
  tg_node(g, "y", "Neg", "w", NULL, "/device:CPU:0");
  tfd_session_options *o = tfd_session_options_new();
  tfd_session_options_set_device_count(o, "CPU", 2, st);
  tfd_session *s = NULL;
  tfd_session_new(o, NULL, NULL, &s, st);
  CHECK_INT(tfd_session_create(s, g, st), TFD_OK);
  float x[] = {3};
  for (int i = 0; i < 20; i++) {
    ran_count = 0;
    tfd_tensor *y = run1(s, "y", x, 1, st);
    CHECK(y && ((const float *)tfd_tensor_const_data(y))[0] == -9);
    CHECK_INT(ran_count, 1);
    CHECK(pthread_equal(ran_on, pthread_self()));
    tfd_tensor_unref(y);
  }
  /* An async run: whoever waits runs it. */
  const char *feeds[] = {"x"}, *fetches[] = {"y"};
  tfd_tensor *in = tg_vec(x, 1), *out = NULL;
  ran_count = 0;
  tfd_run *r = NULL;
  tfd_session_run_async(s, NULL, feeds, &in, 1, fetches, 1, NULL, 0, NULL, NULL, NULL, &r, st);
  CHECK(r != NULL);
  CHECK(tfd_run_wait(r, 10000, st));
  CHECK_INT(tfd_status_code(st), TFD_OK);
  CHECK_INT(tfd_run_take_outputs(r, &out, st), TFD_OK);
  CHECK(out && ((const float *)tfd_tensor_const_data(out))[0] == -9);
  CHECK_INT(ran_count, 1);
  CHECK(pthread_equal(ran_on, pthread_self()));
  tfd_tensor_unref(out);
  tfd_run_free(r);
  /* A partial run has no caller to run it: the step fails, naming why. */
  const char *ins[] = {"x"}, *outs[] = {"y"};
  int64_t h = tfd_session_prun_setup(s, ins, 1, outs, 1, NULL, 0, st);
  CHECK(h >= 0);
  out = NULL;
  CHECK(tfd_session_prun(s, h, ins, &in, 1, outs, 1, &out, st) != TFD_OK);
  CHECK_CONTAINS(tfd_status_message(st), "(a partial run) has none to run it");
  tfd_status_reset(st);
  tfd_tensor_unref(out);
  tfd_session_prun_close(s, h, st);
  tfd_status_reset(st);
  tfd_tensor_unref(in);
  tfd_session_free(s);
  tfd_session_options_free(o);
  tfd_graph_def_free(g);
  tfd_status_free(st);
}

static void test_plugins(void) {
  tfd_status *st = tfd_status_new();
  CHECK_INT(tfd_plugin_load("/nonexistent/libnothing.so", st), TFD_NOT_FOUND);
  CHECK_STATUS(st, TFD_NOT_FOUND, "plug-in /nonexistent/libnothing.so did not load: ");
  CHECK_INT(tfd_plugin_load("libm.so.6", st), TFD_FAILED_PRECONDITION);
  CHECK_STATUS(st, TFD_FAILED_PRECONDITION, "libm.so.6 is not a tfdev plug-in: it must export tfd_plugin_api_version");
  CHECK_INT(tfd_plugin_load(TFDEV_TEST_PLUGIN_V99, st), TFD_FAILED_PRECONDITION);
  CHECK_STATUS(st, TFD_FAILED_PRECONDITION, "was built for plug-in API version 99; this tfdev has version 1");
  CHECK(!tfd_kernel_exists("Scale", "CPU"));
  CHECK_INT(tfd_plugin_load(TFDEV_TEST_PLUGIN, st), TFD_OK);
  CHECK_STR(tfd_status_message(st), "");
  CHECK_INT(tfd_plugin_load(TFDEV_TEST_PLUGIN, st), TFD_OK); /* again: nothing registered twice */
  CHECK(tfd_kernel_exists("Scale", "CPU"));
  CHECK(tfd_kernel_exists("Scale", "PLUGDEV"));
  CHECK_INT(tfd_factory_registry_priority(tfd_factory_registry_default(), "PLUGDEV"), 5);
  tfd_graph_def *g = tfd_graph_def_new();
  placeholder(g, "x");
  tg_node(g, "s2", "Scale", "x", NULL, NULL);
  tfd_attr_value three = {.type = TFD_ATTR_FLOAT, .f = 3};
  tfd_node_def_set_attr(tg_node(g, "s3", "Scale", "x", NULL, NULL), "factor", &three, NULL);
  tfd_session *s = NULL;
  tfd_session_new(NULL, NULL, NULL, &s, st);
  CHECK_INT(tfd_session_create(s, g, st), TFD_OK);
  CHECK_STR(tfd_status_message(st), "");
  CHECK_INT(tfd_device_mgr_num_device_type(tfd_session_device_mgr(s), "PLUGDEV"), 1); /* made by the plug-in's factory */
  float x[] = {1, 2};
  tfd_tensor *a = run1(s, "s2", x, 2, st), *b = run1(s, "s3", x, 2, st);
  /* The priority-1 kernel ran (the outranked one negates). */
  CHECK(a && ((const float *)tfd_tensor_const_data(a))[1] == 4);
  CHECK(b && ((const float *)tfd_tensor_const_data(b))[1] == 6);
  tfd_tensor_unref(a);
  tfd_tensor_unref(b);
  float neg[] = {-1, 2};
  CHECK(run1(s, "s2", neg, 2, st) == NULL);
  CHECK_STATUS(st, TFD_OUT_OF_RANGE, "node 's2' (Scale): negative input -1");
  tfd_session_free(s);
  tfd_graph_def_free(g);
  /* Its inference refuses an int32 input when the graph is checked. */
  g = tfd_graph_def_new();
  tfd_attr_value i32 = {.type = TFD_ATTR_TYPE, .dtype = TFD_INT32};
  tfd_node_def_set_attr(tg_node(g, "xi", "Placeholder", NULL, NULL, NULL), "dtype", &i32, NULL);
  tg_node(g, "si", "Scale", "xi", NULL, NULL);
  tfd_session_new(NULL, NULL, NULL, &s, st);
  CHECK_INT(tfd_session_create(s, g, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "node 'si' (Scale): Scale takes float32, got int32");
  tfd_session_free(s);
  tfd_graph_def_free(g);
  tfd_status_free(st);
}

static const tfd_test tests[] = {
    {"custom ops and kernels: registration and runs", test_register_and_run},
    {"kernels on the thread that started the step", test_caller_thread_kernels},
    {"plug-ins", test_plugins},
};

TFD_TEST_MAIN(tests)
