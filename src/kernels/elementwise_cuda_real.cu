// Elementwise kernels for float, double.
#include "kernels/elementwise_cuda.cuh"

namespace culua::detail::kernels::cuda {

template int elementwise_typed<float>(const ElementwiseCall&, const Launch&);
template int elementwise_typed<double>(const ElementwiseCall&, const Launch&);

}  // namespace culua::detail::kernels::cuda
