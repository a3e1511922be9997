/* Unit tests for graph building, inference, pruning, placement and the executor on its own. */
#include <stdatomic.h>
#include <stdlib.h>

#include "runtime/exec/executor.h"
#include "runtime/graph/placer.h"
#include "runtime/graph/subgraph.h"
#include "runtime/testing/harness.h"

static tfd_node_def *node(tfd_graph_def *g, const char *name, const char *op, const char *in0, const char *in1) {
  tfd_node_def *n = tfd_graph_def_add_node(g, name, op, NULL);
  if (in0) tfd_node_def_add_input(n, in0, NULL);
  if (in1) tfd_node_def_add_input(n, in1, NULL);
  return n;
}

static void konst(tfd_graph_def *g, const char *name, tfd_dtype dt, const int64_t *dims, int nd, const void *data) {
  int64_t n = 1;
  for (int i = 0; i < nd; i++) n *= dims[i];
  tfd_tensor *t = tfd_tensor_from_bytes(NULL, dt, dims, nd, data, (size_t)n * tfd_dtype_size(dt), NULL);
  tfd_attr_value v = {.type = TFD_ATTR_TENSOR, .tensor = t};
  tfd_node_def_set_attr(node(g, name, "Const", NULL, NULL), "value", &v, NULL);
  tfd_tensor_unref(t);
}

static void placeholder(tfd_graph_def *g, const char *name, int nd, const int64_t *dims) {
  tfd_node_def *n = node(g, name, "Placeholder", NULL, NULL);
  tfd_attr_value dt = {.type = TFD_ATTR_TYPE, .dtype = TFD_FLOAT32}, sh = {.type = TFD_ATTR_SHAPE};
  sh.shape.ndims = nd;
  for (int i = 0; i < nd; i++) sh.shape.dims[i] = dims[i];
  tfd_node_def_set_attr(n, "dtype", &dt, NULL);
  if (nd >= 0) tfd_node_def_set_attr(n, "shape", &sh, NULL);
}

static const tfd_shape *shape_of(tfd_graph *g, const char *name) { return &g->nodes[tfd_graph_find(g, name)].out_shapes[0]; }

static void test_inference(void) {
  tfd_graph_def *d = tfd_graph_def_new();
  int64_t xd[] = {-1, 784}, wd[] = {784, 10}, two = 2;
  placeholder(d, "x", 2, xd);
  float w[784 * 10] = {0};
  konst(d, "w", TFD_FLOAT32, wd, 2, w);
  node(d, "mm", "MatMul", "x", "w");
  int32_t shape[] = {-1, 5, 2};
  int64_t sd[] = {3};
  konst(d, "shape", TFD_INT32, sd, 1, shape);
  node(d, "r", "Reshape", "mm", "shape");
  int32_t axes[] = {1, -1};
  konst(d, "axes", TFD_INT32, &two, 1, axes);
  tfd_attr_value keep = {.type = TFD_ATTR_BOOL, .b = true};
  tfd_node_def_set_attr(node(d, "s", "Sum", "r", "axes"), "keep_dims", &keep, NULL);
  tfd_status *st = tfd_status_new();
  tfd_graph *g = tfd_graph_build(d, st);
  CHECK_STR(tfd_status_message(st), "");
  char buf[64];
  CHECK_STR(tfd_shape_string(shape_of(g, "mm"), buf, sizeof buf), "[?,10]");
  CHECK_STR(tfd_shape_string(shape_of(g, "r"), buf, sizeof buf), "[?,5,2]");
  CHECK_STR(tfd_shape_string(shape_of(g, "s"), buf, sizeof buf), "[?,1,1]");
  const tfd_attr_value *t = tfd_node_def_attr(g->nodes[tfd_graph_find(g, "mm")].def, "T");
  CHECK(t && t->dtype == TFD_FLOAT32);
  const tfd_attr_value *ta = tfd_node_def_attr(g->nodes[tfd_graph_find(g, "mm")].def, "transpose_a");
  CHECK(ta && ta->type == TFD_ATTR_BOOL && !ta->b);
  tfd_graph_free(g);
  /* A reshape the element count forbids. */
  int32_t bad[] = {3, -1}; /* 7840 is not a multiple of 3 */
  konst(d, "bad_shape", TFD_INT32, &two, 1, bad);
  node(d, "w2", "Reshape", "w", "bad_shape");
  CHECK(tfd_graph_build(d, st) == NULL);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "node 'w2' (Reshape): cannot reshape a tensor of 7840 elements");
  tfd_graph_def_free(d);
  tfd_status_free(st);
}

