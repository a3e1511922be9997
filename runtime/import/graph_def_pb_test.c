/* Binary GraphDefs through the C API: every attr kind survives serialize + parse, files load by
 * path, and broken input is refused with a status. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "runtime/testing/harness.h"

static void set(tfd_node_def *n, const char *name, tfd_attr_value v) { CHECK_INT(tfd_node_def_set_attr(n, name, &v, NULL), TFD_OK); }

static tfd_graph_def *every_kind(void) {
  tfd_graph_def *g = tfd_graph_def_new();
  tfd_node_def *n = tfd_graph_def_add_node(g, "n", "NoOp", NULL);
  tfd_node_def_set_device(n, "/device:CPU:0", NULL);
  tfd_node_def_add_input(n, "^other", NULL);
  int64_t dims[2] = {2, 3}, li[3] = {1, -2, 1LL << 40};
  double lf[2] = {0.5, -2};
  tfd_dtype lt[2] = {TFD_INT64, TFD_BOOL};
  const char *ls[2] = {"BiasAdd", "Relu"};
  tfd_tensor *t = NULL;
  tfd_tensor_new(NULL, TFD_FLOAT64, dims, 2, &t, NULL);
  for (int i = 0; i < 6; i++) ((double *)tfd_tensor_data(t))[i] = i * 0.5 - 1;
  set(n, "i", (tfd_attr_value){.type = TFD_ATTR_INT, .i = -7});
  set(n, "f", (tfd_attr_value){.type = TFD_ATTR_FLOAT, .f = 0.25});
  set(n, "b", (tfd_attr_value){.type = TFD_ATTR_BOOL, .b = true});
  set(n, "s", (tfd_attr_value){.type = TFD_ATTR_STRING, .s = "SAME"});
  set(n, "t", (tfd_attr_value){.type = TFD_ATTR_TYPE, .dtype = TFD_INT32});
  set(n, "shape", (tfd_attr_value){.type = TFD_ATTR_SHAPE, .shape = {2, {-1, 4}}});
  set(n, "unknown", (tfd_attr_value){.type = TFD_ATTR_SHAPE, .shape = {-1, {0}}});
  set(n, "value", (tfd_attr_value){.type = TFD_ATTR_TENSOR, .tensor = t});
  set(n, "li", (tfd_attr_value){.type = TFD_ATTR_LIST_INT, .list_len = 3, .list_i = li});
  set(n, "lf", (tfd_attr_value){.type = TFD_ATTR_LIST_FLOAT, .list_len = 2, .list_f = lf});
  set(n, "lt", (tfd_attr_value){.type = TFD_ATTR_LIST_TYPE, .list_len = 2, .list_type = lt});
  set(n, "ls", (tfd_attr_value){.type = TFD_ATTR_LIST_STRING, .list_len = 2, .list_s = ls});
  tfd_tensor_unref(t);
  tfd_graph_def_add_node(g, "other", "NoOp", NULL);
  return g;
}

static void test_round_trip(void) {
  tfd_status *st = tfd_status_new();
  tfd_graph_def *g = every_kind();
  void *bytes = NULL;
  size_t n = 0;
  CHECK_INT(tfd_graph_def_serialize(g, &bytes, &n, st), TFD_OK);
  CHECK(n > 0);
  tfd_graph_def *back = NULL;
  tfd_graph_def_parse(bytes, n, &back, st);
  CHECK(back != NULL);
  if (!back) goto done;
  CHECK_INT(tfd_graph_def_num_nodes(back), 2);
  const tfd_node_def *m = tfd_graph_def_find(back, "n");
  CHECK_STR(tfd_node_def_device(m), "/device:CPU:0");
  CHECK_STR(tfd_node_def_input(m, 0), "^other");
  CHECK_INT(tfd_node_def_attr(m, "i")->i, -7);
  CHECK(tfd_node_def_attr(m, "f")->f == 0.25);
  CHECK(tfd_node_def_attr(m, "b")->b);
  CHECK_STR(tfd_node_def_attr(m, "s")->s, "SAME");
  CHECK_INT(tfd_node_def_attr(m, "t")->dtype, TFD_INT32);
  const tfd_attr_value *sh = tfd_node_def_attr(m, "shape");
  CHECK(sh->shape.ndims == 2 && sh->shape.dims[0] == -1 && sh->shape.dims[1] == 4);
  CHECK_INT(tfd_node_def_attr(m, "unknown")->shape.ndims, -1);
  const tfd_tensor *t = tfd_node_def_attr(m, "value")->tensor;
  CHECK_INT(tfd_tensor_dtype(t), TFD_FLOAT64);
  CHECK(tfd_tensor_ndims(t) == 2 && tfd_tensor_dim(t, 1) == 3);
  CHECK(((const double *)tfd_tensor_const_data(t))[5] == 1.5);
  const tfd_attr_value *li = tfd_node_def_attr(m, "li");
  CHECK(li->list_len == 3 && li->list_i[1] == -2 && li->list_i[2] == 1LL << 40);
  CHECK(tfd_node_def_attr(m, "lf")->list_f[1] == -2);
  CHECK_INT(tfd_node_def_attr(m, "lt")->list_type[1], TFD_BOOL);
  CHECK_STR(tfd_node_def_attr(m, "ls")->list_s[1], "Relu");
  /* The same bytes again from what was read. */
  void *again = NULL;
  size_t n2 = 0;
  CHECK_INT(tfd_graph_def_serialize(back, &again, &n2, st), TFD_OK);
  CHECK(n2 == n && memcmp(again, bytes, n) == 0);
  free(again);
  /* From a file. */
  char path[] = "/tmp/tfdev_pb_XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0 && write(fd, bytes, n) == (ssize_t)n);
  close(fd);
  tfd_graph_def *loaded = NULL;
  tfd_graph_def_load(path, &loaded, st);
  CHECK(loaded && tfd_graph_def_num_nodes(loaded) == 2);
  tfd_graph_def_free(loaded);
  /* Cut short: refused, and the status names the file. */
  fd = open(path, O_WRONLY | O_TRUNC);
  CHECK(fd >= 0 && write(fd, bytes, n - 5) == (ssize_t)(n - 5));
  close(fd);
  CHECK(tfd_graph_def_load(path, &(tfd_graph_def *){NULL}, st) != TFD_OK);
  CHECK_INT(tfd_status_code(st), TFD_INVALID_ARGUMENT);
  CHECK_CONTAINS(tfd_status_message(st), path);
  CHECK_CONTAINS(tfd_status_message(st), "not a binary GraphDef");
  unlink(path);
  CHECK(tfd_graph_def_load(path, &(tfd_graph_def *){NULL}, st) != TFD_OK);
  CHECK_INT(tfd_status_code(st), TFD_NOT_FOUND);
  tfd_graph_def_free(back);
