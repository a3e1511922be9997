/* Fuzzes the Lua face: arbitrary Lua values through the tfdev module's entry points.
 *
 * Each input gets a fresh Lua state (memory capped at 64 MiB, so the
 * harness measures tfdev, not Lua) with the module loaded as the tfdev
 * executable loads it: tfdev.core linked in and preloaded, the pure-Lua part
 * read from the source tree's lua/ directory. The input is a program for a
 * small stack machine, one opcode byte (taken modulo the opcode count) and
 * its operand bytes at a time; the stack is the Lua stack:
 *   push    nil, booleans, integers (small, special: 2^63-1, -2^63, 2^31, ...,
 *           8 raw bytes), floats (NaN, +-inf, -0, 2^63, huge, 8 raw bytes),
 *           strings (a dictionary of dtype, device, op, field, option and
 *           run-option names, some with embedded NULs; or raw bytes)
 *   build   new table, t[k] = v, append, t.<dictionary key> = v, t[1] = t,
 *           nest the top value 2 .. 300,000 levels deep (by index or key),
 *           attach a metatable whose __index/__len/__tostring/__gc/... raise,
 *           return odd values, collect garbage or close every tfdev object
 *   stack   dup (counting from the top), pop, swap
 *   fixtures  push a fresh ready-made value: a GraphDef (MLP, variable,
 *           queue, ConcatV2, Reshape, Cast, Fill), options, feeds, a tensor
 *           spec, a Lua factory (raising, returning junk, re-entering the
 *           registry, ...), or an object an earlier call returned
 *   call    one entry point (byte) on the top 0..5 values (byte), under lua_pcall:
 *           tfdev.tensor in its three forms, totable, tostring, from_bytes,
 *           tfdev.session, create/extend/run/make_callable/prun_setup/prun,
 *           finalize, tfdev.session_factory.reset, callable:run_with,
 *           device:compute, tfdev.device.cpu/renamed, tfdev.factory.*,
 *           tfdev.device_name.*, tfdev.graph() builder calls, device sets and
 *           managers; its arguments are replaced by its first result (or the
 *           error value)
 * The state is closed at the end of every input, which runs the finalizers.
 * Sessions get operation_timeout_ms = 30 unless the program sets a sane one,
 * so blocking queue ops end. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "bindings/l_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifndef TFDEV_FUZZ_LUA_DIR
#error "TFDEV_FUZZ_LUA_DIR must name the source tree's lua/ directory"
#endif

#define LUA_MEMORY_LIMIT ((size_t)64 << 20)
#define MAX_STACK 48 /* values the program may keep on the stack */
#define MAX_CALLS 24 /* entry-point calls per input */
#define MAX_OPS 4096

/* ---- Lua's memory, capped ---- */
typedef struct lmem {
  size_t used, limit;
} lmem;

static void *capped_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  lmem *m = ud;
  size_t old = ptr ? osize : 0; /* osize encodes a type when ptr is NULL */
  if (nsize == 0) {
    free(ptr);
    m->used -= old;
    return NULL;
  }
  if (nsize > old && m->used + (nsize - old) > m->limit) return NULL;
  void *p = realloc(ptr, nsize);
  if (p) m->used = m->used - old + nsize;
  return p;
}

/* ---- the Lua half of the harness: entry points, fixtures, metatables ----
 * Written in Lua because that is what a tfdev user writes. Entry points take
 * their receiver from the first argument when it has the right type, else
 * from the last object of that kind (made on demand). */
