/* tfdev.factory: the Lua state's factory registry, built-in factories as userdata, and factories written in Lua. */
#include <stdlib.h>
#include <string.h>

#include "l_common.h"
#include "l_device.h"
#include "l_modules.h"

/* ---- factories written in Lua: a table with create_devices(self, options, name_prefix) ---- */
typedef struct lua_factory {
  lua_State *main; /* main thread of the owning state: identifies it */
  int ref;         /* the Lua table, in the registry */
  char *name;      /* the table's `name` when registered, else "LuaFactory" */
} lua_factory;

static lua_State *main_thread(lua_State *L) {
  lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
  lua_State *m = lua_tothread(L, -1);
  lua_pop(L, 1);
  return m;
}

/* One call of a Lua factory, run under lua_pcall: everything that can raise
 * (the factory itself, reading its error's code and message, which may run
 * __index and __tostring metamethods, memory errors) stays between that
 * pcall and this body, never unwinding through the runtime that called us. */
typedef struct factory_call {
  lua_factory *f;
  tfdev_call_ctx *ctx;
  const tfd_session_options *options;
  const char *prefix;
  tfd_device_list *out;
  tfd_status *status;
  tfd_code code;
} factory_call;

/* The factory's own name (its table's `name` field, read raw), for messages. */
static const char *lua_factory_name(lua_State *L, int table) {
  lua_pushliteral(L, "name");
  lua_rawget(L, table);
  const char *name = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "LuaFactory";
  return name; /* anchored on the stack */
}

static int factory_call_body(lua_State *L) {
  factory_call *fc = lua_touserdata(L, 1);
  lua_rawgeti(L, LUA_REGISTRYINDEX, fc->f->ref);
  int table = lua_gettop(L);
  lua_getfield(L, table, "create_devices");
  if (!lua_isfunction(L, -1)) {
    fc->code = tfd_status_setf(fc->status, TFD_INVALID_ARGUMENT, "create_devices is no longer a function");
    return 0;
  }
  lua_pushvalue(L, table);
  if (fc->ctx->options_index) lua_pushvalue(L, 2); /* the caller's table, passed into this pcall */
  else tfdev_push_options(L, fc->options);
  lua_pushstring(L, fc->prefix);
  if (lua_pcall(L, 3, 1, 0) != LUA_OK) {
    int err = lua_gettop(L);
    tfd_code code = TFD_UNKNOWN;
    const char *msg = NULL;
    if (lua_istable(L, err) && lua_getfield(L, err, "code") == LUA_TSTRING && tfd_code_from_name(lua_tostring(L, -1)) > 0) {
      code = (tfd_code)tfd_code_from_name(lua_tostring(L, -1));
      if (lua_getfield(L, err, "message") == LUA_TSTRING) msg = lua_tostring(L, -1);
    }
    if (!msg) msg = luaL_tolstring(L, err, NULL);
    fc->code = tfd_status_setf(fc->status, code, "create_devices raised: %s", msg);
    return 0;
  }
  if (!lua_istable(L, -1)) {
    fc->code = tfd_status_setf(fc->status, TFD_INVALID_ARGUMENT,
                               "create_devices returned a %s, expected a list of devices", luaL_typename(L, -1));
    return 0;
  }
  lua_Integer n = (lua_Integer)lua_rawlen(L, -1);
  for (lua_Integer i = 1; i <= n && fc->code == TFD_OK; i++) {
    lua_rawgeti(L, -1, i);
    tfd_device *d = tfdev_test_device(L, -1);
    if (!d)
      fc->code = tfd_status_setf(fc->status, TFD_INVALID_ARGUMENT,
                                 "create_devices returned a %s%s at index %d, expected a tfdev.device",
                                 luaL_testudata(L, -1, TFDEV_DEVICE_MT) ? "closed " : "", luaL_typename(L, -1), (int)i);
    else
      fc->code = tfd_device_list_push(fc->out, d, fc->status);
    lua_pop(L, 1);
  }
  return 0;
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
  factory_call fc = {f, ctx, options, name_prefix, out, status, TFD_OK};
  if (!lua_checkstack(L, 8))
    return tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "Lua stack exhausted calling a Lua factory");
  lua_pushcfunction(L, factory_call_body);
  lua_pushlightuserdata(L, &fc);
  if (ctx->options_index) lua_pushvalue(L, ctx->options_index);
  if (lua_pcall(L, ctx->options_index ? 2 : 1, 0, 0) != LUA_OK) {
    /* Raised while reading the factory's error (a __tostring that raises) or out of memory. */
    const char *why = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "an error that is not a string";
    fc.code = tfd_status_setf(status, TFD_UNKNOWN, "a Lua factory failed, and reporting its error raised: %s", why);
  }
  lua_settop(L, top);
  return fc.code; /* on failure the caller drops whatever reached `out` */
}

