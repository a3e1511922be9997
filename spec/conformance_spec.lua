-- Op conformance against TensorFlow.js: runs every case of spec/conformance/*.json (small graphs and the outputs
-- TensorFlow.js's CPU backend gave, made by scripts/conformance/gen.js; see spec/conformance/README.md) through
-- tfdev and compares the outputs: integers and bools exactly, floats within a relative bound. A case whose graph
-- uses an op tfdev does not have is pending (named by op), never passed.
local tfdev = require "tfdev"
local json = require "tfdev.json"

local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "spec"
local dir = here .. "/conformance"

-- Float bound: |ours - ref| <= tol * max(1, |ref|). The default covers one float32 rounding of an elementwise op.
local DEFAULT_TOL = 1e-5
local TOL = {
  -- Transcendental functions: TensorFlow.js computes in float64 (Math.*) and rounds once; tfdev uses float32 libm
  -- (and Eigen-style approximations), a few ulps apart.
  Acos = 1e-4, Asin = 1e-4, Atan = 1e-4, Atan2 = 1e-4, Cos = 1e-4, Cosh = 1e-4, Sin = 1e-4, Sinh = 1e-4,
  Tan = 1e-4, Tanh = 1e-4, Exp = 1e-4, Expm1 = 1e-4, Log = 1e-4, Log1p = 1e-4, Sigmoid = 1e-4, Softplus = 1e-4,
  Elu = 1e-4, Selu = 1e-4, Erf = 1e-4, Asinh = 1e-4, Acosh = 1e-4, Atanh = 1e-4, Pow = 1e-4, Rsqrt = 1e-4,
  Softmax = 1e-4, LogSoftmax = 1e-4, LRN = 1e-4, EuclideanNorm = 1e-4, ComplexAbs = 1e-4,
  -- Fourier transforms: TensorFlow.js sums in float32 (a direct sum for lengths that are not powers of two), tfdev
  -- in float64; both errors grow with the length.
  FFT = 1e-4, IFFT = 1e-4, RFFT = 1e-4, IRFFT = 1e-4,
  -- Reductions and products sum in a different order (blocked or vectorised) than TensorFlow.js's left-to-right loop.
  Sum = 1e-4, Mean = 1e-4, Prod = 1e-4, Cumsum = 1e-4, Cumprod = 1e-4, MatMul = 1e-4, BatchMatMul = 1e-4,
  BatchMatMulV2 = 1e-4, _FusedMatMul = 1e-4, Einsum = 1e-4, Conv2D = 1e-4, _FusedConv2D = 1e-4,
  Conv2DBackpropInput = 1e-4, DepthwiseConv2dNative = 1e-4, FusedDepthwiseConv2dNative = 1e-4,
  Conv3D = 1e-4, AvgPool = 1e-4, AvgPool3D = 1e-4, FusedBatchNorm = 1e-4, FusedBatchNormV2 = 1e-4,
  FusedBatchNormV3 = 1e-4, SparseSegmentMean = 1e-4, ResizeBilinear = 1e-4, CropAndResize = 1e-4,
}

-- Outputs TensorFlow gives as int64 where TensorFlow.js, which has no int64, gives int32: the values must agree.
local INT64_OUT = {
  ["Where"] = true,                -- TensorFlow's Where returns int64 indices
  ["ArgMax"] = true, ["ArgMin"] = true, -- output_type defaults to int64 (the cases without it)
  ["MaxPoolWithArgmax"] = true,    -- Targmax int64
  ["StringToHashBucketFast"] = true, -- the buckets are int64
  ["StringSplit"] = true,          -- indices and dense shape are int64 (a SparseTensor's)
}

-- Cases where TensorFlow.js deviates from TensorFlow (checked against TensorFlow's kernels), by "Op/case name":
-- a function from TensorFlow.js's output (and its 1-based number) to TensorFlow's, which the case is compared with;
-- or { refuses = why } where TensorFlow has no kernel for what TensorFlow.js computes: tfdev must raise an error.
local function with(ref, fields) local t = {} for k, v in pairs(ref) do t[k] = v end for k, v in pairs(fields) do t[k] = v end return t end
local function float_floor_div(ref) return with(ref, { dtype = "float32" }) end -- values are floor(x/y) already
local function fill(ref, v) local vals = {} for i = 1, #ref.values do vals[i] = v end return with(ref, { values = vals }) end
-- TensorFlow's BatchMatMulV2 (numpy's matmul): batch dims broadcast, each output matrix a plain product. For the
-- case where TensorFlow.js broadcasts wrongly; inputs are case inputs {shape, values}, rank >= 2, no adjoints.
local function batch_matmul(a, b)
  local ra, rb = #a.shape, #b.shape
  local m, k, n = a.shape[ra - 1], a.shape[ra], b.shape[rb]
  local nb = math.max(ra, rb) - 2
  local batch, out_shape = {}, {}
  for d = 1, nb do
    local da = a.shape[ra - 2 - nb + d] or 1
    local db = b.shape[rb - 2 - nb + d] or 1
    batch[d] = math.max(da, db)
    out_shape[d] = batch[d]
  end
  out_shape[nb + 1], out_shape[nb + 2] = m, n
  local function offset(x, idx) -- the first element of x's matrix at batch index idx (broadcast)
    local r, off, stride = #x.shape, 0, x.shape[#x.shape] * x.shape[#x.shape - 1]
    for d = r - 2, 1, -1 do
      local i = idx[nb - (r - 2) + d]
      if x.shape[d] == 1 then i = 0 end
      off = off + i * stride
      stride = stride * x.shape[d]
    end
    return off
  end
  local vals, idx, total = {}, {}, 1
  for d = 1, nb do idx[d] = 0; total = total * batch[d] end
  for _ = 1, total do
    local oa, ob = offset(a, idx), offset(b, idx)
    for i = 0, m - 1 do
      for j = 0, n - 1 do
        local acc = 0
        for t = 0, k - 1 do acc = acc + a.values[oa + i * k + t + 1] * b.values[ob + t * n + j + 1] end
        vals[#vals + 1] = acc
      end
    end
    for d = nb, 1, -1 do
      idx[d] = idx[d] + 1
      if idx[d] < batch[d] then break end
      idx[d] = 0
    end
  end
  return out_shape, vals
end

-- An elementwise binary op with numpy broadcasting over case inputs {shape, values}; returns shape, values.
local function broadcast_binary(a, b, f)
  local ra, rb = #a.shape, #b.shape
  local r = math.max(ra, rb)
  local shape = {}
  for d = 1, r do
    local da, db = a.shape[d - (r - ra)] or 1, b.shape[d - (r - rb)] or 1
    shape[d] = da == 1 and db or da
  end
  local function offset(x, idx)
    local off, stride = 0, 1
    for d = #x.shape, 1, -1 do
      local i = idx[d + (r - #x.shape)]
      if x.shape[d] == 1 then i = 0 end
      off = off + i * stride
      stride = stride * x.shape[d]
    end
    return off
  end
  local total = 1
  for d = 1, r do total = total * shape[d] end
  local vals, idx = {}, {}
  for d = 1, r do idx[d] = 0 end
  for n = 1, total do
    vals[n] = f(a.values[offset(a, idx) + 1], b.values[offset(b, idx) + 1])
    for d = r, 1, -1 do
      idx[d] = idx[d] + 1
      if idx[d] < shape[d] then break end
      idx[d] = 0
    end
  end
  return shape, vals
end

-- TensorFlow's Mod truncates (cwise_op_mod.cc: std::fmod for floats, C's % for ints: the remainder takes the
-- dividend's sign); TensorFlow.js's mod is a floor mod (the divisor's sign), which is TensorFlow's FloorMod.
local function tf_mod(ref, _, c)
  local shape, vals = broadcast_binary(c.inputs[1], c.inputs[2], function(x, y)
    if ref.dtype == "int32" then return math.tointeger(math.fmod(x, y)) end
    return math.fmod(x, y)
  end)
  return with(ref, { shape = shape, values = vals })
end

-- An empty reduction's reference: TensorFlow's identity where TensorFlow.js wrote NaN.
local function empty_reduce(ref, identity)
  local vals = {}
  for i, v in ipairs(ref.values) do vals[i] = (v ~= v or v == "NaN") and identity or v end
  return with(ref, { values = vals })
end

-- TensorFlow's MatrixBandPart: x[..., m, n] kept where (lower < 0 or m - n <= lower) and (upper < 0 or n - m <= upper)
-- (matrix_band_part_op.cc); TensorFlow.js's bandPart swaps the two bounds.
local function tf_band_part(ref, _, c)
  local x, lower, upper = c.inputs[1], c.inputs[2].values[1], c.inputs[3].values[1]
  local rows, cols = x.shape[#x.shape - 1], x.shape[#x.shape]
  local vals = {}
  for i, v in ipairs(x.values) do
    local m, n = ((i - 1) // cols) % rows, (i - 1) % cols
    local keep = (lower < 0 or m - n <= lower) and (upper < 0 or n - m <= upper)
    vals[i] = keep and v or 0
  end
  return with(ref, { shape = x.shape, dtype = x.dtype, values = vals })
end

-- An exclusive scan along the last axis of a matrix (TensorFlow's Cumsum/Cumprod, scan_ops.cc); TensorFlow.js
-- returns a shapeless result for axis -1.
local function exclusive_rows(op)
  return function(ref, _, c)
    local x = c.inputs[1]
    local cols, vals = x.shape[#x.shape], {}
    for i, v in ipairs(x.values) do
      local first = (i - 1) % cols == 0
      vals[i] = first and (op == "sum" and 0 or 1) or (op == "sum" and vals[i - 1] + x.values[i - 1] or vals[i - 1] * x.values[i - 1])
    end
    return with(ref, { shape = x.shape, values = vals })
  end
end

-- TensorFlow's LookupTableSizeV2 outputs int64 (lookup_ops.cc: Output("size: int64")); TensorFlow.js gives int32.
local function table_size_int64(ref, i)
  if i == 2 then return with(ref, { dtype = "int64" }) end
  return ref
end
local EXCEPTIONS = {
  ["HashTableV2/int32 keys: import, find, size"] = table_size_int64,
  ["HashTableV2/int32 keys, int32 values: import, missing keys get the default"] = table_size_int64,
  -- TensorFlow.js's string-keyed lookup flattens its result; TensorFlow's has the keys' shape ([2, 3]).
  ["HashTableV2/string keys, int32 values: a vocabulary"] = function(ref, i)
    if i == 1 then return with(ref, { shape = { 2, 3 } }) end
    return table_size_int64(ref, i)
  end,
  -- TensorFlow's LookupTableFindV2 keeps the keys' shape (lookup_table_op.cc: output_shape = key.shape() with the
  -- table's value_shape appended, [] for a HashTable); TensorFlow.js flattens it.
  ["HashTableV2/int32 keys: InitializeTableV2, find"] = function(ref) return with(ref, { shape = { 2, 2 } }) end,
  ["HashTable/v1: int32 keys: import, find, size"] = function(ref, i)
    if i == 1 then return with(ref, { shape = { 2, 2 } }) end
    return table_size_int64(ref, i)
  end,
  ["MatrixBandPart/float32 lower 1 upper 0"] = tf_band_part,
  ["MatrixBandPart/int32 lower -1 upper 1"] = tf_band_part,
  ["Cumsum/float32 axis -1 exclusive"] = exclusive_rows("sum"),
  ["Cumprod/float32 axis -1 exclusive"] = exclusive_rows("prod"),
  -- TensorFlow's All over an empty axis is true (Eigen's AndReducer starts from true); TensorFlow.js gives false.
  ["All/bool empty"] = function(ref)
    local vals = {}
    for i in ipairs(ref.values) do vals[i] = true end
    return with(ref, { values = vals })
  end,
  -- TensorFlow's Sign keeps NaN (Eigen's sign_impl for reals: isnan(a) ? a : (a > 0) - (a < 0));
  -- TensorFlow.js's sign gives 0 for it.
  ["Sign/float32 special values"] = function(ref, _, c)
    local vals = {}
    for i, x in ipairs(c.inputs[1].values) do
      x = tonumber(x) or (x == "NaN" and 0 / 0) or (x == "Infinity" and math.huge) or -math.huge
      vals[i] = x ~= x and 0 / 0 or x > 0 and 1 or x < 0 and -1 or 0
    end
    return with(ref, { values = vals })
  end,
  -- TensorFlow's DenseBincount with binary_output writes 1 where a bin is hit (bincount_op.cc: BincountFunctor's
  -- binary_output branch); TensorFlow.js's converter drops the attr and counts.
  ["DenseBincount/binary_output"] = function(ref)
    local vals = {}
    for i, v in ipairs(ref.values) do vals[i] = v > 0 and 1 or 0 end
    return with(ref, { values = vals })
  end,
  ["Mod/float32 [2,3] op [2,3]"] = tf_mod,
  ["Mod/float32 broadcast [2,3] op [3]"] = tf_mod,
  ["Mod/float32 broadcast [2,1] op [1,3]"] = tf_mod,
  ["Mod/float32 scalar op [4]"] = tf_mod,
  ["Mod/float32 empty [0,3] op [3]"] = tf_mod,
  ["Mod/float32 negative divisors"] = tf_mod,
  ["Mod/int32 signs"] = tf_mod,
  -- TensorFlow's Div on integers truncates (cwise_op_div.cc: functor::safe_div, C's /); TensorFlow.js's div floors
  -- int32 quotients (it calls floorDiv).
  ["Div/int32 signs"] = function(ref, _, c)
    local shape, vals = broadcast_binary(c.inputs[1], c.inputs[2], function(x, y)
      local q = x / y
      return math.tointeger(q < 0 and math.ceil(q) or math.floor(q))
    end)
    return with(ref, { shape = shape, values = vals })
  end,
  -- TensorFlow.js's batchMatMul pairs the batches of a [2,1,2,3] and a [3,3,2] wrongly (its output 5 is 7.046875;
  -- A[1,0] @ B[0] is -12.64453125). TensorFlow broadcasts the batch dims as numpy does (MatMulBCast).
  ["BatchMatMulV2/float32 broadcast batch"] = function(ref, _, c)
    local shape, vals = batch_matmul(c.inputs[1], c.inputs[2])
    return with(ref, { shape = shape, values = vals })
  end,
  -- TensorFlow.js's floorDiv casts its result to int32 for any input; TensorFlow's FloorDiv on floats is
  -- floor(x / y) in the input's dtype (cwise_op_floor_div.cc: BinaryOp<functor::floor_div_real>).
  ["FloorDiv/float32 [2,3] op [2,3]"] = float_floor_div,
  ["FloorDiv/float32 broadcast [2,3] op [3]"] = float_floor_div,
  ["FloorDiv/float32 broadcast [2,1] op [1,3]"] = float_floor_div,
  ["FloorDiv/float32 scalar op [4]"] = float_floor_div,
  ["FloorDiv/float32 empty [0,3] op [3]"] = float_floor_div,
  ["FloorDiv/float32 negative divisors"] = float_floor_div,
  -- TensorFlow.js's mean divides in float32 for int32 input; TensorFlow's Mean keeps the dtype, an integer
  -- division of the sum (Eigen's MeanReducer), rounding toward zero.
  ["Mean/int32 axis 0"] = function(ref)
    local vals = {}
    for i, v in ipairs(ref.values) do vals[i] = v < 0 and math.ceil(v) or math.floor(v) end
    return with(ref, { dtype = "int32", values = vals })
  end,
  -- TensorFlow.js gives NaN for max/min over an empty axis; TensorFlow's reducers start from their identity:
  -- -inf for Max, +inf for Min (Eigen MaxReducer/MinReducer, reduction_ops_max.cc).
  ["Max/float32 empty reduced"] = function(ref) return empty_reduce(ref, -math.huge) end,
  ["Max/float32 empty all axes"] = function(ref) return empty_reduce(ref, -math.huge) end,
  ["Min/float32 empty reduced"] = function(ref) return empty_reduce(ref, math.huge) end,
  ["Min/float32 empty all axes"] = function(ref) return empty_reduce(ref, math.huge) end,
  -- TensorFlow registers no CPU kernel for int32 RealDiv (cwise_op_div.cc: float types; int32 division is Div or
  -- TruncateDiv) nor for int32 Reciprocal (cwise_op_reciprocal.cc: float and complex types only).
  ["RealDiv/int32 signs"] = { refuses = "TensorFlow has no int32 RealDiv kernel on the CPU" },
  ["Reciprocal/int32 [6]"] = { refuses = "TensorFlow has no int32 Reciprocal kernel on the CPU" },
  -- Soft NMS (soft_nms_sigma > 0): TensorFlow never hard-suppresses (non_max_suppression_op.cc,
  -- DoNonMaxSuppressionOp: `!is_soft_nms && similarity > threshold`), it decays the scores by
  -- exp(-0.5 * iou^2 / sigma) and requeues; TensorFlow.js also drops boxes with iou >= iou_threshold, keeping 2 of
  -- the 5. TensorFlow's result, worked out by that algorithm: boxes 3, 0, 1, 4, 2, the last three decayed.
  ["NonMaxSuppressionV5/soft sigma 0.5"] = function(ref, i)
    if i == 1 then return with(ref, { shape = { 5 }, values = { 3, 0, 1, 4, 2 } }) end
    return with(ref, { shape = { 5 }, values = { 0.95, 0.9, 0.38400352, 0.25600235, 0.19697242 } })
  end,
  -- TensorFlow.js broadcasts a scalar to shape [0] as shape [1]; TensorFlow's BroadcastTo gives the shape asked for.
  ["BroadcastTo/bool scalar to [0]"] = function(ref) return with(ref, { shape = { 0 }, values = {} }) end,
  -- Convolution family: TensorFlow's CPU Conv3D takes no dilations above 1 (conv_ops_3d.cc,
  -- LaunchConvOp<CPUDevice>: "CPU implementation of Conv3D currently only supports dilated rates of 1.").
  -- TensorFlow.js's irfft gives a vector's inverse as a [1, n] matrix; TensorFlow's IRFFT keeps the input's rank.
  ["IRFFT/complex64 [5] to 8"] = function(ref) return with(ref, { shape = { 8 } }) end,
  ["Conv3D/float32 dilation 2"] = { refuses = "TensorFlow's CPU Conv3D kernel takes no dilations above 1" },
  -- ShapeN: TensorFlow's ShapeNOp gives out_type (int32 here); TensorFlow.js gives float32 vectors of the same values.
  ["ShapeN/two"] = function(ref) return with(ref, { dtype = "int32" }) end,
  ["ShapeN/int32 three, scalar and empty"] = function(ref) return with(ref, { dtype = "int32" }) end,
  -- ImageProjectiveTransformV3 with one transform row per image: TensorFlow's ProjectiveGenerator (image_ops.h)
  -- reads row b for image b; TensorFlow.js gives zeros for the second image. TensorFlow's values for it, by the
  -- bilinear formula: output (y, x) reads input (y/2, x/2) of [[2.625,-0.625,-1.1875],[-0.375,-0.875,1.9375],...].
  ["ImageProjectiveTransformV3/per-image transforms bilinear"] = function(ref)
    local v = {}
    for i = 1, 9 do v[i] = ref.values[i] end
    for i, x in ipairs({ 2.625, 1.0, -0.625, 1.125, 0.1875, -0.75, -0.375, -0.625, -0.875 }) do v[9 + i] = x end
    return with(ref, { values = v })
  end,
}

-- Cases where tfdev disagrees with TensorFlow (real findings, to fix in tfdev): "Op/case name" -> what is wrong.
-- Listed so the suite passes meanwhile; each still runs, and a listed case that starts passing fails the spec
-- (so that it leaves this table).
local KNOWN_FAILURES = {
}

local function listdir(path)
  local p = assert(io.popen('ls "' .. path .. '"'))
  local files = {}
  for f in p:lines() do if f:match("%.json$") then files[#files + 1] = f end end
  p:close()
  table.sort(files)
  return files
end

local function readfile(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

local SPECIALS = { NaN = 0 / 0, Infinity = math.huge, ["-Infinity"] = -math.huge }
local function value(v) if type(v) == "string" then return SPECIALS[v] end return v end

local function make_tensor(t)
  local data = {}
  if t.dtype == "string" then return tfdev.tensor { dtype = "string", shape = t.shape, data = t.values } end
  if t.dtype == "complex64" then -- the data's real and imaginary parts in turn; tfdev takes {re, im} pairs
    for i = 1, #t.values // 2 do data[i] = { value(t.values[2 * i - 1]), value(t.values[2 * i]) } end
    return tfdev.tensor { dtype = t.dtype, shape = t.shape, data = data }
  end
  for i, v in ipairs(t.values) do data[i] = value(v) end
  return tfdev.tensor { dtype = t.dtype, shape = t.shape, data = data }
end

local UNPACK = { float32 = "<f", float64 = "<d", int32 = "<i4", int64 = "<i8", bool = "B", uint8 = "B", complex64 = "<f" }
local function flat(t)
  if t.dtype == "string" then -- strings are elements of their own: walk the nested table
    local out = {}
    local function walk(v) if type(v) == "table" then for _, x in ipairs(v) do walk(x) end else out[#out + 1] = v end end
    walk(t:totable())
    return out
  end
  local fmt, bytes, out, pos = UNPACK[t.dtype], t:bytes(), {}, 1
  assert(fmt, "no reader for dtype " .. tostring(t.dtype))
  for i = 1, t:numel() * (t.dtype == "complex64" and 2 or 1) do
    out[i], pos = string.unpack(fmt, bytes, pos)
    if t.dtype == "bool" then out[i] = out[i] ~= 0 end
  end
  return out
end

local function shape_str(s) return "[" .. table.concat(s, ",") .. "]" end

-- nil when `got` matches `ref` ({dtype, shape, values}); else what differs.
local function compare(op, got, ref, tol)
  local want_dtype = ref.dtype
  if got.dtype ~= want_dtype and not (want_dtype == "int32" and got.dtype == "int64" and INT64_OUT[op]) then
    return ("dtype %s, want %s"):format(got.dtype, want_dtype)
  end
  if shape_str(got.shape) ~= shape_str(ref.shape) then
    return ("shape %s, want %s"):format(shape_str(got.shape), shape_str(ref.shape))
  end
  local vals = flat(got)
  for i, rv in ipairs(ref.values) do
    local r, g = ref.dtype == "string" and rv or value(rv), vals[i]
    local ok
    if ref.dtype == "float32" or ref.dtype == "complex64" then
      if r ~= r then ok = g ~= g
      elseif r == math.huge or r == -math.huge then ok = g == r
      else ok = math.abs(g - r) <= tol * math.max(1, math.abs(r)) end
    else
      ok = g == r
    end
    if not ok then
      return ("element %d: %s, want %s (shape %s)"):format(i, tostring(g), tostring(r), shape_str(ref.shape))
    end
  end
  return nil
end

local have = {}
for _, o in ipairs(tfdev.ops()) do have[o] = true end

-- The functional control flow has no kernel: the loaders inline the library and lower it to frames.
for _, op in ipairs { "If", "StatelessIf", "While", "StatelessWhile" } do have[op] = true end

local function missing_ops(graph, library)
  local miss = {}
  local function scan(nodes)
    for _, n in ipairs(nodes) do
      if not have[n.op] and not miss[n.op] then miss[#miss + 1] = n.op; miss[n.op] = true end
    end
  end
  scan(graph)
  for _, f in ipairs(library or {}) do scan(f.nodeDef or {}) end
  return miss
end

-- Runs one case; returns nil on a match, else a message.
local function run_case(c)
  local library = c.library and (', "library": {"function": ' .. json.encode(c.library) .. '}') or ""
  local text = '{"format": "graph-model", "modelTopology": {"node": ' .. json.encode(c.graph) .. library .. '}}'
  local gd = tfdev.graph_def.parse(text, { format = "tfjs" })
  local s <close> = tfdev.session { optimize_graph = false }
  local feeds = {}
  for _, t in ipairs(c.inputs) do
    if not t.const then feeds[t.name] = make_tensor(t) end
  end
  local fetches = {}
  for i, o in ipairs(c.outputs) do fetches[i] = o.name end
  local ex = EXCEPTIONS[c.op .. "/" .. c.name]
  if type(ex) == "table" then -- TensorFlow refuses the case: so must tfdev, at create or at run
    local ok = pcall(function() s:create(gd); s:run(feeds, fetches) end)
    if ok then return "ran, but " .. ex.refuses end
    return nil
  end
  s:create(gd)
  local outs = s:run(feeds, fetches)
  local problems = {}
  for i, o in ipairs(c.outputs) do
    local ref = ex and ex(o, i, c) or o
    local why = compare(c.op, outs[i], ref, TOL[c.op] or DEFAULT_TOL)
    if why then problems[#problems + 1] = o.name .. ": " .. why end
  end
  if #problems > 0 then return table.concat(problems, "; ") end
  return nil
end

local stats = { run = 0, passed = 0, known = 0, pending = {}, pending_n = 0 }

describe("conformance with TensorFlow.js #conformance", function()
  local files = listdir(dir)

  it("has data", function()
    assert.is_true(#files > 0, "no spec/conformance/*.json")
  end)

  it("computes TensorFlow's values for the exceptions as worked out by hand", function()
    local function case(a, b) return { inputs = { a, b } } end
    local i32 = { dtype = "int32" }
    local a = { shape = { 6 }, values = { 7, -7, 7, -7, 5, 0 } }
    local b = { shape = { 6 }, values = { 2, 2, -2, -2, 3, 4 } }
    assert.are.same({ 1, -1, 1, -1, 2, 0 }, EXCEPTIONS["Mod/int32 signs"](i32, 1, case(a, b)).values)
    assert.are.same({ 3, -3, -3, 3, 1, 0 }, EXCEPTIONS["Div/int32 signs"](i32, 1, case(a, b)).values)
    local m = tf_mod({ dtype = "float32" }, 1, case({ shape = { 2, 1 }, values = { 5.5, -5.5 } }, { shape = { 1, 3 }, values = { 2, -2, 5.5 } }))
    assert.are.same({ 2, 3 }, m.shape)
    assert.are.same({ 1.5, 1.5, 0, -1.5, -1.5, 0 }, m.values)
    -- [2,1,1,2] x [3,2,1]: batch [2,3], each a 1x1 product
    local shape, vals = batch_matmul({ shape = { 2, 1, 1, 2 }, values = { 1, 2, 3, 4 } },
      { shape = { 3, 2, 1 }, values = { 1, 0, 0, 1, 1, 1 } })
    assert.are.same({ 2, 3, 1, 1 }, shape)
    assert.are.same({ 1, 2, 3, 3, 4, 7 }, vals)
  end)

  local families = {}
  for _, file in ipairs(files) do
    local data = json.decode(readfile(dir .. "/" .. file))
    families[#families + 1] = data
    for _, c in ipairs(data.cases) do
      local miss = missing_ops(c.graph, c.library)
      if #miss > 0 then
        c.pending = true
        stats.pending_n = stats.pending_n + 1
        for _, op in ipairs(miss) do stats.pending[op] = (stats.pending[op] or 0) + 1 end
      end
    end
  end

  for _, data in ipairs(families) do
    describe(data.family, function()
      for _, c in ipairs(data.cases) do
        local key = c.op .. "/" .. c.name
        if not c.pending then
          it(key, function()
            stats.run = stats.run + 1
            local ok, why = pcall(run_case, c)
            if not ok then why = "error: " .. tostring(why) end
            if KNOWN_FAILURES[key] then
              assert.is_not_nil(why, key .. " is listed in KNOWN_FAILURES but now passes: remove it from the table")
              stats.known = stats.known + 1
              if os.getenv("TFDEV_CONFORMANCE_VERBOSE") then io.stderr:write("known failure: ", key, ": ", why, "\n") end
              return
            end
            assert.is_nil(why, key .. ": " .. tostring(why))
            stats.passed = stats.passed + 1
          end)
        end
      end
    end)
  end

  -- One pending entry per op tfdev lacks, with its case count.
  local names = {}
  for op in pairs(stats.pending) do names[#names + 1] = op end
  table.sort(names)
  for _, op in ipairs(names) do
    pending(("%s: %d case(s) wait for tfdev to have it"):format(op, stats.pending[op]))
  end

  teardown(function()
    local parts = {}
    for _, op in ipairs(names) do parts[#parts + 1] = op .. "=" .. stats.pending[op] end
    io.stderr:write(("\nconformance: %d cases run, %d passed, %d known failures, %d pending (%s)\n"):format(
      stats.run, stats.passed, stats.known, stats.pending_n, table.concat(parts, " ")))
  end)
end)
