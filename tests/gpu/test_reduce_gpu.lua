-- GPU reductions at scale, compared in this process with the host kernels: `a:op()` runs the CUDA
-- kernels, `a:to_host():op()` the host ones (host arrays are reduced on the calling thread).
-- Tolerances relative to the host result (data are non-negative, so there is no cancellation):
-- f32/c64 1e-5, f16 2e-3, bf16 1.6e-2, f64/c128 1e-12; integers, max/min/argmax/argmin exact.
package.path = (arg and arg[0] and arg[0]:match("^(.*)[/\\]") or "tests/gpu") .. "/../lua/?.lua;" .. package.path
local T = require "cu.testing"
local S = require "support"

local SEED = tonumber(os.getenv("CULUA_TEST_SEED")) or os.time()
math.randomseed(SEED)
print("seed: " .. SEED)

local TOL = { f32 = 1e-5, c64 = 1e-5, f16 = 2e-3, bf16 = 1.6e-2, f64 = 1e-12, c128 = 1e-12 }
local ORDERING = { max = true, min = true, argmax = true, argmin = true }

-- n values in [0, 1) on the device, fresh each run: cu.rand when it exists, else a random block of
-- 65537 values (an odd period, so that reading the wrong element shows) copied along the array.
local function random_f32(n)
  if cu.rand then return cu.rand(n, "f32", { seed = SEED }) end
  local period = 65537
  local vals = {}
  for i = 1, math.min(n, period) do vals[i] = math.random() end
  local block = cu.array(vals, "f32")
  local a = cu.empty(n, "f32")
  for start = 1, n, period do
    local len = math.min(period, n - start + 1)
    cu.copy(a:narrow(1, start, len), block:narrow(1, 1, len))
  end
  return a
end

local function values(r)
  local t = r:totable()
  if r.ndim == 0 then return { t } end
  return S.flatten(t)
end

local function parts(v)
  if type(v) == "userdata" then return v.re, v.im end
  if type(v) == "boolean" then return v and 1 or 0, 0 end
  return v, 0
end

local function close(d, h, tol)
  if h ~= h then return d ~= d end
  if d == h then return true end
  return math.abs(d - h) <= tol * math.abs(h) + 1e-30
end

-- Device result vs host result of the same reduction.
local function compare(op, a, opts, what)
  local d = a[op](a, opts)
  local ha = a:to_host()
  local h = ha[op](ha, opts)
  T.eq(d.location, "device")
  T.eq(h.location, "pageable")
  T.eq(d.dtype, h.dtype, what .. " dtype")
  T.eq(d.shape, h.shape, what .. " shape")
  local dv, hv = values(d), values(h)
  local tol = TOL[d.dtype]
  for k = 1, #hv do
    local ok
    if ORDERING[op] or not tol then
      ok = S.same(dv[k], hv[k])
    else
      local dr, di = parts(dv[k])
      local hr, hi = parts(hv[k])
      ok = close(dr, hr, tol) and close(di, hi, tol)
    end
    if not ok then
      error(string.format("seed %d: %s %s(%s): output %d: device %s, host %s", SEED, what, op,
        T.describe(opts or {}), k, S.show(dv[k]), S.show(hv[k])), 2)
    end
  end
end

local BIG = (1 << 26) + 13
local big -- shared by the cases below: 256 MiB of random f32

local function big_array()
  big = big or random_f32(BIG)
  return big
end

T.case("full reductions of 2^26+13 random f32 match the host kernels", function()
  local a = big_array()
  for _, op in ipairs({ "sum", "mean", "norm", "max", "min", "argmax", "argmin", "prod" }) do
    compare(op, a, nil, "f32 [2^26+13]")
  end
  -- Misaligned starts take the single-element head of the vectorized path.
  for k = 2, 5 do compare("sum", a:narrow(1, k, BIG - k - 3), nil, "narrowed by " .. k) end
end)

T.case("axis reductions of large f32 shapes match the host kernels", function()
  local a = big_array()
  local shapes = {
    { 4096, 4096 }, { (1 << 20) + 3, 5 }, { 5, (1 << 20) + 3 }, { 64, 1024, 33 }, { 3, 7, 11, 13 },
    { 2, (1 << 24) }, { (1 << 24), 2 }, { 1, 1 << 20 }, { 1 << 20, 1 },
  }
  for _, shape in ipairs(shapes) do
    local n = 1
    for _, d in ipairs(shape) do n = n * d end
    local m = a:narrow(1, 1, n):view(shape)
    for axis = 1, #shape do
      for _, op in ipairs({ "sum", "max", "argmin" }) do
        compare(op, m, { axis = axis }, "f32 " .. T.describe(shape))
      end
    end
    if #shape == 2 then
      local t = m:transpose(1, 2)
      compare("sum", t, { axis = 1 }, "transposed " .. T.describe(shape))
      compare("sum", t, { axis = 2, keepdims = true }, "transposed " .. T.describe(shape))
      compare("sum", t, nil, "transposed " .. T.describe(shape))
      compare("argmax", t, nil, "transposed " .. T.describe(shape))
      compare("mean", m:narrow(2, 1, shape[2] - 1), { axis = 2 }, "narrowed " .. T.describe(shape))
    end
  end
end)

