-- Bandwidth of element-wise operations on large contiguous arrays, for comparing the dedicated
-- (hot) kernels with the run-time-switch kernels (docs/design.md, "Precompiled kernels"): run it
-- twice, once with CULUA_ELEMENTWISE_SWITCH=1 in the environment (every operation through the
-- switch kernels), and compare the lines.
--   culua scripts/bench/elementwise_paths.lua [MiB]
local mib = tonumber(arg and arg[1]) or 256
local mode = os.getenv("CULUA_ELEMENTWISE_SWITCH") or "0"
mode = (mode ~= "" and mode ~= "0") and "switch" or "dedicated"

local cases = {
  -- name, dtype, inputs, result bytes per element factor, function
  { "add", "f32", 2, function(a, b, c) cu.add(a, b, { out = c }) end },
  { "mul", "f64", 2, function(a, b, c) cu.mul(a, b, { out = c }) end },
  { "mul", "c64", 2, function(a, b, c) cu.mul(a, b, { out = c }) end },
  { "add", "f16", 2, function(a, b, c) cu.add(a, b, { out = c }) end },
  { "lt", "f32", 2, function(a, b, c) cu.lt(a, b, { out = c }) end },
  { "maximum", "i32", 2, function(a, b, c) cu.maximum(a, b, { out = c }) end },
  { "neg", "f32", 1, function(a, _, c) cu.neg(a, { out = c }) end },
  { "exp", "f32", 1, function(a, _, c) cu.exp(a, { out = c }) end },
  { "sqrt", "f64", 1, function(a, _, c) cu.sqrt(a, { out = c }) end },
  { "abs", "c64", 1, function(a, _, c) cu.abs(a, { out = c }) end },
}
local result_dtype = { lt = "bool", abs = { c64 = "f32" } }

local e0, e1 = cu.event(), cu.event()
print(string.format("# %s kernels, %d MiB inputs, %s backend", mode, mib, cu.backend))
for _, case in ipairs(cases) do
  local name, dt, nin, fn = case[1], case[2], case[3], case[4]
  local item = ({ f32 = 4, f64 = 8, c64 = 8, f16 = 2, i32 = 4 })[dt]
  local n = mib * 1024 * 1024 // item
  local int = dt:sub(1, 1) == "i"
  local a, b = cu.full(n, int and 3 or 1.5, dt), cu.full(n, int and 5 or 2.25, dt)
  local rdt = result_dtype[name]
  if type(rdt) == "table" then rdt = rdt[dt] end
  rdt = rdt or dt
  local c = cu.empty(n, rdt)
  local bytes = nin * n * item + c.nbytes
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
  print(string.format("%-8s %-4s %8.1f GB/s  (%.3f ms)", name, dt, bytes / (best * 1e6), best))
  a:free(); b:free(); c:free()
end
