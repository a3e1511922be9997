-- tfdev.graph(): a builder that writes GraphDef tables.
--
--   local g = tfdev.graph()
--   local x = g:placeholder("float32", {-1, 2}, {name = "x"})
--   local w = g:const({{1, 2}, {3, 4}}, {dtype = "float32"})
--   local y = g:op("Relu", {g:op("MatMul", {x, w})}, {name = "y"})
--   print(y)                             -- <Output y:0 float32 [?,2]>
--   local z = g:add(y * 2, 1)            -- arithmetic on outputs adds nodes
--   session:create(g)                    -- or g:graph_def() for the table
--   g:sub(z, x); session:extend(g)       -- sends only the nodes the session has not seen
--
-- Each node's output dtypes and shapes come from the C op registry's inference (core.op_infer), the
-- code a session's graph check runs, so what the builder shows is what the session will see and a
-- node the session would refuse is refused when it is added. Plain numbers and tables next to
-- outputs become Consts of the outputs' dtype.
local core = require "tfdev.core"

local Graph = {}
Graph.__index = Graph

local Output = {}
Output.__index = Output

local function is_output(v) return getmetatable(v) == Output end

local function raise(code, message) error(core.error.new(code, message), 3) end

-- "[?,2]" for {-1, 2}, "[]" for a scalar; TensorFlow's "<unknown>" for an unknown rank.
local function shape_string(shape)
  if not shape then return "<unknown>" end
  local dims = {}
  for i, d in ipairs(shape) do dims[i] = d < 0 and "?" or tostring(d) end
  return "[" .. table.concat(dims, ",") .. "]"
end

-- What a REPL shows: <Output y:0 float32 [?,2]>. Not a name: use output:name() for feeds and fetches.
function Output:__tostring()
  local info = self.graph.info[self.node]
  if not info then return "<Output " .. self:name() .. " (not in its graph)>" end
  if info.n == 0 then return "<Output " .. self.node .. " (" .. info.op .. ", no outputs)>" end
  return "<Output " .. self:name() .. " " .. tostring(self.dtype) .. " " .. shape_string(self.shape) .. ">"
end

function Output:name() return self.node .. ":" .. self.index end

-- How a GraphDef input refers to an output: "y" for output 0, as TensorFlow writes it, else "y:1".
local function input_name(v) return v.index == 0 and v.node or (v.node .. ":" .. v.index) end

local function copy(t)
  if not t then return nil end
  local c = {}
  for i, v in ipairs(t) do c[i] = v end
  return c
end

local function new_graph()
  -- info[name]: what the registry inferred for a node: op, n (outputs), dtypes, shapes, and a Const's value.
  return setmetatable({ nodes = {}, by_name = {}, info = {}, counters = {}, initializers = {} }, Graph)
end

function Graph:unique_name(base)
  if not self.by_name[base] then return base end
  local n = self.counters[base] or 0
  repeat n = n + 1 until not self.by_name[base .. "_" .. n]
  self.counters[base] = n
  return base .. "_" .. n
end

local function make_output(g, name, index)
  local info = g.info[name]
  return setmetatable({ graph = g, node = name, index = index, dtype = info.dtypes[index + 1],
    shape = copy(info.shapes[index + 1]) }, Output)
end

-- Drops the nodes added after the first `mark`, so a node the registry refuses leaves no Consts behind.
local function truncate(g, mark)
  for i = #g.nodes, mark + 1, -1 do
    local name = g.nodes[i].name
    g.by_name[name], g.info[name], g.nodes[i] = nil, nil, nil
  end
end

