/* Function libraries through the C API: a TensorFlow.js model whose While body calls an If (both in
 * modelTopology.library) loads with tfd_graph_def_parse_with_options, holds no functional node once
 * loaded, and runs in a session to the values the loop computes; a missing function is NOT_FOUND. */
#include <stdlib.h>
#include <string.h>

#include "runtime/testing/harness.h"
#include "tfdev/session.h"

/* while (i < 4) { x = i odd ? x + 10 : x * 0.5; i++ } */
static const char *model =
    "{\"format\": \"graph-model\", \"modelTopology\": {\"node\": ["
    "{\"name\": \"x\", \"op\": \"Placeholder\", \"attr\": {\"dtype\": {\"type\": \"DT_FLOAT\"}}},"
    "{\"name\": \"i0\", \"op\": \"Const\", \"attr\": {\"value\": {\"tensor\": {\"dtype\": \"DT_INT32\", \"tensorShape\": {},"
    " \"intVal\": [0]}}}},"
    "{\"name\": \"loop\", \"op\": \"While\", \"input\": [\"x\", \"i0\"], \"attr\": {\"T\": {\"list\": {\"type\": [\"DT_FLOAT\","
    " \"DT_INT32\"]}}, \"cond\": {\"func\": {\"name\": \"c\"}}, \"body\": {\"func\": {\"name\": \"b\"}},"
    " \"output_shapes\": {\"list\": {\"shape\": [{}, {}]}}}}],"
    "\"library\": {\"function\": ["
    "{\"signature\": {\"name\": \"c\", \"inputArg\": [{\"name\": \"x\", \"type\": \"DT_FLOAT\"}, {\"name\": \"i\", \"type\":"
    " \"DT_INT32\"}], \"outputArg\": [{\"name\": \"ok\", \"type\": \"DT_BOOL\"}]}, \"nodeDef\": ["
    "{\"name\": \"four\", \"op\": \"Const\", \"attr\": {\"value\": {\"tensor\": {\"dtype\": \"DT_INT32\", \"tensorShape\": {},"
    " \"intVal\": [4]}}}},"
    "{\"name\": \"lt\", \"op\": \"Less\", \"input\": [\"i\", \"four:output:0\"]}], \"ret\": {\"ok\": \"lt:z:0\"}},"
    "{\"signature\": {\"name\": \"b\", \"inputArg\": [{\"name\": \"x\", \"type\": \"DT_FLOAT\"}, {\"name\": \"i\", \"type\":"
    " \"DT_INT32\"}], \"outputArg\": [{\"name\": \"x2\", \"type\": \"DT_FLOAT\"}, {\"name\": \"i2\", \"type\": \"DT_INT32\"}]},"
    " \"nodeDef\": ["
    "{\"name\": \"one\", \"op\": \"Const\", \"attr\": {\"value\": {\"tensor\": {\"dtype\": \"DT_INT32\", \"tensorShape\": {},"
    " \"intVal\": [1]}}}},"
    "{\"name\": \"odd\", \"op\": \"Cast\", \"input\": [\"mod:z:0\"], \"attr\": {\"DstT\": {\"type\": \"DT_BOOL\"}}},"
    "{\"name\": \"two\", \"op\": \"Const\", \"attr\": {\"value\": {\"tensor\": {\"dtype\": \"DT_INT32\", \"tensorShape\": {},"
    " \"intVal\": [2]}}}},"
    "{\"name\": \"mod\", \"op\": \"FloorMod\", \"input\": [\"i\", \"two:output:0\"]},"
    "{\"name\": \"br\", \"op\": \"StatelessIf\", \"input\": [\"odd:y:0\", \"x\"], \"attr\": {\"Tout\": {\"list\": {\"type\":"
    " [\"DT_FLOAT\"]}}, \"then_branch\": {\"func\": {\"name\": \"add\"}}, \"else_branch\": {\"func\": {\"name\":"
    " \"half\"}}}},"
    "{\"name\": \"j\", \"op\": \"AddV2\", \"input\": [\"i\", \"one:output:0\"]}], \"ret\": {\"x2\": \"br:output:0\", \"i2\":"
    " \"j:z:0\"}},"
    "{\"signature\": {\"name\": \"add\", \"inputArg\": [{\"name\": \"a\", \"type\": \"DT_FLOAT\"}], \"outputArg\": [{\"name\":"
    " \"r\", \"type\": \"DT_FLOAT\"}]}, \"nodeDef\": ["
    "{\"name\": \"ten\", \"op\": \"Const\", \"attr\": {\"value\": {\"tensor\": {\"dtype\": \"DT_FLOAT\", \"tensorShape\": {},"
    " \"floatVal\": [10]}}}},"
    "{\"name\": \"s\", \"op\": \"AddV2\", \"input\": [\"a\", \"ten:output:0\"]}], \"ret\": {\"r\": \"s:z:0\"}},"
    "{\"signature\": {\"name\": \"half\", \"inputArg\": [{\"name\": \"a\", \"type\": \"DT_FLOAT\"}], \"outputArg\": [{\"name\":"
    " \"r\", \"type\": \"DT_FLOAT\"}]}, \"nodeDef\": ["
    "{\"name\": \"h\", \"op\": \"Const\", \"attr\": {\"value\": {\"tensor\": {\"dtype\": \"DT_FLOAT\", \"tensorShape\": {},"
    " \"floatVal\": [0.5]}}}},"
    "{\"name\": \"m\", \"op\": \"Mul\", \"input\": [\"a\", \"h:output:0\"]}], \"ret\": {\"r\": \"m:z:0\"}}"
    "]}}}";

