-- The Array API's manipulation, creation, indexing and small linear algebra functions against
-- numpy (tests/numpy/npref.lua): every dtype, empty and 0-d arrays, non-contiguous inputs (transposed
-- and flipped), negative steps, masks and gathers. Indices and axes are 1-based in culua and
-- 0-based in the numpy expressions. Exits 77 (skipped) without python3 + numpy.
-- Set CULUA_TEST_SEED to replay a run; the seed is printed first.
package.path = (arg and arg[0] and arg[0]:match("^(.*)[/\\]") or "tests/numpy") .. "/?.lua;"
  .. (arg and arg[0] and arg[0]:match("^(.*)[/\\]") or "tests/numpy") .. "/../lua/?.lua;" .. package.path
local NP = require "npref"
local S = require "support"
NP.require()

local SEED = tonumber(os.getenv("CULUA_TEST_SEED")) or (os.time() ~ math.floor(os.clock() * 1e6))
math.randomseed(SEED)
print("seed: " .. SEED .. " (CULUA_TEST_SEED=" .. SEED .. " replays this run)")

local SPECIALS = { 0 / 0, math.huge, -math.huge, -0.0, 0.0 }

local function numel(shape)
  local n = 1
  for _, d in ipairs(shape) do n = n * d end
  return n
end

