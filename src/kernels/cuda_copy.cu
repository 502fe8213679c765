// Copies and casts on CUDA streams (cu.copy, astype, contiguous(), materialized views):
//  - contiguous source and destination of one dtype, and of the precompiled pairs of dtypes
//    (kPrecompiled below): vectors of up to 16-byte loads and stores per thread (a cast of V
//    elements per thread, V chosen so that the narrower side moves 16 bytes);
//  - a same-dtype copy between a row-major and a column-major 2-D layout (a transpose): 32 x 32
//    tiles staged through shared memory, so that both the reads and the writes are coalesced;
//  - a same-dtype strided copy: one element per thread through shape and strides (functors.cuh),
//    by element size;
//  - every other cast: one of two kernels that take both dtypes at run time (cast_dynamic and
//    cast_dynamic_strided): the load is a switch on the source dtype, the store a switch on the
//    destination dtype, and each (to, from) case is convert<To>(From) as in the host backend (no
//    intermediate type). The switches are uniform across the grid.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "kernels/functors.cuh"
#include "kernels/grid_launch.cuh"

namespace culua::detail::kernels::cuda {

namespace {

constexpr int kBlock = 256;

template <class T, int V>
struct alignas(sizeof(T) * V) VecN {
  T v[V];
};

// Elements per thread and loop step: the narrower type moves 16 bytes, the wider at most 32.
template <class To, class From>
constexpr int cast_width() {
  constexpr int small = static_cast<int>(sizeof(To) < sizeof(From) ? sizeof(To) : sizeof(From));
  constexpr int big = static_cast<int>(sizeof(To) < sizeof(From) ? sizeof(From) : sizeof(To));
  int v = small >= 16 ? 1 : 16 / small;
  while (v > 1 && big * v > 32) v /= 2;
  return v;
}

// Bool elements are read through their byte: memory never written may hold bytes other than 0
// and 1, and loading one of those as a bool is undefined.
template <class T>
using load_t = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;

template <class To, class From>
__device__ inline To cast_one(load_t<From> x) {
  if constexpr (std::is_same_v<To, From>) {
    return x;
  } else if constexpr (std::is_same_v<From, bool>) {
    return convert<To>(x != 0);
  } else {
    return convert<To>(x);
  }
}

template <class To, class From, int V>
__global__ void __launch_bounds__(kBlock) cast_vectors(int64_t n, To* out, const From* in_typed) {
  using L = load_t<From>;
  const auto* in = reinterpret_cast<const L*>(in_typed);
  const int64_t nv = n / V;
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (int64_t i = t; i < nv; i += stride) {
    const VecN<L, V> a = reinterpret_cast<const VecN<L, V>*>(in)[i];
    VecN<To, V> r;
#pragma unroll
    for (int k = 0; k < V; ++k) r.v[k] = cast_one<To, From>(a.v[k]);
    reinterpret_cast<VecN<To, V>*>(out)[i] = r;
  }
  for (int64_t i = nv * V + t; i < n; i += stride) out[i] = cast_one<To, From>(in[i]);
}

bool aligned(const void* p, size_t n) {
  return reinterpret_cast<uintptr_t>(p) % n == 0;
}

template <class To, class From, int V>
int launch_vector_kernel(int64_t n, To* out, const From* in, const Launch& l) {
  if (!aligned(out, sizeof(To) * V) || !aligned(in, sizeof(From) * V)) {
    return GridLaunch{l}(n, CastContiguous<To, From>{out, in});
  }
  static const int per_sm = [] {
    int blocks = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, cast_vectors<To, From, V>, kBlock,
                                                      0) != cudaSuccess) {
      cudaGetLastError();
      blocks = 0;
    }
    return blocks > 0 ? blocks : 2048 / kBlock;
  }();
  const int64_t resident = static_cast<int64_t>(std::max(l.sm_count, 1)) * per_sm;
  const int64_t work = std::max<int64_t>(n / V, 1);
  const auto blocks = static_cast<unsigned>(std::min((work + kBlock - 1) / kBlock, resident));
  cast_vectors<To, From, V><<<blocks, kBlock, 0, static_cast<cudaStream_t>(l.stream)>>>(n, out, in);
  return cudaGetLastError();
}

