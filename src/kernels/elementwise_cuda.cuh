// The elementwise kernels on CUDA: a vectorized grid-stride kernel for contiguous operands and an
// element-by-element one for the rest. Instantiated per compute type in elementwise_cuda_*.cu,
// so that the work spreads over several compiler processes.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <utility>

#include "kernels/elementwise.cuh"
#include "kernels/kernels.hpp"

namespace culua::detail::kernels::cuda {

template <class F>
__global__ void elementwise_strided(int64_t n, F f) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    f(i);
}

// Functors with chunk(i0, n) take kChunk consecutive elements per thread.
template <class F>
__global__ void elementwise_chunked(int64_t n, F f) {
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < chunks;
       c += stride)
    f.chunk(c * kChunk, n);
}

template <class F>
__global__ void elementwise_vector(int64_t n, F f) {
  constexpr int V = F::V;
  const int64_t nv = n / V;
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (int64_t i = t; i < nv; i += stride) f.vector(i * V);
  for (int64_t i = nv * V + t; i < n; i += stride) f(i);
}

// One vector (or, past the last whole vector, one element) per thread, 32-bit indices: for
// launches whose grid covers the work in one pass. A grid-stride loop costs a small kernel about
// 0.15 us more (H100: a graph node of a 1k-float add, 1.15 against 0.99 us).
template <class F>
__global__ void elementwise_vector_once(int n, F f) {
  constexpr int V = F::V;
  const int t = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int nv = n / V;
  if (t < nv) {
    f.vector(static_cast<int64_t>(t) * V);
  } else if (nv * V + (t - nv) < n) {
    f(nv * V + (t - nv));
  }
}

// The switch functors' kernel (BinarySwitch, UnarySwitch): the operation is picked once per thread
// (a uniform branch), then the same vectorized grid-stride loop as elementwise_vector. Held to 64
// registers (4 blocks of 256 threads per SM): the operation with the most registers sets them for
// every operation of the kernel (u8 and i8: 80, 3 blocks; the add ran at 3727 GB/s, at 64
// registers 4050 on the H200).
template <class F>
__global__ void __launch_bounds__(256, 4) elementwise_switch(int64_t n, F f) {
  f.with_op([&](const auto& g) {
    constexpr int V = F::V;
    const int64_t nv = n / V;
    const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
    const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    for (int64_t i = t; i < nv; i += stride) g.vector(i * V);
    for (int64_t i = nv * V + t; i < n; i += stride) g(i);
  });
}

// Blocks of `Kernel` (256 threads) resident on one SM, asked once per kernel. A grid-stride kernel
// gets exactly that many blocks per SM: a grid sized for 2048 threads per SM when registers allow
// fewer leaves a partial second wave (measured on an H100: the f16 add at 36 registers, 7 blocks
// per SM against 8 launched, ran at 89% of memcpy).
template <auto Kernel>
int64_t resident_blocks(int sm_count) {
  static const int per_sm = [] {
    int n = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, Kernel, 256, 0) != cudaSuccess) {
      cudaGetLastError();
      n = 0;
    }
    return n > 0 ? n : 2048 / 256;
  }();
  return static_cast<int64_t>(std::max(sm_count, 1)) * per_sm;
}

