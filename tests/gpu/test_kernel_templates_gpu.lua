-- cu.elementwise and cu.reduction on the GPU, against references computed with the built-in
-- operations: dtypes and placeholders, broadcasting, scalars, multiple outputs, out=, views, raw
-- inputs, f16 and complex values, reductions over all or some axes, and bad input.
local T = require "cu.testing"

local function maxdiff(a, b)
  return cu.abs(a:astype("f64") - b:astype("f64")):max():item()
end

-- The largest |a - b| of two complex arrays.
local function cmaxdiff(a, b)
  return cu.abs(a:astype("c128") - b:astype("c128")):max():item()
end

T.case("z = 2*x + y is exact against the built-in operations", function()
  local f = cu.elementwise("f32 x, f32 y -> f32 z", "z = 2*x + y")
  for _, n in ipairs({ 1, 3, 4, 5, 1000, 1 << 20, (1 << 20) + 3 }) do
    local x, y = cu.rand(n), cu.rand(n)
    local z = f(x, y)
    T.eq(z.shape, { n })
    T.eq(z.dtype, "f32")
    T.eq(maxdiff(z, x * 2 + y), 0, "n = " .. n)
  end
  T.eq(f.specializations, 1, "one specialization for every size")
end)

T.case("placeholders take the arrays' dtypes", function()
  local f = cu.elementwise("T x, T y -> T z", "z = x * y - x")
  for _, t in ipairs({ "f32", "f64", "i32", "i64", "u8", "i16" }) do
    local x = cu.arange(50, t)
    local y = cu.full(50, 3, t)
    local z = f(x, y)
    T.eq(z.dtype, t)
    T.eq(maxdiff(z, x * y - x), 0, t)
  end
  T.raises(function() f(cu.ones(3), cu.ones(3, "f64")) end, "T is f32 from an earlier argument but f64")
end)

T.case("broadcasting, scalars and views", function()
  -- Without contraction into fma, x * s + y rounds twice, as the built-in operations do.
  local f = cu.elementwise("f64 x, f64 y, f64 s -> f64 z", "z = x * s + y", { options = { "--fmad=false" } })
  local x = cu.rand({ 64, 33 }, "f64")
  local row = cu.rand(33, "f64")
  local z = f(x, row, 0.5)
  T.eq(z.shape, { 64, 33 })
  T.eq(maxdiff(z, x * 0.5 + row), 0)
  local col = cu.rand({ 64, 1 }, "f64")
  T.eq(maxdiff(f(x, col, 2), x * 2 + col), 0, "column broadcast")
  local xt = cu.rand({ 33, 64 }, "f64"):transpose()
  T.eq(maxdiff(f(xt, row, -1), xt * -1 + row), 0, "transposed view")
  local narrow = cu.rand({ 10, 40 }, "f64"):narrow(2, 3, 33)
  T.eq(maxdiff(f(narrow, row, 3), narrow * 3 + row), 0, "narrowed view")
  T.raises(function() f(cu.ones({ 3, 4 }, "f64"), cu.ones({ 5 }, "f64"), 1) end, "broadcast")
end)

-- A call laid out as the previous one (dtypes, shapes, strides, alignment) reuses its plan; any
-- difference plans again. A misaligned view after an aligned one of the same shape must not take
-- the 16-byte vector loads (the device would fault on them).
T.case("repeated calls reuse the plan of the same layout only", function()
  local f = cu.elementwise("T x, T y -> T z", "z = x - y")
  local big = cu.rand(4097)
  local a, b = big:narrow(1, 1, 4096), big:narrow(1, 2, 4096) -- b starts 4 bytes into a vector
  local y = cu.rand(4096)
  local m = cu.rand({ 64, 64 })
  local ad, yd = a:astype("f64"), y:astype("f64")
  for round = 1, 2 do
    T.eq(maxdiff(f(a, y), a - y), 0, "aligned, round " .. round)
    T.eq(maxdiff(f(b, y), b - y), 0, "misaligned, round " .. round)
    T.eq(maxdiff(f(b, y), b - y), 0, "misaligned again, round " .. round)
    T.eq(maxdiff(f(a, y), a - y), 0, "aligned again, round " .. round)
    T.eq(maxdiff(f(m, m:transpose()), m - m:transpose()), 0, "strided, round " .. round)
    T.eq(maxdiff(f(ad, yd), ad - yd), 0, "f64, round " .. round)
    T.eq(maxdiff(f(a, 0.5), a - 0.5), 0, "a scalar, round " .. round)
  end
  T.eq(f.specializations, 5, "vector, scalar, strided, f64 and scalar-operand specializations")
end)

