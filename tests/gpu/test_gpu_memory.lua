-- GPU-only memory behaviour: the collector frees garbage arrays when device memory runs short.
local T = require "cu.testing"

local device = cu.devices()[cu.device() + 1]
local GiB = 2 ^ 30

T.case("allocating past device memory in a loop without references succeeds", function()
  -- Each array is a quarter of the device; 12 of them are three devices' worth. Without the
  -- collector's help (or the retry after out-of-memory) this fails by the fifth.
  local n = math.floor(device.memory / 4 / 4)
  for i = 1, 12 do
    local a = cu.empty(n)
    a:fill(i)
  end
  cu.sync()
end)

T.case("holding references past device memory raises naming requested and free bytes", function()
  local held = {} -- luacheck: ignore 241 (holds the arrays until released below)
  local n = math.floor(device.memory / 3 / 4)
  local msg = T.raises(function()
    for i = 1, 4 do held[i] = cu.empty(n) end
  end, "out of device memory")
  T.truthy(msg:find("requested", 1, true) and msg:find("free of", 1, true), msg)
  held = nil
  collectgarbage()
  local ok = cu.full(1000, 3, "i32")
  T.eq(ok[1000], 3)
end)

T.case("a huge request fails without disturbing the runtime", function()
  T.raises(function() cu.empty({ 2 ^ 20, 2 ^ 20, 2 ^ 10 }) end, "out of device memory")
  T.eq(cu.arange(4, "i64"):totable(), { 0, 1, 2, 3 })
end)

T.case("an array is usable right after allocation on another stream", function()
  local s1, s2 = cu.stream(), cu.stream()
  for _ = 1, 20 do
    local a = cu.full(1 << 22, 7, "i32", { stream = s1 })
    local h = cu.host.empty(1 << 22, "i32", { pinned = true })
    cu.copy(h, a, { stream = s2 }) -- first use on s2: ordered after the fill on s1
    s2:sync()
    T.eq(h[1], 7)
    T.eq(h[-1], 7)
  end
end)

T.case("device information", function()
  T.truthy(device.cc:match("^%d+%.%d+$"), "cc is like 9.0")
  T.truthy(device.sm_count > 0 and device.memory > GiB and device.l2 > 0)
  T.eq(cu.backend, "cuda")
end)

os.exit(T.run())
