// cuda::std::complex of the kernel templates' complex prelude (rtc/nvrtc/complex.cuh), compiled
// here by the host compiler: the same text NVRTC compiles in a cu.elementwise or cu.reduction
// source with complex operands, after the same headers. Its arithmetic and functions against
// std::complex, on random values of moderate size and on special values.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <random>
#include <type_traits>

#include "core/model/numeric.hpp"
#include "kernels/real_math.cuh"
// The prelude's order (cmake/EmbedPrelude.cmake): numeric, real math, complex math, then the type.
#include "kernels/complex_math.cuh"
#include "rtc/nvrtc/complex.cuh"

namespace {

template <class T>
using Cx = cuda::std::complex<T>;

// Within `ulps` units of the larger part's magnitude (the functions' errors are relative to |z|
// at worst).
template <class T>
bool near(const Cx<T>& got, const std::complex<T>& want, double ulps) {
  const double scale = std::max({std::fabs(double(want.real())), std::fabs(double(want.imag())),
                                 double(std::numeric_limits<T>::min())});
  const double tol = ulps * std::numeric_limits<T>::epsilon() * scale;
  return std::fabs(double(got.real()) - double(want.real())) <= tol &&
         std::fabs(double(got.imag()) - double(want.imag())) <= tol;
}

template <class T>
std::complex<T> std_of(const Cx<T>& z) {
  return {z.real(), z.imag()};
}

template <class T>
void check_arithmetic() {
  std::mt19937 rng(7);
  std::uniform_real_distribution<T> u(T(-3), T(3));
  for (int k = 0; k < 500; ++k) {
    const Cx<T> a(u(rng), u(rng)), b(u(rng), u(rng));
    const T s = u(rng);
    const std::complex<T> sa = std_of(a), sb = std_of(b);
    INFO("a = " << a.real() << " + " << a.imag() << "i, b = " << b.real() << " + " << b.imag()
                << "i, s = " << s);
    CHECK(near(a + b, sa + sb, 1));
    CHECK(near(a - b, sa - sb, 1));
    CHECK(near(a * b, sa * sb, 4));
    CHECK(near(a / b, sa / sb, 8));
    CHECK(near(-a, -sa, 0));
    CHECK(near(+a, sa, 0));
    CHECK(near(a + s, sa + s, 1));
    CHECK(near(s + a, s + sa, 1));
    CHECK(near(a - s, sa - s, 1));
    CHECK(near(s - a, s - sa, 1));
    CHECK(near(a * s, sa * s, 1));
    CHECK(near(s * a, s * sa, 1));
    CHECK(near(a / s, sa / s, 1));
    CHECK(near(s / a, s / sa, 8));
    Cx<T> c = a;
    c += b;
    c *= a;
    c -= s;
    c /= b;
    std::complex<T> sc = sa;
    sc += sb;
    sc *= sa;
    sc -= s;
    sc /= sb;
    CHECK(near(c, sc, 32));
    // The RK4 derivatives of scripts/device_resident_loop.lua (version C), as written there.
    const Cx<T> I(T(0), T(1));
    const std::complex<T> sI(T(0), T(1));
    CHECK(near(T(-2) * I * a - I * b * (T(2) * a - T(1)),
               T(-2) * sI * sa - sI * sb * (T(2) * sa - T(1)), 8));
    CHECK(near(-I * (cuda::std::conj(b) * a - b * cuda::std::conj(a)),
               -sI * (std::conj(sb) * sa - sb * std::conj(sa)), 8));
  }
}

template <class T>
void check_functions() {
  std::mt19937 rng(11);
  std::uniform_real_distribution<T> u(T(-2), T(2));
  const double tol = sizeof(T) == 4 ? 16 : 64;  // ulps of |result|: CUDA's and glibc's differ
  for (int k = 0; k < 300; ++k) {
    const Cx<T> z(u(rng), u(rng)), w(u(rng), u(rng));
    const std::complex<T> sz = std_of(z), sw = std_of(w);
    INFO("z = " << z.real() << " + " << z.imag() << "i");
    CHECK(std::fabs(abs(z) - std::abs(sz)) <= 2 * std::numeric_limits<T>::epsilon() * std::abs(sz));
    CHECK(std::fabs(cuda::std::arg(z) - std::arg(sz)) <= 4 * std::numeric_limits<T>::epsilon());
    CHECK(std::fabs(norm(z) - std::norm(sz)) <=
          4 * std::numeric_limits<T>::epsilon() * std::norm(sz));
    CHECK(real(z) == z.real());
    CHECK(imag(z) == z.imag());
    CHECK(near(conj(z), std::conj(sz), 0));
    CHECK(near(proj(z), std::proj(sz), 0));
    CHECK(near(cuda::std::polar(std::fabs(z.real()), z.imag()),
               std::polar(std::fabs(z.real()), z.imag()), tol));
    CHECK(near(exp(z), std::exp(sz), tol));
    CHECK(near(log(z), std::log(sz), tol));
    CHECK(near(log10(z), std::log10(sz), tol));
    CHECK(near(sqrt(z), std::sqrt(sz), tol));
    CHECK(near(sin(z), std::sin(sz), tol));
    CHECK(near(cos(z), std::cos(sz), tol));
    CHECK(near(tan(z), std::tan(sz), tol));
    CHECK(near(asin(z), std::asin(sz), tol));
    CHECK(near(acos(z), std::acos(sz), tol));
    CHECK(near(atan(z), std::atan(sz), tol));
    CHECK(near(sinh(z), std::sinh(sz), tol));
    CHECK(near(cosh(z), std::cosh(sz), tol));
    CHECK(near(tanh(z), std::tanh(sz), tol));
    CHECK(near(asinh(z), std::asinh(sz), tol));
    CHECK(near(acosh(z), std::acosh(sz), tol));
    CHECK(near(atanh(z), std::atanh(sz), tol));
    CHECK(near(pow(z, w), std::pow(sz, sw), 4 * tol));
    CHECK(near(pow(z, T(2.5)), std::pow(sz, T(2.5)), 4 * tol));
    CHECK(near(pow(T(1.5), z), std::pow(T(1.5), sz), 4 * tol));
    CHECK(near(pow(z, T(3)), sz * sz * sz, 8));
  }
}

}  // namespace

