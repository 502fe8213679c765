-- cu.matmul against numpy itself (python3-numpy): integer products wrap exactly as numpy's, bool is
-- the or of ands, and mixed dtypes give numpy's result dtype and values. Exits 77 (skipped) when
-- python3 or numpy is missing. Usage: culua test_matmul_numpy.lua
package.path = (arg and arg[0] and arg[0]:match("^(.*)[/\\]") or "tests/numpy") .. "/../lua/?.lua;" .. package.path
local T = require "cu.testing"
local L = require "linalg_support"

local here = arg[0]:match("^(.*)[/\\]") or "."
-- The first Python that has numpy: $CULUA_PYTHON, then python3 on the PATH, then the system's.
local python
for _, candidate in ipairs({ os.getenv("CULUA_PYTHON") or "python3", "python3", "/usr/bin/python3" }) do
  if os.execute(candidate .. " -c 'import numpy' 2>/dev/null") then
    python = candidate
    break
  end
end
if not python then
  print("python3 with numpy is not available: skipped")
  os.exit(77)
end

local FLOATS = { f32 = true, f64 = true, c64 = true, c128 = true }

-- A random operand: its array and its description for numpy.
local function operand(shape, dtype, small)
  local a
  if FLOATS[dtype] then
    a = L.random_array(shape, dtype)
  else
    a = L.random_ints(shape, dtype, small)
  end
  local values = {}
  if FLOATS[dtype] then
    for _, v in ipairs(L.values(a)) do
      values[#values + 1] = (dtype == "c64" or dtype == "c128") and { v[1], v[2] } or v[1]
    end
  else
    values = L.int_values(a)
    if dtype == "bool" then
      for i, v in ipairs(values) do values[i] = v ~= 0 end
    end
  end
  return a, { dtype = dtype, shape = shape, values = values }
end

local pairs_of = {
  { "i8", "i8" }, { "i16", "i16" }, { "i32", "i32" }, { "i64", "i64" }, { "u8", "u8" },
  { "u32", "u32" }, { "bool", "bool" }, { "i8", "u8" }, { "bool", "i32" }, { "u8", "u32" },
  { "i8", "u32" }, { "i16", "u8" }, { "i32", "i64" }, { "u8", "i64" },
  { "i32", "f32" }, { "i8", "f32" }, { "i64", "f64" }, { "f32", "f64" }, { "u8", "c64" },
  { "i32", "c64" }, { "f32", "c128" }, { "bool", "f64" }, { "u16", "u16" }, { "u64", "u64" },
  { "u16", "i8" }, { "u64", "u8" }, { "u16", "f32" },
}
local shapes = {
  { { 5, 7 }, { 7, 3 } }, { { 2, 4, 6 }, { 6, 5 } }, { { 3, 1, 4, 6 }, { 2, 6, 2 } },
  { { 6 }, { 3, 6, 4 } }, { { 2, 5, 6 }, { 6 } }, { { 9 }, { 9 } }, { { 40, 33 }, { 33, 37 } },
}

local cases, arrays = {}, {}
for _, p in ipairs(pairs_of) do
  for _, sh in ipairs(shapes) do
    local trans = math.random() < 0.3 and #sh[1] >= 2 and #sh[2] >= 2
    local as, bs = sh[1], sh[2]
    if trans then -- numpy gets the operands swapped back; culua gets ta/tb
      as = { table.unpack(as) }
      bs = { table.unpack(bs) }
      as[#as - 1], as[#as] = as[#as], as[#as - 1]
      bs[#bs - 1], bs[#bs] = bs[#bs], bs[#bs - 1]
    end
    local small = FLOATS[p[1]] or FLOATS[p[2]]
    local a, da = operand(as, p[1], small)
    local b, db = operand(bs, p[2], small)
    da.trans, db.trans = trans, trans
    cases[#cases + 1] = { a = da, b = db }
    arrays[#arrays + 1] = { a = a, b = b, trans = trans, what = p[1] .. " @ " .. p[2] .. " " ..
      T.describe(sh[1]) .. " @ " .. T.describe(sh[2]) .. (trans and " (ta, tb)" or "") }
  end
end

local input, output = os.tmpname(), os.tmpname()
local f = assert(io.open(input, "w"))
f:write(cu.json.encode(cases))
f:close()
local ok, how, code = os.execute(string.format("%s %s/matmul_reference.py %s %s", python, here, input, output))
os.remove(input)
if not ok and how == "exit" and code == 77 then
  os.remove(output)
  os.exit(77)
end
assert(ok, "matmul_reference.py failed")
f = assert(io.open(output))
local results = cu.json.decode(f:read("a"))
f:close()
os.remove(output)

T.case("matmul matches numpy: dtypes, shapes and values (integers exactly)", function()
  T.eq(#results, #arrays)
  for i, want in ipairs(results) do
    local c = arrays[i]
    local r = cu.matmul(c.a, c.b, { ta = c.trans, tb = c.trans })
    T.eq(r.dtype, want.dtype, c.what .. ": dtype")
    T.eq(r.shape, want.shape, c.what .. ": shape")
    if FLOATS[want.dtype] then
      local got = L.values(r)
      for k, v in ipairs(want.values) do
        local re, im = type(v) == "table" and v[1] or v, type(v) == "table" and v[2] or 0
        local tol = (want.dtype == "f64" or want.dtype == "c128") and 1e-12 or 1e-5
        T.near(got[k][1], re, tol * (1 + math.abs(re)), c.what .. " element " .. k)
        T.near(got[k][2], im, tol * (1 + math.abs(im)), c.what .. " element " .. k)
      end
    else
      local got = L.int_values(r)
      for k, v in ipairs(want.values) do
        local w = type(v) == "boolean" and (v and 1 or 0) or math.tointeger(v)
        if got[k] ~= w then
          error(string.format("%s: element %d: got %d, numpy %d", c.what, k, got[k], w))
        end
      end
    end
  end
end)

os.exit(T.run())
