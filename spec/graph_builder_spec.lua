-- The graph builder (tfdev.graph()) follows the C op registry: output dtypes and shapes from its
-- inference (core.op_infer), errors when a node is added, g:add/sub/mul/div, session:extend(g)
-- sending only new nodes, and how outputs print.
local tfdev = require "tfdev"
local core = require "tfdev.core"
local h = require "spec.support.helpers"

-- An output's dtype and shape as one comparable table.
local function typed(o) return { o.dtype, o.shape } end

local function run(g, fetches, feeds)
  local s <close> = tfdev.session()
  s:create(g)
  local got = s:run(feeds or {}, fetches)
  local r = {}
  for i, t in ipairs(got) do r[i] = t:totable() end
  return r
end

describe("core.op_infer", function()
  it("gives output dtypes and shapes, -1 for unknown sizes and nil for an unknown rank", function()
    local dtypes, shapes, n = core.op_infer("MatMul", {}, { "float32", "float32" }, { { -1, 3 }, { 3, 2 } }, nil, "mm")
    assert.are.same({ "float32" }, dtypes)
    assert.are.same({ { -1, 2 } }, shapes)
    assert.are.equal(1, n)
    dtypes, shapes, n = core.op_infer("Identity", {}, { "int64" }, {}, nil, "i")
    assert.are.same({ "int64" }, dtypes)
    assert.is_nil(shapes[1])
    assert.are.equal(1, n)
  end)

  it("reads constant inputs' values", function()
    local shape = tfdev.tensor({ 3, -1 }, "int32")
    local _, shapes = core.op_infer("Reshape", {}, { "float32", "int32" }, { { 2, 6 }, { 2 } }, { nil, shape }, "r")
    assert.are.same({ { 3, 4 } }, shapes)
    -- Without the value the registry does not say (an honest unknown rank).
    local dtypes
    dtypes, shapes = core.op_infer("Reshape", {}, { "float32", "int32" }, { { 2, 6 }, { 2 } }, nil, "r")
    assert.are.same({ "float32" }, dtypes)
    assert.is_nil(shapes[1])
  end)

  it("counts outputs from attrs", function()
    local dtypes, shapes, n = core.op_infer("QueueDequeueV2", { component_types = { "float32", "int64", "bool" } },
      { "resource" }, { {} }, nil, "dq")
    assert.are.equal(3, n)
    assert.are.same({ "float32", "int64", "bool" }, dtypes)
    assert.is_nil(shapes[1])
    _, shapes, n = core.op_infer("Unpack", { num = 2 }, { "float32" }, { { 2, 5 } }, nil, "u")
    assert.are.equal(2, n)
    assert.are.same({ { 5 }, { 5 } }, shapes)
  end)

  it("refuses unknown ops and bad inputs, with codes", function()
    h.raises("NOT_FOUND", "node 'f': op type not registered 'Frobnicate'", core.op_infer, "Frobnicate", {}, {}, {}, nil,
      "f")
    h.raises("NOT_FOUND", "op type not registered 'Frobnicate'", core.op_infer, "Frobnicate")
    h.raises("INVALID_ARGUMENT", "node 'a' (AddV2) takes 2 inputs, got 1", core.op_infer, "AddV2", {},
      { "float32" }, {}, nil, "a")
    h.raises("INVALID_ARGUMENT", "input 1's dtype must be a dtype name, got float99", core.op_infer, "AddV2", {},
      { "float32", "float99" }, {}, nil, "a")
    h.raises("INVALID_ARGUMENT", "input 0's shape must be a table like {-1, 2} or nil, got string", core.op_infer,
      "Neg", {}, { "float32" }, { "2x2" }, nil, "n")
    h.raises("INVALID_ARGUMENT", "input 0's dimension 2 must be an integer >= -1", core.op_infer, "Neg", {},
      { "float32" }, { { 2, -5 } }, nil, "n")
    h.raises("INVALID_ARGUMENT", "input 1's value must be a tensor or nil, got table", core.op_infer, "Reshape", {},
      { "float32", "int32" }, {}, { nil, { 1, 2 } }, "r")
    h.raises("INVALID_ARGUMENT", "node 'p': attr 'dtype' must be a dtype name", core.op_infer, "Placeholder",
      { dtype = "float99" }, {}, {}, nil, "p")
    h.raises("INVALID_ARGUMENT", "node 'p' (Placeholder): missing required attr 'dtype'", core.op_infer, "Placeholder",
      {}, {}, {}, nil, "p")
  end)
end)

