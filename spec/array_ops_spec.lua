-- Graph utilities and array ops (Rank, StopGradient, Snapshot, EnsureShape, ReverseV2, Reverse, OneHot,
-- LinSpace, Cumsum, Cumprod, All, Any, BroadcastArgs, MatrixBandPart) against TensorFlow's documented
-- examples and small Lua references written here, over every dtype each op takes, empty tensors,
-- negative axes and TensorFlow's error texts. One-node graphs on constants, not folded.
local tfdev = require "tfdev"
local h = require "spec.support.helpers"

local function T(v, dt) return tfdev.tensor(v, dt or "int32") end
local function run(op, inputs, attrs) return h.run_node(op, inputs, attrs, { "y" })[1] end
local function vals(op, inputs, attrs) return run(op, inputs, attrs):totable() end
local function empty(dt, shape) return tfdev.tensor { dtype = dt, shape = shape } end

local NUM = { "float32", "float64", "int32", "int64" }
local ALL = { "float32", "float64", "int32", "int64", "uint8", "float16", "bool" }

-- A value of dtype dt from a small non-negative integer (bool: odd is true).
local function v(dt, x) if dt == "bool" then return x % 2 == 1 end return x end

describe("array ops", function()
  after_each(function() tfdev.factory.reset() end)

  it("Rank is the input's rank as an int32 scalar, for any dtype", function()
    for _, dt in ipairs(ALL) do
      local r = run("Rank", { tfdev.tensor({ { v(dt, 1), v(dt, 2) } }, dt) })
      assert.are.equal("int32", r.dtype)
      assert.are.same({}, r.shape)
      assert.are.equal(2, r:totable())
    end
    assert.are.equal(0, vals("Rank", { T(5) }))
    assert.are.equal(3, vals("Rank", { empty("float32", { 2, 0, 3 }) }))
  end)

  it("StopGradient and Snapshot pass their input through, every dtype, empty too", function()
    for _, op in ipairs { "StopGradient", "Snapshot" } do
      for _, dt in ipairs(ALL) do
        local x = tfdev.tensor({ v(dt, 1), v(dt, 0), v(dt, 3) }, dt)
        local y = run(op, { x })
        assert.are.equal(dt, y.dtype)
        assert.are.same(x:totable(), y:totable())
      end
      assert.are.same({ 0, 4 }, run(op, { empty("int64", { 0, 4 }) }).shape)
    end
  end)

  it("EnsureShape passes a compatible input, unknown dims matching anything, and names the tensor otherwise", function()
    local x = T({ { 1, 2, 3 }, { 4, 5, 6 } })
    assert.are.same({ { 1, 2, 3 }, { 4, 5, 6 } }, vals("EnsureShape", { x }, { shape = { 2, 3 } }))
    assert.are.same({ 2, 3 }, run("EnsureShape", { x }, { shape = { -1, 3 } }).shape)
    assert.are.same({ 2, 3 }, run("EnsureShape", { x }, { shape = { -1, -1 } }).shape)
    for _, dt in ipairs(ALL) do
      assert.are.equal(dt, run("EnsureShape", { tfdev.tensor({ v(dt, 1) }, dt) }, { shape = { 1 } }).dtype)
    end
    assert.are.same({ 0, 2 }, run("EnsureShape", { empty("float32", { 0, 2 }) }, { shape = { -1, 2 } }).shape)
    h.raises("INVALID_ARGUMENT", "Shape of tensor in1 [2,3] is not compatible with expected shape [3,?].", run,
      "EnsureShape", { x }, { shape = { 3, -1 } })
    h.raises("INVALID_ARGUMENT", "Shape of tensor in1 [2,3] is not compatible with expected shape [2,3,1].", run,
      "EnsureShape", { x }, { shape = { 2, 3, 1 } })
  end)

  -- Lua reference: reverse a nested table along the dims in rev (0-based set).
  local function ref_reverse(t, rev, d)
    d = d or 0
    if type(t) ~= "table" then return t end
    local out, n = {}, #t
    for i = 1, n do out[i] = ref_reverse(t[rev[d] and n + 1 - i or i], rev, d + 1) end
    return out
  end

  it("ReverseV2 reverses the axes given, negative ones from the end, int32 or int64 axes, every dtype", function()
    local x = h.random_values({ 2, 3, 4 }, 7)
    local xt = tfdev.tensor(x, "float64")
    local cases = { { {}, {} }, { { 0 }, { [0] = true } }, { { 1 }, { [1] = true } }, { { -1 }, { [2] = true } },
      { { 0, 2 }, { [0] = true, [2] = true } }, { { 2, 1, 0 }, { [0] = true, [1] = true, [2] = true } } }
    for _, c in ipairs(cases) do
      assert.are.same(ref_reverse(x, c[2]), vals("ReverseV2", { xt, T(c[1]) }))
      assert.are.same(ref_reverse(x, c[2]), vals("ReverseV2", { xt, T(c[1], "int64") }))
    end
    -- TensorFlow's example: t [[[[0..3],[4..7],[8..11]],[[12..15],[16..19],[20..23]]]], dims [3] (or -1)
    assert.are.same({ { 3, 2, 1, 0 }, { 7, 6, 5, 4 } }, vals("ReverseV2", { T({ { 0, 1, 2, 3 }, { 4, 5, 6, 7 } }), T({ -1 }) }))
    for _, dt in ipairs(ALL) do
      local y = run("ReverseV2", { tfdev.tensor({ { v(dt, 1), v(dt, 2) }, { v(dt, 3), v(dt, 0) } }, dt), T({ 0 }) })
      assert.are.equal(dt, y.dtype)
      assert.are.same({ { v(dt, 3), v(dt, 0) }, { v(dt, 1), v(dt, 2) } }, y:totable())
    end
    assert.are.same({ 0, 3 }, run("ReverseV2", { empty("float32", { 0, 3 }), T({ 1 }) }).shape)
    assert.are.equal(5, vals("ReverseV2", { T(5), T({}) }))
    assert.are.equal(5, vals("ReverseV2", { T(5), T({ 3 }) })) -- a scalar passes through before the axes are read
    h.raises("INVALID_ARGUMENT", "axis 0 specified more than once.", run, "ReverseV2", { xt, T({ 0, -3 }) })
    h.raises("INVALID_ARGUMENT", "'axis'[0] = 3 is out of valid range [0, 3)", run, "ReverseV2", { xt, T({ 3 }) })
    h.raises("INVALID_ARGUMENT", "'axis'[1] = -4 is out of valid range [0, 3)", run, "ReverseV2", { xt, T({ 0, -4 }) })
    h.raises("INVALID_ARGUMENT", "must be int32 or int64", run, "ReverseV2", { xt, T({ 0 }, "float32") })
  end)

  it("Reverse (legacy) takes a bool per dimension", function()
    local x = h.random_values({ 3, 2, 2 }, 3)
    local xt = tfdev.tensor(x, "float32")
    local got = run("Reverse", { tfdev.tensor(x, "float64"), T({ true, false, true }, "bool") }):totable()
    assert.are.same(ref_reverse(x, { [0] = true, [2] = true }), got)
    assert.are.same({ { 2, 1 } }, vals("Reverse", { T({ { 1, 2 } }), T({ false, true }, "bool") }))
    h.raises("INVALID_ARGUMENT",
      "'dims' must have the same number of values as 'input' has dimensions. 'input' has 3'dims' has 2 values", run,
      "Reverse", { xt, T({ true, false }, "bool") })
    h.raises("INVALID_ARGUMENT", "dims (input 1) must be bool", run, "Reverse", { xt, T({ 1, 0, 0 }) })
  end)

  it("OneHot: TensorFlow's examples, axis, every index and value dtype, out-of-range rows off", function()
    -- tf.one_hot([0, 1, 2], 3): the identity
    assert.are.same({ { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } },
      vals("OneHot", { T({ 0, 1, 2 }), T(3), T(1, "float32"), T(0, "float32") }))
    -- tf.one_hot([0, 2, -1, 1], 3, 5.0, 0.0, axis=-1)
    assert.are.same({ { 5, 0, 0 }, { 0, 0, 5 }, { 0, 0, 0 }, { 0, 5, 0 } },
      vals("OneHot", { T({ 0, 2, -1, 1 }, "int64"), T(3), T(5, "float32"), T(0, "float32") }))
    -- axis=0: [depth, features]
    assert.are.same({ { 5, 0, 0, 0 }, { 0, 0, 0, 5 }, { 0, 5, 0, 0 } },
      vals("OneHot", { T({ 0, 2, -1, 1 }), T(3), T(5, "float32"), T(0, "float32") }, { axis = 0 }))
    -- [[0, 2], [1, -1]] depth 3, axis=1 (on the middle axis): [batch, depth, features]
    assert.are.same({ { { 1, 0 }, { 0, 0 }, { 0, 1 } }, { { 0, 0 }, { 1, 0 }, { 0, 0 } } },
      vals("OneHot", { T({ { 0, 2 }, { 1, -1 } }), T(3), T(1), T(0) }, { axis = 1 }))
    assert.are.same({ { 0, 0 }, { 0, 1 } }, vals("OneHot", { T({ 7, 1 }, "uint8"), T(2), T(1), T(0) }))
    for _, dt in ipairs(ALL) do
      local y = run("OneHot", { T({ 1 }), T(2), tfdev.tensor(v(dt, 3), dt), tfdev.tensor(v(dt, 2), dt) })
      assert.are.equal(dt, y.dtype)
      assert.are.same({ { v(dt, 2), v(dt, 3) } }, y:totable())
    end
    assert.are.same({ 0, 4 }, run("OneHot", { empty("int32", { 0 }), T(4), T(1), T(0) }).shape)
    assert.are.same({ 2, 0 }, run("OneHot", { T({ 0, 1 }), T(0), T(1), T(0) }).shape)
    h.raises("INVALID_ARGUMENT", "depth must be non-negative, got: -1", run, "OneHot", { T({ 0 }), T(-1), T(1), T(0) })
    h.raises("INVALID_ARGUMENT", "Expected axis to be -1 or between [0, 2).  But received: 5", run, "OneHot",
      { T({ 0 }), T(2), T(1), T(0) }, { axis = 5 })
    h.raises("INVALID_ARGUMENT", "on_value must be a scalar, but got: [1]", run, "OneHot", { T({ 0 }), T(2), T({ 1 }), T(0) })
    h.raises("INVALID_ARGUMENT", "off_value must be a scalar, but got: [1]", run, "OneHot", { T({ 0 }), T(2), T(1), T({ 0 }) })
    h.raises("INVALID_ARGUMENT", "depth must be a scalar, but got: [1]", run, "OneHot", { T({ 0 }), T({ 2 }), T(1), T(0) })
    h.raises("INVALID_ARGUMENT", "indices must be uint8, int32 or int64", run, "OneHot", { T({ 0 }, "float32"), T(2), T(1), T(0) })
  end)

  it("LinSpace: num evenly spaced values ending at stop; num=1 gives start", function()
    -- tf.linspace(10.0, 12.0, 3) = [10, 11, 12]
    for _, dt in ipairs { "float32", "float64" } do
      assert.are.same({ 10, 11, 12 }, vals("LinSpace", { T(10, dt), T(12, dt), T(3) }))
      assert.are.same({ 10, 11, 12 }, vals("LinSpace", { T(10, dt), T(12, dt), T(3, "int64") }))
      assert.are.equal(dt, run("LinSpace", { T(0, dt), T(1, dt), T(5) }).dtype)
    end
    assert.are.same({ 4 }, vals("LinSpace", { T(4, "float32"), T(9, "float32"), T(1) }))
    local y = vals("LinSpace", { T(0, "float64"), T(1, "float64"), T(11) })
    for i = 1, 11 do assert.is_true(math.abs(y[i] - (i - 1) / 10) < 1e-12) end
    assert.are.equal(1, y[11])
    h.raises("INVALID_ARGUMENT", "Requires num > 0: 0", run, "LinSpace", { T(0, "float32"), T(1, "float32"), T(0) })
    h.raises("INVALID_ARGUMENT", "Requires num > 0: -2", run, "LinSpace", { T(0, "float32"), T(1, "float32"), T(-2) })
    h.raises("INVALID_ARGUMENT", "start must be a scalar, not shape [1]", run, "LinSpace",
      { T({ 0 }, "float32"), T(1, "float32"), T(2) })
    h.raises("INVALID_ARGUMENT", "T=int32 is not allowed", run, "LinSpace", { T(0), T(1), T(2) })
  end)

  -- Lua reference scan along axis (0-based) of a 2-D table.
  local function ref_scan(x, axis, prod, exclusive, reverse)
    local rows, cols = #x, #x[1]
    local out = {}
    for i = 1, rows do out[i] = {} end
    local n, m = axis == 0 and rows or cols, axis == 0 and cols or rows
    for k = 1, m do
      local acc = prod and 1 or 0
      for j0 = 1, n do
        local j = reverse and n + 1 - j0 or j0
        local i, c = axis == 0 and j or k, axis == 0 and k or j
        local before = acc
        acc = prod and acc * x[i][c] or acc + x[i][c]
        out[i][c] = exclusive and before or acc
      end
    end
    return out
  end

  it("Cumsum and Cumprod with exclusive and reverse, negative axes, every number dtype", function()
    -- TensorFlow's examples: cumsum([a, b, c]) = [a, a + b, a + b + c], exclusive [0, a, a + b], reverse [a+b+c, b+c, c]
    assert.are.same({ 1, 3, 6 }, vals("Cumsum", { T({ 1, 2, 3 }), T(0) }))
    assert.are.same({ 0, 1, 3 }, vals("Cumsum", { T({ 1, 2, 3 }), T(0) }, { exclusive = true }))
    assert.are.same({ 6, 5, 3 }, vals("Cumsum", { T({ 1, 2, 3 }), T(0) }, { reverse = true }))
    assert.are.same({ 5, 3, 0 }, vals("Cumsum", { T({ 1, 2, 3 }), T(0) }, { exclusive = true, reverse = true }))
    assert.are.same({ 1, 2, 6 }, vals("Cumprod", { T({ 1, 2, 3 }), T(0) }))
    assert.are.same({ 1, 1, 2 }, vals("Cumprod", { T({ 1, 2, 3 }), T(0) }, { exclusive = true }))
    local x = { { 1, 2, 3 }, { 2, 1, 2 }, { 3, 3, 1 } }
    for _, op in ipairs { "Cumsum", "Cumprod" } do
      for _, dt in ipairs { "float32", "float64", "int32", "int64", "uint8", "float16" } do
        for _, ax in ipairs { 0, 1, -1, -2 } do
          for _, ex in ipairs { false, true } do
            for _, rv in ipairs { false, true } do
              local y = run(op, { tfdev.tensor(x, dt), T(ax, ax == 0 and "int64" or "int32") }, { exclusive = ex, reverse = rv })
              assert.are.equal(dt, y.dtype)
              assert.are.same(ref_scan(x, ax < 0 and ax + 2 or ax, op == "Cumprod", ex, rv), y:totable())
            end
          end
        end
      end
    end
    assert.are.same({ 0, 3 }, run("Cumsum", { empty("float32", { 0, 3 }), T(1) }).shape)
    h.raises("INVALID_ARGUMENT", "ScanOp: Expected scan axis in the range [-2, 2), but got 2", run, "Cumsum",
      { tfdev.tensor(x, "float32"), T(2) })
    -- TensorFlow names a negative axis after adding the rank: -3 on rank 2 reads -1
    h.raises("INVALID_ARGUMENT", "ScanOp: Expected scan axis in the range [-2, 2), but got -1", run, "Cumprod",
      { tfdev.tensor(x, "float32"), T(-3) })
    h.raises("INVALID_ARGUMENT", "ScanOp: axis must be a scalar, not [1]", run, "Cumsum", { tfdev.tensor(x, "float32"), T({ 0 }) })
    h.raises("INVALID_ARGUMENT", "T=bool is not allowed", run, "Cumsum", { T({ true }, "bool"), T(0) })
  end)

  it("All and Any reduce bools like Sum, keep_dims, negative axes, empty reductions", function()
    local b = T({ { true, true }, { false, false } }, "bool")
    assert.are.same({ false, false }, vals("All", { b, T(0) }))
    assert.are.same({ true, false }, vals("All", { b, T(1) }))
    assert.are.same({ true, false }, vals("All", { b, T(-1, "int64") }))
    assert.are.same({ true, true }, vals("Any", { b, T(0) }))
    assert.are.same({ true, false }, vals("Any", { b, T({ -1 }) }))
    assert.are.equal(false, vals("All", { b, T({ 0, 1 }) }))
    assert.are.equal(true, vals("Any", { b, T({ 0, 1 }) }))
    assert.are.same({ { true }, { false } }, vals("All", { b, T(1) }, { keep_dims = true }))
    assert.are.same({ 2, 1 }, run("Any", { b, T(1) }, { keep_dims = true }).shape)
    assert.are.same(b:totable(), vals("All", { b, T({}) }))
    -- an empty reduction: All is true, Any false
    assert.are.same({ true, true }, vals("All", { empty("bool", { 2, 0 }), T(1) }))
    assert.are.same({ false, false }, vals("Any", { empty("bool", { 2, 0 }), T(1) }))
    assert.are.same({ 0 }, run("All", { empty("bool", { 0, 2 }), T(1) }).shape)
    h.raises("INVALID_ARGUMENT", "input must be bool, got float32", run, "All", { T({ 1 }, "float32"), T(0) })
    h.raises("INVALID_ARGUMENT", "out of range", run, "Any", { b, T(2) })
  end)

  it("BroadcastArgs gives the broadcast shape of two shapes, int32 or int64", function()
    for _, dt in ipairs { "int32", "int64" } do
      local y = run("BroadcastArgs", { T({ 2, 1, 3 }, dt), T({ 4, 1 }, dt) })
      assert.are.equal(dt, y.dtype)
      assert.are.same({ 2, 4, 3 }, y:totable())
    end
    assert.are.same({ 5 }, vals("BroadcastArgs", { T({ 5 }), T({ 1 }) }))
    assert.are.same({ 0, 3 }, vals("BroadcastArgs", { T({ 0, 1 }), T({ 3 }) }))
    assert.are.same({ 3 }, vals("BroadcastArgs", { empty("int32", { 0 }), T({ 3 }) }))
    assert.are.same({ 0 }, run("BroadcastArgs", { empty("int32", { 0 }), empty("int32", { 0 }) }).shape)
    h.raises("INVALID_ARGUMENT", "Incompatible shapes: [2,3] vs. [4]", run, "BroadcastArgs", { T({ 2, 3 }), T({ 4 }) })
    h.raises("INVALID_ARGUMENT", "must have rank 1", run, "BroadcastArgs", { T(2), T({ 4 }) })
    h.raises("INVALID_ARGUMENT", "T=float32 is not allowed", run, "BroadcastArgs", { T({ 2 }, "float32"), T({ 4 }, "float32") })
  end)

  -- Lua reference band of a [b][m][n] or [m][n] table.
  local function ref_band(x, lo, hi)
    if type(x[1][1]) == "table" then
      local out = {}
      for i = 1, #x do out[i] = ref_band(x[i], lo, hi) end
      return out
    end
    local out = {}
    for i = 1, #x do
      out[i] = {}
      for j = 1, #x[1] do
        local keep = (lo < 0 or (i - j) <= lo) and (hi < 0 or (j - i) <= hi)
        out[i][j] = keep and x[i][j] or 0
      end
    end
    return out
  end

  it("MatrixBandPart keeps a band of each innermost matrix; -1 keeps a whole side", function()
    -- TensorFlow's example: input 4x4 [[0,1,2,3],[-1,0,1,2],[-2,-1,0,1],[-3,-2,-1,0]]
    local x = { { 0, 1, 2, 3 }, { -1, 0, 1, 2 }, { -2, -1, 0, 1 }, { -3, -2, -1, 0 } }
    assert.are.same({ { 0, 1, 0, 0 }, { -1, 0, 1, 0 }, { -2, -1, 0, 1 }, { 0, -2, -1, 0 } },
      vals("MatrixBandPart", { T(x), T(2, "int64"), T(1, "int64") }))
    assert.are.same({ { 0, 0, 0, 0 }, { -1, 0, 0, 0 }, { -2, -1, 0, 0 }, { 0, -2, -1, 0 } },
      vals("MatrixBandPart", { T(x), T(2, "int64"), T(0, "int64") }))
    local big = h.random_values({ 2, 3, 5 }, 11)
    for _, lh in ipairs { { -1, -1 }, { 0, 0 }, { 1, -1 }, { -1, 2 }, { 3, 5 }, { 0, 4 } } do
      assert.are.same(ref_band(big, lh[1], lh[2]),
        vals("MatrixBandPart", { tfdev.tensor(big, "float64"), T(lh[1]), T(lh[2]) }))
    end
    for _, dt in ipairs(ALL) do
      local m = { { v(dt, 1), v(dt, 3) }, { v(dt, 5), v(dt, 7) } }
      local y = run("MatrixBandPart", { tfdev.tensor(m, dt), T(0, "int64"), T(-1, "int64") })
      assert.are.equal(dt, y.dtype)
      assert.are.same({ { v(dt, 1), v(dt, 3) }, { v(dt, 0), v(dt, 7) } }, y:totable())
    end
    assert.are.same({ 0, 2, 2 }, run("MatrixBandPart", { empty("float32", { 0, 2, 2 }), T(0), T(0) }).shape)
    h.raises("INVALID_ARGUMENT", "input must be at least 2-dim, received shape: [3]", run, "MatrixBandPart",
      { T({ 1, 2, 3 }), T(0), T(0) })
    h.raises("INVALID_ARGUMENT", "num_lower must be negative or less or equal to number of rows (4) got: 5", run,
      "MatrixBandPart", { T(x), T(5), T(0) })
    h.raises("INVALID_ARGUMENT", "num_upper must be negative or less or equal to number of columns (4) got: 9", run,
      "MatrixBandPart", { T(x), T(0), T(9) })
    h.raises("INVALID_ARGUMENT", "num_lower must be scalar, got shape [1]", run, "MatrixBandPart", { T(x), T({ 0 }), T(0) })
  end)
end)
