-- State across runs: queues, timeouts, resets and containers.
local tfdev = require "tfdev"
local h = require "spec.support.helpers"

local function queue_graph(capacity)
  local g = tfdev.graph()
  local q = g:fifo_queue({ "float32", "int32" }, { name = "q", capacity = capacity })
  local x = g:placeholder("float32", {}, { name = "x" })
  local n = g:placeholder("int32", {}, { name = "n" })
  g:enqueue(q, { x, n }, { name = "enqueue" })
  local a, b = g:dequeue(q, { name = "dequeue" })
  g:op("Identity", { a }, { name = "value" })
  g:op("Identity", { b }, { name = "count" })
  g:queue_size(q, { name = "size" })
  g:queue_close(q, { name = "close" })
  g:queue_close(q, { name = "close_all", cancel_pending_enqueues = true })
  return g
end

describe("FIFOQueue", function()
  it("holds tuples in order", function()
    local s <close> = tfdev.session()
    s:create(queue_graph())
    s:run({ x = 1.5, n = 1 }, nil, { "enqueue" })
    s:run({ x = 2.5, n = 2 }, nil, { "enqueue" })
    assert.are.equal(2, s:run({}, "size"):item())
    local out = s:run({}, { "dequeue:0", "dequeue:1" })
    assert.are.same({ 1.5, 1 }, { out[1]:item(), out[2]:item() })
    assert.are.equal(2.5, s:run({}, "value"):item())
    assert.are.equal(0, s:run({}, "size"):item())
  end)

  it("times out a dequeue on an empty queue, and the session keeps working", function()
    local s <close> = tfdev.session()
    s:create(queue_graph())
    local t0 = tfdev.clock()
    h.raises("DEADLINE_EXCEEDED", "Timed out waiting for the step (50 ms)", s.run, s, {}, "value", nil, { timeout_ms = 50 })
    assert.is_true(tfdev.clock() - t0 < 5)
    s:run({ x = 7, n = 7 }, nil, { "enqueue" })
    assert.are.equal(7, s:run({}, "value"):item())
  end)

  it("honours operation_timeout_ms from the session options", function()
    local s <close> = tfdev.session { operation_timeout_ms = 30 }
    s:create(queue_graph())
    h.raises("DEADLINE_EXCEEDED", "Timed out", s.run, s, {}, "count")
    assert.are.equal(0, s:run({}, "size"):item())
  end)

  it("wakes a blocked dequeue when another partition enqueues", function()
    -- The dequeue waits (its thread goes back to the pool) until the enqueue in the same step lands.
    local g = tfdev.graph()
    local q = g:fifo_queue({ "float32" }, { name = "q" })
    local x = g:placeholder("float32", {}, { name = "x" })
    local v = g:dequeue(q, { name = "dq", device = "/device:CPU:0" })
    g:op("Identity", { v }, { name = "got" })
    g:op("QueueEnqueueV2", { q, g:op("Square", { x }, { device = "/device:CPU:1" }) }, { name = "eq" })
    local s <close> = tfdev.session { device_count = { CPU = 2 } }
    s:create(g)
    assert.are.equal(9, s:run({ x = 3 }, "got", { "eq" }):item())
  end)

  it("refuses dequeues once closed and empty, and enqueues once closed", function()
    local s <close> = tfdev.session()
    s:create(queue_graph())
    s:run({ x = 1, n = 1 }, nil, { "enqueue" })
    s:run({}, nil, { "close" })
    assert.are.equal(1, s:run({}, "value"):item()) -- what is left still comes out
    h.raises("OUT_OF_RANGE", "FIFOQueue 'q' is closed and has insufficient elements", s.run, s, {}, "value")
    h.raises("CANCELLED", "FIFOQueue 'q' is closed.", s.run, s, { x = 2, n = 2 }, nil, { "enqueue" })
  end)

  it("blocks enqueues on a full bounded queue until there is room", function()
    local s <close> = tfdev.session()
    s:create(queue_graph(1))
    s:run({ x = 1, n = 1 }, nil, { "enqueue" })
    h.raises("DEADLINE_EXCEEDED", "Timed out", s.run, s, { x = 2, n = 2 }, nil, { "enqueue" }, { timeout_ms = 30 })
    assert.are.equal(1, s:run({}, "size"):item())
    assert.are.equal(1, s:run({}, "value"):item())
    s:run({ x = 3, n = 3 }, nil, { "enqueue" })
    assert.are.equal(3, s:run({}, "value"):item())
  end)

  it("checks what is enqueued", function()
    local s <close> = tfdev.session()
    s:create(queue_graph())
    h.raises("INVALID_ARGUMENT", "feed 'n:0' expects int32, got a float32 tensor", s.run, s,
      { x = 1, n = tfdev.tensor(1.5) }, nil, { "enqueue" })
    h.raises("INVALID_ARGUMENT", "component_types must list 1 to 4 dtypes", function()
      local s2 <close> = tfdev.session()
      s2:create { node = { { name = "bad", op = "FIFOQueueV2", attr = { component_types = {} } } } }
    end)
  end)
end)

