-- Writes docs/c-api.md, the C API reference, from the comments of include/tfdev/*.h: each header's
-- opening comment, then every TFD_API declaration with the comment above it (a comment shared by a
-- group of declarations is shown once, before the group). The headers are the source; ctest
-- docs.c_api_current fails when docs/c-api.md is not what this script writes from them.
--   tfdev packaging/gen_c_api.lua SOURCE_DIR [OUT]      (OUT: default SOURCE_DIR/docs/c-api.md)
local src = arg[1] or "."
local out_path = arg[2] or (src .. "/docs/c-api.md")

local util = dofile((arg[0]:match("^(.*)/") or ".") .. "/script_util.lua")
local lines_of = util.file_lines

-- The text of a C comment's lines, without the comment markers.
local function comment_text(lines)
  local text = {}
  for _, l in ipairs(lines) do
    l = l:gsub("^%s*/%*+%s?", ""):gsub("%s*%*+/%s*$", ""):gsub("^%s*%*%s?", "")
    text[#text + 1] = l
  end
  return (table.concat(text, "\n"):gsub("^%s+", ""):gsub("%s+$", ""))
end

local headers = util.command_lines("ls " .. src .. "/include/tfdev/*.h")
table.sort(headers, function(a, b)
  -- tfdev.h, the one a host includes, first
  local ta, tb = a:match("/tfdev%.h$") ~= nil, b:match("/tfdev%.h$") ~= nil
  if ta ~= tb then return ta end
  return a < b
end)

local doc = {
  "# The C API",
  "",
  "Generated from the comments of `include/tfdev/*.h` by `packaging/gen_c_api.lua` (ctest",
  "`docs.c_api_current` checks it is current): edit the headers, then run",
  "`build/bin/tfdev packaging/gen_c_api.lua .`. The conventions every header follows are at the top of",
  "`tfdev.h`, below.",
  "",
}

for _, h in ipairs(headers) do
  local name = h:match("include/(tfdev/.+)$")
  local L = lines_of(h)
  doc[#doc + 1] = "## `<" .. name .. ">`"
  doc[#doc + 1] = ""
  -- the opening comment
  local i = 1
  if L[1] and L[1]:match("^/%*") then
    local c = {}
    while i <= #L do
      c[#c + 1] = L[i]
      if L[i]:find("%*/") then break end
      i = i + 1
    end
    doc[#doc + 1] = comment_text(c)
    doc[#doc + 1] = ""
    i = i + 1
  end
  local pending = {} -- comment lines above the next declaration
  local shown = nil -- the comment already printed for the group in progress
  local decls = 0
  while i <= #L do
    local l = L[i]
    if l:match("^%s*/%*") and not l:match("^TFD_API") then
      local c = { l }
      while not L[i]:find("%*/") and i < #L do
        i = i + 1
        c[#c + 1] = L[i]
      end
      pending = c
    elseif l:match("^TFD_API") then
      local d = { l }
      while not L[i]:find(";") and i < #L do
        i = i + 1
        d[#d + 1] = L[i]
      end
      local decl = table.concat(d, "\n"):gsub("TFD_API%s+", "")
      local fname = decl:match("([%w_]+)%s*%(") or decl:match("([%w_]+)%s*;")
      local trailing = decl:match("/%*(.-)%*/%s*$")
      decl = decl:gsub("%s*/%*.-%*/%s*$", "")
      local text = #pending > 0 and comment_text(pending) or nil
      if text ~= shown then
        if text then
          doc[#doc + 1] = text
          doc[#doc + 1] = ""
        end
        shown = text
      end
      doc[#doc + 1] = "```c"
      doc[#doc + 1] = decl
      doc[#doc + 1] = "```"
      if trailing then
        doc[#doc + 1] = (trailing:gsub("^%s+", ""):gsub("%s+$", ""))
      end
      doc[#doc + 1] = ""
      decls = decls + 1
      assert(fname, "cannot read the name of " .. decl)
    elseif not l:match("%S") then
      pending, shown = {}, nil -- a blank line ends a group
    elseif not l:match("^%s*%*") then
      pending = {} -- a type or macro between the comment and the next declaration: not its comment
    end
    i = i + 1
  end
  if decls == 0 then doc[#doc + 1] = "(Types and macros only.)\n" end
end

util.write(out_path, (table.concat(doc, "\n"):gsub("\n\n\n+", "\n\n"):gsub("%s*$", "\n")))