static void test_prune_and_feeds(void) {
  tfd_graph_def *d = tfd_graph_def_new();
  int64_t one = 1;
  float v = 1;
  konst(d, "a", TFD_FLOAT32, &one, 1, &v);
  node(d, "b", "Neg", "a", NULL);
  node(d, "c", "Square", "b", NULL);
  node(d, "unused", "Exp", "a", NULL);
  node(d, "side", "NoOp", NULL, NULL);
  tfd_node_def_add_input(tfd_graph_def_find(d, "c"), "^side", NULL);
  tfd_status *st = tfd_status_new();
  tfd_graph *full = tfd_graph_build(d, st);
  const char *feeds[] = {"b"}, *fetches[] = {"c:0"};
  tfd_dtype ft[1];
  tfd_shape fs[1];
  tfd_graph_def *sub = tfd_subgraph_for_run(full, feeds, 1, fetches, 1, NULL, 0, ft, fs, st);
  CHECK(sub != NULL);
  /* Kept: c, side (control input), _feed_0, _fetch_0. Pruned: a, b (fed), unused. */
  CHECK_INT(tfd_graph_def_num_nodes(sub), 4);
  CHECK(tfd_graph_def_find(sub, "a") == NULL && tfd_graph_def_find(sub, "b") == NULL);
  CHECK(tfd_graph_def_find(sub, "unused") == NULL);
  CHECK_STR(tfd_node_def_input(tfd_graph_def_find(sub, "c"), 0), "_feed_0");
  CHECK_INT(ft[0], TFD_FLOAT32);
  tfd_graph_def_free(sub);
  const char *targets[] = {"unused"};
  sub = tfd_subgraph_for_run(full, NULL, 0, NULL, 0, targets, 1, ft, fs, st);
  CHECK_INT(tfd_graph_def_num_nodes(sub), 2); /* unused and a */
  tfd_graph_def_free(sub);
  const char *twice[] = {"b", "b:0"};
  CHECK(tfd_subgraph_for_run(full, twice, 2, fetches, 1, NULL, 0, ft, fs, st) == NULL);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "feed 'b:0' is given twice");
  tfd_graph_free(full);
  tfd_graph_def_free(d);
  tfd_status_free(st);
}

