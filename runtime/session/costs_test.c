/* Cost models and memory (output_info, build_cost_model_after, tracking-allocator figures in step
 * stats), callables with options (run options, tensor connections) and output_partition_graphs with
 * the trace: TensorFlow's DirectSessionWithTrackingAllocTest and DirectSessionMinusAXTest (issue 12). */
#include <stdlib.h>
#include <string.h>

#include "runtime/testing/graph_builder.h"
#include "runtime/testing/harness.h"

#define CPU0 "/job:localhost/replica:0/task:0/device:CPU:0"
#define CPU1 "/job:localhost/replica:0/task:0/device:CPU:1"

/* TensorFlow's MinusAX graph: y = a * x on CPU:0, y_neg = -y on CPU:1, z = identity(y_neg). */
static tfd_graph_def *minus_ax(void) {
  tfd_graph_def *g = tfd_graph_def_new();
  float a[] = {3, 2, -1, 0}, x[] = {1, 1};
  int64_t d22[] = {2, 2}, d21[] = {2, 1};
  tg_set_tensor(tg_node(g, "a", "Const", NULL, NULL, "/device:CPU:0"), "value", tg_f32(a, d22, 2));
  tg_set_tensor(tg_node(g, "x", "Const", NULL, NULL, "/device:CPU:1"), "value", tg_f32(x, d21, 2));
  tfd_node_def_add_input(tg_node(g, "y", "MatMul", "a", NULL, "/device:CPU:0"), "x", NULL);
  tg_node(g, "y_neg", "Neg", "y", NULL, "/device:CPU:1");
  tg_node(g, "z", "Identity", "y_neg", NULL, "/device:CPU:1");
  return g;
}

/* A session over two CPUs with the graph created; the graph optimiser off (TensorFlow's tests turn
 * constant folding off), build_cost_model as given. */
static tfd_session *two_cpus(bool build_cost_model, int64_t after, tfd_status *st) {
  tfd_session_options *o = tfd_session_options_new();
  tfd_session_options_set_device_count(o, "CPU", 2, NULL);
  tfd_session_options_set_optimize_graph(o, false);
  tfd_session_options_set_build_cost_model(o, build_cost_model);
  CHECK_INT(tfd_session_options_set_build_cost_model_after(o, after, st), TFD_OK);
  tfd_session *s = NULL;
  tfd_session_new(o, NULL, NULL, &s, st);
  tfd_session_options_free(o);
  tfd_graph_def *g = minus_ax();
  CHECK_INT(tfd_session_create(s, g, st), TFD_OK);
  tfd_graph_def_free(g);
  return s;
}

static const tfd_cost_entry *find_entry(const tfd_cost_entry *e, int n, const char *node) {
  for (int i = 0; i < n; i++)
    if (strcmp(e[i].node, node) == 0) return &e[i];
  return NULL;
}

static void check_y_shaped(const tfd_cost_entry *e) {
  CHECK(e != NULL);
  if (!e) return;
  CHECK_INT(e->num_outputs, 1);
  CHECK_INT(e->outputs[0].size, 8);
  CHECK_INT(e->outputs[0].dtype, TFD_FLOAT32);
  CHECK_INT(e->outputs[0].shape.ndims, 2);
  CHECK_INT(e->outputs[0].shape.dims[0], 2);
  CHECK_INT(e->outputs[0].shape.dims[1], 1);
  CHECK_INT(e->outputs[0].alias_input_slot, -1);
}

/* DirectSessionWithTrackingAllocTest.CostModelTest */
static void test_cost_model_output_info(void) {
  tfd_status *st = tfd_status_new();
  tfd_session *s = two_cpus(true, 0, st);
  const char *fetch = "y:0", *target = "y_neg";
  tfd_tensor *out = NULL;
  CHECK_INT(tfd_session_run(s, NULL, NULL, NULL, 0, &fetch, 1, &target, 1, &out, NULL, st), TFD_OK);
  tfd_tensor_unref(out);
  tfd_cost_entry e[32];
  int n = tfd_session_export_cost_models(s, e, 32);
  CHECK(n >= 4 && n <= 32);
  check_y_shaped(find_entry(e, n, "y"));
  check_y_shaped(find_entry(e, n, "y_neg"));
  bool cpu0 = false, cpu1 = false; /* one model per device */
  for (int i = 0; i < n; i++) {
    cpu0 |= strcmp(e[i].device, CPU0) == 0;
    cpu1 |= strcmp(e[i].device, CPU1) == 0;
    CHECK(e[i].max_compute_micros >= 0);
  }
  CHECK(cpu0 && cpu1);
  tfd_session_free(s);
  tfd_status_free(st);
}

