// A single-pass scan of contiguous sums (Merrill & Garland's decoupled look-back, with a
// deterministic look-back): each item is read once and written once, as a copy does.
//
// Tiles. A block scans one tile: kThreads threads of kItems items each, and one more warp that
// only looks back. Tiles are numbered in the order their blocks start (an atomic counter, not
// blockIdx), so every tile that a block waits for belongs to a block that has started and waits
// only for earlier tiles: the waits cannot deadlock whatever order the hardware runs blocks in.
// Thread `lane` of a data warp holds J vectors of V items (16-byte loads and stores; 8-byte loads
// for i32, read into 16 bytes of i64), vector j at item (j * 32 + lane) * V of the warp's span:
// each load and store instruction of a warp covers 32 adjacent vectors. Each thread scans its
// vectors, the warp scans the vectors' totals lane by lane (shuffles, the J scans interleaved) and
// carries from vector j to j + 1; the first warp scans the warps' totals and publishes the tile's
// total. Meanwhile the look-back warp has been finding the tile's prefix (the sum of the tiles
// before it), from the moment the tile started: its wait overlaps the tile's loads, and the
// total is published without waiting for it. Then every item gets its prefix and is stored.
//
// The prefix. Totals form a tree of fan-out 32: level 0 holds each tile's total, entry e of level
// L >= 1 the sum of entries 32e .. 32e + 31 of level L - 1, published by the tile that completes
// it (the last of the group, which reads the other 31, as soon as its own total is known: never
// after its prefix, or each group's totals would wait for the group before). The tiles before tile
// t are, level by level, the first d_L = (t >> 5L) & 31 entries of t's group at each level, so the
// look-back reads at most 31 entries per level (all levels in one round trip) and sums them in a
// fixed order. A tile never waits for another tile's prefix, only for totals, which each tile
// publishes right after its loads; and every sum is a fixed tree over a fixed set of values, so
// results are the same bits run to run for a given tile shape, unlike a look-back that stops at the
// first predecessor whose inclusive prefix happens to be ready (CUB's, whose float results vary).
//
// Status entries. A 32-bit value is one 64-bit word {marker, value}, a 64-bit value two words,
// each with a marker and half the value. The marker's valid bit says the word is written (each
// entry is written once per launch, into words zeroed before); its head bit, that a row starts
// within the entry's span. Every word is read and written whole by relaxed atomics at GPU scope,
// so a valid word holds its final value and no fences are needed. The words and the tile counter
// are zeroed by one cudaMemsetAsync on the stream and live in stream-ordered memory (graph capture
// records both). One tile needs neither: a single block, one launch.
//
// Rows (M > 1). The M rows of R items are scanned as one sequence of M * R items whose sums start
// afresh at each row's first item (a head): the scan combines (head, value) pairs, a then b
// giving (a.head | b.head, b.head ? b.value : a.value + b.value). An entry with a head holds the
// sum since its last head; a tile that starts a row needs no prefix.
//
// Numerics: f32 adds in f32 and f64 in f64 (no wider accumulator, as CUB and numpy's cumsum); the
// identity of a float sum is -0.0 (exact: -0.0 + x is x), so the first item is passed through as
// it is and cumsum([-0.0]) is -0.0. The order of additions is fixed by the tile shape: serial in a
// thread's vector, scans between lanes, vectors and warps, the tree above between tiles (the
// prefixes round as pairwise sums, not as a serial chain). Integers wrap in uint64.
//
// The tile shape and the look-back's longest sleep can be changed for measurement:
// -DCULUA_SCAN_THREADS=512 (data threads a block) -DCULUA_SCAN_BYTES=128 (bytes of results a
// thread) -DCULUA_SCAN_SLEEP_NS=128 (tests/gpu/scan_lookback_check.cu builds so).
#include "kernels/scan_lookback.cuh"

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/stream_temp.cuh"

#ifndef CULUA_SCAN_THREADS
#define CULUA_SCAN_THREADS 256
#endif
#ifndef CULUA_SCAN_BYTES
#define CULUA_SCAN_BYTES 64
#endif
#ifndef CULUA_SCAN_SLEEP_NS
#define CULUA_SCAN_SLEEP_NS 256
#endif