local function add_node(g, op_type, inputs, opts)
  local name = opts.name and opts.name or g:unique_name(op_type)
  if g.by_name[name] then raise("INVALID_ARGUMENT", "node name '" .. name .. "' is already used") end
  -- Plain values take the dtype of the first output among the inputs (2 * y is y's dtype).
  local like
  for _, v in ipairs(inputs or {}) do
    if is_output(v) then like = v.dtype break end
  end
  local input, dtypes, shapes, values = {}, {}, {}, {}
  for i, v in ipairs(inputs or {}) do
    if not is_output(v) then v = g:const(v, { dtype = like }) end
    if v.graph ~= g then raise("INVALID_ARGUMENT", "input " .. i .. " of '" .. name .. "' belongs to another graph") end
    local src = g.info[v.node]
    if v.index >= src.n then
      raise("INVALID_ARGUMENT", "input " .. i .. " of '" .. name .. "' is '" .. v:name() .. "' but '" .. v.node ..
        "' has " .. src.n .. " output" .. (src.n == 1 and "" or "s"))
    end
    dtypes[i], shapes[i] = src.dtypes[v.index + 1], src.shapes[v.index + 1]
    if v.index == 0 then values[i] = src.value end
    input[#input + 1] = input_name(v)
  end
  for _, c in ipairs(opts.control_inputs or {}) do
    input[#input + 1] = "^" .. (is_output(c) and c.node or tostring(c))
  end
  local attr = {}
  for k, v in pairs(opts) do
    if k ~= "name" and k ~= "device" and k ~= "control_inputs" then attr[k] = v end
  end
  -- A Const's value as a tensor, so the nodes reading it see its value (Reshape's shape, ConcatV2's axis).
  if op_type == "Const" and attr.value ~= nil and not core.tensor.is(attr.value) then
    attr.value = core.tensor.new(attr.value, attr.dtype)
  end
  -- Raises the registry's error (NOT_FOUND for an unknown op, INVALID_ARGUMENT naming the node).
  local out_dtypes, out_shapes, n = core.op_infer(op_type, attr, dtypes, shapes, values, name)
  local node = { name = name, op = op_type, input = input, attr = attr, device = opts.device }
  g.nodes[#g.nodes + 1] = node
  g.by_name[name] = node
  g.info[name] = { op = op_type, n = n, dtypes = out_dtypes, shapes = out_shapes,
    value = op_type == "Const" and core.tensor.is(attr.value) and attr.value or nil }
  return make_output(g, name, 0)
end

--- Adds a node and returns its first output (for an op with no outputs, an Output naming the node,
-- usable as a control input or, through .node, a target).
-- opts: name, device, control_inputs (list of outputs or node names), and attrs (dtype, shape, ...).
-- Raises what the op registry's inference raises, and adds nothing then.
function Graph:op(op_type, inputs, opts)
  local mark = #self.nodes
  local ok, out = pcall(add_node, self, op_type, inputs, opts or {})
  if not ok then
    truncate(self, mark)
    error(out, 0) -- already positioned (a string) or a tfdev.error

  end
  return out
end

--- Output `index` (default 0) of an existing node, by name.
function Graph:output(name, index)
  index = index or 0
  local info = self.info[name]
  if not info then raise("NOT_FOUND", "graph has no node named '" .. tostring(name) .. "'") end
  if math.type(index) ~= "integer" or index < 0 or index >= math.max(info.n, 1) then
    raise("INVALID_ARGUMENT", "node '" .. name .. "' (" .. info.op .. ") has " .. info.n .. " output" ..
      (info.n == 1 and "" or "s") .. ", asked for output " .. tostring(index))
  end
  return make_output(self, name, index)
end

function Graph:placeholder(dtype, shape, opts)
  opts = opts or {}
  return self:op("Placeholder", {}, { name = opts.name, device = opts.device, dtype = dtype, shape = shape })
end

--- A Const from a tensor, a nested table or a number. opts.dtype picks the dtype of plain values.
function Graph:const(value, opts)
  opts = opts or {}
  local t = core.tensor.is(value) and value or core.tensor.new(value, opts.dtype)
  return self:op("Const", {}, { name = opts.name or self:unique_name("Const"), device = opts.device, value = t,
    dtype = t.dtype })
end

--- A resource variable: VarHandleOp + an initializer (AssignVariableOp) + a ReadVariableOp.
-- Returns the read value; .handle is the resource, .initializer the assign node's name.
function Graph:variable(initial, opts)
  opts = opts or {}
  local init = is_output(initial) and initial or self:const(initial, { dtype = opts.dtype })
  local name = opts.name or self:unique_name("Variable")
  local dtype = init.dtype or opts.dtype or "float32"
  local handle = self:op("VarHandleOp", {}, { name = name, device = opts.device, dtype = dtype,
    shared_name = opts.shared_name or name, container = opts.container })
  self:op("AssignVariableOp", { handle, init }, { name = name .. "/Assign", dtype = dtype })
  self.initializers[#self.initializers + 1] = name .. "/Assign"
  local value = self:op("ReadVariableOp", { handle }, { name = name .. "/Read", dtype = dtype })
  value.handle = handle
  value.initializer = name .. "/Assign"
  return value
end

--- handle += delta; returns nothing (use the node name as a target).
function Graph:assign_add(variable, delta, opts)
  opts = opts or {}
  local name = opts.name or self:unique_name(variable.handle.node .. "/AssignAdd")
  -- A plain delta takes the variable's dtype (the op's first input is the resource handle).
  if not is_output(delta) then delta = self:const(delta, { dtype = variable.dtype }) end
  self:op("AssignAddVariableOp", { variable.handle, delta }, { name = name, dtype = variable.dtype })
  return name
end

function Graph:graph_def()
  local nodes = {}
  for i, n in ipairs(self.nodes) do nodes[i] = n end
  return { node = nodes }
end

-- Arithmetic: g:add(a, b), g:sub, g:mul, g:div, and the operators + - * / and unary - on outputs.
-- Either side may be a number or a table, which becomes a Const of the other side's dtype.
local arithmetic = { add = "AddV2", sub = "Sub", mul = "Mul", div = "RealDiv" }
for method, op in pairs(arithmetic) do
  Graph[method] = function(self, a, b, opts) return self:op(op, { a, b }, opts) end
  Output["__" .. method] = function(a, b)
    local g = is_output(a) and a.graph or b.graph
    return g:op(op, { a, b })
  end
end
Output.__unm = function(a) return a.graph:op("Neg", { a }) end

-- Sugar for common ops: g:matmul(a, b, {transpose_b = true}), g:relu(x), g:sum(x, axes, {keep_dims = true}) ...
local unary = { "Identity", "Neg", "Abs", "Exp", "Log", "Sqrt", "Square", "Relu", "Sigmoid", "Tanh", "Softmax",
  "ZerosLike", "OnesLike", "Shape" }
for _, op in ipairs(unary) do
  Graph[op:gsub("(%l)(%u)", "%1_%2"):lower()] = function(self, x, opts) return self:op(op, { x }, opts) end
end
function Graph:matmul(a, b, opts) return self:op("MatMul", { a, b }, opts) end
function Graph:bias_add(v, b, opts) return self:op("BiasAdd", { v, b }, opts) end
for _, op in ipairs { "Sum", "Mean", "Max" } do
  Graph[op:lower()] = function(self, x, axes, opts)
    return self:op(op, { x, self:const(axes, { dtype = "int32" }) }, opts)
  end
end
function Graph:reshape(x, shape, opts) return self:op("Reshape", { x, self:const(shape, { dtype = "int32" }) }, opts) end
function Graph:transpose(x, perm, opts) return self:op("Transpose", { x, self:const(perm, { dtype = "int32" }) }, opts) end
function Graph:cast(x, dtype, opts)
  opts = opts or {}
  opts.DstT = dtype
  return self:op("Cast", { x }, opts)
end
function Graph:concat(values, axis, opts)
  local inputs = {}
  for i, v in ipairs(values) do inputs[i] = v end
  inputs[#inputs + 1] = self:const(axis, { dtype = "int32" })
  return self:op("ConcatV2", inputs, opts)
end
function Graph:random_uniform(shape, opts)
  opts = opts or {}
  opts.dtype = opts.dtype or "float32"
  return self:op("RandomUniform", { self:const(shape, { dtype = "int32" }) }, opts)
end
function Graph:random_normal(shape, opts)
  opts = opts or {}
  opts.dtype = opts.dtype or "float32"
  return self:op("RandomStandardNormal", { self:const(shape, { dtype = "int32" }) }, opts)
end
function Graph:fill(shape, value, opts)
  return self:op("Fill", { self:const(shape, { dtype = "int32" }), value }, opts)
end
function Graph:no_op(opts) return self:op("NoOp", {}, opts) end

-- Queues: q = g:fifo_queue({"float32"}, {capacity = 8}); g:enqueue(q, {x}); local v = g:dequeue(q)
function Graph:fifo_queue(component_types, opts)
  opts = opts or {}
  opts.component_types = component_types
  local q = self:op("FIFOQueueV2", {}, opts)
  q.component_types = component_types
  return q
end

--- Adds an enqueue of values (a list, one per component); returns the node name, for targets.
function Graph:enqueue(q, values, opts)
  return self:op("QueueEnqueueV2", { q, table.unpack(values) }, opts).node
end

--- Adds a dequeue; returns one output per component.
function Graph:dequeue(q, opts)
  opts = opts or {}
  opts.component_types = q.component_types
  local first = self:op("QueueDequeueV2", { q }, opts)
  local outs = { first }
  for i = 2, #q.component_types do outs[i] = self:output(first.node, i - 1) end
  return table.unpack(outs)
end

function Graph:queue_size(q, opts) return self:op("QueueSizeV2", { q }, opts) end

-- Session tensors: keep a value between runs by handle (an int64 scalar).
function Graph:get_session_handle(x, opts) return self:op("GetSessionHandle", { x }, opts) end
function Graph:get_session_tensor(handle, dtype, opts)
  opts = opts or {}
  opts.dtype = dtype
  return self:op("GetSessionTensor", { handle }, opts)
end
function Graph:delete_session_tensor(handle, opts) return self:op("DeleteSessionTensor", { handle }, opts).node end

--- Adds a close; returns the node name, for targets.
function Graph:queue_close(q, opts) return self:op("QueueCloseV2", { q }, opts).node end

-- session:create(g) and session:extend(g) with a builder. The C session takes GraphDefs; which of a
-- builder's nodes a session already has is kept here, per session and builder: each sent node's name
-- and fingerprint, in order. extend then sends only the nodes after those, so a builder can be grown
-- and extended run after run, and refuses one whose sent nodes changed since (the session would go on
-- running the old ones, silently).
local sent = setmetatable({}, { __mode = "k" }) -- session -> { [builder] = {{name=, print=}, ...} }

-- Tensors are fingerprinted by identity: a Const given another tensor changed, and hashing the bytes
-- of every weight at every extend would cost as much as sending them.
local tensor_ids = setmetatable({}, { __mode = "k" })
local last_tensor_id = 0

local function key_order(a, b)
  local ta, tb = type(a), type(b)
  if ta ~= tb then return ta < tb end
  return tostring(a) < tostring(b)
end

local function encode(v, out)
  local t = type(v)
  if core.tensor.is(v) then
    local id = tensor_ids[v]
    if not id then
      last_tensor_id = last_tensor_id + 1
      id, tensor_ids[v] = last_tensor_id, last_tensor_id
    end
    out[#out + 1] = "tensor#" .. id
  elseif t == "table" then
    local keys = {}
    for k in pairs(v) do keys[#keys + 1] = k end
    table.sort(keys, key_order)
    out[#out + 1] = "{"
    for _, k in ipairs(keys) do
      encode(k, out)
      out[#out + 1] = "="
      encode(v[k], out)
      out[#out + 1] = ","
    end
    out[#out + 1] = "}"
  elseif t == "string" then
    out[#out + 1] = string.format("%q", v)
  elseif math.type(v) == "float" then
    out[#out + 1] = string.format("%a", v) -- exact, unlike tostring
  else
    out[#out + 1] = t .. ":" .. tostring(v)
  end
end

local function fingerprint(node)
  local out = {}
  encode(node, out)
  return table.concat(out)
end

-- The GraphDef of g's nodes after those in `have`, and `have` with them; raises when a node in `have`
-- is gone or changed.
local function unsent(g, have)
  for i, h in ipairs(have) do
    local node = g.nodes[i]
    if not node or node.name ~= h.name then
      raise("INVALID_ARGUMENT", "node '" .. h.name .. "', which this session was given, is no longer in the graph" ..
        " (a session keeps the nodes it has; add new ones)")
    end
    if fingerprint(node) ~= h.print then
      raise("INVALID_ARGUMENT", "node '" .. h.name .. "' changed since this session was given it" ..
        " (a session keeps the nodes it has; add new ones under new names)")
    end
  end
  local gd, now = { node = {} }, {}
  for i, h in ipairs(have) do now[i] = h end
  for i = #have + 1, #g.nodes do
    local node = g.nodes[i]
    gd.node[#gd.node + 1] = node
    now[i] = { name = node.name, print = fingerprint(node) }
  end
  return gd, now
end

-- session:create(g) and session:extend(g) ask a builder for what to send (the C binding calls this
-- metamethod): the nodes the session has not taken yet, and a function that remembers them, which
-- the binding calls only once the session took them.
function Graph.__session_graph(g, session, extend)
  local have = extend and sent[session] and sent[session][g] or {}
  local gd, now = unsent(g, have)
  return gd, function()
    sent[session] = sent[session] or setmetatable({}, { __mode = "k" })
    sent[session][g] = now
  end
end

return { new = new_graph, Graph = Graph, Output = Output, is_output = is_output }
