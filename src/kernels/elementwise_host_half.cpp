// Elementwise kernels on the host for half, bfloat16.
#include "kernels/elementwise_host.hpp"

namespace culua::detail::kernels::host {

template void elementwise_typed<half>(const ElementwiseCall&);
template void elementwise_typed<bfloat16>(const ElementwiseCall&);

}  // namespace culua::detail::kernels::host
