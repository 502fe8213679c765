-- dtype conversions (astype and converting copies between every pair of dtypes) and the value
-- rules of writes (exact integers and bools, rounding floats).
package.path = (arg and arg[0] and arg[0]:match("^(.*)[/\\]") or "tests/lua") .. "/?.lua;" .. package.path
local T = require "cu.testing"
local S = require "support"

-- A source array of dtype `t` with fresh random values and the values read back from it.
local function source(t, n)
  local vals = S.random_values(t, n)
  local a = cu.array(vals, t)
  local read = a:totable()
  local expect = {}
  for i, v in ipairs(vals) do expect[i] = S.stored(v, t) end
  S.same_list(read, expect, "source " .. t)
  return a, read
end

local function expected(read, from, to)
  local e = {}
  for i, v in ipairs(read) do e[i] = S.convert(v, from, to) end
  return e
end

for _, from in ipairs(S.DTYPES) do
  T.case("astype from " .. from .. " to every dtype", function()
    local a, read = source(from, 40)
    for _, to in ipairs(S.DTYPES) do
      local b = a:astype(to)
      T.eq(b.dtype, to)
      T.eq(b.shape, a.shape)
      T.eq(b.location, "device")
      S.same_list(b:totable(), expected(read, from, to), from .. " -> " .. to)
    end
  end)
end

T.case("astype of host arrays, views and 2-D arrays", function()
  local vals = S.randoms(12, -300, 300)
  local h = cu.host.array(S.matrix(vals, 3, 4), "f64", { pinned = true })
  local r = h:astype("i16")
  T.eq(r.location, "pinned")
  T.eq(r.dtype, "i16")
  local flat = S.flatten(r:totable())
  for i, v in ipairs(vals) do T.eq(flat[i], S.convert(v, "f64", "i16")) end
  local d = cu.array(S.matrix(vals, 3, 4), "f64")
  local t = d:transpose():astype("f32") -- {4,3}
  T.eq(t.shape, { 4, 3 })
  T.eq(t[2][3], S.f32(vals[(3 - 1) * 4 + 2]))
  local n = d:narrow(2, 2, 2):astype("u8")
  T.eq(n.shape, { 3, 2 })
  T.eq(n[3][2], S.convert(vals[3 * 4 - 1], "f64", "u8"))
  T.eq(cu.host.array({ 1.5 }):astype("i32").location, "pageable")
  local s = cu.stream()
  T.eq(d:astype("i32", { stream = s })[1][1], S.convert(vals[1], "f64", "i32"))
end)

T.case("float to int: truncation toward zero, NaN to 0, saturation", function()
  local a = cu.array({ 1.9, -1.9, 0.5, -0.5, 0 / 0, 1e30, -1e30, math.huge, -math.huge, 127.99, -128.99 }, "f64")
  T.eq(a:astype("i8"):totable(), { 1, -1, 0, 0, 0, 127, -128, 127, -128, 127, -128 })
  T.eq(a:astype("u8"):totable(), { 1, 0, 0, 0, 0, 255, 0, 255, 0, 127, 0 })
  T.eq(a:astype("i32"):totable(), { 1, -1, 0, 0, 0, 2147483647, -2147483648, 2147483647, -2147483648, 127, -128 })
  T.eq(a:astype("u32"):totable(), { 1, 0, 0, 0, 0, 4294967295, 0, 4294967295, 0, 127, 0 })
  T.eq(a:astype("i64"):totable(), { 1, -1, 0, 0, 0, math.maxinteger, math.mininteger, math.maxinteger,
    math.mininteger, 127, -128 })
  T.eq(cu.array({ 70000.7, -70000.7 }, "f32"):astype("i16"):totable(), { 32767, -32768 })
end)

