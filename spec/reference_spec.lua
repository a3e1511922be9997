-- The reference (docs/reference.md) tells the truth: its op list is the registry's (tfdev.ops()), and
-- every session option it documents is one tfdev.session accepts.
local tfdev = require "tfdev"

local function section()
  local f = assert(io.open((os.getenv("TFDEV_SOURCE_DIR") or ".") .. "/docs/reference.md"))
  local text = f:read("a")
  f:close()
  return text
end

describe("docs/reference.md", function()
  local text = section()

  it("lists exactly the ops a graph may hold", function()
    local ops_par = assert(text:match("%*%*Ops%*%*.-\n\n(.-)\n\n"))
    local listed = {}
    for name in ops_par:gmatch("`([%w_]+)`") do listed[#listed + 1] = name end
    table.sort(listed)
    assert.are.same(tfdev.ops(), listed)
  end)

  it("documents session options tfdev.session accepts", function()
    local rows = 0
    for key in text:gmatch("\n| `([%w_]+)") do
      rows = rows + 1
      local ok, err = pcall(tfdev.session, { [key] = {} })
      -- a documented key is known: a wrong value is refused for its type, never as unknown
      assert(ok or not tostring(err):find("unknown", 1, true), key .. ": " .. tostring(err))
    end
    assert.is_true(rows >= 12)
  end)
end)

describe("the README's C model example", function()
  it("is examples/run_model.c, the file the suite builds and runs", function()
    local root = os.getenv("TFDEV_SOURCE_DIR") or "."
    local readme = assert(io.open(root .. "/README.md")):read("a")
    local file = assert(io.open(root .. "/examples/run_model.c")):read("a")
    local block = readme:match("```c\n(/%* run_model: .-)```")
    assert.is_string(block, "no run_model block in the README")
    assert.are.equal(file, block)
  end)
end)
