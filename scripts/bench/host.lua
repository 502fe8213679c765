-- The host group of the performance suite, culua's side: the host backend's own operations on
-- float32/float64 arrays, timed with the host clock (docs/performance.md, "The host group").
-- The suite runs it in a child process on the host backend whatever backend the suite itself
-- runs on:
--
--   culua --backend host scripts/bench/host.lua [--ops LIST] [--reps R] [--sizes LIST]
--                                              [--matmul-sizes LIST]
--
-- Standard output: one JSON record per line (an info record first), as every producer of the
-- suite; numpy's side is scripts/bench/host_numpy.py, the machine's own bandwidth
-- culua-host-baseline (bench/host_stream.cpp).

local OPS = { "copy", "add", "sum", "transpose", "matmul" }
local BATCH_TARGET_MS, BATCH_MAX, BATCH_PROBE = 2.0, 2000, 3

local function usage(why)
  io.stderr:write("host.lua: ", why, "\nusage: culua --backend host scripts/bench/host.lua ",
    "[--ops copy,add,sum,transpose,matmul] [--reps R] [--sizes LIST] [--matmul-sizes LIST]\n")
  os.exit(2)
end

local function parse_size(t)
  local v, suffix = t:match("^(%d+)([KkMmGg]?)$")
  local scale = ({ [""] = 1, k = 1 << 10, m = 1 << 20, g = 1 << 30 })[suffix and suffix:lower()]
  v = v and math.tointeger(tonumber(v))
  if not v or v <= 0 or (v * scale) % 4 ~= 0 then
    usage("bad size '" .. t .. "' (a positive multiple of 4 bytes, optional suffix K, M or G)")
  end
  return v * scale
end

