-- The files a model names stay in its folder (issue 25): a TensorFlow.js weightsManifest path that
-- climbs out with "../", is absolute, or goes through a symbolic link to a file outside the model's
-- directory is refused before anything is read, as is anything not a regular file (a directory, a
-- FIFO, /dev/zero), and no file is read past the bytes the manifest declares. Each error names the
-- path as the manifest writes it and tells nothing of the file outside (not its bytes, not its size).
local tfdev = require "tfdev"
local h = require "spec.support.helpers"

local exe = os.getenv("TFDEV_EXE")
local here = debug.getinfo(1, "S").source:match("^@(.*)/spec/[^/]*$") or "."

local function sh(cmd) assert(os.execute(cmd), cmd) end
local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
local function write(path, bytes)
  local f = assert(io.open(path, "wb"))
  f:write(bytes)
  f:close()
end

-- One Const w (two float32s, 8 bytes) filled from the weight file `name`, and y = Identity(w): a
-- weight file's bytes come back as the model's output.
local function model_json(name)
  return string.format([[{"format": "graph-model", "modelTopology": {"node": [
    {"name": "w", "op": "Const", "attr": {"dtype": {"type": "DT_FLOAT"},
      "value": {"tensor": {"dtype": "DT_FLOAT", "tensorShape": {"dim": [{"size": "2"}]}}}}},
    {"name": "y", "op": "Identity", "input": ["w"], "attr": {"T": {"type": "DT_FLOAT"}}}]},
    "weightsManifest": [{"paths": [%q], "weights": [{"name": "w", "shape": [2], "dtype": "float32"}]}]}]], name)
end

-- root/secret.bin (outside: as many bytes as w takes, so read it would load) and root/secret_big.bin
-- (4099 bytes, a size no message may tell); root/m/ is the model's folder, with ok.bin inside.
local SECRET = string.pack("<ff", 1234.5, -6789.25)
local function make_root()
  local root = os.tmpname()
  os.remove(root)
  sh("mkdir -p " .. q(root .. "/m/sub/inner"))
  write(root .. "/secret.bin", SECRET)
  write(root .. "/secret_big.bin", string.rep("S", 4099))
  write(root .. "/m/ok.bin", string.pack("<ff", 1, 2))
  write(root .. "/m/sub/inner/deep.bin", string.pack("<ff", 3, 4))
  return root
end

local function with_model(root, name)
  local path = root .. "/m/model.json"
  write(path, model_json(name))
  return path
end

-- The message without the temporary directory's own name, which may hold any digits.
local function message_of(err, root) return (err.message:gsub(root:gsub("%p", "%%%0"), "<root>")) end

local function refused(root, name, code, fragment, load)
  local path = with_model(root, name)
  local ok, err = pcall(load or tfdev.graph_def.load, path)
  assert.is_false(ok, name .. " was read")
  h.fails(code, fragment, nil, err)
  local msg = message_of(err, root)
  assert.truthy(err.message:find("weight file '" .. name .. "'", 1, true), err.message) -- the path as written
  assert.falsy(msg:find("4099", 1, true), msg) -- nothing of the outside file's size
  assert.falsy(msg:find("1234", 1, true), msg)
  return err
end

-- Loads `path` in a fresh tfdev process under a time limit (in directory `cwd`), so a loader that
-- blocks on a FIFO or reads /dev/zero until memory runs out is a failed case, not a hung run.
local function load_in_child(path, cwd)
  local script = os.tmpname()
  write(script, [[
local tfdev = require "tfdev"
local ok, err = pcall(tfdev.graph_def.load, arg[1])
if ok then io.write("LOADED\n") else io.write("ERR ", err.code, " ", err.message, "\n") end
]])
  local t0 = os.time()
  local p = io.popen((cwd and "cd " .. q(cwd) .. " && " or "") .. "timeout 20 " .. q(exe) .. " " .. q(script) .. " "
    .. q(path) .. " 2>&1; echo \"exit=$?\"")
  local out = p:read("a")
  p:close()
  os.remove(script)
  local body, status = out:match("^(.-)exit=(%d+)%s*$")
  assert.are.equal("0", status, "the loader did not finish: " .. out)
  assert.truthy(os.time() - t0 < 15, "the loader took " .. (os.time() - t0) .. " s")
  local code, msg = body:match("^ERR (%S+) (.-)%s*$")
  return code, msg, body
