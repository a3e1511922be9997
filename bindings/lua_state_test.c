/* Lua states in one process: each gets its own factory registry (registrations never cross), and a
 * host can give a state its own runtime and interrupt its runs; a state closing while another runs
 * its Lua op; the bindings' out-of-memory errors (C allocations made to fail through the linker's --wrap). */
#include <lauxlib.h>
#include <lualib.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include "bindings/l_common.h"
#include "runtime/testing/harness.h"

static lua_State *open_state(void) {
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  luaL_requiref(L, "tfdev.core", luaopen_tfdev_core, 0);
  lua_setglobal(L, "core");
  return L;
}

static int run(lua_State *L, const char *code) {
  if (luaL_dostring(L, code) != LUA_OK) {
    fprintf(stderr, "lua error: %s\n", luaL_tolstring(L, -1, NULL));
    return 0;
  }
  return 1;
}

static void test_registries_are_per_state(void) {
  lua_State *a = open_state(), *b = open_state();
  CHECK(run(a, "core.factory.register('CPU', {create_devices = function() return {} end}, 150)"));
  CHECK(run(a, "assert(core.factory.priority('CPU') == 150)"));
  CHECK(run(b, "assert(core.factory.priority('CPU') == 60, 'state b sees state a')"));
  CHECK(run(b, "assert(core.factory.get('CPU').name == 'ThreadPoolDeviceFactory')"));
  CHECK_INT(tfd_factory_registry_priority(tfd_factory_registry_default(), "CPU"), 60);
  lua_close(a);
  CHECK(run(b, "assert(#core.factory.add_devices() == 1)"));
  lua_close(b);
}

/* A Lua factory reached from C without its state refuses, instead of crashing. */
static void test_lua_factory_needs_its_state(void) {
  lua_State *L = open_state();
  CHECK(run(L, "core.factory.register('XPU', {create_devices = function() return {} end}, 10)"));
  lua_getfield(L, LUA_REGISTRYINDEX, "tfdev.state");
  tfdev_lstate *s = lua_touserdata(L, -1);
  lua_pop(L, 1);
  tfd_device_factory *f = tfd_factory_registry_get(s->registry, "XPU");
  tfd_status *st = tfd_status_new();
  tfd_device_list *l = tfd_device_list_new();
  CHECK_INT(tfd_device_factory_create_devices(f, NULL, NULL, "/job:a/replica:0/task:0", l, st), TFD_FAILED_PRECONDITION);
  CHECK_STATUS(st, TFD_FAILED_PRECONDITION, "written in Lua");
  lua_State *other = open_state();
  tfdev_call_ctx wrong = {other, 0};
  CHECK_INT(tfd_device_factory_create_devices(f, &wrong, NULL, "/job:a/replica:0/task:0", l, st),
            TFD_FAILED_PRECONDITION);
  tfd_status_reset(st);
  lua_close(other);
  tfd_device_list_free(l);
  tfd_status_free(st);
  lua_close(L);
}

/* A host's runtime given to a Lua state: its allocator backs the state's tensors, its logger gets the
 * state's lines, and a C factory registered in it is seen by scripts. */
static atomic_long host_allocs, host_frees;
static void *host_alloc(void *ctx, size_t alignment, size_t size) {
  (void)ctx;
  void *p = NULL;
  if (posix_memalign(&p, alignment, size ? size : alignment) != 0) return NULL;
  atomic_fetch_add(&host_allocs, 1);
  return p;
}
static void host_free(void *ctx, void *p, size_t size) {
  (void)ctx, (void)size;
  atomic_fetch_add(&host_frees, 1);
  free(p);
}
static char logged[4096];
static void host_log(void *ctx, tfd_log_level level, const char *msg) {
  (void)ctx;
  size_t n = strlen(logged);
  snprintf(logged + n, sizeof logged - n, "%d %s\n", (int)level, msg);
}