T.case("int to int wraps", function()
  local a = cu.array({ 300, -1, 256, 128, -129, 65535, 2 ^ 31 - 1 }, "i64")
  T.eq(a:astype("u8"):totable(), { 44, 255, 0, 128, 127, 255, 255 })
  T.eq(a:astype("i8"):totable(), { 44, -1, 0, -128, 127, -1, -1 })
  T.eq(a:astype("i16"):totable(), { 300, -1, 256, 128, -129, -1, -1 })
  T.eq(cu.array({ 4294967295, 2147483648 }, "u32"):astype("i32"):totable(), { -1, -2147483648 })
  T.eq(cu.array({ -1, -2147483648 }, "i32"):astype("u32"):totable(), { 4294967295, 2147483648 })
  T.eq(cu.array({ math.maxinteger, math.mininteger }, "i64"):astype("i32"):totable(), { -1, 0 })
  T.eq(cu.array({ -1 }, "i8"):astype("i64"):totable(), { -1 }, "widening keeps the sign")
  T.eq(cu.array({ 255 }, "u8"):astype("i64"):totable(), { 255 })
end)

T.case("complex to real takes the real part; real to complex has im = 0", function()
  local z = cu.array({ cu.complex(2.75, -9), cu.complex(-1.5, 4), cu.complex(0, 3) }, "c128")
  T.eq(z:astype("f64"):totable(), { 2.75, -1.5, 0.0 })
  T.eq(z:astype("i32"):totable(), { 2, -1, 0 })
  T.eq(z:astype("bool"):totable(), { true, true, true }, "a complex is true when either part is not 0")
  T.eq(cu.array({ cu.complex(0, 0) }, "c64"):astype("bool"):totable(), { false })
  local r = cu.array({ 1.5, -2 }, "f32"):astype("c64"):totable()
  T.eq({ r[1].re, r[1].im, r[2].re, r[2].im }, { 1.5, 0.0, -2.0, 0.0 })
  local i = cu.array({ 7 }, "i32"):astype("c128"):item()
  T.eq({ i.re, i.im }, { 7.0, 0.0 })
  local b = cu.array({ true, false }):astype("c64"):totable()
  T.eq({ b[1].re, b[1].im, b[2].re }, { 1.0, 0.0, 0.0 })
end)

T.case("anything to bool is x ~= 0", function()
  T.eq(cu.array({ 0, 0.25, -3, 0 / 0, -0.0 }, "f64"):astype("bool"):totable(), { false, true, true, true, false })
  T.eq(cu.array({ 0, 1, -1, 200 }, "i16"):astype("bool"):totable(), { false, true, true, true })
  T.eq(cu.array({ 0, 255 }, "u8"):astype("bool"):totable(), { false, true })
  T.eq(cu.array({ true, false }):astype("i32"):totable(), { 1, 0 })
  T.eq(cu.array({ true, false }):astype("f16"):totable(), { 1.0, 0.0 })
end)

T.case("f16 and bf16 round to nearest even", function()
  -- f16 has 11 significant bits: between 2048 and 4096 the spacing is 2.
  T.eq(cu.array({ 2049, 2051, 2050, 2053 }, "f16"):totable(), { 2048.0, 2052.0, 2050.0, 2052.0 })
  T.eq(cu.array({ 65504, 65519, 65520, 1e6, -1e6 }, "f16"):totable(),
    { 65504.0, 65504.0, math.huge, math.huge, -math.huge })
  -- smallest subnormal 2^-24, and halfway below it
  T.eq(cu.array({ 2 ^ -24, 2 ^ -25, 3 * 2 ^ -25 }, "f16"):totable(), { 2 ^ -24, 0.0, 2 ^ -23 })
  -- bf16 has 8 significant bits: between 256 and 512 the spacing is 2.
  T.eq(cu.array({ 257, 259, 258, 261 }, "bf16"):totable(), { 256.0, 260.0, 258.0, 260.0 })
  T.eq(cu.array({ 1 + 2 ^ -8, 1 + 3 * 2 ^ -8 }, "bf16"):totable(), { 1.0, 1 + 2 ^ -6 })
  -- conversions round the same way
  T.eq(cu.array({ 2049, 2051 }, "i32"):astype("f16"):totable(), { 2048.0, 2052.0 })
  T.eq(cu.array({ 257, 259 }, "f64"):astype("bf16"):totable(), { 256.0, 260.0 })
  T.eq(cu.array({ 0.1 }, "f64"):astype("f16")[1], S.f16(0.1))
  T.eq(cu.array({ 0.1 }, "f64"):astype("bf16")[1], S.bf16(0.1))
  local x = cu.array({ 0 / 0 }, "f32"):astype("f16")[1]
  T.truthy(x ~= x, "NaN stays NaN")
end)

