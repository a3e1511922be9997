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

local run = h.run_fed

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

describe("SparseFillEmptyRows", function()
  after_each(function() tfdev.factory.reset() end)
  local function fill(ix, v, shape, def, dt)
    dt = dt or "float32"
    local a, b, e, r = run("SparseFillEmptyRows", { L(ix), tfdev.tensor(v, dt), L(shape), tfdev.tensor(def, dt) }, nil, 4)
    return a, b, e, r
  end

  it("fills each empty row with the default at column 0 (TensorFlow's documented example)", function()
    local ix, v, e, r = fill({ { 0, 1 }, { 0, 3 }, { 2, 0 }, { 3, 1 } }, { 1, 2, 3, 4 }, { 5, 6 }, 9)
    assert.are.same({ { 0, 1 }, { 0, 3 }, { 1, 0 }, { 2, 0 }, { 3, 1 }, { 4, 0 } }, ix:totable())
    assert.are.same({ 1, 2, 9, 3, 4, 9 }, v:totable())
    assert.are.same({ false, true, false, false, true }, e:totable())
    assert.are.same({ 0, 1, 3, 4 }, r:totable())
    assert.are.same({ "int64", "float32", "bool", "int64" }, { ix.dtype, v.dtype, e.dtype, r.dtype })
  end)

  it("keeps each row's entries in their order when the rows are not sorted; reverse_index_map says where", function()
    local ix, v, e, r = fill({ { 2, 0 }, { 0, 1 }, { 0, 0 } }, { 1, 2, 3 }, { 3, 2 }, -1, "int32")
    assert.are.same({ { 0, 1 }, { 0, 0 }, { 1, 0 }, { 2, 0 } }, ix:totable())
    assert.are.same({ 2, 3, -1, 1 }, v:totable())
    assert.are.same({ false, true, false }, e:totable())
    assert.are.same({ 3, 0, 1 }, r:totable())
    -- rank 3 indices: the filled entry's other columns are 0
    ix, v = fill({ { 1, 2, 3 } }, { 5 }, { 2, 4, 4 }, 0, "int64")
    assert.are.same({ { { 0, 0, 0 }, { 1, 2, 3 } }, { 0, 5 } }, { ix:totable(), v:totable() })
    ix, v = fill({ { 1 } }, { true }, { 2 }, false, "bool")
    assert.are.same({ { { 0 }, { 1 } }, { false, true } }, { ix:totable(), v:totable() })
  end)

  it("hands a full, ordered input on as it is; empty inputs", function()
    local ix, v, e, r = fill({ { 0, 0 }, { 1, 1 } }, { 1, 2 }, { 2, 2 }, 0, "float64")
    assert.are.same({ { { 0, 0 }, { 1, 1 } }, { 1, 2 }, { false, false }, { 0, 1 } }, { ix:totable(), v:totable(), e:totable(), r:totable() })
    ix, v, e, r = run("SparseFillEmptyRows", { empty({ 0, 2 }, "int64"), empty({ 0 }), L({ 2, 3 }), F(7) }, nil, 4)
    assert.are.same({ { { 0, 0 }, { 1, 0 } }, { 7, 7 }, { true, true } }, { ix:totable(), v:totable(), e:totable() })
    assert.are.same({ 0 }, r.shape)
    ix, v, e, r = run("SparseFillEmptyRows", { empty({ 0, 2 }, "int64"), empty({ 0 }), L({ 0, 3 }), F(7) }, nil, 4)
    assert.are.same({ { 0, 2 }, { 0 }, { 0 }, { 0 } }, { ix.shape, v.shape, e.shape, r.shape })
  end)

  it("refuses what TensorFlow refuses, with its texts", function()
    h.raises("INVALID_ARGUMENT", "indices(1, 0) is invalid: 2 >= 2", fill, { { 0, 0 }, { 2, 0 } }, { 1, 2 }, { 2, 2 }, 0)
    h.raises("INVALID_ARGUMENT", "indices(0, 0) is invalid: -1 >= 2", fill, { { -1, 0 } }, { 1 }, { 2, 2 }, 0)
    h.raises("INVALID_ARGUMENT", "Received SparseTensor with dense_shape[0] = 0 but indices.shape[0] = 1", fill,
      { { 0, 0 } }, { 1 }, { 0, 2 }, 0)
    h.raises("INVALID_ARGUMENT", "The length of `values` (1) must match the first dimension of `indices` (2).", fill,
      { { 0, 0 }, { 1, 0 } }, { 1 }, { 2, 2 }, 0)
    h.raises("INVALID_ARGUMENT", "indices must be a matrix, saw: [2]", run, "SparseFillEmptyRows",
      { L({ 0, 1 }), F({ 1, 2 }), L({ 2 }), F(0) })
    h.raises("INVALID_ARGUMENT", "values must be a vector, saw: [1,1]", run, "SparseFillEmptyRows",
      { L({ { 0 } }), F({ { 1 } }), L({ 2 }), F(0) })
    h.raises("INVALID_ARGUMENT", "dense_shape must be a vector, saw: []", run, "SparseFillEmptyRows",
      { L({ { 0 } }), F({ 1 }), L(2), F(0) })
    h.raises("INVALID_ARGUMENT", "default_value must be a scalar, saw: [1]", run, "SparseFillEmptyRows",
      { L({ { 0 } }), F({ 1 }), L({ 2 }), F({ 0 }) })
    h.raises("INVALID_ARGUMENT", "Dense shape cannot be empty.", run, "SparseFillEmptyRows",
      { empty({ 0, 0 }, "int64"), empty({ 0 }), empty({ 0 }, "int64"), F(0) })
    h.raises("INVALID_ARGUMENT", "Expected shape dimensions to be non-negative, got -3", fill, { { 0, 0 } }, { 1 }, { -3, 2 }, 0)
    h.raises("INVALID_ARGUMENT", "indices (input 0) must be int64, got int32", run, "SparseFillEmptyRows",
      { T({ { 0 } }), F({ 1 }), L({ 2 }), F(0) })
    h.raises("INVALID_ARGUMENT", "input 1 is float32 but input 3 is int32", run, "SparseFillEmptyRows",
      { L({ { 0 } }), F({ 1 }), L({ 2 }), T(0) })
    h.raises("INVALID_ARGUMENT", "Dimensions must be equal, but are 2 and 1 for indices and values", h.run_node,
      "SparseFillEmptyRows", { L({ { 0 }, { 1 } }), F({ 1 }), L({ 2 }), F(0) }, nil, { "y:0" })
  end)

  it("infers [?, R], [?], [dense_shape[0]] and [N]", function()
    local dtypes, shapes = core.op_infer("SparseFillEmptyRows", {}, { "int64", "float32", "int64", "float32" },
      { { 4, 2 }, { 4 }, { 2 }, {} }, { nil, nil, L({ 5, 6 }), nil }, "f")
    assert.are.same({ "int64", "float32", "bool", "int64" }, dtypes)
    assert.are.same({ { -1, 2 }, { -1 }, { 5 }, { 4 } }, shapes)
  end)
end)

