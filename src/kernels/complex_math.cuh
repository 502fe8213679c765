// Complex arithmetic and functions for the elementwise operations (namespace cm), on
// complex<float> and complex<double>. The functions follow C99 Annex G (G.6) at infinities, NaNs
// and signed zeros, as numpy does, and avoid overflow in intermediate steps (scaled exponentials,
// scaled square roots), after glibc's and FreeBSD's msun implementations; they are built from
// real functions present on both backends (kernels/real_math.cuh; the explicit fma is correctly
// rounded on both), so the host and CUDA agree to within the last bits of those real functions.
// Part of the fused kernels' NVRTC prelude, after real_math.cuh.
#pragma once

#include <cmath>
#include <limits>

#include "core/model/numeric.hpp"
#include "kernels/real_math.cuh"

namespace culua::detail::kernels::cm {

template <class T>
CULUA_HD inline T inf() {
  return std::numeric_limits<T>::infinity();
}
template <class T>
CULUA_HD inline T nan() {
  return std::numeric_limits<T>::quiet_NaN();
}
template <class T>
CULUA_HD inline bool isnan_r(T x) {
  return x != x;
}
template <class T>
CULUA_HD inline bool isinf_r(T x) {
  return rm::fabs(x) == inf<T>();
}
template <class T>
CULUA_HD inline bool isfinite_r(T x) {
  return rm::fabs(x) <= std::numeric_limits<T>::max();
}
// The largest whole x with exp(x) finite, minus a margin: floor((max_exponent - 1) * ln 2).
template <class T>
inline constexpr T kExpLimit = sizeof(T) == 4 ? T(88) : T(709);

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
// |z|: hypot, +inf when a part is infinite even if the other is NaN (C99 F.10.4.3).
template <class T>
CULUA_HD inline T abs(complex<T> a) {
  if (isinf_r(a.re) || isinf_r(a.im)) return inf<T>();
  return rm::hypot(a.re, a.im);
}

// h e^x (c + i s) for x > kExpLimit (h = 1 or 1/2) without overflow of e^x where the product is
// finite: e^x is applied in steps of e^kExpLimit (glibc's cexp, csinh, ccosh).
template <class T>
CULUA_HD inline complex<T> exp_cis(T x, T c, T s, T h) {
  constexpr T t = kExpLimit<T>;
  const T et = rm::exp(t);
  x -= t;
  c *= et * h;
  s *= et * h;
  if (x > t) {
    x -= t;
    c *= et;
    s *= et;
  }
  if (x > t) {
    constexpr T big = std::numeric_limits<T>::max();
    return {big * c, big * s};  // overflows with the signs of c and s
  }
  const T e = rm::exp(x);
  return {e * c, e * s};
}

template <class T>
CULUA_HD inline complex<T> exp(complex<T> a) {
  const T x = a.re, y = a.im;
  if (isfinite_r(x) && isfinite_r(y)) {
    if (y == T(0)) return {rm::exp(x), y};
    const T c = rm::cos(y), s = rm::sin(y);
    if (x > kExpLimit<T>) return exp_cis(x, c, s, T(1));
    const T e = rm::exp(x);
    return {e * c, e * s};
  }
  if (isnan_r(x)) return {x, y == T(0) ? y : nan<T>()};  // NaN + i0 keeps the zero
  if (isinf_r(x)) {
    if (isfinite_r(y)) {
      if (y == T(0)) return {x > T(0) ? x : T(0), y};
      const T c = rm::cos(y), s = rm::sin(y);
      if (x > T(0)) return {rm::copysign(inf<T>(), c), rm::copysign(inf<T>(), s)};
      return {rm::copysign(T(0), c), rm::copysign(T(0), s)};
    }
    if (x > T(0)) return {x, nan<T>()};    // +inf + i(inf or NaN)
    return {T(0), rm::copysign(T(0), y)};  // -inf + i(inf or NaN): a zero
  }
  return {nan<T>(), nan<T>()};  // finite x, y infinite or NaN
}

// x^2 + y^2 - 1 for 0.5 <= x < 1, y <= x, x^2 + y^2 >= 0.5, with a small relative error despite
// the cancellation (glibc's __x2y2m1): float in double, where x^2 - 1 and y^2 are exact and one
// rounding remains; double as the sum of the exact products (fma) and -1, added from the
// smallest magnitude up with the rounding errors carried along.
CULUA_HD inline float x2y2m1(float x, float y) {
  const double dx = x, dy = y;
  return static_cast<float>((dx * dx - 1.0) + dy * dy);
}
CULUA_HD inline double x2y2m1(double x, double y) {
  double v[5];
  v[1] = x * x;
  v[0] = ::fma(x, x, -v[1]);
  v[3] = y * y;
  v[2] = ::fma(y, y, -v[3]);
  v[4] = -1.0;
  // Sorts v[from..4] by magnitude (insertion sort).
  auto sort = [&v](int from) {
    for (int i = from + 1; i < 5; ++i) {
      const double key = v[i];
      int j = i - 1;
      while (j >= from && ::fabs(v[j]) > ::fabs(key)) {
        v[j + 1] = v[j];
        --j;
      }
      v[j + 1] = key;
    }
  };
  sort(0);
  for (int i = 0; i <= 3; ++i) {
    const double hi = v[i + 1] + v[i];  // |v[i + 1]| >= |v[i]|: exact split
    v[i] = (v[i + 1] - hi) + v[i];
    v[i + 1] = hi;
    sort(i + 1);
  }
  return v[4] + v[3] + v[2] + v[1] + v[0];
}

// log|z| + i arg z, with log1p near |z| = 1 (glibc's clog).
template <class T>
CULUA_HD inline complex<T> log(complex<T> a) {
  const T x = a.re, y = a.im;
  if (isnan_r(x) || isnan_r(y)) {
    return {(isinf_r(x) || isinf_r(y)) ? inf<T>() : nan<T>(), nan<T>()};
  }
  if (x == T(0) && y == T(0)) {
    const T pi = T(3.14159265358979323846);
    return {-inf<T>(), rm::copysign(rm::copysign(T(1), x) < T(0) ? pi : T(0), y)};
  }
  T ax = rm::fabs(x), ay = rm::fabs(y);
  if (ax < ay) {
    const T t = ax;
    ax = ay;
    ay = t;
  }
  constexpr T big = std::numeric_limits<T>::max();
  constexpr T tiny = std::numeric_limits<T>::min();
  constexpr T eps = std::numeric_limits<T>::epsilon();
  constexpr T ln2 = T(0.693147180559945309417232121458176568);
  T re;
  if (ax > big / 2) {  // halve to keep hypot finite
    ax *= T(0.5);
    ay = ay >= tiny * 2 ? ay * T(0.5) : T(0);
    re = rm::log(rm::hypot(ax, ay)) + ln2;
  } else if (ax < tiny && ay < tiny) {  // subnormal: scale up by 2^digits
    constexpr int digits = std::numeric_limits<T>::digits;
    constexpr T up = sizeof(T) == 4 ? T(16777216.0) : T(9007199254740992.0);
    re = rm::log(rm::hypot(ax * up, ay * up)) - T(digits) * ln2;
  } else if (ax == T(1)) {
    re = rm::log1p(ay * ay) / T(2);
  } else if (ax > T(1) && ax < T(2) && ay < T(1)) {
    T d2m1 = (ax - T(1)) * (ax + T(1));
    if (ay >= eps) d2m1 += ay * ay;
    re = rm::log1p(d2m1) / T(2);
  } else if (ax < T(1) && ax >= T(0.5) && ay < eps / 2) {
    re = rm::log1p((ax - T(1)) * (ax + T(1))) / T(2);
  } else if (ax < T(1) && ax >= T(0.5) && ax * ax + ay * ay >= T(0.5)) {
    re = rm::log1p(x2y2m1(ax, ay)) / T(2);
  } else {
    re = rm::log(rm::hypot(ax, ay));
  }
  return {re, rm::atan2(y, x)};
}

// Principal square root (C99 csqrt; Algorithm 312 of CACM, scaled at both ends of the range).
template <class T>
CULUA_HD inline complex<T> sqrt(complex<T> a) {
  T x = a.re, y = a.im;
  if (x == T(0) && y == T(0)) return {T(0), y};
  if (isinf_r(y)) return {inf<T>(), y};
  if (isnan_r(x)) return {x, nan<T>()};
  if (isinf_r(x)) {
    if (x < T(0)) return {isnan_r(y) ? y : T(0), rm::copysign(inf<T>(), y)};
    return {x, isnan_r(y) ? y : rm::copysign(T(0), y)};
  }
  if (isnan_r(y)) return {nan<T>(), nan<T>()};
  constexpr T big = std::numeric_limits<T>::max() / T(2.414213562373095048801688724209698);
  constexpr T tiny = std::numeric_limits<T>::min() * 4;
  // 2^(2k) and 2^-k for inputs near underflow: k = 54 (double), 24 (float)
  constexpr T up = sizeof(T) == 4 ? T(281474976710656.0) : T(3.2451855365842673e32);
  constexpr T down = sizeof(T) == 4 ? T(5.9604644775390625e-8) : T(5.551115123125783e-17);
  T scale = T(1);
  if (rm::fabs(x) >= big || rm::fabs(y) >= big) {
    x *= T(0.25);
    y *= T(0.25);
    scale = T(2);
  } else if (rm::fabs(x) < tiny && rm::fabs(y) < tiny) {
    x *= up;
    y *= up;
    scale = down;
  }
  complex<T> r;
  if (x >= T(0)) {
    const T t = rm::sqrt((x + rm::hypot(x, y)) * T(0.5));
    r = {t, y / (T(2) * t)};
  } else {
    const T t = rm::sqrt((-x + rm::hypot(x, y)) * T(0.5));
    r = {rm::fabs(y) / (T(2) * t), rm::copysign(t, y)};
  }
  return {r.re * scale, r.im * scale};
}

// sinh and cosh (C99 csinh, ccosh; FreeBSD's special cases, glibc's scaling past kExpLimit).
template <class T>
CULUA_HD inline complex<T> sinh(complex<T> a) {
  const T x = a.re, y = a.im;
  if (isfinite_r(x) && isfinite_r(y)) {
    if (y == T(0)) return {rm::sinh(x), y};
    const T c = rm::cos(y), s = rm::sin(y);
    if (rm::fabs(x) <= kExpLimit<T>) return {rm::sinh(x) * c, rm::cosh(x) * s};
    const complex<T> w = exp_cis(rm::fabs(x), c, s, T(0.5));
    return {rm::copysign(T(1), x) * w.re, w.im};
  }
  if (x == T(0)) return {x, nan<T>()};  // +-0 + i(inf or NaN)
  if (y == T(0)) return {x, y};         // (inf or NaN) + i0
  if (isfinite_r(x)) return {nan<T>(), nan<T>()};
  if (isinf_r(x)) {
    if (!isfinite_r(y)) return {inf<T>(), nan<T>()};  // the sign is unspecified; glibc's +inf
    return {x * rm::cos(y), inf<T>() * rm::sin(y)};
  }
  return {nan<T>(), nan<T>()};
}
template <class T>
CULUA_HD inline complex<T> cosh(complex<T> a) {
  const T x = a.re, y = a.im;
  if (isfinite_r(x) && isfinite_r(y)) {
    if (y == T(0)) return {rm::cosh(x), x * y};
    const T c = rm::cos(y), s = rm::sin(y);
    if (rm::fabs(x) <= kExpLimit<T>) return {rm::cosh(x) * c, rm::sinh(x) * s};
    const complex<T> w = exp_cis(rm::fabs(x), c, s, T(0.5));
    return {w.re, rm::copysign(T(1), x) * w.im};
  }
  if (x == T(0)) return {nan<T>(), T(0)};  // +-0 + i(inf or NaN)
  if (y == T(0))
    return {x * x, (isnan_r(x) ? T(1) : rm::copysign(T(0), x)) * y};  // (inf, NaN) + i0
  if (isfinite_r(x)) return {nan<T>(), nan<T>()};
  if (isinf_r(x)) {
    if (!isfinite_r(y)) return {inf<T>(), nan<T>()};
    return {inf<T>() * rm::cos(y), x * rm::sin(y)};
  }
  return {nan<T>(), nan<T>()};
}
// sin z = -i sinh(iz), cos z = cosh(iz) (the definitions of C99 G.6).
template <class T>
CULUA_HD inline complex<T> sin(complex<T> a) {
  // Annex G leaves the sign of the infinite imaginary part open here; numpy (glibc) gives +inf.
  if (!isfinite_r(a.re) && isinf_r(a.im)) return {nan<T>(), inf<T>()};
  const complex<T> w = sinh(complex<T>{-a.im, a.re});
  return {w.im, -w.re};
}
template <class T>
CULUA_HD inline complex<T> cos(complex<T> a) {
  return cosh(complex<T>{-a.im, a.re});
}

// tanh (C99 ctanh): Kahan's formulation, accurate near the poles (x small, y near pi/2 + k pi),
// with t = tan y, beta = 1 + t^2, s = sinh x, rho = cosh x = sqrt(1 + s^2):
// tanh z = (beta rho s + i t) / (1 + beta s^2). Past |x| = 11 (float) or 22 (double) the real
// part is +-1 to working precision and the imaginary part 4 sin y cos y e^-2|x|.
template <class T>
CULUA_HD inline complex<T> tanh(complex<T> a) {
  const T x = a.re, y = a.im;
  if (!isfinite_r(x)) {
    if (isnan_r(x)) return {x, y == T(0) ? y : nan<T>()};
    const T im = (isfinite_r(y) && rm::fabs(y) > T(1)) ? rm::sin(y) * rm::cos(y) : y;
    return {rm::copysign(T(1), x), rm::copysign(T(0), im)};
  }
  if (!isfinite_r(y)) return {x == T(0) ? x : nan<T>(), nan<T>()};
  const T big = sizeof(T) == 4 ? T(11) : T(22);
  if (rm::fabs(x) >= big) {
    const T e = rm::exp(-rm::fabs(x));
    return {rm::copysign(T(1), x), T(4) * rm::sin(y) * rm::cos(y) * e * e};
  }
  const T t = rm::tan(y);
  const T beta = T(1) + t * t;
  const T s = rm::sinh(x);
  const T rho = rm::sqrt(T(1) + s * s);
  const T den = T(1) + beta * s * s;
  return {(beta * rho * s) / den, t / den};
}

// a^b as numpy computes it: a^0 = 1 (also for a = 0 or NaN); 0^b = 0 when Re b > 0 and Im b is
// finite (the standard's exp(b log 0) = exp(-inf + i(-inf sign(Im b))) = 0, numpy 2's rule; numpy
// 1.x gives NaN + i NaN unless b is real) and NaN + i NaN otherwise (the limit is infinite or has
// no direction); a whole exponent of magnitude below 100 by repeated multiplication (exact for
// small Gaussian integers, a division for negative exponents); else exp(b log a).
template <class T>
CULUA_HD inline complex<T> pow(complex<T> a, complex<T> b) {
  if (b.re == T(0) && b.im == T(0)) return {T(1), T(0)};
  if (a.re == T(0) && a.im == T(0)) {
    if (b.re > T(0) && isfinite_r(b.im)) return {T(0), T(0)};
    return {nan<T>(), nan<T>()};
  }
  if (b.im == T(0) && rm::fabs(b.re) < T(100) && b.re == rm::floor(b.re)) {
    const int n = static_cast<int>(b.re);
    if (n == 1) return a;
    if (n == 2) return mul(a, a);
    if (n == 3) return mul(a, mul(a, a));
    int m = n < 0 ? -n : n;
    complex<T> r{T(1), T(0)};
    complex<T> p = a;
    for (;;) {
      if (m & 1) r = mul(r, p);
      m >>= 1;
      if (m == 0) break;
      p = mul(p, p);
    }
    return n < 0 ? div(complex<T>{T(1), T(0)}, r) : r;
  }
  return exp(mul(b, log(a)));
}

// numpy's order of complex values for maximum and minimum: by real part, then imaginary part;
// a NaN in either part of the first operand, else of the second, is the result; ties give the
// first operand.
template <class T>
CULUA_HD inline bool has_nan(complex<T> a) {
  return isnan_r(a.re) || isnan_r(a.im);
}
template <class T>
CULUA_HD inline complex<T> maximum(complex<T> a, complex<T> b) {
  if (has_nan(a)) return a;
  if (has_nan(b)) return b;
  return (a.re > b.re || (a.re == b.re && a.im >= b.im)) ? a : b;
}
template <class T>
CULUA_HD inline complex<T> minimum(complex<T> a, complex<T> b) {
  if (has_nan(a)) return a;
  if (has_nan(b)) return b;
  return (a.re < b.re || (a.re == b.re && a.im <= b.im)) ? a : b;
}

// ---- the inverse and remaining functions of the Array API standard ----------------------------

// tan z = -i tanh(iz).
template <class T>
CULUA_HD inline complex<T> tan(complex<T> a) {
  const complex<T> w = tanh(complex<T>{-a.im, a.re});
  return {w.im, -w.re};
}
// e^z - 1, log(1 + z), log2 z and log10 z as numpy computes them (its own formulas, not C99's).
template <class T>
CULUA_HD inline complex<T> expm1(complex<T> a) {
  const T h = rm::sin(a.im / T(2));
  return {rm::expm1(a.re) * rm::cos(a.im) - T(2) * h * h, rm::exp(a.re) * rm::sin(a.im)};
}
template <class T>
CULUA_HD inline complex<T> log1p(complex<T> a) {
  const T l = rm::hypot(a.re + T(1), a.im);
  return {rm::log(l), rm::atan2(a.im, a.re + T(1))};
}
template <class T>
CULUA_HD inline complex<T> log2(complex<T> a) {
  const complex<T> w = log(a);
  constexpr T k = T(1.44269504088896340735992468100189214);
  return {w.re * k, w.im * k};
}
template <class T>
CULUA_HD inline complex<T> log10(complex<T> a) {
  const complex<T> w = log(a);
  constexpr T k = T(0.434294481903251827651128918916605082);
  return {w.re * k, w.im * k};
}

// asin(x + iy) and acos(x + iy) for finite x, y >= 0 (Hull, Fairgrieve and Tang, "Implementing
// the complex arcsine and arccosine functions using exception handling", ACM TOMS 23, 1997): the
// real part of asin, that of acos, and the imaginary part of asin (acos's is its negative).
template <class T>
struct AsinParts {
  T asin_re, acos_re, im;
};
template <class T>
CULUA_HD inline AsinParts<T> asin_kernel(T x, T y) {
  constexpr T eps = std::numeric_limits<T>::epsilon();
  constexpr T ln2 = T(0.693147180559945309417232121458176568);
  if (x > T(1) / eps || y > T(1) / eps) {
    // asin z = -i log(2iz) to working precision: the error is of order 1/|z|^2.
    constexpr T big = std::numeric_limits<T>::max() / 4;
    const T l = (x > big || y > big) ? rm::log(rm::hypot(x / 2, y / 2)) + 2 * ln2
                                     : rm::log(rm::hypot(x, y)) + ln2;
    return {rm::atan2(x, y), rm::atan2(y, x), l};
  }
  const T r = rm::hypot(x + T(1), y), s = rm::hypot(x - T(1), y);
  const T A = T(0.5) * (r + s);
  const T B = x / A;
  const T y2 = y * y;
  AsinParts<T> p;
  if (B <= T(0.6417)) {
    p.asin_re = rm::asin(B);
    p.acos_re = rm::acos(B);
  } else {
    // sqrt((A - x)(A + x)), without the cancellation of A - x.
    T d;
    if (x <= T(1)) {
      d = rm::sqrt(T(0.5) * (A + x) * (y2 / (r + x + T(1)) + (s + (T(1) - x))));
    } else {
      d = y * rm::sqrt(T(0.5) * (A + x) * (T(1) / (r + x + T(1)) + T(1) / (s + (x - T(1)))));
    }
    p.asin_re = rm::atan(x / d);
    p.acos_re = rm::atan(d / x);
  }
  if (x < T(1) && y < eps * (T(1) - x)) {
    p.im = y / rm::sqrt((T(1) - x) * (T(1) + x));
  } else if (A <= T(1.5)) {
    const T am1 = x < T(1) ? T(0.5) * (y2 / (r + x + T(1)) + y2 / (s + (T(1) - x)))
                           : T(0.5) * (y2 / (r + x + T(1)) + (s + (x - T(1))));
    p.im = rm::log1p(am1 + rm::sqrt(am1 * (A + T(1))));
  } else {
    p.im = rm::log(A + rm::sqrt(A - T(1)) * rm::sqrt(A + T(1)));
  }
  return p;
}

// The special values of the inverse functions follow C99 Annex G (G.6.1, G.6.2) as glibc, and so
// numpy, implements them.
template <class T>
CULUA_HD inline complex<T> asinh(complex<T> a) {
  const T x = a.re, y = a.im;
  const T pi_2 = T(1.57079632679489661923132169163975144);
  if (!isfinite_r(x) || !isfinite_r(y)) {
    if (isinf_r(y)) {
      return {rm::copysign(inf<T>(), x),
              isnan_r(x) ? nan<T>() : rm::copysign(isfinite_r(x) ? pi_2 : pi_2 / 2, y)};
    }
    if (!isfinite_r(x)) {
      const bool zero = (isinf_r(x) && !isnan_r(y)) || (isnan_r(x) && y == T(0));
      return {x, zero ? rm::copysign(T(0), y) : nan<T>()};
    }
    return {nan<T>(), nan<T>()};
  }
  const AsinParts<T> p = asin_kernel(rm::fabs(y), rm::fabs(x));
  return {rm::copysign(p.im, x), rm::copysign(p.asin_re, y)};
}
template <class T>
CULUA_HD inline complex<T> asin(complex<T> a) {
  if (isnan_r(a.re) || isnan_r(a.im)) {
    if (a.re == T(0)) return a;
    if (isinf_r(a.re) || isinf_r(a.im)) return {nan<T>(), rm::copysign(inf<T>(), a.im)};
    return {nan<T>(), nan<T>()};
  }
  const complex<T> w = asinh(complex<T>{-a.im, a.re});
  return {w.im, -w.re};
}
template <class T>
CULUA_HD inline complex<T> acos(complex<T> a) {
  const T x = a.re, y = a.im;
  const T pi = T(3.14159265358979323846264338327950288);
  if (!isfinite_r(x) || !isfinite_r(y) || (x == T(0) && y == T(0))) {
    const complex<T> w = asin(a);
    T re = pi / 2 - w.re;
    if (re == T(0)) re = T(0);
    return {re, -w.im};
  }
  const AsinParts<T> p = asin_kernel(rm::fabs(x), rm::fabs(y));
  return {rm::copysign(T(1), x) < T(0) ? pi - p.acos_re : p.acos_re, -rm::copysign(p.im, y)};
}
template <class T>
CULUA_HD inline complex<T> acosh(complex<T> a) {
  const T x = a.re, y = a.im;
  const T pi = T(3.14159265358979323846264338327950288);
  if (!isfinite_r(x) || !isfinite_r(y)) {
    if (isinf_r(y)) {
      if (isnan_r(x)) return {inf<T>(), nan<T>()};
      const T angle = isinf_r(x) ? (x < T(0) ? T(0.75) * pi : T(0.25) * pi) : pi / 2;
      return {inf<T>(), rm::copysign(angle, y)};
    }
    if (isinf_r(x)) {
      if (isnan_r(y)) return {inf<T>(), nan<T>()};
      return {inf<T>(), rm::copysign(rm::copysign(T(1), x) < T(0) ? pi : T(0), y)};
    }
    if (x == T(0)) return {nan<T>(), rm::copysign(pi / 2, y)};  // +-0 + i NaN (glibc)
    return {nan<T>(), nan<T>()};
  }
  if (x == T(0) && y == T(0)) return {T(0), rm::copysign(pi / 2, y)};
  const AsinParts<T> p = asin_kernel(rm::fabs(x), rm::fabs(y));
  return {p.im, rm::copysign(rm::copysign(T(1), x) < T(0) ? pi - p.acos_re : p.acos_re, y)};
}
template <class T>
CULUA_HD inline complex<T> atanh(complex<T> a) {
  const T x = a.re, y = a.im;
  const T pi_2 = T(1.57079632679489661923132169163975144);
  if (!isfinite_r(x) || !isfinite_r(y)) {
    if (isinf_r(y)) return {rm::copysign(T(0), x), rm::copysign(pi_2, y)};
    if (isinf_r(x) || x == T(0)) {
      return {rm::copysign(T(0), x), isnan_r(y) ? nan<T>() : rm::copysign(pi_2, y)};
    }
    return {nan<T>(), nan<T>()};
  }
  if (x == T(0) && y == T(0)) return a;
  constexpr T eps = std::numeric_limits<T>::epsilon();
  const T ax = rm::fabs(x), ay = rm::fabs(y);
  T re, im;
  if (ax > T(1) / eps || ay > T(1) / eps) {
    // atanh z = 1/z + i pi/2 to working precision.
    const T h = rm::hypot(ax, ay);
    re = (ax / h) / h;
    im = pi_2;
  } else {
    const T d = (T(1) - ax) * (T(1) - ax) + ay * ay;
    // Near the singularity at 1 (4x / d > 1, so re > log(2) / 4): the difference of the logs,
    // through hypot, which neither underflows nor overflows where d does.
    re = d < T(4) * ax
             ? T(0.5) * (rm::log(rm::hypot(T(1) + ax, ay)) - rm::log(rm::hypot(T(1) - ax, ay)))
             : T(0.25) * rm::log1p(T(4) * ax / d);
    im = T(0.5) * rm::atan2(T(2) * ay, (T(1) - ax) * (T(1) + ax) - ay * ay);
  }
  return {rm::copysign(re, x), rm::copysign(im, y)};
}
// atan z = -i atanh(iz), with glibc's special values.
template <class T>
CULUA_HD inline complex<T> atan(complex<T> a) {
  const T x = a.re, y = a.im;
  const T pi_2 = T(1.57079632679489661923132169163975144);
  if (!isfinite_r(x) || !isfinite_r(y)) {
    if (isinf_r(x)) return {rm::copysign(pi_2, x), rm::copysign(T(0), y)};
    if (isinf_r(y)) return {isnan_r(x) ? nan<T>() : rm::copysign(pi_2, x), rm::copysign(T(0), y)};
    if (y == T(0)) return {nan<T>(), rm::copysign(T(0), y)};
    return {nan<T>(), nan<T>()};
  }
  const complex<T> w = atanh(complex<T>{-y, x});
  return {w.im, -w.re};
}

// The standard's sign: z / |z| (numpy 2; numpy 1.24 took the sign of the real part).
template <class T>
CULUA_HD inline complex<T> sign(complex<T> a) {
  const T x = a.re, y = a.im;
  if (isnan_r(x) || isnan_r(y)) return {nan<T>(), nan<T>()};
  if (x == T(0) && y == T(0)) return {T(0), T(0)};
  if (isinf_r(x) || isinf_r(y)) {
    if (isinf_r(x) && isinf_r(y)) {
      const T h = T(0.707106781186547524400844362104849039);
      return {rm::copysign(h, x), rm::copysign(h, y)};
    }
    return {isinf_r(x) ? rm::copysign(T(1), x) : rm::copysign(T(0), x),
            isinf_r(y) ? rm::copysign(T(1), y) : rm::copysign(T(0), y)};
  }
  const T h = rm::hypot(x, y);
  return {x / h, y / h};
}

}  // namespace culua::detail::kernels::cm
