/* Shared binding helpers: per-state registry, error values, options, names, classes. */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "l_common.h"

#define STATE_KEY "tfdev.state"
#define RUNTIME_KEY "tfdev.runtime" /* a runtime given before the module opened (tfdev_use_runtime) */

/* The registry's key of the error raised when even making an out-of-memory error fails. */
static const char oom_error_key = 0;
/* The registry's key of the userdata made inside finalizers (a table with weak keys: userdata -> the
 * order it was made in; "n" -> how many were): see tfdev_made. */
static const char made_in_gc_key = 0;

tfdev_lstate *tfdev_state_opt(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, STATE_KEY);
  tfdev_lstate *s = lua_touserdata(L, -1);
  lua_pop(L, 1);
  return s && s->registry ? s : NULL;
}

static int raise_closed(lua_State *L) {
  return tfdev_raise(L, TFD_FAILED_PRECONDITION,
                     "tfdev is closed in this Lua state: lua_close collected its state, and a finalizer run after "
                     "that cannot make or use tfdev objects (nothing would ever free them)");
}

tfdev_lstate *tfdev_state(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, STATE_KEY);
  tfdev_lstate *s = lua_touserdata(L, -1);
  lua_pop(L, 1);
  if (s && s->closed) raise_closed(L);
  if (!s || !s->registry)
    tfdev_raise(L, TFD_FAILED_PRECONDITION, "tfdev: module state is missing (was tfdev.core opened?)");
  return s;
}

bool tfdev_closed(lua_State *L) {
#if LUA_VERSION_RELEASE_NUM >= 50404
  /* The state is collected only by lua_close, whose finalizers run with the collector stopped (lua_gc
   * answers -1 there from 5.4.4 on): anywhere else this costs one call, not a registry lookup. */
  if (lua_gc(L, LUA_GCISRUNNING) >= 0) return false;
#endif
  lua_getfield(L, LUA_REGISTRYINDEX, STATE_KEY);
  tfdev_lstate *s = lua_touserdata(L, -1);
  lua_pop(L, 1);
  return s && s->closed;
}

void tfdev_check_alive(lua_State *L) {
  if (tfdev_closed(L)) raise_closed(L);
}

void tfdev_made(lua_State *L) {
#if LUA_VERSION_RELEASE_NUM >= 50404
  if (lua_gc(L, LUA_GCISRUNNING) >= 0) return; /* not inside a finalizer */
  /* lua_close calls no finalizer of an object made while it runs finalizers, and tfdev cannot tell
   * those from a collection's: it lists what any finalizer makes, and the state's own finalizer
   * (which lua_close runs after those of everything made since the module opened) closes what is
   * left. A collection's objects are finalized as usual and drop out of the weak list. */
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, &made_in_gc_key) == LUA_TTABLE) {
    lua_pushliteral(L, "n");
    lua_rawget(L, -2);
    lua_Integer n = lua_tointeger(L, -1) + 1;
    lua_pop(L, 1);
    lua_pushinteger(L, n);
    lua_setfield(L, -2, "n");
    lua_pushvalue(L, -2);
    lua_pushinteger(L, n);
    lua_rawset(L, -3);
  }
  lua_pop(L, 1);
#else
  (void)L; /* before 5.4.4 a finalizer cannot be told from other code: nothing is listed */
#endif
}

/* Runs the finalizer of every userdata a finalizer made that is still listed, newest first as Lua
 * would (a future before the session it runs in); their finalizers are idempotent, so one that Lua ran
 * already does nothing. */
static int close_made_in_gc_body(lua_State *L) {
  int list = 1;
  lua_pushliteral(L, "n");
  lua_rawget(L, list);
  lua_Integer n = lua_tointeger(L, -1);
  lua_pop(L, 1);
  lua_createtable(L, (int)(n > 0 && n < INT_MAX ? n : 0), 0); /* order -> userdata */
  int by_order = lua_gettop(L);
  lua_pushnil(L);
  while (lua_next(L, list)) {
    if (lua_type(L, -2) == LUA_TUSERDATA) {
      lua_pushvalue(L, -2);
      lua_rawseti(L, by_order, lua_tointeger(L, -2));
    }
    lua_pop(L, 1);
  }
  for (lua_Integer i = n; i >= 1; i--) {
    if (lua_rawgeti(L, by_order, i) == LUA_TUSERDATA && luaL_getmetafield(L, -1, "__gc") != LUA_TNIL) {
      lua_insert(L, -2);
      if (lua_pcall(L, 1, 0, 0) != LUA_OK) lua_pop(L, 1); /* one that fails leaves the others to close */
    } else {
      lua_pop(L, 1);
    }
  }
  return 0;
}

