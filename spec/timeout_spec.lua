-- Timeouts (the session's operation_timeout_ms, a run's timeout_ms) bound a step however it runs:
-- a step that only computes ends DEADLINE_EXCEEDED close to its deadline, through run, run options,
-- run_async, callables and partial runs alike, and a step that finishes in time returns its values.
local tfdev = require "tfdev"
local h = require "spec.support.helpers"

-- Under valgrind everything is some 50 times slower: smaller products, and room for the slowness.
local valgrind = os.getenv("TFDEV_UNDER_VALGRIND") ~= nil
local N = valgrind and 128 or 1000 -- a 1000x1000x1000 product: 10-60 ms on one core (valgrind: 4 Mflop, ~0.1 s)
local CHAIN = 10
local TIMEOUT = 20 -- ms
-- The most a timed-out call may take: its deadline, then at most one part of a product (a panel of
-- about 1-3 ms, more on a loaded machine) before the step sees the deadline, and slack for a loaded
-- two-core machine and the sanitizers. Before, such a step returned after the whole chain (0.1-0.5 s).
-- ThreadSanitizer slows each part several-fold (a convolution's band took 103 ms once on a loaded 2-core
-- machine): 0.2 s there, still far below a whole kernel under it (seconds).
local tsan = os.getenv("TSAN_OPTIONS") ~= nil
local BOUND = valgrind and 2.0 or tsan and 0.200 or 0.080 -- seconds

-- x (N x N, fed) through CHAIN products with the identity: every m<i> equals x.
local function chain_graph(n, size)
  local g = tfdev.graph()
  local x = g:placeholder("float32", { size, size }, { name = "x" })
  local eye = {}
  for i = 1, size * size do eye[i] = 0 end
  for i = 0, size - 1 do eye[i * size + i + 1] = 1 end
  local w = g:const(tfdev.tensor { dtype = "float32", shape = { size, size }, data = eye }, { name = "w" })
  local prev = x
  for i = 1, n do prev = g:op("MatMul", { prev, w }, { name = "m" .. i }) end
  return g
end

local function input(size)
  local v = {}
  for i = 1, size * size do v[i] = (i % 97) - 48 end -- small integers: products with the identity are exact
  return tfdev.tensor { dtype = "float32", shape = { size, size }, data = v }
end