static const char prelude[] =
    "local tfdev = require 'tfdev'\n"
    "local H = {objs = {}, last = {}}\n"
    "local reg = debug.getregistry()\n"
    "local function isa(v, mt) return type(v) == 'userdata' and debug.getmetatable(v) == reg[mt] end\n"
    "local function num(v, d) return math.type(v) == 'integer' and v or d end\n"
    "function H.keep(v)\n"
    "  if type(v) == 'userdata' or type(v) == 'table' then\n"
    "    if #H.objs >= 64 then table.remove(H.objs, 1) end\n"
    "    H.objs[#H.objs + 1] = v\n"
    "    for _, k in ipairs {'tfdev.session', 'tfdev.tensor', 'tfdev.device', 'tfdev.prun', 'tfdev.callable'} do\n"
    "      if isa(v, k) then H.last[k] = v end\n"
    "    end\n"
    "  end\n"
    "  return v\n"
    "end\n"
    /* Session options: a timeout unless the program set a sane one, so blocked dequeues end. */
    "function H.opts(o)\n"
    "  if o == nil then return {operation_timeout_ms = 30} end\n"
    "  if type(o) == 'table' then\n"
    "    local t = rawget(o, 'operation_timeout_ms')\n"
    "    if t == nil or (type(t) == 'number' and not (t >= 1 and t <= 100)) then rawset(o, 'operation_timeout_ms', 30) end\n"
    /* Inter-op pools of up to 1,024 threads each are valid, but would measure thread creation. */
    "    local p = rawget(o, 'session_inter_op_thread_pool')\n"
    "    if type(p) == 'table' then for i = 1, 64 do local e = rawget(p, i)\n"
    "      if type(e) == 'table' and type(rawget(e, 'num_threads')) == 'number' and rawget(e, 'num_threads') > 4 then\n"
    "        rawset(e, 'num_threads', 2) end end end\n"
    "  end\n"
    "  return o\n"
    "end\n"
    "function H.ropts(o)\n"
    "  if type(o) == 'table' then\n"
    "    local t = rawget(o, 'timeout_ms')\n"
    "    if type(t) == 'number' and not (t >= 1 and t <= 100) then rawset(o, 'timeout_ms', 30) end\n"
    "  end\n"
    "  return o\n"
    "end\n"
    "local P = '/job:localhost/replica:0/task:0'\n"
    "local make = {}\n"
    "make['tfdev.session'] = function() return H.keep(tfdev.session(H.opts())) end\n"
    "make['tfdev.tensor'] = function() return H.keep(tfdev.tensor({{1, 2}, {3, 4}}, 'float32')) end\n"
    "make['tfdev.device'] = function() return H.keep(tfdev.device.cpu {name = P .. '/device:CPU:0'}) end\n"
    "local function pick(v, mt)\n"
    "  if isa(v, mt) then return v end\n"
    "  return H.last[mt] or make[mt]()\n"
    "end\n"
    "local function S(v) return pick(v, 'tfdev.session') end\n"
    "local function T(v) return pick(v, 'tfdev.tensor') end\n"
    "local function D(v) return pick(v, 'tfdev.device') end\n"
    /* Closes every object the program holds, then collects: run from metamethods and factories. */
    "function H.chaos()\n"
    "  for _, o in ipairs(H.objs) do\n"
    "    if type(o) == 'userdata' then\n"
    "      local mt = debug.getmetatable(o)\n"
    "      local idx = mt and rawget(mt, '__index')\n"
    "      local close = (type(idx) == 'table' and rawget(idx, 'close')) or (mt and rawget(mt, '__close'))\n"
    "      if close then pcall(close, o) end\n"
    "    end\n"
    "  end\n"
    "  collectgarbage()\n"
    "end\n"
    "H.junk = {true, 0, -1, 2^63, 0/0, '', 'float32', {}, print, coroutine.create(print), tfdev, 1e308}\n"
    "H.metas = {\n"
    "  {__index = function() error('__index raised') end},\n"
    "  {__index = function(t) return t end},\n"
    "  {__index = function() return 2^63 end},\n"
    "  {__index = function(_, k) return H.junk[#tostring(k) % #H.junk + 1] end},\n"
    "  {__index = function() error(setmetatable({}, {__tostring = function() error('again') end})) end},\n"
    "  {__index = function() collectgarbage() end},\n"
    "  {__index = function() H.chaos() end},\n"
    "  {__tostring = function() error('__tostring raised') end},\n"
    "  {__tostring = function() return {} end},\n"
    "  {__gc = function() error('__gc raised') end},\n"
    "  {__gc = function(o) H.resurrected = o end},\n"
    "  {__gc = function() H.chaos() end},\n"
    "  {__len = function() return -1 end},\n"
    "  {__len = function() return 2^40 end},\n"
    "  {__len = function() return math.maxinteger end},\n"
    "  {__len = function() error('__len raised') end},\n"
    "  {__newindex = function() error('__newindex raised') end},\n"
    "  {__pairs = function() error('__pairs raised') end},\n"
    "  {__name = 'tfdev.tensor'},\n"
    "  {__metatable = 'locked'},\n"
    "  {__eq = function() error('__eq raised') end, __lt = function() error('__lt raised') end},\n"
    "  {__call = function() H.chaos() end},\n"
    /* Chaos on a later read only, once earlier fields have been taken. */
    "  {__index = function(_, k) if k == 'shape' or k == 'data' or k == 'fetches' or k == 'attr' or k == 'input' then H.chaos() end end},\n"
    "  {__index = function(t) local n = (H.reads[t] or 0) + 1; H.reads[t] = n; if n == 2 then H.chaos() end end},\n"
    "}\n"
    "H.reads = setmetatable({}, {__mode = 'k'})\n"
    /* Lua factories for tfdev.factory.register. */
    "H.factories = {\n"
    "  {create_devices = function() error('driver missing') end},\n"
    "  {create_devices = function() error({code = 'UNAVAILABLE', message = 'no accelerator'}) end},\n"
    "  {create_devices = function() error(setmetatable({}, {__tostring = function() error('again') end})) end},\n"
    "  {create_devices = function() error({code = {}, message = {}}) end},\n"
    "  {create_devices = function() return 'devices' end},\n"
    "  {create_devices = function() return {1, 2, {}} end},\n"
    "  {create_devices = function() return nil end},\n"
    "  {create_devices = function(_, _, p) return {tfdev.device.cpu {name = p .. '/device:CPU:0'}} end},\n"
    "  {create_devices = function(_, _, p) return {tfdev.device.cpu {name = p .. '/device:XPU:0', device_type = 'XPU'}} end},\n"
    "  {create_devices = function(_, _, p) local d = tfdev.device.cpu {name = p .. '/device:CPU:0'}; d:close(); return {d} end},\n"
    "  {create_devices = function(_, _, p) local d = tfdev.device.cpu {name = p .. '/device:CPU:0'}; return {d, d} end},\n"
    "  {create_devices = function() tfdev.factory.reset(); return {} end},\n"
    "  {create_devices = function() tfdev.factory.register('CPU', H.factories[8], 2000); return {} end},\n"
    "  {create_devices = function(_, o, p) return tfdev.factory.add_devices(o, p) end},\n"
    "  {create_devices = function() coroutine.yield() end},\n"
    "  {create_devices = function() collectgarbage(); return {} end},\n"
    "  {create_devices = function(_, o) if type(o) == 'table' then for k in pairs(o) do rawset(o, k, nil) end end return {} end},\n"
    "  {create_devices = function() H.chaos(); return {} end},\n"
    "  {create_devices = function(_, _, p) local t = {} for i = 1, 20 do t[i] = tfdev.device.cpu {name = p .. '/device:CPU:' .. i} end return t end},\n"
    "  {create_devices = function(self) self.create_devices = nil; return {} end},\n"
    "  {create_devices = function(_, _, p) local s = tfdev.session(H.opts()); H.keep(s); return {} end},\n"
    "  {create_devices = true},\n"
    "  setmetatable({}, {__index = function(_, k) if k == 'create_devices' then return function() return {} end end end}),\n"
    "  {name = {}, create_devices = function() error('x') end},\n"
    "}\n"
    /* Fixtures: fresh values, so the program may change them. */
    "local function mlp() return {node = {\n"
    "  {name = 'x', op = 'Placeholder', attr = {dtype = 'float32', shape = {-1, 2}}},\n"
    "  {name = 'w', op = 'Const', attr = {value = tfdev.tensor({{1, 2}, {3, 4}}, 'float32')}},\n"
    "  {name = 'b', op = 'Const', attr = {value = {-10, 1}, dtype = 'float32'}},\n"
    "  {name = 'mm', op = 'MatMul', input = {'x', 'w'}},\n"
    "  {name = 'add', op = 'BiasAdd', input = {'mm', 'b:0'}},\n"
    "  {name = 'y', op = 'Relu', input = {'add'}},\n"
    "  {name = 'sm', op = 'Softmax', input = {'y'}},\n"
    "}} end\n"
    "H.fixtures = {\n"
    "  mlp,\n"
    "  function() local g = tfdev.graph(); local v = g:variable({1, 2}, {name = 'v', dtype = 'int32'})\n"
    "    g:assign_add(v, g:const({1, 1}, {dtype = 'int32'}), {name = 'inc'}); return g:graph_def() end,\n"
    "  function() local g = tfdev.graph(); local q = g:fifo_queue({'float32', 'int32'}, {name = 'q', capacity = 2})\n"
    "    local x = g:placeholder('float32', {}, {name = 'x'}); local n = g:placeholder('int32', {}, {name = 'n'})\n"
    "    g:enqueue(q, {x, n}, {name = 'enqueue'}); local a = g:dequeue(q, {name = 'dequeue'})\n"
    "    g:op('Identity', {a}, {name = 'value'}); g:queue_size(q, {name = 'size'}); g:queue_close(q, {name = 'close'})\n"
    "    return g:graph_def() end,\n"
    "  function() local g = tfdev.graph(); local a = g:placeholder('int32', {-1, 2}, {name = 'a'})\n"
    "    local c = g:concat({a, g:const({{5, 6}})}, 0, {name = 'c'}); g:reshape(c, {-1}, {name = 'r'})\n"
    "    g:cast(c, 'float64', {name = 'f'}); g:transpose(c, {1, 0}, {name = 't'}); g:sum(c, {0}, {name = 's'})\n"
    "    return g:graph_def() end,\n"
    "  function() local g = tfdev.graph(); local d = g:placeholder('int32', {2}, {name = 'dims'})\n"
    "    g:op('Fill', {d, g:const(1.5, {dtype = 'float32'})}, {name = 'fill'}); g:random_uniform({2, 3}, {name = 'ru', seed = 1})\n"
    "    return g:graph_def() end,\n"
    "  function() return {device_count = {CPU = 2}, allow_soft_placement = true, operation_timeout_ms = 50} end,\n"
    "  function() return {x = {{1, 1}, {2, 0}}} end,\n"
    "  function() return {'y', 'mm:0', 'x'} end,\n"
    "  function() return {trace = true, output_partition_graphs = true, cost_graph = true} end,\n"
    "  function() return {dtype = 'float32', shape = {2, 2}, data = {1, 2, 3, 4}} end,\n"
    "  function() return {feeds = {'x'}, fetches = {'y', 'mm'}} end,\n"
    "  function() return {a = {{1, 2}}, n = 1, x = 2.5, dims = {2, 3}} end,\n"
    "  function() return {name = P .. '/device:CPU:0', threads = 1, memory_limit = 1 << 20} end,\n"
    "  function() return {job = 'localhost', replica = 0, task = 0, type = 'CPU', id = 0} end,\n"
    "  function() return {node = {{name = 'a', op = 'NoOp'}}} end,\n"
    "}\n"
    /* Entry points: E[i](a, b, c, d, e). */
    "local g_last\n"
    "local function G(v) if type(v) == 'table' and getmetatable(v) == require('tfdev.graph').Graph then return v end\n"
    "  g_last = g_last or H.keep(tfdev.graph()); return g_last end\n"
    "local function fac(v) if type(v) == 'table' then return v end return H.factories[num(v, 0) % #H.factories + 1] end\n"
    "local E = {\n"
    "  function(a) return tfdev.tensor(a) end,\n"
    "  function(a, b) return tfdev.tensor(a, b) end,\n"
    "  function(a, b, c) return tfdev.tensor {dtype = a, shape = b, data = c} end,\n"
    "  function(a) return T(a):totable() end,\n"
    "  function(a) return tostring(T(a)) end,\n"
    "  function(a, b, c) return tfdev.from_bytes(a, b, c) end,\n"
    "  function(a, b) return T(a)[b] end,\n"
    "  function(a) local t = T(a); return #t, t:numel(), t.dtype, t.shape end,\n"
    "  function(a) return T(a):bytes() end,\n"
    "  function(a) return T(a):item() end,\n"
    "  function(a) return T(a):close() end,\n"
    "  function(a) return tfdev.session(H.opts(a)) end,\n"
    "  function(a, b) return S(a):create(b) end,\n"
    "  function(a, b) return S(a):extend(b) end,\n"
    "  function(a, b, c, d, e) return S(a):run(b, c, d, H.ropts(e)) end,\n"
    "  function(a, b, c, d) local _, meta = S(a):run(b, c, d, {trace = true, output_partition_graphs = true}); return meta end,\n"
    "  function(a, b, c, d) local f = S(a):make_callable(b); H.keep(f); return f(c, d) end,\n"
    "  function(a, b, c) if isa(a, 'tfdev.callable') then return a(b, c) end\n"
    "    local f = H.last['tfdev.callable']; if f then return f(a, b, c) end end,\n"
    "  function(a, b, c, d) return S(a):prun_setup(b, c, d) end,\n"
    "  function(a, b, c, d) local s = S(a); local h = isa(b, 'tfdev.prun') and b or H.last['tfdev.prun']\n"
    "    return s:prun(h or b, c, d) end,\n"
    "  function(a) local h = isa(a, 'tfdev.prun') and a or H.last['tfdev.prun']; if h then return h:close() end end,\n"
    "  function(a, b) return S(a):reset(b) end,\n"
    "  function(a) return S(a):close() end,\n"
    "  function(a) return S(a):finalize() end,\n"
    "  function(a, b) return tfdev.session_factory.reset(H.opts(a), b) end,\n"
    "  function(a, b, c) local f = H.last['tfdev.callable']; if f then return f:run_with(H.ropts(a), b, c) end end,\n"
    "  function(a, b) local s = S(a); return s:list_devices(), s:placement(b) end,\n"
    "  function(a) local s = S(a); return s:export_cost_models(), s:executor_count(), s:device_mgr() end,\n"
    "  function(a, b, c, d) return D(a):compute(b, c, d) end,\n"
    "  function(a) return tfdev.device.cpu(a) end,\n"
    "  function(a, b) return tfdev.device.renamed(D(a), b) end,\n"
    "  function(a) local d = D(a); return d:attributes(), d:debug_string(), d:allocator_stats(), d:sync(), tostring(d) end,\n"
    "  function(a, b, c) local rm = D(a):resource_manager(); return rm:containers(), rm:size(), rm:lookup(b, c), rm:cleanup(b) end,\n"
    "  function(a, b, c) return tfdev.factory.register(a, fac(b), c) end,\n"
    "  function(a, b) return tfdev.factory.add_devices(H.opts(a), b) end,\n"
    "  function(a, b, c) return tfdev.factory.new_device(a, H.opts(b), c) end,\n"
    "  function(a) return tfdev.factory.get(a), tfdev.factory.priority(a), tfdev.factory.list() end,\n"
    "  function() return tfdev.factory.reset() end,\n"
    "  function(a) return tfdev.device_name.parse(a) end,\n"
    "  function(a) local dn = tfdev.device_name; return dn.full_name(a), dn.legacy_name(a), dn.local_name(a), dn.canonical_name(a) end,\n"
    "  function(a, b) return tfdev.device_name.canonicalize(a, b) end,\n"
    "  function(a, b) return tfdev.device_name.is_complete_specification(a, b) end,\n"
    "  function(a, b, c) return tfdev.device_name.merge(a, b, c) end,\n"
    "  function(a, b) local dn = tfdev.device_name; return dn.is_specification(a, b), dn.is_same_address_space(a, b), dn.is_complete(a), dn.split(a) end,\n"
    "  function() g_last = H.keep(tfdev.graph()); return g_last end,\n"
    "  function(a, b, c, d) return G(a):op(b, c, d) end,\n"
    "  function(a, b, c, d) return G(a):placeholder(b, c, d) end,\n"
    "  function(a, b, c) return G(a):const(b, c) end,\n"
    "  function(a, b, c) return G(a):variable(b, c) end,\n"
    "  function(a) return G(a):graph_def() end,\n"
    "  function(a, b) return a + b, a * b, -a end,\n"
    "  function(a, b) local s = tfdev.device_set(a); return s:devices(), s:find_matching(b), s:prioritized_types() end,\n"
    "  function(a, b) local m = tfdev.device_mgr(a); return m:list(), m:lookup(b), m:mapping_string(), m:list_attributes() end,\n"
    "  function(a) return tfdev.timeline(a) end,\n"
    "  function() collectgarbage() end,\n"
    "  function() H.chaos() end,\n"
    "}\n"
    "H.nentries = #E\n"
    "function H.describe(v) local ok, s = pcall(tostring, v); return ok and type(s) == 'string' and s or '?' end\n"
    "function H.call(i, a, b, c, d, e) return H.keep((E[i % #E + 1](a, b, c, d, e))) end\n"
    "function H.fixture(i) return H.keep(H.fixtures[i % #H.fixtures + 1]()) end\n"
    "return H\n";

