// Entry point of the elementwise kernels on the host: dispatch on the compute type to the
// instantiations in elementwise_host_*.cpp.
#include "core/backend/elementwise_call.hpp"
#include "core/base/error.hpp"
#include "kernels/elementwise_ops.cuh"
#include "kernels/kernels.hpp"

namespace culua::detail::kernels::host {

template <class S>
void elementwise_typed(const ElementwiseCall& c);

void elementwise(const ElementwiseCall& c) {
  if (c.out.size == 0) return;
  dispatch(c.compute, [&](auto tag) {
    using S = typename decltype(tag)::type;
    elementwise_typed<S>(c);
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
