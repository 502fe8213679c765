-- Run-time compiled kernels on the GPU: cu.compile with real kernels checked against references
-- (saxpy, a tiled matmul against cu.matmul, template instantiations, a shared-memory reduction,
-- more than 48 KiB of dynamic shared memory), the compile cache, attributes and occupancy, and
-- every kind of bad input, after which the runtime must still work.
local T = require "cu.testing"

local function interpreter()
  local i = -1
  while arg[i - 1] do i = i - 1 end
  return arg[i]
end

-- Largest absolute difference between two arrays of the same shape.
local function maxdiff(a, b)
  return cu.abs(a:astype("f64") - b:astype("f64")):max():item()
end

local SAXPY = [[
extern "C" __global__ void saxpy(float a, const float* __restrict__ x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
]]

T.case("saxpy matches a*x + y exactly", function()
  local m = cu.compile(SAXPY)
  local n = 1000003
  local x, y = cu.rand(n), cu.rand(n)
  local expected = cu.add(cu.mul(x, 2.5), y) -- a*x+y: one rounding each, as fmaf would not be
  local k = m.saxpy
  T.eq(k.name, "saxpy")
  T.eq(#k.params, 4)
  T.eq(k.params[2].name, "x")
  T.eq(k.params[2].type, "float const*")
  k({ grid = (n + 255) // 256, block = 256 }, 2.5, x, y, n)
  -- The kernel may contract a*x+y into one fma; compare within one rounding.
  T.truthy(maxdiff(y, expected) <= 2 ^ -22, "saxpy differs by " .. maxdiff(y, expected))
  T.eq(m.kernels, { "saxpy" })
  T.truthy(tostring(k):find("saxpy%(float a, float const%* x, float%* y, int n%)"), tostring(k))
end)

T.case("launch through k:launch, on a stream, with table dimensions", function()
  local m = cu.compile([[
extern "C" __global__ void fill2d(int* out, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) out[y * w + x] = y * 1000 + x;
}]])
  local s = cu.stream()
  local w, h = 70, 45
  local out = cu.zeros({ h, w }, "i32")
  m.fill2d:launch({ grid = { (w + 15) // 16, (h + 15) // 16 }, block = { 16, 16 }, stream = s }, out, w, h)
  s:sync()
  local t = out:totable()
  T.eq(t[1][1], 0)
  T.eq(t[45][70], 44 * 1000 + 69)
  T.eq(t[10][3], 9 * 1000 + 2)
end)

T.case("a configured kernel binds its launch configuration", function()
  local m = cu.compile(SAXPY)
  local n = 4096
  local s = cu.stream()
  local x, y = cu.ones(n), cu.zeros(n)
  local kc = m.saxpy:configure({ grid = n // 256, block = 256, stream = s })
  for _ = 1, 3 do kc(2.0, x, y, n) end
  s:sync()
  T.eq(y:sum():item(), 6 * n)
  T.truthy(tostring(kc):find("configured with grid {16, 1, 1}, block {256, 1, 1}", 1, true), tostring(kc))
  T.raises(function() kc(2.0, x, y) end, "takes 4 arguments, got 3")
  T.raises(function() m.saxpy:configure({ grid = 1, block = 4096 }) end, "block x is 4096")
end)

local MATMUL = [[
#define TILE 16
// C = A @ B, row-major, A is M x K, B is K x N.
extern "C" __global__ void matmul_tiled(const float* A, const float* B, float* C, int M, int N, int K) {
  __shared__ float As[TILE][TILE], Bs[TILE][TILE];
  int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
  float acc = 0.0f;
  for (int t = 0; t < K; t += TILE) {
    As[threadIdx.y][threadIdx.x] = (row < M && t + threadIdx.x < K) ? A[row * K + t + threadIdx.x] : 0.0f;
    Bs[threadIdx.y][threadIdx.x] = (col < N && t + threadIdx.y < K) ? B[(t + threadIdx.y) * N + col] : 0.0f;
    __syncthreads();
    for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  if (row < M && col < N) C[row * N + col] = acc;
}
]]

T.case("a tiled matmul agrees with cu.matmul", function()
  local m = cu.compile(MATMUL, { name = "matmul.cu" })
  local M, N, K = 300, 257, 131
  local a, b = cu.rand({ M, K }), cu.rand({ K, N })
  local c = cu.empty({ M, N })
  m.matmul_tiled({ grid = { (N + 15) // 16, (M + 15) // 16 }, block = { 16, 16 } }, a, b, c, M, N, K)
  local ref = cu.matmul(a:astype("f64"), b:astype("f64"))
  local err = maxdiff(c, ref)
  print(string.format("  tiled vs f64 reference: max error %.2e", err))
  T.truthy(err < 1e-3, "tiled matmul error " .. err)
  local attr = m.matmul_tiled.attributes
  T.eq(attr.static_shared, 2 * 16 * 16 * 4)
  T.truthy(attr.registers > 0 and attr.max_threads_per_block >= 256, "attributes")
end)

local TEMPLATES = [[
#include <cuda_fp16.h>
template <typename T, int SCALE>
__global__ void scale(T* x, T a, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * a * T(SCALE);
}
namespace ops {
template <class T> __global__ void twice(const T* in, T* out, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] + in[i];
}
}
]]

T.case("templates instantiate by name expression, each checked against its own types", function()
  local m = cu.compile(TEMPLATES)
  local kf = m:kernel("scale<float, 3>")
  T.eq(kf.params[1].type, "float*")
  T.eq(kf.params[2].type, "float")
  local x = cu.arange(100, "f32")
  kf({ grid = 1, block = 128 }, x, 0.5, 100)
  T.eq(x:totable()[11], 10 * 0.5 * 3)
  local kd = m:kernel("scale<double, 2>")
  local xd = cu.arange(10, "f64")
  kd({ grid = 1, block = 32 }, xd, 0.25, 10)
  T.eq(xd:totable()[5], 4 * 0.25 * 2)
  T.raises(function() kd({ grid = 1, block = 32 }, x, 0.25, 10) end, "takes f64 arrays, got f32")
  local kh = m:kernel("ops::twice<__half>")
  local h = cu.arange(8, "f16")
  local out = cu.empty(8, "f16")
  kh({ grid = 1, block = 32 }, h, out, 8)
  T.eq(out:totable()[8], 14)
  T.raises(function() return m.scale end, "is a template: ask for an instantiation")
  T.raises(function() return m:kernel("scale<float, 3, 4>") end, "has no kernel")
  -- Asking again returns the same object, compiled once.
  T.truthy(rawequal(m:kernel("scale<float, 3>"), kf), "kernel objects are cached")
end)

local REDUCE = [[
// Sum of n floats: each block reduces its slice in dynamic shared memory, then one atomicAdd.
extern "C" __global__ void block_sum(const float* x, double* out, long long n) {
  extern __shared__ double part[];
  double acc = 0;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    acc += x[i];
  part[threadIdx.x] = acc;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(out, part[0]);
}
// Uses all of the shared memory it is given: 96 KiB needs the opt-in attribute.
extern "C" __global__ void big_shared(double* out, int words) {
  extern __shared__ float buf[];
  for (int i = threadIdx.x; i < words; i += blockDim.x) buf[i] = (float)i;
  __syncthreads();
  if (threadIdx.x == 0) { double s = 0; for (int i = 0; i < words; ++i) s += buf[i]; out[0] = s; }
}
]]

T.case("a shared-memory reduction and 96 KiB of dynamic shared memory", function()
  local m = cu.compile(REDUCE)
  local n = 3000017
  local x = cu.rand(n)
  local out = cu.zeros(1, "f64")
  m.block_sum({ grid = 264, block = 512, shared = 512 * 8 }, x, out, n)
  local ref = x:astype("f64"):sum():item()
  T.near(out:item(), ref, 1e-9 * n, "block_sum")
  local words = 96 * 1024 // 4
  local big = cu.zeros(1, "f64")
  m.big_shared({ grid = 1, block = 256, shared = words * 4 }, big, words)
  T.eq(big:item(), (words - 1) * words / 2)
  T.truthy(m.big_shared.attributes.max_dynamic_shared >= words * 4, "attribute raised")
end)

T.case("occupancy and the best block size", function()
  local m = cu.compile(MATMUL)
  local occ = m.matmul_tiled:occupancy(256)
  T.truthy(occ.blocks_per_sm >= 1 and occ.occupancy > 0 and occ.occupancy <= 1, "occupancy")
  T.eq(occ.active_warps, occ.blocks_per_sm * 8)
  local best = m.matmul_tiled:best_block()
  T.truthy(best % 32 == 0 and best >= 32 and best <= 1024, "best block " .. best)
end)

T.case("the compile cache: a second compile of the same source compiles nothing", function()
  local src = SAXPY .. "// unique " .. os.time() .. " " .. math.random(1 << 30) .. "\n"
  local m1 = cu.compile(src)
  T.eq(m1.info.cache, "miss")
  T.truthy(m1.info.compile_ms > 0, "compile time reported")
  local m2 = cu.compile(src)
  T.eq(m2.info.cache, "hit")
  T.eq(m2.info.compile_ms, m1.info.compile_ms, "the original compile time is kept")
  T.truthy(m2.info.elapsed_ms < m1.info.elapsed_ms, "a hit is faster than the compile")
  T.eq(cu.compile(src, { cache = false }).info.cache, "off")
  T.eq(cu.compile(src, { options = { "-DX=1" } }).info.cache, "miss", "options are in the key")
  print(string.format("  compile %.1f ms, cache hit %.2f ms (%s)", m1.info.compile_ms,
    m2.info.elapsed_ms, m2.info.cache_file))
end)

T.case("a second run of a script compiles nothing", function()
  local dir = os.tmpname()
  os.remove(dir)
  local script = os.tmpname()
  local f = assert(io.open(script, "w"))
  f:write("local m = cu.compile([[extern \"C\" __global__ void k(int* p) { *p = 7; }]])\n",
    "local e = cu.elementwise('f32 x -> f32 y', 'y = x * 3')\n",
    "e(cu.ones(10))\n",
    "print(m.info.cache, 'template compiles ' .. e.info.cache_misses)\n")
  f:close()
  local cmd = string.format("CULUA_CACHE_DIR=%s %s %s 2>&1", dir, interpreter(), script)
  local function run()
    local p = io.popen(cmd)
    local out = p:read("a")
    p:close()
    return out
  end
  local first, second = run(), run()
  os.remove(script)
  os.execute("rm -rf " .. dir)
  T.truthy(first:find("miss\ttemplate compiles 1", 1, true), first)
  T.truthy(second:find("hit\ttemplate compiles 0", 1, true), second)
end)

T.case("compile errors show NVRTC's log at the script's lines", function()
  local ok, err = pcall(cu.compile, [[
extern "C" __global__ void broken(float* x) {
  x[0] = undefined_name;
}
]])
  T.truthy(not ok, "must fail")
  local line = debug.getinfo(1, "l").currentline
  -- The source string starts on the line after `pcall(cu.compile, [[`; the error is its line 2.
  T.truthy(err:find("test_rtc_gpu.lua:" .. (line - 4) .. ": error: identifier \"undefined_name\" is undefined",
    1, true), err)
end)

T.case("bad input: clear errors, and the runtime stays usable", function()
  local m = cu.compile(SAXPY .. [[
struct Params { float a; int n; };
extern "C" __global__ void with_struct(Params p, float* y) { y[0] = p.a; }
extern "C" __global__ void narrow(unsigned char c, short s, unsigned u, long long l, bool b, double d) {}
]])
  local k = m.saxpy
  local x, y = cu.rand(256), cu.rand(256)
  local cfg = { grid = 1, block = 256 }
  T.raises(function() return m.nope end,
    "has no kernel or field 'nope' (its kernels: saxpy, with_struct, narrow; its fields:")
  T.raises(function() k(cfg, 2.0, x, y) end, "takes 4 arguments after the launch configuration, got 3")
  T.raises(function() k(cfg, 2.0, x, y, 256, 1) end, "got 5")
  T.raises(function() k(cfg, 2.0, x, y, 2.5) end, "argument 4 (n: int) must be an integer, got 2.5")
  T.raises(function() k(cfg, 2.0, x, y, 2 ^ 40) end, "argument 4 (n: int)")
  T.raises(function() k(cfg, 2.0, 3, y, 256) end, "argument 2 (x: float const*) must be a device array, got number")
  T.raises(function() k(cfg, 2.0, cu.rand(256, "f64"), y, 256) end, "takes f32 arrays, got f64")
  T.raises(function() k(cfg, 2.0, x:to_host(), y, 256) end, "must be a device array, got a pageable host array")
  T.raises(function() k(cfg, 2.0, cu.rand({ 16, 16 }):transpose(), y, 256) end, "non-contiguous")
  local freed = cu.rand(256)
  freed:free()
  T.raises(function() k(cfg, 2.0, freed, y, 256) end, "released")
  T.raises(function() k(cfg, "2", x, y, 256) end, "must be a number, got string")
  T.raises(function() k(cfg, 1e39, x, y, 256) end, "overflows float")
  T.raises(function() k({ grid = 0, block = 256 }, 2.0, x, y, 256) end, "at least 1")
  T.raises(function() k({ grid = 1, block = 2048 }, 2.0, x, y, 256) end,
    "block x is 2048; the device allows at most 1024")
  T.raises(function() k({ grid = 1, block = { 32, 32, 2 } }, 2.0, x, y, 256) end, "a block of 2048 threads")
  T.raises(function() k({ grid = { 1, 70000 }, block = 1 }, 2.0, x, y, 256) end, "grid y is 70000")
  T.raises(function() k({ grid = 1, block = 256, shared = 1 << 20 }, 2.0, x, y, 256) end, "exceed the device's limit")
  T.raises(function() k({ grid = 1 }, 2.0, x, y, 256) end, "needs block=")
  T.raises(function() k({ grid = 1, block = 256, shard = 0 }, 2.0, x, y, 256) end, "unknown option 'shard'")
  T.raises(function() k(2.0, x, y, 256) end, "the first argument must be the launch configuration")
  T.raises(function() m.with_struct(cfg, {}, y) end, "struct parameters are not supported")
  local nk = m.narrow
  T.raises(function() nk(cfg, 256, 0, 0, 0, true, 0) end, "argument 1 (c: unsigned char)")
  T.raises(function() nk(cfg, 0, 40000, 0, 0, true, 0) end, "argument 2 (s: short)")
  T.raises(function() nk(cfg, 0, 0, -1, 0, true, 0) end, "argument 3 (u: unsigned int)")
  T.raises(function() nk(cfg, 0, 0, 0, 0, 2, 0) end, "argument 5 (b: bool)")
  nk(cfg, 255, -32768, 4294967295, math.mininteger, false, 1e300)
  T.raises(function() cu.compile(42) end, "bad argument #1 to 'compile' (string of CUDA C++ expected, got number)")
  T.raises(function() cu.compile(SAXPY, { optoins = {} }) end, "unknown option 'optoins'")
  -- Still usable: a correct launch works.
  k(cfg, 2.0, x, y, 256)
  cu.sync()
end)

T.case("modules, kernels and configured kernels check self and refuse unknown fields", function()
  local m = cu.compile(SAXPY)
  local k = m.saxpy
  local bound = k:configure({ grid = 1, block = 256 })
  local a, s = cu.ones(3), cu.stream()
  -- Unknown fields name the field and the type.
  T.raises(function() return m.nope end, "module 'kernel.cu' has no kernel or field 'nope'")
  T.raises(function() return k.nope end, "cu.Kernel has no field or method 'nope'")
  T.raises(function() return bound.nope end, "cu.ConfiguredKernel has no field 'nope'")
  -- Every method and metamethod refuses a foreign self, also the methods k's __index makes.
  local foreign = { 5, "x", {}, io.stdout, a, s, m, k, bound }
  local fns = {
    ["cu.Module"] = { getmetatable(m).__index, getmetatable(m).__gc, getmetatable(m).__tostring, m.kernel },
    ["cu.Kernel"] = { getmetatable(k).__index, getmetatable(k).__gc, getmetatable(k).__tostring,
      getmetatable(k).__call, k.launch, k.configure, k.occupancy, k.best_block },
    ["cu.ConfiguredKernel"] = { getmetatable(bound).__index, getmetatable(bound).__gc,
      getmetatable(bound).__tostring, getmetatable(bound).__call },
  }
  local owner = { ["cu.Module"] = m, ["cu.Kernel"] = k, ["cu.ConfiguredKernel"] = bound }
  for type_name, list in pairs(fns) do
    for i, f in ipairs(list) do
      for _, v in ipairs(foreign) do
        if getmetatable(v) ~= getmetatable(owner[type_name]) then
          local ok, err = pcall(f, v, "saxpy", 1)
          T.truthy(not ok and tostring(err):find(type_name .. " expected", 1, true),
            string.format("%s function %d with %s: %s", type_name, i, tostring(v), tostring(err)))
        end
      end
    end
  end
  T.raises(function() getmetatable(a).__gc(k) end, "(cu.Array expected, got cu.Kernel)")
  T.raises(function() getmetatable(s).__gc(bound) end, "(cu.Stream expected, got cu.ConfiguredKernel)")
  -- Everything still works.
  local x, y = cu.ones(256), cu.zeros(256)
  bound(2.0, x, y, 256)
  k({ grid = 1, block = 256, stream = s }, 1.0, x, y, 256)
  s:sync()
  T.eq(y:sum():item(), 3 * 256)
  -- A kernel released explicitly: its configured kernel keeps working, the kernel raises.
  getmetatable(k).__gc(k)
  T.raises(function() k({ grid = 1, block = 256 }, 1.0, x, y, 256) end, "released")
  bound(1.0, x, y, 256)
  T.eq(y:sum():item(), 4 * 256)
  getmetatable(m).__gc(m)
  T.raises(function() return m.saxpy end, "attempt to use a released module")
end)

T.case("overloaded kernels are refused by name", function()
  local m = cu.compile([[
__global__ void over(float* x) { x[0] = 1; }
__global__ void over(double* x) { x[0] = 2; }
]])
  T.raises(function() return m.over end, "is overloaded")
end)

T.case("a kernel that writes out of bounds poisons the runtime, naming the kernel and line", function()
  local script = os.tmpname()
  local f = assert(io.open(script, "w"))
  f:write([[
local m = cu.compile('extern "C" __global__ void wild(float* x) { x[threadIdx.x * 1000000000ll] = 1; }')
local x = cu.zeros(4)
m.wild({grid = 1, block = 64}, x)
cu.sync()
]])
  f:close()
  local p = io.popen(interpreter() .. " " .. script .. " 2>&1")
  local out = p:read("a")
  local ok = p:close()
  os.remove(script)
  T.truthy(not ok, "the script must fail")
  T.truthy(out:find("kernel 'wild' launched at " .. script .. ":3", 1, true), out)
  T.truthy(out:find("cudaErrorIllegalAddress", 1, true) or out:find("illegal", 1, true), out)
end)

os.exit(T.run())
