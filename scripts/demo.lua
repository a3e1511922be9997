-- tfdev demo: an MLP built in Lua, run by a DirectSession on the devices the priorities choose.
--
--   tfdev scripts/demo.lua [timeline.json]
--
-- Prints the factories and devices, builds a 784-256-128-10 MLP (ReLU,
-- softmax) with the graph builder, pins its second layer to a second CPU
-- device so the graph is partitioned with Send/Recv, runs a batch, and
-- prints the predictions, where each node ran, per-node timings, and writes
-- a Chrome trace (open it in https://ui.perfetto.dev or chrome://tracing).
local tfdev = require "tfdev"

local timeline_path = arg and arg[1] or "tfdev-timeline.json"
local function heading(s) print("\n== " .. s .. " " .. string.rep("=", 66 - #s)) end

-- The run configuration, as a host would keep it.
local config = {
  device_count = { CPU = 2 },   -- two CPU devices: the graph gets two partitions
  intra_op_threads = 2,
  inter_op_threads = 2,
  allow_soft_placement = true,  -- a layer pinned to a device we lack falls back instead of failing
}

heading("tfdev " .. tfdev.version .. ": factories by priority")
io.write(tfdev.describe_factories())
local gpus, why = tfdev.gpu_count()
print(string.format("GPUs: %d%s", gpus, gpus == 0 and (" (" .. why .. ")") or ""))

-- The model: weights drawn in the graph from seeded random ops, held in variables.
local g = tfdev.graph()
local sizes = { 784, 256, 128, 10 }
local x = g:placeholder("float32", { -1, 784 }, { name = "images" })
local h = x
local init = {}
for layer = 1, 3 do
  local fan_in, fan_out = sizes[layer], sizes[layer + 1]
  local scale = g:const(math.sqrt(2 / fan_in), { dtype = "float32" })
  local device = layer == 2 and "/device:CPU:1" or nil
  local w = g:variable(g:random_normal({ fan_in, fan_out }, { seed = 7, seed2 = layer }) * scale,
    { name = "layer" .. layer .. "/w", device = device })
  local b = g:variable(g:fill({ fan_out }, g:const(0.01, { dtype = "float32" })), { name = "layer" .. layer .. "/b",
    device = device })
  init[#init + 1] = w.initializer
  init[#init + 1] = b.initializer
  local z = g:bias_add(g:matmul(h, w, { name = "layer" .. layer .. "/matmul", device = device }), b,
    { name = "layer" .. layer .. "/logits", device = device })
  h = layer < 3 and g:relu(z, { name = "layer" .. layer .. "/relu", device = device }) or z
end
local probs = g:softmax(h, { name = "probs" })
local predicted = g:max(probs, { 1 }, { name = "confidence" })

local session <close> = tfdev.session(config)
session:create(g)
session:run({}, nil, init)

heading("devices")
for _, d in ipairs(session:list_devices()) do print(d.name .. "  " .. d.physical_device_desc) end

-- A batch of 4 "images": smooth patterns, so the output is deterministic.
local batch = {}
for i = 1, 4 do
  local row = {}
  for p = 1, 784 do row[p] = 0.5 + 0.5 * math.sin(i * p / 97) end
  batch[i] = row
end

local outs, meta = session:run({ images = batch }, { "probs", "confidence" }, nil,
  { trace = true, output_partition_graphs = true })

heading("predictions")
for i, row in ipairs(outs[1]:totable()) do
  local best, best_p = 0, -1
  for k, p in ipairs(row) do if p > best_p then best, best_p = k - 1, p end end
  print(string.format("image %d -> class %d (p = %.3f)", i, best, best_p))
end

heading("placement (" .. #meta.partition_graphs .. " partitions)")
for _, pg in ipairs(meta.partition_graphs) do
  local names = {}
  for _, n in ipairs(pg.node) do names[#names + 1] = n.op:sub(1, 1) == "_" and ("[" .. n.op .. "]") or n.name end
  print((pg.node[1] and pg.node[1].device or "?") .. ":\n  " .. table.concat(names, " "))
end

heading("per-node timings (step " .. meta.step_id .. ")")
local rows = {}
for _, dev in ipairs(meta.step_stats.dev_stats) do
  for _, n in ipairs(dev.node_stats) do
    rows[#rows + 1] = { n.all_end_rel_micros, n.node_name, n.op, dev.device:match("[^/]+$"), n.output_bytes }
  end
end
table.sort(rows, function(a, b) return a[1] > b[1] end)
print(string.format("%8s  %-22s %-20s %-12s %10s", "us", "node", "op", "device", "out bytes"))
for i = 1, math.min(12, #rows) do print(string.format("%8d  %-22s %-20s %-12s %10d", table.unpack(rows[i]))) end

local f = assert(io.open(timeline_path, "w"))
f:write(tfdev.timeline(meta))
f:close()
heading("timeline")
print("wrote " .. timeline_path .. " (open it in https://ui.perfetto.dev)")
