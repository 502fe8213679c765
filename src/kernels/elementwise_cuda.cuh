// The elementwise kernels on CUDA: a vectorized grid-stride kernel for contiguous operands and an
// element-by-element one for the rest. Instantiated per compute type in elementwise_cuda_*.cu,
// so that the work spreads over several compiler processes.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <type_traits>

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
// adjacent:
//  - rows: each operand's columns are adjacent or broadcast (inner stride 1 or 0): a row vector
//    added to every row, a column to every column, a padded slice. 16-byte vectors per thread.
//  - tiles: an operand is column-major (a transposed view, a:T()): it is staged through a 32 x 32
//    tile in shared memory, so that its reads are coalesced as the output's writes are.

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

// 32 x 32 output tiles, 32 x 8 threads, 4 rows each; a column-major operand (s0 == 1) is read
// along its columns into shared memory first. The output holds the operation's result type.
// Fixed: the operation, for the four arithmetic ones (their own kernels, a few registers each), or
// void: any operation, chosen at run time (one switch per tile row of 4 elements). That kernel
// holds every operation, and is held to 32 registers (8 blocks of 256 threads per SM): the
// heaviest operation's registers would otherwise halve the blocks in flight for all of them (an
// f32 add at 48 registers ran at 60% of memcpy on an H100; at 32, 67%); heavy operations may
// spill instead.
template <class S, class Fixed>
__global__ void __launch_bounds__(256, 8) binary_tiles(BinaryOp op, Binary2D<S> p) {
  using C = compute_t<S>;
  // Raw storage: element types with constructors cannot be __shared__ variables.
  __shared__ alignas(S) unsigned char storage[2 * 32 * 33 * sizeof(S)];
  auto tiles = reinterpret_cast<S(*)[32][33]>(storage);
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  const S* a = static_cast<const S*>(p.a.data);
  const S* b = static_cast<const S*>(p.b.data);
  const bool at = a && p.a.s0 == 1 && p.a.s1 != 1 && p.a.s1 != 0;
  const bool bt = b && p.b.s0 == 1 && p.b.s1 != 1 && p.b.s1 != 0;
  for (int64_t r0 = static_cast<int64_t>(blockIdx.y) * 32; r0 < p.rows;
       r0 += static_cast<int64_t>(gridDim.y) * 32) {
    for (int64_t c0 = static_cast<int64_t>(blockIdx.x) * 32; c0 < p.cols;
         c0 += static_cast<int64_t>(gridDim.x) * 32) {
      if constexpr (!std::is_void_v<Fixed>) {
        using R = decltype(Fixed::apply(C{}, C{}));
        using O = out_storage_t<S, R>;
        O* out = static_cast<O*>(p.out);
        if (r0 + 32 <= p.rows && c0 + 32 <= p.cols) {
          // A whole tile (the common case): no bounds checks, offsets from the tile's corner.
          const S* ta = at ? a + r0 + c0 * p.a.s1 : nullptr;
          const S* tb = bt ? b + r0 + c0 * p.b.s1 : nullptr;
          const S* da = a && !at ? a + r0 * p.a.s0 + c0 * p.a.s1 : nullptr;
          const S* db = b && !bt ? b + r0 * p.b.s0 + c0 * p.b.s1 : nullptr;
          O* o = out + r0 * p.os + c0;
#pragma unroll
          for (int j = 0; j < 32; j += 8) {
            if (ta) tiles[0][ty + j][tx] = ta[tx + (ty + j) * p.a.s1];
            if (tb) tiles[1][ty + j][tx] = tb[tx + (ty + j) * p.b.s1];
          }
          __syncthreads();
#pragma unroll
          for (int j = 0; j < 32; j += 8) {
            const int rr = ty + j;
            const C x = !a   ? p.av
                        : ta ? to_compute(tiles[0][tx][rr])
                             : to_compute(da[rr * p.a.s0 + tx * p.a.s1]);
            const C y = !b   ? p.bv
                        : tb ? to_compute(tiles[1][tx][rr])
                             : to_compute(db[rr * p.b.s0 + tx * p.b.s1]);
            o[rr * p.os + tx] = convert<O>(apply_op<Fixed, S>(x, y));
          }
          __syncthreads();
          continue;
        }
      }
#pragma unroll
      for (int j = 0; j < 32; j += 8) {
        const int64_t r = r0 + tx, c = c0 + ty + j;
        if (r < p.rows && c < p.cols) {
          if (at) tiles[0][ty + j][tx] = a[r + c * p.a.s1];
          if (bt) tiles[1][ty + j][tx] = b[r + c * p.b.s1];
        }
      }
      __syncthreads();
      C x[4], y[4];
      int64_t to[4] = {};
      unsigned mask = 0;
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const int j = 8 * k;
        const int64_t r = r0 + ty + j, c = c0 + tx;
        if (r < p.rows && c < p.cols) {
          x[k] = !a   ? p.av
                 : at ? to_compute(tiles[0][tx][ty + j])
                      : to_compute(a[r * p.a.s0 + c * p.a.s1]);
          y[k] = !b   ? p.bv
                 : bt ? to_compute(tiles[1][tx][ty + j])
                      : to_compute(b[r * p.b.s0 + c * p.b.s1]);
          to[k] = r * p.os + c;
          mask |= 1u << k;
        }
      }
      if constexpr (std::is_void_v<Fixed>) {
        const uint8_t kind = apply_binary<S>(op, x, y, mask);
#pragma unroll
        for (int k = 0; k < 4; ++k) {
          if (mask >> k & 1u) store_result<S>(p.out, kind, x[k], to[k]);
        }
      } else {
        using R = decltype(Fixed::apply(C{}, C{}));
        using O = out_storage_t<S, R>;
#pragma unroll
        for (int k = 0; k < 4; ++k) {
          if (mask >> k & 1u)
            static_cast<O*>(p.out)[to[k]] = convert<O>(apply_op<Fixed, S>(x[k], y[k]));
        }
      }
      __syncthreads();
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
      const dim3 block(32, 8);
      const dim3 grid(static_cast<unsigned>(std::min<int64_t>((p.cols + 31) / 32, 65535)),
                      static_cast<unsigned>(std::min<int64_t>((p.rows + 31) / 32, 65535)));
      visit_binary_host(op, [&](auto o) {
        using Op = decltype(o);
        if constexpr (std::is_same_v<Op, AddOp> || std::is_same_v<Op, SubOp> ||
                      std::is_same_v<Op, MulOp> || std::is_same_v<Op, DivOp>) {
          binary_tiles<S, Op><<<grid, block, 0, stream>>>(op, p);
        } else {
          binary_tiles<S, void><<<grid, block, 0, stream>>>(op, p);
        }
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
