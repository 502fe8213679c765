// cu.rand / cu.randn on the host (host backend workers, and host arrays): the Philox blocks are
// counter-based, each independent of the others, so they are split across the host pool and give
// the same numbers whatever its size.
#include "core/backend/random_call.hpp"
#include "core/ops/random.hpp"
#include "kernels/host_pool.hpp"
#include "kernels/kernels.hpp"
#include "kernels/random.cuh"

namespace culua::detail::kernels::host {

void random(const RandomCall& c) {
  if (c.out.size == 0) return;
  dispatch_random(c, [](const auto& fill, int64_t blocks) {
    // A block costs about as much as moving 64 bytes (ten Philox rounds, a few values).
    parallel_for(blocks, grain_for(64), [&](int64_t lo, int64_t hi) {
      for (int64_t b = lo; b < hi; ++b) fill(b);
    });
  });
}

}  // namespace culua::detail::kernels::host

namespace culua::detail::random_detail {

std::array<uint32_t, 4> philox4x32_10(std::array<uint32_t, 4> counter,
                                      std::array<uint32_t, 2> key) {
  const kernels::PhiloxBlock b =
      kernels::philox4x32_10(counter[0], counter[1], counter[2], counter[3], key[0], key[1]);
  return {b.w[0], b.w[1], b.w[2], b.w[3]};
}

double log(double x) {
  return kernels::random_log(x);
}

void sincos_turns(double u, double* s, double* c) {
  kernels::random_sincos_turns(u, s, c);
}

}  // namespace culua::detail::random_detail
