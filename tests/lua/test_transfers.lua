-- Transfers: to_host, to_device and cu.copy in every direction, pinned and pageable host memory,
-- with and without streams, non-contiguous views, dtype-converting copies, round trips, and
-- which copies are synchronous.
package.path = (arg and arg[0] and arg[0]:match("^(.*)[/\\]") or "tests/lua") .. "/?.lua;" .. package.path
local T = require "cu.testing"
local S = require "support"

local SLEEP = 200 -- ms

T.case("to_host and to_device round trips of every dtype", function()
  for _, t in ipairs(S.DTYPES) do
    local vals = S.random_values(t, 50)
    local expect = {}
    for i, v in ipairs(vals) do expect[i] = S.stored(v, t) end
    local d = cu.array(vals, t)
    local h = d:to_host()
    T.eq(h.location, "pageable", t)
    T.eq(h.dtype, t)
    T.eq(h.shape, d.shape)
    S.same_list(h:totable(), expect, t .. " to_host")
    local p = d:to_host({ pinned = true })
    T.eq(p.location, "pinned", t)
    S.same_list(p:totable(), expect, t .. " to_host pinned")
    local back = h:to_device()
    T.eq(back.location, "device", t)
    S.same_list(back:totable(), expect, t .. " pageable to_device")
    local back2 = p:to_device()
    S.same_list(back2:totable(), expect, t .. " pinned to_device")
    local dd = d:to_device()
    T.eq(dd.location, "device")
    S.same_list(dd:totable(), expect, t .. " device to_device")
    dd[1] = S.random_values(t, 1)[2]
    S.same_list(d:totable(), expect, t .. " to_device makes a copy")
  end
end)

T.case("to_host and to_device with a stream", function()
  local s = cu.stream()
  local vals = S.randoms(1000)
  local d = cu.array(vals, "f64")
  local p = d:to_host({ pinned = true, stream = s })
  T.eq(p.location, "pinned")
  s:sync()
  T.eq(p:totable(), vals)
  local h = d:to_host({ stream = s })
  T.eq(h.location, "pageable")
  T.eq(h:totable(), vals)
  local back = p:to_device({ stream = s })
  s:sync()
  T.eq(back:totable(), vals)
  T.eq(h:to_device({ stream = s }):totable(), vals)
  T.eq(p:to_host():totable(), vals, "host to host")
  T.eq(h:to_host({ pinned = true }).location, "pinned")
end)

T.case("to_host and to_device of non-contiguous views", function()
  local vals = S.randints(20, -1000, 1000)
  local d = cu.array(S.matrix(vals, 4, 5), "i32")
  local t = d:transpose():to_host()
  T.eq(t.shape, { 5, 4 })
  T.eq(t[3][2], vals[(2 - 1) * 5 + 3])
  T.eq(t:totable(), d:transpose():totable())
  local n = d:narrow(2, 2, 3):to_host({ pinned = true })
  T.eq(n:totable(), d:narrow(2, 2, 3):totable())
  local h = cu.host.array(S.matrix(vals, 4, 5), "i32")
  local back = h:transpose():to_device()
  T.eq(back.shape, { 5, 4 })
  T.eq(back:totable(), d:transpose():totable())
  T.eq(h:narrow(1, 2, 2):to_device():totable(), d:narrow(1, 2, 2):totable())
end)

-- Every direction of cu.copy, with and without a stream.
local makers = {
  device = function(v, t) return cu.array(v, t) end,
  pinned = function(v, t) return cu.host.array(v, t, { pinned = true }) end,
  pageable = function(v, t) return cu.host.array(v, t) end,
}
local blank = {
  device = function(n, t) return cu.zeros(n, t) end,
  pinned = function(n, t) return cu.host.zeros(n, t, { pinned = true }) end,
  pageable = function(n, t) return cu.host.zeros(n, t) end,
}

