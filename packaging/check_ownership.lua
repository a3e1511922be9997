-- Checks tfdev.h's ownership rule (ctest build.ownership_comments): every public declaration that
-- returns a pointer says who owns what it returns. The comment that documents a declaration is the
-- block of comment lines right above it (a group of declarations may share one, up to a blank line),
-- or a comment on its own line; it must say it in one of the words below ("caller frees", "borrowed",
-- "a new reference", "owned by", "valid until", "static", ...).
--   tfdev packaging/check_ownership.lua SOURCE_DIR
local src = arg[1] or "."

local words = { "free", "frees", "freed", "borrowed", "own", "owns", "owned", "owner", "reference", "references",
  "release", "releases", "released", "valid", "static", "unref", "kept", "copy", "copied", "lives" }

local util = dofile((arg[0]:match("^(.*)/") or ".") .. "/script_util.lua")
local lines_of = util.file_lines

local headers = util.command_lines("ls " .. src .. "/include/tfdev/*.h")

local missing = {}
for _, h in ipairs(headers) do
  local L = lines_of(h)
  for i, line in ipairs(L) do
    local name = line:match("^TFD_API%s+[%w_%s]-%*%s*([%w_]+)%s*%(")
    if name then
      -- the declaration's own trailing comment, then the comment lines and declarations above it up
      -- to a blank line: the group it belongs to
      local text = line:match("/%*.*$") or ""
      local j = i - 1
      while j >= 1 and L[j]:match("%S") do
        text = L[j] .. "\n" .. text
        j = j - 1
      end
      local said = false
      local lower = text:lower()
      for _, w in ipairs(words) do
        if lower:find("%f[%a_]" .. w .. "%f[^%a_]") then said = true break end
      end
      if not said then missing[#missing + 1] = ("%s:%d: %s"):format(h:gsub("^.*/include/", "include/"), i, name) end
    end
  end
end
if #missing > 0 then
  print(("%d pointer-returning declarations do not say who owns the result:"):format(#missing))
  for _, m in ipairs(missing) do print("  " .. m) end
  os.exit(1)
end
print("every pointer-returning declaration in include/tfdev says who owns the result")
