// Elementwise kernels on the host for float, double.
#include "kernels/elementwise_host.hpp"

namespace culua::detail::kernels::host {

template void elementwise_typed<float>(const ElementwiseCall&);
template void elementwise_typed<double>(const ElementwiseCall&);

}  // namespace culua::detail::kernels::host
