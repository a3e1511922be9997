-- tfdev -i, the REPL: driven through a pipe (stdin is not a terminal, so no prompts and no readline),
-- and through a pseudo-terminal (util-linux `script`) for readline's history file.
local exe = os.getenv("TFDEV_EXE")

local function shell_quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

-- Feeds `input` to `tfdev -i`; returns stdout, stderr and the exit status.
local function repl(input, env)
  local inf, outf, errf = os.tmpname(), os.tmpname(), os.tmpname()
  local f = assert(io.open(inf, "w"))
  f:write(input)
  f:close()
  local ok, _, code = os.execute(string.format("%s %s -i < %s > %s 2> %s", env or "", exe, inf, outf, errf))
  local function slurp(name)
    local g = assert(io.open(name))
    local s = g:read("a")
    g:close()
    os.remove(name)
    return s
  end
  os.remove(inf)
  local out, err = slurp(outf), slurp(errf)
  return out, err, ok and 0 or code
end

-- Output after the version banner that -i prints first.
local function results(out)
  local banner, rest = out:match("^(tfdev [^\n]*\n)(.*)$")
  assert(banner, "no version banner in: " .. out)
  return rest
end

describe("tfdev -i", function()
  it("has tfdev at hand as a global", function()
    local out, _, code = repl("tfdev.tensor{1, 2}\ntype(tfdev.session)\n")
    assert.are.equal(0, code)
    assert.truthy(out:find("function", 1, true), out)
    assert.truthy(out:find("tfdev.tensor(int32, shape={2}): [1, 2]", 1, true), out)
  end)

  assert(exe, "TFDEV_EXE must name the tfdev executable (ctest sets it)")

  it("prints the values of expressions and of =expr, and nothing for statements", function()
    local out, err, code = repl("x = 20\nx + 1\n=x * 2\nlocal y = 5\n1, nil, 'two'\n")
    assert.are.equal(0, code)
    assert.are.equal("", err)
    assert.are.equal("21\n40\n1\tnil\ttwo\n", results(out))
  end)

  it("prints tables as constructors: keys sorted, nested tables depth-limited, cycles marked", function()
    local out, _, code = repl("t = {3, 2, 1, b = 's', a = {c = {d = {e = 1}}}, [10] = 2, [true] = 0}\nt\n" ..
      "c = {} c.self = c return c\n{}\n")
    assert.are.equal(0, code)
    assert.are.equal("{3, 2, 1, [10] = 2, a = {c = {d = {...}}}, b = \"s\", [true] = 0}\n" ..
      "{self = <cycle>}\n{}\n", results(out))
  end)

  it("cuts long tables short", function()
    local out = repl("local t = {} for i = 1, 100 do t[i] = i end return t\n")
    local line = results(out)
    assert.truthy(line:find("^{1, 2, 3, "), line)
    assert.truthy(line:find(", 40, ... (60 more)}\n", 1, true), line)
  end)

  it("prints tensors and anything else with __tostring through it", function()
    local out, _, code = repl("tfdev = require 'tfdev'\ntfdev.tensor{{1, 2}, {3, 4}}\n" ..
      "setmetatable({}, {__tostring = function() return 'custom' end})\n{t = tfdev.tensor{true}}\n")
    assert.are.equal(0, code)
    assert.are.equal("tfdev.tensor(int32, shape={2, 2}): [[1, 2], [3, 4]]\ncustom\n" ..
      "{t = tfdev.tensor(bool, shape={1}): [true]}\n", results(out))
  end)

  it("prints errors, with tfdev.error codes, and goes on", function()
    local out, err, code = repl("error('boom')\n1 + 1\ntfdev = require 'tfdev'\ntfdev.tensor{{1}, {1, 2}}\n" ..
      "x = = 1\n'still here'\n")
    assert.are.equal(0, code)
    assert.are.equal("2\nstill here\n", results(out))
    assert.truthy(err:find("stdin:1: boom\nstack traceback:", 1, true), err)
    assert.truthy(err:find("INVALID_ARGUMENT: ragged nested table: element [2] has 2 entries, expected 1", 1, true), err)
    assert.truthy(err:find("stdin:1: unexpected symbol near '='", 1, true), err)
  end)

  it("reads continuation lines until a chunk is complete", function()
    local out, err, code = repl("for i = 1, 2 do\nprint(i)\nend\nfunction add(a,\nb)\nreturn a + b end\nadd(1,\n2)\n" ..
      "s = [[one\ntwo]]\n#s\n")
    assert.are.equal(0, code)
    assert.are.equal("", err)
    assert.are.equal("1\n2\n3\n7\n", results(out))
  end)

  it("reports a chunk left unfinished at the end of input, and exits on EOF", function()
    local out, err, code = repl("x = 1\nif x then\nprint(x)\n")
    assert.are.equal(0, code)
    assert.are.equal("", results(out))
    assert.truthy(err:find("stdin:2: 'end' expected (to close 'if' at line 1) near <eof>", 1, true), err)
    out, err, code = repl("")
    assert.are.equal(0, code)
    assert.are.equal("", results(out))
    assert.are.equal("", err)
  end)

  it("reads lines longer than any buffer", function()
    local out = repl("s = '" .. string.rep("a", 10000) .. "'\n#s\n")
    assert.are.equal("10000\n", results(out))
  end)

  it("runs a script first and keeps its globals", function()
    local script = os.tmpname()
    local f = assert(io.open(script, "w"))
    f:write("answer = 42\n")
    f:close()
    local inf = os.tmpname()
    f = assert(io.open(inf, "w"))
    f:write("answer\n")
    f:close()
    local p = io.popen(exe .. " -i " .. script .. " < " .. inf .. " 2>&1")
    local out = p:read("a")
    p:close()
    os.remove(script)
    os.remove(inf)
    assert.are.equal("42\n", results(out))
  end)

  -- readline only runs on a terminal: `script` gives the REPL one. Skipped where the executable
  -- was built without libreadline or util-linux's script is missing.
  describe("on a terminal, with readline", function()
    local has_script = os.execute("command -v script >/dev/null 2>&1")
    local p = io.popen("ldd " .. shell_quote(exe) .. " 2>/dev/null")
    local has_readline = p:read("a"):find("libreadline", 1, true) ~= nil
    p:close()
    local function on_tty(input, env)
      local inf, outf = os.tmpname(), os.tmpname()
      local f = assert(io.open(inf, "w"))
      f:write(input)
      f:close()
      local ok = os.execute(string.format("%s timeout 20 script -qec %s /dev/null < %s > %s 2>&1", env, shell_quote(exe .. " -i"),
        inf, outf))
      f = assert(io.open(outf))
      local out = f:read("a")
      f:close()
      os.remove(inf)
      os.remove(outf)
      return ok, out
    end

    if not (has_script and has_readline) then
      pending("needs util-linux script and a tfdev built with libreadline")
      return
    end

    it("keeps history in ~/.tfdev_history, appending across sessions", function()
      local home = os.tmpname()
      os.remove(home)
      assert(os.execute("mkdir " .. shell_quote(home)))
      local ok, out = on_tty("x = 6 * 7\nx\nfor i = 1, 2 do\nprint(i) end\n\4", "HOME=" .. shell_quote(home))
      assert.is_true(ok, out)
      -- the prompt, then the value, once readline's escape sequences and carriage returns are gone
      local plain = out:gsub("\27%[[%d;?]*%a", ""):gsub("\r", "")
      assert.truthy(plain:find("> x\n42\n", 1, true), plain)
      assert.truthy(plain:find(">> print(i) end\n1\n2\n", 1, true), plain)
      ok = on_tty("'again'\n\4", "HOME=" .. shell_quote(home))
      assert.is_true(ok)
      local f = assert(io.open(home .. "/.tfdev_history"))
      local history = f:read("a")
      f:close()
      os.execute("rm -rf " .. shell_quote(home))
      assert.are.equal("x = 6 * 7\nx\nfor i = 1, 2 do\nprint(i) end\n'again'\n", history)
    end)

    it("works without a history file when HOME is unset", function()
      local ok, out = on_tty("6 * 7\n\4", "env -u HOME")
      assert.is_true(ok, out)
      assert.truthy(out:find("42", 1, true), out)
    end)
  end)
end)