/* DirectSessionWithTrackingAllocTest.CostGraph, and Identity's output aliasing its input. */
static void test_cost_graph_output_info(void) {
  tfd_status *st = tfd_status_new();
  tfd_session *s = two_cpus(true, 0, st);
  const char *fetches[] = {"y:0", "z:0"}, *target = "y_neg";
  tfd_tensor *out[2] = {0};
  tfd_run_options ro = {.cost_graph = true};
  tfd_run_metadata *m = tfd_run_metadata_new();
  CHECK_INT(tfd_session_run(s, &ro, NULL, NULL, 0, fetches, 2, &target, 1, out, m, st), TFD_OK);
  tfd_cost_entry e[32];
  int n = tfd_run_metadata_num_cost_nodes(m);
  CHECK(n >= 2 && n <= 32);
  for (int i = 0; i < n && i < 32; i++) tfd_run_metadata_cost_node(m, i, &e[i]);
  check_y_shaped(find_entry(e, n, "y"));
  check_y_shaped(find_entry(e, n, "y_neg"));
  const tfd_cost_entry *z = find_entry(e, n, "z");
  CHECK(z && z->outputs[0].alias_input_slot == 0);
  CHECK_INT(tfd_run_metadata_num_devices(m), 0); /* no trace asked */
  tfd_tensor_unref(out[0]);
  tfd_tensor_unref(out[1]);
  tfd_run_metadata_free(m);
  tfd_session_free(s);
  tfd_status_free(st);
}

