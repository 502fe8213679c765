-- Elementwise math of the `cu` module against references computed in plain Lua (f64): every
-- binary and unary operation and where(), every dtype where the operation is defined, fresh
-- random data and random shapes on every run (broadcasting, 0-d, empty, non-contiguous views,
-- scalars on either side), mixed dtypes with the result dtype checked against an independent
-- promotion table, out= (same dtype, wider dtype, in place, overlapping in another layout),
-- stream=, host arrays, the operators and methods, and the error cases.
--
-- Runs on both backends (lua.host.test_elementwise, lua.cuda.test_elementwise). The seed is
-- printed at the start and in every failure; CULUA_TEST_SEED=<n> repeats a run.
package.path = (arg and arg[0] and arg[0]:match("^(.*)[/\\]") or "tests/lua") .. "/?.lua;" .. package.path
local T = require "cu.testing"
local S = require "support"

-- Tolerances -----------------------------------------------------------------------------------
--
-- Exact (bit for bit, NaN equal to NaN) on every backend:
--   integers and bools: every operation (wrapping + - * and pow, Python-style // and % with 0 for
--     a zero divisor, maximum/minimum, comparisons, neg, abs);
--   comparisons, where, maximum/minimum, neg/abs/conj/real/imag of every dtype;
--   floats: + - * / and sqrt. IEEE operations are correctly rounded and the kernels compute f16
--     and bf16 in f32, rounding once on store; the reference replicates that: for f32,
--     round_f32(x op y) computed in f64 (double rounding is harmless for + - * / sqrt since
--     53 >= 2*24 + 2); for f16/bf16, round_f16(round_f32(x op y)); floor division and modulo
--     follow numpy's divmod (fmod is exact) with every step rounded to the compute type;
--   complex + - * / (Smith's algorithm): the kernels are compiled without FMA contraction
--     (-ffp-contract=off, nvcc --fmad=false), so each part is replicated step by step.
-- Within a tolerance (the libraries differ in the last bits):
--   transcendental real functions (exp log sin cos tanh pow), in ulps of the result dtype at the
--   exact value: f64 8 ulp (CUDA: exp/log 1 ulp, sin/cos/tanh/pow 2 ulp; glibc <= 1 ulp; the
--   f64 reference is itself computed in f64: libm's exp/log/sin/cos/pow (<= 1 ulp) and tanh from
--   a sinh series (<= 3 ulp)); f32 4 ulp, pow 8 ulp (CUDA powf is documented at
--   4 ulp worst case, the others at <= 2 ulp; the reference in f64 is exact at f32 precision);
--   f16 and bf16 1 ulp (an f32 result within 4 f32 ulps, rounded once to 11/8 bits, is always
--   within 1 ulp of the exact value);
--   complex functions (exp log sqrt sin cos tanh pow abs): each part within rel * scale, scale
--   being the natural magnitude of the result (|z| for abs/sqrt, e^re for exp, cosh(im) for
--   sin/cos, ...): c64 rel 2^-19 (~2e-6), c128 rel 2^-47 (~7e-15).
local TOL = {
  f64 = { ulp = 8, pow_ulp = 8 },
  f32 = { ulp = 4, pow_ulp = 8 },
  f16 = { ulp = 1, pow_ulp = 1 },
  bf16 = { ulp = 1, pow_ulp = 1 },
  c64 = { rel = 2.0 ^ -19 },
  c128 = { rel = 2.0 ^ -47 },
}

-- Seed and cases -------------------------------------------------------------------------------

local SEED = tonumber(os.getenv("CULUA_TEST_SEED") or "") or
    ((os.time() * 1000003 + math.floor(os.clock() * 1e6)) % (1 << 40))
print(string.format("test_elementwise: seed %d (CULUA_TEST_SEED=%d repeats this run), backend %s",
  SEED, SEED, cu.backend))

local CHECKS = 0
local ncases = 0
local function case(name, fn)
  ncases = ncases + 1
  local k = ncases
  T.case(name, function()
    math.randomseed(SEED, k) -- each case reproducible on its own (filtered runs too)
    local ok, err = xpcall(fn, debug.traceback)
    if not ok then error(string.format("[seed %d] %s", SEED, tostring(err)), 0) end
  end)
end

local function check(cond, fmt, ...)
  CHECKS = CHECKS + 1
  if not cond then error(string.format(fmt, ...), 2) end
end

-- dtypes and promotion (independent of the C++: numpy's "smallest type both cast to safely") --

local KIND = {}
for _, t in ipairs(S.DTYPES) do KIND[t] = S.INFO[t].kind end
local PART = { c64 = "f32", c128 = "f64" }
local SIG = { f16 = 11, bf16 = 8, f32 = 24, f64 = 53 }     -- significand bits
local EXPMAX = { f16 = 15, bf16 = 127, f32 = 127, f64 = 1023 }
local ORDER = { "bool", "u8", "i8", "u16", "i16", "u32", "i32", "u64", "i64", "bf16", "f16", "f32",
  "f64", "c64", "c128" }

local function can_cast(from, to)
  if from == to then return true end
  local fk, tk = KIND[from], KIND[to]
  if fk == "bool" then return true end
  if tk == "bool" then return false end
  if tk == "complex" then
    if fk == "complex" then return can_cast(PART[from], PART[to]) end
    return can_cast(from, PART[to])
  end
  if fk == "complex" then return false end
  if fk == "int" then
    local fi = S.INFO[from]
    if tk == "int" then
      local ti = S.INFO[to]
      return ti.min <= fi.min and (fi.sat_max or fi.max) <= (ti.sat_max or ti.max)
    end
    if fi.bits == 64 then return to == "f64" end -- numpy counts i64 -> f64 as safe
    return (fi.signed and fi.bits - 1 or fi.bits) <= SIG[to]
  end
  -- float
  if tk ~= "float" then return false end
  return SIG[from] <= SIG[to] and EXPMAX[from] <= EXPMAX[to]
end

local function promote(a, b)
  for _, t in ipairs(ORDER) do
    if can_cast(a, t) and can_cast(b, t) then return t end
  end
  error("no common type for " .. a .. " and " .. b)
end

-- The type of an array of dtype `t` meeting a Lua scalar of kind `sk` (weak scalars, NEP 50).
local function weak(t, sk)
  local k = KIND[t]
  if sk == "bool" then return t end
  if sk == "int" then return k == "bool" and "i64" or t end
  if sk == "float" then return (k == "float" or k == "complex") and t or "f64" end
  -- complex
  if k == "complex" then return t end
  if k == "float" then return t == "f64" and "c128" or "c64" end
  return "c128"
end

local function scalar_kind(v)
  if type(v) == "boolean" then return "bool" end
  if type(v) == "userdata" then return "complex" end
  return math.type(v) == "integer" and "int" or "float"
end
local SCALAR_DTYPE = { bool = "bool", int = "i64", float = "f64", complex = "c128" }

-- The type a math function of an integer/bool array computes in.
local function float_for(t)
  local k = KIND[t]
  if k == "bool" then return "f16" end
  if k == "int" then
    local sz = S.INFO[t].size
    return sz == 1 and "f16" or sz == 2 and "f32" or "f64"
  end
  return t
end
local function real_of(t) return PART[t] or t end

local BINARY = { "add", "sub", "mul", "div", "pow", "maximum", "minimum", "floordiv", "mod", "eq",
  "ne", "lt", "le", "gt", "ge" }
local UNARY = { "neg", "abs", "exp", "log", "sqrt", "sin", "cos", "tanh", "conj", "real", "imag" }
local COMPARISON = { eq = true, ne = true, lt = true, le = true, gt = true, ge = true }
local TRANSCENDENTAL = { exp = true, log = true, sqrt = true, sin = true, cos = true, tanh = true }

-- Is `op` defined for the common type `t` (the contract in DESIGN/elementwise_ops.cuh)?
local function binary_defined(op, t)
  local k = KIND[t]
  if op == "add" or op == "mul" or op == "eq" or op == "ne" or op == "div" then return true end
  if op == "sub" or op == "pow" then return k ~= "bool" end
  if op == "floordiv" or op == "mod" then return k == "int" or k == "float" end
  if op == "maximum" or op == "minimum" then return true end -- complex: numpy's order
  return k ~= "complex" -- lt le gt ge
end

-- compute type, result type
local function binary_types(op, common)
  local ct = common
  if op == "div" and (KIND[ct] == "int" or KIND[ct] == "bool") then ct = "f64" end
  if op == "pow" and ct == "bool" then ct = "i8" end -- numpy's power has no bool loop
  return ct, COMPARISON[op] and "bool" or ct
end

-- Rounding ---------------------------------------------------------------------------------------

-- Rounding of one arithmetic step in the compute type (f16/bf16 compute in f32).
local function f64(x) return x end -- (S.f64 adds 0.0, which turns -0 into +0)
local RC = { f64 = f64, f32 = S.f32, f16 = S.f32, bf16 = S.f32, c64 = S.f32, c128 = f64 }
-- Rounding on store to the result dtype.
local RS = { f64 = f64, f32 = S.f32, f16 = S.f16, bf16 = S.bf16 }

local PREC = {
  f16 = { man = 10, emin = -14, max = 65504.0 },
  bf16 = { man = 7, emin = -126, max = (2 - 2 ^ -7) * 2.0 ^ 127 },
  f32 = { man = 23, emin = -126, max = (2 - 2 ^ -23) * 2.0 ^ 127 },
  f64 = { man = 52, emin = -1022, max = (2 - 2 ^ -52) * 2.0 ^ 1023 },
}

local function ulp(v, t)
  local p = PREC[t]
  local a = math.abs(v)
  local e = p.emin
  if a > 0 then
    e = math.floor(math.log(a, 2))
    if 2.0 ^ e > a then e = e - 1 end
    if 2.0 ^ (e + 1) <= a then e = e + 1 end
    if e < p.emin then e = p.emin end
  end
  return 2.0 ^ (e - p.man)
end

local function isnan(x) return x ~= x end
local function isinf(x) return x == math.huge or x == -math.huge end

-- `got` (read from a `t` array) is within n ulps of the exact value `ref`.
local function near_ulp(got, ref, t, n)
  if type(got) ~= "number" then return false end
  if isnan(ref) then return isnan(got) end
  if isinf(ref) then return got == ref end
  if isnan(got) then return false end
  local u = ulp(ref, t)
  if isinf(got) then
    -- overflow is right when the exact value is within the tolerance of the rounding boundary
    return (got > 0) == (ref > 0) and math.abs(ref) + n * u >= PREC[t].max
  end
  return math.abs(got - ref) <= n * u
end

-- Complex values as {re, im}.
local function cparts(v)
  if type(v) == "table" then return v[1], v[2] end
  if type(v) == "userdata" then return v.re, v.im end
  if type(v) == "boolean" then return v and 1.0 or 0.0, 0.0 end
  return v + 0.0, 0.0
end

local function near_rel(got, ref, scale, rel)
  if isnan(ref) then return isnan(got) end
  if isinf(ref) then return got == ref end
  if type(got) ~= "number" or isnan(got) then return false end
  return math.abs(got - ref) <= rel * scale + 1e-300
end

-- Conversions of values as read back (Lua numbers, integers, booleans, {re, im}) as the kernels
-- convert them (signed zeros kept).
local function round_to(t, x)
  if t == "f64" then return x end
  return S.ROUND[t](x)
end

local function conv(v, from, to)
  if type(v) == "userdata" then v = { v.re, v.im } end
  local fk, tk = KIND[from], KIND[to]
  if fk == "complex" then
    if tk == "complex" then return { round_to(PART[to], v[1]), round_to(PART[to], v[2]) } end
    if tk == "bool" then return v[1] ~= 0 or v[2] ~= 0 end
    return conv(v[1], PART[from], to)
  end
  if fk == "bool" then
    if tk == "bool" then return v end
    v = v and 1 or 0
  end
  if tk == "complex" then return { round_to(PART[to], v + 0.0), 0.0 } end
  if tk == "bool" then return v ~= 0 end
  if tk == "float" then
    if math.type(v) == "integer" then return round_to(to, v + 0.0) end
    return round_to(to, v)
  end
  local info = S.INFO[to]
  if math.type(v) == "integer" then return S.wrap(v, info.bits, info.signed) end
  return S.saturate(v, info)
end

-- Reference math -------------------------------------------------------------------------------

local function iwrap(v, t)
  local info = S.INFO[t]
  return S.wrap(v, info.bits, info.signed)
end

local function ipow(a, b, t)
  if b < 0 then
    if a == 1 then return 1 end
    if a == -1 then return (b & 1) == 1 and -1 or 1 end
    return 0
  end
  local r = 1
  while b ~= 0 do
    if (b & 1) == 1 then r = r * a end
    a = a * a
    b = b >> 1
  end
  return iwrap(r, t)
end

local function fmod(a, b) return math.fmod(a + 0.0, b + 0.0) end

-- numpy's divmod for floats, each step rounded by rc.
local function float_divmod(a, b, rc)
  local mod = fmod(a, b)
  if b == 0 then return a / b, mod end
  local div = rc(rc(a - mod) / b)
  if mod ~= 0 then
    if (b < 0) ~= (mod < 0) then
      mod = rc(mod + b)
      div = rc(div - 1.0)
    end
  else
    mod = b < 0 and -0.0 or 0.0
  end
  local q
  if div ~= 0 then
    q = math.floor(div) + 0.0
    if isinf(div) or isnan(div) then q = div end
    if rc(div - q) > 0.5 then q = rc(q + 1.0) end
  else
    q = (a / b < 0 or 1 / (a / b) < 0) and -0.0 or 0.0
  end
  return q, mod
end

-- complex helpers in f64
local function cexp(re, im)
  local e = math.exp(re)
  if im == 0 then return e, im end
  return e * math.cos(im), e * math.sin(im)
end
local function cabs(re, im)
  if isinf(re) or isinf(im) then return math.huge end
  local m = math.max(math.abs(re), math.abs(im))
  if m == 0 then return 0.0 end
  local x, y = re / m, im / m
  return m * math.sqrt(x * x + y * y)
end
local function clog(re, im) return math.log(cabs(re, im)), math.atan(im, re) end
local function csqrt(re, im)
  if re == 0 and im == 0 then return 0.0, im end
  local t = math.sqrt((math.abs(re) + cabs(re, im)) * 0.5)
  if re >= 0 then return t, im / (2 * t) end
  return math.abs(im) / (2 * t), (im < 0 or 1 / im < 0) and -t or t
end
local function cosh(x) return (math.exp(x) + math.exp(-x)) / 2 end
-- sinh by its series below 1 (no cancellation), tanh from it: accurate to ~2 ulp in f64.
local function sinh(x)
  if math.abs(x) < 1 then
    local x2, term, sum = x * x, x, x
    for k = 1, 12 do
      term = term * x2 / ((2 * k) * (2 * k + 1))
      sum = sum + term
    end
    return sum
  end
  return (math.exp(x) - math.exp(-x)) / 2
end
local function tanh(x)
  if x ~= x then return x end
  if math.abs(x) < 1 then
    local sh = sinh(x)
    return sh / math.sqrt(1 + sh * sh)
  end
  if math.abs(x) > 40 then return x > 0 and 1.0 or -1.0 end
  local e2 = math.exp(2 * x)
  return (e2 - 1) / (e2 + 1)
end

-- Binary reference: (value, tolerance) with tolerance nil for exact, else {ulp=n, t=dtype} or
-- {rel=r, scale=s}. x, y are compute values (complex as {re, im}).
local function ref_binary(op, ct, x, y)
  local k = KIND[ct]
  if op == "eq" or op == "ne" then
    local e
    if k == "complex" then
      e = x[1] == y[1] and x[2] == y[2]
    else
      e = x == y
    end
    if op == "eq" then return e end
    return not e
  end
  if k == "bool" then
    local a, b = x and 1 or 0, y and 1 or 0
    if op == "add" or op == "maximum" then return x or y end
    if op == "mul" or op == "minimum" then return x and y end
    if op == "lt" then return a < b end
    if op == "le" then return a <= b end
    if op == "gt" then return a > b end
    if op == "ge" then return a >= b end
    error("bool " .. op)
  end
  if op == "lt" then return x < y end
  if op == "le" then return x <= y end
  if op == "gt" then return x > y end
  if op == "ge" then return x >= y end
  if k == "int" then
    if op == "add" then return iwrap(x + y, ct) end
    if op == "sub" then return iwrap(x - y, ct) end
    if op == "mul" then return iwrap(x * y, ct) end
    if op == "maximum" then return math.max(x, y) end
    if op == "minimum" then return math.min(x, y) end
    if op == "floordiv" then return y == 0 and 0 or iwrap(x // y, ct) end
    if op == "mod" then return y == 0 and 0 or iwrap(x % y, ct) end
    if op == "pow" then return ipow(x, y, ct) end
    error("int " .. op)
  end
  if k == "float" then
    local rc, rs = RC[ct], RS[ct]
    if op == "add" then return rs(rc(x + y)) end
    if op == "sub" then return rs(rc(x - y)) end
    if op == "mul" then return rs(rc(x * y)) end
    if op == "div" then return rs(rc(x / y)) end
    if op == "maximum" or op == "minimum" then
      if isnan(x) then return x end
      if isnan(y) then return y end
      if op == "maximum" then return x < y and y or x end
      return y < x and y or x
    end
    if op == "floordiv" then return rs((float_divmod(x, y, rc))) end
    if op == "mod" then
      local _, m = float_divmod(x, y, rc)
      return rs(m)
    end
    if op == "pow" then return x ^ y, { ulp = TOL[ct].pow_ulp, t = ct } end
    error("float " .. op)
  end
  -- complex
  local rc = RC[ct]
  local ar, ai, br, bi = x[1], x[2], y[1], y[2]
  if op == "add" then return { rc(ar + br), rc(ai + bi) } end
  if op == "sub" then return { rc(ar - br), rc(ai - bi) } end
  if op == "maximum" or op == "minimum" then -- numpy: by real part, then imaginary; NaN first
    if isnan(ar) or isnan(ai) then return x end
    if isnan(br) or isnan(bi) then return y end
    local first
    if op == "maximum" then
      first = ar > br or (ar == br and ai >= bi)
    else
      first = ar < br or (ar == br and ai <= bi)
    end
    return first and x or y
  end
  if op == "mul" then
    return { rc(rc(ar * br) - rc(ai * bi)), rc(rc(ar * bi) + rc(ai * br)) }
  end
  if op == "div" then
    if math.abs(br) >= math.abs(bi) then
      if br == 0 and bi == 0 then return { ar / math.abs(br), ai / math.abs(bi) } end
      local r = rc(bi / br)
      local d = rc(br + rc(bi * r))
      return { rc(rc(ar + rc(ai * r)) / d), rc(rc(ai - rc(ar * r)) / d) }
    end
    local r = rc(br / bi)
    local d = rc(rc(br * r) + bi)
    return { rc(rc(rc(ar * r) + ai) / d), rc(rc(rc(ai * r) - ar) / d) }
  end
  if op == "pow" then
    if br == 0 and bi == 0 then return { 1.0, 0.0 } end
    if ar == 0 and ai == 0 then -- 0 for Re b > 0 and a finite Im b (exp(b log 0), numpy 2), else NaN
      if br > 0 and math.abs(bi) < math.huge then return { 0.0, 0.0 } end
      return { 0 / 0, 0 / 0 }
    end
    local lr, li = clog(ar, ai)
    local er, ei = br * lr - bi * li, br * li + bi * lr
    local zr, zi = cexp(er, ei)
    local scale = math.exp(er) * (1 + (math.abs(er) + math.abs(ei)) * 4)
    return { zr, zi }, { rel = TOL[ct].rel, scale = scale }
  end
  error("complex " .. op)
end

-- Unary reference. `x` is the input value (of dtype t, complex as {re, im}); returns (value,
-- tolerance) like ref_binary, and the result dtype.
local function unary_result_type(op, t)
  if op == "neg" or op == "conj" then return t end
  if op == "abs" or op == "real" or op == "imag" then return real_of(t) end
  return float_for(t)
end

local function ref_unary(op, t, x)
  local k = KIND[t]
  local rt = unary_result_type(op, t)
  if k == "complex" then
    local re, im = x[1], x[2]
    local tol = TOL[t].rel
    if op == "neg" then return { -re, -im } end
    if op == "conj" then return { re, -im } end
    if op == "real" then return re end
    if op == "imag" then return im end
    if op == "abs" then
      local a = cabs(re, im)
      return a, { rel = tol, scale = a }
    end
    local zr, zi, scale
    if op == "exp" then
      zr, zi = cexp(re, im)
      scale = math.exp(re)
    elseif op == "log" then
      zr, zi = clog(re, im)
      scale = math.abs(zr) + 4
    elseif op == "sqrt" then
      zr, zi = csqrt(re, im)
      scale = math.sqrt(cabs(re, im))
    elseif op == "sin" then
      zr, zi = math.sin(re) * cosh(im), math.cos(re) * sinh(im)
      scale = cosh(im)
    elseif op == "cos" then
      zr, zi = math.cos(re) * cosh(im), -(math.sin(re) * sinh(im))
      scale = cosh(im)
    elseif op == "tanh" then
      local d = cosh(2 * re) + math.cos(2 * im)
      zr, zi = sinh(2 * re) / d, math.sin(2 * im) / d
      scale = (1 + cabs(zr, zi)) * 4
    end
    return { zr, zi }, { rel = tol, scale = scale }
  end
  if op == "conj" or op == "real" then return x end
  if op == "imag" then
    if k == "bool" then return false end
    if k == "int" then return 0 end
    return 0.0
  end
  if op == "neg" then
    if k == "int" then return iwrap(-x, t) end
    return -x
  end
  if op == "abs" then
    if k == "bool" then return x end
    if k == "int" then return x < 0 and iwrap(-x, t) or x end
    return math.abs(x)
  end
  -- math functions in float_for(t)
  local v = conv(x, t, rt)
  if op == "sqrt" then return RS[rt](RC[rt](math.sqrt(v))) end
  local r
  if op == "exp" then r = math.exp(v)
  elseif op == "log" then r = (v == 0 and -math.huge) or (v < 0 and 0 / 0) or math.log(v)
  elseif op == "sin" then r = math.sin(v)
  elseif op == "cos" then r = math.cos(v)
  elseif op == "tanh" then r = tanh(v)
  end
  return r, { ulp = TOL[rt].ulp, t = rt }
end

-- Compares one element; returns true or false plus a description of the expectation.
local function matches(got, exp, tol)
  if tol == nil then return S.same(got, exp) end
  if tol.ulp then return near_ulp(got, exp, tol.t, tol.ulp) end
  if type(exp) == "table" then
    if type(got) ~= "userdata" and type(got) ~= "table" then return false end
    local gr, gi = cparts(got)
    return near_rel(gr, exp[1], tol.scale, tol.rel) and near_rel(gi, exp[2], tol.scale, tol.rel)
  end
  return near_rel(got, exp, tol.scale, tol.rel)
end

local function show(v)
  if type(v) == "table" then
    return string.format("{%.17g, %.17g}", v[1], v[2])
  elseif type(v) == "userdata" then
    return string.format("complex(%.17g, %.17g)", v.re, v.im)
  elseif math.type(v) == "float" then
    return string.format("%.17g", v)
  end
  return tostring(v)
end

-- Random data ----------------------------------------------------------------------------------

local function rnd(lo, hi) return lo + (hi - lo) * math.random() end

-- `n` random Lua values for a `t` array. purpose:
--   "arith": wide ranges plus the dtype's edge values (inf, nan, -0, min, max) now and then;
--   "fn": moderate values for transcendental functions (positive mostly for log/sqrt/pow bases);
--   "small": small magnitudes (integers in [-20, 20]);
--   "exponent": exponents for pow.
local SPECIAL_F = { 0.0, -0.0, 1.0, -1.0, 0.5, 2.5, -2.5, math.huge, -math.huge, 0 / 0 }
local function gen(t, n, purpose)
  purpose = purpose or "arith"
  local k = KIND[t]
  local out = {}
  for i = 1, n do
    local v
    if k == "bool" then
      v = math.random() < 0.5
    elseif k == "int" then
      local info = S.INFO[t]
      if purpose == "small" or purpose == "fn" then
        v = math.random(math.max(info.min, -20), math.min(info.max, 20))
      elseif purpose == "exponent" then
        v = math.random(info.signed and -3 or 0, 12)
      else
        local r = math.random()
        if r < 0.08 then
          local edges = { info.min, info.max, 0, 1 }
          if info.signed then edges[#edges + 1] = -1 end
          v = edges[math.random(#edges)]
        elseif r < 0.5 then
          v = math.random(math.max(info.min, -300), math.min(info.max, 300))
        else
          v = math.random(info.min, info.max)
        end
      end
    elseif k == "float" then
      if purpose == "fn" then
        v = rnd(-5, 5)
      elseif purpose == "small" then
        v = rnd(-20, 20)
      elseif purpose == "exponent" then
        v = math.random() < 0.5 and math.random(-4, 4) + 0.0 or rnd(-4, 4)
      elseif purpose == "base" then
        v = math.random() < 0.8 and rnd(0.05, 8) or -math.random(1, 6) + 0.0
      else
        local r = math.random()
        local big = t == "f16" and 6e4 or 1e9
        if r < 0.06 then
          v = SPECIAL_F[math.random(#SPECIAL_F)]
        elseif r < 0.5 then
          v = rnd(-10, 10)
        elseif r < 0.8 then
          v = rnd(-1000, 1000)
        else
          v = rnd(-big, big)
        end
      end
    else -- complex
      local lim = purpose == "arith" and 1e4 or 3
      local re, im = rnd(-lim, lim), rnd(-lim, lim)
      if purpose == "fn" then im = rnd(-1.2, 1.2) end
      if purpose == "base" then re, im = rnd(0.1, 3), rnd(-3, 3) end
      if purpose == "exponent" then re, im = rnd(-2, 2), rnd(-1, 1) end
      if purpose == "arith" and math.random() < 0.05 then re, im = 0.0, 0.0 end
      v = cu.complex(re, im)
    end
    out[i] = v
  end
  return out
end

-- What each op's operands look like.
local function purposes(op, t)
  local k = KIND[t]
  if op == "pow" then
    if k == "int" then return "small", "exponent" end
    return "base", "exponent"
  end
  if TRANSCENDENTAL[op] and op ~= "sqrt" then return "fn" end
  return "arith", "arith"
end

-- Arrays ---------------------------------------------------------------------------------------

local function numel(shape)
  local n = 1
  for _, d in ipairs(shape) do n = n * d end
  return n
end

local function nest(flat, shape)
  local pos = 0
  local function build(d)
    local t = {}
    for i = 1, shape[d] do
      if d == #shape then
        pos = pos + 1
        t[i] = flat[pos]
      else
        t[i] = build(d + 1)
      end
    end
    return t
  end
  return build(1)
end

-- A new array of `shape` (contiguous) with values from `values` (a list), on the device or the
-- host.
local function build(shape, t, values, host)
  local mod = host and cu.host or cu
  if #shape == 0 then
    local a = mod.zeros({}, t)
    a:fill(values[1])
    return a
  end
  if numel(shape) == 0 then return mod.zeros(shape, t) end
  return mod.array(nest(values, shape), t)
end

local LAYOUTS = { "contig", "contig", "transpose", "narrow", "row" }

-- An array of logical `shape` and dtype `t`, laid out as `layout` ("contig", "transpose": a
-- transposed view of a base with the last two dimensions swapped, "narrow": a narrowed view with
-- an offset, "row": a row view of a larger array), with random values for `purpose`.
local function operand(shape, t, purpose, layout, host)
  layout = layout or LAYOUTS[math.random(#LAYOUTS)]
  local nd = #shape
  local function values(s) return gen(t, math.max(numel(s), 1), purpose) end
  if layout == "transpose" and nd >= 2 then
    local bs = { table.unpack(shape) }
    bs[nd - 1], bs[nd] = bs[nd], bs[nd - 1]
    return build(bs, t, values(bs), host):transpose(nd - 1, nd), "transpose"
  elseif layout == "narrow" and nd >= 1 then
    local d = math.random(1, nd)
    local off, extra = math.random(0, 2), math.random(0, 2)
    local bs = { table.unpack(shape) }
    bs[d] = shape[d] + off + extra
    return build(bs, t, values(bs), host):narrow(d, off + 1, shape[d]), "narrow"
  elseif layout == "row" and nd >= 1 and numel(shape) > 0 then
    local k = math.random(2, 3)
    local bs = { k, table.unpack(shape) }
    return build(bs, t, values(bs), host)[math.random(1, k)], "row"
  end
  return build(shape, t, values(shape), host), "contig"
end

-- Values of an array in row-major order (complex as {re, im}).
local function flat(a)
  local v = a:totable()
  local out = S.flatten(type(v) == "table" and v or { v })
  if a.size == 0 then return {} end
  for i, x in ipairs(out) do
    if type(x) == "userdata" then out[i] = { x.re, x.im } end
  end
  return out
end

local function shape_str(s)
  if type(s) ~= "table" then return "scalar" end
  return "{" .. table.concat(s, ",") .. "}"
end

-- Random shapes: 0-d now and then, empty rarely, up to 4-d, sizes including 1 and odd sizes.
local DIMS = { 1, 2, 3, 4, 5, 7, 1, 3 }
local function rand_shape(maxnd, maxsize)
  maxsize = maxsize or 120
  local r = math.random()
  if r < 0.06 then return {} end
  local nd = math.random(1, maxnd or 4)
  local s = {}
  for i = 1, nd do s[i] = DIMS[math.random(#DIMS)] end
  if nd == 1 and math.random() < 0.5 then s[1] = math.random(1, 40) end
  while numel(s) > maxsize do
    local i = math.random(nd)
    s[i] = math.max(1, s[i] // 2)
  end
  if r > 0.97 then s[math.random(nd)] = 0 end
  return s
end

-- A shape that broadcasts with `s` (a suffix of it, some dimensions set to 1, maybe extra 1s).
local function bcast_partner(s)
  local r = math.random()
  if r < 0.3 then return { table.unpack(s) } end
  local drop = math.random(0, #s)
  local p = {}
  for i = drop + 1, #s do p[#p + 1] = (math.random() < 0.4) and 1 or s[i] end
  if #p < 4 and math.random() < 0.15 then table.insert(p, 1, 1) end
  return p
end

local function bshape(a, b)
  local n = math.max(#a, #b)
  local out = {}
  for i = 1, n do
    local da = a[i - (n - #a)] or 1
    local db = b[i - (n - #b)] or 1
    if i - (n - #a) < 1 then da = 1 end
    if i - (n - #b) < 1 then db = 1 end
    assert(da == db or da == 1 or db == 1)
    out[i] = da == 1 and db or da
  end
  return out
end

-- Maps a 0-based element index of `out_shape` to the 1-based index of an input of `in_shape`.
local function bmap(out_shape, in_shape)
  local nd = #out_shape
  local shift = nd - #in_shape
  local st, s = {}, 1
  for i = #in_shape, 1, -1 do
    st[i] = s
    s = s * in_shape[i]
  end
  return function(idx)
    local rem, pos = idx, 0
    for d = nd, 1, -1 do
      local c = rem % out_shape[d]
      rem = rem // out_shape[d]
      local j = d - shift
      if j >= 1 and in_shape[j] ~= 1 then pos = pos + c * st[j] end
    end
    return pos + 1
  end
end

-- An input of a reference computation: an array (values, shape, dtype) or a Lua scalar.
local function is_array(v)
  return type(v) == "userdata" and tostring(v):sub(1, 9) == "cu.array("
end

local function input(a_or_scalar)
  if is_array(a_or_scalar) then
    local a = a_or_scalar
    return { values = flat(a), shape = a.shape, dtype = a.dtype }
  end
  return { scalar = a_or_scalar }
end

-- The common type of two inputs.
local function common_type(x, y)
  if x.dtype and y.dtype then return promote(x.dtype, y.dtype) end
  if x.dtype then return weak(x.dtype, scalar_kind(y.scalar)) end
  if y.dtype then return weak(y.dtype, scalar_kind(x.scalar)) end
  return promote(SCALAR_DTYPE[scalar_kind(x.scalar)], SCALAR_DTYPE[scalar_kind(y.scalar)])
end

-- The value of element idx (0-based, of out_shape) of an input, converted to the compute type.
local function getter(x, out_shape, ct)
  if x.scalar ~= nil then
    local sv = x.scalar
    local v
    if type(sv) == "userdata" then
      v = conv({ sv.re, sv.im }, "c128", ct)
    else
      v = conv(sv, SCALAR_DTYPE[scalar_kind(sv)], ct)
    end
    return function() return v end
  end
  local m = bmap(out_shape, x.shape)
  local vals, dt = x.values, x.dtype
  return function(idx) return conv(vals[m(idx)], dt, ct) end
end

-- Checks `result` (an array) against the reference of `op` on inputs x, y (from `input`).
local function check_binary(op, result, xa, ya, what, out_dtype)
  local x, y = input(xa), input(ya)
  local common = common_type(x, y)
  local ct, rt = binary_types(op, common)
  local oshape = bshape(x.shape or {}, y.shape or {})
  check(result.dtype == (out_dtype or rt), "%s: %s result dtype: expected %s, got %s", what, op,
    out_dtype or rt, result.dtype)
  T.eq(result.shape, oshape, what .. ": result shape")
  local got = flat(result)
  local gx, gy = getter(x, oshape, ct), getter(y, oshape, ct)
  for i = 1, numel(oshape) do
    local xv, yv = gx(i - 1), gy(i - 1)
    local e, tol = ref_binary(op, ct, xv, yv)
    if out_dtype and out_dtype ~= rt then
      e = conv(e, rt, out_dtype)
    end
    check(matches(got[i], e, tol), "%s: %s(%s, %s) [%s %s %s -> %s, compute %s] element %d: " ..
      "expected %s%s, got %s", what, op, show(xv), show(yv), x.dtype or "scalar",
      shape_str(x.shape), (y.dtype or "scalar") .. shape_str(y.shape), rt, ct, i, show(e),
      tol and (tol.ulp and (" within " .. tol.ulp .. " ulp") or " (relative)") or "", show(got[i]))
  end
end

local function check_unary(op, result, a, what, out_dtype)
  local t = a.dtype
  local rt = unary_result_type(op, t)
  check(result.dtype == (out_dtype or rt), "%s: %s result dtype: expected %s, got %s", what, op,
    out_dtype or rt, result.dtype)
  T.eq(result.shape, a.shape, what .. ": result shape")
  local xs, got = flat(a), flat(result)
  for i = 1, #xs do
    local e, tol = ref_unary(op, t, xs[i])
    if tol == nil and KIND[rt] == "float" and math.type(e) == "integer" then e = e + 0.0 end
    if out_dtype and out_dtype ~= rt then e = conv(e, rt, out_dtype) end
    check(matches(got[i], e, tol), "%s: %s(%s) [%s %s -> %s] element %d: expected %s%s, got %s",
      what, op, show(xs[i]), t, shape_str(a.shape), rt, i, show(e),
      tol and (tol.ulp and (" within " .. tol.ulp .. " ulp") or " (relative)") or "", show(got[i]))
  end
end

-- A random scalar of kind sk that an array of dtype t accepts.
local function rand_scalar(sk, t, purpose)
  if sk == "bool" then return math.random() < 0.5 end
  if sk == "complex" then return cu.complex(rnd(-5, 5), rnd(-5, 5)) end
  if sk == "float" then
    if purpose == "exponent" then return math.random(-3, 3) + 0.5 end
    if purpose == "base" then return rnd(0.1, 5) end
    return rnd(-50, 50)
  end
  local info = S.INFO[t] or S.INFO.i64
  if KIND[t] ~= "int" then info = S.INFO.i64 end
  if purpose == "exponent" then return math.random(info.signed and -2 or 0, 7) end
  local v = math.random(math.max(info.min, -100), math.min(info.max, 100))
  if v == 0 then v = 3 end
  return v
end

-- ==== binary operations ========================================================================

case("every binary op, every dtype: contiguous same-dtype operands (fast path)", function()
  for _, op in ipairs(BINARY) do
    for _, t in ipairs(S.DTYPES) do
      local ct = binary_types(op, t)
      if binary_defined(op, ct) then
        for _ = 1, 3 do
          local s = rand_shape(3)
          local pa, pb = purposes(op, t)
          local a = operand(s, t, pa, "contig")
          local b = operand(s, t, pb, "contig")
          check_binary(op, cu[op](a, b), a, b, "contiguous " .. t)
        end
      else
        local a = cu.ones(3, t)
        T.raises(function() return cu[op](a, a) end, op .. " is not defined", op .. " " .. t)
      end
    end
  end
end)

case("every binary op on every pair of dtypes: promotion and conversions (general path)", function()
  for _, ta in ipairs(S.DTYPES) do
    for _, tb in ipairs(S.DTYPES) do
      local common = promote(ta, tb)
      -- add always, plus three random operations
      local ops = { "add" }
      for _ = 1, 3 do ops[#ops + 1] = BINARY[math.random(#BINARY)] end
      for _, op in ipairs(ops) do
        local ct = binary_types(op, common)
        local s = rand_shape(3, 30)
        local pa = purposes(op, ta)
        local _, pb = purposes(op, tb)
        local a = operand(s, ta, pa)
        local b = operand(bcast_partner(s), tb, pb)
        if binary_defined(op, ct) then
          check_binary(op, cu[op](a, b), a, b, ta .. " with " .. tb)
        else
          T.raises(function() return cu[op](a, b) end, "not defined", op .. " " .. ta .. " " .. tb)
        end
      end
    end
  end
end)

case("broadcasting and non-contiguous views", function()
  local pairs_ = {
    { { 3, 1, 5 }, { 4, 1 } }, { { 1, 6 }, { 5, 1 } }, { { 4 }, { 3, 4 } }, { {}, { 2, 3 } },
    { { 2, 3 }, {} }, { { 2, 1, 3, 1 }, { 4, 1, 5 } }, { { 1 }, { 7 } }, { { 0 }, { 1 } },
    { { 2, 0 }, { 1 } }, { { 1, 1, 1, 1 }, { 3 } },
  }
  for _ = 1, 50 do
    pairs_[#pairs_ + 1] = (function()
      local s = rand_shape(4, 60)
      local p = bcast_partner(s)
      if math.random() < 0.5 then return { p, s } end
      return { s, p }
    end)()
  end
  local ops = { "add", "sub", "mul", "div", "maximum", "minimum", "lt", "ge", "eq", "floordiv",
    "mod", "pow" }
  for _, sp in ipairs(pairs_) do
    for _ = 1, 2 do
      local op = ops[math.random(#ops)]
      local t = ({ "f32", "f64", "f16", "bf16", "i32", "i8", "u8", "i64", "u32", "i16" })[math.random(10)]
      local pa, pb = purposes(op, t)
      local a, la = operand(sp[1], t, pa)
      local b, lb = operand(sp[2], t, pb)
      check_binary(op, cu[op](a, b), a, b,
        string.format("%s %s(%s) with %s(%s)", t, shape_str(sp[1]), la, shape_str(sp[2]), lb))
    end
  end
end)

case("views: transposed, narrowed and row operands of every layout pairing", function()
  local t
  for _, la in ipairs({ "contig", "transpose", "narrow", "row" }) do
    for _, lb in ipairs({ "contig", "transpose", "narrow", "row" }) do
      for _, tt in ipairs({ "f32", "i16", "c64" }) do
        t = tt
        local s = { math.random(2, 6), math.random(2, 6) }
        local a = operand(s, t, "arith", la)
        local b = operand(s, t, "arith", lb)
        check_binary("add", cu.add(a, b), a, b, t .. " " .. la .. "+" .. lb)
        check_binary("mul", a * b, a, b, t .. " " .. la .. "*" .. lb)
        check_unary("neg", -a, a, t .. " -" .. la)
      end
    end
  end
  -- A square matrix with its own transpose, a column view and a row view.
  local m = operand({ 5, 5 }, "f64", "arith", "contig")
  check_binary("sub", m - m:transpose(1, 2), m, m:transpose(1, 2), "m - m^T")
  local col = m:narrow(2, 3, 1)
  check_binary("add", m + col, m, col, "m + column")
  check_binary("mul", m * m[2], m, m[2], "m * row")
end)

case("scalars on either side: integers, floats, booleans, cu.complex (weak promotion)", function()
  for _, t in ipairs(S.DTYPES) do
    for _, sk in ipairs({ "int", "float", "bool", "complex" }) do
      local ops = { "add", "mul", BINARY[math.random(#BINARY)], BINARY[math.random(#BINARY)] }
      for _, op in ipairs(ops) do
        local common = weak(t, sk)
        local ct = binary_types(op, common)
        local pa, pb = purposes(op, t)
        local a = operand(rand_shape(3, 40), t, pa)
        local sv = rand_scalar(sk, t, pb)
        local sl = rand_scalar(sk, t, pa == "base" and "base" or nil)
        if binary_defined(op, ct) then
          check_binary(op, cu[op](a, sv), a, sv, string.format("%s array %s %s scalar", t, op, sk))
          if op ~= "pow" or KIND[ct] ~= "int" then
            check_binary(op, cu[op](sl, a), sl, a, string.format("%s scalar %s %s array", sk, op, t))
          end
        else
          T.raises(function() return cu[op](a, sv) end, "not defined", op .. " " .. t .. " " .. sk)
        end
      end
    end
  end
end)

case("scalar dtypes: weak within their kind, the default type across kinds", function()
  T.eq((cu.ones(3, "u8") + 200).dtype, "u8")
  T.eq((cu.ones(3, "i8") * -3).dtype, "i8")
  T.eq((cu.ones(3, "bool") + 1).dtype, "i64")
  T.eq((cu.ones(3, "bool") + true).dtype, "bool")
  T.eq((cu.ones(3, "i32") + 1.5).dtype, "f64")
  T.eq((cu.ones(3, "u8") * 0.5).dtype, "f64")
  T.eq((cu.ones(3, "f16") + 1.5).dtype, "f16")
  T.eq((cu.ones(3, "bf16") * 3).dtype, "bf16")
  T.eq((cu.ones(3, "f32") + cu.complex(1, 1)).dtype, "c64")
  T.eq((cu.ones(3, "f16") + cu.complex(1, 1)).dtype, "c64")
  T.eq((cu.ones(3, "f64") + cu.complex(1, 1)).dtype, "c128")
  T.eq((cu.ones(3, "i8") + cu.complex(1, 1)).dtype, "c128")
  T.eq((cu.ones(3, "c64") + 2.5).dtype, "c64")
  T.eq((cu.ones(3, "i16") / 2).dtype, "f64")
  T.eq(cu.lt(cu.ones(3, "u32"), 7).dtype, "bool")
  -- the scalar is rounded to the array's float type first (numpy: np.float16(0.1))
  local a = cu.array({ 1 }, "f16")
  T.eq((a + 0.1):totable()[1], S.f16(S.f32(1 + S.f16(0.1))))
end)

case("integer arithmetic wraps; // and % are Python's; zero divisors give 0", function()
  for _, t in ipairs({ "i8", "i16", "i32", "i64", "u8", "u32" }) do
    local info = S.INFO[t]
    local xs = { info.max, info.min, info.max, 7, -7, 7, -7, 0, 5, info.min, 1 }
    local ys = { 1, -1, info.max, 2, 2, -2, -2, 3, 0, 0, 0 }
    for i = 1, #xs do
      xs[i] = S.wrap(xs[i], info.bits, info.signed)
      ys[i] = S.wrap(ys[i], info.bits, info.signed)
    end
    local a, b = cu.array(xs, t), cu.array(ys, t)
    for _, op in ipairs({ "add", "sub", "mul", "floordiv", "mod", "maximum", "minimum", "pow" }) do
      check_binary(op, cu[op](a, b), a, b, t .. " edges")
    end
    T.eq((a // 0):totable()[1], 0, t .. " // 0")
    T.eq((a % 0):totable()[1], 0, t .. " % 0")
    if info.signed then
      local m = cu.array({ info.min }, t)
      T.eq((m // -1):totable(), { info.min }, t .. " MIN // -1 wraps")
      T.eq((m % -1):totable(), { 0 }, t .. " MIN % -1")
      T.eq((-m):totable(), { info.min }, t .. " -MIN wraps")
      T.eq(m:abs():totable(), { info.min }, t .. " abs(MIN) wraps")
      -- negative exponents: 1 for base 1, +-1 for base -1, else 0
      local bases = cu.array({ 1, -1, -1, 2, 0, -3 }, t)
      local exps = cu.array({ -5, -3, -4, -1, -2, -1 }, t)
      T.eq((bases ^ exps):totable(), { 1, -1, 1, 0, 0, 0 }, t .. " negative exponents")
    end
  end
end)

case("true division of integers gives f64 with IEEE inf/nan for zero divisors", function()
  for _, t in ipairs({ "i8", "i16", "i32", "i64", "u8", "u32", "bool" }) do
    local vals = KIND[t] == "bool" and { true, false, true } or { 3, 0, S.INFO[t].max }
    local a = cu.array(vals, t)
    local z = cu.zeros(3, t)
    local q = a / z
    T.eq(q.dtype, "f64")
    local v = q:totable()
    T.eq(v[1], math.huge, t .. " x / 0")
    T.truthy(v[2] ~= v[2], t .. " 0 / 0 is nan")
    T.eq(v[3], math.huge)
    check_binary("div", a / 0, a, 0, t .. " / scalar 0")
    if KIND[t] == "int" and S.INFO[t].signed then
      T.eq((cu.array({ -4 }, t) / 0):totable(), { -math.huge })
    end
    local b = operand({ 9 }, t, "arith")
    local c = operand({ 9 }, t, "arith")
    check_binary("div", b / c, b, c, t .. " / " .. t)
  end
end)

case("float edge values: nan propagation in maximum/minimum, inf, signed zeros, // and %", function()
  for _, t in ipairs({ "f32", "f64", "f16", "bf16" }) do
    local nan, inf = 0 / 0, math.huge
    local xs = { nan, 1.0, nan, -inf, inf, 0.0, -0.0, 1.0, -1.0, 7.0, -7.0, 5.0, -5.0, inf, 2.5 }
    local ys = { 1.0, nan, nan, inf, inf, -0.0, 0.0, 0.1, 0.1, -2.0, 7.0, 0.0, inf, 2.0, -0.75 }
    local a, b = cu.array(xs, t), cu.array(ys, t)
    for _, op in ipairs(BINARY) do
      if op ~= "pow" then check_binary(op, cu[op](a, b), a, b, t .. " edges") end
    end
    local mx = cu.maximum(a, b):totable()
    T.truthy(mx[1] ~= mx[1] and mx[2] ~= mx[2], t .. " maximum propagates nan")
    local mn = cu.minimum(a, b):totable()
    T.truthy(mn[1] ~= mn[1] and mn[2] ~= mn[2], t .. " minimum propagates nan")
    T.eq((cu.array({ 1.0 }, t) // 0.1):totable()[1], t == "f64" and 9.0 or
      (cu.array({ 1.0 }, t) // 0.1):totable()[1]) -- f64: Python's 1 // 0.1 == 9.0
    for _, op in ipairs({ "ne" }) do
      T.eq(cu[op](a, a):totable()[1], true, "nan ~= nan")
    end
  end
  T.eq((cu.array({ 1.0 }, "f64") // 0.1):totable(), { 9.0 })
  T.eq((cu.array({ 1.0 }, "f64") % 0.1):totable(), { math.fmod(1.0, 0.1) })
  T.eq((cu.array({ -7.0 }, "f64") % 2):totable(), { 1.0 })
  T.eq((cu.array({ 7.0 }, "f64") % -2):totable(), { -1.0 })
  T.eq((cu.array({ 7.0 }, "f64") // -2):totable(), { -4.0 })
end)

case("bool arithmetic: add is or, mul is and, pow is i8 (numpy); sub/floordiv/mod/neg are errors", function()
  local a = operand({ 17 }, "bool", "arith", "contig")
  local b = operand({ 17 }, "bool", "arith", "narrow")
  check_binary("add", a + b, a, b, "bool +")
  check_binary("mul", a * b, a, b, "bool *")
  check_binary("maximum", cu.maximum(a, b), a, b, "bool maximum")
  check_binary("minimum", cu.minimum(a, b), a, b, "bool minimum")
  for _, op in ipairs({ "lt", "le", "gt", "ge", "eq", "ne" }) do
    check_binary(op, cu[op](a, b), a, b, "bool " .. op)
  end
  S.raises(function() return a - b end, { "sub is not defined", "bool" })
  -- numpy has no bool power: bool ^ bool computes in i8; a Lua integer exponent gives i64 and a
  -- negative one follows the integer rule (1 ^ -3 is 1, 0 ^ -3 is 0)
  local p = a ^ b
  T.eq(p.dtype, "i8")
  local fa, fb, fp = flat(a), flat(b), flat(p)
  for i = 1, #fa do T.eq(fp[i], (fa[i] or not fb[i]) and 1 or 0, "bool ^ bool " .. i) end
  T.eq(cu.pow(a, true).dtype, "i8")
  local neg = cu.array({ true, false }, "bool") ^ -3
  T.eq(neg.dtype, "i64")
  T.eq(neg:totable(), { 1, 0 })
  T.eq((cu.array({ true, false }, "bool") ^ 0.5).dtype, "f64")
  S.raises(function() return a // b end, "floordiv is not defined")
  S.raises(function() return a % b end, "mod is not defined")
  S.raises(function() return -a end, "neg is not defined for bool")
  S.raises(function() return cu.sub(a, true) end, "sub is not defined")
end)

case("complex arithmetic: + - * / exactly, pow within tolerance, comparisons are errors", function()
  for _, t in ipairs({ "c64", "c128" }) do
    local s = rand_shape(2, 50)
    local a = operand(s, t, "arith")
    local b = operand(bcast_partner(s), t, "arith")
    for _, op in ipairs({ "add", "sub", "mul", "div", "eq", "ne" }) do
      check_binary(op, cu[op](a, b), a, b, t)
    end
    -- Smith's algorithm does not overflow for large divisors
    local big = cu.array({ cu.complex(1e300, 1e300) }, "c128")
    local q = (cu.array({ cu.complex(1e300, 1e300) }, "c128") / big):totable()[1]
    T.near(q.re, 1.0, 1e-15)
    T.near(q.im, 0.0, 1e-15)
    local p = operand({ 12 }, t, "base")
    local e = operand({ 12 }, t, "exponent")
    check_binary("pow", p ^ e, p, e, t .. " pow")
    for _, op in ipairs({ "lt", "le", "gt", "ge", "floordiv", "mod" }) do
      T.raises(function() return cu[op](a, b) end, op .. " is not defined", t .. " " .. op)
    end
  end
  S.raises(function() return cu.lt(cu.ones(2, "c64"), 1) end, { "lt is not defined", "c64" })
  S.raises(function() return cu.lt(cu.ones(2, "f32"), cu.complex(0, 1)) end, "lt is not defined")
end)

-- ==== unary operations =========================================================================

case("every unary op, every dtype, contiguous and views", function()
  for _, op in ipairs(UNARY) do
    for _, t in ipairs(S.DTYPES) do
      if op == "neg" and t == "bool" then
        T.raises(function() return cu.neg(cu.ones(2, "bool")) end, "neg is not defined")
      else
        for _, layout in ipairs({ "contig", LAYOUTS[math.random(#LAYOUTS)] }) do
          local purpose = (TRANSCENDENTAL[op] and op ~= "sqrt") and "fn" or "arith"
          if op == "sqrt" and KIND[t] == "int" then purpose = "arith" end
          local a, l = operand(rand_shape(3, 60), t, purpose, layout)
          check_unary(op, cu[op](a), a, t .. " " .. l)
        end
      end
    end
  end
end)

case("unary methods, special values and integer inputs computed in float_for(dtype)", function()
  local a = operand({ 4, 5 }, "f32", "fn")
  check_unary("exp", a:exp(), a, "a:exp()")
  check_unary("sqrt", a:abs():sqrt(), a:abs(), "a:abs():sqrt()")
  check_unary("log", a:log(), a, "a:log()")
  check_unary("tanh", a:tanh(), a, "a:tanh()")
  local f = cu.array({ 0.0, -0.0, 1.0, -1.0, math.huge, -math.huge, 0 / 0 }, "f64")
  for _, op in ipairs(UNARY) do check_unary(op, cu[op](f), f, "f64 specials") end
  T.eq(cu.log(cu.array({ 0.0 }, "f32")):totable(), { -math.huge })
  T.eq(cu.sqrt(cu.array({ 4 }, "i32")).dtype, "f64")
  T.eq(cu.sqrt(cu.array({ 4 }, "i16")).dtype, "f32")
  T.eq(cu.sqrt(cu.array({ 4 }, "u8")).dtype, "f16")
  T.eq(cu.exp(cu.array({ true }, "bool")):totable(), { S.f16(math.exp(1)) })
  T.eq(cu.sqrt(cu.array({ 2, 9 }, "i8")):totable(), { S.f16(math.sqrt(2)), 3.0 })
  T.eq(cu.exp(cu.array({ 20 }, "i8")):totable(), { math.huge }) -- beyond f16
  T.eq(cu.abs(cu.array({ cu.complex(3, -4) }, "c128")):totable(), { 5.0 })
  T.eq(cu.real(cu.array({ cu.complex(3, -4) }, "c64")).dtype, "f32")
  T.eq(cu.imag(cu.array({ cu.complex(3, -4) }, "c64")):totable(), { -4.0 })
  T.eq(cu.imag(cu.array({ 3, 4 }, "i16")):totable(), { 0, 0 })
  T.eq(cu.conj(cu.array({ 3, 4 }, "u8")):totable(), { 3, 4 })
end)

-- ==== where ====================================================================================

case("where: array and scalar operands, broadcasting, mixed dtypes, any cond dtype", function()
  for _ = 1, 60 do
    local s = rand_shape(3, 40)
    local tx = S.DTYPES[math.random(#S.DTYPES)]
    local ty = math.random() < 0.5 and tx or S.DTYPES[math.random(#S.DTYPES)]
    local tc = math.random() < 0.7 and "bool" or S.DTYPES[math.random(#S.DTYPES)]
    local c = operand(bcast_partner(s), tc, "arith")
    local x = math.random() < 0.8 and operand(bcast_partner(s), tx, "arith") or
        rand_scalar(({ "int", "float", "bool" })[math.random(3)], ty)
    local y = math.random() < 0.8 and operand(s, ty, "arith") or
        rand_scalar(({ "int", "float" })[math.random(2)], is_array(x) and x.dtype or "i8")
    if math.random() < 0.1 then
      c = math.random() < 0.5
      if not is_array(x) then y = operand(s, ty, "arith") end
    end
    local r = cu.where(c, x, y)
    local ci, xi, yi = input(c), input(x), input(y)
    local t = common_type(xi, yi)
    local shp = bshape(bshape(ci.shape or {}, xi.shape or {}), yi.shape or {})
    local what = string.format("where(%s%s, %s%s, %s%s)", ci.dtype or "scalar", shape_str(ci.shape),
      xi.dtype or "scalar", shape_str(xi.shape), yi.dtype or "scalar", shape_str(yi.shape))
    check(r.dtype == t, "%s: dtype %s, expected %s", what, r.dtype, t)
    T.eq(r.shape, shp, what .. " shape")
    local got = flat(r)
    local gc = getter(ci, shp, "bool")
    local gx, gy = getter(xi, shp, t), getter(yi, shp, t)
    for i = 1, numel(shp) do
      local e = gc(i - 1) and gx(i - 1) or gy(i - 1)
      if gc(i - 1) then e = gx(i - 1) end
      check(S.same(got[i], e), "%s element %d: expected %s, got %s", what, i, show(e), show(got[i]))
    end
  end
end)

-- ==== out= =====================================================================================

case("out=: same dtype, wider dtype, non-contiguous out, bool results into numbers", function()
  for _, t in ipairs({ "f32", "f64", "f16", "bf16", "i8", "i32", "u8", "c64" }) do
    local s = { math.random(1, 5), math.random(1, 6) }
    local a, b = operand(s, t, "arith"), operand(s, t, "arith")
    local out = cu.zeros(s, t)
    local r = cu.add(a, b, { out = out })
    S.same_list(flat(r), flat(out), "returns the out array")
    check_binary("add", out, a, b, t .. " out same dtype")
    local wide = ({ f32 = "f64", f64 = "f64", f16 = "f32", bf16 = "f64", i8 = "i32", i32 = "i64",
      u8 = "f32", c64 = "c128" })[t]
    local wout = cu.zeros(s, wide)
    cu.mul(a, b, { out = wout })
    -- the result is computed as the result dtype, then converted (numpy's casting of out)
    check_binary("mul", wout, a, b, t .. " out " .. wide, wide)
    if KIND[t] == "float" then
      local u = cu.zeros(s, wide)
      cu.exp(a, { out = u })
      check_unary("exp", u, a, t .. " exp into " .. wide, wide)
    end
    -- a transposed (non-contiguous) out
    local tbase = cu.zeros({ s[2], s[1] }, t)
    cu.sub(a, b, { out = tbase:transpose(1, 2) })
    if KIND[t] ~= "bool" then check_binary("sub", tbase:transpose(1, 2), a, b, t .. " transposed out") end
  end
  -- comparisons into an integer or float out (bool is the lowest kind)
  local a, b = operand({ 9 }, "i32", "arith"), operand({ 9 }, "i32", "arith")
  local o = cu.zeros(9, "i32")
  cu.lt(a, b, { out = o })
  local ea = flat(cu.lt(a, b))
  for i, v in ipairs(o:totable()) do T.eq(v, ea[i] and 1 or 0) end
  -- f16 arithmetic into an f32 out is rounded to f16 first
  local h = cu.array({ 1.0, 2048.0 }, "f16")
  local o32 = cu.zeros(2, "f32")
  cu.add(h, 1 / 4096, { out = o32 })
  T.eq(o32:totable(), { 1.0, 2048.0 })
end)

case("out= aliasing an input: in place, and overlapping in another layout (numpy's result)", function()
  for _, t in ipairs({ "f64", "f32", "i32", "c128", "f16" }) do
    local n = math.random(2, 7)
    local a = operand({ n, n }, t, "arith", "contig")
    local orig = a:clone()
    local b = operand({ n, n }, t, "arith")
    cu.add(a, b, { out = a }) -- in place
    check_binary("add", a, orig, b, t .. " in place")
    -- a + a^T into a: every element must come from the original values
    local m = operand({ n, n }, t, "arith", "contig")
    local mo = m:clone()
    cu.add(m, m:transpose(1, 2), { out = m })
    check_binary("add", m, mo, mo:transpose(1, 2), t .. " a + a^T into a")
    -- shifted overlap: out = a[1:n-1], input a[2:n]
    local v = operand({ 3 * n }, t, "arith", "contig")
    local vo = v:clone()
    cu.mul(v:narrow(1, 2, 3 * n - 1), 3, { out = v:narrow(1, 1, 3 * n - 1) })
    local got = flat(v)
    local expect = cu.mul(vo:narrow(1, 2, 3 * n - 1), 3)
    local ev = flat(expect)
    for i = 1, 3 * n - 1 do
      check(S.same(got[i], ev[i]), "%s shifted overlap element %d: expected %s, got %s", t, i,
        show(ev[i]), show(got[i]))
    end
    T.truthy(S.same(got[3 * n], flat(vo)[3 * n]), "element past the out is untouched")
    -- unary in place and in a transposed alias
    local u = operand({ n, n }, t, "arith", "contig")
    local uo = u:clone()
    if KIND[t] ~= "bool" then
      cu.neg(u:transpose(1, 2), { out = u })
      check_unary("neg", u, uo:transpose(1, 2), t .. " -(a^T) into a")
    end
    -- where into one of its inputs, transposed
    local w = operand({ n, n }, t, "arith", "contig")
    local wo = w:clone()
    local cond = operand({ n, n }, "bool", "arith")
    cu.where(cond, w:transpose(1, 2), w, { out = w })
    local cv, wt, wv, got2 = flat(cond), flat(wo:transpose(1, 2)), flat(wo), flat(w)
    for i = 1, n * n do
      local e = cv[i] and wt[i] or wv[i]
      check(S.same(got2[i], e), "%s where overlap element %d", t, i)
    end
  end
end)

-- ==== streams and host arrays ==================================================================

case("stream=: operations on an explicit stream, then s:sync()", function()
  local s = cu.stream()
  for _, t in ipairs({ "f32", "i64", "c64", "f16" }) do
    local a = operand({ 64, 3 }, t, "arith")
    local b = operand({ 3 }, t, "arith")
    cu.sync()
    local r = cu.add(a, b, { stream = s })
    local m = cu.maximum(a, b, { stream = s })
    local o = cu.zeros({ 64, 3 }, t)
    cu.sync() -- the inputs and o were made on the default stream
    cu.mul(a, b, { out = o, stream = s })
    local e = cu.exp(a, { stream = s })
    local w = cu.where(cu.gt(a:real({ stream = s }), 0, { stream = s }), a, b, { stream = s })
    s:sync()
    check_binary("add", r, a, b, t .. " on a stream")
    check_binary("maximum", m, a, b, t .. " maximum")
    check_binary("mul", o, a, b, t .. " out on a stream")
    T.eq(e.shape, { 64, 3 })
    local cv, av, bv, wv = flat(cu.gt(a:real(), 0)), flat(a), flat(cu.add(cu.zeros({ 64, 3 }, t), b)), flat(w)
    for i = 1, #wv do T.truthy(S.same(wv[i], cv[i] and av[i] or bv[i]), "where on a stream") end
  end
  -- a chain on the stream with the current-stream mechanism
  local a = operand({ 1000 }, "f64", "arith", "contig")
  cu.sync()
  local x
  do
    local _ <close> = cu.use_stream(s)
    x = ((a + 1) * 2 - a) / 3
  end
  s:sync()
  local av, xv = flat(a), flat(x)
  for i = 1, #av do T.truthy(S.same(xv[i], ((av[i] + 1) * 2 - av[i]) / 3), "chain " .. i) end
end)

case("host arrays are computed on the host, with every op and views", function()
  for _, t in ipairs({ "f32", "f64", "i32", "u8", "bool", "c128", "bf16" }) do
    local s = rand_shape(3, 40)
    local a = operand(s, t, "arith", nil, true)
    local b = operand(bcast_partner(s), t, "arith", nil, true)
    T.truthy(a.location ~= "device", "a host array")
    for _, op in ipairs({ "add", "mul", "eq", "maximum", "sub" }) do
      local ct = binary_types(op, promote(t, t))
      if binary_defined(op, ct) then
        local r = cu[op](a, b)
        T.truthy(r.location ~= "device", t .. " " .. op .. " result is a host array")
        check_binary(op, r, a, b, "host " .. t)
      end
    end
    local u = cu.sqrt(a)
    T.truthy(u.location ~= "device")
    check_unary("sqrt", u, a, "host " .. t)
    local c = a + 1
    T.eq(c.location, "pageable")
    local w = cu.where(cu.host.array({ true, false }, "bool"):view({ 2 }), 1, 2)
    T.eq(w:totable(), { 1, 2 })
    T.eq(w.location, "pageable")
  end
  -- host in place with a transposed alias, and a pinned host array
  local h = cu.host.array({ { 1, 2 }, { 3, 4 } }, "f64")
  cu.add(h, h:transpose(1, 2), { out = h })
  T.eq(h:totable(), { { 2.0, 5.0 }, { 5.0, 8.0 } })
  local p = cu.host.zeros({ 3 }, "i32", { pinned = true })
  cu.add(p, 5, { out = p })
  T.eq(p:totable(), { 5, 5, 5 })
  -- host and device agree
  local d = operand({ 50 }, "f32", "fn", "contig")
  local hh = d:to_host()
  S.same_list(flat(cu.mul(hh, hh)), flat(cu.mul(d, d)), "host vs device mul")
  S.same_list(flat(cu.floordiv(hh, 0.3)), flat(cu.floordiv(d, 0.3)), "host vs device floordiv")
end)

-- ==== operators and methods ====================================================================

case("operators + - * / // % ^ and unary -, with numbers and cu.complex on either side", function()
  local a = operand({ 3, 4 }, "f64", "arith")
  local b = operand({ 4 }, "f64", "arith")
  check_binary("add", a + b, a, b, "a + b")
  check_binary("sub", a - b, a, b, "a - b")
  check_binary("mul", a * b, a, b, "a * b")
  check_binary("div", a / b, a, b, "a / b")
  check_binary("floordiv", a // b, a, b, "a // b")
  check_binary("mod", a % b, a, b, "a % b")
  local p = operand({ 3, 4 }, "f64", "base")
  check_binary("pow", p ^ 2, p, 2, "p ^ 2")
  check_binary("pow", 2 ^ p, 2, p, "2 ^ p")
  check_binary("pow", p ^ 0.5, p, 0.5, "p ^ 0.5")
  check_unary("neg", -a, a, "-a")
  check_binary("add", 2 + a, 2, a, "2 + a")
  check_binary("sub", 2.5 - a, 2.5, a, "2.5 - a")
  check_binary("mul", 3 * a, 3, a, "3 * a")
  check_binary("div", 1 / a, 1, a, "1 / a")
  check_binary("floordiv", 7 // a, 7, a, "7 // a")
  check_binary("mod", 7 % a, 7, a, "7 % a")
  check_binary("add", true + a, true, a, "true + a")
  local z = cu.complex(1.5, -2)
  check_binary("add", a + z, a, z, "a + z")
  check_binary("add", z + a, z, a, "z + a")
  check_binary("sub", z - a, z, a, "z - a")
  check_binary("mul", z * a, z, a, "z * a")
  check_binary("div", z / a, z, a, "z / a")
  local q = operand({ 5 }, "c64", "base")
  check_binary("pow", z ^ q, z, q, "z ^ q")
  -- cu.complex with plain numbers is still complex scalar arithmetic
  local w = z + 1
  T.eq({ w.re, w.im }, { 2.5, -2.0 })
  T.eq((z * z).re, 1.5 * 1.5 - 4)
  local i = operand({ 6 }, "i32", "arith")
  local j = operand({ 6 }, "i32", "small")
  check_binary("floordiv", i // j, i, j, "i // j")
  check_binary("mod", i % j, i, j, "i % j")
  check_binary("div", i / j, i, j, "i / j")
  T.eq((i ^ 2).dtype, "i32")
end)

case("methods: a:add(b), a:lt(b), a:exp() ... with options", function()
  local a = operand({ 4, 3 }, "f32", "arith")
  local b = operand({ 3 }, "f32", "arith")
  for _, op in ipairs(BINARY) do
    if op ~= "pow" then check_binary(op, a[op](a, b), a, b, "a:" .. op .. "(b)") end
  end
  local o = cu.zeros({ 4, 3 }, "f64")
  a:add(b, { out = o })
  check_binary("add", o, a, b, "a:add(b, {out=f64})", "f64")
  for _, op in ipairs(UNARY) do check_unary(op, a[op](a), a, "a:" .. op .. "()") end
end)

-- ==== larger arrays ============================================================================

case("larger arrays, odd sizes (vector and scalar tails)", function()
  for _, n in ipairs({ 1, 15, 17, 1023, 4099 }) do
    local t = ({ "f32", "f16", "i8", "c128", "f64", "u8" })[math.random(6)]
    local a = operand({ n }, t, "arith", "contig")
    local b = operand({ n }, t, "arith", "contig")
    check_binary("add", a + b, a, b, t .. " n=" .. n)
    local an, bn = a:narrow(1, 2, n - 1), b:narrow(1, 1, n - 1)
    if n > 1 then check_binary("mul", an * bn, an, bn, t .. " unaligned n=" .. n) end
    check_binary("eq", cu.eq(a, b), a, b, t .. " eq n=" .. n)
  end
end)

-- ==== errors ===================================================================================

case("errors: shapes, operand types, host with device, undefined ops", function()
  local a = cu.zeros({ 2, 3 })
  local msg = S.raises(function() return a + cu.zeros({ 4 }) end, { "{2,3}", "{4}" })
  T.truthy(msg:find("broadcast", 1, true), msg)
  S.raises(function() return cu.add(a, cu.zeros({ 3, 2 })) end, { "{2,3}", "{3,2}" })
  S.raises(function() return cu.where(cu.ones({ 5 }, "bool"), a, 1) end, "cannot be broadcast")
  S.raises(function() return cu.add(nil, a) end, { "bad argument #1 to 'add' (cu.Array or number expected", "nil" })
  S.raises(function() return cu.add(a, "x") end, { "bad argument #2 to 'add' (cu.Array or number expected", "string" })
  S.raises(function() return cu.mul(a, {}) end, "table")
  S.raises(function() return a + {} end, "table")
  S.raises(function() return "3" * a end, "string")
  S.raises(function() return cu.exp(3) end, "cu.Array")
  S.raises(function() return cu.exp("a") end, "cu.Array")
  S.raises(function() return cu.add(1, 2) end, "array")
  S.raises(function() return cu.where(true, 1, 2) end, "array")
  S.raises(function() return a + a:to_host() end, "to_device")
  S.raises(function() return a:to_host() * a end, "to_device")
  S.raises(function() return cu.where(a:to_host():gt(0), a, 1) end, "to_device")
  S.raises(function() return cu.add(a, 1, { out = cu.host.zeros({ 2, 3 }) }) end, "out")
  S.raises(function() return cu.lt(cu.ones(2, "c128"), cu.ones(2, "c128")) end, "lt is not defined")
  S.raises(function() return cu.sub(cu.ones(2, "bool"), cu.ones(2, "bool")) end, "sub is not defined")
  S.raises(function() return cu.neg(cu.ones(2, "bool")) end, "neg is not defined")
  S.raises(function() return cu.floordiv(cu.ones(2, "c64"), 2) end, "floordiv is not defined")
end)

case("errors: out of the wrong shape or a narrower kind, freed operands, scalars, options", function()
  local a = cu.ones({ 2, 3 })
  S.raises(function() return cu.add(a, 1, { out = cu.zeros({ 3, 2 }) }) end, { "{3,2}", "{2,3}" })
  S.raises(function() return cu.add(a, 1, { out = cu.zeros({ 6 }) }) end, "shape")
  S.raises(function() return cu.add(a, 1, { out = cu.zeros({ 2, 3 }, "i32") }) end,
    { "f32", "i32" })
  S.raises(function() return cu.exp(cu.ones(3, "i32"), { out = cu.zeros(3, "i64") }) end, "i64")
  S.raises(function() return cu.add(a, cu.complex(1, 1), { out = cu.zeros({ 2, 3 }) }) end, "c64")
  S.raises(function() return cu.add(cu.ones(2, "i8"), 1, { out = cu.zeros(2, "bool") }) end, "bool")
  S.raises(function() return cu.add(a, 1, { out = 5 }) end, "out")
  -- numpy's same_kind: signed integers do not go into unsigned ones (any width), complex not into
  -- real; unsigned into signed and narrowing within a kind are allowed
  local i32 = cu.array({ 5, 7 }, "i32")
  S.raises(function() return cu.sub(i32, i32, { out = cu.zeros(2, "u8") }) end,
    { "out= has dtype u8", "i32 result", "same_kind" })
  S.raises(function() return cu.add(cu.ones(2, "i8"), 1, { out = cu.zeros(2, "u32") }) end,
    { "out= has dtype u32", "i8" })
  S.raises(function() return cu.add(cu.ones(2, "c64"), 1, { out = cu.zeros(2, "f64") }) end,
    { "out= has dtype f64", "c64 result" })
  local into_i8 = cu.zeros(2, "i8")
  cu.add(cu.array({ 200, 100 }, "u8"), 100, { out = into_i8 }) -- u8 result 44, 200 wraps to -56
  T.eq(into_i8:totable(), { 44, -56 })
  local into_i16 = cu.zeros(2, "i16")
  cu.mul(i32, 10000, { out = into_i16 }) -- i32 50000, 70000 wrap to i16
  T.eq(into_i16:totable(), { 50000 - 65536, 70000 - 65536 })
  local into_f16 = cu.zeros(2, "f16")
  cu.add(cu.array({ 1e5, 1 }, "f64"), 0, { out = into_f16 })
  T.eq(into_f16:totable(), { math.huge, 1.0 })
  local f = cu.ones(4)
  f:free()
  S.raises_released(function() return f + 1 end)
  S.raises_released(function() return 1 + f end)
  S.raises_released(function() return cu.exp(f) end)
  S.raises_released(function() return -f end)
  S.raises_released(function() return cu.where(f, 1, 2) end)
  local o = cu.zeros(4)
  o:free()
  S.raises_released(function() return cu.add(cu.ones(4), 1, { out = o }) end)
  S.raises(function() return cu.ones(3, "u8") + 300 end, { "300", "u8" })
  S.raises(function() return cu.ones(3, "u8") + -1 end, "u8")
  S.raises(function() return cu.ones(3, "i8") * 128 end, "i8")
  S.raises(function() return cu.ones(3, "u32") - (1 << 40) end, "u32")
  S.raises(function() return cu.where(cu.ones(2, "bool"), cu.ones(2, "u8"), 256) end, "u8")
  S.raises(function() return cu.add(a, a, { bogus = 1 }) end, { "bogus", "out", "stream" })
  S.raises(function() return cu.exp(a, { outt = a }) end, "outt")
  S.raises(function() return cu.where(true, a, a, { dtype = "f32" }) end, "dtype")
  S.raises(function() return cu.add(a, a, { stream = 3 }) end, "stream")
  -- nothing was written into an out array that failed the checks
  local keep = cu.full({ 2, 3 }, 7, "i32")
  pcall(cu.add, a, 1.5, { out = keep })
  T.eq(keep:totable(), { { 7, 7, 7 }, { 7, 7, 7 } })
end)

local rc = T.run()
print(string.format("test_elementwise: %d checks, seed %d", CHECKS, SEED))
os.exit(rc)
