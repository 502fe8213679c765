-- Isolated sweep points on the GPU (tests/cli/test_sweep_isolate.lua covers the rest on both
-- backends): a point whose kernel writes out of bounds faults the GPU (an illegal address poisons
-- its CUDA context) and fails; the points after it run in fresh contexts and are correct, and this
-- process's own context is untouched. This script is its own parent: every child runs it again up
-- to the sweep (the module is compiled in each, from the kernel cache).
local T = require "cu.testing"

local m = cu.compile([[
extern "C" __global__ void fill(float* x, float v, long long stride) { x[threadIdx.x * stride] = v; }
]])

local results = cu.sweep{
  name = "gpu_isolated",
  axes = {{"case", {"good", "wild", "good2", "wild2", "good3"}}},
  isolate = true, timeout = 120, quiet = true,
  run = function(p)
    local x = cu.zeros(64)
    local wild = p.case:find("wild") ~= nil
    m.fill({grid = 1, block = 64}, x, 2.0, wild and 1000000000 or 1)
    return {sum = x:sum():item()}
  end,
}

T.case("a point that faults the GPU fails; the others are correct", function()
  T.eq(#results, 5)
  for i, case in ipairs({"good", "wild", "good2", "wild2", "good3"}) do
    local r = results[i]
    T.eq(r.case, case)
    if case:find("wild") then
      T.eq(r.status, "failed", case)
      T.truthy(r.error:find("illegal", 1, true) or r.error:find("IllegalAddress", 1, true),
        case .. ": " .. tostring(r.error))
    else
      T.eq(r.status, "ok", case .. ": " .. tostring(r.error))
      T.eq(r.sum, 128, case)
    end
  end
end)

T.case("this process's context still works", function()
  local x = cu.zeros(64)
  m.fill({grid = 1, block = 64}, x, 3.0, 1)
  T.eq(x:sum():item(), 192)
end)

os.exit(T.run())
