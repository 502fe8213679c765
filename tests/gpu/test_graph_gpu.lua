-- Graphs on the GPU: what only the CUDA backend captures (cu.compile kernels and templates,
-- cuBLAS under capture with the graph's own workspace, reductions whose scratch memory becomes
-- graph memory nodes, kernels compiled and streams created inside the capture), updates of such
-- graphs in place, and replay cost against eager launches (printed). tests/lua/test_graph.lua
-- covers the contract on both backends.
local T = require "cu.testing"

local function maxdiff(a, b)
  return cu.abs(a - b):max():astype("f64"):item()
end

local SAXPY = [[
extern "C" __global__ void saxpy(float a, const float* __restrict__ x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
template <class T, int K> __global__ void scale(T* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= K;
}
extern "C" __global__ void empty() {}
]]

T.case("cu.compile kernels and template instances are captured, replayed and updated", function()
  local m = cu.compile(SAXPY)
  local n = 1 << 20
  local x = cu.rand(n)
  local y0 = cu.rand(n)
  local y = y0:clone()
  local cfg = { grid = (n + 255) // 256, block = 256 }
  local scale3 = m:kernel("scale<float, 3>")
  local g = cu.graph(function(a)
    m.saxpy(cfg, a, x, y, n)
    scale3(cfg, y, n)
  end, { 2.0 })
  T.eq(g.nodes, 2)
  T.eq(maxdiff(y, y0), 0, "nothing ran at capture")
  g:replay(2)
  -- y = 3 (2x + 3 (2x + y0)) = 6x + 18x + 9 y0 = 24x + 9y0
  local expected = x * 24 + y0 * 9
  T.truthy(maxdiff(y, expected) < 1e-4, "after two launches: " .. maxdiff(y, expected))
  -- A new scalar for the same kernels: updated in place.
  y:fill(0)
  T.eq(g:update(function(a)
    m.saxpy(cfg, a, x, y, n)
    scale3(cfg, y, n)
  end, { 0.5 }), "updated")
  g:launch()
  T.truthy(maxdiff(y, x * 1.5) < 1e-5, "after the update")
end)

T.case("cu.elementwise and cu.reduction templates are captured", function()
  local f = cu.elementwise("f32 x, f32 y -> f32 z", "z = 2*x + y")
  local sumsq = cu.reduction("f32 x -> f32 y", { map = "x * x", reduce = "a + b", identity = 0,
    acc = "f64" })
  local x, y = cu.rand(1 << 20), cu.rand(1 << 20)
  local z = cu.zeros(1 << 20)
  local r
  local g = cu.graph(function()
    f(x, y, { out = z })
    r = sumsq(z)
  end)
  g:launch()
  T.eq(maxdiff(z, x * 2 + y), 0)
  local ref = (z:astype("f64") * z:astype("f64")):sum():item()
  T.near(r:item(), ref, 1e-6 * ref)
  x:fill(1)
  y:fill(1)
  g:launch()
  T.near(r:item(), 9 * (1 << 20), 1e-3)
end)

T.case("cuBLAS under capture: matmul of every float dtype, batched, transposed; dot", function()
  for _, dt in ipairs({ "f32", "f64", "f16", "bf16", "c64", "c128" }) do
    local a = cu.rand({ 96, 64 }, dt)
    local b = cu.rand({ 64, 80 }, dt)
    local ab = cu.rand({ 3, 32, 16 }, dt)
    local bb = cu.rand({ 3, 16, 8 }, dt)
    local eager = cu.matmul(a, b)
    local eager_t = cu.matmul(b, a, { ta = true, tb = true })
    local eager_b = cu.matmul(ab, bb)
    local c, ct, cb
    local g = cu.graph(function()
      c = cu.matmul(a, b)
      ct = cu.matmul(b, a, { ta = true, tb = true })
      cb = cu.matmul(ab, bb)
    end)
    g:launch()
    -- The graph's cuBLAS workspace may let cuBLAS pick another algorithm: within rounding.
    local tol = ({ f64 = 1e-11, c128 = 1e-11, f32 = 1e-4, c64 = 1e-4, f16 = 0.05, bf16 = 0.3 })[dt]
    for what, pair in pairs({ matmul = { c, eager }, transposed = { ct, eager_t },
      batched = { cb, eager_b } }) do
      local diff = maxdiff(pair[1], pair[2])
      T.truthy(diff <= tol, string.format("%s %s differs by %g", dt, what, diff))
      if diff ~= 0 then print(string.format("  %s %s: graph and eager differ by %g", dt, what, diff)) end
    end
  end
  local v = cu.rand(1 << 16, "f64")
  local d
  local g = cu.graph(function() d = cu.dot(v, v) end)
  g:launch()
  T.near(d:item(), cu.dot(v, v):item(), 1e-9)
end)

T.case("large reductions (scratch memory inside the graph) and update of such a graph", function()
  local n = 1 << 24
  local x = cu.rand(n, "f32")
  local y = cu.rand(n, "f32")
  local s, m, am
  local function work(a)
    s = a:sum()
    m = a:max()
    am = a:argmax()
  end
  local g = cu.graph(work, { x })
  g:launch()
  T.near(s:item(), x:sum():item(), 1e-6 * x:sum():item())
  T.eq(m:item(), x:max():item())
  T.eq(am:item(), x:argmax():item())
  local result = g:update(work, { y })
  T.truthy(result == "updated" or result == "reinstantiated", result)
  g:launch()
  T.near(s:item(), y:sum():item(), 1e-6 * y:sum():item())
  T.eq(m:item(), y:max():item())
end)

T.case("a kernel compiled and a stream created inside the capture", function()
  local n = 4096
  local x = cu.arange(n, "f32")
  local out = cu.zeros(n)
  local g = cu.graph(function()
    local mm = cu.compile([[
extern "C" __global__ void triple(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 3 * x[i];
}]])
    local s2 = cu.stream()
    s2:wait(cu.event():record())
    mm.triple({ grid = n // 256, block = 256, stream = s2 }, x, out, n)
    cu.current_stream():wait(cu.event():record(s2))
  end)
  g:launch()
  T.eq(out[n], 3 * (n - 1))
end)

T.case("replay of 1000 empty kernels, against eager launches (figures printed, not checked)", function()
  local m = cu.compile(SAXPY)
  local k = m.empty:configure({ grid = 1, block = 32 })
  local nodes = 1000
  local g = cu.graph(function()
    for _ = 1, nodes do k() end
  end)
  T.eq(g.nodes, nodes)
  g:replay(3)
  cu.sync()
  local reps = 20
  local eager_ms = cu.time(function()
    for _ = 1, reps * nodes do k() end
  end)
  local graph_ms = cu.time(function() g:replay(reps) end)
  local eager_us = eager_ms * 1e3 / (reps * nodes)
  local node_us = graph_ms * 1e3 / (reps * nodes)
  print(string.format("  empty kernel: eager %.3f us/launch, graph %.3f us/node (%.1fx), " ..
    "capture %.2f ms, instantiate %.2f ms for %d nodes", eager_us, node_us, eager_us / node_us,
    g.capture_ms, g.instantiate_ms, nodes))
end)

T.run()