describe("graph builder dtypes and shapes", function()
  local g, x
  before_each(function()
    g = tfdev.graph()
    x = g:placeholder("float32", { -1, 3 }, { name = "x" })
  end)

  it("MatMul, with and without transposes", function()
    local w = g:const({ { 1, 2 }, { 3, 4 }, { 5, 6 } }, { dtype = "float32" })
    assert.are.same({ "float32", { -1, 2 } }, typed(g:matmul(x, w)))
    assert.are.same({ "float32", { -1, -1 } }, typed(g:matmul(x, x, { transpose_b = true })))
    assert.are.same({ "float32", { 3, 3 } }, typed(g:matmul(x, x, { transpose_a = true })))
  end)

  it("Shape is int32 (or its out_type), one size per dimension", function()
    assert.are.same({ "int32", { 2 } }, typed(g:shape(x)))
    assert.are.same({ "int64", { 2 } }, typed(g:shape(x, { out_type = "int64" })))
  end)

  it("queue ops: the queue is a resource, its size int32, a dequeue one output per component", function()
    local q = g:fifo_queue({ "float32", "int32" }, { name = "q" })
    assert.are.same({ "resource", {} }, typed(q))
    assert.are.same({ "int32", {} }, typed(g:queue_size(q)))
    local a, b = g:dequeue(q, { name = "dq" })
    assert.are.same({ "float32" }, typed(a))
    assert.are.same({ "int32" }, typed(b))
    assert.are.same({ "int32" }, typed(g:output("dq", 1)))
    assert.are.equal("dq:1", b:name())
  end)

  it("Fill: the value's dtype, the shape from constant dims", function()
    assert.are.same({ "float32", { 2, 3 } }, typed(g:fill({ 2, 3 }, g:const(1.5, { dtype = "float32" }))))
    assert.are.same({ "int64", {} }, typed(g:fill({}, g:const(7, { dtype = "int64" }))))
    local dims = g:placeholder("int32", { 2 }, { name = "dims" })
    assert.are.same({ "float32" }, typed(g:op("Fill", { dims, g:const(0, { dtype = "float32" }) })))
  end)

  it("Cast takes DstT and keeps the shape", function()
    assert.are.same({ "int32", { -1, 3 } }, typed(g:cast(x, "int32")))
    assert.are.same({ "bool", { -1, 3 } }, typed(g:cast(x, "bool")))
  end)

  it("Reshape with a constant shape", function()
    local c = g:const({ { 1, 2, 3 }, { 4, 5, 6 } }, { dtype = "float32" })
    assert.are.same({ "float32", { 3, 2 } }, typed(g:reshape(c, { 3, -1 })))
    assert.are.same({ "float32", { 6 } }, typed(g:reshape(c, { -1 })))
    assert.are.same({ "float32", { -1, 6 } }, typed(g:reshape(x, { -1, 6 })))
    -- A shape that is no Const: the registry leaves the result's shape unknown.
    local shape = g:placeholder("int32", { 3 }, { name = "shape" })
    assert.are.same({ "float32" }, typed(g:op("Reshape", { x, shape })))
    h.raises("INVALID_ARGUMENT", "node 'bad' (Reshape)", g.reshape, g, c, { 4, 2 }, { name = "bad" })
  end)

  it("ConcatV2 adds sizes along a constant axis", function()
    local y = g:placeholder("float32", { -1, 2 }, { name = "y" })
    assert.are.same({ "float32", { -1, 5 } }, typed(g:concat({ x, y }, 1)))
    assert.are.same({ "float32", { -1, 3 } }, typed(g:concat({ x, x }, 0)))
    assert.are.same({ "float32", { -1, 6 } }, typed(g:concat({ x, x }, -1)))
    local axis = g:placeholder("int32", {}, { name = "axis" })
    assert.are.same({ "float32" }, typed(g:op("ConcatV2", { x, y, axis }))) -- the axis unknown: the shape too
    h.raises("INVALID_ARGUMENT", "dimension 1 of value 1 is 2, expected 3", g.concat, g, { x, y }, 0)
  end)

  it("unknown dimensions and ranks flow through", function()
    local u = g:placeholder("float32", nil, { name = "u" })
    assert.are.same({ "float32" }, typed(u))
    assert.are.same({ "float32" }, typed(g:relu(u)))
    assert.are.same({ "float32", { -1, 3 } }, typed(x + g:placeholder("float32", { -1, 1 })))
    assert.are.same({ "float32", { 4, 3 } }, typed(x + g:placeholder("float32", { 4, 1 })))
    assert.are.same({ "float32", { -1 } }, typed(g:sum(x, { 1 })))
    assert.are.same({ "float32", { -1, 1 } }, typed(g:sum(x, { 1 }, { keep_dims = true })))
    assert.are.same({ "float32", { 3, -1 } }, typed(g:transpose(x, { 1, 0 })))
  end)

  it("variables, random ops, comparisons, multi-output ops", function()
    local v = g:variable({ { 1, 2 } }, { name = "v", dtype = "float32" })
    assert.are.same({ "float32" }, typed(v))   -- a read has no static shape
    assert.are.same({ "resource", {} }, typed(v.handle))
    assert.are.same({ "float64", { 2, 5 } }, typed(g:random_uniform({ 2, 5 }, { dtype = "float64" })))
    assert.are.same({ "bool", { -1, 3 } }, typed(g:op("Less", { x, 0 })))
    assert.are.same({ "int64", { -1 } }, typed(g:op("ArgMax", { x, g:const(1, { dtype = "int32" }) })))
    local first = g:op("Unpack", { x }, { name = "rows", num = 3, axis = 1 })
    assert.are.same({ "float32", { -1 } }, typed(first))
    assert.are.same({ "float32", { -1 } }, typed(g:output("rows", 2)))
    local handle = g:get_session_handle(x)
    assert.are.same({ "int64", {} }, typed(handle))
    assert.are.same({ "float32" }, typed(g:get_session_tensor(handle, "float32")))
  end)

  it("what the builder says is what a session makes", function()
    local c = g:const({ { 1, 2, 3 }, { 4, 5, 6 } }, { dtype = "float32" })
    local outs = { g:reshape(c, { 3, 2 }), g:concat({ c, c }, 0), g:shape(c), g:cast(c, "int64"),
      g:fill({ 2, 2 }, g:const(1, { dtype = "int32" })), g:matmul(c, c, { transpose_b = true }) }
    local names = {}
    for i, o in ipairs(outs) do names[i] = o:name() end
    local s <close> = tfdev.session()
    s:create(g)
    for i, t in ipairs(s:run({}, names)) do
      assert.are.equal(outs[i].dtype, t.dtype)
      assert.are.same(outs[i].shape, t.shape)
    end
  end)
end)

