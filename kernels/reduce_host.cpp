// Placeholder for the reduce kernels on the host.
#include "core/error.hpp"
#include "core/reduce_call.hpp"
#include "kernels/kernels.hpp"

namespace culua::kernels::host {

void reduce(const ReduceCall&) {
  fail(ErrorKind::Unsupported, "reduce is not implemented yet");
}

}  // namespace culua::kernels::host