describe("SparseReshape", function()
  after_each(function() tfdev.factory.reset() end)
  local function reshape(ix, shape, new) return run("SparseReshape", { L(ix), L(shape), L(new) }, nil, 2) end

  it("moves each index to its place in the new shape, one -1 inferred (TensorFlow's documented example)", function()
    local ix, shape = reshape({ { 0, 0, 0 }, { 0, 0, 1 }, { 0, 1, 0 }, { 1, 0, 0 }, { 1, 2, 3 } }, { 2, 3, 6 }, { 9, -1 })
    assert.are.same({ { 0, 0 }, { 0, 1 }, { 1, 2 }, { 4, 2 }, { 8, 1 } }, ix:totable())
    assert.are.same({ 9, 4 }, shape:totable())
    assert.are.same({ "int64", "int64" }, { ix.dtype, shape.dtype })
    ix, shape = reshape({ { 0, 5 }, { 1, 2 } }, { 2, 6 }, { 3, 2, 2 })
    assert.are.same({ { { 1, 0, 1 }, { 2, 0, 0 } }, { 3, 2, 2 } }, { ix:totable(), shape:totable() })
    ix, shape = reshape({ { 3 } }, { 4 }, { 2, 2 })
    assert.are.same({ { { 1, 1 } }, { 2, 2 } }, { ix:totable(), shape:totable() })
    -- the same shape: the inputs unchanged; to a scalar and from one
    ix, shape = reshape({ { 1, 1 } }, { 2, 2 }, { -1, 2 })
    assert.are.same({ { { 1, 1 } }, { 2, 2 } }, { ix:totable(), shape:totable() })
    ix, shape = run("SparseReshape", { empty({ 1, 0 }, "int64"), empty({ 0 }, "int64"), L({ 1, -1 }) }, nil, 2)
    assert.are.same({ { { 0, 0 } }, { 1, 1 } }, { ix:totable(), shape:totable() })
    ix, shape = run("SparseReshape", { L({ { 0, 0 } }), L({ 1, 1 }), empty({ 0 }, "int64") }, nil, 2)
    assert.are.same({ { 1, 0 }, { 0 } }, { ix.shape, shape.shape })
  end)

  it("takes empty SparseTensors and zero-sized shapes", function()
    local ix, shape = run("SparseReshape", { empty({ 0, 2 }, "int64"), L({ 2, 3 }), L({ 3, -1 }) }, nil, 2)
    assert.are.same({ { 0, 2 }, { 3, 2 } }, { ix.shape, shape:totable() })
    ix, shape = run("SparseReshape", { empty({ 0, 2 }, "int64"), L({ 0, 3 }), L({ 3, 0, 1 }) }, nil, 2)
    assert.are.same({ { 0, 3 }, { 3, 0, 1 } }, { ix.shape, shape:totable() })
  end)

  it("refuses what TensorFlow refuses, with its texts", function()
    h.raises("INVALID_ARGUMENT", "only one output dimension may be -1, not both 0 and 1", reshape, { { 0, 0 } }, { 2, 2 }, { -1, -1 })
    h.raises("INVALID_ARGUMENT", "size 1 must be non-negative, not -2", reshape, { { 0, 0 } }, { 2, 2 }, { 4, -2 })
    h.raises("INVALID_ARGUMENT",
      "Input to reshape is a SparseTensor with 12 dense values, but the requested shape requires a multiple of 5. input_shape=[2,6] output_shape=[5,1]",
      reshape, { { 0, 0 } }, { 2, 6 }, { 5, -1 })
    h.raises("INVALID_ARGUMENT",
      "Input to reshape is a tensor with 12 dense values, but the requested shape has 10. input_shape=[2,6] output_shape=[5,2]",
      reshape, { { 0, 0 } }, { 2, 6 }, { 5, 2 })
    h.raises("INVALID_ARGUMENT",
      "reshape cannot infer the missing input size for an empty tensor unless all specified input sizes are non-zero",
      reshape, { { 0, 0 } }, { 2, 6 }, { 0, -1 })
    h.raises("INVALID_ARGUMENT", "Input tensor has 1 non zero elements but input shape ([0,6]) or output shape ([6,0]) is empty",
      reshape, { { 0, 0 } }, { 0, 6 }, { 6, 0 })
    h.raises("INVALID_ARGUMENT", "Input tensor rank must match input shape length.", reshape, { { 0, 0 } }, { 2, 2, 1 }, { 4 })
    h.raises("INVALID_ARGUMENT", "Input must be a matrix.", run, "SparseReshape", { L({ 0 }), L({ 2 }), L({ 2 }) }, nil, 2)
    h.raises("INVALID_ARGUMENT", "Input shape must be a vector.", run, "SparseReshape", { L({ { 0 } }), L(2), L({ 2 }) }, nil, 2)
    h.raises("INVALID_ARGUMENT", "Target shape should be a vector but received shape [1,1]", run, "SparseReshape",
      { L({ { 0 } }), L({ 2 }), L({ { 2 } }) }, nil, 2)
    h.raises("INVALID_ARGUMENT", "Expected shape dimensions to be non-negative, got -2", reshape, { { 0 } }, { -2 }, { 2 })
    h.raises("INVALID_ARGUMENT", "new_shape (input 2) must be int64, got int32", run, "SparseReshape",
      { L({ { 0 } }), L({ 2 }), T({ 2 }) }, nil, 2)
  end)

  it("infers [N, len(new_shape)] and new_shape's shape", function()
    local dtypes, shapes = core.op_infer("SparseReshape", {}, { "int64", "int64", "int64" }, { { 5, 3 }, { 3 }, { 2 } }, nil, "r")
    assert.are.same({ "int64", "int64" }, dtypes)
    assert.are.same({ { 5, 2 }, { 2 } }, shapes)
  end)
end)

