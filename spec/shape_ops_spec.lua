-- Shape, slicing and gathering ops (ExpandDims, Squeeze, Pack, Unpack, Slice, StridedSlice, GatherV2, GatherNd,
-- Tile, Range, Split, SplitV, ArgMax, ArgMin, Min, Prod, TopKV2) against values worked out by hand or by small
-- Lua references written here (Python's slice rules for StridedSlice). The graphs run with optimize_graph = false
-- so the kernels run themselves rather than being folded.
local tfdev = require "tfdev"
local h = require "spec.support.helpers"

local function T(v, dt) return tfdev.tensor(v, dt or "int32") end

-- Runs one node `op` on constant inputs; returns its output tensors (all of them when nout is given).
local function run(op, inputs, attrs, nout, optimize)
  local fetches = { "y" }
  for i = 1, nout or 0 do fetches[i] = "y:" .. (i - 1) end
  return table.unpack(h.run_node(op, inputs, attrs, fetches, optimize))
end

local function vals(op, inputs, attrs) return run(op, inputs, attrs):totable() end

describe("shape ops", function()
  after_each(function() tfdev.factory.reset() end)

  local m23 = { { 0, 1, 2 }, { 3, 4, 5 } }

  it("ExpandDims inserts a 1 at the axis, negative axes counting from the end of the result", function()
    assert.are.same({ 1, 2, 3 }, run("ExpandDims", { T(m23), T(0) }).shape)
    assert.are.same({ 2, 1, 3 }, run("ExpandDims", { T(m23), T(1, "int64") }).shape)
    assert.are.same({ 2, 3, 1 }, run("ExpandDims", { T(m23), T(-1) }).shape)
    assert.are.same({ 1, 2, 3 }, run("ExpandDims", { T(m23), T(-3) }).shape)
    assert.are.same({ { { 0, 1, 2 } }, { { 3, 4, 5 } } }, vals("ExpandDims", { T(m23), T(1) }))
    assert.are.same({ 1 }, run("ExpandDims", { T(7), T(0) }).shape)
    h.raises("INVALID_ARGUMENT", "axis 3 is out of range [-3, 3)", run, "ExpandDims", { T(m23), T(3) })
    h.raises("INVALID_ARGUMENT", "axis (input 1) must be int32 or int64", run, "ExpandDims", { T(m23), T(0, "float32") })
  end)

  it("Squeeze drops size-1 dims, all of them or those squeeze_dims names", function()
    local x = tfdev.tensor({ { { { 1, 2, 3 } }, { { 4, 5, 6 } } } }, "float32") -- [1,2,1,3]
    assert.are.same({ 1, 2, 1, 3 }, x.shape)
    assert.are.same({ 2, 3 }, run("Squeeze", { x }).shape)
    assert.are.same({ { 1, 2, 3 }, { 4, 5, 6 } }, vals("Squeeze", { x }))
    assert.are.same({ 1, 2, 3 }, run("Squeeze", { x }, { squeeze_dims = { -2 } }).shape)
    assert.are.same({ 2, 1, 3 }, run("Squeeze", { x }, { squeeze_dims = { 0 } }).shape)
    assert.are.same({ 2, 3 }, run("Squeeze", { x }, { squeeze_dims = { 0, -2 } }).shape)
    assert.are.same({}, run("Squeeze", { T({ { 5 } }) }).shape)
    h.raises("INVALID_ARGUMENT", "Can not squeeze dim[1], expected a dimension of 1, got 2", run, "Squeeze", { x },
      { squeeze_dims = { 1 } })
    h.raises("INVALID_ARGUMENT", "squeeze_dims 4 is out of range", run, "Squeeze", { x }, { squeeze_dims = { 4 } })
  end)

  it("Pack stacks along a new axis; Unpack splits one", function()
    assert.are.same({ { 1, 2 }, { 3, 4 } }, vals("Pack", { T({ 1, 2 }), T({ 3, 4 }) }))
    assert.are.same({ { 1, 3 }, { 2, 4 } }, vals("Pack", { T({ 1, 2 }), T({ 3, 4 }) }, { axis = 1 }))
    assert.are.same({ { 1, 3, 5 }, { 2, 4, 6 } }, vals("Pack", { T({ 1, 2 }), T({ 3, 4 }), T({ 5, 6 }) }, { axis = -1 }))
    assert.are.same({ 7, 8 }, vals("Pack", { T(7), T(8) }))
    assert.are.same({ 2, 2, 3 }, run("Pack", { T(m23), T(m23) }, { axis = 1 }).shape)
    assert.are.same({ 2, 3, 2 }, run("Pack", { T(m23), T(m23) }, { axis = 2 }).shape)
    h.raises("INVALID_ARGUMENT", "Shapes of all inputs must match", run, "Pack", { T({ 1, 2 }), T({ 3 }) })
    h.raises("INVALID_ARGUMENT", "input 1 is float32", run, "Pack", { T({ 1, 2 }), T({ 3, 4 }, "float32") })
    h.raises("INVALID_ARGUMENT", "axis 2 is out of range [-2, 2)", run, "Pack", { T({ 1, 2 }), T({ 3, 4 }) }, { axis = 2 })

    local a, b = run("Unpack", { T(m23) }, { num = 2 }, 2)
    assert.are.same({ 0, 1, 2 }, a:totable())
    assert.are.same({ 3, 4, 5 }, b:totable())
    local c0, c1, c2 = run("Unpack", { T(m23) }, { num = 3, axis = -1 }, 3)
    assert.are.same({ { 0, 3 }, { 1, 4 }, { 2, 5 } }, { c0:totable(), c1:totable(), c2:totable() })
    h.raises("INVALID_ARGUMENT", "num is 3 but dimension 0 has size 2", run, "Unpack", { T(m23) }, { num = 3 }, 3)
    local many = {}
    for i = 1, 33 do many[i] = i end
    h.raises("INVALID_ARGUMENT", "tfdev supports at most 32 outputs", run, "Unpack", { T(many) }, { num = 33 }, 1)
  end)

  it("Slice takes size elements from begin; size -1 means to the end", function()
    local x = T({ { 1, 2, 3 }, { 4, 5, 6 }, { 7, 8, 9 } })
    assert.are.same({ { 4, 5 }, { 7, 8 } }, vals("Slice", { x, T({ 1, 0 }), T({ -1, 2 }) }))
    assert.are.same({ { 3 } }, vals("Slice", { x, T({ 0, 2 }, "int64"), T({ 1, -1 }, "int64") }))
    assert.are.same({ 0, 3 }, run("Slice", { x, T({ 1, 0 }), T({ 0, -1 }) }).shape)
    assert.are.same({ 3, 0 }, run("Slice", { x, T({ 0, 3 }), T({ -1, -1 }) }).shape)
    h.raises("INVALID_ARGUMENT", "Expected begin[1] in [0, 3]", run, "Slice", { x, T({ 0, 4 }), T({ 1, 1 }) })
    h.raises("INVALID_ARGUMENT", "size[0] in [0, 2]", run, "Slice", { x, T({ 1, 0 }), T({ 3, 1 }) })
    h.raises("INVALID_ARGUMENT", "vector of length 2", run, "Slice", { x, T({ 0 }), T({ 1 }) })
  end)

  -- Python's slice semantics for one dimension (slice.indices, then range).
  local function py_slice(x, b, e, s)
    local n = #x
    local lower, upper = s > 0 and 0 or -1, s > 0 and n or n - 1
    local function fix(v, dflt)
      if v == nil then return dflt end
      if v < 0 then v = v + n end
      return math.max(lower, math.min(upper, v))
    end
    local start, stop = fix(b, s > 0 and lower or upper), fix(e, s > 0 and upper or lower)
    local out = {}
    local i = start
    while (s > 0 and i < stop) or (s < 0 and i > stop) do
      out[#out + 1] = x[i + 1]
      i = i + s
    end
    return out
  end

  it("StridedSlice agrees with Python's slicing on every begin/end/stride combination of a vector", function()
    local x = {}
    for i = 1, 10 do x[i] = (i - 1) * 10 end
    local g = { node = { { name = "x", op = "Const", attr = { value = T(x) } } } }
    local bounds = { false, -11, -10, -3, -1, 0, 1, 4, 9, 10, 11 }
    local cases, fetches = {}, {}
    for _, b in ipairs(bounds) do
      for _, e in ipairs(bounds) do
        for _, s in ipairs { -3, -1, 1, 2 } do
          local name = "ss" .. #cases
          cases[#cases + 1] = { b or nil, e or nil, s }
          fetches[#fetches + 1] = name
          local n = #g.node
          g.node[n + 1] = { name = name .. "/b", op = "Const", attr = { value = T({ b or 0 }) } }
          g.node[n + 2] = { name = name .. "/e", op = "Const", attr = { value = T({ e or 0 }) } }
          g.node[n + 3] = { name = name .. "/s", op = "Const", attr = { value = T({ s }) } }
          g.node[n + 4] = { name = name, op = "StridedSlice", input = { "x", name .. "/b", name .. "/e", name .. "/s" },
            attr = { begin_mask = b and 0 or 1, end_mask = e and 0 or 1 } }
        end
      end
    end
    local sess <close> = tfdev.session { optimize_graph = false }
    sess:create(g)
    local out = sess:run({}, fetches)
    for i, c in ipairs(cases) do
      assert.are.same(py_slice(x, c[1], c[2], c[3]), out[i]:totable(),
        string.format("x[%s:%s:%d]", tostring(c[1]), tostring(c[2]), c[3]))
    end
  end)

  it("StridedSlice: masks, ellipsis, new axes, shrinking and negative strides", function()
    local v = T({ 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 })
    local function ss(x, b, e, s, attrs) return run("StridedSlice", { x, T(b), T(e), T(s) }, attrs) end
    assert.are.same({ 9, 8, 7, 6, 5, 4, 3, 2, 1, 0 }, ss(v, { 0 }, { 0 }, { -1 }, { begin_mask = 1, end_mask = 1 }):totable())
    assert.are.same({ 1, 3, 5, 7 }, ss(v, { 1 }, { -1 }, { 2 }):totable())
    assert.are.same({ 8, 6, 4 }, ss(v, { 8 }, { 2 }, { -2 }):totable())
    -- x[3] and x[-1]: shrink to scalars
    local s3 = ss(v, { 3 }, { 4 }, { 1 }, { shrink_axis_mask = 1 })
    assert.are.same({}, s3.shape)
    assert.are.equal(3, s3:item())
    assert.are.equal(9, ss(v, { -1 }, { 0 }, { 1 }, { shrink_axis_mask = 1 }):item())
    h.raises("INVALID_ARGUMENT", "slice index 10 of dimension 0 out of bounds", ss, v, { 10 }, { 11 }, { 1 },
      { shrink_axis_mask = 1 })
    h.raises("INVALID_ARGUMENT", "strides[0] must be non-zero", ss, v, { 0 }, { 5 }, { 0 })
    -- empty: x[5:2]
    assert.are.same({ 0 }, ss(v, { 5 }, { 2 }, { 1 }).shape)

    local m = T(m23)
    -- m[..., 0]
    local r = ss(m, { 0, 0 }, { 0, 1 }, { 1, 1 }, { ellipsis_mask = 1, shrink_axis_mask = 2 })
    assert.are.same({ 2 }, r.shape)
    assert.are.same({ 0, 3 }, r:totable())
    -- m[:, tf.newaxis]
    r = ss(m, { 0, 0 }, { 0, 0 }, { 1, 1 }, { begin_mask = 1, end_mask = 1, new_axis_mask = 2 })
    assert.are.same({ 2, 1, 3 }, r.shape)
    assert.are.same({ { { 0, 1, 2 } }, { { 3, 4, 5 } } }, r:totable())
    -- m[1]: one spec entry, the rest taken whole
    assert.are.same({ 3, 4, 5 }, ss(m, { 1 }, { 2 }, { 1 }, { shrink_axis_mask = 1 }):totable())
    -- m[:, ::-1]
    assert.are.same({ { 2, 1, 0 }, { 5, 4, 3 } },
      ss(m, { 0, 0 }, { 0, 0 }, { 1, -1 }, { begin_mask = 3, end_mask = 3 }):totable())
    -- m[::-1, 1:]
    assert.are.same({ { 4, 5 }, { 1, 2 } }, ss(m, { 0, 1 }, { 0, 0 }, { -1, 1 }, { begin_mask = 1, end_mask = 3 }):totable())
    -- m[tf.newaxis, ..., 1]
    r = ss(m, { 0, 0, 1 }, { 0, 0, 2 }, { 1, 1, 1 }, { new_axis_mask = 1, ellipsis_mask = 2, shrink_axis_mask = 4 })
    assert.are.same({ 1, 2 }, r.shape)
    assert.are.same({ { 1, 4 } }, r:totable())
    -- m[..., tf.newaxis]: new axis after the ellipsis
    assert.are.same({ 2, 3, 1 }, ss(m, { 0, 0 }, { 0, 0 }, { 1, 1 }, { ellipsis_mask = 1, new_axis_mask = 2 }).shape)
    -- t[1, ..., ::-2] on a [2,2,3] tensor
    local t3 = T({ { { 0, 1, 2 }, { 3, 4, 5 } }, { { 6, 7, 8 }, { 9, 10, 11 } } })
    assert.are.same({ { 8, 6 }, { 11, 9 } },
      ss(t3, { 1, 0, 0 }, { 2, 0, 0 }, { 1, 1, -2 }, { shrink_axis_mask = 1, ellipsis_mask = 2, begin_mask = 4, end_mask = 4 }):totable())
    h.raises("INVALID_ARGUMENT", "Multiple ellipses", ss, m, { 0, 0 }, { 0, 0 }, { 1, 1 }, { ellipsis_mask = 3 })
    h.raises("INVALID_ARGUMENT", "Index out of range using input dim 2", ss, m, { 0, 0, 0 }, { 1, 1, 1 }, { 1, 1, 1 })
    h.raises("INVALID_ARGUMENT", "only stride 1 allowed on non-range indexing", ss, v, { 1 }, { 2 }, { -1 },
      { shrink_axis_mask = 1 })
  end)

  it("GatherV2 picks slices along an axis and names an index out of range", function()
    local p = T({ { 1, 2, 3 }, { 4, 5, 6 } })
    assert.are.same({ { 4, 5, 6 }, { 1, 2, 3 }, { 4, 5, 6 } }, vals("GatherV2", { p, T({ 1, 0, 1 }), T(0) }))
    assert.are.same({ { 3, 1, 3 }, { 6, 4, 6 } }, vals("GatherV2", { p, T({ 2, 0, 2 }), T(1) }))
    assert.are.same({ { 3, 1, 3 }, { 6, 4, 6 } }, vals("GatherV2", { p, T({ 2, 0, 2 }, "int64"), T(-1, "int64") }))
    assert.are.same({ { { 2, 1 } }, { { 5, 4 } } }, vals("GatherV2", { p, T({ { 1, 0 } }), T(1) }))
    assert.are.same({ 3, 6 }, vals("GatherV2", { p, T(2), T(1) }))
    assert.are.same({ 2, 0 }, run("GatherV2", { p, T({}), T(1) }).shape)
    h.raises("INVALID_ARGUMENT", "indices[1] = 3 is not in [0, 3)", run, "GatherV2", { p, T({ 0, 3 }), T(1) })
    h.raises("INVALID_ARGUMENT", "indices[1,0] = -1 is not in [0, 2)", run, "GatherV2", { p, T({ { 0 }, { -1 } }), T(0) })
    h.raises("INVALID_ARGUMENT", "axis 2 is out of range", run, "GatherV2", { p, T({ 0 }), T(2) })
  end)

  it("GatherV2 with batch_dims: each batch picks with its own indices (values from numpy), TensorFlow's checks", function()
    local p = T({ { 1, 2, 3 }, { 4, 5, 6 } })
    assert.are.same({ { 1, 3 }, { 5, 5 } }, vals("GatherV2", { p, T({ { 0, 2 }, { 1, 1 } }), T(1) }, { batch_dims = 1 }))
    assert.are.same({ { 1, 3 }, { 5, 5 } }, vals("GatherV2", { p, T({ { 0, 2 }, { 1, 1 } }), T(-1) }, { batch_dims = -1 }))
    local p3 = {}
    for b = 1, 2 do
      p3[b] = {}
      for r = 1, 3 do
        p3[b][r] = {}
        for c = 1, 4 do p3[b][r][c] = ((b - 1) * 3 + (r - 1)) * 4 + c end
      end
    end
    -- params [2, 3, 4], axis 2, batch_dims 1: out[b, r, i] = params[b, r, indices[b, i]]
    assert.are.same({ { { 4, 1 }, { 8, 5 }, { 12, 9 } }, { { 14, 14 }, { 18, 18 }, { 22, 22 } } },
      vals("GatherV2", { T(p3), T({ { 3, 0 }, { 1, 1 } }, "int64"), T(2) }, { batch_dims = 1 }))
    -- indices of rank 3 keep their inner dimensions: [2, 3] + [1, 2]
    assert.are.same({ { { { 4, 1 } }, { { 8, 5 } }, { { 12, 9 } } }, { { { 14, 15 } }, { { 18, 19 } }, { { 22, 23 } } } },
      vals("GatherV2", { T(p3), T({ { { 3, 0 } }, { { 1, 2 } } }), T(2) }, { batch_dims = 1 }))
    h.raises("INVALID_ARGUMENT", "Expected batch_dims in the range [-2, 2], but got 3", run, "GatherV2",
      { p, T({ { 0 }, { 1 } }), T(1) }, { batch_dims = 3 })
    h.raises("INVALID_ARGUMENT", "batch_dims (2) must be less than rank(params) (2).", run, "GatherV2",
      { p, T({ { 0 }, { 1 } }), T(1) }, { batch_dims = 2 })
    h.raises("INVALID_ARGUMENT", "batch_dims (1) must be less than or equal to axis (0).", run, "GatherV2",
      { p, T({ { 0 }, { 1 } }), T(0) }, { batch_dims = 1 })
    h.raises("INVALID_ARGUMENT", "params.shape[0]: 2 should be equal to indices.shape[0]: 3", run, "GatherV2",
      { p, T({ { 0 }, { 1 }, { 0 } }), T(1) }, { batch_dims = 1 })
    h.raises("INVALID_ARGUMENT", "indices[1,0] = 3 is not in [0, 3)", run, "GatherV2", { p, T({ { 0 }, { 3 } }), T(1) },
      { batch_dims = 1 })
  end)

  it("GatherNd gathers elements or slices by index tuples", function()
    local p = T({ { 1, 2 }, { 3, 4 } })
    assert.are.same({ 2, 3 }, vals("GatherNd", { p, T({ { 0, 1 }, { 1, 0 } }) }))
    assert.are.same({ { 3, 4 } }, vals("GatherNd", { p, T({ { 1 } }) }))
    assert.are.same({ { { 3, 4 } }, { { 1, 2 } } }, vals("GatherNd", { p, T({ { { 1 } }, { { 0 } } }, "int64") }))
    h.raises("INVALID_ARGUMENT", "indices[1] = [2, 0] does not index into param shape [2,2]", run, "GatherNd",
      { p, T({ { 0, 0 }, { 2, 0 } }) })
    h.raises("INVALID_ARGUMENT", "innermost dimension length must be <= params rank", run, "GatherNd", { p, T({ { 0, 0, 0 } }) })
  end)

  it("Tile repeats along every dimension", function()
    assert.are.same({ { 1, 2, 1, 2 }, { 3, 4, 3, 4 }, { 1, 2, 1, 2 }, { 3, 4, 3, 4 } },
      vals("Tile", { T({ { 1, 2 }, { 3, 4 } }), T({ 2, 2 }) }))
    assert.are.same({ 1, 2, 3, 1, 2, 3, 1, 2, 3 }, vals("Tile", { T({ 1, 2, 3 }), T({ 3 }, "int64") }))
    assert.are.same({ 0, 4 }, run("Tile", { T({ { 1, 2 } }), T({ 0, 2 }) }).shape)
    h.raises("INVALID_ARGUMENT", "Expected multiples[0] >= 0", run, "Tile", { T({ 1 }), T({ -1 }) })
    h.raises("INVALID_ARGUMENT", "vector of length 1", run, "Tile", { T({ 1 }), T({ 1, 1 }) })
  end)

  it("Range counts from start toward limit by delta, in any direction and dtype", function()
    assert.are.same({ 0, 3, 6, 9 }, vals("Range", { T(0), T(10), T(3) }))
    assert.are.same({ 10, 7, 4, 1 }, vals("Range", { T(10), T(0), T(-3) }))
    assert.are.same({ -2, -1, 0 }, vals("Range", { T(-2, "int64"), T(1, "int64"), T(1, "int64") }))
    assert.are.same({ 0, 0.25, 0.5, 0.75 }, vals("Range", { T(0, "float32"), T(1, "float32"), T(0.25, "float32") }))
    assert.are.same({ 1, 0.5, 0, -0.5 }, vals("Range", { T(1, "float32"), T(-1, "float32"), T(-0.5, "float32") }))
    assert.are.same({ 0, 1.5, 3 }, vals("Range", { T(0, "float32"), T(3.5, "float32"), T(1.5, "float32") }))
    assert.are.same({ 0 }, run("Range", { T(5), T(5), T(1) }).shape)
    assert.are.same("int64", run("Range", { T(0, "int64"), T(3, "int64"), T(1, "int64") }).dtype)
    h.raises("INVALID_ARGUMENT", "Requires delta != 0", run, "Range", { T(0), T(10), T(0) })
    h.raises("INVALID_ARGUMENT", "Requires start <= limit when delta > 0: 5/1", run, "Range", { T(5), T(1), T(1) })
    h.raises("INVALID_ARGUMENT", "Requires start >= limit when delta < 0", run, "Range", { T(0), T(10), T(-1) })
    h.raises("INVALID_ARGUMENT", "input 1 is int64", run, "Range", { T(0), T(3, "int64"), T(1) })
  end)

  it("Split and SplitV cut along an axis into num_split outputs", function()
    local x = T({ { 1, 2, 3, 4 }, { 5, 6, 7, 8 } })
    local a, b = run("Split", { T(1), x }, { num_split = 2 }, 2)
    assert.are.same({ { 1, 2 }, { 5, 6 } }, a:totable())
    assert.are.same({ { 3, 4 }, { 7, 8 } }, b:totable())
    local r0, r1 = run("Split", { T(-2), x }, { num_split = 2 }, 2)
    assert.are.same({ { { 1, 2, 3, 4 } }, { { 5, 6, 7, 8 } } }, { r0:totable(), r1:totable() })
    h.raises("INVALID_ARGUMENT", "evenly divide the split dimension, but got split_dim 1 (size = 4) and num_split 3", run,
      "Split", { T(1), x }, { num_split = 3 }, 3)
    -- many outputs (a detection head splitting its boxes, keypoints unpacked one by one)
    local eight = { run("Split", { T(0), T({ 1, 2, 3, 4, 5, 6, 7, 8 }) }, { num_split = 8 }, 8) }
    for i = 1, 8 do assert.are.same({ i }, eight[i]:totable()) end
    local seq = {}
    for i = 1, 32 do seq[i] = { i, -i } end
    local rows = { run("Unpack", { T(seq) }, { num = 32 }, 32) }
    assert.are.equal(32, #rows)
    for i = 1, 32 do assert.are.same({ i, -i }, rows[i]:totable()) end
    local wide = {}
    for i = 1, 33 do wide[i] = i end
    h.raises("INVALID_ARGUMENT", "tfdev supports at most 32 outputs", run, "Split", { T(0), T(wide) }, { num_split = 33 }, 1)
    h.raises("INVALID_ARGUMENT", "attr 'num_split' must be an int from 1 to 32", run, "Split", { T(1), x }, {}, 1)

    local p, q = run("SplitV", { x, T({ 1, -1 }), T(1) }, { num_split = 2 }, 2)
    assert.are.same({ { 1 }, { 5 } }, p:totable())
    assert.are.same({ { 2, 3, 4 }, { 6, 7, 8 } }, q:totable())
    local e1, e2, e3 = run("SplitV", { x, T({ 3, 0, 1 }, "int64"), T(-1) }, { num_split = 3 }, 3)
    assert.are.same({ { { 1, 2, 3 }, { 5, 6, 7 } }, { 2, 0 }, { { 4 }, { 8 } } }, { e1:totable(), e2.shape, e3:totable() })
    h.raises("INVALID_ARGUMENT", "Determined shape must either match input shape along split_dim exactly", run, "SplitV",
      { x, T({ 1, 2 }), T(1) }, { num_split = 2 }, 2)
    h.raises("INVALID_ARGUMENT", "size_splits must be a vector of num_split = 2 sizes", run, "SplitV",
      { x, T({ 1, 2, 1 }), T(1) }, { num_split = 2 }, 2)
  end)

  it("ArgMax and ArgMin give the first index of the extreme", function()
    local x = T({ { 1, 5, 5 }, { 7, 7, 2 } }, "float32")
    local r = run("ArgMax", { x, T(1) })
    assert.are.equal("int64", r.dtype)
    assert.are.same({ 1, 0 }, r:totable())
    assert.are.same({ 1, 1, 0 }, vals("ArgMax", { x, T(0) }))
    assert.are.same({ 0, 2 }, vals("ArgMin", { x, T(-1) }))
    assert.are.same({ 0, 0, 1 }, vals("ArgMin", { x, T(0, "int64") }))
    local i32 = run("ArgMin", { T({ 3, 1, 1, 2 }, "int64"), T(0) }, { output_type = "int32" })
    assert.are.equal("int32", i32.dtype)
    assert.are.equal(1, i32:item())
    h.raises("INVALID_ARGUMENT", "out of range", run, "ArgMax", { x, T(2) })
    h.raises("INVALID_ARGUMENT", "Reduction axis 1 is empty", run, "ArgMax", { tfdev.tensor { shape = { 2, 0 }, dtype = "float32" }, T(1) })
    h.raises("INVALID_ARGUMENT", "output_type must be int32 or int64", run, "ArgMax", { x, T(1) }, { output_type = "float32" })
  end)

  it("Min and Prod reduce like Sum and Max, keep_dims included", function()
    local x = T({ { 1, -2, 3 }, { 4, 5, -6 } })
    assert.are.same({ -2, -6 }, vals("Min", { x, T(1) }))
    assert.are.same({ 1, -2, -6 }, vals("Min", { x, T(0) }))
    assert.are.equal(-6, run("Min", { x, T({ 0, 1 }) }):item())
    assert.are.same({ 4, -10, -18 }, vals("Prod", { x, T(0) }))
    assert.are.same({ { -6 }, { -120 } }, vals("Prod", { x, T(-1) }, { keep_dims = true }))
    assert.are.equal(720, run("Prod", { x, T({ 0, 1 }) }):item())
    local f = T({ { 0.5, 2 }, { 4, -1 } }, "float32")
    assert.are.same({ 2, -2 }, vals("Prod", { f, T(0) }))
    assert.are.same({ 1, -4 }, vals("Prod", { f, T(1) }))
    assert.are.same({ 0.5, -1 }, vals("Min", { f, T(1) }))
    local empty = tfdev.tensor { shape = { 2, 0 }, dtype = "float32" }
    assert.are.same({ 1, 1 }, vals("Prod", { empty, T(1) }))
    -- Max and Min of nothing are the reducers' identities, as in TensorFlow (Eigen's MaxReducer/MinReducer)
    assert.are.same({ math.huge, math.huge }, vals("Min", { empty, T(1) }))
    assert.are.same({ -math.huge, -math.huge }, vals("Max", { empty, T(1) }))
    assert.are.same({ -2147483648, -2147483648 }, vals("Max", { tfdev.tensor { shape = { 2, 0 }, dtype = "int32" }, T(1) }))
    assert.are.same({ 0 }, run("Max", { empty, T(0) }).shape)
    -- a long row: the sharded paths
    local n, v, lo, prod = 100003, {}, math.huge, 1
    for i = 1, n do
      v[i] = ((i * 7919) % 1000) / 100 - 3
      lo = math.min(lo, v[i])
    end
    local big = tfdev.tensor(v, "float64")
    assert.are.equal(lo, run("Min", { big, T(0) }):item())
    local w = {}
    for i = 1, 64 do
      w[i] = 1 + (i % 5) / 100
      prod = prod * w[i]
    end
    assert.is_true(math.abs(run("Prod", { tfdev.tensor(w, "float64"), T(0) }):item() - prod) < 1e-12)
  end)

  it("TopKV2 returns the k largest per row, ties lower index first", function()
    local v, i = run("TopKV2", { T({ 1, 3, 3, 2, 3 }, "float32"), T(3) }, {}, 2)
    assert.are.same({ 3, 3, 3 }, v:totable())
    assert.are.same({ 1, 2, 4 }, i:totable())
    assert.are.equal("int32", i.dtype)
    v, i = run("TopKV2", { T({ { 5, 1, 5, 9 }, { -1, -2, -1, -3 } }, "int64"), T(2) }, {}, 2)
    assert.are.same({ { 9, 5 }, { -1, -1 } }, v:totable())
    assert.are.same({ { 3, 0 }, { 0, 2 } }, i:totable())
    v, i = run("TopKV2", { T({ 4, 2 }), T(0) }, {}, 2)
    assert.are.same({ 0 }, v.shape)
    assert.are.same({ 0 }, i.shape)
    h.raises("INVALID_ARGUMENT", "input must have at least k columns. Had 2, needed 3", run, "TopKV2",
      { T({ 4, 2 }), T(3) }, {}, 2)
    h.raises("INVALID_ARGUMENT", "Need k >= 0, got -1", run, "TopKV2", { T({ 4, 2 }), T(-1) }, {}, 2)
  end)

  it("folded by the optimizer, the ops give the same values", function()
    local x = T({ { 1, 2, 3 }, { 4, 5, 6 } })
    assert.are.same({ { 6, 4 } }, run("StridedSlice", { x, T({ 1, 0 }), T({ 2, 0 }), T({ 1, -2 }) },
      { begin_mask = 2, end_mask = 2 }, nil, true):totable())
    assert.are.same({ { 3, 1 }, { 6, 4 } }, run("GatherV2", { x, T({ 2, 0 }), T(1) }, {}, nil, true):totable())
    local a, b = run("Split", { T(0), x }, { num_split = 2 }, 2, true)
    assert.are.same({ { { 1, 2, 3 } }, { { 4, 5, 6 } } }, { a:totable(), b:totable() })
  end)
end)

describe("shape ops on hostile sizes", function()
  after_each(function() tfdev.factory.reset() end)

  it("refuse results that overflow or cannot be allocated, naming the node", function()
    local big = math.tointeger(2 ^ 62)
    h.raises("INVALID_ARGUMENT", "node 'y' (Tile): the output's size along dimension 0 overflows", run, "Tile",
      { T({ 1, 2, 3 }), T({ big }, "int64") })
    h.raises("RESOURCE_EXHAUSTED", "node 'y' (Tile)", run, "Tile", { T({ 1, 2 }), T({ math.tointeger(2 ^ 40) }, "int64") })
    h.raises("INVALID_ARGUMENT", "Requires the range size to fit in int64", run, "Range",
      { T(math.mininteger, "int64"), T(math.maxinteger, "int64"), T(1, "int64") })
    h.raises("INVALID_ARGUMENT", "node 'y' (Range): shape is too large", run, "Range", { T(0, "int64"), T(big, "int64"), T(1, "int64") })
    h.raises("RESOURCE_EXHAUSTED", "node 'y' (Range)", run, "Range", { T(0), T(math.tointeger(2 ^ 31 - 1)), T(1) })
    h.raises("INVALID_ARGUMENT", "node 'y' (Range): Requires the range size to be finite", run, "Range",
      { T(0, "float32"), T(1e30, "float32"), T(1e-30, "float32") })
    h.raises("RESOURCE_EXHAUSTED", "node 'y' (Range)", run, "Range", { T(0, "float64"), T(1e15, "float64"), T(1, "float64") })
    -- huge begins, ends and strides clamp without overflow
    local v = T({ 0, 1, 2, 3 })
    assert.are.same({ 0, 1, 2, 3 }, run("StridedSlice", { v, T({ math.mininteger }, "int64"), T({ math.maxinteger }, "int64"),
      T({ 1 }, "int64") }):totable())
    assert.are.same({ 3 }, run("StridedSlice", { v, T({ math.maxinteger }, "int64"), T({ math.mininteger }, "int64"),
      T({ math.mininteger }, "int64") }):totable())
    assert.are.same({ 0 }, run("StridedSlice", { v, T({ 0 }, "int64"), T({ 4 }, "int64"), T({ math.maxinteger }, "int64") }):totable())
    h.raises("INVALID_ARGUMENT", "Expected begin[0] in [0, 4]", run, "Slice", { v, T({ math.maxinteger }, "int64"), T({ -1 }, "int64") })
    h.raises("INVALID_ARGUMENT", "size[0] in [0, 3]", run, "Slice", { v, T({ 1 }, "int64"), T({ math.maxinteger }, "int64") })
    h.raises("INVALID_ARGUMENT", "indices[0] = " .. math.mininteger, run, "GatherV2", { v, T({ math.mininteger }, "int64"), T(0) })
    h.raises("INVALID_ARGUMENT", "input must have at least k columns", run, "TopKV2", { v, T(math.maxinteger, "int64") }, {}, 2)
  end)
end)

describe("shape ops at graph build and eagerly", function()
  after_each(function() tfdev.factory.reset() end)

  local function create(nodes)
    local s <close> = tfdev.session {}
    s:create { node = nodes }
  end
  local function c(name, v, dt) return { name = name, op = "Const", attr = { value = T(v, dt) } } end

  it("inference checks constant inputs and names the node", function()
    h.raises("INVALID_ARGUMENT", "node 'g' (GatherV2): axis 2 is out of range [-2, 2)", create,
      { c("p", { { 1, 2 } }), c("i", { 0 }), c("a", 2), { name = "g", op = "GatherV2", input = { "p", "i", "a" } } })
    h.raises("INVALID_ARGUMENT", "node 'sq' (Squeeze): Can not squeeze dim[0]", create,
      { c("x", { 1, 2 }), { name = "sq", op = "Squeeze", input = { "x" }, attr = { squeeze_dims = { 0 } } } })
    h.raises("INVALID_ARGUMENT", "node 'u' (Unpack): num is 3 but dimension 0 has size 2", create,
      { c("x", { 1, 2 }), { name = "u", op = "Unpack", input = { "x" }, attr = { num = 3 } } })
    h.raises("INVALID_ARGUMENT", "node 's' (Split): Number of ways to split should evenly divide", create,
      { c("a", 0), c("x", { 1, 2, 3 }), { name = "s", op = "Split", input = { "a", "x" }, attr = { num_split = 2 } } })
    h.raises("INVALID_ARGUMENT", "node 't' (TopKV2): input must have at least k columns", create,
      { c("x", { 1, 2, 3 }), c("k", 4), { name = "t", op = "TopKV2", input = { "x", "k" } } })
    h.raises("INVALID_ARGUMENT", "node 'r' (Range): input 0 is int32 but input 2 is float32", create,
      { c("a", 0), c("b", 3), c("d", 1, "float32"), { name = "r", op = "Range", input = { "a", "b", "d" } } })
    h.raises("INVALID_ARGUMENT", "fetch 'y:2': node 'y' (Unpack) has 2 outputs", function()
      local s <close> = tfdev.session {}
      s:create { node = { c("x", { 1, 2 }), { name = "y", op = "Unpack", input = { "x" }, attr = { num = 2 } } } }
      s:run({}, "y:2")
    end)
  end)

  it("infers shapes downstream ops can use", function()
    local g = tfdev.graph()
    local x = g:const(T({ { 1, 2, 3 }, { 4, 5, 6 } }))
    local e = g:op("ExpandDims", { x, g:const(T(0)) }, { name = "e" })
    local gathered = g:op("GatherV2", { e, g:const(T({ 1, 1, 0 })), g:const(T(-1)) }, { name = "gv" })
    local packed = g:op("Pack", { gathered, gathered }, { axis = -1, name = "p" })
    local s <close> = tfdev.session { optimize_graph = false }
    s:create(g)
    local out = s:run({}, { "e", "gv", "p" })
    assert.are.same({ 1, 2, 3 }, out[1].shape)
    assert.are.same({ { { 2, 2, 1 }, { 5, 5, 4 } } }, out[2]:totable())
    assert.are.same({ 1, 2, 3, 2 }, out[3].shape)
  end)

  it("device:compute runs the multi-output ops eagerly", function()
    local d = tfdev.factory.add_devices()[1]
    local a, b = d:compute("Split", { T(0), T({ 1, 2, 3, 4 }) }, { num_split = 2 })
    assert.are.same({ { 1, 2 }, { 3, 4 } }, { a:totable(), b:totable() })
    local u1, u2, u3 = d:compute("Unpack", { T({ { 1, 2, 3 } }) }, { num = 3, axis = 1 })
    assert.are.same({ { 1 }, { 2 }, { 3 } }, { u1:totable(), u2:totable(), u3:totable() })
    local v, i = d:compute("TopKV2", { T({ 2, 9, 4 }, "float32"), T(2) })
    assert.are.same({ { 9, 4 }, { 1, 2 } }, { v:totable(), i:totable() })
  end)
end)

describe("StridedSlice with values known only at run time", function()
  after_each(function() tfdev.factory.reset() end)

  it("infers what it can from a partly known input, and the kernel checks the fed spec", function()
    local g = tfdev.graph()
    local x = g:placeholder("int32", { -1, 3 }, { name = "x" })
    local b = g:placeholder("int32", { -1 }, { name = "b" })
    g:op("StridedSlice", { x, g:const(T({ 0, 2 })), g:const(T({ 0, 0 })), g:const(T({ 1, -1 })) },
      { begin_mask = 1, end_mask = 3, name = "rev" })
    g:op("StridedSlice", { x, b, g:const(T({ 0, 0 })), g:const(T({ 1, 1 })) }, { end_mask = 3, name = "fed" })
    local s <close> = tfdev.session { optimize_graph = false }
    s:create(g)
    local X = T({ { 1, 2, 3 }, { 4, 5, 6 } })
    assert.are.same({ { 3, 2, 1 }, { 6, 5, 4 } }, s:run({ x = X }, "rev"):totable())
    assert.are.same({ { 5, 6 } }, s:run({ x = X, b = T({ 1, 1 }) }, "fed"):totable())
    assert.are.same({ 0, 0 }, s:run({ x = X, b = T({ 5, 7 }) }, "fed").shape)
    h.raises("INVALID_ARGUMENT", "node 'fed' (StridedSlice): Expected begin, end, and strides to be 1D equal size", s.run, s,
      { x = X, b = T({ 1 }) }, "fed")
  end)
end)

describe("shape ops keep integers exact", function()
  after_each(function() tfdev.factory.reset() end)

  it("compares and multiplies int64 and int32 without going through doubles", function()
    local p53 = math.tointeger(2 ^ 53)
    local x = T({ p53, p53 + 1, p53 }, "int64")
    assert.are.equal(1, run("ArgMax", { x, T(0) }):item())
    assert.are.equal(0, run("ArgMin", { x, T(0) }):item())
    local v, i = run("TopKV2", { x, T(2) }, {}, 2)
    assert.are.same({ p53 + 1, p53 }, v:totable())
    assert.are.same({ 1, 0 }, i:totable())
    assert.are.equal(p53, run("Min", { x, T(0) }):item())
    -- int32 products wrap modulo 2^32, as TensorFlow's do
    assert.are.equal(0, run("Prod", { T({ 65536, 65536 }), T(0) }):item())
    assert.are.equal(-2, run("Prod", { T({ 2147483647, 2 }), T(0) }):item())
    assert.are.same({ math.maxinteger - 2, math.maxinteger - 1 },
      vals("Range", { T(math.maxinteger - 2, "int64"), T(math.maxinteger, "int64"), T(1, "int64") }))
    assert.are.same({ math.mininteger + 5, math.mininteger + 2 },
      vals("Range", { T(math.mininteger + 5, "int64"), T(math.mininteger, "int64"), T(-3, "int64") }))
  end)
end)

describe("Min and Prod over non-adjacent axes", function()
  after_each(function() tfdev.factory.reset() end)

  it("agree with a Lua reference on every axis set of a [2,3,2] tensor", function()
    local x, flat = {}, {}
    for a = 1, 2 do
      x[a] = {}
      for b = 1, 3 do
        x[a][b] = {}
        for c = 1, 2 do
          local v = ((a * 7 + b * 5 + c * 3) % 9) - 4
          x[a][b][c] = v
          flat[#flat + 1] = { a, b, c, v }
        end
      end
    end
    local dims = { 2, 3, 2 }
    for _, axes in ipairs { { 0 }, { 1 }, { 2 }, { 0, 2 }, { 0, 1 }, { 1, 2 }, { 0, 1, 2 }, { -1, 0 } } do
      local red = { false, false, false }
      for _, a in ipairs(axes) do red[(a % 3) + 1] = true end
      for _, op in ipairs { "Min", "Prod" } do
        local want = {}
        for _, e in ipairs(flat) do
          local key = {}
          for d = 1, 3 do key[d] = red[d] and 1 or e[d] end
          local k = (key[1] - 1) * 6 + (key[2] - 1) * 2 + key[3]
          if want[k] == nil then want[k] = e[4]
          elseif op == "Min" then want[k] = math.min(want[k], e[4])
          else want[k] = want[k] * e[4] end
        end
        -- keep_dims: the result keeps the [2,3,2] layout with 1s; flatten it in order
        local got = run(op, { T(x), T(axes) }, { keep_dims = true })
        local shape = {}
        for d = 1, 3 do shape[d] = red[d] and 1 or dims[d] end
        assert.are.same(shape, got.shape)
        local t, i = got:totable(), 0
        for a = 1, shape[1] do
          for b = 1, shape[2] do
            for c = 1, shape[3] do
              i = i + 1
              assert.are.equal(want[(a - 1) * 6 + (b - 1) * 2 + c], t[a][b][c],
                op .. " over {" .. table.concat(axes, ",") .. "} at " .. i)
            end
          end
        end
      end
    end
  end)
end)

describe("Size", function()
  it("counts elements as a scalar of out_type (int32 by default), empty tensors and scalars included", function()
    local y = run("Size", { tfdev.tensor({ { 1, 2, 3 }, { 4, 5, 6 } }, "float32") })
    assert.are.equal("int32", y.dtype)
    assert.are.same({}, y.shape)
    assert.are.equal(6, y:item())
    local z = run("Size", { tfdev.from_bytes("float32", { 4, 0, 3 }, "") }, { out_type = "int64" })
    assert.are.equal("int64", z.dtype)
    assert.are.equal(0, z:item())
    assert.are.equal(1, run("Size", { T(5) }):item())
    assert.are.equal(1, run("Size", { T(5) }, nil, 1, true):item()) -- folded to a constant too
  end)

  it("refuses an out_type that is not an integer index type", function()
    h.raises("INVALID_ARGUMENT", "out_type must be int32 or int64, got float32", run, "Size", { T({ 1 }) },
      { out_type = "float32" })
  end)
end)

describe("BroadcastTo", function()
  it("repeats along size-1 and missing leading dimensions, any dtype", function()
    assert.are.same({ { 1, 2, 3 }, { 1, 2, 3 } }, vals("BroadcastTo", { T({ 1, 2, 3 }), T({ 2, 3 }) }))
    assert.are.same({ { 1, 1 }, { 2, 2 } }, vals("BroadcastTo", { T({ { 1 }, { 2 } }), T({ 2, 2 }) }))
    assert.are.same({ { { 5, 5 } } }, vals("BroadcastTo", { T(5), T({ 1, 1, 2 }) }))
    assert.are.same({ { true, false }, { true, false } },
      vals("BroadcastTo", { tfdev.tensor({ true, false }, "bool"), T({ 2, 2 }) }))
    local f = vals("BroadcastTo", { tfdev.tensor({ { 0.5 }, { -1 } }, "float64"), tfdev.tensor({ 3, 2, 2 }, "int64") })
    assert.are.same({ { { 0.5, 0.5 }, { -1, -1 } }, { { 0.5, 0.5 }, { -1, -1 } }, { { 0.5, 0.5 }, { -1, -1 } } }, f)
    assert.are.same({ 0, 3 }, run("BroadcastTo", { T({ 1, 2, 3 }), T({ 0, 3 }) }).shape)
    assert.are.same({ { 7, 8 }, { 7, 8 } }, vals("BroadcastTo", { T({ 7, 8 }), T({ 2, 2 }) }, nil)) -- same again
    assert.are.same({ { 9, 9 } }, run("BroadcastTo", { T({ 9 }), T({ 1, 2 }) }, nil, nil, true):totable()) -- folded
  end)

  it("refuses shapes it cannot broadcast to, with TensorFlow's texts", function()
    h.raises("INVALID_ARGUMENT", "Unable to broadcast tensor of shape [2,3] to tensor of shape [3,3]", run,
      "BroadcastTo", { T({ { 1, 2, 3 }, { 4, 5, 6 } }), T({ 3, 3 }) })
    h.raises("INVALID_ARGUMENT", "Rank of input (2) must be no greater than rank of output shape (1).", run,
      "BroadcastTo", { T({ { 1, 2 } }), T({ 2 }) })
    h.raises("INVALID_ARGUMENT", "is negative", run, "BroadcastTo", { T({ 1 }), T({ -2 }) })
  end)
end)

-- TensorFlow's definition, element by element: out[n][h*b+i][w*b+j][c] = in[n][h][w][(i*b+j)*C'+c].
describe("DepthToSpace and SpaceToDepth", function()
  local function iota(dims, dt)
    local n = 1
    for _, d in ipairs(dims) do n = n * d end
    local v = {}
    for i = 1, n do v[i] = i end
    return tfdev.tensor { dtype = dt or "float32", shape = dims, data = v }
  end
  local function d2s_ref(x, b)
    local N, H, W, C = #x, #x[1], #x[1][1], #x[1][1][1]
    local Co, out = C // (b * b), {}
    for n = 1, N do
      out[n] = {}
      for h = 0, H * b - 1 do
        out[n][h + 1] = {}
        for w = 0, W * b - 1 do
          local px = {}
          local block = (h % b) * b + (w % b)
          for c = 1, Co do px[c] = x[n][h // b + 1][w // b + 1][block * Co + c] end
          out[n][h + 1][w + 1] = px
        end
      end
    end
    return out
  end

  it("DepthToSpace matches TensorFlow's definition; SpaceToDepth undoes it", function()
    for _, case in ipairs { { { 1, 2, 2, 8 }, 2 }, { { 2, 1, 3, 9 }, 3 }, { { 1, 2, 1, 12 }, 2 } } do
      local x = iota(case[1])
      local y = run("DepthToSpace", { x }, { block_size = case[2] })
      assert.are.same(d2s_ref(x:totable(), case[2]), y:totable())
      assert.are.same(x:totable(), run("SpaceToDepth", { y }, { block_size = case[2] }):totable())
    end
    local i = iota({ 1, 1, 1, 4 }, "int32")
    assert.are.same({ { { { 1 }, { 2 } }, { { 3 }, { 4 } } } }, run("DepthToSpace", { i }, { block_size = 2 }):totable())
    assert.are.same({ 0, 4, 6, 1 }, run("DepthToSpace", { tfdev.from_bytes("float32", { 0, 2, 3, 4 }, "") },
      { block_size = 2 }).shape)
  end)

  it("refuses what TensorFlow refuses, with its texts", function()
    h.raises("INVALID_ARGUMENT", "Input depth dimension 6 should be divisible by: 4", run, "DepthToSpace",
      { iota({ 1, 1, 1, 6 }) }, { block_size = 2 })
    h.raises("INVALID_ARGUMENT", "Image width 3 and height 2 should be divisible by block_size: 2", run, "SpaceToDepth",
      { iota({ 1, 2, 3, 1 }) }, { block_size = 2 })
    h.raises("INVALID_ARGUMENT", "input rank should be: 4 instead of: 3", run, "SpaceToDepth",
      { iota({ 2, 2, 1 }) }, { block_size = 2 })
    h.raises("INVALID_ARGUMENT", "must be at least minimum 2", run, "DepthToSpace", { iota({ 1, 1, 1, 4 }) },
      { block_size = 1 })
    h.raises("INVALID_ARGUMENT", "Only NHWC data_format supported on CPU. Got NCHW", run, "DepthToSpace",
      { iota({ 1, 4, 1, 1 }) }, { block_size = 2, data_format = "NCHW" })
  end)
end)

-- TensorFlow's documented examples (array_ops.cc), then round trips and edge shapes.
describe("SpaceToBatchND and BatchToSpaceND", function()
  local function i32(v) return tfdev.tensor(v, "int32") end
  local function s2b(x, block, pads) return run("SpaceToBatchND", { x, i32(block), i32(pads) }) end
  local function b2s(x, block, crops) return run("BatchToSpaceND", { x, i32(block), i32(crops) }) end
  local function iota(dims)
    local n = 1
    for _, d in ipairs(dims) do n = n * d end
    local v = {}
    for i = 1, n do v[i] = i end
    return tfdev.tensor { dtype = "float32", shape = dims, data = v }
  end

  it("moves blocks into the batch as TensorFlow's examples show, and back", function()
    local cases = {
      { { { { { 1 }, { 2 } }, { { 3 }, { 4 } } } }, { 0, 0, 0, 0 },
        { { { { 1 } } }, { { { 2 } } }, { { { 3 } } }, { { { 4 } } } } },
      { { { { { 1, 2, 3 }, { 4, 5, 6 } }, { { 7, 8, 9 }, { 10, 11, 12 } } } }, { 0, 0, 0, 0 },
        { { { { 1, 2, 3 } } }, { { { 4, 5, 6 } } }, { { { 7, 8, 9 } } }, { { { 10, 11, 12 } } } } },
      { iota({ 1, 4, 4, 1 }):totable(), { 0, 0, 0, 0 },
        { { { { 1 }, { 3 } }, { { 9 }, { 11 } } }, { { { 2 }, { 4 } }, { { 10 }, { 12 } } },
          { { { 5 }, { 7 } }, { { 13 }, { 15 } } }, { { { 6 }, { 8 } }, { { 14 }, { 16 } } } } },
      { iota({ 2, 2, 4, 1 }):totable(), { 0, 0, 2, 0 },
        { { { { 0 }, { 1 }, { 3 } } }, { { { 0 }, { 9 }, { 11 } } }, { { { 0 }, { 2 }, { 4 } } },
          { { { 0 }, { 10 }, { 12 } } }, { { { 0 }, { 5 }, { 7 } } }, { { { 0 }, { 13 }, { 15 } } },
          { { { 0 }, { 6 }, { 8 } } }, { { { 0 }, { 14 }, { 16 } } } } },
    }
    for _, case in ipairs(cases) do
      local x = tfdev.tensor(case[1], "float32")
      local pads = { { case[2][1], case[2][2] }, { case[2][3], case[2][4] } }
      local y = s2b(x, { 2, 2 }, pads)
      assert.are.same(case[3], y:totable())
      assert.are.same(case[1], b2s(y, { 2, 2 }, pads):totable())
    end
  end)

  it("handles one block dimension, trailing dimensions, integers, 1-blocks and empty inputs", function()
    local x = tfdev.tensor({ { { 1, 2 }, { 3, 4 }, { 5, 6 } } }, "int32") -- [1, 3, 2]
    local y = s2b(x, { 2 }, { { 1, 0 } })                                  -- padded to 4 along dim 1
    assert.are.same({ { { 0, 0 }, { 3, 4 } }, { { 1, 2 }, { 5, 6 } } }, y:totable())
    assert.are.same(x:totable(), b2s(y, { 2 }, { { 1, 0 } }):totable())
    local z = iota({ 2, 3, 4, 5 })
    assert.are.same(z:totable(), s2b(z, { 1, 1 }, { { 0, 0 }, { 0, 0 } }):totable())
    assert.are.same(z:totable(), run("SpaceToBatchND", { z, i32({}), tfdev.tensor { dtype = "int32", shape = { 0, 2 } } })
      :totable())
    local w = s2b(z, { 3, 2 }, { { 0, 0 }, { 1, 1 } })
    assert.are.same({ 12, 1, 3, 5 }, w.shape)
    assert.are.same(z:totable(), b2s(w, { 3, 2 }, { { 0, 0 }, { 1, 1 } }):totable())
    local i64 = run("SpaceToBatchND", { z, tfdev.tensor({ 3, 2 }, "int64"), tfdev.tensor({ { 0, 0 }, { 1, 1 } }, "int64") })
    assert.are.same(w:totable(), i64:totable())
    assert.are.same({ 0, 1, 2, 1 }, s2b(tfdev.from_bytes("float32", { 0, 2, 4, 1 }, ""), { 2, 2 }, { { 0, 0 }, { 0, 0 } })
      .shape)
    -- An empty input padded to a non-empty output is all padding: zeros, never what the memory held.
    for _ = 1, 3 do
      local big = s2b(tfdev.from_bytes("float32", { 1, 0, 1, 1 }, ""), { 2, 1 }, { { 1, 1 }, { 0, 0 } })
      assert.are.same({ { { { 0 } } }, { { { 0 } } } }, big:totable())
      iota({ 64, 64 }) -- reuse the freed memory with non-zero values
    end
    assert.are.same({ 0, 4, 2, 1 }, b2s(tfdev.from_bytes("float32", { 0, 2, 1, 1 }, ""), { 2, 2 }, { { 0, 0 }, { 0, 0 } })
      .shape)
  end)

  it("refuses what TensorFlow refuses, with its texts", function()
    local x = iota({ 1, 2, 2, 1 })
    h.raises("INVALID_ARGUMENT", "block_shape rank should be 1 instead of 2", s2b, x, { { 2, 2 } }, { { 0, 0 }, { 0, 0 } })
    h.raises("INVALID_ARGUMENT", "input rank should be >= 5 instead of 4", s2b, x, { 1, 1, 1, 1 }, { { 0, 0 }, { 0, 0 } })
    h.raises("INVALID_ARGUMENT", "paddings should have shape [2, 2] instead of [1,2]", s2b, x, { 2, 2 }, { { 0, 0 } })
    h.raises("INVALID_ARGUMENT", "crops should have shape [2, 2] instead of [2]", b2s, x, { 2, 2 }, { 0, 0 })
    h.raises("INVALID_ARGUMENT", "All values in block_shape must be positive, got value, 0 at index 1.", s2b, x, { 2, 0 },
      { { 0, 0 }, { 0, 0 } })
    h.raises("INVALID_ARGUMENT", "Product of block sizes must be positive, got -4", b2s, x, { 2, -2 }, { { 0, 0 }, { 0, 0 } })
    h.raises("INVALID_ARGUMENT", "Paddings must be non-negative", s2b, x, { 2, 2 }, { { 0, 0 }, { -2, 0 } })
    h.raises("INVALID_ARGUMENT", "padded_shape[1]=3 is not divisible by block_shape[1]=2", s2b, x, { 2, 2 },
      { { 0, 0 }, { 1, 0 } })
    h.raises("INVALID_ARGUMENT", "Input batch dimension (1) is not divisible by product of block sizes (4)", b2s, x,
      { 2, 2 }, { { 0, 0 }, { 0, 0 } })
    local y = iota({ 4, 1, 1, 1 })
    h.raises("INVALID_ARGUMENT", "Crops must be non-negative", b2s, y, { 2, 2 }, { { 0, -1 }, { 0, 0 } })
    h.raises("INVALID_ARGUMENT", "cropped_shape[0]=-1 must be non-negative", b2s, y, { 2, 2 }, { { 2, 1 }, { 0, 0 } })
    h.raises("INVALID_ARGUMENT", "block_shape (input 1) must be int32 or int64, got float32", run, "SpaceToBatchND",
      { x, tfdev.tensor({ 2, 2 }, "float32"), i32({ { 0, 0 }, { 0, 0 } }) })
  end)
end)

describe("SparseToDense", function()
  local function s2d(ix, shape, vals, default, attrs, dt)
    dt = dt or "float32"
    return run("SparseToDense", { T(ix), T(shape), tfdev.tensor(vals, dt), tfdev.tensor(default, dt) }, attrs)
  end

  it("scatters values over the default, from matrix, vector and scalar indices", function()
    assert.are.same({ { 0, 5, 0 }, { 0, 0, 6 } }, s2d({ { 0, 1 }, { 1, 2 } }, { 2, 3 }, { 5, 6 }, 0):totable())
    assert.are.same({ 7, -1, -1, 7, -1 }, s2d({ 0, 3 }, { 5 }, 7, -1):totable())
    assert.are.same({ 0, 0, 9, 0 }, s2d(2, { 4 }, 9, 0, nil, "int32"):totable())
    assert.are.same({ false, true, false }, s2d({ 1 }, { 3 }, { true }, false, nil, "bool"):totable())
    local i64 = run("SparseToDense", { tfdev.tensor({ { 0, 1 } }, "int64"), tfdev.tensor({ 1, 2 }, "int64"),
      tfdev.tensor({ 3 }, "float64"), tfdev.tensor(1.5, "float64") })
    assert.are.same({ { 1.5, 3 } }, i64:totable())
    local empty = run("SparseToDense", { tfdev.tensor { dtype = "int32", shape = { 0, 2 } }, T({ 2, 2 }),
      tfdev.tensor { dtype = "float32", shape = { 0 } }, tfdev.tensor(4, "float32") })
    assert.are.same({ { 4, 4 }, { 4, 4 } }, empty:totable())
    assert.are.same({ 0, 3 }, run("SparseToDense", { tfdev.tensor { dtype = "int32", shape = { 0, 2 } }, T({ 0, 3 }),
      tfdev.tensor(1, "float32"), tfdev.tensor(0, "float32") }).shape)
    -- without validation a later repeat wins, in any order
    assert.are.same({ 2, 0, 1 }, s2d({ 2, 0, 0 }, { 3 }, { 1, 3, 2 }, 0, { validate_indices = false }):totable())
  end)

  it("refuses what TensorFlow refuses, with its texts", function()
    h.raises("INVALID_ARGUMENT", "indices[1] = [1,3] is out of bounds: need 0 <= index < [2,3]", s2d,
      { { 0, 1 }, { 1, 3 } }, { 2, 3 }, { 5, 6 }, 0)
    h.raises("INVALID_ARGUMENT", "indices[1] = [0,0] is out of order. Many sparse ops require sorted indices.", s2d,
      { { 0, 1 }, { 0, 0 } }, { 2, 3 }, { 5, 6 }, 0)
    h.raises("INVALID_ARGUMENT", "indices[1] = [0,1] is repeated", s2d, { { 0, 1 }, { 0, 1 } }, { 2, 3 }, { 5, 6 }, 0)
    h.raises("INVALID_ARGUMENT", "indices[0] = [-1] is out of bounds: need 0 <= index < [3]", s2d, { -1 }, { 3 }, 1, 0)
    h.raises("INVALID_ARGUMENT", "Indices are not valid (out of bounds).  Shape: [2,3]", s2d, { { 0, 1 }, { 2, 0 } },
      { 2, 3 }, { 5, 6 }, 0, { validate_indices = false })
    h.raises("INVALID_ARGUMENT", "sparse_values has incorrect shape [3], should be [] or [2]", s2d,
      { { 0, 1 }, { 1, 2 } }, { 2, 3 }, { 5, 6, 7 }, 0)
    h.raises("INVALID_ARGUMENT", "output_shape has incorrect number of elements: 3 should be: 2", s2d,
      { { 0, 1 }, { 1, 2 } }, { 2, 3, 4 }, { 5, 6 }, 0)
    h.raises("INVALID_ARGUMENT", "default_value should be a scalar.", s2d, { 0 }, { 2 }, 1, { 0 })
    h.raises("INVALID_ARGUMENT", "sparse_indices should be a scalar, vector, or matrix, got shape [1,1,1]", s2d,
      { { { 0 } } }, { 2 }, 1, 0)
    h.raises("INVALID_ARGUMENT", "size -2 is negative", s2d, { 0 }, { -2 }, 1, 0)
    h.raises("INVALID_ARGUMENT", "input 2 is float32 but input 3 is int32", run, "SparseToDense",
      { T({ 0 }), T({ 2 }), tfdev.tensor({ 1 }, "float32"), T(0) })
  end)
end)

-- TensorFlow 1's forms, which older frozen graphs and TensorFlow.js models still hold.
describe("Concat and Gather (TensorFlow 1's forms)", function()
  it("Concat takes its axis first; Gather is GatherV2 along axis 0", function()
    local a, b = tfdev.tensor({ { 1, 2 } }, "float32"), tfdev.tensor({ { 3, 4 } }, "float32")
    assert.are.same({ { 1, 2 }, { 3, 4 } }, vals("Concat", { T(0), a, b }))
    assert.are.same({ { 1, 2, 3, 4 } }, vals("Concat", { T(-1), a, b }))
    assert.are.same({ { { 5, 6 }, { 1, 2 } } }, vals("Gather", { T({ { 1, 2 }, { 5, 6 }, { 3, 4 } }), T({ { 1, 0 } }) }))
    assert.are.same({ 0, 2 }, run("Gather", { T({ { 1, 2 } }), tfdev.tensor { dtype = "int64", shape = { 0 } } }).shape)
    h.raises("INVALID_ARGUMENT", "axis 2 is out of range for rank 2", run, "Concat", { T(2), a, b })
    h.raises("INVALID_ARGUMENT", "indices[1] = 3 is not in [0, 3)", run, "Gather", { T({ 1, 2, 3 }), T({ 0, 3 }) })
    h.raises("INVALID_ARGUMENT", "params must be at least 1 dimensional", run, "Gather", { T(1), T({ 0 }) })
  end)
end)
