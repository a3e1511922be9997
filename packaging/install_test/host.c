/* A tiny host program for the install test (run.sh): built against an installed tfdev, the way a
 * game or tool would build against it, and run.
 *
 * Built three ways from this one file:
 *   (default)           embeds Lua and tfdev through tfdev/lua.h: luaopen_tfdev, a C device factory
 *                       registered through tfdev_lua_registry and seen by a Lua script's session,
 *                       tensors, devices and sessions pushed into Lua and checked back.
 *   -DHOST_C_ONLY       a C host with no Lua at all: tfdev/tfdev.h only, a session run from C.
 *   -DHOST_REQUIRE_ONLY a Lua host that links no part of tfdev: `require "tfdev"` loads
 *                       tfdev/core.so (and through it libtfdev_lua and libtfdev) at run time. With Lua
 *                       linked statically this is the case that needs -Wl,-E.
 * Each prints "host: ok" and exits 0, or names what failed and exits 1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef HOST_C_ONLY
#include <lauxlib.h>
#include <lualib.h>
#endif
#ifdef HOST_REQUIRE_ONLY
#include <lua.h>
#elif defined(HOST_C_ONLY)
#include <tfdev/tfdev.h>
#else
#include <tfdev/lua.h>
#endif

static int failures;
#define EXPECT(c)                                                        \
  do {                                                                   \
    if (!(c)) {                                                          \
      fprintf(stderr, "host: FAILED %s (%s:%d)\n", #c, __FILE__, __LINE__); \
      failures++;                                                        \
    }                                                                    \
  } while (0)

#ifndef HOST_C_ONLY
static int run_lua(lua_State *L, const char *code) {
  if (luaL_dostring(L, code) != LUA_OK) {
    fprintf(stderr, "host: lua error: %s\n", luaL_tolstring(L, -1, NULL));
    lua_pop(L, 2);
    failures++;
    return 0;
  }
  return 1;
}
#endif

#if defined(HOST_REQUIRE_ONLY)
/* argv[1]: the prefix's lib/lua/5.4, argv[2]: its share/lua/5.4. */
int main(int argc, char **argv) {
  if (argc < 3) return 2;
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  lua_pushstring(L, argv[1]);
  lua_setglobal(L, "CDIR");
  lua_pushstring(L, argv[2]);
  lua_setglobal(L, "LDIR");
  run_lua(L, "package.cpath = CDIR .. '/?.so'\n"
             "package.path = LDIR .. '/?.lua;' .. LDIR .. '/?/init.lua'\n"
             "local tfdev = require 'tfdev'\n"
             "local g = tfdev.graph()\n"
             "local x = g:placeholder('float32', {2}, {name = 'x'})\n"
             "local y = x * 2 + 1\n"
             "local s <close> = tfdev.session()\n"
             "s:create(g)\n"
             "local out = s:run({x = {1, 2}}, y:name()):totable()\n"
             "assert(out[1] == 3 and out[2] == 5, 'wrong result')\n");
  lua_close(L);
  if (!failures) printf("host: ok (require \"tfdev\" through core.so)\n");
  return failures ? 1 : 0;
}

#elif defined(HOST_C_ONLY)
int main(void) {
  tfd_status *st = tfd_status_new();
  tfd_session *s = NULL;
  tfd_session_new(NULL, NULL, NULL, &s, st);
  tfd_graph_def *g = tfd_graph_def_new();
  tfd_node_def *x = tfd_graph_def_add_node(g, "x", "Placeholder", st);
  tfd_attr_value f32 = {.type = TFD_ATTR_TYPE, .dtype = TFD_FLOAT32};
  tfd_node_def_set_attr(x, "dtype", &f32, st);
  tfd_node_def *y = tfd_graph_def_add_node(g, "y", "AddV2", st);
  tfd_node_def_add_input(y, "x", st);
  tfd_node_def_add_input(y, "x", st);
  tfd_node_def_set_attr(y, "T", &f32, st);
  EXPECT(s && tfd_session_create(s, g, st) == TFD_OK);
  float data[] = {1, 2};
  int64_t dims[] = {2};
  tfd_tensor *in = NULL;
  tfd_tensor_from_bytes(NULL, TFD_FLOAT32, dims, 1, data, sizeof data, &in,
                        st);
  const char *feeds[] = {"x"}, *fetches[] = {"y"};
  tfd_tensor *out = NULL;
  EXPECT(tfd_session_run(s, NULL, feeds, &in, 1, fetches, 1, NULL, 0, &out, NULL, st) == TFD_OK);
  if (tfd_status_code(st) != TFD_OK) fprintf(stderr, "host: %s\n", tfd_status_message(st));
  if (out) {
    const float *o = tfd_tensor_const_data(out);
    EXPECT(o[0] == 2 && o[1] == 4);
    tfd_tensor_unref(out);
  }
  tfd_tensor_unref(in);
  tfd_graph_def_free(g);
  tfd_session_free(s);
  tfd_status_free(st);
  if (!failures) printf("host: ok (C API only)\n");
  return failures ? 1 : 0;
}

