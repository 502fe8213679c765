-- Measurement: cu.time, the host-clock tripwire (cu.clock, os.clock), cu.ledger, cu.strict,
-- cu.trace (Chrome trace JSON and summary), cu.range, and the CLI's --trace and --strict.
local dir = arg and arg[0] and arg[0]:match("^(.*)[/\\]") or "tests/lua"
package.path = dir .. "/?.lua;" .. package.path
local T = require "cu.testing"
local S = require "support"
local json = require "json_reader"

local MiB = 1 << 20

-- Runs `source` in a child culua on this backend with extra CLI options; returns stdout, stderr
-- and the exit code.
local child = S.run_script_child

local function count(s, pattern)
  local n = 0
  for _ in s:gmatch(pattern) do n = n + 1 end
  return n
end

T.case("cu.time measures device time, not queueing", function()
  local ms = cu.time(function() cu.sleep(30) end)
  T.truthy(ms >= 29 and ms < 300, "a 30 ms sleep took " .. ms .. " ms")
  local s = cu.stream()
  local on_stream = cu.time(function() cu.sleep(20, { stream = s }) end, { stream = s })
  T.truthy(on_stream >= 19 and on_stream < 300, "on a stream: " .. on_stream)
  T.raises(function() cu.time(5) end, "bad argument #1 to 'time' (function expected, got number)")
  T.raises(function() cu.time(function() end, { steam = s }) end, "steam")
  T.raises(function() cu.time(function() error("inside") end) end, "inside")
  T.eq(cu.zeros(3):totable(), { 0, 0, 0 }, "usable after an error inside cu.time")
end)

T.case("the host-clock tripwire warns once per call site while work is queued", function()
  local out, err, code = child([[
    cu.sync()
    local idle = cu.clock()              -- nothing queued: no warning
    for i = 1, 3 do
      cu.sleep(40)
      local t = cu.clock()               -- line 5: work queued, warned once for three calls
    end
    local o = os.clock()                 -- line 7: os.clock too
    local q = cu.clock{warn=false}       -- deliberate: silent
    cu.sync()
    local after = cu.clock()             -- idle again: no warning
    local s = cu.stream()
    for i = 1, 20 do                     -- events recorded on an idle stream queue no work
      cu.sleep(1, {stream = s})
      s:sync()
      local e = cu.event():record(s)
      local t = cu.clock()
      local ms = cu.time(function() cu.sleep(1, {stream = s}) end, {stream = s})
      local e2 = cu.event():record(s)
      local t2 = cu.clock()
    end
    print("ok")
  ]])
  T.eq(code, 0, err)
  T.eq(out, "ok\n")
  T.eq(count(err, "warning"), 2, err)
  T.truthy(err:find("cu.clock%(%) at [^\n]*:5 read while device work is still queued"), err)
  T.truthy(err:find("os.clock%(%) at [^\n]*:7 read while device work is still queued"), err)
  T.truthy(err:find("cu.time%(fn%)"), "the warning says what to use instead")
  T.raises(function() cu.clock { wran = false } end, "wran")
end)

T.case("cu.ledger counts transfers by direction and host memory kind", function()
  local n = MiB // 4
  local d = cu.ones(n)
  local pageable = cu.host.empty(n, "f32")
  local pinned = cu.host.empty(n, "f32", { pinned = true })
  local s = cu.stream()
  cu.sync()
  local before = cu.ledger()
  cu.copy(pageable, d)                       -- d2h, pageable, synchronous
  cu.copy(pinned, d, { stream = s })         -- d2h, pinned, asynchronous
  s:sync()                                   -- an explicit sync
  local d2 = pinned:to_device()              -- h2d, pinned, synchronous (no stream)
  cu.copy(d2, d)                             -- d2d
  local l = cu.ledger() - before
  T.eq(l.d2h_bytes, 2 * MiB)
  T.eq(l.d2h_calls, 2)
  T.eq(l.h2d_bytes, MiB)
  T.eq(l.h2d_calls, 1)
  T.eq(l.d2d_bytes, MiB)
  T.eq(l.d2d_calls, 1)
  T.eq(l.pageable_bytes, MiB)
  T.eq(l.pageable_calls, 1)
  T.eq(l.pinned_bytes, 2 * MiB)
  T.eq(l.pinned_calls, 2)
  T.eq(l.implicit_syncs, 2, "the two synchronous copies")
  T.eq(l.syncs, 3, "plus s:sync()")
  T.eq(l.allocs, 1, "to_device allocated once")
  T.eq(l.alloc_bytes, MiB)
  T.eq(l.launches, 4, "four copies queued")
  T.truthy(tostring(l):find("host%->device 1%.0 MiB in 1 call"), tostring(l))
  T.truthy(tostring(l):find("3 syncs %(2 implicit%)"), tostring(l))
end)