static void lua_factory_destroy(void *self) {
  lua_factory *f = self;
  luaL_unref(f->main, LUA_REGISTRYINDEX, f->ref);
  free(f->name);
  free(f);
}

static const char *lua_factory_instance_name(const void *self) { return ((const lua_factory *)self)->name; }

static const tfd_device_factory_ops lua_factory_ops = {"LuaFactory", lua_factory_create, lua_factory_destroy,
                                                       lua_factory_instance_name};

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
  tfdev_check_alive(L);
  lfactory *u = lua_newuserdatauv(L, sizeof *u, 0);
  u->f = tfd_device_factory_ref(f);
  luaL_setmetatable(L, TFDEV_FACTORY_MT);
  tfdev_made(L);
}

static void factory_box_free(void *f) { tfd_device_factory_unref(f); }

/* The C factory for the Lua value at idx, or raises. Pushes a box that owns
 * the factory's reference until the caller takes it (and may push more). */
static tfd_device_factory *to_factory(lua_State *L, int idx, const char *type) {
  idx = lua_absindex(L, idx);
  void **slot = tfdev_new_box(L, factory_box_free);
  lfactory *u = luaL_testudata(L, idx, TFDEV_FACTORY_MT);
  if (u) {
    if (!u->f) tfdev_raise(L, TFD_FAILED_PRECONDITION, "factory for %s is a closed tfdev.factory handle", type);
    return *slot = tfd_device_factory_ref(u->f);
  }
  if (!lua_istable(L, idx))
    tfdev_raise(L, TFD_INVALID_ARGUMENT, "factory for %s must be a table with create_devices or a tfdev.factory, got %s",
                type, luaL_typename(L, idx));
  lua_getfield(L, idx, "create_devices");
  bool ok = lua_isfunction(L, -1);
  lua_pop(L, 1);
  if (!ok) tfdev_raise(L, TFD_INVALID_ARGUMENT, "factory for %s has no create_devices function", type);
  const char *name = lua_factory_name(L, idx);
  if (strlen(name) != lua_rawlen(L, -1) && lua_type(L, -1) == LUA_TSTRING)
    tfdev_raise(L, TFD_INVALID_ARGUMENT, "factory for %s: its name contains a NUL byte", type);
  lua_pushvalue(L, idx);
  int ref = luaL_ref(L, LUA_REGISTRYINDEX); /* may raise: nothing is allocated yet */
  lua_factory *lf = calloc(1, sizeof *lf);
  char *copy = lf ? strdup(name) : NULL;
  tfd_device_factory *f = NULL;
  if (copy) tfd_device_factory_new(&lua_factory_ops, lf, &f, NULL);
  if (!f) {
    free(copy);
    free(lf);
    luaL_unref(L, LUA_REGISTRYINDEX, ref);
    tfdev_raise(L, TFD_RESOURCE_EXHAUSTED, "out of memory registering a factory for %s", type);
  }
  lf->main = main_thread(L);
  lf->ref = ref;
  lf->name = copy;
  return *slot = f;
}

static int factory_register(lua_State *L) {
  lua_settop(L, 3);
  const char *type = tfdev_check_name(L, 1, "device type");
  int ok = 1;
  lua_Integer prio = lua_isnil(L, 3) ? TFD_PRIORITY_DEFAULT : lua_tointegerx(L, 3, &ok);
  if (!ok || prio < -1000000 || prio > 1000000)
    return tfdev_raise(L, TFD_INVALID_ARGUMENT, "priority must be an integer in [-1000000, 1000000], got %s",
                       luaL_tolstring(L, 3, NULL));
  tfd_status *st = tfdev_new_status(L);
  int box = lua_gettop(L) + 1; /* to_factory pushes the box first */
  tfd_device_factory *f = to_factory(L, 2, type);
  tfd_code code = tfd_factory_registry_register(tfdev_state(L)->registry, type, f, (int)prio, st);
  tfd_device_factory_unref(tfdev_box_take(L, box));
  if (code != TFD_OK) return tfdev_raise_status(L, st);
  return 0;
}

static int factory_get(lua_State *L) {
  tfd_device_factory *f = tfd_factory_registry_get(tfdev_state(L)->registry, tfdev_check_name(L, 1, "device type"));
  if (!f) lua_pushnil(L);
  else push_factory(L, f);
  return 1;
}