end

describe("a model's weight files stay in its folder", function()
  local root
  before_each(function() root = make_root() end)
  after_each(function() os.execute("rm -rf " .. q(root)) end)

  it("refuses a path that climbs out with ../", function()
    refused(root, "../secret.bin", "INVALID_ARGUMENT", "weight file '../secret.bin': leads outside the model's directory")
    refused(root, "../secret_big.bin", "INVALID_ARGUMENT", "leads outside the model's directory")
    refused(root, "sub/../../secret.bin", "INVALID_ARGUMENT", "leads outside the model's directory")
    -- so does tfdev.model, which loads through the same reader
    local path = with_model(root, "../secret.bin")
    h.raises("INVALID_ARGUMENT", "weight file '../secret.bin': leads outside", tfdev.model, path)
  end)

  it("refuses an absolute path, whether the model is loaded by a path or by bare file name", function()
    local abs = root .. "/secret.bin"
    refused(root, abs, "INVALID_ARGUMENT", "is an absolute path")
    refused(root, root .. "/m/ok.bin", "INVALID_ARGUMENT", "is an absolute path") -- even one inside
    -- by bare name, from the model's folder (the weight files' directory is then the current one)
    with_model(root, abs)
    local code, msg, body = load_in_child("model.json", root .. "/m")
    assert.are.equal("INVALID_ARGUMENT", code, body)
    assert.truthy(msg:find("model.json: weight file '" .. abs .. "': is an absolute path", 1, true), msg)
    with_model(root, "../secret.bin")
    code, msg, body = load_in_child("model.json", root .. "/m")
    assert.are.equal("INVALID_ARGUMENT", code, body)
    assert.truthy(msg:find("weight file '../secret.bin': leads outside", 1, true), msg)
    -- and a good model by bare name still loads from the current directory
    with_model(root, "ok.bin")
    code, msg, body = load_in_child("model.json", root .. "/m")
    assert.are.equal("LOADED", body:match("^(%S+)"), body)
  end)

  it("refuses a symbolic link that leads out of the folder, to a file or to a directory", function()
    sh("ln -s ../secret.bin " .. q(root .. "/m/link.bin"))
    sh("ln -s " .. q(root .. "/secret_big.bin") .. " " .. q(root .. "/m/abslink.bin"))
    sh("ln -s .. " .. q(root .. "/m/up"))
    refused(root, "link.bin", "INVALID_ARGUMENT", "weight file 'link.bin': leads outside the model's directory")
    refused(root, "abslink.bin", "INVALID_ARGUMENT", "leads outside the model's directory")
    refused(root, "up/secret.bin", "INVALID_ARGUMENT", "leads outside the model's directory")
    refused(root, "up/m/../secret_big.bin", "INVALID_ARGUMENT", "leads outside the model's directory")
  end)

  it("refuses /dev/zero, by name or through a link, without reading it", function()
    sh("ln -s /dev/zero " .. q(root .. "/m/zero.bin"))
    for _, name in ipairs { "zero.bin", "/dev/zero" } do
      with_model(root, name)
      local code, msg, body = load_in_child(root .. "/m/model.json")
      assert.are.equal("INVALID_ARGUMENT", code, body)
      assert.truthy(msg:find("weight file '" .. name .. "'", 1, true), msg)
    end
    -- through weights_dir the same
    h.raises("INVALID_ARGUMENT", "weight file '/dev/zero': is an absolute path", tfdev.graph_def.parse,
      model_json("/dev/zero"), { weights_dir = root .. "/m" })
    h.raises("INVALID_ARGUMENT", "weight file 'zero.bin': leads outside", tfdev.graph_def.parse, model_json("zero.bin"),
      { weights_dir = root .. "/m" })
  end)

  it("refuses a FIFO at once, without blocking on it", function()
    sh("mkfifo " .. q(root .. "/m/fifo.bin"))
    with_model(root, "fifo.bin")
    local code, msg, body = load_in_child(root .. "/m/model.json")
    assert.are.equal("INVALID_ARGUMENT", code, body)
    assert.truthy(msg:find("weight file 'fifo.bin': is a FIFO, not a regular file", 1, true), msg)
    -- nor does a FIFO named like a model file hang the search of a model directory
    os.remove(root .. "/m/model.json")
    sh("mkfifo " .. q(root .. "/m/other.json") .. " " .. q(root .. "/m/other.pb"))
    write(root .. "/m/m.json", model_json("ok.bin"))
    code, msg, body = load_in_child(root .. "/m")
    assert.are.equal("LOADED", body:match("^(%S+)"), body)
  end)

  it("refuses a model file that is a FIFO or a device at once, without reading or blocking", function()
    sh("mkfifo " .. q(root .. "/m/model.pb"))
    local code, msg, body = load_in_child(root .. "/m/model.pb")
    assert.are.equal("INVALID_ARGUMENT", code, body)
    assert.truthy(msg:find("model.pb: is not a regular file (a device, FIFO or socket)", 1, true), msg)
    code, msg, body = load_in_child("/dev/zero")
    assert.are.equal("INVALID_ARGUMENT", code, body)
    assert.truthy(msg:find("/dev/zero: is not a regular file", 1, true), msg)
  end)

  it("refuses a directory", function()
    refused(root, "sub", "INVALID_ARGUMENT", "weight file 'sub': is a directory, not a regular file")
    refused(root, ".", "INVALID_ARGUMENT", "weight file '.': is a directory")
    refused(root, "", "INVALID_ARGUMENT", "weight file '': an empty path")
  end)

  it("reads no further than the manifest declares: a longer file is an error, a shorter one too", function()
    write(root .. "/m/big.bin", string.pack("<fff", 1, 2, 3))
    write(root .. "/m/small.bin", string.pack("<f", 1))
    local path = with_model(root, "big.bin")
    h.raises("INVALID_ARGUMENT", "weightsManifest[0]: the weights take 8 bytes but the files hold 12", tfdev.graph_def.load, path)
    path = with_model(root, "small.bin")
    h.raises("INVALID_ARGUMENT", "weight 'w': needs 8 bytes at offset 0, but the group's files hold 4", tfdev.graph_def.load, path)
    -- a file far larger than declared (sparse: 64 GiB of nothing on disk) is refused by its size, not read
    sh("truncate -s 64G " .. q(root .. "/m/huge.bin"))
    with_model(root, "huge.bin")
    local code, msg, body = load_in_child(root .. "/m/model.json")
    assert.are.equal("INVALID_ARGUMENT", code, body)
    assert.truthy(msg:find("the weights take 8 bytes but the files hold 68719476736", 1, true), msg)
    -- a host's reader that gives more is refused the same way
    h.raises("INVALID_ARGUMENT", "the weights take 8 bytes but the files hold 12", tfdev.graph_def.parse, model_json("w.bin"),
      { weights = function() return string.pack("<fff", 1, 2, 3) end })
  end)

  it("still reads what stays inside: a plain file, a subfolder, a link that stays in the folder", function()
    sh("ln -s sub/inner/deep.bin " .. q(root .. "/m/alias.bin"))
    sh("ln -s sub " .. q(root .. "/m/subdir"))
    local cases = { ["ok.bin"] = { 1, 2 }, ["sub/inner/deep.bin"] = { 3, 4 }, ["alias.bin"] = { 3, 4 },
      ["./sub/../ok.bin"] = { 1, 2 }, ["subdir/inner/deep.bin"] = { 3, 4 }, ["sub/inner/../../ok.bin"] = { 1, 2 } }
    for name, want in pairs(cases) do
      local path = with_model(root, name)
      local gd = tfdev.graph_def.load(path)
      assert.are.same(want, gd.node[1].attr.value:totable(), name)
      local m <close> = tfdev.model(path, { intra_op_threads = 1 })
      assert.are.same(want, m:run({})[1]:totable(), name)
    end
    -- a model whose folder is reached through a link keeps its weights
    sh("ln -s m " .. q(root .. "/mlink"))
    with_model(root, "alias.bin")
    assert.are.same({ 3, 4 }, tfdev.graph_def.load(root .. "/mlink/model.json").node[1].attr.value:totable())
  end)

  it("loads the real models of ../shared/models", function()
    local dir = here .. "/../shared/models/"
    local f = io.open(dir .. "README.md")
    if not f then return pending("no ../shared/models") end
    f:close()
    for _, name in ipairs { "antispoof", "blazeface", "emotion", "facemesh" } do
      local gd = tfdev.graph_def.load(dir .. name)
      assert.truthy(#gd.node > 10, name)
    end
  end)
end)
