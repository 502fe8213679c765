-- The Array API's manipulation, creation, indexing and small linear algebra functions
-- (src/lua/manip.cpp): exact values on device and host arrays, views that share memory where
-- numpy's do, and the errors for bad axes, shapes, masks and out-of-range indices.
package.path = (arg and arg[0] and arg[0]:match("^(.*)[/\\]") or "tests/lua") .. "/?.lua;" .. package.path
local T = require "cu.testing"
local S = require "support"

-- 1..n as f32 in `shape` (device, or host when `host`).
local function seq(shape, dtype, host)
  local n = 1
  for _, d in ipairs(shape) do n = n * d end
  local a = cu.arange(1, n + 1, 1, dtype or "f32")
  if host then a = a:to_host() end
  return a:reshape(shape)
end

local PLACES = { device = false, host = true }

for place, host in pairs(PLACES) do
  T.case(place .. ": flip, permute_dims, moveaxis, expand_dims, squeeze are views", function()
    local a = seq({ 2, 3 }, "f32", host)
    T.eq(cu.flip(a):totable(), { { 6, 5, 4 }, { 3, 2, 1 } })
    T.eq(a:flip({ axis = 1 }):totable(), { { 4, 5, 6 }, { 1, 2, 3 } })
    T.eq(a:flip(-1):totable(), { { 3, 2, 1 }, { 6, 5, 4 } })
    T.eq(a:flip({ axis = {} }):totable(), a:totable())
    local b = seq({ 2, 3, 4 }, "i32", host)
    local p = cu.permute_dims(b, { 3, 1, 2 })
    T.eq(p.shape, { 4, 2, 3 })
    T.eq(p[2][1][3], b[1][3][2])
    T.eq(cu.moveaxis(b, 1, -1).shape, { 3, 4, 2 })
    T.eq(cu.moveaxis(b, { 1, 2 }, { 3, 1 }).shape, { 3, 4, 2 })
    T.eq(cu.expand_dims(a, 1).shape, { 1, 2, 3 })
    T.eq(a:expand_dims({ axis = -1 }).shape, { 2, 3, 1 })
    T.eq(cu.expand_dims(a, 3).shape, { 2, 3, 1 })
    T.eq(cu.squeeze(seq({ 1, 3, 1 }, "f32", host)).shape, { 3 })
    T.eq(cu.squeeze(seq({ 1, 3, 1 }, "f32", host), { axis = 3 }).shape, { 1, 3 })
    -- views: a write through each shows in a
    local f = cu.flip(a)
    f[1] = 0
    T.eq(a:totable(), { { 1, 2, 3 }, { 0, 0, 0 } })
    cu.permute_dims(a, { 2, 1 })[1][1] = 9
    T.eq(a[1][1], 9)
    cu.expand_dims(a, 1)[1][1][2] = 8
    T.eq(a[1][2], 8)
    local m = a.mT
    T.eq(m.shape, { 3, 2 })
    m[3][1] = 7
    T.eq(a[1][3], 7)
    a.T[2][1] = 6 -- the standard's x.T: a view of a 2-D array
    T.eq(a[1][2], 6)
    T.eq(a.T.shape, { 3, 2 })
    T.eq(cu.matrix_transpose(seq({ 2, 2, 3 }, "f32", host)).shape, { 2, 3, 2 })
  end)

  T.case(place .. ": negative strides work in copies, math, reductions and matmul", function()
    local a = seq({ 3, 4 }, "f64", host)
    local f = cu.flip(a)
    T.eq(f.strides, { -4, -1 })
    T.eq(f:contiguous():totable(), { { 12, 11, 10, 9 }, { 8, 7, 6, 5 }, { 4, 3, 2, 1 } })
    T.eq((f + a):totable(), { { 13, 13, 13, 13 }, { 13, 13, 13, 13 }, { 13, 13, 13, 13 } })
    T.eq(cu.sum(f, { axis = 2 }):totable(), { 42, 26, 10 })
    T.eq(cu.argmax(a[{ nil, nil, -1 }], { axis = 1 }):totable(), { 1, 1, 1, 1 })
    if not host then -- cu.matmul takes device arrays
      T.eq(cu.matmul(f, cu.flip(a.mT, { axis = 1 })):totable(),
        cu.matmul(f:contiguous(), cu.flip(a.mT, { axis = 1 }):contiguous()):totable())
    end
    T.eq(f:clone():totable(), f:totable())
    if not host then T.eq(f:to_host():totable(), f:totable()) end
  end)

  T.case(place .. ": slices with steps", function()
    local a = seq({ 10 }, "i64", host)
    T.eq(a[{ 2, 5 }]:totable(), { 2, 3, 4, 5 })
    T.eq(a[{ 1, -1, 3 }]:totable(), { 1, 4, 7, 10 })
    T.eq(a[{ nil, nil, -1 }]:totable(), { 10, 9, 8, 7, 6, 5, 4, 3, 2, 1 })
    T.eq(a[{ -2, 3, -2 }]:totable(), { 9, 7, 5, 3 })
    T.eq(a[{ 8, 20 }]:totable(), { 8, 9, 10 })
    T.eq(a[{ 5, 4 }].shape, { 0 })
    T.eq(a[{ 4, 5, -1 }].shape, { 0 })
    T.eq(a[{}]:totable(), a:totable())
    local b = seq({ 3, 4 }, "i32", host)
    T.eq(b[{ {}, { nil, nil, -2 } }]:totable(), { { 4, 2 }, { 8, 6 }, { 12, 10 } })
    T.eq(b[{ 2, { 2, 3 } }]:totable(), { 6, 7 })
    T.eq(b[{ { -1, 1, -1 }, 1 }]:totable(), { 9, 5, 1 })
    -- slices are views; writes go through
    b[{ {}, { 1, -1, 3 } }] = 0
    T.eq(b:totable(), { { 0, 2, 3, 0 }, { 0, 6, 7, 0 }, { 0, 10, 11, 0 } })
    b[{ 1, { nil, nil, -1 } }] = cu.array({ 1, 2, 3, 4 }, "i32")
    T.eq(b[1]:totable(), { 4, 3, 2, 1 })
    T.raises(function() return a[{ 1, 2, 0 }] end, "step must not be 0")
    T.raises(function() return b[{ {}, {}, {} }] end, "3 indices for a 2-d array")
  end)

  T.case(place .. ": boolean masks", function()
    local a = seq({ 2, 3 }, "f32", host)
    local m = a:gt(2.5)
    if host then m = m:to_host() end
    T.eq(a[m]:totable(), { 3, 4, 5, 6 })
    local rows = cu.array({ false, true })
    if host then rows = rows:to_host() end
    T.eq(a[rows]:totable(), { { 4, 5, 6 } })
    a[m] = -1
    T.eq(a:totable(), { { 1, 2, -1 }, { -1, -1, -1 } })
    local v = cu.array({ 10, 20, 30, 40 })
    if host then v = v:to_host() end
    a[m] = v
    T.eq(a:totable(), { { 1, 2, 10 }, { 20, 30, 40 } })
    -- a strided (transposed) array
    local t = seq({ 3, 2 }, "i32", host).mT
    local tm = t:gt(3)
    if host then tm = tm:to_host() end
    T.eq(t[tm]:totable(), { 5, 4, 6 })
    t[tm] = 0
    T.eq(t:totable(), { { 1, 3, 0 }, { 2, 0, 0 } })
    local none = a:gt(100)
    if host then none = none:to_host() end
    T.eq(a[none].shape, { 0 })
    a[none] = 5
    T.raises(function() return a[(host and cu.host.array or cu.array)({ true, false, true })] end, "mask's shape")
    T.raises(function() a[m] = cu.array({ 1, 2 }) end, "broadcast")
  end)

  T.case(place .. ": integer arrays, take, take_along_axis", function()
    local a = seq({ 4, 2 }, "i16", host)
    local function ix(t)
      local i = cu.array(t, "i64")
      return host and i:to_host() or i
    end
    T.eq(a[ix({ 4, 1, -1 })]:totable(), { { 7, 8 }, { 1, 2 }, { 7, 8 } })
    T.eq(cu.take(a, ix({ 2, 1, 2 }), { axis = 2 }):totable(),
      { { 2, 1, 2 }, { 4, 3, 4 }, { 6, 5, 6 }, { 8, 7, 8 } })
    T.eq(cu.take(a, ix({ { 1, 2 }, { 3, 4 } }), { axis = 1 }).shape, { 2, 2, 2 })
    T.eq(cu.take(seq({ 5 }, "f64", host), ix({ 5, 1 })):totable(), { 5, 1 })
    T.eq(cu.take(a, ix({}), { axis = 1 }).shape, { 0, 2 })
    local i32 = cu.array({ 3 }, "i32")
    if host then i32 = i32:to_host() end
    T.eq(a[i32]:totable(), { { 5, 6 } })
    T.eq(cu.take_along_axis(a, ix({ { 2 }, { 1 }, { 2 }, { 1 } })):totable(), { { 2 }, { 3 }, { 6 }, { 7 } })
    T.eq(cu.take_along_axis(a, ix({ { 4, 1 } }), { axis = 1 }):totable(), { { 7, 2 } })
    a[ix({ 1, 3 })] = 0
    T.eq(a:totable(), { { 0, 0 }, { 3, 4 }, { 0, 0 }, { 7, 8 } })
    -- out of range: a clear error, nothing written, the runtime keeps working
    T.raises(function() return a[ix({ 1, 5 })] end, "index 5 is out of range for axis 1 of size 4")
    T.raises(function() return a[ix({ 0 })] end, "index 0 is out of range")
    T.raises(function() return cu.take(a, ix({ -3 }), { axis = 2 }) end, "index -3 is out of range")
    T.raises(function() a[ix({ 2, 9 })] = 1 end, "index 9 is out of range")
    T.eq(a:totable(), { { 0, 0 }, { 3, 4 }, { 0, 0 }, { 7, 8 } })
    T.raises(function() return cu.take(a, ix({ 1 })) end, "axis is required")
    T.raises(function() return cu.take(a, host and cu.host.array({ 1.5 }) or cu.array({ 1.5 }), { axis = 1 }) end,
      "integer dtype")
    T.raises(function() return cu.take_along_axis(a, ix({ 1 })) end, "dimensions")
    T.eq(cu.sum(a):item(), 22)
  end)

  T.case(place .. ": concat, stack, unstack, roll, repeat, tile", function()
    local a = seq({ 2, 2 }, "i32", host)
    local b = seq({ 1, 2 }, "f32", host)
    local c = cu.concat({ a, b })
    T.eq(c.dtype, "f64")
    T.eq(c:totable(), { { 1, 2 }, { 3, 4 }, { 1, 2 } })
    T.eq(cu.concat({ a, a }, { axis = -1 }):totable(), { { 1, 2, 1, 2 }, { 3, 4, 3, 4 } })
    T.eq(cu.concat({ a, b }, { axis = false }):totable(), { 1, 2, 3, 4, 1, 2 })
    T.raises(function() return cu.concat({ a, b }, { axis = 2 }) end, "must match except along axis 2")
    T.raises(function() return cu.concat({ a, 5 }) end, "bad argument #1 to 'concat'")
    T.eq(cu.stack({ a, a }).shape, { 2, 2, 2 })
    T.eq(cu.stack({ a, a }, { axis = -1 }):totable(), { { { 1, 1 }, { 2, 2 } }, { { 3, 3 }, { 4, 4 } } })
    T.raises(function() return cu.stack({ a, b }) end, "equal shapes")
    local u1, u2 = cu.unstack(a, { axis = 2 })
    T.eq(u1:totable(), { 1, 3 })
    T.eq(u2:totable(), { 2, 4 })
    local r = seq({ 5 }, "i8", host)
    T.eq(cu.roll(r, 2):totable(), { 4, 5, 1, 2, 3 })
    T.eq(cu.roll(r, -6):totable(), { 2, 3, 4, 5, 1 })
    T.eq(cu.roll(a, 1):totable(), { { 4, 1 }, { 2, 3 } })
    T.eq(cu.roll(a, { 1, 1 }, { axis = { 1, 2 } }):totable(), { { 4, 3 }, { 2, 1 } })
    T.eq(cu.repeat_each(a, 2):totable(), { 1, 1, 2, 2, 3, 3, 4, 4 })
    T.eq(a:repeat_each(2, { axis = 1 }):totable(), { { 1, 2 }, { 1, 2 }, { 3, 4 }, { 3, 4 } })
    T.eq(cu.repeat_each(a, { 0, 3 }, { axis = 2 }):totable(), { { 2, 2, 2 }, { 4, 4, 4 } })
    T.raises(function() return cu.repeat_each(a, { 1, 2, 3 }, { axis = 1 }) end, "3 repeats for an axis of length 2")
    T.raises(function() return cu.repeat_each(a, -1) end, "must not be negative")
    T.eq(cu.tile(b, 2):totable(), { { 1, 2, 1, 2 } })
    T.eq(cu.tile(b, { 2, 1 }):totable(), { { 1, 2 }, { 1, 2 } })
    T.eq(cu.tile(r[{ 1, 2 }], { 2, 2 }):totable(), { { 1, 2, 1, 2 }, { 1, 2, 1, 2 } })
    T.eq(cu.tile(b, 0).shape, { 1, 0 })
    -- copies, not views
    local t = cu.tile(b, 1)
    t[1][1] = 100
    T.eq(b[1][1], 1)
  end)

  T.case(place .. ": broadcast_to and broadcast_arrays", function()
    local a = seq({ 3 }, "f32", host)
    local b = cu.broadcast_to(a, { 2, 3 })
    T.eq(b.strides, { 0, 1 })
    T.eq(b:totable(), { { 1, 2, 3 }, { 1, 2, 3 } })
    local x, y = cu.broadcast_arrays(a, seq({ 2, 1 }, "f32", host))
    T.eq(x.shape, { 2, 3 })
    T.eq(y:totable(), { { 1, 1, 1 }, { 2, 2, 2 } })
    T.raises(function() return cu.broadcast_to(a, { 2, 4 }) end, "cannot broadcast shape {3} to {2,4}")
  end)

  T.case(place .. ": *_like, tril, triu, meshgrid, reshape copy=, asarray", function()
    local a = seq({ 3, 3 }, "i32", host)
    local z = cu.zeros_like(a)
    T.eq(z.location, a.location)
    T.eq(z.dtype, "i32")
    T.eq(cu.ones_like(a, "f64"):totable(), { { 1, 1, 1 }, { 1, 1, 1 }, { 1, 1, 1 } })
    T.eq(cu.full_like(a, 7, { dtype = "u8" }).dtype, "u8")
    T.eq(cu.empty_like(a).shape, { 3, 3 })
    T.eq(cu.tril(a):totable(), { { 1, 0, 0 }, { 4, 5, 0 }, { 7, 8, 9 } })
    T.eq(cu.triu(a, { k = 1 }):totable(), { { 0, 2, 3 }, { 0, 0, 6 }, { 0, 0, 0 } })
    T.eq(cu.tril(a, { k = -1 }):totable(), { { 0, 0, 0 }, { 4, 0, 0 }, { 7, 8, 0 } })
    T.eq(cu.triu(a).dtype, "i32")
    local x, y = cu.meshgrid(seq({ 2 }, "f32", host), seq({ 3 }, "i8", host))
    T.eq(x:totable(), { { 1, 2 }, { 1, 2 }, { 1, 2 } })
    T.eq(y:totable(), { { 1, 1 }, { 2, 2 }, { 3, 3 } })
    T.eq(y.dtype, "i8")
    local xi = cu.meshgrid(seq({ 2 }, "f32", host), seq({ 3 }, "f32", host), { indexing = "ij" })
    T.eq(xi:totable(), { { 1, 1, 1 }, { 2, 2, 2 } })
    T.raises(function() cu.meshgrid(a, { indexing = "yx" }) end, "option 'indexing'")
    T.raises(function() cu.meshgrid(a, { indexing = "ij" }) end, "1-D")
    local r = cu.reshape(a, { 9 }, { copy = true })
    r[1] = 50
    T.eq(a[1][1], 1)
    T.raises(function() return cu.reshape(a.mT, { 9 }, { copy = false }) end, "without a copy")
    T.eq(cu.asarray(a), a)
    T.truthy(cu.asarray(a, { copy = true }) ~= a)
    T.eq(cu.asarray(a, "f32").dtype, "f32")
    T.raises(function() return cu.asarray(a, { dtype = "f32", copy = false }) end, "needs a copy")
  end)

  T.case(place .. ": vecdot, outer, tensordot", function()
    local a = seq({ 2, 3 }, "f64", host)
    local b = seq({ 3 }, "f64", host)
    T.eq(cu.vecdot(a, b):totable(), { 14, 32 })
    T.eq(cu.vecdot(a, a, { axis = 1 }):totable(), { 17, 29, 45 })
    local i = seq({ 3 }, "i32", host)
    T.eq(cu.vecdot(i, i).dtype, "i32")
    T.eq(cu.vecdot(i, i):item(), 14)
    local c = cu.array({ cu.complex(1, 2), cu.complex(0, 1) }, "c128")
    if host then c = c:to_host() end
    local v = cu.vecdot(c, c):item()
    T.eq({ v.re, v.im }, { 6, 0 })
    T.raises(function() return cu.vecdot(a, seq({ 2 }, "f64", host)) end, "")
    T.eq(cu.outer(b, seq({ 2 }, "f64", host)):totable(), { { 1, 2 }, { 2, 4 }, { 3, 6 } })
    T.raises(function() return cu.outer(a, b) end, "1-D arrays")
    if host then -- tensordot is a cu.matmul, which takes device arrays
      T.raises(function() return cu.tensordot(a, a) end, "device arrays expected")
      return
    end
    local x = seq({ 2, 3, 4 }, "f64", host)
    local y = seq({ 3, 4, 5 }, "f64", host)
    local t = cu.tensordot(x, y)
    T.eq(t.shape, { 2, 5 })
    T.eq(t[1][1], cu.sum(x[1] * y[{ {}, {}, 1 }]):item())
    local t1 = cu.tensordot(x, y, { axes = { { 2 }, { 1 } } })
    T.eq(t1.shape, { 2, 4, 4, 5 })
    T.eq(cu.tensordot(b, b, { axes = 0 }).shape, { 3, 3 })
    T.eq(cu.tensordot(b, b, { axes = 1 }):item(), 14)
    T.raises(function() return cu.tensordot(x, y, { axes = { { 1 }, { 1 } } }) end, "length 2")
    T.raises(function() return cu.tensordot(x, y, { axes = 4 }) end, "4 axes")
  end)

  T.case(place .. ": bad axes and arguments name what is wrong", function()
    local a = seq({ 2, 3 }, "f32", host)
    T.raises(function() return cu.flip(a, 3) end, "bad argument #2 to 'flip' (axis 3 is out of range")
    T.raises(function() return cu.flip(a, 0) end, "axes start at 1")
    T.raises(function() return cu.flip(a, { axis = { 1, 1 } }) end, "appears twice")
    T.raises(function() return cu.permute_dims(a, { 1 }) end, "2 axes expected")
    T.raises(function() return cu.squeeze(a, 1) end, "cannot squeeze axis 1 of size 2")
    T.raises(function() return cu.expand_dims(a, 4) end, "out of range")
    T.raises(function() return cu.moveaxis(a, { 1 }, { 1, 2 }) end, "1 source axes but 2")
    T.raises(function() return cu.roll(a, 1, { axis = 5 }) end, "option 'axis'")
    T.raises(function() return cu.stack({ a }, { axis = 4 }) end, "out of range")
    T.raises(function() return cu.concat({ a }, { bogus = 1 }) end, "bogus")
    T.raises(function() return cu.eye(-1) end, "bad argument #1 to 'eye'")
    T.raises(function() return cu.tril(seq({ 3 }, "f32", host)) end, "at least 2 dimensions")
    T.raises(function() return seq({ 3 }, "f32", host).mT end, "at least 2 dimensions")
    T.raises(function() return seq({ 2, 3, 4 }, "f32", host).T end, "a.T needs a 2-D array, got 3")
    T.raises(function() return seq({ 3 }, "f32", host).T end, "a.T needs a 2-D array, got 1")
    T.eq(cu.sum(a):item(), 21) -- the runtime still works
  end)