done:
  free(bytes);
  tfd_graph_def_free(g);
  tfd_status_free(st);
}

static void test_resource_tensor_is_not_saved(void) {
  tfd_status *st = tfd_status_new();
  tfd_graph_def *g = tfd_graph_def_new();
  tfd_node_def *n = tfd_graph_def_add_node(g, "h", "Const", NULL);
  tfd_tensor *t = NULL;
  tfd_tensor_new(NULL, TFD_RESOURCE, NULL, 0, &t, NULL);
  set(n, "value", (tfd_attr_value){.type = TFD_ATTR_TENSOR, .tensor = t});
  tfd_tensor_unref(t);
  void *bytes = (void *)1;
  size_t size = 1;
  CHECK_INT(tfd_graph_def_serialize(g, &bytes, &size, st), TFD_INVALID_ARGUMENT);
  CHECK_CONTAINS(tfd_status_message(st), "node 'h', attr 'value': resource tensors cannot be saved");
  CHECK(bytes == NULL && size == 0);
  CHECK_INT(tfd_graph_def_serialize(NULL, &bytes, &size, st), TFD_INVALID_ARGUMENT);
  tfd_graph_def_free(g);
  tfd_status_free(st);
}

/* A host's weight reader: serves one file from memory and counts the calls. */
static unsigned char *serve_weights(void *arg, const char *name, size_t *len, tfd_status *st) {
  int *calls = arg;
  ++*calls;
  if (strcmp(name, "w.bin") != 0) {
    tfd_status_setf(st, TFD_NOT_FOUND, "no file %s", name);
    return NULL;
  }
  float w[2] = {1.5f, -2.0f};
  unsigned char *buf = malloc(sizeof w);
  memcpy(buf, w, sizeof w);
  *len = sizeof w;
  return buf;
}

