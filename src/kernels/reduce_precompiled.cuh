// Which reduction functors the CUDA backend compiles kernels for (docs/design.md, "Precompiled
// kernels"). The hot (op, dtype) combinations keep a functor, and kernels, of their own: sum and
// mean, max and min, argmax and argmin of f32, f64 and i64; sum and mean of c64; any and all of f32
// and bool; var and std of f32. Every other valid combination goes through a few functors per
// input type that take the op at run time (a uniform branch in each step):
//   ScalarFamily<T>: sum, mean, prod, norm, max, min, any, all and their nan* forms, in one
//                    accumulator type (the widest of the ops' own, their bits where types differ);
//   VarFamily<T>:    var, std, nanvar, nanstd;
//   ArgOp<T>, NanMeanOp<T, ...>: as on the host.
// Each op of a family computes exactly what its own functor (reduce.cuh) computes: the family
// calls that functor for every step, so results are bit for bit those of the functor in the same
// order of accumulation. Host code too (the unit tests compare the families with the functors).
//
// The shared functors reach the kernels wrapped in Outlined<Op>, whose steps are functions of their
// own in device code (not inlined): inlined, every call site of the kernels (4 x 16 loads of the
// unrolled vector loop, the trees, the shuffles) would get the whole step, for a family the whole
// switch over its ops, a kernel larger than all the ops' own kernels together. The kernels call
// load16() once per 16-byte vector (ScalarFamily: the switch, then the op's own loads and tree)
// and combine() once per vector or element, so the calls cost little next to the loads.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/backend/reduce_call.hpp"
#include "kernels/reduce.cuh"

namespace culua::detail::kernels::reduce {

// An accumulator of one op held in the family's accumulator type: the same value when the types
// agree, else its bytes (the family never computes on them, it only moves them).
template <class A, class X>
CULUA_HD inline A pack(X x) {
  if constexpr (std::is_same_v<A, X>) {
    return x;
  } else {
    static_assert(sizeof(X) <= sizeof(A), "the family's accumulator holds every op's");
    A a{};
    memcpy(&a, &x, sizeof x);
    return a;
  }
}
template <class X, class A>
CULUA_HD inline X unpack(A a) {
  if constexpr (std::is_same_v<A, X>) {
    return a;
  } else {
    X x;
    memcpy(&x, &a, sizeof x);
    return x;
  }
}

// The accumulator type of ScalarFamily<T>: that of sum (float for f16/bf16/f32, double for f64,
// the complex type itself), 8 bytes for integers and bools (uint64 sums, double means and norms).
template <class T>
using FamilyAcc = std::conditional_t<std::is_integral_v<T>, uint64_t, typename SumTypes<T>::Acc>;

#if defined(__CUDACC__)
#define CULUA_REDUCE_NOINLINE __noinline__
#else
#define CULUA_REDUCE_NOINLINE
#endif
#if defined(__CUDA_ARCH__)
#define CULUA_REDUCE_UNROLL _Pragma("unroll")
#else
#define CULUA_REDUCE_UNROLL
#endif

// 16 bytes as loaded by one vector load (elements of the input, in order).
struct alignas(16) Bytes16x {
  uint32_t w[4];
};

// The hot combinations (after without_nan): the functors of dispatch_op_typed, with kernels of
// their own. An op and its pair (max/min, argmax/argmin, any/all, var/std) share a functor.
template <class T>
constexpr bool is_hot(ReduceOp op) {
  constexpr bool kBasic =
      std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, int64_t>;
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Mean:
      return kBasic || std::is_same_v<T, complex64>;
    case ReduceOp::Max:
    case ReduceOp::Min:
    case ReduceOp::Argmax:
    case ReduceOp::Argmin:
      return kBasic;
    case ReduceOp::Any:
    case ReduceOp::All:
      return std::is_same_v<T, float> || std::is_same_v<T, bool>;
    case ReduceOp::Var:
    case ReduceOp::Std:
      return std::is_same_v<T, float>;
    default:
      return false;
  }
}

