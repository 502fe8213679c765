-- Reductions: cu.sum/mean/max/min/prod/norm/argmax/argmin and the matching methods, over random
-- shapes, views, axes and dtypes, against references computed here in f64 (or exact Lua integer
-- arithmetic, which wraps like the i64 results) from :totable().
--
-- Tolerances, as a multiple of the scale S (sum/mean: the sum (mean) of |x|; prod: |product|;
-- norm: the norm), by the dtype the accumulation rounds to; n is the number of elements reduced:
--   f64, c128 and integer means/norms (f64): 1e-12 * S
--   f32, c64: 1e-5 * log2(n + 2) * S (products: (1e-5 + 2.5e-7 * n) * S)
--   f16: 1e-2 * S     bf16: 2e-2 * S
--   integer sums and products (i64, or u64 for unsigned inputs; wrapping), max, min, argmax,
--   argmin: exact.
--
-- Set CULUA_TEST_SEED to replay a run; the seed is printed first.
package.path = (arg and arg[0] and arg[0]:match("^(.*)[/\\]") or "tests/lua") .. "/?.lua;" .. package.path
local T = require "cu.testing"
local S = require "support"

local SEED = tonumber(os.getenv("CULUA_TEST_SEED")) or (os.time() ~ math.floor(os.clock() * 1e6))
math.randomseed(SEED)
print("seed: " .. SEED .. " (CULUA_TEST_SEED=" .. SEED .. " replays this run)")

local OPS = { "sum", "mean", "max", "min", "prod", "norm", "argmax", "argmin" }
local ORDERING = { max = true, min = true, argmax = true, argmin = true }

local function log2(x) return math.log(x, 2) end

-- The dtype of each op's result (numpy's rules).
local function result_dtype(op, dtype)
  local kind = S.INFO[dtype].kind
  local integral = kind == "int" or kind == "bool"
  if op == "sum" or op == "prod" then
    if kind == "int" and not S.INFO[dtype].signed then return "u64" end -- numpy on Linux
    return integral and "i64" or dtype
  end
  if op == "mean" then return integral and "f64" or dtype end
  if op == "norm" then
    if integral then return "f64" end
    if dtype == "c64" then return "f32" end
    if dtype == "c128" then return "f64" end
    return dtype
  end
  if op == "argmax" or op == "argmin" then return "i64" end
  return dtype
end

-- Relative tolerance for results accumulated in `rdtype` over n elements.
local function tolerance(op, rdtype, n)
  if rdtype == "f16" then return 1e-2 end
  if rdtype == "bf16" then return 2e-2 end
  if rdtype == "f64" or rdtype == "c128" then return 1e-12 end
  if op == "prod" then return 1e-5 + 2.5e-7 * n end
  return 1e-5 * log2(n + 2)
end

-- Random element values (Lua values the dtype accepts exactly or by rounding).
local function random_value(dtype, op)
  local info = S.INFO[dtype]
  if info.kind == "bool" then return math.random() < 0.5 end
  if info.kind == "int" then
    if op == "prod" then
      local v = math.random(1, 3)
      if info.signed and math.random() < 0.5 then v = -v end
      return v
    end
    if ORDERING[op] then return math.random(info.signed and -5 or 0, 5) end -- ties
    return math.random(info.min, info.max)
  end
  local function real()
    if op == "prod" then return 0.98 + 0.04 * math.random() end
    if ORDERING[op] and math.random() < 0.5 then return math.random(-6, 6) + 0.0 end -- ties
    return -10 + 20 * math.random()
  end
  if info.kind == "complex" then
    if op == "prod" then return cu.complex(real(), 0.04 * math.random() - 0.02) end
    return cu.complex(real(), real())
  end
  return real()
end

local function nest(flat, shape)
  local function build(dim, offset)
    local n = shape[dim]
    local t = {}
    if dim == #shape then
      for i = 1, n do t[i] = flat[offset + i] end
      return t, offset + n
    end
    for i = 1, n do t[i], offset = build(dim + 1, offset) end
    return t, offset
  end
  if #shape == 0 then return flat[1] end
  return (build(1, 0))
end

local SIZES = { 1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 17, 31, 33, 64, 100, 129, 300 }

