#include "core/model/scalar.hpp"

#include <cmath>
#include <cstring>
#include <limits>

#include "core/base/error.hpp"

namespace culua::detail {

double Scalar::as_double() const {
  switch (kind) {
    case Kind::Bool:
      return b ? 1.0 : 0.0;
    case Kind::Int:
      return big ? static_cast<double>(static_cast<uint64_t>(i)) : static_cast<double>(i);
    default:
      return re;
  }
}

namespace {
std::string real_text(double v) {
  return std::isnan(v) ? "nan" : fmt::format("{}", v);
}
}  // namespace

std::string Scalar::str() const {
  switch (kind) {
    case Kind::Bool:
      return b ? "true" : "false";
    case Kind::Int:
      return big ? std::to_string(static_cast<uint64_t>(i)) : std::to_string(i);
    case Kind::Float:
      return real_text(re);
    case Kind::Complex:
      // One sign between the parts, the imaginary part's own ("0-0j" for -0.0, as numpy);
      // nan shows no sign ("0+nanj").
      return real_text(re) + (std::isnan(im) || !std::signbit(im) ? "+" : "") + real_text(im) + "j";
  }
  return "?";
}

namespace {

template <class I>
I exact_integer(DType t, const Scalar& v) {
  using L = std::numeric_limits<I>;
  switch (v.kind) {
    case Scalar::Kind::Bool:
      return static_cast<I>(v.b);
    case Scalar::Kind::Int:
      if (v.big) {
        if constexpr (std::is_same_v<I, uint64_t>) return static_cast<I>(v.i);
        break;
      }
      if constexpr (std::is_signed_v<I>) {
        if (v.i < static_cast<int64_t>(L::min()) || v.i > static_cast<int64_t>(L::max())) break;
      } else {
        if (v.i < 0 || static_cast<uint64_t>(v.i) > static_cast<uint64_t>(L::max())) break;
      }
      return static_cast<I>(v.i);
    case Scalar::Kind::Float: {
      const double d = v.re;
      if (std::isfinite(d) && std::trunc(d) == d && d >= static_cast<double>(L::min()) &&
          d < static_cast<double>(L::max()) + 1.0) {
        return static_cast<I>(d);
      }
      if (!std::isfinite(d)) {
        fail(ErrorKind::Value, "cannot store {} in a {} array (integers have no nan or inf)",
             v.str(), name(t));
      }
      if (std::trunc(d) != d) {
        fail(ErrorKind::Value, "cannot store {} in a {} array exactly (not an integer)", v.str(),
             name(t));
      }
      break;
    }
    case Scalar::Kind::Complex:
      fail(ErrorKind::Type, "cannot store complex value {} in a {} array", v.str(), name(t));
  }
  fail(ErrorKind::Value, "value {} is out of range for {}", v.str(), name(t));
}

}  // namespace

void encode_scalar(DType t, const Scalar& v, void* out) {
  dispatch(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T value;
    if constexpr (std::is_same_v<T, bool>) {
      if (v.kind == Scalar::Kind::Bool) {
        value = v.b;
      } else if (v.kind != Scalar::Kind::Complex && (v.as_double() == 0 || v.as_double() == 1)) {
        value = v.as_double() != 0;
      } else {
        fail(ErrorKind::Value, "a bool array takes true, false, 0 or 1, not {}", v.str());
      }
    } else if constexpr (std::is_integral_v<T>) {
      value = exact_integer<T>(t, v);
    } else if constexpr (is_complex_element<T>::value) {
      using R = decltype(T{}.re);
      if (v.kind == Scalar::Kind::Complex) {
        value = T{convert<R>(v.re), convert<R>(v.im)};
      } else if (v.kind == Scalar::Kind::Int) {
        value = v.big ? T{convert<R>(static_cast<uint64_t>(v.i)), R{0}} : T{convert<R>(v.i), R{0}};
      } else {
        value = T{convert<R>(v.as_double()), R{0}};
      }
    } else {
      if (v.kind == Scalar::Kind::Complex) {
        fail(ErrorKind::Type, "cannot store complex value {} in a {} array", v.str(), name(t));
      }
      if (v.kind == Scalar::Kind::Int) {
        value = v.big ? convert<T>(static_cast<uint64_t>(v.i)) : convert<T>(v.i);
      } else {
        value = convert<T>(v.as_double());
      }
    }
    std::memcpy(out, &value, sizeof(T));
  });
}

Scalar decode_scalar(DType t, const void* in) {
  return dispatch(t, [&](auto tag) -> Scalar {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      // The byte, not a bool: an element never written (cu.empty) may hold any byte, and loading
      // one other than 0 or 1 as a bool is undefined.
      uint8_t byte;
      std::memcpy(&byte, in, 1);
      return Scalar::boolean(byte != 0);
    } else {
      T value;
      std::memcpy(&value, in, sizeof(T));
      if constexpr (std::is_same_v<T, uint64_t>) {
        return Scalar::unsigned_integer(value);
      } else if constexpr (std::is_integral_v<T>) {
        return Scalar::integer(static_cast<int64_t>(value));
      } else if constexpr (is_complex_element<T>::value) {
        return Scalar::complex(static_cast<double>(value.re), static_cast<double>(value.im));
      } else {
        return Scalar::real(static_cast<double>(real_value(value)));
      }
    }
  });
}

}  // namespace culua::detail
