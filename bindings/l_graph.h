/* GraphDefs as Lua tables (l_graph.c), for the modules that take graphs. */
#ifndef TFDEV_BINDINGS_L_GRAPH_H
#define TFDEV_BINDINGS_L_GRAPH_H

#include "l_common.h"

/* GraphDefs: reads a GraphDef table (or a builder with :graph_def()) into
 * a new graph def owned by a value pushed on the stack; pushes one as a table. */
tfd_graph_def *tfdev_check_graph_def(lua_State *L, int idx);
void tfdev_push_graph_def(lua_State *L, const tfd_graph_def *g);

#endif
