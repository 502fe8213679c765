// Gathers, scatters and index checks on the host (gather.cuh's functor on the host pool).
#include <type_traits>

#include "kernels/gather.cuh"
#include "kernels/host_pool.hpp"
#include "kernels/kernels.hpp"

namespace culua::detail::kernels::host {

void gather(const GatherCall& c) {
  const int64_t n = c.other.size;
  if (n == 0) return;
  with_gather_element(c, [&](const auto& e) {
    if (c.mode == GatherCall::Mode::Scatter) {
      // One thread, in order: a repeated index keeps its last value, as numpy's does.
      for (int64_t i = 0; i < n; ++i) e(i);
      return;
    }
    parallel_for(n, grain_for(static_cast<int64_t>(itemsize(c.data.dtype)) * 2 + 8),
                 [&](int64_t lo, int64_t hi) {
                   for (int64_t i = lo; i < hi; ++i) e(i);
                 });
  });
}

}  // namespace culua::detail::kernels::host
