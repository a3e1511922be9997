-- The README's Lua examples run as written: each ```lua block is a script, run by the tfdev
-- executable in a directory of its own (so files it writes go nowhere else), and must exit 0. A
-- block that is a spec (it calls describe) runs under busted with tfdev as its Lua, as the README
-- tells users to run theirs.
local exe = os.getenv("TFDEV_EXE")
local root = os.getenv("TFDEV_SOURCE_DIR") or "."

local function blocks(text)
  local out, line_no, current, start = {}, 0, nil, 0
  for line in (text .. "\n"):gmatch("(.-)\n") do
    line_no = line_no + 1
    if current then
      if line:match("^```%s*$") then
        out[#out + 1] = { code = table.concat(current, "\n") .. "\n", line = start }
        current = nil
      else
        current[#current + 1] = line
      end
    elseif line:match("^```lua%s*$") then
      current, start = {}, line_no
    end
  end
  return out
end

local function run_block(code)
  local dir = os.tmpname()
  os.remove(dir)
  assert(os.execute("mkdir -p " .. dir))
  local spec = code:find("describe%(") ~= nil
  local file = spec and "block_spec.lua" or "block.lua"
  local f = assert(io.open(dir .. "/" .. file, "w"))
  f:write(code)
  f:close()
  local cmd = spec and ("busted --lua=" .. exe .. " " .. file) or (exe .. " " .. file)
  local p = assert(io.popen("cd " .. dir .. " && " .. cmd .. " 2>&1"))
  local output = p:read("a")
  local ok, _, status = p:close()
  os.execute("rm -rf " .. dir)
  return ok and status == 0, output
end

describe("the README's Lua examples", function()
  local f = assert(io.open(root .. "/README.md"))
  local text = f:read("a")
  f:close()
  local found = blocks(text)

  it("are there", function() assert.is_true(#found >= 2) end)

  for _, b in ipairs(found) do
    it("run as written (the block at README.md:" .. b.line .. ")", function()
      if not exe then return pending("TFDEV_EXE is not set") end
      local ok, output = run_block(b.code)
      assert(ok, "README.md:" .. b.line .. " failed:\n" .. output)
    end)
  end
end)
