-- The statistical functions and scans of the Array API against numpy (python3-numpy, tests/numpy/npref):
-- every reduction (sum, mean, max, min, prod, var, std, any, all, argmax, argmin and the nan*
-- ones) and scan (cumsum, cumprod, cumulative_sum) over every dtype, single, negative and several
-- axes, keepdims, dtype=, correction=, NaN/inf/-0.0, empty and 0-d arrays, and non-contiguous
-- views. Exits 77 (skipped) without python3 + numpy. Usage: culua test_stats_numpy.lua
--
-- Tolerances: integer and bool results, max/min/argmax/argmin/any/all and NaN positions are exact.
-- Floating results are compared with an absolute tolerance scaled by the number of elements n
-- reduced and the largest magnitude of the inputs (culua's accumulation order differs from
-- numpy's: the GPU's is a tree, the host's pairwise leaves differ for axis reductions, var/std
-- merge Welford moments where numpy makes two passes, and f16 var/std/cumsum accumulate in f32
-- where numpy rounds every step to f16): eps(acc) * 8 * (n + 1) * scale, with eps 1e-13 for
-- f64/c128, 2e-6 for f32/c64, 4e-3 for f16 and 2e-2 for bf16 (numpy computes bf16 inputs in f32).
--
-- Sums, products and scans of unsigned integers give u64 in both (numpy on Linux), of bool and
-- signed integers i64; their dtypes are compared too.
-- Set CULUA_TEST_SEED to replay a run.
package.path = (arg and arg[0] and arg[0]:match("^(.*)[/\\]") or "tests/numpy") .. "/?.lua;" ..
    (arg and arg[0] and arg[0]:match("^(.*)[/\\]") or "tests/numpy") .. "/../lua/?.lua;" .. package.path
local T = require "cu.testing"
local NP = require "npref"
NP.require()

local SEED = tonumber(os.getenv("CULUA_TEST_SEED")) or (os.time() ~ math.floor(os.clock() * 1e6))
math.randomseed(SEED)
print("seed: " .. SEED .. " (CULUA_TEST_SEED=" .. SEED .. " replays this run)")

local NAN, INF = 0 / 0, math.huge
local DTYPES = { "bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "bf16", "f32",
  "f64", "c64", "c128" }
local FLOAT = { f16 = true, bf16 = true, f32 = true, f64 = true }
local COMPLEX = { c64 = true, c128 = true }
local EPS = { f64 = 1e-13, c128 = 1e-13, f32 = 2e-6, c64 = 2e-6, f16 = 4e-3, bf16 = 2e-2 }
local UNSIGNED = { u8 = true, u16 = true, u32 = true, u64 = true }

-- Random values for an op: near 1 for products (no overflow), small integers, [-2, 2] floats.
local function value(dtype, op)
  if dtype == "bool" then return math.random() < 0.6 end
  local prod = op == "prod" or op == "nanprod" or op == "cumprod"
  if dtype:sub(1, 1) == "i" or dtype:sub(1, 1) == "u" then
    local lo, hi = -5, 5
    if prod then lo, hi = -2, 2 end
    if UNSIGNED[dtype] then lo = 0 end
    return math.random(lo, hi)
  end
  local function real()
    if prod then return 0.8 + 0.45 * math.random() end
    return math.floor((math.random() * 4 - 2) * 256) / 256 -- exact in every float dtype
  end
  if COMPLEX[dtype] then
    if prod then return cu.complex(real(), 0.05 * (math.random() - 0.5)) end -- |z| near 1
    return cu.complex(real(), real())
  end
  return real()
end

local function make(shape, dtype, op, specials)
  local n = 1
  for _, s in ipairs(shape) do n = n * s end
  local flat = {}
  for i = 1, n do
    flat[i] = value(dtype, op)
    if specials and FLOAT[dtype] and math.random() < 0.25 then
      flat[i] = ({ NAN, INF, -INF, -0.0, 0.0 })[math.random(5)]
    elseif specials and COMPLEX[dtype] and math.random() < 0.2 then
      flat[i] = ({ cu.complex(NAN, 1), cu.complex(1, INF), cu.complex(-0.0, 0) })[math.random(3)]
    end
  end
  local a = cu.array(flat, dtype)
  if #shape ~= 1 then a = a:reshape(shape) end
  return a
