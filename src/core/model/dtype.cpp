#include "core/model/dtype.hpp"

#include <array>

namespace culua::detail {

namespace {
constexpr std::array<DTypeInfo, kNumDTypes> kInfo = {{
    {"f32", 4, DTypeClass::Float},
    {"f64", 8, DTypeClass::Float},
    {"f16", 2, DTypeClass::Float},
    {"bf16", 2, DTypeClass::Float},
    {"i8", 1, DTypeClass::Signed},
    {"i16", 2, DTypeClass::Signed},
    {"i32", 4, DTypeClass::Signed},
    {"i64", 8, DTypeClass::Signed},
    {"u8", 1, DTypeClass::Unsigned},
    {"u32", 4, DTypeClass::Unsigned},
    {"bool", 1, DTypeClass::Bool},
    {"c64", 8, DTypeClass::Complex},
    {"c128", 16, DTypeClass::Complex},
    {"u16", 2, DTypeClass::Unsigned},
    {"u64", 8, DTypeClass::Unsigned},
}};

struct Alias {
  std::string_view name;
  DType dtype;
};
constexpr std::array<Alias, 15> kAliases = {{
    {"float32", DType::F32},
    {"float64", DType::F64},
    {"float16", DType::F16},
    {"bfloat16", DType::BF16},
    {"int8", DType::I8},
    {"int16", DType::I16},
    {"int32", DType::I32},
    {"int64", DType::I64},
    {"uint8", DType::U8},
    {"uint16", DType::U16},
    {"uint32", DType::U32},
    {"uint64", DType::U64},
    {"complex64", DType::C64},
    {"complex128", DType::C128},
    {"double", DType::F64},
}};
}  // namespace

const DTypeInfo& info(DType t) {
  return kInfo[static_cast<size_t>(t)];
}

std::optional<DType> parse_dtype(std::string_view s) {
  for (size_t i = 0; i < kInfo.size(); ++i) {
    if (kInfo[i].name == s) return static_cast<DType>(i);
  }
  for (const auto& a : kAliases) {
    if (a.name == s) return a.dtype;
  }
  return std::nullopt;
}

int kind_rank(DTypeClass c) {
  switch (c) {
    case DTypeClass::Bool:
      return 0;
    case DTypeClass::Signed:
    case DTypeClass::Unsigned:
      return 1;
    case DTypeClass::Float:
      return 2;
    case DTypeClass::Complex:
      return 3;
  }
  return 0;
}

DType int_dtype(bool is_signed, int bytes) {
  switch (bytes) {
    case 1:
      return is_signed ? DType::I8 : DType::U8;
    case 2:
      return is_signed ? DType::I16 : DType::U16;
    case 4:
      return is_signed ? DType::I32 : DType::U32;
    default:
      return is_signed ? DType::I64 : DType::U64;
  }
}

std::string_view dtype_names() {
  return "f32 f64 f16 bf16 i8 i16 i32 i64 u8 u16 u32 u64 bool c64 c128";
}

}  // namespace culua::detail
