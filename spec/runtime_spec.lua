-- Threads a session may use, from Lua: TensorFlow's synchronous session (inter_op_threads = -1) and
-- the run option inter_op_thread_pool = -1 run every node on the calling thread; a traced run says
-- so (thread_id 0 for every node).
local tfdev = require "tfdev"
local h = require "spec.support.helpers"

local function wide()
  local nodes = { { name = "x", op = "Placeholder", attr = { dtype = "float32" } } }
  local prev = "x"
  for b = 1, 8 do
    nodes[#nodes + 1] = { name = "sq" .. b, op = "Square", input = { "x" } }
    nodes[#nodes + 1] = { name = "sum" .. b, op = "AddV2", input = { prev, "sq" .. b } }
    prev = "sum" .. b
  end
  return { node = nodes }
end

local function threads_used(meta)
  local ids, nodes = {}, 0
  for _, d in ipairs(meta.step_stats.dev_stats) do
    for _, n in ipairs(d.node_stats) do
      ids[n.thread_id] = true
      nodes = nodes + 1
    end
  end
  return ids, nodes
end

describe("synchronous sessions", function()
  local x = tfdev.tensor({ 1, 2, 3 }, "float32")

  it("run every node on the calling thread with inter_op_threads = -1", function()
    local s <close> = tfdev.session { inter_op_threads = -1 }
    s:create(wide())
    local y, meta = s:run({ x = x }, "sum8", nil, { trace = true })
    assert.are.same({ 9, 34, 75 }, y:totable())
    local ids, nodes = threads_used(meta)
    assert.is_true(nodes >= 17)
    assert.are.same({ [0] = true }, ids)
  end)

  it("run one step on the calling thread with the run option inter_op_thread_pool = -1", function()
    local s <close> = tfdev.session { device_count = { CPU = 2 } }
    local g = wide()
    g.node[6].device = "/device:CPU:1" -- a second partition, fed and feeding through _Send/_Recv
    s:create(g)
    local y, meta = s:run({ x = x }, "sum8", nil, { trace = true, inter_op_thread_pool = -1 })
    assert.are.same({ 9, 34, 75 }, y:totable())
    assert.are.same({ [0] = true }, (threads_used(meta)))
    h.raises("INVALID_ARGUMENT", "Invalid inter_op_thread_pool: 3",
      s.run, s, { x = x }, "sum8", nil, { inter_op_thread_pool = 3 })
  end)
end)
