/* tfdev.session: DirectSession as Lua userdata, with callables, partial runs, asynchronous runs (tfdev.future)
 * and run metadata as tables. */
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "l_common.h"
#include "l_device.h"
#include "l_tensor.h"
#include "l_session.h"
#include "l_graph.h"
#include "l_op.h"
#include "l_modules.h"

typedef struct lsession {
  tfd_session *s;
  /* Binding calls in C on this session that may run Lua kernels or shape functions (run, create, a
   * future's wait...). Lua code that runs meanwhile runs inside one of them, on this state's thread:
   * closing the session then would wait for a step that waits for that very code. */
  int busy;
} lsession;

typedef struct lcallable {
  int64_t handle;
  int num_feeds, num_fetches;
  bool single_fetch; /* made with one fetch name, not a list: return the tensor itself */
  bool released;
  lsession *owner; /* the session's userdata, kept alive as the callable's first user value */
  tfd_status *st;  /* every call's status (OK between calls); freed by __gc */
  bool want_meta;  /* its run_options ask for run metadata: calls return it after the outputs */
} lcallable;

#define CALLABLE_MT "tfdev.callable"

static tfd_session *check_session(lua_State *L, int idx) {
  lsession *u = luaL_checkudata(L, idx, TFDEV_SESSION_MT);
  if (!u->s) tfdev_raise(L, TFD_CANCELLED, "Session has been closed.");
  return u->s;
}

/* Around a C call on u that may run Lua kernels or shape functions (in this state, on this thread):
 * enter before it, leave (with what enter returned) after it, before raising anything. */
static lua_State *enter_session(lua_State *L, lsession *u) {
  if (u) u->busy++;
  return tfdev_calling_push(L);
}

static void leave_session(lsession *u, lua_State *prev) {
  tfdev_calling_pop(prev);
  if (u) u->busy--;
}

/* Waits as tfd_run_wait does; but when the host watches for interrupts (tfdev_lua_set_interrupt), in
 * slices of 20 ms, and a raised flag cancels the run, which has then ended (CANCELLED) when this returns. */
static bool wait_run(tfd_run *run, int64_t ms, const volatile sig_atomic_t *interrupt, tfd_status *st) {
  if (!interrupt) return tfd_run_wait(run, ms, st);
  for (int64_t left = ms;;) {
    if (*interrupt) {
      tfd_run_cancel(run);
      return tfd_run_wait(run, -1, st);
    }
    int64_t slice = left < 0 || left > 20 ? 20 : left;
    if (tfd_run_wait(run, slice, st)) return true;
    if (left >= 0 && (left -= slice) <= 0) return false;
  }
}

/* A blocking run made as an asynchronous one, so that an interrupt reaches it: waited for, its outputs
 * taken into outs, freed. */
static tfd_code finish_run(tfd_run *run, const volatile sig_atomic_t *interrupt, tfd_tensor **outs, tfd_status *st) {
  wait_run(run, -1, interrupt, st);
  tfd_code code = tfd_status_code(st);
  if (code == TFD_OK) code = tfd_run_take_outputs(run, outs, st);
  tfd_run_free(run);
  return code;
}

/* FAILED_PRECONDITION for `call` (a close, a wait) made from Lua code that runs inside what the call
 * would wait for (`inside`), which cannot end until that code returns. TensorFlow has no text for this
 * (its kernels cannot call back into their session); this one names the code and the call. */
static int raise_reentrant(lua_State *L, const char *call, const char *inside, const char *instead) {
  char who[256];
  tfdev_calling_name(who, sizeof who);
  return tfdev_raise(L, TFD_FAILED_PRECONDITION,
                     "%s called from %s, which runs inside %s: the call would wait for that to end, and it waits for "
                     "this code; %s",
                     call, who, inside, instead);
}

#define SESSION_CALL "this session's own call (a run, a graph's creation, a future's wait)"

/* tfdev.session(options) */
static int session_new(lua_State *L) {
  lua_settop(L, 1);
  tfd_session_options *o = tfdev_check_options(L, 1);
  tfdev_check_alive(L);
  lsession *u = lua_newuserdatauv(L, sizeof *u, 0);
  u->s = NULL;
  u->busy = 0;
  luaL_setmetatable(L, TFDEV_SESSION_MT);
  tfdev_made(L);
  tfd_status *st = tfdev_new_status(L);
  tfdev_call_ctx ctx = {L, lua_istable(L, 1) ? 1 : 0};
  tfd_session_new(o, tfdev_state(L)->registry, &ctx, &u->s, st);
  if (!u->s) return tfdev_raise_status(L, st);
  lua_pop(L, 1);
  return 1;
}

/* session:create(graph) and session:extend(graph): the graph is a GraphDef table or a builder. A
 * builder's metatable answers __session_graph(builder, session, extend) with the GraphDef to send
 * and a function to call once the session took it (tfdev.graph sends only what a session lacks). */
static int load_graph(lua_State *L, tfd_code (*load)(tfd_session *, const tfd_graph_def *, tfd_status *)) {
  lua_settop(L, 2);
  check_session(L, 1);
  lua_pushnil(L); /* 3: what to call once the session took the graph */
  int field = luaL_getmetafield(L, 2, "__session_graph");
  if (field == LUA_TFUNCTION) {
    lua_pushvalue(L, 2);
    lua_pushvalue(L, 1);
    lua_pushboolean(L, load == tfd_session_extend);
    lua_call(L, 3, 2);
    lua_replace(L, 3);
    lua_replace(L, 2);
  } else if (field != LUA_TNIL) {
    lua_pop(L, 1);
  }
  tfd_graph_def *g = tfdev_check_graph_def(L, 2); /* may run Lua code: a builder, metamethods */
  tfd_status *st = tfdev_new_status(L);
  tfd_session *s = check_session(L, 1);
  lsession *u = lua_touserdata(L, 1);
  lua_State *prev = enter_session(L, u); /* Lua ops' shape functions run here */
  tfd_code code = load(s, g, st);
  leave_session(u, prev);
  if (code != TFD_OK) return tfdev_raise_status(L, st);
  if (lua_isfunction(L, 3)) {
    lua_pushvalue(L, 3);
    lua_call(L, 0, 0);
  }
  lua_settop(L, 1);
  return 1;
}

static int session_create(lua_State *L) { return load_graph(L, tfd_session_create); }
static int session_extend(lua_State *L) { return load_graph(L, tfd_session_extend); }

/* A list of strings at idx (a single string counts as a list of one) into an array anchored on the stack. */
static const char **string_list(lua_State *L, int idx, int *n, const char *what) {
  *n = 0;
  if (lua_isnoneornil(L, idx)) return NULL;
  if (lua_type(L, idx) == LUA_TSTRING) {
    const char **one = lua_newuserdatauv(L, sizeof *one, 0);
    one[0] = tfdev_check_name(L, idx, what);
    *n = 1;
    return one;
  }
  if (!lua_istable(L, idx))
    tfdev_raise(L, TFD_INVALID_ARGUMENT, "%s must be a name or a list of names, got %s", what, luaL_typename(L, idx));
  *n = (int)lua_rawlen(L, idx);
  const char **names = lua_newuserdatauv(L, (size_t)(*n ? *n : 1) * sizeof *names, 0);
  for (int i = 0; i < *n; i++) {
    lua_rawgeti(L, idx, i + 1);
    if (lua_type(L, -1) != LUA_TSTRING)
      tfdev_raise(L, TFD_INVALID_ARGUMENT, "%s[%d] must be a string, got %s", what, i + 1, luaL_typename(L, -1));
    names[i] = tfdev_check_name(L, -1, what); /* anchored by the table */
    lua_pop(L, 1);
  }
  return names;
}

