-- The scripts the README tells a new user to run, run as a new user would: with the backends this
-- build loads (the CUDA module, when it was built) and without any.
local exe = os.getenv("TFDEV_EXE")
local root = os.getenv("TFDEV_SOURCE_DIR") or "."

local function run(cmd)
  local p = assert(io.popen("cd '" .. root .. "' && " .. cmd .. " 2>&1"))
  local out = p:read("a")
  local _, _, code = p:close()
  return out, code
end

describe("the README's scripts", function()
  for _, env in ipairs { "", "TFDEV_BACKENDS=none " } do
    it("tfdev scripts/devices.lua runs " .. (env == "" and "with the default backends" or "without backends"), function()
      if not exe then return pending("TFDEV_EXE is not set") end
      local out, code = run(env .. exe .. " scripts/devices.lua")
      assert.are.equal(0, code, out)
      assert.matches("GetFactory%('CPU'%) is now: DemoCPUFactory", out)
      assert.matches("4 devices: 2 CPU, 2 SIM", out, 1, true)
    end)
  end

  it("tfdev scripts/demo.lua runs", function()
    if not exe then return pending("TFDEV_EXE is not set") end
    local out, code = run(exe .. " scripts/demo.lua")
    assert.are.equal(0, code, out)
    assert.matches("wrote tfdev%-timeline%.json", out)
  end)

  it("tfdev scripts/model.lua runs on the shared blazeface model", function()
    if not exe then return pending("TFDEV_EXE is not set") end
    local f = io.open(root .. "/../shared/models/blazeface/blazeface.json", "r")
    if not f then return pending("../shared/models is not in this checkout") end
    f:close()
    local out, code = run(exe .. " scripts/model.lua")
    assert.are.equal(0, code, out)
    assert.matches("output ", out)
    assert.matches("timeline: tfdev%-model%-timeline%.json", out)
  end)
end)

describe("scripts/model.lua against a reference beside the model", function()
  local tfdev = require "tfdev"
  it("says which outputs match reference.json and output_K.bin, and exits 1 when one differs", function()
    if not exe then return pending("TFDEV_EXE is not set") end
    local dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir -p '" .. dir .. "' && cp '" .. root .. "'/spec/oom/tiny/model.json '" .. root ..
      "'/spec/oom/tiny/*.bin '" .. dir .. "'"))
    local function write(name, bytes)
      local f = assert(io.open(dir .. "/" .. name, "wb"))
      f:write(bytes)
      f:close()
    end
    -- the reference: what the model computes for the script's own input pattern, as the script feeds it
    local parts, seed = {}, 12345
    for i = 1, 36 do
      seed = (seed * 1103515245 + 12345) % 2147483648
      parts[i] = string.pack("<f", (seed % 1000) / 1000)
    end
    local m <close> = tfdev.model(dir .. "/model.json")
    local want = m:run { x = tfdev.from_bytes("float32", { 1, 6, 6, 1 }, table.concat(parts)) }[1]
    write("reference.json", tfdev.json.encode { inputs = { { name = "x", dtype = "float32", shape = { 1, 6, 6, 1 } } },
      outputs = { { name = "probs", dtype = "float32", shape = { 1, 3 }, max_abs = 1 } } })
    write("output_0.bin", want:bytes())
    local out, code = run(exe .. " scripts/model.lua '" .. dir .. "/model.json'")
    assert.are.equal(0, code, out)
    assert.matches("output probs +float32 1x3 .* matches reference %(max diff 0, bound 0%.001%)", out)
    assert.matches("reference: 1 of 1 outputs match", out)
    local p = { string.unpack("<fff", want:bytes()) }
    write("output_0.bin", string.pack("<fff", p[1] + 0.01, p[2], p[3]))
    out, code = run(exe .. " scripts/model.lua '" .. dir .. "/model.json'")
    assert.are.equal(1, code, out)
    assert.matches("DIFFERS from reference %(max diff 0%.01", out)
    assert.matches("reference: 0 of 1 outputs match", out)
    os.execute("rm -rf '" .. dir .. "'")
  end)

  it("feeds and checks the values a layers model's reference.json holds, every input and output", function()
    if not exe then return pending("TFDEV_EXE is not set") end
    local out, code = run(exe .. " scripts/model.lua spec/layers/masks")
    assert.are.equal(0, code, out)
    assert.matches("input ids: int32 2x6", out)
    assert.matches("input feats: float32 2x5x2", out)
    assert.matches("reference: 3 of 3 outputs match", out)
  end)

  it("tfdev.json decodes what it encodes and what TensorFlow.js writes", function()
    local v = { a = { 1, 2.5, -3e2 }, b = "x\"y\n\\u00e9", c = { d = true, e = false }, f = {} }
    assert.are.same(v, tfdev.json.decode(tfdev.json.encode(v)))
    assert.are.same({ name = "é", n = { 1, { } } }, tfdev.json.decode(' { "name" : "\\u00e9", "n": [1, {}], "z": null } '))
    assert.has_error(function() tfdev.json.decode('{"a": 1') end, "JSON: expected ',' or '}' at byte 8")
    assert.has_error(function() tfdev.json.decode('[1] x') end, "JSON: trailing text at byte 5")
    assert.has_error(function() tfdev.json.decode('{"a": nope}') end, "JSON: unexpected 'n' at byte 7")
  end)
end)
