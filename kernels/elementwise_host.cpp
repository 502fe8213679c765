// Placeholder for the elementwise kernels on the host.
#include "core/elementwise_call.hpp"
#include "core/error.hpp"
#include "kernels/kernels.hpp"

namespace culua::kernels::host {

void elementwise(const ElementwiseCall&) {
  fail(ErrorKind::Unsupported, "elementwise math is not implemented yet");
}

}  // namespace culua::kernels::host
