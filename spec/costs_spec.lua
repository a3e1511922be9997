-- Cost models and memory (output_info, build_cost_model_after, tracking-allocator figures in step stats),
-- callables that take run options, tensor connections, and output_partition_graphs with the trace level:
-- TensorFlow's DirectSessionWithTrackingAllocTest and DirectSessionMinusAXTest behaviours (issue 12).
local tfdev = require "tfdev"
local h = require "spec.support.helpers"

local CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"
local CPU1 = "/job:localhost/replica:0/task:0/device:CPU:1"

-- TensorFlow's MinusAX graph: y = a * x on CPU:0, y_neg = -y on CPU:1, z = identity(y_neg).
local function minus_ax()
  local g = tfdev.graph()
  local a = g:const(tfdev.tensor({ { 3, 2 }, { -1, 0 } }, "float32"), { name = "a", device = "/device:CPU:0" })
  local x = g:const(tfdev.tensor({ { 1 }, { 1 } }, "float32"), { name = "x", device = "/device:CPU:1" })
  local y = g:matmul(a, x, { name = "y", device = "/device:CPU:0" })
  local yn = g:op("Neg", { y }, { name = "y_neg", device = "/device:CPU:1" })
  g:op("Identity", { yn }, { name = "z", device = "/device:CPU:1" })
  return g
end

local function two_cpus(opts)
  opts = opts or {}
  opts.device_count = { CPU = 2 }
  opts.optimize_graph = false -- keep a, x and y as nodes, as TensorFlow's tests turn constant folding off
  local s = tfdev.session(opts)
  s:create(minus_ax())
  return s
end

local function by_node(list, key)
  local t = {}
  for _, e in ipairs(list) do t[e[key or "node"]] = e end
  return t
end

