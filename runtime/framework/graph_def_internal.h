/* The graph def structs, shared by the graph builder, the session and the bindings' tests. */
#ifndef TFDEV_RUNTIME_GRAPH_DEF_INTERNAL_H
#define TFDEV_RUNTIME_GRAPH_DEF_INTERNAL_H

#include <stdint.h>

#include "tfdev/graph_def.h"

typedef struct node_attr {
  char *name;
  tfd_attr_value value; /* owns its strings, lists and a tensor reference */
} node_attr;

struct tfd_node_def {
  char *name, *op, *device;
  char **inputs;
  size_t ninputs, cap_inputs;
  node_attr *attrs;
  size_t nattrs;
};

struct tfd_graph_def {
  tfd_node_def **nodes;
  size_t n, cap;
  tfd_signature_entry *sig[2]; /* signature inputs, outputs: key and tensor owned */
  size_t nsig[2];
};

/* Splits an input string like tfd_parse_input, returning the node name (any
 * length) for the caller to free(); NULL with the status set on error. */
char *tfd_input_node(const char *input, int *index, tfd_status *status);

/* Sets string tensor t's elements from TensorFlow's tensor_content encoding of strings
 * (EncodeStringList: every length as a varint32, then every string's bytes in turn), which must
 * hold exactly t's element count. INVALID_ARGUMENT for content that ends early or runs over. */
tfd_code tfd_strings_from_content(tfd_tensor *t, const uint8_t *data, size_t len, tfd_status *status);

/* Constants expanded from a few typed values (a zeros tensor written as one value) may not grow
 * past this, in either reader: a small file must not allocate without bound. */
#define TFD_MAX_EXPANDED_BYTES ((int64_t)1 << 30)

/* Appends a deep copy of src. */
tfd_code tfd_graph_def_append_node(tfd_graph_def *g, const tfd_node_def *src, tfd_status *status);

#endif
