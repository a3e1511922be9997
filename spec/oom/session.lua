-- Out-of-memory sweep target (scripts/oom-sweep): a session's life from Lua, each step checked
-- (spec/oom/step.lua): a graph over two CPU devices, create, run, a callable, a partial run, an
-- asynchronous run, close.
package.path = (arg[0]:match("^(.*)/[^/]*$") or ".") .. "/?.lua;" .. package.path
local S = require "step"
local step, check = S.step, S.check
local tfdev
step("require", function() tfdev = require "tfdev" end)

local function same(t, want)
  local v = t:totable()
  for i = 1, 2 do
    for j = 1, 2 do
      if v[i][j] ~= want[i][j] then return false end
    end
  end
  return true
end

-- x = [[1, -1], [0, 2]]: y = x.w = [[-2, -2], [6, 8]], out = relu(2y) = [[0, 0], [12, 16]]
local x = { { 1, -1 }, { 0, 2 } }
local want_y, want_out = { { -2, -2 }, { 6, 8 } }, { { 0, 0 }, { 12, 16 } }
local gd, s

step("graph", function()
  local g = tfdev.graph()
  local xp = g:placeholder("float32", { 2, 2 }, { name = "x" })
  local w = g:const({ { 1, 2 }, { 3, 4 } }, { dtype = "float32", name = "w" })
  local y = g:op("MatMul", { xp, w }, { name = "y", device = "/device:CPU:0" })
  local sum = g:op("AddV2", { y, y }, { name = "sum", device = "/device:CPU:1" })
  g:op("Relu", { sum }, { name = "out", device = "/device:CPU:1" })
  gd = g:graph_def()
end)
step("session", function() s = tfdev.session { device_count = { CPU = 2 } } end)
step("create", function() s:create(gd) end)
step("run", function()
  local outs = s:run({ x = tfdev.tensor(x, "float32") }, { "out", "y:0" })
  local out, y = outs[1], outs[2]
  check(same(out, want_out) and same(y, want_y), "run's outputs")
end)
step("callable", function()
  local c <close> = s:make_callable { feeds = { "x" }, fetches = "out" }
  for _ = 1, 2 do check(same(c(tfdev.tensor(x, "float32")), want_out), "the callable's output") end
end)
step("partial run", function()
  local h <close> = s:prun_setup({ "x" }, { "y", "out" })
  check(same(s:prun(h, { x = tfdev.tensor(x, "float32") }, "y"), want_y), "prun's y")
  check(same(s:prun(h, {}, "out"), want_out), "prun's out")
end)
step("async run", function()
  local f <close> = s:run_async({ x = tfdev.tensor(x, "float32") }, "out")
  check(same(f:result(), want_out), "the future's result")
end)
step("close", function() s:close() end)
S.done()
