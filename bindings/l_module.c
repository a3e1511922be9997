/* luaopen_tfdev_core: assembles the C half of the tfdev module. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "l_common.h"
#include "l_device.h"
#include "l_modules.h"

/* tfdev.clock(): a monotonic wall clock in seconds, for timing runs. */
static int monotonic_clock(lua_State *L) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  lua_pushnumber(L, (lua_Number)ts.tv_sec + (lua_Number)ts.tv_nsec * 1e-9);
  return 1;
}

/* tfdev.host_memory_limit([bytes]) -> the limit before (0: none); sets it when given. */
static int host_memory_limit(lua_State *L) {
  tfdev_lstate *s = tfdev_state(L);
  tfd_allocator_stats st;
  tfd_allocator_get_stats(s->host, &st);
  if (!lua_isnoneornil(L, 1)) {
    int ok;
    lua_Integer n = lua_tointegerx(L, 1, &ok);
    if (!ok || n < 0)
      return tfdev_raise(L, TFD_INVALID_ARGUMENT, "host memory limit must be an integer >= 0 (bytes; 0: none), got %s",
                         luaL_tolstring(L, 1, NULL));
    tfd_cpu_allocator_set_limit(s->host, n, NULL);
  }
  lua_pushinteger(L, st.bytes_limit);
  return 1;
}

/* tfdev.ops(): the names of the ops a graph may hold, sorted. */
static int ops_cmp(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

static int ops_list(lua_State *L) {
  int n = tfd_ops_count(), k = 0;
  const char **names = lua_newuserdatauv(L, (size_t)(n > 0 ? n : 1) * sizeof *names, 0);
  for (int i = 0; i < n; i++)
    if (tfd_ops_user_visible(tfd_ops_name(i))) names[k++] = tfd_ops_name(i);
  qsort(names, (size_t)k, sizeof *names, ops_cmp);
  lua_createtable(L, k, 0);
  for (int i = 0; i < k; i++) {
    lua_pushstring(L, names[i]);
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

/* tfdev.host_allocator_stats(): what the state's host tensors use. */
static int host_allocator_stats(lua_State *L) {
  tfdev_push_allocator_stats(L, tfdev_state(L)->host);
  return 1;
}

static void push_backend_info(lua_State *L, const tfd_backend_info *info) {
  lua_createtable(L, 0, 5);
  tfdev_set_str(L, "name", info->name);
  tfdev_set_bool(L, "loaded", info->loaded);
  tfdev_set_int(L, "num_devices", info->num_devices);
  tfdev_set_str(L, "path", info->path);
  tfdev_set_str(L, "why", info->why);
}

/* tfdev.load_backend(name) -> {name=, loaded=, num_devices=, path=, why=}: loads the module once per
 * process and registers its factories in this state's registry. A module or driver that is missing
 * is not an error: loaded is false (or num_devices 0) and why says which. */
static int load_backend(lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  tfd_status *st = tfdev_new_status(L);
  tfd_backend_info info;
  tfd_code code = tfd_backend_load(name, &info, st);
  if (code == TFD_INVALID_ARGUMENT) return tfdev_raise_status(L, st);
  if (code == TFD_OK) {
    tfd_status_reset(st);
    code = tfd_backend_register_factories(name, tfdev_state(L)->registry, st);
    if (code != TFD_OK && code != TFD_ALREADY_EXISTS) return tfdev_raise_status(L, st); /* already there: fine */
  }
  push_backend_info(L, &info);
  return 1;
}

/* tfdev.backends() -> the backends tried so far (see load_backend), in order. */
static int backends(lua_State *L) {
  size_t n = tfd_backend_count();
  lua_createtable(L, (int)n, 0);
  tfd_backend_info info;
  for (size_t i = 0; tfd_backend_at(i, &info); i++) {
    push_backend_info(L, &info);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

static int gpu_count(lua_State *L) {
  char why[256];
  int n = tfd_gpu_count(why, sizeof why);
  lua_pushinteger(L, n);
  lua_pushstring(L, why);
  return 2;
}

int luaopen_tfdev_core(lua_State *L) {
  tfdev_common_open(L);
  lua_newtable(L);
  static const struct {
    const char *name;
    lua_CFunction open;
  } subs[] = {{"error", tfdev_open_error},           {"device_name", tfdev_open_device_name},
              {"device", tfdev_open_device},         {"factory", tfdev_open_factory},
              {"device_set", tfdev_open_device_set}, {"device_mgr", tfdev_open_device_mgr},
              {"tensor", tfdev_open_tensor},         {"session", tfdev_open_session},
              {"graph_def", tfdev_open_graph_def},   {"op", tfdev_open_op},
              {"session_factory", tfdev_open_session_factory}};
  for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) {
    subs[i].open(L);
    lua_setfield(L, -2, subs[i].name);
  }
  static const luaL_Reg fns[] = {{"clock", monotonic_clock},
                                 {"op_infer", tfdev_op_infer},
                                 {"ops", ops_list},
                                 {"load_plugin", tfdev_load_plugin},
                                 {"gpu_count", gpu_count},
                                 {"load_backend", load_backend},
                                 {"backends", backends},
                                 {"host_memory_limit", host_memory_limit},
                                 {"host_allocator_stats", host_allocator_stats},
                                 {NULL, NULL}};
  luaL_setfuncs(L, fns, 0);
  lua_pushboolean(L, tfd_gpu_built_with_cuda());
  lua_setfield(L, -2, "built_with_cuda");
  lua_pushliteral(L, TFDEV_VERSION);
  lua_setfield(L, -2, "version");
  lua_pushstring(L, TFD_LOCAL_NAME_PREFIX);
  lua_setfield(L, -2, "LOCAL_NAME_PREFIX");
  return 1;
}