local function split(s, each)
  local t = {}
  for item in (s .. ","):gmatch("([^,]*),") do t[#t + 1] = each(item) end
  return t
end

local function positive(t, what)
  local v = t:match("^%d+$") and math.tointeger(tonumber(t))
  if not v or v <= 0 then usage("bad " .. what .. " '" .. t .. "' (a positive integer)") end
  return v
end

local opt = { ops = OPS, reps = 11, sizes = { 1 << 20, 4 << 20, 16 << 20, 64 << 20, 256 << 20 },
  matmul = { 512, 1024, 2048 } }
do
  local i = 1
  local function value(name)
    i = i + 1
    if not arg[i] then usage(name .. " needs a value") end
    return arg[i]
  end
  while arg[i] do
    local a = arg[i]
    if a == "--ops" then
      opt.ops = split(value(a), function(op)
        for _, known in ipairs(OPS) do
          if op == known then return op end
        end
        usage("unknown op '" .. op .. "'")
      end)
    elseif a == "--reps" then
      opt.reps = positive(value(a), "--reps")
    elseif a == "--sizes" then
      opt.sizes = split(value(a), parse_size)
    elseif a == "--matmul-sizes" then
      opt.matmul = split(value(a), function(t) return positive(t, "matrix size") end)
    else
      usage("unknown argument '" .. a .. "'")
    end
    i = i + 1
  end
end
if cu.backend ~= "host" then usage("run it on the host backend (culua --backend host ...)") end

local function emit(r) io.stdout:write(cu.json.encode(r), "\n"):flush() end

-- Timing: the host clock around a batch, the stream synchronized before and after ----------------

local s = cu.stream()
local _ <close> = cu.use_stream(s)
local clock_opts = { warn = false }
local function clock() return cu.clock(clock_opts) end

local function batch_ms(fn, batch)
  s:sync()
  local t0 = clock()
  for _ = 1, batch do fn() end
  s:sync()
  return (clock() - t0) * 1e3 / batch
end

-- Warm-up (2 calls), a probe of 3 calls, then `reps` batches of about 2 ms (1..2000 calls).
local function batched(fn)
  fn()
  fn()
  local probe = batch_ms(fn, BATCH_PROBE)
  local batch = probe <= 0 and BATCH_MAX or math.max(1, math.min(BATCH_MAX,
    math.floor(BATCH_TARGET_MS / probe + 0.5)))
  local per = {}
  for r = 1, opt.reps do per[r] = batch_ms(fn, batch) end
  return per, batch
end

local function median(t)
  local c = table.move(t, 1, #t, 1, {})
  table.sort(c)
  local n = #c
  return n % 2 == 1 and c[(n + 1) // 2] or (c[n // 2] + c[n // 2 + 1]) / 2
end

local function sig(x) return tonumber(string.format("%.6g", x)) end

-- A record of rates: `amount` (bytes or flops) per operation over each repetition's time.
local function rate_record(op, size, unit, scale, per, amount, how, batch)
  local v, lo, hi = {}, math.huge, -math.huge
  for i, ms in ipairs(per) do
    v[i] = amount / (math.max(ms, 1e-9) * scale)
    lo, hi = math.min(lo, v[i]), math.max(hi, v[i])
  end
  return { impl = "culua", op = "host_" .. op, size = size, unit = unit, median = sig(median(v)),
    min = sig(lo), max = sig(hi), n = #v, batch = batch, how = how }
end

local function gbps(op, size, per, bytes, how, batch)
  emit(rate_record(op, size, "GB/s", 1e6, per, bytes, how, batch))
end

-- The operations ------------------------------------------------------------------------------------

local measure = {}

function measure.copy(size)
  local n = size // 4
  local src, dst = cu.full(n, 1.5), cu.zeros(n)
  local per, batch = batched(function() cu.copy(dst, src) end)
  if dst[n] ~= 1.5 then error("copy: wrong result") end
  gbps("copy", size, per, 2 * size, "cu.copy(dst, src)", batch)
  src:free(); dst:free()
end

function measure.add(size)
  local n = size // 4
  local a, b, c = cu.full(n, 1.5), cu.full(n, 2.25), cu.zeros(n)
  local opts = { out = c }
  local per, batch = batched(function() cu.add(a, b, opts) end)
  if c[1] ~= 3.75 or c[n] ~= 3.75 then error("add: wrong result") end
  gbps("add", size, per, 3 * size, "cu.add(a, b, {out = c})", batch)
  a:free(); b:free(); c:free()
end

function measure.sum(size)
  local n = size // 4
  local a = cu.full(n, 1.0)
  local per, batch = batched(function() a:sum() end)
  if math.abs(a:sum():item() - n) > 1e-5 * n then error("sum: wrong result") end
  gbps("sum", size, per, size, "a:sum() (a new 0-d array each call)", batch)
  a:free()
end

function measure.transpose(size)
  local n = math.tointeger(math.floor(math.sqrt(size / 4) + 0.5))
  if n * n * 4 ~= size then error("transpose: the size is not 4*n*n bytes") end
  local src, dst = cu.rand({ n, n }), cu.zeros({ n, n })
  local t = src:transpose()
  local per, batch = batched(function() cu.copy(dst, t) end)
  if dst[1][n] ~= src[n][1] or dst[n][n - 1] ~= src[n - 1][n] then error("transpose: wrong result") end
  gbps("transpose", size, per, 2 * size,
    string.format("cu.copy(dst, src:transpose()), %dx%d", n, n), batch)
  src:free(); dst:free()
end

-- One element of a @ b, in Lua (a check, not a measurement).
local function dot(a, b, i, j)
  local row, col = a[i]:totable(), b:transpose()[j]:totable()
  local acc = 0
  for k = 1, #row do acc = acc + row[k] * col[k] end
  return acc
end

local function matmul(dtype, n)
  local op = "matmul_" .. dtype
  local ok, err = pcall(function()
    local a = (cu.rand({ n, n }) * 2 - 1):astype(dtype)
    local b = (cu.rand({ n, n }) * 2 - 1):astype(dtype)
    local c = cu.empty({ n, n }, dtype)
    local opts = { out = c }
    local per, batch = batched(function() cu.matmul(a, b, opts) end)
    local want, got = dot(a, b, n, 1), c[n][1]
    if math.abs(got - want) > (dtype == "f32" and 1e-3 or 1e-9) * n then
      error(string.format("%s: wrong result (%g, expected %g)", op, got, want))
    end
    emit(rate_record(op, n, "GFLOP/s", 1e6, per, 2 * n ^ 3,
      string.format("cu.matmul(a, b, {out = c}), %s, uniform in [-1, 1)", dtype), batch))
    a:free(); b:free(); c:free()
  end)
  if not ok then emit({ impl = "culua", op = "host_" .. op, size = n, error = tostring(err) }) end
  collectgarbage()
end

local dev = cu.devices()[cu.device() + 1]
emit({ impl = "culua_host", info = { culua = cu.version, device = dev.name, threads = dev.sm_count,
  CULUA_HOST_THREADS = os.getenv("CULUA_HOST_THREADS") } })
for _, op in ipairs(opt.ops) do
  if op == "matmul" then
    for _, dtype in ipairs({ "f32", "f64" }) do
      for _, n in ipairs(opt.matmul) do matmul(dtype, n) end
    end
  else
    for _, size in ipairs(opt.sizes) do
      local ok, err = pcall(measure[op], size)
      if not ok then emit({ impl = "culua", op = "host_" .. op, size = size, error = tostring(err) }) end
      collectgarbage()
      s:sync()
    end
  end
end