static void close_made_in_gc(lua_State *L) {
  if (!lua_checkstack(L, 4)) return;
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, &made_in_gc_key) == LUA_TTABLE) {
    lua_pushcfunction(L, close_made_in_gc_body);
    lua_insert(L, -2);
    if (lua_pcall(L, 1, 0, 0) != LUA_OK) lua_pop(L, 1); /* out of memory: what they hold stays */
  } else {
    lua_pop(L, 1);
  }
}

void tfdev_new_class(lua_State *L, const char *name, const luaL_Reg *meta, const luaL_Reg *methods) {
  luaL_newmetatable(L, name);
  luaL_setfuncs(L, meta, 0);
  if (methods) {
    lua_getfield(L, -1, "__index");
    bool has_index = !lua_isnil(L, -1);
    lua_pop(L, 1);
    if (!has_index) {
      lua_newtable(L);
      luaL_setfuncs(L, methods, 0);
      lua_setfield(L, -2, "__index");
    } else {
      /* Classes with a custom __index find their methods under "methods". */
      lua_newtable(L);
      luaL_setfuncs(L, methods, 0);
      lua_setfield(L, -2, "methods");
    }
  }
  lua_pop(L, 1);
}

void tfdev_set_int(lua_State *L, const char *key, lua_Integer v) {
  lua_pushinteger(L, v);
  lua_setfield(L, -2, key);
}

void tfdev_set_str(lua_State *L, const char *key, const char *v) {
  lua_pushstring(L, v);
  lua_setfield(L, -2, key);
}

void tfdev_set_bool(lua_State *L, const char *key, int v) {
  lua_pushboolean(L, v);
  lua_setfield(L, -2, key);
}

/* ---- errors ---- */
/* Whether a chunk is one of tfdev's own Lua modules (".../tfdev/init.lua"): an error's position is
 * the script's call, past them. */
static bool is_module_source(const char *src) {
  const char *slash = strrchr(src, '/');
  if (!slash || strcmp(slash + strlen(slash) - 4, ".lua") != 0) return false;
  return slash - src >= 6 && strncmp(slash - 6, "/tfdev", 6) == 0;
}

/* Pushes "chunk:line" of the innermost Lua code outside tfdev's modules that is running (the
 * script's call that failed), or nothing when there is none (a host calling in from C). */
static bool push_where(lua_State *L) {
  lua_Debug ar;
  for (int level = 1; lua_getstack(L, level, &ar); level++) {
    if (!lua_getinfo(L, "Sl", &ar) || ar.currentline <= 0 || is_module_source(ar.short_src)) continue;
    lua_pushfstring(L, "%s:%d", ar.short_src, ar.currentline);
    return true;
  }
  return false;
}

void tfdev_push_error(lua_State *L, tfd_code code, const char *message) {
  lua_createtable(L, 0, 3);
  tfdev_set_str(L, "code", tfd_code_name(code));
  tfdev_set_str(L, "message", message ? message : "");
  if (push_where(L)) lua_setfield(L, -2, "where");
  luaL_setmetatable(L, TFDEV_ERROR_MT);
}

int tfdev_raise(lua_State *L, tfd_code code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const char *msg = lua_pushvfstring(L, fmt, ap);
  va_end(ap);
  tfdev_push_error(L, code, msg);
  return lua_error(L);
}

static int push_oom_error(lua_State *L) {
  const char *what = lua_touserdata(L, 1);
  tfdev_push_error(L, TFD_RESOURCE_EXHAUSTED, lua_pushfstring(L, "out of memory %s", what));
  return 1;
}

int tfdev_raise_oom(lua_State *L, const char *what) {
  /* Making the error allocates too: made under pcall, so that when memory is that short the error made
   * at open is raised instead of Lua's plain "not enough memory". */
  if (lua_checkstack(L, 3)) {
    lua_pushcfunction(L, push_oom_error);
    lua_pushlightuserdata(L, (void *)what);
    if (lua_pcall(L, 1, 1, 0) == LUA_OK) return lua_error(L);
    lua_pop(L, 1); /* the memory error */
  }
  lua_rawgetp(L, LUA_REGISTRYINDEX, &oom_error_key);
  return lua_error(L);
}

/* Protected part of tfdev_error_text: (value, out as light userdata) -> describes value into out. */
typedef struct error_text {
  tfd_code code;
  char *buf;
  size_t size;
} error_text;

static int tolstring_body(lua_State *L) {
  luaL_tolstring(L, 1, NULL);
  return 1;
}