// A contiguous cast or copy through cast_vectors (CastContiguous when not aligned for it).
template <class To, class From>
int launch_vectors(int64_t n, To* out, const From* in, const Launch& l) {
  constexpr int V = cast_width<To, From>();
  if constexpr (V == 1) {
    return GridLaunch{l}(n, CastContiguous<To, From>{out, in});
  } else {
    return launch_vector_kernel<To, From, V>(n, out, in, l);
  }
}

// The pairs of distinct dtypes whose contiguous casts have kernels of their own (cast_vectors and
// an element-wise fallback for misaligned data): f32, f64, c64, i32, i64 and bool among themselves,
// and f32 to and from f16 and bf16 (docs/design.md, "Precompiled kernels").
constexpr bool precompiled_dtype(DType t) {
  return t == DType::F32 || t == DType::F64 || t == DType::C64 || t == DType::I32 ||
         t == DType::I64 || t == DType::Bool;
}
constexpr bool precompiled_pair(DType to, DType from) {
  if (to == from) return false;
  if (precompiled_dtype(to) && precompiled_dtype(from)) return true;
  const auto half_float = [](DType a, DType b) {
    return a == DType::F32 && (b == DType::F16 || b == DType::BF16);
  };
  return half_float(to, from) || half_float(from, to);
}

// Calls f(to_tag, from_tag) for a precompiled pair (false: not one; f is not called).
template <class F>
bool dispatch_precompiled(DType to, DType from, F&& f) {
  if (!precompiled_pair(to, from)) return false;
  const auto one_side = [](DType t, auto&& g) {
    switch (t) {
      case DType::F32:
        return g(type_tag<float>{});
      case DType::F64:
        return g(type_tag<double>{});
      case DType::C64:
        return g(type_tag<complex64>{});
      case DType::I32:
        return g(type_tag<int32_t>{});
      case DType::I64:
        return g(type_tag<int64_t>{});
      case DType::Bool:
        return g(type_tag<bool>{});
      case DType::F16:
        return g(type_tag<half>{});
      default:
        return g(type_tag<bfloat16>{});
    }
  };
  one_side(to, [&](auto to_tag) {
    one_side(from, [&](auto from_tag) {
      using To = typename decltype(to_tag)::type;
      using From = typename decltype(from_tag)::type;
      // (Only the listed pairs: f16 and bf16 pair with f32 alone.)
      constexpr bool small_to = is_small_float<To>::value, small_from = is_small_float<From>::value;
      if constexpr (std::is_same_v<To, From> || (small_to && !std::is_same_v<From, float>) ||
                    (small_from && !std::is_same_v<To, float>)) {
        return;
      } else {
        f(to_tag, from_tag);
      }
    });
  });
  return true;
}

// --- casts with both dtypes chosen at run time ------------------------------------------------

// Elements per group in cast_dynamic: a thread converts 4 consecutive elements per step, read and
// written as one vector when the element is at most 4 bytes and the pointer is aligned for it.
constexpr int kGroup = 4;

// Stores x (a source element as loaded, load_t<From>) converted to `to` at out[i].
template <class From>
__device__ inline void store_as(DType to, void* out, int64_t i, load_t<From> x) {
  dispatch(to, [&](auto tag) {
    using To = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<To, From>) static_cast<To*>(out)[i] = cast_one<To, From>(x);
  });
}

// The same for kGroup elements at out[i0 ...]: one switch per group, one vector store when
// `vector` (the caller checked the alignment; only for elements of at most 4 bytes).
template <class From>
__device__ inline void store_group_as(DType to, void* out, int64_t i0, const load_t<From>* x,
                                      bool vector) {
  dispatch(to, [&](auto tag) {
    using To = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<To, From>) {
      VecN<To, kGroup> r;
#pragma unroll
      for (int k = 0; k < kGroup; ++k) r.v[k] = cast_one<To, From>(x[k]);
      To* o = static_cast<To*>(out) + i0;
      if constexpr (sizeof(To) <= 4) {
        if (vector) {
          *reinterpret_cast<VecN<To, kGroup>*>(o) = r;
          return;
        }
      }
#pragma unroll
      for (int k = 0; k < kGroup; ++k) o[k] = r.v[k];
    }
  });
}

