// The CUDA scans' entry point: the kernels of the input's type (scan_cuda.cuh, instantiated per
// group of types in scan_cuda_*.cu, apart from the reductions to keep their compile times down).
#include <cuda_runtime.h>

#include "core/scan_call.hpp"
#include "kernels/kernels.hpp"
#include "kernels/scan_cuda_typed.hpp"

namespace culua::detail::kernels::cuda {

int scan(const ScanCall& c, const Launch& l) {
  if (c.out.dtype != scan_result_dtype(c.op, c.in.dtype)) return cudaErrorInvalidValue;
  return dispatch(c.in.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return scan_typed<T>(c, l);
  });
}

}  // namespace culua::detail::kernels::cuda
