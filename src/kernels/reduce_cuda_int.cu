// CUDA reductions of int8_t, int16_t, int32_t, int64_t inputs.
#include "kernels/reduce_cuda.cuh"

namespace culua::detail::kernels::cuda {

template int reduce_typed<int8_t>(ReduceOp, const reduce::ReducePlan&, const Launch&);
template int reduce_typed<int16_t>(ReduceOp, const reduce::ReducePlan&, const Launch&);
template int reduce_typed<int32_t>(ReduceOp, const reduce::ReducePlan&, const Launch&);
template int reduce_typed<int64_t>(ReduceOp, const reduce::ReducePlan&, const Launch&);

}  // namespace culua::detail::kernels::cuda
