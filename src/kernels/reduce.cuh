// Reduction functors shared by the host and CUDA backends, and the plan that both derive from a
// ReduceCall. A functor describes one reduction over elements of type In:
//   Acc identity()                 the neutral accumulator
//   Acc load(In x, int64_t i)      one element (i: its index along the reduction, for argmax)
//   Acc combine(Acc a, Acc b)      associative; the backends fix the order (pairwise trees)
//   Out finalize(Acc a, int64_t n) the result of n elements (mean divides, norm takes the root)
// Accumulator types are 4-byte multiples (the CUDA kernels move them between lanes as words).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/dtype.hpp"
#include "core/layout.hpp"
#include "core/numeric.hpp"
#include "core/reduce_call.hpp"
#include "kernels/functors.cuh"

namespace culua::detail::kernels::reduce {

template <class A>
CULUA_HD inline bool is_nan(A x) {
  if constexpr (std::is_floating_point_v<A>) {
    return x != x;
  } else {
    return false;
  }
}

// An element widened to an accumulator type: integers and bools by value (to uint64 modulo 2^64,
// which is the wrapping int64 arithmetic done without signed overflow), small floats exactly to
// float, complex values as they are.
template <class Acc, class T>
CULUA_HD inline Acc widen(T x) {
  if constexpr (is_small_float<T>::value) {
    return static_cast<Acc>(x.to_float());
  } else if constexpr (is_complex_element<T>::value) {
    return x;
  } else {
    return static_cast<Acc>(x);
  }
}

template <class A>
CULUA_HD inline A add(A a, A b) {
  if constexpr (is_complex_element<A>::value) {
    return A{a.re + b.re, a.im + b.im};
  } else {
    return a + b;
  }
}

template <class A>
CULUA_HD inline A mul(A a, A b) {
  if constexpr (is_complex_element<A>::value) {
    return A{a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
  } else {
    return a * b;
  }
}

// --- accumulator and result types ------------------------------------------------------------

// sum and prod: integers wrap in uint64 and give i64; small floats accumulate in f32.
template <class T, class = void>
struct SumTypes {
  using Acc = T;
  using Out = T;
};
template <class T>
struct SumTypes<T, std::enable_if_t<std::is_integral_v<T>>> {
  using Acc = uint64_t;
  using Out = int64_t;
};
template <class T>
struct SumTypes<T, std::enable_if_t<is_small_float<T>::value>> {
  using Acc = float;
  using Out = T;
};

// mean: integers accumulate in f64 (a wrapped sum would give a wrong mean).
template <class T, class = void>
struct MeanTypes : SumTypes<T> {};
template <class T>
struct MeanTypes<T, std::enable_if_t<std::is_integral_v<T>>> {
  using Acc = double;
  using Out = double;
};

// norm: the sum of |x|^2 in the real type of the result.
template <class T, class = void>
struct NormTypes {
  using Acc = T;
  using Out = T;
};
template <class T>
struct NormTypes<T, std::enable_if_t<std::is_integral_v<T>>> {
  using Acc = double;
  using Out = double;
};
template <class T>
struct NormTypes<T, std::enable_if_t<is_small_float<T>::value>> {
  using Acc = float;
  using Out = T;
};
template <class T>
struct NormTypes<T, std::enable_if_t<is_complex_element<T>::value>> {
  using Acc = decltype(T{}.re);
  using Out = Acc;
};

// max/min/argmax/argmin compare values of this type (exact for every element of T).
template <class T>
using CompareType = std::conditional_t<
    is_small_float<T>::value, float,
    std::conditional_t<std::is_same_v<T, bool> || std::is_same_v<T, int8_t> ||
                           std::is_same_v<T, int16_t>,
                       int32_t, std::conditional_t<std::is_same_v<T, uint8_t>, uint32_t, T>>>;

// --- functors ----------------------------------------------------------------------------------

// sum and mean (mean divides by the count at the end, in double).
template <class T, class A, class R>
struct SumOp {
  using In = T;
  using Acc = A;
  using Out = R;
  bool mean;

  CULUA_HD Acc identity() const { return Acc{}; }
  CULUA_HD Acc load(T x, int64_t) const { return widen<Acc>(x); }
  CULUA_HD Acc combine(Acc a, Acc b) const { return add(a, b); }
  CULUA_HD Out finalize(Acc a, int64_t n) const {
    if (!mean) return convert<Out>(a);
    const double dn = static_cast<double>(n);
    if constexpr (is_complex_element<Acc>::value) {
      using P = decltype(Out{}.re);
      return Out{static_cast<P>(static_cast<double>(a.re) / dn),
                 static_cast<P>(static_cast<double>(a.im) / dn)};
    } else {
      return convert<Out>(static_cast<double>(a) / dn);
    }
  }
};

template <class T, class A, class R>
struct ProdOp {
  using In = T;
  using Acc = A;
  using Out = R;

  CULUA_HD Acc identity() const {
    if constexpr (is_complex_element<Acc>::value) {
      return Acc{1, 0};
    } else {
      return Acc{1};
    }
  }
  CULUA_HD Acc load(T x, int64_t) const { return widen<Acc>(x); }
  CULUA_HD Acc combine(Acc a, Acc b) const { return mul(a, b); }
  CULUA_HD Out finalize(Acc a, int64_t) const { return convert<Out>(a); }
};

template <class T, class A, class R>
struct NormOp {
  using In = T;
  using Acc = A;
  using Out = R;

  CULUA_HD Acc identity() const { return Acc{0}; }
  CULUA_HD Acc load(T x, int64_t) const {
    if constexpr (is_complex_element<T>::value) {
      return x.re * x.re + x.im * x.im;
    } else {
      const Acc v = widen<Acc>(x);
      return v * v;
    }
  }
  CULUA_HD Acc combine(Acc a, Acc b) const { return a + b; }
  CULUA_HD Out finalize(Acc a, int64_t) const {
    if constexpr (std::is_same_v<Acc, float>) {
      return convert<Out>(sqrtf(a));
    } else {
      return convert<Out>(sqrt(a));
    }
  }
};

// max (greater) and min; a NaN wins over everything.
template <class T>
struct MinMaxOp {
  using In = T;
  using Acc = CompareType<T>;
  using Out = T;
  bool greater;

  CULUA_HD Acc identity() const {
    if constexpr (std::is_floating_point_v<Acc>) {
      return greater ? -std::numeric_limits<Acc>::infinity() : std::numeric_limits<Acc>::infinity();
    } else {
      return greater ? std::numeric_limits<Acc>::lowest() : std::numeric_limits<Acc>::max();
    }
  }
  CULUA_HD Acc load(T x, int64_t) const { return widen<Acc>(x); }
  CULUA_HD Acc combine(Acc a, Acc b) const {
    if (is_nan(a)) return a;
    if (is_nan(b)) return b;
    return (greater ? b > a : b < a) ? b : a;
  }
  CULUA_HD Out finalize(Acc a, int64_t) const { return convert<Out>(a); }
};

template <class A>
struct ArgAcc {
  A value;
  int64_t index;
};

// argmax (greater) and argmin: the first index of the extreme value; a NaN counts as the extreme
// (the first NaN wins, as in numpy). Results are 1-based. The combination is commutative and
// associative (ties go to the smaller index), so the order of the tree does not matter.
template <class T>
struct ArgOp {
  using In = T;
  using Acc = ArgAcc<CompareType<T>>;
  using Out = int64_t;
  bool greater;

  CULUA_HD Acc identity() const {
    return Acc{MinMaxOp<T>{greater}.identity(), std::numeric_limits<int64_t>::max()};
  }
  CULUA_HD Acc load(T x, int64_t i) const { return Acc{widen<CompareType<T>>(x), i}; }
  CULUA_HD Acc combine(Acc a, Acc b) const {
    const bool an = is_nan(a.value), bn = is_nan(b.value);
    if (an || bn) {
      if (an && bn) return a.index <= b.index ? a : b;
      return an ? a : b;
    }
    if (a.value == b.value) return a.index <= b.index ? a : b;
    return (greater ? b.value > a.value : b.value < a.value) ? b : a;
  }
  CULUA_HD Out finalize(Acc a, int64_t) const { return a.index + 1; }
};

// Calls f(functor) with the functor of `op` over elements of type T, and returns what f returns.
// Ops that are not defined for the type (max of complex values) return `undefined`; the core
// rejects those calls before they reach a backend.
template <class T, class Result, class F>
Result dispatch_op_typed(ReduceOp op, Result undefined, F&& f) {
  using S = SumTypes<T>;
  using M = MeanTypes<T>;
  using N = NormTypes<T>;
  switch (op) {
    case ReduceOp::Sum:
      return f(SumOp<T, typename S::Acc, typename S::Out>{false});
    case ReduceOp::Mean:
      return f(SumOp<T, typename M::Acc, typename M::Out>{true});
    case ReduceOp::Prod:
      return f(ProdOp<T, typename S::Acc, typename S::Out>{});
    case ReduceOp::Norm:
      return f(NormOp<T, typename N::Acc, typename N::Out>{});
    default:
      break;
  }
  if constexpr (is_complex_element<T>::value) {
    return undefined;
  } else {
    switch (op) {
      case ReduceOp::Max:
        return f(MinMaxOp<T>{true});
      case ReduceOp::Min:
        return f(MinMaxOp<T>{false});
      case ReduceOp::Argmax:
        return f(ArgOp<T>{true});
      case ReduceOp::Argmin:
        return f(ArgOp<T>{false});
      default:
        return undefined;
    }
  }
}

// The same over elements of the run-time dtype `in`.
template <class F, class Result>
Result dispatch_op(ReduceOp op, DType in, Result undefined, F&& f) {
  return dispatch(in, [&](auto tag) -> Result {
    using T = typename decltype(tag)::type;
    return dispatch_op_typed<T>(op, undefined, f);
  });
}

// --- the plan --------------------------------------------------------------------------------

// What both backends compute from a ReduceCall. Full reductions reduce `in` (dimensions merged
// where possible) into one element at out.data. Axis reductions reduce, for each of the M output
// positions o, the R elements at in_outer offset(o) + r * rs into out offset(o).
struct ReducePlan {
  bool full = true;
  int64_t count = 0;  // elements reduced into each output
  StridedView in;     // full: the input
  // Axis reductions:
  int64_t M = 0;
  int64_t R = 0;
  int64_t rs = 0;
  StridedView in_outer;  // the output positions with the input's strides
  StridedView out;       // the output positions with the output's strides
  bool inner = false;    // the reduced stride is the smallest: threads of a warp walk along it
};

inline int64_t abs64(int64_t v) {
  return v < 0 ? -v : v;
}

// Orders the dimensions of the views by decreasing stride of the first one (stable), so that the
// memory order becomes the traversal order and coalesce() can merge them.
inline void sort_by_stride(StridedView* views, int count) {
  const int nd = views[0].ndim;
  for (int i = 1; i < nd; ++i) {
    for (int j = i; j > 0 && abs64(views[0].strides[j - 1]) < abs64(views[0].strides[j]); --j) {
      for (int v = 0; v < count; ++v) {
        std::swap(views[v].shape[j - 1], views[v].shape[j]);
        std::swap(views[v].strides[j - 1], views[v].strides[j]);
      }
    }
  }
}

inline bool order_free(ReduceOp op) {
  return op != ReduceOp::Argmax && op != ReduceOp::Argmin;
}

inline ReducePlan make_plan(const ReduceCall& c) {
  ReducePlan p;
  if (!c.full) {
    const int last = c.in.ndim - 1;
    p.R = c.in.shape[last];
    p.rs = c.in.strides[last];
    p.in_outer = c.in;
    p.in_outer.ndim = last;
    p.in_outer.shape[last] = 0;
    p.in_outer.strides[last] = 0;
    p.in_outer.size = c.out.size;
    p.out = c.out;
    p.M = c.out.size;
    if (p.M != 1) {
      p.full = false;
      p.count = p.R;
      StridedView v[2] = {p.in_outer, p.out};
      sort_by_stride(v, 2);
      coalesce(v, 2);
      p.in_outer = v[0];
      p.out = v[1];
      p.inner = p.in_outer.ndim == 0 ||
                abs64(p.rs) <= abs64(p.in_outer.strides[p.in_outer.ndim - 1]) || p.R == 1;
      return p;
    }
    // One output (every other dimension has size 1, so the view starts at its data): a full
    // reduction of the axis, whose indices are then the flat indices.
    StridedView line = c.in;
    line.ndim = 1;
    line.shape[0] = p.R;
    line.strides[0] = p.rs;
    line.size = p.R;
    p.in = line;
  } else {
    p.in = c.in;
  }
  p.full = true;
  p.out = c.out;
  if (order_free(c.op)) sort_by_stride(&p.in, 1);
  coalesce(&p.in, 1);
  p.count = p.in.size;
  return p;
}

}  // namespace culua::detail::kernels::reduce
