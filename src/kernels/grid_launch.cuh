// A grid-stride launch of an element functor (functors.cuh) on a CUDA stream, shared by the small
// built-in kernel files.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "kernels/kernels.hpp"

namespace culua::detail::kernels::cuda {
// Each file that includes this gets its own kernels (no host stub shared between modules).
namespace {

template <class F>
__global__ void for_each_index(int64_t n, F f) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    f(i);
  }
}

struct GridLaunch {
  const Launch& l;
  template <class F>
  int operator()(int64_t n, const F& f) const {
    if (n == 0) return cudaSuccess;
    constexpr int kBlock = 256;
    // Enough resident blocks to fill every SM several times over; a grid-stride loop covers the
    // rest.
    const int64_t max_blocks = static_cast<int64_t>(std::max(l.sm_count, 1)) * 32;
    const int64_t blocks = std::min((n + kBlock - 1) / kBlock, max_blocks);
    for_each_index<<<static_cast<unsigned>(blocks), kBlock, 0,
                     static_cast<cudaStream_t>(l.stream)>>>(n, f);
    return cudaGetLastError();
  }
};

}  // namespace
}  // namespace culua::detail::kernels::cuda
