// The CUDA reductions' entry point: the plan, then the kernels of the input's type
// (reduce_cuda.cuh, instantiated per group of types in reduce_cuda_*.cu).
#include <cuda_runtime.h>

#include "core/backend/reduce_call.hpp"
#include "kernels/kernels.hpp"
#include "kernels/reduce.cuh"
#include "kernels/reduce_cuda_typed.hpp"

namespace culua::detail::kernels::cuda {

int reduce(const ReduceCall& c, const Launch& l) {
  if (c.out.dtype != reduce_result_dtype(c.op, c.in.dtype)) return cudaErrorInvalidValue;
  const reduce::ReducePlan p = reduce::make_plan(c);
  if (!p.full && p.M == 0) return cudaSuccess;
  return dispatch(c.in.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return reduce_typed<T>(c.op, p, l);
  });
}

}  // namespace culua::detail::kernels::cuda
