// CUDA reductions of uint8_t, uint16_t, uint32_t, uint64_t, bool inputs.
#include "kernels/reduce_cuda.cuh"

namespace culua::detail::kernels::cuda {

template int reduce_typed<uint8_t>(ReduceOp, const reduce::ReducePlan&, const Launch&);
template int reduce_typed<uint16_t>(ReduceOp, const reduce::ReducePlan&, const Launch&);
template int reduce_typed<uint32_t>(ReduceOp, const reduce::ReducePlan&, const Launch&);
template int reduce_typed<uint64_t>(ReduceOp, const reduce::ReducePlan&, const Launch&);
template int reduce_typed<bool>(ReduceOp, const reduce::ReducePlan&, const Launch&);

}  // namespace culua::detail::kernels::cuda
