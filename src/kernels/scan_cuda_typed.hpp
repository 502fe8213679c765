// The scans that the CUDA backend compiles (scan_cuda.cuh, instantiated in scan_cuda_*.cu): one per
// accumulator type A (uint64 for bool and integers, float, double, complex64, complex128), over
// contiguous rows of A. scan_cuda.cu brings every other input and output to and from them.
#pragma once

#include <cstdint>

#include "kernels/kernels.hpp"

namespace culua::detail::kernels::cuda {

// out[m, r] = in[m, 0] + ... + in[m, r] (the product when prod) for M contiguous rows of R items.
template <class A>
int scan_rows(bool prod, const A* in, A* out, int64_t M, int64_t R, const Launch& l);

}  // namespace culua::detail::kernels::cuda
