-- cu.nccl across all GPUs of the machine (one process, one rank per device): every collective,
-- several dtypes, sizes and operators, against a reference computed in Lua from the same values.
-- Run with `culua --backend cuda tests/gpu/test_nccl_multi.lua` (exits 69 with fewer than 2 GPUs
-- or without NCCL).
package.path = (arg and arg[0] and arg[0]:match("^(.*)[/\\]") or "tests/gpu") .. "/../lua/?.lua;" ..
    package.path
local T = require "cu.testing"

if cu.backend ~= "cuda" or #cu.devices() < 2 then
  print("skip: test_nccl_multi needs --backend cuda and at least 2 GPUs")
  os.exit(69)
end
if not cu.nccl.available() then
  print("skip: " .. select(2, cu.nccl.available()))
  os.exit(69)
end

local N = #cu.devices()
local SIZES = { 1, 5, 4096, 262147 }

-- The values of rank r (0-based): small integers that every dtype below holds exactly, and whose
-- products over N ranks stay exact (the product uses values in -2..2).
local function values(n, r, dtype, small)
  local t = {}
  for i = 1, n do
    local v = small and (((i + r) % 5) - 2) or (((i * 7 + r * 13) % 23) - 11)
    if dtype:sub(1, 1) == "u" then v = math.abs(v) end
    t[i] = v
  end
  return t
end

-- An array of `dtype` holding `t` on device d.
local function on_device(d, t, dtype)
  local previous = cu.device()
  cu.device(d)
  local a = cu.array(t, dtype)
  cu.device(previous)
  return a
end

local function zeros_on(d, n, dtype)
  local previous = cu.device()
  cu.device(d)
  local a = cu.zeros(n, dtype)
  cu.device(previous)
  return a
end