static void test_placer(void) {
  tfd_status *st = tfd_status_new();
  tfd_session_options *o = tfd_session_options_new();
  tfd_session_options_set_device_count(o, "CPU", 2, st);
  tfd_device_list *l = tfd_device_list_new();
  tfd_factory_registry_add_devices(tfd_factory_registry_default(), o, TFD_LOCAL_NAME_PREFIX, NULL, l, st);
  tfd_device *devs[2] = {tfd_device_list_get(l, 0), tfd_device_list_get(l, 1)};
  tfd_graph_def *d = tfd_graph_def_new();
  tfd_attr_value dt = {.type = TFD_ATTR_TYPE, .dtype = TFD_FLOAT32};
  tfd_node_def *v = node(d, "v", "VarHandleOp", NULL, NULL);
  tfd_node_def_set_attr(v, "dtype", &dt, st);
  tfd_node_def_set_device(v, "/device:CPU:1", st);
  tfd_node_def_set_attr(node(d, "read", "ReadVariableOp", "v", NULL), "dtype", &dt, st);
  node(d, "neg", "Neg", "read", NULL);
  tfd_graph *g = tfd_graph_build(d, st);
  int where[3];
  tfd_placer_options po = {devs, 2, tfd_factory_registry_default(), false, false, NULL};
  CHECK_INT(tfd_place(g, &po, where, st), TFD_OK);
  CHECK_INT(where[tfd_graph_find(g, "v")], 1);
  CHECK_INT(where[tfd_graph_find(g, "read")], 1); /* colocated with its resource */
  CHECK_INT(where[tfd_graph_find(g, "neg")], 0);  /* free: first device of the best type */
  tfd_graph_free(g);
  tfd_node_def_set_device(tfd_graph_def_find(d, "read"), "/device:CPU:0", st);
  g = tfd_graph_build(d, st);
  CHECK_INT(tfd_place(g, &po, where, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "Cannot colocate node 'read' with node 'v'");
  po.allow_soft_placement = true;
  CHECK_INT(tfd_place(g, &po, where, st), TFD_OK);
  tfd_graph_free(g);
  tfd_graph_def_free(d);
  tfd_device_list_free(l);
  tfd_session_options_free(o);
  tfd_status_free(st);
}

static void done_count(void *arg, const tfd_status *st) {
  (void)st;
  atomic_fetch_add((atomic_int *)arg, 1);
}

static void test_executor_alone(void) {
  tfd_status *st = tfd_status_new();
  tfd_cpu_device_config cfg = {.name = "/job:e/replica:0/task:0/device:CPU:0", .num_threads = 2, .own_threadpool = true};
  tfd_device *dev = tfd_cpu_device_new(&cfg, st);
  tfd_graph_def *d = tfd_graph_def_new();
  int64_t one = 1;
  float v = 3;
  konst(d, "a", TFD_FLOAT32, &one, 1, &v);
  /* A diamond: a -> (neg, square) -> add -> _Fetch. */
  node(d, "neg", "Neg", "a", NULL);
  node(d, "sq", "Square", "a", NULL);
  node(d, "sum", "Add", "neg", "sq");
  tfd_attr_value idx = {.type = TFD_ATTR_INT, .i = 0};
  tfd_node_def_set_attr(node(d, "_f", "_Fetch", "sum", NULL), "index", &idx, st);
  tfd_executor *e = tfd_executor_new(tfd_graph_build(d, st), dev, NULL, st);
  CHECK(e != NULL);
  tfd_threadpool *pool = tfd_threadpool_new("inter", 2, st);
  for (int runner = 0; runner < 2; runner++) {
    tfd_tensor *out = NULL;
    tfd_executor_args args = {.fetches = &out, .num_fetches = 1, .runner = runner ? pool : NULL};
    CHECK_INT(tfd_executor_run(e, &args, 0, NULL, st), TFD_OK);
    CHECK(out && *(const float *)tfd_tensor_const_data(out) == 6.0f);
    tfd_tensor_unref(out);
  }
  /* Many steps in flight at once on one executor. */
  atomic_int done = 0;
  tfd_tensor *outs[50] = {0};
  for (int i = 0; i < 50; i++) {
    tfd_executor_args args = {.step_id = i, .fetches = &outs[i], .num_fetches = 1, .runner = pool};
    tfd_executor_run_async(e, &args, done_count, &done);
  }
  tfd_threadpool_free(pool); /* drains every scheduled node */
  CHECK_INT(atomic_load(&done), 50);
  for (int i = 0; i < 50; i++) {
    CHECK(outs[i] && *(const float *)tfd_tensor_const_data(outs[i]) == 6.0f);
    tfd_tensor_unref(outs[i]);
  }
  tfd_executor_free(e);
  tfd_graph_def_free(d);
  tfd_device_unref(dev);
  tfd_status_free(st);
}

static const tfd_test tests[] = {
    {"inference", test_inference},
    {"pruning and feeds", test_prune_and_feeds},
    {"placer", test_placer},
    {"executor on its own", test_executor_alone},
};
TFD_TEST_MAIN(tests)