end

T.case("eye", function()
  T.eq(cu.eye(3):totable(), { { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } })
  T.eq(cu.eye(2, 3, { k = 1, dtype = "i32" }):totable(), { { 0, 1, 0 }, { 0, 0, 1 } })
  T.eq(cu.eye(3, 2, "bool", { k = -1 }):totable(), { { false, false }, { true, false }, { false, true } })
  T.eq(cu.eye(2, 2, { k = 5 }):totable(), { { 0, 0 }, { 0, 0 } })
  T.eq(cu.eye(0).shape, { 0, 0 })
end)

T.case("every dtype moves through flip, take, masks and concat", function()
  for _, dt in ipairs(S.DTYPES) do
    local a = cu.arange(1, 7, 1, dt == "bool" and "i32" or dt):astype(dt):reshape({ 2, 3 })
    local ref = a:totable()
    T.eq(cu.flip(a, 2):totable()[1][1], ref[1][3], dt)
    T.eq(a[cu.array({ 2 }, "i64")]:totable()[1], ref[2], dt)
    local m = cu.array({ { true, false, true }, { false, false, true } })
    local got = a[m]:totable()
    T.eq(got, { ref[1][1], ref[1][3], ref[2][3] }, dt)
    a[m] = a[m]
    T.eq(a:totable(), ref, dt)
    T.eq(cu.concat({ a, a }).dtype, dt)
    T.eq(cu.tile(a, 2):totable()[2][4], ref[2][1], dt)
  end
end)

os.exit(T.run())
