-- The models of ../shared/models on a GPU: each model's median latency at batch 1 and batch 32 with
-- step graphs (gpu.graphs, the default) and without, beside the same model on the CPU, and the
-- largest difference of the GPU's outputs from the CPU's (relative to max(1, max |CPU output|),
-- bound 1e-3). Part of scripts/bench/run; without a GPU it prints one SKIP line.
--
--   tfdev scripts/bench/gpu_models.lua [--quick]
--
-- With TFDEV_BACKENDS=fakegpu it runs on the fake GPU (CPU code behind a GPU's interface): the
-- numbers then check the script and the placement, not any speed.
local tfdev = require "tfdev"

local quick = arg and arg[1] == "--quick"
local here = (arg and arg[0] or ""):match("^(.*)/scripts/bench/[^/]*$") or "."
local models_dir = here .. "/../shared/models/"

local function median(t)
  table.sort(t)
  return t[(#t + 1) // 2]
end

-- The first GPU a default session gets, or nil and why not.
local function gpu_name()
  local ok, s = pcall(tfdev.session, {})
  if not ok then return nil, tostring(s) end
  local found
  for _, d in ipairs(s:list_devices()) do
    if d.device_type == "GPU" and not found then found = d.name .. " (" .. (d.physical_device_desc or "") .. ")" end
  end
  s:close()
  return found, "no GPU device (a CUDA build on a machine with an NVIDIA GPU, or TFDEV_BACKENDS=fakegpu)"
end

local gpu, why = gpu_name()
if not gpu then
  print("SKIP GPU models: " .. why)
  return
end
-- Under the null CUDA runtime (LD_LIBRARY_PATH=build/null_cudart) nothing computes: the latencies
-- are tfdev's own host work plus host memcpy standing in for the copies, and outputs are not judged.
local null_runtime = gpu:find("null CUDA runtime", 1, true) ~= nil

-- Median latency of `reps` runs of the model's callable on x, in microseconds, and the last outputs.
local function latency(m, x, reps)
  local fn = m.session:make_callable { feeds = { m.inputs[1].name }, fetches = m.fetches }
  for _ = 1, 3 do fn(x) end -- the first run warms up, the second records a step graph
  local t = {}
  for r = 1, reps do
    local t0 = tfdev.clock()
    fn(x)
    t[r] = (tfdev.clock() - t0) * 1e6
  end
  local outs = fn(x) -- a list of tensors, as m.fetches is a list
  return median(t), outs
end

local function max_rel_diff(a, b)
  local worst = 0
  for i = 1, #a do
    local fa, fb = {}, {}
    local function walk(v, into)
      if type(v) == "table" then for _, e in ipairs(v) do walk(e, into) end else into[#into + 1] = v end
    end
    walk(a[i]:totable(), fa)
    walk(b[i]:totable(), fb)
    local scale = 1
    for _, v in ipairs(fb) do scale = math.max(scale, math.abs(v)) end
    for j = 1, #fb do worst = math.max(worst, math.abs(fa[j] - fb[j]) / scale) end
  end
  return worst
end

print(string.format("\nModels on the GPU (microseconds, medians of %d runs through a callable)\n  device: %s",
  quick and 11 or 51, gpu))
if null_runtime then
  print("  note: the null CUDA runtime runs no kernel: the GPU columns are tfdev's host cost (copies are memcpy),")
  print("  and outputs are not compared")
end
print(string.format("| %-10s | %5s | %13s | %13s | %11s | %13s | %-4s |", "model", "batch", "GPU, graphs", "GPU, no graphs",
  "CPU", "max rel diff", "met"))
print("|------------|-------|---------------|----------------|-------------|---------------|------|")
local reps = quick and 11 or 51
for _, name in ipairs { "emotion", "blazeface", "facemesh", "antispoof" } do
  local path = models_dir .. name
  local ok, probe = pcall(tfdev.model, path)
  if not ok then
    print(string.format("| %-10s | SKIP: %s", name, tostring(probe)))
  else
    local input = probe.inputs[1]
    probe:close()
    for _, batch in ipairs { 1, 32 } do
      local shape = {}
      for i, d in ipairs(input.shape) do shape[i] = d end
      if shape[1] ~= -1 and shape[1] ~= batch then
        print(string.format("| %-10s | %5d | not run: the model's input is fixed at batch %d", name, batch, shape[1]))
      else
        shape[1] = batch
        local n = 1
        for _, d in ipairs(shape) do n = n * d end
        local parts, seed = {}, 7
        for i = 1, n do
          seed = (seed * 1103515245 + 12345) % 2147483648
          parts[i] = string.pack("<f", (seed % 1000) / 1000)
        end
        local x = tfdev.from_bytes("float32", shape, table.concat(parts))
        local row = {}
        for _, cfg in ipairs {
          { key = "graphs", opts = {} },
          { key = "plain", opts = { gpu = { graphs = false } } },
          { key = "cpu", opts = { device_count = { GPU = 0 } } },
        } do
          local m <close> = tfdev.model(path, cfg.opts)
          row[cfg.key], row[cfg.key .. "_out"] = latency(m, x, reps)
        end
        if null_runtime then
          print(string.format("| %-10s | %5d | %13.1f | %14.1f | %11.1f | %13s | %-4s |", name, batch, row.graphs,
            row.plain, row.cpu, "not computed", "n/a"))
        else
          local diff = math.max(max_rel_diff(row.graphs_out, row.cpu_out), max_rel_diff(row.plain_out, row.cpu_out))
          print(string.format("| %-10s | %5d | %13.1f | %14.1f | %11.1f | %13.2e | %-4s |", name, batch, row.graphs,
            row.plain, row.cpu, diff, diff <= 1e-3 and "yes" or "NO"))
        end
      end
    end
  end
end
