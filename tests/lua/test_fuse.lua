-- cu.fuse: recorded elementwise operations run as groups; results equal eager code bit for bit
-- (the same kernels run, tile by tile); barriers (shape, stream, aliasing through another view),
-- out= into inputs, early flushes (reductions, :item(), element reads), errors inside fn, nesting,
-- graphs, explain and the ledger. Runs on both backends (lua.host.test_fuse, lua.cuda.test_fuse).
package.path = (arg and arg[0] and arg[0]:match("^(.*)[/\\]") or "tests/lua") .. "/?.lua;" .. package.path
local T = require "cu.testing"
local S = require "support"

-- Runs fn(...) eagerly and fused on copies of the same inputs; the outputs (arrays returned, and
-- the inputs after fn, which may write into them) must be identical bit for bit.
local function same_as_eager(fn, make_inputs, what)
  local inputs = make_inputs()
  local eager_in, fused_in = {}, {}
  for i, v in ipairs(inputs) do
    eager_in[i] = type(v) == "userdata" and v:clone() or v
    fused_in[i] = type(v) == "userdata" and v:clone() or v
  end
  local eager_out = table.pack(fn(table.unpack(eager_in)))
  local l0 = cu.ledger()
  local fused_out = table.pack(cu.fuse(fn)(table.unpack(fused_in)))
  local used = cu.ledger() - l0
  T.eq(fused_out.n, eager_out.n, what .. ": results")
  local function same(a, b, which)
    T.eq(a.shape, b.shape, which)
    T.eq(a.dtype, b.dtype, which)
    T.truthy(cu.all(a:eq(b) + (a:ne(a) * b:ne(b))):item(), which .. ": values differ")
  end
  for i = 1, eager_out.n do same(fused_out[i], eager_out[i], what .. ": result " .. i) end
  for i = 1, #eager_in do
    if type(eager_in[i]) == "userdata" then same(fused_in[i], eager_in[i], what .. ": input " .. i) end
  end
  return used, fused_out
end

local function randn(shape, dtype)
  return cu.rand(shape, dtype or "f32") * 4 - 2
end

T.case("a chain of operations is one group, with the results of eager code", function()
  local used = same_as_eager(function(x, y, o)
    local t = x * 2 + y
    local u = t * t - x
    cu.sqrt(u:abs(), { out = o })
    return t, cu.where(u:gt(0), u, -u), cu.maximum(x, y):exp()
  end, function() return { randn(5000), randn(5000), cu.empty(5000) } end, "chain")
  T.eq(used.fused_groups, 1)
  T.eq(used.fused_ops, 11)
  -- On a CUDA device the group is one generated kernel, compiled, from the disk cache or loaded.
  T.eq(used.fused_kernels, cu.backend == "cuda" and 1 or 0)
  T.eq(used.fused_compiles + used.fused_disk_hits + used.fused_memory_hits, used.fused_kernels)
end)

T.case("tiles: large, 2-d, strided, broadcast and transposed operands", function()
  -- 300 x 700 elements: several tiles of the default 65536; rows of a transposed view and a
  -- broadcast column exercise strides in every tile.
  local used = same_as_eager(function(a, b, c)
    local t = a + b:transpose() * c
    local u = cu.sin(t) * a - c
    return u, t:sqrt()
  end, function()
    return { randn({ 300, 700 }, "f64"), randn({ 700, 300 }, "f64"), randn({ 300, 1 }, "f64") }
  end, "2-d")
  T.eq(used.fused_groups, 1)
  -- Three dimensions, the last two past a tile: tiles of rows inside each outer index.
  used = same_as_eager(function(a, b)
    local t = a * b:permute_dims({ 1, 3, 2 }) + 0.5
    return t * t - a
  end, function() return { randn({ 3, 300, 700 }), randn({ 3, 700, 300 }) } end, "3-d")
  T.eq(used.fused_groups, 1)
  -- Every dtype class and a conversion on the way out.
  for _, dt in ipairs({ "i32", "u8", "f16", "bf16", "c64", "bool" }) do
    same_as_eager(function(x, y)
      local s = x + y
      return s * y, s:eq(x), s:astype("f32") + 1
    end, function()
      return { cu.rand(100003):mul(100):astype(dt), cu.rand(100003):mul(100):astype(dt) }
    end, dt)
  end
end)

T.case("out= into an input through the identical view fuses; another view ends the group", function()
  -- In place, then read through the same view: one group.
  local used = same_as_eager(function(x, y)
    cu.add(x, y, { out = x })
    cu.mul(x, x, { out = y })
    return x * y
  end, function() return { randn(70000), randn(70000) } end, "in place")
  T.eq(used.fused_groups, 1)
  -- Written, then read shifted by one element: the group ends there (tile by tile it would read
  -- elements not yet written).
  used = same_as_eager(function(x)
    cu.mul(x, 3, { out = x })
    local shifted = x[{ { 2, 70000 } }] + x[{ { 1, 69999 } }]
    return shifted
  end, function() return { randn(70000) } end, "shifted")
  T.eq(used.fused_groups, 2)
  -- Read through a transposed view, then written in place: a write after a read of the same
  -- memory through another view also ends the group.
  used = same_as_eager(function(m)
    local t = m:transpose() + 1
    cu.mul(m, 2, { out = m })
    return t
  end, function() return { randn({ 400, 400 }) } end, "transposed")
  T.eq(used.fused_groups, 2)
end)

T.case("a new shape ends a group", function()
  local used = same_as_eager(function(x, y)
    local a = x * 2
    local b = y + 1
    local c = a + 1
    return a, b, c
  end, function() return { randn(1000), randn(10) } end, "shapes")
  T.eq(used.fused_groups, 3)
end)