static int error_text_body(lua_State *L) {
  error_text *e = lua_touserdata(L, 2);
  if (tfdev_is_error(L, 1)) { /* raw reads: the value's own fields, no metamethods */
    lua_pushliteral(L, "code");
    lua_rawget(L, 1);
    int code = lua_type(L, -1) == LUA_TSTRING ? tfd_code_from_name(lua_tostring(L, -1)) : -1;
    if (code > 0) e->code = (tfd_code)code;
    lua_pushliteral(L, "message");
    lua_rawget(L, 1);
    if (lua_type(L, -1) == LUA_TSTRING) {
      snprintf(e->buf, e->size, "%s", lua_tostring(L, -1));
      return 0;
    }
    snprintf(e->buf, e->size, "a tfdev.error whose message is a %s", luaL_typename(L, -1));
    return 0;
  }
  lua_pushcfunction(L, tolstring_body);
  lua_pushvalue(L, 1);
  if (lua_pcall(L, 1, 1, 0) == LUA_OK) {
    snprintf(e->buf, e->size, "%s", lua_tostring(L, -1));
  } else {
    /* Its __tostring raised, or gave no string: say what the value is, and what converting it raised. */
    snprintf(e->buf, e->size, "a %s error value whose __tostring raised: %s", luaL_typename(L, 1),
             lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : luaL_typename(L, -1));
  }
  return 0;
}

tfd_code tfdev_error_text(lua_State *L, int idx, tfd_code dflt, char *buf, size_t size) {
  error_text e = {dflt, buf, size};
  if (size) buf[0] = 0;
  idx = lua_absindex(L, idx);
  int top = lua_gettop(L);
  if (!lua_checkstack(L, 4)) {
    snprintf(buf, size, "(the error could not be read: the Lua stack is full)");
    return dflt;
  }
  lua_pushcfunction(L, error_text_body);
  lua_pushvalue(L, idx);
  lua_pushlightuserdata(L, &e);
  if (lua_pcall(L, 2, 0, 0) != LUA_OK) snprintf(buf, size, "(the error could not be read: out of memory)");
  lua_settop(L, top);
  return e.code;
}

int tfdev_raise_status(lua_State *L, tfd_status *st) {
  tfdev_push_error(L, tfd_status_code(st), tfd_status_message(st));
  tfd_status_reset(st);
  return lua_error(L);
}

int tfdev_fail_status(lua_State *L, tfd_status *st) {
  lua_pushnil(L);
  tfdev_push_error(L, tfd_status_code(st), tfd_status_message(st));
  tfd_status_reset(st);
  return 2;
}

static int error_tostring(lua_State *L) {
  lua_getfield(L, 1, "code");
  lua_getfield(L, 1, "message");
  lua_pushfstring(L, "%s: %s", luaL_optstring(L, -2, "UNKNOWN"), luaL_optstring(L, -1, ""));
  return 1;
}

static int error_new(lua_State *L) {
  const char *code = luaL_checkstring(L, 1);
  int c = tfd_code_from_name(code);
  if (c < 0 || c == TFD_OK) return tfdev_raise(L, TFD_INVALID_ARGUMENT, "unknown error code '%s'", code);
  tfdev_push_error(L, (tfd_code)c, luaL_optstring(L, 2, ""));
  return 1;
}

bool tfdev_is_error(lua_State *L, int idx) {
  bool is = false;
  if (lua_getmetatable(L, idx)) {
    luaL_getmetatable(L, TFDEV_ERROR_MT);
    is = lua_rawequal(L, -1, -2);
    lua_pop(L, 2);
  }
  return is;
}

static int error_is(lua_State *L) {
  lua_pushboolean(L, tfdev_is_error(L, 1));
  return 1;
}

/* ---- statuses owned by the Lua stack ---- */
typedef struct status_box {
  tfd_status *st;
} status_box;

static int status_box_gc(lua_State *L) {
  status_box *b = lua_touserdata(L, 1);
  tfd_status_free(b->st);
  b->st = NULL;
  return 0;
}

tfd_status *tfdev_new_status(lua_State *L) {
  tfdev_check_alive(L);
  status_box *b = lua_newuserdatauv(L, sizeof *b, 0);
  b->st = NULL;
  luaL_setmetatable(L, "tfdev.status");
  tfdev_made(L);
  b->st = tfd_status_new();
  if (!b->st) tfdev_raise_oom(L, "making a status");
  return b->st;
}

/* ---- names ---- */
const char *tfdev_opt_name(lua_State *L, int idx, const char *what) {
  if (lua_type(L, idx) != LUA_TSTRING) return NULL;
  size_t len;
  const char *s = lua_tolstring(L, idx, &len);
  if (strlen(s) != len)
    tfdev_raise(L, TFD_INVALID_ARGUMENT, "%s contains a NUL byte at position %d: names are C strings", what,
                (int)strlen(s) + 1);
  return s;
}