template <class T>
struct ScalarFamily {
  using In = T;
  using Acc = FamilyAcc<T>;
  // The result type depends on the op: the kernels call store() instead of finalize().
  static constexpr bool kStores = true;
  ReduceOp op;  // without_nan(op) for types without NaN

  // Calls f(functor) with the functor of `op`; every case returns R. Ops that never reach the
  // family (the hot ones, those not defined for T) have no case: they would be code never run.
  template <class R, class F>
  CULUA_HD R visit(const F& f) const {
    using S = SumTypes<T>;
    using M = MeanTypes<T>;
    using N = NormTypes<T>;
    constexpr bool kReal = !is_complex_element<T>::value;
    switch (op) {
      case ReduceOp::Sum:
        if constexpr (!is_hot<T>(ReduceOp::Sum)) {
          return f(SumOp<T, typename S::Acc, typename S::Out>{false});
        }
        break;
      case ReduceOp::Mean:
        if constexpr (!is_hot<T>(ReduceOp::Mean)) {
          return f(SumOp<T, typename M::Acc, typename M::Out>{true});
        }
        break;
      case ReduceOp::Norm:
        return f(NormOp<T, typename N::Acc, typename N::Out>{});
      case ReduceOp::Any:
      case ReduceOp::All:
        if constexpr (!is_hot<T>(ReduceOp::Any)) return f(AnyAllOp<T>{op == ReduceOp::All});
        break;
      case ReduceOp::NanSum:
        if constexpr (kHasNan<T>) return f(SumOp<T, typename S::Acc, typename S::Out, true>{false});
        break;
      case ReduceOp::NanProd:
        if constexpr (kHasNan<T>) return f(ProdOp<T, typename S::Acc, typename S::Out, true>{});
        break;
      case ReduceOp::Max:
      case ReduceOp::Min:
        if constexpr (kReal && !is_hot<T>(ReduceOp::Max)) {
          return f(MinMaxOp<T>{op == ReduceOp::Max});
        }
        break;
      case ReduceOp::NanMax:
      case ReduceOp::NanMin:
        if constexpr (kReal && kHasNan<T>) return f(MinMaxOp<T, true>{op == ReduceOp::NanMax});
        break;
      default:
        break;
    }
    return f(ProdOp<T, typename S::Acc, typename S::Out>{});  // ReduceOp::Prod
  }

  CULUA_HD Acc identity() const {
    return visit<Acc>([&](const auto& o) { return pack<Acc>(o.identity()); });
  }
  CULUA_HD Acc load(T x, int64_t i) const {
    return visit<Acc>([&](const auto& o) { return pack<Acc>(o.load(x, i)); });
  }
  // The elements of one 16-byte vector (the first at `index`) loaded and combined by a tree, as the
  // kernels' load_vector does with any functor.
  static constexpr int kVector = sizeof(T) >= 16 ? 1 : static_cast<int>(16 / sizeof(T));
  CULUA_HD Acc load16(Bytes16x raw, int64_t index) const {
    T x[kVector];
    memcpy(x, &raw, sizeof x);
    return visit<Acc>([&](const auto& o) {
      typename std::decay_t<decltype(o)>::Acc t[kVector];
      CULUA_REDUCE_UNROLL
      for (int j = 0; j < kVector; ++j) t[j] = o.load(x[j], index + j);
      CULUA_REDUCE_UNROLL
      for (int h = 1; h < kVector; h *= 2) {
        CULUA_REDUCE_UNROLL
        for (int j = 0; j + h < kVector; j += 2 * h) t[j] = o.combine(t[j], t[j + h]);
      }
      return pack<Acc>(t[0]);
    });
  }
  CULUA_HD Acc combine(Acc a, Acc b) const {
    return visit<Acc>([&](const auto& o) {
      using A = typename std::decay_t<decltype(o)>::Acc;
      return pack<Acc>(o.combine(unpack<A>(a), unpack<A>(b)));
    });
  }
  // Writes the result of n elements to element `offset` of out (the op's result type).
  CULUA_HD void store(void* out, int64_t offset, Acc a, int64_t n) const {
    visit<int>([&](const auto& o) {
      using O = std::decay_t<decltype(o)>;
      static_cast<typename O::Out*>(out)[offset] = o.finalize(unpack<typename O::Acc>(a), n);
      return 0;
    });
  }
};

