-- cu.mpi under `mpirun -np 2` on the host backend (tests/mpi/run.sh starts it): every function
-- with Lua values and with arrays of several dtypes, shapes and places against references computed
-- here, the errors of bad and mismatched arguments (raised on every rank, no hang), and
-- distributed sweeps. Both ranks run the same cases in the same order.
local T = require "cu.testing"

if not cu.mpi.available() then
  print("skip: culua was built without MPI")
  os.exit(77)
end

local rank, size = cu.mpi.rank, cu.mpi.size
T.case("two ranks: rank, size, local_rank", function()
  T.eq(size, 2, "size")
  T.truthy(rank == 0 or rank == 1, "rank")
  T.eq(cu.mpi.local_rank, rank, "local_rank (one node)")
  T.eq(cu.mpi.initialized(), true)
  T.eq(cu.mpi.barrier(), nil)
end)

local function value_of(r)
  return { n = r, f = r + 0.5, whole = 2.0, s = "rank\0" .. r, yes = true, no = false,
    list = { 1, "two", { three = 3 } }, [10] = "ten", [1.5] = "float key", [true] = "bool key" }
end

local function check_value(v, r)
  T.eq(math.type(v.n), "integer", "integers stay integers")
  T.eq(v.n, r)
  T.eq(math.type(v.f), "float")
  T.eq(v.f, r + 0.5)
  T.eq(math.type(v.whole), "float", "2.0 stays a float")
  T.eq(v.s, "rank\0" .. r)
  T.eq(v.yes, true)
  T.eq(v.no, false)
  T.eq(v.list[1], 1)
  T.eq(v.list[2], "two")
  T.eq(v.list[3].three, 3)
  T.eq(v[10], "ten")
  T.eq(v[1.5], "float key")
  T.eq(v[true], "bool key")
end

T.case("bcast of Lua values from each root", function()
  for root = 0, 1 do
    local v = cu.mpi.bcast(rank == root and value_of(root) or nil, root)
    check_value(v, root)
  end
  T.eq(cu.mpi.bcast(rank == 0 and 7 or "ignored"), 7)
  T.eq(cu.mpi.bcast(nil), nil)
  T.eq(math.type(cu.mpi.bcast(-0.0)), "float")
end)

T.case("bcast: values that cannot travel raise on every rank", function()
  local bad = rank == 0 and { f = print } or nil
  local msg = T.raises(function() cu.mpi.bcast(bad) end)
  if rank == 0 then
    T.truthy(msg:find("v.f is a function", 1, true), msg)
  else
    T.truthy(msg:find("rank 0 gave invalid arguments", 1, true), msg)
  end
  local cycle = {}
  cycle.me = cycle
  T.raises(function() cu.mpi.bcast(rank == 0 and cycle or nil) end,
    rank == 0 and "v.me contains itself" or "rank 0 gave invalid arguments")
  T.raises(function() cu.mpi.bcast(1, 2) end, "root 2 is not a rank of this job (0..1)")
  T.raises(function() cu.mpi.bcast(1, rank) end, "the ranks name different roots")
  -- still in step after the errors
  T.eq(cu.mpi.bcast(rank == 1 and "after" or nil, 1), "after")
end)

T.case("allreduce of numbers: integers stay integers, ops", function()
  local r = rank + 1 -- 1 and 2
  local v = cu.mpi.allreduce(r)
  T.eq(math.type(v), "integer")
  T.eq(v, 3)
  T.eq(cu.mpi.allreduce(r, { op = "prod" }), 2)
  T.eq(cu.mpi.allreduce(r, { op = "max" }), 2)
  T.eq(cu.mpi.allreduce(r, { op = "min" }), 1)
  local f = cu.mpi.allreduce(r + 0.25)
  T.eq(math.type(f), "float")
  T.eq(f, 3.5)
  local mixed = cu.mpi.allreduce(rank == 0 and 1 or 2.5)
  T.eq(math.type(mixed), "float", "an integer and a float give a float")
  T.eq(mixed, 3.5)
  T.raises(function() cu.mpi.allreduce(1, { op = "avg" }) end,
    "option 'op': expected \"sum\", \"prod\", \"max\" or \"min\"")
  T.raises(function() cu.mpi.allreduce(1, { op = rank == 0 and "sum" or "max" }) end,
    "the ranks name different ops (rank 0: sum, rank 1: max)")
  T.raises(function() cu.mpi.allreduce(rank == 0 and "x" or 1) end,
    rank == 0 and "number or cu.Array expected, got string" or "rank 0 gave invalid arguments")
end)

