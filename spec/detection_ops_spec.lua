-- Object-detection ops: NonMaxSuppressionV3/V4/V5 and Where, against values numpy computed
-- independently (spec/support/gen_detection_cases.py writes spec/support/detection_cases.lua), and
-- TensorFlow's checks and error texts.
local tfdev = require "tfdev"
local h = require "spec.support.helpers"
local cases = dofile("spec/support/detection_cases.lua")

local function flat(t, out)
  out = out or {}
  if type(t) ~= "table" then out[#out + 1] = t else for _, v in ipairs(t) do flat(v, out) end end
  return out
end

-- NonMaxSuppressionV<version> over Consts; returns the outputs' tensors.
local function nms(version, c, extra)
  local f = function(v) return tfdev.tensor(v, "float32") end
  local inputs = { f(c.boxes), f(c.scores), tfdev.tensor(c.max_output_size, "int32"), f(c.iou_threshold) }
  if version >= 3 then inputs[5] = f(c.score_threshold or -math.huge) end
  if version == 5 then inputs[6] = f(c.soft_nms_sigma or 0) end
  local fetches = { "y:0" }
  if version == 4 then fetches[2] = "y:1" end
  if version == 5 then fetches = { "y:0", "y:1", "y:2" } end
  local attrs = {}
  if version >= 4 then attrs.pad_to_max_output_size = c.pad end
  for k, v in pairs(extra or {}) do attrs[k] = v end
  return h.run_node("NonMaxSuppressionV" .. version, inputs, attrs, fetches)
end

describe("NonMaxSuppressionV5", function()
  for _, c in ipairs(cases.nms) do
    it(c.name, function()
      local out = nms(5, c)
      assert.are.same(c.indices, flat(out[1]:totable()))
      assert.are.equal("int32", out[1].dtype)
      local got = flat(out[2]:totable())
      assert.are.equal(#c.selected_scores, #got)
      for i, want in ipairs(c.selected_scores) do
        assert(math.abs(want - got[i]) <= 1e-6, string.format("score %d: %g vs %g", i, want, got[i]))
      end
      assert.are.equal(c.valid, out[3]:item())
      assert.are.same({}, out[3].shape)
    end)
  end

  it("computes float16 in float32 and rounds the scores back", function()
    local c = cases.nms[1]
    local f16 = function(v) return tfdev.tensor(v, "float16") end
    local out = h.run_node("NonMaxSuppressionV5", { f16(c.boxes), f16(c.scores), tfdev.tensor(3, "int32"),
      f16(0.5), f16(0), f16(0) }, {}, { "y:0", "y:1", "y:2" })
    assert.are.same({ 3, 0, 5 }, out[1]:totable())
    assert.are.equal("float16", out[2].dtype)
  end)

  it("refuses bad shapes and values with TensorFlow's texts, naming the node", function()
    local c = cases.nms[1]
    local f = function(v) return tfdev.tensor(v, "float32") end
    local function run(boxes, scores, max, iou, score, sigma)
      return h.run_node("NonMaxSuppressionV5", { boxes, scores, max, iou, score, sigma }, {}, { "y:0" })
    end
    local max3, half, zero = tfdev.tensor(3, "int32"), f(0.5), f(0)
    h.raises("INVALID_ARGUMENT", "node 'y' (NonMaxSuppressionV5): iou_threshold must be in [0, 1]", run,
      f(c.boxes), f(c.scores), max3, f(1.5), zero, zero)
    h.raises("INVALID_ARGUMENT", "soft_nms_sigma_val must be >= 0", run, f(c.boxes), f(c.scores), max3, half, zero, f(-1))
    h.raises("INVALID_ARGUMENT", "output size must be non-negative", run, f(c.boxes), f(c.scores),
      tfdev.tensor(-1, "int32"), half, zero, zero)
    -- Shapes the graph check can see are refused when the session is created.
    h.raises("INVALID_ARGUMENT", "boxes must have 4 columns (Dimension must be 4 but is 3)", run,
      f({ { 0, 0, 1 } }), f({ 1 }), max3, half, zero, zero)
    h.raises("INVALID_ARGUMENT", "scores has incompatible shape (Dimensions must be equal, but are 6 and 2)", run,
      f(c.boxes), f({ 1, 2 }), max3, half, zero, zero)
    h.raises("INVALID_ARGUMENT", "max_output_size (input 2) must have rank 0, got rank 1", run,
      f(c.boxes), f(c.scores), tfdev.tensor({ 3 }, "int32"), half, zero, zero)
    h.raises("INVALID_ARGUMENT", "boxes must be 2-D", run, f({ 0, 0, 1, 1 }), f({ 1 }), max3, half, zero, zero)
  end)

  it("checks shapes a graph only knows when it runs", function()
    local s <close> = tfdev.session()
    s:create { node = {
      { name = "boxes", op = "Placeholder", attr = { dtype = "float32" } },
      { name = "scores", op = "Placeholder", attr = { dtype = "float32" } },
      { name = "max", op = "Const", attr = { value = tfdev.tensor(2, "int32") } },
      { name = "t", op = "Const", attr = { value = tfdev.tensor(0.5, "float32") } },
      { name = "z", op = "Const", attr = { value = tfdev.tensor(0, "float32") } },
      { name = "nms", op = "NonMaxSuppressionV5", input = { "boxes", "scores", "max", "t", "z", "z" } },
    } }
    h.raises("INVALID_ARGUMENT", "node 'nms' (NonMaxSuppressionV5): boxes must have 4 columns", s.run, s,
      { boxes = { { 0, 0, 1, 1, 1 } }, scores = { 1 } }, "nms")
    h.raises("INVALID_ARGUMENT", "scores must be 1-D", s.run, s, { boxes = { { 0, 0, 1, 1 } }, scores = { { 1 } } }, "nms")
    h.raises("INVALID_ARGUMENT", "scores has incompatible shape", s.run, s, { boxes = { { 0, 0, 1, 1 } }, scores = { 1, 2 } }, "nms")
    -- No boxes at all: nothing selected.
    local idx, n = table.unpack(s:run({ boxes = tfdev.tensor { dtype = "float32", shape = { 0, 4 } },
      scores = tfdev.tensor { dtype = "float32", shape = { 0 } } }, { "nms:0", "nms:2" }))
    assert.are.same({ 0 }, idx.shape)
    assert.are.equal(0, n:item())
  end)
end)

describe("NonMaxSuppressionV3 and V4", function()
  for _, c in ipairs(cases.nms) do
    if not c.soft_nms_sigma then
      it(c.name, function()
        local v3 = nms(3, c)
        local want = {}
        for i = 1, c.valid do want[i] = c.indices[i] end
        assert.are.same(want, flat(v3[1]:totable()))
        local v4 = nms(4, c)
        assert.are.same(c.indices, flat(v4[1]:totable()))
        assert.are.equal(c.valid, v4[2]:item())
      end)
    end
  end

  it("V2 has no score threshold", function()
    local c = cases.nms[1]
    local out = h.run_node("NonMaxSuppressionV2", { tfdev.tensor(c.boxes, "float32"), tfdev.tensor(c.scores, "float32"),
      tfdev.tensor(3, "int32"), tfdev.tensor(0.5, "float32") }, {}, { "y" })
    assert.are.same({ 3, 0, 5 }, out[1]:totable())
  end)

  it("infers a padded output's length from a constant max_output_size", function()
    local g = tfdev.graph()
    local b, s = g:placeholder("float32", { -1, 4 }), g:placeholder("float32", { -1 })
    local out = g:op("NonMaxSuppressionV4", { b, s, g:const(7, { dtype = "int32" }), g:const(0.5), g:const(0.0) },
      { pad_to_max_output_size = true })
    assert.are.same({ 7 }, out.shape)
    local valid = g:output(out.node, 1)
    assert.are.equal("int32", valid.dtype)
    assert.are.same({}, valid.shape)
  end)
end)

describe("Where", function()
  for _, c in ipairs(cases.where) do
    it(c.name .. " (" .. c.dtype .. ")", function()
      local x = #c.values == 0 and tfdev.tensor { dtype = c.dtype, shape = c.shape }
        or tfdev.tensor { dtype = c.dtype, shape = c.shape, data = c.values }
      local out = h.run_node("Where", { x })[1]
      assert.are.equal("int64", out.dtype)
      assert.are.same({ #c.expected, #c.shape }, out.shape)
      assert.are.same(flat(c.expected), flat(out:totable()))
    end)
  end

  it("is typed int64 [?, rank] before it runs, and takes uint8 and float16", function()
    local g = tfdev.graph()
    local w = g:op("Where", { g:placeholder("float32", { 2, 3 }) })
    assert.are.equal("int64", w.dtype)
    assert.are.same({ -1, 2 }, w.shape)
    local out = h.run_node("Where", { tfdev.tensor({ 0, 2, 0, 1 }, "uint8") })[1]
    assert.are.same({ { 1 }, { 3 } }, out:totable())
    out = h.run_node("Where", { tfdev.tensor({ 0, -0.0, 0.5 }, "float16") })[1]
    assert.are.same({ { 2 } }, out:totable())
  end)
end)