struct DynamicCast {
  int64_t n;
  void* out;
  const void* in;
  DType to;
  DType from;
  bool vector_in;   // `in` aligned for a group of source elements read as one vector
  bool vector_out;  // `out` likewise for the converted group
};

// (A function of its own for each source dtype: ptxas takes far longer over one function holding
// all of them.)
template <class From>
__device__ __noinline__ void cast_dynamic_from(DynamicCast c) {
  using L = load_t<From>;
  const auto* in = static_cast<const L*>(c.in);
  const int64_t groups = c.n / kGroup;
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (int64_t g = t; g < groups; g += stride) {
    L x[kGroup];
    if constexpr (sizeof(L) <= 4) {
      if (c.vector_in) {
        const VecN<L, kGroup> a = reinterpret_cast<const VecN<L, kGroup>*>(in)[g];
#pragma unroll
        for (int k = 0; k < kGroup; ++k) x[k] = a.v[k];
      } else {
#pragma unroll
        for (int k = 0; k < kGroup; ++k) x[k] = in[g * kGroup + k];
      }
    } else {
#pragma unroll
      for (int k = 0; k < kGroup; ++k) x[k] = in[g * kGroup + k];
    }
    store_group_as<From>(c.to, c.out, g * kGroup, x, c.vector_out);
  }
  for (int64_t i = groups * kGroup + t; i < c.n; i += stride) store_as<From>(c.to, c.out, i, in[i]);
}

// Contiguous source and destination, any pair of dtypes.
__global__ void __launch_bounds__(kBlock) cast_dynamic(DynamicCast c) {
  dispatch(c.from, [&](auto tag) {
    using From = typename decltype(tag)::type;
    cast_dynamic_from<From>(c);
  });
}

struct DynamicStrided {
  int64_t n;
  void* out;
  const void* in;
  Indexer out_idx;
  Indexer in_idx;
  DType to;
  DType from;
};

// Any layout, any pair of dtypes: one element per thread through shape and strides.
__global__ void __launch_bounds__(kBlock) cast_dynamic_strided(DynamicStrided c) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < c.n;
       i += stride) {
    const int64_t src = c.in_idx(i), dst = c.out_idx(i);
    dispatch(c.from, [&](auto tag) {
      using From = typename decltype(tag)::type;
      store_as<From>(c.to, c.out, dst, static_cast<const load_t<From>*>(c.in)[src]);
    });
  }
}

// The grid of GridLaunch (grid_launch.cuh): enough blocks to fill every SM several times over.
unsigned grid_for(int64_t work, const Launch& l) {
  const int64_t max_blocks = static_cast<int64_t>(std::max(l.sm_count, 1)) * 32;
  return static_cast<unsigned>(std::clamp<int64_t>((work + kBlock - 1) / kBlock, 1, max_blocks));
}

int launch_dynamic(const StridedView& dst, const StridedView& src, const Launch& l) {
  const auto stream = static_cast<cudaStream_t>(l.stream);
  const int64_t n = dst.size;
  if (dst.is_contiguous() && src.is_contiguous()) {
    const size_t in_size = itemsize(src.dtype), out_size = itemsize(dst.dtype);
    const DynamicCast c{n,
                        dst.data,
                        src.data,
                        dst.dtype,
                        src.dtype,
                        in_size <= 4 && aligned(src.data, in_size * kGroup),
                        out_size <= 4 && aligned(dst.data, out_size * kGroup)};
    cast_dynamic<<<grid_for(std::max<int64_t>(n / kGroup, 1), l), kBlock, 0, stream>>>(c);
    return cudaGetLastError();
  }
  const DynamicStrided c{n, dst.data, src.data, Indexer(dst), Indexer(src), dst.dtype, src.dtype};
  cast_dynamic_strided<<<grid_for(n, l), kBlock, 0, stream>>>(c);
  return cudaGetLastError();
}