static void test_host_runtime(void) {
  tfd_status *st = tfd_status_new();
  tfd_host_allocator a = {host_alloc, host_free, NULL};
  tfd_host_logger lg = {host_log, TFD_LOG_INFO, NULL};
  tfd_runtime_config cfg = {.allocator = &a, .logger = &lg};
  tfd_runtime *rt = NULL;
  tfd_runtime_new(&cfg, &rt, st);
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  CHECK_INT(tfdev_use_runtime(L, rt, st), TFD_OK);
  tfd_runtime_unref(rt); /* the state holds its own reference */
  luaL_requiref(L, "tfdev.core", luaopen_tfdev_core, 0);
  lua_setglobal(L, "core");
  CHECK_INT(tfdev_use_runtime(L, rt, st), TFD_FAILED_PRECONDITION);
  CHECK_STATUS(st, TFD_FAILED_PRECONDITION, "tfdev is already open in this Lua state");
  long before = atomic_load(&host_allocs);
  CHECK(run(L, "local t = core.tensor.new({1, 2, 3}, 'float32'); assert(t:totable()[3] == 3)"));
  CHECK(atomic_load(&host_allocs) > before);
  CHECK(run(L, "local s = core.session({allow_soft_placement = true})\n"
               "s:create({node = {{name = 'c', op = 'Const', device = '/device:GPU:0',"
               " attr = {value = core.tensor.new(2, 'float32')}}}})\n"
               "assert(s:run({}, 'c'):item() == 2)\n"
               "s:close()"));
  CHECK_CONTAINS(logged, "1 soft placement: node 'c' (Const) asked for '/device:GPU:0'");
  lua_close(L);
  CHECK_INT(atomic_load(&host_allocs), atomic_load(&host_frees));
  tfd_status_free(st);
}

/* A Lua op's record outlives the state that registered it and is marked dead when that state closes,
 * on the closing thread, while threads running other states' steps read the mark: a state closing as
 * another state's thread runs its op makes that read race the write unless the mark is atomic (the
 * TSan build fails here otherwise). The runs are refused either way, first as another state's op, then
 * as a closed state's. */
typedef struct foreign_runs {
  lua_State *L;
  atomic_int runs;
  atomic_bool stop;
  int other, closed, unexpected;
  char last[256];
} foreign_runs;

static void *run_foreign_op(void *arg) {
  foreign_runs *r = arg;
  while (!atomic_load(&r->stop)) {
    lua_getglobal(r->L, "try_run");
    lua_call(r->L, 0, 1);
    const char *msg = lua_tostring(r->L, -1);
    if (msg && strstr(msg, "belongs to another Lua state")) r->other++;
    else if (msg && strstr(msg, "the Lua state that registered it is closed")) r->closed++;
    else r->unexpected++, snprintf(r->last, sizeof r->last, "%s", msg ? msg : "(not a string)");
    lua_pop(r->L, 1);
    atomic_fetch_add(&r->runs, 1);
  }
  return NULL;
}

static lua_State *open_state_with(tfd_runtime *rt) {
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  CHECK_INT(tfdev_use_runtime(L, rt, NULL), TFD_OK);
  luaL_requiref(L, "tfdev.core", luaopen_tfdev_core, 0);
  lua_setglobal(L, "core");
  return L;
}

static void wait_for_runs(foreign_runs *r, int n) {
  while (atomic_load(&r->runs) < n) sched_yield();
}

static void test_state_closes_while_another_runs_its_op(void) {
  tfd_runtime *rt = NULL;
  tfd_runtime_new(NULL, &rt, NULL);
  lua_State *owner = open_state_with(rt), *other = open_state_with(rt);
  tfd_runtime_unref(rt); /* the states hold it */
  CHECK(run(owner, "core.op.register { name = 'DeadFlagRace', inputs = 1, outputs = 1,"
                   " kernel = function(x) return x end }"));
  CHECK(run(other, "S = core.session()\n"
                   "S:create { node = { { name = 'x', op = 'Placeholder', attr = { dtype = 'float32' } },"
                   " { name = 'k', op = 'DeadFlagRace', input = { 'x' } } } }\n"
                   "X = core.tensor.new({ 1 }, 'float32')\n"
                   "function try_run()\n"
                   "  local ok, e = pcall(S.run, S, { x = X }, 'k')\n"
                   "  return ok and 'ran' or (core.error.is(e) and e.message or tostring(e))\n"
                   "end"));
  foreign_runs r = {.L = other};
  pthread_t t;
  CHECK_INT(pthread_create(&t, NULL, run_foreign_op, &r), 0);
  wait_for_runs(&r, 3);
  lua_close(owner); /* marks the op dead while the other thread runs it */
  int after = atomic_load(&r.runs);
  wait_for_runs(&r, after + 3);
  atomic_store(&r.stop, true);
  pthread_join(t, NULL);
  CHECK(r.other > 0);
  CHECK(r.closed > 0);
  CHECK_INT(r.unexpected, 0);
  if (r.unexpected) fprintf(stderr, "last unexpected result: %s\n", r.last);
  lua_close(other);
}

