/* tfd_model (<tfdev/model.h>): a model's inputs and outputs from a TensorFlow.js signature and from a
 * bare GraphDef (spec/oom/tiny holds the same network in both formats), runs in the model's order,
 * one spelling for an input whatever the format, and the errors of a caller who gets it wrong. */
#include <math.h>

#include "runtime/testing/graph_builder.h"
#include "runtime/testing/harness.h"

static tfd_model *load_tiny(const char *file, const tfd_session_options *o, tfd_status *st) {
  char path[1200];
  snprintf(path, sizeof path, "%s/spec/oom/tiny/%s", TFDEV_SOURCE_DIR, file);
  tfd_model *made = NULL;
  tfd_model_load(path, o, &made, st);
  return made;
}

static tfd_tensor *tiny_input(void) {
  float x[36];
  for (int i = 0; i < 36; i++) x[i] = (float)((i * 7) % 11) / 11 - 0.4f;
  int64_t dims[] = {1, 6, 6, 1};
  return tg_f32(x, dims, 4);
}

static void test_signature_and_bare_graph_agree(void) {
  tfd_status *st = tfd_status_new();
  tfd_model *js = load_tiny("model.json", NULL, st), *pb = js ? load_tiny("model.pb", NULL, st) : NULL;
  CHECK_INT(tfd_status_code(st), TFD_OK);
  if (!js || !pb) return;
  int64_t dims[8];
  /* model.json: its signature, in the file's order, shapes included */
  CHECK_INT(tfd_model_num_inputs(js), 1);
  CHECK_INT(tfd_model_num_outputs(js), 1);
  CHECK_STR(tfd_model_input_name(js, 0), "x");
  CHECK_STR(tfd_model_input_tensor(js, 0), "x:0");
  CHECK_INT(tfd_model_input_dtype(js, 0), TFD_FLOAT32);
  CHECK_INT(tfd_model_input_shape(js, 0, dims, 8), 4);
  CHECK(dims[0] == 1 && dims[1] == 6 && dims[2] == 6 && dims[3] == 1);
  CHECK_STR(tfd_model_output_name(js, 0), "probs");
  CHECK_INT(tfd_model_output_shape(js, 0, dims, 1), 2); /* the rank, whatever room was given */
  CHECK(dims[0] == 1);
  /* model.pb: no signature; the Placeholder in (the same name), the sink out, its dtype from the graph */
  CHECK_INT(tfd_model_num_inputs(pb), 1);
  CHECK_STR(tfd_model_input_name(pb, 0), "x");
  CHECK_INT(tfd_model_input_shape(pb, 0, dims, 8), 4);
  CHECK_INT(tfd_model_num_outputs(pb), 1);
  CHECK_STR(tfd_model_output_name(pb, 0), "probs:0");
  CHECK_INT(tfd_model_output_dtype(pb, 0), TFD_FLOAT32);
  CHECK_INT(tfd_model_output_shape(pb, 0, dims, 8), -1);
  /* both compute the same probabilities */
  tfd_tensor *x = tiny_input(), *a = NULL, *b = NULL;
  CHECK_INT(tfd_model_run(js, &x, 1, &a, 1, st), TFD_OK);
  CHECK_INT(tfd_model_run(pb, &x, 1, &b, 1, st), TFD_OK);
  if (a && b) {
    const float *pa = tfd_tensor_const_data(a), *pbv = tfd_tensor_const_data(b);
    CHECK_INT(tfd_tensor_numel(a), 3);
    CHECK(fabsf(pa[0] + pa[1] + pa[2] - 1) < 1e-5f);
    for (int i = 0; i < 3; i++) CHECK(pa[i] == pbv[i] && pa[i] > 0);
  }
  /* the session is the model's, for everything else */
  const char *feed[] = {"x"}, *fetch[] = {"probs"};
  tfd_tensor *c = NULL;
  CHECK_INT(tfd_session_run(tfd_model_session(js), NULL, feed, &x, 1, fetch, 1, NULL, 0, &c, NULL, st), TFD_OK);
  CHECK(c && a && memcmp(tfd_tensor_const_data(c), tfd_tensor_const_data(a), 12) == 0);
  tfd_tensor_unref(a), tfd_tensor_unref(b), tfd_tensor_unref(c), tfd_tensor_unref(x);
  tfd_model_free(js);
  tfd_model_free(pb);
  tfd_status_free(st);
}

