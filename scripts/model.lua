-- Loads a TensorFlow model (a binary GraphDef .pb, or a TensorFlow.js graph model.json), runs it
-- once on an input, and prints what it found: the inputs and outputs, the ops it uses, the
-- outputs' values in brief, whether they match the reference beside the model, the slowest nodes
-- of a traced run, and a Chrome/Perfetto timeline.
--
--   tfdev scripts/model.lua [MODEL] [INPUT.bin]
--
-- MODEL defaults to ../shared/models/blazeface/blazeface.json. INPUT.bin is raw little-endian
-- float32 in the first input's shape; without it the input_0.bin beside the model is used, or a
-- fixed pattern in [0, 1). Where reference.json and output_K.bin sit beside the model (as
-- ../shared/models has them, made by TensorFlow.js), or reference.json holds the inputs' and outputs'
-- values itself (as spec/layers has them), the model runs on the reference inputs and each output is
-- compared with its reference: max |ours - reference| <= 1e-3 x max(1, max |reference|), and the
-- script exits 1 when one differs.
local tfdev = require "tfdev"

local here = (arg and arg[0] or ""):match("^(.*)/scripts/[^/]*$") or "."
local path = arg[1] or (here .. "/../shared/models/blazeface/blazeface.json")

local function read(p)
  local f = io.open(p, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

local m <close> = tfdev.model(path, { intra_op_threads = 1, inter_op_threads = 1 })
print(string.format("model %s: %d nodes", path, #m.graph_def.node))
local ops = {}
for _, n in ipairs(m.graph_def.node) do ops[n.op] = (ops[n.op] or 0) + 1 end
local names = {}
for op, count in pairs(ops) do names[#names + 1] = string.format("%s x%d", op, count) end
table.sort(names)
print("ops: " .. table.concat(names, ", "))

local dir = path:match("^(.*)/[^/]*%.[%w]+$") or path
local ref_text = read(dir .. "/reference.json")
local ref = ref_text and tfdev.json.decode(ref_text)

-- The input: given, the reference input beside the model, or a fixed pattern.
local input = m.inputs[1]
local shape = {}
for i, d in ipairs(input.shape or {}) do shape[i] = d < 0 and 1 or d end
local n = 1
for _, d in ipairs(shape) do n = n * d end
local bytes = (arg[2] and read(arg[2])) or read((path:match("^(.*)/[^/]*$") or ".") .. "/input_0.bin")
if not bytes or #bytes ~= 4 * n then
  local parts, seed = {}, 12345
  for i = 1, n do
    seed = (seed * 1103515245 + 12345) % 2147483648
    parts[i] = string.pack("<f", (seed % 1000) / 1000)
  end
  bytes = table.concat(parts)
end
local x = tfdev.from_bytes(input.dtype or "float32", shape, bytes)
local feeds = { [input.name] = x }
for i, r in ipairs(not arg[2] and ref and ref.inputs or {}) do -- reference inputs given by value
  if r.values and m.inputs[i] then
    feeds[m.inputs[i].name] = tfdev.tensor { dtype = r.dtype or "float32", shape = r.shape, data = r.values }
  end
end
for i, input_i in ipairs(m.inputs) do
  local t = feeds[input_i.name]
  print(string.format("input %s: %s %s", input_i.name, t and t.dtype or "?", t and table.concat(t.shape, "x") or "not fed"))
end

local outs, meta = m:run(feeds, { trace = true })
local verdicts = {}
if ref then
  for k, r in ipairs(ref.outputs or {}) do
    local want = read(string.format("%s/output_%d.bin", dir, k - 1))
    if not want and r.values and not arg[2] then
      want = string.pack("<" .. string.rep((r.dtype or "float32") == "int32" and "i4" or "f", #r.values),
        table.unpack(r.values))
    end
    for i, o in ipairs(m.outputs) do
      if want and ((o.tensor or o.name) == r.name .. ":0" or o.name == r.name) then
        local got = outs[i]:bytes()
        local fmt = outs[i].dtype == "float32" and "<f" or outs[i].dtype == "int32" and "<i4" or nil
        if not fmt or #got ~= #want then
          verdicts[i] = string.format("reference %s: %d bytes against %d", r.name, #want, #got)
        else
          local worst, scale = 0, 1
          for at = 1, #want, 4 do
            local a, b = string.unpack(fmt, got, at), string.unpack(fmt, want, at)
            worst, scale = math.max(worst, math.abs(a - b)), math.max(scale, math.abs(b))
          end
          verdicts[i] = string.format("%s reference (max diff %.3g, bound %.3g)",
            worst <= 1e-3 * scale and "matches" or "DIFFERS from", worst, 1e-3 * scale)
          verdicts[i .. "ok"] = worst <= 1e-3 * scale
        end
      end
    end
  end
end
for i, o in ipairs(m.outputs) do
  local t = outs[i]
  local lo, hi, flat = math.huge, -math.huge, {}
  local function walk(v) if type(v) == "table" then for _, e in ipairs(v) do walk(e) end else flat[#flat + 1] = v end end
  walk(t:totable())
  for _, v in ipairs(flat) do lo, hi = math.min(lo, v), math.max(hi, v) end
  print(string.format("output %-12s %s %-12s min %.4g max %.4g%s", o.name, t.dtype, table.concat(t.shape, "x"), lo, hi,
    verdicts[i] and "  " .. verdicts[i] or ""))
end
local differs = 0
if ref then
  local matched = 0
  for i in ipairs(m.outputs) do
    if verdicts[i .. "ok"] then matched = matched + 1 elseif verdicts[i] then differs = differs + 1 end
  end
  print(string.format("reference: %d of %d outputs match (%s)", matched, #(ref.outputs or {}), dir .. "/reference.json"))
  if matched < #(ref.outputs or {}) then differs = math.max(differs, 1) end
end

-- A second, warm run for the timings.
local t0 = tfdev.clock()
outs, meta = m:run(feeds, { trace = true })
local elapsed = (tfdev.clock() - t0) * 1e3
local rows = {}
for _, dev in ipairs(meta.step_stats.dev_stats) do
  for _, s in ipairs(dev.node_stats) do rows[#rows + 1] = s end
end
table.sort(rows, function(a, b) return a.all_end_rel_micros > b.all_end_rel_micros end)
print(string.format("\nwarm run: %.2f ms (traced); slowest nodes:", elapsed))
for i = 1, math.min(10, #rows) do
  print(string.format("  %8.1f us  %-22s %s", rows[i].all_end_rel_micros, rows[i].op, rows[i].node_name))
end
local out = io.open("tfdev-model-timeline.json", "w")
out:write(tfdev.timeline(meta))
out:close()
print("timeline: tfdev-model-timeline.json (open it in https://ui.perfetto.dev)")
if differs > 0 then os.exit(1) end
