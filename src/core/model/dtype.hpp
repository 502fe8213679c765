// Element data types: names, sizes, classes and compile-time dispatch to the C++ element type.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>

#include "core/model/numeric.hpp"

namespace culua::detail {

// New dtypes go at the end: the numbers are public (include/culua/culua.hpp) and serialised (MPI).
enum class DType : uint8_t {
  F32,
  F64,
  F16,
  BF16,
  I8,
  I16,
  I32,
  I64,
  U8,
  U32,
  Bool,
  C64,
  C128,
  U16,
  U64
};
inline constexpr int kNumDTypes = 15;

enum class DTypeClass : uint8_t { Bool, Signed, Unsigned, Float, Complex };

struct DTypeInfo {
  std::string_view name;
  uint8_t itemsize;
  DTypeClass cls;
};

const DTypeInfo& info(DType t);
inline std::string_view name(DType t) {
  return info(t).name;
}
inline size_t itemsize(DType t) {
  return info(t).itemsize;
}
inline bool is_integer(DType t) {
  return info(t).cls == DTypeClass::Signed || info(t).cls == DTypeClass::Unsigned;
}
inline bool is_complex(DType t) {
  return info(t).cls == DTypeClass::Complex;
}
inline bool is_floating(DType t) {
  return info(t).cls == DTypeClass::Float;
}

// Canonical names ("f32") and common aliases ("float32"); nullopt when unknown.
std::optional<DType> parse_dtype(std::string_view s);

// numpy's kinds in promotion order: bool 0 < integers 1 < floats 2 < complex 3.
int kind_rank(DTypeClass c);
inline int kind_rank(DType t) {
  return kind_rank(info(t).cls);
}
// The integer dtype of a signedness and a size in bytes (1, 2, 4; anything else: 8).
DType int_dtype(bool is_signed, int bytes);
// The list of canonical names, for error messages.
std::string_view dtype_names();

template <class T>
struct type_tag {
  using type = T;
};

// The dtype of a C++ element type.
template <class T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, float>)
    return DType::F32;
  else if constexpr (std::is_same_v<T, double>)
    return DType::F64;
  else if constexpr (std::is_same_v<T, half>)
    return DType::F16;
  else if constexpr (std::is_same_v<T, bfloat16>)
    return DType::BF16;
  else if constexpr (std::is_same_v<T, int8_t>)
    return DType::I8;
  else if constexpr (std::is_same_v<T, int16_t>)
    return DType::I16;
  else if constexpr (std::is_same_v<T, int32_t>)
    return DType::I32;
  else if constexpr (std::is_same_v<T, int64_t>)
    return DType::I64;
  else if constexpr (std::is_same_v<T, uint8_t>)
    return DType::U8;
  else if constexpr (std::is_same_v<T, uint16_t>)
    return DType::U16;
  else if constexpr (std::is_same_v<T, uint32_t>)
    return DType::U32;
  else if constexpr (std::is_same_v<T, uint64_t>)
    return DType::U64;
  else if constexpr (std::is_same_v<T, bool>)
    return DType::Bool;
  else if constexpr (std::is_same_v<T, complex64>)
    return DType::C64;
  else {
    static_assert(std::is_same_v<T, complex128>, "not an element type");
    return DType::C128;
  }
}

// Calls f(type_tag<T>{}) with the C++ element type of `t`: in host code, and in device code with a
// device function (the CUDA kernels' run-time dtype switches). nv_exec_check_disable: an
// instantiation with a host-only f is host code only, which nvcc would otherwise warn about.
#ifdef __CUDACC__
#pragma nv_exec_check_disable
#endif
template <class F>
CULUA_HD decltype(auto) dispatch(DType t, F&& f) {
  switch (t) {
    case DType::F32:
      return f(type_tag<float>{});
    case DType::F64:
      return f(type_tag<double>{});
    case DType::F16:
      return f(type_tag<half>{});
    case DType::BF16:
      return f(type_tag<bfloat16>{});
    case DType::I8:
      return f(type_tag<int8_t>{});
    case DType::I16:
      return f(type_tag<int16_t>{});
    case DType::I32:
      return f(type_tag<int32_t>{});
    case DType::I64:
      return f(type_tag<int64_t>{});
    case DType::U8:
      return f(type_tag<uint8_t>{});
    case DType::U16:
      return f(type_tag<uint16_t>{});
    case DType::U32:
      return f(type_tag<uint32_t>{});
    case DType::U64:
      return f(type_tag<uint64_t>{});
    case DType::Bool:
      return f(type_tag<bool>{});
    case DType::C64:
      return f(type_tag<complex64>{});
    case DType::C128:
      return f(type_tag<complex128>{});
  }
  return f(type_tag<float>{});
}

}  // namespace culua::detail