// out[r * out_row + c] = in[r + c * in_col] for r < rows, c < cols: a transpose through 32 x 32
// tiles; 32 x 8 threads per block, 4 elements each.
template <class T>
__global__ void __launch_bounds__(kBlock)
    transpose_tiles(int64_t rows, int64_t cols, T* out, int64_t out_row, const T* in,
                    int64_t in_col) {
  __shared__ T tile[32][33];
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  for (int64_t r0 = static_cast<int64_t>(blockIdx.y) * 32; r0 < rows;
       r0 += static_cast<int64_t>(gridDim.y) * 32) {
    for (int64_t c0 = static_cast<int64_t>(blockIdx.x) * 32; c0 < cols;
         c0 += static_cast<int64_t>(gridDim.x) * 32) {
      // tile[cl][rl] holds element (r0 + rl, c0 + cl); the loads walk rows (unit stride in `in`).
#pragma unroll
      for (int j = 0; j < 32; j += 8) {
        const int64_t r = r0 + tx, c = c0 + ty + j;
        if (r < rows && c < cols) tile[ty + j][tx] = in[r + c * in_col];
      }
      __syncthreads();
#pragma unroll
      for (int j = 0; j < 32; j += 8) {
        const int64_t r = r0 + ty + j, c = c0 + tx;
        if (r < rows && c < cols) out[r * out_row + c] = tile[tx][ty + j];
      }
      __syncthreads();
    }
  }
}

// A same-dtype 2-D copy where one side is row-major and the other column-major (after coalescing):
// the tiled transpose. False when the layout is not of that kind.
bool try_transpose(const StridedView& dst, const StridedView& src, const Launch& l, int* result) {
  if (dst.ndim != 2 || dst.dtype != src.dtype) return false;
  int64_t rows = dst.shape[0], cols = dst.shape[1];
  int64_t out_row = 0, in_col = 0;
  if (dst.strides[1] == 1 && src.strides[0] == 1) {
    out_row = dst.strides[0];
    in_col = src.strides[1];
  } else if (dst.strides[0] == 1 && src.strides[1] == 1) {
    // The same with the dimensions swapped: dst is column-major, src row-major.
    std::swap(rows, cols);
    out_row = dst.strides[1];
    in_col = src.strides[0];
  } else {
    return false;
  }
  if (out_row <= 0 || in_col <= 0) return false;
  const dim3 block(32, 8);
  const dim3 grid(static_cast<unsigned>(std::min<int64_t>((cols + 31) / 32, INT32_MAX)),
                  static_cast<unsigned>(std::min<int64_t>((rows + 31) / 32, 65535)));
  const auto stream = static_cast<cudaStream_t>(l.stream);
  *result = dispatch_bytes(itemsize(dst.dtype), [&](auto tag) {
    using T = typename decltype(tag)::type;
    transpose_tiles<T><<<grid, block, 0, stream>>>(rows, cols, static_cast<T*>(dst.data), out_row,
                                                   static_cast<const T*>(src.data), in_col);
    return static_cast<int>(cudaGetLastError());
  });
  return true;
}

}  // namespace

int copy_cast(const StridedView& dst, const StridedView& src, const Launch& l) {
  if (dst.size == 0) return cudaSuccess;
  StridedView v[2] = {dst, src};
  coalesce(v, 2);
  if (v[0].is_contiguous() && v[1].is_contiguous()) {
    if (v[0].dtype == v[1].dtype) {
      return dispatch_bytes(itemsize(v[0].dtype), [&](auto tag) {
        using T = typename decltype(tag)::type;
        return launch_vectors(v[0].size, static_cast<T*>(v[0].data),
                              static_cast<const T*>(v[1].data), l);
      });
    }
    int result = 0;
    if (dispatch_precompiled(v[0].dtype, v[1].dtype, [&](auto to_tag, auto from_tag) {
          using To = typename decltype(to_tag)::type;
          using From = typename decltype(from_tag)::type;
          result = launch_vectors(v[0].size, static_cast<To*>(v[0].data),
                                  static_cast<const From*>(v[1].data), l);
        })) {
      return result;
    }
    return launch_dynamic(v[0], v[1], l);
  }
  if (v[0].dtype != v[1].dtype) return launch_dynamic(v[0], v[1], l);
  int result = 0;
  if (try_transpose(v[0], v[1], l, &result)) return result;
  // A same-dtype copy through shape and strides, by element size.
  return dispatch_bytes(itemsize(v[0].dtype), [&](auto tag) {
    using T = typename decltype(tag)::type;
    return GridLaunch{l}(
        v[0].size, CastStrided<T, T>{static_cast<T*>(v[0].data), static_cast<const T*>(v[1].data),
                                     Indexer(v[0]), Indexer(v[1])});
  });
}

}  // namespace culua::detail::kernels::cuda
