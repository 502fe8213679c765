-- Every element-wise function of the Array API standard (2023.12) against numpy itself
-- (python3-numpy, tests/numpy/npref.lua): every dtype, special values (NaN, +-inf, -0.0, the
-- integer limits, shift counts out of range, zero divisors), all pairs of special values for the
-- binary functions (broadcast {n, 1} with {1, n}), mixed dtypes, 0-d and empty arrays, transposed
-- and sliced views. Exact where numpy is exact (integers, bools, rounding, sign, comparisons,
-- bitwise, predicates, + - * /, sqrt); transcendental functions within a few ulps. Exits 77
-- (skipped) without python3 + numpy. Usage: culua --backend host test_elementwise_numpy.lua (also
-- --backend cuda: the GPU's functions against numpy, ctest numpy.elementwise.cuda, label gpu).
local here = arg and arg[0] and arg[0]:match("^(.*)[/\\]") or "tests/numpy"
package.path = here .. "/?.lua;" .. package.path
local T = require "cu.testing"
local NP = require "npref"
if not NP.python() and cu.backend == "cuda" then
  print("python3 with numpy is not available: skipped")
  os.exit(69) -- the GPU run's skip code (tests/CMakeLists.txt)
end
NP.require()

local SEED = tonumber(os.getenv("CULUA_TEST_SEED") or "") or os.time()
print(string.format("test_elementwise_numpy: seed %d (CULUA_TEST_SEED=%d repeats this run)", SEED, SEED))
math.randomseed(SEED)

local DTYPES = { "bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "bf16", "f32",
  "f64", "c64", "c128" }
local KIND = { bool = "bool", i8 = "int", i16 = "int", i32 = "int", i64 = "int", u8 = "int",
  u16 = "int", u32 = "int", u64 = "int", f16 = "float", bf16 = "float", f32 = "float", f64 = "float",
  c64 = "complex", c128 = "complex" }
local BITS = { i8 = 8, i16 = 16, i32 = 32, i64 = 64, u8 = 8, u16 = 16, u32 = 32, u64 = 64 }
local SIGNED = { i8 = true, i16 = true, i32 = true, i64 = true }
local EPS = { f16 = 2.0 ^ -10, bf16 = 2.0 ^ -7, f32 = 2.0 ^ -23, f64 = 2.0 ^ -52, c64 = 2.0 ^ -23,
  c128 = 2.0 ^ -52 }
local nan, inf = math.abs(0 / 0), math.huge -- a NaN without its sign bit (numpy reads "nan" so)

local function int_range(t)
  local b = BITS[t]
  if t == "u64" then return 0, math.maxinteger end -- (values from 2^63 up: tests/lua/test_u64.lua)
  if b == 64 then return math.mininteger, math.maxinteger end
  if SIGNED[t] then return -(1 << (b - 1)), (1 << (b - 1)) - 1 end
  return 0, (1 << b) - 1
end

-- Special values of each kind, and random ones.
local FLOAT_SPECIAL = { 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0, -3.0, inf, -inf, nan,
  1e-30, 100.0, -100.0, 1e10, 0.9999 }
local PART_SPECIAL = { 0.0, -0.0, 1.0, -1.0, 0.5, 2.5, -3.0, inf, -inf, nan, 1e-20, 1e20 }

local function int_special(t)
  local lo, hi = int_range(t)
  local out, seen = {}, {}
  local function add(v)
    if v >= lo and v <= hi and not seen[v] then
      seen[v] = true
      out[#out + 1] = v
    end
  end
  for _, v in ipairs({ 0, 1, -1, 2, -2, 3, -3, 7, -7, 8, 15, 16, 31, 32, 63, 64, 100, -100 }) do add(v) end
  add(lo)
  add(hi)
  add(lo + 1)
  add(hi - 1)
  return out
end

local function random_value(t)
  local k = KIND[t]
  if k == "bool" then return math.random() < 0.5 end
  if k == "int" then
    local lo, hi = int_range(t)
    if math.random() < 0.5 then return math.random(math.max(lo, -50), math.min(hi, 50)) end
    return math.random(lo, hi)
  end
  local function r()
    local u = math.random()
    if u < 0.4 then return (math.random() * 2 - 1) end
    if u < 0.8 then return (math.random() * 2 - 1) * 10 end
    return (math.random() * 2 - 1) * 1000
  end
  if k == "complex" then return cu.complex(r(), r()) end
  return r()
end

-- The values of the unary tests: specials then random ones.
local function values_of(t, nrandom)
  local v = {}
  local k = KIND[t]
  if k == "bool" then
    v = { true, false }
  elseif k == "int" then
    v = int_special(t)
  elseif k == "float" then
    for i, x in ipairs(FLOAT_SPECIAL) do v[i] = x end
  else
    for _, re in ipairs(PART_SPECIAL) do
      for _, im in ipairs(PART_SPECIAL) do v[#v + 1] = cu.complex(re, im) end
    end
  end
  for _ = 1, nrandom do v[#v + 1] = random_value(t) end
  return v
end

local function arr(values, t)
  return cu.array(values, t)
end

-- Functions: culua name -> numpy expression.
local UNARY = {
  abs = "np.abs(a)", acos = "np.arccos(a)", acosh = "np.arccosh(a)", asin = "np.arcsin(a)",
  asinh = "np.arcsinh(a)", atan = "np.arctan(a)", atanh = "np.arctanh(a)",
  bitwise_invert = "np.invert(a)", ceil = "np.ceil(a)", conj = "np.conj(a)", cos = "np.cos(a)",
  cosh = "np.cosh(a)", exp = "np.exp(a)", expm1 = "np.expm1(a)", floor = "np.floor(a)",
  imag = "np.imag(a)", isfinite = "np.isfinite(a)", isinf = "np.isinf(a)", isnan = "np.isnan(a)",
  log = "np.log(a)", log1p = "np.log1p(a)", log2 = "np.log2(a)", log10 = "np.log10(a)",
  logical_not = "np.logical_not(a)", negative = "np.negative(a)", positive = "np.positive(a)",
  real = "np.real(a)", round = "np.round(a)", sign = "np.sign(a)", signbit = "np.signbit(a)",
  sin = "np.sin(a)", sinh = "np.sinh(a)", square = "np.square(a)", sqrt = "np.sqrt(a)",
  tan = "np.tan(a)", tanh = "np.tanh(a)", trunc = "np.trunc(a)",
}
local BINARY = {
  add = "np.add(a, b)", atan2 = "np.arctan2(a, b)", bitwise_and = "np.bitwise_and(a, b)",
  bitwise_left_shift = "np.left_shift(a, b)", bitwise_or = "np.bitwise_or(a, b)",
  bitwise_right_shift = "np.right_shift(a, b)", bitwise_xor = "np.bitwise_xor(a, b)",
  copysign = "np.copysign(a, b)", divide = "np.divide(a, b)", equal = "np.equal(a, b)",
  floor_divide = "np.floor_divide(a, b)", greater = "np.greater(a, b)",
  greater_equal = "np.greater_equal(a, b)", hypot = "np.hypot(a, b)", less = "np.less(a, b)",
  less_equal = "np.less_equal(a, b)", logaddexp = "np.logaddexp(a, b)",
  logical_and = "np.logical_and(a, b)", logical_or = "np.logical_or(a, b)",
  logical_xor = "np.logical_xor(a, b)", maximum = "np.maximum(a, b)", minimum = "np.minimum(a, b)",
  multiply = "np.multiply(a, b)", not_equal = "np.not_equal(a, b)", pow = "np.power(a, b)",
  remainder = "np.remainder(a, b)", subtract = "np.subtract(a, b)",
}

-- Complex products as culua computes them, (ar br - ai bi, ar bi + ai br), each product rounded
-- (C99's formula without contraction; numpy 1.x's), evaluated with numpy's real arithmetic. numpy
-- 2 on CPUs with FMA instructions fuses a product into the sum in its complex multiply and square
-- (a last-bit difference, and (1e20, inf)^2 = (-inf, inf) in c64 where the rounded products give
-- (NaN, inf)), so np.multiply and np.square of complex values depend on numpy's version and CPU.
local CMUL = "(lambda x, y: (lambda r, i: np.stack([r, i], -1).view(x.dtype)[..., 0])" ..
  "(x.real * y.real - x.imag * y.imag, x.real * y.imag + x.imag * y.real))" ..
  "(*np.broadcast_arrays(*[np.asarray(v, np.result_type(a, b)) for v in (a, b)]))"
local CSQUARE = "(lambda x: (lambda r, i: np.stack([r, i], -1).view(x.dtype)[..., 0])" ..
  "(x.real * x.real - x.imag * x.imag, x.real * x.imag + x.imag * x.real))(np.asarray(a))"
-- Complex pow of zero: 0 for every exponent with a positive real part and a finite imaginary part
-- (the standard's exp(b log 0), numpy 2's rule), NaN + NaN i for the others; numpy 1.x gives NaN +
-- NaN i unless the exponent is real and positive, so the reference states it for both versions
-- (docs/array-api.md).
local CPOW = "np.where((a == 0) & (b.real > 0) & np.isfinite(b.imag), np.asarray(0j, " ..
  "np.result_type(a, b)), np.power(a, b))"

-- Exact where numpy is exact; the others within TOL ulps (relative to the result, or to 1 for
-- results below 1: the libraries differ in the last bits near zeros of the function too).
local TRANSCENDENTAL = { acos = true, acosh = true, asin = true, asinh = true, atan = true,
  atanh = true, cos = true, cosh = true, exp = true, expm1 = true, log = true, log1p = true,
  log2 = true, log10 = true, sin = true, sinh = true, tan = true, tanh = true, atan2 = true,
  hypot = true, logaddexp = true, pow = true, abs = true }
local function ulps(t)
  if t == "f16" or t == "bf16" then return 1 end -- numpy computes f16 in f32 too, one rounding
  -- CUDA's functions: within 1 to 4 ulp of the exact value (the CUDA math documentation), glibc
  -- and numpy's within 1
  return cu.backend == "cuda" and 8 or 4
end

-- Known differences from numpy 1.24, deliberate (docs/array-api.md):
--   floor/ceil/trunc of integers keep the integer dtype (the standard; numpy 1.24 gives floats);
--   floor/ceil/trunc/round of bools are refused (the standard: numeric types only);
--   sign of complex numbers is z/|z| (the standard and numpy 2; numpy 1.24: the real part's sign);
--   floor_divide/remainder of bools are refused (numpy computes them in i8);
--   integer pow with negative exponents gives 0, +-1 (numpy raises).
local function deviation(fn, t)
  local k = KIND[t]
  if (fn == "floor" or fn == "ceil" or fn == "trunc") and k == "int" then return "dtype" end
  if (fn == "floor" or fn == "ceil" or fn == "trunc" or fn == "round") and k == "bool" then
    return "refused"
  end
  if (fn == "floor_divide" or fn == "remainder") and k == "bool" then return "refused" end
  --   ordering comparisons of complex numbers are refused (the standard: real numbers only;
  --   numpy orders them lexicographically);
  if (fn == "less" or fn == "less_equal" or fn == "greater" or fn == "greater_equal") and k == "complex" then
    return "refused"
  end
  --   conj of bools keeps bool (numpy 1.24 gives i8).
  if fn == "conj" and k == "bool" then return "dtype" end
  return nil
end

-- Comparison of culua's result with numpy's, part by part for complex values, with a scale of
-- max(|re|, |im|, 1) per element for transcendental complex functions.
local function decode_values(d)
  local out = {}
  for i, v in ipairs(d.values) do out[i] = v end
  return out
end
local function same_float(x, y, tol, scale, zero_sign)
  if x ~= x or y ~= y then return x ~= x and y ~= y end
  if x == y then
    if x == 0 and tol == 0 and zero_sign ~= false then return (1 / x > 0) == (1 / y > 0) end
    return true
  end
  if x == inf or x == -inf or y == inf or y == -inf then return false end
  return math.abs(x - y) <= tol * (scale or math.max(math.abs(y), 1))
end
local function fnum(v)
  if v == "nan" then return nan end
  if v == "inf" then return inf end
  if v == "-inf" then return -inf end
  if v == "-0" then return -0.0 end
  return v
end

local failures = {}
local function compare(label, got, ref, opts)
  if ref.error then return false, "numpy raised " .. ref.error end
  local mine = NP.describe(got)
  if opts.dtype ~= false and mine.dtype ~= ref.dtype then
    return false, string.format("dtype %s, numpy %s", mine.dtype, ref.dtype)
  end
  if #mine.shape ~= #ref.shape then return false, "rank differs" end
  for i, n in ipairs(ref.shape) do
    if mine.shape[i] ~= n then return false, string.format("shape[%d] %d, numpy %d", i, mine.shape[i], n) end
  end
  local have = decode_values(mine)
  local tol = opts.tol or 0
  for i, want in ipairs(ref.values) do
    local h = have[i]
    if type(h) == "boolean" and type(want) ~= "boolean" then h = h and 1 or 0 end
    local ok
    if type(want) == "table" then
      local hr, hi = fnum(h[1]), fnum(h[2])
      local wr, wi = want[1], want[2]
      local scale
      if tol > 0 and wr == wr and wi == wi then scale = math.max(math.abs(wr), math.abs(wi), 1) end
      ok = same_float(hr, wr, tol, scale, opts.zero_sign) and same_float(hi, wi, tol, scale, opts.zero_sign)
    elseif type(want) == "boolean" then
      ok = h == want
    elseif math.type(want) == "integer" and math.type(h) == "integer" then
      ok = h == want
    else
      ok = same_float(fnum(h) + 0.0, want + 0.0, tol)
    end
    if not ok then
      local show = function(v)
        if type(v) == "table" then return string.format("(%s, %s)", tostring(v[1]), tostring(v[2])) end
        return tostring(v)
      end
      return false, string.format("%s: element %d: %s, numpy %s", label, i, show(h), show(want))
    end
  end
  return true
end

-- Cases -------------------------------------------------------------------------------------------
-- Each case: culua's result (or its error) now, numpy's expression evaluated later in one batch.
local cases, checks = {}, {}
local function add_case(label, expr, inputs, run, opts)
  local ok, result = pcall(run)
  local desc = {}
  for k, v in pairs(inputs) do desc[k] = NP.describe(v) end
  cases[#cases + 1] = { expr = expr, inputs = desc }
  checks[#checks + 1] = { label = label, ok = ok, result = result, opts = opts or {} }
end

local function tol_for(fn, t)
  -- complex sqrt and division: other algorithms than numpy's (glibc's csqrt, numpy's division)
  local inexact = KIND[t] == "complex" and (fn == "sqrt" or fn == "divide")
  if not TRANSCENDENTAL[fn] and not inexact then return 0 end
  if fn == "abs" and KIND[t] ~= "complex" then return 0 end
  local base = t
  if KIND[t] ~= "float" and KIND[t] ~= "complex" then
    -- integers compute in the float type numpy picks: f16 for 1-byte types, f32 for 2, else f64
    base = (t == "bool" or BITS[t] == 8) and "f16" or BITS[t] == 16 and "f32" or "f64"
  end
  local k = ulps(base)
  if base == "c64" or base == "c128" then k = 8 end
  if fn == "pow" then k = k * 2 end
  return k * EPS[base]
end

-- Unary functions: every dtype; values with specials; a 2-D transposed view and a slice for
-- f64, i32 and c128; 0-d and empty for f64 and i64.
local names = {}
for name in pairs(UNARY) do names[#names + 1] = name end
table.sort(names)
for _, fn in ipairs(names) do
  for _, t in ipairs(DTYPES) do
    local vals = values_of(t, 24)
    local a = arr(vals, t)
    local dev = deviation(fn, t)
    local expr = UNARY[fn]
    if fn == "square" and KIND[t] == "complex" then expr = CSQUARE end
    local label = string.format("%s(%s)", fn, t)
    local opts = { tol = tol_for(fn, t) }
    if dev == "dtype" then opts.dtype = false end
    if fn == "sign" and KIND[t] == "complex" then
      -- z / |z|: compared with numpy's own complex division on finite values only.
      local finite = {}
      for _, z in ipairs(vals) do
        if z.re == z.re and z.im == z.im and math.abs(z.re) < inf and math.abs(z.im) < inf then
          finite[#finite + 1] = z
        end
      end
      vals = finite
      a = arr(finite, t)
      expr = "np.where(a == 0, 0, a / np.abs(a)).astype(a.dtype)"
      -- numpy divides by |z| + 0i (Smith's algorithm, a few ulps from x / |z|, and -0 turns +0)
      opts.tol = 4 * EPS[t]
      opts.zero_sign = false
    end
    if t == "bf16" and opts.tol == 0 and KIND[t] == "float" then
      -- numpy computes in f32 what culua rounds to bf16: one bf16 rounding apart
      opts.tol = EPS.bf16
    end
    add_case(label, expr, { a = a }, function() return cu[fn](a) end, opts)
    checks[#checks].dev = dev
    checks[#checks].dtype_in = t
    if t == "f64" or t == "i32" or t == "c128" then
      local n = #vals - #vals % 4
      local v2 = {}
      for i = 1, n do v2[i] = vals[i] end
      local m = arr(v2, t):reshape({ 4, n // 4 })
      local tr = m:transpose(1, 2)
      add_case(label .. " transposed", expr, { a = tr }, function() return tr[fn](tr) end, opts)
      checks[#checks].dev = dev
      local sl = m:narrow(2, 2, n // 4 - 2)
      add_case(label .. " sliced", expr, { a = sl }, function() return cu[fn](sl) end, opts)
      checks[#checks].dev = dev
    end
    if t == "f64" or t == "i64" then
      local z = cu.full({}, KIND[t] == "int" and 3 or 0.75, t)
      add_case(label .. " 0-d", expr, { a = z }, function() return cu[fn](z) end, opts)
      checks[#checks].dev = dev
      local e = cu.zeros({ 0, 3 }, t)
      add_case(label .. " empty", expr, { a = e }, function() return cu[fn](e) end, opts)
      checks[#checks].dev = dev
    end
  end
end

-- Binary functions: every dtype with itself over all pairs of special values ({n, 1} with
-- {1, n}) plus random pairs; mixed dtypes; shift counts out of range; integer powers with
-- non-negative exponents (numpy raises for negative ones).
local MIXED = { { "i8", "u8" }, { "bool", "i32" }, { "u8", "u32" }, { "i16", "f16" }, { "i32", "f32" },
  { "i64", "f64" }, { "f32", "f64" }, { "f16", "f32" }, { "u32", "i32" }, { "f32", "c64" },
  { "i8", "c128" }, { "bool", "f64" }, { "u16", "i8" }, { "u16", "i16" }, { "u16", "f16" },
  { "u64", "i64" }, { "u64", "u8" }, { "u64", "i8" }, { "u64", "f32" }, { "u16", "u32" } }
local function specials(t)
  local k = KIND[t]
  if k == "bool" then return { true, false } end
  if k == "int" then return int_special(t) end
  if k == "float" then return FLOAT_SPECIAL end
  local v = {}
  for _, re in ipairs({ 0.0, -0.0, 1.0, -2.5, inf, nan }) do
    for _, im in ipairs({ 0.0, -1.0, 2.0, -inf }) do v[#v + 1] = cu.complex(re, im) end
  end
  return v
end
local bnames = {}
for name in pairs(BINARY) do bnames[#bnames + 1] = name end
table.sort(bnames)
for _, fn in ipairs(bnames) do
  local expr = BINARY[fn]
  for _, t in ipairs(DTYPES) do
    local sp = specials(t)
    local b_sp = sp
    if fn == "pow" and KIND[t] == "int" then
      b_sp = {}
      for _, v in ipairs(sp) do if v >= 0 and v < 70 then b_sp[#b_sp + 1] = v end end
    elseif fn == "pow" and KIND[t] == "complex" then
      -- complex operands with an infinite part: numpy's pow (glibc's cpow) recovers infinities in
      -- C99's complex product, culua's gives NaN (docs/array-api.md); the rest of the grid
      b_sp = {}
      for _, v in ipairs(sp) do
        if math.abs(v.re) < inf and math.abs(v.im) < inf then b_sp[#b_sp + 1] = v end
      end
      sp = b_sp
    end
    local a = arr(sp, t):reshape({ #sp, 1 })
    local b = arr(b_sp, t):reshape({ 1, #b_sp })
    local label = string.format("%s(%s, %s) special pairs", fn, t, t)
    local pair_expr = expr
    if KIND[t] == "complex" and fn == "multiply" then pair_expr = CMUL end
    if KIND[t] == "complex" and fn == "pow" then pair_expr = CPOW end
    local opts = { tol = tol_for(fn, t) }
    if t == "bf16" and opts.tol == 0 then opts.tol = EPS.bf16 end
    add_case(label, pair_expr, { a = a, b = b }, function() return cu[fn](a, b) end, opts)
    checks[#checks].dev = deviation(fn, t)
    -- random pairs, the second operand transposed
    local n = 12
    local ra, rb = {}, {}
    for i = 1, n do
      ra[i] = random_value(t)
      local v = random_value(t)
      if fn == "pow" and KIND[t] == "int" then v = math.random(0, 9) end
      rb[i] = v
    end
    local x = arr(ra, t):reshape({ 3, 4 })
    local y = arr(rb, t):reshape({ 4, 3 }):transpose(1, 2)
    local ropts = opts
    if fn == "pow" and KIND[t] == "complex" then
      -- a^b = exp(b log a): an error of a few ulps in log a is multiplied by |b| in the exponent,
      -- and an absolute error e in the exponent is a relative error e in the result (glibc's cpow
      -- and CUDA's exp/log differ so); the tolerance grows with |b| (|log |a|| + pi).
      local amp = 1
      for i = 1, n do
        local za, zb = ra[i], rb[i]
        local r = math.sqrt(za.re * za.re + za.im * za.im)
        local bb = math.sqrt(zb.re * zb.re + zb.im * zb.im)
        if r > 0 then amp = math.max(amp, 1 + bb * (math.abs(math.log(r)) + math.pi)) end
      end
      ropts = { tol = opts.tol * amp }
    end
    add_case(label:gsub("special pairs", "random, transposed"), pair_expr, { a = x, b = y },
      function() return cu[fn](x, y) end, ropts)
    checks[#checks].dev = deviation(fn, t)
  end
  for _, p in ipairs(MIXED) do
    local x = arr(values_of(p[1], 6), p[1])
    local yv = values_of(p[2], 0)
    local y = arr({ yv[3], yv[4], yv[5], yv[6], yv[1], yv[2] }, p[2])
    x = x:narrow(1, 1, 6)
    if fn == "pow" and KIND[p[1]] ~= "float" and KIND[p[2]] ~= "float" and KIND[p[2]] ~= "complex" then
      y = arr({ 0, 1, 2, 3, 1, 0 }, p[2])
    end
    local t = (KIND[p[2]] == "complex" or KIND[p[1]] == "complex") and "c128" or "f64"
    local opts = { tol = TRANSCENDENTAL[fn] and 16 * EPS[t == "c128" and "c64" or "f32"] or 0 }
    if p[1] == "f16" or p[2] == "f16" then opts.tol = math.max(opts.tol, TRANSCENDENTAL[fn] and EPS.f16 or 0) end
    local mixed_expr = expr
    if t == "c128" and fn == "multiply" then mixed_expr = CMUL end
    if t == "c128" and fn == "pow" then mixed_expr = CPOW end
    add_case(string.format("%s(%s, %s)", fn, p[1], p[2]), mixed_expr, { a = x, b = y },
      function() return cu[fn](x, y) end, opts)
    local kinds = KIND[p[1]] .. KIND[p[2]]
    local rep = kinds:find("complex") and "c128" or kinds:find("float") and "f64" or "i32"
    checks[#checks].dev = deviation(fn, rep) == "refused" and "refused" or nil
  end
end

-- Shift counts: negative, zero, within and past the width, for every integer dtype.
for _, t in ipairs({ "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64" }) do
  local lo, hi = int_range(t)
  local a = arr({ 1, -1 >= lo and -1 or 3, lo, hi, 5, lo + 1 }, t):reshape({ 6, 1 })
  local counts = { 0, 1, BITS[t] - 1, BITS[t], BITS[t] + 3 }
  if SIGNED[t] then counts[#counts + 1] = -1 end
  local b = arr(counts, t):reshape({ 1, #counts })
  for _, fn in ipairs({ "bitwise_left_shift", "bitwise_right_shift" }) do
    add_case(string.format("%s(%s) counts", fn, t), BINARY[fn], { a = a, b = b },
      function() return cu[fn](a, b) end, {})
  end
end

-- clip: array bounds (numpy promotes them), lo > hi, NaN in x and in the bounds.
for _, t in ipairs({ "i8", "i32", "u8", "f32", "f64", "f16" }) do
  local x = arr(values_of(t, 10), t)
  local n = x.shape[1]
  local lov, hiv = {}, {}
  for i = 1, n do
    lov[i] = KIND[t] == "int" and math.random(-5, 5) or (i == 3 and nan or math.random() * 4 - 2)
    hiv[i] = KIND[t] == "int" and math.random(-5, 5) or math.random() * 4 - 2 -- sometimes below lo
  end
  if KIND[t] == "int" and not SIGNED[t] then
    for i = 1, n do lov[i], hiv[i] = math.abs(lov[i]), math.abs(hiv[i]) end
  end
  local lo, hi = arr(lov, t), arr(hiv, t)
  add_case("clip(" .. t .. ")", "np.clip(a, b, c)", { a = x, b = lo, c = hi },
    function() return cu.clip(x, lo, hi) end, {})
  local hi2 = arr({ hiv[1] }, t)
  add_case("clip(" .. t .. ", max only)", "np.minimum(a, c)", { a = x, c = hi2 },
    function() return cu.clip(x, nil, hi2) end, {})
  local m = x:narrow(1, 1, n - n % 2):reshape({ 2, (n - n % 2) // 2 }):transpose(1, 2)
  local lo2 = arr({ lov[1], lov[2] }, t)
  add_case("clip(" .. t .. ", transposed, broadcast min)", "np.clip(a, b, None)", { a = m, b = lo2 },
    function() return cu.clip(m, lo2) end, {})
end

-- Evaluate and compare ---------------------------------------------------------------------------
local refs = NP.run(cases)
local compared, refused = 0, 0
for i, c in ipairs(checks) do
  local ref = refs[i]
  local good, why = true, nil
  if not c.ok then
    if ref.error or c.dev == "refused" then
      refused = refused + 1
    else
      good, why = false, "culua raised " .. tostring(c.result) .. " where numpy gives " .. tostring(ref.dtype)
    end
  elseif ref.error then
    good, why = false, "numpy raised " .. ref.error .. " where culua gives " .. c.result.dtype
  else
    if c.dev == "refused" then
      good, why = false, "expected a refusal"
    else
      good, why = compare(c.label, c.result, ref, c.opts)
      if good and c.dev == "dtype" and c.dtype_in and c.result.dtype ~= c.dtype_in then
        good, why = false, "dtype not kept: " .. c.result.dtype
      end
      compared = compared + 1
    end
  end
  if not good then failures[#failures + 1] = c.label .. ": " .. tostring(why) end
end

T.case("element-wise functions agree with numpy", function()
  if #failures > 0 then
    local shown = {}
    for i = 1, math.min(#failures, 60) do shown[i] = failures[i] end
    error(string.format("%d of %d cases differ:\n%s", #failures, #checks, table.concat(shown, "\n")), 0)
  end
  T.truthy(compared > 900, "compared " .. compared .. " results")
  T.truthy(refused > 50, "refused " .. refused .. " cases, as numpy does")
end)
print(string.format("%d cases: %d compared with numpy, %d refused by both", #checks, compared, refused))
os.exit(T.run())
