// Reduction functors shared by the host and CUDA backends and the generated kernels of cu.fuse
// (src/fuse: this file is part of their NVRTC prelude, so it includes nothing but the standard
// headers the prelude shims and culua's numeric types). A functor describes one reduction over
// elements of type In:
//   Acc identity()                 the neutral accumulator
//   Acc load(In x, int64_t i)      one element (i: its index along the reduction, for argmax)
//   Acc combine(Acc a, Acc b)      associative; the backends fix the order (pairwise trees)
//   Out finalize(Acc a, int64_t n) the result of n elements (mean divides, norm takes the root)
// Accumulator types are 4-byte multiples (the CUDA kernels move them between lanes as words).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/backend/op_table.hpp"
#include "core/model/numeric.hpp"

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

// sum and prod: integers wrap in uint64 and give i64 (bool and signed integers) or u64 (unsigned
// integers), as numpy on Linux; small floats accumulate in f32.
template <class T, class = void>
struct SumTypes {
  using Acc = T;
  using Out = T;
};
template <class T>
struct SumTypes<T, std::enable_if_t<std::is_integral_v<T>>> {
  using Acc = uint64_t;
  using Out =
      std::conditional_t<std::is_unsigned_v<T> && !std::is_same_v<T, bool>, uint64_t, int64_t>;
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
    std::conditional_t<
        std::is_same_v<T, bool> || std::is_same_v<T, int8_t> || std::is_same_v<T, int16_t>, int32_t,
        std::conditional_t<std::is_same_v<T, uint8_t> || std::is_same_v<T, uint16_t>, uint32_t,
                           T>>>;

// --- functors ----------------------------------------------------------------------------------

// Is the element a NaN (complex: either part)? Small floats compare as float.
template <class T>
CULUA_HD inline bool element_is_nan(T x) {
  if constexpr (is_small_float<T>::value) {
    const float f = x.to_float();
    return f != f;
  } else if constexpr (is_complex_element<T>::value) {
    return x.re != x.re || x.im != x.im;
  } else if constexpr (std::is_floating_point_v<T>) {
    return x != x;
  } else {
    return false;
  }
}

// sum and mean (mean divides by the count at the end, in double); SkipNan: NaN elements count as
// 0 (nansum).
template <class T, class A, class R, bool SkipNan = false>
struct SumOp {
  using In = T;
  using Acc = A;
  using Out = R;
  bool mean;

  CULUA_HD Acc identity() const { return Acc{}; }
  CULUA_HD Acc load(T x, int64_t) const {
    if constexpr (SkipNan) {
      if (element_is_nan(x)) return Acc{};
    }
    return widen<Acc>(x);
  }
  CULUA_HD Acc combine(Acc a, Acc b) const { return add(a, b); }
  CULUA_HD Out finalize(Acc a, int64_t n) const {
    if (!mean) return convert<Out>(a);
    const double dn = static_cast<double>(n);
    if constexpr (is_complex_element<Acc>::value) {
      // numpy's complex division by n + 0i (rat = 0, scl = 1 / n), in double: a NaN or infinite
      // part of the sum makes the other part NaN (inf * 0), mean({nan+1i, 1+1i}) is NaN + NaN i,
      // and finite means are numpy's bits for c128.
      using P = decltype(Out{}.re);
      const double re = static_cast<double>(a.re), im = static_cast<double>(a.im);
      const double scl = 1.0 / dn;
      return Out{static_cast<P>((re + im * 0.0) * scl), static_cast<P>((im - re * 0.0) * scl)};
    } else {
      return convert<Out>(static_cast<double>(a) / dn);
    }
  }
};

// prod; SkipNan: NaN elements count as 1 (nanprod).
template <class T, class A, class R, bool SkipNan = false>
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
  CULUA_HD Acc load(T x, int64_t) const {
    if constexpr (SkipNan) {
      if (element_is_nan(x)) return identity();
    }
    return widen<Acc>(x);
  }
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

// max (greater) and min; a NaN wins over everything. SkipNan (nanmax, nanmin): NaNs lose to
// everything, the identity is a NaN, so a reduction of NaNs only gives NaN (as numpy, which also
// warns).
template <class T, bool SkipNan = false>
struct MinMaxOp {
  using In = T;
  using Acc = CompareType<T>;
  using Out = T;
  bool greater;

