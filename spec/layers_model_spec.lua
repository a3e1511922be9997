-- TensorFlow.js layers models (Keras topologies), loaded as graphs: the models of spec/layers/ (made by
-- spec/layers/gen.js with tfjs-layers 4.22: every layer family tfdev converts, uint8 and float16
-- weights, shards named without ".bin", a file without a format key, a functional model with two
-- inputs, a shared layer and two outputs) against tfjs-layers' outputs; Keras formulas TensorFlow.js
-- lacks (ELU's alpha); and what tfdev refuses, naming the layer.
local tfdev = require "tfdev"
local h = require "spec.support.helpers"

local root = (os.getenv("TFDEV_SOURCE_DIR") or ".") .. "/spec/layers"

local function flat(t)
  local out = {}
  local function walk(v)
    if type(v) == "table" then for _, e in ipairs(v) do walk(e) end else out[#out + 1] = v end
  end
  walk(t)
  return out
end

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

describe("layers models against tfjs-layers", function()
  for _, name in ipairs { "mlp", "mlp_uint8_shards", "mlp_float16", "cnn", "image", "sequence", "embedding",
    "activations", "functional", "recurrent", "bidirectional", "nested", "transpose", "dot", "masks", "conv3d",
    "states", "rnn_cells", "bidirectional_states" } do
    it(name, function()
      local dir = root .. "/" .. name
      local ref = tfdev.json.decode(read(dir .. "/reference.json"))
      local m <close> = tfdev.model(dir, { intra_op_threads = 1 })
      assert.are.equal(#ref.inputs, #m.inputs)
      assert.are.equal(#ref.outputs, #m.outputs)
      local feeds = {}
      for i, input in ipairs(ref.inputs) do
        assert.are.equal(input.name, m.inputs[i].name)
        feeds[input.name] = tfdev.tensor { dtype = input.dtype, shape = input.shape, data = input.values }
      end
      local outs = m:run(feeds)
      for k, want in ipairs(ref.outputs) do
        assert.are.equal(want.name, m.outputs[k].name)
        assert.are.same(want.shape, outs[k].shape)
        local got, worst, scale = flat(outs[k]:totable()), 0, 1
        for i, v in ipairs(want.values) do
          worst, scale = math.max(worst, math.abs(v - got[i])), math.max(scale, math.abs(v))
        end
        assert(worst <= 1e-5 * scale, string.format("%s output %s: max diff %g", name, want.name, worst))
      end
    end)
  end
end)

describe("layers models by hand", function()
  local tmp = h.temp_dirs(before_each, after_each)
  local dir
  before_each(function() dir = tmp() end)

  -- A Sequential model of the given layers after an input of shape {nil, n}, weights float32 from a table.
  local function model(layers, n, weights)
    local specs, bytes = {}, {}
    for _, w in ipairs(weights or {}) do
      specs[#specs + 1] = { name = w[1], shape = w[2], dtype = "float32" }
      bytes[#bytes + 1] = string.pack("<" .. string.rep("f", #w[3]), table.unpack(w[3]))
    end
    layers[1].config.batch_input_shape = { tfdev.json.null, n }
    local json = tfdev.json.encode { format = "layers-model",
      modelTopology = { class_name = "Sequential", config = { name = "s", layers = layers } },
      weightsManifest = { { paths = { "w.bin" }, weights = specs } } }
    local f = assert(io.open(dir .. "/w.bin", "wb"))
    f:write(table.concat(bytes))
    f:close()
    f = assert(io.open(dir .. "/model.json", "w"))
    f:write(json)
    f:close()
    return dir .. "/model.json"
  end

  it("computes Keras's formulas where TensorFlow.js has none: ELU's alpha, ReLU's slope and cap", function()
    local path = model({
      { class_name = "ELU", config = { name = "elu", alpha = 0.5 } },
      { class_name = "ReLU", config = { name = "relu", negative_slope = 0.1, max_value = 1.5 } },
    }, 4)
    local m <close> = tfdev.model(path)
    local y = m:run { elu_input = { { -2, -0.5, 0.5, 3 } } }[1]:totable()[1]
    local function elu(x) return x > 0 and x or 0.5 * (math.exp(x) - 1) end
    local function relu(x) return x >= 0 and math.min(x, 1.5) or 0.1 * x end
    for i, x in ipairs { -2, -0.5, 0.5, 3 } do assert.near(relu(elu(x)), y[i], 1e-6) end
  end)

  it("runs Keras's GRU with reset_after (two bias rows), which TensorFlow.js refuses, by Keras's formula", function()
    local W = { 0.1, -0.2, 0.3, 0.05, -0.4, 0.25, -0.3, 0.2, 0.1, -0.15, 0.35, -0.05 } -- [2, 6]: z, r, h columns
    local U = { 0.2, 0.1, -0.3, 0.4, 0.15, -0.25, -0.1, 0.3, 0.2, -0.2, 0.05, 0.45 }
    local B = { 0.01, -0.02, 0.03, 0.04, -0.05, 0.06, -0.07, 0.08, 0.09, -0.1, 0.11, -0.12 } -- [2, 6]: input, recurrent
    local path = model({ { class_name = "Reshape", config = { name = "r", target_shape = { 3, 2 } } },
      { class_name = "GRU", config = { name = "g", units = 2, reset_after = true, recurrent_activation = "sigmoid",
        return_sequences = true } } }, 6,
      { { "g/kernel", { 2, 6 }, W }, { "g/recurrent_kernel", { 2, 6 }, U }, { "g/bias", { 2, 6 }, B } })
    local xs = { 0.5, -1, 0.25, 2, -0.75, 1.5 }
    local m <close> = tfdev.model(path)
    local y = m:run { r_input = { xs } }[1]:totable()[1]
    local function sig(v) return 1 / (1 + math.exp(-v)) end
    local h = { 0, 0 }
    for t = 1, 3 do
      local x = { xs[2 * t - 1], xs[2 * t] }
      local function proj(M, v, col) return v[1] * M[col] + v[2] * M[6 + col] end
      local nh = {}
      for j = 1, 2 do
        local z = sig(proj(W, x, j) + B[j] + proj(U, h, j) + B[6 + j])
        local r = sig(proj(W, x, 2 + j) + B[2 + j] + proj(U, h, 2 + j) + B[8 + j])
        local hh = math.tanh(proj(W, x, 4 + j) + B[4 + j] + r * (proj(U, h, 4 + j) + B[10 + j]))
        nh[j] = z * h[j] + (1 - z) * hh
      end
      h = nh
      for j = 1, 2 do assert.near(h[j], y[t][j], 1e-6) end
    end
  end)

  it("finds a recurrent layer's weights under Keras's cell names (lstm/lstm_cell/kernel) as under TensorFlow.js's", function()
    local W = { 0.1, -0.2, 0.3, 0.05, -0.4, 0.25, -0.3, 0.2, 0.1, -0.15, 0.35, -0.05 }
    local U = { 0.2, 0.1, -0.1, 0.3, 0.05, -0.2, -0.25, 0.15, 0.2, 0.1, -0.3, 0.4 }
    local B = { 0.01, -0.02, 0.03, 0.04, -0.05, 0.06 }
    local layers = function() return { { class_name = "Reshape", config = { name = "r", target_shape = { 3, 2 } } },
      { class_name = "GRU", config = { name = "g", units = 2, recurrent_activation = "sigmoid" } } } end
    local xs = { { 0.5, -1, 0.25, 2, -0.75, 1.5 } }
    local m1 <close> = tfdev.model(model(layers(), 6,
      { { "g/kernel", { 2, 6 }, W }, { "g/recurrent_kernel", { 2, 6 }, U }, { "g/bias", { 6 }, B } }))
    local want = m1:run { r_input = xs }[1]:totable()[1]
    local m2 <close> = tfdev.model(model(layers(), 6,
      { { "g/gru_cell/kernel", { 2, 6 }, W }, { "g/gru_cell/recurrent_kernel", { 2, 6 }, U }, { "g/gru_cell/bias", { 6 }, B } }))
    local got = m2:run { r_input = xs }[1]:totable()[1]
    for i = 1, 2 do assert.near(want[i], got[i], 1e-7) end
    assert.are_not.equal(0, want[1])
  end)

  it("names the layer and what tfdev lacks", function()
    local cases = {
      { "UNIMPLEMENTED", "layer 'm': layer class 'ConvLSTM2D' is not supported",
        { { class_name = "ConvLSTM2D", config = { name = "m", filters = 1 } } } },
      { "UNIMPLEMENTED", "layer 'lstm' (LSTM): an input of rank 2 (it takes [batch, time, features]) is not supported",
        { { class_name = "LSTM", config = { name = "lstm", units = 2 } } } },
      { "UNIMPLEMENTED", "layer 'n' (RNN): an RNN over a cell other than SimpleRNNCell, LSTMCell and GRUCell is not supported",
        { { class_name = "Reshape", config = { name = "r", target_shape = { 2, 1 } } },
          { class_name = "RNN", config = { name = "n", cell = { class_name = "StackedRNNCells", config = {} } } } } },
      { "UNIMPLEMENTED", "layer 'g' (GRU): a stateful layer is not supported",
        { { class_name = "Reshape", config = { name = "r", target_shape = { 2, 1 } } },
          { class_name = "GRU", config = { name = "g", units = 2, stateful = true } } } },
      { "UNIMPLEMENTED", "layer 'c' (Conv2D): data_format channels_first is not supported",
        { { class_name = "Conv2D", config = { name = "c", filters = 1, kernel_size = 1, data_format = "channels_first" } } } },
      { "UNIMPLEMENTED", "layer 'd': activation 'gelu' is not supported",
        { { class_name = "Dense", config = { name = "d", units = 1, activation = "gelu" } } } },
      { "INVALID_ARGUMENT", "a Sequential model needs a list of layers",
        { { class_name = "Sequential", config = { name = "inner", layers = {} } } } },
      { "INVALID_ARGUMENT", "two layers are named 'd'",
        { { class_name = "Activation", config = { name = "d", activation = "relu" } },
          { class_name = "Activation", config = { name = "d", activation = "relu" } } } },
      { "INVALID_ARGUMENT", "Const 'd/bias' has no value: neither the JSON nor the weights give it (2 such nodes)",
        { { class_name = "Dense", config = { name = "d", units = 1 } } } },
    }
    for _, case in ipairs(cases) do h.raises(case[1], case[2], tfdev.graph_def.load, model(case[3], 2)) end
  end)

  it("reads numbers past int64's range as int32's limits (a fuzzer's dilation_rate of 1e30)", function()
    local m <close> = tfdev.model(model({ { class_name = "Activation", config = { name = "a", activation = "relu" } } }, 1e30))
    assert.equal("tfdev.model (a_input float32[-1,2147483647]) -> (a float32)", tostring(m))
    local path = model({ { class_name = "Reshape", config = { name = "r", target_shape = { 1, 1, 1 } } },
      { class_name = "Conv2D", config = { name = "c", filters = 1, kernel_size = 1, dilation_rate = { 1, -1e300 },
        use_bias = false } } }, 1, { { "c/kernel", { 1, 1, 1, 1 }, { 2 } } })
    h.raises("INVALID_ARGUMENT", "dilations", function() tfdev.model(path):run { r_input = { { 3 } } } end)
  end)

  it("a functional model whose layers never get their inputs is refused", function()
    local f = assert(io.open(dir .. "/model.json", "w"))
    f:write(tfdev.json.encode { format = "layers-model", modelTopology = { class_name = "Model", config = {
      name = "m", input_layers = { { "x", 0, 0 } }, output_layers = { { "a", 0, 0 } },
      layers = {
        { class_name = "InputLayer", name = "x", config = { name = "x", batch_input_shape = { tfdev.json.null, 2 } },
          inbound_nodes = {} },
        { class_name = "Activation", name = "a", config = { name = "a", activation = "relu" },
          inbound_nodes = { { { "b", 0, 0, {} } } } },
        { class_name = "Activation", name = "b", config = { name = "b", activation = "relu" },
          inbound_nodes = { { { "a", 0, 0, {} } } } },
      } } } })
    f:close()
    h.raises("INVALID_ARGUMENT", "2 layers never get their inputs (a cycle, or an input no layer makes)",
      tfdev.graph_def.load, dir .. "/model.json")
  end)
end)
