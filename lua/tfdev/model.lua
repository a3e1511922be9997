-- tfdev.model(path_or_graph_def [, session_options]): a loaded graph, ready to run.
--
-- m.inputs and m.outputs list {name=, dtype=, shape=}. A model with a signature (TensorFlow.js
-- keeps TensorFlow's SignatureDef in model.json) lists its entries in the file's order: name is
-- the signature's key and tensor the graph tensor it stands for. Otherwise the inputs are the
-- graph's Placeholders (their dtype and shape attrs) and the outputs its sinks (output 0 of every
-- node no other node reads, leaving out Consts, NoOps and Placeholders), in graph order.
-- m:run(feeds) takes feeds keyed by input name (or by tensor or node name) and returns the outputs
-- in m.outputs order. m.session is the session; m:close() (or <close>, or collection) closes it.
local core = require "tfdev.core"

local Model = {}
Model.__index = Model
Model.__name = "tfdev.model"

local NOT_OUTPUTS = { Const = true, NoOp = true, Placeholder = true, PlaceholderWithDefault = false }

local function node_of(input) return (input:gsub("^%^", ""):gsub(":%d+$", "")) end

local function from_signature(sig)
  local inputs, outputs = {}, {}
  for _, e in ipairs(sig.inputs or {}) do
    inputs[#inputs + 1] = { name = e.key, tensor = e.name, dtype = e.dtype, shape = e.shape }
  end
  for _, e in ipairs(sig.outputs or {}) do
    outputs[#outputs + 1] = { name = e.key, tensor = e.name, dtype = e.dtype, shape = e.shape }
  end
  return inputs, outputs
end

local function describe(gd)
  if gd.signature and #(gd.signature.outputs or {}) > 0 then return from_signature(gd.signature) end
  local consumed, inputs, outputs = {}, {}, {}
  for _, n in ipairs(gd.node) do
    for _, i in ipairs(n.input or {}) do consumed[node_of(i)] = true end
  end
  for _, n in ipairs(gd.node) do
    local attr = n.attr or {}
    if n.op == "Placeholder" then
      inputs[#inputs + 1] = { name = n.name, dtype = attr.dtype, shape = attr.shape }
    elseif not consumed[n.name] and not NOT_OUTPUTS[n.op] then
      outputs[#outputs + 1] = { name = n.name .. ":0", dtype = attr.T or attr.dtype or attr.DstT }
    end
  end
  return inputs, outputs
end

local function new(source, options, load_options)
  local gd = type(source) == "string" and core.graph_def.load(source, load_options) or source
  if type(gd) == "table" and type(gd.graph_def) == "function" then gd = gd:graph_def() end
  if type(gd) ~= "table" then
    error(core.error.new("INVALID_ARGUMENT", "tfdev.model takes a path or a GraphDef table, got " .. type(source)), 2)
  end
  local inputs, outputs = describe(gd)
  local session = core.session(options)
  session:create(gd)
  local fetches, feed_names = {}, {}
  for i, o in ipairs(outputs) do fetches[i] = o.tensor or o.name end
  for _, i in ipairs(inputs) do if i.tensor then feed_names[i.name] = i.tensor end end
  return setmetatable({ inputs = inputs, outputs = outputs, session = session, fetches = fetches,
    graph_def = gd, feed_names = feed_names }, Model)
end

--- Runs the model: feeds keyed by input name (tensors or nested tables); the outputs in order
--- (and run metadata second when run_options asks for it, as session:run does).
function Model:run(feeds, run_options)
  local named = {}
  for k, v in pairs(feeds or {}) do named[self.feed_names[k] or k] = v end
  return self.session:run(named, self.fetches, nil, run_options)
end

function Model:close() self.session:close() end
Model.__close = Model.close
Model.__gc = Model.close

return { new = new, describe = describe }
