// The element functions of the scans (cumulative sum and product), shared by the host and CUDA
// backends: integers and bools accumulate in uint64 (wrapping, written as i64, or as u64 for the
// unsigned types), f16/bf16 in
// float, other types in their own.
#pragma once

#include "kernels/reduce.cuh"

namespace culua::detail::kernels::scan {

template <class T, bool Prod>
struct ScanFn {
  using In = T;
  using Acc = typename reduce::SumTypes<T>::Acc;
  using Out = typename reduce::SumTypes<T>::Out;
  static constexpr bool kProduct = Prod;

  CULUA_HD Acc identity() const {
    if constexpr (!Prod) {
      return Acc{};
    } else if constexpr (is_complex_element<Acc>::value) {
      return Acc{1, 0};
    } else {
      return Acc{1};
    }
  }
  CULUA_HD Acc load(T x) const { return reduce::widen<Acc>(x); }
  CULUA_HD Acc operator()(Acc a, Acc b) const {
    if constexpr (Prod) {
      return reduce::mul(a, b);
    } else {
      return reduce::add(a, b);
    }
  }
  CULUA_HD Out finalize(Acc a) const { return convert<Out>(a); }
};

}  // namespace culua::detail::kernels::scan
