#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/integer_dot.hpp"

namespace culua::detail::kernels::cuda {

namespace {

constexpr int kThreads = 512;

// One block: every thread sums a strided share, then a tree in shared memory. Integer dots are
// rare and small; one block keeps this free of scratch memory and atomics.
template <class T>
__global__ void integer_dot_kernel(int64_t n, const T* x, int64_t incx, const T* y, int64_t incy,
                                   T* result) {
  __shared__ uint64_t partial[kThreads];
  uint64_t sum = 0;
  for (int64_t i = threadIdx.x; i < n; i += kThreads) {
    sum += static_cast<uint64_t>(static_cast<int64_t>(x[i * incx])) *
           static_cast<uint64_t>(static_cast<int64_t>(y[i * incy]));
  }
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int width = kThreads / 2; width > 0; width /= 2) {
    if (static_cast<int>(threadIdx.x) < width) partial[threadIdx.x] += partial[threadIdx.x + width];
    __syncthreads();
  }
  if (threadIdx.x == 0) *result = static_cast<T>(partial[0]);
}

template <class T>
int launch(const DotCall& c, cudaStream_t s) {
  integer_dot_kernel<T><<<1, kThreads, 0, s>>>(c.n, static_cast<const T*>(c.x), c.incx,
                                               static_cast<const T*>(c.y), c.incy,
                                               static_cast<T*>(c.result));
  return static_cast<int>(cudaGetLastError());
}

}  // namespace

int integer_dot(const DotCall& c, void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  switch (c.dtype) {
    case DType::I8:
      return launch<int8_t>(c, s);
    case DType::I16:
      return launch<int16_t>(c, s);
    case DType::I32:
      return launch<int32_t>(c, s);
    case DType::I64:
      return launch<int64_t>(c, s);
    case DType::U8:
      return launch<uint8_t>(c, s);
    case DType::U16:
      return launch<uint16_t>(c, s);
    case DType::U32:
      return launch<uint32_t>(c, s);
    case DType::U64:
      return launch<uint64_t>(c, s);
    default:
      return static_cast<int>(cudaErrorInvalidValue);
  }
}

}  // namespace culua::detail::kernels::cuda
