-- The GPU device path seen from Lua, against the fake GPU backend (libtfdev_fakegpu.so, loaded by
-- ctest with TFDEV_BACKENDS=fakegpu): "GPU" devices at 210 whose memory the host must not touch
-- (it holds every byte inverted), so each value below is right only if the runtime copied it in and
-- out where it should. ctest loads it with TFDEV_FAKE_GPU_MATH=0, a GPU without device math as before
-- device kernels: ops that only move data run on the GPU; the rest fall back to the CPU.
-- (spec/device_kernels_spec.lua runs the GPU with its math and kernels.)
local tfdev = require "tfdev"
local h = require "spec.support.helpers"

local exe = os.getenv("TFDEV_EXE")
local GPU0 = "/job:localhost/replica:0/task:0/device:GPU:0"

local function fake()
  for _, b in ipairs(tfdev.backends()) do if b.name == "fakegpu" then return b end end
end

local function node(name, op, inputs, device, attr)
  return { name = name, op = op, input = inputs, device = device, attr = attr }
end

-- x (fed) -> Identity (GPU) -> Reshape (GPU, int32 shape) -> Square (CPU: no GPU kernel) -> Identity (GPU)
local function mixed_graph()
  return { node = {
    node("x", "Placeholder", nil, nil, { dtype = "float32" }),
    node("a", "Identity", { "x" }, "/device:GPU:0"),
    node("shape", "Const", nil, "/device:GPU:0", { value = tfdev.tensor({ 3, 2 }, "int32") }),
    node("r", "Reshape", { "a", "shape" }, "/device:GPU:0"),
    node("sq", "Square", { "r" }),
    node("back", "Identity", { "sq" }, "/device:GPU:0"),
    node("dims", "Const", nil, "/device:GPU:0", { value = tfdev.tensor({ 2, 2 }, "int64") }),
    node("v", "Const", nil, "/device:GPU:0", { value = tfdev.tensor(7.5, "float32") }),
    node("f", "Fill", { "dims", "v" }, "/device:GPU:0"),
    node("z", "ZerosLike", { "f" }, "/device:GPU:0"),
  } }
end

