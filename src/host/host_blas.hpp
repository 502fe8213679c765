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

// The threads OpenBLAS runs a large product on (the calling one included): as OpenBLAS chooses,
// from OPENBLAS_NUM_THREADS (else GOTO_NUM_THREADS, OMP_NUM_THREADS), else one per processor; not
// the host pool's size (CULUA_HOST_THREADS). They start at the first product that uses them.
int blas_threads();

// The BLAS library, the kernels and threads it runs, such as
// "OpenBLAS 0.3.21, SkylakeX kernels, 16 threads".
std::string blas_library();

}  // namespace culua::detail::host
