// Random numbers on the host backend: the Philox4x32-10 known answers, the mapping from elements to
// bits, bounds, moments, reproducibility and offsets, the rounding of small floats, strided
// outputs, and the accuracy of the generator's own log and sincos.
#include "helpers.hpp"

#include <algorithm>
#include <cmath>
#include <random>

#include "core/ops/random.hpp"

using namespace culua::detail;
using namespace culua::detail::test;

namespace {

constexpr auto kUniform = RandomDistribution::Uniform;
constexpr auto kNormal = RandomDistribution::Normal;

template <class T>
std::vector<double> values(Runtime& rt, const Array& a) {
  std::vector<double> out;
  for (const T& v : raw_elements<T>(rt, a)) {
    if constexpr (is_complex_element<T>::value) {
      out.push_back(static_cast<double>(v.re));
      out.push_back(static_cast<double>(v.im));
    } else {
      out.push_back(static_cast<double>(real_value(v)));
    }
  }
  return out;
}

std::vector<double> values_of(Runtime& rt, const Array& a) {
  return dispatch(a.dtype(), [&](auto tag) -> std::vector<double> {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T> || is_small_float<T>::value ||
                  is_complex_element<T>::value) {
      return values<T>(rt, a);
    } else {
      FAIL("not a random dtype");
      return {};
    }
  });
}

struct Moments {
  double mean = 0, var = 0, min = 0, max = 0;
};

Moments moments(const std::vector<double>& v, size_t start = 0, size_t step = 1) {
  Moments m;
  double sum = 0, sum2 = 0;
  size_t n = 0;
  m.min = v[start];
  m.max = v[start];
  for (size_t i = start; i < v.size(); i += step, ++n) {
    sum += v[i];
    m.min = std::min(m.min, v[i]);
    m.max = std::max(m.max, v[i]);
  }
  m.mean = sum / static_cast<double>(n);
  for (size_t i = start; i < v.size(); i += step) sum2 += (v[i] - m.mean) * (v[i] - m.mean);
  m.var = sum2 / static_cast<double>(n - 1);
  return m;
}

constexpr DType kRandomDTypes[] = {DType::F32,  DType::F64, DType::F16,
                                   DType::BF16, DType::C64, DType::C128};

}  // namespace

TEST_CASE("philox4x32-10 matches the Random123 known-answer vectors", "[random]") {
  using random_detail::philox4x32_10;
  using W4 = std::array<uint32_t, 4>;
  CHECK(philox4x32_10({0, 0, 0, 0}, {0, 0}) == W4{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8});
  CHECK(philox4x32_10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}) ==
        W4{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd});
  CHECK(philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}) ==
        W4{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1});
}

TEST_CASE("rand: element i takes the documented Philox bits", "[random]") {
  Runtime rt(host_options());
  const uint64_t seed = 0x0123456789ABCDEFull;
  const auto key = std::array<uint32_t, 2>{static_cast<uint32_t>(seed), uint32_t{0x01234567}};
  auto block = [&](uint64_t ctr) {
    return random_detail::philox4x32_10(
        {static_cast<uint32_t>(ctr), static_cast<uint32_t>(ctr >> 32), 0, 0}, key);
  };
  const int64_t n = 37;
  SECTION("f32: 24 bits of word i%4 of block i/4") {
    const auto v = raw_elements<float>(
        rt, random(rt, kUniform, Shape{n}, DType::F32, Location::Device, nullptr, seed));
    for (int64_t i = 0; i < n; ++i) {
      const uint32_t w = block(static_cast<uint64_t>(i / 4))[static_cast<size_t>(i % 4)];
      CHECK(v[static_cast<size_t>(i)] == std::ldexp(static_cast<float>(w >> 8), -24));
    }
  }
  SECTION("f64: 53 bits of the words 2(i%2), 2(i%2)+1 of block i/2") {
    const auto v = raw_elements<double>(
        rt, random(rt, kUniform, Shape{n}, DType::F64, Location::Device, nullptr, seed));
    for (int64_t i = 0; i < n; ++i) {
      const auto b = block(static_cast<uint64_t>(i / 2));
      const size_t j = static_cast<size_t>(i % 2) * 2;
      const uint64_t x = (static_cast<uint64_t>(b[j]) << 32) | b[j + 1];
      CHECK(v[static_cast<size_t>(i)] == std::ldexp(static_cast<double>(x >> 11), -53));
    }
  }
  SECTION("the global state: offset counts blocks") {
    culua::detail::seed(rt, seed);
    random(rt, kUniform, Shape{5}, DType::F32);  // 2 blocks
    CHECK(rt.random_state().offset == 2);
    const auto v = raw_elements<float>(rt, random(rt, kUniform, Shape{4}, DType::F32));
    CHECK(rt.random_state().offset == 3);
    CHECK(v[1] == std::ldexp(static_cast<float>(block(2)[1] >> 8), -24));
  }
}

