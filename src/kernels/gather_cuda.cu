// Gathers, scatters and index checks on CUDA streams (gather.cuh's functor, one element per
// thread in a grid-stride loop).
#include "kernels/gather.cuh"
#include "kernels/grid_launch.cuh"

namespace culua::detail::kernels::cuda {

int gather(const GatherCall& c, const Launch& l) {
  return with_gather_element(c, [&](const auto& e) { return GridLaunch{l}(c.other.size, e); });
}

}  // namespace culua::detail::kernels::cuda
