-- Several GPUs in one process, on every ordered pair of devices: copies of every dtype and layout
-- checked against the host, copies ordered after the source's work and freed stream-ordered, the
-- ledger and trace, mixed-device operations refused (tests/lua/multi_device.lua), plus what only
-- real GPUs have: peer access and link type from cudaDeviceCanAccessPeer and NVML, large copies
-- (peer or staged) with their bandwidth printed, and cu.compile kernels loaded and launched on
-- each device. Exits 69 with fewer than two GPUs.
--
-- Run with `culua --backend cuda tests/gpu/test_multi_gpu.lua`. CULUA_GPU_TEST_ON_HOST=1 runs it
-- on the host backend (with CULUA_HOST_DEVICES=2 or more): a check of the script itself, without
-- the GPU-only cases.
package.path = (arg and arg[0] and arg[0]:match("^(.*)[/\\]") or "tests/gpu") .. "/../lua/?.lua;" ..
    package.path
local T = require "cu.testing"

local on_host = os.getenv("CULUA_GPU_TEST_ON_HOST") == "1"
if cu.backend ~= "cuda" and not on_host then
  print("skip: test_multi_gpu needs --backend cuda")
  os.exit(69)
end
local n = #cu.devices()
if n < 2 then
  print(string.format("skip: test_multi_gpu needs two or more devices (found %d)", n))
  os.exit(69)
end

local M = require "multi_device"

T.case("peer access and link type of every pair", function()
  local devices = cu.devices()
  for _, d in ipairs(devices) do
    local line = {}
    for j = 0, n - 1 do
      if j ~= d.index then
        local p = d.peers[j]
        T.truthy(p, string.format("device %d lists peer %d", d.index, j))
        T.eq(type(p.access), "boolean")
        if on_host then
          T.eq(p.link, "host")
        else
          T.truthy(p.link == "nvlink" or p.link == "pcie", "link " .. tostring(p.link))
          -- the relation is symmetric on every machine culua supports
          T.eq(devices[j + 1].peers[d.index].link, p.link,
            string.format("link %d-%d seen from both ends", d.index, j))
          if p.link == "nvlink" then T.eq(p.access, true, "NVLink peers have peer access") end
        end
        line[#line + 1] = string.format("%d:%s%s", j, p.link, p.access and "+access" or "")
      end
    end
    print(string.format("device %d (%s): %s", d.index, d.name, table.concat(line, " ")))
  end
end)

T.case("large copies between every pair are exact; bandwidth printed", function()
  local count = 1 << 24  -- 64 MiB of f32, every value exact (below 2^24)
  if on_host then count = 1 << 20 end
  for i = 0, n - 1 do
    local src = M.on(i, function() return cu.arange(0, count, 1, "i32"):astype("f32") end)
    for j = 0, n - 1 do
      if j ~= i then
        local dst = M.on(j, function() return cu.empty(count, "f32") end)
        cu.copy(dst, src)  -- warm-up: peer access enabled, pools opened
        M.on(j, function() cu.sync() end)
        local t0 = cu.clock()
        local reps = 5
        for _ = 1, reps do cu.copy(dst, src) end
        M.on(j, function() cu.sync() end)
        local dt = cu.clock() - t0
        -- exact: the sum of 0..count-1 in f64, and spot checks
        T.eq(dst:astype("f64"):sum():item(), (count - 1) * count / 2.0)
        T.eq(dst[1], 0.0)
        T.eq(dst[count], count - 1.0)
        print(string.format("device %d -> %d (%s): %.1f GB/s", i, j,
          cu.devices()[i + 1].peers[j].link, reps * count * 4 / dt / 1e9))
      end
    end
  end
end)

if not on_host then
  T.case("a cu.compile module loads on each device; a launch goes to its arrays' device", function()
    local m = cu.compile([[
extern "C" __global__ void axpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}]])
    local count = 1000
    for d = 0, n - 1 do
      local x = M.on(d, function() return cu.arange(0, count, 1, "f32") end)
      local y = M.on(d, function() return cu.ones(count, "f32") end)
      -- launched while device 0 is current: it runs on device d, where x and y are
      m.axpy({ grid = (count + 255) // 256, block = 256 }, 2.0, x, y, count)
      T.eq(y.device, d)
      T.eq(y:astype("f64"):sum():item(), 2.0 * (count - 1) * count / 2 + count)
      local other = (d + 1) % n
      local z = M.on(other, function() return cu.ones(count, "f32") end)
      T.raises(function() m.axpy({ grid = 4, block = 256 }, 2.0, x, z, count) end,
        string.format("(array on device %d, expected device %d (the first array's device); copy it with cu.copy)",
          other, d))
      local s_other = M.on(other, function() return cu.stream() end)
      T.raises(function() m.axpy({ grid = 4, block = 256, stream = s_other }, 2.0, x, y, count) end,
        string.format("the stream belongs to device %d but the arrays to device %d", other, d))
      T.eq(y.device, d, "runtime usable after the refusals")
      T.eq(y:astype("f64"):sum():item(), 2.0 * (count - 1) * count / 2 + count)
    end
  end)

  T.case("cuBLAS and graphs run on every device", function()
    for d = 0, n - 1 do
      local _ <close> = cu.use_device(d)
      local a = cu.ones({ 64, 32 }, "f32")
      local b = cu.ones({ 32, 16 }, "f32")
      local c = cu.matmul(a, b)
      T.eq(c.device, d)
      T.eq(c:min():item(), 32.0)
      T.eq(c:max():item(), 32.0)
      local x = cu.zeros(256, "f32")
      local g = cu.graph(function(v) cu.add(v, 1, { out = v }) end, { x })
      T.eq(g.device, d)
      g:replay(3)
      T.eq(x:sum():item(), 768.0)
    end
  end)
end

for i = 0, n - 1 do
  for j = 0, n - 1 do
    if i ~= j then M.pair_cases(i, j) end
  end
end

T.run()