for _, sname in ipairs({ "device", "pinned", "pageable" }) do
  for _, dname in ipairs({ "device", "pinned", "pageable" }) do
    T.case("cu.copy " .. sname .. " -> " .. dname, function()
      local n = math.random(100, 3000)
      local vals = S.randints(n, -100000, 100000)
      local src = makers[sname](vals, "i32")
      local dst = blank[dname](n, "i32")
      T.truthy(rawequal(cu.copy(dst, src), dst), "copy returns dst")
      T.eq(dst:totable(), vals)
      -- with a stream; the result is visible once the stream is synchronized
      local s = cu.stream()
      local dst2 = blank[dname](n, "i32")
      T.truthy(rawequal(cu.copy(dst2, src, { stream = s }), dst2), "copy returns dst")
      s:sync()
      T.eq(dst2:totable(), vals)
      -- the destination is independent of the source
      local dst3 = blank[dname]({ 2, 3 }, "f64")
      local src3 = makers[sname]({ { 1.5, 2.5, 3.5 }, { 4.5, 5.5, 6.5 } }, "f64")
      cu.copy(dst3, src3)
      src3[1][1] = -1
      T.eq(dst3:totable(), { { 1.5, 2.5, 3.5 }, { 4.5, 5.5, 6.5 } })
    end)
  end
end

T.case("copies between non-contiguous views in every direction", function()
  for sname, ms in pairs(makers) do
    for dname, _ in pairs(makers) do
      local vals = S.randints(30, -1000, 1000)
      local src = ms(S.matrix(vals, 5, 6), "i64")
      -- transposed source
      local dst = blank[dname](6 * 5, "i64"):view(6, 5)
      cu.copy(dst, src:transpose())
      for r = 1, 6 do
        for c = 1, 5 do T.eq(dst[r][c], vals[(c - 1) * 6 + r], sname .. "^T -> " .. dname) end
      end
      -- into a transposed destination
      local dst2 = blank[dname](30, "i64"):view(6, 5)
      cu.copy(dst2:transpose(), src)
      T.eq(dst2:transpose():totable(), src:totable(), sname .. " -> " .. dname .. "^T")
      -- narrowed block to narrowed block
      local dst3 = blank[dname](30, "i64"):view(5, 6)
      cu.copy(dst3:narrow(1, 2, 3):narrow(2, 3, 2), src:narrow(1, 1, 3):narrow(2, 5, 2))
      local got = dst3:totable()
      for r = 1, 5 do
        for c = 1, 6 do
          local want = 0
          if r >= 2 and r <= 4 and c >= 3 and c <= 4 then want = vals[(r - 2) * 6 + (c + 2)] end
          T.eq(got[r][c], want, string.format("%s -> %s block [%d][%d]", sname, dname, r, c))
        end
      end
      -- a row of a 3-D array (a strided view) into a column
      local cube = ms(S.matrix(vals, 5, 6), "i64"):view(5, 3, 2)
      local col = blank[dname]({ 3, 4 }, "i64")
      cu.copy(col:transpose()[4], cube[2]:transpose()[1])
      T.eq(col:transpose()[4]:totable(), { vals[7], vals[9], vals[11] }, sname .. " -> " .. dname .. " strided")
    end
  end
end)

T.case("copies between overlapping views of one array", function()
  local a = cu.arange(10, "i32")
  cu.copy(a:narrow(1, 2, 8), a:narrow(1, 1, 8))
  T.eq(a:totable(), { 0, 0, 1, 2, 3, 4, 5, 6, 7, 9 })
  local b = cu.arange(10, "i32")
  cu.copy(b:narrow(1, 1, 8), b:narrow(1, 3, 8))
  T.eq(b:totable(), { 2, 3, 4, 5, 6, 7, 8, 9, 8, 9 })
  local m = cu.arange(9, "i32"):view(3, 3)
  cu.copy(m, m:transpose())
  T.eq(m:totable(), { { 0, 3, 6 }, { 1, 4, 7 }, { 2, 5, 8 } })
  local hm = cu.host.array({ { 0, 1, 2 }, { 3, 4, 5 }, { 6, 7, 8 } }, "i32")
  cu.copy(hm, hm:transpose())
  T.eq(hm:totable(), { { 0, 3, 6 }, { 1, 4, 7 }, { 2, 5, 8 } })
  local c = cu.arange(6, "i32")
  cu.copy(c, c)
  T.eq(c:totable(), { 0, 1, 2, 3, 4, 5 })
end)

