/* tfdev GraphDef: TensorFlow's GraphDef/NodeDef/AttrValue as a C value.
 *
 * A graph def is a list of nodes: name, op, inputs ("a", "a:1", "^a" for a
 * control input), a requested device, and attributes. It is plain data:
 * nothing is checked until a session builds a graph from it. The graph def
 * owns everything in it; setters copy what they are given. */
#ifndef TFDEV_GRAPH_DEF_H
#define TFDEV_GRAPH_DEF_H

#include "tfdev/export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tfdev/status.h"
#include "tfdev/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A shape that may be partly unknown: ndims -1 for unknown rank, a
 * dimension -1 for an unknown size. */
typedef struct tfd_shape {
  int ndims;
  int64_t dims[TFD_MAX_DIMS];
} tfd_shape;

typedef enum tfd_attr_type {
  TFD_ATTR_INT = 1,
  TFD_ATTR_FLOAT,
  TFD_ATTR_BOOL,
  TFD_ATTR_STRING,
  TFD_ATTR_TYPE,
  TFD_ATTR_SHAPE,
  TFD_ATTR_TENSOR,
  TFD_ATTR_LIST_INT,
  TFD_ATTR_LIST_FLOAT,
  TFD_ATTR_LIST_TYPE,
  TFD_ATTR_LIST_STRING
} tfd_attr_type;

/* An attribute value. Only the member matching `type` is meaningful. */
typedef struct tfd_attr_value {
  tfd_attr_type type;
  int64_t i;
  double f;
  bool b;
  const char *s;      /* STRING */
  tfd_dtype dtype;    /* TYPE */
  tfd_shape shape;    /* SHAPE */
  tfd_tensor *tensor; /* TENSOR (borrowed in values you pass in) */
  size_t list_len;    /* LIST_* */
  const int64_t *list_i;
  const double *list_f;
  const tfd_dtype *list_type;
  const char *const *list_s;
} tfd_attr_value;

typedef struct tfd_graph_def tfd_graph_def;
typedef struct tfd_node_def tfd_node_def;

/* An empty graph def. The caller frees it with tfd_graph_def_free. */
TFD_API tfd_graph_def *tfd_graph_def_new(void);
TFD_API void tfd_graph_def_free(tfd_graph_def *g);
/* A deep copy (tensors shared by reference); NULL when out of memory. */
TFD_API tfd_graph_def *tfd_graph_def_copy(const tfd_graph_def *g);
TFD_API size_t tfd_graph_def_num_nodes(const tfd_graph_def *g);
/* Node i (borrowed, valid until the graph def changes or is freed). */
TFD_API tfd_node_def *tfd_graph_def_node(const tfd_graph_def *g, size_t i);
/* The node with this name, or NULL. */
TFD_API tfd_node_def *tfd_graph_def_find(const tfd_graph_def *g, const char *name);

/* Appends a node; returns it (owned by the graph def). Names and ops are
 * checked when a graph is built, not here. NULL when out of memory, or with
 * INVALID_ARGUMENT for a NULL g, name or op. A NULL (or "") device in
 * tfd_node_def_set_device requests none. The getters below take a non-NULL
 * graph def or node def. */
TFD_API tfd_node_def *tfd_graph_def_add_node(tfd_graph_def *g, const char *name, const char *op, tfd_status *status);
TFD_API tfd_code tfd_node_def_add_input(tfd_node_def *n, const char *input, tfd_status *status);
TFD_API tfd_code tfd_node_def_set_device(tfd_node_def *n, const char *device, tfd_status *status);
/* Sets (or replaces) an attribute, copying the value. INVALID_ARGUMENT,
 * naming the node and attr, for a value the runtime cannot hold: an unknown
 * value type or dtype, a shape of rank above TFD_MAX_DIMS or a size below
 * -1, a NULL tensor, list or list item. */
TFD_API tfd_code tfd_node_def_set_attr(tfd_node_def *n, const char *name, const tfd_attr_value *v, tfd_status *status);

