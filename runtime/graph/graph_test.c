/* Unit tests for graph building, inference, pruning and placement (the executor's are in runtime/exec/executor_test.c). */
#include <stdlib.h>

#include "runtime/graph/placer.h"
#include "runtime/graph/subgraph.h"
#include "runtime/testing/graph_builder.h"
#include "runtime/testing/harness.h"
#include "tfdev/ops.h"

static void placeholder(tfd_graph_def *g, const char *name, int nd, const int64_t *dims) {
  tfd_node_def *n = tg_node(g, name, "Placeholder", NULL, NULL, NULL);
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
  tg_const(d, "w", TFD_FLOAT32, wd, 2, w);
  tg_node(d, "mm", "MatMul", "x", "w", NULL);
  int32_t shape[] = {-1, 5, 2};
  int64_t sd[] = {3};
  tg_const(d, "shape", TFD_INT32, sd, 1, shape);
  tg_node(d, "r", "Reshape", "mm", "shape", NULL);
  int32_t axes[] = {1, -1};
  tg_const(d, "axes", TFD_INT32, &two, 1, axes);
  tfd_attr_value keep = {.type = TFD_ATTR_BOOL, .b = true};
  tfd_node_def_set_attr(tg_node(d, "s", "Sum", "r", "axes", NULL), "keep_dims", &keep, NULL);
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
  tg_const(d, "bad_shape", TFD_INT32, &two, 1, bad);
  tg_node(d, "w2", "Reshape", "w", "bad_shape", NULL);
  CHECK(tfd_graph_build(d, st) == NULL);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "node 'w2' (Reshape): cannot reshape a tensor of 7840 elements");
  tfd_graph_def_free(d);
  tfd_status_free(st);
}

static void test_prune_and_feeds(void) {
  tfd_graph_def *d = tfd_graph_def_new();
  int64_t one = 1;
  float v = 1;
  tg_const(d, "a", TFD_FLOAT32, &one, 1, &v);
  tg_node(d, "b", "Neg", "a", NULL, NULL);
  tg_node(d, "c", "Square", "b", NULL, NULL);
  tg_node(d, "unused", "Exp", "a", NULL, NULL);
  tg_node(d, "side", "NoOp", NULL, NULL, NULL);
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
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "'b:0' fed more than once.");
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
  tfd_node_def *v = tg_node(d, "v", "VarHandleOp", NULL, NULL, NULL);
  tfd_node_def_set_attr(v, "dtype", &dt, st);
  tfd_node_def_set_device(v, "/device:CPU:1", st);
  tfd_node_def_set_attr(tg_node(d, "read", "ReadVariableOp", "v", NULL, NULL), "dtype", &dt, st);
  tg_node(d, "neg", "Neg", "read", NULL, NULL);
  tfd_graph *g = tfd_graph_build(d, st);
  int where[3];
  tfd_placer_options po = {devs, 2, tfd_factory_registry_default(), false, false, NULL, false};
  CHECK_INT(tfd_place(g, &po, where, st), TFD_OK);
  CHECK_INT(where[tfd_graph_find(g, "v")], 1);
  CHECK_INT(where[tfd_graph_find(g, "read")], 1); /* colocated with its resource */
  CHECK_INT(where[tfd_graph_find(g, "neg")], 0);  /* free: first device of the best type */
  tfd_graph_free(g);
  tfd_node_def_set_device(tfd_graph_def_find(d, "read"), "/device:CPU:0", st);
  g = tfd_graph_build(d, st);
  /* TensorFlow's TestReferenceConnectionIgnoreInfeasible: the resource user's conflicting request
   * gives way to the resource's device, soft placement or not. */
  CHECK_INT(tfd_place(g, &po, where, st), TFD_OK);
  CHECK_INT(where[tfd_graph_find(g, "read")], 1);
  tfd_graph_free(g);
  tfd_graph_def_free(d);
  tfd_device_list_free(l);
  tfd_session_options_free(o);
  tfd_status_free(st);
}

/* tfd_ops_infer, the public one-node inference the Lua graph builder uses: the same answers and
 * errors as a session's graph check, defaults written into the node, constant inputs read. */
