-- Matrix products: cu.matmul (numpy semantics: batches and broadcasting, 1-D operands, ta/tb,
-- views used in place or copied, alpha/beta/out, every float and complex dtype) and cu.dot, all
-- against an f64 reference computed in Lua; and every error. Tolerances per dtype are stated in
-- linalg_support.lua.
package.path = (arg and arg[0] and arg[0]:match("^(.*)[/\\]") or "tests/lua") .. "/?.lua;" .. package.path
local T = require "cu.testing"
local S = require "support"
local L = require "linalg_support"

local R = L.random_array

T.case("2-D products of every dtype match the f64 reference", function()
  for _, t in ipairs(L.FLOATS) do
    for _, dims in ipairs({ { 7, 5, 6 }, { 1, 9, 1 }, { 16, 33, 8 }, { 3, 1, 4 } }) do
      local M, K, N = dims[1], dims[2], dims[3]
      local a, b = R({ M, K }, t), R({ K, N }, t)
      local c = cu.matmul(a, b)
      T.eq(c.dtype, t)
      T.eq(c.location, "device")
      L.check(c, a, b, string.format("%s %dx%d @ %dx%d", t, M, K, K, N))
    end
  end
end)

T.case("batched and broadcast batches", function()
  local cases = {
    { { 3, 4, 5 }, { 3, 5, 2 } },
    { { 2, 1, 4, 5 }, { 3, 5, 6 } }, -- {2,3,4,6}
    { { 4, 5 }, { 3, 5, 2 } },       -- a 2-D operand broadcasts over b's batch
    { { 3, 4, 5 }, { 5, 2 } },
    { { 2, 3, 1, 4, 5 }, { 1, 3, 2, 5, 3 } },
    { { 1, 4, 5 }, { 6, 5, 2 } },
    { { 6, 1, 4, 5 }, { 1, 7, 5, 2 } },
    { { 0, 4, 5 }, { 5, 2 } },
  }
  for _, t in ipairs({ "f32", "f64", "c64", "bf16" }) do
    for _, c in ipairs(cases) do
      local a, b = R(c[1], t), R(c[2], t)
      L.check(cu.matmul(a, b), a, b, t .. " " .. T.describe(c[1]) .. " @ " .. T.describe(c[2]))
    end
  end
end)

T.case("1-D operands as numpy: the vector's dimension is removed", function()
  for _, t in ipairs({ "f32", "f64", "f16", "c128" }) do
    local v5, v4 = R({ 5 }, t), R({ 4 }, t)
    local m = R({ 4, 5 }, t)
    local r = cu.matmul(m, v5)
    T.eq(r.shape, { 4 })
    L.check(r, m, v5, t .. " matrix @ vector")
    L.check(cu.matmul(v4, m), v4, m, t .. " vector @ matrix")
    local s = cu.matmul(v5, R({ 5 }, t))
    T.eq(s.shape, {})
    local batch = R({ 3, 4, 5 }, t)
    L.check(cu.matmul(batch, v5), batch, v5, t .. " batch @ vector")
    local bb = R({ 2, 4, 6 }, t)
    L.check(cu.matmul(v4, bb), v4, bb, t .. " vector @ batch")
  end
  local x, y = R({ 6 }, "f64"), R({ 6 }, "f64")
  L.check(cu.matmul(x, y), x, y, "vector @ vector")
end)