/* The node's fields: borrowed from n, valid until n is changed or its graph def freed. */
TFD_API const char *tfd_node_def_name(const tfd_node_def *n);
TFD_API const char *tfd_node_def_op(const tfd_node_def *n);
TFD_API const char *tfd_node_def_device(const tfd_node_def *n); /* "" when none requested */
TFD_API size_t tfd_node_def_num_inputs(const tfd_node_def *n);
TFD_API const char *tfd_node_def_input(const tfd_node_def *n, size_t i);
TFD_API size_t tfd_node_def_num_attrs(const tfd_node_def *n);
/* Attribute i, in the order they were set; value borrowed from the node. */
TFD_API const char *tfd_node_def_attr_name(const tfd_node_def *n, size_t i);
TFD_API const tfd_attr_value *tfd_node_def_attr_at(const tfd_node_def *n, size_t i);
/* The attribute with this name, or NULL. */
TFD_API const tfd_attr_value *tfd_node_def_attr(const tfd_node_def *n, const char *name);

/* ---- TensorFlow's binary GraphDef (.pb) ----
 * Parses `size` bytes of a serialized tensorflow.GraphDef. *out: a new
 * graph def the caller frees with tfd_graph_def_free, or NULL with the
 * status set, naming the node and attr at fault: INVALID_ARGUMENT for bytes
 * that are not a GraphDef and for values tfdev cannot hold (shapes above
 * TFD_MAX_DIMS, negative sizes, tensor contents of the wrong size, strings
 * with NUL bytes), UNIMPLEMENTED for dtypes without kernels (DT_BFLOAT16,
 * DT_STRING, ...) and function-valued attrs of ops other than the calls and
 * control flow below, RESOURCE_EXHAUSTED for a constant that would expand
 * past 1 GiB from a few values. The function library is inlined: calls
 * (PartitionedCall, StatefulPartitionedCall, an op named after a function)
 * are replaced by the function's nodes and If/StatelessIf/While/
 * StatelessWhile lowered to TensorFlow 1 frames, so the graph def returned
 * holds no library; NOT_FOUND for a function the library lacks,
 * INVALID_ARGUMENT for arity mismatches and recursion. Versions are ignored. */
TFD_API tfd_code tfd_graph_def_parse(const void *data, size_t size, tfd_graph_def **out, tfd_status *status);
/* Reads and parses a file; the format is told by the content: a binary
 * GraphDef, or a TensorFlow.js graph model (model.json, with its weight
 * files beside it). NOT_FOUND for a missing file, and for a graph using ops
 * tfdev does not have (every such op named with the nodes that use it);
 * errors are prefixed with the path. A weight file's path (as the manifest
 * writes it) must resolve, after symbolic links, to a regular file inside the
 * model file's directory (the current one for a bare file name): an absolute
 * path, one leading outside, a directory, FIFO, socket or device is
 * INVALID_ARGUMENT naming it as written, and nothing is read past the bytes
 * its group's weights take. *out: the graph def, which the caller frees (NULL on failure). */
TFD_API tfd_code tfd_graph_def_load(const char *path, tfd_graph_def **out, tfd_status *status);
/* Writes g as a binary GraphDef into a new buffer (*data, *size); the
 * caller frees *data with free(). Tensors are written as tensor_content.
 * INVALID_ARGUMENT for a resource tensor attr (not storable). */
TFD_API tfd_code tfd_graph_def_serialize(const tfd_graph_def *g, void **data, size_t *size, tfd_status *status);

/* ---- A model's signature ----
 * TensorFlow's SignatureDef as TensorFlow.js keeps it in model.json ("signature", or
 * "userDefinedMetadata.signature"): the inputs and outputs a model is meant to be called with, each
 * a key, the tensor it stands for ("node:0"), its dtype (0 when tfdev has no such dtype) and shape.
 * A binary GraphDef carries none; tfd_graph_def_serialize does not write it. */
