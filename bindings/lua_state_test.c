/* Lua states in one process: each gets its own factory registry (registrations never cross), and a
 * host can give a state its own runtime. */
#include <lauxlib.h>
#include <lualib.h>
#include <stdatomic.h>
#include <stdlib.h>

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

/* A host's runtime given to a Lua state: its allocator backs the state's tensors, its logger gets the
 * state's lines, and a C factory registered in it is seen by scripts. */
static atomic_long host_allocs, host_frees;
static void *host_alloc(void *ctx, size_t alignment, size_t size) {
  (void)ctx;
  void *p = NULL;
  if (posix_memalign(&p, alignment, size ? size : alignment) != 0) return NULL;
  atomic_fetch_add(&host_allocs, 1);
  return p;
}
static void host_free(void *ctx, void *p, size_t size) {
  (void)ctx, (void)size;
  atomic_fetch_add(&host_frees, 1);
  free(p);
}
static char logged[4096];
static void host_log(void *ctx, tfd_log_level level, const char *msg) {
  (void)ctx;
  size_t n = strlen(logged);
  snprintf(logged + n, sizeof logged - n, "%d %s\n", (int)level, msg);
}

static void test_host_runtime(void) {
  tfd_status *st = tfd_status_new();
  tfd_host_allocator a = {host_alloc, host_free, NULL};
  tfd_host_logger lg = {host_log, TFD_LOG_INFO, NULL};
  tfd_runtime_config cfg = {.allocator = &a, .logger = &lg};
  tfd_runtime *rt = tfd_runtime_new(&cfg, st);
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  CHECK_INT(tfdev_use_runtime(L, rt, st), TFD_OK);
  tfd_runtime_free(rt); /* the state holds its own reference */
  luaL_requiref(L, "tfdev.core", luaopen_tfdev_core, 0);
  lua_setglobal(L, "core");
  CHECK_INT(tfdev_use_runtime(L, rt, st), TFD_FAILED_PRECONDITION);
  CHECK_STATUS(st, TFD_FAILED_PRECONDITION, "tfdev is already open in this Lua state");
  long before = atomic_load(&host_allocs);
  CHECK(run(L, "local t = core.tensor.new({1, 2, 3}, 'float32'); assert(t:totable()[3] == 3)"));
  CHECK(atomic_load(&host_allocs) > before);
  CHECK(run(L, "local s = core.session({allow_soft_placement = true})\n"
               "s:create({node = {{name = 'c', op = 'Const', device = '/device:GPU:0',"
               " attr = {value = core.tensor.new(2, 'float32')}}}})\n"
               "assert(s:run({}, 'c'):item() == 2)\n"
               "s:close()"));
  CHECK_CONTAINS(logged, "1 soft placement: node 'c' (Const) asked for '/device:GPU:0'");
  lua_close(L);
  CHECK_INT(atomic_load(&host_allocs), atomic_load(&host_frees));
  tfd_status_free(st);
}

static const tfd_test tests[] = {
    {"a host's runtime serves the state", test_host_runtime},
    {"registries are per Lua state", test_registries_are_per_state},
    {"a Lua factory needs its own state", test_lua_factory_needs_its_state},
};
TFD_TEST_MAIN(tests)
