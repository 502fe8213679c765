-- Run-time kernel benchmark: launch cost of cu.compile kernels from a Lua loop against native C++
-- cuLaunchKernel of the same NVRTC-compiled kernels (culua-baseline launch), and cu.elementwise
-- bandwidth against cudaMemcpy device-to-device, in one run on the current GPU.
--   build/culua scripts/bench/launch.lua [launches per run] [GiB per array]
-- Launch figures are medians of 22 runs, each timed the same way on both sides (culua and the
-- native program take turns):
--   per launch: N back-to-back launches of an empty kernel (grid 1, block 1) on one stream,
--               events around them;
--   enqueue:    host time to issue 1000 launches onto an idle stream, per launch.
-- Bandwidth is the best of 10 event-timed runs on arrays far larger than the L2 cache (bytes read
-- + written).
if cu.backend ~= "cuda" then
  print("launch benchmark: needs the CUDA backend (run-time kernels need a GPU); nothing to do")
  return
end

local function interpreter()
  local i = -1
  while arg[i - 1] do i = i - 1 end
  return arg[i]
end
local bindir = interpreter():match("^(.*)/[^/]*$") or "."
local N = math.tointeger(tonumber(arg[1])) or 10000
local gib = tonumber(arg[2]) or 1

local function native(args)
  local f = io.popen(bindir .. "/culua-baseline " .. args .. " 2>&1")
  local out = f:read("a")
  f:close()
  local values = {}
  for key, value in out:gmatch("(%S+) ([%d%.]+) %S+") do values[key] = tonumber(value) end
  if not next(values) then io.stderr:write("culua-baseline " .. args .. ": " .. out) end
  return values
end

