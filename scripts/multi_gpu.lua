-- Several GPUs: data-parallel normalization with one allreduce.
--
-- The arrays of the streams experiment (scripts/streams_overlap.lua: ten arrays of 10M f32 in
-- pinned host memory) normalized as one data set, a <- a / sum(all arrays), split over G GPUs
-- (G = 1, 2, ..., every GPU): each GPU copies its share of the arrays in, sums them into a 0-d
-- device array (the sums never leave the device), one NCCL allreduce makes that partial sum the
-- global one on every GPU, and each GPU divides its arrays by it and copies them out. Every GPU
-- works on its own stream; nothing but the allreduce crosses devices.
--
-- Timed twice: the step with the data already on the devices (the sums, the allreduce, the
-- division), and the whole step with the copies in and out. Both as the span on the host clock:
-- every device idle before, every device synchronized after (events of different devices cannot
-- be compared); the median of `reps`.
-- Runs on one GPU too (G = 1 only), and on the host backend, where cu.nccl does not exist: there
-- the partial sums meet through copies between the (simulated, CULUA_HOST_DEVICES=N) devices.
--
--   culua scripts/multi_gpu.lua [arrays=10] [n=10000000] [reps=5] [inner=20] [gpus=N] [--quick]
--                               [--results]

local script = require "cu.script"
local opt, flags = script.args(arg, "key=value, --quick or --results")
local results = script.results()
local function int(key, default)
  local v = opt[key] and math.tointeger(tonumber(opt[key]))
  if opt[key] and not v then error(string.format("%s=%s is not an integer", key, opt[key]), 0) end
  return v or default
end

