-- The tfdev executable behaves like the lua executable, plus --list-devices.
local exe = os.getenv("TFDEV_EXE")

-- Runs a shell command; returns stdout+stderr and the exit status.
local function run(cmd)
  local p = io.popen(cmd .. " 2>&1; echo \"exit=$?\"")
  local out = p:read("a")
  p:close()
  local body, code = out:match("^(.-)exit=(%d+)%s*$")
  return body, tonumber(code)
end

local function tmpfile(content)
  local name = os.tmpname()
  local f = assert(io.open(name, "w"))
  f:write(content)
  f:close()
  return name
end

describe("the tfdev executable", function()
  assert(exe, "TFDEV_EXE must name the tfdev executable (ctest sets it)")

  it("runs a script with its arguments in arg", function()
    local script = tmpfile("print(arg[0] ~= nil, select('#', ...), ...)\nprint(arg[1], arg[2], #arg)\n")
    local out, code = run(exe .. " " .. script .. " one two")
    assert.are.equal(0, code)
    assert.are.equal("true\t2\tone\ttwo\none\ttwo\t2\n", out)
    os.remove(script)
  end)

  it("finds the tfdev module without any environment variable", function()
    local out, code = run("env -u LUA_PATH -u LUA_CPATH " .. exe ..
      " -e \"local t = require 'tfdev'; print(t.version, t.factory.get('CPU').name)\"")
    assert.are.equal(0, code)
    assert.are.equal("0.2.0\tThreadPoolDeviceFactory\n", out)
  end)

  it("runs -e statements and -l libraries in order", function()
    local out, code = run(exe .. " -l tfdev -e \"print(tfdev.factory.priority('CPU'))\" -l dn=tfdev.core -e \"print(type(dn.device_name))\"")
    assert.are.equal(0, code)
    assert.are.equal("60\ntable\n", out)
  end)

  it("starts scripts without OpenBLAS's workers spinning, and threaded products still use them", function()
    -- OpenBLAS's workers spin for 70-130 ms after they start, unless the executable stops them: the
    -- process's CPU time while the script sleeps 0.1 s would then grow by about 10 ticks.
    local script = tmpfile([[
local function cpu_ticks()
  local f = assert(io.open("/proc/self/stat"))
  local fields = {}
  for w in f:read("a"):match("%) (.*)$"):gmatch("%S+") do fields[#fields + 1] = w end
  f:close()
  return tonumber(fields[12]) + tonumber(fields[13]) -- utime + stime, fields 14 and 15
end
local t0 = cpu_ticks()
local sleeper = io.popen("sleep 0.1")
sleeper:read("a")
sleeper:close()
print("ticks asleep", cpu_ticks() - t0)
local tfdev = require "tfdev"
local g = tfdev.graph()
local a = g:placeholder("float32", { 256, 256 }, { name = "a" })
g:op("MatMul", { a, a }, { name = "p" })
local s <close> = tfdev.session { intra_op_threads = 2, inter_op_threads = 1 }
s:create(g)
local ones = tfdev.tensor { dtype = "float32", shape = { 256, 256 } }
ones:fill(1)
print("product", s:run({ a = ones }, "p"):totable()[256][256])
]])
    local out, code = run("env -u OPENBLAS_NUM_THREADS -u OPENBLAS_THREAD_TIMEOUT " .. exe .. " " .. script)
    assert.are.equal(0, code, out)
    local ticks = tonumber(out:match("ticks asleep\t(%d+)"))
    assert.truthy(ticks, out)
    assert.is_true(ticks <= 3, out)
    assert.truthy(out:find("product\t256.0\n", 1, true), out)
    os.remove(script)
  end)

  it("prints its version with -v and usage with --help", function()
    local out, code = run(exe .. " -v")
    assert.are.equal(0, code)
    assert.truthy(out:find("^tfdev 0%.2%.0 %(Lua 5%.4"))
    out, code = run(exe .. " --version")
    assert.are.equal(0, code)
    assert.truthy(out:find("^tfdev 0%.2%.0 %(Lua 5%.4"))
    out, code = run(exe .. " --help")
    assert.are.equal(0, code)
    assert.truthy(out:find("--list-devices", 1, true))
    assert.truthy(out:find("-e stat", 1, true))
  end)

  it("lists devices with their attributes", function()
    local out, code = run(exe .. " --list-devices")
    assert.are.equal(0, code)
    assert.truthy(out:find("/job:localhost/replica:0/task:0/device:CPU:0\n  device_type: CPU\n  memory_limit: 268435456 (256.0 MiB)\n", 1, true))
    assert.truthy(out:find("incarnation: %d+"))
    assert.truthy(out:find("no backends tried (TFDEV_BACKENDS=none)", 1, true)) -- ctest runs this file without backends
  end)

  it("lists devices made by a factory registered with -e first", function()
    local out, code = run(exe .. " -e \"local t = require 'tfdev'; t.factory.register('CPU', {create_devices = " ..
      "function(_, o, p) return {t.device.cpu{name = p .. '/device:CPU:7'}} end}, 150)\" --list-devices")
    assert.are.equal(0, code)
    assert.truthy(out:find("/job:localhost/replica:0/task:0/device:CPU:7", 1, true))
  end)

  it("prints a traceback and exits non-zero on error", function()
    local script = tmpfile("local function f() error(require('tfdev').error.new('NOT_FOUND', 'no such thing')) end\nf()\n")
    local out, code = run(exe .. " " .. script)
    assert.are.equal(1, code)
    assert.truthy(out:find("NOT_FOUND: no such thing", 1, true))
    assert.truthy(out:find("stack traceback:", 1, true))
    os.remove(script)
    -- a tfdev error names the script's line that called, past tfdev's own Lua modules
    script = tmpfile("local tfdev = require 'tfdev'\nlocal ok, e = pcall(tfdev.tensor, {1}, 'bogus')\n" ..
      "assert(e.where:match(':2$'), e.where)\nlocal s = tfdev.session()\ns:create{node = {{name = 'x', op = 'Nope'}}}\n")
    out, code = run(exe .. " " .. script)
    assert.are.equal(1, code)
    assert.truthy(out:find(":5: NOT_FOUND: node 'x': op type not registered 'Nope'", 1, true), out)
    os.remove(script)
    out, code = run(exe .. " -e \"error('plain')\"")
    assert.are.equal(1, code)
    assert.truthy(out:find("plain", 1, true))
    out, code = run(exe .. " /nonexistent/script.lua")
    assert.are.equal(1, code)
    assert.truthy(out:find("cannot open /nonexistent/script.lua", 1, true))
  end)

  it("runs LUA_INIT first, unless -E", function()
    local out, code = run("LUA_INIT='greeting = \"hi\"' " .. exe .. " -e 'print(greeting)'")
    assert.are.equal(0, code)
    assert.are.equal("hi\n", out)
    out, code = run("LUA_INIT='greeting = \"hi\"' " .. exe .. " -E -e 'print(greeting)'")
    assert.are.equal(0, code)
    assert.are.equal("nil\n", out)
  end)

  it("refuses unknown options", function()
    local out, code = run(exe .. " --frobnicate")
    assert.are.equal(1, code)
    assert.truthy(out:find("unrecognized option '--frobnicate'", 1, true))
    out, code = run(exe .. " -e")
    assert.are.equal(1, code)
    assert.truthy(out:find("'-e' needs argument", 1, true))
  end)

  it("runs stdin, and answers in interactive mode", function()
    local out, code = run("echo 'print(40 + 2)' | " .. exe .. " -")
    assert.are.equal(0, code)
    assert.are.equal("42\n", out)
    out, code = run("printf 'x = 20\\nreturn x + 1\\nfor i = 1, 2 do\\nprint(i)\\nend\\n' | " .. exe .. " -i")
    assert.are.equal(0, code)
    assert.truthy(out:find("21", 1, true))
    assert.truthy(out:find("1\n", 1, true) and out:find("2\n", 1, true))
  end)

  -- Ctrl-C in `tfdev -i` while a step waits forever (a dequeue from an empty queue): the step is
  -- cancelled and the prompt comes back with the globals and the session as they were. Without the
  -- cancellation the REPL would wait in the run until the watchdog killed it (status 137).
  it("cancels the running step on Ctrl-C in interactive mode and keeps its state", function()
    local script = tmpfile([=[
exe=$1
d=$(mktemp -d); mkfifo "$d/in"
"$exe" -i < "$d/in" > "$d/out" 2>&1 &
pid=$!
(sleep 120; kill -9 $pid) >/dev/null 2>&1 & watchdog=$!
exec 3> "$d/in"
cat >&3 <<'LUA'
x = 41
s = tfdev.session()
s:create{node = {{name = "q", op = "FIFOQueueV2", attr = {component_types = {"float32"}}}, {name = "dq", op = "QueueDequeueV2", input = {"q"}, attr = {component_types = {"float32"}}}, {name = "c", op = "Const", attr = {value = tfdev.tensor(2.5)}}}}
print("blocking") io.stdout:flush()
s:run({}, "dq")
LUA
for i in $(seq 300); do grep -q blocking "$d/out" && break; sleep 0.1; done
sleep 1
kill -INT $pid
echo 'print("after", x + 1, s:run({}, "c"):item())' >&3
exec 3>&-
wait $pid; echo "status=$?"
kill $watchdog 2>/dev/null
cat "$d/out"; rm -rf "$d"
]=])
    local out, code = run("bash " .. script .. " " .. exe)
    os.remove(script)
    assert.are.equal(0, code)
    assert.truthy(out:find("status=0", 1, true), out)
    assert.truthy(out:find("interrupted", 1, true), out)
    assert.truthy(out:find("after\t42\t2.5\n", 1, true), out)
  end)
end)
