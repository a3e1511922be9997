-- Ops written in Lua (tfdev.op.register) and C plug-ins (tfdev.op.load_plugin): values through
-- sessions, shape functions, attributes, errors that fail the step and leave the session usable,
-- placement by kernel availability on a Lua factory's device type, async runs. Op names are
-- process-wide, so each test registers its own.
local tfdev = require "tfdev"
local h = require "spec.support.helpers"

local exe = os.getenv("TFDEV_EXE")

local function map(t, f)
  local out = {}
  for i, v in ipairs(t:totable()) do out[i] = f(v) end
  return out
end

local function node(name, op, inputs, extra)
  local n = { name = name, op = op, input = inputs }
  for k, v in pairs(extra or {}) do n[k] = v end
  return n
end

local X = tfdev.tensor({ -1, 0, 2 }, "float32")

describe("Lua ops", function()
  after_each(function() tfdev.factory.reset() end)

  it("compute through sessions with their attributes", function()
    tfdev.op.register {
      name = "LuaAffine", inputs = { "x" }, outputs = { "y" },
      attrs = { scale = 2.0, shift = { type = "float", default = 0.5 } },
      kernel = function(x, attrs)
        return tfdev.tensor(map(x, function(v) return v * attrs.scale + attrs.shift end), "float32")
      end,
    }
    assert.is_true(tfdev.op.exists("LuaAffine"))
    assert.is_true(tfdev.op.exists("LuaAffine", "CPU"))
    assert.is_false(tfdev.op.exists("LuaAffine", "GPU"))
    local s <close> = tfdev.session()
    s:create { node = {
      node("x", "Placeholder", nil, { attr = { dtype = "float32" } }),
      node("a", "LuaAffine", { "x" }),
      node("b", "LuaAffine", { "a" }, { attr = { scale = 10.0 } }),
      node("c", "Neg", { "b" }),
    } }
    local out = s:run({ x = X }, { "a", "c" })
    assert.are.same({ -1.5, 0.5, 4.5 }, out[1]:totable())
    assert.are.same({ 14.5, -5.5, -45.5 }, out[2]:totable())
    assert.are.same({ -1.5, 0.5, 4.5 }, tfdev.factory.new_device("CPU"):compute("LuaAffine", { X }):totable())
  end)

  it("give the graph builder and sessions the shapes their shape function says", function()
    tfdev.op.register {
      name = "LuaPairUp", inputs = 1, outputs = 1,
      shape_fn = function(inputs, attrs)
        local s = inputs[1].shape
        return { { dtype = inputs[1].dtype, shape = s and { s[1], 2 } or nil } }
      end,
      kernel = function(x)
        local rows = {}
        for i, v in ipairs(x:totable()) do rows[i] = { v, v } end
        return tfdev.tensor(rows, "float32")
      end,
    }
    local g = tfdev.graph()
    local x = g:placeholder("float32", { 3 }, { name = "x" })
    local y = g:op("LuaPairUp", { x }, { name = "y" })
    assert.are.equal("<Output y:0 float32 [3,2]>", tostring(y))
    local s <close> = tfdev.session()
    s:create(g)
    assert.are.same({ { -1, -1 }, { 0, 0 }, { 2, 2 } }, s:run({ x = X }, "y"):totable())
    tfdev.op.register {
      name = "LuaBadShape", inputs = 1, outputs = 1,
      shape_fn = function() error("no shape for you") end,
      kernel = function(x) return x end,
    }
    h.raises("INVALID_ARGUMENT", "(LuaBadShape): shape function: ", function()
      local s2 <close> = tfdev.session()
      s2:create { node = { node("x", "Placeholder", nil, { attr = { dtype = "float32" } }), node("z", "LuaBadShape", { "x" }) } }
    end)
  end)

  it("fail the step naming the op and the Lua error, and the session stays usable", function()
    tfdev.op.register { name = "LuaBoom", inputs = 1, outputs = 1, kernel = function() error("boom at " .. 42) end }
    tfdev.op.register {
      name = "LuaRefuse", inputs = 1, outputs = 1,
      kernel = function() error(tfdev.error.new("OUT_OF_RANGE", "too far")) end,
    }
    tfdev.op.register { name = "LuaNothing", inputs = 1, outputs = 1, kernel = function() end }
    local s <close> = tfdev.session()
    s:create { node = {
      node("x", "Placeholder", nil, { attr = { dtype = "float32" } }),
      node("boom", "LuaBoom", { "x" }), node("refuse", "LuaRefuse", { "x" }),
      node("nothing", "LuaNothing", { "x" }), node("fine", "Square", { "x" }),
    } }
    h.raises("UNKNOWN", "node 'boom' (LuaBoom): Lua kernel failed: ", s.run, s, { x = X }, "boom")
    h.raises("UNKNOWN", "boom at 42", s.run, s, { x = X }, "boom")
    h.raises("OUT_OF_RANGE", "node 'refuse' (LuaRefuse): Lua kernel failed: too far", s.run, s, { x = X }, "refuse")
    h.raises("INVALID_ARGUMENT", "its Lua kernel returned 0 values for 1 output", s.run, s, { x = X }, "nothing")
    assert.are.same({ 1, 0, 4 }, s:run({ x = X }, "fine"):totable())
  end)

  it("refuse malformed registrations, naming what is wrong", function()
    h.raises("INVALID_ARGUMENT", "op LuaNoKernel needs a kernel function", tfdev.op.register, { name = "LuaNoKernel" })
    h.raises("INVALID_ARGUMENT", "starting with a letter, got '_Hidden'", tfdev.op.register,
      { name = "_Hidden", kernel = print })
    h.raises("ALREADY_EXISTS", "op MatMul is already registered", tfdev.op.register, { name = "MatMul", kernel = print })
    h.raises("INVALID_ARGUMENT", "op attr 'k': type must be int, float, bool, string or type", tfdev.op.register,
      { name = "LuaBadAttr", attrs = { k = { type = "complex" } }, kernel = print })
    h.raises("INVALID_ARGUMENT", "op outputs: 0 to 32, got 33", tfdev.op.register,
      { name = "LuaWide", outputs = 33, kernel = print })
    tfdev.op.register { name = "LuaOnce", inputs = 1, outputs = 1, kernel = function(x) return x end }
    h.raises("ALREADY_EXISTS", "op LuaOnce is already registered", tfdev.op.register,
      { name = "LuaOnce", inputs = 1, outputs = 1, kernel = function(x) return x end })
  end)

  it("are placed where a kernel exists: a Lua factory's device type", function()
    tfdev.factory.register("LUADEV", {
      create_devices = function(self, options, prefix)
        return { tfdev.device.cpu { name = prefix .. "/device:LUADEV:0", device_type = "LUADEV", threads = 1 } }
      end,
    }, 100)
    tfdev.op.register {
      name = "LuaOnLuaDev", inputs = 1, outputs = 1, device_types = { "LUADEV" },
      kernel = function(x) return tfdev.tensor(map(x, function(v) return v + 100 end), "float32") end,
    }
    assert.is_true(tfdev.op.exists("LuaOnLuaDev", "LUADEV"))
    assert.is_false(tfdev.op.exists("LuaOnLuaDev", "CPU"))
    local s <close> = tfdev.session()
    s:create { node = {
      node("x", "Placeholder", nil, { attr = { dtype = "float32" } }),
      node("w", "LuaOnLuaDev", { "x" }),
      node("y", "Square", { "w" }),
    } }
    assert.are.same({ 99 * 99, 100 * 100, 102 * 102 }, s:run({ x = X }, "y"):totable())
    assert.matches("device:LUADEV:0$", s:placement("w"))
    assert.matches("device:CPU:0$", s:placement("y"))
    -- pinned to the CPU, which has no kernel for it: an error naming the node, unless soft placement
    local pinned = { node = {
      node("x", "Placeholder", nil, { attr = { dtype = "float32" } }),
      node("w", "LuaOnLuaDev", { "x" }, { device = "/device:CPU:0" }),
    } }
    h.raises("INVALID_ARGUMENT", "Cannot assign a device for operation w: Could not satisfy explicit device " ..
      "specification '/device:CPU:0' because no supported kernel for CPU devices is available.", function()
      local s2 <close> = tfdev.session()
      s2:create(pinned)
      s2:run({ x = X }, "w")
    end)
  end)

  it("run their kernels from async runs, across partitions, when the caller waits", function()
    tfdev.op.register {
      name = "LuaTwice", inputs = 1, outputs = 1,
      kernel = function(x) return tfdev.tensor(map(x, function(v) return 2 * v end), "float32") end,
    }
    local s <close> = tfdev.session { device_count = { CPU = 2 } }
    s:create { node = {
      node("x", "Placeholder", nil, { attr = { dtype = "float32" } }),
      node("sq", "Square", { "x" }, { device = "/device:CPU:1" }),
      node("t", "LuaTwice", { "sq" }, { device = "/device:CPU:1" }),
      node("y", "Neg", { "t" }, { device = "/device:CPU:0" }),
    } }
    for _ = 1, 10 do assert.are.same({ -2, 0, -8 }, s:run({ x = X }, "y"):totable()) end
    local f = s:run_async({ x = X }, "y")
    assert.are.same({ -2, 0, -8 }, f:result():totable())
    local polled = s:run_async({ x = X }, "y")
    while not polled:ready() do end
    assert.are.same({ -2, 0, -8 }, polled:result():totable())
  end)
end)

