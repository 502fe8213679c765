-- One operation through the fusion generator against the precompiled kernel:
-- for a sample of operations and dtypes (hot ones with dedicated kernels, others through the
-- run-time switch kernel), the bandwidth of the precompiled kernel (cu.fuse's default for a group
-- of one operation) and of a generated kernel (cu.fuse(fn, {generate_single = true})), the first
-- call of each (the generated one compiles with NVRTC) and whether the bits agree.
--   culua --backend cuda scripts/bench/fuse_single.lua [MiB=256] [--quick]
local quick = false
local mib = 256
for _, a in ipairs(arg or {}) do
  if a == "--quick" then
    quick, mib = true, 1
  elseif tonumber(a) then
    mib = tonumber(a)
  else
    error("usage: fuse_single.lua [MiB] [--quick]", 0)
  end
end
local s = cu.stream()
local _ <close> = cu.use_stream(s)
local e0, e1 = cu.event(), cu.event()
local reps = quick and 3 or 20

local CASES = {
  { "add", "f32", true }, { "mul", "c64", true }, { "sin", "f32", true }, { "exp", "f64", true },
  { "add", "u8", false }, { "hypot", "f16", false }, { "tanh", "bf16", false }, { "mul", "c128", true },
  { "maximum", "i16", false }, { "log1p", "f32", false },
}
local UNARY = { sin = true, exp = true, tanh = true, log1p = true }

local function same_bits(a, b)
  if a.dtype == "c64" or a.dtype == "c128" then
    return same_bits(a:real(), b:real()) and same_bits(a:imag(), b:imag())
  end
  local same = a:eq(b)
  if a.dtype:match("^[fb]") then
    same = same:logical_and(a:signbit():eq(b:signbit())):logical_or(a:isnan():logical_and(b:isnan()))
  end
  return cu.all(same):item()
end

print(string.format("one operation: precompiled kernel against a generated one (%s backend, %d MiB per operand)",
  cu.backend, mib))
print(string.format("%-14s %-8s %12s %12s %8s %14s %14s %s", "operation", "dtype", "precompiled", "generated",
  "ratio", "first (pre)", "first (gen)", "bits"))
for _, c in ipairs(CASES) do
  local op, dt = c[1], c[2]
  local itemsize = ({ f32 = 4, c64 = 8, f64 = 8, u8 = 1, f16 = 2, bf16 = 2, c128 = 16, i16 = 2 })[dt]
  local n = mib * (1 << 20) // itemsize
  local x = (cu.rand(n) * 3 + 0.25):astype(dt)
  local y = (cu.rand(n) * 2 + 0.5):astype(dt)
  local out
  local f = UNARY[op] and function() cu[op](x, { out = out }) end or function() cu[op](x, y, { out = out }) end
  if UNARY[op] then out = cu[op](x) else out = cu[op](x, y) end
  local pre_fn = cu.fuse(f)
  local gen_fn = cu.fuse(f, { generate_single = true })
  local function first(fn)
    s:sync()
    local t0 = cu.clock()
    fn()
    s:sync()
    return (cu.clock() - t0) * 1e3
  end
  local first_pre, first_gen = first(pre_fn), first(gen_fn)
  local function gbps(fn)
    fn()
    e0:record(s)
    for _ = 1, reps do fn() end
    e1:record(s)
    e1:sync()
    local ms = e0:elapsed(e1) / reps
    local bytes = (UNARY[op] and 2 or 3) * n * itemsize
    return bytes / (ms * 1e6)
  end
  local pre, gen = gbps(pre_fn), gbps(gen_fn)
  pre_fn()
  local a = out:clone()
  gen_fn()
  local ok = same_bits(a, out)
  print(string.format("%-14s %-8s %9.0f GB/s %7.0f GB/s %8.3f %11.2f ms %11.2f ms %s%s", op, dt, pre, gen, gen / pre,
    first_pre, first_gen, ok and "identical" or "DIFFER", c[3] and "" or "  (switch kernel)"))
  print(string.format("RESULT single_%s_%s=%.1f,%.1f,%.2f,%s", op, dt, pre, gen, first_gen, ok and "same" or "differ"))
  x:free()
  y:free()
  out:free()
  a:free()
end
