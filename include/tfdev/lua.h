/* tfdev's Lua side for a host that owns its lua_State: opening the module and moving tensors,
 * devices and sessions between C and Lua (libtfdev_lua; link it with libtfdev and your Lua).
 *
 * The pattern is Torch7's luaT_pushudata/luaT_checkudata: push_X puts a C object into the Lua
 * state as the same userdata Lua code gets from tfdev (same methods, same metatable), check_X
 * returns the C object behind a Lua value or raises a Lua error, to_X returns it or NULL.
 *
 * libtfdev_lua does not link a Lua library: it uses the Lua API of the process it is loaded into,
 * as every Lua C module does, so a host keeps exactly one Lua. A host that links Lua statically
 * must export Lua's symbols from its executable (-Wl,-E) for Lua C modules loaded at run time
 * (tfdev/core.so among them) to find them; see docs/embedding.md.
 *
 * Every function here must be called on the thread that is running L, like the Lua API itself, and
 * takes a valid (non-NULL) L.
 * The push, check and registry functions need tfdev opened in L (luaopen_tfdev, or require
 * "tfdev.core"); a push into a state without it raises a Lua error. */
#ifndef TFDEV_LUA_H
#define TFDEV_LUA_H

#include "tfdev/export.h"

#include <lua.h>
#include <signal.h>

#include "tfdev/runtime.h"
#include "tfdev/tfdev.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The whole module, as `require "tfdev"` gives it: the C core plus the pure-Lua half (graph
 * builder, timeline, model loader), which libtfdev_lua carries inside it, so nothing has to be
 * found on package.path. Registers "tfdev.core" and the Lua modules ("tfdev", "tfdev.graph", ...)
 * in package.preload, so scripts in L that require them get these, then requires "tfdev" and
 * returns its table (1 result). Needs the package library open in L (luaL_openlibs, or
 * luaL_requiref(L, LUA_LOADLIBNAME, luaopen_package, 1)); raises a Lua error otherwise. Use it as
 * luaL_requiref(L, "tfdev", luaopen_tfdev, 1) or lua_pushcfunction + lua_pcall. Opening tfdev
 * gives the state its own factory registry (a copy of the built-in one), freed by lua_close. */
TFD_API int luaopen_tfdev(lua_State *L);
/* The C core alone, what `require "tfdev.core"` returns (the entry point of tfdev/core.so, which
 * is this same function of libtfdev_lua). Pushes its table (1 result). */
TFD_API int luaopen_tfdev_core(lua_State *L);

/* Makes tfdev in L run on the host's runtime rt (tfdev/runtime.h: its allocator backs the state's
 * tensors, its logger gets the state's log lines, its registry is what the state's registry is
 * copied from) instead of one of its own. Call it before tfdev is opened in L (luaopen_tfdev);
 * afterwards FAILED_PRECONDITION. The state takes a reference of its own, released by lua_close;
 * the caller keeps its reference and still releases it (tfd_runtime_unref). INVALID_ARGUMENT for a
 * NULL rt. */
TFD_API tfd_code tfdev_use_runtime(lua_State *L, tfd_runtime *rt, tfd_status *status);

/* Lets the host interrupt the steps that Lua code in L waits for, as `tfdev -i` does on Ctrl-C. While
 * flag is set, session:run, a callable's call, future:wait and future:result start their step
 * asynchronously and wait for it in slices of 20 ms, reading *flag between them; once *flag is
 * nonzero they cancel the step, which ends CANCELLED ("Run was cancelled.") and raises that error,
 * leaving the session and its state usable. The host raises *flag from its SIGINT handler (storing
 * to a sig_atomic_t is async-signal-safe) and clears it before it runs Lua code again. A step of a
 * synchronous session (inter_op_threads < 0) runs inside the call and is not interrupted; a kernel
 * already running finishes first. The flag is borrowed: it must stay valid while L uses it; NULL
 * stops watching. FAILED_PRECONDITION when tfdev is not open in L. */
TFD_API tfd_code tfdev_lua_set_interrupt(lua_State *L, const volatile sig_atomic_t *flag, tfd_status *status);

/* The state's device factory registry: what tfdev.factory.* and sessions made from Lua in L use.
 * A C factory registered here (tfd_factory_registry_register) is seen by every Lua script in L
 * from then on, and by no other state. Borrowed: owned by L, valid until lua_close(L); do not free
 * it. NULL when tfdev has not been opened in L (raises nothing). */
TFD_API tfd_factory_registry *tfdev_lua_registry(lua_State *L);

/* ---- tensors ---- */
/* Pushes t as a tfdev.tensor. Borrows: the Lua value takes a reference of its own (released when
 * it is collected or closed); the caller keeps its reference and still unrefs it. On a Lua error
 * (out of memory, tfdev not open) no handle was made and the caller's reference is as it was.
 * t must not be NULL. */
TFD_API void tfdev_lua_push_tensor(lua_State *L, tfd_tensor *t);
/* The tensor at idx; raises a Lua error when the value is not a tfdev.tensor or its handle is
 * closed. Borrowed: valid while the Lua value is reachable and not closed; tfd_tensor_ref it to
 * keep it longer. Converts nothing (a table is an error, not a tensor). */
TFD_API tfd_tensor *tfdev_lua_check_tensor(lua_State *L, int idx);
/* Like tfdev_lua_check_tensor but returns NULL, raising nothing, when the value is not a tensor
 * or is a closed one. */
TFD_API tfd_tensor *tfdev_lua_to_tensor(lua_State *L, int idx);

/* ---- devices ---- */
/* Pushes d as a tfdev.device: the state's one handle for d (made on first push, so handles of one
 * device compare equal). Borrows: the handle holds a reference of its own; the caller keeps and
 * releases its reference. Raises a Lua error (out of memory, tfdev not open). */
TFD_API void tfdev_lua_push_device(lua_State *L, tfd_device *d);
/* The device at idx; raises a Lua error when it is not a tfdev.device or its handle is closed.
 * Borrowed like tfdev_lua_check_tensor's result (tfd_device_ref to keep it). */
TFD_API tfd_device *tfdev_lua_check_device(lua_State *L, int idx);
/* Like tfdev_lua_check_device but NULL, raising nothing, when it is not a (live) device. */
TFD_API tfd_device *tfdev_lua_to_device(lua_State *L, int idx);

/* ---- sessions ---- */
/* Pushes s as a tfdev.session with all its methods. Takes ownership: sessions are not reference-
 * counted, so the Lua value frees s (tfd_session_free) on session:close(), <close> or collection;
 * the caller must not free it, and may use s only while the Lua value is alive and not closed. On
 * a Lua error here (out of memory, tfdev not open) s has been freed. Make s with
 * tfdev_lua_registry(L) as its registry to give it the devices Lua scripts in L would get. */
TFD_API void tfdev_lua_push_session(lua_State *L, tfd_session *s);
/* The session at idx; raises a Lua error when it is not a tfdev.session, or CANCELLED when it has
 * been closed. Borrowed: owned by the Lua value. */
TFD_API tfd_session *tfdev_lua_check_session(lua_State *L, int idx);
/* Like tfdev_lua_check_session but NULL, raising nothing, when it is not a (live) session. */
TFD_API tfd_session *tfdev_lua_to_session(lua_State *L, int idx);

#ifdef __cplusplus
}
#endif
#endif
