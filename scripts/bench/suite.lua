-- The performance suite: culua against native C++ (culua-baseline suite), CuPy and PyTorch
-- (scripts/bench/peers.py) in one run on the current GPU, and (the host group, on any machine)
-- culua's host backend against numpy (scripts/bench/host_numpy.py) and native loops
-- (culua-host-baseline). docs/performance.md is the contract: what each operation measures, the
-- same way on every side.
--
--   culua scripts/bench/suite.lua [--quick] [--out DIR] [--only GROUPS] [--no-peers] [--reps R]
--   culua scripts/bench/suite.lua --plot-from DIR/suite.json [--out DIR]
--
-- Writes DIR/suite.md (ratios, targets met or missed), DIR/suite.json (every figure and the
-- machine) and DIR/*.png (size curves, where gnuplot is installed; --plot-from draws them later
-- from the JSON on another machine). DIR defaults to bench-results. --quick: tiny sizes and few
-- repetitions (CI runs it on the host backend so that the suite cannot rot).

local GROUPS = { "startup", "launch", "add1k", "graph", "bandwidth", "transfer", "alloc", "matmul", "arrays",
  "fuse", "profile", "host" }

-- Command line --------------------------------------------------------------------------------

local opt = { out = "bench-results", quick = false, peers = true }
do
  local i = 1
  local function value(name)
    i = i + 1
    local v = arg[i]
    if not v then error("suite.lua: " .. name .. " needs a value", 0) end
    return v
  end
  while arg[i] do
    local a = arg[i]
    if a == "--quick" then
      opt.quick = true
    elseif a == "--out" then
      opt.out = value(a)
    elseif a == "--only" then
      opt.only = value(a)
    elseif a == "--no-peers" then
      opt.peers = false
    elseif a == "--reps" then
      opt.reps = math.tointeger(tonumber(value(a)))
      if not opt.reps or opt.reps < 1 then error("suite.lua: --reps needs a positive integer", 0) end
    elseif a == "--plot-from" then
      opt.plot_from = value(a)
    else
      error("suite.lua: unknown argument " .. a ..
        " (--quick, --out DIR, --only GROUPS, --no-peers, --reps R, --plot-from FILE)", 0)
    end
    i = i + 1
  end
end

local selected = {}
for _, g in ipairs(GROUPS) do selected[g] = opt.only == nil end
if opt.only then
  for g in opt.only:gmatch("[^,]+") do
    if selected[g] == nil then error("suite.lua: unknown group " .. g, 0) end
    selected[g] = true
  end
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
local bindir = culua_bin:match("^(.*)/[^/]*$") or "."
local scriptdir = (arg[0] or ""):match("^(.*)/[^/]*$") or "."
local baseline = bindir .. "/culua-baseline"
if not exists(baseline) then baseline = nil end

-- Sizes ---------------------------------------------------------------------------------------

local KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
local function powers4(from, to)
  local t, v = {}, from
  while v <= to do
    t[#t + 1] = math.tointeger(v)
    v = v * 4
  end
  return t
end
local cfg
if opt.quick then
  cfg = {
    reps = 3, launches = 200, rounds = {},
    bw = { 4 * KiB, 64 * KiB, 1 * MiB }, transfer = { 4 * KiB, 64 * KiB, 1 * MiB },
    alloc = { 4 * KiB, 1 * MiB }, matmul = { 64, 128 },
    large = 1 * MiB, startup_runs = 3,
    host_sizes = { 64 * KiB, 1 * MiB }, host_matmul = { 64, 128 },
    sort_keys = 1 << 12, fft_points = 1 << 12, reduce_bytes = 1 * MiB,
    rk4 = { n = 32, steps = 20, reps = 2 },
  }
else
  cfg = {
    reps = 11, launches = 10000, rounds = { launch = 6, add1k = 4, graph = 4, matmul = 2 },
    bw = powers4(4 * KiB, 4 * GiB), transfer = powers4(4 * KiB, 1 * GiB),
    alloc = powers4(4 * KiB, 1 * GiB), matmul = { 1024, 2048, 4096, 8192 },
    large = 1 * GiB, startup_runs = 21,
    host_sizes = powers4(1 * MiB, 256 * MiB), host_matmul = { 512, 1024, 2048 },
    sort_keys = 1 << 26, fft_points = 1 << 24, reduce_bytes = 1 * GiB,
    rk4 = { n = 512, steps = 1000, reps = 3 },
  }
end
cfg.reps = opt.reps or cfg.reps

local function list(t)
  local s = {}
  for i, v in ipairs(t) do s[i] = string.format("%d", v) end
  return table.concat(s, ",")
end

-- Statistics and records ------------------------------------------------------------------------

local function median(t)
  local c = table.move(t, 1, #t, 1, {})
  table.sort(c)
  local n = #c
  if n == 0 then return nil end
  return n % 2 == 1 and c[(n + 1) // 2] or (c[n // 2] + c[n // 2 + 1]) / 2
end

local records = {}
local function add_record(r) records[#records + 1] = r end

-- Per-round ratios (docs/performance.md, Records): culua's operation -> the native operation it is
-- compared with in the same round. Each round's ratio is culua's median over the native median of
-- that round; the record's `ratio` (the targets' figure) is the median of the rounds' ratios.
local ROUND_REFERENCE = {}
for _, k in ipairs({ 0, 4, 8 }) do
  for _, kind in ipairs({ "launch", "enqueue" }) do
    ROUND_REFERENCE[kind .. "_rtc" .. k] = kind .. "_rtc" .. k
    ROUND_REFERENCE[kind .. "_rtc" .. k .. "_call"] = kind .. "_rtc" .. k
  end
end

-- The ratios of the rounds whose records start at starts[1], starts[2], ... (the last round ends
-- at `last`): op -> { ratio of round 1, ... } (rounds without both figures are left out).
local function round_ratios(starts, last)
  local out = {}
  for r, from in ipairs(starts) do
    local to = starts[r + 1] and starts[r + 1] - 1 or last
    local native = {}
    for i = from, to do
      local rec = records[i]
      if rec.impl == "native" and rec.median and rec.size == nil then native[rec.op] = rec.median end
    end
    for i = from, to do
      local rec = records[i]
      local ref = rec.impl == "culua" and rec.median and native[ROUND_REFERENCE[rec.op] or false]
      if ref and ref > 0 then
        out[rec.op] = out[rec.op] or {}
        table.insert(out[rec.op], rec.median / ref)
      end
    end
  end
  return out
end

-- A record from samples (in `unit`); `how` says what was called.
local function summary(op, size, unit, samples, how, batch)
  local lo, hi = math.huge, -math.huge
  for _, v in ipairs(samples) do
    lo = math.min(lo, v)
    hi = math.max(hi, v)
  end
  return { impl = "culua", op = op, size = size, unit = unit, median = median(samples), min = lo,
    max = hi, n = #samples, batch = batch, how = how }
end

local function measure(op, size, fn)
  local ok, err = pcall(fn)
  if not ok then
    add_record({ impl = "culua", op = op, size = size, error = tostring(err) })
    collectgarbage()
    cu.sync()
  end
end

-- Other producers: JSON lines on stdout.
local function run_producer(cmd)
  local f = io.popen(cmd)
  if not f then return end
  local text = f:read("a")
  local ok = f:close()
  for line in text:gmatch("[^\n]+") do
    if line:sub(1, 1) == "{" then
      local r, why = cu.json.decode(line)
      if r then
        add_record(r)
      else
        io.stderr:write("suite.lua: unreadable record from ", cmd, ": ", why, "\n")
      end
    end
  end
  return ok
end

local have_python = opt.peers and os.execute("command -v python3 >/dev/null 2>&1")
local function peers_args(ops)
  return string.format(
    "--ops %s --reps %d --launches %d --bw-sizes %s --transfer-sizes %s --alloc-sizes %s --matmul-sizes %s" ..
    " --sort-keys %d --fft-points %d --reduce-bytes %d",
    ops, cfg.reps, cfg.launches, list(cfg.bw), list(cfg.transfer), list(cfg.alloc), list(cfg.matmul),
    cfg.sort_keys, cfg.fft_points, cfg.reduce_bytes)
end
local function run_others(ops)
  if ops == "host" or ops == "profile" then return end -- culua only (their own producers, or none)
  if ops == "fuse" then -- the RK4 loop's native floors and peers (their own command lines)
    local rk = cfg.rk4
    local args = string.format("--n %d --steps %d --reps %d", rk.n, rk.steps, rk.reps)
    if baseline and cu.backend == "cuda" then run_producer(quote(baseline) .. " rk4 " .. args) end
    if have_python then run_producer("python3 " .. quote(scriptdir .. "/rk4_peers.py") .. " " .. args) end
    return
  end
  if baseline and cu.backend == "cuda" then
    run_producer(quote(baseline) .. " suite " .. peers_args(ops))
  end
  if have_python then
    for _, impl in ipairs({ "cupy", "torch" }) do
      run_producer("python3 " .. quote(scriptdir .. "/peers.py") .. " --impl " .. impl .. " " ..
        peers_args(ops))
    end
  end
end

-- culua's measurements ----------------------------------------------------------------------------

local s = cu.stream()
local e0, e1 = cu.event(), cu.event()
local clock_opts = { warn = false }
local function clock() return cu.clock(clock_opts) end

-- Events around `batch` back-to-back calls: ms per call.
local function batch_ms(fn, batch)
  e0:record(s)
  for _ = 1, batch do fn() end
  e1:record(s)
  e1:sync()
  return e0:elapsed(e1) / batch
end

local function clamp(v, lo, hi) return math.max(lo, math.min(hi, v)) end
-- The contract's batch rule: a batch lasts about 2 ms.
local function batched(fn)
  fn()
  fn()
  local t = batch_ms(fn, 3)
  t = batch_ms(fn, clamp(math.floor(2 / math.max(t, 1e-6) + 0.5), 1, 2000))
  local batch = clamp(math.floor(2 / math.max(t, 1e-6) + 0.5), 1, 2000)
  local per = {}
  for r = 1, cfg.reps do per[r] = batch_ms(fn, batch) end
  return per, batch
end

local function rates(per_ms, amount, scale)
  local t = {}
  for i, ms in ipairs(per_ms) do t[i] = amount / (math.max(ms, 1e-9) * scale) end
  return t
end

-- Host time of `count` calls, per call in µs, after the stream is idle.
local function host_us(fn, count)
  s:sync()
  local t0 = clock()
  for _ = 1, count do fn() end
  local us = (clock() - t0) * 1e6 / count
  s:sync()
  return us
end

local culua_groups = {}

local EMPTY_SOURCE = [[extern "C" __global__ void empty0() {}
extern "C" __global__ void empty4(float* a, const float* b, float c, int n) {}
extern "C" __global__ void empty8(float* a, const float* b, float c, int n, float* d, const float* e, double f, long long g) {}
]]

function culua_groups.launch()
  if cu.backend ~= "cuda" then
    for _, k in ipairs({ 0, 4, 8 }) do
      for _, op in ipairs({ "launch_rtc", "enqueue_rtc", "launch_rtc_call" }) do
        add_record({ impl = "culua", op = op .. k, absent = "the host backend runs no run-time compiled CUDA" })
      end
    end
    add_record({ impl = "culua", op = "sync_empty", absent = "the host backend runs no run-time compiled CUDA" })
    return
  end
  local m = cu.compile(EMPTY_SOURCE)
  local buf = cu.ones(256, { stream = s })
  local cfg1 = { grid = 1, block = 1, stream = s }
  local args = { [0] = {}, [4] = { buf, buf, 1.5, 256 }, [8] = { buf, buf, 1.5, 256, buf, buf, 2.5, 7 } }
  local N = cfg.launches
  for _, k in ipairs({ 0, 4, 8 }) do
    local kernel = m["empty" .. k]
    local kc = kernel:configure(cfg1)
    local a = args[k]
    -- The loops are written out per arity, as a script would write them.
    local run, call
    if k == 0 then
      run = function(n) for _ = 1, n do kc() end end
      call = function(n) for _ = 1, n do kernel(cfg1) end end
    elseif k == 4 then
      local x, y, c, n4 = a[1], a[2], a[3], a[4]
      run = function(n) for _ = 1, n do kc(x, y, c, n4) end end
      call = function(n) for _ = 1, n do kernel(cfg1, x, y, c, n4) end end
    else
      local x, y, c, n4, d, e, f, g = table.unpack(a)
      run = function(n) for _ = 1, n do kc(x, y, c, n4, d, e, f, g) end end
      call = function(n) for _ = 1, n do kernel(cfg1, x, y, c, n4, d, e, f, g) end end
    end
    for _, form in ipairs({ { "launch_rtc" .. k, run, "kc(...) with kc = k:configure(cfg)" },
                            { "launch_rtc" .. k .. "_call", call, "k(cfg, ...)" } }) do
      local op, loop, how = form[1], form[2], form[3]
      measure(op, nil, function()
        loop(1000)
        s:sync()
        local per, enq = {}, {}
        for r = 1, cfg.reps do
          e0:record(s)
          loop(N)
          e1:record(s)
          e1:sync()
          per[r] = e0:elapsed(e1) * 1e3 / N
          enq[r] = host_us(function() loop(1) end, 1000)
        end
        add_record(summary(op, nil, "us", per, how .. ", empty kernel, grid 1, block 1", N))
        local eop = op:gsub("^launch", "enqueue")
        add_record(summary(eop, nil, "us", enq, how .. ", 1000 launches onto an idle stream", 1000))
      end)
    end
  end
  local k0 = m.empty0:configure(cfg1)
  measure("sync_empty", nil, function()
    local t = {}
    for r = 1, cfg.reps do t[r] = host_us(function() k0(); s:sync() end, 1000) end
    add_record(summary("sync_empty", nil, "us", t, "kc(); s:sync()", 1000))
  end)
end

-- The profile group (docs/profiling.md): what activity tracing (cu.profile) costs, on the
-- launch-bound rows and on a kernel of about 100 us and more, each measured off and on in turns
-- in the same run (events around the loop; the profile's own collection comes after them).
function culua_groups.profile()
  local _ <close> = cu.use_stream(s)
  local forms = {}
  if cu.backend == "cuda" then
    local m = cu.compile(EMPTY_SOURCE)
    local buf = cu.ones(256)
    local kc = m.empty4:configure({ grid = 1, block = 1, stream = s })
    forms[#forms + 1] = { "launch_rtc4", function() kc(buf, buf, 1.5, 256) end,
      "kc(...) with kc = k:configure(cfg), empty kernel", cfg.launches }
  end
  local a, b, c = cu.rand(1024), cu.rand(1024), cu.empty(1024)
  forms[#forms + 1] = { "launch_add1k", function() cu.add(a, b, { out = c }) end, "cu.add(a, b, {out = c}), 1024 f32",
    cfg.launches }
  local n = opt.quick and (1 << 16) or (64 << 20) -- 3 x 256 MiB: about 200 us on an H200
  local A, B, C = cu.rand(n), cu.rand(n), cu.empty(n)
  forms[#forms + 1] = { "add_large", function() cu.add(A, B, { out = C }) end,
    string.format("cu.add(a, b, {out = c}), %d f32", n), opt.quick and 20 or 200 }
  for _, form in ipairs(forms) do
    local name, fn, how, N = form[1], form[2], form[3], form[4]
    measure("profile_off_" .. name, nil, function()
      for _ = 1, math.min(N, 1000) do fn() end
      s:sync()
      local off, on, rows = {}, {}, 0
      local function timed()
        e0:record(s)
        for _ = 1, N do fn() end
        e1:record(s)
        e1:sync()
        return e0:elapsed(e1) * 1e3 / N
      end
      for r = 1, cfg.reps do
        off[r] = timed()
        local p = cu.profile(function() on[r] = timed() end)
        rows = p.records
      end
      add_record(summary("profile_off_" .. name, nil, "us", off, how .. ", not profiled", N))
      local rec = summary("profile_on_" .. name, nil, "us", on, how .. ", inside cu.profile", N)
      rec.records = rows
      add_record(rec)
    end)
  end
end

-- c holds a + b (1-D arrays of the same size), else an error naming `what`.
local function check_add(a, b, c, what)
  local at, bt, ct = a:totable(), b:totable(), c:totable()
  for i = 1, #at do
    if math.abs(ct[i] - (at[i] + bt[i])) > 1e-6 then error(what .. ": wrong result at " .. i) end
  end
end

function culua_groups.add1k()
  local _ <close> = cu.use_stream(s)
  local a, b, c = cu.rand(1024), cu.rand(1024), cu.empty(1024)
  local N = cfg.launches
  local reused = { out = c }
  local forms = {
    { "add1k", function() cu.add(a, b, { out = c }) end, "cu.add(a, b, {out = c})" },
    { "add1k_reused", function() cu.add(a, b, reused) end, "cu.add(a, b, opts), opts = {out = c} made once" },
  }
  for _, form in ipairs(forms) do
    local name, fn, how = form[1], form[2], form[3]
    measure("launch_" .. name, nil, function()
      for _ = 1, 1000 do fn() end
      s:sync()
      local per, enq, sync = {}, {}, {}
      for r = 1, cfg.reps do
        e0:record(s)
        for _ = 1, N do fn() end
        e1:record(s)
        e1:sync()
        per[r] = e0:elapsed(e1) * 1e3 / N
        enq[r] = host_us(fn, 1000)
        sync[r] = host_us(function() fn(); s:sync() end, 1000)
      end
      add_record(summary("launch_" .. name, nil, "us", per, how .. ", 1024 f32", N))
      add_record(summary("enqueue_" .. name, nil, "us", enq, how .. ", 1000 calls onto an idle stream", 1000))
      add_record(summary("sync_" .. name, nil, "us", sync, how .. "; s:sync()", 1000))
    end)
  end
  check_add(a, b, c, "add1k")
end

-- Graphs (cu.graph) of GRAPH_NODES launches: replayed (per node), and their capture and
-- instantiation (docs/performance.md, the graph group).
local GRAPH_NODES = 1000
local NO_RTC = "the host backend runs no run-time compiled CUDA"

function culua_groups.graph()
  local _ <close> = cu.use_stream(s)
  local replays = math.max(1, cfg.launches // GRAPH_NODES)
  local per_rep = replays * GRAPH_NODES
  local a, b, c = cu.rand(1024), cu.rand(1024), cu.empty(1024)
  local bodies = {
    { kind = "empty" },
    { kind = "add1k", how = "cu.add(a, b, {out = c}), 1024 f32",
      fn = function() for _ = 1, GRAPH_NODES do cu.add(a, b, { out = c }) end end,
      reset = function() c:fill(0) end, check = function() check_add(a, b, c, "graph_add1k") end },
  }
  if cu.backend == "cuda" then
    bodies[1].how = "kc() with kc = m.empty0:configure(cfg), empty kernel, grid 1, block 1"
    local ok, k0 = pcall(function()
      return cu.compile(EMPTY_SOURCE).empty0:configure({ grid = 1, block = 1, stream = s })
    end)
    bodies[1].fn = function()
      if not ok then error(k0, 0) end
      for _ = 1, GRAPH_NODES do k0() end
    end
  end
  local graph_opts = { stream = s }
  for _, body in ipairs(bodies) do
    local kind, fn = body.kind, body.fn
    local replay_op, capture_op = "graph_" .. kind, "graph_capture_" .. kind
    local instantiate_op = "graph_instantiate_" .. kind
    if not fn then
      for _, op in ipairs({ replay_op, capture_op, instantiate_op }) do
        add_record({ impl = "culua", op = op, absent = NO_RTC })
      end
    else
      local what = string.format("cu.graph of %d x %s", GRAPH_NODES, body.how)
      -- The figures are per call captured; a graph with other than one node per call says so
      -- (nodes, how) rather than losing the figure.
      local nodes = GRAPH_NODES
      local function capture()
        local g = cu.graph(fn, graph_opts)
        nodes = g.nodes
        return g
      end
      local function graph_record(op, unit, t, how, batch)
        if nodes ~= GRAPH_NODES then
          how = string.format("%s (the graph has %d nodes for %d calls)", how, nodes, GRAPH_NODES)
        end
        local r = summary(op, nil, unit, t, what .. "; " .. how, batch)
        r.nodes = nodes
        add_record(r)
      end
      measure(replay_op, nil, function()
        fn() -- eagerly: modules loaded before the capture
        s:sync()
        local g = capture()
        if body.reset then body.reset() end
        g:launch(s)
        if body.check then body.check() end
        g:launch(s)
        s:sync()
        local per = {}
        for r = 1, cfg.reps do
          e0:record(s)
          g:replay(replays, s)
          e1:record(s)
          e1:sync()
          per[r] = e0:elapsed(e1) * 1e3 / per_rep
        end
        g:free()
        graph_record(replay_op, "us", per,
          string.format("events around g:replay(%d, s), / %d calls", replays, per_rep), per_rep)
      end)
      measure(capture_op, nil, function()
        capture():free() -- warm-up
        local total, inst = {}, {}
        for r = 1, cfg.reps do
          s:sync()
          local t0 = clock()
          local g = capture()
          total[r] = (clock() - t0) * 1e3
          inst[r] = g.instantiate_ms
          g:free()
        end
        graph_record(capture_op, "ms", total, "host time of cu.graph(fn, {stream = s}), the stream idle")
        graph_record(instantiate_op, "ms", inst, "g.instantiate_ms (the instantiation alone)")
      end)
      local last = records[#records]
      if last.op == capture_op and last.error then
        add_record({ impl = "culua", op = instantiate_op, error = last.error })
      end
    end
  end
  collectgarbage()
end

function culua_groups.bandwidth()
  local _ <close> = cu.use_stream(s)
  for _, size in ipairs(cfg.bw) do
    local n = size // 4
    measure("copy", size, function()
      local src, dst = cu.full(n, 1.5), cu.empty(n)
      local per, batch = batched(function() cu.copy(dst, src) end)
      add_record(summary("copy", size, "GB/s", rates(per, 2 * size, 1e6), "cu.copy(dst, src)", batch))
      src:free(); dst:free()
    end)
    measure("add", size, function()
      local a, b, c = cu.full(n, 1.5), cu.full(n, 2.25), cu.empty(n)
      local opts = { out = c }
      local per, batch = batched(function() cu.add(a, b, opts) end)
      add_record(summary("add", size, "GB/s", rates(per, 3 * size, 1e6), "cu.add(a, b, {out = c})", batch))
      if size <= 16 * MiB and c[n] ~= 3.75 then error("add: wrong result") end
      a:free(); b:free(); c:free()
    end)
    measure("sum", size, function()
      local a = cu.full(n, 1.0)
      local per, batch = batched(function() a:sum() end)
      add_record(summary("sum", size, "GB/s", rates(per, size, 1e6), "a:sum() (a new 0-d array each call)", batch))
      if math.abs(a:sum():item() - n) > 1e-5 * n then error("sum: wrong result") end
      a:free()
    end)
    measure("cast", size, function()
      local src, dst = cu.full(n, 1.5), cu.empty(n, "bf16")
      local per, batch = batched(function() cu.copy(dst, src) end)
      add_record(summary("cast", size, "GB/s", rates(per, 1.5 * size, 1e6), "cu.copy(dst_bf16, src_f32)", batch))
      src:free(); dst:free()
    end)
    -- The general element-wise path's common layouts, and the 2-byte floats (against memcpy).
    measure("add_row", size, function()
      local cols = math.min(n, 4096)
      local a, row, c = cu.full({ n // cols, cols }, 1.5), cu.full(cols, 2.25), cu.empty({ n // cols, cols })
      local opts = { out = c }
      local per, batch = batched(function() cu.add(a, row, opts) end)
      add_record(summary("add_row", size, "GB/s", rates(per, 2 * size, 1e6),
        "cu.add(a, row, {out = c}), a {n/4096, 4096} f32, row {4096} broadcast over the rows", batch))
      if size <= 16 * MiB and c:view(n)[n] ~= 3.75 then error("add_row: wrong result") end
      a:free(); row:free(); c:free()
    end)
    measure("add_transposed", size, function()
      local side = math.tointeger(math.floor(math.sqrt(n) + 0.5))
      local bytes = side * side * 4
      local a, b, c = cu.full({ side, side }, 1.5), cu.full({ side, side }, 2.25), cu.empty({ side, side })
      local bt, opts = b:transpose(), { out = c }
      local per, batch = batched(function() cu.add(a, bt, opts) end)
      add_record(summary("add_transposed", size, "GB/s", rates(per, 3 * bytes, 1e6),
        "cu.add(a, b:transpose(), {out = c}), square f32 arrays", batch))
      if size <= 16 * MiB and c:view(side * side)[side * side] ~= 3.75 then
        error("add_transposed: wrong result")
      end
      a:free(); b:free(); c:free()
    end)
    for _, dt in ipairs({ "f16", "bf16" }) do
      measure("add_" .. dt, size, function()
        local m = size // 2
        local a, b, c = cu.full(m, 1.5, dt), cu.full(m, 2.25, dt), cu.empty(m, dt)
        local opts = { out = c }
        local per, batch = batched(function() cu.add(a, b, opts) end)
        add_record(summary("add_" .. dt, size, "GB/s", rates(per, 3 * size, 1e6),
          "cu.add(a, b, {out = c}), " .. dt .. " arrays of size bytes", batch))
        if size <= 16 * MiB and c[m] ~= 3.75 then error("add_" .. dt .. ": wrong result") end
        a:free(); b:free(); c:free()
      end)
    end
    collectgarbage()
  end
end

function culua_groups.transfer()
  for _, size in ipairs(cfg.transfer) do
    local n = size // 4
    local d = cu.empty(n, { stream = s })
    d:fill(1, { stream = s })
    local function events_gbps(dst, src)
      cu.copy(dst, src, { stream = s })
      s:sync()
      local t = {}
      for r = 1, cfg.reps do
        e0:record(s)
        cu.copy(dst, src, { stream = s })
        e1:record(s)
        e1:sync()
        t[r] = size / (math.max(e0:elapsed(e1), 1e-9) * 1e6)
      end
      return t
    end
    local function host_gbps(dst, src)
      cu.copy(dst, src)
      local t = {}
      for r = 1, cfg.reps do
        local t0 = clock()
        cu.copy(dst, src)
        t[r] = size / (math.max(clock() - t0, 1e-12) * 1e9)
      end
      return t
    end
    measure("h2d_pinned", size, function()
      local h = cu.host.empty(n, "f32", { pinned = true })
      h:fill(2)
      add_record(summary("h2d_pinned", size, "GB/s", events_gbps(d, h), "cu.copy(d, pinned, {stream = s})"))
      add_record(summary("d2h_pinned", size, "GB/s", events_gbps(h, d), "cu.copy(pinned, d, {stream = s})"))
      h:free()
    end)
    measure("h2d_pageable", size, function()
      local h = cu.host.empty(n, "f32")
      h:fill(2)
      add_record(summary("h2d_pageable", size, "GB/s", host_gbps(d, h), "cu.copy(d, pageable) (synchronous)"))
      add_record(summary("d2h_pageable", size, "GB/s", host_gbps(h, d), "cu.copy(pageable, d) (synchronous)"))
      if h[n] ~= 2 then error("d2h_pageable: wrong result") end
      h:free()
    end)
    d:free()
  end
  collectgarbage()
end

function culua_groups.alloc()
  for _, size in ipairs(cfg.alloc) do
    measure("alloc", size, function()
      local pairs_per = 1000
      for _ = 1, 100 do cu.empty(size, "u8"):free() end
      local t = {}
      for r = 1, cfg.reps do
        local t0 = clock()
        for _ = 1, pairs_per do cu.empty(size, "u8"):free() end
        t[r] = (clock() - t0) * 1e6 / pairs_per
      end
      cu.sync()
      add_record(summary("alloc", size, "us", t, "cu.empty(size, 'u8'):free()", pairs_per))
    end)
  end
  collectgarbage()
end

-- The operands of culua-baseline's matmul, sort and fft (bench/baseline_suite.cu, fill_uniform):
-- the same numbers on both sides, since tensor-core throughput depends on the data (through the
-- power), and so that the sides' sorted keys and spectra can be compared (check_agreement).
local FILL_SOURCE = [[
__device__ unsigned long long splitmix64(unsigned long long x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
extern "C" __global__ void fill_f32(float* p, long long n, long long seed) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)blockDim.x * gridDim.x) {
    unsigned long long x = splitmix64((unsigned long long)seed ^ ((unsigned long long)i * 0xd1b54a32d192ed03ull));
    p[i] = 2.0f * ((float)(x >> 40) * 0x1.0p-24f) - 1.0f;
  }
}
extern "C" __global__ void fill_i32(int* p, long long n, long long seed) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)blockDim.x * gridDim.x) {
    unsigned long long x = splitmix64((unsigned long long)seed ^ ((unsigned long long)i * 0xd1b54a32d192ed03ull));
    p[i] = (int)(unsigned)(x >> 32);
  }
}
extern "C" __global__ void fill_f64(double* p, long long n, long long seed) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)blockDim.x * gridDim.x) {
    unsigned long long x = splitmix64((unsigned long long)seed ^ ((unsigned long long)i * 0xd1b54a32d192ed03ull));
    p[i] = 2.0 * ((double)(x >> 11) * 0x1.0p-53) - 1.0;
  }
}
]]

local function operand(n, dtype, seed)
  if cu.backend ~= "cuda" then return (cu.rand({ n, n }, "f32") * 2 - 1):astype(dtype) end
  local fill = cu.compile(FILL_SOURCE)
  local base = dtype == "f64" and "f64" or "f32"
  local x = cu.empty({ n, n }, base)
  fill["fill_" .. base]({ grid = 1024, block = 256 }, x, n * n, seed)
  return dtype == base and x or x:astype(dtype)
end

function culua_groups.matmul()
  local _ <close> = cu.use_stream(s)
  for _, dtype in ipairs({ "f32", "bf16", "f64" }) do
    for _, n in ipairs(cfg.matmul) do
      local op = "matmul_" .. dtype
      measure(op, n, function()
        local a = operand(n, dtype, 0x243f6a8885a308d3)
        local b = operand(n, dtype, 0x13198a2e03707344)
        local c = cu.empty({ n, n }, dtype)
        local opts = { out = c }
        local per, batch = batched(function() cu.matmul(a, b, opts) end)
        add_record(summary(op, n, "TFLOP/s", rates(per, 2 * n ^ 3, 1e9),
          "cu.matmul(a, b, {out = c}), operands as culua-baseline's", batch))
        a:free(); b:free(); c:free()
      end)
    end
    collectgarbage()
  end
end

-- The fuse group (docs/fusion.md): the RK4 loop of scripts/device_resident_loop.lua, run by it in
-- a child process (versions B to G, N x N complex64, delta read every step), twice: with an empty
-- kernel cache (E's first call compiles) and with the cache the first run filled (a disk hit). The
-- native floors (culua-baseline rk4) and the peers (rk4_peers.py) run beside it.
function culua_groups.fuse()
  local rk = cfg.rk4
  local cache = os.tmpname()
  os.remove(cache)
  local script = scriptdir .. "/../device_resident_loop.lua"
  local function child()
    local cmd = string.format("CULUA_CACHE_DIR=%s %s --backend %s %s n=%d steps=%d --results 2>&1", quote(cache),
      quote(culua_bin), cu.backend, quote(script), rk.n, rk.steps)
    local f = assert(io.popen(cmd))
    local text = f:read("a")
    local ok = f:close()
    local r = {}
    for k, v in text:gmatch("RESULT ([%w_]+)=([^\n]*)") do r[k] = v end
    if not ok or not r.e_ms then
      error("device_resident_loop.lua failed: " .. text:sub(-600), 0)
    end
    return r
  end
  local runs = {}
  for i = 1, rk.reps do
    local ok, r = pcall(child)
    if not ok then
      add_record({ impl = "culua", op = "rk4_E", size = rk.n, error = tostring(r) })
      os.execute("rm -rf " .. quote(cache))
      return
    end
    runs[i] = r
  end
  os.execute("rm -rf " .. quote(cache))
  local HOW = {
    B = "plain operations with out= (about 64 launches a step), the sum, :item()",
    C = "four hand-written cu.elementwise stage kernels a step, the sum, :item()",
    D = "B's step and the sum as a graph (about 70 nodes), one launch, :item()",
    E = "B's step unchanged inside cu.fuse, the sum, :item()",
    F = "D captured with {fuse = true}, one launch, :item()",
    G = "D's step as a pure function inside cu.fuse with replay = true, :item()",
  }
  for _, v in ipairs({ "B", "C", "D", "E", "F", "G" }) do
    local t = {}
    for i, r in ipairs(runs) do t[i] = tonumber(r[v:lower() .. "_ms"]) end
    if #t == #runs then
      local rec = summary("rk4_" .. v, rk.n, "ms", t, HOW[v])
      rec.steps = rk.steps
      add_record(rec)
    end
  end
  local last = runs[#runs]
  local function one(op, unit, value, how)
    if value then add_record(summary(op, rk.n, unit, { tonumber(value) }, how)) end
  end
  one("rk4_E_kernels_per_step", "kernels", tonumber(last.e_kernels_per_step),
    "E's kernels a step (the ledger's operations queued less its copies)")
  one("rk4_E_first_call_cold", "ms", runs[1].e_first_call_ms, "E's first call with an empty kernel cache: " ..
    "recording, NVRTC (" .. runs[1].e_first_compile_ms .. " ms) and the run")
  one("rk4_C_first_call_cold", "ms", runs[1].c_first_call_ms, "C's first step with an empty kernel cache: " ..
    "NVRTC compiles its two complex64 stage kernels, then the step")
  if runs[2] then
    one("rk4_E_first_call_disk", "ms", runs[2].e_first_call_ms, "E's first call in a second process: " ..
      runs[2].e_first_disk_hits .. " disk cache hit(s), " .. runs[2].e_first_compiles .. " compile(s)")
  end
  one("rk4_E_compiles", "compiles", tonumber(last.e_compiles), "fused compiles over E's steps (ledger)")
  local re, im = (last.final_delta or ""):match("([^,]+),([^,]+)")
  if re then
    local rec = summary("rk4_final_delta", rk.n, "delta", { tonumber(re) },
      "B's last delta (real part; imag " .. im .. ")")
    rec.delta = { tonumber(re), tonumber(im) }
    add_record(rec)
  end
end

-- The arrays group (docs/performance.md, "The arrays group"): the Array API functions
-- against CUB and cuFFT called from C++, CuPy and PyTorch (sort, argsort, fft), and the
-- reductions and the scan against the device's copy bandwidth (cumsum, any, std). Every side
-- sorts and transforms the same numbers (the splitmix64 formula of FILL_SOURCE, on the GPU).
local SEEDS = { f32 = 0x243f6a8885a308d3, i32 = 0x13198a2e03707344, re = 0x452821e638d01377,
  im = 0x0be5466cf34e90c6 }

-- n keys of dtype ("f32": uniform in [-1, 1), "i32": uniform over the whole range), or the
-- real/imaginary parts of the fft's input; on the host backend (no cu.compile) cu.rand numbers.
local function keys(n, dtype, seed)
  if cu.backend ~= "cuda" then
    if dtype == "i32" then return (cu.rand(n, "f64") * 4294967296.0 - 2147483648.0):astype("i32") end
    return cu.rand(n, "f32") * 2 - 1
  end
  local x = cu.empty(n, dtype)
  cu.compile(FILL_SOURCE)["fill_" .. dtype]({ grid = 1024, block = 256 }, x, n, seed)
  return x
end

-- The checks that the records carry (`check`) and that the suite compares between the sides
-- (check_agreement): the sorted keys at five positions, the spectrum at four (re, im).
local function positions(n) return { 1, math.max(1, n // 4), math.max(1, n // 2), math.max(1, 3 * n // 4), n } end

local function sorted_check(sorted, n, what)
  if n > 1 and not cu.all(cu.greater_equal(sorted[{ 2, n }], sorted[{ 1, n - 1 }])):item() then
    error(what .. ": not sorted")
  end
  local t = {}
  for i, p in ipairs(positions(n)) do t[i] = sorted[p] end
  return t
end

-- How far two f32 spectra of m points may differ at one point: the rounding of an FFT grows as
-- log2(m) times the spectrum's scale, sqrt(m) for these inputs (the values are about 0.8 sqrt(m)).
local function fft_tolerance(m) return 1e-5 * math.sqrt(m) * math.log(m, 2) + 1e-3 end

-- The spectrum of x (m points) checked against its inverse and its first element against the sum;
-- returns the real and imaginary parts at 1, 2, m/2 + 1, m.
local function fft_check(x, m)
  local X = cu.fft.fft(x)
  local err = cu.max(cu.abs(cu.fft.ifft(X) - x)):item()
  local dc, sum = X[1], x:sum():item()
  if not (err <= 1e-4 and math.abs(dc.re - sum.re) + math.abs(dc.im - sum.im) <= fft_tolerance(m)) then
    error(string.format("cu.fft.fft: wrong transform (round trip error %g, X[1] = %s, sum %s)", err, dc, sum))
  end
  local t = {}
  for _, p in ipairs({ 1, 2, m // 2 + 1, m }) do
    local z = X[p]
    t[#t + 1] = z.re
    t[#t + 1] = z.im
  end
  return t
end

function culua_groups.arrays()
  local _ <close> = cu.use_stream(s)
  local n = cfg.sort_keys
  for _, dtype in ipairs({ "f32", "i32" }) do
    do
      local a
      measure("sort_" .. dtype, n, function()
        a = keys(n, dtype, SEEDS[dtype])
        local check = sorted_check(cu.sort(a), n, "cu.sort")
        collectgarbage()
        local per, batch = batched(function() cu.sort(a) end)
        local r = summary("sort_" .. dtype, n, "ms", per, "cu.sort(a), a 1-D " .. dtype ..
          (dtype == "f32" and " uniform in [-1, 1)" or " uniform over the range") .. " (a new array each call)",
          batch)
        r.check = check
        add_record(r)
      end)
      measure("argsort_" .. dtype, n, function()
        a = a or keys(n, dtype, SEEDS[dtype])
        if not cu.all(cu.equal(cu.take(a, cu.argsort(a)), cu.sort(a))):item() then
          error("cu.argsort: a[idx] is not sorted")
        end
        collectgarbage()
        local per, batch = batched(function() cu.argsort(a) end)
        add_record(summary("argsort_" .. dtype, n, "ms", per, "cu.argsort(a) (i64, 1-based), the keys of sort_" ..
          dtype .. " (a new array each call)", batch))
      end)
    end
    collectgarbage()
  end
  local m = cfg.fft_points
  measure("fft_c64", m, function()
    local x = keys(m, "f32", SEEDS.re):astype("c64") + keys(m, "f32", SEEDS.im):astype("c64") * cu.complex(0, 1)
    local check = fft_check(x, m)
    collectgarbage()
    local per, batch = batched(function() cu.fft.fft(x) end)
    local r = summary("fft_c64", m, "ms", per, "cu.fft.fft(x), x 1-D c64, real and imaginary parts uniform in " ..
      "[-1, 1) (out of place, a new array each call; the plan cached by the first call)", batch)
    r.check = check
    add_record(r)
  end)
  collectgarbage()
  -- The bandwidth rows: bytes moved at the least (read once, written once) over the time.
  local bytes = cfg.reduce_bytes
  local k = bytes // 4
  measure("cumsum", bytes, function()
    local a, out = cu.rand(k), cu.empty(k)
    local opts = { out = out }
    cu.cumsum(a, opts)
    local last, total = out[k], a:sum():item()
    if math.abs(last - total) > 1e-3 * total then
      error(string.format("cu.cumsum: last element %g, not the sum %g", last, total))
    end
    local per, batch = batched(function() cu.cumsum(a, opts) end)
    add_record(summary("cumsum", bytes, "GB/s", rates(per, 2 * bytes, 1e6),
      "cu.cumsum(a, {out = c}), f32 uniform in [0, 1) (2 x size moved)", batch))
    a:free(); out:free()
  end)
  for _, dtype in ipairs({ "f32", "bool" }) do
    local op = dtype == "f32" and "any" or "any_bool"
    measure(op, bytes, function()
      local a = cu.zeros(dtype == "f32" and k or bytes, dtype)
      if a:any():item() then error("cu.any: true for zeros") end
      local per, batch = batched(function() a:any() end)
      a[#a] = 1
      if not a:any():item() then error("cu.any: false with a nonzero last element") end
      a[#a] = 0
      add_record(summary(op, bytes, "GB/s", rates(per, bytes, 1e6),
        "a:any(), a " .. dtype .. " zeros (every element read; a new 0-d array each call)", batch))
      a:free()
    end)
  end
  measure("std", bytes, function()
    local a = cu.rand(k)
    local sd = a:std():item()
    if math.abs(sd - math.sqrt(1 / 12)) > 0.02 then error(string.format("cu.std: %g for uniform [0, 1)", sd)) end
    local per, batch = batched(function() a:std() end)
    add_record(summary("std", bytes, "GB/s", rates(per, bytes, 1e6),
      "a:std(), f32 uniform in [0, 1) (size moved; a new 0-d array each call)", batch))
    a:free()
  end)
  collectgarbage()
end

-- The sides' results compared (the records' `check`): a culua, CuPy or PyTorch result that differs
-- from the native one becomes an error record. Sorts: equal keys; fft: within fft_tolerance.
local function check_agreement(first)
  local native = {}
  for i = first, #records do
    local r = records[i]
    if r.impl == "native" and r.check then native[r.op .. "\0" .. tostring(r.size)] = r.check end
  end
  for i = first, #records do
    local r = records[i]
    local ref = r.impl ~= "native" and r.check and native[r.op .. "\0" .. tostring(r.size)]
    if ref then
      local tol = r.op:match("^fft") and fft_tolerance(r.size) or 0
      for j, v in ipairs(ref) do
        local got = r.check[j]
        if type(got) ~= "number" or math.abs(got - v) > tol then
          records[i] = { impl = r.impl, op = r.op, size = r.size, error = string.format(
            "the result differs from the native one: check value %d is %s, native %s", j, tostring(got), v) }
          break
        end
      end
    end
  end
end

-- The host group (docs/performance.md, "The host group"): culua's host backend in a child process
-- (scripts/bench/host.lua under --backend host, whatever backend the suite runs on), numpy
-- (scripts/bench/host_numpy.py, run by the first python3 that imports numpy) and the native loops
-- of culua-host-baseline. The three take turns at each operation and size (one process each), so
-- that the load of a shared machine, which drifts, weighs on the three alike.
local HOST_OPS = { "copy", "add", "sum", "transpose" }
local NUMPY_PYTHONS = { "python3", "/usr/bin/python3" }

local numpy_python -- false: none imports numpy
local function find_numpy_python()
  if numpy_python == nil then
    numpy_python = false
    for _, py in ipairs(NUMPY_PYTHONS) do
      if os.execute(py .. " -c 'import numpy' >/dev/null 2>&1") then
        numpy_python = py
        break
      end
    end
  end
  return numpy_python
end

function culua_groups.host()
  local first = #records + 1
  local native = bindir .. "/culua-host-baseline"
  if not exists(native) then
    native = nil
    add_record({ impl = "native_host", absent = "culua-host-baseline not found beside culua" })
  end
  local python = opt.peers and find_numpy_python()
  if not opt.peers then
    add_record({ impl = "numpy", absent = "not run (--no-peers)" })
  elseif not python then
    add_record({ impl = "numpy", absent = "no python3 that imports numpy (tried " ..
      table.concat(NUMPY_PYTHONS, ", ") .. ")" })
  end
  local turns = {}
  for _, op in ipairs(HOST_OPS) do
    for _, size in ipairs(cfg.host_sizes) do
      turns[#turns + 1] = { args = string.format("--ops %s --sizes %d", op, size), native = true,
        ops = { "host_" .. op }, size = size }
    end
  end
  for _, n in ipairs(cfg.host_matmul) do
    turns[#turns + 1] = { args = string.format("--ops matmul --matmul-sizes %d", n),
      ops = { "host_matmul_f32", "host_matmul_f64" }, size = n }
  end
  for _, turn in ipairs(turns) do
    local args = string.format("--reps %d %s", cfg.reps, turn.args)
    local before = #records
    run_producer(quote(culua_bin) .. " --backend host " .. quote(scriptdir .. "/host.lua") .. " " .. args)
    -- A child that died (or refused): an error for each operation it did not report.
    local got = {}
    for i = before + 1, #records do
      if records[i].impl == "culua" then got[records[i].op] = true end
    end
    for _, op in ipairs(turn.ops) do
      if not got[op] then
        add_record({ impl = "culua", op = op, size = turn.size,
          error = "scripts/bench/host.lua failed (see its errors)" })
      end
    end
    if native and turn.native then run_producer(quote(native) .. " " .. args) end
    if python then run_producer(python .. " " .. quote(scriptdir .. "/host_numpy.py") .. " " .. args) end
  end
  -- Every process sent its info record: one of each is kept.
  local seen, kept = {}, {}
  for i = first, #records do
    local r = records[i]
    if not (r.info and seen[r.impl]) then kept[#kept + 1] = r end
    if r.info then seen[r.impl] = true end
    records[i] = nil
  end
  table.move(kept, 1, #kept, first, records)
end

-- Start-up: whole processes, timed by culua-baseline's spawner where it exists (else by a shell).
local function process_ms(cmd, runs)
  if baseline and not runs then
    local f = io.popen(quote(baseline) .. " startup " .. cmd .. " 2>/dev/null")
    local out = f:read("a")
    f:close()
    local v = tonumber(out:match("startup_ms ([%d%.]+)"))
    return v and { v } or nil, "median of 21 runs (culua-baseline startup)"
  end
  local t = {}
  for r = 1, runs or cfg.startup_runs do
    local t0 = clock()
    if not os.execute("exec " .. cmd .. " >/dev/null 2>&1") then return nil end
    t[r] = (clock() - t0) * 1e3
  end
  return t, string.format("%d runs through /bin/sh", #t)
end

local FIRST = [[
local t0 = cu.clock{warn = false}
cu.sync()
local t1 = cu.clock{warn = false}
local a = cu.empty(1)
local t2 = cu.clock{warn = false}
a:fill(1)
cu.sync()
local t3 = cu.clock{warn = false}
print(string.format("%.6f %.6f", (t1 - t0) * 1e3, (t3 - t2) * 1e3))]]

function culua_groups.startup()
  local function spawned(impl, op, cmd, how, runs)
    local t, how2 = process_ms(cmd, runs)
    if t then
      local r = summary(op, nil, "ms", t, how .. ", " .. how2)
      r.impl = impl
      if #t == 1 then r.n = 21 end
      add_record(r)
    else
      add_record({ impl = impl, op = op, error = "failed: " .. cmd })
    end
  end
  spawned("culua", "startup", quote(culua_bin) .. " -e " .. quote("local x = 1"), "culua -e 'local x = 1'")
  if cu.backend == "cuda" then
    spawned("culua", "first_kernel_wall", quote(culua_bin) .. " -e " .. quote("cu.zeros(1); cu.sync()"),
      "culua -e 'cu.zeros(1); cu.sync()'")
    if baseline then
      spawned("native", "first_kernel_wall", quote(baseline) .. " first-kernel", "culua-baseline first-kernel")
    end
    -- Python processes take seconds: fewer runs.
    local runs = opt.quick and 2 or 5
    local function importable(module)
      return os.execute("python3 -c " .. quote("import " .. module) .. " >/dev/null 2>&1")
    end
    local python = {
      cupy = "import cupy; cupy.zeros(1); cupy.cuda.Device().synchronize()",
      torch = "import torch; torch.zeros(1, device='cuda'); torch.cuda.synchronize()",
    }
    for _, impl in ipairs({ "cupy", "torch" }) do
      if have_python and importable(impl) then
        spawned(impl, "startup", "python3 -c " .. quote("import " .. impl),
          "python3 -c 'import " .. impl .. "'", runs)
        spawned(impl, "first_kernel_wall", "python3 -c " .. quote(python[impl]), python[impl], runs)
      end
    end
  end
  -- In a fresh culua process: the context (the first cu.sync()) and the first kernel after it.
  local ctx, first = {}, {}
  for _ = 1, (opt.quick and 3 or 5) do
    local f = io.popen(quote(culua_bin) .. " -e " .. quote(FIRST) .. " 2>/dev/null")
    local out = f:read("a")
    f:close()
    local c, k = out:match("([%d%.]+) ([%d%.]+)")
    if c then
      ctx[#ctx + 1] = tonumber(c)
      first[#first + 1] = tonumber(k)
    end
  end
  if #ctx > 0 then
    add_record(summary("context", nil, "ms", ctx, "the first cu.sync() of a process"))
    add_record(summary("first_kernel", nil, "ms", first, "a:fill(1); cu.sync() after the context"))
  end
end

-- Targets -----------------------------------------------------------------------------------------

local function find(impl, op, size)
  for _, r in ipairs(records) do
    if r.impl == impl and r.op == op and r.size == size and r.median then return r end
  end
end

-- Each target: what, the culua record, the reference, and the test.
local function size_text(op, size)
  if not size then return "" end
  if op:match("^rk4") then return string.format("N = %d", size) end
  if op:match("matmul") then return string.format("%d³", size) end
  if op:match("^sort_") or op:match("^argsort_") or op:match("^fft_") then
    local log2 = math.floor(math.log(size, 2) + 0.5)
    local what = op:match("^fft_") and "points" or "keys"
    if 1 << log2 == size then return string.format("2^%d %s", log2, what) end
    return string.format("%d %s", size, what)
  end
  if size >= GiB and size % GiB == 0 then return string.format("%d GiB", size // GiB) end
  if size >= MiB and size % MiB == 0 then return string.format("%d MiB", size // MiB) end
  if size >= KiB and size % KiB == 0 then return string.format("%d KiB", size // KiB) end
  return string.format("%d B", size)
end

local function targets()
  local out = {}
  local function target(what, c, ref, ok, bound)
    out[#out + 1] = { what = what, culua = c, ref = ref, bound = bound,
      met = (c and ref) and ok(c.median, ref.median) }
  end
  -- The launch forms: the median of the rounds' ratios (culua and native measured in turns).
  for _, k in ipairs({ 0, 4, 8 }) do
    for _, form in ipairs({ "", "_call" }) do
      local c = find("culua", "launch_rtc" .. k .. form)
      local ref = find("native", "launch_rtc" .. k)
      out[#out + 1] = { what = string.format("launch from a Lua loop, %d arguments, %s", k,
          form == "" and "`kc(...)`" or "`k(cfg, ...)`"), culua = c, ref = ref,
        bound = "≤ 1.05× native (median of the rounds' ratios)", ratio = c and c.ratio,
        met = (c and c.ratio) and c.ratio <= 1.05 }
    end
  end
  local add1k = find("culua", "launch_add1k")
  target("`cu.add(a, b, {out = c})`, 1024 f32, per call", add1k, find("native", "launch_add1k"),
    function(v, r) return v <= 1.05 * r end, "≤ 1.05× native")
  for _, peer in ipairs({ "cupy", "torch" }) do
    target("`cu.add(a, b, {out = c})`, 1024 f32, against " .. (peer == "cupy" and "CuPy" or "PyTorch"),
      add1k, find(peer, "launch_add1k"), function(v, r) return v < r end, "faster")
  end
  local per_node = function(v, r) return v <= 1.05 * r end
  target("graph of 1000 empty run-time kernels, replayed, per node", find("culua", "graph_empty"),
    find("native", "graph_empty"), per_node, "≤ 1.05× native")
  local gadd = find("culua", "graph_add1k")
  target("graph of 1000 `cu.add(a, b, {out = c})`, 1024 f32, replayed, per node", gadd,
    find("native", "graph_add1k"), per_node, "≤ 1.05× native")
  for _, peer in ipairs({ "cupy", "torch" }) do
    target("graph of 1000 `cu.add`, per node, against " .. (peer == "cupy" and "CuPy's" or "PyTorch's") ..
      " graph", gadd, find(peer, "graph_add1k"), function(v, r) return v < r end, "faster")
  end
  for _, kind in ipairs({ "empty", "add1k" }) do
    target(string.format("capture + instantiate of 1000 %s", kind == "empty" and "empty kernels" or "`cu.add`"),
      find("culua", "graph_capture_" .. kind), find("native", "graph_capture_" .. kind),
      function(v, r) return v <= 1.5 * r end, "≤ 1.5× native")
  end
  target("`cu.add` on large arrays against `cudaMemcpy` device to device", find("culua", "add", cfg.large),
    find("native", "copy", cfg.large), function(v, r) return v >= 0.90 * r end, "≥ 90%")
  target("`a:sum()` on a large array against a native read-only kernel", find("culua", "sum", cfg.large),
    find("native", "sum", cfg.large), function(v, r) return v >= 0.90 * r end, "≥ 90%")
  -- Every row of the bandwidth group that has a native side: ≥ 80% from 1 MiB up, ≥ 90% from 16 MiB
  -- (the host's time a call below the device's; the quick run: its largest size).
  local BW_WHAT = { copy = "`cu.copy(dst, src)` against a native copy kernel",
    add = "`cu.add(a, b, {out = c})` against a native add kernel",
    sum = "full `a:sum()` against a native read-only kernel", cast = "cast f32 → bf16 against a native cast kernel" }
  for _, size in ipairs(cfg.bw) do
    if size >= MiB or (opt.quick and size == cfg.bw[#cfg.bw]) then
      local f = size >= 16 * MiB and 0.90 or 0.80
      for _, op in ipairs({ "copy", "add", "sum", "cast" }) do
        target(BW_WHAT[op] .. ", " .. size_text(op, size), find("culua", op, size), find("native", op, size),
          function(v, r) return v >= f * r end, string.format("≥ %d%%", math.floor(f * 100 + 0.5)))
      end
    end
  end
  for _, row in ipairs({ { "add_row", "`cu.add` of a row broadcast over a matrix", 0.80 },
                         { "add_transposed", "`cu.add(a, b:transpose())`", 0.85 },
                         { "add_f16", "`cu.add` f16", 0.90 }, { "add_bf16", "`cu.add` bf16", 0.90 } }) do
    local bound = row[3]
    target(row[2] .. " on large arrays against `cudaMemcpy` device to device", find("culua", row[1], cfg.large),
      find("native", "copy", cfg.large), function(v, r) return v >= bound * r end,
      string.format("≥ %d%%", math.floor(bound * 100 + 0.5)))
  end
  for _, dtype in ipairs({ "f32", "bf16", "f64" }) do
    for _, n in ipairs(cfg.matmul) do
      target(string.format("`cu.matmul` %s, %d³, against cuBLAS", dtype, n),
        find("culua", "matmul_" .. dtype, n), find("native", "matmul_" .. dtype, n),
        function(v, r) return v >= 0.97 * r end, "≥ 97%")
    end
  end
  -- The arrays group: sort and fft against the native call and CuPy; the scan and reductions
  -- against the device's copy bandwidth (cudaMemcpy device to device, measured by the arrays group
  -- of culua-baseline at the same size, else by its bandwidth group).
  for _, op in ipairs({ "sort_f32", "sort_i32", "argsort_f32", "argsort_i32", "fft_c64" }) do
    local size = op == "fft_c64" and cfg.fft_points or cfg.sort_keys
    local call = op:match("^fft") and "`cu.fft.fft`, c64" or string.format("`cu.%s`, %s", op:match("^(%a+)_"),
      op:match("_(%w+)$"))
    local c = find("culua", op, size)
    local bound = op == "argsort_f32" and 1.05 or 1.10
    target(call .. " against " .. (op:match("^fft") and "cuFFT" or "CUB") .. " called from C++", c,
      find("native", op, size), function(v, r) return v <= bound * r end, string.format("≤ %.2f× native", bound))
    if op == "fft_c64" then
      target(call .. " against CuPy", c, find("cupy", op, size), function(v, r) return v <= r end, "≤ 1.0× CuPy")
    else
      target(call .. " against CuPy", c, find("cupy", op, size), function(v, r) return v < r end, "faster")
    end
  end
  local copy_ref = find("native", "arrays_copy", cfg.reduce_bytes) or find("native", "copy", cfg.reduce_bytes)
  for _, row in ipairs({ { "cumsum", "`cu.cumsum(a, {out = c})` f32" }, { "any", "`a:any()` f32" },
                         { "any_bool", "`a:any()` bool" }, { "std", "`a:std()` f32" } }) do
    target(row[2] .. " against `cudaMemcpy` device to device", find("culua", row[1], cfg.reduce_bytes), copy_ref,
      function(v, r) return v >= 0.90 * r end, "≥ 90%")
  end
  -- What CUB's scan reaches at the same size (culua-baseline's cumsum: DeviceScan::InclusiveSum).
  target("`cu.cumsum(a, {out = c})` f32 against CUB called from C++", find("culua", "cumsum", cfg.reduce_bytes),
    find("native", "cumsum", cfg.reduce_bytes), function(v, r) return v >= 0.90 * r end, "≥ 90%")
  local big = cfg.transfer[#cfg.transfer]
  for _, op in ipairs({ "h2d_pinned", "d2h_pinned" }) do
    target(op:gsub("_", " ") .. ", largest size", find("culua", op, big), find("native", op, big),
      function(v, r) return v >= 0.95 * r end, "≥ 95%")
  end
  for _, op in ipairs({ "h2d_pageable", "d2h_pageable" }) do
    target(op:gsub("_", " ") .. ", largest size", find("culua", op, big), find("native", op, big),
      function(v, r) return v >= 2 * r end, "≥ 2× native")
  end
  for _, size in ipairs(cfg.alloc) do
    local c, ref = find("culua", "alloc", size), find("native", "alloc", size)
    out[#out + 1] = { what = "allocate + free, pool", culua = c, ref = ref, bound = "≤ 1.25× native",
      met = (c and ref) and c.median <= 1.25 * ref.median, size = size }
  end
  local fk = find("culua", "first_kernel")
  out[#out + 1] = { what = "first kernel after the context (`cu.empty(1)`, `a:fill(1)`, `cu.sync()`)",
    culua = fk, ref = find("native", "first_kernel"), bound = "≤ 2 ms", met = fk and fk.median <= 2 }
  local st = find("culua", "startup")
  out[#out + 1] = { what = "`culua -e 'local x = 1'`", culua = st, bound = "≤ 20 ms",
    met = st and st.median <= 20 }
  -- The profile group: activity tracing on and off in the same run.
  for _, name in ipairs({ "launch_rtc4", "launch_add1k" }) do
    target(string.format("activity tracing (`cu.profile`) on `%s`", name), find("culua", "profile_on_" .. name),
      find("culua", "profile_off_" .. name), function(v, r) return v <= 1.10 * r end, "≤ 1.10× off")
  end
  target("activity tracing on a large `cu.add` (about 200 µs)", find("culua", "profile_on_add_large"),
    find("culua", "profile_off_add_large"), function(v, r) return v <= 1.01 * r end, "≤ 1.01× off")
  -- The fuse group: the RK4 loop (N x N c64, delta read every step) against the native floors and
  -- the peers, in the same run.
  local n4 = cfg.rk4.n
  local E, F = find("culua", "rk4_E", n4), find("culua", "rk4_F", n4)
  target("RK4 loop, B (plain operations) against the native program making the same launches",
    find("culua", "rk4_B", n4), find("native", "rk4_ops", n4), function(v, r) return v <= 1.2 * r end,
    "≤ 1.2× native")
  target("RK4 loop, C (four `cu.elementwise` stages) against the native four stage kernels",
    find("culua", "rk4_C", n4), find("native", "rk4_stages", n4), function(v, r) return v <= 1.15 * r end,
    "≤ 1.15× native")
  target("RK4 loop, E (B's code in `cu.fuse`) against the native step kernel + sum", E,
    find("native", "rk4_kernel_sum", n4), function(v, r) return v <= 1.3 * r end, "≤ 1.3× native")
  target("RK4 loop, F (`cu.graph(fn, {fuse = true})`) against the native fused graph", F,
    find("native", "rk4_graph", n4), function(v, r) return v <= 1.1 * r end, "≤ 1.1× native")
  target("RK4 loop, E against `cupy.fuse`", E, find("cupy", "rk4_cupy_fuse", n4),
    function(v, r) return 3 * v <= r end, "3× faster")
  target("RK4 loop, E against a PyTorch CUDA graph", E, find("torch", "rk4_torch_graph", n4),
    function(v, r) return 5 * v <= r end, "5× faster")
  target("RK4 loop, E against JAX `jit`", E, find("jax", "rk4_jax_jit", n4), function(v, r) return v < r end, "faster")
  target("RK4 loop, G (`cu.fuse` with replay = true) against the native fused graph",
    find("culua", "rk4_G", n4), find("native", "rk4_graph", n4), function(v, r) return v <= 1.1 * r end,
    "≤ 1.1× native")
  local c_cold = find("culua", "rk4_C_first_call_cold", n4)
  out[#out + 1] = { what = "RK4 loop, C's first step, empty kernel cache (two complex stage kernels compiled)",
    culua = c_cold, bound = "≤ 200 ms (100 ms a stage)", met = c_cold and c_cold.median <= 200 }
  local kernels = find("culua", "rk4_E_kernels_per_step", n4)
  out[#out + 1] = { what = "RK4 loop, E's kernels a step (ledger)", culua = kernels, bound = "≤ 2",
    met = kernels and kernels.median <= 2 }
  local cold, disk = find("culua", "rk4_E_first_call_cold", n4), find("culua", "rk4_E_first_call_disk", n4)
  out[#out + 1] = { what = "RK4 loop, E's first call, empty kernel cache (compile included)", culua = cold,
    bound = "≤ 50 ms", met = cold and cold.median <= 50 }
  local warm_step = E and E.median / cfg.rk4.steps
  out[#out + 1] = { what = "RK4 loop, E's first call in a second process (disk cache hit) beyond a warm step",
    culua = disk, ref = E and { median = warm_step, unit = "ms" }, bound = "≤ 1 ms more",
    met = (disk and warm_step) and disk.median - warm_step <= 1 }
  local fd, nd = find("culua", "rk4_final_delta", n4), find("native", "rk4_kernel_sum", n4)
  if fd and nd and fd.delta and nd.delta then
    local dr, di = fd.delta[1] - nd.delta[1], fd.delta[2] - nd.delta[2]
    local rel = math.sqrt(dr * dr + di * di) / math.sqrt(nd.delta[1] ^ 2 + nd.delta[2] ^ 2)
    out[#out + 1] = { what = string.format("RK4 loop, culua's last delta against the native program's (relative %.2e)",
      rel), culua = fd, bound = "≤ 1e-5 relative", met = rel <= 1e-5 }
  end
  -- The host group: culua's host backend against numpy and the native loops, same machine.
  local at_least = function(f) return function(v, r) return v >= f * r end end
  local hs = cfg.host_sizes
  local largest = hs[#hs]
  local HOST_WHAT = { add = "`cu.add(a, b, {out = c})`", sum = "`a:sum()`",
    transpose = "transposed copy `cu.copy(dst, a:transpose())`", copy = "`cu.copy(dst, src)`" }
  for _, op in ipairs({ "add", "sum", "transpose", "copy" }) do
    target(string.format("host: %s, largest size, against numpy", HOST_WHAT[op]),
      find("culua", "host_" .. op, largest), find("numpy", "host_" .. op, largest), at_least(1.0), "≥ numpy")
  end
  for _, op in ipairs({ "add", "sum", "copy", "transpose" }) do
    target(string.format("host: %s, largest size, against the native loop", HOST_WHAT[op]),
      find("culua", "host_" .. op, largest), find("native_host", "host_" .. op, largest), at_least(0.70),
      "≥ 70% native")
  end
  if largest ~= MiB then
    for _, op in ipairs({ "copy", "transpose" }) do
      target(string.format("host: %s, 1 MiB (the quickstart's size), against numpy", HOST_WHAT[op]),
        find("culua", "host_" .. op, MiB), find("numpy", "host_" .. op, MiB), at_least(1.0), "≥ numpy")
    end
  end
  for _, dtype in ipairs({ "f32", "f64" }) do
    for _, n in ipairs(cfg.host_matmul) do
      target(string.format("host: `cu.matmul` %s, %d³, against numpy", dtype, n),
        find("culua", "host_matmul_" .. dtype, n), find("numpy", "host_matmul_" .. dtype, n), at_least(0.95),
        "≥ 0.95× numpy")
    end
  end
  return out
end

-- Output ------------------------------------------------------------------------------------------

local function fig(r, spread)
  if not r then return "—" end
  if r.absent then return "absent" end
  if r.error then return "failed" end
  local v, u = r.median, r.unit
  local function f(x)
    if u == "us" then return string.format("%.2f", x) end
    if u == "ms" then return string.format(x >= 10 and "%.1f" or "%.3g", x) end
    if u == "TFLOP/s" or u == "GFLOP/s" then return string.format(x >= 10 and "%.1f" or "%.3g", x) end
    return x >= 100 and string.format("%.0f", x) or string.format("%.2f", x)
  end
  local unit = u == "us" and "µs" or u
  local text = f(v) .. " " .. unit
  if spread and r.n and r.n > 1 then text = text .. string.format(" (%s–%s)", f(r.min), f(r.max)) end
  return text
end

local function ratio(c, r)
  if not (c and r and c.median and r.median and r.median > 0) then return "" end
  return string.format("%.3f", c.median / r.median)
end

local IMPLS = { "culua", "native", "cupy", "torch" }
local NAMES = { culua = "culua", native = "native C++", cupy = "CuPy", torch = "PyTorch", numpy = "numpy",
  native_host = "native loop", jax = "JAX" }

local function lookup(impl, op, size)
  local found
  for _, r in ipairs(records) do
    if r.impl == impl and (r.op == op or r.op == nil) and (r.size == size or r.size == nil) then
      if r.op == op and r.size == size then return r end
      if r.absent and not found then found = r end
    end
  end
  return found
end

local function machine()
  local m = { culua = cu.version, backend = cu.backend, date = os.date("!%Y-%m-%dT%H:%M:%SZ"),
    quick = opt.quick, reps = cfg.reps, launches = cfg.launches }
  local ok, devs = pcall(cu.devices)
  if ok then m.device = devs[cu.device() + 1] end
  local f = io.open("/proc/cpuinfo")
  if f then
    local text = f:read("a")
    f:close()
    m.cpu = text:match("model name%s*:%s*([^\n]+)")
    local n = 0
    for _ in text:gmatch("\nprocessor%s*:") do n = n + 1 end
    m.cpu_threads = n + (text:match("^processor") and 1 or 0)
  end
  local p = io.popen("uname -sr 2>/dev/null")
  if p then
    m.os = (p:read("a") or ""):gsub("%s+$", "")
    p:close()
  end
  for _, r in ipairs(records) do
    if r.info then m[r.impl] = r.info end
  end
  return m
end

local function write(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

-- The host group's own table: culua's host backend, numpy, the native loops.
local function host_markdown(m, p)
  local order, seen = {}, {}
  for _, r in ipairs(records) do
    if r.op and r.op:match("^host_") then
      local key = r.op .. "\0" .. tostring(r.size)
      if not seen[key] then
        seen[key] = true
        order[#order + 1] = { op = r.op, size = r.size }
      end
    end
  end
  if #order == 0 then return end
  local rank = { host_copy = 1, host_add = 2, host_sum = 3, host_transpose = 4, host_matmul_f32 = 5,
    host_matmul_f64 = 6 }
  table.sort(order, function(x, y)
    local rx, ry = rank[x.op] or 99, rank[y.op] or 99
    if rx ~= ry then return rx < ry end
    if x.op ~= y.op then return x.op < y.op end
    return (x.size or 0) < (y.size or 0)
  end)
  local function absent(impl)
    for _, r in ipairs(records) do
      if r.impl == impl and r.absent and not r.op then return r.absent end
    end
  end
  p("")
  p("## Host backend")
  p("")
  local function threads(k) return string.format("%s thread%s", k, k == 1 and "" or "s") end
  local ch, np, nh = m.culua_host, m.numpy, m.native_host
  local culua_text = ch and ch.device or "?"
  if ch and ch.CULUA_HOST_THREADS then culua_text = culua_text .. ", CULUA_HOST_THREADS=" .. ch.CULUA_HOST_THREADS end
  local numpy_text = "absent (" .. (absent("numpy") or "not run") .. ")"
  if np then
    local blas = type(np.blas) == "table" and np.blas or {}
    local blas_text = blas.openblas and (blas.openblas.config .. ", " .. threads(blas.openblas.threads))
      or table.concat(blas.loaded or { "?" }, ", ")
    numpy_text = string.format("%s (%s; BLAS: %s)", np.numpy, np.executable or "?", blas_text)
  end
  local native_text = nh and threads(nh.threads) or ("absent (" .. (absent("native_host") or "not run") .. ")")
  p("culua: %s. numpy: %s. Native loops (culua-host-baseline): %s.", culua_text, numpy_text, native_text)
  p("Host clock around batches of about 2 ms, the stream synchronized; culua ÷ the other: higher is better.")
  p("")
  p("| operation | size | culua | numpy | native loop | ÷ numpy | ÷ native |")
  p("|---|---|---|---|---|---|---|")
  for _, k in ipairs(order) do
    local c, n, h = lookup("culua", k.op, k.size), lookup("numpy", k.op, k.size), lookup("native_host", k.op, k.size)
    p("| `%s` | %s | %s | %s | %s | %s | %s |", k.op, size_text(k.op, k.size), fig(c, true), fig(n, true),
      k.op:match("matmul") and "" or fig(h, true), ratio(c, n), ratio(c, h))
  end
end

local function markdown(m, tgs)
  local out = {}
  local function p(...) out[#out + 1] = string.format(...) end
  local dev = m.device and m.device.name or "?"
  p("# culua performance suite")
  p("")
  p("%s, %s backend, culua %s, %s%s.", dev, m.backend, m.culua, m.date, m.quick and " (quick mode)" or "")
  local peers = {}
  for _, impl in ipairs({ "cupy", "torch", "jax" }) do
    local absent
    for _, r in ipairs(records) do
      if r.impl == impl and r.absent and not r.op then absent = r.absent end
    end
    if m[impl] then
      peers[#peers + 1] = string.format("%s %s", NAMES[impl], m[impl][impl] or "")
    elseif absent then
      peers[#peers + 1] = string.format("%s absent (%s)", NAMES[impl], absent)
    else
      peers[#peers + 1] = string.format("%s not run", NAMES[impl])
    end
  end
  p("Peers: %s. Figures: median (min–max) of %d repetitions unless said otherwise.", table.concat(peers, "; "),
    cfg.reps)
  p("")
  p("## Targets")
  p("")
  p("| target | size | culua | reference | ratio | bound | |")
  p("|---|---|---|---|---|---|---|")
  local met, missed, unknown = 0, 0, 0
  for _, t in ipairs(tgs) do
    local verdict = t.met == nil and "no figure" or (t.met and "met" or "**missed**")
    if t.met == true then met = met + 1 elseif t.met == false then missed = missed + 1 else unknown = unknown + 1 end
    local size = t.size or (t.culua and t.culua.size)
    p("| %s | %s | %s | %s | %s | %s | %s |", t.what, size_text(t.culua and t.culua.op or "", size),
      fig(t.culua, true), fig(t.ref, true), t.ratio and string.format("%.3f", t.ratio) or ratio(t.culua, t.ref),
      t.bound, verdict)
  end
  p("")
  p("%d met, %d missed, %d without a figure.", met, missed, unknown)
  local seen, order = {}, {}
  for _, r in ipairs(records) do
    if r.op and not r.info and not r.op:match("^host_") then
      local key = r.op .. "\0" .. tostring(r.size)
      if not seen[key] then
        seen[key] = true
        order[#order + 1] = { op = r.op, size = r.size }
      end
    end
  end
  if #order > 0 then
    p("")
    p("## Every figure")
    p("")
    p("Ratios are culua ÷ the other (a time: lower is better for culua; a rate: higher is).")
    p("")
    p("| operation | size | culua | native C++ | CuPy | PyTorch | ÷ native | ÷ CuPy | ÷ PyTorch |")
    p("|---|---|---|---|---|---|---|---|---|")
  end
  for _, k in ipairs(order) do
    local row = {}
    for i, impl in ipairs(IMPLS) do row[i] = lookup(impl, k.op, k.size) end
    p("| `%s` | %s | %s | %s | %s | %s | %s | %s | %s |", k.op, size_text(k.op, k.size), fig(row[1]),
      fig(row[2]), fig(row[3]), fig(row[4]), ratio(row[1], row[2]), ratio(row[1], row[3]),
      ratio(row[1], row[4]))
  end
  host_markdown(m, p)
  local failures = {}
  for _, r in ipairs(records) do
    if r.error then failures[#failures + 1] = string.format("- %s `%s` %s: %s", NAMES[r.impl] or r.impl,
      r.op or "", size_text(r.op or "", r.size), r.error) end
  end
  if #failures > 0 then
    p("")
    p("## Failed measurements")
    p("")
    for _, f in ipairs(failures) do p("%s", f) end
  end
  return table.concat(out, "\n") .. "\n", met, missed
end

local CURVES = {
  { ops = { "copy", "add", "sum", "cast" }, file = "bandwidth", ylabel = "GB/s",
    title = "bandwidth against array size" },
  { ops = { "h2d_pinned", "d2h_pinned", "h2d_pageable", "d2h_pageable" }, file = "transfers", ylabel = "GB/s",
    title = "host <-> device" },
  { ops = { "alloc" }, file = "alloc", ylabel = "µs per allocate + free", title = "pool allocation" },
  { ops = { "matmul_f32", "matmul_bf16", "matmul_f64" }, file = "matmul", ylabel = "TFLOP/s", title = "matmul" },
  { ops = { "host_copy", "host_add", "host_sum", "host_transpose" }, file = "host", ylabel = "GB/s",
    title = "host backend, bandwidth against array size" },
  { ops = { "host_matmul_f32", "host_matmul_f64" }, file = "host_matmul", ylabel = "GFLOP/s",
    title = "host backend, matmul" },
}

local function plots(recs, dir)
  local ok, why = pcall(function()
    for _, c in ipairs(CURVES) do
      for _, op in ipairs(c.ops) do
        local rows = {}
        for _, r in ipairs(recs) do
          if r.op == op and r.median and r.size then
            rows[#rows + 1] = { size = r.op:match("matmul") and r.size or r.size / 1024,
              value = r.median, impl = NAMES[r.impl] or r.impl }
          end
        end
        if #rows > 0 then
          cu.plot(rows, { x = "size", y = "value", series = "impl", file = dir .. "/" .. op .. ".png",
            logx = true, logy = c.ylabel == "GB/s", title = op .. ": " .. c.title,
            xlabel = op:match("matmul") and "N" or "KiB", ylabel = c.ylabel })
        end
      end
    end
  end)
  if not ok then io.stderr:write("suite.lua: no plots: ", tostring(why), "\n") end
  return ok
end

-- Main --------------------------------------------------------------------------------------------

if opt.plot_from then
  local f = assert(io.open(opt.plot_from, "rb"))
  local data = assert(cu.json.decode(f:read("a")))
  f:close()
  local dir = opt.out ~= "bench-results" and opt.out or (opt.plot_from:match("^(.*)/[^/]*$") or ".")
  if plots(data.records, dir) then print("plots written to " .. dir) end
  return
end

os.execute("mkdir -p " .. quote(opt.out))
local dev = cu.devices()[cu.device() + 1]
print(string.format("culua %s performance suite on %s (%s backend)%s", cu.version, dev.name, cu.backend,
  opt.quick and ", quick mode" or ""))
if cu.backend == "cuda" and not baseline then
  print("culua-baseline was not found beside culua: no native figures")
end

for _, g in ipairs(GROUPS) do
  if selected[g] then
    local t0 = clock()
    io.stderr:write(string.format("suite.lua: %s ...\n", g))
    local rounds = cfg.rounds[g] or 1
    local first = #records + 1
    local starts = {}
    for r = 1, rounds do
      starts[r] = #records + 1
      -- The order alternates (culua first in odd rounds, the others first in even ones), so that a
      -- drift within a round favours neither side.
      if r % 2 == 0 and g ~= "startup" then run_others(g) end
      culua_groups[g]()
      if r % 2 == 1 and g ~= "startup" then run_others(g) end
    end
    if g == "startup" then run_others(g) end
    local ratios = round_ratios(starts, #records)
    -- Several rounds (culua and the others taking turns, so that drift of the machine's speed
    -- affects all alike): one record per implementation and operation.
    if rounds > 1 then
      local merged, order = {}, {}
      for i = first, #records do
        local r = records[i]
        local key = string.format("%s\0%s\0%s", r.impl, r.op, tostring(r.size))
        if r.median and merged[key] then
          local m = merged[key]
          m.medians[#m.medians + 1] = r.median
          m.r.min = math.min(m.r.min, r.min)
          m.r.max = math.max(m.r.max, r.max)
          m.r.n = m.r.n + r.n
        elseif not merged[key] then
          merged[key] = { r = r, medians = { r.median } }
          order[#order + 1] = key
        end
      end
      for i = #records, first, -1 do records[i] = nil end
      for _, key in ipairs(order) do
        local m = merged[key]
        if m.r.median then
          m.r.median = median(m.medians)
          m.r.rounds = #m.medians
        end
        add_record(m.r)
      end
    end
    if g == "arrays" then check_agreement(first) end
    for i = first, #records do
      local r = records[i]
      local per_round = r.impl == "culua" and r.median and ratios[r.op]
      if per_round then
        r.round_ratios = per_round
        r.ratio = median(per_round)
      end
    end
    io.stderr:write(string.format("suite.lua: %s done in %.1f s\n", g, clock() - t0))
  end
end

local m = machine()
local tgs = targets()
local md = markdown(m, tgs)
local target_list = {}
for _, t in ipairs(tgs) do
  target_list[#target_list + 1] = { what = t.what, bound = t.bound, met = t.met == nil and cu.json.null or t.met,
    culua = t.culua and t.culua.median or cu.json.null, reference = t.ref and t.ref.median or cu.json.null,
    ratio = t.ratio or cu.json.null,
    size = t.size or (t.culua and t.culua.size) or cu.json.null }
end
write(opt.out .. "/suite.md", md)
write(opt.out .. "/suite.json", cu.json.encode({ machine = m, records = records, targets = target_list,
  config = { reps = cfg.reps, launches = cfg.launches, bw_sizes = cfg.bw, transfer_sizes = cfg.transfer,
    alloc_sizes = cfg.alloc, matmul_sizes = cfg.matmul, host_sizes = cfg.host_sizes,
    host_matmul_sizes = cfg.host_matmul, sort_keys = cfg.sort_keys, fft_points = cfg.fft_points,
    reduce_bytes = cfg.reduce_bytes, quick = opt.quick } }, { indent = 1 }))
local plotted = cu.plot and plots(records, opt.out)
print("")
print(md)
print(string.format("written: %s/suite.md, %s/suite.json%s", opt.out, opt.out,
  plotted and ", plots" or " (no plots: gnuplot missing; draw them with --plot-from)"))