/* DirectSessionWithTrackingAllocTest.CostModelWarmup */
static void test_cost_model_warmup(void) {
  tfd_status *st = tfd_status_new();
  tfd_session *s = two_cpus(true, 10, st);
  const char *fetch = "a:0";
  for (int i = 0; i < 25; i++) {
    tfd_tensor *out = NULL;
    CHECK_INT(tfd_session_run(s, NULL, NULL, NULL, 0, &fetch, 1, NULL, 0, &out, NULL, st), TFD_OK);
    tfd_tensor_unref(out);
  }
  tfd_cost_entry e[8];
  int n = tfd_session_export_cost_models(s, e, 8);
  const tfd_cost_entry *a = find_entry(e, n < 8 ? n : 8, "a");
  CHECK(a && a->runs == 15);
  tfd_session_options *o = tfd_session_options_new();
  CHECK_INT(tfd_session_options_set_build_cost_model_after(o, -1, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "build_cost_model_after must be >= 0, got -1");
  tfd_session_options_free(o);
  tfd_session_free(s);
  tfd_status_free(st);
}

static const tfd_node_exec_stats *find_stats(const tfd_run_metadata *m, const char *node, tfd_node_exec_stats *out) {
  for (int d = 0; d < tfd_run_metadata_num_devices(m); d++)
    for (int i = 0; i < tfd_run_metadata_num_nodes(m, d); i++) {
      tfd_run_metadata_node(m, d, i, out);
      if (strcmp(out->node_name, node) == 0) return out;
    }
  return NULL;
}

/* DirectSessionWithTrackingAllocTest.TrackMemoryAllocation, and allocation records when asked. */
static void test_track_memory_allocation(void) {
  tfd_status *st = tfd_status_new();
  tfd_session *s = two_cpus(false, 0, st);
  const char *fetch = "y:0";
  tfd_tensor *out = NULL;
  tfd_run_metadata *m = tfd_run_metadata_new();
  tfd_run_options ro = {.trace = true};
  CHECK_INT(tfd_session_run(s, &ro, NULL, NULL, 0, &fetch, 1, NULL, 0, &out, m, st), TFD_OK);
  tfd_tensor_unref(out);
  tfd_node_exec_stats ns;
  CHECK(find_stats(m, "y", &ns) != NULL);
  CHECK_INT(ns.total_bytes, 8);
  CHECK_INT(ns.peak_bytes, 8);
  CHECK_INT(ns.live_bytes, 8);
  CHECK_STR(ns.allocator_name, CPU0);
  CHECK_INT(ns.num_allocation_records, 0);
  CHECK(ns.allocation_records == NULL);
  ro = (tfd_run_options){.trace_allocations = true}; /* traces too */
  CHECK_INT(tfd_session_run(s, &ro, NULL, NULL, 0, &fetch, 1, NULL, 0, &out, m, st), TFD_OK);
  CHECK(find_stats(m, "y", &ns) != NULL);
  CHECK_INT(ns.num_allocation_records, 1); /* the fetched output is still alive when the step ends */
  if (ns.num_allocation_records == 1) {
    CHECK_INT(ns.allocation_records[0].alloc_bytes, 8);
    CHECK(ns.allocation_records[0].alloc_micros > 0);
  }
  tfd_tensor_unref(out); /* freed through the tracker, after the metadata was filled: nothing breaks */
  tfd_run_metadata_free(m);
  tfd_session_free(s);
  tfd_status_free(st);
}

/* DirectSessionMinusAXTest.RunSimpleNetworkWithOpts: partition graphs only with output_partition_graphs. */
static void test_partition_graphs_with_trace(void) {
  tfd_status *st = tfd_status_new();
  tfd_session *s = two_cpus(false, 0, st);
  const char *fetch = "y:0", *target = "y_neg";
  struct {
    bool trace, graphs;
    int devices, parts;
  } cases[] = {{true, false, 2, 0}, {false, true, 0, 2}, {true, true, 2, 2}, {false, false, 0, 0}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    tfd_run_options ro = {.trace = cases[c].trace, .output_partition_graphs = cases[c].graphs};
    tfd_run_metadata *m = tfd_run_metadata_new();
    tfd_tensor *out = NULL;
    CHECK_INT(tfd_session_run(s, &ro, NULL, NULL, 0, &fetch, 1, &target, 1, &out, m, st), TFD_OK);
    CHECK_INT(tfd_run_metadata_num_devices(m), cases[c].devices);
    CHECK_INT(tfd_run_metadata_num_partition_graphs(m), cases[c].parts);
    tfd_tensor_unref(out);
    tfd_run_metadata_free(m);
  }
  tfd_session_free(s);
  tfd_status_free(st);
}

/* DirectSessionMinusAXTest.RunSimpleNetworkWithOpts_Callable: the callable's own run options, and a
 * call's options in their place. */
static void test_callable_run_options(void) {
  tfd_status *st = tfd_status_new();
  tfd_session *s = two_cpus(false, 0, st);
  const char *fetch = "y:0", *target = "y_neg";
  tfd_run_options traced = {.trace = true};
  tfd_callable_options co = {.fetches = &fetch, .num_fetches = 1, .targets = &target, .num_targets = 1,
                             .run_options = &traced};
  int64_t h = tfd_session_make_callable_with_options(s, &co, st);
  CHECK(h >= 0);
  tfd_run_metadata *m = tfd_run_metadata_new();
  tfd_tensor *out = NULL;
  CHECK_INT(tfd_session_run_callable(s, h, NULL, NULL, &out, m, st), TFD_OK);
  CHECK(out && ((const float *)tfd_tensor_const_data(out))[0] == 5.0f);
  tfd_tensor_unref(out);
  CHECK_INT(tfd_run_metadata_num_devices(m), 2);
  CHECK_INT(tfd_run_metadata_num_partition_graphs(m), 0);
  tfd_run_options graphs = {.output_partition_graphs = true}; /* replaces the callable's for this call */
  CHECK_INT(tfd_session_run_callable(s, h, &graphs, NULL, &out, m, st), TFD_OK);
  tfd_tensor_unref(out);
  CHECK_INT(tfd_run_metadata_num_devices(m), 0);
  CHECK_INT(tfd_run_metadata_num_partition_graphs(m), 2);
  CHECK_INT(tfd_session_release_callable(s, h, st), TFD_OK);
  /* The plain MakeCallable still works, with a call's options. */
  h = tfd_session_make_callable(s, NULL, 0, &fetch, 1, &target, 1, st);
  CHECK_INT(tfd_session_run_callable(s, h, &traced, NULL, &out, m, st), TFD_OK);
  tfd_tensor_unref(out);
  CHECK_INT(tfd_run_metadata_num_devices(m), 2);
  CHECK_INT(tfd_session_make_callable_with_options(s, NULL, st), -1);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "tfd_session_make_callable_with_options: options is NULL");
  tfd_run_metadata_free(m);
  tfd_session_free(s);
  tfd_status_free(st);
}