struct ElementwiseLaunch {
  const Launch& l;
  static constexpr int kBlock = 256;
  // Enough blocks for the work, at most one full wave; grid-stride loops cover the rest.
  static unsigned blocks(int64_t work, int64_t resident) {
    return static_cast<unsigned>(
        std::max<int64_t>(1, std::min((work + kBlock - 1) / kBlock, resident)));
  }
  template <class F>
  int operator()(int64_t n, const F& f) const {
    if constexpr (chunked<F>(0)) {
      elementwise_chunked<<<blocks((n + kChunk - 1) / kChunk,
                                   resident_blocks<elementwise_chunked<F>>(l.sm_count)),
                            kBlock, 0, static_cast<cudaStream_t>(l.stream)>>>(n, f);
    } else {
      elementwise_strided<<<blocks(n, resident_blocks<elementwise_strided<F>>(l.sm_count)), kBlock,
                            0, static_cast<cudaStream_t>(l.stream)>>>(n, f);
    }
    return cudaGetLastError();
  }
  template <class F>
  static constexpr bool chunked(decltype(F::kChunked)) {
    return F::kChunked;
  }
  template <class F>
  static constexpr bool chunked(...) {
    return false;
  }
  // A hot functor over aligned contiguous operands: its own vectorized kernel.
  template <class F>
  int fast(int64_t n, const F& f) const {
    const int64_t threads = n / F::V + n % F::V;
    if (threads == 0) return cudaSuccess;
    const int64_t resident = static_cast<int64_t>(std::max(l.sm_count, 1)) * 2048;
    if (threads <= resident) {
      elementwise_vector_once<<<static_cast<unsigned>((threads + kBlock - 1) / kBlock), kBlock, 0,
                                static_cast<cudaStream_t>(l.stream)>>>(static_cast<int>(n), f);
    } else {
      elementwise_vector<<<blocks(n / F::V, resident_blocks<elementwise_vector<F>>(l.sm_count)),
                           kBlock, 0, static_cast<cudaStream_t>(l.stream)>>>(n, f);
    }
    return cudaGetLastError();
  }
  // A switch functor over aligned contiguous operands: one kernel per type for all its operations.
  template <class F>
  int fast_switch(int64_t n, const F& f) const {
    const int64_t threads = n / F::V + n % F::V;
    if (threads == 0) return cudaSuccess;
    elementwise_switch<<<blocks(threads, resident_blocks<elementwise_switch<F>>(l.sm_count)),
                         kBlock, 0, static_cast<cudaStream_t>(l.stream)>>>(n, f);
    return cudaGetLastError();
  }
  static constexpr bool kVector = true;
};

// ---- two-dimensional binary operations ----------------------------------------------------------
// The general path walks any strides element by element. Two common shapes get kernels of their
// own, for binary operations whose array operands hold the compute type and whose output holds
// the result type, once the views are coalesced to 2-D rows x cols with the output's columns
// adjacent (a column-major output is handled as the transposed operation):
//  - rows: each operand's columns are adjacent or broadcast (inner stride 1 or 0): a row vector
//    added to every row, a column to every column, a padded slice. 16-byte vectors per thread.
//  - tiles: an operand is column-major (a transposed view, a:T()): it is staged through a tile in
//    shared memory, so that its reads are coalesced 16-byte vectors as the output's writes are.

struct Operand2D {
  const void* data;  // null: the scalar
  int64_t s0, s1;    // row and column strides, in elements
};

template <class S>
struct Binary2D {
  using C = compute_t<S>;
  int64_t rows, cols;
  void* out;
  int64_t os;  // the output's row stride (its column stride is 1)
  Operand2D a, b;
  C av, bv;
};

// One vector of V columns per thread; a grid-stride loop over rows * (cols / V) vectors, the
// operation picked once per thread. The output holds the operation's result type. Held to 40
// registers (6 blocks of 256 threads per SM).
template <class S, int V>
__global__ void __launch_bounds__(256, 6)
    binary_rows(BinaryOp op, Binary2D<S> p, FastDiv32 per_row) {
  using C = compute_t<S>;
  const uint32_t vpr = per_row.divisor;
  const auto total = static_cast<uint32_t>(p.rows) * vpr;
  const uint32_t stride = blockDim.x * gridDim.x;
  visit_binary(op, [&](auto o) {
    using Op = decltype(o);
    if constexpr (op_valid<Op, C>) {
      using R = decltype(Op::apply(C{}, C{}));
      using O = out_storage_t<S, R>;
      for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += stride) {
        const uint32_t r = per_row.div(i);
        const int64_t c = static_cast<int64_t>(i - r * vpr) * V;
        C x[V], y[V];
        auto load = [&](const Operand2D& q, C v, C(&dst)[V]) {
          const S* base = static_cast<const S*>(q.data);
          if (!base) {
#pragma unroll
            for (int k = 0; k < V; ++k) dst[k] = v;
          } else if (q.s1 == 0) {
            const C one = to_compute(base[r * q.s0]);
#pragma unroll
            for (int k = 0; k < V; ++k) dst[k] = one;
          } else {
            const Vec<S, V> w = *reinterpret_cast<const Vec<S, V>*>(base + r * q.s0 + c);
#pragma unroll
            for (int k = 0; k < V; ++k) dst[k] = to_compute(w.v[k]);
          }
        };
        load(p.a, p.av, x);
        load(p.b, p.bv, y);
        Vec<O, V> out;
#pragma unroll
        for (int k = 0; k < V; ++k) out.v[k] = convert<O>(apply_op<Op, S>(x[k], y[k]));
        *reinterpret_cast<Vec<O, V>*>(static_cast<O*>(p.out) + r * p.os + c) = out;
      }
    }
  });
}

