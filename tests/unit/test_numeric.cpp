// half / bfloat16 encoding and decoding, and the convert<To>(From) rules, against independent
// references: the compiler's _Float16 and a midpoint search over the sorted bit patterns.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "core/model/numeric.hpp"

using namespace culua::detail;

namespace {

__extension__ typedef _Float16 ref_f16;

uint16_t f16_bits(ref_f16 h) {
  uint16_t b;
  std::memcpy(&b, &h, sizeof b);
  return b;
}
ref_f16 f16_from_bits(uint16_t b) {
  ref_f16 h;
  std::memcpy(&h, &b, sizeof h);
  return h;
}
uint32_t fbits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}
float ffrom(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}
double dfrom(uint64_t b) {
  double d;
  std::memcpy(&d, &b, sizeof d);
  return d;
}

// Value of a small-float bit pattern computed from its fields (E exponent, M mantissa bits).
// The all-ones exponent with zero mantissa (infinity) is given the value 2^(bias+1) so that a
// midpoint search treats overflow like the next binade, as IEEE rounding does.
template <int E, int M>
double small_float_value(uint16_t bits) {
  const int bias = (1 << (E - 1)) - 1;
  const int sign = (bits >> (E + M)) & 1;
  const int exp = (bits >> M) & ((1 << E) - 1);
  const int man = bits & ((1 << M) - 1);
  double v;
  if (exp == 0) {
    v = std::ldexp(static_cast<double>(man), 1 - bias - M);
  } else if (exp == (1 << E) - 1) {
    v = man ? std::numeric_limits<double>::quiet_NaN() : std::ldexp(1.0, bias + 1);
  } else {
    v = std::ldexp(static_cast<double>((1 << M) | man), exp - bias - M);
  }
  return sign ? -v : v;
}

// Round-to-nearest-even of x to the (E, M) format by a binary search over the positive bit
// patterns (monotonic in value) and an exact comparison with the midpoint of the two neighbours.
template <int E, int M>
uint16_t reference_round(double x) {
  const uint16_t sign = std::signbit(x) ? static_cast<uint16_t>(1u << (E + M)) : 0;
  const uint16_t inf = static_cast<uint16_t>(((1u << E) - 1) << M);
  if (std::isnan(x)) return static_cast<uint16_t>(sign | inf | (1u << (M - 1)));
  const double a = std::fabs(x);
  if (std::isinf(a)) return static_cast<uint16_t>(sign | inf);
  if (a >= small_float_value<E, M>(inf)) return static_cast<uint16_t>(sign | inf);
  // Largest pattern lo with value(lo) <= a.
  uint32_t lo = 0, hi = inf;  // value(lo) <= a < value(hi)
  while (hi - lo > 1) {
    const uint32_t mid = (lo + hi) / 2;
    if (small_float_value<E, M>(static_cast<uint16_t>(mid)) <= a) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  const double vlo = small_float_value<E, M>(static_cast<uint16_t>(lo));
  const double vhi = small_float_value<E, M>(static_cast<uint16_t>(hi));
  const double midpoint = (vlo + vhi) / 2;  // exact: both have few significant bits
  uint32_t r;
  if (a < midpoint) {
    r = lo;
  } else if (a > midpoint) {
    r = hi;
  } else {
    r = (lo & 1) ? hi : lo;
  }
  return static_cast<uint16_t>(sign | r);
}

// Interesting doubles for 16-bit formats: exact midpoints between neighbours (ties), their
// neighbours one double ulp away, subnormals, overflow, signed zeros, specials, and random values.
template <int E, int M>
std::vector<double> probe_doubles(std::mt19937_64& rng) {
  std::vector<double> v = {0.0,
                           -0.0,
                           1.0,
                           -1.0,
                           std::numeric_limits<double>::infinity(),
                           -std::numeric_limits<double>::infinity(),
                           std::numeric_limits<double>::quiet_NaN(),
                           std::numeric_limits<double>::denorm_min(),
                           -std::numeric_limits<double>::denorm_min(),
                           std::numeric_limits<double>::min(),
                           std::numeric_limits<double>::max(),
                           -std::numeric_limits<double>::max(),
                           1e-300,
                           1e300,
                           0.1,
                           -0.1,
                           1.0 / 3};
  const uint16_t inf = static_cast<uint16_t>(((1u << E) - 1) << M);
  for (uint32_t b = 0; b < inf; ++b) {
    const double lo = small_float_value<E, M>(static_cast<uint16_t>(b));
    const double hi = small_float_value<E, M>(static_cast<uint16_t>(b + 1));
    const double mid = (lo + hi) / 2;
    for (double d : {mid, std::nextafter(mid, 0.0), std::nextafter(mid, 1e308), lo}) {
      v.push_back(d);
      v.push_back(-d);
    }
  }
  std::uniform_int_distribution<uint64_t> bits;
  const int bias = (1 << (E - 1)) - 1;
  std::uniform_int_distribution<int> exps(-bias - M - 4, bias + 3);
  for (int i = 0; i < 200000; ++i) {
    // Random mantissa bits at an exponent around the format's range.
    const uint64_t man = bits(rng) & ((uint64_t{1} << 52) - 1);
    const double m = dfrom((uint64_t{1023} << 52) | man);  // [1, 2)
    double d = std::ldexp(m, exps(rng));
    if (i & 1) d = -d;
    v.push_back(d);
  }
  for (int i = 0; i < 20000; ++i) {
    const double d = dfrom(bits(rng));  // any double, mostly far out of range
    v.push_back(d);
  }
  return v;
}

}  // namespace

