-- Random numbers on the GPU are the host backend's numbers, bit for bit: cu.rand/cu.randn on the
-- device against cu.host.rand/randn (the host kernels) with the same seed, for every dtype, sizes
-- that exercise the vector stores and their tails, unaligned and non-contiguous outputs, and the
-- global seed/offset state.
local T = require "cu.testing"

local DTYPES = { "f32", "f64", "f16", "bf16", "c64", "c128" }

-- Identical bits, as far as Lua can see them: equal numbers, and zeros of the same sign.
local function same_bits(x, y)
  if type(x) == "userdata" then return same_bits(x.re, y.re) and same_bits(x.im, y.im) end
  if x ~= x then return y ~= y end
  return x == y and (x ~= 0 or 1 / x == 1 / y)
end

local function check_identical(dev, host, what)
  local d, h = dev:totable(), host:totable()
  local function walk(a, b, path)
    if type(a) == "table" then
      T.eq(#a, #b, what .. ": length at " .. path)
      for i = 1, #a do walk(a[i], b[i], path .. "[" .. i .. "]") end
    elseif not same_bits(a, b) then
      error(string.format("%s: differs at %s: device %s, host %s", what, path, tostring(a),
        tostring(b)), 3)
    end
  end
  walk(d, h, "")
end

T.case("device and host numbers are bit-identical for every dtype", function()
  for _, t in ipairs(DTYPES) do
    for _, fn in ipairs({ "rand", "randn" }) do
      for _, n in ipairs({ 1, 3, 4, 5, 1000, 4099, 1 << 17 }) do
        local seed = n * 7 + #t
        check_identical(cu[fn](n, t, { seed = seed }), cu.host[fn](n, t, { seed = seed }),
          string.format("%s %s n=%d", fn, t, n))
      end
      check_identical(cu[fn]({ 37, 3, 5 }, t, { seed = 1 }), cu.host[fn]({ 37, 3, 5 }, t, { seed = 1 }),
        fn .. " " .. t .. " 3-d")
    end
  end
end)

T.case("large arrays: many blocks of the grid-stride loop", function()
  for _, t in ipairs({ "f32", "f64", "f16" }) do
    local n = (1 << 22) + 3
    local d = cu.randn(n, t, { seed = 5 })
    local h = cu.host.randn(n, t, { seed = 5 })
    -- compare a few windows (totable of the whole array is slow)
    for _, start in ipairs({ 1, 4097, n // 2, n - 70 }) do
      check_identical(d:narrow(1, start, 64), h:narrow(1, start, 64), t .. " window " .. start)
    end
  end
end)

T.case("non-contiguous and unaligned outputs", function()
  for _, t in ipairs(DTYPES) do
    for _, fn in ipairs({ "rand", "randn" }) do
      local ref = cu.host[fn]({ 33, 17 }, t, { seed = 3 })
      local dev = cu.zeros({ 17, 33 }, t)
      cu[fn]({ 33, 17 }, { out = dev:transpose(), seed = 3 })
      check_identical(dev:transpose(), ref, fn .. " " .. t .. " transposed out")
      local wide = cu.zeros({ 1001 }, t)
      cu[fn]({ 999 }, { out = wide:narrow(1, 2, 999), seed = 4 }) -- misaligned for vector stores
      check_identical(wide:narrow(1, 2, 999), cu.host[fn](999, t, { seed = 4 }), fn .. " " .. t .. " offset")
      T.truthy(same_bits(wide[1], cu.zeros(1, t)[1]) and same_bits(wide[1001], cu.zeros(1, t)[1]),
        "outside the view untouched")
    end
  end
end)

T.case("the global seed and offset advance alike on both", function()
  for _, t in ipairs(DTYPES) do
    cu.seed(77)
    local d1, d2 = cu.rand(10, t), cu.randn(7, t)
    cu.seed(77)
    local h1, h2 = cu.host.rand(10, t), cu.host.randn(7, t)
    check_identical(d1, h1, t .. " first call")
    check_identical(d2, h2, t .. " second call")
  end
end)

T.case("rand throughput (memory-bound): printed", function()
  local n = 1 << 26
  local a = cu.empty(n)
  cu.rand(n, { out = a })
  cu.sync()
  for _, fn in ipairs({ "rand", "randn" }) do
    local e0, e1 = cu.event({ timing = true }), cu.event({ timing = true })
    e0:record()
    for _ = 1, 10 do cu[fn](n, { out = a }) end
    e1:record()
    e1:sync()
    local ms = e0:elapsed(e1) / 10
    print(string.format("  %s f32 of 256 MiB: %.3f ms, %.0f GB/s written", fn, ms, 4 * n / ms / 1e6))
  end
end)

os.exit(T.run())
