-- Complex functions at special and large values (C99 Annex G, as numpy computes them), complex
-- pow at zero and whole exponents, and maximum/minimum of complex values (numpy's order), against
-- numpy's results in complex_special_data.lua (made by gen_complex_special.py; numpy is not
-- needed to run this test). Every pair of parts from {+-0, a subnormal, 0.75, -2, values whose
-- exponentials overflow, values near the type's maximum, +-inf, NaN} goes through exp log sqrt
-- sin cos tanh, for c64 and c128.
--
-- A part matches numpy's when both are NaN, or both are the same infinity or the same signed
-- zero, or (finite and nonzero) within 8 ulp of numpy's (ulps of subnormals as of the smallest
-- normal number): the platform math libraries differ in
-- the last bits, Annex G's special values do not.
package.path = (arg and arg[0] and arg[0]:match("^(.*)[/\\]") or "tests/lua") .. "/?.lua;" .. package.path
local T = require "cu.testing"
local DATA = require "complex_special_data"

local EPS = { c64 = 2.0 ^ -23, c128 = 2.0 ^ -52 }
local TINY = { c64 = 2.0 ^ -126, c128 = 2.0 ^ -1022 } -- the smallest normal numbers

local function complex_array(flat, dtype)
  local t = {}
  for i = 1, #flat, 2 do t[#t + 1] = cu.complex(flat[i], flat[i + 1]) end
  return cu.array(t, dtype)
end

local function fmt(x)
  if x ~= x then return "nan" end
  if x == 0 then return 1 / x < 0 and "-0" or "0" end
  return string.format("%.9g", x)
end

-- "re+imj", as numpy prints it.
local function fmtc(re, im)
  local i = fmt(im)
  return fmt(re) .. (i:sub(1, 1) == "-" and "" or "+") .. i .. "j"
end

local function part_matches(got, want, eps, tiny)
  if want ~= want then return got ~= got end
  if want == 0 then return got == 0 and (1 / got) == (1 / want) end
  if want == math.huge or want == -math.huge then return got == want end
  if got ~= got or got == math.huge or got == -math.huge then return false end
  return math.abs(got - want) <= 8 * eps * math.max(math.abs(want), tiny)
end

