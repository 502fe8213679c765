-- Cumulative sums on the GPU (culua's look-back scan, kernels/scan_lookback.cu, and CUB where it
-- stays), compared in this process with the host kernels (a serial sum per row): sizes around
-- the look-back scan's tile (4096 items of f32, 2048 of 8-byte results) and around 32 and 1024
-- tiles (where its tree of tile totals gains a level), 2^28 f32, rows of many lengths, every
-- dtype that sums through it (f32, f64, i32 read as it is into i64, i64, u64; the narrower ones
-- staged), offset views and include_initial (misaligned: CUB), a scan captured in a graph, and
-- the same bits run to run. Floats hold whole numbers (every partial sum exact in any order), so
-- results must be equal; random reals are checked against an exact sum within 4 eps r at
-- position r (rounding errors of a random walk add up to about eps r / 8).
package.path = (arg and arg[0] and arg[0]:match("^(.*)[/\\]") or "tests/gpu") .. "/../lua/?.lua;" .. package.path
local T = require "cu.testing"
local S = require "support"

local SEED = tonumber(os.getenv("CULUA_TEST_SEED")) or os.time()
math.randomseed(SEED)
print("seed: " .. SEED)

local TILE = { f32 = 4096, wide = 2048 } -- kTileItems of kernels/scan_lookback.cu (64 bytes a thread)
local seeds = 0

local function rand(n, dtype)
  seeds = seeds + 1
  return cu.rand(n, dtype or "f32", { seed = SEED + seeds })
end

-- n values on the device: whole numbers -3 .. 3 for floats, wide random bits for 64-bit integers
-- (their sums wrap), for i32 the whole range.
local function values(n, dtype)
  if dtype == "i64" or dtype == "u64" then
    return (rand(n, "f64") * 2 ^ 62):astype("i64"):astype(dtype)
  elseif dtype == "i32" then
    return (rand(n, "f64") * 2 ^ 32 - 2 ^ 31):floor():astype("i32")
  elseif dtype == "bool" then
    return cu.less(rand(n), 0.5)
  end
  return ((rand(n) * 7):floor() - 3):astype(dtype)
end

local function mismatches(d, h)
  return cu.not_equal(d, h:to_device()):astype("i64"):sum():item()
end

-- The device's cumsum of a (with opts) against the host kernels', exactly.
local function compare(a, opts, what)
  local d = a:cumsum(opts)
  local h = a:to_host():cumsum(opts)
  T.eq(d.dtype, h.dtype, what .. ": dtype")
  T.eq(d.shape, h.shape, what .. ": shape")
  local bad = mismatches(d, h)
  if bad ~= 0 then
    error(string.format("seed %d: %s cumsum(%s): %d items differ from the host's", SEED, what,
      T.describe(opts or {}), bad), 2)
  end
end