/* TensorFlow's RunOptions.trace_level (the value on top of the stack): NO_TRACE, SOFTWARE_TRACE and
 * HARDWARE_TRACE (both: trace), FULL_TRACE (trace with allocation records). */
static void set_trace_level(lua_State *L, tfd_run_options *ro) {
  static const char *const levels[] = {"NO_TRACE", "SOFTWARE_TRACE", "HARDWARE_TRACE", "FULL_TRACE"};
  const char *v = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
  int level = 0;
  while (level < 4 && strcmp(levels[level], v) != 0) level++;
  if (level == 4)
    tfdev_raise(L, TFD_INVALID_ARGUMENT,
                "run option trace_level must be NO_TRACE, SOFTWARE_TRACE, HARDWARE_TRACE or FULL_TRACE, got %s",
                luaL_tolstring(L, -1, NULL));
  ro->trace = level > 0;
  ro->trace_allocations = level == 3;
}

static void check_run_options(lua_State *L, int idx, tfd_run_options *ro) {
  memset(ro, 0, sizeof *ro);
  if (lua_isnoneornil(L, idx)) return;
  luaL_checktype(L, idx, LUA_TTABLE);
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "?";
    if (strcmp(k, "trace") == 0) ro->trace = lua_toboolean(L, -1);
    else if (strcmp(k, "trace_allocations") == 0) ro->trace_allocations = lua_toboolean(L, -1);
    else if (strcmp(k, "trace_level") == 0) set_trace_level(L, ro);
    else if (strcmp(k, "cost_graph") == 0) ro->cost_graph = lua_toboolean(L, -1);
    else if (strcmp(k, "output_partition_graphs") == 0) ro->output_partition_graphs = lua_toboolean(L, -1);
    else if (strcmp(k, "timeout_ms") == 0) {
      int ok;
      ro->timeout_ms = lua_tointegerx(L, -1, &ok);
      if (!ok) tfdev_raise(L, TFD_INVALID_ARGUMENT, "run option timeout_ms must be an integer");
    } else if (strcmp(k, "inter_op_thread_pool") == 0) {
      int ok;
      lua_Integer pool = lua_tointegerx(L, -1, &ok);
      if (!ok) tfdev_raise(L, TFD_INVALID_ARGUMENT, "run option inter_op_thread_pool must be an integer");
      /* The session checks the range (TensorFlow's text); one beyond int is out of it too. */
      if (pool < INT_MIN || pool > INT_MAX) tfdev_raise(L, TFD_INVALID_ARGUMENT, "Invalid inter_op_thread_pool: %I", pool);
      ro->inter_op_thread_pool = (int)pool;
    } else {
      tfdev_raise(L, TFD_INVALID_ARGUMENT,
                  "unknown run option '%s' (known: trace, trace_level, trace_allocations, output_partition_graphs, "
                  "cost_graph, timeout_ms, inter_op_thread_pool)",
                  k);
    }
    lua_pop(L, 1);
  }
}

/* e's outputs as CostGraphDef.Node.output_info: {{size=, alias_input_slot=, dtype=, shape={...}}, ...},
 * set as field output_info of the table on top. */
static void push_output_info(lua_State *L, const tfd_cost_entry *e) {
  lua_createtable(L, e->num_outputs, 0);
  for (int o = 0; o < e->num_outputs; o++) {
    const tfd_output_info *oi = &e->outputs[o];
    lua_createtable(L, 0, 4);
    tfdev_set_int(L, "size", oi->size);
    tfdev_set_int(L, "alias_input_slot", oi->alias_input_slot);
    tfdev_set_str(L, "dtype", tfd_dtype_name(oi->dtype));
    if (oi->shape.ndims >= 0) {
      lua_createtable(L, oi->shape.ndims, 0);
      for (int d = 0; d < oi->shape.ndims; d++) {
        lua_pushinteger(L, oi->shape.dims[d]);
        lua_rawseti(L, -2, d + 1);
      }
      lua_setfield(L, -2, "shape");
    }
    lua_rawseti(L, -2, o + 1);
  }
  lua_setfield(L, -2, "output_info");
}

static void push_metadata(lua_State *L, const tfd_run_metadata *m) {
  lua_createtable(L, 0, 3);
  tfdev_set_int(L, "step_id", tfd_run_metadata_step_id(m));
  lua_createtable(L, 0, 1);
  int nd = tfd_run_metadata_num_devices(m);
  lua_createtable(L, nd, 0);
  for (int d = 0; d < nd; d++) {
    lua_createtable(L, 0, 2);
    tfdev_set_str(L, "device", tfd_run_metadata_device(m, d));
    int nn = tfd_run_metadata_num_nodes(m, d);
    lua_createtable(L, nn, 0);
    for (int i = 0; i < nn; i++) {
      tfd_node_exec_stats ns;
      tfd_run_metadata_node(m, d, i, &ns);
      lua_createtable(L, 0, 6);
      tfdev_set_str(L, "node_name", ns.node_name);
      tfdev_set_str(L, "op", ns.op);
      tfdev_set_int(L, "all_start_micros", ns.all_start_micros);
      tfdev_set_int(L, "all_end_rel_micros", ns.all_end_rel_micros);
      tfdev_set_int(L, "output_bytes", ns.output_bytes);
      tfdev_set_int(L, "thread_id", ns.thread_id);
      lua_createtable(L, 1, 0); /* memory: one entry, the device's allocator, as AllocatorMemoryUsed */
      lua_createtable(L, 0, 6);
      tfdev_set_str(L, "allocator_name", ns.allocator_name);
      tfdev_set_int(L, "allocator_bytes_in_use", ns.allocator_bytes_in_use);
      tfdev_set_int(L, "total_bytes", ns.total_bytes);
      tfdev_set_int(L, "peak_bytes", ns.peak_bytes);
      tfdev_set_int(L, "live_bytes", ns.live_bytes);
      if (ns.num_allocation_records > 0) {
        lua_createtable(L, ns.num_allocation_records, 0);
        for (int r = 0; r < ns.num_allocation_records; r++) {
          lua_createtable(L, 0, 2);
          tfdev_set_int(L, "alloc_micros", ns.allocation_records[r].alloc_micros);
          tfdev_set_int(L, "alloc_bytes", ns.allocation_records[r].alloc_bytes);
          lua_rawseti(L, -2, r + 1);
        }
        lua_setfield(L, -2, "allocation_records");
      }
      lua_rawseti(L, -2, 1);
      lua_setfield(L, -2, "memory");
      lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, "node_stats");
    lua_rawseti(L, -2, d + 1);
  }
  lua_setfield(L, -2, "dev_stats");
  lua_setfield(L, -2, "step_stats");
  int np = tfd_run_metadata_num_partition_graphs(m);
  if (np > 0) { /* only runs with output_partition_graphs have them */
    lua_createtable(L, np, 0);
    for (int p = 0; p < np; p++) {
      tfdev_push_graph_def(L, tfd_run_metadata_partition_graph(m, p));
      lua_rawseti(L, -2, p + 1);
    }
    lua_setfield(L, -2, "partition_graphs");
  }
  int nc = tfd_run_metadata_num_cost_nodes(m);
  if (nc > 0) {
    lua_createtable(L, 0, 1);
    lua_createtable(L, nc, 0);
    for (int i = 0; i < nc; i++) {
      tfd_cost_entry e;
      tfd_run_metadata_cost_node(m, i, &e);
      lua_createtable(L, 0, 7);
      tfdev_set_str(L, "name", e.node);
      tfdev_set_str(L, "device", e.device);
      tfdev_set_str(L, "op", e.op);
      lua_pushnumber(L, e.avg_compute_micros);
      lua_setfield(L, -2, "compute_cost");
      tfdev_set_int(L, "max_compute_cost", e.max_compute_micros);
      tfdev_set_int(L, "runs", e.runs);
      tfdev_set_int(L, "output_bytes", e.output_bytes);
      push_output_info(L, &e);
      lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, "node");
    lua_setfield(L, -2, "cost_graph");
  }
}