T.case("reductions, :item(), element reads and copies flush what was recorded first", function()
  local f = cu.fuse(function(x)
    local y = x * 2
    local s = y:sum():item()
    local first = y[1]
    local h = (y + 1):to_host()
    return s, first, h
  end)
  local x = cu.arange(1000, "f64")
  local s, first, h = f(x)
  T.eq(s, 999 * 1000)
  T.eq(first, 0)
  T.eq(h[1000], 1999)
end)

T.case("B-style loop code with ping-pong buffers works unchanged inside cu.fuse", function()
  local function run(step)
    local u, v = cu.linspace(0, 1, 4096, "f64"), cu.empty(4096, "f64")
    local k = cu.empty(4096, "f64")
    for _ = 1, 20 do
      step(u, v, k)
      u, v = v, u
    end
    return u
  end
  local function step(u, v, k)
    cu.mul(u, u, { out = k })
    cu.mul(k, -0.01, { out = k })
    cu.add(u, k, { out = v })
    cu.sin(v, { out = v })
  end
  local eager = run(step)
  local fused = run(cu.fuse(step))
  T.truthy(cu.all(eager:eq(fused)):item())
end)

T.case("an error inside fn: what was recorded ran, and the error is raised unchanged", function()
  local x = cu.zeros(100)
  local f = cu.fuse(function()
    cu.add(x, 5, { out = x })
    error({ code = 7 })
  end)
  local ok, e = pcall(f)
  T.eq(ok, false)
  T.eq(type(e), "table")
  T.eq(e.code, 7)
  T.eq(x:sum():item(), 500)
  S.raises(function()
    cu.fuse(function() return cu.ones(3) + cu.ones(4) end)()
  end, { "shape" }, "a broadcast error names the operation")
  S.check_runtime("after fused errors")
end)

T.case("nested fused calls record into the outer one; arguments and results pass through", function()
  local inner = cu.fuse(function(a) return a + 1, "tag" end)
  local outer = cu.fuse(function(a, b)
    local r, tag = inner(a)
    return r * b, tag
  end)
  local l0 = cu.ledger()
  local r, tag = outer(cu.ones(10), 3)
  local used = cu.ledger() - l0
  T.eq(tag, "tag")
  T.eq(r:totable(), { 6, 6, 6, 6, 6, 6, 6, 6, 6, 6 })
  T.eq(used.fused_groups, 1)
end)

T.case("a graph captures a fused call", function()
  local x, y = cu.arange(50, "f32"), cu.zeros(50)
  local f = cu.fuse(function() cu.add(x * 2, 1, { out = y }) end)
  local g = cu.graph(f)
  T.eq(y:sum():item(), 0, "nothing ran at capture")
  g:launch()
  T.eq(y:sum():item(), 2 * 1225 + 50)
  g:free()
end)

T.case("cu.graph(fn, {fuse = true}) captures groups: fewer nodes, the same results", function()
  local function make() return cu.linspace(0, 1, 3000, "f64"), cu.empty(3000, "f64") end
  local function step(u, v)
    cu.mul(u, u, { out = v })
    cu.mul(v, -0.5, { out = v })
    cu.add(v, u, { out = v })
    cu.sin(v, { out = v })
    cu.add(v, 0.25, { out = v })
  end
  local u1, v1 = make()
  local u2, v2 = make()
  local plain = cu.graph(step, { u1, v1 })
  local fused = cu.graph(step, { u2, v2, fuse = true })
  T.eq(plain.nodes, 5)
  T.eq(fused.nodes, 1)
  plain:launch()
  fused:launch()
  T.truthy(cu.all(v1:eq(v2)):item(), "the same bits")
  -- An update captures fused again.
  T.eq(fused:update(step, { v2, u2 }) ~= nil, true)
  fused:launch()
  step(v1, u1)
  T.truthy(cu.all(u1:eq(u2)):item(), "after the update")
  plain:free()
  fused:free()
end)

-- D's step in small: coefficients from a 0-d device value (the prologue), the body, the sum of
-- its result and a division of the sum (the epilogue).
local function coefficient_step(st)
  cu.mul(st.d, st.k, { out = st.c1 })
  cu.conj(st.d, { out = st.c2 })
  cu.mul(st.c2, 0.5, { out = st.c2 })
  cu.mul(st.x, st.c1, { out = st.y })
  cu.add(st.y, st.c2, { out = st.y })
  cu.mul(st.y, st.x, { out = st.y })
  st.y:sum({ out = st.s })
  cu.div(st.s, st.y.size, { out = st.d })
end

local function coefficient_state(shape, dtype)
  local st = { x = cu.rand(shape, dtype) - 0.5, y = cu.empty(shape, dtype), d = cu.full({}, 0.75, dtype),
    k = dtype:match("^c") and cu.complex(0, -1) or -1.5 }
  for _, k in ipairs({ "c1", "c2", "s" }) do st[k] = cu.empty({}, dtype) end
  return st
end

-- The sum of a fused epilogue adds in another order than the built-in reduction: equal to a
-- relative 1e-5 (f32), everything else bit for bit.
local function magnitude(z) return type(z) == "number" and math.abs(z) or z:abs() end
local function same_state(a, b, what)
  for _, k in ipairs({ "x", "y", "c1", "c2" }) do
    T.truthy(cu.all(a[k]:eq(b[k])):item(), what .. ": " .. k .. " differs")
  end
  for _, k in ipairs({ "s", "d" }) do
    local x, y = a[k]:item(), b[k]:item()
    T.truthy(magnitude(x - y) <= 1e-5 * magnitude(y) + 1e-6,
      what .. ": " .. k .. " " .. tostring(x) .. " vs " .. tostring(y))
  end
end

