/* The files a model names stay in its folder, through the C API (tfd_graph_def_load and its
 * options): TensorFlow.js weight paths that climb out, are absolute, or lead out through a symbolic
 * link are refused before anything is read, so are directories, FIFOs and devices, and no file is
 * read past what the manifest declares. A hang on a FIFO or a read of /dev/zero kills the test by
 * alarm() rather than blocking the suite. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/testing/harness.h"

static char root[64]; /* a fresh directory; root/m is the model's folder */

static void write_file(const char *path, const void *bytes, size_t n) {
  FILE *f = fopen(path, "wb");
  CHECK(f != NULL);
  if (!f) return;
  CHECK(fwrite(bytes, 1, n, f) == n);
  fclose(f);
}

static char *at(const char *rel) {
  static char buf[4][512];
  static int k;
  char *b = buf[k++ % 4];
  snprintf(b, sizeof buf[0], "%s/%s", root, rel);
  return b;
}

/* model.json of one Const w (two float32s) whose bytes come from the weight file `name`. */
static void write_model(const char *name) {
  char json[2048];
  snprintf(json, sizeof json,
           "{\"format\": \"graph-model\", \"modelTopology\": {\"node\": ["
           "{\"name\": \"w\", \"op\": \"Const\", \"attr\": {\"dtype\": {\"type\": \"DT_FLOAT\"}, \"value\": {\"tensor\":"
           " {\"dtype\": \"DT_FLOAT\", \"tensorShape\": {\"dim\": [{\"size\": \"2\"}]}}}}}]},"
           " \"weightsManifest\": [{\"paths\": [\"%s\"], \"weights\": [{\"name\": \"w\", \"shape\": [2], \"dtype\": "
           "\"float32\"}]}]}",
           name);
  write_file(at("m/model.json"), json, strlen(json));
}

static void setup(void) {
  snprintf(root, sizeof root, "/tmp/tfdev_model_files_XXXXXX");
  CHECK(mkdtemp(root) != NULL);
  CHECK(mkdir(at("m"), 0700) == 0);
  CHECK(mkdir(at("m/sub"), 0700) == 0);
  float secret[2] = {1234.5f, -6789.25f}, ok[2] = {1, 2};
  write_file(at("secret.bin"), secret, sizeof secret);
  write_file(at("m/ok.bin"), ok, sizeof ok);
  CHECK(symlink("../secret.bin", at("m/link.bin")) == 0);
  CHECK(symlink("/dev/zero", at("m/zero.bin")) == 0);
  CHECK(symlink("ok.bin", at("m/alias.bin")) == 0);
  CHECK(mkfifo(at("m/fifo.bin"), 0600) == 0);
  float big[3] = {1, 2, 3};
  write_file(at("m/big.bin"), big, sizeof big);
  write_file(at("m/small.bin"), big, 4);
}

static void teardown(void) {
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
  CHECK(system(cmd) == 0);
}

/* Loads root/m/model.json naming `name`; checks the code and that the message names the path as
 * written, after fragment. */
static void check_refused(const char *name, tfd_code code, const char *fragment) {
  write_model(name);
  tfd_status *st = tfd_status_new();
  alarm(20);
  tfd_graph_def *g = NULL;
  tfd_graph_def_load(at("m/model.json"), &g, st);
  alarm(0);
  CHECK(g == NULL);
  if (g) fprintf(stderr, "  '%s' was read\n", name);
  tfd_graph_def_free(g);
  char written[600];
  snprintf(written, sizeof written, "weight file '%s': ", name);
  CHECK_CONTAINS(tfd_status_message(st), written);
  CHECK_STATUS(st, code, fragment);
  tfd_status_free(st);
}

static void test_paths_leading_out_are_refused(void) {
  setup();
  check_refused("../secret.bin", TFD_INVALID_ARGUMENT, "leads outside the model's directory");
  check_refused("sub/../../secret.bin", TFD_INVALID_ARGUMENT, "leads outside the model's directory");
  check_refused("link.bin", TFD_INVALID_ARGUMENT, "leads outside the model's directory");
  check_refused(at("secret.bin"), TFD_INVALID_ARGUMENT, "is an absolute path");
  check_refused("zero.bin", TFD_INVALID_ARGUMENT, "leads outside the model's directory");
  check_refused("/dev/zero", TFD_INVALID_ARGUMENT, "is an absolute path");
  check_refused("missing.bin", TFD_NOT_FOUND, "No such file");
  teardown();
}

