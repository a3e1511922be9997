-- Issue 26's image/einsum family: Einsum, CropAndResize, ImageProjectiveTransformV3, IdentityN, ShapeN, Print and
-- FakeQuantWithMinMaxArgs/Vars, checked against small independent Lua references written from TensorFlow's
-- definitions (einsum by brute force over every label's range; crop_and_resize_op.cc's and image_ops.h's sampling
-- formulas; fake_quant_ops_functor.h's Nudge) and worked examples of TensorFlow's fake_quant_ops_test.cc, every
-- dtype each op takes, empty tensors, and the error texts of TensorFlow's kernels and shape functions.
local tfdev = require "tfdev"
local h = require "spec.support.helpers"

local function run(op, inputs, attrs, nout)
  local fetches = { "y" }
  for i = 1, nout or 0 do fetches[i] = "y:" .. (i - 1) end
  return table.unpack(h.run_node(op, inputs, attrs, fetches))
end

local function numel(shape) local n = 1 for _, d in ipairs(shape) do n = n * d end return n end

-- A nested table of `shape` from a flat list (row-major); a scalar for shape {}.
local function nest(flat, shape)
  if #shape == 0 then return flat[1] end
  local pos = 0
  local function build(d)
    local t = {}
    for i = 1, shape[d] do
      if d == #shape then pos = pos + 1; t[i] = flat[pos] else t[i] = build(d + 1) end
    end
    return t
  end
  return build(1)
end

local function flatten(v, out)
  out = out or {}
  if type(v) ~= "table" then out[#out + 1] = v return out end
  for _, x in ipairs(v) do flatten(x, out) end
  return out
end

-- Deterministic small values: integers in [-4, 4] (exact in every dtype), or for floats quarters in [-2, 2].
local function values(n, seed, int)
  local t = {}
  for i = 1, n do
    seed = (seed * 1103515245 + 12345) % 2147483648
    t[i] = int and (seed % 9) - 4 or ((seed % 17) - 8) / 4
  end
  return t
end

local function tensor(shape, seed, dtype)
  local int = dtype == "int32" or dtype == "int64" or dtype == "uint8"
  local v = values(numel(shape), seed, int)
  if dtype == "uint8" then for i = 1, #v do v[i] = v[i] + 4 end end
  return tfdev.tensor(nest(v, shape), dtype), v
end

local function close(want, got, tol, what)
  assert.are.equal(#want, #got, what .. ": element count")
  for i = 1, #want do
    local ok = math.abs(want[i] - got[i]) <= (tol or 0) * math.max(1, math.abs(want[i]))
    assert(ok, string.format("%s: element %d is %s, want %s", what, i, tostring(got[i]), tostring(want[i])))
  end
end

-- ---- Einsum reference: every assignment of the labels, summed into the output ----
local function ref_einsum(eq, shapes, vals)
  local lhs, rhs = eq:match("^(.*)%->(.*)$")
  local subs = {}
  for s in (lhs .. ","):gmatch("([^,]*),") do subs[#subs + 1] = s end
  local max_nb = 0
  for i, s in ipairs(subs) do
    local named = #s:gsub("%.%.%.", "")
    if s:find("...", 1, true) then max_nb = math.max(max_nb, #shapes[i] - named) end
  end
  local function expand(s, rank) -- "...ij" -> { "A", "B", "i", "j" } (broadcast labels right-aligned)
    local labels, named = {}, #s:gsub("%.%.%.", "")
    local nb = rank and rank - named or max_nb
    local pre, post = s:match("^(.-)%.%.%.(.*)$")
    if not pre then pre, post, nb = s, "", 0 end
    for c in pre:gmatch(".") do labels[#labels + 1] = c end
    for b = 1, nb do labels[#labels + 1] = string.char(64 + max_nb - nb + b) end
    for c in post:gmatch(".") do labels[#labels + 1] = c end
    return labels
  end
  local ins, size, order = {}, {}, {}
  for i, s in ipairs(subs) do
    ins[i] = expand(s, #shapes[i])
    for a, l in ipairs(ins[i]) do
      if not size[l] then order[#order + 1] = l; size[l] = 1 end
      if shapes[i][a] ~= 1 then size[l] = shapes[i][a] end
    end
  end
  local out = expand(rhs, nil)
  local oshape = {}
  for a, l in ipairs(out) do oshape[a] = size[l] end
  local result = {}
  for i = 1, numel(oshape) do result[i] = 0 end
  local idx = {}
  for _, l in ipairs(order) do idx[l] = 0 end
  local function offset(labels, shape)
    local off = 0
    for a, l in ipairs(labels) do off = off * shape[a] + (shape[a] == 1 and 0 or idx[l]) end
    return off
  end
  local function rec(k)
    if k > #order then
      local p = 1
      for i = 1, #ins do p = p * vals[i][offset(ins[i], shapes[i]) + 1] end
      local o = offset(out, oshape) + 1
      result[o] = result[o] + p
      return
    end
    local l = order[k]
    for v = 0, size[l] - 1 do idx[l] = v; rec(k + 1) end
  end
  if #order == 0 or numel(oshape) >= 0 then rec(1) end
  -- repeated output labels: rec adds only on the diagonal, the rest stays 0
  return oshape, result
end

describe("Einsum", function()
  after_each(function() tfdev.factory.reset() end)

  local cases = {
    { "ij,jk->ik", { 2, 3 }, { 3, 4 } },
    { "bij,bjk->bik", { 2, 2, 3 }, { 2, 3, 2 } },
    { "bhqd,bhkd->bhqk", { 1, 2, 3, 4 }, { 1, 2, 2, 4 } },
    { "ji,jk->ik", { 3, 2 }, { 3, 4 } },
    { "ij,kj->ik", { 2, 3 }, { 4, 3 } },
    { "ji,kj->ik", { 3, 2 }, { 4, 3 } },
    { "ij,jk->ki", { 2, 3 }, { 3, 4 } },
    { "i,j->ij", { 3 }, { 4 } },
    { "i,i->", { 5 }, { 5 } },
    { "bi,bi->b", { 2, 3 }, { 2, 3 } },
    { "ij->ji", { 2, 3 } },
    { "ij->i", { 2, 3 } },
    { "ij->", { 2, 3 } },
    { "ii->i", { 3, 3 } },
    { "ii->", { 3, 3 } },
    { "i->ii", { 3 } },
    { "ijk->kij", { 2, 3, 4 } },
    { "bij,jk->bik", { 2, 2, 3 }, { 3, 2 } },
    { "ijx,jk->ik", { 2, 3, 2 }, { 3, 4 } },
    { "iij,jk->ik", { 2, 2, 3 }, { 3, 2 } },
    { "ijk,kji->", { 2, 3, 2 }, { 2, 3, 2 } },
    { "ab,cd->dabc", { 2, 1 }, { 3, 2 } },
    { "...ij,...jk->...ik", { 2, 1, 2, 3 }, { 3, 3, 2 } },
    { "...ij->...ji", { 2, 2, 3 } },
    { "i...,i...->...", { 2, 3 }, { 2, 3 } },
    { "...ij,jk->...ik", { 2, 3 }, { 3, 2 } },
    { "b...d,b...d->b...", { 2, 3, 4 }, { 2, 1, 4 } },
    { "bqhd,bkhd->bhqk", { 2, 3, 2, 4 }, { 2, 2, 2, 4 } },
    { "ijk->jik", { 2, 3, 4 } },
  }
  for _, dt in ipairs({ "float32", "float64", "int32", "int64" }) do
    it("computes TensorFlow's einsum for " .. dt .. ": products, transposes, reductions, diagonals, ellipses", function()
      for n, c in ipairs(cases) do
        local eq, shapes, ins, vals = c[1], { c[2], c[3] }, {}, {}
        for i = 1, #shapes do ins[i], vals[i] = tensor(shapes[i], 7 * n + i, dt) end
        local want_shape, want = ref_einsum(eq, shapes, vals)
        local y = run("Einsum", ins, { equation = eq })
        assert.are.same(want_shape, y.shape, eq)
        assert.are.equal(dt, y.dtype, eq)
        close(want, flatten(y:totable()), dt == "float32" and 1e-5 or 1e-12, dt .. " " .. eq)
      end
    end)
  end

  it("runs larger products through the batch matrix product as MatMul does", function()
    local a, av = tensor({ 4, 16, 32 }, 3, "float32")
    local b, bv = tensor({ 4, 24, 32 }, 5, "float32")
    local shape, want = ref_einsum("bqd,bkd->bqk", { { 4, 16, 32 }, { 4, 24, 32 } }, { av, bv })
    local y = run("Einsum", { a, b }, { equation = "bqd,bkd->bqk" })
    assert.are.same(shape, y.shape)
    close(want, flatten(y:totable()), 1e-5, "bqd,bkd->bqk")
    local m = run("BatchMatMulV2", { a, b }, { adj_y = true })
    close(flatten(m:totable()), flatten(y:totable()), 1e-6, "against BatchMatMulV2")
  end)

  it("handles empty operands: an empty contraction is zeros, an empty free dim an empty output", function()
    local empty = function(dt, shape) return tfdev.from_bytes(dt, shape, "") end
    local z = run("Einsum", { empty("float32", { 2, 0 }), empty("float32", { 0, 3 }) },
      { equation = "ij,jk->ik" })
    assert.are.same({ 2, 3 }, z.shape)
    assert.are.same({ { 0, 0, 0 }, { 0, 0, 0 } }, z:totable())
    local e = run("Einsum", { empty("int32", { 0, 3 }), (tensor({ 3, 2 }, 1, "int32")) },
      { equation = "ij,jk->ik" })
    assert.are.same({ 0, 2 }, e.shape)
    assert.are.same({ 0 }, run("Einsum", { empty("float32", { 0, 3 }) }, { equation = "ij->i" }).shape)
    assert.are.same({ 0, 0, 0 }, flatten(run("Einsum", { empty("float64", { 0, 3 }) }, { equation = "ij->j" }):totable()))
    assert.are.same({ 3, 0 }, run("Einsum", { empty("int64", { 0, 3 }) }, { equation = "ij->ji" }).shape)
  end)

  it("refuses bad equations, ranks, sizes and broadcasts with TensorFlow's texts", function()
    local m23, m34 = (tensor({ 2, 3 }, 1, "float32")), (tensor({ 3, 4 }, 2, "float32"))
    local E = function(ins, eq) return run("Einsum", ins, { equation = eq }) end
    h.raises("INVALID_ARGUMENT", "Expecting exactly one '->' in einsum equation: ij,jk", E, { m23, m34 }, "ij,jk")
    h.raises("INVALID_ARGUMENT", "Expecting exactly one '->' in einsum equation: ij->jk->i", E, { m23 }, "ij->jk->i")
    h.raises("INVALID_ARGUMENT", "Expecting 1 or 2 input subscripts in equation 'i,j,k->i' but got: 3", E, { m23, m34 },
      "i,j,k->i")
    h.raises("INVALID_ARGUMENT", "Expected at most one ellipsis (...), but found 2 periods (.) in the input subscript: ..ij",
      E, { m23 }, "..ij->ij")
    h.raises("INVALID_ARGUMENT", "Periods found outside of ellipsis in subscript: .i.j.", E, { m23 }, ".i.j.->ij")
    h.raises("INVALID_ARGUMENT", "Expected 2 inputs for equation ij,jk->ik but got: 1", E, { m23 }, "ij,jk->ik")
    h.raises("INVALID_ARGUMENT", "Shape must be rank 3 but is rank 2 for 0th input and equation: ijk->i", E, { m23 }, "ijk->i")
    h.raises("INVALID_ARGUMENT", "Shape must be rank at least 3 but is rank 2 for 0th input", E, { m23 }, "...ijk->i")
    h.raises("INVALID_ARGUMENT", "Dimensions must be equal, but are 3 and 4 for label 'j'", E, { m23, m34 }, "ij,kj->ik")
    h.raises("INVALID_ARGUMENT", "has label 'z' which is not present in the input subscripts", E, { m23 }, "ij->iz")
    h.raises("INVALID_ARGUMENT", "without ellipsis (...) in the output subscripts where input(s) have non-empty broadcasting shape",
      E, { (tensor({ 2, 2, 3 }, 1, "float32")) }, "...ij->ij")
    h.raises("INVALID_ARGUMENT", "Incompatible shapes", E, { (tensor({ 2, 2, 3 }, 1, "float32")), (tensor({ 3, 3, 2 }, 1, "float32")) },
      "...ij,...jk->...ik")
    h.raises("INVALID_ARGUMENT", "input 0 is float32 but input 1 is int32", E, { m23, (tensor({ 3, 4 }, 1, "int32")) }, "ij,jk->ik")
    h.raises("INVALID_ARGUMENT", "bool", E, { tfdev.tensor({ true }, "bool") }, "i->i")
  end)

  it("checks fed shapes in the kernel with TensorFlow's EinsumOp texts", function()
    local g = tfdev.graph()
    local a = g:placeholder("float32", nil, { name = "a" })
    local b = g:placeholder("float32", nil, { name = "b" })
    g:op("Einsum", { a, b }, { equation = "ij,jk->ik", name = "mm" })
    g:op("Einsum", { a, b }, { equation = "...ij,...jk->...ik", name = "bmm" })
    g:op("Einsum", { a }, { equation = "...ij->ij", name = "drop" })
    local s <close> = tfdev.session { optimize_graph = false }
    s:create(g)
    local m23, m43 = (tensor({ 2, 3 }, 1, "float32")), (tensor({ 4, 3 }, 2, "float32"))
    h.raises("INVALID_ARGUMENT", "node 'mm' (Einsum): Expected dimension 3 at axis 0 of the input shaped [4,3] but got dimension 4",
      s.run, s, { a = m23, b = m43 }, "mm")
    h.raises("INVALID_ARGUMENT", "Expected input 0 to have rank 2 but got: 3", s.run, s,
      { a = (tensor({ 1, 2, 3 }, 1, "float32")), b = m43 }, "mm")
    h.raises("INVALID_ARGUMENT", "Expected input 1 to have rank at least 2 but got: 1", s.run, s,
      { a = m23, b = (tensor({ 3 }, 1, "float32")) }, "bmm")
    -- the reduced operands as TensorFlow shapes them: [broadcast, free, contract], the second [broadcast, contract,
    -- free] (already in that order, so taken transposed rather than copied)
    h.raises("INVALID_ARGUMENT", "Invalid broadcasting dimensions: [2,2,3] vs. [3,3,2]", s.run, s,
      { a = (tensor({ 2, 2, 3 }, 1, "float32")), b = (tensor({ 3, 3, 2 }, 1, "float32")) }, "bmm")
    h.raises("INVALID_ARGUMENT", "Output contains 1 broadcasting dimension(s) but no ellipsis (...) was found in the output subscripts.",
      s.run, s, { a = (tensor({ 2, 2, 3 }, 1, "float32")) }, "drop")
    local y = s:run({ a = m23, b = (tensor({ 3, 2 }, 4, "float32")) }, "mm")
    assert.are.same({ 2, 2 }, y.shape)
  end)
end)

-- ---- CropAndResize reference (crop_and_resize_op.cc's formulas) ----
local function ref_crop(img, ishape, boxes, box_ind, ch, cw, method, extrap)
  local _, H, W, D = table.unpack(ishape)
  local out = {}
  local function px(b, y, x, d) return img[((b * H + y) * W + x) * D + d + 1] end
  local function round(v) return v >= 0 and math.floor(v + 0.5) or -math.floor(-v + 0.5) end
  for n = 0, #box_ind - 1 do
    local y1, x1, y2, x2 = boxes[n * 4 + 1], boxes[n * 4 + 2], boxes[n * 4 + 3], boxes[n * 4 + 4]
    local b = box_ind[n + 1]
    local hs = ch > 1 and (y2 - y1) * (H - 1) / (ch - 1) or 0
    local ws = cw > 1 and (x2 - x1) * (W - 1) / (cw - 1) or 0
    for y = 0, ch - 1 do
      local in_y = ch > 1 and y1 * (H - 1) + y * hs or 0.5 * (y1 + y2) * (H - 1)
      for x = 0, cw - 1 do
        local in_x = cw > 1 and x1 * (W - 1) + x * ws or 0.5 * (x1 + x2) * (W - 1)
        for d = 0, D - 1 do
          local v
          if in_y < 0 or in_y > H - 1 or in_x < 0 or in_x > W - 1 then
            v = extrap
          elseif method == "nearest" then
            v = px(b, round(in_y), round(in_x), d)
          else
            local t, bo, l, r = math.floor(in_y), math.ceil(in_y), math.floor(in_x), math.ceil(in_x)
            local yl, xl = in_y - t, in_x - l
            local top = px(b, t, l, d) + (px(b, t, r, d) - px(b, t, l, d)) * xl
            local bottom = px(b, bo, l, d) + (px(b, bo, r, d) - px(b, bo, l, d)) * xl
            v = top + (bottom - top) * yl
          end
          out[#out + 1] = v
        end
      end
    end
  end
  return out
end

describe("CropAndResize", function()
  after_each(function() tfdev.factory.reset() end)
  local F = function(shape, v) return tfdev.tensor(nest(v, shape), "float32") end
  local I = function(v) return tfdev.tensor(v, "int32") end

  it("samples each box bilinearly or at the nearest pixel, for every image dtype, as TensorFlow's formulas", function()
    local boxes = { 0, 0, 1, 1, 0.25, 0.1, 0.75, 0.9, 1, 0.8, 0, 0.2, -0.5, -0.25, 1.25, 1.5, 0.3, 0.3, 0.3, 0.3 }
    local box_ind = { 0, 1, 1, 0, 1 }
    for _, dt in ipairs({ "float32", "float64", "int32", "int64", "uint8", "float16" }) do
      local img, iv = tensor({ 2, 4, 5, 3 }, 11, dt)
      for _, method in ipairs({ "bilinear", "nearest" }) do
        for _, crop in ipairs({ { 3, 4 }, { 1, 1 }, { 1, 3 }, { 5, 2 } }) do
          local y = run("CropAndResize", { img, F({ 5, 4 }, boxes), I(box_ind), I(crop) },
            { method = method, extrapolation_value = -2.5 })
          assert.are.same({ 5, crop[1], crop[2], 3 }, y.shape)
          assert.are.equal("float32", y.dtype)
          close(ref_crop(iv, { 2, 4, 5, 3 }, boxes, box_ind, crop[1], crop[2], method, -2.5), flatten(y:totable()), 1e-5,
            dt .. " " .. method .. " " .. crop[1] .. "x" .. crop[2])
        end
      end
    end
  end)

  it("gives [0, h, w, depth] for no boxes", function()
    local img = tensor({ 1, 2, 2, 3 }, 1, "float32")
    local y = run("CropAndResize", { img, tfdev.from_bytes("float32", { 0, 4 }, ""), tfdev.from_bytes("int32", { 0 }, ""), I({ 2, 2 }) })
    assert.are.same({ 0, 2, 2, 3 }, y.shape)
  end)

  it("refuses bad arguments with TensorFlow's texts", function()
    local img = tensor({ 1, 3, 3, 1 }, 1, "float32")
    local box = F({ 1, 4 }, { 0, 0, 1, 1 })
    local C = function(ins, attrs) return run("CropAndResize", ins, attrs) end
    h.raises("OUT_OF_RANGE", "box_index has values outside [0, batch_size)", C, { img, box, I({ 1 }), I({ 2, 2 }) })
    h.raises("OUT_OF_RANGE", "box_index has values outside [0, batch_size)", C, { img, box, I({ -1 }), I({ 2, 2 }) })
    h.raises("INVALID_ARGUMENT", "crop dimensions must be positive", C, { img, box, I({ 0 }), I({ 0, 2 }) })
    h.raises("INVALID_ARGUMENT", "boxes values must be finite, received boxes[0]: 0, nan, 1, 1", C,
      { img, F({ 1, 4 }, { 0, 0 / 0, 1, 1 }), I({ 0 }), I({ 2, 2 }) })
    h.raises("INVALID_ARGUMENT", "image dimensions must be positive", C,
      { tfdev.from_bytes("float32", { 1, 0, 3, 1 }, ""), box, I({ 0 }), I({ 2, 2 }) })
    h.raises("INVALID_ARGUMENT", "Value for attr 'method' of \"cubic\" is not in the list of allowed values", C,
      { img, box, I({ 0 }), I({ 2, 2 }) }, { method = "cubic" })
    h.raises("INVALID_ARGUMENT", "Dimension must be 4 but is 3", C, { img, F({ 1, 3 }, { 0, 0, 1 }), I({ 0 }), I({ 2, 2 }) })
    h.raises("INVALID_ARGUMENT", "Dimension must be 2 but is 3", C, { img, box, I({ 0 }), I({ 2, 2, 2 }) })
    h.raises("INVALID_ARGUMENT", "Dimensions must be equal, but are 1 and 2", C, { img, box, I({ 0, 0 }), I({ 2, 2 }) })
    h.raises("INVALID_ARGUMENT", "image (input 0) must have rank 4, got rank 3", C,
      { (tensor({ 3, 3, 1 }, 1, "float32")), box, I({ 0 }), I({ 2, 2 }) })
  end)
end)

-- ---- ImageProjectiveTransformV3 reference (image_ops.h: MapCoordinate, nearest and bilinear reads) ----
local function trunc(v) return v >= 0 and math.floor(v) or -math.floor(-v) end
-- v rounded to float32, as the kernel's float arithmetic rounds each step (its coordinates decide which pixel).
local function f32(v) return (string.unpack("f", string.pack("f", v))) end
local function clamp(v, lo, hi) return v < lo and lo or v > hi and hi or v end
local function map_coord(mode, c, len)
  if mode == "CONSTANT" then return c end
  if mode == "NEAREST" then return clamp(c, 0, len - 1) end
  if mode == "REFLECT" then
    if c < 0 then
      if len <= 1 then c = 0 else
        local sz2 = 2 * len
        if c < sz2 then c = f32(sz2 * trunc(f32(-c / sz2)) + c) end
        c = c < -len and f32(c + sz2) or -c - 1
      end
    elseif c > len - 1 then
      if len <= 1 then c = 0 else
        local sz2 = 2 * len
        c = f32(c - sz2 * trunc(f32(c / sz2)))
        if c >= len then c = f32(sz2 - c - 1) end
      end
    end
  else -- WRAP
    if c < 0 then
      if len <= 1 then c = 0 else c = f32(c + len * (trunc(f32(-c / (len - 1))) + 1)) end
    elseif c > len - 1 then
      if len <= 1 then c = 0 else c = f32(c - len * trunc(f32(c / (len - 1)))) end
    end
  end
  return clamp(c, 0, len - 1)
end

local function ref_transform(img, ishape, tr, oh, ow, interp, mode, fill, int)
  local N, H, W, C = table.unpack(ishape)
  local function read(b, y, x, ch)
    if y < 0 or y >= H or x < 0 or x >= W then return fill end
    return img[((b * H + y) * W + x) * C + ch + 1]
  end
  local function round(v) return v >= 0 and math.floor(v + 0.5) or -math.floor(-v + 0.5) end
  local out = {}
  for b = 0, N - 1 do
    local t = {}
    for i = 1, 8 do t[i] = f32(tr[(#tr == 8 and 0 or b * 8) + i]) end
    for y = 0, oh - 1 do
      for x = 0, ow - 1 do
        local proj = f32(f32(f32(t[7] * x) + f32(t[8] * y)) + 1)
        for ch = 0, C - 1 do
          local v
          if proj == 0 then v = fill else
            local ix = map_coord(mode, f32(f32(f32(f32(t[1] * x) + f32(t[2] * y)) + t[3]) / proj), W)
            local iy = map_coord(mode, f32(f32(f32(f32(t[4] * x) + f32(t[5] * y)) + t[6]) / proj), H)
            if interp == "NEAREST" then v = read(b, round(iy), round(ix), ch) else
              local y0, x0 = math.floor(iy), math.floor(ix)
              local y1, x1 = y0 + 1, x0 + 1
              local wx1, wx0, wy1, wy0 = f32(x1 - ix), f32(ix - x0), f32(y1 - iy), f32(iy - y0)
              local vf = f32(f32(wx1 * read(b, y0, x0, ch)) + f32(wx0 * read(b, y0, x1, ch)))
              local vc = f32(f32(wx1 * read(b, y1, x0, ch)) + f32(wx0 * read(b, y1, x1, ch)))
              v = f32(f32(wy1 * vf) + f32(wy0 * vc))
              if int then v = trunc(v) end
            end
          end
          out[#out + 1] = v
        end
      end
    end
  end
  return out
end

describe("ImageProjectiveTransformV3", function()
  after_each(function() tfdev.factory.reset() end)
  local F = function(shape, v) return tfdev.tensor(nest(v, shape), "float32") end
  local I = function(v) return tfdev.tensor(v, "int32") end
  local S = function(v) return tfdev.tensor(v, "float32") end

  it("maps each output pixel through its image's transform, every fill mode and interpolation, as TensorFlow", function()
    local one = { 0.9, 0.3, -1.5, -0.2, 1.1, 1.25, 0.02, -0.01 }
    local per = { 1, 0, 0.5, 0, 1, -0.5, 0, 0, 0.5, -0.7, 2.5, 0.6, 0.5, -3.25, 0, 0.1 }
    for _, dt in ipairs({ "float32", "float64", "int32", "int64" }) do
      local img, iv = tensor({ 2, 4, 5, 2 }, 5, dt)
      for _, mode in ipairs({ "CONSTANT", "REFLECT", "WRAP", "NEAREST" }) do
        for _, interp in ipairs({ "NEAREST", "BILINEAR" }) do
          for _, tr in ipairs({ one, per }) do
            local y = run("ImageProjectiveTransformV3", { img, F({ #tr // 8, 8 }, tr), I({ 6, 7 }), S(-3) },
              { interpolation = interp, fill_mode = mode, dtype = dt })
            assert.are.same({ 2, 6, 7, 2 }, y.shape)
            assert.are.equal(dt, y.dtype)
            local int = dt == "int32" or dt == "int64"
            close(ref_transform(iv, { 2, 4, 5, 2 }, tr, 6, 7, interp, mode, -3, int), flatten(y:totable()), 1e-5,
              table.concat({ dt, mode, interp, #tr }, " "))
          end
        end
      end
    end
  end)

  it("gives fill_value where the projection is 0, and an empty batch an empty output", function()
    local img = tensor({ 1, 2, 2, 1 }, 1, "float32")
    local y = run("ImageProjectiveTransformV3", { img, F({ 1, 8 }, { 1, 0, 0, 0, 1, 0, -1, 0 }), I({ 2, 2 }), S(9) },
      { interpolation = "NEAREST", dtype = "float32" })
    local v = flatten(y:totable())
    assert.are.equal(9, v[2]) -- x = 1: projection 1 - 1 = 0
    assert.are.equal(9, v[4])
    local e = run("ImageProjectiveTransformV3", { tfdev.from_bytes("float32", { 0, 2, 2, 1 }, ""), F({ 1, 8 }, { 1, 0, 0, 0, 1, 0, 0, 0 }),
      I({ 3, 3 }), S(0) }, { interpolation = "BILINEAR", dtype = "float32" })
    assert.are.same({ 0, 3, 3, 1 }, e.shape)
  end)

  it("refuses bad arguments with TensorFlow's texts", function()
    local img = tensor({ 2, 3, 3, 1 }, 1, "float32")
    local tr = F({ 1, 8 }, { 1, 0, 0, 0, 1, 0, 0, 0 })
    local P = function(ins, attrs) return run("ImageProjectiveTransformV3", ins, attrs) end
    local A = { interpolation = "NEAREST", dtype = "float32" }
    h.raises("INVALID_ARGUMENT", "Input transform should be num_images x 8 or 1 x 8", P,
      { img, F({ 3, 8 }, values(24, 1)), I({ 3, 3 }), S(0) }, A)
    h.raises("INVALID_ARGUMENT", "Input transform should be num_images x 8 or 1 x 8", P, { img, F({ 1, 6 }, values(6, 1)), I({ 3, 3 }), S(0) }, A)
    h.raises("INVALID_ARGUMENT", "output dimensions must be positive", P, { img, tr, I({ 0, 3 }), S(0) }, A)
    h.raises("INVALID_ARGUMENT", "output shape must have two elements", P, { img, tr, I({ 3 }), S(0) }, A)
    h.raises("INVALID_ARGUMENT", "Invalid interpolation CUBIC. Supported types: NEAREST, BILINEAR", P, { img, tr, I({ 3, 3 }), S(0) },
      { interpolation = "CUBIC", dtype = "float32" })
    h.raises("INVALID_ARGUMENT", "Invalid mode MIRROR. Supported types: REFLECT, WRAP, CONSTANT, NEAREST", P,
      { img, tr, I({ 3, 3 }), S(0) }, { interpolation = "NEAREST", fill_mode = "MIRROR", dtype = "float32" })
    h.raises("INVALID_ARGUMENT", "fill_value (input 3) must have rank 0, got rank 1", P, { img, tr, I({ 3, 3 }), S({ 0 }) }, A)
    h.raises("INVALID_ARGUMENT", "images (input 0) must have rank 4, got rank 3", P, { (tensor({ 3, 3, 1 }, 1, "float32")), tr, I({ 3, 3 }), S(0) }, A)
    h.raises("INVALID_ARGUMENT", "dtype is int32 but input 0 is float32", P, { img, tr, I({ 3, 3 }), S(0) },
      { interpolation = "NEAREST", dtype = "int32" })
    h.raises("INVALID_ARGUMENT", "missing required attr 'interpolation'", P, { img, tr, I({ 3, 3 }), S(0) }, { dtype = "float32" })
  end)
end)

describe("IdentityN and ShapeN", function()
  after_each(function() tfdev.factory.reset() end)

  it("IdentityN hands each input on as its own output, any dtypes and shapes", function()
    local a, b, c = tfdev.tensor({ true, false }, "bool"), tfdev.from_bytes("float32", { 0, 3 }, ""), tfdev.tensor({ { 1, 2 } }, "int64")
    local x, y, z = run("IdentityN", { a, b, c }, { T = { "bool", "float32", "int64" } }, 3)
    assert.are.same({ true, false }, x:totable())
    assert.are.same({ 0, 3 }, y.shape)
    assert.are.equal("int64", z.dtype)
    assert.are.same({ { 1, 2 } }, z:totable())
    local g = tfdev.graph()
    local p = g:placeholder("float32", { -1, 2 }, { name = "p" })
    local q = g:placeholder("uint8", { 3 }, { name = "q" })
    local n = g:op("IdentityN", { p, q }, { T = { "float32", "uint8" }, name = "n" })
    assert.truthy(n)
    local s <close> = tfdev.session { optimize_graph = false }
    s:create(g)
    local o1, o2 = table.unpack(s:run({ p = tfdev.tensor({ { 1, 2 } }, "float32"), q = tfdev.tensor({ 7, 8, 9 }, "uint8") }, { "n:0", "n:1" }))
    assert.are.same({ { 1, 2 } }, o1:totable())
    assert.are.same({ 7, 8, 9 }, o2:totable())
  end)

  it("IdentityN refuses a T that does not describe its inputs", function()
    local f, i = tfdev.tensor({ 1 }, "float32"), tfdev.tensor({ 1 }, "int32")
    h.raises("INVALID_ARGUMENT", "node 'y' (IdentityN): input 1 is int32 but attr 'T' says float32", run, "IdentityN", { f, i },
      { T = { "float32", "float32" } }, 2)
    h.raises("INVALID_ARGUMENT", "attr 'T' lists 1 dtypes for 2 inputs", run, "IdentityN", { f, i }, { T = { "float32" } }, 1)
    h.raises("INVALID_ARGUMENT", "attr 'T' must list 1 to 32 dtypes", run, "IdentityN", { f, i }, {}, 2)
  end)

  it("ShapeN gives each input's shape in out_type, N defaulting to the input count", function()
    local a, b, c = tfdev.tensor(5, "float32"), tfdev.from_bytes("float32", { 0, 2 }, ""), tfdev.tensor({ { { 1 }, { 2 } } }, "float32")
    local x, y, z = run("ShapeN", { a, b, c }, {}, 3)
    assert.are.same({}, x:totable())
    assert.are.same({ 0 }, x.shape)
    assert.are.same({ 0, 2 }, y:totable())
    assert.are.same({ 1, 2, 1 }, z:totable())
    assert.are.equal("int32", z.dtype)
    local u, v = run("ShapeN", { tfdev.tensor({ 1, 2, 3 }, "int32"), tfdev.tensor({ { 1 } }, "int32") }, { N = 2, out_type = "int64" }, 2)
    assert.are.equal("int64", u.dtype)
    assert.are.same({ 3 }, u:totable())
    assert.are.same({ 1, 1 }, v:totable())
  end)

  it("ShapeN refuses mixed dtypes, a wrong N and a non-index out_type", function()
    local f, i = tfdev.tensor({ 1 }, "float32"), tfdev.tensor({ 1 }, "int32")
    h.raises("INVALID_ARGUMENT", "node 'y' (ShapeN): input 0 is float32 but input 1 is int32", run, "ShapeN", { f, i }, {}, 2)
    h.raises("INVALID_ARGUMENT", "attr 'N' is 3 but the node has 2 inputs", run, "ShapeN", { f, f }, { N = 3 }, 2)
    h.raises("INVALID_ARGUMENT", "out_type must be int32 or int64, got float32", run, "ShapeN", { f }, { out_type = "float32" }, 1)
  end)
end)

describe("Print", function()
  after_each(function() tfdev.factory.reset() end)
  local exe = os.getenv("TFDEV_EXE")

  it("passes input 0 on", function()
    local x = tfdev.tensor({ 1.5, -2 }, "float32")
    local y = run("Print", { x, tfdev.tensor({ 1, 2, 3, 4 }, "int32") }, { U = { "int32" }, message = "m", summarize = 2 })
    assert.are.same({ 1.5, -2 }, y:totable())
    assert.are.same({ 7 }, run("Print", { tfdev.tensor({ 7 }, "int64") }):totable())
    h.raises("INVALID_ARGUMENT", "node 'y' (Print): input 1 is int32 but attr 'U' says float32", run, "Print",
      { x, tfdev.tensor({ 1 }, "int32") }, { U = { "float32" } })
  end)

  it("writes the message and each data input's first summarize values to stderr, the first first_n runs", function()
    if not exe then return pending("TFDEV_EXE is not set") end
    local script = os.tmpname()
    local f = assert(io.open(script, "w"))
    f:write([[
local tfdev = require "tfdev"
local g = { node = {
  { name = "x", op = "Const", attr = { value = tfdev.tensor({ 1.5, 2, 3, 4 }, "float32") } },
  { name = "i", op = "Const", attr = { value = tfdev.tensor({ { 1, 2 }, { 3, 4 } }, "int32") } },
  { name = "p", op = "Print", input = { "x", "x", "i" }, attr = { U = { "float32", "int32" }, message = "x and i: ",
    summarize = 3, first_n = 2 } } } }
local s = tfdev.session { optimize_graph = false }
s:create(g)
for _ = 1, 3 do s:run({}, { "p" }) end
s:close()
]])
    f:close()
    local p = assert(io.popen(exe .. " " .. script .. " 2>&1 >/dev/null"))
    local out = p:read("a")
    p:close()
    os.remove(script)
    -- Tensor::SummarizeValue: a row per bracket pair above the last dimension, "..." where it is cut
    assert.are.equal("x and i: [1.5 2 3...][[1 2][3...]...]\nx and i: [1.5 2 3...][[1 2][3...]...]\n", out)
  end)
end)

-- ---- FakeQuant: fake_quant_ops_functor.h's Nudge and quantisation, in float32 steps ----
local function f32(v) return (string.unpack("f", string.pack("f", v))) end
local function ref_fake_quant(xs, min, max, bits, narrow, vars)
  local qmin, qmax = narrow and 1 or 0, (1 << bits) - 1
  if vars and min == 0 and max == 0 then local z = {} for i = 1, #xs do z[i] = 0 end return z end
  min, max = f32(min), f32(max)
  local scale = f32(f32(max - min) / (qmax - qmin))
  local zp_from_min = f32(qmin - f32(min / scale))
  local zp = zp_from_min < qmin and qmin or zp_from_min > qmax and qmax or math.floor(zp_from_min + 0.5)
  local nmin, nmax = f32((qmin - zp) * scale), f32((qmax - zp) * scale)
  local inv = f32(1 / scale)
  local out = {}
  for i, x in ipairs(xs) do
    local v = f32(math.max(math.min(f32(x), nmax), nmin) - nmin)
    local q = vars and f32(v / scale) or f32(v * inv)
    out[i] = f32(f32(math.floor(f32(q + 0.5)) * scale) + nmin)
  end
  return out
end

describe("FakeQuantWithMinMaxArgs and FakeQuantWithMinMaxVars", function()
  after_each(function() tfdev.factory.reset() end)
  local F = function(v) return tfdev.tensor(v, "float32") end
  local function both(xs, min, max, bits, narrow)
    local a = run("FakeQuantWithMinMaxArgs", { F(xs) }, { min = min, max = max, num_bits = bits, narrow_range = narrow })
    local v = run("FakeQuantWithMinMaxVars", { F(xs), F(min), F(max) }, { num_bits = bits, narrow_range = narrow })
    return flatten(a:totable()), flatten(v:totable())
  end

  -- TensorFlow's fake_quant_ops_test.cc: {num_bits, narrow_range, min, max, inputs, expected}.
  local worked = {
    { 8, false, -10.0, 53.75, { -10.1, -10.0, -9.9, -9.75, 53.75, 53.8 }, { -10.0, -10.0, -10.0, -9.75, 53.75, 53.75 } },
    { 8, true, -10.0, 53.5, { -10.1, -10.0, -9.9, -9.75, 53.5, 53.6 }, { -10.0, -10.0, -10.0, -9.75, 53.5, 53.5 } },
    { 8, false, -0.1, 63.65, { -0.1, 0.0, 0.1, 0.25, 63.75, 63.8 }, { 0.0, 0.0, 0.0, 0.25, 63.75, 63.75 } },
    { 8, false, -0.125, 63.625, { -0.26, -0.25, -0.24, 0.0, 63.5, 63.6 }, { -0.25, -0.25, -0.25, 0.0, 63.5, 63.5 } },
    { 4, false, -6.0, 1.5, { -6.1, -6.0, -5.9, -5.5, 1.5, 1.6 }, { -6.0, -6.0, -6.0, -5.5, 1.5, 1.5 } },
    { 4, true, -6.0, 1.0, { -6.1, -6.0, -5.9, -5.5, 1.0, 1.1 }, { -6.0, -6.0, -6.0, -5.5, 1.0, 1.0 } },
  }

  it("matches TensorFlow's worked examples, Args and Vars alike", function()
    for n, w in ipairs(worked) do
      local a, v = both(w[5], w[3], w[4], w[1], w[2])
      close(w[6], a, 1e-6, "Args example " .. n)
      close(w[6], v, 1e-6, "Vars example " .. n)
    end
  end)

  it("follows the nudging formula for other ranges, bit widths and shapes", function()
    local xs = values(40, 3)
    for _, r in ipairs({ { -1, 1 }, { -0.3, 7.1 }, { 0, 2.5 }, { -5, -0.5 }, { 0.5, 3 } }) do
      for _, bits in ipairs({ 2, 5, 8, 16 }) do
        for _, narrow in ipairs({ false, true }) do
          local a, v = both(xs, r[1], r[2], bits, narrow)
          local what = string.format("[%g, %g] %d bits%s", r[1], r[2], bits, narrow and " narrow" or "")
          close(ref_fake_quant(xs, r[1], r[2], bits, narrow, false), a, 1e-6, "Args " .. what)
          close(ref_fake_quant(xs, r[1], r[2], bits, narrow, true), v, 1e-6, "Vars " .. what)
        end
      end
    end
    local y = run("FakeQuantWithMinMaxArgs", { F({ { 0.3, -7 }, { 9, 0 } }) })
    assert.are.same({ 2, 2 }, y.shape)
    assert.are.same({ 0, 0 }, run("FakeQuantWithMinMaxArgs", { tfdev.from_bytes("float32", { 0, 0 }, "") }).shape)
    assert.are.same({ 0, 0, 0 }, run("FakeQuantWithMinMaxVars", { F({ 1, -2, 3 }), F(0), F(0) }):totable())
  end)

  it("refuses bad ranges, bit widths, min/max ranks and dtypes with TensorFlow's texts", function()
    h.raises("INVALID_ARGUMENT", "min has to be smaller than max, was: 1 >= 1", run, "FakeQuantWithMinMaxArgs", { F({ 1 }) },
      { min = 1, max = 1 })
    h.raises("INVALID_ARGUMENT", "num_bits must be between 2 and 16, inclusive", run, "FakeQuantWithMinMaxArgs", { F({ 1 }) },
      { num_bits = 1 })
    h.raises("INVALID_ARGUMENT", "num_bits must be between 2 and 16, inclusive", run, "FakeQuantWithMinMaxVars",
      { F({ 1 }), F(-1), F(1) }, { num_bits = 17 })
    h.raises("INVALID_ARGUMENT", "min (input 1) must have rank 0, got rank 1", run, "FakeQuantWithMinMaxVars",
      { F({ 1 }), F({ -1 }), F(1) })
    h.raises("INVALID_ARGUMENT", "input 0 must be float32, got float64", run, "FakeQuantWithMinMaxArgs", { tfdev.tensor({ 1 }, "float64") })
  end)
end)