T.case("a 0-d prologue and a sum epilogue join the group: one group, two kernels, eager's values", function()
  for _, case in ipairs({ { { 4096 }, "c64" }, { { 33, 65 }, "c64" }, { { 1000 }, "f32" }, { { 20, 30 }, "f64" },
    { { 777 }, "f16" } }) do
    local shape, dtype = case[1], case[2]
    local what = dtype .. " " .. #shape .. "-d"
    local a, b = coefficient_state(shape, dtype), coefficient_state(shape, dtype)
    cu.copy(b.x, a.x)
    local f = cu.fuse(coefficient_step)
    for _ = 1, 3 do -- d feeds the next step's coefficients: both steps start from a's
      cu.copy(b.d, a.d)
      coefficient_step(a)
      local l0 = cu.ledger()
      f(b)
      local used = cu.ledger() - l0
      if dtype ~= "f16" then same_state(a, b, what) end
      T.truthy(cu.all(a.y:eq(b.y)):item(), what .. ": y")
      T.eq(used.fused_groups, 1, what)
      T.eq(used.fused_ops, 8, what)
      T.eq(used.fused_kernels, cu.backend == "cuda" and 2 or 0, what)
    end
    if dtype == "f16" then -- f16 sums round differently in each order
      T.truthy(magnitude(a.d:item() - b.d:item()) <= 2e-3 * magnitude(a.d:item()), what)
    end
  end
  -- mean as the epilogue, with no post-map; a sum of a value the group only reads.
  local x, y = cu.rand(5000, "f64"), cu.empty(5000, "f64")
  local m, s = cu.empty({}, "f64"), cu.empty({}, "f64")
  local f = cu.fuse(function()
    cu.mul(x, 3, { out = y })
    y:mean({ out = m })
  end)
  f()
  T.truthy(math.abs(m:item() - (x * 3):mean():item()) <= 1e-12, "mean")
  cu.fuse(function()
    cu.mul(x, 2, { out = y })
    x:sum({ out = s })
  end)()
  T.truthy(math.abs(s:item() - x:sum():item()) <= 1e-9, "sum of an input")
end)

T.case("max and min as epilogues: eager's values for every real dtype; a NaN wins", function()
  for _, dt in ipairs({ "f32", "f64", "f16", "bf16", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "bool" }) do
    for _, shape in ipairs({ { 5000 }, { 37, 61 } }) do
      local x = (cu.rand(shape, "f64") * 200 - 100):astype(dt)
      local y = cu.empty(shape, dt)
      local mx, mn = cu.empty({}, dt), cu.empty({}, dt)
      local function fmax()
        cu.maximum(x, x, { out = y }) -- y = x, through an operation
        y:max({ out = mx })
      end
      local function fmin()
        cu.minimum(x, x, { out = y })
        y:min({ out = mn })
      end
      local l0 = cu.ledger()
      cu.fuse(fmax)()
      cu.fuse(fmin)()
      local used = cu.ledger() - l0
      T.eq(used.fused_groups, 2, dt)
      T.eq(used.fused_kernels, cu.backend == "cuda" and 4 or 0, dt)
      T.eq(mx:item(), x:max():item(), dt .. " max")
      T.eq(mn:item(), x:min():item(), dt .. " min")
    end
  end
  local x = cu.rand(3000)
  x[1234] = 0 / 0
  local y, m = cu.empty(3000), cu.empty({})
  cu.fuse(function()
    cu.mul(x, 2, { out = y })
    y:max({ out = m })
  end)()
  local v = m:item()
  T.truthy(v ~= v, "a NaN wins")
end)

-- Axis reductions as epilogues: the group's kernel reduces rows of its values (any axes whose
-- elements form one strided run, keepdims, out= strided views); the built-in reduction's values
-- (sums and means to a relative 1e-5 of f32, 1e-12 of f64: another order of additions; max and
-- min exactly).
T.case("sum, mean, max and min along axes end the group: one group, two kernels, eager's values", function()
  local cases = {
    { { 37, 61 }, 1 }, { { 37, 61 }, 2 }, { { 4, 300, 5 }, 2 }, { { 3, 5000 }, 2 }, { { 20000, 3 }, 2 },
    { { 2, 70000 }, 2 }, { { 6, 7, 8 }, { 2, 3 } }, { { 6, 7, 8 }, { 1, 2 } }, { { 1, 9 }, 1 },
  }
  local function close(got, want, dt, what)
    if dt == "f32" or dt == "c64" or dt == "f16" then
      local tol = dt == "f16" and 2e-3 or 1e-5
      local wide = dt == "c64" and "c128" or "f64"
      local err = cu.max(cu.abs(got:astype(wide) - want:astype(wide))):item()
      local scale = cu.max(cu.abs(want:astype(wide))):item()
      T.truthy(err <= tol * scale + 1e-6, what .. ": " .. err .. " vs scale " .. scale)
    elseif dt == "f64" or dt == "c128" then
      local err = cu.max(cu.abs(got - want)):item()
      T.truthy(err <= 1e-12 * cu.max(cu.abs(want)):item() + 1e-12, what .. ": " .. err)
    else
      T.truthy(cu.all(got:eq(want)):item(), what)
    end
  end
  for _, case in ipairs(cases) do
    local shape, axis = case[1], case[2]
    for _, spec in ipairs({ { "sum", "f32" }, { "mean", "f64" }, { "sum", "c64" }, { "max", "i32" }, { "min", "f32" },
      { "mean", "f16" } }) do
      local op, dt = spec[1], spec[2]
      local what = string.format("%s %s {%s} axis %s", op, dt, table.concat(shape, ","),
        type(axis) == "table" and table.concat(axis, ",") or axis)
      local x = (cu.rand(shape, "f64") * 200 - 100):astype(dt)
      local y = cu.empty(shape, dt)
      local function fn(keepdims)
        cu.mul(x, 3, { out = y })
        cu.add(y, x, { out = y })
        return y[op](y, { axis = axis, keepdims = keepdims })
      end
      local want = fn(false)
      local l0 = cu.ledger()
      local got = cu.fuse(fn)(false)
      local used = cu.ledger() - l0
      T.eq(used.fused_groups, 1, what)
      T.eq(used.fused_kernels, cu.backend == "cuda" and 2 or 0, what)
      T.eq(got.shape, want.shape, what)
      close(got, want, dt, what)
      close(y, x * 4, dt, what .. ": the body's values")
      local kept = cu.fuse(fn)(true)
      T.eq(kept.shape, fn(true).shape, what .. " keepdims")
      close(kept:reshape(want.shape), want, dt, what .. " keepdims")
    end
  end
  -- The rows of a transposed value, into a strided out= view; a reduction of an input the group
  -- only reads; a prologue before an axis epilogue.
  local x = cu.rand({ 50, 40 }, "f64")
  local t = cu.empty({ 40, 50 }, "f64")
  local out = cu.zeros({ 50, 3 }, "f64")
  local col = out[{ {}, 2 }]
  local d, c = cu.full({}, 0.5, "f64"), cu.empty({}, "f64")
  local l0 = cu.ledger()
  cu.fuse(function()
    cu.mul(d, 2, { out = c })
    cu.mul(x:transpose(), c, { out = t })
    t:sum({ axis = 1, out = col })
  end)()
  local used = cu.ledger() - l0
  T.eq(used.fused_groups, 1, "prologue, body, axis epilogue")
  close(col, (x:transpose() * 1.0):sum({ axis = 1 }), "f64", "a strided out=")
  T.eq(cu.sum(out[{ {}, 1 }]):item(), 0, "out's other columns untouched")
  local twice = cu.empty({ 50, 40 }, "f64")
  local s = cu.fuse(function()
    cu.mul(x, 2, { out = twice })
    return x:max({ axis = 2 })
  end)()
  T.truthy(cu.all(s:eq(x:max({ axis = 2 }))):item(), "max of an input")
end)

