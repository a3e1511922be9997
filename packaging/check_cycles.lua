-- Checks that no source files depend on each other in a circle (ctest build.cycles). A file depends on
-- another when its object calls or reads a symbol the other's object defines, as `nm` shows them over
-- the built objects: the arrows the include check (check_layers.sh) cannot see, such as a header of
-- one layer implemented in another, or a registry that names the kernels that call it back.
-- Each group of objects (the runtime, the bindings, the CUDA module) is checked on its own. A set of
-- files that reach each other (a strongly connected component of more than one file) fails the
-- check, unless every file of it is listed in `one_concept` (files that are one idea split for size).
--   tfdev packaging/check_cycles.lua [--binary-dir=BUILD_DIR] --group=NAME OBJECT... [--group=NAME OBJECT...]
-- Prints each cycle with the symbols that close it; exits 1 on a new one.
-- A tensor and the element kinds it holds by reference (strings, variants): one concept.
local one_concept = [[
  runtime/core/tensor.c runtime/core/tstring.c runtime/core/variant.c
]]
local concept = {}
for path in one_concept:gmatch("%S+") do concept[path] = true end

local util = dofile((arg[0]:match("^(.*)/") or ".") .. "/script_util.lua")
local lines = util.command_lines

-- The build tree (--binary-dir=DIR), to name objects by their sources' paths; none: paths as given.
local binary_dir

-- The source path of an object. CMake puts it at <dir>/CMakeFiles/<target>.dir/<path>.o, where <dir> is
-- the build tree's copy of the directory that made the target and <path> is the source's path from that
-- directory, each `..` written `__`.
local function source_of(object)
  local dir, path = object:match("^(.-)/?CMakeFiles/[^/]+%.dir/(.+)%.o$")
  if not path then return object end
  if binary_dir and dir:sub(1, #binary_dir) == binary_dir then
    dir = dir:sub(#binary_dir + 2)
    path = (dir ~= "" and dir .. "/" or "") .. path
  end
  repeat
    local n
    path, n = path:gsub("[^/]+/__/", "", 1)
  until n == 0
  return path
end

-- groups[name] = {objects}; the order in which groups are given is the order symbols are known in
local groups, group_order, g = {}, {}, nil
for i = 1, #arg do
  local name = arg[i]:match("^%-%-group=(.+)$")
  if arg[i]:match("^%-%-binary%-dir=") then
    binary_dir = arg[i]:match("^%-%-binary%-dir=(.-)/*$")
  elseif name then
    g = name
    if not groups[g] then
      groups[g] = {}
      group_order[#group_order + 1] = g
    end
  elseif g and arg[i]:match("%.o$") then
    table.insert(groups[g], arg[i])
  end
end
if #group_order == 0 then
  io.stderr:write("usage: tfdev check_cycles.lua --group=NAME OBJECT...\n")
  os.exit(2)
end

-- defines[symbol] = file, per group; uses[file] = {symbol,...}. One nm for all of a group's objects
-- (-A names each line's object), in batches that keep the command line short.
local function read_symbols(objects)
  local defines, uses, files, file_of = {}, {}, {}, {}
  for _, obj in ipairs(objects) do
    local file = source_of(obj)
    files[#files + 1] = file
    uses[file] = uses[file] or {}
    file_of[obj] = file
  end
  for first = 1, #objects, 100 do
    local batch = {}
    for i = first, math.min(first + 99, #objects) do batch[#batch + 1] = "'" .. objects[i] .. "'" end
    for _, l in ipairs(lines("nm -P -A " .. table.concat(batch, " ") .. " 2>/dev/null")) do
      local obj, sym, kind = l:match("^(.-): (%S+) (%a)")
      local file = obj and file_of[obj]
      if file then
        if kind == "U" then
          table.insert(uses[file], sym)
        elseif kind:match("[TDBRCGSVW]") then -- global definitions (lower case ones are file-local)
          defines[sym] = defines[sym] or file
        end
      end
    end
  end
  return defines, uses, files
end

-- Tarjan's strongly connected components over edges[file] = {file = symbol}.
local function components(files, edges)
  local index, low, on, stack, out, n = {}, {}, {}, {}, {}, 0
  local function visit(v)
    n = n + 1
    index[v], low[v] = n, n
    stack[#stack + 1], on[v] = v, true
    for w in pairs(edges[v] or {}) do
      if not index[w] then
        visit(w)
        low[v] = math.min(low[v], low[w])
      elseif on[w] then
        low[v] = math.min(low[v], index[w])
      end
    end
    if low[v] == index[v] then
      local comp = {}
      repeat
        local w = table.remove(stack)
        on[w] = nil
        comp[#comp + 1] = w
      until w == v
      if #comp > 1 then
        table.sort(comp)
        out[#out + 1] = comp
      end
    end
  end
  for _, f in ipairs(files) do
    if not index[f] then visit(f) end
  end
  return out
end

local failed, total = false, 0
for _, g in ipairs(group_order) do
  local defines, uses, files = read_symbols(groups[g])
  local edges = {}
  for file, syms in pairs(uses) do
    for _, s in ipairs(syms) do
      local to = defines[s]
      if to and to ~= file then
        edges[file] = edges[file] or {}
        edges[file][to] = edges[file][to] or s
      end
    end
  end
  for _, comp in ipairs(components(files, edges)) do
    total = total + 1
    local new = {}
    for _, f in ipairs(comp) do
      if not concept[f] then new[#new + 1] = f end
    end
    local inside = {}
    for _, f in ipairs(comp) do inside[f] = true end
    if #new > 0 then
      failed = true
      print(("%s: a new cycle of %d files (%s not one concept):"):format(g, #comp, table.concat(new, ", ")))
      for _, f in ipairs(comp) do
        for to, s in pairs(edges[f] or {}) do
          if inside[to] then print(("  %s -> %s (%s)"):format(f, to, s)) end
        end
      end
    else
      print(("%s: one concept in %d files: %s"):format(g, #comp, table.concat(comp, " ")))
    end
  end
end
if not failed then print(("%d cycles of files, all of them one concept"):format(total)) end
os.exit(failed and 1 or 0)