-- Element i (0-based) of rank r's array: small integers every dtype holds exactly.
local function elem(r, i) return (i % 5) + r * 2 + 1 end

local function make(dtype, shape, r, place)
  local n = 1
  for _, d in ipairs(shape) do n = n * d end
  local flat = {}
  for i = 0, n - 1 do flat[i + 1] = elem(r, i) end
  local a
  if place == "device" then
    a = cu.array(flat, dtype)
  else
    a = cu.host.array(flat, dtype, { pinned = place == "pinned" })
  end
  return a:reshape(shape)
end

local function flat_table(a)
  local t, out = a:reshape({ a.size }):totable(), {}
  for i, v in ipairs(t) do out[i] = type(v) == "number" and v or tostring(v) end
  return out
end

local function expected(dtype, n, fn)
  local out = {}
  for i = 0, n - 1 do
    local v = fn(i)
    if dtype == "c64" or dtype == "c128" then
      out[i + 1] = tostring(cu.array({ v }, dtype):totable()[1])
    else
      out[i + 1] = v
    end
  end
  return out
end

local REDUCIBLE = { "f32", "f64", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "c64", "c128" }
local SHAPES = { { 5 }, { 3, 4 }, { 2, 3, 2 } }

T.case("allreduce of arrays: dtypes, shapes, places, in place and out=", function()
  for _, dtype in ipairs(REDUCIBLE) do
    for _, shape in ipairs(SHAPES) do
      for _, place in ipairs({ "device", "pageable", "pinned" }) do
        local a = make(dtype, shape, rank, place)
        local r = cu.mpi.allreduce(a)
        T.truthy(rawequal(r, a) or r.shape, "returns the array")
        local n = a.size
        T.eq(flat_table(a), expected(dtype, n, function(i) return elem(0, i) + elem(1, i) end),
          dtype .. " " .. place .. " sum")
        T.eq(a.shape, shape)
        T.eq(a.location, place == "device" and "device" or place)
        local b = make(dtype, shape, rank, place)
        local out = cu.empty(shape, dtype)
        local op = (dtype == "c64" or dtype == "c128") and "prod" or "max"
        cu.mpi.allreduce(b, { op = op, out = out })
        T.eq(flat_table(b), flat_table(make(dtype, shape, rank, place)), "v unchanged with out=")
        T.eq(flat_table(out), expected(dtype, n, function(i)
          return op == "max" and math.max(elem(0, i), elem(1, i)) or elem(0, i) * elem(1, i)
        end), dtype .. " " .. op .. " into out")
      end
    end
  end
end)

T.case("allreduce of a non-contiguous view writes through the view", function()
  local a = make("f64", { 3, 4 }, rank, "device")
  local t = a:transpose()
  T.eq(t.is_contiguous, false)
  cu.mpi.allreduce(t, { op = "min" })
  T.eq(flat_table(a), expected("f64", 12, function(i) return math.min(elem(0, i), elem(1, i)) end))
end)

T.case("allreduce errors: mismatches are raised on every rank", function()
  T.raises(function() cu.mpi.allreduce(cu.zeros(rank == 0 and 4 or 5)) end,
    "the arrays differ across ranks: rank 0 f32[4], rank 1 f32[5]")
  T.raises(function() cu.mpi.allreduce(cu.zeros({ 2, 2 }, rank == 0 and "f32" or "f64")) end,
    "rank 0 f32[2x2], rank 1 f64[2x2]")
  T.raises(function() cu.mpi.allreduce(rank == 0 and cu.zeros(3) or 3) end,
    rank == 0 and "rank 0 f32[3], rank 1 an integer" or "some ranks give numbers, others arrays")
  T.raises(function() cu.mpi.allreduce(cu.zeros(3, "f16")) end, "MPI cannot reduce f16 arrays")
  T.raises(function() cu.mpi.allreduce(cu.zeros(3, "bool")) end, "MPI cannot reduce bool arrays")
  T.raises(function() cu.mpi.allreduce(cu.zeros(3, "c64"), { op = "max" }) end,
    "op 'max' is not defined for complex arrays")
  T.raises(function() cu.mpi.allreduce(cu.zeros(3), { out = cu.zeros(4) }) end,
    "option 'out': out must have the dtype and shape of v")
  local freed = cu.zeros(3)
  freed:free()
  T.raises(function() cu.mpi.allreduce(rank == 1 and freed or cu.zeros(3)) end,
    rank == 1 and "released" or "rank 1 gave invalid arguments")
  T.eq(cu.mpi.allreduce(1), 2, "still in step")
end)