/* A callable whose run options carry timeout_ms: a dequeue from an empty queue ends at it. */
static void test_callable_timeout(void) {
  tfd_status *st = tfd_status_new();
  tfd_session *s = NULL;
  tfd_session_new(NULL, NULL, NULL, &s, st);
  tfd_graph_def *g = tfd_graph_def_new();
  tfd_dtype types[] = {TFD_FLOAT32};
  tfd_attr_value ct = {.type = TFD_ATTR_LIST_TYPE, .list_len = 1, .list_type = types};
  tfd_node_def_set_attr(tg_node(g, "q", "FIFOQueueV2", NULL, NULL, NULL), "component_types", &ct, NULL);
  tfd_node_def_set_attr(tg_node(g, "dq", "QueueDequeueV2", "q", NULL, NULL), "component_types", &ct, NULL);
  CHECK_INT(tfd_session_create(s, g, st), TFD_OK);
  const char *fetch = "dq";
  tfd_run_options ro = {.timeout_ms = 20};
  tfd_callable_options co = {.fetches = &fetch, .num_fetches = 1, .run_options = &ro};
  int64_t h = tfd_session_make_callable_with_options(s, &co, st);
  tfd_tensor *out = NULL;
  CHECK_INT(tfd_session_run_callable(s, h, NULL, NULL, &out, NULL, st), TFD_DEADLINE_EXCEEDED);
  CHECK_STATUS(st, TFD_DEADLINE_EXCEEDED, "Timed out waiting for the step (20 ms)");
  tfd_run_options shorter = {.timeout_ms = 5};
  CHECK_INT(tfd_session_run_callable(s, h, &shorter, NULL, &out, NULL, st), TFD_DEADLINE_EXCEEDED);
  CHECK_STATUS(st, TFD_DEADLINE_EXCEEDED, "Timed out waiting for the step (5 ms)");
  tfd_graph_def_free(g);
  tfd_session_free(s);
  tfd_status_free(st);
}

static int64_t make_connected(tfd_session *s, const char *from, const char *to, const char *fetch, const char *feed,
                              tfd_status *st) {
  tfd_tensor_connection c = {from, to};
  tfd_callable_options co = {.feeds = &feed, .num_feeds = feed ? 1 : 0, .fetches = &fetch, .num_fetches = 1,
                             .tensor_connections = &c, .num_tensor_connections = 1};
  return tfd_session_make_callable_with_options(s, &co, st);
}

