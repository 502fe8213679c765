// The per-type entry points of the CUDA scans (scan_cuda.cuh, scan_cuda_*.cu).
#pragma once

#include "core/scan_call.hpp"
#include "kernels/kernels.hpp"

namespace culua::detail::kernels::cuda {

template <class T>
int scan_typed(const ScanCall& c, const Launch& l);

}  // namespace culua::detail::kernels::cuda