-- A random array of `shape` and dtype (floats include NaN, inf and -0.0; values every dtype holds
-- exactly).
local function rand(shape, dt)
  local info = S.INFO[dt]
  local vals = {}
  for i = 1, numel(shape) do
    if info.kind == "bool" then
      vals[i] = math.random() < 0.5
    elseif info.kind == "int" then
      vals[i] = info.signed and math.random(-100, 100) or math.random(0, 200)
    elseif info.kind == "complex" then
      vals[i] = cu.complex(math.random(-40, 40) / 4, math.random(-40, 40) / 4)
    elseif math.random() < 0.15 then
      vals[i] = SPECIALS[math.random(#SPECIALS)]
    else
      vals[i] = math.random(-400, 400) / 8
    end
  end
  if #shape == 0 then return cu.array(vals[1], dt) end
  return cu.array(vals, dt):reshape(shape)
end

-- The same values in a strided layout: the transpose of a contiguous array of the reversed shape,
-- or a flipped view.
local function strided(shape, dt)
  if #shape < 2 then return cu.flip(rand(shape, dt)) end
  local rev = {}
  for i = #shape, 1, -1 do rev[#rev + 1] = shape[i] end
  return cu.permute_dims(rand(rev, dt), (function()
    local p = {}
    for i = #shape, 1, -1 do p[#p + 1] = i end
    return p
  end)())
end

local cases, checks = {}, {}

-- Queues one comparison: got() (a culua array, or several) against the numpy expression.
local function check(name, got, expr, inputs, opts)
  local described = {}
  for k, v in pairs(inputs) do described[k] = NP.describe(v) end
  local ok, result = pcall(got)
  cases[#cases + 1] = { expr = expr, inputs = described }
  checks[#checks + 1] = { name = name, ok = ok, result = result, opts = opts }
end

local FLOATY = { f16 = true, bf16 = true, f32 = true, f64 = true, c64 = true, c128 = true }

for _, dt in ipairs(S.DTYPES) do
  local a = rand({ 3, 4 }, dt)
  local t = strided({ 3, 4 }, dt)
  local c = rand({ 2, 3, 4 }, dt)
  local e = rand({ 0, 4 }, dt)
  local z = rand({}, dt)
  local v = rand({ 5 }, dt)
  local I = { a = a, t = t, c = c, e = e, z = z, v = v }
  local function q(name, got, expr, opts) check(dt .. " " .. name, got, expr, I, opts) end

  -- views
  q("flip", function() return cu.flip(t) end, "np.flip(t)")
  q("flip axis", function() return cu.flip(c, { axis = { 1, -1 } }) end, "np.flip(c, (0, 2))")
  q("flip 0-d", function() return cu.flip(z) end, "np.flip(z)")
  q("flip empty", function() return cu.flip(e, 1) end, "np.flip(e, 0)")
  q("permute_dims", function() return cu.permute_dims(c, { 3, 1, 2 }) end, "np.transpose(c, (2, 0, 1))")
  q("moveaxis", function() return cu.moveaxis(c, { 1, 2 }, { -1, 1 }) end, "np.moveaxis(c, (0, 1), (-1, 0))")
  q("expand_dims", function() return cu.expand_dims(t, 2) end, "np.expand_dims(t, 1)")
  q("squeeze", function() return cu.squeeze(cu.expand_dims(t, 1), 1) end, "t")
  q("matrix_transpose", function() return c.mT end, "np.swapaxes(c, -1, -2)")
  q("broadcast_to", function() return cu.broadcast_to(v, { 2, 5 }) end, "np.broadcast_to(v, (2, 5))")
  -- slices
  q("slice", function() return t[{ 2, 3 }] end, "t[1:3]")
  q("slice step", function() return v[{ 1, -1, 2 }] end, "v[0::2]")
  q("slice negative step", function() return v[{ nil, nil, -2 }] end, "v[::-2]")
  q("slice 2-d", function() return t[{ { -1, 1, -2 }, { 4, 2, -1 } }] end, "t[::-2, 3:0:-1]")
  q("slice empty", function() return e[{ {}, { nil, nil, -1 } }] end, "e[:, ::-1]")
  -- copies
  q("concat", function() return cu.concat({ a, t, e }) end, "np.concatenate([a, t, e])")
  q("concat axis", function() return cu.concat({ a, t }, { axis = 2 }) end, "np.concatenate([a, t], 1)")
  q("concat flat", function() return cu.concat({ a, v, z:reshape({ 1 }) }, { axis = false }) end,
    "np.concatenate([a.ravel(), v, z.ravel()])")
  q("stack", function() return cu.stack({ a, t }, { axis = 2 }) end, "np.stack([a, t], 1)")
  q("stack 0-d", function() return cu.stack({ z, z }) end, "np.stack([z, z])")
  q("unstack", function() return select(3, cu.unstack(t, { axis = 2 })) end, "t[:, 2]")
  q("roll", function() return cu.roll(t, 3) end, "np.roll(t, 3)")
  q("roll axes", function() return cu.roll(c, { 1, -5 }, { axis = { 1, 3 } }) end, "np.roll(c, (1, -5), (0, 2))")
  q("roll empty", function() return cu.roll(e, 1, { axis = 1 }) end, "np.roll(e, 1, 0)")
  q("repeat", function() return cu.repeat_each(t, 2, { axis = 2 }) end, "np.repeat(t, 2, 1)")
  q("repeat flat", function() return cu.repeat_each(t, 3) end, "np.repeat(t, 3)")
  q("repeat counts", function() return cu.repeat_each(t, { 0, 1, 3 }, { axis = 1 }) end, "np.repeat(t, [0, 1, 3], 0)")
  q("tile", function() return cu.tile(t, { 2, 1, 3 }) end, "np.tile(t, (2, 1, 3))")
  q("tile 0-d", function() return cu.tile(z, 3) end, "np.tile(z, 3)")
  q("tril", function() return cu.tril(t, { k = 1 }) end, "np.tril(t, 1)")
  q("triu", function() return cu.triu(c, { k = -1 }) end, "np.triu(c, -1)")
  q("zeros_like", function() return cu.zeros_like(t) end, "np.zeros_like(t)")
  q("ones_like", function() return cu.ones_like(z) end, "np.ones_like(z)")
  q("full_like", function() return cu.full_like(e, 1) end, "np.full_like(e, 1)")
  q("eye", function() return cu.eye(3, 5, { k = 2, dtype = dt }) end,
    "np.eye(3, 5, 2, dtype=t.dtype)")
  q("meshgrid xy", function() return select(2, cu.meshgrid(v, a[1])) end, "np.meshgrid(v, a[0])[1]")
  q("meshgrid ij", function() return cu.meshgrid(v, a[1], { indexing = "ij" }) end,
    "np.meshgrid(v, a[0], indexing='ij')[0]")
  -- indexing: masks (numpy: a mask of the same values), integer arrays, take
  local m = rand({ 3, 4 }, "bool")
  local rows = rand({ 3 }, "bool")
  local idx = cu.array({ 3, -1, 1, 3 }, "i32")
  local idx2 = cu.array({ { 4, 1 }, { -4, 2 }, { 3, 3 } }, "i64")
  local J = { a = a, t = t, c = c, v = v, e = e, m = m, rows = rows, idx = idx, idx2 = idx2 }
  local function r(name, got, expr, opts) check(dt .. " " .. name, got, expr, J, opts) end
  local zero_based = "np.where(%s > 0, %s - 1, %s)"
  local function zb(n) return string.format(zero_based, n, n, n) end
  r("mask read", function() return t[m] end, "t[m]")
  r("mask rows", function() return c[cu.array({ true, false })] end, "c[np.array([True, False])]")
  r("mask rows 2", function() return t[rows] end, "t[rows]")
  r("mask write scalar", function()
    local x = t:clone(); x[m] = v[2]; return x
  end, "(lambda x: (x.__setitem__(m, v[1]), x)[1])(t.copy())")
  r("mask write strided", function()
    local x = a.mT:clone().mT; x[m] = cu.zeros_like(x[m]); return x
  end, "(lambda x: (x.__setitem__(m, 0), x)[1])(a.copy())")
  r("integer index", function() return t[idx] end, "t[" .. zb("idx") .. "]")
  r("integer write", function()
    local x = a:clone(); x[idx] = t[{ 2, 2 }]; return x
  end, "(lambda x: (x.__setitem__(" .. zb("idx") .. ", t[1:2]), x)[1])(a.copy())")
  r("take", function() return cu.take(t, idx, { axis = 2 }) end, "np.take(t, " .. zb("idx") .. ", 1)")
  r("take 1-D", function() return cu.take(v, idx2) end, "np.take(v, " .. zb("idx2") .. ")")
  r("take empty", function() return cu.take(e, idx, { axis = 2 }) end, "np.take(e, " .. zb("idx") .. ", 1)")
  r("take_along_axis", function() return cu.take_along_axis(t, idx2) end,
    "np.take_along_axis(t, " .. zb("idx2") .. ", -1)")
  r("take_along_axis 0", function()
    return cu.take_along_axis(a, idx[{ 1, 2 }]:reshape({ 2, 1 }), { axis = 1 })
  end,
    "np.take_along_axis(a, " .. zb("idx[0:2].reshape(2, 1)") .. ", 0)")
  -- linear algebra (float tolerance for accumulations)
  local tol = (dt == "f16" or dt == "bf16") and { rtol = 2e-2, atol = 1e-2 } or
      (dt == "f32" or dt == "c64") and { rtol = 1e-5, atol = 1e-5 } or { rtol = 1e-12 }
  if not FLOATY[dt] then tol = nil end
  q("outer", function() return cu.outer(v, a[2]) end, "np.outer(v, a[1])", dt == "bf16" and tol or nil)
  if dt ~= "f16" and dt ~= "bf16" then
    q("vecdot", function() return cu.vecdot(t, a) end,
      "np.sum(np.conj(t) * a, -1).astype(np.result_type(t, a))" ..
      (dt == "bool" and " if t.dtype != bool else np.any(t & a, -1)" or ""), tol)
    q("vecdot axis", function() return cu.vecdot(c, t, { axis = -2 }) end,
      "np.sum(np.conj(c) * t, -2).astype(np.result_type(c, t))" ..
      (dt == "bool" and " if t.dtype != bool else np.any(c & t, -2)" or ""), tol)
    if dt ~= "i8" and dt ~= "u8" and dt ~= "i16" then
      q("tensordot", function() return cu.tensordot(c, t) end, "np.tensordot(c, t)", tol)
      q("tensordot axes", function() return cu.tensordot(t.mT, c, { axes = { { -1 }, { 2 } } }) end,
        "np.tensordot(t.T, c, axes=((1,), (1,)))", tol)
    end
  end
end

-- cu.arange with i64 at the ends of int64's range. Where numpy's result is exact it is
-- the reference; where numpy computes the length in doubles (one element lost) or the values
-- through a float step (repeated or overflowing), the exact sequence; where numpy raises, culua
-- raises naming the argument (or the range's arguments).
local MIN, MAX = math.mininteger, math.maxinteger
local own_failures = 0
local function own_fail(what, why)
  own_failures = own_failures + 1
  print(string.format("FAIL %s: %s", what, why))
end
local function args_text(a)
  local t = {}
  for i = 1, #a do t[i] = string.format(math.type(a[i]) == "float" and "%.17g" or "%d", a[i]) end
  return table.concat(t, ", ")
end
for _, c in ipairs({ { MIN, MIN + 3 }, { MAX - 3, MAX }, { MAX, MAX - 3, -1 }, { MIN + 3, MIN, -1 },
  { MIN, MAX, 1 << 62 }, { MAX, MIN, MIN }, { 0, MAX, MAX },
  { MIN, MIN + 10, MIN }, { MIN, -1, MAX }, { 0, -1, MIN }, { MAX, -1, MIN }, { -2.0 ^ 63, -2.0 ^ 63 + 4096, 2048.0 },
  { MAX - 2, MIN + 2, MIN }, { 5, 5, 1 }, { MAX, MAX, -1 } }) do
  local py = {}
  for i = 1, #c do py[i] = math.type(c[i]) == "float" and string.format("%.17g", c[i]) or tostring(c[i]) end
  check("arange i64 (" .. args_text(c) .. ")", function() return cu.arange(c[1], c[2], c[3] or 1, "i64") end,
    "np.arange(" .. table.concat(py, ", ") .. ", dtype=np.int64)", {})
end
for _, c in ipairs({
  { { MIN, 0, MAX }, { MIN, -1 } },          -- numpy: 2^63 / (2^63 - 1) rounds to 1 in doubles: {MIN}
  { { MIN, MAX, MAX }, { MIN, -1, MAX - 1 } }, -- numpy: {MIN, -1}
  { { MAX, MIN, -MAX }, { MAX, 0, MIN + 1 } }, -- numpy: {MAX, 0}
  { { -1, MAX, MAX }, { -1, MAX - 1 } },      -- numpy: {-1}
  { { MIN, 1, MAX }, { MIN, -1 } },           -- numpy: {MIN}
  { { MIN, MIN + 3, 1.0 }, { MIN, MIN + 1, MIN + 2 } }, -- numpy: {MIN, MIN, MIN}
  { { MAX - 3, MAX, 1.0 }, { MAX - 3, MAX - 2, MAX - 1 } }, -- numpy: OverflowError
  { { 2.0 ^ 62, 2.0 ^ 62 + 3 * 1024, 1024.0 }, { 1 << 62, (1 << 62) + 1024, (1 << 62) + 2048 } },
}) do
  local a, want = c[1], c[2]
  local ok, got = pcall(cu.arange, a[1], a[2], a[3], "i64")
  got = ok and got:totable() or got
  local same = ok and #got == #want
  for i = 1, #want do same = same and math.type(got[i]) == "integer" and got[i] == want[i] end
  if not same then
    own_fail("arange i64 (" .. args_text(a) .. ")", "got " .. (ok and table.concat(got, " ") or tostring(got)) ..
      ", want " .. table.concat(want, " "))
  end
end
for _, c in ipairs({
  { { MIN, MAX, 1 }, "i64",
    "start %-9223372036854775808 to stop 9223372036854775807 by step 1 would have too many elements" },
  { { MAX, MIN, -1 }, "i64",
    "start 9223372036854775807 to stop %-9223372036854775808 by step %-1 would have too many" },
  { { 2.0 ^ 63, 2.0 ^ 63 + 8192 }, "i64", "start must be within int64" },
  { { 0, 2.0 ^ 64, 2.0 ^ 62 }, "i64", "stop must be within int64" },  -- (numpy wraps: 0, 2^62, MIN, ...)
  { { 0, 10, 2.0 ^ 70 }, "i32", "step must be within int64" },
  { { 0, 0 / 0 }, "f64", "stop must not be NaN" },
  { { 0 / 0, 1 }, "f64", "start must not be NaN" },
  { { 0, 1, 0 / 0 }, "f64", "step must not be NaN" },
  { { 0, math.huge }, "f64", "start 0 to stop inf by step 1 would have too many elements" },
  { { MAX - 1, MAX, 1 }, "i32", "do not fit in i32" },
}) do
  local a, dtype, pattern = c[1], c[2], c[3]
  local ok, err = pcall(cu.arange, a[1], a[2], a[3] or 1, dtype)
  if ok or not tostring(err):find(pattern) then
    own_fail("arange " .. dtype .. " (" .. args_text(a) .. ")", ok and "no error" or tostring(err))
  end
end
do -- arange(n) names n
  local ok, err = pcall(cu.arange, 2.0 ^ 63, "i64")
  if ok or not tostring(err):find("n must be within int64") then own_fail("arange(2^63)", tostring(err)) end
end
-- a ratio that underflows to 0 still holds start (numpy: [0.])
check("arange f64 (0, 10, inf)", function() return cu.arange(0, 10, math.huge, "f64") end,
  "np.arange(0, 10, np.inf)", {})

-- cu.repeat_each with u64 counts: from 2^63 up an error that prints the count as it is (it was
-- converted to i64 and reported as a negative count); numpy refuses u64 counts altogether.
do
  local a = cu.array({ 1, 2 }, "i32")
  local ok, err = pcall(cu.repeat_each, a, cu.array({ 2.0 ^ 63, 1 }, "u64"))
  if ok or not tostring(err):find("9223372036854775808 is too large") then
    own_fail("repeat_each u64 2^63", ok and "no error" or tostring(err))
  end
  ok, err = pcall(cu.repeat_each, a, cu.array({ 2.0 ^ 64 - 2048, 1 }, "u64"))
  if ok or not tostring(err):find("18446744073709549568 is too large") then
    own_fail("repeat_each u64 2^64 - 2048", ok and "no error" or tostring(err))
  end
  check("repeat_each u64 counts", function() return cu.repeat_each(a, cu.array({ 2, 3 }, "u64")) end,
    "np.repeat(a, [2, 3])", { a = a })
  -- counts whose sum passes int64: an error (numpy: negative dimensions), not an allocation
  ok, err = pcall(cu.repeat_each, a, { MAX, 2 })
  if ok or not tostring(err):find("add up to more than") then
    own_fail("repeat_each counts past int64", ok and "no error" or tostring(err))
  end
  ok, err = pcall(cu.repeat_each, a, { 1 << 61, 1 << 61 })
  if ok or not tostring(err):find("overflows") then
    own_fail("repeat_each 2^62 elements", ok and "no error" or tostring(err))
  end
end

-- Integer-index and mask errors against numpy's (both refuse).
local refs = NP.run(cases)
local failed = 0
for i, c in ipairs(checks) do
  local ok, why
  if not c.ok then
    ok, why = false, "culua raised " .. tostring(c.result)
  else
    ok, why = NP.same(c.result, refs[i], c.opts)
  end
  if not ok then
    failed = failed + 1
    print(string.format("FAIL %s: %s  [%s]", c.name, why, cases[i].expr))
  end
end
print(string.format("%d of %d comparisons with numpy agree", #checks - failed, #checks))
if failed > 0 or own_failures > 0 then os.exit(1) end