-- Every reduction of the op table as an epilogue (the built-in reductions' own functors run in
-- the generated kernels): whole arrays and along axes, every dtype class, NaNs for the nan* ops;
-- integer, bool and ordering results exactly eager's, floating ones to a relative 1e-5 (f16 2e-3).
T.case("every reduction ends a group: prod, norm, argmax, var, std, any, all and the nan* ops", function()
  local ops = { "sum", "mean", "max", "min", "prod", "norm", "argmax", "argmin", "var", "std", "any", "all",
    "nansum", "nanmean", "nanmax", "nanmin", "nanprod", "nanvar", "nanstd" }
  local function agree(got, want, what)
    T.eq(got.shape, want.shape, what)
    T.eq(got.dtype, want.dtype, what)
    local dt = want.dtype
    if not (dt:match("^f") or dt:match("^c") or dt:match("^bf")) then
      T.truthy(cu.all(got:eq(want)):item(), what)
      return
    end
    local wide = dt:match("^c") and "c128" or "f64"
    local g, w = got:astype(wide), want:astype(wide)
    T.truthy(cu.all(g:isnan():eq(w:isnan())):item(), what .. ": NaNs")
    local finite = cu.where(w:isfinite(), w, 0)
    local err = cu.max(cu.abs(cu.where(w:isfinite(), g, 0) - finite)):item()
    local scale = cu.max(cu.abs(finite)):item()
    local tol = (dt == "f16" or dt == "bf16") and 2e-3 or (dt == "f64" or dt == "c128") and 1e-12 or 1e-5
    T.truthy(err <= tol * scale + 1e-30, what .. ": " .. err .. " vs " .. scale)
    T.truthy(cu.all(w:isinf():eq(g:isinf())):item(), what .. ": infinities")
  end
  local count = 0
  for _, dt in ipairs({ "f32", "f64", "f16", "c64", "i32", "u8", "i64", "bool" }) do
    for _, shape_axis in ipairs({ { { 37, 61 } }, { { 37, 61 }, 1 }, { { 300, 7 }, 2 } }) do
      local shape, axis = shape_axis[1], shape_axis[2]
      local base = cu.rand(shape, "f64")
      for _, op in ipairs(ops) do
        -- prod near 1 (no overflow); NaNs for the floating dtypes.
        local values = op:match("prod") and base * 0.2 + 0.9 or base * 200 - 100
        local x = values:astype(dt)
        if dt:match("^[fc]") then
          x[{ 3, 2 }] = 0 / 0
          if axis == 1 then x[{ 5, 1 }] = 0 / 0 end
        end
        local y = cu.empty(shape, dt)
        local opts = { axis = axis }
        if op:match("var") or op:match("std") then opts.correction = 1 end
        local function fn()
          cu.conj(x, { out = y })
          return y[op](y, opts)
        end
        local ok, want = pcall(fn)
        if ok then
          local what = string.format("%s %s {%s}%s", op, dt, table.concat(shape, ","), axis and " axis " .. axis or "")
          local l0 = cu.ledger()
          local got = cu.fuse(fn)()
          local used = cu.ledger() - l0
          T.eq(used.fused_groups, 1, what)
          T.eq(used.fused_kernels, cu.backend == "cuda" and 2 or 0, what)
          agree(got, want, what)
          count = count + 1
        end
      end
    end
  end
  print(string.format("  (%d reductions of a group's values, fused and eager)", count))
end)

