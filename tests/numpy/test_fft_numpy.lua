-- cu.fft against numpy.fft itself (python3-numpy), and the data-type functions (can_cast,
-- result_type, finfo, iinfo) against numpy's: every transform over sizes from 1 to large primes,
-- axes, n, s, the three norm modes, every input dtype and non-contiguous views. numpy 1.24
-- computes every transform in double precision and returns c128/f64; culua returns c64/f32 for
-- f32-precision input (numpy 2's rule), so values are compared with a tolerance relative to the
-- transform's largest magnitude and the dtypes against that rule. Exits 77 (skipped) without
-- python3 and numpy. Usage: culua --backend host test_fft_numpy.lua
package.path = (arg and arg[0] and arg[0]:match("^(.*)[/\\]") or "tests/numpy") .. "/?.lua;"
  .. (arg and arg[0] and arg[0]:match("^(.*)[/\\]") or "tests/numpy") .. "/../lua/?.lua;" .. package.path
local T = require "cu.testing"
local NP = require "npref"

NP.require()
math.randomseed(25)

local fft = cu.fft

-- A random array of `dtype` and `shape` (values in [-1, 1); integers in [-50, 50]).
local function random(shape, dtype)
  local n = 1
  for _, d in ipairs(shape) do n = n * d end
  local flat = {}
  for i = 1, n do
    if dtype == "c64" or dtype == "c128" then
      flat[i] = cu.complex(2 * math.random() - 1, 2 * math.random() - 1)
    elseif dtype:match("^[iu]") then
      flat[i] = math.random(dtype:match("^u") and 0 or -50, 50)
    elseif dtype == "bool" then
      flat[i] = math.random() < 0.5
    else
      flat[i] = 2 * math.random() - 1
    end
  end
  if n == 0 then return cu.zeros(shape, dtype) end
  local function nest(lo, dim)
    if dim > #shape then return flat[lo] end
    local stride = 1
    for d = dim + 1, #shape do stride = stride * shape[d] end
    local t = {}
    for i = 1, shape[dim] do t[i] = nest(lo + (i - 1) * stride, dim + 1) end
    return t
  end
  if #shape == 0 then return cu.full({}, flat[1], dtype) end
  return cu.array(nest(1, 1), dtype)
end

-- The precision of a transform of `dtype`, and the dtype culua must return.
local SINGLE = { f16 = true, bf16 = true, f32 = true, c64 = true }
local function result_dtype(dtype, real_output)
  if SINGLE[dtype] then return real_output and "f32" or "c64" end
  return real_output and "f64" or "c128"
end

local cases, checks = {}, {}

-- One comparison: culua's `got` against numpy's `expr` on the inputs.
local function add(what, got, expr, inputs, opts)
  cases[#cases + 1] = { expr = expr, inputs = inputs }
  checks[#checks + 1] = { what = what, got = got, opts = opts or {} }
end

local function py_norm(norm) return norm and string.format(", norm=%q", norm) or "" end
local function lua_opts(t)
  local o = {}
  for k, v in pairs(t) do o[k] = v end
  return o
end

-- 1-D transforms over sizes, dtypes, norms and n.
local SIZES = { 1, 2, 3, 4, 5, 7, 8, 12, 16, 17, 30, 64, 97, 100, 243, 1000, 1009, 4099 }
local FUNCS = {
  { name = "fft", complex_ok = true }, { name = "ifft", complex_ok = true },
  { name = "rfft", real_only = true }, { name = "irfft", complex_ok = true, real_output = true },
  { name = "hfft", complex_ok = true, real_output = true }, { name = "ihfft", real_only = true },
}
for _, f in ipairs(FUNCS) do
  for si, n in ipairs(SIZES) do
    for _, dtype in ipairs({ "f64", "f32", "c128", "c64" }) do
      if not (f.real_only and dtype:match("^c")) then
        local norm = ({ nil, "ortho", "forward", "backward" })[(si + #dtype) % 4 + 1]
        local x = random({ n }, dtype)
        local default_bad = f.real_output and n == 1 -- 2 * (1 - 1) points
        if not default_bad then
          add(string.format("%s n=%d %s %s", f.name, n, dtype, norm or "default"),
            fft[f.name](x, lua_opts({ norm = norm })),
            string.format("np.fft.%s(x%s)", f.name, py_norm(norm)), { x = NP.describe(x) },
            { dtype = result_dtype(dtype, f.real_output), n = n })
        end
        -- n smaller and larger than the axis (crop and zero-pad)
        for _, m in ipairs({ math.max(1, n // 2), n + 3 }) do
          add(string.format("%s len %d n=%d %s", f.name, n, m, dtype), fft[f.name](x, { n = m, norm = norm }),
            string.format("np.fft.%s(x, n=%d%s)", f.name, m, py_norm(norm)), { x = NP.describe(x) },
            { dtype = result_dtype(dtype, f.real_output), n = m })
        end
      end
    end
  end
end

-- Every input dtype (integers and bools compute in f64, f16/bf16 in f32).
for _, dtype in ipairs({ "f16", "bf16", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "bool" }) do
  local x = random({ 3, 10 }, dtype)
  local desc = NP.describe(x)
  for _, f in ipairs(FUNCS) do
    add(string.format("%s of %s", f.name, dtype), fft[f.name](x), string.format("np.fft.%s(x)", f.name),
      { x = desc }, { dtype = result_dtype(dtype, f.real_output), n = 10, half = dtype == "f16" })
  end
  add("fftn of " .. dtype, fft.fftn(x), "np.fft.fftn(x)", { x = desc },
    { dtype = result_dtype(dtype), n = 30, half = dtype == "f16" })
end

-- Axes of 2-D and 3-D arrays, contiguous or not.
for _, dtype in ipairs({ "f64", "f32", "c128", "c64" }) do
  local base = random({ 6, 5, 4 }, dtype)
  local views = {
    { "contiguous", base },
    { "transposed", base:transpose(1, 3) },
    { "narrowed", base:narrow(2, 2, 3) },
    { "a row of a transposed view", base:transpose(2, 3)[2] },
  }
  for _, v in ipairs(views) do
    local x = v[2]
    local desc = NP.describe(x)
    for lua_axis = -x.ndim, x.ndim do
      if lua_axis ~= 0 then
        local py = lua_axis > 0 and lua_axis - 1 or lua_axis
        for _, f in ipairs(FUNCS) do
          if not (f.real_only and dtype:match("^c")) then
            add(string.format("%s %s %s axis %d", f.name, dtype, v[1], lua_axis), fft[f.name](x, { axis = lua_axis }),
              string.format("np.fft.%s(x, axis=%d)", f.name, py), { x = desc },
              { dtype = result_dtype(dtype, f.real_output), n = x.shape[py >= 0 and py + 1 or x.ndim + py + 1] })
          end
        end
      end
    end
    -- n-D transforms: all axes, chosen axes, s
    local nd = {
      { "fftn", {}, "" }, { "ifftn", {}, "" },
      { "fftn", { axes = { 1, -1 } }, "axes=(0, -1)" },
      { "ifftn", { axes = { 2 } }, "axes=(1,)" },
      { "fftn", { s = { 3, 7 } }, "s=(3, 7)" },
      { "fftn", { s = { 2, 4 }, axes = { 3, 1 } }, "s=(2, 4), axes=(2, 0)" },
      { "fft2", {}, "" }, { "ifft2", { norm = "ortho" }, "norm='ortho'" },
      { "fft2", { axes = { 1, 3 }, norm = "forward" }, "axes=(0, 2), norm='forward'" },
      { "irfftn", {}, "", true }, { "irfftn", { s = { 4, 6 } }, "s=(4, 6)", true },
      { "irfft2", { axes = { 1, 2 } }, "axes=(0, 1)", true },
      { "irfftn", { s = { 5, 5 }, axes = { 1, 3 }, norm = "forward" }, "s=(5, 5), axes=(0, 2), norm='forward'", true },
    }
    if not dtype:match("^c") then
      nd[#nd + 1] = { "rfftn", {}, "" }
      nd[#nd + 1] = { "rfftn", { axes = { 3, 1 } }, "axes=(2, 0)" }
      nd[#nd + 1] = { "rfftn", { s = { 4, 3 }, norm = "ortho" }, "s=(4, 3), norm='ortho'" }
      nd[#nd + 1] = { "rfft2", {}, "" }
    end
    for _, c in ipairs(nd) do
      if x.ndim >= 2 or not (c[1]:match("2$") or c[2].s and #c[2].s > x.ndim) then
        local ok = true
        for _, a in ipairs(c[2].axes or {}) do if a > x.ndim then ok = false end end
        if c[2].s and #c[2].s > x.ndim then ok = false end
        if ok then
          add(string.format("%s %s %s %s", c[1], dtype, v[1], c[3]), fft[c[1]](x, c[2]),
            string.format("np.fft.%s(x%s)", c[1], c[3] == "" and "" or ", " .. c[3]), { x = desc },
            { dtype = result_dtype(dtype, c[4]), n = x.size })
        end
      end
    end
  end
end

-- Shifts and frequencies.
for _, shape in ipairs({ { 7 }, { 8 }, { 3, 4 }, { 5, 2, 3 } }) do
  local x = random(shape, "f64")
  local desc = NP.describe(x)
  add("fftshift " .. #shape .. "-d", fft.fftshift(x), "np.fft.fftshift(x)", { x = desc }, { exact = true })
  add("ifftshift " .. #shape .. "-d", fft.ifftshift(x), "np.fft.ifftshift(x)", { x = desc }, { exact = true })
  add("fftshift axis -1 " .. #shape .. "-d", fft.fftshift(x, { axes = -1 }), "np.fft.fftshift(x, axes=-1)",
    { x = desc }, { exact = true })
  if #shape > 1 then
    add("ifftshift axes 1,2", fft.ifftshift(x, { axes = { 1, 2 } }), "np.fft.ifftshift(x, axes=(0, 1))",
      { x = desc }, { exact = true })
  end
end
for _, n in ipairs({ 1, 2, 5, 8, 101 }) do
  for _, d in ipairs({ 1, 0.1, 3 }) do
    add(string.format("fftfreq(%d, %g)", n, d), fft.fftfreq(n, d), string.format("np.fft.fftfreq(%d, %.17g)", n, d),
      {}, { exact = true })
    add(string.format("rfftfreq(%d, %g)", n, d), fft.rfftfreq(n, d), string.format("np.fft.rfftfreq(%d, %.17g)", n, d),
      {}, { exact = true })
  end
end

-- The data-type functions against numpy's (bf16 has no numpy dtype: tests/lua covers it).
local DT = { "bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "f32", "f64", "c64",
  "c128" }
local dtype_checks = {}
local function add_dtype(what, mine, expr, inputs)
  cases[#cases + 1] = { expr = expr, inputs = inputs }
  checks[#checks + 1] = { what = what, dtype_value = mine }
  dtype_checks[#dtype_checks + 1] = true
end
for _, a in ipairs(DT) do
  local xa = NP.describe(cu.zeros({ 1 }, a))
  for _, b in ipairs(DT) do
    local xb = NP.describe(cu.zeros({ 2 }, b))
    add_dtype(string.format("result_type(%s, %s)", a, b), { dtype = cu.result_type(a, b) },
      "np.zeros(0, np.result_type(a, b))", { a = xa, b = xb })
    add_dtype(string.format("result_type of arrays %s, %s", a, b),
      { dtype = cu.result_type(cu.zeros({ 1 }, a), cu.zeros({ 2 }, b)) },
      "np.zeros(0, np.result_type(a, b))", { a = xa, b = xb })
    add_dtype(string.format("can_cast(%s, %s)", a, b), { value = cu.can_cast(a, b) },
      "np.array(np.can_cast(a.dtype, b.dtype))", { a = xa, b = xb })
    add_dtype(string.format("can_cast(%s, %s, same_kind)", a, b),
      { value = cu.can_cast(a, b, { casting = "same_kind" }) },
      "np.array(np.can_cast(a.dtype, b.dtype, casting='same_kind'))", { a = xa, b = xb })
  end
  add_dtype("result_type(" .. a .. ", i8, f16)", { dtype = cu.result_type(a, "i8", cu.zeros({ 3 }, "f16")) },
    "np.zeros(0, np.result_type(a, np.int8, np.float16))", { a = xa })
  add_dtype("result_type(" .. a .. ", f32, i8)", { dtype = cu.result_type(a, "f32", cu.zeros({ 3 }, "i8")) },
    "np.zeros(0, np.result_type(a, np.float32, np.int8))", { a = xa })
  if a:match("^f") or a:match("^c") then
    local fi = cu.finfo(a)
    add_dtype("finfo " .. a, { values = { fi.bits, fi.eps, fi.max, fi.min, fi.smallest_normal }, dtype = fi.dtype },
      "(lambda f: np.array([f.bits, f.eps, f.max, f.min, f.smallest_normal], dtype=f.dtype))(np.finfo(a.dtype))",
      { a = xa })
  elseif a ~= "bool" then
    local ii = cu.iinfo(a)
    add_dtype("iinfo " .. a, { values = { ii.bits, ii.min, ii.max }, dtype = ii.dtype },
      "(lambda f: np.array([f.bits, f.min, f.max], dtype=a.dtype))(np.iinfo(a.dtype))",
      { a = xa })
  end
end

local refs = NP.run(cases)
local failures = 0
local function report(what, why)
  failures = failures + 1
  if failures <= 30 then print("FAIL " .. what .. ": " .. why) end
end

for i, c in ipairs(checks) do
  local ref = refs[i]
  if ref.error then
    report(c.what, "numpy raised " .. ref.error)
  elseif c.dtype_value then
    local mine = c.dtype_value
    if mine.dtype and not mine.values and mine.dtype ~= ref.dtype then
      report(c.what, string.format("%s, numpy %s", mine.dtype, ref.dtype))
    elseif mine.value ~= nil and mine.value ~= ref.values[1] then
      report(c.what, string.format("%s, numpy %s", tostring(mine.value), tostring(ref.values[1])))
    elseif mine.values then
      if mine.dtype ~= ref.dtype then
        report(c.what, string.format("dtype %s, numpy %s", mine.dtype, ref.dtype))
      end
      for k, v in ipairs(ref.values) do
        if mine.values[k] ~= v then
          report(c.what, string.format("field %d: %s, numpy %s", k, tostring(mine.values[k]), tostring(v)))
          break
        end
      end
    end
  else
    local o = c.opts
    if o.dtype and c.got.dtype ~= o.dtype then
      report(c.what, string.format("dtype %s, expected %s", c.got.dtype, o.dtype))
    else
      local atol = 0
      if not o.exact then
        -- error of an FFT: a few ulps of the precision per level, relative to the largest magnitude
        local biggest = 0
        for _, v in ipairs(ref.values) do
          local m = type(v) == "table" and math.sqrt(v[1] ^ 2 + v[2] ^ 2) or math.abs(v)
          if m > biggest then biggest = m end
        end
        local eps = (o.dtype == "c64" or o.dtype == "f32") and 2 ^ -23 or 2 ^ -52
        -- numpy 2 keeps f16 input's precision in the inverse transforms' scaling (its result
        -- rounds like f16); culua computes f16 input in f32 throughout, as numpy 1.24 did in f64
        if o.half then eps = 2 ^ -10 end
        atol = 8 * eps * math.max(1, math.log(o.n or 2, 2)) * math.max(biggest, 1e-300)
      end
      local same_opts = { rtol = 0, atol = atol, signed_zero = false }
      if not o.exact then same_opts.dtype = false end -- numpy 1.24 computes in double
      local ok, why = NP.same(c.got, ref, same_opts)
      if not ok then report(c.what, why) end
    end
  end
end

T.case(string.format("%d comparisons with numpy (%d of the data-type functions)", #checks, #dtype_checks), function()
  T.eq(failures, 0, "comparisons that differ (printed above)")
end)

T.run()
