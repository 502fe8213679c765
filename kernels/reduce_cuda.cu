// Placeholder for the reduce kernels on CUDA.
#include <cuda_runtime.h>

#include "core/reduce_call.hpp"
#include "kernels/kernels.hpp"

namespace culua::kernels::cuda {

int reduce(const ReduceCall&, const Launch&) {
  return cudaErrorNotSupported;
}

}  // namespace culua::kernels::cuda
