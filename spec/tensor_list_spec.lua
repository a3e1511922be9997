-- TensorList ops: lists of tensors in scalar variants (DT_VARIANT), with TensorFlow's semantics
-- (copy on write, uninitialized elements, element shapes) and error texts; variant tensors in Lua
-- and in loaded models.
local tfdev = require "tfdev"
local h = require "spec.support.helpers"

local function i32(v) return tfdev.tensor(v, "int32") end
local function f32(v) return tfdev.tensor(v, "float32") end
local function const(name, value, inputs) return { name = name, op = "Const", attr = { value = value }, input = inputs } end

-- Runs graph g (a list of nodes) and returns the fetched tensors (a list).
local function run(nodes, fetches, feeds)
  local s <close> = tfdev.session { optimize_graph = false }
  s:create { node = nodes }
  return s:run(feeds or {}, fetches)
end

local function reserve(name, n, shape, dtype)
  return {
    const(name .. "/shape", i32(shape)), const(name .. "/n", i32(n)),
    { name = name, op = "TensorListReserve", input = { name .. "/shape", name .. "/n" },
      attr = { element_dtype = dtype or "float32" } },
  }
end

local function cat(...)
  local out = {}
  for _, list in ipairs { ... } do
    for _, n in ipairs(list) do out[#out + 1] = n end
  end
  return out
end

local function set(name, list, index, value, dtype)
  return {
    const(name .. "/i", i32(index)), const(name .. "/v", value),
    { name = name, op = "TensorListSetItem", input = { list, name .. "/i", name .. "/v" },
      attr = { element_dtype = dtype or "float32" } },
  }
end

local function get(name, list, index, shape, dtype)
  return {
    const(name .. "/i", i32(index)), const(name .. "/s", i32(shape or -1)),
    { name = name, op = "TensorListGetItem", input = { list, name .. "/i", name .. "/s" },
      attr = { element_dtype = dtype or "float32" } },
  }
end

local function stack(name, list, shape, dtype, num)
  return {
    const(name .. "/s", i32(shape or -1)),
    { name = name, op = "TensorListStack", input = { list, name .. "/s" },
      attr = { element_dtype = dtype or "float32", num_elements = num } },
  }
end

describe("TensorList", function()
  it("reserves, sets, gets and stacks; unset elements stack as zeros", function()
    local out = run(cat(reserve("l", 3, { 2 }), set("a", "l", 0, f32 { 1, 2 }), set("b", "a", 2, f32 { 5, 6 }),
      get("g", "b", 2), get("unset", "b", 1), stack("st", "b", { 2 })), { "g", "unset", "st" })
    assert.are.same({ 5, 6 }, out[1]:totable())
    assert.are.same({ 0, 0 }, out[2]:totable())
    assert.are.same({ { 1, 2 }, { 0, 0 }, { 5, 6 } }, out[3]:totable())
  end)

  it("makes a list from a tensor's rows and stacks it back", function()
    local x = i32 { { 1, 2, 3 }, { 4, 5, 6 } }
    local out = run(cat({ const("x", x), const("es", i32 { -1 }),
      { name = "l", op = "TensorListFromTensor", input = { "x", "es" } },
      { name = "len", op = "TensorListLength", input = { "l" } },
      { name = "shape", op = "TensorListElementShape", input = { "l" }, attr = { shape_type = "int32" } } },
      get("row", "l", 1, nil, "int32"), stack("back", "l", { 3 }, "int32", 2)), { "row", "back", "len", "shape" })
    assert.are.same({ 4, 5, 6 }, out[1]:totable())
    assert.are.same({ { 1, 2, 3 }, { 4, 5, 6 } }, out[2]:totable())
    assert.are.equal(2, out[3]:item())
    assert.are.same({ -1 }, out[4]:totable()) -- the shape the list was given, not its elements'
  end)

  it("pushes back and pops back, up to max_num_elements", function()
    local nodes = cat({ const("es", i32 { 2 }), const("max", i32(2)),
      { name = "l", op = "EmptyTensorList", input = { "es", "max" }, attr = { element_dtype = "float32" } },
      const("v1", f32 { 1, 1 }), const("v2", f32 { 2, 2 }), const("v3", f32 { 3, 3 }),
      { name = "p1", op = "TensorListPushBack", input = { "l", "v1" } },
      { name = "p2", op = "TensorListPushBack", input = { "p1", "v2" } },
      { name = "p3", op = "TensorListPushBack", input = { "p2", "v3" } },
      { name = "pop", op = "TensorListPopBack", input = { "p2", "es" }, attr = { element_dtype = "float32" } },
      { name = "len", op = "TensorListLength", input = { "pop" } },
      { name = "len2", op = "TensorListLength", input = { "p2" } } })
    local out = run(nodes, { "pop:1", "len", "len2" })
    assert.are.same({ 2, 2 }, out[1]:totable())
    assert.are.equal(1, out[2]:item())
    assert.are.equal(2, out[3]:item()) -- the list popped from is unchanged: lists are copied on write
    h.raises("INVALID_ARGUMENT", "node 'p3' (TensorListPushBack): Tried to push item into a full list list size: 2 " ..
      "max_num_elements: 2", run, nodes, { "p3" })
    local empty = cat({ const("es", i32 { 2 }), const("max", i32(-1)),
      { name = "l", op = "EmptyTensorList", input = { "es", "max" }, attr = { element_dtype = "float32" } },
      { name = "pop", op = "TensorListPopBack", input = { "l", "es" }, attr = { element_dtype = "float32" } } })
    h.raises("INVALID_ARGUMENT", "Trying to pop from an empty list.", run, empty, { "pop:1" })
  end)

  it("copies on write: a list read by two writers stays as it was", function()
    local out = run(cat(reserve("l", 2, { -1 }), set("a", "l", 0, f32 { 1 }), set("b", "l", 0, f32 { 2, 2 }),
      get("ga", "a", 0), get("gb", "b", 0), { { name = "len", op = "TensorListLength", input = { "l" } } },
      get("gl", "l", 1, { 3 })), { "ga", "gb", "len", "gl" })
    assert.are.same({ 1 }, out[1]:totable())
    assert.are.same({ 2, 2 }, out[2]:totable())
    assert.are.equal(2, out[3]:item())
    assert.are.same({ 0, 0, 0 }, out[4]:totable()) -- never set: zeros of the shape asked for
  end)

  it("grows with resize_if_index_out_of_bounds", function()
    local nodes = cat(reserve("l", 1, -1), {
      const("i", i32(3)), const("v", f32(7)),
      { name = "s", op = "TensorListSetItem", input = { "l", "i", "v" }, attr = { resize_if_index_out_of_bounds = true } },
      { name = "len", op = "TensorListLength", input = { "s" } } }, get("g", "s", 3))
    local out = run(nodes, { "len", "g" })
    assert.are.equal(4, out[1]:item())
    assert.are.equal(7, out[2]:item())
  end)

  it("refuses what TensorFlow refuses, with its texts, naming the node", function()
    local base = reserve("l", 2, { 2 })
    h.raises("INVALID_ARGUMENT", "node 'g' (TensorListGetItem): Trying to access element 2 in a list with 2 elements.",
      run, cat(base, get("g", "l", 2)), { "g" })
    h.raises("INVALID_ARGUMENT", "Trying to access element -1 in a list with 2 elements.", run, cat(base, get("g", "l", -1)),
      { "g" })
    h.raises("INVALID_ARGUMENT", "node 's' (TensorListSetItem): Trying to modify element 5 in a list with 2 elements.",
      run, cat(base, set("s", "l", 5, f32 { 1, 2 })), { "s" })
    h.raises("INVALID_ARGUMENT", "Invalid data types; op elements int32 but list elements float32", run,
      cat(base, set("s", "l", 0, i32 { 1, 2 }, "int32")), { "s" })
    h.raises("INVALID_ARGUMENT", "Invalid data types; op elements int32 but list elements float32", run,
      cat(base, stack("st", "l", { 2 }, "int32")), { "st" })
    h.raises("INVALID_ARGUMENT", "Tried to set a tensor with incompatible shape at a list index. Item element shape: " ..
      "[3] list shape: [2]", run, cat(base, set("s", "l", 0, f32 { 1, 2, 3 })), { "s" })
    h.raises("INVALID_ARGUMENT", "Operation expected a list with 3 elements but got a list with 2 elements.", run,
      cat(base, stack("st", "l", { 2 }, "float32", 3)), { "st" })
    local unknown = reserve("u", 2, -1)
    h.raises("INVALID_ARGUMENT", "Tried to stack list which only contains uninitialized tensors and has a " ..
      "non-fully-defined element_shape: <unknown>", run, cat(unknown, stack("st", "u")), { "st" })
    h.raises("INVALID_ARGUMENT", "Trying to read an uninitialized tensor but element_shape is not fully defined: " ..
      "<unknown> and no list element is set.", run, cat(unknown, get("g", "u", 0)), { "g" })
    h.raises("INVALID_ARGUMENT", "Incompatible shapes during merge: [2] vs. [3]", run,
      cat(unknown, set("a", "u", 0, f32 { 1, 2 }), set("b", "a", 1, f32 { 1, 2, 3 }), stack("st", "b")), { "st" })
    h.raises("INVALID_ARGUMENT", "The num_elements to reserve must be a non negative number, but got -3", run,
      reserve("l", -3, { 2 }), { "l" })
    h.raises("INVALID_ARGUMENT", "The only valid scalar shape tensor is the fully unknown shape specified as -1.", run,
      reserve("l", 1, 5), { "l" })
    h.raises("RESOURCE_EXHAUSTED", "over tfdev's limit", run, reserve("l", 2147483647, { 2 }), { "l" })
    h.raises("INVALID_ARGUMENT", "Specified a list with shape [3] from a tensor with shape [2]", run,
      { const("x", f32 { { 1, 2 } }), const("es", i32 { 3 }),
        { name = "l", op = "TensorListFromTensor", input = { "x", "es" } } }, { "l" })
    -- What the graph check sees is refused when the session is created.
    h.raises("INVALID_ARGUMENT", "Tensor must be at least a vector, but saw shape: []", run,
      { const("x", f32(1)), const("es", i32(-1)), { name = "l", op = "TensorListFromTensor", input = { "x", "es" } } },
      { "l" })
    h.raises("INVALID_ARGUMENT", "node 'g' (TensorListGetItem): input 0 must be a TensorList (variant), got float32", run,
      { const("x", f32(1)), const("i", i32(0)), const("s", i32(-1)),
        { name = "g", op = "TensorListGetItem", input = { "x", "i", "s" }, attr = { element_dtype = "float32" } } }, { "g" })
    h.raises("INVALID_ARGUMENT", "missing required attr 'element_dtype'", run,
      { const("s", i32(-1)), const("n", i32(1)), { name = "l", op = "TensorListReserve", input = { "s", "n" } } }, { "l" })
  end)

  it("keeps variant tensors away from ops that would copy their elements", function()
    h.raises("INVALID_ARGUMENT", "node 'p' (Pack): T=variant is not supported", run,
      cat(reserve("l", 1, -1), { { name = "p", op = "Pack", input = { "l" } } }), { "p" })
  end)
end)

describe("variant tensors in Lua", function()
  it("types TensorList outputs as variant in the graph builder", function()
    local g = tfdev.graph()
    local l = g:op("TensorListReserve", { g:const({ 2 }, { dtype = "int32" }), g:const(4, { dtype = "int32" }) },
      { element_dtype = "float32" })
    assert.are.equal("variant", l.dtype)
    assert.are.same({}, l.shape)
    local st = g:op("TensorListStack", { l, g:const({ 2 }, { dtype = "int32" }) }, { element_dtype = "float32", num_elements = 4 })
    assert.are.same({ 4, 2 }, st.shape)
  end)

  it("fetches a list handle as a variant tensor that Lua refuses to read", function()
    local l = run(reserve("l", 2, { 2 }), { "l" })[1]
    assert.are.equal("variant", l.dtype)
    assert.are.same({}, l.shape)
    h.raises("INVALID_ARGUMENT", "totable(): a variant tensor holds TensorList handles, which Lua cannot read", l.totable, l)
    h.raises("INVALID_ARGUMENT", "bytes(): a variant tensor", l.bytes, l)
    h.raises("INVALID_ARGUMENT", "item(): a variant tensor", l.item, l)
    assert.matches("variant", tostring(l))
    h.raises("INVALID_ARGUMENT", "unknown dtype 'variant'", tfdev.tensor, { 1 }, "variant")
    h.raises("INVALID_ARGUMENT", "unknown dtype 'variant'", tfdev.from_bytes, "variant", {}, "12345678")
  end)

  it("feeds a fetched list back into a graph", function()
    local l = run(cat(reserve("l", 2, { 1 }), set("a", "l", 1, f32 { 9 })), { "a" })[1]
    local s <close> = tfdev.session()
    s:create { node = cat({ { name = "in", op = "Placeholder", attr = { dtype = "variant" } } }, stack("st", "in", { 1 })) }
    assert.are.same({ { 0 }, { 9 } }, s:run({ ["in"] = l }, "st"):totable())
  end)
end)

describe("models with TensorLists", function()
  local function write(path, text)
    local f = assert(io.open(path, "w"))
    f:write(text)
    f:close()
  end

  it("load TensorFlow.js JSON with DT_VARIANT attrs, and take a uint8 input as int32 as TensorFlow.js does", function()
    local dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir -p " .. dir))
    write(dir .. "/model.json", [[{"format": "graph-model", "modelTopology": {"node": [
      {"name": "image", "op": "Placeholder", "attr": {"dtype": {"type": "DT_UINT8"}, "shape": {"shape": {"dim": [{"size": "-1"}, {"size": "2"}]}}}},
      {"name": "es", "op": "Const", "attr": {"dtype": {"type": "DT_INT32"}, "value": {"tensor": {"dtype": "DT_INT32", "tensorShape": {"dim": [{"size": "1"}]}, "intVal": [2]}}}},
      {"name": "list", "op": "TensorListFromTensor", "input": ["image", "es"], "attr": {"element_dtype": {"type": "DT_UINT8"}, "shape_type": {"type": "DT_INT32"}}},
      {"name": "id", "op": "Identity", "input": ["list"], "attr": {"T": {"type": "DT_VARIANT"}}},
      {"name": "out", "op": "TensorListStack", "input": ["id", "es"], "attr": {"element_dtype": {"type": "DT_UINT8"}, "num_elements": {"i": "-1"}}},
      {"name": "f", "op": "Cast", "input": ["out"], "attr": {"SrcT": {"type": "DT_UINT8"}, "DstT": {"type": "DT_FLOAT"}}}
    ]}, "weightsManifest": [], "signature": {"inputs": {"image:0": {"name": "image:0", "dtype": "DT_UINT8"}}}}]])
    local m <close> = tfdev.model(dir)
    assert.are.equal("int32", m.inputs[1].dtype)
    local y = m.session:run({ image = tfdev.tensor({ { 1, 255 }, { 7, 8 } }, "int32") }, "f")
    assert.are.same({ { 1, 255 }, { 7, 8 } }, y:totable())
    assert.are.equal("uint8", m.session:run({ image = tfdev.tensor({ { 1, 2 } }, "int32") }, "out").dtype)
    os.execute("rm -rf " .. dir)
  end)

  it("name every op tfdev lacks before any attr it cannot read", function()
    local path = os.tmpname()
    write(path, [[{"format": "graph-model", "modelTopology": {"node": [
      {"name": "s", "op": "Placeholder", "attr": {"dtype": {"type": "DT_QINT8"}}},
      {"name": "a", "op": "QuantizedReshape", "input": ["s"]},
      {"name": "b", "op": "TensorListConcatLists", "input": ["a", "a"], "attr": {"element_dtype": {"type": "DT_QINT8"}}}
    ]}, "weightsManifest": []}]])
    h.raises("NOT_FOUND", "the graph uses 2 op types tfdev does not have: 'QuantizedReshape' (node 'a'); " ..
      "'TensorListConcatLists' (node 'b')", tfdev.graph_def.load, path, { format = "tfjs" })
    os.remove(path)
  end)
end)
