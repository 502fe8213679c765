// CUDA reductions of float, double inputs.
#include "kernels/reduce_cuda.cuh"

namespace culua::detail::kernels::cuda {

template int reduce_typed<float>(ReduceOp, const reduce::ReducePlan&, const Launch&);
template int reduce_typed<double>(ReduceOp, const reduce::ReducePlan&, const Launch&);

}  // namespace culua::detail::kernels::cuda
