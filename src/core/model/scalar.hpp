// A host-side scalar value (from Lua or C++) and its exact conversion to and from element bytes.
#pragma once

#include <cstdint>
#include <string>

#include "core/model/dtype.hpp"

namespace culua::detail {

struct Scalar {
  enum class Kind : uint8_t { Bool, Int, Float, Complex };
  Kind kind = Kind::Int;
  bool b = false;
  int64_t i = 0;
  double re = 0;
  double im = 0;
  // Kind::Int only: `i` holds the bits of an unsigned value from 2^63 up (a u64 element); such a
  // value fits no other dtype and comes to Lua as a float.
  bool big = false;

  static Scalar boolean(bool v) { return Scalar{Kind::Bool, v, 0, 0, 0}; }
  static Scalar integer(int64_t v) { return Scalar{Kind::Int, false, v, 0, 0}; }
  static Scalar real(double v) { return Scalar{Kind::Float, false, 0, v, 0}; }
  static Scalar complex(double r, double m) { return Scalar{Kind::Complex, false, 0, r, m}; }
  // An unsigned integer: Kind::Int, with `big` set from 2^63 up.
  static Scalar unsigned_integer(uint64_t v) {
    return Scalar{Kind::Int, false, static_cast<int64_t>(v), 0, 0, v >> 63 != 0};
  }

  double as_double() const;  // real part for complex, 0/1 for bools
  std::string str() const;
};

// Largest element: c128.
inline constexpr size_t kMaxItemSize = 16;

// Writes `v` as an element of `t` into `out` (itemsize(t) bytes). Integer and bool targets take
// only values they hold exactly (2.5 into i32, 300 into u8 or nan into i64 throw); float targets
// round; real targets refuse complex values.
void encode_scalar(DType t, const Scalar& v, void* out);

// Reads an element of `t`; integers come back as Kind::Int, floats as Kind::Float.
Scalar decode_scalar(DType t, const void* in);

}  // namespace culua::detail
