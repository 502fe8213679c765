// The elementwise kernels on the host: the same functors as on CUDA, over ranges of elements split
// across the host pool.
#include "core/elementwise_call.hpp"
#include "core/error.hpp"
#include "kernels/elementwise.cuh"
#include "kernels/host_pool.hpp"
#include "kernels/kernels.hpp"

namespace culua::detail::kernels::host {

namespace {
struct Loop {
  int64_t grain;  // elements a range of the pool covers at least
  template <class F>
  int operator()(int64_t n, const F& f) const {
    if constexpr (requires { F::kChunked; }) {
      // Ranges start at multiples of kChunk, so a chunk (as one CUDA thread does) is never split.
      parallel_for(
          n, grain,
          [&](int64_t lo, int64_t hi) {
            for (int64_t i = lo; i < hi; i += kChunk) f.chunk(i, hi);
          },
          kChunk);
    } else {
      parallel_for(n, grain, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) f(i);
      });
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
    // Bytes per element: the output and up to three inputs of the compute type.
    run_elementwise_typed<S>(c, Loop{grain_for(static_cast<int64_t>(4 * sizeof(S)))});
  });
}

complex128 complex_binary(BinaryOp op, complex128 a, complex128 b) {
  switch (op) {
    case BinaryOp::Add:
      return AddOp::apply(a, b);
    case BinaryOp::Sub:
      return SubOp::apply(a, b);
    case BinaryOp::Mul:
      return MulOp::apply(a, b);
    case BinaryOp::Div:
      return DivOp::apply(a, b);
    case BinaryOp::Pow:
      return PowOp::apply(a, b);
    default:
      fail(ErrorKind::Unsupported, "complex_binary: operation {} has no complex scalar form",
           static_cast<int>(op));
  }
}

}  // namespace culua::detail::kernels::host
