// Reductions on CUDA streams (included by reduce_cuda_*.cu): one kernel launch per reduction. When
// several blocks share an output they count themselves in block counters, which live in the
// stream's scratch (zero at rest: the last block sets its counter back to 0); under graph capture,
// or when the scratch is too small, the counters and partials are allocated per launch and the
// counters cleared by a memset.
//
// Full reductions (reduce_full): a grid of sm_count x (resident blocks per SM) blocks at most.
// Contiguous inputs are read as 16-byte vectors (elements before the first 16-byte boundary and
// after the last whole vector are read singly); thread t reads vectors t, t + T, t + 2T, ... (T:
// threads in the grid), 4 vector loads in flight, each vector's elements combined by a tree first.
// Strided inputs are read element by element in the same pattern (through an Indexer when the
// dimensions do not merge into one). Each block combines its threads by warp shuffles, writes one
// partial result, and the last block to finish (a counter) combines the partials in block order.
//
// Axis reductions (reduce_axis): a block of 256 threads covers ox output positions with rx threads
// each (ox * rx = 256). When the reduced axis has the smallest stride ("inner") the rx threads of
// an output are adjacent lanes reading adjacent elements (a warp, or the whole block, per row);
// otherwise the lanes of a warp cover adjacent outputs and walk down the reduced axis together (a
// thread per column). When there are too few outputs to fill the GPU the reduced axis is also
// split over gridDim.y blocks; the last of them combines the partials of each output.
//
// Order of accumulation, fixed by the launch shape (deterministic run to run): each thread keeps
// 4 or 8 partials, folded into its running total every kChunk loads each (so serial chains stay
// short); threads are combined by a binary tree, partials of blocks likewise.
//
// Which functors get kernels (reduce_precompiled.cuh): the hot (op, dtype) combinations have their
// own functor and three kernels (full: vectors, full: strided or indexed, axis); every other
// combination runs through a shared functor of its dtype (the op chosen at run time), with one
// full-reduction kernel for every mode and one axis kernel.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/backend/reduce_call.hpp"
#include "kernels/kernels.hpp"
#include "kernels/reduce.cuh"
#include "kernels/reduce_cuda_typed.hpp"
#include "kernels/reduce_precompiled.cuh"

