-- tfdev.testing (the checks people use in their own tests), tensor ==, and a user's own busted
-- project that runs its specs with the tfdev executable (.busted: lua = "tfdev").
local tfdev = require "tfdev"
local testing = require "tfdev.testing"
local h = require "spec.support.helpers"

local nan = 0 / 0

-- A luassert assertion's failure (busted wraps it in a table with __tostring) as text.
local function failure(fn, ...)
  local ok, err = pcall(fn, ...)
  assert.is_false(ok, "expected the assertion to fail")
  return tostring(err)
end

describe("tensor ==", function()
  it("is true for the same dtype, shape and values", function()
    assert.is_true(tfdev.tensor{{1, 2}, {3, 4}} == tfdev.tensor{{1, 2}, {3, 4}})
    assert.is_true(tfdev.tensor({1.5, -2}, "float64") == tfdev.tensor({1.5, -2}, "float64"))
    assert.is_true(tfdev.tensor{true, false} == tfdev.tensor{true, false})
    assert.is_true(tfdev.tensor(7) == tfdev.tensor(7))
    assert.is_true(tfdev.tensor{dtype = "int64", shape = {0, 3}} == tfdev.tensor{dtype = "int64", shape = {0, 3}})
    assert.is_true(tfdev.from_bytes("float16", {2}, "\0\60\0\64") == tfdev.from_bytes("float16", {2}, "\0\60\0\64"))
  end)

  it("is false when a value, the dtype or the shape differs", function()
    assert.is_false(tfdev.tensor{{1, 2}, {3, 4}} == tfdev.tensor{{1, 2}, {3, 5}})
    assert.is_false(tfdev.tensor{1, 2} == tfdev.tensor({1, 2}, "int64"))
    assert.is_false(tfdev.tensor{1, 2} == tfdev.tensor({1, 2}, "float32"))
    assert.is_false(tfdev.tensor{1, 2, 3, 4} == tfdev.tensor{{1, 2}, {3, 4}})
    assert.is_false(tfdev.tensor{dtype = "int32", shape = {0, 2}} == tfdev.tensor{dtype = "int32", shape = {2, 0}})
    assert.is_true(tfdev.tensor{1, 2} ~= tfdev.tensor{2, 1})
  end)

  it("compares floats as IEEE numbers: NaN is unequal, 0 equals -0", function()
    assert.is_false(tfdev.tensor{1, nan} == tfdev.tensor{1, nan})
    assert.is_false(tfdev.tensor({nan}, "float64") == tfdev.tensor({nan}, "float64"))
    assert.is_true(tfdev.tensor{0.0} == tfdev.tensor{-0.0})
    local t = tfdev.tensor{nan}
    assert.is_true(t == t) -- Lua answers for the same handle before asking __eq, as for tables
  end)

  it("is false against anything that is not an open tensor", function()
    local t = tfdev.tensor{1}
    assert.is_false(t == 1)
    assert.is_false(t == {1})
    assert.is_false(t == tfdev.factory.new_device("CPU"))
    local closed = tfdev.tensor{1}
    closed:close()
    assert.is_false(closed == t)
    assert.is_false(t == closed)
  end)
end)

