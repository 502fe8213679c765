-- cu.fft benchmark: six transforms of 2^24 points (c2c c64 and c128, r2c, c2r, a batch), each also
-- as a captured graph. The suite's row (fft_c64 of its arrays group: `suite.lua --only arrays`)
-- compares the c64 transform with cuFFT from C++ (culua-baseline) and CuPy; this script and
-- bench/fft_native.cu time the others.
--   build/culua scripts/bench/fft.lua [log2 of the length] [--json FILE]
-- Default length 2^24 on the CUDA backend, 2^18 on the host backend. Each transform is timed by
-- cu.bench (cold samples, L2 flushed; also as a captured graph on the GPU). The figures: median
-- device milliseconds, GB/s of the transform's one read and one write (what a memory-bound FFT of
-- this size moves at best), and GFLOP/s by the usual 5 n log2(n) count of a complex FFT. The first
-- call of each shape (cuFFT's plan) happens in the warm-up; the plan cache makes the rest reuse it.
-- One line per figure: "fft_<case> <value> <unit>" (the suite and bench/fft_native.cu print the
-- same keys).
local log2n = math.tointeger(tonumber(arg[1])) or (cu.backend == "cuda" and 24 or 18)
local n = 1 << log2n
local gpu = cu.backend == "cuda"

local device = cu.devices()[cu.device() + 1]
print(string.format("culua %s cu.fft benchmark, %s backend, %s, n = 2^%d, %s", cu.version, cu.backend,
  device.name, log2n, os.date("!%Y-%m-%d %H:%M UTC")))

local x64 = cu.randn({ n }, "f32")
local c64 = cu.randn({ n }, "f32"):astype("c64")
local c128 = c64:astype("c128")
local spectrum = cu.fft.rfft(x64)
local batch = cu.randn({ 256, n // 256 }, "f32"):astype("c64")
cu.sync()

local cases = {
  { "c2c_c64", function() return cu.fft.fft(c64) end, n * 8 * 2, 5 * n * log2n },
  { "c2c_c64_inverse", function() return cu.fft.ifft(c64) end, n * 8 * 2 + n * 8 * 2, 5 * n * log2n },
  { "c2c_c128", function() return cu.fft.fft(c128) end, n * 16 * 2, 5 * n * log2n },
  { "r2c_f32", function() return cu.fft.rfft(x64) end, n * 4 + (n // 2 + 1) * 8, 2.5 * n * log2n },
  { "c2r_f32", function() return cu.fft.irfft(spectrum) end, 2 * (n // 2 + 1) * 8 + n * 4 * 2, 2.5 * n * log2n },
  { "c2c_c64_batch256", function() return cu.fft.fft(batch) end, n * 8 * 2, 5 * n * (log2n - 8) },
}

local results = {}
for _, c in ipairs(cases) do
  local name, fn, bytes, flops = c[1], c[2], c[3], c[4]
  local res = cu.bench(fn, { name = "fft_" .. name, bytes = bytes, flops = flops, graph = gpu,
    max_time = gpu and 5 or 20, min_samples = gpu and 10 or 3, hot = gpu })
  local ms = res.gpu.median -- milliseconds
  print(string.format("fft_%s %.4f ms", name, ms))
  print(string.format("fft_%s_bandwidth %.1f GBps", name, bytes / (ms * 1e-3) / 1e9))
  print(string.format("fft_%s_throughput %.1f GFLOPs", name, flops / (ms * 1e-3) / 1e9))
  if res.graph then
    print(string.format("fft_%s_graph %.4f ms", name, res.graph.gpu.median))
  end
  results[#results + 1] = { name = name, ms = ms, samples = res.samples, stop = res.stop,
    spread = res.gpu.max - res.gpu.min }
end

-- The same transform as in the native program, for the suite's comparison.
print(string.format("reference: build/fft_native %d prints the same keys for cuFFT called from C++ "
  .. "(bench/fft_native.cu, out of place); CuPy: cupy.fft.fft of a c64 array of 2^%d", log2n, log2n))
return results
