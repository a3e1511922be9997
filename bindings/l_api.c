/* The host-facing Lua API of tfdev/lua.h (libtfdev_lua): luaopen_tfdev with the pure-Lua half
 * compiled in, and push/check/to functions over the bindings' own helpers (l_common.h), so a
 * value pushed from C is exactly what Lua code gets from tfdev. */

#include "l_common.h"
#include "l_device.h"
#include "l_tensor.h"
#include "l_session.h"

/* ---- luaopen_tfdev ---- */

/* package.preload loader of one embedded Lua file: require calls it with (name, ":preload:"),
 * which the chunk receives as `...`, as it would from a file searcher. */
static int load_embedded(lua_State *L) {
  const tfdev_embedded_lua *m = lua_touserdata(L, lua_upvalueindex(1));
  if (luaL_loadbuffer(L, (const char *)m->source, m->size, m->chunkname) != LUA_OK) return lua_error(L);
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, 1);
  return 1;
}

int luaopen_tfdev(lua_State *L) {
  luaL_checkversion(L); /* a second Lua core in the process (see lua.h on -Wl,-E) fails here, by name */
  if (lua_getglobal(L, "require") != LUA_TFUNCTION)
    return luaL_error(L, "tfdev: luaopen_tfdev needs Lua's package library (require) in this state: call "
                         "luaL_openlibs, or luaL_requiref(L, LUA_LOADLIBNAME, luaopen_package, 1), first");
  /* Preload rather than package.path: the host ships one library, and the Lua half always matches
   * the C half it was built with, wherever the files of share/lua/5.4 are (or are not). */
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  lua_pushcfunction(L, luaopen_tfdev_core);
  lua_setfield(L, -2, "tfdev.core");
  for (const tfdev_embedded_lua *m = tfdev_embedded_lua_modules; m->module; m++) {
    lua_pushlightuserdata(L, (void *)m);
    lua_pushcclosure(L, load_embedded, 1);
    lua_setfield(L, -2, m->module);
  }
  lua_pop(L, 1);
  lua_pushliteral(L, "tfdev");
  lua_call(L, 1, 1); /* require "tfdev": also stores it in package.loaded */
  return 1;
}

/* ---- registry ---- */
tfd_factory_registry *tfdev_lua_registry(lua_State *L) {
  tfdev_lstate *s = tfdev_state_opt(L);
  return s ? s->registry : NULL;
}

/* Raises before anything is taken when tfdev is not open in L: without its metatables a pushed
 * handle would be a bare userdata that nothing could use or free. */
static void require_open(lua_State *L) {
  tfdev_check_alive(L); /* a finalizer run by lua_close after tfdev's state: said as such */
  if (!tfdev_state_opt(L)) luaL_error(L, "tfdev: not opened in this lua_State (call luaopen_tfdev first)");
}

/* ---- tensors ---- */

/* Pushes run inside a protected call, so that a memory error while making the handle can be
 * answered by giving back what the push took (a tensor reference, a session) before the error is
 * raised on to the caller: nothing is left owned by no one, and nothing waits for the collector. */
static int push_tensor_protected(lua_State *L) {
  tfdev_push_tensor(L, lua_touserdata(L, 1)); /* takes the reference made below */
  return 1;
}

void tfdev_lua_push_tensor(lua_State *L, tfd_tensor *t) {
  require_open(L);
  lua_pushcfunction(L, push_tensor_protected); /* light C function and light userdata: no allocation */
  lua_pushlightuserdata(L, t);
  tfd_tensor_ref(t);
  if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
    tfd_tensor_unref(t); /* the handle was never made: the caller's reference is as it was */
    lua_error(L);
  }
}

tfd_tensor *tfdev_lua_check_tensor(lua_State *L, int idx) { return tfdev_check_tensor(L, idx); }

tfd_tensor *tfdev_lua_to_tensor(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  tfd_tensor *t = NULL;
  luaL_getmetatable(L, TFDEV_TENSOR_MT); /* nil when tfdev is not open: then nothing matches */
  if (!tfdev_is_tensor_mt(L, idx, -1, &t)) t = NULL;
  lua_pop(L, 1);
  return t;
}

/* ---- devices ---- */
void tfdev_lua_push_device(lua_State *L, tfd_device *d) {
  require_open(L);
  tfdev_push_device(L, d); /* takes its reference only once its userdata exists */
}

tfd_device *tfdev_lua_check_device(lua_State *L, int idx) { return tfdev_check_device(L, idx); }

tfd_device *tfdev_lua_to_device(lua_State *L, int idx) { return tfdev_test_device(L, idx); }

/* ---- sessions ---- */
static int push_session_protected(lua_State *L) {
  tfdev_push_session(L, lua_touserdata(L, 1));
  return 1;
}

void tfdev_lua_push_session(lua_State *L, tfd_session *s) {
  if (!tfdev_state_opt(L)) {
    tfd_session_free(s); /* ownership was handed over: honour it before raising */
    require_open(L);
  }
  lua_pushcfunction(L, push_session_protected);
  lua_pushlightuserdata(L, s);
  if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
    tfd_session_free(s); /* no handle owns it */
    lua_error(L);
  }
}

tfd_session *tfdev_lua_check_session(lua_State *L, int idx) {
  luaL_checkudata(L, idx, TFDEV_SESSION_MT); /* the type error, with the argument's number */
  tfd_session *s = tfdev_test_session(L, idx);
  if (!s) tfdev_raise(L, TFD_CANCELLED, "Session has been closed.");
  return s;
}

tfd_session *tfdev_lua_to_session(lua_State *L, int idx) { return tfdev_test_session(L, idx); }
