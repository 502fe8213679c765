// Copies and casts on CUDA streams (cu.copy, astype, contiguous(), materialized views):
//  - contiguous source and destination: vectors of up to 16-byte loads and stores per thread
//    (a cast of V elements per thread, V chosen so that the narrower side moves 16 bytes);
//  - a same-dtype copy between a row-major and a column-major 2-D layout (a transpose): 32 x 32
//    tiles staged through shared memory, so that both the reads and the writes are coalesced;
//  - anything else: one element per thread through shape and strides (functors.cuh).
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

template <class To, class From>
int launch_vectors(int64_t n, To* out, const From* in, const Launch& l) {
  constexpr int V = cast_width<To, From>();
  if (V == 1 || !aligned(out, sizeof(To) * V) || !aligned(in, sizeof(From) * V)) {
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
    return dispatch(v[0].dtype, [&](auto to_tag) {
      return dispatch(v[1].dtype, [&](auto from_tag) {
        using To = typename decltype(to_tag)::type;
        using From = typename decltype(from_tag)::type;
        return launch_vectors(v[0].size, static_cast<To*>(v[0].data),
                              static_cast<const From*>(v[1].data), l);
      });
    });
  }
  int result = 0;
  if (try_transpose(v[0], v[1], l, &result)) return result;
  return run_copy_cast(dst, src, GridLaunch{l});
}

}  // namespace culua::detail::kernels::cuda
