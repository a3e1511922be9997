-- complex64 tensors and the ops that make and read them (Complex, Real, Imag, ComplexAbs, Cast) and the
-- Fourier transforms (FFT, IFFT, RFFT, IRFFT): values against a direct DFT computed here in double, the
-- shapes and error texts of TensorFlow's fft_ops.cc, and complex values through every door (Lua tables,
-- bytes, JSON GraphDefs, TensorFlow.js weights). spec/conformance/ checks the same ops against TensorFlow.js.
local tfdev = require "tfdev"
local h = require "spec.support.helpers"

local function f32(v) return tfdev.tensor(v, "float32") end
local function i32(v) return tfdev.tensor(v, "int32") end
local function c64(v) return tfdev.tensor(v, "complex64") end

-- The direct DFT of a list of {re, im} pairs (sign -1 forward, +1 inverse, unscaled).
local function dft(x, sign)
  local n, out = #x, {}
  for k = 0, n - 1 do
    local re, im = 0.0, 0.0
    for j = 0, n - 1 do
      local a = sign * 2 * math.pi * ((j * k) % n) / n
      local xr, xi = x[j + 1][1], x[j + 1][2]
      re = re + xr * math.cos(a) - xi * math.sin(a)
      im = im + xr * math.sin(a) + xi * math.cos(a)
    end
    out[k + 1] = { re, im }
  end
  return out
end

