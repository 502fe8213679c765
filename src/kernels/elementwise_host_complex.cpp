// Elementwise kernels on the host for complex64, complex128.
#include "kernels/elementwise_host.hpp"

namespace culua::detail::kernels::host {

template void elementwise_typed<complex64>(const ElementwiseCall&);
template void elementwise_typed<complex128>(const ElementwiseCall&);

}  // namespace culua::detail::kernels::host
