-- Counts, randoms and normalisation (Bincount, DenseBincount, TruncatedNormal, RandomUniformInt, Multinomial, LRN,
-- EuclideanNorm): values against TensorFlow's definitions (worked by hand or by Lua references here), every dtype,
-- empty tensors, TensorFlow's error texts; the random ops for determinism under seeds, their ranges and rough
-- moments over many draws. The graphs run with optimize_graph = false so the kernels run themselves.
local tfdev = require "tfdev"
local h = require "spec.support.helpers"

local function T(v, dt) return tfdev.tensor(v, dt or "int32") end

local function run(op, inputs, attrs) return h.run_node(op, inputs, attrs, { "y" })[1] end

local function vals(op, inputs, attrs) return run(op, inputs, attrs):totable() end

local function empty(shape, dt) return tfdev.tensor { shape = shape, dtype = dt or "float32" } end

local function near(want, got, tol, what)
  assert(math.abs(want - got) <= tol, string.format("%s: want %.6g, got %.6g", what or "value", want, got))
end

local function moments(t)
  local n, s, s2 = #t, 0, 0
  for _, v in ipairs(t) do s, s2 = s + v, s2 + v * v end
  local mean = s / n
  return mean, s2 / n - mean * mean
end

describe("count and normalisation ops", function()
  after_each(function() tfdev.factory.reset() end)

  describe("Bincount and DenseBincount", function()
    it("Bincount counts, or sums weights, per bin, dropping values past the last bin", function()
      assert.are.same({ 0, 2, 1, 1 }, vals("Bincount", { T({ 1, 1, 2, 5, 3 }), T(4), empty({ 0 }, "int32") }))
      for _, dt in ipairs { "float32", "float64", "int32", "int64" } do
        assert.are.same({ 0, 3, 3, 5 }, vals("Bincount", { T({ 1, 1, 2, 5, 3 }), T(4), T({ 1, 2, 3, 4, 5 }, dt) }), dt)
        assert.are.equal(dt, run("Bincount", { T({ 1 }), T(2), empty({ 0 }, dt) }).dtype)
      end
      assert.are.same({ 0, 0, 0 }, vals("Bincount", { empty({ 0 }, "int32"), T(3), empty({ 0 }) }))
      assert.are.same({ 0 }, run("Bincount", { T({ 1, 2 }), T(0), empty({ 0 }) }).shape)
    end)

    it("Bincount refuses negative values and sizes and mismatched weights with TensorFlow's texts", function()
      h.raises("INVALID_ARGUMENT", "Input arr must be non-negative!", run, "Bincount", { T({ 1, -1 }), T(3), empty({ 0 }) })
      h.raises("INVALID_ARGUMENT", "size (-1) must be non-negative", run, "Bincount", { T({ 1 }), T(-1), empty({ 0 }) })
      h.raises("INVALID_ARGUMENT", "If weights are passed, they must have the same shape ([1]) as arr ([2])", run,
        "Bincount", { T({ 1, 2 }), T(3), T({ 1 }, "float32") })
      h.raises("INVALID_ARGUMENT", "Shape must be rank 0 but is rank 1", run, "Bincount", { T({ 1 }), T({ 3 }), empty({ 0 }) })
      h.raises("INVALID_ARGUMENT", "arr and size must be int32, got int64 and int32", run, "Bincount",
        { T({ 1 }, "int64"), T(3), empty({ 0 }) })
    end)

    it("DenseBincount counts per row of a matrix, int32 and int64 inputs, binary_output", function()
      local x = { { 1, 1, 2 }, { 0, 3, 3 } }
      for _, it in ipairs { "int32", "int64" } do
        assert.are.same({ { 0, 2, 1, 0 }, { 1, 0, 0, 2 } }, vals("DenseBincount", { T(x, it), T(4, it), empty({ 0 }) }), it)
        assert.are.same({ { 0, 1, 1, 0 }, { 1, 0, 0, 1 } },
          vals("DenseBincount", { T(x, it), T(4, it), empty({ 0 }) }, { binary_output = true }), it)
        assert.are.same({ 0, 2, 1 }, vals("DenseBincount", { T({ 1, 1, 2, 7 }, it), T(3, it), empty({ 0 }, "int32") }), it)
      end
      assert.are.same({ { 0, 3, 3 }, { 4, 0, 0 } },
        vals("DenseBincount", { T({ { 1, 1, 2 }, { 0, 7, 0 } }), T(3), T({ { 1, 2, 3 }, { 1, 5, 3 } }, "float64") }))
      assert.are.same({ 0, 4 }, run("DenseBincount", { empty({ 0, 3 }, "int32"), T(4), empty({ 0 }) }).shape)
      h.raises("INVALID_ARGUMENT", "Shape must be at most rank 2 but is rank 3", run, "DenseBincount",
        { empty({ 1, 1, 1 }, "int32"), T(4), empty({ 0 }) })
      h.raises("INVALID_ARGUMENT", "Input arr must be non-negative!", run, "DenseBincount",
        { T({ { 0, -2 } }), T(4), empty({ 0 }) })
      h.raises("INVALID_ARGUMENT", "size (-3) must be non-negative", run, "DenseBincount", { T({ 0 }), T(-3), empty({ 0 }) })
      h.raises("INVALID_ARGUMENT", "input 0 is int64 but input 1 is int32", run, "DenseBincount",
        { T({ 0 }, "int64"), T(3), empty({ 0 }) })
    end)
  end)

  describe("random ops", function()
    it("TruncatedNormal stays within 2 standard deviations, deterministic under a seed, float32 and float64", function()
      for _, dt in ipairs { "float32", "float64" } do
        local a = vals("TruncatedNormal", { T({ 4000 }) }, { dtype = dt, seed = 7, seed2 = 3 })
        local b = vals("TruncatedNormal", { T({ 4000 }) }, { dtype = dt, seed = 7, seed2 = 3 })
        local c = vals("TruncatedNormal", { T({ 4000 }) }, { dtype = dt, seed = 8 })
        assert.are.same(a, b)
        assert.are_not.same(a, c)
        for _, v in ipairs(a) do assert(v > -2 and v < 2, dt .. ": " .. v) end
        local mean, var = moments(a)
        near(0, mean, 0.06, dt .. " mean")
        near(0.7737, var, 0.06, dt .. " variance") -- a standard normal truncated at 2: 1 - 4 phi(2) / (2 Phi(2) - 1)
      end
      assert.are.same({ 2, 0 }, run("TruncatedNormal", { T({ 2, 0 }, "int64") }, { dtype = "float32" }).shape)
      h.raises("INVALID_ARGUMENT", "dtype int32 is not supported", run, "TruncatedNormal", { T({ 2 }) }, { dtype = "int32" })
    end)

    it("TruncatedNormal draws anew each run of a seeded node, the same sequence in each session", function()
      local function two_runs()
        local g = { node = { { name = "s", op = "Const", attr = { value = T({ 8 }) } },
          { name = "y", op = "TruncatedNormal", input = { "s" }, attr = { dtype = "float64", seed = 5 } } } }
        local s <close> = tfdev.session { optimize_graph = false }
        s:create(g)
        return s:run({}, { "y" })[1]:totable(), s:run({}, { "y" })[1]:totable()
      end
      local a1, a2 = two_runs()
      local b1, b2 = two_runs()
      assert.are_not.same(a1, a2)
      assert.are.same(a1, b1)
      assert.are.same(a2, b2)
    end)

    it("RandomUniformInt draws in [minval, maxval), int32 and int64, with TensorFlow's bound text", function()
      local v = vals("RandomUniformInt", { T({ 3000 }), T(3), T(7) }, { Tout = "int32", seed = 1 })
      local seen = {}
      for _, x in ipairs(v) do
        assert(x >= 3 and x < 7, x)
        seen[x] = true
      end
      assert.are.same({ [3] = true, [4] = true, [5] = true, [6] = true }, seen)
      local mean = moments(v)
      near(4.5, mean, 0.1, "mean")
      assert.are.same(v, vals("RandomUniformInt", { T({ 3000 }), T(3), T(7) }, { Tout = "int32", seed = 1 }))
      local w = vals("RandomUniformInt", { T({ 500 }), T(-5000000000, "int64"), T(-4999999990, "int64") },
        { Tout = "int64", seed = 2 })
      for _, x in ipairs(w) do assert(x >= -5000000000 and x < -4999999990, x) end
      assert.are.same({ 0 }, run("RandomUniformInt", { T({ 0 }), T(3), T(3) }, { Tout = "int32" }).shape)
      h.raises("INVALID_ARGUMENT", "Need minval < maxval: 3 >= 3", run, "RandomUniformInt", { T({ 2 }), T(3), T(3) },
        { Tout = "int32" })
      h.raises("INVALID_ARGUMENT", "Need minval < maxval: 9 >= 2", run, "RandomUniformInt",
        { T({ 2 }), T(9, "int64"), T(2, "int64") }, { Tout = "int64" })
      h.raises("INVALID_ARGUMENT", "minval is int64 but Tout is int32", run, "RandomUniformInt",
        { T({ 2 }), T(1, "int64"), T(2) }, { Tout = "int32" })
    end)

    it("Multinomial samples classes by their softmax weight, int64 by default", function()
      local y = run("Multinomial", { T({ { 0, math.log(3), -math.huge } }, "float32"), T(4000) }, { seed = 3 })
      assert.are.equal("int64", y.dtype)
      assert.are.same({ 1, 4000 }, y.shape)
      local ones = 0
      for _, c in ipairs(y:totable()[1]) do
        assert(c == 0 or c == 1, c)
        if c == 1 then ones = ones + 1 end
      end
      near(0.75, ones / 4000, 0.03, "share of class 1")
      local z = run("Multinomial", { T({ { 5, 5 }, { -100, 0 } }, "float64"), T(50) }, { seed = 3, output_dtype = "int32" })
      assert.are.equal("int32", z.dtype)
      for _, c in ipairs(z:totable()[2]) do assert.are.equal(1, c) end
      assert.are.same({ 2, 0 }, run("Multinomial", { T({ { 1, 2 }, { 3, 4 } }, "float32"), T(0) }).shape)
      h.raises("INVALID_ARGUMENT", "num_samples should be nonnegative, got -1", run, "Multinomial",
        { T({ { 1, 2 } }, "float32"), T(-1) })
      h.raises("INVALID_ARGUMENT", "num_classes should be positive, got 0", run, "Multinomial", { empty({ 1, 0 }), T(2) })
      h.raises("INVALID_ARGUMENT", "logits (input 0) must have rank 2", run, "Multinomial", { T({ 1, 2 }, "float32"), T(2) })
    end)
  end)

  describe("LRN and EuclideanNorm", function()
    local function lrn_ref(x, r, bias, alpha, beta)
      local out = {}
      for i, row in ipairs(x) do
        out[i] = {}
        for d = 1, #row do
          local s = 0
          for e = math.max(1, d - r), math.min(#row, d + r) do s = s + row[e] * row[e] end
          out[i][d] = row[d] / (bias + alpha * s) ^ beta
        end
      end
      return out
    end

    it("LRN divides by (bias + alpha * sqr_sum) ^ beta over the depth window, float32 and float16", function()
      local rows, k = {}, 0
      for i = 1, 4 do
        rows[i] = {}
        for d = 1, 7 do
          k = k + 1
          rows[i][d] = ((k * 37) % 19) / 4 - 2
        end
      end
      local x = { { { rows[1], rows[2] }, { rows[3], rows[4] } } }
      for _, case in ipairs { { 2, 1, 0.5, 0.75 }, { 0, 2, 1, 0.5 }, { 10, 1, 0.1, 1 } } do
        local want = lrn_ref(rows, case[1], case[2], case[3], case[4])
        local attrs = { depth_radius = case[1], bias = case[2], alpha = case[3], beta = case[4] }
        for _, dt in ipairs { "float32", "float16" } do
          local got = vals("LRN", { T(x, dt) }, attrs)[1]
          local flat = { got[1][1], got[1][2], got[2][1], got[2][2] }
          for i = 1, 4 do
            for d = 1, 7 do near(want[i][d], flat[i][d], dt == "float16" and 5e-3 or 1e-5, dt) end
          end
        end
      end
      local defaults = vals("LRN", { T({ { { { 1, 2 } } } }, "float32") })[1][1][1]
      near(1 / math.sqrt(6), defaults[1], 1e-6)
      assert.are.same({ 0, 2, 2, 3 }, run("LRN", { empty({ 0, 2, 2, 3 }) }).shape)
      h.raises("INVALID_ARGUMENT", "input (input 0) must have rank 4", run, "LRN", { empty({ 2, 2, 3 }) })
      h.raises("INVALID_ARGUMENT", "float64", run, "LRN", { empty({ 1, 1, 1, 1 }, "float64") })
    end)

    it("EuclideanNorm takes the root of the sum of squares over axes, keep_dims and every dtype", function()
      local x = { { 3, 4 }, { 6, 8 } }
      for _, dt in ipairs { "float32", "float64", "int32", "int64" } do
        assert.are.same({ 5, 10 }, vals("EuclideanNorm", { T(x, dt), T(1) }), dt)
        assert.are.same({ { 5 }, { 10 } }, vals("EuclideanNorm", { T(x, dt), T({ -1 }, "int64") }, { keep_dims = true }), dt)
      end
      local cols = vals("EuclideanNorm", { T(x, "float64"), T(0) })
      near(math.sqrt(45), cols[1], 1e-12)
      near(math.sqrt(80), cols[2], 1e-12)
      near(math.sqrt(125), run("EuclideanNorm", { T(x, "float32"), T({ 0, 1 }) }):item(), 1e-5)
      assert.are.same({ 1 }, vals("EuclideanNorm", { T({ { 1, 1 } }), T(1) })) -- an integer root truncates
      assert.are.same({ 0, 0, 0 }, vals("EuclideanNorm", { empty({ 0, 3 }), T(0) }))
      h.raises("INVALID_ARGUMENT", "axis 2 is out of range", run, "EuclideanNorm", { T(x, "float32"), T(2) })
    end)
  end)
end)