/* Strings a program pushes by number: names tfdev knows, and near misses. */
static const char *const dict[] = {
    /* dtypes */
    "float32", "float64", "int32", "int64", "bool", "resource", "float16", "string",
    /* device names and types */
    "/job:localhost/replica:0/task:0/device:CPU:0", "/job:localhost/replica:0/task:0/device:CPU:1", "/device:CPU:1",
    "/cpu:0", "CPU:0", "/job:w/replica:0/task:7", "/job:localhost/replica:0/task:0", "/device:GPU:0", "CPU", "GPU",
    "XPU", "SIM", "bad type", "/job:a/bogus", "/device:CPU:*",
    /* ops */
    "Const", "Placeholder", "PlaceholderWithDefault", "MatMul", "BiasAdd", "Relu", "Softmax", "Identity", "NoOp", "Add",
    "AddV2", "Mul", "RealDiv", "Fill", "Reshape", "ConcatV2", "Cast", "Transpose", "Sum", "Mean", "Shape",
    "VarHandleOp", "ReadVariableOp", "AssignVariableOp", "AssignAddVariableOp", "FIFOQueueV2", "QueueEnqueueV2",
    "QueueDequeueV2", "QueueCloseV2", "QueueSizeV2", "RandomUniform", "RandomStandardNormal", "GetSessionHandle",
    "GetSessionTensor", "DeleteSessionTensor", "_Send", "_Recv", "_Feed", "_Fetch", "Frobnicate",
    /* GraphDef, tensor spec and factory fields */
    "node", "name", "op", "input", "device", "attr", "value", "dtype", "shape", "data", "T", "N", "DstT", "SrcT",
    "Tidx", "component_types", "capacity", "shared_name", "container", "transpose_a", "transpose_b", "keep_dims",
    "seed", "create_devices", "feeds", "fetches", "targets", "code", "message",
    /* session options and their sub-tables */
    "device_count", "intra_op_threads", "inter_op_threads", "use_per_session_threads", "use_global_threadpool",
    "allow_soft_placement", "log_device_placement", "operation_timeout_ms", "visible_devices", "gpu",
    "memory_fraction", "allow_growth", "build_cost_model", "build_cost_model_after", "place_pruned_graph",
    "session_inter_op_thread_pool", "num_threads", "global_name", "run_options", "tensor_connection", "from_tensor",
    "to_tensor", "_class", "loc:@a", "loc:@ghost", "loc:@x",
    /* run options */
    "trace", "output_partition_graphs", "cost_graph", "timeout_ms", "tracing", "inter_op_thread_pool", "trace_level",
    "trace_allocations", "FULL_TRACE",
    /* device config and parsed names */
    "threads", "memory_limit", "bus_id", "device_type", "physical_device_desc", "job", "replica", "task", "type", "id",
    /* tensor names */
    "x", "y", "w", "b", "mm", "add", "sm", "v", "v/Read", "inc", "q", "enqueue", "dequeue", "value", "size", "close",
    "a", "c", "r", "f", "t", "s", "n", "dims", "fill", "ru", "x:0", "y:1", "mm:0", "^a", "a:x", "ghost", "", " ",
};

