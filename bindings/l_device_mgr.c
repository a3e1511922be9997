/* tfdev.device_mgr: DeviceMgr as Lua userdata. */
#include <stdlib.h>

#include "l_common.h"
#include "l_device.h"
#include "l_modules.h"

typedef struct lmgr {
  tfd_device_mgr *m;
} lmgr;

static tfd_device_mgr *check_mgr(lua_State *L) {
  lmgr *u = luaL_checkudata(L, 1, TFDEV_DEVICE_MGR_MT);
  if (!u->m) tfdev_raise(L, TFD_FAILED_PRECONDITION, "device manager is closed");
  return u->m;
}

static void list_box_free(void *l) { tfd_device_list_free(l); }

/* tfdev.device_mgr(devices) */
int tfdev_device_mgr_new(lua_State *L) {
  lua_settop(L, 1);
  tfdev_check_alive(L);
  lmgr *u = lua_newuserdatauv(L, sizeof *u, 0);
  u->m = NULL;
  luaL_setmetatable(L, TFDEV_DEVICE_MGR_MT);
  tfdev_made(L);
  tfd_status *st = tfdev_new_status(L);
  void **slot = tfdev_new_box(L, list_box_free); /* owns the list if anything below raises */
  tfd_device_list *l = *slot = tfdev_check_device_array(L, 1, "tfdev.device_mgr");
  size_t n = tfd_device_list_size(l);
  tfd_device **ds = lua_newuserdatauv(L, (n ? n : 1) * sizeof *ds, 0);
  for (size_t i = 0; i < n; i++) ds[i] = tfd_device_list_get(l, i);
  tfd_device_mgr_new(ds, n, &u->m, st);
  if (!u->m) return tfdev_raise_status(L, st);
  lua_settop(L, 2);
  return 1;
}

static int mgr_list(lua_State *L) {
  tfdev_push_mgr_devices(L, check_mgr(L), false);
  return 1;
}

static int mgr_list_attributes(lua_State *L) {
  tfdev_push_mgr_devices(L, check_mgr(L), true);
  return 1;
}

static int mgr_lookup(lua_State *L) {
  lua_settop(L, 2);
  tfd_device_mgr *m = check_mgr(L);
  tfd_status *st = tfdev_new_status(L);
  tfd_device *d = tfd_device_mgr_lookup(m, tfdev_check_name(L, 2, "device name"), st);
  if (!d) return tfdev_fail_status(L, st);
  tfdev_push_device(L, d);
  return 1;
}

static int mgr_num_device_type(lua_State *L) {
  tfd_device_mgr *m = check_mgr(L);
  lua_pushinteger(L, tfd_device_mgr_num_device_type(m, tfdev_check_name(L, 2, "device type")));
  return 1;
}

static int mgr_mapping_string(lua_State *L) {
  char *s = tfd_device_mgr_mapping_string(check_mgr(L));
  if (!s) return tfdev_raise_oom(L, "writing the device mapping string");
  lua_pushstring(L, s);
  free(s);
  return 1;
}

static int mgr_clear_containers(lua_State *L) {
  lua_settop(L, 2);
  tfd_device_mgr *m = check_mgr(L);
  size_t n = 0;
  if (!lua_isnoneornil(L, 2)) {
    luaL_checktype(L, 2, LUA_TTABLE);
    n = lua_rawlen(L, 2);
  }
  const char **names = lua_newuserdatauv(L, (n ? n : 1) * sizeof *names, 0);
  for (size_t i = 0; i < n; i++) {
    lua_rawgeti(L, 2, (lua_Integer)i + 1);
    if (lua_type(L, -1) != LUA_TSTRING)
      return tfdev_raise(L, TFD_INVALID_ARGUMENT, "container names must be strings (element %d is a %s)", (int)i + 1,
                         luaL_typename(L, -1));
    names[i] = tfdev_check_name(L, -1, "container name"); /* anchored by the table at 2 */
    lua_pop(L, 1);
  }
  tfd_status *st = tfdev_new_status(L);
  if (tfd_device_mgr_clear_containers(m, names, n, st) != TFD_OK) return tfdev_raise_status(L, st);
  return 0;
}

static int mgr_len(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)tfd_device_mgr_size(check_mgr(L)));
  return 1;
}

static int mgr_tostring(lua_State *L) {
  lmgr *u = luaL_checkudata(L, 1, TFDEV_DEVICE_MGR_MT);
  lua_pushfstring(L, "tfdev.device_mgr(%d devices)", u->m ? (int)tfd_device_mgr_size(u->m) : 0);
  return 1;
}

static int mgr_gc(lua_State *L) {
  lmgr *u = luaL_checkudata(L, 1, TFDEV_DEVICE_MGR_MT);
  tfd_device_mgr_free(u->m);
  u->m = NULL;
  return 0;
}

int tfdev_open_device_mgr(lua_State *L) {
  static const luaL_Reg meta[] = {{"__len", mgr_len}, {"__tostring", mgr_tostring}, {"__gc", mgr_gc},
                                  {"__close", mgr_gc}, {NULL, NULL}};
  static const luaL_Reg methods[] = {{"list", mgr_list},
                                     {"list_attributes", mgr_list_attributes},
                                     {"lookup", mgr_lookup},
                                     {"num_device_type", mgr_num_device_type},
                                     {"mapping_string", mgr_mapping_string},
                                     {"clear_containers", mgr_clear_containers},
                                     {"close", mgr_gc},
                                     {NULL, NULL}};
  tfdev_new_class(L, TFDEV_DEVICE_MGR_MT, meta, methods);
  lua_pushcfunction(L, tfdev_device_mgr_new);
  return 1;
}