static void test_only_regular_files(void) {
  setup();
  check_refused("fifo.bin", TFD_INVALID_ARGUMENT, "is a FIFO, not a regular file");
  check_refused("sub", TFD_INVALID_ARGUMENT, "is a directory, not a regular file");
  check_refused("", TFD_INVALID_ARGUMENT, "an empty path");
  teardown();
}

static void test_declared_size(void) {
  setup();
  write_model("big.bin");
  tfd_status *st = tfd_status_new();
  CHECK(tfd_graph_def_load(at("m/model.json"), &(tfd_graph_def *){NULL}, st) != TFD_OK);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "weightsManifest[0]: the weights take 8 bytes but the files hold 12");
  write_model("small.bin");
  CHECK(tfd_graph_def_load(at("m/model.json"), &(tfd_graph_def *){NULL}, st) != TFD_OK);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "weight 'w': needs 8 bytes at offset 0, but the group's files hold 4");
  tfd_status_free(st);
  teardown();
}

static void test_inside_still_loads(void) {
  setup();
  const char *names[] = {"ok.bin", "alias.bin", "sub/../ok.bin", "./ok.bin"};
  tfd_status *st = tfd_status_new();
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    write_model(names[i]);
    tfd_graph_def *g = NULL;
    tfd_graph_def_load(at("m/model.json"), &g, st);
    CHECK(g != NULL);
    if (!g) {
      fprintf(stderr, "  %s: %s\n", names[i], tfd_status_message(st));
      tfd_status_reset(st);
      continue;
    }
    const tfd_attr_value *v = tfd_node_def_attr(tfd_graph_def_find(g, "w"), "value");
    CHECK(v && ((const float *)tfd_tensor_const_data(v->tensor))[1] == 2.0f);
    tfd_graph_def_free(g);
  }
  tfd_status_free(st);
  teardown();
}

/* By bare file name the weight files' directory is the current one: an absolute path is refused
 * there too (it used to be read as is). */
static void test_bare_name(void) {
  setup();
  char cwd[4096];
  CHECK(getcwd(cwd, sizeof cwd) != NULL);
  CHECK(chdir(at("m")) == 0);
  tfd_status *st = tfd_status_new();
  write_model(at("secret.bin"));
  CHECK(tfd_graph_def_load("model.json", &(tfd_graph_def *){NULL}, st) != TFD_OK);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "model.json: weight file '");
  write_model("../secret.bin");
  CHECK(tfd_graph_def_load("model.json", &(tfd_graph_def *){NULL}, st) != TFD_OK);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "model.json: weight file '../secret.bin': leads outside the model's directory");
  write_model("ok.bin");
  tfd_graph_def *g = NULL;
  tfd_graph_def_load("model.json", &g, st);
  CHECK(g != NULL);
  tfd_graph_def_free(g);
  CHECK(chdir(cwd) == 0);
  tfd_status_free(st);
  teardown();
}

/* weights_dir confines as the model's directory does; a host's reader is told the room left. */
static size_t room_seen;
static unsigned char *too_long(void *arg, const char *name, size_t *len, tfd_status *st) {
  (void)arg, (void)name, (void)st;
  room_seen = *len;
  unsigned char *b = calloc(1, 12);
  *len = 12;
  return b;
}

static void test_options(void) {
  setup();
  write_model("../secret.bin");
  tfd_status *st = tfd_status_new();
  size_t n = 0;
  FILE *f = fopen(at("m/model.json"), "rb");
  char text[4096];
  n = f ? fread(text, 1, sizeof text, f) : 0;
  if (f) fclose(f);
  tfd_graph_def_options o = {.weights_dir = at("m")};
  CHECK(tfd_graph_def_parse_with_options(text, n, &o, &(tfd_graph_def *){NULL}, st) != TFD_OK);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "weight file '../secret.bin': leads outside the model's directory");
  CHECK(tfd_graph_def_load_with_options(at("m/model.json"), &o, &(tfd_graph_def *){NULL}, st) != TFD_OK);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "weight file '../secret.bin': leads outside the model's directory");
  o = (tfd_graph_def_options){.weights = too_long};
  CHECK(tfd_graph_def_parse_with_options(text, n, &o, &(tfd_graph_def *){NULL}, st) != TFD_OK);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "the weights take 8 bytes but the files hold 12");
  CHECK_INT(room_seen, 8);
  tfd_status_free(st);
  teardown();
}

static const tfd_test tests[] = {
    {"paths_leading_out_are_refused", test_paths_leading_out_are_refused},
    {"only_regular_files", test_only_regular_files},
    {"declared_size", test_declared_size},
    {"inside_still_loads", test_inside_still_loads},
    {"bare_name", test_bare_name},
    {"options", test_options},
};

TFD_TEST_MAIN(tests)
