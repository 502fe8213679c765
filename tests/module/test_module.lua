-- cu.so, the `cu` module for stock Lua 5.4: run by Debian's lua5.4 (LUA_CPATH names the module's
-- folder), by stock_lua_host (the same with Lua linked in, for machines without lua5.4), under
-- valgrind, and by culua itself (the messages must be the same). The backend comes from
-- CULUA_BACKEND; without a usable one the script exits 69 (skipped).
--
-- Under a C build of Lua an error longjmps over C++ frames: the cases below check that errors of
-- the bindings and of Lua callbacks still end C++ scopes (strict mode, cu.time's events, cu.bench's
-- loop) and that closing the state with live arrays frees everything (valgrind).

-- A coroutine created before the module was loaded: its thread's extra space was copied from the
-- main thread's before `require "cu"` ran. It uses the module only after the require.
local early = coroutine.create(function(cu_module)
  local a = cu_module.arange(4)
  local v = coroutine.yield((a + 1):sum():item())
  local ok, err = pcall(cu_module.complex, "x")
  coroutine.yield(v * 2, ok, err)
  return cu_module.ones(3):sum():item()
end)
local early_wrapped = coroutine.wrap(function(cu_module)
  return cu_module.full(2, 4):sum():item()
end)

-- Marked for finalization before the module was loaded, so finalized after it at lua_close (in
-- stock Lua): a call into cu then must raise, not use the released runtime (valgrind checks).
LATE_FINALIZER = setmetatable({}, {
  __gc = function()
    local ok, err = pcall(function() return LATE_CU.ones(3):sum():item() end)
    print("late finalizer: " .. (ok and "ran" or tostring(err)))
  end,
})

local had_global = rawget(_G, "cu") ~= nil -- culua sets the global; the module does not
local cu = require "cu"
local T = require "cu.testing"
LATE_CU = cu

local function skip(why)
  print("SKIPPED: " .. why)
  io.stdout:flush()
  os.exit(69, true)
end

if os.getenv("CULUA_BACKEND") == "cuda" or cu.backend == "cuda" then
  local ok, devices = pcall(cu.devices)
  if not ok then skip("the CUDA backend is unavailable: " .. tostring(devices)) end
  if #devices == 0 then skip("no CUDA device") end
end

local SCRIPT = "test_module%.lua:%d+: "

