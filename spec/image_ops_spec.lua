-- Image, normalisation and batched-product ops: FusedBatchNorm, FusedBatchNormV3 (inference),
-- ResizeBilinear, ResizeNearestNeighbor, BatchMatMulV2. Expected values come from hand
-- computation, from small Lua references written here from TensorFlow's formulas, and from
-- numbers computed once with PyTorch (torch.nn.functional.interpolate) and pasted in, as marked.
local tfdev = require "tfdev"
local h = require "spec.support.helpers"

local rand_tensor = h.random_values

local assert_close = h.assert_close

-- Runs op on constant inputs in a session that does not fold it; returns the fetched tensors.
local function run_tensors(op, inputs, attrs, fetches) return h.run_node(op, inputs, attrs, fetches) end

local function run_op(op, inputs, attrs)
  return run_tensors(op, inputs, attrs)[1]:totable()
end

local function f32(t) return tfdev.tensor(t, "float32") end

-- [1, H, W, 1] image from a 2-D table, and back.
local function image(rows)
  local img = {}
  for y = 1, #rows do
    img[y] = {}
    for x = 1, #rows[y] do img[y][x] = { rows[y][x] } end
  end
  return { img }
end
local function plane(t)
  local out = {}
  for y = 1, #t[1] do
    out[y] = {}
    for x = 1, #t[1][y] do out[y][x] = t[1][y][x][1] end
  end
  return out
end

-- float32 rounding, so the Lua references compute source coordinates as TensorFlow does (in float).
local function fr(v) return string.unpack("f", string.pack("f", v)) end

local function scale_of(n_in, n_out, align)
  if align and n_out > 1 then return fr((n_in - 1) / (n_out - 1)) end
  return fr(n_in / n_out)
end

-- TensorFlow's bilinear resize (image_resizer_state.h, resize_bilinear_op.cc) on x[n][y][x][c].
local function ref_bilinear(x, oh, ow, align, half)
  local H, W, C = #x[1], #x[1][1], #x[1][1][1]
  local function axis(n_in, n_out)
    local s, t = scale_of(n_in, n_out, align), {}
    for i = 0, n_out - 1 do
      local src = half and fr(fr((i + 0.5) * s) - 0.5) or fr(i * s)
      local fl = math.floor(src)
      t[i + 1] = { lo = math.max(fl, 0) + 1, hi = math.min(math.ceil(src), n_in - 1) + 1, f = src - fl }
    end
    return t
  end
  local ys, xs = axis(H, oh), axis(W, ow)
  local out = {}
  for n = 1, #x do
    out[n] = {}
    for oy = 1, oh do
      out[n][oy] = {}
      local yy = ys[oy]
      for ox = 1, ow do
        local xx, v = xs[ox], {}
        for c = 1, C do
          local tl, tr = x[n][yy.lo][xx.lo][c], x[n][yy.lo][xx.hi][c]
          local bl, br = x[n][yy.hi][xx.lo][c], x[n][yy.hi][xx.hi][c]
          local top, bot = tl + (tr - tl) * xx.f, bl + (br - bl) * xx.f
          v[c] = top + (bot - top) * yy.f
        end
        out[n][oy][ox] = v
      end
    end
  end
  return out
end

-- TensorFlow's nearest-neighbour resize (resize_nearest_neighbor_op.cc).
local function ref_nearest(x, oh, ow, align, half)
  local H, W = #x[1], #x[1][1]
  local function index(i, n_in, n_out)
    local s = scale_of(n_in, n_out, align)
    local src = half and fr((i + 0.5) * s) or fr(i * s)
    local v = align and math.floor(src + 0.5) or math.floor(src) -- roundf: half away from zero (src >= 0)
    return math.max(math.min(v, n_in - 1), 0) + 1
  end
  local out = {}
  for n = 1, #x do
    out[n] = {}
    for oy = 0, oh - 1 do
      out[n][oy + 1] = {}
      for ox = 0, ow - 1 do
        local px, v = x[n][index(oy, H, oh)][index(ox, W, ow)], {}
        for c = 1, #px do v[c] = px[c] end
        out[n][oy + 1][ox + 1] = v
      end
    end
  end
  return out
end

