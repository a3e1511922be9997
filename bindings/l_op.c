/* tfdev.op: ops written in Lua (tfdev.op.register) and C plug-ins (tfdev.load_plugin).
 *
 * A Lua op is a custom op (tfdev/custom_op.h) whose kernel and shape function are Lua functions of
 * the state that registered it. Its kernel asks to run on the thread that started the step, and
 * every binding call that can run kernels or infer shapes (session create, extend, run, run_async
 * and its future, callables, device:compute, the graph builder) records the calling Lua state for
 * its thread while it is in C (tfdev_calling_push/pop): a Lua kernel runs only there, in that state,
 * so Lua is never entered from two threads, and a run started from C or from another state fails
 * the node instead. Op names are process-wide, as TensorFlow's are; a Lua op's records outlive its
 * state (the registries keep pointing at them), are marked dead when the state closes, and are freed
 * with the library. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "l_common.h"
#include "l_tensor.h"
#include "l_op.h"
#include "l_modules.h"
#include "tfdev/custom_op.h"

#define LUA_OP_MAX_ATTRS 16

struct tfdev_lua_op {
  char name[128];
  lua_State *owner; /* the registering state's main thread */
  int kernel_ref, shape_ref;
  int num_outputs;
  int num_attrs;
  char attr_names[LUA_OP_MAX_ATTRS][64];
  /* Its state closed: written by the closing thread, read by threads running steps of other states
   * (whose usable_state then refuses), so atomic. */
  atomic_bool dead;
  struct tfdev_lua_op *next; /* the state's list (tfdev_lstate.lua_ops) */
  struct tfdev_lua_op *all_next; /* every record, freed when the library goes */
};

/* Every Lua op's record: the op and kernel registries point at them for as long as the library is
 * loaded, whatever state registered them. */
static pthread_mutex_t all_mu = PTHREAD_MUTEX_INITIALIZER;
static tfdev_lua_op *all_ops;

__attribute__((destructor)) static void free_lua_ops(void) {
  while (all_ops) {
    tfdev_lua_op *op = all_ops;
    all_ops = op->all_next;
    free(op);
  }
}

/* The Lua op function running on this thread, innermost first, for messages of calls it may not make. */
typedef struct running_fn {
  const char *what; /* "Lua kernel", "shape function" */
  const char *node, *op;
  struct running_fn *outer;
} running_fn;
static _Thread_local running_fn *running;

void tfdev_calling_name(char *buf, size_t size) {
  if (running)
    snprintf(buf, size, "the %s of node '%s' (op %s)", running->what, running->node, running->op);
  else
    snprintf(buf, size, "Lua code run by a tfdev call");
}

static lua_State *main_thread(lua_State *L) {
  lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
  lua_State *m = lua_tothread(L, -1);
  lua_pop(L, 1);
  return m;
}

/* The Lua state to call op's functions in: the caller's, when it is op's own and alive. */
static lua_State *usable_state(const tfdev_lua_op *op, const char **why) {
  lua_State *L = tfdev_calling();
  if (atomic_load_explicit(&op->dead, memory_order_acquire)) *why = "the Lua state that registered it is closed";
  else if (!L) *why = "its Lua kernel runs only in steps started from Lua, and this one was started from C";
  else if (main_thread(L) != op->owner) *why = "its Lua kernel belongs to another Lua state than the one running this step";
  else return L;
  return NULL;
}

/* Marks a closing state's Lua ops dead (tfdev_lstate.lua_ops_closed). */
static void lua_ops_closed(tfdev_lua_op *list) {
  for (tfdev_lua_op *op = list; op; op = op->next) atomic_store_explicit(&op->dead, true, memory_order_release);
}

/* ---- shape functions ---- */
static void push_shape(lua_State *L, const tfd_shape *s) {
  if (s->ndims < 0) {
    lua_pushnil(L);
    return;
  }
  lua_createtable(L, s->ndims, 0);
  for (int d = 0; d < s->ndims; d++) {
    lua_pushinteger(L, s->dims[d]);
    lua_rawseti(L, -2, d + 1);
  }
}

