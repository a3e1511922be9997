-- Out-of-memory sweep target (scripts/oom-sweep): kernels whose own allocations may fail, each
-- output checked against values computed here (spec/oom/step.lua): reductions along every kind of
-- axis set, a convolution, a pooling, transposes, concatenation, gathers, top-k, and a while loop
-- (the frame-aware executor), in one session with the optimiser off (folding would compute the
-- constants' part at creation) and then on.
package.path = (arg[0]:match("^(.*)/[^/]*$") or ".") .. "/?.lua;" .. package.path
local S = require "step"
local step, check = S.step, S.check
local tfdev
step("require", function() tfdev = require "tfdev" end)

local function near(a, b) return math.abs(a - b) <= 1e-4 * math.max(1, math.abs(b)) end

-- x[i][j][k] = i + 10 j + 100 k over [2, 3, 4]
local X = {}
for i = 1, 2 do
  X[i] = {}
  for j = 1, 3 do
    X[i][j] = {}
    for k = 1, 4 do X[i][j][k] = (i - 1) + 10 * (j - 1) + 100 * (k - 1) end
  end
end

local function node(name, op, input, attr) return { name = name, op = op, input = input, attr = attr or {} } end
local function const(name, v, dtype) return node(name, "Const", nil, { value = tfdev.tensor(v, dtype) }) end
local i32 = "int32"

local function graph_def()
  local loop = { frame_name = "l", parallel_iterations = 4 }
  local lc = { frame_name = "l", parallel_iterations = 4, is_constant = true }
  return { node = {
    node("x", "Placeholder", nil, { dtype = "float32", shape = { 2, 3, 4 } }),
    const("ax02", { 0, 2 }, i32), const("ax1", { 1 }, i32), const("ax12", { 1, 2 }, i32), const("ax0", { 0 }, i32),
    node("sum02", "Sum", { "x", "ax02" }), node("mean1", "Mean", { "x", "ax1" }),
    node("max12", "Max", { "x", "ax12" }), node("prod0", "Prod", { "x", "ax0" }),
    const("perm", { 2, 0, 1 }, i32), node("tr", "Transpose", { "x", "perm" }),
    const("cat_axis", 1, i32), node("cat", "ConcatV2", { "x", "x", "cat_axis" }, { N = 2 }),
    const("idx", { 2, 0 }, i32), const("gaxis", 2, i32), node("gather", "GatherV2", { "x", "idx", "gaxis" }),
    const("k", 2, i32), node("top", "TopKV2", { "x", "k" }),
    const("img_shape", { 1, 4, 6, 1 }, i32), node("img", "Reshape", { "x", "img_shape" }),
    const("filter", { { { { 1, -1 } }, { { 0, 1 } } }, { { { 1, 0 } }, { { 2, 1 } } } }, "float32"),
    node("conv", "Conv2D", { "img", "filter" }, { strides = { 1, 1, 1, 1 }, padding = "VALID" }),
    node("pool", "AvgPool", { "conv" }, { ksize = { 1, 2, 2, 1 }, strides = { 1, 1, 1, 1 }, padding = "SAME" }),
    const("zero", 0, i32), const("n", 5, i32), const("one", 1, i32),
    node("l/enter", "Enter", { "zero" }, loop), node("l/limit", "Enter", { "n" }, lc), node("l/step", "Enter", { "one" }, lc),
    node("l/merge", "Merge", { "l/enter", "l/next" }), node("l/less", "Less", { "l/merge", "l/limit" }),
    node("l/cond", "LoopCond", { "l/less" }), node("l/switch", "Switch", { "l/merge", "l/cond" }),
    node("l/body", "Identity", { "l/switch:1" }), node("l/add", "AddV2", { "l/body", "l/step" }),
    node("l/next", "NextIteration", { "l/add" }), node("l/exit", "Exit", { "l/switch" }),
  } }
end

local function run_and_check(s)
  local o = s:run({ x = tfdev.tensor(X, "float32") },
    { "sum02", "mean1", "max12", "prod0", "tr", "cat", "gather", "top", "top:1", "conv", "pool", "l/exit" })
  local sum02 = o[1]:totable()
  for j = 1, 3 do
    local want = 0
    for i = 1, 2 do for k = 1, 4 do want = want + X[i][j][k] end end
    check(near(sum02[j], want), "Sum over axes 0 and 2")
  end
  check(near(o[2]:totable()[2][4], 1 + 10 + 300), "Mean over axis 1")
  check(near(o[3]:totable()[2], 1 + 20 + 300), "Max over axes 1 and 2")
  check(near(o[4]:totable()[3][4], X[1][3][4] * X[2][3][4]), "Prod over axis 0")
  check(near(o[5]:totable()[4][2][3], X[2][3][4]), "Transpose")
  check(#o[6]:totable()[1] == 6 and near(o[6]:totable()[2][6][1], X[2][3][1]), "ConcatV2")
  check(near(o[7]:totable()[2][3][1], X[2][3][3]) and near(o[7]:totable()[2][3][2], X[2][3][1]), "GatherV2")
  check(near(o[8]:totable()[1][1][1], X[1][1][4]) and o[9]:totable()[1][1][1] == 3, "TopKV2")
  local img, conv = tfdev.tensor(X, "float32"):totable(), o[10]:totable()
  local flat = {}
  for i = 1, 2 do for j = 1, 3 do for k = 1, 4 do flat[#flat + 1] = img[i][j][k] end end end
  local function at(y, x) return flat[(y - 1) * 6 + x] end
  check(near(conv[1][1][1][1], at(1, 1) * 1 + at(1, 2) * 0 + at(2, 1) * 1 + at(2, 2) * 2), "Conv2D")
  check(near(o[11]:totable()[1][3][5][2], conv[1][3][5][2]), "AvgPool at the corner")
  check(o[12]:totable() == 5, "the while loop")
end

local s
step("session", function() s = tfdev.session { optimize_graph = false } end)
step("create", function() s:create(graph_def()) end)
step("run", function() run_and_check(s) end)
step("close", function() s:close() end)
step("optimised session", function() s = tfdev.session() end)
step("optimised create", function() s:create(graph_def()) end)
step("optimised run", function() run_and_check(s) end)
step("optimised close", function() s:close() end)
S.done()
