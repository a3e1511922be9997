-- Inter-op pools from Lua: the session option session_inter_op_thread_pool (a list of {num_threads=,
-- global_name=}) and the run option inter_op_thread_pool that picks one, with TensorFlow's codes and
-- texts (DirectSessionTest.MultipleThreadPools, SessionPoolOptions, RunOptionsInterOpThreadPool).
local tfdev = require "tfdev"
local h = require "spec.support.helpers"

local graph = h.neg_square_graph

local X = tfdev.tensor({ 1, 2, 3 }, "float32")

describe("session_inter_op_thread_pool", function()
  it("runs a step on the pool a run names (DirectSessionTest.MultipleThreadPools)", function()
    local s <close> = tfdev.session { session_inter_op_thread_pool = {
      { num_threads = 1 }, { num_threads = 2, global_name = "spec_large" }, {} } }
    s:create(graph())
    for k = -1, 2 do
      assert.are.same({ -1, -4, -9 }, s:run({ x = X }, "y", nil, { inter_op_thread_pool = k }):totable())
    end
    local c = s:make_callable { feeds = { "x" }, fetches = { "y" } }
    assert.are.same({ -1, -4, -9 }, c(X)[1]:totable())
  end)

  it("refuses a pool index the session has not (DirectSession::RunInternal's text)", function()
    local s <close> = tfdev.session { session_inter_op_thread_pool = { { num_threads = 1 }, { num_threads = 1 } } }
    s:create(graph())
    h.raises("INVALID_ARGUMENT", "Invalid inter_op_thread_pool: 2", s.run, s, { x = X }, "y", nil,
      { inter_op_thread_pool = 2 })
    h.raises("INVALID_ARGUMENT", "Invalid inter_op_thread_pool: -2", s.run, s, { x = X }, "y", nil,
      { inter_op_thread_pool = -2 })
    h.raises("INVALID_ARGUMENT", "Invalid inter_op_thread_pool: 4294967296", s.run, s, { x = X }, "y", nil,
      { inter_op_thread_pool = 1 << 32 })
    h.raises("INVALID_ARGUMENT", "run option inter_op_thread_pool must be an integer", s.run, s, { x = X }, "y", nil,
      { inter_op_thread_pool = 0.5 })
    -- A session with no pool listed has one: index 0.
    local plain <close> = tfdev.session()
    plain:create(graph())
    h.raises("INVALID_ARGUMENT", "Invalid inter_op_thread_pool: 1", plain.run, plain, { x = X }, "y", nil,
      { inter_op_thread_pool = 1 })
    -- The session still works after a refused run.
    assert.are.same({ -1, -4, -9 }, s:run({ x = X }, "y", nil, { inter_op_thread_pool = 1 }):totable())
  end)

  it("shares pools by global name within a runtime and refuses another size (SessionPoolOptions)", function()
    local a <close> = tfdev.session { session_inter_op_thread_pool = { { num_threads = 2, global_name = "spec_shared" } } }
    local b <close> = tfdev.session { session_inter_op_thread_pool = { { num_threads = 2, global_name = "spec_shared" } } }
    a:create(graph())
    b:create(graph())
    a:close()
    assert.are.same({ -1, -4, -9 }, b:run({ x = X }, "y"):totable())
    h.raises("INVALID_ARGUMENT",
      "Pool spec_shared configured previously with num_threads=2; cannot re-configure with num_threads=3",
      tfdev.session, { session_inter_op_thread_pool = { { num_threads = 3, global_name = "spec_shared" } } })
  end)

  it("validates the option with clear errors, never a crash", function()
    h.raises("INVALID_ARGUMENT", "option session_inter_op_thread_pool must be a table", tfdev.session,
      { session_inter_op_thread_pool = 4 })
    h.raises("INVALID_ARGUMENT", "session_inter_op_thread_pool[1] must be a table", tfdev.session,
      { session_inter_op_thread_pool = { 4 } })
    h.raises("INVALID_ARGUMENT", "session_inter_op_thread_pool must be a list", tfdev.session,
      { session_inter_op_thread_pool = { large = { num_threads = 1 } } })
    h.raises("INVALID_ARGUMENT", "option session_inter_op_thread_pool[1].num_threads must be an integer in [0, 1024]",
      tfdev.session, { session_inter_op_thread_pool = { { num_threads = -1 } } })
    h.raises("INVALID_ARGUMENT", "session_inter_op_thread_pool[2].global_name must be a string", tfdev.session,
      { session_inter_op_thread_pool = { {}, { global_name = 7 } } })
    h.raises("INVALID_ARGUMENT", "unknown option 'session_inter_op_thread_pool[1].threads'", tfdev.session,
      { session_inter_op_thread_pool = { { threads = 2 } } })
    local many = {}
    for i = 1, 65 do many[i] = {} end
    h.raises("INVALID_ARGUMENT", "at most 64 pools", tfdev.session, { session_inter_op_thread_pool = many })
  end)
end)