T.case("writes into float dtypes round", function()
  for _, t in ipairs({ "f32", "f64", "f16", "bf16" }) do
    local vals = S.randoms(20, -1000, 1000)
    local a = cu.empty(20, t)
    for i, v in ipairs(vals) do a[i] = v end
    for i, v in ipairs(vals) do T.eq(a[i], S.ROUND[t](v), t .. " element " .. i) end
    local v = vals[1]
    T.eq(cu.full(2, v, t):totable(), { S.ROUND[t](v), S.ROUND[t](v) }, t .. " full")
    T.eq(cu.zeros(1, t):fill(v)[1], S.ROUND[t](v), t .. " fill")
  end
  T.eq(cu.array({ 16777217 }, "f32")[1], 16777216.0, "integers round too")
end)

T.case("values beyond a float dtype's range become inf (IEEE rounding, as numpy)", function()
  local fmax = 3.4028234663852886e38 -- f32's largest value
  local near = fmax * (1 + 1e-10)   -- rounds to it
  local past = fmax + 2.0 ^ 103      -- the midpoint to 2^128: ties to even, to inf
  for _, t in ipairs({ "f32", "f16", "bf16" }) do
    local a = cu.empty(4, t)
    a[1], a[2], a[3], a[4] = 1e300, -1e300, 0 / 0, math.huge
    local v = a:totable()
    T.eq({ v[1], v[2], v[4] }, { math.huge, -math.huge, math.huge }, t .. " a[i] = v")
    T.truthy(v[3] ~= v[3], t .. " nan stays nan")
    T.eq(cu.full(2, -1e300, t):totable(), { -math.huge, -math.huge }, t .. " full")
    T.eq(cu.array({ 1e300, -1e39 }, t):totable(), { math.huge, -math.huge }, t .. " array")
    T.eq(cu.zeros(1, t):fill(1e300)[1], math.huge, t .. " fill")
    T.eq(cu.array({ 1e300, -1e300, 1 }, "f64"):astype(t):totable(), { math.huge, -math.huge, 1.0 },
      t .. " astype from f64")
    T.eq((cu.zeros(1, t) + 1e300)[1], math.huge, t .. " weak scalar operand")
  end
  T.eq(cu.array({ near, -near, past, -past }, "f32"):totable(), { fmax, -fmax, math.huge, -math.huge })
  T.eq(cu.array({ near, past }, "f64"):astype("f32"):totable(), { fmax, math.huge })
  T.eq(cu.array({ 65519.99, 65520 }, "f16"):totable(), { 65504.0, math.huge })
  local z = cu.array({ cu.complex(1e300, near) }, "c64")[1]
  T.eq({ z.re, z.im }, { math.huge, fmax })
  local w = cu.array({ cu.complex(-1e300, 1) }, "c128"):astype("c64")[1]
  T.eq({ w.re, w.im }, { -math.huge, 1.0 })
end)

T.case("writes of nan, inf or out-of-range values into integer dtypes are errors", function()
  for _, t in ipairs({ "i8", "i32", "i64", "u8", "u16", "u32", "u64" }) do
    local a = cu.zeros(2, t)
    S.raises(function() a[1] = 0 / 0 end, { "cannot store nan in a " .. t .. " array", "no nan or inf" })
    S.raises(function() a[1] = -math.huge end, { "cannot store -inf", "no nan or inf" })
    S.raises(function() cu.full(2, 1e300, t) end, { "out of range for " .. t })
    S.raises(function() cu.array({ 1, 0 / 0 }, t) end, "cannot store nan")
    T.eq(a:totable(), { 0, 0 }, t .. " unchanged")
  end
end)