const char *tfdev_check_name(lua_State *L, int idx, const char *what) {
  const char *s = tfdev_opt_name(L, idx, what);
  if (!s) tfdev_raise(L, TFD_INVALID_ARGUMENT, "%s must be a string, got %s", what, luaL_typename(L, idx));
  return s;
}

/* ---- boxes: C objects owned by the stack ---- */
typedef struct box {
  void *obj;
  void (*free_fn)(void *);
} box;

static int box_gc(lua_State *L) {
  box *b = lua_touserdata(L, 1);
  if (b->obj && b->free_fn) b->free_fn(b->obj);
  b->obj = NULL;
  return 0;
}

void **tfdev_new_box(lua_State *L, void (*free_fn)(void *)) {
  tfdev_check_alive(L);
  box *b = lua_newuserdatauv(L, sizeof *b, 0);
  b->obj = NULL;
  b->free_fn = free_fn;
  luaL_setmetatable(L, "tfdev.box");
  tfdev_made(L);
  return &b->obj;
}

void *tfdev_box_take(lua_State *L, int idx) {
  box *b = luaL_checkudata(L, idx, "tfdev.box");
  void *obj = b->obj;
  b->obj = NULL;
  return obj;
}

/* ---- options ---- */
typedef struct options_box {
  tfd_session_options *o;
} options_box;

static int options_box_gc(lua_State *L) {
  options_box *b = lua_touserdata(L, 1);
  tfd_session_options_free(b->o);
  b->o = NULL;
  return 0;
}

/* Option keys the runtime knows. Device-layer ones are read here; the others
 * belong to sessions and are type-checked now so typos fail early. */
static const struct {
  const char *key;
  int type;
} option_keys[] = {
    {"device_count", LUA_TTABLE},     {"intra_op_threads", LUA_TNUMBER},     {"inter_op_threads", LUA_TNUMBER},
    {"use_global_threadpool", LUA_TBOOLEAN}, {"use_per_session_threads", LUA_TBOOLEAN},
    {"allow_soft_placement", LUA_TBOOLEAN}, {"log_device_placement", LUA_TBOOLEAN},
    {"operation_timeout_ms", LUA_TNUMBER}, {"visible_devices", LUA_TSTRING}, {"gpu", LUA_TTABLE},
    {"build_cost_model", LUA_TBOOLEAN}, {"optimize_graph", LUA_TBOOLEAN}, {"place_pruned_graph", LUA_TBOOLEAN},
    {"session_inter_op_thread_pool", LUA_TTABLE}, {"build_cost_model_after", LUA_TNUMBER},
};

/* The integer option prefix..key at stack index idx, in [lo, hi]. */
static int check_int_field(lua_State *L, int idx, const char *prefix, const char *key, int lo, int hi) {
  int ok;
  lua_Integer v = lua_tointegerx(L, idx, &ok);
  if (!ok || v < lo || v > hi)
    tfdev_raise(L, TFD_INVALID_ARGUMENT, "option %s%s must be an integer in [%d, %d], got %s", prefix, key, lo, hi,
                luaL_tolstring(L, idx, NULL));
  return (int)v;
}

