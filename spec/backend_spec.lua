-- Backend modules seen from Lua: the CUDA backend (libtfdev_cuda.so) loads at start when this build
-- made it, registers GPU (210) and the GPU-compatible CPU (70), and on a machine without a GPU makes
-- no GPU device and says why, never an error. A graph pinned to a GPU then fails, or with soft
-- placement runs on the CPU.
local tfdev = require "tfdev"
local h = require "spec.support.helpers"

local exe = os.getenv("TFDEV_EXE")

local function cuda()
  for _, b in ipairs(tfdev.backends()) do if b.name == "cuda" then return b end end
end

local function run(cmd)
  local p = assert(io.popen(cmd .. " 2>&1"))
  local out = p:read("a")
  local _, _, code = p:close()
  return out, code
end

describe("backends", function()
  after_each(function() tfdev.factory.reset() end)

  it("tries the CUDA backend at start and says what it found", function()
    local b = cuda()
    assert.is_table(b)
    if not tfdev.built_with_cuda then
      assert.is_false(b.loaded)
      assert.matches("backend not built", b.why)
      return
    end
    assert.is_true(b.loaded)
    assert.matches("libtfdev_cuda%.so$", b.path)
    local n, why = tfdev.gpu_count()
    assert.are.equal(b.num_devices, n)
    if n == 0 then
      assert.is_truthy(b.why:find("no NVIDIA driver", 1, true) or b.why:find("no CUDA device", 1, true))
      assert.are.equal(b.why, why)
    end
    assert.are.equal(210, tfdev.factory.priority("GPU"))
    assert.are.equal("GPUDeviceFactory", tfdev.factory.get("GPU").name)
    assert.are.equal(70, tfdev.factory.priority("CPU"))
    assert.are.equal("GPUCompatibleCPUDeviceFactory", tfdev.factory.get("CPU").name)
    local types = {}
    for _, d in ipairs(tfdev.factory.add_devices()) do types[#types + 1] = d.device_type end
    assert.are.equal(1 + n, #types)
    assert.are.equal("CPU", types[1])
  end)

  it("loads a backend once, and reports a missing one without raising", function()
    local first = #tfdev.backends()
    local again = tfdev.load_backend("cuda")
    assert.are.same(cuda(), again)
    assert.are.equal(first, #tfdev.backends())
    local none = tfdev.load_backend("nosuchgpu")
    assert.is_false(none.loaded)
    assert.are.equal(0, none.num_devices)
    assert.are.equal("backend not built: no libtfdev_nosuchgpu.so", none.why)
    assert.are.equal(first + 1, #tfdev.backends())
    h.raises("INVALID_ARGUMENT", "backend names are short lower-case words", tfdev.load_backend, "CUDA/../x")
  end)

  it("re-registers a backend's factories after factory.reset() by load_backend", function()
    if not (cuda() and cuda().loaded) then return pending("no CUDA backend in this build") end
    tfdev.factory.register("GPU", { create_devices = function() return {} end }, 300)
    assert.are.equal(300, tfdev.factory.priority("GPU"))
    tfdev.factory.reset()
    assert.are.equal(210, tfdev.factory.priority("GPU"))
    tfdev.load_backend("cuda") -- already there: fine
    assert.are.equal(210, tfdev.factory.priority("GPU"))
  end)

  it("fails a graph pinned to a GPU that is not there, unless soft placement is on", function()
    if tfdev.gpu_count() > 0 then return pending("this machine has a GPU") end
    local g = { node = {
      { name = "x", op = "Const", attr = { value = tfdev.tensor({ 1, 2 }, "float32") }, device = "/device:GPU:0" },
      { name = "y", op = "Neg", input = { "x" }, device = "/device:GPU:0" },
    } }
    local s <close> = tfdev.session()
    local ok, err = pcall(function() s:create(g); return s:run({}, "y") end)
    assert.is_false(ok)
    assert.are.equal("INVALID_ARGUMENT", err.code)
    assert.matches("/device:GPU:0", err.message, 1, true)
    local soft <close> = tfdev.session { allow_soft_placement = true }
    soft:create(g)
    assert.are.same({ -1, -2 }, soft:run({}, "y"):totable())
    assert.matches("CPU:0$", soft:placement("y"))
  end)

  it("says, at info level, every node that soft placement moved", function()
    if not exe or tfdev.gpu_count() > 0 then return pending("needs TFDEV_EXE and no GPU") end
    local script = os.tmpname()
    local f = assert(io.open(script, "w"))
    f:write([[
      local t = require "tfdev"
      local s = t.session { allow_soft_placement = true }
      s:create { node = {
        { name = "x", op = "Const", attr = { value = t.tensor({ 1 }, "float32") }, device = "/device:GPU:0" },
        { name = "y", op = "Neg", input = { "x" }, device = "/device:GPU:0" } } }
      print(s:run({}, "y"):totable()[1])
    ]])
    f:close()
    local out = run("TFDEV_LOG=info " .. exe .. " " .. script)
    assert.matches("soft placement: node 'y' %(Neg%) asked for '/device:GPU:0', which cannot run it here; it runs on " ..
      "/job:localhost/replica:0/task:0/device:CPU:0", out)
    assert.matches("soft placement: node 'x' %(Const%)", out)
    assert.matches("%-1%.0\n$", out)
    assert.is_nil((run(exe .. " " .. script)):find("soft placement", 1, true)) -- quiet by default
    os.remove(script)
  end)

  it("takes the GPU options, and checks them", function()
    local s <close> = tfdev.session { visible_devices = tfdev.gpu_count() == 0 and "0,0" or "",
      gpu = { memory_fraction = 0.5, allow_growth = true, sync_every_op = false, max_streams = 2 } }
    s:create { node = { { name = "c", op = "Const", attr = { value = tfdev.tensor(1, "float32") } } } }
    assert.are.equal(1, s:run({}, "c"):item())
    h.raises("INVALID_ARGUMENT", "gpu.memory_fraction must be in [0, 1] (0: the default), got 1.5", tfdev.session,
      { gpu = { memory_fraction = 1.5 } })
    h.raises("INVALID_ARGUMENT", "unknown option 'gpu.fraction' (memory_fraction, allow_growth, sync_every_op, max_streams, graphs)",
      tfdev.session, { gpu = { fraction = 0.5 } })
    h.raises("INVALID_ARGUMENT", "gpu.max_streams must be in [1, 8], got 0", tfdev.session, { gpu = { max_streams = 0 } })
    h.raises("INVALID_ARGUMENT", "option gpu.max_streams must be an integer, got number", tfdev.session,
      { gpu = { max_streams = 1.5 } })
    h.raises("INVALID_ARGUMENT", "option gpu.sync_every_op must be a boolean, got number", tfdev.session,
      { gpu = { sync_every_op = 1 } })
    h.raises("INVALID_ARGUMENT", "option gpu.allow_growth must be a boolean, got string", tfdev.session,
      { gpu = { allow_growth = "yes" } })
    h.raises("INVALID_ARGUMENT", "option visible_devices must be a string", tfdev.session, { visible_devices = 0 })
  end)

  it("lists backends with tfdev --list-devices, and none with TFDEV_BACKENDS=none", function()
    if not exe then return pending("TFDEV_EXE is not set") end
    local out, code = run(exe .. " --list-devices")
    assert.are.equal(0, code)
    assert.matches("^backend cuda: ", out)
    assert.matches("/job:localhost/replica:0/task:0/device:CPU:0", out, 1, true)
    out, code = run("TFDEV_BACKENDS=none " .. exe .. " -e \"local t = require 'tfdev'; print(#t.backends(), " ..
      "t.factory.priority('CPU'), t.factory.priority('GPU'))\"")
    assert.are.equal(0, code)
    assert.are.equal("0\t60\t-1\n", out)
    out = run("TFDEV_BACKENDS=none TFDEV_LOG=info " .. exe .. " --list-devices")
    assert.matches("^no backends tried", out)
    if tfdev.built_with_cuda and tfdev.gpu_count() == 0 then -- the reason is one info line, only when asked for
      out = run("TFDEV_LOG=info " .. exe .. " -e \"require 'tfdev'\"")
      assert.matches("^tfdev info: backend cuda: 0 devices: no", out)
      assert.are.equal("", (run(exe .. " -e \"require 'tfdev'\"")))
    end
  end)
end)
