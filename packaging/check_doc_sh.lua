-- Runs the shell blocks of README.md and docs/*.md (ctest docs.sh_blocks), so the commands a reader
-- types work as written. Every ```sh block says, on the line above it (an HTML comment, so Markdown
-- shows nothing), what becomes of it:
--   <!-- sh-run -->                   run here; it must exit 0
--   <!-- sh-run-if: PATH -->          run when PATH exists (relative to the source root, `build/` being
--                                     this build); else reported as not run, naming PATH
--   <!-- sh-not-run: WHERE -->        not run here, and WHERE says what runs the same commands (a
--                                     ctest, .ci/run) or why nothing can (a machine with a GPU)
-- A block with none of these fails the check. Blocks run with bash -e from a scratch directory whose
-- entries are links to the source root's, with `build` linked to this build, so `build/bin/tfdev`
-- and `scripts/...` mean what they mean to a reader at the root of a clone.
--   tfdev packaging/check_doc_sh.lua SOURCE_DIR BINARY_DIR
local src, bin = table.unpack(arg, 1, 2)
assert(bin, "usage: tfdev check_doc_sh.lua SOURCE_DIR BINARY_DIR")

local util = dofile((arg[0]:match("^(.*)/") or ".") .. "/script_util.lua")
local sh, quote = util.sh, util.quote
src, bin = util.command_lines(("realpath %s %s"):format(quote(src), quote(bin))) -- the links need absolute paths
src, bin = src[1], src[2]

local shells = { ["```sh"] = true, ["```bash"] = true, ["```shell"] = true, ["```console"] = true }

-- The shell blocks of a Markdown file: {line =, text =, mark =, arg =}.
local function blocks(path)
  local out = util.markdown_blocks(path, shells)
  for _, b in ipairs(out) do b.mark, b.arg = b.above:match("^<!%-%- (sh%-[%a%-]+):? ?(.-) %-%->$") end
  return out
end

-- The scratch root: a link to each entry of the source root, and build -> this build.
local root = util.command_lines("mktemp -d")[1]
for _, name in ipairs(util.command_lines("ls -A " .. quote(src))) do
  if name ~= "build" then assert(sh(("ln -s %s %s"):format(quote(src .. "/" .. name), quote(root .. "/" .. name)))) end
end
assert(sh(("ln -s %s %s"):format(quote(bin), quote(root .. "/build"))))

local docs = { "README.md" }
for _, f in ipairs(util.command_lines("ls " .. quote(src) .. "/docs/*.md")) do docs[#docs + 1] = f:sub(#src + 2) end

local failed, ran, count = 0, 0, 0
for _, doc in ipairs(docs) do
  for _, b in ipairs(blocks(src .. "/" .. doc)) do
    count = count + 1
    local where = ("%s:%d"):format(doc, b.line)
    if b.mark == "sh-run" or (b.mark == "sh-run-if" and b.arg ~= "") then
      local present = b.mark == "sh-run" or sh(("test -e %s"):format(quote(root .. "/" .. b.arg)))
      if present then
        local file = root .. "/.doc_block.sh"
        util.write(file, b.text)
        local ok, out = sh(("cd %s && timeout 600 bash -e %s"):format(quote(root), quote(file)))
        os.remove(file)
        if ok then
          ran = ran + 1
          print(("ok   %s (ran)"):format(where))
        else
          failed = failed + 1
          print(("FAIL %s: exited non-zero:\n%s\n%s"):format(where, b.text, out))
        end
      else
        print(("--   %s: not run, %s is absent in this build"):format(where, b.arg))
      end
    elseif b.mark == "sh-not-run" and b.arg ~= "" then
      print(("--   %s: not run here; %s"):format(where, b.arg))
    else
      failed = failed + 1
      print(("FAIL %s: a shell block needs <!-- sh-run -->, <!-- sh-run-if: PATH --> or <!-- sh-not-run: WHERE --> " ..
        "on the line above it"):format(where))
    end
  end
end
sh("rm -rf " .. quote(root))
print(("%d shell blocks, %d ran, %d failed"):format(count, ran, failed))
os.exit(failed == 0 and ran > 0 and 0 or 1)