static void test_ops_infer(void) {
  tfd_status *st = tfd_status_new();
  tfd_graph_def *d = tfd_graph_def_new();
  int n = -1;
  tfd_dtype types[4];
  tfd_shape shapes[4];

  tfd_node_def *mm = tfd_graph_def_add_node(d, "mm", "MatMul", NULL);
  tfd_dtype f2[] = {TFD_FLOAT32, TFD_FLOAT32};
  tfd_shape in[2] = {{.ndims = 2, .dims = {-1, 3}}, {.ndims = 2, .dims = {3, 2}}};
  CHECK_INT(tfd_ops_infer(mm, 2, f2, in, NULL, 4, &n, types, shapes, st), TFD_OK);
  CHECK_INT(n, 1);
  CHECK_INT(types[0], TFD_FLOAT32);
  CHECK_INT(shapes[0].ndims, 2);
  CHECK_INT(shapes[0].dims[0], -1);
  CHECK_INT(shapes[0].dims[1], 2);
  CHECK(tfd_node_def_attr(mm, "transpose_a") != NULL); /* defaults filled, as a session does */

  in[1].dims[0] = 4;
  tfd_node_def *bad = tfd_graph_def_add_node(d, "bad", "MatMul", NULL);
  CHECK_INT(tfd_ops_infer(bad, 2, f2, in, NULL, 4, &n, types, shapes, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "node 'bad' (MatMul): Matrix size-incompatible");
  CHECK_INT(n, 0);
  CHECK_INT(tfd_ops_infer(bad, 1, f2, in, NULL, 4, &n, types, shapes, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "node 'bad' (MatMul) takes 2 inputs, got 1");

  tfd_node_def *frob = tfd_graph_def_add_node(d, "f", "Frobnicate", NULL);
  CHECK_INT(tfd_ops_infer(frob, 0, NULL, NULL, NULL, 4, &n, types, shapes, st), TFD_NOT_FOUND);
  CHECK_STATUS(st, TFD_NOT_FOUND, "node 'f': op type not registered 'Frobnicate'");

  /* A constant shape input: Reshape's result is known; without it the rank is not. */
  int32_t sizes[] = {3, -1};
  int64_t two = 2;
  tfd_tensor *shape = NULL;
  tfd_tensor_from_bytes(NULL, TFD_INT32, &two, 1, sizes, sizeof sizes, &shape,
                        NULL);
  const tfd_tensor *values[] = {NULL, shape};
  tfd_dtype ri[] = {TFD_FLOAT32, TFD_INT32};
  tfd_shape rs[2] = {{.ndims = 2, .dims = {2, 6}}, {.ndims = 1, .dims = {2}}};
  tfd_node_def *r = tfd_graph_def_add_node(d, "r", "Reshape", NULL);
  CHECK_INT(tfd_ops_infer(r, 2, ri, rs, values, 4, &n, types, shapes, st), TFD_OK);
  CHECK_INT(shapes[0].ndims, 2);
  CHECK_INT(shapes[0].dims[0], 3);
  CHECK_INT(shapes[0].dims[1], 4);
  CHECK_INT(tfd_ops_infer(r, 2, ri, rs, NULL, 4, &n, types, shapes, st), TFD_OK);
  CHECK_INT(shapes[0].ndims, -1);
  tfd_tensor_unref(shape);

  /* QueueSizeV2 is int32, whatever its input; a dequeue has one output per component, within cap. */
  tfd_dtype res[] = {TFD_RESOURCE};
  tfd_shape scalar[] = {{.ndims = 0}};
  tfd_node_def *qs = tfd_graph_def_add_node(d, "qs", "QueueSizeV2", NULL);
  CHECK_INT(tfd_ops_infer(qs, 1, res, scalar, NULL, 4, &n, types, shapes, st), TFD_OK);
  CHECK_INT(types[0], TFD_INT32);
  CHECK_INT(shapes[0].ndims, 0);
  tfd_node_def *dq = tfd_graph_def_add_node(d, "dq", "QueueDequeueV2", NULL);
  tfd_dtype comps[] = {TFD_FLOAT32, TFD_INT64, TFD_BOOL};
  tfd_attr_value ct = {.type = TFD_ATTR_LIST_TYPE, .list_len = 3, .list_type = comps};
  tfd_node_def_set_attr(dq, "component_types", &ct, NULL);
  CHECK_INT(tfd_ops_infer(dq, 1, res, scalar, NULL, 4, &n, types, shapes, st), TFD_OK);
  CHECK_INT(n, 3);
  CHECK_INT(types[2], TFD_BOOL);
  CHECK_INT(shapes[1].ndims, -1);
  CHECK_INT(tfd_ops_infer(dq, 1, res, scalar, NULL, 2, &n, types, shapes, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "has 3 outputs, room was given for 2");

  tfd_graph_def_free(d);
  tfd_status_free(st);
}

static const tfd_test tests[] = {
    {"inference", test_inference},
    {"tfd_ops_infer", test_ops_infer},
    {"pruning and feeds", test_prune_and_feeds},
    {"placer", test_placer},
};
TFD_TEST_MAIN(tests)
