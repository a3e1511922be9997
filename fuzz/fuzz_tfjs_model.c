/* Fuzzes the TensorFlow.js graph model loader (model.json and its weight
 * files, runtime/import/graph_def_json.c). Input layout:
 *   bytes up to the first NUL   the text of model.json
 *   the rest                    the bytes of every weight file the manifest
 *                               names (each path gets the same bytes)
 * A load either fails with a status or yields a graph def, which must then
 * serialize as a binary GraphDef and parse back with as many nodes. abort()
 * otherwise. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/framework/graph_def_internal.h"
#include "tfdev/status.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                              \
  do {                                                                                           \
    if (!(cond)) {                                                                               \
      fprintf(stderr, "fuzz_tfjs_model: invariant failed at line %d: %s\n", __LINE__, #cond);    \
      abort();                                                                                   \
    }                                                                                            \
  } while (0)

typedef struct blob {
  const uint8_t *data;
  size_t size;
} blob;

static unsigned char *serve(void *arg, const char *name, size_t *len, tfd_status *st) {
  const blob *b = arg;
  (void)name;
  unsigned char *copy = malloc(b->size ? b->size : 1);
  if (!copy) {
    tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
    return NULL;
  }
  if (b->size) memcpy(copy, b->data, b->size);
  *len = b->size;
  return copy;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const uint8_t *nul = memchr(data, 0, size);
  size_t text_len = nul ? (size_t)(nul - data) : size;
  blob weights = {nul ? nul + 1 : data + size, nul ? size - text_len - 1 : 0};
  tfd_status *st = tfd_status_new();
  /* Through the public entry, as a host reads a model from memory: node devices are dropped. */
  tfd_graph_def_options opts = {.format = "tfjs", .weights = serve, .weights_arg = &weights};
  tfd_graph_def *g = NULL;
  tfd_graph_def_parse_with_options(data, text_len, &opts, &g, st);
  if (!g) {
    CHECK(tfd_status_code(st) != TFD_OK && *tfd_status_message(st));
  } else {
    tfd_graph_def *copy = tfd_graph_def_copy(g); /* the signature, if any, is whole and copies */
    for (int o = 0; o < 2; o++) {
      for (size_t i = 0; i < tfd_graph_def_signature_size(g, o); i++) {
        const tfd_signature_entry *e = tfd_graph_def_signature_entry(g, o, i);
        CHECK(e && *e->key && *e->tensor && e->shape.ndims <= TFD_MAX_DIMS);
      }
      CHECK(!copy || tfd_graph_def_signature_size(copy, o) == tfd_graph_def_signature_size(g, o));
    }
    tfd_graph_def_free(copy);
    void *bytes = NULL;
    size_t n = 0;
    if (tfd_graph_def_serialize(g, &bytes, &n, st) == TFD_OK) {
      tfd_graph_def *back = NULL;
      tfd_graph_def_parse(bytes, n, &back, st);
      CHECK(back != NULL);
      CHECK(tfd_graph_def_num_nodes(back) == tfd_graph_def_num_nodes(g));
      tfd_graph_def_free(back);
    }
    free(bytes);
    tfd_graph_def_free(g);
  }
  tfd_status_free(st);
  return 0;
}