// Element j of a vector of 16 bytes held as 4 words, and its assignment.
template <class S>
__device__ inline S get_element(const Vec<uint32_t, 4>& v, int j) {
  S s;
  memcpy(&s, reinterpret_cast<const unsigned char*>(v.v) + j * sizeof(S), sizeof(S));
  return s;
}
template <class S>
__device__ inline void put_element(Vec<uint32_t, 4>& v, int j, const S& s) {
  memcpy(reinterpret_cast<unsigned char*>(v.v) + j * sizeof(S), &s, sizeof(S));
}

// N elements as one store of N x sizeof(O) bytes (2 to 16), aligned for it. Through __stcg
// (st.global.cg, the default caching of stores): assigned as a struct or a uint4, a vector became
// scalar stores.
template <class O, int N>
__device__ inline void store_packed(O* dst, const O (&o)[N]) {
  constexpr size_t kBytes = N * sizeof(O);
  static_assert(kBytes == 2 || kBytes == 4 || kBytes == 8 || kBytes == 16, "a 2- to 16-byte store");
  using W = std::conditional_t<
      kBytes == 16, uint4,
      std::conditional_t<kBytes == 8, uint2,
                         std::conditional_t<kBytes == 4, unsigned int, unsigned short>>>;
  W w;
  memcpy(&w, o, kBytes);
  __stcg(reinterpret_cast<W*>(dst), w);
}

// N results of one kind as one store at element `at` of an output of dtype
// result_storage<S>(kind), aligned for it.
template <class S, int N, class T>
__device__ inline void store_vector(void* base, uint8_t kind, const T (&x)[N], int64_t at) {
  using C = compute_t<S>;
  using Re = typename real_type<C>::type;
  auto put = [&](auto* dst) {
    using O = std::remove_pointer_t<decltype(dst)>;
    O o[N];
#pragma unroll
    for (int j = 0; j < N; ++j) o[j] = convert<O>(x[j]);
    store_packed(dst + at, o);
  };
  if (kind == kResultBool) {
    put(static_cast<bool*>(base));
    return;
  }
  if constexpr (!std::is_same_v<Re, C>) {
    if (kind == kResultReal) {
      put(static_cast<Re*>(base));
      return;
    }
  }
  put(static_cast<S*>(base));
}

// Which operands of binary_tiles are column-major (staged through shared memory) and which
// accesses may use 16-byte vectors (aligned; whole tiles only).
enum : uint32_t {
  kTileATransposed = 1,
  kTileBTransposed = 2,
  kTileAVector = 4,
  kTileBVector = 8,
  kTileOutVector = 16
};
struct TileGrid {
  uint32_t tiles_r, tiles_c;  // tiles down and across the output
  uint32_t flags;
};

