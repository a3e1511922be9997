-- tfdev.testing: checks for the tests people write against tfdev. Tensor equality and closeness that
-- say where and by how much two tensors differ, tfdev.error checks, and the same as luassert
-- assertions (assert.tensor_equal, assert.tensor_near) when luassert is loaded, as it is under busted.
-- The plain functions need no test framework: they return true, or false and the reason.
local tfdev = require "tfdev"

local testing = {}

local function bad_argument(fmt, ...)
  error(tfdev.error.new("INVALID_ARGUMENT", string.format(fmt, ...)), 3)
end

-- A value to compare as a tensor: tensors as they are, anything else (a nested table, a number, a
-- tensor spec) through tfdev.tensor, in `dtype` when given, so that {0.1} compares equal to a
-- float32 tensor holding 0.1 rounded to float32.
local function as_tensor(v, dtype, which)
  if tfdev.tensor.is(v) then return v end
  local spec = type(v) == "table" and (v.shape ~= nil or v.dtype ~= nil or v.data ~= nil)
  local ok, t = pcall(tfdev.tensor, v, not spec and dtype or nil)
  if not ok then
    return nil, string.format("the %s value does not make a tensor%s (%s)", which,
      dtype and not spec and " of dtype " .. dtype or "", tostring(t.message or t))
  end
  return t
end

local function operands(expected, actual, near)
  local want_dtype = tfdev.tensor.is(actual) and actual.dtype or nil
  local got_dtype = tfdev.tensor.is(expected) and expected.dtype or nil
  -- near compares numbers, so a literal value keeps its precision rather than taking the other
  -- side's integer dtype.
  if near and want_dtype and want_dtype ~= "bool" then want_dtype = "float64" end
  if near and got_dtype and got_dtype ~= "bool" then got_dtype = "float64" end
  local a, why = as_tensor(expected, want_dtype, "expected")
  if not a then return nil, nil, why end
  local b
  b, why = as_tensor(actual, got_dtype or a.dtype, "actual")
  if not b then return nil, nil, why end
  return a, b
end

local function shape_string(shape)
  return "{" .. table.concat(shape, ", ") .. "}"
end

local function same_shape(a, b)
  local x, y = a.shape, b.shape
  if #x ~= #y then return false end
  for i = 1, #x do
    if x[i] ~= y[i] then return false end
  end
  return true
end

-- Every element in row-major order, as Lua values.
local function flatten(t)
  local out, n = {}, 0
  local function walk(v)
    if type(v) == "table" then
      for i = 1, #v do walk(v[i]) end
    else
      n = n + 1
      out[n] = v
    end
  end
  walk(t:totable())
  return out, n
end

-- "[2,1]" (1-based, as t[2][1] reads it) for the i-th element in row-major order.
local function where(shape, i)
  if #shape == 0 then return "the scalar" end
  local idx = {}
  i = i - 1
  for d = #shape, 1, -1 do
    idx[d] = i % shape[d] + 1
    i = i // shape[d]
  end
  return "[" .. table.concat(idx, ",") .. "]"
end

local function show(v)
  if v ~= v then return "nan" end -- not "-nan", whatever the sign bit
  if math.type(v) == "float" then return string.format("%.9g", v) end
  return tostring(v)
end

-- |p - q| in floating point: integer subtraction could wrap, and inf - inf is NaN, not a distance.
local function distance(p, q)
  if type(p) ~= "number" or type(q) ~= "number" then return math.huge end
  local d = math.abs((p + 0.0) - (q + 0.0))
  return d == d and d or math.huge
end

local function is_nan(v) return v ~= v end