describe("tfdev.testing.equal", function()
  it("returns true for equal tensors, and takes plain values in the other side's dtype", function()
    assert.is_true(testing.equal(tfdev.tensor{{1, 2}, {3, 4}}, tfdev.tensor{{1, 2}, {3, 4}}))
    assert.is_true(testing.equal({{1, 2}, {3, 4}}, tfdev.tensor{{1, 2}, {3, 4}}))
    assert.is_true(testing.equal({0.1, 0.2}, tfdev.tensor{0.1, 0.2})) -- float32 both sides
    assert.is_true(testing.equal(5, tfdev.tensor(5, "int64")))
    assert.is_true(testing.equal({true}, tfdev.tensor{true}))
  end)

  it("matches NaNs at the same place, as numpy.testing does", function()
    assert.is_true(testing.equal(tfdev.tensor{1, nan}, tfdev.tensor{1, nan}))
    local ok, why = testing.equal({1, nan}, tfdev.tensor{nan, 1})
    assert.is_false(ok)
    assert.are.equal("2 of 2 elements differ; first at [1]: expected 1, got nan (difference inf)", why)
  end)

  it("says how many elements differ, the first, and the largest difference", function()
    local ok, why = testing.equal({{1, 2}, {3, 4}}, tfdev.tensor{{1, 2}, {5, 9}})
    assert.is_false(ok)
    assert.are.equal("2 of 4 elements differ; first at [2,1]: expected 3, got 5; " ..
      "largest difference 5 at [2,2]: expected 4, got 9", why)
    ok, why = testing.equal(tfdev.tensor(5), tfdev.tensor(7))
    assert.are.equal("1 of 1 elements differ; first at the scalar: expected 5, got 7 (difference 2)", why)
    ok, why = testing.equal({true, true}, tfdev.tensor{true, false})
    assert.are.equal("1 of 2 elements differ; first at [2]: expected true, got false", why)
  end)

  it("names a dtype or shape mismatch", function()
    local ok, why = testing.equal(tfdev.tensor{1, 2}, tfdev.tensor({1, 2}, "float32"))
    assert.is_false(ok)
    assert.are.equal("dtypes differ: expected int32, got float32", why)
    ok, why = testing.equal({{1, 2}, {3, 4}}, tfdev.tensor{1, 2, 3, 4})
    assert.are.equal("shapes differ: expected {2, 2}, got {4}", why)
  end)

  it("says when a plain value cannot be a tensor of the other side's dtype", function()
    local ok, why = testing.equal({1.5}, tfdev.tensor{1})
    assert.is_false(ok)
    assert.truthy(why:find("the expected value does not make a tensor of dtype int32", 1, true), why)
    assert.truthy(why:find("not an integer", 1, true), why)
    ok, why = testing.equal({{1}, {1, 2}}, {{1}, {1}})
    assert.truthy(why:find("ragged nested table", 1, true), why)
  end)
end)

describe("tfdev.testing.near", function()
  it("accepts differences up to an absolute tolerance, across dtypes", function()
    assert.is_true(testing.near({1, 2, 3}, tfdev.tensor{1.0001, 1.9999, 3}, 1e-3))
    assert.is_true(testing.near(tfdev.tensor({1, 2}, "float64"), tfdev.tensor({1, 2}, "float32"), 0))
    assert.is_true(testing.near({1, 2}, tfdev.tensor{1, 2}, 0)) -- int32: the expected side stays float
    assert.is_true(testing.near({math.huge, nan}, tfdev.tensor{math.huge, nan}, 1e-6))
  end)

  it("takes {atol =, rtol =} as numpy's allclose does", function()
    assert.is_true(testing.near({1000, 1}, tfdev.tensor{1000.5, 1}, { rtol = 1e-3 }))
    local ok, why = testing.near({1000, 1}, tfdev.tensor{1000.5, 1.01}, { atol = 1e-3, rtol = 1e-3 })
    assert.is_false(ok)
    assert.truthy(why:find("1 of 2 elements differ by more than 0.001 + 0.001 * |expected|; first at [2]", 1, true), why)
  end)

  it("says where and by how much the values differ", function()
    local ok, why = testing.near({{0, 0}, {0, 0}}, tfdev.tensor({{0, 0.5}, {2, 0}}, "float64"), 0.1)
    assert.is_false(ok)
    assert.are.equal("2 of 4 elements differ by more than 0.1; first at [1,2]: expected 0, got 0.5; " ..
      "largest difference 2 at [2,1]: expected 0, got 2", why)
    ok, why = testing.near({1}, tfdev.tensor{nan}, 1)
    assert.are.equal("1 of 1 elements differ by more than 1; first at [1]: expected 1, got nan (difference inf)", why)
    ok, why = testing.near({1, 2}, tfdev.tensor{1, 2, 3}, 1)
    assert.are.equal("shapes differ: expected {2}, got {3}", why)
  end)

  it("refuses a bad tolerance", function()
    h.raises("INVALID_ARGUMENT", "tol must be a number >= 0", testing.near, {1}, {1}, -1)
    h.raises("INVALID_ARGUMENT", "tol must be a number >= 0", testing.near, {1}, {1})
    h.raises("INVALID_ARGUMENT", "tol must be a number >= 0", testing.near, {1}, {1}, { atol = "x" })
  end)
end)

