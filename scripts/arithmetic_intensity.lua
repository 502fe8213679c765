-- Classic mistake 2: shipping work to the device whose arithmetic intensity is far too low.
--
-- C = A * B, elementwise, with A a 4000 x 5 f32 matrix broadcast against a 100 x 4000 x 5 f32
-- tensor B: one multiply per element of C. Timed four ways:
--   * on the CPU: host arrays, computed on the calling thread (synchronous, so the host clock is
--     right here);
--   * on the device, the kernel alone (events);
--   * on the device, copy A and B in + kernel + copy C out, from pinned host memory (events);
--   * the same from pageable host memory (what a script that never asked for pinned memory does).
-- One culua process has one backend, so the CPU side is culua's host arrays: the same element
-- functor run by one CPU thread (a multithreaded CPU library could be a few times faster).
-- A short measurement of this machine (matmul FLOP/s, device memory and host link bandwidth)
-- gives its balance point in FLOP per byte, to compare the operation's intensity with.
--
--   culua scripts/arithmetic_intensity.lua [rows=4000] [cols=5] [batch=100] [reps=N] [--quick] [--results]

local script = require "cu.script"
local opt, flags = script.args(arg, "key=value, --quick or --results")
local results = script.results()

local gpu = cu.backend == "cuda"
local rows = script.int(opt, "rows", 4000)
local cols = script.int(opt, "cols", 5)
local batch = script.int(opt, "batch", 100)
local reps = script.int(opt, "reps", flags.quick and 3 or (gpu and 20 or 10))
local device = cu.devices()[cu.device() + 1]

print(string.format("arithmetic_intensity: {%d,%d} * {%d,%d,%d} f32 on the %s backend (%s)", rows, cols,
  batch, rows, cols, cu.backend, device.name))

local s = cu.stream()
local _ <close> = cu.use_stream(s)

-- The bytes and the FLOPs of the operation.
local a_bytes, b_bytes, c_bytes = rows * cols * 4, batch * rows * cols * 4, batch * rows * cols * 4
local h2d_bytes, d2h_bytes = a_bytes + b_bytes, c_bytes
local flops = batch * rows * cols -- one multiply per element of C
local intensity_link = flops / (h2d_bytes + d2h_bytes)
local intensity_naive = 1 / 12 -- per multiply: read a (4 B), read b (4 B), write c (4 B)

-- Inputs on the host, as data produced by a CPU program would be; pinned and pageable copies.
local hA = cu.host.rand({ rows, cols }, { seed = 11, pinned = true })
local hB = cu.host.rand({ batch, rows, cols }, { seed = 12, pinned = true })
local hC = cu.host.empty({ batch, rows, cols }, { pinned = true })
local pA, pB = cu.host.rand({ rows, cols }, { seed = 11 }), cu.host.rand({ batch, rows, cols }, { seed = 12 })
local pC = cu.host.empty({ batch, rows, cols })
local dA, dB, dC = cu.empty({ rows, cols }), cu.empty({ batch, rows, cols }), cu.empty({ batch, rows, cols })
local cpuC = cu.host.empty({ batch, rows, cols })

local function best(fn)
  fn() -- warm-up: first launches and first touches are not the subject here
  local t = math.huge
  for _ = 1, reps do t = math.min(t, fn()) end
  return t
end

-- CPU: host arrays compute on the calling thread, synchronously: a host clock is right.
cu.sync()
local cpu_ms = best(function()
  local t0 = cu.clock()
  cu.mul(pB, pA, { out = cpuC })
  return (cu.clock() - t0) * 1e3
end)

local kernel_ms = best(function()
  cu.copy(dA, hA, { stream = s })
  cu.copy(dB, hB, { stream = s })
  return cu.time(function() cu.mul(dB, dA, { out = dC, stream = s }) end, { stream = s })
end)

local function round_trip(A, B, C)
  cu.copy(dA, A, { stream = s })
  cu.copy(dB, B, { stream = s })
  cu.mul(dB, dA, { out = dC, stream = s })
  cu.copy(C, dC, { stream = s })
end
local pinned_ms = best(function() return cu.time(function() round_trip(hA, hB, hC) end, { stream = s }) end)
local pageable_ms = best(function() return cu.time(function() round_trip(pA, pB, pC) end, { stream = s }) end)
local ledger = cu.ledger(function() round_trip(hA, hB, hC) end) -- what one round trip moved
s:sync()

-- The three results agree bit for bit: one IEEE multiply per element everywhere.
local diff_pinned = cu.abs(hC - cpuC):max():item()
local diff_pageable = cu.abs(pC - cpuC):max():item()
assert(diff_pinned == 0 and diff_pageable == 0, "device and CPU results differ")

