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

--- The bytes of the file at `path`, or nil when it cannot be opened (a model or reference that is
--- not in this checkout: the specs that read them are pending then).
--- A fresh empty directory for each test, removed after it: call in a describe block with busted's
--- hooks (helpers cannot see the spec's environment); returns a function giving the test's directory.
function helpers.temp_dirs(before_each, after_each)
  local dir
  before_each(function()
    dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir -p '" .. dir .. "'"))
  end)
  after_each(function() os.execute("rm -rf '" .. dir .. "'") end)
  return function() return dir end
end

function helpers.read_file(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

--- The feeds and fetches of a model's decoded reference.json: input i (from 0) read from
--- `prefix .. "input_<i>.bin"`, each output fetched by name.
function helpers.reference_feeds(ref, prefix)
  local feeds, fetches = {}, {}
  for i, input in ipairs(ref.inputs) do
    feeds[input.name] = tfdev.from_bytes(input.dtype, input.shape, helpers.read_file(prefix .. "input_" .. (i - 1) .. ".bin"))
  end
  for i, o in ipairs(ref.outputs) do fetches[i] = o.name .. ":0" end
  return feeds, fetches
end

--- Runs the Lua source `src` in a fresh tfdev process (TFDEV_EXE, set by ctest), so that a crash or
--- a hang fails the spec rather than ending the run, and finalizers at state close run. A run past
--- `timeout_s` seconds (default 60) is killed: exit status 124. Returns its output (stdout and
--- stderr) and its exit status.
function helpers.run_child(src, timeout_s)
  local exe = assert(os.getenv("TFDEV_EXE"), "TFDEV_EXE must name the tfdev executable (ctest sets it)")
  local name = os.tmpname()
  local f = assert(io.open(name, "w"))
  f:write(src)
  f:close()
  local p = io.popen(string.format("timeout -k 5 %d %s %s 2>&1; echo \"exit=$?\"", timeout_s or 60, exe, name))
  local out = p:read("a")
  p:close()
  os.remove(name)
  local body, code = out:match("^(.-)exit=(%d+)%s*$")
  return body, tonumber(code)
end

--- The GraphDef table of y = -(x * x), x a float32 Placeholder (nodes "x", "sq", "y").
function helpers.neg_square_graph()
  return { node = {
    { name = "x", op = "Placeholder", attr = { dtype = "float32" } },
    { name = "sq", op = "Square", input = { "x" } },
    { name = "y", op = "Neg", input = { "sq" } },
  } }
end

--- Runs one node "y" of `op` over Const inputs; the op itself runs (no constant folding) unless
--- `fold`. Returns the tensors of `fetches` (a list; default {"y"}).
function helpers.run_node(op, inputs, attrs, fetches, fold)
  local g = { node = {} }
  local names = {}
  for i, t in ipairs(inputs) do
    names[i] = "in" .. i
    g.node[#g.node + 1] = { name = names[i], op = "Const", attr = { value = t } }
  end
  g.node[#g.node + 1] = { name = "y", op = op, input = names, attr = attrs or {} }
  local s <close> = tfdev.session { optimize_graph = fold or false }
  s:create(g)
  return s:run({}, fetches or { "y" })
end

--- Runs one node "y" of `op` over inputs fed to Placeholders of unknown shape, so that the kernel, not
--- shape inference, sees them. Returns y's first `nout` outputs (one when nout is nil).
function helpers.run_fed(op, inputs, attrs, nout)
  local g, names, feeds = { node = {} }, {}, {}
  for i, t in ipairs(inputs) do
    names[i] = "in" .. i
    feeds[names[i]] = t
    g.node[i] = { name = names[i], op = "Placeholder", attr = { dtype = t.dtype } }
  end
  g.node[#g.node + 1] = { name = "y", op = op, input = names, attr = attrs or {} }
  local fetches = { "y" }
  for i = 1, nout or 0 do fetches[i] = "y:" .. (i - 1) end
  local s <close> = tfdev.session { optimize_graph = false }
  s:create(g)
  return table.unpack(s:run(feeds, fetches))
end

--- TensorFlow's sliding window for one dimension: the output size and the padding before it.
--- padding is "SAME", "VALID" or "EXPLICIT" (then `explicit` = {before, after}).
function helpers.window(n, k, stride, dilation, padding, explicit)
  local span = (k - 1) * dilation + 1
  if padding == "SAME" then
    local out = (n + stride - 1) // stride
    return out, math.max((out - 1) * stride + span - n, 0) // 2
  elseif padding == "VALID" then
    return n >= span and (n - span) // stride + 1 or 0, 0
  end
  local padded = n + explicit[1] + explicit[2]
  return padded >= span and (padded - span) // stride + 1 or 0, explicit[1]
end

--- A nested table of `dims` holding deterministic values in [-1, 1] (a linear congruential sequence from seed).
function helpers.random_values(dims, seed)
  local function fill(d)
    local t = {}
    for i = 1, dims[d] do
      if d == #dims then
        seed = (seed * 1103515245 + 12345) % 2147483648
        t[i] = (seed % 2001) / 1000 - 1
      else
        t[i] = fill(d + 1)
      end
    end
    return t
  end
  return fill(1)
end

--- Asserts two nested tables of numbers have the same shape and values within tol, naming the first
--- element that differs.
function helpers.assert_close(want, got, tol, path)
  path = path or ""
  if type(want) == "table" then
    assert(type(got) == "table" and #got == #want,
      string.format("%s: expected %d items, got %s", path, #want, type(got) == "table" and #got or type(got)))
    for i = 1, #want do helpers.assert_close(want[i], got[i], tol, path .. "[" .. i .. "]") end
  else
    assert(math.abs(want - got) <= tol, string.format("%s: expected %.7g, got %.7g", path, want, got))
  end
end

-- Direct convolution in Lua, as TensorFlow defines it: x[n][y][x][c] (NHWC), f[ky][kx][c][o] (HWIO),
-- or f[ky][kx][c][m] with o.depthwise; o.strides, o.dilations, o.padding, o.explicit_paddings as the
-- op's attrs. o.bias, o.relu and o.prelu (per channel) for the fused forms; o.add, o.mul and o.zero
-- to compute in another arithmetic (integers that wrap, say).
function helpers.conv_reference(x, f, o)
  local add, mul = o.add or function(a, b) return a + b end, o.mul or function(a, b) return a * b end
  local N, H, W, C = #x, #x[1], #x[1][1], #x[1][1][1]
  local KH, KW, M = #f, #f[1], #f[1][1][1]
  local sh, sw = o.strides[2], o.strides[3]
  local dh, dw = o.dilations and o.dilations[2] or 1, o.dilations and o.dilations[3] or 1
  local ex = o.explicit_paddings or { 0, 0, 0, 0, 0, 0, 0, 0 }
  local OH, pt = helpers.window(H, KH, sh, dh, o.padding, { ex[3], ex[4] })
  local OW, pl = helpers.window(W, KW, sw, dw, o.padding, { ex[5], ex[6] })
  local out = {}
  for n = 1, N do
    out[n] = {}
    for oy = 1, OH do
      out[n][oy] = {}
      for ox = 1, OW do
        local v = {}
        for q = 1, o.depthwise and C * M or M do v[q] = o.bias and o.bias[q] or o.zero or 0 end
        for ky = 1, KH do
          local iy = (oy - 1) * sh + (ky - 1) * dh - pt + 1
          for kx = 1, KW do
            local ix = (ox - 1) * sw + (kx - 1) * dw - pl + 1
            if iy >= 1 and iy <= H and ix >= 1 and ix <= W then
              local px = x[n][iy][ix]
              for c = 1, C do
                for m = 1, M do
                  local q = o.depthwise and (c - 1) * M + m or m
                  v[q] = add(v[q], mul(px[c], f[ky][kx][c][m]))
                end
              end
            end
          end
        end
        if o.relu then for q = 1, #v do v[q] = math.max(v[q], 0) end end
        if o.prelu then for q = 1, #v do v[q] = v[q] > 0 and v[q] or o.prelu[q] * v[q] end end
        out[n][oy][ox] = v
      end
    end
  end
  return out
end

-- MaxPool (from o.lowest, default -inf) or AvgPool (over the in-bounds elements) in Lua, NHWC;
-- o.ksize, o.strides, o.padding as the op's attrs, o.max for MaxPool.
function helpers.pool_reference(x, o)
  local N, H, W, C = #x, #x[1], #x[1][1], #x[1][1][1]
  local OH, pt = helpers.window(H, o.ksize[2], o.strides[2], 1, o.padding, {})
  local OW, pl = helpers.window(W, o.ksize[3], o.strides[3], 1, o.padding, {})
  local out = {}
  for n = 1, N do
    out[n] = {}
    for oy = 1, OH do
      out[n][oy] = {}
      for ox = 1, OW do
        local v = {}
        for c = 1, C do
          local acc, count = o.max and (o.lowest or -math.huge) or 0, 0
          for ky = 1, o.ksize[2] do
            local iy = (oy - 1) * o.strides[2] + ky - pt
            for kx = 1, o.ksize[3] do
              local ix = (ox - 1) * o.strides[3] + kx - pl
              if iy >= 1 and iy <= H and ix >= 1 and ix <= W then
                local e = x[n][iy][ix][c]
                if o.max then acc = e > acc and e or acc else acc = acc + e end
                count = count + 1
              end
            end
          end
          v[c] = o.max and acc or acc / count
        end
        out[n][oy][ox] = v
      end
    end
  end
  return out
end

return helpers