-- Operand names that the generated code's own variables once shared (the chunk index culua_c, the
-- loop's culua_j, culua_first, ...): an output named c was written through the chunk index.
T.case("operands named like the generated code's variables", function()
  local f = cu.elementwise("f32 j, f32 first -> f32 c, f32 stride, f32 chunks, f32 index, f32 vec",
    "c = j + first; stride = j - first; chunks = j * first; index = 2 * j; vec = first")
  for _, n in ipairs({ 3001, 4096, 5 }) do
    local x, y = cu.rand(n), cu.rand(n)
    local c, stride, chunks, index, vec = f(x, y)
    T.eq(maxdiff(c, x + y), 0, "c, n = " .. n)
    T.eq(maxdiff(stride, x - y), 0, "stride, n = " .. n)
    T.eq(maxdiff(chunks, x * y), 0, "chunks, n = " .. n)
    T.eq(maxdiff(index, x * 2), 0, "index, n = " .. n)
    T.eq(maxdiff(vec, y), 0, "vec, n = " .. n)
  end
end)

T.case("several outputs, out= and in-place updates", function()
  local f = cu.elementwise("f32 x, f32 y -> f32 s, f32 d", "s = x + y; d = x - y")
  local x, y = cu.rand(1000), cu.rand(1000)
  local s, d = f(x, y)
  T.eq(maxdiff(s, x + y), 0)
  T.eq(maxdiff(d, x - y), 0)
  local s2, d2 = cu.empty(1000), cu.empty(1000)
  local rs, rd = f(x, y, { out = { s2, d2 } })
  T.truthy(rawequal(rs, s2) and rawequal(rd, d2), "out= arrays are returned")
  T.eq(maxdiff(s2, x + y), 0)
  -- An output the body reads is loaded first: z += x accumulates into out=.
  local acc = cu.elementwise("f32 x -> f32 z", "z += x")
  local total = cu.ones(1000)
  acc(x, { out = total })
  acc(x, { out = total })
  T.eq(maxdiff(total, (x + 1) + x), 0)
  -- In place: the output is one of the inputs.
  local inc = cu.elementwise("f32 x -> f32 y", "y = x + 1")
  local v = cu.zeros(777)
  inc(v, { out = v })
  T.eq(v:sum():item(), 777)
  T.raises(function() f(x, y, { out = s2 }) end, "out= must be a table of 2 arrays")
  T.raises(function() inc(x, { out = cu.empty(10) }) end, "has shape {10}; the inputs broadcast to {1000}")
  T.raises(function() inc(x, { out = cu.empty(1000, "f64") }) end, "must be a f32 array, got f64")
end)

