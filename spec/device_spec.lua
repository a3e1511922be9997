-- Devices through Lua: attributes, tfdev.device.cpu / renamed, allocator limits, resource managers.
local tfdev = require "tfdev"
local h = require "spec.support.helpers"

local PREFIX = "/job:localhost/replica:0/task:0"

describe("tfdev.device", function()
  it("exposes DeviceAttributes as read-only fields and a table", function()
    local d = tfdev.factory.add_devices()[1]
    assert.are.equal(PREFIX .. "/device:CPU:0", d.name)
    assert.are.equal("CPU", d.device_type)
    assert.are.equal(268435456, d.memory_limit)
    assert.are.equal(0, d.bus_id)
    assert.is_true(math.type(d.incarnation) == "integer" and d.incarnation > 0)
    assert.are.same({ job = "localhost", replica = 0, task = 0, type = "CPU", id = 0 }, d.parsed_name)
    local a = d:attributes()
    assert.are.same({ name = d.name, device_type = "CPU", memory_limit = 268435456, locality = { bus_id = 0 },
      incarnation = d.incarnation, physical_device_desc = d.physical_device_desc }, a)
    assert.truthy(d.physical_device_desc:find("device: 0, name: ", 1, true))
    h.raises("INVALID_ARGUMENT", "read-only (tried to set 'name')", function() d.name = "x" end)
    assert.is_nil(d.no_such_field)
  end)

  it("prints a debug string in TensorFlow's text format", function()
    local d = tfdev.device.cpu { name = PREFIX .. "/device:CPU:4", memory_limit = 1024, bus_id = 2,
      physical_device_desc = "test cpu" }
    assert.are.equal(string.format(
      'name: "%s/device:CPU:4"\ndevice_type: "CPU"\nmemory_limit: 1024\nlocality {\n  bus_id: 2\n}\n' ..
      'incarnation: %d\nphysical_device_desc: "test cpu"\n', PREFIX, d.incarnation), d:debug_string())
    assert.are.equal("tfdev.device(" .. PREFIX .. "/device:CPU:4)", tostring(d))
  end)

  it("gives every device a unique non-zero incarnation", function()
    local seen = {}
    for i = 1, 200 do
      local d = tfdev.device.cpu { name = PREFIX .. "/device:CPU:" .. i }
      assert.is_nil(seen[d.incarnation])
      assert.is_true(d.incarnation ~= 0)
      seen[d.incarnation] = true
    end
  end)

  it("syncs", function()
    assert.is_true(tfdev.device.cpu { name = PREFIX .. "/device:CPU:0" }:sync())
  end)

  describe("tfdev.device.cpu", function()
    it("accepts legacy spellings and stores the full name", function()
      assert.are.equal(PREFIX .. "/device:CPU:3", tfdev.device.cpu { name = PREFIX .. "/cpu:3" }.name)
    end)

    it("owns a pool of the asked size", function()
      local d = tfdev.device.cpu { name = PREFIX .. "/device:CPU:0", threads = 3 }
      assert.are.equal(3, d.num_threads)
    end)

    it("refuses bad configurations", function()
      h.raises("INVALID_ARGUMENT", "'name' (a full device name) is required", tfdev.device.cpu, {})
      h.raises("INVALID_ARGUMENT", "is not complete", tfdev.device.cpu, { name = "/device:CPU:0" })
      h.raises("INVALID_ARGUMENT", "could not parse device name 'cpu0'", tfdev.device.cpu, { name = "cpu0" })
      h.raises("INVALID_ARGUMENT", "does not name a CPU device", tfdev.device.cpu, { name = PREFIX .. "/device:GPU:0" })
      h.raises("INVALID_ARGUMENT", "threads must be an integer in [1, 1024]", tfdev.device.cpu,
        { name = PREFIX .. "/device:CPU:0", threads = 0 })
      h.raises("INVALID_ARGUMENT", "memory_limit must be a positive integer", tfdev.device.cpu,
        { name = PREFIX .. "/device:CPU:0", memory_limit = -5 })
    end)
  end)

  describe("tfdev.device.renamed", function()
    it("keeps type, id and attributes under the new name", function()
      local u = tfdev.device.cpu { name = PREFIX .. "/device:CPU:3", memory_limit = 4096 }
      local r = tfdev.device.renamed(u, "/job:worker/replica:2/task:5")
      assert.are.equal("/job:worker/replica:2/task:5/device:CPU:3", r.name)
      assert.are.equal("CPU", r.device_type)
      assert.are.equal(4096, r.memory_limit)
      assert.are.equal(u.incarnation, r.incarnation)
      assert.are.equal(u.physical_device_desc, r.physical_device_desc)
    end)

    it("keeps the device it wraps alive", function()
      local r = tfdev.device.renamed(tfdev.device.cpu { name = PREFIX .. "/device:CPU:1" }, "/job:w/replica:0/task:0")
      collectgarbage()
      collectgarbage()
      assert.is_true(r:sync())
      local t = tfdev.tensor { shape = { 4 }, device = r }
      assert.are.equal(16, r:allocator_stats().bytes_in_use)
      t:close()
    end)

    it("refuses an incomplete base", function()
      local u = tfdev.device.cpu { name = PREFIX .. "/device:CPU:0" }
      h.raises("INVALID_ARGUMENT", "must name a job, replica and task", tfdev.device.renamed, u, "/job:w")
      h.raises("INVALID_ARGUMENT", "could not parse", tfdev.device.renamed, u, "w")
    end)
  end)

  describe("allocator", function()
    it("keeps statistics and enforces memory_limit with RESOURCE_EXHAUSTED", function()
      local d = tfdev.device.cpu { name = PREFIX .. "/device:CPU:0", memory_limit = 4096 }
      local a = tfdev.tensor { dtype = "float32", shape = { 512 }, device = d } -- 2048 bytes
      local b = tfdev.tensor { dtype = "float64", shape = { 128 }, device = d } -- 1024 bytes
      local s = d:allocator_stats()
      assert.are.equal(3072, s.bytes_in_use)
      assert.are.equal(2, s.num_allocs)
      assert.are.equal(2048, s.largest_alloc_size)
      assert.are.equal(4096, s.bytes_limit)
      h.raises("RESOURCE_EXHAUSTED", "OOM when allocating 2048 bytes on allocator '" .. PREFIX .. "/device:CPU:0'",
        tfdev.tensor, { dtype = "float32", shape = { 512 }, device = d })
      a:close()
      s = d:allocator_stats()
      assert.are.equal(1024, s.bytes_in_use)
      assert.are.equal(3072, s.peak_bytes_in_use)
      assert.are.equal(1, s.num_refused)
      local c = tfdev.tensor { dtype = "float32", shape = { 512 }, device = d }
      assert.are.equal(3072, d:allocator_stats().bytes_in_use)
      b:close(); c:close()
    end)

    it("frees tensor memory when the tensor is collected", function()
      local d = tfdev.device.cpu { name = PREFIX .. "/device:CPU:0" }
      do local _ = tfdev.tensor { shape = { 1000 }, device = d } end
      collectgarbage()
      collectgarbage()
      assert.are.equal(0, d:allocator_stats().bytes_in_use)
    end)
  end)

  describe("resource manager", function()
    it("keeps named tensors in containers", function()
      local d = tfdev.device.cpu { name = PREFIX .. "/device:CPU:0" }
      local rm = d:resource_manager()
      assert.are.equal("localhost", rm.default_container)
      rm:create(nil, "w", tfdev.tensor { 1, 2, 3 })
      rm:create("train", "w", tfdev.tensor { 4 })
      assert.are.same({ 1, 2, 3 }, rm:lookup(nil, "w"):totable())
      assert.are.same({ 4 }, rm:lookup("train", "w"):totable())
      assert.are.same({ "localhost", "train" }, rm:containers())
      h.raises("ALREADY_EXISTS", "localhost/w of type Tensor already exists", rm.create, rm, nil, "w", tfdev.tensor { 0 })
      h.fails("NOT_FOUND", "resource other/w of type Tensor does not exist", rm:lookup("other", "w"))
      rm:cleanup("train")
      assert.are.same({ "localhost" }, rm:containers())
      rm:delete(nil, "w")
      h.raises("NOT_FOUND", "does not exist", rm.delete, rm, nil, "w")
      h.raises("INVALID_ARGUMENT", "resource name must not be empty", rm.create, rm, nil, "", tfdev.tensor { 0 })
    end)

    it("is shared with a renamed device", function()
      local d = tfdev.device.cpu { name = PREFIX .. "/device:CPU:0" }
      local r = tfdev.device.renamed(d, "/job:w/replica:0/task:0")
      d:resource_manager():create(nil, "v", tfdev.tensor { 7 })
      assert.are.same({ 7 }, r:resource_manager():lookup(nil, "v"):totable())
    end)
  end)

  it("refuses use after close", function()
    local d = tfdev.device.cpu { name = PREFIX .. "/device:CPU:0" }
    d:close()
    assert.are.equal("tfdev.device(closed)", tostring(d))
    h.raises("FAILED_PRECONDITION", "device handle is closed", function() return d.name end)
    d:close() -- twice is harmless
  end)

  it("closes with <close>", function()
    local d2
    do
      local d <close> = tfdev.device.cpu { name = PREFIX .. "/device:CPU:0" }
      d2 = d
    end
    h.raises("FAILED_PRECONDITION", "closed", function() return d2:sync() end)
  end)

  it("hands out the same handle for the same device", function()
    local ds = tfdev.factory.add_devices { device_count = { CPU = 2 } }
    local m = tfdev.device_mgr(ds)
    assert.are.equal(ds[2], m:lookup("CPU:1"))
    assert.is_true(rawequal(ds[2], m:list()[2]))
  end)
end)
