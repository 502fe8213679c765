-- culua quickstart: copy two matrices to the device, run a loop of kernels on a stream, copy the
-- result back. Each phase is timed twice: with a host clock and no synchronization (the classic
-- mistake) and with events recorded on the stream (what the device did).
--
--   culua scripts/quickstart.lua [N] [ITERATIONS]
local gpu = cu.backend == "cuda"
local n = tonumber(arg and arg[1]) or (gpu and 8192 or 512)
local iterations = tonumber(arg and arg[2]) or (gpu and 20 or 5)
local device = cu.devices()[cu.device() + 1]
local mib = n * n * 4 / 2 ^ 20

print(string.format("culua %s quickstart on the %s backend (%s)", cu.version, cu.backend, device.name))
print(string.format("two %dx%d f32 matrices (%.0f MiB each), %d iterations of 2 transposing copies\n",
  n, n, mib, iterations))

-- Set-up, not timed: pinned host matrices (so uploads can be asynchronous), device buffers, and a
-- stream that all the work below goes to.
local s = cu.stream()
local _ <close> = cu.use_stream(s)
local ha = cu.arange(n * n):reshape(n, n):to_host({ pinned = true })
local hb = cu.linspace(-1, 1, n * n):reshape(n, n):to_host({ pinned = true })
local hc = cu.host.empty({ n, n }, { pinned = true })
local a, b = cu.empty({ n, n }), cu.empty({ n, n })
local c = cu.empty({ n, n })
cu.sync()

-- Phases back to back, as a real program runs them: the host clock is read around each phase
-- without synchronizing; events are recorded on the stream at the same points.
local marks = { cu.event():record(s) }
local host = {}
local function phase(fn)
  local t0 = cu.clock()
  fn()
  host[#host + 1] = (cu.clock() - t0) * 1e3
  marks[#marks + 1] = cu.event():record(s)
end

phase(function() -- upload: asynchronous (pinned memory, explicit stream)
  cu.copy(a, ha, { stream = s })
  cu.copy(b, hb, { stream = s })
end)
phase(function() -- kernels: only queued; the data stays on the device (ping-pong)
  for _ = 1, iterations do
    cu.copy(c, a:transpose(), { stream = s })
    cu.copy(a, c:transpose(), { stream = s })
  end
  cu.copy(c, a:transpose(), { stream = s })
end)
phase(function() -- download: no stream given, so the copy is synchronous: it waits for all the
  cu.copy(hc, c) --  work queued before it, then copies
end)
marks[#marks]:sync()

local names = { "upload", "kernels", "download" }
local bytes = { 2 * n * n * 4, (2 * iterations + 1) * 2 * n * n * 4, n * n * 4 }
print(string.format("%-10s %22s %22s", "phase", "host clock, no sync", "events (device time)"))
local host_total, device_total = 0, 0
for i, name in ipairs(names) do
  local device_ms = marks[i]:elapsed(marks[i + 1])
  host_total, device_total = host_total + host[i], device_total + device_ms
  print(string.format("%-10s %19.3f ms %19.3f ms  (%.1f GB/s)", name, host[i], device_ms,
    bytes[i] / device_ms / 1e6))
end
print(string.format("%-10s %19.3f ms %19.3f ms", "total", host_total, device_total))
print("\nThe host clock saw only the queueing of the uploads and kernels; their cost appeared in")
print("the synchronous download, which waited for all of it. Events on the stream time the device.")

-- Check the result: c is the transpose of a, which after an even number of transposes is `ha`.
local probes = gpu and 64 or n * n
math.randomseed(n)
for k = 1, probes do
  local i, j
  if probes == n * n then
    i, j = (k - 1) // n + 1, (k - 1) % n + 1
  else
    i, j = math.random(n), math.random(n)
  end
  local expected = (j - 1) * n + (i - 1)
  local got = hc[i][j]
  -- f32 holds integers exactly up to 2^24; beyond that compare with f32 rounding.
  if math.abs(got - expected) > math.max(1, expected) * 2 ^ -23 then
    error(string.format("wrong result at [%d][%d]: %s, expected %s", i, j, got, expected))
  end
end
print(string.format("result checked at %d positions: ok", probes))