/* ---- out of memory ----
 * The linker's --wrap sends the bindings' calls of these makers here (CMakeLists.txt): each fails the
 * call `fail_at` of the function named `failing` (counting from 1), and with `lua_too` also the Lua
 * allocations after it until lua_ok() (a global of the state) is called. */
tfd_status *__real_tfd_status_new(void);
tfd_status *__wrap_tfd_status_new(void);
tfd_session_options *__real_tfd_session_options_new(void);
tfd_session_options *__wrap_tfd_session_options_new(void);
tfd_graph_def *__real_tfd_graph_def_new(void);
tfd_graph_def *__wrap_tfd_graph_def_new(void);
tfd_run_metadata *__real_tfd_run_metadata_new(void);
tfd_run_metadata *__wrap_tfd_run_metadata_new(void);

static const char *failing;
static int fail_at, calls;
static bool lua_too, lua_failing;

static bool fail_now(const char *fn) {
  if (!failing || strcmp(fn, failing) != 0 || ++calls != fail_at) return false;
  failing = NULL;
  lua_failing = lua_too;
  return true;
}

tfd_status *__wrap_tfd_status_new(void) { return fail_now("tfd_status_new") ? NULL : __real_tfd_status_new(); }
tfd_session_options *__wrap_tfd_session_options_new(void) {
  return fail_now("tfd_session_options_new") ? NULL : __real_tfd_session_options_new();
}
tfd_graph_def *__wrap_tfd_graph_def_new(void) { return fail_now("tfd_graph_def_new") ? NULL : __real_tfd_graph_def_new(); }
tfd_run_metadata *__wrap_tfd_run_metadata_new(void) {
  return fail_now("tfd_run_metadata_new") ? NULL : __real_tfd_run_metadata_new();
}

/* Lua's allocator, failing what grows while lua_failing. */
static void *test_lua_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  (void)ud;
  if (nsize == 0) {
    free(ptr);
    return NULL;
  }
  if (lua_failing && (!ptr || nsize > osize)) return NULL;
  return realloc(ptr, nsize);
}

static int lua_ok(lua_State *L) {
  (void)L;
  lua_failing = false;
  return 0;
}

