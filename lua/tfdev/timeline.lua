-- tfdev.timeline(run_metadata): Chrome trace JSON (chrome://tracing, Perfetto) from step stats.
-- One process per device, one track per thread, one complete ("X") event per node.
local json = require "tfdev.json"

return function(meta)
  local events = {}
  local stats = meta and meta.step_stats
  if not stats then error("tfdev.timeline: run metadata has no step_stats (run with {trace = true})", 2) end
  for pid, dev in ipairs(stats.dev_stats or {}) do
    events[#events + 1] = { name = "process_name", ph = "M", pid = pid, tid = 0, args = { name = dev.device } }
    events[#events + 1] = { name = "process_sort_index", ph = "M", pid = pid, tid = 0, args = { sort_index = pid } }
    for _, n in ipairs(dev.node_stats or {}) do
      events[#events + 1] = {
        name = n.node_name, cat = "Op", ph = "X", pid = pid, tid = n.thread_id,
        ts = n.all_start_micros, dur = math.max(n.all_end_rel_micros, 0),
        args = { name = n.node_name, op = n.op, output_bytes = n.output_bytes },
      }
    end
  end
  return json.encode({ traceEvents = events, displayTimeUnit = "ns" })
end
