-- TensorFlow 1's TensorArrays (TensorArrayV3 and its Read/Write/Gather/Scatter/Concat/Split/Size/Close
-- ops): written one iteration at a time inside while loops and read back whole, as TensorFlow 1's
-- tf.TensorArray in tf.while_loop builds them; per step (each step's arrays are gone when it ends);
-- TensorFlow's texts for what it refuses.
local tfdev = require "tfdev"
local h = require "spec.support.helpers"

local function i32(v) return tfdev.tensor(v, "int32") end
local function f32(v) return tfdev.tensor(v, "float32") end
local function const(name, value) return { name = name, op = "Const", attr = { value = value } } end

local function session_with(nodes, options)
  local s = tfdev.session(options)
  s:create { node = nodes }
  return s
end

local function step_containers(s)
  local n = 0
  for _, d in ipairs(s:devices()) do
    for _, c in ipairs(d:resource_manager():containers()) do
      if c:find("^__per_step_") then n = n + 1 end
    end
  end
  return n
end

-- ta = TensorArray(float32, size, element_shape [2]); for i < n: ta = ta.write(i, x * i); ta.stack(), ta.size()
local function loop_graph(size, n, attrs)
  local w = { frame_name = "w", parallel_iterations = attrs.parallel or 10 }
  local c = { frame_name = "w", parallel_iterations = attrs.parallel or 10, is_constant = true }
  local ta_attr = { dtype = "float32", element_shape = attrs.element_shape, dynamic_size = attrs.dynamic_size }
  return {
    const("zero", i32(0)), const("n", i32(n)), const("one", i32(1)), const("size", i32(size)),
    const("x", f32({ 1, 2 })),
    { name = "ta", op = "TensorArrayV3", input = { "size" }, attr = ta_attr },
    { name = "e/i", op = "Enter", input = { "zero" }, attr = w },
    { name = "e/flow", op = "Enter", input = { "ta:1" }, attr = w },
    { name = "e/h", op = "Enter", input = { "ta" }, attr = c },
    { name = "e/n", op = "Enter", input = { "n" }, attr = c },
    { name = "e/one", op = "Enter", input = { "one" }, attr = c },
    { name = "e/x", op = "Enter", input = { "x" }, attr = c },
    { name = "mi", op = "Merge", input = { "e/i", "ni" } },
    { name = "mf", op = "Merge", input = { "e/flow", "nf" } },
    { name = "less", op = "Less", input = { "mi", "e/n" } },
    { name = "cond", op = "LoopCond", input = { "less" } },
    { name = "si", op = "Switch", input = { "mi", "cond" } },
    { name = "sf", op = "Switch", input = { "mf", "cond" } },
    { name = "fi", op = "Cast", input = { "si:1" }, attr = { DstT = "float32" } },
    { name = "value", op = "Mul", input = { "e/x", "fi" } },
    { name = "write", op = "TensorArrayWriteV3", input = { "e/h", "si:1", "value", "sf:1" } },
    { name = "inc", op = "AddV2", input = { "si:1", "e/one" } },
    { name = "ni", op = "NextIteration", input = { "inc" } },
    { name = "nf", op = "NextIteration", input = { "write" } },
    { name = "flow", op = "Exit", input = { "sf" } },
    { name = "count", op = "TensorArraySizeV3", input = { "ta", "flow" } },
    { name = "range", op = "Range", input = { "zero", "count", "one" } },
    { name = "stack", op = "TensorArrayGatherV3", input = { "ta", "range", "flow" },
      attr = { dtype = "float32", element_shape = attrs.element_shape } },
  }
end

describe("TensorArrays in while loops", function()
  it("collect one value per iteration and stack them, on the pool and on the caller's thread", function()
    for _, threads in ipairs { 2, -1 } do
      for _, parallel in ipairs { 1, 10 } do
        local s <close> = session_with(loop_graph(4, 4, { element_shape = { 2 }, parallel = parallel }),
          { inter_op_threads = threads })
        for _ = 1, 3 do -- each step makes its own array
          local out = s:run({}, { "stack", "count" })
          assert.are.same({ { 0, 0 }, { 1, 2 }, { 2, 4 }, { 3, 6 } }, out[1]:totable())
          assert.are.equal(4, out[2]:item())
          assert.are.equal(0, step_containers(s)) -- and none outlives its step
        end
      end
    end
  end)

  it("grow when dynamic_size is set, from size 0, with an unknown element shape", function()
    local s <close> = session_with(loop_graph(0, 5, { dynamic_size = true }))
    local out = s:run({}, { "stack", "count" })
    assert.are.equal(5, out[2]:item())
    assert.are.same({ 5, 2 }, out[1].shape)
    assert.are.same({ 4, 8 }, out[1]:totable()[5])
  end)

  it("refuse a write past a fixed size, with TensorFlow's text", function()
    local s <close> = session_with(loop_graph(3, 4, { element_shape = { 2 } }))
    h.raises("INVALID_ARGUMENT", "Tried to write to index 3 but array is not resizeable and size is: 3", s.run, s, {},
      "stack")
    assert.are.equal(0, step_containers(s)) -- a failed step cleans up too
  end)
end)

describe("TensorArray ops", function()
  -- a straight-line graph: ta of size 3 (element_shape as given), writes of w0..w2 at 0..2
  local function written(extra, ta_attr, values)
    local nodes = {
      const("three", i32(3)), const("i0", i32(0)), const("i1", i32(1)), const("i2", i32(2)),
      const("w0", f32(values and values[1] or { 1, 2 })), const("w1", f32(values and values[2] or { 3, 4 })),
      const("w2", f32(values and values[3] or { 5, 6 })),
      { name = "ta", op = "TensorArrayV3", input = { "three" }, attr = ta_attr or { dtype = "float32" } },
      { name = "a", op = "TensorArrayWriteV3", input = { "ta", "i0", "w0", "ta:1" } },
      { name = "b", op = "TensorArrayWriteV3", input = { "ta", "i1", "w1", "a" } },
      { name = "c", op = "TensorArrayWriteV3", input = { "ta", "i2", "w2", "b" } },
    }
    for _, n in ipairs(extra) do nodes[#nodes + 1] = n end
    return session_with(nodes)
  end

  it("read, gather (any order, repeats with clear_after_read off), size and close", function()
    local s <close> = written({
      { name = "r1", op = "TensorArrayReadV3", input = { "ta", "i1", "c" }, attr = { dtype = "float32" } },
      const("idx", i32({ 2, 0 })),
      { name = "g", op = "TensorArrayGatherV3", input = { "ta", "idx", "c" }, attr = { dtype = "float32" } },
      { name = "n", op = "TensorArraySizeV3", input = { "ta", "c" } },
    })
    local out = s:run({}, { "r1", "g", "n" })
    assert.are.same({ 3, 4 }, out[1]:totable())
    assert.are.same({ { 5, 6 }, { 1, 2 } }, out[2]:totable())
    assert.are.equal(3, out[3]:item())
    local again <close> = written({
      const("idx", i32({ 1, 1, 0 })),
      { name = "g", op = "TensorArrayGatherV3", input = { "ta", "idx", "c" }, attr = { dtype = "float32" } },
    }, { dtype = "float32", clear_after_read = false })
    assert.are.same({ { 3, 4 }, { 3, 4 }, { 1, 2 } }, again:run({}, "g"):totable())
  end)

  it("concat (with lengths) and split, scatter, and zeros for unwritten elements of a known shape", function()
    local s <close> = written({
      { name = "cat", op = "TensorArrayConcatV3", input = { "ta", "c" }, attr = { dtype = "float32" } },
    }, nil, { { 1 }, { 2, 3 }, { 4, 5, 6 } })
    local out = s:run({}, { "cat", "cat:1" })
    assert.are.same({ 1, 2, 3, 4, 5, 6 }, out[1]:totable())
    assert.are.same({ 1, 2, 3 }, out[2]:totable())
    assert.are.equal("int64", out[2].dtype)
    local sp <close> = session_with {
      const("two", i32(2)), const("v", f32({ { 1, 1 }, { 2, 2 }, { 3, 3 } })),
      const("lengths", tfdev.tensor({ 1, 2 }, "int64")), const("i1", i32(1)), const("idx", i32({ 2, 0 })),
      { name = "ta", op = "TensorArrayV3", input = { "two" }, attr = { dtype = "float32" } },
      { name = "split", op = "TensorArraySplitV3", input = { "ta", "v", "lengths", "ta:1" } },
      { name = "r", op = "TensorArrayReadV3", input = { "ta", "i1", "split" }, attr = { dtype = "float32" } },
      const("three", i32(3)), const("sv", f32({ { 7, 7 }, { 9, 9 } })),
      { name = "tb", op = "TensorArrayV3", input = { "three" }, attr = { dtype = "float32", element_shape = { 2 } } },
      { name = "sc", op = "TensorArrayScatterV3", input = { "tb", "idx", "sv", "tb:1" } },
      const("all", i32({ 0, 1, 2 })),
      { name = "g", op = "TensorArrayGatherV3", input = { "tb", "all", "sc" }, attr = { dtype = "float32" } },
    }
    out = sp:run({}, { "r", "g" })
    assert.are.same({ { 2, 2 }, { 3, 3 } }, out[1]:totable())
    assert.are.same({ { 9, 9 }, { 0, 0 }, { 7, 7 } }, out[2]:totable()) -- index 1 never written: zeros
  end)

  it("refuses what TensorFlow refuses, with its texts", function()
    local function fails(code, text, extra, ta_attr, fetch, values)
      local s <close> = written(extra, ta_attr, values)
      h.raises(code, text, s.run, s, {}, fetch)
    end
    fails("INVALID_ARGUMENT", "Tried to read from index 5 but array size is: 3",
      { const("i5", i32(5)), { name = "r", op = "TensorArrayReadV3", input = { "ta", "i5", "c" }, attr = { dtype = "float32" } } },
      nil, "r")
    fails("INVALID_ARGUMENT", "Could not read index 1 twice because it was cleared after a previous read", {
      { name = "r", op = "TensorArrayReadV3", input = { "ta", "i1", "c" }, attr = { dtype = "float32" } },
      { name = "r2", op = "TensorArrayReadV3", input = { "ta", "i1", "r" }, attr = { dtype = "float32" } },
    }, nil, "r2")
    fails("INVALID_ARGUMENT", "TensorArray dtype is float32 but Op requested dtype int32.",
      { { name = "r", op = "TensorArrayReadV3", input = { "ta", "i1", "c" }, attr = { dtype = "int32" } } }, nil, "r")
    fails("INVALID_ARGUMENT", "Could not write to TensorArray index 1 because it has already been written to.",
      { { name = "d", op = "TensorArrayWriteV3", input = { "ta", "i1", "w0", "c" } } }, nil, "d")
    fails("INVALID_ARGUMENT", "TensorArray dtype is float32 but Op is trying to write dtype int32",
      { { name = "d", op = "TensorArrayWriteV3", input = { "ta", "i1", "three", "ta:1" } } }, nil, "d")
    fails("INVALID_ARGUMENT", "because the value shape is [3] which is incompatible with the TensorArray's inferred " ..
      "element shape: [2] (consider setting infer_shape=False).", {}, { dtype = "float32", element_shape = { 2 } }, "c",
      { { 1, 2 }, { 3, 4, 5 }, { 6, 7 } })
    fails("INVALID_ARGUMENT", "TensorArray has inconsistent shapes.  Index 0 has shape: [2] but index 1 has shape: [3]",
      { const("idx", i32({ 0, 1 })),
        { name = "g", op = "TensorArrayGatherV3", input = { "ta", "idx", "c" }, attr = { dtype = "float32" } } },
      nil, "g", { { 1, 2 }, { 3, 4, 5 }, { 6, 7 } })
    fails("INVALID_ARGUMENT", "has already been closed.", {
      { name = "close", op = "TensorArrayCloseV3", input = { "ta" } },
      { name = "r", op = "TensorArrayReadV3", input = { "ta", "i1", "c", "^close" }, attr = { dtype = "float32" } },
    }, nil, "r")
  end)

  it("refuses a negative size, eager use and handles that are not TensorArrays", function()
    local s <close> = session_with {
      const("minus", i32(-1)),
      { name = "ta", op = "TensorArrayV3", input = { "minus" }, attr = { dtype = "float32" } },
    }
    h.raises("INVALID_ARGUMENT", "Size should be >= 0.", s.run, s, {}, "ta")
    local d = tfdev.factory.add_devices()[1]
    h.raises("FAILED_PRECONDITION", "a TensorArray lives in a session's step: it cannot run eagerly", d.compute, d,
      "TensorArrayV3", { i32(2) }, { dtype = "float32" })
    local bad <close> = tfdev.session()
    h.raises("INVALID_ARGUMENT", "input 0 must be a TensorArray handle (resource), got float32", bad.create, bad, { node = {
      const("x", f32(1)), const("i", i32(0)),
      { name = "r", op = "TensorArrayReadV3", input = { "x", "i", "x" }, attr = { dtype = "float32" } } } })
  end)
end)