describe("graph builder arithmetic", function()
  it("g:add, g:sub, g:mul, g:div make AddV2, Sub, Mul, RealDiv", function()
    local g = tfdev.graph()
    local x = g:const({ 1, 2, 4 }, { dtype = "float32" })
    local ops = {}
    for _, o in ipairs { g:add(x, 1), g:sub(x, 1), g:mul(x, 2), g:div(x, 2) } do
      ops[#ops + 1] = g.by_name[o.node].op
    end
    assert.are.same({ "AddV2", "Sub", "Mul", "RealDiv" }, ops)
  end)

  it("computes through a session, numbers and tables on either side taking the output's dtype", function()
    local g = tfdev.graph()
    local x = g:placeholder("float32", { 3 }, { name = "x" })
    local i = g:placeholder("int32", { 3 }, { name = "i" })
    local outs = {
      g:add(x, 1, { name = "a" }), g:sub(10, x, { name = "b" }), g:mul(x, { 1, 2, 3 }, { name = "c" }),
      g:div(x, 4, { name = "d" }), g:mul(3, i, { name = "e" }), g:sub(i, { 1, 1, 1 }, { name = "f" }),
      g:add(g:mul(x, x), x, { name = "h" }),
    }
    assert.are.equal("int32", outs[5].dtype)
    assert.are.equal("int32", outs[6].dtype)
    local s <close> = tfdev.session()
    s:create(g)
    local got = s:run({ x = { 1, 2, 4 }, i = { 5, 6, 7 } }, { "a", "b", "c", "d", "e", "f", "h" })
    local want = { { 2, 3, 5 }, { 9, 8, 6 }, { 1, 4, 12 }, { 0.25, 0.5, 1 }, { 15, 18, 21 }, { 4, 5, 6 }, { 2, 6, 20 } }
    for k, t in ipairs(got) do assert.are.same(want[k], t:totable()) end
    assert.are.equal("int32", got[5].dtype)
  end)

  it("agrees with the operators", function()
    local g = tfdev.graph()
    local x = g:const({ 2, 3 }, { dtype = "float64" })
    local a, b = g:add(g:mul(x, 2), 1, { name = "a" }), x * 2 + 1
    local c, d = g:div(g:sub(1, x), 2, { name = "c" }), (1 - x) / 2
    assert.are.same(run(g, { "a", c:name() }), run(g, { b:name(), d:name() }))
  end)

  it("refuses operands of different dtypes, naming the node", function()
    local g = tfdev.graph()
    local x = g:const({ 1 }, { dtype = "float32" })
    local i = g:const({ 1 }, { dtype = "int32" })
    h.raises("INVALID_ARGUMENT", "node 'm' (Mul): input 0 is float32 but input 1 is int32", g.mul, g, x, i,
      { name = "m" })
    h.raises("INVALID_ARGUMENT", "(RealDiv): T=int32 is not allowed", function() return g:div(i, 2) end)
  end)
end)

describe("session:extend with a builder", function()
  it("sends only the nodes the session has not seen, run after run", function()
    local g = tfdev.graph()
    local x = g:placeholder("float32", { 2 }, { name = "x" })
    local y = g:mul(x, 2, { name = "y" })
    local s <close> = tfdev.session()
    s:create(g)
    assert.are.same({ 2, 4 }, s:run({ x = { 1, 2 } }, "y"):totable())
    local z = g:add(y, 1, { name = "z" })
    s:extend(g)
    assert.are.same({ 3, 5 }, s:run({ x = { 1, 2 } }, "z"):totable())
    s:extend(g) -- nothing new: nothing sent, nothing refused
    g:sub(z, x, { name = "w" })
    g:div(g:output("w"), 2, { name = "half" })
    s:extend(g)
    assert.are.same({ 1, 1.5 }, s:run({ x = { 1, 2 } }, "half"):totable())
    assert.are.same({ 2, 4 }, s:run({ x = { 1, 2 } }, "y"):totable())
  end)

  it("extends a session the builder was never given, and keeps each session's record apart", function()
    local g = tfdev.graph()
    local x = g:placeholder("int32", {}, { name = "x" })
    g:add(x, 1, { name = "a" })
    local one <close> = tfdev.session()
    local two <close> = tfdev.session()
    one:extend(g) -- a session not yet created takes its first graph through extend
    g:mul(g:output("a"), 10, { name = "b" })
    two:create(g)
    one:extend(g)
    assert.are.equal(30, one:run({ x = 2 }, "b"):item())
    assert.are.equal(30, two:run({ x = 2 }, "b"):item())
    -- A builder the session did not get from create: all its nodes are new to the session.
    local other = tfdev.graph()
    other:const(5, { name = "five", dtype = "int32" })
    one:extend(other)
    assert.are.equal(5, one:run({}, "five"):item())
  end)

  it("refuses a builder whose sent nodes changed or went, naming the node, and stays usable", function()
    local g = tfdev.graph()
    local x = g:placeholder("float32", { 2 }, { name = "x" })
    g:mul(x, 2, { name = "y" })
    local s <close> = tfdev.session()
    s:create(g)
    g.by_name.y.device = "/device:CPU:0"
    h.raises("INVALID_ARGUMENT", "node 'y' changed since this session was given it", s.extend, s, g)
    g.by_name.y.device = nil
    g.by_name.x.attr.shape = { 3 }
    h.raises("INVALID_ARGUMENT", "node 'x' changed", s.extend, s, g)
    g.by_name.x.attr.shape = { 2 }
    g:add(x, 1, { name = "z" })
    s:extend(g) -- back as it was: the new node goes through
    assert.are.same({ 2, 3 }, s:run({ x = { 1, 2 } }, "z"):totable())
    local at
    for i, n in ipairs(g.nodes) do if n.name == "y" then at = i end end
    local y = table.remove(g.nodes, at)
    h.raises("INVALID_ARGUMENT", "node 'y', which this session was given, is no longer in the graph", s.extend, s, g)
    table.insert(g.nodes, at, y)
    s:extend(g)
    assert.are.same({ 2, 4 }, s:run({ x = { 1, 2 } }, "y"):totable())
  end)

  it("does not record nodes the session refused", function()
    local g = tfdev.graph()
    local x = g:placeholder("float32", { 2 }, { name = "x" })
    local s <close> = tfdev.session()
    s:create(g)
    g:op("Identity", { x }, { name = "_hidden" }) -- names starting with '_' are the runtime's
    h.raises("INVALID_ARGUMENT", "_hidden", s.extend, s, g)
    table.remove(g.nodes)
    g.by_name._hidden, g.info._hidden = nil, nil
    g:op("Identity", { x }, { name = "shown" })
    s:extend(g)
    assert.are.same({ 1, 2 }, s:run({ x = { 1, 2 } }, "shown"):totable())
  end)

  it("leaves GraphDef tables to the session as before", function()
    local g = tfdev.graph()
    g:const(1, { name = "one", dtype = "int32" })
    local s <close> = tfdev.session()
    s:create(g:graph_def())
    h.raises("INVALID_ARGUMENT", "one", s.extend, s, g:graph_def())
  end)
end)

describe("graph builder outputs", function()
  it("print as <Output name:index dtype shape>", function()
    local g = tfdev.graph()
    local x = g:placeholder("float32", { -1, 2 }, { name = "x" })
    local y = g:relu(x, { name = "y" })
    assert.are.equal("<Output y:0 float32 [?,2]>", tostring(y))
    assert.are.equal("<Output s:0 int32 []>", tostring(g:const(1, { name = "s", dtype = "int32" })))
    assert.are.equal("<Output u:0 float64 <unknown>>", tostring(g:placeholder("float64", nil, { name = "u" })))
    local q = g:fifo_queue({ "float32", "bool" }, { name = "q" })
    g:dequeue(q, { name = "dq" })
    assert.are.equal("<Output dq:1 bool <unknown>>", tostring(g:output("dq", 1)))
    assert.are.equal("<Output init (NoOp, no outputs)>", tostring(g:no_op({ name = "init" })))
  end)

  it("name themselves for inputs, feeds and fetches without tostring", function()
    local g = tfdev.graph()
    local x = g:placeholder("float32", { 2 }, { name = "x" })
    local q = g:fifo_queue({ "float32", "float32" }, { name = "q" })
    local _, b = g:dequeue(q, { name = "dq" })
    g:add(x, b, { name = "sum", control_inputs = { g:no_op({ name = "init" }) } })
    assert.are.same({ "x", "dq:1", "^init" }, g.by_name.sum.input)
    assert.are.equal("x:0", x:name())
    assert.are.equal("dq:1", b:name())
  end)
end)

describe("graph builder errors", function()
  it("an unknown op is NOT_FOUND when it is added, and adds nothing", function()
    local g = tfdev.graph()
    local x = g:placeholder("float32", { 2 }, { name = "x" })
    h.raises("NOT_FOUND", "node 'f': op type not registered 'Frobnicate'", g.op, g, "Frobnicate", { x, 3 },
      { name = "f" })
    assert.are.equal(1, #g.nodes) -- not even the Const made for 3
    assert.is_nil(g.by_name.f)
    g:op("Neg", { x }, { name = "f" }) -- the name is still free
  end)

  it("bad inputs are INVALID_ARGUMENT naming the node", function()
    local g = tfdev.graph()
    local x = g:placeholder("float32", { 2, 3 }, { name = "x" })
    h.raises("INVALID_ARGUMENT", "node 'mm' (MatMul): Matrix size-incompatible", g.matmul, g, x, x, { name = "mm" })
    h.raises("INVALID_ARGUMENT", "node 'n' (Neg) takes 1 input, got 2", g.op, g, "Neg", { x, x }, { name = "n" })
    h.raises("INVALID_ARGUMENT", "node 'e' (Exp): T=int32 is not allowed", g.exp, g,
      g:placeholder("int32", {}, { name = "i" }), { name = "e" })
    local v = g:placeholder("float32", { 4 }, { name = "v" })
    h.raises("INVALID_ARGUMENT", "node 'bad' (AddV2): Incompatible shapes: [2,3] vs. [4]", g.add, g, x, v,
      { name = "bad" })
    h.raises("INVALID_ARGUMENT", "node 'q' (QueueSizeV2): input 0 must be a resource handle, got float32",
      g.op, g, "QueueSizeV2", { x }, { name = "q" })
    local other = tfdev.graph():placeholder("float32", { 2, 3 })
    h.raises("INVALID_ARGUMENT", "input 2 of 'o' belongs to another graph", g.add, g, x, other, { name = "o" })
    h.raises("INVALID_ARGUMENT", "node name 'x' is already used", g.placeholder, g, "float32", {}, { name = "x" })
    assert.are.same({ "x", "i", "v" }, { g.nodes[1].name, g.nodes[2].name, g.nodes[3].name })
    assert.are.equal(3, #g.nodes) -- the refused nodes left nothing behind
  end)

  it("g:output checks the node and the index", function()
    local g = tfdev.graph()
    g:placeholder("float32", { 2 }, { name = "x" })
    h.raises("NOT_FOUND", "graph has no node named 'nope'", g.output, g, "nope")
    h.raises("INVALID_ARGUMENT", "node 'x' (Placeholder) has 1 output, asked for output 1", g.output, g, "x", 1)
    local u = g:op("Unpack", { g:output("x") }, { name = "u", num = 2 })
    assert.are.equal("u:1", g:output("u", 1):name())
    h.raises("INVALID_ARGUMENT", "node 'u' (Unpack) has 2 outputs, asked for output 2", g.output, g, "u", 2)
    -- An output index past the node's outputs, built by hand, is refused as an input.
    local bad = g:output("u", 1)
    bad.index = 5
    h.raises("INVALID_ARGUMENT", "input 1 of 'n' is 'u:5' but 'u' has 2 outputs", g.op, g, "Neg", { bad },
      { name = "n" })
    assert.is_not_nil(u)
  end)
end)
