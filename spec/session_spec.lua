-- tfdev.session: create, extend, run, placement, partitioning, caching, tracing, and every error path.
local tfdev = require "tfdev"
local h = require "spec.support.helpers"
local dkjson = require "dkjson"

local PREFIX = "/job:localhost/replica:0/task:0"

-- A GraphDef written by hand, as DESIGN.md shows it.
local function mlp_def()
  return { node = {
    { name = "x", op = "Placeholder", attr = { dtype = "float32", shape = { -1, 2 } } },
    { name = "w", op = "Const", attr = { value = tfdev.tensor({ { 1, 2 }, { 3, 4 } }, "float32") } },
    { name = "b", op = "Const", attr = { value = { -10, 1 }, dtype = "float32" } },
    { name = "mm", op = "MatMul", input = { "x", "w" } },
    { name = "add", op = "BiasAdd", input = { "mm", "b:0" } },
    { name = "y", op = "Relu", input = { "add" } },
  } }
end

local X = { { 1, 1 }, { 2, 0 } }
local Y = { { 0, 7 }, { 0, 5 } }

describe("tfdev.session", function()
  after_each(function() tfdev.factory.reset() end)

  it("runs a hand-written GraphDef, feeds from tables and tensors", function()
    local s <close> = tfdev.session()
    s:create(mlp_def())
    assert.are.same(Y, s:run({ x = X }, "y"):totable())
    assert.are.same(Y, s:run({ ["x:0"] = tfdev.tensor(X, "float32") }, { "y" })[1]:totable())
    local outs = s:run({ x = X }, { "mm", "y:0", "x" })
    assert.are.same({ { 4, 6 }, { 2, 4 } }, outs[1]:totable())
    assert.are.same(X, outs[3]:totable()) -- fetching a fed tensor returns it
  end)

  it("fills default attrs and infers T", function()
    local s <close> = tfdev.session { optimize_graph = false } -- keep mm: the optimiser would fuse it
    s:create(mlp_def())
    local _, meta = s:run({ x = X }, "y", nil, { output_partition_graphs = true })
    local mm
    for _, n in ipairs(meta.partition_graphs[1].node) do if n.name == "mm" then mm = n end end
    assert.are.same({ T = "float32", transpose_a = false, transpose_b = false }, mm.attr)
    assert.are.equal(PREFIX .. "/device:CPU:0", mm.device)
  end)

  it("runs targets and returns nothing for them", function()
    local g = tfdev.graph()
    local v = g:variable({ 1 }, { name = "v", dtype = "int32" })
    local s <close> = tfdev.session()
    s:create(g)
    assert.is_nil(s:run({}, nil, { v.initializer }))
    assert.are.same({ 1 }, s:run({}, "v/Read"):totable())
  end)

  describe("refuses bad graphs, naming the node", function()
    local function create(nodes) local s <close> = tfdev.session(); s:create({ node = nodes }) end
    it("unknown op", function()
      h.raises("NOT_FOUND", "node 'a': op type not registered 'Frobnicate'", create, { { name = "a", op = "Frobnicate" } })
    end)
    it("missing input node", function()
      h.raises("INVALID_ARGUMENT", "node 'a': input 'ghost:0' refers to unknown node 'ghost'", create,
        { { name = "a", op = "Identity", input = { "ghost:0" } } })
    end)
    it("duplicate node", function()
      h.raises("INVALID_ARGUMENT", "duplicate node name 'a'", create, { { name = "a", op = "NoOp" }, { name = "a", op = "NoOp" } })
    end)
    it("wrong arity", function()
      h.raises("INVALID_ARGUMENT", "node 'm' (MatMul) takes 2 inputs, got 1", create, {
        { name = "x", op = "Placeholder", attr = { dtype = "float32" } }, { name = "m", op = "MatMul", input = { "x" } } })
    end)
    it("dtype mismatch", function()
      h.raises("INVALID_ARGUMENT", "node 's' (AddV2): input 0 is float32 but input 1 is int32", create, {
        { name = "a", op = "Const", attr = { value = tfdev.tensor({ 1.5 }) } },
        { name = "b", op = "Const", attr = { value = tfdev.tensor({ 1 }) } },
        { name = "s", op = "AddV2", input = { "a", "b" } } })
    end)
    it("declared T that disagrees with the input", function()
      h.raises("INVALID_ARGUMENT", "node 'i' (Identity): T is int32 but input 0 is float32", create, {
        { name = "a", op = "Const", attr = { value = tfdev.tensor({ 1.5 }) } },
        { name = "i", op = "Identity", input = { "a" }, attr = { T = "int32" } } })
    end)
    it("incompatible shapes", function()
      h.raises("INVALID_ARGUMENT", "node 's' (Add): Incompatible shapes: [2] vs. [3]", create, {
        { name = "a", op = "Const", attr = { value = tfdev.tensor({ 1, 2 }) } },
        { name = "b", op = "Const", attr = { value = tfdev.tensor({ 1, 2, 3 }) } },
        { name = "s", op = "Add", input = { "a", "b" } } })
      h.raises("INVALID_ARGUMENT", "Matrix size-incompatible: In[0]: [1,2], In[1]: [3,1]", create, {
        { name = "a", op = "Const", attr = { value = tfdev.tensor({ { 1, 2 } }, "float32") } },
        { name = "b", op = "Const", attr = { value = tfdev.tensor({ { 1 }, { 2 }, { 3 } }, "float32") } },
        { name = "m", op = "MatMul", input = { "a", "b" } } })
    end)
    it("cycles", function()
      h.raises("INVALID_ARGUMENT", "graph has a cycle through 3 nodes: 'a', 'b', 'c'", create, {
        { name = "a", op = "Identity", input = { "c" } }, { name = "b", op = "Identity", input = { "a" } },
        { name = "c", op = "Identity", input = { "b" } } })
    end)
    it("malformed names, inputs and attrs", function()
      h.raises("INVALID_ARGUMENT", "node name 'a b' is invalid", create, { { name = "a b", op = "NoOp" } })
      h.raises("INVALID_ARGUMENT", "names starting with '_' are reserved", create, { { name = "_x", op = "NoOp" } })
      h.raises("INVALID_ARGUMENT", "malformed input 'a:x'", create, { { name = "a", op = "NoOp" },
        { name = "b", op = "Identity", input = { "a:x" } } })
      h.raises("INVALID_ARGUMENT", "node 'p': attr 'dtype' must be a dtype name", create,
        { { name = "p", op = "Placeholder", attr = { dtype = 3 } } })
      h.raises("INVALID_ARGUMENT", "node 'p' (Placeholder): missing required attr 'dtype'", create,
        { { name = "p", op = "Placeholder" } })
      -- TensorFlow's TestMalformedDeviceSpecification: the placer's text, with the node's tag
      h.raises("INVALID_ARGUMENT", "Malformed device specification 'gpu zero' in node: {name:'a'", create,
        { { name = "a", op = "NoOp", device = "gpu zero" } })
      local s <close> = tfdev.session()
      h.raises("INVALID_ARGUMENT", "a graph must be a GraphDef table", s.create, s, 42)
    end)
  end)

  describe("refuses bad runs", function()
    local s
    before_each(function() s = tfdev.session(); s:create(mlp_def()) end)
    after_each(function() s:close() end)

    it("missing feeds", function()
      h.raises("INVALID_ARGUMENT", "You must feed a value for placeholder tensor 'x' with dtype float32", s.run, s, {}, "y")
    end)
    it("unknown fetches, feeds and targets", function()
      h.raises("NOT_FOUND", "fetch 'nope:0': the graph has no node named 'nope'", s.run, s, { x = X }, "nope")
      h.raises("NOT_FOUND", "feed 'ghost': the graph has no node named 'ghost'; its placeholders are x", s.run, s,
        { ghost = X }, "y")
      h.raises("NOT_FOUND", "target 'nobody'", s.run, s, { x = X }, nil, { "nobody" })
      h.raises("INVALID_ARGUMENT", "fetch 'y:1': node 'y' (Relu) has 1 output", s.run, s, { x = X }, "y:1")
      h.raises("INVALID_ARGUMENT", "Must specify at least one target to fetch or execute", s.run, s, { x = X })
    end)
    it("feeds of the wrong dtype or shape", function()
      h.raises("INVALID_ARGUMENT", "feed 'x:0' expects float32, got an int32 tensor", s.run, s, { x = tfdev.tensor({ { 1, 2 } }) }, "y")
      h.raises("INVALID_ARGUMENT", "Cannot feed value of shape [2,3] for tensor 'x:0', which has shape [?,2]", s.run, s,
        { x = { { 1, 2, 3 }, { 4, 5, 6 } } }, "y")
    end)
    it("bad run options", function()
      h.raises("INVALID_ARGUMENT", "unknown run option 'tracing'", s.run, s, { x = X }, "y", nil, { tracing = true })
    end)
  end)

  it("extends the graph, keeping earlier nodes", function()
    local s <close> = tfdev.session()
    s:create(mlp_def())
    s:extend({ node = { { name = "z", op = "Square", input = { "y" } } } })
    assert.are.same({ { 0, 49 }, { 0, 25 } }, s:run({ x = X }, "z"):totable())
    h.raises("INVALID_ARGUMENT", "duplicate node name 'z'", s.extend, s, { node = { { name = "z", op = "NoOp" } } })
    assert.are.same({ { 0, 49 }, { 0, 25 } }, s:run({ x = X }, "z"):totable()) -- the failed extend changed nothing
    h.raises("ALREADY_EXISTS", "A Graph has already been created for this session.", s.create, s, mlp_def())
  end)

  it("caches executors per signature (order of names does not matter)", function()
    local s <close> = tfdev.session()
    s:create(mlp_def())
    s:run({ x = X }, { "y", "mm" })
    s:run({ x = X }, { "y", "mm" })
    assert.are.equal(1, s:executor_count())
    s:run({ ["x:0"] = X }, { "mm:0", "y" })
    assert.are.equal(1, s:executor_count())
    s:run({ x = X }, { "y" })
    assert.are.equal(2, s:executor_count())
  end)

  it("makes callables that skip signature work", function()
    local s <close> = tfdev.session()
    s:create(mlp_def())
    local f = s:make_callable { feeds = { "x" }, fetches = { "y", "mm" } }
    local outs = f(X)
    assert.are.same(Y, outs[1]:totable())
    local one = s:make_callable { feeds = { "x" }, fetches = "y" }
    assert.are.same(Y, one(tfdev.tensor(X, "float32")):totable())
    h.raises("INVALID_ARGUMENT", "this callable takes 1 feed, got 0", one)
    assert.are.equal(2, s:executor_count())
  end)

  describe("placement", function()
    it("puts nodes on the highest-priority device type with a kernel", function()
      -- SIM devices outrank CPU but have no kernels: every node still lands on CPU.
      tfdev.factory.register("SIM", { create_devices = function(_, _, p)
        return { tfdev.device.cpu { name = p .. "/device:SIM:0", device_type = "SIM" } } end }, 100)
      local s <close> = tfdev.session()
      s:create(mlp_def())
      s:run({ x = X }, "y")
      assert.are.equal(PREFIX .. "/device:CPU:0", s:placement("y"))
      assert.are.equal(2, #s:list_devices())
    end)

    it("honours requested devices, full or partial", function()
      local def = mlp_def()
      def.node[4].device = "/device:CPU:1"
      def.node[6].device = PREFIX .. "/cpu:1"
      local s <close> = tfdev.session { device_count = { CPU = 2 } }
      s:create(def)
      assert.are.same(Y, s:run({ x = X }, "y"):totable())
      assert.are.equal(PREFIX .. "/device:CPU:1", s:placement("mm"))
      assert.are.equal(PREFIX .. "/device:CPU:1", s:placement("y"))
      assert.are.equal(PREFIX .. "/device:CPU:0", s:placement("add"))
    end)

    it("refuses unsatisfiable requests at create (at run with place_pruned_graph), naming node and device", function()
      local def = mlp_def()
      def.node[4].device = "/device:GPU:0"
      local s <close> = tfdev.session()
      -- TensorFlow's TestNonexistentGpuNoAllowSoftPlacementFormatTag and TestNonExistentDevice
      h.raises("INVALID_ARGUMENT", "Cannot assign a device for operation mm: {{node mm}} was explicitly assigned to " ..
        "/device:GPU:0 but available devices are [ " .. PREFIX .. "/device:CPU:0 ]. Make sure the device " ..
        "specification refers to a valid device.", s.create, s, def)
      local pruned <close> = tfdev.session { place_pruned_graph = true }
      pruned:create(def)
      h.raises("INVALID_ARGUMENT", "Cannot assign a device for operation mm: {{node mm}} was explicitly assigned to " ..
        "/device:GPU:0 but available devices are [", pruned.run, pruned, { x = X }, "y")
    end)

    it("keeps a device type's case as TensorFlow's C++ runtime does: /device:cpu:0 is no CPU device", function()
      local def = mlp_def()
      def.node[4].device = "/device:cpu:0"
      local s <close> = tfdev.session()
      h.raises("INVALID_ARGUMENT", "was explicitly assigned to /device:cpu:0 but available devices are [ " .. PREFIX ..
        "/device:CPU:0 ]. Make sure the device specification refers to a valid device. Device types are " ..
        "case-sensitive: did you mean CPU rather than cpu?", s.create, s, def)
      -- soft placement takes it to the CPU; the legacy /cpu:0 is the CPU already, as in TensorFlow
      local soft <close> = tfdev.session { allow_soft_placement = true }
      soft:create(def)
      soft:run({ x = X }, "y")
      assert.are.equal(PREFIX .. "/device:CPU:0", soft:placement("mm"))
      def.node[4].device = "/cpu:0"
      local legacy <close> = tfdev.session()
      legacy:create(def)
      legacy:run({ x = X }, "y")
      assert.are.equal(PREFIX .. "/device:CPU:0", legacy:placement("mm"))
    end)

    it("refuses a device type with no kernel for the op (TestUnsupportedDeviceNoAllowSoftPlacement)", function()
      tfdev.factory.register("SIM", { create_devices = function(_, _, p)
        return { tfdev.device.cpu { name = p .. "/device:SIM:0", device_type = "SIM" } } end }, 100)
      local def = mlp_def()
      def.node[4].device = "/device:SIM:0"
      local s <close> = tfdev.session()
      h.raises("INVALID_ARGUMENT", "Cannot assign a device for operation mm: Could not satisfy explicit device " ..
        "specification '/device:SIM:0' because no supported kernel for SIM devices is available.", s.create, s, def)
    end)

    it("falls back with allow_soft_placement", function()
      local def = mlp_def()
      def.node[4].device = "/device:GPU:0"
      local s <close> = tfdev.session { allow_soft_placement = true }
      s:create(def)
      assert.are.same(Y, s:run({ x = X }, "y"):totable())
      assert.are.equal(PREFIX .. "/device:CPU:0", s:placement("mm"))
    end)

    it("colocates resource users with their variable and keeps stateful nodes across extend", function()
      local g = tfdev.graph()
      local v = g:variable({ 1, 2 }, { name = "v", dtype = "float32", device = "/device:CPU:1" })
      local s <close> = tfdev.session { device_count = { CPU = 2 } }
      s:create(g)
      s:run({}, nil, { v.initializer })
      assert.are.equal(PREFIX .. "/device:CPU:1", s:placement("v"))
      assert.are.equal(PREFIX .. "/device:CPU:1", s:placement("v/Assign"))
      s:extend({ node = { { name = "r2", op = "ReadVariableOp", input = { "v" }, attr = { dtype = "float32" } } } })
      assert.are.same({ 1, 2 }, s:run({}, "r2"):totable())
      assert.are.equal(PREFIX .. "/device:CPU:1", s:placement("r2"))
      assert.are.equal(PREFIX .. "/device:CPU:1", s:placement("v"))
    end)

    it("logs placements with log_device_placement", function()
      local exe = os.getenv("TFDEV_EXE")
      local p = io.popen(exe .. [[ -e "local t = require 'tfdev'; local s = t.session{log_device_placement = true};
        s:create{node = {{name = 'c', op = 'Const', attr = {value = t.tensor{1}}}, {name = 'n', op = 'Neg', input = {'c'}}}};
        s:run({}, 'n')" 2>&1]])
      local out = p:read("a")
      p:close()
      assert.truthy(out:find("n: (Neg): " .. PREFIX .. "/device:CPU:0", 1, true), out)
    end)
  end)

  it("partitions across two CPUs with Send/Recv and gets the same result as one", function()
    local g = tfdev.graph()
    local x = g:placeholder("float32", { -1, 4 }, { name = "x" })
    local w1 = g:const({ { 1, 0, 2, 0 }, { 0, 1, 0, 2 }, { 1, 1, 1, 1 }, { 2, 0, 0, 1 } }, { dtype = "float32" })
    local h1 = g:relu(g:matmul(x, w1), { name = "h1", device = "/device:CPU:1" })
    local h2 = g:op("Tanh", { h1 }, { name = "h2", device = "/device:CPU:0" })
    local y = g:sum(h2 * h1, { 1 }, { name = "y", device = "/device:CPU:1", control_inputs = { h2 } })
    local feed = { { 0.1, -0.2, 0.3, 0.4 }, { -1, 2, 0.5, 0 } }
    local one <close> = tfdev.session { allow_soft_placement = true } -- CPU:1 requests fall back to CPU:0
    one:create(g)
    local two <close> = tfdev.session { device_count = { CPU = 2 } }
    two:create(g)
    local ref = one:run({ x = feed }, "y"):totable()
    local got, meta = two:run({ x = feed }, "y", nil, { output_partition_graphs = true, trace = true })
    assert.are.same(ref, got:totable())
    assert.are.equal(2, #meta.partition_graphs)
    local sends, recvs = 0, 0
    for _, pg in ipairs(meta.partition_graphs) do
      for _, n in ipairs(pg.node) do
        if n.op == "_Send" then sends = sends + 1 end
        if n.op == "_Recv" then recvs = recvs + 1; assert.truthy(n.attr.send_device and n.attr.recv_device) end
      end
    end
    assert.is_true(sends >= 2)
    assert.are.equal(sends, recvs)
    assert.are.equal(2, #meta.step_stats.dev_stats)
  end)

  it("collects step stats and writes a timeline that parses", function()
    local s <close> = tfdev.session { optimize_graph = false } -- one stat per node as written
    s:create(mlp_def())
    local y, meta = s:run({ x = X }, "y", nil, { trace = true })
    assert.are.same(Y, y:totable())
    local stats = meta.step_stats.dev_stats[1]
    assert.are.equal(PREFIX .. "/device:CPU:0", stats.device)
    local by_name = {}
    for _, n in ipairs(stats.node_stats) do by_name[n.node_name] = n end
    assert.truthy(by_name.mm and by_name.y and by_name.add)
    assert.are.equal("MatMul", by_name.mm.op)
    assert.are.equal(16, by_name.mm.output_bytes)
    assert.is_true(by_name.mm.all_start_micros > 1.6e15 and by_name.mm.all_end_rel_micros >= 0)
    local trace = dkjson.decode(tfdev.timeline(meta))
    assert.truthy(trace and trace.traceEvents)
    local ops = {}
    for _, e in ipairs(trace.traceEvents) do if e.ph == "X" then ops[e.name] = e.args.op end end
    assert.are.equal("MatMul", ops.mm)
    assert.are.equal("Relu", ops.y)
  end)

  it("gives every step an id unique across sessions", function()
    local a <close> = tfdev.session()
    local b <close> = tfdev.session()
    a:create(mlp_def())
    b:create(mlp_def())
    local seen = {}
    for _ = 1, 5 do
      for _, s in ipairs { a, b } do
        local _, meta = s:run({ x = X }, "y", nil, { trace = true })
        assert.is_nil(seen[meta.step_id])
        seen[meta.step_id] = true
      end
    end
  end)

  it("refuses work once closed; closing twice is harmless", function()
    local s = tfdev.session()
    s:create(mlp_def())
    s:close()
    s:close()
    h.raises("CANCELLED", "Session has been closed.", s.run, s, { x = X }, "y")
    assert.are.equal("tfdev.session(closed)", tostring(s))
  end)

  it("hands its devices out as a device manager", function()
    local s <close> = tfdev.session { device_count = { CPU = 3 } }
    local m = s:device_mgr()
    assert.are.equal(3, m:num_device_type("CPU"))
    assert.are.equal(PREFIX .. "/device:CPU:2", m:lookup("CPU:2").name)
  end)

  it("uses Lua factories when it makes its devices", function()
    local calls = 0
    tfdev.factory.register("CPU", { create_devices = function(_, options, p)
      calls = calls + 1
      assert.are.equal(2, options.intra_op_threads)
      return { tfdev.device.cpu { name = p .. "/device:CPU:0", threads = 2 } }
    end }, 150)
    local s <close> = tfdev.session { intra_op_threads = 2 }
    assert.are.equal(1, calls)
    assert.are.equal(2, s:devices()[1].num_threads)
  end)
end)

-- TensorFlow's feed rewriting (subgraph::FeedInputs): a fed tensor is replaced by its feed, and a node
-- whose every output is fed (a Placeholder) hands its control out-edges to the feed, so a fed
-- Placeholder that other nodes depend on by control (TF Hub graphs' "^input" on Consts) is not run.
describe("feeds of nodes with control out-edges", function()
  local function split_graph()
    return { node = {
      { name = "p", op = "Placeholder", attr = { dtype = "float32" } },
      { name = "axis", op = "Const", attr = { value = tfdev.tensor(0, "int32") } },
      { name = "sp", op = "Split", input = { "axis", "p" }, attr = { num_split = 2, T = "float32" } },
      { name = "c", op = "Const", input = { "^sp" }, attr = { value = tfdev.tensor(7, "float32") } },
    } }
  end

  it("a fed Placeholder's control dependents wait on the feed, not on the Placeholder", function()
    local s <close> = tfdev.session()
    s:create { node = {
      { name = "x", op = "Placeholder", attr = { dtype = "float32" } },
      { name = "c", op = "Const", input = { "^x" }, attr = { value = tfdev.tensor(2, "float32") } },
      { name = "y", op = "Mul", input = { "x", "c" } },
    } }
    assert.are.equal(6, s:run({ x = tfdev.tensor(3, "float32") }, "y"):item())
    assert.are.equal(2, s:run({ x = tfdev.tensor(3, "float32") }, "c"):item())
    -- not fed: the Placeholder still runs for its dependents, and says so
    h.raises("INVALID_ARGUMENT", "You must feed a value for placeholder tensor 'x'", s.run, s, {}, "c")
  end)

  it("a node with only some outputs fed still runs for its control dependents", function()
    local s <close> = tfdev.session()
    s:create(split_graph())
    local half = tfdev.tensor({ 1 }, "float32")
    h.raises("INVALID_ARGUMENT", "You must feed a value for placeholder tensor 'p'", s.run, s, { ["sp:0"] = half }, "c")
    -- every output fed: nothing of it runs, so p need not be fed
    assert.are.equal(7, s:run({ ["sp:0"] = half, ["sp:1"] = half }, "c"):item())
  end)

  it("through a callable and a partial run too", function()
    local s <close> = tfdev.session()
    s:create(split_graph())
    local half = tfdev.tensor({ 1 }, "float32")
    local f <close> = s:make_callable { feeds = { "sp:0", "sp:1" }, fetches = "c" }
    assert.are.equal(7, f(half, half):item())
    local pr <close> = s:prun_setup({ "sp:0", "sp:1" }, { "c" })
    assert.are.equal(7, s:prun(pr, { ["sp:0"] = half, ["sp:1"] = half }, "c"):item())
  end)
end)
