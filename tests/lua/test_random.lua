-- Random numbers: cu.seed, cu.rand, cu.randn and cu.host.rand/randn: shapes and dtypes,
-- reproducibility and the global state, distribution moments, out= views, and errors.
package.path = (arg and arg[0] and arg[0]:match("^(.*)[/\\]") or "tests/lua") .. "/?.lua;" .. package.path
local T = require "cu.testing"
local S = require "support"

local ALL = { "f32", "f64", "f16", "bf16", "c64", "c128" }

-- Flat list of real values (complex: re, im interleaved).
local function reals(a)
  local out = {}
  for _, v in ipairs(S.flatten(a:totable())) do
    if type(v) == "userdata" then
      out[#out + 1] = v.re
      out[#out + 1] = v.im
    else
      out[#out + 1] = v
    end
  end
  return out
end

local function moments(v, start, step)
  start, step = start or 1, step or 1
  local n, sum, sum2 = 0, 0, 0
  local lo, hi = math.huge, -math.huge
  for i = start, #v, step do
    n = n + 1
    sum = sum + v[i]
    lo, hi = math.min(lo, v[i]), math.max(hi, v[i])
  end
  local mean = sum / n
  for i = start, #v, step do sum2 = sum2 + (v[i] - mean) ^ 2 end
  return { mean = mean, var = sum2 / (n - 1), min = lo, max = hi, n = n }
end

T.case("rand/randn: shapes, default dtype, dtype argument and option", function()
  local a = cu.rand({ 3, 4 })
  T.eq(a.shape, { 3, 4 })
  T.eq(a.dtype, "f32")
  T.eq(a.location, "device")
  T.eq(cu.randn(5).shape, { 5 })
  for _, t in ipairs(ALL) do
    T.eq(cu.rand(2, t).dtype, t)
    T.eq(cu.randn({ 2, 1, 2 }, t).dtype, t)
    T.eq(cu.rand(2, { dtype = t }).dtype, t)
    T.eq(cu.host.randn(3, t).dtype, t)
  end
  T.eq(cu.rand({}).shape, {})
  T.eq(cu.rand(0).size, 0)
  T.eq(cu.rand(3, nil, { seed = 1 }).dtype, "f32")
  T.eq(cu.host.rand(4).location, "pageable")
  T.eq(cu.host.rand(4, "f64", { pinned = true }).location, "pinned")
  local s = cu.stream()
  local r = cu.rand(100, { stream = s })
  s:sync()
  T.eq(r.size, 100)
end)

T.case("uniform values lie in [0, 1) for every dtype; small floats never round to 1", function()
  for _, t in ipairs(ALL) do
    local m = moments(reals(cu.rand(20000, t)))
    T.truthy(m.min >= 0 and m.max < 1, t .. " bounds " .. m.min .. " " .. m.max)
  end
  -- f16 from 11 bits: 1 - 2^-11 is reached in 2^16 samples, 1.0 never.
  for _, t in ipairs({ "f16", "bf16" }) do
    local bits = t == "f16" and 11 or 8
    local m = moments(reals(cu.rand(1 << 16, t)))
    T.eq(m.max, 1 - 2.0 ^ -bits, t .. " largest value")
  end
end)

T.case("moments: uniform mean 1/2 and variance 1/12, normal 0 and 1, complex parts 1/2", function()
  local n = 200000
  for _, t in ipairs(ALL) do
    local bits = ({ bf16 = 8, f16 = 11 })[t] or 24
    local mean = 0.5 - 2.0 ^ (-bits - 1) -- values k 2^-bits, k < 2^bits
    local u = moments(reals(cu.rand(n, t)))
    -- standard error of the mean 6.5e-4; of the variance ~1.7e-4
    T.near(u.mean, mean, 4e-3, t .. " uniform mean")
    T.near(u.var, 1 / 12, 2e-3, t .. " uniform variance")
    local z = reals(cu.randn(n, t))
    if t == "c64" or t == "c128" then
      for part = 1, 2 do
        local m = moments(z, part, 2)
        T.near(m.mean, 0, 1e-2, t .. " normal part mean")
        T.near(m.var, 0.5, 1e-2, t .. " normal part variance")
      end
    else
      local m = moments(z)
      T.near(m.mean, 0, 1e-2, t .. " normal mean") -- standard error 2.2e-3
      T.near(m.var, 1, 2.5e-2, t .. " normal variance") -- standard error 3.2e-3, bf16 rounding
      T.truthy(m.max < 8.6 and m.min > -8.6, t .. " normal range")
    end
  end
end)

T.case("cu.seed reproduces sequences; successive calls differ", function()
  cu.seed(2024)
  local a1, a2 = cu.rand(64):totable(), cu.randn({ 4, 4 }, "f64"):totable()
  T.truthy(not S.same(a1[1], cu.rand(64):totable()[1]), "successive calls differ")
  cu.seed(2024)
  T.eq(cu.rand(64):totable(), a1)
  T.eq(cu.randn({ 4, 4 }, "f64"):totable(), a2)
  cu.seed(2025)
  T.truthy(cu.rand(64):totable()[1] ~= a1[1], "another seed")
  -- Four f32 values are one counter: 2 calls of 8 equal one of 16.
  cu.seed(-7)
  local x = cu.rand(8):totable()
  for _, v in ipairs(cu.rand(8):totable()) do x[#x + 1] = v end
  cu.seed(-7)
  T.eq(cu.rand(16):totable(), x)
end)

T.case("seed= uses that seed at offset 0 and leaves the global state alone", function()
  local r = cu.rand(32, { seed = 99 }):totable()
  T.eq(cu.rand(32, { seed = 99 }):totable(), r)
  cu.seed(5)
  local first = cu.rand(16):totable()
  cu.seed(5)
  cu.rand(8, { seed = 99 })
  cu.randn(8, "c128", { seed = 1 })
  T.eq(cu.rand(16):totable(), first, "the global sequence is untouched")
  cu.seed(99)
  T.eq(cu.rand(32):totable(), r, "seed= equals cu.seed then a call")
  T.eq(cu.host.rand(32, { seed = 99 }):totable(), r, "host arrays get the same numbers")
  T.eq(cu.host.randn({ 2, 3 }, "f16", { seed = 3 }):totable(),
    cu.randn({ 2, 3 }, "f16", { seed = 3 }):totable())
end)

T.case("out=: fills views (row-major element order) and returns out", function()
  for _, t in ipairs(ALL) do
    for _, fn in ipairs({ "rand", "randn" }) do
      local ref = cu[fn]({ 4, 3 }, t, { seed = 11 }):totable()
      local base = cu.zeros({ 3, 4 }, t)
      local view = base:transpose(1, 2)
      local r = cu[fn]({ 4, 3 }, { out = view, seed = 11 })
      T.eq(rawequal(r, view), true, "returns out")
      T.eq(view:totable(), ref, t .. " " .. fn .. " transposed out")
      local wide = cu.zeros({ 4, 5 }, t)
      cu[fn]({ 4, 3 }, t, { out = wide:narrow(2, 2, 3), seed = 11 })
      T.eq(wide:narrow(2, 2, 3):totable(), ref, t .. " " .. fn .. " narrowed out")
      T.eq(wide:narrow(2, 1, 1):totable(), cu.zeros({ 4, 1 }, t):totable(), "outside untouched")
      local h = cu.host.zeros({ 3, 4 }, t)
      cu.host[fn]({ 4, 3 }, { out = h:transpose(), seed = 11 })
      T.eq(h:transpose():totable(), ref, t .. " " .. fn .. " host out")
    end
  end
end)

T.case("errors: dtypes, seeds, shapes, options, out", function()
  for _, t in ipairs({ "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "bool" }) do
    S.raises(function() cu.rand(3, t) end, { "uniform numbers need a float or complex dtype (f32, f64", "not " .. t })
    S.raises(function() cu.randn(3, { dtype = t }) end, "normal numbers need a float or complex dtype")
    S.raises(function() cu.rand(3, { out = cu.zeros(3, t) }) end, "not " .. t)
  end
  S.raises(function() cu.rand(3, "f33") end, "unknown dtype 'f33'")
  S.raises(function() cu.rand(-1) end, "size -1 in shape {-1} is negative")
  S.raises(function() cu.rand("x") end, "shape must be")
  S.raises(function() cu.rand(3, { seed = 1.5 }) end, "(option 'seed': must be an integer, got 1.5)")
  S.raises(function() cu.rand(3, { seed = "1" }) end, "must be an integer")
  S.raises(function() cu.rand(3, { sed = 1 }) end, "unknown option 'sed'")
  S.raises(function() cu.rand(3, { pinned = true }) end, "unknown option 'pinned'")
  S.raises(function() cu.host.rand(3, { stream = cu.stream() }) end, "unknown option 'stream'")
  S.raises(function() cu.rand(3, "f32", { dtype = "f64" }) end,
    "bad argument #3 to 'rand' (option 'dtype': the dtype is also given as an argument)")
  S.raises(function() cu.rand(3, "f32", 5) end,
    "bad argument #3 to 'rand' (dtype string or options table expected, got number)")
  S.raises(function() cu.rand(3, { stream = 1 }) end, "bad argument #2 to 'rand' (option 'stream': cu.Stream expected")
  S.raises(function() cu.rand({ 2, 2 }, { out = cu.zeros(4) }) end, { "shape {2,2}", "{4}" })
  S.raises(function() cu.rand(4, "f64", { out = cu.zeros(4) }) end,
    "(option 'out': an array of dtype f64 expected, got dtype f32)")
  S.raises(function() cu.host.rand(4, { out = cu.host.zeros(4), pinned = true }) end, "pinned")
  S.raises(function() cu.rand(4, { out = 3 }) end,
    "bad argument #2 to 'rand' (option 'out': cu.Array expected, got number)")
  local freed = cu.zeros(4)
  freed:free()
  S.raises_released(function() cu.rand(4, { out = freed }) end)
  S.raises(function() cu.seed(1.5) end, "seed must be an integer")
  S.raises(function() cu.seed() end, "seed must be an integer")
  S.raises(function() cu.seed(1, 2) end, "bad argument #2 to 'seed' (no value expected, got number)")
  -- a failed call consumes no numbers
  cu.seed(8)
  local want = cu.rand(4):totable()
  cu.seed(8)
  pcall(cu.rand, 4, "i32")
  T.eq(cu.rand(4):totable(), want)
end)

os.exit(T.run())