TEST_CASE("template complex: arithmetic as std::complex", "[rtc][template]") {
  check_arithmetic<float>();
  check_arithmetic<double>();
}

TEST_CASE("template complex: functions as std::complex", "[rtc][template]") {
  check_functions<float>();
  check_functions<double>();
}

TEST_CASE("template complex: construction, conversions and mixed operands", "[rtc][template]") {
  const Cx<float> zero;
  CHECK((zero.real() == 0 && zero.imag() == 0));
  const Cx<float> r = 2.5f;  // a real value: imaginary part 0
  CHECK((r.real() == 2.5f && r.imag() == 0));
  Cx<float> z(1, -2);
  z.real(3);
  z.imag(4);
  CHECK((z.real() == 3 && z.imag() == 4));
  z = 5.0f;
  CHECK(z == Cx<float>(5, 0));
  CHECK(z == 5.0f);
  CHECK(5.0f == z);
  CHECK(z != Cx<float>(5, 1));
  // Whole numbers and doubles mix with complex<float> as they convert to float.
  const Cx<float> a(1.5f, -0.5f);
  CHECK(2 * a == Cx<float>(3, -1));
  CHECK(a * 2.0 == Cx<float>(3, -1));
  CHECK(a + 1 == Cx<float>(2.5f, -0.5f));
  // complex<float> widens to complex<double> implicitly; the reverse is explicit.
  const Cx<double> wide = a;
  CHECK((wide.real() == 1.5 && wide.imag() == -0.5));
  const Cx<double> mixed = wide * a;  // the product of complex<double>
  CHECK(mixed == Cx<double>(1.5 * 1.5 - 0.25, -1.5));
  const Cx<float> narrow = static_cast<Cx<float>>(Cx<double>(0.1, 0.2));
  CHECK((narrow.real() == 0.1f && narrow.imag() == 0.2f));
  // Assignment takes either width (narrowing included), as std::complex's.
  Cx<float> assigned;
  assigned = Cx<double>(0.1, 0.2);
  CHECK((assigned.real() == 0.1f && assigned.imag() == 0.2f));
  assigned += Cx<double>(1, 1);
  CHECK((assigned.real() == 0.1f + 1 && assigned.imag() == 0.2f + 1));
  // std::complex's rules for real and mixed arguments: an integer counts as double.
  static_assert(std::is_same_v<decltype(pow(a, 3)), Cx<double>>);
  static_assert(std::is_same_v<decltype(pow(a, 2.0f)), Cx<float>>);
  static_assert(std::is_same_v<decltype(pow(2, a)), Cx<double>>);
  static_assert(std::is_same_v<decltype(pow(a, wide)), Cx<double>>);
  static_assert(std::is_same_v<decltype(cuda::std::real(1)), double>);
  static_assert(std::is_same_v<decltype(cuda::std::conj(1.5f)), Cx<float>>);
  CHECK(pow(a, 3) == Cx<double>(wide * wide * wide));
  CHECK(cuda::std::real(2.5f) == 2.5f);
  CHECK(cuda::std::imag(2.5) == 0);
  CHECK(cuda::std::arg(-1.0) == std::arg(-1.0));
  CHECK(cuda::std::norm(3) == 9.0);
  CHECK(cuda::std::conj(2.0) == Cx<double>(2, 0));
  static_assert(sizeof(Cx<float>) == 8 && alignof(Cx<float>) == 8);
  static_assert(sizeof(Cx<double>) == 16 && alignof(Cx<double>) == 16);
  static_assert(std::is_same_v<Cx<float>::value_type, float>);
}

TEST_CASE("template complex: special values", "[rtc][template]") {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(norm(Cx<float>(inf, nan)) == inf);
  CHECK(abs(Cx<float>(nan, -inf)) == inf);
  const Cx<float> p = proj(Cx<float>(2, -inf));
  CHECK((p.real() == inf && p.imag() == 0 && std::signbit(p.imag())));
  const Cx<double> pl = cuda::std::polar(-1.0, 0.5);  // a negative magnitude: NaN
  CHECK((std::isnan(pl.real()) && std::isnan(pl.imag())));
  const Cx<double> pz = cuda::std::polar(2.0);
  CHECK(pz == Cx<double>(2, 0));
  // Division by zero as the built-in operations divide (kernels/complex_math.cuh).
  const Cx<float> q = Cx<float>(1, 1) / Cx<float>(0, 0);
  CHECK((std::isinf(q.real()) && std::isinf(q.imag())));
  // The real functions libcu++'s cmath offered beside its complex.
  CHECK(cuda::std::sqrt(2.0f) == std::sqrt(2.0f));
  CHECK(cuda::std::abs(-3.0) == 3.0);
  CHECK(cuda::std::exp(1.0) == std::exp(1.0));
  CHECK(cuda::std::isnan(nan));
  CHECK(cuda::std::isinf(-inf));
  CHECK_FALSE(cuda::std::isfinite(inf));
  CHECK(cuda::std::numeric_limits<double>::max() == std::numeric_limits<double>::max());
}
