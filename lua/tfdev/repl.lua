-- tfdev.repl: how `tfdev -i` shows the values an expression returns. Anything with __tostring
-- (tensors, graph outputs, devices, errors) prints as its __tostring says; plain tables print as
-- Lua table constructors, keys sorted, nested tables only a few levels deep and long ones cut, so a
-- big table (package.loaded, say) gives one readable line instead of a flood or an address.
-- It needs nothing from tfdev itself: the REPL loads it even when the tfdev module is not used.
local repl = {}

repl.max_depth = 3    -- nested tables deeper than this print as {...}
repl.max_items = 40   -- entries shown per table before "... (N more)"

local type_order = { number = 1, string = 2, boolean = 3 }

-- Array part first (1..n in order), then the other keys: numbers, strings, booleans, then the
-- rest, each group sorted, so two prints of the same table read the same.
local function sorted_keys(t)
  local n = 0
  while rawget(t, n + 1) ~= nil do n = n + 1 end
  local rest = {}
  for k in next, t do
    if not (math.type(k) == "integer" and k >= 1 and k <= n) then rest[#rest + 1] = k end
  end
  table.sort(rest, function(a, b)
    local ta, tb = type_order[type(a)] or 4, type_order[type(b)] or 4
    if ta ~= tb then return ta < tb end
    if ta == 1 or ta == 2 then return a < b end
    if ta == 3 then return not a and b end
    return tostring(a) < tostring(b)
  end)
  return n, rest
end

local function has_tostring(v)
  local mt = getmetatable(v)
  return type(mt) == "table" and mt.__tostring ~= nil
end

local format

local function format_key(k, seen, depth)
  if type(k) == "string" and k:match("^[%a_][%w_]*$") then return k end
  return "[" .. format(k, seen, depth, true) .. "]"
end

-- v as text; `nested` quotes strings (inside a table), as a constructor would have them.
function format(v, seen, depth, nested)
  local tv = type(v)
  if tv == "string" then return nested and string.format("%q", v) or v end
  if tv ~= "table" or has_tostring(v) then
    local ok, s = pcall(tostring, v) -- a __tostring that fails should not lose the other values
    return ok and tostring(s) or string.format("<%s: __tostring failed: %s>", tv, tostring(s))
  end
  if seen[v] then return "<cycle>" end
  if depth >= repl.max_depth then return next(v) == nil and "{}" or "{...}" end
  seen[v] = true
  local n, rest = sorted_keys(v)
  local parts, shown = {}, 0
  local total = n + #rest
  for i = 1, n do
    if shown == repl.max_items then break end
    shown = shown + 1
    parts[shown] = format(v[i], seen, depth + 1, true)
  end
  for _, k in ipairs(rest) do
    if shown == repl.max_items then break end
    shown = shown + 1
    parts[shown] = format_key(k, seen, depth + 1) .. " = " .. format(rawget(v, k), seen, depth + 1, true)
  end
  if total > shown then parts[#parts + 1] = string.format("... (%d more)", total - shown) end
  seen[v] = nil
  return "{" .. table.concat(parts, ", ") .. "}"
end

--- One value as the REPL shows it.
function repl.format(v) return format(v, {}, 0, false) end

--- The values of one evaluation, tab-separated as print separates them.
function repl.format_results(...)
  local out = {}
  for i = 1, select("#", ...) do out[i] = repl.format((select(i, ...))) end
  return table.concat(out, "\t")
end

return repl
