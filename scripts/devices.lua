-- tfdev device tour: enumerate and compose devices through the factory registry.
--
--   tfdev scripts/devices.lua
--
-- Walks through what TensorFlow's device layer does, with tfdev's Lua API:
-- factories with priorities, devices made through the registry (including
-- by factories written in Lua), a DeviceMgr and a DeviceSet over them, the
-- prioritized device types, the mapping string, and a device's allocator.
local tfdev = require "tfdev"

local function heading(s) print("\n== " .. s .. " " .. string.rep("=", 60 - #s)) end

heading("tfdev " .. tfdev.version)
local gpus, why = tfdev.gpu_count()
print(string.format("CUDA backend built: %s; GPUs visible: %d%s", tostring(tfdev.built_with_cuda), gpus,
  gpus == 0 and (" (" .. why .. ")") or ""))

heading("Built-in factories")
io.write(tfdev.describe_factories())

-- A CPU factory written in Lua, ten above the CPU factory registered now (the
-- built-in one at 60, or the CUDA backend's GPU-compatible one at 70), as
-- TensorFlow's GPUCompatibleCPUDeviceFactory sits above ThreadPoolDevice: a
-- higher priority replaces. It gives every CPU device a pool of its own and a
-- 64 MiB limit.
tfdev.factory.register("CPU", {
  name = "DemoCPUFactory",
  create_devices = function(_, options, prefix)
    local devices = {}
    for i = 0, ((options.device_count or {}).CPU or 1) - 1 do
      devices[#devices + 1] = tfdev.device.cpu { name = string.format("%s/device:CPU:%d", prefix, i), threads = 1,
        memory_limit = 64 * 1024 * 1024 }
    end
    return devices
  end,
}, tfdev.factory.priority("CPU") + 10)

-- A simulated accelerator: CPU-backed devices of type "SIM" (the way XLA_CPU
-- is a CPU-backed device type in TensorFlow), preferred over CPU at 100.
tfdev.factory.register("SIM", {
  name = "SimAcceleratorFactory",
  create_devices = function(_, options, prefix)
    local n = (options.device_count or {}).SIM or 1
    local devices = {}
    for i = 0, n - 1 do
      devices[#devices + 1] = tfdev.device.cpu { name = string.format("%s/device:SIM:%d", prefix, i),
        device_type = "SIM", threads = 1, memory_limit = 16 * 1024 * 1024, bus_id = 1,
        physical_device_desc = string.format("device: %d, name: simulated accelerator, pci bus id: 0000:00:0%d.0", i, i) }
    end
    return devices
  end,
}, 100)

heading("Factories after registering two written in Lua")
io.write(tfdev.describe_factories())
print("GetFactory('CPU') is now: " .. tfdev.factory.get("CPU").name)

heading("AddDevices (CPU first, then by priority)")
local devices = tfdev.factory.add_devices { device_count = { CPU = 2, SIM = 2 } }
for _, d in ipairs(devices) do
  print(string.format("%-48s %-4s limit %-9s threads %d", d.name, d.device_type, tfdev.format_bytes(d.memory_limit),
    d.num_threads))
end

heading("DeviceMgr")
local mgr = tfdev.device_mgr(devices)
print(string.format("%d devices: %d CPU, %d SIM", #mgr, mgr:num_device_type("CPU"), mgr:num_device_type("SIM")))
for _, name in ipairs { "/job:localhost/replica:0/task:0/device:SIM:1", "/job:localhost/replica:0/task:0/sim:1",
  "/device:SIM:1", "SIM:1" } do
  print(string.format("lookup %-46s -> %s", name, mgr:lookup(name).name))
end
local _, err = mgr:lookup("/device:GPU:0")
print("lookup /device:GPU:0 -> " .. tostring(err))
print("device mapping string:")
io.write(mgr:mapping_string())

heading("DeviceSet")
local set = tfdev.device_set(devices)
-- A device of another task, answering to a worker's name.
set:add(tfdev.device.renamed(devices[1], "/job:worker/replica:0/task:1"))
set:set_client_device(devices[1])
print("prioritized device types: " .. table.concat(set:prioritized_types(), ", "))
print("client device: " .. set:client_device().name)
local function names(list)
  local out = {}
  for _, d in ipairs(list) do out[#out + 1] = d.name end
  return table.concat(out, "\n  ")
end
print("matching /job:localhost/device:SIM:*:\n  " .. names(set:find_matching "/job:localhost/device:SIM:*"))
print("matching /job:worker:\n  " .. names(set:find_matching "/job:worker"))

heading("A device's allocator and memory limit")
local sim = mgr:lookup("SIM:0")
local weights = tfdev.tensor { dtype = "float32", shape = { 1024, 1024 }, device = sim } -- 4 MiB
local stats = sim:allocator_stats()
print(string.format("%s: %s in use of %s", sim.name, tfdev.format_bytes(stats.bytes_in_use),
  tfdev.format_bytes(stats.bytes_limit)))
local ok, oom = pcall(tfdev.tensor, { dtype = "float32", shape = { 4096, 1024 }, device = sim }) -- 16 MiB
print("asking for 16 MiB more -> " .. (ok and "allocated?!" or tostring(oom)))
weights:close()

heading("Attributes of " .. devices[1].name)
io.write(devices[1]:debug_string())
