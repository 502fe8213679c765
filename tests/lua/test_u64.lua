-- The u16 and u64 dtypes on both backends, against exact values: the edge values of u64
-- (2^64 - 1, 2^63), how u64 elements come into Lua (an integer below 2^63, the nearest float from
-- 2^63 up) and go back, printing, astype to and from f64/i64/f32/f16, sums and products that wrap
-- modulo 2^64, numpy's promotion (u64 with a signed integer gives f64), unsigned element-wise
-- functions (negative wraps, abs, sign, floor_divide/remainder, shifts, bitwise), reductions and
-- scans in u64, sorting, matmul, and values refused with a clear error.
package.path = (arg and arg[0] and arg[0]:match("^(.*)[/\\]") or "tests/lua") .. "/?.lua;" .. package.path
local T = require "cu.testing"
local S = require "support"

local TWO63 = 0x1p63
local TWO64 = 0x1p64
local TOP = TWO64 - 2048 -- the largest float below 2^64: a u64 value a Lua float holds exactly

-- The exact decimal text of the u64 value with the bit pattern `x` (a Lua integer).
local function udec(x) return string.format("%u", x) end
local ok_u = pcall(string.format, "%u", 1)
if not ok_u then
  udec = function(x)
    if x >= 0 then return tostring(x) end
    local q = (x >> 1) // 5 -- x as unsigned / 10, without overflow
    local r = x - q * 10
    return tostring(q) .. tostring(r)
  end
end

T.case("u16 and u64 exist, with their aliases, sizes and kinds", function()
  for t, alias in pairs({ u16 = "uint16", u64 = "uint64" }) do
    T.eq(cu.zeros(3, t).dtype, t)
    T.eq(cu.zeros(3, alias).dtype, t, alias)
    T.eq(cu.zeros(2):astype(alias).dtype, t, alias .. " astype")
  end
  T.eq(cu.zeros(3, "u16").nbytes, 6)
  T.eq(cu.zeros(3, "u64").nbytes, 24)
  T.eq(cu.iinfo("u16").max, 65535)
  T.eq(cu.iinfo("u16").min, 0)
  T.eq(cu.iinfo("u64").max, TWO64, "2^64 - 1 as the nearest float")
  T.eq(cu.iinfo("u64").bits, 64)
  T.eq(cu.isdtype("u64", "unsigned integer"), true)
  T.eq(cu.isdtype("u16", "signed integer"), false)
end)

T.case("u16: the whole range, exact; wrapping arithmetic", function()
  local a = cu.array({ 0, 1, 65535, 32768, 12345 }, "u16")
  T.eq(a:totable(), { 0, 1, 65535, 32768, 12345 })
  T.eq(math.type(a[3]), "integer")
  T.eq((a + 1):totable(), { 1, 2, 0, 32769, 12346 }, "65535 + 1 wraps")
  T.eq((a - 1):totable(), { 65535, 0, 65534, 32767, 12344 }, "0 - 1 wraps")
  T.eq((a * 2):totable(), { 0, 2, 65534, 0, 24690 })
  T.eq(cu.negative(a):totable(), { 0, 65535, 1, 32768, 53191 }, "negative wraps as numpy")
  T.eq(cu.array({ -1, 70000, -32768 }, "i64"):astype("u16"):totable(), { 65535, 4464, 32768 })
  T.eq(a:astype("i16"):totable(), { 0, 1, -1, -32768, 12345 })
  T.eq(a:astype("f16"):totable(), { 0, 1, math.huge, 32768, 12344 }, "f16 rounding (65535 overflows)")
  T.eq(cu.array({ 65535 }, "u16"):astype("bf16"):totable(), { 65536 })
end)