namespace culua::detail::kernels::cuda {

namespace {

using reduce::ReducePlan;

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
// Independent loads in flight per thread: 4 x 16 bytes when loading vectors, 8 single elements
// otherwise (axis reductions, strided views), so that each SM keeps enough bytes in flight to
// cover the memory latency.
constexpr int kUnrollVectors = 4;
constexpr int kUnrollScalars = 8;
constexpr int64_t kChunk = 16;     // loads per partial before it is folded into the thread's total
constexpr int64_t kMinLoads = 16;  // a split of the reduced axis leaves each thread at least this

// Elements per 16-byte vector load.
template <class T>
constexpr int kVec = sizeof(T) >= 16 ? 1 : static_cast<int>(16 / sizeof(T));

// Moves an accumulator between lanes word by word (any accumulator type).
template <class A>
__device__ A shfl_down(A v, int delta, int width = 32) {
  static_assert(sizeof(A) % 4 == 0, "accumulators are whole words");
  constexpr int kWords = static_cast<int>(sizeof(A) / 4);
  uint32_t w[kWords];
  memcpy(w, &v, sizeof(A));
#pragma unroll
  for (int i = 0; i < kWords; ++i) w[i] = __shfl_down_sync(0xffffffffu, w[i], delta, width);
  memcpy(&v, w, sizeof(A));
  return v;
}

// Reads an accumulator that another block of the grid wrote (through L2: never a stale L1 line).
template <class A>
__device__ A load_cg(const A* p) {
  constexpr int kWords = static_cast<int>(sizeof(A) / 4);
  const auto* q = reinterpret_cast<const unsigned int*>(p);
  uint32_t w[kWords];
#pragma unroll
  for (int i = 0; i < kWords; ++i) w[i] = __ldcg(q + i);
  A v;
  memcpy(&v, w, sizeof(A));
  return v;
}

// A thread's serial part: load(0) ... load(count - 1) into U independent partials (loads in
// flight together), each folded by a tree into the running total after kChunk loads.
template <int U, class Op, class Load>
__device__ typename Op::Acc accumulate(const Op& op, int64_t count, const Load& load) {
  static_assert(U >= 1 && (U & (U - 1)) == 0, "a power of two");
  using Acc = typename Op::Acc;
  Acc total = op.identity();
  for (int64_t k0 = 0; k0 < count; k0 += U * kChunk) {
    const int64_t end = count - k0 < U * kChunk ? count : k0 + U * kChunk;
    Acc part[U];
#pragma unroll
    for (int u = 0; u < U; ++u) part[u] = op.identity();
    int64_t k = k0;
    for (; k + U <= end; k += U) {
      Acc x[U];
#pragma unroll
      for (int u = 0; u < U; ++u) x[u] = load(k + u);
#pragma unroll
      for (int u = 0; u < U; ++u) part[u] = op.combine(part[u], x[u]);
    }
    for (; k < end; ++k) part[0] = op.combine(part[0], load(k));
#pragma unroll
    for (int h = 1; h < U; h *= 2) {
#pragma unroll
      for (int u = 0; u + h < U; u += 2 * h) part[u] = op.combine(part[u], part[u + h]);
    }
    total = op.combine(total, part[0]);
  }
  return total;
}

// One 16-byte vector of elements starting at p (16-byte aligned), combined by a tree; `index` is
// the flat index of its first element.
template <class Op>
__device__ typename Op::Acc load_vector(const Op& op, const typename Op::In* p, int64_t index) {
  using T = typename Op::In;
  using Acc = typename Op::Acc;
  constexpr int V = kVec<T>;
  static_assert(sizeof(T) * V == 16, "a vector is 16 bytes");
  const uint4 raw = __ldg(reinterpret_cast<const uint4*>(p));
  if constexpr (reduce::HasLoad16<Op>::value) {
    reduce::Bytes16x b;
    memcpy(&b, &raw, sizeof b);
    return op.load16(b, index);  // the same loads and tree, in one call (reduce_precompiled.cuh)
  } else {
    T x[V];
    memcpy(x, &raw, sizeof raw);
    Acc t[V];
#pragma unroll
    for (int j = 0; j < V; ++j) t[j] = op.load(x[j], index + j);
#pragma unroll
    for (int s = 1; s < V; s *= 2) {
#pragma unroll
      for (int j = 0; j + s < V; j += 2 * s) t[j] = op.combine(t[j], t[j + s]);
    }
    return t[0];
  }
}

// Combines the values of all threads of the block; the result is valid in thread 0.
template <class Op>
__device__ typename Op::Acc block_reduce(const Op& op, typename Op::Acc v) {
  using Acc = typename Op::Acc;
  __shared__ Acc warp_totals[kWarps];
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int warp = static_cast<int>(threadIdx.x) >> 5;
#pragma unroll
  for (int d = 16; d > 0; d /= 2) v = op.combine(v, shfl_down(v, d));
  if (lane == 0) warp_totals[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < kWarps ? warp_totals[lane] : op.identity();
#pragma unroll
    for (int d = kWarps / 2; d > 0; d /= 2) v = op.combine(v, shfl_down(v, d));
  }
  __syncthreads();  // warp_totals may be reused by the next call
  return v;
}

// Called by every thread of a block once its partial results are stored: true, in all threads,
// for the block that arrives last among `total`; that block then sees every partial result.
__device__ bool last_block(unsigned* counter, unsigned total) {
  __shared__ bool last;
  __threadfence();  // this thread's partials are visible device-wide before the count moves
  __syncthreads();
  if (threadIdx.x == 0) {
    last = atomicAdd(counter, 1u) == total - 1;
    // Every block has counted: the counter goes back to 0 for the next kernel (a stream's scratch
    // counters are zero whenever no kernel runs).
    if (last) *counter = 0;
  }
  __syncthreads();
  if (last) __threadfence();
  return last;
}

// Writes the result of n elements to element offset() of out: op.finalize, or op.store for the
// functors that store their own result (reduce_precompiled.cuh). (The result is computed before
// the offset, as in `out[offset()] = op.finalize(acc, n)`.)
template <class Op, class Offset>
__device__ void store_result(const Op& op, void* out, const Offset& offset, typename Op::Acc acc,
                             int64_t n) {
  if constexpr (reduce::HasStore<Op>::value) {
    op.store(out, offset(), acc, n);
  } else {
    static_cast<typename Op::Out*>(out)[offset()] = op.finalize(acc, n);
  }
}

// --- full reductions ---------------------------------------------------------------------------

enum FullMode : int { kVectors, kStrided, kIndexed };

struct FullArgs {
  const void* data;
  int64_t n;
  int mode;
  int64_t stride;  // kStrided
  int64_t head;    // kVectors: single elements before the first 16-byte boundary
  int64_t nvec;    // kVectors: whole vectors after them
  Indexer idx;     // kIndexed
  void* out;
  void* partials;  // gridDim.x accumulators when gridDim.x > 1
  unsigned* counter;
};

// The paths a reduce_full kernel holds. For the hot combinations vectors (the common case) and the
// other modes are separate kernels, so that the registers of the element-wise paths (8 loads in
// flight, the 64-bit divisions of the Indexer) do not lower the occupancy of the vectorized one;
// the other combinations have one kernel for every mode (fewer kernels to compile).
enum FullPaths : int { kVectorPath = 1, kGeneralPaths = 2, kAllPaths = 3 };

template <class Op, int Paths>
__global__ void __launch_bounds__(kThreads) reduce_full(Op op, FullArgs a) {
  using T = typename Op::In;
  using Acc = typename Op::Acc;
  constexpr int V = kVec<T>;
  const T* data = static_cast<const T*>(a.data);
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  const int64_t nthreads = static_cast<int64_t>(gridDim.x) * kThreads;

  Acc acc = op.identity();
  const bool vectors = Paths == kAllPaths ? a.mode == kVectors : Paths == kVectorPath;
  if ((Paths & kGeneralPaths) && !vectors) {
    if (tid < a.n && a.mode == kStrided) {
      const int64_t stride = a.stride;
      acc = accumulate<kUnrollScalars>(op, (a.n - 1 - tid) / nthreads + 1, [&](int64_t k) {
        const int64_t i = tid + k * nthreads;
        return op.load(data[i * stride], i);
      });
    } else if (tid < a.n) {
      acc = accumulate<kUnrollScalars>(op, (a.n - 1 - tid) / nthreads + 1, [&](int64_t k) {
        const int64_t i = tid + k * nthreads;
        return op.load(data[a.idx(i)], i);
      });
    }
  } else if ((Paths & kVectorPath) && vectors) {
    const T* body = data + a.head;
    if (tid < a.nvec) {
      acc = accumulate<kUnrollVectors>(op, (a.nvec - 1 - tid) / nthreads + 1, [&](int64_t k) {
        const int64_t v = tid + k * nthreads;
        return load_vector(op, body + v * V, a.head + v * V);
      });
    }
    const int64_t body_end = a.head + a.nvec * V;
    if (tid < a.head + (a.n - body_end)) {
      const int64_t i = tid < a.head ? tid : body_end + (tid - a.head);
      acc = op.combine(acc, op.load(data[i], i));
    }
  }
  acc = block_reduce(op, acc);

  void* const out = a.out;
  const auto first = [] { return int64_t{0}; };
  if (gridDim.x == 1) {
    if (threadIdx.x == 0) store_result(op, out, first, acc, a.n);
    return;
  }
  Acc* partials = static_cast<Acc*>(a.partials);
  if (threadIdx.x == 0) partials[blockIdx.x] = acc;
  if (!last_block(a.counter, gridDim.x)) return;
  acc = op.identity();
  if (threadIdx.x < gridDim.x) {
    const int64_t count = (gridDim.x - 1 - threadIdx.x) / kThreads + 1;
    acc = accumulate<4>(op, count,
                        [&](int64_t k) { return load_cg(partials + threadIdx.x + k * kThreads); });
  }
  acc = block_reduce(op, acc);
  if (threadIdx.x == 0) store_result(op, out, first, acc, a.n);
}

// --- axis reductions ---------------------------------------------------------------------------

struct AxisArgs {
  const void* in;
  void* out;
  int64_t M;   // output positions
  int64_t R;   // length of the reduced axis
  int64_t rs;  // its stride
  Indexer in_idx;
  Indexer out_idx;
  int inner;
  int ox_log2;         // output positions per block
  int rx_log2;         // threads per output position
  void* partials;      // gridDim.y x M accumulators when gridDim.y > 1
  unsigned* counters;  // one per blockIdx.x
};

// This thread's place in the block: output slot o (of ox), reduction slot r (of rx).
struct Tile {
  bool inner;
  int ox, rx, o, r;
};

// Combines the rx values of each output slot; the result is valid in the threads with r == 0.
template <class Op>
__device__ typename Op::Acc tile_reduce(const Op& op, typename Op::Acc v, const Tile& t) {
  using Acc = typename Op::Acc;
  if (t.inner && t.rx <= 32) {
    // The rx threads of an output are adjacent lanes of one warp.
    for (int d = t.rx / 2; d > 0; d /= 2) v = op.combine(v, shfl_down(v, d, t.rx));
    return v;
  }
  __shared__ Acc slots[kThreads];
  const int slot = t.r * t.ox + t.o;
  slots[slot] = v;
  __syncthreads();
  for (int h = t.rx / 2; h > 0; h /= 2) {
    if (t.r < h) slots[slot] = op.combine(slots[slot], slots[slot + h * t.ox]);
    __syncthreads();
  }
  v = slots[t.o];
  __syncthreads();  // slots may be reused by the next call
  return v;
}

template <class Op>
__global__ void __launch_bounds__(kThreads) reduce_axis(Op op, AxisArgs a) {
  using T = typename Op::In;
  using Acc = typename Op::Acc;
  Tile t;
  t.inner = a.inner != 0;
  t.ox = 1 << a.ox_log2;
  t.rx = 1 << a.rx_log2;
  const int thread = static_cast<int>(threadIdx.x);
  if (t.inner) {
    t.r = thread & (t.rx - 1);
    t.o = thread >> a.rx_log2;
  } else {
    t.o = thread & (t.ox - 1);
    t.r = thread >> a.ox_log2;
  }
  const int64_t o = static_cast<int64_t>(blockIdx.x) * t.ox + t.o;
  const bool valid = o < a.M;
  const int64_t slices = static_cast<int64_t>(gridDim.y) * t.rx;
  const int64_t slice = static_cast<int64_t>(blockIdx.y) * t.rx + t.r;

  Acc acc = op.identity();
  if (valid && slice < a.R) {
    const T* base = static_cast<const T*>(a.in) + a.in_idx(o);
    const int64_t rs = a.rs;
    acc = accumulate<kUnrollScalars>(op, (a.R - 1 - slice) / slices + 1, [&](int64_t k) {
      const int64_t r = slice + k * slices;
      return op.load(base[r * rs], r);
    });
  }
  acc = tile_reduce(op, acc, t);

  void* const out = a.out;
  const auto offset_of_o = [&] { return a.out_idx(o); };
  if (gridDim.y == 1) {
    if (valid && t.r == 0) store_result(op, out, offset_of_o, acc, a.R);
    return;
  }
  Acc* partials = static_cast<Acc*>(a.partials);
  if (valid && t.r == 0) partials[static_cast<int64_t>(blockIdx.y) * a.M + o] = acc;
  if (!last_block(a.counters + blockIdx.x, gridDim.y)) return;
  acc = op.identity();
  if (valid && t.r < static_cast<int>(gridDim.y)) {
    const int64_t count = (static_cast<int64_t>(gridDim.y) - 1 - t.r) / t.rx + 1;
    acc = accumulate<4>(op, count,
                        [&](int64_t k) { return load_cg(partials + (t.r + k * t.rx) * a.M + o); });
  }
  acc = tile_reduce(op, acc, t);
  if (valid && t.r == 0) store_result(op, out, offset_of_o, acc, a.R);
}

// --- launches ----------------------------------------------------------------------------------

template <class Kernel>
int resident_blocks(Kernel kernel) {
  int n = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, kThreads, 0) != cudaSuccess) {
    cudaGetLastError();
    n = 0;
  }
  return std::max(n, 1);
}

