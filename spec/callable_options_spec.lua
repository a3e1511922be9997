-- Callables that carry run options (TensorFlow's CallableOptions.run_options): every call runs with them,
-- and a traced callable returns run metadata after its outputs, as session:run does
-- (DirectSessionTest.RunCallableWithRunOptions-like); run option output_partition_graphs is honoured
-- apart from the trace (RunOptions.output_partition_graphs).
local tfdev = require "tfdev"
local h = require "spec.support.helpers"

local graph = h.neg_square_graph

describe("callables with run options", function()
  it("returns metadata when the callable's run options trace", function()
    local s <close> = tfdev.session()
    s:create(graph())
    local c = s:make_callable { feeds = { "x" }, fetches = "y", run_options = { trace = true } }
    local y, meta = c({ 1, 2 })
    assert.are.same({ -1, -4 }, y:totable())
    local names = {}
    for _, d in ipairs(meta.step_stats.dev_stats) do
      for _, n in ipairs(d.node_stats) do names[n.node_name] = true end
    end
    assert.is_true(names.y and names.sq and true)
    local plain = s:make_callable { feeds = { "x" }, fetches = "y" }
    local y2, none = plain({ 3 })
    assert.are.same({ -9 }, y2:totable())
    assert.is_nil(none)
  end)

  it("runs on the pool its run options name, and refuses one the session has not", function()
    local s <close> = tfdev.session { session_inter_op_thread_pool = { { num_threads = 1 }, { num_threads = 1 } } }
    s:create(graph())
    local on1 = s:make_callable { feeds = { "x" }, fetches = "y", run_options = { inter_op_thread_pool = 1 } }
    assert.are.same({ -4 }, on1({ 2 }):totable())
    local here = s:make_callable { feeds = { "x" }, fetches = "y", run_options = { inter_op_thread_pool = -1 } }
    assert.are.same({ -4 }, here({ 2 }):totable())
    local bad = s:make_callable { feeds = { "x" }, fetches = "y", run_options = { inter_op_thread_pool = 5 } }
    h.raises("INVALID_ARGUMENT", "Invalid inter_op_thread_pool: 5", bad, { 2 })
    h.raises("INVALID_ARGUMENT", "unknown run option 'bogus'", s.make_callable, s,
      { feeds = { "x" }, fetches = "y", run_options = { bogus = true } })
  end)

  it("returns partition graphs only when output_partition_graphs asks, traced or not", function()
    local s <close> = tfdev.session()
    s:create(graph())
    local _, traced = s:run({ x = { 1 } }, "y", nil, { trace = true })
    assert.are.equal(0, #(traced.partition_graphs or {}))
    assert.is_true(#traced.step_stats.dev_stats > 0)
    local _, graphs = s:run({ x = { 1 } }, "y", nil, { output_partition_graphs = true })
    assert.are.equal(1, #graphs.partition_graphs)
    assert.are.equal(0, #graphs.step_stats.dev_stats)
    local _, off = s:run({ x = { 1 } }, "y", nil, { trace = true, output_partition_graphs = false })
    assert.are.equal(0, #(off.partition_graphs or {}))
  end)
end)
