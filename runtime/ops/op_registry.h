/* The op registry: what each op takes, makes and requires, and how its outputs' types and shapes follow.
 *
 * Ops are TensorFlow's, by name. Each op def lists input and output counts,
 * attributes with their defaults, the dtypes its type attribute "T" may
 * take, whether it is stateful, and an inference function that checks the
 * inputs and computes output dtypes and (partially known) shapes. The
 * built-in ops are read-only tables, one per family (runtime/ops/<family>_ops.c); ops registered at
 * run time (custom_op.h) are added beside them, permanently. */
#ifndef TFDEV_RUNTIME_OPS_OP_REGISTRY_H
#define TFDEV_RUNTIME_OPS_OP_REGISTRY_H

#include <stdbool.h>
#include <stdint.h>

#include "tfdev/custom_op.h"
#include "tfdev/graph_def.h"

/* The most outputs a node has: Split, SplitV and Unpack take up to this many
 * (their num_split or num), FusedBatchNormV3 has 6. Queue dequeues, with one
 * output per component, take at most TFD_MAX_QUEUE_COMPONENTS; eager runs
 * (tfd_device_run_op) return at most TFD_MAX_EAGER_OUTPUTS. */
#define TFD_MAX_OP_OUTPUTS 32
#define TFD_MAX_QUEUE_COMPONENTS 4
#define TFD_MAX_EAGER_OUTPUTS 4
/* Custom ops (include/tfdev/custom_op.h): at most this many inputs and attributes. */
#define TFD_MAX_CUSTOM_INPUTS TFD_CUSTOM_OP_MAX_INPUTS
#define TFD_MAX_CUSTOM_ATTRS 16

/* tfd_op_def.num_outputs values other than a fixed count. */
#define TFD_OUTPUTS_PER_COMPONENT (-1) /* one per entry of the node's component_types (queue dequeues) */
/* the node's attr named by tfd_op_num_outputs_attr (Unpack, Split, ShapeN, IdentityN; RaggedGather's plus 1) */
#define TFD_OUTPUTS_FROM_ATTR (-2)

/* The attribute the graph optimiser sets (true) on a MatMul or _FusedMatMul
 * whose weights (input 1) come straight from a Const in the same partition:
 * the kernel may then pack them once and keep them. */
#define TFD_WEIGHTS_CONSTANT_ATTR "_tfd_weights_constant"

/* What an inference function sees and fills. */
typedef struct tfd_infer_ctx {
  const tfd_node_def *node; /* attributes, defaults filled in */
  int num_inputs;
  const tfd_dtype *in_types;
  const tfd_shape *in_shapes;
  const tfd_tensor *const *in_values; /* constant input values where known, else NULL */
  int num_outputs;
  tfd_dtype *out_types;
  tfd_shape *out_shapes;
} tfd_infer_ctx;

typedef struct tfd_attr_def {
  const char *name;
  tfd_attr_type type;
  bool required;
  int64_t dflt_i; /* INT, BOOL, TYPE defaults */
  double dflt_f;
  const char *dflt_s;
} tfd_attr_def;

#define TFD_TYPES_FLOAT ((1u << TFD_FLOAT32) | (1u << TFD_FLOAT64))
#define TFD_TYPES_NUMBER (TFD_TYPES_FLOAT | (1u << TFD_INT32) | (1u << TFD_INT64))
/* Types that are stored and moved (Cast, Identity, Reshape, ...): numbers, bool, uint8, float16. */
#define TFD_TYPES_ALL (TFD_TYPES_NUMBER | (1u << TFD_BOOL) | (1u << TFD_UINT8) | (1u << TFD_FLOAT16))
#define TFD_TYPES_INDEX ((1u << TFD_INT32) | (1u << TFD_INT64))
/* complex64: stored, moved and cast, and computed by the complex and spectral ops. */
#define TFD_TYPES_COMPLEX (1u << TFD_COMPLEX64)
/* allowed_types 0 means any dtype but variant: kernels that copy elements would copy references
 * without counting them. Ops that only pass tensors on (Identity, control flow, transfers) say this. */
#define TFD_TYPES_ANY_AND_VARIANT (~0u)

typedef struct tfd_op_def {
  const char *name;
  int min_inputs, max_inputs; /* max -1: any number */
  int num_outputs;            /* a count, TFD_OUTPUTS_PER_COMPONENT or TFD_OUTPUTS_FROM_ATTR */
  bool stateful;
  bool cheap;            /* the executor runs it inline rather than scheduling it */
  const char *type_attr; /* attr inferred from input `type_input` when absent, e.g. "T" */
  int type_input;
  uint32_t allowed_types; /* bit per tfd_dtype for the type attr; 0: any */
  const tfd_attr_def *attrs;
  tfd_code (*infer)(tfd_infer_ctx *c, tfd_status *status);
  bool runtime_only; /* only the session adds it (feeds, fetches, sends); user graphs may not */
} tfd_op_def;

/* A family of built-in ops (array, math, nn, ...: runtime/ops/<family>_ops.c), as TensorFlow groups
 * them in core/ops. */
typedef struct tfd_op_family {
  const char *name;
  const tfd_op_def *ops;
  int count;
} tfd_op_family;