static void push_attr_value(lua_State *L, const tfd_attr_value *v) {
  switch (v ? v->type : 0) {
    case TFD_ATTR_INT: lua_pushinteger(L, v->i); break;
    case TFD_ATTR_FLOAT: lua_pushnumber(L, v->f); break;
    case TFD_ATTR_BOOL: lua_pushboolean(L, v->b); break;
    case TFD_ATTR_STRING: lua_pushstring(L, v->s ? v->s : ""); break;
    case TFD_ATTR_TYPE: lua_pushstring(L, tfd_dtype_name(v->dtype)); break;
    default: lua_pushnil(L);
  }
}

static void push_attrs(lua_State *L, const tfdev_lua_op *op, const tfd_node_def *node) {
  lua_createtable(L, 0, op->num_attrs);
  for (int i = 0; i < op->num_attrs; i++) {
    push_attr_value(L, tfd_node_def_attr(node, op->attr_names[i]));
    lua_setfield(L, -2, op->attr_names[i]);
  }
}

/* Protected part of a shape function call: (op, ctx) as light userdata; fills the outputs. */
static int call_shape_fn(lua_State *L) {
  tfdev_lua_op *op = lua_touserdata(L, 1);
  tfd_infer_context *c = lua_touserdata(L, 2);
  lua_rawgeti(L, LUA_REGISTRYINDEX, op->shape_ref);
  int n = tfd_infer_num_inputs(c);
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    tfd_shape s;
    tfd_infer_input_shape(c, i, &s);
    lua_createtable(L, 0, 2);
    lua_pushstring(L, tfd_dtype_name(tfd_infer_input_dtype(c, i)));
    lua_setfield(L, -2, "dtype");
    push_shape(L, &s);
    lua_setfield(L, -2, "shape");
    lua_rawseti(L, -2, i + 1);
  }
  push_attrs(L, op, tfd_infer_node(c));
  lua_call(L, 2, 1);
  if (!lua_istable(L, -1))
    return tfdev_raise(L, TFD_INVALID_ARGUMENT, "the shape function must return a list of {dtype=, shape=}, one per output");
  for (int o = 0; o < op->num_outputs; o++) {
    lua_rawgeti(L, -1, o + 1);
    if (!lua_istable(L, -1))
      return tfdev_raise(L, TFD_INVALID_ARGUMENT, "the shape function gave no {dtype=, shape=} for output %d", o + 1);
    lua_getfield(L, -1, "dtype");
    tfd_dtype dt = tfd_dtype_from_name(lua_tostring(L, -1));
    if (!dt)
      return tfdev_raise(L, TFD_INVALID_ARGUMENT, "the shape function gave output %d the dtype '%s'", o + 1,
                         luaL_tolstring(L, -1, NULL));
    lua_pop(L, 1);
    tfd_shape s = {.ndims = -1};
    if (lua_getfield(L, -1, "shape") == LUA_TTABLE) {
      lua_Integer nd = luaL_len(L, -1);
      if (nd > TFD_MAX_DIMS) return tfdev_raise(L, TFD_INVALID_ARGUMENT, "output %d: at most %d dims", o + 1, TFD_MAX_DIMS);
      s.ndims = (int)nd;
      for (int d = 0; d < s.ndims; d++) {
        lua_rawgeti(L, -1, d + 1);
        int ok;
        lua_Integer v = lua_tointegerx(L, -1, &ok);
        if (!ok || v < -1) return tfdev_raise(L, TFD_INVALID_ARGUMENT, "output %d: shape[%d] must be an integer >= -1", o + 1, d + 1);
        s.dims[d] = v;
        lua_pop(L, 1);
      }
    }
    lua_pop(L, 2);
    tfd_infer_set_output(c, o, dt, &s);
  }
  return 0;
}

/* Any error of a Lua op's function: nothing may raise past here into the runtime that called it (its
 * frames hold locks and the step's state), so the error value, whatever it is, becomes text here. */
#define LUA_OP_ERROR_MAX 2048