static int factory_priority(lua_State *L) {
  lua_pushinteger(L, tfd_factory_registry_priority(tfdev_state(L)->registry, tfdev_check_name(L, 1, "device type")));
  return 1;
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
    lua_pushstring(L, tfd_device_factory_name(f));
    lua_setfield(L, -2, "name");
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

static void device_list_box_free(void *l) { tfd_device_list_free(l); }

/* A new device list owned by a box pushed on the stack. */
static tfd_device_list *boxed_device_list(lua_State *L) {
  void **slot = tfdev_new_box(L, device_list_box_free);
  tfd_device_list *l = *slot = tfd_device_list_new();
  if (!l) tfdev_raise(L, TFD_RESOURCE_EXHAUSTED, "out of memory making a device list");
  return l;
}

static const char *opt_prefix(lua_State *L, int idx) {
  return lua_isnoneornil(L, idx) ? TFD_LOCAL_NAME_PREFIX : tfdev_check_name(L, idx, "name_prefix");
}

static int factory_add_devices(lua_State *L) {
  lua_settop(L, 2); /* helpers push below: fix the argument slots first */
  tfd_session_options *o = tfdev_check_options(L, 1);
  const char *prefix = opt_prefix(L, 2);
  tfd_status *st = tfdev_new_status(L);
  tfd_device_list *l = boxed_device_list(L);
  tfdev_call_ctx ctx = {L, lua_istable(L, 1) ? 1 : 0};
  if (tfd_factory_registry_add_devices(tfdev_state(L)->registry, o, prefix, &ctx, l, st) != TFD_OK)
    return tfdev_raise_status(L, st);
  tfdev_push_device_list(L, l);
  return 1;
}

static int factory_new_device(lua_State *L) {
  lua_settop(L, 3);
  const char *type = tfdev_check_name(L, 1, "device type");
  tfd_session_options *o = tfdev_check_options(L, 2);
  const char *prefix = opt_prefix(L, 3);
  tfd_status *st = tfdev_new_status(L);
  tfdev_call_ctx ctx = {L, 0}; /* the factory sees device_count[type] = 1, so rebuild the table */
  tfd_device *d = NULL;
  tfd_factory_registry_new_device(tfdev_state(L)->registry, type, o, prefix, &ctx, &d, st);
  if (!d) return tfdev_raise_status(L, st);
  tfdev_push_device(L, d);
  tfd_device_unref(d);
  return 1;
}

/* Restores the runtime's registrations (drops everything registered in this state). */
static int factory_reset(lua_State *L) {
  tfdev_lstate *s = tfdev_state(L);
  tfd_factory_registry *fresh = tfd_factory_registry_copy(tfd_runtime_registry(s->runtime));
  if (!fresh) return tfdev_raise_oom(L, "copying the runtime's factory registry");
  tfd_factory_registry_free(s->registry);
  s->registry = fresh;
  return 0;
}

/* The factory of a tfdev.factory handle at 1; raises once its __gc ran. */
static tfd_device_factory *check_lfactory(lua_State *L) {
  lfactory *u = luaL_checkudata(L, 1, TFDEV_FACTORY_MT);
  if (!u->f) tfdev_raise(L, TFD_FAILED_PRECONDITION, "factory handle is closed");
  return u->f;
}

/* builtin:create_devices(options, name_prefix) */
static int lfactory_create_devices(lua_State *L) {
  lua_settop(L, 3);
  tfd_device_factory *f = check_lfactory(L);
  tfd_session_options *o = tfdev_check_options(L, 2);
  const char *prefix = opt_prefix(L, 3);
  tfd_status *st = tfdev_new_status(L);
  tfd_device_list *l = boxed_device_list(L);
  tfdev_call_ctx ctx = {L, lua_istable(L, 2) ? 2 : 0};
  if (tfd_device_factory_create_devices(f, &ctx, o, prefix, l, st) != TFD_OK) return tfdev_raise_status(L, st);
  tfdev_push_device_list(L, l);
  return 1;
}

static int lfactory_gc(lua_State *L);

static int lfactory_index(lua_State *L) {
  if (lua_type(L, 2) == LUA_TSTRING && strcmp(lua_tostring(L, 2), "close") == 0) { /* closing twice is harmless */
    lua_pushcfunction(L, lfactory_gc);
    return 1;
  }
  tfd_device_factory *f = check_lfactory(L);
  const char *k = luaL_checkstring(L, 2);
  if (strcmp(k, "name") == 0) {
    lua_pushstring(L, tfd_device_factory_name(f));
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
  if (!u->f) lua_pushliteral(L, "tfdev.factory(closed)");
  else lua_pushfstring(L, "tfdev.factory(%s)", tfd_device_factory_name(u->f));
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
                                  {"__gc", lfactory_gc},       {"__close", lfactory_gc}, {NULL, NULL}};
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
