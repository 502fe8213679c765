-- Several devices in one process: cu.use_device, cu.device, cu.devices()' peers, and (with two or
-- more devices: CULUA_HOST_DEVICES=2 on the host backend, ctest lua.host.test_devices_2, or a
-- machine with several GPUs) copies between devices of every dtype and layout, mixed-device
-- operations refused, per-device streams, events and graphs (tests/lua/multi_device.lua).
package.path = (arg[0]:match("^(.*)[/\\]") or ".") .. "/?.lua;" .. package.path
local T = require "cu.testing"
local M = require "multi_device"

local n = #cu.devices()

T.case("the device count is the backend's (CULUA_HOST_DEVICES on the host backend)", function()
  local want = os.getenv("CULUA_HOST_DEVICES")
  if cu.backend == "host" then
    T.eq(n, want and want ~= "" and tonumber(want) or 1)
  else
    T.truthy(n >= 1)
  end
end)

T.case("cu.devices() lists each device's peers", function()
  for i, d in ipairs(cu.devices()) do
    T.eq(d.index, i - 1)
    T.eq(type(d.peers), "table")
    local count = 0
    for j, p in pairs(d.peers) do
      count = count + 1
      T.eq(math.type(j), "integer")
      T.truthy(j >= 0 and j < n and j ~= d.index, "peer index " .. tostring(j))
      T.eq(type(p.access), "boolean")
      if cu.backend == "host" then
        T.eq(p.link, "host")
        T.eq(p.access, false)
      else
        T.truthy(p.link == "nvlink" or p.link == "pcie", "link " .. tostring(p.link))
      end
    end
    T.eq(count, n - 1)
  end
end)

T.case("use_device selects a device until closed, also on error", function()
  T.eq(cu.device(), 0)
  do
    local u <close> = cu.use_device(0)
    T.eq(u.device, 0)
    T.eq(u.previous, 0)
    T.truthy(tostring(u):find("cu.DeviceUse(device=0, previous=0)", 1, true), tostring(u))
    T.eq(cu.device(), 0)
  end
  T.eq(cu.device(), 0)
  local last = n - 1
  local ok, err = pcall(function()
    local _ <close> = cu.use_device(last)
    T.eq(cu.device(), last)
    T.eq(cu.empty(4).device, last)
    error("boom")
  end)
  T.eq(ok, false)
  T.truthy(tostring(err):find("boom", 1, true))
  T.eq(cu.device(), 0, "restored after an error")
  -- nested, and an explicit close is idempotent
  local outer = cu.use_device(last)
  local inner = cu.use_device(0)
  T.eq(cu.device(), 0)
  inner:close()
  T.eq(cu.device(), last)
  inner:close()
  T.eq(cu.device(), last)
  outer:close()
  T.eq(cu.device(), 0)
end)

T.case("a device that does not exist is an argument error; the runtime keeps working", function()
  local range = string.format("(devices are numbered 0..%d)", n - 1)
  T.raises(function() cu.use_device(n) end,
    string.format("bad argument #1 to 'use_device' (device %d does not exist %s)", n, range))
  T.raises(function() cu.use_device(-1) end, "bad argument #1 to 'use_device' (device -1 does not exist")
  T.raises(function() cu.use_device("x") end, "bad argument #1 to 'use_device'")
  T.raises(function() cu.use_device() end, "bad argument #1 to 'use_device'")
  T.raises(function() cu.use_device(0, 1) end, "bad argument #2 to 'use_device' (no value expected")
  T.raises(function() cu.device(n + 3) end,
    string.format("bad argument #1 to 'device' (device %d does not exist %s)", n + 3, range))
  -- a method call: Lua numbers the arguments after self
  T.raises(function() cu.ones(3):to_device(n) end,
    string.format("bad argument #1 to 'to_device' (device %d does not exist", n))
  T.raises(function() cu.ones(3):to_device("x") end, "bad argument #1 to 'to_device'")
  T.eq(cu.device(), 0)
  T.eq((cu.ones(3) + 1):sum():item(), 6.0)
  -- to_device(i) on the only device is a plain copy
  local a = cu.arange(0, 5, 1, "i32")
  local b = a:to_device(0)
  T.eq(b.device, 0)
  T.eq(b:totable(), { 0, 1, 2, 3, 4 })
end)

T.case("the ledger has the fields of copies between devices", function()
  local l = cu.ledger()
  T.eq(math.type(l.p2p_bytes), "integer")
  T.eq(math.type(l.p2p_calls), "integer")
  local a = cu.ones(10)
  local before = cu.ledger()
  cu.copy(cu.empty(10), a)
  T.eq((cu.ledger() - before).p2p_calls, 0, "a copy on one device is not between devices")
end)

-- Every ordered pair of real GPUs: tests/gpu/test_multi_gpu.lua.
if n >= 2 then
  M.pair_cases(0, 1)
  M.pair_cases(1, 0)
end
if n >= 3 then M.pair_cases(n - 1, 1) end

os.exit(T.run())
