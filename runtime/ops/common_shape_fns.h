/* What the op families share: attribute rows, dtype sets, and the shape functions and input checks
 * more than one family calls (TensorFlow's core/framework/common_shape_fns.h). Only the files of
 * runtime/ops include it. */
#ifndef TFDEV_RUNTIME_OPS_COMMON_SHAPE_FNS_H
#define TFDEV_RUNTIME_OPS_COMMON_SHAPE_FNS_H

#include <stdbool.h>
#include <stdint.h>

#include "../core/status_internal.h"
#include "op_registry.h"

/* Attribute rows: T (a type inferred from the inputs), and the end of a list. */
#define A_T \
  { "T", TFD_ATTR_TYPE, false, 0, 0, NULL }
#define END \
  { NULL, 0, false, 0, 0, NULL }
extern const tfd_attr_def tfd_attrs_t[];    /* T alone */
extern const tfd_attr_def tfd_attrs_none[]; /* none */

/* The dtype sets op rows allow for their type attribute. */
#define NUM TFD_TYPES_NUMBER
#define FLT TFD_TYPES_FLOAT
#define ALL TFD_TYPES_ALL
#define F16 (1u << TFD_FLOAT16)
#define REAL (NUM | (1u << TFD_UINT8) | F16)
#define U8 (1u << TFD_UINT8)
#define C64 TFD_TYPES_COMPLEX
#define STR (1u << TFD_STRING)

/* An elementwise op of one input whose output is its input's dtype and shape. */
#define UNARY(n, types)                                                                                      \
  {                                                                                                          \
    .name = n, .min_inputs = 1, .max_inputs = 1, .num_outputs = 1, .type_attr = "T", .allowed_types = types, \
    .attrs = tfd_attrs_t, .infer = tfd_infer_same                                                            \
  }

/* The node's attribute (defaults filled in), or NULL. */
static inline const tfd_attr_value *attr(const tfd_infer_ctx *c, const char *name) {
  return tfd_node_def_attr(c->node, name);
}
static inline const char *node_name(const tfd_infer_ctx *c) { return tfd_node_def_name(c->node); }
static inline const char *op_name(const tfd_infer_ctx *c) { return tfd_node_def_op(c->node); }
static inline void unknown(tfd_shape *s) { s->ndims = -1; }

/* Shape functions. Each fills c's outputs or returns an error that names the node. */
tfd_code tfd_infer_same(tfd_infer_ctx *c, tfd_status *st);        /* output 0 is input 0 */
tfd_code tfd_infer_none(tfd_infer_ctx *c, tfd_status *st);        /* no outputs to infer */
tfd_code tfd_infer_placeholder(tfd_infer_ctx *c, tfd_status *st); /* dtype and shape from the attrs */
tfd_code tfd_infer_matmul(tfd_infer_ctx *c, tfd_status *st);      /* MatMul, with transpose_a/_b */
tfd_code tfd_infer_var_handle(tfd_infer_ctx *c, tfd_status *st);  /* a scalar resource handle */
tfd_code tfd_infer_same_axis(tfd_infer_ctx *c, tfd_status *st);   /* input 0's shape; input 1 an axis */

/* Input checks: TFD_OK, or INVALID_ARGUMENT naming the node and `what`. */
tfd_code tfd_infer_need_index(tfd_infer_ctx *c, int i, const char *what, tfd_status *st); /* int32 or int64 */
tfd_code tfd_infer_need_rank(tfd_infer_ctx *c, int i, int rank, const char *what, tfd_status *st);
tfd_code tfd_infer_need_bool(tfd_infer_ctx *c, int i, const char *what, tfd_status *st);
tfd_code tfd_infer_need_int32(tfd_infer_ctx *c, int i, const char *what, tfd_status *st);
tfd_code tfd_infer_need_resource(tfd_infer_ctx *c, tfd_status *st); /* input 0 */
tfd_code tfd_infer_same_types(tfd_infer_ctx *c, int a, int b, tfd_status *st);
/* The attr `name` names a dtype that is int32 or int64: *out. */
tfd_code tfd_infer_index_attr(tfd_infer_ctx *c, const char *name, tfd_dtype *out, tfd_status *st);
/* The attr `name` is want (the partner dtype of a complex or spectral op's T). */
tfd_code tfd_infer_check_partner_type(tfd_infer_ctx *c, const char *name, tfd_dtype want, tfd_status *st);
/* container and shared_name of a resource-making op are strings TensorFlow would take. */
tfd_code tfd_infer_check_handle_names(tfd_infer_ctx *c, tfd_status *st);
/* Input i is a scalar axis: *known says whether its value is, *axis is it normalised to [0, rank). */
tfd_code tfd_infer_const_axis(tfd_infer_ctx *c, int i, int rank, bool *known, int64_t *axis, tfd_status *st);
/* Input `input` holds sizes (a shape as a vector): *out, dimensions unknown where its value is. */
tfd_code tfd_infer_shape_from_sizes(tfd_infer_ctx *c, int input, tfd_shape *out, tfd_status *st);

#endif
