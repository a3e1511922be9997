/* luaopen_tfdev_core: assembles the C half of the tfdev module. */
#include <time.h>

#include "l_common.h"

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

/* tfdev.host_allocator_stats(): what the state's host tensors use. */
static int host_allocator_stats(lua_State *L) {
  tfdev_push_allocator_stats(L, tfdev_state(L)->host);
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
              {"graph_def", tfdev_open_graph_def}};
  for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) {
    subs[i].open(L);
    lua_setfield(L, -2, subs[i].name);
  }
  lua_pushcfunction(L, monotonic_clock);
  lua_setfield(L, -2, "clock");
  lua_pushcfunction(L, gpu_count);
  lua_setfield(L, -2, "gpu_count");
  lua_pushcfunction(L, host_memory_limit);
  lua_setfield(L, -2, "host_memory_limit");
  lua_pushcfunction(L, host_allocator_stats);
  lua_setfield(L, -2, "host_allocator_stats");
  lua_pushboolean(L, tfd_gpu_built_with_cuda());
  lua_setfield(L, -2, "built_with_cuda");
  lua_pushliteral(L, TFDEV_VERSION);
  lua_setfield(L, -2, "version");
  lua_pushstring(L, TFD_LOCAL_NAME_PREFIX);
  lua_setfield(L, -2, "LOCAL_NAME_PREFIX");
  return 1;
}
