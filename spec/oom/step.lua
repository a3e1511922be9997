-- The out-of-memory sweep's step runner for Lua targets (scripts/oom-sweep, spec/oom/README.md).
-- step(name, fn) runs fn; an error must be a tfdev.error RESOURCE_EXHAUSTED, after which fn is run
-- once more and must succeed (the failed call lost no state). fn checks its own values with
-- check(), whose failures are reported as wrong values, not as errors. done() prints the result
-- line and exits: 0 clean, 3 bad.
local M = {}
io.stdout:setvbuf("line") -- a run killed for hanging still shows its last step

local WRONG = {}

function M.check(cond, what)
  if not cond then error(setmetatable({ what = what }, WRONG), 2) end
end

local function describe(err)
  if getmetatable(err) == WRONG then return "wrong value: " .. err.what end
  if type(err) == "table" and err.code then return err.code .. ": " .. tostring(err.message) end
  return "not a tfdev.error (" .. type(err) .. "): " .. tostring(err)
end

local function is_oom(err)
  return getmetatable(err) ~= WRONG and type(err) == "table" and err.code == "RESOURCE_EXHAUSTED"
end

function M.step(name, fn)
  for attempt = 1, 2 do
    local ok, err = pcall(fn)
    if ok then
      print("STEP " .. name .. (attempt == 1 and " ok" or " ok after out of memory"))
      return
    end
    if attempt == 2 or not is_oom(err) then
      print("RESULT bad: " .. name .. ": " .. (attempt == 2 and "the retry after out of memory failed: " or "") ..
        describe(err))
      io.stdout:flush()
      os.exit(3, true)
    end
    print("STEP " .. name .. " out of memory: " .. tostring(err.message))
  end
end

function M.done()
  collectgarbage()
  collectgarbage()
  print("RESULT clean")
  io.stdout:flush()
  os.exit(0, true) -- close the state: everything tfdev made is freed before the leak check
end

return M
