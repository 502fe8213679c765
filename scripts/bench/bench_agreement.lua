-- Does cu.bench agree with a native C++ event-timed loop of the same kernel? The saxpy of
-- bench/kernels/saxpy.cu is compiled with NVRTC by both sides and launched with the same grid;
-- culua times it with cu.bench (cold samples: L2 flushed, stream drained, events around one call;
-- hot batches), culua-baseline with the same steps in C++. Sides take turns, three rounds each.
--   build/culua scripts/bench/bench_agreement.lua [rounds]
if cu.backend ~= "cuda" then
  print("bench agreement: needs the CUDA backend (the kernel is run-time compiled); nothing to do")
  return
end

local function interpreter()
  local i = -1
  while arg[i - 1] do i = i - 1 end
  return arg[i]
end
local bindir = interpreter():match("^(.*)/[^/]*$") or "."
local script_dir = arg[0]:match("^(.*)/scripts/bench/[^/]*$") or "."
local kernel_file = script_dir .. "/bench/kernels/saxpy.cu"
local rounds = math.tointeger(tonumber(arg[1])) or 3

local function median(t)
  local c = {}
  for i, v in ipairs(t) do c[i] = v end
  table.sort(c)
  local n = #c
  return n % 2 == 1 and c[(n + 1) // 2] or (c[n // 2] + c[n // 2 + 1]) / 2
end

local function native(n, grid, block, samples)
  local cmd = string.format("%s/culua-baseline kernel %s %d %d %d %d 2>&1", bindir, kernel_file, n,
    grid, block, samples)
  local f = io.popen(cmd)
  local out = f:read("a")
  f:close()
  local values = {}
  for key, value in out:gmatch("native%.(%S+) ([%d%.]+)") do values[key] = tonumber(value) end
  assert(values.cold_median_ms, "culua-baseline failed: " .. out)
  return values
end

local device = cu.devices()[cu.device() + 1]
print(string.format("culua %s: cu.bench against a native event-timed loop, %s, %s", cu.version,
  device.name, os.date("!%Y-%m-%d %H:%M UTC")))

local source = assert(io.open(kernel_file)):read("a")
local saxpy = cu.compile(source).saxpy
local block = 256

local rows = {}
for _, n in ipairs { 1 << 20, 1 << 24, 1 << 26 } do
  local grid = math.min((n + block - 1) // block, device.sm_count * 8)
  local x, y = cu.zeros(n), cu.zeros(n)
  local s = cu.stream()
  local k = saxpy:configure { grid = grid, block = block, stream = s }
  local ours_cold, ours_hot, theirs_cold, theirs_hot, samples, ungated = {}, {}, {}, {}, {}, {}
  for _ = 1, rounds do
    local r = cu.bench(function() k(2.0, x, y, n) end,
      { name = "saxpy", stream = s, bytes = 12 * n, min_time = 0.3, max_time = 3 })
    ours_cold[#ours_cold + 1] = r.gpu.median
    ours_hot[#ours_hot + 1] = r.hot.gpu.median
    samples[#samples + 1] = r.samples
    local nat = native(n, grid, block, r.samples)
    theirs_cold[#theirs_cold + 1] = nat.cold_median_ms
    theirs_hot[#theirs_hot + 1] = nat.hot_median_ms
    ungated[#ungated + 1] = nat.cold_ungated_median_ms
    assert(r.gated, "cu.bench could not gate the kernel launch")
  end
  rows[#rows + 1] = { n = n, bytes = 12 * n, ours_cold = median(ours_cold), theirs_cold = median(theirs_cold),
    ours_hot = median(ours_hot), theirs_hot = median(theirs_hot), samples = median(samples),
    ungated = median(ungated) }
end

print()
print("| n | bytes | cu.bench cold | native cold | ratio | within 2% | native cold, no gate "
  .. "| cu.bench hot | native hot | ratio |")
print("|---|---|---|---|---|---|---|---|---|---|")
for _, r in ipairs(rows) do
  local rc, rh = r.ours_cold / r.theirs_cold, r.ours_hot / r.theirs_hot
  local ok = math.abs(rc - 1) <= 0.02
  print(string.format("| %d | %.1f MB | %.2f µs | %.2f µs | %.3f | %s | %.2f µs | %.2f µs | %.2f µs | %.3f |",
    r.n, r.bytes / 1e6, r.ours_cold * 1e3, r.theirs_cold * 1e3, rc, ok and "met" or "**missed**",
    r.ungated * 1e3, r.ours_hot * 1e3, r.theirs_hot * 1e3, rh))
  print(string.format("RESULT n=%d cold_ratio=%.4f hot_ratio=%.4f", r.n, rc, rh))
end
print()
print("Medians over rounds of each side's median; the native loop takes as many cold samples as")
print("cu.bench did in that round. Cold: L2 flushed before each sample, the launch held behind a")
print("gate until issued (both sides), events around it; 'no gate' is the native time with the")
print("event recorded on an idle stream before the launch, which adds the launch latency. Hot:")
print("back-to-back launches between two events; culua's per-call issue cost shows when the kernel")
print("is shorter than it.")
