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
