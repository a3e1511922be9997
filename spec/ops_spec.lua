-- Every op's values through a session, against hand-computed results.
local tfdev = require "tfdev"
local h = require "spec.support.helpers"

-- Builds with fn(g) -> output(s), runs, returns the fetched tables.
local function eval(fn, feeds)
  local g = tfdev.graph()
  local outs = { fn(g) }
  local names = {}
  for i, o in ipairs(outs) do names[i] = o:name() end
  local s <close> = tfdev.session()
  s:create(g)
  local got = s:run(feeds or {}, names)
  local r = {}
  for i, t in ipairs(got) do r[i] = t:totable() end
  return table.unpack(r)
end

local function approx(expected, actual, tol)
  tol = tol or 1e-5
  if type(expected) == "table" then
    assert.are.equal(#expected, #actual)
    for i = 1, #expected do approx(expected[i], actual[i], tol) end
  else
    assert(math.abs(expected - actual) <= tol * math.max(1, math.abs(expected)),
      string.format("expected %.9g, got %.9g", expected, actual))
  end
end

describe("ops", function()
  it("Const, Identity and Placeholder(WithDefault)", function()
    assert.are.same({ { 1, 2 }, { 3, 4 } }, eval(function(g) return g:identity(g:const({ { 1, 2 }, { 3, 4 } })) end))
    assert.are.same({ 5, 6 }, eval(function(g) return g:identity(g:placeholder("int32", { 2 }, { name = "p" })) end,
      { p = { 5, 6 } }))
    assert.are.same({ 7 }, eval(function(g)
      return g:op("PlaceholderWithDefault", { g:const({ 7 }) }, { dtype = "int32", shape = { 1 }, name = "d" })
    end))
    assert.are.same({ 9 }, eval(function(g)
      return g:op("PlaceholderWithDefault", { g:const({ 7 }) }, { dtype = "int32", shape = { 1 }, name = "d" })
    end, { d = { 9 } }))
  end)

  it("binary arithmetic with numpy broadcasting", function()
    local a = { { 1, 2, 3 }, { 4, 5, 6 } }
    assert.are.same({ { 11, 22, 33 }, { 14, 25, 36 } },
      eval(function(g) return g:op("Add", { g:const(a), g:const({ 10, 20, 30 }) }) end))
    assert.are.same({ { 0, 1, 2 }, { 2, 3, 4 } },
      eval(function(g) return g:op("Sub", { g:const(a), g:const({ { 1 }, { 2 } }) }) end))
    assert.are.same({ { 2, 4, 6 }, { 8, 10, 12 } }, eval(function(g) return g:op("Mul", { g:const(a), g:const(2) }) end))
    assert.are.same({ { 11, 12, 13 }, { 14, 15, 16 } }, eval(function(g) return g:op("AddV2", { g:const(10), g:const(a) }) end))
    approx({ { 0.5, 1, 1.5 } }, eval(function(g) return g:op("RealDiv", { g:const({ { 1, 2, 3 } }, { dtype = "float32" }), g:const(2, { dtype = "float32" }) }) end))
    assert.are.same({ { 3, 2, 3 }, { 4, 5, 6 } }, eval(function(g) return g:op("Maximum", { g:const(a), g:const({ 3, 1, 2 }) }) end))
    assert.are.same({ { 1, 1, 2 }, { 3, 1, 2 } }, eval(function(g) return g:op("Minimum", { g:const(a), g:const({ 3, 1, 2 }) }) end))
    -- [2,1,3] + [4,1] -> [2,4,3]
    local r = eval(function(g)
      return g:op("Add", { g:const({ { { 1, 2, 3 } }, { { 4, 5, 6 } } }), g:const({ { 0 }, { 10 }, { 20 }, { 30 } }) })
    end)
    assert.are.same({ 2, 4, 3 }, { #r, #r[1], #r[1][1] })
    assert.are.same({ 34, 35, 36 }, r[2][4])
    assert.are.same({ 1.5, 2.5 }, eval(function(g) return g:op("Add", { g:const({ 1, 2 }, { dtype = "float64" }), g:const(0.5, { dtype = "float64" }) }) end))
    assert.are.same({ 7, 9 }, eval(function(g) return g:op("Add", { g:const({ 3, 4 }, { dtype = "int64" }), g:const({ 4, 5 }, { dtype = "int64" }) }) end))
  end)

  it("arithmetic metamethods on builder outputs", function()
    assert.are.same({ 6, 7 }, eval(function(g)
      local x = g:const({ 1, 2 })
      return x * 2 + 5 - x
    end))
    assert.are.same({ 1.5, 3 }, eval(function(g)
      local x = g:const({ 1, 2 }, { dtype = "float32" })
      return x * 3 / 2
    end))
    h.raises("INVALID_ARGUMENT", "T=int32 is not allowed (allowed: float32, float64, complex64)", eval, function(g)
      return g:const({ 1, 2 }) / 2
    end)
    assert.are.same({ -1, -2 }, eval(function(g) return -g:const({ 1, 2 }) end))
  end)

  it("large elementwise ops (split over threads, streamed past the caches) keep every value", function()
    local n = 4 * 1024 * 1024 + 3 -- odd length: shard edges fall between vector lanes
    local g = tfdev.graph()
    local r = g:random_uniform({ n }, { seed = 3, seed2 = 4, name = "r" })
    local f = g:fill({ n }, g:const(1.5, { dtype = "float32" }), { name = "f" })
    local sum, prod = g:op("AddV2", { r, f }, { name = "sum" }), g:op("Mul", { r, f }, { name = "prod" })
    local s <close> = tfdev.session { intra_op_threads = 2, use_global_threadpool = false }
    s:create(g)
    local out = s:run({}, { "r", "sum", "prod" })
    local rv, sv, pv = out[1], out[2], out[3]
    local function f32(v) return (string.unpack("f", string.pack("f", v))) end -- round as float32 does
    for _, i in ipairs { 1, 2, 3, 4, 5, 1000, n // 2, n // 2 + 1, n - 4, n - 1, n } do
      assert.are.equal(f32(rv[i] + 1.5), sv[i])
      assert.are.equal(f32(rv[i] * 1.5), pv[i])
    end
  end)

  it("unary math", function()
    local x = { -2, -0.5, 0, 1.5 }
    local f = function(op) return eval(function(g) return g:op(op, { g:const(x, { dtype = "float32" }) }) end) end
    approx({ 2, 0.5, 0, -1.5 }, f("Neg"))
    approx({ 2, 0.5, 0, 1.5 }, f("Abs"))
    approx({ 4, 0.25, 0, 2.25 }, f("Square"))
    approx({ 0, 0, 0, 1.5 }, f("Relu"))
    approx({ math.exp(-2), math.exp(-0.5), 1, math.exp(1.5) }, f("Exp"))
    approx({ 1 / (1 + math.exp(2)), 1 / (1 + math.exp(0.5)), 0.5, 1 / (1 + math.exp(-1.5)) }, f("Sigmoid"))
    local tanh = function(v) return (math.exp(v) - math.exp(-v)) / (math.exp(v) + math.exp(-v)) end
    approx({ tanh(-2), tanh(-0.5), 0, tanh(1.5) }, f("Tanh"))
    local pos = function(op) return eval(function(g) return g:op(op, { g:const({ 1, 4, 9 }, { dtype = "float64" }) }) end) end
    approx({ 1, 2, 3 }, pos("Sqrt"))
    approx({ 0, math.log(4), math.log(9) }, pos("Log"))
    assert.are.same({ 3, 0, 2 }, eval(function(g) return g:op("Abs", { g:const({ -3, 0, 2 }) }) end))
  end)

  it("Softmax over the last dimension", function()
    local r = eval(function(g) return g:softmax(g:const({ { 1, 2, 3 }, { 0, 0, 0 } }, { dtype = "float32" })) end)
    local e1, e2, e3 = math.exp(1), math.exp(2), math.exp(3)
    local s = e1 + e2 + e3
    approx({ { e1 / s, e2 / s, e3 / s }, { 1 / 3, 1 / 3, 1 / 3 } }, r)
  end)

  it("MatMul with transposes, and one-row products", function()
    local a, b = { { 1, 2 }, { 3, 4 } }, { { 5, 6 }, { 7, 8 } }
    local mm = function(ta, tb, av, bv)
      return eval(function(g)
        return g:matmul(g:const(av or a, { dtype = "float32" }), g:const(bv or b, { dtype = "float32" }),
          { transpose_a = ta, transpose_b = tb })
      end)
    end
    assert.are.same({ { 19, 22 }, { 43, 50 } }, mm(false, false))
    assert.are.same({ { 26, 30 }, { 38, 44 } }, mm(true, false))
    assert.are.same({ { 17, 23 }, { 39, 53 } }, mm(false, true))
    assert.are.same({ { 23, 31 }, { 34, 46 } }, mm(true, true))
    -- one row on the left: the sgemv path, in every transpose combination
    assert.are.same({ { 19, 22 } }, mm(false, false, { { 1, 2 } }))
    assert.are.same({ { 17, 23 } }, mm(false, true, { { 1, 2 } }))
    assert.are.same({ { 19, 22 } }, mm(true, false, { { 1 }, { 2 } }))
    assert.are.same({ { 17, 23 } }, mm(true, true, { { 1 }, { 2 } }))
    assert.are.same({ { 44 } }, eval(function(g)
      return g:matmul(g:const({ { 1, 2, 3 } }, { dtype = "float64" }), g:const({ { 3 }, { 4 }, { 11 } }, { dtype = "float64" }))
    end))
  end)

  it("BiasAdd", function()
    assert.are.same({ { 11, 22 }, { 13, 24 } }, eval(function(g)
      return g:bias_add(g:const({ { 1, 2 }, { 3, 4 } }, { dtype = "float32" }), g:const({ 10, 20 }, { dtype = "float32" }))
    end))
  end)

  it("Sum, Mean and Max over axes, with keep_dims", function()
    local x = { { 1, 2, 3 }, { 4, 5, 6 } }
    assert.are.same({ 5, 7, 9 }, eval(function(g) return g:sum(g:const(x), { 0 }) end))
    assert.are.same({ { 6 }, { 15 } }, eval(function(g) return g:sum(g:const(x), { 1 }, { keep_dims = true }) end))
    assert.are.same(21, eval(function(g) return g:sum(g:const(x), { 0, 1 }) end))
    assert.are.same({ 2, 5 }, eval(function(g) return g:mean(g:const(x, { dtype = "float32" }), { -1 }) end))
    assert.are.same({ 3, 6 }, eval(function(g) return g:max(g:const(x), { 1 }) end))
    assert.are.same({ { 6 } }, eval(function(g) return g:max(g:const(x), { 0, 1 }, { keep_dims = true }) end))
  end)

  it("large reductions (sharded over the pool) agree with sums done in Lua", function()
    local rows, cols = 96, 4096
    local g = tfdev.graph()
    local x = g:random_uniform({ rows, cols }, { seed = 9, seed2 = 1, dtype = "float64", name = "x" })
    g:sum(x, { 1 }, { name = "by_row" })
    g:sum(x, { 0 }, { name = "by_col" })
    g:mean(x, { 0, 1 }, { name = "mean_all" })
    g:max(x, { 1 }, { name = "max_row" })
    g:max(x, { 0 }, { name = "max_col" })
    local s <close> = tfdev.session { intra_op_threads = 2, use_global_threadpool = false }
    s:create(g)
    local o = s:run({}, { "x", "by_row", "by_col", "mean_all", "max_row", "max_col" })
    local xv = o[1]:totable()
    local total = 0
    for r = 1, rows do
      local sum, mx = 0, -math.huge
      for c = 1, cols do sum, mx = sum + xv[r][c], math.max(mx, xv[r][c]) end
      total = total + sum
      approx(sum, o[2][r], 1e-9)
      assert.are.equal(mx, o[5][r])
    end
    for _, c in ipairs { 1, 2, cols // 2, cols } do
      local sum, mx = 0, -math.huge
      for r = 1, rows do sum, mx = sum + xv[r][c], math.max(mx, xv[r][c]) end
      approx(sum, o[3][c], 1e-9)
      assert.are.equal(mx, o[6][c])
    end
    approx(total / (rows * cols), o[4]:item(), 1e-9)
    -- int64 and float32 full reductions, large enough to be split
    local n = 200000
    local data = {}
    for i = 1, n do data[i] = i end
    assert.are.equal(n * (n + 1) // 2, eval(function(g2)
      return g2:sum(g2:const(tfdev.tensor { dtype = "int64", shape = { n }, data = data }), { 0 })
    end))
    assert.are.equal(0.5, eval(function(g2)
      return g2:mean(g2:fill({ 1024, 1024 }, g2:const(0.5, { dtype = "float32" })), { 0, 1 })
    end))
  end)

  it("Reshape, Transpose, Shape", function()
    local x = { { 1, 2, 3 }, { 4, 5, 6 } }
    assert.are.same({ { 1, 2 }, { 3, 4 }, { 5, 6 } }, eval(function(g) return g:reshape(g:const(x), { 3, -1 }) end))
    assert.are.same({ { 1, 4 }, { 2, 5 }, { 3, 6 } }, eval(function(g) return g:transpose(g:const(x), { 1, 0 }) end))
    assert.are.same({ 2, 3 }, eval(function(g) return g:shape(g:const(x)) end))
    local t3 = eval(function(g) return g:transpose(g:reshape(g:const({ 1, 2, 3, 4, 5, 6, 7, 8 }), { 2, 2, 2 }), { 2, 0, 1 }) end)
    assert.are.same({ { { 1, 3 }, { 5, 7 } }, { { 2, 4 }, { 6, 8 } } }, t3)
  end)

  it("Cast, Fill, ZerosLike, OnesLike", function()
    assert.are.same({ 1, -2, 3 }, eval(function(g) return g:cast(g:const({ 1.7, -2.9, 3.2 }, { dtype = "float32" }), "int32") end))
    assert.are.same({ true, false }, eval(function(g) return g:cast(g:const({ 2, 0 }), "bool") end))
    assert.are.same({ 1, 0 }, eval(function(g) return g:cast(g:const({ true, false }), "float64") end))
    assert.are.same({ { 7, 7, 7 }, { 7, 7, 7 } }, eval(function(g) return g:fill({ 2, 3 }, g:const(7)) end))
    assert.are.same({ 0, 0 }, eval(function(g) return g:zeros_like(g:const({ 5, 6 })) end))
    assert.are.same({ 1, 1 }, eval(function(g) return g:ones_like(g:const({ 5.5, 6 }, { dtype = "float32" })) end))
    assert.are.same({ true }, eval(function(g) return g:ones_like(g:const({ false })) end))
  end)

  it("ConcatV2", function()
    assert.are.same({ { 1, 2, 5 }, { 3, 4, 6 } }, eval(function(g)
      return g:concat({ g:const({ { 1, 2 }, { 3, 4 } }), g:const({ { 5 }, { 6 } }) }, 1)
    end))
    assert.are.same({ { 1, 2 }, { 3, 4 }, { 5, 6 } }, eval(function(g)
      return g:concat({ g:const({ { 1, 2 } }), g:const({ { 3, 4 }, { 5, 6 } }) }, 0)
    end))
  end)

  it("random ops: seeded, reproducible, in range", function()
    local draw = function(seed)
      return eval(function(g)
        return g:random_uniform({ 1000 }, { seed = seed, seed2 = 7 }), g:random_normal({ 2000 }, { seed = seed, seed2 = 7 })
      end)
    end
    local u1, n1 = draw(42)
    local u2, n2 = draw(42)
    local u3 = draw(43)
    assert.are.same(u1, u2)
    assert.are.same(n1, n2)
    assert.are_not.same(u1, u3)
    local sum, sq = 0, 0
    for _, v in ipairs(u1) do assert(v >= 0 and v < 1) end
    for _, v in ipairs(n1) do sum, sq = sum + v, sq + v * v end
    local mean, var = sum / #n1, sq / #n1 - (sum / #n1) ^ 2
    assert(math.abs(mean) < 0.1, "mean " .. mean)
    assert(math.abs(var - 1) < 0.15, "variance " .. var)
  end)

  it("random ops advance between runs of one session", function()
    local g = tfdev.graph()
    local r = g:random_uniform({ 4 }, { seed = 1, seed2 = 2, name = "r" })
    local s <close> = tfdev.session()
    s:create(g)
    local a, b = s:run({}, "r"):totable(), s:run({}, "r"):totable()
    assert.are_not.same(a, b)
  end)

  it("resource variables: assign, read, assign_add", function()
    local g = tfdev.graph()
    local v = g:variable({ 1, 2 }, { name = "v", dtype = "float32" })
    local inc = g:assign_add(v, g:const({ 10, 10 }, { dtype = "float32" }), { name = "inc" })
    local s <close> = tfdev.session()
    s:create(g)
    h.raises("FAILED_PRECONDITION", "Error while reading resource variable v", s.run, s, {}, "v/Read")
    s:run({}, nil, { v.initializer })
    assert.are.same({ 1, 2 }, s:run({}, "v/Read"):totable())
    s:run({}, nil, { inc })
    s:run({}, nil, { inc })
    assert.are.same({ 21, 22 }, s:run({}, "v/Read"):totable())
    local rm = s:devices()[1]:resource_manager()
    assert.are.same({ "localhost" }, rm:containers())
  end)
end)

describe("device:compute (eager)", function()
  local d = tfdev.factory.add_devices()[1]

  it("runs one op on the device with inferred T and typed attrs", function()
    assert.are.same({ { 11 } }, d:compute("MatMul", { tfdev.tensor({ { 1, 2 } }, "float32"), tfdev.tensor({ { 3 }, { 4 } }, "float32") }):totable())
    assert.are.same({ { 3 }, { 7 } }, d:compute("Sum", { { { 1, 2 }, { 3, 4 } }, { 1 } }, { keep_dims = true }):totable())
    assert.are.same({ 2, 3 }, d:compute("Cast", { tfdev.tensor({ 2.9, 3.1 }, "float32") }, { DstT = "int64" }):totable())
    assert.are.same({ 6, 6, 6 }, d:compute("Fill", { { 3 }, 6 }):totable())
  end)

  it("multiplies int32 and int64 matrices, transposed or not, wrapping on overflow as TensorFlow does", function()
    local a, b = { { 1, -2, 3 }, { 4, 5, -6 } }, { { 7, 8 }, { 9, -10 }, { 11, 12 } }
    local want = { { 22, 64 }, { 7, -90 } }
    for _, dt in ipairs { "int32", "int64" } do
      local A, B = tfdev.tensor(a, dt), tfdev.tensor(b, dt)
      local y = d:compute("MatMul", { A, B })
      assert.are.equal(dt, y.dtype)
      assert.are.same(want, y:totable())
      local At = d:compute("Transpose", { A, { 1, 0 } })
      local Bt = d:compute("Transpose", { B, { 1, 0 } })
      assert.are.same(want, d:compute("MatMul", { At, Bt }, { transpose_a = true, transpose_b = true }):totable())
      assert.are.same({ 0, 2 }, d:compute("MatMul", { tfdev.tensor { dtype = dt, shape = { 0, 3 } }, B }).shape)
    end
    local big = tfdev.tensor({ { 2147483647 } }, "int32")
    assert.are.same({ { 1 } }, d:compute("MatMul", { big, big }):totable()) -- (2^31-1)^2 mod 2^32
    assert.are.same({ { 0, 0 }, { 0, 0 } },
      d:compute("MatMul", { tfdev.tensor { dtype = "int32", shape = { 2, 0 } }, tfdev.tensor { dtype = "int32", shape = { 0, 2 } } })
        :totable())
    h.raises("INVALID_ARGUMENT", "T=uint8 is not allowed", d.compute, d, "MatMul",
      { tfdev.tensor({ { 1 } }, "uint8"), tfdev.tensor({ { 1 } }, "uint8") })
  end)

  it("allocates outputs from the device's allocator", function()
    local small = tfdev.device.cpu { name = "/job:localhost/replica:0/task:0/device:CPU:5", memory_limit = 64 }
    h.raises("RESOURCE_EXHAUSTED", "node 'Fill' (Fill): OOM when allocating 400 bytes", small.compute, small, "Fill",
      { { 100 }, 1 })
  end)

  it("reports bad ops, attrs and inputs", function()
    h.raises("NOT_FOUND", "op type not registered 'Frobnicate'", d.compute, d, "Frobnicate", {})
    h.raises("INVALID_ARGUMENT", "op type not registered '_Send'", d.compute, d, "_Send", {})
    h.raises("INVALID_ARGUMENT", "node 'AddV2' (AddV2): input 0 is int32 but input 1 is float32", d.compute, d, "AddV2",
      { { 1 }, tfdev.tensor({ 1.5 }) })
    h.raises("INVALID_ARGUMENT", "Incompatible shapes: [2] vs. [3]", d.compute, d, "Add", { { 1, 2 }, { 1, 2, 3 } })
    h.raises("INVALID_ARGUMENT", "attr 'transpose_a' must be a boolean", d.compute, d, "MatMul",
      { { { 1.5 } }, { { 1.5 } } }, { transpose_a = "yes" })
    h.raises("INVALID_ARGUMENT", "inputs must be a list", d.compute, d, "Neg", 5)
    local sim = tfdev.device.cpu { name = "/job:localhost/replica:0/task:0/device:SIM:0", device_type = "SIM" }
    h.raises("NOT_FOUND", "no SIM kernel for op Neg", sim.compute, sim, "Neg", { { 1 } })
  end)

  it("counts outputs as a graph does: ShapeN's N defaults to its inputs, a missing num is refused", function()
    local a, b = d:compute("ShapeN", { tfdev.tensor({ { 1, 2, 3 } }), tfdev.tensor { 1, 2 } })
    assert.are.same({ 1, 3 }, a:totable())
    assert.are.same({ 2 }, b:totable())
    local x, y = d:compute("Unpack", { tfdev.tensor { { 1, 2 }, { 3, 4 } } }, { num = 2 })
    assert.are.same({ 1, 2 }, x:totable())
    assert.are.same({ 3, 4 }, y:totable())
    h.raises("INVALID_ARGUMENT", "node 'Unpack' (Unpack): attr 'num' must be an int from 1 to 32", d.compute, d, "Unpack",
      { tfdev.tensor { { 1, 2 }, { 3, 4 } } })
  end)
end)