T.case("ta/tb transpose the last two dimensions", function()
  for _, t in ipairs({ "f32", "f64", "c64", "f16" }) do
    local a, b = R({ 5, 4 }, t), R({ 6, 5 }, t)
    L.check(cu.matmul(a, b, { ta = true, tb = true }), a:transpose(), b:transpose(), t .. " ta tb")
    local a2 = R({ 4, 5 }, t)
    L.check(cu.matmul(a2, b, { tb = true }), a2, b:transpose(), t .. " tb")
    local ab = R({ 3, 5, 4 }, t)
    local bb = R({ 3, 5, 2 }, t)
    L.check(cu.matmul(ab, bb, { ta = true }), ab:transpose(2, 3), bb, t .. " batched ta")
    -- ta on a vector changes nothing
    local v = R({ 5 }, t)
    L.check(cu.matmul(v, bb, { ta = true }), v, bb, t .. " ta on a vector")
  end
  -- complex: a plain transpose, no conjugation
  local z = cu.array({ { cu.complex(1, 2), cu.complex(3, -1) } }, "c128") -- {1,2}
  local r = cu.matmul(z, z, { ta = true }):totable()                     -- {2,1} @ {1,2}
  T.eq({ r[1][1].re, r[1][1].im }, { -3.0, 4.0 })
  T.eq({ r[2][1].re, r[2][1].im }, { 5.0, 5.0 })
end)

T.case("views: transposed, narrowed and batch-transposed operands", function()
  for _, t in ipairs({ "f32", "f64", "c128", "bf16" }) do
    local base = R({ 6, 9 }, t)
    local a = base:narrow(2, 3, 5)         -- {6,5}, leading dimension 9
    local b = R({ 7, 5 }, t):transpose()   -- {5,7}, column-major
    L.check(cu.matmul(a, b), a, b, t .. " narrowed @ transposed")
    L.check(cu.matmul(b:transpose(), a:transpose()), b:transpose(), a:transpose(), t .. " both views")
    local b3 = R({ 4, 3, 5 }, t):transpose(1, 2) -- {3,4,5}: batch stride 5, row stride 15
    local m = R({ 5, 2 }, t)
    L.check(cu.matmul(b3, m), b3, m, t .. " batch-transposed")
    -- last two dimensions neither row- nor column-major: copied first
    local odd = R({ 5, 4, 3 }, t):transpose(1, 3) -- {3,4,5} strides {1,3,12}
    L.check(cu.matmul(odd, m), odd, m, t .. " copied operand")
    local rows = R({ 2, 6, 5 }, t):narrow(2, 2, 4)      -- {2,4,5}, batch stride 30
    local other = R({ 2, 3, 5 }, t):transpose(2, 3)    -- {2,5,3}, column-major
    L.check(cu.matmul(rows, other), rows, other, t .. " narrowed batch @ transposed batch")
    -- a row of a matrix (stride 1 view with offset) and a column (stride > 1) as vectors
    local mat = R({ 5, 5 }, t)
    local row, col = mat[3], mat:transpose()[2]
    L.check(cu.matmul(row, mat), row, mat, t .. " row vector view")
    L.check(cu.matmul(mat, col), mat, col, t .. " column vector view")
  end
end)

T.case("alpha, beta and out", function()
  for _, t in ipairs(L.FLOATS) do
    local a, b = R({ 4, 3 }, t), R({ 3, 5 }, t)
    local out = R({ 4, 5 }, t)
    local old = L.values(out)
    local r = cu.matmul(a, b, { out = out, alpha = 1.5, beta = -0.5 })
    T.eq(rawequal(r, out), true, "returns out")
    L.check(out, a, b, t .. " alpha beta", { alpha = { 1.5, 0 }, beta = { -0.5, 0 }, out_values = old })
    cu.matmul(a, b, { out = out })
    L.check(out, a, b, t .. " out without beta")
    cu.matmul(a, b, { out = out, alpha = 2 })
    L.check(out, a, b, t .. " alpha", { alpha = { 2, 0 } })
    -- beta = 0 does not read out (NaN stays out of the result)
    out:fill(0 / 0)
    cu.matmul(a, b, { out = out, beta = 0 })
    L.check(out, a, b, t .. " beta 0 over NaN")
  end
  for _, t in ipairs({ "c64", "c128" }) do
    local a, b = R({ 2, 3, 3 }, t), R({ 3, 4 }, t)
    local out = R({ 2, 3, 4 }, t)
    local old = L.values(out)
    cu.matmul(a, b, { out = out, alpha = cu.complex(0.5, -2), beta = cu.complex(0, 1) })
    L.check(out, a, b, t .. " complex alpha beta",
      { alpha = { 0.5, -2 }, beta = { 0, 1 }, out_values = old })
  end
  -- K = 0: alpha a b is zero; out = beta out
  local out = cu.full({ 2, 3 }, 2, "f64")
  cu.matmul(cu.ones({ 2, 0 }, "f64"), cu.ones({ 0, 3 }, "f64"), { out = out, beta = 3 })
  T.eq(out:totable(), { { 6, 6, 6 }, { 6, 6, 6 } })
  T.eq(cu.matmul(cu.ones({ 2, 0 }), cu.ones({ 0, 3 })):totable(), { { 0, 0, 0 }, { 0, 0, 0 } })
  T.eq(cu.matmul(cu.ones({ 0, 4 }), cu.ones({ 4, 3 })).shape, { 0, 3 })
end)

