-- Run-time kernels through the Lua contract on both backends. The host backend cannot run CUDA
-- source: cu.compile and calls of cu.elementwise/cu.reduction say so clearly, and the templates'
-- signatures are still checked when they are made. On the CUDA backend a small kernel runs.
local T = require "cu.testing"

local SRC = [[extern "C" __global__ void add1(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}]]

if cu.backend == "host" then
  T.case("cu.compile needs a GPU", function()
    T.raises(function() cu.compile(SRC) end,
      "run-time compiled CUDA kernels (cu.compile, cu.elementwise, cu.reduction) need a GPU")
    -- The runtime is still usable.
    T.eq(cu.ones(3):sum():item(), 3)
  end)

  T.case("template calls need a GPU; their signatures are checked at once", function()
    local f = cu.elementwise("f32 x -> f32 y", "y = x + 1")
    T.truthy(tostring(f):find("cu.ElementwiseKernel"), tostring(f))
    T.raises(function() f(cu.ones(4)) end, "need a GPU")
    local r = cu.reduction("f32 x -> f32 y", { reduce = "a + b", identity = 0 })
    T.raises(function() r(cu.ones(4)) end, "need a GPU")
  end)
else
  T.case("a small kernel runs", function()
    local m = cu.compile(SRC)
    local x = cu.zeros(100)
    m.add1({ grid = 1, block = 128 }, x, 100)
    T.eq(x:sum():item(), 100)
    local f = cu.elementwise("f32 x -> f32 y", "y = x + 1")
    T.eq(f(x):sum():item(), 200)
  end)
end

T.case("template signatures are checked when made", function()
  T.raises(function() cu.elementwise("f32 x f32 y -> f32 z", "z = x") end, "each parameter is 'TYPE NAME'")
  T.raises(function() cu.elementwise("f32 x -> ", "z = x") end, "has no outputs")
  T.raises(function() cu.elementwise("f32 n -> f32 z", "z = n") end, "the name 'n' is reserved")
  T.raises(function() cu.elementwise("f32 x -> f32 z", 3) end,
    "bad argument #2 to 'elementwise' (string expected for the body, got number)")
  T.raises(function() cu.reduction("f32 a -> f32 y", { reduce = "a + b", identity = 0 }) end,
    "the name 'a' is reserved")
  T.raises(function() cu.reduction("f32 x, f32 z -> f32 y", { reduce = "a + b", identity = 0 }) end,
    "(option 'map': required)")
  T.raises(function() cu.reduction("f32 x -> f32 y", { reduce = "a + b", identity = 0, mpa = "x" }) end,
    "unknown option 'mpa'")
end)

os.exit(T.run())