TEST_CASE("half decodes all 65536 bit patterns like _Float16", "[numeric][half]") {
  int mismatches = 0;
  for (uint32_t b = 0; b < 65536; ++b) {
    const float got = half{static_cast<uint16_t>(b)}.to_float();
    const float want = static_cast<float>(f16_from_bits(static_cast<uint16_t>(b)));
    if (std::isnan(want)) {
      if (!std::isnan(got)) ++mismatches;
      continue;
    }
    if (fbits(got) != fbits(want)) {
      if (++mismatches < 10) FAIL_CHECK("pattern " << b << ": got " << got << " want " << want);
    }
  }
  CHECK(mismatches == 0);
}

TEST_CASE("half decoding agrees with the field formula", "[numeric][half]") {
  for (uint32_t b = 0; b < 65536; ++b) {
    const auto h = static_cast<uint16_t>(b);
    const double want = small_float_value<5, 10>(h);
    const float got = half{h}.to_float();
    if ((h & 0x7C00) == 0x7C00) {
      if (h & 0x3FF) {
        REQUIRE(std::isnan(got));
      } else {
        REQUIRE(std::isinf(got));
        REQUIRE(std::signbit(got) == static_cast<bool>(h & 0x8000));
      }
      continue;
    }
    REQUIRE(static_cast<double>(got) == want);
    REQUIRE(std::signbit(got) == static_cast<bool>(h & 0x8000));
  }
}

TEST_CASE("double to half rounds like _Float16 (ties, subnormals, overflow)", "[numeric][half]") {
  std::mt19937_64 rng(12345);
  const std::vector<double> values = probe_doubles<5, 10>(rng);
  int mismatches = 0, ref_mismatches = 0;
  for (double d : values) {
    const uint16_t got = half::from_double(d).bits;
    const uint16_t want = f16_bits(static_cast<ref_f16>(d));
    if (std::isnan(d)) {
      CHECK((got & 0x7C00) == 0x7C00);
      CHECK((got & 0x3FF) != 0);
      continue;
    }
    if (got != want && ++mismatches < 10) {
      FAIL_CHECK("half::from_double(" << d << ") = " << got << ", _Float16 gives " << want);
    }
    if (reference_round<5, 10>(d) != want) ++ref_mismatches;  // sanity of the second reference
  }
  CHECK(mismatches == 0);
  CHECK(ref_mismatches == 0);
}