describe("FusedBatchNorm, FusedBatchNormV3 (inference)", function()
  after_each(function() tfdev.factory.reset() end)

  -- y = (x - mean) * scale / sqrt(variance + epsilon) + offset, per channel.
  local function ref_bn(x, scale, offset, mean, var, eps)
    local out = {}
    for n = 1, #x do
      out[n] = {}
      for y = 1, #x[n] do
        out[n][y] = {}
        for w = 1, #x[n][y] do
          local v = {}
          for c = 1, #x[n][y][w] do
            v[c] = (x[n][y][w][c] - mean[c]) * scale[c] / math.sqrt(var[c] + eps) + offset[c]
          end
          out[n][y][w] = v
        end
      end
    end
    return out
  end

  it("normalises by hand-computed values, with epsilon given and by default", function()
    -- (3 - 1) * 1.5 / sqrt(3 + 1) + 0.25 = 1.75; (-1 - 1) * 1.5 / 2 + 0.25 = -1.25
    -- channel 2: (5 - 2) * 2 / sqrt(0 + 1) - 1 = 5; (2 - 2) * 2 - 1 = -1
    local x = f32 { { { { 3, 5 }, { -1, 2 } } } }
    local p = { f32 { 1.5, 2 }, f32 { 0.25, -1 }, f32 { 1, 2 }, f32 { 3, 0 } }
    for _, op in ipairs { "FusedBatchNorm", "FusedBatchNormV3" } do
      local got = run_op(op, { x, p[1], p[2], p[3], p[4] }, { epsilon = 1, is_training = false })
      assert_close({ { { { 1.75, 5 }, { -1.25, -1 } } } }, got, 1e-6)
      -- default epsilon 0.0001: channel 2 has variance 0, so (5 - 2) * 2 / 0.01 - 1 = 599
      got = run_op(op, { x, p[1], p[2], p[3], p[4] }, { is_training = false })
      assert_close({ { { { (2 * 1.5) / math.sqrt(3.0001) + 0.25, 599 }, { -(2 * 1.5) / math.sqrt(3.0001) + 0.25, -1 } } } },
        got, 1e-3)
    end
  end)

  it("matches a Lua reference on a larger input; the extra outputs pass mean and variance through", function()
    local x = rand_tensor({ 2, 3, 4, 5 }, 3)
    local scale, offset = { 0.5, 1, 1.5, -2, 0.25 }, { 0, 0.1, -0.2, 0.3, 1 }
    local mean, var = { 0.1, -0.2, 0.3, 0, 0.5 }, { 1, 0.5, 2, 0.01, 4 }
    local want = ref_bn(x, scale, offset, mean, var, 0.001)
    local ins = { f32(x), f32(scale), f32(offset), f32(mean), f32(var) }
    local outs = run_tensors("FusedBatchNormV3", ins, { epsilon = 0.001, is_training = false },
      { "y:0", "y:1", "y:2", "y:3", "y:4", "y:5" })
    assert_close(want, outs[1]:totable(), 1e-5)
    assert_close(mean, outs[2]:totable(), 1e-7)
    assert_close(var, outs[3]:totable(), 1e-7)
    assert_close(mean, outs[4]:totable(), 1e-7)
    assert_close(var, outs[5]:totable(), 1e-7)
    assert.are.same({ 0 }, outs[6].shape)
    assert.are.equal("float32", outs[6].dtype)
    outs = run_tensors("FusedBatchNorm", ins, { epsilon = 0.001, is_training = false }, { "y:0", "y:4" })
    assert_close(want, outs[1]:totable(), 1e-5)
    assert_close(var, outs[2]:totable(), 1e-7)
  end)

  it("refuses training, NCHW, mismatched parameters and wrong ranks, naming the node", function()
    local x = f32(rand_tensor({ 1, 2, 2, 3 }, 5))
    local v3, v2 = f32 { 1, 1, 1 }, f32 { 1, 1 }
    h.raises("UNIMPLEMENTED", "node 'y' (FusedBatchNormV3): is_training=true is not supported", run_op,
      "FusedBatchNormV3", { x, v3, v3, v3, v3 }, {})
    h.raises("UNIMPLEMENTED", "data_format NCHW is not supported", run_op, "FusedBatchNormV3", { x, v3, v3, v3, v3 },
      { is_training = false, data_format = "NCHW" })
    h.raises("INVALID_ARGUMENT", "node 'y' (FusedBatchNorm): variance must have 3 elements (x's depth), got 2", run_op,
      "FusedBatchNorm", { x, v3, v3, v3, v2 }, { is_training = false })
    h.raises("INVALID_ARGUMENT", "x (input 0) must have rank 4, got rank 2", run_op, "FusedBatchNormV3",
      { f32 { { 1, 2, 3 } }, v3, v3, v3, v3 }, { is_training = false })
    h.raises("INVALID_ARGUMENT", "scale (input 1) must be float32, got float64", run_op, "FusedBatchNormV3",
      { x, tfdev.tensor({ 1, 1, 1 }, "float64"), v3, v3, v3 }, { is_training = false })
    h.raises("INVALID_ARGUMENT", "T=float64 is not allowed", run_op, "FusedBatchNormV3",
      { tfdev.tensor({ { { { 1, 1, 1 } } } }, "float64"), v3, v3, v3, v3 }, { is_training = false })
  end)

  it("is refused eagerly (6 outputs), and runs in graphs", function()
    local d = tfdev.factory.add_devices()[1]
    local x, v = f32 { { { { 1 } } } }, f32 { 1 }
    h.raises("UNIMPLEMENTED", "eager execution returns at most 4", d.compute, d, "FusedBatchNormV3",
      { x, v, v, v, v }, { is_training = false })
  end)
end)

