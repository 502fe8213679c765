-- cu.mpi with device arrays on the CUDA backend, one rank (no mpirun: a singleton job). Device
-- memory goes straight to MPI where it is CUDA-aware, else through pinned host memory: both paths
-- must give the bytes back unchanged. (tests/CMakeLists.txt also runs tests/mpi/test_mpi.lua with
-- two ranks sharing this GPU: mpi.gpu.np2.) Exit 69 (skipped) on a build without MPI.
local T = require "cu.testing"

if not cu.mpi.available() then
  print("skip: culua was built without MPI")
  os.exit(69)
end

T.case("one rank on the GPU", function()
  T.eq(cu.backend, "cuda")
  T.eq({ cu.mpi.rank, cu.mpi.size }, { 0, 1 })
  print("CUDA-aware MPI: " .. tostring(cu.mpi.cuda_aware()))
end)

local DTYPES = { "f32", "f64", "f16", "bf16", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "c64",
  "c128" }

T.case("send/recv to itself: device arrays of every dtype, contiguous or not", function()
  for _, dtype in ipairs(DTYPES) do
    local a = cu.arange(24, dtype):reshape({ 4, 6 })
    for _, v in ipairs({ a, a:transpose(), a:narrow(2, 2, 3) }) do
      cu.mpi.send(v, 0, 11)
      local got, src, tag = cu.mpi.recv(0, 11)
      T.eq({ src, tag }, { 0, 11 })
      T.eq({ got.dtype, got.location, got.device }, { dtype, "device", cu.device() })
      T.eq(got.shape, v.shape)
      T.eq(tostring(got:to_host()), tostring(v:to_host()), dtype)
    end
  end
  local out = cu.zeros({ 4, 6 }, "i32")
  cu.mpi.send(cu.arange(24, "i32"):reshape({ 4, 6 }), 0)
  cu.mpi.recv(0, 0, { out = out })
  T.eq(out:to_host():reshape({ 24 }):totable(), cu.arange(24, "i32"):to_host():totable(), "into out=")
end)

T.case("allreduce and bcast of device arrays (one rank: the values come back)", function()
  for _, dtype in ipairs({ "f32", "f64", "i32", "i64", "u8", "c64" }) do
    local a = cu.arange(200, dtype)
    local ref = tostring(a:to_host())
    cu.mpi.allreduce(a)
    T.eq(tostring(a:to_host()), ref, dtype .. " allreduce")
    local out = cu.zeros(200, dtype)
    cu.mpi.allreduce(a, { out = out, op = dtype == "c64" and "prod" or "max" })
    T.eq(tostring(out:to_host()), ref, dtype .. " allreduce out=")
    T.eq(tostring(cu.mpi.bcast(a):to_host()), ref, dtype .. " bcast")
  end
  local g = cu.mpi.gather(cu.arange(5, "f32"))
  T.eq({ #g, g[1].location }, { 1, "device" })
  T.eq(g[1]:to_host():totable(), { 0, 1, 2, 3, 4 })
end)

T.case("a 256 MiB device array through allreduce (the staging copies at size)", function()
  local n = 64 << 20
  local a = cu.rand(n)
  local before = a:sum():item()
  cu.mpi.allreduce(a, { op = "max" })
  T.near(a:sum():item(), before, math.abs(before) * 1e-6)
end)

os.exit(T.run())
