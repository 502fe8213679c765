-- Streams and events: asynchronous work, done/sync, waits between streams, use_stream scoping,
-- event timing. cu.sleep keeps a stream busy so that queued work is observable.
package.path = (arg and arg[0] and arg[0]:match("^(.*)[/\\]") or "tests/lua") .. "/?.lua;" .. package.path
local T = require "cu.testing"
local S = require "support"

local SLEEP = 200 -- ms
local LONG = SLEEP / 1000 * 0.75
local SHORT = SLEEP / 1000 * 0.4

T.case("stream fields and priorities", function()
  local s = cu.stream()
  T.eq(s.device, 0)
  T.eq(s.priority, "normal")
  T.eq(math.type(s.id), "integer")
  T.eq(cu.stream({ priority = "high" }).priority, "high")
  T.eq(cu.stream({ priority = "low" }).priority, "low")
  T.eq(cu.stream({ priority = "normal" }).priority, "normal")
  local ids = {}
  for _ = 1, 5 do
    local id = cu.stream().id
    T.eq(ids[id], nil, "stream ids are distinct")
    ids[id] = true
  end
  T.truthy(tostring(s):find("cu.Stream", 1, true))
end)

T.case("cu.sleep queues work; the host does not wait", function()
  local s = cu.stream()
  local dt = S.timed(function() cu.sleep(SLEEP, { stream = s }) end)
  T.truthy(dt < SHORT, "cu.sleep returned after " .. dt .. " s")
  T.eq(s:done(), false, "the stream is busy")
  local e = cu.event():record(s)
  T.eq(e:done(), false, "an event after the sleep is not done")
  dt = S.timed(function() s:sync() end)
  T.truthy(dt >= LONG, "s:sync() returned after " .. dt .. " s")
  T.eq(s:done(), true)
  T.eq(e:done(), true)
end)

T.case("work is queued in order on a stream", function()
  local s = cu.stream()
  local a = cu.zeros(1000, "i32", { stream = s })
  local b = cu.zeros(1000, "i32", { stream = s })
  cu.sleep(SLEEP, { stream = s })
  local dt = S.timed(function()
    a:fill(1, { stream = s })
    cu.copy(b, a, { stream = s })
    a:fill(2, { stream = s })
  end)
  S.queued(dt < SHORT, "queueing returned after " .. dt .. " s")
  S.queued(s:done() == false, "the stream is busy after the queueing")
  T.eq(b[1000], 1, "the copy ran between the two fills")
  T.eq(a[1], 2)
end)

T.case("element reads, item, totable and tostring wait for queued work", function()
  local s = cu.stream()
  local a = cu.zeros({ 2, 3 }, "i32", { stream = s })
  cu.sleep(SLEEP, { stream = s })
  a:fill(4, { stream = s })
  local dt, v = S.timed(function() return a[2][3] end)
  T.eq(v, 4)
  S.queued(dt >= LONG * 0.5, "the element read waited (" .. dt .. " s)")
  cu.sleep(SLEEP, { stream = s })
  a:fill(5, { stream = s })
  T.eq(a:totable(), { { 5, 5, 5 }, { 5, 5, 5 } })
  cu.sleep(SLEEP, { stream = s })
  a:fill(6, { stream = s })
  T.truthy(tostring(a):find("6, 6, 6", 1, true), tostring(a))
  cu.sleep(SLEEP, { stream = s })
  a:fill(7, { stream = s })
  T.eq(a:narrow(1, 1, 1):narrow(2, 1, 1):item(), 7)
end)

-- An array on the current stream whose fill went to another stream `s` behind a sleep.
local function written_on_other_stream(v)
  local s = cu.stream()
  local a = cu.zeros(4, "i32")
  cu.sleep(100, { stream = s })
  a:fill(v, { stream = s })
  return a
end

T.case("element reads and item wait for work queued on another stream", function()
  T.eq(written_on_other_stream(3)[1], 3, "element read")
  T.eq(written_on_other_stream(3):narrow(1, 2, 1):item(), 3, "item")
end)

T.case("totable waits for work queued on another stream", function()
  T.eq(written_on_other_stream(3):totable(), { 3, 3, 3, 3 }, "totable")
end)

T.case("tostring waits for work queued on another stream", function()
  local str = tostring(written_on_other_stream(3))
  T.truthy(str:find("[3, 3, 3, 3]", 1, true), "tostring gave " .. str)
end)

