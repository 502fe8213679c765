-- Shared helpers of the Lua contract tests (tests/lua/test_*.lua): reference conversions computed
-- in plain Lua, random values, and a check that the runtime still works after an error.
--
--   package.path = (arg[0]:match("^(.*)[/\\]") or ".") .. "/?.lua;" .. package.path
--   local S = require "support"

local T = require "cu.testing"

local S = {}

math.randomseed(os.time(), math.floor(os.clock() * 1e6))

S.DTYPES = { "f32", "f64", "f16", "bf16", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64",
  "bool", "c64", "c128" }

-- kind: "float", "int", "bool", "complex"; bits for ints; signed for ints.
S.INFO = {
  f32 = { kind = "float", size = 4 },
  f64 = { kind = "float", size = 8 },
  f16 = { kind = "float", size = 2 },
  bf16 = { kind = "float", size = 2 },
  i8 = { kind = "int", size = 1, bits = 8, signed = true },
  i16 = { kind = "int", size = 2, bits = 16, signed = true },
  i32 = { kind = "int", size = 4, bits = 32, signed = true },
  i64 = { kind = "int", size = 8, bits = 64, signed = true },
  u8 = { kind = "int", size = 1, bits = 8, signed = false },
  u16 = { kind = "int", size = 2, bits = 16, signed = false },
  u32 = { kind = "int", size = 4, bits = 32, signed = false },
  u64 = { kind = "int", size = 8, bits = 64, signed = false },
  bool = { kind = "bool", size = 1 },
  c64 = { kind = "complex", size = 8, part = "f32" },
  c128 = { kind = "complex", size = 16, part = "f64" },
}
for _, info in pairs(S.INFO) do
  if info.kind == "int" then
    if info.bits == 64 and not info.signed then
      -- u64: max is the largest value a Lua integer holds; values from 2^63 up read back as
      -- floats (the nearest), the true maximum 2^64 - 1 as 2^64 (sat_max: where floats saturate).
      info.min, info.max, info.sat_max = 0, math.maxinteger, 0x1p64
    elseif info.bits == 64 then
      info.min, info.max = math.mininteger, math.maxinteger
    elseif info.signed then
      info.min, info.max = -(1 << (info.bits - 1)), (1 << (info.bits - 1)) - 1
    else
      info.min, info.max = 0, (1 << info.bits) - 1
    end
  end
end

local nan = 0 / 0
S.nan, S.inf = nan, math.huge

function S.isnan(x) return type(x) == "number" and x ~= x end

-- Rounds a double to the nearest float with `man` mantissa bits and exponent range [emin, emax]
-- (ties to even); beyond the largest finite value it gives +-inf, below the smallest subnormal 0.
local function round_binary(x, man, emin, emax)
  if x ~= x or x == math.huge or x == -math.huge or x == 0 then return x end
  local sign = x < 0 and -1 or 1
  local a = math.abs(x)
  -- exponent e with 2^e <= a < 2^(e+1)
  local e = math.floor(math.log(a, 2))
  while 2.0 ^ e > a do e = e - 1 end
  while 2.0 ^ (e + 1) <= a do e = e + 1 end
  if e < emin then e = emin end
  local quantum = 2.0 ^ (e - man)
  local q = a / quantum -- exact: division by a power of two
  local r = math.floor(q)
  local frac = q - r
  if frac > 0.5 or (frac == 0.5 and r % 2 == 1) then r = r + 1 end
  local v = r * quantum
  local maxv = (2.0 - 2.0 ^ -man) * 2.0 ^ emax
  if v > maxv then return sign * math.huge end
  return sign * v
end

function S.f16(x) return round_binary(x, 10, -14, 15) end
function S.bf16(x) return round_binary(x, 7, -126, 127) end
function S.f32(x)
  if x ~= x then return x end
  return (string.unpack("<f", string.pack("<f", x)))
end
function S.f64(x) return x + 0.0 end

S.ROUND = { f16 = S.f16, bf16 = S.bf16, f32 = S.f32, f64 = S.f64 }