local function median(t)
  table.sort(t)
  local n = #t
  return n % 2 == 1 and t[(n + 1) // 2] or (t[n // 2] + t[n // 2 + 1]) / 2
end

local device = cu.devices()[cu.device() + 1]
print(string.format("culua %s run-time kernel benchmark, %s, %s", cu.version, device.name,
  os.date("!%Y-%m-%d %H:%M UTC")))

-- The same source culua-baseline compiles.
local m = cu.compile([[extern "C" __global__ void empty0() {}
extern "C" __global__ void empty4(float* a, const float* b, float c, int n) {}
extern "C" __global__ void empty8(float* a, const float* b, float c, int n, float* d, const float* e, double f, long long g) {}
]])
local s = cu.stream()
local a = cu.empty(256, { stream = s })
local e0, e1 = cu.event(), cu.event()
local cfg = { grid = 1, block = 1, stream = s }

-- Appends per-launch and enqueue figures (µs) of 11 runs to `per` and `enqueue`: launches as
-- k(cfg, ...), or through a configured kernel kc(...) when `k` is one.
local function measure(per, enqueue, k, configured, ...)
  local launch_n
  if configured then
    launch_n = function(n, ...) for _ = 1, n do k(...) end end
  else
    launch_n = function(n, ...) for _ = 1, n do k(cfg, ...) end end
  end
  launch_n(1000, ...)
  s:sync()
  for _ = 1, 11 do
    e0:record(s)
    launch_n(N, ...)
    e1:record(s)
    e1:sync()
    per[#per + 1] = e0:elapsed(e1) * 1e3 / N
    local t0 = cu.clock { warn = false }
    launch_n(1000, ...)
    enqueue[#enqueue + 1] = (cu.clock { warn = false } - t0) * 1e6 / 1000
    s:sync()
  end
end

-- culua and the native program take turns (two rounds each), so that drift of the machine's
-- speed during the run affects both sides alike.
local samples = {}
for _, k in ipairs({ 0, 4, 8 }) do
  samples[k] = { per = {}, enqueue = {}, nper = {}, nenqueue = {}, cper = {}, cenqueue = {} }
end
local args = {
  [0] = {},
  [4] = { a, a, 1.5, 256 },
  [8] = { a, a, 1.5, 256, a, a, 2.5, 7 },
}
for _ = 1, 2 do
  for _, k in ipairs({ 0, 4, 8 }) do
    local kernel = m["empty" .. k]
    measure(samples[k].per, samples[k].enqueue, kernel, false, table.unpack(args[k]))
    measure(samples[k].cper, samples[k].cenqueue, kernel:configure(cfg), true, table.unpack(args[k]))
  end
  local f = io.popen(bindir .. "/culua-baseline launch " .. N .. " raw 2>&1")
  for line in f:lines() do
    local key, value = line:match("^native%.(%a+%d)_us_sample ([%d%.]+)")
    if key then
      local kind, k = key:match("^(%a+)(%d)$")
      local t = samples[tonumber(k)]
      if t then table.insert(kind == "launch" and t.nper or t.nenqueue, tonumber(value)) end
    end
  end
  f:close()
end

local function stats(t)
  if #t == 0 then return nil end
  table.sort(t)
  return median(t), t[1], t[#t]
end

local rows = {}
local function row(what, values, refs, target)
  local v, vmin, vmax = stats(values)
  local r, rmin, rmax = stats(refs)
  local verdict = ""
  if r and target then verdict = target(v, r) end
  rows[#rows + 1] = string.format("| %s | %.2f µs (%.2f–%.2f) | %s | %s | %s |", what, v, vmin, vmax,
    r and string.format("%.2f µs (%.2f–%.2f)", r, rmin, rmax) or "—",
    r and string.format("%.3f×", v / r) or "—", verdict)
end
local function per_target(v, r)
  return v <= 1.10 * r and "≤ 1.10× native: met" or "≤ 1.10× native: MISSED"
end
local function enqueue_target(v, r)
  return v <= r + 0.5 and "≤ native + 0.5 µs: met" or "≤ native + 0.5 µs: MISSED"
end
for _, k in ipairs({ 0, 4, 8 }) do
  local t = samples[k]
  row(string.format("`kc(...)` (`kc = k:configure(cfg)`), %d arguments, per launch", k), t.cper,
    t.nper, k == 0 and per_target)
  row(string.format("`kc(...)` host enqueue, %d arguments, per launch", k), t.cenqueue, t.nenqueue,
    k == 0 and enqueue_target)
end
for _, k in ipairs({ 0, 4, 8 }) do
  local t = samples[k]
  row(string.format("`k(cfg, ...)`, %d arguments, per launch", k), t.per, t.nper,
    k == 0 and function(v, r)
      return v <= 1.10 * r and "≤ 1.10× native: met" or "≤ 1.10× native: MISSED"
    end)
  row(string.format("`k(cfg, ...)` host enqueue, %d arguments, per launch", k), t.enqueue,
    t.nenqueue, k == 0 and function(v, r)
      return v <= r + 0.5 and "≤ native + 0.5 µs: met" or "≤ native + 0.5 µs: MISSED"
    end)
end

-- cu.elementwise bandwidth on large arrays.
local n = math.floor(gib * 2 ^ 30) // 4
local f = cu.elementwise("f32 x, f32 y -> f32 z", "z = 2*x + y")
local x, y, z = cu.rand(n, { stream = s }), cu.rand(n, { stream = s }), cu.empty(n, { stream = s })
local copy = cu.elementwise("f32 x -> f32 y", "y = x")
local function best_ms(fn)
  fn()
  fn()
  local best = math.huge
  for _ = 1, 10 do
    e0:record(s)
    fn()
    e1:record(s)
    best = math.min(best, e0:elapsed(e1))
  end
  return best
end
local ms = best_ms(function() f(x, y, { out = z, stream = s }) end)
local copy_ms = best_ms(function() copy(x, { out = z, stream = s }) end)
local d2d = native("d2d " .. 2 * n * 4)["native.d2d_GBps"]
local binary = native("binary " .. n * 4)["native.binary_GBps"]
local gbps = 3 * n * 4 / ms / 1e6
local copy_gbps = 2 * n * 4 / copy_ms / 1e6
local function pct(v, ref)
  return ref and string.format("%.1f%%", 100 * v / ref) or "—"
end
rows[#rows + 1] = string.format("| `cu.elementwise` z = 2x + y, %g GiB f32 arrays | %.0f GB/s | %s | %s | %s |",
  gib, gbps, d2d and string.format("%.0f GB/s (cudaMemcpy d2d)", d2d) or "—", pct(gbps, d2d),
  d2d and (gbps >= 0.9 * d2d and "target ≥ 90% met" or "target ≥ 90% MISSED") or "")
rows[#rows + 1] = string.format("| same vs a native float4 a + b kernel | %.0f GB/s | %s | %s | |", gbps,
  binary and string.format("%.0f GB/s", binary) or "—", pct(gbps, binary))
rows[#rows + 1] = string.format("| `cu.elementwise` y = x (copy) | %.0f GB/s | %s | %s | |", copy_gbps,
  d2d and string.format("%.0f GB/s", d2d) or "—", pct(copy_gbps, d2d))

print(string.format("\n%d launches per run; launch figures: median (min–max) of 22 runs, "
  .. "culua and native taking turns; bandwidth: best of 10\n", N))
print("| what | culua | native C++ | ratio | target |")
print("|---|---|---|---|---|")
for _, r in ipairs(rows) do print(r) end
local info = m.info
print(string.format("\ncompile: %s, %.1f ms (this run %.2f ms), %s", info.cache, info.compile_ms,
  info.elapsed_ms, info.arch))
