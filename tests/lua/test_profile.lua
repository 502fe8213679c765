-- cu.profile and culua --profile: device rows (CUPTI on CUDA, the host streams' task times on the
-- host backend), joined to the operation and the script line that queued them; the tables, the
-- idle gaps, :json/:csv, the rows in the --trace file, and bad input.
local dir = arg and arg[0] and arg[0]:match("^(.*)[/\\]") or "tests/lua"
package.path = dir .. "/?.lua;" .. package.path
local T = require "cu.testing"
local S = require "support"
local json = require "json_reader"

local cuda = cu.backend == "cuda"
local here = debug.getinfo(1, "S").short_src

-- The line of the code that follows the call (this file's line numbers, not hard-coded).
local function line_after()
  return here .. ":" .. (debug.getinfo(2, "l").currentline + 1)
end

local function row_of(rows, key, field)
  for _, r in ipairs(rows) do
    if r[field or "line"] == key then return r end
  end
  return nil
end

local child = S.run_script_child

T.case("cu.profile puts each row's device time on the line that queued it", function()
  local n = 1 << 16
  local a, b = cu.ones(n), cu.ones(n)
  cu.sync()
  local lines = {}
  local p = cu.profile(function()
    lines.add = line_after()
    local c = a + b
    lines.mul = line_after()
    for _ = 1, 3 do c = c * 2 end
    lines.sleep = line_after()
    cu.sleep(20)  -- long enough to outweigh the other rows on a loaded host
    T.eq(c[1], 16, "the function's work ran")
  end)
  T.truthy(p.records >= 5, "records: " .. p.records)
  T.truthy(p.operations >= 5, "operations: " .. p.operations)
  local add, mul, sleep = row_of(p.lines, lines.add), row_of(p.lines, lines.mul),
      row_of(p.lines, lines.sleep)
  T.truthy(add and mul and sleep, "rows for the three lines: " .. tostring(p))
  T.eq(add.calls, 1, "one kernel for a + b")
  T.eq(mul.calls, 3, "three kernels for the loop's line")
  T.eq(sleep.calls, 1, "one row for the sleep")
  T.truthy(add.operations:find("add", 1, true), "the line's operations: " .. add.operations)
  T.truthy(sleep.total_ms >= 19.5 and sleep.total_ms < 400, "the sleep's device time: " .. sleep.total_ms)
  T.truthy(sleep.share > 0.5, "the sleep's share: " .. sleep.share)
  -- Every row is counted once in each table; shares add up to 1; min <= mean <= max.
  local calls, share, kcalls = 0, 0, 0
  for _, r in ipairs(p.lines) do
    calls, share = calls + r.calls, share + r.share
    T.truthy(r.min_us <= r.mean_us + 1e-9 and r.mean_us <= r.max_us + 1e-9, "min/mean/max " .. r.line)
  end
  for _, r in ipairs(p.kernels) do kcalls = kcalls + r.calls end
  T.eq(calls, p.records, "the lines' calls")
  T.eq(kcalls, p.records, "the kernels' calls")
  T.near(share, 1, 1e-9, "the shares")
  T.truthy(p.busy_ms <= p.span_ms + 1e-6 and p.busy_ms >= 4.5, "busy " .. p.busy_ms .. " span " .. p.span_ms)
  T.near(p.busy_ms + p.idle_ms, p.span_ms, 1e-3, "busy + idle = span (one device)")
  -- The rows themselves, in device order, each with its line and operation.
  local rows = p.rows
  T.eq(#rows, p.records, "p.rows")
  for i, r in ipairs(rows) do
    T.truthy(r.end_us >= r.start_us, "row " .. i .. " ends after it starts")
    if i > 1 then T.truthy(r.start_us >= rows[i - 1].start_us, "rows in device order") end
    T.truthy(r.line ~= "", "row " .. i .. " (" .. r.name .. ") has its line")
  end
  if cuda then
    -- CUPTI's rows: kernel names as compiled, launch dimensions and registers.
    local k = rows[1]
    T.eq(k.kind, "kernel")
    T.truthy(k.grid and k.block and k.registers > 0, "grid, block and registers of " .. k.name)
    T.truthy(k.name ~= "add", "the kernel's own name: " .. k.name)
  else
    T.eq(row_of(p.kernels, "add", "name").calls, 1, "host rows are named by operation")
    T.eq(row_of(p.kernels, "mul", "name").calls, 3)
  end
end)

T.case("idle gaps: the device waiting for the host shows on the line that came late", function()
  cu.sync()
  local late
  local p = cu.profile(function()
    cu.sleep(2)
    cu.sync()
    local t0 = cu.clock()
    while cu.clock() - t0 < 0.02 do end -- 20 ms of host work: the device is idle
    late = line_after()
    cu.sleep(2)
  end)
  T.truthy(p.idle_ms >= 15, "idle " .. p.idle_ms .. " ms")
  T.truthy(p.gaps >= 1, "gaps " .. p.gaps)
  local g = p.largest_gaps[1]
  T.truthy(g and g.ms >= 15, "the largest gap")
  T.eq(g.before, late, "the gap ended with the late line's work")
  T.truthy(row_of(p.lines, late).idle_before_ms >= 15, "the late line's idle before")
end)

T.case(":print, :json, :csv and tostring", function()
  local a = cu.ones(1000)
  local p = cu.profile(function()
    local _ = a * 3 + 1
  end)
  local text = tostring(p)
  T.truthy(text:find("by kernel", 1, true) and text:find("by line", 1, true), text)
  T.eq(p:print(), p, ":print returns the profile")
  T.eq(p:print(0), p)
  T.raises(function() p:print(-1) end, "must be >= 0")
  local doc = json.decode(p:json())
  T.eq(doc.records, p.records)
  T.eq(#doc.rows, p.records)
  T.eq(#doc.by_line, #p.lines)
  T.eq(doc.backend, cu.backend)
  local csv = p:csv()
  local lines = {}
  for l in csv:gmatch("[^\n]+") do lines[#lines + 1] = l end
  T.eq(#lines, p.records + 1, "a header and a line per row")
  T.truthy(lines[1]:find("^kind,name,device,stream,start_us"), lines[1])
  local file = os.tmpname()
  T.eq(p:json(file), p)
  T.eq(json.decode(assert(io.open(file)):read("a")).records, p.records)
  T.eq(p:csv(file), p)
  T.eq(select(2, assert(io.open(file)):read("a"):gsub("\n", "")), p.records + 1)
  os.remove(file)
  T.raises(function() p:json("/nonexistent-dir/x.json") end, "cannot write the profile")
end)

T.case("cu.profile inside cu.profile reports its own part", function()
  local a = cu.ones(1000)
  local inner
  local outer = cu.profile(function()
    local _ = a + 1
    inner = cu.profile(function()
      local _ = a * 2
      local _ = a * 3
    end)
    local _ = a - 1
  end)
  T.eq(inner.records, 2, "the inner profile: " .. tostring(inner))
  T.eq(outer.records, 4, "the outer one has all: " .. tostring(outer))
end)

T.case("bad input and failures leave the runtime working", function()
  T.raises(function() cu.profile(5) end, "bad argument #1 to 'profile' (function expected, got number)")
  T.raises(function() cu.profile(function() end, { limt = 3 }) end, "limt")
  T.raises(function() cu.profile(function() end, { limit = 0 }) end, "limit")
  T.raises(function() cu.profile(function() end, { limit = "x" }) end, "limit")
  T.raises(function() cu.profile(function() error("inside the profile") end) end, "inside the profile")
  -- The failed profile stopped: a new one starts and records.
  local p = cu.profile(function() local _ = cu.ones(10) + 1 end, { limit = 1 })
  T.eq(p.records, 1, "limit = 1")
  T.truthy(p.dropped >= 1, "the rest dropped: " .. p.dropped)
  local empty = cu.profile(function() end)
  T.eq(empty.records, 0)
  T.truthy(tostring(empty):find("nothing ran on the device", 1, true), tostring(empty))
  T.eq((cu.ones(3) + 1):totable(), { 2, 2, 2 }, "usable after")
end)

T.case("culua --profile: the tables at the end, the file, the device rows in --trace", function()
  local pfile, tfile = os.tmpname() .. ".json", os.tmpname() .. ".json"
  local out, err, code = child([[
    local a = cu.ones(4096)
    for _ = 1, 4 do a = a * 2 end
    cu.sleep(3)
    print(a[1])
  ]], "--profile=" .. pfile .. " --trace " .. tfile)
  T.eq(code, 0, err)
  T.eq(out, "16.0\n")
  T.truthy(err:find("profile: ", 1, true) and err:find("by line", 1, true), err)
  local doc = json.decode(assert(io.open(pfile)):read("a"))
  T.truthy(doc.records >= 6, "records in the file: " .. doc.records)
  local loop
  for _, l in ipairs(doc.by_line) do
    if l.line:find(":2$") then loop = l end
  end
  T.truthy(loop and loop.calls == 4, "line 2's four kernels")
  local trace = json.decode(assert(io.open(tfile)):read("a"))
  local profiled, flows_s, flows_f = 0, 0, 0
  for _, e in ipairs(trace.traceEvents) do
    if e.cat and e.cat:find("^profiled") then profiled = profiled + 1 end
    if e.ph == "s" then flows_s = flows_s + 1 end
    if e.ph == "f" then flows_f = flows_f + 1 end
  end
  T.eq(profiled, doc.records, "a trace row per profiled row")
  T.truthy(flows_s == flows_f and flows_s >= 6, "an arrow from each host slice: " .. flows_s)
  os.remove(pfile)
  os.remove(tfile)
  -- --profile without a file: the tables only; a bad file is refused before the script runs.
  local _, err2, code2 = child("local _ = cu.ones(3) + 1", "--profile")
  T.eq(code2, 0, err2)
  T.truthy(err2:find("by kernel", 1, true), err2)
  local out3, err3, code3 = child("print('ran')", "--profile=/nonexistent-dir/p.json")
  T.truthy(code3 ~= 0 and out3 == "" and err3:find("--profile file", 1, true), err3)
  local _, err4, code4 = child("print('ran')", "--profile=")
  T.truthy(code4 ~= 0 and err4:find("empty file name", 1, true), err4)
end)

T.case("counters: bad options, the host backend, the roofline from results with counters", function()
  if not cuda then
    T.raises(function() cu.bench(function() end, { counters = true }) end,
      "hardware counters are not available on the host backend")
  end
  T.raises(function() cu.bench(function() end, { counters = 5 }) end,
    "option 'counters': true or a list of metric names expected, got number")
  T.raises(function() cu.bench(function() end, { counters = {} }) end, "the list of metrics is empty")
  T.raises(function() cu.bench(function() end, { counters = { 1 } }) end, "[1] must be a metric name")
  local peaks = { dram_GBps = 4000, fp32_TFLOPs = 66.9, fp64_TFLOPs = 33.5, fp16_TFLOPs = 133.8 }
  local rows = {
    { name = "add", counters = { intensity = 0.083, TFLOPs = 0.3, precision = "fp32", peaks = peaks } },
    { name = "matmul", counters = { intensity = 80, TFLOPs = 50, precision = "fp32" } },
    { name = "copy", counters = { TFLOPs = 0 } }, -- no FLOPs: not placed
  }
  local file = os.tmpname() .. ".png"
  T.raises(function() cu.plot({ { name = "x" } }, { kind = "roofline", file = file }) end, "no row has them")
  T.raises(function() cu.plot(rows, { kind = "pie", file = file }) end, 'kind must be "lines" or "roofline"')
  T.raises(function() cu.plot({ rows[3] }, { kind = "roofline", file = file }) end, "no row has them")
  if os.execute("command -v gnuplot >/dev/null 2>&1") then
    T.eq(cu.plot(rows, { kind = "roofline", file = file, title = "roofline" }), file)
    local data = assert(io.open(file, "rb")):read("a")
    T.eq(data:sub(1, 8), "\137PNG\r\n\26\n", "a PNG")
    local svg = os.tmpname() .. ".svg"
    cu.plot(rows, { kind = "roofline", file = svg })
    local text = assert(io.open(svg)):read("a")
    T.truthy(text:find("FP32 roof", 1, true) and text:find("matmul", 1, true), "the roofs and the labels")
    os.remove(svg)
    -- A sweep whose points carry counters: one point each, labelled by the axes.
    local results = cu.sweep{ name = "roof", axes = { { "n", { 1, 2 } } }, quiet = true,
      run = function(p)
        return { gpu = { median = 1 }, counters = { intensity = p.n, TFLOPs = p.n, peaks = peaks } }
      end }
    T.eq(results:plot({ kind = "roofline", file = svg }), svg)
    T.truthy(assert(io.open(svg)):read("a"):find("n=2", 1, true), "labelled by the axes")
    os.remove(svg)
    -- A bench result without counters cannot be placed.
    local plain = cu.bench(function() end, { max_time = 0.05, min_time = 0.01, min_samples = 1, hot = false })
    T.raises(function() plain:plot({ kind = "roofline", file = file }) end, "needs results with hardware counters")
    T.raises(function() plain:plot({ kind = "lines", file = file }) end, 'kind = "roofline"')
    T.raises(function() plain:plot({}) end, "needs file=")
    os.remove(file)
  end
end)

if cuda then
  T.case("CUDA: a library call's own kernels and a graph's nodes join the calling line", function()
    local m = cu.rand({ 512, 512 })
    local g = cu.graph(function()
      local _ = m * 2
      local _ = m + 1
    end)
    cu.sync()
    local mm, gl
    local p = cu.profile(function()
      mm = line_after()
      local _ = m:matmul(m)
      gl = line_after()
      g:launch()
    end)
    local r = row_of(p.lines, mm)
    T.truthy(r and r.calls >= 1 and r.operations:find("matmul", 1, true), tostring(p))
    local found = false
    for _, row in ipairs(p.rows) do
      if row.line == mm then
        found = true
        T.truthy(row.name ~= "matmul", "cuBLAS's kernel name: " .. row.name)
      end
    end
    T.truthy(found)
    local gr = row_of(p.lines, gl)
    T.truthy(gr and gr.calls == 2, "the graph's two kernels on its launch line: " .. tostring(p))
    for _, row in ipairs(p.rows) do
      if row.line == gl then T.truthy(row.graph and row.graph > 0, "graph id of " .. row.name) end
    end
  end)

  T.case("CUDA: CUPTI's device time agrees with events around one launch", function()
    local x = cu.ones(1 << 26)
    local y = x * 1
    cu.sync()
    local best = math.huge
    local p
    for _ = 1, 5 do
      local ev = cu.time(function() cu.mul(x, 2, { out = y }) end)
      best = math.min(best, ev)
    end
    p = cu.profile(function()
      for _ = 1, 5 do cu.mul(x, 2, { out = y }) end
    end)
    local k = p.kernels[1]
    T.eq(k.calls, 5)
    -- Events include the launch's own few microseconds; CUPTI's rows are the kernel alone.
    T.truthy(math.abs(k.min_us / 1e3 - best) / best < 0.1,
      string.format("CUPTI %.4f ms, events %.4f ms", k.min_us / 1e3, best))
  end)
end

if cuda then
  T.case("CUDA: hardware counters, the verdict and bad metric names", function()
    local n = 1 << 26 -- 256 MiB each: about 200 us, far past the L2
    local x, y, z = cu.ones(n), cu.ones(n), cu.empty(n)
    local r = cu.bench(function() cu.add(x, y, { out = z }) end, { counters = true, max_time = 1 })
    local c = r.counters
    T.eq(r.bound, "memory", r.verdict)
    T.truthy(r.verdict:find("^memory%-bound"), r.verdict)
    T.truthy(tostring(r):find("memory-bound", 1, true), "tostring shows the verdict")
    -- The add reads 2 x 256 MiB and writes 256 MiB, one FADD per element.
    T.near(c.dram_read_bytes / (8 * n), 1, 0.05, "DRAM bytes read")
    -- Written lines still in the L2 when the range ends are not counted (up to its size).
    T.truthy(c.dram_write_bytes / (4 * n) > 0.8 and c.dram_write_bytes / (4 * n) < 1.05,
      "DRAM bytes written: " .. c.dram_write_bytes)
    T.eq(c.flops.fp32, n, "one FADD per element")
    T.truthy(c.dram_share > 0.8 and c.dram_share < 1.2, "DRAM share of the measured copy " .. c.dram_share)
    T.truthy(c.occupancy > 0.5 and c.occupancy <= 1, "occupancy " .. c.occupancy)
    T.truthy(c.passes >= 1 and c.chip ~= "", "passes and chip")
    T.truthy(c.peaks.dram_GBps > 100 and c.peaks.fp32_TFLOPs > 1, "the peaks")
    T.truthy(c.time_ms <= c.range_ms, "the benchmark's time within the range")
    T.eq(z[1], 2, "the passes ran the function")
    local m = 2048
    local a, b, o = cu.rand({ m, m }), cu.rand({ m, m }), cu.empty({ m, m })
    local mm = cu.bench(function() cu.matmul(a, b, { out = o }) end, { counters = true, max_time = 1 })
    T.eq(mm.bound, "compute", mm.verdict)
    T.truthy(mm.counters.intensity > 10, "a product's intensity " .. mm.counters.intensity)
    -- A list of metrics: only those; a name the chip cannot count is an error naming it.
    local own = cu.bench(function() cu.add(x, y, { out = z }) end,
      { counters = { "dram__bytes_read.sum", "gpu__time_duration.sum" }, max_time = 0.5, min_time = 0.1 })
    T.truthy(own.counters.metrics["dram__bytes_read.sum"] > 0, "the metric asked for")
    T.eq(own.counters.metrics["sm__throughput.avg.pct_of_peak_sustained_elapsed"], nil, "no other")
    T.raises(function()
      cu.bench(function() end, { counters = { "dram__bytes_read.summ" }, max_time = 0.5, min_time = 0.1 })
    end, "dram__bytes_read.summ")
    local g = cu.graph(function() cu.add(x, y, { out = z }) end)
    local gr = cu.bench(g, { counters = true, max_time = 0.5, min_time = 0.1 })
    T.eq(gr.bound, "memory", "a graph's counters: " .. gr.verdict)
  end)
end

os.exit(T.run())