T.case("copies of 0-d and empty arrays", function()
  local a = cu.array(3.5, "f64")
  local h = cu.host.empty({}, "f32")
  cu.copy(h, a)
  T.eq(h:item(), 3.5)
  local d = cu.empty({}, "i32")
  cu.copy(d, cu.host.array(7, "i32"))
  T.eq(d:item(), 7)
  cu.copy(cu.zeros({ 0, 3 }), cu.host.zeros({ 0, 3 }))
  cu.copy(cu.host.zeros(0), cu.zeros(0))
end)

T.case("large copies round trip", function()
  local n = 1 << 20
  local d = cu.arange(n, "i32")
  local h = d:to_host({ pinned = true })
  T.eq(h[1], 0)
  T.eq(h[n], n - 1)
  T.eq(h[12345], 12344)
  local back = cu.zeros(n, "i32")
  cu.copy(back, h)
  T.eq(back[n], n - 1)
  local f = d:astype("f32"):to_host()
  T.eq(f[n], (n - 1) + 0.0)
end)


-- A Lua model of a strided view: flat storage indices of its elements in row-major order.
local function model(shape)
  local strides, st = {}, 1
  for d = #shape, 1, -1 do
    strides[d] = st
    st = st * shape[d]
  end
  return { shape = { table.unpack(shape) }, strides = strides, offset = 0 }
end
local function model_narrow(m, d, start, len)
  local n = { shape = { table.unpack(m.shape) }, strides = { table.unpack(m.strides) }, offset = m.offset }
  n.offset = n.offset + (start - 1) * n.strides[d]
  n.shape[d] = len
  return n
end
local function model_transpose(m, d1, d2)
  local n = { shape = { table.unpack(m.shape) }, strides = { table.unpack(m.strides) }, offset = m.offset }
  n.shape[d1], n.shape[d2] = n.shape[d2], n.shape[d1]
  n.strides[d1], n.strides[d2] = n.strides[d2], n.strides[d1]
  return n
