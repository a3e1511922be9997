-- Device kernels (runtime/kernels/dk_*.c over kernels/device_math.h) against the CPU kernels: every op
-- pinned to /device:GPU:0 and to /device:CPU:0 on the same fresh random inputs, compared exactly for
-- data movement, integers and bools and within a relative bound for float math; the same errors
-- (codes and messages) on bad inputs; seeded random ops drawing the same numbers; graphs split
-- between CPU and GPU; placement with no device annotations; the TensorFlow.js models of
-- ../shared/models. The backend is TFDEV_DEVICE_SPEC_BACKEND (default fakegpu: ctest loads it with
-- TFDEV_BACKENDS=fakegpu; the GPU suite runs the same spec against cuda).
local tfdev = require "tfdev"
local h = require "spec.support.helpers"

local BACKEND = os.getenv("TFDEV_DEVICE_SPEC_BACKEND") or "fakegpu"
local GPU0 = "/job:localhost/replica:0/task:0/device:GPU:0"
local CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"
local SEED = tonumber(os.getenv("TFDEV_SPEC_SEED") or "") or os.time()
math.randomseed(SEED)

local function backend_ready()
  for _, b in ipairs(tfdev.backends()) do
    if b.name == BACKEND then return b.loaded and b.num_devices > 0 end
  end
  return false
end

-- ---- inputs ----
local function numel(dims)
  local n = 1
  for _, d in ipairs(dims) do n = n * d end
  return n
end

--- A tensor of dims with random values: floats in [lo, hi), integers in [lo, hi], bools.
local function rand(dt, dims, lo, hi)
  local data = {}
  for i = 1, numel(dims) do
    if dt == "bool" then data[i] = math.random() < 0.5
    elseif dt == "complex64" then data[i] = { math.random(lo or -9, hi or 9), (lo or -2) + ((hi or 2) - (lo or -2)) * math.random() }
    elseif dt == "int32" or dt == "int64" or dt == "uint8" then data[i] = math.random(lo or -9, hi or 9)
    else data[i] = (lo or -2) + ((hi or 2) - (lo or -2)) * math.random() end
  end
  return tfdev.tensor { dtype = dt, shape = dims, data = data }
end
local function T(v, dt) return tfdev.tensor(v, dt or "int32") end