T.case("events: record, done, sync, fields", function()
  local e = cu.event()
  T.eq(e.recorded, false)
  T.eq(e.timing, true)
  T.eq(cu.event({ timing = false }).timing, false)
  T.eq(cu.event({ timing = true }).timing, true)
  local s = cu.stream()
  cu.sleep(SLEEP, { stream = s })
  T.truthy(rawequal(e:record(s), e), "record returns the event")
  T.eq(e.recorded, true)
  T.eq(e:done(), false)
  local dt = S.timed(function() e:sync() end)
  T.truthy(dt >= LONG, "e:sync() returned after " .. dt .. " s")
  T.eq(e:done(), true)
  -- re-recording moves the event
  cu.sleep(SLEEP, { stream = s })
  e:record(s)
  T.eq(e:done(), false)
  s:sync()
  T.eq(e:done(), true)
  T.truthy(tostring(e):find("cu.Event", 1, true))
end)

T.case("event:record() defaults to the current stream", function()
  local e = cu.event()
  cu.sleep(SLEEP) -- the current stream
  e:record()
  T.eq(e:done(), false)
  T.eq(cu.current_stream():done(), false)
  e:sync()
  T.eq(e:done(), true)
  local s = cu.stream()
  do
    local _ <close> = cu.use_stream(s)
    cu.sleep(SLEEP)
    local e2 = cu.event():record()
    T.eq(e2:done(), false)
    T.eq(s:done(), false, "inside use_stream, cu.sleep went to s")
    s:sync()
    T.eq(e2:done(), true)
  end
end)

T.case("elapsed time between events", function()
  local s = cu.stream()
  local e1 = cu.event():record(s)
  cu.sleep(100, { stream = s })
  local e2 = cu.event():record(s)
  local ms = e1:elapsed(e2)
  T.eq(type(ms), "number")
  T.truthy(ms >= 90 and ms < 1000, "elapsed " .. ms .. " ms for a 100 ms sleep")
  T.eq(e2 - e1, ms, "e2 - e1 is e1:elapsed(e2)")
  T.truthy(e1:elapsed(e1) == 0)
  local e3 = cu.event():record(s)
  cu.sleep(50, { stream = s })
  local e4 = cu.event():record(s)
  T.truthy((e4 - e3) >= 40 and (e4 - e3) < ms, "a shorter sleep gives a shorter time " .. (e4 - e3))
  T.truthy(e1:elapsed(e4) >= ms + 40)
  T.truthy(e2:elapsed(e1) < 0, "from later to earlier is negative")
end)

T.case("elapsed waits for both events", function()
  local s = cu.stream()
  local e1 = cu.event():record(s)
  cu.sleep(SLEEP, { stream = s })
  local e2 = cu.event():record(s)
  local dt, ms = S.timed(function() return e1:elapsed(e2) end)
  S.queued(dt >= LONG, "elapsed returned after " .. dt .. " s")
  T.truthy(ms >= SLEEP * 0.9, "elapsed " .. ms)
end)

T.case("elapsed before record or without timing raises", function()
  local s = cu.stream()
  local rec = cu.event():record(s)
  local never = cu.event()
  T.raises(function() return never:elapsed(rec) end, "never recorded")
  T.raises(function() return rec:elapsed(never) end, "never recorded")
  T.raises(function() return rec - never end, "never recorded")
  local nt = cu.event({ timing = false }):record(s)
  T.raises(function() return nt:elapsed(rec) end, "timing")
  T.raises(function() return rec:elapsed(nt) end, "timing")
  T.raises(function() return nt - rec end, "timing")
  S.check_runtime()
  T.truthy(rec:elapsed(cu.event():record(s)) >= 0)
end)

T.case("a stream waits for an event of another stream", function()
  local s1, s2 = cu.stream(), cu.stream()
  cu.sleep(SLEEP, { stream = s1 })
  local e = cu.event():record(s1)
  T.truthy(rawequal(s2:wait(e), s2), "wait returns the stream")
  local after = cu.event():record(s2)
  T.eq(after:done(), false, "s2 waits for s1's event")
  T.eq(s2:done(), false)
  local dt = S.timed(function() s2:sync() end)
  T.truthy(dt >= LONG, "s2:sync() waited for s1 (" .. dt .. " s)")
  T.eq(e:done(), true)
end)

T.case("a stream waits for another stream", function()
  local s1, s2 = cu.stream(), cu.stream()
  cu.sleep(SLEEP, { stream = s1 })
  T.truthy(rawequal(s2:wait(s1), s2))
  local e = cu.event():record(s2)
  T.eq(e:done(), false)
  local dt = S.timed(function() e:sync() end)
  T.truthy(dt >= LONG, "s2's event waited for s1 (" .. dt .. " s)")
  -- work queued on s1 after the wait is not waited for
  local s3, s4 = cu.stream(), cu.stream()
  s4:wait(s3)
  cu.sleep(SLEEP, { stream = s3 })
  local e4 = cu.event():record(s4)
  e4:sync()
  T.eq(s3:done(), false, "s4 did not wait for work queued on s3 after the wait")
  T.truthy(rawequal(s1:wait(s1), s1), "waiting for itself is allowed")
  s1:sync()
end)

