-- The element-wise functions of the Array API standard on both backends, against exact
-- values: special values (NaN, +-inf, -0.0), integer edge cases (shifts, zero divisors, wrapping),
-- result dtypes, the standard's names of culua's operations (cu.multiply = cu.mul ...), the bitwise
-- operators, out=, and errors naming the argument. numpy's own results: tests/numpy.
package.path = (arg and arg[0] and arg[0]:match("^(.*)[/\\]") or "tests/lua") .. "/?.lua;" .. package.path
local T = require "cu.testing"
local S = require "support"

local inf = math.huge
local nan = math.abs(0 / 0) -- a NaN with its sign bit clear (0 / 0 has it set on x86)
local pi = math.pi

-- Element i of the flat values of `a` equals want[i]: NaN equals NaN, the sign of zero counts,
-- floats within tol (relative, or absolute below 1) when given.
local function same(x, y, tol)
  if type(y) == "table" then return same(x.re, y[1], tol) and same(x.im, y[2], tol) end
  if type(y) ~= "number" then return x == y end
  if y ~= y then return x ~= x end
  if x == y then return y ~= 0 or (1 / x > 0) == (1 / y > 0) end
  if not tol or x ~= x or math.abs(y) == inf then return false end
  return math.abs(x - y) <= tol * math.max(1, math.abs(y))
