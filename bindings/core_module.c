/* tfdev/core.so: the C module plain lua5.4 loads for `require "tfdev.core"`.
 *
 * It carries no code of its own: the bindings live in libtfdev_lua and the runtime in libtfdev,
 * both shared and linked here (with --no-as-needed, see CMakeLists.txt), so a host that links
 * libtfdev and then requires tfdev has one runtime in its process, not two. Lua's loader finds
 * luaopen_tfdev_core with dlsym on this module's handle, which searches the module's
 * dependencies too (dlsym(3)): the function it gets is libtfdev_lua's. A forwarding definition
 * here would need libtfdev_lua's function under a second name, since a module's own definition of
 * the same name would be the one its call resolved to. */
#include "tfdev/lua.h"
