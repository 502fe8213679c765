-- Started by test_mpi_single.lua under mpirun -np 2: rank 1 raises while rank 0 waits in a
-- collective (arg[1] == "before": rank 1 raises before it ever uses cu.mpi; "exit": rank 1 calls
-- os.exit(3)). The job must end at once with a non-zero status and rank 1's message.
if arg[1] == "before" then
  if os.getenv("OMPI_COMM_WORLD_RANK") == "1" then error("boom before MPI") end
elseif arg[1] == "exit" then
  if cu.mpi.rank == 1 then os.exit(3) end
elseif cu.mpi.rank == 1 then
  error("boom")
end
cu.mpi.barrier()
print("rank " .. cu.mpi.rank .. " passed the barrier")
