-- Input forwarding (TensorFlow's forward_input): a kernel may write its output over an input that
-- nothing else can see. These specs check that it does so when it may, and never when someone
-- else still holds the input: a caller's feed, a constant, a second consumer, the same tensor
-- read twice, a fetched intermediate.
local tfdev = require "tfdev"
local h = require "spec.support.helpers"

local function session(opts)
  opts = opts or {}
  opts.intra_op_threads, opts.inter_op_threads = 1, 1
  return tfdev.session(opts)
end

local function allocs(s)
  return s:device_mgr():lookup("/job:localhost/replica:0/task:0/device:CPU:0"):allocator_stats().num_allocs
end

local X = { -2, -1, 0.5, 3, -4, 6, -0.25, 1 }

describe("input forwarding", function()
  it("leaves a fed tensor as the caller gave it", function()
    local s <close> = session()
    s:create { node = {
      { name = "x", op = "Placeholder", attr = { dtype = "float32" } },
      { name = "y", op = "Relu", input = { "x" } },
      { name = "z", op = "AddV2", input = { "x", "x" } },
      { name = "p", op = "Prelu", input = { "x", "a" } },
      { name = "a", op = "Const", attr = { value = tfdev.tensor({ 0.5 }, "float32") } },
    } }
    local x = tfdev.tensor(X, "float32")
    local out = s:run({ x = x }, { "y", "z", "p" })
    assert.are.same(X, x:totable())
    assert.are.same({ 0, 0, 0.5, 3, 0, 6, 0, 1 }, out[1]:totable())
    assert.are.same({ -4, -2, 1, 6, -8, 12, -0.5, 2 }, out[2]:totable())
    assert.are.same({ -1, -0.5, 0.5, 3, -2, 6, -0.125, 1 }, out[3]:totable())
  end)

  it("never writes over a constant, run after run", function()
    local s <close> = session { optimize_graph = false } -- folding would make y a constant too
    s:create { node = {
      { name = "c", op = "Const", attr = { value = tfdev.tensor(X, "float32") } },
      { name = "y", op = "Relu", input = { "c" } },
      { name = "n", op = "Neg", input = { "y" } },
      { name = "z", op = "Mul", input = { "n", "c" } },
    } }
    for _ = 1, 3 do
      local out = s:run({}, { "z", "c" })
      assert.are.same({ 0, 0, -0.25, -9, 0, -36, 0, -1 }, out[1]:totable())
      assert.are.same(X, out[2]:totable())
    end
  end)

  it("keeps an input that a second consumer or a fetch still reads", function()
    local s <close> = session()
    s:create { node = {
      { name = "x", op = "Placeholder", attr = { dtype = "float32" } },
      { name = "n", op = "Neg", input = { "x" } },
      { name = "r", op = "Relu", input = { "n" } },          -- n is also read by s and fetched
      { name = "s", op = "Sigmoid", input = { "n" } },
      { name = "t", op = "Sub", input = { "r", "s" } },
    } }
    local out = s:run({ x = tfdev.tensor(X, "float32") }, { "t", "n", "r" })
    local n = out[2]:totable()
    assert.are.same({ 2, 1, -0.5, -3, 4, -6, 0.25, -1 }, n)
    local want = {}
    for i, v in ipairs(n) do want[i] = math.max(v, 0) - 1 / (1 + math.exp(-v)) end
    h.assert_close(want, out[1]:totable(), 1e-6)
    assert.are.same({ 2, 1, 0, 0, 4, 0, 0.25, 0 }, out[3]:totable())
  end)

  it("reuses a private intermediate instead of allocating", function()
    local function chain(n)
      local nodes = {
        { name = "x", op = "Placeholder", attr = { dtype = "float32", shape = { 4096 } } },
        { name = "a0", op = "Neg", input = { "x" } },
      }
      for i = 1, n do
        nodes[#nodes + 1] = { name = "a" .. i, op = i % 2 == 0 and "Relu" or "AddV2", input = i % 2 == 0 and
          { "a" .. (i - 1) } or { "a" .. (i - 1), "x" } }
      end
      return nodes
    end
    local s <close> = session { optimize_graph = false }
    s:create { node = chain(20) }
    local x = tfdev.tensor { dtype = "float32", shape = { 4096 } }
    local fn = s:make_callable { feeds = { "x" }, fetches = "a20" }
    fn(x)
    local before = allocs(s)
    local y = fn(x)
    -- Neg allocates; the 20 Relu and AddV2 nodes after it write over their private input.
    assert.are.equal(1, allocs(s) - before)
    assert.are.same({ 4096 }, y.shape)
  end)

  it("does the residual add of a fused convolution in its addend's buffer, or in a copy when the addend is shared",
    function()
      local x = tfdev.tensor(h.random_values({ 1, 4, 4, 2 }, 3), "float32")
      local nodes = {
        { name = "x", op = "Placeholder", attr = { dtype = "float32" } },
        { name = "f", op = "Const", attr = { value = tfdev.tensor(h.random_values({ 1, 1, 2, 2 }, 5), "float32") } },
        { name = "b", op = "Const", attr = { value = tfdev.tensor({ 0.5, -0.5 }, "float32") } },
        { name = "r", op = "Neg", input = { "x" } },
        { name = "y", op = "_FusedConv2D", input = { "x", "f", "b", "r" },
          attr = { strides = { 1, 1, 1, 1 }, padding = "VALID", fused_ops = { "BiasAdd", "Add" }, num_args = 2 } },
        { name = "c", op = "Conv2D", input = { "x", "f" }, attr = { strides = { 1, 1, 1, 1 }, padding = "VALID" } },
        { name = "cb", op = "BiasAdd", input = { "c", "b" } },
        { name = "want", op = "AddV2", input = { "cb", "r" } },
      }
      local s <close> = session { optimize_graph = false }
      s:create { node = nodes }
      local only = s:run({ x = x }, { "y", "want" })
      h.assert_close(only[2]:totable(), only[1]:totable(), 1e-5)
      local shared = s:run({ x = x }, { "y", "want", "r" }) -- r fetched: y must not be made in r's buffer
      h.assert_close(shared[2]:totable(), shared[1]:totable(), 1e-5)
      local r = shared[3]:totable()
      local xs = x:totable()
      for i1 = 1, 4 do for i2 = 1, 4 do for c = 1, 2 do
        assert.are.equal(-xs[1][i1][i2][c], r[1][i1][i2][c])
      end end end
    end)
end)