describe("C plug-ins", function()
  it("add ops and kernels to the runtime that loads them", function()
    if not exe then return pending("TFDEV_EXE is not set") end
    local dir = exe:match("^(.*)/bin/[^/]*$")
    local plugin = dir .. "/tests/libtfdev_test_plugin_current.so"
    local script = os.tmpname()
    local f = assert(io.open(script, "w"))
    f:write(([[
      local tfdev = require "tfdev"
      assert(not tfdev.op.exists("Scale"))
      assert(tfdev.factory.priority("PLUGDEV") == -1)
      tfdev.load_plugin(%q)
      tfdev.op.load_plugin(%q)   -- again (the same function): nothing happens
      assert(tfdev.factory.priority("PLUGDEV") == 5, "the plug-in's factory is in this state's registry")
      assert(tfdev.op.exists("Scale", "PLUGDEV"))
      local s <close> = tfdev.session()
      s:create { node = {
        { name = "x", op = "Placeholder", attr = { dtype = "float32" } },
        { name = "y", op = "Scale", input = { "x" }, attr = { factor = 4.0 } },
      } }
      io.write(table.concat(s:run({ x = tfdev.tensor({ 1, 2 }, "float32") }, "y"):totable(), " "), "\n")
      assert(s:placement("y"):match("CPU:0$"))  -- CPU (60) outranks PLUGDEV (5)
      local ok, err = pcall(tfdev.op.load_plugin, "/nonexistent/plugin.so")
      io.write(err.code, "\n")
    ]]):format(plugin, plugin))
    f:close()
    local p = assert(io.popen(exe .. " " .. script .. " 2>&1"))
    local out = p:read("a")
    p:close()
    os.remove(script)
    assert.are.equal("4.0 8.0\nNOT_FOUND\n", out)
  end)
end)