local function same(a, expected, what)
  local got = a:totable()
  local tol = a.dtype == "f16" and 1e-2 or 1e-6
  T.eq(#got, #expected, what .. ": length")
  for i = 1, #expected do
    if math.abs(got[i] - expected[i]) > tol * math.max(1, math.abs(expected[i])) then
      error(string.format("%s: element %d is %s, expected %s", what, i, tostring(got[i]),
        tostring(expected[i])), 2)
    end
  end
end

local function combine(op, a, b)
  if op == "sum" or op == "avg" then return a + b end
  if op == "prod" then return a * b end
  if op == "max" then return math.max(a, b) end
  return math.min(a, b)
end

-- The reduction over the ranks of element i.
local function reference(per_rank, op)
  local out = {}
  for i = 1, #per_rank[1] do
    local acc = per_rank[1][i]
    for r = 2, N do acc = combine(op, acc, per_rank[r][i]) end
    if op == "avg" then acc = acc / N end
    out[i] = acc
  end
  return out
end

local devices = {}
for d = 0, N - 1 do devices[#devices + 1] = d end

T.case("a communicator over every GPU", function()
  local comm <close> = cu.nccl.comm()
  T.eq(comm.size, N)
  T.eq(comm.devices, devices)
end)

T.case("allreduce, reduce: every operator, several dtypes and sizes", function()
  local comm <close> = cu.nccl.comm(devices)
  for _, dtype in ipairs({ "f32", "f64", "i32", "i64", "u8", "u64", "f16" }) do
    local float = dtype:sub(1, 1) == "f"
    local ops = float and { "sum", "prod", "max", "min", "avg" } or { "sum", "prod", "max", "min" }
    if dtype == "u8" then ops = { "sum", "max", "min" } end -- a product of N ranks would wrap
    for _, n in ipairs(SIZES) do
      for _, op in ipairs(ops) do
        local small = op == "prod" or dtype == "u8" or dtype == "f16"
        local host, xs, outs = {}, {}, {}
        for r = 1, N do
          host[r] = values(n, r - 1, dtype, small)
          xs[r] = on_device(r - 1, host[r], dtype)
          outs[r] = zeros_on(r - 1, n, dtype)
        end
        local ref = reference(host, op)
        local what = string.format("%s n=%d %s", dtype, n, op)
        local got = comm:allreduce(xs, { op = op, out = outs })
        for r = 1, N do same(got[r], ref, what .. " allreduce rank " .. (r - 1)) end
        local root = N - 1
        local red = comm:reduce(xs, { op = op, root = root, out = outs })
        same(red[root + 1], ref, what .. " reduce at root")
        -- in place
        comm:allreduce(xs, { op = op })
        for r = 1, N do same(xs[r], ref, what .. " allreduce in place, rank " .. (r - 1)) end
      end
    end
  end
end)

T.case("complex sum and avg as pairs of reals", function()
  local comm <close> = cu.nccl.comm(devices)
  local xs = {}
  for r = 1, N do
    local t = {}
    for i = 1, 100 do t[i] = cu.complex(i + r, -i * r) end
    xs[r] = on_device(r - 1, t, "c64")
  end
  local got = comm:allreduce(xs, { op = "sum", out = (function()
    local o = {}
    for r = 1, N do o[r] = zeros_on(r - 1, 100, "c64") end
    return o
  end)() })
  for r = 1, N do
    local re, im = got[r]:real():totable(), got[r]:imag():totable()
    for i = 1, 100 do
      local want_re, want_im = 0, 0
      for k = 1, N do
        want_re, want_im = want_re + i + k, want_im - i * k
      end
      T.eq(re[i], want_re, "real part")
      T.eq(im[i], want_im, "imaginary part")
    end
  end
end)

T.case("broadcast, allgather, reducescatter", function()
  local comm <close> = cu.nccl.comm(devices)
  for _, dtype in ipairs({ "f32", "i64", "bool" }) do
    for _, n in ipairs(SIZES) do
      local m = n * N -- reducescatter: divisible by N
      local host, xs, big, bigs = {}, {}, {}, {}
      for r = 1, N do
        host[r] = values(n, r - 1, dtype == "bool" and "u8" or dtype)
        if dtype == "bool" then
          for i = 1, n do host[r][i] = host[r][i] % 2 == 1 end
        end
        xs[r] = on_device(r - 1, host[r], dtype)
        big[r] = values(m, r - 1, dtype)
        bigs[r] = dtype ~= "bool" and on_device(r - 1, big[r], dtype) or nil
      end
      local what = string.format("%s n=%d", dtype, n)
      local root = 1
      local b = {}
      for r = 1, N do b[r] = xs[r]:clone() end
      comm:broadcast(b, { root = root })
      for r = 1, N do T.eq(b[r]:totable(), host[root + 1], what .. " broadcast rank " .. (r - 1)) end
      local g = comm:allgather(xs)
      local want = {}
      for r = 1, N do
        for i = 1, n do want[#want + 1] = host[r][i] end
      end
      for r = 1, N do
        T.eq(g[r].shape, { N, n }, what .. " allgather shape")
        T.eq(g[r]:reshape(N * n):totable(), want, what .. " allgather rank " .. (r - 1))
      end
      if dtype ~= "bool" then
        local rs = comm:reducescatter(bigs, { op = "sum" })
        local total = reference(big, "sum")
        for r = 1, N do
          local part = {}
          for i = 1, n do part[i] = total[(r - 1) * n + i] end
          same(rs[r], part, what .. " reducescatter rank " .. (r - 1))
        end
      end
    end
  end
end)

T.case("send/recv around a ring inside one group", function()
  local comm <close> = cu.nccl.comm(devices)
  for _, n in ipairs(SIZES) do
    local host, xs, ys = {}, {}, {}
    for r = 1, N do
      host[r] = values(n, r - 1, "f32")
      xs[r] = on_device(r - 1, host[r], "f32")
      ys[r] = zeros_on(r - 1, n, "f32")
    end
    -- Rank r sends to r+1 and receives from r-1: both halves in one group.
    local next_rank, previous_rank = {}, {}
    for r = 0, N - 1 do
      next_rank[r + 1], previous_rank[r + 1] = (r + 1) % N, (r - 1) % N
    end
    comm:group(function()
      comm:send(xs, { peer = next_rank })
      comm:recv(ys, { peer = previous_rank })
    end)
    for r = 1, N do
      local from = (r - 2) % N + 1
      same(ys[r], host[from], "n=" .. n .. " ring: rank " .. (r - 1) .. " got rank " .. (from - 1))
    end
  end
end)

T.run()