T.case("bcast of arrays: in place, out=, a new array where a rank gives none", function()
  for _, dtype in ipairs({ "f32", "i64", "u8", "f16", "bf16", "bool", "c128" }) do
    for _, place in ipairs({ "device", "pageable" }) do
      local a, ref
      if dtype == "bool" then
        a = cu.array(rank == 0 and { true, false, true } or { false, false, false }, "bool")
        ref = { "true", "false", "true" } -- flat_table: non-numbers as text
      else
        a = make(dtype, { 2, 3 }, rank, place)
        ref = flat_table(make(dtype, { 2, 3 }, 0, place))
      end
      local r = cu.mpi.bcast(a)
      T.eq(flat_table(a), ref, dtype .. " " .. place .. " in place")
      T.eq(flat_table(r), ref)
      local fresh = cu.mpi.bcast(rank == 0 and a or nil)
      T.eq(fresh.dtype, a.dtype)
      T.eq(fresh.shape, a.shape)
      T.eq(fresh.location, a.location)
      T.eq(flat_table(fresh), ref, "a new array")
    end
  end
  local src = make("f32", { 4 }, rank, "device")
  local out = cu.host.zeros(4)
  cu.mpi.bcast(src, 1, { out = out })
  T.eq(flat_table(out), flat_table(make("f32", { 4 }, 1, "device")), "out= from root 1")
  T.raises(function() cu.mpi.bcast(cu.zeros(rank == 0 and 2 or 3)) end,
    "the arrays differ across ranks: rank 0 f32[2], rank 1 f32[3]")
  T.raises(function() cu.mpi.bcast(rank == 0 and 5 or nil, 0, { out = cu.zeros(2) }) end,
    rank == 0 and "option 'out': out is for arrays" or "rank 0 gave invalid arguments")
end)

