-- The convolution ops on the dtypes other than float32 that TensorFlow's CPU kernels register (and
-- tfdev holds): Conv2D float64, int32, float16; DepthwiseConv2dNative and AvgPool float64, float16;
-- MaxPool float64, int32, int64, uint8, float16; ResizeBilinear (float32 out) and
-- ResizeNearestNeighbor (dtype kept) on every real dtype. Each against the float32 kernel on the
-- same values, or against a reference computed here in Lua.
local tfdev = require "tfdev"
local h = require "spec.support.helpers"

local window = h.window

local function run(op, inputs, attrs) return h.run_node(op, inputs, attrs)[1] end

-- A nested table of dims filled by gen(i) for i = 1, 2, ... in row-major order.
local function fill(dims, gen)
  local i = 0
  local function build(d)
    local t = {}
    for k = 1, dims[d] do
      if d == #dims then
        i = i + 1
        t[k] = gen(i)
      else
        t[k] = build(d + 1)
      end
    end
    return t
  end
  return build(1)
end

-- Deterministic small values: integers in [-4, 4], or multiples of 1/64 in [-1, 1]: exact in float16,
-- their products and sums exact in float32 (17 bits at most here) but not all in float16, so a
-- float16 result shows its one rounding.
local function ints(dims, seed)
  return fill(dims, function(i) return (i * 7 + seed * 13 + (i * i) % 5) % 9 - 4 end)
end
local function sixty_fourths(dims, seed)
  return fill(dims, function(i) return ((i * 37 + seed * 5 + (i * i * seed) % 29) % 129 - 64) / 64 end)
end

local function map(t, fn)
  if type(t) ~= "table" then return fn(t) end
  local out = {}
  for i = 1, #t do out[i] = map(t[i], fn) end
  return out
end