T.case("f16, bf16 and complex values", function()
  local h = cu.elementwise("f16 x, f16 y -> f16 z", "z = x * y + 1.0f")
  local x, y = cu.rand(4099, "f16"), cu.rand(4099, "f16")
  local ref = (x:astype("f32") * y:astype("f32") + 1):astype("f16")
  T.eq(maxdiff(h(x, y), ref), 0, "f16 computed in f32, rounded once")
  local b = cu.elementwise("bf16 x -> f32 z", "z = x * 2")
  local xb = cu.rand(100, "bf16")
  T.eq(maxdiff(b(xb), xb:astype("f32") * 2), 0)
  local c = cu.elementwise("c64 x, c64 w -> c64 z", "z = x * w + cuda::std::conj(x)")
  local xc = cu.rand(500, "c64")
  local w = cu.complex(0.5, -2)
  local zc = c(xc, w)
  local refc = xc * w + cu.conj(xc)
  T.truthy(cu.abs(zc - refc):max():item() < 1e-5, "complex")
  local ci = cu.elementwise("c128 x -> f64 r", "r = cuda::std::abs(x)")
  local xz = cu.rand(64, "c128")
  T.truthy(maxdiff(ci(xz), cu.abs(xz)) < 1e-14, "complex abs")
end)

-- Complex values are culua's own cuda::std::complex (the complex prelude, not libcu++): the same
-- arithmetic and functions as the built-in operations.
T.case("complex arithmetic and functions equal the built-in operations", function()
  local n = 3001
  for _, dt in ipairs({ "c64", "c128" }) do
    local tol = dt == "c64" and 1e-6 or 1e-14
    local x = (cu.rand(n, dt) - cu.complex(0.5, 0.5)) * 4
    local y = (cu.rand(n, dt) - cu.complex(0.5, 0.5)) * 4
    -- Without contraction into fma, products and quotients round as the built-in kernels' do.
    local arith = cu.elementwise(dt .. " x, " .. dt .. " y -> " .. dt .. " s, " .. dt .. " d, " .. dt .. " p, "
      .. dt .. " q, " .. dt .. " c", "s = x + y; d = x - y; p = x * y; q = x / y; c = cuda::std::conj(x)",
      { options = { "--fmad=false" } })
    local s, d, p, q, c = arith(x, y)
    T.eq(p.dtype, dt)
    T.eq(cmaxdiff(s, x + y), 0, dt .. " +")
    T.eq(cmaxdiff(d, x - y), 0, dt .. " -")
    T.eq(cmaxdiff(p, x * y), 0, dt .. " *")
    T.eq(cmaxdiff(q, x / y), 0, dt .. " /")
    T.eq(cmaxdiff(c, cu.conj(x)), 0, dt .. " conj")
    for _, fn in ipairs({ "exp", "log", "sqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh", "asin", "acos",
      "atan", "asinh", "acosh", "atanh", "log10" }) do
      local f = cu.elementwise(dt .. " x -> " .. dt .. " y", "y = " .. fn .. "(x)", { options = { "--fmad=false" } })
      local ref = cu[fn](x)
      local err = cmaxdiff(f(x), ref) / cu.abs(ref):max():item()
      T.truthy(err <= tol, string.format("%s %s: relative error %g", dt, fn, err))
    end
    local real = dt == "c64" and "f32" or "f64"
    local parts = cu.elementwise(dt .. " x -> " .. real .. " a, " .. real .. " r, " .. real .. " g, " .. real .. " m",
      "a = abs(x); r = x.real() + real(x); g = x.imag() - imag(x) + arg(x); m = norm(x)")
    local a, r, g, m = parts(x)
    T.truthy(maxdiff(a, cu.abs(x)) <= tol * 4, dt .. " abs")
    T.truthy(maxdiff(r, cu.real(x) * 2) <= tol * 4, dt .. " real")
    T.truthy(maxdiff(g, cu.atan2(cu.imag(x), cu.real(x))) <= tol * 8, dt .. " arg")
    T.truthy(maxdiff(m, cu.real(x) ^ 2 + cu.imag(x) ^ 2) <= tol * 16, dt .. " norm")
    -- pow of a whole exponent is the built-in's repeated product; polar and mixed real operands.
    local misc = cu.elementwise(dt .. " x, " .. real .. " h -> " .. dt .. " p, " .. dt .. " e",
      "p = pow(x, 3) ; e = 2 * x + h - x * 0.5 + cuda::std::polar(h, h)")
    local p3, e = misc(x, 0.75)
    T.truthy(cmaxdiff(p3, x ^ 3) <= tol * 64, dt .. " pow")
    local polar = cu.complex(0.75 * math.cos(0.75), 0.75 * math.sin(0.75))
    T.truthy(cmaxdiff(e, x * 1.5 + 0.75 + polar) <= tol * 16, dt .. " mixed real operands and polar")
  end
end)