/* session:export_cost_models() -> {[device] = {{node=, op=, runs=, avg_compute_micros=, ...}, ...}} */
static int session_export_cost_models(lua_State *L) {
  tfd_session *s = check_session(L, 1);
  int cap = tfd_session_export_cost_models(s, NULL, 0);
  tfd_cost_entry *e = lua_newuserdatauv(L, (size_t)(cap ? cap : 1) * sizeof *e, 0);
  int n = tfd_session_export_cost_models(s, e, cap);
  if (n > cap) n = cap; /* the model grew meanwhile: take what fits */
  lua_newtable(L);
  for (int i = 0; i < n; i++) {
    if (lua_getfield(L, -1, e[i].device) == LUA_TNIL) {
      lua_pop(L, 1);
      lua_newtable(L);
      lua_pushvalue(L, -1);
      lua_setfield(L, -3, e[i].device);
    }
    lua_createtable(L, 0, 6);
    tfdev_set_str(L, "node", e[i].node);
    tfdev_set_str(L, "op", e[i].op);
    tfdev_set_int(L, "runs", e[i].runs);
    lua_pushnumber(L, e[i].avg_compute_micros);
    lua_setfield(L, -2, "avg_compute_micros");
    tfdev_set_int(L, "max_compute_micros", e[i].max_compute_micros);
    tfdev_set_int(L, "output_bytes", e[i].output_bytes);
    push_output_info(L, &e[i]);
    lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
    lua_pop(L, 1);
  }
  return 1;
}

typedef struct meta_box {
  tfd_run_metadata *m;
} meta_box;

static int meta_box_gc(lua_State *L) {
  meta_box *b = lua_touserdata(L, 1);
  tfd_run_metadata_free(b->m);
  b->m = NULL;
  return 0;
}

static tfd_run_metadata *new_meta(lua_State *L) {
  tfdev_check_alive(L);
  meta_box *b = lua_newuserdatauv(L, sizeof *b, 0);
  b->m = NULL;
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, meta_box_gc);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  tfdev_made(L);
  if (!(b->m = tfd_run_metadata_new())) tfdev_raise_oom(L, "making run metadata");
  return b->m;
}

/* Whether run options ask for run metadata. */
static bool wants_meta(const tfd_run_options *ro) {
  return ro->trace || ro->trace_allocations || ro->output_partition_graphs || ro->cost_graph;
}

/* Pushes outputs as a list (or the single tensor), then metadata if traced. */
static int push_results(lua_State *L, tfd_tensor **outs, int n, bool single, const tfd_run_options *ro,
                        tfd_run_metadata *meta) {
  if (single) {
    tfdev_push_tensor(L, outs[0]);
  } else {
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
      tfdev_push_tensor(L, outs[i]);
      lua_rawseti(L, -2, i + 1);
    }
  }
  if (wants_meta(ro)) {
    push_metadata(L, meta);
    return 2;
  }
  return 1;
}

static int collect_feeds(lua_State *L, int sess_idx, int idx, const char ***names, tfd_tensor ***values,
                         tfd_status *st);

/* What session:run and session:run_async take: (session, feeds, fetches, targets, run_options). */
typedef struct run_args {
  tfd_run_options ro;
  tfd_status *st;
  const char **feed_names, **fetches, **targets;
  tfd_tensor **feed_values;
  int nf, nfe, nt;
  bool single; /* one fetch named by a string: one result, not a list */
} run_args;

/* Reads them; what it makes stays on the stack until the call returns. */
static void check_run_args(lua_State *L, run_args *a) {
  lua_settop(L, 5);
  check_session(L, 1);
  check_run_options(L, 5, &a->ro);
  a->st = tfdev_new_status(L);
  a->nf = collect_feeds(L, 1, 2, &a->feed_names, &a->feed_values, a->st);
  a->single = lua_type(L, 3) == LUA_TSTRING;
  a->fetches = string_list(L, 3, &a->nfe, "fetches");
  a->targets = string_list(L, 4, &a->nt, "targets");
}

/* session:run(feeds, fetches, targets, run_options) */
static int session_run(lua_State *L) {
  run_args a;
  check_run_args(L, &a);
  tfd_tensor **outs = lua_newuserdatauv(L, (size_t)(a.nfe ? a.nfe : 1) * sizeof *outs, 0);
  tfd_run_metadata *meta = wants_meta(&a.ro) ? new_meta(L) : NULL;
  tfd_session *s = check_session(L, 1); /* after every step that could run Lua code */
  lsession *u = lua_touserdata(L, 1);
  const volatile sig_atomic_t *interrupt = tfdev_state(L)->interrupt;
  lua_State *prev = enter_session(L, u); /* Lua ops' kernels run here */
  tfd_code ran;
  if (interrupt) {
    tfd_run *run;
    ran = tfd_session_run_async(s, &a.ro, a.feed_names, a.feed_values, a.nf, a.fetches, a.nfe, a.targets, a.nt, meta,
                                NULL, NULL, &run, a.st);
    if (ran == TFD_OK) ran = finish_run(run, interrupt, outs, a.st);
  } else {
    ran = tfd_session_run(s, &a.ro, a.feed_names, a.feed_values, a.nf, a.fetches, a.nfe, a.targets, a.nt, outs, meta,
                          a.st);
  }
  leave_session(u, prev);
  if (ran != TFD_OK)
    return tfdev_raise_status(L, a.st);
  if (a.nfe == 0) {
    if (meta) {
      lua_pushnil(L);
      push_metadata(L, meta);
      return 2;
    }
    return 0;
  }
  return push_results(L, outs, a.nfe, a.single, &a.ro, meta);
}

/* CallableOptions.tensor_connection at idx: a list of {from_tensor =, to_tensor =}, into an array anchored
 * on the stack (its strings anchored by the list). */
