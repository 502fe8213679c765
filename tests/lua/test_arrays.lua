-- Arrays: creation, properties, indexing, views (view/reshape/narrow/transpose), contiguous,
-- clone, fill, item and totable.
package.path = (arg and arg[0] and arg[0]:match("^(.*)[/\\]") or "tests/lua") .. "/?.lua;" .. package.path
local T = require "cu.testing"
local S = require "support"

local function arange_list(n, start)
  local t = {}
  for i = 1, n do t[i] = (start or 0) + i - 1 end
  return t
end

-- creation ---------------------------------------------------------------------------------

T.case("empty/zeros/ones/full: shape, dtype, values", function()
  local e = cu.empty({ 2, 3 })
  T.eq(e.shape, { 2, 3 })
  T.eq(e.dtype, "f32")
  T.eq(e.size, 6)
  T.eq(e.ndim, 2)
  T.eq(e.location, "device")
  T.eq(cu.empty(5, "i16").shape, { 5 })
  T.eq(cu.empty(5, "i16").dtype, "i16")
  T.eq(cu.zeros({ 2, 2 }):totable(), { { 0.0, 0.0 }, { 0.0, 0.0 } })
  T.eq(cu.ones(3, "i32"):totable(), { 1, 1, 1 })
  T.eq(math.type(cu.ones(3, "i32"):totable()[1]), "integer")
  local v = math.random(-1000, 1000) + 0.25
  T.eq(cu.full({ 2, 2 }, v):totable(), { { v, v }, { v, v } })
  T.eq(cu.full(3, v, "f64"):totable(), { v, v, v })
  T.eq(cu.full(2, true, "bool"):totable(), { true, true })
  local z = cu.full(2, cu.complex(1.5, -2), "c128"):totable()
  T.eq({ z[2].re, z[2].im }, { 1.5, -2.0 })
end)

