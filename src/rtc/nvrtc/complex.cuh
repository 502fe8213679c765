// cuda::std::complex for cu.elementwise and cu.reduction, compiled by NVRTC only: the interface
// of std::complex over culua's complex element (core/model/numeric.hpp), with the arithmetic and
// functions of kernels/complex_math.cuh, so that a template computes as the built-in operations
// do (a plain product, Smith's division, numpy's special values). The last part of the prelude of
// templates with complex operands (rtc/template_prelude.hpp), in place of libcu++'s complex
// header, which took NVRTC over a second to compile. Nothing in this text may spell the
// preprocessor's word for reading a file: the sandbox refuses sources that contain it.
// It follows core/model/numeric.hpp, kernels/real_math.cuh and kernels/complex_math.cuh in the
// prelude (cmake/EmbedPrelude.cmake), so it names no header itself.
#pragma once

namespace cuda {
namespace std {

namespace culua_cm = ::culua::detail::kernels::cm;
namespace culua_rm = ::culua::detail::kernels::rm;

template <class T>
class complex : public ::culua::detail::complex<T> {
  using base = ::culua::detail::complex<T>;

 public:
  using value_type = T;

  CULUA_HD constexpr complex(T x = T(), T y = T()) : base{x, y} {}
  CULUA_HD constexpr complex(const base& z) : base(z) {}
  // complex<double> from complex<float> implicitly, the reverse explicitly (as std::complex).
  template <class U, ::std::enable_if_t<(sizeof(U) < sizeof(T)), int> = 0>
  CULUA_HD constexpr complex(const complex<U>& z) : base{T(z.re), T(z.im)} {}
  template <class U, ::std::enable_if_t<(sizeof(U) > sizeof(T)), int> = 0>
  CULUA_HD explicit constexpr complex(const complex<U>& z) : base{T(z.re), T(z.im)} {}

  CULUA_HD constexpr T real() const { return this->re; }
  CULUA_HD constexpr T imag() const { return this->im; }
  CULUA_HD void real(T v) { this->re = v; }
  CULUA_HD void imag(T v) { this->im = v; }

  CULUA_HD complex& operator=(T v) {
    this->re = v;
    this->im = T(0);
    return *this;
  }
  // From complex<U> of either width, narrowing included (as std::complex's assignment).
  template <class U>
  CULUA_HD complex& operator=(const complex<U>& z) {
    this->re = T(z.re);
    this->im = T(z.im);
    return *this;
  }
  template <class U>
  CULUA_HD complex& operator+=(const complex<U>& z) {
    return *this = *this + complex(T(z.re), T(z.im));
  }
  template <class U>
  CULUA_HD complex& operator-=(const complex<U>& z) {
    return *this = *this - complex(T(z.re), T(z.im));
  }
  template <class U>
  CULUA_HD complex& operator*=(const complex<U>& z) {
    return *this = *this * complex(T(z.re), T(z.im));
  }
  template <class U>
  CULUA_HD complex& operator/=(const complex<U>& z) {
    return *this = *this / complex(T(z.re), T(z.im));
  }
  CULUA_HD complex& operator+=(T v) { return *this = *this + v; }
  CULUA_HD complex& operator-=(T v) { return *this = *this - v; }
  CULUA_HD complex& operator*=(T v) { return *this = *this * v; }
  CULUA_HD complex& operator/=(T v) { return *this = *this / v; }