-- fn must raise exactly `message`, prefixed with this script's position.
local function raises_at(fn, message)
  local msg = T.raises(fn, message)
  T.truthy(msg:find("^.-" .. SCRIPT) and msg:sub(-#message) == message,
    "expected '<this script>:<line>: " .. message .. "', got '" .. msg .. "'")
  return msg
end

T.case("require returns the module, once, without a global", function()
  T.eq(type(cu), "table")
  T.truthy(cu.backend == "host" or cu.backend == "cuda", tostring(cu.backend))
  T.truthy(rawequal(require "cu", cu), "require gives the module") -- (not T.eq: cu.nan ~= cu.nan)
  T.truthy(rawequal(package.loaded.cu, cu), "package.loaded.cu is the module")
  package.loaded.cu = nil
  T.truthy(rawequal(require "cu", cu), "a second load gives the same table")
  T.eq(rawget(_G, "cu") ~= nil, had_global, "the module sets no global")
  T.eq(type(cu.version), "string")
end)

T.case("arrays: creation, properties, element access, transfers", function()
  local a = cu.arange(6, "f64"):view(2, 3)
  T.eq(a.shape, { 2, 3 })
  T.eq(a.dtype, "f64")
  T.eq(a.location, "device")
  T.eq(a:totable(), { { 0, 1, 2 }, { 3, 4, 5 } })
  T.eq(a[2][3], 5)
  local h = a:to_host({ pinned = true })
  T.eq(h.location, "pinned")
  T.eq(h:to_device():totable(), a:totable())
  local z = cu.zeros(4, "i32")
  z[2] = 7
  T.eq(z:totable(), { 0, 7, 0, 0 })
  T.eq(cu.array({ 1, 2, 3 }):totable(), { 1, 2, 3 })
  T.truthy(tostring(a):find("shape={2,3}", 1, true), tostring(a))
end)

T.case("elementwise operations and reductions", function()
  local x = cu.arange(5)
  local y = x * 2 + 1
  T.eq(y:totable(), { 1, 3, 5, 7, 9 })
  T.eq((-x):totable(), { 0, -1, -2, -3, -4 })
  T.eq(cu.maximum(x, 2):totable(), { 2, 2, 2, 3, 4 })
  T.near(cu.sqrt(cu.full(3, 4.0)):totable(), { 2, 2, 2 })
  T.eq(y:sum():item(), 25)
  T.eq(y:max():item(), 9)
  T.eq(y:argmax():item(), 5, "1-based")
  T.near(y:mean():item(), 5)
  T.eq(cu.arange(6):view(2, 3):sum({ axis = 2 }):totable(), { 3, 12 })
  local z = cu.complex(1, 2) * cu.complex(0, 1)
  T.eq({ z.re, z.im }, { -2, 1 })
end)

T.case("matmul and dot", function()
  local a = cu.array({ { 1, 2 }, { 3, 4 } }, "f64")
  local b = cu.array({ { 5, 6 }, { 7, 8 } }, "f64")
  T.eq(cu.matmul(a, b):totable(), { { 19, 22 }, { 43, 50 } })
  T.eq(cu.dot(cu.arange(4, "f64"), cu.arange(4, "f64")):item(), 14)
end)

T.case("streams and events", function()
  local s = cu.stream()
  local e1, e2 = cu.event(), cu.event()
  e1:record(s)
  local a = cu.ones(1 << 16, "f32", { stream = s })
  local b = cu.mul(a, 3, { stream = s })
  e2:record(s)
  e2:sync()
  T.truthy(e2:done())
  T.truthy(e1:elapsed(e2) >= 0)
  T.truthy(e2 - e1 >= 0)
  do
    local _ <close> = cu.use_stream(s)
    T.eq(cu.current_stream(), s)
  end
  T.truthy(cu.current_stream() ~= s, "the scope restored the stream")
  cu.stream():wait(s)
  s:sync()
  T.eq(b:sum():item(), 3 * (1 << 16))
end)

T.case("run-time kernels", function()
  local src = [[extern "C" __global__ void add1(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
  }]]
  if cu.backend == "host" then
    T.raises(function() cu.compile(src) end, "need a GPU")
    T.eq(cu.ones(3):sum():item(), 3, "the runtime is still usable")
  else
    local m = cu.compile(src)
    local x = cu.zeros(100)
    m.add1({ grid = 1, block = 128 }, x, 100)
    T.eq(x:sum():item(), 100)
  end
end)

T.case("cu.time, cu.ledger, cu.range, cu.bench", function()
  local a = cu.ones(1000)
  local ms = cu.time(function() for _ = 1, 3 do a = a + 1 end end)
  T.truthy(type(ms) == "number" and ms >= 0, tostring(ms))
  T.eq(a:sum():item(), 4000)
  local l = cu.ledger(function() local _ = (a * 2):sum():item() end)
  T.eq(l.d2h_calls, 1)
  T.eq({ cu.range("r", function(p, q) return p + q, "x" end, 1, 2) }, { 3, "x" })
  local res = cu.bench(function() local _ = a + 1 end,
    { min_samples = 3, min_time = 0.001, max_time = 0.5 })
  T.truthy(res.samples >= 3, tostring(res.samples))
end)

T.case("isolated sweep points need the culua program (a script it can run again)", function()
  if had_global then T.skip("culua itself runs isolated points (tests/cli/test_sweep_isolate.lua)") end
  T.raises(function()
    cu.sweep{axes = {n = {1}}, isolate = true, run = function() end}
  end, "(option 'isolate': not available here: it runs each point in a new culua process that " ..
    "runs the script again, and this Lua state was not started by the culua program")
  T.eq(cu.sweep{axes = {n = {1}}, quiet = true, run = function(p) return p.n end}[1].ms, 1)
end)

T.case("a coroutine created before the require", function()
  local ok, v = coroutine.resume(early, cu)
  T.truthy(ok, tostring(v))
  T.eq(v, 10)
  local ok2, doubled, pok, perr = coroutine.resume(early, 21)
  T.truthy(ok2, tostring(doubled))
  T.eq({ doubled, pok }, { 42, false })
  T.truthy(tostring(perr):find("number expected, got string", 1, true), tostring(perr))
  local ok3, three = coroutine.resume(early)
  T.eq({ ok3, three }, { true, 3 })
  T.eq(early_wrapped(cu), 8)
end)

T.case("argument errors: Lua's messages and positions", function()
  local e = cu.event()
  raises_at(function() cu.complex("x") end,
    "bad argument #1 to 'complex' (number expected, got string)")
  raises_at(function() cu.complex(1, {}) end,
    "bad argument #2 to 'complex' (number expected, got table)")
  raises_at(function() cu.sleep("x") end, "bad argument #1 to 'sleep' (number expected, got string)")
  raises_at(function() cu.array() end, "bad argument #1 to 'array' (value expected)")
  raises_at(function() cu.range({}, print) end,
    "bad argument #1 to 'range' (string expected, got table)")
  raises_at(function() cu.trace.stop({}) end,
    "bad argument #1 to 'stop' (string expected, got table)")
  -- Methods count from the first argument after self; a metatable's __name names the type.
  raises_at(function() e:record(5) end,
    "bad argument #1 to 'record' (cu.Stream expected, got number)")
  raises_at(function() e:record(cu.zeros(2)) end,
    "bad argument #1 to 'record' (cu.Stream expected, got cu.Array)")
  raises_at(function() e.record(5) end, "bad argument #1 to 'record' (cu.Event expected, got number)")
end)

T.case("other errors keep their messages", function()
  raises_at(function() cu.empty(-1) end, "bad argument #1 to 'empty' (size -1 in shape {-1} is negative)")
  T.raises(function() cu.empty(3, "f33") end, "bad argument #2 to 'empty' (unknown dtype 'f33'")
  raises_at(function() cu.time(5) end, "bad argument #1 to 'time' (function expected, got number)")
  raises_at(function() cu.strict("no") end, "bad argument #1 to 'strict' (function expected, got string)")
  raises_at(function() cu.ledger(42) end, "bad argument #1 to 'ledger' (function or no value expected, got number)")
  raises_at(function() return cu.zeros(3) + {} end, "cu.Array or number expected, got table)")
  local a = cu.zeros(2)
  a:free()
  T.raises(function() return a:sum() end, "released")
end)

T.case("an error in cu.strict's function ends strict mode", function()
  local a = cu.arange(4)
  T.raises(function() cu.strict(function() return a[1] end) end, "inside cu.strict")
  raises_at(function() cu.strict(function() error("inside strict") end) end, "inside strict")
  T.eq(a[2], 1, "strict mode ended with the failed call")
  T.raises(function() cu.strict(function() cu.strict(function() cu.empty(-1) end) end) end,
    "size -1 in shape {-1} is negative")
  T.eq(a[3], 2, "nested strict scopes ended")
  local marker = {}
  local ok, err = pcall(cu.strict, function() error(marker) end)
  T.eq(ok, false)
  T.truthy(rawequal(err, marker), "the error value comes back unchanged")
  T.eq(a[4], 3)
end)

T.case("an error in cu.time's function", function()
  raises_at(function() cu.time(function() error("inside time") end) end, "inside time")
  local marker = setmetatable({}, { __tostring = function() return "marker" end })
  local ok, err = pcall(cu.time, function() error(marker) end)
  T.truthy(not ok and rawequal(err, marker), tostring(err))
  T.truthy(cu.time(function() local _ = cu.ones(10) + 1 end) >= 0, "cu.time works afterwards")
  raises_at(function() cu.ledger(function() error("inside ledger") end) end, "inside ledger")
  raises_at(function() cu.range("r", function() error("inside range") end) end, "inside range")
  raises_at(function() cu.bench(function() error("inside bench") end, { cold = false }) end,
    "inside bench")
  local res = cu.bench(function() local _ = cu.ones(10) + 1 end,
    { min_samples = 3, min_time = 0.001, max_time = 10 }) -- valgrind on a loaded machine: 0.5 s gave fewer than 3
  T.truthy(res.samples >= 3, "cu.bench works afterwards")
end)

T.case("garbage collection with live arrays", function()
  for i = 1, 50 do
    local a = cu.ones(1000 + i) * i
    local _ = a:sum()
  end
  collectgarbage()
  collectgarbage()
  T.eq(cu.ones(10):sum():item(), 10)
end)

-- Left alive for lua_close (os.exit(code, true) below closes the state): their finalizers run
-- before the one that destroys the runtime.
KEEP = {
  arrays = { cu.ones(100), cu.arange(10):view(2, 5), cu.host.ones(8, "f32", { pinned = true }) },
  stream = cu.stream(),
  event = cu.event(),
}
KEEP.queued = cu.mul(KEEP.arrays[1], 2, { stream = KEEP.stream })
KEEP.event:record(KEEP.stream)

os.exit(T.run(), true)