static void test_options_and_signature(void) {
  static const char json[] =
      "{\"format\": \"graph-model\", \"modelTopology\": {\"node\": ["
      "{\"name\": \"x\", \"op\": \"Placeholder\", \"attr\": {\"dtype\": {\"type\": \"DT_FLOAT\"}}},"
      "{\"name\": \"w\", \"op\": \"Const\", \"attr\": {\"value\": {\"tensor\": {\"dtype\": \"DT_FLOAT\","
      " \"tensorShape\": {\"dim\": [{\"size\": \"2\"}]}}}}},"
      "{\"name\": \"y\", \"op\": \"Mul\", \"input\": [\"x\", \"w\"]}]},"
      "\"signature\": {\"inputs\": {\"in\": {\"name\": \"x:0\", \"dtype\": \"DT_FLOAT\"}},"
      " \"outputs\": {\"out\": {\"name\": \"y:0\", \"dtype\": \"DT_BFLOAT16\","
      " \"tensorShape\": {\"dim\": [{\"size\": \"-1\"}, {\"size\": \"2\"}]}}}},"
      "\"weightsManifest\": [{\"paths\": [\"w.bin\"], \"weights\": [{\"name\": \"w\", \"shape\": [2], \"dtype\": \"float32\"}]}]}";
  tfd_status *st = tfd_status_new();
  int calls = 0;
  tfd_graph_def_options o = {.weights = serve_weights, .weights_arg = &calls};
  tfd_graph_def *g = NULL;
  tfd_graph_def_parse_with_options(json, strlen(json), &o, &g, st);
  CHECK(g != NULL);
  CHECK_INT(calls, 1);
  const tfd_attr_value *v = tfd_node_def_attr(tfd_graph_def_find(g, "w"), "value");
  CHECK(v && ((const float *)tfd_tensor_const_data(v->tensor))[1] == -2.0f);
  CHECK_INT((int)tfd_graph_def_signature_size(g, false), 1);
  CHECK_INT((int)tfd_graph_def_signature_size(g, true), 1);
  const tfd_signature_entry *in = tfd_graph_def_signature_entry(g, false, 0), *out = tfd_graph_def_signature_entry(g, true, 0);
  CHECK_STR(in->key, "in");
  CHECK_STR(in->tensor, "x:0");
  CHECK_INT(in->dtype, TFD_FLOAT32);
  CHECK_INT(in->shape.ndims, -1);
  CHECK_STR(out->tensor, "y:0");
  CHECK_INT(out->dtype, 0); /* a dtype tfdev does not hold */
  CHECK(out->shape.ndims == 2 && out->shape.dims[0] == -1 && out->shape.dims[1] == 2);
  CHECK(tfd_graph_def_signature_entry(g, true, 1) == NULL);
  /* copies keep it; a host adds its own */
  tfd_graph_def *c = tfd_graph_def_copy(g);
  CHECK_STR(tfd_graph_def_signature_entry(c, true, 0)->key, "out");
  CHECK_INT(tfd_graph_def_add_signature(c, true, "extra", "x:0", TFD_FLOAT32, NULL, st), TFD_OK);
  CHECK_INT((int)tfd_graph_def_signature_size(c, true), 2);
  CHECK_INT(tfd_graph_def_add_signature(c, true, "", "x:0", TFD_FLOAT32, NULL, st), TFD_INVALID_ARGUMENT);
  CHECK_CONTAINS(tfd_status_message(st), "a signature output needs a key and a tensor name");
  tfd_status_reset(st);
  tfd_graph_def_free(c);
  tfd_graph_def_free(g);
  /* without a way to the weights, from memory */
  CHECK(tfd_graph_def_parse_with_options(json, strlen(json), NULL, &(tfd_graph_def *){NULL}, st) != TFD_OK);
  CHECK_STATUS(st, TFD_FAILED_PRECONDITION, "weight file w.bin: a model parsed from memory reads its weights through the options");
  o.format = "protobuf";
  CHECK(tfd_graph_def_parse_with_options(json, strlen(json), &o, &(tfd_graph_def *){NULL}, st) != TFD_OK);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "unknown model format 'protobuf'");
  o.format = "graph_def";
  CHECK(tfd_graph_def_parse_with_options(json, strlen(json), &o, &(tfd_graph_def *){NULL}, st) != TFD_OK);
  CHECK_INT(tfd_status_code(st), TFD_INVALID_ARGUMENT);
  tfd_status_reset(st);
  CHECK(tfd_graph_def_parse_with_options(NULL, 3, NULL, &(tfd_graph_def *){NULL}, st) != TFD_OK);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "no data");
  /* an empty buffer is an empty binary GraphDef */
  tfd_graph_def_parse_with_options(NULL, 0, NULL, &g, st);
  CHECK(g && tfd_graph_def_num_nodes(g) == 0 && tfd_graph_def_signature_size(g, true) == 0);
  tfd_graph_def_free(g);
  tfd_status_free(st);
}

