// encode_scalar's exactness rules for every dtype, and decode round trips.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>

#include "core/base/error.hpp"
#include "core/model/scalar.hpp"
#include "helpers.hpp"

using namespace culua::detail;

namespace {

__extension__ typedef _Float16 ref_f16;

template <class T>
T encode_as(DType t, const Scalar& v) {
  unsigned char buf[kMaxItemSize] = {};
  encode_scalar(t, v, buf);
  T out;
  std::memcpy(&out, buf, sizeof out);
  return out;
}

bool encodes(DType t, const Scalar& v) {
  unsigned char buf[kMaxItemSize];
  try {
    encode_scalar(t, v, buf);
  } catch (const Error&) {
    return false;
  }
  return true;
}

ErrorKind encode_error(DType t, const Scalar& v) {
  unsigned char buf[kMaxItemSize];
  return test::error_kind_of([&] { encode_scalar(t, v, buf); });
}

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

constexpr DType kAll[] = {DType::F32,  DType::F64, DType::F16,  DType::BF16, DType::I8,
                          DType::I16,  DType::I32, DType::I64,  DType::U8,   DType::U32,
                          DType::Bool, DType::C64, DType::C128, DType::U16,  DType::U64};
constexpr DType kInts[] = {DType::I8, DType::I16, DType::I32, DType::I64,
                           DType::U8, DType::U16, DType::U32, DType::U64};

}  // namespace

TEST_CASE("dtype table", "[scalar][dtype]") {
  CHECK(itemsize(DType::F32) == 4);
  CHECK(itemsize(DType::F16) == 2);
  CHECK(itemsize(DType::BF16) == 2);
  CHECK(itemsize(DType::C64) == 8);
  CHECK(itemsize(DType::C128) == 16);
  CHECK(itemsize(DType::Bool) == 1);
  for (DType t : kAll) {
    CHECK(parse_dtype(name(t)) == t);
    CHECK(itemsize(t) <= kMaxItemSize);
    dispatch(t, [&](auto tag) {
      using T = typename decltype(tag)::type;
      CHECK(sizeof(T) == itemsize(t));
    });
  }
  CHECK(parse_dtype("float32") == DType::F32);
  CHECK(parse_dtype("double") == DType::F64);
  CHECK_FALSE(parse_dtype("f128").has_value());
  CHECK_FALSE(parse_dtype("").has_value());
}

TEST_CASE("encode_scalar: integer targets take exact values only", "[scalar]") {
  CHECK(encode_error(DType::I32, Scalar::real(2.5)) == ErrorKind::Value);
  CHECK(encode_error(DType::U8, Scalar::integer(300)) == ErrorKind::Value);
  CHECK(encode_error(DType::U8, Scalar::real(300.0)) == ErrorKind::Value);
  CHECK(encode_error(DType::U32, Scalar::integer(-1)) == ErrorKind::Value);
  CHECK(encode_error(DType::U32, Scalar::real(-1.0)) == ErrorKind::Value);
  CHECK(encode_error(DType::I64, Scalar::real(kNaN)) == ErrorKind::Value);
  CHECK(encode_error(DType::I64, Scalar::real(kInf)) == ErrorKind::Value);
  CHECK(encode_error(DType::I64, Scalar::real(-kInf)) == ErrorKind::Value);
  CHECK(encode_error(DType::I64, Scalar::real(9223372036854775808.0)) == ErrorKind::Value);
  CHECK(encode_error(DType::I32, Scalar::integer(int64_t{1} << 31)) == ErrorKind::Value);
  CHECK(encode_error(DType::I32, Scalar::real(2147483648.0)) == ErrorKind::Value);
  CHECK(encode_error(DType::I32, Scalar::real(-2147483649.0)) == ErrorKind::Value);
  CHECK(encode_error(DType::I8, Scalar::integer(128)) == ErrorKind::Value);
  CHECK(encode_error(DType::I8, Scalar::integer(-129)) == ErrorKind::Value);
  CHECK(encode_error(DType::I16, Scalar::integer(32768)) == ErrorKind::Value);
  CHECK(encode_error(DType::U32, Scalar::integer(int64_t{1} << 32)) == ErrorKind::Value);
  CHECK(encode_error(DType::U32, Scalar::real(4294967296.0)) == ErrorKind::Value);
  CHECK(encode_error(DType::U8, Scalar::real(255.5)) == ErrorKind::Value);
  CHECK(encode_error(DType::U8, Scalar::real(-0.5)) == ErrorKind::Value);
  for (DType t : kInts) {
    CHECK_FALSE(encodes(t, Scalar::real(kNaN)));
    CHECK_FALSE(encodes(t, Scalar::real(0.1)));
    CHECK_FALSE(encodes(t, Scalar::complex(1, 0)));
    CHECK(encode_as<int8_t>(t, Scalar::integer(0)) == 0);
  }

  CHECK(encode_as<int32_t>(DType::I32, Scalar::real(3.0)) == 3);
  CHECK(encode_as<int32_t>(DType::I32, Scalar::real(-2147483648.0)) == INT32_MIN);
  CHECK(encode_as<int32_t>(DType::I32, Scalar::real(2147483647.0)) == INT32_MAX);
  CHECK(encode_as<int32_t>(DType::I32, Scalar::integer(-7)) == -7);
  CHECK(encode_as<int32_t>(DType::I32, Scalar::boolean(true)) == 1);
  CHECK(encode_as<uint8_t>(DType::U8, Scalar::integer(255)) == 255);
  CHECK(encode_as<uint8_t>(DType::U8, Scalar::real(255.0)) == 255);
  CHECK(encode_as<uint8_t>(DType::U8, Scalar::real(-0.0)) == 0);
  CHECK(encode_as<int8_t>(DType::I8, Scalar::integer(-128)) == -128);
  CHECK(encode_as<int16_t>(DType::I16, Scalar::integer(-32768)) == -32768);
  CHECK(encode_as<uint32_t>(DType::U32, Scalar::integer(4294967295)) == 4294967295u);
  CHECK(encode_as<uint32_t>(DType::U32, Scalar::real(4294967295.0)) == 4294967295u);
  CHECK(encode_as<int64_t>(DType::I64, Scalar::integer(INT64_MAX)) == INT64_MAX);
  CHECK(encode_as<int64_t>(DType::I64, Scalar::integer(INT64_MIN)) == INT64_MIN);
  CHECK(encode_as<int64_t>(DType::I64, Scalar::real(-9223372036854775808.0)) == INT64_MIN);
  CHECK(encode_as<int64_t>(DType::I64, Scalar::real(9223372036854774784.0)) ==
        INT64_C(9223372036854774784));
  CHECK(encode_as<int64_t>(DType::I64, Scalar::real(1e15)) == INT64_C(1000000000000000));
}