int log2_of(int64_t pow2) {
  int k = 0;
  while ((int64_t{1} << k) < pow2) ++k;
  return k;
}

int64_t pow2_ceil(int64_t v) {
  int64_t p = 1;
  while (p < v) p *= 2;
  return p;
}

// Stream-ordered scratch memory: block counters (zeroed) followed by partial results.
class Scratch {
 public:
  explicit Scratch(const Launch& l) : l_(l) {}
  ~Scratch() {
    if (p_) cudaFreeAsync(p_, stream());
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;

  cudaError_t allocate(int64_t counters, size_t partial_bytes) {
    if (l_.scratch && static_cast<size_t>(counters) <= kStreamCounters &&
        partial_bytes <= kStreamScratchBytes - kStreamCounters * sizeof(unsigned)) {
      // The stream's own scratch: its counters are already zero; nothing to allocate or clear.
      shared_ = l_.scratch;
      counter_bytes_ = kStreamCounters * sizeof(unsigned);
      return cudaSuccess;
    }
    counter_bytes_ = (static_cast<size_t>(counters) * sizeof(unsigned) + 15) / 16 * 16;
    const size_t bytes = counter_bytes_ + partial_bytes;
    cudaError_t e =
        l_.pool ? cudaMallocFromPoolAsync(&p_, bytes, static_cast<cudaMemPool_t>(l_.pool), stream())
                : cudaMallocAsync(&p_, bytes, stream());
    if (e != cudaSuccess) {
      p_ = nullptr;
      return e;
    }
    return cudaMemsetAsync(p_, 0, counter_bytes_, stream());
  }
  unsigned* counters() const { return static_cast<unsigned*>(shared_ ? shared_ : p_); }
  void* partials() const { return static_cast<char*>(shared_ ? shared_ : p_) + counter_bytes_; }

 private:
  cudaStream_t stream() const { return static_cast<cudaStream_t>(l_.stream); }
  const Launch& l_;
  void* p_ = nullptr;       // allocated for this launch, freed in stream order
  void* shared_ = nullptr;  // the stream's scratch
  size_t counter_bytes_ = 0;
};

// Hot: the vectorized and the general paths are separate kernels (reduce_full<Op, kVectorPath>,
// reduce_full<Op, kGeneralPaths>); else one kernel holds both (reduce_full<Op, kAllPaths>).
template <bool Hot, class Op>
int launch_full(const Op& op, const ReducePlan& p, const Launch& l) {
  using T = typename Op::In;
  using Acc = typename Op::Acc;
  constexpr int V = kVec<T>;
  FullArgs a{p.in.data, p.count, kIndexed, 0, 0, 0, Indexer(p.in), p.out.data, nullptr, nullptr};
  int64_t loads = p.count;
  const auto misalignment = reinterpret_cast<uintptr_t>(p.in.data) % 16;
  if (p.in.is_contiguous() && misalignment % sizeof(T) == 0) {
    // Single elements up to the first 16-byte boundary, then vectors. (A wrapped pointer that
    // is not a multiple of the element size never reaches one: it is read element by element.)
    a.mode = kVectors;
    const auto to_boundary = static_cast<int64_t>((16 - misalignment) % 16 / sizeof(T));
    a.head = std::min(p.count, to_boundary);
    a.nvec = (p.count - a.head) / V;
    loads = a.nvec;
  } else if (p.in.ndim <= 1) {
    a.mode = kStrided;
    a.stride = p.in.ndim == 1 ? p.in.strides[0] : 1;
  }
  const bool general = a.mode != kVectors;
  int per_sm_now = 0;
  if constexpr (Hot) {
    static const int per_sm = resident_blocks(reduce_full<Op, kVectorPath>);
    static const int per_sm_general = resident_blocks(reduce_full<Op, kGeneralPaths>);
    per_sm_now = general ? per_sm_general : per_sm;
  } else {
    static const int per_sm = resident_blocks(reduce_full<Op, kAllPaths>);
    per_sm_now = per_sm;
  }
  const int64_t max_blocks = static_cast<int64_t>(std::max(l.sm_count, 1)) * per_sm_now;
  // Enough blocks for each thread to issue one round of loads; at most one wave.
  const int64_t per_block = int64_t{kThreads} * (general ? kUnrollScalars : kUnrollVectors);
  const int64_t blocks = std::clamp<int64_t>((loads + per_block - 1) / per_block, 1, max_blocks);
  Scratch scratch(l);
  if (blocks > 1) {
    if (cudaError_t e = scratch.allocate(1, static_cast<size_t>(blocks) * sizeof(Acc));
        e != cudaSuccess) {
      return e;
    }
    a.counter = scratch.counters();
    a.partials = scratch.partials();
  }
  const auto stream = static_cast<cudaStream_t>(l.stream);
  const auto grid = static_cast<unsigned>(blocks);
  if constexpr (Hot) {
    if (general) {
      reduce_full<Op, kGeneralPaths><<<grid, kThreads, 0, stream>>>(op, a);
    } else {
      reduce_full<Op, kVectorPath><<<grid, kThreads, 0, stream>>>(op, a);
    }
  } else {
    reduce_full<Op, kAllPaths><<<grid, kThreads, 0, stream>>>(op, a);
  }
  return cudaGetLastError();
}

template <class Op>
int launch_axis(const Op& op, const ReducePlan& p, const Launch& l) {
  using Acc = typename Op::Acc;
  int64_t rx;
  if (p.inner) {
    // A warp per output row; for fewer than 8 rows, the block's threads share the rows.
    rx = p.R >= 32 ? (p.M >= 8 ? 32 : kThreads / pow2_ceil(p.M))
                   : pow2_ceil(std::max<int64_t>(p.R, 1));
  } else {
    // A warp spans 32 adjacent output positions.
    rx = kThreads / std::min<int64_t>(32, pow2_ceil(p.M));
  }
  const int64_t ox = kThreads / rx;
  const int64_t gx = (p.M + ox - 1) / ox;
  if (gx > INT_MAX) return cudaErrorInvalidConfiguration;
  static const int per_sm = resident_blocks(reduce_axis<Op>);
  const int64_t target = static_cast<int64_t>(std::max(l.sm_count, 1)) * per_sm;
  int64_t splits = 1;
  if (gx < target) {
    // Too few outputs to fill the GPU: split the reduced axis too (within one wave of blocks).
    const int64_t by_work = p.R / (rx * kMinLoads);
    splits = std::clamp<int64_t>(std::min(target / gx, by_work), 1, 65535);
  }
  AxisArgs a{
      p.in_outer.data, p.out.data,      p.M,         p.R,         p.rs,    Indexer(p.in_outer),
      Indexer(p.out),  p.inner ? 1 : 0, log2_of(ox), log2_of(rx), nullptr, nullptr};
  Scratch scratch(l);
  if (splits > 1) {
    if (cudaError_t e = scratch.allocate(gx, static_cast<size_t>(splits * p.M) * sizeof(Acc));
        e != cudaSuccess) {
      return e;
    }
    a.counters = scratch.counters();
    a.partials = scratch.partials();
  }
  const dim3 grid(static_cast<unsigned>(gx), static_cast<unsigned>(splits));
  reduce_axis<<<grid, kThreads, 0, static_cast<cudaStream_t>(l.stream)>>>(op, a);
  return cudaGetLastError();
}

}  // namespace

// The reductions of inputs of type T (instantiated in reduce_cuda_*.cu: each file is a module of
// its own, loaded on first use, so that a script's first f32 sum loads only the float kernels).
// The functors and which of them are hot: reduce_precompiled.cuh.
template <class T>
int reduce_typed(ReduceOp op, const reduce::ReducePlan& p, const Launch& l) {
  return reduce::dispatch_precompiled<T>(
      op, p.correction, static_cast<int>(cudaErrorNotSupported), [&](const auto& f, auto hot) {
        constexpr bool kHot = std::is_same_v<decltype(hot), reduce::Hot>;
        return p.full ? launch_full<kHot>(f, p, l) : launch_axis(f, p, l);
      });
}

}  // namespace culua::detail::kernels::cuda