-- Checks the complex array `r` against the flat expected list, naming the inputs on failure.
local function check(r, want, dtype, what, describe_input)
  T.eq(r.dtype, dtype, what .. " dtype")
  local got = r:totable()
  T.eq(#got, #want // 2, what .. " size")
  local bad = {}
  for i, z in ipairs(got) do
    local wr, wi = want[2 * i - 1], want[2 * i]
    if not (part_matches(z.re, wr, EPS[dtype], TINY[dtype]) and
        part_matches(z.im, wi, EPS[dtype], TINY[dtype])) then
      bad[#bad + 1] = string.format("%s: %s, numpy %s", describe_input(i), fmtc(z.re, z.im),
        fmtc(wr, wi))
    end
  end
  if #bad > 0 then
    error(string.format("%s %s: %d of %d differ from numpy:\n  %s", what, dtype, #bad, #got,
      table.concat(bad, "\n  ", 1, math.min(#bad, 25))), 2)
  end
end

local function describer(flat, name)
  return function(i)
    return string.format("%s(%s)", name, fmtc(flat[2 * i - 1], flat[2 * i]))
  end
end

for _, dtype in ipairs({ "c128", "c64" }) do
  local D = DATA[dtype]
  for _, f in ipairs({ "exp", "log", "sqrt", "sin", "cos", "tanh" }) do
    T.case(string.format("%s %s at special and large values follows Annex G as numpy", f, dtype), function()
      local z = complex_array(D.inputs, dtype)
      check(cu[f](z), D[f], dtype, f, describer(D.inputs, f))
    end)
  end

  T.case("pow " .. dtype .. ": zero bases, whole and complex exponents as numpy", function()
    local a, b = complex_array(D.pow_base, dtype), complex_array(D.pow_exponent, dtype)
    check(cu.pow(a, b), D.pow, dtype, "pow", function(i)
      return string.format("(%s)^(%s)", fmtc(D.pow_base[2 * i - 1], D.pow_base[2 * i]),
        fmtc(D.pow_exponent[2 * i - 1], D.pow_exponent[2 * i]))
    end)
  end)

  T.case("maximum and minimum of " .. dtype .. " in numpy's order, NaN propagating", function()
    local a, b = complex_array(D.order_a, dtype), complex_array(D.order_b, dtype)
    local desc = function(i)
      return string.format("(%s, %s)", fmtc(D.order_a[2 * i - 1], D.order_a[2 * i]),
        fmtc(D.order_b[2 * i - 1], D.order_b[2 * i]))
    end
    check(cu.maximum(a, b), D.maximum, dtype, "maximum", desc)
    check(cu.minimum(a, b), D.minimum, dtype, "minimum", desc)
    check(a:maximum(b), D.maximum, dtype, "a:maximum(b)", desc)
  end)
end

T.case("cu.complex scalar arithmetic computes as a one-element c128 array", function()
  local D = DATA.c128
  local bad = {}
  -- On the host backend the array runs the very functors the scalar does: the same bits. The
  -- CUDA kernels use the device's exp/log/sin/cos, which may differ in the last bits.
  local tol = cu.backend == "host" and 0 or 8 * 2.0 ^ -52
  local function same(x, y)
    if x ~= x then return y ~= y end
    if x == 0 or y == 0 or x == math.huge or x == -math.huge then
      return x == y and 1 / x == 1 / y
    end
    return math.abs(x - y) <= tol * math.abs(y)
  end
  local function compare(what, s, arr)
    local e = arr:item()
    if not (same(s.re, e.re) and same(s.im, e.im)) then
      bad[#bad + 1] = string.format("%s: scalar %s, array %s", what, fmtc(s.re, s.im), fmtc(e.re, e.im))
    end
  end
  for i = 1, #D.pow_base // 2 do
    local a = cu.complex(D.pow_base[2 * i - 1], D.pow_base[2 * i])
    local b = cu.complex(D.pow_exponent[2 * i - 1], D.pow_exponent[2 * i])
    local arr = cu.array({ a }, "c128")
    local what = string.format("(%s) ^ (%s)", fmtc(a.re, a.im), fmtc(b.re, b.im))
    compare(what, a ^ b, cu.pow(arr, b))
    compare(what:gsub("%^", "/"), a / b, cu.div(arr, b))
    compare(what:gsub("%^", "*"), a * b, cu.mul(arr, b))
  end
  T.eq(bad, {}, "scalar against array")
  -- a real number on either side, and scalar-only 0^-1
  local z = cu.complex(0, 0) ^ -1
  T.truthy(z.re ~= z.re and z.im ~= z.im, "0^-1 is nan+nanj, as for arrays")
  T.eq((cu.complex(0, 0) ^ 0).re, 1.0, "0^0")
  T.eq((cu.complex(0, 0) ^ 2.5).re, 0.0, "0^2.5")
  T.eq((2 ^ cu.complex(2, 0)).re, 4.0, "2^(2+0i)")
  local w = cu.complex(1, 2) ^ 3
  T.eq({ w.re, w.im }, { -11.0, -2.0 }, "whole exponents by repeated products, exact")
end)

T.case("the issue's examples", function()
  local z = cu.pow(cu.array({ cu.complex(0, 0) }, "c128"), cu.complex(-1, 0)):item()
  T.truthy(z.re ~= z.re and z.im ~= z.im, "0^-1 is nan+nanj as numpy, not 0")
  T.eq(cu.pow(cu.array({ cu.complex(0, 0) }, "c128"), cu.complex(0, 0)):item().re, 1.0, "0^0")
  T.eq(cu.pow(cu.array({ cu.complex(0, 0) }, "c64"), 2.5):item().re, 0.0, "0^2.5")
  local s = cu.sin(cu.array({ cu.complex(0, 100) }, "c64")):item()
  T.eq({ s.re, s.im }, { 0.0, math.huge }, "sin(0+100i) in c64")
  local c = cu.cos(cu.array({ cu.complex(0, 1e5) }, "c128")):item()
  T.eq(c.re, math.huge, "cos(0+1e5i) real part")
  T.eq(c.im, 0.0, "cos(0+1e5i) imaginary part")
  T.truthy(1 / c.im < 0, "cos(0+1e5i) imaginary part is -0")
  local e = cu.exp(cu.array({ cu.complex(-math.huge, -math.huge) }, "c128")):item()
  T.truthy(e.re == 0 and e.im == 0 and 1 / e.im < 0, "exp(-inf-inf i) is 0-0i")
  local q = cu.sqrt(cu.array({ cu.complex(1, -math.huge) }, "c64")):item()
  T.eq({ q.re, q.im }, { math.huge, -math.huge }, "sqrt(1-inf i)")
  -- maximum of mixed real and complex operands promotes to complex
  local m = cu.maximum(cu.array({ 1, 3 }, "f64"), cu.array({ cu.complex(1, 1), cu.complex(2, 0) }))
  T.eq(m.dtype, "c128")
  T.eq(m:totable()[1].im, 1.0, "1 < 1+1i")
  T.eq(m:totable()[2].re, 3.0, "3 > 2")
end)

os.exit(T.run())