static tfd_code lua_op_infer(void *user, tfd_infer_context *c, tfd_status *st) {
  tfdev_lua_op *op = user;
  const char *why = NULL;
  lua_State *L = op->shape_ref != LUA_NOREF ? usable_state(op, &why) : NULL;
  if (!L) return TFD_OK; /* no shape function, or none callable here: the defaults (unknown shapes) */
  if (!lua_checkstack(L, 4))
    return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "shape function: the Lua stack is full");
  int top = lua_gettop(L);
  running_fn fn = {"shape function", tfd_node_def_name(tfd_infer_node(c)), op->name, running};
  running = &fn;
  lua_pushcfunction(L, call_shape_fn);
  lua_pushlightuserdata(L, op);
  lua_pushlightuserdata(L, c);
  int ran = lua_pcall(L, 2, 0, 0);
  running = fn.outer;
  if (ran == LUA_OK) return TFD_OK;
  char msg[LUA_OP_ERROR_MAX];
  tfd_code code = tfdev_error_text(L, -1, TFD_INVALID_ARGUMENT, msg, sizeof msg);
  lua_settop(L, top);
  return tfd_status_setf(st, code, "shape function: %s", msg);
}

/* ---- kernels ---- */
/* Each node's attributes, read once when its kernel is made. */
typedef struct node_attrs {
  int n;
  tfd_attr_value values[LUA_OP_MAX_ATTRS];
} node_attrs;

static void *lua_op_create(void *user, const tfd_node_def *node, tfd_status *st) {
  tfdev_lua_op *op = user;
  node_attrs *a = calloc(1, sizeof *a);
  if (!a) {
    tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
    return NULL;
  }
  a->n = op->num_attrs;
  for (int i = 0; i < op->num_attrs; i++) {
    const tfd_attr_value *v = tfd_node_def_attr(node, op->attr_names[i]);
    if (!v) continue;
    a->values[i] = *v;
    if (v->type == TFD_ATTR_STRING) a->values[i].s = strdup(v->s ? v->s : "");
  }
  return a;
}

static void lua_op_destroy(void *user, void *state) {
  (void)user;
  node_attrs *a = state;
  for (int i = 0; a && i < a->n; i++)
    if (a->values[i].type == TFD_ATTR_STRING) free((char *)a->values[i].s);
  free(a);
}

typedef struct kernel_call {
  tfdev_lua_op *op;
  node_attrs *attrs;
  tfd_kernel_context *c;
} kernel_call;

/* Protected part of a kernel call: inputs in, outputs back. */
static int call_kernel(lua_State *L) {
  kernel_call *k = lua_touserdata(L, 1);
  int n = tfd_kernel_context_num_inputs(k->c);
  luaL_checkstack(L, n + k->op->num_outputs + 4, "Lua kernel arguments");
  lua_rawgeti(L, LUA_REGISTRYINDEX, k->op->kernel_ref);
  for (int i = 0; i < n; i++) tfdev_push_tensor(L, tfd_tensor_ref(tfd_kernel_context_input(k->c, i)));
  lua_createtable(L, 0, k->attrs ? k->attrs->n : 0);
  for (int i = 0; k->attrs && i < k->attrs->n; i++) {
    push_attr_value(L, k->attrs->values[i].type ? &k->attrs->values[i] : NULL);
    lua_setfield(L, -2, k->op->attr_names[i]);
  }
  int base = lua_gettop(L) - n - 2;
  lua_call(L, n + 1, LUA_MULTRET);
  int got = lua_gettop(L) - base;
  if (got < k->op->num_outputs)
    return tfdev_raise(L, TFD_INVALID_ARGUMENT, "its Lua kernel returned %d value%s for %d output%s", got,
                       got == 1 ? "" : "s", k->op->num_outputs, k->op->num_outputs == 1 ? "" : "s");
  tfd_dtype like = n > 0 ? tfd_tensor_dtype(tfd_kernel_context_input(k->c, 0)) : TFD_FLOAT32;
  for (int o = 0; o < k->op->num_outputs; o++) {
    char what[32];
    snprintf(what, sizeof what, "output %d", o + 1);
    tfd_tensor *t = tfdev_to_tensor(L, base + 1 + o, lua_isuserdata(L, base + 1 + o) ? 0 : like, what);
    tfd_kernel_context_set_output(k->c, o, t);
  }
  return 0;
}