/* Strings with embedded NULs (sizes given explicitly). */
static const struct {
  const char *s;
  size_t n;
} nul_strings[] = {
    {"float32\0", 8}, {"a\0b", 3}, {"/job:localhost/replica:0/task:0/device:CPU:0\0junk", 49}, {"\0", 1}, {"x\0:0", 4},
    {"CPU\0", 4},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* ---- the program ---- */
typedef struct prog {
  const uint8_t *p, *end;
  int base; /* stack slots below this belong to the harness */
  int calls;
  int helpers; /* stack index of the H table */
  int nentries;
  int trace;
} prog;

static uint8_t u8(prog *g) { return g->p < g->end ? *g->p++ : 0; }
static uint64_t le(prog *g, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; i++) v |= (uint64_t)u8(g) << (8 * i);
  return v;
}
static int depth(lua_State *L, const prog *g) { return lua_gettop(L) - g->base; }

static void push_integer(lua_State *L, prog *g, uint8_t kind) {
  static const lua_Integer special[] = {0,          1,         -1,          2,         3,          784,
                                        INT32_MAX,  (lua_Integer)1 << 31, (lua_Integer)1 << 32,
                                        (lua_Integer)1 << 53, LUA_MAXINTEGER, LUA_MININTEGER,
                                        100000,     -2,        1 << 20,     (1 << 20) + 1, 1024, 1025};
  if (kind == 0) lua_pushinteger(L, (int8_t)u8(g));
  else if (kind == 1) lua_pushinteger(L, special[u8(g) % COUNT(special)]);
  else lua_pushinteger(L, (lua_Integer)le(g, 8));
}