/* y = x * 2 + z, with a signature keyed the way some TensorFlow.js models key it ("x:0"). */
static tfd_graph_def *doubler(bool signature) {
  tfd_graph_def *g = tfd_graph_def_new();
  tg_set_type(tg_node(g, "x", "Placeholder", NULL, NULL, NULL), "dtype", TFD_FLOAT32);
  tg_set_type(tg_node(g, "z", "Placeholder", NULL, NULL, NULL), "dtype", TFD_FLOAT32);
  tg_set_tensor(tg_node(g, "two", "Const", NULL, NULL, NULL), "value", tg_scalar(2));
  tg_node(g, "x2", "Mul", "x", "two", NULL);
  tg_node(g, "y", "AddV2", "x2", "z", NULL);
  tg_node(g, "neg", "Neg", "x", NULL, NULL);
  if (signature) {
    tfd_graph_def_add_signature(g, false, "z", "z:0", TFD_FLOAT32, NULL, NULL);
    tfd_graph_def_add_signature(g, false, "x:0", "x:0", TFD_FLOAT32, NULL, NULL);
    tfd_graph_def_add_signature(g, true, "out", "y:0", 0, NULL, NULL);
  }
  return g;
}

static void test_orders_and_spellings(void) {
  tfd_status *st = tfd_status_new();
  tfd_graph_def *g = doubler(true), *bare = doubler(false);
  tfd_model *m = NULL;
  tfd_model_new(g, NULL, &m, st);
  tfd_model *b = NULL;
  tfd_model_new(bare, NULL, &b, st);
  tfd_graph_def_free(g);
  tfd_graph_def_free(bare);
  CHECK(m && b);
  if (!m || !b) return;
  CHECK_STR(tfd_model_input_name(m, 0), "z");
  CHECK_STR(tfd_model_input_name(m, 1), "x"); /* "x:0" keyed, "x" named, as the bare graph names it */
  CHECK_STR(tfd_model_input_tensor(m, 1), "x:0");
  CHECK_INT(tfd_model_output_dtype(m, 0), TFD_FLOAT32); /* asked of the graph: the signature had none */
  CHECK_INT(tfd_model_input_shape(m, 0, NULL, 0), -1);
  tfd_tensor *in[] = {tg_scalar(10), tg_scalar(3)}, *out = NULL;
  CHECK_INT(tfd_model_run(m, in, 2, &out, 1, st), TFD_OK); /* z = 10, x = 3 */
  CHECK(out && *(const float *)tfd_tensor_const_data(out) == 16);
  tfd_tensor_unref(out);
  /* bare: Placeholders x, z; sinks y and neg, in graph order */
  CHECK_STR(tfd_model_input_name(b, 0), "x");
  CHECK_INT(tfd_model_num_outputs(b), 2);
  CHECK_STR(tfd_model_output_name(b, 0), "y:0");
  CHECK_STR(tfd_model_output_name(b, 1), "neg:0");
  tfd_tensor *outs[2] = {NULL, NULL};
  CHECK_INT(tfd_model_run(b, in, 2, outs, 2, st), TFD_OK); /* x = 10, z = 3 */
  CHECK(outs[0] && *(const float *)tfd_tensor_const_data(outs[0]) == 23);
  CHECK(outs[1] && *(const float *)tfd_tensor_const_data(outs[1]) == -10);
  tfd_tensor_unref(outs[0]), tfd_tensor_unref(outs[1]);
  /* a caller who gets it wrong */
  CHECK_INT(tfd_model_run(m, in, 1, &out, 1, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "the model takes 2 inputs and gives 1 outputs, got 1 and 1");
  tfd_tensor *holes[] = {in[0], NULL};
  CHECK_INT(tfd_model_run(m, holes, 2, &out, 1, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "input 1 ('x') is NULL");
  CHECK_INT(tfd_model_run(m, in, 2, NULL, 1, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "outputs is NULL");
  int32_t i32 = 1;
  tfd_tensor *wrong[] = {in[0], tfd_test_tensor(TFD_INT32, NULL, 0, &i32, 4, NULL)};
  out = NULL;
  CHECK(tfd_model_run(m, wrong, 2, &out, 1, st) != TFD_OK);
  CHECK_CONTAINS(tfd_status_message(st), "x");
  tfd_status_reset(st);
  CHECK(out == NULL);
  tfd_tensor_unref(wrong[1]);
  CHECK(tfd_model_input_name(m, 2) == NULL && tfd_model_output_name(m, -1) == NULL);
  CHECK(tfd_model_input_dtype(m, 9) == 0 && tfd_model_output_shape(m, 1, NULL, 0) == -1);
  tfd_tensor_unref(in[0]), tfd_tensor_unref(in[1]);
  tfd_model_free(m);
  tfd_model_free(b);
  tfd_status_free(st);
}

static void test_load_errors(void) {
  tfd_status *st = tfd_status_new();
  CHECK(tfd_model_load("/nonexistent/model.json", NULL, &(tfd_model *){NULL}, st) != TFD_OK);
  CHECK_STATUS(st, TFD_NOT_FOUND, "/nonexistent/model.json");
  CHECK(tfd_model_new(NULL, NULL, &(tfd_model *){NULL}, st) != TFD_OK);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "no graph def");
  tfd_graph_def *g = tfd_graph_def_new();
  tg_node(g, "y", "Neg", "nowhere", NULL, NULL);
  CHECK(tfd_model_new(g, NULL, &(tfd_model *){NULL}, st) != TFD_OK); /* the session's error, as it gives it */
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "nowhere");
  tfd_graph_def_free(g);
  tfd_session_options *o = tfd_session_options_new();
  tfd_session_options_set_intra_op_threads(o, 1);
  tfd_model *m = load_tiny("model.pb", o, st);
  tfd_session_options_free(o); /* read during the call only */
  CHECK(m != NULL);
  tfd_model_free(m);
  tfd_model_free(NULL);
  CHECK(tfd_model_num_inputs(NULL) == 0 && tfd_model_session(NULL) == NULL);
  CHECK_STR(tfd_version(), TFDEV_VERSION);
  tfd_status_free(st);
}

/* A TensorFlow.js layers model (spec/layers/functional, made by tfjs-layers): two inputs by layer
 * name, two outputs, through the C API alone. */
static void test_layers_model(void) {
  tfd_status *st = tfd_status_new();
  tfd_model *m = NULL;
  tfd_model_load(TFDEV_SOURCE_DIR "/spec/layers/functional", NULL, &m, st);
  CHECK_INT(tfd_status_code(st), TFD_OK);
  if (!m) return;
  CHECK_INT(tfd_model_num_inputs(m), 2);
  CHECK_STR(tfd_model_input_name(m, 0), "a");
  CHECK_STR(tfd_model_input_name(m, 1), "b");
  int64_t dims[4];
  CHECK_INT(tfd_model_input_shape(m, 0, dims, 4), 2);
  CHECK(dims[0] == -1 && dims[1] == 6);
  CHECK_INT(tfd_model_num_outputs(m), 2);
  CHECK_STR(tfd_model_output_name(m, 0), "scores");
  CHECK_STR(tfd_model_output_name(m, 1), "flags");
  float x[12] = {0.1f, -0.2f, 0.3f, 0.4f, -0.5f, 0.6f, 0.7f, 0.8f, -0.9f, 1.0f, 0.0f, 0.2f};
  int64_t in_dims[2] = {2, 6};
  tfd_tensor *in[2] = {tg_f32(x, in_dims, 2), tg_f32(x, in_dims, 2)}, *out[2] = {NULL, NULL};
  CHECK_INT(tfd_model_run(m, in, 2, out, 2, st), TFD_OK);
  CHECK(out[0] && tfd_tensor_ndims(out[0]) == 2 && tfd_tensor_dim(out[0], 0) == 2 && tfd_tensor_dim(out[0], 1) == 3);
  CHECK(out[1] && tfd_tensor_dim(out[1], 1) == 2);
  for (int i = 0; out[1] && i < 4; i++) { /* sigmoid outputs */
    float f = ((const float *)tfd_tensor_const_data(out[1]))[i];
    CHECK(f > 0 && f < 1);
  }
  for (int i = 0; i < 2; i++) tfd_tensor_unref(in[i]), tfd_tensor_unref(out[i]);
  tfd_model_free(m);
  tfd_status_free(st);
}

static const tfd_test tests[] = {
    {"layers_model", test_layers_model},
    {"signature_and_bare_graph_agree", test_signature_and_bare_graph_agree},
    {"orders_and_spellings", test_orders_and_spellings},
    {"load_errors", test_load_errors},
};
TFD_TEST_MAIN(tests)
