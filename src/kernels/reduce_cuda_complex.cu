// CUDA reductions of complex64, complex128 inputs.
#include "kernels/reduce_cuda.cuh"

namespace culua::detail::kernels::cuda {

template int reduce_typed<complex64>(ReduceOp, const reduce::ReducePlan&, const Launch&);
template int reduce_typed<complex128>(ReduceOp, const reduce::ReducePlan&, const Launch&);

}  // namespace culua::detail::kernels::cuda
