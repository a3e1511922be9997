-- Fixed cost of a run from Lua: a cached make_callable call of a one-node graph, beside the cost
-- of calling any C function from Lua (the floor for a binding), measured alternately in one run.
--
--   tfdev scripts/bench/callable.lua [calls]
local tfdev = require "tfdev"

local calls = tonumber(arg and arg[1]) or 20000
local clock = tfdev.clock -- monotonic wall time

local g = tfdev.graph()
g:op("Identity", { g:placeholder("float32", {}, { name = "x" }) }, { name = "y" })
local s <close> = tfdev.session { inter_op_threads = 1, intra_op_threads = 1, use_per_session_threads = true }
s:create(g)
local f = s:make_callable { feeds = { "x" }, fetches = "y" }
local x = tfdev.tensor(1.5)
local is_tensor = tfdev.tensor.is

local function time_batch(fn)
  local t0 = clock()
  for _ = 1, calls do fn(x) end
  return (clock() - t0) / calls
end

for _ = 1, 3 do time_batch(f) end -- warm: executors built, buffers cached
local ours, base = {}, {}
for r = 1, 15 do
  if r % 2 == 0 then
    ours[#ours + 1] = time_batch(f)
    base[#base + 1] = time_batch(is_tensor)
  else
    base[#base + 1] = time_batch(is_tensor)
    ours[#ours + 1] = time_batch(f)
  end
end
local function median(t)
  table.sort(t)
  return t[(#t + 1) // 2]
end
local o, b = median(ours) * 1e6, median(base) * 1e6
print(string.format("\nLua call overhead (%d calls a batch, 15 batches, medians; microseconds per call)", calls))
print(string.format("| %-44s | %12s | %12s | %8s | %-14s | %-4s |", "benchmark", "tfdev", "baseline", "diff", "target", "met"))
print(string.format("| %-44s | %12.3f | %12.3f | %8.3f | %-14s | %-4s |", "callable(x), one-node graph, vs a C call",
  o, b, o - b, "tfdev <= 0.4", o <= 0.4 and "yes" or "NO"))