tfd_session_options *tfdev_check_options(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  bool absent = lua_isnoneornil(L, idx); /* before pushing: idx may be past the top */
  tfdev_check_alive(L);
  options_box *b = lua_newuserdatauv(L, sizeof *b, 0);
  b->o = NULL;
  luaL_setmetatable(L, "tfdev.options");
  tfdev_made(L);
  b->o = tfd_session_options_new();
  if (!b->o) tfdev_raise_oom(L, "making session options");
  if (absent) return b->o;
  if (!lua_istable(L, idx)) tfdev_raise(L, TFD_INVALID_ARGUMENT, "options must be a table, got %s", luaL_typename(L, idx));
  tfd_status *st = tfdev_new_status(L);
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    if (lua_type(L, -2) != LUA_TSTRING) tfdev_raise(L, TFD_INVALID_ARGUMENT, "option keys must be strings");
    const char *key = tfdev_check_name(L, -2, "option key");
    size_t k = 0, n = sizeof option_keys / sizeof option_keys[0];
    while (k < n && strcmp(option_keys[k].key, key) != 0) k++;
    if (k == n) {
      luaL_Buffer known;
      luaL_buffinit(L, &known);
      for (size_t j = 0; j < n; j++) {
        if (j) luaL_addstring(&known, ", ");
        luaL_addstring(&known, option_keys[j].key);
      }
      luaL_pushresult(&known);
      tfdev_raise(L, TFD_INVALID_ARGUMENT, "unknown option '%s' (options: %s)", key, lua_tostring(L, -1));
    }
    if (lua_type(L, -1) != option_keys[k].type)
      tfdev_raise(L, TFD_INVALID_ARGUMENT, "option %s must be a %s, got %s", key, lua_typename(L, option_keys[k].type),
                  luaL_typename(L, -1));
    if (strcmp(key, "device_count") == 0) {
      lua_pushnil(L);
      while (lua_next(L, -2)) {
        if (lua_type(L, -2) != LUA_TSTRING) tfdev_raise(L, TFD_INVALID_ARGUMENT, "device_count keys must be device types");
        const char *type = tfdev_check_name(L, -2, "device_count key");
        int count = check_int_field(L, lua_gettop(L), "device_count.", type, 0, TFD_MAX_CPU_DEVICES);
        if (tfd_session_options_set_device_count(b->o, type, count, st) != TFD_OK) tfdev_raise_status(L, st);
        lua_pop(L, 1);
      }
    } else if (strcmp(key, "intra_op_threads") == 0) {
      tfd_session_options_set_intra_op_threads(b->o, check_int_field(L, lua_gettop(L), "", key, 0, TFD_MAX_THREADS));
    } else if (strcmp(key, "inter_op_threads") == 0) {
      tfd_session_options_set_inter_op_threads(b->o, check_int_field(L, lua_gettop(L), "", key, -1, TFD_MAX_THREADS));
    } else if (strcmp(key, "use_global_threadpool") == 0) {
      tfd_session_options_set_use_global_threadpool(b->o, lua_toboolean(L, -1));
    } else if (strcmp(key, "allow_soft_placement") == 0) {
      tfd_session_options_set_allow_soft_placement(b->o, lua_toboolean(L, -1));
    } else if (strcmp(key, "log_device_placement") == 0) {
      tfd_session_options_set_log_device_placement(b->o, lua_toboolean(L, -1));
    } else if (strcmp(key, "build_cost_model") == 0) {
      tfd_session_options_set_build_cost_model(b->o, lua_toboolean(L, -1));
    } else if (strcmp(key, "build_cost_model_after") == 0) {
      int after = check_int_field(L, lua_gettop(L), "", key, 0, INT_MAX);
      if (tfd_session_options_set_build_cost_model_after(b->o, after, st) != TFD_OK) tfdev_raise_status(L, st);
    } else if (strcmp(key, "optimize_graph") == 0) {
      tfd_session_options_set_optimize_graph(b->o, lua_toboolean(L, -1));
    } else if (strcmp(key, "place_pruned_graph") == 0) {
      tfd_session_options_set_place_pruned_graph(b->o, lua_toboolean(L, -1));
    } else if (strcmp(key, "session_inter_op_thread_pool") == 0) {
      /* A list of {num_threads=, global_name=} (TensorFlow's ThreadPoolOptionProto). */
      int list = lua_gettop(L);
      lua_Integer npools = luaL_len(L, list);
      if (npools > TFD_MAX_INTER_OP_POOLS)
        tfdev_raise(L, TFD_INVALID_ARGUMENT, "option session_inter_op_thread_pool: at most %d pools, got %I",
                    TFD_MAX_INTER_OP_POOLS, npools);
      lua_pushnil(L);
      while (lua_next(L, list)) { /* every key a position 1..npools: a list, nothing else */
        if (!lua_isinteger(L, -2) || lua_tointeger(L, -2) < 1 || lua_tointeger(L, -2) > npools)
          tfdev_raise(L, TFD_INVALID_ARGUMENT, "option session_inter_op_thread_pool must be a list of pools");
        lua_pop(L, 1);
      }
      for (lua_Integer i = 1; i <= npools; i++) {
        if (lua_geti(L, list, i) != LUA_TTABLE)
          tfdev_raise(L, TFD_INVALID_ARGUMENT,
                      "option session_inter_op_thread_pool[%I] must be a table {num_threads=, global_name=}, got %s",
                      i, luaL_typename(L, -1));
        int pool = lua_gettop(L), threads = 0;
        const char *name = NULL;
        lua_pushnil(L);
        while (lua_next(L, pool)) {
          const char *pk = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "?";
          if (strcmp(pk, "num_threads") == 0) {
            char prefix[64];
            snprintf(prefix, sizeof prefix, "session_inter_op_thread_pool[%lld].", (long long)i);
            threads = check_int_field(L, lua_gettop(L), prefix, pk, 0, TFD_MAX_THREADS);
          } else if (strcmp(pk, "global_name") == 0) {
            if (lua_type(L, -1) != LUA_TSTRING)
              tfdev_raise(L, TFD_INVALID_ARGUMENT, "option session_inter_op_thread_pool[%I].global_name must be a string, got %s",
                          i, luaL_typename(L, -1));
            name = lua_tostring(L, -1); /* kept alive by the pool table until it is copied below */
          } else {
            tfdev_raise(L, TFD_INVALID_ARGUMENT,
                        "unknown option 'session_inter_op_thread_pool[%I].%s' (num_threads, global_name)", i, pk);
          }
          lua_pop(L, 1);
        }
        if (tfd_session_options_add_inter_op_pool(b->o, threads, name, st) != TFD_OK) tfdev_raise_status(L, st);
        lua_pop(L, 1);
      }
    } else if (strcmp(key, "use_per_session_threads") == 0) {
      tfd_session_options_set_use_per_session_threads(b->o, lua_toboolean(L, -1));
    } else if (strcmp(key, "visible_devices") == 0) {
      if (tfd_session_options_set_visible_devices(b->o, lua_tostring(L, -1), st) != TFD_OK) tfdev_raise_status(L, st);
    } else if (strcmp(key, "gpu") == 0) {
      lua_pushnil(L);
      while (lua_next(L, -2)) {
        const char *gk = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "?";
        if (strcmp(gk, "memory_fraction") == 0) {
          if (lua_type(L, -1) != LUA_TNUMBER)
            tfdev_raise(L, TFD_INVALID_ARGUMENT, "option gpu.memory_fraction must be a number, got %s", luaL_typename(L, -1));
          if (tfd_session_options_set_gpu_memory_fraction(b->o, lua_tonumber(L, -1), st) != TFD_OK) tfdev_raise_status(L, st);
        } else if (strcmp(gk, "allow_growth") == 0) {
          if (lua_type(L, -1) != LUA_TBOOLEAN)
            tfdev_raise(L, TFD_INVALID_ARGUMENT, "option gpu.allow_growth must be a boolean, got %s", luaL_typename(L, -1));
          tfd_session_options_set_gpu_allow_growth(b->o, lua_toboolean(L, -1));
        } else if (strcmp(gk, "sync_every_op") == 0) {
          if (lua_type(L, -1) != LUA_TBOOLEAN)
            tfdev_raise(L, TFD_INVALID_ARGUMENT, "option gpu.sync_every_op must be a boolean, got %s", luaL_typename(L, -1));
          tfd_session_options_set_gpu_sync_every_op(b->o, lua_toboolean(L, -1));
        } else if (strcmp(gk, "graphs") == 0) {
          if (lua_type(L, -1) != LUA_TBOOLEAN)
            tfdev_raise(L, TFD_INVALID_ARGUMENT, "option gpu.graphs must be a boolean, got %s", luaL_typename(L, -1));
          tfd_session_options_set_gpu_graphs(b->o, lua_toboolean(L, -1));
        } else if (strcmp(gk, "max_streams") == 0) {
          if (!lua_isinteger(L, -1))
            tfdev_raise(L, TFD_INVALID_ARGUMENT, "option gpu.max_streams must be an integer, got %s", luaL_typename(L, -1));
          lua_Integer streams = lua_tointeger(L, -1);
          if (tfd_session_options_set_gpu_max_streams(b->o, streams < 0 || streams > 1000 ? 0 : (int)streams, st) != TFD_OK)
            tfdev_raise_status(L, st);
        } else {
          tfdev_raise(L, TFD_INVALID_ARGUMENT,
                      "unknown option 'gpu.%s' (memory_fraction, allow_growth, sync_every_op, max_streams, graphs)", gk);
        }
        lua_pop(L, 1);
      }
    } else if (strcmp(key, "operation_timeout_ms") == 0) {
      int ok;
      lua_Integer ms = lua_tointegerx(L, -1, &ok);
      if (!ok || ms < 0) tfdev_raise(L, TFD_INVALID_ARGUMENT, "option operation_timeout_ms must be an integer >= 0");
      tfd_session_options_set_operation_timeout_ms(b->o, ms);
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 1); /* status */
  return b->o;
}