T.case("the RK4 stage of version C (scripts/device_resident_loop.lua) against the built-in operations", function()
  local N = 128
  local F, G = cu.rand({ N, N }, "c64"), cu.rand({ N, N }, "c64")
  local X, Y = cu.rand({ N, N }, "c64"), cu.rand({ N, N }, "c64")
  local aF, aG = cu.rand({ N, N }, "c64"), cu.rand({ N, N }, "c64")
  local d, h, w = cu.complex(0.9, 0.2), 0.05, 0.025
  local stage = cu.elementwise(
    "c64 F, c64 G, c64 X, c64 Y, c64 aF, c64 aG, c64 d, f32 h, f32 w -> c64 Xn, c64 Yn, c64 bF, c64 bG", [[
const cuda::std::complex<float> I(0.0f, 1.0f);
const cuda::std::complex<float> kF = -2.0f * I * X - I * d * (2.0f * Y - 1.0f);
const cuda::std::complex<float> kG = -I * (cuda::std::conj(d) * X - d * cuda::std::conj(X));
Xn = F + h * kF; Yn = G + h * kG; bF = aF + w * kF; bG = aG + w * kG;
]], { name = "rk4_stage" })
  local Xn, Yn, bF, bG = stage(F, G, X, Y, aF, aG, d, h, w)
  local I = cu.complex(0, 1)
  local kF = X * cu.complex(0, -2) - (Y * 2 - 1) * (I * d)
  local kG = (X * d:conj() - cu.conj(X) * d) * cu.complex(0, -1)
  T.truthy(cmaxdiff(Xn, F + kF * h) < 1e-5, "Xn")
  T.truthy(cmaxdiff(Yn, G + kG * h) < 1e-5, "Yn")
  T.truthy(cmaxdiff(bF, aF + kF * w) < 1e-5, "bF")
  T.truthy(cmaxdiff(bG, aG + kG * w) < 1e-5, "bG")
  -- A cold compile (a source no cache has seen): NVRTC without libcu++ takes tens of milliseconds.
  local cold = cu.elementwise("c64 x, c64 y -> c64 z",
    string.format("z = x * y + cuda::std::exp(x); // %d %d", os.time(), math.random(1 << 30)))
  T.truthy(cmaxdiff(cold(X, Y), X * Y + cu.exp(X)) < 1e-5, "cold")
  local info = cold.info
  print(string.format("  cold compile of a complex template: %.1f ms (cache %s)", info.compile_ms,
    info.cache_misses == 1 and "miss" or "hit"))
  T.eq(info.cache_misses, 1)
  T.truthy(info.compile_ms < 500, string.format("a complex template compiled in %.0f ms", info.compile_ms))
end)

