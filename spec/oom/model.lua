-- Out-of-memory sweep target (scripts/oom-sweep): loading a model with tfdev.model and running it
-- once, fed zeros by its inputs' shapes (unknown dimensions 1), each step checked (spec/oom/step.lua).
-- Usage: tfdev_oom spec/oom/model.lua PATH
package.path = (arg[0]:match("^(.*)/[^/]*$") or ".") .. "/?.lua;" .. package.path
local S = require "step"
local step, check = S.step, S.check
local tfdev
step("require", function() tfdev = require "tfdev" end)
local path = assert(arg[1], "usage: model.lua PATH")

local function zeros(shape, d)
  d = d or 1
  if not shape or d > #shape then return 0 end
  local t = {}
  for i = 1, (shape[d] < 0 and 1 or shape[d]) do t[i] = zeros(shape, d + 1) end
  return t
end

local m
step("load", function() m = tfdev.model(path) end)
step("run", function()
  local feeds = {}
  for _, i in ipairs(m.inputs) do feeds[i.name] = tfdev.tensor(zeros(i.shape), i.dtype) end
  local outs = m:run(feeds)
  check(#outs == #m.outputs, "one output per model output")
  for k = 1, #outs do check(outs[k]:numel() > 0, "a non-empty output") end
end)
step("close", function() m:close() end)
S.done()
