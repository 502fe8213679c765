-- cu.tune on the GPU: run-time compiled candidates (source= with -D macros from the space and
-- options(p), a template of a module, a cu.Kernel with launch(p) and args(p)), outputs filled with
-- NaN before the checked launch (a kernel that writes nothing is rejected), compile errors as
-- failed rows, the cache of compiled kernels, cu.elementwise tuned over its NVRTC options, and
-- with isolate = true (once cu.sweep has it) a candidate that faults the GPU.
local T = require "cu.testing"

local function interpreter()
  local i = -1
  while arg[i - 1] do i = i - 1 end
  return arg[i]
end

local BENCH = { min_samples = 3, min_time = 0.005, max_time = 0.5, hot = false }
local N = 1 << 20

local SCALE = [[
extern "C" __global__ void scale(const float* __restrict__ x, float* __restrict__ y, float a, int n) {
  int i = (blockIdx.x * blockDim.x + threadIdx.x) * PER_THREAD;
#pragma unroll
  for (int k = 0; k < PER_THREAD; ++k)
    if (i + k < n) y[i + k] = a * x[i + k];
}
]]

local x = cu.arange(N, "f32")
local expected = (cu.arange(N, "f32") * 2):to_host()
local function check_y(y)
  local d = cu.abs(y:to_host() - expected):max():item()
  if d ~= d or d > 0 then return false, "max difference " .. tostring(d) end
  return true
end