T.case("tf32=true on f32 and the stream option", function()
  local a, b = R({ 8, 16 }, "f32"), R({ 16, 4 }, "f32")
  L.check(cu.matmul(a, b, { tf32 = true }), a, b, "tf32", { tol = 2e-3 })
  local s = cu.stream()
  local c = cu.matmul(a, b, { stream = s })
  s:sync()
  L.check(c, a, b, "on a stream")
  L.check(a:matmul(b), a, b, "method")
end)

-- dot ----------------------------------------------------------------------------------------

T.case("dot: every float and complex dtype, no conjugation, 0-d device result", function()
  for _, t in ipairs(L.FLOATS) do
    for _, n in ipairs({ 1, 7, 100, 1000 }) do
      local x, y = R({ n }, t), R({ n }, t)
      local d = cu.dot(x, y)
      T.eq(d.shape, {})
      T.eq(d.dtype, t)
      T.eq(d.location, "device")
      L.check(d, x, y, t .. " dot " .. n)
      L.check(x:dot(y), x, y, t .. " method")
    end
  end
  local z = cu.array({ cu.complex(1, 2), cu.complex(0, 1) }, "c64")
  local d = cu.dot(z, z):item()
  T.eq({ d.re, d.im }, { -4.0, 4.0 }) -- (1+2i)^2 + i^2 = -3+4i - 1
end)

T.case("dot: strided views, out=, empty vectors, streams", function()
  for _, t in ipairs({ "f32", "f64", "c128", "f16", "i32" }) do
    local m = t == "i32" and cu.array(S.matrix(S.randints(30, -9, 9), 5, 6), "i32") or R({ 5, 6 }, t)
    local col, row = m:transpose()[2], m[4]:narrow(1, 2, 5)
    if t == "i32" then
      local want = 0
      local cv, rv = col:totable(), row:totable()
      for i = 1, 5 do want = want + cv[i] * rv[i] end
      T.eq(cu.dot(col, row):item(), want)
    else
      L.check(cu.dot(col, row), col, row, t .. " strided")
    end
    local out = cu.zeros({ 3 }, t)
    local r = cu.dot(col, row, { out = out:narrow(1, 2, 1) })
    T.eq(r.shape, { 1 })
    T.truthy(S.same(out:totable()[1], S.stored(0, t)), t .. " out before the element")
    T.truthy(S.same(out:totable()[3], S.stored(0, t)), t .. " out after the element")
    T.truthy(S.same(out:totable()[2], cu.dot(col, row):item()), t .. " out")
    T.truthy(S.same(cu.dot(cu.zeros(0, t), cu.zeros(0, t)):item(), S.stored(0, t)), t .. " empty")
  end
  local s = cu.stream()
  local x = R({ 50 }, "f64")
  local d = cu.dot(x, x, { stream = s })
  s:sync()
  L.check(d, x, x, "stream")
end)

