-- Classic mistake 4: streams that never overlap.
--
-- Ten arrays of 10M f32 each are normalized, a <- a / sum(a), starting from pinned host memory:
-- copy in, sum (one reduction kernel into a 0-d device array), divide by that 0-d array
-- (broadcast: the sum never leaves the device), copy out; all asynchronous on a stream. Run twice:
--   * all ten arrays on one shared stream (everything serializes);
--   * one stream per array (copies in one direction overlap kernels and copies in the other).
-- Timed with events on each stream (a start event all streams wait for, an end event per
-- array); the overlap fraction comes from culua's trace (cu.trace), and the trace of the
-- one-stream-per-array run is written as Chrome/Perfetto JSON (open it in ui.perfetto.dev).
--
--   culua scripts/streams_overlap.lua [arrays=10] [n=10000000] [trace=FILE] [--quick] [--results]

local script = require "cu.script"
local opt, flags = script.args(arg, "key=value, --quick or --results")
local results = script.results()

local gpu = cu.backend == "cuda"
local count = script.int(opt, "arrays", 10)
local n = script.int(opt, "n", flags.quick and 1 << 18 or (gpu and 10000000 or 2000000))
local device = cu.devices()[cu.device() + 1]

-- Where the trace goes: trace=FILE, else the current directory when writable, else /tmp.
local trace_path = opt.trace
if not trace_path then
  trace_path = "streams_overlap.trace.json"
  local f = io.open(trace_path, "a")
  if f then
    f:close()
  else
    trace_path = (os.getenv("TMPDIR") or "/tmp") .. "/streams_overlap.trace.json"
  end
end

print(string.format("streams_overlap: %d arrays of %d f32 (%.1f MB each) on the %s backend (%s)", count, n,
  n * 4 / 1e6, cu.backend, device.name))

-- Set-up, not timed: pinned inputs (different data per array), pinned outputs, device buffers,
-- a 0-d device array per array for its sum.
local hin, hout, d, sums = {}, {}, {}, {}
for i = 1, count do
  hin[i] = cu.host.rand(n, { seed = 100 + i, pinned = true })
  hout[i] = cu.host.empty(n, { pinned = true })
  d[i] = cu.empty(n)
  sums[i] = cu.empty({})
end
local shared = cu.stream()
local own = {}
for i = 1, count do own[i] = cu.stream() end
cu.sync()

local function normalize(i, st)
  cu.copy(d[i], hin[i], { stream = st })                  -- async: pinned and a stream
  d[i]:sum({ out = sums[i], stream = st })                -- one reduction kernel, result stays on the device
  cu.div(d[i], sums[i], { out = d[i], stream = st })      -- broadcast of the 0-d device array
  cu.copy(hout[i], d[i], { stream = st })                 -- async back into pinned memory
end

-- One run: stream_of(i) gives the stream of array i. Returns the timings (events) and the host
-- time to enqueue everything.
local function run(stream_of)
  for i = 1, count do hout[i]:fill(0) end
  local go = cu.event():record(stream_of(1))
  local starts, ends, used = {}, {}, {}
  local t0 = cu.clock({ warn = false }) -- deliberate: the enqueue time, with work in flight
  local function enqueue()
    for i = 1, count do
      local st = stream_of(i)
      if not used[st] then
        used[st] = true
        st:wait(go) -- nothing starts before `go`: one time origin for every stream
      end
      starts[i] = cu.event():record(st)
      normalize(i, st)
      ends[i] = cu.event():record(st)
    end
  end
  cu.strict(enqueue) -- raises if anything in the enqueue synchronized implicitly
  local enqueue_ms = (cu.clock({ warn = false }) - t0) * 1e3
  cu.sync()
  local r = { enqueue_ms = enqueue_ms, per = {}, span = 0, sum = 0 }
  for i = 1, count do
    r.per[i] = starts[i]:elapsed(ends[i])
    r.sum = r.sum + r.per[i]
    r.span = math.max(r.span, go:elapsed(ends[i]))
  end
  return r
end

local function on_shared() return shared end
local function on_own(i) return own[i] end

-- Warm-up of both configurations (first launches, pool growth), then the measured runs, each
-- inside a trace.
run(on_own)
run(on_shared)
-- cu.range names each run in the trace (and as an NVTX range in Nsight Systems on CUDA); the
-- summary cu.trace.stop returns is cu.trace.summary()'s: busy time per stream and the overlap.
cu.trace.start()
local one = cu.range("one shared stream", run, on_shared)
local one_summary = cu.trace.stop()
cu.trace.start()
local many = cu.range("a stream per array", run, on_own)
local many_summary = cu.trace.stop(trace_path)

