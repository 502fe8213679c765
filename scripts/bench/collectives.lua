-- NCCL collectives through culua (cu.nccl) against the native C++ loop of culua-baseline (`nccl`
-- command, bench/baseline_nccl.cpp) in the same run, on all visible GPUs: allreduce, allgather and
-- reducescatter of f32 over sizes from 8 B to 4 GiB (as memory permits). Both sides time the same
-- way, as nccl-tests does: warm-up iterations, then `iters` iterations between events recorded on
-- every GPU's stream, the longest GPU's time per iteration. algbw = bytes / time, busbw = algbw *
-- 2(n-1)/n (allreduce) or (n-1)/n (allgather, reducescatter); on one GPU busbw is 0 by definition,
-- and algbw is what to read. `bytes` is nccl-tests' size: the whole buffer (allgather's output,
-- reducescatter's input). Then, where scripts/bench/mpi_messages.lua exists and cu.mpi is built,
-- the MPI rows (latency and bandwidth of host messages).
--
--   culua scripts/bench/collectives.lua [--min BYTES] [--max BYTES] [--ops LIST] [--iters N]
--                                      [--quick] [--out FILE.json] [--no-native]
--
-- BYTES may carry K, M or G (powers of 1024). --quick: 8 B to 1 MiB, 5 iterations.

local KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30

local function parse_bytes(s)
  local v, unit = tostring(s):match("^(%d+)([KkMmGg]?)$")
  if not v then error("collectives.lua: a size like 8, 64K, 1M or 4G expected, got " .. tostring(s), 0) end
  local mul = ({ [""] = 1, K = KiB, k = KiB, M = MiB, m = MiB, G = GiB, g = GiB })[unit]
  return math.tointeger(v) * mul
end

local opt = { min = 8, max = 4 * GiB, iters = 20, warmup = 5,
  ops = { "allreduce", "allgather", "reducescatter" }, native = true }
