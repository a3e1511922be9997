/* Lua userdata for devices (tfdev.device), their resource managers, and tfdev.device.cpu/renamed. */
#include <stdlib.h>
#include <string.h>

#include "l_common.h"
#include "l_device.h"
#include "l_tensor.h"
#include "l_graph.h"
#include "l_modules.h"

typedef struct ldevice {
  tfd_device *d; /* one reference; NULL once closed */
} ldevice;
_Static_assert(sizeof(ldevice) == sizeof(void *), "a handle userdata is one pointer (tfdev_check_handle)");

#define DEVICE_CACHE "tfdev.device_cache"

/* One userdata per device, so handles from different calls compare equal. */
void tfdev_push_device(lua_State *L, tfd_device *d) {
  lua_getfield(L, LUA_REGISTRYINDEX, DEVICE_CACHE);
  lua_rawgetp(L, -1, d);
  if (!lua_isnil(L, -1)) {
    lua_remove(L, -2);
    return;
  }
  lua_pop(L, 1);
  tfdev_check_alive(L);
  ldevice *u = lua_newuserdatauv(L, sizeof *u, 0);
  u->d = tfd_device_ref(d);
  luaL_setmetatable(L, TFDEV_DEVICE_MT);
  tfdev_made(L);
  lua_pushvalue(L, -1);
  lua_rawsetp(L, -3, d);
  lua_remove(L, -2);
}

tfd_device *tfdev_test_device(lua_State *L, int idx) {
  ldevice *u = luaL_testudata(L, idx, TFDEV_DEVICE_MT);
  return u ? u->d : NULL;
}

tfd_device *tfdev_check_device(lua_State *L, int idx) { return tfdev_check_handle(L, idx, TFDEV_DEVICE_MT, "device"); }