T.case("cu.ledger(fn) counts fn's run; element reads and totable are implicit syncs", function()
  local a = cu.arange(10)
  local l = cu.ledger(function()
    local _ = a[3]
    _ = a:totable()
    local b = a + 1
    _ = b:sum()
  end)
  T.eq(l.implicit_syncs, 2)
  T.eq(l.d2h_calls, 2)
  T.eq(l.d2h_bytes, 4 + 40)
  T.eq(l.launches, 4, "two reads, an add and a sum")
  T.raises(function() cu.ledger(42) end, "bad argument #1 to 'ledger' (function or no value expected, got number)")
end)

T.case("cu.strict raises on implicit synchronizations and allows explicit ones", function()
  local a = cu.arange(8)
  local r = cu.arange(1):sum()
  local pageable = cu.host.empty(8, "f32")
  local pinned = cu.host.empty(8, "f32", { pinned = true })
  local s = cu.stream()
  local implicit = {
    ["element read"] = function() return a[1] end,
    ["item"] = function() return r:item() end,
    ["totable"] = function() return a:totable() end,
    ["tostring"] = function() return tostring(a) end,
    ["pageable copy"] = function() cu.copy(pageable, a) end,
    ["pinned copy without a stream"] = function() cu.copy(pinned, a) end,
    ["to_host"] = function() return a:to_host() end,
    ["to_device from pageable"] = function() return pageable:to_device() end,
  }
  for what, fn in pairs(implicit) do
    T.raises(function() cu.strict(fn) end, "waits for the device inside cu.strict", what)
  end
  -- Queued work, asynchronous copies and explicit waits are fine; results come back.
  local x, y = cu.strict(function()
    local b = a * 2
    cu.copy(pinned, b, { stream = s })
    s:sync()
    cu.sync()
    return 7, "seven"
  end)
  T.eq({ x, y }, { 7, "seven" })
  T.eq(pinned[2], 2, "the async copy arrived")
  -- Strict mode ends with the call, also when it raised.
  T.eq(a[2], 1)
  T.raises(function() cu.strict(function() cu.strict(function() error("deep") end) end) end, "deep")
  T.eq(a[3], 2, "strict mode does not outlive a failed call")
  T.raises(function() cu.strict("no") end, "bad argument #1 to 'strict' (function expected, got string)")
end)