#else
/* A C device factory: CPU devices whose description says the host made them, so a Lua script
 * can tell it got them. */
static tfd_code host_create_devices(void *self, void *host_ctx, const tfd_session_options *options,
                                    const char *name_prefix, tfd_device_list *out, tfd_status *status) {
  (void)self, (void)host_ctx, (void)options;
  char name[256];
  snprintf(name, sizeof name, "%s/device:CPU:0", name_prefix);
  tfd_cpu_device_config config = {.name = name, .physical_device_desc = "made by the host", .num_threads = 1};
  tfd_device *d = NULL;
  tfd_cpu_device_new(&config, &d, status);
  if (!d) return tfd_status_code(status);
  tfd_code code = tfd_device_list_push(out, d, status);
  tfd_device_unref(d);
  return code;
}

static const tfd_device_factory_ops host_factory_ops = {.name = "HostCPUFactory", .create_devices = host_create_devices};

/* Called under lua_pcall: check_tensor on a value that is not one raises a Lua error. */
static int check_tensor_of_number(lua_State *L) {
  lua_pushinteger(L, 7);
  tfdev_lua_check_tensor(L, -1);
  return 0;
}

static int push_tensor_protected(lua_State *L) {
  tfdev_lua_push_tensor(L, lua_touserdata(L, 1));
  return 1;
}

