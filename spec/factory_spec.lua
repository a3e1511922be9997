-- tfdev.factory: registration rules, Lua factories, AddDevices and NewDevice.
local tfdev = require "tfdev"
local h = require "spec.support.helpers"

local PREFIX = "/job:localhost/replica:0/task:0"

-- A factory written in Lua: CPU-backed devices of `type`, device_count[type] of them.
local function lua_factory(type, name)
  return {
    name = name or ("Lua" .. type .. "Factory"),
    calls = 0,
    create_devices = function(self, options, prefix)
      self.calls = self.calls + 1
      self.last_options = options
      local n = (options.device_count or {})[type] or 1
      local devices = {}
      for i = 0, n - 1 do
        devices[#devices + 1] = tfdev.device.cpu { name = string.format("%s/device:%s:%d", prefix, type, i),
          device_type = type, threads = 1 }
      end
      return devices
    end,
  }
end

describe("tfdev.factory", function()
  before_each(function() tfdev.factory.reset() end)
  after_each(function() tfdev.factory.reset() end)

  it("has the thread-pool CPU factory built in at priority 60", function()
    assert.are.equal(60, tfdev.factory.priority("CPU"))
    assert.are.same({ { type = "CPU", priority = 60, name = "ThreadPoolDeviceFactory" } }, tfdev.factory.list())
    local f = tfdev.factory.get("CPU")
    assert.are.equal("ThreadPoolDeviceFactory", f.name)
    assert.are.equal(f, tfdev.factory.get("CPU"))
    assert.is_nil(tfdev.factory.get("TPU"))
    assert.are.equal(-1, tfdev.factory.priority("TPU"))
  end)

  it("closes factory and resource manager handles with close() and <close>, twice harmlessly", function()
    local kept
    do
      local f <close> = tfdev.factory.get("CPU")
      kept = f
    end
    assert.are.equal("tfdev.factory(closed)", tostring(kept))
    kept:close()
    h.raises("FAILED_PRECONDITION", "factory handle is closed", function() return kept.name end)
    local d <close> = tfdev.factory.new_device("CPU")
    local rm = d:resource_manager()
    rm:close()
    rm:close()
    h.raises("FAILED_PRECONDITION", "resource manager handle is closed", rm.containers, rm)
    do
      local rm2 <close> = d:resource_manager()
      kept = rm2
    end
    assert.are.equal("tfdev.resource_mgr(closed)", tostring(kept))
  end)

  describe("register", function()
    it("lets a higher priority replace, ignores a lower one", function()
      local a, b, c = lua_factory("CPU", "A"), lua_factory("CPU", "B"), lua_factory("CPU", "C")
      tfdev.factory.register("CPU", a, 125)
      assert.are.equal(a, tfdev.factory.get("CPU"))
      tfdev.factory.register("CPU", b, 150)
      assert.are.equal(b, tfdev.factory.get("CPU"))
      tfdev.factory.register("CPU", c, 100)
      assert.are.equal(b, tfdev.factory.get("CPU"))
      assert.are.equal(150, tfdev.factory.priority("CPU"))
    end)

    it("refuses an equal priority with ALREADY_EXISTS", function()
      tfdev.factory.register("XPU", lua_factory("XPU"), 70)
      h.raises("ALREADY_EXISTS", "Duplicate registration of device factory for type XPU with the same priority 70",
        tfdev.factory.register, "XPU", lua_factory("XPU"), 70)
      h.raises("ALREADY_EXISTS", "same priority 60", tfdev.factory.register, "CPU", lua_factory("CPU"), 60)
    end)

    it("defaults the priority to 50", function()
      tfdev.factory.register("XPU", lua_factory("XPU"))
      assert.are.equal(50, tfdev.factory.priority("XPU"))
      assert.are.equal(50, tfdev.factory.DEFAULT_PRIORITY)
    end)

    it("refuses bad arguments", function()
      h.raises("INVALID_ARGUMENT", "has no create_devices function", tfdev.factory.register, "XPU", {}, 10)
      h.raises("INVALID_ARGUMENT", "must be a table with create_devices", tfdev.factory.register, "XPU", 42, 10)
      h.raises("INVALID_ARGUMENT", "invalid device type 'bad type'", tfdev.factory.register, "bad type", lua_factory("X"))
      h.raises("INVALID_ARGUMENT", "priority must be an integer", tfdev.factory.register, "XPU", lua_factory("X"), 1.5)
    end)

    it("accepts a built-in factory under another type", function()
      tfdev.factory.register("HOST", tfdev.factory.get("CPU"), 10)
      assert.are.equal(tfdev.factory.get("CPU"), tfdev.factory.get("HOST"))
    end)

    it("lists factories by priority, then type", function()
      tfdev.factory.register("ZZZ", lua_factory("ZZZ"), 60)
      tfdev.factory.register("GPU", lua_factory("GPU", "FakeGPU"), 210)
      local rows = tfdev.factory.list()
      assert.are.same({ "GPU", "CPU", "ZZZ" }, { rows[1].type, rows[2].type, rows[3].type })
      assert.are.equal("FakeGPU", rows[1].name)
    end)
  end)

  describe("add_devices", function()
    it("makes one CPU device by default, named under the prefix", function()
      local ds = tfdev.factory.add_devices()
      assert.are.equal(1, #ds)
      assert.are.equal(PREFIX .. "/device:CPU:0", ds[1].name)
      assert.are.equal(256 * 1024 * 1024, ds[1].memory_limit)
    end)

    it("honours device_count.CPU and the prefix", function()
      local ds = tfdev.factory.add_devices({ device_count = { CPU = 3 } }, "/job:w/replica:0/task:7")
      assert.are.equal(3, #ds)
      assert.are.equal("/job:w/replica:0/task:7/device:CPU:2", ds[3].name)
    end)

    it("uses a Lua factory registered for CPU at priority 150", function()
      local mine = lua_factory("CPU", "MyCPU")
      tfdev.factory.register("CPU", mine, 150)
      assert.are.equal(mine, tfdev.factory.get("CPU"))
      local options = { device_count = { CPU = 2 }, intra_op_threads = 1 }
      local ds = tfdev.factory.add_devices(options)
      assert.are.equal(1, mine.calls)
      assert.are.equal(options, mine.last_options) -- the caller's very table
      assert.are.equal(2, #ds)
      assert.are.equal(PREFIX .. "/device:CPU:1", ds[2].name)
      assert.are.equal(1, ds[1].num_threads) -- made by the Lua factory (threads = 1)
    end)

    it("adds CPU devices first, then the others by priority", function()
      local acc = lua_factory("ACC")
      tfdev.factory.register("ACC", acc, 300)
      local ds = tfdev.factory.add_devices { device_count = { ACC = 2 } }
      assert.are.same({ "CPU", "ACC", "ACC" }, { ds[1].device_type, ds[2].device_type, ds[3].device_type })
    end)

    it("fails without a CPU factory or without CPU devices", function()
      h.raises("NOT_FOUND", "No CPU devices are available", tfdev.factory.add_devices, { device_count = { CPU = 0 } })
      tfdev.factory.register("CPU", { create_devices = function() return {} end }, 1000)
      h.raises("NOT_FOUND", "No CPU devices are available", tfdev.factory.add_devices)
    end)

    it("reports a Lua factory that raises, keeping a tfdev.error's code", function()
      tfdev.factory.register("ACC", { name = "Broken", create_devices = function() error("driver missing") end }, 300)
      local err = h.raises("UNKNOWN", "device factory 'Broken' for type ACC: create_devices raised:",
        tfdev.factory.add_devices)
      assert.truthy(err.message:find("driver missing", 1, true))
      tfdev.factory.register("ACC", {
        create_devices = function() error(tfdev.error.new("UNAVAILABLE", "no accelerator")) end }, 400)
      h.raises("UNAVAILABLE", "create_devices raised: no accelerator", tfdev.factory.add_devices)
    end)

    it("reports a Lua factory that returns garbage", function()
      tfdev.factory.register("ACC", { create_devices = function() return "devices" end }, 300)
      h.raises("INVALID_ARGUMENT", "create_devices returned a string, expected a list of devices",
        tfdev.factory.add_devices)
      tfdev.factory.register("ACC", { create_devices = function() return { tfdev.device.cpu { name = PREFIX ..
        "/device:CPU:9" }, 42 } end }, 400)
      h.raises("INVALID_ARGUMENT", "returned a number at index 2, expected a tfdev.device", tfdev.factory.add_devices)
    end)

    it("refuses bad options", function()
      h.raises("INVALID_ARGUMENT", "unknown option 'device_cuont' (options: device_count, intra_op_threads,",
        tfdev.factory.add_devices, { device_cuont = {} })
      h.raises("INVALID_ARGUMENT", "device_count names device type 'cpu', which no registered device factory makes " ..
        "(device types: CPU", tfdev.factory.add_devices, { device_count = { cpu = 2 } })
      h.raises("INVALID_ARGUMENT", "device_count names device type 'TPU'", tfdev.session, { device_count = { TPU = 1 } })
      assert.are.equal(1, #tfdev.factory.add_devices { device_count = { GPU = 0 } }) -- GPU: known here or not
      h.raises("INVALID_ARGUMENT", "option device_count.CPU must be an integer", tfdev.factory.add_devices,
        { device_count = { CPU = -1 } })
      h.raises("INVALID_ARGUMENT", "option intra_op_threads must be a number", tfdev.factory.add_devices,
        { intra_op_threads = "many" })
      h.raises("INVALID_ARGUMENT", "options must be a table", tfdev.factory.add_devices, "CPU")
      h.raises("INVALID_ARGUMENT", "could not parse device name '/job:a/bogus/device:CPU:0'",
        tfdev.factory.add_devices, nil, "/job:a/bogus")
    end)

    it("sizes the intra-op pool from the options", function()
      local ds = tfdev.factory.add_devices { intra_op_threads = 3, use_global_threadpool = false }
      assert.are.equal(3, ds[1].num_threads)
      assert.truthy(ds[1].physical_device_desc:find("intra-op threads: 3 (own pool)", 1, true))
    end)
  end)

  describe("new_device", function()
    it("makes exactly one device of a type", function()
      local d = tfdev.factory.new_device("CPU", { device_count = { CPU = 4 } }, "/job:w/replica:0/task:2")
      assert.are.equal("/job:w/replica:0/task:2/device:CPU:0", d.name)
      local acc = lua_factory("ACC")
      tfdev.factory.register("ACC", acc, 20)
      local a = tfdev.factory.new_device("ACC", { device_count = { ACC = 5 } })
      assert.are.equal(1, acc.last_options.device_count.ACC)
      assert.are.equal(PREFIX .. "/device:ACC:0", a.name)
    end)

    it("fails for an unknown type", function()
      h.raises("NOT_FOUND", "no device factory registered for device type 'TPU'", tfdev.factory.new_device, "TPU")
    end)
  end)

  it("lets a built-in factory create devices directly", function()
    local ds = tfdev.factory.get("CPU"):create_devices({ device_count = { CPU = 2 } }, "/job:x/replica:0/task:0")
    assert.are.equal(2, #ds)
    assert.are.equal("/job:x/replica:0/task:0/device:CPU:1", ds[2].name)
  end)

  it("keeps registrations per Lua state: reset restores the built-ins", function()
    tfdev.factory.register("CPU", lua_factory("CPU"), 150)
    tfdev.factory.reset()
    assert.are.equal(60, tfdev.factory.priority("CPU"))
    assert.are.equal("ThreadPoolDeviceFactory", tfdev.factory.get("CPU").name)
  end)
end)