// One tile of TileLayout (kernels/elementwise_access.cuh: R x 64, R elements = 256 bytes) per block
// of 256 threads. First every global load of the tile is issued: a column-major operand (s0 == 1)
// as 4 vectors per thread down its columns, a row-major one as 4 vectors per thread along its
// rows, held in registers; then the column-major vectors go to shared memory, and after a barrier
// each thread computes and stores 4 vectors of the output, reading column-major operands across
// the shared tile. One round trip to memory per tile, 128 bytes of loads in flight per thread.
// Partial tiles, unaligned operands and the other layouts (a broadcast column, any strides) load
// element by element into the same registers; the scalar is no load. The output holds the
// operation's result type. Fixed: the operation, for the four arithmetic ones (their own
// kernels), or void: any operation, chosen at run time (one switch per 4 elements). Held to 64
// registers: 4 blocks of 256 threads per SM, 128 KiB of loads in flight at most, far more than the
// memory needs to stay busy.
template <class S, class Fixed>
__global__ void __launch_bounds__(TileLayout<sizeof(S)>::kThreads, 4)
    binary_tiles(BinaryOp op, Binary2D<S> p, TileGrid g) {
  using C = compute_t<S>;
  using L = TileLayout<sizeof(S)>;
  constexpr int V = L::V, R = L::R;
  // Raw storage: element types with constructors cannot be __shared__ variables.
  extern __shared__ __align__(16) unsigned char tile_storage[];
  const unsigned t = threadIdx.x;
  const bool transposed[2] = {(g.flags & kTileATransposed) != 0, (g.flags & kTileBTransposed) != 0};
  S* const tile[2] = {reinterpret_cast<S*>(tile_storage),
                      reinterpret_cast<S*>(tile_storage) + (transposed[0] ? R * L::C : 0)};
  // One tile per block: with a loop over tiles, every per-thread offset stayed in registers.
  uint32_t tr, tc;
  tile_of_block(blockIdx.x, g.tiles_r, g.tiles_c, &tr, &tc);
  const int64_t r0 = static_cast<int64_t>(tr) * R, c0 = static_cast<int64_t>(tc) * L::C;
  const bool full = r0 + R <= p.rows && c0 + L::C <= p.cols;
  const int oc = L::out_col(t);
  // 16 bytes per vector as 4 words: 2-byte elements stay two to a register.
  Vec<uint32_t, 4> held[2][4] = {};  // a scalar operand's stay zero, unread
#pragma unroll
  for (int k = 0; k < 2; ++k) {
    const Operand2D& q = k ? p.b : p.a;
    const S* base = static_cast<const S*>(q.data);
    if (!base) continue;
    const bool cm = transposed[k];
    const bool vec = full && (g.flags & (k ? kTileBVector : kTileAVector)) != 0;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      // The vector's first element; the next ones down the column of a column-major operand,
      // along the row of the others.
      const int64_t r = r0 + (cm ? L::stage_row(t) : L::out_row(t, i));
      const int64_t c = c0 + (cm ? L::stage_col(t, i) : oc);
      const S* src = base + r * q.s0 + c * q.s1;
      if (vec) {
        held[k][i] = *reinterpret_cast<const Vec<uint32_t, 4>*>(src);
      } else {
        // The vector's elements inside the output: its first `room`.
        const int64_t room = cm ? (c < p.cols ? p.rows - r : 0) : (r < p.rows ? p.cols - c : 0);
        const int64_t step = cm ? q.s0 : q.s1;
#pragma unroll
        for (int j = 0; j < V; ++j) put_element(held[k][i], j, j < room ? src[j * step] : S{});
      }
    }
  }
#pragma unroll
  for (int k = 0; k < 2; ++k) {
    if (!transposed[k]) continue;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      reinterpret_cast<Vec<uint32_t, 4>*>(
          tile[k])[L::vector_at(L::stage_row(t), L::stage_col(t, i))] = held[k][i];
    }
  }
  __syncthreads();
  // Not unrolled: the operation's code (and the f16/bf16 conversions, with their NaN paths) once,
  // not once per pass. The held vectors move down one place per pass (an index would put them in
  // local memory; selects had the compiler copy the loop's body per pass).
