-- examples/time_kernel.lua: time a kernel of your own the right way, check it first, and compare
-- it with what the device does for the same bytes.
--   culua examples/time_kernel.lua [N]     N f32 elements (default 2^26, 256 MiB an array)
-- It needs a GPU: cu.compile compiles CUDA C++ at run time (NVRTC). On the host backend it says so
-- and exits with status 69. docs/guide/measurement.md explains the tools it uses.
if cu.backend ~= "cuda" then
  io.stderr:write("time_kernel.lua: cu.compile needs a GPU; this run uses the ", cu.backend, " backend\n")
  os.exit(69)
end
local n = 1 << 26
if arg and arg[1] then
  n = math.tointeger(tonumber(arg[1]))
  if not n or n < 1 or n >= (1 << 31) then
    error("N: a whole number of elements from 1 to 2^31 - 1 expected, got " .. arg[1], 0)
  end
end

-- The kernel. --fmad=false: a * x + y rounds twice, as the built-in cu.mul and cu.add do, so the
-- check below can ask for the same bits.
local m = cu.compile([[
extern "C" __global__ void saxpy(float a, const float* __restrict__ x, float* __restrict__ y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
]], {name = "saxpy.cu", options = {"--fmad=false"}})
local block = 256
local saxpy = m.saxpy:configure({grid = (n + block - 1) // block, block = block})  -- checked once

local x, y = cu.rand(n), cu.rand(n)
local a = 2.5

-- 1. Right before fast: one launch against the built-in operations.
local expected = cu.add(cu.mul(x, a), y)
saxpy(a, x, y, n)
local wrong = cu.ne(y, expected):sum():item()
print(string.format("saxpy on %d f32 elements (%s, %s): %d wrong elements", n, cu.devices()[cu.device() + 1].name,
                    m.info.arch, wrong))
if wrong ~= 0 then os.exit(1) end
expected:free()

-- 2. The classic mistake: a host clock around a loop of asynchronous launches measures the
-- queueing only (cu.clock would warn here; warn = false because this is on purpose).
local reps = 50
cu.sync()
local t0 = cu.clock({warn = false})
for _ = 1, reps do saxpy(a, x, y, n) end
local host_ms = (cu.clock({warn = false}) - t0) * 1e3 / reps
cu.sync()

-- 3. Events recorded on the stream around the same loop: the device's time.
local s = cu.current_stream()
local e0, e1 = cu.event(), cu.event()
e0:record(s)
for _ = 1, reps do saxpy(a, x, y, n) end
e1:record(s)
local event_ms = e0:elapsed(e1) / reps   -- waits for e1

-- 4. cu.time: the same events around one call; cu.bench: warm-up, a cold L2 before each sample,
-- samples until the noise is low, device and host time, GB/s from the bytes moved.
local once_ms = cu.time(function() saxpy(a, x, y, n) end)
local bytes = 3 * x.nbytes   -- reads x and y, writes y
local kernel = cu.bench(function() saxpy(a, x, y, n) end, {name = "saxpy (cu.compile)", bytes = bytes})

-- 5. Baselines for the same bytes: culua's precompiled cu.add (reads two arrays, writes one), and
-- the device-to-device copy (cudaMemcpyAsync; reads one, writes one), the bandwidth to expect.
local builtin = cu.bench(function() cu.add(x, y, {out = y}) end, {name = "cu.add (built-in)", bytes = bytes})
local copy = cu.bench(function() cu.copy(y, x) end, {name = "copy (cudaMemcpyAsync)", bytes = 2 * x.nbytes})

print(string.format("host clock around %d launches: %9.3f us a launch (the queueing only)", reps, host_ms * 1e3))
print(string.format("events around %d launches:     %9.3f us a launch", reps, event_ms * 1e3))
print(string.format("cu.time of one launch:          %9.3f us", once_ms * 1e3))
print()
print(string.format("%-24s %12s %10s %12s", "cu.bench", "median (us)", "GB/s", "of the copy"))
for _, r in ipairs({kernel, builtin, copy}) do
  print(string.format("%-24s %12.3f %10.1f %11.1f%%", r.name, r.gpu.median * 1e3, r.GBps, 100 * r.GBps / copy.GBps))
end