describe("cost models carry each output's shape, dtype and size", function()
  it("per output in export_cost_models (DirectSessionWithTrackingAllocTest.CostModelTest)", function()
    local s <close> = two_cpus { build_cost_model = true }
    s:run({}, "y", { "y_neg" })
    local models = s:export_cost_models()
    assert.truthy(models[CPU0] and models[CPU1]) -- one model per device
    for _, name in ipairs { "y", "y_neg" } do
      local e = by_node(models[CPU0])[name] or by_node(models[CPU1])[name]
      assert.are.equal(1, #e.output_info)
      local oi = e.output_info[1]
      assert.is_true(oi.size >= 8)
      assert.are.same({ 2, 1 }, oi.shape)
      assert.are.equal("float32", oi.dtype)
      assert.are.equal(-1, oi.alias_input_slot)
      assert.is_true(e.max_compute_micros >= 0)
    end
  end)

  it("in the run's cost graph, with aliases of inputs (DirectSessionWithTrackingAllocTest.CostGraph)", function()
    local s <close> = two_cpus { build_cost_model = true }
    local _, meta = s:run({}, { "y", "z" }, { "y_neg" }, { cost_graph = true })
    local nodes = by_node(meta.cost_graph.node, "name")
    assert.is_true(#meta.cost_graph.node >= 2)
    for _, name in ipairs { "y", "y_neg" } do
      local oi = nodes[name].output_info
      assert.are.equal(1, #oi)
      assert.are.equal(8, oi[1].size)
      assert.are.same({ 2, 1 }, oi[1].shape)
      assert.are.equal("float32", oi[1].dtype)
    end
    assert.are.equal(0, nodes.z.output_info[1].alias_input_slot) -- Identity hands its input on
  end)

  it("skips a signature's first build_cost_model_after runs (DirectSessionWithTrackingAllocTest.CostModelWarmup)", function()
    local s <close> = tfdev.session { build_cost_model = true, build_cost_model_after = 10 }
    local g = tfdev.graph()
    g:const(tfdev.tensor(1, "float32"), { name = "x" })
    s:create(g)
    for _ = 1, 25 do s:run({}, "x:0") end
    local e = by_node(s:export_cost_models()[CPU0]).x
    assert.are.equal(15, e.runs)
    assert.are.same({}, e.output_info[1].shape)
  end)

  it("applies build_cost_model_after to traced runs too, and refuses a bad value", function()
    local s <close> = tfdev.session { build_cost_model_after = 2 }
    local g = tfdev.graph()
    g:const(tfdev.tensor(1, "float32"), { name = "x" })
    s:create(g)
    for _ = 1, 3 do s:run({}, "x", nil, { trace = true }) end
    assert.are.equal(1, by_node(s:export_cost_models()[CPU0]).x.runs)
    h.raises("INVALID_ARGUMENT", "build_cost_model_after must be an integer in [0,", tfdev.session,
      { build_cost_model_after = -1 })
    h.raises("INVALID_ARGUMENT", "option build_cost_model_after must be a number", tfdev.session,
      { build_cost_model_after = "ten" })
  end)
end)

describe("step stats carry the tracking allocator's figures", function()
  it("total, peak and live bytes per node (DirectSessionWithTrackingAllocTest.TrackMemoryAllocation)", function()
    local s <close> = two_cpus()
    local _, meta = s:run({}, "y", nil, { trace_level = "SOFTWARE_TRACE" })
    local found
    for _, dev in ipairs(meta.step_stats.dev_stats) do
      for _, n in ipairs(dev.node_stats) do
        if n.node_name == "y" then
          found = n.memory[1]
          assert.are.equal(CPU0, found.allocator_name)
          assert.are.equal(8, found.total_bytes)
          assert.are.equal(8, found.live_bytes)
          assert.are.equal(8, found.peak_bytes)
          assert.is_nil(found.allocation_records) -- not asked for
        end
      end
    end
    assert.truthy(found)
  end)

  it("allocation records with trace_allocations (or FULL_TRACE), frees included", function()
    local s <close> = tfdev.session { optimize_graph = false }
    local g = tfdev.graph()
    local x = g:placeholder("float32", { 2 }, { name = "x" })
    local n = g:op("Neg", { x }, { name = "n" })
    g:op("Neg", { g:op("Neg", { n }, { name = "m" }) }, { name = "out" })
    s:create(g)
    for _, ro in ipairs { { trace_allocations = true }, { trace_level = "FULL_TRACE" } } do
      local _, meta = s:run({ x = { 1, 2 } }, "out", nil, ro)
      local stats = by_node(meta.step_stats.dev_stats[1].node_stats, "node_name")
      local rec = stats.n.memory[1].allocation_records
      assert.truthy(rec, "records for n")
      assert.are.equal(8, rec[1].alloc_bytes)
      assert.is_true(rec[1].alloc_micros > 0)
      -- n's output is freed once m has read it (or handed on to m): either way n's live bytes count it
      assert.are.equal(8, stats.n.memory[1].total_bytes)
    end
    h.raises("INVALID_ARGUMENT", "run option trace_level must be NO_TRACE, SOFTWARE_TRACE, HARDWARE_TRACE or FULL_TRACE",
      s.run, s, { x = { 1, 2 } }, "out", nil, { trace_level = "LOTS" })
    local _, meta = s:run({ x = { 1, 2 } }, "out", nil, { trace_level = "NO_TRACE", cost_graph = true })
    assert.is_nil(meta.step_stats.dev_stats[1])
  end)
end)

describe("output_partition_graphs with the trace level", function()
  it("partition graphs only when asked (DirectSessionMinusAXTest.RunSimpleNetworkWithOpts)", function()
    local s <close> = two_cpus()
    local _, traced = s:run({}, "y", { "y_neg" }, { trace_level = "SOFTWARE_TRACE" })
    assert.are.equal(2, #traced.step_stats.dev_stats)
    assert.is_nil(traced.partition_graphs)
    local _, parts = s:run({}, "y", { "y_neg" }, { output_partition_graphs = true })
    assert.are.equal(2, #parts.partition_graphs)
    assert.is_nil(parts.step_stats.dev_stats[1])
    local _, both = s:run({}, "y", { "y_neg" }, { trace = true, output_partition_graphs = true })
    assert.are.equal(2, #both.partition_graphs)
    assert.are.equal(2, #both.step_stats.dev_stats)
    local _, off = s:run({}, "y", { "y_neg" }, { trace = true, output_partition_graphs = false })
    assert.is_nil(off.partition_graphs)
  end)
end)

describe("callables that take run options", function()
  it("from make_callable's run_options (DirectSessionMinusAXTest.RunSimpleNetworkWithOpts_Callable)", function()
    local s <close> = two_cpus()
    local f <close> = s:make_callable { fetches = "y", targets = { "y_neg" }, run_options = { trace_level = "SOFTWARE_TRACE" } }
    local y, meta = f()
    assert.are.same({ { 5 }, { -1 } }, y:totable())
    assert.are.equal(2, #meta.step_stats.dev_stats)
    assert.is_nil(meta.partition_graphs)
  end)

  it("per call with run_with: trace, partition graphs, timeout_ms", function()
    local s <close> = two_cpus()
    local f <close> = s:make_callable { fetches = { "y" }, targets = { "y_neg" } }
    local plain = f()
    assert.are.same({ { 5 }, { -1 } }, plain[1]:totable())
    assert.are.equal(1, select("#", f()))
    local outs, meta = f:run_with({ trace = true, output_partition_graphs = true })
    assert.are.same({ { 5 }, { -1 } }, outs[1]:totable())
    assert.are.equal(2, #meta.step_stats.dev_stats)
    assert.are.equal(2, #meta.partition_graphs)
    local outs2, none = f:run_with({ timeout_ms = 10000 })
    assert.are.same({ { 5 }, { -1 } }, outs2[1]:totable())
    assert.is_nil(none)
    h.raises("INVALID_ARGUMENT", "unknown run option 'bogus'", f.run_with, f, { bogus = 1 })
  end)

  it("a blocked callable run ends at its run option's timeout", function()
    local s <close> = tfdev.session()
    local g = tfdev.graph()
    local q = g:fifo_queue({ "float32" }, { name = "q", capacity = 1 })
    g:op("Identity", { g:dequeue(q, { name = "dequeue" }) }, { name = "value" })
    s:create(g)
    local f <close> = s:make_callable { fetches = "value" }
    h.raises("DEADLINE_EXCEEDED", "Timed out waiting for the step (20 ms)", f.run_with, f, { timeout_ms = 20 })
    local g2 <close> = s:make_callable { fetches = "value", run_options = { timeout_ms = 20 } }
    h.raises("DEADLINE_EXCEEDED", "Timed out waiting for the step (20 ms)", g2)
  end)
end)

describe("tensor connections in callables (DirectSessionMinusAXTest.TestTensorConnection)", function()
  it("wires a's output to y's uses", function()
    local s <close> = two_cpus()
    local f <close> = s:make_callable { fetches = "y_neg:0", tensor_connection = { { from_tensor = "a:0", to_tensor = "y:0" } } }
    assert.are.same({ { -3, -2 }, { 1, -0.0 } }, f():totable())
    local both <close> = s:make_callable {
      fetches = { "a:0", "y_neg:0" }, tensor_connection = { { from_tensor = "a:0", to_tensor = "y:0" } } }
    local outs = both()
    assert.are.same({ { 3, 2 }, { -1, 0 } }, outs[1]:totable())
    assert.are.same({ { -3, -2 }, { 1, -0.0 } }, outs[2]:totable())
    -- a plain callable of the same fetches is another signature, unconnected
    local plain <close> = s:make_callable { fetches = "y_neg:0" }
    assert.are.same({ { -5 }, { 1 } }, plain():totable())
  end)

  it("refuses bad connections with TensorFlow's codes and texts", function()
    local s <close> = two_cpus()
    local function make(conns, fetches, feeds)
      return s:make_callable { feeds = feeds, fetches = fetches or "y:0", tensor_connection = conns }
    end
    h.raises("INVALID_ARGUMENT", "would create a cycle", make, { { from_tensor = "y:0", to_tensor = "a:0" } })
    h.raises("INVALID_ARGUMENT", "unknown node", make, { { from_tensor = "unknown_node:0", to_tensor = "y:0" } })
    h.raises("INVALID_ARGUMENT", "unknown edge", make, { { from_tensor = "a:17", to_tensor = "y:0" } })
    h.raises("NOT_FOUND", "unable to find feed output", make, { { from_tensor = "a:0", to_tensor = "unknown_node:0" } })
    h.raises("INVALID_ARGUMENT", "fed more than once", make,
      { { from_tensor = "a:0", to_tensor = "y_neg:0" }, { from_tensor = "x:0", to_tensor = "y_neg:0" } }, "z:0")
    h.raises("INVALID_ARGUMENT", 'Endpoint "y:0" fed more than once', make,
      { { from_tensor = "a:0", to_tensor = "y:0" } }, "y_neg:0", { "y:0" })
    h.raises("INVALID_ARGUMENT", "tensor_connection[1] needs string from_tensor and to_tensor", make, { { from = "a" } })
    h.raises("INVALID_ARGUMENT", "tensor_connection must be a list", make, "a:0")
  end)
end)
