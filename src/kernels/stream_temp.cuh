// Temporary device memory of one backend call, from the device's stream-ordered pool, freed in
// stream order when the call's work is queued (the sorts and the scans use it).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "kernels/kernels.hpp"

namespace culua::detail::kernels::cuda {

class Temp {
 public:
  explicit Temp(const Launch& l) : l_(l) {}
  ~Temp() {
    for (void* p : ptrs_) cudaFreeAsync(p, stream());
  }
  Temp(const Temp&) = delete;
  Temp& operator=(const Temp&) = delete;

  template <class U>
  cudaError_t get(U** out, int64_t count) {
    return bytes(reinterpret_cast<void**>(out), static_cast<size_t>(count) * sizeof(U));
  }
  cudaError_t bytes(void** out, size_t n) {
    *out = nullptr;
    if (n == 0) n = 16;
    void* p = nullptr;
    const cudaError_t e =
        l_.pool ? cudaMallocFromPoolAsync(&p, n, static_cast<cudaMemPool_t>(l_.pool), stream())
                : cudaMallocAsync(&p, n, stream());
    if (e != cudaSuccess) return e;
    ptrs_.push_back(p);
    *out = p;
    return cudaSuccess;
  }
  cudaStream_t stream() const { return static_cast<cudaStream_t>(l_.stream); }

 private:
  const Launch& l_;
  std::vector<void*> ptrs_;
};

}  // namespace culua::detail::kernels::cuda
