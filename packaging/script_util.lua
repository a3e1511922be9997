-- What the packaging scripts (check_*.lua and gen_c_api.lua, which ctest runs with the tfdev
-- executable) share: reading and writing whole files, the lines of a file or of a command's output,
-- a command's combined output, the fenced blocks of a Markdown file, shell quoting. A script loads it from its own directory:
--   local util = dofile((arg[0]:match("^(.*)/") or ".") .. "/script_util.lua")
local util = {}

-- A file's whole text (raises when it cannot be read).
function util.read(path)
  local f = assert(io.open(path))
  local text = f:read("a")
  f:close()
  return text
end

function util.write(path, text)
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
end

-- A file's lines, as a list.
function util.file_lines(path)
  local out = {}
  for line in io.lines(path) do out[#out + 1] = line end
  return out
end

-- The lines a shell command prints on stdout, as a list.
function util.command_lines(cmd)
  local out, p = {}, assert(io.popen(cmd))
  for line in p:lines() do out[#out + 1] = line end
  p:close()
  return out
end

-- Whether a shell command succeeded, and what it printed on stdout and stderr.
function util.sh(cmd)
  local p = assert(io.popen(cmd .. " 2>&1"))
  local out = p:read("a")
  local ok = p:close()
  return ok, out
end

-- The fenced blocks of a Markdown file whose opening line is one of `fences` (a set, e.g. {["```c"] =
-- true}): {line = (the opening fence's), body = {lines}, text = (the body, each line ended), above =
-- (the line before the fence: where a block's marks go, as HTML comments)}.
function util.markdown_blocks(path, fences)
  local out, lines = {}, util.file_lines(path)
  local i = 1
  while i <= #lines do
    if fences[lines[i]] then
      local b = { line = i, body = {}, above = lines[i - 1] or "" }
      i = i + 1
      while i <= #lines and lines[i] ~= "```" do
        b.body[#b.body + 1] = lines[i]
        i = i + 1
      end
      b.text = table.concat(b.body, "\n") .. "\n"
      out[#out + 1] = b
    end
    i = i + 1
  end
  return out
end

-- s quoted for the shell.
function util.quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

return util
