/* The bottom of the Lua bindings, as lauxlib is Lua's: per-state data, tfdev.error values, statuses,
 * boxes and handles, names and options. It calls no type module: each type's helpers for the others are
 * in its own header (l_tensor.h, l_device.h, l_session.h, l_graph.h, l_op.h), and the sub-modules'
 * openers in l_modules.h. */
#ifndef TFDEV_BINDINGS_L_COMMON_H
#define TFDEV_BINDINGS_L_COMMON_H

#include <lauxlib.h>
#include <signal.h>
#include <lua.h>

#include "tfdev/lua.h" /* luaopen_tfdev_core and the host-facing API (l_api.c) */
#include "tfdev/tfdev.h"

/* Userdata type names (the metatables' __name). */
#define TFDEV_ERROR_MT "tfdev.error"
#define TFDEV_DEVICE_MT "tfdev.device"
#define TFDEV_TENSOR_MT "tfdev.tensor"
#define TFDEV_FACTORY_MT "tfdev.factory"
#define TFDEV_DEVICE_SET_MT "tfdev.device_set"
#define TFDEV_DEVICE_MGR_MT "tfdev.device_mgr"
#define TFDEV_RESOURCE_MGR_MT "tfdev.resource_mgr"
#define TFDEV_SESSION_MT "tfdev.session"

/* What one Lua state owns: its runtime (the host's, given with tfdev_use_runtime before the module
 * opens, else one of its own with tfdev's defaults), its own factory registry, copied from the
 * runtime's when the module is opened, and the allocator its host tensors (made from tables, specs
 * and bytes) come from — over the runtime's host allocator when it has one — whose limit bounds
 * what a script can take (tfdev.host_memory_limit). */
typedef struct tfdev_lua_op tfdev_lua_op; /* l_op.c */

typedef struct tfdev_lstate {
  tfd_runtime *runtime;
  tfd_factory_registry *registry;
  tfd_allocator *host;
  tfdev_lua_op *lua_ops; /* the ops this state registered (tfdev.op.register), marked dead when it closes */
  /* Marks lua_ops dead when the state closes: set by l_op.c with the first op, so this file, the
   * bindings' bottom, calls no type module. */
  void (*lua_ops_closed)(tfdev_lua_op *list);
  bool closed; /* collected by lua_close: later finalizers may make no tfdev object (tfdev_check_alive) */
  /* The host's interrupt flag (tfdev_lua_set_interrupt), or NULL: while set, blocking runs are made
   * asynchronous and waited for in slices, and cancelled once the flag is raised (l_session.c). */
  const volatile sig_atomic_t *interrupt;
} tfdev_lstate;

/* The Lua state calling into tfdev on this thread, for Lua ops' kernels and shape functions
 * (l_op.c): push before a C call that may run kernels or infer shapes, pop (with what push
 * returned) after it, before raising anything. */
lua_State *tfdev_calling_push(lua_State *L);
void tfdev_calling_pop(lua_State *prev);
/* The state pushed last on this thread, or NULL outside such a call. */
lua_State *tfdev_calling(void);
/* Whether this thread is inside a binding call that may run Lua kernels or shape functions (between
 * tfdev_calling_push and pop): Lua code running now runs inside such a call, usually as a Lua op's kernel
 * or shape function, and must not close what that call is using. */
bool tfdev_in_calling(void);

/* tfdev_use_runtime (l_common.c) is declared in tfdev/lua.h: hosts call it through libtfdev_lua. */

/* The host allocator's default limit, and how much freed memory it keeps for reuse. */
#define TFDEV_HOST_MEMORY_LIMIT ((int64_t)1 << 30)
#define TFDEV_HOST_CACHE_BYTES ((int64_t)16 << 20)

/* What bindings pass as host_ctx to registry calls, so factories written in
 * Lua run on the calling thread and see the caller's options table. */
typedef struct tfdev_call_ctx {
  lua_State *L;
  int options_index; /* stack index of the caller's options table, 0 if none */
} tfdev_call_ctx;

/* The state of tfdev in L; raises FAILED_PRECONDITION when tfdev was never opened in L, or when lua_close
 * has collected it (a finalizer that runs later). */
tfdev_lstate *tfdev_state(lua_State *L);
/* The same, but NULL (raising nothing) when tfdev has not been opened in L or is closed. */
tfdev_lstate *tfdev_state_opt(lua_State *L);
/* Raises FAILED_PRECONDITION once lua_close has collected tfdev's state in L: a finalizer run after that
 * may make nothing with a finalizer of its own (Lua calls no finalizer of an object made while it closes,
 * so what it held would never be freed). Every function that makes a tfdev userdata calls it first. */
void tfdev_check_alive(lua_State *L);
/* Whether it would raise. */
bool tfdev_closed(lua_State *L);
/* After giving the new userdata on top of the stack its metatable with __gc: inside a finalizer, lists
 * it, so that if lua_close runs that finalizer (Lua then finalizes nothing it makes) the state's own
 * finalizer closes it. Costs one call elsewhere. */