-- A u64 element as Lua reads it back: an integer below 2^63, else the nearest float. `x` is the
-- element's bit pattern as a Lua integer (negative from 2^63 up).
function S.u64(x)
  if x >= 0 then return x end
  return (x >> 32) * 0x1p32 + (x & 0xFFFFFFFF) -- both parts exact, the sum rounded once
end

-- Two's-complement wrap of an integer to `bits` (C++ modular conversion); u64 as read back.
function S.wrap(x, bits, signed)
  if bits == 64 and signed == false then return S.u64(x) end
  if bits == 64 then return x end
  local v = x & ((1 << bits) - 1)
  if signed and v >= (1 << (bits - 1)) then v = v - (1 << bits) end
  return v
end

-- Float to integer: NaN gives 0, truncation toward zero, saturation at the range.
function S.saturate(x, info)
  if x ~= x then return 0 end
  if x <= info.min then return info.min end
  if x >= (info.sat_max or info.max) then return info.sat_max or info.max end
  local t = x >= 0 and math.floor(x) or math.ceil(x)
  if t >= 0x1p63 then return t end -- u64 from 2^63 up: a float
  return math.tointeger(t)
end

-- A complex value as {re, im} from a cu.complex or a table.
local function parts(v)
  if type(v) == "table" then return v[1], v[2] end
  return v.re, v.im
end

-- The element `v` (as read back from an array of dtype `from`, i.e. a Lua number, integer,
-- boolean or {re, im} pair) converted to dtype `to` by astype/copy. Complex results are {re, im}.
function S.convert(v, from, to)
  local fi, ti = S.INFO[from], S.INFO[to]
  if fi.kind == "complex" then
    local re, im = parts(v)
    if ti.kind == "complex" then return { S.ROUND[ti.part](re), S.ROUND[ti.part](im) } end
    if ti.kind == "bool" then return re ~= 0 or im ~= 0 end
    return S.convert(re, fi.part, to)
  end
  if fi.kind == "bool" then v = v and 1 or 0 end
  if ti.kind == "complex" then return { S.ROUND[ti.part](v + 0.0), 0.0 } end
  if ti.kind == "bool" then return v ~= 0 end
  if ti.kind == "float" then return S.ROUND[to](v + 0.0) end
  -- integer target
  if from == "u64" and math.type(v) == "float" then
    v = math.tointeger(v - 0x1p64) -- a u64 element from 2^63 up (exact): its bit pattern
  end
  if math.type(v) == "integer" then return S.wrap(v, ti.bits, ti.signed) end
  return S.saturate(v, ti)
end

-- The value stored when `v` (a Lua value accepted by the dtype) is written to dtype `t`.
function S.stored(v, t)
  local info = S.INFO[t]
  if info.kind == "float" then
    if type(v) == "boolean" then v = v and 1 or 0 end
    return S.ROUND[t](v + 0.0)
  elseif info.kind == "complex" then
    if type(v) == "number" then return { S.ROUND[info.part](v + 0.0), 0.0 } end
    local re, im = parts(v)
    return { S.ROUND[info.part](re), S.ROUND[info.part](im) }
  elseif info.kind == "bool" then
    if type(v) == "boolean" then return v end
    return v ~= 0
  end
  if type(v) == "boolean" then return v and 1 or 0 end
  if t == "u64" and v >= 0x1p63 then return v + 0.0 end -- read back as a float
  return math.tointeger(v)
end

local function rnd_float(lo, hi) return lo + (hi - lo) * math.random() end

