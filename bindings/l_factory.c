/* tfdev.factory: the Lua state's factory registry, built-in factories as userdata, and factories written in Lua. */
#include <stdlib.h>
#include <string.h>

#include "l_common.h"

/* ---- factories written in Lua: a table with create_devices(self, options, name_prefix) ---- */
typedef struct lua_factory {
  lua_State *main; /* main thread of the owning state: identifies it */
  int ref;         /* the Lua table, in the registry */
} lua_factory;

static lua_State *main_thread(lua_State *L) {
  lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
  lua_State *m = lua_tothread(L, -1);
  lua_pop(L, 1);
  return m;
}

static tfd_code lua_factory_create(void *self, void *host_ctx, const tfd_session_options *options,
                                   const char *name_prefix, tfd_device_list *out, tfd_status *status) {
  lua_factory *f = self;
  tfdev_call_ctx *ctx = host_ctx;
  if (!ctx || !ctx->L || main_thread(ctx->L) != f->main)
    return tfd_status_setf(status, TFD_FAILED_PRECONDITION,
                           "this factory is written in Lua and runs only when called through its own Lua state");
  lua_State *L = ctx->L;
  int top = lua_gettop(L);
  lua_rawgeti(L, LUA_REGISTRYINDEX, f->ref);
  lua_getfield(L, -1, "create_devices");
  if (!lua_isfunction(L, -1)) {
    lua_settop(L, top);
    return tfd_status_setf(status, TFD_INVALID_ARGUMENT, "create_devices is no longer a function");
  }
  lua_pushvalue(L, -2);
  if (ctx->options_index) lua_pushvalue(L, ctx->options_index);
  else tfdev_push_options(L, options);
  lua_pushstring(L, name_prefix);
  if (lua_pcall(L, 3, 1, 0) != LUA_OK) {
    tfd_code code = TFD_UNKNOWN;
    const char *msg;
    if (lua_istable(L, -1) && lua_getfield(L, -1, "code") == LUA_TSTRING && tfd_code_from_name(lua_tostring(L, -1)) > 0) {
      code = (tfd_code)tfd_code_from_name(lua_tostring(L, -1));
      lua_getfield(L, -2, "message");
      msg = lua_tostring(L, -1);
    } else {
      msg = luaL_tolstring(L, top + 2, NULL);
    }
    tfd_status_setf(status, code, "create_devices raised: %s", msg ? msg : "(no message)");
    lua_settop(L, top);
    return code;
  }
  tfd_code code = TFD_OK;
  if (!lua_istable(L, -1)) {
    code = tfd_status_setf(status, TFD_INVALID_ARGUMENT, "create_devices returned a %s, expected a list of devices",
                           luaL_typename(L, -1));
  } else {
    lua_Integer n = (lua_Integer)lua_rawlen(L, -1);
    for (lua_Integer i = 1; i <= n && code == TFD_OK; i++) {
      lua_rawgeti(L, -1, i);
      tfd_device *d = tfdev_test_device(L, -1);
      if (!d)
        code = tfd_status_setf(status, TFD_INVALID_ARGUMENT,
                               "create_devices returned a %s at index %d, expected a tfdev.device",
                               luaL_typename(L, -1), (int)i);
      else
        code = tfd_device_list_push(out, d, status);
      lua_pop(L, 1);
    }
  }
  lua_settop(L, top);
  return code;
}

static void lua_factory_destroy(void *self) {
  lua_factory *f = self;
  luaL_unref(f->main, LUA_REGISTRYINDEX, f->ref);
  free(f);
}

static const tfd_device_factory_ops lua_factory_ops = {"LuaFactory", lua_factory_create, lua_factory_destroy};

/* ---- built-in factories as userdata ---- */
typedef struct lfactory {
  tfd_device_factory *f;
} lfactory;

static void push_factory(lua_State *L, tfd_device_factory *f) {
  lua_factory *lf = tfd_device_factory_self(f, &lua_factory_ops);
  if (lf) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, lf->ref); /* the very table that was registered */
    return;
  }
  lfactory *u = lua_newuserdatauv(L, sizeof *u, 0);
  u->f = tfd_device_factory_ref(f);
  luaL_setmetatable(L, TFDEV_FACTORY_MT);
}