int main(void) {
  tfd_status *st = tfd_status_new();
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  EXPECT(tfdev_lua_registry(L) == NULL); /* not opened yet */
  luaL_requiref(L, "tfdev", luaopen_tfdev, 1);
  lua_pop(L, 1);

  /* A C factory, registered in this state's registry, above the built-in CPU factory (60). */
  tfd_factory_registry *reg = tfdev_lua_registry(L);
  EXPECT(reg != NULL);
  tfd_device_factory *f = NULL;
  tfd_device_factory_new(&host_factory_ops, NULL, &f, st);
  EXPECT(f && tfd_factory_registry_register(reg, "CPU", f, 200, st) == TFD_OK);
  tfd_device_factory_unref(f); /* the registry keeps its own reference */

  /* A script sees it: a session made in Lua gets its device and runs a graph on it. */
  run_lua(L, "local found\n"
             "for _, e in ipairs(tfdev.factory.list()) do\n"
             "  if e.name == 'HostCPUFactory' then found = e.priority end\n"
             "end\n"
             "assert(found == 200, 'the C factory is not listed')\n"
             "local g = tfdev.graph()\n"
             "local x = g:placeholder('float32', {3}, {name = 'x'})\n"
             "Y = (x * 2 + 1):name()\n"
             "S = tfdev.session{device_count = {CPU = 1}}\n"
             "S:create(g)\n"
             "local out = S:run({x = {1, 2, 3}}, Y):totable()\n"
             "assert(out[1] == 3 and out[3] == 7, 'wrong result')\n"
             "DEV = S:devices()[1]\n"
             "assert(DEV.physical_device_desc == 'made by the host', 'not the C factory device: ' .. DEV.physical_device_desc)\n");

  /* A tensor made in C, pushed into Lua (borrowed: Lua takes its own reference), fed to a run. */
  int64_t dims[] = {3};
  float data[] = {10, 20, 30};
  tfd_tensor *t = NULL;
  tfd_tensor_from_bytes(NULL, TFD_FLOAT32, dims, 1, data, sizeof data, &t, st);
  EXPECT(t != NULL);
  tfdev_lua_push_tensor(L, t);
  EXPECT(tfdev_lua_to_tensor(L, -1) == t);
  EXPECT(tfdev_lua_check_tensor(L, -1) == t);
  lua_setglobal(L, "CT");
  run_lua(L, "assert(CT:totable()[2] == 20)\n"
             "R = S:run({x = CT}, Y)\n");
  lua_getglobal(L, "R");
  tfd_tensor *r = tfdev_lua_to_tensor(L, -1);
  EXPECT(r != NULL && tfd_tensor_numel(r) == 3);
  if (r) {
    const float *o = tfd_tensor_const_data(r);
    EXPECT(o[0] == 21 && o[1] == 41 && o[2] == 61);
  }
  lua_pop(L, 1);
  lua_pushinteger(L, 1);
  EXPECT(tfdev_lua_to_tensor(L, -1) == NULL);
  lua_pop(L, 1);
  lua_pushcfunction(L, check_tensor_of_number);
  EXPECT(lua_pcall(L, 0, 0, 0) != LUA_OK && strstr(lua_tostring(L, -1), "tfdev.tensor expected"));
  lua_pop(L, 1);

  /* The session Lua made, used from C; the device Lua holds, checked and pushed back. */
  lua_getglobal(L, "S");
  tfd_session *s = tfdev_lua_check_session(L, -1);
  lua_getglobal(L, "Y");
  const char *fetch = lua_tostring(L, -1);
  const char *feed = "x";
  tfd_tensor *out = NULL;
  EXPECT(tfd_session_run(s, NULL, &feed, &t, 1, &fetch, 1, NULL, 0, &out, NULL, st) == TFD_OK);
  EXPECT(out && ((const float *)tfd_tensor_const_data(out))[2] == 61);
  tfd_tensor_unref(out);
  lua_pop(L, 2);
  lua_getglobal(L, "DEV");
  tfd_device *d = tfdev_lua_check_device(L, -1);
  tfd_device_attributes attrs;
  tfd_device_get_attributes(d, &attrs);
  EXPECT(strcmp(attrs.physical_device_desc, "made by the host") == 0);
  tfdev_lua_push_device(L, d);
  EXPECT(lua_rawequal(L, -1, -2)); /* one handle per device in a state */
  lua_pop(L, 2);
  lua_pushnil(L);
  EXPECT(tfdev_lua_to_device(L, -1) == NULL && tfdev_lua_to_session(L, -1) == NULL);
  lua_pop(L, 1);

  /* A session made in C, handed to Lua (which owns it from here), used and closed by a script. */
  tfd_session *cs = NULL;
  tfd_session_new(NULL, tfdev_lua_registry(L), NULL, &cs, st);
  EXPECT(cs != NULL);
  tfdev_lua_push_session(L, cs);
  EXPECT(tfdev_lua_to_session(L, -1) == cs);
  lua_setglobal(L, "CS");
  run_lua(L, "local g = tfdev.graph()\n"
             "local y = g:placeholder('float32', {1}, {name = 'x'}) * 3\n"
             "CS:create(g)\n"
             "assert(CS:run({x = {4}}, y:name()):totable()[1] == 12)\n"
             "assert(CS:devices()[1].physical_device_desc == 'made by the host')\n"
             "CS:close()\n");
  lua_getglobal(L, "CS");
  EXPECT(tfdev_lua_to_session(L, -1) == NULL); /* closed: freed by Lua */
  lua_pop(L, 1);

  /* A state without tfdev: no registry, and a push raises, leaving the caller's reference alone. */
  lua_State *bare = luaL_newstate();
  EXPECT(tfdev_lua_registry(bare) == NULL);
  lua_pushcfunction(bare, push_tensor_protected);
  lua_pushlightuserdata(bare, t);
  EXPECT(lua_pcall(bare, 1, 1, 0) != LUA_OK && strstr(lua_tostring(bare, -1), "not opened"));
  lua_close(bare);

  tfd_tensor_unref(t); /* ours; Lua's handle (CT) keeps its own until lua_close */
  lua_close(L);
  tfd_status_free(st);
  if (!failures) printf("host: ok (luaopen_tfdev, C factory seen from Lua, tensors, devices, sessions)\n");
  return failures ? 1 : 0;
}
#endif
