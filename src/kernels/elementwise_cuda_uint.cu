// Elementwise kernels for uint8_t, uint16_t, uint32_t, uint64_t, bool.
#include "kernels/elementwise_cuda.cuh"

namespace culua::detail::kernels::cuda {

template int elementwise_typed<uint8_t>(const ElementwiseCall&, const Launch&);
template int elementwise_typed<uint16_t>(const ElementwiseCall&, const Launch&);
template int elementwise_typed<uint32_t>(const ElementwiseCall&, const Launch&);
template int elementwise_typed<uint64_t>(const ElementwiseCall&, const Launch&);
template int elementwise_typed<bool>(const ElementwiseCall&, const Launch&);

}  // namespace culua::detail::kernels::cuda
