-- Hostile input and misuse: every case a reliability probe found crashing, hanging, leaking or misleading
-- (issue 13's table, by row id) now ends in a tfdev.error that says what is wrong.
local tfdev = require "tfdev"
local h = require "spec.support.helpers"

local run_script = h.run_child

local function session_with(graph, options)
  local s = tfdev.session(options)
  s:create(graph)
  return s
end

describe("D1: tables that contain themselves or nest too deep", function()
  it("are refused by tfdev.tensor, not walked until the C stack runs out", function()
    local t = {}
    t[1] = t
    h.raises("INVALID_ARGUMENT", "nested table is deeper than 8 levels", tfdev.tensor, t)
    local deep = {}
    local cur = deep
    for _ = 1, 300000 do
      local nxt = {}
      cur[1] = nxt
      cur = nxt
    end
    h.raises("INVALID_ARGUMENT", "nested table is deeper than 8 levels", tfdev.tensor, deep)
    h.raises("INVALID_ARGUMENT", "deeper than 8 levels", tfdev.tensor, { data = deep })
  end)

  it("are refused as a Const value, naming the node", function()
    local t = {}
    t[1] = t
    local s = tfdev.session()
    h.raises("INVALID_ARGUMENT", "node 'c': attr 'value': nested table is deeper than 8 levels", s.create, s,
      { node = { { name = "c", op = "Const", attr = { value = t, dtype = "float32" } } } })
    s:close()
  end)

  it("still convert at the deepest rank a tensor may have", function()
    local v = 1.5
    for _ = 1, 8 do v = { v } end
    local t = tfdev.tensor(v)
    assert.are.same({ 1, 1, 1, 1, 1, 1, 1, 1 }, t.shape)
  end)
end)

describe("D2: finalizers that use handles collected before them", function()
  it("get a FAILED_PRECONDITION error from a closed resource manager or factory", function()
    local results = {}
    local dev = tfdev.device.cpu { name = "/job:localhost/replica:0/task:0/device:CPU:0" }
    do
      -- Finalizers run in reverse order of creation: the holder's runs after the handles it uses are gone.
      local box = {}
      local holder = setmetatable({}, { __gc = function() -- luacheck: ignore
        results.rm = table.pack(pcall(box.rm.size, box.rm))
        results.factory = table.pack(pcall(function() return box.factory.name end))
        results.rm_str, results.f_str = tostring(box.rm), tostring(box.factory)
      end })
      box.rm, box.factory = dev:resource_manager(), tfdev.factory.get("CPU")
    end
    collectgarbage()
    collectgarbage()
    assert.is_false(results.rm[1])
    assert.are.equal("FAILED_PRECONDITION", results.rm[2].code)
    assert.matches("resource manager handle is closed", results.rm[2].message, 1, true)
    assert.is_false(results.factory[1])
    assert.matches("factory handle is closed", results.factory[2].message, 1, true)
    assert.are.equal("tfdev.resource_mgr(closed)", results.rm_str)
    assert.are.equal("tfdev.factory(closed)", results.f_str)
  end)

  it("do not crash the process when they run at script end", function()
    local out, code = run_script([[
      local tfdev = require "tfdev"
      -- Made first, so finalized last: everything below is collected by then.
      local later = setmetatable({}, { __gc = function()
        print("rm", pcall(function() return RM:size() end))
        print("factory", pcall(function() return F.name end))
        print("session", pcall(function() return S:run({}, "c") end))
        print("device", pcall(function() return D.name end))
      end })
      local dev = tfdev.device.cpu { name = "/job:localhost/replica:0/task:0/device:CPU:0" }
      local s = tfdev.session()
      RM, F, S, D = dev:resource_manager(), tfdev.factory.get("CPU"), s, dev
      S:create { node = { { name = "c", op = "Const", attr = { value = tfdev.tensor(1) } } } }
      print("end")
    ]])
    assert.are.equal(0, code, out)
    assert.matches("end\n", out, 1, true)
    assert.matches("rm\tfalse\tFAILED_PRECONDITION: resource manager handle is closed", out, 1, true)
    assert.matches("factory\tfalse\tFAILED_PRECONDITION: factory handle is closed", out, 1, true)
    assert.matches("session\tfalse\tCANCELLED: Session has been closed.", out, 1, true)
    assert.matches("device\tfalse\tFAILED_PRECONDITION: device handle is closed", out, 1, true)
  end)
end)

describe("D3: Cast to resource", function()
  it("is refused when the graph is created, so no handle is ever made of garbage", function()
    local s = tfdev.session()
    h.raises("INVALID_ARGUMENT", "node 'r' (Cast): DstT=resource is not allowed", s.create, s, { node = {
      { name = "x", op = "Const", attr = { value = tfdev.tensor(1.0) } },
      { name = "r", op = "Cast", input = { "x" }, attr = { DstT = "resource" } },
      { name = "read", op = "ReadVariableOp", input = { "r" }, attr = { dtype = "float32" } },
    } })
    s:close()
    local dev = s -- silence: the session is closed
    dev = tfdev.device.cpu { name = "/job:localhost/replica:0/task:0/device:CPU:0" }
    h.raises("INVALID_ARGUMENT", "DstT=resource is not allowed", dev.compute, dev, "Cast", { 1.0 }, { DstT = "resource" })
  end)
end)

describe("D4: ConcatV2 whose axis is not a scalar", function()
  local function graph(axis_node)
    return { node = {
      { name = "a", op = "Const", attr = { value = tfdev.tensor({ { 1, 2 } }, "float32") } },
      { name = "b", op = "Const", attr = { value = tfdev.tensor({ { 3, 4 } }, "float32") } },
      axis_node,
      { name = "cat", op = "ConcatV2", input = { "a", "b", "axis" } },
    } }
  end

  it("is refused at create when the axis is a constant", function()
    local s = tfdev.session()
    h.raises("INVALID_ARGUMENT", "node 'cat' (ConcatV2): axis must be a scalar, got shape [0]", s.create, s,
      graph { name = "axis", op = "Const", attr = { value = tfdev.tensor { dtype = "int32", shape = { 0 } } } })
    s:close()
  end)

  it("fails the run when the axis is computed or fed empty", function()
    local s = session_with(graph { name = "axis", op = "Placeholder", attr = { dtype = "int32" } })
    h.raises("INVALID_ARGUMENT", "node 'cat' (ConcatV2): axis must be a scalar, got a tensor of rank 1 with 0 elements",
      s.run, s, { axis = tfdev.tensor { dtype = "int32", shape = { 0 } } }, "cat")
    assert.are.same({ { 1, 2, 3, 4 } }, s:run({ axis = 1 }, "cat"):totable())
    s:close()
    -- A computed axis whose size is only known when the graph runs.
    local g = tfdev.graph()
    local a = g:const({ { 1, 2 } }, { dtype = "float32" })
    local dims = g:placeholder("int32", { 1 }, { name = "dims" })
    local axis = g:op("Fill", { dims, g:const(0, { dtype = "int32" }) }, { name = "axis" })
    g:op("ConcatV2", { a, a, axis }, { name = "cat" })
    s = session_with(g)
    h.raises("INVALID_ARGUMENT", "node 'cat' (ConcatV2): axis must be a scalar", s.run, s, { dims = { 0 } }, "cat")
    s:close()
  end)
end)

describe("D5: a Lua factory that resets the registry, then raises", function()
  after_each(function() tfdev.factory.reset() end)

  it("reports its own error with its own name", function()
    tfdev.factory.register("ACC", { name = "Resetter", create_devices = function()
      tfdev.factory.reset()
      error("boom")
    end }, 300)
    h.raises("UNKNOWN", "device factory 'Resetter' for type ACC: create_devices raised:", tfdev.factory.add_devices, {})
    assert.are.equal(-1, tfdev.factory.priority("ACC"))
  end)
end)

describe("H1: partial runs whose targets wait on feeds never given", function()
  local function graph()
    local g = tfdev.graph()
    local a = g:placeholder("float32", {}, { name = "a" })
    local b = g:placeholder("float32", {}, { name = "b" })
    g:op("Neg", { a }, { name = "neg_a" })
    local v = g:variable(0, { name = "v", dtype = "float32" })
    g:op("AssignVariableOp", { v.handle, b }, { name = "set_v", dtype = "float32" })
    return g
  end

  it("return at once from a call that fetches nothing, and from the last fetch", function()
    local s = session_with(graph())
    local p = s:prun_setup({ "a", "b" }, { "neg_a" }, { "set_v" })
    local t0 = tfdev.clock()
    s:prun(p, {}, nil)
    assert.are.equal(-3, s:prun(p, { a = 3 }, "neg_a"):item())
    assert.is_true(tfdev.clock() - t0 < 5)
    p:close() -- cancels set_v, still waiting for b
    s:close()
  end)

  it("finish once every input is fed and every output fetched, targets included", function()
    local s = session_with(graph())
    local p = s:prun_setup({ "a", "b" }, { "neg_a" }, { "set_v" })
    assert.are.equal(-1, s:prun(p, { a = 1 }, "neg_a"):item())
    s:prun(p, { b = 5 })
    assert.are.equal(5, s:run({}, "v/Read"):item())
    h.raises("INVALID_ARGUMENT", "No such partial run handle", s.prun, s, p, {}, nil)
    s:close()
  end)

  it("time out a finished run's blocked target with DEADLINE_EXCEEDED", function()
    local g = tfdev.graph()
    local q = g:fifo_queue({ "float32" }, { name = "q" })
    local a = g:placeholder("float32", {}, { name = "a" })
    g:op("Neg", { a }, { name = "neg_a" })
    g:dequeue(q, { name = "take" })
    local s = session_with(g, { operation_timeout_ms = 100 })
    local p = s:prun_setup({ "a" }, { "neg_a" }, { "take" })
    local t0 = tfdev.clock()
    h.raises("DEADLINE_EXCEEDED", "Timed out waiting for the partial run's targets (100 ms)", s.prun, s, p, { a = 2 },
      "neg_a")
    assert.is_true(tfdev.clock() - t0 < 5)
    assert.are.equal(-4, s:run({ a = 4 }, "neg_a"):item()) -- the session still works
    s:close()
  end)
end)

describe("H2: tensors with an empty dimension after a huge one", function()
  it("refuse totable() at once instead of building 2^40 empty tables", function()
    local t = tfdev.tensor { shape = { 2 ^ 40, 0 } }
    assert.are.equal(0, t:numel())
    local t0 = tfdev.clock()
    h.raises("RESOURCE_EXHAUSTED", "totable(): this tensor would need 1099511627777 Lua values", t.totable, t)
    local s = tostring(t)
    assert.are.equal("tfdev.tensor(float32, shape={1099511627776, 0}): [[], [], [], ..., [], [], []]", s)
    assert.is_true(tfdev.clock() - t0 < 5)
    assert.are.same({ {}, {} }, tfdev.tensor({ shape = { 2, 0 } }):totable())
  end)
end)

describe("L1: a Lua factory raising an error object that raises again", function()
  after_each(function() tfdev.factory.reset() end)

  it("is reported, naming the factory, and leaks no half-built session", function()
    local evil = setmetatable({}, { __tostring = function() error("tostring raised") end })
    tfdev.factory.register("ACC", { name = "Evil", create_devices = function() error(evil) end }, 300)
    for _ = 1, 20 do
      local err = h.raises("UNKNOWN", "a Lua factory failed, and reporting its error raised:", tfdev.session, {})
      assert.matches("tostring raised", err.message, 1, true)
    end
    local sneaky = setmetatable({}, { __index = function() error("index raised") end })
    tfdev.factory.register("ACC", { name = "Sneaky", create_devices = function() error(sneaky) end }, 400)
    h.raises("UNKNOWN", "index raised", tfdev.factory.add_devices, {})
  end)

  it("keeps the code and message of a tfdev.error", function()
    tfdev.factory.register("ACC", { name = "Picky", create_devices = function()
      error(tfdev.error.new("UNAVAILABLE", "no accelerator"))
    end }, 300)
    h.raises("UNAVAILABLE", "device factory 'Picky' for type ACC: create_devices raised: no accelerator",
      tfdev.session, {})
  end)
end)

describe("U1: shapes whose element count overflows", function()
  it("are refused, not multiplied past int64", function()
    h.raises("INVALID_ARGUMENT", "shape is too large", tfdev.tensor, { shape = { 2 ^ 40, 2 ^ 40 } })
    h.raises("INVALID_ARGUMENT", "shape is too large", tfdev.from_bytes, "float32", { 2 ^ 40, 2 ^ 40 }, "")
    local s = session_with { node = {
      { name = "x", op = "Placeholder", attr = { dtype = "float32" } },
      { name = "shape", op = "Placeholder", attr = { dtype = "int64" } },
      { name = "r", op = "Reshape", input = { "x", "shape" } },
    } }
    h.raises("INVALID_ARGUMENT", "node 'r' (Reshape): the shape's element count overflows", s.run, s,
      { x = tfdev.tensor { shape = { 0 } }, shape = tfdev.tensor({ 2 ^ 40, 2 ^ 40, 0 }, "int64") }, "r")
    assert.are.same({ 0, 2 ^ 40 }, s:run({ x = tfdev.tensor { shape = { 0 } },
      shape = tfdev.tensor({ 0, 2 ^ 40 }, "int64") }, "r").shape)
    s:close()
  end)

  it("in attrs are refused at create", function()
    local s = tfdev.session()
    h.raises("INVALID_ARGUMENT", "node 'f' (Fill): output 0 has shape [1099511627776,1099511627776]: shape is too large",
      s.create, s, { node = {
      { name = "f", op = "Fill", input = { "dims", "v" } },
      { name = "dims", op = "Const", attr = { value = tfdev.tensor({ 2 ^ 40, 2 ^ 40 }, "int64") } },
      { name = "v", op = "Const", attr = { value = tfdev.tensor(1.0) } },
    } })
    s:close()
  end)
end)

describe("M1-M3: partial-run handles", function()
  local function graph()
    local g = tfdev.graph()
    local a = g:placeholder("float32", { -1 }, { name = "a" })
    local b = g:placeholder("float32", {}, { name = "b" })
    g:op("Mul", { a, b }, { name = "c" })
    g:reshape(a, { 3 }, { name = "r" })
    g:op("Neg", { b }, { name = "neg_b" })
    return g
  end

  it("M1: belong to their session", function()
    local s1, s2 = session_with(graph()), session_with(graph())
    local p1 = s1:prun_setup({ "a", "b" }, { "c" })
    local p2 = s2:prun_setup({ "a", "b" }, { "c" })
    h.raises("INVALID_ARGUMENT", "this partial run belongs to another session", s2.prun, s2, p1, { a = { 1 } })
    assert.are.same({ 6 }, s2:prun(p2, { a = { 2 }, b = 3 }, "c"):totable()) -- s2's own run is untouched
    assert.are.same({ 4 }, s1:prun(p1, { a = { 2 }, b = 2 }, "c"):totable())
    s1:close()
    s2:close()
  end)

  it("M2: refuse a setup that lists an output or an input twice", function()
    local s = session_with(graph())
    h.raises("INVALID_ARGUMENT", "partial_run_setup lists output 'c:0' twice", s.prun_setup, s, { "a", "b" }, { "c", "c:0" })
    h.raises("INVALID_ARGUMENT", "partial_run_setup lists input 'a:0' twice", s.prun_setup, s, { "a", "a" }, { "c" })
    s:close()
  end)

  it("M3: report an aborted run as aborted, with the error that aborted it", function()
    local s = session_with(graph())
    local p = s:prun_setup({ "a", "b" }, { "r", "neg_b" })
    h.raises("INVALID_ARGUMENT", "node 'r' (Reshape)", s.prun, s, p, { a = { 1, 2 } }, "r")
    local err = h.raises("INVALID_ARGUMENT", "was aborted by an earlier error", s.prun, s, p, { b = 1 }, "neg_b")
    assert.matches("node 'r' (Reshape)", err.message, 1, true)
    s:close()
  end)
end)

describe("M4: a bad feed value", function()
  local function graph()
    local g = tfdev.graph()
    g:op("Neg", { g:placeholder("float32", { 2 }, { name = "x" }) }, { name = "y" })
    return g
  end

  it("is named in run, callables and partial runs", function()
    local s = session_with(graph())
    h.raises("INVALID_ARGUMENT", "feed 'x': element [2] is a string, expected a number (dtype float32)", s.run, s,
      { x = { 1, "two" } }, "y")
    local call = s:make_callable { feeds = { "x" }, fetches = "y" }
    h.raises("INVALID_ARGUMENT", "feed 'x': ragged nested table", call, { { 1 }, 2 })
    local p = s:prun_setup({ "x" }, { "y" })
    h.raises("INVALID_ARGUMENT", "feed 'x': element [1] is a boolean", s.prun, s, p, { x = { true, 1 } }, "y")
    assert.are.same({ -1, -2 }, s:prun(p, { x = { 1, 2 } }, "y"):totable())
    call:release()
    h.raises("FAILED_PRECONDITION", "this callable was released", call, { 1, 2 })
    s:close()
  end)
end)

describe("M5: long names", function()
  it("work at any length: nodes, fetches, targets, partitions, cost models", function()
    local long = string.rep("n", 600)
    local target = string.rep("t", 700)
    local g = { node = {
      { name = long, op = "Placeholder", attr = { dtype = "float32" } },
      { name = long .. "_neg", op = "Neg", input = { long }, device = "/device:CPU:1" },
      { name = target, op = "Identity", input = { long .. "_neg" } },
      { name = long .. "_sq", op = "Square", input = { long .. "_neg", "^" .. target } },
    } }
    local s = session_with(g, { device_count = { CPU = 2 }, build_cost_model = true })
    local out = s:run({ [long] = 3 }, { long .. "_sq", long .. "_neg:0" }, { target })
    assert.are.same({ 9, -3 }, { out[1]:item(), out[2]:item() })
    assert.are.equal("/job:localhost/replica:0/task:0/device:CPU:1", s:placement(long .. "_neg"))
    local call = s:make_callable { feeds = { long }, fetches = long .. "_sq", targets = { target } }
    assert.are.equal(16, call(-4):item())
    local p = s:prun_setup({ long }, { long .. "_sq" })
    assert.are.equal(25, s:prun(p, { [long] = 5 }, long .. "_sq"):item())
    local costs = s:export_cost_models()
    local seen = false
    for _, rows in pairs(costs) do
      for _, row in ipairs(rows) do seen = seen or row.node == long .. "_sq" end
    end
    assert.is_true(seen)
    h.raises("NOT_FOUND", "the graph has no node named '" .. string.rep("x", 900) .. "'", s.run, s, {},
      string.rep("x", 900))
    s:close()
  end)

  it("too long for a resource handle are refused at create, naming the node", function()
    local s = tfdev.session()
    local name = string.rep("v", 200)
    h.raises("INVALID_ARGUMENT", "node '" .. name .. "' (VarHandleOp): the resource's name is 200 bytes, at most 127",
      s.create, s, { node = { { name = name, op = "VarHandleOp", attr = { dtype = "float32" } } } })
    s:close()
  end)
end)

describe("M6: errors in the user's terms", function()
  it("names a closed device as closed", function()
    local d = tfdev.device.cpu { name = "/job:localhost/replica:0/task:0/device:CPU:0" }
    d:close()
    h.raises("FAILED_PRECONDITION", "tfdev.device_set: element 1 is a closed tfdev.device", tfdev.device_set, { d })
    h.raises("FAILED_PRECONDITION", "device handle is closed", d.attributes, d)
  end)

  it("gives the allowed range of a priority", function()
    h.raises("INVALID_ARGUMENT", "priority must be an integer in [-1000000, 1000000], got 1000000000",
      tfdev.factory.register, "ACC", { create_devices = function() return {} end }, 1000000000)
    h.raises("INVALID_ARGUMENT", "priority must be an integer in [-1000000, 1000000], got 1.5",
      tfdev.factory.register, "ACC", { create_devices = function() return {} end }, 1.5)
  end)

  it("refuses names with NUL bytes instead of cutting them short", function()
    local s = tfdev.session()
    h.raises("INVALID_ARGUMENT", "node 1: name contains a NUL byte", s.create, s,
      { node = { { name = "a\0b", op = "NoOp" } } })
    s:create { node = { { name = "a", op = "Const", attr = { value = tfdev.tensor(1.0) } } } }
    h.raises("INVALID_ARGUMENT", "fetches contains a NUL byte", s.run, s, {}, "a\0:0")
    h.raises("INVALID_ARGUMENT", "feed name contains a NUL byte", s.run, s, { ["a\0x"] = 1 }, "a")
    h.raises("INVALID_ARGUMENT", "dtype contains a NUL byte", tfdev.tensor, { 1 }, "float32\0junk")
    h.raises("INVALID_ARGUMENT", "device type contains a NUL byte", tfdev.factory.priority, "CPU\0x")
    h.fails("INVALID_ARGUMENT", "contains a NUL byte", tfdev.device_name.parse("/cpu:0\0/gpu:1"))
    s:close()
  end)

  it("never names the runtime's own nodes in a user's error", function()
    local s = session_with({ node = {
      { name = "x", op = "Placeholder", attr = { dtype = "float32" } },
      { name = "y", op = "Neg", input = { "x" }, device = "/device:CPU:1" },
    } }, { device_count = { CPU = 2 } })
    local err = h.raises("INVALID_ARGUMENT", "You must feed a value for placeholder tensor 'x'", s.run, s, {}, "y")
    assert.is_nil(err.message:find("_recv", 1, true))
    assert.is_nil(err.message:find("_send", 1, true))
    h.raises("NOT_FOUND", "target '_recv_t_x_0_1'", s.run, s, { x = 1 }, nil, { "_recv_t_x_0_1" })
    h.raises("NOT_FOUND", "the graph has no node named '_feed_0'", s.run, s, { x = 1 }, "_feed_0")
    s:close()
  end)
end)

describe("eager ops that block", function()
  it("take a timeout like runs do", function()
    local d = tfdev.device.cpu { name = "/job:localhost/replica:0/task:0/device:CPU:0" }
    local q = d:compute("FIFOQueueV2", {}, { component_types = { "float32" }, shared_name = "eager_q" })
    local t0 = tfdev.clock()
    h.raises("DEADLINE_EXCEEDED", "Timed out waiting for the op (50 ms)", d.compute, d, "QueueDequeueV2", { q },
      { component_types = { "float32" } }, { timeout_ms = 50 })
    assert.is_true(tfdev.clock() - t0 < 5)
    d:compute("QueueEnqueueV2", { q, tfdev.tensor(2.5) }, {}, { timeout_ms = 50 })
    assert.are.equal(2.5, d:compute("QueueDequeueV2", { q }, { component_types = { "float32" } }):item())
    h.raises("INVALID_ARGUMENT", "unknown compute option", d.compute, d, "Neg", { 1 }, {}, { deadline = 1 })
  end)
end)

describe("Lua code run while arguments are read", function()
  -- A spec table whose metamethod closes `victim` the moment tfdev.tensor reads the spec.
  local function closer(victim)
    return setmetatable({}, { __index = function() victim:close() end })
  end

  local function graph()
    local g = tfdev.graph()
    g:op("Neg", { g:placeholder("float32", nil, { name = "x" }) }, { name = "y" })
    return g
  end

  it("that closes the session is reported, in run, prun, callables and make_callable", function()
    local s = session_with(graph())
    h.raises("CANCELLED", "Session has been closed.", s.run, s, { x = closer(s) }, "y")
    s = session_with(graph())
    local p = s:prun_setup({ "x" }, { "y" })
    h.raises("CANCELLED", "Session has been closed.", s.prun, s, p, { x = closer(s) }, "y")
    s = session_with(graph())
    local call = s:make_callable { feeds = { "x" }, fetches = "y" }
    h.raises("CANCELLED", "Session has been closed.", call, closer(s))
    s = session_with(graph())
    local spec = setmetatable({}, { __index = function(_, k)
      if k == "feeds" then s:close() return { "x" } end
      if k == "fetches" then return "y" end
    end })
    h.raises("CANCELLED", "Session has been closed.", s.make_callable, s, spec)
    s = tfdev.session()
    h.raises("CANCELLED", "Session has been closed.", s.create, s,
      { node = { { name = "c", op = "Const", attr = { value = closer(s) } } } })
  end)

  it("that closes a tensor fed earlier, or the device, is reported", function()
    local s = session_with { node = {
      { name = "a", op = "Placeholder", attr = { dtype = "float32" } },
      { name = "b", op = "Placeholder", attr = { dtype = "float32" } },
      { name = "c", op = "AddV2", input = { "a", "b" } },
    } }
    local t = tfdev.tensor(1.0)
    local err = h.raises("FAILED_PRECONDITION", "the tensor handle is closed", s.run, s, { a = t, b = closer(t) }, "c")
    assert.matches("feed '", err.message, 1, true)
    s:close()
    local d = tfdev.device.cpu { name = "/job:localhost/replica:0/task:0/device:CPU:0" }
    h.raises("FAILED_PRECONDITION", "device handle is closed", d.compute, d, "Neg", { closer(d) })
    local set = tfdev.device_set { tfdev.device.cpu { name = "/job:localhost/replica:0/task:0/device:CPU:1" } }
    h.raises("FAILED_PRECONDITION", "device set is closed", set.find_matching, set,
      setmetatable({}, { __index = function() set:close() end }))
  end)
end)

describe("requests for more than a script should have", function()
  it("host tensors come from a limited allocator (1 GiB unless raised)", function()
    assert.are.equal(2 ^ 30, tfdev.host_memory_limit())
    h.raises("RESOURCE_EXHAUSTED", "OOM when allocating 3200000000 bytes on allocator 'lua_host'", tfdev.tensor,
      { dtype = "float32", shape = { 40000, 20000 } })
    local before = tfdev.host_allocator_stats().bytes_in_use
    local t = tfdev.tensor { dtype = "float64", shape = { 1000 } }
    assert.are.equal(before + 8000, tfdev.host_allocator_stats().bytes_in_use)
    t:close()
    assert.are.equal(2 ^ 30, tfdev.host_memory_limit(4096))
    h.raises("RESOURCE_EXHAUSTED", "limit 4096 bytes", tfdev.tensor, { dtype = "float32", shape = { 2000 } })
    h.raises("RESOURCE_EXHAUSTED", "limit 4096 bytes", tfdev.from_bytes, "float32", { 2000 }, string.rep("\0", 8000))
    assert.are.equal(4096, tfdev.host_memory_limit(2 ^ 30))
    h.raises("INVALID_ARGUMENT", "host memory limit must be an integer >= 0", tfdev.host_memory_limit, -1)
  end)

  it("tensors of a few KiB dropped in a loop are collected as it runs, not piled up", function()
    collectgarbage()
    local before = tfdev.host_allocator_stats().bytes_in_use
    local peak = 0
    for _ = 1, 4000 do -- 31 MiB in all: the collector is told of each 8 KiB buffer
      local t = tfdev.tensor { dtype = "float32", shape = { 2048 } }
      peak = math.max(peak, tfdev.host_allocator_stats().bytes_in_use - before)
      assert.are.equal(2048, t:numel())
    end
    assert.is_true(peak < 4 * 2 ^ 20, string.format("%.1f MiB of dropped tensors were alive at once", peak / 2 ^ 20))
  end)

  it("device counts and thread pools are bounded", function()
    h.raises("INVALID_ARGUMENT", "option device_count.CPU must be an integer in [0, 1024], got 1048576",
      tfdev.session, { device_count = { CPU = 1048576 } })
    h.raises("INVALID_ARGUMENT", "option intra_op_threads must be an integer in [0, 1024], got 1048576",
      tfdev.session, { intra_op_threads = 1048576, use_global_threadpool = false })
    h.raises("INVALID_ARGUMENT", "64 CPU devices with own pools of 1000 threads would start 64000 threads: at most 1024",
      tfdev.session, { device_count = { CPU = 64 }, intra_op_threads = 1000, use_global_threadpool = false })
    h.raises("INVALID_ARGUMENT", "threads must be an integer in [1, 1024]", tfdev.device.cpu,
      { name = "/job:localhost/replica:0/task:0/device:CPU:0", threads = 5000 })
  end)
end)

describe("the graph builder", function()
  it("gives assign_add's plain delta the variable's dtype", function()
    local g = tfdev.graph()
    local v = g:variable({ 1, 2 }, { name = "v", dtype = "float32" })
    local add = g:assign_add(v, { 10, 20 })
    local s = session_with(g)
    s:run({}, nil, { v.initializer })
    s:run({}, nil, { add })
    assert.are.same({ 11, 22 }, s:run({}, "v/Read"):totable())
    s:close()
  end)
end)