T.case("what a prologue or an epilogue cannot take ends the group", function()
  local function groups(fn)
    local path = os.tmpname()
    local out = assert(io.open(path, "w"))
    local saved = io.output()
    io.output(out)
    cu.fuse(fn, { explain = true })()
    io.output(saved)
    out:close()
    local text = assert(io.open(path)):read("a")
    os.remove(path)
    local lines = {}
    for line in text:gmatch("[^\n]+") do
      if line:match("^group") then lines[#lines + 1] = line end
    end
    return lines, text
  end
  local x, y, xi = cu.rand({ 8, 8 }), cu.empty({ 8, 8 }), cu.ones({ 8, 8 }, "i32")
  local d, c, s = cu.ones({}), cu.zeros({}), cu.empty({})
  -- The D-like step: one group with both.
  local lines, text = groups(function()
    cu.mul(d, 2, { out = c })
    cu.mul(x, c, { out = y })
    y:sum({ out = s })
    cu.div(s, 64, { out = d })
  end)
  T.eq(lines, { "group 1: 4 ops over {8,8}: mul | mul | sum div (end of the tape)" })
  T.truthy(text:find("  prologue: the first 1 0-d op, recomputed by every element\n", 1, true), text)
  T.truthy(text:find("  epilogue: the sum of the group's values, then 1 0-d op on it\n", 1, true), text)
  -- A 0-d value read before the prologue writes it: no prologue.
  lines = groups(function()
    cu.add(c, 1, { out = c })
    cu.mul(x, c, { out = y })
  end)
  T.eq(lines, { "group 1: 1 op over {}: add (the next operation has another shape)",
    "group 2: 1 op over {8,8}: mul (end of the tape)" })
  -- The body writing what the prologue reads: no prologue.
  local flat = cu.empty({ 64 })
  local first = flat[{ { 1, 1 } }]:reshape({})
  lines = groups(function()
    cu.mul(first, 2, { out = c })
    cu.add(x:reshape({ 64 }), c, { out = flat })
  end)
  T.eq(#lines, 2, "the body overwrites the prologue's input")
  -- A sum through another view of a written value: not an epilogue; an integer sum, a row sum: epilogues.
  lines = groups(function()
    cu.mul(x, 2, { out = y })
    y:transpose():sum({ out = s })
  end)
  T.eq(lines[1],
    "group 1: 1 op over {8,8}: mul (the next operation reads or writes memory of the group through another view)")
  local si = cu.empty({}, "i64")
  lines = groups(function()
    cu.mul(xi, 2, { out = xi })
    xi:sum({ out = si })
  end)
  T.eq(lines, { "group 1: 2 ops over {8,8}: mul | sum (end of the tape)" }, "an integer sum is an epilogue")
  lines = groups(function()
    local r = x * 2
    local _ = r:sum({ axis = 1 })
  end)
  T.eq(lines, { "group 1: 2 ops over {8,8}: mul | sum (end of the tape)" }, "an axis sum is an epilogue")
  -- Reduced axes that do not merge into one run are gathered first (a copy: it flushes).
  local x3 = cu.rand({ 4, 5, 6 })
  lines = groups(function()
    local r = x3 * 2
    local _ = r:sum({ axis = { 1, 3 } })
  end)
  T.eq(lines, { "group 1: 1 op over {4,5,6}: mul (end of the tape)" }, "axes 1 and 3: a gather")
  -- After the epilogue's 0-d operations, anything else starts a new group.
  lines = groups(function()
    cu.mul(x, 2, { out = y })
    y:sum({ out = s })
    cu.mul(s, 2, { out = c })
    cu.add(y, 1, { out = y })
  end)
  T.eq(lines[1], "group 1: 3 ops over {8,8}: mul | sum mul "
    .. "(the group ended with its reduction and the 0-d operations on its result)")
  T.eq(#lines, 2)
end)

T.case("cu.graph(fn, {fuse = true}) of a D-like step: prologue and epilogue in the graph", function()
  local a, b = coefficient_state({ 128, 64 }, "c64"), coefficient_state({ 128, 64 }, "c64")
  cu.copy(b.x, a.x)
  local g = cu.graph(coefficient_step, { b, fuse = true })
  if cu.backend == "cuda" then T.eq(g.nodes, 2, "the group's kernel and the sum's") end
  for _ = 1, 4 do
    cu.copy(b.d, a.d) -- both steps start from the same d (the sums differ in their last bits)
    coefficient_step(a)
    g:launch()
    same_state(a, b, "graph")
  end
  g:free()
end)

T.case("scratch arrays: values nothing reads later are computed and not stored", function()
  local function explained(f, ...)
    local path = os.tmpname()
    local out = assert(io.open(path, "w"))
    local saved = io.output()
    io.output(out)
    local r = table.pack(f(...))
    io.output(saved)
    out:close()
    local text = assert(io.open(path)):read("a")
    os.remove(path)
    return text, table.unpack(r, 1, r.n)
  end
  local n = 5000
  local x = cu.rand(n, "f64")
  local t, u, y = cu.empty(n, "f64"), cu.empty(n, "f64"), cu.empty(n, "f64")
  local function body()
    cu.mul(x, 2, { out = t })
    cu.add(t, 1, { out = u })
    cu.mul(u, t, { out = y })
  end
  t:fill(-1)
  u:fill(-1)
  local text = explained(cu.fuse(body, { scratch = { t, u }, explain = true }))
  local want = ((x * 2) + 1) * (x * 2)
  T.truthy(cu.all(y:eq(want)):item(), "y")
  if cu.backend == "cuda" then
    T.truthy(text:find("  2 values of scratch arrays computed and not stored\n", 1, true), text)
    T.eq(t:max():item(), -1, "t not stored")
  else
    T.truthy(not text:find("not stored", 1, true), "the host backend stores everything")
  end
  -- A scratch value read after an early flush (:item()) inside fn, or by a later group, is stored.
  local early = cu.fuse(function()
    cu.mul(x, 2, { out = t })
    local first = t[1]
    cu.add(t, first, { out = y })
  end, { scratch = { t } })
  early()
  T.truthy(cu.all(y:eq(x * 2 + (x[1] * 2))):item(), "read after an early flush")
  local later = cu.fuse(function()
    cu.mul(x, 3, { out = t })
    cu.add(t:reshape({ 50, 100 }):transpose():reshape({ n }), 1, { out = y }) -- another view: a new group
  end, { scratch = { t } })
  later()
  T.truthy(cu.all(y:eq((x * 3):reshape({ 50, 100 }):transpose():reshape({ n }) + 1)):item(), "read by a later group")
  -- In a fused graph, and after g:update.
  local g = cu.graph(body, { fuse = true, scratch = { t, u } })
  y:fill(0)
  g:launch()
  T.truthy(cu.all(y:eq(want)):item(), "graph")
  g:update(body)
  y:fill(0)
  g:launch()
  T.truthy(cu.all(y:eq(want)):item(), "graph after update")
  g:free()
  -- Bad arguments; a freed scratch array.
  S.raises(function() cu.fuse(body, { scratch = 1 }) end, { "scratch", "a list of arrays expected, got number" })
  S.raises(function() cu.fuse(body, { scratch = { t, "u" } }) end, { "scratch", "entry 2: array expected, got string" })
  S.raises(function() cu.graph(body, { fuse = true, scratch = { 1 } }) end, { "scratch", "entry 1" })
  local gone = cu.empty(10)
  local f = cu.fuse(function() cu.add(gone, 1, { out = gone }) end, { scratch = { gone } })
  gone:free()
  local err = S.raises_released(f)
  T.truthy(tostring(err):find("scratch array 1 of the fused function", 1, true), tostring(err))
end)

T.case("early flushes are counted; inside cu.strict one raises after running what was recorded", function()
  local x, y = cu.rand(100, "f64"), cu.empty(100, "f64")
  local f = cu.fuse(function()
    cu.mul(x, 2, { out = y })
    cu.cumsum(y, { out = y }) -- not recorded: the multiplication runs before it
    cu.add(y, 1, { out = y })
  end)
  local l0 = cu.ledger()
  f()
  local used = cu.ledger() - l0
  T.eq(used.fused_early_flushes, 1)
  T.eq(used.fused_groups, 2)
  T.truthy(cu.all(y:eq(cu.cumsum(x * 2) + 1)):item(), "values")
  local plain = cu.fuse(function() cu.mul(x, 2, { out = y }) end)
  l0 = cu.ledger()
  plain()
  T.eq((cu.ledger() - l0).fused_early_flushes, 0, "the flush at fn's end is not early")
  y:fill(0)
  S.raises(function() cu.strict(f) end, { "early", "cu.strict", "test_fuse.lua" })
  T.truthy(cu.all(y:eq(x * 2)):item(), "what was recorded ran before the error")
  cu.strict(plain) -- no early flush: fine
end)

T.case("a trace shows each fused group's kernel with the script lines it covers", function()
  local x, y = cu.rand(1000), cu.empty(1000)
  local f = cu.fuse(function()
    cu.mul(x, 2, { out = y })
    cu.add(y, 1, { out = y })

    cu.mul(y, y, { out = y })
  end)
  f() -- compiled (CUDA) before the trace
  cu.trace.start()
  f()
  local path = os.tmpname()
  cu.trace.stop(path)
  local text = assert(io.open(path)):read("a")
  os.remove(path)
  local covers = text:match('"covers":%s*"([^"]*)"')
  T.truthy(covers, "a covers argument in the trace")
  local file, first = covers:match("^(.-test_fuse%.lua):(%d+)")
  T.truthy(file, covers)
  first = tonumber(first)
  T.eq(covers, string.format("%s:%d-%d,%d", file, first, first + 1, first + 3))
end)

T.case("a repeated tape reuses its flush's plan and kernels; new scalars, views or shapes are honoured", function()
  local x = cu.rand(3000, "f64")
  local a, b = cu.empty(3000, "f64"), cu.empty(3000, "f64")
  local s = cu.empty({}, "f64")
  local f = cu.fuse(function(src, dst, k)
    cu.mul(src, k, { out = dst })
    cu.add(dst, k * 0.5, { out = dst })
    dst:sum({ out = s })
  end)
  cu.copy(a, x)
  local src, dst = a, b
  for i = 1, 6 do -- ping-pong buffers and a new scalar each call
    local k = 1 + i / 8
    local want = src * k + k * 0.5
    local l0 = cu.ledger()
    f(src, dst, k)
    local used = cu.ledger() - l0
    T.truthy(cu.all(dst:eq(want)):item(), "call " .. i)
    T.truthy(math.abs(s:item() - want:sum():item()) <= 1e-9 * math.abs(s:item()), "sum, call " .. i)
    if cu.backend == "cuda" and i > 2 then
      T.eq(used.fused_compiles + used.fused_disk_hits, 0, "call " .. i .. " compiles nothing")
      T.eq(used.fused_kernels, 2)
    end
    src, dst = dst, src
  end
  -- Another shape, another view: planned afresh.
  local y, z = cu.rand({ 30, 100 }, "f64"), cu.empty({ 30, 100 }, "f64")
  f(y, z, 3)
  T.truthy(cu.all(z:eq(y * 3 + 1.5)):item(), "another shape")
  f(y:transpose(), z:transpose(), 2)
  T.truthy(cu.all(z:transpose():eq(y:transpose() * 2 + 1)):item(), "another view")
  -- A scalar where an array was: planned afresh.
  local g = cu.fuse(function(p, q) return cu.add(p, q) * 2 end)
  local r1 = g(x, x)
  local r2 = g(x, 5)
  T.truthy(cu.all(r1:eq((x + x) * 2)):item() and cu.all(r2:eq((x + 5) * 2)):item(), "scalar operand")
end)

T.case("explain writes the groups and why each ended; bad arguments", function()
  local path = os.tmpname()
  local out = assert(io.open(path, "w"))
  local saved = io.output()
  io.output(out)
  cu.fuse(function(a)
    local b = a * 2 + 1
    return b:reshape({ 10, 10 }) - 1
  end, { explain = true })(cu.ones(100))
  io.output(saved)
  out:close()
  local text = assert(io.open(path)):read("a")
  os.remove(path)
  -- On a CUDA device, a line for the group that ran as a generated kernel.
  local kernel_lines = 0
  text = text:gsub("  the group of 2 ops ran as one generated kernel %(([^)]*)%)\n", function(how)
    T.truthy(how:match("^compiled in [%d.]+ ms$") or how == "from the disk cache" or how == "already loaded", how)
    kernel_lines = kernel_lines + 1
    return ""
  end)
  T.eq(kernel_lines, cu.backend == "cuda" and 1 or 0)
  T.eq(text, "group 1: 2 ops over {100}: mul add (the next operation has another shape)\n" ..
    "group 2: 1 op over {10,10}: sub (end of the tape)\n")
  S.raises(function() cu.fuse(1) end, { "bad argument #1 to 'fuse'", "function expected" })
  S.raises(function() cu.fuse(print, { explian = true }) end, { "explian" })
end)

T.case("replay = true: a repeated call launches the captured graph instead of running fn", function()
  local a, b, c = cu.arange(64, "f32"), cu.ones(64), cu.empty(64)
  local runs = 0
  local f = cu.fuse(function(x, y, k)
    runs = runs + 1
    cu.mul(x, k, { out = c })
    cu.add(c, y, { out = c })
    return c, k
  end, { replay = true })
  local function expect(k, y0)
    local want = cu.arange(64, "f64") * k + y0
    T.truthy(cu.all(c:astype("f64"):eq(want)):item(), "values with k = " .. tostring(k))
  end
  local l0 = cu.ledger()
  for i = 1, 5 do
    local r, k = f(a, b, 3)
    T.truthy(rawequal(r, c), "the result is the array fn returned")
    T.eq(k, 3)
    expect(3, 1)
    -- Calls 1 and 2 run fn (the first as an ordinary fused call, the second captured); then replays.
    T.eq(runs, math.min(i, 2), "runs after call " .. i)
  end
  T.eq((cu.ledger() - l0).graph_launches, 4)
  -- The graph reads the arrays, not their values at capture.
  b:fill(10)
  f(a, b, 3)
  expect(3, 10)
  T.eq(runs, 2)
  -- Other arguments are other calls: a new value, an integer for a float, another array.
  f(a, b, 4)
  T.eq(runs, 3)
  expect(4, 10)
  f(a, b, 3.0)
  T.eq(runs, 4)
  local b2 = cu.full(64, 7)
  f(a, b2, 3)
  T.eq(runs, 5)
  expect(3, 7)
  f(a, b, 3)
  T.eq(runs, 5, "the first signature is still replayed")
  expect(3, 10)
  -- cu.complex arguments are compared by value (each step of a loop makes a new one).
  local z = cu.empty(4, "c64")
  local g = cu.fuse(function(x, w) runs = runs + 1; cu.mul(x, w, { out = z }) end, { replay = true })
  local x = cu.ones(4, "c64")
  runs = 0
  for _ = 1, 4 do g(x, cu.complex(0, 2)) end
  T.eq(runs, 2)
  T.eq(z[1], cu.complex(0, 2))
  -- cu.fuse.reset forgets the calls (and lets the arrays go).
  T.eq(cu.fuse.reset(g), 1)
  g(x, cu.complex(0, 2))
  T.eq(runs, 3)
  T.eq(cu.fuse.reset(cu.fuse(print)), 0)
  S.raises(function() cu.fuse.reset(print) end, { "function returned by cu.fuse expected" })
end)

T.case("replay = true: functions a graph cannot hold run fused; errors are raised as without replay", function()
  local a, c = cu.ones(16), cu.empty(16)
  local runs = 0
  -- :item() waits for the device: no capture; each call runs fn (fused), with the right values.
  local f = cu.fuse(function(x, k)
    runs = runs + 1
    cu.mul(x, k, { out = c })
    return c:sum():item()
  end, { replay = true })
  for _ = 1, 4 do T.eq(f(a, 2), 32.0) end
  T.eq(runs, 5, "the capture's attempt ran fn once more")
  -- An error inside fn: what it queued before the error runs, then the error, every call.
  local g = cu.fuse(function(x)
    cu.mul(x, 5, { out = c })
    error("boom", 0)
  end, { replay = true })
  for _ = 1, 3 do
    c:fill(0)
    local ok, err = pcall(g, a)
    T.eq(ok, false)
    T.eq(err, "boom")
    T.eq(c[1], 5.0)
  end
  -- Nested inside another fused call, or captured by cu.graph, it records into the outer call.
  local h = cu.fuse(function(x) cu.add(x, 1, { out = c }) end, { replay = true })
  cu.fuse(function() h(a); h(a); h(a) end)()
  T.eq(c[1], 2.0)
  local graph = cu.graph(function() h(a) end)
  c:fill(0)
  graph:launch()
  T.eq(c[1], 2.0)
  graph:free()
  -- explain says what each call did.
  local path = os.tmpname()
  local out = assert(io.open(path, "w"))
  local saved = io.output()
  io.output(out)
  local e = cu.fuse(function(x) cu.mul(x, 3, { out = c }); cu.add(c, 1, { out = c }) end,
    { replay = true, explain = true })
  e(a); e(a); e(a)
  io.output(saved)
  out:close()
  local text = assert(io.open(path)):read("a")
  os.remove(path)
  text = text:gsub("  the group of 2 ops ran as one generated kernel %([^)]*%)\n", "")
  T.eq(text, "group 1: 2 ops over {16}: mul add (end of the tape)\n" ..
    "group 1: 2 ops over {16}: mul add (end of the tape)\n" ..
    "captured for replay: a graph of 1 node\n" ..
    "replayed the graph of an earlier call with these arguments (1 node)\n")
  T.eq(c[1], 4.0)
  S.raises(function() cu.fuse(print, { replay = 1 }) end, { "replay" })
end)

T.case("replay = true keeps at most 8 signatures, the least recently used dropped first", function()
  local a, c = cu.ones(8), cu.empty(8)
  local runs = 0
  local f = cu.fuse(function(x, k) runs = runs + 1; cu.mul(x, k, { out = c }) end, { replay = true })
  for k = 1, 8 do f(a, k); f(a, k) end -- each signature captured
  T.eq(runs, 16)
  for k = 1, 8 do f(a, k) end
  T.eq(runs, 16, "all 8 replayed")
  T.eq(c[1], 8.0)
  f(a, 9) -- a ninth signature replaces the least recently used (k = 1)
  T.eq(runs, 17)
  f(a, 2)
  T.eq(runs, 17, "k = 2 still replayed")
  f(a, 1)
  T.eq(runs, 18, "k = 1 was dropped")
  T.eq(c[1], 1.0)
end)

-- The same bits: floats by value, the sign of zero and NaN-ness; complex values part by part;
-- integers and bools by value.
local FLOATS = { f16 = true, bf16 = true, f32 = true, f64 = true }
local function same_bits(a, b)
  if a.dtype ~= b.dtype then return false end
  if a.dtype == "c64" or a.dtype == "c128" then
    return same_bits(a:real(), b:real()) and same_bits(a:imag(), b:imag())
  end
  if FLOATS[a.dtype] then
    local same = a:eq(b):logical_and(a:signbit():eq(b:signbit()))
    return cu.all(same:logical_or(a:isnan():logical_and(b:isnan()))):item()
  end
  return cu.all(a:eq(b)):item()
end

local function op_names(macro)
  local root = (arg and arg[0] and arg[0]:match("^(.*)/tests/lua/[^/]*$")) or "."
  local f = assert(io.open(root .. "/src/core/backend/op_table.hpp"))
  local text = f:read("a")
  f:close()
  local names = {}
  for name in assert(text:match("#define " .. macro .. "%(X%)(.-)\n\n")):gmatch('X%(%w+, "([%w_]+)"') do
    names[#names + 1] = name
  end
  return names
end

T.case("every operation of the op table on every dtype it accepts: fused results bit-identical to eager", function()
  local binary, unary = op_names("CULUA_BINARY_OPS"), op_names("CULUA_UNARY_OPS")
  T.truthy(#binary > 20 and #unary > 30, "the op table was read")
  -- Values that reach every branch of the functors: zeros of both signs, infinities, NaN, halves,
  -- large and small magnitudes, negatives; integers from the same values.
  local specials = { 0, -0.0, 1 / 0, -1 / 0, 0 / 0, 0.5, -0.5, 1.5, -2.5, 3, 7, -7, 1e-3, 100, 1e4, -1e-7 }
  local n = 2 * #specials * #specials
  local xs, ys = {}, {}
  for i = 1, #specials do
    for j = 1, #specials do
      xs[#xs + 1], ys[#ys + 1] = specials[i], specials[j]
      xs[#xs + 1], ys[#ys + 1] = specials[j] * 0.75, specials[i] + 1
    end
  end
  local checked, fused_ops = 0, 0
  for _, dt in ipairs({ "f32", "f64", "f16", "bf16", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64",
    "bool", "c64", "c128" }) do
    local function make(values)
      local a = cu.array(values, "f64")
      if dt == "c64" or dt == "c128" then
        return (a + cu.flip(a) * cu.complex(0, 1)):astype(dt)
      end
      if not FLOATS[dt] then -- NaN and infinities have no integer value: zeros there
        a = cu.where(a:isfinite(), a, 0):clip(-100, 100)
      end
      return a:astype(dt)
    end
    local x, y = make(xs), make(ys)
    T.eq(x.size, n)
    -- Eager results of every operation the dtype accepts (unary, binary, and binary with a scalar).
    local eager, calls = {}, {}
    for _, name in ipairs(binary) do
      if pcall(cu[name], x, y) then
        calls[#calls + 1] = { name, function() return cu[name](x, y) end }
        calls[#calls + 1] = { name .. " scalar", function() return cu[name](x, 3) end }
      end
    end
    for _, name in ipairs(unary) do
      if pcall(cu[name], x) then calls[#calls + 1] = { name, function() return cu[name](x) end } end
    end
    for i, c in ipairs(calls) do eager[i] = c[2]() end
    -- The same operations inside one fused function: groups of up to 64, each result stored.
    local l0 = cu.ledger()
    local fused = { cu.fuse(function()
      local r = {}
      for i, c in ipairs(calls) do r[i] = c[2]() end
      return table.unpack(r)
    end)() }
    fused_ops = fused_ops + (cu.ledger() - l0).fused_ops
    for i, c in ipairs(calls) do
      T.truthy(same_bits(fused[i], eager[i]), string.format("%s on %s: fused and eager differ", c[1], dt))
      checked = checked + 1
    end
    -- One operation alone as a generated kernel (generate_single; on the host the group runs as the
    -- host kernel): the first binary and unary operations of the dtype.
    for _, k in ipairs({ 1, #calls }) do
      local one = cu.fuse(calls[k][2], { generate_single = true })()
      T.truthy(same_bits(one, eager[k]), string.format("%s on %s alone: generated and eager differ", calls[k][1], dt))
    end
  end
  T.eq(fused_ops, checked)
  T.truthy(checked > 500, "pairs checked: " .. checked)
  print(string.format("  (%d operation and dtype pairs, fused and eager bit-identical)", checked))
end)

T.case("CULUA_FUSE=0 runs fused functions eagerly", function()
  local script = "local f = cu.fuse(function(a) return a * 2 + 1 end); local l0 = cu.ledger(); " ..
    "local r = f(cu.ones(8)); local used = cu.ledger() - l0; " ..
    "print(used.fused_ops, used.launches, r:sum():item())"
  local function run(env)
    local p = assert(io.popen(string.format("%s %s --backend host -e %s 2>&1", env,
      S.shell_quote(S.culua_path()), S.shell_quote(script))))
    local out = p:read("a")
    p:close()
    return out
  end
  T.eq(run("CULUA_FUSE=1"), "2\t2\t24.0\n")
  T.eq(run("CULUA_FUSE=0"), "0\t3\t24.0\n")
end)

os.exit(T.run())