static tfd_tensor_connection *connection_list(lua_State *L, int idx, int *n) {
  *n = 0;
  if (lua_isnil(L, idx)) return NULL;
  if (!lua_istable(L, idx))
    tfdev_raise(L, TFD_INVALID_ARGUMENT, "tensor_connection must be a list of {from_tensor =, to_tensor =}, got %s",
                luaL_typename(L, idx));
  *n = (int)lua_rawlen(L, idx);
  tfd_tensor_connection *c = lua_newuserdatauv(L, (size_t)(*n ? *n : 1) * sizeof *c, 0);
  for (int i = 0; i < *n; i++) {
    lua_rawgeti(L, idx, i + 1);
    if (!lua_istable(L, -1))
      tfdev_raise(L, TFD_INVALID_ARGUMENT, "tensor_connection[%d] must be a table {from_tensor =, to_tensor =}, got %s",
                  i + 1, luaL_typename(L, -1));
    lua_getfield(L, -1, "from_tensor");
    lua_getfield(L, -2, "to_tensor");
    if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TSTRING)
      tfdev_raise(L, TFD_INVALID_ARGUMENT, "tensor_connection[%d] needs string from_tensor and to_tensor", i + 1);
    lua_pushvalue(L, -2);
    lua_rawseti(L, -4, 1); /* anchored in the entry (an array slot nobody reads) */
    lua_pushvalue(L, -1);
    lua_rawseti(L, -4, 2);
    c[i].from_tensor = lua_tostring(L, -2);
    c[i].to_tensor = lua_tostring(L, -1);
    lua_pop(L, 3);
  }
  return c;
}

/* session:make_callable{feeds = {...}, fetches = {...} or "y", targets = {...}, tensor_connection = {...},
 * run_options = {...}} */
