-- Sparse and ragged ops (SparseSegmentSum/Mean/SqrtN and their WithNumSegments forms, SparseFillEmptyRows,
-- SparseReshape, RaggedRange, RaggedGather, RaggedTensorToTensor) against TensorFlow's documented examples and
-- its kernel tests, with int32 and int64 index types, empty inputs and TensorFlow's error texts. TensorFlow.js
-- cannot run most of these (no int64, or it rejects the graph), so the conformance suite covers only
-- SparseSegmentSum and SparseSegmentMean; this spec is where the others are checked.
local tfdev = require "tfdev"
local h = require "spec.support.helpers"
local core = require "tfdev.core"

local function T(v, dt) return tfdev.tensor(v, dt or "int32") end
local function L(v) return tfdev.tensor(v, "int64") end
local function F(v) return tfdev.tensor(v, "float32") end
local function empty(shape, dt) return tfdev.tensor { shape = shape, dtype = dt or "float32" } end

-- Runs op on inputs fed to Placeholders of unknown shape, so that the kernel, not shape inference, sees them;
-- returns its first `nout` outputs (one when nout is nil).
local function run(op, inputs, attrs, nout)
  local g, names, feeds = { node = {} }, {}, {}
  for i, t in ipairs(inputs) do
    names[i] = "in" .. i
    feeds[names[i]] = t
    g.node[i] = { name = names[i], op = "Placeholder", attr = { dtype = t.dtype } }
  end
  g.node[#g.node + 1] = { name = "y", op = op, input = names, attr = attrs or {} }
  local fetches = { "y" }
  for i = 1, nout or 0 do fetches[i] = "y:" .. (i - 1) end
  local s <close> = tfdev.session { optimize_graph = false }
  s:create(g)
  return table.unpack(s:run(feeds, fetches))
end

local function vals(op, inputs, attrs) return run(op, inputs, attrs):totable() end

local function near(want, got, tol)
  assert.are.equal(#want, #got)
  for i = 1, #want do
    if type(want[i]) == "table" then near(want[i], got[i], tol)
    else assert(math.abs(want[i] - got[i]) <= (tol or 1e-6), ("%s ~= %s at %d"):format(want[i], got[i], i)) end
  end
end

describe("SparseSegmentSum, SparseSegmentMean, SparseSegmentSqrtN", function()
  after_each(function() tfdev.factory.reset() end)
  -- tf.sparse.segment_sum's documented example
  local c = { { 1, 2, 3, 4 }, { -1, -2, -3, -4 }, { 5, 6, 7, 8 } }

  it("reduce the rows indices pick, by sorted segment id (TensorFlow's documented examples)", function()
    assert.are.same({ { 0, 0, 0, 0 } }, vals("SparseSegmentSum", { F(c), T({ 0, 1 }), T({ 0, 0 }) }))
    assert.are.same({ { 1, 2, 3, 4 }, { -1, -2, -3, -4 } }, vals("SparseSegmentSum", { F(c), T({ 0, 1 }), T({ 0, 1 }) }))
    assert.are.same({ { 6, 8, 10, 12 } }, vals("SparseSegmentSum", { F(c), T({ 0, 2 }), T({ 0, 0 }) }))
    assert.are.same({ { 3, 4, 5, 6 } }, vals("SparseSegmentMean", { F(c), T({ 0, 2 }), T({ 0, 0 }) }))
    near({ { 6 / math.sqrt(2), 8 / math.sqrt(2), 10 / math.sqrt(2), 12 / math.sqrt(2) } },
      vals("SparseSegmentSqrtN", { F(c), T({ 0, 2 }), T({ 0, 0 }) }), 1e-5)
    -- a gap: segment 1 is named by no id, so its row is 0; ids repeat indices freely
    assert.are.same({ { 5, 6, 7, 8 }, { 0, 0, 0, 0 }, { 2, 4, 6, 8 } },
      vals("SparseSegmentSum", { F(c), T({ 2, 0, 0 }), T({ 0, 2, 2 }) }))
    assert.are.same({ { 5, 6, 7, 8 }, { 0, 0, 0, 0 }, { 1, 2, 3, 4 } },
      vals("SparseSegmentMean", { F(c), T({ 2, 0, 0 }), T({ 0, 2, 2 }) }))
  end)

  it("take int32 and int64 indices and segment ids, every dtype TensorFlow registers", function()
    local want = { { 6, 8, 10, 12 }, { -1, -2, -3, -4 } }
    for _, ix in ipairs { T, L } do
      for _, seg in ipairs { T, L } do
        assert.are.same(want, vals("SparseSegmentSum", { F(c), ix({ 0, 2, 1 }), seg({ 0, 0, 1 }) }))
      end
    end
    for _, dt in ipairs { "float64", "int32", "int64", "uint8" } do
      local y = run("SparseSegmentSum", { tfdev.tensor({ { 1, 2 }, { 3, 4 } }, dt), T({ 0, 1, 1 }), L({ 0, 0, 3 }) })
      assert.are.equal(dt, y.dtype)
      assert.are.same({ { 4, 6 }, { 0, 0 }, { 0, 0 }, { 3, 4 } }, y:totable())
    end
    local m = run("SparseSegmentMean", { tfdev.tensor({ { 1, 2 }, { 3, 5 } }, "float64"), T({ 0, 1 }), T({ 0, 0 }) })
    assert.are.same({ "float64", { { 2, 3.5 } } }, { m.dtype, m:totable() })
    -- int32 sums wrap as TensorFlow's do
    assert.are.same({ -2147483648 }, vals("SparseSegmentSum", { T({ 2147483647, 1 }), T({ 0, 1 }), T({ 0, 0 }) }))
    h.raises("INVALID_ARGUMENT", "T=int32 is not allowed", run, "SparseSegmentMean", { T({ 1 }), T({ 0 }), T({ 0 }) })
    h.raises("INVALID_ARGUMENT", "T=bool is not allowed", run, "SparseSegmentSum",
      { tfdev.tensor({ true }, "bool"), T({ 0 }), T({ 0 }) })
  end)

  it("Mean and SqrtN scale as TensorFlow does, below and from 10 rows", function()
    local rows, ix, seg = {}, {}, {}
    for i = 1, 12 do rows[i] = { i } ix[i] = i - 1 seg[i] = 0 end
    near({ { 6.5 } }, vals("SparseSegmentMean", { F(rows), T(ix), T(seg) }), 1e-6)
    near({ { 78 / math.sqrt(12) } }, vals("SparseSegmentSqrtN", { F(rows), T(ix), T(seg) }), 1e-5)
    near({ { 2 } }, vals("SparseSegmentMean", { F({ { 1 }, { 2 }, { 3 } }), T({ 0, 1, 2 }), T({ 0, 0, 0 }) }))
  end)

  it("keep data's trailing dimensions; empty inputs give empty or zero outputs", function()
    local d = F({ { { 1, 2 }, { 3, 4 } }, { { 5, 6 }, { 7, 8 } } })
    assert.are.same({ { { 6, 8 }, { 10, 12 } } }, vals("SparseSegmentSum", { d, T({ 0, 1 }), T({ 0, 0 }) }))
    assert.are.same({ 0, 2, 2 }, run("SparseSegmentSum", { d, empty({ 0 }, "int32"), empty({ 0 }, "int32") }).shape)
    assert.are.same({ 2, 0 }, run("SparseSegmentMean", { empty({ 3, 0 }), T({ 0, 2 }), T({ 0, 1 }) }).shape)
    assert.are.same({ { 0, 0 }, { 0, 0 } }, vals("SparseSegmentSumWithNumSegments",
      { F({ { 1, 2 } }), empty({ 0 }, "int32"), empty({ 0 }, "int32"), T(2) }))
  end)

  it("WithNumSegments: num_segments rows (TensorFlow's documented example), its value the static shape", function()
    assert.are.same({ { 1, 2, 3, 4 }, { 0, 0, 0, 0 }, { -1, -2, -3, -4 }, { 0, 0, 0, 0 } },
      vals("SparseSegmentSumWithNumSegments", { F(c), T({ 0, 1 }), T({ 0, 2 }), T(4) }))
    assert.are.same({ { 3, 4, 5, 6 }, { 0, 0, 0, 0 } },
      vals("SparseSegmentMeanWithNumSegments", { F(c), L({ 0, 2 }), L({ 0, 0 }), L(2) }))
    near({ { 0, 0, 0, 0 }, { 6 / math.sqrt(2), 8 / math.sqrt(2), 10 / math.sqrt(2), 12 / math.sqrt(2) } },
      vals("SparseSegmentSqrtNWithNumSegments", { F(c), T({ 0, 2 }), T({ 1, 1 }), T(2) }), 1e-5)
    local _, shapes = core.op_infer("SparseSegmentSumWithNumSegments", {}, { "float32", "int32", "int64", "int32" },
      { { 3, 4 }, { 1 }, { 1 }, {} }, { nil, nil, nil, T(5) }, "s")
    assert.are.same({ { 5, 4 } }, shapes)
    _, shapes = core.op_infer("SparseSegmentMean", {}, { "float32", "int32", "int32" }, { { 3, 4 }, { 1 }, { 1 } }, nil, "m")
    assert.are.same({ { -1, 4 } }, shapes)
  end)

  it("refuse what TensorFlow refuses, with its texts", function()
    local d = F(c)
    h.raises("INVALID_ARGUMENT", "segment ids are not increasing", run, "SparseSegmentSum", { d, T({ 0, 1 }), T({ 1, 0 }) })
    h.raises("INVALID_ARGUMENT",
      "Segment id -1 out of range [0, 2), possibly because 'segment_ids' input is not sorted.", run,
      "SparseSegmentSum", { d, T({ 0, 1 }), T({ -1, 1 }) })
    h.raises("INVALID_ARGUMENT", "segment ids must be >= 0", run, "SparseSegmentSum", { d, T({ 0, 1 }), T({ -1, -1 }) })
    h.raises("INVALID_ARGUMENT", "Bad: indices[1] == 3 out of range [0, 3)", run, "SparseSegmentMean",
      { d, T({ 0, 3 }), T({ 0, 0 }) })
    h.raises("INVALID_ARGUMENT", "Bad: indices[2] == -1 out of range [0, 3)", run, "SparseSegmentSqrtN",
      { d, L({ 0, 1, -1 }), T({ 0, 1, 1 }) })
    h.raises("INVALID_ARGUMENT", "segment_ids and indices should have same size.", run, "SparseSegmentSum",
      { d, T({ 0, 1 }), T({ 0 }) })
    h.raises("INVALID_ARGUMENT", "indices should be a vector.", run, "SparseSegmentSum", { d, T({ { 0 } }), T({ 0 }) })
    h.raises("INVALID_ARGUMENT", "segment_ids should be a vector.", run, "SparseSegmentSum", { d, T({ 0 }), T(0) })
    h.raises("INVALID_ARGUMENT", "data must be at least rank 1", run, "SparseSegmentSum", { F(1), T({ 0 }), T({ 0 }) })
    h.raises("INVALID_ARGUMENT", "segment ids must be < num_segments", run, "SparseSegmentSumWithNumSegments",
      { d, T({ 0, 1 }), T({ 0, 2 }), T(2) })
    h.raises("INVALID_ARGUMENT", "segment ids must be >= 0", run, "SparseSegmentSumWithNumSegments",
      { d, T({ 0 }), T({ 0 }), T(-1) })
    h.raises("INVALID_ARGUMENT", "num_segments should be a scalar, not shape [1]", run,
      "SparseSegmentMeanWithNumSegments", { d, T({ 0 }), T({ 0 }), T({ 3 }) })
    h.raises("INVALID_ARGUMENT", "indices (input 1) must be int32 or int64, got float32", run, "SparseSegmentSum",
      { d, F({ 0 }), T({ 0 }) })
    -- shape inference, where the shapes are known
    h.raises("INVALID_ARGUMENT", "Dimensions must be equal, but are 2 and 1 for indices and segment_ids",
      h.run_node, "SparseSegmentSum", { d, T({ 0, 1 }), T({ 0 }) })
    h.raises("INVALID_ARGUMENT", "indices (input 1) must have rank 1, got rank 2", h.run_node, "SparseSegmentSum",
      { d, T({ { 0 } }), T({ 0 }) })
    h.raises("INVALID_ARGUMENT", "Shape must be at least rank 1 but is rank 0", h.run_node, "SparseSegmentSum",
      { F(1), T({ 0 }), T({ 0 }) })
  end)
end)
