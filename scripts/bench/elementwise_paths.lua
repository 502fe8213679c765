-- Bandwidth of element-wise operations on large arrays, for comparing the dedicated (hot) kernels
-- with the run-time-switch kernels (docs/design.md, "Precompiled kernels"): run it twice, once
-- with CULUA_ELEMENTWISE_SWITCH=1 in the environment (every operation through the switch
-- kernels), and compare the lines. The second table, operations off the hot list (the switch and
-- general kernels whatever the environment says, heavy operations called rather than inlined,
-- f16 rows and transposes through the general path), and the third, the general and 2-D kernels
-- (strided, broadcast and mixed-dtype operands, any operation over rows and transposes), compare
-- builds: run it with each.
--   culua scripts/bench/elementwise_paths.lua [MiB]
local mib = tonumber(arg and arg[1]) or 256
local mode = os.getenv("CULUA_ELEMENTWISE_SWITCH") or "0"
mode = (mode ~= "" and mode ~= "0") and "switch" or "dedicated"

local function binary(f) return function(a, b, c) f(a, b, { out = c }) end end
local function unary(f) return function(a, _, c) f(a, { out = c }) end end

-- name, dtype, inputs, function[, result dtype][, layout: "row" (b one row broadcast over a's
-- rows of 1024), "transposed" (b the transpose of a square matrix)]
local hot = {
  { "add", "f32", 2, binary(cu.add) },
  { "mul", "f64", 2, binary(cu.mul) },
  { "mul", "c64", 2, binary(cu.mul) },
  { "add", "f16", 2, binary(cu.add) },
  { "lt", "f32", 2, binary(cu.lt), "bool" },
  { "maximum", "i32", 2, binary(cu.maximum) },
  { "neg", "f32", 1, unary(cu.neg) },
  { "exp", "f32", 1, unary(cu.exp) },
  { "sqrt", "f64", 1, unary(cu.sqrt) },
  { "abs", "c64", 1, unary(cu.abs), "f32" },
}
local cold = {
  { "sin", "f32", 1, unary(cu.sin) },
  { "log", "f64", 1, unary(cu.log) },
  { "sin", "f16", 1, unary(cu.sin) },
  { "tanh", "bf16", 1, unary(cu.tanh) },
  { "exp", "c128", 1, unary(cu.exp) },
  { "atan2", "f32", 2, binary(cu.atan2) },
  { "hypot", "f64", 2, binary(cu.hypot) },
  { "mul", "c128", 2, binary(cu.mul) },
  { "div", "i16", 2, binary(cu.div), "f32" },
  { "floor_divide", "i64", 2, binary(cu.floor_divide) },
  { "add", "u8", 2, binary(cu.add) },
  { "mul", "i16", 2, binary(cu.mul) },
  { "add", "f16", 2, binary(cu.add), nil, "row" },
  { "add", "f16", 2, binary(cu.add), nil, "transposed" },
  { "sin", "f32", 1, unary(cu.sin), nil, "transposed" },
}
-- Layouts: "stride2" (every operand a step-2 slice of an array twice the size: the general path,
-- typed loads), "bcast3" (b of shape {1, 32, 1} broadcast over a's {n / 32768, 32, 1024}: the
-- general path), "mixed" (b of dtype f64, the output f64: the general path converting on load).
local general = {
  { "add", "f32", 2, binary(cu.add), nil, "stride2" },
  { "mul", "i32", 2, binary(cu.mul), nil, "stride2" },
  { "sin", "f32", 1, unary(cu.sin), nil, "stride2" },
  { "add", "f32", 2, binary(cu.add), nil, "bcast3" },
  { "add", "f32", 2, binary(cu.add), "f64", "mixed" },
  { "maximum", "f32", 2, binary(cu.maximum), nil, "transposed" },
  { "atan2", "f32", 2, binary(cu.atan2), nil, "row" },
  { "lt", "f64", 2, binary(cu.lt), "bool", "row" },
  { "hypot", "f16", 2, binary(cu.hypot), nil, "transposed" },
}
local sizes = { f32 = 4, f64 = 8, c64 = 8, c128 = 16, f16 = 2, bf16 = 2, i16 = 2, i32 = 4, i64 = 8, u8 = 1,
  bool = 1 }

local e0, e1 = cu.event(), cu.event()
local function run(cases, title)
  print(string.format("# %s, %d MiB inputs, %s backend", title, mib, cu.backend))
  for _, case in ipairs(cases) do
    local name, dt, nin, fn, rdt, layout = case[1], case[2], case[3], case[4], case[5], case[6]
    local item = sizes[dt]
    local n = mib * 1024 * 1024 // item
    local int = dt:sub(1, 1) == "i" or dt:sub(1, 1) == "u"
    local va, vb = int and 3 or 1.5, int and 5 or 2.25
    local a, b, c
    if layout == "row" then
      a, b = cu.full({ n // 1024, 1024 }, va, dt), cu.full(1024, vb, dt)
      c = cu.empty({ n // 1024, 1024 }, rdt or dt)
    elseif layout == "transposed" then
      local m = math.floor(math.sqrt(n))
      a, b = cu.full({ m, m }, va, dt), cu.full({ m, m }, vb, dt)
      if nin == 1 then a = a:transpose() else b = b:transpose() end
      c = cu.empty({ m, m }, rdt or dt)
    elseif layout == "stride2" then
      a, b = cu.full(2 * n, va, dt)[{ 1, -1, 2 }], cu.full(2 * n, vb, dt)[{ 1, -1, 2 }]
      c = cu.empty(2 * n, rdt or dt)[{ 1, -1, 2 }]
    elseif layout == "bcast3" then
      a, b = cu.full({ n // 32768, 32, 1024 }, va, dt), cu.full({ 1, 32, 1 }, vb, dt)
      c = cu.empty({ n // 32768, 32, 1024 }, rdt or dt)
    elseif layout == "mixed" then
      a, b, c = cu.full(n, va, dt), cu.full(n, vb, "f64"), cu.empty(n, rdt or dt)
    else
      a, b, c = cu.full(n, va, dt), cu.full(n, vb, dt), cu.empty(n, rdt or dt)
    end
    local bytes = a.size * item + (nin == 2 and b.nbytes or 0) + c.size * (rdt and sizes[rdt] or item)
    fn(a, b, c)
    cu.sync()
    local best = math.huge
    for _ = 1, 10 do
      e0:record()
      fn(a, b, c)
      e1:record()
      e1:sync()
      best = math.min(best, e0:elapsed(e1))
    end
    print(string.format("%-12s %-4s %-10s %8.1f GB/s  (%.3f ms)", name, dt, layout or "", bytes / (best * 1e6),
      best))
    a:free(); b:free(); c:free()
  end
end
run(hot, mode .. " kernels")
run(cold, "operations off the hot list")
run(general, "the general and 2-D kernels")
