-- tfdev.device_set and tfdev.device_mgr through Lua.
local tfdev = require "tfdev"
local h = require "spec.support.helpers"

local PREFIX = "/job:localhost/replica:0/task:0"

local function cpu(name, type)
  return tfdev.device.cpu { name = name, device_type = type, threads = 1 }
end

describe("tfdev.device_set", function()
  before_each(function() tfdev.factory.reset() end)
  after_each(function() tfdev.factory.reset() end)

  it("finds devices by full and legacy name", function()
    local a, b = cpu "/job:a/replica:0/task:0/device:CPU:0", cpu "/job:a/replica:0/task:1/device:CPU:0"
    local s = tfdev.device_set { a, b }
    assert.are.equal(2, #s)
    assert.are.equal(b, s:find_by_name("/job:a/replica:0/task:1/device:CPU:0"))
    assert.are.equal(b, s:find_by_name("/job:a/replica:0/task:1/cpu:0"))
    assert.is_nil(s:find_by_name("/job:a/replica:0/task:9/cpu:0"))
    assert.are.same({ a, b }, s:devices())
  end)

  it("finds devices matching a spec", function()
    local a, b = cpu "/job:a/replica:0/task:0/device:CPU:0", cpu "/job:b/replica:0/task:0/device:CPU:1"
    local s = tfdev.device_set { a, b }
    assert.are.same({ a }, s:find_matching "/job:a")
    assert.are.same({ a, b }, s:find_matching "/device:CPU:*")
    assert.are.same({ b }, s:find_matching { id = 1 })
    assert.are.same({}, s:find_matching "/device:GPU:0")
    h.raises("INVALID_ARGUMENT", "could not parse", s.find_matching, s, "??")
  end)

  it("orders device types by factory priority, then name", function()
    tfdev.factory.register("GPU", { create_devices = function() return {} end }, 210)
    tfdev.factory.register("XPU", { create_devices = function() return {} end }, 60)
    local s = tfdev.device_set {
      cpu(PREFIX .. "/device:XPU:0", "XPU"), cpu(PREFIX .. "/device:CPU:0"), cpu(PREFIX .. "/device:ABC:0", "ABC"),
      cpu(PREFIX .. "/device:GPU:0", "GPU"), cpu(PREFIX .. "/device:CPU:1"),
    }
    assert.are.same({ "GPU", "CPU", "XPU", "ABC" }, s:prioritized_types())
    tfdev.factory.register("ABC", { create_devices = function() return {} end }, 500)
    assert.are.same({ "ABC", "GPU", "CPU", "XPU" }, s:prioritized_types())
  end)

  it("holds a client device that must be a member", function()
    local a = cpu(PREFIX .. "/device:CPU:0")
    local s = tfdev.device_set { a }
    assert.is_nil(s:client_device())
    s:set_client_device(a)
    assert.are.equal(a, s:client_device())
    h.raises("NOT_FOUND", "not in the device set", s.set_client_device, s, cpu(PREFIX .. "/device:CPU:1"))
  end)

  it("refuses duplicates and non-devices", function()
    local a = cpu(PREFIX .. "/device:CPU:0")
    local s = tfdev.device_set()
    s:add(a)
    h.raises("ALREADY_EXISTS", "already holds a device named '" .. PREFIX .. "/device:CPU:0'", s.add, s, a)
    h.raises("INVALID_ARGUMENT", "element 2 is a string, expected a tfdev.device", tfdev.device_set, { a, "CPU" })
    h.raises("INVALID_ARGUMENT", "must be a list of devices", tfdev.device_set, 5)
  end)
end)

describe("tfdev.device_mgr", function()
  local ds, m
  before_each(function()
    ds = tfdev.factory.add_devices { device_count = { CPU = 2 } }
    m = tfdev.device_mgr(ds)
  end)

  it("looks devices up by full, legacy, local and canonical names", function()
    for _, name in ipairs { PREFIX .. "/device:CPU:1", PREFIX .. "/cpu:1", "/device:CPU:1", "CPU:1" } do
      assert.are.equal(ds[2], m:lookup(name), name)
    end
  end)

  it("returns nil and INVALID_ARGUMENT for unknown devices", function()
    h.fails("INVALID_ARGUMENT", "/device:GPU:0 unknown device (known devices: " .. PREFIX .. "/device:CPU:0, ",
      m:lookup("/device:GPU:0"))
    h.fails("INVALID_ARGUMENT", "unknown device", m:lookup(""))
  end)

  it("counts devices per type and lists them", function()
    assert.are.equal(2, m:num_device_type("CPU"))
    assert.are.equal(0, m:num_device_type("GPU"))
    assert.are.equal(2, #m)
    assert.are.same(ds, m:list())
    local attrs = m:list_attributes()
    assert.are.equal(PREFIX .. "/device:CPU:1", attrs[2].name)
    assert.are.equal(268435456, attrs[1].memory_limit)
  end)

  it("writes the device mapping string", function()
    local s = m:mapping_string()
    assert.truthy(s:find(PREFIX .. "/device:CPU:0 -> device: 0, name: ", 1, true))
    assert.truthy(s:find(PREFIX .. "/device:CPU:1 -> device: 1, name: ", 1, true))
    local quiet = tfdev.device_mgr { tfdev.device.cpu { name = PREFIX .. "/device:CPU:0", physical_device_desc = "" } }
    assert.are.equal("", quiet:mapping_string())
  end)

  it("clears named containers, or the default one, on every device", function()
    for _, d in ipairs(ds) do
      local rm = d:resource_manager()
      rm:create(nil, "v", tfdev.tensor { 1 })
      rm:create("a", "v", tfdev.tensor { 2 })
      rm:create("b", "v", tfdev.tensor { 3 })
    end
    m:clear_containers { "a" }
    assert.are.same({ "b", "localhost" }, ds[1]:resource_manager():containers())
    m:clear_containers {}
    assert.are.same({ "b" }, ds[2]:resource_manager():containers())
    h.raises("INVALID_ARGUMENT", "container names must be strings", m.clear_containers, m, { 1 })
  end)

  it("refuses two devices answering to the same name", function()
    local other = tfdev.device.renamed(ds[1], "/job:other/replica:0/task:0")
    h.raises("INVALID_ARGUMENT", "both answer to the name '/device:CPU:0'", tfdev.device_mgr, { ds[1], other })
  end)
end)
