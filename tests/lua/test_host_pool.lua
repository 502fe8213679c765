-- Large operations, big enough to be split across the host backend's thread pool (and to launch
-- many blocks on CUDA), against references computed here in plain Lua: elementwise (contiguous,
-- broadcast, transposed operands), reductions (full and along either axis), transposed copies,
-- arange, and matmul across the host's 256 x 256 blocks. ctest also runs it on the host backend
-- with CULUA_HOST_THREADS=3 (lua.host.test_host_pool_3threads), more threads than CI has cores.
package.path = (arg and arg[0] and arg[0]:match("^(.*)[/\\]") or "tests/lua") .. "/?.lua;" .. package.path
local T = require "cu.testing"
require "support"

local SEED = tonumber(os.getenv("CULUA_TEST_SEED")) or (os.time() ~ math.floor(os.clock() * 1e6))
math.randomseed(SEED)
print("seed: " .. SEED .. " (CULUA_TEST_SEED=" .. SEED .. " replays this run)")

-- A rows x cols table of random values that f32 holds exactly (multiples of 1/256 below 16).
local function matrix(rows, cols)
  local t = {}
  for i = 1, rows do
    local row = {}
    for j = 1, cols do row[j] = math.random(0, 4095) / 256 end
    t[i] = row
  end
  return t
end

local function flat(t)
  local out = {}
  for i = 1, #t do
    for j = 1, #t[i] do out[#out + 1] = t[i][j] end
  end
  return out
end

-- The first element where two flat tables differ by more than tol, or nil.
local function mismatch(got, want, tol)
  if #got ~= #want then return string.format("%d elements, want %d", #got, #want) end
  for i = 1, #want do
    if math.abs(got[i] - want[i]) > (tol or 0) then
      return string.format("element %d: %.17g, want %.17g", i, got[i], want[i])
    end
  end
  return nil
end

local R, C = 700, 900 -- 630000 elements

