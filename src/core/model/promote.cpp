#include "core/model/promote.hpp"

#include <algorithm>

#include "core/base/error.hpp"

namespace culua::detail {

namespace {

DType promote_ints(DType a, DType b) {
  const DTypeInfo& x = info(a);
  const DTypeInfo& y = info(b);
  const bool sx = x.cls == DTypeClass::Signed, sy = y.cls == DTypeClass::Signed;
  if (sx == sy) return int_dtype(sx, std::max(x.itemsize, y.itemsize));
  // One signed, one unsigned: a signed type wider than the unsigned one; none is wider than u64,
  // so u64 with a signed integer gives f64 (numpy's choice).
  const int us = sx ? y.itemsize : x.itemsize;
  const int si = sx ? x.itemsize : y.itemsize;
  if (us == 8) return DType::F64;
  return int_dtype(true, std::max(si, us * 2));
}

int float_bits(DType t) {  // significand bits, to order floats
  switch (t) {
    case DType::BF16:
      return 8;
    case DType::F16:
      return 11;
    case DType::F32:
      return 24;
    default:
      return 53;
  }
}

DType promote_floats(DType a, DType b) {
  if (a == b) return a;
  if ((a == DType::F16 && b == DType::BF16) || (a == DType::BF16 && b == DType::F16))
    return DType::F32;
  return float_bits(a) >= float_bits(b) ? a : b;
}

}  // namespace

DType float_for(DType t) {
  switch (info(t).cls) {
    case DTypeClass::Bool:
      return DType::F16;
    case DTypeClass::Signed:
    case DTypeClass::Unsigned:
      return itemsize(t) == 1 ? DType::F16 : itemsize(t) == 2 ? DType::F32 : DType::F64;
    default:
      return t;
  }
}

DType real_of(DType t) {
  if (t == DType::C64) return DType::F32;
  if (t == DType::C128) return DType::F64;
  return t;
}

DType complex_of(DType t) {
  if (is_complex(t)) return t;
  const DType f = float_for(t);
  return f == DType::F64 ? DType::C128 : DType::C64;
}

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  const DTypeClass ca = info(a).cls, cb = info(b).cls;
  const int ra = kind_rank(ca), rb = kind_rank(cb);
  if (ra != rb) {
    const DType lo = ra < rb ? a : b;
    const DType hi = ra < rb ? b : a;
    const int rhi = std::max(ra, rb);
    if (kind_rank(lo) == 0) return hi;  // bool meets anything
    if (rhi == 2) {
      // bf16 holds every i8/u8 value exactly (8 significant bits): no need to widen to f32.
      if (hi == DType::BF16 && itemsize(lo) == 1) return DType::BF16;
      return promote_floats(hi, float_for(lo));
    }
    if (rhi == 3) {
      // complex meets a real: the complex type whose parts hold both.
      return complex_of(promote_floats(real_of(hi), float_for(lo)));
    }
    return hi;
  }
  switch (ra) {
    case 1:
      return promote_ints(a, b);
    case 2:
      return promote_floats(a, b);
    case 3:
      return a == DType::C128 || b == DType::C128 ? DType::C128 : DType::C64;
    default:
      return DType::Bool;
  }
}

bool can_cast_same_kind(DType from, DType to) {
  const auto order = [](DType t) {
    switch (info(t).cls) {
      case DTypeClass::Bool:
        return 0;
      case DTypeClass::Unsigned:
        return 1;
      case DTypeClass::Signed:
        return 2;
      case DTypeClass::Float:
        return 3;
      case DTypeClass::Complex:
        return 4;
    }
    return 0;
  };
  return order(from) <= order(to);
}

void check_out_dtype(DType result, DType out) {
  if (!can_cast_same_kind(result, out)) {
    fail(ErrorKind::Type,
         "out= has dtype {}, cannot hold the {} result under numpy's same_kind rule", name(out),
         name(result));
  }
}

DType scalar_dtype(const Scalar& s) {
  switch (s.kind) {
    case Scalar::Kind::Bool:
      return DType::Bool;
    case Scalar::Kind::Int:
      return DType::I64;
    case Scalar::Kind::Float:
      return DType::F64;
    case Scalar::Kind::Complex:
      return DType::C128;
  }
  return DType::F64;
}

DType promote_with_scalar(DType a, const Scalar& s) {
  const int ra = kind_rank(a);
  switch (s.kind) {
    case Scalar::Kind::Bool:
      return a;
    case Scalar::Kind::Int:
      return ra >= 1 ? a : DType::I64;
    case Scalar::Kind::Float:
      return ra >= 2 ? a : DType::F64;
    case Scalar::Kind::Complex:
      return complex_of(ra >= 2 ? a : DType::F64);
  }
  return a;
}

}  // namespace culua::detail
