// The math of the elementwise operations, written once for the host and CUDA backends. Every
// operation works on "compute" values: the element type itself, except f16/bf16, which compute
// in float and round the result once when it is stored.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "core/elementwise_call.hpp"
#include "core/numeric.hpp"

namespace culua::detail::kernels {

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

template <class T>
struct real_type {
  using type = T;
};
template <class T>
struct real_type<complex<T>> {
  using type = T;
};

// Real math on float and double, one name for both (the CUDA and host libraries differ in the
// last bits of transcendental functions; + - * / and sqrt are correctly rounded on both).
namespace rm {
CULUA_HD inline float exp(float x) {
  return ::expf(x);
}
CULUA_HD inline double exp(double x) {
  return ::exp(x);
}
CULUA_HD inline float log(float x) {
  return ::logf(x);
}
CULUA_HD inline double log(double x) {
  return ::log(x);
}
CULUA_HD inline float sqrt(float x) {
  return ::sqrtf(x);
}
CULUA_HD inline double sqrt(double x) {
  return ::sqrt(x);
}
CULUA_HD inline float sin(float x) {
  return ::sinf(x);
}
CULUA_HD inline double sin(double x) {
  return ::sin(x);
}
CULUA_HD inline float cos(float x) {
  return ::cosf(x);
}
CULUA_HD inline double cos(double x) {
  return ::cos(x);
}
CULUA_HD inline float tanh(float x) {
  return ::tanhf(x);
}
CULUA_HD inline double tanh(double x) {
  return ::tanh(x);
}
CULUA_HD inline float sinh(float x) {
  return ::sinhf(x);
}
CULUA_HD inline double sinh(double x) {
  return ::sinh(x);
}
CULUA_HD inline float cosh(float x) {
  return ::coshf(x);
}
CULUA_HD inline double cosh(double x) {
  return ::cosh(x);
}
CULUA_HD inline float tan(float x) {
  return ::tanf(x);
}
CULUA_HD inline double tan(double x) {
  return ::tan(x);
}
CULUA_HD inline float pow(float x, float y) {
  return ::powf(x, y);
}
CULUA_HD inline double pow(double x, double y) {
  return ::pow(x, y);
}
CULUA_HD inline float atan2(float y, float x) {
  return ::atan2f(y, x);
}
CULUA_HD inline double atan2(double y, double x) {
  return ::atan2(y, x);
}
CULUA_HD inline float hypot(float x, float y) {
  return ::hypotf(x, y);
}
CULUA_HD inline double hypot(double x, double y) {
  return ::hypot(x, y);
}
CULUA_HD inline float fabs(float x) {
  return ::fabsf(x);
}
CULUA_HD inline double fabs(double x) {
  return ::fabs(x);
}
CULUA_HD inline float floor(float x) {
  return ::floorf(x);
}
CULUA_HD inline double floor(double x) {
  return ::floor(x);
}
CULUA_HD inline float fmod(float x, float y) {
  return ::fmodf(x, y);
}
CULUA_HD inline double fmod(double x, double y) {
  return ::fmod(x, y);
}
CULUA_HD inline float copysign(float x, float y) {
  return ::copysignf(x, y);
}
CULUA_HD inline double copysign(double x, double y) {
  return ::copysign(x, y);
}
}  // namespace rm

// Complex arithmetic and functions, on complex<float> and complex<double>.
namespace cm {
template <class T>
CULUA_HD inline complex<T> add(complex<T> a, complex<T> b) {
  return {a.re + b.re, a.im + b.im};
}
template <class T>
CULUA_HD inline complex<T> sub(complex<T> a, complex<T> b) {
  return {a.re - b.re, a.im - b.im};
}
template <class T>
CULUA_HD inline complex<T> mul(complex<T> a, complex<T> b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
// Smith's algorithm: no overflow for large divisors.
template <class T>
CULUA_HD inline complex<T> div(complex<T> a, complex<T> b) {
  if (rm::fabs(b.re) >= rm::fabs(b.im)) {
    if (b.re == T(0) && b.im == T(0)) return {a.re / rm::fabs(b.re), a.im / rm::fabs(b.im)};
    const T r = b.im / b.re;
    const T d = b.re + b.im * r;
    return {(a.re + a.im * r) / d, (a.im - a.re * r) / d};
  }
  const T r = b.re / b.im;
  const T d = b.re * r + b.im;
  return {(a.re * r + a.im) / d, (a.im * r - a.re) / d};
}
template <class T>
CULUA_HD inline T abs(complex<T> a) {
  return rm::hypot(a.re, a.im);
}
template <class T>
CULUA_HD inline complex<T> exp(complex<T> a) {
  const T e = rm::exp(a.re);
  if (a.im == T(0)) return {e, a.im};
  return {e * rm::cos(a.im), e * rm::sin(a.im)};
}
template <class T>
CULUA_HD inline complex<T> log(complex<T> a) {
  return {rm::log(abs(a)), rm::atan2(a.im, a.re)};
}
template <class T>
CULUA_HD inline complex<T> sqrt(complex<T> a) {
  if (a.re == T(0) && a.im == T(0)) return {T(0), a.im};
  const T t = rm::sqrt((rm::fabs(a.re) + abs(a)) * T(0.5));
  if (a.re >= T(0)) return {t, a.im / (T(2) * t)};
  return {rm::fabs(a.im) / (T(2) * t), rm::copysign(t, a.im)};
}
template <class T>
CULUA_HD inline complex<T> sin(complex<T> a) {
  return {rm::sin(a.re) * rm::cosh(a.im), rm::cos(a.re) * rm::sinh(a.im)};
}
template <class T>
CULUA_HD inline complex<T> cos(complex<T> a) {
  return {rm::cos(a.re) * rm::cosh(a.im), -(rm::sin(a.re) * rm::sinh(a.im))};
}
template <class T>
CULUA_HD inline complex<T> tanh(complex<T> a) {
  // Past |re| = 20 (float) or 40 (double), tanh is 1 to working precision and cosh overflows.
  const T big = sizeof(T) == 4 ? T(20) : T(40);
  if (rm::fabs(a.re) > big)
    return {rm::copysign(T(1), a.re), rm::copysign(T(0), rm::sin(T(2) * a.im))};
  const T d = rm::cosh(T(2) * a.re) + rm::cos(T(2) * a.im);
  return {rm::sinh(T(2) * a.re) / d, rm::sin(T(2) * a.im) / d};
}
template <class T>
CULUA_HD inline complex<T> pow(complex<T> a, complex<T> b) {
  if (a.re == T(0) && a.im == T(0)) {
    if (b.re == T(0) && b.im == T(0)) return {T(1), T(0)};
    return {T(0), T(0)};
  }
  return exp(mul(b, log(a)));
}
}  // namespace cm

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

// Binary operations: Op::apply(a, b) on compute values. `valid<C>` says whether the operation is
// defined for that compute type (the core rejects the others before launching).
struct AddOp {
  template <class C>
  static constexpr bool valid = true;
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
  static constexpr bool valid = !is_bool<C>;
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
  static constexpr bool valid = true;
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
  static constexpr bool valid = is_flt<C> || is_cplx<C>;
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
  static constexpr bool valid = !is_bool<C>;
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
// maximum/minimum propagate NaN (numpy's maximum, not fmax).
struct MaximumOp {
  template <class C>
  static constexpr bool valid = !is_cplx<C>;
  template <class C>
  CULUA_HD static C apply(C a, C b) {
    if (is_nan(a)) return a;
    if (is_nan(b)) return b;
    return a < b ? b : a;
  }
};
struct MinimumOp {
  template <class C>
  static constexpr bool valid = !is_cplx<C>;
  template <class C>
  CULUA_HD static C apply(C a, C b) {
    if (is_nan(a)) return a;
    if (is_nan(b)) return b;
    return b < a ? b : a;
  }
};
struct FloorDivOp {
  template <class C>
  static constexpr bool valid = is_flt<C> || is_int<C>;
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
  static constexpr bool valid = is_flt<C> || is_int<C>;
  template <class C>
  CULUA_HD static C apply(C a, C b) {
    if constexpr (is_int<C>) {
      return int_mod(a, b);
    } else {
      return float_mod(a, b);
    }
  }
};
struct EqOp {
  template <class C>
  static constexpr bool valid = true;
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
  static constexpr bool valid = true;
  template <class C>
  CULUA_HD static bool apply(C a, C b) {
    return !EqOp::apply(a, b);
  }
};
struct LtOp {
  template <class C>
  static constexpr bool valid = !is_cplx<C>;
  template <class C>
  CULUA_HD static bool apply(C a, C b) {
    return a < b;
  }
};
struct LeOp {
  template <class C>
  static constexpr bool valid = !is_cplx<C>;
  template <class C>
  CULUA_HD static bool apply(C a, C b) {
    return a <= b;
  }
};
struct GtOp {
  template <class C>
  static constexpr bool valid = !is_cplx<C>;
  template <class C>
  CULUA_HD static bool apply(C a, C b) {
    return a > b;
  }
};
struct GeOp {
  template <class C>
  static constexpr bool valid = !is_cplx<C>;
  template <class C>
  CULUA_HD static bool apply(C a, C b) {
    return a >= b;
  }
};

// Unary operations. Transcendental functions are valid on floats and complex values only (the
// core promotes integer inputs to a float type first).
struct NegOp {
  template <class C>
  static constexpr bool valid = !is_bool<C>;
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
  static constexpr bool valid = true;
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
#define CULUA_FLOAT_UNARY(Name, fn)                        \
  struct Name {                                            \
    template <class C>                                     \
    static constexpr bool valid = is_flt<C> || is_cplx<C>; \
    template <class C>                                     \
    CULUA_HD static C apply(C a) {                         \
      if constexpr (is_cplx<C>) {                          \
        return cm::fn(a);                                  \
      } else {                                             \
        return rm::fn(a);                                  \
      }                                                    \
    }                                                      \
  };
CULUA_FLOAT_UNARY(ExpOp, exp)
CULUA_FLOAT_UNARY(LogOp, log)
CULUA_FLOAT_UNARY(SqrtOp, sqrt)
CULUA_FLOAT_UNARY(SinOp, sin)
CULUA_FLOAT_UNARY(CosOp, cos)
CULUA_FLOAT_UNARY(TanhOp, tanh)
#undef CULUA_FLOAT_UNARY
struct ConjOp {
  template <class C>
  static constexpr bool valid = true;
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
  static constexpr bool valid = true;
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
  static constexpr bool valid = true;
  template <class C>
  CULUA_HD static auto apply(C a) {
    if constexpr (is_cplx<C>) {
      return a.im;
    } else {
      return C(0);
    }
  }
};

// Calls f(Op{}) for a runtime operation code.
template <class F>
CULUA_HD decltype(auto) visit_binary(BinaryOp op, F&& f) {
  switch (op) {
    case BinaryOp::Add:
      return f(AddOp{});
    case BinaryOp::Sub:
      return f(SubOp{});
    case BinaryOp::Mul:
      return f(MulOp{});
    case BinaryOp::Div:
      return f(DivOp{});
    case BinaryOp::Pow:
      return f(PowOp{});
    case BinaryOp::Maximum:
      return f(MaximumOp{});
    case BinaryOp::Minimum:
      return f(MinimumOp{});
    case BinaryOp::FloorDiv:
      return f(FloorDivOp{});
    case BinaryOp::Mod:
      return f(ModOp{});
    case BinaryOp::Eq:
      return f(EqOp{});
    case BinaryOp::Ne:
      return f(NeOp{});
    case BinaryOp::Lt:
      return f(LtOp{});
    case BinaryOp::Le:
      return f(LeOp{});
    case BinaryOp::Gt:
      return f(GtOp{});
    case BinaryOp::Ge:
      return f(GeOp{});
  }
  return f(AddOp{});
}

template <class F>
CULUA_HD decltype(auto) visit_unary(UnaryOp op, F&& f) {
  switch (op) {
    case UnaryOp::Neg:
      return f(NegOp{});
    case UnaryOp::Abs:
      return f(AbsOp{});
    case UnaryOp::Exp:
      return f(ExpOp{});
    case UnaryOp::Log:
      return f(LogOp{});
    case UnaryOp::Sqrt:
      return f(SqrtOp{});
    case UnaryOp::Sin:
      return f(SinOp{});
    case UnaryOp::Cos:
      return f(CosOp{});
    case UnaryOp::Tanh:
      return f(TanhOp{});
    case UnaryOp::Conj:
      return f(ConjOp{});
    case UnaryOp::Real:
      return f(RealOp{});
    case UnaryOp::Imag:
      return f(ImagOp{});
  }
  return f(NegOp{});
}

// The same, for host code that passes host-only callables.
template <class F>
decltype(auto) visit_binary_host(BinaryOp op, F&& f) {
  switch (op) {
    case BinaryOp::Add:
      return f(AddOp{});
    case BinaryOp::Sub:
      return f(SubOp{});
    case BinaryOp::Mul:
      return f(MulOp{});
    case BinaryOp::Div:
      return f(DivOp{});
    case BinaryOp::Pow:
      return f(PowOp{});
    case BinaryOp::Maximum:
      return f(MaximumOp{});
    case BinaryOp::Minimum:
      return f(MinimumOp{});
    case BinaryOp::FloorDiv:
      return f(FloorDivOp{});
    case BinaryOp::Mod:
      return f(ModOp{});
    case BinaryOp::Eq:
      return f(EqOp{});
    case BinaryOp::Ne:
      return f(NeOp{});
    case BinaryOp::Lt:
      return f(LtOp{});
    case BinaryOp::Le:
      return f(LeOp{});
    case BinaryOp::Gt:
      return f(GtOp{});
    case BinaryOp::Ge:
      return f(GeOp{});
  }
  return f(AddOp{});
}

template <class F>
decltype(auto) visit_unary_host(UnaryOp op, F&& f) {
  switch (op) {
    case UnaryOp::Neg:
      return f(NegOp{});
    case UnaryOp::Abs:
      return f(AbsOp{});
    case UnaryOp::Exp:
      return f(ExpOp{});
    case UnaryOp::Log:
      return f(LogOp{});
    case UnaryOp::Sqrt:
      return f(SqrtOp{});
    case UnaryOp::Sin:
      return f(SinOp{});
    case UnaryOp::Cos:
      return f(CosOp{});
    case UnaryOp::Tanh:
      return f(TanhOp{});
    case UnaryOp::Conj:
      return f(ConjOp{});
    case UnaryOp::Real:
      return f(RealOp{});
    case UnaryOp::Imag:
      return f(ImagOp{});
  }
  return f(NegOp{});
}

}  // namespace culua::detail::kernels