T.case("source=: a compile per candidate with -D macros and options(p); launch(p)", function()
  local y = cu.empty(N, "f32")
  local best, tbl = cu.tune { source = SCALE, kernel = "scale",
    space = { PER_THREAD = { 1, 2, 4 }, block = { 128, 256 }, fast = { false, true } },
    options = function(p) return p.fast and { "-use_fast_math" } or {} end,
    launch = function(p) return { grid = (N // p.PER_THREAD + p.block - 1) // p.block, block = p.block } end,
    args = { x, y, 2.0, N }, check = function(args) return check_y(args[2]) end, bench = BENCH, quiet = true }
  T.eq(#tbl.rows, 12)
  for _, r in ipairs(tbl.rows) do T.eq(r.status, "ok", r.error) end
  T.truthy(best.PER_THREAD and best.block and best.fast ~= nil, "best has every parameter")
  T.eq(tbl.best.metric, tbl.best.bench.gpu.median)
  -- a macro that breaks the compile: that candidate failed with the compiler's message
  local _, t2 = cu.tune { source = SCALE, kernel = "scale", space = { PER_THREAD = { 1, "x(" } },
    launch = { grid = N // 256, block = 256 }, args = { x, y, 2.0, N }, bench = BENCH, quiet = true }
  T.eq(t2.rows[1].status, "ok")
  T.eq(t2.rows[2].status, "failed")
  T.truthy(#t2.rows[2].error > 0, "the compile error")
end)

T.case("a cu.Kernel with args(p): a kernel that writes nothing is rejected (NaN-filled outputs)", function()
  local y = cu.empty(N, "f32")
  local m = cu.compile([[
extern "C" __global__ void maybe(const float* x, float* y, float a, int n, int skip) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (!skip && i < n) y[i] = a * x[i];
}]])
  -- a right launch first leaves right values in y: the NaN fill must undo them
  m.maybe({ grid = N // 256, block = 256 }, x, y, 2.0, N, 0)
  local best, tbl = cu.tune { kernel = m.maybe, space = { skip = { 1, 0 }, block = { 256, 512 } },
    launch = function(p) return { grid = N // p.block, block = p.block } end,
    args = function(p) return { x, y, 2.0, N, p.skip } end, size = N,
    check = function(args) return check_y(args[2]) end, bench = BENCH, quiet = true }
  T.eq(best.skip, 0)
  for _, r in ipairs(tbl.rows) do
    T.eq(r.status, r.skip == 1 and "rejected" or "ok", r.error)
  end
end)

T.case("module= with a template expression: the space's names substituted", function()
  local m = cu.compile([[
template <typename T, int PER>
__global__ void twice(const T* x, T* y, int n) {
  int i = (blockIdx.x * blockDim.x + threadIdx.x) * PER;
  for (int k = 0; k < PER; ++k)
    if (i + k < n) y[i + k] = x[i + k] + x[i + k];
}]])
  local y = cu.empty(N, "f32")
  local best, tbl = cu.tune { module = m, kernel = "twice<float, PER>", space = { PER = { 1, 4 } },
    launch = function(p) return { grid = (N // p.PER + 255) // 256, block = 256 } end,
    args = { x, y, N }, check = function(args) return check_y(args[2]) end, bench = BENCH, quiet = true }
  T.eq(#tbl.rows, 2)
  for _, r in ipairs(tbl.rows) do T.eq(r.status, "ok", r.error) end
  T.truthy(best.PER == 1 or best.PER == 4, "a winner")
  T.eq(tbl.name, "twice")
end)

T.case("cu.elementwise tuned over its NVRTC options (a Lua function of the parameters)", function()
  local y = cu.empty(N, "f32")
  local best, tbl = cu.tune { key = "axpy elementwise v1",
    kernel = function(p)
      local k = cu.elementwise("f32 x -> f32 y", "y = 2.0f * x", { options = p.options })
      return function() return k(x, { out = y }) end
    end,
    space = { options = { {}, { "-use_fast_math" }, { "--fmad=false" } } }, check = check_y, bench = BENCH,
    quiet = true }
  T.eq(#tbl.rows, 3)
  for _, r in ipairs(tbl.rows) do T.eq(r.status, "ok", r.error) end
  T.eq(type(best.options), "table")
end)

T.case("the cache of a compiled kernel: the second tune is a hit", function()
  local path = os.tmpname()
  local y = cu.empty(N, "f32")
  local spec = function()
    return { source = SCALE, kernel = "scale", space = { PER_THREAD = { 1, 2 } },
      launch = function(p) return { grid = (N // p.PER_THREAD + 255) // 256, block = 256 } end,
      args = { x, y, 2.0, N }, bench = BENCH, quiet = true, cache = path }
  end
  local best, tbl = cu.tune(spec())
  T.eq(tbl.cached, false)
  local best2, tbl2 = cu.tune(spec())
  T.eq(tbl2.cached, true)
  T.eq(best2, best)
  T.truthy(tbl2.key:find("cc=" .. cu.devices()[cu.device() + 1].cc, 1, true), tbl2.key)
  T.truthy(tbl2.key:find("driver=%d"), tbl2.key)
  T.truthy(tbl2.key:find("args=f32%[1048576%],f32%[1048576%],2%.0,1048576"), tbl2.key)
  os.remove(path)
end)

T.case("isolate = true: a candidate that faults the GPU is a failed row, the others run", function()
  local _, err = pcall(cu.sweep, { isolate = false }) -- an error either way (no run=): which one
  if tostring(err):find("unknown option 'isolate'", 1, true) then
    T.skip("cu.sweep does not support isolate= in this build")
  end
  local script = os.tmpname()
  local f = assert(io.open(script, "w"))
  f:write([[
local m = cu.compile('extern "C" __global__ void wild(float* x, int far) { x[threadIdx.x * (far ? 1000000000ll : 1ll)] = 1; }')
local x = cu.zeros(64)
local best, tbl = cu.tune{kernel = m.wild, space = {far = {1, 0}}, launch = {grid = 1, block = 64},
  args = function(p) return {x, p.far} end, isolate = true, timeout = 60, quiet = true,
  bench = {min_samples = 3, min_time = 0.005, max_time = 0.5, hot = false}}
print("ROW1 " .. tbl.rows[1].status .. " " .. tostring(tbl.rows[1].error))
print("BEST far=" .. best.far)
]])
  f:close()
  local p = io.popen(interpreter() .. " " .. script .. " 2>&1")
  local out = p:read("a")
  local closed = p:close()
  os.remove(script)
  T.truthy(closed, out)
  T.truthy(out:find("ROW1 failed", 1, true), out)
  T.truthy(out:find("illegal", 1, true) or out:find("IllegalAddress", 1, true), out)
  T.truthy(out:find("BEST far=0", 1, true), out)
end)

os.exit(T.run())