/* A TensorFlow.js model's node devices are dropped, as TensorFlow.js drops them, unless asked to
 * keep them; a binary GraphDef keeps its own. */
static void test_tfjs_devices(void) {
  static const char json[] =
      "{\"format\": \"graph-model\", \"modelTopology\": {\"node\": ["
      "{\"name\": \"x\", \"op\": \"Placeholder\", \"attr\": {\"dtype\": {\"type\": \"DT_FLOAT\"}}},"
      "{\"name\": \"y\", \"op\": \"Relu\", \"input\": [\"x\"], \"device\": \"/device:CPU:0\"}]}}";
  tfd_status *st = tfd_status_new();
  tfd_graph_def *g = NULL;
  tfd_graph_def_parse_with_options(json, strlen(json), NULL, &g, st);
  CHECK(g != NULL);
  if (g) CHECK_STR(tfd_node_def_device(tfd_graph_def_find(g, "y")), "");
  tfd_graph_def_options o = {.keep_devices = true};
  tfd_graph_def *kept = NULL;
  tfd_graph_def_parse_with_options(json, strlen(json), &o, &kept, st);
  CHECK(kept != NULL);
  if (kept) CHECK_STR(tfd_node_def_device(tfd_graph_def_find(kept, "y")), "/device:CPU:0");
  /* the binary form of the kept graph keeps its device whatever the option says */
  size_t n = 0;
  void *bytes = NULL;
  if (kept) CHECK_INT(tfd_graph_def_serialize(kept, &bytes, &n, st), TFD_OK);
  tfd_graph_def *bin = NULL;
  if (bytes) tfd_graph_def_parse_with_options(bytes, n, NULL, &bin, st);
  CHECK(bin != NULL);
  if (bin) CHECK_STR(tfd_node_def_device(tfd_graph_def_find(bin, "y")), "/device:CPU:0");
  free(bytes);
  tfd_graph_def_free(bin);
  tfd_graph_def_free(kept);
  tfd_graph_def_free(g);
  tfd_status_free(st);
}

static const tfd_test tests[] = {
    {"tfjs_devices", test_tfjs_devices},
    {"round_trip", test_round_trip},
    {"resource_tensor_is_not_saved", test_resource_tensor_is_not_saved},
    {"options_and_signature", test_options_and_signature},
};

TFD_TEST_MAIN(tests)
