/* TensorFlow.js layers models (Keras topologies) as GraphDefs: see layers_model.c. */
#ifndef TFDEV_RUNTIME_LAYERS_MODEL_H
#define TFDEV_RUNTIME_LAYERS_MODEL_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "../core/strmap.h"
#include "tfdev/graph_def.h"

/* Whether a model.json's root (with its modelTopology) is a layers model: "format": "layers-model",
 * or no format and a Keras topology (class_name, model_config or keras_version and no node list). */
bool tfd_layers_model_is(const cJSON *root, const cJSON *topology);

/* Adds the nodes of the layers model `topology` describes to g: a Placeholder per input, the layers'
 * ops, an Identity named after each layer, and a Const without value per weight ("<layer>/<weight>",
 * put into unfilled for the weights manifest to fill); and g's signature (the model's inputs and
 * outputs by layer name). Errors (UNIMPLEMENTED for layers, activations or options tfdev lacks,
 * INVALID_ARGUMENT for a malformed topology) name the layer; path prefixes them. */
tfd_code tfd_layers_model_to_graph(const cJSON *topology, tfd_graph_def *g, tfd_strmap *unfilled, const char *path,
                                   tfd_status *status);

#endif
