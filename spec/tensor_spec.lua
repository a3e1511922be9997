-- tfdev.tensor through Lua: creation from tables, specs and bytes; conversion back; errors.
local tfdev = require "tfdev"
local h = require "spec.support.helpers"

describe("tfdev.tensor", function()
  it("infers dtype and shape from nested tables like TensorFlow", function()
    local t = tfdev.tensor { { 1, 2, 3 }, { 4, 5, 6 } }
    assert.are.equal("int32", t.dtype)
    assert.are.same({ 2, 3 }, t.shape)
    assert.are.same({ { 1, 2, 3 }, { 4, 5, 6 } }, t:totable())
    assert.are.equal("float32", tfdev.tensor({ 1, 2.5 }).dtype)
    assert.are.equal("bool", tfdev.tensor({ true, false }).dtype)
    assert.are.equal("float32", tfdev.tensor({}).dtype)
    assert.are.same({ 0 }, tfdev.tensor({}).shape)
  end)

  it("makes scalars", function()
    local s = tfdev.tensor(2.5)
    assert.are.same({}, s.shape)
    assert.are.equal(2.5, s:item())
    assert.are.equal(2.5, s:totable())
    assert.are.equal(1, s:numel())
    assert.is_true(tfdev.tensor(true):item())
  end)

  it("converts to each dtype", function()
    assert.are.same({ 1.5, -2 }, tfdev.tensor({ 1.5, -2 }, "float64"):totable())
    assert.are.same({ 3, -4 }, tfdev.tensor({ 3, -4.0 }, "int64"):totable())
    assert.are.equal(math.maxinteger, tfdev.tensor({ math.maxinteger }, "int64")[1])
    assert.are.same({ 0.5 }, tfdev.tensor({ 0.5 }, "float32"):totable())
    assert.are.equal("int32", tfdev.tensor({ 7 }, "int32").dtype)
  end)

  it("builds from a spec table", function()
    local z = tfdev.tensor { dtype = "float64", shape = { 2, 2 } }
    assert.are.same({ { 0, 0 }, { 0, 0 } }, z:totable())
    local f = tfdev.tensor { dtype = "int32", shape = { 2, 3 }, data = { 1, 2, 3, 4, 5, 6 } }
    assert.are.same({ { 1, 2, 3 }, { 4, 5, 6 } }, f:totable())
    local n = tfdev.tensor { dtype = "int64", data = { { 1 }, { 2 } } }
    assert.are.same({ 2, 1 }, n.shape)
    local s = tfdev.tensor { dtype = "float32", shape = {}, data = 3 }
    assert.are.equal(3, s:item())
  end)

  it("round-trips through bytes", function()
    local t = tfdev.tensor({ { 1.25, 2 }, { 3, 4 } }, "float32")
    local b = t:bytes()
    assert.are.equal(16, #b)
    assert.are.equal(string.pack("<ffff", 1.25, 2, 3, 4), b)
    local u = tfdev.from_bytes("float32", { 2, 2 }, b)
    assert.are.same(t:totable(), u:totable())
    assert.are.same({ 7, 8 }, tfdev.from_bytes("int64", { 2 }, string.pack("<i8i8", 7, 8)):totable())
    assert.are.same({ true, false }, tfdev.from_bytes("bool", { 2 }, "\1\0"):totable())
  end)

  it("indexes by position like a table", function()
    local t = tfdev.tensor { { 1, 2, 3 }, { 4, 5, 6 } }
    assert.are.equal(2, #t)
    local row = t[2]
    assert.are.same({ 4, 5, 6 }, row:totable())
    assert.are.equal(6, t[2][3])
    assert.is_nil(t[3])
    assert.is_nil(t[0])
    local seen = {}
    for i, v in ipairs(tfdev.tensor { 10, 20 }) do seen[i] = v end
    assert.are.same({ 10, 20 }, seen)
  end)

  it("prints dtype, shape and values, summarising big tensors", function()
    assert.are.equal("tfdev.tensor(int32, shape={2, 2}): [[1, 2], [3, 4]]", tostring(tfdev.tensor { { 1, 2 }, { 3, 4 } }))
    assert.are.equal("tfdev.tensor(bool, shape={}): true", tostring(tfdev.tensor(true)))
    assert.are.equal("tfdev.tensor(float32, shape={2}): [0.5, 1]", tostring(tfdev.tensor { 0.5, 1 }))
    local big = tostring(tfdev.tensor { dtype = "int32", shape = { 2000 } })
    assert.are.equal("tfdev.tensor(int32, shape={2000}): [0, 0, 0, ..., 0, 0, 0]", big)
  end)

  it("refuses bad input with the element at fault", function()
    h.raises("INVALID_ARGUMENT", "got 3 arguments (a shape goes in the spec table)", tfdev.tensor, { 1, 2, 3, 4 }, "float32",
      { 2, 2 })
    h.raises("INVALID_ARGUMENT", "give the dtype inside the spec table", tfdev.tensor, { shape = { 2 } }, "float32")
    h.raises("INVALID_ARGUMENT", "ragged nested table: element [2] has 1 entries, expected 2", tfdev.tensor,
      { { 1, 2 }, { 3 } })
    h.raises("INVALID_ARGUMENT", "nested table mixes strings with numbers; give a dtype", tfdev.tensor, { { 1, "x" } })
    h.raises("INVALID_ARGUMENT", "element [1,2] is a string, expected a number", tfdev.tensor, { { 1, "x" } }, "int32")
    h.raises("INVALID_ARGUMENT", "nested table mixes booleans and numbers", tfdev.tensor, { true, 1 })
    h.raises("INVALID_ARGUMENT", "element [2] = 1.5 is not an integer (dtype int32)", tfdev.tensor, { 1, 1.5 }, "int32")
    h.raises("INVALID_ARGUMENT", "out of range for int32", tfdev.tensor, { 2 ^ 40 // 1 }, "int32")
    h.raises("INVALID_ARGUMENT", "expected a boolean (dtype bool)", tfdev.tensor, { 1 }, "bool")
    h.raises("INVALID_ARGUMENT", "unknown dtype 'bfloat16'", tfdev.tensor, { 1 }, "bfloat16")
    h.raises("INVALID_ARGUMENT", "data has 3 elements, shape needs 4", tfdev.tensor,
      { dtype = "float32", shape = { 2, 2 }, data = { 1, 2, 3 } })
    h.raises("INVALID_ARGUMENT", "shape[2] must be a non-negative integer", tfdev.tensor,
      { dtype = "float32", shape = { 2, -1 } })
    h.raises("INVALID_ARGUMENT", "rank 9 is above the maximum 8", tfdev.tensor,
      { shape = { 1, 1, 1, 1, 1, 1, 1, 1, 1 } })
    h.raises("INVALID_ARGUMENT", "a tensor spec needs a shape, data, or both", tfdev.tensor, { dtype = "float32" })
    h.raises("INVALID_ARGUMENT", "expects a number, boolean, string or nested table, got function", tfdev.tensor, print)
    h.raises("INVALID_ARGUMENT", "12 bytes given for a float32 tensor of 4 elements (16 bytes)", tfdev.from_bytes,
      "float32", { 2, 2 }, string.rep("x", 12))
    h.raises("INVALID_ARGUMENT", "item() needs a tensor of one element", function() tfdev.tensor { 1, 2 }:item() end)
  end)

  it("refuses use after close", function()
    local t = tfdev.tensor { 1 }
    t:close()
    t:close()
    assert.are.equal("tfdev.tensor(closed)", tostring(t))
    h.raises("FAILED_PRECONDITION", "tensor handle is closed", function() return t:totable() end)
  end)

  it("keeps a row alive after its tensor is gone", function()
    local row
    do row = tfdev.tensor { { 1, 2 }, { 3, 4 } }[2] end
    collectgarbage()
    collectgarbage()
    assert.are.same({ 3, 4 }, row:totable())
  end)
end)