void tfdev_push_options(lua_State *L, const tfd_session_options *o) {
  lua_createtable(L, 0, 4);
  lua_newtable(L);
  for (size_t i = 0; i < tfd_session_options_num_device_counts(o); i++) {
    const char *type;
    int n;
    tfd_session_options_device_count_at(o, i, &type, &n);
    tfdev_set_int(L, type, n);
  }
  lua_setfield(L, -2, "device_count");
  tfdev_set_int(L, "intra_op_threads", tfd_session_options_intra_op_threads(o));
  tfdev_set_int(L, "inter_op_threads", tfd_session_options_inter_op_threads(o));
  tfdev_set_bool(L, "use_global_threadpool", tfd_session_options_use_global_threadpool(o));
}

/* ---- parsed names ---- */
static bool valid_part(const char *s) {
  tfd_parsed_name p;
  char buf[TFD_DEVICE_NAME_MAX + 8];
  if (strlen(s) >= TFD_NAME_PART_MAX) return false;
  snprintf(buf, sizeof buf, "%s:0", s);
  return tfd_device_name_parse_local(buf, &p);
}

void tfdev_check_parsed_name(lua_State *L, int idx, tfd_parsed_name *out) {
  idx = lua_absindex(L, idx);
  memset(out, 0, sizeof *out);
  if (lua_type(L, idx) == LUA_TSTRING) {
    tfd_status *st = tfdev_new_status(L);
    if (tfd_device_name_parse(tfdev_check_name(L, idx, "device name"), out, st) != TFD_OK) tfdev_raise_status(L, st);
    lua_pop(L, 1);
    return;
  }
  if (!lua_istable(L, idx))
    tfdev_raise(L, TFD_INVALID_ARGUMENT, "expected a device name (string or table), got %s", luaL_typename(L, idx));
  static const char *const str_fields[] = {"job", "type"};
  for (int i = 0; i < 2; i++) {
    if (lua_getfield(L, idx, str_fields[i]) != LUA_TNIL) {
      const char *v = tfdev_opt_name(L, -1, str_fields[i]);
      if (!v || !valid_part(v))
        tfdev_raise(L, TFD_INVALID_ARGUMENT, "device name field %s: '%s' is not a valid name", str_fields[i],
                    luaL_tolstring(L, -1, NULL));
      strcpy(i == 0 ? out->job : out->type, v);
      *(i == 0 ? &out->has_job : &out->has_type) = true;
    }
    lua_pop(L, 1);
  }
  static const char *const int_fields[] = {"replica", "task", "id"};
  int *vals[] = {&out->replica, &out->task, &out->id};
  bool *has[] = {&out->has_replica, &out->has_task, &out->has_id};
  for (int i = 0; i < 3; i++) {
    if (lua_getfield(L, idx, int_fields[i]) != LUA_TNIL) {
      int ok;
      lua_Integer v = lua_tointegerx(L, -1, &ok);
      if (!ok || v < 0 || v > 0x7fffffff)
        tfdev_raise(L, TFD_INVALID_ARGUMENT, "device name field %s must be a non-negative integer, got %s",
                    int_fields[i], luaL_tolstring(L, -1, NULL));
      *vals[i] = (int)v;
      *has[i] = true;
    }
    lua_pop(L, 1);
  }
}

