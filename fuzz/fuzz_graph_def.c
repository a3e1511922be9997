/* Fuzzes the binary GraphDef reader and writer (tfd_graph_def_parse and
 * tfd_graph_def_serialize, include/tfdev/graph_def.h). Input layout: the
 * bytes of a serialized tensorflow.GraphDef, as a .pb file holds them.
 * A parse either fails with a status or yields a graph def; a graph def
 * that serializes must parse back with as many nodes, and serializing that
 * must give the same bytes again (the writer is a function of the graph
 * def). abort() otherwise. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfdev/graph_def.h"
#include "tfdev/tensor.h"
#include "tfdev/status.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The most tensor bytes a graph may hold for its write and read back to run. */
#define ROUND_TRIP_MAX ((size_t)64 << 20)

static size_t tensor_bytes(const tfd_graph_def *g) {
  size_t total = 0;
  for (size_t i = 0; i < tfd_graph_def_num_nodes(g); i++) {
    const tfd_node_def *nd = tfd_graph_def_node(g, i);
    for (size_t a = 0; a < tfd_node_def_num_attrs(nd); a++) {
      const tfd_attr_value *v = tfd_node_def_attr_at(nd, a);
      if (v && v->type == TFD_ATTR_TENSOR && v->tensor) total += tfd_tensor_byte_size(v->tensor);
    }
  }
  return total;
}

#define CHECK(cond)                                                                              \
  do {                                                                                           \
    if (!(cond)) {                                                                               \
      fprintf(stderr, "fuzz_graph_def: invariant failed at line %d: %s\n", __LINE__, #cond);     \
      abort();                                                                                   \
    }                                                                                            \
  } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tfd_status *st = tfd_status_new();
  tfd_graph_def *g = NULL;
  tfd_graph_def_parse(data, size, &g, st);
  if (!g) {
    CHECK(tfd_status_code(st) != TFD_OK && *tfd_status_message(st));
    tfd_status_free(st);
    return 0;
  }
  void *bytes = NULL, *again = NULL;
  size_t n = 0, n2 = 0;
  if (tensor_bytes(g) > ROUND_TRIP_MAX) {
    /* Not written: a few bytes may hold a constant of up to 1 GiB (the expansion cap), which the
     * write, the parse back and the second write would each hold again, past the fuzzer's memory
     * and time limits (fuzz/regressions/fuzz_graph_def/oom-near-cap-constant). The parse ran. */
  } else if (tfd_graph_def_serialize(g, &bytes, &n, st) != TFD_OK) {
    CHECK(tfd_status_code(st) != TFD_OK);
  } else {
    tfd_graph_def *back = NULL;
    tfd_graph_def_parse(bytes, n, &back, st);
    CHECK(back != NULL);
    CHECK(tfd_graph_def_num_nodes(back) == tfd_graph_def_num_nodes(g));
    CHECK(tfd_graph_def_serialize(back, &again, &n2, st) == TFD_OK);
    CHECK(n2 == n && memcmp(again, bytes, n) == 0);
    tfd_graph_def_free(back);
  }
  free(bytes);
  free(again);
  tfd_graph_def_free(g);
  tfd_status_free(st);
  return 0;
}