local function pairs_close(want, got, tol, what)
  assert.are.equal(#want, #got, what .. ": length")
  for i = 1, #want do
    for q = 1, 2 do
      local w, g = want[i][q], got[i][q]
      assert(math.abs(w - g) <= tol * math.max(1, math.abs(w)),
        ("%s: element %d part %d: %g, want %g"):format(what, i, q, g, w))
    end
  end
end

-- n pseudo-random {re, im} pairs, multiples of 1/16 in [-2, 2).
local function signal(n, seed)
  local out, s = {}, seed
  local function nxt()
    s = (s * 1103515245 + 12345) % 2147483648
    return (s % 64 - 32) / 16
  end
  for i = 1, n do out[i] = { nxt(), nxt() } end
  return out
end

describe("complex64 tensors", function()
  it("are made from {re, im} pairs and read back as pairs", function()
    local t = c64 { { 1, 2 }, { 3, -4.5 } }
    assert.are.equal("complex64", t.dtype)
    assert.are.same({ 2 }, t.shape)
    assert.are.same({ { 1, 2 }, { 3, -4.5 } }, t:totable())
    assert.are.equal("tfdev.tensor(complex64, shape={2}): [1+2i, 3-4.5i]", tostring(t))
    local m = c64 { { { 1, 0 }, { 0, 1 } }, { { -1, 0 }, { 0, -1 } } }
    assert.are.same({ 2, 2 }, m.shape)
    assert.are.same({ 0, -1 }, m:totable()[2][2])
    local s = c64 { 0.5, -0.25 } -- one pair: a scalar
    assert.are.same({}, s.shape)
    assert.are.same({ 0.5, -0.25 }, s:item())
    assert.are.same({ 0 }, c64({}).shape)
  end)

  it("are real, imaginary pairs of float32 in memory, as numpy's complex64", function()
    local t = c64 { { 1, 2 }, { 3, 4 } }
    assert.are.equal(string.pack("<ffff", 1, 2, 3, 4), t:bytes())
    local b = tfdev.from_bytes("complex64", { 1 }, string.pack("<ff", -1.5, 8))
    assert.are.same({ { -1.5, 8 } }, b:totable())
    assert.are.equal(tfdev.tensor { dtype = "DT_COMPLEX64", shape = { 2 }, data = { { 1, 2 }, { 3, 4 } } }, t)
    assert.are_not.equal(c64 { { 1, 2 }, { 3, 5 } }, t)
    assert.are.same({ { 7, -1 }, { 7, -1 } }, tfdev.tensor({ { 0, 0 }, { 0, 0 } }, "complex64"):fill({ 7, -1 }):totable())
  end)

  it("refuses elements that are not pairs of numbers, naming the element", function()
    h.raises("INVALID_ARGUMENT", "element [2] is not a {re, im} pair of numbers (dtype complex64)", c64,
      { { 1, 2 }, { 3 } })
    h.raises("INVALID_ARGUMENT", "is not a {re, im} pair", c64, 3)
    h.raises("INVALID_ARGUMENT", "is not a {re, im} pair", c64, { { "a", 1 } })
    h.raises("INVALID_ARGUMENT", "fill: a complex64 tensor takes a {re, im} pair, got a number", function()
      c64({ { 0, 0 } }):fill(1)
    end)
  end)

  it("are fed and fetched through a session", function()
    local s <close> = tfdev.session()
    s:create { node = {
      { name = "x", op = "Placeholder", attr = { dtype = "complex64" } },
      { name = "y", op = "Identity", input = { "x" } },
      { name = "r", op = "Reshape", input = { "x", "shape" } },
      { name = "shape", op = "Const", attr = { value = i32 { 2, 1 } } },
    } }
    local out = s:run({ x = { { 1, 2 }, { 3, 4 } } }, { "y", "r" })
    assert.are.same({ { 1, 2 }, { 3, 4 } }, out[1]:totable())
    assert.are.same({ { { 1, 2 } }, { { 3, 4 } } }, out[2]:totable())
  end)
end)

describe("Complex, Real, Imag, ComplexAbs and Cast", function()
  it("make complex64 from parts, broadcasting as TensorFlow's Complex does", function()
    local y = h.run_node("Complex", { f32 { { 1, 2 }, { 3, 4 } }, f32 { 10, 20 } })[1]
    assert.are.same({ { { 1, 10 }, { 2, 20 } }, { { 3, 10 }, { 4, 20 } } }, y:totable())
    local s = h.run_node("Complex", { f32(5), f32 { 1, 2, 3 } })[1]
    assert.are.same({ { 5, 1 }, { 5, 2 }, { 5, 3 } }, s:totable())
  end)

  it("take parts and magnitudes", function()
    local x = c64 { { 3, 4 }, { -5, 12 }, { 0, -2 } }
    assert.are.same({ 3, -5, 0 }, h.run_node("Real", { x })[1]:totable())
    assert.are.same({ 4, 12, -2 }, h.run_node("Imag", { x })[1]:totable())
    assert.are.same({ 5, 13, 2 }, h.run_node("ComplexAbs", { x })[1]:totable())
  end)

  it("cast like TensorFlow: a real gets imaginary part 0, a complex keeps its real part", function()
    local to = h.run_node("Cast", { f32 { 1.5, -2 } }, { DstT = "complex64" })[1]
    assert.are.same({ { 1.5, 0 }, { -2, 0 } }, to:totable())
    local from = h.run_node("Cast", { c64 { { 2.7, 9 }, { -1.5, 1 } } }, { DstT = "int32" })[1]
    assert.are.same({ 2, -1 }, from:totable())
    local b = h.run_node("Cast", { c64 { { 0, 0 }, { 0, 1 }, { 2, 0 } } }, { DstT = "bool" })[1]
    assert.are.same({ false, true, true }, b:totable())
  end)

  it("add, subtract, multiply, divide and negate, broadcasting, also where the optimiser rewrites", function()
    local a, b = c64 { { 1, 2 }, { 3, -4 } }, c64 { 0.5, 1 }
    assert.are.same({ { 1.5, 3 }, { 3.5, -3 } }, h.run_node("AddV2", { a, b })[1]:totable())
    assert.are.same({ { 0.5, 1 }, { 2.5, -5 } }, h.run_node("Sub", { a, b })[1]:totable())
    assert.are.same({ { -1.5, 2 }, { 5.5, 1 } }, h.run_node("Mul", { a, b })[1]:totable())
    assert.are.same({ { 2, 0 }, { -2, -4 } }, h.run_node("RealDiv", { a, b })[1]:totable())
    -- Smith's division: no overflow where |b|^2 would overflow float32
    local big = h.run_node("RealDiv", { c64 { 1e30, 1e30 }, c64 { 1e30, 1e30 } })[1]:item()
    assert.are.same({ 1, 0 }, big)
    assert.are.same({ { -1, -2 }, { -3, 4 } }, h.run_node("Neg", { a })[1]:totable())
    local s <close> = tfdev.session { optimize_graph = true }
    s:create { node = {
      { name = "x", op = "Placeholder", attr = { dtype = "complex64" } },
      { name = "sq", op = "Mul", input = { "x", "x" } },
      { name = "twice", op = "Add", input = { "x", "x" } },
      { name = "z", op = "Sub", input = { "sq", "twice" } },
    } }
    assert.are.same({ { -5, 0 } }, s:run({ x = { { 1, 2 } } }, { "z" })[1]:totable()) -- (1+2i)^2 - 2(1+2i)
  end)

  it("refuse the dtypes TensorFlow does not pair", function()
    h.raises("INVALID_ARGUMENT", "Tout=float32 is not allowed with float32 input (only complex64)", h.run_node,
      "Complex", { f32 { 1 }, f32 { 2 } }, { Tout = "float32" })
    h.raises("INVALID_ARGUMENT", "Tout=float64 is not allowed with complex64 input (only float32)", h.run_node,
      "Real", { c64 { { 1, 2 } } }, { Tout = "float64" })
    h.raises("INVALID_ARGUMENT", "float64", h.run_node, "Complex",
      { tfdev.tensor({ 1 }, "float64"), tfdev.tensor({ 2 }, "float64") })
    h.raises("INVALID_ARGUMENT", "ComplexAbs", h.run_node, "ComplexAbs", { f32 { 1 } })
    h.raises("INVALID_ARGUMENT", "Maximum", h.run_node, "Maximum", { c64 { { 1, 2 } }, c64 { { 1, 2 } } })
  end)
end)

describe("FFT and IFFT", function()
  it("match a direct DFT at every length from 1 to 33, and at 64, 100 and 257", function()
    local lengths = {}
    for n = 1, 33 do lengths[#lengths + 1] = n end
    for _, n in ipairs { 64, 100, 257 } do lengths[#lengths + 1] = n end
    for _, n in ipairs(lengths) do
      local x = signal(n, n)
      local f = h.run_node("FFT", { c64 { x } })[1]
      assert.are.same({ 1, n }, f.shape)
      pairs_close(dft(x, -1), f:totable()[1], 2e-6 * math.log(n + 1, 2), "FFT n=" .. n)
      local inv = dft(x, 1)
      for i = 1, n do inv[i] = { inv[i][1] / n, inv[i][2] / n } end
      pairs_close(inv, h.run_node("IFFT", { c64 { x } })[1]:totable()[1], 2e-6 * math.log(n + 1, 2), "IFFT n=" .. n)
    end
  end)

  it("transform the innermost dimension of every row, over the intra-op pool", function()
    local rows = {}
    for r = 1, 64 do rows[r] = signal(48, r) end
    local s <close> = tfdev.session { intra_op_threads = 2, optimize_graph = false }
    s:create { node = {
      { name = "x", op = "Const", attr = { value = c64 { rows, rows } } },
      { name = "f", op = "FFT", input = { "x" } },
      { name = "b", op = "IFFT", input = { "f" } },
    } }
    local f, b = table.unpack(s:run({}, { "f", "b" }))
    assert.are.same({ 2, 64, 48 }, f.shape)
    local ft, bt = f:totable(), b:totable()
    for r = 1, 64, 21 do
      pairs_close(dft(rows[r], -1), ft[2][r], 1e-5, "row " .. r)
      pairs_close(rows[r], bt[1][r], 1e-5, "round trip row " .. r)
    end
  end)

  it("pass empty tensors through and need rank 1", function()
    assert.are.same({ 2, 0 }, h.run_node("FFT", { tfdev.tensor { dtype = "complex64", shape = { 2, 0 } } })[1].shape)
    assert.are.same({ 0, 3 }, h.run_node("IFFT", { tfdev.tensor { dtype = "complex64", shape = { 0, 3 } } })[1].shape)
    h.raises("INVALID_ARGUMENT", "Shape must be at least rank 1 but is rank 0", h.run_node, "FFT", { c64 { 1, 2 } })
    h.raises("INVALID_ARGUMENT", "Input must have rank of at least 1 but got: []", h.run_fed, "FFT", { c64 { 1, 2 } })
    h.raises("INVALID_ARGUMENT", "FFT", h.run_node, "FFT", { f32 { 1, 2 } })
  end)
end)

describe("RFFT and IRFFT", function()
  it("give the non-negative frequencies of a real signal, cropped to fft_length", function()
    for _, n in ipairs { 1, 2, 5, 8, 9, 30 } do
      local x, cx = {}, {}
      for i, p in ipairs(signal(n + 3, 7 * n)) do x[i], cx[i] = p[1], { p[1], 0 } end
      local y = h.run_node("RFFT", { f32 { x }, i32 { n } })[1] -- the input is 3 longer: cropped
      assert.are.same({ 1, n // 2 + 1 }, y.shape)
      local full = dft({ table.unpack(cx, 1, n) }, -1)
      pairs_close({ table.unpack(full, 1, n // 2 + 1) }, y:totable()[1], 1e-5, "RFFT n=" .. n)
    end
  end)

  it("invert them for even and odd lengths, from the first fft_length / 2 + 1 bins", function()
    for _, n in ipairs { 1, 2, 6, 7, 16, 33 } do
      local x = {}
      for i, p in ipairs(signal(n, 3 * n)) do x[i] = p[1] end
      local s <close> = tfdev.session { optimize_graph = false }
      s:create { node = {
        { name = "x", op = "Const", attr = { value = f32(x) } },
        { name = "n", op = "Const", attr = { value = i32 { n } } },
        { name = "f", op = "RFFT", input = { "x", "n" } },
        { name = "b", op = "IRFFT", input = { "f", "n" } },
      } }
      local b = s:run({}, { "b" })[1]
      assert.are.same({ n }, b.shape)
      h.assert_close(x, b:totable(), 1e-5, "IRFFT n=" .. n)
    end
    -- More bins than needed: the extra ones are not read.
    local y = h.run_node("IRFFT", { c64 { { 4, 0 }, { 0, 0 }, { 0, 0 }, { 99, 99 } }, i32 { 4 } })[1]
    assert.are.same({ 1, 1, 1, 1 }, y:totable())
  end)

  it("give TensorFlow's errors and shapes for fft_length", function()
    h.raises("INVALID_ARGUMENT", "Input dimension 1 must have length of at least 8 but got: 4", h.run_node, "RFFT",
      { f32 { { 1, 2, 3, 4 } }, i32 { 8 } })
    h.raises("INVALID_ARGUMENT", "Input dimension 0 must have length of at least 5 but got: 2", h.run_node, "IRFFT",
      { c64 { { 1, 0 }, { 2, 0 } }, i32 { 8 } })
    h.raises("INVALID_ARGUMENT", "Obtained a FFT shape of 0 elements: [2,0]", h.run_node, "RFFT",
      { f32 { { 1, 2 }, { 3, 4 } }, i32 { 0 } })
    h.raises("INVALID_ARGUMENT", "fft_length must have shape [1]", h.run_node, "RFFT", { f32 { 1, 2 }, i32 { 2, 2 } })
    h.raises("INVALID_ARGUMENT", "fft_length[0] must >= 0, but got: -2", h.run_node, "RFFT", { f32 { 1, 2 }, i32 { -2 } })
    h.raises("INVALID_ARGUMENT", "fft_length must be int32", h.run_node, "RFFT",
      { f32 { 1, 2 }, tfdev.tensor({ 2 }, "int64") })
    -- An empty signal is all padding: zeros (TensorFlow leaves this output unwritten).
    assert.are.same({ { { 0, 0 }, { 0, 0 }, { 0, 0 } } },
      h.run_node("RFFT", { tfdev.tensor { shape = { 1, 0 } }, i32 { 4 } })[1]:totable())
    assert.are.same({ 0, 4 }, h.run_node("IRFFT", { tfdev.tensor { dtype = "complex64", shape = { 0, 3 } }, i32 { 4 } })[1]
      .shape)
  end)
end)

describe("complex64 in model files", function()
  local dir = h.temp_dirs(before_each, after_each)

  it("reads scomplexVal in TensorFlow.js graphs, a repeated last pair filling the tensor", function()
    local text = [[{"modelTopology": {"node": [
      {"name": "c", "op": "Const", "attr": {"dtype": {"type": "DT_COMPLEX64"}, "value": {"tensor": {
        "dtype": "DT_COMPLEX64", "tensorShape": {"dim": [{"size": "3"}]}, "scomplexVal": [1, 2, 3, -4]}}}},
      {"name": "a", "op": "ComplexAbs", "input": ["c"]}]}}]]
    local s <close> = tfdev.session()
    s:create(tfdev.graph_def.parse(text, { format = "auto" }))
    local c, a = table.unpack(s:run({}, { "c", "a" }))
    assert.are.same({ { 1, 2 }, { 3, -4 }, { 3, -4 } }, c:totable())
    assert.are.same(5, a:totable()[2])
    local odd = text:gsub("3, %-4%]", "3]")
    h.raises("INVALID_ARGUMENT", "scomplexVal has 3 floats, not real and imaginary pairs", tfdev.graph_def.parse, odd,
      { format = "auto" })
  end)

  it("round-trips through a binary GraphDef", function()
    local g = { node = { { name = "c", op = "Const", attr = { value = c64 { { 1, 2 }, { -3, 0.5 } } } },
      { name = "f", op = "FFT", input = { "c" } } } }
    tfdev.graph_def.save(g, dir() .. "/g.pb")
    local s <close> = tfdev.session()
    s:create(tfdev.graph_def.load(dir() .. "/g.pb"))
    assert.are.same({ { -2, 2.5 }, { 4, 1.5 } }, s:run({}, { "f" })[1]:totable())
  end)

  it("loads TensorFlow.js complex64 weights (float32 real, imaginary pairs)", function()
    local f = assert(io.open(dir() .. "/model.json", "w"))
    f:write([[{"format": "graph-model", "modelTopology": {"node": [
      {"name": "w", "op": "Const", "attr": {"dtype": {"type": "DT_COMPLEX64"}, "value": {"tensor": {
        "dtype": "DT_COMPLEX64", "tensorShape": {"dim": [{"size": "2"}]}}}}},
      {"name": "x", "op": "Placeholder", "attr": {"dtype": {"type": "DT_COMPLEX64"},
        "shape": {"shape": {"dim": [{"size": "2"}]}}}},
      {"name": "y", "op": "Imag", "input": ["w"]},
      {"name": "z", "op": "Real", "input": ["x"]}]},
      "weightsManifest": [{"paths": ["w.bin"], "weights": [{"name": "w", "shape": [2], "dtype": "complex64"}]}]}]])
    f:close()
    f = assert(io.open(dir() .. "/w.bin", "wb"))
    f:write(string.pack("<ffff", 1, 2, 3, 4))
    f:close()
    local m <close> = tfdev.model(dir() .. "/model.json")
    local out = m:run { x = { { 5, 6 }, { 7, 8 } } }
    assert.are.same({ 2, 4 }, out[1]:totable())
    assert.are.same({ 5, 7 }, out[2]:totable())
  end)
end)