TEST_CASE("rand and randn: bounds and moments of 1e6 samples", "[random]") {
  Runtime rt(host_options());
  const int64_t n = 1000000;
  for (DType t : kRandomDTypes) {
    INFO("dtype " << name(t));
    const bool cplx = is_complex(t);
    const auto u = values_of(rt, random(rt, kUniform, Shape{n}, t));
    const Moments mu = moments(u);
    CHECK(mu.min >= 0.0);
    CHECK(mu.max < 1.0);
    // Standard error of the mean: sqrt(1/12 / n) = 2.9e-4 (halved for complex: 2n values).
    // The values are k 2^-bits for k in [0, 2^bits): mean 1/2 - 2^-(bits+1) (0.498 for bf16).
    const int bits = t == DType::BF16 ? 8 : t == DType::F16 ? 11 : 24;
    const double mean = 0.5 - std::ldexp(1.0, -bits - 1);
    CHECK(std::abs(mu.mean - mean) < 1.5e-3);
    CHECK(std::abs(mu.var - 1.0 / 12) < 1e-3);
    for (size_t part = 0; cplx && part < 2; ++part) {
      const Moments mp = moments(u, part, 2);
      CHECK(std::abs(mp.mean - mean) < 2e-3);
      CHECK(std::abs(mp.var - 1.0 / 12) < 1.5e-3);
    }
    const auto z = values_of(rt, random(rt, kNormal, Shape{n}, t));
    for (double x : z) REQUIRE(std::isfinite(x));
    if (!cplx) {
      const Moments mz = moments(z);
      // Standard errors: mean 1e-3, variance sqrt(2/n) = 1.4e-3 (plus the rounding of bf16).
      CHECK(std::abs(mz.mean) < 5e-3);
      CHECK(std::abs(mz.var - 1.0) < (t == DType::BF16 ? 1.5e-2 : 8e-3));
      CHECK(mz.max < 8.6);
      CHECK(mz.min > -8.6);
    } else {
      for (size_t part = 0; part < 2; ++part) {
        const Moments mp = moments(z, part, 2);
        CHECK(std::abs(mp.mean) < 5e-3);
        CHECK(std::abs(mp.var - 0.5) < 5e-3);
      }
      double abs2 = 0;
      for (double x : z) abs2 += x * x;
      CHECK(std::abs(abs2 / static_cast<double>(n) - 1.0) < 8e-3);
    }
  }
}

TEST_CASE("rand: a histogram of 16 bins passes a chi-square test", "[random]") {
  Runtime rt(host_options());
  const int64_t n = 1 << 20;
  const auto u = values_of(rt, random(rt, kUniform, Shape{n}, DType::F32));
  std::array<double, 16> bins{};
  for (double x : u) bins[static_cast<size_t>(x * 16)] += 1;
  double chi2 = 0;
  const double expected = static_cast<double>(n) / 16;
  for (double b : bins) chi2 += (b - expected) * (b - expected) / expected;
  CHECK(chi2 < 45.0);  // 15 degrees of freedom: P(chi2 > 45) < 1e-4
}

TEST_CASE("randn: normal quantiles", "[random]") {
  Runtime rt(host_options());
  const int64_t n = 1 << 20;
  auto z = values_of(rt, random(rt, kNormal, Shape{n}, DType::F64, Location::Device, nullptr, 99));
  std::sort(z.begin(), z.end());
  const auto q = [&](double p) { return z[static_cast<size_t>(p * static_cast<double>(n))]; };
  CHECK(std::abs(q(0.5)) < 5e-3);
  CHECK(std::abs(q(0.8413447) - 1.0) < 1e-2);
  CHECK(std::abs(q(0.1586553) + 1.0) < 1e-2);
  CHECK(std::abs(q(0.9772499) - 2.0) < 2e-2);
  CHECK(std::abs(q(0.0227501) + 2.0) < 2e-2);
}