static void test_out_of_memory_is_resource_exhausted(void) {
  static const struct {
    const char *fn;
    int at;
    bool lua_too;
    const char *code; /* sets `ok, e` to the call's pcall */
    const char *message;
  } cases[] = {
      {"tfd_status_new", 1, false, "ok, e = pcall(core.device_name.parse, '/job:a')", "out of memory making a status"},
      {"tfd_session_options_new", 1, false, "ok, e = pcall(core.session, {})", "out of memory making session options"},
      {"tfd_graph_def_new", 1, false, "ok, e = pcall(S.create, S, G)", "out of memory making a GraphDef"},
      {"tfd_run_metadata_new", 1, false, "ok, e = pcall(S.run, S, {}, 'c', nil, { trace = true })",
       "out of memory making run metadata"},
      {"tfd_run_metadata_new", 1, false, "ok, e = pcall(S.run_async, S, {}, 'c', nil, { trace = true })",
       "out of memory making run metadata"},
      /* Lua's memory short too: the error made when the module opened. */
      {"tfd_status_new", 1, true, "ok, e = pcall(core.device_name.parse, '/job:a'); lua_ok()", "out of memory"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    lua_State *L = lua_newstate(test_lua_alloc, NULL);
    luaL_openlibs(L);
    luaL_requiref(L, "tfdev.core", luaopen_tfdev_core, 0);
    lua_setglobal(L, "core");
    lua_register(L, "lua_ok", lua_ok);
    CHECK(run(L, "ok, e, msg = 0, 0, 0 -- made now: assigning them later allocates nothing\n"
                 "S = core.session()\n"
                 "G = { node = { { name = 'c', op = 'Const', attr = { value = core.tensor.new(1, 'float32') } } } }\n"
                 "S:create(G)"));
    failing = cases[i].fn, fail_at = cases[i].at, calls = 0, lua_too = cases[i].lua_too;
    CHECK(run(L, cases[i].code));
    lua_failing = false;
    CHECK(failing == NULL); /* the call was made, and failed */
    failing = NULL;
    CHECK(run(L, "assert(not ok, 'the call succeeded')\n"
                 "assert(core.error.is(e), 'not a tfdev.error: ' .. tostring(e))\n"
                 "assert(e.code == 'RESOURCE_EXHAUSTED', tostring(e))\n"
                 "msg = e.message"));
    lua_getglobal(L, "msg");
    CHECK_STR(lua_tostring(L, -1), cases[i].message);
    lua_pop(L, 1);
    CHECK(run(L, "assert(S:run({}, 'c'):item() == 1)")); /* the state goes on */
    lua_close(L);
  }
}

/* tfdev_lua_set_interrupt: a raised flag cancels what a run, a callable's call and a future wait for
 * (a dequeue from an empty queue, which would wait forever), the state going on; NULL stops watching. */
static void test_interrupt_cancels_waiting_runs(void) {
  tfd_status *st = tfd_status_new();
  lua_State *bare = luaL_newstate();
  volatile sig_atomic_t flag = 0;
  CHECK_INT(tfdev_lua_set_interrupt(bare, &flag, st), TFD_FAILED_PRECONDITION);
  CHECK_CONTAINS(tfd_status_message(st), "tfdev is not open in this Lua state");
  lua_close(bare);
  lua_State *L = open_state();
  CHECK_INT(tfdev_lua_set_interrupt(L, &flag, st), TFD_OK);
  CHECK(run(L, "S = core.session()\n"
               "S:create { node = {\n"
               "  { name = 'q', op = 'FIFOQueueV2', attr = { component_types = { 'float32' } } },\n"
               "  { name = 'dq', op = 'QueueDequeueV2', input = { 'q' }, attr = { component_types = { 'float32' } } },\n"
               "  { name = 'c', op = 'Const', attr = { value = core.tensor.new(2.5, 'float32') } } } }\n"
               "assert(S:run({}, 'c'):item() == 2.5) -- watched, not raised: runs as ever\n"
               "C = S:make_callable { fetches = 'dq' }"));
  flag = 1;
  CHECK(run(L, "local function cancelled(f, ...)\n"
               "  local ok, e = pcall(f, ...)\n"
               "  assert(not ok and e.code == 'CANCELLED', tostring(e))\n"
               "  assert(e.message:find('Run was cancelled.', 1, true), e.message)\n"
               "end\n"
               "cancelled(S.run, S, {}, 'dq')\n"
               "cancelled(C)\n"
               "local f = S:run_async({}, 'dq')\n"
               "assert(f:wait() == true, 'the wait did not end the run')\n"
               "cancelled(f.result, f)"));
  flag = 0;
  CHECK(run(L, "assert(S:run({}, 'c'):item() == 2.5)"));
  CHECK_INT(tfdev_lua_set_interrupt(L, NULL, st), TFD_OK);
  flag = 1; /* no longer watched */
  CHECK(run(L, "assert(S:run({}, 'c'):item() == 2.5)"));
  lua_close(L);
  tfd_status_free(st);
}

static const tfd_test tests[] = {
    {"an interrupt cancels the runs Lua waits for", test_interrupt_cancels_waiting_runs},
    {"a host's runtime serves the state", test_host_runtime},
    {"registries are per Lua state", test_registries_are_per_state},
    {"a Lua factory needs its own state", test_lua_factory_needs_its_state},
    {"a state closes while another runs its Lua op", test_state_closes_while_another_runs_its_op},
    {"out of memory is RESOURCE_EXHAUSTED", test_out_of_memory_is_resource_exhausted},
};
TFD_TEST_MAIN(tests)