-- Check: every output sums to 1 and is its input divided by the input's sum (host arrays
-- compute on the calling thread).
local worst_sum, worst_rel = 0, 0
for i = 1, count do
  local total = hout[i]:sum():item()
  worst_sum = math.max(worst_sum, math.abs(total - 1))
  local s_in = hin[i]:sum():item()
  local rel = cu.abs(hout[i] * s_in - hin[i]):max():item()
  worst_rel = math.max(worst_rel, rel)
end
assert(worst_sum < 1e-4, "an output does not sum to 1: off by " .. worst_sum)
assert(worst_rel < 1e-4, "an output is not its input over its sum: off by " .. worst_rel)

local bytes = 2 * n * 4 * count
print(string.format("\n%-24s %12s %14s %16s %9s", "configuration", "span", "sum of arrays", "enqueue (host)",
  "overlap"))
local function line(name, r, summary)
  print(string.format("%-24s %9.3f ms %11.3f ms %13.3f ms %9s", name, r.span, r.sum, r.enqueue_ms,
    summary and string.format("%.1f%%", 100 * summary.overlap) or "n/a"))
end
line("one shared stream", one, one_summary)
line(string.format("%d streams", count), many, many_summary)

print(string.format("\nper array, events on its stream (ms):"))
local a, b = {}, {}
for i = 1, count do
  a[#a + 1] = string.format("%7.3f", one.per[i])
  b[#b + 1] = string.format("%7.3f", many.per[i])
end
print("  shared stream  " .. table.concat(a, " "))
print("  own streams    " .. table.concat(b, " "))
if many_summary and many_summary.streams then
  local busy, ops = {}, 0
  for _, st in ipairs(many_summary.streams) do
    busy[#busy + 1] = string.format("%7.3f", st.busy_ms)
    ops = ops + st.ops
  end
  print("  own, traced    " .. table.concat(busy, " ") .. string.format("  (busy time per stream; %d operations)", ops))
end

local speedup = one.span / many.span
print(string.format("\nOne stream per array finished in %.3f ms against %.3f ms on one stream: %.2fx (%.1f GB/s of"
  .. " copies against %.1f GB/s).", many.span, one.span, speedup, bytes / many.span / 1e6, bytes / one.span / 1e6))
print("On one stream every operation waits for the one before it, whatever its kind. With a stream per")
print("array the copy engines (one per direction on a GPU) and the SMs can work on different arrays at")
print("once: array k+1 copied in while array k is summed and array k-1 copied out. Each array's own time")
print("grows (it shares the hardware) while the total should shrink. Pinned memory is what makes the")
print("copies asynchronous; without it every copy would block the host and nothing would overlap.")
if speedup < 1.05 then
  print(string.format("Here the streams did not pay off (%.2fx): the work they ran side by side competed for the same",
    speedup))
  print(gpu and "engines (a copy-bound run gains at most about 2x, from the two copy directions)."
    or "CPU cores: on the host backend each stream is a worker thread, and this machine has few cores.")
elseif not gpu then
  print("(On the host backend each stream is a worker thread: the overlap is bounded by the CPU cores.)")
end
if many_summary then
  print(string.format("Overlap: %.1f%% of the busy time had two or more streams running (shared stream: %.1f%%).",
    100 * many_summary.overlap, 100 * (one_summary and one_summary.overlap or 0)))
  print("Trace written to " .. trace_path .. " (open it in ui.perfetto.dev or chrome://tracing).")
end
print(string.format("Check: every output sums to 1 within %.1e and equals its input over the input's sum within %.1e.",
  worst_sum, worst_rel))

results:add("arrays", count)
results:add("n", n)
results:add("max_sum_error", string.format("%.3e", worst_sum))
results:add("max_rel_error", string.format("%.3e", worst_rel))
results:add("span_shared_ms", string.format("%.6f", one.span))
results:add("span_streams_ms", string.format("%.6f", many.span))
results:add("speedup", string.format("%.4f", speedup))
if many_summary then
  results:add("overlap_streams", string.format("%.6f", many_summary.overlap))
  results:add("overlap_shared", string.format("%.6f", one_summary.overlap))
  results:add("trace", trace_path)
end
if flags.results then results:print() end