local function random_shape(max_elements)
  while true do
    local nd = math.random(1, 4)
    local shape, n = {}, 1
    for d = 1, nd do
      shape[d] = SIZES[math.random(1, nd == 1 and #SIZES or 12)]
      n = n * shape[d]
    end
    if n <= max_elements then return shape end
  end
end

-- A random array (device, or host 30% of the time) with a random view applied: narrowed along
-- a dimension and/or two dimensions transposed. Returns the view and a description.
local function random_view(dtype, op)
  local base_shape = random_shape(4000)
  local n = 1
  for _, d in ipairs(base_shape) do n = n * d end
  local flat = {}
  for i = 1, n do flat[i] = random_value(dtype, op) end
  local kind = S.INFO[dtype].kind
  if ORDERING[op] and (kind == "float") and math.random() < 0.25 then
    for _ = 1, math.random(1, 2) do flat[math.random(1, n)] = S.nan end
  end
  local host = math.random() < 0.3
  local a = host and cu.host.array(nest(flat, base_shape), dtype) or cu.array(nest(flat, base_shape), dtype)
  local desc = (host and "host " or "device ") .. dtype .. " " .. T.describe(base_shape)
  if math.random() < 0.5 then
    local dims = {}
    for d = 1, a.ndim do if a.shape[d] >= 2 then dims[#dims + 1] = d end end
    if #dims > 0 then
      local d = dims[math.random(1, #dims)]
      local len = math.random(1, a.shape[d] - 1)
      local start = math.random(1, a.shape[d] - len + 1)
      a = a:narrow(d, start, len)
      desc = desc .. string.format(":narrow(%d, %d, %d)", d, start, len)
    end
  end
  if a.ndim >= 2 and math.random() < 0.5 then
    local d1, d2 = math.random(1, a.ndim), math.random(1, a.ndim)
    a = a:transpose(d1, d2)
    desc = desc .. string.format(":transpose(%d, %d)", d1, d2)
  end
  return a, desc
end

-- Element values as numbers: bools 0/1, complex values {re, im}.
local function parts(v)
  if type(v) == "boolean" then return v and 1 or 0, 0 end
  if type(v) == "userdata" then return v.re, v.im end
  return v, 0
end

-- The same as floats (Lua integer products would wrap).
local function fparts(v)
  local r, i = parts(v)
  return r + 0.0, i + 0.0
end

-- The expected result of `op` over the list xs (elements of `dtype`): {value=, scale=} where
-- value is a number, an integer (exact), a boolean or {re, im}.
local function reference(op, dtype, xs)
  local kind = S.INFO[dtype].kind
  local integral = kind == "int" or kind == "bool"
  local n = #xs
  if op == "sum" and integral then
    local s = 0
    for _, x in ipairs(xs) do s = s + parts(x) end -- integer arithmetic wraps like i64
    if kind == "int" and not S.INFO[dtype].signed then return { value = S.u64(s), scale = 0 } end
    return { value = math.tointeger(s) }
  end
  if op == "prod" and integral then
    local p = 1
    for _, x in ipairs(xs) do p = p * parts(x) end
    if kind == "int" and not S.INFO[dtype].signed then return { value = S.u64(p), scale = 0 } end
    return { value = math.tointeger(p) }
  end
  if op == "sum" or op == "mean" then
    local re, im, scale = 0.0, 0.0, 0.0
    for _, x in ipairs(xs) do
      local r, i = fparts(x)
      re, im, scale = re + r, im + i, scale + math.abs(r) + math.abs(i)
    end
    if op == "mean" then re, im, scale = re / n, im / n, scale / n end
    if kind == "complex" then return { value = { re, im }, scale = scale } end
    return { value = re, scale = scale }
  end
  if op == "prod" then
    local re, im, mag = 1.0, 0.0, 1.0
    for _, x in ipairs(xs) do
      local r, i = fparts(x)
      re, im = re * r - im * i, re * i + im * r
      mag = mag * math.sqrt(r * r + i * i)
    end
    if kind == "complex" then return { value = { re, im }, scale = mag } end
    return { value = re, scale = mag }
  end
  if op == "norm" then
    local s = 0.0
    for _, x in ipairs(xs) do
      local r, i = fparts(x)
      s = s + r * r + i * i
    end
    return { value = math.sqrt(s), scale = math.sqrt(s) }
  end
  local greater = op == "max" or op == "argmax"
  local best
  for k, x in ipairs(xs) do
    local v = parts(x)
    if v ~= v then
      best = k
      break
    end
    if not best or (greater and v > parts(xs[best])) or (not greater and v < parts(xs[best])) then
      best = k
    end
  end
  if op == "argmax" or op == "argmin" then return { value = best } end
  return { value = xs[best] }
end

local function close(got, want, tol, scale)
  if want ~= want then return got ~= got end
  if want == math.huge or want == -math.huge then return got == want end
  return type(got) == "number" and math.abs(got - want) <= tol * scale + 1e-300
end

local function matches(op, dtype, got, want, n)
  local rd = result_dtype(op, dtype)
  if math.type(want.value) == "integer" or type(want.value) == "boolean" or ORDERING[op] then
    return S.same(got, want.value) or (type(got) == "number" and got == want.value)
  end
  local tol = tolerance(op, rd, n)
  if type(want.value) == "table" then
    local gr, gi = parts(got)
    return close(gr, want.value[1], tol, want.scale) and close(gi, want.value[2], tol, want.scale)
  end
  return close(got, want.value, tol, want.scale)
end

-- Groups of the row-major list `flat` (shape `shape`) reduced into each output, in row-major order
-- of the outputs.
local function groups(flat, shape, axis)
  if not axis then return { flat } end
  local nd = #shape
  local rm, acc = {}, 1
  for d = nd, 1, -1 do
    rm[d] = acc
    acc = acc * shape[d]
  end
  local outer, m = {}, 1
  for d = 1, nd do
    if d ~= axis then
      outer[#outer + 1] = d
      m = m * shape[d]
    end
  end
  local out = {}
  for o = 0, m - 1 do
    local rest, base = o, 0
    for k = #outer, 1, -1 do
      local d = outer[k]
      base = base + (rest % shape[d]) * rm[d]
      rest = rest // shape[d]
    end
    local g = {}
    for r = 0, shape[axis] - 1 do g[#g + 1] = flat[base + r * rm[axis] + 1] end
    out[#out + 1] = g
  end
  return out
end

local function expected_shape(shape, axis, keepdims)
  local s = {}
  for d = 1, #shape do
    if axis == nil or axis == d then
      if keepdims then s[#s + 1] = 1 end
    else
      s[#s + 1] = shape[d]
    end
  end
  return s
end

local function flat_of(r)
  local t = r:totable()
  if r.ndim == 0 then return { t } end
  return S.flatten(t)
end

-- One reduction checked against the reference; `how` picks cu.op(a, opts) or a:op(opts).
local function check_reduction(op, a, desc, axis_arg, keepdims, how)
  local opts = { axis = axis_arg, keepdims = keepdims }
  local r = how == "function" and cu[op](a, opts) or a[op](a, opts)
  local axis = axis_arg
  if axis and axis < 0 then axis = a.ndim + 1 + axis end
  local what = string.format("seed %d: %s(%s, axis=%s, keepdims=%s) [%s]", SEED, op, desc,
    tostring(axis_arg), tostring(keepdims), how)
  T.eq(r.dtype, result_dtype(op, a.dtype), what .. " dtype")
  T.eq(r.shape, expected_shape(a.shape, axis, keepdims), what .. " shape")
  T.eq(r.location, a.location == "device" and "device" or "pageable", what .. " location")
  local flat = S.flatten(a:totable())
  local gs = groups(flat, a.shape, axis)
  local got = flat_of(r)
  T.eq(#got, #gs, what .. " count")
  for k, g in ipairs(gs) do
    local want = reference(op, a.dtype, g)
    if not matches(op, a.dtype, got[k], want, #g) then
      local wv = want.value
      if type(wv) == "table" then wv = string.format("{%s, %s}", wv[1], wv[2]) end
      error(string.format("%s: output %d: expected %s (scale %s, tolerance %g), got %s", what, k,
        tostring(wv), tostring(want.scale), tolerance(op, result_dtype(op, a.dtype), #g),
        S.show(got[k])), 2)
    end
  end
end

T.case("random shapes, views, axes and dtypes against f64 references", function()
  for _ = 1, 400 do
    local op = OPS[math.random(1, #OPS)]
    local dtype = S.DTYPES[math.random(1, #S.DTYPES)]
    while ORDERING[op] and S.INFO[dtype].kind == "complex" do
      dtype = S.DTYPES[math.random(1, #S.DTYPES)]
    end
    local a, desc = random_view(dtype, op)
    local axis
    local pick = math.random()
    if pick < 0.35 then
      axis = nil
    elseif pick < 0.8 then
      axis = math.random(1, a.ndim)
    else
      axis = -math.random(1, a.ndim)
    end
    check_reduction(op, a, desc, axis, math.random() < 0.3, math.random() < 0.5 and "method" or "function")
  end
end)

T.case("every op over every dtype where it is defined, all axes of a 3-d view", function()
  for _, op in ipairs(OPS) do
    for _, dtype in ipairs(S.DTYPES) do
      if not (ORDERING[op] and S.INFO[dtype].kind == "complex") then
        local flat = {}
        for i = 1, 4 * 5 * 6 do flat[i] = random_value(dtype, op) end
        local a = cu.array(nest(flat, { 4, 5, 6 }), dtype):transpose(1, 3):narrow(2, 2, 3)
        local desc = dtype .. " {4,5,6}:transpose(1, 3):narrow(2, 2, 3)"
        for _, axis in ipairs({ false, 1, 2, 3, -1 }) do
          check_reduction(op, a, desc, axis or nil, false, "method")
        end
        check_reduction(op, a, desc, 2, true, "function")
      end
    end
  end
end)

T.case("full reductions give 0-d arrays; :item() reads them", function()
  local vals = S.randints(10, -50, 50)
  vals[1] = 77
  local a = cu.array(vals, "i32")
  local s = a:sum()
  T.eq(s.shape, {})
  T.eq(s.ndim, 0)
  T.eq(s.location, "device")
  local want = 0
  for _, v in ipairs(vals) do want = want + v end
  T.eq(s:item(), want)
  T.eq(math.type(s:item()), "integer")
  T.eq(cu.max(a):item(), 77)
  T.eq(a:argmax():item(), 1)
  T.eq(a:sum({ keepdims = true }).shape, { 1 })
  local m = cu.array({ { 1, 2, 3 }, { 4, 5, 6 } }, "f64")
  T.eq(m:sum({ keepdims = true }).shape, { 1, 1 })
  T.eq(m:mean():item(), 3.5)
  T.eq(m:sum({ axis = 1 }):totable(), { 5, 7, 9 })
  T.eq(m:sum({ axis = 2 }):totable(), { 6, 15 })
  T.eq(m:sum({ axis = -1, keepdims = true }):totable(), { { 6 }, { 15 } })
  T.eq(m:argmin({ axis = 2 }):totable(), { 1, 1 })
  T.eq(cu.full({}, 2.5, "f32"):sum():item(), 2.5)
end)

T.case("2^24 ones sum exactly in f32", function()
  local n = 1 << 24
  T.eq(cu.ones(n, "f32"):sum():item(), 16777216.0)
  T.eq(cu.ones({ n // 2, 2 }, "f32"):sum({ axis = 1 }):totable(), { 8388608.0, 8388608.0 })
  T.eq(cu.ones(n, "bool"):sum():item(), n)
end)

T.case("f32 sums are pairwise: arange(1e6) is close to the exact sum", function()
  local n = 1000000
  local a = cu.arange(n, "f32") -- integers below 2^24: exact elements
  local exact = n * (n - 1) / 2
  local got = a:sum():item()
  T.truthy(math.abs(got - exact) / exact < 1e-6,
    string.format("sum of arange(%d) in f32: %.17g, exact %.17g", n, got, exact))
  local m = a:view({ 1000, 1000 })
  local cols = m:sum({ axis = 1 }):totable()
  for c = 1, 1000, 111 do
    local want = 0
    for r = 0, 999 do want = want + r * 1000 + (c - 1) end
    T.truthy(math.abs(cols[c] - want) / want < 1e-5, "column " .. c)
  end
  T.near(a:mean():item(), (n - 1) / 2, (n - 1) / 2 * 1e-6)
end)

T.case("host backend: f32 sums are numpy's pairwise order, bit for bit", function()
  if cu.backend ~= "host" then return end -- the GPU adds in a tree of its own
  -- numpy's pairwise_sum in plain Lua, each f32 addition rounded through string.pack: blocks of
  -- up to 128 elements into eight partials (then ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7))), longer
  -- ranges split in halves rounded down to a multiple of 8.
  local function f32(x) return (string.unpack("<f", string.pack("<f", x))) end
  local function pairwise(v, lo, hi) -- [lo, hi), 1-based lo
    local n = hi - lo
    if n <= 128 then
      local r = { 0, 0, 0, 0, 0, 0, 0, 0 }
      for i = 0, n - 1 do
        local k = i % 8 + 1
        r[k] = f32(r[k] + v[lo + i])
      end
      return f32(f32(f32(r[1] + r[2]) + f32(r[3] + r[4])) + f32(f32(r[5] + r[6]) + f32(r[7] + r[8])))
    end
    local half = n // 2
    half = half - half % 8
    return f32(pairwise(v, lo, lo + half) + pairwise(v, lo + half, hi))
  end
  -- Sizes that take the blocks-side-by-side paths (2 and 4 equal blocks), the ones next to them,
  -- and several leaves of the parallel split (16384 elements).
  for _, n in ipairs({ 8, 136, 200, 256, 264, 272, 384, 392, 512, 520, 1000, 4096, 4104, 40000 }) do
    local a = cu.rand({ n }, "f32", { seed = n }) * 1000
    local v = a:totable()
    local want = pairwise(v, 1, n + 1)
    local got = a:sum():item()
    T.eq(string.format("%a", got), string.format("%a", want), "n = " .. n)
  end
end)

T.case("host arrays are reduced into pageable host arrays", function()
  local vals = S.randoms(50, -10, 10)
  local h = cu.host.array(vals, "f64")
  local s = h:sum()
  T.eq(s.location, "pageable")
  local want = 0
  for _, v in ipairs(vals) do want = want + v end
  T.near(s:item(), want, 1e-12 * 500)
  local p = cu.host.array(vals, "f32", { pinned = true })
  T.eq(p:max().location, "pageable")
  local best = 1
  for i, v in ipairs(vals) do
    if S.f32(v) > S.f32(vals[best]) then best = i end
  end
  T.eq(cu.argmax(p):item(), best)
end)

T.case("out= receives the result, converted to its dtype, and is returned", function()
  local m = cu.array({ { 1.5, 2.25, -0.5 }, { 4.0, 3.0, 0.25 } }, "f32")
  local o = cu.empty(3, "f32")
  local r = m:sum({ axis = 1, out = o })
  T.truthy(rawequal(r, o), "returns the out array itself")
  T.eq(o:totable(), { 5.5, 5.25, -0.25 })
  local oi = cu.zeros({ 2, 1 }, "i32")
  cu.sum(m, { axis = 2, keepdims = true, out = oi })
  T.eq(oi:totable(), { { 3 }, { 7 } })
  local oc = cu.empty({}, "c128")
  m:max({ out = oc })
  T.eq(oc:item().re, 4.0)
  local wide = cu.full({ 3, 2 }, -1, "f64")
  m:argmax({ axis = 1, out = wide:transpose(1, 2)[2] }) -- a strided out: column 2
  T.eq(wide:totable(), { { -1, 2 }, { -1, 2 }, { -1, 2 } })
  local h = cu.host.zeros({}, "f64")
  cu.host.array({ 1, 2, 3 }):sum({ out = h })
  T.eq(h:item(), 6.0)
  S.raises(function() m:sum({ axis = 1, out = cu.empty(2, "f32") }) end, { "out", "{2}", "{3}" })
  S.raises(function() m:sum({ axis = 1, out = cu.empty({ 1, 3 }, "f32") }) end, "shape")
  S.raises(function() m:sum({ out = cu.host.zeros({}, "f32") }) end, "device")
  S.raises(function() m:sum({ out = 3 }) end, "bad argument #1 to 'sum' (option 'out': cu.Array expected, got number)")
end)

T.case("stream= queues the reduction on that stream", function()
  local s = cu.stream()
  local a = cu.full(1000, 3, "i32", { stream = s })
  local r = a:sum({ stream = s })
  s:sync()
  T.eq(r:item(), 3000)
  local o = cu.empty({}, "i64")
  cu.prod(cu.full(5, 2, "i16"), { stream = s, out = o })
  s:sync()
  T.eq(o:item(), 32)
end)

T.case("NaN: max/min propagate it, argmax/argmin return the first NaN", function()
  local a = cu.array({ 1, 5, S.nan, 9, S.nan, -3 }, "f32")
  T.truthy(S.isnan(a:max():item()), "max is NaN")
  T.truthy(S.isnan(a:min():item()), "min is NaN")
  T.eq(a:argmax():item(), 3)
  T.eq(a:argmin():item(), 3)
  local b = cu.array({ 2, 9, -4, 9, -4 }, "f16")
  T.eq(b:argmax():item(), 2)
  T.eq(b:argmin():item(), 3)
  T.eq(b:max():item(), 9.0)
end)

T.case("empty reductions: sum 0, prod 1, mean NaN, norm 0; max and argmax are errors", function()
  local e = cu.empty(0, "f32")
  T.eq(e:sum():item(), 0.0)
  T.eq(e:prod():item(), 1.0)
  T.truthy(S.isnan(e:mean():item()), "mean of nothing is NaN")
  T.eq(e:norm():item(), 0.0)
  T.eq(cu.empty(0, "i8"):sum():item(), 0)
  T.eq(cu.empty({ 3, 0 }, "f64"):sum({ axis = 2 }):totable(), { 0.0, 0.0, 0.0 })
  T.eq(cu.empty({ 0, 3 }, "f64"):max({ axis = 2 }).shape, { 0 })
  for _, op in ipairs({ "max", "min", "argmax", "argmin" }) do
    S.raises(function() e[op](e) end, { op, "empty" })
    S.raises(function() cu.empty({ 3, 0 })[op](cu.empty({ 3, 0 }), { axis = 2 }) end, "empty")
  end
end)

T.case("errors: bad axis, complex ordering, bad arguments, freed arrays", function()
  local m = cu.zeros({ 2, 3 })
  S.raises(function() m:sum({ axis = 3 }) end, "axis 3 is out of range for a 2-d array (axes 1..2")
  S.raises(function() m:sum({ axis = 0 }) end, { "axis 0 is out of range", "start at 1" })
  S.raises(function() m:sum({ axis = -3 }) end, "axis -3 is out of range")
  S.raises(function() m:sum({ axis = 1.5 }) end, "(option 'axis': must be an integer")
  S.raises(function() m:sum({ axis = "1" }) end, "(option 'axis': must be an integer")
  S.raises(function() cu.full({}, 1):sum({ axis = 1 }) end, "0-d array")
  S.raises(function() m:sum({ axes = 1 }) end, "unknown option 'axes'")
  S.raises(function() m:sum(1) end, "bad argument #1 to 'sum' (options table such as {axis=1} expected, got number)")
  S.raises(function() m:sum({ keepdims = 1 }) end, "keepdims")
  S.raises(function() m:sum({ stream = 1 }) end, "stream")
  for _, op in ipairs({ "max", "min", "argmax", "argmin" }) do
    S.raises(function() cu[op](cu.zeros(4, "c64")) end, { op, "complex" })
  end
  S.raises(function() cu.sum(nil) end, "bad argument #1 to 'sum' (cu.Array expected, got nil)")
  S.raises(function() cu.mean(3) end, "bad argument #1 to 'mean' (cu.Array expected, got number)")
  S.raises(function() cu.norm({ 1, 2 }) end, "(cu.Array expected, got table)")
  local f = cu.ones(8)
  f:free()
  S.raises_released(function() f:sum() end)
  S.raises_released(function() cu.argmax(f) end)
  local o = cu.empty({})
  o:free()
  S.raises_released(function() cu.ones(3):sum({ out = o }) end)
  -- Still usable after all of that.
  T.eq(cu.ones(5):sum():item(), 5.0)
end)

os.exit(T.run())