end
local function model_indices(m)
  local out = {}
  local nd = #m.shape
  local function rec(d, off)
    if d > nd then
      out[#out + 1] = off + 1
      return
    end
    for i = 0, m.shape[d] - 1 do rec(d + 1, off + i * m.strides[d]) end
  end
  rec(1, m.offset)
  return out
end

-- A random view (narrows and transposes) of `base`, applied to both the array and its model.
local function random_view(a, m)
  local nd = #m.shape
  for _ = 1, math.random(0, 3) do
    if math.random() < 0.5 and nd >= 2 then
      local d1, d2 = math.random(1, nd), math.random(1, nd)
      a, m = a:transpose(d1, d2), model_transpose(m, d1, d2)
    else
      local d = math.random(1, nd)
      local size = m.shape[d]
      local start = math.random(1, size)
      local len = math.random(1, size - start + 1)
      a, m = a:narrow(d, start, len), model_narrow(m, d, start, len)
    end
  end
  return a, m
end

T.case("random strided copies between random views agree with a Lua model", function()
  local places = { "device", "pinned", "pageable" }
  local dtypes = { "f64", "f32", "i32", "i16", "u8", "c128" }
  for trial = 1, 60 do
    local nd = math.random(1, 4)
    local shape = {}
    for d = 1, nd do shape[d] = math.random(1, 5) end
    local src_place, dst_place = places[math.random(3)], places[math.random(3)]
    local src_t, dst_t = dtypes[math.random(#dtypes)], dtypes[math.random(#dtypes)]
    -- source: random small integers (exact in every dtype here)
    local n = 1
    for d = 1, nd do n = n * shape[d] end
    local vals = S.randints(n, 0, 120)
    local src_base = makers[src_place](vals, src_t):view(shape)
    local src, sm = random_view(src_base, model(shape))
    -- destination: a base of a shape whose views can take src's shape
    local dshape = {}
    for d = 1, #sm.shape do dshape[d] = sm.shape[d] + math.random(0, 2) end
    local dn = 1
    for d = 1, #dshape do dn = dn * dshape[d] end
    local dst_base = blank[dst_place](dn, dst_t):view(dshape)
    -- narrow every dimension to src's size at a random start, then maybe transpose both
    local dst, dm = dst_base, model(dshape)
    for d = 1, #dshape do
      local start = math.random(1, dshape[d] - sm.shape[d] + 1)
      dst, dm = dst:narrow(d, start, sm.shape[d]), model_narrow(dm, d, start, sm.shape[d])
    end
    if #dshape >= 2 and math.random() < 0.5 then
      local d1, d2 = math.random(1, #dshape), math.random(1, #dshape)
      dst, dm = dst:transpose(d1, d2), model_transpose(dm, d1, d2)
      src, sm = src:transpose(d1, d2), model_transpose(sm, d1, d2)
    end
    local what = string.format("trial %d: %s %s %s -> %s %s %s", trial, src_place, src_t,
      table.concat(src.shape, "x"), dst_place, dst_t, table.concat(dst.shape, "x"))
    local opts = math.random() < 0.5 and { stream = cu.stream() } or nil
    cu.copy(dst, src, opts)
    if opts then opts.stream:sync() end
    -- expected destination storage
    local expect = {}
    for i = 1, dn do expect[i] = S.convert(0, "i32", dst_t) end
    local si, di = model_indices(sm), model_indices(dm)
    T.eq(#si, #di, what)
    for k = 1, #si do expect[di[k]] = S.convert(vals[si[k]], "i32", dst_t) end
    local got = S.flatten(dst_base:totable())
    S.same_list(got, expect, what)
  end
end)

T.case("a pinned source collected while its asynchronous copy is queued", function()
  local s = cu.stream()
  local vals = S.randoms(1 << 16)
  local d = cu.zeros(1 << 16, "f64", { stream = s })
  cu.sleep(100, { stream = s })
  do
    local p = cu.host.array(vals, "f64", { pinned = true })
    cu.copy(d, p, { stream = s })
  end
  collectgarbage()
  collectgarbage()
  -- reuse host memory while the copy waits
  for _ = 1, 8 do cu.host.full(1 << 16, -1, "f64", { pinned = true }) end
  s:sync()
  T.eq(d[1], vals[1])
  T.eq(d[1 << 16], vals[1 << 16])
  T.eq(d[12345], vals[12345])
end)

-- synchronous and asynchronous copies -------------------------------------------------------

-- Queues SLEEP ms on `s` (or the current stream), then times fn().
local function after_sleep(s, fn)
  if s then cu.sleep(SLEEP, { stream = s }) else cu.sleep(SLEEP) end
  return S.timed(fn)
end

local LONG = SLEEP / 1000 * 0.75 -- a call that waited for the sleep took at least this long
local SHORT = SLEEP / 1000 * 0.4 -- a call that did not wait returned within this

T.case("pinned host <-> device with a stream is asynchronous", function()
  local s = cu.stream()
  local vals = S.randoms(1000)
  local d = cu.array(vals, "f64", { stream = s })
  local p = cu.host.zeros(1000, "f64", { pinned = true })
  local dt = after_sleep(s, function() cu.copy(p, d, { stream = s }) end)
  T.truthy(dt < SHORT, "device -> pinned with a stream returned after " .. dt .. " s")
  T.eq(s:done(), false, "the stream is still busy")
  T.eq(p[1000], vals[1000], "reading the host array waits for the copy")
  T.eq(p:totable(), vals)

  local p2 = cu.host.array(vals, "f64", { pinned = true })
  local d2 = cu.zeros(1000, "f64", { stream = s })
  dt = after_sleep(s, function() cu.copy(d2, p2, { stream = s }) end)
  T.truthy(dt < SHORT, "pinned -> device with a stream returned after " .. dt .. " s")
  T.eq(s:done(), false)
  s:sync()
  T.eq(d2:totable(), vals)

  -- to_host / to_device with a stream
  dt = after_sleep(s, function() p = d:to_host({ pinned = true, stream = s }) end)
  T.truthy(dt < SHORT, "to_host pinned with a stream returned after " .. dt .. " s")
  T.eq(p:totable(), vals)
  dt = after_sleep(s, function() d2 = p:to_device({ stream = s }) end)
  T.truthy(dt < SHORT, "pinned to_device with a stream returned after " .. dt .. " s")
  s:sync()
  T.eq(d2:totable(), vals)
end)

T.case("pageable host <-> device copies are synchronous, even with a stream", function()
  local s = cu.stream()
  local vals = S.randoms(100)
  local d = cu.array(vals, "f64", { stream = s })
  local h = cu.host.zeros(100, "f64")
  local dt = after_sleep(s, function() cu.copy(h, d, { stream = s }) end)
  T.truthy(dt >= LONG, "device -> pageable returned after " .. dt .. " s")
  T.truthy(s:done(), "the stream finished the copy")
  T.eq(h:totable(), vals)
  local d2 = cu.zeros(100, "f64", { stream = s })
  dt = after_sleep(s, function() cu.copy(d2, cu.host.array(vals, "f64"), { stream = s }) end)
  T.truthy(dt >= LONG, "pageable -> device returned after " .. dt .. " s")
  T.truthy(s:done())
  dt = after_sleep(s, function() h = d:to_host({ stream = s }) end)
  T.truthy(dt >= LONG, "to_host pageable returned after " .. dt .. " s")
  T.eq(h:totable(), vals)
end)

T.case("pinned host <-> device without a stream is synchronous", function()
  local vals = S.randoms(100)
  local d = cu.array(vals, "f64")
  local p = cu.host.zeros(100, "f64", { pinned = true })
  local dt = after_sleep(nil, function() cu.copy(p, d) end)
  T.truthy(dt >= LONG, "device -> pinned without a stream returned after " .. dt .. " s")
  T.truthy(cu.current_stream():done())
  T.eq(p:totable(), vals)
  local d2 = cu.zeros(100, "f64")
  dt = after_sleep(nil, function() cu.copy(d2, p) end)
  T.truthy(dt >= LONG, "pinned -> device without a stream returned after " .. dt .. " s")
  T.truthy(cu.current_stream():done())
  dt = after_sleep(nil, function() p = d:to_host({ pinned = true }) end)
  T.truthy(dt >= LONG, "to_host pinned without a stream returned after " .. dt .. " s")
  T.eq(p:totable(), vals)
end)

T.case("device -> device copies are asynchronous", function()
  local s = cu.stream()
  local vals = S.randints(1000, -9, 9)
  local a = cu.array(vals, "i32", { stream = s })
  local b = cu.zeros(1000, "i32", { stream = s })
  local dt = after_sleep(s, function() cu.copy(b, a, { stream = s }) end)
  T.truthy(dt < SHORT, "device -> device with a stream returned after " .. dt .. " s")
  T.eq(s:done(), false)
  T.eq(b[1000], vals[1000], "an element read waits for the copy")
  T.eq(b:totable(), vals)
  -- without a stream: the current stream
  local c = cu.zeros(1000, "i32")
  local a2 = cu.array(vals, "i32")
  dt = after_sleep(nil, function() cu.copy(c, a2) end)
  T.truthy(dt < SHORT, "device -> device without a stream returned after " .. dt .. " s")
  T.eq(cu.current_stream():done(), false)
  T.eq(c[1], vals[1])
  T.eq(c:totable(), vals)
  -- converting and non-contiguous device copies too
  local m = cu.zeros({ 10, 100 }, "f64", { stream = s })
  dt = after_sleep(s, function() cu.copy(m:transpose(), a:view(100, 10), { stream = s }) end)
  T.truthy(dt < SHORT, "a converting strided device copy returned after " .. dt .. " s")
  T.eq(m[10][100], vals[1000] + 0.0)
end)

T.case("host -> host copies complete before returning", function()
  local vals = S.randoms(50)
  local a = cu.host.array(vals, "f64", { pinned = true })
  local b = cu.host.zeros(50, "f32")
  cu.copy(b, a, { stream = cu.stream() })
  for i = 1, 50 do T.eq(b[i], S.f32(vals[i])) end
end)

T.case("element reads of an array filled by an asynchronous copy", function()
  local s = cu.stream()
  local vals = S.randoms(10)
  local p = cu.host.zeros(10, "f64", { pinned = true })
  local d = cu.array(vals, "f64", { stream = s })
  cu.sleep(SLEEP, { stream = s })
  cu.copy(p, d, { stream = s })
  local dt, v = S.timed(function() return p[3] end)
  T.eq(v, vals[3])
  T.truthy(dt >= LONG * 0.5, "the read waited for the stream (" .. dt .. " s)")
end)

os.exit(T.run())
