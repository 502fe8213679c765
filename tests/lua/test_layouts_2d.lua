-- Two-dimensional layouts of the element-wise operations, copies and casts, and reductions on a
-- stream's scratch, against references computed here in plain Lua from :totable(). On CUDA these
-- take kernels of their own (src/kernels/elementwise_cuda.cuh: rows and tiles; cuda_copy.cu:
-- vectors and transposed tiles; reduce_cuda.cu: the stream's counters), so the shapes cross their
-- edges: tile sizes (32), vector widths (16 bytes), odd sizes, unaligned slices.
package.path = (arg and arg[0] and arg[0]:match("^(.*)[/\\]") or "tests/lua") .. "/?.lua;" .. package.path
local T = require "cu.testing"
local S = require "support"

-- An r x c array of `dtype` whose element (i, j) is f(i, j) (small integers: exact in every dtype).
local function make(r, c, dtype, f)
  local t = {}
  for i = 1, r do
    local row = {}
    for j = 1, c do row[j] = f(i, j) end
    t[i] = row
  end
  return cu.array(t, dtype)
end

local function value(v)
  if type(v) == "boolean" or type(v) == "number" then return v end
  return v.re -- complex (every value here is real)
end

-- Checks got (an r x c array) against want(i, j).
local function check(got, want, what)
  local t = got:totable()
  T.eq(#t, got.shape[1], what .. ": rows")
  for i = 1, #t do
    for j = 1, #t[i] do
      local g, w = value(t[i][j]), want(i, j)
      if g ~= w then
        error(string.format("%s: element (%d, %d) is %s, expected %s", what, i, j, tostring(g), tostring(w)), 2)
      end
    end
  end
end

local SHAPES = { { 5, 8 }, { 33, 64 }, { 7, 13 }, { 64, 40 }, { 1, 9 }, { 40, 1 } }
local DTYPES = { "f32", "f64", "f16", "bf16", "i8", "i32", "i64", "u8", "u16", "u32", "u64", "c64", "c128" }
local function av(i, j) return (i * 7 + j * 3) % 17 end
local function bv(i, j) return (i + 2 * j) % 5 + 1 end

T.case("broadcast rows and columns, scalars, slices: every dtype", function()
  for _, dt in ipairs(DTYPES) do
    for _, sh in ipairs(SHAPES) do
      local r, c = sh[1], sh[2]
      local what = string.format("%s %dx%d", dt, r, c)
      local a = make(r, c, dt, av)
      local row = make(1, c, dt, function(_, j) return bv(1, j) end):view({ c })
      local col = make(r, 1, dt, function(i) return bv(i, 1) end)
      check(a + row, function(i, j) return av(i, j) + bv(1, j) end, what .. " a + row")
      check(row * a, function(i, j) return av(i, j) * bv(1, j) end, what .. " row * a")
      local bits = S.INFO[dt].kind == "int" and not S.INFO[dt].signed and S.INFO[dt].bits
      check(a - col, function(i, j)
        local d = av(i, j) - bv(i, 1)
        return bits and S.wrap(d, bits, false) or d -- unsigned integers wrap
      end, what .. " a - col")
      if S.INFO[dt].kind ~= "complex" then
        check(cu.gt(a, row), function(i, j) return av(i, j) > bv(1, j) end, what .. " a > row")
        check(cu.maximum(col, row), function(i, j) return math.max(bv(i, 1), bv(1, j)) end, what .. " max(col, row)")
      end
      -- A slice of wider rows (row stride > cols), aligned and not.
      local wide = make(r, c + 8, dt, av)
      check(wide:narrow(2, 1, c) + row, function(i, j) return av(i, j) + bv(1, j) end, what .. " slice + row")
      if c > 1 then
        local rs = row:narrow(1, 2, c - 1)
        check(wide:narrow(2, 2, c - 1) + rs, function(i, j) return av(i, j + 1) + bv(1, j + 1) end,
          what .. " unaligned slice + row")
      end
      -- Into an out= array.
      local out = cu.empty({ r, c }, dt)
      cu.add(a, col, { out = out })
      check(out, function(i, j) return av(i, j) + bv(i, 1) end, what .. " add(a, col, {out})")
    end
  end
end)

T.case("transposed operands: one, both, with a scalar, with a broadcast", function()
  for _, dt in ipairs(DTYPES) do
    for _, sh in ipairs(SHAPES) do
      local r, c = sh[1], sh[2]
      local what = string.format("%s %dx%d", dt, r, c)
      local a = make(r, c, dt, av)
      local bt = make(c, r, dt, function(i, j) return bv(j, i) end) -- bt:transpose()[i][j] = bv(i, j)
      local b = bt:transpose()
      check(a + b, function(i, j) return av(i, j) + bv(i, j) end, what .. " a + b:transpose()")
      check(b * a, function(i, j) return bv(i, j) * av(i, j) end, what .. " b:transpose() * a")
      check(b - 1, function(i, j) return bv(i, j) - 1 end, what .. " b:transpose() - 1")
      local at = make(c, r, dt, function(i, j) return av(j, i) end):transpose()
      check(at + b, function(i, j) return av(i, j) + bv(i, j) end, what .. " a:transpose() + b:transpose()")
      local row = make(1, c, dt, function(_, j) return bv(1, j) end):view({ c })
      check(b + row, function(i, j) return bv(i, j) + bv(1, j) end, what .. " b:transpose() + row")
      if S.INFO[dt].kind ~= "complex" then
        check(cu.le(b, a), function(i, j) return bv(i, j) <= av(i, j) end, what .. " b:transpose() <= a")
      end
    end
  end
end)

-- The CUDA tiles are 256 bytes of rows by 64 columns (64 x 64 f32, 128 x 64 f16, 32 x 64 f64 and
-- c64), 16-byte vectors: shapes across those edges, views at offsets (unaligned), the output
-- transposed.
T.case("transposed operands across the edges of 256-byte tiles", function()
  for _, dt in ipairs({ "f32", "f64", "f16", "c64", "i64" }) do
    for _, sh in ipairs({ { 130, 70 }, { 65, 129 }, { 33, 256 } }) do
      local r, c = sh[1], sh[2]
      local what = string.format("%s %dx%d", dt, r, c)
      local a = make(r, c, dt, av)
      local b = make(c, r, dt, function(i, j) return bv(j, i) end):transpose()
      check(a + b, function(i, j) return av(i, j) + bv(i, j) end, what .. " a + b:transpose()")
      local at = make(c, r, dt, function(i, j) return av(j, i) end):transpose()
      check(cu.sub(at, b), function(i, j) return av(i, j) - bv(i, j) end, what .. " a:transpose() - b:transpose()")
      local wide = make(c + 3, r + 2, dt, function(i, j) return bv(j - 1, i - 2) end)
      local bo = wide:narrow(1, 3, c):narrow(2, 2, r):transpose() -- bo[i][j] = bv(i, j), at an offset
      check(a * bo, function(i, j) return av(i, j) * bv(i, j) end, what .. " a * (b at an offset):transpose()")
      local out = cu.zeros({ c, r }, dt)
      cu.add(a, bo, { out = out:transpose() })
      check(out, function(i, j) return av(j, i) + bv(j, i) end, what .. " add into out:transpose()")
    end
  end
end)

T.case("mixed dtypes and outputs of another dtype still compute right", function()
  local a = make(33, 40, "f32", av)
  local b = make(40, 33, "i32", function(i, j) return bv(j, i) end):transpose()
  check(a + b, function(i, j) return av(i, j) + bv(i, j) end, "f32 + i32:transpose()")
  local out = cu.empty({ 33, 40 }, "f64")
  cu.add(a, make(40, 33, "f32", function(i, j) return bv(j, i) end):transpose(), { out = out })
  check(out, function(i, j) return av(i, j) + bv(i, j) end, "f32 + f32:transpose() into f64")
end)

T.case("copies: transposed both ways, every element size, odd shapes", function()
  for _, dt in ipairs({ "u8", "f16", "f32", "f64", "c128", "bool" }) do
    for _, sh in ipairs({ { 33, 70 }, { 32, 32 }, { 1, 5 }, { 65, 3 }, { 100, 257 } }) do
      local r, c = sh[1], sh[2]
      local f = dt == "bool" and function(i, j) return (i + j) % 3 == 0 end or av
      local src = make(c, r, dt, function(i, j) return f(j, i) end)
      local what = string.format("%s %dx%d", dt, r, c)
      check(src:transpose():contiguous(), f, what .. " src:transpose():contiguous()")
      local dst = cu.empty({ c, r }, dt)
      cu.copy(dst:transpose(), make(r, c, dt, f))
      check(dst:transpose():contiguous(), f, what .. " copy into dst:transpose()")
      check(dst, function(i, j) return f(j, i) end, what .. " dst")
    end
  end
end)

T.case("casts between contiguous arrays: vectors, tails, unaligned starts", function()
  local pairs_ = { { "f32", "bf16" }, { "f32", "f16" }, { "f64", "f32" }, { "i32", "f32" },
    { "u8", "f32" }, { "f32", "u8" }, { "f16", "f64" }, { "i64", "i8" }, { "bool", "f32" },
    { "f32", "bool" }, { "i16", "c64" }, { "c128", "c64" }, { "u32", "i64" }, { "f16", "bf16" } }
  for _, p in ipairs(pairs_) do
    local from, to = p[1], p[2]
    for _, n in ipairs({ 1, 7, 8, 33, 1000, 4099 }) do
      local f = from == "bool" and function(k) return k % 3 == 0 end or function(k) return (k * 5) % 23 end
      local t = {}
      for k = 1, n + 3 do t[k] = f(k) end
      local src = cu.array(t, from)
      for _, start in ipairs({ 1, 2, 4 }) do
        local view = src:narrow(1, start, n)
        local got = view:astype(to):totable()
        for k = 1, n do
          local want = f(k + start - 1)
          if to == "bool" then
            want = want ~= 0
          elseif from == "bool" then
            want = want and 1 or 0
          end
          local g = value(got[k])
          if g ~= want then
            error(string.format("%s -> %s, n %d, start %d: element %d is %s, expected %s", from, to, n, start, k,
              tostring(g), tostring(want)))
          end
        end
      end
    end
  end
end)

T.case("reductions one after another, on several streams, captured and not", function()
  local s1, s2 = cu.stream(), cu.stream()
  local results = {}
  for k = 1, 40 do
    local n = k * 9973
    local s = k % 2 == 0 and s1 or s2
    local a = cu.ones(n, "f64", { stream = s })
    results[#results + 1] = { a:sum({ stream = s }), n }
    results[#results + 1] = { a:max({ stream = s }), 1 }
  end
  for _, r in ipairs(results) do T.eq(r[1]:item(), r[2]) end
  -- Axis reductions split over blocks (few long rows), and columns.
  local m = cu.ones({ 3, 300000 }, "f32")
  local rows = m:sum({ axis = 2 }):totable()
  for i = 1, 3 do T.eq(rows[i], 300000) end
  local cols = cu.ones({ 200000, 2 }, "f64"):sum({ axis = 1 }):totable()
  T.eq(cols, { 200000, 200000 })
  -- A captured sum replayed between sums that are not captured.
  local x = cu.ones(1 << 20, "f32")
  local out = cu.empty({}, "f32")
  local g = cu.graph(function() x:sum({ out = out }) end)
  for k = 1, 5 do
    g:launch()
    T.eq(out:item(), 1 << 20, "captured sum, replay " .. k)
    T.eq((x * k):sum():item(), k * (1 << 20), "sum between replays")
  end
end)

os.exit(T.run())
