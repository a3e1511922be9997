-- Checks tfdev.h's status rule (ctest build.status_reset): every public function that takes a
-- tfd_status* starts by resetting it (tfd_status_reset), so a call that succeeds leaves the status
-- OK whatever it held before, as TensorFlow's C API does; or it hands the call straight on to one
-- that does (a body that is one `return tfd_...(...)`). The public functions are those include/tfdev
-- declares with TFD_API (status.h's own are the status's accessors); their definitions are looked
-- for under runtime/, leaving out tests, test support and the backend modules' forwarding shims.
--   tfdev packaging/check_status_reset.lua SOURCE_DIR
local src = arg[1] or "."

local util = dofile((arg[0]:match("^(.*)/") or ".") .. "/script_util.lua")
local read, files = util.read, util.command_lines

local function strip_comments(text)
  return (text:gsub("/%*.-%*/", " "):gsub("//[^\n]*", " "))
end

-- the public functions that take a status
local public = {}
for _, h in ipairs(files("ls " .. src .. "/include/tfdev/*.h")) do
  if not h:match("/status%.h$") then
    local text = strip_comments(read(h))
    for decl in text:gmatch("TFD_API([^;{]-);") do
      local name = decl:match("(tfd_[%w_]+)%s*%b()")
      if name and decl:find("tfd_status%s*%*") then public[name] = true end
    end
  end
end

local defined, bad = {}, {}
local sources = files("find " .. src .. "/runtime -name '*.c' ! -name '*_test.c' ! -path '*/runtime/testing/*' " ..
  "! -name backend_shim.c | sort")
for _, file in ipairs(sources) do
  local text = strip_comments(read(file))
  for name in pairs(public) do
    local at = 1
    while true do
      local s, e = text:find("\n[%w_][%w_ %*]-[ %*]" .. name .. "%s*%b()%s*{", at)
      if not s then break end
      defined[name] = true
      local body = text:sub(e + 1, e + 400)
      if not (body:match("^%s*tfd_status_reset%(") or body:match("^%s*return%s+tfd_[%w_]+%b();%s*}")) then
        bad[#bad + 1] = string.format("%s: %s does not start with tfd_status_reset", file:sub(#src + 2), name)
      end
      at = e + 1
    end
  end
end
for name in pairs(public) do
  if not defined[name] then bad[#bad + 1] = name .. ": declared with TFD_API and a status, but no definition found" end
end
table.sort(bad)
for _, line in ipairs(bad) do print(line) end
local n = 0
for _ in pairs(public) do n = n + 1 end
print(string.format("%d public functions that take a status; %d break the rule", n, #bad))
os.exit(#bad == 0 and 0 or 1)