T.case("gather: values and arrays at the root, nil elsewhere", function()
  for root = 0, 1 do
    local g = cu.mpi.gather({ r = rank, a = make("i32", { 2, 2 }, rank, "pageable") }, root)
    if rank == root then
      T.eq(#g, 2)
      for r = 0, 1 do
        T.eq(g[r + 1].r, r)
        T.eq(g[r + 1].a.dtype, "i32")
        T.eq(g[r + 1].a.shape, { 2, 2 })
        T.eq(g[r + 1].a.location, "pageable")
        T.eq(flat_table(g[r + 1].a), flat_table(make("i32", { 2, 2 }, r, "pageable")))
      end
    else
      T.eq(g, nil)
    end
  end
  T.eq(#(cu.mpi.gather(nil) or { n = 1, 1, 1 }), rank == 0 and 0 or 2, "nils gathered at root 0")
  T.raises(function() cu.mpi.gather(rank == 1 and coroutine.create(print) or 1) end,
    rank == 1 and "v is a thread" or "rank 1 gave invalid arguments")
end)

T.case("send/recv: Lua values, tags, any source and tag", function()
  if rank == 0 then
    cu.mpi.send(value_of(0), 1)
    cu.mpi.send("tagged", 1, 42)
    cu.mpi.send(3.0, 1, 7)
    cu.mpi.send(nil, 1, 8)
    local v, src, tag = cu.mpi.recv("any", "any")
    T.eq({ v, src, tag }, { "back", 1, 99 })
  else
    local v, src, tag = cu.mpi.recv(0)
    check_value(v, 0)
    T.eq({ src, tag }, { 0, 0 })
    T.eq({ cu.mpi.recv(0, 42) }, { "tagged", 0, 42 })
    local f = cu.mpi.recv("any", 7)
    T.eq(math.type(f), "float")
    T.eq(select("#", cu.mpi.recv(0, 8)), 3, "nil arrives as nil")
    cu.mpi.send("back", 0, 99)
  end
  T.raises(function() cu.mpi.send(1, 2) end, "bad argument #2 to 'send' (dest 2 is not a rank of this job (0..1))")
  T.raises(function() cu.mpi.send(1, 0, -1) end, "tag -1 is out of range")
  T.raises(function() cu.mpi.send(print, 1 - rank) end, "v is a function")
  T.raises(function() cu.mpi.recv("x") end, "rank or \"any\" expected")
end)

T.case("send/recv of arrays: dtype, shape and place travel with the data", function()
  local cases = {}
  for _, dtype in ipairs({ "f32", "f64", "f16", "bf16", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "c64",
    "c128" }) do
    for _, place in ipairs({ "device", "pageable", "pinned" }) do
      cases[#cases + 1] = { dtype, { 2, 3 }, place }
    end
  end
  cases[#cases + 1] = { "f32", { 0 }, "device" }
  cases[#cases + 1] = { "i16", { 2, 1, 3, 1 }, "pageable" }
  for i, c in ipairs(cases) do
    local dtype, shape, place = c[1], c[2], c[3]
    if rank == 0 then
      local a = make(dtype, shape, 0, place)
      if i % 2 == 0 and #shape == 2 then a = a:transpose() end -- non-contiguous sends too
      cu.mpi.send(a, 1, i)
    else
      local a, src, tag = cu.mpi.recv(0, i)
      local ref = make(dtype, shape, 0, place)
      if i % 2 == 0 and #shape == 2 then ref = ref:transpose() end
      T.eq({ src, tag }, { 0, i })
      T.eq(a.dtype, dtype)
      T.eq(a.shape, ref.shape)
      T.eq(a.location, place == "device" and "device" or place)
      T.eq(flat_table(a), flat_table(ref), dtype .. " " .. place)
    end
  end
  -- out=: into an existing array (a mismatch is an error once the message is received)
  if rank == 0 then
    cu.mpi.send(make("i32", { 3 }, 0, "device"), 1, 500)
    cu.mpi.send(make("i32", { 3 }, 0, "device"), 1, 501)
    cu.mpi.send("in step", 1, 502)
  else
    local out = cu.host.zeros(3, "i32")
    local got = cu.mpi.recv(0, 500, { out = out })
    T.eq(flat_table(out), flat_table(make("i32", { 3 }, 0, "device")), "received into out")
    T.eq(got.location, "pageable", "returns out")
    T.raises(function() cu.mpi.recv(0, 501, { out = cu.zeros(4, "i32") }) end,
      "option 'out': rank 0 sent i32[3]; out is i32[4]")
    T.eq(cu.mpi.recv(0, 502), "in step", "the mismatched message was consumed")
  end
  cu.mpi.barrier()
end)

-- Arrays travel in one message up to 4 KiB and in two above it; staged device arrays
-- (CULUA_MPI_STAGING=always, the test mpi.np2_staged) go through a staging buffer kept up to
-- 1 MiB, and through one of their own above it. Both sides of each limit, every place, into out=
-- and new arrays. Many messages in a row: a staged array's contents reach the device after recv returns
-- (a queued copy from the staging buffer), so the next message must not overwrite the staging
-- buffer before that copy has run.
T.case("send/recv of arrays on both sides of the one-message limits, in a quick series", function()
  local sizes = { 1024, 1025, 262144 - 32, 262144 + 1, 300000 } -- f32 elements
  local function values(n, k) -- differs per message
    return (cu.arange(n, "f32") + k):astype("f32")
  end
  local function check(a, n, k, what)
    T.eq(a.shape, { n }, what)
    local t = a:totable()
    T.truthy(t[1] == k and t[n] == n - 1 + k, string.format("%s: first %s last %s, expected %d and %d",
      what, tostring(t[1]), tostring(t[n]), k, n - 1 + k))
  end
  for _, place in ipairs({ "device", "pinned", "pageable" }) do
    local function at(a)
      if place == "device" then return a end
      return a:to_host({ pinned = place == "pinned" })
    end
    for _, n in ipairs(sizes) do
      local what = place .. " " .. n
      local out = place == "device" and cu.zeros(n) or cu.host.zeros(n, "f32", { pinned = place == "pinned" })
      for k = 1, 6 do
        if rank == 0 then
          cu.mpi.send(at(values(n, k)), 1, k)
          local back = cu.mpi.recv(1, k)
          check(back, n, k + 1, what .. " echo " .. k)
          T.eq(back.location, place == "device" and "device" or place, what)
        else
          local got = cu.mpi.recv(0, k, k % 2 == 0 and { out = out } or nil)
          -- the received array is used at once, on the device and by the next send
          local plus = place == "device" and got + 1 or at(got:to_device() + 1)
          cu.mpi.send(plus, 0, k)
          check(got, n, k, what .. " recv " .. k)
          if k % 2 == 0 then check(out, n, k, what .. " out= " .. k) end
        end
      end
    end
    -- Back-to-back receives behind queued work: with a current stream held by cu.sleep, a staged
    -- array's copy to the device waits there after recv returns, and the second message must not
    -- land in the staging buffer before that copy has run.
    for _, n in ipairs({ 1000, 262144 - 32 }) do
      if rank == 0 then
        cu.mpi.send(at(values(n, 10)), 1, 10)
        cu.mpi.send(at(values(n, 20)), 1, 20)
      else
        local new = place == "device" and cu.zeros or function(k) return cu.host.zeros(k, "f32") end
        local out1, out2 = new(n), new(n)
        local h2d = cu.ledger().h2d_calls
        local held = cu.stream()
        cu.sleep(50, { stream = held })
        do
          local _ <close> = cu.use_stream(held)
          cu.mpi.recv(0, 10, { out = out1 })
          cu.mpi.recv(0, 20, { out = out2 })
        end
        check(out1, n, 10, place .. " " .. n .. " first of two")
        check(out2, n, 20, place .. " " .. n .. " second of two")
        if place == "device" and os.getenv("CULUA_MPI_STAGING") == "always" then
          T.truthy(cu.ledger().h2d_calls >= h2d + 2, "the staging path copied to the device")
        end
      end
    end
    -- a strided device or host view travels as its elements in row-major order
    local m = cu.arange(2 * 700, "f32"):reshape({ 2, 700 })
    if place ~= "device" then m = at(m) end
    if rank == 0 then
      cu.mpi.send(m:transpose(), 1, 99)
    else
      local got = cu.mpi.recv(0, 99)
      T.eq(got.shape, { 700, 2 })
      T.eq(got:totable()[700][2], m:transpose():totable()[700][2], place .. " strided")
    end
    cu.mpi.barrier()
  end
end)

T.case("distribute=true: rows gathered at rank 0 in point order, a failed point on rank 1", function()
  local json = os.tmpname()
  os.remove(json)
  local mine = json .. "-rank" .. rank
  local res = cu.sweep {
    name = "dist", axes = { { "n", { 1, 2, 3, 4, 5, 6, 7 } }, { "k", { "a", "b" } } },
    distribute = true, quiet = true, json = mine,
    run = function(p)
      if p.n == 1 and p.k == "b" then error("point fails on purpose") end -- point 2: rank 1
      return { v = p.n * 10, rank = cu.mpi.rank, device = cu.device() }
    end,
  }
  if rank == 0 then
    T.eq(#res.rows, 14, "every point")
    for i, row in ipairs(res.rows) do
      local n, k = (i - 1) // 2 + 1, (i - 1) % 2 == 0 and "a" or "b"
      T.eq({ row.n, row.k }, { n, k }, "point order")
      if n == 1 and k == "b" then
        T.eq(row.status, "failed")
        T.truthy(row.error:find("point fails on purpose", 1, true))
      else
        T.eq(row.status, "ok")
        T.eq(row.v, n * 10)
        T.eq(row.rank, (i - 1) % 2, "round-robin")
        T.eq(row.device, row.rank % #cu.devices(), "device local_rank % device count")
      end
    end
    local f = T.truthy(io.open(mine, "r"), "rank 0 writes the file")
    local text = f:read("a")
    f:close()
    os.remove(mine)
    T.truthy(text:find("point fails on purpose", 1, true), "the failed row is in the file")
    T.eq(select(2, text:gsub('"status": "ok"', "")), 13)
  else
    T.eq(#res.rows, 7, "rank 1 gets its own rows")
    for _, row in ipairs(res.rows) do T.eq(row.rank or 1, 1) end
    T.eq(res.rows[1].status, "failed")
    T.eq(io.open(mine, "r"), nil, "only rank 0 writes result files")
  end
end)

T.case("distribute=true with fewer points than ranks", function()
  local res = cu.sweep { name = "one", axes = { n = { 5 } }, distribute = true, quiet = true,
    run = function(p) return p.n end }
  T.eq(#res.rows, rank == 0 and 1 or 0)
end)

T.case("isolate=true cannot be combined with distribute=true (a child cannot join the job)", function()
  T.raises(function()
    cu.sweep { axes = { n = { 1, 2 } }, distribute = true, isolate = true, run = function() end }
  end, "(option 'isolate': cannot be combined with distribute = true under mpirun")
end)

os.exit(T.run())
