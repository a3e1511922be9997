/* Two Lua states in one process each get their own factory registry: registrations never cross. */
#include <lauxlib.h>
#include <lualib.h>

#include "bindings/l_common.h"
#include "runtime/testing/harness.h"

static lua_State *open_state(void) {
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  luaL_requiref(L, "tfdev.core", luaopen_tfdev_core, 0);
  lua_setglobal(L, "core");
  return L;
}

static int run(lua_State *L, const char *code) {
  if (luaL_dostring(L, code) != LUA_OK) {
    fprintf(stderr, "lua error: %s\n", luaL_tolstring(L, -1, NULL));
    return 0;
  }
  return 1;
}

static void test_registries_are_per_state(void) {
  lua_State *a = open_state(), *b = open_state();
  CHECK(run(a, "core.factory.register('CPU', {create_devices = function() return {} end}, 150)"));
  CHECK(run(a, "assert(core.factory.priority('CPU') == 150)"));
  CHECK(run(b, "assert(core.factory.priority('CPU') == 60, 'state b sees state a')"));
  CHECK(run(b, "assert(core.factory.get('CPU').name == 'ThreadPoolDeviceFactory')"));
  CHECK_INT(tfd_factory_registry_priority(tfd_factory_registry_default(), "CPU"), 60);
  lua_close(a);
  CHECK(run(b, "assert(#core.factory.add_devices() == 1)"));
  lua_close(b);
}

/* A Lua factory reached from C without its state refuses, instead of crashing. */
static void test_lua_factory_needs_its_state(void) {
  lua_State *L = open_state();
  CHECK(run(L, "core.factory.register('XPU', {create_devices = function() return {} end}, 10)"));
  lua_getfield(L, LUA_REGISTRYINDEX, "tfdev.state");
  tfdev_lstate *s = lua_touserdata(L, -1);
  lua_pop(L, 1);
  tfd_device_factory *f = tfd_factory_registry_get(s->registry, "XPU");
  tfd_status *st = tfd_status_new();
  tfd_device_list *l = tfd_device_list_new();
  CHECK_INT(tfd_device_factory_create_devices(f, NULL, NULL, "/job:a/replica:0/task:0", l, st), TFD_FAILED_PRECONDITION);
  CHECK_STATUS(st, TFD_FAILED_PRECONDITION, "written in Lua");
  lua_State *other = open_state();
  tfdev_call_ctx wrong = {other, 0};
  CHECK_INT(tfd_device_factory_create_devices(f, &wrong, NULL, "/job:a/replica:0/task:0", l, st),
            TFD_FAILED_PRECONDITION);
  tfd_status_reset(st);
  lua_close(other);
  tfd_device_list_free(l);
  tfd_status_free(st);
  lua_close(L);
}

static const tfd_test tests[] = {
    {"registries are per Lua state", test_registries_are_per_state},
    {"a Lua factory needs its own state", test_lua_factory_needs_its_state},
};
TFD_TEST_MAIN(tests)