T.case("dot: integers sum exactly and wrap to the dtype", function()
  local vals = S.randints(200, -100, 100)
  local vals2 = S.randints(200, -100, 100)
  local want = 0
  for i = 1, 200 do want = want + vals[i] * vals2[i] end
  for _, t in ipairs({ "i16", "i32", "i64" }) do
    T.eq(cu.dot(cu.array(vals, t), cu.array(vals2, t)):item(), S.wrap(want, S.INFO[t].bits, true), t)
  end
  T.eq(cu.dot(cu.array({ 100, 100, 100 }, "i8"), cu.array({ 2, 1, 3 }, "i8")):item(), S.wrap(600, 8, true))
  T.eq(cu.dot(cu.array({ 200, 100 }, "u8"), cu.array({ 2, 1 }, "u8")):item(), 500 % 256)
  T.eq(cu.dot(cu.array({ 4000000000 }, "u32"), cu.array({ 3 }, "u32")):item(), 12000000000 % (1 << 32))
  T.eq(cu.dot(cu.array({ 1 << 62, 1 << 62 }, "i64"), cu.array({ 2, 2 }, "i64")):item(), 0)
  local big = {}
  for i = 1, 5000 do big[i] = (i % 7) - 3 end
  local w = 0
  for i = 1, 5000 do w = w + big[i] * big[i] end
  T.eq(cu.dot(cu.array(big, "i32"), cu.array(big, "i32")):item(), w)
end)

-- integer, bool and mixed dtypes ----------------------------------------------------------------

