-- Placement through sessions, checked against TensorFlow's placer_test.cc: each case names the
-- TensorFlow test it follows. Colocation groups come from the `_class` attribute ("loc:@node");
-- FakeGPU is a device type a Lua factory makes (CPU-backed, priority 51 as in TensorFlow's test),
-- with kernels only for the Lua ops registered for it.
local tfdev = require "tfdev"
local h = require "spec.support.helpers"

local PREFIX = "/job:localhost/replica:0/task:0"
local CPU0, CPU1 = PREFIX .. "/device:CPU:0", PREFIX .. "/device:CPU:1"

local function node(name, op, inputs, extra)
  local n = { name = name, op = op, input = inputs }
  for k, v in pairs(extra or {}) do n[k] = v end
  return n
end

local function const(name, extra)
  local n = node(name, "Const", nil, extra)
  n.attr = n.attr or {}
  n.attr.value = tfdev.tensor({ 1, 2 }, "float32")
  return n
end

local function two_cpus(opts)
  opts = opts or {}
  opts.device_count = { CPU = 2 }
  return tfdev.session(opts)
end

local function fake_gpu_factory()
  tfdev.factory.register("FakeGPU", { create_devices = function(_, _, p)
    return { tfdev.device.cpu { name = p .. "/device:FakeGPU:0", device_type = "FakeGPU", threads = 1 } }
  end }, 51)
end

local registered = 0
-- A Lua op with a kernel on FakeGPU only (op names are process-wide: each call makes a new one).
local function gpu_only_op()
  registered = registered + 1
  local name = "PlacerGpuOnly" .. registered
  tfdev.op.register { name = name, inputs = 1, outputs = 1, device_types = { "FakeGPU" },
    kernel = function(x) return x end }
  return name
end

describe("the placer", function()
  after_each(function() tfdev.factory.reset() end)

  describe("colocation groups", function()
    it("TestColocationGroup: a node with _class loc:@in goes where in goes; others do not follow", function()
      local s <close> = two_cpus()
      s:create { node = {
        const("in", { device = "/device:CPU:1" }),
        node("colocated_1", "Neg", { "in" }, { attr = { _class = { "loc:@in" } } }),
        node("foo", "Neg", { "colocated_1" }),
      } }
      s:run({}, "foo")
      assert.are.equal(CPU1, s:placement("colocated_1"))
      assert.are.equal(CPU0, s:placement("foo"))
    end)

    it("TestColocationAndReferenceConnections: chains (a, b with a, c with b) and groups that meet", function()
      local s <close> = two_cpus()
      s:create { node = {
        const("a"),
        node("b", "Neg", { "a" }, { attr = { _class = { "loc:@a" } } }),
        node("c", "Neg", { "b" }, { attr = { _class = { "loc:@b" } }, device = "/device:CPU:1" }),
        const("x", { device = "/job:localhost" }),
        node("y", "Neg", { "x" }, { device = "/device:CPU:1" }),
        node("z", "Neg", { "y" }, { attr = { _class = { "loc:@x", "loc:@y" } } }),
        -- a cycle of colocation is just one group
        node("p", "Neg", { "a" }, { attr = { _class = { "loc:@q" } } }),
        node("q", "Neg", { "p" }, { attr = { _class = { "loc:@p" } }, device = "/device:CPU:1" }),
      } }
      s:run({}, { "c", "z", "q" })
      for _, n in ipairs { "a", "b", "c", "x", "y", "z", "p", "q" } do assert.are.equal(CPU1, s:placement(n), n) end
    end)

    it("RequestedDeviceOnResourceGeneratorIsTreatedAsAssigned: incompatible requests in a group, " ..
      "unless soft placement", function()
      local g = { node = {
        const("a", { device = "/device:CPU:0" }),
        node("b", "Neg", { "a" }, { device = "/device:CPU:1", attr = { _class = { "loc:@a" } } }),
      } }
      local s <close> = two_cpus()
      local err = h.raises("INVALID_ARGUMENT", "Cannot colocate nodes {{colocation_node b}} and " ..
        "{{colocation_node a}}: Cannot merge devices with incompatible ids: '/device:CPU:1' and '/device:CPU:0'",
        s.create, s, g)
      assert.truthy(err.message:find("\n\t [[{{node b}}]]", 1, true), err.message)
      local soft <close> = two_cpus { allow_soft_placement = true }
      soft:create(g)
      soft:run({}, "b")
      assert.are.equal(soft:placement("a"), soft:placement("b"))
    end)

    it("TestInvalidMultipleColocationGroups: a group no device type can run names its members", function()
      fake_gpu_factory()
      local op = gpu_only_op()
      local g = { node = {
        const("in"),
        node("gpu", op, { "in" }),
        node("cpu", "Neg", { "gpu" }, { attr = { _class = { "loc:@gpu" } } }),
      } }
      local s <close> = tfdev.session()
      local err = h.raises("INVALID_ARGUMENT", "Cannot colocate nodes {{colocation_node cpu}} and " ..
        "{{colocation_node gpu}} because no device type supports both of those nodes and the other nodes " ..
        "colocated with them.", s.create, s, g)
      assert.truthy(err.message:find("Colocation Debug Info:", 1, true), err.message)
      assert.truthy(err.message:find(op .. ": FakeGPU \n", 1, true), err.message)
      assert.truthy(err.message:find("Neg: CPU \n", 1, true), err.message)
      assert.truthy(err.message:find("  gpu (" .. op .. ") \n", 1, true), err.message)
      assert.truthy(err.message:find("  cpu (Neg) \n", 1, true), err.message)
      -- with soft placement the node stays out of the group
      local soft <close> = tfdev.session { allow_soft_placement = true }
      soft:create(g)
      soft:run({}, "cpu")
      assert.matches("FakeGPU:0$", soft:placement("gpu"))
      assert.matches("CPU:0$", soft:placement("cpu"))
    end)

    it("TestHeterogeneousDeviceSetFailure: a member whose group asks for what no device is", function()
      local s <close> = two_cpus()
      h.raises("INVALID_ARGUMENT", "Cannot assign a device for operation b: Could not satisfy explicit device " ..
        "specification '/job:localhost' because the node {{colocation_node b}} was colocated with a group of nodes " ..
        "that required incompatible device '/job:localhost/device:CPU:3'. All available devices [" .. CPU0 .. ", " ..
        CPU1 .. "]. \nColocation Debug Info:", s.create, s, { node = {
          const("a", { device = "/device:CPU:3" }),
          node("b", "Neg", { "a" }, { device = "/job:localhost", attr = { _class = { "loc:@a" } } }),
        } })
    end)

    it("refuse a _class naming a missing node (GraphConstructor's check) at create, not in pruned runs", function()
      local g = { node = {
        const("a"),
        node("b", "Neg", { "a" }, { attr = { _class = { "loc:@nope" } } }),
      } }
      local s <close> = tfdev.session()
      h.raises("INVALID_ARGUMENT", "Node 'b' expects to be colocated with unknown node 'nope'", s.create, s, g)
      local pruned <close> = tfdev.session { place_pruned_graph = true }
      pruned:create(g)
      assert.are.same({ -1, -2 }, pruned:run({}, "b"):totable())
    end)

    it("take malformed _class values without a crash: a single string, numbers, other prefixes", function()
      local s <close> = two_cpus()
      -- "loc:@a:0" names a node that is not there
      h.raises("INVALID_ARGUMENT", "Node 'd' expects to be colocated with unknown node 'a:0'", s.create, s, { node = {
        const("a", { device = "/device:CPU:1" }),
        node("d", "Neg", { "a" }, { attr = { _class = { "loc:@a:0" } } }),
        node("e", "Neg", { "a" }, { attr = { _class = {} } }),
      } })
      -- none of these is a group with a
      local ok <close> = two_cpus()
      ok:create { node = {
        const("a", { device = "/device:CPU:1" }),
        node("b", "Neg", { "a" }, { attr = { _class = "loc:@a" } }),
        node("c", "Neg", { "a" }, { attr = { _class = { 1, 2 } } }),
        node("d", "Neg", { "a" }, { attr = { _class = { "a", "loc:", "@a", "", "LOC:@a" } } }),
      } }
      ok:run({}, { "b", "c", "d" })
      for _, n in ipairs { "b", "c", "d" } do assert.are.equal(CPU0, ok:placement(n), n) end
    end)
  end)

  describe("heuristics", function()
    it("TestMetadataColocatedWithInput: Shape stays with its input (tfdev has no Size or Rank op)", function()
      local s <close> = two_cpus()
      s:create { node = {
        const("c"),
        node("x", "Neg", { "c" }, { device = "/device:CPU:1" }),
        node("shape", "Shape", { "x" }),
        node("neg", "Neg", { "x" }),
      } }
      s:run({}, { "shape", "neg" })
      assert.are.equal(CPU1, s:placement("shape"))
      assert.are.equal(CPU0, s:placement("neg"))
    end)

    it("TestHeuristicGeneratorFollowsSingleConsumer and TestGeneratorNodeDoesntFollowNonColocatedConsumers",
      function()
        local s <close> = two_cpus()
        s:create { node = {
          const("one"),
          node("n1", "Neg", { "one" }, { device = "/device:CPU:1" }),
          const("both"),
          node("n2", "Neg", { "both" }, { device = "/device:CPU:1" }),
          node("n3", "Square", { "both" }, { device = "/device:CPU:1" }),
          const("split"),
          node("n4", "Neg", { "split" }, { device = "/device:CPU:1" }),
          node("n5", "Neg", { "split" }, { device = "/device:CPU:0" }),
        } }
        s:run({}, { "n1", "n2", "n3", "n4", "n5" })
        assert.are.equal(CPU1, s:placement("one"))
        assert.are.equal(CPU1, s:placement("both"))
        assert.are.equal(CPU0, s:placement("split")) -- consumers disagree: the default device
      end)
  end)

  describe("the whole graph is placed, not each run's part of it", function()
    -- DirectSession places the full graph at Create (GraphExecutionState::InitBaseGraph) and each
    -- run prunes that placed graph, so a node's colocation partner or consumers count even when the
    -- run does not need them; place_pruned_graph = true places only what each run needs.
    local function graph()
      return { node = {
        const("a", { device = "/device:CPU:1" }),
        const("b", { attr = { _class = { "loc:@a" } } }),
        const("c"),
        node("d", "Neg", { "c" }, { device = "/device:CPU:1" }),
      } }
    end

    it("DirectSessionTest.PlacePrunedGraph: a run fetching only b or c keeps the whole graph's devices", function()
      local s <close> = two_cpus()
      s:create(graph())
      s:run({}, { "b", "c" })
      assert.are.equal(CPU1, s:placement("b")) -- with a, which this run prunes away
      assert.are.equal(CPU1, s:placement("c")) -- follows its consumer d, also pruned away
    end)

    it("place_pruned_graph = true places each run's graph alone", function()
      local s <close> = two_cpus { place_pruned_graph = true }
      s:create(graph())
      s:run({}, { "b", "c" })
      assert.are.equal(CPU0, s:placement("b"))
      assert.are.equal(CPU0, s:placement("c"))
    end)

    it("extend places the grown graph again: a new consumer counts for runs built after it", function()
      local s <close> = two_cpus()
      s:create { node = { const("c") } }
      s:run({}, "c")
      assert.are.equal(CPU0, s:placement("c"))
      s:extend { node = { node("d", "Neg", { "c" }, { device = "/device:CPU:1" }) } }
      s:run({}, "d") -- a new signature: the cached executors of earlier ones stay, as TensorFlow's do
      assert.are.equal(CPU1, s:placement("c")) -- its new consumer pulls it over
    end)
  end)

  describe("resource edges", function()
    it("TestReferenceConnectionIgnoreInfeasible: a resource user's conflicting request gives way", function()
      local g = tfdev.graph()
      local v = g:variable({ 1, 2 }, { name = "v", dtype = "float32", device = "/device:CPU:1" })
      local def = g:graph_def()
      table.insert(def.node, { name = "r", op = "ReadVariableOp", input = { "v" }, device = "/device:CPU:0",
        attr = { dtype = "float32" } })
      local s <close> = two_cpus()
      s:create(def)
      s:run({}, nil, { v.initializer })
      assert.are.same({ 1, 2 }, s:run({}, "r"):totable())
      assert.are.equal(CPU1, s:placement("r"))
    end)
  end)

  describe("requests", function()
    it("TestUnknownDevice: soft placement never invents a job", function()
      local g = { node = { const("in", { device = "/job:foo" }) } }
      for _, soft in ipairs { false, true } do
        local s <close> = tfdev.session { allow_soft_placement = soft }
        h.raises("INVALID_ARGUMENT", "Cannot assign a device for operation in: {{node in}} was explicitly assigned " ..
          "to /job:foo but available devices are [ " .. CPU0 .. " ]. Make sure the device specification refers to " ..
          "a valid device.\n\t [[in]]", s.create, s, g)
      end
    end)

    it("TestMalformedDeviceSpecification", function()
      local s <close> = tfdev.session()
      h.raises("INVALID_ARGUMENT", "Malformed device specification '/foo:bar' in node: {name:'in'", s.create, s,
        { node = { const("in", { device = "/foo:bar" }) } })
    end)

    it("TestNonExistentDevice: a CPU that is not there, listing the devices there are", function()
      local s <close> = two_cpus()
      h.raises("INVALID_ARGUMENT", "Cannot assign a device for operation x: {{node x}} was explicitly assigned to " ..
        "/device:CPU:2 but available devices are [ " .. CPU0 .. ", " .. CPU1 .. " ].", s.create, s,
        { node = { const("c"), node("x", "Neg", { "c" }, { device = "/device:CPU:2" }) } })
    end)

    it("TestUnsupportedDeviceNoAllowSoftPlacement: the device type named, FakeGPU from a Lua factory", function()
      fake_gpu_factory()
      local g = { node = { const("c"), node("x", "Neg", { "c" }, { device = "/device:FakeGPU:0" }) } }
      local s <close> = tfdev.session()
      local err = h.raises("INVALID_ARGUMENT", "Cannot assign a device for operation x: Could not satisfy explicit " ..
        "device specification '/device:FakeGPU:0' because no supported kernel for FakeGPU devices is available.",
        s.create, s, g)
      assert.truthy(err.message:find("\nOp: Neg\n", 1, true), err.message)
      assert.truthy(err.message:find("Registered kernels:\n  device='CPU'\n", 1, true), err.message)
      -- TestUnsupportedDeviceAllowSoftPlacement
      local soft <close> = tfdev.session { allow_soft_placement = true }
      soft:create(g)
      assert.are.same({ -1, -2 }, soft:run({}, "x"):totable())
      assert.are.equal(CPU0, soft:placement("x"))
    end)

    it("TestNoConstraints: FakeGPU (51) outranks CPU (50) where it has a kernel", function()
      fake_gpu_factory()
      local op = gpu_only_op()
      local s <close> = tfdev.session()
      s:create { node = { const("c"), node("g", op, { "c" }), node("y", "Neg", { "g" }) } }
      assert.are.same({ -1, -2 }, s:run({}, "y"):totable())
      assert.matches("FakeGPU:0$", s:placement("g"))
      assert.matches("CPU:0$", s:placement("y"))
    end)
  end)
end)