TEST_CASE("u16 and u64: exact ranges, values from 2^63 up kept exactly", "[scalar][dtype]") {
  CHECK(itemsize(DType::U16) == 2);
  CHECK(itemsize(DType::U64) == 8);
  CHECK(parse_dtype("uint16") == DType::U16);
  CHECK(parse_dtype("uint64") == DType::U64);
  CHECK(encode_as<uint16_t>(DType::U16, Scalar::integer(65535)) == 65535);
  CHECK(encode_error(DType::U16, Scalar::integer(65536)) == ErrorKind::Value);
  CHECK(encode_error(DType::U16, Scalar::integer(-1)) == ErrorKind::Value);
  CHECK(encode_error(DType::U64, Scalar::integer(-1)) == ErrorKind::Value);
  CHECK(encode_error(DType::U64, Scalar::integer(INT64_MIN)) == ErrorKind::Value);
  CHECK(encode_error(DType::U64, Scalar::real(18446744073709551616.0)) == ErrorKind::Value);
  CHECK(encode_error(DType::U64, Scalar::real(-1.0)) == ErrorKind::Value);
  CHECK(encode_as<uint64_t>(DType::U64, Scalar::integer(INT64_MAX)) == uint64_t{INT64_MAX});
  CHECK(encode_as<uint64_t>(DType::U64, Scalar::real(9223372036854775808.0)) == uint64_t{1} << 63);
  CHECK(encode_as<uint64_t>(DType::U64, Scalar::real(18446744073709549568.0)) ==
        UINT64_C(18446744073709549568));
  // A decoded u64 element from 2^63 up: exact text, exact re-encoding, no other integer dtype
  const uint64_t top = UINT64_MAX;
  const Scalar s = decode_scalar(DType::U64, &top);
  CHECK(s.kind == Scalar::Kind::Int);
  CHECK(s.big);
  CHECK(s.str() == "18446744073709551615");
  CHECK(s.as_double() == 18446744073709551616.0);
  CHECK(encode_as<uint64_t>(DType::U64, s) == top);
  CHECK(encode_error(DType::I64, s) == ErrorKind::Value);
  CHECK(encode_error(DType::U32, s) == ErrorKind::Value);
  CHECK(encode_as<double>(DType::F64, s) == 18446744073709551616.0);
  CHECK(encode_as<float>(DType::F32, s) == 18446744073709551616.0f);
  const uint64_t small = 42;
  const Scalar t = decode_scalar(DType::U64, &small);
  CHECK_FALSE(t.big);
  CHECK(t.i == 42);
  // u64 to f16/bf16 rounds once from the integer (2^63 + 2^52 + 1 is above bf16's midpoint)
  const uint64_t odd = (uint64_t{1} << 63) + (uint64_t{1} << 55) + 1;
  CHECK(convert<bfloat16>(odd).bits == convert<bfloat16>(0x1.02p63).bits);
  CHECK(convert<double>(odd) == 0x1.01p63);
}

