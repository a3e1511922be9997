-- Compiles the C blocks of README.md and docs/*.md (ctest docs.c_blocks), so the C a reader copies
-- builds against the headers as they are. A block with a main() is a program: it is compiled, linked
-- with libtfdev and, when the line above the block is `<!-- c-run: ARGS -->` (an HTML comment, so
-- Markdown shows nothing), run with ARGS from the source root; it must exit 0. Any other block is a
-- fragment: its #include lines and file-scope `static` prototypes stay at file scope, the rest becomes
-- the body of a function, after the declarations the line above gives as `<!-- c-given: DECLS -->`
-- (what the prose has already introduced: `tfd_status *st;`, a host's callbacks). Warnings are errors.
-- A sanitized build (SANITIZE, as -fsanitize= takes it; may be "") builds the programs with the same.
--   tfdev packaging/check_doc_c.lua SOURCE_DIR WORK_DIR CC INCLUDE_DIR GENERATED_INCLUDE_DIR LIB_DIR LUA_INCLUDE
--                                   [SANITIZE]
local src, work, cc, inc, geninc, libdir, luainc, sanitize = table.unpack(arg, 1, 8)
assert(luainc, "usage: tfdev check_doc_c.lua SOURCE_DIR WORK_DIR CC INCLUDE_DIR GENERATED_INCLUDE_DIR LIB_DIR LUA_INCLUDE")

local util = dofile((arg[0]:match("^(.*)/") or ".") .. "/script_util.lua")
local write, sh, quote = util.write, util.sh, util.quote

-- The C blocks of a Markdown file: {line =, body =, text =, given =, run =}.
local function blocks(path)
  local out = util.markdown_blocks(path, { ["```c"] = true })
  for _, b in ipairs(out) do
    b.given = b.above:match("^<!%-%- c%-given: (.-) %-%->$")
    b.run = b.above:match("^<!%-%- c%-run: (.-) %-%->$")
  end
  return out
end

local docs = { "README.md" }
for _, f in ipairs(util.command_lines("ls " .. quote(src) .. "/docs/*.md")) do
  -- c-api.md is the headers' declarations, generated from them (build.headers_self_contained compiles those)
  if not f:match("/c%-api%.md$") then docs[#docs + 1] = f:sub(#src + 2) end
end

local flags = ("-std=c11 -Wall -Wextra -Werror -I%s -I%s -I%s"):format(quote(inc), quote(geninc), quote(luainc))
if sanitize and sanitize ~= "" then flags = flags .. " -fsanitize=" .. sanitize .. " -fno-omit-frame-pointer" end
os.execute("mkdir -p " .. quote(work))
local failed, count = 0, 0
for _, doc in ipairs(docs) do
  for n, b in ipairs(blocks(src .. "/" .. doc)) do
    count = count + 1
    local where = ("%s:%d"):format(doc, b.line)
    local file = ("%s/doc_block_%d.c"):format(work, count)
    local ok, out
    if b.text:find("int main%s*%(") then
      write(file, b.text)
      local exe = file:gsub("%.c$", "")
      ok, out = sh(("%s %s %s -o %s -L%s -ltfdev -Wl,-rpath,%s"):format(cc, flags, quote(file), quote(exe),
        quote(libdir), quote(libdir)))
      if ok and b.run then ok, out = sh(("cd %s && %s %s"):format(quote(src), quote(exe), b.run)) end
    else
      local top, body = {}, {}
      for _, line in ipairs(b.body) do
        -- prototypes stay declarations of functions defined elsewhere, as the prose means them
        if line:match("^#include") then top[#top + 1] = line
        elseif line:match("^static .*%);") then top[#top + 1] = (line:gsub("^static ", ""))
        else body[#body + 1] = "  " .. line end
      end
      local lua = b.text:find("lua_State") and '#include <lauxlib.h>\n#include <lualib.h>\n#include "tfdev/lua.h"\n' or ""
      local text = ('#include <stdio.h>\n#include "tfdev/tfdev.h"\n' .. lua .. '%s\n%s\nvoid doc_fragment_%d(void);\n' ..
        'void doc_fragment_%d(void) {\n%s\n}\n'):format(table.concat(top, "\n"), b.given or "", n, n,
        table.concat(body, "\n"))
      write(file, text)
      ok, out = sh(("%s %s -Wno-unused-variable -Wno-unused-but-set-variable -Wno-unused-function " ..
        "-fsyntax-only %s"):format(cc, flags, quote(file)))
    end
    if ok then
      print(("ok   %s (%s)"):format(where, b.text:find("int main%s*%(") and (b.run and "built and ran" or "built")
        or "fragment compiled"))
    else
      failed = failed + 1
      print(("FAIL %s:\n%s"):format(where, out))
    end
  end
end
print(("%d C blocks, %d failed"):format(count, failed))
os.exit(failed == 0 and count > 0 and 0 or 1)
