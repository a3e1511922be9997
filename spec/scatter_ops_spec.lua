-- Scatters, searches and uniques (ScatterNd, TensorScatterUpdate, BatchMatMul, LowerBound, UpperBound, Unique,
-- UniqueV2, ListDiff) and FusedBatchNormV2: TensorFlow's documented examples, small Lua references over every
-- dtype the ops take, empty tensors, and TensorFlow's error texts. The graphs run with optimize_graph = false so
-- the kernels run themselves rather than being folded.
local tfdev = require "tfdev"
local h = require "spec.support.helpers"

local function T(v, dt) return tfdev.tensor(v, dt or "int32") end

local function run(op, inputs, attrs, nout)
  local fetches = { "y" }
  for i = 1, nout or 0 do fetches[i] = "y:" .. (i - 1) end
  return table.unpack(h.run_node(op, inputs, attrs, fetches))
end

local function vals(op, inputs, attrs) return run(op, inputs, attrs):totable() end

local run_fed = h.run_fed

local function empty(shape, dt) return tfdev.tensor { shape = shape, dtype = dt or "float32" } end

-- A reproducible sequence for the references (no math.random: its seed is process-wide).
local function lcg(seed)
  local s = seed
  return function(n)
    s = (s * 1103515245 + 12345) % 2147483648
    return s % n
  end
end