end

-- A non-contiguous view with the given shape: a transposed, narrowed parent.
local function view(shape, dtype, op, specials)
  if #shape < 2 then
    return make({ shape[1], 2 }, dtype, op, specials):transpose(1, 2)[1] -- a stride of 2
  end
  local rev = {}
  for i = 1, #shape do rev[i] = shape[#shape + 1 - i] end
  rev[1] = rev[1] + 1
  local parent = make(rev, dtype, op, specials):narrow(1, 2, rev[1] - 1)
  -- reverse the dimensions by transposes
  for i = 1, #shape // 2 do parent = parent:transpose(i, #shape + 1 - i) end
  return parent
end

-- Python's spelling of a Lua axis option.
local function py_axis(axis)
  if axis == nil then return "None" end
  if type(axis) == "number" then return tostring(axis > 0 and axis - 1 or axis) end
  local parts = {}
  for i, a in ipairs(axis) do parts[i] = tostring(a > 0 and a - 1 or a) end
  return "(" .. table.concat(parts, ", ") .. (#parts == 1 and ",)" or ")")
end

local function reduced_count(shape, axis)
  if axis == nil then
    local n = 1
    for _, s in ipairs(shape) do n = n * s end
    return n
  end
  local axes = type(axis) == "number" and { axis } or axis
  local n = 1
  for _, a in ipairs(axes) do
    n = n * shape[a > 0 and a or #shape + 1 + a]
  end
  return n
end

local REDUCTIONS = { "sum", "mean", "max", "min", "prod", "var", "std", "any", "all", "argmax",
  "argmin", "nansum", "nanmean", "nanmax", "nanmin", "nanprod", "nanvar", "nanstd" }
local ORDERED = { max = true, min = true, argmax = true, argmin = true, nanmax = true, nanmin = true }
local EXACT = { max = true, min = true, argmax = true, argmin = true, any = true, all = true,
  nanmax = true, nanmin = true }
local ONE_AXIS = { argmax = true, argmin = true }

local cases, checks = {}, {}

local function add(expr, inputs, got, opts)
  cases[#cases + 1] = { expr = expr, inputs = inputs }
  checks[#checks + 1] = { got = got, opts = opts }
end

local function tolerance(op, dtype, n)
  local stat = op:find("mean") or op:find("var") or op:find("std")
  if not (FLOAT[dtype] or COMPLEX[dtype]) and stat then
    dtype = "f64"
  end
  local eps = EPS[dtype]
  if not eps or EXACT[op] then return { rtol = 0, atol = 0, signed_zero = false } end
  local scale = (op:find("var") or op:find("std")) and 4 or 2
  if op:find("prod") then scale = 1 end
  local tol = eps * 8 * (n + 1) * scale
  if op:find("std") then tol = math.sqrt(tol) * 4 end -- sqrt near 0 amplifies
  return { rtol = eps * 8 * (n + 1), atol = tol, signed_zero = false }
end

local function reduction_case(op, a, dtype, axis, keepdims, extra)
  local shape = a.shape
  local n = reduced_count(shape, axis)
  local opts = { axis = axis, keepdims = keepdims or nil }
  local npargs = "a, axis=" .. py_axis(axis) .. (keepdims and ", keepdims=True" or "")
  if extra and extra.correction then
    opts.correction = extra.correction
    npargs = npargs .. ", ddof=" .. extra.correction
  end
  if extra and extra.dtype then
    opts.dtype = extra.dtype
    npargs = npargs .. ", dtype=np." .. ({ i8 = "int8", i16 = "int16", i32 = "int32", i64 = "int64",
      f32 = "float32", f64 = "float64", c128 = "complex128", f16 = "float16", u8 = "uint8",
      u16 = "uint16", u64 = "uint64" })[extra.dtype]
  end
  local ok, got = pcall(cu[op], a, opts)
  local expr = "np." .. op .. "(" .. npargs .. ")"
  if op == "argmax" or op == "argmin" then expr = expr .. " + 1" end
  local o = tolerance(op, (extra and extra.dtype) or dtype, n)
  if dtype == "bf16" then o.dtype = false end
  add(expr, { a = NP.describe(a) }, ok and got or { error = got }, o)
  o.what = string.format("cu.%s(%s %s%s, %s)", op, dtype, a.is_contiguous and "" or "view ",
    table.concat(shape, "x"), cu.json.encode(opts))
end

local SHAPES = {
  { { 7 }, { 1, -1 } },
  { { 5, 6 }, { 1, 2, -1, { 1, 2 } } },
  { { 3, 4, 5 }, { 2, -3, { 1, 3 }, { 3, -2 }, { -1, 1, 2 } } },
  { { 2, 3, 2, 4 }, { { 2, 4 }, { 1, 3 }, 4 } },
  { { 300 }, { 1 } },
  { { 40, 70 }, { 1, 2 } },
}

for _, dtype in ipairs(DTYPES) do
  for _, op in ipairs(REDUCTIONS) do
    local defined = not (COMPLEX[dtype] and ORDERED[op])
    if defined then
      for si, sh in ipairs(SHAPES) do
        local shape, axes = sh[1], sh[2]
        local make_input = (si % 2 == 0) and view or make
        local a = make_input(shape, dtype, op, false)
        reduction_case(op, a, dtype, nil, false)
        for ai, axis in ipairs(axes) do
          if not (ONE_AXIS[op] and type(axis) == "table") then
            reduction_case(op, a, dtype, axis, ai % 2 == 1)
          end
        end
      end
      -- NaN, inf, -0.0 (floating types)
      -- (complex: not prod/mean, whose inf/NaN parts depend on numpy's complex multiplication
      -- and division by a complex count)
      if FLOAT[dtype] or (COMPLEX[dtype] and not op:find("prod") and not op:find("mean")) then
        for _ = 1, 3 do
          local a = make({ 4, 9 }, dtype, op, true)
          reduction_case(op, a, dtype, nil, false)
          reduction_case(op, a, dtype, 2, false)
          reduction_case(op, a, dtype, { 1 }, true)
        end
      end
      -- 0-d
      reduction_case(op, make({ 1 }, dtype, op):reshape({}), dtype, nil, false)
      -- empty: defined for sum/mean/prod/var/std/any/all and nan* but max/min (numpy raises)
      reduction_case(op, cu.zeros({ 0 }, dtype), dtype, nil, false)
      reduction_case(op, cu.zeros({ 0, 3 }, dtype), dtype, 2, false)
      if not ONE_AXIS[op] then reduction_case(op, cu.zeros({ 2, 0, 3 }, dtype), dtype, { 1, 3 }, true) end
    end
  end
  -- correction= and dtype=
  for _, c in ipairs({ 0, 1, 2.5, 7 }) do
    for _, op in ipairs({ "var", "std", "nanvar", "nanstd" }) do
      reduction_case(op, make({ 7, 5 }, dtype, op, dtype ~= "bool"), dtype, 1, false, { correction = c })
    end
  end
  if dtype ~= "bool" then
    -- (u16/u64 targets for unsigned inputs only: numpy's cast of a negative float to an unsigned
    -- type is undefined in C)
    local targets = UNSIGNED[dtype] and { "i8", "i64", "u16", "u64", "f32", "f64", "c128" }
        or { "i8", "i64", "f32", "f64", "c128" }
    for _, d in ipairs(targets) do
      if not (COMPLEX[dtype] and not COMPLEX[d]) then -- numpy: complex -> real casts warn/discard
        for _, op in ipairs({ "sum", "prod" }) do
          reduction_case(op, make({ 6, 5 }, dtype, op), dtype, 2, false, { dtype = d })
          reduction_case(op, make({ 30 }, dtype, op), dtype, nil, false, { dtype = d })
        end
      end
    end
  end

  -- scans
  for _, op in ipairs({ "cumsum", "cumprod" }) do
    local scan_shapes = { { { 9 }, { nil, 1, -1 } }, { { 4, 6 }, { nil, 1, 2, -1 } },
      { { 3, 4, 5 }, { 1, 2, 3 } }, { { 2000 }, { 1 } } }
    for si, sh in ipairs(scan_shapes) do
      local shape, axes = sh[1], sh[2]
      -- (f16 products of 2000 elements: numpy's f16 steps overflow where culua's f32 do not)
      if dtype == "f16" and op == "cumprod" and shape[1] == 2000 then shape = { 100 } end
      for k = 1, math.max(#axes, 1) do
        local axis = axes[k]
        local a = ((si + k) % 2 == 0 and view or make)(shape, dtype, op, si == 2 and k == 2)
        local n = reduced_count(shape, axis) -- the longest prefix
        local ok, got = pcall(cu[op], a, { axis = axis })
        local o = tolerance(op:sub(4), dtype, n)
        if dtype == "bf16" then o.dtype = false end
        if dtype == "f16" then o = { rtol = 1e-2, atol = 1e-2 * n, signed_zero = false } end
        add("np." .. op .. "(a, axis=" .. py_axis(axis) .. ")", { a = NP.describe(a) },
          ok and got or { error = got }, o)
        o.what = string.format("cu.%s(%s %s, axis=%s)", op, dtype, table.concat(shape, "x"),
          tostring(axis))
      end
    end
    -- include_initial (numpy 1.24 has no such flag: the identity concatenated in front)
    local a = make({ 3, 5 }, dtype, op)
    local got = cu["cumulative_" .. op:sub(4)](a, { axis = 2, include_initial = true })
    local ident = op == "cumsum" and "0" or "1"
    local o = tolerance(op:sub(4), dtype, 5)
    if dtype == "bf16" then o.dtype = false end
    if dtype == "f16" then o = { rtol = 1e-2, atol = 5e-2, signed_zero = false } end
    o.what = "cumulative include_initial " .. dtype .. " " .. op
    add("np.concatenate([np.full((3, 1), " .. ident .. ", dtype=np." .. op ..
      "(a, axis=1).dtype), np." .. op .. "(a, axis=1)], axis=1)", { a = NP.describe(a) }, got, o)
    -- 0-d and empty
    local z = make({ 1 }, dtype, op):reshape({})
    local same_dtype = dtype ~= "bf16"
    add("np." .. op .. "(a)", { a = NP.describe(z) }, cu[op](z),
      { dtype = same_dtype, what = op .. " 0-d " .. dtype })
    local e = cu.zeros({ 0, 4 }, dtype)
    add("np." .. op .. "(a, axis=0)", { a = NP.describe(e) }, cu[op](e, { axis = 1 }),
      { dtype = same_dtype, what = op .. " empty " .. dtype })
  end
end

-- Exact: (1) host sums of f16/f32/f64 of 1 to 40 and a few longer lengths up to 8192
-- are numpy's bits: numpy's pairwise_sum adds the n % 8 elements after the last multiple of 8 one
-- after another after the tree of eight partials (fewer than 8: one after another); culua's host
-- put them into the partials (sums of 4 to 7 f32 differed). The GPU's order is a tree. (Complex
-- sums follow the real layout; numpy's has four complex partials: exact up to 3 elements.)
-- (2) Complex means with a NaN or infinite part: numpy divides the sum by n + 0i as a complex
-- division, so the other part becomes NaN (inf * 0): mean({nan+1i, 1+1i}) is NaN + NaN i, not
-- NaN + 1i. Finite complex means are numpy's bits too (c64 along an axis: numpy 1.x divides in f32,
-- culua in f64 as numpy's full mean: within an ulp).
if cu.backend == "host" then
  local function wide() return (math.random() * 2 - 1) * 10.0 ^ math.random(-3, 3) end
  local lengths = {}
  for n = 1, 40 do lengths[#lengths + 1] = n end
  for _, n in ipairs({ 127, 129, 131, 1001, 8191 }) do lengths[#lengths + 1] = n end
  for _, dtype in ipairs({ "f16", "f32", "f64" }) do
    for _, n in ipairs(lengths) do
      local v = {}
      for i = 1, n do v[i] = wide() end
      local a = cu.array(v, dtype)
      for _, op in ipairs({ "sum", "mean" }) do
        local o = { what = string.format("exact host %s of %d %s", op, n, dtype) }
        if not (op == "mean" and dtype == "f16") then -- (numpy's f16 mean sums in f32 by buffer)
          add("np." .. op .. "(a)", { a = NP.describe(a) }, cu[op](a), o)
        end
      end
      -- strided (the host's path for views): a column of an {n, 2} matrix
      if n <= 40 then
        local col = a:reshape({ n, 1 })
        local b = cu.concat({ col, col }, { axis = 2 }):narrow(2, 1, 1)
        add("np.sum(a)", { a = NP.describe(b) }, cu.sum(b),
          { what = string.format("exact host sum of %d %s, strided", n, dtype) })
      end
    end
  end
  for _, dtype in ipairs({ "c64", "c128" }) do
    for n = 1, 3 do
      local v = {}
      for i = 1, n do v[i] = cu.complex(wide(), wide()) end
      local a = cu.array(v, dtype)
      add("np.sum(a)", { a = NP.describe(a) }, cu.sum(a), { what = "exact host complex sum " .. n })
      add("np.mean(a)", { a = NP.describe(a) }, cu.mean(a), { what = "exact host complex mean " .. n })
    end
  end
end
local C = cu.complex
for _, dtype in ipairs({ "c64", "c128" }) do
  for _, v in ipairs({ { C(NAN, 1), C(1, 1) }, { C(INF, 1), C(1, 1) }, { C(1, INF), C(1, 0) },
    { C(1, NAN), C(2, 3) }, { C(-INF, 0), C(1, 0), C(2, 2) } }) do
    local a = cu.array(v, dtype)
    local what = "complex mean of " .. dtype .. " " .. tostring(v[1]) .. " ..."
    add("np.mean(a)", { a = NP.describe(a) }, cu.mean(a), { what = what })
    local o = dtype == "c64" and { rtol = 2.0 ^ -23, what = what .. " (axis)" } or { what = what .. " (axis)" }
    local m = cu.concat({ a:reshape({ 1, #v }), a:reshape({ 1, #v }) }, { axis = 1 })
    add("np.mean(a, axis=1)", { a = NP.describe(m) }, cu.mean(m, { axis = 2 }), o)
    add("np.nanmean(a)", { a = NP.describe(a) }, cu.nanmean(a), { what = "nan" .. what })
  end
end

-- Both sides run; compare.
local refs = NP.run(cases)
local failures, compared, errors_agree = 0, 0, 0
for i, c in ipairs(checks) do
  local ref, got, o = refs[i], c.got, c.opts
  local what = o.what or cases[i].expr
  if type(got) == "table" and got.error then
    if ref.error then
      errors_agree = errors_agree + 1
    else
      failures = failures + 1
      print(string.format("FAIL %s: culua raised %s; numpy gave a result (%s)", what,
        tostring(got.error), cases[i].expr))
    end
  elseif ref.error then
    failures = failures + 1
    print(string.format("FAIL %s: numpy raised %s; culua gave a result", what, ref.error))
  else
    local ok, why = NP.same(got, ref, o)
    compared = compared + 1
    if not ok then
      failures = failures + 1
      print(string.format("FAIL %s: %s (%s)", what, why, cases[i].expr))
    end
  end
  if failures > 40 then break end
end
print(string.format("%d results compared with numpy, %d errors raised by both, %d failures", compared,
  errors_agree, failures))
T.case("statistics and scans agree with numpy", function()
  T.eq(failures, 0, "failures (see above)")
  T.truthy(compared > 2000, "enough comparisons")
end)
os.exit(T.run())
