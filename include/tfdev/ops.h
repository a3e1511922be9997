/* tfdev ops: what the op registry knows, for hosts and bindings that build graphs. */
#ifndef TFDEV_OPS_H
#define TFDEV_OPS_H

#include "tfdev/export.h"

#include <stdbool.h>

#include "tfdev/graph_def.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Number of registered ops (internal ones, named "_X", included) and their names: op i's name is
 * kept by the library as long as it is loaded (NULL for an i out of range). */
TFD_API int tfd_ops_count(void);
TFD_API const char *tfd_ops_name(int i);
TFD_API bool tfd_ops_exists(const char *op);
/* The type op declares for attribute attr, or 0 when it declares none (or op is unknown). */
TFD_API int tfd_ops_attr_type(const char *op, const char *attr);
/* Whether op keeps state between runs (variables, random generators). */
TFD_API bool tfd_ops_is_stateful(const char *op);
/* Whether a graph a user writes may hold op: false for the ops only a session adds (_Feed, _Fetch,
 * _Send, _Recv) and for unknown ones. TensorFlow's internal fused ops (_FusedMatMul) may appear. */
TFD_API bool tfd_ops_user_visible(const char *op);

/* What a node makes, worked out as a session's graph check does (TensorFlow's shape inference): node
 * names the op and holds its attributes (absent ones get their defaults, written into node as a session
 * would); its data inputs have dtypes in_types, shapes in_shapes (ndims -1: unknown rank; a dim -1:
 * unknown size) and, for constant inputs, values in_values (NULL entries, or a NULL array, where unknown;
 * Reshape, Fill, ConcatV2 and the like read them). Writes the dtypes and shapes of at most cap outputs and
 * how many the node has into *num_outputs. NOT_FOUND for an unregistered op; INVALID_ARGUMENT naming the
 * node for inputs or attributes the op refuses. An output whose shape the op cannot tell has ndims -1. */
TFD_API tfd_code tfd_ops_infer(tfd_node_def *node, int num_inputs, const tfd_dtype *in_types, const tfd_shape *in_shapes,
                               const tfd_tensor *const *in_values, int cap, int *num_outputs, tfd_dtype *out_types,
                               tfd_shape *out_shapes, tfd_status *status);

#ifdef __cplusplus
}
#endif
#endif
