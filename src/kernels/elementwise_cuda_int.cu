// Elementwise kernels for int8_t, int16_t, int32_t, int64_t.
#include "kernels/elementwise_cuda.cuh"

namespace culua::detail::kernels::cuda {

template int elementwise_typed<int8_t>(const ElementwiseCall&, const Launch&);
template int elementwise_typed<int16_t>(const ElementwiseCall&, const Launch&);
template int elementwise_typed<int32_t>(const ElementwiseCall&, const Launch&);
template int elementwise_typed<int64_t>(const ElementwiseCall&, const Launch&);

}  // namespace culua::detail::kernels::cuda