void tfdev_made(lua_State *L);

/* Pushes a tfdev.error value {code=, message=}. */
void tfdev_push_error(lua_State *L, tfd_code code, const char *message);
/* Whether the value at idx is a tfdev.error. */
bool tfdev_is_error(lua_State *L, int idx);
/* Raises a tfdev.error. */
int tfdev_raise(lua_State *L, tfd_code code, const char *fmt, ...);
/* Raises RESOURCE_EXHAUSTED "out of memory <what>" as a tfdev.error; when memory is too short even for
 * that, the tfdev.error "out of memory" made when the module opened. */
int tfdev_raise_oom(lua_State *L, const char *what);
/* What the Lua error value at idx says, into buf (size bytes, cut short if longer): a tfdev.error's
 * message, returning its code; any other value (a string, nil, a table, userdata) as tostring() shows
 * it, returning dflt. Never raises and runs no code of the value's but its __tostring, under pcall: a
 * __tostring that raises or gives no string is described by the value's type and what it raised. For C
 * callers of Lua (kernels, shape functions, readers) that must turn any error into a status. */
tfd_code tfdev_error_text(lua_State *L, int idx, tfd_code dflt, char *buf, size_t size);
/* Raises the error held by st (which is reset). */
int tfdev_raise_status(lua_State *L, tfd_status *st);
/* Returns nil, err with the error held by st (which is reset): 2 results. */
int tfdev_fail_status(lua_State *L, tfd_status *st);
/* A status for one binding call, freed when the Lua value at the top of
 * the stack is collected: binding calls push it and may raise freely. */
tfd_status *tfdev_new_status(lua_State *L);

/* A string argument that names something (a node, a device, a feed): raises
 * INVALID_ARGUMENT naming `what` when it is not a string or holds a NUL byte,
 * which C would silently cut the name at. */
const char *tfdev_check_name(lua_State *L, int idx, const char *what);
/* Like tfdev_check_name for the value at idx, but returns NULL (raising
 * nothing) when it is not a string at all. */
const char *tfdev_opt_name(lua_State *L, int idx, const char *what);

/* A C object owned by the Lua stack until the caller takes it: pushes an
 * empty box and returns its slot; store the object there right after making
 * it. The box's __gc calls free_fn(*slot) unless tfdev_box_take emptied it,
 * so a Lua error between making the object and handing it on cannot leak it
 * (the box exists before the object, so making the box cannot leak it either). */
void **tfdev_new_box(lua_State *L, void (*free_fn)(void *));
/* The C object of a handle userdata of metatable `mt` at idx: every handle userdata (device, session,
 * graph, ...) is one pointer to what it holds, NULL once closed. Raises a type error for anything
 * else, and FAILED_PRECONDITION "<what> handle is closed" for a closed one. For a module that takes
 * another type's handle without calling that type's module (tensor specs take a device this way). */
void *tfdev_check_handle(lua_State *L, int idx, const char *mt, const char *what);
void *tfdev_box_take(lua_State *L, int idx);

/* Options: builds session options from the table at idx (nil: defaults);
 * raises INVALID_ARGUMENT on a bad field. The result is freed when the
 * pushed guard value is collected (pushed on the stack). */
tfd_session_options *tfdev_check_options(lua_State *L, int idx);
/* Pushes options as a Lua table. */
void tfdev_push_options(lua_State *L, const tfd_session_options *o);

/* Parsed names: a string (parsed) or a {job=, replica=, ...} table. Raises on bad input. */
void tfdev_check_parsed_name(lua_State *L, int idx, tfd_parsed_name *out);
void tfdev_push_parsed_name(lua_State *L, const tfd_parsed_name *p);




/* t[key] = v on the table at the top of the stack. */
void tfdev_set_int(lua_State *L, const char *key, lua_Integer v);
void tfdev_set_str(lua_State *L, const char *key, const char *v);
void tfdev_set_bool(lua_State *L, const char *key, int v);


/* Registers a metatable with __name, methods in __index (unless the
 * caller's table has its own __index), and the given metamethods. */
void tfdev_new_class(lua_State *L, const char *name, const luaL_Reg *meta, const luaL_Reg *methods);

/* Registers the shared metatables and this state's registry (once per state). */
void tfdev_common_open(lua_State *L);
/* tfdev.error's table (pushed). */
int tfdev_open_error(lua_State *L);

/* The pure-Lua half (the files of lua/tfdev) compiled in, for luaopen_tfdev (generated at build time from
 * lua/tfdev by cmake/embed_lua.cmake). The list ends with a NULL name. */
typedef struct tfdev_embedded_lua {
  const char *module; /* "tfdev", "tfdev.graph", ... */
  const char *chunkname; /* "@tfdev/graph.lua": what error messages and tracebacks show */
  const unsigned char *source;
  size_t size;
} tfdev_embedded_lua;
extern const tfdev_embedded_lua tfdev_embedded_lua_modules[];

#endif