void tfdev_push_parsed_name(lua_State *L, const tfd_parsed_name *p) {
  lua_createtable(L, 0, 5);
  if (p->has_job) tfdev_set_str(L, "job", p->job);
  if (p->has_replica) tfdev_set_int(L, "replica", p->replica);
  if (p->has_task) tfdev_set_int(L, "task", p->task);
  if (p->has_type) tfdev_set_str(L, "type", p->type);
  if (p->has_id) tfdev_set_int(L, "id", p->id);
}

void *tfdev_check_handle(lua_State *L, int idx, const char *mt, const char *what) {
  void **u = luaL_checkudata(L, idx, mt);
  if (!*u) tfdev_raise(L, TFD_FAILED_PRECONDITION, "%s handle is closed", what);
  return *u;
}

/* ---- the Lua state calling into tfdev on this thread (l_common.h) ---- */
static _Thread_local lua_State *calling;

lua_State *tfdev_calling_push(lua_State *L) {
  lua_State *prev = calling;
  calling = L;
  return prev;
}

void tfdev_calling_pop(lua_State *prev) { calling = prev; }

lua_State *tfdev_calling(void) { return calling; }

bool tfdev_in_calling(void) { return calling != NULL; }

/* ---- the per-state userdata and generic metatables ---- */
static int lstate_gc(lua_State *L) {
  tfdev_lstate *s = lua_touserdata(L, 1);
  close_made_in_gc(L);
  tfd_factory_registry_free(s->registry);
  s->registry = NULL;
  tfd_runtime_unref(s->runtime);
  s->runtime = NULL;
  if (s->lua_ops_closed) s->lua_ops_closed(s->lua_ops);
  s->lua_ops = NULL;
  tfd_allocator_unref(s->host); /* tensors still alive keep it until they go */
  s->host = NULL;
  s->closed = true; /* finalizers still to run at lua_close are refused from here on (tfdev_check_alive) */
  return 0;
}

