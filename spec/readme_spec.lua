-- The Lua examples of the README and of docs/ run as written: each ```lua block is a script, run by
-- the tfdev executable in a directory of its own (so files it writes go nowhere else) that sees the
-- repository's spec/ (the README's quick start loads spec/oom/tiny from the clone's root), and must
-- exit 0. A block that is a spec (it calls describe) runs under busted with tfdev as its Lua, as the
-- manual tells users to run theirs.
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

-- Each print records the line that called it, so that a `--> expected` comment can be checked
-- against what that line printed. One line, so the block's line numbers stay its own.
local PRELUDE = "local tostring_, write_ = tostring, io.stdout.write; print = function(...) local t = {} " ..
  "for i = 1, select('#', ...) do t[i] = tostring_((select(i, ...))) end " ..
  "local line = debug.getinfo(2, 'l').currentline " ..
  "write_(io.stdout, '\\1', line, '\\2', (table.concat(t, '\\t'):gsub('\\n', '\\3')), '\\n') end; "

local function normalize(s) return (s:gsub("[%s\3]+", " "):gsub("^ ", ""):gsub(" $", "")) end

--- The `--> expected` comments of code: {line, text}.
local function expectations(code)
  local out, n = {}, 0
  for line in (code .. "\n"):gmatch("(.-)\n") do
    n = n + 1
    local e = line:match("%-%->%s*(.-)%s*$")
    if e and line:find("print%(") then out[#out + 1] = { line = n, text = e } end
  end
  return out
end

--- Whether printed matches expected: expected without a trailing "  (note)", its "..." standing for
--- anything, read from the start of what was printed (whitespace compared loosely).
local function matches(expected, printed)
  expected = normalize(expected:gsub("%s%s+%(.*$", ""))
  printed = normalize(printed)
  local pieces, from = {}, 1
  repeat
    local s, e = expected:find("...", from, true)
    pieces[#pieces + 1] = normalize(expected:sub(from, s and s - 1 or #expected))
    from = e and e + 1
  until not s
  local at = 1
  for i, piece in ipairs(pieces) do
    if piece ~= "" then
      local s, e = printed:find(piece, at, true)
      if not s or (i == 1 and s ~= 1) then return false end
      at = e + 1
    end
  end
  return pieces[#pieces] == "" or at > #printed
end

local function run_block(code)
  local dir = os.tmpname()
  os.remove(dir)
  assert(os.execute("mkdir -p " .. dir))
  assert(os.execute("ln -s '" .. root .. "/spec' " .. dir .. "/spec"))
  local spec = code:find("describe%(") ~= nil
  local file = spec and "block_spec.lua" or "block.lua"
  local f = assert(io.open(dir .. "/" .. file, "w"))
  f:write(spec and code or PRELUDE .. code)
  f:close()
  local cmd = spec and ("busted --lua=" .. exe .. " " .. file) or (exe .. " " .. file)
  local p = assert(io.popen("cd " .. dir .. " && " .. cmd .. " 2>&1"))
  local output = p:read("a")
  local ok, _, status = p:close()
  os.execute("rm -rf " .. dir)
  return ok and status == 0, output
end

local documents = { "README.md" }
do
  local p = assert(io.popen("ls '" .. root .. "/docs'"))
  for name in p:lines() do
    if name:match("%.md$") then documents[#documents + 1] = "docs/" .. name end
  end
  p:close()
end

describe("the Lua examples of the README and docs/", function()
  local total = 0
  for _, doc in ipairs(documents) do
    local f = assert(io.open(root .. "/" .. doc))
    local text = f:read("a")
    f:close()
    local found = blocks(text)
    total = total + #found
    for _, b in ipairs(found) do
      it("run as written (the block at " .. doc .. ":" .. b.line .. ")", function()
        if not exe then return pending("TFDEV_EXE is not set") end
        local ok, output = run_block(b.code)
        assert(ok, doc .. ":" .. b.line .. " failed:\n" .. output)
        local printed = {}
        for line, text in output:gmatch("\1(%d+)\2([^\n]*)") do
          line = tonumber(line)
          printed[line] = printed[line] or text
        end
        for _, e in ipairs(expectations(b.code)) do
          local where = doc .. ":" .. (b.line + e.line)
          local got = printed[e.line]
          assert(got, where .. ": printed nothing (expected " .. e.text .. ")")
          assert(matches(e.text, got), where .. ": printed " .. normalize(got) .. "\nexpected " .. e.text)
        end
      end)
    end
  end

  it("are there: the README's quick start and the manual's tour", function()
    assert.is_true(total >= 12, "blocks found: " .. total)
  end)
end)