/* The built-in families, ending with NULL (builtin_ops.c): the one list a new family joins. */
extern const tfd_op_family *const tfd_builtin_op_families[];
extern const tfd_op_family tfd_array_ops, tfd_math_ops, tfd_nn_ops, tfd_image_ops, tfd_random_ops, tfd_state_ops,
    tfd_data_flow_ops, tfd_lookup_ops, tfd_list_ops, tfd_control_flow_ops, tfd_sparse_ops, tfd_ragged_ops,
    tfd_spectral_ops, tfd_string_ops, tfd_sendrecv_ops;

/* The op def for a name (built-in, then registered at run time), or NULL. */
const tfd_op_def *tfd_op_lookup(const char *name);
/* Number of registered ops, and op i (for listings). */
int tfd_op_count(void);
const tfd_op_def *tfd_op_at(int i);

/* How many outputs a node of op has: the op's count; for ops with one
 * output per component (queue dequeues), the length of the node's
 * component_types (1 to TFD_MAX_QUEUE_COMPONENTS); for ops counting their outputs in an int attr (Unpack's
 * num, Split's num_split, ShapeN's N), that attr (RaggedGather: OUTPUT_RAGGED_RANK + 1), or in a
 * list(type) attr (IdentityN's T), its length. -1 when the attr is missing or the count would not be 1
 * to TFD_MAX_OP_OUTPUTS (tfd_op_check_arity then takes the input count for ShapeN, whose N defaults to it). */
int tfd_op_num_outputs(const tfd_op_def *op, const tfd_node_def *node);
/* The attr a variable output count comes from ("component_types", "num",
 * "num_split"), or NULL for ops with a fixed count. */
const char *tfd_op_num_outputs_attr(const tfd_op_def *op);
/* Whether a node of op with num_inputs data inputs has a valid input count and output count
 * (INVALID_ARGUMENT naming the node otherwise); *num_outputs is tfd_op_num_outputs on success. */
tfd_code tfd_op_check_arity(const tfd_op_def *op, const tfd_node_def *node, int num_inputs, int *num_outputs,
                            tfd_status *status);

/* Fills absent attributes with their defaults and infers the type attr
 * from the input dtypes; checks required attributes and allowed types.
 * Errors name the node. */
tfd_code tfd_op_complete_attrs(const tfd_op_def *op, tfd_node_def *node, const tfd_dtype *in_types, int num_inputs,
                               tfd_status *status);

/* What a node of op makes from its data inputs: fills absent attributes (tfd_op_complete_attrs),
 * runs the op's inference and refuses a fully known shape no tensor can have. num_outputs is
 * tfd_op_num_outputs(op, node); out_types and out_shapes have room for that many. The one path both a
 * session's graph check and the Lua graph builder (through tfd_ops_infer) take, so the dtypes and
 * shapes a builder shows are the ones the session will see. Errors name the node. */
tfd_code tfd_op_infer_node(const tfd_op_def *op, tfd_node_def *node, int num_inputs, const tfd_dtype *in_types,
                           const tfd_shape *in_shapes, const tfd_tensor *const *in_values, int num_outputs,
                           tfd_dtype *out_types, tfd_shape *out_shapes, tfd_status *status);

/* Shape helpers shared with kernels. */
bool tfd_shape_is_known(const tfd_shape *s);
int64_t tfd_shape_numel(const tfd_shape *s); /* -1 when unknown */
/* The same rank (both unknown counts as the same) and the same dimensions. */
bool tfd_shape_equal(const tfd_shape *a, const tfd_shape *b);
void tfd_shape_of_tensor(const tfd_tensor *t, tfd_shape *out);
/* numpy broadcasting of two shapes; INVALID_ARGUMENT when incompatible. */
tfd_code tfd_broadcast_shapes(const tfd_shape *a, const tfd_shape *b, tfd_shape *out, tfd_status *status);
/* "[2,3]" / "[?,3]" / "<unknown>" into buf. */
const char *tfd_shape_string(const tfd_shape *s, char *buf, size_t cap);
/* An NHWC window attr [1, h, w, 1] (strides, dilations, ksize) into out = {h, w}; dflt for both
 * when absent or empty; false when malformed (not 4 values, batch or depth not 1, h or w < 1). */
bool tfd_spatial_attr(const tfd_node_def *node, const char *name, int64_t dflt, int64_t out[2]);
/* Reads an int32/int64 tensor element as int64. */
int64_t tfd_tensor_get_index(const tfd_tensor *t, int64_t i);

/* StridedSlice: its masks, and what begin/end/strides select from a tensor of shape `in` (TensorFlow's
 * semantics). Errors carry no node name. */
typedef struct tfd_strided_slice_masks {
  uint64_t begin, end, ellipsis, new_axis, shrink;
} tfd_strided_slice_masks;
typedef struct tfd_strided_slice_plan {
  int ndims;                    /* the input's rank */
  int64_t begin[TFD_MAX_DIMS];  /* per input dimension: first index taken, */
  int64_t stride[TFD_MAX_DIMS]; /* step (may be negative), */
  int64_t dims[TFD_MAX_DIMS];   /* and how many (-1: unknown) */
  tfd_shape final;              /* the result's shape: shrunk axes dropped, new axes of size 1 */
} tfd_strided_slice_plan;
void tfd_strided_slice_masks_of(const tfd_node_def *node, tfd_strided_slice_masks *masks);
tfd_code tfd_strided_slice_plan_make(const tfd_shape *in, const tfd_tensor *begin, const tfd_tensor *end,
                                     const tfd_tensor *strides, const tfd_strided_slice_masks *masks,
                                     tfd_strided_slice_plan *plan, tfd_status *status);

#endif
