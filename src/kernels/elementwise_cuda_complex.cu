// Elementwise kernels for complex64, complex128.
#include "kernels/elementwise_cuda.cuh"

namespace culua::detail::kernels::cuda {

template int elementwise_typed<complex64>(const ElementwiseCall&, const Launch&);
template int elementwise_typed<complex128>(const ElementwiseCall&, const Launch&);

}  // namespace culua::detail::kernels::cuda
