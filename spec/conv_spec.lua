-- Convolution ops (NHWC) against a direct reference written here in Lua: Conv2D, _FusedConv2D,
-- DepthwiseConv2dNative, MaxPool, AvgPool, Pad, PadV2, Prelu; then the real TensorFlow.js
-- models of ../shared/models against the outputs TensorFlow.js computed.
local tfdev = require "tfdev"
local h = require "spec.support.helpers"

local rand_tensor = h.random_values

local window = h.window -- TensorFlow's window: output size and padding before

local ref_conv, ref_pool = h.conv_reference, h.pool_reference

local assert_close = h.assert_close

local function run_op(op, inputs, attrs) return h.run_node(op, inputs, attrs)[1]:totable() end

describe("convolution ops", function()
  after_each(function() tfdev.factory.reset() end)

  local cases = {
    { "SAME, odd sizes, stride 1", { 1, 7, 5, 3 }, { 3, 3, 3, 4 }, { 1, 1, 1, 1 }, "SAME" },
    { "SAME, stride 2, even sizes", { 2, 8, 6, 2 }, { 3, 3, 2, 5 }, { 1, 2, 2, 1 }, "SAME" },
    { "SAME, stride 2, odd sizes", { 1, 7, 9, 2 }, { 2, 2, 2, 3 }, { 1, 2, 2, 1 }, "SAME" },
    { "VALID, stride 3", { 1, 10, 11, 3 }, { 3, 2, 3, 2 }, { 1, 3, 3, 1 }, "VALID" },
    { "VALID, window larger than the input", { 1, 2, 2, 1 }, { 3, 3, 1, 2 }, { 1, 1, 1, 1 }, "VALID" },
    { "pointwise 1x1", { 2, 4, 4, 6 }, { 1, 1, 6, 3 }, { 1, 1, 1, 1 }, "VALID" },
    { "dilations 2", { 1, 9, 8, 2 }, { 3, 3, 2, 2 }, { 1, 1, 1, 1 }, "SAME", { 1, 2, 2, 1 } },
    { "EXPLICIT padding", { 1, 5, 5, 2 }, { 3, 3, 2, 2 }, { 1, 2, 1, 1 }, "EXPLICIT", nil, { 0, 0, 1, 2, 0, 3, 0, 0 } },
  }
  for _, case in ipairs(cases) do
    local name, xs, fs, strides, padding, dil, ex = table.unpack(case)
    it("Conv2D: " .. name, function()
      local x, f = rand_tensor(xs, 3), rand_tensor(fs, 5)
      local attrs = { strides = strides, padding = padding, dilations = dil, explicit_paddings = ex }
      local got = run_op("Conv2D", { tfdev.tensor(x, "float32"), tfdev.tensor(f, "float32") }, attrs)
      assert_close(ref_conv(x, f, { strides = strides, padding = padding, dilations = dil, explicit_paddings = ex }), got, 1e-4)
    end)
    it("DepthwiseConv2dNative: " .. name, function()
      local dfs = { fs[1], fs[2], xs[4], 2 } -- channel multiplier 2
      local x, f = rand_tensor(xs, 7), rand_tensor(dfs, 9)
      local attrs = { strides = strides, padding = padding, dilations = dil, explicit_paddings = ex }
      local got = run_op("DepthwiseConv2dNative", { tfdev.tensor(x, "float32"), tfdev.tensor(f, "float32") }, attrs)
      assert_close(ref_conv(x, f, { strides = strides, padding = padding, dilations = dil, explicit_paddings = ex,
        depthwise = true }), got, 1e-4)
    end)
  end

  it("_FusedConv2D: BiasAdd, + Relu, + Prelu, FusedBatchNorm + Relu, BiasAdd + Add + Relu; unknown fusions refused", function()
    local x, f = rand_tensor({ 1, 6, 5, 3 }, 11), rand_tensor({ 3, 3, 3, 4 }, 13)
    local bias, alpha = { 0.5, -0.25, 0, 1 }, { 0.1, 0.2, 0.3, 0.4 }
    local X, F, B = tfdev.tensor(x, "float32"), tfdev.tensor(f, "float32"), tfdev.tensor(bias, "float32")
    local base = { strides = { 1, 1, 1, 1 }, padding = "SAME", num_args = 1 }
    local function attrs(ops, extra)
      local a = { fused_ops = ops }
      for k, v in pairs(base) do a[k] = v end
      for k, v in pairs(extra or {}) do a[k] = v end
      return a
    end
    local o = { strides = base.strides, padding = "SAME", bias = bias }
    assert_close(ref_conv(x, f, o), run_op("_FusedConv2D", { X, F, B }, attrs { "BiasAdd" }), 1e-4)
    o.relu = true
    assert_close(ref_conv(x, f, o), run_op("_FusedConv2D", { X, F, B }, attrs { "BiasAdd", "Relu" }), 1e-4)
    o.relu, o.prelu = nil, alpha
    assert_close(ref_conv(x, f, o), run_op("_FusedConv2D", { X, F, B, tfdev.tensor({ { alpha } }, "float32") },
      attrs({ "BiasAdd", "Prelu" }, { num_args = 2 })), 1e-4)
    -- [FusedBatchNorm, Relu]: (conv - mean) * scale / sqrt(variance + epsilon) + offset, then Relu
    local scale, offset, mean, var = { 1, 2, 0.5, -1 }, { 0.1, 0, -0.2, 0.3 }, { 0.5, -0.5, 0, 1 }, { 1, 0.25, 4, 0.5 }
    local plain = ref_conv(x, f, { strides = base.strides, padding = "SAME" })
    local want = {}
    for n = 1, #plain do
      want[n] = {}
      for yy = 1, #plain[n] do
        want[n][yy] = {}
        for xx = 1, #plain[n][yy] do
          local v = {}
          for q = 1, 4 do
            v[q] = math.max(0, (plain[n][yy][xx][q] - mean[q]) * scale[q] / math.sqrt(var[q] + 0.001) + offset[q])
          end
          want[n][yy][xx] = v
        end
      end
    end
    local T = function(v) return tfdev.tensor(v, "float32") end
    assert_close(want, run_op("_FusedConv2D", { X, F, T(scale), T(offset), T(mean), T(var) },
      attrs({ "FusedBatchNorm", "Relu" }, { num_args = 4, epsilon = 0.001 })), 1e-4)
    -- [BiasAdd, Add, Relu]: conv + bias + addend, then Relu
    local addend = rand_tensor({ 1, 6, 5, 4 }, 21)
    o = { strides = base.strides, padding = "SAME", bias = bias }
    local sum = ref_conv(x, f, o)
    for n = 1, #sum do
      for yy = 1, #sum[n] do
        for xx = 1, #sum[n][yy] do
          for q = 1, 4 do sum[n][yy][xx][q] = math.max(0, sum[n][yy][xx][q] + addend[n][yy][xx][q]) end
        end
      end
    end
    assert_close(sum, run_op("_FusedConv2D", { X, F, B, T(addend) }, attrs({ "BiasAdd", "Add", "Relu" }, { num_args = 2 })),
      1e-4)
    h.raises("INVALID_ARGUMENT", "FusedBatchNorm's variance must hold 4 float32 values", run_op, "_FusedConv2D",
      { X, F, T(scale), T(offset), T(mean), T({ 1 }) }, attrs({ "FusedBatchNorm" }, { num_args = 4 }))
    h.raises("INVALID_ARGUMENT", "fused_ops [BiasAdd,Add] take 4 inputs, got 3", run_op, "_FusedConv2D", { X, F, B },
      attrs({ "BiasAdd", "Add" }, { num_args = 2 }))
    h.raises("UNIMPLEMENTED", "Fusion is not implemented: [BiasAdd,Softsign]", run_op, "_FusedConv2D", { X, F, B },
      attrs { "BiasAdd", "Softsign" })
    h.raises("INVALID_ARGUMENT", "take 4 inputs, got 3", run_op, "_FusedConv2D", { X, F, B }, attrs { "BiasAdd", "Prelu" })
    h.raises("INVALID_ARGUMENT", "input depth 3 does not match the filter's in_channels 2", run_op, "Conv2D",
      { X, tfdev.tensor(rand_tensor({ 1, 1, 2, 2 }, 1), "float32") }, base)
    h.raises("INVALID_ARGUMENT", "padding must be SAME, VALID or EXPLICIT, got 'FULL'", run_op, "Conv2D", { X, F },
      { strides = { 1, 1, 1, 1 }, padding = "FULL" })
    h.raises("INVALID_ARGUMENT", "strides and dilations must be 4 values", run_op, "Conv2D", { X, F },
      { strides = { 1, 0, 1, 1 }, padding = "SAME" })
    h.raises("UNIMPLEMENTED", "data_format NCHW is not supported", run_op, "Conv2D", { X, F },
      { strides = { 1, 1, 1, 1 }, padding = "SAME", data_format = "NCHW" })
  end)

  for _, case in ipairs {
    { "MaxPool", "SAME", { 1, 3, 3, 1 }, { 1, 2, 2, 1 }, { 1, 7, 6, 3 } },
    { "MaxPool", "VALID", { 1, 2, 2, 1 }, { 1, 2, 2, 1 }, { 2, 8, 8, 2 } },
    { "AvgPool", "SAME", { 1, 3, 3, 1 }, { 1, 2, 2, 1 }, { 1, 5, 7, 2 } },
    { "AvgPool", "VALID", { 1, 2, 3, 1 }, { 1, 1, 2, 1 }, { 1, 4, 7, 2 } },
  } do
    local op, padding, ksize, strides, xs = table.unpack(case)
    it(op .. ": " .. padding .. " windows (padding left out of the max and the average)", function()
      local x = rand_tensor(xs, 17)
      local got = run_op(op, { tfdev.tensor(x, "float32") }, { ksize = ksize, strides = strides, padding = padding })
      assert_close(ref_pool(x, { ksize = ksize, strides = strides, padding = padding, max = op == "MaxPool" }), got, 1e-5)
    end)
  end

  -- Channel counts around the 16-value vectors pool_range works in (16, 32, and 20 = 16 + a tail of 4),
  -- windows clipped by SAME padding and whole ones; NaN never wins a max, as in TensorFlow's kernel.
  for _, c in ipairs { 16, 20, 32 } do
    for _, case in ipairs {
      { "MaxPool", "VALID", { 1, 2, 2, 1 }, { 1, 2, 2, 1 }, { 2, 6, 6, c } },
      { "MaxPool", "SAME", { 1, 3, 3, 1 }, { 1, 2, 2, 1 }, { 1, 5, 7, c } },
      { "AvgPool", "SAME", { 1, 3, 3, 1 }, { 1, 1, 1, 1 }, { 1, 4, 5, c } },
    } do
      local op, padding, ksize, strides, xs = table.unpack(case)
      it(op .. " over " .. c .. " channels, " .. padding, function()
        local x = rand_tensor(xs, 19)
        local got = run_op(op, { tfdev.tensor(x, "float32") }, { ksize = ksize, strides = strides, padding = padding })
        assert_close(ref_pool(x, { ksize = ksize, strides = strides, padding = padding, max = op == "MaxPool" }), got, 1e-5)
      end)
    end
  end

  it("MaxPool: NaN never wins, on the vector path too", function()
    local x = rand_tensor({ 1, 2, 2, 16 }, 23)
    x[1][1][2][3], x[1][2][1][16] = 0 / 0, 0 / 0
    local got = run_op("MaxPool", { tfdev.tensor(x, "float32") }, { ksize = { 1, 2, 2, 1 }, strides = { 1, 2, 2, 1 },
      padding = "VALID" })
    for ch = 1, 16 do
      local want = -math.huge
      for yy = 1, 2 do
        for xx = 1, 2 do
          local v = x[1][yy][xx][ch]
          if v > want then want = v end
        end
      end
      assert(math.abs(want - got[1][1][1][ch]) < 1e-6 and got[1][1][1][ch] == got[1][1][1][ch],
        string.format("channel %d: %g, want %g", ch, got[1][1][1][ch], want))
    end
  end)

  it("Pad of the last dimension alone (a channel pad): before, after, vectors and tails, any 4-byte dtype", function()
    for _, case in ipairs { { 16, 0, 16 }, { 20, 3, 5 }, { 5, 1, 0 }, { 37, 0, 27 } } do
      local c, lo, hi = table.unpack(case)
      local x = rand_tensor({ 2, 3, 2, c }, c)
      local got = run_op("Pad", { tfdev.tensor(x, "float32"), tfdev.tensor({ { 0, 0 }, { 0, 0 }, { 0, 0 }, { lo, hi } }, "int32") },
        {})
      local ints, want_i = {}, {}
      for n = 1, 2 do
        for yy = 1, 3 do
          for xx = 1, 2 do
            local row = got[n][yy][xx]
            assert.are.equal(lo + c + hi, #row)
            for i = 1, lo + c + hi do
              local want = (i > lo and i <= lo + c) and x[n][yy][xx][i - lo] or 0
              assert(math.abs(row[i] - want) < 1e-6, string.format("c %d [%d][%d][%d][%d]: %g, want %g", c, n, yy, xx,
                i, row[i], want))
            end
          end
        end
      end
      -- int32 with a constant: the same walk, moving bits
      for i = 1, c do ints[i] = i * 1000003 - 7 end
      for i = 1, lo + c + hi do want_i[i] = (i > lo and i <= lo + c) and ints[i - lo] or -5 end
      assert.are.same({ { want_i } }, run_op("PadV2", { tfdev.tensor({ { ints } }, "int32"),
        tfdev.tensor({ { 0, 0 }, { 0, 0 }, { lo, hi } }, "int32"), tfdev.tensor(-5, "int32") }, {}))
    end
  end)

  -- 1x1 convolutions with an epilogue oneDNN cannot fuse (Prelu, the batch norm): on an AVX-512 CPU the
  -- pointwise kernel, elsewhere oneDNN or im2col and a pass; the values are the same either way.
  for _, co in ipairs { { 8, 16 }, { 24, 32 }, { 16, 48 }, { 40, 64 }, { 3, 80 } } do
    local c, o = co[1], co[2]
    it("_FusedConv2D 1x1 " .. c .. " -> " .. o .. ": [BiasAdd, Prelu], [BiasAdd, Add, Prelu], [FusedBatchNorm, Prelu]",
      function()
      local x, f = rand_tensor({ 2, 5, 3, c }, 31), rand_tensor({ 1, 1, c, o }, 37)
      local bias, alpha, addend = {}, {}, rand_tensor({ 2, 5, 3, o }, 41)
      for i = 1, o do bias[i], alpha[i] = (i % 7) / 10 - 0.3, i / (3 * o) end
      local T = function(v) return tfdev.tensor(v, "float32") end
      local attrs = function(ops) return { strides = { 1, 1, 1, 1 }, padding = "VALID", fused_ops = ops, num_args = #ops } end
      local o1 = { strides = { 1, 1, 1, 1 }, padding = "VALID", bias = bias, prelu = alpha }
      assert_close(ref_conv(x, f, o1), run_op("_FusedConv2D", { T(x), T(f), T(bias), T(alpha) }, attrs { "BiasAdd", "Prelu" }),
        1e-4)
      local want = ref_conv(x, f, { strides = { 1, 1, 1, 1 }, padding = "VALID", bias = bias })
      for n = 1, 2 do
        for yy = 1, 5 do
          for xx = 1, 3 do
            for q = 1, o do
              local v = want[n][yy][xx][q] + addend[n][yy][xx][q]
              want[n][yy][xx][q] = v > 0 and v or alpha[q] * v
            end
          end
        end
      end
      assert_close(want, run_op("_FusedConv2D", { T(x), T(f), T(bias), T(addend), T(alpha) },
        attrs { "BiasAdd", "Add", "Prelu" }), 1e-4)
      local scale, offset, mean, var = {}, {}, {}, {}
      for i = 1, o do scale[i], offset[i], mean[i], var[i] = 1 + i / o, -0.1 * (i % 3), 0.05 * (i % 5), 0.5 + i / o end
      local plain = ref_conv(x, f, { strides = { 1, 1, 1, 1 }, padding = "VALID" })
      for n = 1, 2 do
        for yy = 1, 5 do
          for xx = 1, 3 do
            for q = 1, o do
              local v = (plain[n][yy][xx][q] - mean[q]) * scale[q] / math.sqrt(var[q] + 0.001) + offset[q]
              plain[n][yy][xx][q] = v > 0 and v or alpha[q] * v
            end
          end
        end
      end
      local a = attrs { "FusedBatchNorm", "Prelu" }
      a.num_args, a.epsilon = 5, 0.001
      assert_close(plain, run_op("_FusedConv2D", { T(x), T(f), T(scale), T(offset), T(mean), T(var), T(alpha) }, a), 1e-4)
      h.raises("INVALID_ARGUMENT", "fused_ops [BiasAdd,Add,Prelu] take 5 inputs, got 4", run_op, "_FusedConv2D",
        { T(x), T(f), T(bias), T(alpha) }, attrs { "BiasAdd", "Add", "Prelu" })
    end)
  end

  it("Pad and PadV2: by dimension, any dtype, with a constant", function()
    local x = tfdev.tensor({ { 1, 2 }, { 3, 4 } }, "int32")
    assert.are.same({ { 0, 0, 0, 0, 0 }, { 0, 1, 2, 0, 0 }, { 0, 3, 4, 0, 0 } },
      run_op("Pad", { x, tfdev.tensor({ { 1, 0 }, { 1, 2 } }, "int32") }, {}))
    assert.are.same({ { 9, 9 }, { 1, 2 }, { 3, 4 }, { 9, 9 } },
      run_op("PadV2", { x, tfdev.tensor({ { 1, 1 }, { 0, 0 } }, "int64"), tfdev.tensor(9, "int32") }, {}))
    local f = tfdev.tensor(rand_tensor({ 1, 2, 2, 1 }, 3), "float32")
    local got = run_op("Pad", { f, tfdev.tensor({ { 0, 0 }, { 1, 1 }, { 0, 1 }, { 0, 0 } }, "int32") }, {})
    assert.are.same({ 1, 4, 3, 1 }, { #got, #got[1], #got[1][1], #got[1][1][1] })
    assert.are.equal(0, got[1][1][1][1])
    h.raises("INVALID_ARGUMENT", "paddings must have shape [2, 2]", run_op, "Pad",
      { x, tfdev.tensor({ 1, 1 }, "int32") }, {})
    h.raises("INVALID_ARGUMENT", "paddings must not be negative", run_op, "Pad",
      { x, tfdev.tensor({ { 0, -1 }, { 0, 0 } }, "int32") }, {})
  end)

  it("Prelu: alpha broadcast over the trailing dimensions", function()
    local x = tfdev.tensor({ { { -2, 3 }, { -4, -1 } } }, "float32")
    assert.are.same({ { { -0.5, 3 }, { -1, -0.5 } } },
      run_op("Prelu", { x, tfdev.tensor({ 0.25, 0.5 }, "float32") }, {}))
    h.raises("INVALID_ARGUMENT", "alpha [3] must broadcast over [1,2,2]", run_op, "Prelu",
      { x, tfdev.tensor({ 1, 2, 3 }, "float32") }, {})
    -- Keras' layouts: [1, 1, C] (shared axes), the whole [H, W, C], and one value (a LeakyRelu)
    assert.are.same({ { { -0.5, 3 }, { -1, -0.5 } } },
      run_op("Prelu", { x, tfdev.tensor({ { { 0.25, 0.5 } } }, "float32") }, {}))
    assert.are.same({ { { -0.5, 3 }, { -4, -0.25 } } },
      run_op("Prelu", { x, tfdev.tensor({ { 0.25, 9 }, { 1, 0.25 } }, "float32") }, {}))
    assert.are.same({ { { -1, 3 }, { -2, -0.5 } } }, run_op("Prelu", { x, tfdev.tensor({ { 0.5 } }, "float32") }, {}))
    -- NaN stays NaN; long rows (the vectorised path) against the definition
    local nan = run_op("Prelu", { tfdev.tensor({ 0 / 0, -1 }, "float32"), tfdev.tensor({ 0.5, 0.5 }, "float32") }, {})
    assert.is_true(nan[1] ~= nan[1])
    local n, c = 3000, 7
    local xs, al, want = {}, {}, {}
    for i = 1, c do al[i] = i / 8 end
    for i = 1, n do
      local row = {}
      for j = 1, c do
        local v = ((i * 31 + j * 17) % 23 - 11) / 4
        row[j] = v
      end
      xs[i] = row
      local w = {}
      for j = 1, c do w[j] = row[j] > 0 and row[j] or al[j] * row[j] end
      want[i] = w
    end
    h.assert_close(want, run_op("Prelu", { tfdev.tensor(xs, "float32"), tfdev.tensor(al, "float32") }, {}), 1e-6)
    -- a broadcast the kernel does not do, and a wrong dtype
    h.raises("UNIMPLEMENTED", "alpha [2,1] broadcasts over [1,2,2] in a way not implemented", run_op, "Prelu",
      { x, tfdev.tensor({ { 1 }, { 2 } }, "float32") }, {})
    h.raises("INVALID_ARGUMENT", "alpha must be float32, got int32", run_op, "Prelu", { x, tfdev.tensor({ 1, 2 }, "int32") }, {})
  end)
end)

-- ---- the real models: ../shared/models (see its README) ----
local json = require "dkjson"
local root = (debug.getinfo(1, "S").source:match("^@(.*)/spec/[^/]*$") or ".") .. "/../shared/models/"

describe("TensorFlow.js models against TensorFlow.js's outputs", function()
  for _, name in ipairs { "emotion", "blazeface", "facemesh", "antispoof" } do
    local dir = root .. name .. "/"
    local ref_text = h.read_file(dir .. "reference.json")
    if not ref_text then
      pending(name .. ": " .. dir .. " is not in this checkout")
    else
      it(name .. ": every output within 1e-3 x max(1, max |reference|)", function()
        local ref = json.decode(ref_text)
        local m <close> = tfdev.model(dir .. name .. ".json", { intra_op_threads = 1 })
        local feeds, fetches = h.reference_feeds(ref, dir)
        local outs = m.session:run(feeds, fetches)
        for i, o in ipairs(ref.outputs) do
          local want = tfdev.from_bytes(o.dtype, o.shape, h.read_file(dir .. "output_" .. (i - 1) .. ".bin")):totable()
          assert.are.same(o.shape, outs[i].shape)
          assert_close(want, outs[i]:totable(), 1e-3 * math.max(1, o.max_abs), name .. " " .. o.name)
        end
      end)
    end
  end
end)