T.case("a wait orders data between streams", function()
  local producer, consumer = cu.stream(), cu.stream()
  local a = cu.zeros(1000, "i32", { stream = producer })
  local b = cu.zeros(1000, "i32", { stream = consumer })
  cu.sleep(SLEEP, { stream = producer })
  a:fill(9, { stream = producer })
  consumer:wait(cu.event():record(producer))
  cu.copy(b, a, { stream = consumer })
  consumer:sync()
  T.eq(b[1], 9)
  T.eq(b[1000], 9)
end)

T.case("streams run independently", function()
  local slow, fast = cu.stream(), cu.stream()
  cu.sleep(SLEEP, { stream = slow })
  local a = cu.zeros(10, "i32", { stream = fast })
  a:fill(3, { stream = fast })
  local dt = S.timed(function() fast:sync() end)
  S.queued(dt < SHORT, "the fast stream did not wait for the slow one (" .. dt .. " s)")
  S.queued(slow:done() == false, "the slow stream is still busy")
  slow:sync()
end)

T.case("cu.sync waits for all streams", function()
  local s1, s2 = cu.stream(), cu.stream()
  cu.sleep(SLEEP, { stream = s1 })
  cu.sleep(SLEEP / 2, { stream = s2 })
  local dt = S.timed(function() cu.sync() end)
  T.truthy(dt >= LONG, "cu.sync() returned after " .. dt .. " s")
  T.eq(s1:done(), true)
  T.eq(s2:done(), true)
end)

T.case("after an event's sync, its stream is done when nothing else was queued", function()
  local s = cu.stream()
  local late = 0
  for _ = 1, 10000 do
    local e = cu.event():record(s)
    e:sync()
    if not s:done() then late = late + 1 end
  end
  T.eq(late, 0, "times s:done() was false after e:sync()")
end)

T.case("current_stream is the same userdata each call", function()
  local a, b = cu.current_stream(), cu.current_stream()
  T.truthy(rawequal(a, b))
  T.eq(a.device, 0)
  local s = cu.stream()
  do
    local _ <close> = cu.use_stream(s)
    T.truthy(rawequal(cu.current_stream(), s), "use_stream makes s current")
    T.truthy(rawequal(cu.current_stream(), cu.current_stream()))
  end
  T.truthy(rawequal(cu.current_stream(), a), "the previous stream is restored")
end)

T.case("use_stream: ops without stream= go to s until the scope closes", function()
  collectgarbage() -- no frees of earlier garbage get queued on the default stream below
  collectgarbage("stop")
  cu.sync()
  local s = cu.stream()
  local default = cu.current_stream()
  local a
  do
    local _ <close> = cu.use_stream(s)
    cu.sleep(SLEEP)
    T.eq(s:done(), false)
    T.eq(default:done(), true, "nothing went to the previous stream")
    a = cu.zeros(100, "i32") -- queued behind the sleep on s
    local e = cu.event():record()
    T.eq(e:done(), false)
    local h = cu.host.zeros(100, "i32", { pinned = true })
    a:fill(8)
    T.eq(s:done(), false)
    local dt = S.timed(function() cu.copy(h, a) end) -- synchronous on s
    T.truthy(dt >= LONG * 0.5, "the copy waited for s (" .. dt .. " s)")
    T.eq(h[100], 8)
  end
  cu.sleep(SLEEP)
  T.eq(default:done(), false, "after the scope, work goes to the previous stream")
  T.eq(s:done(), true)
  default:sync()
  collectgarbage("restart")
end)

T.case("use_stream scopes nest and restore on errors", function()
  local s1, s2 = cu.stream(), cu.stream()
  local default = cu.current_stream()
  do
    local _ <close> = cu.use_stream(s1)
    do
      local _ <close> = cu.use_stream(s2)
      T.truthy(rawequal(cu.current_stream(), s2))
    end
    T.truthy(rawequal(cu.current_stream(), s1))
  end
  T.truthy(rawequal(cu.current_stream(), default))
  local ok = pcall(function()
    local _ <close> = cu.use_stream(s1)
    error("inside the scope")
  end)
  T.eq(ok, false)
  T.truthy(rawequal(cu.current_stream(), default), "an error closes the scope")
end)

