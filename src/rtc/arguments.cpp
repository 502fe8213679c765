#include "rtc/arguments.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "core/base/error.hpp"

namespace culua::detail::rtc {

namespace {

// The dtypes a pointer parameter takes, in the order messages list them.
std::vector<DType> accepted_list(const ParamType& p) {
  if (p.kind != ParamKind::Pointer || p.pointee_void) return {};
  if (p.vector == 1 && (p.element == DType::I8 || p.element == DType::U8)) {
    return {DType::I8, DType::U8, DType::Bool};  // the byte types alias anything byte-sized
  }
  if (p.vector == 2 && p.element == DType::F32) return {DType::F32, DType::C64};
  if (p.vector == 2 && p.element == DType::F64) return {DType::F64, DType::C128};
  return {p.element};
}

}  // namespace

bool pointer_accepts(const ParamType& p, DType t) {
  return (accepted_mask(p) >> static_cast<unsigned>(t)) & 1u;
}

uint32_t accepted_mask(const ParamType& p) {
  if (p.kind != ParamKind::Pointer) return 0;
  if (p.pointee_void) return (1u << kNumDTypes) - 1;
  uint32_t mask = 0;
  for (DType t : accepted_list(p)) mask |= 1u << static_cast<unsigned>(t);
  return mask;
}

std::string accepted_dtypes(const ParamType& p) {
  if (p.kind != ParamKind::Pointer) return {};
  if (p.pointee_void) return "any dtype";
  const std::vector<DType> ok = accepted_list(p);
  std::string out;
  for (size_t k = 0; k < ok.size(); ++k) {
    if (k > 0) out += k + 1 == ok.size() ? " or " : ", ";
    out += name(ok[k]);
  }
  return out;
}

namespace {

std::string_view type_name(const ParamType& p) {
  return p.spelling.empty() ? std::string_view("the parameter type") : p.spelling;
}

// Significant bits of |v|: from the highest set bit to the lowest.
int significant_bits(uint64_t m) {
  if (m == 0) return 0;
  int top = 63;
  while (!(m >> top)) --top;
  int bottom = 0;
  while (!((m >> bottom) & 1)) ++bottom;
  return top - bottom + 1;
}

uint64_t magnitude(int64_t v) {
  return v < 0 ? uint64_t{0} - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
}

template <class T>
void store(void* out, T v) {
  std::memcpy(out, &v, sizeof v);
}

void encode_integer(const ParamType& p, const Scalar& v, void* out, std::string_view what) {
  const bool is_signed = p.kind == ParamKind::Signed;
  const int bits = p.size * 8;
  // Range as text, for messages (made only for one).
  const auto range = [&] {
    return is_signed ? fmt::format("{} to {}",
                                   bits == 64 ? std::numeric_limits<int64_t>::min()
                                              : -(int64_t{1} << (bits - 1)),
                                   bits == 64 ? std::numeric_limits<int64_t>::max()
                                              : (int64_t{1} << (bits - 1)) - 1)
                     : fmt::format("0 to {}", bits == 64 ? std::numeric_limits<uint64_t>::max()
                                                         : (uint64_t{1} << bits) - 1);
  };
  uint64_t u = 0;  // the value's two's complement bits
  switch (v.kind) {
    case Scalar::Kind::Bool:
    case Scalar::Kind::Complex:
      fail(ErrorKind::Type, "{} must be an integer, got {}", what, v.str());
    case Scalar::Kind::Int: {
      // (big: a u64 value from 2^63 up, whose bits `i` holds; only a 64-bit unsigned takes it)
      const bool ok = v.big       ? !is_signed && bits == 64
                      : is_signed ? bits == 64 || (v.i >= -(int64_t{1} << (bits - 1)) &&
                                                   v.i < (int64_t{1} << (bits - 1)))
                                  : v.i >= 0 && (bits == 64 || v.i < (int64_t{1} << bits));
      if (!ok) {
        fail(ErrorKind::Value, "{}: {} is out of range for {} ({})", what, v.str(), type_name(p),
             range());
      }
      u = static_cast<uint64_t>(v.i);
      break;
    }
    case Scalar::Kind::Float: {
      const double d = v.re;
      if (!std::isfinite(d) || std::trunc(d) != d) {
        fail(ErrorKind::Value, "{} must be an integer, got {}", what, v.str());
      }
      // Powers of two are exact doubles, so these comparisons are exact at the edges.
      const double lo = is_signed ? -std::ldexp(1.0, bits - 1) : 0.0;
      const double hi = std::ldexp(1.0, is_signed ? bits - 1 : bits);
      if (!(d >= lo && d < hi)) {
        fail(ErrorKind::Value, "{}: {} is out of range for {} ({})", what, v.str(), type_name(p),
             range());
      }
      u = d < 0 ? static_cast<uint64_t>(static_cast<int64_t>(d)) : static_cast<uint64_t>(d);
      break;
    }
  }
  switch (p.size) {
    case 1:
      store(out, static_cast<uint8_t>(u));
      break;
    case 2:
      store(out, static_cast<uint16_t>(u));
      break;
    case 4:
      store(out, static_cast<uint32_t>(u));
      break;
    default:
      store(out, u);
      break;
  }
}

// One real component `d` (or the integer v.i when `from_int`) in `format`, written to `out`;
// messages name the whole value `v` and the parameter's `type`.
void encode_real(FloatFormat format, const Scalar& v, double d, bool from_int, void* out,
                 std::string_view what, std::string_view type) {
  if (from_int) {
    static constexpr int kSignificand[] = {11, 8, 24, 53};  // Half, BFloat16, Single, Double
    const uint64_t m = magnitude(v.i);
    if (format == FloatFormat::Half && m > 65504) {
      fail(ErrorKind::Value, "{}: {} overflows {}", what, v.str(), type);
    }
    if (significant_bits(m) > kSignificand[static_cast<int>(format)]) {
      fail(ErrorKind::Value, "{}: {} is not exactly representable as {}", what, v.str(), type);
    }
    d = v.i < 0 ? -static_cast<double>(m) : static_cast<double>(m);  // exact: checked above
  }
  switch (format) {
    case FloatFormat::Double:
      store(out, d);
      return;
    case FloatFormat::Single: {
      // Round-to-nearest gives infinity from the midpoint between FLT_MAX and 2^128 up.
      if (std::isfinite(d) && std::fabs(d) >= std::ldexp(std::ldexp(1.0, 25) - 1.0, 103)) {
        fail(ErrorKind::Value, "{}: {} overflows {}", what, v.str(), type);
      }
      store(out, static_cast<float>(d));
      return;
    }
    case FloatFormat::Half:
    case FloatFormat::BFloat16: {
      // Rounded once, from the double (no intermediate float).
      const uint16_t bits =
          format == FloatFormat::Half ? half::from_double(d).bits : bfloat16::from_double(d).bits;
      const uint16_t inf = format == FloatFormat::Half ? 0x7C00 : 0x7F80;
      if (std::isfinite(d) && (bits & 0x7FFF) == inf) {
        fail(ErrorKind::Value, "{}: {} overflows {}", what, v.str(), type);
      }
      store(out, bits);
      return;
    }
  }
}

}  // namespace

void encode_param(const ParamType& p, const Scalar& v, void* out, std::string_view what) {
  switch (p.kind) {
    case ParamKind::Pointer:
      fail(ErrorKind::Type, "{} must be an array, got {}", what, v.str());
    case ParamKind::Unsupported:
      fail(ErrorKind::Unsupported, "{}: {}", what, p.unsupported);
    case ParamKind::Signed:
    case ParamKind::Unsigned:
      encode_integer(p, v, out, what);
      return;
    case ParamKind::Bool: {
      const bool is_number = v.kind == Scalar::Kind::Int || v.kind == Scalar::Kind::Float;
      if (v.kind == Scalar::Kind::Bool) {
        store(out, static_cast<uint8_t>(v.b));
      } else if (is_number && (v.as_double() == 0 || v.as_double() == 1)) {
        store(out, static_cast<uint8_t>(v.as_double() != 0));
      } else {
        fail(is_number ? ErrorKind::Value : ErrorKind::Type,
             "{} must be true, false, 0 or 1, got {}", what, v.str());
      }
      return;
    }
    case ParamKind::Float:
      if (v.kind == Scalar::Kind::Bool || v.kind == Scalar::Kind::Complex) {
        fail(ErrorKind::Type, "{} must be a real number, got {}", what, v.str());
      }
      encode_real(p.format, v, v.re, v.kind == Scalar::Kind::Int, out, what, type_name(p));
      return;
    case ParamKind::Complex: {
      if (v.kind == Scalar::Kind::Bool) {
        fail(ErrorKind::Type, "{} must be a number, got {}", what, v.str());
      }
      const size_t half_size = p.format == FloatFormat::Double ? 8 : 4;
      unsigned char parts[16] = {};
      if (v.kind == Scalar::Kind::Complex) {
        encode_real(p.format, v, v.re, false, parts, what, type_name(p));
        encode_real(p.format, v, v.im, false, parts + half_size, what, type_name(p));
      } else {
        encode_real(p.format, v, v.re, v.kind == Scalar::Kind::Int, parts, what, type_name(p));
        encode_real(p.format, Scalar::real(0), 0.0, false, parts + half_size, what, type_name(p));
      }
      std::memcpy(out, parts, 2 * half_size);
      return;
    }
  }
}

}  // namespace culua::detail::rtc