#pragma unroll 1
  for (int i = 0; i < 4; ++i) {
    const int rr = L::out_row(t, i);
    const int64_t r = r0 + rr, c = c0 + oc;
    const int at = L::at(rr, oc);  // element j of the vector: at + j R
    C x[2][V];
#pragma unroll
    for (int k = 0; k < 2; ++k) {
      const Operand2D& q = k ? p.b : p.a;
#pragma unroll
      for (int j = 0; j < V; ++j) {
        // Selects rather than branches (reading the shared tile is safe for any operand: tile[k]
        // is inside it); with branches on these invariants the compiler copied the loop per case.
        const S e = transposed[k] ? tile[k][at + j * R] : get_element<S>(held[k][0], j);
        x[k][j] = q.data ? to_compute(e) : (k ? p.bv : p.av);
      }
    }
    const int64_t room = r < p.rows && c < p.cols ? min(p.cols - c, int64_t{V}) : 0;
    const unsigned mask = (1u << room) - 1;  // the elements inside the output
    const int64_t off = r * p.os + c;
    const bool vec = full && (g.flags & kTileOutVector) != 0;
    if constexpr (std::is_void_v<Fixed>) {
      // At most 4 elements per switch (its code is once per element): f16/bf16 vectors in halves.
      constexpr int N = V < 4 ? V : 4;
#pragma unroll 1
      for (int h = 0; h < V / N; ++h) {
        C y[2][N];
#pragma unroll
        for (int k = 0; k < 2; ++k) {
#pragma unroll
          for (int j = 0; j < N; ++j) {
            if constexpr (N == V) {
              y[k][j] = x[k][j];
            } else {
              y[k][j] = h == 0 ? x[k][j] : x[k][N + j];
            }
          }
        }
        const unsigned m = mask >> (h * N) & ((1u << N) - 1);
        const uint8_t kind = apply_binary<S>(op, y[0], y[1], m);
        if (vec) {
          store_vector<S>(p.out, kind, y[0], off + h * N);
        } else {
#pragma unroll
          for (int j = 0; j < N; ++j) {
            if (m >> j & 1u) store_result<S>(p.out, kind, y[0][j], off + h * N + j);
          }
        }
      }
    } else {
      using O = out_storage_t<S, decltype(Fixed::apply(C{}, C{}))>;
      static_assert(sizeof(O) == sizeof(S), "the arithmetic operations keep the element type");
      O o[V];
#pragma unroll
      for (int j = 0; j < V; ++j) o[j] = convert<O>(apply_op<Fixed, S>(x[0][j], x[1][j]));
      O* dst = static_cast<O*>(p.out) + off;
      if (vec) {
        store_packed(dst, o);
      } else {
#pragma unroll
        for (int j = 0; j < V; ++j) {
          if (mask >> j & 1u) dst[j] = o[j];
        }
      }
    }
#pragma unroll
    for (int k = 0; k < 2; ++k) {
#pragma unroll
      for (int n = 0; n < 3; ++n) held[k][n] = held[k][n + 1];
    }
  }
}

