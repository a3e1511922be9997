-- Elementwise math (issue 26's math family) against TensorFlow's definitions, checked with Lua's own
-- math, small Lua references written here, and reference values worked out by hand (erf's from its
-- series): Acos, Acosh, Asin, Asinh, Atan, Atanh, Cosh, Sinh, Tan, Erf, Expm1, Log1p, Round, Sign,
-- IsFinite, IsInf, IsNan, Div, DivNoNan, Mod, BitwiseAnd, ClipByValue, LogSoftmax. Every dtype each
-- takes, one it refuses, empty tensors, broadcasting and the error texts.
local tfdev = require "tfdev"
local h = require "spec.support.helpers"

local nan, inf = 0 / 0, math.huge
local T = tfdev.tensor

-- Runs one node "y" of op over Const inputs (the kernel itself runs: no constant folding).
local function run_op(op, inputs, attrs) return h.run_node(op, inputs, attrs)[1] end
local function value(op, inputs, attrs) return run_op(op, inputs, attrs):totable() end

-- Nested tables compared within rel * |want| + abs; NaN must be NaN, infinities and signed zeros exact.
local function close(want, got, rel, abs, path)
  path = path or ""
  if type(want) == "table" then
    assert(type(got) == "table" and #got == #want,
      string.format("%s: expected %d items, got %s", path, #want, type(got) == "table" and #got or tostring(got)))
    for i = 1, #want do close(want[i], got[i], rel, abs, path .. "[" .. i .. "]") end
  elseif want ~= want then
    assert(got ~= got, string.format("%s: expected NaN, got %s", path, tostring(got)))
  elseif want == inf or want == -inf or want == 0 then
    assert(got == want, string.format("%s: expected %s, got %.17g", path, tostring(want), got))
    if want == 0 then assert(1 / got == 1 / want, string.format("%s: expected %s zero", path, 1 / want > 0 and "+" or "-")) end
  else
    local tol = (abs or 0) + (rel or 0) * math.abs(want)
    assert(math.abs(want - got) <= tol, string.format("%s: expected %.17g, got %.17g", path, want, got))
  end
end

local function map(f, xs)
  local out = {}
  for i, x in ipairs(xs) do out[i] = f(x) end
  return out
end

local function map2(f, xs, ys)
  local out = {}
  for i = 1, #xs do out[i] = f(xs[i], ys[i]) end
  return out
end

-- The values a float32 tensor really holds for xs (the reference runs on those).
local function f32(xs) return T(xs, "float32"):totable() end

local function wrap32(x)
  x = x & 0xffffffff
  return x >= 0x80000000 and x - 0x100000000 or x
end

local function empty(dt, shape) return T { dtype = dt, shape = shape or { 2, 0 } } end

describe("math ops: unary float functions", function()
  after_each(function() tfdev.factory.reset() end)

  local function sign(x) return x < 0 and -1 or 1 end
  -- Lua 5.4 has no hyperbolic functions: these are exact enough away from 0 and the domain edges.
  local function expm1(x)
    if math.abs(x) < 1e-5 then return x + x * x / 2 + x * x * x / 6 end
    return math.exp(x) - 1
  end
  local function log1p(x)
    if math.abs(x) < 1e-5 then return x - x * x / 2 + x * x * x / 3 end
    return math.log(1 + x)
  end
  local ref = {
    Acos = math.acos,
    Asin = math.asin,
    Atan = function(x) return math.atan(x) end,
    Tan = math.tan,
    Cosh = function(x) return (math.exp(x) + math.exp(-x)) / 2 end,
    Sinh = function(x) return (expm1(x) - expm1(-x)) / 2 end,
    Asinh = function(x) return sign(x) * math.log(math.abs(x) + math.sqrt(x * x + 1)) end,
    Acosh = function(x) return math.log(x + math.sqrt(x * x - 1)) end,
    Atanh = function(x) return 0.5 * (log1p(x) - log1p(-x)) end,
    Expm1 = expm1,
    Log1p = log1p,
  }
  local domain = {
    Acos = { -1, -0.9, -0.5, 0.3, 0.99, 1 },
    Asin = { -1, -0.9, -0.5, 0.3, 0.99, 1 },
    Atanh = { -0.9, -0.5, 0.3, 0.99 },
    Acosh = { 1, 1.5, 10, 1e5 },
    Log1p = { -0.5, 0.25, 3, 1e6 },
  }
  local wide = { -3, -1, -0.1, 0.5, 2 }

  for _, op in ipairs { "Acos", "Asin", "Atan", "Tan", "Cosh", "Sinh", "Asinh", "Acosh", "Atanh", "Expm1", "Log1p" } do
    it(op .. " on float64 and float32 matches Lua's math", function()
      local x = domain[op] or wide
      close(map(ref[op], x), value(op, { T(x, "float64") }), 1e-13, 1e-300)
      local x32 = f32(x)
      close(map(ref[op], x32), value(op, { T(x, "float32") }), 4e-7, 1e-30)
      -- a shape kept, and the empty tensor
      assert.are.same({ 2, 1, 3 }, run_op(op, { T({ { { 0.5, 0.5, 0.5 } }, { { 0.5, 0.5, 0.5 } } }, "float32") }).shape)
      local e = run_op(op, { empty("float64") })
      assert.are.same({ 2, 0 }, e.shape)
      assert.are.equal("float64", e.dtype)
      h.raises("INVALID_ARGUMENT", "node 'y' (" .. op .. "): T=int32 is not allowed", value, op, { T({ 1 }, "int32") })
    end)
  end

  it("keep TensorFlow's edge values: zeros signed, domain edges infinite, outside them NaN", function()
    for _, dt in ipairs { "float32", "float64" } do
      close({ 0, -0.0 }, value("Asin", { T({ 0, -0.0 }, dt) }))
      close({ 0, -0.0 }, value("Atan", { T({ 0, -0.0 }, dt) }))
      close({ 0, -0.0 }, value("Tan", { T({ 0, -0.0 }, dt) }))
      close({ 0, -0.0 }, value("Sinh", { T({ 0, -0.0 }, dt) }))
      close({ 0, -0.0 }, value("Asinh", { T({ 0, -0.0 }, dt) }))
      close({ 0, -0.0 }, value("Atanh", { T({ 0, -0.0 }, dt) }))
      close({ 0, -0.0 }, value("Expm1", { T({ 0, -0.0 }, dt) }))
      close({ 0, -0.0 }, value("Log1p", { T({ 0, -0.0 }, dt) }))
      close({ 1, (math.exp(1) + math.exp(-1)) / 2 }, value("Cosh", { T({ 0, 1 }, dt) }), 1e-7)
      close({ nan, nan }, value("Acos", { T({ 2, -1.5 }, dt) }))
      close({ nan, nan }, value("Asin", { T({ 2, -1.5 }, dt) }))
      close({ nan, 0 }, value("Acosh", { T({ 0.5, 1 }, dt) }))
      close({ inf, -inf, nan }, value("Atanh", { T({ 1, -1, 2 }, dt) }))
      close({ -inf, nan, inf }, value("Log1p", { T({ -1, -2, inf }, dt) }))
      close({ -1, inf }, value("Expm1", { T({ -inf, inf }, dt) }))
      close({ inf, inf }, value("Cosh", { T({ 1000, -1000 }, dt) }))
      close({ inf, -inf }, value("Sinh", { T({ 1000, -1000 }, dt) }))
      close({ math.pi / 2, -math.pi / 2 }, value("Atan", { T({ inf, -inf }, dt) }), 1e-7)
      close({ nan }, value("Tan", { T({ inf }, dt) }))
    end
  end)

  it("Expm1 and Log1p keep full precision for tiny arguments (where exp(x) - 1 and log(1 + x) lose it)", function()
    local x = { 1e-10, -1e-10, 1e-17, 3e-8 }
    close(map(expm1, x), value("Expm1", { T(x, "float64") }), 1e-15)
    close(map(log1p, x), value("Log1p", { T(x, "float64") }), 1e-15)
    assert.are.equal(1e-17, value("Expm1", { T({ 1e-17 }, "float64") })[1]) -- exp(1e-17) - 1 would be 0
    -- float32: 1 + 1e-7 is 1.00000012, so the naive forms are off by 19%; these are within an ulp or two
    local x32 = f32 { 1e-7, -1e-7, 1e-20 }
    close(map(expm1, x32), value("Expm1", { T(x32, "float32") }), 2.5e-7)
    close(map(log1p, x32), value("Log1p", { T(x32, "float32") }), 2.5e-7)
  end)

  it("Erf matches the reference values, odd, to 1 at infinity", function()
    local x = { 0, 0.1, 0.5, 1, 1.5, 2, 3, -0.5, -2, 6, inf, -inf }
    local want = { 0, 0.1124629160182849, 0.5204998778130465, 0.8427007929497149, 0.9661051464753108,
      0.9953222650189527, 0.9999779095030014, -0.5204998778130465, -0.9953222650189527, 1, 1, -1 }
    close(want, value("Erf", { T(x, "float64") }), 1e-15)
    close(want, value("Erf", { T(x, "float32") }), 2e-7)
    close({ nan, -0.0 }, value("Erf", { T({ nan, -0.0 }, "float32") }))
    assert.are.same({ 0 }, run_op("Erf", { empty("float32", { 0 }) }).shape)
    h.raises("INVALID_ARGUMENT", "node 'y' (Erf): T=int64 is not allowed", value, "Erf", { T({ 1 }, "int64") })
  end)
end)

describe("math ops: Round, Sign and the float predicates", function()
  after_each(function() tfdev.factory.reset() end)

  it("Round rounds halves to even, floats of both widths; integers pass through", function()
    local x = { 0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.4, 0.6, -0.6, 3.5, 1e300, -0.0, inf, nan }
    local want = { 0, 2, 2, -0.0, -2, -2, 0, 1, -1, 4, 1e300, -0.0, inf, nan }
    close(want, value("Round", { T(x, "float64") }))
    local x32 = f32 { 0.5, 1.5, 2.5, -0.5, -2.5, 8388607.5, 1e30, -0.4 }
    close({ 0, 2, 2, -0.0, -2, 8388608, x32[7], -0.0 }, value("Round", { T(x32, "float32") }))
    assert.are.same({ -3, 0, 7, 2147483647, -2147483648 }, value("Round", { T({ -3, 0, 7, 2147483647, -2147483648 }, "int32") }))
    assert.are.same({ (1 << 62) + 1, math.mininteger }, value("Round", { T({ (1 << 62) + 1, math.mininteger }, "int64") }))
    assert.are.same({ 0, 3 }, run_op("Round", { empty("int64", { 0, 3 }) }).shape)
    h.raises("INVALID_ARGUMENT", "node 'y' (Round): T=bool is not allowed", value, "Round", { T({ true }) })
  end)

  it("Sign gives -1, 0, 1 in the input's dtype; NaN stays NaN", function()
    for _, dt in ipairs { "float32", "float64" } do
      close({ -1, 0, 0, 1, nan, 1, -1, 1 }, value("Sign", { T({ -2.5, -0.0, 0, 3, nan, inf, -inf, 1e-30 }, dt) }))
      assert.are.equal(dt, run_op("Sign", { T({ 1 }, dt) }).dtype)
    end
    assert.are.same({ -1, 0, 1, -1, 1 }, value("Sign", { T({ -7, 0, 9, -2147483648, 2147483647 }, "int32") }))
    assert.are.same({ -1, 0, 1, -1 }, value("Sign", { T({ -7, 0, 1 << 40, math.mininteger }, "int64") }))
    assert.are.same({ 2, 0 }, run_op("Sign", { empty("int32") }).shape)
    h.raises("INVALID_ARGUMENT", "node 'y' (Sign): T=uint8 is not allowed", value, "Sign", { T({ 1 }, "uint8") })
  end)

  it("IsFinite, IsInf and IsNan give bools for float32 and float64", function()
    local x = { 1, inf, -inf, nan, 0, -0.0, -1e300 }
    for _, dt in ipairs { "float32", "float64" } do
      local xt = T(x, dt)
      assert.are.same({ true, false, false, false, true, true, dt == "float64" }, value("IsFinite", { xt }))
      assert.are.same({ false, true, true, false, false, false, dt == "float32" }, value("IsInf", { xt }))
      assert.are.same({ false, false, false, true, false, false, false }, value("IsNan", { xt }))
      for _, op in ipairs { "IsFinite", "IsInf", "IsNan" } do
        local e = run_op(op, { empty(dt) })
        assert.are.same({ 2, 0 }, e.shape)
        assert.are.equal("bool", e.dtype)
        assert.are.same({ { { true } } }, value(op, { T({ { { op == "IsFinite" and 1 or (op == "IsInf" and -inf or nan) } } }, dt) }))
      end
    end
    for _, op in ipairs { "IsFinite", "IsInf", "IsNan" } do
      h.raises("INVALID_ARGUMENT", "node 'y' (" .. op .. "): T=int32 is not allowed", value, op, { T({ 1 }, "int32") })
    end
  end)
end)

describe("math ops: Div, DivNoNan, Mod, BitwiseAnd", function()
  after_each(function() tfdev.factory.reset() end)

  -- C's truncating quotient and remainder, from Lua's (math.fmod truncates; // floors).
  local function tdiv(x, y) return (x - math.fmod(x, y)) // y end

  it("Div divides floats truly and integers truncating toward zero (C's /), uint8 included", function()
    local a, b = { 7, -7, 7, -7, 1, 0 }, { 2, 2, -2, -2, 3, 5 }
    close(map2(function(x, y) return x / y end, a, b), value("Div", { T(a, "float64"), T(b, "float64") }), 1e-16)
    close({ 3.5, -3.5, inf, -inf, nan }, value("Div", { T({ 7, -7, 1, -1, 0 }, "float32"), T({ 2, 2, 0, 0, 0 }, "float32") }))
    for _, dt in ipairs { "int32", "int64" } do
      assert.are.same(map2(tdiv, a, b), value("Div", { T(a, dt), T(b, dt) }))
      assert.are.same({ 3, -3, -3, 3, 0, 0 }, value("Div", { T(a, dt), T(b, dt) }))
      assert.are.equal(dt, run_op("Div", { T(a, dt), T(b, dt) }).dtype)
    end
    -- every pair of values near the ends of int32 and of small ones, against C's truncation
    local edge = { -2147483648, -2147483647, -1073741825, -65537, -46341, -7, -3, -2, -1, 0, 1, 2, 3, 5, 7, 46341,
      65536, 1073741823, 2147483646, 2147483647 }
    local xs, ys = {}, {}
    for _, x in ipairs(edge) do
      for _, y in ipairs(edge) do
        if y ~= 0 and not (x == -2147483648 and y == -1) then xs[#xs + 1], ys[#ys + 1] = x, y end
      end
    end
    for _, dt in ipairs { "int32", "int64" } do
      assert.are.same(map2(tdiv, xs, ys), value("Div", { T(xs, dt), T(ys, dt) }))
      assert.are.same(map2(math.fmod, xs, ys), value("Mod", { T(xs, dt), T(ys, dt) }))
    end
    -- MIN / -1 wraps to MIN, as TensorFlow computes it (-MIN / 1)
    assert.are.same({ -2147483648 }, value("Div", { T({ -2147483648 }, "int32"), T({ -1 }, "int32") }))
    assert.are.same({ math.mininteger, 5 }, value("Div", { T({ math.mininteger, -5 }, "int64"), T({ -1, -1 }, "int64") }))
    assert.are.same({ 28, 255, 0 }, value("Div", { T({ 200, 255, 3 }, "uint8"), T({ 7, 1, 4 }, "uint8") }))
    h.raises("INVALID_ARGUMENT", "node 'y' (Div): T=bool is not allowed", value, "Div", { T({ true }), T({ true }) })
  end)

  it("Mod is the truncated remainder: the dividend's sign, C's % and fmod", function()
    local a, b = { 7, -7, 7, -7, 6, 0 }, { 2, 2, -2, -2, 3, 5 }
    for _, dt in ipairs { "int32", "int64" } do
      assert.are.same(map2(math.fmod, a, b), value("Mod", { T(a, dt), T(b, dt) }))
      assert.are.same({ 1, -1, 1, -1, 0, 0 }, value("Mod", { T(a, dt), T(b, dt) }))
    end
    assert.are.same({ 0 }, value("Mod", { T({ -2147483648 }, "int32"), T({ -1 }, "int32") }))
    assert.are.same({ 0, math.fmod(math.mininteger + 1, -3) }, value("Mod", { T({ math.mininteger, math.mininteger + 1 }, "int64"), T({ -1, -3 }, "int64") }))
    for _, dt in ipairs { "float32", "float64" } do
      close({ 1.5, -1.5, 1.5, -1.5, nan, 2, -0.0 },
        value("Mod", { T({ 7.5, -7.5, 7.5, -7.5, 1, 2, -4 }, dt), T({ 2, 2, -2, -2, 0, inf, 2 }, dt) }))
    end
    close({ 0.1 % 0.03 }, value("Mod", { T({ 0.1 }, "float64"), T({ 0.03 }, "float64") }), 1e-15)
    h.raises("INVALID_ARGUMENT", "node 'y' (Mod): T=uint8 is not allowed", value, "Mod", { T({ 1 }, "uint8"), T({ 1 }, "uint8") })
  end)

  it("integer Div and Mod by zero fail with TensorFlow's 'Integer division by zero'", function()
    for _, op in ipairs { "Div", "Mod" } do
      for _, dt in ipairs { "int32", "int64" } do
        h.raises("INVALID_ARGUMENT", "node 'y' (" .. op .. "): Integer division by zero", value, op,
          { T({ 1, 2 }, dt), T({ 1, 0 }, dt) })
        h.raises("INVALID_ARGUMENT", "Integer division by zero", value, op, { T({ { 1 }, { 2 } }, dt), T(0, dt) })
        -- an empty result divides nothing
        assert.are.same({ 0 }, run_op(op, { empty(dt, { 0 }), T(0, dt) }).shape)
      end
    end
    h.raises("INVALID_ARGUMENT", "node 'y' (Div): Integer division by zero", value, "Div",
      { T({ 1 }, "uint8"), T({ 0 }, "uint8") })
  end)

  it("DivNoNan gives 0 where the divisor is 0, x / y elsewhere (NaN and inf dividends too)", function()
    for _, dt in ipairs { "float32", "float64" } do
      close({ 0, 0.5, 0, -1.5, 0, 0, nan, -0.0 },
        value("DivNoNan", { T({ 1, 2, 0, -3, nan, inf, 1, -1 }, dt), T({ 0, 4, 0, 2, 0, 0, nan, inf }, dt) }))
      close({ { 0, 1, 2 }, { 0, 0, 0 } }, value("DivNoNan", { T({ 0, 2, 4 }, dt), T({ { 2 }, { 0 } }, dt) }))
      assert.are.same({ 0, 2 }, run_op("DivNoNan", { empty(dt, { 0, 1 }), T({ 1, 0 }, dt) }).shape)
    end
    h.raises("INVALID_ARGUMENT", "node 'y' (DivNoNan): T=int32 is not allowed", value, "DivNoNan",
      { T({ 1 }, "int32"), T({ 0 }, "int32") })
  end)

  it("BitwiseAnd on int32, int64 and uint8; floats refused", function()
    local a, b = { 12, -1, 0x7fffffff, -8 }, { 10, 0x0f0f0f0f, -2, -3 }
    assert.are.same(map2(function(x, y) return wrap32(x & y) end, a, b), value("BitwiseAnd", { T(a, "int32"), T(b, "int32") }))
    assert.are.same({ 8, 0x0f0f0f0f, 0x7ffffffe, -8 }, value("BitwiseAnd", { T(a, "int32"), T(b, "int32") }))
    assert.are.same({ math.mininteger, 0x5555 }, value("BitwiseAnd",
      { T({ math.mininteger, 0x7fff }, "int64"), T({ -1, 0x55555555 }, "int64") }))
    assert.are.same({ 0x30, 0 }, value("BitwiseAnd", { T({ 0xf0, 0x0f }, "uint8"), T({ 0x3c, 0xf0 }, "uint8") }))
    assert.are.same({ { 4, 0 }, { 6, 2 } }, value("BitwiseAnd", { T({ { 12 }, { 14 } }, "int32"), T({ 6, 3 }, "int32") }))
    assert.are.same({ 3, 0 }, run_op("BitwiseAnd", { empty("uint8", { 3, 0 }), T(1, "uint8") }).shape)
    h.raises("INVALID_ARGUMENT", "node 'y' (BitwiseAnd): T=float32 is not allowed", value, "BitwiseAnd",
      { T({ 1 }, "float32"), T({ 1 }, "float32") })
  end)

  it("broadcast as numpy does, and refuse incompatible shapes and mixed dtypes", function()
    local a = { { 1, 2, 3 }, { 4, 5, 6 } }
    close({ { 0.5, 0.5, 0.5 }, { 2, 1.25, 1 } }, value("Div", { T(a, "float32"), T({ 2, 4, 6 }, "float32") }))
    close({ { 1, 0.5, 1 / 3 }, { 4, 2, 4 / 3 } },
      value("Div", { T({ { 1 }, { 4 } }, "float64"), T({ { 1, 2, 3 } }, "float64") }), 1e-16)
    assert.are.same({ { 12, 6, 4 }, { 3, 2, 2 } }, value("Div", { T(12, "int32"), T(a, "int32") }))
    assert.are.same({ { 1, 0, 1 }, { 0, 1, 0 } }, value("Mod", { T(a, "int64"), T(2, "int64") }))
    close({ { 1, 2, 3 }, { 0, 0, 0 } }, value("DivNoNan", { T(a, "float64"), T({ { 1 }, { 0 } }, "float64") }))
    -- the last dimension broadcast inside a row, rows of several merged dims
    local x = T({ { { 1, 2 }, { 3, 4 } }, { { 5, 6 }, { 7, 8 } } }, "int32")
    assert.are.same({ { { 1, 2 }, { 3, 0 } }, { { 1, 2 }, { 3, 0 } } }, value("Mod", { x, T({ { 4 } }, "int32") }))
    assert.are.same({ { { 1, 0 }, { 1, 0 } }, { { 1, 0 }, { 1, 0 } } }, value("BitwiseAnd", { x, T({ { 1 }, { 1 } }, "int32") }))
    for _, op in ipairs { "Div", "DivNoNan", "Mod" } do
      h.raises("INVALID_ARGUMENT", "node 'y' (" .. op .. "): Incompatible shapes: [2] vs. [3]", value, op,
        { T({ 1, 2 }, "float32"), T({ 1, 2, 3 }, "float32") })
      h.raises("INVALID_ARGUMENT", "node 'y' (" .. op .. "): input 0 is float32 but input 1 is float64", value, op,
        { T({ 1 }, "float32"), T({ 1 }, "float64") })
    end
  end)
end)

describe("math ops: ClipByValue", function()
  after_each(function() tfdev.factory.reset() end)

  local function clip(x, lo, hi)
    local m = hi < x and hi or x
    return m < lo and lo or m
  end

  it("clips every number dtype between scalar bounds", function()
    local x = { -5, 0, 3, 5, 9, 100 }
    for _, dt in ipairs { "float32", "float64", "int32", "int64" } do
      local got = value("ClipByValue", { T(x, dt), T(-1, dt), T(6, dt) })
      assert.are.same(map(function(v) return clip(v, -1, 6) end, x), got)
      assert.are.same({ -1, 0, 3, 5, 6, 6 }, got)
      assert.are.equal(dt, run_op("ClipByValue", { T(x, dt), T(-1, dt), T(6, dt) }).dtype)
    end
    assert.are.same({ 10, 10, 77, 200, 200 }, value("ClipByValue", { T({ 0, 10, 77, 200, 255 }, "uint8"), T(10, "uint8"), T(200, "uint8") }))
    assert.are.same({ math.mininteger + 1, 0, math.maxinteger - 1 }, value("ClipByValue",
      { T({ math.mininteger, 0, math.maxinteger }, "int64"), T(math.mininteger + 1, "int64"), T(math.maxinteger - 1, "int64") }))
    -- NaN passes through (std::min/std::max compare it false); infinities are clipped
    close({ nan, -1, 1, 0.5 }, value("ClipByValue", { T({ nan, -inf, inf, 0.5 }, "float32"), T(-1, "float32"), T(1, "float32") }))
    -- min above max: max(min(x, hi), lo) is lo
    assert.are.same({ 3, 3, 3 }, value("ClipByValue", { T({ 0, 2, 5 }, "int32"), T(3, "int32"), T(1, "int32") }))
  end)

  it("takes bounds shaped like t, either or both", function()
    local x = { { 1, 5, 9 }, { -3, 4, 12 } }
    local lo, hi = { { 2, 2, 2 }, { 0, 5, 0 } }, { { 4, 8, 8 }, { 1, 6, 10 } }
    local function ref(l, u)
      local out = {}
      for i = 1, 2 do
        out[i] = {}
        for j = 1, 3 do
          out[i][j] = clip(x[i][j], type(l) == "table" and l[i][j] or l, type(u) == "table" and u[i][j] or u)
        end
      end
      return out
    end
    for _, dt in ipairs { "float64", "int32" } do
      assert.are.same(ref(lo, hi), value("ClipByValue", { T(x, dt), T(lo, dt), T(hi, dt) }))
      assert.are.same({ { 2, 4, 4 }, { 0, 5, 4 } }, value("ClipByValue", { T(x, dt), T(lo, dt), T(4, dt) }))
      assert.are.same(ref(lo, 4), value("ClipByValue", { T(x, dt), T(lo, dt), T(4, dt) }))
      assert.are.same(ref(0, hi), value("ClipByValue", { T(x, dt), T(0, dt), T(hi, dt) }))
    end
    assert.are.same({ 2, 0 }, run_op("ClipByValue", { empty("float32"), T(0, "float32"), T(1, "float32") }).shape)
    assert.are.same({ 2, 0 }, run_op("ClipByValue", { empty("int64"), empty("int64"), T(1, "int64") }).shape)
  end)

  it("refuses bounds neither scalar nor shaped like t (no other broadcasting), with TensorFlow's text", function()
    local x = T({ { 1, 2 }, { 3, 4 } }, "float32")
    h.raises("INVALID_ARGUMENT", "node 'y' (ClipByValue): clip_value_min and clip_value_max must be either of the same "
      .. "shape as input, or a scalar. input shape: [2,2]clip_value_min shape: [2]clip_value_max shape: []",
      value, "ClipByValue", { x, T({ 0, 1 }, "float32"), T(3, "float32") })
    h.raises("INVALID_ARGUMENT", "clip_value_min shape: []clip_value_max shape: [1,1]", value, "ClipByValue",
      { x, T(0, "float32"), T({ { 3 } }, "float32") })
    h.raises("INVALID_ARGUMENT", "input shape: [2,2]clip_value_min shape: [1]", value, "ClipByValue",
      { x, T({ 0 }, "float32"), T(3, "float32") })
    h.raises("INVALID_ARGUMENT", "node 'y' (ClipByValue): input 0 is float32 but input 2 is float64", value,
      "ClipByValue", { x, T(0, "float32"), T(3, "float64") })
    h.raises("INVALID_ARGUMENT", "node 'y' (ClipByValue): T=bool is not allowed", value, "ClipByValue",
      { T({ true }), T(false), T(true) })
  end)
end)

describe("math ops: LogSoftmax", function()
  after_each(function() tfdev.factory.reset() end)

  local function log_softmax_rows(x)
    if type(x[1]) == "table" then return map(log_softmax_rows, x) end
    local s = 0
    for _, v in ipairs(x) do s = s + math.exp(v) end
    return map(function(v) return math.log(math.exp(v) / s) end, x)
  end

  it("is log(softmax) over the last axis, float32 and float64", function()
    local x = h.random_values({ 3, 5 }, 7)
    for r = 1, 3 do for c = 1, 5 do x[r][c] = x[r][c] * 4 end end
    close(log_softmax_rows(x), value("LogSoftmax", { T(x, "float64") }), 1e-14, 1e-14)
    local x32 = T(x, "float32"):totable()
    close(log_softmax_rows(x32), value("LogSoftmax", { T(x32, "float32") }), 1e-6, 1e-6)
    local x3 = h.random_values({ 2, 3, 4 }, 11)
    close(log_softmax_rows(x3), value("LogSoftmax", { T(x3, "float64") }), 1e-14, 1e-14)
    close({ -math.log(4), -math.log(4), -math.log(4), -math.log(4) }, value("LogSoftmax", { T({ 2, 2, 2, 2 }, "float32") }), 1e-7)
    close({ 0 }, value("LogSoftmax", { T({ 5 }, "float64") }))
    -- a row longer than one block of the float32 exponentials
    local long = {}
    for i = 1, 700 do long[i] = math.sin(i) * 3 end
    long = T(long, "float32"):totable()
    close(log_softmax_rows(long), value("LogSoftmax", { T(long, "float32") }), 2e-6, 2e-6)
  end)

  it("is numerically stable: the max is subtracted first", function()
    local want = log_softmax_rows { 0, 1, 2 }
    for _, dt in ipairs { "float32", "float64" } do
      close(want, value("LogSoftmax", { T({ 1000, 1001, 1002 }, dt) }), 1e-6, 1e-6)
      close(want, value("LogSoftmax", { T({ -1e4, -1e4 + 1, -1e4 + 2 }, dt) }), 1e-6, 1e-6)
      close({ -1000, 0 }, value("LogSoftmax", { T({ -1000, 0 }, dt) }), 1e-7)
    end
  end)

  it("keeps empty tensors empty and refuses integers and scalars", function()
    assert.are.same({ 0, 3 }, run_op("LogSoftmax", { empty("float32", { 0, 3 }) }).shape)
    assert.are.same({ 2, 0 }, run_op("LogSoftmax", { empty("float64", { 2, 0 }) }).shape)
    h.raises("INVALID_ARGUMENT", "node 'y' (LogSoftmax): T=int32 is not allowed", value, "LogSoftmax", { T({ 1 }, "int32") })
    h.raises("INVALID_ARGUMENT", "node 'y' (LogSoftmax): Shape must be at least rank 1 but is rank 0", value,
      "LogSoftmax", { T(1, "float32") })
    -- a scalar through a Placeholder of unknown shape reaches the kernel, which says it as TensorFlow's does
    local s <close> = tfdev.session { optimize_graph = false }
    s:create { node = { { name = "x", op = "Placeholder", attr = { dtype = "float32" } },
      { name = "y", op = "LogSoftmax", input = { "x" } } } }
    h.raises("INVALID_ARGUMENT", "logits must have >= 1 dimension, got []", s.run, s, { x = T(1, "float32") }, { "y" })
  end)
end)

describe("math ops: large tensors", function()
  after_each(function() tfdev.factory.reset() end)

  -- Flat values of a nested table.
  local function flat(t, out)
    out = out or {}
    if type(t) ~= "table" then out[#out + 1] = t else for _, v in ipairs(t) do flat(v, out) end end
    return out
  end

  it("split over the intra-op pool, give every element what one small call would", function()
    local R, C = 250, 160 -- 40000 elements: above the size kernels split at
    local x, d = {}, {}
    for i = 1, R * C do
      x[i] = (i * 7919) % 2001 - 1000
      d[i] = i % C == 0 and 7 or (i % C) - 80
    end
    local xi = tfdev.tensor { dtype = "int32", shape = { R, C }, data = x }
    local row = {}
    for j = 1, C do row[j] = j % 13 == 0 and -(j % 7 + 1) or j % 7 + 1 end
    -- broadcasting a row: the engine's rows path
    local q = flat(value("Div", { xi, T(row, "int32") }))
    local m = flat(value("Mod", { xi, T(row, "int32") }))
    for i = 1, R * C do
      local y = row[(i - 1) % C + 1]
      assert(q[i] == (x[i] - math.fmod(x[i], y)) // y and m[i] == math.fmod(x[i], y), "element " .. i)
    end
    -- one flat row
    local xf = tfdev.tensor { dtype = "float32", shape = { R, C }, data = x }
    local c = flat(value("ClipByValue", { xf, T(-300, "float32"), T(450, "float32") }))
    local s = flat(value("Sign", { tfdev.tensor { dtype = "float64", shape = { R * C }, data = d } }))
    for i = 1, R * C do
      assert(c[i] == math.max(math.min(x[i], 450), -300), "clip element " .. i)
      assert(s[i] == (d[i] > 0 and 1 or d[i] < 0 and -1 or 0), "sign element " .. i)
    end
    -- LogSoftmax rows over the pool: each row's exponentials sum to 1
    local l = value("LogSoftmax", { tfdev.tensor { dtype = "float64", shape = { R, C }, data = d } })
    for r = 1, R, 37 do
      local sum = 0
      for j = 1, C do sum = sum + math.exp(l[r][j]) end
      assert(math.abs(sum - 1) < 1e-12, "row " .. r .. " sums to " .. sum)
    end
  end)
end)

describe("math ops: outputs larger than the caches", function()
  after_each(function() tfdev.factory.reset() end)

  it("are written with streaming stores and still hold every value (checked by sums in the graph)", function()
    local N = (1 << 21) + 3 -- 8 MiB of int32 and 16 MiB of float64 outputs, not a whole number of blocks
    local function c(name, v) return { name = name, op = "Const", attr = { value = v } } end
    local function n(name, op, inputs, attr) return { name = name, op = op, input = inputs, attr = attr } end
    local s <close> = tfdev.session { optimize_graph = false }
    s:create { node = {
      c("zero", T(0, "int32")), c("limit", T(N, "int32")), c("one", T(1, "int32")), c("three", T(3, "int32")),
      c("axis", T(0, "int32")), n("r", "Range", { "zero", "limit", "one" }),
      n("q", "Div", { "r", "three" }), n("m", "Mod", { "r", "three" }), n("b", "BitwiseAnd", { "r", "one" }),
      -- r - 3q - m is 0 everywhere
      n("q3", "Mul", { "q", "three" }), n("rq", "Sub", { "r", "q3" }), n("rqm", "Sub", { "rq", "m" }),
      n("zeros", "Sum", { "rqm", "axis" }), n("msum", "Sum", { "m", "axis" }), n("bsum", "Sum", { "b", "axis" }),
      n("qmax", "Max", { "q", "axis" }),
      n("rd", "Cast", { "r" }, { SrcT = "int32", DstT = "float64" }),
      c("lo", T(100, "float64")), c("hi", T(1000, "float64")),
      n("clip", "ClipByValue", { "rd", "lo", "hi" }), n("csum", "Sum", { "clip", "axis" }),
    } }
    local out = s:run({}, { "zeros", "msum", "bsum", "qmax", "csum" })
    assert.are.equal(0, out[1]:totable())
    local msum = 0
    for i = N - (N % 3), N - 1 do msum = msum + i % 3 end
    assert.are.equal((N // 3) * 3 + msum, out[2]:totable()) -- each full 0,1,2 adds 3
    assert.are.equal(N // 2, out[3]:totable())
    assert.are.equal((N - 1) // 3, out[4]:totable())
    local csum = 100 * 101 + (101 + 999) * 899 / 2 + 1000 * (N - 1000)
    assert.are.equal(csum, out[5]:totable())
  end)
end)
