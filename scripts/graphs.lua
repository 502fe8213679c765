-- What a graph saves: the cost per node of a graph launch against eager launches.
--
-- A chain of n small operations is queued two ways: eagerly, one launch after another from Lua,
-- and as a graph captured once (cu.graph) and replayed (g:replay). Each operation does next to
-- nothing, so what is timed is the cost of issuing it: Lua, culua's argument checks and the
-- launch itself for the eager chain; the graph's launch and the device's (or the worker's) walk
-- through the nodes for the graph. Both are timed with events on the stream (cu.time), so the
-- figures are what the stream saw, with the eager chain's issue rate included (the device waits
-- for launches that have not been issued yet).
--
-- On CUDA the operation is an empty run-time compiled kernel (grid 1, block 1); on the host
-- backend (no run-time compiled CUDA) it is cu.add(acc, one, {out = acc}) on 16-element arrays,
-- which also lets the script check that every node ran.
--
--   culua scripts/graphs.lua [counts=1,10,100,1000] [launches=L] [samples=S] [op=empty|add]
--                            [plot=FILE.png|.svg] [--quick] [--results]
-- launches: operations per timed sample (a chain of n is repeated L/n times); samples: timed
-- samples per figure (the median is reported); plot: the two curves through cu.plot (gnuplot).
-- --quick: fewer and shorter samples (for the tests); --results: machine-readable `RESULT k=v`.

local script = require "cu.script"
local opt, flags = script.args(arg, "key=value, --quick or --results")
local results = script.results()
local function int(key, default)
  if opt[key] == nil then return default end
  return assert(math.tointeger(tonumber(opt[key])), "bad " .. key .. "=" .. opt[key])
