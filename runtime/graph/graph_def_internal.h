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

/* A whole file into a new buffer (caller frees; *size its length; an empty file gives a
 * buffer of size 0). NULL with the status set, naming the path: NOT_FOUND, PERMISSION_DENIED,
 * DATA_LOSS on a read error, RESOURCE_EXHAUSTED. */
char *tfd_read_file(const char *path, size_t *size, tfd_status *status);

/* Reads a TensorFlow.js graph model (model.json's text; its weight files are
 * found in the directory of `path`, the current one for a bare file name).
 * Caller frees the result; NULL with the status set, prefixed with the path,
 * on error. */
tfd_graph_def *tfd_graph_def_parse_json_model(const char *text, size_t len, const char *path, tfd_status *status);
/* The same with the weight files in directory `dir` (NULL or "": the current
 * one). Either way a manifest's path must resolve, after symbolic links, to a
 * regular file inside that directory (runtime/core/file_in_dir.h), and no file
 * is read past the bytes its group's weights take. */
tfd_graph_def *tfd_graph_def_parse_json_model_in_dir(const char *text, size_t len, const char *path, const char *dir,
                                                     tfd_status *status);
/* The same with the weight files read by `read` (see tfd_weight_reader): the
 * fuzzer and hosts serve them from memory. */
tfd_graph_def *tfd_graph_def_parse_json_model_with(const char *text, size_t len, const char *path,
                                                   tfd_weight_reader read, void *read_arg, tfd_status *status);

/* Only the nodes' names and ops of a TensorFlow.js model's text (no inputs, attrs or weights), so a
 * model whose attrs tfdev cannot read can still be told which of its ops tfdev lacks. NULL when even
 * that cannot be read. */
tfd_graph_def *tfd_graph_def_json_ops_only(const char *text, size_t len);

/* Appends a deep copy of src. */
tfd_code tfd_graph_def_append_node(tfd_graph_def *g, const tfd_node_def *src, tfd_status *status);

#endif