static void push_float(lua_State *L, prog *g, uint8_t kind) {
  static const double special[] = {0.5, -0.0, 1.0, 1.5, 1e308, -1e308, 9223372036854775808.0,
                                   -9223372036854775808.0, 4294967296.0, 1e-310, 2.5, -2.0};
  if (kind == 0) {
    uint8_t b = u8(g);
    if (b % 16 == 14) lua_pushnumber(L, (lua_Number)NAN);
    else if (b % 16 == 15) lua_pushnumber(L, b & 0x80 ? (lua_Number)INFINITY : -(lua_Number)INFINITY);
    else lua_pushnumber(L, special[b % COUNT(special)]);
  } else {
    uint64_t bits = le(g, 8);
    double d;
    memcpy(&d, &bits, sizeof d);
    lua_pushnumber(L, d);
  }
}

static void push_string(lua_State *L, prog *g, uint8_t kind) {
  if (kind == 0) {
    lua_pushstring(L, dict[u8(g) % COUNT(dict)]);
  } else if (kind == 1) {
    uint8_t b = u8(g);
    lua_pushlstring(L, nul_strings[b % COUNT(nul_strings)].s, nul_strings[b % COUNT(nul_strings)].n);
  } else {
    char buf[64];
    size_t n = u8(g) % sizeof buf;
    for (size_t i = 0; i < n; i++) buf[i] = (char)u8(g);
    lua_pushlstring(L, buf, n);
  }
}

