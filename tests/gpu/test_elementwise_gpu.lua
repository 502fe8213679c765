-- GPU elementwise math against the host kernels, in one process: every operation and dtype is
-- computed on the device (CUDA kernels) and on host arrays (cu.host / to_host operands run the
-- host kernels, which tests/lua/test_elementwise.lua checks against Lua references), on random
-- data of several sizes: tiny, not a multiple of any vector width, and >= 1e6 elements, both
-- contiguous and through unaligned views (narrow(1, 2, n) of a base of n + 3), so that the
-- vectorized path, its scalar tail and the element-by-element path all run, plus broadcast,
-- transposed, scalar and mixed-dtype operands (the general, converting path).
--
-- Bit-identical (NaN equal to NaN, +0 equal to -0), since both backends compute with IEEE
-- + - * / and sqrt without FMA contraction (host: -ffp-contract=off, nvcc: --fmad=false) and the
-- same integer code: + - * / // % maximum minimum (complex too) comparisons where neg abs conj real
-- imag, sqrt of reals, integer pow, complex + - * /.
-- Within a tolerance (CUDA's libdevice and the host libm differ in the last bits), relative to
-- the host result, with an absolute floor at the smallest normal number:
--   f64: 8 * 2^-52 (CUDA <= 2 ulp, glibc <= 1 ulp)      f32: 8 * 2^-23 (CUDA powf <= 4 ulp)
--   f16: 2^-10, bf16: 2^-7 (one rounding of f32 results that differ by a few f32 ulps: 1 ulp)
--   c64: 2^-18 * (|z| + 1), c128: 2^-46 * (|z| + 1) per part (complex functions combine
--   several real functions; the +1 covers parts that cancel, e.g. sin(x + iy) near x = k*pi)
-- for exp log sin cos tanh, real/complex pow, complex sqrt and abs (hypot).
--
-- Run with `culua --backend cuda tests/gpu/test_elementwise_gpu.lua` (exits 69 without a GPU).
-- CULUA_TEST_SEED=<n> repeats a run; CULUA_GPU_TEST_ON_HOST=1 runs the script on the host backend
-- (device arrays then also use the host kernels: a check of the script itself).
package.path = (arg and arg[0] and arg[0]:match("^(.*)[/\\]") or "tests/gpu") .. "/../lua/?.lua;" ..
    package.path
local T = require "cu.testing"

if cu.backend ~= "cuda" and os.getenv("CULUA_GPU_TEST_ON_HOST") ~= "1" then
  print("skip: test_elementwise_gpu needs --backend cuda")
  os.exit(69)
end

local SEED = tonumber(os.getenv("CULUA_TEST_SEED") or "") or
    ((os.time() * 1000003 + math.floor(os.clock() * 1e6)) % (1 << 40))
print(string.format("test_elementwise_gpu: seed %d (CULUA_TEST_SEED=%d repeats this run)", SEED, SEED))
math.randomseed(SEED)

local DTYPES = { "f32", "f64", "f16", "bf16", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64",
  "bool", "c64", "c128" }
local KIND = {
  f32 = "float", f64 = "float", f16 = "float", bf16 = "float", i8 = "int", i16 = "int",
  i32 = "int", i64 = "int", u8 = "int", u16 = "int", u32 = "int", u64 = "int", bool = "bool",
  c64 = "complex", c128 = "complex",
}
local RANGE = { i8 = { -128, 127 }, i16 = { -32768, 32767 }, i32 = { -2 ^ 31, 2 ^ 31 - 1 },
  i64 = { -2 ^ 62, 2 ^ 62 }, u8 = { 0, 255 }, u32 = { 0, 2 ^ 32 - 1 },
  u16 = { 0, 65535 }, u64 = { 0, 2 ^ 62 } }
local SIGNED = { i8 = true, i16 = true, i32 = true, i64 = true }

-- Tolerances of the non-exact operations (see the header): relative factor and absolute floor.
local TOL = {
  f64 = { rel = 8 * 2.0 ^ -52, tiny = 2.0 ^ -1022 },
  f32 = { rel = 8 * 2.0 ^ -23, tiny = 2.0 ^ -126 },
  f16 = { rel = 2.0 ^ -10, tiny = 2.0 ^ -14 },
  bf16 = { rel = 2.0 ^ -7, tiny = 2.0 ^ -126 },
  c64 = { rel = 2.0 ^ -18 },
  c128 = { rel = 2.0 ^ -46 },
}

local BINARY = { "add", "sub", "mul", "div", "pow", "maximum", "minimum", "floordiv", "mod", "eq",
  "ne", "lt", "le", "gt", "ge" }
local UNARY = { "neg", "abs", "exp", "log", "sqrt", "sin", "cos", "tanh", "conj", "real", "imag" }

local function binary_defined(op, t)
  local k = KIND[t]
  if op == "add" or op == "mul" or op == "eq" or op == "ne" or op == "div" then return true end
  if op == "sub" or op == "pow" then return k ~= "bool" end
  if op == "floordiv" or op == "mod" then return k == "int" or k == "float" end
  if op == "maximum" or op == "minimum" then return true end
  return k ~= "complex"
end

-- Is the result of op on dtype t exactly reproducible across backends?
local function exact_binary(op, t)
  return op ~= "pow" or KIND[t] == "int"
end
local function exact_unary(op, t)
  if op == "exp" or op == "log" or op == "sin" or op == "cos" or op == "tanh" then return false end
  if (op == "sqrt" or op == "abs") and KIND[t] == "complex" then return false end
  return true
end

-- Host-side checks, computed with the host kernels ------------------------------------------

local CHECKS = 0

-- Any true element of a bool host array, with elementwise ops only: fold the halves together.
local function any_true(b)
  b = b:contiguous()
  local n = b.size
  if n == 0 then return false end
  b = b:view({ n })
  while n > 1 do
    local h = n // 2
    local folded = cu.add(b:narrow(1, 1, h), b:narrow(1, h + 1, h))
    if n % 2 == 1 then folded = cu.add(folded, b:narrow(1, n, 1)) end
    b, n = folded, h
  end
  return b[1]
end

local function first_true(b)
  local v = b:contiguous():view({ b.size }):totable()
  for i = 1, #v do
    if v[i] then return i end
  end
end

local function flat1(a)
  return a:contiguous():view({ a.size })
end

local function element(a, i)
  local v = flat1(a)[i]
  if type(v) == "userdata" and v.re then return string.format("(%.17g%+.17gj)", v.re, v.im) end
  if math.type(v) == "float" then return string.format("%.17g", v) end
  return tostring(v)
end

-- Elements where the device result d and the host result h (both host arrays) differ.
local function mismatch_exact(d, h)
  if KIND[h.dtype] == "complex" then
    return cu.add(mismatch_exact(cu.real(d), cu.real(h)), mismatch_exact(cu.imag(d), cu.imag(h)))
  end
  local ne = cu.ne(d, h)
  if KIND[h.dtype] ~= "float" then return ne end
  return cu.mul(ne, cu.add(cu.eq(d, d), cu.eq(h, h))) -- and not (both NaN)
end

local function mismatch_real_tol(d, h, bound)
  d, h = d:astype("f64"), h:astype("f64")
  local nan_d, nan_h = cu.ne(d, d), cu.ne(h, h)
  local diff = cu.abs(cu.sub(d, h)) -- NaN for equal infinities: not flagged
  return cu.add(cu.ne(nan_d, nan_h), cu.gt(diff, bound))
end

local function mismatch_tol(d, h, scale)
  local t = h.dtype
  if KIND[t] == "complex" then
    local bound = cu.mul(cu.add(cu.abs(h):astype("f64"), 1.0), TOL[t].rel * (scale or 1))
    return cu.add(mismatch_real_tol(cu.real(d), cu.real(h), bound),
      mismatch_real_tol(cu.imag(d), cu.imag(h), bound))
  end
  local bound = cu.add(cu.mul(cu.abs(h:astype("f64")), TOL[t].rel), TOL[t].tiny)
  return mismatch_real_tol(d, h, bound)
end

-- Compares the device result `rd` (a device array) with the host result `rh`.
local function compare(rd, rh, exact, what, inputs)
  CHECKS = CHECKS + 1
  if rd.dtype ~= rh.dtype then
    error(string.format("[seed %d] %s: dtype %s on the device, %s on the host", SEED, what, rd.dtype,
      rh.dtype), 2)
  end
  T.eq(rd.shape, rh.shape, what .. " shape")
  T.eq(rd.location, "device", what .. " runs on the device")
  if rh.size == 0 then return end
  local d = rd:to_host()
  -- Complex pow is exp(b * log(a)): a rounding error of eps * |b log a| in the exponent becomes a
  -- relative error of that size in the result. A finite result needs |b log a| < 710 (c128; 89
  -- for c64), so the factor stays below 1024.
  local scale = (what:match("^pow") and KIND[rh.dtype] == "complex") and 1024 or 1
  local bad = exact and mismatch_exact(d, rh) or mismatch_tol(d, rh, scale)
  if any_true(bad) then
    local i = first_true(bad)
    local ins = {}
    for k, a in ipairs(inputs or {}) do
      if type(a) == "userdata" and a.size and a.size == rh.size then ins[k] = element(a, i) end
    end
    error(string.format("[seed %d] %s: element %d differs%s: device %s, host %s (inputs %s)", SEED,
      what, i, exact and " (must be bit-identical)" or " beyond the tolerance", element(d, i),
      element(rh, i), table.concat(ins, ", ")), 2)
  end
end

-- Random data ----------------------------------------------------------------------------------

-- Uniform [0, 1) values as an f64 host array of n elements (from cu.rand when it exists).
local function uniform(n)
  local t = {}
  for i = 1, n do t[i] = math.random() end
  return cu.host.array(t, "f64")
end

local UCACHE = {}
local function base_uniform(n, slot)
  local key = n .. ":" .. slot
  if not UCACHE[key] then UCACHE[key] = uniform(n) end
  return UCACHE[key]
end

local SPECIALS = { 0.0, -0.0, 1.0, -1.0, math.huge, -math.huge, 0 / 0, 0.5, 65504.0, 1e-30 }

-- A host array of dtype t and n elements from the uniform array u (host, f64), for `purpose`:
-- "arith" (wide ranges, edge values), "fn" (moderate values), "base"/"exponent" (for pow).
local function data(u, t, purpose)
  local k = KIND[t]
  local n = u.size
  local a
  if k == "bool" then
    a = cu.lt(u, 0.5)
  elseif k == "int" then
    local lo, hi = RANGE[t][1], RANGE[t][2]
    if purpose == "fn" or purpose == "base" then lo, hi = math.max(lo, -20), math.min(hi, 20) end
    if purpose == "exponent" then lo, hi = SIGNED[t] and -3 or 0, 12 end
    a = cu.add(cu.mul(u, hi - lo + 1.0), lo + 0.0)
    a = cu.minimum(a, hi + 0.0):astype(t)
    if purpose == "arith" and n > 4 then
      a[1] = math.tointeger(RANGE[t][1]) or 0
      a[2] = 0
      a[n] = math.tointeger(hi) or 1
    end
  elseif k == "float" then
    if purpose == "fn" then
      a = cu.mul(cu.sub(u, 0.5), 10.0)
    elseif purpose == "base" then
      a = cu.add(cu.mul(u, 8.0), 0.05)
    elseif purpose == "exponent" then
      a = cu.mul(cu.sub(u, 0.5), 8.0)
    else
      a = cu.mul(cu.sub(u, 0.5), t == "f16" and 1000.0 or 2e6)
    end
    a = a:astype(t)
    if purpose == "arith" then
      for i = 1, math.min(#SPECIALS, n // 3) do a[i * 3] = SPECIALS[i] end
    end
  else
    local part = t == "c64" and "f32" or "f64"
    local re = data(u, part, purpose)
    -- an imaginary part decorrelated from the real part
    local v = cu.mod(cu.add(cu.mul(u, 7.31), 0.123), 1.0)
    local im = data(v, part, purpose == "arith" and "fn" or purpose)
    if purpose == "fn" then im = cu.mul(im, 0.24):astype(part) end -- |im| <= 1.2: no tanh poles
    a = cu.add(re:astype(t), cu.mul(im:astype(t), cu.complex(0, 1)))
  end
  return a
end

local function purposes(op, t)
  if op == "pow" then return "base", "exponent" end
  if op == "exp" or op == "log" or op == "sin" or op == "cos" or op == "tanh" then return "fn", "fn" end
  if op == "sqrt" and KIND[t] == "complex" then return "fn", "fn" end
  return "arith", "arith"
end

-- Operand pairs: the host array and the same values on the device, contiguous or as an
-- unaligned view (narrow(1, 2, n) of n + 2 elements).
local function operands(n, t, purpose, slot, layout)
  local base = data(base_uniform(n + 3, slot), t, purpose)
  local h
  if layout == "unaligned" then
    h = base:narrow(1, 2, n)
    local d = base:to_device():narrow(1, 2, n)
    return h, d
  end
  h = base:narrow(1, 1, n):contiguous()
  return h, h:to_device()
end

-- Cases ----------------------------------------------------------------------------------------

local SIZES = { 1, 7, 33, 1000, 4099, 1000003 }
local BIG = 1000003
-- Both layouts for every size, except that the >= 1e6 size alternates them between operations
-- (keeps the host side of the run short).
local function runs(n, layout, k)
  if n < BIG then return true end
  return (k % 2 == 0) == (layout == "contiguous")
end

T.case("every binary op and dtype: device equals host (contiguous and unaligned views)", function()
  for _, n in ipairs(SIZES) do
    for _, layout in ipairs({ "contiguous", "unaligned" }) do
      for _, t in ipairs(DTYPES) do
        for k, op in ipairs(BINARY) do
          if binary_defined(op, t) and runs(n, layout, k) then
            local pa, pb = purposes(op, t)
            local ha, da = operands(n, t, pa, 1, layout)
            local hb, db = operands(n, t, pb, 2, layout)
            local what = string.format("%s %s n=%d %s", op, t, n, layout)
            compare(cu[op](da, db), cu[op](ha, hb), exact_binary(op, t), what, { ha, hb })
          end
        end
      end
    end
  end
end)

T.case("every unary op and dtype: device equals host", function()
  for _, n in ipairs(SIZES) do
    for _, layout in ipairs({ "contiguous", "unaligned" }) do
      for _, t in ipairs(DTYPES) do
        for k, op in ipairs(UNARY) do
          if not (op == "neg" and t == "bool") and runs(n, layout, k) then
            local p = purposes(op, t)
            local h, d = operands(n, t, p, 1, layout)
            local what = string.format("%s %s n=%d %s", op, t, n, layout)
            compare(cu[op](d), cu[op](h), exact_unary(op, t), what, { h })
          end
        end
      end
    end
  end
end)

T.case("scalars on either side, broadcasting and transposed operands", function()
  for _, t in ipairs(DTYPES) do
    local scalar = KIND[t] == "bool" and true or KIND[t] == "complex" and cu.complex(1.5, -0.5) or
        KIND[t] == "float" and 2.5 or 3
    for _, op in ipairs(BINARY) do
      if binary_defined(op, t) then
        local pa = purposes(op, t)
        local n = 4099
        local ha, da = operands(n, t, pa, 1, "contiguous")
        local exact = exact_binary(op, t)
        local s = op == "pow" and (KIND[t] == "int" and 2 or scalar) or scalar
        local ok = pcall(cu[op], ha, s)
        if ok then
          compare(cu[op](da, s), cu[op](ha, s), exact, op .. " " .. t .. " array-scalar", { ha })
          if not (op == "pow" and KIND[t] == "int") then
            compare(cu[op](s, da), cu[op](s, ha), exact, op .. " " .. t .. " scalar-array", { ha })
          end
        end
        -- {r, c} with a row {c}, a column {r, 1} and the transpose of {c, r}
        local r, c = 37, 29
        local hm = data(base_uniform(r * c, 3), t, pa):view({ r, c })
        local dm = hm:to_device()
        local hrow, drow = operands(c, t, "arith", 4, "unaligned")
        local hcol = data(base_uniform(r, 5), t, "arith"):view({ r, 1 })
        local dcol = hcol:to_device()
        local ht = data(base_uniform(r * c, 6), t, "arith"):view({ c, r })
        local dt = ht:to_device()
        compare(cu[op](dm, drow), cu[op](hm, hrow), exact, op .. " " .. t .. " matrix-row")
        compare(cu[op](dcol, dm), cu[op](hcol, hm), exact, op .. " " .. t .. " column-matrix")
        compare(cu[op](dm, dt:transpose(1, 2)), cu[op](hm, ht:transpose(1, 2)), exact,
          op .. " " .. t .. " matrix-transposed")
      end
    end
  end
end)

T.case("mixed dtypes: the converting path on the device equals the host", function()
  local n = BIG
  for _, ta in ipairs(DTYPES) do
    for _, tb in ipairs(DTYPES) do
      local op = BINARY[math.random(#BINARY)]
      local size = math.random() < 0.05 and n or 513
      local ha, da = operands(size, ta, "arith", 1, math.random() < 0.5 and "unaligned" or "contiguous")
      local hb, db = operands(size, tb, "arith", 2, "contiguous")
      local ok, rh = pcall(cu[op], ha, hb)
      if ok then
        local exact = op ~= "pow" or KIND[rh.dtype] == "int"
        compare(cu[op](da, db), rh, exact, string.format("%s %s with %s n=%d", op, ta, tb, size),
          { ha, hb })
        compare(cu.add(da, db), cu.add(ha, hb), true, ta .. " + " .. tb)
      end
    end
  end
end)

T.case("where, out= and in-place on the device equal the host", function()
  for _, t in ipairs(DTYPES) do
    for _, n in ipairs({ 33, BIG }) do
      local hc, dc = operands(n, "bool", "arith", 3, "unaligned")
      local hx, dx = operands(n, t, "arith", 1, "contiguous")
      local hy, dy = operands(n, t, "arith", 2, "unaligned")
      compare(cu.where(dc, dx, dy), cu.where(hc, hx, hy), true, "where " .. t .. " n=" .. n)
      local s = KIND[t] == "complex" and cu.complex(0, 1) or KIND[t] == "bool" and false or 1
      compare(cu.where(dc, dx, s), cu.where(hc, hx, s), true, "where scalar " .. t)
      -- in place, and out of another dtype
      if KIND[t] ~= "bool" then
        local dd, hh = dx:clone(), hx:clone()
        cu.mul(dd, dy, { out = dd })
        cu.mul(hh, hy, { out = hh })
        compare(dd, hh, true, "in-place mul " .. t)
      end
      local wide = ({ float = "f64", int = "i64", bool = "i32", complex = "c128" })[KIND[t]]
      local od, oh = cu.zeros(n, wide), cu.host.zeros(n, wide)
      cu.add(dx, dy, { out = od })
      cu.add(hx, hy, { out = oh })
      compare(od, oh, true, "add " .. t .. " into " .. wide)
    end
    -- a square matrix plus its transpose into itself
    local m = 301
    local hm = data(base_uniform(m * m, 4), t, "arith"):view({ m, m })
    local dm = hm:to_device()
    if KIND[t] ~= "bool" then
      cu.sub(dm, dm:transpose(1, 2), { out = dm })
      cu.sub(hm, hm:transpose(1, 2), { out = hm })
      compare(dm, hm, true, "a - a^T into a " .. t)
    end
  end
end)

-- Complex functions at special and large values (the inputs of tests/lua/test_complex_special.lua:
-- every pair of parts from +-0, a subnormal, ordinary and overflowing values, +-inf, NaN): a part
-- is NaN, infinite or zero on the device exactly when it is on the host, with the same sign;
-- finite nonzero parts agree within 8 ulp (the real math libraries differ in the last bits).
T.case("complex functions at special and large values: device equals host (Annex G cases)", function()
  local DATA = require "complex_special_data"
  local EPS = { c64 = 2.0 ^ -23, c128 = 2.0 ^ -52 }
  local TINY = { c64 = 2.0 ^ -126, c128 = 2.0 ^ -1022 }
  local function same(d, h, eps, tiny)
    if h ~= h then return d ~= d end
    if h == 0 then return d == 0 and 1 / d == 1 / h end
    if h == math.huge or h == -math.huge then return d == h end
    return d == d and math.abs(d - h) <= 8 * eps * math.max(math.abs(h), tiny)
  end
  local function complex_host(flat, t)
    local v = {}
    for i = 1, #flat, 2 do v[#v + 1] = cu.complex(flat[i], flat[i + 1]) end
    return cu.host.array(v, t)
  end
  local function check_special(rd, rh, t, what, ins)
    CHECKS = CHECKS + 1
    T.eq(rd.dtype, rh.dtype, what .. " dtype")
    local d, h = rd:to_host():totable(), rh:totable()
    for i = 1, #h do
      if not (same(d[i].re, h[i].re, EPS[t], TINY[t]) and same(d[i].im, h[i].im, EPS[t], TINY[t])) then
        error(string.format("%s %s: element %d differs: device %s, host %s (inputs %s)", what, t, i,
          element(rd:to_host(), i), element(rh, i), table.concat(ins(i), ", ")), 2)
      end
    end
  end
  for _, t in ipairs({ "c64", "c128" }) do
    local D = DATA[t]
    local hz = complex_host(D.inputs, t)
    local dz = hz:to_device()
    local one = function(i) return { element(hz, i) } end
    for _, f in ipairs({ "exp", "log", "sqrt", "sin", "cos", "tanh", "abs" }) do
      if f == "abs" then
        compare(cu.abs(dz), cu.abs(hz), false, "abs special " .. t, { hz })
      else
        check_special(cu[f](dz), cu[f](hz), t, f, one)
      end
    end
    local ha, hb = complex_host(D.pow_base, t), complex_host(D.pow_exponent, t)
    check_special(cu.pow(ha:to_device(), hb:to_device()), cu.pow(ha, hb), t, "pow",
      function(i) return { element(ha, i), element(hb, i) } end)
    local oa, ob = complex_host(D.order_a, t), complex_host(D.order_b, t)
    for _, op in ipairs({ "maximum", "minimum" }) do
      compare(cu[op](oa:to_device(), ob:to_device()), cu[op](oa, ob), true, op .. " special " .. t,
        { oa, ob })
    end
  end
end)

T.case("operations on a stream, synchronized", function()
  local s = cu.stream()
  local ha, da = operands(BIG, "f32", "fn", 1, "unaligned")
  local hb, db = operands(BIG, "f32", "arith", 2, "contiguous")
  cu.sync() -- the operands were copied on the default stream
  local rd = cu.add(cu.mul(da, db, { stream = s }), da, { stream = s })
  local ed = cu.exp(da, { stream = s })
  s:sync()
  compare(rd, cu.add(cu.mul(ha, hb), ha), true, "stream chain")
  compare(ed, cu.exp(ha), false, "stream exp")
end)

local rc = T.run()
print(string.format("test_elementwise_gpu: %d comparisons, seed %d", CHECKS, SEED))
os.exit(rc)