TEST_CASE("half rounding: named cases", "[numeric][half]") {
  CHECK(half::from_double(65504.0).bits == 0x7BFF);
  CHECK(half::from_double(65519.99).bits == 0x7BFF);
  CHECK(half::from_double(65520.0).bits == 0x7C00);  // tie rounds to even: infinity
  CHECK(half::from_double(-65520.0).bits == 0xFC00);
  CHECK(half::from_double(1e10).bits == 0x7C00);
  CHECK(half::from_double(-0.0).bits == 0x8000);
  CHECK(half::from_double(1.0 + std::ldexp(1.0, -11)).bits == 0x3C00);      // tie to even
  CHECK(half::from_double(1.0 + 3 * std::ldexp(1.0, -11)).bits == 0x3C02);  // tie to even
  CHECK(half::from_double(std::ldexp(1.0, -24)).bits == 0x0001);            // smallest subnormal
  CHECK(half::from_double(std::ldexp(1.0, -25)).bits == 0x0000);            // tie to even: 0
  CHECK(half::from_double(std::ldexp(1.5, -25)).bits == 0x0001);
  CHECK(half::from_double(-std::ldexp(3.0, -25)).bits == 0x8002);  // tie 1.5 ulp -> 2
  // The largest subnormal rounds up into the smallest normal.
  CHECK(half::from_double(std::ldexp(1.0, -14) - std::ldexp(1.0, -26)).bits == 0x0400);
}

TEST_CASE("bfloat16 decodes all 65536 bit patterns", "[numeric][bf16]") {
  for (uint32_t b = 0; b < 65536; ++b) {
    const auto h = static_cast<uint16_t>(b);
    const float got = bfloat16{h}.to_float();
    if ((h & 0x7F80) == 0x7F80) {
      if (h & 0x7F) {
        REQUIRE(std::isnan(got));
      } else {
        REQUIRE(std::isinf(got));
        REQUIRE(std::signbit(got) == static_cast<bool>(h & 0x8000));
      }
      continue;
    }
    REQUIRE(static_cast<double>(got) == small_float_value<8, 7>(h));
    REQUIRE(std::signbit(got) == static_cast<bool>(h & 0x8000));
  }
}

TEST_CASE("bfloat16 rounds exact floats like RNE on the float bits", "[numeric][bf16]") {
  auto rne = [](float f) -> uint16_t {
    uint32_t u = fbits(f);
    u += 0x7FFFu + ((u >> 16) & 1u);
    return static_cast<uint16_t>(u >> 16);
  };
  std::mt19937 rng(777);
  std::uniform_int_distribution<uint32_t> bits;
  int mismatches = 0;
  auto check = [&](uint32_t u) {
    const float f = ffrom(u);
    if (std::isnan(f)) return;
    const uint16_t got = bfloat16::from_double(static_cast<double>(f)).bits;
    const uint16_t want = rne(f);
    if (got != want && ++mismatches < 10) {
      FAIL_CHECK("bfloat16::from_double(" << f << " [0x" << std::hex << u << "]) = 0x" << got
                                          << ", want 0x" << want << std::dec);
    }
  };
  for (int i = 0; i < 1000000; ++i) check(bits(rng));
  // Every tie and near-tie in the upper 16 bits, for every exponent (incl. subnormals).
  for (uint32_t hi = 0; hi < 0x7F80; hi += 7) {
    for (uint32_t low : {0x0000u, 0x7FFFu, 0x8000u, 0x8001u, 0xFFFFu}) {
      check((hi << 16) | low);
      check(0x80000000u | (hi << 16) | low);
    }
  }
  CHECK(mismatches == 0);
}

TEST_CASE("double to bfloat16 rounds once (midpoint reference)", "[numeric][bf16]") {
  std::mt19937_64 rng(4242);
  const std::vector<double> values = probe_doubles<8, 7>(rng);
  int mismatches = 0;
  for (double d : values) {
    const uint16_t got = bfloat16::from_double(d).bits;
    if (std::isnan(d)) {
      CHECK((got & 0x7F80) == 0x7F80);
      CHECK((got & 0x7F) != 0);
      continue;
    }
    const uint16_t want = reference_round<8, 7>(d);
    if (got != want && ++mismatches < 10) {
      FAIL_CHECK("bfloat16::from_double(" << d << ") = " << got << ", want " << want);
    }
  }
  CHECK(mismatches == 0);
  // A double just above a bf16 tie that is not a float: rounding through float would give the
  // even neighbour, one rounding gives the upper one.
  const double above_tie = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40);
  CHECK(bfloat16::from_double(above_tie).bits == 0x3F81);
  CHECK(bfloat16::from_double(std::ldexp(1.0, -133)).bits == 0x0001);
  CHECK(bfloat16::from_double(3.4e38).bits == 0x7F80);  // above max bf16 -> inf
}

