-- Classic mistake 1: timing an asynchronous launch loop with a host clock.
--
-- Two n x n f32 matrices go to the device; a loop queues N matrix products on one stream; the
-- result comes back. Each N is timed three ways at once:
--   * a host clock around the loop, with no synchronization (the mistake: it measures queueing);
--   * a host clock around the copy back (synchronous: it waits for the whole loop, so the cost of
--     the loop shows up here);
--   * events recorded on the stream before and after the loop (what the device did).
-- On CUDA the product is a run-time compiled shared-memory tiled kernel (checked against
-- cu.matmul); on the host backend it is cu.matmul (run-time CUDA kernels need a GPU).
-- The same loop of N products is then captured once as a graph (cu.graph) and launched: one
-- launch queues all N, so the host clock sees even less, and the events show what the device
-- gains when the launches are no longer issued one by one.
--
--   culua scripts/async_timing.lua [n=512] [counts=1,10,100] [--quick] [--results]
-- (the host backend defaults to n=256 and N up to 100: a CPU is some 100x slower than a GPU)
--
-- --quick: small sizes (for the tests); --results: also print machine-readable `RESULT k=v` lines.

local script = require "cu.script"
local opt, flags = script.args(arg, "key=value, --quick or --results")
local results = script.results()
local function list(s)
  local t = {}
  for x in s:gmatch("[^,]+") do t[#t + 1] = assert(math.tointeger(tonumber(x)), "bad count " .. x) end
  return t
end

local gpu = cu.backend == "cuda"
local n = script.int(opt, "n", gpu and 512 or (flags.quick and 128 or 256))
local counts = opt.counts and list(opt.counts)
  or (flags.quick and (gpu and { 1, 10, 100, 300 } or { 1, 4, 16, 64 }))
  or (gpu and { 1, 10, 100, 300, 1000, 3000 } or { 1, 3, 10, 30, 100 })
local device = cu.devices()[cu.device() + 1]

print(string.format("async_timing: %dx%d f32 matrix products on the %s backend (%s)", n, n,
  cu.backend, device.name))

-- Set-up (not timed): the matrices go to the device once, on the stream all the work uses.
local s = cu.stream()
local _ <close> = cu.use_stream(s)
local ha = cu.host.rand({ n, n }, { seed = 1, pinned = true })
local hb = cu.host.rand({ n, n }, { seed = 2, pinned = true })
local a, b, c = cu.empty({ n, n }), cu.empty({ n, n }), cu.empty({ n, n })
cu.copy(a, ha, { stream = s })
cu.copy(b, hb, { stream = s })
local hc = cu.host.empty({ n, n }) -- pageable, as a naive script would have it

local product, kernel_name
if gpu then
  local TILE = 16
  local m = cu.compile(string.format([[
#define TILE %d
// C = A @ B, row-major, A is M x K, B is K x N: each block computes a TILE x TILE tile of C,
// staging tiles of A and B through shared memory.
extern "C" __global__ void matmul_tiled(const float* __restrict__ A, const float* __restrict__ B,
                                        float* __restrict__ C, int M, int N, int K) {
  __shared__ float As[TILE][TILE], Bs[TILE][TILE + 1];
  int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
  float acc = 0.0f;
  for (int t = 0; t < K; t += TILE) {
    As[threadIdx.y][threadIdx.x] = (row < M && t + threadIdx.x < K) ? A[row * K + t + threadIdx.x] : 0.0f;
    Bs[threadIdx.y][threadIdx.x] = (col < N && t + threadIdx.y < K) ? B[(t + threadIdx.y) * N + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  if (row < M && col < N) C[row * N + col] = acc;
}
]], TILE), { name = "matmul_tiled.cu" })
  local kc = m.matmul_tiled:configure({ grid = { (n + TILE - 1) // TILE, (n + TILE - 1) // TILE },
    block = { TILE, TILE }, stream = s })
  product = function() kc(a, b, c, n, n, n) end
  kernel_name = string.format("run-time compiled %dx%d shared-memory tiled kernel (compile: %s, %.1f ms)",
    TILE, TILE, m.info.cache, m.info.elapsed_ms or m.info.compile_ms or 0)
  -- Check the kernel against cuBLAS (f32, no TF32).
  product()
  local ref = cu.matmul(a, b, { stream = s })
  local err = cu.abs(c - ref):max():item() / cu.abs(ref):max():item()
  print(string.format("tiled kernel checked against cu.matmul: max relative difference %.2e", err))
  assert(err < 1e-4, "the tiled kernel disagrees with cu.matmul")
  results:add("check_rel_err", string.format("%.3e", err))
else
  product = function() cu.matmul(a, b, { out = c, stream = s }) end
  kernel_name = "cu.matmul (OpenBLAS on the stream's worker thread: the host backend cannot run "
    .. "run-time compiled CUDA)"
end
print("product: " .. kernel_name)
results:add("n", n)

-- Warm-up: first launches (module loading, BLAS set-up) are not what this experiment is about.
for _ = 1, 3 do product() end
cu.copy(hc, c)
s:sync()

print(string.format("\n%7s %16s %16s %16s %14s %10s", "N", "loop, host clock", "copy back, host",
  "loop, events", "per product", "host/event"))
local rows = {}
local ledger_loop, ledger_copy
local graph_c -- what the last timed graph launch computed (checked with the loop's result)
for _, N in ipairs(counts) do
  s:sync()
  local l0 = cu.ledger()
  local t0 = cu.clock() -- nothing queued yet (an event recorded first would count as queued work)
  local e0 = cu.event():record(s)
  for _ = 1, N do product() end
  local t1 = cu.clock() -- the mistake: the products are queued, not done (culua warns about it)
  local e1 = cu.event():record(s)
  local l1 = cu.ledger()
  cu.copy(hc, c) -- pageable and synchronous: waits for every queued product, then copies
  local t2 = cu.clock()
  local l2 = cu.ledger()
  local row = { N = N, loop_host = (t1 - t0) * 1e3, copy_host = (t2 - t1) * 1e3, loop_event = e0:elapsed(e1) }
  rows[#rows + 1] = row
  ledger_loop, ledger_copy = l1 - l0, l2 - l1
  print(string.format("%7d %13.3f ms %13.3f ms %13.3f ms %11.3f ms %9.2fx", N, row.loop_host,
    row.copy_host, row.loop_event, row.loop_event / N, row.loop_host / row.loop_event))
  results:add(string.format("N%d", N), string.format("loop_host_ms:%.6f,copy_host_ms:%.6f,loop_event_ms:%.6f",
    row.loop_host, row.copy_host, row.loop_event))

  -- The same loop as a graph: captured once (nothing runs then), launched once untimed (on CUDA
  -- the first launch uploads the graph), then one launch timed by events and by a host clock.
  -- c is cleared first so that the check below sees what the timed launch computed.
  local g = cu.graph(function() for _ = 1, N do product() end end, { stream = s, name = N .. " products" })
  g:launch(s)
  c:fill(0, { stream = s })
  s:sync()
  local g0 = cu.clock()
  local ge0 = cu.event():record(s)
  g:launch(s)
  local g1 = cu.clock({ warn = false }) -- the same mistake as above, made knowingly this time
  local ge1 = cu.event():record(s)
  ge1:sync()
  row.graph = { nodes = g.nodes, capture_ms = g.capture_ms, instantiate_ms = g.instantiate_ms,
    launch_host = (g1 - g0) * 1e3, event = ge0:elapsed(ge1) }
  g:free()
  graph_c = c:to_host()
  results:add(string.format("G%d", N), string.format(
    "nodes:%d,capture_ms:%.6f,instantiate_ms:%.6f,launch_host_ms:%.6f,graph_event_ms:%.6f",
    row.graph.nodes, row.graph.capture_ms, row.graph.instantiate_ms, row.graph.launch_host, row.graph.event))
end

print(string.format("\nThe same loops captured once as a graph and launched (cu.graph; g:launch):"))
print(string.format("%7s %7s %12s %12s %16s %16s %14s %10s", "N", "nodes", "capture", "instantiate",
  "launch, host", "graph, events", "per product", "loop/graph"))
for _, row in ipairs(rows) do
  local gr = row.graph
  print(string.format("%7d %7d %9.3f ms %9.3f ms %13.3f ms %13.3f ms %11.3f ms %9.2fx", row.N, gr.nodes,
    gr.capture_ms, gr.instantiate_ms, gr.launch_host, gr.event, gr.event / row.N, row.loop_event / gr.event))
end

-- cu.time is the packaged form of the events: it records one before and one after fn on the
-- stream and waits for the second.
local timed = cu.time(function() for _ = 1, rows[#rows].N do product() end end, { stream = s })
results:add("cu_time_ms", string.format("%.6f", timed))
-- The copy back on its own (nothing queued before it): what it costs by itself.
local copy_ms = cu.time(function() cu.copy(hc, c, { stream = s }) end, { stream = s })
results:add("copy_ms", string.format("%.6f", copy_ms))

-- The result is the product of the matrices uploaded at the start (reference: cu.matmul).
local ref = cu.matmul(a, b, { stream = s }):to_host()
local err = cu.abs(hc - ref):max():item() / cu.abs(ref):max():item()
assert(err < 1e-4, "wrong result: relative difference " .. err)
results:add("result_rel_err", string.format("%.3e", err))
local graph_err = cu.abs(graph_c - ref):max():item() / cu.abs(ref):max():item()
assert(graph_err < 1e-4, "wrong result from the graph: relative difference " .. graph_err)
results:add("graph_result_rel_err", string.format("%.3e", graph_err))

local last, first = rows[#rows], rows[1]
local flops = 2.0 * n * n * n
print(string.format("\nAt N = %d the host clock saw %.3f ms for the loop, but the device took %.3f ms"
  .. " (%.1f GFLOP/s);", last.N, last.loop_host, last.loop_event, flops * last.N / last.loop_event / 1e6))
print(string.format("the missing time appeared in the copy back (%.3f ms on the host clock for a"
  .. " %.0f KiB copy that takes %.3f ms on its own).", last.copy_host, n * n * 4 / 1024, copy_ms))
print("Launches only queue work; a synchronous copy waits for all of it. Time device work with events")
print("(cu.time, or cu.event():record(s) / e0:elapsed(e1)), never with a host clock around a launch loop.")
print(string.format("cu.time around the same loop of %d products, run again: %.3f ms.", last.N, timed))
print("The host clock read right after the loop is exactly what cu.clock warns about on stderr.")
print(string.format("As a graph the %d products are one launch: %.3f ms on the host clock, %.3f ms on the"
  .. " device (%.2fx the loop's), after a capture of %.3f ms and an instantiation of %.3f ms paid once.",
  last.N, last.graph.launch_host, last.graph.event, last.loop_event / last.graph.event, last.graph.capture_ms,
  last.graph.instantiate_ms))
print("A graph saves the launch overhead between kernels; once each kernel takes longer than a launch")
print("(large products), the device time is the same either way.")

-- Enqueue cost per launch at the smallest and largest N: when the launch queue is full (on CUDA
-- it holds on the order of a thousand launches) every further launch waits for a slot, so the
-- loop's host time starts tracking the device time.
local per_first = first.loop_host / first.N * 1e3
local per_last = last.loop_host / last.N * 1e3
print(string.format("\nHost time per launch: %.2f us at N = %d, %.2f us at N = %d; loop host/event"
  .. " ratio %.2f at N = %d.", per_first, first.N, per_last, last.N, last.loop_host / last.loop_event, last.N))
if gpu then
  print("On CUDA the queue of pending launches is bounded (about a thousand): past it the loop")
  print("itself blocks, and its host time starts to track the device time. A ratio near 1 at the")
  print("largest N says the queue filled in this run; a small ratio says it did not.")
else
  print("The host backend's stream queues are unbounded, so here the loop never blocks; on CUDA")
  print("past about a thousand queued launches the loop itself starts to block.")
end

print(string.format("\nLedger at N = %d: the loop made %d launches and %d synchronizations; the copy"
  .. " back moved %d bytes device-to-host with %d implicit synchronization(s).", last.N,
  ledger_loop.launches, ledger_loop.syncs, ledger_copy.d2h_bytes, ledger_copy.implicit_syncs))
results:add("ledger_loop_syncs", ledger_loop.syncs)
results:add("ledger_loop_launches", ledger_loop.launches)
results:add("ledger_copy_d2h_bytes", ledger_copy.d2h_bytes)
results:add("ledger_copy_implicit_syncs", ledger_copy.implicit_syncs)
if flags.results then results:print() end
