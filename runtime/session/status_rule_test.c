/* tfdev.h's status rule, as TensorFlow's C API keeps it: a public call that succeeds leaves the status
 * it was given OK, whatever error the status held from an earlier call, so a host can reuse one status
 * and test it after each call. Before issue 27 an earlier error survived a later success. Every public
 * function follows the rule (ctest build.status_reset checks their definitions); this test drives a
 * step end to end through a status that starts each call holding a stale error. */
#include "runtime/testing/harness.h"

static tfd_status *st;

/* Gives st an error left over from an "earlier call". */
static tfd_status *stale(void) {
  tfd_status_setf(st, TFD_NOT_FOUND, "an earlier call's error");
  return st;
}

#define CHECK_CLEAN() CHECK_STATUS(st, TFD_OK, "")

static void test_a_step_through_a_stale_status(void) {
  tfd_session_options *o = tfd_session_options_new();
  CHECK_INT(tfd_session_options_set_device_count(o, "CPU", 1, stale()), TFD_OK);
  CHECK_CLEAN();
  tfd_graph_def *g = tfd_graph_def_new();
  tfd_node_def *x = tfd_graph_def_add_node(g, "x", "Placeholder", stale());
  CHECK(x != NULL);
  CHECK_CLEAN();
  tfd_attr_value dt = {.type = TFD_ATTR_TYPE, .dtype = TFD_FLOAT32};
  CHECK_INT(tfd_node_def_set_attr(x, "dtype", &dt, stale()), TFD_OK);
  CHECK_CLEAN();
  tfd_node_def *y = tfd_graph_def_add_node(g, "y", "Neg", stale());
  CHECK_CLEAN();
  CHECK_INT(tfd_node_def_add_input(y, "x", stale()), TFD_OK);
  CHECK_CLEAN();
  tfd_session *s = NULL;
  tfd_session_new(o, NULL, NULL, &s, stale());
  CHECK(s != NULL);
  CHECK_CLEAN();
  CHECK_INT(tfd_session_create(s, g, stale()), TFD_OK);
  CHECK_CLEAN();
  int64_t dims[1] = {2};
  tfd_tensor *in = NULL;
  tfd_tensor_new(NULL, TFD_FLOAT32, dims, 1, &in, stale());
  CHECK(in != NULL);
  CHECK_CLEAN();
  float *v = tfd_tensor_data(in);
  v[0] = 1, v[1] = -2;
  const char *feed = "x", *fetch = "y";
  tfd_tensor *out = NULL;
  CHECK_INT(tfd_session_run(s, NULL, &feed, &in, 1, &fetch, 1, NULL, 0, &out, NULL, stale()), TFD_OK);
  CHECK_CLEAN();
  CHECK(out && ((const float *)tfd_tensor_data(out))[1] == 2);
  /* and an error still reports, after a success */
  const char *ghost = "ghost";
  CHECK_INT(tfd_session_run(s, NULL, &ghost, &in, 1, &fetch, 1, NULL, 0, &out, NULL, st), TFD_NOT_FOUND);
  CHECK_STATUS(st, TFD_NOT_FOUND, "feed 'ghost:0': the graph has no node named 'ghost'; its placeholders are x");
  CHECK_INT(tfd_session_close(s, stale()), TFD_OK);
  CHECK_CLEAN();
  tfd_tensor_unref(in);
  tfd_tensor_unref(out);
  tfd_session_free(s);
  tfd_graph_def_free(g);
  tfd_session_options_free(o);
}

static void test_names_and_parsing_through_a_stale_status(void) {
  tfd_parsed_name p;
  CHECK_INT(tfd_device_name_parse("/job:a/replica:0/task:1/device:CPU:0", &p, stale()), TFD_OK);
  CHECK_CLEAN();
  tfd_graph_def *g = tfd_graph_def_new();
  size_t size = 0;
  void *bytes = NULL;
  CHECK_INT(tfd_graph_def_serialize(g, &bytes, &size, stale()), TFD_OK);
  CHECK_CLEAN();
  tfd_graph_def *back = NULL;
  tfd_graph_def_parse(bytes, size, &back, stale());
  CHECK(back != NULL);
  CHECK_CLEAN();
  free(bytes);
  tfd_graph_def_free(back);
  tfd_graph_def_free(g);
}

static const struct {
  const char *name;
  void (*fn)(void);
} tests[] = {
    {"a step through a stale status", test_a_step_through_a_stale_status},
    {"names and parsing through a stale status", test_names_and_parsing_through_a_stale_status},
};

static int run_tests(void);

int main(void) {
  st = tfd_status_new();
  int rc = run_tests();
  tfd_status_free(st);
  return rc;
}
TFD_TEST_RUN_ALL(tests, static int run_tests)
