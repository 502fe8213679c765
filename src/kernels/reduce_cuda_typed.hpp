// The per-type entry points of the CUDA reductions (reduce_cuda.cuh, reduce_cuda_*.cu).
#pragma once

#include "kernels/kernels.hpp"
#include "kernels/reduce.cuh"

namespace culua::detail::kernels::cuda {

template <class T>
int reduce_typed(ReduceOp op, const reduce::ReducePlan& p, const Launch& l);

}  // namespace culua::detail::kernels::cuda
