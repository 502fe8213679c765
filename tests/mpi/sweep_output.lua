-- Started by test_mpi_single.lua under mpirun -np 2: a distributed sweep whose table only rank 0
-- prints.
local res = cu.sweep { name = "printed once", axes = { n = { 1, 2, 3 } }, distribute = true,
  run = function(p) return p.n * 2 end }
print("rank " .. cu.mpi.rank .. " rows " .. #res.rows)
