-- The statistical functions and scans of the Array API on the backend under test (both, through
-- tests/lua/support.lua's runner): var/std with correction=, any/all, the nan* reductions,
-- reductions over several axes with keepdims=, dtype=, cumulative_sum/cumsum/cumprod with axis=,
-- dtype= and include_initial=, on device and host arrays, against exact values; and their errors.
-- (Conformance with numpy over every dtype: tests/numpy/test_stats_numpy.lua.)
package.path = (arg and arg[0] and arg[0]:match("^(.*)[/\\]") or "tests/lua") .. "/?.lua;" .. package.path
local T = require "cu.testing"
local S = require "support"

local NAN, INF = 0 / 0, math.huge

-- The flat values of an array (complex values as {re, im}).
local function flat(a)
  local out = S.flatten(a:totable(), {})
  for i, v in ipairs(out) do
    if type(v) == "userdata" then out[i] = { v.re, v.im } end
  end
  return out
end

local function shape(a)
  local s = {}
  for i, n in ipairs(a.shape) do s[i] = n end
  return s
end

local function check(a, dtype, dims, values, what)
  T.eq(a.dtype, dtype, what .. ": dtype")
  T.eq(shape(a), dims, what .. ": shape")
  S.same_list(flat(a), values, what)
end

local function nearly(a, values, tol, what)
  local got = flat(a)
  T.eq(#got, #values, what .. ": length")
  for i, v in ipairs(values) do
    if v ~= v then
      T.truthy(got[i] ~= got[i], what .. ": element " .. i .. " is NaN")
    else
      T.near(got[i], v, tol, what .. ": element " .. i)
    end
  end
end

-- 2 x 3 x 4 with values 1..24, on the device and on the host.
local function cube(dtype, host)
  local t = {}
  for i = 1, 2 do
    t[i] = {}
    for j = 1, 3 do
      t[i][j] = {}
      for k = 1, 4 do t[i][j][k] = (i - 1) * 12 + (j - 1) * 4 + k end
    end
  end
  return host and cu.host.array(t, dtype) or cu.array(t, dtype)
end

for _, host in ipairs({ false, true }) do
  local where = host and "host array" or "device array"

  T.case("sum over several axes, keepdims, negative axes (" .. where .. ")", function()
    local a = cube("i32", host)
    check(a:sum({ axis = { 1, 3 } }), "i64", { 3 }, { 68, 100, 132 }, "sum {1,3}")
    check(cu.sum(a, { axis = { -1, 1 }, keepdims = true }), "i64", { 1, 3, 1 }, { 68, 100, 132 },
      "sum {-1,1} keepdims")
    check(a:sum({ axis = { 2, 3 } }), "i64", { 2 }, { 78, 222 }, "sum {2,3} (merged)")
    check(a:sum({ axis = { 1, 2, 3 } }), "i64", {}, { 300 }, "sum of every axis")
    check(a:sum({ axis = {} }), "i64", { 2, 3, 4 }, flat(a:astype("i64")), "sum over no axis")
    check(a:transpose(1, 3):sum({ axis = { 1, 3 } }), "i64", { 3 }, { 68, 100, 132 },
      "sum of a transposed view")
    check(a:max({ axis = { 1, 3 } }), "i32", { 3 }, { 16, 20, 24 }, "max {1,3}")
    check(a:min({ axis = { 3, 1 }, keepdims = true }), "i32", { 1, 3, 1 }, { 1, 5, 9 }, "min")
    check(a:mean({ axis = { 1, 3 } }), "f64", { 3 }, { 8.5, 12.5, 16.5 }, "mean {1,3}")
    check(a:prod({ axis = { 1, 2 } }):narrow(1, 1, 1), "i64", { 1 },
      { 1 * 5 * 9 * 13 * 17 * 21 }, "prod {1,2}")
    check(a:argmax({ axis = 2, keepdims = true }), "i64", { 2, 1, 4 }, { 3, 3, 3, 3, 3, 3, 3, 3 },
      "argmax keepdims")
  end)

  T.case("var and std with correction (" .. where .. ")", function()
    local a = host and cu.host.array({ 2, 4, 4, 4, 5, 5, 7, 9 }, "f64") or
        cu.array({ 2, 4, 4, 4, 5, 5, 7, 9 }, "f64")
    check(a:var(), "f64", {}, { 4.0 }, "var")
    check(a:std(), "f64", {}, { 2.0 }, "std")
    nearly(a:var({ correction = 1 }), { 32 / 7 }, 1e-15, "var correction=1")
    nearly(cu.std(a, { ddof = 1 }), { math.sqrt(32 / 7) }, 1e-15, "std ddof=1")
    check(a:var({ correction = 8 }), "f64", {}, { INF }, "var: n - correction = 0")
    local m = cube("i16", host)
    check(m:var({ axis = { 1, 3 } }), "f64", { 3 }, { 37.25, 37.25, 37.25 }, "var {1,3} of i16")
    check(m:var({ axis = 3, keepdims = true }), "f64", { 2, 3, 1 }, { 1.25, 1.25, 1.25, 1.25, 1.25, 1.25 },
      "var axis 3")
    local cv = { cu.complex(1, 1), cu.complex(3, 3) }
    local c = host and cu.host.array(cv, "c64") or cu.array(cv, "c64")
    check(c:var(), "f32", {}, { 2.0 }, "var of c64: mean |x - mean|^2")
    check(cu.var(cu.zeros({ 1 }, "f32")), "f32", {}, { 0.0 }, "var of one element")
    nearly(cu.var(cu.zeros({ 0 }, "f32")), { NAN }, 0, "var of nothing")
    nearly(cu.std(cu.array({ 1, INF }, "f64")), { NAN }, 0, "std with inf")
    nearly(cu.var(cu.array({ 1, NAN }, "f32")), { NAN }, 0, "var with NaN")
    check(cu.nanvar(cu.array({ 1, NAN, 3 }, "f32")), "f32", {}, { 1.0 }, "nanvar")
    check(cu.nanstd(cu.array({ 1, NAN, 3 }, "f64"), { correction = 1 }), "f64", {},
      { math.sqrt(2) }, "nanstd")
    -- Large offsets: Welford's update keeps the variance (a one-pass sum of squares would not).
    local big = cu.array({ 1e8 + 1, 1e8 + 2, 1e8 + 3, 1e8 + 4 }, "f64")
    check(big:var(), "f64", {}, { 1.25 }, "var with a large mean")
  end)

  T.case("any and all (" .. where .. ")", function()
    local mk = function(t, d) return host and cu.host.array(t, d) or cu.array(t, d) end
    local b = mk({ { true, false, false }, { true, true, false } }, "bool")
    check(b:any({ axis = 1 }), "bool", { 3 }, { true, true, false }, "any axis 1")
    check(b:all({ axis = 1 }), "bool", { 3 }, { true, false, false }, "all axis 1")
    check(b:any(), "bool", {}, { true }, "any")
    check(b:all({ axis = { 1, 2 }, keepdims = true }), "bool", { 1, 1 }, { false }, "all keepdims")
    check(mk({ 0, NAN }, "f32"):all(), "bool", {}, { false }, "all with 0")
    check(mk({ NAN }, "f16"):all(), "bool", {}, { true }, "NaN counts as true")
    check(mk({ -0.0 }, "f64"):any(), "bool", {}, { false }, "-0.0 is false")
    check(cu.zeros({ 0 }, "i32"):any(), "bool", {}, { false }, "any of nothing")
    check(cu.zeros({ 0 }, "i32"):all(), "bool", {}, { true }, "all of nothing")
    check(cu.all(cu.array({ cu.complex(0, 0), cu.complex(0, 1) }, "c64")), "bool", {}, { false }, "complex 0")
    check(cu.all(cu.array({ cu.complex(0, 2) }, "c64")), "bool", {}, { true }, "complex imaginary part")
  end)

  T.case("nan reductions (" .. where .. ")", function()
    local mk = function(t, d) return host and cu.host.array(t, d) or cu.array(t, d) end
    local a = mk({ { 1, NAN, 3 }, { NAN, NAN, 2 } }, "f32")
    check(a:nansum(), "f32", {}, { 6.0 }, "nansum")
    check(a:nansum({ axis = 2 }), "f32", { 2 }, { 4.0, 2.0 }, "nansum axis 2")
    check(a:nanprod({ axis = 1 }), "f32", { 3 }, { 1.0, 1.0, 6.0 }, "nanprod axis 1")
    check(a:nanmax({ axis = 1 }), "f32", { 3 }, { 1.0, NAN, 3.0 }, "nanmax (all-NaN column)")
    check(a:nanmin(), "f32", {}, { 1.0 }, "nanmin")
    check(a:nanmean({ axis = 2 }), "f32", { 2 }, { 2.0, 2.0 }, "nanmean")
    check(a:nanmean({ axis = 1 }), "f32", { 3 }, { 1.0, NAN, 2.5 }, "nanmean with an all-NaN column")
    check(a:max(), "f32", {}, { NAN }, "max propagates NaN")
    check(mk({ 1, 2, 3 }, "i32"):nansum(), "i64", {}, { 6 }, "nansum of integers is sum")
    check(mk({ 1, 5, 3 }, "u8"):nanmax(), "u8", {}, { 5 }, "nanmax of integers is max")
  end)

  T.case("dtype= and empty or 0-d inputs (" .. where .. ")", function()
    local mk = function(t, d) return host and cu.host.array(t, d) or cu.array(t, d) end
    check(mk({ 100, 100, 100 }, "i8"):sum({ dtype = "i8" }), "i8", {}, { 44 }, "sum in i8 wraps")
    check(mk({ 100, 100, 100 }, "i8"):sum(), "i64", {}, { 300 }, "sum of i8 in i64")
    check(mk({ 1.5, 2.25 }, "f64"):sum({ dtype = "f32" }), "f32", {}, { 3.75 }, "sum in f32")
    check(mk({ 3, 4 }, "i32"):prod({ dtype = "f64" }), "f64", {}, { 12.0 }, "prod in f64")
    check(mk({ 2, 1000 }, "i32"):prod({ dtype = "i16" }), "i16", {}, { 2000 }, "prod in i16")
    check(cu.zeros({ 0 }, "f32"):sum(), "f32", {}, { 0.0 }, "sum of nothing")
    check(cu.zeros({ 0, 3 }, "i32"):sum({ axis = 1 }), "i64", { 3 }, { 0, 0, 0 }, "sum of empty axis")
    check(cu.zeros({ 0 }, "f64"):prod(), "f64", {}, { 1.0 }, "prod of nothing")
    nearly(cu.zeros({ 0 }, "f32"):mean(), { NAN }, 0, "mean of nothing")
    check(cu.zeros({ 3, 0 }, "f32"):max({ axis = 1 }), "f32", { 0 }, {}, "no outputs")
    S.raises(function() cu.zeros({ 0, 3 }):max({ axis = 1 }) end, { "max", "empty" })
    S.raises(function() cu.zeros({ 2, 0, 3 }):min({ axis = { 2, 3 } }) end, { "min", "empty" })
    local z = host and cu.host.array(5, "f32") or cu.full({}, 5, "f32")
    check(z:sum(), "f32", {}, { 5.0 }, "sum of 0-d")
    check(z:sum({ axis = {} }), "f32", {}, { 5.0 }, "sum of 0-d over no axis")
    check(z:var(), "f32", {}, { 0.0 }, "var of 0-d")
    check(z:cumsum(), "f32", { 1 }, { 5.0 }, "cumsum of 0-d")
  end)

  T.case("scans (" .. where .. ")", function()
    local mk = function(t, d) return host and cu.host.array(t, d) or cu.array(t, d) end
    local a = mk({ { 1, 2, 3 }, { 4, 5, 6 } }, "i32")
    check(a:cumulative_sum({ axis = 2 }), "i64", { 2, 3 }, { 1, 3, 6, 4, 9, 15 }, "axis 2")
    check(a:cumulative_sum({ axis = 1 }), "i64", { 2, 3 }, { 1, 2, 3, 5, 7, 9 }, "axis 1")
    check(a:cumulative_sum({ axis = -1, include_initial = true }), "i64", { 2, 4 },
      { 0, 1, 3, 6, 0, 4, 9, 15 }, "include_initial")
    check(a:cumsum(), "i64", { 6 }, { 1, 3, 6, 10, 15, 21 }, "cumsum flattens")
    check(a:transpose(1, 2):cumsum(), "i64", { 6 }, { 1, 5, 7, 12, 15, 21 }, "cumsum of a view")
    check(a:cumprod({ axis = 2 }), "i64", { 2, 3 }, { 1, 2, 6, 4, 20, 120 }, "cumprod")
    check(cu.cumulative_prod(a, { axis = 1, include_initial = true }), "i64", { 3, 3 },
      { 1, 1, 1, 1, 2, 3, 4, 10, 18 }, "cumulative_prod include_initial")
    check(a:cumsum({ axis = 2, dtype = "i8" }), "i8", { 2, 3 }, { 1, 3, 6, 4, 9, 15 }, "dtype i8")
    check(mk({ 100, 100 }, "i8"):cumsum({ dtype = "i8" }), "i8", { 2 }, { 100, -56 }, "i8 wraps")
    check(mk({ 1.5, -0.5, 2 }, "f32"):cumsum(), "f32", { 3 }, { 1.5, 1.0, 3.0 }, "f32")
    check(mk({ -0.0, -0.0 }, "f64"):cumsum(), "f64", { 2 }, { -0.0, -0.0 }, "-0.0 as numpy")
    check(mk({ 1, NAN, 2 }, "f64"):cumsum(), "f64", { 3 }, { 1.0, NAN, NAN }, "NaN propagates")
    check(mk({ true, true, false }, "bool"):cumsum(), "i64", { 3 }, { 1, 2, 2 }, "bool")
    check(mk({ cu.complex(1, 1), cu.complex(2, -1) }, "c64"):cumsum(), "c64", { 2 }, { { 1.0, 1.0 }, { 3.0, 0.0 } },
      "c64")
    check(cu.zeros({ 0 }, "f32"):cumsum({ include_initial = true }), "f32", { 1 }, { 0.0 }, "empty")
    check(cu.zeros({ 2, 0 }, "f32"):cumsum({ axis = 2 }), "f32", { 2, 0 }, {}, "empty rows")
    local o = host and cu.host.zeros({ 2, 3 }, "f64") or cu.zeros({ 2, 3 }, "f64")
    T.truthy(rawequal(a:cumsum({ axis = 2, out = o }), o), "out is returned")
    check(o, "f64", { 2, 3 }, { 1.0, 3.0, 6.0, 4.0, 9.0, 15.0 }, "out converts")
  end)

  T.case("scans of many tiles, each path (" .. where .. ")", function()
    -- Long rows: the GPU scans run many tiles (look-back between blocks); contiguous views take
    -- the direct path, a column the strided one. Exact: whole numbers below 2^24.
    local n = 300001
    local ones = host and cu.host.ones({ n }, "f32") or cu.ones({ n }, "f32")
    local s = ones:cumsum()
    T.eq(s[1], 1.0, "first")
    T.eq(s[123457], 123457.0, "middle")
    T.eq(s[n], n + 0.0, "last")
    local r = (host and cu.host.ones({ 3, n }, "i16") or cu.ones({ 3, n }, "i16"))
      :cumsum({ axis = 2, include_initial = true })
    T.eq(r.dtype, "i64", "i16 accumulates in i64")
    for row = 1, 3 do
      T.eq(r[row][1], 0, "row " .. row .. " starts with the identity")
      T.eq(r[row][2], 1, "row " .. row .. " second")
      T.eq(r[row][n + 1], n, "row " .. row .. " last")
    end
    local col = (host and cu.host.ones({ n, 2 }, "f64") or cu.ones({ n, 2 }, "f64")):cumsum({ axis = 1 })
    T.eq(col[n][1], n + 0.0, "strided column, last")
    T.eq(col[7][2], 7.0, "strided column, seventh")
  end)

  T.case("a long scan and reduction (" .. where .. ")", function()
    -- Long enough for the host's split rows and for several scan tiles and reduction blocks.
    local n = 300000
    local a = cu.arange(0, n, 1, "i64")
    if host then a = a:to_host() end
    local c = a:cumsum()
    T.eq(c[n], n * (n - 1) // 2, "last prefix sum")
    T.eq(c[1000], 999 * 1000 // 2, "prefix 1000")
    local m = a:reshape({ 3, n // 3 })
    local r = m:cumsum({ axis = 2 })
    T.eq(r[2][n // 3], (n // 3) * (n // 3) + (n // 3) * ((n // 3) - 1) // 2, "row 2")
    local f = cu.ones({ n }, "f32")
    T.eq(f:var():item(), 0.0, "var of ones")
    T.eq(f:cumsum()[n], n + 0.0, "f32 cumsum of ones is exact")
  end)
end

T.case("errors", function()
  local m = cu.zeros({ 2, 3, 4 })
  S.raises(function() m:sum({ axis = { 1, 1 } }) end,
    "bad argument #1 to 'sum' (option 'axis': axis 1 is repeated")
  S.raises(function() m:sum({ axis = { 1, -3 } }) end, "(option 'axis': axis 1 is repeated")
  S.raises(function() m:sum({ axis = { 1, 4 } }) end, "(option 'axis': axis 4 is out of range")
  S.raises(function() m:sum({ axis = { 1, "x" } }) end, "(option 'axis': axis[2] must be an integer")
  S.raises(function() m:sum({ axis = { 1, x = 2 } }) end, "(option 'axis': must be a sequence")
  S.raises(function() m:argmax({ axis = { 1, 2 } }) end,
    "(option 'axis': must be an integer (one axis), got table")
  S.raises(function() m:norm({ axis = { 1, 2 } }) end, "(option 'axis'")
  S.raises(function() m:var({ correction = -1 }) end, "(option 'correction': must be a finite number >= 0")
  S.raises(function() m:var({ correction = "1" }) end, "(option 'correction': number expected, got string")
  S.raises(function() m:std({ correction = 1, ddof = 1 }) end, "give correction or ddof, not both")
  S.raises(function() m:mean({ dtype = "f32" }) end, "unknown option 'dtype'")
  S.raises(function() m:sum({ correction = 1 }) end, "unknown option 'correction'")
  S.raises(function() m:sum({ dtype = "bool" }) end, "(option 'dtype': must be a numeric dtype")
  S.raises(function() m:sum({ dtype = "f8" }) end, "(option 'dtype'")
  S.raises(function() cu.nanmax(cu.zeros(3, "c64")) end, { "nanmax", "complex" })
  S.raises(function() cu.nanmin(cu.zeros({ 0 })) end, { "nanmin", "empty" })
  S.raises(function() cu.var(3) end, "bad argument #1 to 'var' (cu.Array expected, got number)")
  S.raises(function() cu.any(m, 1) end, "bad argument #2 to 'any' (options table")
  S.raises(function() cu.cumulative_sum(m) end,
    "bad argument #2 to 'cumulative_sum' (option 'axis': required for a 3-d array")
  S.raises(function() cu.cumsum(m, { axis = 4 }) end, "(option 'axis': axis 4 is out of range")
  S.raises(function() cu.cumsum(m, { axis = { 1 } }) end, "(option 'axis': must be an integer")
  S.raises(function() cu.cumsum(m, { dtype = "bool" }) end, "(option 'dtype'")
  S.raises(function() cu.cumsum(m, { include_initial = 1 }) end, "include_initial")
  S.raises(function() cu.cumsum(m, { out = cu.zeros({ 2 }) }) end, { "cumsum", "out has shape" })
  S.raises(function() cu.cumprod(m, { keepdims = true }) end, "unknown option 'keepdims'")
  S.raises(function() m:all({ out = cu.zeros({ 5 }) }) end, { "all", "out has shape" })
  local f = cu.ones(8)
  f:free()
  S.raises_released(function() f:cumsum() end)
  S.raises_released(function() f:var() end)
  T.eq(cu.ones(5):std():item(), 0.0, "still usable")
end)

os.exit(T.run())
