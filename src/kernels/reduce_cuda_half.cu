// CUDA reductions of half, bfloat16 inputs.
#include "kernels/reduce_cuda.cuh"

namespace culua::detail::kernels::cuda {

template int reduce_typed<half>(ReduceOp, const reduce::ReducePlan&, const Launch&);
template int reduce_typed<bfloat16>(ReduceOp, const reduce::ReducePlan&, const Launch&);

}  // namespace culua::detail::kernels::cuda
