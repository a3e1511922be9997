/* A model: a graph loaded from a file and a session ready to run it, with the inputs and outputs
 * it is meant to be called with (tfdev.model in Lua).
 *
 * The inputs and outputs are a TensorFlow.js model's signature, in the file's order, when it has
 * one; otherwise the graph's Placeholders (inputs) and its sinks (outputs: output 0 of every node
 * that no other node reads, leaving out Consts, NoOps and Placeholders), in graph order. An input's
 * name is the signature's key without a trailing ":0" (a TensorFlow.js signature may key an input
 * "input_1:0" where the same graph saved as a GraphDef names its Placeholder "input_1"), or the
 * Placeholder's name; an output's name is the signature's key, or "node:0". */
#ifndef TFDEV_MODEL_H
#define TFDEV_MODEL_H

#include "tfdev/export.h"
#include "tfdev/graph_def.h"
#include "tfdev/options.h"
#include "tfdev/session.h"
#include "tfdev/status.h"
#include "tfdev/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tfd_model tfd_model;

/* Loads the model at path (every format tfd_graph_def_load reads: a binary GraphDef, a TensorFlow.js
 * graph model, a directory holding one) into a new session made with options (NULL: the defaults;
 * only read during the call). *out: a model the caller frees with tfd_model_free, or NULL with the
 * status set (the loader's or the session's error). */
TFD_API tfd_code tfd_model_load(const char *path, const tfd_session_options *options, tfd_model **out, tfd_status *status);
/* The same from a graph def in memory (only read during the call: the model keeps a copy of nothing
 * but what it needs). */
TFD_API tfd_code tfd_model_new(const tfd_graph_def *graph, const tfd_session_options *options, tfd_model **out, tfd_status *status);
/* Closes the model's session and frees it; NULL is a no-op. */
TFD_API void tfd_model_free(tfd_model *m);

TFD_API int tfd_model_num_inputs(const tfd_model *m);
TFD_API int tfd_model_num_outputs(const tfd_model *m);
/* Input or output i's name (borrowed: lives as long as m), or NULL when i is out of range. */
TFD_API const char *tfd_model_input_name(const tfd_model *m, int i);
TFD_API const char *tfd_model_output_name(const tfd_model *m, int i);
/* The graph tensor ("node:0") input or output i stands for (borrowed), or NULL out of range. */
TFD_API const char *tfd_model_input_tensor(const tfd_model *m, int i);
TFD_API const char *tfd_model_output_tensor(const tfd_model *m, int i);
/* Input or output i's dtype; 0 when i is out of range. */
TFD_API tfd_dtype tfd_model_input_dtype(const tfd_model *m, int i);
TFD_API tfd_dtype tfd_model_output_dtype(const tfd_model *m, int i);
/* Input or output i's shape: writes up to cap sizes into dims (-1 where a size is unknown) and
 * returns the rank; -1 when the rank is unknown or i is out of range. */
TFD_API int tfd_model_input_shape(const tfd_model *m, int i, int64_t *dims, int cap);
TFD_API int tfd_model_output_shape(const tfd_model *m, int i, int64_t *dims, int cap);

/* Runs the model: inputs[i] for input i (n_inputs must be tfd_model_num_inputs), outputs[i]
 * receives a new reference to output i (n_outputs must be tfd_model_num_outputs); the caller unrefs
 * each. On error nothing is written to outputs and the status says what failed (a count that does
 * not match names the counts; a dtype or shape the graph refuses names the node). Thread-safe, as
 * tfd_session_run is. */
TFD_API tfd_code tfd_model_run(tfd_model *m, tfd_tensor *const *inputs, int n_inputs, tfd_tensor **outputs, int n_outputs,
                               tfd_status *status);
/* The model's session, borrowed (valid until tfd_model_free): for run options, metadata, callables,
 * asynchronous runs. Do not free or close it. */
TFD_API tfd_session *tfd_model_session(tfd_model *m);

/* The library's version, "MAJOR.MINOR.PATCH" (TFDEV_VERSION of the headers it was built with): a static
 * string. */
TFD_API const char *tfd_version(void);

#ifdef __cplusplus
}
#endif

#endif