describe("session:reset", function()
  it("clears the default container: variables need their initializer again", function()
    local g = tfdev.graph()
    local v = g:variable({ 1, 2 }, { name = "v", dtype = "float32" })
    local inc = g:assign_add(v, g:const({ 10, 10 }, { dtype = "float32" }), { name = "inc" })
    local s <close> = tfdev.session()
    s:create(g)
    s:run({}, nil, { v.initializer })
    s:run({}, nil, { inc })
    assert.are.same({ 11, 12 }, s:run({}, "v/Read"):totable())
    s:reset()
    h.raises("FAILED_PRECONDITION", "Error while reading resource variable v", s.run, s, {}, "v/Read")
    s:run({}, nil, { v.initializer })
    assert.are.same({ 1, 2 }, s:run({}, "v/Read"):totable())
  end)

  it("clears only the named containers", function()
    local g = tfdev.graph()
    local a = g:variable({ 1 }, { name = "a", dtype = "int32", container = "train" })
    local b = g:variable({ 2 }, { name = "b", dtype = "int32" })
    local s <close> = tfdev.session()
    s:create(g)
    s:run({}, nil, { a.initializer, b.initializer })
    assert.are.same({ "localhost", "train" }, s:devices()[1]:resource_manager():containers())
    s:reset { "train" }
    h.raises("FAILED_PRECONDITION", "from Container: train", s.run, s, {}, "a/Read")
    assert.are.same({ 2 }, s:run({}, "b/Read"):totable())
    s:device_mgr():clear_containers {} -- the default one, through the device manager
    h.raises("FAILED_PRECONDITION", "from Container: localhost", s.run, s, {}, "b/Read")
  end)

  it("empties queues too: the next run makes a fresh one", function()
    local s <close> = tfdev.session()
    s:create(queue_graph())
    s:run({ x = 1, n = 1 }, nil, { "enqueue" })
    s:run({ x = 2, n = 2 }, nil, { "enqueue" })
    s:reset()
    assert.are.same({}, s:devices()[1]:resource_manager():containers())
    assert.are.equal(0, s:run({}, "size"):item())
  end)
end)

