// Elementwise kernels on the host for uint8_t, uint16_t, uint32_t, uint64_t, bool.
#include "kernels/elementwise_host.hpp"

namespace culua::detail::kernels::host {

template void elementwise_typed<uint8_t>(const ElementwiseCall&);
template void elementwise_typed<uint16_t>(const ElementwiseCall&);
template void elementwise_typed<uint32_t>(const ElementwiseCall&);
template void elementwise_typed<uint64_t>(const ElementwiseCall&);
template void elementwise_typed<bool>(const ElementwiseCall&);

}  // namespace culua::detail::kernels::host
