/* The built-in op families, in the order tfd_ops_name lists their ops (as Lua's linit.c lists its
 * libraries): a family's file defines its ops and shape functions; this file only names it. */
#include "op_registry.h"

const tfd_op_family *const tfd_builtin_op_families[] = {
    &tfd_array_ops,    &tfd_math_ops,         &tfd_nn_ops,        &tfd_image_ops,
    &tfd_random_ops,   &tfd_state_ops,        &tfd_data_flow_ops, &tfd_lookup_ops,
    &tfd_list_ops,     &tfd_control_flow_ops, &tfd_sparse_ops,    &tfd_ragged_ops,
    &tfd_spectral_ops, &tfd_string_ops,       &tfd_sendrecv_ops,  NULL,
};