// var, std, nanvar and nanstd: VarOp's two forms differ only in load and finalize.
template <class T>
struct VarFamily {
  using Plain = VarOp<T, VarAccType<T>, VarOutType<T>, false>;
  using Skip = VarOp<T, VarAccType<T>, VarOutType<T>, true>;
  using In = T;
  using Acc = typename Plain::Acc;
  using Out = typename Plain::Out;
  VarAccType<T> correction;
  bool root;
  bool skip_nan;

  CULUA_HD Acc identity() const { return Plain{correction, root}.identity(); }
  CULUA_HD Acc load(T x, int64_t i) const {
    return skip_nan ? Skip{correction, root}.load(x, i) : Plain{correction, root}.load(x, i);
  }
  CULUA_HD Acc combine(Acc a, Acc b) const { return Plain{correction, root}.combine(a, b); }
  CULUA_HD Out finalize(Acc a, int64_t n) const {
    return skip_nan ? Skip{correction, root}.finalize(a, n)
                    : Plain{correction, root}.finalize(a, n);
  }
};

template <class Op, class = void>
struct HasStore : std::false_type {};
template <class Op>
struct HasStore<Op, std::void_t<decltype(Op::kStores)>> : std::true_type {};
template <class Op, class = void>
struct HasLoad16 : std::false_type {};
template <class Op>
struct HasLoad16<Op, std::void_t<decltype(&Op::load16)>> : std::true_type {};

// A functor whose load, combine and 16-byte vector load are calls in device code (see the top of
// this file); the same steps in the same order as Op's.
template <class Op>
struct Outlined {
  using In = typename Op::In;
  using Acc = typename Op::Acc;
  static constexpr bool kStores = true;
  static constexpr int kVector = sizeof(In) >= 16 ? 1 : static_cast<int>(16 / sizeof(In));
  Op op;

  CULUA_HD Acc identity() const { return op.identity(); }
  CULUA_HD CULUA_REDUCE_NOINLINE Acc load(In x, int64_t i) const { return op.load(x, i); }
  CULUA_HD CULUA_REDUCE_NOINLINE Acc combine(Acc a, Acc b) const { return op.combine(a, b); }
  // The kernels' load_vector: kVector elements loaded, then combined by a tree.
  CULUA_HD CULUA_REDUCE_NOINLINE Acc load16(Bytes16x raw, int64_t index) const {
    if constexpr (HasLoad16<Op>::value) {
      return op.load16(raw, index);
    } else {
      In x[kVector];
      memcpy(x, &raw, sizeof x);
      Acc t[kVector];
      CULUA_REDUCE_UNROLL
      for (int j = 0; j < kVector; ++j) t[j] = op.load(x[j], index + j);
      CULUA_REDUCE_UNROLL
      for (int h = 1; h < kVector; h *= 2) {
        CULUA_REDUCE_UNROLL
        for (int j = 0; j + h < kVector; j += 2 * h) t[j] = op.combine(t[j], t[j + h]);
      }
      return t[0];
    }
  }
  CULUA_HD void store(void* out, int64_t offset, Acc a, int64_t n) const {
    if constexpr (HasStore<Op>::value) {
      op.store(out, offset, a, n);
    } else {
      static_cast<typename Op::Out*>(out)[offset] = op.finalize(a, n);
    }
  }
};
template <class Op>
CULUA_HD Outlined<Op> outlined(const Op& op) {
  return Outlined<Op>{op};
}