TEST_CASE("encode_scalar: bool takes true, false, 0 and 1 only", "[scalar]") {
  CHECK(encode_as<uint8_t>(DType::Bool, Scalar::boolean(true)) == 1);
  CHECK(encode_as<uint8_t>(DType::Bool, Scalar::boolean(false)) == 0);
  CHECK(encode_as<uint8_t>(DType::Bool, Scalar::integer(1)) == 1);
  CHECK(encode_as<uint8_t>(DType::Bool, Scalar::integer(0)) == 0);
  CHECK(encode_as<uint8_t>(DType::Bool, Scalar::real(1.0)) == 1);
  CHECK(encode_as<uint8_t>(DType::Bool, Scalar::real(0.0)) == 0);
  CHECK_FALSE(encodes(DType::Bool, Scalar::integer(2)));
  CHECK_FALSE(encodes(DType::Bool, Scalar::integer(-1)));
  CHECK_FALSE(encodes(DType::Bool, Scalar::real(0.5)));
  CHECK_FALSE(encodes(DType::Bool, Scalar::real(kNaN)));
  CHECK_FALSE(encodes(DType::Bool, Scalar::real(kInf)));
  CHECK_FALSE(encodes(DType::Bool, Scalar::complex(1, 0)));
  CHECK_FALSE(encodes(DType::Bool, Scalar::complex(0, 0)));
}

TEST_CASE("encode_scalar: real targets refuse complex values", "[scalar]") {
  for (DType t : kAll) {
    if (is_complex(t)) continue;
    CHECK_FALSE(encodes(t, Scalar::complex(1.0, 2.0)));
    CHECK_FALSE(encodes(t, Scalar::complex(1.0, 0.0)));
  }
  CHECK(encode_error(DType::F32, Scalar::complex(1, 2)) == ErrorKind::Type);
}

TEST_CASE("encode_scalar: float targets round", "[scalar]") {
  CHECK(encode_as<float>(DType::F32, Scalar::real(0.1)) == 0.1f);
  CHECK(encode_as<float>(DType::F32, Scalar::integer(16777217)) == 16777216.0f);
  CHECK(encode_as<float>(DType::F32, Scalar::boolean(true)) == 1.0f);
  CHECK(std::isnan(encode_as<float>(DType::F32, Scalar::real(kNaN))));
  CHECK(std::isinf(encode_as<float>(DType::F32, Scalar::real(1e300))));
  CHECK(encode_as<float>(DType::F32, Scalar::real(-1e300)) ==
        -std::numeric_limits<float>::infinity());
  CHECK(encode_as<float>(DType::F32,
                         Scalar::real(std::numeric_limits<float>::max() * 1.0000000001)) ==
        std::numeric_limits<float>::max());
  CHECK(encode_as<float>(DType::F32, Scalar::integer(std::numeric_limits<int64_t>::max())) ==
        std::ldexp(1.0f, 63));
  CHECK(encode_as<double>(DType::F64, Scalar::integer((int64_t{1} << 53) + 1)) ==
        9007199254740992.0);
  CHECK(encode_as<double>(DType::F64, Scalar::real(0.1)) == 0.1);

  auto f16 = [](const Scalar& v) { return encode_as<uint16_t>(DType::F16, v); };
  auto ref = [](double d) {
    const ref_f16 h = static_cast<ref_f16>(d);
    uint16_t b;
    std::memcpy(&b, &h, sizeof b);
    return b;
  };
  for (double d : {0.1, -0.1, 1.0 / 3, 65504.0, 65519.0, 65520.0, 1e-8, 6e-8, -0.0, 1e5,
                   1.0 + std::ldexp(1.0, -11), 1.0 + 3 * std::ldexp(1.0, -11), 2049.0}) {
    CHECK(f16(Scalar::real(d)) == ref(d));
  }
  CHECK(f16(Scalar::integer(2049)) == 0x6800);
  CHECK(f16(Scalar::integer(2051)) == 0x6802);
  CHECK(f16(Scalar::integer(70000)) == 0x7C00);
  CHECK(f16(Scalar::integer(-70000)) == 0xFC00);
  CHECK(f16(Scalar::real(kInf)) == 0x7C00);
  CHECK((f16(Scalar::real(kNaN)) & 0x7C00) == 0x7C00);
  CHECK((f16(Scalar::real(kNaN)) & 0x3FF) != 0);

  auto bf16 = [](const Scalar& v) { return encode_as<uint16_t>(DType::BF16, v); };
  CHECK(bf16(Scalar::real(1.0)) == 0x3F80);
  CHECK(bf16(Scalar::real(1.0 + std::ldexp(1.0, -8))) == 0x3F80);  // tie to even
  CHECK(bf16(Scalar::real(1.0 + 3 * std::ldexp(1.0, -8))) == 0x3F82);
  CHECK(bf16(Scalar::integer(257)) == 0x4380);  // 256: tie to even
  CHECK(bf16(Scalar::integer(259)) == 0x4382);  // 260
}

