-- Sorting, searching and sets: cu.sort, cu.argsort, cu.nonzero, cu.where(cond), cu.count_nonzero,
-- cu.searchsorted and cu.unique_* on the current backend (ctest runs this file on both), against
-- references computed here from :totable() with numpy's order (stable; NaN last; -0.0 == 0.0;
-- complex numbers by real part, then imaginary part, NaN parts last). Device and host arrays,
-- axes, descending order, views, every dtype, sizes beyond one GPU tile, and the errors.
--
-- Set CULUA_TEST_SEED to replay a run; the seed is printed first.
package.path = (arg and arg[0] and arg[0]:match("^(.*)[/\\]") or "tests/lua") .. "/?.lua;" .. package.path
local T = require "cu.testing"
local S = require "support"

local SEED = tonumber(os.getenv("CULUA_TEST_SEED")) or (os.time() ~ math.floor(os.clock() * 1e6))
math.randomseed(SEED)
print("seed: " .. SEED .. " (CULUA_TEST_SEED=" .. SEED .. " replays this run)")

local nan, inf = 0 / 0, math.huge
local other_nan = -nan -- the other sign bit: NaNs of both signs sort last

-- A value as read back: numbers, booleans, cu.complex or {re, im}.
local function parts(v)
  if type(v) == "table" then return v[1], v[2] end
  if type(v) == "userdata" then return v.re, v.im end
  if type(v) == "boolean" then return v and 1 or 0, 0 end
  return v, 0
end

local function flt_less(a, b) return a < b or (b ~= b and a == a) end

-- numpy's order (npysort's LT functions).
local function less(x, y, complex)
  local ar, ai = parts(x)
  local br, bi = parts(y)
  if not complex then return flt_less(ar, br) end
  if ar < br then return ai == ai or bi ~= bi end
  if ar > br then return bi ~= bi and ai == ai end
  if ar == br or (ar ~= ar and br ~= br) then return ai < bi or (bi ~= bi and ai == ai) end
  return br ~= br
end

-- The stable order of a list: 1-based positions (descending: the reverse order, ties in input
-- order).
local function ref_argsort(list, desc, complex)
  local idx = {}
  for i = 1, #list do idx[i] = i end
  table.sort(idx, function(i, j)
    local a, b = list[i], list[j]
    local lt
    if desc then lt = less(b, a, complex) else lt = less(a, b, complex) end
    if lt then return true end
    local gt
    if desc then gt = less(a, b, complex) else gt = less(b, a, complex) end
    if gt then return false end
    return i < j
  end)
  return idx
end

