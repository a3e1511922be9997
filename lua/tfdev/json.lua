-- A small JSON encoder (enough for traces and reports): tables with 1..n keys become arrays; and a
-- decoder for the files models come with (reference.json): objects and arrays become tables, null nil.
local json = {}

--- A value that encodes as null where Lua cannot hold nil (inside arrays).
json.null = setmetatable({}, { __name = "tfdev.json.null", __tostring = function() return "null" end })

local escapes = { ['"'] = '\\"', ["\\"] = "\\\\", ["\b"] = "\\b", ["\f"] = "\\f", ["\n"] = "\\n", ["\r"] = "\\r",
  ["\t"] = "\\t" }

local function encode_string(s)
  return '"' .. s:gsub('[%c"\\]', function(c) return escapes[c] or string.format("\\u%04x", c:byte()) end) .. '"'
end

local function is_array(t)
  local n = #t
  for k in pairs(t) do
    if math.type(k) ~= "integer" or k < 1 or k > n then return false end
  end
  return true
end

local function encode(v, out)
  local t = type(v)
  if t == "nil" or v == json.null then out[#out + 1] = "null"
  elseif t == "boolean" then out[#out + 1] = tostring(v)
  elseif t == "number" then
    if v ~= v or v == math.huge or v == -math.huge then out[#out + 1] = "null"
    elseif math.type(v) == "integer" then out[#out + 1] = tostring(v)
    else out[#out + 1] = string.format("%.17g", v) end
  elseif t == "string" then out[#out + 1] = encode_string(v)
  elseif t == "table" then
    if next(v) == nil then out[#out + 1] = "[]"
    elseif is_array(v) then
      out[#out + 1] = "["
      for i, x in ipairs(v) do
        if i > 1 then out[#out + 1] = "," end
        encode(x, out)
      end
      out[#out + 1] = "]"
    else
      local keys = {}
      for k in pairs(v) do keys[#keys + 1] = tostring(k) end
      table.sort(keys)
      out[#out + 1] = "{"
      for i, k in ipairs(keys) do
        if i > 1 then out[#out + 1] = "," end
        out[#out + 1] = encode_string(k) .. ":"
        encode(v[k], out)
      end
      out[#out + 1] = "}"
    end
  else
    out[#out + 1] = encode_string(tostring(v))
  end
end

function json.encode(v)
  local out = {}
  encode(v, out)
  return table.concat(out)
end

-- ---- decoding ----
local function fail(text, at, what) error(string.format("JSON: %s at byte %d", what, at), 0) end

local decode_value

local function skip(text, at) return text:find("[^ \t\r\n]", at) or #text + 1 end

local unescapes = { b = "\b", f = "\f", n = "\n", r = "\r", t = "\t" }

local function decode_string(text, at)
  local out, i = {}, at + 1
  while true do
    local j = text:find('["\\]', i)
    if not j then fail(text, at, "unterminated string") end
    out[#out + 1] = text:sub(i, j - 1)
    if text:sub(j, j) == '"' then return table.concat(out), j + 1 end
    local c = text:sub(j + 1, j + 1)
    if c == "u" then
      local code = tonumber(text:sub(j + 2, j + 5), 16) or fail(text, j, "bad \\u escape")
      out[#out + 1] = utf8.char(code)
      i = j + 6
    else
      out[#out + 1] = unescapes[c] or c
      i = j + 2
    end
  end
end

function decode_value(text, at)
  at = skip(text, at)
  local c = text:sub(at, at)
  if c == "{" then
    local obj = {}
    at = skip(text, at + 1)
    if text:sub(at, at) == "}" then return obj, at + 1 end
    while true do
      if text:sub(at, at) ~= '"' then fail(text, at, "expected a key") end
      local key
      key, at = decode_string(text, at)
      at = skip(text, at)
      if text:sub(at, at) ~= ":" then fail(text, at, "expected ':'") end
      obj[key], at = decode_value(text, at + 1)
      at = skip(text, at)
      local sep = text:sub(at, at)
      if sep == "}" then return obj, at + 1 end
      if sep ~= "," then fail(text, at, "expected ',' or '}'") end
      at = skip(text, at + 1)
    end
  elseif c == "[" then
    local arr = {}
    at = skip(text, at + 1)
    if text:sub(at, at) == "]" then return arr, at + 1 end
    while true do
      arr[#arr + 1], at = decode_value(text, at)
      at = skip(text, at)
      local sep = text:sub(at, at)
      if sep == "]" then return arr, at + 1 end
      if sep ~= "," then fail(text, at, "expected ',' or ']'") end
      at = at + 1
    end
  elseif c == '"' then
    return decode_string(text, at)
  end
  local word = text:match("^[%w%.%+%-]+", at)
  if word == "true" then return true, at + 4 end
  if word == "false" then return false, at + 5 end
  if word == "null" then return nil, at + 4 end
  local n = word and tonumber(word)
  if n == nil then fail(text, at, "unexpected " .. (c == "" and "end of text" or "'" .. c .. "'")) end
  return n, at + #word
end

--- Decodes JSON text; raises "JSON: <what> at byte N" on malformed text.
function json.decode(text)
  local v, at = decode_value(text, 1)
  at = skip(text, at)
  if at <= #text then fail(text, at, "trailing text") end
  return v
end

return json