T.case("one row around the tile and the levels of the tree, every dtype", function()
  for _, dtype in ipairs({ "f32", "f64", "i32", "i64", "u64" }) do
    local t = dtype == "f32" and TILE.f32 or TILE.wide
    local sizes = { 1, 2, 3, 5, 7, 8, 9, t - 1, t, t + 1, 2 * t - 1, 3 * t + 5, 31 * t + 1, 32 * t - 1,
      32 * t, 32 * t + 1, 33 * t, 1024 * t, 1024 * t + 1, 1057 * t + t // 2 + 3 }
    local base = values(sizes[#sizes], dtype)
    for _, n in ipairs(sizes) do compare(base:narrow(1, 1, n), nil, dtype .. " n=" .. n) end
  end
end)

T.case("dtypes staged into the 64-bit and f32 sums", function()
  for _, dtype in ipairs({ "bool", "i8", "i16", "u8", "u16", "u32", "f16", "bf16" }) do
    for _, n in ipairs({ 1, 3, 2047, 2049, 4097, 70001 }) do
      local a = dtype == "bool" and values(n, "bool") or values(n, "f32"):abs():astype(dtype)
      compare(a, nil, dtype .. " n=" .. n)
    end
  end
end)

T.case("rows of many lengths, both axes", function()
  for _, dtype in ipairs({ "f32", "f64", "i32", "i64" }) do
    local t = dtype == "f32" and TILE.f32 or TILE.wide
    local base = values(70 * t, dtype)
    for _, r in ipairs({ 1, 2, 3, 4, 5, 7, 8, 9, 31, 33, 129, t - 1, t, t + 1, 2 * t + 3, 33 * t + 1 }) do
      local m = math.max(2, (40 * t) // r + 1)
      local a = base:narrow(1, 1, m * r):view({ m, r })
      compare(a, { axis = 2 }, dtype .. " " .. m .. " rows of " .. r)
      if r <= 9 or r == t + 1 then
        compare(a, { axis = 1 }, dtype .. " " .. r .. " columns of " .. m)
      end
    end
    local cube = base:narrow(1, 1, 3 * 5 * (t + 3)):view({ 3, 5, t + 3 })
    compare(cube, { axis = 3 }, dtype .. " 3-d, last axis")
    compare(cube, { axis = 2 }, dtype .. " 3-d, middle axis")
  end
end)

T.case("2^28 f32 (1 GiB) in one row and in rows", function()
  local n = 1 << 28
  local a = values(n, "f32")
  compare(a, nil, "f32 2^28")
  compare(a:view({ 1 << 14, 1 << 14 }), { axis = 2 }, "f32 2^14 rows of 2^14")
end)

T.case("offset views, include_initial and out= (misaligned: CUB; staged)", function()
  for _, dtype in ipairs({ "f32", "f64", "i32", "i64" }) do
    local t = dtype == "f32" and TILE.f32 or TILE.wide
    local n = 5 * t + 3
    local base = values(n + 8, dtype)
    for k = 2, 5 do
      compare(base:narrow(1, k, n), nil, dtype .. " offset by " .. (k - 1))
      compare(base:narrow(1, k, n), { include_initial = true }, dtype .. " offset, include_initial")
    end
    compare(base:narrow(1, 1, n), { include_initial = true }, dtype .. " include_initial")
    local m = base:narrow(1, 1, 4 * t):view({ 4, t })
    compare(m, { axis = 2, include_initial = true }, dtype .. " rows, include_initial")
    local a = base:narrow(1, 1, n)
    local o = cu.empty({ n }, a:cumsum().dtype)
    T.truthy(rawequal(a:cumsum({ out = o }), o), "out is returned")
    T.eq(mismatches(o, a:to_host():cumsum()), 0, dtype .. " out=")
    local wider = cu.empty({ n + 1 }, a:cumsum().dtype)
    a:cumsum({ out = wider:narrow(1, 2, n) })
    T.eq(mismatches(wider:narrow(1, 2, n), a:to_host():cumsum()), 0, dtype .. " out= offset")
  end
end)

T.case("-0.0, NaN and infinities as numpy", function()
  for _, n in ipairs({ 1, 5, 3 * TILE.f32 + 1 }) do
    local z = cu.full({ n }, -0.0, "f32"):cumsum()
    T.eq(string.pack("<f", z[n]), string.pack("<f", -0.0), "cumsum of -0.0 is -0.0, n=" .. n)
    T.eq(string.pack("<f", z[1]), string.pack("<f", -0.0), "first item, n=" .. n)
  end
  local n = 5 * TILE.wide
  local a = cu.ones({ n }, "f64")
  a[2 * TILE.wide + 3] = S.nan
  local c = a:cumsum()
  T.eq(c[2 * TILE.wide + 2], 2 * TILE.wide + 2.0, "before the NaN")
  T.truthy(S.isnan(c[2 * TILE.wide + 3]) and S.isnan(c[n]), "NaN from there on")
  local b = cu.ones({ n }, "f32")
  b[7] = math.huge
  T.eq(b:cumsum()[n], math.huge, "inf")
end)

T.case("random reals: within 4 eps r of the exact sum", function()
  for _, dtype in ipairs({ "f32", "f64" }) do
    local eps = dtype == "f32" and 2 ^ -24 or 2 ^ -53
    local n = 3000 * (dtype == "f32" and TILE.f32 or TILE.wide) + 17
    local a = (rand(n, dtype) * 2 - 1)
    local d = a:cumsum():astype("f64")
    -- the exact sum: f64 on the host for f32 items; for f64 items the host's serial sum, within
    -- about eps r / 8 of it
    local ref = a:astype("f64"):to_host():cumsum():to_device()
    local bound = (cu.arange(n, "f64") + 1) * (4 * eps)
    local ok = cu.less_equal(cu.abs(d - ref), bound):all():item()
    T.truthy(ok, string.format("seed %d: %s cumsum of %d reals", SEED, dtype, n))
  end
end)

-- The look-back scan's rows (one long row of floats goes to CUB's scan, faster there, whose float
-- results may differ in the last bits from run to run).
T.case("the same bits run to run and on another stream (rows)", function()
  for _, dtype in ipairs({ "f32", "f64" }) do
    local n = (1 << 24) + 5
    local a = rand(n, dtype) * 2 - 1
    local rows = a:narrow(1, 1, 4096 * 4096):view({ 4096, 4096 })
    local first = rows:cumsum({ axis = 2 })
    local s = cu.stream()
    local other = rows:cumsum({ axis = 2, stream = s })
    s:sync()
    T.eq(cu.not_equal(first, other):astype("i64"):sum():item(), 0, dtype .. " rows on another stream")
    T.eq(cu.not_equal(rows:cumsum({ axis = 2 }), rows:cumsum({ axis = 2 })):astype("i64"):sum():item(), 0,
      dtype .. " rows again")
  end
end)

T.case("a cumsum captured in a graph, launched and updated", function()
  local n = 100 * TILE.f32 + 3
  local x = values(n, "f32")
  local y = values(n, "f32")
  local rows = values(40 * TILE.wide, "i32"):view({ 40, TILE.wide })
  local c, r
  local o = cu.empty({ n }, "f32")
  local function work(a)
    c = a:cumsum()
    a:cumsum({ out = o })
    r = rows:cumsum({ axis = 2 })
  end
  local g = cu.graph(work, { x })
  g:launch()
  T.eq(mismatches(c, x:to_host():cumsum()), 0, "graph: one row")
  T.eq(mismatches(o, x:to_host():cumsum()), 0, "graph: out=")
  T.eq(mismatches(r, rows:to_host():cumsum({ axis = 2 })), 0, "graph: rows of i32")
  g:replay(3)
  T.eq(mismatches(o, x:to_host():cumsum()), 0, "graph: replayed")
  local result = g:update(work, { y })
  T.truthy(result == "updated" or result == "reinstantiated", result)
  g:launch()
  T.eq(mismatches(c, y:to_host():cumsum()), 0, "graph: updated")
  g:free()
end)

os.exit(T.run())
