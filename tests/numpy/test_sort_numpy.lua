-- Sorting, searching and sets against numpy (python3-numpy, through npref.lua): cu.sort and
-- cu.argsort (numpy's kind="stable"; descending as the Array API's reference does it: the
-- reversed stable sort of the reversed array), cu.nonzero, cu.count_nonzero, cu.searchsorted and
-- cu.unique_* (np.unique with equal_nan=False: NaNs are distinct, as the standard says), over
-- every dtype, axes, ties, NaN/-0.0/inf, empty, 0-d and non-contiguous inputs, and sizes beyond
-- one GPU tile. culua's indices are 1-based: numpy's + 1. Exits 77 (skipped) without numpy.
-- Set CULUA_TEST_SEED to replay a run.
package.path = (arg and arg[0] and arg[0]:match("^(.*)[/\\]") or "tests/numpy") .. "/?.lua;" .. package.path
local NP = require "npref"
NP.require()

local SEED = tonumber(os.getenv("CULUA_TEST_SEED")) or (os.time() ~ math.floor(os.clock() * 1e6))
math.randomseed(SEED)
print("seed: " .. SEED .. " (CULUA_TEST_SEED=" .. SEED .. " replays this run)")

local nan, inf = 0 / 0, math.huge
local DTYPES = { "f32", "f64", "f16", "bf16", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64",
  "bool", "c64", "c128" }
local KIND = {
  f32 = "float", f64 = "float", f16 = "float", bf16 = "float", c64 = "complex", c128 = "complex",
  bool = "bool", u8 = "uint", u16 = "uint", u32 = "uint", u64 = "uint",
}
local FLOATS = { -inf, -3.5, -1, -0.0, 0.0, 0.5, 1, 2, 7.25, 1e3, inf, nan }

