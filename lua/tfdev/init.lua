-- tfdev: the Lua module. The C core (tfdev.core) does the work; this file
-- gathers it under one table and adds what is easier to write in Lua.
local core = require "tfdev.core"

local tfdev = {}
for k, v in pairs(core) do tfdev[k] = v end

-- tfdev.tensor is callable (tfdev.tensor{...}) and keeps its helpers.
tfdev.tensor = setmetatable({}, {
  __index = core.tensor,
  __call = function(_, ...) return core.tensor.new(...) end,
})
tfdev.from_bytes = core.tensor.from_bytes

local graph = require "tfdev.graph"
tfdev.graph = graph.new
tfdev.timeline = require "tfdev.timeline"
tfdev.json = require "tfdev.json"
tfdev.model = require("tfdev.model").new


--- "256.0 MiB" for a byte count.
function tfdev.format_bytes(n)
  local units = { "B", "KiB", "MiB", "GiB", "TiB" }
  local i = 1
  while n >= 1024 and i < #units do n, i = n / 1024, i + 1 end
  return i == 1 and string.format("%d B", n) or string.format("%.1f %s", n, units[i])
end

--- A readable report of devices and their attributes (what `tfdev --list-devices` prints).
function tfdev.describe_devices(devices)
  local out = {}
  for _, d in ipairs(devices) do
    local a = d:attributes()
    out[#out + 1] = a.name
    out[#out + 1] = string.format("  device_type: %s", a.device_type)
    out[#out + 1] = string.format("  memory_limit: %d (%s)", a.memory_limit, tfdev.format_bytes(a.memory_limit))
    out[#out + 1] = string.format("  locality: bus_id %d", a.locality.bus_id)
    out[#out + 1] = string.format("  incarnation: %d", a.incarnation)
    out[#out + 1] = string.format("  physical_device_desc: %s", a.physical_device_desc)
  end
  return table.concat(out, "\n") .. (#out > 0 and "\n" or "")
end

--- A readable table of the registered factories, by priority.
function tfdev.describe_factories()
  local out = { string.format("%-10s %8s  %s", "type", "priority", "factory") }
  for _, row in ipairs(tfdev.factory.list()) do
    out[#out + 1] = string.format("%-10s %8d  %s", row.type, row.priority, row.name)
  end
  return table.concat(out, "\n") .. "\n"
end

return tfdev