namespace {

template <class I>
void check_float_to_int() {
  using L = std::numeric_limits<I>;
  const double lo = static_cast<double>(L::min());
  const double hi = static_cast<double>(L::max());
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  CHECK(convert<I>(nan) == I{0});
  CHECK(convert<I>(-nan) == I{0});
  CHECK(convert<I>(static_cast<float>(nan)) == I{0});
  CHECK(convert<I>(inf) == L::max());
  CHECK(convert<I>(-inf) == L::min());
  CHECK(convert<I>(1e300) == L::max());
  CHECK(convert<I>(-1e300) == L::min());
  CHECK(convert<I>(2.9) == I{2});
  CHECK(convert<I>(0.9999) == I{0});
  CHECK(convert<I>(-0.9999) == I{0});
  CHECK(convert<I>(-0.0) == I{0});
  CHECK(convert<I>(2.9f) == I{2});
  CHECK(convert<I>(half::from_double(7.75)) == I{7});
  CHECK(convert<I>(bfloat16::from_double(9.5)) == I{9});
  CHECK(convert<I>(half{0x7E00}) == I{0});  // half NaN
  CHECK(convert<I>(half{0x7C00}) == L::max());
  if constexpr (std::is_signed_v<I>) {
    CHECK(convert<I>(-2.9) == I{-2});
    CHECK(convert<I>(-2.9f) == I{-2});
    CHECK(convert<I>(lo) == L::min());
    CHECK(convert<I>(lo - 1e6) == L::min());
    CHECK(convert<I>(half{0xFC00}) == L::min());
  } else {
    CHECK(convert<I>(-2.9) == I{0});
    CHECK(convert<I>(-1e9) == I{0});
    CHECK(convert<I>(half{0xFC00}) == I{0});
  }
  if constexpr (sizeof(I) < 8) {
    CHECK(convert<I>(hi) == L::max());
    CHECK(convert<I>(hi + 0.5) == L::max());
    CHECK(convert<I>(hi + 1) == L::max());
    CHECK(convert<I>(hi - 0.5) == static_cast<I>(L::max() - 1));
    CHECK(convert<I>(lo + 0.5) == (std::is_signed_v<I> ? static_cast<I>(L::min() + 1) : I{0}));
  }
}

}  // namespace

TEST_CASE("convert: float to every integer type saturates, truncates, NaN gives 0",
          "[numeric][convert]") {
  check_float_to_int<int8_t>();
  check_float_to_int<int16_t>();
  check_float_to_int<int32_t>();
  check_float_to_int<int64_t>();
  check_float_to_int<uint8_t>();
  check_float_to_int<uint32_t>();
  // 64-bit edges: 2^63 does not fit, the double below it does.
  CHECK(convert<int64_t>(9223372036854775808.0) == std::numeric_limits<int64_t>::max());
  CHECK(convert<int64_t>(9223372036854774784.0) == INT64_C(9223372036854774784));
  CHECK(convert<int64_t>(-9223372036854775808.0) == std::numeric_limits<int64_t>::min());
  CHECK(convert<int64_t>(9.2233720e18f) == std::numeric_limits<int64_t>::max());
  CHECK(convert<uint32_t>(4294967295.0) == 4294967295u);
  CHECK(convert<uint32_t>(4294967294.75) == 4294967294u);
  CHECK(convert<int32_t>(2147483647.0f) == 2147483647);  // the float is 2^31: saturates
  CHECK(convert<int32_t>(2147483520.0f) == 2147483520);
}

