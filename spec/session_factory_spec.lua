-- The session factory's Reset (TensorFlow's DirectSessionFactory::Reset: every session it made has its
-- containers cleared and is closed) and session:finalize() (DirectSession::Finalize), with TensorFlow's
-- codes and texts.
local tfdev = require "tfdev"
local h = require "spec.support.helpers"

local function graph()
  local g = tfdev.graph()
  local x = g:placeholder("float32", { -1 }, { name = "x" })
  local v = g:variable({ 1, 2 }, { name = "v", dtype = "float32", container = "train" })
  local w = g:variable({ 5 }, { name = "w", dtype = "float32" })
  g:op("Neg", { g:op("Square", { x }, { name = "sq" }) }, { name = "y" })
  g:op("AddV2", { x, x }, { name = "z" })
  return g, v, w
end

describe("tfdev.session_factory.reset", function()
  it("clears the containers of every session and closes them (DirectSessionFactory::Reset)", function()
    local g, v, w = graph()
    local a = tfdev.session()
    local b = tfdev.session { inter_op_threads = 2 } -- other options: the same factory, as TensorFlow's
    a:create(g)
    b:create(g)
    a:run({}, nil, { v.initializer, w.initializer })
    local rm = a:devices()[1]:resource_manager()
    assert.are.same({ "localhost", "train" }, rm:containers())
    tfdev.session_factory.reset({}, { "train" })
    assert.are.same({ "localhost" }, rm:containers())
    h.raises("CANCELLED", "Session has been closed.", a.run, a, { x = { 1 } }, "y")
    h.raises("CANCELLED", "Session has been closed.", b.run, b, { x = { 1 } }, "y")
    h.raises("CANCELLED", "Session has been closed.", b.extend, b, { node = {} })
    h.raises("CANCELLED", "Session has been closed.", b.make_callable, b, { feeds = { "x" }, fetches = { "z" } })
    a:close() -- the owner still closes: harmless
    b:close()
    -- Sessions made after a reset are untouched by it; with no containers the default one is cleared.
    local c <close> = tfdev.session()
    c:create(g)
    assert.are.same({ 2, 4 }, c:run({ x = { 1, 2 } }, "z"):totable())
    c:run({}, nil, { w.initializer })
    local crm = c:devices()[1]:resource_manager()
    tfdev.session_factory.reset()
    assert.are.same({}, crm:containers())
    h.raises("CANCELLED", "Session has been closed.", c.run, c, { x = { 1 } }, "z")
  end)

  it("checks its arguments", function()
    h.raises("INVALID_ARGUMENT", "unknown option 'bogus'", tfdev.session_factory.reset, { bogus = 1 })
    h.raises("INVALID_ARGUMENT", "containers[1] must be a string", tfdev.session_factory.reset, {}, { 3 })
    assert.are.same({ "DIRECT_SESSION" }, tfdev.session_factory.names())
  end)
end)

describe("session:finalize", function()
  it("keeps what was built and refuses new executors and Extend (DirectSessionTest.Finalize*)", function()
    local g = graph()
    local s <close> = tfdev.session()
    h.raises("FAILED_PRECONDITION", "Session not yet created.", s.finalize, s)
    s:create(g)
    assert.are.same({ -1, -4 }, s:run({ x = { 1, 2 } }, "y"):totable())
    local c = s:make_callable { feeds = { "x" }, fetches = { "z" } }
    assert.are.equal(s, s:finalize())
    h.raises("FAILED_PRECONDITION", "Session already finalized.", s.finalize, s)
    assert.are.same({ -1, -4 }, s:run({ x = { 1, 2 } }, "y"):totable())
    assert.are.same({ 2, 4 }, c({ 1, 2 })[1]:totable())
    h.raises("FAILED_PRECONDITION", "Session has been finalized.", s.run, s, { x = { 1 } }, "sq")
    h.raises("FAILED_PRECONDITION", "Session has been finalized.", s.make_callable, s, { feeds = { "x" }, fetches = { "sq" } })
    h.raises("FAILED_PRECONDITION", "Session has been finalized.", s.prun_setup, s, { "x" }, { "y" })
    h.raises("FAILED_PRECONDITION", "Session has been finalized.", s.extend, s,
      { node = { { name = "n", op = "NoOp" } } })
    s:close()
    h.raises("CANCELLED", "Session has been closed.", s.finalize, s)
  end)
end)