describe("RaggedRange", function()
  after_each(function() tfdev.factory.reset() end)
  local function rr(s, l, d, attrs)
    local splits, v = run("RaggedRange", { s, l, d }, attrs, 2)
    return splits, v
  end

  it("makes one range per row (TensorFlow's documented examples)", function()
    local splits, v = rr(T({ 2, 5, 8 }), T({ 3, 5, 12 }), T(1))
    assert.are.same({ { 0, 1, 1, 5 }, { 2, 8, 9, 10, 11 } }, { splits:totable(), v:totable() })
    assert.are.same({ "int64", "int32" }, { splits.dtype, v.dtype })
    splits, v = rr(T(0), T({ 3, 5, 2 }), T(1))
    assert.are.same({ { 0, 3, 8, 10 }, { 0, 1, 2, 0, 1, 2, 3, 4, 0, 1 } }, { splits:totable(), v:totable() })
    splits, v = rr(T({ 0, 5, 8 }), T({ 3, 3, 12 }), T(2), { Tsplits = "int32" })
    assert.are.same({ { 0, 2, 2, 4 }, { 0, 2, 8, 10 }, "int32" }, { splits:totable(), v:totable(), splits.dtype })
    -- negative deltas, a scalar row, int64 and float values
    splits, v = rr(L(5), L(0), L(-2))
    assert.are.same({ { 0, 3 }, { 5, 3, 1 }, "int64" }, { splits:totable(), v:totable(), v.dtype })
    splits, v = rr(F({ 0, 1 }), F({ 1, 2.5 }), F(0.5))
    assert.are.same({ { 0, 2, 5 }, { 0, 0.5, 1, 1.5, 2 } }, { splits:totable(), v:totable() })
    splits, v = rr(tfdev.tensor(0, "float64"), tfdev.tensor(1, "float64"), tfdev.tensor(0.25, "float64"))
    assert.are.same({ { 0, 4 }, { 0, 0.25, 0.5, 0.75 }, "float64" }, { splits:totable(), v:totable(), v.dtype })
    splits, v = rr(empty({ 0 }, "int32"), empty({ 0 }, "int32"), T(1))
    assert.are.same({ { 0 }, { 0 } }, { splits:totable(), v.shape })
  end)

  it("refuses what TensorFlow refuses, with its texts", function()
    h.raises("INVALID_ARGUMENT", "Requires delta != 0", rr, T({ 0, 1 }), T({ 3, 4 }), T({ 1, 0 }))
    h.raises("INVALID_ARGUMENT", "starts, limits, and deltas must have the same shape", rr, T({ 0, 1 }), T({ 3 }), T(1))
    h.raises("INVALID_ARGUMENT", "starts must be a scalar or vector", rr, T({ { 0 } }), T(3), T(1))
    h.raises("INVALID_ARGUMENT",
      "The total range size overflowed. Consider using int64 instead of int32 for row_splits_dtype.", rr,
      L({ 0, 0 }), L({ 2000000000, 2000000000 }), L(1), { Tsplits = "int32" })
    h.raises("INVALID_ARGUMENT", "Requires ((limit - start) / delta) <= 9223372036854775807", rr, F(0), F(1e30), F(1e-10))
    h.raises("INVALID_ARGUMENT", "T=uint8 is not allowed", rr, tfdev.tensor(0, "uint8"), tfdev.tensor(1, "uint8"),
      tfdev.tensor(1, "uint8"))
  end)

  it("infers rt_nested_splits [nrows + 1]", function()
    local dtypes, shapes = core.op_infer("RaggedRange", { Tsplits = "int32" }, { "float32", "float32", "float32" },
      { { 3 }, {}, {} }, nil, "r")
    assert.are.same({ { "int32", "float32" }, { { 4 }, { -1 } } }, { dtypes, shapes })
  end)
end)