T.case("u64 elements in Lua: integers below 2^63, floats from 2^63 up", function()
  local a = cu.array({ 0, 1, math.maxinteger, TWO63, TOP }, "u64")
  local t = a:totable()
  T.eq(t[1], 0)
  T.eq(math.type(t[3]), "integer", "2^63 - 1 is a Lua integer")
  T.eq(t[3], math.maxinteger)
  T.eq(math.type(t[4]), "float", "2^63 is a float")
  T.eq(t[4], TWO63)
  T.eq(t[5], TOP)
  T.eq(a[4], TWO63, "indexing")
  T.eq(a[{ 4, 4 }]:item(), TWO63, "item of a slice")
  -- 2^64 - 1 (made by wrapping): the nearest float, 2^64
  local m = cu.array({ -1, math.mininteger }, "i64"):astype("u64")
  T.eq(m:totable(), { TWO64, TWO63 })
  T.eq(math.type(m[1]), "float")
  -- round trips through Lua of the values a Lua number holds exactly
  for _, v in ipairs({ 0, 7, math.maxinteger, TWO63, TWO63 + 2048, TOP }) do
    local b = cu.full(2, v, "u64")
    T.eq(b[2], v, "full " .. tostring(v))
    b[1] = b[2]
    T.eq(b:totable(), { v, v }, "write back " .. tostring(v))
    T.eq(cu.array({ v }, "u64"):astype("u64")[1], v)
  end
end)

T.case("u64 bits survive astype to i64 and back (numpy's wrapping casts)", function()
  local bits = { 0, 1, -1, math.mininteger, math.maxinteger, -2, 0x123456789ABCDEF0 }
  local u = cu.array(bits, "i64"):astype("u64")
  T.eq(u:astype("i64"):totable(), bits)
  T.eq(cu.sum(u):astype("i64"):item(), (function()
    local s = 0
    for _, b in ipairs(bits) do s = s + b end -- Lua integers wrap modulo 2^64 too
    return s
  end)())
  T.eq(u:astype("i32"):totable(), { 0, 1, -1, 0, -1, -2, -1698898192 })
  T.eq(u:astype("u16"):totable(), { 0, 1, 65535, 0, 65535, 65534, 57072 })
end)

T.case("u64 to and from floats: rounded once, saturating", function()
  local u = cu.array({ -1, math.mininteger, math.maxinteger, 1 << 53 | 1, 0 }, "i64"):astype("u64")
  T.eq(u:astype("f64"):totable(), { TWO64, TWO63, TWO63, 2.0 ^ 53, 0.0 })
  T.eq(u:astype("f32"):totable(), { TWO64, TWO63, TWO63, 2.0 ^ 53, 0.0 })
  T.eq(u:astype("f16"):totable(), { math.huge, math.huge, math.huge, math.huge, 0.0 })
  T.eq(u:astype("bf16"):totable(), { TWO64, TWO63, TWO63, 2.0 ^ 53, 0.0 })
  -- (2^63 + 2^40 + 1): nearest f32 is 2^63 + 2^40 only when rounded once from the integer
  local odd = cu.array({ math.mininteger + (1 << 40) + 1 }, "i64"):astype("u64")
  T.eq(odd:astype("f32")[1], TWO63 + 2.0 ^ 40)
  T.eq(odd:astype("bf16")[1], TWO63, "bf16 (8 significant bits)")
  local f = cu.array({ -1.5, 0.9, TWO63, TOP, 1e30, math.huge, 0 / 0, -math.huge }, "f64")
  local back = f:astype("u64"):totable()
  T.eq(back, { 0, 0, TWO63, TOP, TWO64, TWO64, 0, 0 }, "truncation, saturation, NaN to 0")
  T.eq(cu.array({ 1e30 }, "f64"):astype("u64"):astype("i64")[1], -1, "saturated at 2^64 - 1")
  T.eq(cu.array({ 3.5, 70000 }, "f32"):astype("u16"):totable(), { 3, 65535 })
  local c = cu.array({ TWO63 }, "u64"):astype("c128")[1]
  T.eq({ c.re, c.im }, { TWO63, 0.0 })
end)