local gpu = cu.backend == "cuda"
local count = int("arrays", 10)
local n = int("n", flags.quick and 1 << 18 or (gpu and 10000000 or 1000000))
local reps = int("reps", flags.quick and 2 or 5)
local inner = int("inner", flags.quick and 2 or 20)
local devices = cu.devices()
local max_gpus = math.min(int("gpus", #devices), #devices)
assert(count >= 1 and n >= 1 and reps >= 1 and inner >= 1 and max_gpus >= 1,
  "arrays, n, reps, inner and gpus must be at least 1")
local use_nccl = cu.nccl.available()

print(string.format("multi_gpu: %d arrays of %d f32 (%.1f MB each), normalized as one data set on 1..%d %s of "
  .. "the %s backend (%s)", count, n, n * 4 / 1e6, max_gpus, gpu and "GPUs" or "devices", cu.backend,
  devices[1].name))
if not use_nccl then
  print("(cu.nccl is not available here: the partial sums meet through copies between devices)")
end

-- The data, in pinned host memory: the same for every G.
local hin, hout = {}, {}
for i = 1, count do
  hin[i] = cu.host.rand(n, { seed = 100 + i, pinned = true })
  hout[i] = cu.host.empty(n, { pinned = true })
end

-- The set-up of G devices, not timed: array i goes to device (i - 1) % G; per device a stream,
-- its arrays, a 0-d partial sum and a scratch 0-d for the sum of one array.
local function setup(G)
  local per = {}
  for g = 1, G do
    local _ <close> = cu.use_device(g - 1)
    per[g] = { device = g - 1, stream = cu.stream(), arrays = {}, index = {}, partial = cu.zeros({}),
      one = cu.empty({}) }
  end
  for i = 1, count do
    local p = per[(i - 1) % G + 1]
    local _ <close> = cu.use_device(p.device)
    p.arrays[#p.arrays + 1] = cu.empty(n)
    p.index[#p.index + 1] = i
  end
  local comm = use_nccl and cu.nccl.comm((function()
    local list = {}
    for g = 1, G do list[g] = g - 1 end
    return list
  end)()) or nil
  return per, comm
end

local function sync_all(G)
  for g = 0, G - 1 do
    local _ <close> = cu.use_device(g)
    cu.sync()
  end
end

-- One step on G devices: everything queued, then every device synchronized.
local function step(G, per, comm, copies)
  for g = 1, G do
    local p = per[g]
    local _ <close> = cu.use_device(p.device)
    local _ <close> = cu.use_stream(p.stream)
    p.partial:fill(0)
    for k, d in ipairs(p.arrays) do
      if copies then cu.copy(d, hin[p.index[k]]) end
      d:sum({ out = p.one })
      cu.add(p.partial, p.one, { out = p.partial })
    end
  end
  if comm then
    local partials = {}
    for g = 1, G do partials[g] = per[g].partial end
    local streams = {}
    for g = 1, G do streams[g] = per[g].stream end
    comm:allreduce(partials, { op = "sum", stream = streams })
  elseif G > 1 then
    -- Without NCCL: every partial copied to device 0 (its stream waits for the others'), added
    -- there, the total copied back on each device's stream.
    local s0 = per[1].stream
    local _ <close> = cu.use_device(0)
    local _ <close> = cu.use_stream(s0)
    for g = 2, G do s0:wait(per[g].stream) end
    local total, tmp = cu.zeros({}), cu.empty({})
    for g = 1, G do
      cu.copy(tmp, per[g].partial)
      cu.add(total, tmp, { out = total })
    end
    for g = 1, G do cu.copy(per[g].partial, total, { stream = per[g].stream }) end
  end
  for g = 1, G do
    local p = per[g]
    local _ <close> = cu.use_device(p.device)
    local _ <close> = cu.use_stream(p.stream)
    for k, d in ipairs(p.arrays) do
      cu.div(d, p.partial, { out = d })
      if copies then cu.copy(hout[p.index[k]], d) end
    end
  end
  if copies then sync_all(G) end
end

local function median(t)
  local s = {}
  for i, v in ipairs(t) do s[i] = v end
  table.sort(s)
  local m = #s // 2
  return #s % 2 == 1 and s[m + 1] or (s[m] + s[m + 1]) / 2
end

-- The reference: the global sum on the host (f64 accumulation of the f32 data).
local total = 0
for i = 1, count do total = total + hin[i]:astype("f64"):sum():item() end

local rows = {}
for G = 1, max_gpus do
  local per, comm = setup(G)
  sync_all(G)
  step(G, per, comm, true) -- warm-up: first launches, pool growth, NCCL's first collective
  -- The data already on the devices: the sums, the allreduce and the division only, `inner` steps
  -- queued back to back between the synchronizations (one step alone is well under a millisecond
  -- on a GPU: the host's clock and synchronization would be part of the figure).
  local resident = {}
  for r = 1, reps do
    sync_all(G)
    local t0 = cu.clock({ warn = false })
    for _ = 1, inner do step(G, per, comm, false) end
    sync_all(G)
    resident[r] = (cu.clock({ warn = false }) - t0) * 1e3 / inner
  end
  local times = {}
  for r = 1, reps do
    for i = 1, count do hout[i]:fill(0) end
    sync_all(G)
    local t0 = cu.clock({ warn = false })
    step(G, per, comm, true)
    times[r] = (cu.clock({ warn = false }) - t0) * 1e3
  end
  -- Check: the outputs sum to 1 together and each is its input over the global sum.
  local out_sum, worst = 0, 0
  for i = 1, count do
    out_sum = out_sum + hout[i]:astype("f64"):sum():item()
    local rel = cu.abs(hout[i]:astype("f64") * total - hin[i]:astype("f64")):max():item()
    worst = math.max(worst, rel / (hin[i]:max():item() + 1e-30))
  end
  assert(math.abs(out_sum - 1) < 1e-3, string.format("G=%d: the outputs sum to %.6f, not 1", G, out_sum))
  assert(worst < 1e-3, string.format("G=%d: an output is not its input over the global sum (off by %.3e)", G, worst))
  if comm then comm:free() end
  rows[G] = { gpus = G, ms = median(times), resident_ms = median(resident), min_ms = math.min(table.unpack(times)),
    sum_error = math.abs(out_sum - 1), rel_error = worst }
end

local bytes = 2 * n * 4 * count
print(string.format("\n%6s | %-40s | %-40s", "", "data on the devices (sum, allreduce, divide)",
  "with the copies from and to pinned memory"))
print(string.format("%6s | %10s %9s %9s %9s | %10s %9s %9s %9s", "GPUs", "median", "speedup", "eff.", "GB/s",
  "median", "speedup", "eff.", "GB/s"))
for G, r in ipairs(rows) do
  r.speedup = rows[1].ms / r.ms
  r.resident_speedup = rows[1].resident_ms / r.resident_ms
  -- device memory traffic of the resident step: each element read by the sum, read and written by
  -- the division; the copies: each element in and out once
  print(string.format("%6d | %7.3f ms %8.2fx %8.0f%% %9.1f | %7.3f ms %8.2fx %8.0f%% %9.1f", G, r.resident_ms,
    r.resident_speedup, 100 * r.resident_speedup / G, 3 * n * 4 * count / r.resident_ms / 1e6, r.ms, r.speedup,
    100 * r.speedup / G, bytes / r.ms / 1e6))
end
print("\nWith the data on the devices each GPU reads and writes its share at its own memory bandwidth and")
print("the one allreduce of a 0-d array costs tens of microseconds: the step should scale with the GPU")
print("count. The copies from and to the host go through the host's PCIe links: they scale only where")
print("each GPU has a link of its own to the CPU (GPUs that share a PCIe switch share its uplink).")
if max_gpus == 1 then
  print("Only one " .. (gpu and "GPU" or "device") .. " here: run it on a machine with several to see the scaling"
    .. (gpu and "." or " (or set CULUA_HOST_DEVICES=N on the host backend)."))
end
print(string.format("Check: on every G the outputs sum to 1 within %.1e and equal input / global sum within %.1e.",
  math.max(table.unpack((function()
    local e = {}
    for G, r in ipairs(rows) do e[G] = r.sum_error end
    return e
  end)())), math.max(table.unpack((function()
    local e = {}
    for G, r in ipairs(rows) do e[G] = r.rel_error end
    return e
  end)()))))

results:add("arrays", count)
results:add("n", n)
results:add("max_gpus", max_gpus)
results:add("nccl", tostring(use_nccl))
for G, r in ipairs(rows) do
  results:add("ms_" .. G, string.format("%.6f", r.ms))
  results:add("resident_ms_" .. G, string.format("%.6f", r.resident_ms))
  results:add("resident_speedup_" .. G, string.format("%.4f", r.resident_speedup))
  results:add("speedup_" .. G, string.format("%.4f", r.speedup))
end
if flags.results then results:print() end
