// Entry point of the elementwise kernels on CUDA: dispatch on the compute type to the
// instantiations in elementwise_cuda_*.cu.
#include <cuda_runtime.h>

#include "core/backend/elementwise_call.hpp"
#include "core/model/dtype.hpp"
#include "kernels/kernels.hpp"

namespace culua::detail::kernels::cuda {

template <class S>
int elementwise_typed(const ElementwiseCall& c, const Launch& l);

int elementwise(const ElementwiseCall& c, const Launch& l) {
  if (c.out.size == 0) return cudaSuccess;
  return dispatch(c.compute, [&](auto tag) {
    using S = typename decltype(tag)::type;
    return elementwise_typed<S>(c, l);
  });
}

}  // namespace culua::detail::kernels::cuda