-- Asserts equal shapes and values (==, so 3 and 3.0 agree); `kind` "integer" also asks every value of
-- `got` to be a Lua integer.
local function assert_equal(want, got, kind, path)
  path = path or ""
  if type(want) == "table" then
    assert(type(got) == "table" and #got == #want,
      string.format("%s: expected %d items, got %s", path, #want, type(got) == "table" and #got or tostring(got)))
    for i = 1, #want do assert_equal(want[i], got[i], kind, path .. "[" .. i .. "]") end
    return
  end
  assert(want == got, string.format("%s: expected %s, got %s", path, tostring(want), tostring(got)))
  if kind then assert(math.type(got) == kind, string.format("%s: %s is a %s", path, tostring(got), math.type(got))) end
end

-- |want - got| <= rel * max(|want|, 1) everywhere.
local function assert_rel(want, got, rel, path)
  path = path or ""
  if type(want) == "table" then
    assert(type(got) == "table" and #got == #want, path .. ": shapes differ")
    for i = 1, #want do assert_rel(want[i], got[i], rel, path .. "[" .. i .. "]") end
    return
  end
  assert(math.abs(want - got) <= rel * math.max(math.abs(want), 1),
    string.format("%s: expected %.7g, got %.7g", path, want, got))
end

local ref_conv, ref_pool = h.conv_reference, h.pool_reference

-- v rounded to float16, to nearest even, computed here (v's magnitude is far below float16's limit).
local function round_half(v)
  if v == 0 then return v end
  local a, e = math.abs(v), 0
  while 2.0 ^ (e + 1) <= a do e = e + 1 end
  while 2.0 ^ e > a do e = e - 1 end
  local spacing = 2.0 ^ (math.max(e, -14) - 10) -- 11 significant bits; subnormals below 2^-14
  local q = a / spacing
  local fl = math.floor(q)
  if q - fl > 0.5 or (q - fl == 0.5 and fl % 2 == 1) then fl = fl + 1 end
  return (v < 0 and -1 or 1) * fl * spacing
end

local conv_cases = {
  { "SAME, stride 2", { 2, 7, 6, 3 }, { 3, 3, 3, 4 }, { 1, 2, 2, 1 }, "SAME" },
  { "VALID, stride 2", { 1, 8, 7, 2 }, { 2, 3, 2, 3 }, { 1, 2, 2, 1 }, "VALID" },
  { "SAME, dilation 2", { 1, 7, 8, 2 }, { 3, 3, 2, 2 }, { 1, 1, 1, 1 }, "SAME", { 1, 2, 2, 1 } },
  { "VALID, dilation 2", { 1, 8, 9, 3 }, { 2, 3, 3, 2 }, { 1, 1, 1, 1 }, "VALID", { 1, 2, 2, 1 } },
}

describe("Conv2D and DepthwiseConv2dNative on float64, int32 and float16", function()
  after_each(function() tfdev.factory.reset() end)

  for _, case in ipairs(conv_cases) do
    local name, xs, fs, strides, padding, dil = table.unpack(case)
    local attrs = { strides = strides, padding = padding, dilations = dil }
    for _, op in ipairs { "Conv2D", "DepthwiseConv2dNative" } do
      local depthwise = op == "DepthwiseConv2dNative"
      local fdims = depthwise and { fs[1], fs[2], xs[4], 2 } or fs -- channel multiplier 2
      local o = { strides = strides, padding = padding, dilations = dil, depthwise = depthwise }

      it(op .. " float64, " .. name .. ": within 1e-12 of a float64 reference", function()
        local x, f = h.random_values(xs, 3), h.random_values(fdims, 5)
        local y = run(op, { tfdev.tensor(x, "float64"), tfdev.tensor(f, "float64") }, attrs)
        assert.are.equal("float64", y.dtype)
        h.assert_close(ref_conv(x, f, o), y:totable(), 1e-12)
      end)

      it(op .. " float16, " .. name .. ": the float32 kernel's result rounded to half", function()
        local x, f = sixty_fourths(xs, 1), sixty_fourths(fdims, 2)
        local want = run(op, { tfdev.tensor(x, "float32"), tfdev.tensor(f, "float32") }, attrs)
        local y = run(op, { tfdev.tensor(x, "float16"), tfdev.tensor(f, "float16") }, attrs)
        assert.are.equal("float16", y.dtype)
        assert_rel(want:totable(), y:totable(), 1e-2)
        -- exact float32 sums: one rounding to half, to nearest even (and some sums do round, some are ties)
        local halves = map(want:totable(), round_half)
        assert_equal(halves, y:totable())
        local flat_want, flat_half = {}, {}
        map(want:totable(), function(v) flat_want[#flat_want + 1] = v end)
        map(halves, function(v) flat_half[#flat_half + 1] = v end)
        local rounded, ties = 0, 0
        for i = 1, #flat_want do
          rounded = rounded + (flat_want[i] ~= flat_half[i] and 1 or 0)
          local a = math.abs(flat_want[i])
          local spacing = a >= 2 ^ -14 and 2.0 ^ (math.floor(math.log(a, 2)) - 10) or 2.0 ^ -24
          ties = ties + ((a / spacing) % 1 == 0.5 and 1 or 0)
        end
        assert.is_true(rounded > 0 and ties > 0, "the case must round, ties included")
      end)

      if not depthwise then
        it(op .. " int32, " .. name .. ": the float32 kernel's result on small integers, exactly", function()
          local x, f = ints(xs, 1), ints(fdims, 2)
          local want = run(op, { tfdev.tensor(x, "float32"), tfdev.tensor(f, "float32") }, attrs):totable()
          local y = run(op, { tfdev.tensor(x, "int32"), tfdev.tensor(f, "int32") }, attrs)
          assert.are.equal("int32", y.dtype)
          assert_equal(want, y:totable(), "integer")
          assert_equal(ref_conv(x, f, o), y:totable(), "integer")
        end)
      end
    end
  end

  it("Conv2D int32 wraps around on overflow, as TensorFlow's int32 contraction does", function()
    local x = fill({ 1, 4, 4, 3 }, function(i) return (i % 2 == 0 and 1 or -1) * (2000000000 - i * 999983) end)
    local f = fill({ 3, 3, 3, 2 }, function(i) return (i % 3 == 0 and -1 or 1) * (30000 + i * 7919) end)
    local function wrap(v)
      v = math.tointeger(v) & 0xffffffff
      return v >= 0x80000000 and v - 0x100000000 or v
    end
    -- exact products and sums in Lua's 64-bit integers (|sum| < 2^63), wrapped once at the end:
    -- the same as wrapping every step
    local exact = ref_conv(x, f, { strides = { 1, 1, 1, 1 }, padding = "SAME" })
    local y = run("Conv2D", { tfdev.tensor(x, "int32"), tfdev.tensor(f, "int32") },
      { strides = { 1, 1, 1, 1 }, padding = "SAME" })
    assert.are.equal("int32", y.dtype)
    assert_equal(map(exact, wrap), y:totable(), "integer")
    local overflows = 0
    map(exact, function(v) overflows = overflows + ((v > 0x7fffffff or v < -0x80000000) and 1 or 0) end)
    assert.is_true(overflows > 8, "the case must overflow int32")
  end)

  it("an input of depth 0 gives zeros, as the float32 kernel does", function()
    local attrs = { strides = { 1, 1, 1, 1 }, padding = "SAME" }
    for _, case in ipairs { { "Conv2D", { 2, 2, 0, 3 }, "int32", 3 }, { "Conv2D", { 2, 2, 0, 3 }, "float16", 3 },
      { "DepthwiseConv2dNative", { 2, 2, 0, 3 }, "float64", 0 } } do
      local op, fdims, dt, depth = table.unpack(case)
      local function t(dims, d) return tfdev.from_bytes(d, dims, "") end
      local want = run(op, { t({ 1, 3, 2, 0 }, "float32"), t(fdims, "float32") }, attrs):totable()
      local y = run(op, { t({ 1, 3, 2, 0 }, dt), t(fdims, dt) }, attrs)
      assert.are.equal(dt, y.dtype)
      assert.are.same({ 1, 3, 2, depth }, y.shape)
      assert_equal(want, y:totable())
    end
  end)

  it("runs eagerly too (a device's compute)", function()
    local d = tfdev.factory.add_devices()[1]
    local x, f = ints({ 1, 3, 3, 1 }, 4), ints({ 2, 2, 1, 1 }, 6)
    local y = d:compute("Conv2D", { tfdev.tensor(x, "int32"), tfdev.tensor(f, "int32") },
      { strides = { 1, 1, 1, 1 }, padding = "VALID" })
    assert.are.equal("int32", y.dtype)
    assert_equal(ref_conv(x, f, { strides = { 1, 1, 1, 1 }, padding = "VALID" }), y:totable(), "integer")
  end)

  it("refuses a filter of another dtype, naming both, and dtypes TensorFlow does not register", function()
    local attrs = { strides = { 1, 1, 1, 1 }, padding = "SAME" }
    local x1 = { { { { 1, 2 } } } }
    local f1 = { { { { 1 }, { 2 } } } }
    for _, case in ipairs {
      { "Conv2D", "int32", "float32" }, { "Conv2D", "float64", "float16" }, { "DepthwiseConv2dNative", "float16", "float64" },
      { "DepthwiseConv2dNative", "float32", "float64" },
    } do
      local op, xt, ft = table.unpack(case)
      local err = h.raises("INVALID_ARGUMENT", xt, run, op, { tfdev.tensor(x1, xt), tfdev.tensor(f1, ft) }, attrs)
      assert.truthy(err.message:find(ft, 1, true), err.message)
    end
    local b = tfdev.tensor({ { { { true } } } }, "bool")
    for _, op in ipairs { "Conv2D", "DepthwiseConv2dNative" } do
      h.raises("INVALID_ARGUMENT", "T=bool is not allowed", run, op, { b, b }, attrs)
    end
    h.raises("INVALID_ARGUMENT", "T=int32 is not allowed", run, "DepthwiseConv2dNative",
      { tfdev.tensor(x1, "int32"), tfdev.tensor(f1, "int32") }, attrs)
    h.raises("INVALID_ARGUMENT", "T=int64 is not allowed", run, "Conv2D",
      { tfdev.tensor(x1, "int64"), tfdev.tensor(f1, "int64") }, attrs)
    -- the fused convolution stays float32
    h.raises("INVALID_ARGUMENT", "T=float64 is not allowed", run, "_FusedConv2D",
      { tfdev.tensor(x1, "float64"), tfdev.tensor(f1, "float64"), tfdev.tensor({ 1 }, "float64") },
      { strides = { 1, 1, 1, 1 }, padding = "SAME", fused_ops = { "BiasAdd" }, num_args = 1 })
  end)
end)

describe("MaxPool and AvgPool on the other dtypes", function()
  after_each(function() tfdev.factory.reset() end)

  local pool_cases = {
    { "SAME, stride 2", { 1, 3, 3, 1 }, { 1, 2, 2, 1 }, { 2, 7, 6, 3 }, "SAME" },
    { "VALID, stride 2", { 1, 2, 3, 1 }, { 1, 2, 2, 1 }, { 1, 8, 9, 2 }, "VALID" },
  }
  for _, case in ipairs(pool_cases) do
    local name, ksize, strides, xs, padding = table.unpack(case)
    local attrs = { ksize = ksize, strides = strides, padding = padding }

    for _, dt in ipairs { "int32", "int64", "uint8" } do
      it("MaxPool " .. dt .. ", " .. name .. ": the float32 kernel's result, exactly", function()
        local x = dt == "uint8" and fill(xs, function(i) return (i * 37 + (i * i) % 11) % 256 end) or ints(xs, 3)
        local want = run("MaxPool", { tfdev.tensor(x, "float32") }, attrs):totable()
        local y = run("MaxPool", { tfdev.tensor(x, dt) }, attrs)
        assert.are.equal(dt, y.dtype)
        assert_equal(want, y:totable(), "integer")
      end)
    end

    it("MaxPool float64 and float16, " .. name, function()
      local x = sixty_fourths(xs, 4)
      local want = run("MaxPool", { tfdev.tensor(x, "float32") }, attrs):totable()
      for _, dt in ipairs { "float64", "float16" } do
        local y = run("MaxPool", { tfdev.tensor(x, dt) }, attrs)
        assert.are.equal(dt, y.dtype)
        assert_equal(want, y:totable())
      end
    end)

    it("AvgPool float64, " .. name .. ": within 1e-12 of a float64 reference", function()
      local x = h.random_values(xs, 9)
      local y = run("AvgPool", { tfdev.tensor(x, "float64") }, attrs)
      assert.are.equal("float64", y.dtype)
      h.assert_close(ref_pool(x, { ksize = ksize, strides = strides, padding = padding }), y:totable(), 1e-12)
    end)

    it("AvgPool float16, " .. name .. ": the float32 kernel's result within 1e-2", function()
      local x = sixty_fourths(xs, 6)
      local want = run("AvgPool", { tfdev.tensor(x, "float32") }, attrs):totable()
      local y = run("AvgPool", { tfdev.tensor(x, "float16") }, attrs)
      assert.are.equal("float16", y.dtype)
      assert_rel(want, y:totable(), 1e-2)
    end)
  end

  it("MaxPool int64 keeps values above 2^53 exact, and starts from the lowest int64 (SAME padding)", function()
    local big = 1 << 60
    -- neighbours differ by 1 above 2^60, where float64 cannot tell them apart
    local x = fill({ 1, 5, 4, 2 }, function(i) return (i % 3 == 0 and -1 or 1) * (big + (i * 7) % 13) end)
    local attrs = { ksize = { 1, 3, 3, 1 }, strides = { 1, 2, 2, 1 }, padding = "SAME" }
    local want = ref_pool(x, { ksize = attrs.ksize, strides = attrs.strides, padding = "SAME", max = true,
      lowest = math.mininteger })
    local y = run("MaxPool", { tfdev.tensor(x, "int64") }, attrs)
    assert.are.equal("int64", y.dtype)
    assert_equal(want, y:totable(), "integer")
    -- all negative, windows cut by the padding: a start from 0 would show
    local neg = map(x, function(v) return -math.abs(v) - big end)
    want = ref_pool(neg, { ksize = attrs.ksize, strides = attrs.strides, padding = "SAME", max = true,
      lowest = math.mininteger })
    assert_equal(want, run("MaxPool", { tfdev.tensor(neg, "int64") }, attrs):totable(), "integer")
    assert.is_true(want[1][1][1][1] < -big)
  end)

  it("MaxPool int32 of negative values starts from the lowest int32", function()
    local x = fill({ 1, 3, 3, 1 }, function(i) return -2147483000 - i * 10 end)
    local y = run("MaxPool", { tfdev.tensor(x, "int32") }, { ksize = { 1, 2, 2, 1 }, strides = { 1, 2, 2, 1 }, padding = "SAME" })
    assert_equal({ { { { -2147483010 }, { -2147483030 } }, { { -2147483070 }, { -2147483090 } } } }, y:totable(), "integer")
  end)

  it("refuses dtypes TensorFlow does not register", function()
    local attrs = { ksize = { 1, 1, 1, 1 }, strides = { 1, 1, 1, 1 }, padding = "VALID" }
    local b = tfdev.tensor({ { { { true } } } }, "bool")
    h.raises("INVALID_ARGUMENT", "T=bool is not allowed", run, "MaxPool", { b }, attrs)
    h.raises("INVALID_ARGUMENT", "T=bool is not allowed", run, "AvgPool", { b }, attrs)
    for _, dt in ipairs { "int32", "int64", "uint8" } do
      h.raises("INVALID_ARGUMENT", "T=" .. dt .. " is not allowed", run, "AvgPool", { tfdev.tensor({ { { { 1 } } } }, dt) },
        attrs)
    end
  end)
end)

describe("ResizeBilinear and ResizeNearestNeighbor on the other dtypes", function()
  after_each(function() tfdev.factory.reset() end)

  local flags = {
    { "default", {} },
    { "align_corners", { align_corners = true } },
    { "half_pixel_centers", { half_pixel_centers = true } },
  }
  local size = tfdev.tensor({ 7, 5 }, "int32")
  local xs = { 2, 4, 3, 2 }

  for _, flag in ipairs(flags) do
    local fname, attrs = table.unpack(flag)

    it("ResizeBilinear uint8 (" .. fname .. ") gives float32, the float32 kernel's values", function()
      local x = fill(xs, function(i) return (i * 53 + (i * i) % 17) % 256 end)
      local want = run("ResizeBilinear", { tfdev.tensor(x, "float32"), size }, attrs):totable()
      local y = run("ResizeBilinear", { tfdev.tensor(x, "uint8"), size }, attrs)
      assert.are.equal("float32", y.dtype)
      assert_equal(want, y:totable())
      -- the output is interpolated, not the input's values cast back
      local fractional = false
      for _, v in ipairs(y:totable()[1][2][2]) do fractional = fractional or v ~= math.floor(v) end
      assert.is_true(fractional)
    end)

    it("ResizeBilinear float64, int32, int64, float16 (" .. fname .. ") give float32", function()
      local x = ints(xs, 5)
      local want = run("ResizeBilinear", { tfdev.tensor(x, "float32"), size }, attrs):totable()
      for _, dt in ipairs { "float64", "int32", "int64", "float16" } do
        local y = run("ResizeBilinear", { tfdev.tensor(x, dt), size }, attrs)
        assert.are.equal("float32", y.dtype)
        assert_equal(want, y:totable())
      end
    end)

    it("ResizeNearestNeighbor int32 (" .. fname .. ") keeps int32", function()
      local x = fill(xs, function(i) return i * 1000003 - 7000000 end) -- not all exact in float32
      local y = run("ResizeNearestNeighbor", { tfdev.tensor(x, "int32"), size }, attrs)
      assert.are.equal("int32", y.dtype)
      -- where the float32 kernel picks each value from: feed it the element indices
      local idx = run("ResizeNearestNeighbor", { tfdev.tensor(fill(xs, function(i) return i end), "float32"), size }, attrs)
      local flat = {}
      for _, img in ipairs(x) do for _, row in ipairs(img) do for _, px in ipairs(row) do
        for _, v in ipairs(px) do flat[#flat + 1] = v end
      end end end
      assert_equal(map(idx:totable(), function(i) return flat[math.tointeger(i)] end), y:totable(), "integer")
    end)
  end

  it("ResizeNearestNeighbor keeps every real dtype, values unchanged", function()
    local x = ints(xs, 2)
    local want = run("ResizeNearestNeighbor", { tfdev.tensor(x, "float32"), size }, {}):totable()
    for _, dt in ipairs { "float64", "int64", "uint8", "float16" } do
      local xv = dt == "uint8" and map(x, function(v) return v + 4 end) or x
      local w = dt == "uint8" and map(want, function(v) return v + 4 end) or want
      local y = run("ResizeNearestNeighbor", { tfdev.tensor(xv, dt), size }, {})
      assert.are.equal(dt, y.dtype)
      assert_equal(w, y:totable())
    end
    local big = fill({ 1, 1, 2, 1 }, function(i) return (1 << 62) + i end)
    assert_equal({ { { { (1 << 62) + 1 }, { (1 << 62) + 1 }, { (1 << 62) + 2 }, { (1 << 62) + 2 } } } },
      run("ResizeNearestNeighbor", { tfdev.tensor(big, "int64"), tfdev.tensor({ 1, 4 }, "int32") }, {}):totable(), "integer")
  end)

  it("refuses bool images, naming bool", function()
    local b = tfdev.tensor({ { { { true } } } }, "bool")
    for _, op in ipairs { "ResizeBilinear", "ResizeNearestNeighbor" } do
      h.raises("INVALID_ARGUMENT", "T=bool is not allowed", run, op, { b, size }, {})
    end
  end)
end)
