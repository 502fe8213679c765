// The elementwise operations, written once for the host and CUDA backends and the fused kernels'
// NVRTC prelude: the compute types, the integer and float helpers with Python's semantics, one
// functor per operation of the op table (core/backend/op_table.hpp), each functor's row of the
// table, and the visitors that turn a runtime operation code into its functor. The real and
// complex math they call is in kernels/real_math.cuh and kernels/complex_math.cuh. Every
// operation works on "compute" values: the element type itself, except f16/bf16, which compute
// in float and round the result once when it is stored.
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/backend/elementwise_call.hpp"
#include "core/model/numeric.hpp"
#include "kernels/complex_math.cuh"
#include "kernels/real_math.cuh"

namespace culua::detail::kernels {

// The compute type of element type S, and the conversion of an element to it.
template <class S>
struct compute_type {
  using type = S;
};
template <>
struct compute_type<half> {
  using type = float;
};
template <>
struct compute_type<bfloat16> {
  using type = float;
};
template <class S>
using compute_t = typename compute_type<S>::type;

template <class S>
CULUA_HD inline compute_t<S> to_compute(S x) {
  if constexpr (is_small_float<S>::value) {
    return x.to_float();
  } else {
    return x;
  }
}

// The type of a compute value's parts: T for complex<T>, else the type itself.
template <class T>
struct real_type {
  using type = T;
};
template <class T>
struct real_type<complex<T>> {
  using type = T;
};

template <class C>
inline constexpr bool is_cplx = is_complex_element<C>::value;
template <class C>
inline constexpr bool is_flt = std::is_floating_point_v<C>;
template <class C>
inline constexpr bool is_bool = std::is_same_v<C, bool>;
template <class C>
inline constexpr bool is_int = std::is_integral_v<C> && !std::is_same_v<C, bool>;

// Integer arithmetic wraps (two's complement), computed in the unsigned type to avoid undefined
// behaviour.
template <class I>
CULUA_HD inline I wrap_add(I a, I b) {
  using U = std::make_unsigned_t<I>;
  return static_cast<I>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
}
template <class I>
CULUA_HD inline I wrap_sub(I a, I b) {
  using U = std::make_unsigned_t<I>;
  return static_cast<I>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
}
template <class I>
CULUA_HD inline I wrap_mul(I a, I b) {
  using U = std::make_unsigned_t<I>;
  using W = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;  // no int promotion
  return static_cast<I>(
      static_cast<U>(static_cast<W>(static_cast<U>(a)) * static_cast<W>(static_cast<U>(b))));
}

// Floor division and modulo with the sign of the divisor (Python's // and %). Division by zero
// gives 0 (integers have no infinity); the one overflowing case, MIN // -1, wraps to MIN.
template <class I>
CULUA_HD inline I int_floordiv(I a, I b) {
  if (b == 0) return I(0);
  if constexpr (std::is_signed_v<I>) {
    if (b == I(-1)) return wrap_sub(I(0), a);
    I q = static_cast<I>(a / b);
    if ((a % b != 0) && ((a < 0) != (b < 0))) q = static_cast<I>(q - 1);
    return q;
  } else {
    return static_cast<I>(a / b);
  }
}
template <class I>
CULUA_HD inline I int_mod(I a, I b) {
  if (b == 0) return I(0);
  if constexpr (std::is_signed_v<I>) {
    if (b == I(-1)) return I(0);
    I r = static_cast<I>(a % b);
    if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<I>(r + b);
    return r;
  } else {
    return static_cast<I>(a % b);
  }
}
// Exponentiation by squaring, wrapping. Negative exponents give the truncated integer result:
// 1 for a base of 1, +-1 for -1, and 0 otherwise (also for a base of 0).
template <class I>
CULUA_HD inline I int_pow(I a, I b) {
  if constexpr (std::is_signed_v<I>) {
    if (b < 0) {
      if (a == 1) return I(1);
      if (a == -1) return (b & 1) ? I(-1) : I(1);
      return I(0);
    }
  }
  I r = 1;
  while (b) {
    if (b & 1) r = wrap_mul(r, a);
    a = wrap_mul(a, a);
    b = static_cast<I>(b >> 1);
  }
  return r;
}

// Floor division and modulo of floats as Python and numpy compute them (divmod): the quotient
// is derived from the exactly computed remainder, so that a == (a // b) * b + a % b holds as
// closely as possible (1 // 0.1 is 9, not floor(1 / 0.1) = 10). Division by zero gives a / b
// and fmod's NaN; a zero remainder takes the divisor's sign.
template <class T>
CULUA_HD inline T float_mod(T a, T b) {
  T mod = rm::fmod(a, b);
  if (b == T(0)) return mod;
  if (mod != T(0)) {
    if ((b < T(0)) != (mod < T(0))) mod += b;
  } else {
    mod = rm::copysign(T(0), b);
  }
  return mod;
}
template <class T>
CULUA_HD inline T float_floordiv(T a, T b) {
  if (b == T(0)) return a / b;
  const T mod = rm::fmod(a, b);
  T div = (a - mod) / b;
  if (mod != T(0) && ((b < T(0)) != (mod < T(0)))) div -= T(1);
  if (div == T(0)) return rm::copysign(T(0), a / b);
  T q = rm::floor(div);
  if (div - q > T(0.5)) q += T(1);
  return q;
}

template <class C>
CULUA_HD inline bool is_nan(C x) {
  if constexpr (is_flt<C>) {
    return x != x;
  } else {
    return false;
  }
}

// Binary operations: Op::apply(a, b) on compute values. Whether an operation is defined for a
// compute type is its row of the op table (op_valid below; the core rejects the others first).
struct AddOp {
  template <class C>
  CULUA_HD static C apply(C a, C b) {
    if constexpr (is_cplx<C>) {
      return cm::add(a, b);
    } else if constexpr (is_bool<C>) {
      return a || b;
    } else if constexpr (is_int<C>) {
      return wrap_add(a, b);
    } else {
      return a + b;
    }
  }
};
struct SubOp {
  template <class C>
  CULUA_HD static C apply(C a, C b) {
    if constexpr (is_cplx<C>) {
      return cm::sub(a, b);
    } else if constexpr (is_int<C>) {
      return wrap_sub(a, b);
    } else {
      return a - b;
    }
  }
};
struct MulOp {
  template <class C>
  CULUA_HD static C apply(C a, C b) {
    if constexpr (is_cplx<C>) {
      return cm::mul(a, b);
    } else if constexpr (is_bool<C>) {
      return a && b;
    } else if constexpr (is_int<C>) {
      return wrap_mul(a, b);
    } else {
      return a * b;
    }
  }
};
struct DivOp {  // true division: integer operands are promoted to f64 by the core
  template <class C>
  CULUA_HD static C apply(C a, C b) {
    if constexpr (is_cplx<C>) {
      return cm::div(a, b);
    } else {
      return a / b;
    }
  }
};
struct PowOp {
  template <class C>
  CULUA_HD static C apply(C a, C b) {
    if constexpr (is_cplx<C>) {
      return cm::pow(a, b);
    } else if constexpr (is_int<C>) {
      return int_pow(a, b);
    } else {
      return rm::pow(a, b);
    }
  }
};
// maximum/minimum propagate NaN (numpy's maximum, not fmax); complex values in numpy's order.
struct MaximumOp {
  template <class C>
  CULUA_HD static C apply(C a, C b) {
    if constexpr (is_cplx<C>) {
      return cm::maximum(a, b);
    } else {
      if (is_nan(a)) return a;
      if (is_nan(b)) return b;
      return a < b ? b : a;
    }
  }
};
struct MinimumOp {
  template <class C>
  CULUA_HD static C apply(C a, C b) {
    if constexpr (is_cplx<C>) {
      return cm::minimum(a, b);
    } else {
      if (is_nan(a)) return a;
      if (is_nan(b)) return b;
      return b < a ? b : a;
    }
  }
};
struct FloorDivOp {
  template <class C>
  CULUA_HD static C apply(C a, C b) {
    if constexpr (is_int<C>) {
      return int_floordiv(a, b);
    } else {
      return float_floordiv(a, b);
    }
  }
};
struct ModOp {
  template <class C>
  CULUA_HD static C apply(C a, C b) {
    if constexpr (is_int<C>) {
      return int_mod(a, b);
    } else {
      return float_mod(a, b);
    }
  }
};
// Functions of two real floats (integer operands are promoted to a float type by the core).
struct Atan2Op {
  template <class C>
  CULUA_HD static C apply(C a, C b) {
    return rm::atan2(a, b);
  }
};
struct CopysignOp {
  template <class C>
  CULUA_HD static C apply(C a, C b) {
    return rm::copysign(a, b);
  }
};
struct HypotOp {  // C99: hypot(inf, NaN) is inf
  template <class C>
  CULUA_HD static C apply(C a, C b) {
    return rm::hypot(a, b);
  }
};
struct LogaddexpOp {  // numpy's npy_logaddexp
  template <class C>
  CULUA_HD static C apply(C a, C b) {
    if (a == b) return a + C(0.693147180559945309417232121458176568);  // also equal infinities
    const C d = a - b;
    if (d > C(0)) return a + rm::log1p(rm::exp(-d));
    if (d <= C(0)) return b + rm::log1p(rm::exp(d));
    return d;  // NaN
  }
};

// Bitwise operations on integers and bools (bools: logical; shifts compute bools in i8).
struct BitAndOp {
  template <class C>
  CULUA_HD static C apply(C a, C b) {
    if constexpr (is_bool<C>) {
      return a && b;
    } else {
      return static_cast<C>(a & b);
    }
  }
};
struct BitOrOp {
  template <class C>
  CULUA_HD static C apply(C a, C b) {
    if constexpr (is_bool<C>) {
      return a || b;
    } else {
      return static_cast<C>(a | b);
    }
  }
};
struct BitXorOp {
  template <class C>
  CULUA_HD static C apply(C a, C b) {
    if constexpr (is_bool<C>) {
      return a != b;
    } else {
      return static_cast<C>(a ^ b);
    }
  }
};
// Shifts as numpy's npy_lshift/npy_rshift: a count outside [0, bits) shifts every bit out (0, or
// -1 for a negative number shifted right); bits shifted left past the top are lost (wrapping).
template <class I>
CULUA_HD inline bool shift_in_range(I b) {
  if constexpr (std::is_signed_v<I>) {
    if (b < 0) return false;
  }
  return static_cast<uint64_t>(b) < sizeof(I) * 8;
}
struct ShlOp {
  template <class C>
  CULUA_HD static C apply(C a, C b) {
    if (!shift_in_range(b)) return C(0);
    using U = std::make_unsigned_t<C>;
    using W = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
    return static_cast<C>(static_cast<U>(static_cast<W>(static_cast<U>(a)) << b));
  }
};
struct ShrOp {
  template <class C>
  CULUA_HD static C apply(C a, C b) {
    if (!shift_in_range(b)) {
      if constexpr (std::is_signed_v<C>) {
        if (a < 0) return C(-1);
      }
      return C(0);
    }
    return static_cast<C>(a >> b);  // arithmetic for signed types (C++20)
  }
};

template <class C>
CULUA_HD inline bool nonzero(C a) {
  if constexpr (is_cplx<C>) {
    return a.re != decltype(a.re)(0) || a.im != decltype(a.im)(0);
  } else if constexpr (is_bool<C>) {
    return a;
  } else {
    return a != C(0);  // NaN is true, as in numpy
  }
}
struct EqOp {
  template <class C>
  CULUA_HD static bool apply(C a, C b) {
    if constexpr (is_cplx<C>) {
      return a.re == b.re && a.im == b.im;
    } else {
      return a == b;
    }
  }
};
struct NeOp {
  template <class C>
  CULUA_HD static bool apply(C a, C b) {
    return !EqOp::apply(a, b);
  }
};
struct LtOp {
  template <class C>
  CULUA_HD static bool apply(C a, C b) {
    return a < b;
  }
};
struct LeOp {
  template <class C>
  CULUA_HD static bool apply(C a, C b) {
    return a <= b;
  }
};
struct GtOp {
  template <class C>
  CULUA_HD static bool apply(C a, C b) {
    return a > b;
  }
};
struct GeOp {
  template <class C>
  CULUA_HD static bool apply(C a, C b) {
    return a >= b;
  }
};

// Logical operations on any dtype: nonzero is true (numpy's logical_and ...).
struct LogicalAndOp {
  template <class C>
  CULUA_HD static bool apply(C a, C b) {
    return nonzero(a) && nonzero(b);
  }
};
struct LogicalOrOp {
  template <class C>
  CULUA_HD static bool apply(C a, C b) {
    return nonzero(a) || nonzero(b);
  }
};
struct LogicalXorOp {
  template <class C>
  CULUA_HD static bool apply(C a, C b) {
    return nonzero(a) != nonzero(b);
  }
};

// Unary operations. Transcendental functions are valid on floats and complex values only (the
// core promotes integer inputs to a float type first).
struct NegOp {
  template <class C>
  CULUA_HD static C apply(C a) {
    if constexpr (is_cplx<C>) {
      return C{-a.re, -a.im};
    } else if constexpr (is_int<C>) {
      return wrap_sub(C(0), a);
    } else {
      return -a;
    }
  }
};
struct AbsOp {
  template <class C>
  CULUA_HD static auto apply(C a) {
    if constexpr (is_cplx<C>) {
      return cm::abs(a);
    } else if constexpr (is_bool<C>) {
      return a;
    } else if constexpr (is_int<C>) {
      if constexpr (std::is_signed_v<C>) {
        return a < 0 ? wrap_sub(C(0), a) : a;
      } else {
        return a;
      }
    } else {
      return rm::fabs(a);
    }
  }
};
#define CULUA_FLOAT_UNARY(Name, fn) \
  struct Name {                     \
    template <class C>              \
    CULUA_HD static C apply(C a) {  \
      if constexpr (is_cplx<C>) {   \
        return cm::fn(a);           \
      } else {                      \
        return rm::fn(a);           \
      }                             \
    }                               \
  };
CULUA_FLOAT_UNARY(ExpOp, exp)
CULUA_FLOAT_UNARY(LogOp, log)
CULUA_FLOAT_UNARY(SqrtOp, sqrt)
CULUA_FLOAT_UNARY(SinOp, sin)
CULUA_FLOAT_UNARY(CosOp, cos)
CULUA_FLOAT_UNARY(TanhOp, tanh)
CULUA_FLOAT_UNARY(AcosOp, acos)
CULUA_FLOAT_UNARY(AcoshOp, acosh)
CULUA_FLOAT_UNARY(AsinOp, asin)
CULUA_FLOAT_UNARY(AsinhOp, asinh)
CULUA_FLOAT_UNARY(AtanOp, atan)
CULUA_FLOAT_UNARY(AtanhOp, atanh)
CULUA_FLOAT_UNARY(CoshOp, cosh)
CULUA_FLOAT_UNARY(SinhOp, sinh)
CULUA_FLOAT_UNARY(TanOp, tan)
CULUA_FLOAT_UNARY(Expm1Op, expm1)
CULUA_FLOAT_UNARY(Log1pOp, log1p)
CULUA_FLOAT_UNARY(Log2Op, log2)
CULUA_FLOAT_UNARY(Log10Op, log10)
#undef CULUA_FLOAT_UNARY
struct ConjOp {
  template <class C>
  CULUA_HD static C apply(C a) {
    if constexpr (is_cplx<C>) {
      return C{a.re, -a.im};
    } else {
      return a;
    }
  }
};
struct RealOp {
  template <class C>
  CULUA_HD static auto apply(C a) {
    if constexpr (is_cplx<C>) {
      return a.re;
    } else {
      return a;
    }
  }
};
struct ImagOp {
  template <class C>
  CULUA_HD static auto apply(C a) {
    if constexpr (is_cplx<C>) {
      return a.im;
    } else {
      return C(0);
    }
  }
};

struct SquareOp {  // bools compute in i8 (numpy's square)
  template <class C>
  CULUA_HD static C apply(C a) {
    return MulOp::apply(a, a);
  }
};
struct PositiveOp {
  template <class C>
  CULUA_HD static C apply(C a) {
    return a;
  }
};
// sign: -1, 0 or 1 (0 also for -0.0, NaN for NaN, as numpy); complex values z / |z|.
struct SignOp {
  template <class C>
  CULUA_HD static C apply(C a) {
    if constexpr (is_cplx<C>) {
      return cm::sign(a);
    } else if constexpr (is_int<C> && std::is_signed_v<C>) {
      return static_cast<C>(static_cast<int>(a > C(0)) - static_cast<int>(a < C(0)));
    } else if constexpr (is_int<C>) {
      return static_cast<C>(a != C(0));  // no comparison of an unsigned value with 0 (nvcc warns)
    } else {
      return a > C(0) ? C(1) : a < C(0) ? C(-1) : a == C(0) ? C(0) : a;
    }
  }
};
// Rounding: integers are whole already (their dtype is kept, as the standard asks).
struct FloorOp {
  template <class C>
  CULUA_HD static C apply(C a) {
    if constexpr (is_int<C>) {
      return a;
    } else {
      return rm::floor(a);
    }
  }
};
struct CeilOp {
  template <class C>
  CULUA_HD static C apply(C a) {
    if constexpr (is_int<C>) {
      return a;
    } else {
      return rm::ceil(a);
    }
  }
};
struct TruncOp {
  template <class C>
  CULUA_HD static C apply(C a) {
    if constexpr (is_int<C>) {
      return a;
    } else {
      return rm::trunc(a);
    }
  }
};
struct RoundOp {  // halves to even (rint in the default rounding mode); complex: both parts
  template <class C>
  CULUA_HD static C apply(C a) {
    if constexpr (is_cplx<C>) {
      return C{rm::rint(a.re), rm::rint(a.im)};
    } else if constexpr (is_int<C>) {
      return a;
    } else {
      return rm::rint(a);
    }
  }
};
struct SignbitOp {  // the sign bit, also of -0.0 and of NaN
  template <class C>
  CULUA_HD static bool apply(C a) {
    if constexpr (is_flt<C>) {
      return rm::copysign(C(1), a) < C(0);
    } else if constexpr (is_int<C> && std::is_signed_v<C>) {
      return a < C(0);
    } else {
      return false;
    }
  }
};
struct IsnanOp {
  template <class C>
  CULUA_HD static bool apply(C a) {
    if constexpr (is_cplx<C>) {
      return cm::has_nan(a);
    } else {
      return is_nan(a);
    }
  }
};
struct IsinfOp {
  template <class C>
  CULUA_HD static bool apply(C a) {
    if constexpr (is_cplx<C>) {
      return cm::isinf_r(a.re) || cm::isinf_r(a.im);
    } else if constexpr (is_flt<C>) {
      return cm::isinf_r(a);
    } else {
      return false;
    }
  }
};
struct IsfiniteOp {
  template <class C>
  CULUA_HD static bool apply(C a) {
    if constexpr (is_cplx<C>) {
      return cm::isfinite_r(a.re) && cm::isfinite_r(a.im);
    } else if constexpr (is_flt<C>) {
      return cm::isfinite_r(a);
    } else {
      return true;
    }
  }
};
struct BitInvertOp {
  template <class C>
  CULUA_HD static C apply(C a) {
    if constexpr (is_bool<C>) {
      return !a;
    } else {
      return static_cast<C>(~a);
    }
  }
};
struct LogicalNotOp {
  template <class C>
  CULUA_HD static bool apply(C a) {
    return !nonzero(a);
  }
};

// Each functor's row of the op table (core/backend/op_table.hpp): whether it is defined for a
// compute type comes from there, not from the functor.
template <class Op>
struct op_row;
#define CULUA_BINARY_ROW(e, name, functor, ...)                      \
  template <>                                                        \
  struct op_row<functor> {                                           \
    static constexpr OpRule rule = culua::detail::rule(BinaryOp::e); \
  };
#define CULUA_UNARY_ROW(e, name, functor, ...)                      \
  template <>                                                       \
  struct op_row<functor> {                                          \
    static constexpr OpRule rule = culua::detail::rule(UnaryOp::e); \
  };
CULUA_BINARY_OPS(CULUA_BINARY_ROW)
CULUA_UNARY_OPS(CULUA_UNARY_ROW)
#undef CULUA_BINARY_ROW
#undef CULUA_UNARY_ROW

// The table's class of a compute type.
template <class C>
inline constexpr uint8_t op_class_of = is_bool<C>   ? opclass::kB
                                       : is_int<C>  ? opclass::kI
                                       : is_flt<C>  ? opclass::kF
                                       : is_cplx<C> ? opclass::kC
                                                    : 0;
// Is operation Op defined for compute type C (its row accepts C's class)?
template <class Op, class C>
inline constexpr bool op_valid = accepts(op_row<Op>::rule, op_class_of<C>);

// Calls f(Op{}) for a runtime operation code (the cases: core/backend/op_table.hpp).
#define CULUA_BINARY_CASE(e, name, functor, ...) \
  case BinaryOp::e:                              \
    return f(functor{});
#define CULUA_UNARY_CASE(e, name, functor, ...) \
  case UnaryOp::e:                              \
    return f(functor{});
template <class F>
CULUA_HD decltype(auto) visit_binary(BinaryOp op, F&& f) {
  switch (op) { CULUA_BINARY_OPS(CULUA_BINARY_CASE) }
  return f(AddOp{});
}

template <class F>
CULUA_HD decltype(auto) visit_unary(UnaryOp op, F&& f) {
  switch (op) { CULUA_UNARY_OPS(CULUA_UNARY_CASE) }
  return f(NegOp{});
}

// The same, for host code that passes host-only callables.
template <class F>
decltype(auto) visit_binary_host(BinaryOp op, F&& f) {
  switch (op) { CULUA_BINARY_OPS(CULUA_BINARY_CASE) }
  return f(AddOp{});
}

template <class F>
decltype(auto) visit_unary_host(UnaryOp op, F&& f) {
  switch (op) { CULUA_UNARY_OPS(CULUA_UNARY_CASE) }
  return f(NegOp{});
}
#undef CULUA_BINARY_CASE
#undef CULUA_UNARY_CASE

}  // namespace culua::detail::kernels