/* Wraps the top value in `levels` tables, as t[1] or t[key]. Raw sets only:
 * the harness itself must never run a metamethod outside a pcall'd call. */
static void nest(lua_State *L, prog *g) {
  static const int levels[] = {2, 9, 100, 1000, 300000};
  uint8_t b = u8(g);
  int n = levels[b % COUNT(levels)];
  const char *key = b & 0x80 ? dict[u8(g) % COUNT(dict)] : NULL;
  for (int i = 0; i < n; i++) {
    lua_createtable(L, key ? 0 : 1, key ? 1 : 0);
    lua_insert(L, -2);
    if (key) lua_setfield(L, -2, key); /* a fresh table has no metatable: this is raw */
    else lua_rawseti(L, -2, 1);
  }
}

/* Calls H[name](args...) leaving one result; the error value on failure. */
static void call_helper(lua_State *L, prog *g, const char *name, int nargs) {
  lua_getfield(L, g->helpers, name);
  lua_insert(L, -(nargs + 1));
  lua_pcall(L, nargs, 1, 0);
}

/* Calls entry point `which` on the top n values (n from the operand, at
 * most 5, deepest first; missing arguments are nil), which it replaces
 * with its first result, or with the error value. */
static void call_entry(lua_State *L, prog *g) {
  if (g->calls++ >= MAX_CALLS) return;
  uint8_t which = u8(g);
  int n = u8(g) % 6;
  if (n > depth(L, g)) n = depth(L, g);
  lua_getfield(L, g->helpers, "call");
  lua_pushinteger(L, which);
  lua_rotate(L, -(n + 2), 2); /* the function and index go below the arguments */
  for (int i = n; i < 5; i++) lua_pushnil(L);
  int status = lua_pcall(L, 6, 1, 0);
  if (g->trace) {
    /* TFDEV_FUZZ_TRACE=1: what each call did, for checking seeds by hand. */
    lua_getfield(L, g->helpers, "describe");
    lua_pushvalue(L, -2);
    const char *what = lua_pcall(L, 1, 1, 0) == LUA_OK ? lua_tostring(L, -1) : NULL;
    fprintf(stderr, "call %d (%d args): %s %s\n", which % g->nentries, n, status == LUA_OK ? "->" : "raised",
            what ? what : "?");
    lua_pop(L, 1);
  }
}

