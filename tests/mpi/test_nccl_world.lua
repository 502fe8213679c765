-- cu.nccl.comm_world under `mpirun -np N` (tests/mpi/run.sh, CULUA_MPI_BACKEND=cuda): one GPU per
-- rank, NCCL's id broadcast through MPI, every collective across the ranks against a reference
-- computed here. Needs as many GPUs as ranks (NCCL refuses two ranks on one GPU): exits 77
-- (skipped) otherwise, and without MPI.
local T = require "cu.testing"

if not cu.mpi.available() then
  print("skip: culua was built without MPI")
  os.exit(77)
end
if cu.backend ~= "cuda" or not cu.nccl.available() then
  print("skip: NCCL needs the CUDA backend: " .. tostring(select(2, cu.nccl.available())))
  os.exit(77)
end
local rank, size = cu.mpi.rank, cu.mpi.size
if #cu.devices() < size then
  print(string.format("skip: %d ranks need %d GPUs, %d here", size, size, #cu.devices()))
  os.exit(77)
end

local comm
T.case("comm_world: one rank per process, each on its own GPU", function()
  comm = cu.nccl.comm_world()
  T.eq(comm.size, size)
  T.eq(comm.rank, rank)
  T.eq(comm.devices, { cu.mpi.local_rank % #cu.devices() })
  T.eq(cu.device(), comm.devices[1], "comm_world makes the rank's device current")
  local all = cu.mpi.gather(comm.devices[1])
  if rank == 0 then
    table.sort(all)
    for i = 2, #all do T.truthy(all[i] ~= all[i - 1], "two ranks on one GPU") end
  end
end)

-- Rank r's data: element i (1-based) is (r + 1) * i, exact in every dtype used here.
local function data(n, dtype, r)
  return cu.arange(1, n + 1, dtype) * (r + 1)
end

T.case("allreduce and reduce across ranks: sum, max, min, prod against the reference", function()
  for _, dtype in ipairs({ "f32", "f64", "i32", "i64" }) do
    for _, n in ipairs({ 1, 1000, 1 << 20 }) do
      local x = data(n, dtype, rank)
      comm:allreduce(x, { op = "sum" })
      local k = size * (size + 1) // 2
      local got = x:astype("f64")
      local want = cu.arange(1, n + 1, "f64") * k
      T.eq(cu.abs(got - want):max():item(), 0, string.format("allreduce sum %s n=%d", dtype, n))
      local m = data(n, dtype, rank)
      comm:allreduce(m, { op = "max" })
      T.eq(cu.abs(m:astype("f64") - cu.arange(1, n + 1, "f64") * size):max():item(), 0, "max")
      local r = data(n, dtype, rank)
      comm:reduce(r, { op = "min", root = 0 })
      if rank == 0 then T.eq(cu.abs(r:astype("f64") - cu.arange(1, n + 1, "f64")):max():item(), 0, "reduce min") end
    end
  end
  local p = cu.full(16, 2, "f64")
  comm:allreduce(p, { op = "prod" })
  T.eq(p:max():item(), 2 ^ size)
end)

T.case("broadcast, allgather, reducescatter across ranks", function()
  local b = rank == 0 and cu.arange(1, 101, "f32") or cu.zeros(100, "f32")
  comm:broadcast(b, { root = 0 })
  T.eq(b:totable()[100], 100)
  T.eq(b:sum():item(), 5050)
  local mine = cu.full(8, rank + 1, "i32")
  local all = comm:allgather(mine)
  local t = all:reshape({ size * 8 }):totable()
  for r = 0, size - 1 do
    for i = 1, 8 do T.eq(t[r * 8 + i], r + 1, "allgather") end
  end
  local big = cu.arange(1, size * 4 + 1, "f32")
  local part = comm:reducescatter(big, { op = "sum" })
  local pt = part:reshape({ 4 }):totable()
  for i = 1, 4 do T.eq(pt[i], size * (rank * 4 + i), "reducescatter") end
end)

T.case("send/recv between neighbouring ranks inside a group", function()
  if size < 2 then return end
  local out = cu.full(32, rank, "f64")
  local inb = cu.zeros(32, "f64")
  comm:group(function()
    comm:send(out, { peer = (rank + 1) % size })
    comm:recv(inb, { peer = (rank - 1) % size })
  end)
  T.eq(inb:max():item(), (rank - 1) % size)
  T.eq(inb:min():item(), (rank - 1) % size)
end)

T.case("a graph captures a collective; replays see new values", function()
  local x = cu.full(1024, 1, "f32")
  comm:allreduce(x) -- warm-up: NCCL connects on first use
  local g = cu.graph(function() comm:allreduce(x) end)
  x:fill(rank + 1)
  g:launch()
  T.eq(x:max():item(), size * (size + 1) // 2)
  g:free()
end)

T.case("the ledger counts the collectives", function()
  local before = cu.ledger()
  local x = cu.zeros(256, "f32")
  comm:allreduce(x)
  cu.sync()
  local after = cu.ledger()
  T.eq(after.nccl_calls - before.nccl_calls, 1)
  T.eq(after.nccl_bytes - before.nccl_bytes, 1024)
end)

T.case("comm:free() on every rank", function()
  cu.mpi.barrier()
  comm:free()
  T.eq(comm.freed, true)
end)

os.exit(T.run())
