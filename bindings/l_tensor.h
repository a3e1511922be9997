/* Tensor handles (l_tensor.c), for the modules that take or give tensors. */
#ifndef TFDEV_BINDINGS_L_TENSOR_H
#define TFDEV_BINDINGS_L_TENSOR_H

#include "l_common.h"

/* Tensors. push takes ownership of one reference. */
void tfdev_push_tensor(lua_State *L, tfd_tensor *t);
tfd_tensor *tfdev_check_tensor(lua_State *L, int idx);
/* The same for hot paths that hold the tensor metatable at stack index mt
 * (an upvalue), so no lookup by name: push; and whether the value at idx is
 * a tensor handle, with its tensor (NULL once closed) in *t. */
void tfdev_push_tensor_mt(lua_State *L, tfd_tensor *t, int mt);
bool tfdev_is_tensor_mt(lua_State *L, int idx, int mt, tfd_tensor **t);
/* Converts the value at idx to a tensor (a tensor passes through; tables
 * and scalars are converted, with dtype when it is not 0). Replaces the
 * value at idx with the tensor userdata, which keeps it alive. Errors are
 * prefixed with `what` ("feed 'x'") when it is not NULL. */
tfd_tensor *tfdev_to_tensor(lua_State *L, int idx, tfd_dtype dtype, const char *what);

#endif
