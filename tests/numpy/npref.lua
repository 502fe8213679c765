-- numpy as the reference for culua's tests: numpy expressions evaluated on culua's arrays in one
-- python3 process (tests/numpy/npref.py), and comparisons that see NaN, inf, -0.0, dtypes and
-- shapes.
--
--   package.path = <tests/numpy>/?.lua;...   local NP = require "npref"
--   NP.require()                                 -- exits 77 (skipped) without python3 + numpy
--   local refs = NP.run({ { expr = "np.sort(a)", inputs = { a = NP.describe(x) } }, ... })
--   local ok, why = NP.same(cu.sort(x), refs[1], { rtol = 0 })
--
-- A result is { dtype =, shape =, values = flat } (complex values {re, im}), { tuple = {...} },
-- or { error = "ValueError: ..." } when numpy raised.
local NP = {}

local python

-- The first Python that imports numpy: $CULUA_PYTHON, python3 on the PATH, the system's.
function NP.python()
  if python ~= nil then return python or nil end
  python = false
  for _, candidate in ipairs({ os.getenv("CULUA_PYTHON") or "python3", "python3", "/usr/bin/python3" }) do
    if os.execute(candidate .. " -c 'import numpy' 2>/dev/null") then
      python = candidate
      break
    end
  end
  return python or nil
end

-- Exits 77 (ctest's SKIP_RETURN_CODE) when there is no numpy.
function NP.require()
  if not NP.python() then
    print("python3 with numpy is not available: skipped")
    os.exit(77)
  end
end

local here = debug.getinfo(1, "S").source:match("^@(.*)[/\\]") or "tests/numpy"

local function encode_float(x)
  if x ~= x then return "nan" end
  if x == math.huge then return "inf" end
  if x == -math.huge then return "-inf" end
  if x == 0 and 1 / x < 0 then return "-0" end
  return x
end

local function decode_float(v)
  if v == "nan" then return 0 / 0 end
  if v == "inf" then return math.huge end
  if v == "-inf" then return -math.huge end
  if v == "-0" then return -0.0 end
  return v
end

local COMPLEX = { c64 = true, c128 = true }
local FLOAT = { f16 = true, bf16 = true, f32 = true, f64 = true }

-- The flat row-major values of a (nested) table from :totable().
local function flatten(t, out)
  if type(t) ~= "table" then
    out[#out + 1] = t
    return out
  end
  for _, v in ipairs(t) do flatten(v, out) end
  return out
end

-- An array as numpy's input: { dtype, shape, values } (bf16 goes as f32: numpy has no bf16).
function NP.describe(a)
  local dtype = a.dtype == "bf16" and "f32" or a.dtype
  local values = flatten(a:totable(), {})
  for i, v in ipairs(values) do
    if COMPLEX[dtype] then
      values[i] = { encode_float(v.re), encode_float(v.im) }
    elseif FLOAT[dtype] then
      values[i] = encode_float(v)
    end
  end
  local shape = {}
  for i, n in ipairs(a.shape) do shape[i] = n end
  return { dtype = dtype, shape = shape, values = values } -- (empty tables go as {}: npref.py reads them as [])
end

local function decode(r)
  if r.tuple then
    for i, x in ipairs(r.tuple) do r.tuple[i] = decode(x) end
    return r
  end
  if r.values then
    for i, v in ipairs(r.values) do
      if type(v) == "table" then
        r.values[i] = { decode_float(v[1]), decode_float(v[2]) }
      else
        r.values[i] = decode_float(v)
      end
    end
  end
  return r
end

-- Evaluates every case in one python3 process; returns their results in order.
function NP.run(cases)
  NP.require()
  local input, output = os.tmpname(), os.tmpname()
  local f = assert(io.open(input, "w"))
  f:write(cu.json.encode(cases))
  f:close()
  local cmd = string.format("%s %s/npref.py %s %s", NP.python(), here, input, output)
  assert(os.execute(cmd), "npref.py failed: " .. cmd)
  f = assert(io.open(output))
  local results = cu.json.decode(f:read("a"))
  f:close()
  os.remove(input)
  os.remove(output)
  for i, r in ipairs(results) do results[i] = decode(r) end
  return results
end

local function close(x, y, o)
  if x ~= x or y ~= y then return x ~= x and y ~= y end
  if x == y then
    return o.signed_zero == false or x ~= 0 or (1 / x > 0) == (1 / y > 0)
  end
  if x == math.huge or x == -math.huge or y == math.huge or y == -math.huge then return false end
  return math.abs(x - y) <= (o.atol or 0) + (o.rtol or 0) * math.abs(y)
end

-- Whether culua's array `got` is numpy's result `ref`: dtype (unless opts.dtype == false; bf16
-- compares with numpy's f32), shape, and values (exact unless opts.rtol/atol; NaN equals NaN;
-- the sign of zero counts unless opts.signed_zero == false). Returns true, or false and why.
function NP.same(got, ref, opts)
  opts = opts or {}
  if ref.error then return false, "numpy raised " .. ref.error end
  if ref.tuple then return false, "numpy returned a tuple" end
  local mine = NP.describe(got)
  if opts.dtype ~= false and mine.dtype ~= ref.dtype then
    return false, string.format("dtype %s, numpy %s", mine.dtype, ref.dtype)
  end
  if #mine.shape ~= #ref.shape then
    return false, string.format("shape of %d dims, numpy %d", #mine.shape, #ref.shape)
  end
  for i, n in ipairs(ref.shape) do
    if mine.shape[i] ~= n then
      return false, string.format("shape[%d] = %d, numpy %d", i, mine.shape[i], n)
    end
  end
  local values = decode({ values = mine.values }).values
  for i, want in ipairs(ref.values) do
    local have = values[i]
    local ok
    if type(want) == "table" then
      ok = close(have[1], want[1], opts) and close(have[2], want[2], opts)
    elseif type(want) == "boolean" or math.type(want) == "integer" and math.type(have) == "integer" then
      ok = have == want
    else
      ok = close(have, want, opts)
    end
    if not ok then
      local show = function(v)
        return type(v) == "table" and string.format("(%s, %s)", tostring(v[1]), tostring(v[2])) or tostring(v)
      end
      return false, string.format("element %d: %s, numpy %s", i, show(have), show(want))
    end
  end
  return true
end

return NP