-- A float32 tensor of `shape` holding small values in a pattern that repeats every 97 elements.
local function pattern(shape, seed)
  local n = 1
  for _, d in ipairs(shape) do n = n * d end
  local vals = {}
  for i = 1, 97 do vals[i] = ((i * 37 + seed) % 97 - 48) / 32 end
  local period = string.pack("<" .. string.rep("f", 97), table.unpack(vals))
  local bytes = string.rep(period, n // 97 + 1):sub(1, 4 * n)
  return tfdev.from_bytes("float32", shape, bytes)
end

local graph, x = chain_graph(CHAIN, N), input(N)

-- Seconds fn(...) took, and that it raised DEADLINE_EXCEEDED with `message`.
local function timed_out(message, fn, ...)
  local t0 = tfdev.clock()
  h.raises("DEADLINE_EXCEEDED", message, fn, ...)
  return tfdev.clock() - t0
end

local function session(options)
  local s = tfdev.session(options)
  s:create(graph)
  return s
end

local step_text = "Timed out waiting for the step (" .. TIMEOUT .. " ms)"

describe("a step that only computes", function()
  it("takes longer than the timeouts below without one (else they test nothing)", function()
    local s <close> = session()
    s:run({ x = x }, "m1") -- the kernels' first run (oneDNN's primitives)
    local t0 = tfdev.clock()
    local y = s:run({ x = x }, "m" .. CHAIN)
    assert.is_true(tfdev.clock() - t0 > 2 * TIMEOUT / 1000)
    assert.are.same(x:totable(), y:totable())
  end)

  it("ends DEADLINE_EXCEEDED near operation_timeout_ms", function()
    local s <close> = session { operation_timeout_ms = TIMEOUT }
    for _ = 1, 3 do -- the first run makes the kernels' panels; every run must end in time
      local took = timed_out(step_text, s.run, s, { x = x }, "m" .. CHAIN)
      assert.is_true(took < BOUND, string.format("took %.1f ms", took * 1000))
    end
  end)

  it("ends DEADLINE_EXCEEDED near a run's timeout_ms", function()
    local s <close> = session()
    for _ = 1, 3 do
      local took = timed_out(step_text, s.run, s, { x = x }, "m" .. CHAIN, nil, { timeout_ms = TIMEOUT })
      assert.is_true(took < BOUND, string.format("took %.1f ms", took * 1000))
    end
    -- A run's timeout overrides the session's, which still applies without one.
    local s2 <close> = session { operation_timeout_ms = 60000 }
    local took = timed_out(step_text, s2.run, s2, { x = x }, "m" .. CHAIN, nil, { timeout_ms = TIMEOUT })
    assert.is_true(took < BOUND, string.format("took %.1f ms", took * 1000))
  end)

  it("ends DEADLINE_EXCEEDED near its deadline through run_async and the future", function()
    local s <close> = session { operation_timeout_ms = TIMEOUT }
    for _, finish in ipairs { "wait", "result" } do
      local t0 = tfdev.clock()
      local f = s:run_async({ x = x }, "m" .. CHAIN)
      if finish == "wait" then assert.is_true(f:wait()) end
      h.raises("DEADLINE_EXCEEDED", step_text, f.result, f)
      local took = tfdev.clock() - t0
      assert.is_true(took < BOUND, string.format("%s took %.1f ms", finish, took * 1000))
    end
    -- Nobody waits or polls (either would cancel a late step): the step stops itself at its deadline
    -- rather than running the chain out, so it has ended when it is first polled.
    local f = s:run_async({ x = x }, "m" .. CHAIN, nil, { timeout_ms = TIMEOUT })
    local t0 = tfdev.clock()
    if valgrind then
      os.execute("sleep " .. 2 * BOUND) -- valgrind runs one thread at a time: a busy wait here starves the step
    else
      while tfdev.clock() - t0 < 2 * BOUND do end
    end
    assert.is_true(f:ready())
    h.raises("DEADLINE_EXCEEDED", step_text, f.result, f)
  end)

  it("ends DEADLINE_EXCEEDED near its deadline through a callable", function()
    local s <close> = session()
    local f <close> = s:make_callable { feeds = "x", fetches = "m" .. CHAIN, run_options = { timeout_ms = TIMEOUT } }
    local took = timed_out(step_text, f, x)
    assert.is_true(took < BOUND, string.format("took %.1f ms", took * 1000))
    local g <close> = s:make_callable { feeds = "x", fetches = "m" .. CHAIN }
    took = timed_out(step_text, g.run_with, g, { timeout_ms = TIMEOUT }, x)
    assert.is_true(took < BOUND, string.format("took %.1f ms", took * 1000))
  end)

  it("ends a partial run's fetch near the timeout, and stops its executors there", function()
    for _, threads in ipairs { 0, -1 } do -- the inter-op pool, and the caller's thread alone
      local s = session { operation_timeout_ms = TIMEOUT, inter_op_threads = threads }
      local t0 = tfdev.clock()
      local p = s:prun_setup({ "x" }, { "m" .. CHAIN })
      h.raises("DEADLINE_EXCEEDED", "Timed out waiting for a partial run fetch (" .. TIMEOUT .. " ms)", s.prun, s, p,
        { x = x }, "m" .. CHAIN)
      local took = tfdev.clock() - t0
      assert.is_true(took < BOUND, string.format("threads %d: prun took %.1f ms", threads, took * 1000))
      s:close() -- waits for the executors: they stopped at the deadline too
      took = tfdev.clock() - t0
      assert.is_true(took < BOUND, string.format("threads %d: prun and close took %.1f ms", threads, took * 1000))
    end
  end)

  it("returns OK with its values when it finishes within its timeout", function()
    -- The products then run in panels of rows, each looking at the deadline: the values must not change.
    local s <close> = session { operation_timeout_ms = 600000 }
    local outs = s:run({ x = x }, { "m1", "m" .. CHAIN })
    local want = x:totable()
    assert.are.same(want, outs[1]:totable())
    assert.are.same(want, outs[2]:totable())
    local f = s:run_async({ x = x }, "m" .. CHAIN, nil, { timeout_ms = 600000 })
    assert.are.same(want, f:result():totable())
    local small = chain_graph(3, 8)
    local s2 <close> = tfdev.session { operation_timeout_ms = 1000 }
    s2:create(small)
    assert.are.same(input(8):totable(), s2:run({ x = input(8) }, "m3"):totable())
  end)
end)