static void lua_op_compute(void *user, void *state, tfd_kernel_context *c) {
  tfdev_lua_op *op = user;
  const char *why = NULL;
  lua_State *L = usable_state(op, &why);
  if (!L) {
    tfd_kernel_context_fail(c, TFD_FAILED_PRECONDITION, "%s", why);
    return;
  }
  if (!lua_checkstack(L, 4)) {
    tfd_kernel_context_fail(c, TFD_RESOURCE_EXHAUSTED, "Lua kernel failed: the Lua stack is full");
    return;
  }
  kernel_call k = {op, state, c};
  int top = lua_gettop(L);
  running_fn fn = {"Lua kernel", tfd_kernel_context_node_name(c), op->name, running};
  running = &fn;
  lua_pushcfunction(L, call_kernel);
  lua_pushlightuserdata(L, &k);
  int ran = lua_pcall(L, 1, 0, 0);
  running = fn.outer;
  if (ran != LUA_OK) {
    char msg[LUA_OP_ERROR_MAX];
    tfd_code code = tfdev_error_text(L, -1, TFD_UNKNOWN, msg, sizeof msg);
    tfd_kernel_context_fail(c, code, "Lua kernel failed: %s", msg);
  }
  lua_settop(L, top);
}

/* ---- tfdev.op.register{...} ---- */
static int check_count(lua_State *L, int spec, const char *key, int max) {
  lua_getfield(L, spec, key);
  int n = 0;
  if (lua_istable(L, -1)) n = (int)luaL_len(L, -1);
  else if (lua_isinteger(L, -1)) n = (int)lua_tointeger(L, -1);
  else if (!lua_isnil(L, -1)) tfdev_raise(L, TFD_INVALID_ARGUMENT, "op %s must be a count or a list of names", key);
  lua_pop(L, 1);
  if (n < 0 || n > max) tfdev_raise(L, TFD_INVALID_ARGUMENT, "op %s: 0 to %d, got %d", key, max, n);
  return n;
}

/* attrs = {name = default, ...} or {name = {type = "int" | "float" | "bool" | "string" | "type", default = v}};
 * defaults' strings point into the spec table, which the caller keeps on the stack until they are copied. */
static int read_attrs(lua_State *L, int spec, tfdev_lua_op *op, tfd_custom_attr *attrs, tfd_attr_value *defaults) {
  int top = lua_gettop(L);
  if (lua_getfield(L, spec, "attrs") == LUA_TNIL) {
    lua_settop(L, top);
    return 0;
  }
  int tbl = lua_gettop(L);
  if (!lua_istable(L, tbl)) tfdev_raise(L, TFD_INVALID_ARGUMENT, "op attrs must be a table of name = default");
  int n = 0;
  lua_pushnil(L);
  while (lua_next(L, tbl)) {
    int key = lua_gettop(L) - 1, value = key + 1;
    const char *name = lua_type(L, key) == LUA_TSTRING ? lua_tostring(L, key) : NULL;
    if (!name || !*name || strlen(name) >= sizeof op->attr_names[0])
      tfdev_raise(L, TFD_INVALID_ARGUMENT, "op attr names are non-empty strings of at most %d bytes",
                  (int)sizeof op->attr_names[0] - 1);
    if (n == LUA_OP_MAX_ATTRS) tfdev_raise(L, TFD_INVALID_ARGUMENT, "an op has at most %d attrs", LUA_OP_MAX_ATTRS);
    snprintf(op->attr_names[n], sizeof op->attr_names[n], "%s", name);
    const char *type = NULL;
    if (lua_istable(L, value)) {
      lua_getfield(L, value, "type");
      type = lua_tostring(L, -1);
      lua_getfield(L, value, "default");
      value = lua_gettop(L);
    }
    bool has_default = !lua_isnil(L, value);
    if (!type)
      type = lua_isinteger(L, value) ? "int" : lua_type(L, value) == LUA_TNUMBER ? "float"
                                           : lua_isboolean(L, value)               ? "bool"
                                                                                   : "string";
    tfd_attr_type t = strcmp(type, "int") == 0      ? TFD_ATTR_INT
                      : strcmp(type, "float") == 0  ? TFD_ATTR_FLOAT
                      : strcmp(type, "bool") == 0   ? TFD_ATTR_BOOL
                      : strcmp(type, "string") == 0 ? TFD_ATTR_STRING
                      : strcmp(type, "type") == 0   ? TFD_ATTR_TYPE
                                                    : 0;
    if (!t) tfdev_raise(L, TFD_INVALID_ARGUMENT, "op attr '%s': type must be int, float, bool, string or type", name);
    tfd_attr_value *d = &defaults[n];
    *d = (tfd_attr_value){.type = t};
    bool ok = true;
    if (has_default) {
      if (t == TFD_ATTR_INT) ok = lua_isinteger(L, value), d->i = lua_tointeger(L, value);
      else if (t == TFD_ATTR_FLOAT) ok = lua_type(L, value) == LUA_TNUMBER, d->f = lua_tonumber(L, value);
      else if (t == TFD_ATTR_BOOL) ok = lua_isboolean(L, value), d->b = lua_toboolean(L, value);
      else if (t == TFD_ATTR_STRING) ok = lua_type(L, value) == LUA_TSTRING, d->s = lua_tostring(L, value);
      else ok = (d->dtype = tfd_dtype_from_name(lua_tostring(L, value))) != 0;
    }
    if (!ok) tfdev_raise(L, TFD_INVALID_ARGUMENT, "op attr '%s': the default is not a %s", name, type);
    attrs[n] = (tfd_custom_attr){op->attr_names[n], t, has_default ? d : NULL};
    n++;
    lua_settop(L, key); /* the key stays for lua_next */
  }
  lua_settop(L, top);
  return n;
}