describe("partial runs", function()
  local function graph()
    local g = tfdev.graph()
    local a = g:placeholder("float32", {}, { name = "a" })
    local b = g:placeholder("float32", {}, { name = "b" })
    local c = g:op("Mul", { a, b }, { name = "c" })
    g:op("Add", { c, g:const(1, { dtype = "float32" }) }, { name = "d" })
    g:op("Neg", { a }, { name = "neg_a" })
    return g
  end

  local s
  before_each(function() s = tfdev.session(); s:create(graph()) end)
  after_each(function() s:close() end)

  it("feeds some inputs and fetches some outputs per call", function()
    local pr = s:prun_setup({ "a", "b" }, { "neg_a", "c", "d" })
    assert.are.equal(-2, s:prun(pr, { a = 2 }, "neg_a"):item()) -- needs only a
    local out = s:prun(pr, { b = 3 }, { "c" })                    -- the second call feeds the rest
    assert.are.equal(6, out[1]:item())
    assert.are.equal(7, s:prun(pr, {}, "d"):item())               -- and the final value
  end)

  it("refuses a fetch whose inputs are not all fed, without disturbing the run", function()
    local pr = s:prun_setup({ "a", "b" }, { "c" })
    h.raises("INVALID_ARGUMENT", "Fetch c:0 can't be computed from the feeds that have been fed so far: feed b:0 is missing",
      s.prun, s, pr, { a = 2 }, "c")
    assert.are.equal(10, s:prun(pr, { a = 2, b = 5 }, "c"):item()) -- a was not consumed by the refused call
  end)

  it("refuses double feeds, double fetches and names not given to setup", function()
    local hd = s:prun_setup({ "a", "b" }, { "neg_a", "c" })
    s:prun(hd, { a = 1 }, "neg_a")
    h.raises("INVALID_ARGUMENT", "The feed a:0 has already been fed.", s.prun, s, hd, { a = 1 })
    h.raises("INVALID_ARGUMENT", "The fetch neg_a:0 has already been fetched.", s.prun, s, hd, { b = 1 }, "neg_a")
    h.raises("INVALID_ARGUMENT", "The feed d:0 was not specified in partial_run_setup.", s.prun, s, hd, { d = 1 })
    h.raises("INVALID_ARGUMENT", "The fetch d:0 was not specified in partial_run_setup.", s.prun, s, hd, { b = 2 }, "d")
    assert.are.equal(2, s:prun(hd, { b = 2 }, "c"):item())
  end)

  it("drops the run once every output is fetched, or when closed", function()
    local h1 = s:prun_setup({ "a" }, { "neg_a" })
    s:prun(h1, { a = 4 }, "neg_a")
    h.raises("INVALID_ARGUMENT", "No such partial run handle", s.prun, s, h1, {}, nil)
    local h2 = s:prun_setup({ "a", "b" }, { "c" })
    s:prun(h2, { a = 1 })
    h2:close()
    h.raises("INVALID_ARGUMENT", "finished or closed", s.prun, s, h2, { b = 1 }, "c")
    h2:close() -- twice is harmless
  end)

  it("keeps several partial runs on one session independent", function()
    local x = s:prun_setup({ "a", "b" }, { "c" })
    local y = s:prun_setup({ "a", "b" }, { "c" })
    s:prun(x, { a = 2 })
    s:prun(y, { a = 10 })
    assert.are.equal(20, s:prun(y, { b = 2 }, "c"):item())
    assert.are.equal(6, s:prun(x, { b = 3 }, "c"):item())
  end)

  it("refuses bad setups", function()
    h.raises("NOT_FOUND", "feed 'ghost:0'", s.prun_setup, s, { "ghost" }, { "c" })
    h.raises("INVALID_ARGUMENT", "Must specify at least one target", s.prun_setup, s, { "a" }, {})
  end)
end)

describe("session tensors", function()
  it("keeps a value between runs by handle, until deleted", function()
    local g = tfdev.graph()
    local x = g:placeholder("float32", { 2 }, { name = "x" })
    g:get_session_handle(g:op("Square", { x }), { name = "keep" })
    local hp = g:placeholder("int64", {}, { name = "h" })
    local kept = g:get_session_tensor(hp, "float32", { name = "kept" })
    g:op("Add", { kept, g:const({ 1, 1 }, { dtype = "float32" }) }, { name = "plus_one" })
    g:delete_session_tensor(hp, { name = "delete" })
    local s <close> = tfdev.session()
    s:create(g)
    local handle = s:run({ x = { 3, 4 } }, "keep")
    assert.are.equal("int64", handle.dtype)
    assert.are.same({ 10, 17 }, s:run({ h = handle }, "plus_one"):totable()) -- later run, no x fed
    assert.are.same({ 9, 16 }, s:run({ h = handle:item() }, "kept"):totable())
    s:run({ h = handle }, nil, { "delete" })
    h.raises("NOT_FOUND", "is not in the session store", s.run, s, { h = handle }, "kept")
    h.raises("NOT_FOUND", "is not in the session store", s.run, s, { h = handle }, nil, { "delete" })
  end)

  it("are refused when run eagerly", function()
    local d = tfdev.factory.add_devices()[1]
    h.raises("FAILED_PRECONDITION", "session tensors need a session", d.compute, d, "GetSessionHandle", { { 1 } })
  end)
end)

