-- Layers models against the same networks as graph models, and against TensorFlow.js.
--
-- Writes three TensorFlow.js layers models with seeded weights (an MLP 784-512-512-10, a CNN on 64x64x3
-- images, an Embedding + LSTM text classifier over 50 tokens), and the MLP and CNN once more as graph
-- models in the form TensorFlow.js's converter writes them (_FusedConv2D, _FusedMatMul with their
-- bias and activation, the same weights), then times, in one run and on one intra-op thread:
--   tfdev layers   the layers model as tfdev converts it (layers_model.c)
--   tfdev graph    the graph model (the floor of the conversion: the target is layers <= 1.1x graph)
--   tfjs wasm      TensorFlow.js 4.22 on its WASM backend (node; SIMD, one thread), same model.json
--   tfjs cpu       TensorFlow.js on its plain-JavaScript CPU backend
-- Then the graph models of ../shared/models (TensorFlow.js's, with their reference inputs) in tfdev and
-- in TensorFlow.js on both backends. Each figure is the median of its runs after warm-up runs (tfdev's
-- layers and graph models run alternately); each side runs its rounds in turn (tfdev, peers, tfdev) and
-- keeps the faster median. The peers need node and, on NODE_PATH or
-- in BUILD/peers/node_modules, @tensorflow/tfjs-core, -layers, -converter, -backend-cpu and -backend-wasm 4.22
-- (scripts/bench/run --peers installs them); a missing peer prints SKIP with the reason.
--
--   tfdev scripts/bench/layers_models.lua [--quick] [peers_dir]
local tfdev = require "tfdev"

local quick = arg and arg[1] == "--quick"
local peers_dir = arg and (quick and arg[2] or arg[1]) or nil
local here = (arg and arg[0] or ""):match("^(.*)/scripts/bench/[^/]*$") or "."
local reps, warm = quick and 5 or 15, quick and 2 or 5

local function median(t)
  table.sort(t)
  return t[(#t + 1) // 2]
end

local function write(path, bytes)
  local f = assert(io.open(path, "wb"))
  f:write(bytes)
  f:close()
end

-- Seeded weights in [-0.1, 0.1) (a linear congruential sequence: the same files every run).
local seed = 42
local function floats(n)
  local parts = {}
  for i = 1, n do
    seed = (seed * 1103515245 + 12345) % 2147483648
    parts[i] = string.pack("<f", (seed / 2147483648 - 0.5) * 0.2)
  end
  return table.concat(parts)
end

local function b64(s)
  local abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
  return (s:gsub(".", function(ch)
    local b, r = ch:byte(), ""
    for i = 8, 1, -1 do r = r .. (b % 2 ^ i - b % 2 ^ (i - 1) > 0 and "1" or "0") end
    return r
  end) .. "0000"):gsub("%d%d%d?%d?%d?%d?", function(x)
    if #x < 6 then return "" end
    local c = 0
    for i = 1, 6 do c = c + (x:sub(i, i) == "1" and 2 ^ (6 - i) or 0) end
    return abc:sub(c + 1, c + 1)
  end) .. ({ "", "==", "=" })[#s % 3 + 1]
end

-- weights: {{name, shape}, ...} -> the manifest entries and the bytes, in that order.
local function weight_file(dir, weights)
  local specs, bytes = {}, {}
  for i, w in ipairs(weights) do
    local n = 1
    for _, d in ipairs(w[2]) do n = n * d end
    specs[i] = { name = w[1], shape = w[2], dtype = "float32" }
    bytes[i] = floats(n)
  end
  write(dir .. "/w.bin", table.concat(bytes))
  return { { paths = { "w.bin" }, weights = specs } }
end

local null = tfdev.json.null
local function layers_model(dir, layers, weights)
  os.execute("mkdir -p '" .. dir .. "'")
  seed = 42
  write(dir .. "/model.json", tfdev.json.encode { format = "layers-model", generatedBy = "tfdev bench",
    modelTopology = { class_name = "Sequential", config = { name = "bench", layers = layers } },
    weightsManifest = weight_file(dir, weights) })
  return dir .. "/model.json"
end

-- A graph model of nodes {name, op, inputs, attrs} in protobuf's JSON mapping.
local function graph_model(dir, nodes, weights, input, output)
  os.execute("mkdir -p '" .. dir .. "'")
  seed = 42 -- the same weights as the layers model's
  local manifest = weight_file(dir, weights)
  local list = {}
  for i, n in ipairs(nodes) do list[i] = { name = n[1], op = n[2], input = n[3], attr = n[4] or {} } end
  for _, w in ipairs(weights) do
    list[#list + 1] = { name = w[1], op = "Const", attr = { dtype = { type = "DT_FLOAT" } } }
  end
  write(dir .. "/model.json", tfdev.json.encode { format = "graph-model", generatedBy = "tfdev bench",
    modelTopology = { node = list, versions = { producer = 1 } }, weightsManifest = manifest,
    signature = { inputs = { [input[1]] = { name = input[1] .. ":0", dtype = "DT_FLOAT",
      tensorShape = { dim = input[2] } } }, outputs = { [output] = { name = output .. ":0", dtype = "DT_FLOAT" } } } })
  return dir .. "/model.json"
end

local F = { type = "DT_FLOAT" }
local function s(v) return { s = b64(v) } end
local function ilist(t)
  local out = {}
  for i, v in ipairs(t) do out[i] = tostring(v) end
  return { list = { i = out } }
end
local function fused(ops) local out = {} for i, o in ipairs(ops) do out[i] = b64(o) end return { list = { s = out } } end
local function dense(name, units, act, extra)
  local c = { name = name, units = units, activation = act, use_bias = true }
  for k, v in pairs(extra or {}) do c[k] = v end
  return { class_name = "Dense", config = c }
end

local root = os.getenv("TMPDIR") or "/tmp"
local dir = root .. "/tfdev-bench-layers-" .. tostring(os.time())
local models = {}

-- MLP 784-512-512-10
do
  local w = { { "d1/kernel", { 784, 512 } }, { "d1/bias", { 512 } }, { "d2/kernel", { 512, 512 } }, { "d2/bias", { 512 } },
    { "d3/kernel", { 512, 10 } }, { "d3/bias", { 10 } } }
  local layers = { dense("d1", 512, "relu", { batch_input_shape = { null, 784 } }), dense("d2", 512, "relu"),
    dense("d3", 10, "softmax") }
  local function fm(name, x, k, b, act)
    return { name, "_FusedMatMul", { x, k, b }, { T = F, fused_ops = fused(act and { "BiasAdd", act } or { "BiasAdd" }),
      num_args = { i = "1" }, transpose_a = { b = false }, transpose_b = { b = false }, epsilon = { f = 0 } } }
  end
  local nodes = { { "x", "Placeholder", {}, { dtype = F, shape = { shape = { dim = { { size = "-1" }, { size = "784" } } } } } },
    fm("h1", "x", "d1/kernel", "d1/bias", "Relu"), fm("h2", "h1", "d2/kernel", "d2/bias", "Relu"),
    fm("logits", "h2", "d3/kernel", "d3/bias"), { "y", "Softmax", { "logits" }, { T = F } } }
  for _, batch in ipairs { 1, 64 } do
    models[#models + 1] = { name = "mlp 784-512-512-10", batch = batch, shape = { batch, 784 }, dtype = "float32",
      layers = layers_model(dir .. "/mlp_layers", layers, w),
      graph = graph_model(dir .. "/mlp_graph", nodes, w, { "x", { { size = "-1" }, { size = "784" } } }, "y") }
  end
end

-- CNN on 64x64x3: conv 32 -> pool -> conv 64 -> pool -> conv 64 -> global average -> dense 10
do
  local w = { { "c1/kernel", { 3, 3, 3, 32 } }, { "c1/bias", { 32 } }, { "c2/kernel", { 3, 3, 32, 64 } }, { "c2/bias", { 64 } },
    { "c3/kernel", { 3, 3, 64, 64 } }, { "c3/bias", { 64 } }, { "d/kernel", { 64, 10 } }, { "d/bias", { 10 } } }
  local function conv(name, filters, extra)
    local c = { name = name, filters = filters, kernel_size = { 3, 3 }, strides = { 1, 1 }, padding = "same",
      data_format = "channels_last", dilation_rate = { 1, 1 }, activation = "relu", use_bias = true }
    for k, v in pairs(extra or {}) do c[k] = v end
    return { class_name = "Conv2D", config = c }
  end
  local function pool(name)
    return { class_name = "MaxPooling2D", config = { name = name, pool_size = { 2, 2 }, strides = { 2, 2 }, padding = "valid" } }
  end
  local layers = { conv("c1", 32, { batch_input_shape = { null, 64, 64, 3 } }), pool("p1"), conv("c2", 64), pool("p2"),
    conv("c3", 64), { class_name = "GlobalAveragePooling2D", config = { name = "g" } }, dense("d", 10, "softmax") }
  local function fc(name, x, k, b)
    return { name, "_FusedConv2D", { x, k, b }, { T = F, fused_ops = fused { "BiasAdd", "Relu" }, num_args = { i = "1" },
      strides = ilist { 1, 1, 1, 1 }, padding = s "SAME", data_format = s "NHWC", dilations = ilist { 1, 1, 1, 1 },
      explicit_paddings = { list = {} }, use_cudnn_on_gpu = { b = true }, epsilon = { f = 0 } } }
  end
  local function mp(name, x)
    return { name, "MaxPool", { x }, { T = F, ksize = ilist { 1, 2, 2, 1 }, strides = ilist { 1, 2, 2, 1 }, padding = s "VALID",
      data_format = s "NHWC" } }
  end
  local nodes = { { "x", "Placeholder", {}, { dtype = F } }, fc("h1", "x", "c1/kernel", "c1/bias"), mp("q1", "h1"),
    fc("h2", "q1", "c2/kernel", "c2/bias"), mp("q2", "h2"), fc("h3", "q2", "c3/kernel", "c3/bias"),
    { "axes", "Const", {}, { dtype = { type = "DT_INT32" }, value = { tensor = { dtype = "DT_INT32",
      tensorShape = { dim = { { size = "2" } } }, intVal = { 1, 2 } } } } },
    { "g", "Mean", { "h3", "axes" }, { T = F, Tidx = { type = "DT_INT32" }, keep_dims = { b = false } } },
    { "logits", "_FusedMatMul", { "g", "d/kernel", "d/bias" }, { T = F, fused_ops = fused { "BiasAdd" }, num_args = { i = "1" },
      transpose_a = { b = false }, transpose_b = { b = false }, epsilon = { f = 0 } } },
    { "y", "Softmax", { "logits" }, { T = F } } }
  models[#models + 1] = { name = "cnn 64x64x3", batch = 1, shape = { 1, 64, 64, 3 }, dtype = "float32",
    layers = layers_model(dir .. "/cnn_layers", layers, w),
    graph = graph_model(dir .. "/cnn_graph", nodes, w,
      { "x", { { size = "-1" }, { size = "64" }, { size = "64" }, { size = "3" } } }, "y") }
end

-- Embedding(1000, 64) over 50 tokens -> LSTM 128 -> Dense 2 (no graph-model form: TensorFlow 2's converter
-- writes a While over function bodies, which tfdev does not load yet)
do
  local w = { { "e/embeddings", { 1000, 64 } }, { "l/kernel", { 64, 512 } }, { "l/recurrent_kernel", { 128, 512 } },
    { "l/bias", { 512 } }, { "d/kernel", { 128, 2 } }, { "d/bias", { 2 } } }
  local layers = { { class_name = "Embedding", config = { name = "e", input_dim = 1000, output_dim = 64, input_length = 50,
      batch_input_shape = { null, 50 } } },
    { class_name = "LSTM", config = { name = "l", units = 128, activation = "tanh", recurrent_activation = "sigmoid" } },
    dense("d", 2, "softmax") }
  local path = layers_model(dir .. "/lstm_layers", layers, w)
  for _, batch in ipairs { 1, 32 } do
    models[#models + 1] = { name = "embedding+lstm 50x64->128", batch = batch, shape = { batch, 50 }, dtype = "float32",
      ids = true, layers = path }
  end
end

-- The shared graph models, fed their reference inputs.
local shared = here .. "/../shared/models/"
for _, name in ipairs { "antispoof", "emotion", "blazeface", "facemesh" } do
  local f = io.open(shared .. name .. "/reference.json")
  if f then
    local ref = tfdev.json.decode(f:read("a"))
    f:close()
    local input = ref.inputs and ref.inputs[1]
    if input and (input.dtype or "float32") == "float32" then
      local bf = io.open(shared .. name .. "/input_0.bin", "rb")
      models[#models + 1] = { name = name .. " (graph model)", batch = input.shape[1], shape = input.shape,
        dtype = "float32", layers = shared .. name .. "/" .. name .. ".json", bytes = bf and bf:read("a") }
      if bf then bf:close() end
    end
  end
end

-- The input: values in [0, 1), or token ids in [0, 1000).-- The input: values in [0, 1), or token ids in [0, 1000).
local function input_of(m)
  if m.bytes then return tfdev.from_bytes("float32", m.shape, m.bytes), m.bytes end
  local n = 1
  for _, d in ipairs(m.shape) do n = n * d end
  local parts = {}
  for i = 1, n do parts[i] = string.pack("<f", m.ids and (i * 37) % 1000 or ((i * 7919) % 1000) / 1000) end
  return tfdev.from_bytes("float32", m.shape, table.concat(parts)), table.concat(parts)
end

-- Medians of the layers model and (when given) the graph model, run alternately so that both see the same
-- machine: a busy moment costs both sides, not one.
local function time_tfdev(path, graph, x)
  local a <close> = tfdev.model(path, { intra_op_threads = 1, inter_op_threads = 1 })
  local b <close> = graph and tfdev.model(graph, { intra_op_threads = 1, inter_op_threads = 1 }) or nil
  local fa, fb = { [a.inputs[1].name] = x }, b and { [b.inputs[1].name] = x }
  for _ = 1, warm do
    a:run(fa)
    if b then b:run(fb) end
  end
  local ta, tb = {}, {}
  for i = 1, 4 * reps do
    local t0 = tfdev.clock()
    a:run(fa)
    ta[i] = (tfdev.clock() - t0) * 1e3
    if b then
      t0 = tfdev.clock()
      b:run(fb)
      tb[i] = (tfdev.clock() - t0) * 1e3
    end
  end
  return median(ta), b and median(tb)
end

-- TensorFlow.js in node: prints the median ms, or "SKIP <why>".
local peer_js = here .. "/scripts/bench/peers/tfjs_layers.js"
local function node_path()
  local paths = {}
  if peers_dir then paths[#paths + 1] = peers_dir .. "/node_modules" end
  if os.getenv("NODE_PATH") then paths[#paths + 1] = os.getenv("NODE_PATH") end
  return table.concat(paths, ":")
end
local function time_tfjs(m, backend, bytes)
  local inp = dir .. "/input.bin"
  write(inp, bytes)
  local cmd = string.format("NODE_PATH='%s' node '%s' '%s' %s '%s' %s %d %d %s 2>&1", node_path(), peer_js, m.layers,
    backend, inp, table.concat(m.shape, ","), warm, reps, m.ids and "int32" or "float32")
  local p = io.popen(cmd)
  local out = p:read("a")
  p:close()
  local ms = tonumber(out:match("median_ms (%S+)"))
  if ms then return ms end
  return nil, out:match("SKIP[^\n]*") or ("SKIP node: " .. out:gsub("\n", " "):sub(1, 160))
end

local cpu = (io.open("/proc/cpuinfo") or { read = function() return "" end, close = function() end })
local info = cpu:read("a") or ""
cpu:close()
print(string.format("layers models: tfdev vs graph models and TensorFlow.js 4.22 (one thread; median of %d runs)", reps))
print("cpu: " .. (info:match("model name%s*:%s*([^\n]+)") or "?") .. "   OPENBLAS_CORETYPE=" ..
  (os.getenv("OPENBLAS_CORETYPE") or "(unset)"))
print(string.format("%-28s %5s %10s %10s %8s %10s %9s %10s %9s", "model", "batch", "tfdev ms", "graph ms", "l/g",
  "wasm ms", "wasm/l", "tfjs-cpu", "cpu/l"))
local worst = 0
for _, m in ipairs(models) do
  local x, bytes = input_of(m)
  local l1, g1 = time_tfdev(m.layers, m.graph, x)
  local wasm, why = time_tfjs(m, "wasm", bytes)
  local jcpu, why_cpu = time_tfjs(m, "cpu", bytes)
  local l2, g2 = time_tfdev(m.layers, m.graph, x)
  local l, g = math.min(l1, l2), g1 and math.min(g1, g2)
  if g then worst = math.max(worst, l / g) end
  print(string.format("%-28s %5d %10.3f %10s %8s %10s %9s %10s %9s", m.name, m.batch, l, g and string.format("%.3f", g) or "-",
    g and string.format("%.2fx", l / g) or "-", wasm and string.format("%.3f", wasm) or "SKIP",
    wasm and string.format("%.1fx", wasm / l) or "-", jcpu and string.format("%.3f", jcpu) or "SKIP",
    jcpu and string.format("%.1fx", jcpu / l) or "-"))
  if why then print("  tfjs wasm: " .. why) end
  if why_cpu and not why then print("  tfjs cpu: " .. why_cpu) end
end
print(string.format("worst layers/graph ratio: %.2fx (target <= 1.10x)", worst))
if not os.getenv("TFDEV_BENCH_KEEP") then os.execute("rm -rf '" .. dir .. "'") else print("models kept in " .. dir) end