describe("tfdev.testing.raises and fails", function()
  it("return the tfdev.error when code and message match", function()
    local err = testing.raises("INVALID_ARGUMENT", "ragged nested table", tfdev.tensor, {{1}, {1, 2}})
    assert.are.equal("INVALID_ARGUMENT", err.code)
    err = testing.fails("INVALID_ARGUMENT", "could not parse device name", tfdev.device_name.parse("/job:a/bogus:1"))
    assert.are.equal("INVALID_ARGUMENT", err.code)
  end)

  it("fail with the reason otherwise, as luassert failures", function()
    local msg = failure(testing.raises, "NOT_FOUND", "ragged", tfdev.tensor, {{1}, {1, 2}})
    assert.truthy(msg:find("expected code NOT_FOUND, got INVALID_ARGUMENT (ragged nested table", 1, true), msg)
    msg = failure(testing.raises, "INVALID_ARGUMENT", "no such words", tfdev.tensor, {{1}, {1, 2}})
    assert.truthy(msg:find("does not contain \"no such words\"", 1, true), msg)
    msg = failure(testing.raises, "INVALID_ARGUMENT", "x", function() return 1 end)
    assert.truthy(msg:find("expected a INVALID_ARGUMENT error containing \"x\", got success", 1, true), msg)
    msg = failure(testing.raises, "INVALID_ARGUMENT", "x", error, "a plain string")
    assert.truthy(msg:find("expected a tfdev.error, got: a plain string", 1, true), msg)
    msg = failure(testing.fails, "INVALID_ARGUMENT", "x", 42)
    assert.truthy(msg:find("expected nil and an error, got 42", 1, true), msg)
  end)

  it("is_error checks an error value without raising", function()
    local err = tfdev.error.new("NOT_FOUND", "no device CPU:9")
    assert.is_true(testing.is_error(err, "NOT_FOUND", "CPU:9"))
    local ok, why = testing.is_error(err, "NOT_FOUND", "GPU")
    assert.is_false(ok)
    assert.are.equal('message "no device CPU:9" does not contain "GPU"', why)
  end)
end)

describe("luassert assertions", function()
  it("pass for equal and near tensors, and negate", function()
    assert.tensor_equal({{1, 2}, {3, 4}}, tfdev.tensor{{1, 2}, {3, 4}})
    assert.are.tensor_equal(tfdev.tensor{true}, tfdev.tensor{true})
    assert.is_not.tensor_equal({1, 2}, tfdev.tensor{1, 3})
    assert.tensor_near({0.5, 1}, tfdev.tensor{0.5001, 1}, 1e-3)
    assert.is_not.tensor_near({0.5, 1}, tfdev.tensor{0.6, 1}, 1e-3)
  end)

  it("fail with where and by how much, and both tensors", function()
    local msg = failure(assert.tensor_equal, {{1, 2}, {3, 4}}, tfdev.tensor{{1, 2}, {3, 5}})
    assert.truthy(msg:find("Expected tensors to be equal, but 1 of 4 elements differ; first at [2,2]: " ..
      "expected 4, got 5 (difference 1)", 1, true), msg)
    assert.truthy(msg:find("Expected:\ntfdev.tensor(int32, shape={2, 2}): [[1, 2], [3, 4]]", 1, true), msg)
    assert.truthy(msg:find("Passed in:\ntfdev.tensor(int32, shape={2, 2}): [[1, 2], [3, 5]]", 1, true), msg)
    msg = failure(assert.tensor_near, {1, 2}, tfdev.tensor({1, 2.5}, "float64"), 0.1)
    assert.truthy(msg:find("Expected tensors to be near, but 1 of 2 elements differ by more than 0.1; " ..
      "first at [2]: expected 2, got 2.5 (difference 0.5)", 1, true), msg)
    msg = failure(assert.is_not.tensor_equal, {1}, tfdev.tensor{1})
    assert.truthy(msg:find("Expected tensors to differ, but they are equal", 1, true), msg)
    msg = failure(assert.is_not.tensor_near, {1}, tfdev.tensor{1}, { atol = 0.5 })
    assert.truthy(msg:find("Expected tensors not to be near, but they are within 0.5", 1, true), msg)
  end)

  it("put a message given after the arguments first", function()
    local msg = failure(assert.tensor_equal, {1}, tfdev.tensor{2}, "logits after step 3")
    assert.truthy(msg:find("logits after step 3\nExpected tensors to be equal, but", 1, true), msg)
    msg = failure(assert.tensor_near, {1}, tfdev.tensor{2}, 0.5, "loss")
    assert.truthy(msg:find("loss\nExpected tensors to be near", 1, true), msg)
  end)
end)

