// numpy's sort order of the element types (core/backend/sort_call.hpp), for both backends: integers
// and bool by value; floats with -0.0 == 0.0 and NaN after everything; complex numbers
// lexicographically with numpy's NaN rules. `equal` is the == of unique (NaN is never equal).
#pragma once

#include <type_traits>

#include "core/model/numeric.hpp"

namespace culua::detail::kernels::sort_order {

template <class T>
CULUA_HD inline auto value(T x) {
  if constexpr (is_small_float<T>::value) {
    return x.to_float();
  } else {
    return x;
  }
}

// numpy's LT for floats (npysort's FLOAT_LT): NaN sorts last.
template <class F>
CULUA_HD inline bool float_less(F a, F b) {
  return a < b || (b != b && a == a);
}

template <class T>
CULUA_HD inline bool less(T a, T b) {
  if constexpr (is_complex_element<T>::value) {
    // npysort's CFLOAT_LT: [R + Rj, R + nanj, nan + Rj, nan + nanj].
    if (a.re < b.re) return a.im == a.im || b.im != b.im;
    if (a.re > b.re) return b.im != b.im && a.im == a.im;
    if (a.re == b.re || (a.re != a.re && b.re != b.re)) {
      return a.im < b.im || (b.im != b.im && a.im == a.im);
    }
    return b.re != b.re;
  } else if constexpr (std::is_floating_point_v<T> || is_small_float<T>::value) {
    return float_less(value(a), value(b));
  } else {
    return a < b;
  }
}

template <class T>
CULUA_HD inline bool equal(T a, T b) {
  if constexpr (is_complex_element<T>::value) {
    return a.re == b.re && a.im == b.im;
  } else {
    return value(a) == value(b);
  }
}

template <class T>
CULUA_HD inline bool nonzero(T x) {
  if constexpr (is_complex_element<T>::value) {
    return x.re != 0 || x.im != 0;
  } else if constexpr (std::is_same_v<T, bool>) {
    return x;
  } else {
    return value(x) != 0;
  }
}

}  // namespace culua::detail::kernels::sort_order
