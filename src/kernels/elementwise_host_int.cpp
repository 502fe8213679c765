// Elementwise kernels on the host for int8_t, int16_t, int32_t, int64_t.
#include "kernels/elementwise_host.hpp"

namespace culua::detail::kernels::host {

template void elementwise_typed<int8_t>(const ElementwiseCall&);
template void elementwise_typed<int16_t>(const ElementwiseCall&);
template void elementwise_typed<int32_t>(const ElementwiseCall&);
template void elementwise_typed<int64_t>(const ElementwiseCall&);

}  // namespace culua::detail::kernels::host