-- A user's own project: a .busted file that runs busted's specs with the tfdev executable, a spec
-- that uses tfdev.testing, no environment variable pointing at tfdev's Lua files.
describe("a user's busted project with lua = \"tfdev\"", function()
  local exe = os.getenv("TFDEV_EXE")
  assert(exe, "TFDEV_EXE must name the tfdev executable (ctest sets it)")
  local busted = arg and arg[0] and arg[0]:match("busted$") and arg[0] or "busted"
  local dir

  local function write(path, text)
    local f = assert(io.open(dir .. "/" .. path, "w"))
    f:write(text)
    f:close()
  end

  -- Runs busted in the project as a user would: tfdev on PATH, LUA_PATH/LUA_CPATH unset.
  local function run_busted()
    local bin = exe:match("^(.*)/[^/]*$")
    local p = io.popen(string.format("cd '%s' && env -u LUA_PATH -u LUA_CPATH PATH='%s':\"$PATH\" %s -o plainTerminal 2>&1; echo \"exit=$?\"",
      dir, bin, busted))
    local out = p:read("a")
    p:close()
    local body, code = out:match("^(.-)exit=(%d+)%s*$")
    return body, tonumber(code)
  end

  before_each(function()
    dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir -p '" .. dir .. "/spec'"))
    write(".busted", 'return {\n  default = {\n    lua = "tfdev",\n  },\n}\n')
  end)

  after_each(function()
    os.execute("rm -rf '" .. dir .. "'")
  end)

  it("runs its specs under tfdev and passes", function()
    write("spec/model_spec.lua", [[
local tfdev = require "tfdev"
local testing = require "tfdev.testing"
describe("my model", function()
  it("runs under the tfdev executable", function()
    assert.are.equal("tfdev", arg[-1]:match("[^/]*$"))
  end)
  it("doubles", function()
    local g = tfdev.graph()
    local x = g:placeholder("float32", {2}, {name = "x"})
    g:op("Identity", {x * 2}, {name = "y"})
    local s <close> = tfdev.session()
    s:create(g)
    assert.tensor_near({2, 4}, s:run({x = {1, 2}}, "y"), 1e-6)
    assert.tensor_equal({2, 4}, s:run({x = {1, 2}}, "y"))
    testing.raises("INVALID_ARGUMENT", "ragged", tfdev.tensor, {{1}, {1, 2}})
  end)
end)
]])
    local out, code = run_busted()
    assert.are.equal(0, code, out)
    assert.truthy(out:find("2 successes / 0 failures / 0 errors", 1, true), out)
  end)

  it("fails a wrong result with a readable message", function()
    write("spec/model_spec.lua", [[
local tfdev = require "tfdev"
require "tfdev.testing"
describe("my model", function()
  it("doubles", function()
    assert.tensor_equal({{2, 4}, {6, 8}}, tfdev.tensor{{2, 4}, {6, 9}})
  end)
end)
]])
    local out, code = run_busted()
    assert.are.equal(1, code, out)
    assert.truthy(out:find("0 successes / 1 failure / 0 errors", 1, true), out)
    assert.truthy(out:find("spec/model_spec.lua:5: Expected tensors to be equal, but 1 of 4 elements differ; " ..
      "first at [2,2]: expected 8, got 9 (difference 1)", 1, true), out)
    assert.truthy(out:find("Passed in:\ntfdev.tensor(int32, shape={2, 2}): [[2, 4], [6, 9]]", 1, true), out)
  end)
end)
