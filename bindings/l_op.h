/* Lua ops (l_op.c): what the other modules say about the Lua code running inside their calls. */
#ifndef TFDEV_BINDINGS_L_OP_H
#define TFDEV_BINDINGS_L_OP_H

#include "l_common.h"

/* Writes what runs on this thread for such a call, for messages of the calls refused there: "the Lua
 * kernel of node 'k' (op MyOp)", "the shape function of node 'k' (op MyOp)", or "Lua code run by a tfdev
 * call" when no Lua op's function is running. */
void tfdev_calling_name(char *buf, size_t size);

#endif