/* The protected body: runs the program on a fresh stack. */
static int run_program(lua_State *L) {
  prog *g = lua_touserdata(L, 1);
  lua_settop(L, 0);
  lua_getfield(L, LUA_REGISTRYINDEX, "fuzz.H");
  g->helpers = lua_gettop(L);
  g->base = lua_gettop(L);
  lua_getfield(L, g->helpers, "nentries");
  g->nentries = (int)lua_tointeger(L, -1);
  lua_pop(L, 1);
  for (int ops = 0; ops < MAX_OPS && g->p < g->end; ops++) {
    if (!lua_checkstack(L, 16)) break;
    while (depth(L, g) > MAX_STACK) lua_remove(L, g->base + 1);
    uint8_t op = u8(g);
    int top = depth(L, g);
    switch (op % 24) {
      case 0: lua_pushnil(L); break;
      case 1: lua_pushboolean(L, op & 0x80); break;
      case 2: push_integer(L, g, (op >> 5) % 3); break;
      case 3: push_float(L, g, (op >> 5) & 1); break;
      case 4: push_string(L, g, 0); break;
      case 5: push_string(L, g, op & 0x80 ? 2 : 1); break;
      case 6: lua_newtable(L); break;
      case 7: /* t[k] = v with t, k, v the top three */
        if (top >= 3 && lua_istable(L, -3) && !lua_isnil(L, -2) && !(lua_isnumber(L, -2) && lua_tonumber(L, -2) != lua_tonumber(L, -2)))
          lua_rawset(L, -3);
        else if (top >= 2)
          lua_pop(L, 2);
        break;
      case 8: /* append v to t */
        if (top >= 2 && lua_istable(L, -2)) lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
        else if (top >= 1) lua_pop(L, 1);
        break;
      case 9: /* t.<dict key> = v */
        if (top >= 2 && lua_istable(L, -2)) {
          lua_pushstring(L, dict[u8(g) % COUNT(dict)]);
          lua_insert(L, -2);
          lua_rawset(L, -3);
        } else if (top >= 1) {
          lua_pop(L, 1);
        }
        break;
      case 10: /* t[1] = t, or t.<key> = t */
        if (top >= 1 && lua_istable(L, -1)) {
          uint8_t b = u8(g);
          lua_pushvalue(L, -1);
          if (b & 1) lua_rawseti(L, -2, 1);
          else {
            lua_pushstring(L, dict[(b >> 1) % COUNT(dict)]);
            lua_insert(L, -2);
            lua_rawset(L, -3);
          }
        }
        break;
      case 11:
        if (top >= 1) nest(L, g);
        break;
      case 12: /* setmetatable(top, H.metas[i]) */
        if (top >= 1 && lua_istable(L, -1)) {
          lua_getfield(L, g->helpers, "metas");
          lua_rawgeti(L, -1, (lua_Integer)(u8(g) % (unsigned)lua_rawlen(L, -1)) + 1);
          lua_remove(L, -2);
          lua_setmetatable(L, -2);
        }
        break;
      case 13: /* dup the value i places below the top (0: the top) */
        if (top >= 1) lua_pushvalue(L, -1 - (int)(u8(g) % top));
        break;
      case 14:
        if (top >= 1) lua_pop(L, 1);
        break;
      case 15:
        if (top >= 2) lua_rotate(L, -2, 1);
        break;
      case 16:
      case 17: /* a fixture, or an object kept from an earlier call */
        lua_pushinteger(L, u8(g));
        call_helper(L, g, op % 24 == 16 ? "fixture" : "objget", 1);
        break;
      case 18: /* a junk value */
        lua_getfield(L, g->helpers, "junk");
        lua_rawgeti(L, -1, (lua_Integer)(u8(g) % (unsigned)lua_rawlen(L, -1)) + 1);
        lua_remove(L, -2);
        break;
      case 19: /* a registered Lua factory table */
        lua_getfield(L, g->helpers, "factories");
        lua_rawgeti(L, -1, (lua_Integer)(u8(g) % (unsigned)lua_rawlen(L, -1)) + 1);
        lua_remove(L, -2);
        break;
      case 20:
        lua_gc(L, LUA_GCCOLLECT);
        break;
      default: call_entry(L, g); break;
    }
  }
  return 0;
}

