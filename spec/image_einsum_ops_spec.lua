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