/* The C factory for the Lua value at idx (new reference), or raises. */
static tfd_device_factory *to_factory(lua_State *L, int idx, const char *type) {
  lfactory *u = luaL_testudata(L, idx, TFDEV_FACTORY_MT);
  if (u) return tfd_device_factory_ref(u->f);
  if (!lua_istable(L, idx))
    tfdev_raise(L, TFD_INVALID_ARGUMENT, "factory for %s must be a table with create_devices or a tfdev.factory, got %s",
                type, luaL_typename(L, idx));
  lua_getfield(L, idx, "create_devices");
  bool ok = lua_isfunction(L, -1);
  lua_pop(L, 1);
  if (!ok) tfdev_raise(L, TFD_INVALID_ARGUMENT, "factory for %s has no create_devices function", type);
  lua_factory *lf = malloc(sizeof *lf);
  if (!lf) luaL_error(L, "tfdev: out of memory");
  lf->main = main_thread(L);
  lua_pushvalue(L, idx);
  lf->ref = luaL_ref(L, LUA_REGISTRYINDEX);
  tfd_device_factory *f = tfd_device_factory_new(&lua_factory_ops, lf, NULL);
  if (!f) {
    lua_factory_destroy(lf);
    luaL_error(L, "tfdev: out of memory");
  }
  return f;
}

static int factory_register(lua_State *L) {
  const char *type = luaL_checkstring(L, 1);
  int ok;
  lua_Integer prio = lua_isnoneornil(L, 3) ? TFD_PRIORITY_DEFAULT : lua_tointegerx(L, 3, &ok);
  if (!lua_isnoneornil(L, 3) && (!ok || prio < -1000000 || prio > 1000000))
    return tfdev_raise(L, TFD_INVALID_ARGUMENT, "priority must be an integer, got %s", luaL_tolstring(L, 3, NULL));
  tfd_device_factory *f = to_factory(L, 2, type);
  tfd_status *st = tfdev_new_status(L);
  tfd_code code = tfd_factory_registry_register(tfdev_state(L)->registry, type, f, (int)prio, st);
  tfd_device_factory_unref(f);
  if (code != TFD_OK) return tfdev_raise_status(L, st);
  return 0;
}

static int factory_get(lua_State *L) {
  tfd_device_factory *f = tfd_factory_registry_get(tfdev_state(L)->registry, luaL_checkstring(L, 1));
  if (!f) lua_pushnil(L);
  else push_factory(L, f);
  return 1;
}

static int factory_priority(lua_State *L) {
  lua_pushinteger(L, tfd_factory_registry_priority(tfdev_state(L)->registry, luaL_checkstring(L, 1)));
  return 1;
}

static const char *factory_display_name(lua_State *L, tfd_device_factory *f) {
  lua_factory *lf = tfd_device_factory_self(f, &lua_factory_ops);
  if (!lf) return tfd_device_factory_name(f);
  lua_rawgeti(L, LUA_REGISTRYINDEX, lf->ref);
  lua_getfield(L, -1, "name");
  const char *name = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "LuaFactory";
  lua_pop(L, 2); /* still anchored by the factory table */
  return name;
}

