// The elementwise kernels on the host: the same functors as on CUDA, in a loop.
#include "core/elementwise_call.hpp"
#include "core/error.hpp"
#include "kernels/elementwise.cuh"
#include "kernels/kernels.hpp"

namespace culua::detail::kernels::host {

namespace {
struct Loop {
  template <class F>
  int operator()(int64_t n, const F& f) const {
    if constexpr (requires { F::kChunked; }) {
      for (int64_t i = 0; i < n; i += kChunk) f.chunk(i, n);  // as one CUDA thread does
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
