// Accuracy of the complex functions on the host backend (the same element code runs on CUDA):
// random inputs through the kernels (unary/binary on arrays), against references computed in
// long double (x87, 64-bit significand: 11 bits beyond c128's parts) by glibc's complex
// functions.
//
// Metric: the error of each part in ulps of that part of the reference (an ulp of a value v is
// 2^(e - p + 1) with 2^e <= |v| < 2^(e+1), p = 24 or 53; values below the smallest normal number
// count as that number). Relative to the part, not to |z|: a small part must be as accurate as a
// large one, which is what goes wrong near tanh's poles and near |z| = 1 for log. Bounds (numpy on
// glibc: tanh within 6, log within 3 ulp): tanh 8, log 4, exp 3, sin/cos 4, sqrt 3 ulp.
#include "helpers.hpp"

#include <cmath>
#include <complex>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/ops/elementwise.hpp"

using namespace culua::detail;
using namespace culua::detail::test;

namespace {

using LD = long double;
constexpr LD kPi = 3.141592653589793238462643383279502884L;

template <class T>
double ulp_error(T got, LD ref) {
  if (std::isnan(ref)) return std::isnan(got) ? 0.0 : HUGE_VAL;
  if (std::isinf(ref)) return static_cast<LD>(got) == ref ? 0.0 : HUGE_VAL;
  if (!std::isfinite(got)) return HUGE_VAL;
  LD mag = std::fabs(ref);
  const LD smallest = std::numeric_limits<T>::min();
  if (mag < smallest) mag = smallest;
  int e = 0;
  std::frexp(mag, &e);
  const LD ulp = std::ldexp(1.0L, e - std::numeric_limits<T>::digits);
  return static_cast<double>(std::fabs(static_cast<LD>(got) - ref) / ulp);
}

template <class T>
DType complex_dtype() {
  return sizeof(T) == 4 ? DType::C64 : DType::C128;
}

template <class T>
Array complex_array(Runtime& rt, const std::vector<std::complex<T>>& v) {
  Array a = empty(rt, Shape{static_cast<int64_t>(v.size())}, complex_dtype<T>());
  write_raw(rt, a, v);
  return a;
}

struct Worst {
  double re = 0, im = 0;
  std::string where_re, where_im;
};

// Runs op on the inputs through the host kernels and measures the worst part errors against ref.
template <class T>
Worst measure(Runtime& rt, UnaryOp op, const std::vector<std::complex<T>>& in,
              const std::function<std::complex<LD>(std::complex<LD>)>& ref) {
  const auto out = raw_elements<std::complex<T>>(rt, unary(rt, op, complex_array(rt, in)));
  Worst w;
  for (size_t i = 0; i < in.size(); ++i) {
    const std::complex<LD> r = ref({static_cast<LD>(in[i].real()), static_cast<LD>(in[i].imag())});
    const double er = ulp_error(out[i].real(), r.real());
    const double ei = ulp_error(out[i].imag(), r.imag());
    auto describe = [&] {
      char buf[160];
      std::snprintf(buf, sizeof buf, "z = %.17g%+.17gi", static_cast<double>(in[i].real()),
                    static_cast<double>(in[i].imag()));
      return std::string(buf);
    };
    if (er > w.re) w.re = er, w.where_re = describe();
    if (ei > w.im) w.im = ei, w.where_im = describe();
  }
  return w;
}

double uniform(std::mt19937_64& g, double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(g);
}

// x small (down to 2^-60, either sign), y within a few ulps of pi/2 + k pi, |k| <= 20.
template <class T>
std::vector<std::complex<T>> near_tanh_poles(std::mt19937_64& g, int n) {
  std::vector<std::complex<T>> v;
  const int depth = std::numeric_limits<T>::digits + 6;
  for (int i = 0; i < n; ++i) {
    const int k = static_cast<int>(uniform(g, -20, 21));
    T y = static_cast<T>(kPi / 2 + k * kPi);
    const int steps = static_cast<int>(uniform(g, -4, 5));
    for (int s = 0; s < std::abs(steps); ++s) y = std::nextafter(y, steps > 0 ? T(1e30) : T(-1e30));
    const T x =
        static_cast<T>(std::ldexp(uniform(g, -1, 1), -static_cast<int>(uniform(g, 0, depth))));
    v.emplace_back(x, y);
  }
  return v;
}

// |z| = 1 + d, d = +-2^-k (k up to the precision), at a random angle.
template <class T>
std::vector<std::complex<T>> near_unit_circle(std::mt19937_64& g, int n) {
  std::vector<std::complex<T>> v;
  const int depth = std::numeric_limits<T>::digits + 2;
  for (int i = 0; i < n; ++i) {
    const LD th = uniform(g, -kPi, kPi);
    const LD r =
        1 + std::ldexp(static_cast<LD>(uniform(g, -1, 1)), -static_cast<int>(uniform(g, 1, depth)));
    v.emplace_back(static_cast<T>(r * std::cos(th)), static_cast<T>(r * std::sin(th)));
  }
  return v;
}

template <class T>
std::vector<std::complex<T>> box(std::mt19937_64& g, int n, double re, double im) {
  std::vector<std::complex<T>> v;
  for (int i = 0; i < n; ++i) {
    v.emplace_back(static_cast<T>(uniform(g, -re, re)), static_cast<T>(uniform(g, -im, im)));
  }
  return v;
}

// Parts of magnitude 2^-60 .. 2^60, either sign.
template <class T>
std::vector<std::complex<T>> wide(std::mt19937_64& g, int n) {
  std::vector<std::complex<T>> v;
  auto part = [&] {
    return static_cast<T>(std::ldexp(uniform(g, -1, 1), static_cast<int>(uniform(g, -60, 61))));
  };
  for (int i = 0; i < n; ++i) v.emplace_back(part(), part());
  return v;
}

template <class T>
void check_bound(Runtime& rt, const char* what, UnaryOp op, const std::vector<std::complex<T>>& in,
                 const std::function<std::complex<LD>(std::complex<LD>)>& ref, double bound) {
  const Worst w = measure<T>(rt, op, in, ref);
  INFO((sizeof(T) == 4 ? "c64 " : "c128 ")
       << what << ": worst real part " << w.re << " ulp at " << w.where_re
       << ", worst imaginary part " << w.im << " ulp at " << w.where_im);
  CHECK(w.re <= bound);
  CHECK(w.im <= bound);
}

template <class T>
void accuracy_suite(uint64_t seed) {
  Runtime rt(host_options());
  std::mt19937_64 g(seed);
  INFO("seed " << seed);
  const int n = 20000;
  auto tanh_ref = [](std::complex<LD> z) { return std::tanh(z); };
  auto log_ref = [](std::complex<LD> z) { return std::log(z); };
  check_bound<T>(rt, "tanh near its poles", UnaryOp::Tanh, near_tanh_poles<T>(g, n), tanh_ref, 8);
  check_bound<T>(rt, "tanh, |re| < 5, |im| < 10", UnaryOp::Tanh, box<T>(g, n, 5, 10), tanh_ref, 8);
  check_bound<T>(rt, "tanh, |re| < 30", UnaryOp::Tanh, box<T>(g, n, 30, 3), tanh_ref, 8);
  check_bound<T>(rt, "log near |z| = 1", UnaryOp::Log, near_unit_circle<T>(g, n), log_ref, 4);
  check_bound<T>(rt, "log, wide range", UnaryOp::Log, wide<T>(g, n), log_ref, 4);
  check_bound<T>(
      rt, "exp", UnaryOp::Exp, box<T>(g, n, 20, 10), [](auto z) { return std::exp(z); }, 3);
  check_bound<T>(
      rt, "sin", UnaryOp::Sin, box<T>(g, n, 10, 20), [](auto z) { return std::sin(z); }, 4);
  check_bound<T>(
      rt, "cos", UnaryOp::Cos, box<T>(g, n, 10, 20), [](auto z) { return std::cos(z); }, 4);
  check_bound<T>(
      rt, "sqrt, wide range", UnaryOp::Sqrt, wide<T>(g, n), [](auto z) { return std::sqrt(z); }, 3);
}

uint64_t test_seed() {
  return std::random_device{}();
}

}  // namespace

