// The built-in kernels launched on CUDA streams.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "kernels/functors.cuh"
#include "kernels/kernels.hpp"

namespace culua::detail::kernels::cuda {

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

__device__ inline uint64_t global_timer_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void spin(uint64_t ns) {
  const uint64_t start = global_timer_ns();
  while (global_timer_ns() - start < ns) __nanosleep(1000);
}

__global__ void write_invalid_address(int* p) {
  *p = 1;
}

}  // namespace

int fill(const StridedView& dst, const void* value, const Launch& l) {
  if (dst.size == 0) return cudaSuccess;
  if (dst.is_contiguous()) {
    const size_t n = itemsize(dst.dtype);
    const auto* b = static_cast<const unsigned char*>(value);
    bool uniform = true;
    for (size_t i = 1; i < n; ++i) uniform = uniform && b[i] == b[0];
    if (uniform) {
      return cudaMemsetAsync(dst.data, b[0], static_cast<size_t>(dst.size) * n,
                             static_cast<cudaStream_t>(l.stream));
    }
  }
  return run_fill(dst, value, GridLaunch{l});
}

int copy_cast(const StridedView& dst, const StridedView& src, const Launch& l) {
  if (dst.size == 0) return cudaSuccess;
  return run_copy_cast(dst, src, GridLaunch{l});
}

int sequence(const StridedView& dst, const SequenceSpec& spec, const Launch& l) {
  if (dst.size == 0) return cudaSuccess;
  return run_sequence(dst, spec, GridLaunch{l});
}

int sleep(double seconds, const Launch& l) {
  spin<<<1, 1, 0, static_cast<cudaStream_t>(l.stream)>>>(static_cast<uint64_t>(seconds * 1e9));
  return cudaGetLastError();
}

int fault(const Launch& l) {
  write_invalid_address<<<1, 1, 0, static_cast<cudaStream_t>(l.stream)>>>(
      reinterpret_cast<int*>(uintptr_t{0x10}));
  return cudaGetLastError();
}

}  // namespace culua::detail::kernels::cuda
