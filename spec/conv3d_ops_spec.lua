-- The convolution family of issue 26: Conv3D, MaxPool3D, AvgPool3D (NDHWC), MaxPoolWithArgmax and Dilation2D
-- (NHWC), against references written here as plain nested loops over TensorFlow's definitions (windows by
-- TensorFlow's GetWindowedOutputSize: SAME pads ceil(in / stride) outputs with the smaller half before), on every
-- dtype TensorFlow's CPU kernels take that tfdev holds, empty batches, and TensorFlow's error texts.
local tfdev = require "tfdev"
local h = require "spec.support.helpers"

-- ---- tensors and runs ----
local function T(dtype, shape, data) return tfdev.tensor { dtype = dtype, shape = shape, data = data } end

local function numel(shape)
  local n = 1
  for _, d in ipairs(shape) do n = n * d end
  return n
end

-- n deterministic values: multiples of 1/16 in [-4, 4) (exact in float16 and float32), or integers in [lo, hi].
local function values(n, seed, lo, hi)
  local out = {}
  for i = 1, n do
    seed = (seed * 1103515245 + 12345) % 2147483648
    if lo then out[i] = lo + seed % (hi - lo + 1) else out[i] = (seed % 128 - 64) / 16 end
  end
  return out
end

local function flat(t)
  local out = {}
  local function walk(v)
    if type(v) == "table" then for _, x in ipairs(v) do walk(x) end else out[#out + 1] = v end
  end
  walk(t:totable())
  return out
end

local function run(op, inputs, attrs, nout)
  local fetches = { "y" }
  for i = 1, nout or 0 do fetches[i] = "y:" .. (i - 1) end
  return table.unpack(h.run_node(op, inputs, attrs, fetches))
end

local run_fed = h.run_fed -- the shapes reach the kernel unchecked by inference

local function assert_close(want, got, tol, what)
  assert.are.equal(#want, #got, what .. ": element count")
  for i = 1, #want do
    local w, g = want[i], got[i]
    local ok = (w ~= w and g ~= g) or math.abs(w - g) <= tol * math.max(1, math.abs(w))
    assert(ok, string.format("%s: element %d is %s, want %s", what, i, tostring(g), tostring(w)))
  end
end

-- ---- references ----
-- TensorFlow's window for one dimension: output size, padding before.
local function window(n, k, stride, dilation, same)
  local span = (k - 1) * dilation + 1
  if same then
    local out = (n + stride - 1) // stride
    return out, math.max((out - 1) * stride + span - n, 0) // 2
  end
  return (n - span + stride) // stride, 0
end

-- Row-major offset of idx (0-based) in shape.
local function offset(shape, idx)
  local o = 0
  for d = 1, #shape do o = o * shape[d] + idx[d] end
  return o
end

-- Conv3D: x [n, d, h, w, c], f [kd, kh, kw, c, o]; zeros outside the input.
local function ref_conv3d(x, xs, f, fs, strides, same)
  local out, pad = {}, {}
  for i = 1, 3 do out[i], pad[i] = window(xs[i + 1], fs[i], strides[i], 1, same) end
  local ys, y = { xs[1], out[1], out[2], out[3], fs[5] }, {}
  for b = 0, xs[1] - 1 do
    for z = 0, out[1] - 1 do
      for r = 0, out[2] - 1 do
        for s = 0, out[3] - 1 do
          for o = 0, fs[5] - 1 do
            local acc = 0
            for kz = 0, fs[1] - 1 do
              for ky = 0, fs[2] - 1 do
                for kx = 0, fs[3] - 1 do
                  local iz, iy, ix = z * strides[1] - pad[1] + kz, r * strides[2] - pad[2] + ky, s * strides[3] - pad[3] + kx
                  if iz >= 0 and iz < xs[2] and iy >= 0 and iy < xs[3] and ix >= 0 and ix < xs[4] then
                    for ch = 0, xs[5] - 1 do
                      acc = acc + x[offset(xs, { b, iz, iy, ix, ch }) + 1] * f[offset(fs, { kz, ky, kx, ch, o }) + 1]
                    end
                  end
                end
              end
            end
            y[offset(ys, { b, z, r, s, o }) + 1] = acc
          end
        end
      end
    end
  end
  return y, ys
end

-- MaxPool3D / AvgPool3D: max of the in-bounds elements, or their mean (divided by their count).
local function ref_pool3d(x, xs, k, strides, same, max)
  local out, pad = {}, {}
  for i = 1, 3 do out[i], pad[i] = window(xs[i + 1], k[i], strides[i], 1, same) end
  local ys, y = { xs[1], out[1], out[2], out[3], xs[5] }, {}
  for b = 0, xs[1] - 1 do
    for z = 0, out[1] - 1 do
      for r = 0, out[2] - 1 do
        for s = 0, out[3] - 1 do
          for ch = 0, xs[5] - 1 do
            local acc, count = max and -math.huge or 0, 0
            for kz = 0, k[1] - 1 do
              for ky = 0, k[2] - 1 do
                for kx = 0, k[3] - 1 do
                  local iz, iy, ix = z * strides[1] - pad[1] + kz, r * strides[2] - pad[2] + ky, s * strides[3] - pad[3] + kx
                  if iz >= 0 and iz < xs[2] and iy >= 0 and iy < xs[3] and ix >= 0 and ix < xs[4] then
                    local v = x[offset(xs, { b, iz, iy, ix, ch }) + 1]
                    if max then acc = math.max(acc, v) else acc = acc + v end
                    count = count + 1
                  end
                end
              end
            end
            y[offset(ys, { b, z, r, s, ch }) + 1] = max and acc or acc / count
          end
        end
      end
    end
  end
  return y, ys
end

-- MaxPoolWithArgmax: the first in-bounds maximum in row-major order, and its flat index
-- ((b * h + y) * w + x) * c + ch, b only with_batch.
local function ref_argmax(x, xs, k, strides, same, with_batch)
  local out, pad = {}, {}
  for i = 1, 2 do out[i], pad[i] = window(xs[i + 1], k[i], strides[i], 1, same) end
  local ys, y, arg = { xs[1], out[1], out[2], xs[4] }, {}, {}
  for b = 0, xs[1] - 1 do
    for r = 0, out[1] - 1 do
      for s = 0, out[2] - 1 do
        for ch = 0, xs[4] - 1 do
          local best, where
          for ky = 0, k[1] - 1 do
            for kx = 0, k[2] - 1 do
              local iy, ix = r * strides[1] - pad[1] + ky, s * strides[2] - pad[2] + kx
              if iy >= 0 and iy < xs[2] and ix >= 0 and ix < xs[3] then
                local v = x[offset(xs, { b, iy, ix, ch }) + 1]
                if not where or v > best then
                  best, where = v, ((with_batch and b or 0) * xs[2] + iy) * xs[3] * xs[4] + ix * xs[4] + ch
                end
              end
            end
          end
          local at = offset(ys, { b, r, s, ch }) + 1
          y[at], arg[at] = best, where
        end
      end
    end
  end
  return y, arg, ys
end

-- Dilation2D: max over in-bounds taps of x + f (taps rate apart), from `lowest`.
local function ref_dilation(x, xs, f, fs, strides, rates, same, lowest)
  local out, pad = {}, {}
  for i = 1, 2 do out[i], pad[i] = window(xs[i + 1], fs[i], strides[i], rates[i], same) end
  local ys, y = { xs[1], out[1], out[2], xs[4] }, {}
  for b = 0, xs[1] - 1 do
    for r = 0, out[1] - 1 do
      for s = 0, out[2] - 1 do
        for ch = 0, xs[4] - 1 do
          local best = lowest
          for ky = 0, fs[1] - 1 do
            for kx = 0, fs[2] - 1 do
              local iy, ix = r * strides[1] - pad[1] + ky * rates[1], s * strides[2] - pad[2] + kx * rates[2]
              if iy >= 0 and iy < xs[2] and ix >= 0 and ix < xs[3] then
                best = math.max(best, x[offset(xs, { b, iy, ix, ch }) + 1] + f[offset(fs, { ky, kx, ch }) + 1])
              end
            end
          end
          y[offset(ys, { b, r, s, ch }) + 1] = best
        end
      end
    end
  end
  return y, ys
end

local function l5(a, b, c) return { 1, a, b, c, 1 } end
local function l4(a, b) return { 1, a, b, 1 } end

describe("convolution family ops", function()
  after_each(function() tfdev.factory.reset() end)

  describe("Conv3D", function()
    local configs = {
      { "VALID stride 1", { 1, 3, 4, 4, 2 }, { 2, 2, 3, 2, 3 }, { 1, 1, 1 }, false },
      { "SAME stride 2, batch 2", { 2, 4, 5, 3, 2 }, { 3, 2, 3, 2, 3 }, { 2, 2, 1 }, true },
      { "VALID strides (1,2,3), 3 channels", { 1, 4, 6, 7, 3 }, { 2, 3, 2, 3, 4 }, { 1, 2, 3 }, false },
      { "SAME, filter past the input", { 1, 2, 2, 2, 1 }, { 3, 3, 3, 1, 2 }, { 1, 1, 1 }, true },
      { "1x1x1 pointwise", { 2, 2, 3, 2, 3 }, { 1, 1, 1, 3, 2 }, { 1, 1, 1 }, true },
      { "1x1x1 stride 2", { 1, 3, 3, 3, 2 }, { 1, 1, 1, 2, 2 }, { 2, 2, 2 }, false },
    }
    for ci, cfg in ipairs(configs) do
      it("matches nested loops: " .. cfg[1], function()
        local name, xs, fs, st, same = table.unpack(cfg)
        local x, f = values(numel(xs), ci), values(numel(fs), ci + 100)
        local want, ys = ref_conv3d(x, xs, f, fs, st, same)
        for _, dt in ipairs { "float32", "float64" } do
          local y = run("Conv3D", { T(dt, xs, x), T(dt, fs, f) },
            { strides = l5(st[1], st[2], st[3]), padding = same and "SAME" or "VALID" })
          assert.are.same(ys, y.shape)
          assert.are.equal(dt, y.dtype)
          assert_close(want, flat(y), dt == "float32" and 1e-5 or 1e-12, name .. " " .. dt)
        end
      end)
    end

    it("shares a larger volume's blocks over the intra-op pool with the loops' values", function()
      local xs, fs = { 2, 6, 10, 10, 8 }, { 3, 3, 3, 8, 8 }
      local x, f = values(numel(xs), 51), values(numel(fs), 52)
      local want, ys = ref_conv3d(x, xs, f, fs, { 1, 1, 1 }, true)
      local y = run("Conv3D", { T("float32", xs, x), T("float32", fs, f) }, { strides = l5(1, 1, 1), padding = "SAME" })
      assert.are.same(ys, y.shape)
      assert_close(want, flat(y), 1e-5, "blocks")
      local p = run("MaxPool3D", { T("float32", xs, x) }, { ksize = l5(2, 3, 2), strides = l5(1, 1, 1), padding = "SAME" })
      assert_close((ref_pool3d(x, xs, { 2, 3, 2 }, { 1, 1, 1 }, true, true)), flat(p), 0, "pool rows")
    end)

    it("computes float16 in float32 and rounds once (small integers: exact)", function()
      local xs, fs = { 1, 3, 3, 3, 2 }, { 2, 2, 2, 2, 2 }
      local x, f = values(numel(xs), 7, -3, 3), values(numel(fs), 8, -3, 3)
      local want, ys = ref_conv3d(x, xs, f, fs, { 1, 1, 1 }, true)
      local y = run("Conv3D", { T("float16", xs, x), T("float16", fs, f) }, { strides = l5(1, 1, 1), padding = "SAME" })
      assert.are.equal("float16", y.dtype)
      assert.are.same(ys, y.shape)
      assert_close(want, flat(y), 0, "float16")
    end)

    it("gives an empty output for an empty batch, and a window just past a VALID input", function()
      local y = run("Conv3D", { T("float32", { 0, 3, 3, 3, 1 }, {}), T("float32", { 2, 2, 2, 1, 4 }, values(32, 1)) },
        { strides = l5(1, 1, 1), padding = "VALID" })
      assert.are.same({ 0, 2, 2, 2, 4 }, y.shape)
      -- (1 - 2 + 2) / 2 = 0 planes: TensorFlow's rule gives an empty output, not an error
      y = run("Conv3D", { T("float32", { 1, 1, 3, 3, 1 }, values(9, 1)), T("float32", { 2, 1, 1, 1, 1 }, { 1, 2 }) },
        { strides = l5(2, 1, 1), padding = "VALID" })
      assert.are.same({ 1, 0, 3, 3, 1 }, y.shape)
    end)

    it("takes half, float and double only, as TensorFlow's CPU kernel", function()
      h.raises("INVALID_ARGUMENT", "T=int32 is not allowed (allowed: float32, float64, float16)", run, "Conv3D", { T("int32", { 1, 2, 2, 2, 1 }, values(8, 1, 0, 3)),
        T("int32", { 1, 1, 1, 1, 1 }, { 1 }) }, { strides = l5(1, 1, 1), padding = "VALID" })
    end)

    it("reports TensorFlow's texts", function()
      local x, f = T("float32", { 1, 3, 3, 3, 2 }, values(54, 1)), T("float32", { 2, 2, 2, 2, 1 }, values(16, 2))
      local function conv(attrs, a, b) return run("Conv3D", { a or x, b or f }, attrs) end
      h.raises("INVALID_ARGUMENT", "Sliding window strides field must specify 5 dimensions", conv,
        { strides = { 1, 1, 1, 1 }, padding = "VALID" })
      h.raises("INVALID_ARGUMENT", "Current implementation does not yet support strides in the batch and depth dimensions.",
        conv, { strides = { 2, 1, 1, 1, 1 }, padding = "VALID" })
      h.raises("INVALID_ARGUMENT", "Spatial strides should be larger than 0.", conv,
        { strides = { 1, 0, 1, 1, 1 }, padding = "VALID" })
      h.raises("INVALID_ARGUMENT", "Dilation rates field must specify 5 dimensions", conv,
        { strides = l5(1, 1, 1), padding = "VALID", dilations = { 1, 1, 1, 1 } })
      h.raises("INVALID_ARGUMENT",
        "Current implementation does not yet support dilation rates in the batch and depth dimensions.", conv,
        { strides = l5(1, 1, 1), padding = "VALID", dilations = { 1, 1, 1, 1, 2 } })
      h.raises("INVALID_ARGUMENT", "Dilated rates should be larger than 0.", conv,
        { strides = l5(1, 1, 1), padding = "VALID", dilations = { 1, 1, 0, 1, 1 } })
      h.raises("INVALID_ARGUMENT", "CPU implementation of Conv3D currently only supports dilated rates of 1.", conv,
        { strides = l5(1, 1, 1), padding = "VALID", dilations = l5(1, 2, 1) })
      h.raises("INVALID_ARGUMENT", "CPU implementation of Conv3D currently only supports the NHWC tensor format.", conv,
        { strides = l5(1, 1, 1), padding = "VALID", data_format = "NCDHW" })
      h.raises("INVALID_ARGUMENT", "Invalid data format", conv,
        { strides = l5(1, 1, 1), padding = "VALID", data_format = "NHWC" })
      local valid = { strides = l5(1, 1, 1), padding = "VALID" }
      h.raises("INVALID_ARGUMENT", "Shape must be rank 5 but is rank 4 for input", conv, valid,
        T("float32", { 3, 3, 3, 2 }, values(54, 1)))
      h.raises("INVALID_ARGUMENT", "Shape must be rank 5 but is rank 4 for filter", conv, valid, nil,
        T("float32", { 2, 2, 2, 2 }, values(16, 1)))
      h.raises("INVALID_ARGUMENT", "input must be 5-dimensional", run_fed, "Conv3D",
        { T("float32", { 3, 3, 3, 2 }, values(54, 1)), f }, valid)
      h.raises("INVALID_ARGUMENT", "filter must be 5-dimensional", run_fed, "Conv3D",
        { x, T("float32", { 2, 2, 2, 2 }, values(16, 1)) }, valid)
      h.raises("INVALID_ARGUMENT", "Input depth must be evenly divisible by filter depth: 2 vs 3", conv, valid, nil,
        T("float32", { 1, 1, 1, 3, 1 }, { 1, 2, 3 }))
      h.raises("INVALID_ARGUMENT", "Number of channels in filter (1) must match last dimension of input (2)", conv, valid,
        nil, T("float32", { 1, 1, 1, 1, 1 }, { 1 }))
      h.raises("INVALID_ARGUMENT", "filter_depth must be non-zero", conv, valid, nil, T("float32", { 1, 1, 1, 0, 1 }, {}))
      h.raises("INVALID_ARGUMENT", "filter must not have zero elements (i.e. all dimensions must be non-zero)", conv, valid,
        nil, T("float32", { 1, 1, 1, 2, 0 }, {}))
      h.raises("INVALID_ARGUMENT",
        "Computed output size would be negative: -1 [input_size: 3, effective_filter_size: 5, stride: 1]", conv, valid,
        nil, T("float32", { 5, 1, 1, 2, 1 }, values(10, 1)))
    end)
  end)

  for _, op in ipairs { "MaxPool3D", "AvgPool3D" } do
    local max = op == "MaxPool3D"
    describe(op, function()
      local configs = {
        { "VALID 2x2x2 s(1,2,2)", { 1, 2, 4, 4, 1 }, { 2, 2, 2 }, { 1, 2, 2 }, false },
        { "SAME 2x3x2 s2, batch 2, 2 channels", { 2, 3, 4, 5, 2 }, { 2, 3, 2 }, { 2, 2, 2 }, true },
        { "VALID 3x3x3, 3 channels", { 1, 3, 4, 4, 3 }, { 3, 3, 3 }, { 1, 1, 1 }, false },
        { "SAME, window past the input", { 1, 2, 2, 2, 1 }, { 3, 3, 3 }, { 1, 1, 1 }, true },
        { "VALID strides (1,2,3)", { 1, 4, 5, 7, 2 }, { 2, 2, 2 }, { 1, 2, 3 }, false },
      }
      for ci, cfg in ipairs(configs) do
        it("matches nested loops: " .. cfg[1], function()
          local name, xs, k, st, same = table.unpack(cfg)
          local x = values(numel(xs), ci + 10)
          local want, ys = ref_pool3d(x, xs, k, st, same, max)
          for _, dt in ipairs { "float32", "float64", "float16" } do
            local y = run(op, { T(dt, xs, x) }, { ksize = l5(k[1], k[2], k[3]), strides = l5(st[1], st[2], st[3]),
              padding = same and "SAME" or "VALID" })
            assert.are.same(ys, y.shape)
            assert.are.equal(dt, y.dtype)
            local tol = max and 0 or dt == "float16" and 1e-3 or dt == "float32" and 1e-6 or 1e-12
            assert_close(want, flat(y), tol, name .. " " .. dt)
          end
        end)
      end

      it("gives an empty output for an empty batch", function()
        local y = run(op, { T("float32", { 0, 2, 2, 2, 3 }, {}) }, { ksize = l5(2, 2, 2), strides = l5(1, 1, 1), padding = "VALID" })
        assert.are.same({ 0, 1, 1, 1, 3 }, y.shape)
      end)

      it("takes half, float and double only", function()
        h.raises("INVALID_ARGUMENT", "T=int32 is not allowed (allowed: float32, float64, float16)", run, op, { T("int32", { 1, 2, 2, 2, 1 }, values(8, 1, 0, 3)) },
          { ksize = l5(2, 2, 2), strides = l5(1, 1, 1), padding = "VALID" })
      end)

      it("reports TensorFlow's texts", function()
        local x = T("float32", { 1, 3, 3, 3, 1 }, values(27, 3))
        local function pool(attrs, input) return run(op, { input or x }, attrs) end
        h.raises("INVALID_ARGUMENT", "Sliding window ksize field must specify 5 dimensions", pool,
          { ksize = l4(2, 2), strides = l5(1, 1, 1), padding = "VALID" })
        h.raises("INVALID_ARGUMENT", "Sliding window stride field must specify 5 dimensions", pool,
          { ksize = l5(2, 2, 2), strides = l4(1, 1), padding = "VALID" })
        h.raises("UNIMPLEMENTED", "Pooling is not yet supported on the batch dimension.", pool,
          { ksize = { 2, 2, 2, 2, 1 }, strides = l5(1, 1, 1), padding = "VALID" })
        h.raises("UNIMPLEMENTED", "Pooling is not yet supported on the depth dimension.", pool,
          { ksize = l5(2, 2, 2), strides = { 1, 1, 1, 1, 2 }, padding = "VALID" })
        h.raises("INVALID_ARGUMENT", "Sliding window ksize for dimension 2 was zero.", pool,
          { ksize = l5(2, 0, 2), strides = l5(1, 1, 1), padding = "VALID" })
        h.raises("INVALID_ARGUMENT", "Stride must be > 0, but got 0", pool,
          { ksize = l5(2, 2, 2), strides = l5(1, 0, 1), padding = "VALID" })
        h.raises("INVALID_ARGUMENT", "Default Pooling3DOp only supports NDHWC on device type CPU", pool,
          { ksize = l5(2, 2, 2), strides = l5(1, 1, 1), padding = "VALID", data_format = "NCDHW" })
        h.raises("INVALID_ARGUMENT", "Invalid data format", pool,
          { ksize = l5(2, 2, 2), strides = l5(1, 1, 1), padding = "VALID", data_format = "NHWC" })
        local valid = { ksize = l5(2, 2, 2), strides = l5(1, 1, 1), padding = "VALID" }
        h.raises("INVALID_ARGUMENT", "Shape must be rank 5 but is rank 4 for input", pool, valid,
          T("float32", { 3, 3, 3, 1 }, values(27, 3)))
        h.raises("INVALID_ARGUMENT", "tensor_in must be 5-dimensional", run_fed, op, { T("float32", { 3, 3, 3, 1 }, values(27, 3)) },
          valid)
        h.raises("INVALID_ARGUMENT",
          "Computed output size would be negative: -1 [input_size: 3, effective_filter_size: 5, stride: 1]", pool,
          { ksize = l5(2, 5, 2), strides = l5(1, 1, 1), padding = "VALID" })
        -- a window one past the input with stride 2: (3 - 4 + 2) / 2 = 0, an empty output as in TensorFlow
        assert.are.same({ 1, 3, 0, 3, 1 }, pool({ ksize = l5(1, 4, 1), strides = l5(1, 2, 1), padding = "VALID" }).shape)
      end)
    end)
  end

  describe("MaxPoolWithArgmax", function()
    local configs = {
      { "VALID 2x2 s2", { 1, 4, 4, 1 }, { 2, 2 }, { 2, 2 }, false },
      { "SAME 3x3 s1, batch 2, 2 channels", { 2, 3, 3, 2 }, { 3, 3 }, { 1, 1 }, true },
      { "VALID 2x3 s(1,2), 3 channels", { 1, 4, 5, 3 }, { 2, 3 }, { 1, 2 }, false },
      { "SAME 2x2 s2 over odd sizes, batch 3", { 3, 5, 3, 2 }, { 2, 2 }, { 2, 2 }, true },
    }
    for ci, cfg in ipairs(configs) do
      for _, with_batch in ipairs { false, true } do
        it(string.format("matches nested loops: %s, include_batch_in_index %s", cfg[1], with_batch), function()
          local name, xs, k, st, same = table.unpack(cfg)
          local x = values(numel(xs), ci + 20, -20, 20) -- integers: ties, so the first maximum must win
          local want, want_arg, ys = ref_argmax(x, xs, k, st, same, with_batch)
          for _, dt in ipairs { "float32", "float64", "int32", "int64", "float16" } do
            local y, arg = run("MaxPoolWithArgmax", { T(dt, xs, x) }, { ksize = l4(k[1], k[2]), strides = l4(st[1], st[2]),
              padding = same and "SAME" or "VALID", include_batch_in_index = with_batch }, 2)
            assert.are.same(ys, y.shape)
            assert.are.same(ys, arg.shape)
            assert.are.equal(dt, y.dtype)
            assert.are.equal("int64", arg.dtype)
            assert_close(want, flat(y), 0, name .. " " .. dt)
            assert.are.same(want_arg, flat(arg))
          end
        end)
      end
    end

    it("takes uint8, and NaN only when it comes first in its window", function()
      local y, arg = run("MaxPoolWithArgmax", { T("uint8", { 1, 2, 2, 1 }, { 3, 200, 200, 7 }) },
        { ksize = l4(2, 2), strides = l4(1, 1), padding = "VALID" }, 2)
      assert.are.same({ 200 }, flat(y))
      assert.are.same({ 1 }, flat(arg))
      local nan = 0 / 0
      y, arg = run("MaxPoolWithArgmax", { T("float32", { 1, 2, 3, 1 }, { nan, 1, 2, 5, nan, 0 }) },
        { ksize = l4(2, 2), strides = l4(1, 1), padding = "VALID" }, 2)
      local v = flat(y)
      assert(v[1] ~= v[1], "a window that starts with NaN gives NaN")
      assert.are.equal(2, v[2]) -- NaN later in the window never wins
      assert.are.same({ 0, 2 }, flat(arg))
    end)

    it("gives empty outputs for an empty batch", function()
      local y, arg = run("MaxPoolWithArgmax", { T("float32", { 0, 2, 2, 1 }, {}) },
        { ksize = l4(2, 2), strides = l4(1, 1), padding = "VALID" }, 2)
      assert.are.same({ 0, 1, 1, 1 }, y.shape)
      assert.are.same({ 0, 1, 1, 1 }, arg.shape)
    end)

    it("reports TensorFlow's texts, and has no kernel for Targmax int32 (as TensorFlow's CPU registrations)", function()
      local x = T("float32", { 1, 3, 3, 1 }, values(9, 4))
      local function pool(attrs, input) return run("MaxPoolWithArgmax", { input or x }, attrs, 2) end
      h.raises("NOT_FOUND", "Targmax int32", pool, { ksize = l4(2, 2), strides = l4(1, 1), padding = "VALID", Targmax = "int32" })
      h.raises("INVALID_ARGUMENT", "Targmax must be int32 or int64, got float32", pool,
        { ksize = l4(2, 2), strides = l4(1, 1), padding = "VALID", Targmax = "float32" })
      h.raises("INVALID_ARGUMENT", "Sliding window ksize field must specify 4 dimensions", pool,
        { ksize = l5(2, 2, 2), strides = l4(1, 1), padding = "VALID" })
      h.raises("INVALID_ARGUMENT", "Sliding window stride field must specify 4 dimensions", pool,
        { ksize = l4(2, 2), strides = { 1, 1, 1 }, padding = "VALID" })
      h.raises("UNIMPLEMENTED", "Pooling is not yet supported on the batch dimension.", pool,
        { ksize = l4(2, 2), strides = { 2, 1, 1, 1 }, padding = "VALID" })
      h.raises("INVALID_ARGUMENT", "Sliding window ksize for dimension 1 was zero.", pool,
        { ksize = l4(0, 2), strides = l4(1, 1), padding = "VALID" })
      h.raises("UNIMPLEMENTED", "pooling across depth is not supported", pool,
        { ksize = { 1, 1, 1, 2 }, strides = { 1, 1, 1, 2 }, padding = "VALID" })
      local valid = { ksize = l4(2, 2), strides = l4(1, 1), padding = "VALID" }
      h.raises("INVALID_ARGUMENT", "Shape must be rank 4 but is rank 3 for input", pool, valid,
        T("float32", { 3, 3, 1 }, values(9, 4)))
      h.raises("INVALID_ARGUMENT", "tensor_in must be 4-dimensional", run_fed, "MaxPoolWithArgmax",
        { T("float32", { 3, 3, 1 }, values(9, 4)) }, valid)
      h.raises("INVALID_ARGUMENT",
        "Computed output size would be negative: -1 [input_size: 3, effective_filter_size: 5, stride: 1]", pool,
        { ksize = l4(5, 1), strides = l4(1, 1), padding = "VALID" })
    end)
  end)

  describe("Dilation2D", function()
    local configs = {
      { "VALID", { 1, 4, 4, 1 }, { 2, 2, 1 }, { 1, 1 }, { 1, 1 }, false },
      { "SAME stride 2, batch 2, 2 channels", { 2, 5, 5, 2 }, { 3, 2, 2 }, { 2, 2 }, { 1, 1 }, true },
      { "VALID rates (2,1) strides (1,2)", { 1, 6, 6, 1 }, { 2, 3, 1 }, { 1, 2 }, { 2, 1 }, false },
      { "SAME rates 2 stride 2, 3 channels", { 1, 5, 4, 3 }, { 2, 2, 3 }, { 2, 2 }, { 2, 2 }, true },
      { "SAME rate 3, taps in the padding", { 1, 3, 3, 1 }, { 3, 3, 1 }, { 1, 1 }, { 3, 3 }, true },
    }
    local lowest = { float32 = -3.4028234663852886e38, float64 = -1.7976931348623157e308, int32 = -2147483648,
      int64 = math.mininteger, float16 = -65504 }
    for ci, cfg in ipairs(configs) do
      it("matches nested loops: " .. cfg[1], function()
        local name, xs, fs, st, rates, same = table.unpack(cfg)
        local x, f = values(numel(xs), ci + 30, -50, 50), values(numel(fs), ci + 40, -9, 9)
        for _, dt in ipairs { "float32", "float64", "int32", "int64", "float16" } do
          local want, ys = ref_dilation(x, xs, f, fs, st, rates, same, lowest[dt])
          local y = run("Dilation2D", { T(dt, xs, x), T(dt, fs, f) },
            { strides = l4(st[1], st[2]), rates = l4(rates[1], rates[2]), padding = same and "SAME" or "VALID" })
          assert.are.same(ys, y.shape)
          assert.are.equal(dt, y.dtype)
          assert_close(want, flat(y), 0, name .. " " .. dt)
        end
      end)
    end

    it("sums in the dtype: uint8 wraps around", function()
      local y = run("Dilation2D", { T("uint8", { 1, 1, 2, 1 }, { 250, 3 }), T("uint8", { 1, 1, 1 }, { 10 }) },
        { strides = l4(1, 1), rates = l4(1, 1), padding = "VALID" })
      assert.are.same({ 4, 13 }, flat(y))
    end)

    it("gives an empty output for an empty batch", function()
      local y = run("Dilation2D", { T("float32", { 0, 3, 3, 2 }, {}), T("float32", { 2, 2, 2 }, values(8, 1)) },
        { strides = l4(1, 1), rates = l4(1, 1), padding = "VALID" })
      assert.are.same({ 0, 2, 2, 2 }, y.shape)
    end)

    it("reports TensorFlow's texts", function()
      local x, f = T("float32", { 1, 4, 4, 1 }, values(16, 5)), T("float32", { 2, 2, 1 }, values(4, 6))
      local function dil(attrs, a, b) return run("Dilation2D", { a or x, b or f }, attrs) end
      local ok = { strides = l4(1, 1), rates = l4(1, 1), padding = "VALID" }
      h.raises("INVALID_ARGUMENT", "Sliding window stride field must specify 4 dimensions", dil,
        { strides = { 1, 1, 1 }, rates = l4(1, 1), padding = "VALID" })
      h.raises("UNIMPLEMENTED", "Stride is only supported across spatial dimensions.", dil,
        { strides = { 1, 1, 1, 2 }, rates = l4(1, 1), padding = "VALID" })
      h.raises("INVALID_ARGUMENT", "Input stride (atrous rate) field must specify 4 dimensions", dil,
        { strides = l4(1, 1), rates = { 1, 1, 1 }, padding = "VALID" })
      h.raises("UNIMPLEMENTED", "Rate is only supported across spatial dimensions.", dil,
        { strides = l4(1, 1), rates = { 2, 1, 1, 1 }, padding = "VALID" })
      h.raises("INVALID_ARGUMENT", "Shape must be rank 4 but is rank 3 for input", dil, ok, T("float32", { 4, 4, 1 }, values(16, 5)))
      h.raises("INVALID_ARGUMENT", "Shape must be rank 3 but is rank 2 for filter", dil, ok, nil, T("float32", { 2, 2 }, values(4, 6)))
      h.raises("INVALID_ARGUMENT", "input must be 4-dimensional[4,4,1]", run_fed, "Dilation2D",
        { T("float32", { 4, 4, 1 }, values(16, 5)), f }, ok)
      h.raises("INVALID_ARGUMENT", "filter must be 3-dimensional: [2,2]", run_fed, "Dilation2D",
        { x, T("float32", { 2, 2 }, values(4, 6)) }, ok)
      h.raises("INVALID_ARGUMENT", "input and filter must have the same depth: 1 vs 2", dil, ok, nil,
        T("float32", { 2, 2, 2 }, values(8, 6)))
      -- rate 2 spreads 3 taps over 5 rows: (4 - 5 + 1) / 1 = 0 rows; a span of 6 is past TensorFlow's rule
      assert.are.same({ 1, 0, 3, 1 }, dil({ strides = l4(1, 1), rates = l4(2, 1), padding = "VALID" }, nil,
        T("float32", { 3, 2, 1 }, values(6, 6))).shape)
      h.raises("INVALID_ARGUMENT",
        "Computed output size would be negative: -1 [input_size: 4, effective_filter_size: 6, stride: 1]", dil,
        { strides = l4(1, 1), rates = l4(5, 1), padding = "VALID" })
    end)
  end)
end)
