#include "host/host_blas.hpp"

#include "core/blas_call.hpp"
#include "core/error.hpp"

namespace culua::host {

void blas_matmul(const MatmulCall&) {
  fail(ErrorKind::Unsupported, "matmul is not implemented yet");
}

void blas_dot(const DotCall&) {
  fail(ErrorKind::Unsupported, "dot is not implemented yet");
}

}  // namespace culua::host