namespace culua::detail::kernels::cuda {

namespace {

constexpr int kThreads = CULUA_SCAN_THREADS;  // data threads; the look-back warp comes on top
constexpr int kWarps = kThreads / 32;
constexpr int kBlock = kThreads + 32;
static_assert(kThreads % 32 == 0 && kWarps <= 32, "whole warps, at most 32");
static_assert(CULUA_SCAN_BYTES % 16 == 0, "whole 16-byte vectors");

// Items per data thread: CULUA_SCAN_BYTES of results (16 f32, 8 f64 or i64).
template <class A>
constexpr int kItems = static_cast<int>(CULUA_SCAN_BYTES / sizeof(A));
template <class A>
constexpr int64_t kTileItems = int64_t{kThreads} * kItems<A>;

// Levels of the tree of tile totals: 32^7 entries cover every grid (at most 2^31 - 1 tiles).
constexpr int kMaxLevels = 7;
constexpr unsigned kMaxSleepNs = CULUA_SCAN_SLEEP_NS;
constexpr unsigned kAll = 0xffffffffu;
constexpr uint32_t kValid = 0x80000000u;
constexpr uint32_t kHead = 0x40000000u;

// A scanned value and, for rows, whether a row starts within its span.
template <class A>
struct Part {
  A v;
  bool head;
};

template <class A>
__device__ constexpr A identity() {
  if constexpr (std::is_floating_point_v<A>) {
    return A(-0.0);
  } else {
    return A(0);
  }
}

template <class A>
__device__ Part<A> none() {
  return {identity<A>(), false};
}

// a then b.
template <bool kRows, class A>
__device__ Part<A> comb(const Part<A>& a, const Part<A>& b) {
  if constexpr (kRows) {
    return {b.head ? b.v : a.v + b.v, a.head || b.head};
  } else {
    return {a.v + b.v, false};
  }
}

template <bool kRows, class A>
__device__ Part<A> shfl_up(const Part<A>& p, int d) {
  Part<A> o;
  o.v = __shfl_up_sync(kAll, p.v, d);
  o.head = kRows && __shfl_up_sync(kAll, static_cast<int>(p.head), d) != 0;
  return o;
}

template <bool kRows, class A>
__device__ Part<A> shfl_down(const Part<A>& p, int d) {
  Part<A> o;
  o.v = __shfl_down_sync(kAll, p.v, d);
  o.head = kRows && __shfl_down_sync(kAll, static_cast<int>(p.head), d) != 0;
  return o;
}

template <bool kRows, class A>
__device__ Part<A> shfl_from(const Part<A>& p, int lane) {
  Part<A> o;
  o.v = __shfl_sync(kAll, p.v, lane);
  o.head = kRows && __shfl_sync(kAll, static_cast<int>(p.head), lane) != 0;
  return o;
}

// The 32 lanes' parts combined in lane order by a fixed tree, in every lane.
template <bool kRows, class A>
__device__ Part<A> warp_total(Part<A> p, int lane) {
#pragma unroll
  for (int d = 1; d < 32; d *= 2) {
    const Part<A> o = shfl_down<kRows>(p, d);
    if (lane + d < 32) p = comb<kRows>(p, o);
  }
  return shfl_from<kRows>(p, 0);
}

// Inclusive scan of the lanes' parts.
template <bool kRows, class A>
__device__ Part<A> warp_scan(Part<A> p, int lane) {
#pragma unroll
  for (int d = 1; d < 32; d *= 2) {
    const Part<A> o = shfl_up<kRows>(p, d);
    if (lane >= d) p = comb<kRows>(o, p);
  }
  return p;
}

// The barriers that the look-back warp and the data warps reach from different places: the
// non-aligned barrier instruction (__syncthreads is the aligned one, for one place only).
// Barrier 1: the data warps only (the look-back warp is not held up by them, nor they by it,
// until the tile's prefix is needed); barrier 0: the whole block.
__device__ void sync_data_warps() {
  asm volatile("barrier.sync 1, %0;" ::"r"(kThreads) : "memory");
}
__device__ void sync_block() {
  asm volatile("barrier.sync 0;" ::: "memory");
}
// Barrier 2: the first data warp has the tile's total (it arrives), the look-back warp of a tile
// that completes a group waits for it (both warps: 64 threads).
__device__ void arrive_total() {
  asm volatile("barrier.arrive 2, 64;" ::: "memory");
}
__device__ void wait_total() {
  asm volatile("barrier.sync 2, 64;" ::: "memory");
}

// --- status entries ---

template <class A>
constexpr int kWords = sizeof(A) / 4;  // 64-bit words per entry

__device__ uint64_t load_word(const unsigned long long* p) {
  uint64_t v;
  asm volatile("ld.relaxed.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p));
  return v;
}

__device__ void store_word(unsigned long long* p, uint64_t v) {
  asm volatile("st.relaxed.gpu.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

struct Status {
  unsigned long long* words;  // the entries, level after level; null: one tile
  unsigned int* counter;      // tiles taken so far
  int levels;
};

template <class A>
__device__ void publish(const Status& st, int64_t at, const Part<A>& p) {
  using Bits = std::conditional_t<sizeof(A) == 4, uint32_t, uint64_t>;
  Bits bits;
  memcpy(&bits, &p.v, sizeof(A));
  unsigned long long* w = st.words + at * kWords<A>;
#pragma unroll
  for (int k = 0; k < kWords<A>; ++k) {
    const uint32_t marker = kValid | (k == 0 && p.head ? kHead : 0u);
    const auto half = static_cast<uint32_t>(static_cast<uint64_t>(bits) >> (32 * k));
    store_word(w + k, (static_cast<uint64_t>(marker) << 32) | half);
  }
}

template <class A>
struct Words {
  uint64_t w[kWords<A>];

  __device__ void load(const Status& st, int64_t at) {
#pragma unroll
    for (int k = 0; k < kWords<A>; ++k) w[k] = load_word(st.words + at * kWords<A> + k);
  }
  __device__ bool valid() const {
    bool ok = true;
#pragma unroll
    for (int k = 0; k < kWords<A>; ++k) ok = ok && (w[k] >> 32 & kValid) != 0;
    return ok;
  }
  __device__ Part<A> part() const {
    using Bits = std::conditional_t<sizeof(A) == 4, uint32_t, uint64_t>;
    uint64_t bits = 0;
#pragma unroll
    for (int k = 0; k < kWords<A>; ++k) bits |= (w[k] & 0xffffffffu) << (32 * k);
    const auto b = static_cast<Bits>(bits);
    Part<A> p;
    memcpy(&p.v, &b, sizeof(A));
    p.head = (w[0] >> 32 & kHead) != 0;
    return p;
  }
};

// Between polls of entries not yet written: a sleep growing from 32 ns to kMaxSleepNs, so that
// waiting warps do not crowd the L2 that the loads need (a longer one delays the tile once the
// entry is there).
struct Backoff {
  unsigned ns = 32;
  __device__ void wait() {
    __nanosleep(ns);
    if (ns < kMaxSleepNs) ns *= 2;
  }
};

// The sum of the tiles before `tile`, in every lane.
template <bool kRows, class A>
__device__ Part<A> tile_prefix(const Status& st, int64_t tile, int lane) {
  int64_t at[kMaxLevels];  // this lane's entry at each level
  unsigned want = 0;
  {
    int64_t first = 0;
    int64_t count = gridDim.x;
#pragma unroll
    for (int L = 0; L < kMaxLevels; ++L) {
      at[L] = first + ((tile >> (5 * L)) & ~int64_t{31}) + lane;
      if (L < st.levels && lane < ((tile >> (5 * L)) & 31)) want |= 1u << L;
      first += count;
      count = (count + 31) >> 5;
    }
  }
  Part<A> got[kMaxLevels];
  unsigned need = want;
  for (Backoff b;; b.wait()) {
    Words<A> w[kMaxLevels];
#pragma unroll
    for (int L = 0; L < kMaxLevels; ++L) {
      if (need >> L & 1) w[L].load(st, at[L]);
    }
#pragma unroll
    for (int L = 0; L < kMaxLevels; ++L) {
      if ((need >> L & 1) && w[L].valid()) {
        got[L] = w[L].part();
        need &= ~(1u << L);
      }
    }
    if (__all_sync(kAll, need == 0)) break;
  }
  if constexpr (kRows) {
    // in sequence order: the top level's entries first, each level's in lane order
    Part<A> prefix = none<A>();
#pragma unroll
    for (int L = kMaxLevels - 1; L >= 0; --L) {
      if (L < st.levels && ((tile >> (5 * L)) & 31) != 0) {
        const Part<A> e = (want >> L & 1) ? got[L] : none<A>();
        prefix = comb<true>(prefix, warp_total<true>(e, lane));
      }
    }
    return prefix;
  } else {
    // a sum: each lane adds its entries, top level first, then the lanes by a tree
    A s = identity<A>();
#pragma unroll
    for (int L = kMaxLevels - 1; L >= 0; --L) {
      if (want >> L & 1) s = s + got[L].v;
    }
    return warp_total<false>(Part<A>{s, false}, lane);
  }
}

// A tile that is the last of its group at levels 0 .. k - 1 publishes the group totals at levels
// 1 .. k (`own`: its total, its entry at level 0).
template <bool kRows, class A>
__device__ void publish_groups(const Status& st, int64_t tile, Part<A> own, int lane) {
  int64_t e = tile;           // this tile's entry at level L - 1
  int64_t first = 0;          // level L - 1's first entry
  int64_t count = gridDim.x;  // level L - 1's entries
  for (int L = 1; L < st.levels && (e & 31) == 31; ++L) {
    // lane 31's entry is `own`; the others read theirs
    const int64_t at = first + e - 31 + lane;
    Words<A> w{};
    bool ready = lane == 31;
    for (Backoff b;; b.wait()) {
      if (!ready) {
        w.load(st, at);
        ready = w.valid();
      }
      if (__all_sync(kAll, ready)) break;
    }
    own = warp_total<kRows>(lane == 31 ? own : w.part(), lane);
    first += count;
    count = (count + 31) >> 5;
    e >>= 5;
    if (lane == 0) publish(st, first + e, own);
  }
}

// --- the tile ---

template <class In, class A>
__device__ A widen(In x) {
  if constexpr (std::is_same_v<In, int32_t>) {
    return static_cast<A>(static_cast<int64_t>(x));  // sign-extended, then wrapping bits
  } else {
    return static_cast<A>(x);
  }
}

// V items from p (V * sizeof(In) bytes, aligned so), streamed (read once).
template <int V, class In, class A>
__device__ void load_vector(const In* p, A (&x)[V]) {
  In raw[V];
  if constexpr (V * sizeof(In) == 16) {
    const uint4 w = __ldcs(reinterpret_cast<const uint4*>(p));
    memcpy(raw, &w, 16);
  } else {
    static_assert(V * sizeof(In) == 8, "8- or 16-byte vectors");
    const uint2 w = __ldcs(reinterpret_cast<const uint2*>(p));
    memcpy(raw, &w, 8);
  }
#pragma unroll
  for (int k = 0; k < V; ++k) x[k] = widen<In, A>(raw[k]);
}

template <int V, class A>
__device__ void store_vector(A* p, const A (&y)[V]) {
  static_assert(V * sizeof(A) == 16, "16-byte vectors");
  uint4 w;
  memcpy(&w, y, 16);
  __stcs(reinterpret_cast<uint4*>(p), w);
}

// Items per vector: 16 bytes of the result.
template <class A>
constexpr int kVec = static_cast<int>(16 / sizeof(A));

template <class In, class A, bool kRows>
__global__ void __launch_bounds__(kBlock)
    scan_tiles(const In* __restrict__ in, A* __restrict__ out, int64_t n, int64_t R, int64_t step,
               Status st) {
  constexpr int V = kVec<A>;
  constexpr int J = kItems<A> / V;
  constexpr int64_t kTile = kTileItems<A>;
  static_assert(J >= 1 && J * V == kItems<A>, "whole vectors per thread");
  __shared__ unsigned s_tile;
  __shared__ A s_value[kWarps];  // the warps' totals, then what precedes each warp in the tile
  __shared__ bool s_head[kWarps];
  __shared__ A s_prefix;  // the tile's prefix
  __shared__ bool s_prefix_head;
  __shared__ A s_total;  // the tile's total
  __shared__ bool s_total_head;
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int warp = static_cast<int>(threadIdx.x) >> 5;

  int64_t tile = 0;
  if (st.words) {
    if (threadIdx.x == 0) s_tile = atomicAdd(st.counter, 1u);
    __syncthreads();
    tile = s_tile;
  }
  const int64_t tile_start = tile * kTile;

  const bool completes_group = st.words && (tile & 31) == 31;
  if (warp == kWarps) {
    // The look-back warp: the group totals that this tile completes, as soon as its total is
    // known (they must not wait for the tile's prefix: the next group's tiles need them for
    // theirs, and a chain of prefixes from group to group would serialize the scan), then the
    // prefix, while the data warps load and scan.
    if (completes_group) {
      wait_total();
      publish_groups<kRows>(st, tile, Part<A>{s_total, s_total_head}, lane);
    }
    Part<A> prefix = none<A>();
    const bool starts_row = kRows && tile_start % R == 0;  // then the prefix does not matter
    if (st.words && tile > 0 && !starts_row) prefix = tile_prefix<kRows, A>(st, tile, lane);
    if (lane == 0) {
      s_prefix = prefix.v;
      s_prefix_head = prefix.head;
    }
    sync_block();
    return;
  }

  const int64_t start = tile_start + int64_t{warp} * (32 * kItems<A>)+int64_t{lane} * V;
  // vector j of this thread starts at item start + j * 32 * V
  const bool full = tile_start + kTile <= n;
  A x[J][V];
  if (full) {
#pragma unroll
    for (int j = 0; j < J; ++j) load_vector<V>(in + start + int64_t{j} * 32 * V, x[j]);
  } else {
#pragma unroll
    for (int j = 0; j < J; ++j) {
      const int64_t g = start + int64_t{j} * 32 * V;
      if (g + V <= n) {
        load_vector<V>(in + g, x[j]);
      } else {
#pragma unroll
        for (int k = 0; k < V; ++k) x[j][k] = g + k < n ? widen<In, A>(in[g + k]) : identity<A>();
      }
    }
  }

  // Each vector scanned in place; first_head[j]: its first item that starts a row (V: none).
  int first_head[J];
  if constexpr (kRows) {
    int64_t r = start % R;  // the position in its row of vector j's first item
    const int rs = R < V ? static_cast<int>(R) : V;
#pragma unroll
    for (int j = 0; j < J; ++j) {
      int next = r == 0 ? 0 : (R - r < V ? static_cast<int>(R - r) : V);
      first_head[j] = next;
      if (next == 0) next = rs;
#pragma unroll
      for (int k = 1; k < V; ++k) {
        if (k == next) {
          next += rs;
        } else {
          x[j][k] = x[j][k - 1] + x[j][k];
        }
      }
      r += step;
      if (r >= R) r -= R;
    }
  } else {
#pragma unroll
    for (int j = 0; j < J; ++j) {
      first_head[j] = V;
#pragma unroll
      for (int k = 1; k < V; ++k) x[j][k] = x[j][k - 1] + x[j][k];
    }
  }

  // The vectors' totals scanned across the warp (the J scans interleaved); base[j]: what precedes
  // vector j within the warp.
  Part<A> base[J];
  Part<A> warp_sum = none<A>();
  {
    Part<A> p[J];
#pragma unroll
    for (int j = 0; j < J; ++j) p[j] = {x[j][V - 1], kRows && first_head[j] < V};
#pragma unroll
    for (int d = 1; d < 32; d *= 2) {
      Part<A> o[J];
#pragma unroll
      for (int j = 0; j < J; ++j) o[j] = shfl_up<kRows>(p[j], d);
#pragma unroll
      for (int j = 0; j < J; ++j) {
        if (lane >= d) p[j] = comb<kRows>(o[j], p[j]);
      }
    }
#pragma unroll
    for (int j = 0; j < J; ++j) {
      Part<A> before = shfl_up<kRows>(p[j], 1);
      if (lane == 0) before = none<A>();
      base[j] = comb<kRows>(warp_sum, before);
      warp_sum = comb<kRows>(warp_sum, shfl_from<kRows>(p[j], 31));
    }
  }
  if (lane == 0) {
    s_value[warp] = warp_sum.v;
    s_head[warp] = warp_sum.head;
  }
  sync_data_warps();

  if (warp == 0) {
    // the warps' totals scanned, the tile's total published
    Part<A> w = lane < kWarps ? Part<A>{s_value[lane], s_head[lane]} : none<A>();
    w = warp_scan<kRows>(w, lane);
    Part<A> before = shfl_up<kRows>(w, 1);
    if (lane == 0) before = none<A>();
    const Part<A> total = shfl_from<kRows>(w, kWarps - 1);
    if (lane == 0) {
      if (st.words) publish(st, tile, total);
      s_total = total.v;
      s_total_head = total.head;
    }
    if (completes_group) {
      __syncwarp();
      arrive_total();
    }
    // each lane overwrites the total that it read itself
    if (lane < kWarps) {
      s_value[lane] = before.v;
      s_head[lane] = before.head;
    }
  }
  sync_block();

  const Part<A> warp_prefix =
      comb<kRows>(Part<A>{s_prefix, s_prefix_head}, Part<A>{s_value[warp], s_head[warp]});
#pragma unroll
  for (int j = 0; j < J; ++j) {
    const A add = comb<kRows>(warp_prefix, base[j]).v;
    A y[V];
#pragma unroll
    for (int k = 0; k < V; ++k) y[k] = k < first_head[j] ? add + x[j][k] : x[j][k];
    const int64_t g = start + int64_t{j} * 32 * V;
    if (full || g + V <= n) {
      store_vector<V>(out + g, y);
    } else {
#pragma unroll
      for (int k = 0; k < V; ++k) {
        if (g + k < n) out[g + k] = y[k];
      }
    }
  }
}

template <class In, class A>
int launch(const In* in, A* out, int64_t M, int64_t R, const Launch& l) {
  const int64_t n = M * R;
  const int64_t tiles = (n + kTileItems<A> - 1) / kTileItems<A>;
  const auto stream = static_cast<cudaStream_t>(l.stream);
  Temp temp(l);
  Status st{};
  if (tiles > 1) {
    // level 0: one entry per tile; each level a 32nd of the one below, up to one of <= 32 (the
    // kernel walks the levels so, from gridDim.x)
    int64_t entries = 0;
    for (int64_t count = tiles;; count = (count + 31) / 32) {
      ++st.levels;
      entries += count;
      if (count <= 32) break;
    }
    // the counter, padded to 16 bytes, then the entries
    const size_t bytes = 16 + static_cast<size_t>(entries) * kWords<A> * 8;
    void* p = nullptr;
    if (const cudaError_t e = temp.bytes(&p, bytes); e != cudaSuccess) return e;
    if (const cudaError_t e = cudaMemsetAsync(p, 0, bytes, stream); e != cudaSuccess) return e;
    st.counter = static_cast<unsigned int*>(p);
    st.words = reinterpret_cast<unsigned long long*>(static_cast<char*>(p) + 16);
  }
  const auto grid = static_cast<unsigned>(tiles);
  if (M > 1) {
    const int64_t step = (int64_t{32} * kVec<A>) % R;
    scan_tiles<In, A, true><<<grid, kBlock, 0, stream>>>(in, out, n, R, step, st);
  } else {
    scan_tiles<In, A, false><<<grid, kBlock, 0, stream>>>(in, out, n, n, 0, st);
  }
  return cudaGetLastError();
}

bool aligned16(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

bool is_int64(DType t) {
  return t == DType::I64 || t == DType::U64;
}

}  // namespace

bool lookback_applies(DType in_dtype, DType acc, const void* in, const void* out, int64_t n) {
  const bool f32 = in_dtype == DType::F32 && acc == DType::F32;
  const bool types = f32 || (in_dtype == DType::F64 && acc == DType::F64) ||
                     (is_int64(in_dtype) && is_int64(acc)) ||
                     (in_dtype == DType::I32 && acc == DType::I64);
  // a grid of at most 2^31 - 1 blocks
  const int64_t tile = f32 ? kTileItems<float> : kTileItems<uint64_t>;
  const bool fits = n > 0 && (n - 1) / tile < int64_t{0x7fffffff};
  return types && fits && aligned16(in) && aligned16(out);
}

int scan_lookback(DType in_dtype, DType acc, const void* in, void* out, int64_t M, int64_t R,
                  const Launch& l) {
  if (!lookback_applies(in_dtype, acc, in, out, M * R)) return cudaErrorInvalidValue;
  switch (in_dtype) {
    case DType::F32:
      return launch(static_cast<const float*>(in), static_cast<float*>(out), M, R, l);
    case DType::F64:
      return launch(static_cast<const double*>(in), static_cast<double*>(out), M, R, l);
    case DType::I32:
      return launch(static_cast<const int32_t*>(in), static_cast<uint64_t*>(out), M, R, l);
    default:  // I64, U64: the same bits
      return launch(static_cast<const uint64_t*>(in), static_cast<uint64_t*>(out), M, R, l);
  }
}

int64_t lookback_tile_items(DType acc) {
  return acc == DType::F32 ? kTileItems<float> : kTileItems<uint64_t>;
}

}  // namespace culua::detail::kernels::cuda
