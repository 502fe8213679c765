// Matrix products on the host backend through OpenBLAS (CBLAS).
#pragma once

#include <cstddef>
#include <string>

namespace culua::detail {
struct MatmulCall;
struct DotCall;
}  // namespace culua::detail

namespace culua::detail::host {

void blas_matmul(const MatmulCall& c);
void blas_dot(const DotCall& c);
// The most host memory blas_matmul / blas_dot keep while they run (core/base/scratch.hpp): the list
// of a batch's products, half-precision operands widened to f32, the partial sums of a long dot.
// The buffers OpenBLAS keeps for itself (allocated once, per thread) are not counted.
size_t blas_scratch_bytes(const MatmulCall& c);
size_t blas_scratch_bytes(const DotCall& c);

// Matrix products inside OpenBLAS at once: $CULUA_HOST_BLAS_CALLS (1 to 64), else 16; a bad value
// raises (checked when cu loads).
int blas_calls();

// The BLAS library and the kernels it runs, such as "OpenBLAS 0.3.21, SkylakeX kernels".
std::string blas_library();

}  // namespace culua::detail::host