T.case("every dtype at scale matches the host kernels", function()
  local n = (1 << 22) + 7
  local f = big_array():narrow(1, 1, n)
  local ints = cu.arange(n, "i64")
  local arrays = {
    f64 = f:astype("f64"), f16 = f:astype("f16"), bf16 = f:astype("bf16"), c64 = f:astype("c64"),
    c128 = f:astype("c128"), i8 = ints:astype("i8"), i16 = ints:astype("i16"),
    i32 = ints:astype("i32"), i64 = ints, u8 = ints:astype("u8"), u32 = ints:astype("u32"),
    u16 = ints:astype("u16"), u64 = ints:astype("u64"),
    bool = ints:astype("bool"),
  }
  local cols = n // 1031
  for dtype, a in pairs(arrays) do
    local m = a:narrow(1, 1, 1031 * cols):view({ 1031, cols })
    for _, op in ipairs({ "sum", "mean", "norm", "max", "min", "argmax", "argmin" }) do
      if not (ORDERING[op] and dtype:sub(1, 1) == "c") then
        compare(op, a, nil, dtype)
        compare(op, m, { axis = 1 }, dtype .. " {1031, x}")
        compare(op, m, { axis = 2 }, dtype .. " {1031, x}")
      end
    end
  end
  compare("prod", cu.full(1000001, 1, "i64"), nil, "i64 ones")
end)

T.case("small and odd sizes around the block and vector boundaries", function()
  local sizes = { 1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 31, 33, 255, 257, 1023, 1024, 1025, 4095, 4096,
    4097, 65535, 65536, 65537, 1000001 }
  local base = big_array()
  for _, n in ipairs(sizes) do
    for _, dtype in ipairs({ "f32", "f16", "u8", "f64", "c128" }) do
      local a = base:narrow(1, 1, n):astype(dtype)
      compare("sum", a, nil, dtype .. " n=" .. n)
      compare("sum", a:narrow(1, 2, n - 1), nil, dtype .. " n-1 at offset 1")
      if dtype ~= "c128" then compare("argmax", a, nil, dtype .. " n=" .. n) end
      if n > 3 then
        local rows = n // 3
        compare("sum", a:narrow(1, 1, rows * 3):view({ rows, 3 }), { axis = 1 }, dtype .. " columns")
        compare("sum", a:narrow(1, 1, rows * 3):view({ 3, rows }), { axis = 2 }, dtype .. " rows")
      end
    end
  end
end)

-- Full sums of ones are exact up to 2^26 (every partial is a multiple of the 4-wide vector).
-- Axis sums are exact while each output stays within 2^24.
T.case("2^24 and 2^26 ones sum exactly on the device", function()
  for _, n in ipairs({ 1 << 24, 1 << 26 }) do
    local ones = cu.ones(n, "f32")
    T.eq(ones:sum():item(), n + 0.0, "sum of " .. n .. " ones")
    T.eq(ones:view({ 4096, n // 4096 }):transpose(1, 2):sum():item(), n + 0.0)
    T.eq(ones:narrow(1, 1, n // 2):view({ n // 4, 2 }):sum({ axis = 1 }):totable(), { n / 4, n / 4 })
    T.eq(ones:narrow(1, 1, n // 2):view({ 2, n // 4 }):sum({ axis = 2 }):totable(), { n / 4, n / 4 })
    T.eq(cu.ones(n, "bool"):sum():item(), n)
  end
  local cols = cu.ones({ 1 << 24, 4 }, "f32"):sum({ axis = 1 }):totable()
  T.eq(cols, { 16777216.0, 16777216.0, 16777216.0, 16777216.0 })
end)

T.case("results are identical bits run to run", function()
  local a = big_array()
  local m = a:narrow(1, 1, 4096 * 4096):view({ 4096, 4096 })
  local function bits(r) return string.pack("<f", r:item()) end
  T.eq(bits(a:sum()), bits(a:sum()))
  T.eq(bits(a:norm()), bits(a:norm()))
  T.eq(m:sum({ axis = 1 }):totable(), m:sum({ axis = 1 }):totable())
  T.eq(m:sum({ axis = 2 }):totable(), m:sum({ axis = 2 }):totable())
  local s = cu.stream()
  T.eq(bits(a:sum({ stream = s })), bits(a:sum()))
end)

T.case("NaN in a large array: max/min give NaN, argmax/argmin its first position", function()
  local a = big_array():clone()
  local pos = math.random(1000, BIG - 1000)
  a[pos] = S.nan
  a[pos + 500] = S.nan
  T.truthy(S.isnan(a:max():item()), "max")
  T.truthy(S.isnan(a:min():item()), "min")
  T.eq(a:argmax():item(), pos)
  T.eq(a:argmin():item(), pos)
  compare("max", a:narrow(1, 1, 4096 * 4096):view({ 4096, 4096 }), { axis = 1 }, "with NaN")
end)

T.case("a reduction queues without synchronizing", function()
  local a = big_array()
  local s = cu.stream()
  cu.sleep(200, { stream = s })
  local t0 = cu.clock()
  local r = a:sum({ stream = s })
  T.truthy(cu.clock() - t0 < 0.1, "the call returns before the stream runs it")
  T.truthy(not s:done(), "still queued")
  s:sync()
  T.truthy(r:item() > 0)
end)

T.case("bandwidth of a 1 GiB f32 sum (information)", function()
  local a = cu.ones(1 << 28, "f32")
  a:sum()
  local e0, e1 = cu.event { timing = true }, cu.event { timing = true }
  e0:record()
  local reps = 20
  for _ = 1, reps do a:sum() end
  e1:record()
  e1:sync()
  local ms = e0:elapsed(e1) / reps
  print(string.format("sum of 1 GiB f32: %.3f ms, %.0f GB/s", ms, 2 ^ 30 / ms / 1e6))
end)

os.exit(T.run())