static int op_register(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_getfield(L, 1, "name");
  const char *name = tfdev_check_name(L, -1, "op name");
  if (strlen(name) >= sizeof ((tfdev_lua_op *)0)->name) tfdev_raise(L, TFD_INVALID_ARGUMENT, "op name '%s' is too long", name);
  if (lua_getfield(L, 1, "kernel") != LUA_TFUNCTION) tfdev_raise(L, TFD_INVALID_ARGUMENT, "op %s needs a kernel function", name);
  lua_getfield(L, 1, "shape_fn");
  if (!lua_isnil(L, -1) && !lua_isfunction(L, -1))
    tfdev_raise(L, TFD_INVALID_ARGUMENT, "op %s: shape_fn must be a function", name);
  int kernel_idx = lua_gettop(L) - 1, shape_idx = lua_gettop(L);
  tfdev_lstate *state = tfdev_state(L);
  /* Permanent once registered (the registries point at it); freed below if registration fails. */
  tfdev_lua_op *op = calloc(1, sizeof *op);
  void **box = tfdev_new_box(L, free);
  int box_idx = lua_gettop(L);
  *box = op;
  if (!op) return tfdev_raise_oom(L, "registering a Lua op");
  snprintf(op->name, sizeof op->name, "%s", name);
  op->owner = main_thread(L);
  op->kernel_ref = op->shape_ref = LUA_NOREF;
  tfd_custom_attr attrs[LUA_OP_MAX_ATTRS];
  tfd_attr_value defaults[LUA_OP_MAX_ATTRS];
  op->num_attrs = read_attrs(L, 1, op, attrs, defaults);
  int num_inputs = check_count(L, 1, "inputs", TFD_CUSTOM_OP_MAX_INPUTS);
  op->num_outputs = check_count(L, 1, "outputs", TFD_CUSTOM_OP_MAX_OUTPUTS);
  lua_getfield(L, 1, "stateful");
  bool stateful = lua_toboolean(L, -1);
  lua_pop(L, 1);
  lua_getfield(L, 1, "priority");
  int priority = (int)luaL_optinteger(L, -1, 0);
  lua_pop(L, 1);
  /* Device types: checked before anything is registered. */
  const char *types[16];
  int ntypes = 0;
  if (lua_getfield(L, 1, "device_types") == LUA_TNIL) {
    types[ntypes++] = "CPU";
  } else {
    if (!lua_istable(L, -1)) tfdev_raise(L, TFD_INVALID_ARGUMENT, "op %s: device_types must be a list of names", name);
    for (lua_Integer i = 1; i <= luaL_len(L, -1) && ntypes < 16; i++) {
      lua_rawgeti(L, -1, i);
      types[ntypes++] = tfdev_check_name(L, -1, "device type");
      lua_pop(L, 1); /* the string stays alive in the list */
    }
    if (ntypes == 0) tfdev_raise(L, TFD_INVALID_ARGUMENT, "op %s: device_types is empty", name);
  }
  tfd_status *st = tfdev_new_status(L);
  tfd_custom_op spec = {.name = name, .num_inputs = num_inputs, .num_outputs = op->num_outputs, .attrs = attrs,
                        .num_attrs = op->num_attrs, .stateful = stateful, .infer = lua_op_infer, .user = op};
  if (tfd_custom_op_register(&spec, st) != TFD_OK) return tfdev_raise_status(L, st);
  tfdev_box_take(L, box_idx); /* the op registry points at op now: it lives as long as the library */
  pthread_mutex_lock(&all_mu);
  op->all_next = all_ops;
  all_ops = op;
  pthread_mutex_unlock(&all_mu);
  lua_pushvalue(L, kernel_idx);
  op->kernel_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  if (!lua_isnil(L, shape_idx)) {
    lua_pushvalue(L, shape_idx);
    op->shape_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  }
  op->next = state->lua_ops;
  state->lua_ops = op;
  state->lua_ops_closed = lua_ops_closed;
  for (int i = 0; i < ntypes; i++) {
    tfd_custom_kernel k = {.op = name, .device_type = types[i], .priority = priority, .create = lua_op_create,
                           .destroy = lua_op_destroy, .compute = lua_op_compute, .on_caller_thread = true, .user = op};
    if (tfd_custom_kernel_register(&k, st) != TFD_OK) return tfdev_raise_status(L, st);
    /* A host device type needs the session's transfers (and Const, Identity...) to take part in graphs. */
    if (strcmp(types[i], "CPU") != 0 && tfd_kernel_register_transfers(types[i], st) != TFD_OK)
      return tfdev_raise_status(L, st);
  }
  return 0;
}