static int session_make_callable(lua_State *L) {
  lua_settop(L, 2);
  check_session(L, 1);
  luaL_checktype(L, 2, LUA_TTABLE);
  lua_getfield(L, 2, "feeds"); /* may run the table's metamethods */
  lua_getfield(L, 2, "fetches");
  lua_getfield(L, 2, "targets");
  int nf, nfe, nt, nc;
  const char **feeds = string_list(L, 3, &nf, "feeds");
  const char **fetches = string_list(L, 4, &nfe, "fetches");
  const char **targets = string_list(L, 5, &nt, "targets");
  lua_getfield(L, 2, "tensor_connection");
  int conn_idx = lua_gettop(L);
  tfd_tensor_connection *conns = connection_list(L, conn_idx, &nc);
  lua_getfield(L, 2, "run_options");
  int ro_idx = lua_gettop(L);
  tfd_run_options ro;
  check_run_options(L, ro_idx, &ro);
  bool has_ro = !lua_isnil(L, ro_idx);
  tfd_status *st = tfdev_new_status(L);
  tfd_session *s = check_session(L, 1);
  tfd_callable_options co = {feeds, nf, fetches, nfe, targets, nt, conns, nc, has_ro ? &ro : NULL};
  int64_t h = tfd_session_make_callable_with_options(s, &co, st);
  if (h < 0) return tfdev_raise_status(L, st);
  lcallable *c = lua_newuserdatauv(L, sizeof *c + (size_t)nf * sizeof(tfd_dtype), 2);
  *c = (lcallable){h, nf, nfe, lua_type(L, 4) == LUA_TSTRING, false, lua_touserdata(L, 1), NULL, wants_meta(&ro)};
  /* Feed dtypes, so tables passed to the callable convert to what the graph wants. */
  tfd_dtype *types = (tfd_dtype *)(c + 1);
  for (int i = 0; i < nf; i++)
    if (tfd_session_tensor_dtype(s, feeds[i], &types[i], st) != TFD_OK) types[i] = 0;
  tfd_status_reset(st);
  luaL_setmetatable(L, CALLABLE_MT); /* from here __gc releases the handle */
  tfdev_made(L);
  if (!(c->st = tfd_status_new())) return tfdev_raise_oom(L, "making a callable");
  lua_pushvalue(L, 1);
  lua_setiuservalue(L, -2, 1); /* the callable keeps its session alive */
  lua_createtable(L, nf, 0);   /* feed names, for errors about a feed's value */
  for (int i = 0; i < nf; i++) {
    lua_pushstring(L, feeds[i]);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setiuservalue(L, -2, 2);
  return 1;
}

/* The feeds of a callable call (nargs of them), at stack indices 2.., converted to tensors (tables to the graph's dtypes)
 * into in[]; tensor_mt is the stack index of the tensor metatable. Raises on a bad feed, a released
 * callable or a closed session; returns the session. */
static tfd_session *callable_feeds(lua_State *L, lcallable *c, int nargs, int tensor_mt, tfd_tensor **in) {
  if (c->released) tfdev_raise(L, TFD_FAILED_PRECONDITION, "this callable was released");
  if (!c->owner->s) tfdev_raise(L, TFD_CANCELLED, "Session has been closed.");
  if (nargs < c->num_feeds)
    tfdev_raise(L, TFD_INVALID_ARGUMENT, "this callable takes %d feed%s, got %d", c->num_feeds,
                c->num_feeds == 1 ? "" : "s", nargs);
  const tfd_dtype *types = (const tfd_dtype *)(c + 1);
  bool converted = false;
  for (int i = 0; i < c->num_feeds; i++) {
    if (tfdev_is_tensor_mt(L, i + 2, tensor_mt, &in[i])) continue;
    lua_getiuservalue(L, 1, 2);
    lua_rawgeti(L, -1, i + 1);
    const char *what = lua_pushfstring(L, "feed '%s'", lua_tostring(L, -1));
    tfdev_to_tensor(L, i + 2, types[i], what); /* replaces the value with its tensor */
    lua_pop(L, 3);
    converted = true;
  }
  /* Converting a feed may have run Lua code that closed an earlier one, or the session: read them again. */
  for (int i = 0; converted && i < c->num_feeds; i++)
    if (!tfdev_is_tensor_mt(L, i + 2, tensor_mt, &in[i])) in[i] = tfdev_to_tensor(L, i + 2, 0, "feed");
  for (int i = 0; i < c->num_feeds; i++)
    if (!in[i]) tfdev_raise(L, TFD_FAILED_PRECONDITION, "feed: the tensor handle is closed");
  if (c->released) tfdev_raise(L, TFD_FAILED_PRECONDITION, "this callable was released");
  if (!c->owner->s) tfdev_raise(L, TFD_CANCELLED, "Session has been closed.");
  return c->owner->s;
}

static tfd_run_metadata *new_meta(lua_State *L);

/* A callable's call with feeds at stack indices 2..: ro NULL runs with the callable's own run options
 * (meta returned after the outputs when c->want_meta); ro given replaces them (meta when it asks). */
static int callable_invoke(lua_State *L, lcallable *c, int nargs, int tensor_mt, const tfd_run_options *ro) {
  enum { SMALL = 8 };
  tfd_tensor *small_in[SMALL], *small_out[SMALL];
  tfd_tensor **in = c->num_feeds <= SMALL ? small_in : lua_newuserdatauv(L, (size_t)c->num_feeds * sizeof *in, 0);
  tfd_tensor **out = c->num_fetches <= SMALL ? small_out : lua_newuserdatauv(L, (size_t)c->num_fetches * sizeof *out, 0);
  bool want_meta = ro ? wants_meta(ro) : c->want_meta;
  tfd_run_metadata *meta = want_meta ? new_meta(L) : NULL; /* anchored on the stack */
  tfd_session *s = callable_feeds(L, c, nargs, tensor_mt, in);
  /* No Lua code runs between the run and the copy of its message, so one status serves every call. */
  tfd_status *st = c->st;
  const volatile sig_atomic_t *interrupt = tfdev_state(L)->interrupt;
  lua_State *prev = enter_session(L, c->owner);
  tfd_code code;
  if (interrupt) {
    tfd_run *run;
    code = tfd_session_run_callable_async(s, c->handle, ro, in, meta, NULL, NULL, &run, st);
    if (code == TFD_OK) code = finish_run(run, interrupt, out, st);
  } else {
    code = tfd_session_run_callable(s, c->handle, ro, in, out, meta, st);
  }
  leave_session(c->owner, prev);
  if (code != TFD_OK) {
    const char *msg = lua_pushstring(L, tfd_status_message(st));
    tfd_status_reset(st);
    tfdev_push_error(L, code, msg);
    return lua_error(L);
  }
  if (c->num_fetches == 0) {
    if (!meta) return 0;
    lua_pushnil(L);
  } else if (c->single_fetch) {
    tfdev_push_tensor_mt(L, out[0], tensor_mt);
  } else {
    lua_createtable(L, c->num_fetches, 0);
    for (int i = 0; i < c->num_fetches; i++) {
      tfdev_push_tensor_mt(L, out[i], tensor_mt);
      lua_rawseti(L, -2, i + 1);
    }
  }
  if (!meta) return 1;
  push_metadata(L, meta);
  return 2;
}

/* callable(feed1, feed2, ...) in the order given to make_callable.
 * The hot path of a script: it reaches the callable's and the tensor's
 * metatables through its upvalues (1 and 2), its session through the
 * callable, and reports through the callable's own status. */
static int callable_call(lua_State *L) {
  lcallable *c = lua_touserdata(L, 1);
  if (!c || !lua_getmetatable(L, 1) || !lua_rawequal(L, -1, lua_upvalueindex(1)))
    return luaL_typeerror(L, 1, CALLABLE_MT);
  lua_pop(L, 1);
  return callable_invoke(L, c, lua_gettop(L) - 1, lua_upvalueindex(2), NULL);
}

/* callable:run_with(run_options, feed1, feed2, ...): one call with these run options instead of the
 * callable's own (TensorFlow's RunCallable with RunOptions); returns the outputs, then the run metadata
 * when the options ask for it. */
static int callable_run_with(lua_State *L) {
  lcallable *c = luaL_checkudata(L, 1, CALLABLE_MT);
  tfd_run_options ro;
  check_run_options(L, 2, &ro);
  lua_remove(L, 2); /* the feeds follow the callable, as for a plain call */
  int nargs = lua_gettop(L) - 1;
  luaL_getmetatable(L, TFDEV_TENSOR_MT);
  return callable_invoke(L, c, nargs, lua_gettop(L), &ro);
}

static int callable_tostring(lua_State *L) {
  lcallable *c = luaL_checkudata(L, 1, CALLABLE_MT);
  lua_pushfstring(L, "tfdev.callable(%d feeds, %d fetches%s)", c->num_feeds, c->num_fetches,
                  c->released ? ", released" : "");
  return 1;
}

/* callable:release() and __close (and __gc, which also frees the status): hands the handle back to the session
 * (a run in flight on another thread keeps what it uses). Twice is harmless. */
static int callable_release(lua_State *L) {
  lcallable *c = luaL_checkudata(L, 1, CALLABLE_MT);
  if (c->released) return 0;
  c->released = true;
  lua_getiuservalue(L, 1, 1);
  lsession *u = luaL_testudata(L, -1, TFDEV_SESSION_MT);
  if (u && u->s) tfd_session_release_callable(u->s, c->handle, NULL);
  return 0;
}

static int callable_gc(lua_State *L) {
  callable_release(L);
  lcallable *c = lua_touserdata(L, 1);
  if (c->st) tfd_status_free(c->st);
  c->st = NULL;
  return 0;
}

/* ---- partial runs ---- */
#define PRUN_MT "tfdev.prun"

typedef struct lprun {
  int64_t handle;
  bool open;
} lprun;

/* session:prun_setup(inputs, outputs, targets) -> handle */
static int session_prun_setup(lua_State *L) {
  lua_settop(L, 4);
  tfd_session *s = check_session(L, 1);
  int ni, no, nt;
  const char **in = string_list(L, 2, &ni, "inputs");
  const char **out = string_list(L, 3, &no, "outputs");
  const char **tg = string_list(L, 4, &nt, "targets");
  tfd_status *st = tfdev_new_status(L);
  int64_t h = tfd_session_prun_setup(s, in, ni, out, no, tg, nt, st);
  if (h < 0) return tfdev_raise_status(L, st);
  lprun *p = lua_newuserdatauv(L, sizeof *p, 1);
  *p = (lprun){h, true};
  luaL_setmetatable(L, PRUN_MT);
  tfdev_made(L);
  lua_pushvalue(L, 1);
  lua_setiuservalue(L, -2, 1); /* the handle keeps its session alive */
  return 1;
}

/* Feeds {name = value} into parallel arrays anchored on the stack; tables convert to the graph's dtype.
 * Converting a value may run Lua code (a spec table's metamethods) that closes the session, or a tensor
 * fed earlier: the session (at sess_idx) is looked up again for each feed, and the arrays are filled
 * from the anchors only after every conversion, so no pointer outlives the Lua code that could free it. */
static int collect_feeds(lua_State *L, int sess_idx, int idx, const char ***names, tfd_tensor ***values,
                         tfd_status *st) {
  if (!lua_isnil(L, idx) && !lua_istable(L, idx))
    tfdev_raise(L, TFD_INVALID_ARGUMENT, "feeds must be a table {name = value}, got %s", luaL_typename(L, idx));
  lua_newtable(L); /* anchors: [2k-1] = name, [2k] = value, then its tensor */
  int anchors = lua_gettop(L), n = 0;
  if (lua_istable(L, idx)) {
    lua_pushnil(L);
    while (lua_next(L, idx)) { /* raw: no Lua code runs while the table is walked */
      if (lua_type(L, -2) != LUA_TSTRING)
        tfdev_raise(L, TFD_INVALID_ARGUMENT, "feed keys must be tensor names like \"x\" or \"x:0\", got a %s",
                    luaL_typename(L, -2));
      tfdev_check_name(L, -2, "feed name");
      lua_rawseti(L, anchors, 2 * n + 2);
      lua_pushvalue(L, -1);
      lua_rawseti(L, anchors, 2 * n + 1);
      n++;
    }
  }
  for (int i = 0; i < n; i++) {
    lua_rawgeti(L, anchors, 2 * i + 2);
    lua_rawgeti(L, anchors, 2 * i + 1);
    const char *name = lua_tostring(L, -1);
    tfd_dtype dt = 0;
    if (!luaL_testudata(L, -2, TFDEV_TENSOR_MT) &&
        tfd_session_tensor_dtype(check_session(L, sess_idx), name, &dt, st) != TFD_OK) {
      tfd_status_prefixf(st, "feed '%s': ", name);
      tfdev_raise_status(L, st);
    }
    const char *what = lua_pushfstring(L, "feed '%s'", name);
    tfdev_to_tensor(L, -3, dt, what);
    lua_pop(L, 2);
    lua_rawseti(L, anchors, 2 * i + 2);
  }
  *names = lua_newuserdatauv(L, (size_t)(n ? n : 1) * sizeof(char *), 0);
  *values = lua_newuserdatauv(L, (size_t)(n ? n : 1) * sizeof(tfd_tensor *), 0);
  for (int i = 0; i < n; i++) {
    lua_rawgeti(L, anchors, 2 * i + 1);
    (*names)[i] = lua_tostring(L, -1); /* anchored by the anchors table */
    lua_rawgeti(L, anchors, 2 * i + 2);
    int at = lua_gettop(L);
    (*values)[i] = tfdev_to_tensor(L, at, 0, lua_pushfstring(L, "feed '%s'", (*names)[i])); /* closed since? */
    lua_pop(L, 3);
  }
  return n;
}

/* session:prun(handle, feeds, fetches) */
static int session_prun(lua_State *L) {
  lua_settop(L, 4);
  tfd_session *s = check_session(L, 1);
  lprun *p = luaL_checkudata(L, 2, PRUN_MT);
  if (!p->open) return tfdev_raise(L, TFD_INVALID_ARGUMENT, "this partial run is finished or closed");
  lua_getiuservalue(L, 2, 1);
  bool mine = lua_rawequal(L, -1, 1);
  lua_pop(L, 1);
  if (!mine) return tfdev_raise(L, TFD_INVALID_ARGUMENT, "this partial run belongs to another session");
  tfd_status *st = tfdev_new_status(L);
  const char **names;
  tfd_tensor **values;
  int nf = collect_feeds(L, 1, 3, &names, &values, st);
  int nfe;
  bool single = lua_type(L, 4) == LUA_TSTRING;
  const char **fetches = string_list(L, 4, &nfe, "fetches");
  tfd_tensor **outs = lua_newuserdatauv(L, (size_t)(nfe ? nfe : 1) * sizeof *outs, 0);
  memset(outs, 0, (size_t)(nfe ? nfe : 1) * sizeof *outs);
  s = check_session(L, 1); /* after every step that could run Lua code */
  if (!p->open) return tfdev_raise(L, TFD_CANCELLED, "this partial run was closed meanwhile");
  if (tfd_session_prun(s, p->handle, names, values, nf, fetches, nfe, outs, st) != TFD_OK) return tfdev_raise_status(L, st);
  if (nfe == 0) return 0;
  tfd_run_options ro = {0};
  return push_results(L, outs, nfe, single, &ro, NULL);
}

/* handle:close(), __close and __gc: drops the run (cancelling it if it is still going). */
static int prun_close(lua_State *L) {
  lprun *p = luaL_checkudata(L, 1, PRUN_MT);
  if (!p->open) return 0;
  p->open = false;
  lua_getiuservalue(L, 1, 1);
  lsession *u = luaL_testudata(L, -1, TFDEV_SESSION_MT);
  if (u && u->s) tfd_session_prun_close(u->s, p->handle, NULL); /* already dropped is fine */
  return 0;
}

static int prun_tostring(lua_State *L) {
  lprun *p = luaL_checkudata(L, 1, PRUN_MT);
  lua_pushfstring(L, "tfdev.prun(%I%s)", (lua_Integer)p->handle, p->open ? "" : ", closed");
  return 1;
}

static int session_list_devices(lua_State *L) {
  tfdev_push_mgr_devices(L, tfd_session_device_mgr(check_session(L, 1)), true);
  return 1;
}

static int session_devices(lua_State *L) {
  tfdev_push_mgr_devices(L, tfd_session_device_mgr(check_session(L, 1)), false);
  return 1;
}

/* session:device_mgr(): a DeviceMgr over the session's devices (tfdev.device_mgr(s:devices())). */
static int session_device_mgr(lua_State *L) {
  lua_settop(L, 1);
  session_devices(L);
  lua_replace(L, 1);
  return tfdev_device_mgr_new(L);
}

static int session_placement(lua_State *L) {
  tfd_session *s = check_session(L, 1);
  const char *node = tfdev_check_name(L, 2, "node name");
  tfd_status *st = tfdev_new_status(L);
  char dev[TFD_DEVICE_NAME_MAX];
  if (tfd_session_node_device(s, node, dev, st) != TFD_OK) return tfdev_fail_status(L, st);
  lua_pushstring(L, dev);
  return 1;
}

/* session:reset(containers): clears them (the default container when the list is empty or absent). */
static int session_reset(lua_State *L) {
  lua_settop(L, 2);
  tfd_session *s = check_session(L, 1);
  int n;
  const char **names = string_list(L, 2, &n, "containers");
  tfd_status *st = tfdev_new_status(L);
  if (tfd_session_reset(s, names, n, st) != TFD_OK) return tfdev_raise_status(L, st);
  return 0;
}

/* session:finalize() (DirectSession::Finalize). */
static int session_finalize(lua_State *L) {
  tfd_session *s = check_session(L, 1);
  tfd_status *st = tfdev_new_status(L);
  if (tfd_session_finalize(s, st) != TFD_OK) return tfdev_raise_status(L, st);
  lua_settop(L, 1);
  return 1;
}

/* tfdev.session_factory.reset(options, containers) (DirectSessionFactory::Reset): every session this
 * state's runtime made is reset and closed; their userdata stay, and later calls are CANCELLED. */
static int factory_reset(lua_State *L) {
  lua_settop(L, 2);
  tfd_session_options *o = tfdev_check_options(L, 1); /* checked as tfdev.session's: typos fail here too */
  int n;
  const char **names = string_list(L, 2, &n, "containers");
  tfd_status *st = tfdev_new_status(L);
  /* It closes every session of the runtime, the one whose step runs this code included. */
  if (tfdev_in_calling()) return raise_reentrant(L, "session_factory.reset()", "a call of a session it would close",
                                               "reset after that call returns");
  if (tfd_session_factory_reset(o, tfdev_state(L)->registry, names, n, st) != TFD_OK) return tfdev_raise_status(L, st);
  return 0;
}

static int factory_names(lua_State *L) {
  const char *const *names = tfd_session_factory_names();
  lua_newtable(L);
  for (int i = 0; names[i]; i++) {
    lua_pushstring(L, names[i]);
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

/* tfdev.session_factory: the session factory's functions. */
int tfdev_open_session_factory(lua_State *L) {
  static const luaL_Reg fns[] = {{"reset", factory_reset}, {"names", factory_names}, {NULL, NULL}};
  luaL_newlib(L, fns);
  return 1;
}

static int session_executor_count(lua_State *L) {
  lua_pushinteger(L, tfd_session_num_executors_built(check_session(L, 1)));
  return 1;
}

/* For tfdev/lua.h (l_api.c): a session made in C, owned by the userdata from here on. Only
 * lua_newuserdatauv can raise (out of memory); l_api.c calls this protected and frees s then. */
void tfdev_push_session(lua_State *L, tfd_session *s) {
  tfdev_check_alive(L);
  lsession *u = lua_newuserdatauv(L, sizeof *u, 0);
  u->s = s;
  u->busy = 0;
  luaL_setmetatable(L, TFDEV_SESSION_MT);
  tfdev_made(L);
}

tfd_session *tfdev_test_session(lua_State *L, int idx) {
  lsession *u = luaL_testudata(L, idx, TFDEV_SESSION_MT);
  return u ? u->s : NULL;
}

/* close(), __close and __gc: closing twice is harmless. Refused (FAILED_PRECONDITION) from Lua code
 * run inside one of the session's own steps. */
static int session_close(lua_State *L) {
  lsession *u = luaL_checkudata(L, 1, TFDEV_SESSION_MT);
  if (u->busy && u->s)
    return raise_reentrant(L, "session:close()", SESSION_CALL, "close the session after that call returns");
  tfd_session_free(u->s);
  u->s = NULL;
  return 0;
}

static int session_tostring(lua_State *L) {
  lsession *u = luaL_checkudata(L, 1, TFDEV_SESSION_MT);
  if (!u->s) lua_pushliteral(L, "tfdev.session(closed)");
  else lua_pushfstring(L, "tfdev.session(%d devices)", (int)tfd_device_mgr_size(tfd_session_device_mgr(u->s)));
  return 1;
}

/* ---- asynchronous runs: tfdev.future ----
 * A future owns its tfd_run and the metadata the run fills. Lua learns of
 * the end by polling (ready) or waiting, which also run the step's Lua
 * kernels; the run's done callback only marks the run ended, so that
 * tostring() can say so without touching the run. */
#define FUTURE_MT "tfdev.future"

/* Shared by a future and its run's done callback (one reference each): a future that is never
 * collected (made by a finalizer while the state closes) leaves the callback nothing freed to write. */
typedef struct run_watch {
  atomic_int refs;
  atomic_bool ended;
} run_watch;

static void watch_unref(run_watch *w) {
  if (w && atomic_fetch_sub_explicit(&w->refs, 1, memory_order_acq_rel) == 1) free(w);
}

/* The run's done callback: on whichever thread ended the step. */
static void watch_done(void *arg, const tfd_status *status) {
  (void)status;
  run_watch *w = arg;
  atomic_store_explicit(&w->ended, true, memory_order_release);
  watch_unref(w);
}

typedef struct lfuture {
  tfd_run *run;           /* NULL once closed */
  tfd_run_metadata *meta; /* owned; filled by the run when it ends */
  run_watch *watch;       /* one reference, taken by the run once it started */
  int num_fetches;
  bool single;    /* fetches given as one name: result() is the tensor */
  bool want_meta; /* run options asked for metadata: result() returns it second */
  bool resolved;  /* the result is kept in user value 2 */
  int busy;       /* calls in C that run the step's Lua kernels (ready, wait, result): see lsession.busy */
} lfuture;

/* Pushes a future whose run the caller then starts into ->run (with watch_done and f->watch, after
 * taking a reference for it); it keeps the session (at sess_idx) alive. */
static lfuture *new_future(lua_State *L, int sess_idx, int num_fetches, bool single, bool want_meta) {
  sess_idx = lua_absindex(L, sess_idx);
  tfdev_check_alive(L);
  lfuture *f = lua_newuserdatauv(L, sizeof *f, 2);
  *f = (lfuture){NULL, NULL, NULL, num_fetches, single, want_meta, false, 0};
  luaL_setmetatable(L, FUTURE_MT); /* from here __gc frees what it holds */
  tfdev_made(L);
  lua_pushvalue(L, sess_idx);
  lua_setiuservalue(L, -2, 1);
  if (want_meta && !(f->meta = tfd_run_metadata_new())) tfdev_raise_oom(L, "making run metadata");
  if (!(f->watch = malloc(sizeof *f->watch))) tfdev_raise_oom(L, "starting an asynchronous run");
  atomic_init(&f->watch->refs, 2); /* the future's, and the run's: dropped below if it does not start */
  atomic_init(&f->watch->ended, false);
  return f;
}

/* After starting f's run: a run that did not start never calls watch_done. */
static void started(lfuture *f) {
  if (!f->run) watch_unref(f->watch);
}

static lfuture *check_future(lua_State *L, int idx) { return luaL_checkudata(L, idx, FUTURE_MT); }

/* session:run_async(feeds, fetches, targets, run_options) -> future */
static int session_run_async(lua_State *L) {
  run_args a;
  check_run_args(L, &a);
  lfuture *f = new_future(L, 1, a.nfe, a.single, wants_meta(&a.ro));
  tfd_session *s = check_session(L, 1); /* after every step that could run Lua code */
  lsession *u = lua_touserdata(L, 1);
  lua_State *prev = enter_session(L, u); /* a synchronous session runs the step here */
  tfd_session_run_async(s, &a.ro, a.feed_names, a.feed_values, a.nf, a.fetches, a.nfe, a.targets, a.nt, f->meta,
                        watch_done, f->watch, &f->run, a.st);
  leave_session(u, prev);
  started(f);
  if (!f->run) return tfdev_raise_status(L, a.st);
  return 1;
}

/* callable:run_async(feed1, feed2, ...) -> future */
static int callable_run_async(lua_State *L) {
  lcallable *c = luaL_checkudata(L, 1, CALLABLE_MT);
  int nargs = lua_gettop(L) - 1;
  tfd_tensor **in = lua_newuserdatauv(L, (size_t)(c->num_feeds ? c->num_feeds : 1) * sizeof *in, 0);
  luaL_getmetatable(L, TFDEV_TENSOR_MT);
  callable_feeds(L, c, nargs, lua_gettop(L), in);
  tfd_status *st = tfdev_new_status(L);
  lua_getiuservalue(L, 1, 1); /* the session */
  lfuture *f = new_future(L, -1, c->num_fetches, c->single_fetch, false);
  tfd_session *s = c->owner->s; /* nothing ran Lua code since callable_feeds checked it */
  lua_State *prev = enter_session(L, c->owner);
  /* NULL options: the callable's own */
  tfd_session_run_callable_async(s, c->handle, NULL, in, NULL, watch_done, f->watch, &f->run, st);
  leave_session(c->owner, prev);
  started(f);
  if (!f->run) return tfdev_raise_status(L, st);
  return 1;
}

static tfd_run *open_run(lua_State *L, lfuture *f) {
  if (!f->run) tfdev_raise(L, TFD_FAILED_PRECONDITION, "this future is closed");
  return f->run;
}

/* The session of the future at idx 1 (its user value 1; NULL when it is not one). */
static lsession *future_session(lua_State *L) {
  lua_getiuservalue(L, 1, 1);
  lsession *u = luaL_testudata(L, -1, TFDEV_SESSION_MT);
  lua_pop(L, 1);
  return u;
}

/* Around a call that runs the future's step on this thread: it and its session are in use. */
static lua_State *enter_future(lua_State *L, lfuture *f, lsession *u) {
  f->busy++;
  return enter_session(L, u);
}

static void leave_future(lfuture *f, lsession *u, lua_State *prev) {
  leave_session(u, prev);
  f->busy--;
}

/* future:ready() -> whether the run has ended (a run past its timeout_ms is cancelled here). */
static int future_ready(lua_State *L) {
  lfuture *f = check_future(L, 1);
  tfd_run *run = f->resolved ? NULL : open_run(L, f);
  lsession *u = future_session(L);
  lua_State *prev = enter_future(L, f, u); /* polling runs the step's Lua kernels */
  bool ready = f->resolved || tfd_run_ready(run);
  leave_future(f, u, prev);
  lua_pushboolean(L, ready);
  return 1;
}

/* future:wait(timeout_ms) -> true once the run has ended; false if it still runs after timeout_ms
 * (nil or negative: wait until it ends). */
static int future_wait(lua_State *L) {
  lfuture *f = check_future(L, 1);
  lua_Integer ms = -1;
  if (!lua_isnoneornil(L, 2)) {
    int ok;
    ms = lua_tointegerx(L, 2, &ok);
    if (!ok) return tfdev_raise(L, TFD_INVALID_ARGUMENT, "wait: timeout_ms must be an integer, got %s", luaL_typename(L, 2));
  }
  tfd_run *run = f->resolved ? NULL : open_run(L, f);
  /* A wait with a timeout ends; one without, from inside the step, would not. */
  if (run && f->busy && ms < 0)
    return raise_reentrant(L, "future:wait()", "this future's own step", "give it a timeout");
  lsession *u = future_session(L);
  const volatile sig_atomic_t *interrupt = tfdev_state(L)->interrupt;
  lua_State *prev = enter_future(L, f, u); /* waiting runs the step's Lua kernels */
  bool ended = f->resolved || wait_run(run, ms, interrupt, NULL);
  leave_future(f, u, prev);
  lua_pushboolean(L, ended);
  return 1;
}

/* future:cancel(): a run still going ends CANCELLED; blocked kernels wake. */
static int future_cancel(lua_State *L) {
  lfuture *f = check_future(L, 1);
  if (f->run) tfd_run_cancel(f->run);
  return 0;
}

/* Pushes what the result is, kept in user value 2: {true, values...} or {false, error}. */
static void resolve(lua_State *L, lfuture *f) {
  tfd_status *st = tfdev_new_status(L);
  int n = f->num_fetches;
  tfd_tensor **outs = lua_newuserdatauv(L, (size_t)(n ? n : 1) * sizeof *outs, 0);
  tfd_code code = tfd_run_take_outputs(f->run, outs, st);
  lua_createtable(L, 3, 0);
  lua_pushboolean(L, code == TFD_OK);
  lua_rawseti(L, -2, 1);
  if (code != TFD_OK) {
    tfdev_push_error(L, code, tfd_status_message(st));
    lua_rawseti(L, -2, 2);
  } else {
    int top = lua_gettop(L);
    tfd_run_options ro = {.trace = f->want_meta};
    int k = n ? push_results(L, outs, n, f->single, &ro, f->meta) : 0; /* takes the references */
    if (!n && f->want_meta) {
      lua_pushnil(L);
      push_metadata(L, f->meta);
      k = 2;
    }
    for (int i = k; i >= 1; i--) lua_rawseti(L, top, i + 1);
    lua_pushinteger(L, k);
    lua_setfield(L, top, "n");
  }
  lua_pushvalue(L, -1);
  lua_setiuservalue(L, 1, 2);
  f->resolved = true;
}

/* future:result(): waits for the run, then returns what session:run would have (the outputs, and the
 * metadata when the run options asked for it), or raises the tfdev.error the run failed with. The
 * same values (or error) on every call. */
static int future_result(lua_State *L) {
  lua_settop(L, 1);
  lfuture *f = check_future(L, 1);
  if (f->resolved) {
    lua_getiuservalue(L, 1, 2);
  } else {
    tfd_run *run = open_run(L, f);
    if (f->busy)
      return raise_reentrant(L, "future:result()", "this future's own step", "take the result after the step ends");
    lsession *u = future_session(L);
    const volatile sig_atomic_t *interrupt = tfdev_state(L)->interrupt;
    lua_State *prev = enter_future(L, f, u);
    wait_run(run, -1, interrupt, NULL);
    leave_future(f, u, prev);
    resolve(L, f);
  }
  int kept = lua_gettop(L);
  lua_rawgeti(L, kept, 1);
  bool ok = lua_toboolean(L, -1);
  lua_pop(L, 1);
  if (!ok) {
    lua_rawgeti(L, kept, 2);
    return lua_error(L);
  }
  lua_getfield(L, kept, "n");
  int k = (int)lua_tointeger(L, -1);
  lua_pop(L, 1);
  for (int i = 1; i <= k; i++) lua_rawgeti(L, kept, i + 1);
  return k;
}

/* close(), __close and __gc: a run still going is cancelled and waited for; the handle goes. A result
 * already taken stays available. Twice is harmless. Refused (FAILED_PRECONDITION) from Lua code run
 * inside the future's own step, which the close would wait for. */
static int future_close(lua_State *L) {
  lfuture *f = check_future(L, 1);
  if (f->busy && f->run) return raise_reentrant(L, "future:close()", "this future's own step", "cancel it instead");
  tfd_run_free(f->run);
  f->run = NULL;
  tfd_run_metadata_free(f->meta);
  f->meta = NULL;
  watch_unref(f->watch);
  f->watch = NULL;
  return 0;
}

/* Only looks: polling the run would run its Lua kernels here (outside any call that may) and could
 * cancel it at its deadline. */
static int future_tostring(lua_State *L) {
  lfuture *f = check_future(L, 1);
  const char *state = f->resolved ? "done"
                      : !f->run   ? "closed"
                      : f->watch && atomic_load_explicit(&f->watch->ended, memory_order_acquire) ? "done"
                                                                                                  : "pending";
  lua_pushfstring(L, "tfdev.future(%s)", state);
  return 1;
}

int tfdev_open_session(lua_State *L) {
  static const luaL_Reg meta[] = {{"__tostring", session_tostring}, {"__gc", session_close}, {"__close", session_close},
                                  {NULL, NULL}};
  static const luaL_Reg methods[] = {{"create", session_create},
                                     {"extend", session_extend},
                                     {"run", session_run},
                                     {"run_async", session_run_async},
                                     {"make_callable", session_make_callable},
                                     {"list_devices", session_list_devices},
                                     {"devices", session_devices}, {"device_mgr", session_device_mgr},
                                     {"placement", session_placement},
                                     {"executor_count", session_executor_count},
                                     {"reset", session_reset},
                                     {"finalize", session_finalize},
                                     {"prun_setup", session_prun_setup},
                                     {"prun", session_prun},
                                     {"export_cost_models", session_export_cost_models},
                                     {"close", session_close},
                                     {NULL, NULL}};
  tfdev_new_class(L, TFDEV_SESSION_MT, meta, methods);
  static const luaL_Reg cmeta[] = {{"__tostring", callable_tostring}, {"__gc", callable_gc},
                                   {"__close", callable_release}, {NULL, NULL}};
  static const luaL_Reg cmethods[] = {{"release", callable_release}, {"run_async", callable_run_async},
                                   {"run_with", callable_run_with}, {NULL, NULL}};
  tfdev_new_class(L, CALLABLE_MT, cmeta, cmethods);
  /* __call reaches the callable's and the tensor's metatables through upvalues. */
  luaL_getmetatable(L, CALLABLE_MT);
  lua_pushvalue(L, -1);
  if (luaL_getmetatable(L, TFDEV_TENSOR_MT) != LUA_TTABLE) return luaL_error(L, "tfdev: tensors must be opened before sessions");
  lua_pushcclosure(L, callable_call, 2);
  lua_setfield(L, -2, "__call");
  lua_pop(L, 1);
  static const luaL_Reg pmeta[] = {{"__gc", prun_close}, {"__close", prun_close}, {"__tostring", prun_tostring},
                                   {NULL, NULL}};
  static const luaL_Reg pmethods[] = {{"close", prun_close}, {NULL, NULL}};
  tfdev_new_class(L, PRUN_MT, pmeta, pmethods);
  static const luaL_Reg fmeta[] = {{"__gc", future_close}, {"__close", future_close}, {"__tostring", future_tostring},
                                   {NULL, NULL}};
  static const luaL_Reg fmethods[] = {{"ready", future_ready},   {"wait", future_wait},   {"result", future_result},
                                      {"cancel", future_cancel}, {"close", future_close}, {NULL, NULL}};
  tfdev_new_class(L, FUTURE_MT, fmeta, fmethods);
  lua_pushcfunction(L, session_new);
  return 1;
}
