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
#include "tfdev/status.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                              \
  do {                                                                                           \
    if (!(cond)) {                                                                               \
      fprintf(stderr, "fuzz_graph_def: invariant failed at line %d: %s\n", __LINE__, #cond);     \
      abort();                                                                                   \
    }                                                                                            \
  } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tfd_status *st = tfd_status_new();
  tfd_graph_def *g = tfd_graph_def_parse(data, size, st);
  if (!g) {
    CHECK(tfd_status_code(st) != TFD_OK && *tfd_status_message(st));
    tfd_status_free(st);
    return 0;
  }
  void *bytes = NULL, *again = NULL;
  size_t n = 0, n2 = 0;
  if (tfd_graph_def_serialize(g, &bytes, &n, st) == TFD_OK) {
    tfd_graph_def *back = tfd_graph_def_parse(bytes, n, st);
    CHECK(back != NULL);
    CHECK(tfd_graph_def_num_nodes(back) == tfd_graph_def_num_nodes(g));
    CHECK(tfd_graph_def_serialize(back, &again, &n2, st) == TFD_OK);
    CHECK(n2 == n && memcmp(again, bytes, n) == 0);
    tfd_graph_def_free(back);
  } else {
    CHECK(tfd_status_code(st) != TFD_OK);
  }
  free(bytes);
  free(again);
  tfd_graph_def_free(g);
  tfd_status_free(st);
  return 0;
}
