// The CUDA entry point of sorting, searching and sets: the kernels of the element type
// (sort_cuda.cuh, instantiated per group of types in sort_cuda_*.cu).
#include <cuda_runtime.h>

#include "core/sort_call.hpp"
#include "kernels/kernels.hpp"

namespace culua::detail::kernels::cuda {

template <class T>
int sort_typed(const SortCall& c, const Launch& l);

int sort(const SortCall& c, const Launch& l) {
  return dispatch(c.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return sort_typed<T>(c, l);
  });
}

}  // namespace culua::detail::kernels::cuda