T.case("writes into integer and bool dtypes take exact values", function()
  for _, t in ipairs({ "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64" }) do
    local info = S.INFO[t]
    local max = t == "u64" and 0x1p64 - 2048 or info.max -- the largest u64 a Lua number holds
    local a = cu.zeros(4, t)
    a[1] = info.min
    a[2] = max
    a[3] = 5.0 -- an integral float is exact
    a[4] = true
    T.eq(a:totable(), { info.min, max, 5, 1 }, t)
    local v = math.random(math.max(info.min, -1000), math.min(max, 1000))
    T.eq(cu.full(1, v, t)[1], v, t .. " full")
  end
  local b = cu.zeros(4, "bool")
  b[1], b[2], b[3], b[4] = true, 1, 0, 1.0
  T.eq(b:totable(), { true, true, false, true })
end)

-- Converting copies between dtypes in every direction and with non-contiguous sides.
T.case("cu.copy converts dtypes in every direction", function()
  local pairs_ = { { "f64", "f32" }, { "f32", "i32" }, { "i32", "u8" }, { "c64", "f64" }, { "f16", "bf16" },
    { "bool", "f32" }, { "i64", "c128" }, { "u32", "i8" }, { "f64", "f16" }, { "i16", "bool" },
    { "u64", "i64" }, { "i64", "u64" }, { "u16", "i8" }, { "f64", "u64" }, { "u64", "f32" }, { "u16", "f16" } }
  for _, p in ipairs(pairs_) do
    local from, to = p[1], p[2]
    local vals = S.random_values(from, 12)
    local n = #vals
    local exp = {}
    local read = cu.array(vals, from):totable()
    for i, v in ipairs(read) do exp[i] = S.convert(v, from, to) end
    local where = {
      device = function(t) return cu.array(vals, t) end,
      pageable = function(t) return cu.host.array(vals, t) end,
      pinned = function(t) return cu.host.array(vals, t, { pinned = true }) end,
    }
    for sname, make_src in pairs(where) do
      for _, dname in ipairs({ "device", "pageable", "pinned" }) do
        local src = make_src(from)
        local dst = dname == "device" and cu.empty(n, to) or cu.host.empty(n, to, { pinned = dname == "pinned" })
        T.truthy(rawequal(cu.copy(dst, src), dst), "copy returns dst")
        S.same_list(dst:totable(), exp, from .. " " .. sname .. " -> " .. to .. " " .. dname)
      end
    end
  end
end)

T.case("converting copies of non-contiguous views", function()
  local vals = S.randoms(12, -200, 200)
  local expect_t = {} -- transpose of the {3,4} matrix, as f32 -> i16
  for c = 1, 4 do
    expect_t[c] = {}
    for r = 1, 3 do expect_t[c][r] = S.convert(S.f32(vals[(r - 1) * 4 + c]), "f32", "i16") end
  end
  local makers = {
    device = function(...) return cu.array(...) end,
    pinned = function(v, t) return cu.host.array(v, t, { pinned = true }) end,
    pageable = function(v, t) return cu.host.array(v, t) end,
  }
  for sname, ms in pairs(makers) do
    for dname, md in pairs(makers) do
      local src = ms(S.matrix(vals, 3, 4), "f32")
      -- non-contiguous source, contiguous destination
      local dst = md(S.matrix(S.randints(12, 0, 0), 4, 3), "i16")
      cu.copy(dst, src:transpose())
      T.eq(dst:totable(), expect_t, sname .. " (transposed) -> " .. dname)
      -- contiguous source, non-contiguous destination
      local dst2 = md(S.matrix(S.randints(12, 0, 0), 3, 4), "i16")
      cu.copy(dst2:transpose(), src:transpose():contiguous())
      local back = dst2:transpose():totable()
      T.eq(back, expect_t, sname .. " -> " .. dname .. " (transposed)")
      -- both non-contiguous, on a stream
      local dst3 = md(S.matrix(S.randints(20, 0, 0), 4, 5), "i16")
      local s = cu.stream()
      cu.copy(dst3:narrow(2, 2, 3), src:transpose(), { stream = s })
      -- (reads after work on another stream are covered in test_streams_events.lua)
      s:sync()
      local got = dst3:totable()
      for r = 1, 4 do
        T.eq(got[r][1], 0, "untouched column")
        T.eq(got[r][5], 0, "untouched column")
        for c = 1, 3 do T.eq(got[r][c + 1], expect_t[r][c], sname .. " -> " .. dname .. " narrowed") end
      end
    end
  end
end)

os.exit(T.run())
