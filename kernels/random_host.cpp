// Placeholder for the random kernels on the host.
#include "core/error.hpp"
#include "core/random_call.hpp"
#include "kernels/kernels.hpp"

namespace culua::kernels::host {

void random(const RandomCall&) {
  fail(ErrorKind::Unsupported, "random is not implemented yet");
}

}  // namespace culua::kernels::host