T.case("complex reductions, and libcu++'s complex when the preamble asks for it", function()
  local x = cu.rand({ 64, 1000 }, "c64") - cu.complex(0.5, 0.5)
  local sumsq = cu.reduction("c64 x -> f64 y", { map = "norm(cuda::std::complex<double>(x))", reduce = "a + b",
    identity = 0, acc = "f64" })
  local ref = (cu.abs(x:astype("c128")) ^ 2):sum({ axis = 2 })
  T.truthy(maxdiff(sumsq(x, { axis = 2 }), ref) < 1e-9, "sum of |x|^2 by rows")
  local csum = cu.reduction("T x -> T y", { reduce = "a + b", identity = 0, acc = "c128" })
  local total = csum(x)
  local want = x:astype("c128"):sum():item()
  -- The c128 accumulator assigned to the c64 output (post's y = a narrows, as std::complex's =).
  T.eq(total.dtype, "c64")
  T.near(total:item().re, want.re, 1e-4)
  T.near(total:item().im, want.im, 1e-4)
  local mx = cu.reduction("c128 x -> c128 y", { reduce = "abs(a) >= abs(b) ? a : b", identity = 0 })
  local z = cu.rand(5000, "c128")
  T.near(cu.abs(mx(z)):item(), cu.abs(z):max():item(), 0)
  -- libcu++ itself in the preamble: its complex, as before the complex prelude.
  local lib = cu.elementwise("c64 x -> c64 z", "z = cuda::std::exp(x) * x",
    { preamble = "#include <cuda/std/complex>" })
  local v = x:narrow(1, 1, 4)
  T.truthy(cmaxdiff(lib(v), cu.exp(v) * v) < 1e-5, "libcu++")
end)

T.case("raw inputs index the array themselves: a 3-point stencil", function()
  local st = cu.elementwise("raw f32 u, f32 w -> f32 v",
    "v = (i > 0 && i < n - 1) ? w * (u[i - 1] + u[i + 1]) - 2 * w * u[i] : u[i]")
  local u = cu.rand(1000)
  local v = st(u, 0.25, { out = cu.empty(1000) })
  local ut = u:totable()
  local vt = v:totable()
  for _, i in ipairs({ 1, 2, 500, 999, 1000 }) do
    local e = (i > 1 and i < 1000) and 0.25 * (ut[i - 1] + ut[i + 1]) - 0.5 * ut[i] or ut[i]
    T.near(vt[i], e, 1e-6, "stencil at " .. i)
  end
  T.raises(function() st(u, 0.25) end, "needs at least one array input (or out=)")
end)

T.case("a 1 GiB elementwise call runs at memory speed and gives the right values", function()
  local n = (1 << 30) // 4
  local f = cu.elementwise("f32 x, f32 y -> f32 z", "z = 2*x + y")
  local x, y = cu.rand(n), cu.rand(n)
  local z = cu.empty(n)
  f(x, y, { out = z })
  local e0, e1 = cu.event(), cu.event()
  e0:record()
  f(x, y, { out = z })
  e1:record()
  local ms = e0:elapsed(e1)
  print(string.format("  1 GiB z = 2x + y: %.3f ms, %.0f GB/s", ms, 3 * n * 4 / ms / 1e6))
  T.eq(maxdiff(z:narrow(1, n - 1000, 1000), (x * 2 + y):narrow(1, n - 1000, 1000)), 0)
end)

T.case("reductions over everything, matching the built-in sum", function()
  local sumsq = cu.reduction("f32 x -> f32 y", { map = "x * x", reduce = "a + b", identity = 0,
    acc = "f64" })
  for _, n in ipairs({ 1, 7, 1000, 1 << 20, 3000017 }) do
    local x = cu.rand(n)
    local r = sumsq(x)
    T.eq(r.shape, {})
    local ref = (x:astype("f64") * x:astype("f64")):sum():item()
    T.near(r:item(), ref, 1e-6 * ref, "n = " .. n)
  end
  local mx = cu.reduction("T x -> T y", { reduce = "max(a, b)", identity = -math.huge })
  local x = cu.randn({ 100, 300 })
  T.eq(mx(x):item(), x:max():item())
  local mean = cu.reduction("f32 x -> f32 y", { reduce = "a + b", identity = 0, post = "y = a / n",
    acc = "f64" })
  T.near(mean(x):item(), x:mean():item(), 1e-6)
end)

