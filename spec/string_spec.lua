-- String tensors (DT_STRING) through every door: Lua values (embedded zeros kept), feeds and fetches, the
-- data-movement ops that move them, comparison and uniques, binary and JSON GraphDefs (string_val and
-- TensorFlow's tensor_content encoding), TensorFlow.js string weights, placement beside a GPU; and the string
-- ops TensorFlow.js's converter maps (StringToHashBucketFast, StringSplit, StringNGrams, StaticRegexReplace)
-- with TensorFlow's values and error texts. spec/conformance/string.json checks the ops against TensorFlow.js.
local tfdev = require "tfdev"
local h = require "spec.support.helpers"

local function S(v) return tfdev.tensor(v, "string") end
local function i32(v) return tfdev.tensor(v, "int32") end
local function i64(v) return tfdev.tensor(v, "int64") end

-- Runs `op` on Const inputs (h.run_node); returns its outputs 0..n-1.
local function run(op, inputs, attrs, n, opts)
  local f = {}
  for i = 1, (n or 1) do f[i] = "y:" .. (i - 1) end
  return table.unpack(h.run_node(op, inputs, attrs, f, opts and opts.optimize_graph))
end

describe("string tensors in Lua", function()
  it("hold any bytes, embedded zeros and empty strings included", function()
    local t = tfdev.tensor { "a", "b\0c", "" }
    assert.are.equal("string", t.dtype)
    assert.are.same({ 3 }, t.shape)
    assert.are.same({ "a", "b\0c", "" }, t:totable())
    assert.are.equal(3, #t:totable()[2])
    assert.are.equal("b\0c", t[2])
    assert.are.equal("hello", tfdev.tensor("hello"):item())
    assert.are.same({ { "x", "y" }, { "z", "w" } }, tfdev.tensor({ { "x", "y" }, { "z", "w" } }, "string"):totable())
  end)

  it("print as quoted literals, escaping what is not printable and cutting long ones", function()
    assert.are.equal('tfdev.tensor(string, shape={3}): ["a", "b\\0c", "q\\"\\\\"]', tostring(S { "a", "b\0c", 'q"\\' }))
    local long = tostring(S { string.rep("x", 50) })
    assert.truthy(long:find('["' .. string.rep("x", 40) .. '"...]', 1, true))
  end)

  it("compare by bytes and fill in place", function()
    assert.is_true(S { "a", "b\0c" } == S { "a", "b\0c" })
    assert.is_false(S { "a", "b\0c" } == S { "a", "b\0d" })
    assert.is_false(S { "a" } == S { "a", "" })
    local t = tfdev.tensor { dtype = "string", shape = { 2, 2 } }
    assert.are.same({ { "", "" }, { "", "" } }, t:totable())
    t:fill("z\0")
    assert.are.same({ { "z\0", "z\0" }, { "z\0", "z\0" } }, t:totable())
    local u = S { "p", "q", "r", "s" }
    u:copy_from(t)
    assert.are.same({ "z\0", "z\0", "z\0", "z\0" }, u:totable())
  end)

  it("refuse what has no meaning for strings, naming it", function()
    h.raises("INVALID_ARGUMENT", "nested table mixes strings with numbers; give a dtype", tfdev.tensor, { "a", 1 })
    h.raises("INVALID_ARGUMENT", "element [2] is a number, expected a string (dtype string)", tfdev.tensor, { "a", 1 },
      "string")
    h.raises("INVALID_ARGUMENT", "element [1] is a string, expected a number (dtype float32)", tfdev.tensor, { "a" },
      "float32")
    h.raises("INVALID_ARGUMENT", "bytes(): a string tensor's elements are strings of their own", function()
      return S { "a" }:bytes()
    end)
    h.raises("INVALID_ARGUMENT", "string tensors cannot be made from bytes", tfdev.from_bytes, "string", { 1 },
      string.rep("\0", 8))
    h.raises("INVALID_ARGUMENT", "copy_from: string tensors cannot be written from bytes", function()
      return S { "a" }:copy_from(string.rep("\0", 8))
    end)
    h.raises("INVALID_ARGUMENT", "fill: a string tensor takes a string, got a number", function() return S { "a" }:fill(1) end)
  end)
end)

describe("string tensors in graphs", function()
  it("are fed and fetched through Placeholders and Identity", function()
    local s <close> = tfdev.session()
    s:create { node = { { name = "p", op = "Placeholder", attr = { dtype = "string" } },
      { name = "y", op = "Identity", input = { "p" } } } }
    assert.are.same({ "x", "y\0z", "" }, s:run({ p = { "x", "y\0z", "" } }, { "y" })[1]:totable())
    assert.are.same("one", s:run({ p = "one" }, { "y" })[1]:item())
    h.raises("INVALID_ARGUMENT", "is a number, expected a string", function() return s:run({ p = { 1 } }, { "y" }) end)
  end)

  local t = S { "a", "b\0c", "" }
  local moves = {
    { "GatherV2", { t, i32 { 2, 0, 2, 1 }, i32(0) }, {}, { "", "a", "", "b\0c" } },
    { "ConcatV2", { t, S { "d" }, i32(0) }, { N = 2 }, { "a", "b\0c", "", "d" } },
    { "Reshape", { t, i32 { 3, 1 } }, {}, { { "a" }, { "b\0c" }, { "" } } },
    { "Tile", { t, i32 { 2 } }, {}, { "a", "b\0c", "", "a", "b\0c", "" } },
    { "Transpose", { S { { "a", "b" }, { "c", "d" } }, i32 { 1, 0 } }, {}, { { "a", "c" }, { "b", "d" } } },
    { "Pack", { t, t }, { N = 2 }, { { "a", "b\0c", "" }, { "a", "b\0c", "" } } },
    { "StridedSlice", { t, i32 { 1 }, i32 { 3 }, i32 { 1 } }, {}, { "b\0c", "" } },
    { "Slice", { t, i32 { 0 }, i32 { 2 } }, {}, { "a", "b\0c" } },
    { "Pad", { t, i32 { { 1, 1 } } }, {}, { "", "a", "b\0c", "", "" } },
    { "PadV2", { t, i32 { { 1, 0 } }, S "pad" }, {}, { "pad", "a", "b\0c", "" } },
    { "MirrorPad", { t, i32 { { 1, 1 } } }, { mode = "REFLECT" }, { "b\0c", "a", "b\0c", "", "b\0c" } },
    { "ReverseV2", { t, i32 { 0 } }, {}, { "", "b\0c", "a" } },
    { "Fill", { i32 { 2 }, S "z" }, {}, { "z", "z" } },
    { "ZerosLike", { t }, {}, { "", "", "" } },
    { "SelectV2", { tfdev.tensor { true, false, true }, t, S "q" }, {}, { "a", "q", "" } },
    { "OneHot", { i32 { 0, 2 }, i32(3), S "on", S "off" }, {}, { { "on", "off", "off" }, { "off", "off", "on" } } },
    { "GatherNd", { t, i32 { { 2 }, { 0 } } }, {}, { "", "a" } },
    { "BroadcastTo", { S { "u" }, i32 { 3 } }, {}, { "u", "u", "u" } },
    { "ExpandDims", { t, i32(0) }, {}, { { "a", "b\0c", "" } } },
    { "DepthToSpace", { S { { { { "a", "b", "c", "d" } } } } }, { block_size = 2 }, { { { { "a" }, { "b" } }, { { "c" }, { "d" } } } } },
  }
  for _, m in ipairs(moves) do
    it(m[1] .. " moves string elements, with and without constant folding", function()
      for _, fold in ipairs { false, true } do
        local out = run(m[1], m[2], m[3], 1, { optimize_graph = fold })
        assert.are.equal("string", out.dtype)
        assert.are.same(m[4], out:totable())
      end
    end)
  end

  it("split, unpack and run through control flow", function()
    local s <close> = tfdev.session()
    s:create { node = { { name = "c", op = "Const", attr = { value = t } }, { name = "ax", op = "Const", attr = { value = i32(0) } },
      { name = "u", op = "Unpack", input = { "c" }, attr = { num = 3 } },
      { name = "sp", op = "Split", input = { "ax", "c" }, attr = { num_split = 3 } },
      { name = "p", op = "Placeholder", attr = { dtype = "bool" } },
      { name = "sw", op = "Switch", input = { "c", "p" } },
      { name = "m", op = "Merge", input = { "sw:0", "sw:1" } } } }
    local r = s:run({ p = true }, { "u:1", "sp:2", "m" })
    assert.are.equal("b\0c", r[1]:item())
    assert.are.same({ "" }, r[2]:totable())
    assert.are.same({ "a", "b\0c", "" }, r[3]:totable())
  end)

  it("compare with Equal and NotEqual, broadcasting, and find uniques", function()
    local e, n = run("Equal", { S { "x", "yy", "z\0" }, S "yy" }), run("NotEqual", { S { "x", "yy", "z\0" }, S "z" })
    assert.are.same({ false, true, false }, e:totable())
    assert.are.same({ true, true, true }, n:totable())
    local y, idx = run("Unique", { S { "x", "yy", "x", "", "yy" } }, {}, 2)
    assert.are.same({ "x", "yy", "" }, y:totable())
    assert.are.same({ 0, 1, 0, 2, 1 }, idx:totable())
    local d, di = run("ListDiff", { S { "x", "yy", "x", "" }, S { "x" } }, {}, 2)
    assert.are.same({ "yy", "" }, d:totable())
    assert.are.same({ 1, 3 }, di:totable())
  end)

  it("are refused, naming the dtype, by ops that do arithmetic", function()
    h.raises("INVALID_ARGUMENT", "T=string is not allowed", run, "AddV2", { S { "a" }, S { "b" } })
    h.raises("INVALID_ARGUMENT", "T=string is not allowed", run, "Cast", { S { "1" } }, { DstT = "int32" })
  end)
end)

describe("string ops", function()
  it("StringToHashBucketFast gives TensorFlow's buckets (farmhash Fingerprint64)", function()
    -- string_to_hash_bucket_op_test.py: ['a', 'b', 'c', 'd'] into 10 buckets
    assert.are.same({ 9, 2, 2, 5 }, run("StringToHashBucketFast", { S { "a", "b", "c", "d" } }, { num_buckets = 10 }):totable())
    local out = run("StringToHashBucketFast", { S { { "", "x" } } }, { num_buckets = 3 })
    assert.are.equal("int64", out.dtype)
    assert.are.same({ 1, 2 }, out.shape)
    h.raises("INVALID_ARGUMENT", "num_buckets must be at least 1, got 0", run, "StringToHashBucketFast", { S { "a" } },
      { num_buckets = 0 })
    h.raises("INVALID_ARGUMENT", "input (input 0) must be string, got int32", run, "StringToHashBucketFast", { i32 { 1 } },
      { num_buckets = 2 })
  end)

  it("StringSplit splits at any of the delimiter's bytes, or into bytes", function()
    local ix, v, shape = run("StringSplit", { S { "hello world", "a  b", "" }, S " " }, {}, 3)
    assert.are.same({ { 0, 0 }, { 0, 1 }, { 1, 0 }, { 1, 1 } }, ix:totable())
    assert.are.equal("int64", ix.dtype)
    assert.are.same({ "hello", "world", "a", "b" }, v:totable())
    assert.are.same({ 3, 2 }, shape:totable())
    ix, v, shape = run("StringSplit", { S { "a,;b", ";" }, S ",;" }, { skip_empty = false }, 3)
    assert.are.same({ "a", "", "b", "", "" }, v:totable())
    assert.are.same({ 2, 3 }, shape:totable())
    ix, v = run("StringSplit", { S { "a\0b" }, S "" }, {}, 2)
    assert.are.same({ "a", "\0", "b" }, v:totable())
    h.raises("INVALID_ARGUMENT", "input (input 0) must have rank 1, got rank 2", run, "StringSplit", { S { { "a" } }, S " " })
    local s <close> = tfdev.session() -- shapes known only when fed: the kernel's own checks
    s:create { node = { { name = "x", op = "Placeholder", attr = { dtype = "string" } },
      { name = "d", op = "Placeholder", attr = { dtype = "string" } },
      { name = "y", op = "StringSplit", input = { "x", "d" } } } }
    h.raises("INVALID_ARGUMENT", "node 'y' (StringSplit): input must be a vector, got shape: [1,1]", s.run, s,
      { x = S { { "a" } }, d = S " " }, { "y:1" })
    h.raises("INVALID_ARGUMENT", "delimiter must be a scalar, got shape: [2]", s.run, s, { x = S { "a" }, d = S { " ", "," } },
      { "y:1" })
    h.raises("INVALID_ARGUMENT", "delimiter (input 1) must have rank 0, got rank 1", run, "StringSplit", { S { "a" }, S { " " } })
  end)

  it("StringNGrams makes TensorFlow's padded n-grams per row", function()
    local attrs = { separator = " ", ngram_widths = { 2, 3 }, left_pad = "LP", right_pad = "RP", pad_width = 2,
      preserve_short_sequences = false }
    local ng, splits = run("StringNGrams", { S { "a", "b", "c", "d", "e" }, i64 { 0, 3, 5 } }, attrs, 2)
    assert.are.same({ "LP a", "a b", "b c", "c RP", "LP LP a", "LP a b", "a b c", "b c RP", "c RP RP",
      "LP d", "d e", "e RP", "LP LP d", "LP d e", "d e RP", "e RP RP" }, ng:totable())
    assert.are.same({ 0, 9, 16 }, splits:totable())
    assert.are.equal("int64", splits.dtype)
    local keep = { separator = "|", ngram_widths = { 4 }, left_pad = "", right_pad = "", pad_width = 0,
      preserve_short_sequences = true, Tsplits = "int32" }
    ng, splits = run("StringNGrams", { S { "a", "b", "c", "d", "e" }, i32 { 0, 3, 3, 5 } }, keep, 2)
    assert.are.same({ "a|b|c", "d|e" }, ng:totable())
    assert.are.same({ 0, 1, 1, 2 }, splits:totable())
    local bad = function(splits_) return run("StringNGrams", { S { "a", "b" }, i64(splits_) }, attrs, 2) end
    h.raises("INVALID_ARGUMENT", "First split value must be 0, got 1", bad, { 1, 2 })
    h.raises("INVALID_ARGUMENT", "Invalid split value 3, must be in [0, 2]", bad, { 0, 3 })
    h.raises("INVALID_ARGUMENT", "Last split value must be data size. Expected 2, got 1", bad, { 0, 1 })
    attrs.ngram_widths = { 0 }
    h.raises("INVALID_ARGUMENT", "ngram_widths must contain positive values", bad, { 0, 2 })
  end)

  it("StaticRegexReplace follows RE2's syntax and rewrite rules", function()
    local function rx(input, pattern, rewrite, global)
      return run("StaticRegexReplace", { S(input) }, { pattern = pattern, rewrite = rewrite, replace_global = global }):totable()
    end
    assert.are.same({ "h*ll* w*rld", "" }, rx({ "hello world", "" }, "[aeiou]", "*"))
    assert.are.same({ "he<ll>o wor<l>d" }, rx({ "hello world" }, "l+", "<\\0>"))
    assert.are.same({ "he<ll>o world" }, rx({ "hello world" }, "l+", "<\\0>", false))
    assert.are.same({ "Smith, John" }, rx({ "John Smith" }, "(\\w+)\\s(\\w+)", "\\2, \\1"))
    assert.are.same({ "Smith John" }, rx({ "John Smith" }, "(?:J)(\\w+) (?P<last>\\w+)", "\\2 J\\1"))
    assert.are.same({ "-a-b-c-" }, rx({ "abc" }, "x*", "-")) -- RE2's GlobalReplace: no empty match right after one
    assert.are.same({ "-\u{e9}-\u{20ac}-" }, rx({ "\u{e9}\u{20ac}" }, "x*", "-")) -- it steps over whole UTF-8 characters
    assert.are.same({ "a\\b" }, rx({ "a.b" }, "\\.", "\\\\"))
    assert.are.same({ "a\nb", "xb" }, rx({ "a\nb", "a\tb" }, "a.", "x")) -- '.' is any byte but a newline
    assert.are.same({ "[0-9]" }, rx({ "7" }, "\\d", "[0-9]"))
    assert.are.same({ "x-x" }, rx({ "AbC-abc" }, "(?i)abc", "x"))
    assert.are.same({ "a\0-" }, rx({ "a\0b" }, "b", "-")) -- strings with zeros are matched whole
    local function bad(pattern, rewrite) return rx({ "abc" }, pattern, rewrite or "") end
    h.raises("INVALID_ARGUMENT", "Invalid pattern: a*?, error: non-greedy repetition is not supported", bad, "a*?")
    h.raises("INVALID_ARGUMENT", "Invalid pattern: (a, error:", bad, "(a")
    h.raises("INVALID_ARGUMENT", "(RE2 has no backreferences)", bad, "(a)\\1")
    h.raises("INVALID_ARGUMENT", "Rewrite schema requests 2 matches, but the regexp only has 1 parenthesized", bad, "(a)",
      "\\2")
    h.raises("INVALID_ARGUMENT", "Invalid rewrite pattern: \\n", bad, "a", "\\n")
  end)
end)

describe("hash tables with string keys and values", function()
  it("look up a vocabulary, and insert, replace, remove and export strings", function()
    local s <close> = tfdev.session()
    s:create { node = {
      { name = "t", op = "HashTableV2", attr = { key_dtype = "string", value_dtype = "int64" } },
      { name = "k", op = "Const", attr = { value = S { "cat", "dog", "", "emu" } } },
      { name = "v", op = "Const", attr = { value = i64 { 1, 2, 3, 4 } } },
      { name = "init", op = "InitializeTableV2", input = { "t", "k", "v" } },
      { name = "x", op = "Placeholder", attr = { dtype = "string" } },
      { name = "d", op = "Const", attr = { value = i64(-1) } },
      { name = "f", op = "LookupTableFindV2", input = { "t", "x", "d" } } } }
    s:run({}, {}, { "init" })
    assert.are.same({ { 2, -1 }, { 3, 1 } }, s:run({ x = { { "dog", "zebra" }, { "", "cat" } } }, { "f" })[1]:totable())
    local m <close> = tfdev.session()
    m:create { node = {
      { name = "t", op = "MutableHashTableV2", attr = { key_dtype = "string", value_dtype = "string" } },
      { name = "k", op = "Placeholder", attr = { dtype = "string" } },
      { name = "v", op = "Placeholder", attr = { dtype = "string" } },
      { name = "ins", op = "LookupTableInsertV2", input = { "t", "k", "v" } },
      { name = "rm", op = "LookupTableRemoveV2", input = { "t", "k" } },
      { name = "d", op = "Const", attr = { value = S "?" } },
      { name = "f", op = "LookupTableFindV2", input = { "t", "k", "d" } },
      { name = "ex", op = "LookupTableExportV2", input = { "t" }, attr = { Tkeys = "string", Tvalues = "string" } } } }
    m:run({ k = S { "a", "b\0" }, v = S { "x", "y" } }, {}, { "ins" })
    m:run({ k = S { "a" }, v = S { "z" } }, {}, { "ins" })
    local found = m:run({ k = S { "a", "b\0", "b" } }, { "f" })[1]
    assert.are.same({ "z", "y", "?" }, found:totable())
    local e = m:run({}, { "ex:0", "ex:1" })
    assert.are.same({ "a", "b\0" }, e[1]:totable())
    assert.are.same({ "z", "y" }, e[2]:totable())
    m:run({ k = S { "a" } }, {}, { "rm" })
    assert.are.same({ "?", "y" }, m:run({ k = S { "a", "b\0" } }, { "f" })[1]:totable())
    assert.are.same({ "z", "y", "?" }, found:totable()) -- an output keeps its strings after the table lets go
  end)

  it("refuse a key given another value, naming the key", function()
    local s <close> = tfdev.session()
    s:create { node = {
      { name = "t", op = "HashTableV2", attr = { key_dtype = "string", value_dtype = "int64" } },
      { name = "k", op = "Const", attr = { value = S { "cat", "cat" } } },
      { name = "v", op = "Const", attr = { value = i64 { 1, 2 } } },
      { name = "init", op = "InitializeTableV2", input = { "t", "k", "v" } } } }
    h.raises("FAILED_PRECONDITION", "HashTable has different value for same key. Key cat has 1 and trying to add value 2",
      s.run, s, {}, {}, { "init" })
  end)
end)

describe("string tensors in model files", function()
  local dir = h.temp_dirs(before_each, after_each)

  it("round-trip through a binary GraphDef (string_val), zeros and empty strings kept", function()
    local g = { node = { { name = "c", op = "Const", attr = { value = S { "a", "b\0c", "", string.rep("z", 300) } } },
      { name = "u", op = "StaticRegexReplace", input = { "c" }, attr = { pattern = "b", rewrite = "B" } } } }
    tfdev.graph_def.save(g, dir() .. "/g.pb")
    local s <close> = tfdev.session()
    s:create(tfdev.graph_def.load(dir() .. "/g.pb"))
    local c, u = table.unpack(s:run({}, { "c", "u" }))
    assert.are.same({ "a", "b\0c", "", string.rep("z", 300) }, c:totable())
    assert.are.equal("B\0c", u:totable()[2])
  end)

  it("read stringVal and TensorFlow's tensor_content encoding in JSON graphs", function()
    local function b64(s) -- standard base64, as protobuf's JSON writes bytes
      local abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
      return ((s:gsub(".", function(c)
        local bits, b = "", c:byte()
        for i = 8, 1, -1 do bits = bits .. ((b >> (i - 1)) & 1) end
        return bits
      end) .. "0000"):gsub("%d%d%d?%d?%d?%d?", function(x)
        if #x < 6 then return "" end
        local n = tonumber(x, 2)
        return abc:sub(n + 1, n + 1)
      end) .. ({ "", "==", "=" })[#s % 3 + 1])
    end
    local function graph(tensor)
      return '{"modelTopology": {"node": [{"name": "c", "op": "Const", "attr": {"dtype": {"type": "DT_STRING"}, ' ..
          '"value": {"tensor": {"dtype": "DT_STRING", "tensorShape": {"dim": [{"size": "3"}]}, ' .. tensor .. '}}}}]}}'
    end
    local function const(tensor)
      local s <close> = tfdev.session()
      s:create(tfdev.graph_def.parse(graph(tensor), { format = "auto" }))
      return s:run({}, { "c" })[1]:totable()
    end
    -- fewer values than elements: the last repeats, as TensorFlow fills a TensorProto
    assert.are.same({ "x", "y\0", "y\0" }, const('"stringVal": ["' .. b64("x") .. '", "' .. b64("y\0") .. '"]'))
    -- EncodeStringList: the lengths as varints, then the bytes
    assert.are.same({ "ab", "", "cde" }, const('"tensorContent": "' .. b64("\2\0\3abcde") .. '"'))
    h.raises("INVALID_ARGUMENT", "the tensor content of a string tensor ends inside string 2", const,
      '"tensorContent": "' .. b64("\2\0\9abcde") .. '"')
    h.raises("INVALID_ARGUMENT", "has 1 bytes past its strings", const, '"tensorContent": "' .. b64("\2\0\3abcdef") .. '"')
    h.raises("INVALID_ARGUMENT", "stringVal 0 is not base64 text", const, '"stringVal": ["*"]')
  end)

  local function write(path, bytes)
    local f = assert(io.open(path, "wb"))
    f:write(bytes)
    f:close()
  end
  local function tfjs_model(weights)
    write(dir() .. "/model.json", [[{"format": "graph-model", "modelTopology": {"node": [
      {"name": "w", "op": "Const", "attr": {"dtype": {"type": "DT_STRING"}, "value": {"tensor": {
        "dtype": "DT_STRING", "tensorShape": {"dim": [{"size": "3"}]}}}}},
      {"name": "f", "op": "Const", "attr": {"dtype": {"type": "DT_FLOAT"}, "value": {"tensor": {
        "dtype": "DT_FLOAT", "tensorShape": {"dim": [{"size": "1"}]}}}}},
      {"name": "x", "op": "Placeholder", "attr": {"dtype": {"type": "DT_STRING"}, "shape": {"shape": {"dim": [{"size": "-1"}]}}}},
      {"name": "eq", "op": "Equal", "input": ["x", "w"], "attr": {"T": {"type": "DT_STRING"}}},
      {"name": "y", "op": "Identity", "input": ["f"]}]},
      "weightsManifest": [{"paths": ["w.bin"], "weights": [{"name": "w", "shape": [3], "dtype": "string"},
                                                         {"name": "f", "shape": [1], "dtype": "float32"}]}]}]])
    write(dir() .. "/w.bin", weights)
  end
  local function str(s) return string.pack("<I4", #s) .. s end

  it("load TensorFlow.js string weights (a uint32 length, then the bytes) before other weights", function()
    tfjs_model(str("cat") .. str("") .. str("d\0g") .. string.pack("<f", 2.5))
    local m <close> = tfdev.model(dir() .. "/model.json")
    local out = m:run { x = { "cat", "x", "d\0g" } }
    assert.are.same({ true, false, true }, out[1]:totable())
    assert.are.same({ 2.5 }, out[2]:totable())
  end)

  it("refuse string weights that run past the files, naming the weight", function()
    tfjs_model(str("cat") .. string.pack("<I4", 99) .. "x")
    h.raises("INVALID_ARGUMENT", "weight 'w': string 1 of 99 bytes runs past the group's files", tfdev.model,
      dir() .. "/model.json")
    tfjs_model(str("cat") .. "\1")
    h.raises("INVALID_ARGUMENT", "weight 'w': the group's files end inside the length of string 1", tfdev.model,
      dir() .. "/model.json")
  end)
end)
