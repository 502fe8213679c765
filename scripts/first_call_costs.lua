-- Classic mistake 3: counting one-time costs in a steady-state figure.
--
-- What the first call of something costs against the next ones:
--   * context creation: the first device operation in a fresh culua process against a second
--     one (child processes of this culua binary);
--   * the first device allocation against allocations served by the stream-ordered pool;
--   * the first launch of a built-in kernel and the first matrix product (module loading, BLAS
--     set-up) against the second;
--   * pinned host memory: allocating it (page-locking) the first time and again (culua keeps a
--     reuse pool); pageable against pinned copies of a 10000 x 10000 f32 matrix (400 MB);
--   * random numbers generated on the host and copied against generated on the device.
-- One-time and host-side costs are timed with the host clock around the call and a
-- synchronization (what a script waits); steady-state copies and kernels with events.
--
--   culua scripts/first_call_costs.lua [side=10000] [alloc_mib=64] [children=3] [--quick] [--results]

local script = require "cu.script"
local opt, flags = script.args(arg, "key=value, --quick or --results")
local results = script.results()

-- The culua binary running this script (arg[-1], or further down with options before the script).
local function interpreter()
  local i = -1
  while arg[i - 1] do i = i - 1 end
  return arg[i]
end
local function shell_quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
local function median(t)
  table.sort(t)
  local n = #t
  return n % 2 == 1 and t[(n + 1) // 2] or (t[n // 2] + t[n // 2 + 1]) / 2
end
local function clock() return cu.clock({ warn = false }) end

local gpu = cu.backend == "cuda"
local side = script.int(opt, "side", flags.quick and 1000 or (gpu and 10000 or 2000))
local alloc_mib = script.int(opt, "alloc_mib", flags.quick and 8 or 64)
local children = script.int(opt, "children", flags.quick and 2 or 3)
local device = cu.devices()[cu.device() + 1]
print(string.format("first_call_costs on the %s backend (%s)", cu.backend, device.name))

local rows = {}
local function row(name, ms, note, key)
  rows[#rows + 1] = { name = name, ms = ms, note = note }
  if key then results:add(key, string.format("%.6f", ms)) end
end

-- 1. Context creation, in fresh processes: the first device operation against a second one.
-- The child reads the clock before touching the device (cu.clock creates no context).
local exe = interpreter()
local child_code = [[
local c = function() return cu.clock({warn = false}) end
local t0 = c()
local a = cu.zeros(1); cu.sync()
local t1 = c()
local b = cu.zeros(1); cu.sync()
local t2 = c()
print(string.format("CHILD %.9f %.9f", t1 - t0, t2 - t1))
]]
-- `--backend cuda` checks at start-up that a GPU is usable (which initializes the driver); the
-- child that never touches the device runs with the default backend choice instead, which looks
-- for a GPU only when the script first needs one.
local function run_child(code, lazy)
  local backend = lazy and "" or string.format("--backend %s --device %d", cu.backend, cu.device())
  local cmd = string.format("%s %s -e %s 2>&1", shell_quote(exe), backend, shell_quote(code))
  local t0 = clock()
  local p = assert(io.popen(cmd, "r"))
  local out = p:read("a")
  local ok = p:close()
  local wall = clock() - t0
  assert(ok, "child culua failed: " .. out)
  return out, wall
end
local first_op, second_op, wall_device, wall_plain = {}, {}, {}, {}
for _ = 1, children do
  local out, wall = run_child(child_code)
  local f, s2 = out:match("CHILD (%S+) (%S+)")
  assert(f, "unexpected child output: " .. out)
  first_op[#first_op + 1], second_op[#second_op + 1] = tonumber(f) * 1e3, tonumber(s2) * 1e3
  wall_device[#wall_device + 1] = wall * 1e3
  local _, wall2 = run_child("local x = 1", true)
  wall_plain[#wall_plain + 1] = wall2 * 1e3
end
row("first device op in a new process", median(first_op),
  "creates the context (CUDA: driver, device, memory pools)", "context_first_op_ms")
row("second device op", median(second_op), "the same op with the context in place", "context_second_op_ms")
row("process, no device use (start to exit)", median(wall_plain), "culua initializes CUDA only when needed",
  "process_plain_ms")
row("process with one device op (start to exit)", median(wall_device), "the difference is the context",
  "process_device_ms")

-- This process: create the context first, so that what follows is measured without it.
cu.sync()
local s = cu.stream()
local _ <close> = cu.use_stream(s)

-- 2. The first device allocation against pooled ones (allocate + free the same size).
local alloc_elems = alloc_mib * 2 ^ 20 // 4
local t0 = clock()
local first_alloc = cu.empty(alloc_elems)
cu.sync()
row(string.format("first allocation, %d MiB", alloc_mib), (clock() - t0) * 1e3,
  "the pool asks the driver for memory and maps it", "alloc_first_ms")
first_alloc:free()
cu.sync()
local pairs_ms = {}
for _ = 1, 10 do
  local tb = clock()
  for _ = 1, 100 do cu.empty(alloc_elems):free() end
  pairs_ms[#pairs_ms + 1] = (clock() - tb) * 1e3 / 100
end
cu.sync()
row(string.format("allocate + free %d MiB again (pool)", alloc_mib), median(pairs_ms),
  "served from the pool: no driver call, stream-ordered", "alloc_pooled_ms")

-- 3. First launch of a built-in kernel and first matrix product, against the second.
local k = cu.empty(alloc_elems)
local function synced(fn)
  local tb = clock()
  fn()
  cu.sync()
  return (clock() - tb) * 1e3
end
row(string.format("first fill kernel, %d MiB", alloc_mib), synced(function() k:fill(1) end),
  "loads the kernel's module on first use (lazy loading)", "fill_first_ms")
row("second fill kernel", synced(function() k:fill(2) end), "the kernel itself", "fill_second_ms")
k:free()
local x = cu.ones({ 256, 256 })
row("first matmul 256x256", synced(function() cu.matmul(x, x) end),
  "creates the BLAS handle and its workspace", "matmul_first_ms")
row("second matmul 256x256", synced(function() cu.matmul(x, x) end), "the product itself", "matmul_second_ms")

-- 4. Pinned host memory: page-locking on first allocation; the reuse pool the second time.
local shape = { side, side }
local bytes = side * side * 4
local mb = bytes / 1e6
local h_pin
row(string.format("pinned host allocation, %.0f MB", mb),
  synced(function() h_pin = cu.host.empty(shape, { pinned = true }) end),
  "page-locks the memory (the OS maps and pins every page)", "pinned_alloc_first_ms")
h_pin:free()
row("the same pinned allocation again", synced(function() h_pin = cu.host.empty(shape, { pinned = true }) end),
  "from culua's reuse pool of pinned blocks", "pinned_alloc_again_ms")

-- Copies of the same data from pageable and pinned memory; events, best of 3 after a first copy.
local h_page = cu.host.rand(shape, { seed = 5 })
cu.host.rand(shape, { seed = 5, out = h_pin })
local d_page, d_pin = cu.empty(shape), cu.empty(shape)
local back_page, back_pin = cu.host.empty(shape), cu.host.empty(shape, { pinned = true })
back_page:fill(0)
local function best_copy(dst, src)
  local t = cu.time(function() cu.copy(dst, src, { stream = s }) end, { stream = s })
  for _ = 1, 2 do t = math.min(t, cu.time(function() cu.copy(dst, src, { stream = s }) end, { stream = s })) end
  return t
end
local function gbps(ms) return string.format("%.1f GB/s", bytes / ms / 1e6) end
local ms
ms = best_copy(d_page, h_page)
row(string.format("host to device, pageable, %.0f MB", mb), ms, gbps(ms) .. ": staged through a driver buffer",
  "h2d_pageable_ms")
ms = best_copy(d_pin, h_pin)
row(string.format("host to device, pinned, %.0f MB", mb), ms, gbps(ms) .. ": DMA straight from the page-locked buffer",
  "h2d_pinned_ms")
ms = best_copy(back_page, d_page)
row(string.format("device to host, pageable, %.0f MB", mb), ms, gbps(ms) .. ": staged, into memory already touched",
  "d2h_pageable_ms")
ms = best_copy(back_pin, d_pin)
row(string.format("device to host, pinned, %.0f MB", mb), ms, gbps(ms) .. ": DMA", "d2h_pinned_ms")
local fresh
ms = synced(function() fresh = d_page:to_host() end)
row(string.format("a:to_host() into fresh memory, %.0f MB", mb), ms, gbps(ms) .. ": also faults every new page in",
  "to_host_fresh_ms")

-- Both paths carry the same bits: uploads agree with each other and with the same numbers
-- generated on the device; downloads agree with the originals.
local ref = cu.rand(shape, { seed = 5, stream = s })
local bad_up = cu.ne(d_page, ref):sum():item() + cu.ne(d_pin, ref):sum():item()
local bad_down = cu.ne(back_page, h_page):sum():item() + cu.ne(back_pin, h_page):sum():item()
  + cu.ne(fresh, h_page):sum():item()
assert(bad_up == 0 and bad_down == 0, string.format("copies differ: %d up, %d down", bad_up, bad_down))
results:add("pageable_ok",
  cu.ne(d_page, ref):sum():item() == 0 and cu.ne(back_page, h_page):sum():item() == 0 and 1 or 0)
results:add("pinned_ok", cu.ne(d_pin, ref):sum():item() == 0 and cu.ne(back_pin, h_page):sum():item() == 0 and 1 or 0)
fresh:free(); back_pin:free(); back_page:free(); d_pin:free(); ref:free()

-- 5. Random numbers: generated on the host and copied, against generated on the device.
local h_rand
row(string.format("rand on the host, %.0f MB", mb), synced(function() h_rand = cu.host.rand(shape, { seed = 9 }) end),
  "one CPU thread runs Philox into fresh memory", "host_rand_ms")
row("  + copy to the device (pageable)", synced(function() cu.copy(d_page, h_rand) end),
  "the naive way pays the generation and the copy", "host_rand_copy_ms")
local d_rand = cu.empty(shape)
cu.rand(shape, { seed = 9, out = d_rand, stream = s }) -- first call: not what is measured
local rand_ms = cu.time(function() cu.rand(shape, { seed = 9, out = d_rand, stream = s }) end, { stream = s })
row(string.format("rand on the device, %.0f MB (events)", mb), rand_ms,
  string.format("%s, written where it is used: nothing to copy", gbps(rand_ms)), "device_rand_ms")
local lo, hi, mean = d_rand:min():item(), d_rand:max():item(), d_rand:mean():item()
local same = cu.ne(d_rand, d_page):sum():item() -- d_page holds the host-generated copy
assert(lo >= 0 and hi < 1 and math.abs(mean - 0.5) < 0.01, "device random numbers out of range")
assert(same == 0, "host and device random numbers differ")
results:add("rand_shape", table.concat(d_rand.shape, "x"))
results:add("rand_min", string.format("%.9g", lo))
results:add("rand_max", string.format("%.9g", hi))
results:add("rand_mean", string.format("%.9g", mean))
results:add("rand_host_device_mismatches", same)

print(string.format("\n%-46s %12s  %s", "what", "time", "why"))
for _, r in ipairs(rows) do
  print(string.format("%-46s %9.3f ms  %s", r.name, r.ms, r.note))
end
print(string.format("\nDevice random numbers: shape {%s}, min %.8f, max %.8f, mean %.6f, and bit for bit the",
  table.concat(d_rand.shape, ","), lo, hi, mean))
print("numbers the host generates from the same seed (Philox is counter-based). Pageable and pinned")
print("copies delivered identical data.")
print("\nNone of the first-call costs belongs in a steady-state figure: create the context, allocate,")
print("pin and warm up before timing, reuse buffers (the pool makes allocate/free cheap, pinning is")
print("not), prefer pinned memory for repeated copies, and generate data where it is used.")
if not gpu then
  print("(On the host backend there is no driver: the context, the pool and pinning cost little, and")
  print("copies are memcpy. The GPU figures are the ones this table is about.)")
end
if flags.results then results:print() end
