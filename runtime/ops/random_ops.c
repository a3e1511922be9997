/* Random ops, as TensorFlow's core/ops/random_ops.cc defines them: uniform, normal, truncated normal, random integers
 * and Multinomial. Their definitions and shape functions. */
#include "common_shape_fns.h"

static tfd_code infer_random(tfd_infer_ctx *c, tfd_status *st) {
  if (tfd_infer_need_index(c, 0, "shape", st) != TFD_OK || tfd_infer_need_rank(c, 0, 1, "shape", st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  c->out_types[0] = attr(c, "dtype")->dtype;
  return tfd_infer_shape_from_sizes(c, 0, &c->out_shapes[0], st);
}

/* RandomUniformInt (shape, minval, maxval): Tout, shaped by shape's value. */
static tfd_code infer_random_int(tfd_infer_ctx *c, tfd_status *st) {
  if (tfd_infer_need_index(c, 0, "shape", st) != TFD_OK || tfd_infer_need_rank(c, 0, 1, "shape", st) != TFD_OK ||
      tfd_infer_index_attr(c, "Tout", &c->out_types[0], st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  for (int i = 1; i < 3; i++) {
    if (c->in_types[i] != c->out_types[0])
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (RandomUniformInt): %s is %s but Tout is %s",
                             node_name(c), i == 1 ? "minval" : "maxval", tfd_dtype_name(c->in_types[i]),
                             tfd_dtype_name(c->out_types[0]));
    if (c->in_shapes[i].ndims > 0)
      return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (RandomUniformInt): %s must be 0-D, got rank %d",
                             node_name(c), i == 1 ? "minval" : "maxval", c->in_shapes[i].ndims);
  }
  return tfd_infer_shape_from_sizes(c, 0, &c->out_shapes[0], st);
}

/* Multinomial (logits [B, C], num_samples): [B, num_samples] of output_dtype. */
static tfd_code infer_multinomial(tfd_infer_ctx *c, tfd_status *st) {
  if (tfd_infer_need_rank(c, 0, 2, "logits", st) != TFD_OK ||
      tfd_infer_need_rank(c, 1, 0, "num_samples", st) != TFD_OK ||
      tfd_infer_index_attr(c, "output_dtype", &c->out_types[0], st) != TFD_OK)
    return TFD_INVALID_ARGUMENT;
  if (c->in_types[1] != TFD_INT32)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s' (Multinomial): num_samples must be int32, got %s",
                           node_name(c), tfd_dtype_name(c->in_types[1]));
  const tfd_tensor *ns = c->in_values ? c->in_values[1] : NULL;
  tfd_shape *o = &c->out_shapes[0];
  o->ndims = 2;
  o->dims[0] = c->in_shapes[0].ndims == 2 ? c->in_shapes[0].dims[0] : -1;
  o->dims[1] = ns && tfd_tensor_numel(ns) == 1 ? tfd_tensor_get_index(ns, 0) : -1;
  if (o->dims[1] < -1) o->dims[1] = -1; /* the kernel names a negative count */
  return TFD_OK;
}

static const tfd_attr_def attrs_random[] = {{"dtype", TFD_ATTR_TYPE, true, 0, 0, NULL},
                                            {"seed", TFD_ATTR_INT, false, 0, 0, NULL},
                                            {"seed2", TFD_ATTR_INT, false, 0, 0, NULL},
                                            A_T,
                                            END};

static const tfd_attr_def attrs_random_int[] = {{"seed", TFD_ATTR_INT, false, 0, 0, NULL},
                                                {"seed2", TFD_ATTR_INT, false, 0, 0, NULL},
                                                {"Tout", TFD_ATTR_TYPE, true, 0, 0, NULL},
                                                A_T,
                                                END};

static const tfd_attr_def attrs_multinomial[] = {{"seed", TFD_ATTR_INT, false, 0, 0, NULL},
                                                 {"seed2", TFD_ATTR_INT, false, 0, 0, NULL},
                                                 A_T,
                                                 {"output_dtype", TFD_ATTR_TYPE, false, TFD_INT64, 0, NULL},
                                                 END};

/* One row per op: clang-format would give each field a line. */
/* clang-format off */
static const tfd_op_def random_ops[] = {
    {.name = "RandomUniform", .min_inputs = 1, .max_inputs = 1, .num_outputs = 1, .stateful = true,
     .attrs = attrs_random, .infer = infer_random},
    {.name = "RandomStandardNormal", .min_inputs = 1, .max_inputs = 1, .num_outputs = 1, .stateful = true,
     .attrs = attrs_random, .infer = infer_random},
    {.name = "TruncatedNormal", .min_inputs = 1, .max_inputs = 1, .num_outputs = 1, .stateful = true,
     .attrs = attrs_random, .infer = infer_random},
    {.name = "RandomUniformInt", .min_inputs = 3, .max_inputs = 3, .num_outputs = 1, .stateful = true,
     .attrs = attrs_random_int, .infer = infer_random_int},
    {.name = "Multinomial", .min_inputs = 2, .max_inputs = 2, .num_outputs = 1, .stateful = true, .type_attr = "T",
     .allowed_types = NUM, .attrs = attrs_multinomial, .infer = infer_multinomial},
};
/* clang-format on */

const tfd_op_family tfd_random_ops = {"random", random_ops, (int)(sizeof random_ops / sizeof random_ops[0])};