TEST_CASE("small floats are formed from their own bits: never rounded up to 1", "[random]") {
  Runtime rt(host_options());
  const int64_t n = 1 << 20;
  for (DType t : {DType::F16, DType::BF16}) {
    INFO("dtype " << name(t));
    const int bits = t == DType::F16 ? 11 : 8;
    const auto u = values_of(rt, random(rt, kUniform, Shape{n}, t));
    const double top = 1.0 - std::ldexp(1.0, -bits);
    double max = 0;
    for (double x : u) {
      REQUIRE(x < 1.0);
      REQUIRE(std::ldexp(x, bits) == std::floor(std::ldexp(x, bits)));  // a multiple of 2^-bits
      max = std::max(max, x);
    }
    CHECK(max == top);  // the largest value is reached (1 in 2^bits samples)
  }
  // f32 from 24 bits: the values are multiples of 2^-24.
  const auto f = values_of(rt, random(rt, kUniform, Shape{1 << 16}, DType::F32));
  for (double x : f) REQUIRE(std::ldexp(x, 24) == std::floor(std::ldexp(x, 24)));
}

TEST_CASE("seeds: reproducible, independent of the global state, offsets advance", "[random]") {
  Runtime rt(host_options());
  CHECK(rt.random_state().seed == kDefaultSeed);
  CHECK(rt.random_state().offset == 0);
  auto f32 = [&](const Array& a) { return raw_elements<float>(rt, a); };
  culua::detail::seed(rt, 42);
  const auto a1 = f32(random(rt, kUniform, Shape{100}, DType::F32));
  const auto a2 = f32(random(rt, kUniform, Shape{100}, DType::F32));
  CHECK(a1 != a2);
  CHECK(rt.random_state().offset == 50);
  culua::detail::seed(rt, 42);
  CHECK(rt.random_state().offset == 0);
  CHECK(f32(random(rt, kUniform, Shape{100}, DType::F32)) == a1);
  CHECK(f32(random(rt, kUniform, Shape{100}, DType::F32)) == a2);

  // Whole blocks: two calls of 4 values equal one call of 8.
  culua::detail::seed(rt, 7);
  auto b1 = f32(random(rt, kUniform, Shape{4}, DType::F32));
  const auto b2 = f32(random(rt, kUniform, Shape{4}, DType::F32));
  culua::detail::seed(rt, 7);
  b1.insert(b1.end(), b2.begin(), b2.end());
  CHECK(f32(random(rt, kUniform, Shape{2, 4}, DType::F32)) == b1);

  // seed= uses offset 0 of that seed and leaves the global state alone.
  culua::detail::seed(rt, 1234);
  random(rt, kUniform, Shape{10}, DType::F32);
  const auto state = rt.random_state();
  const auto s1 = f32(random(rt, kUniform, Shape{64}, DType::F32, Location::Device, nullptr, 1234));
  CHECK(rt.random_state().offset == state.offset);
  CHECK(rt.random_state().seed == state.seed);
  culua::detail::seed(rt, 1234);
  CHECK(f32(random(rt, kUniform, Shape{64}, DType::F32)) == s1);
  CHECK(f32(random(rt, kUniform, Shape{64}, DType::F32, Location::Device, nullptr, 1235)) != s1);

  // Offsets per dtype: f64 and complex consume more counters.
  culua::detail::seed(rt, 1);
  random(rt, kUniform, Shape{3}, DType::F64);
  CHECK(rt.random_state().offset == 2);
  random(rt, kNormal, Shape{3}, DType::C64);
  CHECK(rt.random_state().offset == 4);
  random(rt, kNormal, Shape{3}, DType::C128);
  CHECK(rt.random_state().offset == 7);
  random(rt, kUniform, Shape{0}, DType::F32);
  CHECK(rt.random_state().offset == 7);
  // A failing call consumes nothing.
  CHECK(error_kind_of([&] { random(rt, kUniform, Shape{3}, DType::I32); }) == ErrorKind::Value);
  CHECK(rt.random_state().offset == 7);
}

TEST_CASE("strided outputs and host arrays get the row-major element's value", "[random]") {
  Runtime rt(host_options());
  for (DType t : kRandomDTypes) {
    for (auto dist : {kUniform, kNormal}) {
      INFO("dtype " << name(t) << (dist == kNormal ? " randn" : " rand"));
      const auto ref =
          values_of(rt, random(rt, dist, Shape{5, 3}, t, Location::Device, nullptr, 9));
      // A transposed view of a {3, 5} array has shape {5, 3}.
      Array base = empty(rt, Shape{3, 5}, t);
      random_fill(rt, dist, base.with_layout(base.layout().transpose(0, 1)), nullptr, 9);
      const auto got = values_of(rt, base);
      const size_t parts = is_complex(t) ? 2 : 1;
      for (size_t i = 0; i < 5; ++i) {
        for (size_t j = 0; j < 3; ++j) {
          for (size_t p = 0; p < parts; ++p) {
            REQUIRE(got[(j * 5 + i) * parts + p] == ref[(i * 3 + j) * parts + p]);
          }
        }
      }
      Array host = random(rt, dist, Shape{5, 3}, t, Location::Pageable, nullptr, 9);
      CHECK(values_of(rt, host) == ref);
    }
  }
}