static void test_while_with_an_if_in_its_body(void) {
  tfd_status *st = tfd_status_new();
  tfd_graph_def_options o = {.format = "tfjs"};
  tfd_graph_def *g = NULL;
  tfd_graph_def_parse_with_options(model, strlen(model), &o, &g, st);
  CHECK_STR(tfd_status_message(st), "");
  if (!g) {
    tfd_status_free(st);
    return;
  }
  for (size_t i = 0; i < tfd_graph_def_num_nodes(g); i++) {
    const char *op = tfd_node_def_op(tfd_graph_def_node(g, i));
    CHECK(strcmp(op, "While") != 0 && strcmp(op, "StatelessIf") != 0);
  }
  CHECK_STR(tfd_node_def_op(tfd_graph_def_find(g, "loop")), "IdentityN");
  tfd_session *s = NULL;
  tfd_session_new(NULL, NULL, NULL, &s, st);
  CHECK_INT(tfd_session_create(s, g, st), TFD_OK);
  float x = 4;
  tfd_tensor *in = NULL, *out[2] = {NULL, NULL};
  tfd_tensor_from_bytes(NULL, TFD_FLOAT32, NULL, 0, &x, sizeof x, &in, st);
  const char *feeds[] = {"x"}, *fetches[] = {"loop:0", "loop:1"};
  CHECK_INT(tfd_session_run(s, NULL, feeds, &in, 1, fetches, 2, NULL, 0, out, NULL, st), TFD_OK);
  if (out[0] && out[1]) {
    /* i = 0: halve (2), 1: add 10 (12), 2: halve (6), 3: add 10 (16) */
    CHECK(*(const float *)tfd_tensor_const_data(out[0]) == 16.0f);
    CHECK_INT(*(const int32_t *)tfd_tensor_const_data(out[1]), 4);
  }
  tfd_tensor_unref(out[0]);
  tfd_tensor_unref(out[1]);
  tfd_tensor_unref(in);
  tfd_session_free(s);
  tfd_graph_def_free(g);
  tfd_status_free(st);
}

static void test_missing_function(void) {
  tfd_status *st = tfd_status_new();
  char *broken = strdup(model);
  char *at = strstr(broken, "\"name\": \"half\"}}}");
  CHECK(at != NULL);
  if (at) memcpy(at + 9, "hole", 4); /* else_branch now names 'hole' */
  tfd_graph_def_options o = {.format = "tfjs"};
  tfd_graph_def *g = NULL;
  tfd_graph_def_parse_with_options(broken, strlen(broken), &o, &g, st);
  CHECK(g == NULL);
  CHECK_STATUS(st, TFD_NOT_FOUND, "node 'br' (StatelessIf): function 'hole' is not in the graph's library");
  tfd_graph_def_free(g);
  free(broken);
  tfd_status_free(st);
}

static const tfd_test tests[] = {
    {"while_with_an_if_in_its_body", test_while_with_an_if_in_its_body},
    {"missing_function", test_missing_function},
};

TFD_TEST_MAIN(tests)
