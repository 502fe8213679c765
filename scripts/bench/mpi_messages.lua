-- MPI messages between ranks 0 and 1: ping-pong latency of 8-byte messages and bandwidth over
-- message sizes, for host pageable, host pinned and device arrays (cu.mpi.send, and cu.mpi.recv
-- into an existing array: no allocation per message), plus the latency of a Lua value.
--
--   mpirun -np 2 culua scripts/bench/mpi_messages.lua [--quick] [--max BYTES] [--out FILE.json]
--
-- Prints a table at rank 0; --out writes the rows as JSON ({format="culua-mpi-messages", ...}).
-- --quick: sizes up to 64 KiB and few repetitions (CI runs it on the host backend). Ranks beyond
-- 1 only wait. Without a second rank it says so and does nothing.
--
-- As a library (scripts/bench/collectives.lua): dofile returns the module when this file is not
-- the main script:
--   local messages = dofile("scripts/bench/mpi_messages.lua")
--   local rows = messages.run { quick = false, max_bytes = 1 << 26 }  -- every rank calls it
--   messages.print_table(rows)                                       -- rows: rank 0; {} elsewhere
-- A row: {test = "latency"|"bandwidth", place = "lua"|"pageable"|"pinned"|"device", bytes = n,
-- usec = one-way time in microseconds (median of the repetitions), GBps = bytes / one-way time}.
local M = {}

local PLACES = { "pageable", "pinned", "device" }

local function make(place, bytes)
  if place == "device" then return cu.zeros(bytes, "u8") end
  return cu.host.zeros(bytes, "u8", { pinned = place == "pinned" })
end

local function median(t)
  table.sort(t)
  local n = #t
  return n % 2 == 1 and t[(n + 1) // 2] or (t[n // 2] + t[n // 2 + 1]) / 2
end

-- One-way seconds of a message: rank 0 sends and waits for the echo, `iters` round trips per
-- repetition; the median repetition.
local function ping_pong(rank, message, out, iters, reps)
  local times = {}
  local opts = out and { out = out } or nil
  for rep = 0, reps do -- repetition 0 warms up
    cu.mpi.barrier()
    local t0 = cu.clock { warn = false }
    for _ = 1, iters do
      if rank == 0 then
        cu.mpi.send(message, 1)
        cu.mpi.recv(1, 0, opts)
      else
        local v = cu.mpi.recv(0, 0, opts)
        cu.mpi.send(v, 0)
      end
    end
    if rep > 0 then times[#times + 1] = (cu.clock { warn = false } - t0) / (2 * iters) end
  end
  return median(times)
end

-- Measures; every rank of the job calls it. Returns the rows at rank 0, {} elsewhere.
function M.run(opts)
  opts = opts or {}
  local rank, size = cu.mpi.rank, cu.mpi.size
  if size < 2 then
    if rank == 0 then
      print("mpi_messages: needs two ranks (mpirun -np 2 culua scripts/bench/mpi_messages.lua)")
    end
    return {}
  end
  local quick = opts.quick
  local max_bytes = opts.max_bytes or (quick and 1 << 16 or 1 << 26)
  local reps = opts.reps or (quick and 3 or 7)
  local rows = {}
  if rank > 1 then
    cu.mpi.barrier()
    return rows
  end
  local function add(test, place, bytes, seconds)
    rows[#rows + 1] = { test = test, place = place, bytes = bytes, usec = seconds * 1e6,
      GBps = bytes / seconds / 1e9 }
  end
  local lat_iters = quick and 20 or 1000
  add("latency", "lua", 8, ping_pong(rank, 1.5, nil, lat_iters, reps)) -- a float: 8 bytes
  for _, place in ipairs(PLACES) do
    local a, out = make(place, 8), make(place, 8)
    add("latency", place, 8, ping_pong(rank, a, out, lat_iters, reps))
  end
  for _, place in ipairs(PLACES) do
    local bytes = 8
    while bytes <= max_bytes do
      local a, out = make(place, bytes), make(place, bytes)
      local iters = math.max(quick and 2 or 10, math.min(quick and 10 or 1000, (1 << 27) // bytes))
      add("bandwidth", place, bytes, ping_pong(rank, a, out, iters, reps))
      bytes = bytes * 8
    end
  end
  cu.mpi.barrier()
  return rank == 0 and rows or {}
end

local function size_text(n)
  if n >= 1 << 20 then return string.format("%d MiB", n >> 20) end
  if n >= 1 << 10 then return string.format("%d KiB", n >> 10) end
  return string.format("%d B", n)
end

-- The rows as a markdown table on stdout.
function M.print_table(rows)
  if #rows == 0 then return end
  print("| test      | place    |   bytes |    one-way µs |     GB/s |")
  print("| --------- | -------- | ------: | ------------: | -------: |")
  for _, r in ipairs(rows) do
    print(string.format("| %-9s | %-8s | %7s | %13.2f | %8.3f |", r.test, r.place, size_text(r.bytes),
      r.usec, r.GBps))
  end
end

-- The JSON of a run: the rows with what they were measured on.
function M.json(rows)
  return cu.json.encode({ format = "culua-mpi-messages", backend = cu.backend, ranks = cu.mpi.size,
    cuda_aware = cu.mpi.cuda_aware(), rows = rows }, { indent = 2 })
end

local function main()
  if not cu.mpi.available() then
    print("mpi_messages: culua was built without MPI")
    os.exit(77) -- skipped (ctest)
  end
  local opts, out = {}, nil
  local i = 1
  while arg[i] do
    local a = arg[i]
    if a == "--quick" then
      opts.quick = true
    elseif a == "--out" and arg[i + 1] then
      i = i + 1
      out = arg[i]
    elseif a == "--max" and math.tointeger(tonumber(arg[i + 1])) then
      i = i + 1
      opts.max_bytes = math.tointeger(tonumber(arg[i]))
    else
      error("mpi_messages.lua: unknown argument '" .. a .. "' (--quick, --max BYTES, --out FILE)", 0)
    end
    i = i + 1
  end
  local rows = M.run(opts)
  if cu.mpi.rank ~= 0 or #rows == 0 then return end
  print(string.format("### MPI messages, ranks 0 and 1 (%s backend, CUDA-aware MPI: %s)", cu.backend,
    tostring(cu.mpi.cuda_aware())))
  print()
  M.print_table(rows)
  if out then
    local f = assert(io.open(out, "w"))
    f:write(M.json(rows), "\n")
    f:close()
  end
end

if arg and arg[0] and arg[0]:match("mpi_messages%.lua$") then
  main()
else
  return M
end
