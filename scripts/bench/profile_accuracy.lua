-- How right the profiler is (docs/profiling.md, "Accuracy"), on the current GPU:
--   1. CUPTI's per-kernel device time (cu.profile) against events around single launches (each
--      launch queued behind a short sleep, so that event, kernel and event run back to back; the
--      events in a run without the profiler, CUPTI's rows in a run with it);
--   2. hardware counters (cu.bench{counters = true}) of the add at 1 GiB and f32 matmuls: the
--      verdict, DRAM traffic, the throughputs;
--   3. with `single=add|matmul`: one launch of that kernel only (run it under ncu to compare), and
--      with `single=counters` culua's counters of the same single launches:
--        ncu --clock-control none --cache-control all --metrics <M> culua profile_accuracy.lua single=add
--        culua profile_accuracy.lua single=counters
--      M = dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active
--   culua scripts/bench/profile_accuracy.lua [--quick] [single=...]
assert(cu.backend == "cuda", "profile_accuracy.lua needs the CUDA backend (CUPTI)")
local opt = {}
for _, a in ipairs(arg or {}) do
  local k, v = a:match("^([%w_]+)=(.*)$")
  if k then opt[k] = v elseif a == "--quick" then opt.quick = true else error("unknown argument " .. a, 0) end
end

local GiB_f32 = 1 << 28
local function add_arrays(n) return cu.ones(n), cu.ones(n), cu.empty(n) end
local function matmul_arrays(m) return cu.rand({ m, m }), cu.rand({ m, m }), cu.empty({ m, m }) end
local COMPARED = { "dram__throughput.avg.pct_of_peak_sustained_elapsed",
  "sm__warps_active.avg.pct_of_peak_sustained_active", "gpu__time_duration.sum", "dram__bytes_read.sum",
  "dram__bytes_write.sum" }

if opt.single == "add" or opt.single == "matmul" then
  local x, y, z
  if opt.single == "add" then x, y, z = add_arrays(GiB_f32) else x, y, z = matmul_arrays(4096) end
  cu.sync()
  if opt.single == "add" then cu.add(x, y, { out = z }) else cu.matmul(x, y, { out = z }) end
  cu.sync()
  return
elseif opt.single == "counters" then
  for _, what in ipairs({ "add", "matmul" }) do
    local x, y, z
    if what == "add" then x, y, z = add_arrays(GiB_f32) else x, y, z = matmul_arrays(4096) end
    local fn = what == "add" and function() cu.add(x, y, { out = z }) end or function() cu.matmul(x, y, { out = z }) end
    local r = cu.bench(fn, { counters = COMPARED, max_time = 1 })
    local c = r.counters
    print(string.format("culua %s: dram_throughput %.2f%% (raw over the range %.2f%%), occupancy %.2f%%, " ..
      "kernel %.1f us, range %.1f us, dram read %.4g write %.4g", what, 100 * c.dram_throughput,
      c.metrics[COMPARED[1]], c.metrics[COMPARED[2]], 1e3 * c.time_ms, 1e3 * c.range_ms,
      c.dram_read_bytes, c.dram_write_bytes))
    x:free(); y:free(); z:free()
  end
  return
end

print("1. CUPTI's kernel time against events around single launches (median of 30 launches each)")
print(string.format("%12s %12s %12s %10s", "n (f32)", "events us", "CUPTI us", "difference"))
local function median(t)
  table.sort(t)
  return #t % 2 == 1 and t[(#t + 1) // 2] or (t[#t // 2] + t[#t // 2 + 1]) / 2
end
local sizes = opt.quick and { 1 << 20, 1 << 22 } or { 1 << 20, 1 << 22, 1 << 24, 1 << 26, 1 << 28 }
for _, n in ipairs(sizes) do
  local x, y, z = add_arrays(n)
  for _ = 1, 5 do cu.add(x, y, { out = z }) end
  local function launches(k)
    local e = {}
    for i = 1, k do
      e[i] = { cu.event(), cu.event() }
      cu.sleep(0.2)
      e[i][1]:record()
      cu.add(x, y, { out = z })
      e[i][2]:record()
    end
    cu.sync()
    return e
  end
  local ev = {}
  for i, pair in ipairs(launches(30)) do ev[i] = pair[1]:elapsed(pair[2]) * 1e3 end
  local p = cu.profile(function() launches(30) end)
  local k = {}
  for _, r in ipairs(p.rows) do
    if r.operation == "add" then k[#k + 1] = r.duration_us end
  end
  local e_us, k_us = median(ev), median(k)
  print(string.format("%12d %12.2f %12.2f %9.2f%%", n, e_us, k_us, 100 * (e_us - k_us) / k_us))
  print(string.format("RESULT events_vs_cupti_%d=%.4f", n, (e_us - k_us) / k_us))
  x:free(); y:free(); z:free()
end

print("\n2. Hardware counters and the verdict")
local rows = {}
local function show(r)
  local c = r.counters
  print(tostring(r))
  print(string.format("   DRAM %.4g B read, %.4g B written, %.0f GB/s (%.1f%% of the measured copy's %.0f GB/s); " ..
    "throughput: DRAM %.1f%%, SM %.1f%%, memory %.1f%%; occupancy %.1f%%; L1 hits %.1f%%, L2 hits %.1f%%; " ..
    "%.4g FLOP %s (%.2f TFLOP/s); %d passes; range %.3f ms for %.3f ms of benchmark",
    c.dram_read_bytes, c.dram_write_bytes, c.dram_GBps, 100 * c.dram_share, c.peaks.dram_GBps,
    100 * c.dram_throughput, 100 * c.sm_throughput, 100 * c.memory_throughput, 100 * c.occupancy,
    100 * (c.l1_hit_rate or 0), 100 * (c.l2_hit_rate or 0), (c.flops.fp32 or 0) + (c.flops.fp64 or 0) +
    (c.flops.fp16 or 0), c.precision or "", c.TFLOPs or 0, c.passes, c.range_ms, c.time_ms))
  rows[#rows + 1] = r
end
do
  local x, y, z = add_arrays(opt.quick and (1 << 24) or GiB_f32)
  local r = cu.bench(function() cu.add(x, y, { out = z }) end,
    { counters = true, max_time = 2, name = "add f32 (1 GiB each)" })
  show(r)
  print(string.format("RESULT add_bound=%s\nRESULT add_dram_share=%.4f", r.bound, r.counters.dram_share))
  x:free(); y:free(); z:free()
end
for _, m in ipairs(opt.quick and { 1024 } or { 4096, 8192 }) do
  local a, b, c = matmul_arrays(m)
  local r = cu.bench(function() cu.matmul(a, b, { out = c }) end,
    { counters = true, max_time = 3, flops = 2 * m ^ 3, name = string.format("matmul f32 %d^3", m) })
  show(r)
  print(string.format("RESULT matmul_%d_bound=%s", m, r.bound))
  a:free(); b:free(); c:free()
end
if opt.roofline then
  cu.plot(rows, { kind = "roofline", file = opt.roofline,
    title = "add and matmul on " .. cu.devices()[cu.device() + 1].name })
end
if opt.rows then
  local f = assert(io.open(opt.rows, "w"))
  local list = {}
  for i, r in ipairs(rows) do list[i] = r:json() end
  f:write("[" .. table.concat(list, ",\n") .. "]\n")
  f:close()
end