/* tfdev.load_plugin(path): a C plug-in's ops and kernels, and the device factories it added to the
 * built-in registry, which this state's registry (a copy made earlier) gets too. */
static int load_plugin(lua_State *L) {
  const char *path = tfdev_check_name(L, 1, "plug-in path");
  tfd_status *st = tfdev_new_status(L);
  const tfd_factory_registry *builtin = tfd_factory_registry_default();
  size_t before = builtin ? tfd_factory_registry_size(builtin) : 0;
  tfd_device_factory **had = lua_newuserdatauv(L, (before ? before : 1) * sizeof *had, 0);
  for (size_t i = 0; i < before; i++) tfd_factory_registry_entry(builtin, i, NULL, NULL, &had[i]);
  if (tfd_plugin_load(path, st) != TFD_OK) return tfdev_raise_status(L, st);
  tfd_factory_registry *mine = tfdev_state(L)->registry;
  for (size_t i = 0; builtin && i < tfd_factory_registry_size(builtin); i++) {
    const char *type;
    int priority;
    tfd_device_factory *f;
    tfd_factory_registry_entry(builtin, i, &type, &priority, &f);
    bool old = false;
    for (size_t j = 0; j < before && !old; j++) old = had[j] == f;
    if (!old && tfd_factory_registry_register(mine, type, f, priority, st) != TFD_OK && tfd_status_code(st) != TFD_ALREADY_EXISTS)
      return tfdev_raise_status(L, st);
    tfd_status_reset(st);
  }
  return 0;
}

/* tfdev.op.exists(op [, device_type]): whether the op is registered (with a kernel for the type). */
static int op_exists(lua_State *L) {
  const char *name = tfdev_check_name(L, 1, "op name");
  const char *type = lua_isnoneornil(L, 2) ? NULL : tfdev_check_name(L, 2, "device type");
  lua_pushboolean(L, type ? tfd_kernel_exists(name, type) : tfd_ops_exists(name));
  return 1;
}

int tfdev_load_plugin(lua_State *L) { return load_plugin(L); }

int tfdev_open_op(lua_State *L) {
  static const luaL_Reg fns[] = {{"register", op_register}, {"exists", op_exists}, {"load_plugin", load_plugin}, {NULL, NULL}};
  luaL_newlib(L, fns);
  return 1;
}