// Runs a binary operation through binary_rows or binary_tiles when its coalesced layout is of
// their kind (else false: the caller takes the general path).
template <class S>
bool try_binary_2d(const ElementwiseCall& c, const Launch& l, int* result) {
  using C = compute_t<S>;
  if constexpr (std::is_same_v<S, bool> || !(kHotType<S> || kHotHalfType<S>)) {
    // bool operands are read through bytes by the general path; the dtypes off the hot list
    // (c128, the integers but i32 and i64) take it too, without 2-D kernels of their own
    // (docs/design.md, "Precompiled kernels"). f16 and bf16 keep theirs: through the general
    // path, an f16 row broadcast ran at a quarter of their speed on the H200 (760 against 3101
    // GB/s), a transposed operand at half (730 against 1435 GB/s).
    return false;
  } else {
    const auto st = dtype_of<S>();
    StridedView views[3];
    int map[2] = {-1, -1};
    int count = 1;
    views[0] = c.out;
    for (int k = 0; k < 2; ++k) {
      if (!c.in[k].is_scalar()) {
        if (c.in[k].view.dtype != st) return false;
        map[k] = count;
        views[count++] = c.in[k].view;
      }
    }
    coalesce(views, count);
    if (views[0].ndim == 2 && views[0].strides[0] == 1 && views[0].strides[1] != 1) {
      // A column-major output (an out= array's transpose): the same operation over the transposed
      // views, whose output is row-major.
      for (int v = 0; v < count; ++v) {
        std::swap(views[v].shape[0], views[v].shape[1]);
        std::swap(views[v].strides[0], views[v].strides[1]);
      }
    }
    const StridedView& out = views[0];
    if (out.ndim != 2 || out.strides[1] != 1 || out.size == 0 || out.size >= (int64_t{1} << 31)) {
      return false;
    }
    bool all_rows = true, any_transposed = false, all_adjacent = true;
    Operand2D ops[2];
    for (int k = 0; k < 2; ++k) {
      if (map[k] < 0) {
        ops[k] = Operand2D{nullptr, 0, 0};
        continue;
      }
      const StridedView& v = views[map[k]];
      ops[k] = Operand2D{v.data, v.strides[0], v.strides[1]};
      if (v.strides[1] != 0 && v.strides[1] != 1) all_rows = false;
      if (v.strides[1] != 1 || v.strides[0] != out.shape[1]) all_adjacent = false;
      if (v.strides[0] == 1 && v.strides[1] != 0 && v.strides[1] != 1) any_transposed = true;
    }
    // Contiguous everywhere (coalescing left 2 dimensions for another reason): the fast path.
    if (all_adjacent && out.strides[0] == out.shape[1]) return false;
    if (!all_rows && !any_transposed) return false;
    const auto op = static_cast<BinaryOp>(c.op);
    bool typed = false;
    visit_binary_host(op, [&](auto o) {
      using Op = decltype(o);
      if constexpr (op_valid<Op, C>) {
        using R = decltype(Op::apply(C{}, C{}));
        typed = out.dtype == dtype_of<out_storage_t<S, R>>();
      }
    });
    if (!typed) return false;
    const Binary2D<S> p{out.shape[0],
                        out.shape[1],
                        out.data,
                        out.strides[0],
                        ops[0],
                        ops[1],
                        scalar_value<S>(c.in[0].scalar),
                        scalar_value<S>(c.in[1].scalar)};
    const auto stream = static_cast<cudaStream_t>(l.stream);
    if (all_rows) {
      constexpr int V = kVecWidth<S>;
      const size_t osize = itemsize(out.dtype);
      auto vec_ok = [&](const void* base, int64_t row_stride, size_t size) {
        return reinterpret_cast<uintptr_t>(base) % (size * V) == 0 && row_stride % V == 0;
      };
      bool vector = V > 1 && p.cols % V == 0 && vec_ok(out.data, p.os, osize);
      for (const Operand2D& q : ops) {
        if (q.data && q.s1 == 1) vector = vector && vec_ok(q.data, q.s0, sizeof(S));
      }
      const int64_t width = vector ? V : 1;
      const int64_t vpr = p.cols / width;
      const int64_t total = p.rows * vpr;
      const FastDiv32 per_row(static_cast<uint32_t>(vpr));
      if (vector) {
        const unsigned blocks =
            ElementwiseLaunch::blocks(total, resident_blocks<binary_rows<S, V>>(l.sm_count));
        binary_rows<S, V><<<blocks, 256, 0, stream>>>(op, p, per_row);
      } else {
        const unsigned blocks =
            ElementwiseLaunch::blocks(total, resident_blocks<binary_rows<S, 1>>(l.sm_count));
        binary_rows<S, 1><<<blocks, 256, 0, stream>>>(op, p, per_row);
      }
    } else {
      using L = TileLayout<sizeof(S)>;
      auto aligned = [](const void* base, size_t bytes) {
        return reinterpret_cast<uintptr_t>(base) % bytes == 0;
      };
      uint32_t flags = 0;
      int staged = 0;
      for (int k = 0; k < 2; ++k) {
        const Operand2D& q = ops[k];
        if (!q.data) continue;
        // Column-major: vectors down its columns; row-major: along its rows.
        const bool cm = q.s0 == 1 && q.s1 != 1 && q.s1 != 0;
        const bool vec = cm ? q.s1 % L::V == 0 : q.s1 == 1 && q.s0 % L::V == 0;
        if (cm) {
          flags |= k ? kTileBTransposed : kTileATransposed;
          ++staged;
        }
        if (vec && aligned(q.data, 16)) flags |= k ? kTileBVector : kTileAVector;
      }
      if (p.os % L::V == 0 && aligned(out.data, L::V * itemsize(out.dtype))) {
        flags |= kTileOutVector;
      }
      const TileGrid g{static_cast<uint32_t>((p.rows + L::R - 1) / L::R),
                       static_cast<uint32_t>((p.cols + L::C - 1) / L::C), flags};
      const unsigned blocks = g.tiles_r * g.tiles_c;
      const size_t shared = static_cast<size_t>(staged) * L::kBytes;
      visit_binary_host(op, [&](auto o) {
        using Op = decltype(o);
        if constexpr (kHotArithmetic<Op>) {
          // CULUA_ELEMENTWISE_SWITCH=1: the shared kernel for these too (to test it).
          if (!switch_only()) {
            binary_tiles<S, Op><<<blocks, L::kThreads, shared, stream>>>(op, p, g);
            return;
          }
        }
        binary_tiles<S, void><<<blocks, L::kThreads, shared, stream>>>(op, p, g);
      });
    }
    *result = cudaGetLastError();
    return true;
  }
}

template <class S>
int elementwise_typed(const ElementwiseCall& c, const Launch& l) {
  if (c.kind == ElementwiseCall::Kind::Binary) {
    int result = 0;
    if (try_binary_2d<S>(c, l, &result)) return result;
  }
  return run_elementwise_typed<S>(c, ElementwiseLaunch{l});
}

}  // namespace culua::detail::kernels::cuda