T.case("zeros/ones/full for every dtype", function()
  for _, t in ipairs(S.DTYPES) do
    local kind = S.INFO[t].kind
    local zero = S.stored(kind == "bool" and false or 0, t)
    local one = S.stored(kind == "bool" and true or 1, t)
    local zs = cu.zeros({ 2, 3 }, t)
    T.eq(zs.dtype, t)
    for _, v in ipairs(S.flatten(zs:totable())) do
      T.truthy(S.same(v, zero), t .. " zeros gives " .. S.show(v))
    end
    for _, v in ipairs(S.flatten(cu.ones(4, t):totable())) do
      T.truthy(S.same(v, one), t .. " ones gives " .. S.show(v))
    end
    local fv = S.random_values(t, 1)
    fv = fv[#fv]
    for _, v in ipairs(cu.full(3, fv, t):totable()) do
      T.truthy(S.same(v, S.stored(fv, t)), t .. " full gives " .. S.show(v))
    end
  end
end)

T.case("dtype given in the options table and by alias", function()
  T.eq(cu.empty(3, { dtype = "i64" }).dtype, "i64")
  T.eq(cu.zeros(3, { dtype = "u8" }).dtype, "u8")
  T.eq(cu.full(3, 7, { dtype = "i16" }):totable(), { 7, 7, 7 })
  T.eq(cu.array({ 1, 2 }, { dtype = "f64" }).dtype, "f64")
  local aliases = { float32 = "f32", float64 = "f64", float16 = "f16", bfloat16 = "bf16",
    int8 = "i8", int16 = "i16", int32 = "i32", int64 = "i64", uint8 = "u8", uint32 = "u32",
    uint16 = "u16", uint64 = "u64", complex64 = "c64", complex128 = "c128", double = "f64" }
  for alias, canonical in pairs(aliases) do
    T.eq(cu.empty(2, alias).dtype, canonical, alias)
    T.eq(cu.zeros(2):astype(alias).dtype, canonical, alias)
  end
end)

T.case("a nil dtype argument means the default, also before an options table", function()
  T.eq(cu.zeros(3, nil).dtype, "f32")
  T.eq(cu.zeros(3, "i32", nil).dtype, "i32")
  local s = cu.stream()
  T.eq(cu.zeros(3, nil, { stream = s }).dtype, "f32")
  T.eq(cu.zeros(3, nil, { dtype = "i32" }).dtype, "i32")
  T.eq(cu.full(3, 1, nil, { dtype = "i16" }).dtype, "i16")
  T.eq(cu.host.zeros(3, nil, { pinned = true }).location, "pinned")
  T.eq(cu.arange(3, nil, { dtype = "i64" }):totable(), { 0, 1, 2 })
  T.eq(cu.linspace(0, 1, 3, nil, { stream = s }):totable(), { 0, 0.5, 1 })
  T.eq(cu.array({ 1, 2 }, nil, { dtype = "u8" }).dtype, "u8")
end)

T.case("itemsize and nbytes of every dtype", function()
  for _, t in ipairs(S.DTYPES) do
    local a = cu.empty({ 3, 5 }, t)
    T.eq(a.nbytes, 15 * S.INFO[t].size, t)
    T.eq(a:narrow(2, 2, 2).nbytes, 6 * S.INFO[t].size, t .. " view")
  end
end)

T.case("cu.array infers the shape and dtype", function()
  local vals = S.randoms(6)
  local a = cu.array(S.matrix(vals, 2, 3))
  T.eq(a.shape, { 2, 3 })
  T.eq(a.dtype, "f32")
  local expect = {}
  for i, v in ipairs(vals) do expect[i] = S.f32(v) end
  T.eq(S.flatten(a:totable()), expect)
  T.eq(cu.array({ true, false, true }).dtype, "bool")
  T.eq(cu.array({ true, false, true }):totable(), { true, false, true })
  T.eq(cu.array({ 1, cu.complex(0, 1) }).dtype, "c64")
  T.eq(cu.array({ 1, 2, 3 }).dtype, "f32", "integers without a dtype give f32")
  T.eq(cu.array({ true, 2 }).dtype, "f32", "mixed booleans and numbers are not bool")
  local c = cu.array({ 1, cu.complex(0, 1) }):totable()
  T.eq({ c[1].re, c[1].im, c[2].re, c[2].im }, { 1.0, 0.0, 0.0, 1.0 })
  local e = cu.array({})
  T.eq(e.shape, { 0 })
  T.eq(e.size, 0)
  local d3 = cu.array({ { { 1, 2 }, { 3, 4 } }, { { 5, 6 }, { 7, 8 } }, { { 9, 10 }, { 11, 12 } } }, "i32")
  T.eq(d3.shape, { 3, 2, 2 })
  T.eq(d3[3][2][1], 11)
end)

T.case("an empty shape table gives a 0-d array", function()
  local z = cu.zeros({}, "i32")
  T.eq(z.shape, {})
  T.eq(z.ndim, 0)
  T.eq(z.size, 1)
  T.eq(z.nbytes, 4)
  T.eq(z.strides, {})
  T.eq(z:item(), 0)
  local v = math.random(1, 1000)
  T.eq(cu.full({}, v, "i64"):item(), v)
  T.eq(cu.host.ones({}):item(), 1.0)
  T.eq(cu.empty({}):fill(2.5):item(), 2.5)
end)

T.case("cu.array of a scalar is 0-d", function()
  local v = math.random() * 100
  local a = cu.array(v)
  T.eq(a.shape, {})
  T.eq(a.ndim, 0)
  T.eq(a.size, 1)
  T.eq(a.dtype, "f32")
  T.eq(a:item(), S.f32(v))
  T.eq(cu.array(true).dtype, "bool")
  T.eq(cu.array(true):item(), true)
  T.eq(cu.array(5, "i64"):item(), 5)
  local z = cu.array(cu.complex(2, 3))
  T.eq(z.dtype, "c64")
  T.eq(z:item().im, 3.0)
end)

T.case("cu.array copies an existing array (and converts)", function()
  local vals = S.randints(6, -50, 50)
  local src = cu.array(vals, "i32")
  local a = cu.array(src)
  T.eq(a.dtype, "i32")
  T.eq(a:totable(), vals)
  a[1] = 999
  T.eq(src[1], vals[1], "the copy has its own memory")
  local f = cu.array(src, "f64")
  T.eq(f.dtype, "f64")
  T.eq(f[2], vals[2] + 0.0)
  local h = cu.host.array(src)
  T.eq(h.location, "pageable")
  T.eq(h:totable(), vals)
  local back = cu.array(h:transpose())
  T.eq(back.location, "device")
  T.eq(back:totable(), vals)
  -- from a non-contiguous view
  local m = cu.array(S.matrix(vals, 2, 3), "i32")
  T.eq(cu.array(m:transpose()):totable(), { { vals[1], vals[4] }, { vals[2], vals[5] }, { vals[3], vals[6] } })
end)

T.case("cu.array with every dtype stores the exact or rounded values", function()
  for _, t in ipairs(S.DTYPES) do
    local vals = S.random_values(t, 30)
    local a = cu.array(vals, t)
    T.eq(a.dtype, t)
    local expect = {}
    for i, v in ipairs(vals) do expect[i] = S.stored(v, t) end
    S.same_list(a:totable(), expect, t)
    local h = cu.host.array(vals, t)
    S.same_list(h:totable(), expect, t .. " host")
  end
end)

T.case("arange", function()
  T.eq(cu.arange(5).dtype, "f32")
  T.eq(cu.arange(5):totable(), { 0.0, 1.0, 2.0, 3.0, 4.0 })
  T.eq(cu.arange(5, "i32"):totable(), { 0, 1, 2, 3, 4 })
  T.eq(cu.arange(2, 7, "i64"):totable(), { 2, 3, 4, 5, 6 })
  T.eq(math.type(cu.arange(2, 7, "i64")[1]), "integer")
  T.eq(cu.arange(1, 10, 3, "i32"):totable(), { 1, 4, 7 })
  T.eq(cu.arange(5, 0, -2, "i32"):totable(), { 5, 3, 1 })
  T.eq(cu.arange(0, 1, 0.25):totable(), { 0, 0.25, 0.5, 0.75 })
  T.eq(cu.arange(2.5):totable(), { 0, 1, 2 })
  T.eq(cu.arange(3, 3).size, 0)
  T.eq(cu.arange(5, 0).size, 0)
  T.eq(cu.arange(0, 5, -1).size, 0)
  T.eq(cu.arange(0).size, 0)
  T.eq(cu.arange(6, { dtype = "u8" }):totable(), { 0, 1, 2, 3, 4, 5 })
  local n = math.random(50, 500)
  local a = cu.arange(n, "f64")
  T.eq(a.size, n)
  T.eq(a[n], n - 1.0)
  local start, step = math.random(-100, 100), math.random(1, 9)
  local t = cu.arange(start, start + 10 * step, step, "i32"):totable()
  T.eq(#t, 10)
  for i = 1, 10 do T.eq(t[i], start + (i - 1) * step) end
  local f = cu.arange(-1, 1, 0.1, "f64"):totable()
  T.eq(#f, 20)
  for i = 1, 20 do T.near(f[i], -1 + (i - 1) * 0.1, 1e-12) end
end)

T.case("arange: integer and bool dtypes need whole numbers", function()
  T.raises(function() cu.arange(0, 1, 0.1, "i32") end,
    "bad argument #3 to 'arange' (step must be a whole number for dtype i32 "
      .. "(integer arrays hold exact values), got 0.1)")
  T.raises(function() cu.arange(0.5, 3, "i64") end,
    "bad argument #1 to 'arange' (start must be a whole number for dtype i64")
  T.raises(function() cu.arange(0, 2.5, 1, "u8") end,
    "bad argument #2 to 'arange' (stop must be a whole number for dtype u8")
  T.raises(function() cu.arange(2.5, "i32") end, "bad argument #1 to 'arange' (n must be a whole number for dtype i32")
  T.raises(function() cu.arange(0, 1, 0.5, { dtype = "bool" }) end, "step must be a whole number for dtype bool")
  T.raises(function() cu.arange(0, 0 / 0, 1, "i32") end, "stop must be a whole number for dtype i32")
  T.raises(function() cu.arange(0, math.huge, 1, "i16") end, "stop must be a whole number for dtype i16")
  -- Whole numbers written as floats are exact, and float dtypes take any step.
  T.eq(cu.arange(0.0, 6.0, 2.0, "i32"):totable(), { 0, 2, 4 })
  T.eq(cu.arange(3.0, "i64"):totable(), { 0, 1, 2 })
  T.eq(cu.arange(0, 1, 0.5, "f64"):totable(), { 0, 0.5 })
  T.eq(cu.ones(3):sum():item(), 3, "the runtime still works")
end)

T.case("linspace", function()
  T.eq(cu.linspace(0, 1, 5).dtype, "f32")
  T.eq(cu.linspace(0, 1, 5):totable(), { 0, 0.25, 0.5, 0.75, 1 })
  T.eq(cu.linspace(-1, 1, 3, "f64"):totable(), { -1, 0, 1 })
  T.eq(cu.linspace(7, 9, 1):totable(), { 7 })
  T.eq(cu.linspace(0, 1, 0).size, 0)
  T.eq(cu.linspace(0, 10, 6, "i32"):totable(), { 0, 2, 4, 6, 8, 10 })
  local a, b = math.random() * 10 - 5, math.random() * 10 + 5
  local n = math.random(10, 100)
  local t = cu.linspace(a, b, n, "f64"):totable()
  T.eq(#t, n)
  T.eq(t[1], a, "first element is exactly a")
  T.eq(t[n], b, "last element is exactly b")
  for i = 1, n do T.near(t[i], a + (i - 1) * (b - a) / (n - 1), 1e-12) end
  local f = cu.linspace(0, 0.3, 7):totable()
  T.eq(f[7], S.f32(0.3), "f32 last element is b rounded")
  T.eq(cu.linspace(5, 1, 5, { dtype = "f64" }):totable(), { 5, 4, 3, 2, 1 })
end)

T.case("host array creation", function()
  local h = cu.host.zeros({ 2, 3 })
  T.eq(h.location, "pageable")
  T.eq(h.shape, { 2, 3 })
  T.eq(h.dtype, "f32")
  T.eq(h:totable(), { { 0, 0, 0 }, { 0, 0, 0 } })
  local p = cu.host.ones(4, "i32", { pinned = true })
  T.eq(p.location, "pinned")
  T.eq(p:totable(), { 1, 1, 1, 1 })
  T.eq(cu.host.empty(3, { pinned = true }).location, "pinned")
  T.eq(cu.host.empty(3, { pinned = false }).location, "pageable")
  T.eq(cu.host.empty(3, "u8").dtype, "u8")
  local v = math.random(1, 100)
  T.eq(cu.host.full(3, v, "i64"):totable(), { v, v, v })
  T.eq(cu.host.full(2, v, { pinned = true, dtype = "f64" }):totable(), { v + 0.0, v + 0.0 })
  local vals = S.randoms(4)
  local a = cu.host.array(S.matrix(vals, 2, 2), "f64", { pinned = true })
  T.eq(a.location, "pinned")
  T.eq(S.flatten(a:totable()), vals)
  T.eq(cu.host.array({ true, false }).dtype, "bool")
  T.eq(cu.host.array(3.5).shape, {})
end)

T.case("stream option of the creation functions", function()
  local s = cu.stream()
  T.eq(cu.zeros(3, { stream = s }):totable(), { 0, 0, 0 })
  T.eq(cu.ones(3, "i32", { stream = s }):totable(), { 1, 1, 1 })
  T.eq(cu.full(2, 4, { stream = s, dtype = "i8" }):totable(), { 4, 4 })
  T.eq(cu.array({ 1, 2 }, "i32", { stream = s }):totable(), { 1, 2 })
  T.eq(cu.arange(3, "i32", { stream = s }):totable(), { 0, 1, 2 })
  T.eq(cu.linspace(0, 1, 3, { stream = s }):totable(), { 0, 0.5, 1 })
  T.eq(cu.empty(3, { stream = s }).size, 3)
end)

T.case("8 dimensions are allowed", function()
  local a = cu.zeros({ 1, 2, 1, 2, 1, 2, 1, 2 }, "i32")
  T.eq(a.ndim, 8)
  T.eq(a.size, 16)
  T.eq(a.strides, { 16, 8, 8, 4, 4, 2, 2, 1 })
  T.eq(cu.arange(16, "i32"):view({ 1, 2, 1, 2, 1, 2, 1, 2 })[1][2][1][1][1][2][1][2], 11)
end)

T.case("zero-size arrays", function()
  local a = cu.zeros({ 3, 0 })
  T.eq(a.shape, { 3, 0 })
  T.eq(a.size, 0)
  T.eq(a.nbytes, 0)
  T.eq(#a, 3)
  T.eq(a:totable(), { {}, {}, {} })
  T.eq(cu.zeros(0):totable(), {})
  T.eq(#cu.zeros(0), 0)
  T.eq(a:clone().shape, { 3, 0 })
  T.eq(a:to_host().shape, { 3, 0 })
end)

-- properties -----------------------------------------------------------------------------------

T.case("properties", function()
  local a = cu.zeros({ 4, 5, 6 }, "f64")
  T.eq(a.shape, { 4, 5, 6 })
  T.eq(a.dtype, "f64")
  T.eq(a.ndim, 3)
  T.eq(a.size, 120)
  T.eq(a.nbytes, 960)
  T.eq(a.location, "device")
  T.eq(a.device, 0)
  T.eq(math.type(a.device), "integer")
  T.eq(a.strides, { 30, 6, 1 })
  T.eq(a.is_contiguous, true)
  T.eq(a.freed, false)
  T.eq(#a, 4)
  T.eq(math.type(a.size), "integer")
  T.eq(math.type(a.nbytes), "integer")
  -- the shape table is a copy
  local s = a.shape
  s[1] = 100
  T.eq(a.shape, { 4, 5, 6 })
end)

-- indexing ---------------------------------------------------------------------------------

T.case("1-D element reads and writes, negative indices", function()
  local vals = S.randoms(10)
  local a = cu.array(vals, "f64")
  for i = 1, 10 do
    T.eq(a[i], vals[i])
    T.eq(a[-i], vals[11 - i])
  end
  local v = math.random() * 10
  a[3] = v
  a[-1] = -v
  T.eq(a[3], v)
  T.eq(a[10], -v)
  local b = cu.arange(5, "i32")
  b[2] = 42
  b[-2] = -7
  T.eq(b:totable(), { 0, 42, 2, -7, 4 })
  T.eq(math.type(b[1]), "integer")
  local c = cu.zeros(3, "bool")
  c[1] = true
  c[2] = 1
  c[3] = 0
  T.eq(c:totable(), { true, true, false })
  T.eq(type(c[1]), "boolean")
  local z = cu.zeros(2, "c64")
  z[2] = cu.complex(1, -1)
  T.eq({ z[2].re, z[2].im }, { 1.0, -1.0 })
  T.eq(a[2.0], vals[2], "an integral float index is accepted")
end)

T.case("N-D indexing gives views of rows that write through", function()
  local a = cu.arange(24, "i32"):view({ 2, 3, 4 })
  local r = a[2]
  T.eq(r.shape, { 3, 4 })
  T.eq(r:totable(), { { 12, 13, 14, 15 }, { 16, 17, 18, 19 }, { 20, 21, 22, 23 } })
  T.eq(a[-1][-1]:totable(), { 20, 21, 22, 23 })
  T.eq(a[1][2][3], 6)
  T.eq(a[-2][-3][-4], 0)
  r[1][1] = -5
  T.eq(a[2][1][1], -5, "write through a row view")
  a[1][3][4] = 77
  T.eq(a:totable()[1][3][4], 77)
  -- rows of a transposed array
  local m = cu.array({ { 1, 2, 3 }, { 4, 5, 6 } }, "i32")
  local col = m:transpose()[2]
  T.eq(col:totable(), { 2, 5 })
  col[2] = 50
  T.eq(m[2][2], 50)
end)

T.case("row assignment: a scalar fills, an array is copied", function()
  local a = cu.zeros({ 3, 4 })
  local v = math.random(1, 100) + 0.5
  a[2] = v
  T.eq(a:totable(), { { 0, 0, 0, 0 }, { v, v, v, v }, { 0, 0, 0, 0 } })
  local row = S.randints(4, -9, 9)
  a[-1] = cu.array(row, "i32") -- converts i32 to f32
  T.eq(a:totable()[3], row)
  a[1] = cu.host.array(row, "f64")
  T.eq(a:totable()[1], row)
  local b = cu.zeros({ 2, 2, 2 }, "i32")
  b[2] = cu.array({ { 1, 2 }, { 3, 4 } }, "i32")
  b[1][2] = 9
  T.eq(b:totable(), { { { 0, 0 }, { 9, 9 } }, { { 1, 2 }, { 3, 4 } } })
  -- into a non-contiguous array
  local t = cu.zeros({ 3, 2 }, "i32"):transpose() -- shape {2,3}
  t[1] = cu.array({ 7, 8, 9 }, "i32")
  T.eq(t:totable(), { { 7, 8, 9 }, { 0, 0, 0 } })
  -- a host array row
  local h = cu.host.zeros({ 2, 3 }, "i32")
  h[2] = 5
  h[1] = cu.array({ 1, 2, 3 }, "i32")
  T.eq(h:totable(), { { 1, 2, 3 }, { 5, 5, 5 } })
end)

T.case("host arrays index like device arrays", function()
  local vals = S.randints(6, -100, 100)
  local h = cu.host.array(S.matrix(vals, 2, 3), "i32", { pinned = true })
  T.eq(h[2][3], vals[6])
  T.eq(h[-1][-3], vals[4])
  h[1][1] = 1234
  T.eq(h:totable()[1][1], 1234)
  local row = h[2]
  T.eq(row.location, "pinned")
  row[2] = -1
  T.eq(h[2][2], -1)
end)

-- views ------------------------------------------------------------------------------------

T.case("view: shapes, -1, varargs and shared memory", function()
  local a = cu.arange(12, "i32")
  local v = a:view({ 3, 4 })
  T.eq(v.shape, { 3, 4 })
  T.eq(v:totable(), { { 0, 1, 2, 3 }, { 4, 5, 6, 7 }, { 8, 9, 10, 11 } })
  T.eq(a:view(2, 6).shape, { 2, 6 })
  T.eq(a:view(2, -1).shape, { 2, 6 })
  T.eq(a:view(-1).shape, { 12 })
  T.eq(a:view(2, 3, 2).shape, { 2, 3, 2 })
  v[2][3] = 100
  T.eq(a[7], 100, "the view shares memory")
  a[1] = -1
  T.eq(v[1][1], -1)
  T.eq(a:view({ 12 }):view(4, 3)[4][3], 11)
  T.eq(cu.arange(1, "i32"):view({}).shape, {}, "a one-element array views as 0-d")
  -- views of views that start inside the memory keep their offset
  local rows = cu.arange(12, "i32"):view(3, 4):narrow(1, 2, 2)
  T.eq(rows:view(8):totable(), { 4, 5, 6, 7, 8, 9, 10, 11 })
  T.eq(rows:reshape(4, 2)[4][2], 11)
  T.eq(cu.arange(12, "i32")[-1], 11)
  T.eq(cu.arange(12, "i32"):view(3, 4)[3]:view(2, 2):totable(), { { 8, 9 }, { 10, 11 } })
end)

T.case("view and reshape accept -1 inside a shape table", function()
  local a = cu.arange(12, "i32")
  T.eq(a:view({ 3, -1 }).shape, { 3, 4 })
  T.eq(a:view({ -1, 6 }).shape, { 2, 6 })
  T.eq(a:view({ -1 }).shape, { 12 })
  T.eq(a:reshape({ -1, 3 }).shape, { 4, 3 })
  T.eq(a:view({ 2, 3 , 2}):transpose():reshape({ -1 }).shape, { 12 })
end)

T.case("reshape: a view when contiguous, a copy otherwise", function()
  local vals = S.randints(6, -100, 100)
  local a = cu.array(vals, "i32")
  local r = a:reshape({ 2, 3 })
  T.eq(r:totable(), S.matrix(vals, 2, 3))
  r[1][1] = 5555
  T.eq(a[1], 5555, "reshape of a contiguous array shares memory")
  T.eq(a:reshape(3, 2).shape, { 3, 2 })
  T.eq(a:reshape(3, -1).shape, { 3, 2 })
  local t = r:transpose() -- {3,2}, not contiguous
  local flat = t:reshape(6)
  T.eq(flat.shape, { 6 })
  T.eq(flat:totable(), { 5555, vals[4], vals[2], vals[5], vals[3], vals[6] })
  T.eq(flat.is_contiguous, true)
  flat[1] = 1
  T.eq(a[1], 5555, "reshape of a non-contiguous array copies")
end)

T.case("narrow", function()
  local a = cu.arange(10, "i32")
  T.eq(a:narrow(1, 3, 4):totable(), { 2, 3, 4, 5 })
  T.eq(a:narrow(1, 1, 10):totable(), arange_list(10))
  T.eq(a:narrow(1, 10, 1):totable(), { 9 })
  T.eq(a:narrow(1, 4, 0).size, 0)
  local m = cu.arange(20, "i32"):view(4, 5)
  local n = m:narrow(2, 2, 3)
  T.eq(n.shape, { 4, 3 })
  T.eq(n.strides, { 5, 1 })
  T.eq(n.is_contiguous, false)
  T.eq(n:totable(), { { 1, 2, 3 }, { 6, 7, 8 }, { 11, 12, 13 }, { 16, 17, 18 } })
  local rows = m:narrow(1, 2, 2)
  T.eq(rows.is_contiguous, true)
  T.eq(rows:totable(), { { 5, 6, 7, 8, 9 }, { 10, 11, 12, 13, 14 } })
  n[1][1] = -1
  T.eq(m[1][2], -1, "narrow shares memory")
  n:fill(0)
  T.eq(m:totable(), { { 0, 0, 0, 0, 4 }, { 5, 0, 0, 0, 9 }, { 10, 0, 0, 0, 14 }, { 15, 0, 0, 0, 19 } })
  T.eq(n:narrow(1, 2, 2):narrow(2, 3, 1):totable(), { { 0 }, { 0 } })
end)

T.case("transpose", function()
  local vals = S.randints(6, -100, 100)
  local a = cu.array(S.matrix(vals, 2, 3), "i32")
  local t = a:transpose()
  T.eq(t.shape, { 3, 2 })
  T.eq(t.strides, { 1, 3 })
  T.eq(t.is_contiguous, false)
  T.eq(t:totable(), { { vals[1], vals[4] }, { vals[2], vals[5] }, { vals[3], vals[6] } })
  T.eq(a:transpose(1, 2):totable(), t:totable())
  T.eq(a:transpose(2, 1):totable(), t:totable())
  T.eq(t:transpose():totable(), a:totable())
  t[3][1] = 1000
  T.eq(a[1][3], 1000, "transpose shares memory")
  local b = cu.arange(24, "i32"):view(2, 3, 4)
  local bt = b:transpose()
  T.eq(bt.shape, { 2, 4, 3 })
  T.eq(bt[2][4][3], b[2][3][4])
  local b13 = b:transpose(1, 3)
  T.eq(b13.shape, { 4, 3, 2 })
  T.eq(b13.strides, { 1, 4, 12 })
  for i = 1, 4 do
    for j = 1, 3 do
      for k = 1, 2 do T.eq(b13[i][j][k], b[k][j][i]) end
    end
  end
  T.eq(b:transpose(2, 2):totable(), b:totable())
end)

T.case("contiguous", function()
  local a = cu.arange(6, "i32"):view(2, 3)
  T.truthy(rawequal(a:contiguous(), a), "contiguous() of a contiguous array returns it")
  local t = a:transpose()
  local c = t:contiguous()
  T.truthy(not rawequal(c, t))
  T.eq(c.is_contiguous, true)
  T.eq(c.shape, { 3, 2 })
  T.eq(c.strides, { 2, 1 })
  T.eq(c:totable(), { { 0, 3 }, { 1, 4 }, { 2, 5 } })
  c[1][1] = 99
  T.eq(a[1][1], 0, "contiguous() of a non-contiguous array copies")
  local h = cu.host.array({ { 1, 2 }, { 3, 4 } }, "i32"):transpose():contiguous()
  T.eq(h.location, "pageable")
  T.eq(h:totable(), { { 1, 3 }, { 2, 4 } })
  local s = cu.stream()
  T.eq(t:contiguous({ stream = s }):totable(), { { 0, 3 }, { 1, 4 }, { 2, 5 } })
end)

T.case("clone", function()
  for _, t in ipairs(S.DTYPES) do
    local vals = S.random_values(t, 10)
    local a = cu.array(vals, t)
    local c = a:clone()
    T.eq(c.dtype, t)
    T.eq(c.shape, a.shape)
    S.same_list(c:totable(), a:totable(), t)
  end
  local a = cu.arange(6, "i32"):view(2, 3)
  local c = a:clone()
  c[1][1] = 50
  T.eq(a[1][1], 0, "a clone has its own memory")
  T.eq(a:transpose():clone():totable(), { { 0, 3 }, { 1, 4 }, { 2, 5 } })
  local p = cu.host.array({ 1, 2 }, "i32", { pinned = true })
  T.eq(p:clone().location, "pinned")
  T.eq(cu.host.array({ 1, 2 }):clone().location, "pageable")
  T.eq(a:clone({ stream = cu.stream() }):totable(), { { 0, 1, 2 }, { 3, 4, 5 } })
end)

T.case("fill", function()
  local a = cu.zeros({ 2, 3 }, "i32")
  T.truthy(rawequal(a:fill(7), a), "fill returns the array")
  T.eq(a:totable(), { { 7, 7, 7 }, { 7, 7, 7 } })
  a:transpose()[2]:fill(-1) -- column 2
  T.eq(a:totable(), { { 7, -1, 7 }, { 7, -1, 7 } })
  local s = cu.stream()
  a:fill(3, { stream = s })
  for i = 1, 2 do
    for j = 1, 3 do T.eq(a[i][j], 3, "after fill on a stream") end
  end
  for _, t in ipairs(S.DTYPES) do
    local vals = S.random_values(t, 3)
    local v = vals[#vals]
    local b = cu.empty(5, t):fill(v)
    for _, x in ipairs(b:totable()) do T.truthy(S.same(x, S.stored(v, t)), t .. ": " .. S.show(x)) end
    local h = cu.host.empty(3, t):fill(v)
    for _, x in ipairs(h:totable()) do T.truthy(S.same(x, S.stored(v, t)), t .. " host: " .. S.show(x)) end
  end
end)

T.case("item", function()
  local v = math.random() * 100
  T.eq(cu.array({ v }, "f64"):item(), v)
  T.eq(cu.array({ { v } }, "f64"):item(), v, "one element of any ndim")
  T.eq(math.type(cu.array({ 3 }, "i16"):item()), "integer")
  T.eq(cu.array({ 3 }, "u32"):item(), 3)
  T.eq(cu.array({ false }):item(), false)
  local z = cu.array({ cu.complex(1, 2) }, "c128"):item()
  T.eq({ z.re, z.im }, { 1.0, 2.0 })
  T.eq(cu.arange(10, "i32"):narrow(1, 6, 1):item(), 5, "item of a view")
  T.eq(cu.arange(10, "i32")[7], 6)
  T.eq(math.type(cu.array(2.0, "f32"):item()), "float")
end)

T.case("totable", function()
  local vals = S.randints(24, -1000, 1000)
  local a = cu.array(vals, "i64"):view(2, 3, 4)
  local t = a:totable()
  T.eq(#t, 2)
  T.eq(#t[1], 3)
  T.eq(#t[1][1], 4)
  T.eq(S.flatten(t), vals)
  T.eq(math.type(t[2][3][4]), "integer")
  T.eq(a:transpose(1, 3):totable()[4][3][2], vals[24])
  local b = cu.array({ { true, false }, { false, true } }):totable()
  T.eq(b, { { true, false }, { false, true } })
  T.eq(type(b[1][1]), "boolean")
  T.eq(math.type(cu.array({ 1 }, "f16"):totable()[1]), "float")
end)

T.case("integer extremes survive a round trip", function()
  T.eq(cu.array({ math.maxinteger, math.mininteger }, "i64"):totable(), { math.maxinteger, math.mininteger })
  T.eq(cu.array({ 4294967295, 0 }, "u32"):totable(), { 4294967295, 0 })
  T.eq(cu.array({ 2147483647, -2147483648 }, "i32"):totable(), { 2147483647, -2147483648 })
  T.eq(cu.array({ 127, -128 }, "i8"):totable(), { 127, -128 })
  T.eq(cu.array({ 32767, -32768 }, "i16"):totable(), { 32767, -32768 })
  T.eq(cu.array({ 255, 0 }, "u8"):totable(), { 255, 0 })
  T.eq(cu.array({ 2.0, -3.0 }, "i32"):totable(), { 2, -3 }, "integral floats are accepted")
end)

os.exit(T.run())
