/* The ops only the session adds, as TensorFlow's core/ops/sendrecv_ops.cc defines them: feeds, fetches, and transfers
 * between partitions. Their definitions and shape functions. */
#include "common_shape_fns.h"

static tfd_code infer_recv(tfd_infer_ctx *c, tfd_status *st) {
  (void)st;
  c->out_types[0] = attr(c, "tensor_type")->dtype;
  unknown(&c->out_shapes[0]);
  return TFD_OK;
}

static const tfd_attr_def attrs_feed[] = {{"index", TFD_ATTR_INT, true, 0, 0, NULL},
                                          {"dtype", TFD_ATTR_TYPE, true, 0, 0, NULL},
                                          {"shape", TFD_ATTR_SHAPE, false, 0, 0, NULL},
                                          END};

static const tfd_attr_def attrs_fetch[] = {{"index", TFD_ATTR_INT, true, 0, 0, NULL}, A_T, END};

static const tfd_attr_def attrs_send[] = {A_T,
                                          {"tensor_name", TFD_ATTR_STRING, true, 0, 0, NULL},
                                          {"send_device", TFD_ATTR_STRING, true, 0, 0, NULL},
                                          {"send_device_incarnation", TFD_ATTR_INT, true, 0, 0, NULL},
                                          {"recv_device", TFD_ATTR_STRING, true, 0, 0, NULL},
                                          END};

static const tfd_attr_def attrs_recv[] = {
    {"tensor_type", TFD_ATTR_TYPE, true, 0, 0, NULL},   {"tensor_name", TFD_ATTR_STRING, true, 0, 0, NULL},
    {"send_device", TFD_ATTR_STRING, true, 0, 0, NULL}, {"send_device_incarnation", TFD_ATTR_INT, true, 0, 0, NULL},
    {"recv_device", TFD_ATTR_STRING, true, 0, 0, NULL}, END};

/* One row per op: clang-format would give each field a line. */
/* clang-format off */
static const tfd_op_def sendrecv_ops[] = {
    /* Internal ops the session adds: feeds, fetches, and transfers between partitions. */
    {.name = "_Feed", .num_outputs = 1, .cheap = true, .runtime_only = true, .attrs = attrs_feed,
     .infer = tfd_infer_placeholder},
    {.name = "_Fetch", .min_inputs = 1, .max_inputs = 1, .cheap = true, .runtime_only = true, .type_attr = "T",
     .allowed_types = TFD_TYPES_ANY_AND_VARIANT, .attrs = attrs_fetch, .infer = tfd_infer_none},
    {.name = "_Send", .min_inputs = 1, .max_inputs = 1, .cheap = true, .runtime_only = true, .type_attr = "T",
     .allowed_types = TFD_TYPES_ANY_AND_VARIANT, .attrs = attrs_send, .infer = tfd_infer_none},
    {.name = "_Recv", .num_outputs = 1, .cheap = true, .runtime_only = true, .attrs = attrs_recv, .infer = infer_recv},
};
/* clang-format on */

const tfd_op_family tfd_sendrecv_ops = {"sendrecv", sendrecv_ops, (int)(sizeof sendrecv_ops / sizeof sendrecv_ops[0])};