describe("ResizeBilinear, ResizeNearestNeighbor", function()
  after_each(function() tfdev.factory.reset() end)

  -- x[i] = i^2 / 7 for i = 1..15 in a 3 x 5 image (the same values gave the PyTorch numbers below)
  local rows = {}
  for y = 1, 3 do
    rows[y] = {}
    for x = 1, 5 do
      local i = (y - 1) * 5 + x
      rows[y][x] = fr(fr(i * i) / 7)
    end
  end
  local X = f32(image(rows))

  local function resize(op, size, align, half)
    return plane(run_op(op, { X, tfdev.tensor(size, "int32") }, { align_corners = align, half_pixel_centers = half }))
  end

  it("bilinear: half_pixel_centers and align_corners match PyTorch (align_corners False / True)", function()
    -- torch.nn.functional.interpolate(x, size, mode="bilinear", align_corners=False), rounded to 6 places
    local hp_up = {
      { 0.142857, 0.330357, 0.616071, 1.0625, 1.598214, 2.223214, 3.008928, 3.571428 },
      { 2.142857, 2.580357, 3.223214, 4.026786, 4.919644, 5.901786, 7.044643, 7.857143 },
      { 5.142858, 5.955358, 7.13393, 8.473215, 9.901787, 11.419643, 13.098215, 14.285715 },
      { 12.428573, 13.616073, 15.330358, 17.205359, 19.169643, 21.223215, 23.437502, 25.000002 },
      { 17.285715, 18.723215, 20.794641, 23.026787, 25.348215, 27.758928, 30.330357, 32.142857 },
    }
    local hp_down = { { 1.654762, 3.25, 5.70238 }, { 15.22619, 20.392857, 26.416666 } }
    -- ... align_corners=True
    local ac_up = {
      { 0.142857, 0.428571, 0.809524, 1.285714, 1.952381, 2.714286, 3.571428 },
      { 3.47619, 4.396826, 5.412698, 6.52381, 7.825397, 9.222222, 10.714286 },
      { 9.190477, 10.746032, 12.396826, 14.142858, 16.079365, 18.111113, 20.238096 },
      { 17.285715, 19.476191, 21.761904, 24.142857, 26.714285, 29.380951, 32.142857 },
    }
    local ac_down = { { 0.142857, 1.285714, 3.571428 }, { 17.285715, 24.142857, 32.142857 } }
    assert_close(hp_up, resize("ResizeBilinear", { 5, 8 }, false, true), 2e-5)
    assert_close(hp_down, resize("ResizeBilinear", { 2, 3 }, false, true), 2e-5)
    assert_close(ac_up, resize("ResizeBilinear", { 4, 7 }, true, false), 2e-5)
    assert_close(ac_down, resize("ResizeBilinear", { 2, 3 }, true, false), 2e-5)
  end)

  it("bilinear: TensorFlow's legacy coordinates (x * in / out) by hand", function()
    -- [0, 10] to width 4: sources 0, 0.5, 1, 1.5 (clamped to the last pixel)
    local got = run_op("ResizeBilinear", { f32(image { { 0, 10 } }), tfdev.tensor({ 1, 4 }, "int32") }, {})
    assert_close({ { 0, 5, 10, 10 } }, plane(got), 1e-6)
    -- half_pixel_centers: sources -0.25 (lower index clamped to 0, weight 0.75 of nothing), 0.25, 0.75, 1.25
    got = run_op("ResizeBilinear", { f32(image { { 0, 10 } }), tfdev.tensor({ 1, 4 }, "int32") },
      { half_pixel_centers = true })
    assert_close({ { 0, 2.5, 7.5, 10 } }, plane(got), 1e-6)
    -- align_corners with a single output pixel uses in / out: source 0
    got = run_op("ResizeBilinear", { f32(image { { 4, 10 } }), tfdev.tensor({ 1, 1 }, "int32") }, { align_corners = true })
    assert_close({ { 4 } }, plane(got), 1e-6)
  end)

  it("bilinear: every combination, up and down, odd sizes, several channels, against the Lua reference", function()
    local x = rand_tensor({ 2, 5, 7, 3 }, 11)
    for _, size in ipairs { { 9, 4 }, { 3, 11 }, { 1, 1 }, { 5, 7 }, { 2, 13 } } do
      for _, m in ipairs { { false, false }, { true, false }, { false, true } } do
        local got = run_op("ResizeBilinear", { f32(x), tfdev.tensor(size, "int32") },
          { align_corners = m[1], half_pixel_centers = m[2] })
        assert_close(ref_bilinear(x, size[1], size[2], m[1], m[2]), got, 1e-5)
      end
    end
  end)

  it("nearest: legacy and half_pixel_centers match PyTorch (nearest / nearest-exact)", function()
    local v = {}
    for y = 1, 3 do v[y] = rows[y] end
    local function pick(idx_y, idx_x)
      local out = {}
      for i, yy in ipairs(idx_y) do
        out[i] = {}
        for j, xx in ipairs(idx_x) do out[i][j] = v[yy][xx] end
      end
      return out
    end
    -- PyTorch's mode="nearest" picks rows 1,1,2,2,3 and columns 1,1,2,2,3,4,4,5 for 5 x 8 ...
    assert_close(pick({ 1, 1, 2, 2, 3 }, { 1, 1, 2, 2, 3, 4, 4, 5 }), resize("ResizeNearestNeighbor", { 5, 8 }, false, false), 1e-6)
    assert_close(pick({ 1, 2 }, { 1, 2, 4 }), resize("ResizeNearestNeighbor", { 2, 3 }, false, false), 1e-6)
    -- ... and mode="nearest-exact" rows 1,1,2,3,3 and columns 1,1,2,3,3,4,5,5
    assert_close(pick({ 1, 1, 2, 3, 3 }, { 1, 1, 2, 3, 3, 4, 5, 5 }), resize("ResizeNearestNeighbor", { 5, 8 }, false, true), 1e-6)
    assert_close(pick({ 1, 3 }, { 1, 3, 5 }), resize("ResizeNearestNeighbor", { 2, 3 }, false, true), 1e-6)
    -- align_corners, by hand: 5 -> 7 columns, scale 4/6, sources 0, .67, 1.33, 2, 2.67, 3.33, 4 rounded;
    -- 3 -> 2 rows, scale 2: sources 0, 2
    assert_close(pick({ 1, 3 }, { 1, 2, 2, 3, 4, 4, 5 }), resize("ResizeNearestNeighbor", { 2, 7 }, true, false), 1e-6)
    -- 3 -> 5 rows, scale 0.5: sources 0, 0.5, 1, 1.5, 2 round half away from zero
    assert_close(pick({ 1, 2, 2, 3, 3 }, { 1 }), plane(run_op("ResizeNearestNeighbor",
      { f32(image { { rows[1][1] }, { rows[2][1] }, { rows[3][1] } }), tfdev.tensor({ 5, 1 }, "int32") },
      { align_corners = true })), 1e-6)
  end)

  it("nearest: every combination, up and down, odd sizes, against the Lua reference", function()
    local x = rand_tensor({ 2, 5, 7, 3 }, 13)
    for _, size in ipairs { { 9, 4 }, { 3, 11 }, { 1, 1 }, { 5, 7 }, { 2, 13 } } do
      for _, m in ipairs { { false, false }, { true, false }, { false, true } } do
        local got = run_op("ResizeNearestNeighbor", { f32(x), tfdev.tensor(size, "int32") },
          { align_corners = m[1], half_pixel_centers = m[2] })
        assert_close(ref_nearest(x, size[1], size[2], m[1], m[2]), got, 1e-6)
      end
    end
  end)

  it("refuses bad sizes, ranks, dtypes and both flags together, naming the node", function()
    local x = f32(rand_tensor({ 1, 2, 2, 1 }, 3))
    for _, op in ipairs { "ResizeBilinear", "ResizeNearestNeighbor" } do
      h.raises("INVALID_ARGUMENT", "node 'y' (" .. op .. "): If half_pixel_centers is True, align_corners must be False", run_op,
        op, { x, tfdev.tensor({ 2, 2 }, "int32") }, { align_corners = true, half_pixel_centers = true })
      h.raises("INVALID_ARGUMENT", "size must be positive, got [0, 2]", run_op, op, { x, tfdev.tensor({ 0, 2 }, "int32") }, {})
      h.raises("INVALID_ARGUMENT", "size must be positive, got [-3, 2]", run_op, op, { x, tfdev.tensor({ -3, 2 }, "int32") }, {})
      h.raises("INVALID_ARGUMENT", "size (input 1) must be an int32 vector of 2 elements", run_op, op,
        { x, tfdev.tensor({ 2, 2, 2 }, "int32") }, {})
      h.raises("INVALID_ARGUMENT", "size (input 1) must be an int32 vector of 2 elements", run_op, op,
        { x, tfdev.tensor({ 2, 2 }, "int64") }, {})
      h.raises("INVALID_ARGUMENT", "images (input 0) must have rank 4, got rank 2", run_op, op,
        { f32 { { 1, 2 } }, tfdev.tensor({ 2, 2 }, "int32") }, {})
      h.raises("INVALID_ARGUMENT", "T=bool is not allowed", run_op, op,
        { tfdev.tensor({ { { { true } } } }, "bool"), tfdev.tensor({ 2, 2 }, "int32") }, {})
      -- an output too large to exist is refused, not allocated
      local ok, err = pcall(run_op, op, { x, tfdev.tensor({ 2147483647, 2147483647 }, "int32") }, {})
      assert(not ok and tfdev.error.is(err) and err.message:find("node 'y'", 1, true), tostring(err))
      assert(err.code == "INVALID_ARGUMENT" or err.code == "RESOURCE_EXHAUSTED", err.code)
    end
  end)
end)

