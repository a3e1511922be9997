-- Shared assertions for the specs: errors are tfdev.error values with a code and a message.
local tfdev = require "tfdev"

local helpers = {}

local function check_error(err, code, fragment)
  assert(tfdev.error.is(err), "expected a tfdev.error, got: " .. tostring(err))
  assert(err.code == code, string.format("expected code %s, got %s (%s)", code, err.code, err.message))
  assert(err.message:find(fragment, 1, true),
    string.format("message %q does not contain %q", err.message, fragment))
  return err
end

--- Asserts fn(...) raises a tfdev.error with `code` whose message contains `fragment`.
function helpers.raises(code, fragment, fn, ...)
  local ok, err = pcall(fn, ...)
  assert(not ok, "expected an error, got success")
  return check_error(err, code, fragment)
end

--- Asserts a `nil, err` return with `code` and a message containing `fragment`.
function helpers.fails(code, fragment, value, err)
  assert(value == nil, "expected nil, got " .. tostring(value))
  return check_error(err, code, fragment)
end

return helpers
