-- Foundation benchmark: culua against native C++ (culua-baseline) in one run, on the current GPU.
--   build/culua scripts/bench/foundation.lua [transfer MiB]
-- Pinned transfers (events), pool allocation + free (host clock: it is host-side work) and the
-- start-up time of `culua -e 'local x = 1'`. Prints a table of ratios against the targets.

local function interpreter()
  local i = -1
  while arg[i - 1] do i = i - 1 end
  return arg[i]
end
local culua = interpreter()
local bindir = culua:match("^(.*)/[^/]*$") or "."
local baseline = bindir .. "/culua-baseline"
local transfer_mib = tonumber(arg[1]) or (cu.backend == "cuda" and 512 or 64)

local function median(t)
  table.sort(t)
  local n = #t
  return n % 2 == 1 and t[(n + 1) // 2] or (t[n // 2] + t[n // 2 + 1]) / 2
end

local function run_baseline(args)
  local f = assert(io.popen(baseline .. " " .. args .. " 2>&1"))
  local out = f:read("a")
  local ok = f:close()
  local values = {}
  for key, value in out:gmatch("(%S+) ([%d%.]+) %S+\n") do values[key] = tonumber(value) end
  return ok and values or nil, out
end

local device = cu.devices()[cu.device() + 1]
print(string.format("culua %s foundation benchmark, %s backend, %s, %s", cu.version, cu.backend,
  device.name, os.date("!%Y-%m-%d %H:%M UTC")))

-- Pinned transfers: median of 10 single copies timed with events on one stream.
local s = cu.stream()
local elements = transfer_mib * 2 ^ 20 // 4
local h = cu.host.empty(elements, "f32", { pinned = true })
local hp = cu.host.empty(elements, "f32")
local d = cu.empty(elements, { stream = s })
h:fill(1)
hp:fill(1)
d:fill(1, { stream = s })
s:sync()

local function copy_gbps(dst, src)
  local e0, e1 = cu.event(), cu.event()
  for _ = 1, 2 do cu.copy(dst, src, { stream = s }) end
  local rates = {}
  for _ = 1, 10 do
    e0:record(s)
    cu.copy(dst, src, { stream = s })
    e1:record(s)
    rates[#rates + 1] = dst.nbytes / (e0:elapsed(e1) * 1e6)
  end
  return median(rates)
end

-- Pageable copies are synchronous: time them as a program experiences them.
local function pageable_gbps(dst, src)
  cu.copy(dst, src)
  local rates = {}
  for _ = 1, 10 do
    local t0 = cu.clock()
    cu.copy(dst, src)
    rates[#rates + 1] = dst.nbytes / ((cu.clock() - t0) * 1e9)
  end
  return median(rates)
end

-- a:to_host() into fresh pageable memory: the copy also faults the new pages in.
local function to_host_gbps(src)
  local rates = {}
  for _ = 1, 5 do
    local t0 = cu.clock()
    local fresh = src:to_host()
    rates[#rates + 1] = src.nbytes / ((cu.clock() - t0) * 1e9)
    fresh:free()
  end
  return median(rates)
end

local culua_fig = {
  h2d_pinned = copy_gbps(d, h),
  d2h_pinned = copy_gbps(h, d),
  h2d_pageable = pageable_gbps(d, hp),
  d2h_pageable = pageable_gbps(hp, d),
  to_host_fresh = to_host_gbps(d),
}
h:free()
hp:free()
d:free()

-- Pool allocation + free of 64 MiB from Lua, host time per pair (median of 10 batches of 1000).
local n64 = 64 * 2 ^ 20 // 4
for _ = 1, 100 do cu.empty(n64):free() end
local per_pair = {}
for _ = 1, 10 do
  local t0 = cu.clock()
  for _ = 1, 1000 do
    local a = cu.empty(n64)
    a:free()
  end
  per_pair[#per_pair + 1] = (cu.clock() - t0) / 1000 * 1e6
end
culua_fig.alloc_free_us = median(per_pair)
cu.sync()

-- Start-up: culua -e 'local x = 1', median of 21 runs (spawned by the baseline program).
local startup
local native
if cu.backend == "cuda" then
  native = run_baseline("all " .. transfer_mib)
end
do
  local f = io.popen(string.format("%s startup %s -e 'local x = 1' 2>&1", baseline, culua))
  local out = f and f:read("a") or ""
  if f then f:close() end
  startup = tonumber(out:match("startup_ms ([%d%.]+)"))
end

local rows = {}
local function row(name, value, unit, base, base_name, target, met)
  rows[#rows + 1] = { name, value, unit, base, base_name, target, met }
end
local function pct(a, b) return b and string.format("%.1f%%", 100 * a / b) or "n/a" end

native = native or {}
row("host->device pinned", culua_fig.h2d_pinned, "GB/s", native["native.h2d_pinned_GBps"],
  "cudaMemcpyAsync", ">= 95% of native",
  native["native.h2d_pinned_GBps"] and culua_fig.h2d_pinned >= 0.95 * native["native.h2d_pinned_GBps"])
row("device->host pinned", culua_fig.d2h_pinned, "GB/s", native["native.d2h_pinned_GBps"],
  "cudaMemcpyAsync", ">= 95% of native",
  native["native.d2h_pinned_GBps"] and culua_fig.d2h_pinned >= 0.95 * native["native.d2h_pinned_GBps"])
row("host->device pageable", culua_fig.h2d_pageable, "GB/s", native["native.h2d_pageable_GBps"],
  "cudaMemcpy", "(reported)", nil)
row("device->host pageable", culua_fig.d2h_pageable, "GB/s", native["native.d2h_pageable_GBps"],
  "cudaMemcpy", "(reported)", nil)
row("to_host() (fresh memory)", culua_fig.to_host_fresh, "GB/s", native["native.d2h_pageable_GBps"],
  "cudaMemcpy", "(reported)", nil)
row("alloc+free 64 MiB", culua_fig.alloc_free_us, "us", native["native.pool_alloc_free_us"],
  "cudaMallocAsync+FreeAsync", "<= 2 us", culua_fig.alloc_free_us <= 2)
row("  (cudaMalloc+cudaFree)", native["native.malloc_free_us"] or 0 / 0, "us", nil, "", "", nil)
row("culua -e 'local x = 1'", startup or 0 / 0, "ms", nil, "", "< 20 ms", startup and startup < 20)

print(string.format("\n| %-24s | %12s | %12s | %-25s | %8s | %-17s | %-6s |", "measurement", "culua",
  "native", "native call", "ratio", "target", "status"))
print("|" .. string.rep("-", 26) .. "|" .. string.rep("-", 14) .. "|" .. string.rep("-", 14) .. "|"
  .. string.rep("-", 27) .. "|" .. string.rep("-", 10) .. "|" .. string.rep("-", 19) .. "|"
  .. string.rep("-", 8) .. "|")
for _, r in ipairs(rows) do
  local name, value, unit, base, base_name, target, met = table.unpack(r, 1, 7)
  local status = met == nil and "" or (met and "met" or "MISSED")
  print(string.format("| %-24s | %7.2f %-4s | %12s | %-25s | %8s | %-17s | %-6s |", name, value, unit,
    base and string.format("%7.2f %-4s", base, unit) or "", base_name,
    base and pct(value, base) or "", target, status))
end
if native["native.context_s"] then
  print(string.format("\ncontext creation (cudaFree(0), native): %.3f s; transfers of %d MiB",
    native["native.context_s"], transfer_mib))
end