-- Walks both tensors; `close(p, q)` says whether a pair matches (a NaN matches a NaN at the same
-- place, as numpy.testing does: a test means "the same result", not IEEE's NaN ~= NaN).
local function compare(a, b, close, what)
  local x, n = flatten(a)
  local y = flatten(b)
  local count, first, worst, worst_d = 0, nil, nil, -1
  for i = 1, n do
    local p, q = x[i], y[i]
    if not (p == q or (is_nan(p) and is_nan(q)) or close(p, q)) then
      count = count + 1
      first = first or i
      local d = distance(p, q)
      if d > worst_d then worst, worst_d = i, d end
    end
  end
  if count == 0 then return true end
  local shape = a.shape
  local function at(i)
    return string.format("%s: expected %s, got %s", where(shape, i), show(x[i]), show(y[i]))
  end
  local why = string.format("%d of %d elements %s; first at %s", count, n, what, at(first))
  if worst ~= first and type(x[worst]) == "number" then
    why = why .. string.format("; largest difference %s at %s", show(worst_d), at(worst))
  elseif type(x[first]) == "number" then
    why = why .. string.format(" (difference %s)", show(worst_d))
  end
  return false, why
end

--- Whether `actual` has the dtype, shape and values of `expected`: true, or false and why (the
--- first and the most different element, and how many differ). Either may be a tensor or anything
--- tfdev.tensor takes; a plain value takes the other side's dtype. NaNs at the same place match.
function testing.equal(expected, actual)
  local a, b, why = operands(expected, actual, false)
  if not a then return false, why end
  if a.dtype ~= b.dtype then
    return false, string.format("dtypes differ: expected %s, got %s", a.dtype, b.dtype)
  end
  if not same_shape(a, b) then
    return false, string.format("shapes differ: expected %s, got %s", shape_string(a.shape), shape_string(b.shape))
  end
  if a == b then return true end
  return compare(a, b, function() return false end, "differ")
end

--- Whether every element of `actual` is within `tol` of `expected`'s: |e - a| <= tol, or with
--- tol = {atol =, rtol =}, |e - a| <= atol + rtol * |e| (numpy's allclose). Shapes must match;
--- dtypes may differ (a float32 result against a float64 reference). True, or false and why.
function testing.near(expected, actual, tol)
  local atol, rtol
  if type(tol) == "number" then
    atol, rtol = tol, 0
  elseif type(tol) == "table" then
    atol, rtol = tol.atol or 0, tol.rtol or 0
  end
  if type(atol) ~= "number" or type(rtol) ~= "number" or not (atol >= 0 and rtol >= 0) then
    bad_argument("testing.near: tol must be a number >= 0 or {atol =, rtol =}, got %s", tostring(tol))
  end
  local a, b, why = operands(expected, actual, true)
  if not a then return false, why end
  if not same_shape(a, b) then
    return false, string.format("shapes differ: expected %s, got %s", shape_string(a.shape), shape_string(b.shape))
  end
  if (a.dtype == "bool") ~= (b.dtype == "bool") then
    return false, string.format("dtypes differ: expected %s, got %s", a.dtype, b.dtype)
  end
  return compare(a, b, function(p, q)
    return type(p) == "number" and distance(p, q) <= atol + rtol * math.abs(p)
  end, "differ by more than " .. testing.tolerance_string(tol))
end

--- How near() words a tolerance: "1e-05", or "1e-05 + 0.001 * |expected|".
function testing.tolerance_string(tol)
  if type(tol) ~= "table" then return show(tol) end
  local atol, rtol = tol.atol or 0, tol.rtol or 0
  return rtol == 0 and show(atol) or string.format("%s + %s * |expected|", show(atol), show(rtol))
end

--- Whether err is a tfdev.error with `code` and a message containing `fragment` (plain text, not a
--- pattern): true, or false and why.
function testing.is_error(err, code, fragment)
  if not tfdev.error.is(err) then return false, "expected a tfdev.error, got: " .. tostring(err) end
  if err.code ~= code then
    return false, string.format("expected code %s, got %s (%s)", code, err.code, err.message)
  end
  if fragment and not err.message:find(fragment, 1, true) then
    return false, string.format("message %q does not contain %q", err.message, fragment)
  end
  return true
end

-- A failed check: through luassert when it is registered, so busted counts a failure (not an
-- error), else a plain error pointing at the caller's caller.
local function fail(why)
  if testing.luassert then
    testing.luassert(false, why, testing.luassert:level(3))
  end
  error(why, 3)
end

--- Asserts fn(...) raises a tfdev.error with `code` whose message contains `fragment`; returns it.
function testing.raises(code, fragment, fn, ...)
  local ok, err = pcall(fn, ...)
  if ok then fail(string.format("expected a %s error containing %q, got success", code, fragment)) end
  local good, why = testing.is_error(err, code, fragment)
  if not good then fail(why) end
  return err
end

--- Asserts a `nil, err` return with `code` and a message containing `fragment`; returns err.
function testing.fails(code, fragment, value, err)
  if value ~= nil then fail("expected nil and an error, got " .. tostring(value)) end
  local good, why = testing.is_error(err, code, fragment)
  if not good then fail(why) end
  return err
end

local function describe(v)
  if tfdev.tensor.is(v) then return tostring(v) end
  local ok, t = pcall(tfdev.tensor, v)
  return ok and tostring(t) or tostring(v)
end

--- Registers assert.tensor_equal(expected, actual [, message]) and
--- assert.tensor_near(expected, actual, tol [, message]) with luassert (and their negations,
--- assert.is_not.tensor_equal ...). Done on require when luassert is already loaded.
function testing.register(luassert)
  local say = require "say"
  say:set("assertion.tensor_equal.positive", "Expected tensors to be equal, but %s\nExpected:\n%s\nPassed in:\n%s")
  say:set("assertion.tensor_equal.negative", "Expected tensors to differ, but %s\nExpected:\n%s\nPassed in:\n%s")
  say:set("assertion.tensor_near.positive", "Expected tensors to be near, but %s\nExpected:\n%s\nPassed in:\n%s")
  say:set("assertion.tensor_near.negative", "Expected tensors not to be near, but %s\nExpected:\n%s\nPassed in:\n%s")
  -- luassert formats every argument for the message: hand it finished strings instead.
  local function report(arguments, ok, why, same)
    local expected, actual = arguments[1], arguments[2]
    arguments[1], arguments[2], arguments[3] = ok and same or why, describe(expected), describe(actual)
    arguments.n = 3
    arguments.nofmt = { true, true, true }
    return ok
  end
  luassert:register("assertion", "tensor_equal", function(state, arguments)
    if arguments.n >= 3 then state.failure_message = arguments[3] end
    local ok, why = testing.equal(arguments[1], arguments[2])
    return report(arguments, ok, why, "they are equal")
  end, "assertion.tensor_equal.positive", "assertion.tensor_equal.negative")
  luassert:register("assertion", "tensor_near", function(state, arguments)
    if arguments.n >= 4 then state.failure_message = arguments[4] end
    local ok, why = testing.near(arguments[1], arguments[2], arguments[3])
    return report(arguments, ok, why, "they are within " .. testing.tolerance_string(arguments[3]))
  end, "assertion.tensor_near.positive", "assertion.tensor_near.negative")
  testing.luassert = luassert
  return luassert
end

if package.loaded.luassert then testing.register(package.loaded.luassert) end

return testing
