-- Lua code that tfdev calls back (Lua ops' kernels and shape functions, graph_def's weights reader)
-- cannot hang a step or escape into the runtime: a close or wait of what it runs inside is refused,
-- any error value it raises becomes a tfdev.error naming the node or the callback, tostring() of a
-- future only looks, and finalizers run by lua_close after tfdev's state are refused, leaking nothing.
-- Cases that hung before run in a child tfdev process under `timeout`, so a hang fails the test.
local tfdev = require "tfdev"
local h = require "spec.support.helpers"

-- What every child script starts with: show(label, pcall(...)) prints the label and "ok" with the
-- results, or the tfdev.error as "CODE: message" (anything else is said to be no tfdev.error).
local prelude = [[
tfdev = require "tfdev"
function show(label, ok, ...)
  if ok then
    local out = { label, "ok" }
    for i = 1, select("#", ...) do out[#out + 1] = tostring((select(i, ...))) end
    print(table.concat(out, "\t"))
  else
    local e = ...
    print(label .. "\t" .. (tfdev.error.is(e) and (e.code .. ": " .. e.message) or ("no tfdev.error: " .. tostring(e))))
  end
end
X = tfdev.tensor({ 1, 2 }, "float32")
function graph(op, name)
  return { node = { { name = "x", op = "Placeholder", attr = { dtype = "float32" } },
                    { name = name or "k", op = op, input = { "x" } } } }
end
function node(op, name) -- one more node of op over x, for extend
  return { node = { { name = name, op = op, input = { "x" } } } }
end
]]

-- Runs prelude .. src in a fresh tfdev process, killed after 60 s (a hang is exit status 124);
-- returns its output and exit status. `before` runs before the prelude, so before tfdev opens.
local function run_child(src, before)
  return h.run_child((before or "") .. "\n" .. prelude .. src)
end

local function has(out, line)
  assert(out:find(line, 1, true), string.format("output lacks %q:\n%s", line, out))
end

describe("Lua code run inside a step", function()
  it("cannot close its own session: FAILED_PRECONDITION naming the node and the call, and the step goes on", function()
    local out, code = run_child([[
      local S
      tfdev.op.register { name = "CloseOwnSession", inputs = 1, outputs = 1, kernel = function(x)
        show("close", pcall(S.close, S))
        return x
      end }
      tfdev.op.register { name = "CloseOwnUncaught", inputs = 1, outputs = 1, kernel = function(x)
        S:close()
        return x
      end }
      S = tfdev.session()
      S:create(graph("CloseOwnSession"))
      show("run", pcall(S.run, S, { x = X }, "k"))
      S:extend(node("CloseOwnUncaught", "u"))
      show("uncaught", pcall(S.run, S, { x = X }, "u"))
      local c = S:make_callable { feeds = { "x" }, fetches = "k" }
      show("callable", pcall(c, X))
      show("run_async", pcall(function() return S:run_async({ x = X }, "k"):result() end))
      show("close after", pcall(S.close, S))
      print(tostring(S))
    ]])
    assert.are.equal(0, code, out)
    has(out, "close\tFAILED_PRECONDITION: session:close() called from the Lua kernel of node 'k' (op CloseOwnSession), "
      .. "which runs inside this session's own call (a run, a graph's creation, a future's wait): the call would wait "
      .. "for that to end, and it waits for this code; close the session after that call returns")
    has(out, "run\tok\ttfdev.tensor(float32, shape={2}): [1, 2]")
    has(out, "uncaught\tFAILED_PRECONDITION: node 'u' (CloseOwnUncaught): Lua kernel failed: session:close() called "
      .. "from the Lua kernel of node 'u' (op CloseOwnUncaught)")
    has(out, "callable\tok\ttfdev.tensor(float32, shape={2}): [1, 2]")
    has(out, "run_async\tok\ttfdev.tensor(float32, shape={2}): [1, 2]")
    has(out, "close after\tok\ntfdev.session(closed)")
    local _, refused = out:gsub("close\tFAILED_PRECONDITION", "")
    assert.are.equal(3, refused, out) -- run, callable, and the future's wait
  end)

  it("cannot close, wait for or take the result of its own future; it may poll, wait with a timeout or cancel", function()
    local out, code = run_child([[
      local F
      tfdev.op.register { name = "OwnFuture", inputs = 1, outputs = 1, kernel = function(x)
        show("ready", pcall(F.ready, F))
        show("wait 10", pcall(F.wait, F, 10))
        show("wait", pcall(F.wait, F))
        show("result", pcall(F.result, F))
        show("close", pcall(F.close, F))
        print("tostring", tostring(F))
        return x
      end }
      tfdev.op.register { name = "CancelOwnFuture", inputs = 1, outputs = 1, kernel = function(x)
        F:cancel()
        return x
      end }
      local S = tfdev.session()
      S:create(graph("OwnFuture"))
      F = S:run_async({ x = X }, "k")
      show("outer result", pcall(F.result, F))
      local c = S:make_callable { feeds = { "x" }, fetches = "k" }
      F = c:run_async(X)
      show("callable result", pcall(F.result, F))
      S:extend(node("CancelOwnFuture", "c"))
      F = S:run_async({ x = X }, "c")
      show("cancelled", pcall(F.result, F))
      show("close", pcall(S.close, S))
    ]])
    assert.are.equal(0, code, out)
    has(out, "ready\tok\tfalse")
    has(out, "wait 10\tok\tfalse")
    has(out, "wait\tFAILED_PRECONDITION: future:wait() called from the Lua kernel of node 'k' (op OwnFuture), which "
      .. "runs inside this future's own step: the call would wait for that to end, and it waits for this code; give it "
      .. "a timeout")
    has(out, "result\tFAILED_PRECONDITION: future:result() called from the Lua kernel of node 'k' (op OwnFuture)")
    has(out, "close\tFAILED_PRECONDITION: future:close() called from the Lua kernel of node 'k' (op OwnFuture), which "
      .. "runs inside this future's own step: the call would wait for that to end, and it waits for this code; cancel "
      .. "it instead")
    has(out, "tostring\ttfdev.future(pending)")
    has(out, "outer result\tok\ttfdev.tensor(float32, shape={2}): [1, 2]")
    has(out, "callable result\tok\ttfdev.tensor(float32, shape={2}): [1, 2]")
    has(out, "cancelled\tCANCELLED: Run was cancelled.")
    has(out, "close\tok")
  end)

  it("cannot reset the session factory; a shape function cannot close the session creating its graph", function()
    local out, code = run_child([[
      local S
      tfdev.op.register { name = "ResetFactory", inputs = 1, outputs = 1, kernel = function(x)
        show("reset", pcall(tfdev.session_factory.reset))
        return x
      end }
      tfdev.op.register { name = "ShapeCloses", inputs = 1, outputs = 1,
        shape_fn = function(inputs)
          show("shape close", pcall(S.close, S))
          show("shape reset", pcall(tfdev.session_factory.reset))
          return { { dtype = inputs[1].dtype } }
        end,
        kernel = function(x) return x end }
      tfdev.op.register { name = "ShapeClosesUncaught", inputs = 1, outputs = 1,
        shape_fn = function() S:close() end, kernel = function(x) return x end }
      S = tfdev.session()
      S:create(graph("ResetFactory"))
      show("run", pcall(S.run, S, { x = X }, "k"))
      show("run again", pcall(S.run, S, { x = X }, "k"))
      S = tfdev.session()
      show("create", pcall(S.create, S, graph("ShapeCloses")))
      show("run shaped", pcall(S.run, S, { x = X }, "k"))
      S = tfdev.session()
      show("create uncaught", pcall(S.create, S, graph("ShapeClosesUncaught")))
      show("reset after", pcall(tfdev.session_factory.reset))
    ]])
    assert.are.equal(0, code, out)
    has(out, "reset\tFAILED_PRECONDITION: session_factory.reset() called from the Lua kernel of node 'k' (op "
      .. "ResetFactory), which runs inside a call of a session it would close: the call would wait for that to end, and "
      .. "it waits for this code; reset after that call returns")
    has(out, "run\tok\ttfdev.tensor(float32, shape={2}): [1, 2]")
    has(out, "run again\tok")
    has(out, "shape close\tFAILED_PRECONDITION: session:close() called from the shape function of node 'k' (op "
      .. "ShapeCloses)")
    has(out, "shape reset\tFAILED_PRECONDITION: session_factory.reset() called from the shape function of node 'k'")
    has(out, "create\tok")
    has(out, "run shaped\tok\ttfdev.tensor(float32, shape={2}): [1, 2]")
    has(out, "create uncaught\tFAILED_PRECONDITION: node 'k' (ShapeClosesUncaught): shape function: session:close() "
      .. "called from the shape function of node 'k' (op ShapeClosesUncaught)")
    has(out, "reset after\tok")
  end)
end)

describe("errors raised by Lua kernels and shape functions", function()
  it("of any type become tfdev.errors naming the node, and every later close returns", function()
    local out, code = run_child([[
      local values = {
        raising = setmetatable({}, { __tostring = function() error("tostring raised") end }),
        not_string = setmetatable({}, { __tostring = function() return {} end }),
        userdata = io.stdout,
        table_message = tfdev.error.new("ABORTED", "replaced below"),
        plain = "a plain string",
      }
      values.table_message.message = {}
      local S = tfdev.session()
      S:create { node = { { name = "x", op = "Placeholder", attr = { dtype = "float32" } } } }
      for _, name in ipairs { "raising", "not_string", "nil", "userdata", "table_message", "plain" } do
        tfdev.op.register { name = "Raise_" .. name, inputs = 1, outputs = 1, kernel = function() error(values[name]) end }
        S:extend(node("Raise_" .. name, name))
        show(name, pcall(S.run, S, { x = X }, name))
      end
      tfdev.op.register { name = "ShapeRaises", inputs = 1, outputs = 1, kernel = function(x) return x end,
        shape_fn = function() error(values.raising) end }
      local S2 = tfdev.session()
      show("shape", pcall(S2.create, S2, graph("ShapeRaises")))
      S:extend { node = { { name = "fine", op = "Neg", input = { "x" } } } }
      show("fine", pcall(S.run, S, { x = X }, "fine"))
      show("close", pcall(S.close, S))
      show("close 2", pcall(S2.close, S2))
    ]])
    assert.are.equal(0, code, out)
    has(out, "raising\tUNKNOWN: node 'raising' (Raise_raising): Lua kernel failed: a table error value whose "
      .. "__tostring raised: ")
    has(out, "tostring raised\n")
    has(out, "not_string\tUNKNOWN: node 'not_string' (Raise_not_string): Lua kernel failed: a table error value whose "
      .. "__tostring raised: '__tostring' must return a string")
    has(out, "nil\tUNKNOWN: node 'nil' (Raise_nil): Lua kernel failed: nil")
    has(out, "userdata\tUNKNOWN: node 'userdata' (Raise_userdata): Lua kernel failed: file (0x")
    has(out, "table_message\tABORTED: node 'table_message' (Raise_table_message): Lua kernel failed: a tfdev.error "
      .. "whose message is a table")
    has(out, "plain\tUNKNOWN: node 'plain' (Raise_plain): Lua kernel failed: ")
    has(out, "a plain string")
    has(out, "shape\tINVALID_ARGUMENT: node 'k' (ShapeRaises): shape function: a table error value whose __tostring "
      .. "raised: ")
    has(out, "fine\tok\ttfdev.tensor(float32, shape={2}): [-1, -2]")
    has(out, "close\tok")
    has(out, "close 2\tok")
  end)

  it("keep a tfdev.error's code from a shape function", function()
    tfdev.op.register { name = "ShapeRefuses", inputs = 1, outputs = 1, kernel = function(x) return x end,
      shape_fn = function() error(tfdev.error.new("UNIMPLEMENTED", "no shape for rank 3")) end }
    local s <close> = tfdev.session()
    h.raises("UNIMPLEMENTED", "node 'k' (ShapeRefuses): shape function: no shape for rank 3", s.create, s, { node = {
      { name = "x", op = "Placeholder", attr = { dtype = "float32" } },
      { name = "k", op = "ShapeRefuses", input = { "x" } } } })
  end)
end)

describe("graph_def's weights callback", function()
  local json = [[{"format":"graph-model","modelTopology":{"node":[{"name":"w","op":"Const",]] ..
    [["attr":{"dtype":{"type":"DT_FLOAT"}}}]},"weightsManifest":[{"paths":["w.bin"],]] ..
    [["weights":[{"name":"w","shape":[2],"dtype":"float32"}]}]}]]

  it("reports any error value it raises as a tfdev.error naming the callback and the file", function()
    local evil = setmetatable({}, { __tostring = function() error("tostring raised") end })
    for _ = 1, 20 do -- the half-built model is freed each time (the sanitizer builds check)
      local err = h.raises("INVALID_ARGUMENT", "weight file w.bin: options.weights raised: a table error value whose "
        .. "__tostring raised: ", tfdev.graph_def.parse, json, { weights = function() error(evil) end })
      assert.matches("tostring raised", err.message, 1, true)
    end
    h.raises("INVALID_ARGUMENT", "weight file w.bin: options.weights raised: nil", tfdev.graph_def.parse, json,
      { weights = function() error(nil) end })
    h.raises("UNAVAILABLE", "weight file w.bin: options.weights raised: no archive here", tfdev.graph_def.parse, json,
      { weights = function() error(tfdev.error.new("UNAVAILABLE", "no archive here")) end })
    local g = tfdev.graph_def.parse(json, { weights = function() return string.pack("<ff", 1.5, 2.5) end })
    assert.are.same({ 1.5, 2.5 }, g.node[1].attr.value:totable())
  end)
end)

describe("tostring() of a future", function()
  after_each(function() collectgarbage() end)

  it("only looks: a pending step's Lua kernel still runs in the wait that follows", function()
    local ran = 0
    tfdev.op.register { name = "PeekedAt", inputs = 1, outputs = 1, kernel = function(x)
      ran = ran + 1
      return x
    end }
    local s <close> = tfdev.session()
    s:create { node = { { name = "x", op = "Placeholder", attr = { dtype = "float32" } },
                        { name = "k", op = "PeekedAt", input = { "x" } } } }
    local f <close> = s:run_async({ x = tfdev.tensor({ 1, 2 }, "float32") }, "k")
    -- The Lua kernel waits for a wait or a poll to run it: until then the run cannot end.
    for _ = 1, 10 do assert.are.equal("tfdev.future(pending)", tostring(f)) end
    assert.are.equal(0, ran)
    assert.are.same({ 1, 2 }, f:result():totable())
    assert.are.equal(1, ran)
    assert.are.equal("tfdev.future(done)", tostring(f))
  end)

  it("says done once a step ended on the pools, before anyone waited", function()
    local s <close> = tfdev.session()
    s:create(h.neg_square_graph())
    local f <close> = s:run_async({ x = tfdev.tensor({ 3 }, "float32") }, "y")
    local deadline = tfdev.clock() + 30
    while tostring(f) ~= "tfdev.future(done)" and tfdev.clock() < deadline do end
    assert.are.equal("tfdev.future(done)", tostring(f))
    assert.is_true(f:ready())
    assert.are.same({ -9 }, f:result():totable())
    f:close()
    assert.are.equal("tfdev.future(done)", tostring(f))
  end)
end)

describe("finalizers run by lua_close", function()
  it("after tfdev's state get FAILED_PRECONDITION from everything that would make an object", function()
    local out, code = run_child([[
      print("end")
    ]], [[
      -- Made before tfdev opens, so finalized after tfdev's state at close.
      local late = setmetatable({}, { __gc = function()
        show("tensor", pcall(tfdev.tensor, { 1, 2 }))
        show("from_bytes", pcall(tfdev.from_bytes, "float32", { 1 }, "\0\0\0\0"))
        show("session", pcall(tfdev.session))
        show("device", pcall(tfdev.device.cpu, { name = "/job:localhost/replica:0/task:0/device:CPU:0" }))
        show("device_set", pcall(tfdev.device_set, {}))
        show("device_mgr", pcall(tfdev.device_mgr, {}))
        show("factory", pcall(tfdev.factory.get, "CPU"))
        show("parse name", pcall(tfdev.device_name.parse, "/job:a"))
        show("graph_def", pcall(tfdev.graph_def.parse, "x"))
        show("op", pcall(tfdev.op.register, { name = "TooLate", kernel = print }))
        show("memory", pcall(tfdev.host_memory_limit))
      end })
    ]])
    assert.are.equal(0, code, out)
    has(out, "end\n")
    local closed = "FAILED_PRECONDITION: tfdev is closed in this Lua state: lua_close collected its state, and a "
      .. "finalizer run after that cannot make or use tfdev objects (nothing would ever free them)"
    for _, what in ipairs { "tensor", "from_bytes", "session", "device", "device_set", "device_mgr", "factory",
                            "parse name", "graph_def", "op", "memory" } do
      has(out, what .. "\t" .. closed .. "\n")
    end
  end)

  it("before tfdev's state may make objects, which tfdev's state closes when it goes", function()
    local out, code = run_child([[
      tfdev.op.register { name = "AtClose", inputs = 1, outputs = 1, kernel = function(x) return x end }
      -- Made after tfdev opened, so finalized first. Lua finalizes nothing made while it closes.
      local early = setmetatable({}, { __gc = function()
        show("early", pcall(function()
          made.t = tfdev.tensor({ 1, 2 }, "float32")
          made.s = tfdev.session()
          made.s:create(graph("AtClose"))
          made.f = made.s:run_async({ x = made.t }, "k")
          made.d = tfdev.device.cpu { name = "/job:localhost/replica:0/task:0/device:CPU:7" }
          return made.t, made.s, made.f, made.d
        end))
      end })
      print("end")
    ]], [[
      made = {}
      -- Made before tfdev opens, so finalized after tfdev's state: it sees what the one above made.
      local late = setmetatable({}, { __gc = function()
        print("late sees", tostring(made.t), tostring(made.s), tostring(made.f), tostring(made.d))
      end })
    ]])
    assert.are.equal(0, code, out)
    has(out, "early\tok\ttfdev.tensor(float32, shape={2}): [1, 2]\ttfdev.session(1 devices)\ttfdev.future(pending)\t")
    has(out, "late sees\ttfdev.tensor(closed)\ttfdev.session(closed)\ttfdev.future(closed)\ttfdev.device(closed)\n")
  end)
end)
