-- Convolution layers of real models: every distinct Conv2D / _FusedConv2D / DepthwiseConv2dNative
-- shape of the blazeface and facemesh models (../shared/models), timed in tfdev (one node, filter
-- constant, one intra-op thread) and in PyTorch (torch.nn.functional.conv2d, one thread) in the
-- same run (each side the faster of two rounds, tfdev, torch, tfdev, torch), then each whole model
-- against the sum of its layers' floors (the faster of the two).
--
--   tfdev scripts/bench/conv_layers.lua [--quick]
local tfdev = require "tfdev"
local json = require "tfdev.json"

local quick = arg and arg[1] == "--quick"
local here = (arg and arg[0] or ""):match("^(.*)/scripts/bench/[^/]*$") or "."
local models_dir = here .. "/../shared/models/"
local python = os.getenv("TFDEV_BENCH_PYTHON") or "/usr/bin/python3"

local function read(p)
  local f = io.open(p, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

local function median(t)
  table.sort(t)
  return t[(#t + 1) // 2]
end

local CONV = { Conv2D = true, _FusedConv2D = true, DepthwiseConv2dNative = true }

-- The conv nodes of a model with their input shapes (fetched from a run) and attrs.
local function conv_layers(name)
  local path = models_dir .. name .. "/" .. name .. ".json"
  if not read(path) then return nil, path .. " is not here" end
  local m = tfdev.model(path, { intra_op_threads = 1, inter_op_threads = 1 }) -- closed by the caller
  local consts, convs = {}, {}
  for _, n in ipairs(m.graph_def.node) do
    if n.op == "Const" then consts[n.name] = n.attr.value end
    if CONV[n.op] then convs[#convs + 1] = n end
  end
  local fetches = {}
  for i, n in ipairs(convs) do fetches[i] = n.input[1]:find(":") and n.input[1] or n.input[1] .. ":0" end
  local input = m.inputs[1]
  local shape = {}
  for i, d in ipairs(input.shape) do shape[i] = d < 0 and 1 or d end
  local x = tfdev.tensor { dtype = "float32", shape = shape }
  local values = m.session:run({ [input.name] = x }, fetches)
  local layers = {}
  for i, n in ipairs(convs) do
    local f = consts[n.input[2]]
    layers[i] = {
      model = name, node = n.name, op = n.op, depthwise = n.op == "DepthwiseConv2dNative",
      input = values[i].shape, filter = f.shape, strides = n.attr.strides, padding = n.attr.padding,
      filter_value = f, input_value = values[i],
      key = string.format("%s in %s filter %s stride %d %s", n.op == "DepthwiseConv2dNative" and "dw" or "conv",
        table.concat(values[i].shape, "x"), table.concat(f.shape, "x"), n.attr.strides[2], n.attr.padding),
    }
  end
  return layers, m
end

-- A layer alone in tfdev: a one-node graph (filter Const, input fed), callable, 1 thread. The caller
-- closes the session.
local function layer_callable(layer)
  local g = { node = {
    { name = "x", op = "Placeholder", attr = { dtype = "float32", shape = layer.input } },
    { name = "f", op = "Const", attr = { value = layer.filter_value } },
    { name = "y", op = layer.depthwise and "DepthwiseConv2dNative" or "Conv2D", input = { "x", "f" },
      attr = { strides = layer.strides, padding = layer.padding } },
  } }
  local s = tfdev.session { intra_op_threads = 1, inter_op_threads = 1, use_per_session_threads = true }
  s:create(g)
  local fn = s:make_callable { feeds = { "x" }, fetches = "y" }
  for _ = 1, 3 do fn(layer.input_value) end
  return fn, s
end

-- tfdev's time for one layer.
local function time_tfdev(layer, reps)
  local fn, s <close> = layer_callable(layer)
  local t = {}
  local c0, w0 = os.clock(), tfdev.clock()
  for r = 1, reps do
    local t0 = tfdev.clock()
    fn(layer.input_value)
    t[r] = (tfdev.clock() - t0) * 1e6
  end
  return median(t), (os.clock() - c0) / (tfdev.clock() - w0)
end

local function cpu_model()
  for line in io.lines("/proc/cpuinfo") do
    local v = line:match("^model name%s*:%s*(.*)")
    if v then return v end
  end
  return "unknown"
end

print(string.format("\nConvolution layers of blazeface and facemesh (microseconds, medians, the faster of two rounds a side: tfdev, torch, tfdev, torch; one thread)\n  CPU: %s\n" ..
  "  tfdev: one-node graph, filter constant (packed once), intra_op_threads=1; torch: F.conv2d on NCHW, " ..
  "torch.set_num_threads(1) and its OpenBLAS at 1 thread, inference_mode, SAME padding applied with F.pad " ..
  "outside the timing; cores = CPU time / wall time over the timed runs", cpu_model()))

local layers, models, order = {}, {}, {}
for _, name in ipairs { "blazeface", "facemesh" } do
  local ls, m = conv_layers(name)
  if not ls then
    print("SKIP " .. name .. ": " .. m)
  else
    models[#models + 1] = { name = name, layers = ls, model = m }
    for _, l in ipairs(ls) do
      if not layers[l.key] then
        layers[l.key] = l
        order[#order + 1] = l.key
      end
    end
  end
end
if #order == 0 then
  print("SKIP: no model found under " .. models_dir)
  return
end

local reps = quick and 15 or 61
-- OpenBLAS's worker threads spin for about 2^28 cycles after the library loads before they sleep: the
-- first layers would read 1.5-2 cores in the cores column. Timing starts once they are asleep.
os.execute("sleep 0.3")

-- Each side keeps the faster of two rounds, tfdev, torch, tfdev, torch: torch runs in its own process,
-- so the two cannot alternate rep by rep, and a single round each compared medians taken half a
-- minute apart (a 6x6x128 -> 128 layer read 0.89 in one run and 1.06 in the next).
local function time_tfdev_round()
  for _, key in ipairs(order) do
    local l = layers[key]
    local t, cores = time_tfdev(l, reps)
    if not l.tfdev or t < l.tfdev then l.tfdev, l.tfdev_cores = t, cores end
  end
end

-- torch, in its own process, on the same shapes.
local spec = {}
for i, key in ipairs(order) do
  local l = layers[key]
  spec[i] = { key = key, input = l.input, filter = l.filter, strides = l.strides, padding = l.padding,
    depthwise = l.depthwise }
end
local tmp = os.tmpname()
local f = assert(io.open(tmp, "w"))
f:write(json.encode { reps = reps, layers = spec })
f:close()
local torch_ok = false
local function time_torch_round(round)
  local p = io.popen(python .. " " .. here .. "/scripts/bench/peers/torch_conv.py " .. tmp .. " 2>&1")
  if not p then return end
  for line in p:lines() do
    local key, us, cores = line:match("^layer (.-) ([%d.]+) ([%d.]+)$")
    local l = key and layers[key]
    if l then
      us = tonumber(us)
      if not l.torch or us < l.torch then l.torch, l.torch_cores = us, tonumber(cores) end
      torch_ok = true
    elseif (line:match("^SKIP") or line:match("^peer")) and round == 1 then
      print("  " .. line)
    end
  end
  p:close()
end
for round = 1, 2 do
  time_tfdev_round()
  time_torch_round(round)
end
os.remove(tmp)
if not torch_ok then print("  SKIP torch: no timings (is python3-torch installed? scripts/bench/run --peers)") end

print(string.format("| %-58s | %9s | %9s | %7s | %-12s | %-4s | %-11s |", "layer", "tfdev", "torch", "speed", "target",
  "met", "cores t / p"))
print("|------------------------------------------------------------|-----------|-----------|---------|--------------|" ..
  "------|-------------|")
for _, key in ipairs(order) do
  local l = layers[key]
  local speed = l.torch and l.torch / l.tfdev
  print(string.format("| %-58s | %9.1f | %9s | %7s | %-12s | %-4s | %4.2f / %4s |", key, l.tfdev,
    l.torch and string.format("%.1f", l.torch) or "SKIP", speed and string.format("%.2f", speed) or "-",
    "speed >= 0.9", speed and (speed >= 0.9 and "yes" or "NO") or "-", l.tfdev_cores,
    l.torch_cores and string.format("%.2f", l.torch_cores) or "-"))
end
print("  (speed = torch time / tfdev time: 1.00 is as fast as PyTorch; cores t / p = CPU time / wall time of tfdev" ..
  " and of torch: both near 1)")

print(string.format("\n| %-12s | %12s | %22s | %7s | %-14s | %-4s |", "model", "tfdev (us)", "sum of layer floors", "ratio",
  "target", "met"))
print("|--------------|--------------|------------------------|---------|----------------|------|")
for _, mm in ipairs(models) do
  local floor = 0
  for _, l in ipairs(mm.layers) do
    local s = layers[l.key]
    floor = floor + math.min(s.tfdev, s.torch or math.huge)
  end
  local input = mm.model.inputs[1]
  local shape = {}
  for i, d in ipairs(input.shape) do shape[i] = d < 0 and 1 or d end
  local x = tfdev.tensor { dtype = "float32", shape = shape }
  local fn = mm.model.session:make_callable { feeds = { input.name }, fetches = mm.model.fetches }
  for _ = 1, 3 do fn(x) end
  -- The whole model and its layers one by one alternate rep by rep, so that the ratio compares times
  -- taken in the same seconds: on a shared machine, figures taken a minute apart differ by up to 40%.
  -- The table's floors, taken earlier, scale that layer sum: floor = sum x (table floors / table tfdev).
  local fns, sessions, table_tfdev = {}, {}, 0
  for _, l in ipairs(mm.layers) do
    if not fns[l.key] then fns[l.key], sessions[#sessions + 1] = layer_callable(layers[l.key]) end
    table_tfdev = table_tfdev + layers[l.key].tfdev
  end
  local t, sums = {}, {}
  for r = 1, (quick and 21 or 101) do
    local t0 = tfdev.clock()
    fn(x)
    t[r] = (tfdev.clock() - t0) * 1e6
    local sum = 0
    for _, l in ipairs(mm.layers) do
      local f, v = fns[l.key], layers[l.key].input_value
      local l0 = tfdev.clock()
      f(v)
      sum = sum + (tfdev.clock() - l0) * 1e6
    end
    sums[r] = sum
  end
  for _, s in ipairs(sessions) do s:close() end
  local whole, now_floor = median(t), median(sums) * floor / table_tfdev
  print(string.format("| %-12s | %12.1f | %22.1f | %7.3f | %-14s | %-4s |", mm.name, whole, now_floor,
    whole / now_floor, "ratio <= 1.2", whole / now_floor <= 1.2 and "yes" or "NO"))
  mm.model:close()
end
print("  (each model's rows alternate with its layers one by one, rep by rep; sum of layer floors = that layer sum\n" ..
  "   x (the table's floors / the table's tfdev times), i.e. each layer at the faster of tfdev and torch)")
