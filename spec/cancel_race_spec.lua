-- Cancelling steps as they end, from Lua: every path that cancels a pending run (session:close(),
-- future:cancel(), future:close(), collection of a pending future) racing steps that cross two
-- devices, so each has a rendezvous the cancel aborts while the step may be freeing it. Each run
-- must end with its value or CANCELLED with the message of its path. runtime/session/
-- cancel_race_test.c does the same from C, with more rounds.
local tfdev = require "tfdev"
local h = require "spec.support.helpers"

local rounds = tonumber(os.getenv("TFDEV_STRESS_ITERS") or "") or 1000
rounds = rounds * 3 -- 3,000 by default; CI's valgrind run sets fewer
-- ThreadSanitizer's memory grows by most of a megabyte for each session closed with runs pending
-- (the plain build's stays flat, and ASan finds no leak): a tenth of the rounds keeps it in bounds.
if os.getenv("TFDEV_SANITIZER") == "thread" then rounds = rounds // 10 end

-- x -> c = x * x on CPU:0 -> d = c + x on CPU:1
local function graph()
  local g = tfdev.graph()
  local x = g:placeholder("float32", {}, { name = "x" })
  local c = g:op("Mul", { x, x }, { name = "c", device = "/device:CPU:0" })
  g:op("AddV2", { c, x }, { name = "d", device = "/device:CPU:1" })
  return g:graph_def()
end

-- Each future's result: its value, or CANCELLED with `why`; anything else is counted as bad.
local function settle(f, x, why, tally)
  local ok, got = pcall(f.result, f)
  if ok and got:totable() == x * x + x then
    tally.ok = tally.ok + 1
  elseif not ok and tfdev.error.is(got) and got.code == "CANCELLED" and got.message == why then
    tally.cancelled = tally.cancelled + 1
  else
    tally.bad = tally.bad + 1
    tally.last = tostring(got)
  end
end

describe("cancelling runs as they end", function()
  local gd = graph()
  -- Held open throughout, so the sessions made and closed below share its thread pools instead of
  -- starting and stopping four threads each (cancel_race_test.c covers that churn; under
  -- ThreadSanitizer, 12,000 threads outgrow the machine's memory).
  local keeper <close> = tfdev.session { device_count = { CPU = 2 } }

  it("session:close() with four runs pending, " .. rounds .. " rounds", function()
    local tally = { ok = 0, cancelled = 0, bad = 0 }
    for i = 1, rounds do
      local s = tfdev.session { device_count = { CPU = 2 } }
      s:create(gd)
      local f = {}
      for k = 1, 4 do f[k] = s:run_async({ x = tfdev.tensor(k, "float32") }, "d") end
      s:close()
      for k = 1, 4 do settle(f[k], k, "Session has been closed.", tally) end
      if i % 500 == 0 then collectgarbage() end
    end
    assert.are.equal(0, tally.bad, tally.last)
    assert.are.equal(4 * rounds, tally.ok + tally.cancelled)
  end)

  it("future:cancel(), future:close() and collection racing the step's end, " .. rounds .. " rounds", function()
    local s <close> = tfdev.session { device_count = { CPU = 2 } }
    s:create(gd)
    local tally = { ok = 0, cancelled = 0, bad = 0 }
    for i = 1, rounds do
      local x = i % 50
      local f = s:run_async({ x = tfdev.tensor(x, "float32") }, "d")
      local way = i % 4
      if way == 0 then
        f:cancel()
        settle(f, x, "Run was cancelled.", tally)
      elseif way == 1 then
        f:cancel()
        f:close()
      elseif way == 2 then
        f:close() -- a run still going is cancelled and waited for
      else
        f = nil -- collected pending: cancelled and waited for by __gc
        if i % 64 == 3 then collectgarbage() end
      end
    end
    collectgarbage()
    assert.are.equal(0, tally.bad, tally.last)
    assert.are.equal(rounds // 4, tally.ok + tally.cancelled)
    -- the session still runs after all of it
    assert.are.equal(12, s:run({ x = tfdev.tensor(3, "float32") }, "d"):totable())
  end)

  it("session:close() returns while a Lua kernel of a pending run waits for its caller", function()
    -- The starting code waited in close() for ever: run in a child under a time limit.
    local out, code = h.run_child([[
local tfdev = require "tfdev"
tfdev.op.register { name = "LuaTwiceOnClose", inputs = 1, outputs = 1,
  kernel = function(x) return tfdev.tensor({ x:totable()[1] * 2 }, "float32") end }
local g = tfdev.graph()
g:op("LuaTwiceOnClose", { g:placeholder("float32", { 1 }, { name = "x" }) }, { name = "y" })
local s = tfdev.session()
s:create(g:graph_def())
assert(s:run({ x = { 3 } }, "y"):totable()[1] == 6)
for _ = 1, 20 do
  local fut = s:run_async({ x = { 4 } }, "y")
  s:close()
  local ok, err = pcall(fut.result, fut)
  io.write(ok and "value " or ("error " .. err.code .. " " .. err.message), "\n")
  s = tfdev.session()
  s:create(g:graph_def())
end
io.write("done\n")
]], 30)
    assert.are.equal(0, code, out)
    assert.truthy(out:find("done\n", 1, true), out)
    local _, cancelled = out:gsub("error CANCELLED Session has been closed%.", "")
    assert.are.equal(20, cancelled, out)
  end)

  it("future:cancel() and collection fail a pending run's Lua kernel unrun", function()
    -- Run in a child under a time limit: a kernel left in a queue nobody drains would hang its step.
    local out, code = h.run_child([[
local tfdev = require "tfdev"
local calls = 0
tfdev.op.register { name = "LuaTwiceOnCancel", inputs = 1, outputs = 1,
  kernel = function(x) calls = calls + 1; return tfdev.tensor({ x:totable()[1] * 2 }, "float32") end }
local g = tfdev.graph()
g:op("LuaTwiceOnCancel", { g:placeholder("float32", { 1 }, { name = "x" }) }, { name = "y" })
local s = tfdev.session()
s:create(g:graph_def())
for i = 1, 20 do
  local fut = s:run_async({ x = { 4 } }, "y")
  -- most rounds give the step time to queue its kernel for this thread first
  local t = os.clock() + (i % 4 == 0 and 0 or 0.002)
  while os.clock() < t do end
  fut:cancel()
  local ok, err = pcall(fut.result, fut)
  io.write(ok and "value " or ("error " .. err.code .. " " .. err.message), "\n")
end
for _ = 1, 20 do s:run_async({ x = { 4 } }, "y") end -- dropped pending: cancelled by collection
collectgarbage(); collectgarbage()
io.write("calls ", calls, "\n")
assert(s:run({ x = { 3 } }, "y"):totable()[1] == 6)
s:close()
io.write("done\n")
]], 30)
    assert.are.equal(0, code, out)
    assert.truthy(out:find("calls 0\ndone\n", 1, true), out)
    local _, cancelled = out:gsub("error CANCELLED Run was cancelled%.", "")
    assert.are.equal(20, cancelled, out)
  end)

  it("the session factory's reset racing pending runs", function()
    local tally = { ok = 0, cancelled = 0, bad = 0 }
    for _ = 1, rounds // 10 do
      local s = tfdev.session { device_count = { CPU = 2 } }
      s:create(gd)
      local f = {}
      for k = 1, 4 do f[k] = s:run_async({ x = tfdev.tensor(k, "float32") }, "d") end
      tfdev.session_factory.reset()
      for k = 1, 4 do settle(f[k], k, "Session has been closed.", tally) end
      s:close()
    end
    assert.are.equal(0, tally.bad, tally.last)
  end)
end)
