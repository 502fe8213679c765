-- cuBLAS products against an f64 reference computed in Lua, on moderately sized operands: every
-- dtype, batches and broadcasts, views and transposes, alpha/beta; TF32 only when asked for; dot.
-- (On the CUDA backend matmul takes device arrays only, so the reference is Lua's, not OpenBLAS.)
package.path = "tests/lua/?.lua;" .. package.path
local T = require "cu.testing"
local L = require "linalg_support"
local S = require "support"

local R = L.random_array

T.case("96x80 @ 80x72 for every dtype", function()
  for _, t in ipairs(L.FLOATS) do
    local a, b = R({ 96, 80 }, t), R({ 80, 72 }, t)
    local worst = L.check(cu.matmul(a, b), a, b, t)
    print(string.format("  %-5s worst error %.2e of the scale (tolerance %.1e)", t, worst,
      L.tolerance(t, 80)))
  end
end)

T.case("batched, broadcast, transposed and copied operands", function()
  for _, t in ipairs({ "f32", "f64", "f16", "bf16", "c64", "c128" }) do
    local a, b = R({ 4, 48, 40 }, t), R({ 40, 36 }, t)
    L.check(cu.matmul(a, b), a, b, t .. " batch @ matrix")
    local a2, b2 = R({ 2, 1, 24, 40 }, t), R({ 3, 40, 20 }, t)
    L.check(cu.matmul(a2, b2), a2, b2, t .. " broadcast batches")
    local at = R({ 4, 40, 48 }, t)
    L.check(cu.matmul(at, b, { ta = true }), at:transpose(2, 3), b, t .. " ta")
    local bt = R({ 36, 40 }, t):transpose()
    L.check(cu.matmul(a, bt), a, bt, t .. " column-major view")
    local bv = R({ 3, 48, 40 }, t):transpose(1, 2) -- {48,3,40}
    local m = R({ 40, 8 }, t)
    L.check(cu.matmul(bv, m), bv, m, t .. " batch-transposed view")
    local odd = R({ 40, 30, 3 }, t):transpose(1, 3) -- {3,30,40}, strides {1,3,90}: copied
    L.check(cu.matmul(odd, m), odd, m, t .. " copied operand")
    local v = R({ 40 }, t)
    L.check(cu.matmul(a, v), a, v, t .. " batch @ vector")
  end
end)

T.case("alpha and beta, real and complex", function()
  for _, t in ipairs(L.FLOATS) do
    local a, b = R({ 64, 50 }, t), R({ 50, 40 }, t)
    local out = R({ 64, 40 }, t)
    local old = L.values(out)
    local complex = L.COMPLEX[t]
    local alpha = complex and cu.complex(0.5, 1.5) or 0.75
    local beta = complex and cu.complex(-1, 0.5) or -1.25
    cu.matmul(a, b, { out = out, alpha = alpha, beta = beta })
    L.check(out, a, b, t .. " alpha beta", {
      alpha = complex and { 0.5, 1.5 } or { 0.75, 0 },
      beta = complex and { -1, 0.5 } or { -1.25, 0 },
      out_values = old,
    })
  end
end)

-- Values that need 12 mantissa bits: TF32 (10 bits) rounds them, plain f32 does not. The product
-- with b[k][j] = 1 + d_j 2^-12 has row sums that Lua computes in O(M K).
T.case("f32 does not use TF32; tf32=true may", function()
  local M, K, N = 256, 4096, 256
  local arows, brow = {}, {}
  local rowsum = {}
  for i = 1, M do
    local row, s = {}, 0
    for k = 1, K do
      row[k] = 1 + ((i * 7 + k * 3) % 5) * 2 ^ -12
      s = s + row[k]
    end
    arows[i], rowsum[i] = row, s
  end
  local bm = {}
  for j = 1, N do brow[j] = 1 + (j % 3) * 2 ^ -12 end
  for k = 1, K do bm[k] = brow end
  local a, b = cu.array(arows, "f32"), cu.array(bm, "f32")
  local function worst(c)
    local got = c:totable()
    local w = 0
    for i = 1, M do
      for j = 1, N do
        local ref = rowsum[i] * brow[j]
        w = math.max(w, math.abs(got[i][j] - ref) / ref)
      end
    end
    return w
  end
  local plain = worst(cu.matmul(a, b))
  local tf32 = worst(cu.matmul(a, b, { tf32 = true }))
  print(string.format("  relative error: f32 %.2e, tf32=true %.2e", plain, tf32))
  T.truthy(plain <= 1e-5, "plain f32 is f32-accurate (TF32 would be ~2e-4 off): " .. plain)
  T.truthy(tf32 <= 3e-3, "tf32 within TF32 accuracy: " .. tf32)
  if tf32 <= 1e-5 then print("  note: cuBLAS did not use TF32 tensor cores for tf32=true here") end
end)

T.case("dot: every dtype, long vectors, strided", function()
  for _, t in ipairs(L.FLOATS) do
    local x, y = R({ 100000 }, t), R({ 100000 }, t)
    L.check(cu.dot(x, y), x, y, t .. " dot")
    local m = R({ 3000, 3 }, t)
    local col = m:transpose()[2]
    L.check(cu.dot(col, col), col, col, t .. " strided dot")
  end
  local n = 1000000
  local xs = {}
  local want = 0
  for i = 1, n do
    xs[i] = (i % 201) - 100
    want = want + xs[i] * xs[i]
  end
  local x = cu.array(xs, "i32")
  T.eq(cu.dot(x, x):item(), S.wrap(want, 32, true), "i32 dot wraps")
  T.eq(cu.dot(x:astype("i64"), x:astype("i64")):item(), want, "i64 dot")
end)

T.case("integer and bool products (culua's tiled kernel) wrap exactly as numpy", function()
  -- sizes around the 64 x 64 x 16 tile: partial tiles on every side, several k steps
  for _, t in ipairs({ "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "bool" }) do
    for _, dims in ipairs({ { 1, 1, 1 }, { 63, 17, 65 }, { 128, 64, 64 }, { 130, 100, 70 }, { 5, 0, 7 } }) do
      local M, K, N = dims[1], dims[2], dims[3]
      local a, b = L.random_ints({ M, K }, t), L.random_ints({ K, N }, t)
      L.check_int(cu.matmul(a, b), a, b, string.format("%s %dx%d @ %dx%d", t, M, K, K, N))
      if K > 0 then
        local at, bt = L.random_ints({ K, M }, t), L.random_ints({ N, K }, t)
        L.check_int(cu.matmul(at, bt, { ta = true, tb = true }), at:transpose(), bt:transpose(),
          t .. " ta tb")
        L.check_int(cu.matmul(at:transpose(), b), at:transpose(), b, t .. " view")
      end
    end
    local a, b = L.random_ints({ 3, 1, 40, 33 }, t), L.random_ints({ 5, 33, 20 }, t)
    L.check_int(cu.matmul(a, b), a, b, t .. " broadcast batches")
    local v = L.random_ints({ 33 }, t)
    L.check_int(cu.matmul(a, v), a, v, t .. " batch @ vector")
    local odd = L.random_ints({ 33, 40, 5 }, t):transpose(1, 3) -- copied first
    L.check_int(cu.matmul(odd, b), odd, b, t .. " copied operand")
    if t ~= "bool" then
      local out = L.random_ints({ 3, 5, 40, 20 }, t)
      local old = L.int_values(out)
      local signed = L.INTEGERS[t][2]
      cu.matmul(a, b, { out = out, alpha = signed and -5 or 5, beta = 3 })
      L.check_int(out, a, b, t .. " alpha beta",
        { alpha = signed and -5 or 5, beta = 3, out_values = old })
    end
  end
  -- mixed dtypes: converted, then the same kernels (or cuBLAS for float results)
  local a, b = L.random_ints({ 70, 40 }, "i8"), L.random_ints({ 40, 66 }, "u8")
  local r = cu.matmul(a, b)
  T.eq(r.dtype, "i16")
  L.check_int(r, a:astype("i16"), b:astype("i16"), "i8 @ u8")
  local f = L.random_ints({ 40, 66 }, "i32", true)
  local rf = cu.matmul(R({ 70, 40 }, "f32"), f)
  T.eq(rf.dtype, "f64")
  local o16 = cu.zeros({ 70, 66 }, "i16")
  cu.matmul(a:astype("i32"), b:astype("i32"), { out = o16 })
  T.eq(o16:totable(), r:totable(), "i32 result into an i16 out")
end)

T.case("no synchronization: a dot and a matmul queue and return at once", function()
  local s = cu.stream()
  local a, b = cu.randn({ 2048, 2048 }), cu.randn({ 2048, 2048 })
  cu.matmul(a, b, { stream = s }) -- warm-up: the handle and cuBLAS's kernels are loaded
  cu.dot(a:view(-1), b:view(-1), { stream = s })
  cu.sync()
  s:sync()
  cu.sleep(200, { stream = s })
  local t0 = cu.clock()
  local c = cu.matmul(a, b, { stream = s })
  local d = cu.dot(a:view(-1), b:view(-1), { stream = s })
  local elapsed = cu.clock() - t0
  T.truthy(elapsed < 0.1, "queued without waiting: " .. elapsed .. " s")
  T.truthy(not s:done(), "still busy")
  s:sync()
  T.eq(c.shape, { 2048, 2048 })
  T.eq(d.shape, {})
end)

os.exit(T.run())