TEST_CASE("encode_scalar: complex targets", "[scalar]") {
  const auto a = encode_as<complex64>(DType::C64, Scalar::complex(1.5, -2.25));
  CHECK(a.re == 1.5f);
  CHECK(a.im == -2.25f);
  const auto b = encode_as<complex128>(DType::C128, Scalar::real(0.1));
  CHECK(b.re == 0.1);
  CHECK(b.im == 0.0);
  const auto c = encode_as<complex128>(DType::C128, Scalar::integer(-3));
  CHECK(c.re == -3.0);
  CHECK(c.im == 0.0);
  const auto d = encode_as<complex64>(DType::C64, Scalar::boolean(true));
  CHECK(d.re == 1.0f);
  CHECK(d.im == 0.0f);
  const auto e = encode_as<complex64>(DType::C64, Scalar::complex(0.1, 1e300));
  CHECK(e.re == 0.1f);
  CHECK(std::isinf(e.im));
}

TEST_CASE("decode_scalar round trips every dtype", "[scalar]") {
  auto round_trip = [](DType t, const Scalar& v) {
    unsigned char buf[kMaxItemSize] = {};
    encode_scalar(t, v, buf);
    return decode_scalar(t, buf);
  };
  for (DType t : kInts) {
    for (int64_t v : {int64_t{0}, int64_t{1}, int64_t{100}, int64_t{127}}) {
      const Scalar s = round_trip(t, Scalar::integer(v));
      CHECK(s.kind == Scalar::Kind::Int);
      CHECK(s.i == v);
    }
  }
  CHECK(round_trip(DType::I8, Scalar::integer(-128)).i == -128);
  CHECK(round_trip(DType::I16, Scalar::integer(-32768)).i == -32768);
  CHECK(round_trip(DType::I32, Scalar::integer(INT32_MIN)).i == INT32_MIN);
  CHECK(round_trip(DType::I64, Scalar::integer(INT64_MIN)).i == INT64_MIN);
  CHECK(round_trip(DType::I64, Scalar::integer(INT64_MAX)).i == INT64_MAX);
  CHECK(round_trip(DType::U8, Scalar::integer(255)).i == 255);
  CHECK(round_trip(DType::U32, Scalar::integer(4294967295)).i == 4294967295);
  for (bool b : {false, true}) {
    const Scalar s = round_trip(DType::Bool, Scalar::boolean(b));
    CHECK(s.kind == Scalar::Kind::Bool);
    CHECK(s.b == b);
  }
  for (DType t : {DType::F32, DType::F64, DType::F16, DType::BF16}) {
    for (double v : {0.0, 1.0, -2.5, 0.375, 1024.0, -0.0}) {
      const Scalar s = round_trip(t, Scalar::real(v));
      CHECK(s.kind == Scalar::Kind::Float);
      CHECK(s.re == v);
      CHECK(std::signbit(s.re) == std::signbit(v));
    }
    CHECK(std::isnan(round_trip(t, Scalar::real(kNaN)).re));
    CHECK(round_trip(t, Scalar::real(-kInf)).re == -kInf);
  }
  CHECK(round_trip(DType::F64, Scalar::real(0.1)).re == 0.1);
  CHECK(round_trip(DType::F32, Scalar::real(0.1)).re == static_cast<double>(0.1f));
  CHECK(round_trip(DType::F16, Scalar::real(0.1)).re == 0.0999755859375);
  CHECK(round_trip(DType::BF16, Scalar::real(0.1)).re == 0.10009765625);
  for (DType t : {DType::C64, DType::C128}) {
    const Scalar s = round_trip(t, Scalar::complex(1.5, -0.25));
    CHECK(s.kind == Scalar::Kind::Complex);
    CHECK(s.re == 1.5);
    CHECK(s.im == -0.25);
  }
  CHECK(round_trip(DType::C128, Scalar::complex(0.1, 0.2)).im == 0.2);
}

TEST_CASE("Scalar text and as_double", "[scalar]") {
  CHECK(Scalar::boolean(true).str() == "true");
  CHECK(Scalar::integer(-5).str() == "-5");
  CHECK(Scalar::real(2.5).str() == "2.5");
  CHECK(Scalar::boolean(true).as_double() == 1.0);
  CHECK(Scalar::integer(-5).as_double() == -5.0);
  CHECK(Scalar::complex(3, 4).as_double() == 3.0);
}