describe("a GPU device (fake backend)", function()
  it("is loaded as a backend and makes GPU devices at 210", function()
    local b = fake()
    assert.is_table(b)
    assert.is_true(b.loaded)
    assert.are.equal(1, b.num_devices)
    assert.are.equal(210, tfdev.factory.priority("GPU"))
    local s <close> = tfdev.session()
    local gpu
    for _, d in ipairs(s:devices()) do if d.device_type == "GPU" then gpu = d end end
    assert.is_not_nil(gpu)
    assert.are.equal(GPU0, gpu.name)
    assert.matches("name: tfdev fake GPU", gpu.physical_device_desc)
  end)

  it("runs a graph split between CPU and GPU, feeding and fetching GPU tensors", function()
    local s <close> = tfdev.session()
    s:create(mixed_graph())
    local x = tfdev.tensor({ { 1, 2, 3 }, { 4, 5, 6 } }, "float32")
    local out, meta = s:run({ x = x }, { "sq", "r", "back", "f", "z" }, nil,
      { trace = true, output_partition_graphs = true })
    local sq, r, back, f, z = table.unpack(out)
    assert.are.same({ { 1, 4 }, { 9, 16 }, { 25, 36 } }, sq:totable())
    assert.are.same({ { 1, 2 }, { 3, 4 }, { 5, 6 } }, r:totable())
    assert.are.same(sq:totable(), back:totable())
    assert.are.same({ { 7.5, 7.5 }, { 7.5, 7.5 } }, f:totable())
    assert.are.same({ { 0, 0 }, { 0, 0 } }, z:totable())
    -- The GPU ran the data movement and the CPU the Square, with _Send/_Recv between them.
    local ran = {}
    for _, d in ipairs(meta.step_stats.dev_stats) do
      for _, n in ipairs(d.node_stats) do ran[n.node_name] = d.device end
    end
    assert.are.equal(GPU0, ran.a)
    assert.are.equal(GPU0, ran.r)
    assert.are.equal(GPU0, ran.f)
    assert.matches("device:CPU:0$", ran.sq)
    local recvs = 0
    for _, g in ipairs(meta.partition_graphs) do
      for _, n in ipairs(g.node) do if n.op == "_Recv" then recvs = recvs + 1 end end
    end
    assert.is_true(recvs >= 2)
  end)

  it("runs the data-movement ops eagerly on the GPU and returns host tensors", function()
    local s <close> = tfdev.session()
    local gpu = s:device_mgr():lookup(GPU0)
    local filled = gpu:compute("Fill", { tfdev.tensor({ 2, 3 }, "int32"), tfdev.tensor(2.5, "float32") })
    assert.are.same({ { 2.5, 2.5, 2.5 }, { 2.5, 2.5, 2.5 } }, filled:totable())
    local ones = gpu:compute("OnesLike", { filled })
    assert.are.same({ { 1, 1, 1 }, { 1, 1, 1 } }, ones:totable())
    local flat = gpu:compute("Reshape", { filled, tfdev.tensor({ 6 }, "int64") })
    assert.are.same({ 6 }, flat.shape)
    h.raises("NOT_FOUND", "no GPU kernel for op Square on " .. GPU0, gpu.compute, gpu, "Square", { filled })
  end)

  it("fails a graph pinned to a GPU it lacks, and with soft placement runs it on the CPU", function()
    local g = { node = {
      node("c", "Const", nil, "/device:GPU:3", { value = tfdev.tensor(2, "float32") }),
      node("sq", "Square", { "c" }, "/device:GPU:0"),
    } }
    local strict <close> = tfdev.session()
    -- c (a generator) is placed after its consumer, so TensorFlow names sq
    h.raises("INVALID_ARGUMENT", "Cannot assign a device for operation sq: Could not satisfy explicit device " ..
      "specification '/device:GPU:0' because no supported kernel for GPU devices is available.", function()
      strict:create(g)
      strict:run({}, "sq")
    end)
    local soft <close> = tfdev.session { allow_soft_placement = true }
    soft:create(g)
    assert.are.equal(4, soft:run({}, "sq"):item())
  end)

  it("logs every node soft placement moves off the GPU", function()
    if not exe then return pending("TFDEV_EXE is not set") end
    local script = os.tmpname()
    local f = assert(io.open(script, "w"))
    f:write([[
      local tfdev = require "tfdev"
      local s <close> = tfdev.session { allow_soft_placement = true }
      s:create { node = {
        { name = "c", op = "Const", device = "/device:GPU:0", attr = { value = tfdev.tensor(3, "float32") } },
        { name = "sq", op = "Square", input = { "c" }, device = "/device:GPU:0" },
        { name = "ex", op = "Exp", input = { "sq" }, device = "/device:GPU:0" },
      } }
      local out = s:run({}, { "sq", "ex" })
      io.write(string.format("%g", out[1]:item()), "\n")
    ]])
    f:close()
    local p = assert(io.popen("TFDEV_LOG=info " .. exe .. " " .. script .. " 2>&1"))
    local out = p:read("a")
    p:close()
    os.remove(script)
    assert.matches("soft placement: node 'sq' %(Square%) asked for '/device:GPU:0'", out)
    assert.matches("soft placement: node 'ex' %(Exp%) asked for '/device:GPU:0'", out)
    assert.is_nil(out:find("node 'c' (Const)", 1, true)) -- Const has a GPU kernel: it stays
    assert.matches("9\n$", out)
  end)

  it("waits for the GPU after each node with gpu.sync_every_op", function()
    if not exe then return pending("TFDEV_EXE is not set") end
    local script = os.tmpname()
    local f = assert(io.open(script, "w"))
    f:write([[
      local tfdev = require "tfdev"
      for _, on in ipairs { false, true } do
        local s <close> = tfdev.session { gpu = { sync_every_op = on } }
        s:create { node = {
          { name = "c", op = "Const", device = "/device:GPU:0", attr = { value = tfdev.tensor(3, "float32") } },
          { name = "sq", op = "Square", input = { "c" } },
        } }
        local ok, err = pcall(s.run, s, {}, "sq")
        io.write(tostring(on), " ", ok and string.format("%g", err:item()) or err.message, "\n")
      end
    ]])
    f:close()
    local p = assert(io.popen("TFDEV_FAKE_GPU_FAIL_SYNC=1 " .. exe .. " " .. script .. " 2>&1"))
    local out = p:read("a")
    p:close()
    os.remove(script)
    assert.matches("false 9\n", out, 1, true)
    assert.matches("true node 'c' %(Const%): sync_every_op: " .. GPU0:gsub("%p", "%%%0") .. ": fake device fault", out)
  end)

  it("keeps a loop on the CPU and carries a conditional's dead branch through the GPU", function()
    local function i32(v) return tfdev.tensor(v, "int32") end
    local loop, const = { frame_name = "count" }, { frame_name = "count", is_constant = true }
    local s <close> = tfdev.session { allow_soft_placement = true }
    s:create { node = {
      { name = "zero", op = "Const", attr = { value = i32(0) } },
      { name = "n", op = "Const", attr = { value = i32(3) } },
      { name = "one", op = "Const", attr = { value = i32(1) } },
      { name = "enter", op = "Enter", input = { "zero" }, attr = loop },
      { name = "limit", op = "Enter", input = { "n" }, attr = const },
      { name = "step", op = "Enter", input = { "one" }, attr = const },
      { name = "merge", op = "Merge", input = { "enter", "next" } },
      { name = "less", op = "Less", input = { "merge", "limit" } },
      { name = "cond", op = "LoopCond", input = { "less" } },
      { name = "switch", op = "Switch", input = { "merge", "cond" } },
      { name = "body", op = "Identity", input = { "switch:1" }, device = GPU0 }, -- the loop keeps it on the CPU
      { name = "add", op = "AddV2", input = { "body", "step" } },
      { name = "next", op = "NextIteration", input = { "add" } },
      { name = "exit", op = "Exit", input = { "switch" } },
      { name = "x", op = "Const", attr = { value = tfdev.tensor({ 1, 2 }, "float32") } },
      { name = "p", op = "Placeholder", attr = { dtype = "bool", shape = {} } },
      { name = "sw", op = "Switch", input = { "x", "p" } },
      { name = "t", op = "Identity", input = { "sw:1" }, device = GPU0 },
      { name = "f", op = "Identity", input = { "sw" }, device = GPU0 },
      { name = "m", op = "Merge", input = { "f", "t" } },
    } }
    local out = s:run({ p = tfdev.tensor(true) }, { "exit", "m", "m:1", "t" })
    assert.are.equal(3, out[1]:item())
    assert.are.same({ 1, 2 }, out[2]:totable())
    assert.are.equal(1, out[3]:item())
    assert.are.same({ 1, 2 }, out[4]:totable())
    assert.are.equal(GPU0, s:placement("t"))
    assert.are_not.equal(GPU0, s:placement("body"))
    assert.are.equal(0, s:run({ p = tfdev.tensor(false) }, "m:1"):item())
    h.raises("INTERNAL", "fetch 't:0' is dead", s.run, s, { p = tfdev.tensor(false) }, "t")
  end)
end)