TEST_CASE("convert: integer narrowing wraps", "[numeric][convert]") {
  CHECK(convert<int8_t>(int32_t{300}) == 44);
  CHECK(convert<int8_t>(int32_t{-129}) == 127);
  CHECK(convert<uint8_t>(int32_t{-1}) == 255);
  CHECK(convert<uint8_t>(int64_t{256 + 7}) == 7);
  CHECK(convert<int16_t>(int32_t{40000}) == -25536);
  CHECK(convert<int32_t>(int64_t{(int64_t{1} << 32) + 5}) == 5);
  CHECK(convert<uint32_t>(int64_t{-1}) == 4294967295u);
  CHECK(convert<uint32_t>(int8_t{-2}) == 4294967294u);
  CHECK(convert<int64_t>(uint32_t{4294967295u}) == 4294967295);
  CHECK(convert<int8_t>(uint8_t{200}) == -56);
  CHECK(convert<int32_t>(uint32_t{4294967295u}) == -1);
}

TEST_CASE("convert: bool", "[numeric][convert]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(convert<bool>(int32_t{2}) == true);
  CHECK(convert<bool>(int8_t{0}) == false);
  CHECK(convert<bool>(uint8_t{128}) == true);
  CHECK(convert<bool>(0.5) == true);
  CHECK(convert<bool>(-0.0) == false);
  CHECK(convert<bool>(nan) == true);
  CHECK(convert<bool>(half{0x8000}) == false);  // -0
  CHECK(convert<bool>(half{0x0001}) == true);   // smallest subnormal
  CHECK(convert<bool>(bfloat16{0x0001}) == true);
  CHECK(convert<bool>(complex64{0.0f, 1.0f}) == true);
  CHECK(convert<bool>(complex128{0.0, 0.0}) == false);
  CHECK(convert<bool>(complex128{-0.0, -0.0}) == false);
  CHECK(convert<int32_t>(true) == 1);
  CHECK(convert<uint8_t>(false) == 0);
  CHECK(convert<double>(true) == 1.0);
  CHECK(convert<half>(true).bits == 0x3C00);
  CHECK(convert<bfloat16>(true).bits == 0x3F80);
  const complex64 z = convert<complex64>(true);
  CHECK(z.re == 1.0f);
  CHECK(z.im == 0.0f);
}

TEST_CASE("convert: complex and real", "[numeric][convert]") {
  const complex128 z{2.75, -3.5};
  CHECK(convert<double>(z) == 2.75);
  CHECK(convert<float>(z) == 2.75f);
  CHECK(convert<int32_t>(z) == 2);
  CHECK(convert<uint8_t>(complex128{-4.0, 1.0}) == 0);
  CHECK(convert<half>(z).bits == half::from_double(2.75).bits);
  const complex64 c = convert<complex64>(complex128{0.1, 1e300});
  CHECK(c.re == 0.1f);
  CHECK(std::isinf(c.im));
  const complex128 w = convert<complex128>(complex64{1.5f, -0.25f});
  CHECK(w.re == 1.5);
  CHECK(w.im == -0.25);
  const complex64 r = convert<complex64>(int64_t{16777217});
  CHECK(r.re == 16777216.0f);
  CHECK(r.im == 0.0f);
  const complex128 h = convert<complex128>(half::from_double(0.1));
  CHECK(h.re == static_cast<double>(half::from_double(0.1).to_float()));
  CHECK(h.im == 0.0);
  CHECK(std::signbit(convert<complex128>(-0.0).re));
}

TEST_CASE("convert: between floating types rounds once", "[numeric][convert]") {
  CHECK(convert<float>(0.1) == 0.1f);
  CHECK(convert<double>(0.1f) == static_cast<double>(0.1f));
  CHECK(convert<float>(int64_t{16777217}) == 16777216.0f);
  CHECK(convert<float>(int64_t{16777219}) == 16777220.0f);
  CHECK(convert<double>(int64_t{(int64_t{1} << 53) + 1}) == 9007199254740992.0);
  CHECK(convert<half>(int32_t{2049}).bits == 0x6800);  // 2048: tie to even
  CHECK(convert<half>(int32_t{2051}).bits == 0x6802);  // 2052
  CHECK(convert<half>(int64_t{65520}).bits == 0x7C00);
  CHECK(convert<half>(bfloat16{0x3F81}).bits == 0x3C08);  // 1 + 2^-7 is a half
  CHECK(convert<bfloat16>(half{0x3C01}).bits == 0x3F80);  // 1 + 2^-10 -> 1
  CHECK(convert<float>(half{0x0001}) == std::ldexp(1.0f, -24));
  const int64_t above_mid = (int64_t{1} << 60) + (int64_t{1} << 52) + 1;
  CHECK(convert<bfloat16>(above_mid).bits ==
        reference_round<8, 7>(std::ldexp(1.0, 60) + std::ldexp(1.0, 53)));
  const int64_t below_mid = (int64_t{1} << 60) + (int64_t{1} << 52) - 1;
  CHECK(convert<bfloat16>(below_mid).bits == reference_round<8, 7>(std::ldexp(1.0, 60)));
}