describe("a step with a loop (the frame-aware executor)", function()
  it("ends DEADLINE_EXCEEDED near its deadline while a large product in the loop's body runs", function()
    local P = valgrind and 128 or 1600 -- 8 Gflop an iteration: 0.1-0.5 s here in one call (valgrind: 4 Mflop, ~0.1 s)
    local function node(name, op, input, attr) return { name = name, op = op, input = input, attr = attr or {} } end
    local loop = { frame_name = "l", parallel_iterations = 1 }
    local fixed = { frame_name = "l", parallel_iterations = 1, is_constant = true }
    local g = { node = {
      node("x", "Placeholder", nil, { dtype = "float32", shape = { P, P } }),
      node("w", "Const", nil, { value = pattern({ P, P }, 3) }),
      node("zero", "Const", nil, { value = tfdev.tensor(0, "int32") }),
      node("three", "Const", nil, { value = tfdev.tensor(3, "int32") }),
      node("one", "Const", nil, { value = tfdev.tensor(1, "int32") }),
      node("enter_i", "Enter", { "zero" }, loop), node("enter_m", "Enter", { "x" }, loop),
      node("enter_w", "Enter", { "w" }, fixed), node("limit", "Enter", { "three" }, fixed),
      node("step", "Enter", { "one" }, fixed),
      node("merge_i", "Merge", { "enter_i", "next_i" }), node("merge_m", "Merge", { "enter_m", "next_m" }),
      node("less", "Less", { "merge_i", "limit" }), node("cond", "LoopCond", { "less" }),
      node("sw_i", "Switch", { "merge_i", "cond" }), node("sw_m", "Switch", { "merge_m", "cond" }),
      node("add_i", "AddV2", { "sw_i:1", "step" }), node("product", "MatMul", { "sw_m:1", "enter_w" }),
      node("next_i", "NextIteration", { "add_i" }), node("next_m", "NextIteration", { "product" }),
      node("y", "Exit", { "sw_m" }),
    } }
    local s <close> = tfdev.session { operation_timeout_ms = TIMEOUT }
    s:create(g)
    for _ = 1, 2 do
      local took = timed_out(step_text, s.run, s, { x = pattern({ P, P }, 1) }, "y")
      assert.is_true(took < BOUND, string.format("took %.1f ms", took * 1000))
    end
  end)
end)

describe("a step of many cheap nodes", function()
  it("ends DEADLINE_EXCEEDED near its deadline: a loop-free chain of AddV2", function()
    local n = valgrind and 20000 or 100000
    local g = tfdev.graph()
    local a = g:placeholder("float32", {}, { name = "a" })
    local prev = a
    for i = 1, n do prev = g:op("AddV2", { prev, a }, { name = "n" .. i }) end
    local s <close> = tfdev.session()
    s:create(g)
    assert.are.equal(n + 1, s:run({ a = 1 }, "n" .. n):item()) -- no timeout: it runs out
    local t0 = tfdev.clock()
    s:run({ a = 1 }, "n" .. n)
    local whole = tfdev.clock() - t0
    local timeout = math.max(1, math.floor(whole * 1000 / 4)) -- a quarter of what the chain takes
    t0 = tfdev.clock()
    h.raises("DEADLINE_EXCEEDED", "Timed out waiting for the step (" .. timeout .. " ms)", s.run, s, { a = 1 },
      "n" .. n, nil, { timeout_ms = timeout })
    local took = tfdev.clock() - t0
    assert.is_true(took < timeout / 1000 + BOUND, string.format("took %.1f ms of %d", took * 1000, timeout))
  end)
end)

-- ---- long kernels: split into parts under a deadline, the same values as in one call ----