T.case("use_stream scopes closed out of order: the innermost open scope's stream is current", function()
  local s1, s2, s3 = cu.stream(), cu.stream(), cu.stream()
  local default = cu.current_stream()
  local function current(expected, what) T.truthy(rawequal(cu.current_stream(), expected), what) end
  -- a scope opened in a coroutine (s1), one opened after it outside (s2); the coroutine ends first
  local co = coroutine.wrap(function()
    local _ <close> = cu.use_stream(s1)
    coroutine.yield()
  end)
  co()
  current(s1, "the coroutine's scope")
  do
    local _ <close> = cu.use_stream(s2)
    co() -- the s1 scope closes while the s2 scope is still open
    current(s2, "closing an outer scope leaves the inner scope's stream current")
    local ok = pcall(cu.sleep, 1) -- work without stream= still goes to s2
    T.truthy(ok)
    T.eq(s2:done(), false, "cu.sleep went to s2")
  end
  current(default, "the last scope restores the stream before the first, not a closed scope's")
  s2:sync()
  -- three scopes; the middle one closes first (coroutine.close), then the outer, then the inner
  local a = coroutine.create(function()
    local _ <close> = cu.use_stream(s1)
    coroutine.yield()
  end)
  local b = coroutine.create(function()
    local _ <close> = cu.use_stream(s2)
    coroutine.yield()
  end)
  coroutine.resume(a)
  coroutine.resume(b)
  do
    local _ <close> = cu.use_stream(s3)
    T.truthy(coroutine.close(b))
    current(s3, "the middle scope closed")
    T.truthy(coroutine.close(a))
    current(s3, "the outer scope closed")
  end
  current(default, "all closed")
  -- closing the innermost first still restores step by step
  local c = coroutine.create(function()
    local _ <close> = cu.use_stream(s1)
    coroutine.yield()
  end)
  coroutine.resume(c)
  local inner = cu.use_stream(s2) -- a handle closed by hand, after the coroutine's
  T.truthy(coroutine.close(c))
  current(s2, "the handle's scope is still open")
  getmetatable(inner).__close(inner)
  current(default, "closing the handle restores the stream before both")
  getmetatable(inner).__close(inner) -- closing twice changes nothing
  current(default, "a second close")
end)

T.case("a use_stream scope dropped without <close> leaves its stream current, inner scopes restore it",
  function()
    local s1, s2 = cu.stream(), cu.stream()
    local default = cu.current_stream()
    collectgarbage("stop")
    local dropped = { cu.use_stream(s1) } -- never closed
    do
      local _ <close> = cu.use_stream(s2)
      T.eq(#dropped, 1)
      dropped[1] = nil
      collectgarbage("restart")
      collectgarbage() -- the dropped scope is collected while the inner one is open
      T.truthy(rawequal(cu.current_stream(), s2))
    end
    T.truthy(rawequal(cu.current_stream(), s1), "the inner scope restores the dropped scope's stream")
    do
      local _ <close> = cu.use_stream(s2)
    end
    T.truthy(rawequal(cu.current_stream(), s1))
    cu.use_stream(default) -- dropped too: the default stream is current again for the next cases
    T.truthy(rawequal(cu.current_stream(), default))
  end)

T.case("streams and events support <close>", function()
  local captured_s, captured_e
  do
    local s <close> = cu.stream()
    local e <close> = cu.event()
    cu.sleep(10, { stream = s })
    e:record(s)
    e:sync()
    captured_s, captured_e = s, e
  end
  T.raises(function() captured_s:sync() end)
  T.raises(function() captured_e:record() end)
  S.check_runtime("after closing a stream and an event")
  local s2 <close> = cu.stream()
  T.eq(s2:done(), true)
end)

T.case("a stream dropped with queued work still completes it", function()
  local a = cu.zeros(10, "i32")
  do
    local s = cu.stream()
    cu.sleep(50, { stream = s })
    a:fill(5, { stream = s })
    cu.current_stream():wait(s)
    s = nil -- luacheck: ignore 311 (drops the last reference to the stream)
  end
  collectgarbage()
  T.eq(a[1], 5)
  cu.sync()
  T.eq(a:totable(), { 5, 5, 5, 5, 5, 5, 5, 5, 5, 5 })
end)

T.case("many short-lived streams and events", function()
  local a = cu.zeros(10, "i32")
  for i = 1, 200 do
    local s = cu.stream()
    a:fill(i, { stream = s })
    local e = cu.event():record(s)
    cu.current_stream():wait(e)
  end
  T.eq(a[10], 200)
  collectgarbage()
  T.eq(cu.stream():done(), true)
end)

T.case("cu.clock measures host seconds", function()
  local t0 = cu.clock()
  T.eq(type(t0), "number")
  local s = cu.stream()
  cu.sleep(100, { stream = s })
  s:sync()
  local dt = cu.clock() - t0
  T.truthy(dt >= 0.09 and dt < 2, "100 ms measured as " .. dt .. " s")
  T.truthy(cu.clock() >= t0 + dt, "the clock does not go back")
end)

T.case("cu.sleep with and without a stream", function()
  cu.sleep(0)
  local s = cu.stream()
  cu.sleep(0, { stream = s })
  s:sync()
  T.eq(s:done(), true)
  cu.sleep(50)
  T.eq(cu.current_stream():done(), false)
  cu.sync()
end)

os.exit(T.run())