TEST_CASE("convert: double to float beyond float's range is defined (IEEE rounding, then inf)",
          "[numeric][convert]") {
  const double fmax = std::numeric_limits<float>::max();
  const double half_ulp = std::ldexp(1.0, 103);  // ulp(FLT_MAX) = 2^104
  const float inf = std::numeric_limits<float>::infinity();
  // Just above FLT_MAX still rounds to FLT_MAX (numpy: float32(3.4028235e38 * 1.0000000001)).
  CHECK(convert<float>(fmax) == std::numeric_limits<float>::max());
  CHECK(convert<float>(fmax * 1.0000000001) == std::numeric_limits<float>::max());
  CHECK(convert<float>(fmax + half_ulp - std::ldexp(1.0, 76)) == std::numeric_limits<float>::max());
  CHECK(convert<float>(-(fmax + half_ulp - std::ldexp(1.0, 76))) ==
        -std::numeric_limits<float>::max());
  // The midpoint ties to even: away from FLT_MAX's odd significand, to infinity.
  CHECK(convert<float>(fmax + half_ulp) == inf);
  CHECK(convert<float>(-(fmax + half_ulp)) == -inf);
  CHECK(convert<float>(1e300) == inf);
  CHECK(convert<float>(-1e300) == -inf);
  CHECK(convert<float>(std::numeric_limits<double>::max()) == inf);
  CHECK(convert<float>(std::numeric_limits<double>::infinity()) == inf);
  CHECK(std::isnan(convert<float>(std::numeric_limits<double>::quiet_NaN())));
  CHECK(convert<float>(1e-300) == 0.0f);
  CHECK(std::signbit(convert<float>(-1e-300)));
  CHECK(convert<float>(std::ldexp(1.0, -149)) == std::ldexp(1.0f, -149));
  // complex128 -> complex64 narrows each part the same way
  const complex64 z = convert<complex64>(complex128{-1e300, fmax * 1.0000000001});
  CHECK(z.re == -inf);
  CHECK(z.im == std::numeric_limits<float>::max());
  // f16 and bf16: values that round to the largest finite value stay finite, beyond give inf
  CHECK(convert<half>(65519.99).bits == 0x7BFF);
  CHECK(convert<half>(65520.0).bits == 0x7C00);
  CHECK(convert<half>(-1e300).bits == 0xFC00);
  CHECK(convert<bfloat16>(fmax).bits == 0x7F80);  // FLT_MAX rounds up past bf16's largest
  CHECK(convert<bfloat16>(1e300).bits == 0x7F80);
  CHECK(convert<bfloat16>(std::ldexp(255.0, 120)).bits == 0x7F7F);  // bf16's largest value
}

TEST_CASE("convert: double to integers is defined for NaN, infinities and huge values",
          "[numeric][convert]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  CHECK(convert<int32_t>(nan) == 0);
  CHECK(convert<int64_t>(nan) == 0);
  CHECK(convert<uint8_t>(nan) == 0);
  CHECK(convert<int64_t>(1e300) == std::numeric_limits<int64_t>::max());
  CHECK(convert<int64_t>(std::ldexp(1.0, 63)) == std::numeric_limits<int64_t>::max());
  CHECK(convert<int64_t>(-inf) == std::numeric_limits<int64_t>::min());
  CHECK(convert<uint32_t>(-1e300) == 0u);
  CHECK(convert<uint32_t>(inf) == std::numeric_limits<uint32_t>::max());
  CHECK(convert<int8_t>(-128.9) == -128);
  CHECK(convert<int32_t>(convert<float>(1e300)) == std::numeric_limits<int32_t>::max());
}
