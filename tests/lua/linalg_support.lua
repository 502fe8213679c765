-- Helpers of the matmul/dot tests (tests/lua/test_linalg.lua, tests/gpu/test_linalg_gpu.lua): random
-- operands, an f64 reference product computed in Lua with numpy's matmul semantics, and a
-- comparison with tolerances per dtype.
--
-- Tolerances: |got - ref| <= tol * sum_k |a_ik| |b_kj| + tiny, with tol per dtype (below). The
-- error of a K-term sum in precision eps is at most about eps * sqrt(K) (random rounding) to
-- eps * K (worst case) times that scale; the constants allow K up to a few thousand:
--   f64, c128: 1e-13     f32, c64: 1e-5 * sqrt(K) / 8 (>= 2e-6)
--   f16: 1e-2            bf16: 3e-2     (the output's rounding: 2^-11 and 2^-8 relative; f32 sums)
local T = require "cu.testing"

local L = {}

L.FLOATS = { "f32", "f64", "f16", "bf16", "c64", "c128" }
L.COMPLEX = { c64 = true, c128 = true }

function L.tolerance(dtype, k)
  if dtype == "f64" or dtype == "c128" then return 1e-13 end
  if dtype == "f32" or dtype == "c64" then return math.max(2e-6, 1e-5 * math.sqrt(k) / 8) end
  if dtype == "f16" then return 1e-2 end
  return 3e-2
end

local function prod(shape, from, to)
  local p = 1
  for i = from or 1, to or #shape do p = p * shape[i] end
  return p
end
L.prod = prod

-- Nested table of `shape` from a flat list (row-major).
local function nest(flat, shape, dim, offset)
  dim, offset = dim or 1, offset or 0
  if #shape == 0 then return flat[1] end
  local t = {}
  local inner = prod(shape, dim + 1)
  for i = 1, shape[dim] do
    if dim == #shape then
      t[i] = flat[offset + i]
    else
      t[i] = nest(flat, shape, dim + 1, offset + (i - 1) * inner)
    end
  end
  return t
end
L.nest = nest

-- A device array of `shape` with random values in [-1, 1) (both parts for complex).
function L.random_array(shape, dtype, opts)
  local n = prod(shape)
  local flat = {}
  for i = 1, n do
    if L.COMPLEX[dtype] then
      flat[i] = cu.complex(2 * math.random() - 1, 2 * math.random() - 1)
    else
      flat[i] = 2 * math.random() - 1
    end
  end
  if #shape == 0 then return cu.full({}, flat[1], dtype, opts) end
  if n == 0 then return cu.zeros(shape, dtype, opts) end
  return cu.array(nest(flat, shape), dtype, opts)
end

-- Flat list of {re, im} pairs of an array as stored (read through its view).
function L.values(a)
  local t = a:totable()
  local flat = {}
  local function walk(v)
    if type(v) == "table" then
      for i = 1, #v do walk(v[i]) end
    elseif type(v) == "userdata" then
      flat[#flat + 1] = { v.re, v.im }
    else
      flat[#flat + 1] = { v + 0.0, 0.0 }
    end
  end
  walk(t)
  return flat
end

-- numpy's matmul in f64 of the values of two arrays (views are read as they look): returns the
-- flat result ({re, im} pairs), the per-element scale sum_k |a_ik| |b_kj|, and the result shape.
function L.reference(a, b, alpha, beta, out_values)
  local av, bv = L.values(a), L.values(b)
  local ash, bsh = a.shape, b.shape
  local a1, b1 = #ash == 1, #bsh == 1
  if a1 then ash = { 1, ash[1] } end
  if b1 then bsh = { bsh[1], 1 } end
  local M, K, N = ash[#ash - 1], ash[#ash], bsh[#bsh]
  assert(bsh[#bsh - 1] == K, "reference: inner dimensions differ")
  local na, nb = #ash - 2, #bsh - 2
  local nbatch = math.max(na, nb)
  local batch = {}
  for d = 1, nbatch do
    local da, db = d - (nbatch - na), d - (nbatch - nb)
    local ea, eb = da >= 1 and ash[da] or 1, db >= 1 and bsh[db] or 1
    batch[d] = ea == 1 and eb or ea
  end
  alpha = alpha or { 1, 0 }
  beta = beta or { 0, 0 }
  local out, scale = {}, {}
  local idx = {}
  for bi = 0, prod(batch) - 1 do
    local rem = bi
    for d = nbatch, 1, -1 do
      idx[d] = rem % batch[d]
      rem = rem // batch[d]
    end
    local la, lb = 0, 0
    for d = 1, nbatch do
      local da, db = d - (nbatch - na), d - (nbatch - nb)
      if da >= 1 then la = la * ash[da] + (ash[da] == 1 and 0 or idx[d]) end
      if db >= 1 then lb = lb * bsh[db] + (bsh[db] == 1 and 0 or idx[d]) end
    end
    for i = 0, M - 1 do
      for j = 0, N - 1 do
        local re, im, s = 0.0, 0.0, 0.0
        for k = 0, K - 1 do
          local x = av[la * M * K + i * K + k + 1]
          local y = bv[lb * K * N + k * N + j + 1]
          re = re + x[1] * y[1] - x[2] * y[2]
          im = im + x[1] * y[2] + x[2] * y[1]
          s = s + math.sqrt(x[1] ^ 2 + x[2] ^ 2) * math.sqrt(y[1] ^ 2 + y[2] ^ 2)
        end
        local pos = #out + 1
        local r = { alpha[1] * re - alpha[2] * im, alpha[1] * im + alpha[2] * re }
        s = s * math.sqrt(alpha[1] ^ 2 + alpha[2] ^ 2)
        if out_values then
          local c = out_values[pos]
          r[1] = r[1] + beta[1] * c[1] - beta[2] * c[2]
          r[2] = r[2] + beta[1] * c[2] + beta[2] * c[1]
          s = s + math.sqrt(beta[1] ^ 2 + beta[2] ^ 2) * math.sqrt(c[1] ^ 2 + c[2] ^ 2)
        end
        out[pos] = r
        scale[pos] = s
      end
    end
  end
  local shape = {}
  for d = 1, nbatch do shape[#shape + 1] = batch[d] end
  if not a1 then shape[#shape + 1] = M end
  if not b1 then shape[#shape + 1] = N end
  return out, scale, shape, K
end

-- Integer dtypes of matmul: their width and sign (bool: the or of ands).
L.INTEGERS = { i8 = { 8, true }, i16 = { 16, true }, i32 = { 32, true }, i64 = { 64, true },
  u8 = { 8, false }, u32 = { 32, false }, u16 = { 16, false }, u64 = { 64, false } }

local function wrap_to(x, dtype)
  local w = L.INTEGERS[dtype]
  if w[1] == 64 then return x end
  local v = x & ((1 << w[1]) - 1)
  if w[2] and v >= (1 << (w[1] - 1)) then v = v - (1 << w[1]) end
  return v
end
L.wrap_to = wrap_to

-- Random integers of a dtype: the full range (so that products wrap), or [-9, 9] when `small`.
function L.random_ints(shape, dtype, small)
  local n = prod(shape)
  local flat = {}
  for i = 1, n do
    if dtype == "bool" then
      flat[i] = math.random() < 0.5
    elseif small then
      flat[i] = L.INTEGERS[dtype][2] and math.random(-9, 9) or math.random(0, 9)
    elseif dtype == "u64" then
      flat[i] = math.random(0, math.maxinteger) -- a u64 array takes Lua integers below 2^63
    else
      flat[i] = wrap_to(math.random(math.mininteger, math.maxinteger), dtype)
    end
  end
  if n == 0 then return cu.zeros(shape, dtype) end
  return cu.array(nest(flat, shape), dtype)
end

-- The flat elements of an array as Lua integers (bool: 0/1), read through its view.
local function int_values(a)
  local flat = {}
  local function walk(v)
    if type(v) == "table" then
      for i = 1, #v do walk(v[i]) end
    elseif type(v) == "boolean" then
      flat[#flat + 1] = v and 1 or 0
    else
      flat[#flat + 1] = math.tointeger(v)
    end
  end
  -- u64 elements from 2^63 up read back as floats: read their bit patterns instead
  walk((a.dtype == "u64" and a:astype("i64") or a):totable())
  return flat
end
L.int_values = int_values

-- numpy's matmul of integer or bool arrays in `dtype`, a naive loop in Lua's 64-bit wrapping
-- integers, then wrapped to the dtype (bool: the or of ands, as 0/1): the flat result and shape.
function L.int_reference(a, b, dtype, alpha, beta, out_values)
  local av, bv = int_values(a), int_values(b)
  local ash, bsh = a.shape, b.shape
  local a1, b1 = #ash == 1, #bsh == 1
  if a1 then ash = { 1, ash[1] } end
  if b1 then bsh = { bsh[1], 1 } end
  local M, K, N = ash[#ash - 1], ash[#ash], bsh[#bsh]
  assert(bsh[#bsh - 1] == K, "int_reference: inner dimensions differ")
  local na, nb = #ash - 2, #bsh - 2
  local nbatch = math.max(na, nb)
  local batch = {}
  for d = 1, nbatch do
    local da, db = d - (nbatch - na), d - (nbatch - nb)
    local ea, eb = da >= 1 and ash[da] or 1, db >= 1 and bsh[db] or 1
    batch[d] = ea == 1 and eb or ea
  end
  local out, idx = {}, {}
  for bi = 0, prod(batch) - 1 do
    local rem = bi
    for d = nbatch, 1, -1 do
      idx[d] = rem % batch[d]
      rem = rem // batch[d]
    end
    local la, lb = 0, 0
    for d = 1, nbatch do
      local da, db = d - (nbatch - na), d - (nbatch - nb)
      if da >= 1 then la = la * ash[da] + (ash[da] == 1 and 0 or idx[d]) end
      if db >= 1 then lb = lb * bsh[db] + (bsh[db] == 1 and 0 or idx[d]) end
    end
    for i = 0, M - 1 do
      for j = 0, N - 1 do
        local sum = 0
        for k = 0, K - 1 do
          sum = sum + av[la * M * K + i * K + k + 1] * bv[lb * K * N + k * N + j + 1]
        end
        local pos = #out + 1
        if dtype == "bool" then
          out[pos] = sum ~= 0 and 1 or 0
        else
          local r = (alpha or 1) * sum
          if beta then r = r + beta * out_values[pos] end
          out[pos] = wrap_to(r, dtype)
        end
      end
    end
  end
  local shape = {}
  for d = 1, nbatch do shape[#shape + 1] = batch[d] end
  if not a1 then shape[#shape + 1] = M end
  if not b1 then shape[#shape + 1] = N end
  return out, shape
end

-- Checks an integer or bool product exactly against int_reference.
function L.check_int(result, a, b, what, opts)
  opts = opts or {}
  local ref, shape = L.int_reference(a, b, result.dtype, opts.alpha, opts.beta, opts.out_values)
  T.eq(result.shape, shape, what .. ": shape")
  local got = int_values(result)
  T.eq(#got, #ref, what .. ": size")
  for i = 1, #ref do
    if got[i] ~= ref[i] then
      error(string.format("%s: element %d: got %d, expected %d", what, i, got[i], ref[i]), 2)
    end
  end
end

-- Checks a result array against the reference of a @ b (with alpha, beta and out's old values).
function L.check(result, a, b, what, opts)
  opts = opts or {}
  local ref, scale, shape, K = L.reference(a, b, opts.alpha, opts.beta, opts.out_values)
  T.eq(result.shape, shape, what .. ": shape")
  local got = L.values(result)
  T.eq(#got, #ref, what .. ": size")
  local tol = opts.tol or L.tolerance(result.dtype, K)
  local worst, where = 0, 0
  for i = 1, #ref do
    local err = math.sqrt((got[i][1] - ref[i][1]) ^ 2 + (got[i][2] - ref[i][2]) ^ 2)
    local rel = err / (scale[i] + 1e-300)
    if not (rel <= worst) then worst, where = rel, i end
  end
  if not (worst <= tol) then
    error(string.format("%s: element %d: got %s%+gi, expected %s%+gi (error %.3g of the scale, "
      .. "tolerance %.3g)", what, where, got[where][1], got[where][2], ref[where][1], ref[where][2],
      worst, tol), 2)
  end
  return worst
end

return L