describe("BatchMatMulV2", function()
  after_each(function() tfdev.factory.reset() end)

  -- Reference: out[b] = op(x[bx]) * op(y[by]) with numpy broadcasting of the batch dimensions.
  local function shape_of(t)
    local s = {}
    while type(t) == "table" do
      s[#s + 1] = #t
      t = t[1]
    end
    return s
  end
  local function ref_bmm(x, y, adj_x, adj_y)
    local sx, sy = shape_of(x), shape_of(y)
    local nb = math.max(#sx, #sy) - 2
    local function at(t, s, idx) -- idx: output batch index (1-based), broadcast into t's own dims
      local off = nb - (#s - 2)
      for d = 1, #s - 2 do t = t[s[d] == 1 and 1 or idx[d + off]] end
      return t
    end
    local dims = {}
    for d = 1, nb do
      local dx = sx[d - (nb - (#sx - 2))] or 1
      local dy = sy[d - (nb - (#sy - 2))] or 1
      dims[d] = dx == 1 and dy or dx
    end
    local function mat(idx)
      local a, b = at(x, sx, idx), at(y, sy, idx)
      local M = adj_x and #a[1] or #a
      local K = adj_x and #a or #a[1]
      local N = adj_y and #b or #b[1]
      local out = {}
      for i = 1, M do
        out[i] = {}
        for j = 1, N do
          local acc = 0
          for k = 1, K do
            acc = acc + (adj_x and a[k][i] or a[i][k]) * (adj_y and b[j][k] or b[k][j])
          end
          out[i][j] = acc
        end
      end
      return out
    end
    local function walk(d, idx)
      if d > nb then return mat(idx) end
      local t = {}
      for i = 1, dims[d] do
        idx[d] = i
        t[i] = walk(d + 1, idx)
      end
      return t
    end
    return walk(1, {})
  end

  it("multiplies broadcast batches by hand", function()
    -- x [2,1,1,2] = [[1,2]], [[3,4]]; y [3,2,1] = [1,0], [0,1], [1,1] -> out [2,3,1,1]
    local x = f32 { { { { 1, 2 } } }, { { { 3, 4 } } } }
    local y = f32 { { { 1 }, { 0 } }, { { 0 }, { 1 } }, { { 1 }, { 1 } } }
    assert.are.same({ { { { 1 } }, { { 2 } }, { { 3 } } }, { { { 3 } }, { { 4 } }, { { 7 } } } },
      run_op("BatchMatMulV2", { x, y }, {}))
  end)

  local cases = {
    { "same batch", { 3, 2, 4 }, { 3, 4, 5 } },
    { "broadcast both ways", { 2, 1, 3, 4 }, { 1, 3, 4, 2 } },
    { "rank 2 against a batch", { 3, 4 }, { 2, 2, 4, 3 } },
    { "plain matrices", { 5, 3 }, { 3, 2 } },
  }
  for _, case in ipairs(cases) do
    local name, xs, ys = table.unpack(case)
    for _, adj in ipairs { { false, false }, { true, false }, { false, true }, { true, true } } do
      it(string.format("%s, adj_x %s, adj_y %s, float32 and float64", name, adj[1], adj[2]), function()
        local xd, yd = { table.unpack(xs) }, { table.unpack(ys) }
        if adj[1] then xd[#xd - 1], xd[#xd] = xd[#xd], xd[#xd - 1] end
        if adj[2] then yd[#yd - 1], yd[#yd] = yd[#yd], yd[#yd - 1] end
        local x, y = rand_tensor(xd, 3), rand_tensor(yd, 7)
        local want = ref_bmm(x, y, adj[1], adj[2])
        local attrs = { adj_x = adj[1], adj_y = adj[2] }
        assert_close(want, run_op("BatchMatMulV2", { f32(x), f32(y) }, attrs), 1e-5)
        local t = run_tensors("BatchMatMulV2", { tfdev.tensor(x, "float64"), tfdev.tensor(y, "float64") }, attrs)[1]
        assert.are.equal("float64", t.dtype)
        assert_close(want, t:totable(), 1e-12)
      end)
    end
  end

  it("handles empty batches and an empty inner dimension", function()
    local t = run_tensors("BatchMatMulV2", { tfdev.tensor { dtype = "float32", shape = { 0, 2, 3 } },
      tfdev.tensor { dtype = "float32", shape = { 3, 4 } } }, {})[1]
    assert.are.same({ 0, 2, 4 }, t.shape)
    t = run_tensors("BatchMatMulV2", { tfdev.tensor { dtype = "float32", shape = { 2, 2, 0 } },
      tfdev.tensor { dtype = "float32", shape = { 0, 3 } } }, {})[1]
    assert.are.same({ { { 0, 0, 0 }, { 0, 0, 0 } }, { { 0, 0, 0 }, { 0, 0, 0 } } }, t:totable())
  end)

  it("refuses incompatible shapes and dtypes, naming the node", function()
    local a, b = f32(rand_tensor({ 2, 2, 3 }, 1)), f32(rand_tensor({ 3, 3, 2 }, 2))
    h.raises("INVALID_ARGUMENT", "node 'y' (BatchMatMulV2): batch dimensions do not broadcast", run_op, "BatchMatMulV2",
      { a, b }, {})
    h.raises("INVALID_ARGUMENT", "Matrix size-incompatible", run_op, "BatchMatMulV2", { a, a }, {})
    h.raises("INVALID_ARGUMENT", "input 0 must have rank >= 2", run_op, "BatchMatMulV2", { f32 { 1, 2 }, b }, {})
    h.raises("INVALID_ARGUMENT", "input 0 is float32 but input 1 is float64", run_op, "BatchMatMulV2",
      { a, tfdev.tensor(rand_tensor({ 3, 2 }, 4), "float64") }, {})
    h.raises("INVALID_ARGUMENT", "T=uint8 is not allowed", run_op, "BatchMatMulV2",
      { tfdev.tensor({ { 1 } }, "uint8"), tfdev.tensor({ { 1 } }, "uint8") }, {})
    -- integers multiply as TensorFlow's CPU kernel does (int32 and int64 registered), wrapping
    for _, dt in ipairs { "int32", "int64" } do
      local y = run_tensors("BatchMatMulV2", { tfdev.tensor({ { { 1, 2 } }, { { 3, 4 } } }, dt),
        tfdev.tensor({ { 5 }, { 6 } }, dt) }, { adj_x = false })[1]
      assert.are.equal(dt, y.dtype)
      assert.are.same({ { { 17 } }, { { 39 } } }, y:totable())
    end
  end)
end)

describe("MirrorPad", function()
  after_each(function() tfdev.factory.reset() end)

  local function pads(p) return tfdev.tensor(p, "int32") end

  it("reflects and mirrors as TensorFlow's documentation shows", function()
    local t = tfdev.tensor({ { 1, 2, 3 }, { 4, 5, 6 } }, "int32")
    assert.are.same({ { 6, 5, 4, 5, 6, 5, 4 }, { 3, 2, 1, 2, 3, 2, 1 }, { 6, 5, 4, 5, 6, 5, 4 }, { 3, 2, 1, 2, 3, 2, 1 } },
      run_op("MirrorPad", { t, pads { { 1, 1 }, { 2, 2 } } }, { mode = "REFLECT" }))
    assert.are.same({ { 2, 1, 1, 2, 3, 3, 2 }, { 2, 1, 1, 2, 3, 3, 2 }, { 5, 4, 4, 5, 6, 6, 5 }, { 5, 4, 4, 5, 6, 6, 5 } },
      run_op("MirrorPad", { t, pads { { 1, 1 }, { 2, 2 } } }, { mode = "SYMMETRIC" }))
    -- by hand, the largest pads each mode allows
    assert.are.same({ 3, 2, 1, 2, 3, 2, 1 }, run_op("MirrorPad", { f32 { 1, 2, 3 }, pads { { 2, 2 } } }, { mode = "REFLECT" }))
    assert.are.same({ 3, 2, 1, 1, 2, 3, 3, 2, 1 },
      run_op("MirrorPad", { f32 { 1, 2, 3 }, tfdev.tensor({ { 3, 3 } }, "int64") }, { mode = "SYMMETRIC", Tpaddings = "int64" }))
    assert.are.same({ 1, 2, 3 }, run_op("MirrorPad", { f32 { 1, 2, 3 }, pads { { 0, 0 } } }, { mode = "REFLECT" }))
  end)

  it("matches a Lua reference on a 3-D float64 tensor with uneven pads", function()
    local x = rand_tensor({ 3, 4, 5 }, 17)
    local p = { { 2, 1 }, { 0, 3 }, { 4, 2 } }
    for _, mode in ipairs { "REFLECT", "SYMMETRIC" } do
      local function src(i, n, lo) -- 1-based output index to 1-based input index
        local j = i - 1 - lo
        if j < 0 then j = mode == "SYMMETRIC" and -j - 1 or -j
        elseif j >= n then j = mode == "SYMMETRIC" and 2 * n - 1 - j or 2 * n - 2 - j end
        return j + 1
      end
      if mode == "REFLECT" then p[3] = { 4, 2 } else p[3] = { 5, 5 } end
      local want = {}
      for a = 1, 3 + p[1][1] + p[1][2] do
        want[a] = {}
        for b = 1, 4 + p[2][1] + p[2][2] do
          want[a][b] = {}
          for c = 1, 5 + p[3][1] + p[3][2] do
            want[a][b][c] = x[src(a, 3, p[1][1])][src(b, 4, p[2][1])][src(c, 5, p[3][1])]
          end
        end
      end
      assert.are.same(want, run_op("MirrorPad", { tfdev.tensor(x, "float64"), pads(p) }, { mode = mode }))
    end
  end)

  it("refuses pads beyond the mirror, bad modes and bad paddings, naming the node", function()
    local x = f32 { { 1, 2, 3 } }
    h.raises("INVALID_ARGUMENT", "node 'y' (MirrorPad): paddings [0, 3] in dimension 1 must be between 0 and 2 (REFLECT", run_op,
      "MirrorPad", { x, pads { { 0, 0 }, { 0, 3 } } }, { mode = "REFLECT" })
    h.raises("INVALID_ARGUMENT", "paddings [4, 0] in dimension 1 must be between 0 and 3 (SYMMETRIC", run_op, "MirrorPad",
      { x, pads { { 0, 0 }, { 4, 0 } } }, { mode = "SYMMETRIC" })
    h.raises("INVALID_ARGUMENT", "paddings must not be negative", run_op, "MirrorPad", { x, pads { { 0, 0 }, { -1, 0 } } },
      { mode = "SYMMETRIC" })
    h.raises("INVALID_ARGUMENT", "mode must be REFLECT or SYMMETRIC, got 'EDGE'", run_op, "MirrorPad",
      { x, pads { { 0, 0 }, { 1, 1 } } }, { mode = "EDGE" })
    h.raises("INVALID_ARGUMENT", "missing required attr 'mode'", run_op, "MirrorPad", { x, pads { { 0, 0 }, { 1, 1 } } }, {})
    h.raises("INVALID_ARGUMENT", "paddings must have shape [2, 2]", run_op, "MirrorPad", { x, pads { { 1, 1 } } },
      { mode = "REFLECT" })
  end)
end)

describe("Conv2DBackpropInput", function()
  after_each(function() tfdev.factory.reset() end)

  local window = h.window -- TensorFlow's forward window: output size and padding before

  -- Scatter each out_backprop value through the filter into the input positions it came from.
  local function ref_backprop(sizes, f, dy, o)
    local N, H, W, C = table.unpack(sizes)
    local KH, KW, M = #f, #f[1], #f[1][1][1]
    local sh, sw = o.strides[2], o.strides[3]
    local dh, dw = o.dilations and o.dilations[2] or 1, o.dilations and o.dilations[3] or 1
    local ex = o.explicit_paddings or { 0, 0, 0, 0, 0, 0, 0, 0 }
    local OH, pt = window(H, KH, sh, dh, o.padding, { ex[3], ex[4] })
    local OW, pl = window(W, KW, sw, dw, o.padding, { ex[5], ex[6] })
    assert(#dy[1] == OH and #dy[1][1] == OW)
    local dx = {}
    for n = 1, N do
      dx[n] = {}
      for y = 1, H do
        dx[n][y] = {}
        for x = 1, W do
          dx[n][y][x] = {}
          for c = 1, C do dx[n][y][x][c] = 0 end
        end
      end
      for oy = 1, OH do
        for ox = 1, OW do
          for ky = 1, KH do
            local iy = (oy - 1) * sh + (ky - 1) * dh - pt + 1
            for kx = 1, KW do
              local ix = (ox - 1) * sw + (kx - 1) * dw - pl + 1
              if iy >= 1 and iy <= H and ix >= 1 and ix <= W then
                for c = 1, C do
                  local acc = dx[n][iy][ix][c]
                  for m = 1, M do acc = acc + dy[n][oy][ox][m] * f[ky][kx][c][m] end
                  dx[n][iy][ix][c] = acc
                end
              end
            end
          end
        end
      end
    end
    return dx
  end

  local function flat_dot(a, b)
    if type(a) ~= "table" then return a * b end
    local s = 0
    for i = 1, #a do s = s + flat_dot(a[i], b[i]) end
    return s
  end

  it("places the filter by hand", function()
    local f = f32 { { { { 1 } }, { { 2 } } }, { { { 3 } }, { { 4 } } } }
    local dy = f32 { { { { 1 }, { 0 } }, { { 0 }, { 0 } } } }
    local got = run_op("Conv2DBackpropInput", { tfdev.tensor({ 1, 3, 3, 1 }, "int32"), f, dy },
      { strides = { 1, 1, 1, 1 }, padding = "VALID" })
    assert.are.same({ { { { 1 }, { 2 }, { 0 } }, { { 3 }, { 4 }, { 0 } }, { { 0 }, { 0 }, { 0 } } } }, got)
    -- stride 2: two non-overlapping copies, the second scaled by 10
    dy = f32 { { { { 1 }, { 10 } } } }
    got = run_op("Conv2DBackpropInput", { tfdev.tensor({ 1, 2, 4, 1 }, "int32"), f, dy },
      { strides = { 1, 2, 2, 1 }, padding = "VALID" })
    assert.are.same({ { { { 1 }, { 2 }, { 10 }, { 20 } }, { { 3 }, { 4 }, { 30 }, { 40 } } } }, got)
  end)

  local cases = {
    { "SAME, odd sizes, stride 1", { 1, 7, 5, 3 }, { 3, 3, 3, 4 }, { 1, 1, 1, 1 }, "SAME" },
    { "SAME, stride 2, even sizes", { 2, 8, 6, 2 }, { 3, 3, 2, 5 }, { 1, 2, 2, 1 }, "SAME" },
    { "SAME, stride 2, odd sizes", { 1, 7, 9, 2 }, { 2, 2, 2, 3 }, { 1, 2, 2, 1 }, "SAME" },
    { "VALID, stride 3, leftover rows", { 1, 10, 11, 3 }, { 3, 2, 3, 2 }, { 1, 3, 3, 1 }, "VALID" },
    { "dilations 2", { 1, 9, 8, 2 }, { 3, 3, 2, 2 }, { 1, 1, 1, 1 }, "SAME", { 1, 2, 2, 1 } },
    { "EXPLICIT padding", { 1, 5, 5, 2 }, { 3, 3, 2, 2 }, { 1, 2, 1, 1 }, "EXPLICIT", nil, { 0, 0, 1, 2, 0, 3, 0, 0 } },
  }
  for _, case in ipairs(cases) do
    local name, xs, fs, strides, padding, dil, ex = table.unpack(case)
    it(name .. ": the Lua reference, and <Conv2D(x, f), dy> = <x, Conv2DBackpropInput(dy, f)>", function()
      local attrs = { strides = strides, padding = padding, dilations = dil, explicit_paddings = ex }
      local OH = window(xs[2], fs[1], strides[2], dil and dil[2] or 1, padding, ex and { ex[3], ex[4] })
      local OW = window(xs[3], fs[2], strides[3], dil and dil[3] or 1, padding, ex and { ex[5], ex[6] })
      local f, dy, x = rand_tensor(fs, 5), rand_tensor({ xs[1], OH, OW, fs[4] }, 7), rand_tensor(xs, 9)
      local dx = run_op("Conv2DBackpropInput", { tfdev.tensor(xs, "int32"), f32(f), f32(dy) }, attrs)
      assert_close(ref_backprop(xs, f, dy, attrs), dx, 1e-4)
      local y = run_op("Conv2D", { f32(x), f32(f) }, attrs)
      local lhs, rhs = flat_dot(y, dy), flat_dot(x, dx)
      assert(math.abs(lhs - rhs) <= 1e-3 * math.max(1, math.abs(lhs)), string.format("%.7g vs %.7g", lhs, rhs))
    end)
  end

  it("refuses mismatched shapes, bad sizes and NCHW, naming the node", function()
    local f, dy = f32(rand_tensor({ 2, 2, 3, 4 }, 1)), f32(rand_tensor({ 1, 2, 2, 4 }, 2))
    local attrs = { strides = { 1, 1, 1, 1 }, padding = "VALID" }
    local function sizes(s) return tfdev.tensor(s, "int32") end
    h.raises("INVALID_ARGUMENT", "node 'y' (Conv2DBackpropInput): out_backprop is [2,2] spatially but the forward convolution of input_sizes gives [4,4]",
      run_op, "Conv2DBackpropInput", { sizes { 1, 5, 5, 3 }, f, dy }, attrs)
    h.raises("INVALID_ARGUMENT", "input depth 2 does not match the filter's in_channels 3", run_op, "Conv2DBackpropInput",
      { sizes { 1, 3, 3, 2 }, f, dy }, attrs)
    h.raises("INVALID_ARGUMENT", "input_sizes must not be negative", run_op, "Conv2DBackpropInput",
      { sizes { 1, -3, 3, 3 }, f, dy }, attrs)
    h.raises("INVALID_ARGUMENT", "input_sizes (input 0) must be an int32 vector of 4 sizes", run_op, "Conv2DBackpropInput",
      { sizes { 3, 3, 3 }, f, dy }, attrs)
    h.raises("INVALID_ARGUMENT", "out_backprop depth 4 does not match the filter's out_channels 5", run_op,
      "Conv2DBackpropInput", { sizes { 1, 3, 3, 3 }, f32(rand_tensor({ 2, 2, 3, 5 }, 1)), dy }, attrs)
    h.raises("UNIMPLEMENTED", "data_format NCHW is not supported", run_op, "Conv2DBackpropInput",
      { sizes { 1, 3, 3, 3 }, f, dy }, { strides = { 1, 1, 1, 1 }, padding = "VALID", data_format = "NCHW" })
    assert_close(ref_backprop({ 1, 3, 3, 3 }, f:totable(), dy:totable(), attrs),
      run_op("Conv2DBackpropInput", { sizes { 1, 3, 3, 3 }, f, dy }, attrs), 1e-5)
  end)
end)

describe("_FusedDepthwiseConv2dNative", function()
  after_each(function() tfdev.factory.reset() end)

  -- Depthwise convolution written here (SAME padding, stride s), channel multiplier m, then bias and an activation.
  local function ref(x, f, s, bias, act)
    local H, W, C = #x[1], #x[1][1], #x[1][1][1]
    local KH, KW, M = #f, #f[1], #f[1][1][1]
    local OH, OW = (H + s - 1) // s, (W + s - 1) // s
    local pt = math.max((OH - 1) * s + KH - H, 0) // 2
    local pl = math.max((OW - 1) * s + KW - W, 0) // 2
    local out = {}
    for n = 1, #x do
      out[n] = {}
      for oy = 1, OH do
        out[n][oy] = {}
        for ox = 1, OW do
          local v = {}
          for c = 1, C do
            for m = 1, M do
              local acc = bias[(c - 1) * M + m]
              for ky = 1, KH do
                for kx = 1, KW do
                  local iy, ix = (oy - 1) * s + ky - pt, (ox - 1) * s + kx - pl
                  if iy >= 1 and iy <= H and ix >= 1 and ix <= W then acc = acc + x[n][iy][ix][c] * f[ky][kx][c][m] end
                end
              end
              v[(c - 1) * M + m] = act(acc, (c - 1) * M + m)
            end
          end
          out[n][oy][ox] = v
        end
      end
    end
    return out
  end

  it("adds the bias, then Relu, Relu6 or Prelu, like DepthwiseConv2dNative followed by those ops", function()
    local x, f = rand_tensor({ 2, 5, 6, 3 }, 21), rand_tensor({ 3, 3, 3, 2 }, 23)
    for i = 1, 2 do x[1][1][1][i] = x[1][1][1][i] * 8 end -- some values above 6 for Relu6
    local bias, alpha = { 0.5, -0.25, 0, 1, 2, -3 }, { 0.1, 0.2, 0.3, 0.4, 0.5, 0.6 }
    local X, F, B, A = f32(x), f32(f), f32(bias), f32(alpha)
    local function attrs(ops, s)
      return { strides = { 1, s, s, 1 }, padding = "SAME", num_args = #ops == 2 and ops[2] == "Prelu" and 2 or 1, fused_ops = ops }
    end
    local acts = {
      { { "BiasAdd" }, function(v) return v end, { X, F, B } },
      { { "BiasAdd", "Relu" }, function(v) return math.max(v, 0) end, { X, F, B } },
      { { "BiasAdd", "Relu6" }, function(v) return math.min(math.max(v, 0), 6) end, { X, F, B } },
      { { "BiasAdd", "Prelu" }, function(v, q) return v > 0 and v or alpha[q] * v end, { X, F, B, A } },
    }
    for _, a in ipairs(acts) do
      for _, s in ipairs { 1, 2 } do
        assert_close(ref(x, f, s, bias, a[2]), run_op("_FusedDepthwiseConv2dNative", a[3], attrs(a[1], s)), 1e-4)
      end
    end
    -- the plain op is unchanged: no bias, no activation
    local zero = { 0, 0, 0, 0, 0, 0 }
    assert_close(ref(x, f, 2, zero, function(v) return v end),
      run_op("DepthwiseConv2dNative", { X, F }, { strides = { 1, 2, 2, 1 }, padding = "SAME" }), 1e-4)
  end)

  it("infers the depthwise output shape and refuses bad fusions and biases, naming the node", function()
    local X, F = f32(rand_tensor({ 1, 4, 4, 3 }, 1)), f32(rand_tensor({ 2, 2, 3, 2 }, 2))
    local base = { strides = { 1, 1, 1, 1 }, padding = "VALID", num_args = 1 }
    local function with(ops) local a = { fused_ops = ops } for k, v in pairs(base) do a[k] = v end return a end
    local t = run_tensors("_FusedDepthwiseConv2dNative", { X, F, f32 { 1, 2, 3, 4, 5, 6 } }, with { "BiasAdd" })[1]
    assert.are.same({ 1, 3, 3, 6 }, t.shape)
    h.raises("UNIMPLEMENTED", "node 'y' (_FusedDepthwiseConv2dNative): Fusion is not implemented: [BiasAdd,Softsign]", run_op,
      "_FusedDepthwiseConv2dNative", { X, F, f32 { 1, 2, 3, 4, 5, 6 } }, with { "BiasAdd", "Softsign" })
    h.raises("INVALID_ARGUMENT", "bias must hold 6 float32 values, one per output channel", run_op,
      "_FusedDepthwiseConv2dNative", { X, F, f32 { 1, 2, 3 } }, with { "BiasAdd" })
    h.raises("INVALID_ARGUMENT", "take 3 inputs, got 2", run_op, "_FusedDepthwiseConv2dNative", { X, F }, with { "BiasAdd" })
  end)
end)