T.case("printing shows every u64 value exactly", function()
  local u = cu.array({ -1, math.mininteger, 5 }, "i64"):astype("u64")
  local s = tostring(u)
  T.truthy(s:find("18446744073709551615", 1, true), s)
  T.truthy(s:find("9223372036854775808", 1, true), s)
  T.truthy(s:find("dtype=u64", 1, true), s)
  T.eq(udec(-1), "18446744073709551615")
  local z = tostring(cu.array({ -2 }, "i64"):astype("u64"):reshape({}))
  T.truthy(z:find("18446744073709551614", 1, true), z)
  T.truthy(tostring(cu.array({ 65535 }, "u16")):find("65535", 1, true))
end)

T.case("sums and products of unsigned integers are u64 and wrap modulo 2^64", function()
  for _, t in ipairs({ "u8", "u16", "u32", "u64" }) do
    local a = cu.array({ 1, 2, 3 }, t)
    T.eq(cu.sum(a).dtype, "u64", t .. " sum")
    T.eq(cu.prod(a).dtype, "u64", t .. " prod")
    T.eq(cu.cumsum(a).dtype, "u64", t .. " cumsum")
    T.eq(cu.cumprod(a):totable(), { 1, 2, 6 }, t .. " cumprod")
    T.eq(cu.sum(a, { axis = 1, keepdims = true }):totable(), { 6 })
  end
  T.eq(cu.sum(cu.array({ 1, 2 }, "i16")).dtype, "i64", "signed: i64")
  T.eq(cu.sum(cu.array({ true, true }, "bool")).dtype, "i64", "bool: i64")
  local big = cu.array({ -1, -1, 3 }, "i64"):astype("u64") -- 2^64-1 twice and 3
  T.eq(cu.sum(big):astype("i64"):item(), 1, "(2^64-1)*2 + 3 = 1 mod 2^64")
  T.eq(cu.sum(big):item(), 1)
  T.eq(cu.prod(cu.array({ 1 << 32, 1 << 32 }, "u64")):item(), 0, "2^64 wraps to 0")
  T.eq(cu.prod(cu.array({ 1 << 62, 2 }, "u64")):item(), TWO63)
  T.eq(cu.cumsum(big):astype("i64"):totable(), { -1, -2, 1 })
  -- 65535 * 1000 elements: exact in u64 (it would overflow u16)
  T.eq(cu.sum(cu.full(1000, 65535, "u16")):item(), 65535000)
  T.eq(cu.max(big):item(), TWO64)
  T.eq(cu.min(big):item(), 3)
  T.eq(cu.argmax(big):item(), 1)
  T.eq(cu.argmin(cu.array({ 5, 65535, 0, 3 }, "u16")):item(), 3)
  T.eq(cu.mean(cu.array({ -1, -1 }, "i64"):astype("u64")):item(), TWO64, "mean in f64")
  T.eq(cu.max(cu.array({ 1, 65535, 300 }, "u16")):item(), 65535)
  T.eq(cu.max(cu.array({ 1, 65535, 300 }, "u16")).dtype, "u16")
end)

T.case("promotion: numpy's table for u16 and u64", function()
  local function dt(a, b) return (cu.zeros(2, a) + cu.zeros(2, b)).dtype end
  T.eq(dt("u16", "i8"), "i32")
  T.eq(dt("u16", "i16"), "i32")
  T.eq(dt("u16", "u8"), "u16")
  T.eq(dt("u16", "f16"), "f32")
  T.eq(dt("u64", "i8"), "f64")
  T.eq(dt("u64", "i64"), "f64")
  T.eq(dt("u64", "u8"), "u64")
  T.eq(dt("u64", "u32"), "u64")
  T.eq(dt("u64", "bool"), "u64")
  T.eq(dt("u64", "c64"), "c128")
  -- Lua numbers are weak: they keep the array's type
  T.eq((cu.zeros(2, "u64") + 1).dtype, "u64")
  T.eq((cu.zeros(2, "u16") * 3).dtype, "u16")
  T.eq((cu.zeros(2, "u64") + 0.5).dtype, "f64")
  -- u64 with i64 computes in f64: 2^64 - 1 + (-1) rounds
  local m = cu.array({ -1 }, "i64"):astype("u64")
  local r = m + cu.array({ -1 }, "i64")
  T.eq(r.dtype, "f64")
  T.eq(r[1], TWO64 - 1)
end)

