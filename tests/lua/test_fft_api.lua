-- cu.fft on both backends: exact values of small transforms (every function, the norm modes,
-- n and axis, s and axes), result dtypes, non-contiguous and empty inputs, the shifts and the
-- frequencies; and every argument error, after which the runtime keeps working. numpy itself is
-- the reference of tests/numpy/test_fft_numpy.lua.
package.path = (arg and arg[0] and arg[0]:match("^(.*)[/\\]") or "tests/lua") .. "/?.lua;" .. package.path
local T = require "cu.testing"
local S = require "support"

local fft = cu.fft

-- The flat values of an array as {re, im} pairs (reals get im = 0).
local function pairs_of(a)
  local out = {}
  local function walk(t)
    if type(t) == "table" and getmetatable(t) == nil then
      for _, v in ipairs(t) do walk(v) end
    elseif type(t) == "number" then
      out[#out + 1] = { t, 0 }
    else
      out[#out + 1] = { t.re, t.im }
    end
  end
  walk(a:totable())
  return out
end

-- Values within tol of `want` (a flat list of numbers or {re, im} pairs).
local function check(a, want, tol, what)
  local have = pairs_of(a)
  T.eq(#have, #want, (what or "") .. " size")
  for i, w in ipairs(want) do
    if type(w) == "number" then w = { w, 0 } end
    T.near(have[i], w, tol or 1e-12, string.format("%s element %d", what or "", i))
  end
end

T.case("fft, ifft, rfft, irfft, hfft and ihfft of small arrays are exact", function()
  for _, t in ipairs({ "f64", "f32" }) do
    local tol = t == "f64" and 1e-12 or 1e-5
    local x = cu.array({ 1, 2, 3, 4 }, t)
    check(fft.fft(x), { 10, { -2, 2 }, -2, { -2, -2 } }, tol, t .. " fft")
    check(fft.ifft(fft.fft(x)), { 1, 2, 3, 4 }, tol, t .. " ifft")
    check(fft.rfft(x), { 10, { -2, 2 }, -2 }, tol, t .. " rfft")
    check(fft.irfft(fft.rfft(x)), { 1, 2, 3, 4 }, tol, t .. " irfft")
    check(fft.fft(cu.array({ 1, 2, 3 }, t)), { 6, { -1.5, math.sqrt(3) / 2 }, { -1.5, -math.sqrt(3) / 2 } },
      tol, t .. " fft of 3")
    check(fft.hfft(cu.array({ 1, 2, 3 }, t)), { 8, -2, 0, -2 }, tol, t .. " hfft")
    check(fft.ihfft(cu.array({ 8, -2, 0, -2 }, t)), { 1, 2, 3 }, tol, t .. " ihfft")
    -- irfft ignores the imaginary parts of the zero frequency and (even n) the last one
    local c = cu.array({ cu.complex(1, 5), cu.complex(2, 1), cu.complex(3, 7) }, t == "f64" and "c128" or "c64")
    check(fft.irfft(c), { 2, -1, 0, 0 }, tol, t .. " irfft of a non-Hermitian row")
    check(fft.fft(cu.array({ 5 }, t)), { 5 }, tol, t .. " length 1")
  end
end)

T.case("norm modes scale as numpy", function()
  local ones = cu.ones({ 4 }, "f64")
  check(fft.fft(ones), { 4, 0, 0, 0 }, 1e-12, "backward")
  check(fft.fft(ones, { norm = "backward" }), { 4, 0, 0, 0 }, 1e-12, "backward by name")
  check(fft.fft(ones, { norm = "ortho" }), { 2, 0, 0, 0 }, 1e-12, "ortho")
  check(fft.fft(ones, { norm = "forward" }), { 1, 0, 0, 0 }, 1e-12, "forward")
  local delta = cu.array({ 4, 0, 0, 0 }, "c128")
  check(fft.ifft(delta), { 1, 1, 1, 1 }, 1e-12, "ifft backward")
  check(fft.ifft(delta, { norm = "ortho" }), { 2, 2, 2, 2 }, 1e-12, "ifft ortho")
  check(fft.ifft(delta, { norm = "forward" }), { 4, 4, 4, 4 }, 1e-12, "ifft forward")
  check(fft.irfft(cu.array({ 4, 0, 0 }, "c128"), { norm = "forward" }), { 4, 4, 4, 4 }, 1e-12,
    "irfft forward")
  -- hfft/ihfft swap the directions: hfft's default scales by 1, its "forward" by 1/n
  check(fft.hfft(cu.array({ 1, 2, 3 }, "f64"), { norm = "forward" }), { 2, -0.5, 0, -0.5 }, 1e-12,
    "hfft forward")
  check(fft.ihfft(cu.array({ 8, -2, 0, -2 }, "f64"), { norm = "forward" }), { 4, 8, 12 }, 1e-12,
    "ihfft forward")
  check(fft.ifftn(fft.fftn(cu.arange(6, "f64"):reshape({ 2, 3 }), { norm = "ortho" }),
    { norm = "ortho" }), { 0, 1, 2, 3, 4, 5 }, 1e-12, "fftn/ifftn ortho")
end)

T.case("result dtypes: c64 for f32-precision input, c128 for the rest", function()
  local want = { f32 = "c64", f16 = "c64", bf16 = "c64", c64 = "c64", f64 = "c128", c128 = "c128",
    i32 = "c128", u8 = "c128", bool = "c128", i64 = "c128" }
  for t, r in pairs(want) do
    local x = cu.ones({ 4 }, t)
    local y = fft.fft(x)
    T.eq(y.dtype, r, t .. " fft")
    check(y, { 4, 0, 0, 0 }, 1e-6, t .. " fft values")
    T.eq(fft.ifft(x).dtype, r, t .. " ifft")
    T.eq(fft.fftn(x).dtype, r, t .. " fftn")
    if not t:match("^c") then
      T.eq(fft.rfft(x).dtype, r, t .. " rfft")
      T.eq(fft.ihfft(x).dtype, r, t .. " ihfft")
      local real = (r == "c64") and "f32" or "f64"
      T.eq(fft.irfft(x).dtype, real, t .. " irfft")
      T.eq(fft.hfft(x).dtype, real, t .. " hfft")
    end
  end
end)

T.case("n crops and zero-pads; axis picks the dimension", function()
  local x = cu.array({ 1, 2, 3, 4 }, "f64")
  check(fft.fft(x, { n = 2 }), { 3, -1 }, 1e-12, "crop")
  check(fft.fft(x, { n = 6 }), pairs_of(fft.fft(cu.array({ 1, 2, 3, 4, 0, 0 }, "f64"))), 1e-12, "pad")
  check(fft.rfft(x, { n = 3 }), pairs_of(fft.rfft(cu.array({ 1, 2, 3 }, "f64"))), 1e-12, "rfft crop")
  T.eq(fft.irfft(fft.rfft(x), { n = 5 }).shape, { 5 })
  T.eq(fft.irfft(fft.rfft(x), { n = 3 }).shape, { 3 })
  check(fft.fft(cu.zeros({ 0 }, "f64"), { n = 3 }), { 0, 0, 0 }, 0, "an empty axis padded")
  local m = cu.array({ { 1, 2, 3 }, { 4, 5, 6 } }, "f64")
  check(fft.fft(m, { axis = 1 }), { 5, 7, 9, -3, -3, -3 }, 1e-12, "axis 1")
  check(fft.fft(m, { axis = -2 }), { 5, 7, 9, -3, -3, -3 }, 1e-12, "axis -2")
  local r3 = math.sqrt(3) / 2
  -- a zero row added: X1 = a + b w, X2 = a + b w^2 with w = exp(-2 pi i / 3)
  check(fft.fft(m, { axis = 1, n = 3 }), { 5, 7, 9, { -1, -4 * r3 }, { -0.5, -5 * r3 }, { 0, -6 * r3 },
    { -1, 4 * r3 }, { -0.5, 5 * r3 }, { 0, 6 * r3 } }, 1e-12,
    "axis 1 padded")
  T.eq(fft.fft(m, { axis = 1, n = 3 }).shape, { 3, 3 })
  T.eq(fft.rfft(m, { axis = 1 }).shape, { 2, 3 })
  T.eq(fft.rfft(m).shape, { 2, 2 })
end)

T.case("fftn, fft2, rfftn, irfftn with s and axes", function()
  local x = cu.arange(6, "f64"):reshape({ 2, 3 })
  check(fft.fft2(x), { 15, { -3, math.sqrt(3) }, { -3, -math.sqrt(3) }, -9, 0, 0 }, 1e-12, "fft2")
  check(fft.fftn(x), pairs_of(fft.fft2(x)), 1e-12, "fftn = fft2 on 2-D")
  check(fft.fftn(x, { axes = { 2 } }), pairs_of(fft.fft(x)), 1e-12, "fftn over one axis")
  check(fft.fftn(x, { axes = 1 }), pairs_of(fft.fft(x, { axis = 1 })), 1e-12, "axes as a number")
  check(fft.ifft2(fft.fft2(x)), { 0, 1, 2, 3, 4, 5 }, 1e-12, "ifft2")
  check(fft.irfftn(fft.rfftn(x), { s = { 2, 3 } }), { 0, 1, 2, 3, 4, 5 }, 1e-12, "irfftn(rfftn)")
  check(fft.irfft2(fft.rfft2(x), { s = { 2, 3 } }), { 0, 1, 2, 3, 4, 5 }, 1e-12, "irfft2(rfft2)")
  T.eq(fft.rfftn(x).shape, { 2, 2 })
  T.eq(fft.irfftn(fft.rfftn(x)).shape, { 2, 2 })
  T.eq(fft.fftn(x, { s = { 4 } }).shape, { 2, 4 }) -- s alone: the last len(s) axes
  T.eq(fft.fftn(x, { s = { 3, 5 } }).shape, { 3, 5 })
  T.eq(fft.fftn(x, { s = { -1, 4 } }).shape, { 2, 4 }) -- -1: the axis's own length
  T.eq(fft.fftn(x, { s = { 4, 2 }, axes = { 2, 1 } }).shape, { 2, 4 })
  local cube = cu.arange(24, "f32"):reshape({ 2, 3, 4 })
  T.eq(fft.fftn(cube).shape, { 2, 3, 4 })
  T.eq(fft.fftn(cube).dtype, "c64")
  check(fft.fftn(cube, { axes = { 1, 3 } }), pairs_of(fft.fft(fft.fft(cube, { axis = 3 }), { axis = 1 })), 1e-3,
    "fftn over axes 1 and 3")
end)

T.case("non-contiguous views are copied first", function()
  local m = cu.arange(12, "f64"):reshape({ 3, 4 })
  local t = m:transpose(1, 2) -- 4 x 3, columns of m
  T.eq(t.is_contiguous, false)
  check(fft.fft(t), pairs_of(fft.fft(t:contiguous())), 1e-12, "transposed")
  check(fft.rfft(t, { axis = 1 }), pairs_of(fft.rfft(t:contiguous(), { axis = 1 })), 1e-12, "transposed axis 1")
  local s = m:narrow(2, 2, 2) -- columns 2..3
  check(fft.fft(s), pairs_of(fft.fft(s:contiguous())), 1e-12, "narrowed")
  check(fft.fftn(t), pairs_of(fft.fftn(t:contiguous())), 1e-12, "fftn transposed")
  -- the input is not changed (irfft and hfft work on copies)
  local c = fft.rfft(m)
  local before = pairs_of(c)
  fft.irfft(c)
  fft.hfft(c)
  check(c, before, 0, "irfft's input unchanged")
end)

T.case("empty batches give empty results; an empty axis is an error as in numpy", function()
  local e = fft.fft(cu.zeros({ 0, 4 }, "f32"))
  T.eq(e.shape, { 0, 4 })
  T.eq(e.dtype, "c64")
  T.eq(fft.rfft(cu.zeros({ 3, 0 }, "f64"), { axis = 1 }).shape, { 2, 0 })
  T.raises(function() fft.fft(cu.zeros({ 0 }, "f64")) end, "0 data points along axis 1")
  T.raises(function() fft.irfft(cu.zeros({ 1 }, "c128")) end, "0 data points")
  T.raises(function() fft.fftn(cu.zeros({ 2, 0 }, "f64")) end, "0 data points along axis 2")
end)

T.case("odd sizes and large primes (Bluestein on the host) match a direct DFT", function()
  for _, n in ipairs({ 5, 7, 9, 15, 101, 1009, 3 * 4099, 65537 }) do
    local vals = {}
    for i = 1, n do vals[i] = math.sin(i * 0.7) + 0.25 * math.cos(i * 1.3) end
    local y = pairs_of(fft.fft(cu.array(vals, "f64")))
    local scale = 0
    for _, v in ipairs(vals) do scale = scale + math.abs(v) end
    for _, k in ipairs({ 0, 1, math.floor(n / 2), n - 1 }) do
      local re, im = 0, 0
      for j = 0, n - 1 do
        local w = -2 * math.pi * ((j * k) % n) / n
        re = re + vals[j + 1] * math.cos(w)
        im = im + vals[j + 1] * math.sin(w)
      end
      T.near(y[k + 1], { re, im }, 1e-12 * scale * math.log(n, 2), string.format("n=%d k=%d", n, k))
    end
  end
end)

T.case("fftshift, ifftshift, fftfreq and rfftfreq", function()
  local x = cu.arange(5, "f64")
  T.eq(fft.fftshift(x):totable(), { 3, 4, 0, 1, 2 })
  T.eq(fft.ifftshift(x):totable(), { 2, 3, 4, 0, 1 })
  T.eq(fft.ifftshift(fft.fftshift(x)):totable(), { 0, 1, 2, 3, 4 })
  T.eq(fft.fftshift(cu.arange(4, "i32")):totable(), { 2, 3, 0, 1 })
  local m = cu.arange(6, "i64"):reshape({ 2, 3 })
  T.eq(fft.fftshift(m):totable(), { { 5, 3, 4 }, { 2, 0, 1 } })
  T.eq(fft.fftshift(m, { axes = 2 }):totable(), { { 2, 0, 1 }, { 5, 3, 4 } })
  T.eq(fft.fftshift(m, { axes = { -2 } }):totable(), { { 3, 4, 5 }, { 0, 1, 2 } })
  T.eq(fft.fftshift(m:transpose(1, 2)):totable(), { { 5, 2 }, { 3, 0 }, { 4, 1 } })
  T.eq(fft.fftshift(cu.zeros({ 0 }, "f32")).shape, { 0 })
  T.eq(fft.fftfreq(4):totable(), { 0, 0.25, -0.5, -0.25 })
  T.eq(fft.fftfreq(5, 0.5):totable(), { 0, 0.4, 0.8, -0.8, -0.4 })
  T.eq(fft.fftfreq(5, { d = 0.5 }):totable(), { 0, 0.4, 0.8, -0.8, -0.4 })
  T.eq(fft.fftfreq(1):totable(), { 0 })
  T.eq(fft.rfftfreq(4):totable(), { 0, 0.25, 0.5 })
  T.eq(fft.rfftfreq(5, 2):totable(), { 0, 0.1, 0.2 })
  T.eq(fft.fftfreq(4).dtype, "f64")
  T.eq(fft.fftfreq(4, { dtype = "f32" }).dtype, "f32")
  T.eq(fft.fftfreq(4, { dtype = "f32" }).location, "device")
end)

T.case("bad arguments name the argument or option; the runtime keeps working", function()
  local x = cu.array({ 1, 2, 3, 4 }, "f32")
  T.raises(function() fft.fft(x, { norm = "both" }) end,
    "bad argument #2 to 'fft' (option 'norm': \"backward\", \"ortho\" or \"forward\" expected, got \"both\")")
  T.raises(function() fft.fft(x, { norm = 1 }) end, "option 'norm'")
  T.raises(function() fft.fft(x, { axis = 2 }) end,
    "bad argument #2 to 'fft' (option 'axis': axis 2 is out of range for a 1-d array")
  T.raises(function() fft.fft(x, { axis = 0 }) end, "option 'axis': axis 0 is out of range")
  T.raises(function() fft.fft(x, { n = 0 }) end,
    "bad argument #2 to 'fft' (option 'n': must be a positive integer, got 0)")
  T.raises(function() fft.fft(x, { n = -3 }) end, "option 'n'")
  T.raises(function() fft.fft(x, { n = 2.5 }) end, "option 'n': must be an integer")
  T.raises(function() fft.fft(x, { n = "4" }) end, "option 'n'")
  T.raises(function() fft.fft(x, { m = 4 }) end, "bad argument #2 to 'fft'")
  T.raises(function() fft.fft(x, 4) end, "bad argument #2 to 'fft'")
  T.raises(function() fft.fft(x, {}, 1) end, "bad argument #3 to 'fft'")
  T.raises(function() fft.fft({ 1, 2 }) end, "bad argument #1 to 'fft' (cu.Array expected")
  T.raises(function() fft.fft(cu.full({}, 1, "f32")) end, "bad argument #1 to 'fft'")
  T.raises(function() fft.rfft(cu.ones({ 4 }, "c64")) end,
    "bad argument #1 to 'rfft' (a real array expected, got c64")
  T.raises(function() fft.ihfft(cu.ones({ 4 }, "c128")) end, "bad argument #1 to 'ihfft'")
  T.raises(function() fft.fft(cu.host.ones({ 4 }, "f32")) end, "host array")
  T.raises(function() fft.fftn(x, { axes = { 1, 1 } }) end, "option 'axes': axis 1 appears twice")
  T.raises(function() fft.fftn(x, { axes = { 2 } }) end, "option 'axes': axis 2 is out of range")
  T.raises(function() fft.fftn(x, { axes = "x" }) end, "option 'axes'")
  T.raises(function() fft.fftn(x, { s = { 2, 2 } }) end, "option 's'")
  T.raises(function() fft.fftn(x, { s = { 0 } }) end, "option 's'")
  T.raises(function() fft.fftn(x, { s = { 2 }, axes = { 1, -1 } }) end, "axis 1 appears twice")
  T.raises(function() fft.fft2(x) end, "bad argument #1 to 'fft2'")
  T.raises(function() fft.fftn(cu.full({}, 1, "f32")) end, "bad argument #1 to 'fftn'")
  T.raises(function() fft.fftshift(x, { axes = 3 }) end, "bad argument #2 to 'fftshift' (option 'axes'")
  T.raises(function() fft.fftfreq(0) end, "bad argument #1 to 'fftfreq'")
  T.raises(function() fft.fftfreq(2.5) end, "bad argument #1 to 'fftfreq'")
  T.raises(function() fft.fftfreq(4, 0) end, "bad argument #2 to 'fftfreq'")
  T.raises(function() fft.fftfreq(4, { d = 0 }) end, "option 'd'")
  T.raises(function() fft.fftfreq(4, { dtype = "i32" }) end, "option 'dtype'")
  T.raises(function() fft.rfftfreq(4, "x") end, "bad argument #2 to 'rfftfreq'")
  -- still usable
  check(fft.fft(x), { 10, { -2, 2 }, -2, { -2, -2 } }, 1e-5, "after the errors")
end)

T.case("transforms captured in a graph replay on the arrays' current values", function()
  -- lengths not used before in this script: on the GPU, cuFFT's plans are made during the capture
  local n = 77
  local x = cu.rand({ 3, n }, "f64")
  local back = cu.zeros({ 3, n }, "f64")
  local spectrum = cu.zeros({ 3, n }, "c128")
  local g = cu.graph(function()
    cu.copy(spectrum, fft.fft(x, { norm = "ortho" }))
    cu.copy(back, fft.irfft(fft.rfft(x), { n = n }))
  end)
  for _ = 1, 2 do
    x:fill(0)
    x[2] = cu.rand({ n }, "f64")
    g:launch()
    cu.sync()
    check(back, pairs_of(x), 1e-12, "irfft(rfft(x)) in the graph")
    check(spectrum, pairs_of(fft.fft(x, { norm = "ortho" })), 1e-12, "fft in the graph")
  end
  g:free()
end)

T.case("a capture that makes a plan while the plan cache is full destroys none (cuFFT's free would wait)", function()
  -- 40 lengths fill culua's cache of 32 plans; the capture then makes a 41st. Destroying the least
  -- recently used plan there waits for the device, which, under compute-sanitizer, invalidated the
  -- capture; the cache now waits for the next plan made outside a capture.
  for n = 20, 59 do fft.fft(cu.rand({ 2, n }, "f64")) end
  local n = 93
  local x = cu.rand({ 2, n }, "f64")
  local out = cu.zeros({ 2, n }, "c128")
  local g = cu.graph(function() cu.copy(out, fft.fft(x)) end)
  g:launch()
  cu.sync()
  check(out, pairs_of(fft.fft(x)), 1e-12, "fft planned during the capture")
  g:free()
  fft.fft(cu.rand({ 2, 61 }, "f64")) -- a plan outside a capture: the cache shrinks back
  S.check_runtime("after the full plan cache")
end)

T.case("a plan cuFFT cannot make during a capture is a clear error; made before, it is kept", function()
  local n = 131 -- a prime above 127: cuFFT makes its plan with Bluestein's algorithm
  local x = cu.rand({ 2, n }, "f64")
  local ok, err = pcall(cu.graph, function() fft.fft(x) end)
  if cu.backend == "cuda" then
    T.eq(ok, false)
    T.truthy(tostring(err):find("while a graph is captured", 1, true), tostring(err))
  else
    T.truthy(ok, tostring(err))
  end
  local want = pairs_of(fft.fft(x)) -- the plan, made outside a capture, is kept
  local out = cu.zeros({ 2, n }, "c128")
  local g = cu.graph(function() cu.copy(out, fft.fft(x)) end)
  g:launch()
  cu.sync()
  check(out, want, 1e-12, "fft of a planned length in the graph")
  g:free()
end)

T.case("many rows split over the host pool give the same result as one by one", function()
  local rows, n = 64, 48
  local m = cu.rand({ rows, n }, "f64")
  local all = pairs_of(fft.fft(m))
  for _, r in ipairs({ 1, 17, rows }) do
    local one = pairs_of(fft.fft(m[r]))
    for k = 1, n do T.near(all[(r - 1) * n + k], one[k], 0, string.format("row %d k %d", r, k)) end
  end
  S.check_runtime("after the pool test")
end)

os.exit(T.run())
