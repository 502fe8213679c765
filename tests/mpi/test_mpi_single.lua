-- cu.mpi without mpirun (a singleton job of size 1: every function works), then jobs that
-- tests/mpi/run.sh starts under mpirun -np 2: a rank that errors ends both ranks quickly with a
-- non-zero status and its message; a distributed sweep prints its table once.
--   culua --backend host tests/mpi/test_mpi_single.lua CULUA RUN_SH
local T = require "cu.testing"

if not cu.mpi.available() then
  print("skip: culua was built without MPI")
  os.exit(77)
end
local culua, run_sh = arg[1], arg[2]
assert(culua and run_sh, "usage: test_mpi_single.lua CULUA RUN_SH")
arg[1], arg[2] = nil, nil -- T.run reads arg[1] as a filter

T.case("without mpirun: MPI starts lazily, size 1", function()
  T.eq(cu.mpi.initialized(), false, "not before first use")
  T.eq(cu.mpi.size, 1)
  T.eq(cu.mpi.rank, 0)
  T.eq(cu.mpi.local_rank, 0)
  T.eq(cu.mpi.initialized(), true)
  T.eq(type(cu.mpi.cuda_aware()), "boolean")
end)

T.case("size 1: every function", function()
  cu.mpi.barrier()
  T.eq(cu.mpi.bcast({ 1, "x" }), { 1, "x" })
  T.eq(cu.mpi.allreduce(5), 5)
  local a = cu.array({ 1, 2, 3 })
  cu.mpi.allreduce(a, { op = "max" })
  T.eq(a:totable(), { 1, 2, 3 })
  T.eq(cu.mpi.bcast(a):totable(), { 1, 2, 3 })
  T.eq(cu.mpi.gather("v"), { "v" })
  cu.mpi.send({ k = 1 }, 0, 3) -- to itself: small messages are buffered
  T.eq({ cu.mpi.recv(0, 3) }, { { k = 1 }, 0, 3 })
  cu.mpi.send(cu.host.array({ 4, 5 }, "i64"), 0)
  local b = cu.mpi.recv("any")
  T.eq({ b.dtype, b.location, b:totable() }, { "i64", "pageable", { 4, 5 } })
  T.raises(function() cu.mpi.send(1, 1) end, "dest 1 is not a rank of this job (0..0)")
end)

T.case("size 1: distribute=true runs every point here", function()
  local res = cu.sweep { name = "local", axes = { n = { 1, 2, 3 } }, distribute = true, quiet = true,
    run = function(p) return p.n end }
  T.eq(#res.rows, 3)
end)

-- Open MPI 4 gave every singleton the same session folder (<tmp>/ompi.<host>.<uid>/jf.0/1/0), and
-- the first to end removed it from under the others (in CI, a culua starting meanwhile aborted in
-- MPI_Init). Singleton A starts MPI, runs singleton B to its end, then counts the folders left in
-- TMPDIR: its own must still be there; after A ends, nothing may be.
T.case("singletons side by side: one that ends leaves the other's session files, none leaves any", function()
  local dir = os.tmpname()
  os.remove(dir)
  assert(os.execute("mkdir '" .. dir .. "'"))
  local script = dir .. ".lua"
  local f = assert(io.open(script, "w"))
  f:write([[
local culua, dir = arg[1], arg[2]
cu.mpi.barrier()
assert(os.execute(string.format("TMPDIR='%s' '%s' --backend host -e 'cu.mpi.barrier()'", dir, culua)))
local p = io.popen(string.format("find '%s' -mindepth 1 -type d | wc -l", dir))
print("folders=" .. p:read("a"):match("%d+"))
p:close()
]])
  f:close()
  local function run(command)
    local p = io.popen(command .. " 2>&1")
    local out = p:read("a")
    p:close()
    return out
  end
  local out = run(string.format("TMPDIR='%s' '%s' --backend host '%s' '%s' '%s'", dir, culua, script, culua, dir))
  local left = run(string.format("find '%s' -mindepth 1 | wc -l", dir))
  os.remove(script)
  os.execute("rm -rf '" .. dir .. "'")
  local folders = tonumber(out:match("folders=(%d+)"))
  T.truthy(folders and folders > 0, "A's session folder outlives B: " .. out)
  T.eq(tonumber(left:match("%d+")), 0, "nothing left behind")
end)

-- Runs run.sh with culua and the arguments; returns the status, the output and the seconds.
local function job(...)
  local t0 = os.time()
  local args = { "sh", run_sh, culua, "2", ... }
  for i, a in ipairs(args) do args[i] = "'" .. a .. "'" end
  local p = io.popen(table.concat(args, " ") .. " 2>&1; echo \"status=$?\"")
  local out = p:read("a")
  p:close()
  local status = tonumber(out:match("status=(%d+)%s*$"))
  return status, out, os.time() - t0
end

T.case("a rank that errors ends the job: non-zero, its message, no hang", function()
  for _, when in ipairs({ "after", "before" }) do
    local status, out, seconds = job("tests/mpi/rank_error.lua", when)
    if status == 77 then T.skip("mpirun not found") end
    T.truthy(status ~= 0, "non-zero exit status")
    T.truthy(out:find(when == "after" and "[rank 1] tests/mpi/rank_error.lua:9: boom" or
      "[rank 1] tests/mpi/rank_error.lua:5: boom before MPI", 1, true), out)
    T.eq(out:find("passed the barrier", 1, true), nil, "nobody passes the barrier")
    T.truthy(seconds < 30, "ends quickly, not by a timeout")
  end
end)

T.case("os.exit(3) on one rank ends the job (no wait in MPI_Finalize)", function()
  local status, out, seconds = job("tests/mpi/rank_error.lua", "exit")
  if status == 77 then T.skip("mpirun not found") end
  T.truthy(status ~= 0, "non-zero exit status")
  T.eq(out:find("passed the barrier", 1, true), nil, "nobody passes the barrier")
  T.truthy(seconds < 30, "ends quickly, not by a timeout")
end)

T.case("a distributed sweep prints its table at rank 0 only", function()
  local status, out = job("tests/mpi/sweep_output.lua")
  if status == 77 then T.skip("mpirun not found") end
  T.eq(status, 0, out)
  T.eq(select(2, out:gsub("### printed once", "")), 1, out)
  T.truthy(out:find("rank 0 rows 3", 1, true), out)
  T.truthy(out:find("rank 1 rows 1", 1, true), out)
end)

os.exit(T.run())
