-- Out-of-memory sweep target (scripts/oom-sweep): the device path, on the fake GPU backend
-- (TFDEV_BACKENDS=fakegpu, runtime/testing/fake_gpu_backend.c): a graph whose arithmetic runs on the
-- GPU's device kernels, with copies in and out, each output checked (spec/oom/step.lua).
package.path = (arg[0]:match("^(.*)/[^/]*$") or ".") .. "/?.lua;" .. package.path
local S = require "step"
local step, check = S.step, S.check
local tfdev
step("require", function() tfdev = require "tfdev" end)

local function node(name, op, input, attr, device)
  return { name = name, op = op, input = input, attr = attr or {}, device = device }
end
local G = "/device:GPU:0"

local gd
step("graph", function() gd = { node = {
  node("x", "Placeholder", nil, { dtype = "float32", shape = { 2, 2 } }),
  node("w", "Const", nil, { value = tfdev.tensor({ { 1, 2 }, { 3, 4 } }, "float32") }),
  node("y", "MatMul", { "x", "w" }, nil, G),
  node("z", "AddV2", { "y", "x" }, nil, G),
  node("r", "Relu", { "z" }, nil, G),
  node("axis", "Const", nil, { value = tfdev.tensor({ 1 }, "int32") }),
  node("s", "Sum", { "r", "axis" }, nil, G),
  node("t", "Transpose", { "r", "perm" }, nil, G),
  node("perm", "Const", nil, { value = tfdev.tensor({ 1, 0 }, "int32") }),
} } end)

-- x = [[1, -1], [0, 2]]: y = [[-2, -2], [6, 8]], z = [[-1, -3], [6, 10]], r = [[0, 0], [6, 10]]
local s
step("session", function() s = tfdev.session { device_count = { GPU = 1 } } end)
step("create", function() s:create(gd) end)
for i = 1, 2 do
  step("run " .. i, function()
    local o = s:run({ x = tfdev.tensor({ { 1, -1 }, { 0, 2 } }, "float32") }, { "r", "s", "t" })
    local r, sm, t = o[1]:totable(), o[2]:totable(), o[3]:totable()
    check(r[1][1] == 0 and r[1][2] == 0 and r[2][1] == 6 and r[2][2] == 10, "Relu(x.w + x)")
    check(sm[1] == 0 and sm[2] == 16, "Sum over axis 1")
    check(t[1][2] == 6 and t[2][2] == 10 and t[2][1] == 0, "Transpose")
  end)
end
step("close", function() s:close() end)
S.done()