/* DirectSessionMinusAXTest.TestTensorConnection */
static void test_tensor_connection(void) {
  tfd_status *st = tfd_status_new();
  tfd_session *s = two_cpus(false, 0, st);
  int64_t h = make_connected(s, "a:0", "y:0", "y_neg:0", NULL, st);
  CHECK(h >= 0);
  tfd_tensor *out[2] = {0};
  CHECK_INT(tfd_session_run_callable(s, h, NULL, NULL, out, NULL, st), TFD_OK);
  if (out[0]) {
    const float *v = tfd_tensor_const_data(out[0]);
    CHECK(v[0] == -3.0f && v[1] == -2.0f && v[2] == 1.0f && v[3] == 0.0f);
    CHECK_INT(tfd_tensor_ndims(out[0]), 2);
  }
  tfd_tensor_unref(out[0]);
  /* also fetching a */
  const char *fetches[] = {"a:0", "y_neg:0"};
  tfd_tensor_connection c = {"a", "y"};
  tfd_callable_options co = {.fetches = fetches, .num_fetches = 2, .tensor_connections = &c, .num_tensor_connections = 1};
  h = tfd_session_make_callable_with_options(s, &co, st);
  CHECK_INT(tfd_session_run_callable(s, h, NULL, NULL, out, NULL, st), TFD_OK);
  if (out[0] && out[1]) {
    CHECK(((const float *)tfd_tensor_const_data(out[0]))[0] == 3.0f);
    CHECK(((const float *)tfd_tensor_const_data(out[1]))[0] == -3.0f);
  }
  tfd_tensor_unref(out[0]);
  tfd_tensor_unref(out[1]);
  /* a cycle */
  CHECK_INT(make_connected(s, "y:0", "a:0", "y:0", NULL, st), -1);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "would create a cycle");
  /* unknown from node, unknown from edge */
  CHECK_INT(make_connected(s, "unknown_node:0", "y:0", "y:0", NULL, st), -1);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "unknown node");
  CHECK_INT(make_connected(s, "a:17", "y:0", "y:0", NULL, st), -1);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "unknown edge");
  /* unknown to node */
  CHECK_INT(make_connected(s, "a:0", "unknown_node:0", "y:0", NULL, st), -1);
  CHECK_STATUS(st, TFD_NOT_FOUND, "unable to find feed output");
  /* two tensors to one */
  tfd_tensor_connection two[] = {{"a:0", "y_neg:0"}, {"x:0", "y_neg:0"}};
  const char *z = "z:0";
  co = (tfd_callable_options){.fetches = &z, .num_fetches = 1, .tensor_connections = two, .num_tensor_connections = 2};
  CHECK_INT(tfd_session_make_callable_with_options(s, &co, st), -1);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "fed more than once");
  /* a connected tensor also fed */
  CHECK_INT(make_connected(s, "a:0", "y:0", "y_neg:0", "y:0", st), -1);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "Endpoint \"y:0\" fed more than once.");
  /* dtypes that differ, a NULL name, a negative count */
  tfd_graph_def *g = tfd_graph_def_new();
  tfd_attr_value dt = {.type = TFD_ATTR_TYPE, .dtype = TFD_INT32};
  tfd_node_def_set_attr(tg_node(g, "i", "Placeholder", NULL, NULL, NULL), "dtype", &dt, NULL);
  CHECK_INT(tfd_session_extend(s, g, st), TFD_OK);
  tfd_graph_def_free(g);
  CHECK_INT(make_connected(s, "i:0", "y:0", "y_neg:0", NULL, st), -1);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "the dtypes differ");
  CHECK_INT(make_connected(s, "a:0", NULL, "y_neg:0", NULL, st), -1);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "is NULL");
  co = (tfd_callable_options){.fetches = &z, .num_fetches = 1, .tensor_connections = NULL, .num_tensor_connections = 3};
  CHECK_INT(tfd_session_make_callable_with_options(s, &co, st), -1);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "options->tensor_connections is NULL but options->num_tensor_connections is 3");
  tfd_session_free(s);
  tfd_status_free(st);
}

static const tfd_test tests[] = {
    {"cost model output info (DirectSessionWithTrackingAllocTest.CostModelTest)", test_cost_model_output_info},
    {"cost graph output info (DirectSessionWithTrackingAllocTest.CostGraph)", test_cost_graph_output_info},
    {"build_cost_model_after (DirectSessionWithTrackingAllocTest.CostModelWarmup)", test_cost_model_warmup},
    {"tracking allocator figures (DirectSessionWithTrackingAllocTest.TrackMemoryAllocation)", test_track_memory_allocation},
    {"output_partition_graphs with the trace (DirectSessionMinusAXTest.RunSimpleNetworkWithOpts)",
     test_partition_graphs_with_trace},
    {"callables with run options (DirectSessionMinusAXTest.RunSimpleNetworkWithOpts_Callable)", test_callable_run_options},
    {"a callable's timeout_ms", test_callable_timeout},
    {"tensor connections (DirectSessionMinusAXTest.TestTensorConnection)", test_tensor_connection},
};
TFD_TEST_MAIN(tests)