-- ---- running one op on a device ----
local function flat(v, out)
  out = out or {}
  if type(v) == "table" then
    for _, x in ipairs(v) do flat(x, out) end
  else
    out[#out + 1] = v
  end
  return out
end

local function ran_on(meta)
  local where = {}
  for _, d in ipairs(meta.step_stats.dev_stats) do
    for _, n in ipairs(d.node_stats) do where[n.node_name] = d.device end
  end
  return where
end

--- Runs node "y" = op(inputs) on device, its inputs fed to Placeholders there (of unknown shapes, so
--- that the kernels, not the graph's shape inference, see every input); returns the fetched tensors
--- and where y ran.
local function run_on(device, op, inputs, attrs, fetches)
  local g, names, feeds = { node = {} }, {}, {}
  for i, t in ipairs(inputs) do
    names[i] = "in" .. i
    feeds[names[i]] = t
    g.node[#g.node + 1] = { name = names[i], op = "Placeholder", device = device, attr = { dtype = t.dtype } }
  end
  g.node[#g.node + 1] = { name = "y", op = op, input = names, attr = attrs or {}, device = device }
  local s <close> = tfdev.session { optimize_graph = false }
  s:create(g)
  local out, meta = s:run(feeds, fetches or { "y" }, nil, { trace = true })
  return out, ran_on(meta).y
end

local TOL = { float32 = 2e-5, float64 = 1e-12, float16 = 1e-3 }
-- Random streams are the CPU's on the fake GPU, bit for bit (the same libm); a real GPU's log and cos
-- may differ from glibc's in the last bit of a double, which Box-Muller carries.
local RANDOM_TOL = BACKEND == "fakegpu" and 0 or 2.5e-7

--- Asserts two tensors have one dtype, one shape and the same values: exactly, or within tol
--- relative to max(1, |want|) for floats (NaN where NaN is).
local function same(want, got, what, tol)
  local where = string.format("%s (seed %d)", what, SEED)
  assert.are.equal(want.dtype, got.dtype, where .. ": dtype")
  assert.are.same(want.shape, got.shape, where .. ": shape")
  local w, g = flat(want:totable()), flat(got:totable())
  tol = tol or TOL[want.dtype]
  for i = 1, #w do
    local a, b = w[i], g[i]
    if not tol or type(a) ~= "number" then
      assert(a == b, string.format("%s: element %d: want %s, got %s", where, i, tostring(a), tostring(b)))
    elseif a ~= a then
      assert(b ~= b, string.format("%s: element %d: want NaN, got %s", where, i, tostring(b)))
    elseif a == math.huge or a == -math.huge then
      assert(a == b, string.format("%s: element %d: want %s, got %s", where, i, tostring(a), tostring(b)))
    else
      assert(math.abs(a - b) <= tol * math.max(1, math.abs(a)),
        string.format("%s: element %d: want %.9g, got %.9g", where, i, a, b))
    end
  end
end

local cases = 0

--- op on the GPU against op on the CPU: every fetched output the same, and y ran on the GPU.
local function check(what, op, inputs, attrs, opts)
  opts = opts or {}
  cases = cases + 1
  local want = run_on(CPU0, op, inputs, attrs, opts.fetches)
  local got, where = run_on(GPU0, op, inputs, attrs, opts.fetches)
  assert.are.equal(GPU0, where, what .. ": y ran on " .. tostring(where))
  for i = 1, #want do same(want[i], got[i], what .. " output " .. i, opts.tol) end
end

--- op fails on both devices with the same code and message.
local function check_error(what, op, inputs, attrs, fragment)
  if type(attrs) == "string" then attrs, fragment = nil, attrs end
  cases = cases + 1
  local ok1, e1 = pcall(run_on, CPU0, op, inputs, attrs)
  local ok2, e2 = pcall(run_on, GPU0, op, inputs, attrs)
  assert(not ok1 and not ok2, what .. ": expected both to fail (cpu " .. tostring(ok1) .. ", gpu " .. tostring(ok2) .. ")")
  assert(tfdev.error.is(e1) and tfdev.error.is(e2), what .. ": " .. tostring(e1) .. " / " .. tostring(e2))
  assert.are.equal(e1.code, e2.code, what .. ": " .. e1.message .. " / " .. e2.message)
  assert.are.equal(e1.message, e2.message, what)
  if fragment then assert(e2.message:find(fragment, 1, true), what .. ": " .. e2.message) end
end

local describe_or_skip = backend_ready() and describe or function(name)
  describe(name, function()
    pending("backend " .. BACKEND .. " has no device here (TFDEV_BACKENDS=" .. tostring(os.getenv("TFDEV_BACKENDS")) .. ")")
  end)
end

describe_or_skip("device kernels on " .. BACKEND .. " against the CPU kernels", function()
  after_each(function() tfdev.factory.reset() end)

  describe("elementwise", function()
    local float_ops = { "Neg", "Abs", "Square", "Exp", "Sigmoid", "Tanh", "Relu", "Relu6", "Elu", "Selu", "Softplus",
      "Reciprocal", "LeakyRelu" }
    local positive_ops = { "Log", "Sqrt", "Rsqrt" }
    it("unary float math and activations, float32 and float64, scalars, empty and 1-element tensors", function()
      for _, dt in ipairs { "float32", "float64" } do
        for _, dims in ipairs { { 3, 4 }, {}, { 0, 3 }, { 1 }, { 2, 3, 5 } } do
          for _, op in ipairs(float_ops) do
            check(op .. " " .. dt, op, { rand(dt, dims, -8, 8) }, op == "LeakyRelu" and { alpha = 0.3 } or nil)
          end
          for _, op in ipairs(positive_ops) do
            check(op .. " " .. dt, op, { rand(dt, dims, 0.01, 9) })
            check(op .. " of negatives " .. dt, op, { rand(dt, dims, -3, -0.5) })
          end
        end
      end
      check("Softplus at its thresholds", "Softplus", { T({ -40, -14, -13.9, 0, 13.9, 14, 40 }, "float32") })
      check("Relu of NaN", "Relu", { T({ 0 / 0, -1, 2 }, "float32") })
    end)

    it("unary integer math, int64 on the device and int32 on the host", function()
      for _, dt in ipairs { "int64", "int32" } do
        for _, op in ipairs { "Neg", "Abs", "Square", "Relu", "Relu6" } do
          check(op .. " " .. dt, op, { rand(dt, { 4, 5 }, -20, 20) })
          check(op .. " " .. dt .. " scalar", op, { rand(dt, {}, -20, 20) })
        end
      end
      check("LogicalNot", "LogicalNot", { rand("bool", { 3, 4 }) })
    end)

    -- issue 26's math family (k_math.c) on the device: the same values as the CPU kernel, NaN where
    -- it gives NaN, int64 on the device and int32 (and uint8) by the CPU kernel on the host.
    describe("the math family", function()
      local NAN, INF = 0 / 0, math.huge
      local function with_specials(dt, dims, lo, hi)
        local t = rand(dt, dims, lo, hi):totable()
        local v = flat(t)
        local sp = { NAN, INF, -INF, 0, -0.0, 0.5, -0.5, 1.5, -2.5 }
        for i = 1, math.min(#v, #sp) do v[i] = sp[i] end
        return tfdev.tensor { dtype = dt, shape = dims, data = v }
      end
      it("unary float math, float32 and float64, in and out of each domain, scalars and empty tensors", function()
        local ops = { Acos = { -0.99, 0.99 }, Asin = { -0.99, 0.99 }, Atanh = { -0.99, 0.99 }, Acosh = { 1, 9 },
          Asinh = { -9, 9 }, Atan = { -9, 9 }, Cosh = { -9, 9 }, Sinh = { -9, 9 }, Tan = { -1.5, 1.5 },
          Erf = { -3, 3 }, Expm1 = { -9, 9 }, Log1p = { -0.99, 9 }, Round = { -9, 9 }, Sign = { -9, 9 },
          Floor = { -9, 9 }, Ceil = { -9, 9 }, Sin = { -9, 9 }, Cos = { -9, 9 } }
        for _, dt in ipairs { "float32", "float64" } do
          for op, range in pairs(ops) do
            for _, dims in ipairs { { 3, 4 }, {}, { 0, 3 }, { 2, 3, 5 } } do
              check(op .. " " .. dt, op, { rand(dt, dims, range[1], range[2]) })
            end
            check(op .. " outside its domain " .. dt, op, { rand(dt, { 4, 5 }, -30, 30) })
            check(op .. " of NaN, infinities, zeros and halves " .. dt, op, { with_specials(dt, { 3, 3 }, -3, 3) })
          end
        end
        check("Round halves to even", "Round", { T({ -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5 }, "float32") })
      end)

      it("Round and Sign of integers, int64 on the device and int32 on the host", function()
        for _, dt in ipairs { "int64", "int32" } do
          for _, op in ipairs { "Round", "Sign" } do
            check(op .. " " .. dt, op, { rand(dt, { 4, 5 }, -20, 20) })
            check(op .. " " .. dt .. " scalar", op, { rand(dt, {}, -20, 20) })
            check(op .. " " .. dt .. " empty", op, { rand(dt, { 0, 2 }) })
          end
        end
        check("Sign of int64's extremes", "Sign", { T({ math.mininteger, math.maxinteger, 0 }, "int64") })
      end)

      it("IsNan, IsInf and IsFinite, bool out", function()
        for _, dt in ipairs { "float32", "float64" } do
          for _, op in ipairs { "IsNan", "IsInf", "IsFinite" } do
            check(op .. " " .. dt, op, { with_specials(dt, { 3, 4 }, -9, 9) })
            check(op .. " scalar " .. dt, op, { T(NAN, dt) })
            check(op .. " empty " .. dt, op, { rand(dt, { 0, 3 }) })
          end
        end
      end)

      it("Div, DivNoNan, Mod, BitwiseAnd and Atan2 with numpy broadcasting, and integer division by zero", function()
        local pairs_ = { { { 2, 3 }, { 2, 3 } }, { { 3, 1, 5 }, { 1, 4, 1 } }, { {}, { 2, 3 } }, { { 2, 3 }, {} },
          { { 0, 3 }, { 1, 3 } }, { { 4, 1 }, { 3 } } }
        for _, dt in ipairs { "float32", "float64", "int64", "int32" } do
          local int = dt:sub(1, 3) == "int"
          for _, pair in ipairs(pairs_) do
            local tag = dt .. " " .. table.concat(pair[1], "x") .. " with " .. table.concat(pair[2], "x")
            if int then
              local b = rand(dt, pair[2], 1, 9)
              b = run_on(CPU0, "Select", { rand("bool", pair[2]), b, run_on(CPU0, "Neg", { b })[1] })[1]
              check("Div " .. tag, "Div", { rand(dt, pair[1], -50, 50), b })
              check("Mod " .. tag, "Mod", { rand(dt, pair[1], -50, 50), b })
              check("BitwiseAnd " .. tag, "BitwiseAnd", { rand(dt, pair[1], -99, 99), rand(dt, pair[2], -99, 99) })
            else
              check("Div " .. tag, "Div", { rand(dt, pair[1]), rand(dt, pair[2], 0.5, 3) })
              check("Mod " .. tag, "Mod", { rand(dt, pair[1], -9, 9), rand(dt, pair[2], -3, 3) })
              local b = run_on(CPU0, "Round", { rand(dt, pair[2], -1, 1) })[1] -- -1, 0 and 1
              check("DivNoNan " .. tag, "DivNoNan", { with_specials(dt, pair[1], -9, 9), b })
              check("Atan2 " .. tag, "Atan2", { with_specials(dt, pair[1], -9, 9), with_specials(dt, pair[2], -9, 9) })
              check("Div by zero " .. tag, "Div", { with_specials(dt, pair[1], -9, 9), b })
            end
          end
          if int then
            check_error("Div by zero " .. dt, "Div", { rand(dt, { 2, 3 }), T({ 1, 0, 2 }, dt) }, "Integer division by zero")
            check_error("Mod by zero " .. dt, "Mod", { rand(dt, { 2, 3 }), T(0, dt) }, "Integer division by zero")
            check("Div by zero into an empty output " .. dt, "Div", { rand(dt, { 0, 3 }), T({ 1, 0, 2 }, dt) })
            check_error("Div of mismatched shapes " .. dt, "Div", { rand(dt, { 2, 3 }), rand(dt, { 2 }, 1, 5) },
              "Incompatible shapes")
          end
        end
        check("Div and Mod of int64's lowest by -1", "Div", { T({ math.mininteger, 7 }, "int64"), T({ -1, -1 }, "int64") })
        check("Mod of int64's lowest by -1", "Mod", { T({ math.mininteger, -7 }, "int64"), T({ -1, 2 }, "int64") })
        check("Div of uint8 (host)", "Div", { rand("uint8", { 2, 3 }, 0, 200), rand("uint8", { 3 }, 1, 9) })
        check("BitwiseAnd of uint8 (host)", "BitwiseAnd", { rand("uint8", { 2, 3 }, 0, 255), rand("uint8", { 3 }, 0, 255) })
      end)

      it("ClipByValue over every dtype it takes, NaNs kept, and its refusal", function()
        for _, dt in ipairs { "float32", "float64", "int64", "int32", "uint8" } do
          local x = rand(dt, { 3, 4 }, 0, 20)
          check("ClipByValue scalar bounds " .. dt, "ClipByValue", { x, rand(dt, {}, 3, 6), rand(dt, {}, 12, 15) })
          check("ClipByValue shaped bounds " .. dt, "ClipByValue", { x, rand(dt, { 3, 4 }, 0, 9), rand(dt, {}, 10, 15) })
          check("ClipByValue both shaped " .. dt, "ClipByValue", { x, rand(dt, { 3, 4 }, 0, 9), rand(dt, { 3, 4 }, 5, 20) })
          check("ClipByValue empty " .. dt, "ClipByValue", { rand(dt, { 0, 4 }), rand(dt, {}, 1, 2), rand(dt, {}, 3, 4) })
        end
        for _, dt in ipairs { "float32", "float64" } do
          check("ClipByValue of NaN and NaN bounds " .. dt, "ClipByValue",
            { with_specials(dt, { 3, 3 }, -9, 9), T(NAN, dt), tfdev.tensor { dtype = dt, shape = { 3, 3 },
              data = { 1, NAN, 2, 3, NAN, 4, 5, 6, 7 } } })
        end
        check_error("ClipByValue of a bad bound", "ClipByValue",
          { rand("float32", { 3, 4 }), rand("float32", { 4 }), rand("float32", {}) }, "clip_value_min shape: [4]")
      end)

      it("LogSoftmax along the last axis, and its refusal of a scalar", function()
        for _, dt in ipairs { "float32", "float64" } do
          for _, dims in ipairs { { 3, 5 }, { 7 }, { 2, 3, 4 }, { 0, 4 }, { 4, 0 }, { 2, 1 } } do
            check("LogSoftmax " .. dt .. " " .. table.concat(dims, "x"), "LogSoftmax", { rand(dt, dims, -9, 9) })
          end
          check("LogSoftmax with infinities " .. dt, "LogSoftmax", { T({ { -INF, 0, 1 }, { INF, 0, 1 } }, dt) })
        end
        check_error("LogSoftmax of a scalar", "LogSoftmax", { rand("float32", {}) }, "logits must have >= 1 dimension")
      end)
    end)

    local shape_pairs = { { { 2, 3 }, { 2, 3 } }, { { 3, 1, 5 }, { 1, 4, 1 } }, { {}, { 2, 3 } }, { { 2, 3 }, {} },
      { { 0, 3 }, { 1, 3 } }, { { 4, 1 }, { 3 } }, { { 1 }, { 1 } }, { { 2, 1, 3, 1 }, { 5, 1, 4 } } }
    it("binary arithmetic with numpy broadcasting, every number dtype", function()
      for _, dt in ipairs { "float32", "float64", "int64", "int32" } do
        local int = dt:sub(1, 3) == "int"
        for _, pair in ipairs(shape_pairs) do
          local tag = dt .. " " .. table.concat(pair[1], "x") .. " with " .. table.concat(pair[2], "x")
          for _, op in ipairs { "Add", "AddV2", "Sub", "Mul", "Maximum", "Minimum", "SquaredDifference" } do
            check(op .. " " .. tag, op, { rand(dt, pair[1]), rand(dt, pair[2]) })
          end
          if int then
            check("Pow " .. tag, "Pow", { rand(dt, pair[1], -4, 4), rand(dt, pair[2], 0, 5) })
            -- non-zero divisors of both signs
            local b = rand(dt, pair[2], 1, 9)
            local neg = rand("bool", pair[2])
            b = run_on(CPU0, "Select", { neg, b, run_on(CPU0, "Neg", { b })[1] })[1]
            check("FloorDiv " .. tag, "FloorDiv", { rand(dt, pair[1], -50, 50), b })
            check("FloorMod " .. tag, "FloorMod", { rand(dt, pair[1], -50, 50), b })
          else
            check("RealDiv " .. tag, "RealDiv", { rand(dt, pair[1]), rand(dt, pair[2], 0.5, 3) })
            check("Pow " .. tag, "Pow", { rand(dt, pair[1], 0.1, 3), rand(dt, pair[2], -2, 2) })
            check("FloorDiv " .. tag, "FloorDiv", { rand(dt, pair[1], -9, 9), rand(dt, pair[2], 0.5, 3) })
            check("FloorMod " .. tag, "FloorMod", { rand(dt, pair[1], -9, 9), rand(dt, pair[2], -3, -0.5) })
          end
        end
      end
    end)

    it("comparisons and logic, bool out", function()
      for _, dt in ipairs { "float32", "float64", "int64", "int32" } do
        for _, pair in ipairs(shape_pairs) do
          for _, op in ipairs { "Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual" } do
            check(op .. " " .. dt, op, { rand(dt, pair[1], -2, 2), rand(dt, pair[2], -2, 2) })
          end
        end
      end
      for _, pair in ipairs(shape_pairs) do
        for _, op in ipairs { "Equal", "NotEqual", "LogicalAnd", "LogicalOr" } do
          check(op .. " bool", op, { rand("bool", pair[1]), rand("bool", pair[2]) })
        end
      end
      check_error("Equal of uint8 (no CPU kernel either)", "Equal", { rand("uint8", { 4 }, 0, 3), rand("uint8", { 4 }, 0, 3) },
        "no kernel for dtype uint8")
      check("Equal of incompatible shapes without the error", "Equal", { rand("float32", { 2, 3 }), rand("float32", { 4 }) },
        { incompatible_shape_error = false })
      check("NotEqual of incompatible shapes without the error", "NotEqual",
        { rand("int64", { 2, 3 }), rand("int64", { 4 }) }, { incompatible_shape_error = false })
    end)

    it("Select (scalar, same-shape and vector conditions) and SelectV2 (three-way broadcasting)", function()
      for _, dt in ipairs { "float32", "int64", "bool", "float64", "int32" } do
        check("Select same shape " .. dt, "Select", { rand("bool", { 3, 4 }), rand(dt, { 3, 4 }), rand(dt, { 3, 4 }) })
        check("Select scalar " .. dt, "Select", { rand("bool", {}), rand(dt, { 3, 4 }), rand(dt, { 3, 4 }) })
        check("Select vector " .. dt, "Select", { rand("bool", { 3 }), rand(dt, { 3, 4, 2 }), rand(dt, { 3, 4, 2 }) })
        check("SelectV2 " .. dt, "SelectV2", { rand("bool", { 3, 1, 5 }), rand(dt, { 1, 4, 1 }), rand(dt, { 5 }) })
        check("SelectV2 empty " .. dt, "SelectV2", { rand("bool", { 0, 1 }), rand(dt, { 1, 4 }), rand(dt, {}) })
      end
      check_error("Select of float16 (no CPU kernel either)", "Select",
        { rand("bool", { 4 }), rand("float16", { 4 }), rand("float16", { 4 }) }, "no kernel for dtype float16")
    end)

    it("AddN, BiasAdd, Softmax and Prelu", function()
      for _, dt in ipairs { "float32", "float64", "int64", "int32" } do
        check("AddN of 1 " .. dt, "AddN", { rand(dt, { 3, 4 }) })
        check("AddN of 3 " .. dt, "AddN", { rand(dt, { 3, 4 }), rand(dt, { 3, 4 }), rand(dt, { 3, 4 }) })
        check("AddN empty " .. dt, "AddN", { rand(dt, { 0, 2 }), rand(dt, { 0, 2 }) })
        check("BiasAdd " .. dt, "BiasAdd", { rand(dt, { 2, 3, 4 }), rand(dt, { 4 }) })
      end
      for _, dt in ipairs { "float32", "float64" } do
        for _, dims in ipairs { { 3, 5 }, { 5 }, { 2, 0 }, { 0, 3 }, { 2, 3, 1 } } do
          check("Softmax " .. dt .. " " .. table.concat(dims, "x"), "Softmax", { rand(dt, dims, -5, 5) })
        end
      end
      for _, alpha in ipairs { { 5 }, { 1, 1, 5 }, { 4, 5 }, { 1 }, { 1, 1, 1, 1, 5 } } do
        check("Prelu alpha " .. table.concat(alpha, "x"), "Prelu",
          { rand("float32", { 2, 3, 4, 5 }), rand("float32", alpha, 0, 1) })
      end
    end)

    it("Cast between every dtype pair it takes, int32 and its host memory included", function()
      local inputs = { float32 = rand("float32", { 3, 4 }, -300, 300), float64 = rand("float64", { 3, 4 }, -300, 300),
        int32 = rand("int32", { 3, 4 }, -300, 300), int64 = rand("int64", { 3, 4 }, -300, 300),
        bool = rand("bool", { 3, 4 }), uint8 = rand("uint8", { 3, 4 }, 0, 255),
        float16 = rand("float16", { 3, 4 }, -300, 300) }
      for from, x in pairs(inputs) do
        for to in pairs(inputs) do check("Cast " .. from .. " to " .. to, "Cast", { x }, { DstT = to }) end
      end
      check("Cast of NaN and out-of-range floats to int32", "Cast", { T({ 0 / 0, 3e9, -3e9, 2.7, -2.7 }, "float32") },
        { DstT = "int32" })
    end)

    it("refuses what the CPU kernel refuses, with its words", function()
      check_error("Add of incompatible shapes", "Add", { rand("float32", { 2, 3 }), rand("float32", { 4 }) })
      check_error("Equal of incompatible shapes", "Equal", { rand("float32", { 2, 3 }), rand("float32", { 4 }) })
      check_error("int32 FloorDiv by zero", "FloorDiv", { T({ 1, 2 }), T({ 1, 0 }) }, "Integer division by zero")
      check_error("int32 Pow to a negative power", "Pow", { T({ 1, 2 }), T({ 1, -1 }) }, "negative integer powers")
      check_error("BiasAdd of the wrong size", "BiasAdd", { rand("float32", { 2, 3 }), rand("float32", { 4 }) })
      check_error("Softmax of a scalar", "Softmax", { rand("float32", {}) }, "rank >= 1")
      check_error("Select with mismatched branches", "Select", { rand("bool", { 2 }), rand("float32", { 2, 3 }),
        rand("float32", { 3, 2 }) }, "'then' and 'else' must have the same shape")
      check_error("Select with a bad condition", "Select", { rand("bool", { 3 }), rand("float32", { 2, 3 }),
        rand("float32", { 2, 3 }) }, "condition must be a scalar")
      check_error("AddN of different shapes", "AddN", { rand("float32", { 2, 3 }), rand("float32", { 3, 2 }) })
      check_error("Prelu with an alpha that does not broadcast", "Prelu", { rand("float32", { 2, 3 }), rand("float32", { 2 }) })
      check_error("Prelu with an alpha broadcast another way", "Prelu", { rand("float32", { 2, 3 }), rand("float32", { 2, 1 }) })
    end)
  end)

  describe("reductions", function()
    local axes_cases = { {}, { 0 }, { 1 }, { -1 }, { 0, 2 }, { 2, 0 }, { 0, 1, 2 }, { 1, 2 }, { 0, 1 } }
    it("Sum, Mean, Max, Min, Prod over any axes, keep_dims, every number dtype", function()
      for _, dt in ipairs { "float32", "float64", "int64", "int32" } do
        local x = rand(dt, { 3, 4, 5 }, -3, 3)
        for _, op in ipairs { "Sum", "Mean", "Max", "Min", "Prod" } do
          for _, axes in ipairs(axes_cases) do
            for _, keep in ipairs { false, true } do
              local tag = op .. " " .. dt .. " axes {" .. table.concat(axes, ",") .. "}" .. (keep and " kept" or "")
              check(tag, op, { x, tfdev.tensor { dtype = "int32", shape = { #axes }, data = axes } }, { keep_dims = keep })
            end
          end
          check(op .. " " .. dt .. " int64 axes, a scalar axis", op, { x, T(-2, "int64") })
          check(op .. " " .. dt .. " of a scalar", op, { rand(dt, {}), T({}, "int32") })
          check(op .. " " .. dt .. " of one element", op, { rand(dt, { 1, 1 }), T({ 0, 1 }) })
          check(op .. " " .. dt .. " with size-1 axes between", op, { rand(dt, { 2, 1, 3, 1, 2 }), T({ 0, 4 }) })
          check(op .. " " .. dt .. " non-adjacent axes of rank 4", op, { rand(dt, { 2, 3, 2, 3 }), T({ 1, 3 }) })
          if op ~= "Max" and op ~= "Min" then
            check(op .. " " .. dt .. " over an empty axis", op, { rand(dt, { 3, 0, 2 }), T({ 1 }) })
          end
          check(op .. " " .. dt .. " of an empty kept axis", op, { rand(dt, { 0, 4 }), T({ 1 }) })
        end
      end
    end)

    it("All and Any (bool), EuclideanNorm (every number dtype) over any axes, keep_dims, empties", function()
      local b = rand("bool", { 3, 4, 5 })
      local sparse = tfdev.tensor { dtype = "bool", shape = { 3, 4, 5 }, data = (function()
        local d = {}
        for i = 1, 60 do d[i] = i % 17 == 0 end
        return d
      end)() }
      for _, axes in ipairs(axes_cases) do
        for _, keep in ipairs { false, true } do
          local tag = " axes {" .. table.concat(axes, ",") .. "}" .. (keep and " kept" or "")
          local ax = tfdev.tensor { dtype = "int32", shape = { #axes }, data = axes }
          for _, op in ipairs { "All", "Any" } do
            check(op .. tag, op, { b, ax }, { keep_dims = keep })
            check(op .. " mostly false" .. tag, op, { sparse, ax }, { keep_dims = keep })
          end
          for _, dt in ipairs { "float32", "float64", "int64", "int32" } do
            check("EuclideanNorm " .. dt .. tag, "EuclideanNorm", { rand(dt, { 3, 4, 5 }, -3, 3), ax }, { keep_dims = keep })
          end
        end
      end
      for _, op in ipairs { "All", "Any" } do
        check(op .. " over an empty axis", op, { rand("bool", { 3, 0, 2 }), T({ 1 }) })
        check(op .. " of an empty kept axis", op, { rand("bool", { 0, 4 }), T({ 1 }) })
        check(op .. " int64 axes", op, { b, T({ -1, 0 }, "int64") })
        check_error(op .. " over an axis out of range", op, { b, T({ 3 }) }, "Invalid reduction dimension 3")
      end
      assert.are.same({ true, true }, run_on(GPU0, "All", { rand("bool", { 2, 0 }), T({ 1 }) })[1]:totable()) -- TensorFlow's
      assert.are.same({ false, false }, run_on(GPU0, "Any", { rand("bool", { 2, 0 }), T({ 1 }) })[1]:totable())
      check("EuclideanNorm over an empty axis", "EuclideanNorm", { rand("float32", { 3, 0 }), T({ 1 }) })
      check("EuclideanNorm of a scalar", "EuclideanNorm", { rand("float64", {}), T({}, "int32") })
      check_error("EuclideanNorm over an axis out of range", "EuclideanNorm", { rand("float32", { 2 }), T({ 1 }) },
        "Invalid reduction dimension 1")
    end)

    it("Cumsum and Cumprod over every axis, exclusive and reverse, every number dtype", function()
      for _, dt in ipairs { "float32", "float64", "int64", "int32", "uint8", "float16" } do
        local x = rand(dt, { 3, 4, 5 }, 0, 3)
        for _, op in ipairs { "Cumsum", "Cumprod" } do
          for _, axis in ipairs { 0, 1, 2, -1, -3 } do
            for _, ex in ipairs { false, true } do
              for _, rev in ipairs { false, true } do
                check(string.format("%s %s axis %d%s%s", op, dt, axis, ex and " exclusive" or "", rev and " reverse" or ""), op,
                  { x, T(axis) }, { exclusive = ex, reverse = rev })
              end
            end
          end
          check(op .. " " .. dt .. " int64 axis", op, { x, T(1, "int64") })
          check(op .. " " .. dt .. " empty", op, { rand(dt, { 2, 0, 3 }), T(1) }, { exclusive = true })
        end
      end
      check("Cumprod int64 wraps", "Cumprod", { T({ 4294967296, 4294967296, 3 }, "int64"), T(0) })
      check_error("Cumsum over an axis out of range", "Cumsum", { rand("float32", { 2, 3 }), T(2) },
        "ScanOp: Expected scan axis in the range [-2, 2), but got 2")
      check_error("Cumsum over a vector of axes", "Cumsum", { rand("float32", { 2, 3 }), T({ 0 }) }, "axis must be a scalar")
    end)

    it("ArgMax, ArgMin and TopKV2", function()
      for _, dt in ipairs { "float32", "float64", "int64", "int32" } do
        local x = rand(dt, { 3, 4, 5 }, -2, 2) -- integers in [-2, 2]: many ties
        for _, op in ipairs { "ArgMax", "ArgMin" } do
          for _, axis in ipairs { 0, 1, 2, -1 } do
            for _, out in ipairs { "int64", "int32" } do
              check(op .. " " .. dt .. " axis " .. axis .. " " .. out, op, { x, T(axis) }, { output_type = out })
            end
          end
          check(op .. " " .. dt .. " int64 axis", op, { x, T(1, "int64") })
          check(op .. " " .. dt .. " empty", op, { rand(dt, { 0, 3 }), T(1) })
        end
        for _, k in ipairs { 0, 1, 3, 5 } do
          check("TopKV2 " .. dt .. " k " .. k, "TopKV2", { x, T(k) }, nil, { fetches = { "y:0", "y:1" } })
        end
        check("TopKV2 " .. dt .. " int64 indices", "TopKV2", { x, T(2) }, { index_type = "int64" },
          { fetches = { "y:0", "y:1" } })
      end
      check("TopKV2 with NaN", "TopKV2", { T({ 1, 0 / 0, 3, 3, -1 }, "float32"), T(3) }, nil, { fetches = { "y:0", "y:1" } })
    end)

    it("refuses what the CPU kernel refuses", function()
      local x = rand("float32", { 2, 3 })
      check_error("Sum over an axis out of range", "Sum", { x, T({ 2 }) }, "Invalid reduction dimension 2")
      check_error("Sum over an axis out of range, int64", "Sum", { x, T({ -3 }, "int64") }, "Invalid reduction dimension -3")
      check("Max of an empty set (-inf)", "Max", { rand("float32", { 2, 0 }), T({ 1 }) })
      check("Min of an empty set (+inf), int64", "Min", { rand("int64", { 0, 3 }), T({ 0 }) })
      check_error("ArgMax over an empty axis", "ArgMax", { rand("float32", { 2, 0 }), T(1) }, "is empty")
      check_error("ArgMax over an axis out of range", "ArgMax", { x, T(3) }, "Expected dimension in the range")
      check_error("TopKV2 with k too large", "TopKV2", { x, T(4) }, "input must have at least k columns")
      check_error("TopKV2 with k negative", "TopKV2", { x, T(-1) }, "Need k >= 0")
    end)
  end)

  describe("SparseReshape", function()
    it("moves every entry's coordinates to the new shape, resolving a -1, and hands equal shapes on", function()
      local ix = T({ { 0, 0, 1 }, { 0, 2, 3 }, { 1, 1, 0 }, { 1, 2, 3 } }, "int64")
      local fetches = { fetches = { "y:0", "y:1" } }
      for _, shape in ipairs { { 6, 4 }, { -1, 2 }, { 2, 12 }, { 24 }, { 2, 3, 4 }, { 4, -1, 1, 2 }, { 2, -1, 4 } } do
        check("SparseReshape to " .. table.concat(shape, ","), "SparseReshape",
          { ix, T({ 2, 3, 4 }, "int64"), T(shape, "int64") }, nil, fetches)
      end
      check("SparseReshape of no entries", "SparseReshape", { tfdev.tensor { dtype = "int64", shape = { 0, 3 } },
        T({ 2, 3, 4 }, "int64"), T({ 4, 6 }, "int64") }, nil, fetches)
      check("SparseReshape of a rank-0 sparse tensor to [1]", "SparseReshape",
        { tfdev.tensor { dtype = "int64", shape = { 3, 0 } }, T({}, "int64"), T({ 1 }, "int64") }, nil, fetches)
      check("SparseReshape with an index outside the shape (wrapping as the CPU's)", "SparseReshape",
        { T({ { 5, -1 } }, "int64"), T({ 2, 3 }, "int64"), T({ 3, 2 }, "int64") }, nil, fetches)
      check_error("SparseReshape to a different element count", "SparseReshape",
        { ix, T({ 2, 3, 4 }, "int64"), T({ 5, 5 }, "int64") }, "Input to reshape is a tensor with 24 dense values")
      check_error("SparseReshape with two -1", "SparseReshape", { ix, T({ 2, 3, 4 }, "int64"), T({ -1, -1 }, "int64") },
        "only one output dimension may be -1")
    end)
  end)

  describe("SparseFillEmptyRows", function()
    it("fills empty rows with the default, keeps each row's entries in order whatever the input's order", function()
      local all = { fetches = { "y:0", "y:1", "y:2", "y:3" } }
      local function entries(n, rows, rank) -- random entries, rows drawn at random (repeats, any order)
        local ix = {}
        for i = 1, n do
          ix[i] = { math.random(0, rows - 1) }
          for d = 2, rank do ix[i][d] = math.random(0, 5) end
        end
        return T(ix, "int64")
      end
      for _, dt in ipairs { "float32", "float64", "int64", "bool", "uint8", "float16", "int32" } do
        for _, rank in ipairs { 1, 2, 3 } do
          local n, rows = math.random(1, 12), math.random(1, 15)
          local dense = { rows }
          for d = 2, rank do dense[d] = 6 end
          check("SparseFillEmptyRows " .. dt .. " rank " .. rank, "SparseFillEmptyRows",
            { entries(n, rows, rank), rand(dt, { n }, 0, 9), T(dense, "int64"), rand(dt, {}, 0, 9) }, nil, all)
        end
      end
      local ordered = T({ { 0, 1 }, { 0, 3 }, { 2, 0 }, { 4, 4 } }, "int64")
      local v = T({ 1, 2, 3, 4 }, "float32")
      check("SparseFillEmptyRows ordered, empty rows between and after", "SparseFillEmptyRows",
        { ordered, v, T({ 6, 5 }, "int64"), T(-1, "float32") }, nil, all)
      check("SparseFillEmptyRows with every row full", "SparseFillEmptyRows",
        { T({ { 1, 0 }, { 0, 2 }, { 1, 1 }, { 0, 0 } }, "int64"), v, T({ 2, 3 }, "int64"), T(0, "float32") }, nil, all)
      local out = run_on(GPU0, "SparseFillEmptyRows", { T({ { 2, 0 }, { 0, 1 }, { 2, 1 } }, "int64"), T({ 5, 6, 7 }, "float32"),
        T({ 4, 2 }, "int64"), T(-1, "float32") }, nil, all.fetches)
      assert.are.same({ { 0, 1 }, { 1, 0 }, { 2, 0 }, { 2, 1 }, { 3, 0 } }, out[1]:totable())
      assert.are.same({ 6, -1, 5, 7, -1 }, out[2]:totable())
      assert.are.same({ false, true, false, true }, out[3]:totable())
      assert.are.same({ 2, 0, 3 }, out[4]:totable())
      check("SparseFillEmptyRows of no entries (on the host)", "SparseFillEmptyRows",
        { tfdev.tensor { dtype = "int64", shape = { 0, 2 } }, T({}, "float32"), T({ 3, 2 }, "int64"), T(7, "float32") }, nil, all)
      check_error("SparseFillEmptyRows with a row past the shape", "SparseFillEmptyRows",
        { ordered, v, T({ 4, 5 }, "int64"), T(0, "float32") }, "indices(3, 0) is invalid: 4 >= 4")
      check_error("SparseFillEmptyRows with a negative row", "SparseFillEmptyRows",
        { T({ { 0 }, { -1 } }, "int64"), T({ 1, 2 }, "float32"), T({ 4 }, "int64"), T(0, "float32") }, "indices(1, 0) is invalid")
      check_error("SparseFillEmptyRows with values of another length", "SparseFillEmptyRows",
        { ordered, T({ 1, 2 }, "float32"), T({ 6, 5 }, "int64"), T(0, "float32") }, "must match the first dimension")
      check_error("SparseFillEmptyRows with no rows but entries", "SparseFillEmptyRows",
        { ordered, v, T({ 0, 5 }, "int64"), T(0, "float32") }, "dense_shape[0] = 0")
    end)
  end)

  describe("ragged ops (dk_ragged.c)", function()
    local L = function(v) return T(v, "int64") end
    it("RaggedGather: nested splits, values with inner dimensions, indices of any rank, every dtype, refusals", function()
      -- params [[[1, 2], [3]], [], [[4, 5, 6]], [[7], [8, 9]]] as splits [0, 2, 2, 3, 5], [0, 2, 3, 6, 7, 9]
      local outer, inner = { 0, 2, 2, 3, 5 }, { 0, 2, 3, 6, 7, 9 }
      for _, dt in ipairs { "float32", "float64", "int64", "bool", "float16", "int32" } do
        for _, sdt in ipairs { "int64", "int32" } do
          local vals = rand(dt, { 9, 2 }, 0, 9)
          check("RaggedGather " .. dt .. " splits " .. sdt, "RaggedGather",
            { T(outer, sdt), T(inner, sdt), vals, T({ 3, 0, 0, 1, 2 }) }, { PARAMS_RAGGED_RANK = 2, OUTPUT_RAGGED_RANK = 2 },
            { fetches = { "y:0", "y:1", "y:2" } })
          check("RaggedGather " .. dt .. " 2-D indices", "RaggedGather", { T(inner, sdt), rand(dt, { 9 }, 0, 9), L({ { 4, 0 }, { 2, 2 } }) },
            { PARAMS_RAGGED_RANK = 1, OUTPUT_RAGGED_RANK = 2 }, { fetches = { "y:0", "y:1", "y:2" } })
        end
      end
      check("RaggedGather of empty rows only", "RaggedGather", { L(outer), rand("float32", { 5 }), T({ 1, 1 }) },
        { PARAMS_RAGGED_RANK = 1, OUTPUT_RAGGED_RANK = 1 }, { fetches = { "y:0", "y:1" } })
      check_error("RaggedGather with an index past the rows", "RaggedGather", { L(outer), rand("float32", { 5 }), T({ 4 }) },
        { PARAMS_RAGGED_RANK = 1, OUTPUT_RAGGED_RANK = 1 }, "indices[0] = 4 is not in [0, 4)")
      check_error("RaggedGather with unsorted splits", "RaggedGather", { L({ 0, 3, 2, 5 }), rand("float32", { 5 }), T({ 0 }) },
        { PARAMS_RAGGED_RANK = 1, OUTPUT_RAGGED_RANK = 1 }, "Ragged splits must be sorted")
    end)

    it("RaggedTensorToTensor: both partitions, cut and padded rows, inner dimensions, broadcast defaults", function()
      local function attrs(types) return { row_partition_types = types, num_row_partition_tensors = #types } end
      local splits, ids = { 0, 3, 3, 7, 9 }, { 0, 0, 0, 2, 2, 2, 2, 3, 3 }
      for _, dt in ipairs { "float32", "float64", "int64", "uint8", "bool", "int32" } do
        local vals = rand(dt, { 9 }, 0, 9)
        for _, shape in ipairs { { 4, 4 }, { 2, 2 }, { 5, 6 }, { -1, -1 } } do
          check("RaggedTensorToTensor " .. dt .. " splits to " .. table.concat(shape, ","), "RaggedTensorToTensor",
            { L(shape), vals, rand(dt, {}, 0, 9), L(splits) }, attrs { "ROW_SPLITS" })
          check("RaggedTensorToTensor " .. dt .. " row ids to " .. table.concat(shape, ","), "RaggedTensorToTensor",
            { T(shape), vals, rand(dt, {}, 0, 9), T(5), T(ids) }, attrs { "FIRST_DIM_SIZE", "VALUE_ROWIDS" })
        end
      end
      local v3 = rand("float32", { 9, 3 })
      check("RaggedTensorToTensor inner dims, default broadcast along them", "RaggedTensorToTensor",
        { L(-1), v3, rand("float32", { 3 }), L(splits) }, attrs { "ROW_SPLITS" })
      check("RaggedTensorToTensor ragged rank 2", "RaggedTensorToTensor",
        { L({ -1, -1, -1 }), rand("float32", { 6 }), T(0, "float32"), L({ 0, 2, 2, 3 }), L({ 0, 2, 3, 6 }) },
        attrs { "ROW_SPLITS", "ROW_SPLITS" })
      check("RaggedTensorToTensor to an empty tensor", "RaggedTensorToTensor",
        { L({ 0, 4 }), rand("float32", { 9 }), T(0, "float32"), L(splits) }, attrs { "ROW_SPLITS" })
      check_error("RaggedTensorToTensor with a bad split", "RaggedTensorToTensor",
        { L({ -1, -1 }), rand("float32", { 9 }), T(0, "float32"), L({ 0, 3, 2, 9 }) }, attrs { "ROW_SPLITS" },
        "Invalid row split size.")
    end)

    it("RaggedRange computes on the host beside a GPU, its values moved to the GPU", function()
      check("RaggedRange int64", "RaggedRange", { L({ 2, 5, 8 }), L({ 3, 5, 12 }), L(1) }, nil, { fetches = { "y:0", "y:1" } })
      check("RaggedRange float32, int32 splits", "RaggedRange", { T({ 0, 1 }, "float32"), T({ 1, 2.5 }, "float32"),
        T(0.1, "float32") }, { Tsplits = "int32" }, { fetches = { "y:0", "y:1" } })
      check("RaggedRange int32", "RaggedRange", { T(0), T({ 3, 5, 2 }), T(1) }, nil, { fetches = { "y:0", "y:1" } })
      check_error("RaggedRange with a zero delta", "RaggedRange", { T({ 0, 1 }), T({ 3, 4 }), T({ 1, 0 }) }, "Requires delta != 0")
    end)
  end)

  describe("complex64 and the transforms (dk_spectral.c)", function()
    it("Complex, Real, Imag, ComplexAbs, Neg and the broadcasting arithmetic", function()
      local x, y = rand("complex64", { 2, 3, 4 }), rand("complex64", { 2, 3, 4 })
      for _, shape in ipairs { { 2, 3, 4 }, { 3, 1 }, { 4 }, {} } do
        local b = rand("complex64", shape)
        for _, op in ipairs { "Add", "AddV2", "Sub", "Mul", "RealDiv" } do
          check(op .. " by " .. #shape .. "-d", op, { x, b })
          check(op .. " reversed by " .. #shape .. "-d", op, { b, x })
        end
        check("Complex by " .. #shape .. "-d", "Complex", { rand("float32", { 2, 3, 4 }), rand("float32", shape) })
      end
      for _, op in ipairs { "Real", "Imag", "Neg" } do
        check(op, op, { x })
        check(op .. " empty", op, { rand("complex64", { 0, 3 }) })
      end
      check("ComplexAbs", "ComplexAbs", { x }, nil, { tol = 1e-6 })
      check("Mul of an empty tensor", "Mul", { rand("complex64", { 0, 4 }), rand("complex64", { 4 }) })
      -- division by zero, by a purely imaginary and by a purely real number: Smith's two branches
      local z = tfdev.tensor({ { 0, 0 }, { 0, 2 }, { -3, 0 }, { 1e-20, 1e20 }, { 5, -5 } }, "complex64")
      check("RealDiv by special values", "RealDiv", { tfdev.tensor({ { 1, 2 }, { 3, 4 }, { -1, 1 }, { 2, 2 }, { 0, 1 } }, "complex64"), z },
        nil, { tol = 1e-7 }) -- NaN where TensorFlow gives NaN (0 / 0)
      check("Mul and Add of the same tensor", "Mul", { y, y })
      check_error("Add of incompatible shapes", "Add", { x, rand("complex64", { 5 }) }, "Incompatible shapes")
    end)

    it("FFT and IFFT as products with the DFT matrix, longer transforms on the host", function()
      for _, n in ipairs { 1, 2, 5, 8, 12, 33, 64 } do
        local x = rand("complex64", { 3, n })
        check("FFT of length " .. n, "FFT", { x }, nil, { tol = 1e-3 })
        check("IFFT of length " .. n, "IFFT", { x }, nil, { tol = 1e-4 })
      end
      check("FFT of rank 3", "FFT", { rand("complex64", { 2, 2, 16 }) }, nil, { tol = 1e-3 })
      check("FFT of length 1100 (on the host)", "FFT", { rand("complex64", { 1, 1100 }) }, nil, { tol = 1e-3 })
      check("FFT of an empty batch", "FFT", { rand("complex64", { 0, 8 }) })
      check_error("FFT of a scalar", "FFT", { rand("complex64", {}) }, "Input must have rank of at least 1")
      for _, n in ipairs { 1, 2, 5, 8, 9, 64 } do
        check("RFFT of length " .. n, "RFFT", { rand("float32", { 3, n }), T({ n }) }, nil, { tol = 1e-3 })
        check("IRFFT to length " .. n, "IRFFT", { rand("complex64", { 3, n // 2 + 1 }), T({ n }) }, nil, { tol = 1e-4 })
      end
      check("RFFT cropping 10 to 6", "RFFT", { rand("float32", { 2, 2, 10 }), T({ 6 }) }, nil, { tol = 1e-3 })
      check("IRFFT reading 4 of 7 bins", "IRFFT", { rand("complex64", { 2, 7 }), T({ 7 }) }, nil, { tol = 1e-4 })
      check("RFFT of length 1500 (on the host)", "RFFT", { rand("float32", { 1, 1500 }), T({ 1500 }) }, nil, { tol = 1e-3 })
      check("RFFT at length 0 of an empty signal", "RFFT", { rand("float32", { 2, 0 }), T({ 0 }) })
      check_error("RFFT of too short a signal", "RFFT", { rand("float32", { 2, 4 }), T({ 8 }) }, "must have length of at least 8")
      check_error("IRFFT of too few bins", "IRFFT", { rand("complex64", { 2, 3 }), T({ 8 }) }, "must have length of at least 5")
    end)
  end)

  describe("data movement", function()
    local dtypes = { "float32", "int64", "bool", "float16", "uint8", "float64", "int32", "complex64" }
    it("Transpose, ConcatV2, Pack, Unpack, Split, SplitV, Tile over every dtype", function()
      for _, dt in ipairs(dtypes) do
        local x = rand(dt, { 2, 3, 4 }, 0, 9)
        check("Transpose " .. dt, "Transpose", { x, T({ 2, 0, 1 }) })
        check("Transpose int64 perm " .. dt, "Transpose", { x, T({ 1, 0, 2 }, "int64") })
        check("Transpose empty " .. dt, "Transpose", { rand(dt, { 0, 3 }, 0, 9), T({ 1, 0 }) })
        check("Transpose scalar " .. dt, "Transpose", { rand(dt, {}, 0, 9), T({}) })
        for _, axis in ipairs { 0, 1, 2, -1 } do
          local a, b = rand(dt, { 2, 3, 4 }, 0, 9), rand(dt, { 2, 3, 4 }, 0, 9)
          check("ConcatV2 axis " .. axis .. " " .. dt, "ConcatV2", { a, x, b, T(axis) })
          check("Concat axis " .. axis .. " " .. dt, "Concat", { T(axis), a, x, b })
          check("Pack axis " .. axis .. " " .. dt, "Pack", { a, x, b }, { axis = axis })
          local n = ({ [0] = 2, 3, 4, [-1] = 4 })[axis]
          local fetches = {}
          for i = 1, n do fetches[i] = "y:" .. (i - 1) end
          check("Unpack axis " .. axis .. " " .. dt, "Unpack", { x }, { axis = axis, num = n }, { fetches = fetches })
          check("Split axis " .. axis .. " " .. dt, "Split", { T(axis), x }, { num_split = n }, { fetches = fetches })
        end
        check("ConcatV2 with an empty part " .. dt, "ConcatV2", { x, rand(dt, { 2, 0, 4 }), T(1, "int64") })
        check("Concat with an empty part " .. dt, "Concat", { T(1), x, rand(dt, { 2, 0, 4 }) })
        check("Pack of scalars " .. dt, "Pack", { rand(dt, {}, 0, 9), rand(dt, {}, 0, 9) }, { axis = 0 })
        check("SplitV " .. dt, "SplitV", { x, T({ 1, -1, 2 }), T(2) }, { num_split = 3 },
          { fetches = { "y:0", "y:1", "y:2" } })
        check("SplitV int64 sizes " .. dt, "SplitV", { x, T({ 2, 0, 1 }, "int64"), T(1) }, { num_split = 3 },
          { fetches = { "y:0", "y:1", "y:2" } })
        check("Tile " .. dt, "Tile", { x, T({ 2, 1, 3 }) })
        check("Tile by zero " .. dt, "Tile", { x, T({ 2, 0, 3 }, "int64") })
        check("Tile of a scalar " .. dt, "Tile", { rand(dt, {}, 0, 9), T({}) })
      end
    end)

    it("BroadcastTo, DepthToSpace and SpaceToDepth over every dtype, and their refusals", function()
      for _, dt in ipairs(dtypes) do
        local x = rand(dt, { 3, 1, 4 }, 0, 9)
        check("BroadcastTo " .. dt, "BroadcastTo", { x, T({ 2, 3, 5, 4 }) })
        check("BroadcastTo int64 shape " .. dt, "BroadcastTo", { rand(dt, { 1 }, 0, 9), T({ 3, 2 }, "int64") })
        check("BroadcastTo empty " .. dt, "BroadcastTo", { x, T({ 3, 0, 4 }) })
        local img = rand(dt, { 2, 3, 2, 8 }, 0, 9)
        check("DepthToSpace " .. dt, "DepthToSpace", { img }, { block_size = 2 })
        check("SpaceToDepth " .. dt, "SpaceToDepth", { rand(dt, { 2, 6, 4, 3 }, 0, 9) }, { block_size = 2 })
        check("SpaceToDepth block 3 " .. dt, "SpaceToDepth", { rand(dt, { 1, 3, 6, 2 }, 0, 9) }, { block_size = 3 })
      end
      check_error("BroadcastTo to a smaller shape", "BroadcastTo", { rand("float32", { 3, 4 }), T({ 2, 4 }) },
        "Unable to broadcast tensor of shape [3,4] to tensor of shape [2,4]")
      check_error("DepthToSpace of a bad depth", "DepthToSpace", { rand("float32", { 1, 2, 2, 6 }) }, { block_size = 2 },
        "Input depth dimension 6 should be divisible by: 4")
      check_error("SpaceToDepth of rank 3", "SpaceToDepth", { rand("float32", { 2, 2, 2 }) }, { block_size = 2 },
        "input rank should be: 4 instead of: 3")
    end)

    it("SpaceToBatchND and BatchToSpaceND over every dtype, padded, cropped, high rank, and their refusals", function()
      local function pads(t, dt) return tfdev.tensor { dtype = dt or "int32", shape = { #t, 2 }, data = flat(t) } end
      for _, dt in ipairs(dtypes) do
        local x = rand(dt, { 2, 4, 6, 3 }, 0, 9)
        check("SpaceToBatchND " .. dt, "SpaceToBatchND", { x, T({ 2, 3 }), pads({ { 0, 0 }, { 0, 0 } }) })
        check("SpaceToBatchND padded " .. dt, "SpaceToBatchND", { x, T({ 2, 3 }), pads({ { 1, 1 }, { 2, 1 } }) })
        check("SpaceToBatchND int64 " .. dt, "SpaceToBatchND",
          { x, T({ 3 }, "int64"), pads({ { 1, 1 } }, "int64") })
        check("SpaceToBatchND depth dims " .. dt, "SpaceToBatchND",
          { rand(dt, { 2, 6, 2, 2 }, 0, 9), T({ 3 }), pads({ { 1, 2 } }) })
        check("SpaceToBatchND empty batch " .. dt, "SpaceToBatchND",
          { rand(dt, { 0, 4, 6, 1 }), T({ 2, 2 }), pads({ { 0, 0 }, { 0, 0 } }) })
        local g = rand(dt, { 12, 2, 3, 3 }, 0, 9)
        check("BatchToSpaceND " .. dt, "BatchToSpaceND", { g, T({ 2, 3 }), pads({ { 0, 0 }, { 0, 0 } }) })
        check("BatchToSpaceND cropped " .. dt, "BatchToSpaceND", { g, T({ 2, 3 }), pads({ { 1, 1 }, { 2, 1 } }) })
        check("BatchToSpaceND int64 " .. dt, "BatchToSpaceND", { g, T({ 4 }, "int64"), pads({ { 0, 3 } }, "int64") })
        check("BatchToSpaceND cropped to nothing " .. dt, "BatchToSpaceND",
          { g, T({ 2, 3 }), pads({ { 2, 2 }, { 0, 0 } }) })
      end
      check("SpaceToBatchND of no block dimensions", "SpaceToBatchND",
        { rand("float32", { 2, 3 }), tfdev.tensor { dtype = "int32", shape = { 0 }, data = {} },
          tfdev.tensor { dtype = "int32", shape = { 0, 2 }, data = {} } })
      -- six block dimensions: a walk of more dimensions than one launch takes, split on the host
      local hi = rand("float32", { 1, 4, 4, 4, 4, 4, 4, 2 })
      local six = T({ 2, 2, 2, 2, 2, 2 })
      check("SpaceToBatchND rank 8", "SpaceToBatchND", { hi, six, pads({ { 0, 0 }, { 0, 0 }, { 0, 0 }, { 0, 0 }, { 0, 0 }, { 0, 0 } }) })
      check("SpaceToBatchND rank 8 padded", "SpaceToBatchND",
        { hi, six, pads({ { 1, 1 }, { 0, 0 }, { 2, 0 }, { 0, 0 }, { 0, 2 }, { 0, 0 } }) })
      check("BatchToSpaceND rank 8 cropped", "BatchToSpaceND",
        { rand("float32", { 64, 2, 2, 2, 2, 2, 2, 2 }), six, pads({ { 1, 1 }, { 0, 0 }, { 2, 0 }, { 0, 0 }, { 0, 1 }, { 0, 0 } }) })
      check_error("SpaceToBatchND of a bad padding", "SpaceToBatchND",
        { rand("float32", { 1, 5, 2, 1 }), T({ 2, 2 }), pads({ { 0, 0 }, { 0, 0 } }) },
        "padded_shape[0]=5 is not divisible by block_shape[0]=2")
      check_error("BatchToSpaceND of a bad batch", "BatchToSpaceND",
        { rand("float32", { 5, 2, 2, 1 }), T({ 2, 2 }), pads({ { 0, 0 }, { 0, 0 } }) },
        "Input batch dimension (5) is not divisible by product of block sizes (4)")
      check_error("BatchToSpaceND of negative crops", "BatchToSpaceND",
        { rand("float32", { 4, 2, 2, 1 }), T({ 2, 2 }, "int64"), pads({ { 0, -1 }, { 0, 0 } }, "int64") },
        "Crops must be non-negative")
    end)

    it("ReverseV2 and Reverse over every dtype, negative and int64 axes, empties, scalars, and their refusals", function()
      for _, dt in ipairs(dtypes) do
        local x = rand(dt, { 2, 3, 4 }, 0, 9)
        for _, axes in ipairs { { 0 }, { 1 }, { 2 }, { -1 }, { 0, 2 }, { 2, 0, 1 }, {} } do
          check("ReverseV2 " .. table.concat(axes, ",") .. " " .. dt, "ReverseV2",
            { x, tfdev.tensor { dtype = "int32", shape = { #axes }, data = axes } })
        end
        check("ReverseV2 int64 axes " .. dt, "ReverseV2", { x, T({ -2, 0 }, "int64") })
        check("ReverseV2 empty " .. dt, "ReverseV2", { rand(dt, { 3, 0, 2 }), T({ 0, 1 }) })
        check("ReverseV2 scalar " .. dt, "ReverseV2", { rand(dt, {}, 0, 9), T({ 5 }) })
        check("Reverse " .. dt, "Reverse", { x, tfdev.tensor({ true, false, true }, "bool") })
        check("Reverse none " .. dt, "Reverse", { x, tfdev.tensor({ false, false, false }, "bool") })
      end
      check_error("ReverseV2 of an axis out of range", "ReverseV2", { rand("float32", { 2, 3 }), T({ 2 }) },
        "'axis'[0] = 2 is out of valid range [0, 2)")
      check_error("ReverseV2 of a repeated axis", "ReverseV2", { rand("float32", { 2, 3 }), T({ 1, -1 }, "int64") },
        "axis 1 specified more than once.")
      check_error("Reverse of too few dims", "Reverse", { rand("float32", { 2, 3 }), tfdev.tensor({ true }, "bool") },
        "'dims' must have the same number of values as 'input' has dimensions")
    end)

    it("MatrixBandPart over every dtype and band, batches, empties, and its refusals", function()
      for _, dt in ipairs(dtypes) do
        local x = rand(dt, { 2, 4, 5 }, 1, 9)
        for _, b in ipairs { { 0, 0 }, { -1, 0 }, { 0, -1 }, { 1, 2 }, { -1, -1 }, { 4, 5 }, { 2, -1 }, { 0, 5 } } do
          check("MatrixBandPart " .. b[1] .. "," .. b[2] .. " " .. dt, "MatrixBandPart", { x, T(b[1]), T(b[2]) })
        end
        check("MatrixBandPart int64 bounds " .. dt, "MatrixBandPart", { rand(dt, { 5, 3 }, 1, 9), T(1, "int64"), T(0, "int64") })
        check("MatrixBandPart no rows " .. dt, "MatrixBandPart", { rand(dt, { 3, 0, 4 }), T(0), T(1) })
        check("MatrixBandPart empty batch " .. dt, "MatrixBandPart", { rand(dt, { 0, 3, 4 }), T(1), T(1) })
      end
      check_error("MatrixBandPart of a vector", "MatrixBandPart", { rand("float32", { 3 }), T(0), T(0) },
        "input must be at least 2-dim, received shape: [3]")
      check_error("MatrixBandPart of too many rows", "MatrixBandPart", { rand("float32", { 2, 3 }), T(3, "int64"), T(0, "int64") },
        "num_lower must be negative or less or equal to number of rows (2) got: 3")
      check_error("MatrixBandPart of a vector bound", "MatrixBandPart", { rand("float32", { 2, 3 }), T(0), T({ 1 }) },
        "num_upper must be scalar, got shape [1]")
    end)

    it("Slice and StridedSlice with every mask, negative strides and new axes", function()
      local x = rand("float32", { 4, 5, 6 })
      check("Slice", "Slice", { x, T({ 1, 0, 2 }), T({ 2, -1, 3 }) })
      check("Slice int64", "Slice", { x, T({ 0, 4, 0 }, "int64"), T({ 4, 1, -1 }, "int64") })
      check("Slice empty", "Slice", { x, T({ 1, 1, 1 }), T({ 0, 2, 2 }) })
      check("Slice of int32 (host)", "Slice", { rand("int32", { 4, 5 }), T({ 1, 1 }), T({ 2, 2 }) })
      local ss = {
        { { 1, 0, 0 }, { 3, 5, 6 }, { 1, 2, 3 }, {} },
        { { 0, 0, 0 }, { 0, 0, 0 }, { 1, 1, 1 }, { begin_mask = 7, end_mask = 7 } },
        { { -1, 0, 0 }, { 0, 0, 0 }, { -1, -2, 1 }, { begin_mask = 6, end_mask = 7 } },
        { { 2, 0, 0 }, { 3, 0, 0 }, { 1, 1, 1 }, { shrink_axis_mask = 1, begin_mask = 6, end_mask = 6 } },
        { { 0, 1 }, { 0, 3 }, { 1, 1 }, { ellipsis_mask = 1 } },
        { { 0, 0, 1 }, { 0, 0, 4 }, { 1, 1, 2 }, { new_axis_mask = 2, begin_mask = 1, end_mask = 1 } },
        { { 0, 0, -1 }, { 0, 0, -7 }, { 1, 1, -1 }, { ellipsis_mask = 1, new_axis_mask = 2 } },
        { { 3, 4, 5 }, { 0, 0, 0 }, { -2, -3, -4 }, {} },
        { { 1, 1, 1 }, { 1, 1, 1 }, { 1, 1, 1 }, {} },
        { { -1 }, { 0 }, { 1 }, { shrink_axis_mask = 1 } },
      }
      for i, c in ipairs(ss) do
        check("StridedSlice " .. i, "StridedSlice", { x, T(c[1]), T(c[2]), T(c[3]) }, c[4])
        check("StridedSlice int64 " .. i, "StridedSlice", { x, T(c[1], "int64"), T(c[2], "int64"), T(c[3], "int64") }, c[4])
      end
      check("StridedSlice of a bool vector", "StridedSlice", { rand("bool", { 7 }), T({ 6 }), T({ 0 }), T({ -2 }) })
    end)

    it("Pad, PadV2 and MirrorPad", function()
      for _, dt in ipairs(dtypes) do
        local x = rand(dt, { 2, 3, 4 }, 0, 9)
        check("Pad " .. dt, "Pad", { x, T({ { 1, 0 }, { 0, 2 }, { 3, 1 } }) })
        check("Pad channels " .. dt, "Pad", { x, T({ { 0, 0 }, { 0, 0 }, { 0, 4 } }, "int64") })
        check("Pad nothing " .. dt, "Pad", { x, T({ { 0, 0 }, { 0, 0 }, { 0, 0 } }) })
        check("PadV2 " .. dt, "PadV2", { x, T({ { 1, 1 }, { 2, 0 }, { 0, 1 } }), rand(dt, {}, 0, 9) })
        check("Pad of a scalar " .. dt, "Pad", { rand(dt, {}, 0, 9), tfdev.tensor { dtype = "int32", shape = { 0, 2 } } })
        for _, mode in ipairs { "REFLECT", "SYMMETRIC" } do
          check("MirrorPad " .. mode .. " " .. dt, "MirrorPad", { x, T({ { 1, 0 }, { 2, 2 }, { 0, 3 } }) }, { mode = mode })
        end
      end
      check("Pad empty", "Pad", { rand("float32", { 0, 2 }), T({ { 1, 1 }, { 0, 0 } }) })
    end)

    it("GatherV2 (axes, batch_dims, int32 indices from the host, int64 ones on the device) and GatherNd", function()
      for _, dt in ipairs(dtypes) do
        local p = rand(dt, { 4, 5, 3 }, 0, 9)
        for _, idt in ipairs { "int32", "int64" } do
          check("GatherV2 axis 0 " .. dt .. " " .. idt, "GatherV2", { p, T({ { 3, 0 }, { 1, 1 } }, idt), T(0) })
          check("GatherV2 axis 1 " .. dt .. " " .. idt, "GatherV2", { p, T({ 4, 0, 2 }, idt), T(1) })
          check("GatherV2 axis -1 " .. dt .. " " .. idt, "GatherV2", { p, T(2, idt), T(-1, "int64") })
          check("GatherV2 batch_dims 1 " .. dt .. " " .. idt, "GatherV2", { p, T({ { 1, 2 }, { 0, 0 }, { 4, 3 }, { 2, 2 } }, idt),
            T(1) }, { batch_dims = 1 })
          check("GatherV2 batch_dims -1 " .. dt .. " " .. idt, "GatherV2", { p, T({ { 1 }, { 0 }, { 4 }, { 2 } }, idt),
            T(1) }, { batch_dims = -1 })
          check("GatherV2 no indices " .. dt .. " " .. idt, "GatherV2", { p, tfdev.tensor { dtype = idt, shape = { 0 } }, T(1) })
          check("Gather " .. dt .. " " .. idt, "Gather", { p, T({ { 3, 0 }, { 1, 1 } }, idt) })
          check("Gather no indices " .. dt .. " " .. idt, "Gather", { p, tfdev.tensor { dtype = idt, shape = { 0 } } })
          check("GatherNd depth 1 " .. dt .. " " .. idt, "GatherNd", { p, T({ { 3 }, { 0 } }, idt) })
          check("GatherNd depth 2 " .. dt .. " " .. idt, "GatherNd", { p, T({ { 3, 4 }, { 0, 1 }, { 2, 2 } }, idt) })
          check("GatherNd depth 3 " .. dt .. " " .. idt, "GatherNd", { p, T({ { { 3, 4, 2 } }, { { 0, 1, 0 } } }, idt) })
          check("GatherNd depth 0 " .. dt .. " " .. idt, "GatherNd", { p, tfdev.tensor { dtype = idt, shape = { 2, 0 } } })
        end
      end
    end)

    it("Range, Fill, ZerosLike, OnesLike, Shape, ExpandDims, Squeeze, OneHot and the ops that hand inputs on", function()
      check("Range float32", "Range", { T(-1.5, "float32"), T(3.2, "float32"), T(0.25, "float32") })
      check("Range float64 downwards", "Range", { T(5, "float64"), T(-2, "float64"), T(-0.7, "float64") })
      check("Range int64", "Range", { T(-7, "int64"), T(20, "int64"), T(3, "int64") })
      check("Range int64 beyond 2^53", "Range", { T(9007199254740993, "int64"), T(9007199254741003, "int64"), T(4, "int64") })
      check("Range int32", "Range", { T(10), T(0), T(-3) })
      check("Range empty", "Range", { T(2, "int64"), T(2, "int64"), T(1, "int64") })
      for _, dt in ipairs(dtypes) do
        local v = rand(dt, {}, 0, 9)
        check("Fill " .. dt, "Fill", { T({ 2, 3 }), v })
        check("Fill int64 dims " .. dt, "Fill", { T({ 4, 0 }, "int64"), v })
        check("Fill scalar " .. dt, "Fill", { T({}), v })
        local x = rand(dt, { 3, 2 }, 0, 9)
        check("ZerosLike " .. dt, "ZerosLike", { x })
        check("OnesLike " .. dt, "OnesLike", { x })
        check("Shape " .. dt, "Shape", { x })
        check("Shape int64 " .. dt, "Shape", { x }, { out_type = "int64" })
        check("Size " .. dt, "Size", { x })
        check("Size int64 " .. dt, "Size", { x }, { out_type = "int64" })
        check("Rank " .. dt, "Rank", { x })
        check("ShapeN " .. dt, "ShapeN", { x, rand(dt, { 4 }, 0, 9) }, { N = 2, out_type = "int64" }, { fetches = { "y:0", "y:1" } })
        check("ExpandDims " .. dt, "ExpandDims", { x, T(-1) })
        check("ExpandDims int64 axis " .. dt, "ExpandDims", { x, T(1, "int64") })
        check("Squeeze " .. dt, "Squeeze", { rand(dt, { 1, 3, 1, 2 }, 0, 9) })
        if dt == "int32" or dt == "int64" then
          check("BroadcastArgs " .. dt, "BroadcastArgs", { T({ 2, 1, 3 }, dt), T({ 4, 1 }, dt) })
          check_error("BroadcastArgs of incompatible shapes " .. dt, "BroadcastArgs", { T({ 2, 3 }, dt), T({ 4 }, dt) },
            "Incompatible shapes")
        end
        check("Squeeze dims " .. dt, "Squeeze", { rand(dt, { 1, 3, 1, 2 }, 0, 9) }, { squeeze_dims = { -2 } })
        check("EnsureShape " .. dt, "EnsureShape", { x }, { shape = { -1, 2 } })
        check("StopGradient " .. dt, "StopGradient", { x })
        check("Snapshot " .. dt, "Snapshot", { x })
        check("IdentityN " .. dt, "IdentityN", { x, rand("float32", { 2 }) }, { T = { dt, "float32" } },
          { fetches = { "y:0", "y:1" } })
      end
      for _, dt in ipairs(dtypes) do
        local on, off = rand(dt, {}, 1, 9), rand(dt, {}, dt == "uint8" and 0 or -9, 0)
        for _, it in ipairs { "int32", "int64", "uint8" } do
          local ix = tfdev.tensor { dtype = it, shape = { 2, 3 }, data = it == "uint8" and { 0, 2, 1, 4, 3, 0 } or { 0, 2, -1, 4, 3, 1 } }
          for _, axis in ipairs { -1, 0, 1, 2 } do
            check("OneHot " .. dt .. " " .. it .. " axis " .. axis, "OneHot", { ix, T(4), on, off }, { axis = axis })
          end
        end
        check("OneHot " .. dt .. " depth 0", "OneHot", { T({ 1, 2 }, "int64"), T(0), on, off })
        check("OneHot " .. dt .. " no indices", "OneHot", { tfdev.tensor { dtype = "int64", shape = { 0 } }, T(3), on, off })
        check("OneHot " .. dt .. " scalar index", "OneHot", { T(2, "int64"), T(3), on, off })
      end
      for _, dt in ipairs { "float32", "float64" } do
        check("LinSpace " .. dt, "LinSpace", { T(-1.5, dt), T(2.25, dt), T(7) })
        check("LinSpace " .. dt .. " int64 num, downwards", "LinSpace", { T(3, dt), T(-3, dt), T(4, "int64") })
        check("LinSpace " .. dt .. " one value", "LinSpace", { T(3, dt), T(9, dt), T(1) })
      end
      check_error("LinSpace of no values", "LinSpace", { T(0, "float32"), T(1, "float32"), T(0) }, "Requires num > 0: 0")
      check_error("LinSpace from a vector", "LinSpace", { T({ 0 }, "float32"), T(1, "float32"), T(2) }, "start must be a scalar")
      local on, off = T(1, "float32"), T(0, "float32")
      check_error("OneHot with a negative depth", "OneHot", { T({ 1 }, "int64"), T(-1), on, off }, "depth must be non-negative")
      check_error("OneHot with a vector on_value", "OneHot", { T({ 1 }, "int64"), T(2), T({ 1 }, "float32"), off },
        "on_value must be a scalar")
      check_error("OneHot with an axis out of range", "OneHot", { T({ 1 }, "int64"), T(2), on, off }, { axis = 2 },
        "Expected axis to be -1 or between [0, 2)")
      check_error("EnsureShape of the wrong shape", "EnsureShape", { rand("float32", { 3, 2 }) }, { shape = { 3, 3 } },
        "is not compatible with expected shape [3,3]")
    end)

    it("refuses what the CPU kernels refuse", function()
      local x = rand("float32", { 2, 3 })
      check_error("Transpose with a bad perm", "Transpose", { x, T({ 0, 0 }) }, "perm is not a permutation")
      check_error("Transpose with a short perm", "Transpose", { x, T({ 0 }) }, "perm has 1 entries")
      check_error("ConcatV2 of mismatched shapes", "ConcatV2", { x, rand("float32", { 3, 3 }), T(1) }, "does not match")
      check_error("ConcatV2 axis out of range", "ConcatV2", { x, x, T(2, "int64") }, "out of range")
      check_error("Concat of mismatched shapes", "Concat", { T(1), x, rand("float32", { 3, 3 }) }, "does not match")
      check_error("Concat axis out of range", "Concat", { T(2), x, x }, "out of range")
      check_error("Pack axis out of range", "Pack", { x, x }, { axis = 3 }, "out of range")
      check_error("Slice out of range", "Slice", { x, T({ 1, 2 }), T({ 2, 1 }) }, "Expected begin[0] in [0, 2]")
      check_error("Slice out of range, int64", "Slice", { x, T({ 0, 2 }, "int64"), T({ 1, 2 }, "int64") }, "size[1]")
      check_error("StridedSlice with a zero stride", "StridedSlice", { x, T({ 0 }), T({ 1 }), T({ 0 }) })
      check_error("Split unevenly", "Split", { T(1), x }, { num_split = 2 }, "evenly divide")
      check_error("Split axis out of range", "Split", { T(2, "int64"), x }, { num_split = 2 }, "split_dim 2 is out of range")
      check_error("SplitV sizes that do not add up", "SplitV", { x, T({ 1, 1 }), T(1) }, { num_split = 2 }, "Determined shape")
      check_error("Tile by a negative multiple", "Tile", { x, T({ 1, -1 }) }, "Expected multiples[1] >= 0")
      check_error("Pad by a negative amount", "Pad", { x, T({ { 0, 0 }, { -1, 0 } }) }, "must be non-negative")
      check_error("PadV2 with a vector value", "PadV2", { x, T({ { 0, 0 }, { 1, 0 } }), rand("float32", { 2 }) },
        "constant_values must be a scalar")
      check_error("MirrorPad REFLECT too wide", "MirrorPad", { x, T({ { 2, 0 }, { 0, 0 } }) }, { mode = "REFLECT" },
        "must be between 0 and 1")
      check_error("GatherV2 index out of range (int32, checked on the host)", "GatherV2", { x, T({ 0, 2 }), T(0) },
        "indices[1] = 2 is not in [0, 2)")
      check_error("GatherV2 axis out of range", "GatherV2", { x, T({ 0 }), T(2) }, "Expected axis in the range")
      check_error("Gather index out of range", "Gather", { x, T({ 0, 2 }) }, "is not in [0, 2)")
      check_error("GatherV2 batch_dims above the axis", "GatherV2", { x, T({ { 0 }, { 1 } }), T(0) }, { batch_dims = 1 },
        "must be less than or equal to axis")
      check_error("GatherNd index out of range (int32)", "GatherNd", { x, T({ { 1, 3 } }) }, "does not index into param shape")
      check_error("GatherNd too deep", "GatherNd", { x, T({ { 1, 1, 1 } }) }, "innermost dimension")
      check_error("Range with a zero delta", "Range", { T(1, "float32"), T(2, "float32"), T(0, "float32") }, "delta != 0")
      check_error("Range the wrong way", "Range", { T(1, "int64"), T(5, "int64"), T(-1, "int64") }, "Requires start >= limit")
      check_error("Fill with a vector value", "Fill", { T({ 2 }), rand("float32", { 2 }) }, "value a scalar")
      check_error("ExpandDims axis out of range", "ExpandDims", { x, T(4, "int64") }, "axis 4 is out of range")
      check_error("Squeeze of a dimension that is not 1", "Squeeze", { x }, { squeeze_dims = { 0 } }, "Can not squeeze dim[0]")
    end)
  end)

  describe("where a GPU differs, as TensorFlow's GPUs do", function()
    it("gathers zeros for int64 indices out of range and divides int64s by zero as 0, which it cannot see", function()
      local p = T({ { 1, 2 }, { 3, 4 } }, "float32")
      h.raises("INVALID_ARGUMENT", "indices[1] = 5 is not in [0, 2)", run_on, CPU0, "GatherV2", { p, T({ 1, 5 }, "int64"), T(0) })
      assert.are.same({ { 3, 4 }, { 0, 0 } }, run_on(GPU0, "GatherV2", { p, T({ 1, 5 }, "int64"), T(0) })[1]:totable())
      assert.are.same({ { 0, 0 }, { 3, 4 } }, run_on(GPU0, "GatherNd", { p, T({ { 2 }, { 1 } }, "int64") })[1]:totable())
      h.raises("INVALID_ARGUMENT", "Integer division by zero", run_on, CPU0, "FloorDiv", { T({ 7, 8 }, "int64"), T({ 2, 0 }, "int64") })
      assert.are.same({ 3, 0 }, run_on(GPU0, "FloorDiv", { T({ 7, 8 }, "int64"), T({ 2, 0 }, "int64") })[1]:totable())
      cases = cases + 5
    end)
  end)

  describe("products", function()
    it("MatMul with transposes, _FusedMatMul with every activation, BatchMatMulV2 with broadcast batches", function()
      for _, dt in ipairs { "float32", "float64" } do
        for _, ta in ipairs { false, true } do
          for _, tb in ipairs { false, true } do
            local a = rand(dt, ta and { 7, 3 } or { 3, 7 })
            local b = rand(dt, tb and { 5, 7 } or { 7, 5 })
            check("MatMul " .. dt .. tostring(ta) .. tostring(tb), "MatMul", { a, b }, { transpose_a = ta, transpose_b = tb })
            for _, act in ipairs { false, "Relu", "Relu6", "Elu", "LeakyRelu", "Tanh", "Sigmoid" } do
              local ops = act and { "BiasAdd", act } or { "BiasAdd" }
              check("_FusedMatMul " .. table.concat(ops, ",") .. " " .. dt, "_FusedMatMul", { a, b, rand(dt, { 5 }) },
                { transpose_a = ta, transpose_b = tb, fused_ops = ops, num_args = 1, leakyrelu_alpha = 0.1 })
            end
          end
        end
        check("MatMul empty " .. dt, "MatMul", { rand(dt, { 0, 3 }), rand(dt, { 3, 4 }) })
        check("MatMul with k = 0 " .. dt, "MatMul", { rand(dt, { 2, 0 }), rand(dt, { 0, 4 }) })
        check("_FusedMatMul with k = 0 " .. dt, "_FusedMatMul", { rand(dt, { 2, 0 }), rand(dt, { 0, 4 }), rand(dt, { 4 }) },
          { fused_ops = { "BiasAdd", "Relu" }, num_args = 1 })
        check("MatMul 1x1 " .. dt, "MatMul", { rand(dt, { 1, 1 }), rand(dt, { 1, 1 }) })
        check("BatchMatMulV2 " .. dt, "BatchMatMulV2", { rand(dt, { 2, 1, 3, 4 }), rand(dt, { 5, 4, 2 }) })
        check("BatchMatMulV2 adjoints " .. dt, "BatchMatMulV2", { rand(dt, { 3, 4, 3 }), rand(dt, { 1, 2, 4 }) },
          { adj_x = true, adj_y = true })
        check("BatchMatMulV2 rank 2 " .. dt, "BatchMatMulV2", { rand(dt, { 3, 4 }), rand(dt, { 4, 2 }) })
        check("BatchMatMulV2 empty batch " .. dt, "BatchMatMulV2", { rand(dt, { 0, 3, 4 }), rand(dt, { 4, 2 }) })
        check("BatchMatMulV2 k = 0 " .. dt, "BatchMatMulV2", { rand(dt, { 2, 3, 0 }), rand(dt, { 2, 0, 2 }) })
      end
      check_error("MatMul of mismatched sizes", "MatMul", { rand("float32", { 2, 3 }), rand("float32", { 4, 2 }) },
        "Matrix size-incompatible")
      check_error("_FusedMatMul with a bias of the wrong size", "_FusedMatMul",
        { rand("float32", { 2, 3 }), rand("float32", { 3, 2 }), rand("float32", { 3 }) },
        { fused_ops = { "BiasAdd" }, num_args = 1 }, "bias must be a float32 vector of 2 elements")
      check_error("BatchMatMulV2 batches that do not broadcast", "BatchMatMulV2",
        { rand("float32", { 2, 3, 4 }), rand("float32", { 3, 4, 2 }) }, "batch dimensions do not broadcast")
    end)

    it("ScatterNd and TensorScatterUpdate: rows and elements, repeated indices, every dtype, their refusals", function()
      for _, dt in ipairs { "float32", "int64", "bool", "float16", "uint8", "float64", "int32" } do
        for _, it in ipairs { "int32", "int64" } do
          local rows = tfdev.tensor({ { 2 }, { 0 }, { 2 }, { 3 } }, it)
          local elems = tfdev.tensor({ { 1, 2 }, { 0, 0 }, { 1, 2 } }, it)
          local tag = dt .. " " .. it
          if dt ~= "bool" then
            check("ScatterNd rows " .. tag, "ScatterNd", { rows, rand(dt, { 4, 3 }, 0, 5), T({ 5, 3 }, it) })
            check("ScatterNd elements " .. tag, "ScatterNd", { elems, rand(dt, { 3 }, 0, 5), T({ 2, 3 }, it) })
          end
          check("TensorScatterUpdate rows " .. tag, "TensorScatterUpdate", { rand(dt, { 5, 3 }, 0, 9), rows, rand(dt, { 4, 3 }, 0, 9) })
          check("TensorScatterUpdate elements " .. tag, "TensorScatterUpdate",
            { rand(dt, { 2, 3 }, 0, 9), elems, rand(dt, { 3 }, 0, 9) })
          check("TensorScatterUpdate no updates " .. tag, "TensorScatterUpdate",
            { rand(dt, { 2, 3 }, 0, 9), tfdev.tensor { dtype = it, shape = { 0, 1 } }, tfdev.tensor { dtype = dt, shape = { 0, 3 } } })
        end
      end
      check("ScatterNd into an empty shape", "ScatterNd",
        { tfdev.tensor { dtype = "int32", shape = { 0, 1 } }, tfdev.tensor { dtype = "float32", shape = { 0 } }, T({ 0 }) })
      check_error("ScatterNd index out of range", "ScatterNd", { T({ { 5 } }), rand("float32", { 1 }), T({ 3 }) },
        "indices[0] = [5] does not index into shape [3]")
      check_error("ScatterNd int64 index out of range", "ScatterNd", { T({ { -1 } }, "int64"), rand("float64", { 1 }), T({ 3 }, "int64") },
        "does not index into shape [3]")
      check_error("TensorScatterUpdate of mismatched updates", "TensorScatterUpdate",
        { rand("float32", { 2, 3 }), T({ { 1 } }), rand("float32", { 1, 2 }) }, "must match the inner")
    end)

    it("FakeQuantWithMinMaxArgs and Vars: bits, narrow range, nudged bounds, NaN and infinities, zero range, refusals", function()
      local special = tfdev.tensor({ 0 / 0, math.huge, -math.huge, 0, -0.0, 5.999, -6.001, 1e30 }, "float32")
      for _, x in ipairs { rand("float32", { 3, 40 }, -8, 8), special, rand("float32", { 0, 3 }) } do
        for _, a in ipairs { {}, { min = -1.5, max = 2.25, num_bits = 4 }, { min = 0.1, max = 3, narrow_range = true },
          { min = -10, max = -2, num_bits = 16 } } do
          local tag = ("min %s max %s bits %s narrow %s [%s]"):format(a.min, a.max, a.num_bits, a.narrow_range,
            table.concat(x.shape, ","))
          check("FakeQuantWithMinMaxArgs " .. tag, "FakeQuantWithMinMaxArgs", { x }, a)
          local lo, hi = tfdev.tensor(a.min or -6, "float32"), tfdev.tensor(a.max or 6, "float32")
          check("FakeQuantWithMinMaxVars " .. tag, "FakeQuantWithMinMaxVars", { x, lo, hi },
            { num_bits = a.num_bits, narrow_range = a.narrow_range })
        end
      end
      check("FakeQuantWithMinMaxVars zero range", "FakeQuantWithMinMaxVars",
        { rand("float32", { 5 }), tfdev.tensor(0, "float32"), tfdev.tensor(0, "float32") })
      check_error("FakeQuantWithMinMaxVars vector min", "FakeQuantWithMinMaxVars",
        { rand("float32", { 5 }), tfdev.tensor({ 0 }, "float32"), tfdev.tensor(1, "float32") }, "`min` must be rank 0 but is rank 1")
    end)

    it("Dilation2D and MaxPoolWithArgmax: every dtype, strides, rates, both paddings, ties, batch indices, refusals", function()
      for _, dt in ipairs { "float32", "float64", "int64", "int32", "float16", "uint8" } do
        local x = rand(dt, { 2, 7, 6, 3 }, 0, 9) -- small integers: ties in every window
        for _, pad in ipairs { "SAME", "VALID" } do
          for _, g in ipairs { { s = 1, r = 1, k = 3 }, { s = 2, r = 1, k = 2 }, { s = 1, r = 2, k = 3 }, { s = 3, r = 2, k = 1 } } do
            local tag = ("%s %s stride %d rate %d taps %d"):format(dt, pad, g.s, g.r, g.k)
            check("Dilation2D " .. tag, "Dilation2D", { x, rand(dt, { g.k, g.k + 1, 3 }, 0, 4) },
              { strides = { 1, g.s, g.s, 1 }, rates = { 1, g.r, g.r, 1 }, padding = pad })
            if g.r == 1 then
              for _, wb in ipairs { false, true } do
                check("MaxPoolWithArgmax " .. tag .. (wb and " batch index" or ""), "MaxPoolWithArgmax", { x },
                  { ksize = { 1, g.k, g.k + 1, 1 }, strides = { 1, g.s, g.s, 1 }, padding = pad, include_batch_in_index = wb },
                  { fetches = { "y:0", "y:1" } })
              end
            end
          end
        end
      end
      check("Dilation2D empty batch", "Dilation2D", { rand("float32", { 0, 3, 3, 2 }), rand("float32", { 2, 2, 2 }) },
        { strides = { 1, 1, 1, 1 }, rates = { 1, 1, 1, 1 }, padding = "SAME" })
      check_error("Dilation2D depth mismatch", "Dilation2D", { rand("float32", { 1, 3, 3, 2 }), rand("float32", { 2, 2, 3 }) },
        { strides = { 1, 1, 1, 1 }, rates = { 1, 1, 1, 1 }, padding = "SAME" }, "input and filter must have the same depth")
      check_error("MaxPoolWithArgmax of rank 3", "MaxPoolWithArgmax", { rand("float32", { 3, 3, 2 }) },
        { ksize = { 1, 2, 2, 1 }, strides = { 1, 1, 1, 1 }, padding = "VALID" }, "tensor_in must be 4-dimensional")
    end)

    it("CropAndResize: every dtype, both methods, flipped and outside boxes, one-pixel crops, refusals", function()
      local boxes = tfdev.tensor({ { 0, 0, 1, 1 }, { 0.2, 0.9, 0.7, 0.1 }, { -0.3, 0.1, 1.4, 0.6 }, { 0.5, 0.5, 0.5, 0.5 } },
        "float32")
      for _, dt in ipairs { "float32", "float64", "int64", "int32", "uint8", "float16" } do
        local image = rand(dt, { 2, 7, 9, 3 }, 0, 9)
        for _, method in ipairs { "bilinear", "nearest" } do
          for _, crop in ipairs { { 5, 4 }, { 1, 1 }, { 1, 6 } } do
            local tag = ("%s %s crop %dx%d"):format(dt, method, crop[1], crop[2])
            check("CropAndResize " .. tag, "CropAndResize", { image, boxes, T({ 1, 0, 1, 0 }), T(crop) },
              { method = method, extrapolation_value = -2.5 })
          end
        end
      end
      check("CropAndResize no boxes", "CropAndResize", { rand("float32", { 1, 3, 3, 2 }),
        tfdev.tensor { dtype = "float32", shape = { 0, 4 } }, tfdev.tensor { dtype = "int32", shape = { 0 } }, T({ 2, 2 }) })
      check_error("CropAndResize box index out of range", "CropAndResize",
        { rand("float32", { 1, 3, 3, 2 }), boxes, T({ 0, 0, 1, 0 }), T({ 2, 2 }) }, "box_index has values outside [0, batch_size)")
      check_error("CropAndResize of a non-finite box", "CropAndResize", { rand("float32", { 1, 3, 3, 2 }),
        tfdev.tensor({ { 0, 0 / 0, 1, 1 } }, "float32"), T({ 0 }), T({ 2, 2 }) }, "boxes values must be finite")
    end)

    it("ImageProjectiveTransformV3: every dtype, fill mode and interpolation, per-image and shared transforms", function()
      local c, sn = math.cos(0.4), math.sin(0.4)
      local per_image = tfdev.tensor({ { c, -sn, 2.5, sn, c, -1.25, 0, 0 }, { 1.3, 0.2, -4, -0.1, 0.8, 3, 0.01, -0.02 } }, "float32")
      local shared = tfdev.tensor({ { 0.5, 0, 1, 0, 2, -3, 0, 0 } }, "float32")
      for _, dt in ipairs { "float32", "float64", "int64", "int32", "uint8", "float16" } do
        local images = rand(dt, { 2, 6, 7, 2 }, 0, 9)
        for _, mode in ipairs { "CONSTANT", "REFLECT", "WRAP", "NEAREST" } do
          for _, interp in ipairs { "NEAREST", "BILINEAR" } do
            for i, tr in ipairs { per_image, shared } do
              local tag = ("%s %s %s %s"):format(dt, mode, interp, i == 1 and "per image" or "shared")
              check("ImageProjectiveTransformV3 " .. tag, "ImageProjectiveTransformV3",
                { images, tr, T({ 5, 8 }), tfdev.tensor(-1.5, "float32") },
                { dtype = dt, interpolation = interp, fill_mode = mode })
            end
          end
        end
      end
      check_error("ImageProjectiveTransformV3 with a bad transform", "ImageProjectiveTransformV3",
        { rand("float32", { 2, 3, 3, 1 }), rand("float32", { 2, 7 }), T({ 3, 3 }), tfdev.tensor(0, "float32") },
        { dtype = "float32", interpolation = "NEAREST" }, "Input transform should be num_images x 8 or 1 x 8")
    end)

    it("Multinomial: seeded draws equal the CPU's, float32 and float64 logits (int32 on the host), both outputs", function()
      local special = tfdev.tensor({ { 0, -math.huge, 1, 0 / 0, 2 }, { -1, -1, -1, -1, -1 } }, "float32")
      for _, dt in ipairs { "float32", "float64", "int32" } do
        for _, out in ipairs { "int64", "int32" } do
          for _, ns in ipairs { 0, 1, 500 } do
            local tag = ("%s %s %d samples"):format(dt, out, ns)
            check("Multinomial " .. tag, "Multinomial", { rand(dt, { 3, 7 }, -3, 3), T(ns) },
              { seed = 7, seed2 = 11, output_dtype = out })
          end
        end
      end
      check("Multinomial with -inf and NaN logits", "Multinomial", { special, T(300) }, { seed = 3, seed2 = 4 })
      check_error("Multinomial of a vector", "Multinomial", { rand("float32", { 4 }), T(2) }, "logits should be a matrix")
      check_error("Multinomial of no classes", "Multinomial", { rand("float32", { 2, 0 }), T(2) },
        "num_classes should be positive")
    end)

    it("Einsum: contractions, batches, broadcasts, transposes, sums, diagonals, inflation on the host, refusals", function()
      local cases = {
        { "ij,jk->ik", { 3, 4 }, { 4, 5 } }, { "ij,kj->ik", { 3, 4 }, { 5, 4 } }, { "ji,jk->ki", { 4, 3 }, { 4, 5 } },
        { "bij,bjk->bik", { 2, 3, 4 }, { 2, 4, 5 } }, { "bhqd,bhkd->bhqk", { 2, 3, 4, 5 }, { 2, 3, 6, 5 } },
        { "bqhd,bkhd->bhqk", { 2, 4, 3, 5 }, { 2, 6, 3, 5 } }, { "...ij,...jk->...ik", { 2, 1, 3, 4 }, { 5, 4, 2 } },
        { "ij->ji", { 3, 4 } }, { "ij->i", { 3, 4 } }, { "ijk->", { 2, 3, 4 } }, { "ii->i", { 4, 4 } }, { "iij->j", { 3, 3, 2 } },
        { "ij,ij->ij", { 3, 4 }, { 3, 4 } }, { "i,j->ij", { 3 }, { 4 } }, { "ij,jk->", { 3, 4 }, { 4, 5 } },
        { "abc,cd->dba", { 2, 3, 4 }, { 4, 5 } }, { "i->ii", { 3 } }, { "ij,jk->ik", { 0, 4 }, { 4, 5 } },
        { "ij,jk->ik", { 3, 0 }, { 0, 5 } },
      }
      for _, dt in ipairs { "float32", "float64", "int32", "int64" } do
        for _, cs in ipairs(cases) do
          local inputs = { rand(dt, cs[2], -3, 3) }
          if cs[3] then inputs[2] = rand(dt, cs[3], -3, 3) end
          check("Einsum " .. cs[1] .. " " .. dt, "Einsum", inputs, { equation = cs[1] }, { tol = dt == "float32" and 1e-5 or nil })
        end
      end
      check_error("Einsum size mismatch", "Einsum", { rand("float32", { 3, 4 }), rand("float32", { 5, 6 }) },
        { equation = "ij,jk->ik" }, "Expected dimension 4 at axis 0")
    end)

    it("LRN: radii within and past the depth, its attributes, float16 on the host, empties, refusals", function()
      for _, shape in ipairs { { 2, 3, 4, 8 }, { 1, 1, 2, 3 }, { 1, 5, 5, 64 }, { 0, 2, 2, 4 } } do
        for _, a in ipairs { {}, { depth_radius = 0 }, { depth_radius = 2, bias = 2, alpha = 1e-4, beta = 0.75 },
          { depth_radius = 7, bias = 0.5, alpha = 0.3, beta = 1.5 } } do
          local tag = ("[%s] r %s bias %s alpha %s beta %s"):format(table.concat(shape, ","), a.depth_radius, a.bias,
            a.alpha, a.beta)
          check("LRN " .. tag, "LRN", { rand("float32", shape, -3, 3) }, a, { tol = 1e-5 })
        end
      end
      check("LRN float16", "LRN", { rand("float16", { 1, 2, 2, 6 }, -3, 3) }, { depth_radius = 2 })
      check_error("LRN of rank 3", "LRN", { rand("float32", { 2, 2, 3 }) }, "in must be 4-dimensional")
    end)

    it("Bincount and DenseBincount: weighted, counted, binary, dropped values, batches, and their refusals", function()
      for _, dt in ipairs { "float32", "float64", "int64", "int32" } do
        local arr = T({ 1, 3, 3, 0, 7, 3, 1, 12 })
        local none = tfdev.tensor { dtype = dt, shape = { 0 } }
        check("Bincount weighted " .. dt, "Bincount", { arr, T(8), rand(dt, { 8 }, 0, 5) })
        check("Bincount counted " .. dt, "Bincount", { arr, T(5), none })
        check("Bincount empty " .. dt, "Bincount", { T({}), T(3), none })
        for _, it in ipairs { "int32", "int64" } do
          local x = tfdev.tensor({ { 0, 2, 2, 5 }, { 4, 4, 1, 9 } }, it)
          for _, binary in ipairs { false, true } do
            local tag = dt .. " " .. it .. (binary and " binary" or "")
            check("DenseBincount weighted " .. tag, "DenseBincount", { x, T(6, it), rand(dt, { 2, 4 }, 0, 5) },
              { binary_output = binary })
            check("DenseBincount counted " .. tag, "DenseBincount", { x, T(6, it), none }, { binary_output = binary })
            check("DenseBincount vector " .. tag, "DenseBincount", { tfdev.tensor({ 3, 0, 3 }, it), T(4, it), none },
              { binary_output = binary })
          end
        end
      end
      check_error("Bincount of a negative value", "Bincount", { T({ 1, -1 }), T(3), rand("float32", { 2 }) },
        "Input arr must be non-negative!")
      check_error("Bincount with weights of another shape", "Bincount", { T({ 1, 2 }), T(3), rand("float32", { 3 }) },
        "If weights are passed, they must have the same shape")
      check_error("DenseBincount of rank 3", "DenseBincount", { T({ { { 1 } } }), T(3), rand("float32", { 0 }) },
        "Shape must be at most rank 2 but is rank 3")
    end)

    it("LowerBound and UpperBound: every dtype, both out_types, ties, values past either end, NaN, empties, refusals", function()
      for _, dt in ipairs { "float32", "float64", "int64", "int32", "float16" } do
        for _, out in ipairs { "int32", "int64" } do
          local sorted = tfdev.tensor({ { 1, 2, 2, 2, 5, 9 }, { -3, 0, 0, 4, 4, 7 } }, dt)
          local values = tfdev.tensor({ { 2, 0, 10, 5, 3 }, { 4, -5, 0, 7, 8 } }, dt)
          for _, op in ipairs { "LowerBound", "UpperBound" } do
            local tag = op .. " " .. dt .. " " .. out
            check(tag, op, { sorted, values }, { out_type = out })
            check(tag .. " empty values", op, { sorted, tfdev.tensor { dtype = dt, shape = { 2, 0 } } }, { out_type = out })
            check(tag .. " empty rows", op, { tfdev.tensor { dtype = dt, shape = { 2, 0 } }, values }, { out_type = out })
          end
        end
      end
      local nan = tfdev.tensor({ { 0 / 0, 1, -math.huge, math.huge } }, "float32")
      check("LowerBound NaN and infinities", "LowerBound", { tfdev.tensor({ { -1, 0, 1, 2 } }, "float32"), nan })
      check("UpperBound NaN and infinities", "UpperBound", { tfdev.tensor({ { -1, 0, 1, 2 } }, "float32"), nan })
      check_error("LowerBound of a vector", "LowerBound", { rand("float32", { 3 }), rand("float32", { 1, 2 }) },
        "sorted input argument must be a matrix")
      check_error("UpperBound with rows that differ", "UpperBound", { rand("float32", { 2, 3 }), rand("float32", { 3, 2 }) },
        "Leading dim_size of both tensors must match.")
    end)

    it("the sparse segment reductions: Sum, Mean and SqrtN, WithNumSegments, repeats, gaps, and their refusals", function()
      for _, dt in ipairs { "float32", "float64", "int64", "int32" } do
        for _, it in ipairs { "int32", "int64" } do
          local ops = (dt == "float32" or dt == "float64") and { "Sum", "Mean", "SqrtN" } or { "Sum" }
          for _, r in ipairs(ops) do
            local tag = r .. " " .. dt .. " " .. it
            local ix = tfdev.tensor({ 0, 2, 1, 1, 3, 0, 2, 2, 2, 1, 0, 3, 3 }, it)
            local seg = tfdev.tensor({ 0, 0, 1, 1, 1, 3, 3, 3, 3, 3, 3, 3, 3 }, it) -- 10 rows in one: divided, not scaled
            check("SparseSegment" .. tag, "SparseSegment" .. r, { rand(dt, { 4, 3, 2 }, 0, 5), ix, seg })
            check("SparseSegment" .. tag .. " WithNumSegments", "SparseSegment" .. r .. "WithNumSegments",
              { rand(dt, { 4, 3 }, 0, 5), ix, seg, T(6, it) })
            check("SparseSegment" .. tag .. " no indices", "SparseSegment" .. r,
              { rand(dt, { 4, 3 }, 0, 5), tfdev.tensor { dtype = it, shape = { 0 } }, tfdev.tensor { dtype = it, shape = { 0 } } })
          end
        end
      end
      local x = rand("float32", { 3, 2 })
      check_error("SparseSegmentSum index out of range", "SparseSegmentSum", { x, T({ 0, 5 }), T({ 0, 1 }) },
        "Bad: indices[1] == 5 out of range [0, 3)")
      check_error("SparseSegmentMean ids not sorted", "SparseSegmentMean", { x, T({ 0, 1 }), T({ 1, 0 }) },
        "segment ids are not increasing")
      check_error("SparseSegmentSqrtN int64 ids past num_segments", "SparseSegmentSqrtNWithNumSegments",
        { x, T({ 0, 1 }, "int64"), T({ 0, 4 }, "int64"), T(2, "int64") }, "segment ids must be < num_segments")
    end)

    it("SparseToDense: values or one value over a default, validated or not, every dtype, the refusals", function()
      for _, dt in ipairs { "float32", "int64", "bool", "float16", "uint8", "float64", "int32" } do
        for _, it in ipairs { "int32", "int64" } do
          local tag = dt .. " " .. it
          local ix = tfdev.tensor({ { 0, 1 }, { 1, 0 }, { 2, 3 } }, it)
          check("SparseToDense " .. tag, "SparseToDense", { ix, T({ 3, 4 }, it), rand(dt, { 3 }, 1, 9), rand(dt, {}, 0, 0) })
          check("SparseToDense one value " .. tag, "SparseToDense", { ix, T({ 3, 4 }, it), rand(dt, {}, 1, 9), rand(dt, {}, 0, 0) })
          check("SparseToDense vector " .. tag, "SparseToDense", { tfdev.tensor({ 4, 1 }, it), T({ 6 }, it), rand(dt, { 2 }, 1, 9),
            rand(dt, {}, 0, 0) }, { validate_indices = false })
          check("SparseToDense no indices " .. tag, "SparseToDense", { tfdev.tensor { dtype = it, shape = { 0, 2 } }, T({ 2, 2 }, it),
            tfdev.tensor { dtype = dt, shape = { 0 } }, rand(dt, {}, 1, 1) })
        end
      end
      check("SparseToDense repeats without validation (the last wins)", "SparseToDense",
        { T({ 1, 1, 0 }), T({ 3 }), T({ 5, 6, 7 }, "float32"), T(0, "float32") }, { validate_indices = false })
      local v, d = T({ 1, 2 }, "float32"), T(0, "float32")
      check_error("SparseToDense of unsorted indices", "SparseToDense", { T({ 2, 1 }), T({ 3 }), v, d }, "is out of order")
      check_error("SparseToDense of repeated indices", "SparseToDense", { T({ 1, 1 }), T({ 3 }), v, d }, "indices[1] = [1] is repeated")
      check_error("SparseToDense out of bounds", "SparseToDense", { T({ 0, 3 }, "int64"), T({ 3 }, "int64"), v, d },
        "is out of bounds: need 0 <= index < [3]")
      check_error("SparseToDense with a short value list", "SparseToDense", { T({ 0, 1 }), T({ 3 }), T({ 1 }, "float32"), d },
        "sparse_values has incorrect shape")
    end)

    it("Where: coordinates of the true elements for every dtype and rank, NaN true and -0 false", function()
      local function sparse(dt, dims) -- about a third of the elements zero, placed at random
        local data = {}
        for i = 1, numel(dims) do
          local zero = math.random() < 0.35
          if dt == "bool" then data[i] = not zero else data[i] = zero and 0 or math.random(1, 5) end
        end
        return tfdev.tensor { dtype = dt, shape = dims, data = data }
      end
      for _, dt in ipairs { "float32", "int64", "bool", "float16", "uint8", "float64", "int32" } do
        check("Where " .. dt .. " rank 3", "Where", { sparse(dt, { 3, 4, 5 }) })
        check("Where " .. dt .. " rank 1", "Where", { sparse(dt, { 7 }) })
        check("Where " .. dt .. " scalar", "Where", { rand(dt, {}, 1, 1) })
        check("Where " .. dt .. " empty", "Where", { rand(dt, { 2, 0, 3 }) })
        check("Where " .. dt .. " none true", "Where", { tfdev.tensor { dtype = dt, shape = { 2, 3 } } })
      end
      check("Where all true, rank 5", "Where", { tfdev.tensor({ { { { { 1, 2 } } }, { { { 3, 4 } } } } }, "float32") })
      check("Where NaN and signed zeros", "Where", { T({ 0 / 0, -0.0, 0.0, 1 }, "float32") })
      assert.are.same({ { 0 }, { 3 } }, run_on(GPU0, "Where", { T({ 0 / 0, -0.0, 0.0, 1 }, "float32") })[1]:totable())
    end)

    it("Unique and UniqueV2 by sorting: repeats, NaN, signed zeros, both index dtypes, axes, the host's cases", function()
      local function repeats(dt, n, k) -- n values drawn from k distinct ones
        local data = {}
        local int = dt:find("int") ~= nil
        for i = 1, n do data[i] = int and math.random(1, k) * 7 or math.random(1, k) * 0.25 - 3 end
        return T(data, dt)
      end
      for _, dt in ipairs { "float32", "float64", "int64", "int32", "uint8", "float16" } do
        for _, idx in ipairs { "int32", "int64" } do
          local attrs = { out_idx = idx }
          check("Unique " .. dt .. " " .. idx, "Unique", { repeats(dt, 40, 6) }, attrs,
            { fetches = { "y:0", "y:1" } })
          check("Unique " .. dt .. " all distinct", "Unique", { rand(dt, { 9 }, 0, 100) }, attrs, { fetches = { "y:0", "y:1" } })
          check("Unique " .. dt .. " one", "Unique", { rand(dt, { 1 }, 0, 9) }, attrs, { fetches = { "y:0", "y:1" } })
          check("Unique " .. dt .. " empty", "Unique", { rand(dt, { 0 }) }, attrs, { fetches = { "y:0", "y:1" } })
          for _, axis in ipairs { 0, -1 } do
            check("UniqueV2 " .. dt .. " axis " .. axis, "UniqueV2", { repeats(dt, 30, 4),
              T({ axis }, "int64") }, attrs, { fetches = { "y:0", "y:1" } })
          end
          check("UniqueV2 " .. dt .. " no axis", "UniqueV2", { repeats(dt, 30, 4), T({}, "int32") },
            attrs, { fetches = { "y:0", "y:1" } })
        end
      end
      local x = T({ 0 / 0, -0.0, 2, 0.0, 0 / 0, 2, -1, -0.0 }, "float32")
      check("Unique NaN and signed zeros", "Unique", { x }, {}, { fetches = { "y:0", "y:1" } })
      local out = run_on(GPU0, "Unique", { x }, {}, { "y:0", "y:1" })
      assert.are.same({ 0, 1, 2, 1, 3, 2, 4, 1 }, out[2]:totable()) -- each NaN its own; -0 first, 0 joins it
      assert.are.equal(5, out[1].shape[1])
      check("UniqueV2 rows of a matrix (on the host)", "UniqueV2", { T({ { 1, 2 }, { 3, 4 }, { 1, 2 } }, "float32"),
        T({ 0 }, "int64") }, {}, { fetches = { "y:0", "y:1" } })
      check("UniqueV2 columns (on the host)", "UniqueV2", { T({ { 1, 1, 2 }, { 3, 3, 4 } }, "int64"), T({ 1 }) }, {},
        { fetches = { "y:0", "y:1" } })
      check_error("Unique of a matrix", "Unique", { T({ { 1 } }, "float32") }, "unique expects a 1D vector.")
      check_error("UniqueV2 axis out of range", "UniqueV2", { T({ 1, 2 }, "float32"), T({ 3 }) }, "axis has to be between [0, 1)")
      check_error("UniqueV2 two axes", "UniqueV2", { T({ 1, 2 }, "float32"), T({ 0, 0 }) },
        "axis does not support input tensors larger than 1 elements")
    end)

    it("ListDiff and NonMaxSuppression V2-V5 run on the host beside a GPU, as their CPU kernels", function()
      for _, dt in ipairs { "float32", "int64", "int32" } do
        for _, idx in ipairs { "int32", "int64" } do
          check("ListDiff " .. dt .. " " .. idx, "ListDiff", { T({ 1, 5, 2, 5, 7, 3 }, dt), T({ 5, 3, 9 }, dt) }, { out_idx = idx },
            { fetches = { "y:0", "y:1" } })
        end
      end
      check_error("ListDiff of a matrix", "ListDiff", { T({ { 1 } }), T({ 1 }) }, "x should be a 1D vector.")
      local boxes = {}
      for i = 1, 30 do
        local y, x = math.random() * 8, math.random() * 8
        boxes[i] = { y, x, y + 1 + math.random() * 3, x + 1 + math.random() * 3 }
      end
      local b, sc = T(boxes, "float32"), rand("float32", { 30 }, 0, 1)
      local max, iou, thr, sigma = T(10), T(0.4, "float32"), T(0.2, "float32"), T(0.5, "float32")
      check("NonMaxSuppressionV2", "NonMaxSuppressionV2", { b, sc, max, iou })
      check("NonMaxSuppressionV3", "NonMaxSuppressionV3", { b, sc, max, iou, thr })
      check("NonMaxSuppressionV4 padded", "NonMaxSuppressionV4", { b, sc, max, iou, thr }, { pad_to_max_output_size = true },
        { fetches = { "y:0", "y:1" } })
      check("NonMaxSuppressionV5 soft", "NonMaxSuppressionV5", { b, sc, max, iou, thr, sigma }, {},
        { fetches = { "y:0", "y:1", "y:2" } })
      check_error("NonMaxSuppressionV3 bad boxes", "NonMaxSuppressionV3", { T({ 1, 2 }, "float32"), sc, max, iou, thr },
        "boxes must be 2-D")
    end)

    it("BatchMatMul (TensorFlow 1's) with equal batches, and its refusals of broadcasting", function()
      for _, dt in ipairs { "float32", "float64" } do
        check("BatchMatMul " .. dt, "BatchMatMul", { rand(dt, { 2, 3, 3, 4 }), rand(dt, { 2, 3, 4, 2 }) })
        check("BatchMatMul adjoints " .. dt, "BatchMatMul", { rand(dt, { 3, 4, 3 }), rand(dt, { 3, 2, 4 }) },
          { adj_x = true, adj_y = true })
        check("BatchMatMul empty batch " .. dt, "BatchMatMul", { rand(dt, { 0, 3, 4 }), rand(dt, { 0, 4, 2 }) })
        check("BatchMatMul k = 0 " .. dt, "BatchMatMul", { rand(dt, { 2, 3, 0 }), rand(dt, { 2, 0, 2 }) })
      end
      check_error("BatchMatMul of batches that would broadcast", "BatchMatMul",
        { rand("float32", { 2, 3, 4 }), rand("float32", { 1, 4, 2 }) }, "In[0].dim(0) and In[1].dim(0) must be the same")
      check_error("BatchMatMul of different ranks", "BatchMatMul",
        { rand("float32", { 2, 3, 4 }), rand("float32", { 4, 2 }) }, "In[0] and In[1] has different ndims")
      check_error("BatchMatMul of vectors", "BatchMatMul", { rand("float32", { 4 }), rand("float32", { 4 }) },
        "ndims must be >= 2")
    end)
  end)

  describe("convolutions, pools, images", function()
    local windows = {
      { "SAME, odd sizes, stride 1", { 1, 7, 5, 3 }, { 3, 3, 3, 4 }, { 1, 1, 1, 1 }, "SAME" },
      { "SAME, stride 2, even sizes", { 2, 8, 6, 2 }, { 3, 3, 2, 5 }, { 1, 2, 2, 1 }, "SAME" },
      { "VALID, stride 3", { 1, 10, 11, 3 }, { 3, 2, 3, 2 }, { 1, 3, 3, 1 }, "VALID" },
      { "VALID, window larger than the input", { 1, 2, 2, 1 }, { 3, 3, 1, 2 }, { 1, 1, 1, 1 }, "VALID" },
      { "pointwise 1x1", { 2, 4, 4, 6 }, { 1, 1, 6, 3 }, { 1, 1, 1, 1 }, "VALID" },
      { "dilations 2", { 1, 9, 8, 2 }, { 3, 3, 2, 2 }, { 1, 1, 1, 1 }, "SAME", { 1, 2, 2, 1 } },
      { "EXPLICIT padding", { 1, 5, 5, 2 }, { 3, 3, 2, 2 }, { 1, 2, 1, 1 }, "EXPLICIT", nil, { 0, 0, 1, 2, 0, 3, 0, 0 } },
      { "empty batch", { 0, 5, 5, 2 }, { 3, 3, 2, 2 }, { 1, 1, 1, 1 }, "SAME" },
      { "no input channels", { 1, 4, 4, 0 }, { 2, 2, 0, 3 }, { 1, 1, 1, 1 }, "VALID" },
    }
    it("Conv2D, DepthwiseConv2dNative, MaxPool, AvgPool, Conv2DBackpropInput: SAME, VALID, EXPLICIT, strides, dilations", function()
      for _, w in ipairs(windows) do
        local name, xs, fs, strides, padding, dil, ex = table.unpack(w)
        local attrs = { strides = strides, padding = padding, dilations = dil, explicit_paddings = ex }
        for _, dt in ipairs { "float32", "float64", "float16" } do
          check("Conv2D " .. name .. " " .. dt, "Conv2D", { rand(dt, xs), rand(dt, fs) }, attrs)
          check("DepthwiseConv2dNative " .. name .. " " .. dt, "DepthwiseConv2dNative",
            { rand(dt, xs), rand(dt, { fs[1], fs[2], xs[4], 2 }) }, attrs)
        end
        check("Conv2D int32 (host) " .. name, "Conv2D", { rand("int32", xs), rand("int32", fs) }, attrs)
        if padding ~= "EXPLICIT" and not dil then
          for _, dt in ipairs { "float32", "float64", "float16", "int64", "uint8" } do
            local pool = { ksize = { 1, fs[1], fs[2], 1 }, strides = strides, padding = padding }
            check("MaxPool " .. name .. " " .. dt, "MaxPool", { rand(dt, xs, 0, 9) }, pool)
            if dt ~= "int64" and dt ~= "uint8" then
              check("AvgPool " .. name .. " " .. dt, "AvgPool", { rand(dt, xs) }, pool)
            end
          end
        end
        if xs[4] > 0 then
          local out = run_on(CPU0, "Conv2D", { rand("float32", xs), rand("float32", fs) }, attrs)[1]
          check("Conv2DBackpropInput " .. name, "Conv2DBackpropInput",
            { T(xs), rand("float32", fs), rand("float32", out.shape) }, attrs)
        end
      end
    end)

    it("_FusedConv2D and the fused depthwise ops: every fusion the CPU kernel takes", function()
      local xs, fs = { 2, 6, 5, 3 }, { 3, 3, 3, 4 }
      local attrs = function(ops, num_args, extra)
        local a = { strides = { 1, 2, 1, 1 }, padding = "SAME", fused_ops = ops, num_args = num_args, epsilon = 0.001,
          leakyrelu_alpha = 0.15 }
        for k, v in pairs(extra or {}) do a[k] = v end
        return a
      end
      local x, f, b = rand("float32", xs), rand("float32", fs), rand("float32", { 4 })
      local out = run_on(CPU0, "Conv2D", { x, f }, { strides = { 1, 2, 1, 1 }, padding = "SAME" })[1].shape
      for _, act in ipairs { false, "Relu", "Relu6", "Elu", "LeakyRelu", "Tanh", "Sigmoid", "Prelu" } do
        local tail = act and { act } or {}
        local alpha = act == "Prelu" and { rand("float32", { 4 }, 0, 1) } or {}
        local function with(list, extra)
          local r = {}
          for _, v in ipairs(list) do r[#r + 1] = v end
          for _, v in ipairs(extra) do r[#r + 1] = v end
          return r
        end
        local tag = act or "no activation"
        check("_FusedConv2D BiasAdd " .. tag, "_FusedConv2D", with({ x, f, b }, alpha),
          attrs(with({ "BiasAdd" }, tail), 1 + #alpha))
        check("_FusedConv2D BiasAdd, Add " .. tag, "_FusedConv2D", with({ x, f, b, rand("float32", out) }, alpha),
          attrs(with({ "BiasAdd", "Add" }, tail), 2 + #alpha))
        check("_FusedConv2D BiasAdd, Add broadcast " .. tag, "_FusedConv2D",
          with({ x, f, b, rand("float32", { 1, 1, out[3], 4 }) }, alpha), attrs(with({ "BiasAdd", "Add" }, tail), 2 + #alpha))
        check("_FusedConv2D FusedBatchNorm " .. tag, "_FusedConv2D", with({ x, f, rand("float32", { 4 }),
          rand("float32", { 4 }), rand("float32", { 4 }), rand("float32", { 4 }, 0.1, 2) }, alpha),
          attrs(with({ "FusedBatchNorm" }, tail), 4 + #alpha))
        local df = rand("float32", { 3, 3, 3, 2 })
        for _, op in ipairs { "_FusedDepthwiseConv2dNative", "FusedDepthwiseConv2dNative" } do
          check(op .. " BiasAdd " .. tag, op, with({ x, df, rand("float32", { 6 }) },
            act == "Prelu" and { rand("float32", { 6 }, 0, 1) } or {}), attrs(with({ "BiasAdd" }, tail), 1 + #alpha,
            { dilations = { 1, 1, 2, 1 } }))
        end
      end
      check("_FusedConv2D Prelu with a [H, W, C] alpha", "_FusedConv2D", { x, f, b, rand("float32", { out[2], out[3], 4 }) },
        attrs({ "BiasAdd", "Prelu" }, 2))
      check("_FusedConv2D [BiasAdd, Add, Prelu] with a scalar alpha", "_FusedConv2D",
        { x, f, b, rand("float32", out), rand("float32", { 1 }) }, attrs({ "BiasAdd", "Add", "Prelu" }, 3))
      check_error("_FusedConv2D with an unknown fusion", "_FusedConv2D", { x, f, b }, attrs({ "BiasAdd", "Softsign" }, 1),
        "Fusion is not implemented")
      check_error("_FusedConv2D with too few inputs", "_FusedConv2D", { x, f, b }, attrs({ "BiasAdd", "Prelu" }, 2),
        "take 4 inputs, got 3")
      check_error("_FusedConv2D with a bias of the wrong size", "_FusedConv2D", { x, f, rand("float32", { 3 }) },
        attrs({ "BiasAdd" }, 1), "bias must hold 4 float32 values")
      check_error("_FusedConv2D with an addend that does not broadcast", "_FusedConv2D",
        { x, f, b, rand("float32", { 1, 1, 2, 4 }) }, attrs({ "BiasAdd", "Add" }, 2), "does not broadcast")
      check_error("Conv2D with mismatched depths", "Conv2D", { x, rand("float32", { 3, 3, 2, 4 }) },
        { strides = { 1, 1, 1, 1 }, padding = "SAME" }, "input depth 3 does not match the filter's in_channels 2")
      check_error("Conv2D of rank 3", "Conv2D", { rand("float32", { 6, 5, 3 }), f },
        { strides = { 1, 1, 1, 1 }, padding = "SAME" }, "must be a float32 tensor of rank 4")
      check_error("Conv2D float64 of rank 3", "Conv2D", { rand("float64", { 6, 5, 3 }), rand("float64", fs) },
        { strides = { 1, 1, 1, 1 }, padding = "SAME" }, "input must be a tensor of rank 4")
      check_error("MaxPool with a bad ksize", "MaxPool", { x }, { ksize = { 2, 2 }, strides = { 1, 1, 1, 1 }, padding = "SAME" },
        "ksize must be 4 values")
    end)

    it("Conv3D, MaxPool3D and AvgPool3D (composed from the 2-D entries) against the CPU's", function()
      local volumes = {
        { "SAME, stride 1", { 2, 4, 5, 6, 3 }, { 3, 3, 3 }, { 1, 1, 1 }, "SAME" },
        { "SAME, stride 2, even sizes", { 1, 6, 4, 8, 2 }, { 2, 3, 2 }, { 2, 2, 2 }, "SAME" },
        { "VALID, stride 1 and 3", { 2, 5, 7, 4, 3 }, { 2, 2, 3 }, { 1, 3, 1 }, "VALID" },
        { "VALID, window as large as the volume", { 1, 3, 3, 3, 2 }, { 3, 3, 3 }, { 1, 1, 1 }, "VALID" },
        { "SAME, 1x1x1", { 2, 3, 2, 4, 5 }, { 1, 1, 1 }, { 1, 1, 1 }, "SAME" },
        { "SAME, window deeper than the volume", { 1, 2, 4, 4, 1 }, { 4, 3, 3 }, { 1, 2, 1 }, "SAME" },
      }
      for _, dt in ipairs { "float32", "float64", "float16" } do
        for _, v in ipairs(volumes) do
          local what, xs, ks, st, pad = v[1], v[2], v[3], v[4], v[5]
          local x = rand(dt, xs)
          local strides = { 1, st[1], st[2], st[3], 1 }
          check("Conv3D " .. what .. " " .. dt, "Conv3D", { x, rand(dt, { ks[1], ks[2], ks[3], xs[5], 4 }) },
            { strides = strides, padding = pad }, { tol = dt == "float16" and 2e-2 or nil })
          for _, op in ipairs { "MaxPool3D", "AvgPool3D" } do
            check(op .. " " .. what .. " " .. dt, op, { x }, { ksize = { 1, ks[1], ks[2], ks[3], 1 }, strides = strides, padding = pad },
              { tol = dt == "float16" and 2e-3 or nil })
          end
        end
        check("Conv3D empty batch " .. dt, "Conv3D", { rand(dt, { 0, 3, 3, 3, 2 }), rand(dt, { 2, 2, 2, 2, 3 }) },
          { strides = { 1, 1, 1, 1, 1 }, padding = "SAME" })
        check("MaxPool3D empty batch " .. dt, "MaxPool3D", { rand(dt, { 0, 3, 3, 3, 2 }) },
          { ksize = { 1, 2, 2, 2, 1 }, strides = { 1, 1, 1, 1, 1 }, padding = "VALID" })
      end
      check_error("Conv3D of mismatched channels", "Conv3D", { rand("float32", { 1, 3, 3, 3, 4 }), rand("float32", { 1, 1, 1, 2, 3 }) },
        { strides = { 1, 1, 1, 1, 1 }, padding = "SAME" }, "Number of channels in filter (2) must match")
      check_error("Conv3D with dilations", "Conv3D", { rand("float32", { 1, 3, 3, 3, 2 }), rand("float32", { 1, 1, 1, 2, 3 }) },
        { strides = { 1, 1, 1, 1, 1 }, dilations = { 1, 2, 1, 1, 1 }, padding = "SAME" }, "only supports dilated rates of 1")
      check_error("MaxPool3D of a 4-D input", "MaxPool3D", { rand("float32", { 1, 3, 3, 2 }) },
        { ksize = { 1, 1, 1, 1, 1 }, strides = { 1, 1, 1, 1, 1 }, padding = "SAME" }, "tensor_in must be 5-dimensional")
    end)

    it("FusedBatchNorm, FusedBatchNormV2, FusedBatchNormV3, ResizeBilinear and ResizeNearestNeighbor", function()
      local x = rand("float32", { 2, 3, 4, 5 })
      local args = { x, rand("float32", { 5 }), rand("float32", { 5 }), rand("float32", { 5 }), rand("float32", { 5 }, 0.1, 2) }
      check("FusedBatchNorm", "FusedBatchNorm", args, { is_training = false, epsilon = 0.01 },
        { fetches = { "y:0", "y:1", "y:2", "y:3", "y:4" } })
      check("FusedBatchNormV3", "FusedBatchNormV3", args, { is_training = false },
        { fetches = { "y:0", "y:1", "y:2", "y:3", "y:4", "y:5" } })
      check("FusedBatchNormV2", "FusedBatchNormV2", args, { is_training = false, epsilon = 0.02 },
        { fetches = { "y:0", "y:1", "y:2", "y:3", "y:4" } })
      check_error("FusedBatchNorm with a short scale", "FusedBatchNorm", { x, rand("float32", { 4 }), args[3], args[4], args[5] },
        { is_training = false }, "scale must be a float32 vector of 5 elements")
      for _, dt in ipairs { "float32", "float64", "int64", "uint8", "float16", "int32" } do
        local img = rand(dt, { 2, 5, 7, 3 }, 0, 9)
        for _, size in ipairs { { 9, 4 }, { 1, 1 }, { 5, 7 }, { 12, 15 } } do
          for _, flags in ipairs { {}, { align_corners = true }, { half_pixel_centers = true } } do
            local tag = dt .. " to " .. table.concat(size, "x") .. (flags.align_corners and " align_corners" or "") ..
                (flags.half_pixel_centers and " half_pixel_centers" or "")
            check("ResizeBilinear " .. tag, "ResizeBilinear", { img, T(size) }, flags)
            check("ResizeNearestNeighbor " .. tag, "ResizeNearestNeighbor", { img, T(size) }, flags)
          end
        end
      end
      check_error("ResizeBilinear to a zero size", "ResizeBilinear", { x, T({ 0, 2 }) }, nil, "size must be positive")
      check_error("ResizeBilinear of an empty image", "ResizeBilinear", { rand("float32", { 1, 0, 3, 1 }), T({ 2, 2 }) }, nil,
        "cannot resize an empty image")
    end)
  end)

  describe("state", function()
    it("seeded RandomUniform, RandomStandardNormal, TruncatedNormal and RandomUniformInt draw the CPU's numbers", function()
      for _, op in ipairs { "RandomUniform", "RandomStandardNormal" } do
        for _, dt in ipairs { "float32", "float64" } do
          local tol = op == "RandomUniform" and 0 or RANDOM_TOL
          check(op .. " " .. dt, op, { T({ 3, 50 }) }, { dtype = dt, seed = 7, seed2 = 11 }, { tol = tol })
          check(op .. " " .. dt .. " int64 shape", op, { T({ 4, 0, 2 }, "int64") }, { dtype = dt, seed = 1 }, { tol = tol })
          check(op .. " " .. dt .. " scalar", op, { T({}) }, { dtype = dt, seed2 = 3 }, { tol = tol })
        end
      end
      for _, dt in ipairs { "float32", "float64" } do
        check("TruncatedNormal " .. dt, "TruncatedNormal", { T({ 4, 60 }) }, { dtype = dt, seed = 5, seed2 = 9 }, { tol = RANDOM_TOL })
        check("TruncatedNormal " .. dt .. " empty", "TruncatedNormal", { T({ 0, 3 }, "int64") }, { dtype = dt, seed = 5 })
      end
      for _, dt in ipairs { "int64", "int32" } do
        check("RandomUniformInt " .. dt, "RandomUniformInt", { T({ 5, 40 }), T(-7, dt), T(1000003, dt) },
          { Tout = dt, seed = 2, seed2 = 8 })
        check("RandomUniformInt " .. dt .. " one value", "RandomUniformInt", { T({ 6 }), T(4, dt), T(5, dt) }, { Tout = dt, seed = 2 })
        check_error("RandomUniformInt " .. dt .. " of an empty range", "RandomUniformInt", { T({ 2 }), T(5, dt), T(5, dt) },
          { Tout = dt, seed = 2 }, "Need minval < maxval: 5 >= 5")
      end
      check("RandomUniformInt int64 over the whole range", "RandomUniformInt",
        { T({ 50 }), T(math.mininteger, "int64"), T(math.maxinteger, "int64") }, { Tout = "int64", seed = 4 })
      -- Runs of one session draw on along the stream, on either device alike.
      local function two_draws(device)
        local s <close> = tfdev.session { optimize_graph = false }
        s:create { node = {
          { name = "shape", op = "Const", device = device, attr = { value = T({ 5 }, "int64") } },
          { name = "r", op = "RandomStandardNormal", input = { "shape" }, device = device,
            attr = { dtype = "float32", seed = 3, seed2 = 4 } },
        } }
        return s:run({}, "r"), s:run({}, "r")
      end
      local c1, c2 = two_draws(CPU0)
      local g1, g2 = two_draws(GPU0)
      same(c1, g1, "first draw", RANDOM_TOL)
      same(c2, g2, "second draw", RANDOM_TOL)
      assert.are_not.same(c1:totable(), c2:totable())
    end)

    it("keeps a resource variable's value in device memory: VarHandleOp, Assign, Read, AssignAdd", function()
      local function steps(device)
        local s <close> = tfdev.session { optimize_graph = false }
        local function n(name, op, inputs, attr) return { name = name, op = op, input = inputs, device = device, attr = attr } end
        s:create { node = {
          n("v", "VarHandleOp", nil, { dtype = "float32", shape = { 2, 3 } }),
          n("init", "Const", nil, { value = T({ { 1, 2, 3 }, { 4, 5, 6 } }, "float32") }),
          n("delta", "Const", nil, { value = T({ { 0.5, 0.25, -1 }, { 2, 0, 1 } }, "float32") }),
          n("assign", "AssignVariableOp", { "v", "init" }, { dtype = "float32" }),
          n("add", "AssignAddVariableOp", { "v", "delta" }, { dtype = "float32" }),
          n("read", "ReadVariableOp", { "v" }, { dtype = "float32" }),
          n("iv", "VarHandleOp", nil, { dtype = "int32", shape = { 2 } }),
          n("iinit", "Const", nil, { value = T({ 5, -3 }) }),
          n("iassign", "AssignVariableOp", { "iv", "iinit" }, { dtype = "int32" }),
          n("iadd", "AssignAddVariableOp", { "iv", "iinit" }, { dtype = "int32" }),
          n("iread", "ReadVariableOp", { "iv" }, { dtype = "int32" }),
        } }
        s:run({}, {}, { "assign", "iassign" })
        s:run({}, {}, { "add", "iadd" })
        local _, meta = s:run({}, {}, { "add" }, { trace = true })
        local out = s:run({}, { "read", "iread" })
        return out, ran_on(meta)
      end
      local want = steps(CPU0)
      local got, where = steps(GPU0)
      cases = cases + 1
      assert.are.equal(GPU0, where.add)
      same(want[1], got[1], "the float variable")
      same(want[2], got[2], "the int32 variable")
      assert.are.same({ { 2, 2.5, 1 }, { 8, 5, 8 } }, got[1]:totable())
    end)
  end)

  describe("graphs", function()
    it("a graph split between CPU and GPU partitions (Send/Recv) gives the CPU's result", function()
      local function graph(a, b)
        return { node = {
          { name = "x", op = "Placeholder", attr = { dtype = "float32" } },
          { name = "w", op = "Const", device = a, attr = { value = T({ { 1, -2 }, { 0.5, 3 }, { -1, 1 } }, "float32") } },
          { name = "mm", op = "MatMul", input = { "x", "w" }, device = a },
          { name = "r", op = "Relu", input = { "mm" }, device = b },
          { name = "axes", op = "Const", device = b, attr = { value = T({ 1 }) } },
          { name = "s", op = "Sum", input = { "r", "axes" }, device = a, attr = { keep_dims = true } },
          { name = "sm", op = "Softmax", input = { "mm" }, device = b },
          { name = "i", op = "ArgMax", input = { "sm", "axes" }, device = a, attr = { output_type = "int32" } },
          { name = "c", op = "Cast", input = { "i" }, device = b, attr = { DstT = "float32" } },
          { name = "out", op = "AddV2", input = { "s", "c" }, device = a },
        } }
      end
      local x = rand("float32", { 4, 3 })
      local function run(a, b)
        local s <close> = tfdev.session { optimize_graph = false }
        s:create(graph(a, b))
        local out, meta = s:run({ x = x }, { "out", "sm", "i" }, nil, { trace = true, output_partition_graphs = true })
        return out, meta
      end
      local want = run(CPU0, CPU0)
      local got, meta = run(GPU0, CPU0)
      local got2 = run(CPU0, GPU0)
      for i = 1, 3 do
        same(want[i], got[i], "GPU/CPU output " .. i)
        same(want[i], got2[i], "CPU/GPU output " .. i)
      end
      local recvs = 0
      for _, g in ipairs(meta.partition_graphs) do
        for _, n in ipairs(g.node) do if n.op == "_Recv" then recvs = recvs + 1 end end
      end
      assert.is_true(recvs >= 3)
      cases = cases + 1
    end)

    it("a blocking run starts the GPU's partition on the caller's thread, not the inter-op pool's", function()
      -- It queues work and waits on _Recv without holding a thread: a step waits for no pool thread
      -- to wake. thread_id 0 is a thread outside the pool (the caller), k + 1 the pool's kth worker.
      local s <close> = tfdev.session { optimize_graph = false }
      s:create { node = {
        { name = "x", op = "Placeholder", device = CPU0, attr = { dtype = "float32" } },
        { name = "c", op = "Const", device = CPU0, attr = { value = T({ 1, 2 }, "float32") } },
        { name = "a", op = "AddV2", input = { "x", "c" }, device = CPU0 },
        { name = "n", op = "Neg", input = { "a" }, device = GPU0 },
        { name = "sq", op = "Square", input = { "n" }, device = CPU0 } } }
      local out, meta = s:run({ x = T({ 3, 4 }, "float32") }, { "sq" }, nil, { trace = true })
      assert.are.same({ 16, 36 }, out[1]:totable())
      local gpu_nodes = 0
      for _, d in ipairs(meta.step_stats.dev_stats) do
        if d.device == GPU0 then
          for _, n in ipairs(d.node_stats) do
            if n.op == "_Recv" then assert.are.equal(0, n.thread_id, n.node_name .. " ran on a pool thread") end
            gpu_nodes = gpu_nodes + 1
          end
        end
      end
      assert.is_true(gpu_nodes >= 3) -- _Recv, Neg, _Send
      cases = cases + 1
    end)

    it("places unannotated ops on the GPU (210 outranks the CPU) and the run metadata shows it", function()
      local s <close> = tfdev.session { optimize_graph = false }
      s:create { node = {
        { name = "x", op = "Placeholder", attr = { dtype = "float32" } },
        { name = "sq", op = "Square", input = { "x" } },
        { name = "axes", op = "Const", attr = { value = T({ 0 }) } },
        { name = "m", op = "Mean", input = { "sq", "axes" } },
        { name = "e", op = "Exp", input = { "m" } },
      } }
      local x = rand("float32", { 3, 2 })
      local out, meta = s:run({ x = x }, { "e" }, nil, { trace = true })
      local where = ran_on(meta)
      for _, name in ipairs { "sq", "m", "e" } do
        assert.are.equal(GPU0, s:placement(name))
        assert.are.equal(GPU0, where[name])
      end
      local cpu <close> = tfdev.session { optimize_graph = false, device_count = { GPU = 0 } }
      cpu:create { node = {
        { name = "x", op = "Placeholder", attr = { dtype = "float32" } },
        { name = "sq", op = "Square", input = { "x" } },
        { name = "axes", op = "Const", attr = { value = T({ 0 }) } },
        { name = "m", op = "Mean", input = { "sq", "axes" } },
        { name = "e", op = "Exp", input = { "m" } },
      } }
      same(cpu:run({ x = x }, "e"), out[1], "the unannotated graph")
      cases = cases + 1
    end)

    it("places an integer MatMul on the CPU (the device kernel computes floats) and a float one on the GPU", function()
      local s <close> = tfdev.session { optimize_graph = false }
      s:create { node = {
        { name = "a", op = "Placeholder", attr = { dtype = "int32" } },
        { name = "b", op = "Placeholder", attr = { dtype = "int32" } },
        { name = "mm", op = "MatMul", input = { "a", "b" } },
        { name = "f", op = "Placeholder", attr = { dtype = "float32" } },
        { name = "fm", op = "MatMul", input = { "f", "f" } },
      } }
      local out = s:run({ a = T({ { 1, 2 } }), b = T({ { 3 }, { 4 } }), f = tfdev.tensor({ { 2 } }, "float32") },
        { "mm", "fm" })
      assert.are.same({ { 11 } }, out[1]:totable())
      assert.are.same({ { 4 } }, out[2]:totable())
      assert.are.equal(CPU0, s:placement("mm"))
      assert.are.equal(GPU0, s:placement("fm"))
      local pinned <close> = tfdev.session { optimize_graph = false }
      h.raises("INVALID_ARGUMENT", "no supported kernel for GPU devices is available.\nColocation Debug Info:\n" ..
        "Colocation group had the following types and supported devices: \nRoot Member(", pinned.create, pinned,
        { node = { { name = "a", op = "Placeholder", attr = { dtype = "int32" } },
          { name = "mm", op = "MatMul", input = { "a", "a" }, device = "/device:GPU:0" } } })
      h.raises("INVALID_ARGUMENT", "\nMatMul: CPU \n", pinned.create, pinned,
        { node = { { name = "a", op = "Placeholder", attr = { dtype = "int32" } },
          { name = "mm", op = "MatMul", input = { "a", "a" }, device = "/device:GPU:0" } } })
      local gpu
      for _, d in ipairs(s:devices()) do if d.device_type == "GPU" then gpu = d end end
      h.raises("NOT_FOUND", "no GPU kernel for op MatMul with T=int32", gpu.compute, gpu, "MatMul", { T({ { 1 } }), T({ { 1 } }) })
      cases = cases + 1
    end)

    it("places ScatterNd, LowerBound, Unique, Bincount and TruncatedNormal on a GPU with no annotation", function()
      local s <close> = tfdev.session { optimize_graph = false }
      local function ph(name, dt) return { name = name, op = "Placeholder", attr = { dtype = dt } } end
      s:create { node = {
        ph("ix", "int32"), ph("u", "float32"), ph("shape", "int32"), ph("sorted", "float32"), ph("x", "float32"),
        { name = "sc", op = "ScatterNd", input = { "ix", "u", "shape" } },
        { name = "lb", op = "LowerBound", input = { "sorted", "x" } },
        { name = "un", op = "Unique", input = { "u" } },
        { name = "bc", op = "Bincount", input = { "shape", "n", "u0" } },
        { name = "n", op = "Const", attr = { value = T(3) } },
        { name = "u0", op = "Const", attr = { value = tfdev.tensor { shape = { 0 }, dtype = "float32" } } },
        { name = "tn", op = "TruncatedNormal", input = { "shape" }, attr = { dtype = "float32", seed = 1 } },
      } }
      local out = s:run({ ix = T({ { 1 }, { 0 } }), u = tfdev.tensor({ 5, 5 }, "float32"), shape = T({ 2 }),
        sorted = tfdev.tensor({ { 1, 3 } }, "float32"), x = tfdev.tensor({ { 2, 4 } }, "float32") },
        { "sc", "lb", "un", "bc", "tn" })
      assert.are.same({ 5, 5 }, out[1]:totable())
      assert.are.same({ { 1, 2 } }, out[2]:totable())
      assert.are.same({ 5 }, out[3]:totable())
      assert.are.same({ 0, 0, 1 }, out[4]:totable())
      assert.are.same({ 2 }, out[5].shape)
      for _, name in ipairs { "sc", "lb", "un", "bc", "tn" } do assert.are.equal(GPU0, s:placement(name), name) end
      cases = cases + 1
    end)

    it("runs TensorFlow 2's If and While beside a GPU, their frames on it, matching TensorFlow.js", function()
      local json = require "tfdev.json"
      local root = os.getenv("TFDEV_SOURCE_DIR") or "."
      local f = assert(io.open(root .. "/spec/conformance/control_functional.json"))
      local data = json.decode(f:read("a"))
      f:close()
      local ran = 0
      for _, c in ipairs(data.cases) do
        local text = '{"format": "graph-model", "modelTopology": {"node": ' .. json.encode(c.graph) ..
          ', "library": {"function": ' .. json.encode(c.library) .. '}}}'
        local s <close> = tfdev.session { optimize_graph = false }
        s:create(tfdev.graph_def.parse(text, { format = "tfjs" }))
        local feeds, fetches = {}, {}
        for _, t in ipairs(c.inputs) do feeds[t.name] = tfdev.tensor { dtype = t.dtype, shape = t.shape, data = t.values } end
        for i, o in ipairs(c.outputs) do fetches[i] = o.name end
        local out = s:run(feeds, fetches)
        for i, o in ipairs(c.outputs) do
          local got = flat(out[i]:totable())
          for j, v in ipairs(o.values) do
            assert(math.abs(got[j] - v) <= 1e-5 * math.max(1, math.abs(v)), c.op .. "/" .. c.name .. ": element " .. j)
          end
        end
        if c.op:find("While") then
          for _, n in ipairs { "op/merge_0", "op/switch_0", "op/loop_cond", "op/enter_0" } do
            assert.are.equal(GPU0, s:placement(n), c.name .. " " .. n)
          end
        end
        ran = ran + 1
      end
      assert.are.equal(13, ran)
      cases = cases + ran
    end)

    it("passes TensorList handles (variants) through a GPU in host memory", function()
      local s <close> = tfdev.session { optimize_graph = false }
      s:create { node = {
        { name = "x", op = "Placeholder", attr = { dtype = "float32" } },
        { name = "es", op = "Const", attr = { value = T({ 2 }) } },
        { name = "l", op = "TensorListFromTensor", input = { "x", "es" }, attr = { element_dtype = "float32", shape_type = "int32" } },
        { name = "on_gpu", op = "Identity", input = { "l" }, device = GPU0 },
        { name = "y", op = "TensorListStack", input = { "on_gpu", "es" }, attr = { element_dtype = "float32" } },
      } }
      local x = rand("float32", { 3, 2 })
      same(x, s:run({ x = x }, { "y" })[1], "TensorList through a GPU")
      assert.are.equal(GPU0, s:placement("on_gpu"))
      cases = cases + 1
    end)

    it("runs the TensorList and TensorArray ops on the GPU with their elements in its memory (TensorFlow.js's cases)", function()
      local json = require "dkjson"
      local root = (debug.getinfo(1, "S").source:match("^@(.*)/spec/[^/]*$") or ".")
      local f = assert(io.open(root .. "/spec/conformance/control.json"))
      local data = json.decode(f:read("a"))
      f:close()
      local ran = 0
      for _, c in ipairs(data.cases) do
        if c.op:find("TensorList") or c.op:find("TensorArray") then
          local text = '{"format": "graph-model", "modelTopology": {"node": ' .. json.encode(c.graph) .. '}}'
          local s <close> = tfdev.session { optimize_graph = false }
          s:create(tfdev.graph_def.parse(text, { format = "tfjs" }))
          local feeds, fetches = {}, {}
          for _, t in ipairs(c.inputs) do
            if not t.const then feeds[t.name] = tfdev.tensor { dtype = t.dtype, shape = t.shape, data = t.values } end
          end
          for i, o in ipairs(c.outputs) do fetches[i] = o.name end
          local out = s:run(feeds, fetches)
          for i, o in ipairs(c.outputs) do
            local got = flat(out[i]:totable())
            assert.are.equal(#o.values, #got, c.op .. "/" .. c.name .. ": element count")
            for j, v in ipairs(o.values) do
              if type(v) == "boolean" then assert(got[j] == v, c.op .. "/" .. c.name .. ": element " .. j)
              else assert(math.abs(got[j] - v) <= 1e-5 * math.max(1, math.abs(v)), c.op .. "/" .. c.name .. ": element " .. j) end
            end
          end
          assert.are.equal(GPU0, s:placement("op"), c.op .. "/" .. c.name)
          ran = ran + 1
        end
      end
      assert(ran >= 17, "TensorList and TensorArray cases run: " .. ran)
      cases = cases + ran
    end)

    it("moves TensorList elements between a GPU's memory and the host as the ops that read them need", function()
      local s <close> = tfdev.session { optimize_graph = false }
      local i32 = function(v) return { value = T(v) } end
      s:create { node = {
        { name = "x", op = "Placeholder", attr = { dtype = "float32" } },
        { name = "es", op = "Const", attr = i32({ 2 }) }, { name = "n", op = "Const", attr = i32(3) },
        { name = "i0", op = "Const", attr = i32(0) }, { name = "i2", op = "Const", attr = i32(2) },
        { name = "l", op = "TensorListReserve", input = { "es", "n" }, attr = { element_dtype = "float32", shape_type = "int32" },
          device = CPU0 },
        { name = "sq", op = "Square", input = { "x" }, device = GPU0 },
        { name = "set0", op = "TensorListSetItem", input = { "l", "i0", "sq" }, attr = { element_dtype = "float32" }, device = GPU0 },
        { name = "set2", op = "TensorListSetItem", input = { "set0", "i2", "x" }, attr = { element_dtype = "float32" },
          device = CPU0 },
        { name = "cpu_stack", op = "TensorListStack", input = { "set2", "es" }, attr = { element_dtype = "float32" }, device = CPU0 },
        { name = "gpu_stack", op = "TensorListStack", input = { "set2", "es" }, attr = { element_dtype = "float32" }, device = GPU0 },
        { name = "get0", op = "TensorListGetItem", input = { "set2", "i0", "es" }, attr = { element_dtype = "float32" },
          device = CPU0 },
        { name = "get2", op = "TensorListGetItem", input = { "set2", "i2", "es" }, attr = { element_dtype = "float32" },
          device = GPU0 },
      } }
      local x = T({ 1.5, -2 }, "float32")
      local out = s:run({ x = x }, { "cpu_stack", "gpu_stack", "get0", "get2" })
      local want = T({ { 2.25, 4 }, { 0, 0 }, { 1.5, -2 } }, "float32")
      same(want, out[1], "stacked on the CPU")
      same(want, out[2], "stacked on the GPU")
      same(T({ 2.25, 4 }, "float32"), out[3], "a GPU element read on the CPU")
      same(x, out[4], "a CPU element read on the GPU")
      assert.are.equal(GPU0, s:placement("gpu_stack"))
      cases = cases + 4
    end)

    it("runs TensorFlow 1's TensorArray loops on the GPU: written per iteration, read, concatenated, split", function()
      local function c(name, v) return { name = name, op = "Const", attr = { value = v } } end
      local w = { frame_name = "w", parallel_iterations = 4 }
      local inv = { frame_name = "w", parallel_iterations = 4, is_constant = true }
      local f32 = { dtype = "float32" }
      local s <close> = tfdev.session { optimize_graph = false }
      s:create { node = {
        c("zero", T(0)), c("n", T(4)), c("one", T(1)), c("size", T(0)), c("two", T(2)),
        { name = "x", op = "Placeholder", attr = f32 },
        { name = "ta", op = "TensorArrayV3", input = { "size" },
          attr = { dtype = "float32", dynamic_size = true, clear_after_read = false } },
        { name = "e/i", op = "Enter", input = { "zero" }, attr = w }, { name = "e/flow", op = "Enter", input = { "ta:1" }, attr = w },
        { name = "e/h", op = "Enter", input = { "ta" }, attr = inv }, { name = "e/n", op = "Enter", input = { "n" }, attr = inv },
        { name = "e/one", op = "Enter", input = { "one" }, attr = inv }, { name = "e/x", op = "Enter", input = { "x" }, attr = inv },
        { name = "mi", op = "Merge", input = { "e/i", "ni" } }, { name = "mf", op = "Merge", input = { "e/flow", "nf" } },
        { name = "less", op = "Less", input = { "mi", "e/n" } }, { name = "cond", op = "LoopCond", input = { "less" } },
        { name = "si", op = "Switch", input = { "mi", "cond" } }, { name = "sf", op = "Switch", input = { "mf", "cond" } },
        { name = "fi", op = "Cast", input = { "si:1" }, attr = { DstT = "float32" } },
        { name = "value", op = "Mul", input = { "e/x", "fi" } },
        { name = "write", op = "TensorArrayWriteV3", input = { "e/h", "si:1", "value", "sf:1" } },
        { name = "inc", op = "AddV2", input = { "si:1", "e/one" } },
        { name = "ni", op = "NextIteration", input = { "inc" } }, { name = "nf", op = "NextIteration", input = { "write" } },
        { name = "flow", op = "Exit", input = { "sf" } },
        { name = "count", op = "TensorArraySizeV3", input = { "ta", "flow" } },
        { name = "read", op = "TensorArrayReadV3", input = { "ta", "two", "flow" }, attr = f32 },
        { name = "past", op = "TensorArrayReadV3", input = { "ta", "n", "flow" }, attr = f32 },
        { name = "concat", op = "TensorArrayConcatV3", input = { "ta", "read" }, attr = f32 },
        { name = "lens", op = "Const", attr = { value = T({ 4, 4 }, "int64") } },
        { name = "ta2", op = "TensorArrayV3", input = { "size" }, attr = { dtype = "float32", dynamic_size = true } },
        { name = "split", op = "TensorArraySplitV3", input = { "ta2", "concat", "lens", "ta2:1" } },
        { name = "ix", op = "Const", attr = { value = T({ 1, 0 }) } },
        { name = "gather", op = "TensorArrayGatherV3", input = { "ta2", "ix", "split" }, attr = { dtype = "float32", element_shape = { -1 } } },
      } }
      local x = T({ 1.5, -2 }, "float32")
      local out = s:run({ x = x }, { "count", "concat:0", "concat:1", "gather", "read" })
      assert.are.same(4, out[1]:totable())
      same(T({ 3, -4 }, "float32"), out[5], "an element read on the GPU")
      same(T({ 0, 0, 1.5, -2, 3, -4, 4.5, -6 }, "float32"), out[2], "the loop's elements concatenated on the GPU")
      same(T({ 2, 2, 2, 2 }, "int64"), out[3], "the lengths, int64 in the GPU's memory")
      same(T({ { 3, -4, 4.5, -6 }, { 0, 0, 1.5, -2 } }, "float32"), out[4], "split on the GPU, gathered back")
      for _, name in ipairs { "ta", "write", "count", "read", "concat", "ta2", "split", "gather" } do
        assert.are.equal(GPU0, s:placement(name), name)
      end
      h.raises("INVALID_ARGUMENT", "node 'past' (TensorArrayReadV3): Tried to read from index 4 but array size is: 4",
        function() return s:run({ x = x }, { "past" }) end)
      cases = cases + 1
    end)

    it("passes strings through a GPU Identity in host memory and runs their other ops on the CPU", function()
      local s <close> = tfdev.session()
      s:create { node = {
        { name = "p", op = "Placeholder", attr = { dtype = "string" } },
        { name = "id", op = "Identity", input = { "p" }, device = GPU0 },
        { name = "ix", op = "Const", attr = { value = T({ 1, 0 }) } }, { name = "ax", op = "Const", attr = { value = T(0) } },
        { name = "g", op = "GatherV2", input = { "id", "ix", "ax" } },
        { name = "eq", op = "Equal", input = { "g", "p" } },
      } }
      local out = s:run({ p = tfdev.tensor({ "a", "b\0" }, "string") }, { "g", "eq" })
      assert.are.same({ "b\0", "a" }, out[1]:totable())
      assert.are.same({ false, false }, out[2]:totable())
      assert.are.equal(GPU0, s:placement("id"))
      assert.are.equal(CPU0, s:placement("g"))
      assert.are.equal(CPU0, s:placement("eq"))
      h.raises("INVALID_ARGUMENT", "", function()
        local s2 <close> = tfdev.session()
        s2:create { node = { { name = "p", op = "Placeholder", attr = { dtype = "string" } },
          { name = "u", op = "Unique", input = { "p" }, device = GPU0 } } }
        return s2:run({ p = tfdev.tensor({ "a" }, "string") }, { "u:0" })
      end)
      cases = cases + 1
    end)

    it("runs ops eagerly on the GPU and returns host tensors", function()
      local s <close> = tfdev.session()
      local gpu = s:device_mgr():lookup(GPU0)
      local a, b = rand("float32", { 2, 3 }), rand("float32", { 3 })
      local sum = gpu:compute("AddV2", { a, b })
      local cpu = s:device_mgr():lookup(CPU0)
      same(cpu:compute("AddV2", { a, b }), sum, "eager AddV2")
      same(cpu:compute("Sum", { a, T({ 1 }) }), gpu:compute("Sum", { a, T({ 1 }) }), "eager Sum")
      cases = cases + 1
    end)
  end)

  describe("TensorFlow.js models with no device annotations", function()
    local json = require "dkjson"
    local root = (debug.getinfo(1, "S").source:match("^@(.*)/spec/[^/]*$") or ".") .. "/../shared/models/"
    for _, name in ipairs { "emotion", "blazeface", "facemesh", "antispoof" } do
      local dir = root .. name .. "/"
      local ref_text = h.read_file(dir .. "reference.json")
      if not ref_text then
        pending(name .. ": " .. dir .. " is not in this checkout")
      else
        it(name .. ": every output within 1e-3 x max(1, max |reference|), its convolutions on the GPU", function()
          local ref = json.decode(ref_text)
          -- TensorFlow's converter pinned its fused nodes to /device:CPU:0: cleared, placement alone decides.
          local gd = tfdev.graph_def.load(dir .. name .. ".json")
          for _, n in ipairs(gd.node) do n.device = nil end
          local s <close> = tfdev.session()
          s:create(gd)
          local m = { session = s }
          local feeds, fetches = h.reference_feeds(ref, dir)
          local outs, meta = m.session:run(feeds, fetches, nil, { trace = true })
          local on_gpu, convs = 0, 0
          for _, d in ipairs(meta.step_stats.dev_stats) do
            for _, n in ipairs(d.node_stats) do
              if (n.op or ""):find("Conv2D") or (n.op or ""):find("Depthwise") then
                convs = convs + 1
                if d.device == GPU0 then on_gpu = on_gpu + 1 end
              end
            end
          end
          assert.is_true(convs > 0)
          assert.are.equal(convs, on_gpu, name .. ": convolutions on the GPU")
          local worst, worst_abs = 0, 0
          for i, o in ipairs(ref.outputs) do
            local want = flat(tfdev.from_bytes(o.dtype, o.shape, h.read_file(dir .. "output_" .. (i - 1) .. ".bin")):totable())
            local got = flat(outs[i]:totable())
            assert.are.same(o.shape, outs[i].shape)
            local bound = 1e-3 * math.max(1, o.max_abs)
            for j = 1, #want do
              local d = math.abs(want[j] - got[j])
              worst = math.max(worst, d / math.max(1, o.max_abs))
              worst_abs = math.max(worst_abs, d)
              assert(d <= bound, string.format("%s %s[%d]: want %.7g, got %.7g", name, o.name, j, want[j], got[j]))
            end
          end
          print(string.format("%s on %s: max |y - ref| = %.3g, / max(1, max |ref|) = %.3g", name, BACKEND, worst_abs, worst))
          cases = cases + 1
        end)
      end
    end
  end)

  it("ran its cases", function()
    assert.is_true(cases > 1000, "cases: " .. cases)
    print(string.format("device_kernels_spec: %d cases compared against the CPU (seed %d)", cases, SEED))
  end)
end)

describe("step graphs (gpu.graphs)", function()
  if not backend_ready() then
    pending(BACKEND .. " has no device here")
    return
  end

  -- A frame loop: the same graph run again and again with new inputs. With step graphs on (the
  -- default) the third run onwards replays one recorded graph; every run must still give the CPU's
  -- answer for its own input, and so must a session with them off.
  local function graph(device)
    return { node = {
      { name = "x", op = "Placeholder", attr = { dtype = "float32", shape = { -1, 4 } } },
      { name = "w", op = "Const", device = device, attr = { value = tfdev.tensor({ { 1, 0 }, { 0, 1 }, { 2, -1 }, { -1, 3 } },
        "float32") } },
      { name = "mm", op = "MatMul", device = device, input = { "x", "w" } },
      { name = "s", op = "Sigmoid", device = device, input = { "mm" } },
      { name = "y", op = "Sum", device = device, input = { "s", "axis" } },
      { name = "axis", op = "Const", device = device, attr = { value = T(1) } },
    } }
  end
  for _, on in ipairs { true, false } do
    it("runs a frame loop with gpu.graphs = " .. tostring(on) .. ", each run right for its own input", function()
      local gpu <close> = tfdev.session { gpu = { graphs = on } }
      local cpu <close> = tfdev.session { device_count = { GPU = 0 } }
      gpu:create(graph(GPU0))
      cpu:create(graph(CPU0))
      local fg, fc = gpu:make_callable { feeds = { "x" }, fetches = "y" }, cpu:make_callable { feeds = { "x" }, fetches = "y" }
      for i = 1, 12 do
        local rows = i <= 8 and 3 or 5 -- a new shape part-way: a new graph
        local x = rand("float32", { rows, 4 })
        local want, got = flat(fc(x):totable()), flat(fg(x):totable())
        assert.are.equal(#want, #got)
        for k = 1, #want do assert(math.abs(want[k] - got[k]) < 1e-5, string.format("run %d [%d]: %g, want %g", i, k, got[k], want[k])) end
      end
    end)
  end

  it("takes only a boolean", function()
    h.raises("INVALID_ARGUMENT", "option gpu.graphs must be a boolean, got number", tfdev.session, { gpu = { graphs = 1 } })
  end)
end)