void tfdev_push_devices(lua_State *L, tfd_device *const *devices, size_t n) {
  lua_createtable(L, (int)n, 0);
  for (size_t i = 0; i < n; i++) {
    tfdev_push_device(L, devices[i]);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
}

void tfdev_push_mgr_devices(lua_State *L, const tfd_device_mgr *m, bool attributes) {
  size_t n = tfd_device_mgr_size(m);
  lua_createtable(L, (int)n, 0);
  for (size_t i = 0; i < n; i++) {
    if (attributes) tfdev_push_device_attributes(L, tfd_device_mgr_get(m, i));
    else tfdev_push_device(L, tfd_device_mgr_get(m, i));
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
}

void tfdev_push_device_list(lua_State *L, const tfd_device_list *l) {
  size_t n = tfd_device_list_size(l);
  lua_createtable(L, (int)n, 0);
  for (size_t i = 0; i < n; i++) {
    tfdev_push_device(L, tfd_device_list_get(l, i));
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
}

static void device_list_free(void *l) { tfd_device_list_free(l); }

tfd_device_list *tfdev_check_device_array(lua_State *L, int idx, const char *what) {
  idx = lua_absindex(L, idx);
  if (!lua_istable(L, idx))
    tfdev_raise(L, TFD_INVALID_ARGUMENT, "%s must be a list of devices, got %s", what, luaL_typename(L, idx));
  void **slot = tfdev_new_box(L, device_list_free);
  int box = lua_gettop(L);
  tfd_device_list *l = *slot = tfd_device_list_new();
  if (!l) tfdev_raise(L, TFD_RESOURCE_EXHAUSTED, "out of memory making a device list");
  lua_Integer n = luaL_len(L, idx);
  for (lua_Integer i = 1; i <= n; i++) {
    lua_geti(L, idx, i);
    tfd_device *d = tfdev_test_device(L, -1);
    if (!d && luaL_testudata(L, -1, TFDEV_DEVICE_MT))
      tfdev_raise(L, TFD_FAILED_PRECONDITION, "%s: element %d is a closed tfdev.device", what, (int)i);
    if (!d)
      tfdev_raise(L, TFD_INVALID_ARGUMENT, "%s: element %d is a %s, expected a tfdev.device", what, (int)i,
                  luaL_typename(L, -1));
    lua_pop(L, 1);
    if (tfd_device_list_push(l, d, NULL) != TFD_OK) tfdev_raise(L, TFD_RESOURCE_EXHAUSTED, "out of memory");
  }
  tfdev_box_take(L, box); /* the caller owns it now */
  lua_remove(L, box);
  return l;
}

static void push_attributes(lua_State *L, tfd_device *d) {
  tfd_device_attributes a;
  tfd_device_get_attributes(d, &a);
  lua_createtable(L, 0, 6);
  tfdev_set_str(L, "name", a.name);
  tfdev_set_str(L, "device_type", a.device_type);
  tfdev_set_int(L, "memory_limit", a.memory_limit);
  lua_createtable(L, 0, 1);
  tfdev_set_int(L, "bus_id", a.bus_id);
  lua_setfield(L, -2, "locality");
  tfdev_set_int(L, "incarnation", (lua_Integer)a.incarnation);
  tfdev_set_str(L, "physical_device_desc", a.physical_device_desc);
}

void tfdev_push_device_attributes(lua_State *L, tfd_device *d) { push_attributes(L, d); }

static int device_index(lua_State *L) {
  luaL_checkudata(L, 1, TFDEV_DEVICE_MT);
  const char *k = luaL_checkstring(L, 2);
  luaL_getmetafield(L, 1, "methods");
  if (lua_getfield(L, -1, k) != LUA_TNIL) return 1; /* methods stay reachable on a closed handle */
  lua_pop(L, 2);
  tfd_device *d = tfdev_check_device(L, 1);
  tfd_device_attributes a;
  tfd_device_get_attributes(d, &a);
  if (strcmp(k, "name") == 0) lua_pushstring(L, a.name);
  else if (strcmp(k, "device_type") == 0) lua_pushstring(L, a.device_type);
  else if (strcmp(k, "memory_limit") == 0) lua_pushinteger(L, a.memory_limit);
  else if (strcmp(k, "incarnation") == 0) lua_pushinteger(L, (lua_Integer)a.incarnation);
  else if (strcmp(k, "bus_id") == 0) lua_pushinteger(L, a.bus_id);
  else if (strcmp(k, "physical_device_desc") == 0) lua_pushstring(L, a.physical_device_desc);
  else if (strcmp(k, "parsed_name") == 0) tfdev_push_parsed_name(L, tfd_device_parsed_name(d));
  else if (strcmp(k, "num_threads") == 0) lua_pushinteger(L, tfd_device_num_threads(d));
  else lua_pushnil(L);
  return 1;
}

static int device_newindex(lua_State *L) {
  return tfdev_raise(L, TFD_INVALID_ARGUMENT, "device fields are read-only (tried to set '%s')",
                     luaL_tolstring(L, 2, NULL));
}

static int device_attributes(lua_State *L) {
  push_attributes(L, tfdev_check_device(L, 1));
  return 1;
}

static int device_sync(lua_State *L) {
  tfd_device *d = tfdev_check_device(L, 1);
  tfd_status *st = tfdev_new_status(L);
  if (tfd_device_sync(d, st) != TFD_OK) return tfdev_raise_status(L, st);
  lua_pushboolean(L, 1);
  return 1;
}

static int device_debug_string(lua_State *L) {
  char *s = tfd_device_debug_string(tfdev_check_device(L, 1));
  if (!s) return tfdev_raise_oom(L, "writing the device's debug string");
  lua_pushstring(L, s);
  free(s);
  return 1;
}

static int device_allocator_stats(lua_State *L) {
  tfdev_push_allocator_stats(L, tfd_device_get_allocator(tfdev_check_device(L, 1)));
  return 1;
}

void tfdev_push_allocator_stats(lua_State *L, tfd_allocator *a) {
  tfd_allocator_stats s;
  tfd_allocator_get_stats(a, &s);
  lua_createtable(L, 0, 7);
  tfdev_set_str(L, "name", tfd_allocator_name(a));
  tfdev_set_int(L, "num_allocs", s.num_allocs);
  tfdev_set_int(L, "bytes_in_use", s.bytes_in_use);
  tfdev_set_int(L, "peak_bytes_in_use", s.peak_bytes_in_use);
  tfdev_set_int(L, "largest_alloc_size", s.largest_alloc_size);
  tfdev_set_int(L, "bytes_limit", s.bytes_limit);
  tfdev_set_int(L, "num_refused", s.num_refused);
  tfdev_set_int(L, "bytes_cached", s.bytes_cached);
}

/* device:compute(op, inputs, attrs, options): one op, run eagerly on this
 * device; options.timeout_ms bounds an op that blocks. */
static int device_compute(lua_State *L) {
  lua_settop(L, 5);
  tfd_device *d = tfdev_check_device(L, 1);
  const char *op = tfdev_check_name(L, 2, "op");
  tfd_run_options ro = {0};
  if (!lua_isnil(L, 5)) {
    if (!lua_istable(L, 5))
      return tfdev_raise(L, TFD_INVALID_ARGUMENT, "options must be a table {timeout_ms = }, got %s", luaL_typename(L, 5));
    lua_pushnil(L);
    while (lua_next(L, 5)) {
      const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "?";
      int ok = 0;
      if (strcmp(k, "timeout_ms") == 0) ro.timeout_ms = lua_tointegerx(L, -1, &ok);
      if (!ok)
        return tfdev_raise(L, TFD_INVALID_ARGUMENT, "%s", strcmp(k, "timeout_ms") == 0
                                                           ? "compute option timeout_ms must be an integer"
                                                           : "unknown compute option (known: timeout_ms)");
      lua_pop(L, 1);
    }
  }
  if (!lua_isnil(L, 3) && !lua_istable(L, 3))
    return tfdev_raise(L, TFD_INVALID_ARGUMENT, "inputs must be a list of tensors or tables, got %s", luaL_typename(L, 3));
  if (!lua_isnil(L, 4) && !lua_istable(L, 4))
    return tfdev_raise(L, TFD_INVALID_ARGUMENT, "attrs must be a table, got %s", luaL_typename(L, 4));
  /* Reuse the GraphDef reader for typed attributes: {node = {{name = op, op = op, attr = attrs}}}. */
  lua_createtable(L, 0, 1);
  lua_createtable(L, 1, 0);
  lua_createtable(L, 0, 3);
  tfdev_set_str(L, "name", op);
  tfdev_set_str(L, "op", op);
  lua_pushvalue(L, 4);
  lua_setfield(L, -2, "attr");
  lua_rawseti(L, -2, 1);
  lua_setfield(L, -2, "node");
  tfd_graph_def *g = tfdev_check_graph_def(L, 6);
  int n = lua_istable(L, 3) ? (int)lua_rawlen(L, 3) : 0;
  tfd_tensor **inputs = lua_newuserdatauv(L, (size_t)(n ? n : 1) * sizeof *inputs, 0);
  lua_createtable(L, n, 0); /* anchors converted inputs */
  int anchors = lua_gettop(L);
  for (int i = 0; i < n; i++) {
    lua_rawgeti(L, 3, i + 1);
    const char *what = lua_pushfstring(L, "%s input %d", op, i + 1);
    inputs[i] = tfdev_to_tensor(L, -2, 0, what);
    lua_pop(L, 1);
    lua_rawseti(L, anchors, i + 1);
  }
  /* Converting an input may have run Lua code that closed an earlier one, or the device: read them again. */
  for (int i = 0; i < n; i++) {
    lua_rawgeti(L, anchors, i + 1);
    inputs[i] = tfdev_to_tensor(L, -1, 0, "input");
    lua_pop(L, 1);
  }
  d = tfdev_check_device(L, 1);
  tfd_status *st = tfdev_new_status(L);
  tfd_tensor *outs[4];
  int nout = 0;
  lua_State *prev = tfdev_calling_push(L); /* a Lua op's kernel runs here */
  tfd_code ran = tfd_device_run_op(d, tfd_graph_def_node(g, 0), inputs, n, &ro, outs, &nout, st);
  tfdev_calling_pop(prev);
  if (ran != TFD_OK)
    return tfdev_raise_status(L, st);
  for (int o = 0; o < nout; o++) tfdev_push_tensor(L, outs[o]);
  return nout;
}

static int device_tostring(lua_State *L) {
  ldevice *u = luaL_checkudata(L, 1, TFDEV_DEVICE_MT);
  if (!u->d) lua_pushliteral(L, "tfdev.device(closed)");
  else lua_pushfstring(L, "tfdev.device(%s)", tfd_device_name(u->d));
  return 1;
}

/* __gc, __close and close(): drops the reference. The cache entry goes too
 * (if it is still this handle), so a later device at the same address never
 * finds a closed handle. */
static int device_gc(lua_State *L) {
  ldevice *u = luaL_checkudata(L, 1, TFDEV_DEVICE_MT);
  if (!u->d) return 0;
  lua_getfield(L, LUA_REGISTRYINDEX, DEVICE_CACHE);
  if (lua_rawgetp(L, -1, u->d) != LUA_TNIL && lua_rawequal(L, -1, 1)) {
    lua_pushnil(L);
    lua_rawsetp(L, -3, u->d);
  }
  lua_pop(L, 2);
  tfd_device_unref(u->d);
  u->d = NULL;
  return 0;
}

/* device:resource_manager() -> tfdev.resource_mgr (holds the device). */
typedef struct lrm {
  tfd_device *d;
} lrm;

static int device_resource_manager(lua_State *L) {
  tfd_device *d = tfdev_check_device(L, 1);
  tfdev_check_alive(L);
  lrm *u = lua_newuserdatauv(L, sizeof *u, 0);
  u->d = tfd_device_ref(d);
  luaL_setmetatable(L, TFDEV_RESOURCE_MGR_MT);
  tfdev_made(L);
  return 1;
}

/* Finalizers run in any order at state close: a handle whose __gc already
 * ran is closed, not a NULL to dereference. */
static tfd_resource_mgr *check_rm(lua_State *L) {
  lrm *u = luaL_checkudata(L, 1, TFDEV_RESOURCE_MGR_MT);
  if (!u->d) tfdev_raise(L, TFD_FAILED_PRECONDITION, "resource manager handle is closed");
  return tfd_device_resource_manager(u->d);
}

/* The container argument of a resource manager method: "" (the default) when absent. */
static const char *container_arg(lua_State *L) {
  return lua_isnoneornil(L, 2) ? "" : tfdev_check_name(L, 2, "container");
}

static int rm_create(lua_State *L) {
  lua_settop(L, 4);
  tfd_resource_mgr *rm = check_rm(L);
  const char *container = container_arg(L);
  const char *name = tfdev_check_name(L, 3, "resource name");
  tfd_tensor *t = tfdev_check_tensor(L, 4);
  tfd_status *st = tfdev_new_status(L);
  tfd_resource *r = NULL;
  tfd_tensor_resource_new(t, &r, st);
  if (!r) return tfdev_raise_status(L, st);
  tfd_code code = tfd_resource_mgr_create(rm, container, name, r, st);
  tfd_resource_unref(r);
  if (code != TFD_OK) return tfdev_raise_status(L, st);
  return 0;
}

static int rm_lookup(lua_State *L) {
  lua_settop(L, 4);
  tfd_resource_mgr *rm = check_rm(L);
  tfd_status *st = tfdev_new_status(L);
  const char *container = container_arg(L);
  tfd_resource *r = tfd_resource_mgr_lookup(rm, container, "Tensor", tfdev_check_name(L, 3, "resource name"), st);
  if (!r) return tfdev_fail_status(L, st);
  tfdev_push_tensor(L, tfd_tensor_ref(tfd_resource_tensor(r)));
  tfd_resource_unref(r);
  return 1;
}

static int rm_delete(lua_State *L) {
  lua_settop(L, 4);
  tfd_resource_mgr *rm = check_rm(L);
  tfd_status *st = tfdev_new_status(L);
  const char *container = container_arg(L);
  if (tfd_resource_mgr_delete(rm, container, "Tensor", tfdev_check_name(L, 3, "resource name"), st) != TFD_OK)
    return tfdev_raise_status(L, st);
  return 0;
}

static int rm_cleanup(lua_State *L) {
  lua_settop(L, 4);
  tfd_resource_mgr *rm = check_rm(L);
  tfd_status *st = tfdev_new_status(L);
  const char *container = container_arg(L);
  if (tfd_resource_mgr_cleanup(rm, container, st) != TFD_OK) return tfdev_raise_status(L, st);
  return 0;
}

static int rm_size(lua_State *L) {
  tfd_resource_mgr *rm = check_rm(L);
  const char *container = container_arg(L);
  lua_pushinteger(L, (lua_Integer)tfd_resource_mgr_container_size(rm, container));
  return 1;
}

static int names_box_gc(lua_State *L) {
  char ***box = lua_touserdata(L, 1);
  free(*box);
  *box = NULL;
  return 0;
}

static int rm_containers(lua_State *L) {
  tfd_resource_mgr *rm = check_rm(L);
  /* The array is owned by a box on the stack, so a memory error while
   * building the table cannot leak it. */
  tfdev_check_alive(L);
  char ***box = lua_newuserdatauv(L, sizeof *box, 0);
  *box = NULL;
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, names_box_gc);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  tfdev_made(L);
  char **names = *box = tfd_resource_mgr_container_names(rm);
  if (!names) return tfdev_raise_oom(L, "listing the resource manager's containers");
  lua_newtable(L);
  for (size_t i = 0; names[i]; i++) {
    lua_pushstring(L, names[i]);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

static int rm_index(lua_State *L) {
  luaL_checkudata(L, 1, TFDEV_RESOURCE_MGR_MT);
  const char *k = luaL_checkstring(L, 2);
  if (strcmp(k, "default_container") == 0) {
    lua_pushstring(L, tfd_resource_mgr_default_container(check_rm(L)));
  } else {
    luaL_getmetafield(L, 1, "methods"); /* methods stay reachable on a closed handle, and say it is closed */
    lua_getfield(L, -1, k);
  }
  return 1;
}

static int rm_gc(lua_State *L) {
  lrm *u = luaL_checkudata(L, 1, TFDEV_RESOURCE_MGR_MT);
  tfd_device_unref(u->d);
  u->d = NULL;
  return 0;
}

static int rm_tostring(lua_State *L) {
  lrm *u = luaL_checkudata(L, 1, TFDEV_RESOURCE_MGR_MT);
  if (!u->d) lua_pushliteral(L, "tfdev.resource_mgr(closed)");
  else lua_pushfstring(L, "tfdev.resource_mgr(%s)", tfd_device_name(u->d));
  return 1;
}

/* tfdev.device.cpu{name=, threads=, memory_limit=, device_type=, physical_device_desc=, bus_id=} */
static int device_cpu(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  tfd_cpu_device_config cfg = {0};
  lua_getfield(L, 1, "name");
  cfg.name = tfdev_opt_name(L, -1, "tfdev.device.cpu: name");
  if (!cfg.name) return tfdev_raise(L, TFD_INVALID_ARGUMENT, "tfdev.device.cpu: 'name' (a full device name) is required");
  if (lua_getfield(L, 1, "threads") != LUA_TNIL) {
    int ok;
    lua_Integer n = lua_tointegerx(L, -1, &ok);
    if (!ok || n < 1 || n > TFD_MAX_THREADS)
      return tfdev_raise(L, TFD_INVALID_ARGUMENT, "tfdev.device.cpu: threads must be an integer in [1, %d]",
                         TFD_MAX_THREADS);
    cfg.num_threads = (int)n;
    cfg.own_threadpool = true; /* asking for a size means a pool of its own */
  }
  if (lua_getfield(L, 1, "memory_limit") != LUA_TNIL) {
    int ok;
    lua_Integer n = lua_tointegerx(L, -1, &ok);
    if (!ok || n <= 0)
      return tfdev_raise(L, TFD_INVALID_ARGUMENT, "tfdev.device.cpu: memory_limit must be a positive integer (bytes)");
    cfg.memory_limit = n;
  }
  if (lua_getfield(L, 1, "bus_id") != LUA_TNIL) {
    int ok;
    lua_Integer b = lua_tointegerx(L, -1, &ok);
    if (!ok || b < 0 || b > INT32_MAX)
      return tfdev_raise(L, TFD_INVALID_ARGUMENT, "tfdev.device.cpu: bus_id must be an integer in [0, 2^31-1]");
    cfg.bus_id = (int32_t)b;
  }
  lua_getfield(L, 1, "device_type");
  cfg.device_type = tfdev_opt_name(L, -1, "tfdev.device.cpu: device_type");
  lua_getfield(L, 1, "physical_device_desc");
  cfg.physical_device_desc = tfdev_opt_name(L, -1, "tfdev.device.cpu: physical_device_desc");
  tfd_status *st = tfdev_new_status(L);
  tfd_device *d = NULL;
  tfd_cpu_device_new(&cfg, &d, st);
  if (!d) return tfdev_raise_status(L, st);
  tfdev_push_device(L, d);
  tfd_device_unref(d);
  return 1;
}

/* tfdev.device.renamed(device, new_base) */
static int device_renamed(lua_State *L) {
  tfd_device *u = tfdev_check_device(L, 1);
  const char *base = tfdev_check_name(L, 2, "new_base");
  tfd_status *st = tfdev_new_status(L);
  tfd_device *d = NULL;
  tfd_renamed_device_new(u, base, &d, st);
  if (!d) return tfdev_raise_status(L, st);
  tfdev_push_device(L, d);
  tfd_device_unref(d);
  return 1;
}

static int device_is(lua_State *L) {
  lua_pushboolean(L, tfdev_test_device(L, 1) != NULL);
  return 1;
}

int tfdev_open_device(lua_State *L) {
  static const luaL_Reg meta[] = {{"__index", device_index},       {"__newindex", device_newindex},
                                  {"__tostring", device_tostring}, {"__gc", device_gc},
                                  {"__close", device_gc},          {NULL, NULL}};
  static const luaL_Reg methods[] = {{"attributes", device_attributes},
                                     {"sync", device_sync},
                                     {"debug_string", device_debug_string},
                                     {"allocator_stats", device_allocator_stats},
                                     {"resource_manager", device_resource_manager},
                                     {"compute", device_compute},
                                     {"close", device_gc},
                                     {NULL, NULL}};
  tfdev_new_class(L, TFDEV_DEVICE_MT, meta, methods);
  static const luaL_Reg rm_meta[] = {
      {"__index", rm_index}, {"__gc", rm_gc}, {"__close", rm_gc}, {"__tostring", rm_tostring}, {NULL, NULL}};
  static const luaL_Reg rm_methods[] = {{"create", rm_create},   {"lookup", rm_lookup},         {"delete", rm_delete},
                                        {"cleanup", rm_cleanup}, {"containers", rm_containers}, {"size", rm_size},
                                        {"close", rm_gc},        {NULL, NULL}};
  tfdev_new_class(L, TFDEV_RESOURCE_MGR_MT, rm_meta, rm_methods);
  /* Weak-valued cache: device pointer -> its userdata. */
  lua_newtable(L);
  lua_createtable(L, 0, 1);
  lua_pushliteral(L, "v");
  lua_setfield(L, -2, "__mode");
  lua_setmetatable(L, -2);
  lua_setfield(L, LUA_REGISTRYINDEX, DEVICE_CACHE);
  static const luaL_Reg fns[] = {{"cpu", device_cpu}, {"renamed", device_renamed}, {"is", device_is}, {NULL, NULL}};
  luaL_newlib(L, fns);
  return 1;
}