do
  local i = 1
  local function value(name)
    i = i + 1
    if not arg[i] then error("collectives.lua: " .. name .. " needs a value", 0) end
    return arg[i]
  end
  while arg[i] do
    local a = arg[i]
    if a == "--min" then
      opt.min = parse_bytes(value(a))
    elseif a == "--max" then
      opt.max = parse_bytes(value(a))
    elseif a == "--iters" then
      opt.iters = math.tointeger(tonumber(value(a)))
      if not opt.iters or opt.iters < 1 then error("collectives.lua: --iters needs a positive integer", 0) end
    elseif a == "--ops" then
      opt.ops = {}
      for op in value(a):gmatch("[^,]+") do
        if op ~= "allreduce" and op ~= "allgather" and op ~= "reducescatter" then
          error("collectives.lua: unknown collective " .. op .. " (allreduce, allgather, reducescatter)", 0)
        end
        opt.ops[#opt.ops + 1] = op
      end
    elseif a == "--quick" then
      opt.max, opt.iters, opt.warmup, opt.quick = MiB, 5, 2, true
    elseif a == "--out" then
      opt.out = value(a)
    elseif a == "--no-native" then
      opt.native = false
    else
      error("collectives.lua: unknown argument " .. a ..
        " (--min, --max, --ops, --iters, --quick, --out FILE, --no-native)", 0)
    end
    i = i + 1
  end
  if opt.max < opt.min then error("collectives.lua: --max is below --min", 0) end
end

local function quote(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end
local function exists(path)
  local f = io.open(path, "rb")
  if f then f:close() end
  return f ~= nil
end
local culua_bin = (function()
  local i = -1
  while arg[i - 1] do i = i - 1 end
  return arg[i]
end)()
local bindir = culua_bin and culua_bin:match("^(.*)/[^/]*$") or "."
local scriptdir = (arg[0] or ""):match("^(.*)/[^/]*$") or "."
local baseline = bindir .. "/culua-baseline"
if not exists(baseline) then baseline = nil end

local function bus_factor(op, n)
  if op == "allreduce" then return 2 * (n - 1) / n end
  return (n - 1) / n
end

-- culua's side ----------------------------------------------------------------------------------

local function culua_rows()
  local available, why = cu.nccl.available()
  if not available then
    print("cu.nccl cannot run here: " .. why)
    return {}
  end
  local n = #cu.devices()
  local devices = {}
  for d = 0, n - 1 do devices[#devices + 1] = d end
  local comm <close> = cu.nccl.comm(devices)
  local previous = cu.device()
  local streams, start, stop = {}, {}, {}
  for d = 0, n - 1 do
    cu.device(d)
    streams[d + 1] = cu.stream()
    start[d + 1], stop[d + 1] = cu.event({ timing = true }), cu.event({ timing = true })
  end
  cu.device(previous)
  local function on(d, f)
    cu.device(d)
    local ok, r = pcall(f)
    cu.device(previous)
    if not ok then error(r, 0) end
    return r
  end
  local rows = {}
  local unit = 4 * n
  for _, op in ipairs(opt.ops) do
    local last
    local bytes = opt.min
    while bytes <= opt.max do
      local total = math.max(unit, bytes // unit * unit)
      if total ~= last then
        last = total
        local part = total // n
        local in_bytes = op == "allgather" and part or total
        local out_bytes = op == "reducescatter" and part or total
        local fits = true
        for d = 1, n do
          local free = cu.devices()[d].memory -- total memory: a bound, refined by allocation below
          if in_bytes + out_bytes + GiB > free then fits = false end
        end
        local xs, ys = {}, {}
        if fits then
          local ok = pcall(function()
            for d = 1, n do
              xs[d] = on(d - 1, function() return cu.zeros(in_bytes // 4, "f32", { stream = streams[d] }) end)
              ys[d] = on(d - 1, function() return cu.empty(out_bytes // 4, "f32", { stream = streams[d] }) end)
            end
          end)
          fits = ok
        end
        if not fits then
          for d = 1, n do
            if xs[d] then xs[d]:free() end
            if ys[d] then ys[d]:free() end
          end
          print(string.format("culua: %d bytes do not fit; larger sizes skipped", total))
          break
        end
        local opts = { out = ys, stream = streams }
        local run = comm[op]
        for _ = 1, opt.warmup do run(comm, xs, opts) end
        local reps = total >= 256 * MiB and math.max(1, opt.iters // 4) or opt.iters
        for d = 1, n do start[d]:record(streams[d]) end
        for _ = 1, reps do run(comm, xs, opts) end
        for d = 1, n do stop[d]:record(streams[d]) end
        local ms = 0
        for d = 1, n do
          stop[d]:sync()
          ms = math.max(ms, start[d]:elapsed(stop[d]))
        end
        local seconds = ms / 1e3 / reps
        local algbw = total / seconds / 1e9
        rows[#rows + 1] = { op = op, bytes = total, gpus = n, iters = reps, time_us = seconds * 1e6,
          algbw_GBps = algbw, busbw_GBps = algbw * bus_factor(op, n) }
        for d = 1, n do
          xs[d]:free()
          ys[d]:free()
        end
      end
      bytes = bytes * 2
    end
  end
  return rows
end

-- The native side -------------------------------------------------------------------------------

local function native_rows()
  if not opt.native then return {} end
  if not baseline then
    print("culua-baseline was not found beside culua: no native figures")
    return {}
  end
  local cmd = string.format("%s nccl --ops %s --min %d --max %d --iters %d --warmup %d", quote(baseline),
    table.concat(opt.ops, ","), opt.min, opt.max, opt.iters, opt.warmup)
  local p = assert(io.popen(cmd))
  local rows = {}
  for line in p:lines() do
    if line:sub(1, 1) == "{" then rows[#rows + 1] = cu.json.decode(line) end
  end
  local ok, _, code = p:close()
  if not ok then print("culua-baseline nccl failed (exit " .. tostring(code) .. "): native figures partial") end
  return rows
end

-- Table -----------------------------------------------------------------------------------------

local function human(bytes)
  if bytes >= GiB then return string.format("%g GiB", bytes / GiB) end
  if bytes >= MiB then return string.format("%g MiB", bytes / MiB) end
  if bytes >= KiB then return string.format("%g KiB", bytes / KiB) end
  return string.format("%d B", bytes)
end

local mine = {}
if cu.backend == "cuda" then
  mine = culua_rows()
else
  print("the " .. cu.backend .. " backend runs: cu.nccl needs the CUDA backend (no NCCL figures)")
end
local native = cu.backend == "cuda" and native_rows() or {}
local by_key = {}
for _, r in ipairs(native) do by_key[r.op .. ":" .. math.tointeger(r.bytes)] = r end

local records = {}
for _, op in ipairs(opt.ops) do
  local header = false
  for _, r in ipairs(mine) do
    if r.op == op then
      if not header then
        print(string.format("\n%s on %d GPU%s (f32, sum)", op, r.gpus, r.gpus == 1 and "" or "s"))
        print(string.format("%10s  %12s %11s %11s  %12s %11s %11s  %8s", "size", "culua us", "algbw GB/s",
          "busbw GB/s", "native us", "algbw GB/s", "busbw GB/s", "culua/nat"))
        header = true
      end
      local n = by_key[op .. ":" .. math.tointeger(r.bytes)]
      local ratio = n and r.time_us / n.time_us or nil
      print(string.format("%10s  %12.2f %11.3f %11.3f  %12s %11s %11s  %8s", human(r.bytes), r.time_us,
        r.algbw_GBps, r.busbw_GBps, n and string.format("%.2f", n.time_us) or "-",
        n and string.format("%.3f", n.algbw_GBps) or "-", n and string.format("%.3f", n.busbw_GBps) or "-",
        ratio and string.format("%.3f", ratio) or "-"))
      records[#records + 1] = { op = op, bytes = r.bytes, gpus = r.gpus, culua = r, native = n,
        culua_over_native = ratio }
    end
  end
end

-- MPI rows (scripts/bench/mpi_messages.lua, where it exists and cu.mpi is built) ------------------

local mpi
local mpi_script = scriptdir .. "/mpi_messages.lua"
if exists(mpi_script) and rawget(cu, "mpi") ~= nil then
  -- The module runs its rows on every rank (rank 0 gets them); a job of one rank has none.
  local ok, result = pcall(function()
    local messages = dofile(mpi_script)
    if not cu.mpi.available() or cu.mpi.size < 2 then return nil end
    local rows = messages.run({ quick = opt.quick })
    if #rows > 0 then
      print("\n### MPI messages, ranks 0 and 1 (host values and arrays; device arrays)\n")
      messages.print_table(rows)
    end
    return rows
  end)
  if ok then
    mpi = result
  else
    print("mpi_messages.lua failed: " .. tostring(result))
  end
end

if opt.out then
  local f = assert(io.open(opt.out, "w"))
  f:write(cu.json.encode({ backend = cu.backend, nccl = cu.backend == "cuda" and cu.nccl.available() and
    cu.nccl.version() or nil, records = records, native = native, culua = mine, mpi = mpi }))
  f:close()
  print("wrote " .. opt.out)
end