T.case("cu.trace records every operation with device times, bytes and the script line", function()
  local path = os.tmpname()
  local s1, s2 = cu.stream(), cu.stream()
  local a = cu.ones(MiB // 4)
  cu.trace.start()
  T.eq(cu.trace.recording(), true)
  cu.sleep(60, { stream = s1 })
  cu.sleep(60, { stream = s2 })
  local add_line = debug.getinfo(1, "l").currentline + 1
  local _ = a + a                        -- on the default stream
  local sum = cu.trace.stop(path)
  T.eq(cu.trace.recording(), false)
  T.eq(sum.ops, 3)
  T.truthy(sum.span_ms >= 59 and sum.span_ms < 1000, "span " .. sum.span_ms)
  T.truthy(sum.overlap > 0.5 and sum.overlap <= 1, "two sleeps side by side: " .. sum.overlap)
  T.eq(#sum.streams, 3)
  for _, st in ipairs(sum.streams) do
    T.truthy(st.busy_ms >= 0 and st.busy_ms <= sum.span_ms + 1e-6, st.name)
  end
  local doc = json.decode(assert(io.open(path)):read("a"))
  os.remove(path)
  local device_ops, enqueues, add = 0, 0, nil
  for _, e in ipairs(doc.traceEvents) do
    if e.ph == "X" and e.pid ~= 0 then
      device_ops = device_ops + 1
      if e.name == "add" then add = e end
      T.truthy(e.ts >= 0 and e.dur >= 0, e.name)
    elseif e.cat == "enqueue" then
      enqueues = enqueues + 1
    end
  end
  T.eq(device_ops, 3)
  T.eq(enqueues, 3)
  T.truthy(add, "the add is in the trace")
  T.eq(add.args.bytes, 3 * MiB, "two inputs and the output")
  T.truthy(add.args.site:find("test_measure%.lua:" .. add_line .. "$"), add.args.site)
  -- The summary stays available and prints.
  local again = cu.trace.summary { quiet = true }
  T.eq(again.ops, 3)
  T.truthy(again.text:find("overlap"), again.text)
end)

T.case("cu.trace: waits and ranges on the host track, bad input", function()
  local path = os.tmpname()
  cu.trace.start { limit = 2 }
  T.raises(function() cu.trace.start() end, "already recording")
  local v = cu.range("phase one", function(x)
    for _ = 1, 4 do cu.sleep(1) end   -- four ops, only two recorded
    cu.sync()
    return x + 1
  end, 41)
  T.eq(v, 42)
  local sum = cu.trace.stop(path)
  T.eq(sum.ops, 2)
  T.eq(sum.dropped, 2)
  local doc = json.decode(assert(io.open(path)):read("a"))
  os.remove(path)
  local names = {}
  for _, e in ipairs(doc.traceEvents) do
    if e.pid == 0 and e.ph == "X" then names[e.name] = e.cat end
  end
  T.eq(names["phase one"], "range")
  T.eq(names["wait: cu.sync"], "wait")
  T.raises(function() cu.range("x", 5) end, "bad argument #2 to 'range' (function expected, got number)")
  T.raises(function() cu.range("x", function() error("ranged") end) end, "ranged")
  T.raises(function() cu.trace.start { limit = 0 } end, "bad argument #1 to 'start' (option 'limit': must be positive")
  cu.trace.start()
  T.raises(function() cu.trace.stop("/nonexistent-dir/t.json") end,
    "cannot write the trace to '/nonexistent-dir/t.json'")
  T.eq(cu.trace.recording(), false, "a failed write still stopped the trace")
end)

T.case("--trace writes the whole run's trace and its summary, also when the script fails", function()
  local path = os.tmpname()
  local _, err, code = child([[
    local s = cu.stream()
    cu.sleep(5, {stream = s})
    local a = cu.ones(100) * 2
    error("boom")
  ]], "--trace " .. S.shell_quote(path))
  T.eq(code, 1)
  T.truthy(err:find("boom"), err)
  T.truthy(err:find("trace: 3 operations"), err)
  T.truthy(err:find("wrote the trace to"), err)
  local doc = json.decode(assert(io.open(path)):read("a"))
  os.remove(path)
  T.truthy(#doc.traceEvents >= 6, "metadata, three ops and their enqueue spans")
end)

T.case("--strict makes the whole run strict", function()
  local _, err, code = child("local a = cu.ones(3); cu.sync(); print(a[1])", "--strict")
  T.eq(code, 1)
  T.truthy(err:find("reading an element of a device array waits for the device inside cu.strict", 1, true), err)
  local out, err2, code2 = child("local a = cu.ones(3) * 2; cu.sync(); print('fine')", "--strict")
  T.eq(code2, 0, err2)
  T.eq(out, "fine\n")
end)

os.exit(T.run())