-- Values that make ties, NaN, -0.0 and infinities likely.
local POOL = {
  float = { -inf, -3.5, -1, -0.0, 0.0, 0.5, 1, 2, 7.25, inf, nan, other_nan },
  int = { -7, -1, 0, 1, 2, 3, 5, 100 },
  uint = { 0, 1, 2, 3, 5, 100, 200 },
}
local function pool_value(dtype)
  local info = S.INFO[dtype]
  if info.kind == "bool" then return math.random() < 0.5 end
  if info.kind == "complex" then
    local p = POOL.float
    return cu.complex(p[math.random(#p)], p[math.random(#p)])
  end
  local p = info.kind == "float" and POOL.float or (info.signed and POOL.int or POOL.uint)
  return p[math.random(#p)]
end

local function random_list(dtype, n)
  local t = {}
  for i = 1, n do t[i] = pool_value(dtype) end
  return t
end

local function nest(flat, shape)
  if #shape <= 1 then return flat end
  local inner = 1
  for i = 2, #shape do inner = inner * shape[i] end
  local sub = {}
  for i = 2, #shape do sub[#sub + 1] = shape[i] end
  local out = {}
  for r = 1, shape[1] do
    local part = {}
    for j = 1, inner do part[j] = flat[(r - 1) * inner + j] end
    out[r] = nest(part, sub)
  end
  return out
end

local function flat_of(a)
  local t = a:totable()
  if type(t) ~= "table" then return { t } end
  return S.flatten(t)
end

-- The same value, bit for bit where it matters (the sign of a zero, NaN).
local function identical(a, b)
  local ar, ai = parts(a)
  local br, bi = parts(b)
  local function one(x, y)
    if x ~= x then return y ~= y end
    if x == 0 and y == 0 then return (1 / x > 0) == (1 / y > 0) end
    return x == y
  end
  if type(a) == "boolean" or type(b) == "boolean" then return a == b end
  return one(ar, br) and one(ai, bi)
end

local function check_identical(got, want, what)
  T.eq(#got, #want, what .. ": length")
  for i = 1, #want do
    if not identical(got[i], want[i]) then
      error(string.format("%s: element %d: expected %s, got %s", what, i, S.show(want[i]),
        S.show(got[i])), 2)
    end
  end
end

-- Rows of a 2-d flat list along axis 2 (cols contiguous).
local function sort_rows_ref(flat, rows, cols, desc, complex)
  local vals, pos = {}, {}
  for r = 1, rows do
    local row = {}
    for c = 1, cols do row[c] = flat[(r - 1) * cols + c] end
    local idx = ref_argsort(row, desc, complex)
    for c = 1, cols do
      vals[(r - 1) * cols + c] = row[idx[c]]
      pos[(r - 1) * cols + c] = idx[c]
    end
  end
  return vals, pos
end

local ALL = S.DTYPES

T.case("sort and argsort of every dtype: ties, NaN, -0.0, infinities, both orders", function()
  for _, dtype in ipairs(ALL) do
    local complex = S.INFO[dtype].kind == "complex"
    for _, n in ipairs({ 1, 2, 7, 300 }) do
      local list = random_list(dtype, n)
      local a = cu.array(list, dtype)
      local stored = flat_of(a)
      for _, desc in ipairs({ false, true }) do
        local what = string.format("%s n=%d descending=%s", dtype, n, tostring(desc))
        local idx = ref_argsort(stored, desc, complex)
        local want = {}
        for i = 1, n do want[i] = stored[idx[i]] end
        local s = cu.sort(a, { descending = desc })
        T.eq(s.dtype, dtype, what .. ": dtype")
        check_identical(flat_of(s), want, what .. ": sort")
        local p = a:argsort({ descending = desc, stable = true })
        T.eq(p.dtype, "i64", what .. ": argsort dtype")
        T.eq(flat_of(p), idx, what .. ": argsort")
      end
    end
  end
end)

T.case("sort along each axis of 2-d and 3-d arrays, and of views", function()
  for _, dtype in ipairs({ "f32", "i32", "f64", "c64", "i8", "f16" }) do
    local complex = S.INFO[dtype].kind == "complex"
    local rows, cols = 5, 9
    local list = random_list(dtype, rows * cols)
    local a = cu.array(nest(list, { rows, cols }), dtype)
    local stored = flat_of(a)
    for _, desc in ipairs({ false, true }) do
      -- axis 2 (= -1, the default)
      local vals, pos = sort_rows_ref(stored, rows, cols, desc, complex)
      check_identical(flat_of(cu.sort(a, { descending = desc })), vals, dtype .. " axis -1")
      T.eq(flat_of(cu.argsort(a, { axis = 2, descending = desc })), pos, dtype .. " argsort axis 2")
      -- axis 1: the transposed rows
      local tr = {}
      for c = 1, cols do
        for r = 1, rows do tr[(c - 1) * rows + r] = stored[(r - 1) * cols + c] end
      end
      local tv, tp = sort_rows_ref(tr, cols, rows, desc, complex)
      local s1 = flat_of(cu.sort(a, { axis = 1, descending = desc }))
      local p1 = flat_of(cu.argsort(a, { axis = -2, descending = desc }))
      for r = 1, rows do
        for c = 1, cols do
          local k = (r - 1) * cols + c
          if not identical(s1[k], tv[(c - 1) * rows + r]) then
            error(string.format("%s axis 1: element (%d,%d): expected %s, got %s", dtype, r, c,
              S.show(tv[(c - 1) * rows + r]), S.show(s1[k])))
          end
          T.eq(p1[k], tp[(c - 1) * rows + r], dtype .. " argsort axis 1")
        end
      end
      -- a transposed view sorted along its last axis is the same as axis 1 of the original
      local t = a:transpose(1, 2)
      check_identical(flat_of(cu.sort(t, { descending = desc })), tv, dtype .. " transposed view")
      -- a narrowed view
      local v = a:narrow(2, 3, 4)
      local vl = flat_of(v)
      local vv = sort_rows_ref(vl, rows, 4, desc, complex)
      check_identical(flat_of(v:sort({ descending = desc })), vv, dtype .. " narrowed view")
    end
  end
  local b = cu.array(nest(random_list("i16", 2 * 3 * 4), { 2, 3, 4 }), "i16")
  local st = flat_of(b)
  local s = flat_of(cu.sort(b, { axis = 2 }))
  for i = 1, 2 do
    for k = 1, 4 do
      local col = {}
      for j = 1, 3 do col[j] = st[(i - 1) * 12 + (j - 1) * 4 + k] end
      local idx = ref_argsort(col, false, false)
      for j = 1, 3 do T.eq(s[(i - 1) * 12 + (j - 1) * 4 + k], col[idx[j]], "3-d axis 2") end
    end
  end
end)

T.case("long rows and many rows (beyond one GPU tile), stability with many equal keys", function()
  for _, dtype in ipairs({ "f32", "i32", "f64", "u8", "bool" }) do
    local n = 20000
    local list = {}
    for i = 1, n do
      if dtype == "bool" then list[i] = i % 3 == 0 else list[i] = (i * 7919) % 13 end
    end
    if S.INFO[dtype].kind == "float" then
      for i = 1, n, 97 do list[i] = nan end
      for i = 2, n, 89 do list[i] = -0.0 end
    end
    local a = cu.array(list, dtype)
    local stored = flat_of(a)
    for _, desc in ipairs({ false, true }) do
      local idx = ref_argsort(stored, desc, false)
      T.eq(flat_of(cu.argsort(a, { descending = desc })), idx, dtype .. " long row argsort")
      local want = {}
      for i = 1, n do want[i] = stored[idx[i]] end
      check_identical(flat_of(cu.sort(a, { descending = desc })), want, dtype .. " long row sort")
    end
    -- many short rows
    local m = a:reshape({ 1000, 20 })
    local vals, pos = sort_rows_ref(stored, 1000, 20, false, false)
    check_identical(flat_of(m:sort()), vals, dtype .. " many rows")
    T.eq(flat_of(m:argsort()), pos, dtype .. " many rows argsort")
  end
end)

T.case("a row of 300000 keys (the host's parallel pieces and merges; CUB's long rows)", function()
  for _, dtype in ipairs({ "f32", "i16", "f64" }) do
    local n = 300000
    local list = {}
    for i = 1, n do list[i] = (i * 7919) % 101 - 50 end
    if dtype ~= "i16" then
      for i = 1, n, 1009 do list[i] = nan end
      for i = 3, n, 997 do list[i] = -0.0 end
    end
    local a = cu.array(list, dtype)
    local stored = flat_of(a)
    for _, desc in ipairs({ false, true }) do
      local what = dtype .. (desc and " descending" or "")
      local vals = flat_of(cu.sort(a, { descending = desc }))
      local pos = flat_of(cu.argsort(a, { descending = desc }))
      local seen = {}
      for i = 1, n do
        local p = pos[i]
        if seen[p] or p < 1 or p > n then error(what .. ": not a permutation at " .. i) end
        seen[p] = true
        if not identical(vals[i], stored[p]) then
          error(string.format("%s: sort and argsort disagree at %d", what, i))
        end
        if i > 1 then
          local x, y = stored[pos[i - 1]], stored[p]
          local before = desc and less(y, x) or less(x, y)
          local tie = not less(x, y) and not less(y, x)
          if not (before or (tie and pos[i - 1] < p)) then
            error(string.format("%s: out of order (or unstable) at %d: %s then %s", what, i,
              S.show(x), S.show(y)))
          end
        end
      end
    end
  end
end)

T.case("host arrays, empty arrays, 0-d arrays", function()
  local h = cu.host.array({ 3, nan, -0.0, 0.0, -1 }, "f64")
  local s = cu.sort(h)
  T.eq(s.location ~= "device", true, "a host array's sort stays on the host")
  check_identical(flat_of(s), { -1, -0.0, 0.0, 3, nan }, "host sort")
  T.eq(flat_of(h:argsort({ descending = true })), { 2, 1, 3, 4, 5 }, "host argsort descending")
  local e = cu.zeros({ 0 }, "f32")
  T.eq(cu.sort(e).shape[1], 0, "empty sort")
  T.eq(cu.argsort(cu.zeros({ 3, 0 }, "i32")).shape, { 3, 0 }, "empty argsort")
  T.eq(cu.argsort(cu.zeros({ 0, 4 }, "i32"), { axis = 1 }).shape, { 0, 4 }, "empty rows")
  S.raises(function() cu.sort(cu.array(1.5, "f32")) end, { "bad argument #1 to 'sort'", "0-d" })
  S.raises(function() cu.argsort(cu.array(1.5, "f32"), { axis = 1 }) end,
    { "bad argument #2 to 'argsort'", "option 'axis'", "0-d" })
end)

T.case("nonzero and where(cond)", function()
  for _, dtype in ipairs(ALL) do
    local list = random_list(dtype, 24)
    local a = cu.array(nest(list, { 2, 3, 4 }), dtype)
    local stored = flat_of(a)
    local want = { {}, {}, {} }
    for i, v in ipairs(stored) do
      local re, im = parts(v)
      if re ~= 0 or im ~= 0 then
        local k = i - 1
        want[1][#want[1] + 1] = k // 12 + 1
        want[2][#want[2] + 1] = (k // 4) % 3 + 1
        want[3][#want[3] + 1] = k % 4 + 1
      end
    end
    local r = cu.nonzero(a)
    T.eq(#r, 3, dtype .. " one array per dimension")
    for d = 1, 3 do
      T.eq(r[d].dtype, "i64", dtype .. " nonzero dtype")
      T.eq(flat_of(r[d]), want[d], dtype .. " nonzero dim " .. d)
    end
    local w = cu.where(a)
    for d = 1, 3 do T.eq(flat_of(w[d]), want[d], dtype .. " where(cond) dim " .. d) end
    T.eq(cu.count_nonzero(a):item(), #want[1], dtype .. " count_nonzero")
  end
  -- views, host arrays, empty results
  local m = cu.array({ { 0, 1, 0 }, { 2, 0, 3 } }, "i32")
  local t = cu.nonzero(m:transpose(1, 2))
  T.eq(flat_of(t[1]), { 1, 2, 3 }, "transposed rows")
  T.eq(flat_of(t[2]), { 2, 1, 2 }, "transposed cols")
  local hz = cu.nonzero(cu.host.array({ 0, 0, 5 }, "f32"))
  T.eq(flat_of(hz[1]), { 3 }, "host nonzero")
  local none = cu.nonzero(cu.zeros({ 4 }, "f64"))
  T.eq(none[1].shape, { 0 }, "no nonzero element")
  T.eq(flat_of(cu.nonzero(cu.array({ nan, -0.0, 0.0 }, "f32"))[1]), { 1 }, "NaN is nonzero, -0.0 not")
  S.raises(function() cu.nonzero(cu.array(1, "i32")) end, { "bad argument #1 to 'nonzero'", "0-d" })
  -- the element-wise where is unchanged
  T.eq(cu.where(cu.array({ true, false }, "bool"), 1, 2):totable(), { 1, 2 }, "3-argument where")
end)

T.case("count_nonzero over axes", function()
  local a = cu.array({ { { 0, 1 }, { 2, 0 }, { 0, 0 } }, { { 5, 0 }, { 0, 0 }, { 1, 1 } } }, "f32")
  T.eq(cu.count_nonzero(a):item(), 5, "all")
  T.eq(cu.count_nonzero(a, { axis = 1 }):totable(), { { 1, 1 }, { 1, 0 }, { 1, 1 } }, "axis 1")
  T.eq(cu.count_nonzero(a, { axis = -1 }):totable(), { { 1, 1, 0 }, { 1, 0, 2 } }, "axis -1")
  T.eq(cu.count_nonzero(a, { axis = { 1, 3 } }):totable(), { 2, 1, 2 }, "axes 1, 3")
  T.eq(cu.count_nonzero(a, { axis = { 2 }, keepdims = true }).shape, { 2, 1, 2 }, "keepdims")
  T.eq(a:count_nonzero({ axis = {} }).shape, { 2, 3, 2 }, "no axis")
  T.eq(cu.count_nonzero(a, { axis = 2 }).dtype, "i64", "dtype")
  S.raises(function() cu.count_nonzero(a, { axis = 4 }) end,
    { "bad argument #2 to 'count_nonzero'", "option 'axis'" })
  S.raises(function() cu.count_nonzero(a, { axis = { 1, -3 } }) end, { "option 'axis'", "repeated" })
end)

T.case("searchsorted: sides, sorter, NaN, promotion, scalars", function()
  local x1 = cu.array({ -1, 0, 0, 2.5, 7, nan }, "f64")
  local v = cu.array({ -5, -1, 0, 1, 2.5, 100, inf, nan, -0.0 }, "f64")
  T.eq(flat_of(cu.searchsorted(x1, v)), { 1, 1, 2, 4, 4, 6, 6, 6, 2 }, "left")
  T.eq(flat_of(x1:searchsorted(v, { side = "right" })), { 1, 2, 4, 4, 5, 6, 6, 7, 4 }, "right")
  T.eq(cu.searchsorted(x1, 2.5):item(), 4, "a number")
  T.eq(cu.searchsorted(x1, 2.5).shape, {}, "a number gives a 0-d result")
  -- promotion: i32 x1, f64 values
  local xi = cu.array({ 1, 3, 5 }, "i32")
  T.eq(flat_of(cu.searchsorted(xi, cu.array({ 2.5, 3, 3.5 }, "f64"))), { 2, 2, 3 }, "promoted")
  -- sorter: positions (1-based) that sort x1
  local u = cu.array({ 30, 10, 20 }, "i32")
  local order = cu.argsort(u)
  T.eq(flat_of(cu.searchsorted(u, cu.array({ 15, 25, 35 }, "i32"), { sorter = order })), { 2, 3, 4 },
    "sorter")
  T.eq(flat_of(cu.searchsorted(u, cu.array({ 10, 30 }, "i32"), { sorter = order, side = "right" })),
    { 2, 4 }, "sorter right")
  -- 2-d values, host arrays, empty
  T.eq(cu.searchsorted(xi, cu.array({ { 0, 9 }, { 3, 4 } }, "i32")):totable(), { { 1, 4 }, { 2, 3 } },
    "2-d values")
  T.eq(flat_of(cu.searchsorted(cu.host.array({ 1, 2 }, "f32"), cu.host.array({ 1.5 }, "f32"))), { 2 },
    "host")
  T.eq(cu.searchsorted(cu.zeros({ 0 }, "f32"), cu.array({ 1, 2 }, "f32")):totable(), { 1, 1 }, "empty x1")
  T.eq(cu.searchsorted(xi, cu.zeros({ 0 }, "i32")).shape, { 0 }, "empty values")
  -- errors
  S.raises(function() cu.searchsorted(cu.zeros({ 2, 2 }, "f32"), v) end,
    { "bad argument #1 to 'searchsorted'", "1-d" })
  S.raises(function() cu.searchsorted(x1, v, { side = "middle" }) end,
    { "bad argument #3 to 'searchsorted'", "option 'side'", "\"left\" or \"right\"" })
  S.raises(function() cu.searchsorted(x1, "x") end, { "bad argument #2 to 'searchsorted'" })
  S.raises(function() cu.searchsorted(u, v, { sorter = cu.array({ 1, 2 }, "i64") }) end,
    { "bad argument #3 to 'searchsorted'", "option 'sorter'", "length" })
  S.raises(function() cu.searchsorted(u, v, { sorter = cu.array({ 1, 2, 4 }, "i64") }) end,
    { "option 'sorter'", "1..3" })
  S.raises(function() cu.searchsorted(u, v, { sorter = cu.array({ 1, 2, 3 }, "f32") }) end,
    { "option 'sorter'", "integer" })
end)

-- The reference unique: distinct values in sorted order (NaNs distinct, -0.0 == 0.0: the first
-- occurrence's), the first occurrence, counts, inverse.
local function ref_unique(stored, complex)
  local idx = ref_argsort(stored, false, complex)
  local values, first, counts, inverse = {}, {}, {}, {}
  local function eq(x, y)
    local ar, ai = parts(x)
    local br, bi = parts(y)
    return ar == br and ai == bi
  end
  for j, i in ipairs(idx) do
    if j == 1 or not eq(stored[i], stored[idx[j - 1]]) then
      values[#values + 1] = stored[i]
      first[#first + 1] = i
      counts[#counts + 1] = 0
    end
    counts[#counts] = counts[#counts] + 1
    inverse[i] = #values
  end
  return values, first, counts, inverse
end

T.case("unique_values, unique_counts, unique_inverse, unique_all", function()
  for _, dtype in ipairs(ALL) do
    local complex = S.INFO[dtype].kind == "complex"
    for _, shape in ipairs({ { 40 }, { 3, 5 }, { 0 } }) do
      local n = 1
      for _, d in ipairs(shape) do n = n * d end
      local a = n == 0 and cu.zeros(shape, dtype) or cu.array(nest(random_list(dtype, n), shape), dtype)
      local stored = n > 0 and flat_of(a) or {}
      local values, first, counts, inverse = ref_unique(stored, complex)
      local what = dtype .. " " .. #shape .. "-d"
      check_identical(n > 0 and flat_of(cu.unique_values(a)) or {}, values, what .. " unique_values")
      local all = a:unique_all()
      T.eq(all.values.dtype, dtype, what .. " values dtype")
      check_identical(n > 0 and flat_of(all.values) or {}, values, what .. " values")
      T.eq(n > 0 and flat_of(all.indices) or {}, first, what .. " indices")
      T.eq(n > 0 and flat_of(all.counts) or {}, counts, what .. " counts")
      T.eq(all.inverse_indices.shape, shape, what .. " inverse shape")
      T.eq(n > 0 and flat_of(all.inverse_indices) or {}, inverse, what .. " inverse")
      local c = cu.unique_counts(a)
      T.eq(n > 0 and flat_of(c.counts) or {}, counts, what .. " unique_counts")
      T.eq(c.indices, nil, what .. " unique_counts has no indices")
      local inv = cu.unique_inverse(a)
      T.eq(n > 0 and flat_of(inv.inverse_indices) or {}, inverse, what .. " unique_inverse")
    end
  end
  -- NaNs are distinct, zeros are one value
  local u = cu.unique_counts(cu.array({ nan, 0.0, -0.0, nan, 1 }, "f32"))
  T.eq(#flat_of(u.values), 4, "two NaNs, one zero, one 1")
  T.eq(flat_of(u.counts), { 2, 1, 1, 1 }, "counts with NaNs")
  -- views and host arrays
  local m = cu.array({ { 3, 1 }, { 1, 2 } }, "i64"):transpose(1, 2)
  T.eq(flat_of(cu.unique_all(m).indices), { 2, 4, 1 }, "transposed: flat positions of the view")
  T.eq(flat_of(cu.unique_values(cu.host.array({ 2, 2, 1 }, "u8"))), { 1, 2 }, "host")
  T.eq(cu.unique_values(cu.array(5, "i32")):totable(), { 5 }, "0-d input")
end)

T.case("bad arguments", function()
  local a = cu.array({ 3, 1, 2 }, "f32")
  S.raises(function() cu.sort(5) end, { "bad argument #1 to 'sort'", "cu.Array expected" })
  S.raises(function() cu.sort(a, 3) end, { "bad argument #2 to 'sort'" })
  S.raises(function() cu.sort(a, { axis = 2 }) end, { "bad argument #2 to 'sort'", "option 'axis'" })
  S.raises(function() cu.sort(a, { axis = 0 }) end, { "option 'axis'", "axes start at 1" })
  S.raises(function() cu.sort(a, { descending = "yes" }) end, { "option 'descending'", "boolean" })
  S.raises(function() cu.argsort(a, { stable = 1 }) end, { "option 'stable'", "boolean" })
  S.raises(function() cu.sort(a, { axes = 1 }) end, { "bad argument #2 to 'sort'", "axes" })
  S.raises(function() cu.sort(a, {}, 3) end, { "bad argument #3 to 'sort'" })
  S.raises(function() cu.unique_values("x") end, { "bad argument #1 to 'unique_values'" })
  S.raises(function() cu.unique_all(a, { axis = 1 }) end, { "bad argument #2 to 'unique_all'" })
  S.raises(function() cu.nonzero(a, { axis = 1 }) end, { "bad argument #2 to 'nonzero'" })
  local freed = cu.array({ 1, 2 }, "f32")
  freed:free()
  S.raises(function() cu.sort(freed) end, { "sort" })
  S.raises(function() cu.searchsorted(a, freed) end, { "searchsorted" })
end)

os.exit(T.run())