tfd_code tfdev_use_runtime(lua_State *L, tfd_runtime *rt, tfd_status *st) {
  lua_getfield(L, LUA_REGISTRYINDEX, STATE_KEY);
  bool opened = lua_touserdata(L, -1) != NULL;
  lua_pop(L, 1);
  if (opened) return tfd_status_setf(st, TFD_FAILED_PRECONDITION, "tfdev is already open in this Lua state");
  if (!rt) return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "tfdev_use_runtime needs a runtime");
  lua_getfield(L, LUA_REGISTRYINDEX, RUNTIME_KEY);
  tfd_runtime_unref(lua_touserdata(L, -1)); /* an earlier call's, replaced */
  lua_pop(L, 1);
  lua_pushlightuserdata(L, tfd_runtime_ref(rt));
  lua_setfield(L, LUA_REGISTRYINDEX, RUNTIME_KEY);
  return TFD_OK;
}

tfd_code tfdev_lua_set_interrupt(lua_State *L, const volatile sig_atomic_t *flag, tfd_status *st) {
  tfd_status_reset(st);
  tfdev_lstate *s = tfdev_state_opt(L);
  if (!s) return tfd_status_setf(st, TFD_FAILED_PRECONDITION, "tfdev_lua_set_interrupt: tfdev is not open in this Lua state");
  s->interrupt = flag;
  return TFD_OK;
}

void tfdev_common_open(lua_State *L) {
  static const luaL_Reg error_meta[] = {{"__tostring", error_tostring}, {NULL, NULL}};
  tfdev_new_class(L, TFDEV_ERROR_MT, error_meta, NULL);
  static const luaL_Reg status_meta[] = {{"__gc", status_box_gc}, {NULL, NULL}};
  tfdev_new_class(L, "tfdev.status", status_meta, NULL);
  static const luaL_Reg box_meta[] = {{"__gc", box_gc}, {NULL, NULL}};
  tfdev_new_class(L, "tfdev.box", box_meta, NULL);
  static const luaL_Reg options_meta[] = {{"__gc", options_box_gc}, {NULL, NULL}};
  tfdev_new_class(L, "tfdev.options", options_meta, NULL);
  lua_getfield(L, LUA_REGISTRYINDEX, STATE_KEY);
  bool have = lua_touserdata(L, -1) != NULL;
  lua_pop(L, 1);
  if (!have) {
    /* Each Lua state gets its own registry, copied from its runtime's. */
    tfdev_lstate *s = lua_newuserdatauv(L, sizeof *s, 0);
    s->runtime = NULL;
    s->registry = NULL;
    s->host = NULL;
    s->lua_ops = NULL;
    s->lua_ops_closed = NULL;
    s->closed = false;
    s->interrupt = NULL;
    lua_createtable(L, 0, 1);
    lua_pushcfunction(L, lstate_gc);
    lua_setfield(L, -2, "__gc");
    lua_setmetatable(L, -2);
    lua_getfield(L, LUA_REGISTRYINDEX, RUNTIME_KEY);
    tfd_runtime *given = lua_touserdata(L, -1);
    lua_pop(L, 1);
    lua_pushnil(L);
    lua_setfield(L, LUA_REGISTRYINDEX, RUNTIME_KEY); /* the state's reference moves to s */
    s->runtime = given;
    if (!given) tfd_runtime_new(NULL, &s->runtime, NULL);
    s->registry = s->runtime ? tfd_factory_registry_copy(tfd_runtime_registry(s->runtime)) : NULL;
    s->host = s->runtime ? tfd_runtime_cpu_allocator_new(s->runtime, "lua_host", TFDEV_HOST_MEMORY_LIMIT,
                                                         TFDEV_HOST_CACHE_BYTES)
                         : NULL;
    tfdev_push_error(L, TFD_RESOURCE_EXHAUSTED, "out of memory");
    lua_rawsetp(L, LUA_REGISTRYINDEX, &oom_error_key);
    lua_newtable(L);
    lua_createtable(L, 0, 1);
    lua_pushliteral(L, "k");
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &made_in_gc_key);
    if (!s->registry || !s->host) tfdev_raise_oom(L, "creating the module's state"); /* s's __gc frees what was made */
    lua_setfield(L, LUA_REGISTRYINDEX, STATE_KEY);
  }
}

/* tfdev.error = {new=, is=, codes=} */
int tfdev_open_error(lua_State *L) {
  static const luaL_Reg fns[] = {{"new", error_new}, {"is", error_is}, {NULL, NULL}};
  luaL_newlib(L, fns);
  lua_createtable(L, TFD_CODE_COUNT, 0);
  for (int i = 0; i < TFD_CODE_COUNT; i++) {
    lua_pushstring(L, tfd_code_name((tfd_code)i));
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "codes");
  return 1;
}
