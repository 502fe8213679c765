-- The checks of several devices in one process, shared by tests/lua/test_devices.lua (both
-- backends; with CULUA_HOST_DEVICES=2 on the host backend) and tests/gpu/test_multi_gpu.lua (every
-- pair of real GPUs). Every result is checked against the same copy or operation done on the host.
--
--   local M = require "multi_device"
--   M.pair_cases(src_device, dst_device)   -- registers T.case's for one ordered pair

local T = require "cu.testing"
local S = require "support"

local M = {}

-- An array made with device d current.
function M.on(d, fn)
  local _ <close> = cu.use_device(d)
  return fn()
end

local function flat(a)
  local t = a:totable()
  if type(t) ~= "table" then return { t } end
  return S.flatten(t)
end

-- Runs fn and checks that the runtime still works afterwards on both devices.
local function refused(fn, needle, d0, d1)
  T.raises(fn, needle)
  for _, d in ipairs({ d0, d1 }) do
    local x = M.on(d, function() return cu.arange(1, 5, 1, "i32") end)
    S.same_list(flat(x + x), { 2, 4, 6, 8 }, "runtime usable on device " .. d)
  end
end

function M.pair_cases(d0, d1)
  local tag = string.format(" (device %d -> %d)", d0, d1)

  T.case("every dtype to every dtype between devices, as on the host" .. tag, function()
    for _, from in ipairs(S.DTYPES) do
      local values = S.random_values(from, 12)
      local src = M.on(d0, function() return cu.array(values, from) end)
      T.eq(src.device, d0)
      local host_src = src:to_host()
      for _, to in ipairs(S.DTYPES) do
        local dst = M.on(d1, function() return cu.empty(#values, to) end)
        T.eq(dst.device, d1)
        cu.copy(dst, src)
        local expected = cu.host.empty(#values, to)
        cu.copy(expected, host_src)
        S.same_list(flat(dst), flat(expected), from .. " -> " .. to .. tag)
      end
    end
  end)

  T.case("strided views on either side, with conversion" .. tag, function()
    local values = {}
    for i = 1, 6 * 5 do values[i] = (i * 37) % 101 - 50 end
    local host = cu.host.array(S.matrix(values, 6, 5), "f64")
    local src = M.on(d0, function() return host:to_device() end)
    local layouts = {
      { "transposed", function(a) return a:transpose() end, { 5, 6 } },
      { "narrowed rows", function(a) return a:narrow(1, 2, 3) end, { 3, 5 } },
      { "narrowed columns", function(a) return a:narrow(2, 2, 3) end, { 6, 3 } },
      { "a row", function(a) return a[4] end, { 5 } },
      { "a column", function(a) return a:transpose()[2] end, { 6 } },
    }
    for _, l in ipairs(layouts) do
      local name, view, shape = l[1], l[2], l[3]
      for _, to in ipairs({ "f64", "f32", "i32", "c64" }) do
        -- strided source into a contiguous destination
        local dst = M.on(d1, function() return cu.empty(shape, to) end)
        cu.copy(dst, view(src))
        local expected = cu.host.empty(shape, to)
        cu.copy(expected, view(host))
        S.same_list(flat(dst), flat(expected), "source " .. name .. " as " .. to .. tag)
        -- contiguous source into a strided destination (a view of a bigger array)
        local big = M.on(d1, function() return cu.zeros({ 6, 5 }, to) end)
        local hbig = cu.host.zeros({ 6, 5 }, to)
        local csrc = M.on(d0, function() return view(src):contiguous() end)
        cu.copy(view(big), csrc)
        cu.copy(view(hbig), view(host))
        S.same_list(flat(big), flat(hbig), "destination " .. name .. " as " .. to .. tag)
        -- strided on both sides
        local big2 = M.on(d1, function() return cu.zeros({ 6, 5 }, to) end)
        cu.copy(view(big2), view(src))
        S.same_list(flat(big2), flat(hbig), "both " .. name .. " as " .. to .. tag)
      end
    end
    -- 0-d arrays
    local s0 = M.on(d0, function() return cu.full({}, 4.5, "f32") end)
    local s1 = M.on(d1, function() return cu.empty({}, "f64") end)
    cu.copy(s1, s0)
    T.eq(s1:item(), 4.5)
  end)

  T.case("to_device(j), host arrays and other devices' current streams" .. tag, function()
    local a = M.on(d0, function() return cu.arange(0, 100, 1, "i64") end)
    local b = a:to_device(d1)
    T.eq(b.device, d1)
    T.eq(cu.device(), 0, "to_device(j) leaves the current device")
    S.same_list(flat(b), flat(a), "to_device" .. tag)
    local s1 = M.on(d1, function() return cu.stream() end)
    T.eq(s1.device, d1)
    local c = a:to_device(d1, { stream = s1 })
    s1:sync()
    S.same_list(flat(c), flat(a), "to_device with stream=" .. tag)
    local s0 = M.on(d0, function() return cu.stream() end)
    T.raises(function() a:to_device(d1, { stream = s0 }) end,
      string.format("bad argument #2 to 'to_device' (option 'stream': stream of device %d, expected device %d", d0, d1))
    -- (a method call: Lua numbers the arguments after self)
    T.raises(function() a:to_device(70) end, "bad argument #1 to 'to_device' (device 70 does not exist")
    -- pinned host memory into and out of device d1 while d0 is current
    M.on(d0, function()
      local h = cu.host.array({ 1, 2, 3, 4 }, "f32", { pinned = true })
      local d = M.on(d1, function() return cu.empty(4, "f32") end)
      cu.copy(d, h, { stream = s1 })
      local back = cu.host.empty(4, "f32", { pinned = true })
      cu.copy(back, d, { stream = s1 })
      s1:sync()
      S.same_list(flat(back), { 1.0, 2.0, 3.0, 4.0 }, "pinned round trip through device " .. d1)
    end)
    -- the copy runs on the destination's device: stream= of the source's is refused
    local dst = M.on(d1, function() return cu.empty(100, "i64") end)
    refused(function() cu.copy(dst, a, { stream = s0 }) end,
      string.format("bad argument #3 to 'copy' (option 'stream': stream of device %d, expected device %d "
        .. "(the destination's device))", d0, d1), d0, d1)
    cu.copy(dst, a, { stream = s1 })
    s1:sync()
    S.same_list(flat(dst), flat(a), "copy on stream=" .. tag)
  end)

  T.case("a copy waits for the source's queued work; frees stay stream-ordered" .. tag, function()
    for _ = 1, 3 do
      local a = M.on(d0, function() return cu.zeros(1 << 16, "f32") end)
      M.on(d0, function() cu.sleep(20) end)
      a:fill(7)
      local b = M.on(d1, function() return cu.empty(1 << 16, "f32") end)
      cu.copy(b, a)
      a:free()  -- queued copy still reads it: the free waits for the copy
      T.eq(b:min():item(), 7.0)
      T.eq(b:max():item(), 7.0)
      -- and the other way round: the destination's later work sees the copy
      local c = M.on(d0, function() return cu.empty(1 << 16, "f32") end)
      local d = M.on(d1, function() return (b * 2) end)
      cu.copy(c, d)
      d:free()
      T.eq(c:sum():item(), 14.0 * (1 << 16))
    end
    -- the source written on another stream of its device, made current: the copy waits for it
    local a = M.on(d0, function() return cu.zeros(1 << 16, "f32") end)
    local s0 = M.on(d0, function() return cu.stream() end)
    do
      local _ <close> = cu.use_stream(s0)
      cu.sleep(30, { stream = s0 })
      a:fill(3, { stream = s0 })
      local b = M.on(d1, function() return cu.empty(1 << 16, "f32") end)
      cu.copy(b, a)
      T.eq(b:min():item(), 3.0, "the copy waited for the source device's current stream")
    end
  end)

  T.case("the ledger counts copies between devices; the trace shows them" .. tag, function()
    local a = M.on(d0, function() return cu.ones(1000, "f64") end)
    local b = M.on(d1, function() return cu.empty(1000, "f64") end)
    local c = M.on(d1, function() return cu.empty(1000, "f32") end)
    cu.sync()
    local before = cu.ledger()
    cu.copy(b, a)
    local mid = cu.ledger()
    T.eq((mid - before).p2p_calls, 1)
    T.eq((mid - before).p2p_bytes, 8000)
    cu.copy(c, a)  -- converted on the destination after the move
    local after = cu.ledger()
    T.eq((after - mid).p2p_calls, 1)
    T.eq((after - mid).p2p_bytes, 8000)
    T.truthy(tostring(after - before):find("between devices [%d.]+ KiB in 2 calls"),
      "ledger text: " .. tostring(after - before))
    local file = os.tmpname()
    cu.trace.start()
    cu.copy(b, a)
    cu.trace.stop(file)
    local f = assert(io.open(file))
    local text = f:read("a")
    f:close()
    os.remove(file)
    T.truthy(text:find("copy PtoP", 1, true), "the trace names the copy between devices")
  end)

  T.case("operations mixing devices are refused, naming the argument" .. tag, function()
    local a = M.on(d0, function() return cu.arange(1, 9, 1, "f32") end)
    local b = M.on(d1, function() return cu.arange(1, 9, 1, "f32") end)
    local s1 = M.on(d1, function() return cu.stream() end)
    local want = string.format("(array on device %d, expected device %d (the first array's device); "
      .. "copy it with cu.copy)", d1, d0)
    refused(function() return a + b end, "bad argument #2 to 'add' " .. want, d0, d1)
    refused(function() return cu.add(a, b) end, "bad argument #2 to 'add' " .. want, d0, d1)
    refused(function() return cu.mul(2, a, { out = b }) end,
      string.format("bad argument #3 to 'mul' (option 'out': array on device %d, expected device %d", d1, d0), d0, d1)
    refused(function() return cu.exp(a, { stream = s1 }) end,
      string.format("bad argument #2 to 'exp' (option 'stream': stream of device %d, expected device %d",
        d1, d0), d0, d1)
    refused(function() return cu.where(a:gt(2), a, b) end, "bad argument #3 to 'where' " .. want, d0, d1)
    refused(function() return a:sum({ out = M.on(d1, function() return cu.empty({}, "f32") end) }) end,
      "option 'out': array on device", d0, d1)
    local m0 = M.on(d0, function() return cu.ones({ 4, 4 }, "f32") end)
    local m1 = M.on(d1, function() return cu.ones({ 4, 4 }, "f32") end)
    refused(function() return cu.matmul(m0, m1) end, "bad argument #2 to 'matmul' " .. want, d0, d1)
    refused(function() return cu.dot(a, b) end, "bad argument #2 to 'dot' " .. want, d0, d1)
    -- operations on one device's arrays run there, whatever the current device
    M.on(d0, function()
      local r = b * 3 + b
      T.eq(r.device, d1)
      S.same_list(flat(r), { 4.0, 8.0, 12.0, 16.0, 20.0, 24.0, 28.0, 32.0 }, "on device " .. d1)
      T.eq(b:sum().device, d1)
      T.eq(b:sum():item(), 36.0)
      T.eq(cu.matmul(m1, m1).device, d1)
    end)
  end)

  T.case("streams, events and graphs belong to the current device" .. tag, function()
    for _, d in ipairs({ d0, d1 }) do
      local _ <close> = cu.use_device(d)
      T.eq(cu.device(), d)
      T.eq(cu.current_stream().device, d)
      T.eq(cu.stream().device, d)
      T.eq(cu.event().device, d)
      local x = cu.arange(0, 16, 1, "f32")
      T.eq(x.device, d)
      local g = cu.graph(function(v) v:fill(0); cu.add(v, 5, { out = v }) end, { x })
      T.eq(g.device, d)
      g:launch()
      T.eq(x:sum():item(), 80.0)
      local other = d == d0 and d1 or d0
      local y = M.on(other, function() return cu.empty(16, "f32") end)
      T.raises(function() cu.graph(function() cu.copy(y, x) end) end, "cannot be captured")
      T.eq(cu.device(), d, "device kept after a failed capture")
    end
  end)
end

return M