  // Hidden friends: an operand of another type converts as a constructor argument (2 * z, z + 1,
  // complex<double> + complex<float>).
  friend CULUA_HD complex operator+(const complex& a) { return a; }
  friend CULUA_HD complex operator-(const complex& a) { return complex(-a.re, -a.im); }
  friend CULUA_HD complex operator+(const complex& a, const complex& b) {
    return culua_cm::add<T>(a, b);
  }
  friend CULUA_HD complex operator-(const complex& a, const complex& b) {
    return culua_cm::sub<T>(a, b);
  }
  friend CULUA_HD complex operator*(const complex& a, const complex& b) {
    return culua_cm::mul<T>(a, b);
  }
  friend CULUA_HD complex operator/(const complex& a, const complex& b) {
    return culua_cm::div<T>(a, b);
  }
  // With a real operand: the real arithmetic alone (no product with a zero imaginary part).
  friend CULUA_HD complex operator+(const complex& a, T b) { return complex(a.re + b, a.im); }
  friend CULUA_HD complex operator+(T a, const complex& b) { return complex(a + b.re, b.im); }
  friend CULUA_HD complex operator-(const complex& a, T b) { return complex(a.re - b, a.im); }
  friend CULUA_HD complex operator-(T a, const complex& b) { return complex(a - b.re, -b.im); }
  friend CULUA_HD complex operator*(const complex& a, T b) { return complex(a.re * b, a.im * b); }
  friend CULUA_HD complex operator*(T a, const complex& b) { return complex(a * b.re, a * b.im); }
  friend CULUA_HD complex operator/(const complex& a, T b) { return complex(a.re / b, a.im / b); }
  friend CULUA_HD complex operator/(T a, const complex& b) {
    return culua_cm::div<T>(base{a, T(0)}, b);
  }
  friend CULUA_HD bool operator==(const complex& a, const complex& b) {
    return a.re == b.re && a.im == b.im;
  }
  friend CULUA_HD bool operator==(const complex& a, T b) { return a.re == b && a.im == T(0); }
  friend CULUA_HD bool operator==(T a, const complex& b) { return a == b.re && b.im == T(0); }
  friend CULUA_HD bool operator!=(const complex& a, const complex& b) { return !(a == b); }
  friend CULUA_HD bool operator!=(const complex& a, T b) { return !(a == b); }
  friend CULUA_HD bool operator!=(T a, const complex& b) { return !(a == b); }
};

template <class T>
CULUA_HD constexpr T real(const complex<T>& z) {
  return z.re;
}
template <class T>
CULUA_HD constexpr T imag(const complex<T>& z) {
  return z.im;
}
template <class T>
CULUA_HD T abs(const complex<T>& z) {
  return culua_cm::abs<T>(z);
}
template <class T>
CULUA_HD T arg(const complex<T>& z) {
  return culua_rm::atan2(z.im, z.re);
}
// |z|^2; +inf when a part is infinite, even if the other is NaN (as std::norm).
template <class T>
CULUA_HD T norm(const complex<T>& z) {
  if (culua_cm::isinf_r(z.re) || culua_cm::isinf_r(z.im)) return culua_cm::inf<T>();
  return z.re * z.re + z.im * z.im;
}
template <class T>
CULUA_HD complex<T> conj(const complex<T>& z) {
  return complex<T>(z.re, -z.im);
}
template <class T>
CULUA_HD complex<T> proj(const complex<T>& z) {
  if (culua_cm::isinf_r(z.re) || culua_cm::isinf_r(z.im)) {
    return complex<T>(culua_cm::inf<T>(), culua_rm::copysign(T(0), z.im));
  }
  return z;
}
// r (cos theta + i sin theta), with std::polar's special values (libc++'s).
template <class T>
CULUA_HD complex<T> polar(const T& r, const T& theta = T()) {
  if (culua_cm::isnan_r(r) || culua_rm::copysign(T(1), r) < T(0)) {
    return complex<T>(culua_cm::nan<T>(), culua_cm::nan<T>());
  }
  if (culua_cm::isnan_r(theta)) {
    return culua_cm::isinf_r(r) ? complex<T>(r, theta) : complex<T>(theta, theta);
  }
  if (culua_cm::isinf_r(theta)) {
    return culua_cm::isinf_r(r) ? complex<T>(r, culua_cm::nan<T>())
                                : complex<T>(culua_cm::nan<T>(), culua_cm::nan<T>());
  }
  T x = r * culua_rm::cos(theta), y = r * culua_rm::sin(theta);
  if (culua_cm::isnan_r(x)) x = T(0);
  if (culua_cm::isnan_r(y)) y = T(0);
  return complex<T>(x, y);
}

#define CULUA_COMPLEX_FUNCTION(fn)              \
  template <class T>                            \
  CULUA_HD complex<T> fn(const complex<T>& z) { \
    return complex<T>(culua_cm::fn<T>(z));      \
  }
CULUA_COMPLEX_FUNCTION(exp)
CULUA_COMPLEX_FUNCTION(log)
CULUA_COMPLEX_FUNCTION(log10)
CULUA_COMPLEX_FUNCTION(sqrt)
CULUA_COMPLEX_FUNCTION(sin)
CULUA_COMPLEX_FUNCTION(cos)
CULUA_COMPLEX_FUNCTION(tan)
CULUA_COMPLEX_FUNCTION(asin)
CULUA_COMPLEX_FUNCTION(acos)
CULUA_COMPLEX_FUNCTION(atan)
CULUA_COMPLEX_FUNCTION(sinh)
CULUA_COMPLEX_FUNCTION(cosh)
CULUA_COMPLEX_FUNCTION(tanh)
CULUA_COMPLEX_FUNCTION(asinh)
CULUA_COMPLEX_FUNCTION(acosh)
CULUA_COMPLEX_FUNCTION(atanh)
#undef CULUA_COMPLEX_FUNCTION

// std::complex's rules for a real or mixed argument: an integer counts as double, and the wider
// of two types is the result's.
template <class A, class B = float>
using culua_promoted =
    ::std::conditional_t<::std::is_same_v<A, double> || ::std::is_same_v<B, double> ||
                             ::std::is_integral_v<A> || ::std::is_integral_v<B>,
                         double, float>;
template <class U>
using culua_if_real = ::std::enable_if_t<::std::is_arithmetic_v<U>, int>;

template <class U, culua_if_real<U> = 0>
CULUA_HD culua_promoted<U> real(U x) {
  return x;
}
template <class U, culua_if_real<U> = 0>
CULUA_HD culua_promoted<U> imag(U) {
  return 0;
}
template <class U, culua_if_real<U> = 0>
CULUA_HD culua_promoted<U> arg(U x) {
  return culua_rm::atan2(culua_promoted<U>(0), culua_promoted<U>(x));
}
template <class U, culua_if_real<U> = 0>
CULUA_HD culua_promoted<U> norm(U x) {
  return culua_promoted<U>(x) * culua_promoted<U>(x);
}
template <class U, culua_if_real<U> = 0>
CULUA_HD complex<culua_promoted<U>> conj(U x) {
  return complex<culua_promoted<U>>(x);
}
template <class U, culua_if_real<U> = 0>
CULUA_HD complex<culua_promoted<U>> proj(U x) {
  return complex<culua_promoted<U>>(x);
}

// numpy's power (kernels/complex_math.cuh): a whole exponent by repeated products.
template <class T, class U>
CULUA_HD complex<culua_promoted<T, U>> pow(const complex<T>& a, const complex<U>& b) {
  using R = culua_promoted<T, U>;
  return culua_cm::pow<R>(complex<R>(R(a.re), R(a.im)), complex<R>(R(b.re), R(b.im)));
}
template <class T, class U, culua_if_real<U> = 0>
CULUA_HD complex<culua_promoted<T, U>> pow(const complex<T>& a, const U& b) {
  using R = culua_promoted<T, U>;
  return culua_cm::pow<R>(complex<R>(R(a.re), R(a.im)), complex<R>(R(b)));
}
template <class T, class U, culua_if_real<U> = 0>
CULUA_HD complex<culua_promoted<T, U>> pow(const U& a, const complex<T>& b) {
  using R = culua_promoted<T, U>;
  return culua_cm::pow<R>(complex<R>(R(a)), complex<R>(R(b.re), R(b.im)));
}

// The real functions of libcu++'s cmath that user code beside complex values may call as
// cuda::std::fn: float and double (kernels/real_math.cuh), abs and the classification.
using culua_rm::acos;
using culua_rm::acosh;
using culua_rm::asin;
using culua_rm::asinh;
using culua_rm::atan;
using culua_rm::atan2;
using culua_rm::atanh;
using culua_rm::ceil;
using culua_rm::copysign;
using culua_rm::cos;
using culua_rm::cosh;
using culua_rm::exp;
using culua_rm::expm1;
using culua_rm::fabs;
using culua_rm::floor;
using culua_rm::fmod;
using culua_rm::hypot;
using culua_rm::log;
using culua_rm::log10;
using culua_rm::log1p;
using culua_rm::log2;
using culua_rm::pow;
using culua_rm::rint;
using culua_rm::sin;
using culua_rm::sinh;
using culua_rm::sqrt;
using culua_rm::tan;
using culua_rm::tanh;
using culua_rm::trunc;
using ::std::numeric_limits;
CULUA_HD inline float abs(float x) {
  return culua_rm::fabs(x);
}
CULUA_HD inline double abs(double x) {
  return culua_rm::fabs(x);
}
CULUA_HD inline bool isnan(float x) {
  return culua_cm::isnan_r(x);
}
CULUA_HD inline bool isnan(double x) {
  return culua_cm::isnan_r(x);
}
CULUA_HD inline bool isinf(float x) {
  return culua_cm::isinf_r(x);
}
CULUA_HD inline bool isinf(double x) {
  return culua_cm::isinf_r(x);
}
CULUA_HD inline bool isfinite(float x) {
  return culua_cm::isfinite_r(x);
}
CULUA_HD inline bool isfinite(double x) {
  return culua_cm::isfinite_r(x);
}

}  // namespace std
}  // namespace cuda
