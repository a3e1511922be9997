/* The model readers' entry points, for the file that picks among them (model_files.c) and for the
 * readers themselves: binary GraphDefs (graph_def_pb.c) and TensorFlow.js JSON (graph_def_json.c). */
#ifndef TFDEV_RUNTIME_IMPORT_READERS_H
#define TFDEV_RUNTIME_IMPORT_READERS_H

#include <stddef.h>

#include "../framework/graph_def_internal.h"

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

/* The same for a binary GraphDef: only names and ops; NULL when even that cannot be read. */
tfd_graph_def *tfd_graph_def_pb_ops_only(const void *data, size_t size);

/* What a user who gives a SavedModel can do instead, ending the errors that say it is one. */
#define TFD_SAVED_MODEL_ADVICE                                                             \
  "tfdev cannot load SavedModels yet: freeze the signature into a GraphDef (TensorFlow's " \
  "convert_variables_to_constants_v2) or convert it with tensorflowjs_converter --input_format=tf_saved_model"

#endif
