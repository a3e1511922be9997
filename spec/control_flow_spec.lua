-- TensorFlow 1 control flow in graphs: while loops (Enter, Merge, LoopCond, Switch, NextIteration,
-- Exit), conditionals (Switch and Merge), dead tensors, and how loops meet the session: threads,
-- timeouts, close, step stats, placement across devices, malformed loops.
local tfdev = require "tfdev"
local h = require "spec.support.helpers"

local function i32(v) return tfdev.tensor(v, "int32") end
local function const(name, value, extra)
  return { name = name, op = "Const", attr = { value = value }, input = extra }
end

-- The nodes of `i = start; while (i < limit) i = i + step` in frame `frame` (names prefixed p..),
-- reading start, limit and step from the enclosing frame; the result is p.."exit".
local function counting_loop(p, frame, start, limit, step, parallel)
  local e = { frame_name = frame, parallel_iterations = parallel or 10 }
  local c = { frame_name = frame, parallel_iterations = parallel or 10, is_constant = true }
  return {
    { name = p .. "enter", op = "Enter", input = { start }, attr = e },
    { name = p .. "limit", op = "Enter", input = { limit }, attr = c },
    { name = p .. "step", op = "Enter", input = { step }, attr = c },
    { name = p .. "merge", op = "Merge", input = { p .. "enter", p .. "next" } },
    { name = p .. "less", op = "Less", input = { p .. "merge", p .. "limit" } },
    { name = p .. "cond", op = "LoopCond", input = { p .. "less" } },
    { name = p .. "switch", op = "Switch", input = { p .. "merge", p .. "cond" } },
    { name = p .. "body", op = "Identity", input = { p .. "switch:1" } },
    { name = p .. "add", op = "AddV2", input = { p .. "body", p .. "step" } },
    { name = p .. "next", op = "NextIteration", input = { p .. "add" } },
    { name = p .. "exit", op = "Exit", input = { p .. "switch" } },
  }
end

