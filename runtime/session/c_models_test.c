/* Models from files through the C API alone: tfd_graph_def_load, a session, a run, checked against
 * the same arithmetic done here in plain C. spec/oom/tiny holds a TensorFlow.js model written as the
 * converter writes them (an empty explicit_paddings list, weights in two shards) and its binary
 * GraphDef twin. */
#include <math.h>

#include "runtime/testing/harness.h"

/* The repository's root (CMake defines it for the C tests), with a slash. */
static const char *root(void) { return TFDEV_SOURCE_DIR "/"; }

static bool read_weights(float *w, int n) {
  float *p = w;
  for (int shard = 1; shard <= 2; shard++) {
    char path[1200];
    snprintf(path, sizeof path, "%sspec/oom/tiny/group1-shard%dof2.bin", root(), shard);
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    p += fread(p, sizeof *p, (size_t)(w + n - p), f);
    fclose(f);
  }
  return p == w + n;
}

/* make_tiny.py's network on x: conv 3x3x1x4 + bias, relu, max pool 2x2, dense 16x3 + bias, softmax. */
static void reference(const float *x, const float *w, float *probs) {
  const float *filter = w, *cbias = w + 36, *kernel = w + 40, *dbias = w + 88;
  float conv[4][4][4], flat[16], logits[3], sum = 0;
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++)
      for (int o = 0; o < 4; o++) {
        float v = cbias[o];
        for (int a = 0; a < 3; a++)
          for (int b = 0; b < 3; b++) v += x[(i + a) * 6 + j + b] * filter[(a * 3 + b) * 4 + o];
        conv[i][j][o] = v > 0 ? v : 0;
      }
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++)
      for (int o = 0; o < 4; o++) {
        float m = conv[2 * i][2 * j][o];
        m = fmaxf(m, fmaxf(conv[2 * i][2 * j + 1][o], fmaxf(conv[2 * i + 1][2 * j][o], conv[2 * i + 1][2 * j + 1][o])));
        flat[(i * 2 + j) * 4 + o] = m;
      }
  for (int k = 0; k < 3; k++) {
    logits[k] = dbias[k];
    for (int i = 0; i < 16; i++) logits[k] += flat[i] * kernel[i * 3 + k];
  }
  for (int k = 0; k < 3; k++) sum += probs[k] = expf(logits[k]);
  for (int k = 0; k < 3; k++) probs[k] /= sum;
}

static void run_tiny(const char *file) {
  char path[1200];
  snprintf(path, sizeof path, "%sspec/oom/tiny/%s", root(), file);
  tfd_status *st = tfd_status_new();
  tfd_graph_def *g = NULL;
  tfd_graph_def_load(path, &g, st);
  CHECK_INT(tfd_status_code(st), TFD_OK);
  tfd_session *s = NULL;
  if (g) tfd_session_new(NULL, NULL, NULL, &s, st);
  CHECK(s != NULL);
  /* An empty list in a list(int) attr (explicit_paddings) is a valid value, as in TensorFlow. */
  if (s) CHECK_INT(tfd_session_create(s, g, st), TFD_OK);
  CHECK_STR(tfd_status_message(st), "");
  float x[36], w[91], want[3];
  for (int i = 0; i < 36; i++) x[i] = (float)((i * 7) % 11) / 5 - 1;
  CHECK(read_weights(w, 91));
  reference(x, w, want);
  int64_t dims[4] = {1, 6, 6, 1};
  tfd_tensor *in = NULL, *out = NULL;
  tfd_tensor_from_bytes(NULL, TFD_FLOAT32, dims, 4, x, sizeof x, &in, st);
  const char *feed = "x:0", *fetch = "probs:0";
  if (s) CHECK_INT(tfd_session_run(s, NULL, &feed, &in, 1, &fetch, 1, NULL, 0, &out, NULL, st), TFD_OK);
  CHECK(out && tfd_tensor_numel(out) == 3);
  for (int k = 0; out && k < 3; k++) {
    float got = ((const float *)tfd_tensor_const_data(out))[k];
    if (fabsf(got - want[k]) > 1e-5f) {
      fprintf(stderr, "%s: probs[%d] = %g, want %g\n", file, k, got, want[k]);
      CHECK(false);
    }
  }
  tfd_tensor_unref(in);
  tfd_tensor_unref(out);
  tfd_session_free(s);
  tfd_graph_def_free(g);
  tfd_status_free(st);
}

static void test_tfjs_model(void) { run_tiny("model.json"); }
static void test_binary_graph_def(void) { run_tiny("model.pb"); }

static const tfd_test tests[] = {
    {"tfjs_model", test_tfjs_model},
    {"binary_graph_def", test_binary_graph_def},
};

TFD_TEST_MAIN(tests)