static int factory_list(lua_State *L) {
  tfd_factory_registry *r = tfdev_state(L)->registry;
  size_t n = tfd_factory_registry_size(r);
  lua_createtable(L, (int)n, 0);
  for (size_t i = 0; i < n; i++) {
    const char *type;
    int prio;
    tfd_device_factory *f;
    tfd_factory_registry_entry(r, i, &type, &prio, &f);
    lua_createtable(L, 0, 3);
    lua_pushstring(L, type);
    lua_setfield(L, -2, "type");
    lua_pushinteger(L, prio);
    lua_setfield(L, -2, "priority");
    lua_pushstring(L, factory_display_name(L, f));
    lua_setfield(L, -2, "name");
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

static int factory_add_devices(lua_State *L) {
  lua_settop(L, 2); /* helpers push below: fix the argument slots first */
  tfd_session_options *o = tfdev_check_options(L, 1);
  const char *prefix = luaL_optstring(L, 2, TFD_LOCAL_NAME_PREFIX);
  tfd_status *st = tfdev_new_status(L);
  tfd_device_list *l = tfd_device_list_new();
  if (!l) return luaL_error(L, "tfdev: out of memory");
  tfdev_call_ctx ctx = {L, lua_istable(L, 1) ? 1 : 0};
  tfd_code code = tfd_factory_registry_add_devices(tfdev_state(L)->registry, o, prefix, &ctx, l, st);
  if (code == TFD_OK) tfdev_push_device_list(L, l);
  tfd_device_list_free(l);
  if (code != TFD_OK) return tfdev_raise_status(L, st);
  return 1;
}

static int factory_new_device(lua_State *L) {
  lua_settop(L, 3);
  const char *type = luaL_checkstring(L, 1);
  tfd_session_options *o = tfdev_check_options(L, 2);
  const char *prefix = luaL_optstring(L, 3, TFD_LOCAL_NAME_PREFIX);
  tfd_status *st = tfdev_new_status(L);
  tfdev_call_ctx ctx = {L, 0}; /* the factory sees device_count[type] = 1, so rebuild the table */
  tfd_device *d = tfd_factory_registry_new_device(tfdev_state(L)->registry, type, o, prefix, &ctx, st);
  if (!d) return tfdev_raise_status(L, st);
  tfdev_push_device(L, d);
  tfd_device_unref(d);
  return 1;
}

/* Restores the built-in registrations (drops everything registered in this state). */
static int factory_reset(lua_State *L) {
  tfdev_lstate *s = tfdev_state(L);
  tfd_factory_registry *fresh = tfd_factory_registry_copy(tfd_factory_registry_default());
  if (!fresh) return luaL_error(L, "tfdev: out of memory");
  tfd_factory_registry_free(s->registry);
  s->registry = fresh;
  return 0;
}

/* builtin:create_devices(options, name_prefix) */
static int lfactory_create_devices(lua_State *L) {
  lua_settop(L, 3);
  lfactory *u = luaL_checkudata(L, 1, TFDEV_FACTORY_MT);
  tfd_session_options *o = tfdev_check_options(L, 2);
  const char *prefix = luaL_optstring(L, 3, TFD_LOCAL_NAME_PREFIX);
  tfd_status *st = tfdev_new_status(L);
  tfd_device_list *l = tfd_device_list_new();
  tfdev_call_ctx ctx = {L, lua_istable(L, 2) ? 2 : 0};
  tfd_code code = tfd_device_factory_create_devices(u->f, &ctx, o, prefix, l, st);
  if (code == TFD_OK) tfdev_push_device_list(L, l);
  tfd_device_list_free(l);
  if (code != TFD_OK) return tfdev_raise_status(L, st);
  return 1;
}

static int lfactory_index(lua_State *L) {
  lfactory *u = luaL_checkudata(L, 1, TFDEV_FACTORY_MT);
  const char *k = luaL_checkstring(L, 2);
  if (strcmp(k, "name") == 0) {
    lua_pushstring(L, tfd_device_factory_name(u->f));
  } else {
    luaL_getmetafield(L, 1, "methods");
    lua_getfield(L, -1, k);
  }
  return 1;
}

static int lfactory_eq(lua_State *L) {
  lfactory *a = luaL_testudata(L, 1, TFDEV_FACTORY_MT), *b = luaL_testudata(L, 2, TFDEV_FACTORY_MT);
  lua_pushboolean(L, a && b && a->f == b->f);
  return 1;
}

static int lfactory_tostring(lua_State *L) {
  lfactory *u = luaL_checkudata(L, 1, TFDEV_FACTORY_MT);
  lua_pushfstring(L, "tfdev.factory(%s)", tfd_device_factory_name(u->f));
  return 1;
}

static int lfactory_gc(lua_State *L) {
  lfactory *u = luaL_checkudata(L, 1, TFDEV_FACTORY_MT);
  tfd_device_factory_unref(u->f);
  u->f = NULL;
  return 0;
}

int tfdev_open_factory(lua_State *L) {
  static const luaL_Reg meta[] = {{"__index", lfactory_index}, {"__eq", lfactory_eq}, {"__tostring", lfactory_tostring},
                                  {"__gc", lfactory_gc},       {NULL, NULL}};
  static const luaL_Reg methods[] = {{"create_devices", lfactory_create_devices}, {NULL, NULL}};
  tfdev_new_class(L, TFDEV_FACTORY_MT, meta, methods);
  static const luaL_Reg fns[] = {{"register", factory_register},       {"get", factory_get},
                                 {"priority", factory_priority},       {"list", factory_list},
                                 {"add_devices", factory_add_devices}, {"new_device", factory_new_device},
                                 {"reset", factory_reset},             {NULL, NULL}};
  luaL_newlib(L, fns);
  lua_pushinteger(L, TFD_PRIORITY_DEFAULT);
  lua_setfield(L, -2, "DEFAULT_PRIORITY");
  return 1;
}