-- Asserts two float32 tensors of one shape hold the same values within tol, naming the first that differs.
local function assert_same_values(want, got, tol)
  assert.are.same(want.shape, got.shape)
  local a, b = want:bytes(), got:bytes()
  if a == b then return end
  local fmt = "<" .. string.rep("f", 64)
  for pos = 1, #a, 256 do
    local chunk = math.min(64, (#a - pos + 1) // 4)
    local f = chunk == 64 and fmt or "<" .. string.rep("f", chunk)
    local wa, wb = { string.unpack(f, a, pos) }, { string.unpack(f, b, pos) }
    for i = 1, chunk do
      local scale = math.max(1, math.abs(wa[i]))
      assert(math.abs(wa[i] - wb[i]) <= tol * scale,
        string.format("element %d: expected %.7g, got %.7g", (pos - 1) // 4 + i - 1, wa[i], wb[i]))
    end
  end
end

-- Runs graph g's fetch `y` with feeds, without a timeout and under a generous one (the kernels then
-- split their work and look at the deadline between parts): both must give the same values.
local function same_under_deadline(g, feeds, tol)
  local plain <close> = tfdev.session()
  plain:create(g)
  local timed <close> = tfdev.session { operation_timeout_ms = 600000 }
  timed:create(g)
  local want = plain:run(feeds, "y")
  for _ = 1, 2 do assert_same_values(want, timed:run(feeds, "y"), tol) end -- the second with the parts' primitives made
  return want
end

describe("long kernels under a deadline", function()
  -- 577 Mflop: 5 panels of rows on oneDNN, 3 on OpenBLAS (whose panels are larger), the last one shorter.
  local M, K, Nn = valgrind and 61 or 601, valgrind and 120 or 800, valgrind and 100 or 600

  for _, case in ipairs {
    { "MatMul, constant weights (oneDNN where built in)", false, false, true },
    { "MatMul, transpose_a, constant weights", true, false, true },
    { "MatMul, transpose_b, fed weights (OpenBLAS)", false, true, false },
    { "MatMul, both transposed, fed weights", true, true, false },
  } do
    local name, ta, tb, constant = table.unpack(case)
    it(name .. ": the same values in panels of rows", function()
      local g = tfdev.graph()
      local a = g:placeholder("float32", ta and { K, M } or { M, K }, { name = "a" })
      local wshape = tb and { Nn, K } or { K, Nn }
      local b = constant and g:const(pattern(wshape, 5), { name = "b" }) or g:placeholder("float32", wshape, { name = "b" })
      g:op("MatMul", { a, b }, { name = "y", transpose_a = ta, transpose_b = tb })
      local feeds = { a = pattern(ta and { K, M } or { M, K }, 3) }
      if not constant then feeds.b = pattern(wshape, 5) end
      local y = same_under_deadline(g, feeds, 1e-4)
      assert.are.same({ M, Nn }, y.shape)
    end)
  end

  it("_FusedMatMul (BiasAdd, Relu) and float64 products: the same values in panels", function()
    local g = tfdev.graph()
    local a = g:placeholder("float32", { M, K }, { name = "a" })
    local mm = g:op("MatMul", { a, g:const(pattern({ K, Nn }, 7), { name = "w" }) }, { name = "mm" })
    g:op("Relu", { g:op("BiasAdd", { mm, g:const(pattern({ Nn }, 9), { name = "bias" }) }) }, { name = "y" })
    same_under_deadline(g, { a = pattern({ M, K }, 1) }, 1e-4)
    local g64 = tfdev.graph()
    local a64 = g64:placeholder("float64", { M, K }, { name = "a" })
    local b64 = g64:placeholder("float64", { K, Nn }, { name = "b" })
    g64:op("MatMul", { a64, b64 }, { name = "y" })
    local function f64(shape, seed) return tfdev.tensor(pattern(shape, seed):totable(), "float64") end
    same_under_deadline(g64, { a = f64({ M, K }, 2), b = f64({ K, Nn }, 4) }, 1e-9)
  end)

  local S = valgrind and 24 or 96 -- 300-400 Mflop a convolution: 3-4 bands of rows an image
  for _, case in ipairs {
    -- name, input, filter, strides, padding, dilations, explicit paddings, depthwise
    { "Conv2D SAME", { 1, S, S, 32 }, { 3, 3, 32, 64 }, { 1, 1, 1, 1 }, "SAME" },
    { "Conv2D SAME, stride 2", { 1, 2 * S, 3 * S // 2, 32 }, { 3, 3, 32, 96 }, { 1, 2, 2, 1 }, "SAME" },
    { "Conv2D VALID, dilation 2, two images", { 2, S * 5 // 8, S * 5 // 8, 32 }, { 3, 3, 32, 96 }, { 1, 1, 1, 1 },
      "VALID", { 1, 2, 2, 1 } },
    { "Conv2D EXPLICIT padding, 5x3 window", { 1, S, S, 32 }, { 5, 3, 32, 48 }, { 1, 1, 1, 1 }, "EXPLICIT", nil,
      { 0, 0, 3, 1, 2, 0, 0, 0 } },
    { "Conv2D with 4 output channels (patches and OpenBLAS)", { 1, 2 * S, 2 * S, 64 }, { 3, 3, 64, 4 }, { 1, 1, 1, 1 },
      "SAME" },
    { "DepthwiseConv2dNative, multiplier 4", { 1, 4 * S, 4 * S, 32 }, { 3, 3, 32, 4 }, { 1, 1, 1, 1 }, "SAME", nil,
      nil, true },
  } do
    local name, xs, fs, strides, padding, dil, ex, depthwise = table.unpack(case)
    it(name .. ": the same values in bands of rows", function()
      local g = tfdev.graph()
      local x = g:placeholder("float32", xs, { name = "x" })
      g:op(depthwise and "DepthwiseConv2dNative" or "Conv2D", { x, g:const(pattern(fs, 11), { name = "f" }) },
        { name = "y", strides = strides, padding = padding, dilations = dil, explicit_paddings = ex })
      same_under_deadline(g, { x = pattern(xs, 13) }, 1e-4)
    end)
  end

  it("_FusedConv2D (BiasAdd, Add, Relu) into its addend's buffer: the same values in bands", function()
    local g = tfdev.graph()
    local x = g:placeholder("float32", { 1, S, S, 32 }, { name = "x" })
    local r = g:placeholder("float32", { 1, S, S, 64 }, { name = "r" })
    local conv = g:op("Conv2D", { x, g:const(pattern({ 3, 3, 32, 64 }, 3), { name = "f" }) },
      { name = "conv", strides = { 1, 1, 1, 1 }, padding = "SAME" })
    local biased = g:op("BiasAdd", { conv, g:const(pattern({ 64 }, 4), { name = "bias" }) }, { name = "biased" })
    -- Neg's output is the step's alone, so the fused convolution writes into it (its residual add in place).
    g:op("Relu", { g:op("AddV2", { biased, g:op("Neg", { r }, { name = "addend" }) }, { name = "sum" }) }, { name = "y" })
    same_under_deadline(g, { x = pattern({ 1, S, S, 32 }, 6), r = pattern({ 1, S, S, 64 }, 8) }, 1e-4)
  end)

  it("one large product or convolution ends near the deadline, not a whole kernel later", function()
    if valgrind then return end -- the parts are too small to split at valgrind's sizes
    local P = 1600 -- 8 Gflop: 0.1-0.5 s here in one call
    local g = tfdev.graph()
    local a = g:placeholder("float32", { P, P }, { name = "a" })
    g:op("MatMul", { a, g:const(pattern({ P, P }, 2), { name = "w" }) }, { name = "mm" })
    local x = g:placeholder("float32", { 1, 256, 256, 64 }, { name = "x" }) -- 4.8 Gflop
    g:op("Conv2D", { x, g:const(pattern({ 3, 3, 64, 64 }, 3), { name = "f" }) },
      { name = "conv", strides = { 1, 1, 1, 1 }, padding = "SAME" })
    local s <close> = tfdev.session()
    s:create(g)
    local feeds = { a = pattern({ P, P }, 1), x = pattern({ 1, 256, 256, 64 }, 4) }
    for _, fetch in ipairs { "mm", "conv" } do
      for _ = 1, 2 do -- the first makes the parts' primitives
        local took = timed_out(step_text, s.run, s, feeds, fetch, nil, { timeout_ms = TIMEOUT })
        assert.is_true(took < BOUND, string.format("%s took %.1f ms", fetch, took * 1000))
      end
    end
  end)
end)