static lua_State *open_state(lmem *m) {
  lua_State *L = lua_newstate(capped_alloc, m);
  if (!L) abort();
  luaL_openlibs(L);
  /* As bindings/tfdev.c does: the core is linked in, the Lua files come from lua/. */
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  lua_pushcfunction(L, luaopen_tfdev_core);
  lua_setfield(L, -2, "tfdev.core");
  lua_pop(L, 1);
  lua_getglobal(L, "package");
  lua_pushstring(L, TFDEV_FUZZ_LUA_DIR "/?.lua;" TFDEV_FUZZ_LUA_DIR "/?/init.lua");
  lua_setfield(L, -2, "path");
  lua_pushstring(L, "");
  lua_setfield(L, -2, "cpath");
  lua_pop(L, 1);
  if (luaL_loadbuffer(L, prelude, sizeof prelude - 1, "=fuzz_prelude") != LUA_OK || lua_pcall(L, 0, 1, 0) != LUA_OK) {
    fprintf(stderr, "fuzz_lua_values: the prelude failed: %s\n", lua_tostring(L, -1));
    abort();
  }
  /* H.objget(i): an object kept from an earlier call (nil when there is none). */
  luaL_loadstring(L, "local H = ...; return function(i) local n = #H.objs; if n > 0 then return H.objs[i % n + 1] end end");
  lua_pushvalue(L, -2);
  lua_call(L, 1, 1);
  lua_setfield(L, -2, "objget");
  lua_setfield(L, LUA_REGISTRYINDEX, "fuzz.H");
  return L;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  lmem m = {0, (size_t)-1};
  lua_State *L = open_state(&m);
  m.limit = m.used + LUA_MEMORY_LIMIT;
  prog g = {data, data + size, 0, 0, 0, 0, getenv("TFDEV_FUZZ_TRACE") != NULL};
  lua_pushcfunction(L, run_program);
  lua_pushlightuserdata(L, &g);
  lua_pcall(L, 1, 0, 0); /* out of memory or a stack overflow end the program early; both are fine */
  lua_close(L);
  return 0;
}
