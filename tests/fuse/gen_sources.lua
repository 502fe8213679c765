-- Writes the CUDA sources cu.fuse generates for a battery of groups to DIR (one file each), for
-- tests/fuse/nvrtc_compile.py: every binary and unary operation of the op table (read from
-- src/core/backend/op_table.hpp) on every dtype it accepts, as groups of operations sharing inputs;
-- cu.where; f16/bf16 outputs of f32 work; broadcast, strided and 0-d operands; scalars.
--   culua --backend host tests/fuse/gen_sources.lua SOURCE_ROOT DIR
local root, dir = assert(arg[1], "usage: gen_sources.lua SOURCE_ROOT DIR"), assert(arg[2])

local function op_names(macro)
  local f = assert(io.open(root .. "/src/core/backend/op_table.hpp"))
  local text = f:read("a")
  f:close()
  local block = assert(text:match("#define " .. macro .. "%(X%)(.-)\n\n"), macro)
  local names = {}
  for name in block:gmatch('X%(%w+, "([%w_]+)"') do names[#names + 1] = name end
  assert(#names > 5, macro)
  return names
end
local binary, unary = op_names("CULUA_BINARY_OPS"), op_names("CULUA_UNARY_OPS")

local count = 0
local function write(sources)
  for _, s in ipairs(sources) do
    count = count + 1
    local f = assert(io.open(string.format("%s/fused_%03d.cu", dir, count), "w"))
    f:write(s)
    f:close()
  end
end

local n = 37
for _, dt in ipairs({ "f32", "f64", "f16", "bf16", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64",
  "bool", "c64", "c128" }) do
  local x = cu.rand(n):mul(7):astype(dt)
  local y = cu.rand({ 1 }):mul(3):add(1):astype(dt) -- broadcast
  for _, names in ipairs({ binary, unary }) do
    write(cu.fuse.source(function()
      for _, name in ipairs(names) do
        -- Operations the dtype does not accept raise when the line runs (nothing recorded).
        pcall(function()
          local r = names == binary and cu[name](x, y) or cu[name](x)
          local _ = r + r -- each result read again in the group
        end)
        if names == binary then pcall(cu[name], x, 2) end -- a scalar operand
      end
    end))
  end
end
-- Light groups over contiguous arrays: the vector path (chunks of 16 bytes of the narrowest type),
-- with a 0-d array broadcast (stride 0) and a bool mask; mixed widths (f32 and f64, u8 and i64).
for _, dt in ipairs({ "f32", "f64", "f16", "bf16", "i8", "i32", "i64", "u8", "bool", "c64", "c128" }) do
  local x = cu.rand(64):mul(7):astype(dt)
  local z = cu.ones({}, dt)
  write(cu.fuse.source(function()
    local r = cu.add(x, z)
    return cu.where(x:eq(z), r, x), r:ne(x)
  end))
end
do
  local a, b = cu.rand(64), cu.rand(64, "f64")
  local u, w = cu.ones(64, "u8"), cu.ones(64, "i64")
  write(cu.fuse.source(function() return a * b + a, u + w end))
end
-- cu.where, outputs of other dtypes, strided and transposed views, 0-d arrays.
local a, b = cu.rand({ 6, 5 }), cu.rand({ 5, 6 }, "f64")
local h = cu.empty({ 6, 5 }, "f16")
write(cu.fuse.source(function()
  local t = a * b:transpose()
  cu.add(t, 1, { out = h })
  local w = cu.where(t:gt(0.5), t, -t)
  return w:sqrt() + cu.where(a:lt(0.2), a, 0.25)
end))
local z = cu.zeros({}, "c64")
write(cu.fuse.source(function()
  local u = z * cu.complex(0, 1) + 1
  return u:conj() * u
end))
-- Prologues (0-d values computed from 0-d values, then broadcast) and epilogues (a sum or mean of
-- the group's values, then 0-d operations on it), vector and element paths, every float dtype.
for _, dt in ipairs({ "f32", "f64", "f16", "bf16", "c64", "c128" }) do
  for _, shape in ipairs({ { 64 }, { 6, 5 } }) do
    local x = cu.rand(shape):astype(dt)
    local y = cu.empty(shape, dt)
    local d, c, s, m = cu.ones({}, dt), cu.empty({}, dt), cu.empty({}, dt), cu.empty({}, dt)
    local xt = #shape == 2 and cu.rand({ shape[2], shape[1] }):astype(dt):transpose() or x
    write(cu.fuse.source(function()
      cu.mul(d, 3, { out = c })
      cu.add(c, d, { out = c })
      cu.mul(x, c, { out = y })
      cu.add(y, xt, { out = y })
      y:sum({ out = s })
      cu.div(s, 7, { out = m })
      cu.add(m, c, { out = m })
      return y:mean()
    end))
  end
end
-- max and min epilogues (a NaN wins; small integers and bools compared as 32-bit integers).
for _, dt in ipairs({ "f32", "f64", "f16", "bf16", "i8", "u16", "i32", "u32", "i64", "u64", "bool" }) do
  local x = cu.rand(64):mul(9):astype(dt)
  local y = cu.empty(64, dt)
  local m = cu.empty({}, dt)
  write(cu.fuse.source(function()
    cu.maximum(x, x, { out = y })
    y:max({ out = m })
  end))
  write(cu.fuse.source(function()
    cu.minimum(x, x, { out = y })
    y:min({ out = m })
  end))
end
-- Axis epilogues: sum and mean of every float dtype, max and min of integers, along one axis or
-- two, of a transposed value, with a prologue, into a strided out= view.
for _, dt in ipairs({ "f32", "f64", "f16", "bf16", "c64", "c128", "i8", "u32", "i64", "bool" }) do
  local floating = not dt:match("^[iub]")
  local x = cu.rand({ 6, 5, 4 }):mul(9):astype(dt)
  local y = cu.empty({ 6, 5, 4 }, dt)
  local d, c = cu.ones({}, floating and dt or "i64"):astype(dt), cu.empty({}, dt)
  local out = cu.empty({ 4, 3 }, dt)
  local ops = floating and { "sum", "mean" } or { "max", "min" }
  for _, op in ipairs(ops) do
    for _, reduce in ipairs({
      function() return y[op](y, { axis = { 2, 3 } }) end,
      function() return y:transpose()[op](y:transpose(), { axis = 2, keepdims = true }) end,
      function() return y[op](y, { axis = { 1, 2 }, out = out[{ {}, 1 }] }) end,
    }) do
      write(cu.fuse.source(function()
        if floating then
          cu.mul(d, 1, { out = c })
          cu.mul(x, c, { out = y })
        else
          cu.maximum(d, d, { out = c })
          cu.maximum(x, c, { out = y })
        end
        return reduce()
      end))
    end
  end
end
-- Every reduction of the op table as an epilogue (the built-in functors in the generated code):
-- whole arrays of f32, f16, c64, i8 and bool, along an axis of f64 and u16 values.
for _, op in ipairs({ "sum", "mean", "max", "min", "prod", "norm", "argmax", "argmin", "var", "std", "any", "all",
  "nansum", "nanmean", "nanmax", "nanmin", "nanprod", "nanvar", "nanstd" }) do
  for _, case in ipairs({ { "f32" }, { "f16" }, { "c64" }, { "i8" }, { "bool" }, { "f64", 2 }, { "u16", 1 } }) do
    local dt, axis = case[1], case[2]
    local x = cu.rand({ 6, 5 }):mul(9):astype(dt)
    local y = cu.empty({ 6, 5 }, dt)
    local function fn()
      cu.conj(x, { out = y })
      return y[op](y, { axis = axis })
    end
    if pcall(fn) then write(cu.fuse.source(fn)) end
  end
end
print(count .. " sources")
