-- DirectSession's lifecycle codes and texts, as TensorFlow gives them (issue 12): a run, partial run
-- setup or callable before Create, a second Create, a feed given twice.
local tfdev = require "tfdev"
local h = require "spec.support.helpers"

local graph = { node = {
  { name = "p", op = "Placeholder", attr = { dtype = "float32" } },
  { name = "y", op = "Neg", input = { "p" } },
} }

describe("a session's lifecycle", function()
  it("refuses work before Create, naming the method", function()
    local s <close> = tfdev.session()
    h.raises("INVALID_ARGUMENT", "Session was not created with a graph before Run()!", s.run, s, {}, "y")
    h.raises("INVALID_ARGUMENT", "Session was not created with a graph before Run()!", s.run_async, s, {}, "y")
    h.raises("INVALID_ARGUMENT", "Session was not created with a graph before MakeCallable()!", s.make_callable, s,
      { fetches = "y" })
    h.raises("INVALID_ARGUMENT", "Session was not created with a graph before PRunSetup()!", s.prun_setup, s, { "p" },
      { "y" })
    s:create(graph) -- and then it works
    assert.are.same({ -1 }, s:run({ p = { 1 } }, "y"):totable())
  end)

  it("refuses a second Create, and a feed given twice", function()
    local s <close> = tfdev.session()
    s:create(graph)
    h.raises("ALREADY_EXISTS", "A Graph has already been created for this session.", s.create, s, graph)
    h.raises("INVALID_ARGUMENT", "'p:0' fed more than once.", s.run, s, { p = { 1 }, ["p:0"] = { 2 } }, "y")
    assert.are.same({ -3 }, s:run({ p = { 3 } }, "y"):totable())
  end)

  it("checks device assignments at Create, unless place_pruned_graph", function()
    local pinned = { node = {
      { name = "p", op = "Placeholder", attr = { dtype = "float32" } },
      { name = "y", op = "Neg", input = { "p" } },
      { name = "unused", op = "Neg", input = { "p" }, device = "/device:CPU:2" },
    } }
    local s <close> = tfdev.session { device_count = { CPU = 2 } }
    h.raises("INVALID_ARGUMENT", "Cannot assign a device for operation unused: {{node unused}} was explicitly " ..
      "assigned to /device:CPU:2 but available devices are [", s.create, s, pinned)
    h.raises("INVALID_ARGUMENT", "Session was not created with a graph before Run()!", s.run, s, { p = { 1 } }, "y")
    -- TensorFlow's place_pruned_graph places what each run needs, when it runs: 'unused' never runs
    local pruned <close> = tfdev.session { device_count = { CPU = 2 }, place_pruned_graph = true }
    pruned:create(pinned)
    assert.are.same({ -1 }, pruned:run({ p = { 1 } }, "y"):totable())
    h.raises("INVALID_ARGUMENT", "Cannot assign a device for operation unused", pruned.run, pruned, { p = { 1 } },
      "unused")
    -- soft placement moves it instead
    local soft <close> = tfdev.session { device_count = { CPU = 2 }, allow_soft_placement = true }
    soft:create(pinned)
    assert.are.same({ -1 }, soft:run({ p = { 1 } }, "unused"):totable())
  end)
end)
