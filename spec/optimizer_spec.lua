-- The graph optimisation pass: MatMul + BiasAdd [+ activation] fused into _FusedMatMul (and convolutions
-- into _FusedConv2D / _FusedDepthwiseConv2dNative), constant
-- folding, packed constant weights, the optimize_graph off switch, and hand-written _FusedMatMul.
local tfdev = require "tfdev"
local h = require "spec.support.helpers"

-- Deterministic values in [-1, 1).
local function values(rows, cols, seed)
  local t = {}
  for r = 1, rows do
    t[r] = {}
    for c = 1, cols do
      seed = (seed * 1103515245 + 12345) % 2147483648
      t[r][c] = (seed % 2000) / 1000 - 1
    end
  end
  return t
end

local function vector(n, seed) return values(1, n, seed)[1] end

local function assert_close(expected, got, tol)
  assert.are.equal(#expected, #got)
  for r = 1, #expected do
    for c = 1, #expected[r] do
      local e, g = expected[r][c], got[r][c]
      assert(math.abs(e - g) <= tol * (1 + math.abs(e)),
        string.format("[%d][%d]: expected %.9g, got %.9g", r, c, e, g))
    end
  end
end

-- x[?, k] @ w[k, n] + b, then `act` (nil: none). opts: transpose_b, dtype, alpha, weights
-- ("const" or "placeholder").
local function dense(k, n, act, opts)
  opts = opts or {}
  local dtype = opts.dtype or "float32"
  local g = tfdev.graph()
  local x = g:placeholder(dtype, { -1, k }, { name = "x" })
  local wv = values(k, n, 7)
  if opts.transpose_b then
    local t = {}
    for j = 1, n do
      t[j] = {}
      for i = 1, k do t[j][i] = wv[i][j] end
    end
    wv = t
  end
  local w = opts.weights == "placeholder" and g:placeholder(dtype, { -1, -1 }, { name = "w" })
    or g:const(tfdev.tensor(wv, dtype), { name = "w" })
  local b = g:const(tfdev.tensor(vector(n, 11), dtype), { name = "b" })
  local mm = g:op("MatMul", { x, w }, { name = "mm", transpose_b = opts.transpose_b or false })
  local y = g:op("BiasAdd", { mm, b }, { name = "ba" })
  if act then y = g:op(act, { y }, { name = "act", alpha = act == "LeakyRelu" and (opts.alpha or 0.3) or nil }) end
  return g, y.node, wv
end

local function partition_ops(meta)
  local ops = {}
  for _, n in ipairs(meta.partition_graphs[1].node) do ops[n.name] = n end
  return ops
end

local function run(g, feeds, fetches, options)
  local s <close> = tfdev.session(options)
  s:create(g)
  local outs, meta = s:run(feeds, fetches, nil, { output_partition_graphs = true })
  local t = {}
  for i, o in ipairs(outs) do t[i] = o:totable() end
  return t, partition_ops(meta)
end

describe("graph optimiser", function()
  after_each(function() tfdev.factory.reset() end)

  for _, act in ipairs { false, "Relu", "Relu6", "Elu", "LeakyRelu", "Tanh", "Sigmoid" } do
    local name = act or "no activation"
    it("fuses MatMul + BiasAdd + " .. name .. " and matches the unfused graph", function()
      local g, last = dense(24, 40, act or nil)
      for _, rows in ipairs { 1, 2, 7 } do -- one row takes sgemv; more take the packed path
        local x = values(rows, 24, rows)
        local fused, ops = run(g, { x = x }, { last })
        local plain, plain_ops = run(g, { x = x }, { last }, { optimize_graph = false })
        assert_close(plain[1], fused[1], 1e-5)
        local node = ops[last]
        assert.are.equal("_FusedMatMul", node.op)
        assert.are.same(act and { "BiasAdd", act } or { "BiasAdd" }, node.attr.fused_ops)
        assert.are.equal(1, node.attr.num_args)
        assert.are.equal(0, node.attr.epsilon)
        assert.are.same({ "_feed_0:0", "w:0", "b:0" }, node.input) -- x is a feed in the partition
        assert.is_true(node.attr._tfd_weights_constant)
        if act == "LeakyRelu" then assert.is_true(math.abs(node.attr.leakyrelu_alpha - 0.3) < 1e-6) end
        assert.is_nil(ops.mm)
        assert.are.equal("MatMul", plain_ops.mm.op)
        assert.are.equal("BiasAdd", plain_ops.ba.op)
      end
    end)
  end

  -- One intra-op thread, constant weights larger than half a core's L2 (1.25 MB here) and 8 rows or
  -- more: the product runs on tfdev's AVX-512 GEMM where the CPU has AVX-512 (k_matmul.c's
  -- use_own_gemm); the unfused graph runs OpenBLAS. k = 600 takes two k blocks, n = 523 ends in a
  -- column tail, 13 rows make uneven row panels.
  for _, act in ipairs { false, "Relu", "Relu6", "Elu", "LeakyRelu", "Tanh", "Sigmoid" } do
    local name = act or "no activation"
    it("on one intra-op thread fuses MatMul + BiasAdd + " .. name .. " and matches the unfused graph", function()
      for _, tb in ipairs { false, true } do
        local g, last = dense(600, 523, act or nil, { transpose_b = tb })
        for _, rows in ipairs { 8, 13, 64 } do
          local x = values(rows, 600, rows + 3)
          local fused, ops = run(g, { x = x }, { last }, { intra_op_threads = 1, inter_op_threads = 1 })
          local plain = run(g, { x = x }, { last }, { optimize_graph = false, intra_op_threads = 1 })
          assert.are.equal("_FusedMatMul", ops[last].op)
          assert.is_true(ops[last].attr._tfd_weights_constant)
          assert_close(plain[1], fused[1], 1e-4)
        end
      end
    end)
  end

  it("fuses float64, transposed weights, and weights fed at run time", function()
    local g, last = dense(9, 5, "Relu", { dtype = "float64" })
    local x = values(3, 9, 3)
    local fused, ops = run(g, { x = x }, { last })
    local plain = run(g, { x = x }, { last }, { optimize_graph = false })
    assert_close(plain[1], fused[1], 1e-12)
    assert.are.equal("_FusedMatMul", ops[last].op)

    g, last = dense(9, 5, "Relu6", { transpose_b = true })
    fused, ops = run(g, { x = x }, { last })
    plain = run(g, { x = x }, { last }, { optimize_graph = false })
    assert_close(plain[1], fused[1], 1e-5)
    assert.is_true(ops[last].attr.transpose_b)

    -- transpose_a: x arrives as [k, rows]; the packed path reads it through strides.
    local ga = tfdev.graph()
    local xt = ga:placeholder("float32", { 9, -1 }, { name = "xt" })
    local wc = ga:const(tfdev.tensor(values(9, 6, 4), "float32"), { name = "w" })
    ga:op("MatMul", { xt, wc }, { name = "mm", transpose_a = true })
    local xtv = values(9, 5, 8)
    local packed, pops = run(ga, { xt = xtv }, { "mm" })
    local blas = run(ga, { xt = xtv }, { "mm" }, { optimize_graph = false })
    assert.is_true(pops.mm.attr._tfd_weights_constant)
    assert.are.equal(5, #packed[1])
    assert_close(blas[1], packed[1], 1e-5)

    -- Weights from a placeholder are not constant: fused, but never packed; each run reads them.
    g, last = dense(3, 2, nil, { weights = "placeholder" })
    local s <close> = tfdev.session()
    s:create(g)
    local x1 = { { 1, 2, 3 }, { 0, 1, 0 } }
    local w1 = { { 1, 0 }, { 0, 1 }, { 1, 1 } }
    local w2 = { { 2, 0 }, { 0, 2 }, { 2, 2 } }
    local b = vector(2, 11)
    local y1, meta = s:run({ x = x1, w = w1 }, { last }, nil, { output_partition_graphs = true })
    local y2 = s:run({ x = x1, w = w2 }, { last })[1]
    assert_close({ { 4 + b[1], 5 + b[2] }, { b[1], 1 + b[2] } }, y1[1]:totable(), 1e-6)
    assert_close({ { 8 + b[1], 10 + b[2] }, { b[1], 2 + b[2] } }, y2:totable(), 1e-6)
    local node = partition_ops(meta)[last]
    assert.are.equal("_FusedMatMul", node.op)
    assert.is_nil(node.attr._tfd_weights_constant)
  end)

  it("keeps packed weights right across batch sizes and when the Const is fed", function()
    local g, last, wv = dense(16, 8, "Relu")
    local s <close> = tfdev.session()
    s:create(g)
    local plain <close> = tfdev.session { optimize_graph = false }
    plain:create(g)
    for _, rows in ipairs { 3, 1, 9, 3, 5, 2, 11, 9 } do -- more shapes than the kernel caches
      local x = values(rows, 16, rows * 5)
      assert_close(plain:run({ x = x }, { last })[1]:totable(), s:run({ x = x }, { last })[1]:totable(), 1e-5)
    end
    -- Feeding the Const replaces it: the product must use the fed weights, not the packed ones.
    local zero = values(16, 8, 1)
    for i = 1, 16 do for j = 1, 8 do zero[i][j] = 0 end end
    local x = values(4, 16, 2)
    local y = s:run({ x = x, w = zero }, { last })[1]:totable()
    local b = vector(8, 11)
    for r = 1, 4 do for c = 1, 8 do assert.is_true(math.abs(math.max(0, b[c]) - y[r][c]) < 1e-6) end end
    assert.are.equal(16, #wv)
  end)

  it("leaves the MatMul alone when its output is fetched, fed or shared", function()
    local g, last = dense(4, 3, "Relu")
    local x = values(2, 4, 9)
    -- fetched intermediate: both outputs are right and nothing is fused
    local outs, ops = run(g, { x = x }, { last, "mm" })
    local plain = run(g, { x = x }, { last, "mm" }, { optimize_graph = false })
    assert_close(plain[1], outs[1], 1e-6)
    assert_close(plain[2], outs[2], 1e-6)
    assert.are.equal("MatMul", ops.mm.op)
    assert.are.equal("BiasAdd", ops.ba.op)
    -- fetched BiasAdd: MatMul + BiasAdd still fuse (named ba); the activation stays
    outs, ops = run(g, { x = x }, { last, "ba" })
    assert.are.equal("_FusedMatMul", ops.ba.op)
    assert.are.same({ "BiasAdd" }, ops.ba.attr.fused_ops)
    assert.are.equal("Relu", ops[last].op)
    plain = run(g, { x = x }, { last, "ba" }, { optimize_graph = false })
    assert_close(plain[2], outs[2], 1e-6)
    -- fed intermediate: the MatMul is not even in the partition
    outs, ops = run(g, { x = x, mm = { { 1, -1, 0 }, { -5, 2, 3 } } }, { last })
    assert.is_nil(ops.mm)
    assert.are.equal("BiasAdd", ops.ba.op)
    local b = vector(3, 11)
    assert_close({ { math.max(0, 1 + b[1]), math.max(0, -1 + b[2]), math.max(0, b[3]) },
      { math.max(0, -5 + b[1]), math.max(0, 2 + b[2]), math.max(0, 3 + b[3]) } }, outs[1], 1e-6)
    -- shared: another node reads the MatMul
    local g2 = tfdev.graph()
    local x2 = g2:placeholder("float32", { -1, 2 }, { name = "x" })
    local w = g2:const(tfdev.tensor({ { 1, 2 }, { 3, 4 } }, "float32"), { name = "w" })
    local mm = g2:op("MatMul", { x2, w }, { name = "mm" })
    local ba = g2:op("BiasAdd", { mm, g2:const(tfdev.tensor({ 1, 1 }, "float32")) }, { name = "ba" })
    g2:op("Neg", { mm }, { name = "neg" })
    local s2 <close> = tfdev.session()
    s2:create(g2)
    local o, meta = s2:run({ x = { { 1, 1 } } }, { ba.node, "neg" }, nil, { output_partition_graphs = true })
    ops = partition_ops(meta)
    assert.are.equal("MatMul", ops.mm.op)
    assert.are.equal("BiasAdd", ops.ba.op)
    assert.are.same({ { 5, 7 } }, o[1]:totable())
    assert.are.same({ { -4, -6 } }, o[2]:totable())
  end)

  it("folds constant subgraphs and leaves stateful and random ops alone", function()
    local g = tfdev.graph()
    local a = g:const(tfdev.tensor({ { 1, 2 }, { 3, 4 } }, "float32"), { name = "a" })
    local wt = g:op("Transpose", { a, g:const(tfdev.tensor({ 1, 0 }, "int32"), { name = "perm" }) }, { name = "wt" })
    local w = g:op("Mul", { wt, g:const(tfdev.tensor(2, "float32"), { name = "two" }) }, { name = "w2" })
    local x = g:placeholder("float32", { -1, 2 }, { name = "x" })
    local y = g:op("MatMul", { x, w }, { name = "y" })
    local shape = g:const(tfdev.tensor({ 2 }, "int32"), { name = "shape" })
    g:op("RandomUniform", { shape }, { name = "r", dtype = "float32" })
    local v = g:variable({ 5, 6 }, { name = "v" })
    g:op("Neg", { v }, { name = "neg_v" })
    local s <close> = tfdev.session()
    s:create(g)
    s:run({}, {}, { v.initializer })
    local outs, meta = s:run({ x = { { 1, 1 } } }, { y.node, "r", "neg_v" }, nil, { output_partition_graphs = true })
    local ops = partition_ops(meta)
    assert.are.same({ { 6, 14 } }, outs[1]:totable())
    assert.are.equal("Const", ops.w2.op) -- Transpose then Mul, folded into one constant
    assert.are.same({ { 2, 6 }, { 4, 8 } }, ops.w2.attr.value:totable())
    assert.is_nil(ops.wt)   -- read only by the folded node: gone
    assert.is_nil(ops.a)
    assert.is_true(ops.y.attr._tfd_weights_constant) -- the folded weights are packed
    assert.are.equal("RandomUniform", ops.r.op)     -- random: never folded
    assert.are.equal("Neg", ops.neg_v.op)           -- reads a variable: not constant
    assert.are.equal("ReadVariableOp", ops["v/Read"].op)
    local r1 = s:run({}, { "r" })[1]:totable()
    local r2 = s:run({}, { "r" })[1]:totable()
    assert.are_not.same(r1, r2)
    -- off switch: nothing folded, nothing fused
    local plain <close> = tfdev.session { optimize_graph = false }
    plain:create(g)
    plain:run({}, {}, { v.initializer })
    local _, pmeta = plain:run({ x = { { 1, 1 } } }, { y.node }, nil, { output_partition_graphs = true })
    local pops = partition_ops(pmeta)
    assert.are.equal("Transpose", pops.wt.op)
    assert.are.equal("Mul", pops.w2.op)
    assert.is_nil(pops.y.attr._tfd_weights_constant)
  end)

  it("does not fold results above 10 MiB", function()
    local g = tfdev.graph()
    local big = g:op("Fill", { g:const(tfdev.tensor({ 3, 1024, 1024 }, "int32")), g:const(tfdev.tensor(1, "float32")) },
      { name = "big" })
    local small = g:op("Fill", { g:const(tfdev.tensor({ 2, 2 }, "int32")), g:const(tfdev.tensor(1, "float32")) },
      { name = "small" })
    g:op("Sum", { big, g:const(tfdev.tensor({ 0, 1, 2 }, "int32")) }, { name = "total" })
    local s <close> = tfdev.session()
    s:create(g)
    local outs, meta = s:run({}, { "total", small.node }, nil, { output_partition_graphs = true })
    local ops = partition_ops(meta)
    assert.are.equal(3 * 1024 * 1024, outs[1]:item())
    assert.are.equal("Fill", ops.big.op)    -- 12 MiB: computed at run time
    assert.are.equal("Sum", ops.total.op)
    assert.are.equal("Const", ops.small.op) -- 16 bytes: folded
  end)

  it("runs a graph that already contains _FusedMatMul, as TensorFlow's converters write it", function()
    local W = tfdev.tensor({ { 1, -2 }, { 3, 4 }, { -5, 6 } }, "float32")
    local B = tfdev.tensor({ 0.5, -20 }, "float32")
    local function graph(fused_ops, extra)
      local node = { name = "y", op = "_FusedMatMul", input = { "x", "w", "b" },
        attr = { T = "float32", fused_ops = fused_ops, num_args = 1, transpose_a = false, transpose_b = false } }
      for k, v in pairs(extra or {}) do node.attr[k] = v end
      return { node = {
        { name = "x", op = "Placeholder", attr = { dtype = "float32", shape = { -1, 3 } } },
        { name = "w", op = "Const", attr = { value = W } },
        { name = "b", op = "Const", attr = { value = B } },
        node,
      } }
    end
    local X = { { 1, 1, 1 }, { 2, 0, -1 } }
    -- x @ w = {{-1, 8}, {7, -10}}; + b = {{-0.5, -12}, {7.5, -30}}
    for _, optimize in ipairs { true, false } do
      local s <close> = tfdev.session { optimize_graph = optimize }
      s:create(graph({ "BiasAdd", "Relu" }))
      assert.are.same({ { 0, 0 }, { 7.5, 0 } }, s:run({ x = X }, { "y" })[1]:totable())
      local s2 <close> = tfdev.session { optimize_graph = optimize }
      s2:create(graph({ "BiasAdd" }))
      assert.are.same({ { -0.5, -12 }, { 7.5, -30 } }, s2:run({ x = X }, { "y" })[1]:totable())
    end
    local s <close> = tfdev.session()
    s:create(graph({ "BiasAdd", "Softplus" }))
    h.raises("UNIMPLEMENTED", "Fusion is not implemented: [BiasAdd,Softplus]", s.run, s, { x = X }, { "y" })
    local s2 <close> = tfdev.session()
    h.raises("INVALID_ARGUMENT", "num_args is 2 but the node has 1 extra inputs", s2.create, s2,
      graph({ "BiasAdd" }, { num_args = 2 }))
    local bad = graph({ "BiasAdd" })
    bad.node[3].attr.value = tfdev.tensor({ 1, 2, 3 }, "float32")
    local s3 <close> = tfdev.session()
    h.raises("INVALID_ARGUMENT", "bias has 3 elements but the product has 2 columns", s3.create, s3, bad)
    -- Eager, too: the op runs on a device outside any session.
    local d = tfdev.device.cpu { name = "/job:localhost/replica:0/task:0/device:CPU:0" }
    local y = d:compute("_FusedMatMul", { tfdev.tensor(X, "float32"), W, B },
      { fused_ops = { "BiasAdd", "LeakyRelu" }, num_args = 1, leakyrelu_alpha = 0.5 })
    assert.are.same({ { -0.25, -6 }, { 7.5, -15 } }, y:totable())
  end)

  it("fuses Conv2D and DepthwiseConv2dNative + BiasAdd [+ activation] into their fused forms, as Grappler does", function()
    local x = tfdev.tensor(h.random_values({ 2, 6, 5, 3 }, 3), "float32")
    local cases = {
      { "Conv2D", "_FusedConv2D", { 3, 3, 3, 4 }, 4, "Relu", { strides = { 1, 2, 1, 1 }, padding = "SAME", dilations = { 1, 1, 1, 1 } } },
      { "Conv2D", "_FusedConv2D", { 2, 2, 3, 2 }, 2, false, { strides = { 1, 1, 1, 1 }, padding = "VALID", dilations = { 1, 2, 1, 1 } } },
      { "Conv2D", "_FusedConv2D", { 1, 1, 3, 2 }, 2, "LeakyRelu", { strides = { 1, 1, 1, 1 }, padding = "VALID" } },
      { "DepthwiseConv2dNative", "_FusedDepthwiseConv2dNative", { 3, 3, 3, 2 }, 6, "Relu6", { strides = { 1, 1, 1, 1 }, padding = "SAME" } },
    }
    for _, c in ipairs(cases) do
      local op, fused_op, fshape, out, act, attrs = table.unpack(c)
      local bias = {}
      for i = 1, out do bias[i] = 0.1 * i - 0.25 end
      local nodes = {
        { name = "x", op = "Placeholder", attr = { dtype = "float32" } },
        { name = "f", op = "Const", attr = { value = tfdev.tensor(h.random_values(fshape, 5), "float32") } },
        { name = "b", op = "Const", attr = { value = tfdev.tensor(bias, "float32") } },
        { name = "conv", op = op, input = { "x", "f" }, attr = attrs },
        { name = "ba", op = "BiasAdd", input = { "conv", "b" } },
      }
      if act then nodes[#nodes + 1] = { name = "y", op = act, input = { "ba" }, attr = act == "LeakyRelu" and { alpha = 0.1 } or nil } end
      local last = act and "y" or "ba"
      local fused, ops = run({ node = nodes }, { x = x }, { last })
      local plain = run({ node = nodes }, { x = x }, { last }, { optimize_graph = false })
      h.assert_close(plain[1], fused[1], 1e-5)
      assert.are.equal(fused_op, ops[last].op, op)
      assert.are.same(act and { "BiasAdd", act } or { "BiasAdd" }, ops[last].attr.fused_ops)
      assert.are.equal(attrs.padding, ops[last].attr.padding)
      assert.are.same(attrs.strides, ops[last].attr.strides)
      if act == "LeakyRelu" then assert.near(0.1, ops[last].attr.leakyrelu_alpha, 1e-7) end
      assert.is_nil(ops.conv)
    end
    -- A convolution whose output is also fetched stays unfused.
    local nodes = {
      { name = "x", op = "Placeholder", attr = { dtype = "float32" } },
      { name = "f", op = "Const", attr = { value = tfdev.tensor(h.random_values({ 1, 1, 3, 2 }, 5), "float32") } },
      { name = "b", op = "Const", attr = { value = tfdev.tensor({ 1, 2 }, "float32") } },
      { name = "conv", op = "Conv2D", input = { "x", "f" }, attr = { strides = { 1, 1, 1, 1 }, padding = "VALID" } },
      { name = "ba", op = "BiasAdd", input = { "conv", "b" } },
    }
    local _, ops = run({ node = nodes }, { x = x }, { "ba", "conv" })
    assert.are.equal("Conv2D", ops.conv.op)
    assert.are.equal("BiasAdd", ops.ba.op)
  end)

  it("fuses a residual add (and its Relu) into _FusedConv2D, as Grappler's remapper does", function()
    local x = tfdev.tensor(h.random_values({ 1, 5, 5, 3 }, 3), "float32")
    local f = tfdev.tensor(h.random_values({ 3, 3, 3, 3 }, 5), "float32")
    local b = tfdev.tensor({ 0.1, -0.2, 0.3 }, "float32")
    local function graph(addend_shape)
      return { node = {
        { name = "x", op = "Placeholder", attr = { dtype = "float32", shape = { 1, 5, 5, 3 } } },
        { name = "skip", op = "Placeholder", attr = { dtype = "float32", shape = addend_shape } },
        { name = "f", op = "Const", attr = { value = f } },
        { name = "b", op = "Const", attr = { value = b } },
        { name = "conv", op = "_FusedConv2D", input = { "x", "f", "b" },
          attr = { strides = { 1, 1, 1, 1 }, padding = "SAME", fused_ops = { "BiasAdd" }, num_args = 1 } },
        { name = "add", op = "AddV2", input = { "skip", "conv" } },
        { name = "y", op = "Relu", input = { "add" } },
      } }
    end
    local skip = tfdev.tensor(h.random_values({ 1, 5, 5, 3 }, 9), "float32")
    local fused, ops = run(graph({ 1, 5, 5, 3 }), { x = x, skip = skip }, { "y" })
    local plain = run(graph({ 1, 5, 5, 3 }), { x = x, skip = skip }, { "y" }, { optimize_graph = false })
    h.assert_close(plain[1], fused[1], 1e-5)
    assert.are.equal("_FusedConv2D", ops.y.op)
    assert.are.same({ "BiasAdd", "Add", "Relu" }, ops.y.attr.fused_ops)
    assert.are.equal(2, ops.y.attr.num_args)
    assert.are.equal("SAME", ops.y.attr.padding)
    assert.is_nil(ops.conv)
    assert.is_nil(ops.add)
    -- An addend that broadcasts (shape [3]) is not the fused Add's kind: left as it is.
    local bskip = tfdev.tensor({ 1, 2, 3 }, "float32")
    local fused2, ops2 = run(graph({ 3 }), { x = x, skip = bskip }, { "y" })
    local plain2 = run(graph({ 3 }), { x = x, skip = bskip }, { "y" }, { optimize_graph = false })
    h.assert_close(plain2[1], fused2[1], 1e-5)
    assert.are.equal("AddV2", ops2.add.op)
    assert.are.same({ "BiasAdd" }, ops2.conv.attr.fused_ops)
  end)

  it("fuses a residual add whose batch is unknown, and still broadcasts when the batches differ", function()
    local f = tfdev.tensor(h.random_values({ 1, 1, 3, 2 }, 5), "float32")
    local b = tfdev.tensor({ 0.1, -0.2 }, "float32")
    local g = { node = {
      { name = "x", op = "Placeholder", attr = { dtype = "float32", shape = { -1, 3, 3, 3 } } },
      { name = "skip", op = "Placeholder", attr = { dtype = "float32", shape = { -1, 3, 3, 2 } } },
      { name = "f", op = "Const", attr = { value = f } },
      { name = "b", op = "Const", attr = { value = b } },
      { name = "conv", op = "_FusedConv2D", input = { "x", "f", "b" },
        attr = { strides = { 1, 1, 1, 1 }, padding = "VALID", fused_ops = { "BiasAdd" }, num_args = 1 } },
      { name = "add", op = "AddV2", input = { "conv", "skip" } },
      { name = "y", op = "Relu", input = { "add" } },
    } }
    local cases = { -- batches of x and skip: equal, then each side 1 against 2
      { 2, 2 }, { 1, 2 }, { 2, 1 },
    }
    for _, bs in ipairs(cases) do
      local x = tfdev.tensor(h.random_values({ bs[1], 3, 3, 3 }, 3), "float32")
      local skip = tfdev.tensor(h.random_values({ bs[2], 3, 3, 2 }, 9), "float32")
      local fused, ops = run(g, { x = x, skip = skip }, { "y" })
      local plain = run(g, { x = x, skip = skip }, { "y" }, { optimize_graph = false })
      assert.are.equal(2, #fused[1])
      h.assert_close(plain[1], fused[1], 1e-5)
      assert.are.same({ "BiasAdd", "Add", "Relu" }, ops.y.attr.fused_ops)
    end
    -- batches that do not broadcast fail as AddV2 would, naming the shapes
    local s <close> = tfdev.session()
    s:create(g)
    h.raises("INVALID_ARGUMENT", "[3,3,3,2] does not broadcast with the convolution's output [2,3,3,2]", s.run, s,
      { x = tfdev.tensor(h.random_values({ 2, 3, 3, 3 }, 3), "float32"),
        skip = tfdev.tensor(h.random_values({ 3, 3, 3, 2 }, 9), "float32") }, { "y" })
  end)

  it("fuses a residual block's Prelu too: [BiasAdd, Add, Prelu], alpha last; not when the add is fetched", function()
    -- MediaPipe's block: 1x1 conv + bias, + shortcut, Prelu. 32 channels and 1x1: on an AVX-512 CPU the
    -- pointwise kernel runs it, Prelu in registers; elsewhere oneDNN or im2col and a pass.
    for _, shape in ipairs { { 1, 7, 5, 24, 32 }, { 2, 3, 3, 8, 16 }, { 1, 4, 4, 3, 5 } } do
      local n, hh, ww, c, o = table.unpack(shape)
      local x = tfdev.tensor(h.random_values({ n, hh, ww, c }, 3), "float32")
      local skip = tfdev.tensor(h.random_values({ n, hh, ww, o }, 9), "float32")
      local alpha = {}
      for i = 1, o do alpha[i] = i / (2 * o) - 0.2 end
      local g = { node = {
        { name = "x", op = "Placeholder", attr = { dtype = "float32", shape = { -1, hh, ww, c } } },
        { name = "skip0", op = "Placeholder", attr = { dtype = "float32", shape = { -1, hh, ww, o } } },
        { name = "skip", op = "Neg", input = { "skip0" } }, -- made in the graph, so the add may write over it
        { name = "f", op = "Const", attr = { value = tfdev.tensor(h.random_values({ 1, 1, c, o }, 5), "float32") } },
        { name = "b", op = "Const", attr = { value = tfdev.tensor(h.random_values({ o }, 7), "float32") } },
        { name = "alpha", op = "Const", attr = { value = tfdev.tensor(alpha, "float32") } },
        { name = "conv", op = "_FusedConv2D", input = { "x", "f", "b" },
          attr = { strides = { 1, 1, 1, 1 }, padding = "VALID", fused_ops = { "BiasAdd" }, num_args = 1 } },
        { name = "add", op = "AddV2", input = { "conv", "skip" } },
        { name = "y", op = "Prelu", input = { "add", "alpha" } },
      } }
      local feeds = { x = x, skip0 = skip }
      local fused, ops = run(g, feeds, { "y" }, { intra_op_threads = 2 })
      local plain = run(g, feeds, { "y" }, { optimize_graph = false })
      h.assert_close(plain[1], fused[1], 1e-5)
      assert.are.equal("_FusedConv2D", ops.y.op)
      assert.are.same({ "BiasAdd", "Add", "Prelu" }, ops.y.attr.fused_ops)
      assert.are.equal(3, ops.y.attr.num_args)
      assert.matches("^_feed_%d+:0$", ops.y.input[1]) -- x, fed
      assert.are.same({ "f:0", "b:0", "skip:0", "alpha:0" }, { table.unpack(ops.y.input, 2) })
      assert.is_nil(ops.add)
      -- the add fetched as well: the add stays, and Prelu is left on its own
      local both, ops2 = run(g, feeds, { "y", "add" })
      h.assert_close(plain[1], both[1], 1e-5)
      assert.are.equal("Prelu", ops2.y.op)
      assert.are.same({ "BiasAdd", "Add" }, ops2.add.attr.fused_ops)
    end
  end)

  it("runs Relu6, Elu and LeakyRelu on their own", function()
    local g = tfdev.graph()
    local x = g:placeholder("float32", { 5 }, { name = "x" })
    g:op("Relu6", { x }, { name = "r6" })
    g:op("Elu", { x }, { name = "elu" })
    g:op("LeakyRelu", { x }, { name = "lr", alpha = 0.25 })
    local s <close> = tfdev.session()
    s:create(g)
    local o = s:run({ x = { -2, -0.5, 0, 3, 8 } }, { "r6", "elu", "lr" })
    assert.are.same({ 0, 0, 0, 3, 6 }, o[1]:totable())
    local e = o[2]:totable()
    assert.is_true(math.abs(e[1] - (math.exp(-2) - 1)) < 1e-6 and math.abs(e[2] - (math.exp(-0.5) - 1)) < 1e-6)
    assert.are.same({ 0, 3, 8 }, { e[3], e[4], e[5] })
    assert.are.same({ -0.5, -0.125, 0, 3, 8 }, o[3]:totable())
    local gi = tfdev.graph()
    gi:op("Relu6", { gi:placeholder("int32", { 4 }, { name = "x" }) }, { name = "r6" })
    local si <close> = tfdev.session()
    si:create(gi)
    assert.are.same({ 0, 0, 5, 6 }, si:run({ x = tfdev.tensor({ -3, 0, 5, 9 }, "int32") }, { "r6" })[1]:totable())
  end)
end)