T.case("reductions over axes, keepdims and views", function()
  local sum = cu.reduction("T x -> T y", { reduce = "a + b", identity = 0, acc = "f64" })
  local x = cu.rand({ 37, 129, 65 }, "f64")
  for _, axis in ipairs({ 1, 2, 3, -1 }) do
    local r = sum(x, { axis = axis })
    local ref = x:sum({ axis = axis })
    T.eq(r.shape, ref.shape)
    T.truthy(maxdiff(r, ref) < 1e-11, "axis " .. axis)
  end
  local r13 = sum(x, { axis = { 1, 3 } })
  T.eq(r13.shape, { 129 })
  T.truthy(maxdiff(r13, x:sum({ axis = 3 }):sum({ axis = 1 })) < 1e-10, "axes 1 and 3")
  local kd = sum(x, { axis = 2, keepdims = true })
  T.eq(kd.shape, { 37, 1, 65 })
  local xt = x:transpose(1, 3)
  T.truthy(maxdiff(sum(xt, { axis = 1 }), xt:sum({ axis = 1 })) < 1e-11, "transposed")
  -- Many outputs, short rows; few outputs, long rows.
  local wide = cu.rand({ 200000, 3 }, "f64")
  T.truthy(maxdiff(sum(wide, { axis = 2 }), wide:sum({ axis = 2 })) < 1e-12, "short rows")
  T.truthy(maxdiff(sum(wide, { axis = 1 }), wide:sum({ axis = 1 })) < 1e-7, "long columns")
  local out = cu.empty({ 37, 65 }, "f64")
  T.truthy(rawequal(sum(x, { axis = 2, out = out }), out), "out= is returned")
  T.raises(function() sum(x, { axis = 4 }) end, "axis 4 is out of range")
  T.raises(function() sum(x, { axis = 2, out = cu.empty(3, "f64") }) end, "the reduction gives {37,65}")
end)

T.case("a reduction of two inputs: a dot product with broadcasting", function()
  local dot = cu.reduction("f32 x, f32 y -> f64 d", { map = "(double)x * y", reduce = "a + b",
    identity = 0 })
  local a, b = cu.rand(100000), cu.rand(100000)
  T.near(dot(a, b):item(), cu.dot(a:astype("f64"), b:astype("f64")):item(), 1e-8)
  local m = cu.rand({ 50, 80 })
  local v = cu.rand(80)
  local mv = dot(m, v, { axis = 2 })
  T.truthy(maxdiff(mv, cu.matmul(m:astype("f64"), v:astype("f64"))) < 1e-5, "matrix-vector")
end)

T.case("template errors: signatures, bodies and calls", function()
  T.raises(function() cu.elementwise("f32 x, f32 y", "y = x") end, "needs one '->'")
  T.raises(function() cu.elementwise("f32 x -> f32 x", "x = x") end, "used twice")
  T.raises(function() cu.elementwise("f32 i -> f32 z", "z = i") end, "reserved")
  T.raises(function() cu.elementwise("f32 x -> raw f32 z", "z = x") end, "outputs cannot be raw")
  T.raises(function() cu.reduction("f32 x -> f32 y", { reduce = "a + b" }) end, "option 'identity': required")
  local bad = cu.elementwise("f32 x -> f32 z", "z = x +* 2")
  local ok, err = pcall(bad, cu.ones(3))
  T.truthy(not ok and err:find("test_kernel_templates_gpu.lua:" .. (debug.getinfo(1, "l").currentline - 2) .. ": error",
    1, true), err)
  local f = cu.elementwise("f32 x, f32 y -> f32 z", "z = x + y")
  T.raises(function() f(cu.ones(3)) end, "takes 2 inputs")
  T.raises(function() f(cu.ones(3), "a") end, "input 'y' must be an array or a number, got string")
  T.raises(function() f(cu.ones(3):to_host(), cu.ones(3)) end, "is a host array")
  local g = cu.elementwise("T x -> T z", "z = x")
  T.raises(function() g(1.5) end, "needs at least one array")
  -- Still usable.
  T.eq(f(cu.ones(3), 1):totable(), { 2, 2, 2 })
end)

os.exit(T.run())
