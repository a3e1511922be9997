-- tfdev.graph_def: TensorFlow's binary GraphDef (.pb) read and written. Bytes are written here by a
-- small protobuf encoder with TensorFlow's field numbers, the way TensorFlow writes them.
local tfdev = require "tfdev"
local h = require "spec.support.helpers"

-- ---- a protobuf encoder (proto3 wire format) ----
local function varint(n)
  local out = {}
  n = math.tointeger(n)
  repeat -- a negative int64 is its two's complement: ten bytes (>> is a logical shift)
    local b = n & 0x7f
    n = n >> 7
    out[#out + 1] = string.char(n ~= 0 and b | 0x80 or b)
  until n == 0
  return table.concat(out)
end
local function key(field, wire) return varint(field * 8 + wire) end
local function int(field, n) return key(field, 0) .. varint(n) end
local function bytes(field, s) return key(field, 2) .. varint(#s) .. s end
local function msg(field, ...) return bytes(field, table.concat({ ... })) end
local function packed(field, fmt, values)
  local parts = {}
  for i, v in ipairs(values) do parts[i] = fmt == "varint" and varint(v) or string.pack(fmt, v) end
  return bytes(field, table.concat(parts))
end

-- TensorShapeProto: dim = 2 {size = 1}, unknown_rank = 3.
local function shape(dims)
  if dims == "unknown" then return int(3, 1) end
  local parts = {}
  for i, d in ipairs(dims) do parts[i] = msg(2, int(1, d)) end
  return table.concat(parts)
end
-- TensorProto: dtype = 1, tensor_shape = 2, tensor_content = 4, float_val = 5, double_val = 6,
-- int_val = 7, scomplex_val = 9, int64_val = 10, bool_val = 11.
local function tensor(dtype, dims, fields) return int(1, dtype) .. msg(2, shape(dims)) .. (fields or "") end
-- AttrValue: list = 1, s = 2, i = 3, f = 4, b = 5, type = 6, shape = 7, tensor = 8, func = 10.
local function attr(name, value) return msg(5, bytes(1, name), msg(2, value)) end
-- NodeDef: name = 1, op = 2, input = 3, device = 4, attr = 5.
local function node(name, op, inputs, attrs, device)
  local parts = { bytes(1, name), bytes(2, op) }
  for _, i in ipairs(inputs or {}) do parts[#parts + 1] = bytes(3, i) end
  if device then parts[#parts + 1] = bytes(4, device) end
  for _, a in ipairs(attrs or {}) do parts[#parts + 1] = a end
  return msg(1, table.concat(parts))
end
local DT_FLOAT, DT_DOUBLE, DT_INT32, DT_INT64, DT_BOOL, DT_HALF, DT_COMPLEX64 = 1, 2, 3, 9, 10, 19, 8
local VERSIONS = msg(4, int(1, 1205))

local function const(name, dtype, dims, fields)
  return node(name, "Const", {}, { attr("dtype", int(6, dtype)), attr("value", msg(8, tensor(dtype, dims, fields))) })
end

local function by_name(gd)
  local t = {}
  for _, n in ipairs(gd.node) do t[n.name] = n end
  return t
end

describe("tfdev.graph_def", function()
  after_each(function() tfdev.factory.reset() end)

  it("reads the value fields TensorFlow writes, scalars broadcast as TensorFlow does", function()
    local pb = table.concat {
      const("f1", DT_FLOAT, { 2, 3 }, packed(5, "<f", { 1.5 })),              -- one value fills the tensor
      const("i2", DT_INT32, { 4 }, packed(7, "varint", { 1, 2 })),            -- fewer: the last repeats
      const("z", DT_INT64, { 2 }),                                            -- none: zeros
      const("c", DT_FLOAT, { 2 }, bytes(4, string.pack("<ff", 3.25, -1))),   -- tensor_content
      const("d", DT_DOUBLE, {}, packed(6, "<d", { 0.1 })),                    -- scalar
      const("b", DT_BOOL, { 3 }, packed(11, "varint", { 1, 0, 1 })),
      const("neg", DT_INT64, { 2 }, packed(10, "varint", { -5, 7 })),
      const("cx", DT_COMPLEX64, { 3 }, packed(9, "<f", { 1, -2, 0.5, 4 })), -- scomplex_val pairs, the last repeats
      node("x", "Placeholder", {}, { attr("dtype", int(6, DT_FLOAT)), attr("shape", msg(7, shape { -1, 3 })) },
        "/device:CPU:0"),
      node("u", "Placeholder", {}, { attr("dtype", int(6, DT_FLOAT)), attr("shape", msg(7, shape "unknown")) }),
      node("y", "AddV2", { "x", "f1:0" }),
      node("l", "NoOp", { "^y" }, {
        attr("ints", msg(1, packed(3, "varint", { 3, -1 }))),
        attr("types", msg(1, packed(6, "varint", { DT_FLOAT, DT_INT32 }))),
        attr("strs", msg(1, bytes(2, "a"), bytes(2, "bc"))),
        attr("floats", msg(1, packed(4, "<f", { 0.5 }))),
        attr("flag", int(5, 1)),
        attr("alpha", key(4, 5) .. string.pack("<f", 0.25)),
        attr("mode", bytes(2, "SAME")),
      }),
      VERSIONS,
    }
    local gd = tfdev.graph_def.parse(pb)
    local n = by_name(gd)
    assert.are.same({ { 1.5, 1.5, 1.5 }, { 1.5, 1.5, 1.5 } }, n.f1.attr.value:totable())
    assert.are.same({ 1, 2, 2, 2 }, n.i2.attr.value:totable())
    assert.are.equal("int32", n.i2.attr.value.dtype)
    assert.are.same({ 0, 0 }, n.z.attr.value:totable())
    assert.are.same({ 3.25, -1 }, n.c.attr.value:totable())
    assert.are.equal(0.1, n.d.attr.value:item())
    assert.are.same({ true, false, true }, n.b.attr.value:totable())
    assert.are.same({ -5, 7 }, n.neg.attr.value:totable())
    assert.are.same({ { 1, -2 }, { 0.5, 4 }, { 0.5, 4 } }, n.cx.attr.value:totable())
    assert.are.same({ -1, 3 }, n.x.attr.shape)
    assert.are.equal("/device:CPU:0", n.x.device)
    assert.is_nil(n.u.attr.shape) -- unknown rank: tables leave the shape out
    assert.are.same({ "x", "f1:0" }, n.y.input)
    assert.are.same({ "^y" }, n.l.input)
    assert.are.same({ 3, -1 }, n.l.attr.ints)
    assert.are.same({ "float32", "int32" }, n.l.attr.types)
    assert.are.same({ "a", "bc" }, n.l.attr.strs)
    assert.are.same({ 0.5 }, n.l.attr.floats)
    assert.is_true(n.l.attr.flag)
    assert.are.equal(0.25, n.l.attr.alpha)
    assert.are.equal("SAME", n.l.attr.mode)
    -- and it runs
    local s <close> = tfdev.session()
    s:create(gd)
    assert.are.same({ { 2.5, 3.5, 4.5 }, { 1.5, 1.5, 1.5 } }, s:run({ x = { { 1, 2, 3 }, { 0, 0, 0 } } }, "y"):totable())
  end)

  it("loads a model directory: its model.json, its only model file, or the one named after it; else says what is there",
    function()
    local dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir -p '" .. dir .. "'"))
    h.raises("INVALID_ARGUMENT", "is a directory with no model file in it (a .pb, or a TensorFlow.js model .json)",
      tfdev.graph_def.load, dir)
    local g = tfdev.graph()
    g:const(tfdev.tensor({ 1, 2 }, "float32"), { name = "c" })
    tfdev.graph_def.save(g, dir .. "/frozen.pb")
    -- JSON that is not a TensorFlow.js model (reference outputs, say) does not count
    local f = assert(io.open(dir .. "/reference.json", "w"))
    f:write('{"outputs": [1, 2]}')
    f:close()
    assert.are.equal("c", tfdev.graph_def.load(dir).node[1].name) -- the only model file
    g:const(tfdev.tensor({ 3 }, "float32"), { name = "d" })
    tfdev.graph_def.save(g, dir .. "/other.pb")
    h.raises("INVALID_ARGUMENT", "is a directory with several model files", tfdev.graph_def.load, dir)
    h.raises("INVALID_ARGUMENT", "none named model.json or after the directory: name one", tfdev.graph_def.load, dir)
    -- of several, the one named after the directory (what ../shared/models/facemesh holds)
    local base = dir:match("([^/]+)$")
    tfdev.graph_def.save(g, dir .. "/" .. base .. ".pb")
    assert.are.equal(2, #tfdev.graph_def.load(dir).node)
    for _, name in ipairs { "frozen.pb", "other.pb", base .. ".pb", "reference.json" } do os.remove(dir .. "/" .. name) end
    os.remove(dir)
  end)

  it("loads the shared models' directories as a new user names them", function()
    local models = (debug.getinfo(1, "S").source:match("^@(.*)/spec/[^/]*$") or ".") .. "/../shared/models"
    local f = io.open(models .. "/facemesh/facemesh.json")
    if not f then
      pending("../shared/models is not here")
      return
    end
    f:close()
    local gd = tfdev.graph_def.load(models .. "/facemesh")
    assert.is_true(#gd.node > 100)
  end)

  it("writes what it reads: a saved graph loads back equal and runs the same", function()
    local g = tfdev.graph()
    local x = g:placeholder("float32", { -1, 3 }, { name = "x" })
    local w = g:const(tfdev.tensor({ { 1, 2 }, { 3, 4 }, { 5, 6 } }, "float32"), { name = "w" })
    local b = g:const(tfdev.tensor({ -10, 1 }, "float32"), { name = "b" })
    local y = g:op("LeakyRelu", { g:op("BiasAdd", { g:op("MatMul", { x, w }, { name = "mm" }), b }, { name = "ba" }) },
      { name = "y", alpha = 0.5 })
    g:op("Sum", { y, g:const(tfdev.tensor({ 0, 1 }, "int64"), { name = "axes" }) }, { name = "total", keep_dims = true })
    local path = os.tmpname()
    tfdev.graph_def.save(g, path)
    local back = tfdev.graph_def.load(path)
    os.remove(path)
    local orig = g:graph_def()
    assert.are.equal(#orig.node, #back.node)
    local nb = by_name(back)
    for _, n in ipairs(orig.node) do
      local m = nb[n.name]
      assert.are.equal(n.op, m.op)
      assert.are.same(n.input, m.input)
      for k, v in pairs(n.attr) do
        if tfdev.tensor.is(v) then assert.are.same(v:totable(), m.attr[k]:totable())
        else assert.are.same(v, m.attr[k]) end
      end
    end
    -- serialize/parse round trip in memory: the same nodes
    local again = by_name(tfdev.graph_def.parse(tfdev.graph_def.serialize(back)))
    for name, n in pairs(nb) do
      assert.are.same(n.input, again[name].input)
      assert.are.equal(n.op, again[name].op)
    end
    local s1 <close> = tfdev.session()
    s1:create(g)
    local s2 <close> = tfdev.session()
    s2:create(back)
    local X = { { 1, 1, 1 }, { 2, 0, -1 } }
    assert.are.same(s1:run({ x = X }, { "y", "total" })[2]:totable(), s2:run({ x = X }, { "y", "total" })[2]:totable())
  end)

  it("refuses what it cannot hold, naming the node and attr", function()
    local function parse_fails(code, fragment, pb) h.raises(code, fragment, tfdev.graph_def.parse, pb) end
    parse_fails("UNIMPLEMENTED", "node 'h', attr 'value': dtype DT_BFLOAT16 (14) is not supported",
      node("h", "Const", {}, { attr("value", msg(8, tensor(14, { 1 }, packed(13, "varint", { 16256 })))) }))
    parse_fails("UNIMPLEMENTED", "node 'p', attr 'dtype': dtype DT_QINT8 (11) is not supported",
      node("p", "Placeholder", {}, { attr("dtype", int(6, 11)) }))
    parse_fails("INVALID_ARGUMENT", "tensor_content has 3 bytes but a float32 tensor of 2 elements needs 8",
      const("c", DT_FLOAT, { 2 }, bytes(4, "abc")))
    parse_fails("INVALID_ARGUMENT", "3 values for a tensor of 2 elements",
      const("c", DT_INT32, { 2 }, packed(7, "varint", { 1, 2, 3 })))
    parse_fails("INVALID_ARGUMENT", "shape has 9 dimensions; tfdev supports at most 8",
      const("c", DT_FLOAT, { 1, 1, 1, 1, 1, 1, 1, 1, 1 }))
    parse_fails("INVALID_ARGUMENT", "node 'c', attr 'value': dimension 1 has size -4",
      const("c", DT_FLOAT, { 2, -4 }))
    parse_fails("INVALID_ARGUMENT", "element count overflows 64 bits",
      const("c", DT_FLOAT, { 2 ^ 40 // 1, 2 ^ 40 // 1 }))
    parse_fails("RESOURCE_EXHAUSTED", "expanded from 1 values is over tfdev's limit",
      const("c", DT_FLOAT, { 2 ^ 31 // 1 }, packed(5, "<f", { 0 })))
    parse_fails("INVALID_ARGUMENT", "a string holds a NUL byte",
      node("n", "NoOp", {}, { attr("s", bytes(2, "a\0b")) }))
    parse_fails("UNIMPLEMENTED", "function-valued attrs ('f') are not supported",
      node("n", "NoOp", {}, { attr("fn", msg(10, bytes(1, "f"))) }))
    parse_fails("UNIMPLEMENTED", "lists of shapes are not supported",
      node("n", "NoOp", {}, { attr("shapes", msg(1, msg(7, shape { 1 }))) }))
    -- A node calling a library function without outputs (library = 2 { function = 1 { signature = 1 { name = 1 }}})
    parse_fails("UNIMPLEMENTED", "node 'call' (my_fn): a call without outputs is not supported",
      node("call", "my_fn", {}) .. msg(2, msg(1, msg(1, bytes(1, "my_fn")))))
    -- An uncalled library is ignored.
    assert.are.equal(1, #tfdev.graph_def.parse(node("n", "NoOp") .. msg(2, msg(1, msg(1, bytes(1, "unused"))))).node)
    -- Bytes that are not a GraphDef, and a cut-off one.
    parse_fails("INVALID_ARGUMENT", "are not a binary GraphDef", "\255\255\255\255")
    local good = const("c", DT_FLOAT, { 2 }, bytes(4, string.pack("<ff", 1, 2)))
    parse_fails("INVALID_ARGUMENT", "are not a binary GraphDef", good:sub(1, #good - 3))
    -- An empty input is an empty graph, as protobuf says.
    assert.are.same({}, tfdev.graph_def.parse("").node)
  end)

  it("reads uint8 and float16 tensors (int_val and half_val, as TensorFlow writes them) and casts them", function()
    local gd = tfdev.graph_def.parse(table.concat {
      const("u", 4, { 3 }, packed(7, "varint", { 0, 7, 255 })),
      const("h", DT_HALF, { 3 }, packed(13, "varint", { 0x3c00, 0xc100, 0x3555 })), -- 1, -2.5, 0.333251953125
      node("hf", "Cast", { "h" }, { attr("SrcT", int(6, DT_HALF)), attr("DstT", int(6, DT_FLOAT)) }),
      node("uf", "Cast", { "u" }, { attr("SrcT", int(6, 4)), attr("DstT", int(6, DT_INT32)) }),
    })
    local n = by_name(gd)
    assert.are.equal("uint8", n.u.attr.value.dtype)
    assert.are.same({ 0, 7, 255 }, n.u.attr.value:totable())
    assert.are.equal("float16", n.h.attr.value.dtype)
    assert.are.same({ 1, -2.5, 0.333251953125 }, n.h.attr.value:totable())
    local s <close> = tfdev.session { optimize_graph = false }
    s:create(gd)
    local o = s:run({}, { "hf", "uf" })
    assert.are.same({ 1, -2.5, 0.333251953125 }, o[1]:totable())
    assert.are.same({ 0, 7, 255 }, o[2]:totable())
    -- and written back as they came
    local back = by_name(tfdev.graph_def.parse(tfdev.graph_def.serialize(gd)))
    assert.are.same({ 1, -2.5, 0.333251953125 }, back.h.attr.value:totable())
    assert.are.same({ 0, 7, 255 }, back.u.attr.value:totable())
  end)

  it("accepts TensorFlow's dtype names in GraphDef tables", function()
    local s <close> = tfdev.session()
    s:create { node = {
      { name = "x", op = "Placeholder", attr = { dtype = "DT_FLOAT", shape = { 2 } } },
      { name = "c", op = "Cast", input = { "x" }, attr = { SrcT = "DT_FLOAT", DstT = "DT_INT64" } },
    } }
    local y = s:run({ x = { 1.5, -2.5 } }, "c")
    assert.are.equal("int64", y.dtype)
    assert.are.same({ 1, -2 }, y:totable())
    local s2 <close> = tfdev.session()
    h.raises("INVALID_ARGUMENT", "dtype", s2.create, s2,
      { node = { { name = "x", op = "Placeholder", attr = { dtype = "DT_BFLOAT16" } } } })
  end)

  it("loads files by content and reports missing ones by path", function()
    h.raises("NOT_FOUND", "/no/such/model.pb", tfdev.graph_def.load, "/no/such/model.pb")
    local path = os.tmpname()
    local f = assert(io.open(path, "wb"))
    f:write('  {"format": "layers-model"}')
    f:close()
    h.raises("INVALID_ARGUMENT", "no modelTopology: not a TensorFlow.js model", tfdev.graph_def.load, path)
    f = assert(io.open(path, "wb"))
    f:write('  {"format": "web-model", "modelTopology": {}}')
    f:close()
    h.raises("UNIMPLEMENTED", "a TensorFlow.js 'web-model'; tfdev loads graph models ('graph-model') and layers models",
      tfdev.graph_def.load, path)
    f = assert(io.open(path, "wb"))
    f:write(const("c", DT_INT32, { 2 }, packed(7, "varint", { 4, 5 })))
    f:close()
    assert.are.same({ 4, 5 }, tfdev.graph_def.load(path).node[1].attr.value:totable())
    -- A model using ops tfdev lacks: load names each op and its nodes; parse leaves that to create.
    local unknown = node("a", "Frobnicate") .. node("b", "Frobnicate", { "a" }) .. node("c", "Twiddle") .. node("d", "NoOp")
    f = assert(io.open(path, "wb"))
    f:write(unknown)
    f:close()
    h.raises("NOT_FOUND", "the graph uses 2 op types tfdev does not have: 'Frobnicate' (nodes 'a', 'b'); 'Twiddle' (node 'c')",
      tfdev.graph_def.load, path)
    assert.are.equal(4, #tfdev.graph_def.parse(unknown).node)
    f = assert(io.open(path, "wb"))
    f:write("\255\255")
    f:close()
    h.raises("INVALID_ARGUMENT", path .. ": GraphDef: 2 bytes are not a binary GraphDef", tfdev.graph_def.load, path)
    os.remove(path)
    h.raises("INVALID_ARGUMENT", "path", tfdev.graph_def.load, "a\0b")
    h.raises("INVALID_ARGUMENT", "a graph must be a GraphDef table", tfdev.graph_def.serialize, 42)
  end)
end)

-- ---- TensorFlow.js graph models ----
local B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
local function base64(s)
  local out = {}
  for i = 1, #s, 3 do
    local a, b, c = s:byte(i, i + 2)
    local n = (a << 16) | ((b or 0) << 8) | (c or 0)
    for k = 3, 0, -1 do
      local idx = (n >> (6 * k)) & 63
      out[#out + 1] = (k == 1 and not b or k == 0 and not c) and "=" or B64:sub(idx + 1, idx + 1)
    end
  end
  return table.concat(out)
end

-- Writes model.json (text) and its weight files (name -> bytes) into a fresh directory.
local function write_model(json, files)
  local dir = os.tmpname()
  os.remove(dir)
  assert(os.execute("mkdir -p '" .. dir .. "'"))
  local f = assert(io.open(dir .. "/model.json", "w"))
  f:write(json)
  f:close()
  for name, bytes in pairs(files or {}) do
    f = assert(io.open(dir .. "/" .. name, "wb"))
    f:write(bytes)
    f:close()
  end
  return dir .. "/model.json", dir
end
local function cleanup(dir) os.execute("rm -rf '" .. dir .. "'") end

local function half(x) -- float32 -> IEEE half, for the exact values used here
  if x == 0 then return 0 end
  local sign = x < 0 and 0x8000 or 0
  x = math.abs(x)
  local e = math.floor(math.log(x, 2))
  local m = x / 2 ^ e - 1
  return sign | ((e + 15) << 10) | math.floor(m * 1024 + 0.5)
end

describe("tfdev.graph_def: TensorFlow.js graph models", function()
  after_each(function() tfdev.factory.reset() end)

  local TOPOLOGY = [[
  "modelTopology": {"node": [
    {"name": "x", "op": "Placeholder", "attr": {"dtype": {"type": "DT_FLOAT"},
      "shape": {"shape": {"dim": [{"size": "-1"}, {"size": "3"}]}}}},
    {"name": "w", "op": "Const", "attr": {"dtype": {"type": "DT_FLOAT"},
      "value": {"tensor": {"dtype": "DT_FLOAT", "tensorShape": {"dim": [{"size": "3"}, {"size": "2"}]}}}}},
    {"name": "b", "op": "Const", "attr": {"dtype": {"type": "DT_FLOAT"},
      "value": {"tensor": {"dtype": "DT_FLOAT", "tensorShape": {"dim": [{"size": "2"}]}}}}},
    {"name": "k", "op": "Const", "attr": {"dtype": {"type": "DT_INT32"},
      "value": {"tensor": {"dtype": "DT_INT32", "tensorShape": {"dim": [{"size": "2"}]}}}}},
    {"name": "half", "op": "Const", "attr": {"dtype": {"type": "DT_FLOAT"},
      "value": {"tensor": {"dtype": "DT_FLOAT", "tensorShape": {}, "floatVal": [0.5]}}}},
    {"name": "two", "op": "Const", "attr": {"value": {"tensor": {"dtype": "DT_INT64",
      "tensor_shape": {"dim": [{"size": "3"}]}, "int64_val": ["-2", "9"]}}}},
    {"name": "raw", "op": "Const", "attr": {"value": {"tensor": {"dtype": "DT_FLOAT",
      "tensorShape": {"dim": [{"size": "2"}]}, "tensorContent": "%s"}}}},
    {"name": "y", "op": "_FusedMatMul", "input": ["x", "w", "b"], "device": "/device:CPU:0",
      "attr": {"T": {"type": "DT_FLOAT"}, "num_args": {"i": "1"}, "epsilon": {"f": 0},
        "fused_ops": {"list": {"s": ["Qmlhc0FkZA==", "UmVsdQ=="]}}, "transpose_a": {"b": false},
        "transpose_b": {"b": false}, "strides": {"list": {"i": ["1", "2"]}}, "pads": {"list": {}}}},
    {"name": "out", "op": "Mul", "input": ["y", "half"]}
  ]}]]

  it("loads model.json and its weights: float32, int32, float16 and uint8 quantized, several files", function()
    local w = string.pack("<ffffff", 1, 2, 3, 4, 5, 6)                  -- w: float32, split over two files
    local b = string.pack("<I2I2", half(-1.5), half(0.25))              -- b: float16
    local k = string.pack("<BB", 3, 200)                                -- k: uint8, scale 0.5, min -10
    local json = string.format([[{"format": "graph-model", %s,
      "weightsManifest": [
        {"paths": ["group1-shard1of2.bin", "group1-shard2of2.bin"], "weights": [
          {"name": "w", "shape": [3, 2], "dtype": "float32"},
          {"name": "unused", "shape": [1], "dtype": "float32"},
          {"name": "b", "shape": [2], "dtype": "float32", "quantization": {"dtype": "float16", "original_dtype": "float32"}}]},
        {"paths": ["k.bin"], "weights": [
          {"name": "k", "shape": [2], "dtype": "int32", "quantization": {"dtype": "uint8", "scale": 0.5, "min": -10}}]}
      ]}]], TOPOLOGY:format(base64(string.pack("<ff", 7, -8))))
    local blob = w .. string.pack("<f", 99) .. b
    local path, dir = write_model(json, { ["group1-shard1of2.bin"] = blob:sub(1, 10), ["group1-shard2of2.bin"] = blob:sub(11),
      ["k.bin"] = k })
    local gd = tfdev.graph_def.load(path)
    local n = by_name(gd)
    assert.are.same({ { 1, 2 }, { 3, 4 }, { 5, 6 } }, n.w.attr.value:totable())
    assert.are.same({ -1.5, 0.25 }, n.b.attr.value:totable())
    assert.are.same({ -8, 90 }, n.k.attr.value:totable())
    assert.are.equal("int32", n.k.attr.value.dtype)
    assert.are.equal(0.5, n.half.attr.value:item())
    assert.are.same({ -2, 9, 9 }, n.two.attr.value:totable())
    assert.are.same({ 7, -8 }, n.raw.attr.value:totable())
    assert.are.same({ "BiasAdd", "Relu" }, n.y.attr.fused_ops)
    assert.are.same({ 1, 2 }, n.y.attr.strides)
    -- TensorFlow.js drops the device its converter pinned the fused node to, and so does load ...
    assert.is_nil(n.y.device)
    -- ... unless asked to keep it
    assert.are.equal("/device:CPU:0", by_name(tfdev.graph_def.load(path, { keep_devices = true })).y.device)
    h.raises("INVALID_ARGUMENT", "options.keep_devices must be a boolean, got string", tfdev.graph_def.load, path,
      { keep_devices = "yes" })
    assert.are.same({ -1, 3 }, n.x.attr.shape)
    -- and it runs: relu(x @ w + b) * 0.5
    local s <close> = tfdev.session()
    s:create(gd)
    assert.are.same({ { 2.25, 4.125 } }, s:run({ x = { { 1, 0, 1 } } }, "out"):totable()) -- ([6, 8] + b) * 0.5
    -- tfdev.model: inputs from the Placeholders, outputs from the sinks, run by input name
    local m <close> = tfdev.model(path, { intra_op_threads = 1 })
    assert.are.same({ { name = "x", dtype = "float32", shape = { -1, 3 } } }, m.inputs)
    local outs = {}
    for i, o in ipairs(m.outputs) do outs[i] = o.name end
    assert.are.same({ "out:0" }, outs) -- unread Consts are not outputs
    local r = m:run { x = { { 1, 0, 1 } } }
    assert.are.same({ { 2.25, 4.125 } }, r[1]:totable())
    h.raises("INVALID_ARGUMENT", "tfdev.model takes a path or a GraphDef table", tfdev.model, 42)
    cleanup(dir)
  end)

  it("parses a model.json held in memory, its weights from a table, a function or a directory", function()
    local w, b = string.pack("<ffffff", 1, 2, 3, 4, 5, 6), string.pack("<ff", 0.5, -0.5)
    local json = string.format([[{"format": "graph-model", %s,
      "weightsManifest": [{"paths": ["w.bin", "b.bin"], "weights": [
        {"name": "w", "shape": [3, 2], "dtype": "float32"}, {"name": "b", "shape": [2], "dtype": "float32"},
        {"name": "k", "shape": [2], "dtype": "int32"}]}]}]], TOPOLOGY:format(base64(string.pack("<ff", 7, -8))))
    local files = { ["w.bin"] = w, ["b.bin"] = b .. string.pack("<i4i4", 3, 4) }
    local function check(gd)
      local n = by_name(gd)
      assert.are.same({ { 1, 2 }, { 3, 4 }, { 5, 6 } }, n.w.attr.value:totable())
      assert.are.same({ 3, 4 }, n.k.attr.value:totable())
    end
    check(tfdev.graph_def.parse(json, { weights = files }))
    local asked = {}
    check(tfdev.graph_def.parse(json, { weights = function(name) asked[#asked + 1] = name; return files[name] end }))
    assert.are.same({ "w.bin", "b.bin" }, asked)
    local _, dir = write_model("{}", files)
    check(tfdev.graph_def.parse(json, { weights_dir = dir }))
    check(tfdev.graph_def.parse(json, { weights_dir = dir, format = "tfjs" }))
    -- load: the weights beside the file unless the options say otherwise
    local path = write_model(json, {})
    h.raises("NOT_FOUND", "w.bin", tfdev.graph_def.load, path)
    check(tfdev.graph_def.load(path, { weights_dir = dir }))
    check(tfdev.graph_def.load(path, { weights = files }))
    -- what goes wrong, said
    h.raises("FAILED_PRECONDITION", "weight file w.bin: a model parsed from memory reads its weights through the options",
      tfdev.graph_def.parse, json)
    h.raises("NOT_FOUND", "weight file b.bin: options.weights gave nil, not its bytes", tfdev.graph_def.parse, json,
      { weights = { ["w.bin"] = w } })
    h.raises("INVALID_ARGUMENT", "weight file w.bin: options.weights raised: ", tfdev.graph_def.parse, json,
      { weights = function() error("no archive") end })
    h.raises("INVALID_ARGUMENT", "weight 'w': needs 24 bytes at offset 0, but the group's files hold 16", tfdev.graph_def.parse, json,
      { weights = function() return "12345678" end })
    h.raises("INVALID_ARGUMENT", "unknown option 'weight' (format, weights, weights_dir, keep_devices)", tfdev.graph_def.parse, json,
      { weight = files })
    h.raises("INVALID_ARGUMENT", "unknown model format 'onnx'", tfdev.graph_def.parse, json, { format = "onnx" })
    h.raises("INVALID_ARGUMENT", "options.weights must be a table of file bytes or a function, got number",
      tfdev.graph_def.parse, json, { weights = 3 })
    -- the format forced: JSON read as a binary GraphDef is refused as such
    h.raises("INVALID_ARGUMENT", "", tfdev.graph_def.parse, json, { format = "graph_def" })
    -- and a binary GraphDef parses with or without options
    local pb = tfdev.graph_def.serialize { node = { { name = "c", op = "Const", attr = { value = tfdev.tensor(1, "float32") } } } }
    assert.are.equal("c", tfdev.graph_def.parse(pb, { format = "auto" }).node[1].name)
    cleanup(dir)
    cleanup(path:match("^(.*)/model.json$"))
  end)

  it("keeps the model's signature: tfdev.model lists and runs it by its keys", function()
    local json = string.format([[{"format": "graph-model", %s,
      "signature": {"inputs": {"features": {"name": "x:0", "dtype": "DT_FLOAT",
          "tensorShape": {"dim": [{"size": "-1"}, {"size": "3"}]}}},
        "outputs": {"scores": {"name": "out:0", "dtype": "DT_FLOAT"}, "logits": {"name": "y:0", "dtype": "DT_FLOAT",
          "tensorShape": {"dim": [{"size": "-1"}, {"size": "2"}]}}}},
      "weightsManifest": [{"paths": ["w.bin"], "weights": [{"name": "w", "shape": [3, 2], "dtype": "float32"},
        {"name": "b", "shape": [2], "dtype": "float32"}, {"name": "k", "shape": [2], "dtype": "int32"}]}]}]],
      TOPOLOGY:format(base64(string.pack("<ff", 7, -8))))
    local path, dir = write_model(json, { ["w.bin"] = string.pack("<ffffffff", 1, 2, 3, 4, 5, 6, 0, 0) .. string.pack("<i4i4", 0, 0) })
    local gd = tfdev.graph_def.load(path)
    assert.are.same({ { key = "features", name = "x:0", dtype = "float32", shape = { -1, 3 } } }, gd.signature.inputs)
    assert.are.same({ { key = "scores", name = "out:0", dtype = "float32" },
      { key = "logits", name = "y:0", dtype = "float32", shape = { -1, 2 } } }, gd.signature.outputs)
    local m <close> = tfdev.model(path, { intra_op_threads = 1 })
    assert.are.same({ { name = "features", key = "features", tensor = "x:0", dtype = "float32", shape = { -1, 3 } } },
      m.inputs)
    assert.are.equal("scores", m.outputs[1].name)
    assert.are.equal("logits", m.outputs[2].name)
    local r = m:run { features = { { 1, 0, 1 } } } -- by key
    assert.are.same({ { 3, 4 } }, r[1]:totable())
    assert.are.same({ { 6, 8 } }, r[2]:totable())
    assert.are.same({ { 3, 4 } }, m:run { x = { { 1, 0, 1 } } }[1]:totable()) -- by node name
    -- a binary GraphDef has no signature: saving keeps the graph only
    local back = tfdev.graph_def.parse(tfdev.graph_def.serialize(gd))
    assert.is_nil(back.signature)
    h.raises("INVALID_ARGUMENT", "signature.outputs['bad'] needs the name of a tensor", tfdev.graph_def.parse,
      '{"modelTopology": {"node": []}, "signature": {"outputs": {"bad": {"dtype": "DT_FLOAT"}}}}')
    cleanup(dir)
  end)

  it("models: one input spelling, run_async, callable, a one-line tostring, and no close by the collector", function()
    -- keyed "x:0" as some converters write it: the input is "x", as the same graph saved as .pb names it
    local json = string.format([[{"format": "graph-model", %s,
      "signature": {"inputs": {"x:0": {"name": "x:0", "dtype": "DT_FLOAT",
          "tensorShape": {"dim": [{"size": "-1"}, {"size": "3"}]}}},
        "outputs": {"logits": {"name": "y:0", "dtype": "DT_FLOAT", "tensorShape": {"dim": [{"size": "-1"}, {"size": "2"}]}}}},
      "weightsManifest": [{"paths": ["w.bin"], "weights": [{"name": "w", "shape": [3, 2], "dtype": "float32"},
        {"name": "b", "shape": [2], "dtype": "float32"}, {"name": "k", "shape": [2], "dtype": "int32"}]}]}]],
      TOPOLOGY:format(base64(string.pack("<ff", 7, -8))))
    local path, dir = write_model(json, { ["w.bin"] = string.pack("<ffffffff", 1, 2, 3, 4, 5, 6, 0, 0) .. string.pack("<i4i4", 0, 0) })
    local m = tfdev.model(path, { intra_op_threads = 1 })
    assert.are.equal("x", m.inputs[1].name)
    assert.are.equal("x:0", m.inputs[1].key)
    local x = { { 1, 0, 1 } }
    for _, spelling in ipairs { "x", "x:0" } do
      assert.are.same({ { 6, 8 } }, m:run { [spelling] = x }[1]:totable())
    end
    assert.are.equal("tfdev.model (x float32[-1,3]) -> (logits float32[-1,2])", tostring(m))
    local f = m:run_async { x = x }
    assert.are.same({ { 6, 8 } }, f:result()[1]:totable())
    local call = m:callable()
    assert.are.same({ { 6, 8 } }, call(tfdev.tensor(x, "float32"))[1]:totable())
    local pending = m:run_async { x = x }
    local session = m.session
    m = nil
    collectgarbage()
    collectgarbage()
    assert.are.same({ { 6, 8 } }, pending:result()[1]:totable()) -- still runs: the model's collection closed nothing
    assert.are.same({ { 6, 8 } }, call(tfdev.tensor(x, "float32"))[1]:totable())
    assert.are.same({ { 6, 8 } }, session:run({ x = x }, "y"):totable())
    session:close()
    h.raises("CANCELLED", "Session has been closed.", call, tfdev.tensor(x, "float32"))
    -- the same graph without a signature: the Placeholder's name, the same spelling
    local bare <close> = tfdev.model(tfdev.graph_def.parse(tfdev.graph_def.serialize(tfdev.graph_def.load(path))))
    assert.are.equal("x", bare.inputs[1].name)
    assert.matches("^tfdev%.model %(x float32%[%-1,3%]%) %-> %(", tostring(bare))
    cleanup(dir)
  end)

  it("names the file, the weight or the field at fault", function()
    local function model(manifest, files, topology)
      return write_model(string.format('{"format": "graph-model", %s, "weightsManifest": %s}',
        topology or TOPOLOGY:format(base64(string.pack("<ff", 7, -8))), manifest), files)
    end
    local W = '{"name": "w", "shape": [3, 2], "dtype": "float32"}'
    local REST = ', {"name": "b", "shape": [2], "dtype": "float32"}, {"name": "k", "shape": [2], "dtype": "int32"}'
    local full = string.rep("\0", 24 + 8 + 8)
    local cases = {
      { "NOT_FOUND", "weight file ", '[{"paths": ["missing.bin"], "weights": [' .. W .. REST .. ']}]', {} },
      { "INVALID_ARGUMENT", "weight 'k': needs 8 bytes at offset 32, but the group's files hold 36",
        '[{"paths": ["a.bin"], "weights": [' .. W .. REST .. ']}]', { ["a.bin"] = full:sub(1, 36) } },
      { "INVALID_ARGUMENT", "the weights take 40 bytes but the files hold 44",
        '[{"paths": ["a.bin"], "weights": [' .. W .. REST .. ']}]', { ["a.bin"] = full .. "abcd" } },
      { "UNIMPLEMENTED", "weight 'w': quantization dtype 'int4' is not supported",
        '[{"paths": ["a.bin"], "weights": [{"name": "w", "shape": [3, 2], "dtype": "float32", "quantization": {"dtype": "int4"}}]}]',
        { ["a.bin"] = full } },
      { "UNIMPLEMENTED", "weight 'w': dtype uint16 is not supported",
        '[{"paths": ["a.bin"], "weights": [{"name": "w", "shape": [1], "dtype": "uint16"}]}]', { ["a.bin"] = full } },
      { "INVALID_ARGUMENT", "weight 'w': dimension 1 is not a size",
        '[{"paths": ["a.bin"], "weights": [{"name": "w", "shape": [3, -2], "dtype": "float32"}]}]', { ["a.bin"] = full } },
      { "INVALID_ARGUMENT", "weight 'w': the element count overflows 64 bits",
        '[{"paths": ["a.bin"], "weights": [{"name": "w", "shape": [4294967296, 4294967296], "dtype": "float32"}]}]',
        { ["a.bin"] = full } },
      { "INVALID_ARGUMENT", "Const 'b' has no value: neither the JSON nor the weights give it (2 such nodes)",
        '[{"paths": ["a.bin"], "weights": [' .. W .. ']}]', { ["a.bin"] = full:sub(1, 24) } },
      { "INVALID_ARGUMENT", "weightsManifest[0] needs lists 'paths' and 'weights'", '[{"paths": "a.bin"}]', {} },
    }
    for _, case in ipairs(cases) do
      local path, dir = model(case[3], case[4])
      local err = h.raises(case[1], case[2], tfdev.graph_def.load, path)
      assert.truthy(err.message:find(path, 1, true))
      cleanup(dir)
    end
    -- The JSON itself.
    local bad = {
      { "INVALID_ARGUMENT", "not valid JSON (near byte", '{"modelTopology": {"node": [}' },
      { "INVALID_ARGUMENT", "no modelTopology", '{"format": "graph-model"}' },
      { "INVALID_ARGUMENT", "modelTopology.node[0] needs a name and an op", '{"modelTopology": {"node": [{"op": "NoOp"}]}}' },
      { "INVALID_ARGUMENT", "node 'n': attr must be an object of attribute values",
        '{"modelTopology": {"node": [{"name": "n", "op": "NoOp", "attr": [{"x": 1}]}]}}' },
      { "UNIMPLEMENTED", "node 'p', attr 'dtype': dtype DT_QINT8 is not supported",
        '{"modelTopology": {"node": [{"name": "p", "op": "Placeholder", "attr": {"dtype": {"type": "DT_QINT8"}}}]}}' },
      { "INVALID_ARGUMENT", "node 'n', attr 's': a bytes value must be base64 text",
        '{"modelTopology": {"node": [{"name": "n", "op": "NoOp", "attr": {"s": {"s": "no*base64"}}}]}}' },
      { "INVALID_ARGUMENT", "node 'n', attr 'l': list item 1 is not an integer",
        '{"modelTopology": {"node": [{"name": "n", "op": "NoOp", "attr": {"l": {"list": {"i": ["1", "x"]}}}}]}}' },
      { "RESOURCE_EXHAUSTED", "node 'c', attr 'value': a tensor of 4294967296 bytes expanded from a few values is over",
        '{"modelTopology": {"node": [{"name": "c", "op": "Const", "attr": {"value": {"tensor": {"dtype": "DT_FLOAT", "tensorShape": {"dim": [{"size": "1073741824"}]}, "floatVal": [0]}}}}]}}' },
      { "INVALID_ARGUMENT", "Const 'c' has no value", -- a huge shape with no values allocates nothing
        '{"modelTopology": {"node": [{"name": "c", "op": "Const", "attr": {"value": {"tensor": {"dtype": "DT_FLOAT", "tensorShape": {"dim": [{"size": "503553143"}, {"size": "2"}]}}}}}]}}' },
      { "INVALID_ARGUMENT", "node 'n', attr 'i': i must be an integer",
        '{"modelTopology": {"node": [{"name": "n", "op": "NoOp", "attr": {"i": {"i": "1.5"}}}]}}' },
      { "INVALID_ARGUMENT", "node 'c', attr 'value': tensorContent has the wrong size",
        '{"modelTopology": {"node": [{"name": "c", "op": "Const", "attr": {"value": {"tensor": {"dtype": "DT_FLOAT", "tensorShape": {"dim": [{"size": "2"}]}, "tensorContent": "AAAA"}}}}]}}' },
      -- 4 GB declared, 8 bytes given: refused before anything is allocated for the shape (fuzz regression)
      { "INVALID_ARGUMENT", "node 'c', attr 'value': tensorContent has the wrong size",
        '{"modelTopology": {"node": [{"name": "c", "op": "Const", "attr": {"value": {"tensor": {"dtype": "DT_INT64", "tensorShape": {"dim": [{"size": "500000000"}]}, "tensorContent": "AQAAAAAAAAA="}}}}]}}' },
      { "UNIMPLEMENTED", "node 'n', attr 'f': function and placeholder attrs are not supported",
        '{"modelTopology": {"node": [{"name": "n", "op": "NoOp", "attr": {"f": {"func": {"name": "g"}}}}]}}' },
    }
    for _, case in ipairs(bad) do
      local path, dir = write_model(case[3])
      h.raises(case[1], case[2], tfdev.graph_def.load, path)
      cleanup(dir)
    end
  end)

  -- The real models of ../shared/models (see its README), where this checkout has them.
  local shared = debug.getinfo(1, "S").source:match("^@(.*)/spec/[^/]*$")
  shared = (shared or ".") .. "/../shared/models"
  for _, name in ipairs { "emotion", "blazeface", "facemesh", "antispoof" } do
    local path = shared .. "/" .. name .. "/" .. name .. ".json"
    local f = io.open(path, "rb")
    if f then
      f:close()
      it("loads the " .. name .. " model with every weight in place", function()
        local gd = tfdev.graph_def.load(path)
        local consts, placeholders = 0, 0
        for _, n in ipairs(gd.node) do
          if n.op == "Const" then
            consts = consts + 1
            assert.truthy(n.attr.value and n.attr.value:numel() >= 0)
          elseif n.op == "Placeholder" then
            placeholders = placeholders + 1
          end
        end
        assert.is_true(consts > 10)
        assert.are.equal(1, placeholders)
      end)
    else
      pending("the " .. name .. " model: " .. path .. " is not in this checkout")
    end
  end
end)

describe("uint8 and float16 tensors", function()
  it("are made from Lua values, print, and cast as TensorFlow casts", function()
    local u = tfdev.tensor({ 0, 128, 255 }, "uint8")
    assert.are.equal("uint8", u.dtype)
    assert.are.same({ 0, 128, 255 }, u:totable())
    h.raises("INVALID_ARGUMENT", "out of range for uint8", tfdev.tensor, { 256 }, "uint8")
    h.raises("INVALID_ARGUMENT", "out of range for uint8", tfdev.tensor, { -1 }, "uint8")
    local f = tfdev.tensor({ 0.5, 65504, 1e-8, 70000, 0.1 }, "float16")
    assert.are.equal("float16", f.dtype)
    -- 1e-8 is below half's smallest subnormal (6e-8): 0; 70000 overflows to inf; 0.1 rounds to nearest
    assert.are.same({ 0.5, 65504, 0, math.huge, 0.0999755859375 }, f:totable())
    assert.truthy(tostring(f):find("float16"))
    local function cast(t, dst)
      local s <close> = tfdev.session { optimize_graph = false }
      s:create { node = {
        { name = "x", op = "Const", attr = { value = t } },
        { name = "y", op = "Cast", input = { "x" }, attr = { DstT = dst } },
      } }
      return s:run({}, "y"):totable()
    end
    assert.are.same({ 255, 0, 3 }, cast(tfdev.tensor({ 300.5, -5, 3.9 }, "float32"), "uint8")) -- floats saturate
    assert.are.same({ 1, 255 }, cast(tfdev.tensor({ 257, -1 }, "int32"), "uint8"))            -- integers wrap
    assert.are.same({ 0.5, -2, 1024 }, cast(tfdev.tensor({ 0.5, -2, 1024 }, "float32"), "float16"))
    assert.are.same({ 0.5, -2, 1024 }, cast(tfdev.tensor({ 0.5, -2, 1024 }, "float16"), "float64"))
    assert.are.same({ 7, 255 }, cast(tfdev.tensor({ 7, 255 }, "uint8"), "int64"))
  end)
end)

describe("TensorFlow.js attr lists with a bad item", function()
  -- Found by fuzz_tfjs_model: a list.i (or list.f, list.type) item that failed to read left the list typed as
  -- strings, and the loader then freed its numbers as string pointers.
  it("are refused without freeing numbers as strings", function()
    local path = os.tmpname()
    for _, list in ipairs { '{"i": ["1", "x"]}', '{"f": [1.5, "y"]}', '{"type": ["DT_FLOAT", "DT_NOPE"]}', '{"s": ["YQ==", 5]}' } do
      local f = assert(io.open(path, "wb"))
      f:write('{"format": "graph-model", "modelTopology": {"node": [{"name": "x", "op": "Squeeze", "attr": {"squeeze_dims": {"list": '
        .. list .. '}}}]}}')
      f:close()
      local ok, err = pcall(tfdev.graph_def.load, path)
      assert.is_false(ok)
      assert.is_truthy(err.message:find("node 'x', attr 'squeeze_dims'", 1, true), err.message)
    end
    os.remove(path)
  end)
end)

-- TensorFlow.js's converter writes int64 weights as int32 and float64 as float32 in the manifest while
-- the node still declares the wide type: the loader widens them to what the graph declares.
describe("TensorFlow.js weights stored narrower than declared", function()
  local function model(dir, tf_type, js_type, fmt, values)
    local f = assert(io.open(dir .. "/w.bin", "wb"))
    f:write(string.pack("<" .. string.rep(fmt, #values), table.unpack(values)))
    f:close()
    f = assert(io.open(dir .. "/model.json", "w"))
    f:write(string.format([[{"format": "graph-model", "modelTopology": {"node": [
      {"name": "w", "op": "Const", "attr": {"dtype": {"type": "%s"},
        "value": {"tensor": {"dtype": "%s", "tensorShape": {"dim": [{"size": "%d"}]}}}}},
      {"name": "y", "op": "Identity", "input": ["w"], "attr": {"T": {"type": "%s"}}}]},
      "weightsManifest": [{"paths": ["w.bin"], "weights": [{"name": "w", "shape": [%d], "dtype": "%s"}]}]}]],
      tf_type, tf_type, #values, tf_type, #values, js_type))
    f:close()
    return dir .. "/model.json"
  end

  local tmp = h.temp_dirs(before_each, after_each)
  local dir
  before_each(function() dir = tmp() end)

  it("int32 in the manifest, int64 in the graph: int64 values", function()
    local s <close> = tfdev.session()
    s:create(tfdev.graph_def.load(model(dir, "DT_INT64", "int32", "i4", { 7, -2147483648, 2147483647 })))
    local y = s:run({}, "y")
    assert.are.equal("int64", y.dtype)
    assert.are.same({ 7, -2147483648, 2147483647 }, y:totable())
  end)

  it("float32 in the manifest, float64 in the graph: float64 values", function()
    local s <close> = tfdev.session()
    s:create(tfdev.graph_def.load(model(dir, "DT_DOUBLE", "float32", "f", { 0.5, -3.25 })))
    local y = s:run({}, "y")
    assert.are.equal("float64", y.dtype)
    assert.are.same({ 0.5, -3.25 }, y:totable())
  end)

  it("the same dtype on both sides is kept", function()
    local s <close> = tfdev.session()
    s:create(tfdev.graph_def.load(model(dir, "DT_INT32", "int32", "i4", { 1, 2 })))
    local y = s:run({}, "y")
    assert.are.equal("int32", y.dtype)
    assert.are.same({ 1, 2 }, y:totable())
  end)
end)

-- Issue 26, item 6: what tfdev cannot load yet is named, and a model file with no nodes is an error.
describe("files that are not graph models say what they are", function()
  local dir
  local function write(name, bytes)
    local f = assert(io.open(dir .. "/" .. name, "wb"))
    f:write(bytes)
    f:close()
    return dir .. "/" .. name
  end
  local tmp = h.temp_dirs(before_each, after_each)
  before_each(function()
    dir = tmp()
    assert(os.execute("mkdir -p '" .. dir .. "/00000123/variables'"))
  end)

  -- saved_model_schema_version = 1, one (empty) MetaGraphDef: the start of every saved_model.pb
  local SAVED_MODEL = "\8\1\18\0"

  it("a SavedModel, by its bytes, its folder or its version folder, is UNIMPLEMENTED with what to do", function()
    local pb = write("00000123/saved_model.pb", SAVED_MODEL)
    h.raises("UNIMPLEMENTED", pb .. ": a TensorFlow SavedModel (saved_model.pb), not a GraphDef; tfdev cannot load " ..
      "SavedModels yet: freeze the signature", tfdev.graph_def.load, pb)
    h.raises("UNIMPLEMENTED", "a TensorFlow SavedModel (saved_model.pb)", tfdev.graph_def.parse, SAVED_MODEL .. "\18\0")
    h.raises("UNIMPLEMENTED", dir .. "/00000123 is a TensorFlow SavedModel directory (saved_model.pb); tfdev cannot",
      tfdev.graph_def.load, dir .. "/00000123")
    h.raises("UNIMPLEMENTED", dir .. "/00000123 is a TensorFlow SavedModel directory", tfdev.graph_def.load, dir)
    h.raises("UNIMPLEMENTED", "tensorflowjs_converter --input_format=tf_saved_model", tfdev.model, dir)
    -- other bytes starting 0x08 are still just not a GraphDef
    h.raises("INVALID_ARGUMENT", "are not a binary GraphDef", tfdev.graph_def.parse, "\8\1\8\1")
  end)

  it("the SavedModels of ../shared/savedmodels, where this checkout has them", function()
    local shared = (debug.getinfo(1, "S").source:match("^@(.*)/spec/[^/]*$") or ".") .. "/../shared/savedmodels"
    local f = io.open(shared .. "/saved_model_half_plus_two_cpu/00000123/saved_model.pb", "rb")
    if not f then return pending("../shared/savedmodels is not in this checkout") end
    f:close()
    for _, name in ipairs { "saved_model_half_plus_two_cpu", "saved_model_half_plus_two_tf2_cpu" } do
      h.raises("UNIMPLEMENTED", "is a TensorFlow SavedModel directory", tfdev.graph_def.load, shared .. "/" .. name)
      h.raises("UNIMPLEMENTED", "a TensorFlow SavedModel (saved_model.pb), not a GraphDef", tfdev.graph_def.load,
        shared .. "/" .. name .. "/00000123/saved_model.pb")
    end
  end)

  it("a model file with no nodes is INVALID_ARGUMENT; an empty graph in memory is still one", function()
    local empty = write("empty.pb", "")
    h.raises("INVALID_ARGUMENT", empty .. ": the model has no nodes", tfdev.graph_def.load, empty)
    local json = write("model.json", '{"format": "graph-model", "modelTopology": {"node": []}}')
    h.raises("INVALID_ARGUMENT", json .. ": the model has no nodes", tfdev.graph_def.load, json)
    assert.are.same({}, tfdev.graph_def.parse("").node)
  end)

  it("a TensorFlow.js layers model without a format key is read as one, not loaded as an empty graph", function()
    local json = write("model.json", '{"modelTopology": {"keras_version": "2.2.4", "backend": "tensorflow", ' ..
      '"model_config": {"class_name": "Sequential", "config": {"layers": []}}}, "weightsManifest": []}')
    h.raises("INVALID_ARGUMENT", "a Sequential model needs a list of layers", tfdev.graph_def.load, json)
    local layers = write("layers.json", '{"format": "layers-model", "modelTopology": {"class_name": "RNN"}}')
    h.raises("UNIMPLEMENTED", "a layers model of class 'RNN' (tfdev reads Sequential and functional models)",
      tfdev.graph_def.load, layers)
  end)
end)

-- ---- function libraries: FunctionDefLibrary = 2 { function = 1 { signature = 1 (name = 1, input_arg = 2,
-- output_arg = 3, each ArgDef name = 1, type = 3, type_attr = 4), node_def = 3, ret = 4 (map: key = 1, value = 2) } } ----
local function argdef(field, name, dtype) return msg(field, bytes(1, name), int(3, dtype)) end
local function fdef(name, ins, outs, nodes, rets)
  local sig = { bytes(1, name) }
  for _, a in ipairs(ins) do sig[#sig + 1] = argdef(2, a[1], a[2]) end
  for _, a in ipairs(outs) do sig[#sig + 1] = argdef(3, a[1], a[2]) end
  local parts = { msg(1, table.concat(sig)) }
  for _, n in ipairs(nodes) do parts[#parts + 1] = (n:gsub("^\10", "\26", 1)) end -- NodeDef as node_def = 3
  for k, v in pairs(rets) do parts[#parts + 1] = msg(4, bytes(1, k), bytes(2, v)) end
  return msg(1, table.concat(parts))
end
local function library(...) return msg(2, ...) end
local function func(name) return msg(10, bytes(1, name)) end
local function types(list) return msg(1, packed(6, "varint", list)) end
local function fconst(name, dtype, fields) -- a Const inside a function body
  return node(name, "Const", {}, { attr("dtype", int(6, dtype)), attr("value", msg(8, tensor(dtype, {}, fields))) })
end

describe("tfdev.graph_def function libraries", function()
  after_each(function() tfdev.factory.reset() end)
  local function parse_fails(code, fragment, pb) h.raises(code, fragment, tfdev.graph_def.parse, pb) end

  local add_one = fdef("add_one", { { "x", DT_FLOAT } }, { { "y", DT_FLOAT } }, {
    fconst("one", DT_FLOAT, packed(5, "<f", { 1 })),
    node("s", "AddV2", { "x", "one:output:0" }, { attr("T", int(6, DT_FLOAT)) }) }, { y = "s:z:0" })
  local twice = fdef("twice", { { "x", DT_FLOAT } }, { { "y", DT_FLOAT } }, {
    node("a", "add_one", { "x" }), node("b", "add_one", { "a:y:0" }) }, { y = "b:y:0" })
  local neg = fdef("neg", { { "x", DT_FLOAT } }, { { "y", DT_FLOAT } }, { node("n", "Neg", { "x" }) }, { y = "n:y:0" })
  local less = fdef("less3", { { "i", DT_INT32 }, { "v", DT_FLOAT } }, { { "ok", DT_BOOL } }, {
    fconst("three", DT_INT32, packed(7, "varint", { 3 })),
    node("lt", "Less", { "i", "three:output:0" }, { attr("T", int(6, DT_INT32)) }) }, { ok = "lt:z:0" })
  local step = fdef("step", { { "i", DT_INT32 }, { "v", DT_FLOAT } }, { { "i2", DT_INT32 }, { "v2", DT_FLOAT } }, {
    fconst("inc", DT_INT32, packed(7, "varint", { 1 })),
    node("j", "AddV2", { "i", "inc:output:0" }, { attr("T", int(6, DT_INT32)) }),
    node("w", "twice", { "v" }) }, { i2 = "j:z:0", v2 = "w:y:0" })

  local function graph(...)
    return table.concat { node("x", "Placeholder", {}, { attr("dtype", int(6, DT_FLOAT)) }), ... }
  end

  it("inlines calls by name and by PartitionedCall, and lowers If and While to frames", function()
    local pb = graph(
      node("called", "twice", { "x" }),
      node("pcall", "StatefulPartitionedCall", { "x" }, { attr("f", func("add_one")), attr("Tin", types { DT_FLOAT }),
        attr("Tout", types { DT_FLOAT }) }),
      node("pos", "Greater", { "x", "zero" }, { attr("T", int(6, DT_FLOAT)) }),
      const("zero", DT_FLOAT, {}, packed(5, "<f", { 0 })),
      node("branch", "If", { "pos", "x" }, { attr("Tcond", int(6, DT_BOOL)), attr("Tin", types { DT_FLOAT }),
        attr("Tout", types { DT_FLOAT }), attr("then_branch", func("twice")), attr("else_branch", func("neg")),
        attr("output_shapes", msg(1, msg(7, shape {}))) }),
      const("i0", DT_INT32, {}, packed(7, "varint", { 0 })),
      node("loop", "While", { "i0", "x" }, { attr("T", types { DT_INT32, DT_FLOAT }), attr("cond", func("less3")),
        attr("body", func("step")), attr("parallel_iterations", int(3, 10)) }),
      node("last", "Identity", { "loop:1" }, { attr("T", int(6, DT_FLOAT)) }),
      library(add_one, twice, neg, less, step))
    local gd = tfdev.graph_def.parse(pb)
    for _, n in ipairs(gd.node) do
      assert.is_nil(({ If = 1, While = 1, StatefulPartitionedCall = 1, twice = 1, add_one = 1 })[n.op], n.name .. " " .. n.op)
    end
    local s <close> = tfdev.session()
    s:create(gd)
    for _, x in ipairs { 1.5, -4 } do
      local out = s:run({ x = tfdev.tensor(x, "float32") }, { "called", "pcall", "branch", "loop:0", "last" })
      assert.are.equal(x + 2, out[1]:item())
      assert.are.equal(x + 1, out[2]:item())
      assert.are.equal(x > 0 and x + 2 or -x, out[3]:item())
      assert.are.equal(3, out[4]:item())
      assert.are.equal(x + 6, out[5]:item())
    end
    -- the lowered graph saves and loads as a plain GraphDef
    local again = tfdev.graph_def.parse(tfdev.graph_def.serialize(gd))
    assert.are.equal(#gd.node, #again.node)
  end)

  it("refuses unknown functions, arity and output mismatches and recursion, naming the node", function()
    parse_fails("NOT_FOUND", "node 'c' (PartitionedCall): function 'nope' is not in the graph's library",
      graph(node("c", "PartitionedCall", { "x" }, { attr("f", func("nope")) }), library(add_one)))
    parse_fails("INVALID_ARGUMENT", "node 'c' (add_one): function 'add_one' takes 1 inputs, given 2",
      graph(node("c", "add_one", { "x", "x" }), library(add_one)))
    local loop = fdef("loop", { { "x", DT_FLOAT } }, { { "y", DT_FLOAT } }, { node("again", "loop", { "x" }) }, { y = "again:y:0" })
    parse_fails("INVALID_ARGUMENT", "function 'loop' calls itself", graph(node("c", "loop", { "x" }), library(loop)))
    local two = fdef("two", { { "x", DT_FLOAT } }, { { "a", DT_FLOAT }, { "b", DT_FLOAT } }, { node("n", "Neg", { "x" }) },
      { a = "n:y:0", b = "x" })
    parse_fails("INVALID_ARGUMENT", "its branches 'two' and 'neg' return 2 and 1 outputs",
      graph(node("i", "If", { "x", "x" }, { attr("then_branch", func("two")), attr("else_branch", func("neg")) }),
        library(two, neg)))
    parse_fails("INVALID_ARGUMENT", "its cond 'two' returns 2 outputs, not 1",
      graph(node("w", "While", { "x" }, { attr("cond", func("two")), attr("body", func("neg")) }), library(two, neg)))
    local noret = fdef("noret", { { "x", DT_FLOAT } }, { { "y", DT_FLOAT } }, {}, {})
    parse_fails("INVALID_ARGUMENT", "function 'noret' does not say what output 'y' returns",
      graph(node("c", "noret", { "x" }), library(noret)))
    parse_fails("INVALID_ARGUMENT", "the function library defines 'neg' twice", graph(library(neg, neg)))
    parse_fails("UNIMPLEMENTED", "function-valued attrs ('neg') are not supported",
      graph(node("n", "NoOp", {}, { attr("fn", func("neg")) }), library(neg)))
    -- A graph built in Lua has no library to run If from: the error says where If comes from.
    local s <close> = tfdev.session()
    h.raises("NOT_FOUND", "op type not registered 'If' (tfdev runs it from a graph's function library", s.create, s,
      { node = { { name = "c", op = "Const", attr = { value = tfdev.tensor(true) } }, { name = "i", op = "If", input = { "c" } } } })
  end)
end)
