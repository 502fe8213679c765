// cu.rand / cu.randn on CUDA: one launch, each thread generating whole Philox blocks (four values,
// two for f64) in a grid-stride loop; contiguous aligned outputs are written with one vector store
// per block.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "core/backend/random_call.hpp"
#include "kernels/kernels.hpp"
#include "kernels/random.cuh"

namespace culua::detail::kernels::cuda {

namespace {

template <class R, int N>
struct alignas(sizeof(R) * N) Pack {
  R v[N];
};

template <class Fill, bool Vector>
__global__ void random_kernel(Fill f, int64_t blocks) {
  using R = std::remove_pointer_t<decltype(f.out)>;
  constexpr int kValues = Fill::kValues;
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t b = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; b < blocks;
       b += stride) {
    if constexpr (Vector) {
      if ((b + 1) * kValues <= f.count) {
        Pack<R, kValues> p;
        f.generate(b, p.v);
        reinterpret_cast<Pack<R, kValues>*>(f.out)[b] = p;
        continue;
      }
    }
    f(b);
  }
}

}  // namespace

int random(const RandomCall& c, const Launch& l) {
  if (c.out.size == 0) return cudaSuccess;
  return dispatch_random(c, [&](const auto& fill, int64_t blocks) {
    using Fill = std::decay_t<decltype(fill)>;
    using R = std::remove_pointer_t<decltype(fill.out)>;
    constexpr int kThreads = 256;
    const int64_t max_blocks = static_cast<int64_t>(std::max(l.sm_count, 1)) * 8;
    const auto grid =
        static_cast<unsigned>(std::min((blocks + kThreads - 1) / kThreads, max_blocks));
    const auto stream = static_cast<cudaStream_t>(l.stream);
    const bool aligned = reinterpret_cast<uintptr_t>(fill.out) % (sizeof(R) * Fill::kValues) == 0;
    if (fill.contiguous && aligned) {
      random_kernel<Fill, true><<<grid, kThreads, 0, stream>>>(fill, blocks);
    } else {
      random_kernel<Fill, false><<<grid, kThreads, 0, stream>>>(fill, blocks);
    }
    return static_cast<int>(cudaGetLastError());
  });
}

}  // namespace culua::detail::kernels::cuda