describe("scatter ops", function()
  after_each(function() tfdev.factory.reset() end)

  describe("ScatterNd", function()
    it("puts updates at indices in zeros, as TensorFlow's documented examples", function()
      assert.are.same({ 0, 11, 0, 10, 9, 0, 0, 12 },
        vals("ScatterNd", { T({ { 4 }, { 3 }, { 1 }, { 7 } }), T({ 9, 10, 11, 12 }), T({ 8 }) }))
      local upd = {}
      for s = 1, 2 do
        upd[s] = {}
        for r = 1, 4 do upd[s][r] = { 5 * s, 6 * s, 7 * s, 8 * s } end
      end
      local y = run("ScatterNd", { T({ { 0 }, { 2 } }), T(upd, "float32"), T({ 4, 4, 4 }) })
      assert.are.same({ 4, 4, 4 }, y.shape)
      local t = y:totable()
      assert.are.same(upd[1], t[1])
      assert.are.same(upd[2], t[3])
      assert.are.same({ { 0, 0, 0, 0 }, { 0, 0, 0, 0 }, { 0, 0, 0, 0 }, { 0, 0, 0, 0 } }, t[2])
    end)

    it("sums repeated indices, in every dtype it takes, with int32 and int64 indices", function()
      local ix = { { 1, 0 }, { 0, 2 }, { 1, 0 }, { 1, 0 } }
      for _, dt in ipairs { "float32", "float64", "int32", "int64", "uint8", "float16" } do
        for _, it in ipairs { "int32", "int64" } do
          local y = vals("ScatterNd", { T(ix, it), T({ 1, 2, 3, 4 }, dt), T({ 2, 3 }, it) })
          assert.are.same({ { 0, 0, 2 }, { 8, 0, 0 } }, y, dt .. "/" .. it)
        end
      end
      -- bool is not one of ScatterNd's types
      h.raises("INVALID_ARGUMENT", "bool", run, "ScatterNd", { T({ { 0 } }), T({ true }, "bool"), T({ 2 }) })
    end)

    it("matches a Lua reference on random slices of a rank-3 output", function()
      local r = lcg(7)
      local shape, n = { 5, 3, 4 }, 40
      local ix, upd, want = {}, {}, {}
      for a = 1, 5 do
        want[a] = {}
        for b = 1, 3 do want[a][b] = { 0, 0, 0, 0 } end
      end
      for u = 1, n do
        local a, b = r(5), r(3)
        ix[u] = { a, b }
        upd[u] = {}
        for c = 1, 4 do
          upd[u][c] = r(100) - 50
          want[a + 1][b + 1][c] = want[a + 1][b + 1][c] + upd[u][c]
        end
      end
      assert.are.same(want, vals("ScatterNd", { T(ix, "int64"), T(upd, "float64"), T(shape, "int64") }))
    end)

    it("makes empty outputs, and zeros when no index is given", function()
      assert.are.same({ 0, 3 }, run("ScatterNd", { empty({ 0, 1 }, "int32"), empty({ 0, 3 }), T({ 0, 3 }) }).shape)
      assert.are.same({ { 0, 0 }, { 0, 0 } }, vals("ScatterNd", { empty({ 0, 1 }, "int32"), empty({ 0, 2 }), T({ 2, 2 }) }))
    end)

    it("refuses bad indices and shapes with TensorFlow's texts", function()
      h.raises("INVALID_ARGUMENT", "indices[1] = [5] does not index into shape [4]", run, "ScatterNd",
        { T({ { 0 }, { 5 } }), T({ 1, 2 }, "float32"), T({ 4 }) })
      h.raises("INVALID_ARGUMENT", "indices[0] = [-1] does not index into shape [4]", run, "ScatterNd",
        { T({ { -1 }, { 5 } }), T({ 1, 2 }, "float32"), T({ 4 }) })
      h.raises("INVALID_ARGUMENT", "indices[1,0] = [1, 3] does not index into shape [2,3]", run, "ScatterNd",
        { T({ { { 0, 0 } }, { { 1, 3 } } }), T({ { 1 }, { 2 } }, "float32"), T({ 2, 3 }) })
      h.raises("INVALID_ARGUMENT", "Indices shape must have rank at least one. Found:[]", run, "ScatterNd",
        { T(0), T({ 1 }, "float32"), T({ 4 }) })
      h.raises("INVALID_ARGUMENT", "Updates shape must have rank at least one. Found:[]", run, "ScatterNd",
        { T({ { 0 } }), T(1, "float32"), T({ 4 }) })
      h.raises("INVALID_ARGUMENT", "Indices and updates specified for empty output shape", run, "ScatterNd",
        { T({ { 0 } }), T({ 1 }, "float32"), T({ 0 }) })
      h.raises("INVALID_ARGUMENT", "Dimensions [0,1) of indices[shape=[2,1]] must match dimensions [0,1) of updates[shape=[3]]",
        run, "ScatterNd", { T({ { 0 }, { 1 } }), T({ 1, 2, 3 }, "float32"), T({ 4 }) })
      h.raises("INVALID_ARGUMENT", "Dimensions [1,2) of input[shape=[4,2]] must match dimensions [1,2) of updates[shape=[2,3]]",
        run, "ScatterNd", { T({ { 0 }, { 1 } }), T({ { 1, 2, 3 }, { 4, 5, 6 } }, "float32"), T({ 4, 2 }) })
      h.raises("INVALID_ARGUMENT", "Dimensions [1,2) of input[shape=[4,2]] must match dimensions [1,3) of updates",
        run, "ScatterNd", { T({ { 0 }, { 1 } }), empty({ 2, 2, 1 }), T({ 4, 2 }) })
      h.raises("INVALID_ARGUMENT", "Must have updates.shape = indices.shape[:batch_dim] + params_shape[slice_dim:]", run,
        "ScatterNd", { T({ 1, 2 }), empty({ 2 }), T({ 3, 3, 2 }) })
      h.raises("INVALID_ARGUMENT", "shape is too large", run,
        "ScatterNd", { T({ { 0 } }, "int64"), T({ 1 }, "float32"), T({ 2 ^ 40, 2 ^ 40 }, "int64") })
      h.raises("INVALID_ARGUMENT", "Dimension -1 must be >= 0", run_fed, "ScatterNd",
        { T({ { 0 } }), T({ 1 }, "float32"), T({ 2, -1 }) })
      h.raises("INVALID_ARGUMENT", "shape [1099511627776,1099511627776] has more elements than int64 can count", run_fed,
        "ScatterNd", { T({ { 0 } }, "int64"), T({ 1 }, "float32"), T({ 2 ^ 40, 2 ^ 40 }, "int64") })
      h.raises("INVALID_ARGUMENT", "Shape must be a vector", run_fed, "ScatterNd", { T({ { 1 } }), T({ 5 }, "float32"), T(4) })
      assert.are.same({ 0, 5, 0, 0 }, run_fed("ScatterNd", { T({ { 1 } }), T({ 5 }, "float32"), T({ 4 }) }):totable())
      h.raises("INVALID_ARGUMENT", "indices (input 0) must be int32 or int64", run, "ScatterNd",
        { T({ { 0 } }, "float32"), T({ 1 }, "float32"), T({ 4 }) })
    end)
  end)

  describe("TensorScatterUpdate", function()
    it("writes updates over a copy of the tensor, the last write winning", function()
      assert.are.same({ 1, 9, 3, 10, 11, 6, 7, 12 }, vals("TensorScatterUpdate",
        { T({ 1, 2, 3, 4, 5, 6, 7, 8 }), T({ { 1 }, { 3 }, { 4 }, { 7 } }), T({ 9, 10, 11, 12 }) }))
      assert.are.same({ 1, 7, 3 }, vals("TensorScatterUpdate", { T({ 1, 2, 3 }), T({ { 1 }, { 1 } }), T({ 5, 7 }) }))
      assert.are.same({ { 1, 2 }, { 9, 8 }, { 5, 6 } }, vals("TensorScatterUpdate",
        { T({ { 1, 2 }, { 3, 4 }, { 5, 6 } }, "int64"), T({ { 1 } }, "int64"), T({ { 9, 8 } }, "int64") }))
    end)

    it("takes every dtype, bool included, and empty tensors", function()
      for _, dt in ipairs { "float32", "float64", "int32", "int64", "uint8", "float16" } do
        assert.are.same({ { 0, 4 }, { 2, 3 } },
          vals("TensorScatterUpdate", { T({ { 0, 1 }, { 2, 3 } }, dt), T({ { 0, 1 } }), T({ 4 }, dt) }), dt)
      end
      assert.are.same({ true, false }, vals("TensorScatterUpdate", { T({ true, true }, "bool"), T({ { 1 } }), T({ false }, "bool") }))
      assert.are.same({ 0 }, run("TensorScatterUpdate", { empty({ 0 }), empty({ 0, 1 }, "int32"), empty({ 0 }) }).shape)
      assert.are.same({ 1, 2 }, vals("TensorScatterUpdate", { T({ 1, 2 }), empty({ 0, 1 }, "int32"), empty({ 0 }, "int32") }))
    end)

    it("refuses bad indices and shapes with TensorFlow's texts", function()
      h.raises("INVALID_ARGUMENT", "indices[0] = [3] does not index into shape [3]", run, "TensorScatterUpdate",
        { T({ 1, 2, 3 }), T({ { 3 } }), T({ 5 }) })
      h.raises("INVALID_ARGUMENT", "Outer dimensions of indices and update must match. Indices shape: [2,1], updates shape:[1]",
        run, "TensorScatterUpdate", { T({ 1, 2, 3 }), T({ { 0 }, { 1 } }), T({ 5 }) })
      h.raises("INVALID_ARGUMENT", "Inner dimensions of output shape must match inner dimensions of updates shape. Output: [3] updates: [1,2]",
        run, "TensorScatterUpdate", { T({ 1, 2, 3 }), T({ { 0 } }), T({ { 5, 6 } }) })
      h.raises("INVALID_ARGUMENT", "The inner 1 dimensions of output.shape=[3,2] must match the inner 1 dimensions of updates.shape=[1,3]",
        run, "TensorScatterUpdate", { T({ { 1, 2 }, { 3, 4 }, { 5, 6 } }), T({ { 0 } }), T({ { 5, 6, 7 } }) })
      h.raises("INVALID_ARGUMENT", "Indices and updates specified for empty output shape", run, "TensorScatterUpdate",
        { empty({ 0 }), T({ { 0 } }), T({ 5 }, "float32") })
      h.raises("INVALID_ARGUMENT", "input 0 is int32 but input 2 is float32", run, "TensorScatterUpdate",
        { T({ 1, 2 }), T({ { 0 } }), T({ 5 }, "float32") })
    end)
  end)

  describe("BatchMatMul", function()
    it("multiplies batches of matrices with adj_x and adj_y, float32 and float64", function()
      local x = { { { 1, 2 }, { 3, 4 } }, { { 5, 6 }, { 7, 8 } } }
      local y = { { { 1, 0 }, { 0, 1 } }, { { 2, 0 }, { 1, 1 } } }
      for _, dt in ipairs { "float32", "float64" } do
        assert.are.same({ { { 1, 2 }, { 3, 4 } }, { { 16, 6 }, { 22, 8 } } }, vals("BatchMatMul", { T(x, dt), T(y, dt) }))
        assert.are.same({ { { 1, 3 }, { 2, 4 } }, { { 17, 7 }, { 20, 8 } } },
          vals("BatchMatMul", { T(x, dt), T(y, dt) }, { adj_x = true }))
        assert.are.same({ { { 1, 2 }, { 3, 4 } }, { { 10, 11 }, { 14, 15 } } },
          vals("BatchMatMul", { T(x, dt), T(y, dt) }, { adj_y = true }))
      end
      assert.are.same({ 2, 0, 3 }, run("BatchMatMul", { empty({ 2, 0, 4 }), empty({ 2, 4, 3 }) }).shape)
      assert.are.same({ { { 0 } } }, vals("BatchMatMul", { empty({ 1, 1, 0 }), empty({ 1, 0, 1 }) }))
    end)

    it("does not broadcast batch dimensions, with the legacy op's texts", function()
      h.raises("INVALID_ARGUMENT", "In[0] and In[1] has different ndims: [2,2,2] vs. [2,2]", run, "BatchMatMul",
        { empty({ 2, 2, 2 }), empty({ 2, 2 }) })
      h.raises("INVALID_ARGUMENT", "In[0].dim(0) and In[1].dim(0) must be the same: [2,2,2] vs [1,2,2]", run, "BatchMatMul",
        { empty({ 2, 2, 2 }), empty({ 1, 2, 2 }) })
      h.raises("INVALID_ARGUMENT", "(BatchMatMul): Matrix size-incompatible", run, "BatchMatMul",
        { empty({ 2, 2, 3 }), empty({ 2, 2, 2 }) })
      assert.are.same({ { 6 } }, vals("BatchMatMul", { T({ { 2 } }), T({ { 3 } }) })) -- int32, as TensorFlow registers it
      h.raises("INVALID_ARGUMENT", "T=uint8 is not allowed", run, "BatchMatMul", { T({ { 1 } }, "uint8"), T({ { 1 } }, "uint8") })
    end)
  end)

  describe("LowerBound and UpperBound", function()
    local sorted = { { 0, 3, 9, 9, 10 }, { 1, 2, 3, 4, 5 } }
    local values = { { 2, 4, 9 }, { 0, 2, 6 } }

    it("search each row, as tf.searchsorted's documented example", function()
      for _, dt in ipairs { "float32", "float64", "int32", "int64", "uint8", "float16" } do
        assert.are.same({ { 1, 2, 2 }, { 0, 1, 5 } }, vals("LowerBound", { T(sorted, dt), T(values, dt) }), dt)
        assert.are.same({ { 1, 2, 4 }, { 0, 2, 5 } }, vals("UpperBound", { T(sorted, dt), T(values, dt) }), dt)
      end
      local o = run("UpperBound", { T(sorted), T(values) }, { out_type = "int64" })
      assert.are.equal("int64", o.dtype)
      assert.are.equal("int32", run("LowerBound", { T(sorted), T(values) }).dtype)
    end)

    it("agree with a linear scan on random rows, and take empty rows", function()
      local r = lcg(11)
      local s, v, lo, up = {}, {}, {}, {}
      for b = 1, 3 do
        s[b], v[b], lo[b], up[b] = {}, {}, {}, {}
        local x = 0
        for i = 1, 17 do
          x = x + r(3)
          s[b][i] = x
        end
        for j = 1, 9 do
          v[b][j] = r(x + 3) - 1
          local l, u = 0, 0
          for i = 1, 17 do
            if s[b][i] < v[b][j] then l = i end
            if s[b][i] <= v[b][j] then u = i end
          end
          lo[b][j], up[b][j] = l, u
        end
      end
      assert.are.same(lo, vals("LowerBound", { T(s, "int64"), T(v, "int64") }))
      assert.are.same(up, vals("UpperBound", { T(s, "int64"), T(v, "int64") }))
      assert.are.same({ { 0, 0 } }, vals("LowerBound", { empty({ 1, 0 }), T({ { 1, 2 } }, "float32") }))
      assert.are.same({ 2, 0 }, run("UpperBound", { T(sorted), empty({ 2, 0 }, "int32") }).shape)
    end)

    it("refuse mismatched inputs with TensorFlow's texts", function()
      h.raises("INVALID_ARGUMENT", "Leading dim_size of both tensors must match.", run, "LowerBound",
        { T(sorted), T({ { 1 } }) })
      h.raises("INVALID_ARGUMENT", "sorted input argument must be a matrix", run, "UpperBound", { T({ 1, 2 }), T({ 1 }) })
      h.raises("INVALID_ARGUMENT", "input 0 is int32 but input 1 is float32", run, "LowerBound",
        { T(sorted), T(values, "float32") })
      h.raises("INVALID_ARGUMENT", "out_type must be int32 or int64, got float32", run, "LowerBound",
        { T(sorted), T(values) }, { out_type = "float32" })
    end)
  end)

  describe("Unique, UniqueV2 and ListDiff", function()
    it("Unique keeps first occurrences in order, with idx of out_idx", function()
      for _, dt in ipairs { "float32", "float64", "int32", "int64", "uint8", "float16" } do
        local y, idx = run("Unique", { T({ 1, 1, 2, 4, 4, 4, 7, 8, 8 }, dt) }, nil, 2)
        assert.are.same({ 1, 2, 4, 7, 8 }, y:totable(), dt)
        assert.are.same({ 0, 0, 1, 2, 2, 2, 3, 4, 4 }, idx:totable(), dt)
        assert.are.equal("int32", idx.dtype)
      end
      local y, idx = run("Unique", { T({ true, false, true }, "bool") }, { out_idx = "int64" }, 2)
      assert.are.same({ true, false }, y:totable())
      assert.are.same({ 0, 1, 0 }, idx:totable())
      assert.are.equal("int64", idx.dtype)
      -- -0 equals 0; NaN equals nothing (TensorFlow's ==)
      y, idx = run("Unique", { T({ 0, -0.0, 0 / 0, 0 / 0, 3 }, "float32") }, nil, 2)
      assert.are.same({ 4 }, y.shape)
      assert.are.same({ 0, 0, 1, 2, 3 }, idx:totable())
      y, idx = run("Unique", { empty({ 0 }) }, nil, 2)
      assert.are.same({ 0 }, y.shape)
      assert.are.same({ 0 }, idx.shape)
    end)

    it("Unique matches a Lua reference on many random values", function()
      local r = lcg(3)
      local x, want_y, want_idx, seen = {}, {}, {}, {}
      for i = 1, 2000 do
        x[i] = r(300) - 150
        if seen[x[i]] == nil then
          want_y[#want_y + 1] = x[i]
          seen[x[i]] = #want_y - 1
        end
        want_idx[i] = seen[x[i]]
      end
      local y, idx = run("Unique", { T(x, "int64") }, nil, 2)
      assert.are.same(want_y, y:totable())
      assert.are.same(want_idx, idx:totable())
    end)

    it("UniqueV2 finds unique slices along an axis, as TensorFlow's documented examples", function()
      local x = T({ { 1, 0, 0 }, { 1, 0, 0 }, { 2, 0, 0 } })
      local y, idx = run("UniqueV2", { x, T({ 0 }, "int64") }, nil, 2)
      assert.are.same({ { 1, 0, 0 }, { 2, 0, 0 } }, y:totable())
      assert.are.same({ 0, 0, 1 }, idx:totable())
      y, idx = run("UniqueV2", { x, T({ 1 }) }, nil, 2)
      assert.are.same({ { 1, 0 }, { 1, 0 }, { 2, 0 } }, y:totable())
      assert.are.same({ 0, 1, 1 }, idx:totable())
      y, idx = run("UniqueV2", { x, T({ -1 }) }, nil, 2)
      assert.are.same({ 0, 1, 1 }, idx:totable())
      y, idx = run("UniqueV2", { T({ 3, 1, 3 }, "float64"), empty({ 0 }, "int64") }, nil, 2)
      assert.are.same({ 3, 1 }, y:totable())
      assert.are.same({ 0, 1, 0 }, idx:totable())
      -- rank 3 along the middle axis: a slice is every element with that index, equal only if all are
      local x3 = { { { 1, 2 }, { 3, 4 }, { 1, 2 } }, { { 5, 6 }, { 7, 8 }, { 5, 6 } } }
      y, idx = run("UniqueV2", { T(x3, "float32"), T({ 1 }, "int64") }, { out_idx = "int64" }, 2)
      assert.are.same({ { { 1, 2 }, { 3, 4 } }, { { 5, 6 }, { 7, 8 } } }, y:totable())
      assert.are.same({ 0, 1, 0 }, idx:totable())
      x3[2][3][2] = 0
      y, idx = run("UniqueV2", { T(x3, "uint8"), T({ 1 }) }, nil, 2)
      assert.are.same(x3, y:totable())
      assert.are.same({ 0, 1, 2 }, idx:totable())
      y, idx = run("UniqueV2", { T(x3), T({ 2 }) }, nil, 2)
      assert.are.same({ 2, 3, 2 }, y.shape)
      assert.are.same({ 0, 1 }, idx:totable())
      y, idx = run("UniqueV2", { empty({ 3, 0 }), T({ 0 }) }, nil, 2)
      assert.are.same({ 1, 0 }, y.shape)
      assert.are.same({ 0, 0, 0 }, idx:totable())
      h.raises("INVALID_ARGUMENT", "axis has to be between [0, 2)", run, "UniqueV2", { x, T({ 2 }) }, nil, 2)
      h.raises("INVALID_ARGUMENT", "axis does not support input tensors larger than 1 elements", run, "UniqueV2",
        { x, T({ 0, 1 }) }, nil, 2)
      h.raises("INVALID_ARGUMENT", "unique expects a 1D vector.", run, "UniqueV2", { x, empty({ 0 }, "int64") }, nil, 2)
      h.raises("INVALID_ARGUMENT", "x (input 0) must have rank 1", run, "Unique", { T(4) }, nil, 2)
    end)

    it("ListDiff keeps the values of x not in y, in order, with their positions", function()
      for _, dt in ipairs { "float32", "float64", "int32", "int64", "uint8", "float16" } do
        local out, idx = run("ListDiff", { T({ 1, 2, 3, 4, 5, 6 }, dt), T({ 1, 3, 5 }, dt) }, nil, 2)
        assert.are.same({ 2, 4, 6 }, out:totable(), dt)
        assert.are.same({ 1, 3, 5 }, idx:totable(), dt)
      end
      local out, idx = run("ListDiff", { T({ 4, 4, 2 }), empty({ 0 }, "int32") }, { out_idx = "int64" }, 2)
      assert.are.same({ 4, 4, 2 }, out:totable())
      assert.are.same({ 0, 1, 2 }, idx:totable())
      assert.are.equal("int64", idx.dtype)
      out = run("ListDiff", { T({ 1, 1 }), T({ 1 }) }, nil, 2)
      assert.are.same({ 0 }, out.shape)
      h.raises("INVALID_ARGUMENT", "x (input 0) must have rank 1", run, "ListDiff", { T({ { 1 } }), T({ 1 }) }, nil, 2)
      h.raises("INVALID_ARGUMENT", "y (input 1) must have rank 1", run, "ListDiff", { T({ 1 }), T(1) }, nil, 2)
    end)
  end)

  it("FusedBatchNormV2 computes FusedBatchNorm's inference with a U attribute", function()
    local x = T({ { { { 1, 2 }, { 3, 4 } } } }, "float32")
    local args = { x, T({ 1, 2 }, "float32"), T({ 0.5, 0 }, "float32"), T({ 1, 2 }, "float32"), T({ 4, 1 }, "float32") }
    local attrs = { epsilon = 0, U = "float32", is_training = false }
    local y = run("FusedBatchNormV2", args, attrs)
    local v1 = run("FusedBatchNorm", args, { epsilon = 0, is_training = false })
    assert.are.same(v1:totable(), y:totable())
    assert.are.same({ { { { 0.5, 0 }, { 1.5, 4 } } } }, y:totable())
    h.raises("INVALID_ARGUMENT", "U must be float32", run, "FusedBatchNormV2", args,
      { epsilon = 0, U = "float64", is_training = false })
  end)
end)
