// The small built-in kernels launched on CUDA streams: fills, sequences, sleeps. Copies and casts
// live in cuda_copy.cu: each file is a module of its own, loaded on the first launch of one of its
// kernels (lazy loading), and a small module loads fast, so that a script's first fill or arange
// does not wait for hundreds of cast kernels to load.
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/functors.cuh"
#include "kernels/grid_launch.cuh"

namespace culua::detail::kernels::cuda {

namespace {

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