describe("cost models and step stats memory", function()
  local function mlp()
    local g = tfdev.graph()
    local x = g:placeholder("float32", { -1, 8 }, { name = "x" })
    local w = g:const(tfdev.tensor { dtype = "float32", shape = { 8, 4 } }, { name = "w" })
    g:relu(g:matmul(x, w, { name = "mm" }), { name = "y" })
    return g
  end
  local X = { { 1, 2, 3, 4, 5, 6, 7, 8 } }

  it("averages per-node compute time and output sizes over traced runs", function()
    local s <close> = tfdev.session()
    s:create(mlp())
    s:run({ x = X }, "y") -- untraced: not in the model
    for _ = 1, 3 do s:run({ x = X }, "y", nil, { trace = true }) end
    local models = s:export_cost_models()
    local cpu = models["/job:localhost/replica:0/task:0/device:CPU:0"]
    assert.truthy(cpu)
    local mm
    for _, e in ipairs(cpu) do if e.node == "mm" then mm = e end end
    assert.are.equal("MatMul", mm.op)
    assert.are.equal(3, mm.runs)
    assert.are.equal(16, mm.output_bytes)
    assert.is_true(mm.avg_compute_micros >= 0 and mm.max_compute_micros >= mm.avg_compute_micros - 1e-9)
  end)

  it("skips the first build_cost_model_after runs of a signature (GraphOptions.build_cost_model_after)", function()
    local s <close> = tfdev.session { build_cost_model = true, build_cost_model_after = 2 }
    s:create(mlp())
    s:run({ x = X }, "y")
    local _, meta = s:run({ x = X }, "y", nil, { trace = true }) -- traced, yet not measured for the model
    assert.is_true(#meta.step_stats.dev_stats > 0)
    assert.are.same({}, s:export_cost_models())
    s:run({ x = X }, "y")
    local mm
    for _, e in ipairs(s:export_cost_models()["/job:localhost/replica:0/task:0/device:CPU:0"]) do
      if e.node == "mm" then mm = e end
    end
    assert.are.equal(1, mm.runs)
    h.raises("INVALID_ARGUMENT", "option build_cost_model_after must be an integer in [0, 2147483647], got -1", tfdev.session,
      { build_cost_model_after = -1 })
  end)

  it("builds the model on every run with build_cost_model, and returns a cost graph when asked", function()
    local s <close> = tfdev.session { build_cost_model = true }
    s:create(mlp())
    s:run({ x = X }, "y")
    s:run({ x = X }, "y")
    local _, meta = s:run({ x = X }, "y", nil, { cost_graph = true })
    local by = {}
    for _, n in ipairs(meta.cost_graph.node) do by[n.name] = n end
    assert.are.equal(3, by.mm.runs)
    assert.are.equal("Relu", by.y.op)
    assert.are.equal(16, by.y.output_bytes)
    assert.is_nil(meta.step_stats.dev_stats[1]) -- no trace asked: no step stats
  end)

  it("records allocator memory per node in step stats", function()
    local s <close> = tfdev.session()
    s:create(mlp())
    local _, meta = s:run({ x = X }, "y", nil, { trace = true })
    for _, n in ipairs(meta.step_stats.dev_stats[1].node_stats) do
      assert.are.equal("/job:localhost/replica:0/task:0/device:CPU:0", n.memory[1].allocator_name)
      assert.is_true(n.memory[1].allocator_bytes_in_use >= 0)
      if n.node_name == "mm" then assert.is_true(n.memory[1].allocator_bytes_in_use >= 16) end
    end
  end)
end)
