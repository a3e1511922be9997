-- Shared assertions for the specs: errors are tfdev.error values with a code and a message.
local tfdev = require "tfdev"

local helpers = {}

local function check_error(err, code, fragment)
  assert(tfdev.error.is(err), "expected a tfdev.error, got: " .. tostring(err))
  assert(err.code == code, string.format("expected code %s, got %s (%s)", code, err.code, err.message))
  assert(err.message:find(fragment, 1, true),
    string.format("message %q does not contain %q", err.message, fragment))
  return err
end

--- Asserts fn(...) raises a tfdev.error with `code` whose message contains `fragment`.
function helpers.raises(code, fragment, fn, ...)
  local ok, err = pcall(fn, ...)
  assert(not ok, "expected an error, got success")
  return check_error(err, code, fragment)
end

--- Asserts a `nil, err` return with `code` and a message containing `fragment`.
function helpers.fails(code, fragment, value, err)
  assert(value == nil, "expected nil, got " .. tostring(value))
  return check_error(err, code, fragment)
end

--- Runs one node "y" of `op` over Const inputs; the op itself runs (no constant folding) unless
--- `fold`. Returns the tensors of `fetches` (a list; default {"y"}).
function helpers.run_node(op, inputs, attrs, fetches, fold)
  local g = { node = {} }
  local names = {}
  for i, t in ipairs(inputs) do
    names[i] = "in" .. i
    g.node[#g.node + 1] = { name = names[i], op = "Const", attr = { value = t } }
  end
  g.node[#g.node + 1] = { name = "y", op = op, input = names, attr = attrs or {} }
  local s <close> = tfdev.session { optimize_graph = fold or false }
  s:create(g)
  return s:run({}, fetches or { "y" })
end

--- TensorFlow's sliding window for one dimension: the output size and the padding before it.
--- padding is "SAME", "VALID" or "EXPLICIT" (then `explicit` = {before, after}).
function helpers.window(n, k, stride, dilation, padding, explicit)
  local span = (k - 1) * dilation + 1
  if padding == "SAME" then
    local out = (n + stride - 1) // stride
    return out, math.max((out - 1) * stride + span - n, 0) // 2
  elseif padding == "VALID" then
    return n >= span and (n - span) // stride + 1 or 0, 0
  end
  local padded = n + explicit[1] + explicit[2]
  return padded >= span and (padded - span) // stride + 1 or 0, explicit[1]
end

--- A nested table of `dims` holding deterministic values in [-1, 1] (a linear congruential sequence from seed).
function helpers.random_values(dims, seed)
  local function fill(d)
    local t = {}
    for i = 1, dims[d] do
      if d == #dims then
        seed = (seed * 1103515245 + 12345) % 2147483648
        t[i] = (seed % 2001) / 1000 - 1
      else
        t[i] = fill(d + 1)
      end
    end
    return t
  end
  return fill(1)
end

--- Asserts two nested tables of numbers have the same shape and values within tol, naming the first
--- element that differs.
function helpers.assert_close(want, got, tol, path)
  path = path or ""
  if type(want) == "table" then
    assert(type(got) == "table" and #got == #want,
      string.format("%s: expected %d items, got %s", path, #want, type(got) == "table" and #got or type(got)))
    for i = 1, #want do helpers.assert_close(want[i], got[i], tol, path .. "[" .. i .. "]") end
  else
    assert(math.abs(want - got) <= tol, string.format("%s: expected %.7g, got %.7g", path, want, got))
  end
end

return helpers
