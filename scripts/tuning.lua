-- Autotuning with cu.tune: which configuration of a kernel is fastest, with a faulting candidate
-- among them.
--
-- 1. The shared-memory tiled matmul of async_timing.lua, generalized: each block computes a
--    TILE x TILE tile of C with a block of BX x BY threads (each thread TILE/BX x TILE/BY outputs).
--    Tuned over TILE (8, 16, 32, 64) and block shapes (8x8, 16x16, 32x8, 16x4); every candidate is
--    compiled with -DTILE= -DBX= -DBY=, checked against cu.matmul, then timed with cu.bench.
--    TILE = 64 carries a deliberate indexing bug (its loads of A are 2^38 elements off): on a GPU
--    it faults with an illegal address, which poisons a CUDA context. With isolate = true (each
--    candidate in a child process) the fault is one failed row and the tuning goes on. Block shapes
--    that do not divide the tile stop the compile (#error): failed rows too.
-- 2. A sum over 2^24 floats: a grid-stride kernel with a shared-memory tree per block and one
--    atomicAdd per block, tuned over the block size (64 to 1024 threads) and the blocks per SM.
-- On the host backend (no run-time compiled CUDA) the same questions are asked of what the host
-- can run: the product computed in row bands on several streams (bands x streams; 3 bands do not
-- divide the rows: a wrong result, rejected by the check; timed by the host clock, as the candidate
-- waits for its streams) and a two-level sum over chunk sizes.
-- The tables are printed; with gnuplot the matmul tuning is also plotted.
--
--   culua scripts/tuning.lua [n=1024] [plot=FILE.png|.svg] [--quick] [--results] [--no-isolate]
--
-- --quick: small sizes and short measurements (for the tests); --results: also print
-- machine-readable `RESULT k=v` lines; --no-isolate: run the candidates in this process (the
-- faulting candidate is then left out on a GPU: its fault would end every later candidate).

local script = require "cu.script"
local opt, flags = script.args(arg, "key=value, --quick, --results or --no-isolate")
local results = script.results()

local gpu = cu.backend == "cuda"
local device = cu.devices()[cu.device() + 1]
local n = script.int(opt, "n", flags.quick and (gpu and 512 or 128) or (gpu and 1024 or 512))
local bench = flags.quick and { min_samples = 3, min_time = 0.01, max_time = 0.5, hot = false }
  or { min_time = 0.2, max_time = 2 }

-- isolate = true needs a cu.sweep that can run points in child processes (asked without running a
-- sweep: an options table without run= is an error either way).
local function sweep_isolates()
  local _, err = pcall(cu.sweep, { isolate = false })
  return not tostring(err):find("unknown option 'isolate'", 1, true)
end
local isolate = not flags["no-isolate"] and sweep_isolates()

print(string.format("tuning: %dx%d f32 matrix product and a sum on the %s backend (%s); candidates %s",
  n, n, cu.backend, device.name, isolate and "isolated (one child process each)" or "in this process"))

local ha = cu.host.rand({ n, n }, { seed = 1 })
local hb = cu.host.rand({ n, n }, { seed = 2 })
local a, b, c = cu.empty({ n, n }), cu.empty({ n, n }), cu.empty({ n, n })
cu.copy(a, ha)
cu.copy(b, hb)
local ref = cu.matmul(a, b)
local ref_max = cu.abs(ref):max():item()

local function check_product(out)
  local err = cu.abs(out - ref):max():item() / ref_max
  if err ~= err or err > 1e-4 then return false, string.format("relative difference %.3g", err) end
  return true
end

local MATMUL = [[
// C = A @ B, row-major, A is M x K, B is K x N. A block of BX x BY threads computes a TILE x TILE tile
// of C (each thread TILE/BX x TILE/BY outputs), staging tiles of A and B through shared memory.
#if TILE % BX != 0 || TILE % BY != 0
#error "the block shape must divide the tile"
#endif
#if TILE == 64
#define A_OFFSET (1ll << 38)  // the deliberate bug of this experiment: loads of A far out of bounds
#else
#define A_OFFSET 0ll
#endif
extern "C" __global__ void matmul_tiled(const float* __restrict__ A, const float* __restrict__ B,
                                        float* __restrict__ C, int M, int N, int K) {
  __shared__ float As[TILE][TILE], Bs[TILE][TILE + 1];
  const int row0 = blockIdx.y * TILE, col0 = blockIdx.x * TILE;
  float acc[TILE / BY][TILE / BX] = {};
  for (int t = 0; t < K; t += TILE) {
    for (int i = threadIdx.y; i < TILE; i += BY)
      for (int j = threadIdx.x; j < TILE; j += BX) {
        const int r = row0 + i, k = t + j;
        As[i][j] = (r < M && k < K) ? A[(long long)r * K + k + A_OFFSET] : 0.0f;
        const int kb = t + i, col = col0 + j;
        Bs[i][j] = (kb < K && col < N) ? B[(long long)kb * N + col] : 0.0f;
      }
    __syncthreads();
#pragma unroll 8
    for (int k = 0; k < TILE; ++k)
#pragma unroll
      for (int y = 0; y < TILE / BY; ++y)
#pragma unroll
        for (int x = 0; x < TILE / BX; ++x)
          acc[y][x] += As[threadIdx.y + y * BY][k] * Bs[k][threadIdx.x + x * BX];
    __syncthreads();
  }
  for (int y = 0; y < TILE / BY; ++y)
    for (int x = 0; x < TILE / BX; ++x) {
      const int r = row0 + threadIdx.y + y * BY, col = col0 + threadIdx.x + x * BX;
      if (r < M && col < N) C[(long long)r * N + col] = acc[y][x];
    }
}
]]

local REDUCE = [[
// out[0] += the sum of x: a grid-stride loop per thread, a shared-memory tree per block of BLOCK
// threads, one atomicAdd per block.
extern "C" __global__ void block_sum(const float* __restrict__ x, float* out, long long n) {
  __shared__ float part[BLOCK];
  float s = 0.0f;
  for (long long i = blockIdx.x * (long long)BLOCK + threadIdx.x; i < n; i += (long long)gridDim.x * BLOCK)
    s += x[i];
  part[threadIdx.x] = s;
  __syncthreads();
  for (int w = BLOCK / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(out, part[0]);
}
]]

local plot_file = opt.plot
if plot_file == nil and os.execute("command -v gnuplot >/dev/null 2>&1") then
  plot_file = (os.getenv("TMPDIR") or "/tmp") .. "/tuning.png"
end

-- 1. the matrix product
local best_mm, tbl_mm
if gpu then
  local tiles = flags.quick and { 16, 32, 64 } or { 8, 16, 32, 64 }
  if not isolate then
    tiles = flags.quick and { 16, 32 } or { 8, 16, 32 }
    print("(this cu.sweep cannot isolate candidates, or --no-isolate: TILE = 64, the faulting one, is left out)")
  end
  best_mm, tbl_mm = cu.tune { name = "matmul_tiled", source = MATMUL, kernel = "matmul_tiled",
    space = { TILE = tiles, block = { { 8, 8 }, { 16, 16 }, { 32, 8 }, { 16, 4 } } },
    options = function(p) return { "-DBX=" .. p.block[1], "-DBY=" .. p.block[2] } end,
    launch = function(p)
      local g = (n + p.TILE - 1) // p.TILE
      return { grid = { g, g }, block = p.block }
    end,
    args = { a, b, c, n, n, n }, size = n,
    check = function(args) return check_product(args[3]) end,
    bench = bench, isolate = isolate or nil, timeout = isolate and 120 or nil }
else
  -- C in row bands, band i on stream i % streams (each host stream is a worker thread)
  local streams = {}
  for i = 1, 4 do streams[i] = cu.stream() end
  best_mm, tbl_mm = cu.tune { name = "matmul_bands", key = "tuning.lua matmul bands v1",
    kernel = function(p)
      local out = cu.empty({ n, n })
      local rows = n // p.bands
      local bands = {}
      for i = 0, p.bands - 1 do
        bands[#bands + 1] = { a:narrow(1, i * rows + 1, rows), out:narrow(1, i * rows + 1, rows),
          streams[i % p.streams + 1] }
      end
      return function()
        for _, band in ipairs(bands) do cu.matmul(band[1], b, { out = band[2], stream = band[3] }) end
        for s = 1, p.streams do streams[s]:sync() end
        return out
      end
    end,
    space = { bands = { 1, 2, 3, 4, 8 }, streams = { 1, 2, 4 } }, size = n,
    check = check_product, bench = bench, isolate = isolate or nil,
    metric = "cpu.median" } -- the candidate waits for its streams: the host's time is the whole product
end
local counts = { ok = 0, failed = 0, rejected = 0 }
for _, r in ipairs(tbl_mm.rows) do counts[r.status] = counts[r.status] + 1 end
results:add("matmul_candidates", #tbl_mm.rows)
results:add("matmul_ok", counts.ok)
results:add("matmul_failed", counts.failed)
results:add("matmul_rejected", counts.rejected)
results:add("matmul_best", gpu and ("TILE:" .. best_mm.TILE .. ",block:" .. best_mm.block[1] .. "x" .. best_mm.block[2])
  or ("bands:" .. best_mm.bands .. ",streams:" .. best_mm.streams))
results:add("matmul_best_ms", string.format("%.6f", tbl_mm.best.metric))

-- 2. the sum
local m = flags.quick and (1 << 20) or (1 << 24)
local x = cu.rand(m, { seed = 3 })
local expected = cu.sum(x:astype("f64")):item()
local function check_sum(total)
  local got = total:item()
  local err = math.abs(got - expected) / expected
  if err > 1e-4 then return false, string.format("relative difference %.3g", err) end
  return true
end
local best_sum, tbl_sum
if gpu then
  local out = cu.zeros(1)
  best_sum, tbl_sum = cu.tune { name = "block_sum", key = "tuning.lua block_sum v1",
    kernel = function(p)
      local k = cu.compile(REDUCE, { name = "block_sum.cu", options = { "-DBLOCK=" .. p.BLOCK } }).block_sum
      local kc = k:configure({ grid = device.sm_count * p.per_sm, block = p.BLOCK })
      return function()
        out:fill(0)
        kc(x, out, m)
        return out
      end
    end,
    space = { BLOCK = { 64, 128, 256, 512, 1024 }, per_sm = flags.quick and { 2, 8 } or { 1, 2, 4, 8, 32 } },
    size = m, check = check_sum, bench = bench, isolate = isolate or nil, timeout = isolate and 120 or nil }
else
  best_sum, tbl_sum = cu.tune { name = "chunked_sum", key = "tuning.lua chunked sum v1",
    kernel = function(p)
      local xs = x:view({ m // p.chunk, p.chunk })
      return function() return cu.sum(cu.sum(xs, { axis = 2 })) end
    end,
    space = { chunk = flags.quick and { 16, 256, 4096 } or { 16, 64, 256, 1024, 4096, 16384 } }, size = m,
    check = check_sum, bench = bench, isolate = isolate or nil }
end
-- After both tunings: with isolate = true each candidate's child process runs the script up to its
-- own sweep and ends there, so what follows runs once, in the parent.
if plot_file then
  local ok, why = pcall(tbl_mm.plot, tbl_mm, { file = plot_file })
  if ok then
    print("Plot written to " .. plot_file)
    results:add("plot", plot_file)
  else
    print("No plot: " .. tostring(why))
  end
end
results:add("sum_candidates", #tbl_sum.rows)
results:add("sum_best", gpu and ("BLOCK:" .. best_sum.BLOCK .. ",per_sm:" .. best_sum.per_sm)
  or ("chunk:" .. best_sum.chunk))
results:add("sum_best_ms", string.format("%.6f", tbl_sum.best.metric))

print(string.format("Fastest product: %s, %.3f ms (%.1f GFLOP/s).",
  (gpu and string.format("TILE %d, block %dx%d", best_mm.TILE, best_mm.block[1], best_mm.block[2])
    or string.format("%d bands on %d streams", best_mm.bands, best_mm.streams)),
  tbl_mm.best.metric, 2.0 * n * n * n / tbl_mm.best.metric / 1e6))
print(string.format("Fastest sum: %s, %.3f ms (%.1f GB/s).",
  gpu and string.format("%d threads per block, %d blocks per SM", best_sum.BLOCK, best_sum.per_sm)
    or string.format("chunks of %d", best_sum.chunk), tbl_sum.best.metric, 4.0 * m / tbl_sum.best.metric / 1e6))
if counts.failed > 0 then
  print(string.format("%d candidate(s) of the product failed (compile errors, faults) and the tuning went on.",
    counts.failed))
end
if flags.results then results:print() end
