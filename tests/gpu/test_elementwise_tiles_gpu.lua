-- The CUDA kernel for binary operations with a column-major (transposed) operand, binary_tiles in
-- src/kernels/elementwise_cuda.cuh, against the host kernels in one process: every dtype with a
-- tile kernel of its own (f32, f64, f16, bf16, i32, i64, c64: 256-byte tile columns of 64, 128 and
-- 32 rows, 16-byte vectors) and two without (u8, c128), on shapes that are whole tiles, cross their
-- edges in either direction, are one row or one column, and span several groups of 8 tile rows
-- (the blocks' order); with the transposed operand on either side or both, the output transposed
-- (out = c:transpose()), views at offsets (unaligned, odd strides: the element-by-element loads),
-- an unaligned output, a broadcast row or column, and a scalar. The four arithmetic operations
-- have kernels of their own, the others share one (the operation chosen at run time): both kinds
-- run. Bit-identical (NaN equal to NaN): + - * / maximum and comparisons are exact on both
-- backends (tests/gpu/test_elementwise_gpu.lua).
--
-- Run with `culua --backend cuda tests/gpu/test_elementwise_tiles_gpu.lua` (exits 69 without a
-- GPU). CULUA_TEST_SEED=<n> repeats a run; CULUA_GPU_TEST_ON_HOST=1 runs the script on the host
-- backend (a check of the script itself).
package.path = (arg and arg[0] and arg[0]:match("^(.*)[/\\]") or "tests/gpu") .. "/../lua/?.lua;" ..
    package.path
local T = require "cu.testing"

if cu.backend ~= "cuda" and os.getenv("CULUA_GPU_TEST_ON_HOST") ~= "1" then
  print("skip: test_elementwise_tiles_gpu needs --backend cuda")
  os.exit(69)
end

local SEED = tonumber(os.getenv("CULUA_TEST_SEED") or "") or
    ((os.time() * 1000003 + math.floor(os.clock() * 1e6)) % (1 << 40))
print(string.format("test_elementwise_tiles_gpu: seed %d (CULUA_TEST_SEED=%d repeats this run)", SEED, SEED))
math.randomseed(SEED)

local KIND = { f32 = "float", f64 = "float", f16 = "float", bf16 = "float", i32 = "int", i64 = "int",
  u8 = "int", c64 = "complex", c128 = "complex" }
local DTYPES = { "f32", "f64", "f16", "bf16", "i32", "i64", "c64", "u8", "c128" }
-- Whole tiles of each element size (64 x 64 f32, 128 x 64 f16, 32 x 64 f64), partial tiles both
-- ways, one row, one column, and more than 8 tile rows (two groups: f32 and f64 at 520 rows, f16
-- at 1100).
local SHAPES = { { 64, 64 }, { 128, 128 }, { 32, 64 }, { 67, 131 }, { 1, 300 }, { 300, 1 }, { 2, 515 },
  { 1000, 3 }, { 520, 70 }, { 257, 129 }, { 1100, 66 } }
-- Besides add (every layout), one of these per layout, in turn.
local OTHER = { "sub", "mul", "div", "maximum", "lt", "ne" }

local CHECKS = 0

-- Host arrays ------------------------------------------------------------------------------------

local CACHE = {}
-- n values of dtype t (host), the same for the same (n, t, slot): small integers and zeros for the
-- integers, fractions of either sign, zeros and integers for the floats (division by zero and
-- exact ties of maximum and lt included), two such parts for the complex types.
local function values(n, t, slot)
  local key = table.concat({ n, t, slot }, ":")
  if CACHE[key] then return CACHE[key] end
  local kind = KIND[t]
  local a
  if kind == "complex" then
    local part = t == "c64" and "f32" or "f64"
    local re, im = values(n, part, slot * 2 + 1), values(n, part, slot * 2 + 2)
    a = cu.add(re:astype(t), cu.mul(im:astype(t), cu.complex(0, 1)))
  else
    local v = {}
    for i = 1, n do
      local x = math.random(-40, 40)
      if kind == "float" and math.random() < 0.7 then x = x + math.random() - 0.5 end
      if t == "u8" then x = x + 40 end
      v[i] = x
    end
    a = cu.host.array(v, "f64"):astype(t)
  end
  CACHE[key] = a
  return a
end

-- A host array of `shape` (a table) and dtype t, and its copy on the device.
local function pair(shape, t, slot)
  local n = 1
  for _, d in ipairs(shape) do n = n * d end
  local h = values(n, t, slot):view(shape)
  return h, h:to_device()
end

-- Comparison -------------------------------------------------------------------------------------

-- A bool host array: where the host arrays d and h differ (NaN equal to NaN).
local function differs(d, h)
  if KIND[h.dtype] == "complex" then
    return cu.add(differs(cu.real(d), cu.real(h)), differs(cu.imag(d), cu.imag(h)))
  end
  local ne = cu.ne(d, h)
  if h.dtype == "bool" or KIND[h.dtype] ~= "float" then return ne end
  return cu.mul(ne, cu.add(cu.eq(d, d), cu.eq(h, h))) -- and not both NaN
end

local function show(a, i)
  local v = a:contiguous():view({ a.size })[i]
  if type(v) == "userdata" and v.re then return string.format("(%.17g%+.17gj)", v.re, v.im) end
  if math.type(v) == "float" then return string.format("%.17g", v) end
  return tostring(v)
end

-- The device result rd (a device array, any layout) against the host result rh.
local function compare(rd, rh, what)
  CHECKS = CHECKS + 1
  T.eq(rd.dtype, rh.dtype, what .. ": dtype")
  T.eq(rd.shape, rh.shape, what .. ": shape")
  T.eq(rd.location, "device", what .. ": on the device")
  local d = rd:contiguous():to_host()
  local h = rh:contiguous()
  local bad = differs(d, h)
  if bad:any():item() then
    local flags = bad:view({ bad.size }):totable()
    local i = 1
    while not flags[i] do i = i + 1 end
    local cols = rh.shape[2]
    error(string.format("[seed %d] %s: element (%d, %d) differs: device %s, host %s", SEED, what,
      (i - 1) // cols + 1, (i - 1) % cols + 1, show(d, i), show(h, i)), 2)
  end
end

-- Layouts ----------------------------------------------------------------------------------------
-- Each returns the device and the host result of op for an r x c output, from operands built the
-- same way on both sides (`make(shape, slot)` gives a host array and its device copy).

local function transposed(make, r, c, slot)
  local h, d = make({ c, r }, slot)
  return h:transpose(), d:transpose()
end

-- Views at offsets: rows 2.. and columns 3.. of a wider array (a start and a row stride that are
-- not multiples of a 16-byte vector).
local function offset(make, r, c, slot)
  local h, d = make({ r + 3, c + 5 }, slot)
  return h:narrow(1, 2, r):narrow(2, 3, c), d:narrow(1, 2, r):narrow(2, 3, c)
end

local LAYOUTS = {
  { "a + b:T()", function(op, make, r, c)
    local ha, da = make({ r, c }, 1)
    local hb, db = transposed(make, r, c, 2)
    return cu[op](da, db), cu[op](ha, hb)
  end },
  { "a:T() + b", function(op, make, r, c)
    local ha, da = transposed(make, r, c, 1)
    local hb, db = make({ r, c }, 2)
    return cu[op](da, db), cu[op](ha, hb)
  end },
  { "a:T() + b:T()", function(op, make, r, c)
    local ha, da = transposed(make, r, c, 1)
    local hb, db = transposed(make, r, c, 2)
    return cu[op](da, db), cu[op](ha, hb)
  end },
  { "a + b into c:T()", function(op, make, r, c)
    local ha, da = make({ r, c }, 1)
    local hb, db = make({ r, c }, 2)
    local dtype = cu[op](ha, hb).dtype
    local dc, hc = cu.zeros({ c, r }, dtype), cu.host.zeros({ c, r }, dtype)
    cu[op](da, db, { out = dc:transpose() })
    cu[op](ha, hb, { out = hc:transpose() })
    return dc:transpose(), hc:transpose()
  end },
  { "a:T() + b into c:T()", function(op, make, r, c)
    local ha, da = transposed(make, r, c, 1)
    local hb, db = make({ r, c }, 2)
    local dtype = cu[op](ha, hb).dtype
    local dc, hc = cu.zeros({ c, r }, dtype), cu.host.zeros({ c, r }, dtype)
    cu[op](da, db, { out = dc:transpose() })
    cu[op](ha, hb, { out = hc:transpose() })
    return dc:transpose(), hc:transpose()
  end },
  { "offset a + offset b:T()", function(op, make, r, c)
    local ha, da = offset(make, r, c, 1)
    local hb, db = make({ c + 2, r + 1 }, 2)
    hb, db = hb:narrow(1, 2, c):narrow(2, 2, r):transpose(), db:narrow(1, 2, c):narrow(2, 2, r):transpose()
    return cu[op](da, db), cu[op](ha, hb)
  end },
  { "a + b:T() into an unaligned out", function(op, make, r, c)
    local ha, da = make({ r, c }, 1)
    local hb, db = transposed(make, r, c, 2)
    local dtype = cu[op](ha, hb).dtype
    local dc, hc = cu.zeros({ r, c + 1 }, dtype), cu.host.zeros({ r, c + 1 }, dtype)
    cu[op](da, db, { out = dc:narrow(2, 2, c) })
    cu[op](ha, hb, { out = hc:narrow(2, 2, c) })
    return dc, hc
  end },
  { "b:T() + row", function(op, make, r, c)
    local hb, db = transposed(make, r, c, 2)
    local hrow, drow = make({ c }, 3)
    return cu[op](db, drow), cu[op](hb, hrow)
  end },
  { "column + b:T()", function(op, make, r, c)
    local hcol, dcol = make({ r, 1 }, 3)
    local hb, db = transposed(make, r, c, 2)
    return cu[op](dcol, db), cu[op](hcol, hb)
  end },
  { "b:T() + scalar, scalar + b:T()", function(op, make, r, c, t)
    local hb, db = transposed(make, r, c, 2)
    local s = KIND[t] == "complex" and cu.complex(1.5, -2) or KIND[t] == "float" and 2.5 or 3
    compare(cu[op](s, db), cu[op](s, hb), op .. " " .. t .. " scalar + b:T()")
    return cu[op](db, s), cu[op](hb, s)
  end },
}

T.case("transposed operands, every layout, shape and tile dtype: device equals host", function()
  for _, t in ipairs(DTYPES) do
    local make = function(shape, slot) return pair(shape, t, slot) end
    for si, sh in ipairs(SHAPES) do
      local r, c = sh[1], sh[2]
      for li, layout in ipairs(LAYOUTS) do
        local ops = { "add", OTHER[(si + li) % #OTHER + 1] }
        for _, op in ipairs(ops) do
          if not (KIND[t] == "complex" and op == "lt") then -- complex numbers are not ordered
            local what = string.format("%s %s %dx%d %s", op, t, r, c, layout[1])
            local rd, rh = layout[2](op, make, r, c, t)
            compare(rd, rh, what)
          end
        end
      end
    end
  end
end)

T.case("a square matrix minus its transpose into itself, and a large transposed add", function()
  for _, t in ipairs({ "f32", "f64", "f16", "c64" }) do
    for _, n in ipairs({ 64, 200, 1031 }) do
      local hm, dm = pair({ n, n }, t, 4)
      hm, dm = hm:clone(), dm:clone()
      cu.sub(dm, dm:transpose(), { out = dm })
      cu.sub(hm, hm:transpose(), { out = hm })
      compare(dm, hm, string.format("%s %dx%d a - a:T() into a", t, n, n))
    end
  end
  -- 2048 x 2048 f32: 512 whole tiles, 4 groups of tile rows.
  local n = 2048
  local ha, da = pair({ n, n }, "f32", 1)
  local hb, db = pair({ n, n }, "f32", 2)
  compare(cu.add(da, db:transpose()), cu.add(ha, hb:transpose()), "f32 2048x2048 a + b:T()")
  compare(cu.mul(da:transpose(), db), cu.mul(ha:transpose(), hb), "f32 2048x2048 a:T() * b")
end)

local rc = T.run()
print(string.format("test_elementwise_tiles_gpu: %d comparisons, seed %d", CHECKS, SEED))
os.exit(rc)
