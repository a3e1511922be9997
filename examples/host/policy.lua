-- A small policy network for the example host: 16 observations in, 4 action scores out, through
-- two hidden layers of 64 (weights from a fixed-seed generator, as a trained model's would be
-- loaded). Each frame the host calls policy.frame(n): it picks up a finished step's actions, if
-- any, and starts the next step from the current observations, never waiting for one.
local tfdev = require "tfdev"

local OBS, HIDDEN, ACTIONS = 16, 64, 4

local seed = 12345
local function rand() -- a small LCG: the same weights on every machine
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed / 2147483648 - 0.5
end

local function matrix(rows, cols)
  local m = {}
  for r = 1, rows do
    m[r] = {}
    for c = 1, cols do m[r][c] = rand() * 0.5 end
  end
  return m
end

local g = tfdev.graph()
local obs = g:placeholder("float32", { 1, OBS }, { name = "obs" })
local h1 = g:relu(g:matmul(obs, g:const(matrix(OBS, HIDDEN), { dtype = "float32" })))
local h2 = g:relu(g:matmul(h1, g:const(matrix(HIDDEN, HIDDEN), { dtype = "float32" })))
g:op("Identity", { g:matmul(h2, g:const(matrix(HIDDEN, ACTIONS), { dtype = "float32" })) }, { name = "actions" })

local session = tfdev.session { intra_op_threads = 1 }
session:create(g)
local step = session:make_callable { feeds = { "obs" }, fetches = "actions" }
local input = tfdev.tensor { dtype = "float32", shape = { 1, OBS } } -- written in place each frame
local values = {}
step(input) -- one step now, so the frame loop never pays for building executors

local policy = { steps = 0, last_action = 0, step_ms = {} }
local pending, started_at

function policy.frame(n)
  local done = 0
  if pending and pending:ready() then
    local scores = pending:result():totable()[1]
    local best = 1
    for a = 2, ACTIONS do if scores[a] > scores[best] then best = a end end
    policy.last_action = best
    policy.steps = policy.steps + 1
    policy.step_ms[#policy.step_ms + 1] = (tfdev.clock() - started_at) * 1000
    pending, done = nil, 1
  end
  if not pending then
    for i = 1, OBS do values[i] = math.sin(n * 0.05 + i) end
    input:copy_from(string.pack(("<" .. ("f"):rep(OBS)), table.unpack(values)))
    started_at = tfdev.clock()
    pending = step:run_async(input)
  end
  return done
end

function policy.median_step_ms()
  local t = {}
  for i, v in ipairs(policy.step_ms) do t[i] = v end
  table.sort(t)
  return #t > 0 and t[(#t + 1) // 2] or 0
end

function policy.close()
  if pending then pending:close() end
  session:close()
end

return policy
