// Matrix products of integer and bool arrays (cuBLAS and OpenBLAS have none for most integer
// types): C = alpha op(A) op(B) + beta C in the call's BLAS terms (core/backend/blas_call.hpp),
// every batch of the call. Results are those of numpy: wrapping in the result dtype, bool as the or
// of ands.
#pragma once

#include "core/backend/blas_call.hpp"

namespace culua::detail::kernels {

namespace host {
// On the calling thread (host backend workers).
void integer_gemm(const MatmulCall& c);
}  // namespace host

#if defined(CULUA_HAVE_CUDA)
namespace cuda {
// A tiled shared-memory kernel queued on `stream` (a cudaStream_t), one launch per strided batch of
// the call; returns the cudaError_t of the first failed launch (as int), else 0.
int integer_gemm(const MatmulCall& c, void* stream);
}  // namespace cuda
#endif

}  // namespace culua::detail::kernels
