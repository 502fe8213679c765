-- examples/mpi/normalize.lua: mpirun -np 4 culua examples/mpi/normalize.lua
local n = 1 << 24
local comm = cu.nccl.available() and cu.mpi.available() and cu.nccl.comm_world() -- picks this rank's GPU
local x = cu.rand(n, {seed = cu.mpi.rank})                       -- this rank's share of the data
local s = x:sum()                                                -- 0-d device array
if comm then comm:allreduce(s) else cu.mpi.allreduce(s) end    -- in place, on the device
cu.div(x, s, {out = x})                                          -- normalized by the global sum
local total = cu.mpi.allreduce(x:sum():item())
if cu.mpi.rank == 0 then print(string.format("%d ranks, global sum %.6f", cu.mpi.size, total)) end