// Tags of the functor passed to dispatch_precompiled's f: its own kernels (the hot combinations:
// a vectorized and a general full-reduction kernel, as before), or shared ones (an Outlined
// functor, one full-reduction kernel for every layout).
struct Hot {};
struct Shared {};

// Calls f(functor, Hot{} or Shared{}) for `op` over elements of type T, as the CUDA backend
// compiles it, and returns what f returns; `undefined` for ops not defined for T.
template <class T, class Result, class F>
Result dispatch_precompiled(ReduceOp op, double correction, Result undefined, F&& f) {
  if constexpr (!kHasNan<T>) op = without_nan(op);
  // The hot combinations: the functors of dispatch_op_typed, with kernels of their own.
  if (is_hot<T>(op)) {
    using S = SumTypes<T>;
    using M = MeanTypes<T>;
    switch (op) {
      case ReduceOp::Sum:
        if constexpr (is_hot<T>(ReduceOp::Sum)) {
          return f(SumOp<T, typename S::Acc, typename S::Out>{false}, Hot{});
        }
        break;
      case ReduceOp::Mean:
        if constexpr (is_hot<T>(ReduceOp::Mean)) {
          return f(SumOp<T, typename M::Acc, typename M::Out>{true}, Hot{});
        }
        break;
      case ReduceOp::Max:
      case ReduceOp::Min:
        if constexpr (is_hot<T>(ReduceOp::Max)) return f(MinMaxOp<T>{op == ReduceOp::Max}, Hot{});
        break;
      case ReduceOp::Argmax:
      case ReduceOp::Argmin:
        if constexpr (is_hot<T>(ReduceOp::Argmax)) {
          return f(ArgOp<T>{op == ReduceOp::Argmax}, Hot{});
        }
        break;
      case ReduceOp::Any:
      case ReduceOp::All:
        if constexpr (is_hot<T>(ReduceOp::Any)) return f(AnyAllOp<T>{op == ReduceOp::All}, Hot{});
        break;
      case ReduceOp::Var:
      case ReduceOp::Std:
        if constexpr (is_hot<T>(ReduceOp::Var)) {
          using P = VarAccType<T>;
          return f(
              VarOp<T, P, VarOutType<T>, false>{static_cast<P>(correction), op == ReduceOp::Std},
              Hot{});
        }
        break;
      default:
        break;
    }
    return undefined;  // (not reached)
  }
  // Everything else.
  switch (op) {
    case ReduceOp::Var:
    case ReduceOp::Std:
    case ReduceOp::NanVar:
    case ReduceOp::NanStd:
      return f(outlined(VarFamily<T>{static_cast<VarAccType<T>>(correction),
                                     op == ReduceOp::Std || op == ReduceOp::NanStd,
                                     op == ReduceOp::NanVar || op == ReduceOp::NanStd}),
               Shared{});
    case ReduceOp::Argmax:
    case ReduceOp::Argmin:
      if constexpr (is_complex_element<T>::value || is_hot<T>(ReduceOp::Argmax)) {
        return undefined;  // (hot: not reached)
      } else {
        return f(outlined(ArgOp<T>{op == ReduceOp::Argmax}), Shared{});
      }
    case ReduceOp::NanMean:
      if constexpr (kHasNan<T>) {
        using M = MeanTypes<T>;
        return f(outlined(NanMeanOp<T, typename M::Acc, typename M::Out>{}), Shared{});
      } else {
        return undefined;  // (mapped to Mean above)
      }
    case ReduceOp::Max:
    case ReduceOp::Min:
    case ReduceOp::NanMax:
    case ReduceOp::NanMin:
      if constexpr (is_complex_element<T>::value) return undefined;
      return f(outlined(ScalarFamily<T>{op}), Shared{});
    default:
      return f(outlined(ScalarFamily<T>{op}), Shared{});
  }
}

}  // namespace culua::detail::kernels::reduce
