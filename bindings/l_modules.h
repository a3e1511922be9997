/* The sub-modules' openers (as Lua's lualib.h lists its libraries'), called by l_module.c. */
#ifndef TFDEV_BINDINGS_L_MODULES_H
#define TFDEV_BINDINGS_L_MODULES_H

#include "l_common.h"

/* Sub-module openers; each pushes its table. */
int tfdev_open_device_name(lua_State *L);
int tfdev_open_device(lua_State *L);
int tfdev_open_factory(lua_State *L);
int tfdev_open_device_set(lua_State *L);
int tfdev_open_device_mgr(lua_State *L);
/* tfdev.device_mgr(devices): a DeviceMgr userdata over the devices at index 1, pushed. */
int tfdev_device_mgr_new(lua_State *L);
int tfdev_open_tensor(lua_State *L);
int tfdev_open_session(lua_State *L);
int tfdev_open_session_factory(lua_State *L);
int tfdev_open_graph_def(lua_State *L);
int tfdev_open_op(lua_State *L);
/* tfdev.load_plugin(path) (l_op.c). */
int tfdev_load_plugin(lua_State *L);
/* core.op_infer: the op registry's dtype and shape inference for one node (l_graph.c). */
int tfdev_op_infer(lua_State *L);

#endif