describe("RaggedTensorToTensor", function()
  after_each(function() tfdev.factory.reset() end)
  local function r2t(shape, values, default, types, parts)
    local ins = { shape, values, default }
    for i, t in ipairs(parts) do ins[3 + i] = t end
    return run("RaggedTensorToTensor", ins, { row_partition_types = types, num_row_partition_tensors = #parts })
  end
  -- TensorFlow's kernel test: params = [[.1, .2, .3], [], [.4, .5, .6, .7], [.8, .9]]
  local vals = { 1, 2, 3, 4, 5, 6, 7, 8, 9 }
  local want = { { 1, 2, 3, 15 }, { 15, 15, 15, 15 }, { 4, 5, 6, 7 }, { 8, 9, 15, 15 } }

  it("pads rows with the default, from FIRST_DIM_SIZE + VALUE_ROWIDS or ROW_SPLITS (TensorFlow's kernel tests)", function()
    assert.are.same(want, r2t(T({ 4, 4 }), F(vals), F(15), { "FIRST_DIM_SIZE", "VALUE_ROWIDS" },
      { T(4), T({ 0, 0, 0, 2, 2, 2, 2, 3, 3 }) }):totable())
    assert.are.same(want, r2t(T({ 4, 4 }), F(vals), F(15), { "ROW_SPLITS" }, { T({ 0, 3, 3, 7, 9 }) }):totable())
    -- int64 partitions and shape, an unknown shape (-1) and unknown sizes
    assert.are.same(want, r2t(L(-1), F(vals), F(15), { "ROW_SPLITS" }, { L({ 0, 3, 3, 7, 9 }) }):totable())
    assert.are.same(want, r2t(L({ -1, -1 }), F(vals), F(15), { "FIRST_DIM_SIZE", "VALUE_ROWIDS" },
      { L(4), L({ 0, 0, 0, 2, 2, 2, 2, 3, 3 }) }):totable())
    -- cut where the shape is smaller, padded where larger
    assert.are.same({ { 1, 2 }, { 15, 15 } }, r2t(T({ 2, 2 }), F(vals), F(15), { "ROW_SPLITS" }, { T({ 0, 3, 3, 7, 9 }) }):totable())
    assert.are.same({ { 1, 2, 3, 0, 0 }, { 0, 0, 0, 0, 0 }, { 4, 5, 6, 7, 0 }, { 8, 9, 0, 0, 0 }, { 0, 0, 0, 0, 0 } },
      r2t(T({ 5, 5 }), T(vals), T(0), { "ROW_SPLITS" }, { T({ 0, 3, 3, 7, 9 }) }):totable())
    -- FIRST_DIM_SIZE more than the rows the row ids name: the rest is default
    assert.are.same({ { 1, 2 }, { 0, 0 }, { 0, 0 } }, r2t(T(-1), T({ 1, 2 }), T(0), { "FIRST_DIM_SIZE", "VALUE_ROWIDS" },
      { T(3), T({ 0, 0 }) }):totable())
  end)

  it("handles ragged rank 2, values with inner dimensions and a broadcast default", function()
    -- [[[1, 2], [3]], [], [[4, 5, 6]]]
    local y = r2t(T(-1), T({ 1, 2, 3, 4, 5, 6 }), T(-1), { "ROW_SPLITS", "ROW_SPLITS" }, { T({ 0, 2, 2, 3 }), T({ 0, 2, 3, 6 }) })
    assert.are.same({ { { 1, 2, -1 }, { 3, -1, -1 } }, { { -1, -1, -1 }, { -1, -1, -1 } }, { { 4, 5, 6 }, { -1, -1, -1 } } },
      y:totable())
    y = r2t(T(-1), T({ 1, 2, 3, 4, 5, 6 }), T(-1), { "FIRST_DIM_SIZE", "VALUE_ROWIDS", "VALUE_ROWIDS" },
      { T(3), T({ 0, 0, 2 }), T({ 0, 0, 1, 2, 2, 2 }) })
    assert.are.same({ { { 1, 2, -1 }, { 3, -1, -1 } }, { { -1, -1, -1 }, { -1, -1, -1 } }, { { 4, 5, 6 }, { -1, -1, -1 } } },
      y:totable())
    -- values [3, 2] with a default of shape [2] (one row of it) and of shape [] ; a bool tensor
    y = r2t(T({ -1, -1, 2 }), F({ { 1, 2 }, { 3, 4 }, { 5, 6 } }), F({ 0, 9 }), { "ROW_SPLITS" }, { T({ 0, 2, 3 }) })
    assert.are.same({ { { 1, 2 }, { 3, 4 } }, { { 5, 6 }, { 0, 9 } } }, y:totable())
    y = r2t(T(-1), F({ { 1, 2 }, { 3, 4 }, { 5, 6 } }), F(7), { "ROW_SPLITS" }, { T({ 0, 1, 3 }) })
    assert.are.same({ { { 1, 2 }, { 7, 7 } }, { { 3, 4 }, { 5, 6 } } }, y:totable())
    y = r2t(T(-1), tfdev.tensor({ true, true }, "bool"), tfdev.tensor(false, "bool"), { "ROW_SPLITS" }, { T({ 0, 0, 2 }) })
    assert.are.same({ { false, false }, { true, true } }, y:totable())
  end)

  it("takes empty ragged tensors", function()
    assert.are.same({ 0, 0 }, r2t(T(-1), empty({ 0 }), F(1), { "ROW_SPLITS" }, { T({ 0 }) }).shape)
    assert.are.same({ { 1, 1 }, { 1, 1 } }, r2t(T({ 2, 2 }), empty({ 0 }), F(1), { "ROW_SPLITS" }, { T({ 0, 0, 0 }) }):totable())
    assert.are.same({ 2, 0 }, r2t(T(-1), empty({ 0 }), F(1), { "FIRST_DIM_SIZE", "VALUE_ROWIDS" }, { T(2), empty({ 0 }, "int32") }).shape)
  end)

  it("refuses what TensorFlow refuses, with its texts", function()
    h.raises("INVALID_ARGUMENT", "Invalid first partition input. Tensor requires at least one element.", r2t,
      T(-1), empty({ 0 }), F(0), { "ROW_SPLITS" }, { empty({ 0 }, "int32") })
    h.raises("INVALID_ARGUMENT", "Cannot handle VALUE_ROWIDS in first dimension.", r2t, T(-1), F({ 1 }), F(0),
      { "VALUE_ROWIDS" }, { T({ 0 }) })
    h.raises("INVALID_ARGUMENT", "Unknown string for partition info type: ROWSPLITS", r2t, T(-1), F({ 1 }), F(0),
      { "ROWSPLITS" }, { T({ 0, 1 }) })
    h.raises("INVALID_ARGUMENT", "Cannot handle partition type ROW_LENGTHS", r2t, T(-1), F({ 1 }), F(0),
      { "FIRST_DIM_SIZE", "ROW_LENGTHS" }, { T(1), T({ 1 }) })
    h.raises("INVALID_ARGUMENT", "Row partition size is greater than output size: 3 > 2", r2t, T(-1), F({ 1, 2, 3 }), F(0),
      { "FIRST_DIM_SIZE", "ROW_SPLITS" }, { T(2), T({ 0, 1, 2, 3 }) })
    h.raises("INVALID_ARGUMENT", "Invalid row split size.", r2t, T(-1), F({ 1, 2, 3 }), F(0), { "ROW_SPLITS" }, { T({ 1, 2, 3 }) })
    h.raises("INVALID_ARGUMENT", "Got next_value_rowid=4 which is not less than 4", r2t, T(-1), F({ 1, 2 }), F(0),
      { "FIRST_DIM_SIZE", "VALUE_ROWIDS" }, { T(4), T({ 0, 4 }) })
    h.raises("INVALID_ARGUMENT", "Got current_value_rowid=7 which is not less than 4", r2t, T(-1), F({ 1 }), F(0),
      { "FIRST_DIM_SIZE", "VALUE_ROWIDS" }, { T(4), T({ 7 }) })
    h.raises("INVALID_ARGUMENT", "value_rowids[0] = -1 is negative", r2t, T(-1), F({ 1 }), F(0),
      { "FIRST_DIM_SIZE", "VALUE_ROWIDS" }, { T(4), T({ -1 }) })
    h.raises("INVALID_ARGUMENT", "rt_input.shape and shape=[2,2,2] are incompatible: rt_input.rank = 2 but shape.rank = 3",
      r2t, T({ 2, 2, 2 }), F({ 1 }), F(0), { "ROW_SPLITS" }, { T({ 0, 1 }) })
    h.raises("INVALID_ARGUMENT", "rt_input.shape and shape=[?,?,3] are incompatible: rt_input.shape[2] = 2 but shape[2] = 3",
      r2t, T({ -1, -1, 3 }), F({ { 1, 2 } }), F(0), { "ROW_SPLITS" }, { T({ 0, 1 }) })
    h.raises("INVALID_ARGUMENT",
      "default_value.shape=[3] and rt_input.flat_values.shape=[1,2] are incompatible: default_value.shape[-1] = 3 but rt_input.flat_values.shape[-1] = 2",
      r2t, T(-1), F({ { 1, 2 } }), F({ 0, 0, 0 }), { "ROW_SPLITS" }, { T({ 0, 1 }) })
    h.raises("INVALID_ARGUMENT",
      "default_value.shape=[1] and rt_input.flat_values.shape=[1] are incompatible: default_value.rank = 1  must be less than rt_input.flat_values.rank = 1",
      r2t, T(-1), F({ 1 }), F({ 0 }), { "ROW_SPLITS" }, { T({ 0, 1 }) })
    h.raises("INVALID_ARGUMENT", "the row partitions describe 2 values but flat_values has 3", r2t, T(-1), F({ 1, 2, 3 }), F(0),
      { "ROW_SPLITS" }, { T({ 0, 2 }) })
    h.raises("INVALID_ARGUMENT", "The only valid scalar shape tensor is the fully unknown shape specified as -1.", r2t,
      T(3), F({ 1 }), F(0), { "ROW_SPLITS" }, { T({ 0, 1 }) })
    h.raises("INVALID_ARGUMENT", "2 row_partition_types but 1 row_partition_tensors", r2t, T(-1), F({ 1 }), F(0),
      { "ROW_SPLITS", "ROW_SPLITS" }, { T({ 0, 1 }) })
  end)
end)

describe("RaggedGather", function()
  after_each(function() tfdev.factory.reset() end)
  -- gathers; returns the output splits' tables and the values' table
  local function gather(splits, values, indices, orr)
    local ins = {}
    for i, s in ipairs(splits) do ins[i] = s end
    ins[#ins + 1] = values
    ins[#ins + 1] = indices
    local outs = { run("RaggedGather", ins, { PARAMS_RAGGED_RANK = #splits, OUTPUT_RAGGED_RANK = orr }, orr + 1) }
    local r = {}
    for i, t in ipairs(outs) do r[i] = t:totable() end
    return r, outs
  end
  -- TensorFlow's documented example: params = [['a', 'b', 'c'], ['d'], [], ['e']] (as 1..5)
  local splits, values = L({ 0, 3, 4, 4, 5 }), T({ 1, 2, 3, 4, 5 })

  it("gathers ragged rows (TensorFlow's documented example), by vector and matrix indices", function()
    local r, outs = gather({ splits }, values, T({ 3, 1, 2, 1, 0 }), 1)
    assert.are.same({ { 0, 1, 2, 2, 3, 6 }, { 5, 4, 4, 1, 2, 3 } }, r)
    assert.are.same({ "int64", "int32" }, { outs[1].dtype, outs[2].dtype })
    r = gather({ splits }, values, L({ { 3, 1 }, { 2, 0 } }), 2)
    assert.are.same({ { 0, 2, 4 }, { 0, 1, 2, 2, 5 }, { 5, 4, 1, 2, 3 } }, r)
    r, outs = gather({ T({ 0, 3, 4, 4, 5 }) }, F({ 1, 2, 3, 4, 5 }), L({ 0 }), 1)
    assert.are.same({ { { 0, 3 }, { 1, 2, 3 } }, "int32", "float32" }, { r, outs[1].dtype, outs[2].dtype })
  end)

  it("gathers ragged rank 2 and values with inner dimensions; empty indices", function()
    -- [[[1, 2], [3]], [], [[4, 5, 6]]]
    local r = gather({ T({ 0, 2, 2, 3 }), T({ 0, 2, 3, 6 }) }, F({ 1, 2, 3, 4, 5, 6 }), T({ 2, 1, 0 }), 2)
    assert.are.same({ { 0, 1, 1, 3 }, { 0, 3, 5, 6 }, { 4, 5, 6, 1, 2, 3 } }, r)
    r = gather({ T({ 0, 1, 3 }) }, F({ { 1, 2 }, { 3, 4 }, { 5, 6 } }), T({ 1, 1 }), 1)
    assert.are.same({ { 0, 2, 4 }, { { 3, 4 }, { 5, 6 }, { 3, 4 }, { 5, 6 } } }, r)
    local _, outs = gather({ splits }, values, empty({ 0 }, "int32"), 1)
    assert.are.same({ { 0 }, { 0 } }, { outs[1]:totable(), outs[2].shape })
    -- scalar indices: OUTPUT_RAGGED_RANK = PARAMS_RAGGED_RANK - 1
    r = gather({ T({ 0, 2, 2, 3 }), T({ 0, 2, 3, 6 }) }, F({ 1, 2, 3, 4, 5, 6 }), T(0), 1)
    assert.are.same({ { 0, 2, 3 }, { 1, 2, 3 } }, r)
  end)

  it("infers OUTPUT_RAGGED_RANK splits vectors and the values with an unknown first dimension", function()
    local dtypes, shapes, n = core.op_infer("RaggedGather", { PARAMS_RAGGED_RANK = 1, OUTPUT_RAGGED_RANK = 2 },
      { "int32", "float32", "int64" }, { { 5 }, { 4, 3 }, { 2, 2 } }, nil, "g")
    assert.are.same({ 3, { "int32", "int32", "float32" }, { { -1 }, { -1 }, { -1, 3 } } }, { n, dtypes, shapes })
  end)

  it("refuses what TensorFlow refuses, with its texts", function()
    h.raises("INVALID_ARGUMENT", "indices[1] = 4 is not in [0, 4)", gather, { splits }, values, T({ 0, 4 }), 1)
    h.raises("INVALID_ARGUMENT", "indices[1,0] = -1 is not in [0, 4)", gather, { splits }, values, T({ { 0 }, { -1 } }), 2)
    h.raises("INVALID_ARGUMENT", "Ragged splits must be sorted", gather, { L({ 0, 3, 1, 5 }) }, values, T({ 0 }), 1)
    h.raises("INVALID_ARGUMENT", "Ragged splits must not point past values", gather, { L({ 0, 3, 6 }) }, values, T({ 0 }), 1)
    h.raises("INVALID_ARGUMENT", "Ragged splits must be non-negative", gather, { L({ -1, 3 }) }, values, T({ 0 }), 1)
    h.raises("INVALID_ARGUMENT", "Ragged splits must not point past values", gather,
      { T({ 0, 2, 4 }), T({ 0, 1, 2, 3 }) }, values, T({ 1 }), 2)
    h.raises("INVALID_ARGUMENT", "params.rank must be nonzero", gather, { L({ 0, 0 }) }, T(1), T({ 0 }), 1)
    h.raises("INVALID_ARGUMENT", "OUTPUT_RAGGED_RANK is 2 but indices.rank - 1 + PARAMS_RAGGED_RANK is 1", gather,
      { splits }, values, T({ 0 }), 2)
    h.raises("INVALID_ARGUMENT", "indices (input 2) must have rank 2, got rank 1", h.run_node, "RaggedGather",
      { splits, values, T({ 0 }) }, { PARAMS_RAGGED_RANK = 1, OUTPUT_RAGGED_RANK = 2 }, { "y:0" })
    h.raises("INVALID_ARGUMENT", "attr 'OUTPUT_RAGGED_RANK' must be an int from 0 to 31", gather, { splits }, values,
      T({ 0 }), -1)
  end)
end)

describe("sparse and ragged ops on hostile sizes", function()
  after_each(function() tfdev.factory.reset() end)
  local big = 4611686018427387904 -- 2^62

  it("fail with an error, never a crash, when sizes are past what memory holds", function()
    h.raises("RESOURCE_EXHAUSTED", "out of memory for the output positions", run, "RaggedTensorToTensor",
      { T({ 1, 1 }), F({ 1 }), F(0), L(big), L({ 0 }) },
      { row_partition_types = { "FIRST_DIM_SIZE", "VALUE_ROWIDS" }, num_row_partition_tensors = 2 })
    assert.has_error(function() run("SparseFillEmptyRows", { empty({ 0, 2 }, "int64"), empty({ 0 }), L({ big, 1 }), F(0) }, nil, 4) end)
    assert.has_error(function() run("SparseSegmentSum", { F({ 1 }), T({ 0 }), L({ big }) }) end)
    assert.has_error(function() run("RaggedRange", { L(0), L(big), L(1) }, nil, 2) end)
    assert.has_error(function() run("SparseReshape", { L({ { 0, 0 } }), L({ big, 4 }), L({ -1 }) }, nil, 2) end)
  end)
end)