end
local function flat(t, out)
  out = out or {}
  if type(t) ~= "table" then
    out[#out + 1] = t
    return out
  end
  for _, v in ipairs(t) do flat(v, out) end
  return out
end
local function expect(a, dtype, want, what, tol)
  T.eq(a.dtype, dtype, what .. ": dtype")
  local got = flat(a:totable())
  T.eq(#got, #want, what .. ": size")
  for i, w in ipairs(want) do
    if not same(got[i], w, tol) then
      local show = function(v)
        if type(v) == "table" then return string.format("(%s, %s)", tostring(v[1]), tostring(v[2])) end
        if type(v) == "userdata" then return string.format("(%s, %s)", tostring(v.re), tostring(v.im)) end
        return string.format("%q", v)
      end
      error(string.format("%s: element %d is %s, expected %s", what, i, show(got[i]), show(w)), 2)
    end
  end
end

local STANDARD = { "abs", "acos", "acosh", "add", "asin", "asinh", "atan", "atan2", "atanh",
  "bitwise_and", "bitwise_left_shift", "bitwise_invert", "bitwise_or", "bitwise_right_shift",
  "bitwise_xor", "ceil", "clip", "conj", "copysign", "cos", "cosh", "divide", "equal", "exp", "expm1",
  "floor", "floor_divide", "greater", "greater_equal", "hypot", "imag", "isfinite", "isinf", "isnan",
  "less", "less_equal", "log", "log1p", "log2", "log10", "logaddexp", "logical_and", "logical_not",
  "logical_or", "logical_xor", "maximum", "minimum", "multiply", "negative", "not_equal", "positive",
  "pow", "real", "remainder", "round", "sign", "signbit", "sin", "sinh", "square", "sqrt", "subtract",
  "tan", "tanh", "trunc" }

T.case("every element-wise function of the standard is a function and a method", function()
  local a = cu.array({ 1.5 }, "f64")
  for _, name in ipairs(STANDARD) do
    T.eq(type(cu[name]), "function", "cu." .. name)
    T.eq(type(a[name]), "function", "a:" .. name)
  end
end)

T.case("isnan, isinf, isfinite, signbit: bools, also of -0.0, NaN of either sign, integers", function()
  local v = { 0.0, -0.0, 1.0, inf, -inf, nan, -nan }
  for _, t in ipairs({ "f64", "f32", "f16", "bf16" }) do
    local a = cu.array(v, t)
    expect(cu.isnan(a), "bool", { false, false, false, false, false, true, true }, "isnan " .. t)
    expect(a:isinf(), "bool", { false, false, false, true, true, false, false }, "isinf " .. t)
    expect(cu.isfinite(a), "bool", { true, true, true, false, false, false, false }, "isfinite " .. t)
    expect(cu.signbit(a), "bool", { false, true, false, false, true, false, true }, "signbit " .. t)
  end
  local i = cu.array({ -3, 0, 7 }, "i32")
  expect(cu.isnan(i), "bool", { false, false, false }, "isnan i32")
  expect(cu.isfinite(i), "bool", { true, true, true }, "isfinite i32")
  expect(cu.signbit(i), "bool", { true, false, false }, "signbit i32")
  local z = cu.array({ cu.complex(1, nan), cu.complex(-inf, 0), cu.complex(2, 3) }, "c128")
  expect(cu.isnan(z), "bool", { true, false, false }, "isnan c128")
  expect(cu.isinf(z), "bool", { false, true, false }, "isinf c128")
  expect(cu.isfinite(z), "bool", { false, false, true }, "isfinite c128")
end)

T.case("rounding: halves to even, -0.0 kept, integers keep their dtype", function()
  local a = cu.array({ 0.5, 1.5, 2.5, -0.5, -2.5, 3.7, -3.7, -0.0, inf, nan }, "f64")
  expect(cu.round(a), "f64", { 0.0, 2.0, 2.0, -0.0, -2.0, 4.0, -4.0, -0.0, inf, nan }, "round")
  expect(cu.floor(a), "f64", { 0.0, 1.0, 2.0, -1.0, -3.0, 3.0, -4.0, -0.0, inf, nan }, "floor")
  expect(cu.ceil(a), "f64", { 1.0, 2.0, 3.0, -0.0, -2.0, 4.0, -3.0, -0.0, inf, nan }, "ceil")
  expect(a:trunc(), "f64", { 0.0, 1.0, 2.0, -0.0, -2.0, 3.0, -3.0, -0.0, inf, nan }, "trunc")
  local i = cu.array({ -7, 0, 9 }, "i16")
  for _, f in ipairs({ "floor", "ceil", "trunc", "round" }) do expect(cu[f](i), "i16", { -7, 0, 9 }, f .. " i16") end
  local z = cu.array({ cu.complex(2.5, -1.5) }, "c64")
  expect(cu.round(z), "c64", { { 2.0, -2.0 } }, "round c64")
end)

T.case("sign: 0 for -0.0, NaN for NaN, integers, complex z/|z|", function()
  expect(cu.sign(cu.array({ -2.0, -0.0, 0.0, 3.5, nan, -inf }, "f32")), "f32",
    { -1.0, 0.0, 0.0, 1.0, nan, -1.0 }, "sign f32")
  expect(cu.sign(cu.array({ -128, 0, 5 }, "i8")), "i8", { -1, 0, 1 }, "sign i8")
  expect(cu.sign(cu.array({ 0, 200 }, "u8")), "u8", { 0, 1 }, "sign u8")
  expect(cu.sign(cu.array({ cu.complex(3, 4), cu.complex(0, 0), cu.complex(0, -2), cu.complex(inf, 1),
      cu.complex(nan, 1) }, "c128")), "c128", { { 0.6, 0.8 }, { 0.0, 0.0 }, { 0.0, -1.0 }, { 1.0, 0.0 },
      { nan, nan } }, "sign c128", 1e-15)
end)

T.case("copysign, hypot, atan2, logaddexp at special values", function()
  local a = cu.array({ 1.0, 1.0, -2.0, nan, 0.0 }, "f64")
  local b = cu.array({ -0.0, 0.0, inf, -1.0, -nan }, "f64")
  expect(cu.copysign(a, b), "f64", { -1.0, 1.0, 2.0, nan, -0.0 }, "copysign")
  expect(cu.signbit(cu.copysign(cu.array({ nan }, "f64"), -1.0)), "bool", { true }, "copysign of NaN")
  expect(cu.hypot(cu.array({ inf, nan, 3.0, -inf }, "f64"), cu.array({ nan, -inf, -4.0, 1.0 }, "f64")),
    "f64", { inf, inf, 5.0, inf }, "hypot", 1e-15) -- CUDA's hypot is within 2 ulp
  expect(cu.atan2(cu.array({ 0.0, -0.0, 0.0, -0.0, 1.0, inf }, "f64"),
      cu.array({ -0.0, -0.0, 0.0, 0.0, 0.0, inf }, "f64")), "f64",
    { pi, -pi, 0.0, -0.0, pi / 2, pi / 4 }, "atan2", 1e-15)
  expect(cu.logaddexp(cu.array({ -inf, inf, 1.0, nan, 0.0 }, "f64"),
      cu.array({ -inf, inf, 1.0, 0.0, -inf }, "f64")), "f64",
    { -inf, inf, 1.0 + math.log(2), nan, 0.0 }, "logaddexp")
  -- integers compute in numpy's float type
  T.eq(cu.atan2(cu.array({ 1 }, "i8"), cu.array({ 1 }, "i8")).dtype, "f16", "atan2 i8")
  T.eq(cu.hypot(cu.array({ 3 }, "i16"), cu.array({ 4 }, "i16")).dtype, "f32", "hypot i16")
  expect(cu.hypot(cu.array({ 3 }, "i32"), 4), "f64", { 5.0 }, "hypot i32 with a scalar", 1e-15)
end)

T.case("transcendental functions at exact points and special values", function()
  local a = cu.array({ 0.0, -0.0, 1.0, -1.0, 2.0, inf, nan }, "f64")
  expect(cu.asin(a), "f64", { 0.0, -0.0, pi / 2, -pi / 2, nan, nan, nan }, "asin", 1e-15)
  expect(cu.acos(a), "f64", { pi / 2, pi / 2, 0.0, pi, nan, nan, nan }, "acos", 1e-15)
  expect(cu.atanh(a), "f64", { 0.0, -0.0, inf, -inf, nan, nan, nan }, "atanh")
  expect(cu.expm1(a), "f64", { 0.0, -0.0, math.exp(1) - 1, math.exp(-1) - 1, math.exp(2) - 1, inf, nan },
    "expm1", 1e-15)
  expect(cu.log2(cu.array({ 8.0, 0.0, -1.0, inf }, "f64")), "f64", { 3.0, -inf, nan, inf }, "log2", 1e-15)
  expect(cu.log10(cu.array({ 1000.0, 1.0 }, "f32")), "f32", { 3.0, 0.0 }, "log10", 1e-6)
  expect(cu.log1p(cu.array({ -1.0, -0.0, 1e-300 }, "f64")), "f64", { -inf, -0.0, 1e-300 }, "log1p")
  expect(cu.tan(cu.array({ 0.0, -0.0 }, "f64")), "f64", { 0.0, -0.0 }, "tan")
  expect(cu.sinh(a), "f64", { 0.0, -0.0, (math.exp(1) - math.exp(-1)) / 2,
    -(math.exp(1) - math.exp(-1)) / 2, (math.exp(2) - math.exp(-2)) / 2, inf, nan }, "sinh", 1e-15)
  expect(cu.cosh(cu.array({ -inf, 0.0 }, "f64")), "f64", { inf, 1.0 }, "cosh")
  expect(cu.acosh(cu.array({ 1.0, 0.5 }, "f64")), "f64", { 0.0, nan }, "acosh")
  expect(cu.asinh(cu.array({ -0.0, -inf }, "f64")), "f64", { -0.0, -inf }, "asinh")
  expect(cu.atan(cu.array({ inf, -inf }, "f64")), "f64", { pi / 2, -pi / 2 }, "atan", 1e-15)
  -- integers: numpy's float type (i16 -> f32, i64 -> f64, u8 -> f16)
  T.eq(cu.acos(cu.array({ 1 }, "i16")).dtype, "f32", "acos i16")
  T.eq(cu.log2(cu.array({ 1 }, "i64")).dtype, "f64", "log2 i64")
  T.eq(cu.tan(cu.array({ 1 }, "u8")).dtype, "f16", "tan u8")
end)

T.case("complex inverse functions: principal values and C99's special values", function()
  local z = cu.array({ cu.complex(2, 0), cu.complex(0, 0), cu.complex(inf, 1), cu.complex(1, inf),
    cu.complex(nan, 0) }, "c128")
  local l = math.log(2 + math.sqrt(3))
  expect(cu.acos(z), "c128", { { 0.0, -l }, { pi / 2, -0.0 }, { 0.0, -inf }, { pi / 2, -inf }, { nan, nan } },
    "acos", 1e-15)
  expect(cu.asin(z), "c128", { { pi / 2, l }, { 0.0, 0.0 }, { pi / 2, inf }, { 0.0, inf }, { nan, nan } },
    "asin", 1e-15)
  expect(cu.acosh(z), "c128", { { l, 0.0 }, { 0.0, pi / 2 }, { inf, 0.0 }, { inf, pi / 2 }, { nan, nan } },
    "acosh", 1e-15)
  expect(cu.asinh(z), "c128", { { math.log(2 + math.sqrt(5)), 0.0 }, { 0.0, 0.0 }, { inf, 0.0 },
    { inf, pi / 2 }, { nan, 0.0 } }, "asinh", 1e-15)
  expect(cu.atanh(cu.array({ cu.complex(1, 0), cu.complex(0, 2), cu.complex(inf, 1) }, "c128")), "c128",
    { { inf, 0.0 }, { 0.0, math.atan(2) }, { 0.0, pi / 2 } }, "atanh", 1e-15)
  expect(cu.atan(cu.array({ cu.complex(0, 0.5), cu.complex(inf, nan) }, "c128")), "c128",
    { { 0.0, 0.5 * math.log(3) }, { pi / 2, 0.0 } }, "atan", 1e-15)
  expect(cu.log10(cu.array({ cu.complex(-100, 0) }, "c128")), "c128", { { 2.0, pi / math.log(10) } },
    "log10", 1e-15)
  local tanh1 = (math.exp(2) - 1) / (math.exp(2) + 1)
  expect(cu.tan(cu.array({ cu.complex(0, 1) }, "c64")), "c64", { { 0.0, tanh1 } }, "tan", 1e-6)
end)

T.case("bitwise functions: integers and bools, numpy's shifts", function()
  local a = cu.array({ 12, -1, 5 }, "i32")
  local b = cu.array({ 10, 7, -6 }, "i32")
  expect(cu.bitwise_and(a, b), "i32", { 8, 7, 0 }, "and")
  expect(cu.bitwise_or(a, b), "i32", { 14, -1, -1 }, "or")
  expect(cu.bitwise_xor(a, b), "i32", { 6, -8, -1 }, "xor")
  expect(cu.bitwise_invert(a), "i32", { -13, 0, -6 }, "invert")
  expect(cu.bitwise_invert(cu.array({ 0, 255 }, "u8")), "u8", { 255, 0 }, "invert u8")
  local p, q = cu.array({ true, true, false }, "bool"), cu.array({ true, false, false }, "bool")
  expect(cu.bitwise_and(p, q), "bool", { true, false, false }, "and bool")
  expect(cu.bitwise_xor(p, q), "bool", { false, true, false }, "xor bool")
  expect(cu.bitwise_invert(p), "bool", { false, false, true }, "invert bool")
  -- shifts: counts outside [0, bits) shift everything out; negative numbers shift in ones
  local x = cu.array({ 1, 1, 1, -128, -128, 64, -5, 1 }, "i8")
  local n = cu.array({ 7, 8, -1, 9, 1, 1, 1, 100 }, "i8")
  expect(cu.bitwise_left_shift(x, n), "i8", { -128, 0, 0, 0, 0, -128, -10, 0 }, "left_shift i8")
  expect(cu.bitwise_right_shift(x, n), "i8", { 0, 0, 0, -1, -64, 32, -3, 0 }, "right_shift i8")
  local big = cu.array({ math.mininteger, math.maxinteger, -1 }, "i64")
  expect(cu.bitwise_right_shift(big, cu.array({ 63, 64, -3 }, "i64")), "i64", { -1, 0, -1 }, "right_shift i64")
  expect(cu.bitwise_left_shift(big, 1), "i64", { 0, -2, -2 }, "left_shift i64 wraps")
  expect(cu.bitwise_right_shift(cu.array({ 4294967295 }, "u32"), cu.array({ 31 }, "u32")), "u32", { 1 },
    "right_shift u32")
  -- bools shift as i8; mixed signed/unsigned promote
  expect(cu.bitwise_left_shift(p, q), "i8", { 2, 1, 0 }, "left_shift bool")
  T.eq(cu.bitwise_and(cu.array({ 1 }, "i8"), cu.array({ 1 }, "u8")).dtype, "i16", "i8 & u8")
end)

T.case("the bitwise operators & | ~ << >> and unary ~", function()
  local a = cu.array({ 12, 5 }, "i16")
  local b = cu.array({ 10, 3 }, "i16")
  expect(a & b, "i16", { 8, 1 }, "a & b")
  expect(a | b, "i16", { 14, 7 }, "a | b")
  expect(a ~ b, "i16", { 6, 6 }, "a ~ b")
  expect(~a, "i16", { -13, -6 }, "~a")
  expect(a << 2, "i16", { 48, 20 }, "a << 2")
  expect(a >> 1, "i16", { 6, 2 }, "a >> 1")
  expect(3 & a, "i16", { 0, 1 }, "3 & a")
  expect(1 << cu.array({ 0, 3 }, "i32"), "i32", { 1, 8 }, "1 << a")
  S.raises(function() return cu.array({ 1.5 }, "f32") & 1 end, { "bitwise_and", "f32" }, "float & 1")
  S.raises(function() return ~cu.array({ 1.5 }, "f64") end, { "bitwise_invert", "f64" }, "~float")
  S.raises(function() return cu.array({ 1 }, "i32") << 1.5 end, { "f64" }, "shift by a float")
end)

T.case("logical functions: any dtype, nonzero is true (NaN too)", function()
  local a = cu.array({ 0.0, nan, 2.0, -0.0 }, "f32")
  local b = cu.array({ 1.0, 1.0, 0.0, 0.0 }, "f32")
  expect(cu.logical_and(a, b), "bool", { false, true, false, false }, "and")
  expect(cu.logical_or(a, b), "bool", { true, true, true, false }, "or")
  expect(cu.logical_xor(a, b), "bool", { true, false, true, false }, "xor")
  expect(cu.logical_not(a), "bool", { true, false, false, true }, "not")
  expect(cu.logical_and(cu.array({ 3, 0 }, "i64"), true), "bool", { true, false }, "and with a scalar")
  expect(cu.logical_not(cu.array({ cu.complex(0, 1), cu.complex(0, 0) }, "c64")), "bool", { false, true },
    "not c64")
end)

T.case("square, positive, integer division and remainder as numpy", function()
  expect(cu.square(cu.array({ 16, -3 }, "i8")), "i8", { 0, 9 }, "square i8 wraps")
  expect(cu.square(cu.array({ true, false }, "bool")), "i8", { 1, 0 }, "square bool is i8")
  expect(cu.square(cu.array({ cu.complex(1, 2) }, "c128")), "c128", { { -3.0, 4.0 } }, "square c128")
  expect(cu.positive(cu.array({ -0.0, 2.0 }, "f64")), "f64", { -0.0, 2.0 }, "positive")
  local a = cu.array({ -7, 7, 7, -7, 5, math.mininteger }, "i64")
  local b = cu.array({ 3, -3, 0, 0, 5, -1 }, "i64")
  expect(cu.floor_divide(a, b), "i64", { -3, -3, 0, 0, 1, math.mininteger }, "floor_divide")
  expect(cu.remainder(a, b), "i64", { 2, -2, 0, 0, 0, 0 }, "remainder")
  expect(cu.remainder(cu.array({ -7.5, 7.5, 1.0 }, "f64"), cu.array({ 2.0, -2.0, -inf }, "f64")), "f64",
    { 0.5, -0.5, -inf }, "remainder f64")
end)

T.case("the standard's names of culua's operations", function()
  local a = cu.array({ 6, -3, 4 }, "i32")
  local b = cu.array({ 4, 2, 4 }, "i32")
  local pairs_ = { multiply = "mul", subtract = "sub", divide = "div", floor_divide = "floordiv",
    remainder = "mod", equal = "eq", not_equal = "ne", less = "lt", less_equal = "le", greater = "gt",
    greater_equal = "ge" }
  for std, own in pairs(pairs_) do
    local r1, r2 = cu[std](a, b), cu[own](a, b)
    T.eq(r1.dtype, r2.dtype, std .. " dtype")
    T.eq(r1:totable(), r2:totable(), std .. " = " .. own)
    T.eq(a[std](a, b):totable(), r2:totable(), "a:" .. std)
  end
  T.eq(cu.negative(a):totable(), { -6, 3, -4 }, "negative")
  T.eq(a:negative():totable(), { -6, 3, -4 }, "a:negative")
end)

T.case("clip: bounds of any kind, min > max gives max, NaN propagates", function()
  local x = cu.array({ -5.0, 0.5, 7.0, nan }, "f64")
  expect(cu.clip(x, 0, 1), "f64", { 0.0, 0.5, 1.0, nan }, "clip scalars")
  expect(cu.clip(x, 2, 1), "f64", { 1.0, 1.0, 1.0, nan }, "clip min > max")
  expect(cu.clip(x, nil, 0), "f64", { -5.0, 0.0, 0.0, nan }, "clip max only")
  expect(x:clip(0), "f64", { 0.0, 0.5, 7.0, nan }, "clip min only")
  expect(cu.clip(x), "f64", { -5.0, 0.5, 7.0, nan }, "clip without bounds copies")
  expect(cu.clip(x, cu.array({ nan, 0.0, 0.0, 0.0 }, "f64"), 3), "f64", { nan, 0.5, 3.0, nan }, "NaN bound")
  local m = cu.array({ { 1, 9 }, { 4, -2 } }, "i32")
  expect(cu.clip(m, cu.array({ 0, 5 }, "i32"), cu.array({ { 3 }, { 6 } }, "i32")), "i32", { 1, 3, 4, 5 },
    "broadcast bounds")
  expect(cu.clip(cu.array({ 5 }, "i8"), cu.array({ { 1 }, { 2 } }, "i8"), cu.array({ 3, 4, 6 }, "i8")),
    "i8", { 3, 4, 5, 3, 4, 5 }, "the result takes the shape of all three")
  local out = cu.empty({ 4 }, "f64")
  T.truthy(rawequal(cu.clip(x, 0, 1, { out = out }), out), "clip returns out")
  expect(out, "f64", { 0.0, 0.5, 1.0, nan }, "clip into out")
  local hi = cu.array({ 1.0, 1.0, 1.0, 1.0 }, "f64")
  cu.clip(x, 0, hi, { out = hi })
  expect(hi, "f64", { 0.0, 0.5, 1.0, nan }, "clip into its own max")
end)

T.case("out=, in place, methods", function()
  local a = cu.array({ 1.5, -2.5, nan }, "f32")
  local o = cu.empty({ 3 }, "bool")
  T.truthy(rawequal(cu.isnan(a, { out = o }), o), "isnan returns out")
  expect(o, "bool", { false, false, true }, "isnan into out")
  local w = cu.empty({ 3 }, "f64")
  cu.floor(a, { out = w })
  expect(w, "f64", { 1.0, -3.0, nan }, "floor into a wider out")
  a:round({ out = a })
  expect(a, "f32", { 2.0, -2.0, nan }, "round in place")
  local i = cu.array({ 1, 2 }, "i32")
  cu.bitwise_left_shift(i, 3, { out = i })
  expect(i, "i32", { 8, 16 }, "shift in place")
  -- views: a transposed and a sliced operand
  local m = cu.array({ { 1.0, -2.0, 3.0 }, { -4.0, 5.0, -6.0 } }, "f64")
  expect(cu.sign(m:transpose(1, 2)), "f64", { 1.0, -1.0, -1.0, 1.0, 1.0, -1.0 }, "sign of a transpose")
  expect(cu.copysign(m:narrow(2, 2, 2), -1.0), "f64", { -2.0, -3.0, -5.0, -6.0 }, "copysign of a slice")
  expect(cu.isinf(cu.zeros({ 0, 2 }, "f32")), "bool", {}, "empty")
  expect(cu.trunc(cu.full({}, -2.5, "f64")), "f64", { -2.0 }, "0-d")
end)

T.case("bad input names the argument or the dtype, and the runtime keeps working", function()
  local f = cu.array({ 1.5 }, "f32")
  local z = cu.array({ cu.complex(1, 1) }, "c64")
  local bo = cu.array({ true }, "bool")
  S.raises(function() cu.bitwise_and(f, f) end, { "bitwise_and", "not defined for f32" })
  S.raises(function() cu.bitwise_left_shift(bo, 1.5) end, { "bitwise_left_shift", "f64" })
  S.raises(function() cu.bitwise_invert(z) end, { "bitwise_invert", "c64" })
  S.raises(function() cu.floor(z) end, { "floor", "not defined for c64" })
  S.raises(function() cu.trunc(bo) end, { "trunc", "not defined for bool" })
  S.raises(function() cu.sign(bo) end, { "sign", "bool" })
  S.raises(function() cu.positive(bo) end, { "positive", "bool" })
  S.raises(function() cu.signbit(z) end, { "signbit", "c64" })
  S.raises(function() cu.atan2(z, f) end, { "atan2", "c64" })
  S.raises(function() cu.copysign(z, z) end, { "copysign", "c64" })
  S.raises(function() cu.hypot(f, z) end, { "hypot" })
  S.raises(function() cu.logaddexp(z, 1) end, { "logaddexp" })
  S.raises(function() cu.isnan("x") end, { "bad argument #1 to 'isnan'" })
  S.raises(function() cu.atan2(f, "x") end, { "bad argument #2 to 'atan2'" })
  S.raises(function() cu.multiply({}, f) end, { "bad argument #1 to 'multiply'" })
  S.raises(function() cu.clip("x", 1, 2) end, { "bad argument #1 to 'clip'" })
  S.raises(function() cu.clip(f, "lo") end, { "bad argument #2 to 'clip'" })
  S.raises(function() cu.clip(f, 0, {}) end, { "bad argument #3 to 'clip'" })
  S.raises(function() cu.clip(f, 0, 1, { bogus = 1 }) end, { "bad argument #4 to 'clip'", "bogus" })
  S.raises(function() cu.isinf(f, { out = 3 }) end, { "bad argument #2 to 'isinf'", "out" })
  S.raises(function() cu.isnan(f, { out = cu.empty({ 2 }, "bool") }) end, { "shape" })
  S.raises(function() cu.atan2(f, f, { out = cu.empty({ 1 }, "i32") }) end, { "f32", "i32" })
  S.raises(function() cu.clip(f, cu.array({ 1, 2 }, "f32"), 0, { out = cu.empty({ 1 }, "f32") }) end,
    { "shape" })
  S.raises(function() cu.logical_and(cu.array({ 1, 2 }, "f32"), cu.array({ 1, 2, 3 }, "f32")) end, { "broadcast" })
end)

os.exit(T.run())