local function graph(...)
  local g = { node = {} }
  for _, list in ipairs { ... } do
    for _, n in ipairs(list) do g.node[#g.node + 1] = n end
  end
  return g
end

local function count_to(n, parallel)
  return graph({ const("zero", i32(0)), const("n", i32(n)), const("one", i32(1)) },
    counting_loop("l/", "count", "zero", "n", "one", parallel))
end

describe("while loops", function()
  it("count to N, on the inter-op pool and on the calling thread, one iteration at a time or many", function()
    for _, threads in ipairs { 2, -1 } do
      for _, parallel in ipairs { 1, 32 } do
        local s <close> = tfdev.session { inter_op_threads = threads }
        for _, n in ipairs { 0, 1, 10, 1000 } do
          local s2 <close> = tfdev.session { inter_op_threads = threads }
          s2:create(count_to(n, parallel))
          assert.are.equal(n, s2:run({}, "l/exit"):item())
        end
        s:create(count_to(5, parallel))
        for _ = 1, 3 do assert.are.equal(5, s:run({}, "l/exit"):item()) end -- steps reuse nothing stale
      end
    end
  end)

  it("run with fed values, and start below or above the limit", function()
    local s <close> = tfdev.session()
    s:create(graph({ { name = "start", op = "Placeholder", attr = { dtype = "int32", shape = {} } },
      { name = "n", op = "Placeholder", attr = { dtype = "int32", shape = {} } }, const("three", i32(3)) },
      counting_loop("l/", "f", "start", "n", "three")))
    assert.are.equal(12, s:run({ start = i32(0), n = i32(10) }, "l/exit"):item())
    assert.are.equal(50, s:run({ start = i32(50), n = i32(10) }, "l/exit"):item()) -- never entered
    assert.are.equal(-1, s:run({ start = i32(-7), n = i32(-3) }, "l/exit"):item())
  end)

  it("give a loop invariant (a constant Enter) to every iteration", function()
    -- acc = 0; for i < 6: acc = acc + k * i, with k entered once as a constant: 7 * (0+1+...+5) = 105
    local c = { frame_name = "inv", is_constant = true }
    local s <close> = tfdev.session()
    s:create(graph({ const("zero", i32(0)), const("six", i32(6)), const("one", i32(1)), const("k", i32(7)) }, {
      { name = "ei", op = "Enter", input = { "zero" }, attr = { frame_name = "inv" } },
      { name = "ea", op = "Enter", input = { "zero" }, attr = { frame_name = "inv" } },
      { name = "en", op = "Enter", input = { "six" }, attr = c },
      { name = "eone", op = "Enter", input = { "one" }, attr = c },
      { name = "ek", op = "Enter", input = { "k" }, attr = c },
      { name = "mi", op = "Merge", input = { "ei", "ni" } },
      { name = "ma", op = "Merge", input = { "ea", "na" } },
      { name = "less", op = "Less", input = { "mi", "en" } },
      { name = "cond", op = "LoopCond", input = { "less" } },
      { name = "si", op = "Switch", input = { "mi", "cond" } },
      { name = "sa", op = "Switch", input = { "ma", "cond" } },
      { name = "ki", op = "Mul", input = { "si:1", "ek" } },
      { name = "acc", op = "AddV2", input = { "sa:1", "ki" } },
      { name = "inc", op = "AddV2", input = { "si:1", "eone" } },
      { name = "ni", op = "NextIteration", input = { "inc" } },
      { name = "na", op = "NextIteration", input = { "acc" } },
      { name = "out", op = "Exit", input = { "sa" } },
    }))
    assert.are.equal(105, s:run({}, "out"):item())
  end)

  it("nest: an inner loop per outer iteration", function()
    -- total = sum over i < 3, j < 4 of (4 i + j) = 0 + 1 + ... + 11 = 66
    local o = { frame_name = "outer" }
    local oc = { frame_name = "outer", is_constant = true }
    local ic = { frame_name = "inner", is_constant = true }
    local s <close> = tfdev.session()
    s:create(graph({ const("zero", i32(0)), const("three", i32(3)), const("four", i32(4)), const("one", i32(1)) }, {
      { name = "o/i", op = "Enter", input = { "zero" }, attr = o },
      { name = "o/t", op = "Enter", input = { "zero" }, attr = o },
      { name = "o/n", op = "Enter", input = { "three" }, attr = oc },
      { name = "o/four", op = "Enter", input = { "four" }, attr = oc },
      { name = "o/one", op = "Enter", input = { "one" }, attr = oc },
      { name = "o/mi", op = "Merge", input = { "o/i", "o/ni" } },
      { name = "o/mt", op = "Merge", input = { "o/t", "o/nt" } },
      { name = "o/less", op = "Less", input = { "o/mi", "o/n" } },
      { name = "o/cond", op = "LoopCond", input = { "o/less" } },
      { name = "o/si", op = "Switch", input = { "o/mi", "o/cond" } },
      { name = "o/st", op = "Switch", input = { "o/mt", "o/cond" } },
      { name = "o/bi", op = "Identity", input = { "o/si:1" } },
      { name = "o/base", op = "Mul", input = { "o/bi", "o/four" } },
      { name = "o/zero", op = "Const", input = { "^o/bi" }, attr = { value = i32(0) } },
      { name = "i/j", op = "Enter", input = { "o/zero" }, attr = { frame_name = "inner" } },
      { name = "i/t", op = "Enter", input = { "o/st:1" }, attr = { frame_name = "inner" } },
      { name = "i/base", op = "Enter", input = { "o/base" }, attr = ic },
      { name = "i/n", op = "Enter", input = { "o/four" }, attr = ic },
      { name = "i/one", op = "Enter", input = { "o/one" }, attr = ic },
      { name = "i/mj", op = "Merge", input = { "i/j", "i/nj" } },
      { name = "i/mt", op = "Merge", input = { "i/t", "i/nt" } },
      { name = "i/less", op = "Less", input = { "i/mj", "i/n" } },
      { name = "i/cond", op = "LoopCond", input = { "i/less" } },
      { name = "i/sj", op = "Switch", input = { "i/mj", "i/cond" } },
      { name = "i/st", op = "Switch", input = { "i/mt", "i/cond" } },
      { name = "i/v", op = "AddV2", input = { "i/base", "i/sj:1" } },
      { name = "i/acc", op = "AddV2", input = { "i/st:1", "i/v" } },
      { name = "i/inc", op = "AddV2", input = { "i/sj:1", "i/one" } },
      { name = "i/nj", op = "NextIteration", input = { "i/inc" } },
      { name = "i/nt", op = "NextIteration", input = { "i/acc" } },
      { name = "i/out", op = "Exit", input = { "i/st" } },
      { name = "o/inc", op = "AddV2", input = { "o/bi", "o/one" } },
      { name = "o/ni", op = "NextIteration", input = { "o/inc" } },
      { name = "o/nt", op = "NextIteration", input = { "i/out" } },
      { name = "total", op = "Exit", input = { "o/st" } },
    }))
    for _ = 1, 2 do assert.are.equal(66, s:run({}, "total"):item()) end
  end)

  it("record each run of a node in the step stats, once per iteration", function()
    local s <close> = tfdev.session()
    s:create(count_to(7))
    local out, meta = s:run({}, "l/exit", nil, { trace = true })
    assert.are.equal(7, out:item())
    local runs = {}
    for _, d in ipairs(meta.step_stats.dev_stats) do
      for _, n in ipairs(d.node_stats) do runs[n.node_name] = (runs[n.node_name] or 0) + 1 end
    end
    assert.are.equal(7, runs["l/add"])
    assert.are.equal(8, runs["l/merge"]) -- the condition is looked at once more than the body runs
    assert.are.equal(1, runs["l/exit"])
    assert.are.equal(1, runs["l/enter"])
    -- and the cost model counts every run
    local c <close> = tfdev.session { build_cost_model = true }
    c:create(count_to(7))
    c:run({}, "l/exit")
    local seen = 0
    for _, entries in pairs(c:export_cost_models()) do
      for _, e in ipairs(entries) do
        if e.node == "l/add" then assert.are.equal(7, e.runs) seen = seen + 1 end
        if e.node == "l/exit" then assert.are.equal(1, e.runs) seen = seen + 1 end
      end
    end
    assert.are.equal(2, seen)
  end)

  it("stop a loop that never ends at operation_timeout_ms, the run's timeout_ms, or close()", function()
    local forever = graph({ const("zero", i32(0)), const("one", i32(1)), const("none", i32(0)) },
      counting_loop("l/", "forever", "zero", "one", "none", 4))
    for _, threads in ipairs { 2, -1 } do
      local s <close> = tfdev.session { inter_op_threads = threads, operation_timeout_ms = 100 }
      s:create(forever)
      local t0 = tfdev.clock()
      h.raises("DEADLINE_EXCEEDED", "Timed out waiting for the step (100 ms)", s.run, s, {}, "l/exit")
      h.raises("DEADLINE_EXCEEDED", "Timed out waiting for the step (30 ms)", s.run, s, {}, "l/exit", nil,
        { timeout_ms = 30 })
      assert(tfdev.clock() - t0 < 10)
      assert.are.equal(1, s:run({}, "one"):item()) -- the session goes on working
    end
    local s = tfdev.session()
    s:create(forever)
    local f = s:run_async({}, "l/exit")
    assert.is_false(f:wait(30))
    f:cancel()
    assert.is_true(f:wait(10000))
    h.raises("CANCELLED", "Run was cancelled.", f.result, f)
    local g = s:run_async({}, "l/exit")
    s:close()
    assert.is_true(g:ready())
    h.raises("CANCELLED", "Session has been closed.", g.result, g)
  end)

  it("run a partial run's loop on the inter-op pool: prun_setup returns, a fetch times out, close stops it", function()
    local forever = graph({ const("zero", i32(0)), const("one", i32(1)), const("none", i32(0)) },
      counting_loop("l/", "forever", "zero", "one", "none", 4))
    local s = tfdev.session { inter_op_threads = 1, operation_timeout_ms = 50 }
    s:create(forever)
    local t0 = tfdev.clock()
    local p = s:prun_setup({}, { "l/exit" }) -- before: ran the loop on this thread, and never returned
    assert(tfdev.clock() - t0 < 5)
    h.raises("DEADLINE_EXCEEDED", "Timed out waiting for a partial run fetch (50 ms)", s.prun, s, p, {}, "l/exit")
    assert.are.equal(1, s:run({}, "one"):item())
    s:close()
    assert(tfdev.clock() - t0 < 10)
  end)

  it("close a partial run whose start waits behind another run's endless loop on the pool", function()
    local forever = graph({ const("zero", i32(0)), const("one", i32(1)), const("none", i32(0)) },
      counting_loop("l/", "forever", "zero", "one", "none", 4))
    local s = tfdev.session { inter_op_threads = 1 }
    s:create(forever)
    local t0 = tfdev.clock()
    local p1 = s:prun_setup({}, { "l/exit" }) -- its loop takes the pool's only thread, and is not closed
    local p2 = s:prun_setup({}, { "l/exit" })
    -- Before: waited for p2's executor, whose start sat in the queue behind p1's loop for ever. The
    -- loop now hands its ready nodes to the back of the queue every 1,024 nodes.
    p2:close()
    assert(tfdev.clock() - t0 < 10)
    s:close()
    assert(p1)
  end)
end)

describe("conditionals", function()
  local function cond_graph()
    return graph {
      { name = "x", op = "Placeholder", attr = { dtype = "int32", shape = {} } },
      { name = "p", op = "Placeholder", attr = { dtype = "bool", shape = {} } },
      const("two", i32(2)), const("ten", i32(10)),
      { name = "sw", op = "Switch", input = { "x", "p" } },
      { name = "t", op = "Mul", input = { "sw:1", "two" } },
      { name = "f", op = "AddV2", input = { "sw", "ten" } },
      { name = "y", op = "Merge", input = { "f", "t" } },
      { name = "after_t", op = "Neg", input = { "t" } },
      { name = "ctl", op = "Const", input = { "^t" }, attr = { value = i32(1) } },
    }
  end

  it("take one branch of a Switch; the Merge forwards it and says which", function()
    local s <close> = tfdev.session()
    s:create(cond_graph())
    local y, index = table.unpack(s:run({ x = i32(5), p = tfdev.tensor(true) }, { "y", "y:1" }))
    assert.are.equal(10, y:item())
    assert.are.equal(1, index:item())
    y, index = table.unpack(s:run({ x = i32(5), p = tfdev.tensor(false) }, { "y", "y:1" }))
    assert.are.equal(15, y:item())
    assert.are.equal(0, index:item())
  end)

  it("make what hangs off the branch not taken dead; fetching a dead tensor is an error naming it", function()
    local s <close> = tfdev.session()
    s:create(cond_graph())
    local yes = { x = i32(5), p = tfdev.tensor(true) }
    assert.are.equal(-10, s:run(yes, "after_t"):item())
    assert.are.equal(1, s:run(yes, "ctl"):item())
    local no = { x = i32(5), p = tfdev.tensor(false) }
    h.raises("INTERNAL", "Retval[1] does not have value: fetch 'after_t:0' is dead", s.run, s, no, { "y", "after_t" })
    h.raises("INTERNAL", "fetch 'ctl:0' is dead", s.run, s, no, "ctl") -- dead through a control edge
    h.raises("INTERNAL", "fetch 'sw:1' is dead", s.run, s, no, "sw:1")
    -- A dead node run as a target is just not run.
    assert.are.equal(0, select("#", s:run(no, nil, { "after_t" })))
    local _, meta = s:run(no, "y", nil, { trace = true })
    for _, d in ipairs(meta.step_stats.dev_stats) do
      for _, n in ipairs(d.node_stats) do assert.are_not.equal("t", n.node_name) end
    end
  end)

  it("carry dead tensors between devices", function()
    local g = cond_graph()
    for _, n in ipairs(g.node) do
      if n.name == "t" or n.name == "after_t" then n.device = "/device:CPU:1" end
    end
    local s <close> = tfdev.session { device_count = { CPU = 2 } }
    s:create(g)
    assert.are.equal(10, s:run({ x = i32(5), p = tfdev.tensor(true) }, "y"):item())
    assert.are.equal("/job:localhost/replica:0/task:0/device:CPU:1", s:placement("t"))
    assert.are_not.equal(s:placement("t"), s:placement("sw")) -- CPU:0, or a GPU when a backend gives one
    assert.are.equal(15, s:run({ x = i32(5), p = tfdev.tensor(false) }, "y"):item())
    h.raises("INTERNAL", "fetch 'after_t:0' is dead", s.run, s, { x = i32(5), p = tfdev.tensor(false) }, "after_t")
    -- A control dependency carried between devices carries deadness too.
    g.node[#g.node + 1] = { name = "late", op = "Const", input = { "^after_t" }, attr = { value = i32(3) } }
    local s2 <close> = tfdev.session { device_count = { CPU = 2 } }
    s2:create(g)
    assert.are.equal(3, s2:run({ x = i32(5), p = tfdev.tensor(true) }, "late"):item())
    h.raises("INTERNAL", "fetch 'late:0' is dead", s2.run, s2, { x = i32(5), p = tfdev.tensor(false) }, "late")
  end)

  it("work in partial runs and callables too", function()
    local s <close> = tfdev.session()
    s:create(cond_graph())
    local p = s:prun_setup({ "x", "p" }, { "y", "after_t" })
    assert.are.equal(15, s:prun(p, { x = i32(5), p = tfdev.tensor(false) }, "y"):item())
    h.raises("INTERNAL", "Retval[0] does not have value: fetch 'after_t:0' is dead", s.prun, s, p, {}, "after_t")
    local f = s:make_callable { feeds = { "x", "p" }, fetches = { "y", "y:1" } }
    local y, index = table.unpack(f(i32(2), tfdev.tensor(true)))
    assert.are.equal(4, y:item())
    assert.are.equal(1, index:item())
  end)

  it("run a loop on the branch not taken dead, and the Merge after it takes the other", function()
    local s <close> = tfdev.session()
    s:create(graph({
      { name = "x", op = "Placeholder", attr = { dtype = "int32", shape = {} } },
      { name = "p", op = "Placeholder", attr = { dtype = "bool", shape = {} } },
      const("hundred", i32(100)), const("one", i32(1)),
      { name = "sw", op = "Switch", input = { "x", "p" } },
      { name = "in", op = "Identity", input = { "sw:1" } },
    }, counting_loop("l/", "loop", "in", "hundred", "one"), {
      { name = "y", op = "Merge", input = { "l/exit", "sw" } },
    }))
    assert.are.equal(100, s:run({ x = i32(3), p = tfdev.tensor(true) }, "y"):item())
    assert.are.equal(3, s:run({ x = i32(3), p = tfdev.tensor(false) }, "y"):item())
  end)
end)

describe("loops and placement", function()
  it("keep every node of a loop on one device", function()
    local g = count_to(4)
    for _, n in ipairs(g.node) do
      if n.name == "l/add" then n.device = "/device:CPU:1" end
    end
    local s <close> = tfdev.session { device_count = { CPU = 2 } }
    s:create(g)
    assert.are.equal(4, s:run({}, "l/exit"):item())
    for _, n in ipairs(g.node) do
      if n.name:find("^l/") then
        assert.are.equal("/job:localhost/replica:0/task:0/device:CPU:1", s:placement(n.name), n.name)
      end
    end
  end)

  it("refuse a loop pinned to two devices", function()
    local g = count_to(4)
    for _, n in ipairs(g.node) do
      if n.name == "l/add" then n.device = "/device:CPU:1" end
      if n.name == "l/less" then n.device = "/device:CPU:0" end
    end
    local s <close> = tfdev.session { device_count = { CPU = 2 } }
    h.raises("INVALID_ARGUMENT", "Cannot colocate nodes", s.create, s, g)
    local soft <close> = tfdev.session { device_count = { CPU = 2 }, allow_soft_placement = true }
    soft:create(g)
    assert.are.equal(4, soft:run({}, "l/exit"):item())
    assert.are.equal(soft:placement("l/add"), soft:placement("l/less"))
  end)
end)

describe("malformed loops", function()
  local function refused(fragment, g)
    local s <close> = tfdev.session()
    h.raises("INVALID_ARGUMENT", fragment, s.create, s, g)
  end

  it("are refused when the graph is created, naming the node", function()
    refused("node 'out' (Exit) is not inside a while loop", graph { const("x", i32(1)),
      { name = "out", op = "Exit", input = { "x" } } })
    refused("node 'mix' has inputs from different frames. The input 'in' is in frame 'f'. The input 'x' is in frame ''.",
      graph { const("x", i32(1)), { name = "in", op = "Enter", input = { "x" }, attr = { frame_name = "f" } },
        { name = "mix", op = "AddV2", input = { "x", "in" } } })
    refused("node 'next' (NextIteration) feeds node 'use' (Neg), which is not a Merge", graph { const("x", i32(1)),
      { name = "in", op = "Enter", input = { "x" }, attr = { frame_name = "f" } },
      { name = "next", op = "NextIteration", input = { "in" } },
      { name = "use", op = "Neg", input = { "next" } } })
    refused("The Enter node 'in' must have a frame name.", graph { const("x", i32(1)),
      { name = "in", op = "Enter", input = { "x" }, attr = { frame_name = "" } } })
    refused("node 'in' (Enter): parallel_iterations must be positive, got 0", graph { const("x", i32(1)),
      { name = "in", op = "Enter", input = { "x" }, attr = { frame_name = "f", parallel_iterations = 0 } } })
    refused("pred (input 1) must be bool", graph { const("x", i32(1)), { name = "sw", op = "Switch", input = { "x", "x" } } })
    refused("graph has a cycle", graph { { name = "a", op = "Neg", input = { "b" }, attr = { T = "int32" } },
      { name = "b", op = "Neg", input = { "a" } } })
  end)

  it("a loop body reading a value from outside the loop without an Enter", function()
    local g = count_to(3)
    g.node[#g.node + 1] = const("outside", i32(1))
    for _, n in ipairs(g.node) do
      if n.name == "l/add" then n.input = { "l/body", "outside" } end
    end
    local s <close> = tfdev.session()
    h.raises("INVALID_ARGUMENT", "has inputs from different frames", s.create, s, g)
    -- and fetching inside a loop
    local s2 <close> = tfdev.session()
    s2:create(count_to(3))
    h.raises("INVALID_ARGUMENT", "fetching 'l/add:0' is not supported: it is inside the while loop \"count\"", s2.run,
      s2, {}, "l/add")
  end)
end)

describe("an Exit fed from inside its loop", function()
  -- Fed from the LoopCond rather than the Switch, the Exit fires in every iteration, each time into
  -- the one iteration of the frame outside: the run fails naming it, and the session runs on.
  local function bad_exit(n)
    local g = count_to(n)
    g.node[#g.node + 1] = { name = "bad", op = "Exit", input = { "l/cond" } }
    g.node[#g.node + 1] = { name = "use", op = "LogicalNot", input = { "bad" } }
    return g
  end

  it("fails the run that iterates, naming the Exit and its consumer", function()
    local s <close> = tfdev.session()
    s:create(bad_exit(4))
    h.raises("INVALID_ARGUMENT", "node 'bad' (Exit) fired more than once into one iteration of its consumer 'use' "
      .. "(input 0): a loop's Exit must be fed from the loop's Switch", s.run, s, {}, "use")
    h.raises("INVALID_ARGUMENT", "node 'bad' (Exit) fired more than once", s.run, s, {}, "bad")
    assert.are.equal(4, s:run({}, "l/exit"):item()) -- a run that leaves it out still works
  end)

  it("runs when the loop stops before its first iteration, since the Exit fires once", function()
    local s <close> = tfdev.session()
    s:create(bad_exit(0))
    assert.is_true(s:run({}, "use"):item())
  end)
end)

describe("control flow in Lua", function()
  it("types control-flow nodes in the graph builder", function()
    local g = tfdev.graph()
    local x = g:placeholder("float32", { 2 })
    local e = g:op("Enter", { x }, { frame_name = "f" })
    assert.are.equal("float32", e.dtype)
    local p = g:op("LoopCond", { g:const(true) })
    local sw = g:op("Switch", { e, p })
    assert.are.same({ 2 }, sw.shape)
    assert.are.equal("float32", g:output(sw.node, 1).dtype)
    local m = g:op("Merge", { x, g:const({ 1, 2, 3 }, { dtype = "float32" }) })
    assert.are.same({ -1 }, m.shape) -- MergeShape: the sizes they disagree on are unknown
    assert.are.equal("int32", g:output(m.node, 1).dtype)
    h.raises("INVALID_ARGUMENT", "pred (input 1) must have rank 0", g.op, g, "Switch", { x, g:const({ true }) })
  end)

  it("refuses control-flow ops outside a graph", function()
    local cpu = tfdev.device.cpu { name = "/job:localhost/replica:0/task:0/device:CPU:0" }
    h.raises("UNIMPLEMENTED", "op Switch is control flow: it runs only in a graph", cpu.compute, cpu, "Switch",
      { tfdev.tensor(1), tfdev.tensor(true) })
  end)
end)
