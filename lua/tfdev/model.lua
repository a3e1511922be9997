-- tfdev.model(path_or_graph_def [, session_options]): a loaded graph, ready to run.
--
-- m.inputs and m.outputs list {name=, dtype=, shape=}. A model with a signature (TensorFlow.js
-- keeps TensorFlow's SignatureDef in model.json) lists its entries in the file's order: name is
-- the signature's key and tensor the graph tensor it stands for. Otherwise the inputs are the
-- graph's Placeholders (their dtype and shape attrs) and the outputs its sinks (output 0 of every
-- node no other node reads, leaving out Consts, NoOps and Placeholders), in graph order. An input
-- has one name whatever the format: a key "input_1:0" (as some TensorFlow.js signatures write it) is
-- "input_1", the Placeholder's name in the same graph saved as a GraphDef; "input_1:0" is accepted
-- too. <tfdev/model.h> applies the same rules in C (runtime/session/model.c).
-- m:run(feeds) takes feeds keyed by input name (or by key, tensor or node name) and returns the
-- outputs in m.outputs order; m:run_async(feeds) returns a tfdev.future of them; m:callable()
-- returns a session callable taking the inputs in m.inputs order. m.session is the session;
-- m:close() (or <close>) closes it. Collecting the model does not: the session closes when it is
-- collected itself, so a callable, future or m.session kept after the model still works.
local core = require "tfdev.core"

local Model = {}
Model.__index = Model
Model.__name = "tfdev.model"

local NOT_OUTPUTS = { Const = true, NoOp = true, Placeholder = true, PlaceholderWithDefault = false }

local function node_of(input) return (input:gsub("^%^", ""):gsub(":%d+$", "")) end

local function from_signature(sig)
  local inputs, outputs = {}, {}
  for _, e in ipairs(sig.inputs or {}) do
    inputs[#inputs + 1] = { name = e.key:gsub(":0$", ""), key = e.key, tensor = e.name, dtype = e.dtype, shape = e.shape }
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
  for _, i in ipairs(inputs) do
    local tensor = i.tensor or i.name .. ":0"
    feed_names[i.name], feed_names[i.name .. ":0"] = tensor, tensor
    if i.key then feed_names[i.key] = tensor end
  end
  return setmetatable({ inputs = inputs, outputs = outputs, session = session, fetches = fetches,
    graph_def = gd, feed_names = feed_names }, Model)
end

local function named_feeds(self, feeds)
  local named = {}
  for k, v in pairs(feeds or {}) do named[self.feed_names[k] or k] = v end
  return named
end

--- Runs the model: feeds keyed by input name (tensors or nested tables); the outputs in order
--- (and run metadata second when run_options asks for it, as session:run does).
function Model:run(feeds, run_options)
  return self.session:run(named_feeds(self, feeds), self.fetches, nil, run_options)
end

--- The same run, started: a tfdev.future whose result() is the outputs in order.
function Model:run_async(feeds, run_options)
  return self.session:run_async(named_feeds(self, feeds), self.fetches, nil, run_options)
end

--- A callable of the session (resolved once): call it with the inputs in m.inputs order.
function Model:callable(options)
  local feeds = {}
  for i, input in ipairs(self.inputs) do feeds[i] = self.feed_names[input.name] end
  local spec = { feeds = feeds, fetches = self.fetches }
  for k, v in pairs(options or {}) do spec[k] = v end
  return self.session:make_callable(spec)
end

local function entry_text(e)
  local dims = {}
  for i, d in ipairs(e.shape or {}) do dims[i] = tostring(d) end
  return string.format("%s %s%s", e.name, e.dtype or "?", e.shape and "[" .. table.concat(dims, ",") .. "]" or "")
end

function Model:__tostring()
  local ins, outs = {}, {}
  for i, e in ipairs(self.inputs) do ins[i] = entry_text(e) end
  for i, e in ipairs(self.outputs) do outs[i] = entry_text(e) end
  return string.format("tfdev.model (%s) -> (%s)", table.concat(ins, ", "), table.concat(outs, ", "))
end

function Model:close() self.session:close() end
Model.__close = Model.close

return { new = new, describe = describe }