-- `n` fresh random Lua values that a `t` array accepts exactly (for bool: booleans; complex:
-- cu.complex), plus the dtype's interesting edge values.
function S.random_values(t, n)
  n = n or 40
  local info = S.INFO[t]
  local out = {}
  if info.kind == "float" then
    local special = { 0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 127.5, 128.0, -128.0,
      -129.0, 255.5, 256.0, 300.0, -300.0, 65504.0, 70000.5, -70000.5, 3.3e9, -3.3e9, 1e10,
      -1e10, 1e19, -1e19, 1e-3, 3.14159, nan, math.huge, -math.huge }
    for _, v in ipairs(special) do out[#out + 1] = v end
    for _ = 1, n do
      local r = math.random()
      if r < 0.4 then
        out[#out + 1] = rnd_float(-5, 5)
      elseif r < 0.8 then
        out[#out + 1] = rnd_float(-1e5, 1e5)
      else
        out[#out + 1] = rnd_float(-5e9, 5e9)
      end
    end
  elseif info.kind == "int" then
    local lo, hi = info.min, info.max
    -- u64: Lua integers only (values from 2^63 up read back as rounded floats, which the
    -- references here cannot wrap exactly; tests/lua/test_u64.lua covers them)
    if t == "u64" then hi = math.maxinteger end
    out = { 0, 1, lo, hi }
    if info.signed then out[#out + 1] = -1 end
    local rlo, rhi = lo, hi
    if info.bits == 64 then rlo, rhi = info.signed and -(1 << 50) or 0, 1 << 50 end
    for _ = 1, n do
      if math.random() < 0.5 then
        out[#out + 1] = math.random(math.max(rlo, -300), math.min(rhi, 300))
      else
        out[#out + 1] = math.random(rlo, rhi)
      end
    end
  elseif info.kind == "bool" then
    out = { true, false }
    for _ = 1, n do out[#out + 1] = math.random() < 0.5 end
  else
    local special = { { 0, 0 }, { 0, 1 }, { 1, 0 }, { -2.5, 3.5 }, { 300.5, -1 }, { nan, 1 },
      { 1e10, 0 } }
    for _, p in ipairs(special) do out[#out + 1] = cu.complex(p[1], p[2]) end
    for _ = 1, n do
      out[#out + 1] = cu.complex(rnd_float(-1e4, 1e4), rnd_float(-1e4, 1e4))
    end
  end
  return out
end

-- Equality of elements as read back: NaN equals NaN, complex compares parts, integers compare
-- type too (an integer dtype must give Lua integers).
function S.same(a, b)
  if type(b) == "table" or (type(b) == "userdata") then
    local br, bi = parts(b)
    if type(a) ~= "userdata" and type(a) ~= "table" then return false end
    local ar, ai = parts(a)
    return S.same(ar, br) and S.same(ai, bi)
  end
  if type(a) ~= type(b) then return false end
  if type(a) == "number" then
    if a ~= a and b ~= b then return true end
    if math.type(a) ~= math.type(b) then return false end
    return a == b
  end
  return a == b
end

function S.show(v)
  if type(v) == "table" then
    return "{" .. tostring(v[1]) .. ", " .. tostring(v[2]) .. "}"
  elseif type(v) == "userdata" then
    return "complex(" .. tostring(v.re) .. ", " .. tostring(v.im) .. ")"
  elseif type(v) == "number" then
    return string.format("%s (%s)", tostring(v), math.type(v))
  end
  return tostring(v)
end

-- Element-wise comparison of flat lists, failing with the first difference.
function S.same_list(actual, expected, what)
  T.eq(#actual, #expected, (what or "") .. " length")
  for i = 1, #expected do
    if not S.same(actual[i], expected[i]) then
      error(string.format("%s: element %d: expected %s, got %s", what or "values", i,
        S.show(expected[i]), S.show(actual[i])), 2)
    end
  end
end

-- Flattens nested tables (row-major).
function S.flatten(t, out)
  out = out or {}
  if type(t) ~= "table" then
    out[#out + 1] = t
    return out
  end
  for i = 1, #t do S.flatten(t[i], out) end
  return out
end

-- Random Lua numbers in [lo, hi).
function S.randoms(n, lo, hi)
  local t = {}
  for i = 1, n do t[i] = (lo or -100) + ((hi or 100) - (lo or -100)) * math.random() end
  return t
end

-- Random integers in [lo, hi].
function S.randints(n, lo, hi)
  local t = {}
  for i = 1, n do t[i] = math.random(lo, hi) end
  return t
end

-- A nested table of shape {rows, cols} from a flat list.
function S.matrix(flat, rows, cols)
  local m = {}
  for r = 1, rows do
    m[r] = {}
    for c = 1, cols do m[r][c] = flat[(r - 1) * cols + c] end
  end
  return m
end

-- The runtime still works: allocates, fills, copies and reads arrays on the device and host.
function S.check_runtime(what)
  local vals = S.randints(7, -1000, 1000)
  local a = cu.array(vals, "i32")
  T.eq(a:totable(), vals, (what or "after the error") .. ": device array")
  local b = cu.zeros({ 2, 3 }, "f64")
  b[2] = cu.array({ 1.5, 2.5, 3.5 }, "f64")
  T.eq(b:totable(), { { 0, 0, 0 }, { 1.5, 2.5, 3.5 } }, (what or "after the error") .. ": row write")
  local h = a:to_host()
  T.eq(h:totable(), vals, (what or "after the error") .. ": to_host")
  T.eq(a[-1], vals[7], (what or "after the error") .. ": element read")
end

-- `fn` raises an error containing every string of `needles`; then the runtime still works.
function S.raises(fn, needles, what)
  if type(needles) == "string" then needles = { needles } end
  local msg = T.raises(fn, needles[1], what)
  for i = 2, #needles do
    if not msg:find(needles[i], 1, true) then
      error(string.format("%sexpected the error to contain %q, got %q", what and (what .. ": ") or "",
        needles[i], msg), 2)
    end
  end
  S.check_runtime(what)
  return msg
end

-- `fn` raises a cu.Error of kind "released" (an object used after its release; test_errors.lua
-- checks the message itself); then the runtime still works. Returns the error.
function S.raises_released(fn, what)
  local ok, err = pcall(fn)
  local prefix = what and (what .. ": ") or ""
  if ok then error(prefix .. "expected a 'released' error, but the call succeeded", 2) end
  if cu.error_kind(err) ~= "released" then
    error(string.format("%sexpected an error of kind 'released', got %q", prefix, tostring(err)), 2)
  end
  S.check_runtime(what)
  return err
end

-- Path of the culua executable: the most negative index of `arg`.
function S.culua_path()
  local i = 0
  while arg[i - 1] ~= nil do i = i - 1 end
  return arg[i]
end

function S.shell_quote(s)
  return "'" .. s:gsub("'", "'\\''") .. "'"
end

-- Runs `source` in a child `culua --backend host` with environment assignments `env` (a string
-- such as "CULUA_HOST_MEMORY_LIMIT=64M"); returns its output (stdout and stderr) and exit code.
function S.run_child(source, env)
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write(source)
  f:close()
  local cmd = string.format("%s %s --backend host %s 2>&1", env or "", S.shell_quote(S.culua_path()),
    S.shell_quote(path))
  local p = assert(io.popen(cmd, "r"))
  local out = p:read("a")
  local _, _, code = p:close()
  os.remove(path)
  return out, code
end

-- Runs `source` in a child culua on this process's backend with extra command-line `options`;
-- returns its stdout, its stderr and its exit code.
function S.run_script_child(source, options)
  local script = os.tmpname()
  local err = os.tmpname()
  local f = assert(io.open(script, "w"))
  f:write(source)
  f:close()
  local cmd = string.format("%s --backend %s %s %s 2>%s", S.shell_quote(S.culua_path()), cu.backend,
    options or "", S.shell_quote(script), S.shell_quote(err))
  local p = assert(io.popen(cmd, "r"))
  local out = p:read("a")
  local _, _, code = p:close()
  local e = assert(io.open(err)):read("a")
  os.remove(script)
  os.remove(err)
  return out, e, code
end

-- compute-sanitizer (tests/run_gpu_sanitizer.sh sets CULUA_UNDER_SANITIZER=1) makes a kernel
-- launch wait for the device's earlier work: a check that a call returns while work is still
-- queued (or that a wait found work left) cannot hold there. S.queued(cond, msg) asserts it
-- elsewhere and only prints a note under the sanitizer.
S.UNDER_SANITIZER = os.getenv("CULUA_UNDER_SANITIZER") == "1"

function S.queued(cond, msg)
  if S.UNDER_SANITIZER then
    if not cond then print("  note: under compute-sanitizer (launches serialized), not asserted: " .. msg) end
    return
  end
  T.truthy(cond, msg)
end

-- Seconds `fn` takes by cu.clock().
function S.timed(fn)
  local t0 = cu.clock()
  local r = fn()
  return cu.clock() - t0, r
end

return S
