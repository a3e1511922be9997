-- TensorList gather/scatter/split/concat/resize ops and hash tables (issue 26): values worked out by hand
-- from TensorFlow's list_kernels.h/.cc and lookup_table_op.cc, TensorFlow's error texts, the cases
-- TensorFlow.js reads differently (TensorListSplit, which it refuses; TensorListConcatV2's
-- element_shape and leading_dims inputs), and tables that live in a session across runs.
local tfdev = require "tfdev"
local h = require "spec.support.helpers"

local function i32(v) return tfdev.tensor(v, "int32") end
local function i64(v) return tfdev.tensor(v, "int64") end
local function f32(v) return tfdev.tensor(v, "float32") end
local function const(name, value) return { name = name, op = "Const", attr = { value = value } } end

local function run(nodes, fetches, targets)
  local s <close> = tfdev.session { optimize_graph = false }
  s:create { node = nodes }
  return s:run({}, fetches, targets)
end

local function cat(...)
  local out = {}
  for _, list in ipairs { ... } do
    for _, n in ipairs(list) do out[#out + 1] = n end
  end
  return out
end

-- A list made from x's rows, element_shape es.
local function from(name, x, es)
  return { const(name .. "/x", x), const(name .. "/es", i32(es or -1)),
    { name = name, op = "TensorListFromTensor", input = { name .. "/x", name .. "/es" } } }
end

local function reserve(name, n, es, dtype)
  return { const(name .. "/es", i32(es)), const(name .. "/n", i32(n)),
    { name = name, op = "TensorListReserve", input = { name .. "/es", name .. "/n" },
      attr = { element_dtype = dtype or "float32" } } }
end

local function gather(name, list, idx, es, dtype)
  return { const(name .. "/i", i32(idx)), const(name .. "/es", i32(es or -1)),
    { name = name, op = "TensorListGather", input = { list, name .. "/i", name .. "/es" },
      attr = { element_dtype = dtype or "float32" } } }
end

local function stack(name, list, es, dtype)
  return { const(name .. "/es", i32(es or -1)),
    { name = name, op = "TensorListStack", input = { list, name .. "/es" }, attr = { element_dtype = dtype or "float32" } } }
end

local function length(name, list) return { { name = name, op = "TensorListLength", input = { list } } } end

local function scatter(name, x, idx, es, num)
  local nodes = { const(name .. "/x", x), const(name .. "/i", i32(idx)), const(name .. "/es", i32(es or -1)) }
  local input = { name .. "/x", name .. "/i", name .. "/es" }
  local op = "TensorListScatter"
  if num then
    nodes[#nodes + 1] = const(name .. "/n", i32(num))
    input[4] = name .. "/n"
    op = "TensorListScatterV2"
  end
  nodes[#nodes + 1] = { name = name, op = op, input = input }
  return nodes
end

local function concat2(name, list, es, lead, dtype)
  return { const(name .. "/es", i32(es or -1)), const(name .. "/lead", i64(lead or {})),
    { name = name, op = "TensorListConcatV2", input = { list, name .. "/es", name .. "/lead" },
      attr = { element_dtype = dtype or "float32" } } }
end

describe("TensorList gather, scatter, split, concat, resize", function()
  local m32 = { { 1, 2 }, { 3, 4 }, { 5, 6 } }

  it("TensorListGather picks elements in index order, zeros for unset ones, for every dtype", function()
    local out = run(cat(from("l", f32(m32), { 2 }), gather("g", "l", { 2, 0, 2 })), { "g" })
    assert.are.same({ { 5, 6 }, { 1, 2 }, { 5, 6 } }, out[1]:totable())
    out = run(cat(from("l", i32(m32)), gather("g", "l", { 1 }, -1, "int32")), { "g" })
    assert.are.same({ { 3, 4 } }, out[1]:totable())
    assert.are.equal("int32", out[1].dtype)
    out = run(cat(from("l", i64(m32)), gather("g", "l", {}, { 2 }, "int64")), { "g" })
    assert.are.same({ 0, 2 }, out[1].shape) -- no indices: [0] + element_shape
    -- unset elements: zeros of the element shape, merged from the set ones when the list's is partial
    local nodes = cat(reserve("l", 3, { -1 }), { const("v", f32 { 7, 8 }), const("i", i32(1)),
      { name = "s", op = "TensorListSetItem", input = { "l", "i", "v" } } }, gather("g", "s", { 0, 1 }))
    assert.are.same({ { 0, 0 }, { 7, 8 } }, run(nodes, { "g" })[1]:totable())
  end)

  it("TensorListGather's errors are TensorFlow's", function()
    h.raises("INVALID_ARGUMENT", "Index 3 out o range; list only has 3 elements.", run,
      cat(from("l", f32(m32)), gather("g", "l", { 0, 3 })), { "g" })
    h.raises("INVALID_ARGUMENT", "Index -1 out o range; list only has 3 elements.", run,
      cat(from("l", f32(m32)), gather("g", "l", { -1 })), { "g" })
    h.raises("INVALID_ARGUMENT", "Tried to gather 0-elements from a list with non-fully-defined shape: [?]", run,
      cat(reserve("l", 2, { -1 }), gather("g", "l", {})), { "g" })
    h.raises("INVALID_ARGUMENT", "Tried to gather uninitialized tensors from a list with non-fully-defined element_shape: <unknown>",
      run, cat(reserve("l", 2, -1), gather("g", "l", { 1 })), { "g" })
    h.raises("INVALID_ARGUMENT", "Invalid data types; op elements int32 but list elements float32", run,
      cat(from("l", f32(m32)), gather("g", "l", { 0 }, -1, "int32")), { "g" })
    h.raises("INVALID_ARGUMENT", "Incompatible shapes during merge: [3] vs. [2]", run,
      cat(from("l", f32(m32), { 2 }), gather("g", "l", { 0 }, { 3 })), { "g" })
  end)

  it("TensorListScatter puts row j at indices[j]; the list is as long as the highest index", function()
    local out = run(cat(scatter("l", f32(m32), { 2, 0, 1 }, { 2 }), stack("st", "l", { 2 })), { "st" })
    assert.are.same({ { 3, 4 }, { 5, 6 }, { 1, 2 } }, out[1]:totable())
    out = run(cat(scatter("l", i32 { { 1 }, { 2 } }, { 3, 1 }), stack("st", "l", { 1 }, "int32"), length("n", "l")),
      { "st", "n" })
    assert.are.same({ { 0 }, { 2 }, { 0 }, { 1 } }, out[1]:totable())
    assert.are.equal(4, out[2]:item())
    -- no rows: an empty list
    out = run(cat(scatter("l", tfdev.tensor { dtype = "float32", shape = { 0, 2 } }, {}, { 2 }), length("n", "l"), stack("st", "l", { 2 })),
      { "n", "st" })
    assert.are.equal(0, out[1]:item())
    assert.are.same({ 0, 2 }, out[2].shape)
  end)

  it("TensorListScatterV2's num_elements sets the length, at least the highest index + 1", function()
    local out = run(cat(scatter("l", f32 { { 1, 2 } }, { 0 }, { 2 }, 3), stack("st", "l", { 2 }), length("n", "l")),
      { "st", "n" })
    assert.are.same({ { 1, 2 }, { 0, 0 }, { 0, 0 } }, out[1]:totable())
    assert.are.equal(3, out[2]:item())
    out = run(cat(scatter("l", f32 { { 1, 2 } }, { 1 }, { 2 }, -1), length("n", "l")), { "n" })
    assert.are.equal(2, out[1]:item())
    h.raises("INVALID_ARGUMENT", "TensorListScatter: Trying to scatter at index 3 in list with size 2", run,
      cat(scatter("l", f32 { { 1, 2 } }, { 3 }, { 2 }, 2), length("n", "l")), { "n" })
    h.raises("INVALID_ARGUMENT", "TensorListScatter expects num_elements >= -1, found: -2", run,
      cat(scatter("l", f32 { { 1, 2 } }, { 0 }, { 2 }, -2), length("n", "l")), { "n" })
  end)

  it("TensorListScatter's errors are TensorFlow's", function()
    h.raises("INVALID_ARGUMENT", "Indices in TensorListScatter must all be non-negative.", run,
      cat(scatter("l", f32(m32), { 0, -1, 2 }), length("n", "l")), { "n" })
    h.raises("INVALID_ARGUMENT", "Invalid number of rows in input tensor. Expected: 2 Actual: 3", run,
      cat(scatter("l", f32(m32), { 0, 1 }), length("n", "l")), { "n" })
    h.raises("INVALID_ARGUMENT", "Specified a list with shape [3] from a tensor with shape [2]", run,
      cat(scatter("l", f32(m32), { 0, 1, 2 }, { 3 }), length("n", "l")), { "n" })
    h.raises("INVALID_ARGUMENT", "Tensor must be at least a vector, but saw shape: []", run,
      cat(scatter("l", f32(1), { 0 }), length("n", "l")), { "n" })
  end)

  it("TensorListScatterIntoExistingList writes rows into a list, growing it, and leaves the input list as it was", function()
    local nodes = cat(reserve("l", 2, { 2 }), { const("x", f32 { { 1, 2 }, { 3, 4 } }), const("i", i32 { 3, 0 }),
      { name = "s", op = "TensorListScatterIntoExistingList", input = { "l", "x", "i" } } },
      stack("st", "s", { 2 }), length("n0", "l"))
    local out = run(nodes, { "st", "n0" })
    assert.are.same({ { 3, 4 }, { 0, 0 }, { 0, 0 }, { 1, 2 } }, out[1]:totable())
    assert.are.equal(2, out[2]:item())
    local function into(x, idx)
      return cat(reserve("l", 2, { 2 }), { const("x", x), const("i", idx),
        { name = "s", op = "TensorListScatterIntoExistingList", input = { "l", "x", "i" } } }, length("n", "s"))
    end
    h.raises("INVALID_ARGUMENT", "Expected len(indices) == tensor.shape[0], but saw: 1 vs. 2", run,
      into(f32 { { 1, 2 }, { 3, 4 } }, i32 { 0 }), { "n" })
    h.raises("INVALID_ARGUMENT", "Expected indices to be a vector, but received shape: []", run,
      into(f32 { { 1, 2 } }, i32(0)), { "n" })
    h.raises("INVALID_ARGUMENT", "Tensor must be at least a vector, but saw shape: []", run, into(f32(1), i32 { 0 }), { "n" })
    h.raises("INVALID_ARGUMENT", "Invalid data types; input tensor type: int32 list element_type: float32", run,
      into(i32 { { 1, 2 } }, i32 { 0 }), { "n" })
    -- tfdev's own checks where TensorFlow would index out of its vector or keep a misfit element
    h.raises("INVALID_ARGUMENT", "Indices in TensorListScatter must all be non-negative.", run,
      into(f32 { { 1, 2 } }, i32 { -1 }), { "n" })
    h.raises("INVALID_ARGUMENT", "Item element shape: [3] list shape: [2]", run, into(f32 { { 1, 2, 3 } }, i32 { 0 }), { "n" })
  end)

  it("TensorListResize grows with unset elements and shrinks, copying on write", function()
    local nodes = cat(from("l", f32(m32), { 2 }), { const("five", i32(5)), const("one", i32(1)),
      { name = "big", op = "TensorListResize", input = { "l", "five" } },
      { name = "small", op = "TensorListResize", input = { "l", "one" } } },
      stack("sb", "big", { 2 }), stack("ss", "small", { 2 }), length("n", "l"))
    local out = run(nodes, { "sb", "ss", "n" })
    assert.are.same({ { 1, 2 }, { 3, 4 }, { 5, 6 }, { 0, 0 }, { 0, 0 } }, out[1]:totable())
    assert.are.same({ { 1, 2 } }, out[2]:totable())
    assert.are.equal(3, out[3]:item())
    h.raises("INVALID_ARGUMENT", "TensorListSlice expects size to be non-negative. Got: -1", run,
      cat(from("l", f32(m32)), { const("m", i32(-1)), { name = "r", op = "TensorListResize", input = { "l", "m" } } },
        length("n", "r")), { "n" })
    h.raises("INVALID_ARGUMENT", "must be int32", run,
      cat(from("l", f32(m32)), { const("m", f32(1)), { name = "r", op = "TensorListResize", input = { "l", "m" } } },
        length("n", "r")), { "n" })
  end)

  -- TensorFlow.js refuses TensorListSplit; these are TensorFlow's list_ops_test.py testSplit* cases.
  local function split(x, es, lengths)
    return { const("x", x), const("es", i32(es)), const("len", i64(lengths)),
      { name = "l", op = "TensorListSplit", input = { "x", "es", "len" } } }
  end

  it("TensorListSplit cuts a tensor into pieces of the given lengths", function()
    local out = run(cat(split(f32 { 1, 2, 3, 4 }, { -1 }, { 1, 3 }), gather("g0", "l", { 0 }, { -1 }),
      gather("g1", "l", { 1 }, { -1 }), length("n", "l")), { "g0", "g1", "n" })
    assert.are.same({ { 1 } }, out[1]:totable())
    assert.are.same({ { 2, 3, 4 } }, out[2]:totable())
    assert.are.equal(2, out[3]:item())
    out = run(cat(split(f32 { 1, 2, 3, 4 }, { 2 }, { 2, 2 }), stack("st", "l", { 2 })), { "st" })
    assert.are.same({ { 1, 2 }, { 3, 4 } }, out[1]:totable())
    out = run(cat(split(i32 { { 1, 2 }, { 3, 4 }, { 5, 6 } }, { -1, 2 }, { 0, 3 }), length("n", "l"),
      { { name = "c", op = "TensorListConcatV2", input = { "l", "es", "lead" }, attr = { element_dtype = "int32" } },
        const("lead", i64 {}) }), { "n", "c", "c:1" })
    assert.are.equal(2, out[1]:item())
    assert.are.same({ { 1, 2 }, { 3, 4 }, { 5, 6 } }, out[2]:totable())
    assert.are.same({ 0, 3 }, out[3]:totable())
  end)

  it("TensorListSplit's errors are TensorFlow's", function()
    local function fails(frag, x, es, lengths)
      h.raises("INVALID_ARGUMENT", frag, run, cat(split(x, es, lengths), length("n", "l")), { "n" })
    end
    fails("Unused values in tensor. Length of tensor: 4 Values used: 3", f32 { 1, 2, 3, 4 }, { -1 }, { 1, 2 })
    fails("Attempting to slice [2, 5] from tensor with length 4", f32 { 1, 2, 3, 4 }, { -1 }, { 2, 3 })
    fails("Invalid value in lengths: -1", f32 { 1, 2, 3, 4 }, { -1 }, { -1, 5 })
    fails("TensorListSplit requires element_shape to be at least of rank 1, but saw: []", f32 { 1, 2 }, {}, { 2 })
    fails("Tensor must be at least a vector, but saw shape: []", f32(1), { -1 }, { 1 })
    fails("tensor shape [2,2] is not compatible with element_shape [?,3]", f32 { { 1, 2 }, { 3, 4 } }, { -1, 3 }, { 2 })
    fails("Expected lengths to be a vector, received shape: []", f32 { 1, 2 }, { -1 }, 2)
    h.raises("INVALID_ARGUMENT", "lengths (input 2) must be int64", run, { const("x", f32 { 1 }), const("es", i32 { -1 }),
      const("len", i32 { 1 }), { name = "l", op = "TensorListSplit", input = { "x", "es", "len" } } }, { "l" })
    -- a piece whose leading size differs from a fully known element_shape cannot be stacked by its bytes
    h.raises("INVALID_ARGUMENT", "Tensor with invalid shape in list. List element shape shape: [2] and tensor shape: [1]", run,
      cat(split(f32 { 1, 2, 3 }, { 2 }, { 1, 2 }), stack("st", "l", { 2 })), { "st" })
  end)

  it("TensorListConcat joins elements along their first dim and gives their lengths", function()
    local out = run(cat(from("l", f32 { { { 1, 2 } }, { { 3, 4 } } }), {
      { name = "c", op = "TensorListConcat", input = { "l" }, attr = { element_dtype = "float32", element_shape = { -1, 2 } } } }),
      { "c", "c:1" })
    assert.are.same({ { 1, 2 }, { 3, 4 } }, out[1]:totable())
    assert.are.same({ 1, 1 }, out[2]:totable())
    assert.are.equal("int64", out[2].dtype)
    -- elements of different lengths (a split list)
    out = run(cat(split(f32 { 1, 2, 3, 4, 5 }, { -1 }, { 2, 0, 3 }),
      { { name = "c", op = "TensorListConcat", input = { "l" }, attr = { element_dtype = "float32" } } }), { "c", "c:1" })
    assert.are.same({ 1, 2, 3, 4, 5 }, out[1]:totable())
    assert.are.same({ 2, 0, 3 }, out[2]:totable())
    h.raises("INVALID_ARGUMENT", "Concating lists with uninitialized tensors is not supported in this version of " ..
      "TensorListConcat. Consider updating your GraphDef to run the newer version.", run,
      cat(reserve("l", 2, { -1, 2 }), { { name = "c", op = "TensorListConcat", input = { "l" },
        attr = { element_dtype = "float32", element_shape = { -1, 2 } } } }), { "c" })
    h.raises("INVALID_ARGUMENT", "All except the first dimension must be fully defined when concating an empty tensor list. " ..
      "element_shape: <unknown>", run, cat(reserve("l", 0, -1), {
        { name = "c", op = "TensorListConcat", input = { "l" }, attr = { element_dtype = "float32" } } }), { "c" })
  end)

  -- TensorFlow.js reads TensorListConcatV2 as TensorListConcat (element_shape from an attr, no leading_dims);
  -- these follow TensorFlow's kernel (list_ops_test.py testConcat*).
  it("TensorListConcatV2 takes element_shape and leading_dims inputs for unset elements", function()
    local out = run(cat(reserve("l", 3, { -1, 2 }), { const("v", f32 { { 1, 2 } }), const("i", i32(1)),
      { name = "s", op = "TensorListSetItem", input = { "l", "i", "v" } } }, concat2("c", "s", { -1, 2 }, { 2, 0, 1 })),
      { "c", "c:1" })
    assert.are.same({ { 0, 0 }, { 0, 0 }, { 1, 2 }, { 0, 0 } }, out[1]:totable())
    assert.are.same({ 2, 1, 1 }, out[2]:totable()) -- a set element's own length wins over leading_dims
    -- a known first dim in element_shape stands for the unset elements
    out = run(cat(reserve("l", 2, { -1 }), concat2("c", "l", { 3 })), { "c", "c:1" })
    assert.are.same({ 0, 0, 0, 0, 0, 0 }, out[1]:totable())
    assert.are.same({ 3, 3 }, out[2]:totable())
    -- the set elements' common first dim is inferred for the unset ones
    out = run(cat(reserve("l", 2, { -1 }), { const("v", f32 { 4, 5 }), const("i", i32(0)),
      { name = "s", op = "TensorListSetItem", input = { "l", "i", "v" } } }, concat2("c", "s", -1)), { "c", "c:1" })
    assert.are.same({ 4, 5, 0, 0 }, out[1]:totable())
    -- an empty list with a known element shape: an empty tensor
    out = run(cat(reserve("l", 0, { -1, 3 }, "int32"), concat2("c", "l", { -1, 3 }, {}, "int32")), { "c", "c:1" })
    assert.are.same({ 0, 3 }, out[1].shape)
    assert.are.same({ 0 }, out[2].shape)
  end)

  it("TensorListConcatV2's errors are TensorFlow's", function()
    h.raises("INVALID_ARGUMENT", "List contains uninitialized tensor at index 1 but leading_dims has only 1 elements.", run,
      cat(reserve("l", 2, { -1 }), concat2("c", "l", -1, { 2 })), { "c" })
    h.raises("INVALID_ARGUMENT", "Concat requires elements to be at least vectors, found scalars instead.", run,
      cat(reserve("l", 2, -1), concat2("c", "l", {})), { "c" })
    h.raises("INVALID_ARGUMENT", "Concat saw a scalar shape at index 0 but requires at least vectors.", run,
      cat(from("l", f32 { 1, 2 }), concat2("c", "l", -1)), { "c" })
    h.raises("INVALID_ARGUMENT", "First entry of element_shape input does not match the first dim of list element at index: 0 " ..
      "Expected: 3 Actual: 1", run, cat(from("l", f32 { { { 1, 2 } } }), concat2("c", "l", { 3, 2 })), { "c" })
    h.raises("INVALID_ARGUMENT", "Trying to concat list with only uninitialized tensors but element_shape_except_first_dim_ " ..
      "is not fully defined: [?]", run, cat(reserve("l", 1, -1), concat2("c", "l", { 2, -1 })), { "c" })
    h.raises("INVALID_ARGUMENT", "Incompatible shapes during merge: [3] vs. [2]", run,
      cat(from("l", f32 { { { 1, 2 } } }), concat2("c", "l", { -1, 3 })), { "c" })
    h.raises("INVALID_ARGUMENT", "leading_dims (input 2) must be int64", run, cat(reserve("l", 1, -1), {
      const("c/es", i32(-1)), const("c/lead", i32 { 1 }),
      { name = "c", op = "TensorListConcatV2", input = { "l", "c/es", "c/lead" }, attr = { element_dtype = "float32" } } }),
      { "c" })
  end)
end)

describe("hash tables", function()
  local function table_node(name, attr)
    attr = attr or {}
    return { name = name, op = attr.op or "HashTableV2", attr = { key_dtype = attr.key_dtype or "int32",
      value_dtype = attr.value_dtype or "float32", shared_name = attr.shared_name, container = attr.container,
      use_node_name_sharing = attr.use_node_name_sharing }, input = attr.after and { "^" .. attr.after } or nil }
  end
  local function init(name, tbl, keys, vals, op)
    return { const(name .. "/k", keys), const(name .. "/v", vals),
      { name = name, op = op or "InitializeTableV2", input = { tbl, name .. "/k", name .. "/v" } } }
  end
  local function find(name, tbl, keys, dflt, deps)
    local input = { tbl, name .. "/k", name .. "/d" }
    for _, d in ipairs(deps or {}) do input[#input + 1] = "^" .. d end
    return { const(name .. "/k", keys), const(name .. "/d", dflt),
      { name = name, op = "LookupTableFindV2", input = input } }
  end
  local function size(name, tbl, deps)
    local input = { tbl }
    for _, d in ipairs(deps or {}) do input[#input + 1] = "^" .. d end
    return { { name = name, op = "LookupTableSizeV2", input = input } }
  end

  it("InitializeTableV2 fills a table; LookupTableFindV2 keeps the keys' shape and gives the default for a missing key", function()
    local out = run(cat({ table_node("t") }, init("i", "t", i32 { 1, 5, 9 }, f32 { 0.5, 1.5, 2.5 }),
      find("f", "t", i32 { { 5, 2 }, { 9, 1 } }, f32(-1), { "i" }), size("n", "t", { "i" })), { "f", "n" })
    assert.are.same({ { 1.5, -1 }, { 2.5, 0.5 } }, out[1]:totable())
    assert.are.equal(3, out[2]:item())
    assert.are.equal("int64", out[2].dtype)
    -- int64 keys, int32, int64, float64 and bool values; a full-size default reads its first element (HashTable)
    out = run(cat({ table_node("t", { key_dtype = "int64", value_dtype = "int32" }) },
      init("i", "t", i64 { 3, -4 }, i32 { 30, 40 }), find("f", "t", i64 { -4, 0, 3 }, i32 { 7, 8, 9 }, { "i" })), { "f" })
    assert.are.same({ 40, 7, 30 }, out[1]:totable())
    for _, dt in ipairs { "int64", "float64", "bool" } do
      local v = dt == "bool" and { true, false } or { 2, 3 }
      out = run(cat({ table_node("t", { value_dtype = dt }) }, init("i", "t", i32 { 1, 2 }, tfdev.tensor(v, dt)),
        find("f", "t", i32 { 2, 1, 0 }, tfdev.tensor(dt == "bool" and true or 9, dt), { "i" })), { "f" })
      assert.are.same({ v[2], v[1], dt == "bool" and true or 9 }, out[1]:totable())
      assert.are.equal(dt, out[1].dtype)
    end
    -- an empty table and empty keys
    out = run(cat({ table_node("t") }, init("i", "t", tfdev.tensor { dtype = "int32", shape = { 0 } },
      tfdev.tensor { dtype = "float32", shape = { 0 } }), find("f", "t", i32 { 4 }, f32(2), { "i" }), size("n", "t", { "i" }),
      find("g", "t", tfdev.tensor { dtype = "int32", shape = { 0, 3 } }, f32(2), { "i" })), { "f", "n", "g" })
    assert.are.same({ 2 }, out[1]:totable())
    assert.are.equal(0, out[2]:item())
    assert.are.same({ 0, 3 }, out[3].shape)
  end)

  it("LookupTableImportV2 initializes a HashTable; a key given twice must keep its value", function()
    local out = run(cat({ table_node("t") }, init("i", "t", i32 { 1, 2, 1 }, f32 { 5, 6, 5 }, "LookupTableImportV2"),
      size("n", "t", { "i" })), { "n" })
    assert.are.equal(2, out[1]:item())
    h.raises("FAILED_PRECONDITION", "HashTable has different value for same key. Key 1 has 5 and trying to add value 0.25", run,
      cat({ table_node("t") }, init("i", "t", i32 { 1, 1 }, f32 { 5, 0.25 }, "LookupTableImportV2")), {}, { "i" })
  end)

  it("the table ops' errors are TensorFlow's", function()
    local function fails(code, frag, nodes, targets)
      h.raises(code, frag, function()
        local s <close> = tfdev.session { optimize_graph = false }
        s:create { node = nodes }
        s:run({}, {}, targets)
      end)
    end
    fails("FAILED_PRECONDITION", "Table not initialized.", cat({ table_node("t") }, find("f", "t", i32 { 1 }, f32(0))), { "f" })
    fails("INVALID_ARGUMENT", "Keys must be a vector, but received shape[]", cat({ table_node("t") }, init("i", "t", i32(1), f32(1))),
      { "i" })
    fails("INVALID_ARGUMENT", "Keys and values must have the same size 2 vs 1",
      cat({ table_node("t") }, init("i", "t", i32 { 1, 2 }, f32 { 1 })), { "i" })
    fails("INVALID_ARGUMENT", "Signature mismatch, have: resource, int64, float32 expected: resource, int32, float32",
      cat({ table_node("t") }, init("i", "t", i64 { 1 }, f32 { 1 })), { "i" })
    fails("INVALID_ARGUMENT", "Signature mismatch, have: resource, int32, int32 expected: resource, int32, float32",
      cat({ table_node("t") }, init("i", "t", i32 { 1 }, f32 { 1 }), find("f", "t", i32 { 1 }, i32(0), { "i" })), { "f" })
    fails("INVALID_ARGUMENT", "default_value must be the same shape as value_shape or full size value shape expected [] or [3], got [2]",
      cat({ table_node("t") }, init("i", "t", i32 { 1 }, f32 { 1 }), find("f", "t", i32 { 1, 2, 3 }, f32 { 0, 0 }, { "i" })), { "f" })
    fails("INVALID_ARGUMENT", "Expected shape [2] for value, got [1,2]",
      cat({ table_node("t") }, init("i", "t", i32 { 1, 2 }, f32 { { 1, 2 } }, "LookupTableImportV2")), { "i" })
    fails("UNIMPLEMENTED", "Insert not supported by InitializableLookupTable implementations",
      cat({ table_node("t") }, init("i", "t", i32 { 1 }, f32 { 1 }, "LookupTableInsertV2")), { "i" })
    fails("INVALID_ARGUMENT", "Conflicting key/value dtypes int32->int32 with int32-float32 for table shared",
      { table_node("a", { shared_name = "shared" }), table_node("b", { shared_name = "shared", value_dtype = "int32", after = "sa" }),
        { name = "sa", op = "LookupTableSizeV2", input = { "a" } }, { name = "sb", op = "LookupTableSizeV2", input = { "b", "^sa" } } },
      { "sb" })
    h.raises("INVALID_ARGUMENT", "key_dtype float32 is not supported", run, { table_node("t", { key_dtype = "float32" }) }, { "t" })
  end)

  it("a second InitializeTableV2 with the same entries is a no-op, with others TensorFlow's error", function()
    local nodes = cat({ table_node("t", { shared_name = "tbl" }) }, init("same", "t", i32 { 2, 1 }, f32 { 20, 10 }),
      init("other", "t", i32 { 1, 2 }, f32 { 10, 99 }), init("more", "t", i32 { 1, 2, 3 }, f32 { 10, 20, 30 }),
      find("f", "t", i32 { 1, 2 }, f32(0)))
    local s <close> = tfdev.session { optimize_graph = false }
    s:create { node = cat(nodes, init("first", "t", i32 { 1, 2 }, f32 { 10, 20 })) }
    s:run({}, {}, { "first" })
    s:run({}, {}, { "first" }) -- the initializer run again
    s:run({}, {}, { "same" })
    assert.are.same({ 10, 20 }, s:run({}, { "f" })[1]:totable())
    h.raises("FAILED_PRECONDITION", "Table was already initialized with different data.", s.run, s, {}, {}, { "other" })
    h.raises("FAILED_PRECONDITION", "Table was already initialized with different data.", s.run, s, {}, {}, { "more" })
  end)

  it("a table lives in the session across runs, shared by shared_name, not between sessions", function()
    local nodes = { table_node("a", { shared_name = "vocab" }), table_node("b", { shared_name = "vocab" }),
      table_node("own1"), table_node("own2") }
    nodes = cat(nodes, init("ia", "a", i32 { 7 }, f32 { 0.5 }), find("fb", "b", i32 { 7, 8 }, f32(-1)),
      init("i1", "own1", i32 { 1 }, f32 { 1 }), size("n1", "own1"), size("n2", "own2"))
    local s1 <close> = tfdev.session { optimize_graph = false }
    s1:create { node = nodes }
    s1:run({}, {}, { "ia" })
    -- a later run reads the table the first run filled, through another node naming the same shared_name
    assert.are.same({ 0.5, -1 }, s1:run({}, { "fb" })[1]:totable())
    s1:run({}, {}, { "i1" })
    local n = s1:run({}, { "n1", "n2" })
    assert.are.equal(1, n[1]:item()) -- own1's table keeps its entry
    assert.are.equal(0, n[2]:item()) -- own2 (no shared_name) has a table of its own
    -- another session: its own resource manager, so its "vocab" is not initialized
    local s2 <close> = tfdev.session { optimize_graph = false }
    s2:create { node = nodes }
    h.raises("FAILED_PRECONDITION", "Table not initialized.", s2.run, s2, {}, { "fb" })
    s2:run({}, {}, { "i1" })
    assert.are.equal(1, s2:run({}, { "n1" })[1]:item())
  end)

  it("MutableHashTableV2 inserts, overwrites, removes, imports and exports", function()
    local m = table_node("m", { op = "MutableHashTableV2", key_dtype = "int64", value_dtype = "int32" })
    local nodes = cat({ m }, init("ins", "m", i64 { 1, 2, 3 }, i32 { 10, 20, 30 }, "LookupTableInsertV2"),
      init("over", "m", i64 { 2 }, i32 { 22 }, "LookupTableInsertV2"),
      { const("rk", i64 { 1, 9 }), { name = "rm", op = "LookupTableRemoveV2", input = { "m", "rk" } } },
      init("imp", "m", i64 { 5 }, i32 { 50 }, "LookupTableImportV2"),
      find("f", "m", i64 { 1, 2, 3 }, i32 { -1, -2, -3 }), size("n", "m"),
      { { name = "ex", op = "LookupTableExportV2", input = { "m" }, attr = { Tkeys = "int64", Tvalues = "int32" } } })
    local s <close> = tfdev.session { optimize_graph = false }
    s:create { node = nodes }
    assert.are.same({ -1, -2, -3 }, s:run({}, { "f" })[1]:totable()) -- empty, no initialization needed; per-key defaults
    s:run({}, {}, { "ins" })
    s:run({}, {}, { "over" })
    assert.are.same({ 10, 22, 30 }, s:run({}, { "f" })[1]:totable())
    s:run({}, {}, { "rm" })
    local out = s:run({}, { "f", "n", "ex:0", "ex:1" })
    assert.are.same({ -1, 22, 30 }, out[1]:totable())
    assert.are.equal(2, out[2]:item())
    assert.are.same({ 2, 3 }, out[3]:totable())
    assert.are.same({ 22, 30 }, out[4]:totable())
    s:run({}, {}, { "imp" }) -- replaces the entries
    out = s:run({}, { "n", "ex:0", "ex:1" })
    assert.are.equal(1, out[1]:item())
    assert.are.same({ 5 }, out[2]:totable())
    assert.are.same({ 50 }, out[3]:totable())
    h.raises("INVALID_ARGUMENT", "Key must be type int64 but got int32", run,
      { m, const("rk", i32 { 1 }), { name = "rm", op = "LookupTableRemoveV2", input = { "m", "rk" } } }, {}, { "rm" })
  end)

  it("TensorFlow 1's names (HashTable, InitializeTable, LookupTableFind, ...) run the same tables", function()
    local out = run(cat({ table_node("t", { op = "HashTable" }) }, init("i", "t", i32 { 1, 5 }, f32 { 0.5, 1.5 }, "InitializeTable"),
      { const("q", i32 { { 5, 2 } }), const("d", f32(-1)),
        { name = "f", op = "LookupTableFind", input = { "t", "q", "d", "^i" } },
        { name = "n", op = "LookupTableSize", input = { "t", "^i" } } }), { "f", "n" })
    assert.are.same({ { 1.5, -1 } }, out[1]:totable())
    assert.are.equal(2, out[2]:item())
    assert.are.equal("int64", out[2].dtype)
    local m = table_node("m", { op = "MutableHashTable", key_dtype = "int64", value_dtype = "int32" })
    local imp = init("imp", "m", i64 { 9 }, i32 { 90 }, "LookupTableImport")
    table.insert(imp[3].input, "^ins") -- the import runs after the insert, and replaces its entries
    out = run(cat({ m }, init("ins", "m", i64 { 7, 8 }, i32 { 70, 80 }, "LookupTableInsert"), imp,
      { { name = "ex", op = "LookupTableExport", input = { "m", "^imp" }, attr = { Tkeys = "int64", Tvalues = "int32" } } }),
      { "ex:0", "ex:1" })
    assert.are.same({ 9 }, out[1]:totable())
    assert.are.same({ 90 }, out[2]:totable())
    -- the checks are the V2 ops': a MutableHashTable is not initialized by InitializeTable, float keys are refused
    h.raises("INVALID_ARGUMENT", "which InitializeTable does not initialize", run,
      cat({ m }, init("i", "m", i64 { 1 }, i32 { 2 }, "InitializeTable")), {}, { "i" })
    h.raises("INVALID_ARGUMENT", "key_dtype float32 is not supported", run,
      { table_node("t", { op = "HashTable", key_dtype = "float32" }) }, { "t" })
  end)
end)