  CULUA_HD Acc identity() const {
    if constexpr (std::is_floating_point_v<Acc>) {
      if constexpr (SkipNan) {
        return std::numeric_limits<Acc>::quiet_NaN();
      } else {
        return greater ? -std::numeric_limits<Acc>::infinity()
                       : std::numeric_limits<Acc>::infinity();
      }
    } else {
      return greater ? std::numeric_limits<Acc>::lowest() : std::numeric_limits<Acc>::max();
    }
  }
  CULUA_HD Acc load(T x, int64_t) const { return widen<Acc>(x); }
  CULUA_HD Acc combine(Acc a, Acc b) const {
    if constexpr (SkipNan) {
      if (is_nan(a)) return b;
      if (is_nan(b)) return a;
    } else {
      if (is_nan(a)) return a;
      if (is_nan(b)) return b;
    }
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

// nanmean: the sum of the elements that are not NaN and their count.
template <class S>
struct CountedSum {
  S sum;
  int64_t n;
};

template <class T, class A, class R>
struct NanMeanOp {
  using In = T;
  using Acc = CountedSum<A>;
  using Out = R;

  CULUA_HD Acc identity() const { return Acc{A{}, 0}; }
  CULUA_HD Acc load(T x, int64_t) const {
    if (element_is_nan(x)) return identity();
    return Acc{widen<A>(x), 1};
  }
  CULUA_HD Acc combine(Acc a, Acc b) const { return Acc{add(a.sum, b.sum), a.n + b.n}; }
  CULUA_HD Out finalize(Acc a, int64_t) const {
    return SumOp<T, A, R>{true}.finalize(a.sum, a.n);  // 0 / 0: NaN when every element is NaN
  }
};

// var and std: Welford's running mean and sum of squared deviations, merged by Chan et al.'s
// formula (numerically sound in any order, so the GPU's tree and the host's pairwise order give
// the same result up to rounding). Complex inputs keep the mean of both parts and one sum of
// |x - mean|^2. P: the accumulation type (f32 for f16/bf16/f32/c64, f64 otherwise).
template <class P, bool Complex>
struct Moments {
  P mean;
  P mean_im;  // complex inputs only
  P m2;
  int64_t n;
};
template <class P>
struct Moments<P, false> {
  P mean;
  P m2;
  int64_t n;
};

template <class T, class P, class R, bool SkipNan>
struct VarOp {
  static constexpr bool kComplex = is_complex_element<T>::value;
  using In = T;
  using Acc = Moments<P, kComplex>;
  using Out = R;
  P correction;  // ddof
  bool root;     // std

  CULUA_HD Acc identity() const { return Acc{}; }
  CULUA_HD Acc load(T x, int64_t) const {
    // (Branch-free: a skipped NaN is the identity {0, 0, n = 0}.)
    const bool skip = SkipNan && element_is_nan(x);
    Acc a{};
    if constexpr (kComplex) {
      a.mean = skip ? P{0} : static_cast<P>(x.re);
      a.mean_im = skip ? P{0} : static_cast<P>(x.im);
    } else {
      a.mean = skip ? P{0} : widen<P>(x);
    }
    a.n = skip ? 0 : 1;
    return a;
  }
  CULUA_HD Acc combine(Acc a, Acc b) const {
    // No early returns for an empty side (if (b.n == 0) return a; ...): the weights make it exact
    // (b.mean * 1, a.mean + d * 0; only an infinite mean differs, which finalize turns into NaN
    // anyway), and with them GCC 12.2 at -O3 miscompiled the host reduction in test programs that
    // included reduce_host.cpp (with its former order, the elements after the last
    // multiple of 8 combined into the partials): that last combination was lost, var of 9
    // elements was the var of the first 8, var of 1 to 7 elements NaN (0 / 0). Right at -O0 to
    // -O2, at -O3 with -fno-tree-dominator-opts and with clang -O3, clean under ASan and UBSan, and
    // not reproduced in the library object as built: GCC's dominator optimizations in some
    // inlining contexts, not undefined behaviour here. Nothing divides by a zero count (fb is 0
    // when both sides are empty).
    const int64_t n = a.n + b.n;
    const P fb = n > 0 ? static_cast<P>(b.n) / static_cast<P>(n) : P{0};
    const P w = static_cast<P>(a.n) * fb;  // a.n * b.n / n
    Acc r{};
    r.n = n;
    const P d = b.mean - a.mean;
    r.mean = a.mean + d * fb;
    P sq = d * d;
    if constexpr (kComplex) {
      const P di = b.mean_im - a.mean_im;
      r.mean_im = a.mean_im + di * fb;
      sq += di * di;
    }
    r.m2 = a.m2 + b.m2 + sq * w;
    return r;
  }
  CULUA_HD Out finalize(Acc a, int64_t) const {
    bool finite = a.mean - a.mean == 0;  // false for inf and NaN (numpy: inf - inf is NaN)
    if constexpr (kComplex) finite = finite && a.mean_im - a.mean_im == 0;
    P v;
    if (!finite) {
      v = std::numeric_limits<P>::quiet_NaN();
    } else {
      const P d = static_cast<P>(a.n) - correction;
      // numpy: var divides by max(n - ddof, 0) (0 / 0 is NaN, x / 0 inf); nanvar gives NaN.
      if (SkipNan && !(d > 0)) {
        v = std::numeric_limits<P>::quiet_NaN();
      } else {
        v = a.m2 / (d > 0 ? d : P{0});
      }
    }
    if (root) {
      if constexpr (std::is_same_v<P, float>) {
        v = sqrtf(v);
      } else {
        v = sqrt(v);
      }
    }
    return convert<Out>(v);
  }
};

// any (all = false) and all: element != 0 (NaN counts as true, complex: either part).
template <class T>
struct AnyAllOp {
  using In = T;
  using Acc = uint32_t;
  using Out = bool;
  bool all;

  CULUA_HD Acc identity() const { return all ? 1u : 0u; }
  CULUA_HD Acc load(T x, int64_t) const {
    if constexpr (is_small_float<T>::value) {
      return x.to_float() != 0.0f ? 1u : 0u;
    } else if constexpr (is_complex_element<T>::value) {
      return x.re != 0 || x.im != 0 ? 1u : 0u;
    } else {
      return x != T{0} ? 1u : 0u;
    }
  }
  CULUA_HD Acc combine(Acc a, Acc b) const { return all ? (a & b) : (a | b); }
  CULUA_HD Out finalize(Acc a, int64_t) const { return a != 0; }
};

// The accumulation type of var/std over elements of type T (c64 in f64 too).
template <class T>
using VarAccType = std::conditional_t<std::is_same_v<T, double> || std::is_integral_v<T> ||
                                          is_complex_element<T>::value,
                                      double, float>;
template <class T, class = void>
struct RealPart {
  using type = T;
};
template <class T>
struct RealPart<T, std::enable_if_t<is_complex_element<T>::value>> {
  using type = decltype(T{}.re);
};
// Its result type (reduce_result_dtype).
template <class T>
using VarOutType = std::conditional_t<std::is_integral_v<T>, double, typename RealPart<T>::type>;

template <class T>
inline constexpr bool kHasNan = !std::is_integral_v<T>;

// What reduce_functor gives for an op a type does not have (max of complex values).
struct UndefinedReduce {};

// The functor of `Op` over elements of type T, with `correction` for var and std; for types
// without NaN the NaN-skipping ops must be mapped to their plain ops first (without_nan).
template <ReduceOp Op, class T>
CULUA_HD constexpr auto reduce_functor(double correction) {
  using S = SumTypes<T>;
  using M = MeanTypes<T>;
  using N = NormTypes<T>;
  using VP = VarAccType<T>;
  using VO = VarOutType<T>;
  constexpr bool kNanOp = Op == ReduceOp::NanSum || Op == ReduceOp::NanMean ||
                          Op == ReduceOp::NanMax || Op == ReduceOp::NanMin ||
                          Op == ReduceOp::NanProd || Op == ReduceOp::NanVar ||
                          Op == ReduceOp::NanStd;
  constexpr bool kOrdered = Op == ReduceOp::Max || Op == ReduceOp::Min || Op == ReduceOp::Argmax ||
                            Op == ReduceOp::Argmin || Op == ReduceOp::NanMax ||
                            Op == ReduceOp::NanMin;
  if constexpr ((kNanOp && !kHasNan<T>) || (kOrdered && is_complex_element<T>::value)) {
    return UndefinedReduce{};
  } else if constexpr (Op == ReduceOp::Var || Op == ReduceOp::Std) {
    return VarOp<T, VP, VO, false>{static_cast<VP>(correction), Op == ReduceOp::Std};
  } else if constexpr (Op == ReduceOp::NanVar || Op == ReduceOp::NanStd) {
    return VarOp<T, VP, VO, true>{static_cast<VP>(correction), Op == ReduceOp::NanStd};
  } else if constexpr (Op == ReduceOp::Any || Op == ReduceOp::All) {
    return AnyAllOp<T>{Op == ReduceOp::All};
  } else if constexpr (Op == ReduceOp::Sum) {
    return SumOp<T, typename S::Acc, typename S::Out>{false};
  } else if constexpr (Op == ReduceOp::NanSum) {
    return SumOp<T, typename S::Acc, typename S::Out, true>{false};
  } else if constexpr (Op == ReduceOp::Mean) {
    return SumOp<T, typename M::Acc, typename M::Out>{true};
  } else if constexpr (Op == ReduceOp::NanMean) {
    return NanMeanOp<T, typename M::Acc, typename M::Out>{};
  } else if constexpr (Op == ReduceOp::Prod) {
    return ProdOp<T, typename S::Acc, typename S::Out>{};
  } else if constexpr (Op == ReduceOp::NanProd) {
    return ProdOp<T, typename S::Acc, typename S::Out, true>{};
  } else if constexpr (Op == ReduceOp::Norm) {
    return NormOp<T, typename N::Acc, typename N::Out>{};
  } else if constexpr (Op == ReduceOp::Max || Op == ReduceOp::Min) {
    return MinMaxOp<T>{Op == ReduceOp::Max};
  } else if constexpr (Op == ReduceOp::NanMax || Op == ReduceOp::NanMin) {
    return MinMaxOp<T, true>{Op == ReduceOp::NanMax};
  } else {
    static_assert(Op == ReduceOp::Argmax || Op == ReduceOp::Argmin);
    return ArgOp<T>{Op == ReduceOp::Argmax};
  }
}

}  // namespace culua::detail::kernels::reduce
