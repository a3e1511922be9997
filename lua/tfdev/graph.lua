-- tfdev.graph(): a builder that writes GraphDef tables.
--
--   local g = tfdev.graph()
--   local x = g:placeholder("float32", {-1, 2}, {name = "x"})
--   local w = g:const({{1, 2}, {3, 4}}, {dtype = "float32"})
--   local y = g:op("Relu", {g:op("MatMul", {x, w})}, {name = "y"})
--   local z = y * 2 + 1                  -- arithmetic on outputs adds nodes
--   session:create(g)                    -- or g:graph_def() for the table
--
-- Outputs know their graph and dtype; plain numbers and tables next to them
-- become Consts of the same dtype.
local core = require "tfdev.core"

local Graph = {}
Graph.__index = Graph

local Output = {}
Output.__index = Output

local function is_output(v) return getmetatable(v) == Output end

-- Ops whose result dtype is not their first input's.
local dtype_from_input = { Fill = 2 }
local fixed_dtype = { Shape = "int32", VarHandleOp = "resource" }

function Output:__tostring() return self.index == 0 and self.node or (self.node .. ":" .. self.index) end

function Output:name() return self.node .. ":" .. self.index end

local function new_graph()
  return setmetatable({ nodes = {}, by_name = {}, counters = {}, initializers = {} }, Graph)
end

function Graph:unique_name(base)
  if not self.by_name[base] then return base end
  local n = self.counters[base] or 0
  repeat n = n + 1 until not self.by_name[base .. "_" .. n]
  self.counters[base] = n
  return base .. "_" .. n
end

--- Adds a node and returns its first output (or nil for ops with no output).
-- opts: name, device, control_inputs (list of outputs or node names), dtype (of the result), and attrs.
function Graph:op(op_type, inputs, opts)
  opts = opts or {}
  local name = opts.name and opts.name or self:unique_name(op_type)
  if self.by_name[name] then error(core.error.new("INVALID_ARGUMENT", "node name '" .. name .. "' is already used"), 2) end
  local input, first_dtype, dtypes = {}, nil, {}
  for i, v in ipairs(inputs or {}) do
    if not is_output(v) then v = self:const(v, { dtype = first_dtype }) end
    if v.graph ~= self then error(core.error.new("INVALID_ARGUMENT", "input " .. i .. " of '" .. name .. "' belongs to another graph"), 2) end
    first_dtype = first_dtype or v.dtype
    dtypes[i] = v.dtype
    input[#input + 1] = tostring(v)
  end
  for _, c in ipairs(opts.control_inputs or {}) do
    input[#input + 1] = "^" .. (is_output(c) and c.node or tostring(c))
  end
  local attr = {}
  for k, v in pairs(opts) do
    if k ~= "name" and k ~= "device" and k ~= "control_inputs" and k ~= "result_dtype" then attr[k] = v end
  end
  local node = { name = name, op = op_type, input = input, attr = attr, device = opts.device }
  self.nodes[#self.nodes + 1] = node
  self.by_name[name] = node
  local dtype = opts.result_dtype or fixed_dtype[op_type] or attr.dtype or attr.DstT or attr.out_type
    or dtypes[dtype_from_input[op_type] or 1]
  return setmetatable({ graph = self, node = name, index = 0, dtype = dtype }, Output)
end

--- Output `index` of an existing node, by name.
function Graph:output(name, index)
  local node = self.by_name[name]
  if not node then error(core.error.new("NOT_FOUND", "graph has no node named '" .. name .. "'"), 2) end
  return setmetatable({ graph = self, node = name, index = index or 0 }, Output)
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
    shared_name = opts.shared_name or name, container = opts.container, result_dtype = "resource" })
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

-- Arithmetic on outputs.
local function binary(op)
  return function(a, b)
    local g = is_output(a) and a.graph or b.graph
    return g:op(op, { a, b })
  end
end
Output.__add = binary("AddV2")
Output.__sub = binary("Sub")
Output.__mul = binary("Mul")
Output.__div = binary("RealDiv")
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
  opts.result_dtype = "resource"
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
  for i, o in ipairs(outs) do o.dtype = q.component_types[i] end
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

return { new = new_graph, Graph = Graph, Output = Output, is_output = is_output }
