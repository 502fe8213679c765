// Placeholder for the random kernels on CUDA.
#include <cuda_runtime.h>

#include "core/random_call.hpp"
#include "kernels/kernels.hpp"

namespace culua::kernels::cuda {

int random(const RandomCall&, const Launch&) {
  return cudaErrorNotSupported;
}

}  // namespace culua::kernels::cuda
