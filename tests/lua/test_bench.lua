-- cu.bench: cold samples with the stopping rule, hot batches, launch-bound detection, statistics,
-- throughput figures, tostring and :json(), and bad input. On the host backend cu.sleep keeps a
-- stream busy for a known time, so the device times are known.
local T = require "cu.testing"

-- Quick settings: the defaults (0.5 s of device time, 5 s at most) are for real measurements.
local QUICK = { min_time = 0.02, max_time = 1 }
local function opts(extra)
  local o = {}
  for k, v in pairs(QUICK) do o[k] = v end
  for k, v in pairs(extra or {}) do o[k] = v end
  return o
end

local function sleeper(ms, stream)
  return function() cu.sleep(ms, stream and { stream = stream } or nil) end
end

local function sum(t)
  local s = 0
  for _, v in ipairs(t) do s = s + v end
  return s
end

local function check_summary(s, what)
  for _, k in ipairs({ "min", "median", "mean", "stddev", "p10", "p90", "max", "noise" }) do
    T.truthy(type(s[k]) == "number" and s[k] == s[k], what .. "." .. k .. " is a number")
  end
  T.truthy(s.min <= s.p10 and s.p10 <= s.median and s.median <= s.p90 and s.p90 <= s.max,
    string.format("%s: min %g <= p10 %g <= median %g <= p90 %g <= max %g", what, s.min, s.p10,
      s.median, s.p90, s.max))
  T.truthy(s.stddev >= 0 and s.noise >= 0, what .. ": stddev and noise are not negative")
  T.near(s.noise, s.stddev / s.mean, 1e-12 * math.max(1, s.noise), what .. ".noise = stddev/mean")
end