T.case("unsigned element-wise functions as numpy", function()
  local m = cu.array({ -1 }, "i64"):astype("u64") -- 2^64 - 1
  local u = cu.array({ 0, 1, 7, TWO63 }, "u64")
  T.eq(cu.negative(u):astype("i64"):totable(), { 0, -1, -7, math.mininteger }, "negative wraps")
  T.eq(cu.abs(u):totable(), { 0, 1, 7, TWO63 }, "abs: identity")
  T.eq(cu.sign(u):totable(), { 0, 1, 1, 1 })
  T.eq(cu.sign(u).dtype, "u64")
  T.eq((m + 1):totable(), { 0 }, "2^64 - 1 + 1 wraps")
  T.eq((cu.zeros(1, "u64") - 1):astype("i64"):totable(), { -1 }, "0 - 1 wraps")
  T.eq(cu.floor_divide(m, cu.array({ 2 }, "u64")):totable(), { math.maxinteger })
  T.eq(cu.remainder(m, cu.array({ 10 }, "u64")):totable(), { 5 })
  T.eq((m // 0):totable(), { 0 }, "// 0 gives 0")
  T.eq((m % 0):totable(), { 0 })
  T.eq(cu.bitwise_right_shift(m, cu.array({ 63 }, "u64")):totable(), { 1 }, "logical shift")
  T.eq(cu.bitwise_right_shift(m, cu.array({ 64 }, "u64")):totable(), { 0 }, "shift past the width")
  T.eq(cu.bitwise_left_shift(cu.array({ 1 }, "u64"), cu.array({ 63 }, "u64")):totable(), { TWO63 })
  T.eq(cu.bitwise_and(m, cu.array({ 0xFF }, "u64")):totable(), { 255 })
  T.eq(cu.bitwise_xor(m, cu.array({ -2 }, "i64"):astype("u64")):totable(), { 1 })
  T.eq(cu.bitwise_invert(cu.zeros(1, "u64")):astype("i64"):totable(), { -1 })
  T.eq(cu.bitwise_invert(cu.zeros(1, "u16")):totable(), { 65535 })
  T.eq(cu.bitwise_right_shift(cu.array({ 65535 }, "u16"), cu.array({ 15 }, "u16")):totable(), { 1 })
  T.eq(cu.bitwise_left_shift(cu.array({ 65535 }, "u16"), cu.array({ 8 }, "u16")):totable(), { 65280 })
  local pow = 1
  for _ = 1, 41 do pow = pow * 3 end -- Lua integers wrap modulo 2^64 as the u64 power does
  T.eq((cu.array({ 3 }, "u64") ^ cu.array({ 41 }, "u64")):astype("i64"):totable(), { pow })
  -- comparisons are exact within u64 (no rounding through f64)
  local a = cu.array({ -1, -2 }, "i64"):astype("u64")
  T.eq(cu.lt(a[{ 2, 2 }], a[{ 1, 1 }]):totable(), { true }, "2^64-2 < 2^64-1")
  T.eq(cu.eq(a[{ 2, 2 }], a[{ 1, 1 }]):totable(), { false })
  T.eq(cu.maximum(a, cu.array({ 5, 5 }, "u64")):astype("i64"):totable(), { -1, -2 })
end)

T.case("sorting, unique and searching of u16 and u64", function()
  local u = cu.array({ -1, 5, math.mininteger, 0, 5, math.maxinteger }, "i64"):astype("u64")
  T.eq(cu.sort(u):astype("i64"):totable(), { 0, 5, 5, math.maxinteger, math.mininteger, -1 })
  T.eq(cu.argsort(u):totable(), { 4, 2, 5, 6, 3, 1 })
  T.eq(cu.sort(u, { descending = true }):astype("i64"):totable(),
    { -1, math.mininteger, math.maxinteger, 5, 5, 0 })
  T.eq(cu.unique_values(u):astype("i64"):totable(), { 0, 5, math.maxinteger, math.mininteger, -1 })
  local h = cu.array({ 65535, 3, 40000, 3 }, "u16")
  T.eq(cu.sort(h):totable(), { 3, 3, 40000, 65535 })
  T.eq(cu.sort(h).dtype, "u16")
  T.eq(cu.searchsorted(cu.sort(h), cu.array({ 50000 }, "u16")):totable(), { 4 })
  T.eq(cu.nonzero(cu.array({ 0, TWO63, 0 }, "u64"))[1]:totable(), { 2 })
end)

T.case("matmul and dot of u16 and u64 wrap in the dtype", function()
  local m = cu.array({ -1 }, "i64"):astype("u64")
  local a = cu.array({ { 1, 2 }, { 3, 4 } }, "u64")
  T.eq(cu.matmul(a, a):totable(), { { 7, 10 }, { 15, 22 } })
  T.eq(cu.matmul(a, a).dtype, "u64")
  T.eq(cu.dot(cu.concat({ m, m }), cu.array({ 1, 1 }, "u64")):astype("i64"):item(), -2)
  local h = cu.array({ { 300, 1 }, { 2, 300 } }, "u16")
  T.eq(cu.matmul(h, h):totable(), { { (90000 + 2) % 65536, 600 }, { 1200, (2 + 90000) % 65536 } })
end)

local function m_max() return cu.array({ -1 }, "i64"):astype("u64") end

T.case("u16/u64 through gathers, reshapes, concat and copies between places", function()
  local u = cu.array({ -1, 7, math.mininteger }, "i64"):astype("u64")
  T.eq(cu.take(u, cu.array({ 3, 1 }, "i64")):astype("i64"):totable(), { math.mininteger, -1 })
  T.eq(cu.take(u, cu.array({ 2, 3 }, "u64")):astype("i64"):totable(), { 7, math.mininteger })
  T.eq(cu.take(u, cu.array({ 1 }, "u16")):astype("i64"):totable(), { -1 })
  -- 2^64 - 1 is out of range (not -1, the last element)
  S.raises(function() cu.take(u, m_max()) end, { "out of range" })
  T.eq(cu.flip(u):astype("i64"):totable(), { math.mininteger, 7, -1 })
  T.eq(cu.concat({ u, cu.array({ 1 }, "u16") }).dtype, "u64")
  T.eq(cu.concat({ cu.array({ 1 }, "u16"), cu.array({ -1 }, "i8") }).dtype, "i32")
  local h = cu.host.array({ 1, 65535 }, "u16")
  T.eq(h:totable(), { 1, 65535 })
  T.eq(cu.copy(cu.empty(2, "u16"), h):totable(), { 1, 65535 })
  T.eq(u:to_host():astype("i64"):totable(), { -1, 7, math.mininteger })
end)

T.case("bad input: out-of-range and negative values are refused, the array unchanged", function()
  local a = cu.zeros(2, "u64")
  S.raises(function() a[1] = -1 end, { "-1", "out of range for u64" })
  S.raises(function() a[1] = TWO64 end, { "out of range for u64" })
  S.raises(function() a[1] = 0.5 end, { "not an integer" })
  S.raises(function() a[1] = 0 / 0 end, { "nan" })
  S.raises(function() cu.array({ 3, -3 }, "u64") end, { "-3", "out of range for u64" })
  S.raises(function() cu.full(2, 65536, "u16") end, { "65536", "out of range for u16" })
  S.raises(function() cu.zeros(2, "u16")[2] = -1 end, { "-1", "out of range for u16" })
  S.raises(function() return cu.zeros(2, "u64") + (-1) end, { "u64" })
  S.raises(function() cu.arange(-1, 3, 1, "u64") end, { "u64" })
  S.raises(function() cu.bitwise_and(cu.zeros(1, "u64"), cu.zeros(1, "i64")) end, { "f64" })
  T.eq(a:totable(), { 0, 0 }, "unchanged")
  T.eq(cu.arange(0, 3, 1, "u64"):totable(), { 0, 1, 2 })
  T.eq(cu.arange(65533, 65536, 1, "u16"):totable(), { 65533, 65534, 65535 })
end)

os.exit(T.run())
