// The dot product of integer vectors on CUDA (cuBLAS has none): products summed in 64-bit modular
// arithmetic, so the result (wrapped to the dtype, as numpy does) does not depend on the order.
#pragma once

#include "core/backend/blas_call.hpp"

namespace culua::detail::kernels::cuda {

// Queued on `stream` (a cudaStream_t); returns the cudaError_t of the launch.
int integer_dot(const DotCall& c, void* stream);

}  // namespace culua::detail::kernels::cuda
