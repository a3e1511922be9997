-- Elementwise math, comparisons and logic against values worked out here (by hand or by a small Lua
-- reference that uses Lua's own floor division and modulo, IEEE comparisons and wrapping integers):
-- Selu, Softplus, Rsqrt, Reciprocal, Floor, Ceil, Sin, Cos, Atan2, Pow, SquaredDifference, FloorDiv, FloorMod, Equal, NotEqual, Less,
-- LessEqual, Greater, GreaterEqual, LogicalAnd, LogicalOr, LogicalNot, Select, SelectV2, AddN.
local tfdev = require "tfdev"
local h = require "spec.support.helpers"

local nan, inf = 0 / 0, math.huge

-- Runs one node "y" of op over Const inputs; the op itself runs (no constant folding) unless `fold`.
local function run_op(op, inputs, attrs, fold) return h.run_node(op, inputs, attrs, nil, fold)[1] end

local function value(op, inputs, attrs) return run_op(op, inputs, attrs):totable() end

local T = tfdev.tensor

-- Flat list of a nested table.
local function flat(t, out)
  out = out or {}
  if type(t) ~= "table" then
    out[#out + 1] = t
  else
    for _, v in ipairs(t) do flat(v, out) end
  end
  return out
end

local function close(want, got, rel, abs, path)
  path = path or ""
  if type(want) == "table" then
    assert(type(got) == "table" and #got == #want,
      string.format("%s: expected %d items, got %s", path, #want, type(got) == "table" and #got or tostring(got)))
    for i = 1, #want do close(want[i], got[i], rel, abs, path .. "[" .. i .. "]") end
  elseif want ~= want then
    assert(got ~= got, string.format("%s: expected NaN, got %.9g", path, got))
  elseif want == inf or want == -inf then
    assert(got == want, string.format("%s: expected %s, got %.9g", path, tostring(want), got))
  else
    local tol = (abs or 0) + (rel or 0) * math.abs(want)
    assert(math.abs(want - got) <= tol, string.format("%s: expected %.17g, got %.17g", path, want, got))
  end
end

-- Applies f elementwise to a nested table (one input) or to two/three with numpy broadcasting by
-- nesting depth: a lower-rank or size-1 side is repeated.
local function map(f, ...)
  local args = { ... }
  local function depth(t) return type(t) == "table" and 1 + depth(t[1]) or 0 end
  local d = 0
  for _, a in ipairs(args) do d = math.max(d, depth(a)) end
  local function go(level, vals)
    if level == 0 then return f(table.unpack(vals, 1, #args)) end
    local n = 1
    for i, v in ipairs(vals) do
      if depth(args[i]) >= level and #v > n then n = #v end
    end
    local out = {}
    for k = 1, n do
      local sub = {}
      for i, v in ipairs(vals) do
        if depth(args[i]) >= level then sub[i] = #v == 1 and v[1] or v[k] else sub[i] = v end
      end
      out[k] = go(level - 1, sub)
    end
    return out
  end
  return go(d, args)
end

local function wrap32(x)
  x = x & 0xffffffff
  return x >= 0x80000000 and x - 0x100000000 or x
end

describe("elementwise math ops", function()
  after_each(function() tfdev.factory.reset() end)

  local SCALE, ALPHA = 1.0507009873554804934193349852946, 1.6732632423543772848170429916717
  local function selu(x) return x < 0 and SCALE * ALPHA * (math.exp(x) - 1) or SCALE * x end

  it("Selu with TensorFlow's constants, float32 and float64", function()
    local x = { { -3, -1, -0.5, -1e-3 }, { 0, 0.25, 1, 10 } }
    close(map(selu, x), value("Selu", { T(x, "float64") }), 1e-13, 1e-15)
    close(map(selu, x), value("Selu", { T(x, "float32") }), 2e-7, 1e-9)
    close({ SCALE * ALPHA * (math.exp(-1) - 1), SCALE }, value("Selu", { T({ -1, 1 }, "float64") }), 1e-15)
    h.raises("INVALID_ARGUMENT", "node 'y' (Selu): T=int32 is not allowed", value, "Selu", { T({ 1 }, "int32") })
  end)

  local function log1p(u)
    if math.abs(u) < 1e-4 then return u - u * u / 2 + u * u * u / 3 - u * u * u * u / 4 end
    return math.log(1 + u)
  end
  local function softplus(x) return x > 0 and x + log1p(math.exp(-x)) or log1p(math.exp(x)) end

  it("Softplus without overflow or underflow for large |x|", function()
    local x = { -100, -40, -20, -5, -1e-6, 0, 1e-6, 1, 5, 14, 20, 40, 100 }
    close(map(softplus, x), value("Softplus", { T(x, "float64") }), 1e-12)
    close(map(softplus, x), value("Softplus", { T(x, "float32") }), 1e-6, 2e-45)
    local big = value("Softplus", { T({ 100, 1e30, -100, -1000 }, "float32") })
    assert.are.equal(100, big[1])
    assert.are.equal(T({ 1e30 }, "float32"):totable()[1], big[2]) -- x itself, not inf
    assert(big[3] > 0 and math.abs(big[3] - 3.7200759760208e-44) < 2e-45, "softplus(-100) = " .. big[3])
    assert.are.equal(0, big[4])
    local d = value("Softplus", { T({ 100, 1000, -100 }, "float64") })
    assert.are.same({ 100, 1000 }, { d[1], d[2] })
    close(3.720075976020836e-44, d[3], 1e-13)
  end)

  it("Rsqrt and Reciprocal, zeros and negatives included", function()
    close({ 2, 1, 0.5, 0.25, inf }, value("Rsqrt", { T({ 0.25, 1, 4, 16, 0 }, "float32") }), 1e-6)
    close({ { 1 / math.sqrt(2), 1 / math.sqrt(3) } }, value("Rsqrt", { T({ { 2, 3 } }, "float64") }), 1e-15)
    close({ nan }, value("Rsqrt", { T({ -4 }, "float64") }))
    close({ 0.5, -0.25, 2, inf, -inf, 1 / 3 }, value("Reciprocal", { T({ 2, -4, 0.5, 0, -0.0, 3 }, "float64") }), 1e-15)
    close({ 0.5, -0.25, 1 / 3 }, value("Reciprocal", { T({ 2, -4, 3 }, "float32") }), 1e-7)
    h.raises("INVALID_ARGUMENT", "T=int64 is not allowed", value, "Reciprocal", { T({ 2 }, "int64") })
  end)

  it("Floor, Ceil, Sin and Cos, negatives, halves, infinities and NaN included", function()
    local x = { -2.5, -0.5, 0, 0.5, 1.5, 3, inf, -inf, nan }
    for _, dt in ipairs { "float32", "float64" } do
      close({ -3, -1, 0, 0, 1, 3, inf, -inf, nan }, value("Floor", { T(x, dt) }))
      close({ -2, -0.0, 0, 1, 2, 3, inf, -inf, nan }, value("Ceil", { T(x, dt) }))
    end
    local angles = { 0, 0.5, -1, math.pi, 100 }
    local sin, cos = {}, {}
    for i, a in ipairs(angles) do sin[i], cos[i] = math.sin(a), math.cos(a) end
    close(sin, value("Sin", { T(angles, "float64") }), 1e-15, 1e-15)
    close(cos, value("Cos", { T(angles, "float64") }), 1e-15, 1e-15)
    close(sin, value("Sin", { T(angles, "float32") }), 1e-6, 1e-6)
    close({ nan, nan }, value("Cos", { T({ inf, nan }, "float32") }))
    h.raises("INVALID_ARGUMENT", "T=int32 is not allowed", value, "Floor", { T({ 2 }, "int32") })
  end)

  it("Atan2 over the four quadrants, zeros and infinities, with broadcasting", function()
    local y = { 1, 1, -1, -1, 0, -0.0, 0, inf, 1 }
    local x = { 1, -1, 1, -1, 1, 1, -1, inf, 0 }
    local want = {}
    for i = 1, #y do want[i] = math.atan(y[i], x[i]) end
    close(want, value("Atan2", { T(y, "float64"), T(x, "float64") }), 1e-15, 1e-15)
    close(want, value("Atan2", { T(y, "float32"), T(x, "float32") }), 1e-6, 1e-6)
    close({ { math.atan(1, 2), math.atan(-3, 2) } }, value("Atan2", { T({ { 1, -3 } }, "float64"), T(2, "float64") }), 1e-15)
    h.raises("INVALID_ARGUMENT", "T=int32 is not allowed", value, "Atan2", { T({ 1 }, "int32"), T({ 1 }, "int32") })
  end)

  local function ipow(x, y, wrap)
    local r = 1
    for _ = 1, y do r = r * x end -- Lua's integers wrap modulo 2^64 like int64
    return wrap and wrap32(r) or r
  end

  it("Pow: floats, wrapping integers, broadcasting; integer negative powers refused", function()
    close({ { 1, 2, 4 }, { 1, 3, 9 } }, value("Pow", { T({ { 2 }, { 3 } }, "float32"), T({ 0, 1, 2 }, "float32") }), 1e-7)
    close({ 8, 2, 1 / 9, 1, nan }, value("Pow", { T({ 2, 4, 3, 0, -8 }, "float64"), T({ 3, 0.5, -2, 0, 1 / 3 }, "float64") }),
      1e-15)
    local x, y = { { 2, -3, 3, 0, 7 } }, { 10, 3, 40, 0, 1 }
    assert.are.same(map(function(a, b) return ipow(a, b, true) end, x, y), value("Pow", { T(x, "int32"), T(y, "int32") }))
    assert.are.same({ { 1024, -27, ipow(3, 40), 1, 7 } }, value("Pow", { T(x, "int64"), T(y, "int64") }))
    assert.are.same({ ipow(3, 50) }, value("Pow", { T({ 3 }, "int64"), T({ 50 }, "int64") })) -- wraps
    h.raises("INVALID_ARGUMENT", "node 'y' (Pow): Integers to negative integer powers are not allowed", value, "Pow",
      { T({ 2, 2 }, "int32"), T({ 1, -1 }, "int32") })
  end)

  it("SquaredDifference with broadcasting, wrapping for integers", function()
    local a, b = { { 1, 2 }, { 3, -4 } }, { 0.5, 5 }
    local sq = function(x, y) return (x - y) * (x - y) end
    close(map(sq, a, b), value("SquaredDifference", { T(a, "float32"), T(b, "float32") }), 1e-7)
    close(map(sq, b, a), value("SquaredDifference", { T(b, "float64"), T(a, "float64") }), 1e-15)
    assert.are.same({ { 4, 1 }, { 0, 9 } }, value("SquaredDifference", { T({ { 1, 2 }, { 3, 0 } }, "int32"), T(3, "int32") }))
    assert.are.same({ wrap32(100000 * 100000) }, value("SquaredDifference", { T({ 100000 }, "int32"), T({ 0 }, "int32") }))
    assert.are.same({ 3037000500 * 3037000500 }, -- wraps in int64 as in Lua
      value("SquaredDifference", { T({ 3037000500 }, "int64"), T({ 0 }, "int64") }))
  end)

  it("FloorDiv and FloorMod round toward negative infinity, integer and float", function()
    local a = { -7, 7, -7, 7, 0, -1, 6, 1, -6 }
    local b = { 2, 2, -2, -2, 3, 5, -3, -5, 4 }
    for _, dt in ipairs { "int32", "int64" } do
      assert.are.same(map(function(x, y) return x // y end, a, b), value("FloorDiv", { T(a, dt), T(b, dt) }))
      assert.are.same(map(function(x, y) return x % y end, a, b), value("FloorMod", { T(a, dt), T(b, dt) }))
    end
    assert.are.same({ -4 }, value("FloorDiv", { T({ -7 }, "int32"), T({ 2 }, "int32") }))
    assert.are.same({ 1 }, value("FloorMod", { T({ -7 }, "int32"), T({ 2 }, "int32") }))
    assert.are.same({ -1 }, value("FloorMod", { T({ 7 }, "int64"), T({ -2 }, "int64") }))
    -- ranks 2 and 1: [2,1] by [3]
    local col, row = { { -7 }, { 7 } }, { 2, -2, 3 }
    assert.are.same({ { -4, 3, -3 }, { 3, -4, 2 } }, value("FloorDiv", { T(col, "int32"), T(row, "int32") }))
    assert.are.same({ { 1, -1, 2 }, { 1, -1, 1 } }, value("FloorMod", { T(col, "int64"), T(row, "int64") }))
    -- floats
    local fa, fb = { -7.5, 7.5, -7.5, 7.5, 3 }, { 2, 2, -2, -2, 0.75 }
    for _, dt in ipairs { "float32", "float64" } do
      close(map(function(x, y) return x // y end, fa, fb), value("FloorDiv", { T(fa, dt), T(fb, dt) }), 0)
      close(map(function(x, y) return x % y end, fa, fb), value("FloorMod", { T(fa, dt), T(fb, dt) }), 0)
    end
    assert.are.same({ 0.5 }, value("FloorMod", { T({ -7.5 }, "float32"), T({ 2 }, "float32") }))
    -- float division by zero follows IEEE; the smallest integer by -1 wraps instead of trapping
    close({ inf, -inf, nan }, value("FloorDiv", { T({ 1, -1, 0 }, "float64"), T(0, "float64") }))
    close({ nan }, value("FloorMod", { T({ 1 }, "float32"), T({ 0 }, "float32") }))
    assert.are.same({ -2147483648, 2147483647 }, value("FloorDiv", { T({ -2147483648, -2147483647 }, "int32"), T(-1, "int32") }))
    assert.are.same({ 0, 0 }, value("FloorMod", { T({ -2147483648, 5 }, "int32"), T(-1, "int32") }))
    assert.are.same({ math.mininteger }, value("FloorDiv", { T({ math.mininteger }, "int64"), T({ -1 }, "int64") }))
  end)

  it("integer FloorDiv and FloorMod by zero fail with 'Integer division by zero'", function()
    for _, op in ipairs { "FloorDiv", "FloorMod" } do
      for _, dt in ipairs { "int32", "int64" } do
        h.raises("INVALID_ARGUMENT", "node 'y' (" .. op .. "): Integer division by zero", value, op,
          { T({ 1, 2 }, dt), T({ 1, 0 }, dt) })
        h.raises("INVALID_ARGUMENT", "Integer division by zero", value, op, { T({ { 1 }, { 2 } }, dt), T(0, dt) })
      end
    end
    -- an empty result divides nothing
    assert.are.same({ 0 }, run_op("FloorDiv", { T { dtype = "int32", shape = { 0 } }, T(0, "int32") }).shape)
  end)

  it("refuse mismatched dtypes and incompatible shapes at graph creation, naming the node", function()
    h.raises("INVALID_ARGUMENT", "node 'y' (Pow): input 0 is float32 but input 1 is float64", value, "Pow",
      { T({ 1 }, "float32"), T({ 1 }, "float64") })
    h.raises("INVALID_ARGUMENT", "node 'y' (FloorMod): Incompatible shapes: [2] vs. [3]", value, "FloorMod",
      { T({ 1, 2 }, "int32"), T({ 1, 2, 3 }, "int32") })
    h.raises("INVALID_ARGUMENT", "FloorDiv): T=bool is not allowed", value, "FloorDiv", { T({ true }), T({ true }) })
  end)
end)

describe("comparison ops", function()
  after_each(function() tfdev.factory.reset() end)

  local ops = {
    Equal = function(x, y) return x == y end,
    NotEqual = function(x, y) return x ~= y end,
    Less = function(x, y) return x < y end,
    LessEqual = function(x, y) return x <= y end,
    Greater = function(x, y) return x > y end,
    GreaterEqual = function(x, y) return x >= y end,
  }

  for op, f in pairs(ops) do
    it(op .. " on every numeric dtype with broadcasting and NaN", function()
      local a, b = { 1, 2, nan, nan, 3, -0.0, inf }, { 2, 2, 1, nan, 1, 0, inf }
      for _, dt in ipairs { "float32", "float64" } do
        local got = run_op(op, { T(a, dt), T(b, dt) })
        assert.are.equal("bool", got.dtype)
        assert.are.same(map(f, a, b), got:totable())
      end
      local col, row = { { -1 }, { 0 }, { 5 } }, { 0, 5 }
      for _, dt in ipairs { "int32", "int64", "float32" } do
        assert.are.same(map(f, col, row), value(op, { T(col, dt), T(row, dt) }))
        assert.are.same(map(f, row, 0), value(op, { T(row, dt), T(0, dt) }))
      end
      -- int64 compares exactly, beyond a double's 53 bits
      local big = { 1 << 62, (1 << 62) + 1 }
      assert.are.same(map(f, big, { (1 << 62) + 1 }), value(op, { T(big, "int64"), T({ (1 << 62) + 1 }, "int64") }))
    end)
  end

  it("NaN: NaN == NaN is false, NaN != NaN is true", function()
    assert.are.same({ false }, value("Equal", { T({ nan }, "float32"), T({ nan }, "float32") }))
    assert.are.same({ true }, value("NotEqual", { T({ nan }, "float64"), T({ nan }, "float64") }))
    assert.are.same({ false, false }, value("LessEqual", { T({ nan, 1 }, "float32"), T({ 1, nan }, "float32") }))
  end)

  it("Equal and NotEqual on bool; ordering refused on bool", function()
    local a, b = { { true }, { false } }, { true, false }
    assert.are.same({ { true, false }, { false, true } }, value("Equal", { T(a), T(b) }))
    assert.are.same({ { false, true }, { true, false } }, value("NotEqual", { T(a), T(b) }))
    h.raises("INVALID_ARGUMENT", "node 'y' (Less): T=bool is not allowed", value, "Less", { T(a), T(b) })
  end)

  it("incompatible shapes: an error, or with incompatible_shape_error=false a scalar", function()
    h.raises("INVALID_ARGUMENT", "node 'y' (Greater): Incompatible shapes: [2] vs. [3]", value, "Greater",
      { T({ 1, 2 }, "int32"), T({ 1, 2, 3 }, "int32") })
    h.raises("INVALID_ARGUMENT", "node 'y' (Equal): Incompatible shapes", value, "Equal",
      { T({ 1, 2 }, "int32"), T({ 1, 2, 3 }, "int32") })
    local r = run_op("Equal", { T({ 1, 2 }, "int32"), T({ 1, 2, 3 }, "int32") }, { incompatible_shape_error = false })
    assert.are.same({}, r.shape)
    assert.are.equal(false, r:totable())
    assert.are.equal(true, value("NotEqual", { T({ 1, 2 }, "int32"), T({ 1, 2, 3 }, "int32") },
      { incompatible_shape_error = false }))
    assert.are.same({ true, false }, value("Equal", { T({ 1, 2 }, "int32"), T({ 1, 3 }, "int32") },
      { incompatible_shape_error = false }))
    h.raises("INVALID_ARGUMENT", "input 0 is int32 but input 1 is int64", value, "Less", { T({ 1 }, "int32"), T({ 1 }, "int64") })
  end)
end)

describe("logical ops", function()
  after_each(function() tfdev.factory.reset() end)

  it("LogicalAnd and LogicalOr with broadcasting, LogicalNot", function()
    local a, b = { { true }, { false } }, { true, false }
    assert.are.same({ { true, false }, { false, false } }, value("LogicalAnd", { T(a), T(b) }))
    assert.are.same({ { true, true }, { true, false } }, value("LogicalOr", { T(a), T(b) }))
    assert.are.same({ { false, true } }, value("LogicalAnd", { T({ { true, true } }), T({ false, true }) }))
    assert.are.same({ true, true }, value("LogicalOr", { T(false), T({ true, true }) })) -- scalar and vector
    assert.are.same({ { false }, { true } }, value("LogicalNot", { T(a) }))
    assert.are.equal(true, value("LogicalNot", { T(false) }))
  end)

  it("refuse non-bool operands and incompatible shapes", function()
    h.raises("INVALID_ARGUMENT", "node 'y' (LogicalAnd): operand (input 1) must be bool, got int32", value, "LogicalAnd",
      { T({ true }), T({ 1 }, "int32") })
    h.raises("INVALID_ARGUMENT", "node 'y' (LogicalNot): operand (input 0) must be bool, got float32", value,
      "LogicalNot", { T({ 1 }, "float32") })
    h.raises("INVALID_ARGUMENT", "node 'y' (LogicalOr): Incompatible shapes: [2] vs. [3]", value, "LogicalOr",
      { T({ true, false }), T({ true, false, true }) })
  end)
end)

describe("Select and SelectV2", function()
  after_each(function() tfdev.factory.reset() end)

  local x = { { 1, 2 }, { 3, 4 }, { 5, 6 } }
  local y = { { -1, -2 }, { -3, -4 }, { -5, -6 } }

  it("Select: scalar, same-shape and vector conditions", function()
    assert.are.same(x, value("Select", { T(true), T(x, "float32"), T(y, "float32") }))
    assert.are.same(y, value("Select", { T(false), T(x, "int64"), T(y, "int64") }))
    local c = { { true, false }, { false, true }, { true, true } }
    assert.are.same({ { 1, -2 }, { -3, 4 }, { 5, 6 } }, value("Select", { T(c), T(x, "int32"), T(y, "int32") }))
    -- a vector picks whole rows
    assert.are.same({ { 1, 2 }, { -3, -4 }, { 5, 6 } }, value("Select", { T({ true, false, true }), T(x, "float64"), T(y, "float64") }))
    local x3 = { { { 1, 2 } }, { { 3, 4 } } }
    assert.are.same({ { { 0, 0 } }, { { 3, 4 } } },
      value("Select", { T({ false, true }), T(x3, "float32"), T({ { { 0, 0 } }, { { 0, 0 } } }, "float32") }))
    assert.are.same({ true, false }, value("Select", { T({ true, false }), T({ true, true }), T({ false, false }) }))
    assert.are.same({ 7, -8 }, value("Select", { T({ true, false }), T({ 7, 8 }, "int32"), T({ -7, -8 }, "int32") }))
  end)

  it("Select refuses conditions and branches of other shapes, and mixed dtypes", function()
    h.raises("INVALID_ARGUMENT", "node 'y' (Select): condition must be a scalar, a vector as long as the first dimension",
      value, "Select", { T({ true, false }), T(x, "float32"), T(y, "float32") })
    h.raises("INVALID_ARGUMENT", "condition must be a scalar", value, "Select",
      { T({ { true, false } }), T(x, "float32"), T(y, "float32") })
    h.raises("INVALID_ARGUMENT", "node 'y' (Select): 'then' and 'else' must have the same shape", value, "Select",
      { T(true), T(x, "float32"), T({ 1, 2 }, "float32") })
    h.raises("INVALID_ARGUMENT", "node 'y' (Select): condition (input 0) must be bool, got int32", value, "Select",
      { T({ 1, 0, 1 }, "int32"), T(x, "float32"), T(y, "float32") })
    h.raises("INVALID_ARGUMENT", "input 1 is float32 but input 2 is float64", value, "Select",
      { T(true), T(x, "float32"), T(y, "float64") })
  end)

  it("SelectV2 broadcasts condition, then and else together", function()
    -- [2,1] condition, [3] then, scalar else -> [2,3]
    assert.are.same({ { 1, 2, 3 }, { 0, 0, 0 } },
      value("SelectV2", { T({ { true }, { false } }), T({ 1, 2, 3 }, "int32"), T(0, "int32") }))
    -- [3] condition against [2,1] then and [1,3] else
    local c, t, e = { true, false, true }, { { 10 }, { 20 } }, { { -1, -2, -3 } }
    assert.are.same(map(function(cc, tt, ee) if cc then return tt end return ee end, c, t, e),
      value("SelectV2", { T(c), T(t, "float32"), T(e, "float32") }))
    assert.are.same({ { 10, -2, 10 }, { 20, -2, 20 } }, value("SelectV2", { T(c), T(t, "float64"), T(e, "float64") }))
    assert.are.same({ 5, 6 }, value("SelectV2", { T(true), T({ 5, 6 }, "int64"), T(0, "int64") }))
    h.raises("INVALID_ARGUMENT", "node 'y' (SelectV2): Incompatible shapes", value, "SelectV2",
      { T({ true, false }), T({ 1, 2, 3 }, "int32"), T(0, "int32") })
  end)
end)

describe("AddN", function()
  after_each(function() tfdev.factory.reset() end)

  it("one input, three inputs, wrapping integers", function()
    assert.are.same({ { 1, 2 } }, value("AddN", { T({ { 1, 2 } }, "int32") }, { N = 1 }))
    close({ 1.5 + 10 - 4, 2 + 20 + 0.25 },
      value("AddN", { T({ 1.5, 2 }, "float32"), T({ 10, 20 }, "float32"), T({ -4, 0.25 }, "float32") }), 1e-7)
    assert.are.same({ { 111 }, { 222 } }, value("AddN", { T({ { 1 }, { 2 } }, "int64"), T({ { 10 }, { 20 } }, "int64"),
      T({ { 100 }, { 200 } }, "int64") }, { N = 3 }))
    assert.are.same({ -2147483648 }, value("AddN", { T({ 2147483647 }, "int32"), T({ 1 }, "int32"), T({ 0 }, "int32") }))
    assert.are.equal(3.5, value("AddN", { T(1, "float64"), T(2.5, "float64") }))
  end)

  it("refuses other shapes, dtypes and a wrong N", function()
    h.raises("INVALID_ARGUMENT", "node 'y' (AddN): inputs must have the same shape: input 1 has shape [3] but input 0 has shape [2]",
      value, "AddN", { T({ 1, 2 }, "float32"), T({ 1, 2, 3 }, "float32") })
    h.raises("INVALID_ARGUMENT", "input 0 is float32 but input 2 is int32", value, "AddN",
      { T({ 1 }, "float32"), T({ 1 }, "float32"), T({ 1 }, "int32") })
    h.raises("INVALID_ARGUMENT", "node 'y' (AddN): N is 3 but the node has 2 inputs", value, "AddN",
      { T({ 1 }, "float32"), T({ 1 }, "float32") }, { N = 3 })
    h.raises("INVALID_ARGUMENT", "T=bool is not allowed", value, "AddN", { T({ true }), T({ true }) })
  end)
end)

describe("large broadcasts over the intra-op pool", function()
  after_each(function() tfdev.factory.reset() end)

  it("FloorMod, Less, SelectV2 and AddN on [300, 200] against the Lua reference", function()
    local rows, cols = 300, 200
    local a, bcol, brow = {}, {}, {}
    for i = 1, rows do
      a[i] = {}
      bcol[i] = { (i % 7) - 3 == 0 and 5 or (i % 7) - 3 }
      for j = 1, cols do a[i][j] = ((i * 31 + j * 17) % 201) - 100 end
    end
    for j = 1, cols do brow[j] = (j % 2 == 0) end
    local want = flat(map(function(x, y) return x % y end, a, bcol))
    assert.are.same(want, flat(value("FloorMod", { T(a, "int32"), T(bcol, "int32") })))
    local lt = flat(map(function(x, y) return x < y end, a, bcol))
    assert.are.same(lt, flat(value("Less", { T(a, "float32"), T(bcol, "float32") })))
    local sel = flat(map(function(c, x, y) if c then return x end return y end, brow, a, bcol))
    assert.are.same(sel, flat(value("SelectV2", { T(brow), T(a, "int64"), T(bcol, "int64") })))
    local sum = flat(map(function(x) return 3 * x end, a))
    assert.are.same(sum, flat(value("AddN", { T(a, "int32"), T(a, "int32"), T(a, "int32") })))
  end)
end)

describe("checks the kernels make when shapes are known only at run time", function()
  after_each(function() tfdev.factory.reset() end)

  -- y = op(placeholders p1..pn of unknown shape), run with feeds.
  local function run_fed(op, feeds, attrs)
    local g = tfdev.graph()
    local inputs, fd = {}, {}
    for i, t in ipairs(feeds) do
      inputs[i] = g:placeholder(t.dtype, nil, { name = "p" .. i })
      fd["p" .. i] = t
    end
    local opts = { name = "y" }
    for k, v in pairs(attrs or {}) do opts[k] = v end
    g:op(op, inputs, opts)
    local s <close> = tfdev.session { optimize_graph = false }
    s:create(g)
    return s:run(fd, "y"):totable()
  end

  it("refuses incompatible shapes, naming the node; Equal may compare them as a scalar", function()
    h.raises("INVALID_ARGUMENT", "node 'y' (Less): Incompatible shapes: [2] vs. [3]", run_fed, "Less",
      { T({ 1, 2 }, "float32"), T({ 1, 2, 3 }, "float32") })
    h.raises("INVALID_ARGUMENT", "node 'y' (SelectV2): Incompatible shapes", run_fed, "SelectV2",
      { T({ true, false }), T({ 1, 2, 3 }, "int32"), T(0, "int32") })
    assert.are.equal(true, run_fed("NotEqual", { T({ 1, 2 }, "int32"), T({ 1, 2, 3 }, "int32") },
      { incompatible_shape_error = false }))
    assert.are.same({ { true, false } }, run_fed("Equal", { T({ { 1, 2 } }, "int32"), T({ 1, 3 }, "int32") },
      { incompatible_shape_error = false }))
  end)

  it("Select's condition and branches, AddN's shapes, integer division by zero", function()
    local x = T({ { 1, 2 }, { 3, 4 } }, "float32")
    assert.are.same({ { 1, 2 }, { 0, 0 } }, run_fed("Select", { T({ true, false }), x, T({ { 0, 0 }, { 0, 0 } }, "float32") }))
    h.raises("INVALID_ARGUMENT", "node 'y' (Select): condition must be a scalar", run_fed, "Select",
      { T({ true, false, true }), x, x })
    h.raises("INVALID_ARGUMENT", "node 'y' (Select): 'then' and 'else' must have the same shape, got [2,2] and [2]",
      run_fed, "Select", { T(true), x, T({ 1, 2 }, "float32") })
    h.raises("INVALID_ARGUMENT", "node 'y' (AddN): input 1 has shape [2] but input 0 has shape [2,2]", run_fed, "AddN",
      { x, T({ 1, 2 }, "float32") })
    h.raises("INVALID_ARGUMENT", "node 'y' (FloorMod): Integer division by zero", run_fed, "FloorMod",
      { T({ 5, 6 }, "int64"), T({ 0 }, "int64") })
  end)
end)

describe("constant folding", function()
  after_each(function() tfdev.factory.reset() end)

  it("folds the new ops to the values they compute when run", function()
    local inputs = { T({ { true }, { false } }), T({ -7, 7 }, "int32"), T(2, "int32") }
    local g = { node = {} }
    for i, t in ipairs(inputs) do g.node[i] = { name = "in" .. i, op = "Const", attr = { value = t } } end
    g.node[#g.node + 1] = { name = "m", op = "FloorMod", input = { "in2", "in3" } }
    g.node[#g.node + 1] = { name = "lt", op = "Less", input = { "m", "in3" } }
    g.node[#g.node + 1] = { name = "and", op = "LogicalAnd", input = { "in1", "lt" } }
    g.node[#g.node + 1] = { name = "y", op = "SelectV2", input = { "and", "in2", "m" } }
    local s <close> = tfdev.session()
    s:create(g)
    assert.are.same({ { -7, 7 }, { 1, 1 } }, s:run({}, "y"):totable())
  end)
end)