T.case("integer and bool products wrap in the result dtype as numpy does (naive Lua reference)", function()
  for _, t in ipairs({ "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "bool" }) do
    for _, dims in ipairs({ { 7, 5, 6 }, { 1, 9, 1 }, { 70, 33, 67 }, { 3, 1, 4 }, { 2, 0, 3 } }) do
      local M, K, N = dims[1], dims[2], dims[3]
      local a, b = L.random_ints({ M, K }, t), L.random_ints({ K, N }, t)
      local c = cu.matmul(a, b)
      T.eq(c.dtype, t)
      L.check_int(c, a, b, string.format("%s %dx%d @ %dx%d", t, M, K, K, N))
    end
  end
  -- named wraparounds (numpy: [[100, 100]] @ [[2], [3]] in i8 is -12)
  T.eq(cu.matmul(cu.array({ { 100, 100 } }, "i8"), cu.array({ { 2 }, { 3 } }, "i8")):totable(), { { -12 } })
  T.eq(cu.matmul(cu.array({ 4000000000 }, "u32"), cu.array({ 3 }, "u32")):item(), 12000000000 % (1 << 32))
  T.eq(cu.matmul(cu.array({ { true, false } }, "bool"), cu.array({ { true }, { true } }, "bool")):totable(),
    { { true } })
  T.eq(cu.matmul(cu.array({ { false, true } }, "bool"), cu.array({ { true }, { false } }, "bool")):totable(),
    { { false } })
end)

T.case("integer products: batches, broadcasts, 1-D operands, ta/tb, views", function()
  local cases = {
    { { 3, 4, 5 }, { 3, 5, 2 } },
    { { 2, 1, 4, 5 }, { 3, 5, 6 } },
    { { 4, 5 }, { 3, 5, 2 } },
    { { 1, 4, 5 }, { 6, 5, 2 } },
    { { 5 }, { 3, 5, 2 } },
    { { 3, 4, 5 }, { 5 } },
    { { 5 }, { 5 } },
  }
  for _, t in ipairs({ "i8", "i32", "i64", "u32", "u64", "bool" }) do
    for _, c in ipairs(cases) do
      local a, b = L.random_ints(c[1], t), L.random_ints(c[2], t)
      L.check_int(cu.matmul(a, b), a, b, t .. " " .. T.describe(c[1]) .. " @ " .. T.describe(c[2]))
    end
    local a, b = L.random_ints({ 6, 5 }, t), L.random_ints({ 7, 6 }, t)
    -- ta/tb and transposed views are the same products
    local want = cu.matmul(a:transpose():contiguous(), b:transpose():contiguous())
    L.check_int(cu.matmul(a, b, { ta = true, tb = true }), a:transpose(), b:transpose(), t .. " ta tb")
    T.eq(cu.matmul(a:transpose(), b:transpose()):totable(), want:totable(), t .. " views")
    -- a narrowed (non-contiguous) operand is copied first
    local wide = L.random_ints({ 5, 9 }, t)
    local narrow = wide:narrow(2, 2, 6)
    L.check_int(cu.matmul(narrow, b:transpose()), narrow, b:transpose(), t .. " narrowed")
    local batch = L.random_ints({ 3, 7, 5 }, t):transpose(2, 3)
    L.check_int(cu.matmul(a, batch), a, batch, t .. " transposed batch")
  end
end)

T.case("integer alpha, beta and out= (same_kind: wider, narrower, unsigned into signed)", function()
  for _, t in ipairs({ "i8", "i16", "i32", "i64", "u8", "u32" }) do
    local a, b = L.random_ints({ 4, 6 }, t), L.random_ints({ 6, 5 }, t)
    local signed = L.INTEGERS[t][2]
    local alpha, beta = signed and -3 or 3, signed and -7 or 7
    local out = L.random_ints({ 4, 5 }, t)
    local old = L.int_values(out)
    local r = cu.matmul(a, b, { out = out, alpha = alpha, beta = beta })
    T.truthy(rawequal(r, out), t .. " returns out")
    L.check_int(out, a, b, t .. " alpha beta", { alpha = alpha, beta = beta, out_values = old })
    L.check_int(cu.matmul(a, b, { alpha = 2.0 }), a, b, t .. " alpha 2.0", { alpha = 2 })
  end
  -- out= of another dtype of the same kind gets the result converted (numpy's same_kind casting)
  local a, b = L.random_ints({ 3, 4 }, "i32"), L.random_ints({ 4, 2 }, "i32")
  local want = cu.matmul(a, b)
  local o16 = cu.zeros({ 3, 2 }, "i16")
  cu.matmul(a, b, { out = o16 })
  local w = L.int_values(want)
  for i, v in ipairs(L.int_values(o16)) do T.eq(v, S.wrap(w[i], 16, true), "i32 result into i16") end
  local o64 = cu.zeros({ 3, 2 }, "i64")
  cu.matmul(a, b, { out = o64 })
  T.eq(L.int_values(o64), w, "i32 result into i64")
  local of = cu.zeros({ 3, 2 }, "f64")
  cu.matmul(a, b, { out = of })
  for i, v in ipairs(of:totable()) do
    for j, x in ipairs(v) do T.eq(x, w[(i - 1) * 2 + j] + 0.0, "i32 result into f64") end
  end
  local ua, ub = L.random_ints({ 2, 3 }, "u8"), L.random_ints({ 3, 2 }, "u8")
  local oi = cu.zeros({ 2, 2 }, "i8")
  cu.matmul(ua, ub, { out = oi })
  local uw = L.int_reference(ua, ub, "u8")
  for i, v in ipairs(L.int_values(oi)) do T.eq(v, S.wrap(uw[i], 8, true), "u8 result into i8") end
  -- beta with an out= of another dtype reads out converted to the result dtype
  local ob = cu.array({ { 1, 2 }, { 3, 4 }, { 5, 6 } }, "i64")
  cu.matmul(a, b, { out = ob, beta = 10 })
  for i, v in ipairs(L.int_values(ob)) do T.eq(v, S.wrap(w[i] + 10 * i, 32, true), "beta into i64") end
  -- float out= of an f32 product: f64
  local fa, fb = R({ 3, 4 }, "f32"), R({ 4, 2 }, "f32")
  local fo = cu.zeros({ 3, 2 }, "f64")
  cu.matmul(fa, fb, { out = fo })
  T.eq(fo:totable(), cu.matmul(fa, fb):astype("f64"):totable())
end)

T.case("mixed dtypes promote as the elementwise operations do", function()
  local cases = {
    { "i8", "u8", "i16" }, { "bool", "i8", "i8" }, { "u8", "u32", "u32" }, { "i8", "u32", "i64" },
    { "i32", "f32", "f64" }, { "i8", "f16", "f16" }, { "f16", "bf16", "f32" }, { "f32", "f64", "f64" },
    { "i16", "c64", "c64" }, { "f64", "c64", "c128" }, { "bool", "f32", "f32" }, { "u8", "bf16", "bf16" },
  }
  for _, c in ipairs(cases) do
    local ta, tb, want = c[1], c[2], c[3]
    local ints = (L.INTEGERS[ta] or ta == "bool") and (L.INTEGERS[tb] or tb == "bool")
    local small = not ints
    local function operand(shape, t)
      if L.INTEGERS[t] or t == "bool" then return L.random_ints(shape, t, small) end
      return R(shape, t)
    end
    local a, b = operand({ 4, 6 }, ta), operand({ 2, 6, 3 }, tb)
    local r = cu.matmul(a, b)
    T.eq(r.dtype, want, ta .. " @ " .. tb)
    T.eq(cu.matmul(b:transpose(2, 3), a:transpose(), { ta = false }).dtype, want, tb .. " @ " .. ta)
    local what = ta .. " @ " .. tb .. " -> " .. want
    if L.INTEGERS[want] or want == "bool" then
      L.check_int(r, a:astype(want), b:astype(want), what)
    else
      -- the operands are converted to the result dtype first: the reference of the converted ones
      L.check(r, a:astype(want), b:astype(want), what)
    end
    T.eq(r:totable(), cu.matmul(a:astype(want), b:astype(want)):totable(), what .. " = astype first")
  end
end)

-- errors -------------------------------------------------------------------------------------

T.case("matmul errors", function()
  local a, b = cu.ones({ 2, 3 }), cu.ones({ 3, 4 })
  local ia, ib = a:astype("i32"), b:astype("i32")
  S.raises(function() cu.matmul(ia, ib, { alpha = 2.5 }) end, "alpha must be an integer for a i32 matmul, not 2.5")
  S.raises(function() cu.matmul(ia, ib, { alpha = 0 / 0 }) end, "alpha must be an integer")
  S.raises(function() cu.matmul(a:astype("u8"), b:astype("u8"), { alpha = 300 }) end,
    "alpha 300 is out of range for a u8 matmul")
  S.raises(function() cu.matmul(a:astype("u8"), b:astype("u8"), { alpha = -1 }) end, "out of range")
  S.raises(function() cu.matmul(ia, ib, { out = cu.zeros({ 2, 4 }, "i32"), beta = 1e10 }) end,
    "beta 10000000000 is out of range for a i32 matmul")
  S.raises(function() cu.matmul(ia, ib, { alpha = cu.complex(1, 0) }) end, "alpha is complex")
  S.raises(function() cu.matmul(a:astype("bool"), b:astype("bool"), { alpha = 2 }) end,
    "alpha and beta are not defined for a bool matmul")
  S.raises(function()
    cu.matmul(a:astype("bool"), b:astype("bool"), { out = cu.zeros({ 2, 4 }, "bool"), beta = 1 })
  end, "alpha and beta are not defined for a bool matmul")
  S.raises(function() cu.matmul(a, b, { alpha = 1e300 }) end,
    "alpha 1e+300 is beyond the f32 range of a f32 matmul's scale factors")
  S.raises(function() cu.matmul(a, cu.ones({ 4, 3 })) end,
    { "shapes do not match", "a {2,3} has 3 columns", "b {4,3} has 4 rows" })
  S.raises(function() cu.matmul(a, b, { ta = true }) end, { "a {2,3} (transposed) has 2 columns" })
  S.raises(function() cu.matmul(cu.ones({ 2, 2, 3 }), cu.ones({ 3, 3, 4 })) end,
    { "batch dimensions do not broadcast", "{2,2,3}", "{3,3,4}" })
  S.raises(function() cu.matmul(cu.ones({}), b) end, "at least one dimension")
  S.raises(function() cu.matmul(cu.ones(3), cu.ones(4)) end, "shapes do not match")
  S.raises(function() cu.matmul(a, b, { out = cu.zeros({ 2, 5 }) }) end,
    "out has shape {2,5} but the result has shape {2,4}")
  S.raises(function() cu.matmul(a, b, { out = cu.zeros({ 2, 4 }, "i32") }) end,
    "out= has dtype i32, cannot hold the f32 result under numpy's same_kind rule")
  S.raises(function() cu.matmul(ia, ib, { out = cu.zeros({ 2, 4 }, "u8") }) end,
    "out= has dtype u8, cannot hold the i32 result")
  S.raises(function() cu.matmul(a:astype("c64"), b, { out = cu.zeros({ 2, 4 }, "f64") }) end,
    "out= has dtype f64, cannot hold the c64 result")
  S.raises(function() cu.matmul(a, b, { out = cu.zeros({ 4, 2 }):transpose() }) end,
    "out must be contiguous")
  local big = cu.ones({ 3, 3 })
  S.raises(function() cu.matmul(big, big, { out = big }) end, "out must not overlap")
  S.raises(function() cu.matmul(a, b, { beta = 1 }) end, "beta needs out=")
  S.raises(function() cu.matmul(a, b, { alpha = cu.complex(1, 1) }) end,
    "alpha is complex (1+1j) but the operands are f32")
  S.raises(function() cu.matmul(a, b, { alpha = true }) end, "(option 'alpha': number or cu.complex expected")
  S.raises(function() cu.matmul(a, b, { alpha = "2" }) end, "(option 'alpha': number or cu.complex expected")
  S.raises(function() cu.matmul(a:astype("f64"), b:astype("f64"), { tf32 = true }) end,
    "tf32=true needs f32 operands, not f64")
  S.raises(function() cu.matmul(a, b, { ta = 1 }) end, "bad argument #3 to 'matmul' (option 'ta': boolean expected")
  S.raises(function() cu.matmul(a, b, { trans = true }) end, "unknown option 'trans'")
  S.raises(function() cu.matmul(a, b, {}, 4) end, "bad argument #4 to 'matmul' (no value expected, got number)")
  S.raises(function() cu.matmul(a:to_host(), b) end,
    { "device arrays expected", "pageable host array", "to_device()" })
  S.raises(function() cu.matmul(a, b:to_host({ pinned = true })) end, "pinned host array")
  S.raises(function() cu.matmul(a, b, { out = cu.host.zeros({ 2, 4 }) }) end, "out is a pageable")
  S.raises(function() cu.matmul(a, 3) end, "cu.Array expected")
  local freed = cu.ones({ 3, 4 })
  freed:free()
  S.raises_released(function() cu.matmul(a, freed) end)
end)

T.case("dot errors", function()
  local x = cu.ones(3)
  S.raises(function() cu.dot(x, cu.ones(3, "f64")) end,
    "dot: operands of one dtype expected (f32 and f64); use astype")
  S.raises(function() cu.dot(x, cu.ones(4)) end, "dot: vectors of one length expected, got shapes {3} and {4}")
  S.raises(function() cu.dot(cu.ones({ 3, 1 }), x) end, { "dot: 1-D arrays expected", "use matmul" })
  S.raises(function() cu.dot(cu.ones({}), cu.ones({})) end, "dot: 1-D arrays expected")
  S.raises(function() cu.dot(cu.ones(3, "bool"), cu.ones(3, "bool")) end, "bool")
  S.raises(function() cu.dot(x, x, { out = cu.zeros(2) }) end, "out must have one element")
  S.raises(function() cu.dot(x, x, { out = cu.zeros(1, "f64") }) end, "out has dtype f64")
  S.raises(function() cu.dot(x, x, { out = x:narrow(1, 1, 1) }) end, "out must not overlap")
  S.raises(function() cu.dot(x:to_host(), x) end, "to_device()")
  S.raises(function() cu.dot(x, x, { alpha = 2 }) end, "unknown option 'alpha'")
end)

os.exit(T.run())