end
local function list(s)
  local t = {}
  for x in s:gmatch("[^,]+") do t[#t + 1] = assert(math.tointeger(tonumber(x)), "bad count " .. x) end
  return t
end

local gpu = cu.backend == "cuda"
local counts = opt.counts and list(opt.counts) or { 1, 10, 100, 1000 }
-- Operations per sample: enough that a sample lasts milliseconds (events resolve about 1 us).
local launches = int("launches", flags.quick and (gpu and 2000 or 300) or (gpu and 20000 or 3000))
local samples = int("samples", flags.quick and 3 or 7)
local op_name = opt.op or (gpu and "empty" or "add")
assert(op_name == "empty" or op_name == "add", "op= must be empty or add")
assert(gpu or op_name == "add", "op=empty is a run-time compiled CUDA kernel: it needs the cuda backend")
local device = cu.devices()[cu.device() + 1]

local s = cu.stream()
local _ <close> = cu.use_stream(s)

-- The operation, called as a script would call it (the configured kernel is called directly).
local op, what
local acc, one = cu.zeros(16, "f32"), cu.ones(16, "f32")
if op_name == "empty" then
  local m = cu.compile([[extern "C" __global__ void empty() {}]], { name = "empty.cu" })
  op = m.empty:configure({ grid = 1, block = 1, stream = s })
  what = "an empty run-time compiled kernel (grid 1, block 1)"
else
  op = function() cu.add(acc, one, { out = acc }) end
  what = "cu.add(acc, one, {out = acc}) on 16 f32"
end
print(string.format("graphs: chains of %s, eager against a graph, on the %s backend (%s)", what, cu.backend,
  device.name))
print(string.format("%d operations per sample, median of %d samples", launches, samples))
results:add("op", op_name)
results:add("counts", table.concat(counts, ","))

local function median(t)
  table.sort(t)
  local m = #t
  return m % 2 == 1 and t[(m + 1) // 2] or (t[m // 2] + t[m // 2 + 1]) / 2
end

-- Microseconds per operation of fn(reps), which queues reps * n operations: the median of the
-- samples, after one untimed call (first launches, pool growth, graph upload).
local function per_op_us(fn, reps, n)
  fn(reps)
  s:sync()
  local t = {}
  for i = 1, samples do t[i] = cu.time(function() fn(reps) end, { stream = s }) * 1e3 / (reps * n) end
  return median(t)
end

local rows = {}
for _, n in ipairs(counts) do
  assert(n >= 1, "counts must be >= 1")
  local reps = math.max(1, (launches + n - 1) // n)
  local eager = per_op_us(function(r) for _ = 1, r * n do op() end end, reps, n)
  local g = cu.graph(function() for _ = 1, n do op() end end, { stream = s, name = n .. "-node chain" })
  local node = per_op_us(function(r) g:replay(r, s) end, reps, n)
  -- What one launch of the graph queued, from the ledger; for cu.add, the count it added.
  acc:fill(0)
  local l = cu.ledger(function() g:replay(2, s) end)
  local kernels = l.launches / l.graph_launches
  local added = op_name == "add" and acc[1] or nil -- synchronizes
  if added then assert(added == 2 * n, string.format("%d nodes added %s in two launches", n, added)) end
  rows[#rows + 1] = { n = n, nodes = g.nodes, eager = eager, node = node, launch = node * n,
    capture = g.capture_ms, instantiate = g.instantiate_ms, kernels = kernels }
  g:free()
  results:add("nodes_" .. n, rows[#rows].nodes)
  results:add("kernels_per_launch_" .. n, string.format("%g", kernels))
  if added then results:add("added_" .. n, string.format("%g", added)) end
end

print(string.format("\n%7s %7s %18s %16s %18s %10s %12s %14s", "chain", "nodes", "eager, us/launch",
  "graph, us/node", "graph, us/launch", "speed-up", "capture", "instantiate"))
for _, r in ipairs(rows) do
  print(string.format("%7d %7d %18.3f %16.3f %18.3f %9.1fx %9.3f ms %11.3f ms", r.n, r.nodes, r.eager, r.node,
    r.launch, r.eager / r.node, r.capture, r.instantiate))
  results:add("eager_us_" .. r.n, string.format("%.6f", r.eager))
  results:add("graph_us_per_node_" .. r.n, string.format("%.6f", r.node))
  results:add("graph_us_per_launch_" .. r.n, string.format("%.6f", r.launch))
  results:add("speedup_" .. r.n, string.format("%.4f", r.eager / r.node))
  results:add("capture_ms_" .. r.n, string.format("%.6f", r.capture))
  results:add("instantiate_ms_" .. r.n, string.format("%.6f", r.instantiate))
end

local first, last = rows[1], rows[#rows]
print(string.format("\nAn eager launch costs %.2f us here whatever the chain; a replayed graph costs %.2f us per"
  .. " launch with %d node%s and %.3f us per node with %d (%.1fx less than eager).", last.eager, first.launch,
  first.n, first.n == 1 and "" or "s", last.node, last.n, last.eager / last.node))
print("A graph pays its launch once for all its nodes, so its cost per node falls with the chain's")
print("length until the nodes run at the device's own pace. Capture and instantiation are paid once")
print("(a few launches' worth of saving pays them back). Work that waits for the host between")
print("operations (a value read back, a decision in Lua) splits the chain, and each piece pays a launch.")
if not gpu then
  print("(On the host backend the stream's worker thread replays the recorded queue: a node skips the")
  print("Lua call, the argument checks and the queue hand-off that an eager cu.add pays.)")
end

if opt.plot then
  local pts = {}
  for _, r in ipairs(rows) do
    pts[#pts + 1] = { nodes = r.n, us = r.eager, how = "eager, per launch" }
    pts[#pts + 1] = { nodes = r.n, us = r.node, how = "graph, per node" }
  end
  local ok, why = pcall(cu.plot, pts, { x = "nodes", y = "us", series = "how", file = opt.plot, logx = true,
    logy = true, title = string.format("%s on %s", op_name == "empty" and "empty kernel" or "cu.add",
      device.name), xlabel = "nodes in the chain", ylabel = "µs per operation" })
  if ok then
    print("Plot written to " .. opt.plot)
    results:add("plot", opt.plot)
  else
    io.stderr:write("graphs.lua: no plot: ", tostring(why), "\n")
  end
end
if flags.results then results:print() end
