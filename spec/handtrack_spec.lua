-- The handtrack detector (TF Object Detection API's SSD, from @vladmandic/human 3.3.6) against
-- TensorFlow.js 4.22's outputs: a while loop over the batch with TensorLists, NonMaxSuppressionV5
-- per class and Where. The model is third-party, so it is not in this repository: the spec looks for
-- it in $TFDEV_HANDTRACK_DIR, ../shared/models/handtrack or /tmp/refs/handtrack (files as
-- ../shared/models/README.md describes) and is pending when none has it.
local tfdev = require "tfdev"
local json = require "dkjson"
local h = require "spec.support.helpers"

local function flat(t, out)
  out = out or {}
  if type(t) ~= "table" then out[#out + 1] = t else for _, v in ipairs(t) do flat(v, out) end end
  return out
end

local source = (debug.getinfo(1, "S").source:match("^@(.*)/spec/[^/]*$") or ".")
local dir
for _, d in ipairs { os.getenv("TFDEV_HANDTRACK_DIR") or "", source .. "/../shared/models/handtrack",
  "/tmp/refs/handtrack" } do
  if d ~= "" and h.read_file(d .. "/reference.json") then
    dir = d
    break
  end
end

-- A reference output as the numbers TensorFlow.js computed. TensorFlow.js's CPU Cast from int32 to
-- float32 keeps the int32 buffer under the float32 label, so for the outputs that end in such a Cast
-- (the detection count and the raw indices) gen-reference.js wrote int32 bytes: an output whose
-- every non-zero value reads as a float32 subnormal is read as int32.
local function reference(o, bytes)
  local values = flat(tfdev.from_bytes(o.dtype, o.shape, bytes):totable())
  if o.dtype ~= "float32" then return values end
  local any = false
  for _, v in ipairs(values) do
    if v ~= 0 then
      if math.abs(v) >= 1.1754943508222875e-38 then return values end -- a normal float: real float32 data
      any = true
    end
  end
  return any and flat(tfdev.from_bytes("int32", o.shape, bytes):totable()) or values
end

describe("handtrack against TensorFlow.js's outputs", function()
  if not dir then
    pending("the model is not here: put handtrack.json, handtrack.bin and its reference files in " ..
      "$TFDEV_HANDTRACK_DIR, ../shared/models/handtrack or /tmp/refs/handtrack")
    return
  end

  it("every output within 1e-3 x max(1, max |reference|), on the pool and on the calling thread", function()
    local ref = json.decode(h.read_file(dir .. "/reference.json"))
    for _, threads in ipairs { 2, -1 } do
      local m <close> = tfdev.model(dir, { intra_op_threads = 1, inter_op_threads = threads })
      local feeds, fetches = h.reference_feeds(ref, dir .. "/")
      for _ = 1, 2 do -- a second step of the same executors sees nothing of the first
        local outs = m.session:run(feeds, fetches)
        for i, o in ipairs(ref.outputs) do
          assert.are.same(o.shape, outs[i].shape)
          local want, got = reference(o, h.read_file(dir .. "/output_" .. (i - 1) .. ".bin")), flat(outs[i]:totable())
          local bound, worst = 1e-3 * math.max(1, o.max_abs), 0
          for k = 1, #want do worst = math.max(worst, math.abs(want[k] - got[k])) end
          assert(worst <= bound, string.format("%s: max |tfdev - ref| = %g > %g", o.name, worst, bound))
        end
      end
    end
  end)
end)