typedef struct tfd_signature_entry {
  const char *key;
  const char *tensor;
  tfd_dtype dtype;
  tfd_shape shape;
} tfd_signature_entry;
/* The number of signature inputs (outputs = false) or outputs; 0 when g has no signature. */
TFD_API size_t tfd_graph_def_signature_size(const tfd_graph_def *g, bool outputs);
/* Entry i, in the file's order (borrowed from g), or NULL past the end. */
TFD_API const tfd_signature_entry *tfd_graph_def_signature_entry(const tfd_graph_def *g, bool outputs, size_t i);
/* Appends an entry (strings copied; shape NULL for unknown). INVALID_ARGUMENT for an empty key or
 * tensor. */
TFD_API tfd_code tfd_graph_def_add_signature(tfd_graph_def *g, bool outputs, const char *key, const char *tensor, tfd_dtype dtype,
                                             const tfd_shape *shape, tfd_status *status);

/* ---- Reading models with options ---- */
/* The bytes of one TensorFlow.js weight file, by the name its manifest gives ("group1-shard1of2.bin"):
 * a malloc'd buffer the reader hands over (the loader frees it) with *len set, or NULL with the
 * status set (NOT_FOUND, naming the file, when there is no such file). On entry *len holds the most
 * bytes the manifest's weights can still take from this file: a reader need not read further, and
 * the loader refuses a file longer than that (INVALID_ARGUMENT saying what the group's files hold).
 * The name is the manifest's, unchecked: a reader that goes to a file system keeps it inside the
 * model's directory itself. */
typedef unsigned char *(*tfd_weight_reader)(void *arg, const char *name, size_t *len, tfd_status *status);

typedef struct tfd_graph_def_options {
  /* NULL or "auto": told by the content (JSON opens with '{'); "graph_def" (binary) or "tfjs". */
  const char *format;
  /* Where a TensorFlow.js model's weight files come from: the reader (with its argument), else the
   * directory weights_dir, else (tfd_graph_def_load) the model file's own directory. A directory
   * confines the files the manifest names to it, as tfd_graph_def_load says. */
  tfd_weight_reader weights;
  void *weights_arg;
  const char *weights_dir;
  /* TensorFlow.js ignores a node's device, and so does loading a TensorFlow.js model unless this is
   * set: its converter pins the nodes Grappler fused (_FusedConv2D, _FusedMatMul) to /device:CPU:0,
   * which on a machine with a GPU would keep every fused convolution on the CPU. A binary GraphDef
   * always keeps its devices, as TensorFlow does. */
  bool keep_devices;
} tfd_graph_def_options;

/* tfd_graph_def_parse for either format: a TensorFlow.js model.json held in memory reads its
 * weights through options (FAILED_PRECONDITION naming the first weight file when it gives no way
 * to); options may be NULL. Ops are not checked (session creation names unknown ones).
 * INVALID_ARGUMENT for an unknown format name. *out: the graph def, which the caller frees. */
TFD_API tfd_code tfd_graph_def_parse_with_options(const void *data, size_t size, const tfd_graph_def_options *options,
                                                        tfd_graph_def **out, tfd_status *status);
/* tfd_graph_def_load with options (NULL: as tfd_graph_def_load). *out: the graph def, which the caller frees. */
TFD_API tfd_code tfd_graph_def_load_with_options(const char *path, const tfd_graph_def_options *options,
                                                       tfd_graph_def **out, tfd_status *status);

/* Splits an input string: "a:1" -> node "a", index 1; "^a" -> node "a",
 * index -1 (control). The node name and its NUL are written to `node`
 * (node_cap bytes). INVALID_ARGUMENT for an empty or malformed input, or a
 * node name that does not fit. Node names have no length limit. */
TFD_API tfd_code tfd_parse_input(const char *input, char *node, size_t node_cap, int *index, tfd_status *status);

#ifdef __cplusplus
}
#endif
#endif
