-- cu.nccl: NCCL collectives. On the host backend (and a build without CUDA) the clear errors that
-- say why NCCL cannot run. On the CUDA backend with one GPU: one-rank communicators, every
-- collective against a host reference at several sizes and dtypes, graph capture and replay, the
-- trace, the ledger, use after free and the argument checks. tests/gpu/test_nccl_multi.lua runs
-- the collectives across all GPUs.
package.path = (arg and arg[0] and arg[0]:match("^(.*)[/\\]") or "tests/lua") .. "/?.lua;" .. package.path
local T = require "cu.testing"
local S = require "support"

local available, why = cu.nccl.available()

if cu.backend ~= "cuda" then
  T.case("host backend: cu.nccl says why it cannot run", function()
    T.eq(available, false)
    T.truthy(why:find("cu.nccl needs the CUDA backend", 1, true), why)
    S.raises(function() cu.nccl.comm({ 0 }) end, { "cu.nccl needs the CUDA backend" })
    S.raises(function() cu.nccl.comm() end, { "cu.nccl needs the CUDA backend" })
    S.raises(function() cu.nccl.version() end, { "cu.nccl needs the CUDA backend" })
    local ok, err = pcall(cu.nccl.comm, { 0 })
    T.eq(ok, false)
    T.eq(err.kind, "unsupported")
  end)
  T.case("host backend: arguments are still checked first", function()
    S.raises(function() cu.nccl.comm("all") end, { "bad argument #1 to 'comm'", "list of device indices" })
    S.raises(function() cu.nccl.comm({ 0 }, { timeout = -1 }) end,
      { "bad argument #2 to 'comm'", "option 'timeout'", "positive" })
    S.raises(function() cu.nccl.comm({ 0 }, { timeot = 1 }) end, { "unknown option 'timeot'", "timeout" })
    S.raises(function() cu.nccl.comm_world({ devise = 0 }) end,
      { "bad argument #1 to 'comm_world'", "unknown option 'devise'" })
    S.raises(function() cu.nccl.comm_world({ timeout = 0 }) end, { "option 'timeout'", "positive" })
  end)
  T.case("host backend: cu.nccl.comm_world says why it cannot run", function()
    local ok, err = pcall(cu.nccl.comm_world)
    T.eq(ok, false)
    T.eq(err.kind, "unsupported")
    local msg = tostring(err)
    T.truthy(msg:find(cu.mpi.available() and "cu.nccl needs the CUDA backend" or "culua was built without MPI", 1,
      true), msg)
  end)
  T.case("host backend: the collectives benchmark runs and says why it has no figures", function()
    local out = os.tmpname()
    local cmd = string.format("%s --backend host scripts/bench/collectives.lua --quick --out %s 2>&1",
      S.shell_quote(S.culua_path()), S.shell_quote(out))
    local p = assert(io.popen(cmd))
    local text = p:read("a")
    local ok = p:close()
    T.eq(ok, true, text)
    T.truthy(text:find("cu.nccl needs the CUDA backend", 1, true), text)
    local f = assert(io.open(out))
    local result = cu.json.decode(f:read("a"))
    f:close()
    os.remove(out)
    T.eq(result.backend, "host")
    T.eq(#result.records, 0)
    p = assert(io.popen(string.format("%s --backend host scripts/bench/collectives.lua --ops bogus 2>&1",
      S.shell_quote(S.culua_path()))))
    text = p:read("a")
    T.eq(p:close(), nil, "a bad argument fails the run")
    T.truthy(text:find("unknown collective bogus", 1, true), text)
  end)
  T.run()
  return
end

if not available then
  T.case("CUDA backend without NCCL: the loader's message", function()
    T.truthy(why:find("libnccl.so.2", 1, true), why)
    S.raises(function() cu.nccl.comm({ 0 }) end, { "libnccl.so.2" })
  end)
  T.run()
  return
end

local SIZES = { 1, 7, 1000, 65537 }

-- Values that every dtype below holds exactly (small integers, some negative).
local function values(n, dtype, seed)
  local t = {}
  for i = 1, n do
    local v = ((i * 7 + seed * 13) % 23) - 11
    if dtype:sub(1, 1) == "u" then v = v + 11 end
    if dtype == "c64" or dtype == "c128" then v = cu.complex(v, -v) end
    t[i] = v
  end
  return t
end

local function same(a, expected, what)
  local got = a:totable()
  T.eq(#got, #expected, what .. ": length")
  for i = 1, #expected do
    local g, e = got[i], expected[i]
    if type(e) == "table" or type(e) == "userdata" then g, e = tostring(g), tostring(e) end
    if g ~= e then
      error(string.format("%s: element %d is %s, expected %s", what, i, tostring(got[i]),
        tostring(expected[i])), 2)
    end
  end
end

T.case("CULUA_NCCL_LIBRARY names a missing file: the loader's clear error", function()
  local cmd = string.format("CULUA_NCCL_LIBRARY=/nonexistent/libnccl.so.2 %s --backend cuda -e %s 2>&1",
    S.shell_quote(S.culua_path()), S.shell_quote([[
      local ok, why = cu.nccl.available()
      print(ok, why)
      local ok2, err = pcall(cu.nccl.comm, { 0 })
      print(ok2, err.kind, err)
      local x = cu.ones(4) + 1
      print("still works", x:sum():item())]]))
  local p = assert(io.popen(cmd))
  local text = p:read("a")
  p:close()
  local expected = "false\tcu.nccl needs NCCL (libnccl.so.2): not found (tried /nonexistent/libnccl.so.2"
  T.truthy(text:find(expected, 1, true), text)
  T.truthy(text:find("false\tunsupported", 1, true), text)
  T.truthy(text:find("still works\t8", 1, true), text)
end)

T.case("version, available, a one-rank communicator and its fields", function()
  T.truthy(cu.nccl.version():match("^%d+%.%d+%.%d+$"), cu.nccl.version())
  local comm = cu.nccl.comm({ 0 })
  T.eq(comm.size, 1)
  T.eq(comm.rank, 0)
  T.eq(comm.devices, { 0 })
  T.eq(comm.freed, false)
  T.truthy(tostring(comm):find("cu.NcclComm(1 rank on devices 0)", 1, true), tostring(comm))
  comm:free()
  T.eq(comm.freed, true)
  T.eq(tostring(comm), "cu.NcclComm(<freed>)")
end)

T.case("comm_world: one rank per MPI process (here the job of this process alone)", function()
  if not cu.mpi.available() then
    S.raises(function() cu.nccl.comm_world() end, { "culua was built without MPI" })
    return
  end
  S.raises(function() cu.nccl.comm_world({ device = #cu.devices() }) end, { "option 'device'", "does not exist" })
  local comm = cu.nccl.comm_world({ device = 0 })
  T.eq(comm.size, cu.mpi.size)
  T.eq(comm.rank, cu.mpi.rank)
  T.eq(comm.devices, { 0 })
  T.eq(cu.device(), 0)
  local x = cu.array({ 1, 2, 3, 4 }, "f32") * (cu.mpi.rank + 1)
  comm:allreduce(x)
  local k = cu.mpi.size * (cu.mpi.size + 1) / 2
  T.eq(x:totable(), { k, 2 * k, 3 * k, 4 * k })
  comm:free()
end)

T.case("every collective on one rank against the host reference", function()
  local comm <close> = cu.nccl.comm({ 0 })
  for _, dtype in ipairs({ "f32", "f64", "f16", "bf16", "i8", "i32", "i64", "u8", "u32", "u64", "c64", "c128" }) do
    local complex = dtype == "c64" or dtype == "c128"
    local ops = complex and { "sum", "avg" } or { "sum", "prod", "max", "min", "avg" }
    if dtype:sub(1, 1) == "i" or dtype:sub(1, 1) == "u" then ops = { "sum", "prod", "max", "min" } end
    for _, n in ipairs(SIZES) do
      local ref = values(n, dtype, n)
      local what = dtype .. " n=" .. n
      local x = cu.array(ref, dtype)
      for _, op in ipairs(ops) do
        local y = cu.zeros(n, dtype)
        local r = comm:allreduce(x, { op = op, out = y })
        same(r, ref, what .. " allreduce " .. op)
        same(y, ref, what .. " allreduce " .. op .. " (out)")
      end
      local z = cu.array(ref, dtype)
      local listed = comm:allreduce({ z })
      T.eq(type(listed), "table", what .. ": a list in, a list out")
      same(listed[1], ref, what .. " allreduce in place (the list's array)")
      same(z, ref, what .. " allreduce in place")
      same(comm:reduce(x, { root = 0, out = cu.zeros(n, dtype) }), ref, what .. " reduce")
      same(comm:broadcast(cu.array(ref, dtype), { root = 0 }), ref, what .. " broadcast")
      local g = comm:allgather(x)
      T.eq(g.shape, { 1, n }, what .. " allgather shape")
      same(g:reshape(n), ref, what .. " allgather")
      local rs = comm:reducescatter(x, { op = "sum" })
      T.eq(rs.shape, { n }, what .. " reducescatter shape")
      same(rs, ref, what .. " reducescatter")
      local b = cu.zeros(n, dtype)
      comm:group(function()
        comm:send(x, { peer = 0 })
        comm:recv(b, { peer = 0 })
      end)
      same(b, ref, what .. " send/recv to itself")
    end
  end
end)

T.case("inside cu.fuse a collective reads what was recorded before it", function()
  local comm <close> = cu.nccl.comm({ 0 })
  local n = 1000
  local x = cu.arange(n, "f32")
  local f = cu.fuse(function(a)
    local y = a * 2 + 1  -- recorded, not yet run
    return comm:allreduce(y)
  end)
  local r = f(x):totable()
  for i = 1, n do
    if r[i] ~= 2 * (i - 1) + 1 then error(string.format("element %d is %s, expected %d", i, r[i], 2 * i - 1)) end
  end
end)

T.case("data movement takes any dtype; reductions refuse what NCCL lacks", function()
  local comm <close> = cu.nccl.comm({ 0 })
  local flags = cu.array({ true, false, true }, "bool")
  same(comm:broadcast(flags), { true, false, true }, "bool broadcast")
  same(comm:allgather(cu.array({ 1, -2, 3 }, "i16")):reshape(3), { 1, -2, 3 }, "i16 allgather")
  S.raises(function() comm:allreduce(flags) end, { "nccl.allreduce cannot reduce bool arrays" })
  S.raises(function() comm:allreduce(cu.zeros(4, "i16"), { op = "max" }) end, { "cannot reduce i16" })
  same(comm:allgather(cu.array({ 1, 65535, 3 }, "u16")):reshape(3), { 1, 65535, 3 }, "u16 allgather")
  same(comm:broadcast(cu.array({ 7, 65535 }, "u16")), { 7, 65535 }, "u16 broadcast")
  S.raises(function() comm:allreduce(cu.zeros(4, "u16")) end, { "cannot reduce u16" })
  S.raises(function() comm:allreduce(cu.zeros(4, "c64"), { op = "max" }) end,
    { "c64 arrays with sum or avg only, not max" })
end)

T.case("streams: stream= queues there, asynchronously", function()
  local comm <close> = cu.nccl.comm({ 0 })
  local s = cu.stream()
  local x = cu.array(values(1000, "f32", 1), "f32")
  local y = cu.zeros(1000)
  comm:allreduce(x, { out = y, stream = s })
  comm:allreduce(x, { out = y, stream = { s } })
  s:sync()
  same(y, values(1000, "f32", 1), "on a stream")
  S.raises(function() comm:allreduce(x, { stream = 5 }) end, { "option 'stream'", "cu.Stream" })
end)

T.case("graph capture: replays read the arrays' new values", function()
  local comm <close> = cu.nccl.comm({ 0 })
  local x = cu.array(values(4096, "f32", 2), "f32")
  local y = cu.zeros(4096)
  comm:allreduce(x, { out = y }) -- connections are set up outside the capture
  cu.sync()
  local g = cu.graph(function() comm:allreduce(x, { out = y, op = "max" }) end, { name = "ar" })
  T.eq(g.ops, { "nccl.allreduce" })
  T.eq(g.arrays, 2, "the graph keeps both arrays alive")
  S.raises(function() x:free() end, { "graph 'ar'" })
  T.eq(g.ledger.nccl_calls, 1)
  T.eq(g.ledger.nccl_bytes, 4096 * 4)
  cu.copy(x, cu.arange(4096, "f32"))
  y:fill(0)
  g:launch()
  same(y, cu.arange(4096, "f32"):totable(), "first launch")
  cu.mul(x, 2, { out = x })
  g:replay(3)
  same(y, (cu.arange(4096, "f32") * 2):totable(), "after replays")
  S.raises(function() comm:free() end, { "free the graph first" })
  g:free()
  comm:free()
  T.eq(comm.freed, true)
end)

T.case("the trace shows each collective by name; the ledger counts them", function()
  local comm <close> = cu.nccl.comm({ 0 })
  local x = cu.ones(1000)
  local before = cu.ledger()
  comm:allreduce(x)
  comm:allgather(x)
  local d = cu.ledger() - before
  T.eq(d.nccl_calls, 2)
  T.eq(d.nccl_bytes, 2 * 4000)
  T.truthy(tostring(d):find("NCCL", 1, true), tostring(d))
  local path = os.tmpname()
  cu.trace.start()
  comm:allreduce(x)
  comm:reducescatter(x)
  cu.sync()
  cu.trace.stop(path)
  local f = assert(io.open(path))
  local text = f:read("a")
  f:close()
  os.remove(path)
  T.truthy(text:find("nccl.allreduce", 1, true), "allreduce in the trace")
  T.truthy(text:find("nccl.reducescatter", 1, true), "reducescatter in the trace")
end)

T.case("use after free, <close>, collection without free", function()
  local x = cu.ones(16)
  local comm = cu.nccl.comm({ 0 })
  comm:allreduce(x)
  comm:free()
  comm:free() -- idempotent
  S.raises_released(function() comm:allreduce(x) end)
  S.raises_released(function() return comm.size end)
  local ok, err = pcall(comm.allreduce, comm, x)
  T.eq(ok, false)
  T.eq(err.kind, "released")
  local kept
  do
    local c <close> = cu.nccl.comm({ 0 })
    kept = c
    c:allreduce(x)
  end
  T.eq(kept.freed, true)
  for _ = 1, 3 do cu.nccl.comm({ 0 }):allreduce(x) end -- left to the collector with work queued
  collectgarbage()
  collectgarbage()
  cu.sync()
  same(x, cu.ones(16):totable(), "x unchanged")
end)

T.case("bad arguments raise before anything is queued", function()
  local comm <close> = cu.nccl.comm({ 0 })
  local x = cu.ones(8)
  S.raises(function() comm:allreduce({ x, x }) end, { "bad argument #1 to 'allreduce'", "a list of 1 cu.Array" })
  S.raises(function() comm:allreduce(5) end,
    { "bad argument #1 to 'allreduce'", "cu.Array or list of cu.Arrays expected, got number" })
  S.raises(function() comm:allreduce(x, { op = "mean" }) end,
    { "bad argument #2 to 'allreduce' (option 'op'", "got 'mean'" })
  S.raises(function() comm:allreduce(x, { root = 0 }) end, { "unknown option 'root'" })
  S.raises(function() comm:reduce(x, { root = 1 }) end, { "root must be a rank from 0 to 0, got 1" })
  S.raises(function() comm:send(x) end, { "option 'peer'", "required" })
  S.raises(function() comm:send(x, { peer = 0 }) end, { "inside comm:group" })
  S.raises(function() comm:recv(x, { peer = { 0, 0 } }) end, { "expected 1 peer" })
  S.raises(function() comm:allreduce(cu.host.zeros(8)) end, { "is a host array" })
  S.raises(function() comm:allreduce(cu.zeros({ 4, 4 }):transpose()) end, { "not contiguous" })
  S.raises(function() comm:allgather(x, { out = cu.zeros(4) }) end, { "has 4 elements, nccl.allgather needs 8" })
  S.raises(function() comm:allreduce(x, { out = cu.zeros(8, "f64") }) end, { "the output of rank 0", "f64" })
  local dead = cu.ones(8)
  dead:free()
  S.raises_released(function() comm:allreduce(dead) end)
  S.raises(function() cu.nccl.comm({ 0, 0 }) end, { "device 0 is listed twice" })
  S.raises(function() cu.nccl.comm({ 4096 }) end, { "device 4096 does not exist" })
  S.raises(function() cu.nccl.comm({}) end, { "bad argument #1 to 'comm'", "empty list" })
  S.raises(function() cu.nccl.comm({ "a" }) end, { "bad argument #1 to 'comm'", "item 1" })
  S.raises(function() comm:group(5) end, { "bad argument #1 to 'group'", "function expected" })
end)

T.case("timeout=: checked; a communicator with a timeout works as any other", function()
  S.raises(function() cu.nccl.comm({ 0 }, { timeout = 0 }) end, { "option 'timeout'", "positive" })
  S.raises(function() cu.nccl.comm({ 0 }, { timeout = "1" }) end, { "option 'timeout'", "number of seconds" })
  local comm <close> = cu.nccl.comm({ 0 }, { timeout = 20 })
  local x = cu.array(values(5000, "f64", 3), "f64")
  same(comm:allreduce(x, { out = cu.zeros(5000, "f64") }), values(5000, "f64", 3), "nonblocking")
  comm:sync()
  same(comm:allgather(x):reshape(5000), values(5000, "f64", 3), "nonblocking allgather")
end)

os.exit(T.run())
