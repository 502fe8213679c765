-- The module table: backend, version, devices, device selection, sync, and cu.complex.
package.path = (arg and arg[0] and arg[0]:match("^(.*)[/\\]") or "tests/lua") .. "/?.lua;" .. package.path
local T = require "cu.testing"
local S = require "support"

T.case("backend and version", function()
  T.truthy(cu.backend == "host" or cu.backend == "cuda", "backend " .. tostring(cu.backend))
  T.truthy(rawequal(require("cu"), cu), "require gives the module") -- (not T.eq: cu.nan ~= cu.nan)
  T.eq(type(cu.version), "string")
  T.truthy(cu.version:match("^%d+%.%d+%.%d+"), "version " .. cu.version)
end)

T.case("devices", function()
  local devs = cu.devices()
  T.truthy(#devs >= 1, "at least one device")
  if cu.backend == "host" then T.eq(#devs, 1) end
  for i, d in ipairs(devs) do
    T.eq(d.index, i - 1)
    T.eq(math.type(d.index), "integer")
    T.eq(type(d.name), "string")
    T.truthy(#d.name > 0)
    T.eq(math.type(d.sm_count), "integer")
    T.truthy(d.sm_count > 0, "sm_count " .. d.sm_count)
    T.eq(math.type(d.memory), "integer")
    T.truthy(d.memory > 0)
    T.eq(math.type(d.l2), "integer")
    T.truthy(d.l2 >= 0)
    if cu.backend == "cuda" then
      T.truthy(type(d.cc) == "string" and d.cc:match("^%d+%.%d+$"), "cc " .. tostring(d.cc))
    else
      T.eq(d.cc, nil, "no compute capability on the host backend")
    end
  end
end)

T.case("device get and select", function()
  T.eq(cu.device(), 0)
  T.eq(math.type(cu.device()), "integer")
  T.eq(cu.device(0), 0)
  T.eq(cu.device(), 0)
  local n = #cu.devices()
  T.raises(function() cu.device(n) end, tostring(n))
  T.raises(function() cu.device(-1) end, "-1")
  T.eq(cu.device(), 0, "a failed selection keeps the device")
  T.eq(cu.zeros(2).device, 0)
  if n > 1 then
    cu.device(1)
    T.eq(cu.device(), 1)
    T.eq(cu.zeros(2).device, 1)
    T.eq(cu.stream().device, 1)
    cu.device(0)
  end
end)

T.case("cu.sync waits for queued work", function()
  local s = cu.stream()
  local a = cu.zeros(10, "i32", { stream = s })
  cu.sleep(100, { stream = s })
  a:fill(1, { stream = s })
  cu.sleep(100)
  local dt = S.timed(function() cu.sync() end)
  S.queued(dt >= 0.075, "cu.sync returned after " .. dt .. " s")
  T.eq(s:done(), true)
  T.eq(cu.current_stream():done(), true)
  T.eq(a[1], 1)
end)

T.case("cu.complex fields and methods", function()
  local re, im = math.random() * 10 - 5, math.random() * 10 - 5
  local z = cu.complex(re, im)
  T.eq(z.re, re)
  T.eq(z.im, im)
  T.near(z:abs(), math.sqrt(re * re + im * im), 1e-12)
  local c = z:conj()
  T.eq({ c.re, c.im }, { re, -im })
  local r = cu.complex(2)
  T.eq({ r.re, r.im }, { 2.0, 0.0 })
  T.eq(cu.complex(3, 4):abs(), 5.0)
end)

T.case("cu.complex arithmetic", function()
  local a, b = cu.complex(1, 2), cu.complex(3, -1)
  local function parts(z) return { z.re, z.im } end
  T.eq(parts(a + b), { 4.0, 1.0 })
  T.eq(parts(a - b), { -2.0, 3.0 })
  T.eq(parts(a * b), { 5.0, 5.0 })
  T.near(parts(cu.complex(5, 5) / b), { 1.0, 2.0 }, 1e-12)
  T.near(parts(a ^ 2), { -3.0, 4.0 }, 1e-12)
  T.eq(parts(-a), { -1.0, -2.0 })
  T.eq(parts(a + 1), { 2.0, 2.0 })
  T.eq(parts(2 * a), { 2.0, 4.0 })
  T.eq(parts(1 - a), { 0.0, -2.0 })
  T.near(parts(1 / cu.complex(0, 1)), { 0.0, -1.0 }, 1e-15)
  T.truthy(a == cu.complex(1, 2))
  T.truthy(a ~= b)
  T.truthy(not (a == cu.complex(1, 2.5)))
  -- random values against the formulas
  for _ = 1, 20 do
    local ar, ai = math.random() * 20 - 10, math.random() * 20 - 10
    local br, bi = math.random() * 20 - 10, math.random() * 20 - 10
    local x, y = cu.complex(ar, ai), cu.complex(br, bi)
    T.near(parts(x * y), { ar * br - ai * bi, ar * bi + ai * br }, 1e-9)
    local d = br * br + bi * bi
    T.near(parts(x / y), { (ar * br + ai * bi) / d, (ai * br - ar * bi) / d }, 1e-9)
  end
end)

T.case("cu.complex values in arrays", function()
  local z = cu.complex(math.random(-9, 9), math.random(-9, 9))
  local a = cu.full(3, z, "c128")
  T.truthy(a[2] == z)
  a[3] = z * 2
  T.truthy(a[3] == z * 2)
  T.eq(tostring(a[1]), tostring(z))
end)

T.case("cu works inside coroutines", function()
  local co = coroutine.wrap(function()
    local a = cu.arange(4, "i32")
    coroutine.yield(a[2])
    local ok, err = pcall(function() return cu.empty(-1) end)
    coroutine.yield(not ok and err)
    local s = cu.stream()
    do
      local _ <close> = cu.use_stream(s)
      coroutine.yield(rawequal(cu.current_stream(), s))
    end
    return a:totable()[4]
  end)
  T.eq(co(), 1)
  T.truthy(tostring(co()):find("negative", 1, true))
  T.eq(co(), true)
  T.eq(co(), 3)
  -- closing a suspended coroutine closes its <close> arrays
  local c = coroutine.create(function()
    local a <close> = cu.zeros(3)
    coroutine.yield(a)
  end)
  local _, arr = coroutine.resume(c)
  T.eq(arr.freed, false)
  coroutine.close(c)
  T.eq(arr.freed, true)
end)

os.exit(T.run())
