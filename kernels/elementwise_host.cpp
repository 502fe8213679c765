// The elementwise kernels on the host: the same functors as on CUDA, in a loop.
#include "core/elementwise_call.hpp"
#include "kernels/elementwise.cuh"
#include "kernels/kernels.hpp"

namespace culua::kernels::host {

namespace {
struct Loop {
  template <class F>
  int operator()(int64_t n, const F& f) const {
    if constexpr (requires { F::kChunked; }) {
      // The elements in the order of the CUDA kernel's warps (so CI runs the same stepping).
      for (int64_t g = 0; g < n; g += 32 * kChunk) {
        for (int64_t lane = 0; lane < 32; ++lane) f.chunk(g + lane, 32, n);
      }
    } else {
      for (int64_t i = 0; i < n; ++i) f(i);
    }
    return 0;
  }
  template <class F>
  int fast(int64_t n, const F& f) const {
    return (*this)(n, f);
  }
};
}  // namespace

void elementwise(const ElementwiseCall& c) {
  if (c.out.size == 0) return;
  dispatch(c.compute, [&](auto tag) {
    using S = typename decltype(tag)::type;
    run_elementwise_typed<S>(c, Loop{});
  });
}

}  // namespace culua::kernels::host