-- A minimal JSON reader, to check that :json() is well-formed and carries the result.
local function decode_json(text)
  local pos = 1
  local function ws() pos = text:find("[^ \t\r\n]", pos) or #text + 1 end
  local value
  local function str()
    local out = {}
    pos = pos + 1
    while true do
      local c = text:sub(pos, pos)
      if c == "" then error("unterminated string") end
      if c == '"' then pos = pos + 1; break end
      if c == "\\" then
        local e = text:sub(pos + 1, pos + 1)
        local map = { ['"'] = '"', ["\\"] = "\\", ["/"] = "/", b = "\b", f = "\f", n = "\n", r = "\r",
          t = "\t" }
        if e == "u" then
          out[#out + 1] = utf8.char(tonumber(text:sub(pos + 2, pos + 5), 16))
          pos = pos + 6
        else
          out[#out + 1] = assert(map[e], "bad escape")
          pos = pos + 2
        end
      else
        out[#out + 1] = c
        pos = pos + 1
      end
    end
    return table.concat(out)
  end
  function value()
    ws()
    local c = text:sub(pos, pos)
    if c == "{" then
      local o = {}
      pos = pos + 1
      ws()
      if text:sub(pos, pos) == "}" then pos = pos + 1; return o end
      while true do
        ws()
        assert(text:sub(pos, pos) == '"', "object key expected at " .. pos)
        local k = str()
        ws()
        assert(text:sub(pos, pos) == ":", "':' expected at " .. pos)
        pos = pos + 1
        o[k] = value()
        ws()
        local d = text:sub(pos, pos)
        pos = pos + 1
        if d == "}" then return o end
        assert(d == ",", "',' or '}' expected at " .. (pos - 1))
      end
    elseif c == "[" then
      local a = {}
      pos = pos + 1
      ws()
      if text:sub(pos, pos) == "]" then pos = pos + 1; return a end
      while true do
        a[#a + 1] = value()
        ws()
        local d = text:sub(pos, pos)
        pos = pos + 1
        if d == "]" then return a end
        assert(d == ",", "',' or ']' expected at " .. (pos - 1))
      end
    elseif c == '"' then
      return str()
    elseif text:sub(pos, pos + 3) == "true" then
      pos = pos + 4; return true
    elseif text:sub(pos, pos + 4) == "false" then
      pos = pos + 5; return false
    elseif text:sub(pos, pos + 3) == "null" then
      pos = pos + 4; return nil
    else
      local num = text:match("^-?%d+%.?%d*[eE]?[-+]?%d*", pos)
      assert(num and #num > 0, "value expected at " .. pos)
      pos = pos + #num
      return math.tointeger(tonumber(num)) or tonumber(num)
    end
  end
  local v = value()
  ws()
  assert(pos == #text + 1, "trailing text at " .. pos)
  return v
end

T.case("a known device time: median, percentiles, cpu time, result fields", function()
  local res = cu.bench(sleeper(2), opts({ name = "sleep2" }))
  T.eq(res.name, "sleep2")
  T.eq(res.backend, cu.backend)
  T.eq(res.device, cu.devices()[cu.device() + 1].name)
  T.eq(res.mode, "cold")
  T.truthy(res.samples >= 10, "at least min_samples (10) samples, got " .. res.samples)
  T.eq(#res.times, res.samples)
  T.eq(#res.cpu_times, res.samples)
  check_summary(res.gpu, "gpu")
  check_summary(res.cpu, "cpu")
  T.truthy(res.gpu.median >= 1.95 and res.gpu.median < 6,
    "gpu median close to the 2 ms sleep, got " .. res.gpu.median)
  -- The host time of a sample waits for the device work: at least the sleep.
  T.truthy(res.cpu.median >= 1.95, "cpu median includes the wait, got " .. res.cpu.median)
  local sorted = {}
  for i, v in ipairs(res.times) do sorted[i] = v end
  table.sort(sorted)
  T.eq(res.gpu.min, sorted[1])
  T.eq(res.gpu.max, sorted[#sorted])
  T.near(res.gpu.mean, sum(res.times) / #res.times, 1e-9)
  T.eq(res.GBps, nil, "no bytes, no GB/s")
  T.eq(res.TFLOPs, nil)
  if cu.backend == "host" then
    T.eq(res.clock, nil, "the host backend reports no clock")
    T.eq(res.throttled, nil)
  elseif res.clock then -- NVML present: SM clocks in MHz
    T.truthy(res.clock.before > 100 and res.clock.after > 100, "SM clock in MHz")
    T.truthy(res.throttled >= 0 and res.throttled <= res.samples)
  end
  T.eq(res.launch_bound, false)
  T.eq(type(res.notes), "table")
  T.truthy(res.elapsed > 0)
  T.truthy(res.stop == "noise" or res.stop == "converged" or res.stop == "max_time", res.stop)
end)

T.case("the default name is where the function was defined", function()
  local res = cu.bench(function() end, { min_time = 0, max_time = 0.05, hot = false })
  T.truthy(res.name:find("test_bench.lua:%d+$"), res.name)
end)

T.case("GB/s and TFLOP/s are bytes and flops over the median device time", function()
  local res = cu.bench(sleeper(1), opts({ bytes = 1e9, flops = 4e12 }))
  T.near(res.GBps, 1e9 / (res.gpu.median * 1e-3) / 1e9, 1e-9 * res.GBps)
  T.near(res.TFLOPs, 4e12 / (res.gpu.median * 1e-3) / 1e12, 1e-9 * res.TFLOPs)
  T.truthy(res.GBps > 250 and res.GBps < 1050, "1 GB in about 1 ms: " .. res.GBps)
  T.near(res.hot.GBps, 1e9 / (res.hot.gpu.median * 1e-3) / 1e9, 1e-9 * res.hot.GBps)
  T.truthy(tostring(res):find(string.format("%.1f GB/s", res.GBps), 1, true), tostring(res))
  T.truthy(tostring(res):find("TFLOP/s", 1, true), tostring(res))
end)

T.case("stopping rule: min_samples, then noise", function()
  -- A loose noise target is met at once: exactly min_samples samples.
  local res = cu.bench(sleeper(1), { min_samples = 7, min_time = 0, noise = 10, hot = false })
  T.eq(res.samples, 7)
  T.eq(res.stop, "noise")
  T.truthy(res.gpu.noise <= 10)
  res = cu.bench(sleeper(1), { min_samples = 1, min_time = 0, noise = 10, hot = false })
  T.eq(res.samples, 1)
end)

T.case("stopping rule: min_time of accumulated device time", function()
  local res = cu.bench(sleeper(2), { min_samples = 1, min_time = 0.03, noise = 10, hot = false })
  local total = sum(res.times)
  T.truthy(total >= 30, "at least 30 ms of device time, got " .. total)
  -- and it stopped as soon as it could
  T.truthy(total - res.times[#res.times] < 30, "stopped at the first sample past min_time")
  T.eq(res.stop, "noise")
end)

T.case("stopping rule: max_time ends an unreachable noise target; min_samples still holds", function()
  local t0 = cu.clock()
  local res = cu.bench(sleeper(1), { min_samples = 5, min_time = 0, max_time = 0.15, noise = 1e-12,
    hot = false })
  local dt = cu.clock() - t0
  T.truthy(res.stop == "max_time" or res.stop == "converged", res.stop)
  T.truthy(res.samples >= 5)
  T.truthy(dt < 1.0, "max_time bounds the run: " .. dt .. " s")
  T.truthy(res.elapsed < 1.0)
  T.truthy(#res.notes >= 1, "a note says why it stopped above the target")
  -- max_time ends the sampling before min_samples too, and says so
  res = cu.bench(sleeper(2), { min_samples = 25, min_time = 0, max_time = 0.01, noise = 1e-12,
    hot = false })
  T.truthy(res.samples >= 1 and res.samples < 25, res.samples)
  T.eq(res.stop, "max_time")
  T.truthy(res.notes[1]:find("max_time (0.01 s) reached after " .. res.samples .. " of the 25 min_samples",
    1, true), res.notes[1])
end)

T.case("max_time bounds the whole measurement: warmup, samples, hot batches, graph runs", function()
  local function timed(fn, o)
    local t0 = cu.clock()
    local res = cu.bench(fn, o)
    return res, cu.clock() - t0
  end
  -- An unreachable sample count.
  local res, dt = timed(sleeper(1), { min_samples = 1000000, max_time = 0.2, min_time = 0 })
  T.truthy(dt < 1.5, "min_samples = 1e6 with max_time = 0.2 took " .. dt .. " s")
  T.eq(res.stop, "max_time")
  T.truthy(res.samples >= 1 and res.samples < 1000000, res.samples)
  T.truthy(res.hot.batches >= 2, "the hot batches' minimum is taken past max_time")
  -- An unreachable warmup: stopped, then one sample at least.
  res, dt = timed(sleeper(1), { warmup = 1000000, max_time = 0.1, min_time = 0 })
  T.truthy(dt < 1.5, "warmup = 1e6 with max_time = 0.1 took " .. dt .. " s")
  T.truthy(res.warmup >= 1 and res.warmup < 1000000, res.warmup)
  T.truthy(res.samples >= 1)
  local notes = table.concat(res.notes, "\n")
  T.truthy(notes:find("reached during the warmup, after " .. res.warmup .. " of 1000000 calls", 1, true), notes)
  -- Hot batches only.
  res, dt = timed(sleeper(2), { cold = false, max_time = 0.05, min_time = 0 })
  T.truthy(dt < 1.5, "hot only took " .. dt .. " s")
  T.truthy(res.hot.batches >= 1)
  -- Eager and graph runs share one max_time.
  res, dt = timed(sleeper(1), { graph = true, min_samples = 1000000, max_time = 0.2, min_time = 0 })
  T.truthy(dt < 1.5, "graph = true took " .. dt .. " s")
  T.truthy(res.graph.samples >= 1)
  T.eq(res.graph.stop, "max_time")
  T.eq(cu.ones(3):sum():item(), 3, "the runtime still works")
end)

T.case("warmup calls are not samples", function()
  local calls = 0
  local res = cu.bench(function() calls = calls + 1 end,
    { warmup = 3, min_samples = 4, min_time = 0, noise = 1e9, hot = false })
  T.eq(res.samples, 4)
  T.eq(res.warmup, 3)
  -- A cold sample calls fn twice: once host-timed, once held behind the gate and device-timed.
  T.eq(res.gated, true)
  T.eq(calls, 3 + 2 * 4)
  calls = 0
  cu.bench(function() calls = calls + 1 end,
    { warmup = 0, min_samples = 2, min_time = 0, noise = 1e9, hot = false })
  T.eq(calls, 2 * 2)
  -- A fn that waits for the device cannot be gated: one call per sample, and a note says so.
  calls = 0
  local a = cu.ones(4)
  res = cu.bench(function() calls = calls + 1; return a[1] end,
    { warmup = 1, min_samples = 3, min_time = 0, noise = 1e9, hot = false })
  T.eq(res.gated, false)
  T.eq(calls, 1 + 3)
  T.truthy(res.notes[1]:find("fn waits for the device itself"), res.notes[1])
end)

T.case("the gate: cold device times exclude the host's gaps between fn's operations", function()
  -- Two 1 ms device sleeps with 3 ms of host work between them: a host-timed call takes 4 ms (the
  -- first sleep overlaps the host's work), the device idles 2 ms of it. Held behind the gate the
  -- device runs both back to back: 2 ms.
  local function spin(ms)
    local t = cu.clock { warn = false }
    while (cu.clock { warn = false } - t) * 1e3 < ms do end
  end
  local res = cu.bench(function() cu.sleep(1); spin(3); cu.sleep(1) end,
    { min_samples = 5, min_time = 0, noise = 1e9, hot = false })
  T.eq(res.gated, true)
  if os.getenv("CULUA_UNDER_SANITIZER") == "1" then
    -- compute-sanitizer instruments cu.sleep's clock loop: a 1 ms sleep takes several there.
    T.skip("device time of sleeps under compute-sanitizer (kernels slowed)")
  end
  T.truthy(res.gpu.median >= 1.95 and res.gpu.median < 3.5, "device time of two 1 ms sleeps, got " .. res.gpu.median)
  T.truthy(res.cpu.median >= 3.9, "the host-timed call includes the gap, got " .. res.cpu.median)
end)

T.case("hot batches: per-call device time and host enqueue time", function()
  local res = cu.bench(sleeper(2), opts())
  local h = res.hot
  T.truthy(h, "res.hot")
  T.truthy(h.batch_size >= 1 and h.batches >= 2, "batches of batch_size calls")
  T.eq(#h.times, h.batches)
  check_summary(h.gpu, "hot.gpu")
  -- (upper bounds are generous: on a loaded machine the host backend's sleeps overshoot)
  T.truthy(h.gpu.median >= 1.95 and h.gpu.median < 10, "2 ms per call, got " .. h.gpu.median)
  -- Queueing a sleep takes microseconds: the host is far ahead of the device.
  T.truthy(h.cpu_enqueue < 0.5, "enqueue per call is small, got " .. h.cpu_enqueue)
  -- queued behind a sleep, the calls still take 2 ms each on the device
  T.truthy(h.gpu_queued and h.gpu_queued >= 1.95 and h.gpu_queued < 10, "gpu_queued " .. tostring(h.gpu_queued))
  T.eq(res.launch_bound, false)
  T.truthy(tostring(res):find("  hot ", 1, true), tostring(res))
end)

T.case("hot=false and cold=false", function()
  local res = cu.bench(sleeper(1), opts({ hot = false }))
  T.eq(res.hot, nil)
  T.eq(res.launch_bound, false)
  res = cu.bench(sleeper(1), opts({ cold = false, bytes = 1e6 }))
  T.eq(res.mode, "hot")
  T.eq(res.samples, 0)
  T.eq(#res.times, 0)
  T.eq(res.cpu, nil)
  T.eq(res.gpu.median, res.hot.gpu.median)
  T.near(res.GBps, 1e6 / (res.gpu.median * 1e-3) / 1e9, 1e-9 * res.GBps)
  T.truthy(tostring(res):find("[hot]", 1, true), tostring(res))
  T.truthy(tostring(res):find("batches of", 1, true), tostring(res))
end)

T.case("launch-bound: a function that gives the device nothing to do", function()
  local res = cu.bench(function() end, { min_time = 0.5, max_time = 0.5 })
  T.eq(res.launch_bound, true, string.format("enqueue %g ms, gpu %g ms, queued %s ms per call",
    res.hot.cpu_enqueue, res.hot.gpu.median, tostring(res.hot.gpu_queued)))
  -- queued ahead, the calls take no device time at all
  T.truthy(res.hot.gpu_queued and res.hot.gpu_queued < 0.5 * res.hot.gpu.median,
    "gpu_queued " .. tostring(res.hot.gpu_queued))
  local found = false
  for _, n in ipairs(res.notes) do found = found or n:find("launch-bound", 1, true) ~= nil end
  T.truthy(found, "a note says launch-bound")
  T.truthy(tostring(res):find("launch-bound: the device was idle waiting for the host", 1, true),
    tostring(res))
end)

T.case("a function that waits for the device has no queued device time", function()
  local res = cu.bench(function() cu.sleep(0.3); cu.sync() end, opts({ hot = true }))
  T.eq(res.hot.gpu_queued, nil)
  -- it keeps the device idle while the host waits: host and device time per call agree
  T.truthy(res.hot.cpu_enqueue >= 0.5 * res.hot.gpu.median,
    string.format("enqueue %g ms, gpu %g ms", res.hot.cpu_enqueue, res.hot.gpu.median))
end)

T.case("tostring is one readable line", function()
  local res = cu.bench(sleeper(2), opts({ name = "saxpy", bytes = 2e6 }))
  local line = tostring(res)
  T.eq(line:find("\n"), nil, "one line")
  T.truthy(line:match("^saxpy  gpu %d+%.%d%d%d ms ±[%d%.]+%% %(median of %d+, p10 %d+%.%d+ p90 %d+%.%d+%)" ..
    "  cpu %d+%.%d%d%d ms  [%d%.]+ GB/s  hot %d+%.%d%d%d ms  %[cold%]$"), line)
  T.truthy(line:find(string.format("median of %d,", res.samples), 1, true), line)
  T.truthy(line:find(string.format("gpu %.3f ms", res.gpu.median), 1, true), line)
  -- tostring reads the table: a renamed result prints its new name
  res.name = "renamed"
  T.truthy(tostring(res):find("^renamed  gpu "), tostring(res))
end)

T.case("json: well-formed and carrying the whole result", function()
  local res = cu.bench(sleeper(1), opts({ name = "j\"son\n", bytes = 1e6 }))
  local text = res:json()
  T.eq(type(text), "string")
  local j = decode_json(text)
  T.eq(j.name, "j\"son\n")
  T.eq(j.samples, res.samples)
  T.eq(j.backend, res.backend)
  T.eq(j.mode, "cold")
  T.eq(#j.times, res.samples)
  for i = 1, res.samples do T.near(j.times[i], res.times[i], 1e-12 * res.times[i]) end
  T.near(j.gpu.median, res.gpu.median, 1e-12 * res.gpu.median)
  T.near(j.GBps, res.GBps, 1e-12 * res.GBps)
  T.eq(j.hot.batch_size, res.hot.batch_size)
  T.eq(j.launch_bound, false)
  T.eq(j.options.min_samples, 10)
  T.eq(type(j.notes), "table")
  -- indented output parses to the same
  local k = decode_json(res:json(2))
  T.eq(k.samples, j.samples)
  T.truthy(res:json(2):find("\n", 1, true))
end)

T.case("json of a known table", function()
  local mt = getmetatable(cu.bench(function() end, { min_time = 0, max_time = 0.01, hot = false }))
  local r = setmetatable({ name = "x", samples = 3, times = { 1.5, 2.0 }, notes = {}, launch_bound = false,
    gpu = { median = 0.25 } }, mt)
  T.eq(r:json(), '{"gpu":{"median":0.25},"launch_bound":false,"name":"x","notes":[],"samples":3,' ..
    '"times":[1.5,2.0]}')
  T.eq(setmetatable({ mode = "cold" }, mt):json(), '{"mode":"cold"}')
  -- tostring of a sparse table does not fail
  T.eq(tostring(r), "x  gpu 250.000 us (median of 3)  [cold]")
end)

T.case("stream option: events on the stream, which is current while fn runs", function()
  local s = cu.stream()
  local before = cu.current_stream().id
  -- fn queues on the current stream: with stream=s that is s
  local res = cu.bench(sleeper(2), opts({ stream = s }))
  -- (under compute-sanitizer kernels are slowed: only the lower bound holds)
  local upper = os.getenv("CULUA_UNDER_SANITIZER") == "1" and math.huge or 6
  T.truthy(res.gpu.median >= 1.95 and res.gpu.median < upper, "got " .. res.gpu.median)
  T.eq(cu.current_stream().id, before, "the current stream is restored")
  local inside
  cu.bench(function() inside = cu.current_stream().id end,
    { stream = s, min_samples = 1, min_time = 0, noise = 1e9, hot = false })
  T.eq(inside, s.id)
  -- explicit stream in fn
  res = cu.bench(sleeper(2, s), opts({ stream = s }))
  T.truthy(res.gpu.median >= 1.95, "got " .. res.gpu.median)
end)

T.case("an error inside fn propagates, and everything keeps working", function()
  T.raises(function() cu.bench(function() error("boom in fn") end) end, "boom in fn")
  -- failing in the middle of the samples, the hot phase, and on a given stream
  for _, fail_at in ipairs({ 5, 40 }) do
    local n = 0
    local s = cu.stream()
    local before = cu.current_stream().id
    T.raises(function()
      cu.bench(function()
        n = n + 1
        cu.sleep(0.1)
        if n == fail_at then error("failure " .. fail_at) end
      end, { stream = s, min_samples = 20, min_time = 0, noise = 1e9 })
    end, "failure " .. fail_at)
    T.eq(cu.current_stream().id, before, "current stream restored after an error")
  end
  local a = cu.arange(4, "i32")
  T.eq((a + 1):totable(), { 1, 2, 3, 4 })
  local res = cu.bench(sleeper(1), opts())
  T.truthy(res.samples >= 10)
end)

T.case("bad input", function()
  T.raises(function() cu.bench(3) end, "bad argument #1 to 'bench' (function or cu.Graph expected, got number)")
  T.raises(function() cu.bench() end, "bad argument #1 to 'bench' (function or cu.Graph expected, got no value)")
  T.raises(function() cu.bench("f") end, "function or cu.Graph expected, got string")
  local f = function() end
  T.raises(function() cu.bench(f, { min_sample = 3 }) end, "unknown option 'min_sample'")
  T.raises(function() cu.bench(f, 5) end, "table expected")
  T.raises(function() cu.bench(f, { min_samples = -1 }) end, "min_samples must be at least 1, got -1")
  T.raises(function() cu.bench(f, { min_samples = 0 }) end, "min_samples must be at least 1")
  T.raises(function() cu.bench(f, { min_samples = 2.5 }) end, "(option 'min_samples': integer expected, got 2.5)")
  T.raises(function() cu.bench(f, { warmup = -2 }) end, "warmup must be 0 or more")
  T.raises(function() cu.bench(f, { noise = 0 }) end, "noise must be a positive fraction")
  T.raises(function() cu.bench(f, { noise = -0.1 }) end, "noise must be a positive fraction")
  T.raises(function() cu.bench(f, { noise = 0 / 0 }) end, "noise must be a positive fraction")
  T.raises(function() cu.bench(f, { min_time = -1 }) end, "min_time must be 0 or more")
  T.raises(function() cu.bench(f, { max_time = 0 }) end, "max_time must be a positive")
  T.raises(function() cu.bench(f, { min_time = 1, max_time = 0.5 }) end,
    "max_time (0.5 s) is less than min_time (1 s)")
  T.raises(function() cu.bench(f, { bytes = -5 }) end, "bytes must be a finite number")
  T.raises(function() cu.bench(f, { flops = math.huge }) end, "flops must be a finite number")
  T.raises(function() cu.bench(f, { min_time = "1" }) end,
    "bad argument #2 to 'bench' (option 'min_time': number expected, got string)")
  T.raises(function() cu.bench(f, { name = 3 }) end, "(option 'name': string expected, got number)")
  T.raises(function() cu.bench(f, { cold = 1 }) end, "(option 'cold': boolean expected")
  T.raises(function() cu.bench(f, { stream = 1 }) end, "(option 'stream': cu.Stream expected")
  T.raises(function() cu.bench(f, { cold = false, hot = false }) end, "nothing to measure")
  -- absurd values are refused, naming the option
  T.raises(function() cu.bench(f, { min_samples = 2 ^ 62, max_time = 0.2 }) end,
    "bad argument #2 to 'bench' (min_samples must be at most 1000000, got 4611686018427387904)")
  T.raises(function() cu.bench(f, { warmup = 2 ^ 40 }) end,
    "bad argument #2 to 'bench' (warmup must be at most 1000000")
  T.raises(function() cu.bench(f, { min_samples = 1 / 0 }) end, "(option 'min_samples': integer expected, got inf)")
  T.raises(function() cu.bench(f, { warmup = 0 / 0 }) end, "(option 'warmup': integer expected")
  T.raises(function() cu.bench(f, { max_time = 1e9 }) end, "(max_time must be at most 86400 s (a day)")
  T.raises(function() cu.bench(f, { max_time = math.huge }) end,
    "max_time must be a positive number of seconds, got inf")
  T.raises(function() cu.bench(f, { max_time = 0 / 0 }) end, "max_time must be a positive number of seconds")
  T.raises(function() cu.bench(f, { max_time = -1 }) end, "max_time must be a positive number of seconds, got -1")
  T.raises(function() cu.bench(f, { min_time = 1e7 }) end, "(min_time must be at most 86400 s (a day)")
  T.raises(function() cu.bench(f, { min_time = 0 / 0 }) end, "min_time must be 0 or more seconds")
  -- a long min_time without max_time extends max_time instead of failing
  local called = false
  T.raises(function()
    cu.bench(function() called = true; error("stop here") end, { min_time = 20 })
  end, "stop here")
  T.truthy(called)
end)

os.exit(T.run())