local function value(dtype)
  local k = KIND[dtype] or "int"
  if k == "bool" then return math.random() < 0.5 end
  if k == "float" then return FLOATS[math.random(#FLOATS)] end
  if k == "complex" then return cu.complex(FLOATS[math.random(#FLOATS)], FLOATS[math.random(#FLOATS)]) end
  if k == "uint" then return math.random(0, 9) end
  return math.random(-6, 6)
end

local function nest(flat, shape, from)
  from = from or 1
  if #shape == 0 then return flat[1] end
  if #shape == 1 then
    local t = {}
    for i = 1, shape[1] do t[i] = flat[from + i - 1] end
    return t
  end
  local inner = 1
  for i = 2, #shape do inner = inner * shape[i] end
  local rest = {}
  for i = 2, #shape do rest[#rest + 1] = shape[i] end
  local t = {}
  for r = 1, shape[1] do t[r] = nest(flat, rest, from + (r - 1) * inner) end
  return t
end

local function random_array(dtype, shape)
  local n = 1
  for _, d in ipairs(shape) do n = n * d end
  if n == 0 then return cu.zeros(shape, dtype) end
  local flat = {}
  for i = 1, n do flat[i] = value(dtype) end
  return cu.array(nest(flat, shape), dtype)
end

local cases, checks = {}, {}
-- A numpy expression on inputs `ins` (name -> culua array) whose result `got()` must equal.
local function expect(what, expr, ins, got, opts)
  local inputs = {}
  for name, a in pairs(ins) do inputs[name] = NP.describe(a) end
  cases[#cases + 1] = { expr = expr, inputs = inputs }
  checks[#checks + 1] = { what = what, got = got, opts = opts }
end

local DESC_SORT = "np.flip(np.sort(np.flip(a, %d), axis=%d, kind='stable'), %d)"
local DESC_ARGSORT = "a.shape[%d] - np.flip(np.argsort(np.flip(a, %d), axis=%d, kind='stable'), %d)"

-- sort / argsort
local shapes = { { 1 }, { 7 }, { 4, 6 }, { 3, 1, 5 }, { 0 }, { 2, 0, 3 }, { 300 } }
for _, dtype in ipairs(DTYPES) do
  for _, shape in ipairs(shapes) do
    local a = random_array(dtype, shape)
    for ax = 1, #shape do
      local k = ax - 1
      local what = string.format("%s %s axis %d", dtype, table.concat(shape, "x"), ax)
      expect(what .. " sort", string.format("np.sort(a, axis=%d, kind='stable')", k), { a = a },
        function() return cu.sort(a, { axis = ax }) end)
      expect(what .. " argsort", string.format("np.argsort(a, axis=%d, kind='stable') + 1", k),
        { a = a }, function() return cu.argsort(a, { axis = ax }) end)
      expect(what .. " sort descending", string.format(DESC_SORT, k, k, k), { a = a },
        function() return cu.sort(a, { axis = ax, descending = true }) end)
      expect(what .. " argsort descending", string.format(DESC_ARGSORT, k, k, k, k), { a = a },
        function() return cu.argsort(a, { axis = ax - #shape - 1, descending = true }) end)
    end
  end
end

-- non-contiguous views and long rows with many equal keys (stability)
for _, dtype in ipairs({ "f32", "i32", "f64", "i64", "f16", "u8" }) do
  local m = random_array(dtype, { 6, 8 })
  local t = m:transpose(1, 2)
  expect(dtype .. " transposed sort", "np.sort(a, axis=-1, kind='stable')", { a = t },
    function() return cu.sort(t) end)
  expect(dtype .. " transposed argsort", "np.argsort(a, axis=0, kind='stable') + 1", { a = t },
    function() return t:argsort({ axis = 1 }) end)
  local v = m:narrow(2, 2, 5)
  expect(dtype .. " narrowed argsort", "np.argsort(a, axis=-1, kind='stable') + 1", { a = v },
    function() return cu.argsort(v) end)
  local long = random_array(dtype, { 30000 })
  expect(dtype .. " long argsort", "np.argsort(a, kind='stable') + 1", { a = long },
    function() return cu.argsort(long) end)
  expect(dtype .. " long sort", "np.sort(a, kind='stable')", { a = long },
    function() return long:sort() end)
  expect(dtype .. " long argsort descending", string.format(DESC_ARGSORT, 0, 0, 0, 0), { a = long },
    function() return cu.argsort(long, { descending = true }) end)
  local rows = random_array(dtype, { 500, 37 })
  expect(dtype .. " many rows argsort", "np.argsort(a, axis=1, kind='stable') + 1", { a = rows },
    function() return cu.argsort(rows) end)
end

-- nonzero, count_nonzero
for _, dtype in ipairs(DTYPES) do
  for _, shape in ipairs({ { 9 }, { 3, 4 }, { 2, 3, 2 }, { 0, 3 } }) do
    local a = random_array(dtype, shape)
    local what = string.format("%s %s", dtype, table.concat(shape, "x"))
    for d = 1, #shape do
      expect(what .. " nonzero dim " .. d, string.format("np.nonzero(a)[%d] + 1", d - 1), { a = a },
        function() return cu.nonzero(a)[d] end)
    end
    expect(what .. " count_nonzero", "np.array(np.count_nonzero(a), dtype=np.int64)", { a = a },
      function() return cu.count_nonzero(a) end)
    for ax = 1, #shape do
      expect(what .. " count_nonzero axis " .. ax,
        string.format("np.count_nonzero(a, axis=%d).astype(np.int64)", ax - 1), { a = a },
        function() return cu.count_nonzero(a, { axis = ax }) end)
    end
  end
end
local c3 = random_array("f32", { 3, 4, 5 })
expect("count_nonzero axes 1,3 keepdims",
  "np.count_nonzero(a, axis=(0, 2), keepdims=True).astype(np.int64)", { a = c3 },
  function() return cu.count_nonzero(c3, { axis = { 1, 3 }, keepdims = true }) end)
local nzt = random_array("i16", { 4, 5 }):transpose(1, 2)
expect("nonzero of a transposed view", "np.nonzero(a)[1] + 1", { a = nzt },
  function() return cu.nonzero(nzt)[2] end)

-- searchsorted: x1 sorted by numpy's order, values of another dtype too
for _, pair in ipairs({ { "f32", "f32" }, { "f64", "f32" }, { "i32", "f64" }, { "i8", "i64" },
  { "u8", "i8" }, { "f16", "f16" }, { "i64", "i64" }, { "c64", "c64" }, { "bool", "bool" } }) do
  local x1 = cu.sort(random_array(pair[1], { 40 }))
  local v = random_array(pair[2], { 3, 7 })
  for _, side in ipairs({ "left", "right" }) do
    local what = string.format("searchsorted %s/%s %s", pair[1], pair[2], side)
    expect(what, string.format("np.searchsorted(a, v, side='%s') + 1", side), { a = x1, v = v },
      function() return cu.searchsorted(x1, v, { side = side }) end)
  end
  local u = random_array(pair[1], { 25 })
  local order = cu.argsort(u)
  local w = random_array(pair[1], { 10 })
  expect("searchsorted sorter " .. pair[1],
    "np.searchsorted(a, v, sorter=np.argsort(a, kind='stable')) + 1", { a = u, v = w },
    function() return cu.searchsorted(u, w, { sorter = order }) end)
end
local big = cu.sort(random_array("f32", { 5000 }))
local probes = random_array("f32", { 2000 })
expect("searchsorted long", "np.searchsorted(a, v) + 1", { a = big, v = probes },
  function() return cu.searchsorted(big, probes) end)

-- unique_*: np.unique with equal_nan=False; the values' zero sign is that of the first occurrence
for _, dtype in ipairs(DTYPES) do
  for _, shape in ipairs({ { 30 }, { 4, 5 }, { 0 }, {} }) do
    local a = random_array(dtype, shape)
    local what = string.format("%s %s unique", dtype, table.concat(shape, "x"))
    local U = "np.unique(a, return_index=True, return_inverse=True, return_counts=True, " ..
        "equal_nan=False)"
    expect(what .. " values", U .. "[0]", { a = a }, function() return cu.unique_values(a) end,
      { signed_zero = false })
    expect(what .. " indices", U .. "[1] + 1", { a = a }, function() return cu.unique_all(a).indices end)
    expect(what .. " inverse", "(" .. U .. "[2] + 1).reshape(a.shape)", { a = a },
      function() return cu.unique_inverse(a).inverse_indices end)
    expect(what .. " counts", U .. "[3]", { a = a }, function() return cu.unique_counts(a).counts end)
  end
end
local ut = random_array("f64", { 5, 6 }):transpose(1, 2)
expect("unique of a transposed view", "np.unique(a, return_index=True, equal_nan=False)[1] + 1",
  { a = ut }, function() return cu.unique_all(ut).indices end)
local ubig = random_array("i32", { 50000 })
expect("unique counts, long", "np.unique(a, return_counts=True)[1]", { a = ubig },
  function() return cu.unique_counts(ubig).counts end)

local refs = NP.run(cases)
local failures = 0
for i, c in ipairs(checks) do
  local ok, why = NP.same(c.got(), refs[i], c.opts)
  if not ok then
    failures = failures + 1
    print("FAIL " .. c.what .. ": " .. why .. "\n  numpy: " .. cases[i].expr)
  end
end
print(string.format("%d of %d comparisons with numpy agree", #checks - failures, #checks))
if failures > 0 then os.exit(1) end
