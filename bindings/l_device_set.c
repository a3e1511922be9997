/* tfdev.device_set: DeviceSet as Lua userdata. */
#include "l_common.h"
#include "l_device.h"
#include "l_modules.h"

typedef struct lset {
  tfd_device_set *s;
} lset;

static tfd_device_set *check_set(lua_State *L) {
  lset *u = luaL_checkudata(L, 1, TFDEV_DEVICE_SET_MT);
  if (!u->s) tfdev_raise(L, TFD_FAILED_PRECONDITION, "device set is closed");
  return u->s;
}

static int set_add(lua_State *L) {
  tfd_device_set *s = check_set(L);
  tfd_device *d = tfdev_check_device(L, 2);
  tfd_status *st = tfdev_new_status(L);
  if (tfd_device_set_add(s, d, st) != TFD_OK) return tfdev_raise_status(L, st);
  return 0;
}

static void list_box_free(void *l) { tfd_device_list_free(l); }

/* tfdev.device_set(devices) */
static int set_new(lua_State *L) {
  lua_settop(L, 1);
  tfdev_check_alive(L);
  lset *u = lua_newuserdatauv(L, sizeof *u, 0);
  u->s = tfd_device_set_new();
  luaL_setmetatable(L, TFDEV_DEVICE_SET_MT);
  tfdev_made(L);
  if (!u->s) return tfdev_raise_oom(L, "making a device set");
  if (!lua_isnoneornil(L, 1)) {
    tfd_status *st = tfdev_new_status(L);
    void **slot = tfdev_new_box(L, list_box_free); /* owns the list if anything below raises */
    tfd_device_list *l = *slot = tfdev_check_device_array(L, 1, "tfdev.device_set");
    for (size_t i = 0; i < tfd_device_list_size(l); i++)
      if (tfd_device_set_add(u->s, tfd_device_list_get(l, i), st) != TFD_OK) return tfdev_raise_status(L, st);
    lua_settop(L, 2);
  }
  return 1;
}

static int set_devices(lua_State *L) {
  tfd_device_set *s = check_set(L);
  size_t n = tfd_device_set_size(s);
  lua_createtable(L, (int)n, 0);
  for (size_t i = 0; i < n; i++) {
    tfdev_push_device(L, tfd_device_set_get(s, i));
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

static int set_find_by_name(lua_State *L) {
  tfd_device_set *s = check_set(L);
  tfd_device *d = tfd_device_set_find_by_name(s, tfdev_check_name(L, 2, "device name"));
  if (d) tfdev_push_device(L, d);
  else lua_pushnil(L);
  return 1;
}

static int set_find_matching(lua_State *L) {
  lua_settop(L, 2);
  check_set(L);
  tfd_parsed_name spec;
  tfdev_check_parsed_name(L, 2, &spec); /* a table's metamethods may run (and close the set) */
  tfd_device_set *s = check_set(L);
  size_t cap = tfd_device_set_size(s);
  tfd_device **found = lua_newuserdatauv(L, (cap ? cap : 1) * sizeof *found, 0);
  tfdev_push_devices(L, found, tfd_device_set_find_matching(s, &spec, found, cap));
  return 1;
}

static int set_prioritized_types(lua_State *L) {
  tfd_device_set *s = check_set(L);
  size_t cap = tfd_device_set_size(s);
  const char **types = lua_newuserdatauv(L, (cap ? cap : 1) * sizeof *types, 0);
  size_t n = tfd_device_set_prioritized_types(s, tfdev_state(L)->registry, types, cap);
  lua_createtable(L, (int)n, 0);
  for (size_t i = 0; i < n; i++) {
    lua_pushstring(L, types[i]);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

static int set_client_device(lua_State *L) {
  tfd_device *d = tfd_device_set_client_device(check_set(L));
  if (d) tfdev_push_device(L, d);
  else lua_pushnil(L);
  return 1;
}

static int set_set_client_device(lua_State *L) {
  tfd_device_set *s = check_set(L);
  tfd_status *st = tfdev_new_status(L);
  if (tfd_device_set_set_client_device(s, tfdev_check_device(L, 2), st) != TFD_OK) return tfdev_raise_status(L, st);
  return 0;
}

static int set_len(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)tfd_device_set_size(check_set(L)));
  return 1;
}

static int set_tostring(lua_State *L) {
  lset *u = luaL_checkudata(L, 1, TFDEV_DEVICE_SET_MT);
  lua_pushfstring(L, "tfdev.device_set(%d devices)", u->s ? (int)tfd_device_set_size(u->s) : 0);
  return 1;
}

static int set_gc(lua_State *L) {
  lset *u = luaL_checkudata(L, 1, TFDEV_DEVICE_SET_MT);
  tfd_device_set_free(u->s);
  u->s = NULL;
  return 0;
}

int tfdev_open_device_set(lua_State *L) {
  static const luaL_Reg meta[] = {{"__len", set_len}, {"__tostring", set_tostring}, {"__gc", set_gc},
                                  {"__close", set_gc}, {NULL, NULL}};
  static const luaL_Reg methods[] = {{"add", set_add},
                                     {"devices", set_devices},
                                     {"find_by_name", set_find_by_name},
                                     {"find_matching", set_find_matching},
                                     {"prioritized_types", set_prioritized_types},
                                     {"client_device", set_client_device},
                                     {"set_client_device", set_set_client_device},
                                     {"close", set_gc},
                                     {NULL, NULL}};
  tfdev_new_class(L, TFDEV_DEVICE_SET_MT, meta, methods);
  lua_pushcfunction(L, set_new);
  return 1;
}
