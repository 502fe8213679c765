// Elementwise kernels for half, bfloat16.
#include "kernels/elementwise_cuda.cuh"

namespace culua::detail::kernels::cuda {

template int elementwise_typed<half>(const ElementwiseCall&, const Launch&);
template int elementwise_typed<bfloat16>(const ElementwiseCall&, const Launch&);

}  // namespace culua::detail::kernels::cuda