-- This machine's balance: f32 matmul throughput against memory and host-link bandwidth. Sizes
-- are large enough to leave the caches (the H200's L2 holds 50 MB) but quick.
local m = gpu and (flags.quick and 2048 or 4096) or (flags.quick and 128 or 256)
local x, y = cu.rand({ m, m }), cu.rand({ m, m })
local z = cu.empty({ m, m })
local mm_ms = best(function() return cu.time(function() cu.matmul(x, y, { out = z, stream = s }) end,
  { stream = s }) end)
local peak_gflops = 2 * m ^ 3 / mm_ms / 1e6
local big = (gpu and (flags.quick and 256 or 1024) or (flags.quick and 16 or 64)) * 2 ^ 20 // 4
local u, v = cu.empty(big), cu.empty(big)
u:fill(1)
local copy_ms = best(function() return cu.time(function() cu.copy(v, u, { stream = s }) end, { stream = s }) end)
local mem_gbps = 2 * big * 4 / copy_ms / 1e6 -- read + write
local link = (gpu and (flags.quick and 64 or 256) or (flags.quick and 8 or 32)) * 2 ^ 20 // 4
local hl, dl = cu.host.empty(link, { pinned = true }), cu.empty(link)
hl:fill(1)
local link_ms = best(function() return cu.time(function() cu.copy(dl, hl, { stream = s }) end, { stream = s }) end)
local link_gbps = link * 4 / link_ms / 1e6
u:free(); v:free(); x:free(); y:free(); z:free()

local function mb(b) return string.format("%.2f MB", b / 1e6) end
print(string.format("\nbytes to the device  %s (A %s + B %s)", mb(h2d_bytes), mb(a_bytes), mb(b_bytes)))
print(string.format("bytes back           %s (C)", mb(d2h_bytes)))
print(string.format("FLOPs                %d (one multiply per element of C)", flops))
print(string.format("intensity            %.4f FLOP/byte over the link (%d FLOP / %d B);", intensity_link, flops,
  h2d_bytes + d2h_bytes))
print(string.format("                     1/12 = %.4f FLOP/byte counted per multiply (read a, read b, write c)",
  intensity_naive))
print(string.format("\nthis machine: f32 matmul %.0f GFLOP/s, device memory %.0f GB/s, host link (pinned) %.1f GB/s",
  peak_gflops, mem_gbps, link_gbps))
print(string.format("balance:      %.1f FLOP/byte in device memory, %.0f FLOP/byte across the host link",
  peak_gflops / mem_gbps, peak_gflops / link_gbps))

print(string.format("\n%-44s %10s %12s", "where C = A * B is computed", "time", "GFLOP/s"))
local function row(name, ms)
  print(string.format("%-44s %7.3f ms %12.3f", name, ms, flops / ms / 1e6))
end
row("CPU (host arrays, one thread, host clock)", cpu_ms)
row("device, kernel only (events)", kernel_ms)
row("device, pinned copies + kernel (events)", pinned_ms)
row("device, pageable copies + kernel (events)", pageable_ms)
print(string.format("(best of %d; the results of all four agree bit for bit)", reps))

local transfer_share = 1 - kernel_ms / pinned_ms
print(string.format("\nThe copies are %.0f%% of the device's total (pinned); "
  .. "the kernel alone is %.1fx faster than the CPU,",
  100 * transfer_share, cpu_ms / kernel_ms))
local winner = math.min(cpu_ms, pinned_ms, pageable_ms)
if winner == cpu_ms then
  print(string.format("but with the transfers the CPU wins: %.3f ms against %.3f ms (pinned) and %.3f ms (pageable).",
    cpu_ms, pinned_ms, pageable_ms))
else
  print(string.format("and with the transfers the device still wins here: %.3f ms (%s) against %.3f ms on the CPU,",
    winner, winner == pinned_ms and "pinned" or "pageable", cpu_ms))
  print("but only because the CPU side is a single thread: the device spends its time copying, not computing.")
end
print(string.format("At %.3f FLOP/byte the operation is some %.0fx below the balance of the host link, and %.0fx below",
  intensity_link, peak_gflops / link_gbps / intensity_link, peak_gflops / mem_gbps / intensity_naive))
print("that of device memory (at 1/12): the device's FLOPs never matter, the bytes do. Ship work to the")
print("device when the data stays there for many operations, or when each byte carries many FLOPs.")
if not gpu then
  print("(On the host backend the \"device\" is another CPU thread and its copies are memcpy: run on a")
  print("GPU for the real comparison.)")
end

results:add("h2d_bytes", h2d_bytes)
results:add("d2h_bytes", d2h_bytes)
results:add("flops", flops)
results:add("intensity_link", string.format("%.9f", intensity_link))
results:add("intensity_naive", string.format("%.9f", intensity_naive))
results:add("cpu_ms", string.format("%.6f", cpu_ms))
results:add("kernel_ms", string.format("%.6f", kernel_ms))
results:add("pinned_ms", string.format("%.6f", pinned_ms))
results:add("pageable_ms", string.format("%.6f", pageable_ms))
results:add("max_diff", math.max(diff_pinned, diff_pageable))
results:add("balance_link", string.format("%.3f", peak_gflops / link_gbps))
results:add("ledger_h2d_bytes", ledger.h2d_bytes)
results:add("ledger_d2h_bytes", ledger.d2h_bytes)
results:add("ledger_pinned_bytes", ledger.pinned_bytes)
results:add("ledger_pageable_bytes", ledger.pageable_bytes)
if flags.results then results:print() end
