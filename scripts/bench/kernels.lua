-- Kernel-library benchmark: culua's built-in kernels against native CUDA C++ (culua-baseline) in
-- one run, on the current GPU.
--   build/culua scripts/bench/kernels.lua [GiB per array] [matmul N]
-- Each figure is the best of 10 runs (matmul: 5) timed with events after a warm-up, as for the
-- native figures; arrays are far larger than the L2 cache, so every run reads from memory.
-- Bandwidth counts bytes read + written. The matmul operands hold the same values as culua-baseline's
-- (i % 7 * 0.125 - 0.375): tensor-core throughput depends on the data through the power drawn.

local function interpreter()
  local i = -1
  while arg[i - 1] do i = i - 1 end
  return arg[i]
end
local bindir = interpreter():match("^(.*)/[^/]*$") or "."
local baseline = bindir .. "/culua-baseline"
local gpu = cu.backend == "cuda"
local gib = tonumber(arg[1]) or (gpu and 1 or 1 / 64)
local mm_n = math.tointeger(tonumber(arg[2])) or (gpu and 8192 or 512)

-- Best milliseconds of fn() on stream s, timed with events.
local function time_ms(s, fn, reps)
  reps = reps or 10
  for _ = 1, 2 do fn() end
  local e0, e1 = cu.event(), cu.event()
  local ms = {}
  for _ = 1, reps do
    e0:record(s)
    fn()
    e1:record(s)
    ms[#ms + 1] = e0:elapsed(e1)
  end
  return math.min(table.unpack(ms))
end

-- Runs culua-baseline and returns {key = number} from its "key value unit" lines.
local function native(args)
  if not gpu then return {} end
  local f = io.popen(baseline .. " " .. args .. " 2>&1")
  if not f then return {} end
  local out = f:read("a")
  f:close()
  local values = {}
  for key, value in out:gmatch("(%S+) ([%d%.]+) %S+") do values[key] = tonumber(value) end
  if not next(values) then io.stderr:write("culua-baseline " .. args .. ": " .. out) end
  return values
end
local function first(values, pattern)
  for k, v in pairs(values) do
    if k:find(pattern) then return v end
  end
end

local device = cu.devices()[cu.device() + 1]
print(string.format("culua %s kernel benchmark, %s backend, %s, %s", cu.version, cu.backend,
  device.name, os.date("!%Y-%m-%d %H:%M UTC")))

local rows = {}
local function row(what, culua, unit, base, base_name, target)
  local ratio = base and culua / base
  local verdict = ""
  if ratio and target then
    verdict = ratio >= target and string.format("target >= %d%% met", math.floor(target * 100 + 0.5))
        or string.format("target >= %d%% MISSED", math.floor(target * 100 + 0.5))
  end
  rows[#rows + 1] = string.format("| %s | %.1f %s | %s | %s | %s |", what, culua, unit,
    base and string.format("%.1f %s (%s)", base, unit, base_name) or "—",
    ratio and string.format("%.1f%%", ratio * 100) or "—", verdict)
end

local s = cu.stream()
local bytes = math.floor(gib * 2 ^ 30)
local n = bytes // 4
local a = cu.rand(n, { stream = s })
local b = cu.rand(n, { stream = s })
local c = cu.empty(n, { stream = s })
s:sync()

-- Native references, measured now on the same GPU.
local d2d = first(native("d2d " .. 2 * bytes), "GBps")
local native_read = first(native("read " .. bytes), "GBps")
local native_binary = first(native("binary " .. bytes), "GBps")

-- Binary elementwise f32 with out=: 2 reads + 1 write.
local ms = time_ms(s, function() cu.add(a, b, { out = c, stream = s }) end)
local add_gbps = 3 * bytes / (ms * 1e6)
row("add f32, out=", add_gbps, "GB/s", d2d, "cudaMemcpy d2d", 0.90)
if native_binary then row("add f32, out= (vs native kernel)", add_gbps, "GB/s", native_binary, "native float4 a+b") end

-- Other elementwise shapes, for the record.
ms = time_ms(s, function() cu.mul(a, 2.5, { out = c, stream = s }) end)
row("mul f32 by a scalar, out=", 2 * bytes / (ms * 1e6), "GB/s", d2d, "cudaMemcpy d2d")
ms = time_ms(s, function() cu.exp(a, { out = c, stream = s }) end)
row("exp f32, out=", 2 * bytes / (ms * 1e6), "GB/s", d2d, "cudaMemcpy d2d")
local cols = 4096
local m2 = a:view({ n // cols, cols })
local rowv = b:narrow(1, 1, cols)
local c2 = c:view({ n // cols, cols })
ms = time_ms(s, function() cu.add(m2, rowv, { out = c2, stream = s }) end)
row("add f32 broadcast row, out=", 2 * bytes / (ms * 1e6), "GB/s", d2d, "cudaMemcpy d2d")
local ah, bh, ch = a:astype("f16"), b:astype("f16"), cu.empty(n, "f16")
ms = time_ms(s, function() cu.add(ah, bh, { out = ch, stream = s }) end)
row("add f16, out=", 3 * (bytes // 2) / (ms * 1e6), "GB/s", d2d, "cudaMemcpy d2d")
ah, bh, ch = nil, nil, nil
collectgarbage()

-- Full sum in f32: reads the array once.
ms = time_ms(s, function() a:sum({ stream = s }) end)
row("sum f32 (full)", bytes / (ms * 1e6), "GB/s", native_read, "native read kernel", 0.90)
ms = time_ms(s, function() m2:sum({ axis = 2, stream = s }) end)
row("sum f32 axis=2 (rows of 4096)", bytes / (ms * 1e6), "GB/s", native_read, "native read kernel")
ms = time_ms(s, function() m2:sum({ axis = 1, stream = s }) end)
row("sum f32 axis=1 (columns)", bytes / (ms * 1e6), "GB/s", native_read, "native read kernel")
a, b, c, m2, c2, rowv = nil, nil, nil, nil, nil, nil
collectgarbage()

-- Random numbers: one write.
ms = time_ms(s, function() cu.rand(n, { stream = s }) end)
row("rand f32", bytes / (ms * 1e6), "GB/s", d2d, "cudaMemcpy d2d")
collectgarbage()

-- Matrix products: 2 N^3 flops.
for _, dt in ipairs({ "f32", "bf16" }) do
  local pattern = (cu.arange(mm_n * mm_n, "i32", { stream = s }) % 7 * 0.125 - 0.375)
  local x = pattern:astype(dt, { stream = s }):view({ mm_n, mm_n })
  local y = x:clone({ stream = s })
  pattern = nil -- luacheck: ignore 311 (frees the pattern for the collector below)
  local z = cu.empty({ mm_n, mm_n }, dt, { stream = s })
  ms = time_ms(s, function() cu.matmul(x, y, { out = z, stream = s }) end, 5)
  local tflops = 2 * mm_n ^ 3 / (ms * 1e9)
  local base = first(native(string.format("gemm %s %d", dt, mm_n)), "TFLOP")
  row(string.format("matmul %s %d^3", dt, mm_n), tflops, "TFLOP/s", base, "cuBLAS from C++", 0.97)
  x, y, z = nil, nil, nil
  collectgarbage()
end

print(string.format("\narrays of %.3g GiB, matmul N = %d; best of 10 (matmul: 5) event-timed runs\n",
  gib, mm_n))
print("| operation | culua | native baseline | ratio | |")
print("|---|---|---|---|---|")
for _, line in ipairs(rows) do print(line) end