T.case("elementwise: contiguous, broadcast and transposed operands", function()
  local a, b = matrix(R, C), matrix(R, C)
  local row = matrix(1, C)[1]
  local x, y = cu.array(a, "f32"), cu.array(b, "f32")
  local v = cu.array(row, "f32")
  -- sums of values that f32 holds exactly are exact
  local want = {}
  for i = 1, R do
    for j = 1, C do want[#want + 1] = a[i][j] + b[i][j] end
  end
  T.eq(mismatch(flat((x + y):totable()), want), nil, "contiguous add")
  want = {}
  for i = 1, R do
    for j = 1, C do want[#want + 1] = a[i][j] * 2 - row[j] end
  end
  T.eq(mismatch(flat((x * 2 - v):totable()), want), nil, "broadcast row")
  local bt = cu.array(matrix(C, R), "f64")
  local btt = bt:totable()
  want = {}
  for i = 1, R do
    for j = 1, C do want[#want + 1] = a[i][j] - btt[j][i] end
  end
  T.eq(mismatch(flat((x:astype("f64") - bt:transpose()):totable()), want), nil, "transposed operand")
end)

T.case("reductions: full and along each axis", function()
  local a = matrix(R, C)
  local x = cu.array(a, "f64")
  local total, rows, cols = 0, {}, {}
  for j = 1, C do cols[j] = 0 end
  for i = 1, R do
    local s = 0
    for j = 1, C do
      s = s + a[i][j]
      cols[j] = cols[j] + a[i][j]
    end
    rows[i] = s
    total = total + s
  end
  -- these sums are exact in f64 (multiples of 1/256 far below 2^53 / 256)
  T.eq(x:sum():item(), total, "sum")
  T.eq(x:mean():item(), total / (R * C), "mean")
  T.eq(x:transpose():sum():item(), total, "sum of a transposed view")
  T.eq(x:narrow(2, 1, C - 100):sum():item() + x:narrow(2, C - 99, 100):sum():item(), total,
    "sums of narrowed (strided) views")
  T.eq(mismatch(x:sum({ axis = 2 }):totable(), rows), nil, "sum along rows")
  T.eq(mismatch(x:sum({ axis = 1 }):totable(), cols), nil, "sum down columns")
  T.eq(mismatch(x:transpose():sum({ axis = 1 }):totable(), rows), nil, "column sums of a transposed view")
  local big = cu.arange(3000000, "f64")
  T.eq(big:sum():item(), 3000000 * 2999999 / 2, "sum of arange")
  T.eq(big:max():item(), 2999999, "max")
  T.eq(big:argmin():item(), 1, "argmin")
  local f = cu.arange(1000000, "f32"):reshape(1000, 1000)
  local colsum = {} -- column j holds (i - 1) * 1000 + j - 1 for i = 1 .. 1000
  for j = 1, 1000 do colsum[j] = 1000 * (j - 1) + 1000 * 999 * 1000 / 2 end
  -- f32 sums round (tests/lua/test_reduce.lua's tolerance: 1e-5 * log2(n + 2) * the sum)
  T.eq(mismatch(f:sum({ axis = 1 }):totable(), colsum, 1e-5 * 10 * 5.01e8), nil, "f32 column sums")
end)

T.case("transposed copies", function()
  local a = matrix(R, C)
  local x = cu.array(a, "f32")
  local t = cu.empty({ C, R })
  cu.copy(t, x:transpose())
  local got = t:totable()
  local bad
  for j = 1, C do
    for i = 1, R do
      if not bad and got[j][i] ~= a[i][j] then bad = string.format("[%d][%d]", j, i) end
    end
  end
  T.eq(bad, nil, "transposed copy")
  -- with a conversion, and back
  local d = x:transpose():astype("f64"):transpose()
  T.eq(mismatch(flat(d:totable()), flat(a)), nil, "two transposing conversions")
  T.eq(mismatch(cu.linspace(0, 1, 300001):totable(), (function()
    local w = {}
    for i = 1, 300001 do w[i] = (i - 1) / 300000 end
    return w
  end)(), 1e-6), nil, "linspace")
end)

T.case("matmul across blocks", function()
  local m, k, n = 260, 300, 270
  local a, b = matrix(m, k), matrix(k, n)
  for _, dtype in ipairs({ "f64", "f32" }) do
    local c = cu.matmul(cu.array(a, dtype), cu.array(b, dtype)):totable()
    local bad
    for i = 1, m do
      local ai = a[i]
      for j = 1, n do
        local s = 0
        for p = 1, k do s = s + ai[p] * b[p][j] end
        -- f64: exact (every partial sum is a multiple of 2^-16 below 2^17); f32: the bound for k
        -- roundings of non-negative terms
        local tol = dtype == "f64" and 0 or k * 2 ^ -24 * s
        if not bad and math.abs(c[i][j] - s) > tol then
          bad = string.format("%s [%d][%d]: %.17g, want %.17g", dtype, i, j, c[i][j], s)
        end
      end
    end
    T.eq(bad, nil, dtype .. " matmul")
  end
  local ia = cu.arange(m * k, "i32"):reshape(m, k)
  local ib = cu.arange(k * n, "i32"):reshape(k, n) % 7
  local ic = cu.matmul(ia, ib):totable()
  local ibt = ib:totable()
  local bad
  for i = 1, m, 37 do
    for j = 1, n do
      local s = 0
      for p = 1, k do s = s + ((i - 1) * k + p - 1) * ibt[p][j] end
      s = ((s + 2 ^ 31) % 2 ^ 32) - 2 ^ 31
      if not bad and ic[i][j] ~= s then bad = string.format("[%d][%d]: %d, want %d", i, j, ic[i][j], s) end
    end
  end
  T.eq(bad, nil, "i32 matmul")
end)

os.exit(T.run())
