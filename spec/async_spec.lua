-- Asynchronous runs (session:run_async, callable:run_async, tfdev.future) and writing tensors in place
-- (tensor:copy_from, tensor:fill), as a frame loop uses them.
local tfdev = require "tfdev"
local h = require "spec.support.helpers"

-- y = -x; a queue whose dequeue blocks while it is empty; "after_take" = -x once a dequeue has run.
local function graph()
  local g = tfdev.graph()
  local x = g:placeholder("float32", { -1 }, { name = "x" })
  g:op("Neg", { x }, { name = "y" })
  local q = g:fifo_queue({ "float32" }, { name = "q" })
  local v = g:placeholder("float32", {}, { name = "v" })
  g:enqueue(q, { v }, { name = "enqueue" })
  local took = g:dequeue(q, { name = "take" })
  g:op("Identity", { took }, { name = "taken" })
  g:op("Neg", { x }, { name = "after_take", control_inputs = { "take" } })
  return g
end

local function new_session(options)
  local s = tfdev.session(options)
  s:create(graph())
  return s
end

describe("session:run_async", function()
  it("returns a future whose result is what run returns", function()
    local s <close> = new_session()
    local f = s:run_async({ x = { 1, -2, 3 } }, "y")
    assert.are.equal("tfdev.future", getmetatable(f).__name)
    assert.is_true(f:wait(10000))
    assert.is_true(f:ready())
    assert.are.same({ -1, 2, -3 }, f:result():totable())
    assert.are.equal(f:result(), f:result()) -- the same values on every call
    local list = s:run_async({ x = { 5 } }, { "y", "x" }):result()
    assert.are.same({ { -5 }, { 5 } }, { list[1]:totable(), list[2]:totable() })
    local out, meta = s:run_async({ x = { 1 } }, { "y" }, nil, { trace = true }):result()
    assert.are.same({ -1 }, out[1]:totable())
    assert.is_true(meta.step_id > 0 and #meta.step_stats.dev_stats >= 1)
    assert.are.equal(0, select("#", s:run_async({ v = 1 }, nil, { "enqueue" }):result()))
  end)

  it("waits in result() when the run has not ended", function()
    local s <close> = new_session()
    local f = s:run_async({}, "taken")
    assert.is_false(f:ready())
    assert.is_false(f:wait(20))
    assert.matches("pending", tostring(f))
    s:run({ v = 7 }, nil, { "enqueue" }) -- another run feeds the queue: the blocked step goes on
    assert.are.equal(7, f:result():item())
    assert.matches("done", tostring(f))
  end)

  it("reports errors through the future with the codes and texts run raises", function()
    local s <close> = new_session()
    local blocking = h.raises("INVALID_ARGUMENT", "You must feed a value for placeholder tensor 'x'", s.run, s, {}, "y")
    local f = s:run_async({}, "y")
    assert.is_true(f:wait())
    local err = h.raises("INVALID_ARGUMENT", "You must feed a value for placeholder tensor 'x'", f.result, f)
    assert.are.equal(blocking.message, err.message)
    h.raises("INVALID_ARGUMENT", "You must feed a value", f.result, f) -- again, the same error
    -- What is wrong before the step starts is raised by run_async itself, as run raises it.
    local before = h.raises("NOT_FOUND", "nope", s.run, s, {}, "nope")
    local now = h.raises("NOT_FOUND", "nope", s.run_async, s, {}, "nope")
    assert.are.equal(before.message, now.message)
    h.raises("INVALID_ARGUMENT", "unknown run option 'bogus'", s.run_async, s, {}, "y", nil, { bogus = 1 })
  end)

  it("cancels a step blocked on an empty queue; the session keeps working", function()
    local s <close> = new_session()
    local f = s:run_async({}, "taken")
    assert.is_false(f:wait(30))
    f:cancel()
    assert.is_true(f:wait(10000))
    h.raises("CANCELLED", "Run was cancelled.", f.result, f)
    f:cancel() -- after the end: nothing changes
    h.raises("CANCELLED", "Run was cancelled.", f.result, f)
    s:run({ v = 3 }, nil, { "enqueue" })
    assert.are.equal(3, s:run({}, "taken"):item())
  end)

  it("ends a step past its timeout_ms with DEADLINE_EXCEEDED", function()
    local s <close> = new_session()
    local f = s:run_async({}, "taken", nil, { timeout_ms = 40 })
    assert.is_true(f:wait(10000))
    h.raises("DEADLINE_EXCEEDED", "Timed out waiting for the step (40 ms)", f.result, f)
    local polled = s:run_async({}, "taken", nil, { timeout_ms = 20 })
    local t0 = tfdev.clock()
    while not polled:ready() do assert.is_true(tfdev.clock() - t0 < 10) end -- ready() enforces it too
    h.raises("DEADLINE_EXCEEDED", "Timed out waiting for the step (20 ms)", polled.result, polled)
  end)

  it("cancels and waits for a pending future that is collected or closed", function()
    local s <close> = new_session()
    do
      local f <close> = s:run_async({}, "taken")
      assert.is_false(f:ready())
    end
    local g = s:run_async({}, "taken")
    assert.is_false(g:ready())
    g = nil -- luacheck: ignore
    collectgarbage()
    collectgarbage()
    -- Neither took the element: both steps ended before it was enqueued.
    s:run({ v = 4 }, nil, { "enqueue" })
    assert.are.equal(4, s:run({}, "taken"):item())
    local closed = s:run_async({ x = { 1 } }, "y")
    closed:close()
    closed:close()
    h.raises("FAILED_PRECONDITION", "this future is closed", closed.result, closed)
    h.raises("FAILED_PRECONDITION", "this future is closed", closed.wait, closed)
  end)

  it("ends pending futures with CANCELLED when the session closes", function()
    local s = new_session()
    local f = s:run_async({}, "taken")
    s:close()
    assert.is_true(f:ready())
    h.raises("CANCELLED", "Session has been closed.", f.result, f)
    h.raises("CANCELLED", "Session has been closed.", s.run_async, s, {}, "taken")
  end)

  it("runs several futures at once, in any order", function()
    local s <close> = new_session { device_count = { CPU = 2 } }
    local fs = {}
    for i = 1, 20 do fs[i] = s:run_async({ x = { i, -i } }, "y") end
    for i = 20, 1, -1 do assert.are.same({ -i, i }, fs[i]:result():totable()) end
  end)
end)

describe("callable:run_async", function()
  it("starts a callable without waiting", function()
    local s <close> = new_session()
    local c <close> = s:make_callable { feeds = { "x" }, fetches = "y" }
    local f = c:run_async({ 2, 4 })
    assert.are.same({ -2, -4 }, f:result():totable())
    local list <close> = s:make_callable { feeds = { "x" }, fetches = { "y", "x" } }
    local out = list:run_async(tfdev.tensor({ 1 }, "float32")):result()
    assert.are.same({ { -1 }, { 1 } }, { out[1]:totable(), out[2]:totable() })
    h.raises("INVALID_ARGUMENT", "this callable takes 1 feed, got 0", c.run_async, c)
    c:release()
    h.raises("FAILED_PRECONDITION", "this callable was released", c.run_async, c, { 1 })
  end)

  it("serves a frame loop: a step started per frame, the previous one consumed, inputs written in place", function()
    local s <close> = new_session()
    local step <close> = s:make_callable { feeds = { "x" }, fetches = "y" }
    local inputs = { tfdev.tensor { dtype = "float32", shape = { 3 } }, tfdev.tensor { dtype = "float32", shape = { 3 } } }
    local pending, consumed = nil, 0
    for frame = 1, 60 do
      local x = inputs[frame % 2 + 1] -- double-buffered: one in flight, one written
      x:copy_from(string.pack("<fff", frame, 2 * frame, 3 * frame))
      local f = step:run_async(x)
      if pending then
        local prev = frame - 1
        assert.are.same({ -prev, -2 * prev, -3 * prev }, pending:result():totable())
        consumed = consumed + 1
      end
      pending = f
    end
    assert.are.same({ -60, -120, -180 }, pending:result():totable())
    assert.are.equal(59, consumed)
  end)
end)

describe("tensor:copy_from and tensor:fill", function()
  it("write values in place", function()
    local t = tfdev.tensor({ { 1, 2 }, { 3, 4 } }, "float32")
    assert.are.equal(t, t:copy_from(tfdev.tensor({ 5, 6, 7, 8 }, "float32"))) -- same count, any shape
    assert.are.same({ { 5, 6 }, { 7, 8 } }, t:totable())
    t:copy_from(string.pack("<ffff", 0.5, 1.5, 2.5, 3.5))
    assert.are.same({ { 0.5, 1.5 }, { 2.5, 3.5 } }, t:totable())
    assert.are.same({ { -1, -1 }, { -1, -1 } }, t:fill(-1):totable())
    assert.are.same({ 9, 9, 9 }, tfdev.tensor({ 1, 2, 3 }):fill(9):totable())
    assert.are.same({ true, true }, tfdev.tensor({ false, true }):fill(true):totable())
    assert.are.same({ 0, 0 }, tfdev.tensor({ 1, 2 }, "int64"):fill(0):totable())
  end)

  it("refuse another dtype, element count or size, naming both", function()
    local t = tfdev.tensor({ 1, 2, 3 }, "float32")
    local e = h.raises("INVALID_ARGUMENT", "float32 [3]", t.copy_from, t, tfdev.tensor({ 1, 2 }, "int32"))
    assert.matches("int32 [2]", e.message, 1, true)
    h.raises("INVALID_ARGUMENT", "float32 [3]", t.copy_from, t, tfdev.tensor({ 1, 2 }, "float32"))
    h.raises("INVALID_ARGUMENT", "and the source 4 bytes", t.copy_from, t, string.pack("<f", 1))
    h.raises("INVALID_ARGUMENT", "copy_from takes a tensor or a string of bytes, got table", t.copy_from, t, { 1, 2, 3 })
    h.raises("INVALID_ARGUMENT", "fill: a float32 tensor takes a number, got a string", t.fill, t, "1")
    h.raises("INVALID_ARGUMENT", "is not an integer", tfdev.tensor({ 1 }).fill, tfdev.tensor({ 1 }), 1.5)
    h.raises("INVALID_ARGUMENT", "out of range for uint8", tfdev.tensor({ 1 }, "uint8").fill, tfdev.tensor({ 1 }, "uint8"), 300)
    assert.are.same({ 1, 2, 3 }, t:totable())
  end)

  it("refuse a tensor whose buffer is shared: a view, or a running step's feed", function()
    local m = tfdev.tensor({ { 1, 2 }, { 3, 4 } }, "float32")
    local row = m[2]
    h.raises("FAILED_PRECONDITION", "shares its buffer", m.fill, m, 0)
    h.raises("FAILED_PRECONDITION", "shares its buffer", row.fill, row, 0)
    row:close()
    m:fill(0)
    local s <close> = new_session()
    local x = tfdev.tensor({ 1, 2 }, "float32")
    local f = s:run_async({ x = x }, "after_take") -- waits on the queue, holding x
    h.raises("FAILED_PRECONDITION", "tensor is in use by a running step", x.fill, x, 5)
    h.raises("FAILED_PRECONDITION", "tensor is in use by a running step", x.copy_from, x, string.pack("<ff", 5, 6))
    assert.are.same({ 1, 2 }, x:totable())
    s:run({ v = 0 }, nil, { "enqueue" })
    assert.are.same({ -1, -2 }, f:result():totable())
    x:fill(5) -- the step let go of it
    assert.are.same({ 5, 5 }, x:totable())
    -- An output that is the feed itself shares it while it lives.
    local same = s:run_async({ x = x }, "x"):result()
    h.raises("FAILED_PRECONDITION", "shares its buffer", x.fill, x, 1)
    same:close()
    x:fill(1)
  end)
end)