TEST_CASE("randn: f16 and bf16 are the f64 normals of 32-bit uniforms rounded once", "[random]") {
  Runtime rt(host_options());
  // The real dtypes other than f64 share their uniforms: rounding the f32 values' double source to
  // f16 must give the f16 values. Compare f16 against f32 within half an f16 ulp.
  const auto z32 =
      values_of(rt, random(rt, kNormal, Shape{4096}, DType::F32, Location::Device, nullptr, 5));
  const auto z16 =
      values_of(rt, random(rt, kNormal, Shape{4096}, DType::F16, Location::Device, nullptr, 5));
  for (size_t i = 0; i < z32.size(); ++i) {
    const double ulp = std::ldexp(1.0, std::max(std::ilogb(z32[i]), -14) - 10);
    REQUIRE(std::abs(z16[i] - z32[i]) <= 0.5 * ulp + std::abs(z32[i]) * 1e-7);
  }
}

TEST_CASE("the generator's log and sincos are accurate to about 1e-16", "[random]") {
  std::mt19937_64 rng(77);
  double worst_log = 0, worst_sin = 0, worst_cos = 0;
  for (int i = 0; i < 200000; ++i) {
    // log: uniforms as the generator makes them, and values across the exponent range.
    double x;
    if (i % 2) {
      x = std::ldexp(static_cast<double>((rng() >> 11) + 1), -53);
    } else {
      x = std::ldexp(1.0 + std::ldexp(static_cast<double>(rng() >> 12), -52),
                     static_cast<int>(rng() % 2000) - 1000);
    }
    const long double ref = std::log(static_cast<long double>(x));
    const double err = static_cast<double>(std::abs(random_detail::log(x) - ref));
    worst_log = std::max(worst_log, err / std::max(1.0, static_cast<double>(std::abs(ref))));

    const double u = std::ldexp(static_cast<double>(rng() >> 11), -53);
    const long double turn = 2.0L * 3.141592653589793238462643383279502884L * u;
    double s, c;
    random_detail::sincos_turns(u, &s, &c);
    worst_sin = std::max(worst_sin, static_cast<double>(std::abs(s - std::sin(turn))));
    worst_cos = std::max(worst_cos, static_cast<double>(std::abs(c - std::cos(turn))));
  }
  CHECK(worst_log < 4e-16);
  CHECK(worst_sin < 4e-16);
  CHECK(worst_cos < 4e-16);
  CHECK(random_detail::log(1.0) == 0.0);
  CHECK(std::abs(random_detail::log(std::ldexp(1.0, -53)) - std::log(std::ldexp(1.0, -53))) <
        1e-14);
  for (double u : {0.0, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875, 1.0}) {
    double s, c;
    random_detail::sincos_turns(u, &s, &c);
    CHECK(std::abs(s - std::sin(2 * M_PI * u)) < 1e-15);
    CHECK(std::abs(c - std::cos(2 * M_PI * u)) < 1e-15);
  }
  // Also against the C library in double (differences are the library's last bits).
  for (int i = 0; i < 1000; ++i) {
    const double x = std::ldexp(static_cast<double>((rng() >> 11) + 1), -53);
    CHECK(std::abs(random_detail::log(x) - std::log(x)) <= 1e-15 * std::max(1.0, -std::log(x)));
  }
}

TEST_CASE("random dtypes: integers and bool are refused", "[random]") {
  Runtime rt(host_options());
  for (DType t :
       {DType::I8, DType::I16, DType::I32, DType::I64, DType::U8, DType::U32, DType::Bool}) {
    const std::string msg = error_message_of([&] { random(rt, kNormal, Shape{3}, t); });
    CHECK(msg.find(
              "normal numbers need a float or complex dtype (f32, f64, f16, bf16, c64 or c128)") !=
          std::string::npos);
    CHECK(msg.find(std::string(name(t))) != std::string::npos);
  }
}
