// Placeholder for the elementwise kernels on CUDA.
#include <cuda_runtime.h>

#include "core/elementwise_call.hpp"
#include "kernels/kernels.hpp"

namespace culua::kernels::cuda {

int elementwise(const ElementwiseCall&, const Launch&) {
  return cudaErrorNotSupported;
}

}  // namespace culua::kernels::cuda