TEST_CASE("complex tanh, log, exp, sin, cos, sqrt within their ulp bounds (c128)", "[complex]") {
  accuracy_suite<double>(test_seed());
}

TEST_CASE("complex tanh, log, exp, sin, cos, sqrt within their ulp bounds (c64)", "[complex]") {
  accuracy_suite<float>(test_seed());
}

TEST_CASE("complex pow: whole exponents by multiplication, others exp(b log a)", "[complex]") {
  Runtime rt(host_options());
  const uint64_t seed = test_seed();
  INFO("seed " << seed);
  std::mt19937_64 g(seed);
  const int n = 4000;
  std::vector<std::complex<double>> a, b;
  for (int i = 0; i < n; ++i) {
    a.emplace_back(uniform(g, -3, 3), uniform(g, -3, 3));
    if (i % 2 == 0) {
      b.emplace_back(std::round(uniform(g, -99.5, 99.5)) / (i % 4 == 0 ? 1 : 10), 0.0);
    } else {
      b.emplace_back(uniform(g, -4, 4), uniform(g, -4, 4));
    }
  }
  const auto out = raw_elements<std::complex<double>>(
      rt, binary(rt, BinaryOp::Pow, complex_array(rt, a), complex_array(rt, b)));
  for (int i = 0; i < n; ++i) {
    const std::complex<LD> za(a[i].real(), a[i].imag()), zb(b[i].real(), b[i].imag());
    const std::complex<LD> ref = std::exp(zb * std::log(za));
    if (!std::isfinite(std::abs(ref)) || std::abs(ref) < 1e-290L) continue;
    // A rounding error of e in b log a is a relative error e in the result: e is a few ulps of
    // |b log a|; the repeated products of whole exponents stay within |n| roundings.
    const LD amplification = 2 + std::abs(zb * std::log(za)) + std::abs(zb);
    const LD err = std::abs(std::complex<LD>(out[i].real(), out[i].imag()) - ref) / std::abs(ref);
    INFO("(" << a[i] << ")^(" << b[i] << ") = " << out[i]);
    CHECK(static_cast<double>(err / (amplification * std::numeric_limits<double>::epsilon())) <=
          4.0);
  }
  // exactness of small Gaussian integers with whole exponents, as numpy
  const auto exact = raw_elements<std::complex<double>>(
      rt, binary(rt, BinaryOp::Pow, complex_array<double>(rt, {{1, 1}, {2, -1}, {1, 1}, {-3, 2}}),
                 complex_array<double>(rt, {{2, 0}, {3, 0}, {8, 0}, {-1, 0}})));
  CHECK(exact[0] == std::complex<double>(0, 2));
  CHECK(exact[1] == std::complex<double>(2, -11));
  CHECK(exact[2] == std::complex<double>(16, 0));
  CHECK(std::abs(exact[3] - std::complex<double>(-3.0 / 13, -2.0 / 13)) < 1e-16);
}
