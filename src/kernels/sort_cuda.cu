// The CUDA entry point of sorting, searching and sets: the code of each element type
// (sort_cuda.cuh; the CUB algorithms it calls are compiled once in sort_cuda_cub.cu, the merge sort
// of complex numbers in sort_cuda_complex.cu).
#include <cuda_runtime.h>

#include "core/backend/sort_call.hpp"
#include "kernels/kernels.hpp"
#include "kernels/sort_cuda.cuh"

namespace culua::detail::kernels::cuda {

int sort(const SortCall& c, const Launch& l) {
  return dispatch(c.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return sort_typed<T>(c, l);
  });
}

}  // namespace culua::detail::kernels::cuda
